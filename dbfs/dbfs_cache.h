/*
 * dbfs_cache.h -- the metadata caches seen from dbfs (dbfs_cache.c): the
 * stat cache (inode -> attributes or gone), the naming cache ((directory,
 * name) -> inode or absent) and the listing cache, opened from
 * dbfs_config, and the calls through which every dbfs operation reads
 * them and keeps them exact.
 *
 * NOTES
 *   This layer calls cache/ only: no database, no connection.
 */
#ifndef PGNFS_DBFS_CACHE_H
#define PGNFS_DBFS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache_dir.h"
#include "cache_lru.h"
#include "cache_name.h"
#include "dbfs.h"
#include "dbfs_int.h"

/*
 * The stat and naming caches (cache/cache_stat.h, cache/cache_name.h) seen
 * from dbfs. Every call is a no-op when the caches are off. The protocol
 * (cache/cache_lru.h) in dbfs terms:
 *
 *   read:      dbfs_cache_read_begin(fs, &op) before the statement; then
 *              dbfs_cache_put_*(&op, what was read); dbfs_cache_end(&op).
 *   mutation:  dbfs_cache_mut_begin(fs, &op, inodes, dirs) before the
 *              transaction, naming every inode whose attributes it may
 *              change and every directory whose names it may change that
 *              are known beforehand; after it: dbfs_cache_put_*() for what
 *              it committed or read, dbfs_cache_put_new() for an inode it
 *              created, dbfs_cache_victim() for an inode it changed that
 *              was not named at begin; dbfs_cache_lost() when the outcome
 *              is unknown; then dbfs_cache_end(&op) on every path.
 *
 * The data path brackets a WRITE (dbfs_data.c), and a READ that may move
 * atime (dbfs_read.c), with dbfs_cache_file_begin() and
 * dbfs_cache_file_end(), which stores the attributes after.
 */

typedef struct dbfs_cache dbfs_cache;

typedef struct {
    dbfs_cache *cache;          /* NULL: caches off, every call a no-op */
    cache_lru_ticket st_ticket; /* taken at begin */
    cache_lru_ticket nm_ticket; /* taken at begin */
    bool mut;
    /* mutations only: what they hold */
    cache_lru_mut st_mut, nm_mut;
    uint64_t inos[CACHE_LRU_MUT_MAX], dirs[CACHE_LRU_MUT_MAX];
    unsigned ninos, ndirs;
} dbfs_cache_op;

/* Open fs->cache as cfg asks (NULL when every cache is off). Returns 0 or
 * -ENOMEM. dbfs_cache_close frees it (NULL is fine). */
int dbfs_cache_open(dbfs *fs, const dbfs_config *cfg);
void dbfs_cache_close(dbfs *fs);

/* Lookups. dbfs_cache_attr: 0 and *out (hit), -ESTALE (known gone or
 * another generation), -ENOENT (miss, or off). dbfs_cache_name: a
 * cache_name_result (CACHE_NAME_MISS when off). */
int dbfs_cache_attr(dbfs *fs, dbfs_fh fh, dbfs_attr *out);
/* The same for an answer from memory alone (dbfs_getattr_quick,
 * dbfs_lookup_quick): nothing is counted until the answer is given
 * (dbfs_cache_attr_hit, dbfs_cache_name_hit: the look-ups it used), so a
 * call left to a worker is counted once, there; with several servers on
 * the file system ([cache] coherence = shared, whose freshness check may
 * take a round trip) they miss without a look-up. */
int dbfs_cache_attr_quick(dbfs *fs, dbfs_fh fh, dbfs_attr *out);
cache_name_result dbfs_cache_name_quick(dbfs *fs, uint64_t dir, const char *name, dbfs_fh *out);
void dbfs_cache_attr_hit(dbfs *fs, dbfs_fh fh);
void dbfs_cache_name_hit(dbfs *fs, uint64_t dir, const char *name);
cache_name_result dbfs_cache_name(dbfs *fs, uint64_t dir, const char *name, dbfs_fh *out);
/* The listing cache (cache/cache_dir.h; dbfs_dirlist.c), NULL when off. */
cache_dir *dbfs_cache_dir(dbfs *fs);

/* The stat, naming and listing caches' rows of dbfs_cache_stats()
 * ("stat", "naming", "listing"), enabled or not, into out[0 .. max).
 * Returns how many were written. Cannot fail. */
unsigned dbfs_cache_figures_meta(const dbfs *fs, dbfs_cache_figures *out, unsigned max);

/* The row named name of a cache tagged by ctime (buffer, small files):
 * from *st, or switched off (all zero) when st is NULL. Cannot fail. */
void dbfs_cache_figures_tagged(const char *name, const cache_tagged_stats *st,
                               dbfs_cache_figures *out);

void dbfs_cache_read_begin(dbfs *fs, dbfs_cache_op *op);
/* inos: up to CACHE_LRU_MUT_MAX inodes; dirs: up to CACHE_LRU_MUT_MAX. */
void dbfs_cache_mut_begin(dbfs *fs, dbfs_cache_op *op, const uint64_t *inos, unsigned ninos,
                          const uint64_t *dirs, unsigned ndirs);
/* Attributes read or committed (stored if op holds the inode, else filled
 * as read: only for an inode the operation did not change). */
void dbfs_cache_put_attr(dbfs_cache_op *op, const dbfs_attr *a);
/* (fh) was found not to exist. */
void dbfs_cache_put_gone(dbfs_cache_op *op, dbfs_fh fh);
/* name in dir names obj (NULL: does not exist). */
void dbfs_cache_put_name(dbfs_cache_op *op, uint64_t dir, const char *name, const dbfs_attr *obj);
/* An inode the mutation created: nobody could have read it before. */
void dbfs_cache_put_new(dbfs_cache_op *op, const dbfs_attr *a);
/* An inode the mutation changed without naming it at begin: gone, or
 * changed (its entry is dropped). */
void dbfs_cache_victim(dbfs_cache_op *op, const dbfs_attr *a, bool gone);
/* The mutation's outcome is unknown (lost connection): forget everything
 * read before now. */
void dbfs_cache_lost(dbfs_cache_op *op);
/* A connection to the database was found broken, or was made again: the
 * database may have restarted without the last commits of an async
 * export (synchronous_commit off), which the caches may hold. Forget
 * everything read or stored before now. fs may be NULL. Cannot fail. */
void dbfs_cache_db_lost(dbfs *fs);
/* End a read or mutation. Cannot fail. */
void dbfs_cache_end(dbfs_cache_op *op);

/* A change to one file's data and attributes (WRITE): begin before the
 * batch; end after it with its status and, on success, the attributes
 * after (NULL if not known: the entry is dropped). */
void dbfs_cache_file_begin(dbfs *fs, dbfs_fh fh, dbfs_cache_op *op);
void dbfs_cache_file_end(dbfs_cache_op *op, int rc, const dbfs_attr *post);

/*
 * Invalidations from other frontends (dbfs_coh.c), each applied as a
 * mutation of its guard, so that fills and stores that overlapped it are
 * refused: an inode's attributes (the stat cache), a name in a directory
 * (the naming cache), everything (stat, naming and listing caches reset).
 * Cannot fail.
 */
void dbfs_cache_inval_ino(dbfs *fs, uint64_t ino);
void dbfs_cache_inval_name(dbfs *fs, uint64_t dir, const char *name, size_t len);
void dbfs_cache_inval_all(dbfs *fs);

#endif /* PGNFS_DBFS_CACHE_H */
