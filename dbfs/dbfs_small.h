/*
 * dbfs_small.h -- the small-file cache seen from dbfs (dbfs_small.c):
 * opening it from dbfs_config, its figures, serving a READ from it, and
 * learning from the READs that went to the database and from committed
 * writes (cache/cache_small.h says why it is exact).
 *
 * NOTES
 *   This layer calls cache/ only: no database, no connection. Below
 *   dbfs_data.c (writes report here) and dbfs_read.c.
 */
#ifndef PGNFS_DBFS_SMALL_H
#define PGNFS_DBFS_SMALL_H

#include <stdbool.h>
#include <stdint.h>

#include "dbfs.h"
#include "dbfs_int.h"
#include "store.h"

/* Open fs->small as cfg asks (left NULL when off). Returns 0, -EINVAL (a
 * bound too small for one file of the largest size; logged) or -ENOMEM. */
int dbfs_small_open(dbfs *fs, const dbfs_config *cfg);
/* Free fs->small (NULL is fine). */
void dbfs_small_close(dbfs *fs);
/* Its figures as one dbfs_cache_stats() row ("small"; bytes). */
void dbfs_small_figures(const dbfs *fs, dbfs_cache_figures *out);

/*
 * dbfs_small_read -- serve [off, off + count) of the file whose current
 * attributes are a (known exact: the stat cache, or the database) from
 * the cache: true with *nread and buf filled if its contents as of
 * a->ctime_ns are cached; false otherwise (a miss is counted only for a
 * file small enough to be kept, and not when quick: a caller that goes on
 * to a worker, which asks again).
 */
bool dbfs_small_read(dbfs *fs, const dbfs_attr *a, uint64_t off, uint32_t count, void *buf,
                     uint32_t *nread, bool quick);

/* dbfs_small_learn_read -- a READ that went to the database read n bytes
 * at off of the file with attributes a (of the same snapshot) into buf:
 * kept when that is the whole of a small file. */
void dbfs_small_learn_read(dbfs *fs, const dbfs_attr *a, uint64_t off, const void *buf, uint32_t n);

/* dbfs_small_learn_write -- the committed write w (its pieces' file
 * bytes) took file ino from ctime pre, pre_size bytes, to ctime post,
 * post_size bytes: the contents after it are kept when known
 * (cache_small_wrote). */
void dbfs_small_learn_write(dbfs *fs, uint64_t ino, int64_t pre, uint64_t pre_size, int64_t post,
                            uint64_t post_size, const store_write *w);

#endif /* PGNFS_DBFS_SMALL_H */
