/*
 * dbfs_xf_link.c -- transformation links in the server (dbfs_xf.h;
 * schema/functions/27_xform_link.sql says what a link is): a READ of a
 * link is its base's plain bytes through the link's chain, chunk by chunk;
 * a WRITE goes back through the inverse into the base; the size of a link
 * whose chain changes lengths is computed at first access.
 *
 * NOTES
 *   The link's bytes: chunk k of the base (plain, as dbfs_read_plain reads
 *   it, whatever the base's own chain) becomes the payload xf_encode makes
 *   of it under the link's chain, the header left out. A length-preserving
 *   chain keeps every offset, so the link's size is the base's. Any other
 *   chain puts the outputs one after the other: the map (8 bytes
 *   little-endian per chunk, the end offset of its output) says where each
 *   lies, computed from every chunk of the base and recorded with the
 *   base's ctime; an access after the base changed computes it again.
 *   Chains a link may use are checked when it is made (dbfs_xf_linkadm.c):
 *   no in-database stage, no stage that draws nonces (the output would
 *   differ from read to read).
 *
 *   A WRITE of a link (bare chains only: the inverse needs nothing but the
 *   bytes) reads the base's chunks it touches, takes them forward, lays
 *   the written bytes over the result, takes that back through xf_decode
 *   (the header of the forward pass, whose stages keep no metadata, fits)
 *   and writes the chunks to the base in one store. The read (which stores
 *   the base's buffered writes first, as every READ does) and the store
 *   are two transactions: a concurrent writer of the same base chunks may
 *   interleave as with any read-modify-write by a client.
 *
 *   A link met once is remembered (fs->xl, by inode hash): its base and
 *   chain never change, and a link that went is a READ's ESTALE. A READ of
 *   a remembered length-preserving link is one round trip
 *   (DBFS_ST_XF_LINK_READ: the link's attributes with the base's chunks);
 *   it moves no atime.
 *
 *   Memory: every buffer is malloc'd per call and freed before return.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_codec.h"
#include "dbfs_data.h"
#include "dbfs_fetch.h"
#include "dbfs_perm.h"
#include "dbfs_wb.h"
#include "dbfs_wire.h"
#include "dbfs_xf.h"

/* How much of the base one read takes when the map is computed. */
#define DBFS_XL_SPAN (1u << 20)

/* What a link is (DBFS_ST_XF_LINK_GET). */
typedef struct {
    uint64_t ino;
    dbfs_fh base;
    bool writable, preserves;
    const xf_chain *ch;
    int64_t base_ctime;
    uint64_t base_size;
    uint64_t *map; /* chunk output ends; NULL when not current */
    size_t nmap;
    char *enc; /* one chunk's encoding (xf_encode_room of a chunk) */
    size_t enc_room;
} dbfs_xl;

static void dbfs_xl_free(dbfs_xl *l)
{
    free(l->map);
    free(l->enc);
}

/* The slot of link ino in fs->xl. */
static dbfs_xl_slot *dbfs_xl_slot_of(dbfs *fs, uint64_t ino)
{
    return &fs->xl[(ino * UINT64_C(0x9E3779B97F4A7C15) >> 40) % DBFS_XL_SLOTS];
}

/* Remember what link l is. */
static void dbfs_xl_remember(dbfs *fs, const dbfs_xl *l)
{
    dbfs_xl_slot *s = dbfs_xl_slot_of(fs, l->ino);

    g_mutex_lock(&fs->xl_lock);
    *s = (dbfs_xl_slot){l->ino, l->base.ino, xf_chain_id(l->ch), l->preserves, l->writable};
    g_mutex_unlock(&fs->xl_lock);
}

/* dbfs_xf_link_known -- see dbfs_xf.h. */
bool dbfs_xf_link_known(dbfs *fs, uint64_t ino, dbfs_xl_slot *out)
{
    dbfs_xl_slot *s = dbfs_xl_slot_of(fs, ino);
    bool known;

    g_mutex_lock(&fs->xl_lock);
    known = s->ino == ino && ino != 0;
    if (known)
        *out = *s;
    g_mutex_unlock(&fs->xl_lock);
    return known;
}

/* Read what link ino is into *l. Returns 0, -EIO (no such link, its base
 * gone, its chain does not make: logged), or a database error. */
static int dbfs_xl_get(dbfs_conn *c, uint64_t ino, dbfs_xl *l)
{
    const uint32_t cs = c->fs->info.chunk_size;
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    memset(l, 0, sizeof *l);
    l->ino = ino;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)ino);
    rc = dbfs_exec(c, DBFS_ST_XF_LINK_GET, &p, &r);
    if (rc != 0)
        return rc;
    if (PQntuples(r) != 1) {
        g_warning("transformation link %" PRIu64 ": not in pgnfs_xform_link", ino);
        rc = -EIO;
        goto out;
    }
    l->base.ino = (uint64_t)dbfs_get_i8(r, 0, 0);
    if (dbfs_get_null(r, 0, 1)) {
        g_warning("transformation link %" PRIu64 ": its base file %" PRIu64
                  " is gone (pgnfs fsck lists such links; remove the link)",
                  ino, l->base.ino);
        rc = -EIO;
        goto out;
    }
    l->base.gen = (uint32_t)dbfs_get_i4(r, 0, 1);
    l->writable = PQgetvalue(r, 0, 3)[0] != 0;
    l->preserves = PQgetvalue(r, 0, 4)[0] != 0;
    l->base_ctime = dbfs_get_i8(r, 0, 7);
    l->base_size = (uint64_t)dbfs_get_i8(r, 0, 8);
    rc = dbfs_xf_chain(c, (uint64_t)dbfs_get_i8(r, 0, 2), &l->ch);
    if (rc != 0) {
        rc = -EIO;
        goto out;
    }
    if (!dbfs_get_null(r, 0, 5) && !dbfs_get_null(r, 0, 6) &&
        dbfs_get_i8(r, 0, 6) == l->base_ctime) {
        const unsigned char *m = (const unsigned char *)PQgetvalue(r, 0, 5);
        size_t n = (size_t)PQgetlength(r, 0, 5) / 8;

        l->map = malloc((n ? n : 1) * sizeof *l->map);
        if (!l->map) {
            rc = -ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t v = 0;

            for (int b = 7; b >= 0; b--)
                v = v << 8 | m[8 * i + (size_t)b];
            l->map[i] = v;
        }
        l->nmap = n;
    }
    l->enc_room = xf_encode_room(l->ch, cs);
    l->enc = malloc(l->enc_room);
    if (!l->enc)
        rc = -ENOMEM;
    else if (!c->xf)
        rc = xf_work_new(c->fs->xf, &c->xf);
    if (rc == 0)
        dbfs_xl_remember(c->fs, l);
out:
    PQclear(r);
    return rc;
}

/* dbfs_xl_get after the base's buffered writes are stored (as a READ or
 * WRITE of the base would store them first): what the link is as of
 * then, its base's size included. */
static int dbfs_xl_get_stored(dbfs_conn *c, uint64_t ino, dbfs_xl *l)
{
    bool flushed = false;
    int rc = dbfs_xl_get(c, ino, l);

    if (rc == 0 && dbfs_wb_flush(c, l->base.ino, NULL, NULL, &flushed) == -EAGAIN)
        rc = -EAGAIN;
    if (rc == 0 && flushed) {
        dbfs_xl_free(l);
        rc = dbfs_xl_get(c, ino, l);
    }
    return rc;
}

/* Chunk k of the base (n plain bytes) through the link's chain: *out and
 * *out_len, the payload (in l->enc, valid until the next call). */
static int dbfs_xl_forward(dbfs_conn *c, dbfs_xl *l, uint64_t k, const void *plain, size_t n,
                           const char **out, size_t *out_len)
{
    xf_err xe = {{0}};
    size_t stored = 0;
    int rc = xf_encode(l->ch, c->xf, &(xf_chunk){l->ino, k, 0}, plain, n, l->enc, l->enc_room,
                       &stored, &xe);

    if (rc != 0) {
        g_warning("transformation link %" PRIu64 ": %s", l->ino, xe.msg);
        return rc == -ENOMEM ? rc : -EIO;
    }
    *out = l->enc + xf_chain_header_len(l->ch);
    *out_len = stored - xf_chain_header_len(l->ch);
    return 0;
}

/* The base's plain bytes [off, off + n) into buf (zeros past what it
 * holds), as cred. *got: the bytes it holds there. */
static int dbfs_xl_base_read(dbfs_conn *c, const dbfs_cred *cred, dbfs_xl *l, uint64_t off,
                             uint32_t n, char *buf, uint32_t *got)
{
    bool eof;
    int rc = dbfs_read_plain(c, cred, l->base, off, n, buf, got, &eof, NULL);

    if (rc == DBFS_XF_ELINK) {
        g_warning("transformation link %" PRIu64 ": its base %" PRIu64 " is a link", l->ino,
                  l->base.ino);
        rc = -EIO;
    }
    if (rc == 0 && *got < n)
        memset(buf + *got, 0, n - *got);
    return rc;
}

/* Compute the map of a link whose chain changes lengths (l->map NULL):
 * every chunk of the base through the chain, as root. */
static int dbfs_xl_compute(dbfs_conn *c, dbfs_xl *l)
{
    const uint32_t cs = c->fs->info.chunk_size;
    const dbfs_cred root = {0};
    const uint64_t nck = (l->base_size + cs - 1) / cs;
    const uint32_t span = DBFS_XL_SPAN > cs ? DBFS_XL_SPAN / cs * cs : cs;
    char *buf = malloc(span);
    uint64_t end = 0;
    int rc = 0;

    l->map = malloc((nck ? nck : 1) * sizeof *l->map);
    if (!buf || !l->map) {
        free(buf);
        return -ENOMEM;
    }
    for (uint64_t at = 0; at < l->base_size && rc == 0; at += span) {
        uint32_t want = (uint32_t)(l->base_size - at < span ? l->base_size - at : span), got = 0;

        rc = dbfs_xl_base_read(c, &root, l, at, want, buf, &got);
        for (uint32_t o = 0; rc == 0 && o < want; o += cs) {
            const char *out;
            size_t out_len, n = want - o < cs ? want - o : cs;

            rc = dbfs_xl_forward(c, l, (at + o) / cs, buf + o, n, &out, &out_len);
            end += out_len;
            l->map[(at + o) / cs] = end;
        }
    }
    free(buf);
    l->nmap = (size_t)nck;
    return rc;
}

/* Record l's map and size (DBFS_ST_XF_LINK_MAP) and put the link's new
 * attributes in *a. */
static int dbfs_xl_record(dbfs_conn *c, dbfs_xl *l, dbfs_attr *a)
{
    unsigned char *m = malloc(l->nmap ? 8 * l->nmap : 1);
    const uint64_t size = l->nmap ? l->map[l->nmap - 1] : 0;
    PGresult *r = NULL;
    dbfs_params p;
    dbfs_fnres f;
    int rc;

    if (!m)
        return -ENOMEM;
    for (size_t i = 0; i < l->nmap; i++)
        for (int b = 0; b < 8; b++)
            m[8 * i + (size_t)b] = (unsigned char)(l->map[i] >> (8 * b));
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)l->ino);
    dbfs_param_bytes(&p, m, 8 * l->nmap);
    dbfs_param_i8(&p, l->base_ctime);
    dbfs_param_i8(&p, (int64_t)size);
    dbfs_param_i8(&p, dbfs_now_ns());
    rc = dbfs_exec(c, DBFS_ST_XF_LINK_MAP, &p, &r);
    if (rc == 0 && PQntuples(r) > 0 && dbfs_fnres_parse(r, "link map", &f) == 0 &&
        f.have[DBFS_ROLE_POST])
        *a = f.attr[DBFS_ROLE_POST];
    a->size = size;
    PQclear(r);
    free(m);
    return rc;
}

/* l's map, computed and recorded (with *a) when it is not current. */
static int dbfs_xl_map(dbfs_conn *c, dbfs_xl *l, dbfs_attr *a)
{
    int rc;

    if (l->map)
        return 0;
    rc = dbfs_xl_compute(c, l);
    return rc == 0 ? dbfs_xl_record(c, l, a) : rc;
}

/* dbfs_xf_link_size -- see dbfs_xf.h. */
int dbfs_xf_link_size(dbfs_conn *c, dbfs_attr *a)
{
    dbfs_xl l;
    int rc;

    if (!dbfs_attr_is_xlink(a) || a->rdev_minor == 1)
        return 0;
    rc = dbfs_xl_get_stored(c, a->ino, &l);
    if (rc == 0 && !l.preserves)
        rc = dbfs_xl_map(c, &l, a);
    dbfs_xl_free(&l);
    return rc;
}

/* The first chunk whose output ends past off (l->map), or nmap. */
static size_t dbfs_xl_find(const dbfs_xl *l, uint64_t off)
{
    size_t lo = 0, hi = l->nmap;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (l->map[mid] > off)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The link's bytes [off, off + n) (within its size) from base chunks
 * first .. last, whose output starts at start (0 for a length-preserving
 * chain: offsets are the base's). */
static int dbfs_xl_copy(dbfs_conn *c, const dbfs_cred *cred, dbfs_xl *l, uint64_t first,
                        uint64_t last, uint64_t off, uint64_t n, char *buf)
{
    const uint32_t cs = c->fs->info.chunk_size;
    const uint64_t span_off = first * cs;
    const uint64_t span_end = (last + 1) * cs < l->base_size ? (last + 1) * cs : l->base_size;
    uint32_t got = 0;
    char *plain = malloc(span_end > span_off ? span_end - span_off : 1);
    int rc;

    if (!plain)
        return -ENOMEM;
    rc = dbfs_xl_base_read(c, cred, l, span_off, (uint32_t)(span_end - span_off), plain, &got);
    for (uint64_t k = first; rc == 0 && k <= last; k++) {
        const uint64_t at = (k - first) * cs;
        const size_t len = span_end - span_off - at < cs ? span_end - span_off - at : cs;
        const uint64_t start = l->preserves ? k * cs : (k ? l->map[k - 1] : 0);
        const char *out;
        size_t out_len;
        uint64_t from, to;

        rc = dbfs_xl_forward(c, l, k, plain + at, len, &out, &out_len);
        if (rc != 0)
            break;
        if (!l->preserves && start + out_len != l->map[k]) {
            /* The base changed since the map was made: the client retries,
             * and the next access makes it again. */
            rc = -EAGAIN;
            break;
        }
        from = start > off ? start : off;
        to = start + out_len < off + n ? start + out_len : off + n;
        if (from < to)
            memcpy(buf + (from - off), out + (from - start), to - from);
    }
    free(plain);
    return rc;
}

/* dbfs_xf_link_read -- see dbfs_xf.h. */
int dbfs_xf_link_read(dbfs_conn *c, const dbfs_cred *cred, dbfs_attr *a, uint64_t off,
                      uint32_t count, void *buf, uint32_t *nread, bool *eof)
{
    const uint32_t cs = c->fs->info.chunk_size;
    uint64_t size, n, first, last;
    dbfs_xl l;
    int rc = dbfs_xl_get_stored(c, a->ino, &l);

    *nread = 0;
    *eof = false;
    if (rc == 0 && !l.preserves)
        rc = dbfs_xl_map(c, &l, a);
    if (rc != 0)
        goto out;
    size = l.preserves ? l.base_size : (l.nmap ? l.map[l.nmap - 1] : 0);
    n = off >= size ? 0 : (size - off < count ? size - off : count);
    if (n > 0) {
        if (l.preserves) {
            first = off / cs;
            last = (off + n - 1) / cs;
        } else {
            first = dbfs_xl_find(&l, off);
            last = dbfs_xl_find(&l, off + n - 1);
        }
        memset(buf, 0, n);
        rc = dbfs_xl_copy(c, cred, &l, first, last, off, n, buf);
    }
    if (rc == 0) {
        *nread = (uint32_t)n;
        *eof = off + n >= size;
        a->size = size;
    }
out:
    dbfs_xl_free(&l);
    return rc;
}

/* dbfs_xf_link_base -- see dbfs_xf.h. */
int dbfs_xf_link_base(dbfs_conn *c, uint64_t ino, dbfs_fh *base)
{
    dbfs_xl l;
    int rc = dbfs_xl_get(c, ino, &l);

    if (rc == 0 && !l.writable)
        rc = -EACCES;
    if (rc == 0)
        *base = l.base;
    dbfs_xl_free(&l);
    return rc;
}

/* The base's plain bytes of chunks first .. last after a write of len
 * bytes at off to the link: read, forward, overlay, inverse, in plain
 * (*plain_len bytes from chunk first's start). */
static int dbfs_xl_overlay(dbfs_conn *c, const dbfs_cred *cred, dbfs_xl *l, uint64_t off,
                           const void *data, uint32_t len, char **plain, uint64_t *plain_len)
{
    const uint32_t cs = c->fs->info.chunk_size;
    const uint64_t first = off / cs, last = (off + len - 1) / cs, span_off = first * cs;
    const uint64_t old_end = (last + 1) * cs < l->base_size ? (last + 1) * cs : l->base_size;
    const uint64_t new_end = off + len > old_end ? off + len : old_end;
    char *p = calloc(1, new_end - span_off), *tmp = malloc(cs);
    uint32_t got = 0;
    int rc = 0;

    if (!p || !tmp) {
        rc = -ENOMEM;
        goto out;
    }
    if (old_end > span_off)
        rc = dbfs_xl_base_read(c, cred, l, span_off, (uint32_t)(old_end - span_off), p, &got);
    for (uint64_t k = first; rc == 0 && k <= last; k++) {
        const uint64_t at = (k - first) * cs, cstart = k * cs;
        const size_t n = new_end - span_off - at < cs ? new_end - span_off - at : cs;
        const uint64_t from = cstart > off ? cstart : off;
        const uint64_t to = cstart + n < off + len ? cstart + n : off + len;
        xf_err xe = {{0}};
        const char *out;
        size_t out_len, plen = 0;

        rc = dbfs_xl_forward(c, l, k, p + at, n, &out, &out_len);
        if (rc != 0)
            break;
        memcpy((char *)out + (from - cstart), (const char *)data + (from - off), to - from);
        rc = xf_decode(l->ch, c->xf, &(xf_chunk){l->ino, k, 0}, l->enc,
                       xf_chain_header_len(l->ch) + out_len, tmp, cs, &plen, &xe);
        if (rc != 0 || plen != n) {
            g_warning("transformation link %" PRIu64 ": %s", l->ino,
                      rc ? xe.msg : "the inverse changed the length");
            rc = -EIO;
            break;
        }
        memcpy(p + at, tmp, n);
    }
out:
    free(tmp);
    if (rc != 0) {
        free(p);
        return rc;
    }
    *plain = p;
    *plain_len = new_end - span_off;
    return 0;
}

/* dbfs_xf_link_write -- see dbfs_xf.h. */
int dbfs_xf_link_write(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off,
                       const void *data, uint32_t len, dbfs_wcc *wcc)
{
    const uint32_t cs = c->fs->info.chunk_size;
    dbfs_attr pre, post;
    char *plain = NULL;
    uint64_t plen = 0;
    dbfs_xl l;
    int rc = dbfs_fetch_attr(c, fh, &pre);

    if (rc == 0)
        rc = dbfs_xl_get_stored(c, fh.ino, &l);
    else
        return rc;
    if (rc == 0 && !l.writable)
        rc = -EACCES;
    if (rc == 0 && len > 0)
        rc = dbfs_xl_overlay(c, cred, &l, off, data, len, &plain, &plen);
    if (rc == 0 && len > 0)
        rc = dbfs_data_write_sync(c, cred, l.base, off / cs * cs, plain, (uint32_t)plen, NULL);
    if (rc == 0)
        rc = dbfs_fetch_attr(c, fh, &post);
    if (rc == 0)
        dbfs_wcc_of(wcc, &pre, &post);
    free(plain);
    dbfs_xl_free(&l);
    return rc;
}

/* A base chunk's stored value (v, vlen, as the read statement gives it)
 * as plain bytes into p (a chunk's room): *plen. */
static int dbfs_xl_plain(dbfs_conn *c, uint64_t chain, uint64_t base, uint64_t k, const char *v,
                         size_t vlen, char *tmp, char *p, size_t *plen)
{
    const dbfs_info *info = &c->fs->info;
    const char *out = v;
    int rc = 0;

    if (info->encoding != DBFS_ENC_BINARY) {
        int64_t dl =
            dbfs_codec_decode(info->encoding, v, vlen, tmp, DBFS_XF_STORED_MAX(info->chunk_size));

        if (dl < 0)
            return (int)dl;
        v = out = tmp;
        vlen = (size_t)dl;
    }
    if (chain != 0)
        rc = dbfs_xf_decode(c, chain, base, k, v, vlen, &out, &vlen);
    else if (vlen > info->chunk_size)
        rc = -EIO;
    if (rc == 0) {
        memcpy(p, out, vlen);
        *plen = vlen;
    }
    return rc;
}

/* What the fast READ needs: the link's chain, buffers. */
typedef struct {
    dbfs_xl l;
    char *plain, *tmp;
} dbfs_xl_fast;

/* The link's bytes [off, off + n) from the base chunks in rows r (base
 * chain bchain, size bsize) into buf. */
static int dbfs_xl_fast_copy(dbfs_conn *c, dbfs_xl_fast *f, const PGresult *r, uint64_t bchain,
                             uint64_t bsize, uint64_t off, uint64_t n, char *buf)
{
    const uint32_t cs = c->fs->info.chunk_size;
    const uint64_t first = off / cs, last = (off + n - 1) / cs;
    int row = 0, rc = 0;

    for (uint64_t k = first; rc == 0 && k <= last; k++) {
        const size_t len = bsize - k * cs < cs ? bsize - k * cs : cs;
        const uint64_t start = k * cs;
        uint64_t from, to;
        size_t plen = 0, out_len;
        const char *out;

        while (row < PQntuples(r) && (dbfs_get_null(r, row, DBFS_ATTR_NCOLS) ||
                                      (uint64_t)dbfs_get_i8(r, row, DBFS_ATTR_NCOLS) < k))
            row++;
        if (row < PQntuples(r) && (uint64_t)dbfs_get_i8(r, row, DBFS_ATTR_NCOLS) == k)
            rc = dbfs_xl_plain(c, bchain, f->l.base.ino, k, PQgetvalue(r, row, DBFS_ATTR_NCOLS + 1),
                               (size_t)PQgetlength(r, row, DBFS_ATTR_NCOLS + 1), f->tmp, f->plain,
                               &plen);
        if (rc != 0)
            break;
        if (plen < len)
            memset(f->plain + plen, 0, len - plen);
        rc = dbfs_xl_forward(c, &f->l, k, f->plain, len, &out, &out_len);
        from = start > off ? start : off;
        to = start + out_len < off + n ? start + out_len : off + n;
        if (rc == 0 && from < to)
            memcpy(buf + (from - off), out + (from - start), to - from);
    }
    return rc;
}

/* dbfs_xf_link_read_known -- see dbfs_xf.h. */
int dbfs_xf_link_read_known(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh,
                            const dbfs_xl_slot *known, uint64_t off, uint32_t count, void *buf,
                            uint32_t *nread, bool *eof, dbfs_attr *a)
{
    const uint32_t cs = c->fs->info.chunk_size;
    const int N = DBFS_ATTR_NCOLS;
    dbfs_xl_fast f;
    dbfs_attr ba;
    dbfs_params p;
    PGresult *r = NULL;
    uint64_t bsize, bchain, n;
    int rc;

    *nread = 0;
    *eof = false;
    /* The base's buffered writes first, as a READ of the base stores them. */
    if (dbfs_wb_flush(c, known->base, NULL, NULL, NULL) == -EAGAIN)
        return -EAGAIN;
    memset(&f, 0, sizeof f);
    f.l.ino = fh.ino;
    f.l.base.ino = known->base;
    f.l.preserves = true;
    rc = dbfs_xf_chain(c, known->chain, &f.l.ch);
    if (rc != 0)
        return -EIO;
    f.l.enc_room = xf_encode_room(f.l.ch, cs);
    f.l.enc = malloc(f.l.enc_room);
    f.plain = malloc(cs);
    f.tmp = malloc(DBFS_XF_STORED_MAX(cs));
    if (!f.l.enc || !f.plain || !f.tmp || (!c->xf && xf_work_new(c->fs->xf, &c->xf) != 0)) {
        rc = -ENOMEM;
        goto out;
    }
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)fh.ino);
    dbfs_param_i4(&p, (int32_t)fh.gen);
    dbfs_param_i8(&p, count ? (int64_t)(off / cs) : 1);
    dbfs_param_i8(&p, count ? (int64_t)((off + count - 1) / cs) : 0);
    rc = dbfs_exec(c,
                   c->fs->info.storage == DBFS_STORAGE_SINGLE ? DBFS_ST_XF_LINK_READ_SINGLE
                                                              : DBFS_ST_XF_LINK_READ,
                   &p, &r);
    if (rc != 0)
        goto out;
    if (PQntuples(r) == 0) {
        rc = -ESTALE;
        goto out;
    }
    dbfs_get_attr(r, 0, 0, a);
    if (dbfs_get_null(r, 0, N + 3)) {
        g_warning("transformation link %" PRIu64 ": its base file %" PRIu64
                  " is gone (pgnfs fsck lists such links; remove the link)",
                  fh.ino, known->base);
        rc = -EIO;
        goto out;
    }
    memset(&ba, 0, sizeof ba);
    ba.type = DBFS_REG;
    ba.mode = (uint32_t)dbfs_get_i4(r, 0, N + 4);
    ba.uid = (uint32_t)dbfs_get_i8(r, 0, N + 5);
    ba.gid = (uint32_t)dbfs_get_i8(r, 0, N + 6);
    if (!dbfs_perm_may_io(a, cred, DBFS_MAY_READ) || !dbfs_perm_may_io(&ba, cred, DBFS_MAY_READ)) {
        rc = -EACCES;
        goto out;
    }
    bsize = (uint64_t)dbfs_get_i8(r, 0, N + 7);
    bchain = dbfs_get_null(r, 0, N + 2) ? 0 : (uint64_t)dbfs_get_i8(r, 0, N + 2);
    n = off >= bsize ? 0 : (bsize - off < count ? bsize - off : count);
    if (n > 0)
        rc = dbfs_xl_fast_copy(c, &f, r, bchain, bsize, off, n, buf);
    if (rc == 0) {
        *nread = (uint32_t)n;
        *eof = off + n >= bsize;
    }
out:
    PQclear(r);
    free(f.plain);
    free(f.tmp);
    dbfs_xl_free(&f.l);
    return rc;
}
