/*
 * srv_record.c -- RPC record marking over TCP (RFC 5531 section 11): pure
 * functions that turn a byte stream into whole call records.
 *
 * A record is one or more fragments; each fragment starts with a 4-byte
 * big-endian mark whose high bit says "last fragment" and whose low 31
 * bits give the fragment's length. Input may arrive split anywhere,
 * including inside a mark.
 *
 *   States (srv_record_feed moves between them):
 *
 *        +-------------------------------------------+
 *        v                                           |
 *     MARK (mark_have 0..3) --4th byte--> PAYLOAD (frag_left > 0)
 *        |   |                               |   fragment done, not last
 *        |   |                               +-----------------------------> MARK
 *        |   | zero-length last fragment     | fragment done, last
 *        |   | of a non-empty record         v
 *        |   +----------------------------> COMPLETE --srv_record_take--> MARK
 *        |
 *        +--oversize--> -EMSGSIZE (close)   +--zero-length nonsense--> -EBADMSG (close)
 *
 * Invariants: len <= max; the buffer grows only as bytes arrive (a mark
 * announcing 1 MiB allocates nothing new until the bytes come),
 * geometrically, up to max. Past SRV_POOL_MIN it first takes a buffer
 * kept in the pool (srv_pool.h) that holds the whole fragment announced:
 * memory that exists already, so a big record is received without
 * growing by copies and without touching fresh pages.
 *
 * NOTES
 *   The record buffer is g_malloc'd and owned by the srv_record until
 *   srv_record_take hands it to the caller, who gives it back with
 *   srv_pool_put (or g_free).
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "srv_pool.h"
#include "srv_record.h"

#define SRV_RECORD_MIN_CAP 4096

void srv_record_init(srv_record *r, size_t max)
{
    memset(r, 0, sizeof *r);
    r->max = max;
}

void srv_record_clear(srv_record *r)
{
    size_t max = r->max;

    srv_pool_put(r->buf);
    srv_record_init(r, max);
}

bool srv_record_partial(const srv_record *r)
{
    return r->mark_have > 0 || r->in_fragment || r->len > 0;
}

void srv_record_mark(unsigned char out[4], size_t len)
{
    uint32_t m = SRV_RECORD_LAST | (uint32_t)(len & 0x7fffffffu);

    out[0] = (unsigned char)(m >> 24);
    out[1] = (unsigned char)(m >> 16);
    out[2] = (unsigned char)(m >> 8);
    out[3] = (unsigned char)m;
}

/* Room for n more bytes (n <= max - len, checked by the caller). */
static void srv_record_grow(srv_record *r, size_t n)
{
    size_t want = r->len + n, cap = r->cap ? r->cap : SRV_RECORD_MIN_CAP;

    if (want <= r->cap)
        return;
    while (cap < want)
        cap *= 2;
    if (cap > r->max)
        cap = r->max;
    if (cap >= SRV_POOL_MIN) {
        /* The whole fragment announced, else what doubling asks. */
        size_t frag = r->len + r->frag_left < r->max ? r->len + r->frag_left : r->max;
        size_t got;
        unsigned char *p = srv_pool_get(frag > cap ? frag : cap, &got);

        if (!p && frag > cap)
            p = srv_pool_get(cap, &got);
        if (p) {
            if (r->len)
                memcpy(p, r->buf, r->len);
            srv_pool_put(r->buf);
            r->buf = p;
            r->cap = got;
            return;
        }
    }
    r->buf = g_realloc(r->buf, cap);
    r->cap = cap;
}

int srv_record_feed(srv_record *r, const void *data, size_t len, size_t *used)
{
    const unsigned char *p = data;
    size_t pos = 0;

    *used = 0;
    while (pos < len) {
        if (!r->in_fragment) {
            size_t n = 4 - r->mark_have;
            if (n > len - pos)
                n = len - pos;
            memcpy(r->mark + r->mark_have, p + pos, n);
            r->mark_have += (unsigned)n;
            pos += n;
            if (r->mark_have < 4)
                break;
            uint32_t m = (uint32_t)r->mark[0] << 24 | (uint32_t)r->mark[1] << 16 |
                         (uint32_t)r->mark[2] << 8 | r->mark[3];
            r->mark_have = 0;
            r->last = (m & SRV_RECORD_LAST) != 0;
            r->frag_left = m & ~SRV_RECORD_LAST;
            if (r->frag_left > r->max - r->len) {
                *used = pos;
                return -EMSGSIZE;
            }
            if (r->frag_left == 0) {
                if (!r->last || r->len == 0) {
                    *used = pos;
                    return -EBADMSG;
                }
                *used = pos;
                return SRV_RECORD_COMPLETE;
            }
            r->in_fragment = true;
            continue;
        }
        size_t n = r->frag_left;
        if (n > len - pos)
            n = len - pos;
        srv_record_grow(r, n);
        memcpy(r->buf + r->len, p + pos, n);
        r->len += n;
        r->frag_left -= (uint32_t)n;
        pos += n;
        if (r->frag_left == 0) {
            r->in_fragment = false;
            if (r->last) {
                *used = pos;
                return SRV_RECORD_COMPLETE;
            }
        }
    }
    *used = pos;
    return SRV_RECORD_NEED;
}

unsigned char *srv_record_take(srv_record *r, size_t *len)
{
    unsigned char *buf = r->buf;

    *len = r->len;
    r->buf = NULL;
    r->len = 0;
    r->cap = 0;
    r->last = false;
    return buf;
}
