/*
 * srv_reply.h -- encoding RPC reply messages (RFC 5531 section 9) into a
 * srv_buf: a result, or one of the RPC-level errors dispatch answers.
 * Every reply carries an AUTH_NONE verifier.
 */
#ifndef PGNFS_SRV_REPLY_H
#define PGNFS_SRV_REPLY_H

#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "srv_buf.h"
#include "srv_xout.h"

/*
 * srv_reply_accepted -- MSG_ACCEPTED with stat (PROG_UNAVAIL, PROC_UNAVAIL,
 * GARBAGE_ARGS, SYSTEM_ERR: no body) into out, replacing its contents.
 * Cannot fail.
 */
void srv_reply_accepted(srv_buf *out, uint32_t xid, enum accept_stat stat);

/* srv_reply_prog_mismatch -- MSG_ACCEPTED PROG_MISMATCH with the versions
 * low..high served. Cannot fail. */
void srv_reply_prog_mismatch(srv_buf *out, uint32_t xid, uint32_t low, uint32_t high);

/* srv_reply_rpc_mismatch -- MSG_DENIED RPC_MISMATCH, versions 2..2. Cannot fail. */
void srv_reply_rpc_mismatch(srv_buf *out, uint32_t xid);

/* srv_reply_auth_error -- MSG_DENIED AUTH_ERROR why. Cannot fail. */
void srv_reply_auth_error(srv_buf *out, uint32_t xid, enum auth_stat why);

/*
 * srv_reply_success -- MSG_ACCEPTED SUCCESS with res encoded by res_xdr
 * (NULL: no result) into out, which grows as needed. Returns false, with
 * out empty, if res cannot be encoded or would exceed SRV_RECORD_MAX (a
 * bug of the program).
 */
bool srv_reply_success(srv_buf *out, uint32_t xid, xdrproc_t res_xdr, void *res);

/*
 * srv_reply_payload -- srv_reply_success for a result whose bulk data is
 * the payload already in out (cap bytes at out->data + SRV_PAYLOAD_HEAD,
 * srv_req_payload): the reply is built around it without copying it
 * (srv_xout.h); the message is out->len bytes at srv_buf_msg(out). A
 * result whose encoding does not fit that layout is encoded the ordinary
 * way, aside, and copied in. Returns false as srv_reply_success.
 */
bool srv_reply_payload(srv_buf *out, uint32_t xid, xdrproc_t res_xdr, void *res,
                       const unsigned char *payload, size_t cap);

#endif /* PGNFS_SRV_REPLY_H */
