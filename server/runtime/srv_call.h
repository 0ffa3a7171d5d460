/*
 * srv_call.h -- the header of an RPC call (RFC 5531 section 9) as
 * dispatch decodes it, and the check of its credential: the first steps
 * of srv_dispatch_record, apart so each stays short.
 */
#ifndef PGNFS_SRV_CALL_H
#define PGNFS_SRV_CALL_H

#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "srv.h"

/* The call header, as decoded. */
typedef struct {
    uint32_t xid, rpcvers, prog, vers, proc;
    uint32_t cred_flavor, cred_len;
    unsigned char cred[MAX_AUTH_BYTES];
    uint32_t verf_flavor, verf_len;
    size_t args_off; /* where the arguments start in the record */
} srv_call;

typedef enum {
    SRV_CALL_OK,        /* decoded; the arguments start at args_off */
    SRV_CALL_NOT_CALL,  /* too short for xid and type, or not a CALL: drop */
    SRV_CALL_RPCVERS,   /* rpcvers != 2 (xid and rpcvers are set): RPC_MISMATCH */
    SRV_CALL_TRUNCATED, /* the header is cut short: drop */
    SRV_CALL_AUTH_LONG  /* a credential or verifier body over MAX_AUTH_BYTES
                         * (400): the rest cannot be read; AUTH_ERROR */
} srv_call_status;

/*
 * srv_call_decode -- decode the call header of rec[0..len) into *c.
 * Returns how far it got (see srv_call_status). Cannot fail otherwise.
 */
srv_call_status srv_call_decode(const void *rec, size_t len, srv_call *c);

/*
 * srv_call_credential -- check the credential and verifier of c: AUTH_SYS
 * parsed strictly (body <= 400 bytes, machine name <= 255 bytes without
 * NUL bytes, <= 16 gids, length exactly consumed) into *a (present), or
 * AUTH_NONE with an empty body (*a not present). Returns AUTH_OK, or the
 * auth_stat to reject the call with (AUTH_BADCRED, AUTH_REJECTEDCRED for
 * other flavors, AUTH_BADVERF) and *why, a phrase for the log.
 */
enum auth_stat srv_call_credential(const srv_call *c, srv_authsys *a, const char **why);

#endif /* PGNFS_SRV_CALL_H */
