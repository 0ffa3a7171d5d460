/*
 * dbfs_conn.c -- database connections (dbfs_conn.h): connecting, setting
 * a worker up (pipeline mode, statements prepared), resetting a broken
 * connection, batches on workers, statements, scripts, streams and
 * transactions on sessions, counting round trips; every failure goes to
 * dbfs_err_classify() (dbfs_err.h), and every retry is bounded by
 * dbfs_retry_wait().
 *
 * NOTES
 *   The states and the batch life are drawn in dbfs_conn.h. What breaks a
 *   connection is the classifier's word (k.broken); the reset happens
 *   before the failing call returns: in dbfs_batch_end() for a worker, in
 *   dbfs_conn_fail() for a session. A session's prepared statements are
 *   forgotten with its server session; a worker prepares all of its own
 *   again (dbfs_link.c).
 *
 *   A connection that the server ended while it sat idle (PostgreSQL
 *   restarted, shut down, or ended the session) is found before it is
 *   used: an idle connection has nothing to read, so a socket that polls
 *   readable (the server's last words, or the end of the stream) is
 *   reconnected at once by dbfs_batch_begin() and dbfs_session_ready(),
 *   and the call runs on the new connection. A batch whose statements
 *   could not even be handed to libpq (it refused: the connection is
 *   gone) reached no server, so dbfs_batch_run() runs it once more on a
 *   new connection; a batch that was sent and then lost its connection
 *   may have committed, and answers -EAGAIN.
 *
 *   A connection that follows its file system's renewals (dbfs_renew.c:
 *   workers, and the sessions that join) is connected again, quietly and
 *   without resetting any cache, when a renewal was asked since it was
 *   connected: by dbfs_conn_tend() when its owner is woken for it, or
 *   before its next batch or statement outside a transaction. The old
 *   backend is waited for until it has exited, since what it held open
 *   is only freed then.
 *
 *   Memory: the queue of statement ids grows as needed and is freed with
 *   the connection. Every PGresult is cleared where it is taken, or handed
 *   to the caller.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_cache.h"
#include "dbfs_conn.h"
#include "xf.h"
#include "dbfs_int.h"

/*
 * Did the server end this idle connection? Between calls a connection has
 * nothing to read (every result, up to the Sync's, was read), so a socket
 * that polls readable or hung up holds the server's last words (a FATAL
 * before its backend exited) or the end of the stream. One poll(2), no
 * waiting. Cannot fail (a connection without a socket counts as ended).
 */
static bool dbfs_conn_ended(dbfs_conn *c)
{
    struct pollfd p = {.fd = PQsocket(c->pg), .events = POLLIN};

    if (p.fd < 0)
        return true;
    return poll(&p, 1, 0) > 0;
}

/* Reconnect a broken connection (and set a worker up again). Returns 0 or
 * -EAGAIN (logged). The metadata caches are reset when the loss is found
 * and again once connected: a restarted database may lack the last
 * commits of an async export, and the second reset drops what a change
 * committed before the loss stored after the first. */
static int dbfs_conn_reset(dbfs_conn *c)
{
    int rc;

    dbfs_cache_db_lost(c->fs);
    rc = dbfs_link_again(c);
    dbfs_renew_done(c);
    if (rc != 0)
        return rc;
    dbfs_cache_db_lost(c->fs);
    g_message("reconnected to the database");
    return 0;
}

/* A new connection structure around pg (owned from now on). */
static dbfs_conn *dbfs_conn_new(PGconn *pg)
{
    dbfs_conn *c = calloc(1, sizeof *c);

    if (!c) {
        PQfinish(pg);
        return NULL;
    }
    c->pg = pg;
    return c;
}

/*
 * dbfs_conn_open -- see dbfs.h: a worker connection, its statements
 * prepared (one round trip after the connection). Returns 0 and *out (the
 * caller closes it with dbfs_conn_close), -EAGAIN if the database cannot
 * be reached, -ENOMEM, or -EIO if the statements do not prepare (schema
 * out of date; logged).
 */
int dbfs_conn_open(dbfs *fs, dbfs_conn **out)
{
    PGconn *pg = dbfs_connect(fs->conninfo, "pgnfs");
    dbfs_conn *c;
    int rc;

    *out = NULL;
    if (!pg)
        return -EAGAIN;
    c = dbfs_conn_new(pg);
    if (!c)
        return -ENOMEM;
    c->fs = fs;
    c->pipeline = true;
    rc = dbfs_link_worker(c);
    if (rc != 0) {
        dbfs_conn_close(c);
        return rc;
    }
    dbfs_renew_join(fs, c);
    *out = c;
    return 0;
}

/* dbfs_session_open -- see dbfs_conn.h. */
int dbfs_session_open(const char *conninfo, const char *app, dbfs_conn **out)
{
    PGconn *pg = dbfs_connect(conninfo, app);

    *out = NULL;
    if (!pg)
        return -EAGAIN;
    *out = dbfs_conn_new(pg);
    if (!*out)
        return -ENOMEM;
    (*out)->ready = true;
    return 0;
}

/* dbfs_conn_close -- close the connection and free c (NULL is ignored). */
void dbfs_conn_close(dbfs_conn *c)
{
    if (!c)
        return;
    dbfs_renew_leave(c);
    PQfinish(c->pg);
    free(c->queued);
    xf_work_free(c->xf);
    free(c->xf_buf);
    free(c);
}

/* dbfs_conn_set_async -- see dbfs.h: read by dbfs_batch_sync. */
void dbfs_conn_set_async(dbfs_conn *c, bool async)
{
    c->async = async;
}

/* dbfs_conn_async -- see dbfs.h. */
bool dbfs_conn_async(const dbfs_conn *c)
{
    return c->async;
}

/* dbfs_conn_round_trips -- see dbfs.h: Syncs sent on c since it was
 * opened (one per batch, including the one that prepared the statements;
 * one per statement on a session). Cannot fail. */
uint64_t dbfs_conn_round_trips(const dbfs_conn *c)
{
    return c->round_trips;
}

/* Classify a failure of statement (or script) `what` on c; marks the
 * connection broken when it is, and resets a broken session at once.
 * Returns the errno or DBFS_ERETRY. */
static int dbfs_conn_fail(dbfs_conn *c, const PGresult *res, const char *what)
{
    dbfs_err_class k = dbfs_err_classify(c->pg, res, what);

    if (k.broken) {
        c->ready = false;
        if (!c->pipeline)
            dbfs_conn_reset(c);
    }
    return k.err;
}

/* --- batches on a worker ------------------------------------------------- */

/* Remember the batch's first error. */
static void dbfs_batch_fail(dbfs_conn *c, int rc)
{
    if (c->err == 0)
        c->err = rc;
}

/* A ready connection that the server ended while it was idle is not
 * ready: say so, so that the caller reconnects before using it. */
static void dbfs_conn_check_idle(dbfs_conn *c)
{
    if (c->ready && PQstatus(c->pg) == CONNECTION_OK && dbfs_conn_ended(c)) {
        g_message("the database ended an idle connection (restarted or shut down?): "
                  "reconnecting");
        c->ready = false;
    }
}

/* dbfs_batch_begin -- see dbfs_conn.h: resets the batch state and
 * reconnects a broken connection, or one the server ended while it was
 * idle (-EAGAIN when that fails). */
int dbfs_batch_begin(dbfs_conn *c)
{
    c->nqueued = 0;
    c->ntaken = 0;
    c->synced = false;
    c->unsent = false;
    c->err = 0;
    c->changing = false;
    c->lazy = false;
    dbfs_conn_check_idle(c);
    if (!c->ready || PQstatus(c->pg) != CONNECTION_OK)
        return dbfs_conn_reset(c);
    if (dbfs_renew_due(c) && dbfs_conn_tend(c) != 0)
        return dbfs_conn_reset(c);
    return 0;
}

/* dbfs_batch_add -- see dbfs_conn.h: sends one prepared statement with
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
        int rc = dbfs_conn_fail(c, NULL, dbfs_stmts[id].name);

        /* libpq refused it: without its Sync, nothing of the batch can
         * have committed. */
        c->unsent = c->err == 0 || c->unsent;
        dbfs_batch_fail(c, rc);
        return rc;
    }
    c->queued[c->nqueued++] = id;
    c->changing |= dbfs_stmts[id].changes;
    c->lazy |= dbfs_stmts[id].lazy;
    return 0;
}

/* dbfs_batch_sync -- see dbfs_conn.h: the Sync that ends the batch and
 * its implicit transaction; counts one round trip. */
int dbfs_batch_sync(dbfs_conn *c)
{
    if (c->nqueued == 0)
        return c->err;
    if (c->changing ? c->async : c->lazy)
        dbfs_batch_add(c, DBFS_ST_ASYNC_COMMIT, NULL);
    if (!PQpipelineSync(c->pg)) {
        int rc = dbfs_conn_fail(c, NULL, dbfs_stmts[c->queued[0]].name);

        c->unsent = c->err == 0 || c->unsent;
        dbfs_batch_fail(c, rc);
        return rc;
    }
    c->synced = true;
    c->round_trips++;
    return 0;
}

/* dbfs_batch_result -- see dbfs_conn.h: the next statement's result,
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
        dbfs_batch_fail(c, dbfs_conn_fail(c, NULL, dbfs_stmts[id].name));
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
        dbfs_batch_fail(c, dbfs_conn_fail(c, r, dbfs_stmts[id].name));
    else if (!c->err)
        dbfs_batch_fail(c, -EIO);
    PQclear(r);
    return c->err;
}

/* Read the Sync's own result; a connection that closed meanwhile is
 * broken (-EAGAIN). */
static void dbfs_batch_read_sync(dbfs_conn *c)
{
    for (;;) {
        PGresult *r = PQgetResult(c->pg);
        ExecStatusType st;

        if (!r) {
            if (PQstatus(c->pg) != CONNECTION_OK) {
                c->ready = false;
                dbfs_batch_fail(c, -EAGAIN);
            }
            return;
        }
        st = PQresultStatus(r);
        PQclear(r);
        if (st == PGRES_PIPELINE_SYNC)
            return;
    }
}

/* dbfs_batch_end -- see dbfs_conn.h: drains, reads the Sync's result, and
 * resets a broken connection (the batch then answers -EAGAIN). */
int dbfs_batch_end(dbfs_conn *c)
{
    PGresult *r;

    while (c->ntaken < c->nqueued) {
        dbfs_batch_result(c, &r);
        PQclear(r);
    }
    if (c->synced && c->ready)
        dbfs_batch_read_sync(c);
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

/* After the last attempt failed with DBFS_ERETRY: log, and -EAGAIN. */
static int dbfs_retries_spent(const char *what)
{
    g_message("%s: still a serialization failure or deadlock after %d attempts", what,
              DBFS_RETRIES);
    return -EAGAIN;
}

/* dbfs_batch_run -- see dbfs_conn.h. */
int dbfs_batch_run(dbfs_conn *c, int (*fn)(dbfs_conn *c, void *arg), void *arg)
{
    bool resent = false;

    for (int attempt = 1;; attempt++) {
        int rc = dbfs_batch_begin(c);
        int end;

        if (rc != 0)
            return rc;
        rc = fn(c, arg);
        end = dbfs_batch_end(c);
        if (end != 0)
            rc = end;
        /* Lost before any of it left: once more, on the new connection. */
        if (rc == -EAGAIN && c->unsent && !resent) {
            resent = true;
            attempt--;
            continue;
        }
        if (rc != DBFS_ERETRY)
            return rc;
        if (!dbfs_retry_wait(attempt))
            return dbfs_retries_spent(c->nqueued ? dbfs_stmts[c->queued[0]].name : "a batch");
    }
}

/* One statement as a batch of its own (dbfs_batch_run's fn). */
typedef struct {
    dbfs_stmt id;
    const dbfs_params *p;
    PGresult *res;
} dbfs_exec_one;

static int dbfs_exec_batch(dbfs_conn *c, void *arg)
{
    dbfs_exec_one *e = arg;

    PQclear(e->res);
    e->res = NULL;
    dbfs_batch_add(c, e->id, e->p);
    dbfs_batch_sync(c);
    return dbfs_batch_result(c, &e->res);
}

/* --- sessions ------------------------------------------------------------ */

/* Before a session's statement: reconnect if broken, or ended by the
 * server while idle (outside a transaction: inside one, the failure is
 * the transaction's to report). 0 or -EAGAIN. */
static int dbfs_session_ready(dbfs_conn *c)
{
    if (PQtransactionStatus(c->pg) == PQTRANS_IDLE) {
        dbfs_conn_check_idle(c);
        if (c->ready && dbfs_renew_due(c))
            dbfs_conn_tend(c);
    }
    if (c->ready && PQstatus(c->pg) == CONNECTION_OK)
        return 0;
    return dbfs_conn_reset(c);
}

/* Prepare statement id on a session once. 0 or an errno. */
static int dbfs_session_prepare(dbfs_conn *c, dbfs_stmt id)
{
    PGresult *r;
    int rc = 0;

    if (c->prepared[id])
        return 0;
    r = PQprepare(c->pg, dbfs_stmts[id].name, dbfs_stmts[id].sql, 0, NULL);
    c->round_trips++;
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        rc = dbfs_conn_fail(c, r, dbfs_stmts[id].name);
    else
        c->prepared[id] = true;
    PQclear(r);
    return rc;
}

/* One statement on a session, once. */
static int dbfs_session_exec(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p, PGresult **res)
{
    PGresult *r;
    ExecStatusType st;
    int rc = dbfs_session_ready(c);

    if (rc == 0)
        rc = dbfs_session_prepare(c, id);
    if (rc != 0)
        return rc;
    r = PQexecPrepared(c->pg, dbfs_stmts[id].name, p ? p->n : 0, p ? p->values : NULL,
                       p ? p->lengths : NULL, p ? p->formats : NULL, 1);
    c->round_trips++;
    st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        rc = dbfs_conn_fail(c, r, dbfs_stmts[id].name);
        PQclear(r);
        return rc;
    }
    *res = r;
    return 0;
}

/* Is a session inside an explicit transaction (BEGIN without its end)? */
static bool dbfs_session_in_txn(const dbfs_conn *c)
{
    PGTransactionStatusType t = PQtransactionStatus(c->pg);

    return t == PQTRANS_INTRANS || t == PQTRANS_INERROR;
}

/* dbfs_conn_tend -- see dbfs_renew.h: connected again at once (its old
 * backend waited for), unless c is inside a batch or a transaction. */
int dbfs_conn_tend(dbfs_conn *c)
{
    int fd, rc;

    if (!c || !dbfs_renew_due(c))
        return 0;
    if (c->pipeline ? c->nqueued > 0 : dbfs_session_in_txn(c))
        return 0;
    fd = dbfs_renew_hold(c);
    rc = dbfs_link_again(c);
    dbfs_renew_wait(fd);
    dbfs_renew_done(c);
    if (rc == 0)
        g_debug("connection opened anew (the space guard's CHECKPOINT removed WAL)");
    return rc;
}

/* dbfs_conn_generation -- see dbfs_conn.h. */
uint64_t dbfs_conn_generation(const dbfs_conn *c)
{
    return c->generation;
}

/* dbfs_exec -- see dbfs_conn.h. */
int dbfs_exec(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p, PGresult **res)
{
    dbfs_exec_one e = {.id = id, .p = p};
    int rc;

    *res = NULL;
    if (c->pipeline) {
        rc = dbfs_batch_run(c, dbfs_exec_batch, &e);
        if (rc == 0)
            *res = e.res;
        else
            PQclear(e.res);
        return rc;
    }
    if (dbfs_session_in_txn(c))
        return dbfs_session_exec(c, id, p, res);
    for (int attempt = 1;; attempt++) {
        rc = dbfs_session_exec(c, id, p, res);
        if (rc != DBFS_ERETRY)
            return rc;
        if (!dbfs_retry_wait(attempt))
            return dbfs_retries_spent(dbfs_stmts[id].name);
    }
}

/* dbfs_script -- see dbfs_conn.h. */
int dbfs_script(dbfs_conn *c, const char *name, const char *sql)
{
    PGresult *r;
    ExecStatusType st;
    int rc = dbfs_session_ready(c);

    if (rc != 0)
        return rc;
    r = PQexec(c->pg, sql);
    c->round_trips++;
    st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY)
        rc = dbfs_conn_fail(c, r, name);
    PQclear(r);
    return rc;
}

/* dbfs_txn -- see dbfs_conn.h. */
int dbfs_txn(dbfs_conn *c, const char *what, int (*body)(dbfs_conn *c, void *arg), void *arg)
{
    for (int attempt = 1;; attempt++) {
        int rc = dbfs_script(c, "BEGIN", "BEGIN");

        if (rc == 0)
            rc = body(c, arg);
        if (rc == 0)
            rc = dbfs_script(c, "COMMIT", "COMMIT");
        else if (dbfs_session_in_txn(c))
            dbfs_script(c, "ROLLBACK", "ROLLBACK");
        if (rc != DBFS_ERETRY)
            return rc;
        if (!dbfs_retry_wait(attempt))
            return dbfs_retries_spent(what);
    }
}

/* Ask the server to stop the running query (its end is drained anyway). */
static void dbfs_session_cancel(dbfs_conn *c)
{
    PGcancel *cancel = PQgetCancel(c->pg);
    char errbuf[256];

    if (cancel) {
        if (!PQcancel(cancel, errbuf, sizeof errbuf))
            g_debug("cancel request failed: %s", errbuf);
        PQfreeCancel(cancel);
    }
}

/* A stream in progress: what its rows go to and what came of it. */
typedef struct {
    dbfs_row_fn fn;
    void *arg;
    int stop;       /* fn's nonzero return */
    bool delivered; /* a row reached fn */
} dbfs_stream_state;

/* Hand the rows of r to the stream's callback until it stops. */
static void dbfs_stream_rows(dbfs_conn *c, const PGresult *r, dbfs_stream_state *s)
{
    /* One row each in single-row mode; the final TUPLES_OK has none (or
     * all of them, if single-row mode was refused). */
    for (int row = 0; row < PQntuples(r) && !s->stop; row++) {
        s->delivered = true;
        s->stop = s->fn(r, row, s->arg);
        if (s->stop)
            dbfs_session_cancel(c);
    }
}

/* One run of a stream (dbfs_stream without the retries). */
static int dbfs_stream_once(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p, dbfs_stream_state *s)
{
    PGresult *r;
    int rc = dbfs_session_ready(c);

    if (rc == 0)
        rc = dbfs_session_prepare(c, id);
    if (rc != 0)
        return rc;
    if (!PQsendQueryPrepared(c->pg, dbfs_stmts[id].name, p ? p->n : 0, p ? p->values : NULL,
                             p ? p->lengths : NULL, p ? p->formats : NULL, 1))
        return dbfs_conn_fail(c, NULL, dbfs_stmts[id].name);
    c->round_trips++;
    if (!PQsetSingleRowMode(c->pg))
        g_debug("%s: single-row mode refused: rows arrive at once", dbfs_stmts[id].name);
    while ((r = PQgetResult(c->pg)) != NULL) {
        ExecStatusType st = PQresultStatus(r);

        if (st == PGRES_SINGLE_TUPLE || st == PGRES_TUPLES_OK) {
            if (rc == 0)
                dbfs_stream_rows(c, r, s);
        } else if (rc == 0 && !s->stop) {
            /* A broken connection resets here: nothing more to read. */
            rc = dbfs_conn_fail(c, r, dbfs_stmts[id].name);
            if (!c->ready || PQstatus(c->pg) != CONNECTION_OK) {
                PQclear(r);
                break;
            }
        }
        PQclear(r);
    }
    return s->stop ? s->stop : rc;
}

/* dbfs_stream -- see dbfs_conn.h. */
int dbfs_stream(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p, dbfs_row_fn fn, void *arg)
{
    for (int attempt = 1;; attempt++) {
        dbfs_stream_state s = {.fn = fn, .arg = arg};
        int rc = dbfs_stream_once(c, id, p, &s);

        if (rc != DBFS_ERETRY)
            return rc;
        if (s.delivered)
            return -EAGAIN; /* rows went out: running it again would repeat them */
        if (!dbfs_retry_wait(attempt))
            return dbfs_retries_spent(dbfs_stmts[id].name);
    }
}
