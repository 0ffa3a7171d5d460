/*
 * dbfs_coh.c -- a frontend among several on one file system (dbfs.h:
 * dbfs_frontend_start): its row in pgnfs_frontends and the heartbeat
 * that keeps it live, the check that `single` coherence is alone, and in
 * `shared` coherence the reading session that applies the invalidation
 * log (dbfs_coh_log.c) to the caches and the barrier that tells a request
 * it has seen every change committed before it arrived.
 *
 * The guarantee (close-to-open across frontends). A change committed
 * anywhere writes its invalidations into pgnfs_inval_log in the same
 * transaction (schema/010_inval_log.sql), so they become visible exactly
 * when the change does. Another frontend replied to the change only after
 * its commit was visible (PostgreSQL ends a commit's visibility step
 * before it reports the commit). A request that arrives here after that
 * reply is answered from the caches only once a *barrier* has passed: a
 * read of the log sent after the request arrived, hence under a snapshot
 * taken after the change became visible, which therefore returns the
 * change's rows (or returned them to an earlier read), and whose rows
 * this thread applied before it let the request go on. Requests share
 * barriers: a request needs the first read sent after it arrived (number
 * started+1 at arrival); one read in flight serves every request that
 * arrived before it was sent, so the cost is one short read-only round
 * trip on this session per batch of requests, none on the workers'
 * connections, and nothing at all on the changing transactions' commits
 * (a notification would serialise them: see schema/010). A request that
 * misses the caches reads the database, which is fresh by itself, and
 * needs no barrier.
 *
 * Solo. A shared frontend that registers while no other is live answers
 * from its caches without barriers, exactly as in single mode (its
 * caches follow its own changes; the triggers are off), while its
 * heartbeat is younger than DBFS_COH_SOLO_US. A frontend that joins
 * (registration, under the advisory lock, turns the triggers on) wakes it
 * (pgnfs_join) and does not serve until every solo row has gone (its
 * server now reads the log: it read a snapshot, reset its caches, then
 * cleared solo) or has a heartbeat older than DBFS_FRONTEND_STALE_S,
 * twice the solo limit, by which time that server has stopped answering
 * from its caches. So no change of the newcomer can commit before the
 * solo frontend reads the log from a snapshot taken before it. A frontend
 * that left solo stays out of it until it restarts.
 *
 * Fills racing invalidations: an invalidation is applied as a cache
 * mutation (cache_stat_victim; cache_name_mut_begin around the removal),
 * so a fill whose ticket predates it, or a local writer's store that
 * overlapped it, is refused; an invalidation that comes late only drops
 * a fresh entry. Session lost, or the log trimmed past us: every lookup
 * is a miss until a read under a new snapshot is back and the caches are
 * reset (cache_lru_reset also refuses older fills and stores), so nothing
 * missed meanwhile survives. The chunk buffer and small-file caches are
 * tagged with the file's ctime and answer only for the ctime the
 * (coherent) stat cache shows; every change moves ctime
 * (pgnfs_next_ctime), so they need no invalidation.
 *
 *   thread:  connect --(shared) LISTEN, (not solo) read a snapshot,
 *            reset caches--> up
 *            up --waiters (or DBFS_COH_READ_US idle), none in flight:
 *                 send read n--> in flight --result: apply, done = n--> up
 *            up --session lost--> down (lookups miss) --reconnect--> up
 *            solo --join notification, or a heartbeat that sees a reader
 *                 --> down, not solo --connect--> up --ack (solo = false)
 *            every DBFS_COH_BEAT_S: heartbeat (with our horizon), which
 *            also re-registers a row that went away; then trim the log
 *            up --a renewal (dbfs_renew.h), no read in flight--> the
 *            sessions opened anew; the reading one as after a loss,
 *            quietly (lookups miss until it reads a snapshot again)
 *
 * NOTES
 *   One thread and two sessions per dbfs (reading, heartbeat), made by
 *   dbfs_frontend_start and ended by dbfs_frontend_stop (which deletes
 *   the row). The request mark (dbfs_conn_request) is thread-local: a
 *   worker serves one request at a time; a thread that never marks gets
 *   a fresh barrier per lookup.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <glib.h>

#include "dbfs_cache.h"
#include "dbfs_coh.h"

/* Heartbeat period; how long a request waits for a barrier before it is
 * answered from the database instead; how often an idle reader reads the
 * log anyway (so that its horizon moves and the log can be trimmed). */
#define DBFS_COH_BEAT_S   5
#define DBFS_COH_WAIT_US  (10 * G_USEC_PER_SEC)
#define DBFS_COH_RETRY_US (1 * G_USEC_PER_SEC)
#define DBFS_COH_READ_US  (1 * G_USEC_PER_SEC)
/* A solo frontend answers from its caches only while its last heartbeat
 * is younger than this (half the staleness limit: see above). */
#define DBFS_COH_SOLO_US  ((int64_t)DBFS_FRONTEND_STALE_S * G_USEC_PER_SEC / 2)
#define DBFS_COH_ADV_LOCK INT64_C(7383512019) /* registration's advisory lock */

/* The request this thread serves: which file system, which barrier. */
static _Thread_local const dbfs *dbfs_coh_req_fs;
static _Thread_local uint64_t dbfs_coh_req_need;

static void dbfs_coh_wake(dbfs_coh *h)
{
    uint64_t one = 1;

    if (write(h->wake_fd, &one, sizeof one) < 0) {
        /* the counter is full: the thread is woken anyway */
    }
}

/* dbfs_coh_fresh -- the caches' hook (dbfs_int.h): may a lookup be
 * answered from the caches? Waits for the barrier the request needs. */
static bool dbfs_coh_fresh(dbfs_coh *h)
{
    uint64_t need;
    int64_t until;
    bool ok;

    if (atomic_load(&h->solo))
        return g_get_monotonic_time() - atomic_load(&h->beat_ok_us) < DBFS_COH_SOLO_US;
    if (!atomic_load(&h->up))
        return false;
    need = dbfs_coh_req_fs == h->fs && dbfs_coh_req_need ? dbfs_coh_req_need
                                                         : atomic_load(&h->started) + 1;
    if (atomic_load(&h->done) >= need)
        return true;
    until = g_get_monotonic_time() + DBFS_COH_WAIT_US;
    g_mutex_lock(&h->lock);
    if (h->wanted < need) {
        h->wanted = need;
        dbfs_coh_wake(h);
    }
    while (atomic_load(&h->up) && atomic_load(&h->done) < need && !h->stop)
        if (!g_cond_wait_until(&h->cond, &h->lock, until))
            break;
    ok = atomic_load(&h->up) && atomic_load(&h->done) >= need;
    g_mutex_unlock(&h->lock);
    return ok;
}

/* Tag c's session with our id (one round trip, once per backend), so
 * that our reads skip the invalidations of its changes. A session not
 * tagged (yet) only costs our caches those entries. */
static void dbfs_coh_tag(dbfs_coh *h, dbfs_conn *c)
{
    char id[24];
    dbfs_params p;
    PGresult *r = NULL;
    int pid = PQstatus(c->pg) == CONNECTION_OK ? PQbackendPID(c->pg) : 0;

    if (!pid || pid == c->coh_tagged_pid)
        return;
    g_snprintf(id, sizeof id, "%" G_GINT64_FORMAT, (gint64)h->id);
    dbfs_params_init(&p);
    dbfs_param_bytes(&p, id, strlen(id));
    if (dbfs_exec(c, DBFS_ST_COH_TAG, &p, &r) == 0 && PQbackendPID(c->pg) == pid)
        c->coh_tagged_pid = pid;
    PQclear(r);
}

/* dbfs_conn_request -- see dbfs.h. */
void dbfs_conn_request(dbfs_conn *c)
{
    dbfs_coh *h = c && c->fs ? c->fs->coh : NULL;

    if (!h)
        return;
    atomic_fetch_add(&h->calls, 1);
    if (!h->shared)
        return;
    dbfs_coh_tag(h, c);
    dbfs_coh_req_fs = c->fs;
    dbfs_coh_req_need = atomic_load(&h->started) + 1;
}

/* A read came back: apply it, and let its waiters go. Returns 0 or an
 * errno (the session is then taken as lost). */
static int dbfs_coh_done(dbfs_coh *h, const PGresult *r)
{
    int rc = PQresultStatus(r) == PGRES_TUPLES_OK ? dbfs_coh_log_apply(h, r) : -EAGAIN;

    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        g_warning("frontend: a read of the invalidation log failed: %s", PQresultErrorMessage(r));
    if (rc != 0)
        return rc;
    g_mutex_lock(&h->lock);
    atomic_store(&h->done, atomic_load(&h->started));
    h->inflight = false;
    g_cond_broadcast(&h->cond);
    g_mutex_unlock(&h->lock);
    return 0;
}

/* Read what arrived on the session: a read's result, notifications.
 * Returns 0, or -EAGAIN when the session is lost. */
static int dbfs_coh_read(dbfs_coh *h)
{
    PGconn *pg = h->c->pg;
    PGnotify *n;
    int rc = 0;

    if (!PQconsumeInput(pg))
        return -EAGAIN;
    while (h->inflight && !PQisBusy(pg)) {
        PGresult *r = PQgetResult(pg), *end;
        if (!r)
            return -EAGAIN; /* a result must come before the end */
        rc = dbfs_coh_done(h, r);
        PQclear(r);
        while ((end = PQgetResult(pg)) != NULL)
            PQclear(end);
        if (rc != 0)
            return rc;
    }
    while ((n = PQnotifies(pg)) != NULL) {
        /* pgnfs_join: another server joins and waits for the solo one. */
        if (atomic_load(&h->solo))
            h->leave_solo = true;
        PQfreemem(n);
    }
    return 0;
}

/* Send read started+1 when a waiter needs it, or the idle period is
 * over, and none is in flight. */
static int dbfs_coh_send(dbfs_coh *h)
{
    int64_t now = g_get_monotonic_time();

    g_mutex_lock(&h->lock);
    if (h->inflight || (h->wanted <= atomic_load(&h->done) && now < h->next_read_us)) {
        g_mutex_unlock(&h->lock);
        return 0;
    }
    atomic_fetch_add(&h->started, 1);
    h->inflight = true;
    g_mutex_unlock(&h->lock);
    h->next_read_us = now + DBFS_COH_READ_US;
    atomic_fetch_add(&h->barriers, 1);
    return dbfs_coh_log_send(h);
}

/* The session is lost: lookups miss, waiters are told. */
static void dbfs_coh_down(dbfs_coh *h)
{
    g_mutex_lock(&h->lock);
    if (atomic_load(&h->up) && !atomic_load(&h->solo))
        g_warning("frontend: lost the database session that reads cache invalidations: "
                  "the caches are bypassed until it is back");
    atomic_store(&h->up, false);
    h->inflight = false;
    g_cond_broadcast(&h->cond);
    g_mutex_unlock(&h->lock);
    dbfs_coh_log_forget(h);
}

/* Connect (again) and LISTEN; not solo: read a snapshot of the log and
 * reset the caches after it. Returns 0 or an errno. */
static int dbfs_coh_connect(dbfs_coh *h)
{
    PGresult *r = NULL;
    int rc;

    if (h->shared) {
        rc = dbfs_script(h->c, "pgnfs_coh_listen", dbfs_sql_coh_listen);
        if (rc != 0)
            rc = dbfs_script(h->c, "pgnfs_coh_listen", dbfs_sql_coh_listen);
        if (rc == 0)
            rc = dbfs_coh_log_prepare(h);
        if (rc == 0 && !atomic_load(&h->solo)) {
            /* Nothing read before this snapshot may survive: whatever
             * changed while we were not reading is gone from the caches. */
            dbfs_coh_log_forget(h);
            rc = dbfs_coh_log_send(h);
            while (rc == 0 && (r = PQgetResult(h->c->pg)) != NULL) {
                if (PQresultStatus(r) != PGRES_TUPLES_OK || dbfs_coh_log_apply(h, r) != 0)
                    rc = -EAGAIN;
                PQclear(r);
            }
            if (rc == 0 && !h->snap.valid)
                rc = -EAGAIN;
        }
        if (rc != 0)
            return rc;
    }
    g_mutex_lock(&h->lock);
    if (!atomic_load(&h->up) && h->next_beat_us && !h->ack_pending && !h->renewed)
        g_message("frontend: the database session that reads cache invalidations is back");
    h->renewed = false;
    atomic_store(&h->up, true);
    g_cond_broadcast(&h->cond);
    g_mutex_unlock(&h->lock);
    return 0;
}

/* Another server joined: read the log from now on (connect does the
 * snapshot and the reset), then say so in our row. */
static void dbfs_coh_leave_solo(dbfs_coh *h)
{
    h->leave_solo = false;
    if (!atomic_load(&h->solo))
        return;
    g_message("frontend: another server joined the file system: this one reads the "
              "invalidation log from now on");
    dbfs_coh_down(h);
    atomic_store(&h->solo, false);
    h->ack_pending = true;
}

/* Tell the joiners that we read the log (after the first read). */
static void dbfs_coh_ack(dbfs_coh *h)
{
    char hz[24];
    const char *horizon = dbfs_coh_log_horizon(h, hz, sizeof hz);
    dbfs_params p;
    PGresult *r = NULL;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, h->id);
    if (horizon)
        dbfs_param_bytes(&p, horizon, strlen(horizon));
    else
        dbfs_param_null(&p);
    if (dbfs_exec(h->beat, DBFS_ST_COH_ACK, &p, &r) == 0)
        h->ack_pending = false;
    PQclear(r);
}

/* Insert our row (after removing dead ones). Returns 0 or an errno. */
static int dbfs_coh_insert(dbfs_coh *h)
{
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_bytes(&p, h->host, strlen(h->host));
    dbfs_param_bytes(&p, h->address, strlen(h->address));
    dbfs_param_i4(&p, (int32_t)h->port);
    dbfs_param_i4(&p, (int32_t)getpid());
    dbfs_param_bytes(&p, h->shared ? "shared" : "single", 6);
    dbfs_param_i8(&p, DBFS_FRONTEND_STALE_S);
    dbfs_param_bool(&p, atomic_load(&h->solo));
    dbfs_param_bytes(&p, h->pidns, strlen(h->pidns));
    rc = dbfs_exec(h->beat, DBFS_ST_FRONT_INSERT, &p, &r);
    if (rc == 0) {
        h->id = dbfs_get_i8(r, 0, 0);
        g_free(h->id_text);
        h->id_text = g_strdup_printf("%" G_GINT64_FORMAT, (gint64)h->id);
    }
    PQclear(r);
    return rc;
}

/* The heartbeat: our figures and horizon, and a row that went away comes
 * back; a solo frontend learns of readers that joined. Then (a reader)
 * the log is trimmed. Returns 0 or an errno (tried again at the next
 * beat). */
static int dbfs_coh_beat(dbfs_coh *h)
{
    dbfs_cache_figures f[DBFS_CACHES_MAX];
    uint64_t v[5] = {0};
    unsigned n = dbfs_cache_stats(h->fs, f, DBFS_CACHES_MAX);
    dbfs_wb_stats wb;
    dbfs_params p;
    PGresult *r = NULL;
    char hz[24];
    const char *horizon = atomic_load(&h->solo) ? NULL : dbfs_coh_log_horizon(h, hz, sizeof hz);
    int rc;

    for (unsigned i = 0; i < n; i++) {
        if (strcmp(f[i].name, "stat") == 0)
            v[0] = f[i].entries;
        else if (strcmp(f[i].name, "naming") == 0)
            v[1] = f[i].entries;
        else if (strcmp(f[i].name, "buffer") == 0)
            v[2] = f[i].entries;
        else if (strcmp(f[i].name, "small") == 0)
            v[3] = f[i].entries;
    }
    dbfs_wb_figures(h->fs, &wb);
    v[4] = wb.bytes;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, h->id);
    dbfs_param_i8(&p, (int64_t)atomic_load(&h->calls));
    for (unsigned i = 0; i < 5; i++)
        dbfs_param_i8(&p, (int64_t)v[i]);
    dbfs_param_i8(&p, (int64_t)atomic_load(&h->invalidations));
    if (horizon)
        dbfs_param_bytes(&p, horizon, strlen(horizon));
    else
        dbfs_param_null(&p);
    dbfs_param_i8(&p, DBFS_FRONTEND_STALE_S);
    rc = dbfs_exec(h->beat, DBFS_ST_FRONT_BEAT, &p, &r);
    if (rc == 0 && PQntuples(r) == 0) {
        g_warning("frontend: this server's row in pgnfs_frontends was gone (taken for a dead "
                  "server's?): registering again");
        rc = dbfs_coh_insert(h);
    } else if (rc == 0) {
        atomic_store(&h->beat_ok_us, g_get_monotonic_time());
        if (h->shared && atomic_load(&h->solo) && dbfs_get_i8(r, 0, 1) > 0)
            h->leave_solo = true;
    }
    PQclear(r);
    if (rc == 0 && h->shared && !atomic_load(&h->solo) && atomic_load(&h->up)) {
        dbfs_params_init(&p);
        dbfs_param_i8(&p, DBFS_FRONTEND_STALE_S);
        r = NULL;
        rc = dbfs_exec(h->beat, DBFS_ST_COH_TRIM, &p, &r);
        PQclear(r);
    }
    return rc;
}

/* dbfs's renewal watcher (dbfs_renew.h): wake the thread. */
static void dbfs_coh_renew_wake(void *arg)
{
    dbfs_coh_wake(arg);
}

/* A renewal is due: the heartbeat session is opened anew at once; the
 * reading one between log reads, as after a loss but quietly (lookups
 * miss until the loop has it read a snapshot of the log again and has
 * reset the caches). */
static void dbfs_coh_renew(dbfs_coh *h)
{
    bool idle;

    dbfs_conn_tend(h->beat);
    if (!h->shared || !atomic_load(&h->up) || !dbfs_renew_due(h->c))
        return;
    g_mutex_lock(&h->lock);
    idle = !h->inflight;
    if (idle) {
        atomic_store(&h->up, false);
        h->renewed = true;
        g_cond_broadcast(&h->cond);
    }
    g_mutex_unlock(&h->lock);
    if (idle)
        dbfs_conn_tend(h->c);
}

static void *dbfs_coh_main(void *arg)
{
    dbfs_coh *h = arg;

    for (;;) {
        struct pollfd pfd[2];
        int64_t now = g_get_monotonic_time(), wait_us;
        int nfd = 1;

        g_mutex_lock(&h->lock);
        if (h->stop) {
            g_mutex_unlock(&h->lock);
            break;
        }
        g_mutex_unlock(&h->lock);
        if (h->leave_solo)
            dbfs_coh_leave_solo(h);
        dbfs_coh_renew(h);
        if (h->shared && !atomic_load(&h->up) && dbfs_coh_connect(h) != 0) {
            dbfs_coh_log_forget(h);
            pfd[0] = (struct pollfd){.fd = h->wake_fd, .events = POLLIN};
            poll(pfd, 1, (int)(DBFS_COH_RETRY_US / 1000));
            continue;
        }
        if (h->ack_pending)
            dbfs_coh_ack(h);
        if (now >= h->next_beat_us) {
            h->next_beat_us = now + DBFS_COH_BEAT_S * G_USEC_PER_SEC;
            dbfs_coh_beat(h);
        }
        /* Read first: a read that came back frees the way for the next
         * one, which must go out before we sleep (its waiters' wake-up may
         * have been taken already). */
        if (h->shared &&
            (dbfs_coh_read(h) != 0 || (!atomic_load(&h->solo) && dbfs_coh_send(h) != 0))) {
            dbfs_coh_down(h);
            continue;
        }
        if (h->leave_solo)
            continue;
        pfd[0] = (struct pollfd){.fd = h->wake_fd, .events = POLLIN};
        if (h->shared) {
            pfd[1] = (struct pollfd){.fd = PQsocket(h->c->pg), .events = POLLIN};
            nfd = 2;
        }
        wait_us = h->next_beat_us - g_get_monotonic_time();
        if (h->shared && !atomic_load(&h->solo) && !h->inflight &&
            h->next_read_us - g_get_monotonic_time() < wait_us)
            wait_us = h->next_read_us - g_get_monotonic_time();
        if (poll(pfd, nfd, wait_us > 0 ? (int)(wait_us / 1000) + 1 : 0) > 0 &&
            (pfd[0].revents & POLLIN)) {
            uint64_t v;
            if (read(h->wake_fd, &v, sizeof v) < 0) {
                /* nothing to read after all */
            }
        }
    }
    return NULL;
}

/* Is another live frontend in the way of ours? Returns 0 and *others
 * (live shared frontends besides us), or -EBUSY with *why (g_malloc'd).
 * Runs inside the registration's transaction. */
static int dbfs_coh_check(dbfs_coh *h, char **why, unsigned *others)
{
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, DBFS_FRONTEND_STALE_S);
    rc = dbfs_exec(h->beat, DBFS_ST_FRONT_LIVE, &p, &r);
    if (rc != 0)
        return rc;
    for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
        const char *coh = PQgetvalue(r, i, 5);
        pid_t pid = (pid_t)dbfs_get_i4(r, i, 4);
        /* A server of this host and process namespace (containers on
         * one host share its name, and each has its own process 1) whose
         * process is gone (killed, its session not ended yet), or whose
         * process id is ours now: dead, whatever its row says. */
        if (strcmp(PQgetvalue(r, i, 1), h->host) == 0 && h->pidns[0] &&
            strcmp(PQgetvalue(r, i, 7), h->pidns) == 0 && pid > 0 &&
            (pid == getpid() || (kill(pid, 0) != 0 && errno == ESRCH))) {
            dbfs_params d;
            PGresult *dr = NULL;
            dbfs_params_init(&d);
            dbfs_param_i8(&d, dbfs_get_i8(r, i, 0));
            rc = dbfs_exec(h->beat, DBFS_ST_FRONT_DELETE, &d, &dr);
            PQclear(dr);
            continue;
        }
        /* Session gone: dead, unless it is solo: its server may still
         * answer from its caches without reading the log while its
         * heartbeat is fresh, so it counts as live (a shared newcomer is
         * not solo beside it, and waits for it: dbfs_coh_wait_solos). */
        if (!(PQgetlength(r, i, 8) == 1 && PQgetvalue(r, i, 8)[0]) &&
            !(PQgetlength(r, i, 9) == 1 && PQgetvalue(r, i, 9)[0]))
            continue;
        if (h->shared && strcmp(coh, "shared") == 0) {
            (*others)++;
            continue;
        }
        *why = g_strdup_printf(
            "another pgnfs server (%s, listening on %s port %d, pid %d, coherence %s, heartbeat "
            "%" G_GINT64_FORMAT " s ago) serves this file system; %s",
            PQgetvalue(r, i, 1), PQgetvalue(r, i, 2), (int)dbfs_get_i4(r, i, 3),
            (int)dbfs_get_i4(r, i, 4), coh, (gint64)dbfs_get_i8(r, i, 6),
            h->shared ? "it keeps caches that others' changes would make stale: stop it, or "
                        "restart it with --set cache.coherence=shared"
                      : "this server's caches ([cache] coherence = single) would go stale "
                        "beside it: stop the other one, or run every server with --set "
                        "cache.coherence=shared");
        rc = -EBUSY;
        break;
    }
    PQclear(r);
    return rc;
}

typedef struct {
    dbfs_coh *h;
    char **why;
} dbfs_coh_reg;

static int dbfs_coh_register_txn(dbfs_conn *c, void *arg)
{
    dbfs_coh_reg *g = arg;
    unsigned others = 0;
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, DBFS_COH_ADV_LOCK);
    rc = dbfs_exec(c, DBFS_ST_ADM_LOCK, &p, &r);
    PQclear(r);
    if (rc == 0)
        rc = dbfs_coh_check(g->h, g->why, &others);
    /* The triggers run only while two or more servers share the file
     * system: the second one to come enables them before it serves (its
     * caches are empty; the first one's transactions see them from their
     * next statement on fileatt or naming, which the ALTER's lock orders
     * after it). A server that starts alone turns them off. */
    if (rc == 0)
        rc = dbfs_script(c, "pgnfs_inval_triggers",
                         g->h->shared && others ? dbfs_sql_inval_on : dbfs_sql_inval_off);
    /* Alone: solo until another joins. Joining: wake a solo one (the
     * notification leaves at our commit). */
    atomic_store(&g->h->solo, g->h->shared && others == 0);
    if (rc == 0)
        rc = dbfs_coh_insert(g->h);
    if (rc == 0 && g->h->shared && others) {
        dbfs_params_init(&p);
        dbfs_param_bytes(&p, g->h->id_text, strlen(g->h->id_text));
        r = NULL;
        rc = dbfs_exec(c, DBFS_ST_COH_JOIN, &p, &r);
        PQclear(r);
    }
    return rc;
}

/* A joining server: wait until no solo frontend is left (each has read a
 * snapshot of the log and reset its caches, or is dead). Returns 0, or
 * -EBUSY with *why, or an errno. */
int dbfs_coh_wait_solos(dbfs_conn *c, int64_t self, char **why)
{
    int64_t start = g_get_monotonic_time();
    int64_t until = start + (int64_t)(DBFS_FRONTEND_STALE_S + 10) * G_USEC_PER_SEC;
    bool told = false;

    for (;;) {
        dbfs_params p;
        PGresult *r = NULL;
        int64_t n = 0, now;
        int rc;

        dbfs_params_init(&p);
        dbfs_param_i8(&p, self);
        dbfs_param_i8(&p, DBFS_FRONTEND_STALE_S);
        rc = dbfs_exec(c, DBFS_ST_COH_SOLOS, &p, &r);
        if (rc == 0)
            n = dbfs_get_i8(r, 0, 0);
        PQclear(r);
        if (rc != 0 || n == 0)
            return rc;
        now = g_get_monotonic_time();
        if (now > until) {
            *why = g_strdup_printf("%" G_GINT64_FORMAT " other server(s) serving this file "
                                   "system alone did not start reading the invalidation log "
                                   "within %d s (see pgnfs frontends)",
                                   (gint64)n, DBFS_FRONTEND_STALE_S + 10);
            return -EBUSY;
        }
        if (!told && now - start > 2 * G_USEC_PER_SEC) {
            g_message("frontend: waiting for the server(s) that served this file system alone "
                      "to read the invalidation log (at most %d s)",
                      DBFS_FRONTEND_STALE_S + 10);
            told = true;
        }
        g_usleep(20 * 1000);
    }
}

static void dbfs_coh_free(dbfs_coh *h)
{
    if (!h)
        return;
    dbfs_conn_close(h->c);
    dbfs_conn_close(h->beat);
    if (h->wake_fd >= 0)
        close(h->wake_fd);
    g_mutex_clear(&h->lock);
    g_cond_clear(&h->cond);
    g_free(h->host);
    g_free(h->address);
    g_free(h->id_text);
    g_array_free(h->snap.xip, TRUE);
    free(h);
}

/* dbfs_frontend_start -- see dbfs.h. */
int dbfs_frontend_start(dbfs *fs, const dbfs_frontend_self *self, char **why)
{
    dbfs_coh *h = calloc(1, sizeof *h);
    dbfs_coh_reg g = {.h = h, .why = why};
    int rc;

    *why = NULL;
    if (!h)
        return -ENOMEM;
    g_mutex_init(&h->lock);
    g_cond_init(&h->cond);
    h->fs = fs;
    h->shared = self->shared;
    h->host = g_strdup(self->host ? self->host : g_get_host_name());
    h->address = g_strdup(self->address ? self->address : "");
    h->port = self->port;
    h->snap.xip = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    ssize_t ns = readlink("/proc/self/ns/pid", h->pidns, sizeof h->pidns - 1);
    h->pidns[ns > 0 ? ns : 0] = '\0';
    atomic_store(&h->beat_ok_us, g_get_monotonic_time());
    h->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    h->renew_watch = -1;
    rc = h->wake_fd < 0 ? -errno : dbfs_session_open(fs->conninfo, "pgnfs-frontend", &h->beat);
    if (rc == 0)
        dbfs_renew_join(fs, h->beat);
    if (rc == 0 && h->shared)
        rc = dbfs_session_open(fs->conninfo, "pgnfs-frontend-listen", &h->c);
    if (rc == 0 && h->shared)
        dbfs_renew_join(fs, h->c);
    if (rc == 0)
        rc = dbfs_txn(h->beat, "frontend registration", dbfs_coh_register_txn, &g);
    if (rc == 0 && h->shared && !atomic_load(&h->solo))
        rc = dbfs_coh_wait_solos(h->beat, h->id, why);
    if (rc == 0)
        rc = dbfs_coh_connect(h);
    if (rc != 0) {
        if (rc != -EBUSY && !*why)
            *why = g_strdup_printf("cannot register in pgnfs_frontends: %s", g_strerror(-rc));
        dbfs_coh_free(h);
        return rc;
    }
    h->next_beat_us = g_get_monotonic_time() + DBFS_COH_BEAT_S * G_USEC_PER_SEC;
    fs->coh = h;
    if (h->shared)
        fs->coh_fresh = dbfs_coh_fresh;
    h->thread = g_thread_new("pgnfs-frontend", dbfs_coh_main, h);
    h->renew_watch = dbfs_renew_watch(fs, dbfs_coh_renew_wake, h);
    g_message("frontend %" G_GINT64_FORMAT " registered (coherence %s)", (gint64)h->id,
              !h->shared              ? "single"
              : atomic_load(&h->solo) ? "shared, alone for now: caches as in single mode"
                                      : "shared: caches follow every frontend's changes");
    return 0;
}

/* dbfs_frontend_stop -- see dbfs.h. */
void dbfs_frontend_stop(dbfs *fs)
{
    dbfs_coh *h = fs ? fs->coh : NULL;
    dbfs_params p;
    PGresult *r = NULL;

    if (!h)
        return;
    dbfs_renew_unwatch(fs, h->renew_watch);
    g_mutex_lock(&h->lock);
    h->stop = true;
    g_cond_broadcast(&h->cond);
    g_mutex_unlock(&h->lock);
    dbfs_coh_wake(h);
    g_thread_join(h->thread);
    fs->coh_fresh = NULL;
    fs->coh = NULL;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, h->id);
    if (dbfs_exec(h->beat, DBFS_ST_FRONT_DELETE, &p, &r) == 0)
        g_info("frontend %" G_GINT64_FORMAT " unregistered", (gint64)h->id);
    PQclear(r);
    dbfs_coh_free(h);
}

/* dbfs_frontend_id -- see dbfs.h. */
int64_t dbfs_frontend_id(const dbfs *fs)
{
    return fs && fs->coh ? fs->coh->id : 0;
}

/* dbfs_frontend_figures -- see dbfs.h. */
void dbfs_frontend_figures(const dbfs *fs, dbfs_frontend_stats *out)
{
    const dbfs_coh *h = fs ? fs->coh : NULL;

    memset(out, 0, sizeof *out);
    if (!h)
        return;
    out->registered = true;
    out->shared = h->shared;
    out->id = h->id;
    out->solo = atomic_load(&h->solo);
    out->up = atomic_load(&h->up) || out->solo;
    out->resets = atomic_load(&h->resets);
    out->invalidations = atomic_load(&h->invalidations);
    out->barriers = atomic_load(&h->barriers);
    out->calls = atomic_load(&h->calls);
}
