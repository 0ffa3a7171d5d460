/*
 * srv_client_msg.c -- the messages of the outgoing RPC client
 * (srv_client_int.h): calls encoded with libtirpc's xdr_callmsg (our own
 * data: nothing to be strict about), the AUTH_SYS body with
 * xdr_authunix_parms, replies decoded with xdr_replymsg into our own
 * buffers (the verifier into a local array: no allocation but the
 * result's).
 *
 * NOTES
 *   A reply is remote input: it is decoded from exactly the bytes that
 *   came (xdrmem refuses to read beyond them), and a result that fails
 *   half-way is freed with xdr_free before -EPROTO is returned.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rpc/rpc.h>

#include <glib.h>

#include "srv_client_int.h"

#define SRV_CLIENT_MACHINE_MAX 255
/* Call header without credential and verifier bodies: xid, CALL, rpcvers,
 * prog, vers, proc, two flavors and two lengths. */
#define SRV_CLIENT_HEAD 40
#define SRV_RPC_REPLY   1

/* The AUTH_SYS body for machine, uid, gid into body; its length, or 0. */
static u_int srv_client_authsys(const srv_client_call *call, char body[MAX_AUTH_BYTES])
{
    struct authunix_parms p = {0};
    XDR x;

    p.aup_time = (u_long)(time(NULL) & 0xffffffff);
    p.aup_machname = (char *)call->machine;
    p.aup_uid = call->uid;
    p.aup_gid = call->gid;
    p.aup_len = 0;
    p.aup_gids = NULL;
    xdrmem_create(&x, body, MAX_AUTH_BYTES, XDR_ENCODE);
    u_int len = xdr_authunix_parms(&x, &p) ? xdr_getpos(&x) : 0;
    xdr_destroy(&x);
    return len;
}

int srv_client_encode(const srv_client_call *call, uint32_t xid, unsigned char **rec, size_t *len)
{
    xdrproc_t args_xdr = call->args_xdr ? call->args_xdr : (xdrproc_t)(void (*)(void))xdr_void;
    struct rpc_msg m;
    char cred[MAX_AUTH_BYTES];
    u_int credlen = 0;
    XDR x;

    if (call->machine) {
        if (strlen(call->machine) > SRV_CLIENT_MACHINE_MAX)
            return -EINVAL;
        if ((credlen = srv_client_authsys(call, cred)) == 0)
            return -EINVAL;
    }
    /* 0 also when args do not encode: the encoding below then fails. */
    unsigned long argsize = call->args_xdr ? xdr_sizeof(args_xdr, (void *)call->args) : 0;
    size_t cap = 4 + SRV_CLIENT_HEAD + credlen + argsize;
    if (cap - 4 > SRV_CLIENT_CALL_MAX)
        return -EINVAL;
    memset(&m, 0, sizeof m);
    m.rm_xid = xid;
    m.rm_direction = CALL;
    m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
    m.rm_call.cb_prog = call->prog;
    m.rm_call.cb_vers = call->vers;
    m.rm_call.cb_proc = call->proc;
    m.rm_call.cb_cred = _null_auth;
    if (call->machine) {
        m.rm_call.cb_cred.oa_flavor = AUTH_SYS;
        m.rm_call.cb_cred.oa_base = cred;
        m.rm_call.cb_cred.oa_length = credlen;
    }
    m.rm_call.cb_verf = _null_auth;
    unsigned char *buf = g_malloc(cap);
    xdrmem_create(&x, (char *)buf + 4, (u_int)(cap - 4), XDR_ENCODE);
    bool ok = xdr_callmsg(&x, &m) && args_xdr(&x, (void *)call->args);
    size_t n = ok ? xdr_getpos(&x) : 0;
    xdr_destroy(&x);
    if (!ok) {
        g_free(buf);
        return -EINVAL;
    }
    srv_record_mark(buf, n);
    *rec = buf;
    *len = n + 4;
    return 0;
}

bool srv_client_peek(const unsigned char *msg, size_t len, uint32_t *xid)
{
    if (len < 8)
        return false;
    uint32_t dir = (uint32_t)msg[4] << 24 | (uint32_t)msg[5] << 16 | (uint32_t)msg[6] << 8 | msg[7];
    if (dir != SRV_RPC_REPLY)
        return false;
    *xid = (uint32_t)msg[0] << 24 | (uint32_t)msg[1] << 16 | (uint32_t)msg[2] << 8 | msg[3];
    return true;
}

int srv_client_decode(const unsigned char *msg, size_t len, xdrproc_t res_xdr, size_t res_size,
                      void **res)
{
    char verf[MAX_AUTH_BYTES];
    struct rpc_msg m;
    void *out = res_xdr ? g_malloc0(res_size) : NULL;
    XDR x;

    *res = NULL;
    memset(&m, 0, sizeof m);
    m.acpted_rply.ar_verf.oa_base = verf; /* decoded into verf, not allocated */
    m.acpted_rply.ar_results.where = out;
    m.acpted_rply.ar_results.proc = res_xdr ? res_xdr : (xdrproc_t)(void (*)(void))xdr_void;
    xdrmem_create(&x, (char *)msg, (u_int)len, XDR_DECODE);
    bool ok = xdr_replymsg(&x, &m);
    xdr_destroy(&x);
    if (ok && m.rm_reply.rp_stat == MSG_ACCEPTED && m.acpted_rply.ar_stat == SUCCESS) {
        *res = out;
        return 0;
    }
    if (out) {
        xdr_free(res_xdr, out); /* whatever a half-decoded result holds */
        g_free(out);
    }
    return -EPROTO;
}
