/*
 * srv_client_dest.c -- the destinations of the outgoing RPC client
 * (srv_client_int.h): one socket per (address, port, transport), made
 * when the first call to it comes and closed when it has had no call for
 * idle_ms. A TCP destination is one connection, reused by successive
 * calls; calls that come while it connects wait behind the connect. A UDP
 * destination is one connected datagram socket, so the kernel drops
 * datagrams from anyone else and reports ICMP errors (refused,
 * unreachable) to us.
 *
 *   A destination:
 *
 *     (srv_cdest_route) --TCP--> CONNECTING --connected--> OPEN
 *                       --UDP-----------------------------> OPEN
 *     CONNECTING --refused/unreachable--> closed: its calls fail (srv_cdest_close)
 *     OPEN --EOF, reset (TCP)--> closed: its calls are routed again (srv_cdest_lost)
 *     OPEN --broken record marking--> closed: calls written to it fail -EPROTO
 *     OPEN --ICMP error (UDP)--> closed: its calls fail
 *     OPEN --no call for idle_ms--> closed (srv_cdest_idle_scan)
 *
 * NOTES
 *   A closed destination leaves the table at once and goes to the
 *   graveyard; it is freed after the epoll batch (an event later in the
 *   batch may name it). Memory: a destination holds its calls (each owns
 *   its record), at most one orphan record, and a TCP reply being
 *   reassembled (at most max_reply bytes). Replies are matched by xid and
 *   taken only from the destination the call was sent to.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <glib.h>

#include "srv_client_int.h"

#define SRV_CDEST_US_PER_MS 1000

/* The errno a caller is told for a socket error e. */
static int srv_cdest_err(int e)
{
    switch (e) {
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EHOSTDOWN:
    case ENETDOWN:
        return -EHOSTUNREACH;
    case EPIPE:
        return -ECONNRESET;
    default:
        return -e;
    }
}

/* Watch d's socket for input, and for output too when out. */
static void srv_cdest_watch(srv_client *c, srv_cdest *d, bool out)
{
    struct epoll_event e = {.events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = d};

    if (d->want_out == out)
        return;
    d->want_out = out;
    if (epoll_ctl(c->epfd, EPOLL_CTL_MOD, d->fd, &e) != 0)
        g_warning("srv_client: epoll_ctl: %s", g_strerror(errno));
}

static bool srv_cdest_empty(const srv_cdest *d)
{
    return !d->wait.length && !d->write.length && !d->sent.length;
}

/* d may have become empty: start its idle time. */
static void srv_cdest_check_idle(srv_client *c, srv_cdest *d)
{
    if (!srv_cdest_empty(d) || d->idle_since)
        return;
    d->idle_since = g_get_monotonic_time();
    int64_t due = d->idle_since + (int64_t)c->o.idle_ms * SRV_CDEST_US_PER_MS;
    if (c->next_idle_scan == 0 || due < c->next_idle_scan)
        c->next_idle_scan = due;
}

/* Take d out of the table and its socket out of epoll; free it after the batch. */
static void srv_cdest_bury(srv_client *c, srv_cdest *d)
{
    if (g_hash_table_lookup(c->dests, &d->key) == d) {
        g_hash_table_remove(c->dests, &d->key);
        atomic_store(&c->n.dests, g_hash_table_size(c->dests));
    }
    if (d->fd >= 0) {
        epoll_ctl(c->epfd, EPOLL_CTL_DEL, d->fd, NULL);
        close(d->fd);
        d->fd = -1;
    }
    d->dead = true;
    g_queue_push_tail(&c->graveyard, d);
}

/* Pop the first call of q, detached from d. NULL if q is empty. */
static srv_ccall *srv_cdest_pop(GQueue *q)
{
    GList *l = g_queue_peek_head_link(q);

    if (!l)
        return NULL;
    g_queue_unlink(q, l);
    srv_ccall *call = l->data;
    call->state = SRV_CCALL_LOOSE;
    call->dest = NULL;
    return call;
}

/* Put call into the ready queue: it is routed again by the loop. */
static void srv_cdest_requeue(srv_client *c, srv_ccall *call)
{
    call->state = SRV_CCALL_READY;
    call->wrote = 0;
    g_queue_push_tail_link(&c->ready, &call->link);
}

void srv_cdest_close(srv_client *c, srv_cdest *d, int err)
{
    GQueue *qs[] = {&d->wait, &d->write, &d->sent};
    srv_ccall *call;

    srv_cdest_bury(c, d);
    for (unsigned i = 0; i < G_N_ELEMENTS(qs); i++)
        while ((call = srv_cdest_pop(qs[i])) != NULL)
            srv_client_finish(c, call, err, NULL);
}

/*
 * d's stream is gone (EOF, reset) or broken (broken set): calls not yet
 * written go to the ready queue; calls written to it go there too, unless
 * their connections were lost too often (-ECONNRESET) or the peer broke
 * record marking (-EPROTO).
 */
static void srv_cdest_lost(srv_client *c, srv_cdest *d, bool broken)
{
    GQueue *qs[] = {&d->write, &d->sent};
    srv_ccall *call;

    srv_cdest_bury(c, d);
    while ((call = srv_cdest_pop(&d->wait)) != NULL)
        srv_cdest_requeue(c, call);
    for (unsigned i = 0; i < G_N_ELEMENTS(qs); i++) {
        while ((call = srv_cdest_pop(qs[i])) != NULL) {
            if (broken)
                srv_client_finish(c, call, -EPROTO, NULL);
            else if (++call->resends >= SRV_CLIENT_RESENDS_MAX)
                srv_client_finish(c, call, -ECONNRESET, NULL);
            else
                srv_cdest_requeue(c, call);
        }
    }
}

void srv_cdest_free(srv_cdest *d)
{
    srv_record_clear(&d->rec);
    g_free(d->orphan);
    g_free(d);
}

/* ---- writing --------------------------------------------------------------- */

/* call has been sent: it awaits its reply, or (no_reply) it is over. */
static void srv_cdest_sent(srv_client *c, srv_cdest *d, srv_ccall *call)
{
    if (call->no_reply) {
        call->state = SRV_CCALL_LOOSE;
        call->dest = NULL;
        srv_client_finish(c, call, 0, NULL);
        return;
    }
    call->state = SRV_CCALL_SENT;
    g_queue_push_tail_link(&d->sent, &call->link);
    if (!call->tcp) {
        call->retrans_at = g_get_monotonic_time() + (int64_t)call->rto_ms * SRV_CDEST_US_PER_MS;
        srv_client_retime(c, call);
    }
}

/* Write what the stream takes of the orphan: 0 when it is all out, else
 * the errno send failed with. */
static int srv_cdest_write_orphan(srv_cdest *d)
{
    while (d->orphan) {
        ssize_t k =
            send(d->fd, d->orphan + d->orphan_wrote, d->orphan_len - d->orphan_wrote, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno;
        d->orphan_wrote += (size_t)k;
        if (d->orphan_wrote == d->orphan_len) {
            g_free(d->orphan);
            d->orphan = NULL;
        }
    }
    return 0;
}

/* Write queued records to an open TCP stream until it takes no more. */
static void srv_cdest_flush_tcp(srv_client *c, srv_cdest *d)
{
    int err;

    while ((err = srv_cdest_write_orphan(d)) == 0) {
        GList *l = g_queue_peek_head_link(&d->write);
        if (!l) {
            srv_ccall *next = srv_cdest_pop(&d->wait);
            if (!next)
                break;
            next->state = SRV_CCALL_WRITE;
            next->dest = d;
            next->wrote = 0;
            g_queue_push_tail_link(&d->write, &next->link);
            continue;
        }
        srv_ccall *call = l->data;
        ssize_t k = send(d->fd, call->rec + call->wrote, call->len - call->wrote, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            err = errno;
            break;
        }
        call->wrote += (size_t)k;
        if (call->wrote == call->len) {
            g_queue_unlink(&d->write, l);
            srv_cdest_sent(c, d, call);
        }
    }
    if (err == EAGAIN || err == EWOULDBLOCK) {
        srv_cdest_watch(c, d, true);
        return;
    }
    if (err) {
        srv_cdest_lost(c, d, false);
        return;
    }
    srv_cdest_watch(c, d, false);
    srv_cdest_check_idle(c, d);
}

/* Send queued datagrams until the socket takes no more. */
static void srv_cdest_flush_udp(srv_client *c, srv_cdest *d)
{
    srv_ccall *call;

    while ((call = g_queue_peek_head(&d->wait)) != NULL) {
        ssize_t k = send(d->fd, call->rec + 4, call->len - 4, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
            srv_cdest_watch(c, d, true);
            return;
        }
        if (k < 0) {
            srv_cdest_close(c, d, srv_cdest_err(errno));
            return;
        }
        srv_cdest_pop(&d->wait);
        call->dest = d;
        srv_cdest_sent(c, d, call);
    }
    srv_cdest_watch(c, d, false);
    srv_cdest_check_idle(c, d);
}

static void srv_cdest_flush(srv_client *c, srv_cdest *d)
{
    if (d->key.tcp)
        srv_cdest_flush_tcp(c, d);
    else
        srv_cdest_flush_udp(c, d);
}

void srv_cdest_retransmit(srv_client *c, srv_ccall *call)
{
    srv_cdest *d = call->dest;

    atomic_fetch_add(&c->n.retransmits, 1);
    ssize_t k = send(d->fd, call->rec + 4, call->len - 4, MSG_NOSIGNAL);
    if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS && errno != EINTR)
        srv_cdest_close(c, d, srv_cdest_err(errno));
}

/* ---- opening --------------------------------------------------------------- */

/* Room for one more destination: close the one idle longest if the table is full. */
static void srv_cdest_make_room(srv_client *c)
{
    GHashTableIter it;
    gpointer v;
    srv_cdest *oldest = NULL;

    if (g_hash_table_size(c->dests) < c->o.max_pending + SRV_CLIENT_SPARE_DESTS)
        return;
    g_hash_table_iter_init(&it, c->dests);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        srv_cdest *d = v;
        if (srv_cdest_empty(d) && (!oldest || d->idle_since < oldest->idle_since))
            oldest = d;
    }
    if (oldest)
        srv_cdest_close(c, oldest, 0);
}

/* A destination for call's address: socket made, connect begun. NULL after
 * finishing call with the error that prevented it. */
static srv_cdest *srv_cdest_open(srv_client *c, srv_ccall *call, const srv_ckey *k)
{
    int type = (call->tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC;
    int fd = socket(call->addr.ss_family, type, 0), err = 0;

    if (fd < 0) {
        srv_client_finish(c, call, -errno, NULL);
        return NULL;
    }
    if (call->tcp)
        atomic_fetch_add(&c->n.connects, 1);
    if (connect(fd, (struct sockaddr *)&call->addr, call->addrlen) != 0 && errno != EINPROGRESS)
        err = errno;
    struct epoll_event e = {.events = EPOLLIN | EPOLLOUT};
    srv_cdest *d = g_new0(srv_cdest, 1);
    e.data.ptr = d;
    if (!err && epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &e) != 0)
        err = errno;
    if (err) {
        close(fd);
        g_free(d);
        srv_client_finish(c, call, srv_cdest_err(err), NULL);
        return NULL;
    }
    srv_cdest_make_room(c);
    d->c = c;
    d->key = *k;
    memcpy(&d->addr, &call->addr, call->addrlen);
    d->addrlen = call->addrlen;
    d->fd = fd;
    d->want_out = true;
    d->state = call->tcp ? SRV_CDEST_CONNECTING : SRV_CDEST_OPEN;
    srv_record_init(&d->rec, c->o.max_reply);
    g_hash_table_insert(c->dests, &d->key, d);
    atomic_store(&c->n.dests, g_hash_table_size(c->dests));
    return d;
}

void srv_cdest_route(srv_client *c, srv_ccall *call)
{
    srv_ckey k;

    srv_client_key_of((struct sockaddr *)&call->addr, call->tcp, &k);
    srv_cdest *d = g_hash_table_lookup(c->dests, &k);
    if (!d && (d = srv_cdest_open(c, call, &k)) == NULL)
        return;
    call->state = SRV_CCALL_WAIT;
    call->dest = d;
    call->wrote = 0;
    d->idle_since = 0;
    g_queue_push_tail_link(&d->wait, &call->link);
    if (d->state == SRV_CDEST_OPEN)
        srv_cdest_flush(c, d);
}

void srv_cdest_unlink(srv_client *c, srv_ccall *call)
{
    srv_cdest *d = call->dest;

    switch (call->state) {
    case SRV_CCALL_WAIT:
        g_queue_unlink(&d->wait, &call->link);
        break;
    case SRV_CCALL_WRITE:
        g_queue_unlink(&d->write, &call->link);
        if (call->wrote > 0 && call->wrote < call->len) {
            /* Half written: the rest must still go out, or the stream loses its framing. */
            d->orphan = call->rec;
            d->orphan_len = call->len;
            d->orphan_wrote = call->wrote;
            call->rec = NULL;
        }
        break;
    case SRV_CCALL_SENT:
        g_queue_unlink(&d->sent, &call->link);
        break;
    default:
        return;
    }
    call->dest = NULL;
    srv_cdest_check_idle(c, d);
}

/* ---- reading --------------------------------------------------------------- */

/* A reply msg[0..len) that came from d: finish the call it answers, if any. */
static void srv_cdest_reply(srv_client *c, srv_cdest *d, const unsigned char *msg, size_t len)
{
    uint32_t xid;
    void *res;

    srv_ccall *call = srv_client_peek(msg, len, &xid)
                          ? g_hash_table_lookup(c->xids, GUINT_TO_POINTER(xid))
                          : NULL;
    if (!call || call->dest != d || call->state != SRV_CCALL_SENT) {
        atomic_fetch_add(&c->n.unmatched, 1);
        return;
    }
    int rc = srv_client_decode(msg, len, call->res_xdr, call->res_size, &res);
    atomic_fetch_add(rc == 0 ? &c->n.replies : &c->n.bad_replies, 1);
    srv_client_finish(c, call, rc, res);
}

/* Feed n bytes of the stream; false if d was closed. */
static bool srv_cdest_feed(srv_client *c, srv_cdest *d, const unsigned char *buf, size_t n)
{
    size_t pos = 0, used, len;

    while (pos < n) {
        int r = srv_record_feed(&d->rec, buf + pos, n - pos, &used);
        pos += used;
        if (r < 0) {
            atomic_fetch_add(&c->n.broken_streams, 1);
            srv_cdest_lost(c, d, true);
            return false;
        }
        if (r == SRV_RECORD_COMPLETE) {
            unsigned char *msg = srv_record_take(&d->rec, &len);
            srv_cdest_reply(c, d, msg, len);
            g_free(msg);
        }
    }
    return true;
}

/* Read what the TCP stream has, a bounded number of times. */
static void srv_cdest_read_tcp(srv_client *c, srv_cdest *d)
{
    for (int i = 0; i < SRV_CLIENT_READS_PER_EVENT; i++) {
        ssize_t k = recv(d->fd, c->rbuf, c->o.max_reply, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (k <= 0) {
            srv_cdest_lost(c, d, false);
            return;
        }
        if (!srv_cdest_feed(c, d, c->rbuf, (size_t)k))
            return;
    }
}

/* Read what datagrams the UDP socket has, a bounded number of them. */
static void srv_cdest_read_udp(srv_client *c, srv_cdest *d)
{
    for (int i = 0; i < SRV_CLIENT_READS_PER_EVENT; i++) {
        ssize_t k = recv(d->fd, c->rbuf, c->o.max_reply, MSG_TRUNC);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (k < 0) {
            srv_cdest_close(c, d, srv_cdest_err(errno));
            return;
        }
        if ((size_t)k > c->o.max_reply) {
            atomic_fetch_add(&c->n.dropped_oversize, 1);
            continue;
        }
        srv_cdest_reply(c, d, c->rbuf, (size_t)k);
        if (d->dead)
            return;
    }
}

void srv_cdest_event(srv_client *c, srv_cdest *d, uint32_t events)
{
    if (d->state == SRV_CDEST_CONNECTING) {
        int err = 0;
        socklen_t el = sizeof err;
        if (getsockopt(d->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
            err = errno;
        if (err) {
            srv_cdest_close(c, d, srv_cdest_err(err));
            return;
        }
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        d->state = SRV_CDEST_OPEN;
        srv_cdest_flush(c, d);
        if (d->dead)
            return;
        events &= ~(uint32_t)EPOLLOUT;
    }
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        if (d->key.tcp)
            srv_cdest_read_tcp(c, d);
        else
            srv_cdest_read_udp(c, d);
        if (d->dead)
            return;
    }
    if (events & EPOLLOUT)
        srv_cdest_flush(c, d);
}

int64_t srv_cdest_idle_scan(srv_client *c, int64_t now)
{
    GHashTableIter it;
    gpointer v;
    GQueue idle = G_QUEUE_INIT;
    int64_t next = 0, limit = (int64_t)c->o.idle_ms * SRV_CDEST_US_PER_MS;

    g_hash_table_iter_init(&it, c->dests);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        srv_cdest *d = v;
        if (!srv_cdest_empty(d) || !d->idle_since)
            continue;
        if (now - d->idle_since >= limit)
            g_queue_push_tail(&idle, d);
        else if (next == 0 || d->idle_since + limit < next)
            next = d->idle_since + limit;
    }
    for (srv_cdest *d; (d = g_queue_pop_head(&idle)) != NULL;)
        srv_cdest_close(c, d, 0);
    return next;
}
