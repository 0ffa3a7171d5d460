/*
 * nlm4_grant.c -- blocked lock requests and their grants (nlm4_int.h).
 * A request that has to wait is answered NLM4_BLOCKED at once; what the
 * server needs to call its client back when the request is granted is
 * kept with it in the database (a pgnfs_nlm_note, rpc/nlm4.x, XDR
 * encoded: opaque to dbfs). Whatever grants it -- an UNLOCK on any
 * server, a host's reboot, the end of a grace period -- hands the note
 * back, and nlm4_grant_calls makes the callback: GRANTED (GRANTED_MSG for
 * a request that came as LOCK_MSG) with the request's cookie and lock, in
 * the request's NLM version, over its transport, to its source address.
 *
 * A callback that fails does not undo the grant: the Linux client asks
 * again for a blocked lock every 30 seconds, and a LOCK from the owner
 * that holds it answers GRANTED.
 *
 * NOTES
 *   Notes are written in request memory; decoding one allocates (XDR),
 *   freed here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "nlm4_int.h"

#define NLM4_NOTE_FORMAT 1

/* The address ss as a note keeps it; its bytes go to buf (16 bytes). */
static void nlm4_note_addr(const struct sockaddr_storage *ss, socklen_t len, pgnfs_nlm_addr *out,
                           unsigned char *buf)
{
    struct sockaddr_storage s;

    memset(out, 0, sizeof *out);
    if (len == 0 || len > sizeof s)
        return;
    memcpy(&s, ss, len);
    nlm4_unmap(&s, &len);
    out->family = s.ss_family;
    if (s.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&s;

        out->addr.addr_len = 4;
        memcpy(buf, &a->sin_addr, 4);
        out->addr.addr_val = (char *)buf;
        out->port = ntohs(a->sin_port);
    } else if (s.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&s;

        out->addr.addr_len = 16;
        memcpy(buf, &a->sin6_addr, 16);
        out->addr.addr_val = (char *)buf;
        out->port = ntohs(a->sin6_port);
    } else {
        out->family = 0;
    }
}

/* nlm4_grant_note -- see nlm4_int.h. */
int nlm4_grant_note(srv_req *req, uint32_t vers, bool msg, const nlm_netobj *cookie, bool excl,
                    const nlm4_lock *lock, void **out, size_t *len)
{
    pgnfs_nlm_note n = {.format = NLM4_NOTE_FORMAT, .vers = vers, .tcp = req->tcp, .msg = msg};
    unsigned char peer[16], local[16];
    unsigned long size;
    XDR x;

    nlm4_note_addr(&req->peer, req->peerlen, &n.peer, peer);
    nlm4_note_addr(&req->local, req->locallen, &n.local, local);
    n.granted.cookie = *cookie;
    n.granted.exclusive = excl;
    n.granted.alock = *lock;
    size = xdr_sizeof((xdrproc_t)xdr_pgnfs_nlm_note, &n);
    if (size == 0 || size > DBFS_LOCK_NOTIFY_MAX) {
        srv_req_complain(req, "a blocked lock whose callback takes %lu bytes to describe", size);
        return -EINVAL;
    }
    *out = srv_req_alloc(req, size);
    xdrmem_create(&x, *out, (u_int)size, XDR_ENCODE);
    if (!xdr_pgnfs_nlm_note(&x, &n)) {
        xdr_destroy(&x);
        return -EINVAL;
    }
    *len = xdr_getpos(&x);
    xdr_destroy(&x);
    return 0;
}

/* The socket address of a note's address (port 0 when none was kept). */
static socklen_t nlm4_note_sockaddr(const pgnfs_nlm_addr *a, struct sockaddr_storage *out)
{
    memset(out, 0, sizeof *out);
    if (a->family == AF_INET && a->addr.addr_len == 4) {
        struct sockaddr_in *s = (struct sockaddr_in *)out;

        s->sin_family = AF_INET;
        memcpy(&s->sin_addr, a->addr.addr_val, 4);
        return sizeof *s;
    }
    if (a->family == AF_INET6 && a->addr.addr_len == 16) {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)out;

        s->sin6_family = AF_INET6;
        memcpy(&s->sin6_addr, a->addr.addr_val, 16);
        return sizeof *s;
    }
    return 0;
}

/* The lock of a version 4 note in version 1/3 form (32-bit offsets,
 * clamped, as Linux's lockd answers them). */
static void nlm4_note_v3(const nlm4_testargs *a, nlm_testargs *out)
{
    const nlm4_lock *l = &a->alock;

    out->cookie = a->cookie;
    out->exclusive = a->exclusive;
    out->alock.caller_name = l->caller_name;
    out->alock.fh = l->fh;
    out->alock.oh = l->oh;
    out->alock.uppid = l->svid;
    out->alock.l_offset = (u_int)MIN(l->l_offset, (uint64_t)UINT32_MAX);
    out->alock.l_len = (u_int)MIN(l->l_len, (uint64_t)UINT32_MAX);
}

/* Make the callback of one note. */
static void nlm4_grant_call(nlm4_svc *svc, const void *note, size_t len)
{
    pgnfs_nlm_note n;
    nlm_testargs v3;
    struct sockaddr_storage peer, local;
    socklen_t plen = 0, llen;
    nlm4_out *o = NULL;
    XDR x;

    memset(&n, 0, sizeof n);
    xdrmem_create(&x, (char *)note, (u_int)len, XDR_DECODE);
    if (!xdr_pgnfs_nlm_note(&x, &n) || n.format != NLM4_NOTE_FORMAT ||
        (plen = nlm4_note_sockaddr(&n.peer, &peer)) == 0) {
        g_warning("nlm: a granted request's note does not decode (%zu bytes): no callback", len);
        goto out;
    }
    llen = nlm4_note_sockaddr(&n.local, &local);
    if (n.vers == NLM4_VERS) {
        o = nlm4_out_new(svc, (struct sockaddr *)&peer, plen, (struct sockaddr *)&local, llen,
                         n.tcp, NLM_PROG, n.vers, n.msg ? NLMPROC_GRANTED_MSG : NLMPROC_GRANTED,
                         (xdrproc_t)xdr_nlm4_testargs, &n.granted, "GRANTED");
    } else {
        nlm4_note_v3(&n.granted, &v3);
        o = nlm4_out_new(svc, (struct sockaddr *)&peer, plen, (struct sockaddr *)&local, llen,
                         n.tcp, NLM_PROG, n.vers, n.msg ? NLMPROC_GRANTED_MSG : NLMPROC_GRANTED,
                         (xdrproc_t)xdr_nlm_testargs, &v3, "GRANTED");
    }
    if (o) {
        o->callback = true;
        nlm4_out_send(o);
    }
out:
    xdr_destroy(&x);
    xdr_free((xdrproc_t)xdr_pgnfs_nlm_note, (char *)&n);
}

/* nlm4_grant_calls -- see nlm4_int.h. */
void nlm4_grant_calls(nlm4_svc *svc, const dbfs_lock_result *res)
{
    for (size_t i = 0; i < res->ngrants; i++) {
        atomic_fetch_add(&svc->grants, 1);
        nlm4_grant_call(svc, res->grants[i].notify, res->grants[i].notify_len);
    }
}
