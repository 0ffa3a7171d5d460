/*
 * dbfs_lock_admin.c -- the lock listing of `pgnfs locks`
 * (dbfs_admin_locks): every lock, blocked request and share reservation
 * of the file system, with a path to each file, in one streamed query
 * (pgnfs_nlm_list, schema/functions/85_lock.sql) on an admin session.
 *
 * NOTES
 *   Rows reach the callback as the server produces them; the strings of
 *   an entry point into the row and are valid during the callback only.
 *   Errors as every dbfs path's (dbfs_err.h).
 */
#include <errno.h>
#include <string.h>

#include "dbfs_locks.h"
#include "dbfs_admin.h"

/* Microseconds between 1970-01-01 and 2000-01-01 (timestamptz's epoch). */
#define DBFS_PG_EPOCH_US INT64_C(946684800000000)

/* Columns of DBFS_ST_NLM_LIST. */
enum {
    DBFS_LL_STATE,
    DBFS_LL_INODE,
    DBFS_LL_PATH,
    DBFS_LL_LO,
    DBFS_LL_HI,
    DBFS_LL_EXCL,
    DBFS_LL_HOST,
    DBFS_LL_SVID,
    DBFS_LL_OH,
    DBFS_LL_SERVER,
    DBFS_LL_SINCE,
    DBFS_LL_NCOLS
};

typedef struct {
    int (*cb)(const dbfs_lock_entry *e, void *arg);
    void *arg;
} dbfs_lock_walk;

static int dbfs_lock_row(const PGresult *r, int row, void *arg)
{
    dbfs_lock_walk *w = arg;
    dbfs_lock_entry e;

    if (PQnfields(r) != DBFS_LL_NCOLS)
        return -EIO;
    memset(&e, 0, sizeof e);
    e.state = PQgetvalue(r, row, DBFS_LL_STATE);
    e.ino = (uint64_t)dbfs_get_i8(r, row, DBFS_LL_INODE);
    if (!PQgetisnull(r, row, DBFS_LL_PATH)) {
        e.path = PQgetvalue(r, row, DBFS_LL_PATH);
        e.path_len = (size_t)PQgetlength(r, row, DBFS_LL_PATH);
    }
    e.host = PQgetvalue(r, row, DBFS_LL_HOST);
    e.host_len = (size_t)PQgetlength(r, row, DBFS_LL_HOST);
    e.oh = (const unsigned char *)PQgetvalue(r, row, DBFS_LL_OH);
    e.oh_len = (size_t)PQgetlength(r, row, DBFS_LL_OH);
    e.server = PQgetvalue(r, row, DBFS_LL_SERVER);
    if (strcmp(e.state, "share") == 0) {
        e.access = (unsigned)dbfs_get_i8(r, row, DBFS_LL_LO);
        e.deny = (unsigned)dbfs_get_i8(r, row, DBFS_LL_HI);
        e.svid = DBFS_LOCK_NO_SVID;
        return w->cb(&e, w->arg);
    }
    e.start = (uint64_t)dbfs_get_i8(r, row, DBFS_LL_LO);
    e.end = dbfs_get_null(r, row, DBFS_LL_HI) ? DBFS_LOCK_EOF
                                              : (uint64_t)dbfs_get_i8(r, row, DBFS_LL_HI);
    e.excl = PQgetlength(r, row, DBFS_LL_EXCL) == 1 && PQgetvalue(r, row, DBFS_LL_EXCL)[0];
    e.svid = dbfs_get_i8(r, row, DBFS_LL_SVID);
    if (!dbfs_get_null(r, row, DBFS_LL_SINCE))
        e.since_us = dbfs_get_i8(r, row, DBFS_LL_SINCE) + DBFS_PG_EPOCH_US;
    return w->cb(&e, w->arg);
}

/* dbfs_admin_locks -- see dbfs.h: one streamed statement. */
int dbfs_admin_locks(dbfs_admin *a, int (*cb)(const dbfs_lock_entry *e, void *arg), void *arg)
{
    dbfs_lock_walk w = {cb, arg};

    return dbfs_stream(a->c, DBFS_ST_NLM_LIST, NULL, dbfs_lock_row, &w);
}
