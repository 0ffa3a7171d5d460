/*
 * pmap_server.h -- making the daemon's programs findable through port 111,
 * as [server] portmap says: by registering them with a system rpcbind, or
 * by serving a built-in portmapper (PORTMAP v2, rpcbind v3/v4) whose
 * programs register with the RPC runtime like NFS and MOUNT do, on a
 * listener of their own.
 */
#ifndef PGNFS_PMAP_RUN_H
#define PGNFS_PMAP_RUN_H

#include "cfg.h"
#include "srv_rt.h"

typedef struct pmap_server pmap_server;

/*
 * pmap_start -- after the main listener of rt is open (serving on
 * port, UDP too if udp), make its programs findable, as [server] portmap
 * of c says:
 *
 *   off   register them with a running rpcbind (if [server] rpcbind)
 *   auto  the same when a portmapper answers on 127.0.0.1:111; otherwise
 *         serve the built-in one on [server] portmap_port, or, if that
 *         port cannot be bound, log that clients need explicit ports
 *   on    serve the built-in one; no port, no server
 *
 * *out is what pmap_stop undoes (never NULL after 0). Returns 0,
 * or -1 after logging why when "on" was asked for and the port cannot be
 * bound. The built-in portmapper's descriptors live in *out: free rt
 * before pmap_stop.
 */
int pmap_start(srv_rt *rt, const cfg *c, unsigned port, bool udp, pmap_server **out);

/* pmap_stop -- unregister from rpcbind what was registered, free pm
 * (NULL is fine). */
void pmap_stop(pmap_server *pm);

#endif /* PGNFS_PMAP_RUN_H */
