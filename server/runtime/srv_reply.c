/*
 * srv_reply.c -- reply messages (srv_reply.h), encoded with libtirpc's
 * xdr_replymsg from a struct rpc_msg: the library's encoder fits here
 * (replies are ours, so there is nothing to be strict about, and it
 * allocates nothing).
 *
 * NOTES
 *   Each function replaces out's contents. A reply is encoded into out's
 *   current capacity first; if it does not fit, xdr_sizeof says how much
 *   it needs and it is encoded once more.
 */
#include <string.h>

#include "srv.h"
#include "srv_reply.h"

#define SRV_RPC_VERSION 2
/* Room for every reply but a result: the header and a version pair. */
#define SRV_REPLY_HEAD 64

/* An accepted reply of stat with an AUTH_NONE verifier. */
static struct rpc_msg srv_reply_msg(uint32_t xid, enum accept_stat stat)
{
    struct rpc_msg m;

    memset(&m, 0, sizeof m);
    m.rm_xid = xid;
    m.rm_direction = REPLY;
    m.rm_reply.rp_stat = MSG_ACCEPTED;
    m.acpted_rply.ar_verf = _null_auth;
    m.acpted_rply.ar_stat = stat;
    return m;
}

/* Encode m into out; false (out empty) if it does not fit SRV_RECORD_MAX. */
static bool srv_reply_encode(srv_buf *out, struct rpc_msg *m)
{
    XDR x;

    srv_buf_reserve(out, SRV_REPLY_HEAD);
    out->off = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        xdrmem_create(&x, (char *)out->data, (u_int)out->cap, XDR_ENCODE);
        bool ok = xdr_replymsg(&x, m);
        out->len = ok ? xdr_getpos(&x) : 0;
        xdr_destroy(&x);
        if (ok)
            return true;
        /* Out of room, or not encodable: size it and try once more. */
        u_long need = xdr_sizeof((xdrproc_t)xdr_replymsg, m);
        if (attempt > 0 || need == 0 || need > SRV_RECORD_MAX || need <= out->cap)
            break;
        srv_buf_reserve(out, need);
    }
    out->len = 0;
    return false;
}

void srv_reply_accepted(srv_buf *out, uint32_t xid, enum accept_stat stat)
{
    struct rpc_msg m = srv_reply_msg(xid, stat);

    srv_reply_encode(out, &m);
}

void srv_reply_prog_mismatch(srv_buf *out, uint32_t xid, uint32_t low, uint32_t high)
{
    struct rpc_msg m = srv_reply_msg(xid, PROG_MISMATCH);

    m.acpted_rply.ar_vers.low = low;
    m.acpted_rply.ar_vers.high = high;
    srv_reply_encode(out, &m);
}

void srv_reply_rpc_mismatch(srv_buf *out, uint32_t xid)
{
    struct rpc_msg m = srv_reply_msg(xid, SUCCESS);

    m.rm_reply.rp_stat = MSG_DENIED;
    m.rjcted_rply.rj_stat = RPC_MISMATCH;
    m.rjcted_rply.rj_vers.low = SRV_RPC_VERSION;
    m.rjcted_rply.rj_vers.high = SRV_RPC_VERSION;
    srv_reply_encode(out, &m);
}

void srv_reply_auth_error(srv_buf *out, uint32_t xid, enum auth_stat why)
{
    struct rpc_msg m = srv_reply_msg(xid, SUCCESS);

    m.rm_reply.rp_stat = MSG_DENIED;
    m.rjcted_rply.rj_stat = AUTH_ERROR;
    m.rjcted_rply.rj_why = why;
    srv_reply_encode(out, &m);
}

bool srv_reply_success(srv_buf *out, uint32_t xid, xdrproc_t res_xdr, void *res)
{
    struct rpc_msg m = srv_reply_msg(xid, SUCCESS);

    m.acpted_rply.ar_results.where = res;
    m.acpted_rply.ar_results.proc = res_xdr ? res_xdr : (xdrproc_t)(void (*)(void))xdr_void;
    return srv_reply_encode(out, &m);
}

/* srv_reply_payload -- see srv_reply.h. */
bool srv_reply_payload(srv_buf *out, uint32_t xid, xdrproc_t res_xdr, void *res,
                       const unsigned char *payload, size_t cap)
{
    struct rpc_msg m = srv_reply_msg(xid, SUCCESS);
    srv_buf aside = {0};
    bool ok;

    m.acpted_rply.ar_results.where = res;
    m.acpted_rply.ar_results.proc = res_xdr ? res_xdr : (xdrproc_t)(void (*)(void))xdr_void;
    if (srv_xout_encode(out, (xdrproc_t)xdr_replymsg, &m, payload, cap))
        return true;
    /* The payload is still in out: encode elsewhere, then copy over it. */
    ok = srv_reply_encode(&aside, &m);
    if (ok)
        srv_buf_set(out, aside.data, aside.len);
    else
        out->len = 0;
    srv_buf_clear(&aside);
    return ok;
}
