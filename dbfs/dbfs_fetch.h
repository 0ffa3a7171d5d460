/*
 * dbfs_fetch.h -- a file's attributes as the database holds them: from
 * the stat cache when it knows the file, else in one round trip whose
 * answer the cache learns. The write-back buffer's data is not in them
 * (dbfs_wb.h adds it).
 */
#ifndef PGNFS_DBFS_FETCH_H
#define PGNFS_DBFS_FETCH_H

#include <libpq-fe.h>

#include "dbfs.h"
#include "dbfs_conn.h"
#include "dbfs_sql.h"

/*
 * dbfs_fetch_by_handle -- run statement id, whose parameters are the
 * handle's (inode int8, generation int4), as one round trip. Returns 0 and
 * *res (at least one row; the caller clears it), -ESTALE when no row came
 * back, or an errno of dbfs_exec().
 */
int dbfs_fetch_by_handle(dbfs_conn *c, dbfs_stmt id, dbfs_fh fh, PGresult **res);

/*
 * dbfs_fetch_attr -- the attributes of fh as stored. Returns 0 and *out
 * (out may be NULL), -ESTALE if the inode and generation no longer exist,
 * or -EAGAIN/-EIO. No round trip when the stat cache knows fh (attributes,
 * or gone), else one, whose answer is cached.
 */
int dbfs_fetch_attr(dbfs_conn *c, dbfs_fh fh, dbfs_attr *out);

#endif /* PGNFS_DBFS_FETCH_H */
