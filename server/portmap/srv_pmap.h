/*
 * srv_pmap.h -- inside the portmapper (server/portmap/): the mapping
 * table the built-in portmapper announces (srv_pmap_map.c), its three
 * program versions as they register with the RPC runtime
 * (srv_pmap_procs.c), and the registration with a system rpcbind
 * (srv_rpcbind.c). The daemon sees srv_portmap.h only.
 *
 * NOTES
 *   The table is filled before the runtime serves and read-only after:
 *   handlers on any worker read it without a lock.
 */
#ifndef PGNFS_SRV_PMAP_H
#define PGNFS_SRV_PMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "pmap.h"
#include "srv.h"
#include "srv_rt.h"

#define SRV_PMAP_MAPS_MAX 32

/* One mapping: a program version on a transport at a port. */
typedef struct {
    uint32_t prog, vers, prot; /* prot: PGNFS_PMAP_IPPROTO_TCP or _UDP */
    unsigned port;
} srv_pmap_map;

/* What the built-in portmapper knows (the ctx of its programs). */
typedef struct {
    srv_pmap_map maps[SRV_PMAP_MAPS_MAX];
    unsigned nmaps;
    int family;                  /* of the listen address */
    unsigned char listen_ip[16]; /* the listen address, network order */
    bool wildcard;               /* listening on 0.0.0.0 or :: */
} srv_pmap;

/* ---- the table (srv_pmap_map.c) --------------------------------------------- */

/*
 * srv_pmap_init -- an empty table for a server listening on addr (numeric).
 * Returns 0, or -EINVAL if addr is no address.
 */
int srv_pmap_init(srv_pmap *pm, const char *addr);

/* srv_pmap_fill -- every mapping runtime rt serves (srv_rt_mappings). */
void srv_pmap_fill(srv_pmap *pm, const srv_rt *rt);

/*
 * srv_pmap_find -- the mapping for (prog, vers, prot), or with any_version
 * the first of prog on prot when vers has none; NULL if there is none.
 */
const srv_pmap_map *srv_pmap_find(const srv_pmap *pm, uint32_t prog, uint32_t vers, uint32_t prot,
                                  bool any_version);

/*
 * srv_pmap_getaddr -- the universal address ("127.0.0.1.8.1", RFC 1833
 * section 2.1) of the program asked for by q, on q's netid ("" = the
 * transport's: tcp or UDP, the family of local), as announced to a client
 * that reached us at local; "" when it is not served there. exact: the
 * version must match (v4 GETADDR, GETVERSADDR), else any version of the
 * program will do (v3 GETADDR). addr has size bytes.
 */
void srv_pmap_getaddr(const srv_pmap *pm, const pgnfs_rpcb *q, bool exact,
                      const struct sockaddr *local, socklen_t locallen, bool tcp, char *addr,
                      size_t size);

/*
 * srv_pmap_dump_rpcb -- every mapping for every address family we can
 * announce to a client at local, as an rpcbind DUMP list in request
 * memory of req. NULL for an empty list.
 */
pgnfs_rpcb_list *srv_pmap_dump_rpcb(const srv_pmap *pm, srv_req *req);

/* srv_pmap_dump_v2 -- every mapping as a PORTMAP v2 DUMP list in request
 * memory of req. NULL for an empty list. */
pgnfs_pmap_list *srv_pmap_dump_v2(const srv_pmap *pm, srv_req *req);

/* ---- the programs (srv_pmap_procs.c) ----------------------------------------- */

/* PORTMAP v2, rpcbind v3 and v4, in that order. */
#define SRV_PMAP_NPROGS 3

/*
 * srv_pmap_programs -- the descriptors of the built-in portmapper's three
 * versions into out, each with ctx pm (which must outlive them). Any
 * credential is taken (SRV_AUTH_ANY); DUMP is TCP-only (its reply is many
 * times its call: over UDP it would make port 111 an amplifier); SET and
 * UNSET answer false to everyone. Cannot fail.
 */
void srv_pmap_programs(srv_pmap *pm, srv_program out[SRV_PMAP_NPROGS]);

/* ---- a system rpcbind (srv_rpcbind.c) ------------------------------------------ */

/* A program version to register with a system rpcbind. */
typedef struct {
    const char *name; /* the descriptor's, for logs */
    uint32_t prog, vers;
    unsigned port;
    bool udp; /* served over UDP too */
    bool set; /* registered by us: to undo at exit */
} srv_rpcbind_prog;

/* What we registered with a system rpcbind, to undo at exit. */
typedef struct {
    unsigned n;
    srv_rpcbind_prog progs[SRV_PMAP_MAPS_MAX];
} srv_rpcbind;

/*
 * srv_rpcbind_register -- if a portmapper answers on 127.0.0.1:111 (within
 * a short timeout), register every program version rt serves (TCP, and
 * UDP where served) there. Logs what it did; never fails the server.
 */
void srv_rpcbind_register(srv_rpcbind *r, const srv_rt *rt);

/* srv_rpcbind_unregister -- undo srv_rpcbind_register, if it did anything. */
void srv_rpcbind_unregister(srv_rpcbind *r);

/*
 * srv_rpcbind_probe -- does a portmapper answer PMAP NULL on
 * 127.0.0.1:111 within half a second? Cannot fail.
 */
bool srv_rpcbind_probe(void);

#endif /* PGNFS_SRV_PMAP_H */
