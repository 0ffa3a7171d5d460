/*
 * srv_listen.c -- listeners (srv_transport.h, srv_rt.h): binding an
 * address's TCP (and UDP) socket, and accepting connections through the
 * connection table's policy (srv_conntab.c).
 *
 * NOTES
 *   A listener belongs to its transport from srv_listen_add on and is
 *   freed with it. Accepting is the event thread's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "srv_transport.h"

#define SRV_ACCEPT_BATCH 64
/* With port 0, TCP picks the port and UDP must get the same one: tries. */
#define SRV_BIND_TRIES 20

/* Watch fd for EPOLLIN on t's epoll, naming tag. Returns 0, or -1 after
 * logging why. */
static int srv_listen_watch(srv_transport *t, int fd, srv_fd_tag *tag)
{
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = tag};

    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
        g_critical("epoll_ctl: %s", g_strerror(errno));
        return -1;
    }
    return 0;
}

/* Parse addr with port into ss. Returns 0, or -EINVAL for no numeric address. */
static int srv_listen_addr(const char *addr, unsigned port, struct sockaddr_storage *ss,
                           socklen_t *len)
{
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

    memset(ss, 0, sizeof *ss);
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
    return -EINVAL;
}

/*
 * A bound socket of type (SOCK_STREAM listening, or SOCK_DGRAM asking for
 * pktinfo) on addr and port; *bound is the port it got. Returns the fd,
 * or -errno.
 */
static int srv_bind(int type, const char *addr, unsigned port, unsigned *bound)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    int fd, one = 1, zero = 0, err;

    if ((err = srv_listen_addr(addr, port, &ss, &sl)) != 0)
        return err;
    fd = socket(ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (type == SOCK_STREAM)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6) /* "::" serves IPv4 clients too */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (type == SOCK_DGRAM && (err = srv_udp_setup(fd, ss.ss_family)) != 0)
        goto fail_err;
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
    err = -errno;
fail_err:
    close(fd);
    return err;
}

/* TCP, then UDP on the same port. Returns 0, or -errno with *failed set. */
static int srv_listen_bind(srv_listener *l, const srv_listen *spec, const char **failed)
{
    for (int attempt = 0; attempt < SRV_BIND_TRIES; attempt++) {
        unsigned uport;
        int fd = srv_bind(SOCK_STREAM, spec->addr, spec->port, &l->port);
        if (fd < 0) {
            *failed = "tcp";
            return fd;
        }
        l->tcp_fd = fd;
        if (!spec->udp)
            return 0;
        fd = srv_bind(SOCK_DGRAM, spec->addr, l->port, &uport);
        if (fd >= 0) {
            l->udp_fd = fd;
            return 0;
        }
        close(l->tcp_fd);
        l->tcp_fd = -1;
        if (fd != -EADDRINUSE || spec->port != 0) {
            *failed = "udp";
            return fd;
        }
    }
    *failed = "tcp and udp on one port";
    return -EADDRINUSE;
}

void srv_listener_free(srv_listener *l)
{
    if (!l)
        return;
    if (l->tcp_fd >= 0)
        close(l->tcp_fd);
    if (l->udp_fd >= 0)
        close(l->udp_fd);
    g_free(l->name);
    g_free(l);
}

srv_listener *srv_listen_add(srv_transport *t, const srv_listen *spec, unsigned *port,
                             const char **failed, int *err)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    int rc;

    *failed = "address";
    *err = -ENOSPC;
    if (t->nlisteners >= SRV_LISTENERS_MAX || spec->nprogs > SRV_LISTEN_PROGS_MAX)
        return NULL;
    *err = -EINVAL;
    if (srv_listen_addr(spec->addr, spec->port, &ss, &sl) != 0)
        return NULL;
    srv_listener *l = g_new0(srv_listener, 1);
    l->t = t;
    l->tcp_tag = (srv_fd_tag){SRV_FD_LISTEN, l};
    l->udp_tag = (srv_fd_tag){SRV_FD_UDP, l};
    l->name = g_strdup(spec->name ? spec->name : "rpc");
    l->tcp_fd = l->udp_fd = -1;
    l->family = ss.ss_family;
    memcpy(l->prognums, spec->progs, spec->nprogs * sizeof spec->progs[0]);
    l->nprognums = spec->nprogs;
    l->admit = spec->admit;
    l->admit_user = spec->admit_user;
    l->idle_timeout_s = spec->idle_timeout_s ? spec->idle_timeout_s : SRV_IDLE_TIMEOUT_S;
    l->record_max = spec->record_max ? spec->record_max : SRV_RECORD_MAX;
    atomic_init(&l->udp_pending, 0);
    if ((rc = srv_listen_bind(l, spec, failed)) != 0 ||
        srv_listen_watch(t, l->tcp_fd, &l->tcp_tag) != 0 ||
        (l->udp_fd >= 0 && srv_listen_watch(t, l->udp_fd, &l->udp_tag) != 0)) {
        srv_listener_free(l);
        *err = rc ? rc : -EIO;
        return NULL;
    }
    t->listeners[t->nlisteners++] = l;
    *port = l->port;
    *err = 0;
    return l;
}

/* Room for a connection from peer: close what the table says must go.
 * Returns false when the new connection must be refused. */
static bool srv_listen_room(srv_transport *t, const struct sockaddr *peer, socklen_t peerlen)
{
    srv_addr a;
    const char *why;
    bool ok = true;

    srv_addr_of(peer, peerlen, &a);
    for (int i = 0; i < 3 && ok; i++) {
        srv_conn *v = srv_conntab_victim(&t->tab, &a, peer, peerlen, &why, &ok);
        if (!v)
            return ok;
        srv_stats_event(t->stats, SRV_EV_CONN_EVICTED);
        v->evicted = true;
        srv_conn_close(t, v, why);
    }
    return ok;
}

/* Out of descriptors or memory: pause accepting for a second rather than
 * spin on a listener that stays readable. */
static void srv_listen_pause(srv_listener *l)
{
    g_warning("accept on the %s port: %s: not accepting connections for a second", l->name,
              g_strerror(errno));
    epoll_ctl(l->t->epfd, EPOLL_CTL_DEL, l->tcp_fd, NULL);
    l->accept_resume_us = g_get_monotonic_time() + G_USEC_PER_SEC;
}

void srv_listen_accept(srv_listener *l)
{
    srv_transport *t = l->t;

    for (int i = 0; i < SRV_ACCEPT_BATCH; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(l->tcp_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
            continue;
        if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (fd < 0) {
            srv_listen_pause(l);
            return;
        }
        if (!srv_listen_room(t, (struct sockaddr *)&ss, sl)) {
            char who[LOG_PEER_STRLEN];
            srv_stats_event(t->stats, SRV_EV_CONN_REFUSED);
            log_peer_string((struct sockaddr *)&ss, sl, who, sizeof who);
            g_debug("connection from %s refused: every connection that could make room is busy",
                    who);
            close(fd);
            continue;
        }
        srv_conn_open(l, fd, (struct sockaddr *)&ss, sl);
    }
}

void srv_listen_resume(srv_listener *l, int64_t now)
{
    if (l->accept_resume_us && now >= l->accept_resume_us && l->tcp_fd >= 0) {
        l->accept_resume_us = 0;
        srv_listen_watch(l->t, l->tcp_fd, &l->tcp_tag);
    }
}
