/*
 * pmap_rpcbind.c -- registration of the programs the runtime serves (NFS
 * v3 and MOUNT v3) with a system portmapper (rpcbind) on 127.0.0.1:111,
 * so that clients that ask it (mount.nfs without port=/mountport=, libnfs
 * without nfsport=) find our port (pmap_table.h).
 *
 * We speak PORTMAP version 2 (RFC 1833 section 3) over TCP through the
 * runtime's outgoing RPC client (srv_client.h: the call and reply
 * encodings live there, once): every call has a short deadline
 * (PMAP_TIMEOUT_MS), so a missing or stuck portmapper costs at most a
 * second or two at start and exit and never hangs the server (libtirpc's
 * pmap_set waits up to a minute). The calls are SET/UNSET/GETPORT with
 * AUTH_NONE; rpcbind accepts SET and UNSET from the loopback address.
 *
 *   register:   NULL (is anyone there?) -- no answer: log, carry on
 *               for each program version: GETPORT tcp -- registered to another
 *               port: leave it (another server owns it), log; else SET
 *               tcp (and udp)
 *   unregister: for what we set: GETPORT tcp still ours? then UNSET
 *               (PORTMAP UNSET drops every protocol of the version)
 *
 * NOTES
 *   No state besides the pmap_rpcbind the caller owns; each of register,
 *   unregister and probe runs its own srv_client for its few calls (one
 *   connection, reused) and frees it before returning. They block their
 *   thread (start-up and exit only), never a worker.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rpc/rpc.h>

#include <glib.h>

#include "srv_client.h"
#include "pmap_int.h"

#define PMAP_TIMEOUT_MS 1000

/*
 * One PORTMAP call through c to 127.0.0.1:111: proc with the mapping
 * (prog, vers, prot, port) as arguments (none for NULL); *result gets the
 * one-word result (bool or port; untouched for NULL). Returns 0, or a
 * negative errno (-ETIMEDOUT, -ECONNREFUSED, -EPROTO for a reply that is
 * not a successful one).
 */
static int pmap_call(srv_client *c, uint32_t proc, const uint32_t m[4], uint32_t *result,
                     unsigned timeout_ms)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(PGNFS_PMAP_PORT)};
    pgnfs_pmap_mapping map = {0};
    u_int res = 0;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (m)
        map = (pgnfs_pmap_mapping){m[0], m[1], m[2], m[3]};
    srv_client_call call = {.addr = (struct sockaddr *)&sa,
                            .addrlen = sizeof sa,
                            .tcp = true,
                            .prog = PGNFS_PMAP_PROG,
                            .vers = PGNFS_PMAP_VERS,
                            .proc = proc,
                            .args_xdr = m ? (xdrproc_t)xdr_pgnfs_pmap_mapping : NULL,
                            .args = &map,
                            .res_xdr = m ? (xdrproc_t)xdr_u_int : NULL,
                            .res_size = sizeof res,
                            .timeout_ms = timeout_ms};
    int rc = srv_client_call_sync(c, &call, m ? &res : NULL);
    if (rc == 0 && result)
        *result = res;
    return rc;
}

/* A client for a few calls to the local portmapper; NULL (logged) if none can be made. */
static srv_client *pmap_client(void)
{
    srv_client *c = srv_client_new(&(srv_client_opts){.max_pending = 4, .max_per_host = 4});

    if (!c)
        g_warning("rpcbind: no RPC client: not talking to the portmapper");
    return c;
}

/* Register (prog, vers) for tcp (and udp) at port; true if anything was set. */
static bool pmap_register(srv_client *c, const char *name, uint32_t prog, uint32_t vers,
                          unsigned port, bool udp)
{
    uint32_t m[4] = {prog, vers, PGNFS_PMAP_IPPROTO_TCP, port}, res = 0;
    int rc;

    rc = pmap_call(c, PGNFS_PMAPPROC_GETPORT, m, &res, PMAP_TIMEOUT_MS);
    if (rc == 0 && res != 0 && res != port) {
        g_warning("rpcbind: %s is registered at port %u by another server: leaving it (clients "
                  "asking rpcbind reach that server; give them port=%u)",
                  name, res, port);
        return false;
    }
    if (rc == 0 && res == port) {
        /* A leftover of an earlier run of ours (or of a crash): replace it. */
        pmap_call(c, PGNFS_PMAPPROC_UNSET, m, &res, PMAP_TIMEOUT_MS);
    }
    bool any = false;
    for (int i = 0; i < (udp ? 2 : 1); i++) {
        m[2] = i == 0 ? PGNFS_PMAP_IPPROTO_TCP : PGNFS_PMAP_IPPROTO_UDP;
        rc = pmap_call(c, PGNFS_PMAPPROC_SET, m, &res, PMAP_TIMEOUT_MS);
        if (rc != 0 || res == 0)
            g_warning("rpcbind: registering %s %s port %u failed: %s", name, i == 0 ? "tcp" : "udp",
                      port, rc != 0 ? g_strerror(-rc) : "refused");
        else
            any = true;
    }
    return any;
}

/* Collect a served program version (srv_rt_mappings): one entry per
 * program version and port, udp set when UDP is served too. */
static void pmap_rpcbind_collect(void *user, const srv_program *p, bool tcp, unsigned port)
{
    pmap_rpcbind *r = user;

    for (unsigned i = 0; i < r->n; i++) {
        if (r->progs[i].prog == p->prog && r->progs[i].vers == p->vers &&
            r->progs[i].port == port) {
            r->progs[i].udp |= !tcp;
            return;
        }
    }
    if (r->n < PMAP_MAPS_MAX)
        r->progs[r->n++] = (pmap_rpcbind_prog){p->name, p->prog, p->vers, port, !tcp, false};
}

/* Register every collected program version through c; log what was set. */
static void pmap_rpcbind_register_all(srv_client *c, pmap_rpcbind *r)
{
    GString *done = g_string_new(NULL);

    for (unsigned i = 0; i < r->n; i++) {
        r->progs[i].set = pmap_register(c, r->progs[i].name, r->progs[i].prog, r->progs[i].vers,
                                        r->progs[i].port, r->progs[i].udp);
        if (r->progs[i].set)
            g_string_append_printf(done, " %s (%s port %u)", r->progs[i].name,
                                   r->progs[i].udp ? "tcp and udp" : "tcp", r->progs[i].port);
    }
    if (done->len)
        g_message("rpcbind: registered%s", done->str);
    g_string_free(done, TRUE);
}

void pmap_rpcbind_register(pmap_rpcbind *r, const srv_rt *rt)
{
    memset(r, 0, sizeof *r);
    srv_rt_mappings(rt, pmap_rpcbind_collect, r);
    srv_client *c = pmap_client();
    int rc = c ? pmap_call(c, PGNFS_PMAPPROC_NULL, NULL, NULL, PMAP_TIMEOUT_MS / 2) : -ENOMEM;
    if (rc != 0) {
        unsigned port = r->n ? r->progs[0].port : 0;
        g_message("rpcbind: no portmapper answers on 127.0.0.1:111 (%s): not registering; "
                  "clients need port=%u,mountport=%u (libnfs: ?nfsport=%u&mountport=%u)",
                  g_strerror(-rc), port, port, port, port);
        r->n = 0;
    } else {
        pmap_rpcbind_register_all(c, r);
    }
    srv_client_free(c);
}

bool pmap_rpcbind_probe(void)
{
    srv_client *c = pmap_client();
    bool ok = c && pmap_call(c, PGNFS_PMAPPROC_NULL, NULL, NULL, PMAP_TIMEOUT_MS / 2) == 0;

    srv_client_free(c);
    return ok;
}

void pmap_rpcbind_unregister(pmap_rpcbind *r)
{
    srv_client *c = NULL;

    for (unsigned i = 0; i < r->n; i++) {
        uint32_t m[4] = {r->progs[i].prog, r->progs[i].vers, PGNFS_PMAP_IPPROTO_TCP,
                         r->progs[i].port},
                 res = 0;
        if (!r->progs[i].set)
            continue;
        r->progs[i].set = false;
        if (!c && (c = pmap_client()) == NULL)
            return;
        int rc = pmap_call(c, PGNFS_PMAPPROC_GETPORT, m, &res, PMAP_TIMEOUT_MS);
        if (rc == 0 && res != r->progs[i].port) {
            g_message("rpcbind: %s now belongs to port %u: leaving it", r->progs[i].name, res);
            continue;
        }
        rc = pmap_call(c, PGNFS_PMAPPROC_UNSET, m, &res, PMAP_TIMEOUT_MS);
        if (rc != 0 || res == 0)
            g_warning("rpcbind: unregistering %s failed: %s", r->progs[i].name,
                      rc != 0 ? g_strerror(-rc) : "refused");
        else
            g_message("rpcbind: unregistered %s", r->progs[i].name);
    }
    srv_client_free(c);
}
