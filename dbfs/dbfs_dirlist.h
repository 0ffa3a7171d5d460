/*
 * dbfs_dirlist.h -- READDIR and READDIRPLUS from the listing cache
 * (dbfs_dirlist.c): a page answered from memory, and the filling of the
 * cache by the database path (dbfs_readdir.c).
 */
#ifndef PGNFS_DBFS_DIRLIST_H
#define PGNFS_DBFS_DIRLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "dbfs.h"
#include "dbfs_conn.h"

/*
 * dbfs_dirlist_serve -- a page as dbfs_readdir answers it, from the caches
 * alone: 0 with the outputs filled, or -ENOENT when they cannot (then the
 * database answers; nothing was filled). *fetch says whether the database
 * path should also fetch the whole listing (DBFS_ST_LISTING).
 */
int dbfs_dirlist_serve(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, uint64_t cookie,
                       uint32_t max_entries, bool plus, dbfs_dirent **entries, size_t *n, bool *eof,
                       dbfs_attr_opt *dir_attr, bool *fetch);
/* The row limit for DBFS_ST_LISTING (0: the cache is off). */
int64_t dbfs_dirlist_limit(dbfs *fs);
/* Store what DBFS_ST_LISTING read for dir (r may be NULL). */
void dbfs_dirlist_fill(dbfs *fs, dbfs_fh dir, const PGresult *r);

#endif /* PGNFS_DBFS_DIRLIST_H */
