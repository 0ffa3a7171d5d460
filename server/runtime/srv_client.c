/*
 * srv_client.c -- the outgoing RPC client (srv_client.h): submit and its
 * limits, the client's thread and its event loop, the timers, and the end
 * of every call (srv_client_call.c). See srv_client_int.h for a call's
 * states.
 *
 *   The thread:
 *
 *     RUNNING: take the inbox (srv_client_start) --> route calls whose
 *              port became known --> fire due timers (timeouts, UDP
 *              retransmissions) --> close idle destinations --> epoll_wait
 *              until the next timer --> socket events (srv_cdest_event)
 *              --> free the destinations closed in the batch
 *        | srv_client_free sets stopping and wakes it
 *        v
 *     STOPPING: every call (inbox included) finishes with -ECANCELED,
 *              every destination closes --> the thread returns
 *
 * NOTES
 *   Limits are counted at submit, under the lock, and given back in
 *   srv_client_finish just before done runs, so a done may submit the
 *   next call into the room its own call leaves. Internal calls (the
 *   portmapper lookups) are not counted: there is at most one per
 *   (host, transport, program, version) with calls waiting on it.
 *
 *   xids: a random start, then one more per call, under the lock.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <glib.h>

#include "srv_client_int.h"

#define SRV_CLIENT_EVENTS    64
#define SRV_CLIENT_MIN_REPLY 1024u

/* Fire every timer due at now: timeouts, then UDP retransmissions. */
static void srv_client_timers(srv_client *c, int64_t now)
{
    for (;;) {
        GSequenceIter *it = g_sequence_get_begin_iter(c->timers);
        if (g_sequence_iter_is_end(it))
            return;
        srv_ccall *call = g_sequence_get(it);
        if (srv_ccall_when(call) > now)
            return;
        if (call->deadline <= now) {
            srv_client_finish(c, call, -ETIMEDOUT, NULL);
            continue;
        }
        call->rto_ms = MIN(call->rto_ms * 2, SRV_CLIENT_RTO_MAX_MS);
        call->retrans_at = now + (int64_t)call->rto_ms * SRV_CLIENT_US_PER_MS;
        srv_client_retime(c, call);
        srv_cdest_retransmit(c, call); /* may finish it */
    }
}

/* ---- starting a call ------------------------------------------------------- */

/* call, taken from the inbox: timers, xid, then its port (resolve) or its
 * destination (route; deferred to the ready queue when defer). */
static void srv_client_start(srv_client *c, srv_ccall *call, bool defer)
{
    srv_client_begin(c, call);
    if (srv_client_port_of(&call->addr) == 0) {
        srv_cpmap_resolve(c, call);
    } else if (defer) {
        call->state = SRV_CCALL_READY;
        g_queue_push_tail_link(&c->ready, &call->link);
    } else {
        srv_cdest_route(c, call);
    }
}

/* Is sa an address we can send to? */
static bool srv_client_addr_ok(const struct sockaddr *sa, socklen_t len)
{
    if (!sa)
        return false;
    if (sa->sa_family == AF_INET)
        return len >= sizeof(struct sockaddr_in) && len <= sizeof(struct sockaddr_storage);
    if (sa->sa_family == AF_INET6)
        return len >= sizeof(struct sockaddr_in6) && len <= sizeof(struct sockaddr_storage);
    return false;
}

/* Take a place under the limits for a call to host; its xid, or -EBUSY/-ECANCELED. */
static int64_t srv_client_count(srv_client *c, const srv_ckey *host)
{
    int64_t rc;

    g_mutex_lock(&c->lock);
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(c->per_host, host));
    if (c->stopping) {
        rc = -ECANCELED;
    } else if (c->pending >= c->o.max_pending || n >= c->o.max_per_host) {
        atomic_fetch_add(&c->n.busy, 1);
        rc = -EBUSY;
    } else {
        c->pending++;
        g_hash_table_insert(c->per_host, g_memdup2(host, sizeof *host), GUINT_TO_POINTER(n + 1));
        rc = c->next_xid++;
    }
    g_mutex_unlock(&c->lock);
    return rc;
}

int srv_client_submit(srv_client *c, const srv_client_call *call, srv_client_done done, void *arg)
{
    if (!c || !call || !done || !srv_client_addr_ok(call->addr, call->addrlen) ||
        (call->res_xdr && call->res_size == 0))
        return -EINVAL;
    srv_ccall *k = srv_ccall_new(c, call, done, arg);
    int64_t xid = srv_client_count(c, &k->host);
    if (xid < 0) {
        g_free(k);
        return (int)xid;
    }
    k->xid = (uint32_t)xid;
    int rc = srv_client_encode(call, k->xid, &k->rec, &k->len);
    if (rc == 0) {
        g_mutex_lock(&c->lock);
        if (c->stopping)
            rc = -ECANCELED;
        else
            g_queue_push_tail_link(&c->inbox, &k->link);
        g_mutex_unlock(&c->lock);
    }
    if (rc != 0) {
        srv_client_uncount(c, &k->host);
        g_free(k->rec);
        g_free(k);
        return rc;
    }
    atomic_fetch_add(&c->n.calls, 1);
    uint64_t one = 1;
    if (write(c->wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
        g_warning("srv_client: cannot wake the client's thread: %s", g_strerror(errno));
    return 0;
}

/* ---- the thread ------------------------------------------------------------ */

/* Take what submit queued; true while the client runs. */
static bool srv_client_take_inbox(srv_client *c)
{
    GQueue in = G_QUEUE_INIT;
    bool stopping;

    g_mutex_lock(&c->lock);
    in = c->inbox;
    g_queue_init(&c->inbox);
    stopping = c->stopping;
    g_mutex_unlock(&c->lock);
    for (GList *l; (l = g_queue_peek_head_link(&in)) != NULL;) {
        srv_ccall *call = l->data;
        g_queue_unlink(&in, l);
        if (stopping)
            srv_client_finish(c, call, -ECANCELED, NULL);
        else
            srv_client_start(c, call, false);
    }
    return !stopping;
}

/* Route the calls whose port became known, or whose connection was lost. */
static void srv_client_route_ready(srv_client *c)
{
    for (GList *l; (l = g_queue_peek_head_link(&c->ready)) != NULL;) {
        srv_ccall *call = l->data;
        g_queue_unlink(&c->ready, l);
        call->state = SRV_CCALL_LOOSE;
        srv_cdest_route(c, call);
    }
}

/* Milliseconds epoll may wait at now: until the next timer or idle scan. */
static int srv_client_wait_ms(srv_client *c, int64_t now)
{
    int64_t next = c->next_idle_scan;
    GSequenceIter *it = g_sequence_get_begin_iter(c->timers);

    if (c->ready.length)
        return 0;
    if (!g_sequence_iter_is_end(it)) {
        int64_t w = srv_ccall_when(g_sequence_get(it));
        if (next == 0 || w < next)
            next = w;
    }
    if (next == 0)
        return -1;
    if (next <= now)
        return 0;
    int64_t ms = (next - now + SRV_CLIENT_US_PER_MS - 1) / SRV_CLIENT_US_PER_MS;
    return ms > G_MAXINT ? G_MAXINT : (int)ms;
}

/* One batch of socket events. */
static void srv_client_events(srv_client *c, int timeout_ms)
{
    struct epoll_event ev[SRV_CLIENT_EVENTS];
    int n = epoll_wait(c->epfd, ev, SRV_CLIENT_EVENTS, timeout_ms);

    if (n < 0 && errno != EINTR)
        g_warning("srv_client: epoll_wait: %s", g_strerror(errno));
    for (int i = 0; i < n; i++) {
        if (ev[i].data.ptr == c) {
            uint64_t v;
            while (read(c->wake_fd, &v, sizeof v) > 0)
                ;
            continue;
        }
        srv_cdest *d = ev[i].data.ptr;
        if (!d->dead)
            srv_cdest_event(c, d, ev[i].events);
    }
    for (GList *l; (l = g_queue_pop_head_link(&c->graveyard)) != NULL;) {
        srv_cdest_free(l->data);
        g_list_free_1(l);
    }
}

/* Cancel every call and close every destination. */
static void srv_client_stop(srv_client *c)
{
    GHashTableIter it;
    gpointer d;

    for (GList *l; (l = g_queue_peek_head_link(&c->calls)) != NULL;)
        srv_client_finish(c, l->data, -ECANCELED, NULL);
    g_hash_table_iter_init(&it, c->dests);
    while (g_hash_table_iter_next(&it, NULL, &d)) {
        g_hash_table_iter_steal(&it);
        srv_cdest_close(c, d, -ECANCELED);
    }
    for (GList *l; (l = g_queue_pop_head_link(&c->graveyard)) != NULL;) {
        srv_cdest_free(l->data);
        g_list_free_1(l);
    }
}

static gpointer srv_client_main(gpointer p)
{
    srv_client *c = p;

    while (srv_client_take_inbox(c)) {
        srv_client_route_ready(c);
        int64_t now = g_get_monotonic_time();
        srv_client_timers(c, now);
        if (c->next_idle_scan && c->next_idle_scan <= now)
            c->next_idle_scan = srv_cdest_idle_scan(c, now);
        srv_client_events(c, srv_client_wait_ms(c, now));
    }
    srv_client_stop(c);
    return NULL;
}

/* ---- new, free, stats ------------------------------------------------------ */

srv_client *srv_client_new(const srv_client_opts *o)
{
    srv_client *c = g_new0(srv_client, 1);

    if (o)
        c->o = *o;
    c->o.max_pending = c->o.max_pending ? c->o.max_pending : SRV_CLIENT_MAX_PENDING;
    c->o.max_per_host = c->o.max_per_host ? c->o.max_per_host : SRV_CLIENT_MAX_PER_HOST;
    c->o.pmap_port = c->o.pmap_port ? c->o.pmap_port : SRV_CLIENT_PMAP_PORT;
    c->o.max_reply =
        c->o.max_reply ? MAX(c->o.max_reply, SRV_CLIENT_MIN_REPLY) : SRV_CLIENT_MAX_REPLY;
    c->o.idle_ms = c->o.idle_ms ? c->o.idle_ms : SRV_CLIENT_IDLE_MS;
    g_mutex_init(&c->lock);
    c->per_host = g_hash_table_new_full(srv_client_key_hash, srv_client_key_equal, g_free, NULL);
    c->next_xid = g_random_int();
    c->xids = g_hash_table_new(NULL, NULL);
    c->dests = g_hash_table_new(srv_client_key_hash, srv_client_key_equal);
    c->pmaps =
        g_hash_table_new_full(srv_client_key_hash, srv_client_key_equal, NULL, srv_cpmap_free);
    c->up.dest_unlink = srv_cdest_unlink;
    c->up.pmap_unlink = srv_cpmap_unlink;
    c->up.pmap_forget = srv_cpmap_forget;
    c->timers = g_sequence_new(NULL);
    c->rbuf = g_malloc(c->o.max_reply);
    c->epfd = epoll_create1(EPOLL_CLOEXEC);
    c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
    if (c->epfd < 0 || c->wake_fd < 0 || epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->wake_fd, &e) != 0) {
        g_critical("srv_client: cannot set up the event loop: %s", g_strerror(errno));
        goto err;
    }
    /* Signals are never the client thread's: it starts with all blocked. */
    GError *error = NULL;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    c->thread = g_thread_try_new("rpc-client", srv_client_main, c, &error);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!c->thread) {
        g_critical("srv_client: cannot start its thread: %s", error->message);
        g_error_free(error);
        goto err;
    }
    return c;
err:
    srv_client_free(c);
    return NULL;
}

void srv_client_free(srv_client *c)
{
    if (!c)
        return;
    if (c->thread && g_thread_self() == c->thread) {
        g_critical("srv_client_free from the client's own thread (a done function): not freed");
        return;
    }
    g_mutex_lock(&c->lock);
    c->stopping = true;
    g_mutex_unlock(&c->lock);
    if (c->thread) {
        uint64_t one = 1;
        if (write(c->wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
            g_warning("srv_client: cannot wake the client's thread: %s", g_strerror(errno));
        g_thread_join(c->thread);
    }
    if (c->epfd >= 0)
        close(c->epfd);
    if (c->wake_fd >= 0)
        close(c->wake_fd);
    g_hash_table_destroy(c->pmaps);
    g_hash_table_destroy(c->dests);
    g_hash_table_destroy(c->xids);
    g_hash_table_destroy(c->per_host);
    g_sequence_free(c->timers);
    g_free(c->rbuf);
    g_mutex_clear(&c->lock);
    g_free(c);
}

void srv_client_stats_get(srv_client *c, srv_client_stats *out)
{
    out->calls = atomic_load(&c->n.calls);
    out->busy = atomic_load(&c->n.busy);
    out->replies = atomic_load(&c->n.replies);
    out->timeouts = atomic_load(&c->n.timeouts);
    out->retransmits = atomic_load(&c->n.retransmits);
    out->pmap_lookups = atomic_load(&c->n.pmap_lookups);
    out->connects = atomic_load(&c->n.connects);
    out->unmatched = atomic_load(&c->n.unmatched);
    out->bad_replies = atomic_load(&c->n.bad_replies);
    out->broken_streams = atomic_load(&c->n.broken_streams);
    out->dropped_oversize = atomic_load(&c->n.dropped_oversize);
    out->dests = atomic_load(&c->n.dests);
    out->pmap_cached = atomic_load(&c->n.pmap_cached);
    g_mutex_lock(&c->lock);
    out->pending = c->pending;
    g_mutex_unlock(&c->lock);
}

/* ---- waiting for one call -------------------------------------------------- */

typedef struct {
    GMutex lock;
    GCond cond;
    bool finished;
    int err;
    void *res;
    size_t res_size;
} srv_client_waiter;

/* done of srv_client_call_sync: take the result's contents, wake the caller. */
static void srv_client_sync_done(void *arg, int err, void *res)
{
    srv_client_waiter *w = arg;

    g_mutex_lock(&w->lock);
    if (res && w->res) {
        memcpy(w->res, res, w->res_size);
        memset(res, 0, w->res_size); /* now the caller's to xdr_free */
    }
    w->err = err;
    w->finished = true;
    g_cond_signal(&w->cond);
    g_mutex_unlock(&w->lock);
}

int srv_client_call_sync(srv_client *c, const srv_client_call *call, void *res)
{
    srv_client_waiter w = {.res = res, .res_size = call ? call->res_size : 0};

    if (res && call)
        memset(res, 0, call->res_size);
    g_mutex_init(&w.lock);
    g_cond_init(&w.cond);
    int rc = srv_client_submit(c, call, srv_client_sync_done, &w);
    if (rc == 0) {
        g_mutex_lock(&w.lock);
        while (!w.finished)
            g_cond_wait(&w.cond, &w.lock);
        g_mutex_unlock(&w.lock);
        rc = w.err;
    }
    g_mutex_clear(&w.lock);
    g_cond_clear(&w.cond);
    return rc;
}
