/*
 * dbfs_small.c -- the small-file cache seen from dbfs (dbfs_small.h):
 * whole small files by inode, tagged with their ctime
 * (cache/cache_small.h), so that a hot small file's READ is one lookup
 * and one copy, with no round trip and however small the chunks.
 *
 * NOTES
 *   Every call is a no-op when the cache is off (fs->small NULL). Callers
 *   hand in attributes they know to be current (the stat cache's, or the
 *   database's from the same snapshot as the bytes), so the ctime tags
 *   are facts.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <glib.h>

#include "cache_small.h"
#include "dbfs_cache.h"
#include "dbfs_small.h"

/* The most pieces (chunks) of one write the cache follows: a small file
 * written with chunks of 1 KiB (the smallest) spans 64 of 64 KiB. */
#define DBFS_SMALL_PIECES 1024
/* dbfs_small_open -- see dbfs_small.h. */
int dbfs_small_open(dbfs *fs, const dbfs_config *cfg)
{
    int rc;

    fs->small = NULL;
    if (cfg->small_cache_bytes == 0 || cfg->small_file_bytes == 0)
        return 0;
    rc = cache_small_new((size_t)cfg->small_cache_bytes, cfg->small_file_bytes, &fs->small);
    if (rc == -EINVAL)
        g_warning("the small-file cache of %" PRIu64 " bytes cannot hold one file of %u bytes",
                  cfg->small_cache_bytes, cfg->small_file_bytes);
    else if (rc == 0)
        g_info("small-file cache: %" PRIu64 " bytes, files up to %u bytes", cfg->small_cache_bytes,
               cfg->small_file_bytes);
    return rc;
}

/* dbfs_small_close -- see dbfs_small.h. */
void dbfs_small_close(dbfs *fs)
{
    cache_small_free(fs->small);
    fs->small = NULL;
}

/* dbfs_small_figures -- see dbfs_small.h. */
void dbfs_small_figures(const dbfs *fs, dbfs_cache_figures *out)
{
    cache_small_stats st;

    if (fs->small)
        cache_small_get_stats(fs->small, &st);
    dbfs_cache_figures_tagged("small", fs->small ? &st : NULL, out);
}

/* dbfs_small_read -- see dbfs_small.h. */
bool dbfs_small_read(dbfs *fs, const dbfs_attr *a, uint64_t off, uint32_t count, void *buf,
                     uint32_t *nread, bool quick)
{
    long len;

    if (!fs->small || a->size > cache_small_max_file(fs->small))
        return false;
    len = quick ? cache_small_try(fs->small, a->ino, a->ctime_ns, off, count, buf)
                : cache_small_get(fs->small, a->ino, a->ctime_ns, off, count, buf);
    if (len < 0 || (uint64_t)len != a->size)
        return false;
    *nread = off >= a->size ? 0 : (a->size - off < count ? (uint32_t)(a->size - off) : count);
    return true;
}

/* dbfs_small_learn_read -- see dbfs_small.h. */
void dbfs_small_learn_read(dbfs *fs, const dbfs_attr *a, uint64_t off, const void *buf, uint32_t n)
{
    if (fs->small && off == 0 && n == a->size && a->size <= cache_small_max_file(fs->small))
        cache_small_put(fs->small, a->ino, a->ctime_ns, buf, n);
}

/* dbfs_small_learn_write -- see dbfs_small.h. */
void dbfs_small_learn_write(dbfs *fs, uint64_t ino, int64_t pre, uint64_t pre_size, int64_t post,
                            uint64_t post_size, const store_write *w)
{
    const uint64_t cs = fs->info.chunk_size;
    cache_small_piece pc[DBFS_SMALL_PIECES];

    /* Only a write that can leave a small file: a few pieces at most. */
    if (!fs->small || post_size > cache_small_max_file(fs->small) || w->npieces > DBFS_SMALL_PIECES)
        return;
    for (size_t k = 0; k < w->npieces; k++)
        pc[k] = (cache_small_piece){.off = w->pieces[k].chunk * cs + w->pieces[k].at,
                                    .data = w->pieces[k].raw,
                                    .n = w->pieces[k].n};
    cache_small_wrote(fs->small, ino, pre, pre_size, post, post_size, pc, w->npieces);
}
