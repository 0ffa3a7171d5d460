/*
 * srv_conn.c -- one TCP connection (srv_transport.h): reading and
 * reassembling records, handing calls to the workers as jobs whose sink
 * is the connection (srv_conn_job_ops), the reply path, the output queue,
 * and closing.
 *
 * Replies do not pass through the event thread: a worker writes its reply
 * with a non-blocking send under the connection's lock (srv_conn_reply);
 * only what the socket does not take is queued for the event thread to
 * flush on EPOLLOUT.
 *
 *   A connection's life (who moves it in brackets):
 *
 *     accept --> OPEN: reading (EPOLLIN) ------------------------------+
 *                 |  ^                                                |
 *   inflight >= SRV_CONN_INFLIGHT_MAX or             EOF from client [event],
 *   queued output >= SRV_CONN_OUTQ_MAX [event]       or its first call done
 *                 v  | below both again [worker      and no export admits
 *               PAUSED   or event on flush]          the client [worker]:
 *                                                    stop reading (a partial
 *                                                    record is discarded)
 *                                                                     |
 *     bad record mark, read error, EPOLLHUP/ERR,                      v
 *     idle for the listener's idle timeout,            DRAINING: calls still
 *     closed to make room (srv_conntab.c),             running or replies queued;
 *     shutdown [event]                                 when none are left the
 *                 |                                    worker (or flush) does
 *                 |                                    shutdown(2): EPOLLHUP
 *                 v                                                   |
 *              CLOSED: off epoll, shutdown(2), replies dropped  <-----+
 *                 |
 *                 | last reference dropped (event thread, after the batch,
 *                 v  or a worker)
 *              close(fd), freed
 *
 *   Admission: a connection on a listener with an admission test starts
 *   PENDING; with its first reply (or, for a call that gets none, when it
 *   is done) the worker asks the test (which may block, e.g. resolving
 *   host names of exports) and the connection is ADMITTED or not (then
 *   DRAINING as above: it holds its slot no longer than its replies). The
 *   state is settled before the client sees the reply.
 *
 *   The fd is closed only with the last reference, so a worker holding a
 *   reference can never write into a reused descriptor number.
 *
 * NOTES
 *   Event-thread-only state: the table links, each connection's
 *   srv_record, last_call_us, gone, and every fd's epoll registration
 *   except the MOD calls below. Locked state (srv_conn.lock): closed,
 *   eof, stopping, shut, admission, the output queue, inflight, the
 *   registered event mask -- every epoll_ctl(MOD) for a connection is made
 *   under its lock from that state, so the last one made always matches
 *   the state.
 *   Memory per connection is bounded: a record of at most the listener's
 *   record_max (grown as bytes arrive), SRV_CONN_INFLIGHT_MAX calls, and
 *   about SRV_CONN_OUTQ_MAX of queued replies plus the replies of calls
 *   already running when reading paused.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "srv_pool.h"
#include "srv_transport.h"

/* Bytes read from one connection per wake-up. */
#define SRV_READ_BUDGET (256u * 1024u)
/* The quick replies' buffer (srv_transport.quick_out) is released after a
 * reply that grew it beyond this: room for a quick form's payload (NFS
 * READ answers up to 64 KiB there) with its header, so that the buffer is
 * not allocated afresh per call. */
#define SRV_QUICK_OUT_KEEP (256u * 1024u)

/* One queued piece of output: the rest of a reply record (mark included). */
typedef struct {
    size_t len, off;
    unsigned char data[];
} srv_out;

static srv_conn *srv_conn_ref(srv_conn *c)
{
    atomic_fetch_add(&c->refs, 1);
    return c;
}

void srv_conn_unref(srv_conn *c)
{
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    srv_out *o;
    while ((o = g_queue_pop_head(&c->outq)) != NULL)
        g_free(o);
    srv_record_clear(&c->rec);
    close(c->fd);
    pthread_mutex_destroy(&c->lock);
    g_free(c);
}

/* Nothing more is to be read. */
static bool srv_conn_no_input_locked(const srv_conn *c)
{
    return c->eof || c->stopping || c->admission == SRV_ADMIT_NO;
}

/* Register with epoll what the state asks for (lock held). */
static void srv_conn_update_locked(srv_conn *c)
{
    uint32_t ev = 0;

    if (c->closed)
        return;
    if (!srv_conn_no_input_locked(c) && c->inflight < SRV_CONN_INFLIGHT_MAX &&
        c->out_bytes < SRV_CONN_OUTQ_MAX)
        ev |= EPOLLIN;
    if (!g_queue_is_empty(&c->outq))
        ev |= EPOLLOUT;
    if (ev == c->events)
        return;
    struct epoll_event e = {.events = ev, .data.ptr = &c->tag};
    if (epoll_ctl(c->t->epfd, EPOLL_CTL_MOD, c->fd, &e) == 0)
        c->events = ev;
    else
        g_warning("connection from %s: epoll_ctl: %s", c->name, g_strerror(errno));
}

/* Nothing more will be read and nothing is left to send (lock held). */
static bool srv_conn_finished_locked(srv_conn *c)
{
    return srv_conn_no_input_locked(c) && c->inflight == 0 && g_queue_is_empty(&c->outq);
}

/* Make the event thread close c (EPOLLHUP) from any thread (lock held). */
static void srv_conn_shut_locked(srv_conn *c)
{
    if (c->closed || c->shut)
        return;
    c->shut = true;
    shutdown(c->fd, SHUT_RDWR);
}

bool srv_conn_idle(srv_conn *c)
{
    pthread_mutex_lock(&c->lock);
    bool idle = c->inflight == 0 && g_queue_is_empty(&c->outq);
    pthread_mutex_unlock(&c->lock);
    return idle;
}

void srv_conn_close(srv_transport *t, srv_conn *c, const char *why)
{
    srv_out *o;

    pthread_mutex_lock(&c->lock);
    if (c->closed) {
        pthread_mutex_unlock(&c->lock);
        return;
    }
    c->closed = true;
    while ((o = g_queue_pop_head(&c->outq)) != NULL)
        g_free(o);
    c->out_bytes = 0;
    pthread_mutex_unlock(&c->lock);

    epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    shutdown(c->fd, SHUT_RDWR);
    srv_conntab_remove(&t->tab, c);
    srv_record_clear(&c->rec);
    if (why)
        g_debug("connection from %s closed: %s", c->name, why);
    c->gone = true;
    c->next = t->graveyard; /* the event thread's reference, dropped after the batch */
    t->graveyard = c;
}

void srv_conn_stop(srv_conn *c)
{
    pthread_mutex_lock(&c->lock);
    c->stopping = true;
    if (srv_conn_finished_locked(c))
        srv_conn_shut_locked(c);
    else
        srv_conn_update_locked(c);
    pthread_mutex_unlock(&c->lock);
    srv_record_clear(&c->rec);
}

/* ---- replies (worker threads) ------------------------------------------------ */

/* Send what fits of iov[0..n) without blocking; returns bytes sent or -1. */
static ssize_t srv_send_iov(int fd, struct iovec *iov, int n)
{
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n};
    size_t total = 0;

    for (;;) {
        ssize_t k = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return (ssize_t)total;
        if (k < 0)
            return -1;
        total += (size_t)k;
        /* advance past what was sent */
        while (msg.msg_iovlen > 0 && (size_t)k >= msg.msg_iov[0].iov_len) {
            k -= (ssize_t)msg.msg_iov[0].iov_len;
            msg.msg_iov++;
            msg.msg_iovlen--;
        }
        if (msg.msg_iovlen == 0)
            return (ssize_t)total;
        msg.msg_iov[0].iov_base = (char *)msg.msg_iov[0].iov_base + k;
        msg.msg_iov[0].iov_len -= (size_t)k;
    }
}

/* Queue what was not sent of mark + data (lock held). */
static void srv_conn_queue_locked(srv_conn *c, const unsigned char mark[4], const void *data,
                                  size_t len, size_t sent)
{
    size_t total = 4 + len;
    srv_out *o = g_malloc(sizeof *o + (total - sent));

    o->len = total - sent;
    o->off = 0;
    if (sent < 4) {
        memcpy(o->data, mark + sent, 4 - sent);
        memcpy(o->data + 4 - sent, data, len);
    } else {
        memcpy(o->data, (const unsigned char *)data + (sent - 4), total - sent);
    }
    g_queue_push_tail(&c->outq, o);
    c->out_bytes += o->len;
    srv_conn_update_locked(c);
}

/* After a connection's first call: is its client admitted? (may block) */
static void srv_conn_admission(srv_conn *c)
{
    srv_listener *l = c->l;

    pthread_mutex_lock(&c->lock);
    bool pending = c->admission == SRV_ADMIT_PENDING;
    pthread_mutex_unlock(&c->lock);
    if (!pending)
        return;
    bool yes = l->admit(l->admit_user, (const struct sockaddr *)&c->peer, c->peerlen);
    pthread_mutex_lock(&c->lock);
    if (c->admission == SRV_ADMIT_PENDING)
        c->admission = yes ? SRV_ADMIT_YES : SRV_ADMIT_NO;
    pthread_mutex_unlock(&c->lock);
    if (!yes) {
        srv_stats_event(c->t->stats, SRV_EV_CONN_NOT_ADMITTED);
        g_debug("connection from %s: no export admits it: closing after its replies", c->name);
    }
}

/* One call of c is finished: reading may resume, or, with nothing left,
 * the connection shuts down (lock held). */
static void srv_conn_call_done_locked(srv_conn *c)
{
    c->inflight--;
    if (srv_conn_finished_locked(c))
        srv_conn_shut_locked(c);
    else
        srv_conn_update_locked(c);
}

/* Send what the socket takes of mark + data; queue the rest (lock held). */
static void srv_conn_send_locked(srv_conn *c, const void *data, size_t len)
{
    unsigned char mark[4];
    size_t sent = 0;

    srv_record_mark(mark, len);
    if (g_queue_is_empty(&c->outq)) {
        struct iovec iov[2] = {{mark, 4}, {(void *)data, len}};
        ssize_t k = srv_send_iov(c->fd, iov, 2);
        if (k < 0) {
            g_debug("connection from %s: send: %s", c->name, g_strerror(errno));
            srv_conn_shut_locked(c);
            return;
        }
        sent = (size_t)k;
    }
    if (sent < 4 + len)
        srv_conn_queue_locked(c, mark, data, len, sent);
}

/*
 * The job op: send a reply record on the job's connection, and count the
 * call finished under the same lock: whoever looks at the connection
 * after the client has its reply (the event thread, choosing a
 * connection to close) finds it idle, unless part of the reply waits in
 * the queue.
 */
static void srv_conn_reply(srv_job *job, const void *data, size_t len)
{
    srv_conn *c = job->sink;

    srv_conn_admission(c); /* decided before the client sees a reply */
    pthread_mutex_lock(&c->lock);
    job->replied = true;
    if (!c->closed && !c->shut)
        srv_conn_send_locked(c, data, len);
    srv_conn_call_done_locked(c);
    pthread_mutex_unlock(&c->lock);
}

/* The job op: the job is finished (a call without reply finishes here). */
static void srv_conn_done(srv_job *job)
{
    srv_conn *c = job->sink;
    bool replied = job->replied;

    srv_job_free(job);
    if (!replied) {
        srv_conn_admission(c);
        pthread_mutex_lock(&c->lock);
        srv_conn_call_done_locked(c);
        pthread_mutex_unlock(&c->lock);
    }
    srv_conn_unref(c);
}

static const srv_job_ops srv_conn_job_ops = {.reply = srv_conn_reply, .done = srv_conn_done};

/* ---- the event thread's side -------------------------------------------------- */

/* EPOLLOUT: send queued output. Returns false if c was closed. */
static bool srv_conn_flush(srv_transport *t, srv_conn *c)
{
    bool broken = false, finished;
    srv_out *o;

    pthread_mutex_lock(&c->lock);
    while (!broken && (o = g_queue_peek_head(&c->outq)) != NULL) {
        struct iovec iov = {o->data + o->off, o->len - o->off};
        ssize_t k = srv_send_iov(c->fd, &iov, 1);
        if (k < 0) {
            broken = true;
            break;
        }
        o->off += (size_t)k;
        c->out_bytes -= (size_t)k;
        if (o->off < o->len)
            break;
        g_queue_pop_head(&c->outq);
        g_free(o);
    }
    finished = srv_conn_finished_locked(c);
    if (!broken && !finished)
        srv_conn_update_locked(c);
    pthread_mutex_unlock(&c->lock);
    if (broken || finished) {
        srv_conn_close(t, c, broken ? "send failed" : "done");
        return false;
    }
    return true;
}

/*
 * A call of c answered here, on the event thread, from memory
 * (srv_dispatch_quick): true if it was, its reply sent or queued. Not
 * before c's admission is known (a worker decides it: host-name patterns
 * may block), and not while c is closing.
 */
static bool srv_conn_quick(srv_transport *t, srv_conn *c, const unsigned char *rec, size_t len)
{
    srv_origin from;

    if (!t->env)
        return false;
    pthread_mutex_lock(&c->lock);
    bool ready = c->admission == SRV_ADMIT_YES && !c->closed && !c->shut;
    pthread_mutex_unlock(&c->lock);
    if (!ready)
        return false;
    srv_origin_set(&from, (const struct sockaddr *)&c->peer, c->peerlen,
                   (const struct sockaddr *)&c->local, c->locallen, true, c->l->progs);
    if (srv_dispatch_quick(t->env, rec, len, &from, &t->quick_out) != SRV_DISPATCH_REPLY)
        return false;
    pthread_mutex_lock(&c->lock);
    if (!c->closed && !c->shut) /* else no reply, as from a worker */
        srv_conn_send_locked(c, srv_buf_msg(&t->quick_out), t->quick_out.len);
    pthread_mutex_unlock(&c->lock);
    if (t->quick_out.cap > SRV_QUICK_OUT_KEEP)
        srv_buf_clear(&t->quick_out);
    return true;
}

/* A complete record from c: answer it here if it can be (srv_conn_quick),
 * else hand it to a worker. */
static void srv_conn_submit(srv_transport *t, srv_conn *c, unsigned char *rec, size_t len)
{
    if (srv_conn_quick(t, c, rec, len)) {
        c->last_call_us = g_get_monotonic_time();
        srv_pool_put(rec);
        return;
    }
    srv_job *job = g_new0(srv_job, 1);

    job->ops = &srv_conn_job_ops;
    job->sink = srv_conn_ref(c);
    srv_origin_set(&job->from, (const struct sockaddr *)&c->peer, c->peerlen,
                   (const struct sockaddr *)&c->local, c->locallen, true, c->l->progs);
    job->rec = rec;
    job->len = len;
    pthread_mutex_lock(&c->lock);
    c->inflight++;
    srv_conn_update_locked(c);
    pthread_mutex_unlock(&c->lock);
    c->last_call_us = g_get_monotonic_time();
    srv_workers_submit(t->workers, job);
}

/* A line about a misbehaving client, rate-limited. */
static void srv_conn_complain(srv_transport *t, srv_conn *c, const char *what)
{
    unsigned suppressed;

    if (!log_ratelimit_allow(t->rl, (const struct sockaddr *)&c->peer, &suppressed))
        return;
    if (suppressed)
        g_message("connection from %s: %s: closing it (%u similar lines suppressed)", c->name, what,
                  suppressed);
    else
        g_message("connection from %s: %s: closing it", c->name, what);
}

/* The client closed its side. Returns false if c was closed. */
static bool srv_conn_eof(srv_transport *t, srv_conn *c)
{
    pthread_mutex_lock(&c->lock);
    c->eof = true;
    bool finished = srv_conn_finished_locked(c);
    if (!finished)
        srv_conn_update_locked(c);
    pthread_mutex_unlock(&c->lock);
    if (srv_record_partial(&c->rec))
        g_debug("connection from %s: closed in the middle of a record", c->name);
    srv_record_clear(&c->rec);
    if (finished)
        srv_conn_close(t, c, "end of input");
    return !finished;
}

/* Feed n bytes of input to the reassembler. Returns false if c was closed. */
static bool srv_conn_feed(srv_transport *t, srv_conn *c, const unsigned char *in, size_t n)
{
    size_t off = 0;

    while (off < n) {
        size_t used;
        int rc = srv_record_feed(&c->rec, in + off, n - off, &used);
        off += used;
        if (rc == -EMSGSIZE || rc == -EBADMSG) {
            srv_stats_event(t->stats, SRV_EV_BAD_RECORD);
            srv_conn_complain(t, c,
                              rc == -EMSGSIZE
                                  ? "record larger than the server accepts (bad record mark)"
                                  : "empty record fragment (bad record mark)");
            srv_conn_close(t, c, "bad record mark");
            return false;
        }
        if (rc == SRV_RECORD_COMPLETE) {
            size_t len;
            unsigned char *rec = srv_record_take(&c->rec, &len);
            srv_conn_submit(t, c, rec, len);
        }
    }
    return true;
}

/* EPOLLIN: read, reassemble, submit. Returns false if c was closed. */
static bool srv_conn_readable(srv_transport *t, srv_conn *c)
{
    size_t budget = SRV_READ_BUDGET;

    while (budget > 0) {
        size_t want = t->rbuf_size < budget ? t->rbuf_size : budget;
        ssize_t n = recv(c->fd, t->rbuf, want, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n < 0) {
            srv_conn_close(t, c, g_strerror(errno));
            return false;
        }
        if (n == 0)
            return srv_conn_eof(t, c);
        budget -= (size_t)n;
        if (!srv_conn_feed(t, c, t->rbuf, (size_t)n))
            return false;
        /* A short read emptied the socket: no recv to learn it again
         * (EAGAIN); what arrives later, epoll (level-triggered) reports. */
        if ((size_t)n < want)
            return true;
        pthread_mutex_lock(&c->lock);
        bool reading = (c->events & EPOLLIN) != 0;
        pthread_mutex_unlock(&c->lock);
        if (!reading)
            return true;
    }
    return true;
}

void srv_conn_event(srv_transport *t, srv_conn *c, uint32_t ev)
{
    if (c->gone)
        return; /* closed earlier in this batch */
    /* Once the server is stopping nothing more is read (events fetched
     * before the signal may still say EPOLLIN). */
    if ((ev & EPOLLIN) && !t->stopping && !srv_conn_readable(t, c))
        return;
    if ((ev & EPOLLOUT) && !srv_conn_flush(t, c))
        return;
    if (ev & (EPOLLHUP | EPOLLERR))
        srv_conn_close(t, c, "hung up");
}

srv_conn *srv_conn_open(srv_listener *l, int fd, const struct sockaddr *peer, socklen_t peerlen)
{
    srv_transport *t = l->t;
    srv_conn *c = g_new0(srv_conn, 1);
    int one = 1;

    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->tag = (srv_fd_tag){SRV_FD_CONN, c};
    atomic_init(&c->refs, 1);
    c->fd = fd;
    c->t = t;
    c->l = l;
    memcpy(&c->peer, peer, peerlen);
    c->peerlen = peerlen;
    c->locallen = sizeof c->local;
    if (getsockname(fd, (struct sockaddr *)&c->local, &c->locallen) != 0)
        c->locallen = 0;
    srv_addr_of(peer, peerlen, &c->addr);
    log_peer_string(peer, peerlen, c->name, sizeof c->name);
    srv_record_init(&c->rec, l->record_max);
    c->last_call_us = g_get_monotonic_time();
    pthread_mutex_init(&c->lock, NULL);
    g_queue_init(&c->outq);
    c->admission = l->admit ? SRV_ADMIT_PENDING : SRV_ADMIT_YES;
    c->events = EPOLLIN;
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = &c->tag};
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
        g_warning("connection from %s: epoll_ctl: %s", c->name, g_strerror(errno));
        srv_conn_unref(c);
        return NULL;
    }
    srv_conntab_add(&t->tab, c);
    g_debug("connection from %s on the %s port", c->name, l->name);
    return c;
}
