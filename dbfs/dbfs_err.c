/*
 * dbfs_err.c -- the SQLSTATE classifier (the table is in dbfs_err.h), the
 * Linux errno numbers the schema functions speak, and the bounded retry.
 *
 * Why each line of the table:
 *   PNxxx         the schema functions raise 'PN' and a three-digit Linux
 *                 errno when a change must stop before it stores anything
 *                 (80_write.sql);
 *   23505         a unique violation is a name that exists (a race the
 *                 functions' own checks lost);
 *   40001, 40P01  the transaction was rolled back whole and may succeed
 *                 when run again (PostgreSQL's advice); a bounded number
 *                 of times, so a client is answered;
 *   08, 57P01-3   the connection is gone: the operation's outcome is
 *                 unknown to the caller, who may retry (NFS JUKEBOX);
 *   53100         the disk is full: the client must learn it (NOSPC);
 *   53200, 53300, 57014  out of memory, too many connections, a statement
 *                 cancelled: transient, the same call may work later.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_err.h"

/* Is this SQLSTATE one that means the connection is gone or going? */
static bool dbfs_err_is_conn_loss(const char *s)
{
    return strncmp(s, "08", 2) == 0 || strcmp(s, "57P01") == 0 || strcmp(s, "57P02") == 0 ||
           strcmp(s, "57P03") == 0;
}

/* Is s "PN" and three digits (a schema function's own errno)? */
static bool dbfs_err_is_pn(const char *s)
{
    return s[0] == 'P' && s[1] == 'N' && g_ascii_isdigit(s[2]) && g_ascii_isdigit(s[3]) &&
           g_ascii_isdigit(s[4]) && s[5] == 0;
}

/* dbfs_err_sqlstate -- see dbfs_err.h. */
dbfs_err_class dbfs_err_sqlstate(const char *state)
{
    if (!state)
        return (dbfs_err_class){-EAGAIN, true};
    if (dbfs_err_is_pn(state))
        return (dbfs_err_class){dbfs_errno_from_linux(atoi(state + 2)), false};
    if (strcmp(state, "23505") == 0)
        return (dbfs_err_class){-EEXIST, false};
    if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0)
        return (dbfs_err_class){DBFS_ERETRY, false};
    if (dbfs_err_is_conn_loss(state))
        return (dbfs_err_class){-EAGAIN, true};
    if (strcmp(state, "53100") == 0)
        return (dbfs_err_class){-ENOSPC, false};
    if (strcmp(state, "53200") == 0 || strcmp(state, "53300") == 0 || strcmp(state, "57014") == 0)
        return (dbfs_err_class){-EAGAIN, false};
    return (dbfs_err_class){-EIO, false};
}

/* The first line of a (possibly multi-line) message, for a log line. */
static int dbfs_err_line(const char *msg)
{
    return (int)strcspn(msg, "\n");
}

/* A libpq error that carries no SQLSTATE: a lost connection, mostly. In
 * pipeline mode a failed send ("server closed the connection
 * unexpectedly") leaves the status CONNECTION_OK until libpq next reads:
 * read now, so that a closed socket shows as one. */
static dbfs_err_class dbfs_err_client(PGconn *pg, const PGresult *res, const char *what)
{
    const char *msg;

    if (!res || PQstatus(pg) != CONNECTION_OK || !PQconsumeInput(pg) ||
        PQstatus(pg) != CONNECTION_OK) {
        msg = PQerrorMessage(pg);
        g_message("%s: lost the database connection: %.*s", what, dbfs_err_line(msg), msg);
        return (dbfs_err_class){-EAGAIN, true};
    }
    /* Our side of the protocol is confused: start afresh. */
    msg = PQresultErrorMessage(res);
    g_warning("%s failed in the client library: %.*s", what, dbfs_err_line(msg), msg);
    return (dbfs_err_class){-EIO, true};
}

/* dbfs_err_classify -- see dbfs_err.h. */
dbfs_err_class dbfs_err_classify(PGconn *pg, const PGresult *res, const char *what)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    dbfs_err_class k;

    if (!state)
        return dbfs_err_client(pg, res, what);
    k = dbfs_err_sqlstate(state);
    if (!msg)
        msg = "no message";
    if (k.broken)
        g_message("%s: database connection lost (SQLSTATE %s: %s)", what, state, msg);
    else if (k.err == -EIO)
        g_warning("%s failed: SQLSTATE %s: %s", what, state, msg);
    else
        g_debug("%s: SQLSTATE %s: %s", what, state, msg);
    return k;
}

/* Linux errno numbers (as the schema functions return them) and ours. */
static const struct {
    int linux_errno, local;
} dbfs_err_linux[] = {
    {1, EPERM},      {2, ENOENT},   {5, EIO},      {13, EACCES}, {17, EEXIST},  {20, ENOTDIR},
    {21, EISDIR},    {22, EINVAL},  {27, EFBIG},   {28, ENOSPC}, {31, EMLINK},  {36, ENAMETOOLONG},
    {39, ENOTEMPTY}, {74, EBADMSG}, {116, ESTALE}, {77, EBADFD}, {78, EREMCHG}, {67, ENOLINK},
};

/* dbfs_errno_from_linux -- see dbfs_err.h. */
int dbfs_errno_from_linux(int linux_errno)
{
    for (size_t i = 0; i < G_N_ELEMENTS(dbfs_err_linux); i++)
        if (dbfs_err_linux[i].linux_errno == linux_errno)
            return -dbfs_err_linux[i].local;
    g_warning("the database returned unknown status %d", linux_errno);
    return -EIO;
}

/* dbfs_retry_wait -- see dbfs_err.h. */
bool dbfs_retry_wait(int attempt)
{
    if (attempt >= DBFS_RETRIES)
        return false;
    /* 1..2 ms, 1..4 ms, 1..8 ms, ...: short, and spread so that two
     * transactions that collided do not collide again. */
    g_usleep((gulong)g_random_int_range(1000, 1000 + (1000 << attempt)));
    return true;
}
