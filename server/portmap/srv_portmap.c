/*
 * srv_portmap.c -- a small built-in portmapper, so that a plain
 * `mount -t nfs host:/ /mnt` (and libnfs without nfsport=) finds NFS and
 * MOUNT on a machine that runs no rpcbind. It knows only pgnfsd's own
 * programs and refuses registrations from anyone else.
 *
 * Protocols (RFC 1833, rpc/pmap.x), over TCP and UDP on [server]
 * portmap_port (111):
 *
 *   PORTMAP v2  NULL, GETPORT, DUMP; SET and UNSET answer false;
 *               CALLIT is PROC_UNAVAIL
 *   rpcbind v3  NULL, GETADDR, DUMP, GETTIME; SET and UNSET answer false
 *   rpcbind v4  the same, and GETVERSADDR; the rest is PROC_UNAVAIL
 *
 * DUMP is answered over TCP only (over UDP: PROC_UNAVAIL): its reply is
 * many times the size of the call, which would make an open UDP port 111
 * a traffic amplifier for spoofed requests (the classic rpcbind abuse).
 * No other reply is larger than its call by more than a few words.
 *
 * The mappings: NFS v3 and MOUNT v3 on the server's port (tcp, and udp
 * when it serves UDP), and the portmapper itself (v2, v3, v4). GETADDR
 * answers a universal address built from the address the request came in
 * on (when the server listens on a wildcard address) or the listen
 * address, so a client is told an address it can reach; v4 GETADDR and
 * GETVERSADDR want the exact version, v3 GETADDR takes any version of the
 * program on that netid (the client learns the versions from
 * PROG_MISMATCH, as with rpcbind).
 *
 * Who serves port 111 (srv_portmap_start, the decision with
 * srv_rpcbind.c):
 *
 *   [server] portmap = off   register with a running rpcbind (srv_rpcbind_register)
 *                    = auto  a portmapper answers on 127.0.0.1:111?
 *                              yes: register with it, as "off"
 *                              no:  serve our own; if port 111 cannot be
 *                                   bound, log it and carry on
 *                    = on    serve our own; no port, no server (-1)
 *
 * The thread of a running portmapper:
 *
 *   RUNNING: poll listener, UDP socket, connections, wake fd
 *            -- a record completes --> answer it (srv_portmap_answer), send
 *            -- a connection idles SRV_PMAP_IDLE_S or misbehaves --> close it
 *            -- the wake fd (srv_portmap_stop) --> STOPPED: every socket closed
 *
 * NOTES
 *   The srv_portmap and its sockets belong to the thread between start and
 *   stop; srv_portmap_answer only reads the immutable mapping table, so
 *   tests may call it from any thread. Replies are small (a DUMP of a
 *   dozen mappings); a TCP reply the socket does not take at once closes
 *   the connection rather than queueing. Records are capped at
 *   SRV_PMAP_RECORD_MAX bytes; at most SRV_PMAP_CONNS_MAX connections are
 *   open at once (more are accepted and closed).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "pmap.h"
#include "srv_int.h"

#define SRV_PMAP_RECORD_MAX 8192
#define SRV_PMAP_CONNS_MAX  32
#define SRV_PMAP_IDLE_S     30
#define SRV_PMAP_MAPS_MAX   16
#define SRV_PMAP_REPLY_MAX  4096
#define SRV_PMAP_NFS_PROG   100003u
#define SRV_PMAP_MOUNT_PROG 100005u

typedef struct {
    uint32_t prog, vers, prot; /* prot: PGNFS_PMAP_IPPROTO_TCP or _UDP */
    unsigned port;
} srv_pmap_map;

typedef struct {
    int fd;
    srv_record rec;
    int64_t last_us; /* monotonic time of the last input */
} srv_pmap_conn;

struct srv_portmap {
    /* Immutable after start. */
    srv_pmap_map maps[SRV_PMAP_MAPS_MAX];
    unsigned nmaps;
    int family;                  /* of the listen address */
    unsigned char listen_ip[16]; /* the listen address, network order */
    bool wildcard;               /* listening on 0.0.0.0 or :: */
    unsigned port;               /* our own port (111) */
    /* The thread's. */
    int tcp_fd, udp_fd, wake_fd;
    srv_pmap_conn conns[SRV_PMAP_CONNS_MAX];
    unsigned nconns;
    pthread_t thread;
    bool started;
};

/* ---- answering ------------------------------------------------------------ */

static const char *srv_pmap_netid(uint32_t prot, int family)
{
    if (family == AF_INET6)
        return prot == PGNFS_PMAP_IPPROTO_TCP ? "tcp6" : "udp6";
    return prot == PGNFS_PMAP_IPPROTO_TCP ? "tcp" : "udp";
}

/* A netid's protocol and address family; false for netids we do not serve. */
static bool srv_pmap_parse_netid(const char *netid, uint32_t *prot, int *family)
{
    static const struct {
        const char *name;
        uint32_t prot;
        int family;
    } ids[] = {{"tcp", PGNFS_PMAP_IPPROTO_TCP, AF_INET},
               {"udp", PGNFS_PMAP_IPPROTO_UDP, AF_INET},
               {"tcp6", PGNFS_PMAP_IPPROTO_TCP, AF_INET6},
               {"udp6", PGNFS_PMAP_IPPROTO_UDP, AF_INET6}};

    for (size_t i = 0; i < G_N_ELEMENTS(ids); i++) {
        if (strcmp(netid, ids[i].name) == 0) {
            *prot = ids[i].prot;
            *family = ids[i].family;
            return true;
        }
    }
    return false;
}

/*
 * The address (family, 4 or 16 bytes) to announce for netid family
 * `family` to a client that reached us at local. Returns false when we
 * have no such address (an IPv6 netid on an IPv4-only server, ...).
 */
static bool srv_pmap_announce_ip(const srv_portmap *pm, int family, const struct sockaddr *local,
                                 socklen_t locallen, unsigned char ip[16])
{
    unsigned char here[16] = {0};
    int here_family = AF_UNSPEC;

    if (local && local->sa_family == AF_INET && locallen >= (socklen_t)sizeof(struct sockaddr_in)) {
        memcpy(here, &((const struct sockaddr_in *)local)->sin_addr, 4);
        here_family = AF_INET;
    } else if (local && local->sa_family == AF_INET6 &&
               locallen >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)local)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) {
            memcpy(here, a->s6_addr + 12, 4);
            here_family = AF_INET;
        } else {
            memcpy(here, a->s6_addr, 16);
            here_family = AF_INET6;
        }
    }
    if (!pm->wildcard) {
        /* A server bound to one address is reachable there only. */
        if (pm->family != family)
            return false;
        memcpy(ip, pm->listen_ip, family == AF_INET ? 4 : 16);
        return true;
    }
    if (family == AF_INET6 && pm->family != AF_INET6)
        return false; /* 0.0.0.0 serves no IPv6 */
    if (here_family == family) {
        memcpy(ip, here, family == AF_INET ? 4 : 16);
        return true;
    }
    /* Asked over one family about the other: the loopback address of the
     * family asked about is the only one we know to be ours. */
    memset(ip, 0, 16);
    if (family == AF_INET) {
        uint32_t lo = htonl(INADDR_LOOPBACK);
        memcpy(ip, &lo, 4);
    } else {
        ip[15] = 1;
    }
    return true;
}

/* "h1.h2.h3.h4.p1.p2" or "v6addr.p1.p2" (RFC 1833 section 2.1) into buf. */
static void srv_pmap_uaddr(int family, const unsigned char ip[16], unsigned port, char *buf,
                           size_t size)
{
    char host[INET6_ADDRSTRLEN];

    inet_ntop(family, ip, host, sizeof host);
    snprintf(buf, size, "%s.%u.%u", host, (port >> 8) & 0xffu, port & 0xffu);
}

/* The mapping for (prog, vers, prot); vers 0 = any version of prog. */
static const srv_pmap_map *srv_pmap_find(const srv_portmap *pm, uint32_t prog, uint32_t vers,
                                         uint32_t prot, bool any_version)
{
    const srv_pmap_map *other = NULL;

    for (unsigned i = 0; i < pm->nmaps; i++) {
        const srv_pmap_map *m = &pm->maps[i];
        if (m->prog != prog || m->prot != prot)
            continue;
        if (m->vers == vers)
            return m;
        if (!other)
            other = m;
    }
    return any_version ? other : NULL;
}

typedef bool_t (*srv_pmap_xdr_fn)(XDR *, void *);

/* Encode an accepted reply with accept_stat and (for SUCCESS) res. */
static srv_dispatch_result srv_pmap_reply(srv_buf *out, uint32_t xid, uint32_t accept_stat,
                                          xdrproc_t res_xdr, void *res, uint32_t low, uint32_t high)
{
    uint32_t w[] = {xid, REPLY, MSG_ACCEPTED, AUTH_NONE, 0, accept_stat};
    XDR x;
    bool ok = true;

    srv_buf_reserve(out, SRV_PMAP_REPLY_MAX);
    xdrmem_create(&x, (char *)out->data, SRV_PMAP_REPLY_MAX, XDR_ENCODE);
    for (size_t i = 0; i < G_N_ELEMENTS(w); i++)
        ok = ok && xdr_u_int(&x, &w[i]);
    if (accept_stat == PROG_MISMATCH)
        ok = ok && xdr_u_int(&x, &low) && xdr_u_int(&x, &high);
    if (accept_stat == SUCCESS && res_xdr)
        ok = ok && ((srv_pmap_xdr_fn)res_xdr)(&x, res);
    out->len = ok ? xdr_getpos(&x) : 0;
    xdr_destroy(&x);
    if (!ok) {
        g_warning("portmapper: a reply does not fit in %u bytes (a bug)", SRV_PMAP_REPLY_MAX);
        return SRV_DISPATCH_DROP;
    }
    return SRV_DISPATCH_REPLY;
}

/* A denied reply: RPC_MISMATCH (versions 2..2). */
static srv_dispatch_result srv_pmap_rpc_mismatch(srv_buf *out, uint32_t xid)
{
    uint32_t w[] = {xid, REPLY, MSG_DENIED, RPC_MISMATCH, 2, 2};
    XDR x;

    srv_buf_reserve(out, sizeof w);
    xdrmem_create(&x, (char *)out->data, sizeof w, XDR_ENCODE);
    for (size_t i = 0; i < G_N_ELEMENTS(w); i++)
        xdr_u_int(&x, &w[i]);
    out->len = xdr_getpos(&x);
    xdr_destroy(&x);
    return SRV_DISPATCH_REPLY;
}

/* PMAPPROC_DUMP: every mapping, as a list in out_nodes[]. */
static pgnfs_pmap_list *srv_pmap_dump2(const srv_portmap *pm,
                                       pgnfs_pmap_list nodes[SRV_PMAP_MAPS_MAX])
{
    pgnfs_pmap_list *head = NULL;

    for (unsigned i = pm->nmaps; i-- > 0;) {
        nodes[i].map.prog = pm->maps[i].prog;
        nodes[i].map.vers = pm->maps[i].vers;
        nodes[i].map.prot = pm->maps[i].prot;
        nodes[i].map.port = pm->maps[i].port;
        nodes[i].next = head;
        head = &nodes[i];
    }
    return head;
}

/* RPCBPROC_DUMP: every mapping for every family we can announce. */
typedef struct {
    pgnfs_rpcb_list nodes[2 * SRV_PMAP_MAPS_MAX];
    char addrs[2 * SRV_PMAP_MAPS_MAX][64];
} srv_pmap_dump_buf;

static pgnfs_rpcb_list *srv_pmap_dump34(const srv_portmap *pm, const struct sockaddr *local,
                                        socklen_t locallen, srv_pmap_dump_buf *b)
{
    pgnfs_rpcb_list *head = NULL, **tail = &head;
    unsigned n = 0;
    const int families[] = {AF_INET, AF_INET6};

    for (size_t f = 0; f < G_N_ELEMENTS(families); f++) {
        unsigned char ip[16];
        if (!srv_pmap_announce_ip(pm, families[f], local, locallen, ip))
            continue;
        for (unsigned i = 0; i < pm->nmaps; i++) {
            pgnfs_rpcb_list *node = &b->nodes[n];
            srv_pmap_uaddr(families[f], ip, pm->maps[i].port, b->addrs[n], sizeof b->addrs[n]);
            node->rpcb_map.r_prog = pm->maps[i].prog;
            node->rpcb_map.r_vers = pm->maps[i].vers;
            node->rpcb_map.r_netid = (char *)srv_pmap_netid(pm->maps[i].prot, families[f]);
            node->rpcb_map.r_addr = b->addrs[n];
            node->rpcb_map.r_owner = (char *)"pgnfsd"; /* only encoded */
            node->rpcb_next = NULL;
            *tail = node;
            tail = &node->rpcb_next;
            n++;
        }
    }
    return head;
}

/*
 * rpcbind GETADDR / GETVERSADDR: the universal address of the program on
 * the netid asked for ("" = the transport's), or "" when it is not served.
 */
static void srv_pmap_getaddr(const srv_portmap *pm, const pgnfs_rpcb *q, bool exact,
                             const struct sockaddr *local, socklen_t locallen, bool tcp, char *addr,
                             size_t size)
{
    uint32_t prot;
    int family;
    unsigned char ip[16];
    const srv_pmap_map *m;

    addr[0] = '\0';
    if (q->r_netid && *q->r_netid) {
        if (!srv_pmap_parse_netid(q->r_netid, &prot, &family))
            return;
    } else {
        prot = tcp ? PGNFS_PMAP_IPPROTO_TCP : PGNFS_PMAP_IPPROTO_UDP;
        family = local && local->sa_family == AF_INET6 ? AF_INET6 : AF_INET;
    }
    m = srv_pmap_find(pm, q->r_prog, q->r_vers, prot, !exact);
    if (!m || !srv_pmap_announce_ip(pm, family, local, locallen, ip))
        return;
    srv_pmap_uaddr(family, ip, m->port, addr, size);
}

srv_dispatch_result srv_portmap_answer(const srv_portmap *pm, const void *rec, size_t len,
                                       const struct sockaddr *local, socklen_t locallen, bool tcp,
                                       srv_buf *out)
{
    uint32_t xid, type, rpcvers, prog, vers, proc, flavor, blen;
    char body[MAX_AUTH_BYTES];
    srv_dispatch_result r = SRV_DISPATCH_DROP;
    XDR x;
    bool ok;

    out->len = 0;
    xdrmem_create(&x, (char *)rec, (u_int)len, XDR_DECODE);
    if (!xdr_u_int(&x, &xid) || !xdr_u_int(&x, &type) || type != CALL)
        goto out;
    if (!xdr_u_int(&x, &rpcvers))
        goto out;
    if (rpcvers != 2) {
        r = srv_pmap_rpc_mismatch(out, xid);
        goto out;
    }
    ok = xdr_u_int(&x, &prog) && xdr_u_int(&x, &vers) && xdr_u_int(&x, &proc);
    /* Credential and verifier: any flavor will do, we only tell ports. */
    for (int i = 0; ok && i < 2; i++)
        ok = xdr_u_int(&x, &flavor) && xdr_u_int(&x, &blen) && blen <= MAX_AUTH_BYTES &&
             xdr_opaque(&x, body, blen);
    if (!ok)
        goto out;
    if (prog != PGNFS_PMAP_PROG) {
        r = srv_pmap_reply(out, xid, PROG_UNAVAIL, NULL, NULL, 0, 0);
        goto out;
    }
    if (vers < 2 || vers > 4) {
        r = srv_pmap_reply(out, xid, PROG_MISMATCH, NULL, NULL, 2, 4);
        goto out;
    }

    if (vers == 2) {
        pgnfs_pmap_mapping m = {0};
        pgnfs_pmap_list nodes[SRV_PMAP_MAPS_MAX];
        pgnfs_pmap_dump_res dump;
        bool_t no = FALSE;
        u_int port;

        switch (proc) {
        case PGNFS_PMAPPROC_NULL:
            r = srv_pmap_reply(out, xid, SUCCESS, NULL, NULL, 0, 0);
            break;
        case PGNFS_PMAPPROC_SET:
        case PGNFS_PMAPPROC_UNSET:
            if (!xdr_pgnfs_pmap_mapping(&x, &m)) {
                r = srv_pmap_reply(out, xid, GARBAGE_ARGS, NULL, NULL, 0, 0);
                break;
            }
            g_debug("portmapper: refused %s of program %u version %u (only pgnfsd's own "
                    "programs are served)",
                    proc == PGNFS_PMAPPROC_SET ? "SET" : "UNSET", m.prog, m.vers);
            r = srv_pmap_reply(out, xid, SUCCESS, (xdrproc_t)xdr_bool, &no, 0, 0);
            break;
        case PGNFS_PMAPPROC_GETPORT: {
            if (!xdr_pgnfs_pmap_mapping(&x, &m)) {
                r = srv_pmap_reply(out, xid, GARBAGE_ARGS, NULL, NULL, 0, 0);
                break;
            }
            const srv_pmap_map *found = srv_pmap_find(pm, m.prog, m.vers, m.prot, false);
            port = found ? found->port : 0;
            r = srv_pmap_reply(out, xid, SUCCESS, (xdrproc_t)xdr_u_int, &port, 0, 0);
            break;
        }
        case PGNFS_PMAPPROC_DUMP:
            if (!tcp) {
                r = srv_pmap_reply(out, xid, PROC_UNAVAIL, NULL, NULL, 0, 0);
                break;
            }
            dump = srv_pmap_dump2(pm, nodes);
            r = srv_pmap_reply(out, xid, SUCCESS, (xdrproc_t)xdr_pgnfs_pmap_dump_res, &dump, 0, 0);
            break;
        default:
            r = srv_pmap_reply(out, xid, PROC_UNAVAIL, NULL, NULL, 0, 0);
            break;
        }
        goto out;
    }

    /* rpcbind versions 3 and 4. */
    pgnfs_rpcb q;
    memset(&q, 0, sizeof q);
    switch (proc) {
    case PGNFS_RPCBPROC_NULL:
        r = srv_pmap_reply(out, xid, SUCCESS, NULL, NULL, 0, 0);
        break;
    case PGNFS_RPCBPROC_SET:
    case PGNFS_RPCBPROC_UNSET: {
        bool_t no = FALSE;
        if (!xdr_pgnfs_rpcb(&x, &q)) {
            r = srv_pmap_reply(out, xid, GARBAGE_ARGS, NULL, NULL, 0, 0);
            break;
        }
        r = srv_pmap_reply(out, xid, SUCCESS, (xdrproc_t)xdr_bool, &no, 0, 0);
        break;
    }
    case PGNFS_RPCBPROC_GETADDR:
    case PGNFS_RPCBPROC_GETVERSADDR: {
        char addr[64];
        pgnfs_rpcb_addr res = addr;
        if (proc == PGNFS_RPCBPROC_GETVERSADDR && vers != 4) {
            r = srv_pmap_reply(out, xid, PROC_UNAVAIL, NULL, NULL, 0, 0);
            break;
        }
        if (!xdr_pgnfs_rpcb(&x, &q)) {
            r = srv_pmap_reply(out, xid, GARBAGE_ARGS, NULL, NULL, 0, 0);
            break;
        }
        srv_pmap_getaddr(pm, &q, vers == 4, local, locallen, tcp, addr, sizeof addr);
        r = srv_pmap_reply(out, xid, SUCCESS, (xdrproc_t)xdr_pgnfs_rpcb_addr, &res, 0, 0);
        break;
    }
    case PGNFS_RPCBPROC_DUMP: {
        if (!tcp) {
            r = srv_pmap_reply(out, xid, PROC_UNAVAIL, NULL, NULL, 0, 0);
            break;
        }
        srv_pmap_dump_buf *b = g_new0(srv_pmap_dump_buf, 1);
        pgnfs_rpcb_dump_res dump = srv_pmap_dump34(pm, local, locallen, b);
        r = srv_pmap_reply(out, xid, SUCCESS, (xdrproc_t)xdr_pgnfs_rpcb_dump_res, &dump, 0, 0);
        g_free(b);
        break;
    }
    case PGNFS_RPCBPROC_GETTIME: {
        u_int now = (u_int)time(NULL);
        r = srv_pmap_reply(out, xid, SUCCESS, (xdrproc_t)xdr_u_int, &now, 0, 0);
        break;
    }
    default:
        r = srv_pmap_reply(out, xid, PROC_UNAVAIL, NULL, NULL, 0, 0);
        break;
    }
    xdr_destroy(&x);
    xdr_free((xdrproc_t)xdr_pgnfs_rpcb, (char *)&q);
    return r;
out:
    xdr_destroy(&x);
    return r;
}

/* ---- the thread ------------------------------------------------------------- */

static void srv_pmap_conn_close(srv_portmap *pm, unsigned i)
{
    close(pm->conns[i].fd);
    srv_record_clear(&pm->conns[i].rec);
    pm->conns[i] = pm->conns[--pm->nconns];
}

/* Send a whole reply record on a connection; false if it cannot go now. */
static bool srv_pmap_send_tcp(int fd, const srv_buf *reply)
{
    unsigned char mark[4];
    struct iovec iov[2] = {{mark, 4}, {reply->data, reply->len}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};

    srv_record_mark(mark, reply->len);
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    return n == (ssize_t)(reply->len + 4);
}

/* Read what a connection has; false when it must be closed. */
static bool srv_pmap_conn_read(srv_portmap *pm, srv_pmap_conn *c, srv_buf *reply)
{
    unsigned char buf[2048];
    struct sockaddr_storage local;
    socklen_t locallen = sizeof local;
    ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return true;
    if (n <= 0)
        return false;
    c->last_us = g_get_monotonic_time();
    if (getsockname(c->fd, (struct sockaddr *)&local, &locallen) != 0)
        locallen = 0;
    size_t pos = 0;
    while (pos < (size_t)n) {
        size_t used = 0;
        int r = srv_record_feed(&c->rec, buf + pos, (size_t)n - pos, &used);
        pos += used;
        if (r < 0)
            return false;
        if (r != SRV_RECORD_COMPLETE)
            continue;
        size_t len;
        unsigned char *rec = srv_record_take(&c->rec, &len);
        srv_dispatch_result d =
            srv_portmap_answer(pm, rec, len, (struct sockaddr *)&local, locallen, true, reply);
        g_free(rec);
        if (d == SRV_DISPATCH_DROP)
            return false; /* not a call: not a client of ours */
        if (!srv_pmap_send_tcp(c->fd, reply))
            return false;
    }
    return true;
}

/* One datagram: answer it from the address it was sent to. */
static void srv_pmap_udp_read(srv_portmap *pm, srv_buf *reply)
{
    unsigned char buf[SRV_PMAP_RECORD_MAX];
    unsigned char
        cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(struct in_pktinfo))];
    struct sockaddr_storage peer, local;
    socklen_t locallen = 0;
    struct iovec iov = {buf, sizeof buf};
    struct msghdr msg = {.msg_name = &peer,
                         .msg_namelen = sizeof peer,
                         .msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = cbuf,
                         .msg_controllen = sizeof cbuf};
    struct in_pktinfo pi4 = {0};
    struct in6_pktinfo pi6 = {0};
    bool have4 = false, have6 = false;

    ssize_t n = recvmsg(pm->udp_fd, &msg, MSG_DONTWAIT);
    if (n <= 0 || (msg.msg_flags & MSG_TRUNC))
        return;
    memset(&local, 0, sizeof local);
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
        if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
            memcpy(&pi4, CMSG_DATA(cm), sizeof pi4);
            struct sockaddr_in *in = (struct sockaddr_in *)&local;
            in->sin_family = AF_INET;
            in->sin_addr = pi4.ipi_addr;
            in->sin_port = htons((uint16_t)pm->port);
            locallen = sizeof *in;
            have4 = true;
        } else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO) {
            memcpy(&pi6, CMSG_DATA(cm), sizeof pi6);
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&local;
            in6->sin6_family = AF_INET6;
            in6->sin6_addr = pi6.ipi6_addr;
            in6->sin6_port = htons((uint16_t)pm->port);
            locallen = sizeof *in6;
            have6 = true;
        }
    }
    if (srv_portmap_answer(pm, buf, (size_t)n, locallen ? (struct sockaddr *)&local : NULL,
                           locallen, false, reply) != SRV_DISPATCH_REPLY)
        return;

    /* Reply from the address the call was sent to. */
    unsigned char obuf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
    struct iovec oiov = {reply->data, reply->len};
    struct msghdr out = {
        .msg_name = &peer, .msg_namelen = msg.msg_namelen, .msg_iov = &oiov, .msg_iovlen = 1};
    memset(obuf, 0, sizeof obuf);
    if (have4 || have6) {
        out.msg_control = obuf;
        out.msg_controllen = have6 ? CMSG_SPACE(sizeof pi6) : CMSG_SPACE(sizeof pi4);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&out);
        if (have6) {
            struct in6_pktinfo p = {.ipi6_addr = pi6.ipi6_addr};
            cm->cmsg_level = IPPROTO_IPV6;
            cm->cmsg_type = IPV6_PKTINFO;
            cm->cmsg_len = CMSG_LEN(sizeof p);
            memcpy(CMSG_DATA(cm), &p, sizeof p);
        } else {
            struct in_pktinfo p = {.ipi_spec_dst = pi4.ipi_addr};
            cm->cmsg_level = IPPROTO_IP;
            cm->cmsg_type = IP_PKTINFO;
            cm->cmsg_len = CMSG_LEN(sizeof p);
            memcpy(CMSG_DATA(cm), &p, sizeof p);
        }
    }
    if (sendmsg(pm->udp_fd, &out, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
        g_debug("portmapper: UDP reply not sent: %s", g_strerror(errno));
}

static void srv_pmap_accept(srv_portmap *pm)
{
    int fd = accept4(pm->tcp_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

    if (fd < 0)
        return;
    if (pm->nconns >= SRV_PMAP_CONNS_MAX) {
        close(fd);
        return;
    }
    srv_pmap_conn *c = &pm->conns[pm->nconns++];
    c->fd = fd;
    c->last_us = g_get_monotonic_time();
    srv_record_init(&c->rec, SRV_PMAP_RECORD_MAX);
}

static void *srv_pmap_main(void *arg)
{
    srv_portmap *pm = arg;
    struct pollfd fds[3 + SRV_PMAP_CONNS_MAX];
    srv_buf reply = {0};

    for (;;) {
        unsigned n = 0, nconns = pm->nconns;
        fds[n++] = (struct pollfd){.fd = pm->wake_fd, .events = POLLIN};
        fds[n++] = (struct pollfd){.fd = pm->tcp_fd, .events = POLLIN};
        fds[n++] = (struct pollfd){.fd = pm->udp_fd, .events = POLLIN};
        for (unsigned i = 0; i < nconns; i++)
            fds[n++] = (struct pollfd){.fd = pm->conns[i].fd, .events = POLLIN};
        int k = poll(fds, n, 1000);
        if (k < 0 && errno != EINTR) {
            g_warning("portmapper: poll: %s: stopping", g_strerror(errno));
            break;
        }
        if (fds[0].revents)
            break;
        /* Connections first (their indexes are those polled), newest last. */
        for (unsigned i = nconns; i-- > 0;) {
            srv_pmap_conn *c = &pm->conns[i];
            bool keep = true;
            if (fds[3 + i].revents & (POLLIN | POLLERR | POLLHUP))
                keep = srv_pmap_conn_read(pm, c, &reply);
            if (keep && g_get_monotonic_time() - c->last_us > SRV_PMAP_IDLE_S * G_USEC_PER_SEC)
                keep = false;
            if (!keep)
                srv_pmap_conn_close(pm, i);
        }
        if (fds[1].revents & POLLIN)
            srv_pmap_accept(pm);
        if (fds[2].revents & POLLIN)
            srv_pmap_udp_read(pm, &reply);
    }
    srv_buf_clear(&reply);
    return NULL;
}

/* ---- start and stop -------------------------------------------------------- */

/* Bind a socket of type on the listen address and port. Returns the fd or -errno. */
static int srv_pmap_bind(const srv_portmap *pm, int type)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int one = 1;
    int fd = socket(pm->family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -errno;
    memset(&ss, 0, sizeof ss);
    if (pm->family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)pm->port);
        memcpy(&in->sin_addr, pm->listen_ip, 4);
        len = sizeof *in;
        if (type == SOCK_DGRAM)
            setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        int off = 0;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)pm->port);
        memcpy(&in6->sin6_addr, pm->listen_ip, 16);
        len = sizeof *in6;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
        if (type == SOCK_DGRAM) {
            setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
            setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
        }
    }
    if (type == SOCK_STREAM)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 ||
        (type == SOCK_STREAM && listen(fd, 64) != 0)) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    return fd;
}

static void srv_pmap_add(srv_portmap *pm, uint32_t prog, uint32_t vers, uint32_t prot,
                         unsigned port)
{
    if (pm->nmaps < SRV_PMAP_MAPS_MAX)
        pm->maps[pm->nmaps++] = (srv_pmap_map){prog, vers, prot, port};
}

/* Serve our own portmapper. Returns it, or NULL with *why = -errno. */
static srv_portmap *srv_pmap_serve(srv_server *s, int *why)
{
    const cfg *c = s->cfg;
    srv_portmap *pm = g_new0(srv_portmap, 1);
    const uint32_t progs[] = {SRV_PMAP_NFS_PROG, SRV_PMAP_MOUNT_PROG};
    bool udp = s->udp_fd >= 0;
    int rc;

    pm->tcp_fd = pm->udp_fd = pm->wake_fd = -1;
    pm->port = c->portmap_port;
    if (inet_pton(AF_INET, c->listen, pm->listen_ip) == 1) {
        pm->family = AF_INET;
        pm->wildcard = memcmp(pm->listen_ip, "\0\0\0\0", 4) == 0;
    } else if (inet_pton(AF_INET6, c->listen, pm->listen_ip) == 1) {
        pm->family = AF_INET6;
        pm->wildcard = IN6_IS_ADDR_UNSPECIFIED((struct in6_addr *)pm->listen_ip);
    } else {
        rc = -EINVAL;
        goto err;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(progs); i++) {
        srv_pmap_add(pm, progs[i], 3, PGNFS_PMAP_IPPROTO_TCP, s->port);
        if (udp)
            srv_pmap_add(pm, progs[i], 3, PGNFS_PMAP_IPPROTO_UDP, s->port);
    }
    for (uint32_t v = 2; v <= 4; v++) {
        srv_pmap_add(pm, PGNFS_PMAP_PROG, v, PGNFS_PMAP_IPPROTO_TCP, pm->port);
        srv_pmap_add(pm, PGNFS_PMAP_PROG, v, PGNFS_PMAP_IPPROTO_UDP, pm->port);
    }
    if ((rc = srv_pmap_bind(pm, SOCK_STREAM)) < 0)
        goto err;
    pm->tcp_fd = rc;
    if ((rc = srv_pmap_bind(pm, SOCK_DGRAM)) < 0)
        goto err;
    pm->udp_fd = rc;
    pm->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (pm->wake_fd < 0) {
        rc = -errno;
        goto err;
    }
    rc = -pthread_create(&pm->thread, NULL, srv_pmap_main, pm);
    if (rc != 0)
        goto err;
    pm->started = true;
    return pm;
err:
    *why = rc;
    srv_portmap_stop(pm);
    return NULL;
}

int srv_portmap_start(srv_server *s, srv_rpcbind *rb, srv_portmap **out)
{
    const cfg *c = s->cfg;
    bool udp = s->udp_fd >= 0;
    int why = 0;

    *out = NULL;
    memset(rb, 0, sizeof *rb);
    if (strcmp(c->portmap, "on") != 0 && (strcmp(c->portmap, "off") == 0 || srv_rpcbind_probe())) {
        if (c->rpcbind)
            srv_rpcbind_register(rb, s->port, udp);
        else
            g_message("portmapper: [server] rpcbind = false: not registering; clients need "
                      "port=%u,mountport=%u",
                      s->port, s->port);
        return 0;
    }
    *out = srv_pmap_serve(s, &why);
    if (*out) {
        g_message("portmapper: serving PMAP v2 and rpcbind v3/v4 on %s port %u (tcp and udp) for "
                  "nfs and mount v3 at port %u",
                  c->listen, c->portmap_port, s->port);
        return 0;
    }
    if (strcmp(c->portmap, "on") == 0) {
        g_critical("portmapper: cannot serve port %u on %s: %s ([server] portmap = on)",
                   c->portmap_port, c->listen, g_strerror(-why));
        return -1;
    }
    g_message("portmapper: no portmapper runs and port %u cannot be bound (%s): clients need "
              "port=%u,mountport=%u (libnfs: ?nfsport=%u&mountport=%u)",
              c->portmap_port, g_strerror(-why), s->port, s->port, s->port, s->port);
    return 0;
}

void srv_portmap_stop(srv_portmap *pm)
{
    if (!pm)
        return;
    if (pm->started) {
        uint64_t one = 1;
        if (write(pm->wake_fd, &one, sizeof one) != (ssize_t)sizeof one)
            g_warning("portmapper: cannot wake its thread: %s", g_strerror(errno));
        pthread_join(pm->thread, NULL);
    }
    while (pm->nconns > 0)
        srv_pmap_conn_close(pm, pm->nconns - 1);
    if (pm->tcp_fd >= 0)
        close(pm->tcp_fd);
    if (pm->udp_fd >= 0)
        close(pm->udp_fd);
    if (pm->wake_fd >= 0)
        close(pm->wake_fd);
    g_free(pm);
}
