/*
 * srv_client_call.c -- a call's bookkeeping inside the outgoing RPC client
 * (srv_client_int.h), beneath everything else of it: keys, the timer
 * order, a call's record, its start and its end (srv_client_finish).
 *
 * NOTES
 *   A call's end takes it off the queue it is in; the queues of
 *   destinations and portmapper lookups belong to the files above this
 *   one, which srv_client_new hands in as c->up, so calls go one way.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "srv_client_int.h"

/* ---- keys ------------------------------------------------------------------ */

void srv_client_key_of(const struct sockaddr *sa, bool tcp, srv_ckey *k)
{
    memset(k, 0, sizeof *k);
    k->tcp = tcp;
    k->family = (uint8_t)sa->sa_family;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        memcpy(k->ip, &in->sin_addr, 4);
        k->port = ntohs(in->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
            k->family = AF_INET;
            memcpy(k->ip, in6->sin6_addr.s6_addr + 12, 4);
        } else {
            memcpy(k->ip, &in6->sin6_addr, 16);
        }
        k->port = ntohs(in6->sin6_port);
    }
}

guint srv_client_key_hash(gconstpointer k)
{
    const unsigned char *p = k;
    guint h = 2166136261u;

    for (size_t i = 0; i < sizeof(srv_ckey); i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

gboolean srv_client_key_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(srv_ckey)) == 0;
}

void srv_client_set_port(struct sockaddr_storage *sa, unsigned port)
{
    if (sa->ss_family == AF_INET)
        ((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
}

unsigned srv_client_port_of(const struct sockaddr_storage *sa)
{
    if (sa->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)sa)->sin_port);
    return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
}

/* ---- timers ---------------------------------------------------------------- */

/* srv_ccall_when -- see srv_client_int.h. */
int64_t srv_ccall_when(const srv_ccall *call)
{
    if (call->state == SRV_CCALL_SENT && !call->tcp && call->retrans_at < call->deadline)
        return call->retrans_at;
    return call->deadline;
}

static gint srv_ccall_cmp(gconstpointer a, gconstpointer b, gpointer user)
{
    const srv_ccall *x = a, *y = b;
    int64_t wx = srv_ccall_when(x), wy = srv_ccall_when(y);

    (void)user;
    if (wx != wy)
        return wx < wy ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void srv_client_retime(srv_client *c, srv_ccall *call)
{
    (void)c;
    if (call->timer)
        g_sequence_sort_changed(call->timer, srv_ccall_cmp, NULL);
}

/* ---- the end of a call ----------------------------------------------------- */

/* srv_client_uncount -- see srv_client_int.h. */
void srv_client_uncount(srv_client *c, const srv_ckey *host)
{
    g_mutex_lock(&c->lock);
    c->pending--;
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(c->per_host, host));
    if (n <= 1)
        g_hash_table_remove(c->per_host, host);
    else
        g_hash_table_insert(c->per_host, g_memdup2(host, sizeof *host), GUINT_TO_POINTER(n - 1));
    g_mutex_unlock(&c->lock);
}

void srv_client_finish(srv_client *c, srv_ccall *call, int err, void *res)
{
    switch (call->state) {
    case SRV_CCALL_PMAP:
        c->up.pmap_unlink(c, call);
        break;
    case SRV_CCALL_WAIT:
    case SRV_CCALL_WRITE:
    case SRV_CCALL_SENT:
        c->up.dest_unlink(c, call);
        break;
    case SRV_CCALL_READY:
        g_queue_unlink(&c->ready, &call->link);
        break;
    case SRV_CCALL_INBOX:
    case SRV_CCALL_LOOSE:
        break;
    }
    call->state = SRV_CCALL_LOOSE;
    if (call->timer) {
        g_hash_table_remove(c->xids, GUINT_TO_POINTER(call->xid));
        g_sequence_remove(call->timer);
        call->timer = NULL;
        g_queue_unlink(&c->calls, &call->all);
    }
    if (!call->internal) {
        srv_client_uncount(c, &call->host);
        if (err == -ETIMEDOUT)
            atomic_fetch_add(&c->n.timeouts, 1);
    }
    if (err == -ECONNREFUSED && call->from_pmap)
        c->up.pmap_forget(c, call);
    call->done(call->arg, err, res);
    if (res) {
        xdr_free(call->res_xdr, res);
        g_free(res);
    }
    g_free(call->rec);
    g_free(call);
}

/* ---- a call's record and start ---------------------------------------------- */

/* srv_ccall_new -- see srv_client_int.h. */
srv_ccall *srv_ccall_new(srv_client *c, const srv_client_call *call, srv_client_done done,
                         void *arg)
{
    srv_ccall *k = g_new0(srv_ccall, 1);
    unsigned timeout = call->timeout_ms ? call->timeout_ms : SRV_CLIENT_TIMEOUT_MS;

    k->c = c;
    k->state = SRV_CCALL_INBOX;
    memcpy(&k->addr, call->addr, call->addrlen);
    k->addrlen = call->addrlen;
    k->tcp = call->tcp;
    k->no_reply = call->no_reply;
    k->prog = call->prog;
    k->vers = call->vers;
    k->res_xdr = call->res_xdr;
    k->res_size = call->res_size;
    k->done = done;
    k->arg = arg;
    k->deadline = g_get_monotonic_time() + (int64_t)timeout * SRV_CLIENT_US_PER_MS;
    k->link.data = k;
    k->all.data = k;
    srv_client_key_of(call->addr, false, &k->host);
    k->host.port = 0;
    return k;
}

/* srv_client_begin -- see srv_client_int.h. */
void srv_client_begin(srv_client *c, srv_ccall *call)
{
    call->seq = c->seq++;
    call->rto_ms = SRV_CLIENT_RTO_MS;
    g_queue_push_tail_link(&c->calls, &call->all);
    g_hash_table_insert(c->xids, GUINT_TO_POINTER(call->xid), call);
    call->timer = g_sequence_insert_sorted(c->timers, call, srv_ccall_cmp, NULL);
}

srv_ccall *srv_client_internal(srv_client *c, const srv_client_call *call, srv_client_done done,
                               void *arg)
{
    srv_ccall *k = srv_ccall_new(c, call, done, arg);

    k->internal = true;
    g_mutex_lock(&c->lock);
    k->xid = c->next_xid++;
    g_mutex_unlock(&c->lock);
    if (srv_client_encode(call, k->xid, &k->rec, &k->len) != 0)
        g_error("srv_client: an internal call does not encode"); /* a bug: fixed arguments */
    srv_client_begin(c, k);
    k->state = SRV_CCALL_READY;
    g_queue_push_tail_link(&c->ready, &k->link);
    return k;
}
