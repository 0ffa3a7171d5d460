/*
 * dbfs_lock_watch.c -- a server's own connection for the lock manager's
 * server-wide work (dbfs_lock_watch, dbfs.h): it LISTENs on pgnfs_nlm,
 * where the transactions of other servers announce the blocked requests
 * they granted for this one (payload: the server's id), and it runs the
 * server-wide lock calls (start, grace end, take, garbage collection,
 * counts) for the one thread that owns it.
 *
 *   open --session, LISTEN--> listening
 *   listening --drain: notifications read--> listening
 *   listening --connection lost--> broken --drain: reconnect, LISTEN
 *                                             (*mine: something may have
 *                                             been missed)--> listening
 *   listening --a new server session (a reset by any statement, or a
 *              renewal, dbfs_renew.h)--> drain: LISTEN again (*mine)
 *
 * NOTES
 *   A session (dbfs_conn.h), used by one thread. Notifications that
 *   arrive while a statement runs on it wait inside libpq: drain reads
 *   those too, so the owner drains after its own calls, not only when
 *   the socket is readable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_locks.h"
#include "dbfs_conn.h"
#include "dbfs_int.h"

/* The channel, as DBFS_ST_NLM_LISTEN names it. */
#define DBFS_WATCH_CHANNEL "pgnfs_nlm"

struct dbfs_lock_watch {
    dbfs_conn *c;
    uint64_t listened; /* the connection's generation that LISTENs */
};

static int dbfs_watch_listen(dbfs_lock_watch *w)
{
    int rc =
        dbfs_script(w->c, dbfs_stmts[DBFS_ST_NLM_LISTEN].name, dbfs_stmts[DBFS_ST_NLM_LISTEN].sql);

    if (rc == 0)
        w->listened = dbfs_conn_generation(w->c);
    return rc;
}

/* dbfs_lock_watch_open -- see dbfs.h. One round trip after connecting. */
int dbfs_lock_watch_open(dbfs *fs, dbfs_lock_watch **out)
{
    dbfs_lock_watch *w = calloc(1, sizeof *w);
    int rc;

    *out = NULL;
    if (!w)
        return -ENOMEM;
    rc = dbfs_session_open(fs->conninfo, "pgnfs-nlm", &w->c);
    if (rc == 0) {
        dbfs_renew_join(fs, w->c);
        rc = dbfs_watch_listen(w);
    }
    if (rc != 0) {
        dbfs_lock_watch_close(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* dbfs_lock_watch_close -- close w's connection and free it (NULL is fine). */
void dbfs_lock_watch_close(dbfs_lock_watch *w)
{
    if (!w)
        return;
    dbfs_conn_close(w->c);
    free(w);
}

/* dbfs_lock_watch_conn -- see dbfs.h. */
dbfs_conn *dbfs_lock_watch_conn(dbfs_lock_watch *w)
{
    return w->c;
}

/* dbfs_lock_watch_fd -- see dbfs.h. */
int dbfs_lock_watch_fd(const dbfs_lock_watch *w)
{
    return PQstatus(w->c->pg) == CONNECTION_OK ? PQsocket(w->c->pg) : -1;
}

/* dbfs_lock_watch_drain -- see dbfs.h. A broken connection is made again
 * (the next statement resets a session) and LISTENs again, as does one
 * that got a new server session since it LISTENed; a renewal due is done
 * first. */
int dbfs_lock_watch_drain(dbfs_lock_watch *w, int32_t srv, bool *mine)
{
    PGnotify *n;
    char want[16];

    *mine = false;
    dbfs_conn_tend(w->c);
    if (PQstatus(w->c->pg) != CONNECTION_OK || !PQconsumeInput(w->c->pg) ||
        dbfs_conn_generation(w->c) != w->listened) {
        *mine = true;
        return dbfs_watch_listen(w) == 0 ? 0 : -EAGAIN;
    }
    g_snprintf(want, sizeof want, "%d", (int)srv);
    while ((n = PQnotifies(w->c->pg)) != NULL) {
        if (strcmp(n->relname, DBFS_WATCH_CHANNEL) == 0 && n->extra && strcmp(n->extra, want) == 0)
            *mine = true;
        PQfreemem(n);
    }
    return 0;
}
