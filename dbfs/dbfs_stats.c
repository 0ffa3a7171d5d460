/*
 * dbfs_stats.c -- the figures of a file system's caches for the metrics
 * (dbfs.h: dbfs_cache_stats): the metadata caches' rows (dbfs_cache.c)
 * the chunk buffer cache's (dbfs_data.c) and the small-file cache's
 * (dbfs_small.c).
 *
 * NOTES
 *   Reads counters only; nothing here can fail or allocates.
 */
#include "dbfs_cache.h"
#include "dbfs_data.h"
#include "dbfs_small.h"

/*
 * dbfs_cache_stats -- see dbfs.h. Rows: "stat", "naming", "listing", then
 * "buffer" and "small" (capacities in entries, entries, bytes, bytes and
 * bytes).
 */
unsigned dbfs_cache_stats(const dbfs *fs, dbfs_cache_figures *out, unsigned max)
{
    unsigned n = dbfs_cache_figures_meta(fs, out, max);

    if (n < max && fs)
        dbfs_chunks_figures(fs, &out[n++]);
    if (n < max && fs)
        dbfs_small_figures(fs, &out[n++]);
    return n;
}
