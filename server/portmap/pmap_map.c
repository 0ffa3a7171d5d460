/*
 * pmap_map.c -- the built-in portmapper's mapping table (pmap_table.h):
 * what the runtime serves where, and the addresses to announce for it.
 *
 * The mappings are what the runtime's listeners serve (srv_rt_mappings):
 * NFS v3 and MOUNT v3 on the server's port (tcp, and udp when it serves
 * UDP), and the portmapper itself (v2, v3, v4). GETADDR answers a
 * universal address built from the address the request came in on (when
 * the server listens on a wildcard address) or the listen address, so a
 * client is told an address it can reach; v4 GETADDR and GETVERSADDR want
 * the exact version, v3 GETADDR takes any version of the program on that
 * netid (the client learns the versions from PROG_MISMATCH, as with
 * rpcbind).
 *
 * NOTES
 *   Lists for DUMP replies are built in request memory (srv_req_alloc):
 *   nothing here frees.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "pmap_int.h"

/* Room for "ffff:...:ffff.255.255". */
#define PMAP_UADDR_LEN 64

int pmap_init(pmap_table *pm, const char *addr)
{
    memset(pm, 0, sizeof *pm);
    if (inet_pton(AF_INET, addr, pm->listen_ip) == 1) {
        pm->family = AF_INET;
        pm->wildcard = memcmp(pm->listen_ip, "\0\0\0\0", 4) == 0;
        return 0;
    }
    if (inet_pton(AF_INET6, addr, pm->listen_ip) == 1) {
        pm->family = AF_INET6;
        pm->wildcard = IN6_IS_ADDR_UNSPECIFIED((struct in6_addr *)pm->listen_ip);
        return 0;
    }
    return -EINVAL;
}

static void pmap_add(void *user, const srv_program *p, bool tcp, unsigned port)
{
    pmap_table *pm = user;

    if (pm->nmaps < PMAP_MAPS_MAX)
        pm->maps[pm->nmaps++] = (pmap_map){
            p->prog, p->vers, tcp ? PGNFS_PMAP_IPPROTO_TCP : PGNFS_PMAP_IPPROTO_UDP, port};
}

void pmap_fill(pmap_table *pm, const srv_rt *rt)
{
    pm->nmaps = 0;
    srv_rt_mappings(rt, pmap_add, pm);
}

const pmap_map *pmap_find(const pmap_table *pm, uint32_t prog, uint32_t vers, uint32_t prot,
                          bool any_version)
{
    const pmap_map *other = NULL;

    for (unsigned i = 0; i < pm->nmaps; i++) {
        const pmap_map *m = &pm->maps[i];
        if (m->prog != prog || m->prot != prot)
            continue;
        if (m->vers == vers)
            return m;
        if (!other)
            other = m;
    }
    return any_version ? other : NULL;
}

static const char *pmap_netid(uint32_t prot, int family)
{
    if (family == AF_INET6)
        return prot == PGNFS_PMAP_IPPROTO_TCP ? "tcp6" : "udp6";
    return prot == PGNFS_PMAP_IPPROTO_TCP ? "tcp" : "udp";
}

/* A netid's protocol and address family; false for netids we do not serve. */
static bool pmap_parse_netid(const char *netid, uint32_t *prot, int *family)
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

/* The address family and bytes of local (IPv4-mapped folded); AF_UNSPEC if none. */
static int pmap_local(const struct sockaddr *local, socklen_t locallen, unsigned char ip[16])
{
    memset(ip, 0, 16);
    if (local && local->sa_family == AF_INET && locallen >= (socklen_t)sizeof(struct sockaddr_in)) {
        memcpy(ip, &((const struct sockaddr_in *)local)->sin_addr, 4);
        return AF_INET;
    }
    if (local && local->sa_family == AF_INET6 &&
        locallen >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)local)->sin6_addr;
        bool mapped = IN6_IS_ADDR_V4MAPPED(a);
        memcpy(ip, mapped ? a->s6_addr + 12 : a->s6_addr, mapped ? 4 : 16);
        return mapped ? AF_INET : AF_INET6;
    }
    return AF_UNSPEC;
}

/*
 * The address (family, 4 or 16 bytes) to announce for netid family
 * `family` to a client that reached us at local. Returns false when we
 * have no such address (an IPv6 netid on an IPv4-only server, ...).
 */
static bool pmap_announce_ip(const pmap_table *pm, int family, const struct sockaddr *local,
                             socklen_t locallen, unsigned char ip[16])
{
    unsigned char here[16];
    int here_family = pmap_local(local, locallen, here);

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
static void pmap_uaddr(int family, const unsigned char ip[16], unsigned port, char *buf,
                       size_t size)
{
    char host[INET6_ADDRSTRLEN];

    inet_ntop(family, ip, host, sizeof host);
    snprintf(buf, size, "%s.%u.%u", host, (port >> 8) & 0xffu, port & 0xffu);
}

void pmap_getaddr(const pmap_table *pm, const pgnfs_rpcb *q, bool exact,
                  const struct sockaddr *local, socklen_t locallen, bool tcp, char *addr,
                  size_t size)
{
    uint32_t prot;
    int family;
    unsigned char ip[16];
    const pmap_map *m;

    addr[0] = '\0';
    if (q->r_netid && *q->r_netid) {
        if (!pmap_parse_netid(q->r_netid, &prot, &family))
            return;
    } else {
        prot = tcp ? PGNFS_PMAP_IPPROTO_TCP : PGNFS_PMAP_IPPROTO_UDP;
        family = local && local->sa_family == AF_INET6 ? AF_INET6 : AF_INET;
    }
    m = pmap_find(pm, q->r_prog, q->r_vers, prot, !exact);
    if (!m || !pmap_announce_ip(pm, family, local, locallen, ip))
        return;
    pmap_uaddr(family, ip, m->port, addr, size);
}

pgnfs_pmap_list *pmap_dump_v2(const pmap_table *pm, srv_req *req)
{
    pgnfs_pmap_list *head = NULL;

    for (unsigned i = pm->nmaps; i-- > 0;) {
        pgnfs_pmap_list *node = srv_req_alloc(req, sizeof *node);
        node->map.prog = pm->maps[i].prog;
        node->map.vers = pm->maps[i].vers;
        node->map.prot = pm->maps[i].prot;
        node->map.port = pm->maps[i].port;
        node->next = head;
        head = node;
    }
    return head;
}

pgnfs_rpcb_list *pmap_dump_rpcb(const pmap_table *pm, srv_req *req)
{
    const struct sockaddr *local = req->locallen ? (const struct sockaddr *)&req->local : NULL;
    const int families[] = {AF_INET, AF_INET6};
    pgnfs_rpcb_list *head = NULL, **tail = &head;

    for (size_t f = 0; f < G_N_ELEMENTS(families); f++) {
        unsigned char ip[16];
        if (!pmap_announce_ip(pm, families[f], local, req->locallen, ip))
            continue;
        for (unsigned i = 0; i < pm->nmaps; i++) {
            pgnfs_rpcb_list *node = srv_req_alloc(req, sizeof *node);
            char *addr = srv_req_alloc(req, PMAP_UADDR_LEN);
            pmap_uaddr(families[f], ip, pm->maps[i].port, addr, PMAP_UADDR_LEN);
            node->rpcb_map.r_prog = pm->maps[i].prog;
            node->rpcb_map.r_vers = pm->maps[i].vers;
            node->rpcb_map.r_netid = (char *)pmap_netid(pm->maps[i].prot, families[f]);
            node->rpcb_map.r_addr = addr;
            node->rpcb_map.r_owner = (char *)"pgnfsd"; /* only encoded */
            *tail = node;
            tail = &node->rpcb_next;
        }
    }
    return head;
}
