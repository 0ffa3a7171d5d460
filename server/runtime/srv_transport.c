/*
 * srv_transport.c -- sockets: the TCP listener and connections, the UDP
 * socket, and the one event thread (epoll) that accepts, reads, reassembles
 * records, hands calls to the workers, flushes queued replies, closes idle
 * connections and handles signals.
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
 *   inflight >= SRV_CONN_INFLIGHT_MAX or             EOF from client [event]:
 *   queued output >= SRV_CONN_OUTQ_MAX [event]       stop reading; a partial
 *                 v  | below both again [worker       record is discarded
 *               PAUSED   or event on flush]                           |
 *                                                                     v
 *     bad record mark, read error, EPOLLHUP/ERR,       DRAINING: calls still
 *     idle for SRV_IDLE_TIMEOUT_S, shutdown [event]    running or replies queued;
 *                 |                                    when none are left the
 *                 |                                    worker (or flush) does
 *                 |                                    shutdown(2): EPOLLHUP
 *                 v                                                   |
 *              CLOSED: off epoll, shutdown(2), replies dropped  <-----+
 *                 |
 *                 | last reference dropped (event thread or a worker)
 *                 v
 *              close(fd), freed
 *
 *   The fd is closed only with the last reference, so a worker holding a
 *   reference can never write into a reused descriptor number.
 *
 *   Server shutdown (SIGINT/SIGTERM): close the listener, stop the UDP
 *   socket's reading, stop reading every connection (partial records are
 *   dropped), tell the workers to finish what they have and exit, flush
 *   their replies for at most SRV_FLUSH_TIMEOUT_S, close everything.
 *
 * NOTES
 *   Event-thread-only state: the connection list, each connection's
 *   srv_record, last_call_us, and every fd's epoll registration except the
 *   MOD calls below. Locked state (srv_conn.lock): closed, draining flags,
 *   the output queue, inflight, the registered event mask -- every
 *   epoll_ctl(MOD) for a connection is made under its lock from that
 *   state, so the last one made always matches the state.
 *   Memory per connection is bounded: a record of at most SRV_RECORD_MAX
 *   (grown as bytes arrive), SRV_CONN_INFLIGHT_MAX calls, and about
 *   SRV_CONN_OUTQ_MAX of queued replies plus the replies of calls already
 *   running when reading paused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "srv_int.h"

#define SRV_EVENTS_MAX      64
#define SRV_ACCEPT_BATCH    64
#define SRV_UDP_BATCH       64
#define SRV_READ_BUDGET     (256u * 1024u) /* bytes read from one connection per wake-up */
#define SRV_RBUF_SIZE       (128u * 1024u) /* holds any UDP datagram */
#define SRV_UDP_REPLY_MAX   65507u
#define SRV_FLUSH_TIMEOUT_S 5

/* One queued piece of output: the rest of a reply record (mark included). */
typedef struct {
    size_t len, off;
    unsigned char data[];
} srv_out;

struct srv_conn {
    atomic_int refs;
    int fd;
    srv_server *srv;
    struct sockaddr_storage peer;
    socklen_t peerlen;
    char name[LOG_PEER_STRLEN];

    /* event thread only */
    srv_record rec;
    int64_t last_call_us; /* monotonic time of the last complete call (or accept) */
    srv_conn *prev, *next;

    /* under lock */
    pthread_mutex_t lock;
    bool closed;   /* CLOSED: off epoll, replies dropped */
    bool eof;      /* the client sent FIN: DRAINING */
    bool stopping; /* the server is shutting down: no reading */
    bool shut;     /* shutdown(2) done to get the event thread to close */
    GQueue outq;   /* of srv_out * */
    size_t out_bytes;
    unsigned inflight;
    uint32_t events; /* the mask registered with epoll */
};

static int64_t srv_now_us(void)
{
    return g_get_monotonic_time();
}

/* ---- connections ------------------------------------------------------------ */

static srv_conn *srv_conn_ref(srv_conn *c)
{
    atomic_fetch_add(&c->refs, 1);
    return c;
}

static void srv_conn_unref(srv_conn *c)
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

/* Register with epoll what the state asks for (lock held). */
static void srv_conn_update_locked(srv_conn *c)
{
    uint32_t ev = 0;

    if (c->closed)
        return;
    if (!c->eof && !c->stopping && c->inflight < SRV_CONN_INFLIGHT_MAX &&
        c->out_bytes < SRV_CONN_OUTQ_MAX)
        ev |= EPOLLIN;
    if (!g_queue_is_empty(&c->outq))
        ev |= EPOLLOUT;
    if (ev == c->events)
        return;
    struct epoll_event e = {.events = ev, .data.ptr = c};
    if (epoll_ctl(c->srv->epfd, EPOLL_CTL_MOD, c->fd, &e) == 0)
        c->events = ev;
    else
        g_warning("connection from %s: epoll_ctl: %s", c->name, g_strerror(errno));
}

/* Nothing more will be read and nothing is left to send (lock held). */
static bool srv_conn_finished_locked(srv_conn *c)
{
    return (c->eof || c->stopping) && c->inflight == 0 && g_queue_is_empty(&c->outq);
}

/* Make the event thread close c (EPOLLHUP) from any thread (lock held). */
static void srv_conn_shut_locked(srv_conn *c)
{
    if (c->closed || c->shut)
        return;
    c->shut = true;
    shutdown(c->fd, SHUT_RDWR);
}

/* CLOSED: off epoll, shut down, unlinked, the event thread's reference dropped. */
static void srv_conn_close(srv_server *s, srv_conn *c, const char *why)
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

    epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    shutdown(c->fd, SHUT_RDWR);
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nconns--;
    srv_record_clear(&c->rec);
    if (why)
        g_debug("connection from %s closed: %s", c->name, why);
    srv_conn_unref(c);
}

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

void srv_conn_reply(srv_conn *c, const void *data, size_t len)
{
    unsigned char mark[4];
    size_t total = 4 + len, sent = 0;

    srv_record_mark(mark, len);
    pthread_mutex_lock(&c->lock);
    if (c->closed || c->shut)
        goto out;
    if (g_queue_is_empty(&c->outq)) {
        struct iovec iov[2] = {{mark, 4}, {(void *)data, len}};
        ssize_t k = srv_send_iov(c->fd, iov, 2);
        if (k < 0) {
            g_debug("connection from %s: send: %s", c->name, g_strerror(errno));
            srv_conn_shut_locked(c);
            goto out;
        }
        sent = (size_t)k;
    }
    if (sent < total) {
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
out:
    pthread_mutex_unlock(&c->lock);
}

void srv_conn_done(srv_conn *c)
{
    pthread_mutex_lock(&c->lock);
    c->inflight--;
    if (srv_conn_finished_locked(c))
        srv_conn_shut_locked(c);
    else
        srv_conn_update_locked(c);
    pthread_mutex_unlock(&c->lock);
    srv_conn_unref(c);
}

/* EPOLLOUT: send queued output. Returns false if c was closed. */
static bool srv_conn_flush(srv_server *s, srv_conn *c)
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
        srv_conn_close(s, c, broken ? "send failed" : "done");
        return false;
    }
    return true;
}

/* A complete record from c: hand it to a worker. */
static void srv_conn_submit(srv_server *s, srv_conn *c, unsigned char *rec, size_t len)
{
    srv_job *job = g_new0(srv_job, 1);

    job->conn = srv_conn_ref(c);
    memcpy(&job->peer, &c->peer, c->peerlen);
    job->peerlen = c->peerlen;
    job->rec = rec;
    job->len = len;
    pthread_mutex_lock(&c->lock);
    c->inflight++;
    srv_conn_update_locked(c);
    pthread_mutex_unlock(&c->lock);
    c->last_call_us = srv_now_us();
    srv_workers_submit(s, job);
}

/* A line about a misbehaving client, rate-limited. */
static void srv_conn_complain(srv_server *s, srv_conn *c, const char *what)
{
    unsigned suppressed;

    if (!log_ratelimit_allow(s->rl, (const struct sockaddr *)&c->peer, &suppressed))
        return;
    if (suppressed)
        g_message("connection from %s: %s: closing it (%u similar lines suppressed)", c->name, what,
                  suppressed);
    else
        g_message("connection from %s: %s: closing it", c->name, what);
}

/* EPOLLIN: read, reassemble, submit. Returns false if c was closed. */
static bool srv_conn_readable(srv_server *s, srv_conn *c)
{
    size_t budget = SRV_READ_BUDGET;

    while (budget > 0) {
        size_t want = s->rbuf_size < budget ? s->rbuf_size : budget;
        ssize_t n = recv(c->fd, s->rbuf, want, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n < 0) {
            srv_conn_close(s, c, g_strerror(errno));
            return false;
        }
        if (n == 0) {
            bool finished;
            pthread_mutex_lock(&c->lock);
            c->eof = true;
            finished = srv_conn_finished_locked(c);
            if (!finished)
                srv_conn_update_locked(c);
            pthread_mutex_unlock(&c->lock);
            if (srv_record_partial(&c->rec))
                g_debug("connection from %s: closed in the middle of a record", c->name);
            srv_record_clear(&c->rec);
            if (finished) {
                srv_conn_close(s, c, "end of input");
                return false;
            }
            return true;
        }
        budget -= (size_t)n;
        size_t off = 0;
        while (off < (size_t)n) {
            size_t used;
            int rc = srv_record_feed(&c->rec, s->rbuf + off, (size_t)n - off, &used);
            off += used;
            if (rc == -EMSGSIZE || rc == -EBADMSG) {
                srv_stats_event(&s->stats, SRV_EV_BAD_RECORD);
                srv_conn_complain(s, c,
                                  rc == -EMSGSIZE
                                      ? "record larger than the server accepts (bad record mark)"
                                      : "empty record fragment (bad record mark)");
                srv_conn_close(s, c, "bad record mark");
                return false;
            }
            if (rc == SRV_RECORD_COMPLETE) {
                size_t len;
                unsigned char *rec = srv_record_take(&c->rec, &len);
                srv_conn_submit(s, c, rec, len);
            }
        }
        pthread_mutex_lock(&c->lock);
        bool reading = (c->events & EPOLLIN) != 0;
        pthread_mutex_unlock(&c->lock);
        if (!reading)
            return true;
    }
    return true;
}

static void srv_conn_event(srv_server *s, srv_conn *c, uint32_t ev)
{
    /* Once the server is stopping nothing more is read (events fetched
     * before the signal may still say EPOLLIN). */
    if ((ev & EPOLLIN) && !s->stopping && !srv_conn_readable(s, c))
        return;
    if ((ev & EPOLLOUT) && !srv_conn_flush(s, c))
        return;
    if (ev & (EPOLLHUP | EPOLLERR))
        srv_conn_close(s, c, "hung up");
}

/* ---- listeners ---------------------------------------------------------------- */

static void srv_accept(srv_server *s)
{
    for (int i = 0; i < SRV_ACCEPT_BATCH; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(s->tcp_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            /* Out of descriptors or memory: pause accepting for a second
             * rather than spin on a listener that stays readable. */
            g_warning("accept: %s: not accepting connections for a second", g_strerror(errno));
            epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->tcp_fd, NULL);
            s->accept_resume_us = srv_now_us() + G_USEC_PER_SEC;
            return;
        }
        if (s->nconns >= s->cfg->max_connections) {
            unsigned suppressed;
            srv_stats_event(&s->stats, SRV_EV_CONN_REFUSED);
            if (log_ratelimit_allow(s->rl, (struct sockaddr *)&ss, &suppressed)) {
                char who[LOG_PEER_STRLEN];
                log_peer_string((struct sockaddr *)&ss, sl, who, sizeof who);
                g_warning("connection from %s refused: %u connections open ([server] "
                          "max_connections)",
                          who, s->nconns);
            }
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

        srv_conn *c = g_new0(srv_conn, 1);
        atomic_init(&c->refs, 1);
        c->fd = fd;
        c->srv = s;
        memcpy(&c->peer, &ss, sl);
        c->peerlen = sl;
        log_peer_string((struct sockaddr *)&ss, sl, c->name, sizeof c->name);
        srv_record_init(&c->rec, SRV_RECORD_MAX);
        c->last_call_us = srv_now_us();
        pthread_mutex_init(&c->lock, NULL);
        g_queue_init(&c->outq);
        c->events = EPOLLIN;
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
            g_warning("connection from %s: epoll_ctl: %s", c->name, g_strerror(errno));
            srv_conn_unref(c);
            continue;
        }
        c->next = s->conns;
        if (s->conns)
            s->conns->prev = c;
        s->conns = c;
        s->nconns++;
        g_debug("connection from %s", c->name);
    }
}

static void srv_udp_readable(srv_server *s)
{
    unsigned limit = s->nworkers * SRV_UDP_QUEUE_PER_WORKER;

    for (int i = 0; i < SRV_UDP_BATCH; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        ssize_t n = recvfrom(s->udp_fd, s->rbuf, s->rbuf_size, 0, (struct sockaddr *)&ss, &sl);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                g_debug("udp: recvfrom: %s", g_strerror(errno));
            return;
        }
        if (s->stopping)
            continue;
        if (atomic_load(&s->udp_pending) >= limit) {
            srv_stats_event(&s->stats, SRV_EV_UDP_DROP);
            continue; /* the client retransmits */
        }
        srv_job *job = g_new0(srv_job, 1);
        memcpy(&job->peer, &ss, sl);
        job->peerlen = sl;
        job->rec = g_memdup2(s->rbuf, (gsize)n);
        job->len = (size_t)n;
        atomic_fetch_add(&s->udp_pending, 1);
        srv_workers_submit(s, job);
    }
}

void srv_udp_reply(srv_server *s, const struct sockaddr *peer, socklen_t peerlen, const void *data,
                   size_t len)
{
    if (len > SRV_UDP_REPLY_MAX) {
        unsigned suppressed;
        if (log_ratelimit_allow(s->rl, peer, &suppressed)) {
            char who[LOG_PEER_STRLEN];
            log_peer_string(peer, peerlen, who, sizeof who);
            g_warning("udp reply of %zu bytes to %s does not fit a datagram: dropped (use TCP "
                      "or a smaller rsize)",
                      len, who);
        }
        return;
    }
    for (;;) {
        ssize_t k = sendto(s->udp_fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL, peer, peerlen);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            g_debug("udp: sendto: %s", g_strerror(errno)); /* the client retransmits */
        return;
    }
}

void srv_transport_wake(srv_server *s)
{
    uint64_t one = 1;

    if (s->wake_fd >= 0 && write(s->wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
        g_debug("eventfd write: %s", g_strerror(errno));
}

/* Parse the listen address with port into ss. */
static int srv_listen_addr(const char *addr, unsigned port, struct sockaddr_storage *ss,
                           socklen_t *len)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        *len = sizeof *in;
        return 0;
    }
    if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        *len = sizeof *in6;
        return 0;
    }
    return -1;
}

/*
 * A bound socket of type (SOCK_STREAM listening, or SOCK_DGRAM) on addr
 * and port; *bound is the port it got. Returns the fd, or -errno.
 */
static int srv_bind(int type, const char *addr, unsigned port, unsigned *bound)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    int fd, one = 1, zero = 0, err;

    if (srv_listen_addr(addr, port, &ss, &sl) != 0)
        return -EINVAL;
    fd = socket(ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (type == SOCK_STREAM)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6) /* "::" serves IPv4 clients too */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0 ||
        (type == SOCK_STREAM && listen(fd, SOMAXCONN) != 0))
        goto fail;
    sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        goto fail;
    *bound = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                           : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
fail:
    err = errno;
    close(fd);
    return -err;
}

static int srv_epoll_add(srv_server *s, int fd, void *tag)
{
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = tag};

    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
        g_critical("epoll_ctl: %s", g_strerror(errno));
        return -1;
    }
    return 0;
}

int srv_transport_open(srv_server *s)
{
    const cfg *c = s->cfg;
    sigset_t mask;

    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGUSR1);
    s->sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (s->epfd < 0 || s->wake_fd < 0 || s->sig_fd < 0) {
        g_critical("cannot set up the event loop: %s", g_strerror(errno));
        return -1;
    }
    s->rbuf_size = SRV_RBUF_SIZE;
    s->rbuf = g_malloc(s->rbuf_size);

    /* With port 0, TCP picks the port and UDP must get the same one. */
    for (int attempt = 0; attempt < 20; attempt++) {
        int fd = srv_bind(SOCK_STREAM, c->listen, c->port, &s->port);
        if (fd < 0) {
            g_critical("cannot listen on %s port %u (tcp): %s%s", c->listen, c->port,
                       g_strerror(-fd),
                       fd == -EADDRINUSE ? " (another NFS server? choose a port with --port)" : "");
            return -1;
        }
        s->tcp_fd = fd;
        if (!c->udp)
            break;
        unsigned uport;
        fd = srv_bind(SOCK_DGRAM, c->listen, s->port, &uport);
        if (fd >= 0) {
            s->udp_fd = fd;
            break;
        }
        if (fd == -EADDRINUSE && c->port == 0) {
            close(s->tcp_fd);
            s->tcp_fd = -1;
            continue;
        }
        g_critical("cannot bind %s port %u (udp): %s%s", c->listen, s->port, g_strerror(-fd),
                   fd == -EADDRINUSE ? " (set [server] udp = false to serve TCP only)" : "");
        return -1;
    }
    if (s->tcp_fd < 0 || (c->udp && s->udp_fd < 0)) {
        g_critical("cannot find a port free for both tcp and udp on %s", c->listen);
        return -1;
    }
    if (srv_epoll_add(s, s->tcp_fd, &s->tcp_fd) != 0 || srv_epoll_add(s, s->sig_fd, &s->sig_fd) ||
        srv_epoll_add(s, s->wake_fd, &s->wake_fd) != 0 ||
        (s->udp_fd >= 0 && srv_epoll_add(s, s->udp_fd, &s->udp_fd) != 0))
        return -1;
    return 0;
}

/* SIGINT/SIGTERM: no new calls; workers finish theirs. */
static void srv_begin_stop(srv_server *s)
{
    s->stopping = true;
    if (s->tcp_fd >= 0) {
        epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->tcp_fd, NULL);
        close(s->tcp_fd);
        s->tcp_fd = -1;
    }
    if (s->udp_fd >= 0) /* kept open for the replies still to come */
        epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->udp_fd, NULL);
    /* Connections are not closed here (later events of this epoll batch may
     * name them): those with nothing left are shut down, and the event
     * thread closes them on EPOLLHUP. */
    for (srv_conn *c = s->conns; c; c = c->next) {
        pthread_mutex_lock(&c->lock);
        c->stopping = true;
        if (srv_conn_finished_locked(c))
            srv_conn_shut_locked(c);
        else
            srv_conn_update_locked(c);
        pthread_mutex_unlock(&c->lock);
        srv_record_clear(&c->rec);
    }
    srv_workers_stop(s);
}

/* Returns true to leave the loop at once (a second stop signal). */
static bool srv_signal(srv_server *s)
{
    struct signalfd_siginfo si;

    while (read(s->sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGUSR1) {
            srv_stats_log(&s->stats, "SIGUSR1");
            continue;
        }
        if (s->stopping) {
            g_warning("signal %u again while shutting down: exiting without waiting", si.ssi_signo);
            return true;
        }
        g_message("signal %u: shutting down (finishing the calls in progress)", si.ssi_signo);
        srv_begin_stop(s);
    }
    return false;
}

/* Close connections without a call for the idle timeout. */
static void srv_idle_scan(srv_server *s, int64_t now)
{
    int64_t limit = (int64_t)s->idle_timeout_s * G_USEC_PER_SEC;

    for (srv_conn *c = s->conns, *next; c; c = next) {
        bool idle;
        next = c->next;
        if (now - c->last_call_us < limit)
            continue;
        pthread_mutex_lock(&c->lock);
        idle = c->inflight == 0 && g_queue_is_empty(&c->outq);
        pthread_mutex_unlock(&c->lock);
        if (idle)
            srv_conn_close(s, c, "idle");
    }
}

/* Is every reply flushed? (after the workers have exited) */
static bool srv_all_flushed(srv_server *s)
{
    for (srv_conn *c = s->conns; c; c = c->next) {
        bool empty;
        pthread_mutex_lock(&c->lock);
        empty = g_queue_is_empty(&c->outq);
        pthread_mutex_unlock(&c->lock);
        if (!empty)
            return false;
    }
    return true;
}

void srv_transport_loop(srv_server *s)
{
    struct epoll_event evs[SRV_EVENTS_MAX];
    int64_t next_scan = srv_now_us() + G_USEC_PER_SEC, flush_deadline = 0;

    for (;;) {
        int n = epoll_wait(s->epfd, evs, SRV_EVENTS_MAX, 1000);
        if (n < 0 && errno != EINTR) {
            g_critical("epoll_wait: %s", g_strerror(errno));
            if (!s->stopping)
                srv_begin_stop(s);
            n = 0;
            g_usleep(G_USEC_PER_SEC / 10);
        }
        for (int i = 0; i < n; i++) {
            void *tag = evs[i].data.ptr;
            if (tag == &s->tcp_fd) {
                if (s->tcp_fd >= 0)
                    srv_accept(s);
            } else if (tag == &s->udp_fd) {
                if (!s->stopping)
                    srv_udp_readable(s);
            } else if (tag == &s->sig_fd) {
                if (srv_signal(s))
                    _exit(1);
            } else if (tag == &s->wake_fd) {
                uint64_t v;
                while (read(s->wake_fd, &v, sizeof v) > 0) {
                }
            } else {
                srv_conn_event(s, tag, evs[i].events);
            }
        }
        int64_t now = srv_now_us();
        if (now >= next_scan) {
            next_scan = now + G_USEC_PER_SEC;
            if (!s->stopping)
                srv_idle_scan(s, now);
            if (s->accept_resume_us && now >= s->accept_resume_us && s->tcp_fd >= 0) {
                s->accept_resume_us = 0;
                srv_epoll_add(s, s->tcp_fd, &s->tcp_fd);
            }
        }
        if (s->stopping && atomic_load(&s->workers_running) == 0) {
            if (!flush_deadline)
                flush_deadline = now + SRV_FLUSH_TIMEOUT_S * G_USEC_PER_SEC;
            if (srv_all_flushed(s))
                break;
            if (now >= flush_deadline) {
                g_warning("replies still unsent after %d s: closing their connections",
                          SRV_FLUSH_TIMEOUT_S);
                break;
            }
        }
    }
}

void srv_transport_close(srv_server *s)
{
    while (s->conns)
        srv_conn_close(s, s->conns, NULL);
    if (s->tcp_fd >= 0)
        close(s->tcp_fd);
    if (s->udp_fd >= 0)
        close(s->udp_fd);
    if (s->sig_fd >= 0)
        close(s->sig_fd);
    if (s->wake_fd >= 0)
        close(s->wake_fd);
    if (s->epfd >= 0)
        close(s->epfd);
    s->tcp_fd = s->udp_fd = s->sig_fd = s->wake_fd = s->epfd = -1;
    g_free(s->rbuf);
    s->rbuf = NULL;
}
