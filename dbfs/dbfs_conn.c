/*
 * dbfs_conn.c -- worker connections: connecting, preparing the statements,
 * running batches of statements in libpq pipeline mode, counting round
 * trips, and classifying database errors into errno values, once.
 *
 * NOTES
 *   A dbfs_conn belongs to one thread at a time. It is always in pipeline
 *   mode; see dbfs_int.h for the batch states. Connection states:
 *
 *     (new) --dbfs_conn_open: connect + prepare--> ready
 *     ready --an error of class 08, 57P01-3, or a dead socket--> broken
 *     broken --dbfs_batch_end / dbfs_batch_begin: PQreset + prepare--> ready
 *     broken --reset fails--> broken (every call answers -EAGAIN and tries
 *                             again)
 *
 *   The operation that finds the connection broken answers -EAGAIN (NFS
 *   JUKEBOX: the client retries); the connection is reset before the call
 *   returns, so the next call normally works.
 *
 *   Error classes (SQLSTATE -> result):
 *     PNxxx           -> -errno: Linux errno xxx raised by a pgnfs function
 *     23505           -> -EEXIST
 *     40001, 40P01    -> DBFS_ERETRY: the operation is retried (bounded)
 *     08xxx, 57P01-3  -> -EAGAIN, connection reset
 *     53100           -> -ENOSPC
 *     53200, 53300, 57014 -> -EAGAIN
 *     anything else   -> -EIO, logged with SQLSTATE, statement and primary
 *                        message (never parameters, never the detail)
 *
 *   Memory: the queue of statement ids grows as needed and is freed with
 *   the connection.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_int.h"

/* Server notices (none are expected) go to the debug log. */
static void dbfs_conn_notice(void *arg, const char *msg)
{
    (void)arg;
    g_debug("database notice: %.*s", (int)strcspn(msg, "\n"), msg);
}

/* Connect to conninfo with our application name and a connect timeout of
 * 10 s (both defaults that conninfo may override: libpq lets the expanded
 * dbname override the keywords before it). NULL on out-of-memory;
 * otherwise a PGconn whose status the caller checks. */
static PGconn *dbfs_connect(const char *conninfo)
{
    const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *const vals[] = {"10", "pgnfs", conninfo, NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);

    if (pg)
        PQsetNoticeProcessor(pg, dbfs_conn_notice, NULL);
    return pg;
}

/* One line from libpq's multi-line error text. */
static void dbfs_log_conn_error(const char *what, PGconn *pg)
{
    const char *msg = pg ? PQerrorMessage(pg) : "out of memory";
    size_t len = strcspn(msg, "\n");

    g_warning("%s: %.*s", what, (int)len, msg);
}

/*
 * Enter pipeline mode, prepare every worker statement and run the session
 * settings (DBFS_ST_SESSION), all in one round trip. Returns 0 or
 * -EAGAIN/-EIO (logged).
 */
static int dbfs_conn_setup(dbfs_conn *c)
{
    int rc = 0;
    int i;

    c->ready = false;
    if (PQstatus(c->pg) != CONNECTION_OK)
        return -EAGAIN;
    if (!PQenterPipelineMode(c->pg)) {
        dbfs_log_conn_error("cannot enter pipeline mode", c->pg);
        return -EIO;
    }
    for (i = 0; i < DBFS_ST_NWORKER; i++) {
        if (!PQsendPrepare(c->pg, dbfs_stmts[i].name, dbfs_stmts[i].sql, 0, NULL))
            break;
    }
    if (i < DBFS_ST_NWORKER ||
        !PQsendQueryPrepared(c->pg, dbfs_stmts[DBFS_ST_SESSION].name, 0, NULL, NULL, NULL, 1) ||
        !PQpipelineSync(c->pg)) {
        dbfs_log_conn_error("cannot send the statements to prepare", c->pg);
        return -EAGAIN;
    }
    c->round_trips++;
    for (i = 0; i < DBFS_ST_NWORKER; i++) {
        PGresult *res = PQgetResult(c->pg);

        if (!res) {
            rc = -EAGAIN;
            break;
        }
        if (PQresultStatus(res) != PGRES_COMMAND_OK && rc == 0) {
            const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
            const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

            g_warning("cannot prepare statement %s: SQLSTATE %s: %s (is the schema current?)",
                      dbfs_stmts[i].name, state ? state : "none", msg ? msg : "no message");
            rc = -EIO;
        }
        PQclear(res);
        res = PQgetResult(c->pg); /* the NULL that ends each statement */
        PQclear(res);
    }
    /* The session settings. */
    for (;;) {
        PGresult *res = PQgetResult(c->pg);
        ExecStatusType st;

        if (!res)
            break;
        st = PQresultStatus(res);
        if (st != PGRES_TUPLES_OK && rc == 0) {
            const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

            g_warning("cannot set the session up: %s", msg ? msg : "no message");
            rc = -EIO;
        }
        PQclear(res);
    }
    /* The Sync's result; on a broken connection there is none. */
    for (;;) {
        PGresult *res = PQgetResult(c->pg);
        ExecStatusType st;

        if (!res)
            break;
        st = PQresultStatus(res);
        PQclear(res);
        if (st == PGRES_PIPELINE_SYNC)
            break;
    }
    if (rc == 0 && PQstatus(c->pg) != CONNECTION_OK)
        rc = -EAGAIN;
    c->ready = rc == 0;
    return rc;
}

/* Reconnect a broken connection. Returns 0 or -EAGAIN (logged). */
static int dbfs_conn_reset(dbfs_conn *c)
{
    c->ready = false;
    PQreset(c->pg);
    if (PQstatus(c->pg) != CONNECTION_OK) {
        dbfs_log_conn_error("cannot reconnect to the database", c->pg);
        return -EAGAIN;
    }
    if (dbfs_conn_setup(c) != 0)
        return -EAGAIN;
    g_message("reconnected to the database");
    return 0;
}

/*
 * dbfs_conn_open -- connect and prepare the worker statements (one round
 * trip after the connection). Returns 0 and *out (the caller closes it with
 * dbfs_conn_close), -EAGAIN if the database cannot be reached, -ENOMEM, or
 * -EIO if the statements do not prepare (schema out of date; logged).
 */
int dbfs_conn_open(dbfs *fs, dbfs_conn **out)
{
    dbfs_conn *c = calloc(1, sizeof *c);
    int rc;

    *out = NULL;
    if (!c)
        return -ENOMEM;
    c->fs = fs;
    c->pg = dbfs_connect(fs->conninfo);
    if (!c->pg || PQstatus(c->pg) != CONNECTION_OK) {
        dbfs_log_conn_error("cannot connect to the database", c->pg);
        rc = -EAGAIN;
        goto err;
    }
    rc = dbfs_conn_setup(c);
    if (rc != 0)
        goto err;
    *out = c;
    return 0;
err:
    PQfinish(c->pg);
    free(c);
    return rc;
}

/* dbfs_conn_close -- close the connection and free c (NULL is ignored). */
void dbfs_conn_close(dbfs_conn *c)
{
    if (!c)
        return;
    PQfinish(c->pg);
    free(c->queued);
    free(c);
}

/* dbfs_conn_round_trips -- Syncs sent on c since it was opened (one per
 * batch, including the one that prepared the statements). Cannot fail. */
uint64_t dbfs_conn_round_trips(const dbfs_conn *c)
{
    return c->round_trips;
}

/* Is this SQLSTATE one that means the connection is gone or going? */
static bool dbfs_state_is_conn_loss(const char *s)
{
    return strncmp(s, "08", 2) == 0 || strcmp(s, "57P01") == 0 || strcmp(s, "57P02") == 0 ||
           strcmp(s, "57P03") == 0;
}

/*
 * Classify a failed result (res may be NULL: no result where one was
 * due) of statement id. Returns the negative errno or DBFS_ERETRY; marks
 * the connection broken when it is.
 */
static int dbfs_classify(dbfs_conn *c, const PGresult *res, dbfs_stmt id)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

    if (!state) {
        /* libpq's own errors (no SQLSTATE): a lost connection, mostly.
         * In pipeline mode a failed send ("server closed the connection
         * unexpectedly") leaves the status CONNECTION_OK until libpq next
         * reads: read now, so that a closed socket shows as one. */
        if (!res || PQstatus(c->pg) != CONNECTION_OK || !PQconsumeInput(c->pg) ||
            PQstatus(c->pg) != CONNECTION_OK) {
            c->ready = false;
            g_message("statement %s: lost the database connection", dbfs_stmts[id].name);
            return -EAGAIN;
        }
        /* Our side of the protocol is confused: start afresh. */
        c->ready = false;
        g_warning("statement %s failed in the client library: %.*s", dbfs_stmts[id].name,
                  (int)strcspn(PQresultErrorMessage(res), "\n"), PQresultErrorMessage(res));
        return -EIO;
    }
    if (state[0] == 'P' && state[1] == 'N' && g_ascii_isdigit(state[2]) &&
        g_ascii_isdigit(state[3]) && g_ascii_isdigit(state[4]))
        return dbfs_errno_from_linux(atoi(state + 2));
    if (strcmp(state, "23505") == 0)
        return -EEXIST;
    if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0) {
        g_debug("statement %s: SQLSTATE %s, retrying", dbfs_stmts[id].name, state);
        return DBFS_ERETRY;
    }
    if (dbfs_state_is_conn_loss(state)) {
        c->ready = false;
        g_message("statement %s: database connection lost (SQLSTATE %s: %s)", dbfs_stmts[id].name,
                  state, msg ? msg : "no message");
        return -EAGAIN;
    }
    if (strcmp(state, "53100") == 0)
        return -ENOSPC;
    if (strcmp(state, "53200") == 0 || strcmp(state, "53300") == 0 || strcmp(state, "57014") == 0)
        return -EAGAIN;
    g_warning("statement %s failed: SQLSTATE %s: %s", dbfs_stmts[id].name, state,
              msg ? msg : "no message");
    return -EIO;
}

/* Remember the batch's first error. */
static void dbfs_batch_fail(dbfs_conn *c, int rc)
{
    if (c->err == 0)
        c->err = rc;
}

/* dbfs_batch_begin -- see dbfs_int.h: resets the batch state and
 * reconnects a broken connection (-EAGAIN when that fails). */
int dbfs_batch_begin(dbfs_conn *c)
{
    c->nqueued = 0;
    c->ntaken = 0;
    c->synced = false;
    c->err = 0;
    if (!c->ready || PQstatus(c->pg) != CONNECTION_OK)
        return dbfs_conn_reset(c);
    return 0;
}

/* dbfs_batch_add -- see dbfs_int.h: sends one prepared statement with
 * binary parameters and binary results; a failure is kept for
 * dbfs_batch_end(). */
int dbfs_batch_add(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p)
{
    if (c->err && !c->ready)
        return c->err;
    if (c->nqueued == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        dbfs_stmt *q = realloc(c->queued, cap * sizeof *q);

        if (!q) {
            dbfs_batch_fail(c, -ENOMEM);
            return -ENOMEM;
        }
        c->queued = q;
        c->cap = cap;
    }
    if (!PQsendQueryPrepared(c->pg, dbfs_stmts[id].name, p ? p->n : 0, p ? p->values : NULL,
                             p ? p->lengths : NULL, p ? p->formats : NULL, 1)) {
        int rc = dbfs_classify(c, NULL, id);

        dbfs_batch_fail(c, rc);
        return rc;
    }
    c->queued[c->nqueued++] = id;
    return 0;
}

/* dbfs_batch_sync -- see dbfs_int.h: the Sync that ends the batch and
 * its implicit transaction; counts one round trip. */
int dbfs_batch_sync(dbfs_conn *c)
{
    if (c->nqueued == 0)
        return c->err;
    if (!PQpipelineSync(c->pg)) {
        int rc = dbfs_classify(c, NULL, c->queued[0]);

        dbfs_batch_fail(c, rc);
        return rc;
    }
    c->synced = true;
    c->round_trips++;
    return 0;
}

/* dbfs_batch_result -- see dbfs_int.h: the next statement's result,
 * classified; the NULL that ends it is consumed. */
int dbfs_batch_result(dbfs_conn *c, PGresult **res)
{
    PGresult *r;
    PGresult *extra;
    dbfs_stmt id;
    ExecStatusType st;

    *res = NULL;
    if (c->ntaken >= c->nqueued)
        return c->err ? c->err : -EIO;
    id = c->queued[c->ntaken++];
    if (!c->synced || (!c->ready && c->err))
        return c->err ? c->err : -EIO;
    r = PQgetResult(c->pg);
    if (!r) {
        dbfs_batch_fail(c, dbfs_classify(c, NULL, id));
        return c->err;
    }
    /* Each statement's results end with a NULL. */
    while ((extra = PQgetResult(c->pg)) != NULL)
        PQclear(extra);
    st = PQresultStatus(r);
    if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
        *res = r;
        return c->err;
    }
    if (st != PGRES_PIPELINE_ABORTED)
        dbfs_batch_fail(c, dbfs_classify(c, r, id));
    else if (!c->err)
        dbfs_batch_fail(c, -EIO);
    PQclear(r);
    return c->err;
}

/* dbfs_batch_end -- see dbfs_int.h: drains, reads the Sync's result, and
 * resets a broken connection (the batch then answers -EAGAIN). */
int dbfs_batch_end(dbfs_conn *c)
{
    PGresult *r;

    while (c->ntaken < c->nqueued) {
        dbfs_batch_result(c, &r);
        PQclear(r);
    }
    /* The Sync's own result. */
    if (c->synced && c->ready) {
        for (;;) {
            ExecStatusType st;

            r = PQgetResult(c->pg);
            if (!r) {
                if (PQstatus(c->pg) != CONNECTION_OK) {
                    c->ready = false;
                    dbfs_batch_fail(c, -EAGAIN);
                }
                break;
            }
            st = PQresultStatus(r);
            PQclear(r);
            if (st == PGRES_PIPELINE_SYNC)
                break;
        }
    }
    /* Statements sent without their Sync leave the pipeline in an unknown
     * state: start afresh. */
    if (c->nqueued > 0 && !c->synced)
        c->ready = false;
    c->nqueued = 0;
    c->ntaken = 0;
    c->synced = false;
    if (!c->ready || PQstatus(c->pg) != CONNECTION_OK) {
        if (c->err == 0 || c->err == DBFS_ERETRY)
            c->err = -EAGAIN;
        dbfs_conn_reset(c);
    }
    return c->err;
}

/* dbfs_retry_wait -- see dbfs_int.h. */
bool dbfs_retry_wait(int attempt)
{
    if (attempt >= DBFS_RETRIES)
        return false;
    /* 1..2 ms, 1..4 ms, 1..8 ms, ...: short, and spread so that two
     * transactions that collided do not collide again. */
    g_usleep((gulong)g_random_int_range(1000, 1000 + (1000 << attempt)));
    return true;
}

/* dbfs_exec -- see dbfs_int.h: one statement, one batch, bounded retries
 * of DBFS_ERETRY (then -EAGAIN). */
int dbfs_exec(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p, PGresult **res)
{
    int rc;

    *res = NULL;
    for (int attempt = 1;; attempt++) {
        rc = dbfs_batch_begin(c);
        if (rc != 0)
            return rc;
        dbfs_batch_add(c, id, p);
        dbfs_batch_sync(c);
        dbfs_batch_result(c, res);
        rc = dbfs_batch_end(c);
        if (rc == 0)
            return 0;
        PQclear(*res);
        *res = NULL;
        if (rc != DBFS_ERETRY)
            return rc;
        if (!dbfs_retry_wait(attempt))
            return -EAGAIN;
    }
}
