/*
 * dbfs_snap_int.h -- the reads of a snapshot (dbfs_snap.h) behind dbfs.h's
 * calls: dbfs_getattr, dbfs_lookup, dbfs_readlink, dbfs_readdir and
 * dbfs_read hand a handle whose snap is not 0 to these (dbfs_snap.c,
 * dbfs_snap_read.c). Same contracts as the calls they serve; they bypass
 * every cache and the write-back buffer, and set snap in every attribute
 * they return.
 */
#ifndef PGNFS_DBFS_SNAP_INT_H
#define PGNFS_DBFS_SNAP_INT_H

#include "dbfs.h"
#include "dbfs_snap.h"

int dbfs_sn_getattr(dbfs_conn *c, dbfs_fh fh, dbfs_attr *out);
int dbfs_sn_lookup(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                   dbfs_attr *obj, dbfs_attr_opt *dir_attr);
int dbfs_sn_readlink(dbfs_conn *c, dbfs_fh fh, char **target, dbfs_attr *attr);
int dbfs_sn_readdir(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, uint64_t cookie,
                    uint32_t max_entries, bool plus, dbfs_dirent **entries, size_t *n, bool *eof,
                    dbfs_attr_opt *dir_attr);
int dbfs_sn_read(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, uint32_t count,
                 void *buf, uint32_t *nread, bool *eof, dbfs_attr_opt *attr);

#endif /* PGNFS_DBFS_SNAP_INT_H */
