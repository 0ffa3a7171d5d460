/*
 * pmap_server.c -- who serves port 111 (pmap_server.h), so that a plain
 * `mount -t nfs host:/ /mnt` (and libnfs without nfsport=) finds NFS and
 * MOUNT on a machine with or without rpcbind:
 *
 *   [server] portmap = off   register with a running rpcbind (pmap_rpcbind.c)
 *                    = auto  a portmapper answers on 127.0.0.1:111?
 *                              yes: register with it, as "off"
 *                              no:  serve our own; if port 111 cannot be
 *                                   bound, log it and carry on
 *                    = on    serve our own; no port, no server (-1)
 *
 * Our own: a listener on [server] portmap_port (TCP and UDP) that serves
 * program 100000 only, admits everyone (rpcbind answers everyone), closes
 * connections idle for PMAP_IDLE_S and takes records of at most
 * PMAP_RECORD_MAX bytes; PORTMAP v2 and rpcbind v3/v4 registered with
 * the runtime (pmap_procs.c), answering from the mapping table of
 * everything the runtime serves (pmap_map.c). Connections count
 * against [server] max_connections and the per-address cap like any.
 *
 * NOTES
 *   The pmap_server owns the table and the descriptors the runtime
 *   points to; it is freed after the runtime.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "pmap_int.h"
#include "pmap_run.h"

#define PMAP_RECORD_MAX 8192
#define PMAP_IDLE_S     30

struct pmap_server {
    pmap_table table;
    srv_program progs[PMAP_NPROGS];
    pmap_rpcbind rb;
};

/* Serve our own on [server] portmap_port. Returns 0 or -errno. */
static int pmap_serve(pmap_server *pm, srv_rt *rt, const cfg *c)
{
    const uint32_t prog = PGNFS_PMAP_PROG;
    const srv_listen l = {.name = "portmapper",
                          .addr = c->listen,
                          .port = c->portmap_port,
                          .udp = true,
                          .progs = &prog,
                          .nprogs = 1,
                          .idle_timeout_s = PMAP_IDLE_S,
                          .record_max = PMAP_RECORD_MAX};
    const char *failed;
    unsigned bound;
    int rc;

    if ((rc = pmap_init(&pm->table, c->listen)) != 0)
        return rc;
    if ((rc = srv_rt_listen(rt, &l, &bound, &failed)) != 0)
        return rc;
    pmap_programs(&pm->table, pm->progs);
    for (unsigned i = 0; i < PMAP_NPROGS; i++)
        if ((rc = srv_rt_register(rt, &pm->progs[i])) != 0)
            return rc;
    pmap_fill(&pm->table, rt);
    return 0;
}

int pmap_start(srv_rt *rt, const cfg *c, unsigned port, bool udp, pmap_server **out)
{
    pmap_server *pm = g_new0(pmap_server, 1);
    int why;

    *out = pm;
    if (strcmp(c->portmap, "on") != 0 && (strcmp(c->portmap, "off") == 0 || pmap_rpcbind_probe())) {
        if (c->rpcbind)
            pmap_rpcbind_register(&pm->rb, rt);
        else
            g_message("portmapper: [server] rpcbind = false: not registering; clients need "
                      "port=%u,mountport=%u",
                      port, port);
        return 0;
    }
    why = pmap_serve(pm, rt, c);
    if (why == 0) {
        g_message("portmapper: serving PMAP v2 and rpcbind v3/v4 on %s port %u (tcp and udp) for "
                  "nfs and mount v3 at port %u (%s)",
                  c->listen, c->portmap_port, port, udp ? "tcp and udp" : "tcp");
        return 0;
    }
    if (strcmp(c->portmap, "on") == 0) {
        g_critical("portmapper: cannot serve port %u on %s: %s ([server] portmap = on)",
                   c->portmap_port, c->listen, g_strerror(-why));
        return -1;
    }
    g_message("portmapper: no portmapper runs and port %u cannot be bound (%s): clients need "
              "port=%u,mountport=%u (libnfs: ?nfsport=%u&mountport=%u)",
              c->portmap_port, g_strerror(-why), port, port, port, port);
    return 0;
}

void pmap_stop(pmap_server *pm)
{
    if (!pm)
        return;
    pmap_rpcbind_unregister(&pm->rb);
    g_free(pm);
}
