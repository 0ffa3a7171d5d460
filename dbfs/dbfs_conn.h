/*
 * dbfs_conn.h -- database connections, the one module every dbfs path
 * reaches PostgreSQL through: the request path's worker connections and
 * the admin paths' sessions (mkfs, open, du, find, fsck). Connecting,
 * resetting a lost connection, running prepared statements and scripts,
 * and classifying every failure with dbfs_err_classify() (dbfs_err.h).
 *
 * NOTES
 *   Two kinds of connection, one structure:
 *
 *     worker   (dbfs_conn_open, dbfs.h) stays in libpq pipeline mode for
 *              its whole life, with every worker statement prepared at
 *              setup. An operation queues one or more statements (a
 *              "batch"), ends it with one Sync and reads the results: one
 *              batch is one round trip and, because a Sync ends an
 *              implicit transaction, one transaction.
 *     session  (dbfs_session_open) a plain connection for the admin
 *              paths: statements prepared on first use, scripts (simple
 *              query protocol), rows streamed in single-row mode,
 *              explicit transactions (dbfs_txn).
 *
 *   Batch life on a worker connection:
 *
 *     idle --dbfs_batch_begin--> queuing --dbfs_batch_add*--> queuing
 *     queuing --dbfs_batch_sync--> reading --dbfs_batch_result*--> reading
 *     reading --dbfs_batch_end--> idle      (drains what was not read, and
 *                                            resets a broken connection)
 *
 *   Connection states (both kinds):
 *
 *     (new) --open: connect (+ prepare, workers)--> ready
 *     ready --a failure the classifier calls broken--> broken
 *     broken --reset: PQreset (+ prepare)--> ready
 *     broken --reset fails--> broken (calls answer -EAGAIN and try again)
 *
 *   A worker is reset by dbfs_batch_end() of the batch that broke it (or
 *   the next dbfs_batch_begin()); a session by the call that broke it. A
 *   connection the server ended while it sat idle (PostgreSQL restarted)
 *   is found and reconnected before a call uses it (one poll(2) of its
 *   socket), so that call works at once; a call that loses its connection
 *   while it runs answers -EAGAIN (it may have committed) and the next
 *   call normally works.
 *
 *   Errors are classified once, by SQLSTATE, when the first failing result
 *   of a batch arrives; later results of an aborted pipeline do not
 *   overwrite it. dbfs_batch_end() returns that first error.
 *
 *   Retries: an operation that fails with DBFS_ERETRY runs again whole,
 *   bounded by dbfs_retry_wait() (DBFS_RETRIES attempts, then -EAGAIN):
 *   dbfs_batch_run() for worker batches, dbfs_exec() for one statement on
 *   either kind (outside an explicit transaction), dbfs_stream() while no
 *   row was delivered, dbfs_txn() for a session's transaction.
 *
 *   Ownership: a PGresult handed out by dbfs_batch_result() or dbfs_exec()
 *   belongs to the caller, who PQclear()s it on every path. A connection
 *   belongs to one thread at a time.
 */
#ifndef PGNFS_DBFS_CONN_H
#define PGNFS_DBFS_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "dbfs.h"
#include "dbfs_err.h"
#include "dbfs_renew.h"
#include "dbfs_sql.h"
#include "dbfs_wire.h"

struct dbfs_conn {
    dbfs *fs; /* a worker's file system; NULL for a session */
    PGconn *pg;
    bool pipeline; /* a worker connection */
    bool ready;    /* connected, set up (workers: in pipeline mode, prepared) */
    /* Statements prepared on this connection so far (sessions prepare on
     * first use; a reset forgets them). */
    bool prepared[DBFS_ST_COUNT];
    uint64_t round_trips;
    /* The current batch (workers): the statements queued, how many
     * results were taken, and the first error (0 if none). */
    dbfs_stmt *queued;
    size_t nqueued, cap, ntaken;
    bool synced;
    /* The batch failed before libpq would take it (nothing reached the
     * server): dbfs_batch_run may send it again. */
    bool unsent;
    int err;
    /* The commit mode (dbfs_conn_set_async), and what the current batch
     * holds: a change, a lazy change (dbfs_stmt_def). */
    bool async;
    bool changing, lazy;
    /* Transformation chains (dbfs_xf.c), made on first use: the worker's
     * xform state and a buffer for one chunk's plain bytes. */
    struct xf_work *xf;
    char *xf_buf;
    size_t xf_buf_len;
    /* The backend whose changes are tagged with this server's id
     * (dbfs_conn_request, dbfs_coh.c); 0: none yet. */
    int coh_tagged_pid;
    /* Renewals (dbfs_renew.c): the file system whose renewals c follows
     * (NULL: none), the renewal epoch it was connected in, and how many
     * times it was connected (an owner that LISTENs on c listens again
     * when this moves). */
    dbfs *renew_fs;
    uint64_t epoch;
    uint64_t generation;
};

/*
 * dbfs_session_open -- a session (see above) to conninfo, with `app` as
 * the fallback application name. Returns 0 and *out (close it with
 * dbfs_conn_close), -EAGAIN (cannot connect; logged "cannot connect to
 * the database: ...") or -ENOMEM.
 */
int dbfs_session_open(const char *conninfo, const char *app, dbfs_conn **out);

/* --- making connections (dbfs_link.c) ----------------------------------- */

/* dbfs_connect -- connect to conninfo with application name app and a
 * connect timeout of 10 s (both defaults that conninfo may override), the
 * search_path pinned and notices sent to the debug log. Returns the
 * connection or NULL (logged "cannot connect to the database: ..."). */
PGconn *dbfs_connect(const char *conninfo, const char *app);
/* dbfs_link_worker -- set a new worker connection up: pipeline mode,
 * every worker statement prepared, the session settings, one round trip.
 * Returns 0 or -EAGAIN/-EIO (logged). */
int dbfs_link_worker(dbfs_conn *c);
/* dbfs_link_again -- connect c again (PQreset: the old server session
 * ends) and set it up as it was; its prepared statements are forgotten
 * (a worker's prepared again). Returns 0 or -EAGAIN (logged; c is not
 * ready). Touches no cache. */
int dbfs_link_again(dbfs_conn *c);
/* dbfs_log_conn_error -- one warning line "what: " and the first line of
 * libpq's error text for pg (NULL: out of memory). */
void dbfs_log_conn_error(const char *what, PGconn *pg);

/* dbfs_conn_generation -- how many times c was connected (set up): it
 * moves whenever c got a new server session, so one that LISTENs knows
 * to LISTEN again. Cannot fail. */
uint64_t dbfs_conn_generation(const dbfs_conn *c);

/* --- renewals (dbfs_renew.c; dbfs_renew.h has the public part) ---------- */

/* dbfs_renew_join -- c, just connected, follows fs's renewals from now on
 * (workers join at open; a session's owner joins it). Cannot fail. */
void dbfs_renew_join(dbfs *fs, dbfs_conn *c);
/* dbfs_renew_leave -- c is closing (dbfs_conn_close). NULL renew_fs: nothing. */
void dbfs_renew_leave(dbfs_conn *c);
/* dbfs_renew_due -- was a renewal asked since c was connected? */
bool dbfs_renew_due(const dbfs_conn *c);
/* dbfs_renew_done -- c's old server session is over (c was connected
 * again, or tried to be): it is no longer owed a renewal. */
void dbfs_renew_done(dbfs_conn *c);
/* dbfs_renew_hold -- a duplicate of c's socket (-1 if none), taken before
 * c is connected again, for dbfs_renew_wait. */
int dbfs_renew_hold(const dbfs_conn *c);
/* dbfs_renew_wait -- wait until the server session whose socket fd holds
 * has ended (the backend exits before its end of the socket closes),
 * DBFS_RENEW_EXIT_US at most; closes fd (-1: nothing). */
void dbfs_renew_wait(int fd);
/* dbfs_renew_all -- ask every connection following fs's renewals to be
 * connected again, and wake their owners (dbfs_renew_watch). Cannot fail. */
void dbfs_renew_all(dbfs *fs);
/* dbfs_renew_pending -- connections asked by the last renewal that have
 * not been connected again yet, while DBFS_RENEW_MAX_US has not passed
 * since (then 0, logged once). Thread-safe. */
unsigned dbfs_renew_pending(dbfs *fs);

/* --- batches on a worker connection ------------------------------------- */

/* Start a batch; reconnects a broken connection first. Returns 0 or
 * -EAGAIN (no connection; logged). */
int dbfs_batch_begin(dbfs_conn *c);
/* Queue statement id. Failures are remembered and returned by
 * dbfs_batch_end(); the return value says whether it was queued (0). */
int dbfs_batch_add(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p);
/* End the queue with a Sync: one round trip. A batch that commits
 * without waiting for its WAL (a change on an async connection, a lazy
 * change) gets DBFS_ST_ASYNC_COMMIT queued after the caller's statements,
 * whose result dbfs_batch_end drains. */
int dbfs_batch_sync(dbfs_conn *c);
/*
 * dbfs_batch_result -- the result of the next queued statement, in order.
 * Returns 0 and *res (tuples or command OK; caller clears), or the batch's
 * first error with *res NULL (also for statements skipped after an error).
 */
int dbfs_batch_result(dbfs_conn *c, PGresult **res);
/* Drain the rest of the batch; returns its first error (0 if none) and
 * resets the connection if it broke. */
int dbfs_batch_end(dbfs_conn *c);

/*
 * dbfs_batch_run -- one batch, run again while it fails with DBFS_ERETRY
 * (bounded; then -EAGAIN), and once more on a new connection when libpq
 * refused to send it (so no statement of it ran): dbfs_batch_begin,
 * fn(c, arg), dbfs_batch_end.
 * fn queues, syncs and reads the results it wants into arg, and returns 0
 * or an error of its own (what dbfs_batch_end returns comes first); since
 * it may run again, fn clears what a former attempt left in arg before it
 * queues. Returns 0, fn's error, or the batch's.
 */
int dbfs_batch_run(dbfs_conn *c, int (*fn)(dbfs_conn *c, void *arg), void *arg);

/* --- statements on either kind ------------------------------------------- */

/*
 * dbfs_exec -- run one statement (one round trip), retrying serialization
 * failures and deadlocks as dbfs_retry_wait() bounds them when it is its
 * own transaction (a worker; a session outside dbfs_txn). Inside a
 * session's transaction DBFS_ERETRY is returned for dbfs_txn to rerun it
 * whole. Returns 0 and *res (caller clears) or a negative errno with *res
 * NULL.
 */
int dbfs_exec(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p, PGresult **res);

/* --- sessions only ------------------------------------------------------- */

/* dbfs_script -- run a script (a schema file, BEGIN, COMMIT...) with the
 * simple query protocol; `name` names it in the logs. Returns 0 or an
 * errno as classified (DBFS_ERETRY too: see dbfs_txn). */
int dbfs_script(dbfs_conn *c, const char *name, const char *sql);

/*
 * dbfs_txn -- BEGIN, body(c, arg), COMMIT (ROLLBACK when body fails), all
 * of it again while it fails with DBFS_ERETRY (bounded; then -EAGAIN,
 * logged naming the transaction `what`). body must be safe to run again.
 * Returns 0, body's error, or COMMIT's.
 */
int dbfs_txn(dbfs_conn *c, const char *what, int (*body)(dbfs_conn *c, void *arg), void *arg);

/* A row of a streamed statement; nonzero stops the stream. */
typedef int (*dbfs_row_fn)(const PGresult *r, int row, void *arg);

/*
 * dbfs_stream -- run statement id in single-row mode, each row to fn as
 * the server produces it (a result of any size costs constant memory). A
 * nonzero return of fn cancels the query; the rest is drained and fn's
 * value returned. Serialization failures before the first row run it
 * again (bounded); after rows were delivered they are -EAGAIN. Returns 0,
 * fn's value, or a negative errno.
 */
int dbfs_stream(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p, dbfs_row_fn fn, void *arg);

#endif /* PGNFS_DBFS_CONN_H */
