/*
 * pmap_table.h -- inside the portmapper (server/portmap/): the mapping
 * table the built-in portmapper announces (pmap_map.c), its three
 * program versions as they register with the RPC runtime
 * (pmap_procs.c), and the registration with a system rpcbind
 * (pmap_rpcbind.c). The daemon sees pmap_server.h only.
 *
 * NOTES
 *   The table is filled before the runtime serves and read-only after:
 *   handlers on any worker read it without a lock.
 */
#ifndef PGNFS_PMAP_INT_H
#define PGNFS_PMAP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "pmap.h"
#include "srv.h"
#include "srv_rt.h"

#define PMAP_MAPS_MAX 32

/* One mapping: a program version on a transport at a port. */
typedef struct {
    uint32_t prog, vers, prot; /* prot: PGNFS_PMAP_IPPROTO_TCP or _UDP */
    unsigned port;
} pmap_map;

/* What the built-in portmapper knows (the ctx of its programs). */
typedef struct {
    pmap_map maps[PMAP_MAPS_MAX];
    unsigned nmaps;
    int family;                  /* of the listen address */
    unsigned char listen_ip[16]; /* the listen address, network order */
    bool wildcard;               /* listening on 0.0.0.0 or :: */
} pmap_table;

/* ---- the table (pmap_map.c) --------------------------------------------- */

/*
 * pmap_init -- an empty table for a server listening on addr (numeric).
 * Returns 0, or -EINVAL if addr is no address.
 */
int pmap_init(pmap_table *pm, const char *addr);

/* pmap_fill -- every mapping runtime rt serves (srv_rt_mappings). */
void pmap_fill(pmap_table *pm, const srv_rt *rt);

/*
 * pmap_find -- the mapping for (prog, vers, prot), or with any_version
 * the first of prog on prot when vers has none; NULL if there is none.
 */
const pmap_map *pmap_find(const pmap_table *pm, uint32_t prog, uint32_t vers, uint32_t prot,
                          bool any_version);

/*
 * pmap_getaddr -- the universal address ("127.0.0.1.8.1", RFC 1833
 * section 2.1) of the program asked for by q, on q's netid ("" = the
 * transport's: tcp or UDP, the family of local), as announced to a client
 * that reached us at local; "" when it is not served there. exact: the
 * version must match (v4 GETADDR, GETVERSADDR), else any version of the
 * program will do (v3 GETADDR). addr has size bytes.
 */
void pmap_getaddr(const pmap_table *pm, const pgnfs_rpcb *q, bool exact,
                  const struct sockaddr *local, socklen_t locallen, bool tcp, char *addr,
                  size_t size);

/*
 * pmap_dump_rpcb -- every mapping for every address family we can
 * announce to a client at local, as an rpcbind DUMP list in request
 * memory of req. NULL for an empty list.
 */
pgnfs_rpcb_list *pmap_dump_rpcb(const pmap_table *pm, srv_req *req);

/* pmap_dump_v2 -- every mapping as a PORTMAP v2 DUMP list in request
 * memory of req. NULL for an empty list. */
pgnfs_pmap_list *pmap_dump_v2(const pmap_table *pm, srv_req *req);

/* ---- the programs (pmap_procs.c) ----------------------------------------- */

/* PORTMAP v2, rpcbind v3 and v4, in that order. */
#define PMAP_NPROGS 3

/*
 * pmap_programs -- the descriptors of the built-in portmapper's three
 * versions into out, each with ctx pm (which must outlive them). Any
 * credential is taken (SRV_AUTH_ANY); DUMP is TCP-only (its reply is many
 * times its call: over UDP it would make port 111 an amplifier); SET and
 * UNSET answer false to everyone. Cannot fail.
 */
void pmap_programs(pmap_table *pm, srv_program out[PMAP_NPROGS]);

/* ---- a system rpcbind (pmap_rpcbind.c) ------------------------------------------ */

/* A program version to register with a system rpcbind. */
typedef struct {
    const char *name; /* the descriptor's, for logs */
    uint32_t prog, vers;
    unsigned port;
    bool udp; /* served over UDP too */
    bool set; /* registered by us: to undo at exit */
} pmap_rpcbind_prog;

/* What we registered with a system rpcbind, to undo at exit. */
typedef struct {
    unsigned n;
    pmap_rpcbind_prog progs[PMAP_MAPS_MAX];
} pmap_rpcbind;

/*
 * pmap_rpcbind_register -- if a portmapper answers on 127.0.0.1:111 (within
 * a short timeout), register every program version rt serves (TCP, and
 * UDP where served) there. Logs what it did; never fails the server.
 */
void pmap_rpcbind_register(pmap_rpcbind *r, const srv_rt *rt);

/* pmap_rpcbind_unregister -- undo pmap_rpcbind_register, if it did anything. */
void pmap_rpcbind_unregister(pmap_rpcbind *r);

/*
 * pmap_rpcbind_probe -- does a portmapper answer PMAP NULL on
 * 127.0.0.1:111 within half a second? Cannot fail.
 */
bool pmap_rpcbind_probe(void);

#endif /* PGNFS_PMAP_INT_H */
