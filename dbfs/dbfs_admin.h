/*
 * dbfs_admin.h -- what a dbfs_admin is (dbfs.h's administration calls),
 * shared by the files that answer its questions: dbfs_admin.c (open,
 * resolve, du, find) and dbfs_lock_admin.c (the lock listing).
 *
 * NOTES
 *   Data only. A dbfs_admin belongs to one thread at a time.
 */
#ifndef PGNFS_DBFS_ADMIN_H
#define PGNFS_DBFS_ADMIN_H

#include "dbfs_conn.h"

struct dbfs_admin {
    dbfs_conn *c; /* a session (dbfs_conn.h) */
};

#endif /* PGNFS_DBFS_ADMIN_H */
