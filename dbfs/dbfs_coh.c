/*
 * dbfs_coh.c -- a frontend among several on one file system (dbfs.h:
 * dbfs_frontend_start): its row in pgnfs_frontends and the heartbeat
 * that keeps it live, the check that `single` coherence is alone, and in
 * `shared` coherence the listening session that applies other frontends'
 * invalidations to the caches and the barrier that tells a request it has
 * seen every invalidation committed before it arrived.
 *
 * The guarantee (close-to-open across frontends). A change committed
 * anywhere queues its invalidations (schema/005_frontends.sql) in the
 * same transaction; PostgreSQL delivers notifications to a listener in
 * commit order, and a transaction that committed before another began
 * is ahead of it in that order. A request that arrives at this frontend
 * after another frontend replied to a change (so after that change
 * committed) is answered from the caches only once a *barrier* that this
 * frontend sent after the request arrived has come back on the listening
 * session: the barrier is a notification of our own, committed after the
 * change, so every invalidation of the change was delivered, and applied
 * by this thread, before the barrier was. Requests share barriers: a
 * request needs the first barrier sent after it arrived (number started+1
 * at arrival); one barrier in flight serves every request that arrived
 * before it was sent, so the cost is one short round trip on this
 * session per batch of requests, none on the workers' connections. A
 * request that misses the caches reads the database, which is fresh by
 * itself, and needs no barrier.
 *
 * Fills racing invalidations: an invalidation is applied as a cache
 * mutation (cache_stat_victim; cache_name_mut_begin around the removal),
 * so a fill whose ticket predates it, or a local writer's store that
 * overlapped it, is refused; an invalidation that comes late only drops
 * a fresh entry. Listening lost: every lookup is a miss until the session
 * is back, LISTENs again and the caches are reset (cache_lru_reset also
 * refuses older fills and stores), so nothing missed meanwhile survives.
 * The chunk buffer and small-file caches are tagged with the file's ctime
 * and answer only for the ctime the (coherent) stat cache shows; every
 * change moves ctime (pgnfs_next_ctime), so they need no invalidation.
 *
 *   thread:  connect --(shared) LISTEN, reset caches--> up
 *            up --waiters, none in flight: send barrier n--> in flight
 *            in flight --notifications: apply; own barrier n--> done = n
 *            up --session lost--> down (lookups miss) --reconnect--> up
 *            every DBFS_COH_BEAT_S: heartbeat (when no barrier is in
 *            flight), which also re-registers a row that went away
 *            up --a renewal (dbfs_renew.h), no barrier in flight--> the
 *            sessions opened anew; the listening one as after a loss,
 *            quietly (lookups miss until it LISTENs again, caches reset)
 *
 * NOTES
 *   One thread and two sessions per dbfs (listening, heartbeat), made by
 *   dbfs_frontend_start and ended by dbfs_frontend_stop (which deletes
 *   the row). The request mark
 *   (dbfs_conn_request) is thread-local: a worker serves one request at a
 *   time; a thread that never marks gets a fresh barrier per lookup.
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
#include "dbfs_conn.h"
#include "dbfs_int.h"

/* Heartbeat period, and how long a request waits for a barrier before it
 * is answered from the database instead. */
#define DBFS_COH_BEAT_S   5
#define DBFS_COH_WAIT_US  (10 * G_USEC_PER_SEC)
#define DBFS_COH_RETRY_US (1 * G_USEC_PER_SEC)
#define DBFS_COH_ADV_LOCK INT64_C(7383512019) /* registration's advisory lock */

struct dbfs_coh {
    dbfs *fs;
    /* The listening session (shared only): after LISTEN it runs nothing
     * but barriers through libpq itself, because dbfs_conn's check of an
     * idle session takes pending notifications for a closed connection
     * and reconnects, which would end the LISTEN unnoticed. */
    dbfs_conn *c;
    dbfs_conn *beat; /* registration and heartbeat */
    bool shared;
    int64_t id; /* our row */
    char *host, *address;
    unsigned port;
    GThread *thread;
    int wake_fd; /* eventfd: a barrier is wanted, or stop */
    GMutex lock;
    GCond cond;
    /* Under lock (the atomics are also read without it). */
    _Atomic uint64_t started, done; /* barriers sent, and come back */
    uint64_t wanted;                /* the highest barrier a waiter needs */
    bool inflight;                  /* a barrier sent has not come back */
    bool busy;                      /* its statement's results are not all read */
    _Atomic bool up;                /* listening, caches reset since the last loss */
    bool stop;
    bool renewed;    /* down for a renewal, not a loss: nothing to log (thread) */
    int renew_watch; /* dbfs_renew_watch's id; -1: none */
    _Atomic uint64_t calls, invalidations, barriers;
    int64_t next_beat_us;
};

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
 * that our listener skips the invalidations of its changes. A session
 * not tagged (yet) only costs our caches those entries. */
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

/* One invalidation (payload as schema/005_frontends.sql writes it). Ours
 * (tagged with our id) are skipped: the caches followed those changes
 * themselves, exactly as with one server. */
static void dbfs_coh_apply(dbfs_coh *h, const char *p)
{
    const char *at = strrchr(p, '@');
    char *end;

    if (at && at[1] && g_ascii_strtoll(at + 1, &end, 10) == h->id && *end == '\0')
        return;
    atomic_fetch_add(&h->invalidations, 1);
    if (p[0] == 'i') {
        uint64_t ino = strtoull(p + 1, &end, 10);
        if (*end == '@') {
            dbfs_cache_inval_ino(h->fs, ino);
            return;
        }
    } else if (p[0] == 'n') {
        uint64_t dir = strtoull(p + 1, &end, 10);
        if (*end == ':') {
            char name[DBFS_NAME_MAX + 1];
            size_t hex = at ? (size_t)(at - end - 1) : strlen(end + 1), len = hex / 2;
            bool bad = hex % 2 != 0 || len == 0 || len > DBFS_NAME_MAX;

            for (size_t i = 0; !bad && i < len; i++) {
                unsigned v;
                if (sscanf(end + 1 + 2 * i, "%2x", &v) != 1)
                    bad = true;
                name[i] = (char)v;
            }
            if (!bad) {
                dbfs_cache_inval_name(h->fs, dir, name, len);
                return;
            }
        }
    }
    /* '*', or anything not understood: everything. */
    dbfs_cache_inval_all(h->fs);
}

/* Read what arrived on the session: the barrier's result, notifications.
 * Returns 0, or -EAGAIN when the session is lost. */
static int dbfs_coh_read(dbfs_coh *h)
{
    PGconn *pg = h->c->pg;
    PGnotify *n;
    char mine[32];

    if (!PQconsumeInput(pg))
        return -EAGAIN;
    while (h->busy && !PQisBusy(pg)) {
        PGresult *r = PQgetResult(pg);
        if (!r) {
            h->busy = false;
            break;
        }
        if (PQresultStatus(r) != PGRES_TUPLES_OK) {
            g_warning("frontend: a barrier failed: %s", PQresultErrorMessage(r));
            PQclear(r);
            while ((r = PQgetResult(pg)) != NULL)
                PQclear(r);
            return -EAGAIN;
        }
        PQclear(r);
    }
    g_snprintf(mine, sizeof mine, "b%d:", PQbackendPID(pg));
    while ((n = PQnotifies(pg)) != NULL) {
        const char *p = n->extra ? n->extra : "";
        if (p[0] == 'b') {
            if (strncmp(p, mine, strlen(mine)) == 0) {
                uint64_t b = strtoull(p + strlen(mine), NULL, 10);
                g_mutex_lock(&h->lock);
                if (b > atomic_load(&h->done))
                    atomic_store(&h->done, b);
                if (b == atomic_load(&h->started))
                    h->inflight = false;
                g_cond_broadcast(&h->cond);
                g_mutex_unlock(&h->lock);
            }
        } else {
            dbfs_coh_apply(h, p);
        }
        PQfreemem(n);
    }
    return 0;
}

/* Send barrier started+1 when a waiter needs it and none is in flight. */
static int dbfs_coh_barrier(dbfs_coh *h)
{
    char payload[48];
    const char *vals[1] = {payload};
    uint64_t b;

    g_mutex_lock(&h->lock);
    if (h->inflight || h->busy || h->wanted <= atomic_load(&h->done)) {
        g_mutex_unlock(&h->lock);
        return 0;
    }
    b = atomic_fetch_add(&h->started, 1) + 1;
    h->inflight = true;
    h->busy = true;
    g_mutex_unlock(&h->lock);
    g_snprintf(payload, sizeof payload, "b%d:%" PRIu64, PQbackendPID(h->c->pg), b);
    atomic_fetch_add(&h->barriers, 1);
    if (!PQsendQueryParams(h->c->pg, dbfs_stmts[DBFS_ST_COH_BARRIER].sql, 1, NULL, vals, NULL, NULL,
                           0))
        return -EAGAIN;
    return 0;
}

/* The session is lost: lookups miss, waiters are told. */
static void dbfs_coh_down(dbfs_coh *h)
{
    g_mutex_lock(&h->lock);
    if (atomic_load(&h->up))
        g_warning("frontend: lost the database session that carries cache invalidations: "
                  "the caches are bypassed until it is back");
    atomic_store(&h->up, false);
    h->inflight = false;
    h->busy = false;
    g_cond_broadcast(&h->cond);
    g_mutex_unlock(&h->lock);
}

/* Connect (again), LISTEN (shared), reset the caches. Returns 0 or an
 * errno. */
static int dbfs_coh_connect(dbfs_coh *h)
{
    int rc;

    if (h->shared) {
        rc = dbfs_script(h->c, "pgnfs_coh_listen", dbfs_sql_coh_listen);
        if (rc != 0)
            rc = dbfs_script(h->c, "pgnfs_coh_listen", dbfs_sql_coh_listen);
        if (rc != 0)
            return rc;
        /* Nothing read before now may survive: whatever changed while we
         * were not listening is gone from the caches. */
        dbfs_cache_inval_all(h->fs);
    }
    g_mutex_lock(&h->lock);
    if (!atomic_load(&h->up) && h->next_beat_us && !h->renewed)
        g_message("frontend: the database session that carries cache invalidations is back");
    h->renewed = false;
    atomic_store(&h->up, true);
    g_cond_broadcast(&h->cond);
    g_mutex_unlock(&h->lock);
    return 0;
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
    rc = dbfs_exec(h->beat, DBFS_ST_FRONT_INSERT, &p, &r);
    if (rc == 0)
        h->id = dbfs_get_i8(r, 0, 0);
    PQclear(r);
    return rc;
}

/* The heartbeat: our figures, and a row that went away comes back.
 * Returns 0 or an errno (tried again at the next beat). */
static int dbfs_coh_beat(dbfs_coh *h)
{
    dbfs_cache_figures f[DBFS_CACHES_MAX];
    uint64_t v[5] = {0};
    unsigned n = dbfs_cache_stats(h->fs, f, DBFS_CACHES_MAX);
    dbfs_wb_stats wb;
    dbfs_params p;
    PGresult *r = NULL;
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
    rc = dbfs_exec(h->beat, DBFS_ST_FRONT_BEAT, &p, &r);
    if (rc == 0 && PQntuples(r) == 0) {
        g_warning("frontend: this server's row in pgnfs_frontends was gone (taken for a dead "
                  "server's?): registering again");
        rc = dbfs_coh_insert(h);
    }
    PQclear(r);
    return rc;
}

/* dbfs's renewal watcher (dbfs_renew.h): wake the thread. */
static void dbfs_coh_renew_wake(void *arg)
{
    dbfs_coh_wake(arg);
}

/* A renewal is due: the heartbeat session is opened anew at once; the
 * listening one between barriers, as after a loss but quietly (lookups
 * miss until the loop has it LISTEN again and has reset the caches,
 * since invalidations sent meanwhile reach no one). */
static void dbfs_coh_renew(dbfs_coh *h)
{
    bool idle;

    dbfs_conn_tend(h->beat);
    if (!h->shared || !atomic_load(&h->up) || !dbfs_renew_due(h->c))
        return;
    g_mutex_lock(&h->lock);
    idle = !h->inflight && !h->busy;
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
        dbfs_coh_renew(h);
        if (h->shared && !atomic_load(&h->up) && dbfs_coh_connect(h) != 0) {
            pfd[0] = (struct pollfd){.fd = h->wake_fd, .events = POLLIN};
            poll(pfd, 1, (int)(DBFS_COH_RETRY_US / 1000));
            continue;
        }
        if (now >= h->next_beat_us) {
            h->next_beat_us = now + DBFS_COH_BEAT_S * G_USEC_PER_SEC;
            dbfs_coh_beat(h);
        }
        /* Read first: a barrier that came back frees the way for the next
         * one, which must go out before we sleep (its waiters' wake-up may
         * have been taken already). */
        if (h->shared && (dbfs_coh_read(h) != 0 || dbfs_coh_barrier(h) != 0)) {
            dbfs_coh_down(h);
            continue;
        }
        pfd[0] = (struct pollfd){.fd = h->wake_fd, .events = POLLIN};
        if (h->shared) {
            pfd[1] = (struct pollfd){.fd = PQsocket(h->c->pg), .events = POLLIN};
            nfd = 2;
        }
        wait_us = h->next_beat_us - g_get_monotonic_time();
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
        /* A server of this host whose process is gone (killed, its
         * session not ended yet), or whose process id is ours now: dead,
         * whatever its row says. */
        if (strcmp(PQgetvalue(r, i, 1), h->host) == 0 && pid > 0 &&
            (pid == getpid() || (kill(pid, 0) != 0 && errno == ESRCH))) {
            dbfs_params d;
            PGresult *dr = NULL;
            dbfs_params_init(&d);
            dbfs_param_i8(&d, dbfs_get_i8(r, i, 0));
            rc = dbfs_exec(h->beat, DBFS_ST_FRONT_DELETE, &d, &dr);
            PQclear(dr);
            continue;
        }
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
    if (rc == 0)
        rc = dbfs_coh_insert(g->h);
    return rc;
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
              h->shared ? "shared: caches follow every frontend's changes" : "single");
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
    out->up = atomic_load(&h->up);
    out->invalidations = atomic_load(&h->invalidations);
    out->barriers = atomic_load(&h->barriers);
    out->calls = atomic_load(&h->calls);
}
