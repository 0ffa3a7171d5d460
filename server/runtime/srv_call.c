/*
 * srv_call.c -- decoding an RPC call header and checking its credential
 * (srv_call.h).
 *
 * Why not libtirpc's xdr_callmsg: it answers only TRUE or FALSE, and
 * FALSE covers a REPLY, an RPC version other than 2, a credential or
 * verifier over 400 bytes and a truncated header alike. RFC 5531 wants
 * RPC_MISMATCH for the second and AUTH_BADCRED/AUTH_BADVERF for the third,
 * a dropped call only for the rest; telling them apart after a FALSE would
 * mean reading the partial state it leaves, which it does not promise.
 * So the header is decoded here, word by word. The AUTH_SYS body is
 * decoded by libtirpc's xdr_authunix_parms into our own buffers (no
 * allocation), with the two checks it does not make added after it: the
 * body is consumed exactly, and the machine name holds no NUL byte.
 *
 * NOTES
 *   No state, no allocation: everything goes into the caller's structs.
 */
#include <arpa/inet.h>
#include <string.h>

#include "srv_call.h"

#define SRV_RPC_VERSION 2

G_STATIC_ASSERT(NGRPS <= DBFS_NGROUPS_MAX);
G_STATIC_ASSERT(MAX_MACHINE_NAME < sizeof(((srv_authsys *)0)->machine));

/* An opaque_auth of at most MAX_AUTH_BYTES into body (NULL: skipped). */
static srv_call_status srv_call_auth(XDR *x, uint32_t *flavor, uint32_t *len, unsigned char *body)
{
    unsigned char skip[MAX_AUTH_BYTES];

    if (!xdr_u_int(x, flavor) || !xdr_u_int(x, len))
        return SRV_CALL_TRUNCATED;
    if (*len > MAX_AUTH_BYTES)
        return SRV_CALL_AUTH_LONG;
    if (!xdr_opaque(x, (char *)(body ? body : skip), *len))
        return SRV_CALL_TRUNCATED;
    return SRV_CALL_OK;
}

/* The header after xid and msg_type. */
static srv_call_status srv_call_body(XDR *x, srv_call *c)
{
    srv_call_status st;

    if (!xdr_u_int(x, &c->rpcvers))
        return SRV_CALL_TRUNCATED;
    if (c->rpcvers != SRV_RPC_VERSION)
        return SRV_CALL_RPCVERS;
    if (!xdr_u_int(x, &c->prog) || !xdr_u_int(x, &c->vers) || !xdr_u_int(x, &c->proc))
        return SRV_CALL_TRUNCATED;
    st = srv_call_auth(x, &c->cred_flavor, &c->cred_len, c->cred);
    if (st != SRV_CALL_OK)
        return st;
    st = srv_call_auth(x, &c->verf_flavor, &c->verf_len, NULL);
    if (st != SRV_CALL_OK)
        return st;
    c->args_off = xdr_getpos(x);
    return SRV_CALL_OK;
}

srv_call_status srv_call_decode(const void *rec, size_t len, srv_call *c)
{
    uint32_t msg_type;
    srv_call_status st;
    XDR x;

    memset(c, 0, sizeof *c);
    xdrmem_create(&x, (char *)rec, (u_int)len, XDR_DECODE);
    if (!xdr_u_int(&x, &c->xid) || !xdr_u_int(&x, &msg_type) || msg_type != CALL)
        st = SRV_CALL_NOT_CALL;
    else
        st = srv_call_body(&x, c);
    xdr_destroy(&x);
    return st;
}

/* Parse an AUTH_SYS body (RFC 5531 appendix A) strictly; 0 or -1. */
static int srv_call_authsys(const unsigned char *body, uint32_t len, srv_authsys *a)
{
    gid_t gids[NGRPS];
    struct authunix_parms p = {.aup_machname = a->machine, .aup_gids = gids};
    uint32_t mlen;
    XDR x;
    bool ok;

    memset(a, 0, sizeof *a);
    xdrmem_create(&x, (char *)body, len, XDR_DECODE);
    ok = xdr_authunix_parms(&x, &p) && xdr_getpos(&x) == len;
    xdr_destroy(&x);
    if (!ok)
        return -1;
    memcpy(&mlen, body + 4, 4); /* the name's length word: stamp, then the name */
    if (strlen(a->machine) != ntohl(mlen))
        return -1;
    a->uid = p.aup_uid;
    a->gid = p.aup_gid;
    a->ngroups = p.aup_len;
    for (u_int i = 0; i < p.aup_len; i++)
        a->groups[i] = gids[i];
    a->present = true;
    return 0;
}

enum auth_stat srv_call_credential(const srv_call *c, srv_authsys *a, const char **why)
{
    memset(a, 0, sizeof *a);
    *why = NULL;
    if (c->cred_len > MAX_AUTH_BYTES) {
        *why = "credential body over 400 bytes";
        return AUTH_BADCRED;
    }
    if (c->verf_len > MAX_AUTH_BYTES) {
        *why = "verifier over 400 bytes";
        return AUTH_BADVERF;
    }
    if (c->cred_flavor == AUTH_SYS) {
        if (srv_call_authsys(c->cred, c->cred_len, a) == 0)
            return AUTH_OK;
        *why = "malformed AUTH_SYS credential (machine name over 255 bytes or with a NUL, over "
               "16 groups, or a length that does not add up)";
        return AUTH_BADCRED;
    }
    if (c->cred_flavor == AUTH_NONE) {
        if (c->cred_len == 0)
            return AUTH_OK;
        *why = "AUTH_NONE credential with a body";
        return AUTH_BADCRED;
    }
    *why = "credential flavor not supported (only AUTH_SYS and AUTH_NONE)";
    return AUTH_REJECTEDCRED;
}
