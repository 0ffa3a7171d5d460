/*
 * srv_client_pmap.c -- finding a port through the host's portmapper for
 * the outgoing RPC client (srv_client_int.h): PORTMAP version 2 GETPORT
 * (RFC 1833 section 3.2) on o.pmap_port over the call's own transport,
 * made as an internal call through the same machinery, and a small cache
 * of the answers.
 *
 *   An entry, per (host, transport, program, version):
 *
 *     (srv_cpmap_resolve) ASKING: one GETPORT in flight, calls wait on it
 *        | port (srv_cpmap_done)              | 0, error, timeout
 *        v                                     v
 *     KNOWN until expires: calls take the     gone: every waiter fails
 *     port at once; gone at expiry, or when   (-ENOENT for 0, -EPROTO for
 *     a call to that port is refused          a port beyond 65535)
 *     (srv_cpmap_forget), or evicted
 *
 * NOTES
 *   At most one lookup per entry; its deadline is the latest of its
 *   waiters' (extended as they come), so it never times out a waiter
 *   early. At most SRV_CLIENT_PMAP_CACHE known entries are kept (the one
 *   expiring first goes); entries being asked are bounded by the calls
 *   waiting on them. Negative answers are not cached.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "pmap.h"
#include "srv_client_int.h"

#define SRV_CPMAP_US_PER_MS 1000

/* The cache key of call: its host, transport, program and version. */
static void srv_cpmap_key(const srv_ccall *call, srv_ckey *k)
{
    srv_client_key_of((const struct sockaddr *)&call->addr, call->tcp, k);
    k->port = 0;
    k->prog = call->prog;
    k->vers = call->vers;
}

void srv_cpmap_free(gpointer p)
{
    srv_cpmap *e = p;

    if (e->known)
        atomic_store(&e->c->n.pmap_cached, --e->c->pmaps_known);
    g_free(e);
}

/* Keep the table within SRV_CLIENT_PMAP_CACHE known entries: when full,
 * drop the expired ones, then the one expiring first. */
static void srv_cpmap_make_room(srv_client *c, int64_t now)
{
    GHashTableIter it;
    gpointer v;
    srv_cpmap *first = NULL;

    if (c->pmaps_known < SRV_CLIENT_PMAP_CACHE)
        return;
    g_hash_table_iter_init(&it, c->pmaps);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        srv_cpmap *e = v;
        if (!e->known)
            continue;
        if (e->expires <= now)
            g_hash_table_iter_remove(&it);
        else if (!first || e->expires < first->expires)
            first = e;
    }
    if (c->pmaps_known >= SRV_CLIENT_PMAP_CACHE && first)
        g_hash_table_remove(c->pmaps, &first->key);
}

/* The lookup of e finished: its waiters go on with the port, or fail. */
static void srv_cpmap_done(void *arg, int err, void *res)
{
    srv_cpmap *e = arg;
    srv_client *c = e->c;
    GList *l;

    e->lookup = NULL;
    if (err == 0) {
        u_int port = *(u_int *)res;
        err = port == 0 ? -ENOENT : port > G_MAXUINT16 ? -EPROTO : 0;
        if (err == 0) {
            e->known = true;
            atomic_store(&c->n.pmap_cached, ++c->pmaps_known);
            e->port = port;
            e->expires =
                g_get_monotonic_time() + (int64_t)SRV_CLIENT_PMAP_TTL_MS * SRV_CPMAP_US_PER_MS;
            while ((l = g_queue_peek_head_link(&e->waiters)) != NULL) {
                srv_ccall *call = l->data;
                g_queue_unlink(&e->waiters, l);
                call->pmap = NULL;
                call->from_pmap = true;
                srv_client_set_port(&call->addr, port);
                call->state = SRV_CCALL_READY;
                g_queue_push_tail_link(&c->ready, l);
            }
            return;
        }
    }
    while ((l = g_queue_peek_head_link(&e->waiters)) != NULL) {
        srv_ccall *call = l->data;
        g_queue_unlink(&e->waiters, l);
        call->pmap = NULL;
        call->state = SRV_CCALL_LOOSE;
        srv_client_finish(c, call, err, NULL);
    }
    g_hash_table_remove(c->pmaps, &e->key);
}

/* Ask the portmapper of call's host for e's port. */
static void srv_cpmap_ask(srv_client *c, srv_cpmap *e, const srv_ccall *call, int64_t now)
{
    struct sockaddr_storage pa;
    pgnfs_pmap_mapping m = {call->prog, call->vers,
                            call->tcp ? PGNFS_PMAP_IPPROTO_TCP : PGNFS_PMAP_IPPROTO_UDP, 0};
    int64_t left_ms = (call->deadline - now) / SRV_CPMAP_US_PER_MS;

    memcpy(&pa, &call->addr, call->addrlen);
    srv_client_set_port(&pa, c->o.pmap_port);
    srv_client_call lc = {
        .addr = (struct sockaddr *)&pa,
        .addrlen = call->addrlen,
        .tcp = call->tcp,
        .prog = PGNFS_PMAP_PROG,
        .vers = PGNFS_PMAP_VERS,
        .proc = PGNFS_PMAPPROC_GETPORT,
        .args_xdr = (xdrproc_t)xdr_pgnfs_pmap_mapping,
        .args = &m,
        .res_xdr = (xdrproc_t)xdr_u_int,
        .res_size = sizeof(u_int),
        .timeout_ms = left_ms > 0 ? (unsigned)MIN(left_ms, G_MAXUINT) : 1,
    };
    atomic_fetch_add(&c->n.pmap_lookups, 1);
    e->lookup = srv_client_internal(c, &lc, srv_cpmap_done, e);
}

void srv_cpmap_resolve(srv_client *c, srv_ccall *call)
{
    int64_t now = g_get_monotonic_time();
    srv_ckey k;

    srv_cpmap_key(call, &k);
    srv_cpmap *e = g_hash_table_lookup(c->pmaps, &k);
    if (e && e->known && e->expires > now) {
        call->from_pmap = true;
        srv_client_set_port(&call->addr, e->port);
        srv_cdest_route(c, call);
        return;
    }
    if (e && e->known) {
        g_hash_table_remove(c->pmaps, &k);
        e = NULL;
    }
    if (!e) {
        srv_cpmap_make_room(c, now);
        e = g_new0(srv_cpmap, 1);
        e->c = c;
        e->key = k;
        g_hash_table_insert(c->pmaps, &e->key, e);
        srv_cpmap_ask(c, e, call, now);
    }
    call->state = SRV_CCALL_PMAP;
    call->pmap = e;
    call->link.data = call;
    g_queue_push_tail_link(&e->waiters, &call->link);
    if (call->deadline > e->lookup->deadline) {
        e->lookup->deadline = call->deadline;
        srv_client_retime(c, e->lookup);
    }
}

void srv_cpmap_unlink(srv_client *c, srv_ccall *call)
{
    (void)c;
    g_queue_unlink(&call->pmap->waiters, &call->link);
    call->pmap = NULL;
}

void srv_cpmap_forget(srv_client *c, const srv_ccall *call)
{
    srv_ckey k;

    srv_cpmap_key(call, &k);
    srv_cpmap *e = g_hash_table_lookup(c->pmaps, &k);
    if (e && e->known && e->port == srv_client_port_of(&call->addr))
        g_hash_table_remove(c->pmaps, &k);
}
