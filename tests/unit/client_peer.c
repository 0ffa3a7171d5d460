/*
 * client_peer.c -- the fake RPC peer of the outgoing client's tests
 * (client_peer.h): raw sockets, a poll loop on its own thread, calls
 * parsed word by word, replies built word by word, so that it can answer
 * anything, right or wrong.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include "client_peer.h"
#include "srv_record.h"

#define PEER_CONNS_MAX 64
#define PEER_WAIT_S    60
#define PEER_GARBAGE_N 64
#define PEER_BUF       (128 * 1024)
#define PEER_HUGE      0xffffffffu /* last fragment, 2 GiB - 1 */
#define PEER_AUTH_SYS  1
#define PEER_PMAP_PROG 100000u
#define PEER_PMAP_PROC 3u

typedef struct {
    int fd;
    srv_record rec;
} peer_conn;

struct peer {
    peer_opts o;
    unsigned port;
    int tcp_fd, udp_fd, stop_fd;
    GThread *thread;
    GMutex lock;
    GCond cond;
    unsigned n[PEER_N_COUNTERS];
    uint32_t last_uid, last_xid;
    struct sockaddr_storage last_from; /* of the last UDP call */
    unsigned seen;                     /* calls handled, for PEER_DROP */
    peer_conn conns[PEER_CONNS_MAX];
    unsigned nconns;
};

/* A parsed call. */
typedef struct {
    uint32_t xid, prog, vers, proc;
    bool authsys;
    uint32_t uid;
    const unsigned char *args;
    size_t args_len;
} peer_call;

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(GByteArray *b, uint32_t v)
{
    unsigned char w[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};

    g_byte_array_append(b, w, 4);
}

static void bump(peer *p, peer_counter which)
{
    g_mutex_lock(&p->lock);
    p->n[which]++;
    g_cond_broadcast(&p->cond);
    g_mutex_unlock(&p->lock);
}

/* Parse a call message; false if it is not one. */
static bool peer_parse(const unsigned char *m, size_t len, peer_call *c)
{
    size_t off;

    memset(c, 0, sizeof *c);
    if (len < 32 || get32(m + 4) != 0 || get32(m + 8) != 2)
        return false;
    c->xid = get32(m);
    c->prog = get32(m + 12);
    c->vers = get32(m + 16);
    c->proc = get32(m + 20);
    uint32_t flavor = get32(m + 24), clen = get32(m + 28);
    if (clen > 400 || 32 + (size_t)((clen + 3) & ~3u) + 8 > len)
        return false;
    if (flavor == PEER_AUTH_SYS && clen >= 8) {
        /* stamp, machine<255>, uid, gid, gids<16> */
        uint32_t mlen = get32(m + 36);
        size_t uoff = 40 + ((mlen + 3) & ~3u);
        if (mlen <= 255 && uoff + 4 <= 32 + (size_t)clen) {
            c->authsys = true;
            c->uid = get32(m + uoff);
        }
    }
    off = 32 + ((clen + 3) & ~3u);
    uint32_t vlen = get32(m + off + 4);
    if (vlen > 400 || off + 8 + ((vlen + 3) & ~3u) > len)
        return false;
    off += 8 + ((vlen + 3) & ~3u);
    c->args = m + off;
    c->args_len = len - off;
    return true;
}

/* The head of an accepted reply with stat. */
static GByteArray *peer_reply(uint32_t xid, uint32_t stat)
{
    GByteArray *b = g_byte_array_new();

    put32(b, xid);
    put32(b, 1); /* REPLY */
    put32(b, 0); /* MSG_ACCEPTED */
    put32(b, 0); /* AUTH_NONE verifier */
    put32(b, 0);
    put32(b, stat);
    return b;
}

/* A successful reply for c under the echo rules. */
static GByteArray *peer_echo(const peer_call *c)
{
    GByteArray *b = peer_reply(c->xid, 0);
    uint32_t arg = c->args_len >= 4 ? get32(c->args) : 0;

    if (c->proc == PEER_PROC_INC) {
        put32(b, arg + 1);
    } else if (c->proc == PEER_PROC_STR) {
        put32(b, arg);
        for (uint32_t i = 0; i < ((arg + 3) & ~3u); i++)
            g_byte_array_append(b, (const unsigned char *)(i < arg ? "x" : "\0"), 1);
    }
    return b;
}

/* A portmapper's answer to c. */
static GByteArray *peer_pmap(const peer *p, const peer_call *c)
{
    if (c->prog != PEER_PMAP_PROG || c->proc != PEER_PMAP_PROC || c->args_len < 16)
        return peer_reply(c->xid, 1); /* PROG_UNAVAIL */
    GByteArray *b = peer_reply(c->xid, 0);
    uint32_t prog = get32(c->args);
    put32(b, p->o.pmap_prog == 0 || prog == p->o.pmap_prog ? p->o.pmap_answer : 0);
    return b;
}

/* Send one message: a datagram to to, or a record on fd. */
static void peer_send(int fd, bool tcp, const struct sockaddr_storage *to, const GByteArray *m)
{
    if (!tcp) {
        socklen_t tl =
            to->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
        (void)!sendto(fd, m->data, m->len, 0, (const struct sockaddr *)to, tl);
        return;
    }
    GByteArray *r = g_byte_array_new();
    put32(r, 0x80000000u | m->len);
    g_byte_array_append(r, m->data, m->len);
    (void)!send(fd, r->data, r->len, MSG_NOSIGNAL);
    g_byte_array_unref(r);
}

/* Answer a message as the mode says; false: close the connection. */
static bool peer_handle(peer *p, int fd, bool tcp, const struct sockaddr_storage *to,
                        const unsigned char *m, size_t len)
{
    peer_call c;
    GByteArray *r = NULL;

    if (!peer_parse(m, len, &c))
        return true;
    g_mutex_lock(&p->lock);
    if (c.authsys)
        p->last_uid = c.uid;
    p->last_xid = c.xid;
    if (!tcp)
        p->last_from = *to;
    bool drop = p->o.mode == PEER_DROP && p->seen++ < p->o.drop;
    g_mutex_unlock(&p->lock);
    if (c.authsys)
        bump(p, PEER_N_AUTHSYS);
    bump(p, PEER_N_CALLS);
    switch (p->o.mode) {
    case PEER_SILENT:
        return true;
    case PEER_DROP:
        if (drop)
            return true;
        /* fall through */
    case PEER_ECHO:
        r = peer_echo(&c);
        break;
    case PEER_PROG_UNAVAIL:
        r = peer_reply(c.xid, 1);
        break;
    case PEER_GARBAGE:
        r = g_byte_array_new();
        for (int i = 0; i < PEER_GARBAGE_N; i++)
            put32(r, g_random_int());
        break;
    case PEER_WRONG_XID:
        c.xid++;
        r = peer_echo(&c);
        break;
    case PEER_BAD_BODY:
        r = peer_reply(c.xid, 0);
        g_byte_array_append(r, (const unsigned char *)"\0\0", 2);
        break;
    case PEER_HUGE_MARK:
    case PEER_BAD_MARK: {
        unsigned char w[4] = {0xff, 0xff, 0xff, 0xff};
        if (p->o.mode == PEER_BAD_MARK)
            memset(w, 0, sizeof w);
        if (tcp)
            (void)!send(fd, w, 4, MSG_NOSIGNAL);
        return true;
    }
    case PEER_CLOSE:
        return !tcp;
    case PEER_FLOOD:
        for (unsigned i = 0; i < p->o.flood; i++) {
            GByteArray *f = peer_reply(c.xid ^ 0x5a5a0000u ^ i, 0);
            put32(f, i);
            peer_send(fd, tcp, to, f);
            g_byte_array_unref(f);
        }
        r = peer_echo(&c);
        break;
    case PEER_BIG:
        r = peer_reply(c.xid, 0);
        while (r->len < p->o.big)
            put32(r, 0);
        break;
    case PEER_PMAP:
        r = peer_pmap(p, &c);
        break;
    case PEER_MUTATE:
        r = peer_echo(&c);
        if (g_random_int_range(0, 8) == 0) {
            g_byte_array_set_size(r, (guint)g_random_int_range(0, (gint32)r->len));
            break;
        }
        for (int i = g_random_int_range(1, 5); i > 0; i--)
            r->data[g_random_int_range(0, (gint32)r->len)] ^=
                (unsigned char)g_random_int_range(1, 256);
        break;
    }
    peer_send(fd, tcp, to, r);
    g_byte_array_unref(r);
    return true;
}

static void peer_close_conn(peer *p, unsigned i, bool eof)
{
    close(p->conns[i].fd);
    srv_record_clear(&p->conns[i].rec);
    p->conns[i] = p->conns[--p->nconns];
    if (eof)
        bump(p, PEER_N_EOFS);
}

/* Read a connection; false if it is gone. */
static bool peer_read_conn(peer *p, peer_conn *pc, unsigned char *buf)
{
    ssize_t k = recv(pc->fd, buf, PEER_BUF, 0);
    size_t pos = 0, used, len;

    if (k <= 0)
        return k < 0 && errno == EAGAIN;
    while (pos < (size_t)k) {
        int r = srv_record_feed(&pc->rec, buf + pos, (size_t)k - pos, &used);
        pos += used;
        if (r < 0)
            return false;
        if (r == SRV_RECORD_COMPLETE) {
            unsigned char *m = srv_record_take(&pc->rec, &len);
            bool keep = peer_handle(p, pc->fd, true, NULL, m, len);
            g_free(m);
            if (!keep)
                return false;
        }
    }
    return true;
}

static gpointer peer_main(gpointer arg)
{
    peer *p = arg;
    unsigned char *buf = g_malloc(PEER_BUF);

    for (;;) {
        struct pollfd fds[3 + PEER_CONNS_MAX] = {{.fd = p->stop_fd, .events = POLLIN},
                                                 {.fd = p->udp_fd, .events = POLLIN},
                                                 {.fd = p->tcp_fd, .events = POLLIN}};
        unsigned n = p->nconns;
        for (unsigned i = 0; i < n; i++)
            fds[3 + i] = (struct pollfd){.fd = p->conns[i].fd, .events = POLLIN};
        if (poll(fds, 3 + n, -1) < 0)
            continue;
        if (fds[0].revents)
            break;
        if (fds[1].revents) {
            struct sockaddr_storage from;
            socklen_t fl = sizeof from;
            ssize_t k = recvfrom(p->udp_fd, buf, PEER_BUF, 0, (struct sockaddr *)&from, &fl);
            if (k > 0)
                peer_handle(p, p->udp_fd, false, &from, buf, (size_t)k);
        }
        if (fds[2].revents) {
            int fd = accept4(p->tcp_fd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0 && p->nconns < PEER_CONNS_MAX) {
                p->conns[p->nconns].fd = fd;
                srv_record_init(&p->conns[p->nconns].rec, PEER_BUF);
                p->nconns++;
                bump(p, PEER_N_ACCEPTS);
            } else if (fd >= 0) {
                close(fd);
            }
        }
        /* Back to front: closing moves the last connection into the hole. */
        for (unsigned i = n; i-- > 0;)
            if (fds[3 + i].revents && !peer_read_conn(p, &p->conns[i], buf))
                peer_close_conn(p, i, true);
    }
    while (p->nconns)
        peer_close_conn(p, p->nconns - 1, false);
    g_free(buf);
    return NULL;
}

/* Bind TCP and UDP sockets on one free port of o.addr. */
static bool peer_bind(peer *p)
{
    const char *addr = p->o.addr ? p->o.addr : "127.0.0.1";
    int family = strchr(addr, ':') ? AF_INET6 : AF_INET;

    for (int attempt = 0; attempt < 100; attempt++) {
        struct sockaddr_storage ss = {.ss_family = (sa_family_t)family};
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        socklen_t sl = family == AF_INET6 ? sizeof *in6 : sizeof *in;
        g_assert_cmpint(
            inet_pton(family, addr, family == AF_INET6 ? (void *)&in6->sin6_addr : &in->sin_addr),
            ==, 1);
        p->tcp_fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        p->udp_fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (bind(p->tcp_fd, (struct sockaddr *)&ss, sl) == 0 &&
            getsockname(p->tcp_fd, (struct sockaddr *)&ss, &sl) == 0 &&
            bind(p->udp_fd, (struct sockaddr *)&ss, sl) == 0 &&
            listen(p->tcp_fd, PEER_CONNS_MAX) == 0) {
            p->port = ntohs(family == AF_INET6 ? in6->sin6_port : in->sin_port);
            return true;
        }
        close(p->tcp_fd);
        close(p->udp_fd);
    }
    return false;
}

peer *peer_start(const peer_opts *o)
{
    peer *p = g_new0(peer, 1);

    p->o = *o;
    g_mutex_init(&p->lock);
    g_cond_init(&p->cond);
    g_assert_true(peer_bind(p));
    p->stop_fd = eventfd(0, EFD_CLOEXEC);
    g_assert_cmpint(p->stop_fd, >=, 0);
    p->thread = g_thread_new("peer", peer_main, p);
    return p;
}

unsigned peer_port(const peer *p)
{
    return p->port;
}

unsigned peer_count(peer *p, peer_counter which)
{
    g_mutex_lock(&p->lock);
    unsigned n = p->n[which];
    g_mutex_unlock(&p->lock);
    return n;
}

bool peer_wait(peer *p, peer_counter which, unsigned n)
{
    gint64 end = g_get_monotonic_time() + PEER_WAIT_S * G_USEC_PER_SEC;
    bool ok = true;

    g_mutex_lock(&p->lock);
    while (p->n[which] < n && ok)
        ok = g_cond_wait_until(&p->cond, &p->lock, end) || p->n[which] >= n;
    g_mutex_unlock(&p->lock);
    return ok;
}

void peer_last_udp(peer *p, struct sockaddr_storage *from, uint32_t *xid)
{
    g_mutex_lock(&p->lock);
    *from = p->last_from;
    *xid = p->last_xid;
    g_mutex_unlock(&p->lock);
}

uint32_t peer_last_uid(peer *p)
{
    g_mutex_lock(&p->lock);
    uint32_t u = p->last_uid;
    g_mutex_unlock(&p->lock);
    return u;
}

void peer_stop(peer *p)
{
    uint64_t one = 1;

    (void)!write(p->stop_fd, &one, sizeof one);
    g_thread_join(p->thread);
    close(p->stop_fd);
    close(p->tcp_fd);
    close(p->udp_fd);
    g_mutex_clear(&p->lock);
    g_cond_clear(&p->cond);
    g_free(p);
}
