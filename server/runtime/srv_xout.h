/*
 * srv_xout.h -- an XDR encoding stream that builds a message around bulk
 * data already in place in its buffer (a READ's bytes, srv_req_payload):
 * the bytes before it are encoded at the buffer's start and then moved
 * to just before it, those after it just after it, and the data itself
 * is neither copied nor touched.
 *
 * NOTES
 *   Layout of the buffer: [0, SRV_PAYLOAD_HEAD) room for what precedes
 *   the payload; the payload at SRV_PAYLOAD_HEAD (at most its capacity);
 *   what follows it after its last byte, up to the buffer's capacity. The
 *   payload is recognised by address: the first XDR_PUTBYTES whose
 *   source is the payload's first byte (an opaque's contents). Encode
 *   only (no decoding, no repositioning).
 */
#ifndef PGNFS_SRV_XOUT_H
#define PGNFS_SRV_XOUT_H

#include <stdbool.h>
#include <stddef.h>

#include <rpc/rpc.h>

#include "srv_buf.h"

/* Room for a reply's encoding before, and after, a payload in place. */
#define SRV_PAYLOAD_HEAD 512u
#define SRV_PAYLOAD_TAIL 512u

/*
 * srv_xout_encode -- encode obj with proc into out (whose data holds the
 * payload, cap bytes at data + SRV_PAYLOAD_HEAD, and has room for
 * SRV_PAYLOAD_TAIL after it). Returns true with the message at
 * data + off, len bytes (the payload inside it, unmoved, if the encoding
 * carried it; otherwise the message lies before it). Returns false if
 * proc fails or what precedes the payload exceeds SRV_PAYLOAD_HEAD or
 * what follows it the room left; out's length is then 0. Never moves
 * out->data.
 */
bool srv_xout_encode(srv_buf *out, xdrproc_t proc, void *obj, const unsigned char *payload,
                     size_t cap);

#endif /* PGNFS_SRV_XOUT_H */
