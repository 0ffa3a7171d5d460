/*
 * dbfs_err.h -- the one place a database error becomes an errno: the
 * SQLSTATE classifier that the request path (worker connections) and the
 * admin paths (mkfs, open, du, find, fsck) all use, the numbers of the
 * schema functions' statuses, and the bounded retry of serialization
 * failures and deadlocks.
 *
 * NOTES
 *   The table (dbfs_err.c holds it, with why each line is there):
 *
 *     SQLSTATE            errno                 connection
 *     PNxxx               -(Linux errno xxx)    kept
 *     23505               -EEXIST               kept
 *     40001, 40P01        DBFS_ERETRY: the operation runs again, at most
 *                         DBFS_RETRIES times in all, then -EAGAIN
 *     08xxx, 57P01-3      -EAGAIN               reset
 *     53100               -ENOSPC               kept
 *     53200, 53300, 57014 -EAGAIN               kept
 *     (none: libpq's own) -EAGAIN if the connection is gone, else -EIO;
 *                                               reset either way
 *     anything else       -EIO, logged with the SQLSTATE, the statement's
 *                         name and the server's primary message (never a
 *                         parameter value, never the detail)
 *
 *   Nothing here keeps state; dbfs_retry_wait() sleeps.
 */
#ifndef PGNFS_DBFS_ERR_H
#define PGNFS_DBFS_ERR_H

#include <stdbool.h>

#include <libpq-fe.h>

/* An internal status, never returned by the API: a serialization failure
 * or deadlock; the whole operation (one transaction) runs again. */
#define DBFS_ERETRY (-100000)
/* Attempts of an operation that keeps failing with DBFS_ERETRY, the first
 * included; then it answers -EAGAIN. */
#define DBFS_RETRIES 5

/* What a failed statement means. */
typedef struct {
    int err;     /* a negative errno, or DBFS_ERETRY */
    bool broken; /* the connection is gone or confused: reset it */
} dbfs_err_class;

/*
 * dbfs_err_sqlstate -- the line of the table for SQLSTATE state (five
 * characters; NULL: libpq's own error, which is taken as a lost
 * connection here). Pure: logs nothing. Cannot fail.
 */
dbfs_err_class dbfs_err_sqlstate(const char *state);

/*
 * dbfs_err_classify -- classify the failed result res of statement (or
 * script) `what` on connection pg: res NULL means no result came where one
 * was due. A libpq error without a SQLSTATE is a lost connection when pg
 * is not (or no longer, after reading what is pending) CONNECTION_OK, and
 * our side of the protocol confused otherwise. Logs as the table says.
 * Cannot fail.
 */
dbfs_err_class dbfs_err_classify(PGconn *pg, const PGresult *res, const char *what);

/*
 * dbfs_errno_from_linux -- the local errno (negative) of a Linux errno
 * number, as the schema functions return them (their status column and
 * the PNxxx SQLSTATEs). An unknown number is -EIO (logged).
 */
int dbfs_errno_from_linux(int linux_errno);

/*
 * dbfs_retry_wait -- before attempt `attempt` + 1 of an operation whose
 * attempt `attempt` (1, 2, ...) failed with DBFS_ERETRY: sleeps a short,
 * jittered, growing while and returns true; returns false (no sleep) when
 * DBFS_RETRIES attempts are used up.
 */
bool dbfs_retry_wait(int attempt);

#endif /* PGNFS_DBFS_ERR_H */
