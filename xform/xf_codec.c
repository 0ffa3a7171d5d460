/*
 * xf_codec.c -- one chunk through a chain: xf_encode (plain -> stored, at
 * flush), xf_decode (stored -> plain, at fetch), xf_peek (a header
 * alone). The stored format is in xf.h.
 *
 * Buffers, without a copy between stages: each stage either works in
 * place (flagged IN_PLACE, on a buffer we own) or "moves" its result into
 * the other of two buffers, the caller's output and the worker's scratch
 * buffer. The first stage always moves (its input is the caller's,
 * read-only). The destinations are planned before the first stage runs
 * so that the last move lands in the caller's output: encode needs no
 * copy beyond what the stages do (a chain of identities is exactly one
 * memcpy), decode needs one only when a longer intermediate result could
 * not pass through the caller's output (then the last move lands in
 * scratch and is copied out).
 *
 * Checks on decode, each -EBADMSG with the file, the chunk and what was
 * wrong: the stored length against the header (truncated or extended),
 * magic, format, the header's CRC-32C, the chain id against the file's
 * chain, the stage count and header length against the chain's layout,
 * every recorded length (the plain length at the bottom, each length
 * within its stage's bound), and then each stage's own checks (digest,
 * tag, key id, a decompressor's) and that each gives exactly the
 * recorded length. When a stage fails, the caller's output is wiped
 * (zeros, all room bytes), so no unverified byte is left there.
 *
 * NOTES
 *   The associated data of stage i (call.aad): header bytes 0..19
 *   (format, stage count, header length, chain id, plain length), the
 *   file id and chunk number (8 bytes each, little-endian), and i (1
 *   byte): XF_AAD_LEN bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "xf_int.h"

/* "file F chunk C: " (with "(version V)" when the caller knows it) +
 * message. */
static void xf_fail(xf_err *err, const xf_chunk *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void xf_fail(xf_err *err, const xf_chunk *at, const char *fmt, ...)
{
    va_list ap;
    int n = 0;

    if (!err)
        return;
    if (at && at->version)
        n = snprintf(err->msg, sizeof err->msg,
                     "file %" PRIu64 " chunk %" PRIu64 " (version %" PRIu64 "): ", at->file_id,
                     at->chunk, at->version);
    else if (at)
        n = snprintf(err->msg, sizeof err->msg, "file %" PRIu64 " chunk %" PRIu64 ": ", at->file_id,
                     at->chunk);
    if (n < 0 || (size_t)n >= sizeof err->msg)
        n = 0;
    va_start(ap, fmt);
    vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
    va_end(ap);
}

/* The message of a stage that failed: its own, or the errno's. */
static const char *xf_stage_msg(const char *msg, int rc)
{
    return msg[0] ? msg : strerror(rc < 0 ? -rc : EIO);
}

/* Read and check the header of len stored bytes at h. */
static int xf_hdr_read(const unsigned char *h, size_t len, const xf_chunk *at, xf_peek_info *pi,
                       xf_err *err)
{
    if (len < XF_HDR_FIXED) {
        xf_fail(err, at, "the stored chunk is %zu bytes, shorter than a header (truncated?)", len);
        return -EBADMSG;
    }
    if (h[0] != XF_MAGIC0 || h[1] != XF_MAGIC1 || h[2] != XF_MAGIC2) {
        xf_fail(err, at,
                "the stored chunk has no transformation header (stored plain, or damaged)");
        return -EBADMSG;
    }
    if (h[3] != XF_FORMAT || h[5] != 0) {
        xf_fail(err, at, "unknown header format %u.%u (written by a newer pgnfs?)", h[3], h[5]);
        return -EBADMSG;
    }
    pi->stages = h[4];
    pi->header_len = xf_get16(h + 6);
    pi->chain_id = xf_get64(h + 8);
    pi->plain_len = xf_get32(h + 16);
    pi->payload_len = xf_get32(h + 20);
    if (pi->header_len < XF_HDR_FIXED || pi->header_len > len) {
        xf_fail(err, at, "the header says it is %u bytes; the stored chunk is %zu (damaged?)",
                pi->header_len, len);
        return -EBADMSG;
    }
    if (xf_hdr_crc(h, pi->header_len) != xf_get32(h + 24)) {
        xf_fail(err, at, "the header's checksum does not match (damaged header)");
        return -EBADMSG;
    }
    if ((uint64_t)pi->header_len + pi->payload_len != len) {
        xf_fail(err, at,
                "the stored chunk is %zu bytes, its header says %u + %u (truncated or "
                "extended?)",
                len, pi->header_len, pi->payload_len);
        return -EBADMSG;
    }
    if (pi->plain_len > XF_PLAIN_MAX) {
        xf_fail(err, at, "the header's plain length %u is over %u", pi->plain_len, XF_PLAIN_MAX);
        return -EBADMSG;
    }
    return 0;
}

/* xf_peek -- see xf.h. */
int xf_peek(const void *stored, size_t len, xf_peek_info *out, xf_err *err)
{
    return xf_hdr_read(stored, len, NULL, out, err);
}

/* Stage i's associated data: header bytes 0..19, file id, chunk, i. */
static void xf_aad(unsigned char aad[XF_AAD_LEN], const unsigned char *h, const xf_chunk *at)
{
    memcpy(aad, h, 20);
    xf_put64(aad + 20, at->file_id);
    xf_put64(aad + 28, at->chunk);
    aad[36] = 0;
}

/* xf_encode_room -- see xf.h. */
size_t xf_encode_room(const xf_chain *c, size_t n)
{
    size_t b[XF_MAX_STAGES];

    return c->hdr_len + xf_chain_bounds(c, n, b);
}

/* xf_decode_room -- see xf.h. */
size_t xf_decode_room(const xf_chain *c, size_t n)
{
    size_t b[XF_MAX_STAGES];

    return xf_chain_bounds(c, n, b);
}

/* An error code from a stage: a built-in's as it is; a plug-in's
 * -EBADMSG or -ENOMEM as they are, anything else -EIO. */
static int xf_stage_rc(const xf_stage *st, int r)
{
    if (r >= 0)
        return -EIO;
    if (st->kind->builtin || r == -EBADMSG || r == -ENOMEM)
        return r;
    return -EIO;
}

/* The header of n plain bytes under c before the stages run: the fixed
 * part, the stages' lengths and metadata zero. */
static void xf_hdr_start(const xf_chain *c, size_t n, unsigned char *o)
{
    memset(o, 0, c->hdr_len);
    o[0] = XF_MAGIC0;
    o[1] = XF_MAGIC1;
    o[2] = XF_MAGIC2;
    o[3] = XF_FORMAT;
    o[4] = (unsigned char)c->nst;
    xf_put16(o + 6, (uint16_t)c->hdr_len);
    xf_put64(o + 8, c->id);
    xf_put32(o + 16, (uint32_t)n);
}

/* The header's end once the stages ran: the payload length and the CRC. */
static void xf_hdr_end(const xf_chain *c, size_t payload, unsigned char *o)
{
    xf_put32(o + 20, (uint32_t)payload);
    xf_put32(o + 24, xf_hdr_crc(o, c->hdr_len));
}

/* xf_encode -- see xf.h. */
int xf_encode(const xf_chain *c, xf_work *w, const xf_chunk *at, const void *plain, size_t n,
              void *out, size_t room, size_t *stored_len, xf_err *err)
{
    unsigned char *o = out, *pay, aad[XF_AAD_LEN], nonce[PGNFS_XFORM_NONCE_LEN];
    const unsigned char *cur = plain;
    size_t b[XF_MAX_STAGES], max, cur_len = n, olen;
    char msg[256];
    int moves = 0, rc;

    if (c->id == 0) {
        xf_fail(err, at, "the chain 'none' stores plain bytes: nothing to encode");
        return -EINVAL;
    }
    if (n > XF_PLAIN_MAX) {
        xf_fail(err, at, "a chunk of %zu bytes is over %u", n, XF_PLAIN_MAX);
        return -EINVAL;
    }
    max = xf_chain_bounds(c, n, b);
    if (room < c->hdr_len + max) {
        xf_fail(err, at, "room %zu for the stored chunk, %zu needed", room, c->hdr_len + max);
        return -ENOBUFS;
    }
    for (int i = 0; i < c->nst; i++)
        moves += i == 0 || !(c->st[i].flags & PGNFS_XFORM_IN_PLACE);
    if (moves > 1 && (rc = xf_work_scratch(w, max)) < 0) {
        xf_fail(err, at, "no memory for a scratch buffer of %zu bytes", max);
        return rc;
    }
    pay = o + c->hdr_len;
    xf_hdr_start(c, n, o);
    xf_aad(aad, o, at);
    for (int i = 0; i < c->nst; i++) {
        const xf_stage *st = &c->st[i];
        unsigned char *dst = (unsigned char *)cur;
        pgnfs_xform_call call = {.chunk = at,
                                 .aad = aad,
                                 .aad_len = sizeof aad,
                                 .meta = o + st->meta_off,
                                 .worker = &w->slot[st->kind->index],
                                 .err = msg,
                                 .err_len = sizeof msg};

        if (i == 0 || !(st->flags & PGNFS_XFORM_IN_PLACE))
            dst = --moves % 2 == 0 ? pay : w->scratch;
        if (st->len_off)
            xf_put32(o + st->len_off, (uint32_t)cur_len);
        if (st->flags & PGNFS_XFORM_NEEDS_NONCE) {
            rc = xf_env_nonce(c->env, nonce);
            if (rc < 0) {
                xf_fail(err, at, "stage %d '%s': %s", i + 1, st->kind->d->name,
                        rc == -EINVAL ? "no nonce epoch set (take one from the file system first)"
                                      : "nonces exhausted");
                return rc;
            }
            call.nonce = nonce;
        }
        aad[36] = (unsigned char)i;
        msg[0] = '\0';
        olen = 0;
        rc = st->kind->d->forward(st->state, &call, cur, cur_len, dst, b[i], &olen);
        msg[sizeof msg - 1] = '\0';
        if (rc != 0) {
            xf_fail(err, at, "stage %d '%s' failed to encode: %s", i + 1, st->kind->d->name,
                    xf_stage_msg(msg, rc));
            return xf_stage_rc(st, rc);
        }
        if (olen > b[i] || (st->flags & PGNFS_XFORM_PRESERVES_LENGTH && olen != cur_len)) {
            xf_fail(err, at, "stage %d '%s' turned %zu bytes into %zu (bound %zu%s)", i + 1,
                    st->kind->d->name, cur_len, olen, b[i],
                    st->flags & PGNFS_XFORM_PRESERVES_LENGTH ? ", length-preserving" : "");
            return -EIO;
        }
        cur = dst;
        cur_len = olen;
    }
    if (c->nst == 0)
        memcpy(pay, plain, n);
    xf_hdr_end(c, cur_len, o);
    *stored_len = c->hdr_len + cur_len;
    return 0;
}

/* xf_encode_header -- see xf.h. */
int xf_encode_header(const xf_chain *c, const xf_chunk *at, size_t n, void *hdr, xf_err *err)
{
    if (!c->header_only) {
        xf_fail(err, at, "chain '%s' does not store the plain bytes as they are", c->text);
        return -EINVAL;
    }
    if (n > XF_PLAIN_MAX) {
        xf_fail(err, at, "a chunk of %zu bytes is over %u", n, XF_PLAIN_MAX);
        return -EINVAL;
    }
    /* (identity keeps no length and no metadata in the header: the fixed
     * part is all of it, and the payload is the plain bytes) */
    xf_hdr_start(c, n, hdr);
    xf_hdr_end(c, n, hdr);
    return 0;
}

/* Plan decode's moves: dest[i] for each stage i that moves (1 = out, 0 =
 * scratch), with the last move in out (or, if *copy, in scratch and then
 * copied out). Stages working in place leave their output where their
 * input is. Returns the scratch bytes needed (*scratch: whether any
 * result lands there at all), or -ENOBUFS if neither plan fits room.
 * L[i] = stage i's input length (L[0] = plain). */
static long xf_plan(const xf_chain *c, const size_t *L, size_t room, unsigned char *dest,
                    bool *copy, bool *scratch)
{
    int moves = 0;

    for (int i = c->nst - 1; i >= 0; i--)
        moves += i == c->nst - 1 || !(c->st[i].flags & PGNFS_XFORM_IN_PLACE);
    for (int plan = 0; plan < 2; plan++) {
        size_t need = 0;
        bool fits = true, used = false;
        int left = moves, in_out = 0;

        for (int i = c->nst - 1; i >= 0; i--) {
            if (i == c->nst - 1 || !(c->st[i].flags & PGNFS_XFORM_IN_PLACE))
                in_out = dest[i] = (unsigned char)((--left % 2 == 0) != (plan == 1));
            if (in_out && L[i] > room)
                fits = false;
            if (!in_out) {
                used = true;
                if (L[i] > need)
                    need = L[i];
            }
        }
        if (fits) {
            *copy = plan == 1;
            *scratch = used;
            return (long)need;
        }
    }
    return -ENOBUFS;
}

/* Decode's lengths: L[nst] = payload, L[i] = stage i's input, checked
 * against the header's record and the stages' bounds. */
static int xf_lengths(const xf_chain *c, const unsigned char *h, const xf_peek_info *pi,
                      const xf_chunk *at, size_t *L, xf_err *err)
{
    L[c->nst] = pi->payload_len;
    for (int i = c->nst - 1; i >= 0; i--) {
        const xf_stage *st = &c->st[i];
        size_t b;

        L[i] = st->len_off ? xf_get32(h + st->len_off) : L[i + 1];
        if (L[i] > XF_ROOM_MAX) {
            xf_fail(err, at, "stage %d '%s': recorded length %zu is impossible", i + 1,
                    st->kind->d->name, L[i]);
            return -EBADMSG;
        }
        b = st->len_off ? st->kind->d->max_expansion(st->state, L[i]) : L[i];
        if (L[i + 1] > b) {
            xf_fail(err, at, "stage %d '%s': %zu stored bytes cannot come from %zu (bound %zu)",
                    i + 1, st->kind->d->name, L[i + 1], L[i], b);
            return -EBADMSG;
        }
    }
    if (L[0] != pi->plain_len) {
        xf_fail(err, at, "the header's plain length %u disagrees with the first stage's %zu",
                pi->plain_len, L[0]);
        return -EBADMSG;
    }
    return 0;
}

/* The checks before decode runs a stage. */
static int xf_decode_check(const xf_chain *c, const unsigned char *h, size_t len,
                           const xf_chunk *at, xf_peek_info *pi, size_t *L, xf_err *err)
{
    int rc = xf_hdr_read(h, len, at, pi, err);

    if (rc < 0)
        return rc;
    if (pi->chain_id != c->id) {
        xf_fail(err, at,
                "stored by chain %016" PRIx64 ", but the file's chain is '%s' (%016" PRIx64 ")",
                pi->chain_id, c->text, c->id);
        return -EBADMSG;
    }
    if (pi->stages != c->nst || pi->header_len != c->hdr_len) {
        xf_fail(err, at, "the header (%u stages, %u bytes) does not fit chain '%s' (%d, %u)",
                pi->stages, pi->header_len, c->text, c->nst, c->hdr_len);
        return -EBADMSG;
    }
    return xf_lengths(c, h, pi, at, L, err);
}

/* xf_decode -- see xf.h. */
int xf_decode(const xf_chain *c, xf_work *w, const xf_chunk *at, const void *stored, size_t len,
              void *out, size_t room, size_t *plain_len, xf_err *err)
{
    const unsigned char *h = stored, *cur;
    unsigned char aad[XF_AAD_LEN], meta[PGNFS_XFORM_META_MAX], dest[XF_MAX_STAGES];
    size_t L[XF_MAX_STAGES + 1], olen;
    xf_peek_info pi;
    bool copy = false, scratch = false;
    char msg[256];
    long need;
    int rc;

    if (c->id == 0) {
        xf_fail(err, at, "the chain 'none' stores plain bytes: nothing to decode");
        return -EINVAL;
    }
    rc = xf_decode_check(c, h, len, at, &pi, L, err);
    if (rc < 0)
        return rc;
    if (room < pi.plain_len) {
        xf_fail(err, at, "room %zu for %u plain bytes", room, pi.plain_len);
        return -ENOBUFS;
    }
    need = xf_plan(c, L, room, dest, &copy, &scratch);
    if (need < 0) {
        xf_fail(err, at, "room %zu is too small for chain '%s' (xf_decode_room)", room, c->text);
        return -ENOBUFS;
    }
    if (scratch && (rc = xf_work_scratch(w, (size_t)need)) < 0) {
        xf_fail(err, at, "no memory for a scratch buffer of %ld bytes", need);
        return rc;
    }
    cur = h + pi.header_len;
    xf_aad(aad, h, at);
    for (int i = c->nst - 1; i >= 0; i--) {
        const xf_stage *st = &c->st[i];
        unsigned char *dst = (unsigned char *)cur;
        pgnfs_xform_call call = {.chunk = at,
                                 .aad = aad,
                                 .aad_len = sizeof aad,
                                 .meta = meta,
                                 .worker = &w->slot[st->kind->index],
                                 .err = msg,
                                 .err_len = sizeof msg};

        if (i == c->nst - 1 || !(st->flags & PGNFS_XFORM_IN_PLACE))
            dst = dest[i] ? out : w->scratch;
        memcpy(meta, h + st->meta_off, st->meta_size);
        aad[36] = (unsigned char)i;
        msg[0] = '\0';
        olen = 0;
        rc = st->kind->d->inverse(st->state, &call, cur, L[i + 1], dst, L[i], &olen);
        msg[sizeof msg - 1] = '\0';
        if (rc != 0) {
            xf_fail(err, at, "stage %d '%s' failed to decode: %s", i + 1, st->kind->d->name,
                    xf_stage_msg(msg, rc));
            rc = xf_stage_rc(st, rc);
            goto fail;
        }
        if (olen != L[i]) {
            xf_fail(err, at, "stage %d '%s' decoded %zu bytes, %zu recorded", i + 1,
                    st->kind->d->name, olen, L[i]);
            rc = -EBADMSG;
            goto fail;
        }
        cur = dst;
    }
    if (c->nst == 0 || copy)
        memcpy(out, cur, pi.plain_len);
    *plain_len = pi.plain_len;
    return 0;
fail:
    memset(out, 0, room);
    return rc;
}
