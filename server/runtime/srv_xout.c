/*
 * srv_xout.c -- the XDR stream that encodes around a payload in place
 * (srv_xout.h).
 *
 *   HEAD phase: bytes go to [pos, SRV_PAYLOAD_HEAD) from the start.
 *   --PUTBYTES of the payload--> TAIL phase: the payload counts as
 *   written where it is; bytes go after its last byte, up to the buffer's
 *   capacity. At the end the head is moved up against the payload (a
 *   memmove of at most SRV_PAYLOAD_HEAD bytes).
 *
 * NOTES
 *   Positions reported to the XDR routines are logical: what they would
 *   be in a contiguous message. The stream keeps its state in a
 *   srv_xout on the caller's stack (x_private).
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "srv_xout.h"

typedef struct {
    unsigned char *buf;
    size_t pos, limit, cap;
    const unsigned char *payload;
    size_t pcap;
    size_t head; /* bytes before the payload, once it was met */
    bool met;
} srv_xout;

static bool srv_xout_put(srv_xout *o, const void *p, size_t n)
{
    if (n > o->limit - o->pos)
        return false;
    memcpy(o->buf + o->pos, p, n);
    o->pos += n;
    return true;
}

static bool_t srv_xout_putbytes(XDR *x, const char *addr, u_int len)
{
    srv_xout *o = (srv_xout *)x->x_private;

    if (!o->met && len > 0 && (const unsigned char *)addr == o->payload && len <= o->pcap) {
        o->met = true;
        o->head = o->pos;
        o->pos = SRV_PAYLOAD_HEAD + len;
        o->limit = o->cap;
        return TRUE;
    }
    return srv_xout_put(o, addr, len) ? TRUE : FALSE;
}

static bool_t srv_xout_putlong(XDR *x, const long *lp)
{
    uint32_t v = htonl((uint32_t)*lp);

    return srv_xout_put((srv_xout *)x->x_private, &v, sizeof v) ? TRUE : FALSE;
}

static bool_t srv_xout_getlong(XDR *x, long *lp)
{
    (void)x;
    (void)lp;
    return FALSE;
}

static bool_t srv_xout_getbytes(XDR *x, char *addr, u_int len)
{
    (void)x;
    (void)addr;
    (void)len;
    return FALSE;
}

static u_int srv_xout_getpos(XDR *x)
{
    const srv_xout *o = (const srv_xout *)x->x_private;

    return (u_int)(o->met ? o->head + (o->pos - SRV_PAYLOAD_HEAD) : o->pos);
}

static bool_t srv_xout_setpos(XDR *x, u_int pos)
{
    (void)x;
    (void)pos;
    return FALSE;
}

static int32_t *srv_xout_inline(XDR *x, u_int len)
{
    srv_xout *o = (srv_xout *)x->x_private;
    int32_t *p;

    if (len > o->limit - o->pos)
        return NULL;
    p = (int32_t *)(void *)(o->buf + o->pos);
    o->pos += len;
    return p;
}

static void srv_xout_destroy(XDR *x)
{
    (void)x;
}

static bool_t srv_xout_control(XDR *x, int req, void *info)
{
    (void)x;
    (void)req;
    (void)info;
    return FALSE;
}

static const struct xdr_ops srv_xout_ops = {
    .x_getlong = srv_xout_getlong,
    .x_putlong = srv_xout_putlong,
    .x_getbytes = srv_xout_getbytes,
    .x_putbytes = srv_xout_putbytes,
    .x_getpostn = srv_xout_getpos,
    .x_setpostn = srv_xout_setpos,
    .x_inline = srv_xout_inline,
    .x_destroy = srv_xout_destroy,
    .x_control = srv_xout_control,
};

/* srv_xout_encode -- see srv_xout.h. */
bool srv_xout_encode(srv_buf *out, xdrproc_t proc, void *obj, const unsigned char *payload,
                     size_t cap)
{
    srv_xout o = {.buf = out->data,
                  .pos = 0,
                  .limit = SRV_PAYLOAD_HEAD,
                  .cap = out->cap,
                  .payload = payload,
                  .pcap = cap};
    XDR x;

    out->len = 0;
    out->off = 0;
    if (payload != out->data + SRV_PAYLOAD_HEAD || out->cap < SRV_PAYLOAD_HEAD + cap)
        return false;
    memset(&x, 0, sizeof x);
    x.x_op = XDR_ENCODE;
    x.x_ops = (struct xdr_ops *)&srv_xout_ops;
    x.x_private = (char *)&o;
    if (!proc(&x, obj))
        return false;
    if (!o.met) {
        out->len = o.pos;
        return true;
    }
    memmove(out->data + SRV_PAYLOAD_HEAD - o.head, out->data, o.head);
    out->off = SRV_PAYLOAD_HEAD - o.head;
    out->len = o.head + (o.pos - SRV_PAYLOAD_HEAD);
    return true;
}
