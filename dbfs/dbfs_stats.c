/*
 * dbfs_stats.c -- the figures of a file system's caches for the metrics
 * (dbfs.h: dbfs_cache_stats): the metadata caches' rows (dbfs_cache.c)
 * and the chunk buffer cache's (dbfs_data.c).
 *
 * NOTES
 *   Reads counters only; nothing here can fail or allocates.
 */
#include "dbfs_cache.h"
#include "dbfs_data.h"

/*
 * dbfs_cache_stats -- see dbfs.h. Rows: "stat", "naming", "listing", then
 * "buffer" (capacities in entries, entries, bytes and bytes).
 */
unsigned dbfs_cache_stats(const dbfs *fs, dbfs_cache_figures *out, unsigned max)
{
    unsigned n = dbfs_cache_figures_meta(fs, out, max);

    if (n < max && fs)
        dbfs_chunks_figures(fs, &out[n++]);
    return n;
}
