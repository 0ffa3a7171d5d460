/*
 * srv_udp.c -- calls over UDP (srv_transport.h): a datagram is one call;
 * its reply goes back from the address the call was sent to (IP_PKTINFO /
 * IPV6_PKTINFO), which is also the local address a program is told (a
 * portmapper answers GETADDR with it). The job's sink is the listener;
 * what the job needs to reply (peer, the local address) travels with it.
 *
 * NOTES
 *   Bounded: at most udp_queue_max calls of a listener are queued or
 *   running; more datagrams are dropped (the client retransmits). A
 *   datagram larger than the listener's record_max is dropped unread
 *   (MSG_TRUNC). Replies that do not fit a datagram are dropped with a
 *   (rate-limited) log line.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "srv_transport.h"

#define SRV_UDP_BATCH     64
#define SRV_UDP_REPLY_MAX 65507u

/* A UDP call: the job, and the packet info to reply from. */
typedef struct {
    srv_job job; /* first: srv_job_free frees the whole */
    struct in_pktinfo pi4;
    struct in6_pktinfo pi6;
    bool have4, have6;
} srv_udp_job;

int srv_udp_setup(int fd, int family)
{
    int one = 1;

    if (setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one) != 0 && family == AF_INET)
        return -errno;
    if (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one) != 0)
        return -errno;
    return 0;
}

/* The local address of a datagram from its control messages. */
static void srv_udp_local(srv_udp_job *u, struct msghdr *msg, unsigned port)
{
    struct sockaddr_storage local;
    socklen_t locallen = 0;

    memset(&local, 0, sizeof local);
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
        if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
            struct sockaddr_in *in = (struct sockaddr_in *)&local;
            memcpy(&u->pi4, CMSG_DATA(cm), sizeof u->pi4);
            in->sin_family = AF_INET;
            in->sin_addr = u->pi4.ipi_addr;
            in->sin_port = htons((uint16_t)port);
            locallen = sizeof *in;
            u->have4 = true;
        } else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO) {
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&local;
            memcpy(&u->pi6, CMSG_DATA(cm), sizeof u->pi6);
            in6->sin6_family = AF_INET6;
            in6->sin6_addr = u->pi6.ipi6_addr;
            in6->sin6_port = htons((uint16_t)port);
            locallen = sizeof *in6;
            u->have6 = true;
        }
    }
    memcpy(&u->job.from.local, &local, sizeof local);
    u->job.from.locallen = locallen;
}

/* The job op: send the reply datagram from where the call arrived. */
static void srv_udp_reply(srv_job *job, const void *data, size_t len)
{
    srv_udp_job *u = (srv_udp_job *)job;
    srv_listener *l = job->sink;
    const struct sockaddr *peer = (const struct sockaddr *)&job->from.peer;
    unsigned char cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
    struct iovec iov = {(void *)data, len};
    struct msghdr msg = {.msg_name = (void *)peer,
                         .msg_namelen = job->from.peerlen,
                         .msg_iov = &iov,
                         .msg_iovlen = 1};

    if (len > SRV_UDP_REPLY_MAX) {
        unsigned suppressed;
        if (log_ratelimit_allow(l->t->rl, peer, &suppressed)) {
            char who[LOG_PEER_STRLEN];
            log_peer_string(peer, job->from.peerlen, who, sizeof who);
            g_warning("udp reply of %zu bytes to %s does not fit a datagram: dropped (use TCP "
                      "or a smaller rsize)",
                      len, who);
        }
        return;
    }
    memset(cbuf, 0, sizeof cbuf);
    if (u->have6 || u->have4) {
        msg.msg_control = cbuf;
        msg.msg_controllen = u->have6 ? CMSG_SPACE(sizeof u->pi6) : CMSG_SPACE(sizeof u->pi4);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        if (u->have6) {
            struct in6_pktinfo p = {.ipi6_addr = u->pi6.ipi6_addr};
            *cm = (struct cmsghdr){.cmsg_len = CMSG_LEN(sizeof p),
                                   .cmsg_level = IPPROTO_IPV6,
                                   .cmsg_type = IPV6_PKTINFO};
            memcpy(CMSG_DATA(cm), &p, sizeof p);
        } else {
            struct in_pktinfo p = {.ipi_spec_dst = u->pi4.ipi_addr};
            *cm = (struct cmsghdr){
                .cmsg_len = CMSG_LEN(sizeof p), .cmsg_level = IPPROTO_IP, .cmsg_type = IP_PKTINFO};
            memcpy(CMSG_DATA(cm), &p, sizeof p);
        }
    }
    while (sendmsg(l->udp_fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
}

/* The job op: the call is finished. */
static void srv_udp_done(srv_job *job)
{
    srv_listener *l = job->sink;

    atomic_fetch_sub(&l->udp_pending, 1);
    srv_job_free(job);
}

static const srv_job_ops srv_udp_job_ops = {.reply = srv_udp_reply, .done = srv_udp_done};

/* Receive one datagram into a new job; NULL when there is none (or it is
 * to be dropped: *more says whether to read on). */
static srv_udp_job *srv_udp_recv(srv_listener *l, bool *more)
{
    srv_transport *t = l->t;
    unsigned char
        cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(struct in_pktinfo))];
    struct sockaddr_storage peer;
    struct iovec iov = {t->rbuf, l->record_max < t->rbuf_size ? l->record_max : t->rbuf_size};
    struct msghdr msg = {.msg_name = &peer,
                         .msg_namelen = sizeof peer,
                         .msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = cbuf,
                         .msg_controllen = sizeof cbuf};
    ssize_t n = recvmsg(l->udp_fd, &msg, MSG_DONTWAIT);

    *more = n >= 0 || errno == EINTR;
    if (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
        g_debug("udp on the %s port: recvmsg: %s", l->name, g_strerror(errno));
    if (n < 0 || (msg.msg_flags & MSG_TRUNC) || t->stopping)
        return NULL;
    if (atomic_load(&l->udp_pending) >= t->udp_queue_max) {
        srv_stats_event(t->stats, SRV_EV_UDP_DROP);
        return NULL; /* the client retransmits */
    }
    srv_udp_job *u = g_new0(srv_udp_job, 1);
    u->job.ops = &srv_udp_job_ops;
    u->job.sink = l;
    srv_origin_set(&u->job.from, (struct sockaddr *)&peer, msg.msg_namelen, NULL, 0, false,
                   l->progs);
    srv_udp_local(u, &msg, l->port);
    u->job.rec = g_memdup2(t->rbuf, (gsize)n);
    u->job.len = (size_t)n;
    return u;
}

void srv_udp_readable(srv_listener *l)
{
    for (int i = 0; i < SRV_UDP_BATCH; i++) {
        bool more;
        srv_udp_job *u = srv_udp_recv(l, &more);
        if (u) {
            atomic_fetch_add(&l->udp_pending, 1);
            srv_workers_submit(l->t->workers, &u->job);
        } else if (!more) {
            return;
        }
    }
}
