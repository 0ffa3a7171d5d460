/*
 * nlm4_out.c -- the calls the lock service makes to other hosts (GRANTED
 * and GRANTED_MSG callbacks, the *_RES answers to *_MSG calls, SM_NOTIFY
 * after a restart), through the runtime's asynchronous client
 * (srv_client.h): a worker that makes one only submits it.
 *
 *   new (arguments encoded once) --send--> [local host: GETPORT at its
 *   portmapper --our own port: dropped, counted "self"] --> the call
 *   --reply--> done, counted --failure--> queued for another attempt
 *   (nlm4_bg.c, NLM4_CB_RETRY_US later, NLM4_CB_ATTEMPTS in all) or
 *   dropped, counted "failed", one rate-limited log line
 *
 * Never to ourselves: a request that reaches us from an address of this
 * machine (the loopback, or the very address it arrived on, as through a
 * NAT that hides the client behind us) would have its callback looked up
 * at our own portmapper; the port is looked up here first, and a call to
 * the port we serve on is not made. Other hosts are called at the port
 * their portmapper gives (srv_client asks it).
 *
 * NOTES
 *   An nlm4_out owns its encoded arguments; whoever holds it (the
 *   srv_client call in flight, the retry queue) frees it at the end.
 *   Done functions run on the srv_client's thread.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "nlm4_int.h"
#include "pmap.h"

/* The arguments as encoded (the srv_client's args_xdr for an nlm4_out). */
static bool_t nlm4_out_raw(XDR *x, void *arg)
{
    nlm4_out *o = arg;

    return x->x_op == XDR_ENCODE && xdr_opaque(x, (char *)o->args, (u_int)o->len);
}

/* Is a an address of this machine: loopback, or the one its request
 * arrived on (b, may be NULL)? */
static bool nlm4_out_is_local(const struct sockaddr_storage *a, const struct sockaddr *b,
                              socklen_t blen)
{
    struct sockaddr_storage bb;

    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)a;

        if ((ntohl(s->sin_addr.s_addr) >> 24) == 127)
            return true;
    } else if (a->ss_family == AF_INET6) {
        if (IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr))
            return true;
    }
    if (!b || blen == 0 || blen > sizeof bb)
        return false;
    memcpy(&bb, b, blen);
    nlm4_unmap(&bb, &blen);
    if (bb.ss_family != a->ss_family)
        return false;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)&bb)->sin_addr.s_addr;
    return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                  &((const struct sockaddr_in6 *)&bb)->sin6_addr, sizeof(struct in6_addr)) == 0;
}

static void nlm4_out_port(struct sockaddr_storage *sa, unsigned port)
{
    if (sa->ss_family == AF_INET)
        ((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
    else if (sa->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
}

/* nlm4_out_new -- see nlm4_int.h. */
nlm4_out *nlm4_out_new(nlm4_svc *svc, const struct sockaddr *dest, socklen_t destlen,
                       const struct sockaddr *arrived, socklen_t arrivedlen, bool tcp,
                       uint32_t prog, uint32_t vers, uint32_t proc, xdrproc_t xdr_args,
                       const void *args, const char *what)
{
    unsigned long len = xdr_sizeof(xdr_args, (void *)args);
    nlm4_out *o;
    XDR x;

    if (len == 0 || len > SRV_CLIENT_CALL_MAX || destlen > sizeof o->dest ||
        (dest->sa_family != AF_INET && dest->sa_family != AF_INET6)) {
        g_warning("nlm: %s: cannot make this call (%lu bytes of arguments)", what, len);
        return NULL;
    }
    o = g_malloc0(sizeof *o + len);
    xdrmem_create(&x, (char *)o->args, (u_int)len, XDR_ENCODE);
    if (!xdr_args(&x, (void *)args)) {
        xdr_destroy(&x);
        g_free(o);
        g_warning("nlm: %s: the arguments do not encode", what);
        return NULL;
    }
    o->len = xdr_getpos(&x);
    xdr_destroy(&x);
    o->svc = svc;
    memcpy(&o->dest, dest, destlen);
    o->destlen = destlen;
    nlm4_unmap(&o->dest, &o->destlen);
    nlm4_out_port(&o->dest, 0);
    o->local = nlm4_out_is_local(&o->dest, arrived, arrivedlen);
    o->tcp = tcp;
    o->prog = prog;
    o->vers = vers;
    o->proc = proc;
    o->what = what;
    return o;
}

/* nlm4_out_free -- see nlm4_int.h. */
void nlm4_out_free(nlm4_out *o)
{
    g_free(o);
}

/* The final outcome of o: counted, logged when it failed, freed. */
static void nlm4_out_end(nlm4_out *o, int err)
{
    nlm4_svc *svc = o->svc;
    unsigned suppressed = 0;
    char who[LOG_PEER_STRLEN];
    bool grant =
        o->prog == NLM_PROG && (o->proc == NLMPROC_GRANTED || o->proc == NLMPROC_GRANTED_MSG);

    if (err == 0) {
        atomic_fetch_add(o->callback ? &svc->cb_sent : &svc->notify_sent, 1);
        nlm4_out_free(o);
        return;
    }
    atomic_fetch_add(o->callback ? &svc->cb_failed : &svc->notify_failed, 1);
    if (err != -ECANCELED &&
        log_ratelimit_allow(svc->rl, (const struct sockaddr *)&o->dest, &suppressed)) {
        log_peer_string((const struct sockaddr *)&o->dest, o->destlen, who, sizeof who);
        g_message("nlm: %s to %s failed after %u attempt%s: %s%s (%u more lines suppressed)",
                  o->what, who, o->attempts, o->attempts == 1 ? "" : "s", g_strerror(-err),
                  grant ? "; the lock stays granted and the client finds it when it polls" : "",
                  suppressed);
    }
    nlm4_out_free(o);
}

/* Queue o for another attempt, which the background thread makes when
 * it is due (nlm4_bg.c pops the queue); false when it cannot wait (the
 * service stops, or the queue is full). */
static bool nlm4_out_requeue(nlm4_svc *svc, nlm4_out *o)
{
    bool queued = false;

    g_mutex_lock(&svc->retry_lock);
    if (!atomic_load(&svc->stopping) && g_queue_get_length(&svc->retry) < NLM4_RETRY_MAX) {
        o->due_us = g_get_monotonic_time() + NLM4_CB_RETRY_US;
        g_queue_push_tail(&svc->retry, o);
        queued = true;
    }
    g_mutex_unlock(&svc->retry_lock);
    return queued;
}

/* A failed attempt: again later, or the end. */
static void nlm4_out_failed(nlm4_out *o, int err)
{
    g_debug("nlm: %s: attempt %u failed: %s", o->what, o->attempts, g_strerror(-err));
    if (err != -ECANCELED && o->attempts < NLM4_CB_ATTEMPTS && nlm4_out_requeue(o->svc, o)) {
        atomic_fetch_add(&o->svc->cb_retried, 1);
        return;
    }
    nlm4_out_end(o, err);
}

/* The call's reply (or its failure). A GRANTED the client refuses (it no
 * longer waits) leaves the lock granted, as Linux's lockd does. */
static void nlm4_out_done(void *arg, int err, void *res)
{
    nlm4_out *o = arg;

    if (err != 0) {
        nlm4_out_failed(o, err);
        return;
    }
    if (res && ((const nlm4_res *)res)->stat.stat != NLM4_GRANTED)
        atomic_fetch_add(&o->svc->cb_refused, 1);
    nlm4_out_end(o, 0);
}

/* Submit the call itself to o->dest. */
static void nlm4_out_call(nlm4_out *o)
{
    bool want_res = o->prog == NLM_PROG && o->proc == NLMPROC_GRANTED;
    srv_client_call c = {
        .addr = (const struct sockaddr *)&o->dest,
        .addrlen = o->destlen,
        .tcp = o->tcp,
        .prog = o->prog,
        .vers = o->vers,
        .proc = o->proc,
        .args_xdr = (xdrproc_t)nlm4_out_raw,
        .args = o,
        /* nlm_res and nlm4_res have one layout: cookie, then the status. */
        .res_xdr = want_res ? (xdrproc_t)xdr_nlm4_res : NULL,
        .res_size = want_res ? sizeof(nlm4_res) : 0,
        .timeout_ms = NLM4_CB_TIMEOUT_MS,
        .machine = o->svc->name,
    };
    int err = srv_client_submit(o->svc->client, &c, nlm4_out_done, o);

    if (err != 0)
        nlm4_out_failed(o, err);
}

/* The local host's portmapper answered where its program lives. */
static void nlm4_out_port_done(void *arg, int err, void *res)
{
    nlm4_out *o = arg;
    unsigned port = res ? *(const u_int *)res : 0;

    if (err == 0 && port == 0)
        err = -ENOENT;
    if (err != 0) {
        nlm4_out_failed(o, err);
        return;
    }
    if (port == o->svc->port) {
        atomic_fetch_add(&o->svc->cb_self, 1);
        g_debug("nlm: %s: the host's portmapper names our own port: not called", o->what);
        nlm4_out_free(o);
        return;
    }
    nlm4_out_port(&o->dest, port);
    nlm4_out_call(o);
}

/* nlm4_out_send -- see nlm4_int.h. */
void nlm4_out_send(nlm4_out *o)
{
    struct sockaddr_storage pm;
    pgnfs_pmap_mapping m = {.prog = o->prog,
                            .vers = o->vers,
                            .prot = o->tcp ? PGNFS_PMAP_IPPROTO_TCP : PGNFS_PMAP_IPPROTO_UDP};
    srv_client_call c = {
        .addr = (const struct sockaddr *)&pm,
        .addrlen = o->destlen,
        .tcp = o->tcp,
        .prog = PGNFS_PMAP_PROG,
        .vers = PGNFS_PMAP_VERS,
        .proc = PGNFS_PMAPPROC_GETPORT,
        .args_xdr = (xdrproc_t)xdr_pgnfs_pmap_mapping,
        .args = &m,
        .res_xdr = (xdrproc_t)xdr_u_int,
        .res_size = sizeof(u_int),
        .timeout_ms = NLM4_CB_TIMEOUT_MS,
    };
    int err;

    o->attempts++;
    nlm4_out_port(&o->dest, 0);
    if (!o->local) {
        nlm4_out_call(o);
        return;
    }
    pm = o->dest;
    nlm4_out_port(&pm, NLM4_PMAP_PORT);
    err = srv_client_submit(o->svc->client, &c, nlm4_out_port_done, o);
    if (err != 0)
        nlm4_out_failed(o, err);
}
