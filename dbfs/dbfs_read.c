/*
 * dbfs_read.c -- READ (RFC 1813 3.3.6): the bytes of a file through its
 * storage layout (store.h), the chunk encoding (dbfs_codec.c), the chunk
 * buffer cache (cache/cache_chunk.h) and read-ahead.
 *
 * NOTES
 *   A READ is at most one batch: (with relatime, unless the stat cache
 *   shows no update due) the conditional atime UPDATE, then the layout's
 *   read statement, which returns the attributes and the chunks in one
 *   snapshot; for a stream of reads, also the next chunks (read-ahead,
 *   into the buffer cache: dbfs_ra.h). A READ whose chunks another READ
 *   is fetching waits for that fetch and is served from the buffer cache
 *   (dbfs_ra_wait), and a read-ahead stops where another fetch of the
 *   file begins (dbfs_ra_begin), so no chunk is fetched twice. With the
 *   buffer cache, the chunks already cached are left out of the range
 *   asked for; they are used only if their ctime tag is the file's ctime
 *   in that snapshot, or the buffer cache's history of the file's writes
 *   shows them unchanged since (cache_chunk_current; else, rarely, a
 *   second batch reads the whole range). When the stat cache knows the
 *   file and every chunk is cached as of its ctime, and no atime update
 *   is due, the READ makes no round trip at all; on an async export a
 *   due atime update does not stop that: it is deferred to the
 *   write-back flusher (dbfs_atime.h).
 *
 *   The metadata caches see every READ: the attributes it read (a read),
 *   or, when an atime update may happen, a change of the file. A small
 *   file (dbfs_small.c) is served whole from the small-file cache when
 *   it holds it as of the file's ctime, and kept there by a READ of all
 *   of it that went to the database.
 *
 *   A READ stores the file's buffered writes first (dbfs_wb.c). The caller
 *   owns buf; nothing is kept after a call but copies in the caches.
 *
 *   The steps of a READ that goes to the database, each a function below:
 *     peek (cached chunks into buf) -> fetch (one batch) -> check
 *     (attributes, permission) -> [widen and fetch again, when a cached
 *     chunk outside the range fetched is stale] -> place (zeros, cached
 *     bytes) -> copy (the rows) -> remember (empty chunks)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cache_chunk.h"
#include "dbfs_cache.h"
#include "dbfs_codec.h"
#include "dbfs_data.h"
#include "dbfs_perm.h"
#include "dbfs_atime.h"
#include "dbfs_ra.h"
#include "dbfs_small.h"
#include "dbfs_snap_int.h"
#include "dbfs_wb.h"
#include "dbfs_xf.h"
#include "store.h"

/* What a READ knows of one chunk of its range. */
typedef struct {
    bool cached;  /* peeked from the buffer cache */
    int64_t tag;  /* its ctime tag */
    uint32_t len; /* its stored length (file bytes); DBFS_RCHUNK_STORED: a row */
} dbfs_rchunk;

/* A chunk the rows of this READ held (and put into the buffer cache). */
#define DBFS_RCHUNK_STORED UINT32_MAX

/* Would a permitted read move atime (relatime; the same rule as the
 * pgnfs_atime statement)? An update already deferred counts as done:
 * its atime is laid over a's first (dbfs_atime_overlay). */
static bool dbfs_atime_due(dbfs *fs, dbfs_attr *a, int64_t now)
{
    dbfs_atime_overlay(fs, a);
    return a->atime_ns <= a->mtime_ns || a->atime_ns <= a->ctime_ns ||
           a->atime_ns < now - DBFS_NS_PER_DAY;
}

/* May cred read the data of the regular file a (the owner, a reader, or
 * one who may execute it: dbfs_perm_may_io)? */
static bool dbfs_read_allowed(const dbfs_attr *a, const dbfs_cred *cred)
{
    return dbfs_perm_may_io(a, cred, DBFS_MAY_READ);
}

/* Zero buf's bytes for file range [from, to) (within [off, off + n)). */
static void dbfs_zero(void *buf, uint64_t off, uint64_t from, uint64_t to)
{
    if (from < to)
        memset((char *)buf + (from - off), 0, to - from);
}

/*
 * Decode stored value v (vlen bytes) of a chunk into file bytes: *bytes
 * points at them (v itself for binary, else *tmp, a chunk-sized buffer
 * allocated on first use that the caller frees), *len their number.
 * Returns 0, -ENOMEM, or -EIO (a value that does not decode or is larger
 * than a chunk; logged).
 */
static int dbfs_decode_chunk(const dbfs *fs, const char *v, size_t vlen, const char **bytes,
                             uint64_t *len, void **tmp, bool guarded)
{
    /* A guarded chunk's value is a header and what its chain made of at
     * most a chunk: bounded by xf.h's format (room for any chain). */
    const uint64_t cs = guarded ? DBFS_XF_STORED_MAX(fs->info.chunk_size) : fs->info.chunk_size;

    *bytes = v;
    *len = vlen;
    if (fs->info.encoding != DBFS_ENC_BINARY) {
        int64_t dl;

        if (!*tmp && !(*tmp = malloc(cs)))
            return -ENOMEM;
        dl = dbfs_codec_decode(fs->info.encoding, v, vlen, *tmp, cs);
        if (dl < 0)
            return (int)dl;
        *bytes = *tmp;
        *len = (uint64_t)dl;
    }
    if (*len > cs) {
        g_warning("read: a stored chunk holds %" PRIu64 " bytes, more than a chunk", *len);
        return -EIO;
    }
    return 0;
}

/*
 * Serve a READ of the file whose attributes the stat cache gave (a) from
 * the caches alone, if they can: the caller may read it, no atime update
 * is due (or, with may_defer, it is deferred), and the file is in the
 * small-file cache, or every chunk of the range is in the buffer cache,
 * as of the file's ctime. Returns 0 (served: outputs filled) or -ENOENT
 * (go to the database; nothing counted as a buffer hit, nor, when quick,
 * as a small-file miss).
 */
static int dbfs_read_mem(dbfs *fs, dbfs_attr *a, const dbfs_cred *cred, dbfs_fh fh, uint64_t off,
                         uint32_t count, void *buf, uint32_t *nread, bool *eof, dbfs_attr_opt *attr,
                         bool may_defer, bool quick)
{
    const uint64_t cs = fs->info.chunk_size;
    cache_chunk *cc = fs->chunks;
    uint64_t n, nchunks;
    uint32_t got;
    int64_t now = 0;
    bool defer = false;

    if (a->type != DBFS_REG || !dbfs_read_allowed(a, cred))
        return -ENOENT;
    if (fs->relatime) {
        now = dbfs_now_ns();
        if (dbfs_atime_due(fs, a, now)) {
            if (!may_defer)
                return -ENOENT;
            defer = true;
        }
    }
    if (dbfs_small_read(fs, a, off, count, buf, &got, quick)) {
        n = got;
        goto served;
    }
    if (!cc)
        return -ENOENT;
    n = off >= a->size ? 0 : (a->size - off < count ? a->size - off : count);
    nchunks = n ? (off + n - 1) / cs - off / cs + 1 : 0;
    for (uint64_t k = 0; k < nchunks; k++) {
        uint64_t chunk = off / cs + k, cstart = chunk * cs;
        uint64_t from = cstart > off ? cstart : off;
        uint64_t to = cstart + cs < off + n ? cstart + cs : off + n;
        int64_t tag;
        long len = cache_chunk_peek(cc, fh.ino, chunk, (uint32_t)(from - cstart),
                                    (uint32_t)(to - from), (char *)buf + (from - off), &tag);

        /* A miss: the database read that follows counts what it finds. */
        if (len < 0 || !cache_chunk_current(cc, fh.ino, chunk, tag, a->ctime_ns))
            return -ENOENT;
        if (cstart + (uint64_t)len < to)
            dbfs_zero(buf, off, cstart + (uint64_t)len > from ? cstart + (uint64_t)len : from, to);
    }
    cache_chunk_count(cc, nchunks, 0, 0);
served:
    if (defer) {
        if (!dbfs_atime_defer(fs, fh, now))
            return -ENOENT;
        a->atime_ns = now;
    }
    *nread = (uint32_t)n;
    *eof = off + n >= a->size;
    if (attr) {
        attr->valid = true;
        attr->attr = *a;
    }
    return 0;
}

/* dbfs_read_mem on a worker: the stat cache's answer counted. */
static int dbfs_read_cached(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off,
                            uint32_t count, void *buf, uint32_t *nread, bool *eof,
                            dbfs_attr_opt *attr)
{
    dbfs_attr a;

    if ((!c->fs->chunks && !c->fs->small) || dbfs_cache_attr(c->fs, fh, &a) != 0)
        return -ENOENT;
    return dbfs_read_mem(c->fs, &a, cred, fh, off, count, buf, nread, eof, attr,
                         dbfs_atime_may_defer(c->fs, c->async), false);
}

/*
 * dbfs_read_quick -- see dbfs.h. What dbfs_read_cached serves, but for a
 * file with buffered writes (a worker flushes them first); the stat
 * cache's hit is counted only when the READ is answered here, so a READ
 * that goes on to a worker looks the file up once.
 */
int dbfs_read_quick(dbfs *fs, const dbfs_cred *cred, dbfs_fh fh, bool async, uint64_t off,
                    uint32_t count, void *buf, uint32_t *nread, bool *eof, dbfs_attr_opt *attr)
{
    dbfs_attr a;

    if (fh.snap != 0 || (!fs->chunks && !fs->small) || dbfs_cache_attr_quick(fs, fh, &a) != 0 ||
        dbfs_attr_is_xlink(&a) || dbfs_wb_holds(fs, fh.ino) ||
        dbfs_read_mem(fs, &a, cred, fh, off, count, buf, nread, eof, attr,
                      dbfs_atime_may_defer(fs, async), true) != 0)
        return -ENODATA;
    dbfs_cache_attr_hit(fs, fh);
    return 0;
}

/* One READ that goes to the database. */
typedef struct {
    dbfs_conn *c;
    const dbfs_cred *cred;
    dbfs_fh fh;
    uint64_t off;
    uint32_t count;
    char *buf;
    uint64_t cs;            /* the chunk size */
    uint64_t end;           /* off + count, within DBFS_MAX_FILESIZE */
    uint64_t first, last;   /* the chunks of [off, end); first > last: none */
    uint64_t nchunks;       /* last - first + 1, or 0 */
    uint64_t ffirst, flast; /* the chunks asked of the database */
    dbfs_rchunk *ck;        /* per chunk first .. last (buffer cache on) */
    uint64_t hits, misses, stale;
    dbfs_params pa;  /* the atime statement's parameters */
    bool atime;      /* send the atime UPDATE (dbfs_rd_atime) */
    bool atime_sent; /* the atime UPDATE went (once per READ) */
    PGresult *r;     /* the read statement's rows */
    bool have_attr;
    dbfs_attr a; /* the file, from r */
    uint64_t n;  /* bytes of the reply */
    void *tmp;   /* a decoded chunk (base64) */
} dbfs_rd;

/*
 * May this READ move atime (relatime)? Not when the stat cache knows the
 * file and shows no update due (the rule dbfs_read_cached serves by):
 * then the READ is no change of the file for the metadata caches either.
 * Otherwise it is, and the caches keep no attributes of the file while
 * it runs, so that the READs beside it went to the database too: with
 * 4 KiB READs, 8 in flight, half of them did, even of cached data.
 */
static bool dbfs_rd_atime(dbfs *fs, dbfs_fh fh, int64_t now)
{
    dbfs_attr a;

    if (!fs->relatime)
        return false;
    return dbfs_cache_attr(fs, fh, &a) != 0 || dbfs_atime_due(fs, &a, now);
}

/* Set up rd for [off, off + count) and the parameters of the atime
 * statement. */
static void dbfs_rd_init(dbfs_rd *rd, dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off,
                         uint32_t count, void *buf)
{
    const uint64_t max = (uint64_t)DBFS_MAX_FILESIZE;
    const int64_t now = dbfs_now_ns();

    memset(rd, 0, sizeof *rd);
    rd->c = c;
    rd->cred = cred;
    rd->fh = fh;
    rd->off = off;
    rd->count = count;
    rd->buf = buf;
    rd->cs = c->fs->info.chunk_size;
    rd->end = off < max ? (count < max - off ? off + count : max) : off;
    rd->first = 1; /* an empty range: attributes only */
    if (rd->end > off) {
        rd->first = off / rd->cs;
        rd->last = (rd->end - 1) / rd->cs;
        rd->nchunks = rd->last - rd->first + 1;
    }
    rd->ffirst = rd->first;
    rd->flast = rd->last;
    rd->atime = dbfs_rd_atime(c->fs, fh, now);
    dbfs_params_init(&rd->pa);
    dbfs_param_i8(&rd->pa, (int64_t)fh.ino);
    dbfs_param_i4(&rd->pa, (int32_t)fh.gen);
    dbfs_param_i8(&rd->pa, now);
    dbfs_param_cred(&rd->pa, cred);
}

/* The file range [from, to) of chunk k of the READ, within [off, upto). */
static void dbfs_rd_span(const dbfs_rd *rd, uint64_t k, uint64_t upto, uint64_t *from, uint64_t *to)
{
    uint64_t cstart = (rd->first + k) * rd->cs;

    *from = cstart > rd->off ? cstart : rd->off;
    *to = cstart + rd->cs < upto ? cstart + rd->cs : upto;
}

/* The file's ctime as best known before the database answers: the stat
 * cache's, else the last change the buffer cache's history recorded, else
 * the newest tag among the chunks peeked. */
static int64_t dbfs_rd_guess(const dbfs_rd *rd, int64_t newest)
{
    dbfs_attr a;
    int64_t head;

    if (dbfs_cache_attr(rd->c->fs, rd->fh, &a) == 0)
        return a.ctime_ns;
    if (cache_chunk_head(rd->c->fs->chunks, rd->fh.ino, &head))
        return head;
    return newest;
}

/*
 * What the buffer cache holds of the range: copied into buf now, used
 * once the database says which ctime is current. Narrows the range to
 * fetch to the chunks not cached as of the ctime the file probably has
 * (dbfs_rd_guess), and adds the read-ahead of a stream. Returns 0 or
 * -ENOMEM.
 */
static int dbfs_rd_peek(dbfs_rd *rd)
{
    cache_chunk *cc = rd->c->fs->chunks;
    int64_t newest = INT64_MIN, guess;

    if (!cc || rd->nchunks == 0)
        return 0;
    rd->ck = calloc(rd->nchunks, sizeof *rd->ck);
    if (!rd->ck)
        return -ENOMEM;
    for (uint64_t k = 0; k < rd->nchunks; k++) {
        uint64_t cstart = (rd->first + k) * rd->cs, from, to;
        long len;

        dbfs_rd_span(rd, k, rd->end, &from, &to);
        len = cache_chunk_peek(cc, rd->fh.ino, rd->first + k, (uint32_t)(from - cstart),
                               (uint32_t)(to - from), rd->buf + (from - rd->off), &rd->ck[k].tag);
        if (len >= 0) {
            rd->ck[k].cached = true;
            rd->ck[k].len = (uint32_t)len;
            if (rd->ck[k].tag > newest)
                newest = rd->ck[k].tag;
        }
    }
    guess = dbfs_rd_guess(rd, newest);
    rd->ffirst = rd->last + 1;
    rd->flast = rd->first;
    for (uint64_t k = 0; k < rd->nchunks; k++) {
        if (rd->ck[k].cached &&
            cache_chunk_current(cc, rd->fh.ino, rd->first + k, rd->ck[k].tag, guess)) {
            rd->ck[k].tag = guess;
            continue;
        }
        if (rd->first + k < rd->ffirst)
            rd->ffirst = rd->first + k;
        rd->flast = rd->first + k;
    }
    /* A stream that goes to the database anyway brings the next chunks
     * along. */
    if (rd->ffirst <= rd->flast) {
        uint64_t extra = dbfs_ra_window(rd->c->fs, rd->fh.ino, rd->off, rd->end);

        if (extra > 0 && rd->last + extra <= (uint64_t)DBFS_MAX_FILESIZE / rd->cs)
            rd->flast = rd->last + extra;
    }
    return 0;
}

/* The READ's batch (dbfs_batch_run's fn): the atime UPDATE (relatime, the
 * first time only), then the layout's read of chunks ffirst .. flast. */
static int dbfs_rd_queue(dbfs_conn *c, void *arg)
{
    dbfs_rd *rd = arg;
    const bool atime = rd->atime && !rd->atime_sent;
    PGresult *ra = NULL;
    int rc;

    PQclear(rd->r);
    rd->r = NULL;
    if (atime)
        dbfs_batch_add(c, DBFS_ST_ATIME, &rd->pa);
    c->fs->store->queue_read(c, rd->fh, rd->ffirst, rd->flast);
    dbfs_batch_sync(c);
    if (atime)
        dbfs_batch_result(c, &ra);
    PQclear(ra);
    rc = dbfs_batch_result(c, &rd->r);
    return rc;
}

/* Fetch, then check what came: the file exists (-ESTALE), is a regular
 * file (-EISDIR, -EINVAL), the caller may read it (-EACCES). Sets n, the
 * bytes of the reply. */
static int dbfs_rd_fetch(dbfs_rd *rd)
{
    int rc = dbfs_batch_run(rd->c, dbfs_rd_queue, rd);

    if (rc != 0)
        return rc;
    rd->atime_sent = true;
    if (PQntuples(rd->r) == 0)
        return -ESTALE;
    dbfs_get_attr(rd->r, 0, 0, &rd->a);
    rd->have_attr = true;
    if (rd->a.type == DBFS_DIR)
        return -EISDIR;
    if (rd->a.type != DBFS_REG)
        return -EINVAL;
    if (!dbfs_read_allowed(&rd->a, rd->cred))
        return -EACCES;
    rd->n = rd->off >= rd->a.size
                ? 0
                : (rd->a.size - rd->off < rd->count ? rd->a.size - rd->off : rd->count);
    return 0;
}

/* Is a chunk outside the range fetched cached as of another ctime (its
 * bytes in buf are not the file's)? Then the whole range is asked for
 * again: true (rarely). */
static bool dbfs_rd_widen(dbfs_rd *rd)
{
    for (uint64_t k = 0; rd->ck && k < rd->nchunks; k++) {
        uint64_t ch = rd->first + k;
        bool fetched = ch >= rd->ffirst && ch <= rd->flast;

        if (!fetched &&
            (!rd->ck[k].cached || !cache_chunk_current(rd->c->fs->chunks, rd->fh.ino, ch,
                                                       rd->ck[k].tag, rd->a.ctime_ns)) &&
            ch * rd->cs < rd->off + rd->n) {
            rd->stale += rd->ck[k].cached;
            rd->ffirst = rd->first;
            rd->flast = rd->last;
            return true;
        }
    }
    return false;
}

/* Each chunk's bytes of [off, off + n): cached ones are in buf already
 * (zero what lies past their length); fetched ones are left for the rows
 * to fill (dbfs_rd_copy zeros what no row covers, so no byte is written
 * twice). Counts buffer cache hits and misses. */
static void dbfs_rd_place(dbfs_rd *rd)
{
    for (uint64_t k = 0; k < rd->nchunks; k++) {
        uint64_t ch = rd->first + k, cstart = ch * rd->cs, from, to;

        dbfs_rd_span(rd, k, rd->off + rd->n, &from, &to);
        if (from >= to)
            continue;
        if (ch < rd->ffirst || ch > rd->flast) {
            uint64_t stop = cstart + rd->ck[k].len;

            dbfs_zero(rd->buf, rd->off, stop > from ? stop : from, to);
            rd->hits++;
        } else {
            rd->misses++;
        }
    }
}

/* Copy the rows' chunks into buf (their part of [off, off + n)) and into
 * the buffer cache; the bytes of the fetched chunks' span that no row
 * holds (holes, the parts past a chunk's stored end) are zeroed, each
 * byte of buf written once. Returns 0, -ENOMEM or -EIO (a chunk that
 * does not decode). */
static int dbfs_rd_copy(dbfs_rd *rd)
{
    cache_chunk *cc = rd->c->fs->chunks;
    /* The part of the reply the fetched chunks cover, and how far it is
     * filled: rows come in chunk order, so the gaps before each row and
     * after the last are the zeros. */
    const uint64_t upto = rd->off + rd->n;
    uint64_t zlo = rd->ffirst * rd->cs > rd->off ? rd->ffirst * rd->cs : rd->off;
    uint64_t zhi = (rd->flast + 1) * rd->cs < upto ? (rd->flast + 1) * rd->cs : upto;
    /* The file's chain (column after the chunk's value; NULL or 0: none). */
    const uint64_t chain = PQntuples(rd->r) > 0 && !dbfs_get_null(rd->r, 0, DBFS_ATTR_NCOLS + 2)
                               ? (uint64_t)dbfs_get_i8(rd->r, 0, DBFS_ATTR_NCOLS + 2)
                               : 0;

    if (chain != 0)
        dbfs_xf_note(rd->c->fs, rd->fh.ino, chain);
    /* The chain's text, when the read brought it (dbfs_xf_want_text): a
     * chain met for the first time costs no query of its own. (One that
     * does not make a chain here fails below, through dbfs_xf_chain.) */
    if (chain != 0 && !dbfs_get_null(rd->r, 0, DBFS_ATTR_NCOLS + 3))
        (void)dbfs_xf_chain_learn(rd->c->fs, chain, PQgetvalue(rd->r, 0, DBFS_ATTR_NCOLS + 3),
                                  (size_t)PQgetlength(rd->r, 0, DBFS_ATTR_NCOLS + 3));
    for (int i = 0; i < PQntuples(rd->r); i++) {
        const char *bytes;
        uint64_t ch, cstart, clen, from, to;
        int rc;

        if (dbfs_get_null(rd->r, i, DBFS_ATTR_NCOLS))
            continue;
        ch = (uint64_t)dbfs_get_i8(rd->r, i, DBFS_ATTR_NCOLS);
        rc = dbfs_decode_chunk(rd->c->fs, PQgetvalue(rd->r, i, DBFS_ATTR_NCOLS + 1),
                               (size_t)PQgetlength(rd->r, i, DBFS_ATTR_NCOLS + 1), &bytes, &clen,
                               &rd->tmp, chain != 0);
        cstart = ch * rd->cs;
        if (rc == 0 && chain != 0) {
            /* Into the reply itself when the chunk starts in it: the
             * decode may scribble up to zhi, which the rows after this one
             * and the zeroing below write again (each byte of the fetched
             * span is this function's). */
            const bool into = cstart >= rd->off && cstart < zhi;
            size_t plen;

            rc = dbfs_xf_decode_to(rd->c, chain, rd->fh.ino, ch, bytes, clen,
                                   into ? rd->buf + (cstart - rd->off) : NULL,
                                   into ? zhi - cstart : 0, &bytes, &plen);
            clen = plen;
        }
        if (rc != 0)
            return rc;
        from = cstart > rd->off ? cstart : rd->off;
        to = cstart + clen < upto ? cstart + clen : upto;
        if (from < to) {
            dbfs_zero(rd->buf, rd->off, zlo, from < zhi ? from : zhi);
            if (rd->buf + (from - rd->off) != bytes + (from - cstart))
                memcpy(rd->buf + (from - rd->off), bytes + (from - cstart), to - from);
            if (to > zlo)
                zlo = to;
        }
        if (cc)
            cache_chunk_put(cc, rd->fh.ino, ch, rd->a.ctime_ns, bytes, (uint32_t)clen);
        if (rd->ck && ch >= rd->first && ch <= rd->last)
            rd->ck[ch - rd->first].len = DBFS_RCHUNK_STORED;
    }
    dbfs_zero(rd->buf, rd->off, zlo, zhi);
    return 0;
}

/* The chunks of the range fetched (within the file) that hold nothing are
 * facts too: cache them empty; and count what the buffer cache did. */
static void dbfs_rd_remember(dbfs_rd *rd)
{
    cache_chunk *cc = rd->c->fs->chunks;

    if (!cc)
        return;
    for (uint64_t k = 0; rd->ck && k < rd->nchunks; k++) {
        uint64_t ch = rd->first + k;

        if (ch >= rd->ffirst && ch <= rd->flast && rd->ck[k].len != DBFS_RCHUNK_STORED &&
            ch * rd->cs < rd->a.size)
            cache_chunk_put(cc, rd->fh.ino, ch, rd->a.ctime_ns, "", 0);
    }
    cache_chunk_count(cc, rd->hits, rd->misses, rd->stale);
}

/* Begin what the metadata caches see of this READ: an atime update is a
 * change of the file's attributes, so a READ that may make one is a file
 * change. */
static void dbfs_rd_cache_begin(const dbfs_rd *rd, dbfs_cache_op *op)
{
    if (rd->atime)
        dbfs_cache_file_begin(rd->c->fs, rd->fh, op);
    else
        dbfs_cache_read_begin(rd->c->fs, op);
}

/* End it, telling the caches what the READ learned (rc: its answer). */
static void dbfs_rd_cache_end(const dbfs_rd *rd, dbfs_cache_op *op, int rc)
{
    const bool change = rd->atime; /* dbfs_rd_cache_begin's choice */

    if (rc == 0 || rc == -EISDIR || rc == -EINVAL || rc == -EACCES) {
        /* The attributes were read. */
        if (change) {
            dbfs_cache_file_end(op, 0, &rd->a);
            return;
        }
        dbfs_cache_put_attr(op, &rd->a);
    } else if (rc == -ESTALE && !change) {
        dbfs_cache_put_gone(op, rd->fh);
    } else if (change) {
        dbfs_cache_file_end(op, rc, NULL);
        return;
    }
    dbfs_cache_end(op);
}

/* The READ against the database, once the caches could not answer it. */
static int dbfs_rd_run(dbfs_rd *rd)
{
    dbfs_cache_op op;
    uint64_t flight = 0;
    int rc = dbfs_rd_peek(rd);

    if (rc != 0)
        return rc;
    /* Announced to the READs that would fetch the same chunks (with the
     * buffer cache to land in). */
    if (rd->c->fs->chunks && rd->ffirst <= rd->flast)
        flight = dbfs_ra_begin(rd->c->fs, rd->fh.ino, rd->ffirst, rd->last, &rd->flast);
    dbfs_rd_cache_begin(rd, &op);
    rc = dbfs_rd_fetch(rd);
    if (rc == 0 && dbfs_attr_is_xlink(&rd->a))
        rc = DBFS_XF_ELINK; /* the link's path reads it (dbfs_xf_link.c) */
    if (rc == 0 && dbfs_rd_widen(rd))
        rc = dbfs_rd_fetch(rd);
    if (rc == 0) {
        dbfs_rd_place(rd);
        rc = dbfs_rd_copy(rd);
    }
    if (rc == 0) {
        dbfs_rd_remember(rd);
        dbfs_small_learn_read(rd->c->fs, &rd->a, rd->off, rd->buf, (uint32_t)rd->n);
    }
    dbfs_rd_cache_end(rd, &op, rc);
    /* Its chunks and the file's attributes are in the caches now. */
    dbfs_ra_end(rd->c->fs, rd->fh.ino, flight);
    return rc;
}

/* dbfs_read_plain -- see dbfs_data.h. */
int dbfs_read_plain(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, uint32_t count,
                    void *buf, uint32_t *nread, bool *eof, dbfs_attr_opt *attr)
{
    dbfs_rd rd;
    int rc;

    if (fh.snap != 0)
        return dbfs_sn_read(c, cred, fh, off, count, buf, nread, eof, attr);
    *nread = 0;
    *eof = false;
    if (attr)
        memset(attr, 0, sizeof *attr);
    /* Buffered writes first (a failure other than -EAGAIN drops them and
     * waits for the file's COMMIT; the READ shows what is stored). */
    if (dbfs_wb_flush(c, fh.ino, NULL, NULL, NULL) == -EAGAIN)
        return -EAGAIN;
    if (dbfs_read_cached(c, cred, fh, off, count, buf, nread, eof, attr) == 0)
        return 0;
    dbfs_rd_init(&rd, c, cred, fh, off, count, buf);
    /* Chunks another READ is fetching: wait for them, once. */
    if (c->fs->chunks && rd.nchunks > 0 && dbfs_ra_wait(c->fs, fh.ino, rd.first, rd.last)) {
        if (dbfs_read_cached(c, cred, fh, off, count, buf, nread, eof, attr) == 0)
            return 0;
        dbfs_rd_init(&rd, c, cred, fh, off, count, buf); /* the clock moved */
    }
    rc = dbfs_rd_run(&rd);
    if (rd.have_attr && attr) {
        attr->valid = true;
        attr->attr = rd.a;
        dbfs_atime_overlay(c->fs, &attr->attr);
    }
    if (rc == 0) {
        *nread = (uint32_t)rd.n;
        *eof = off + rd.n >= rd.a.size;
    }
    PQclear(rd.r);
    free(rd.tmp);
    free(rd.ck);
    return rc;
}

/*
 * dbfs_read -- see dbfs.h. Bytes past the end are not returned; holes and
 * the parts of chunks never written read as zeros. The owner, a caller
 * the mode lets read, and one it lets execute may read
 * (dbfs_perm_may_io). Errors: -ESTALE, -EISDIR (a directory), -EINVAL
 * (another non-regular file), -EACCES (none of those), -ENOMEM, -EAGAIN,
 * -EIO. *attr is
 * filled whenever the file was read. At most one round trip (none when the
 * caches hold everything; two when cached chunks turn out stale).
 */
int dbfs_read(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, uint32_t count,
              void *buf, uint32_t *nread, bool *eof, dbfs_attr_opt *attr)
{
    dbfs_attr_opt a = {0};
    dbfs_xl_slot known;
    int rc;

    /* A transformation link read before: one round trip. */
    if (dbfs_xf_link_known(c->fs, fh.ino, &known) && known.preserves) {
        rc = dbfs_xf_link_read_known(c, cred, fh, &known, off, count, buf, nread, eof, &a.attr);
        a.valid = rc == 0 || rc == -EACCES;
        if (attr)
            *attr = a;
        return rc;
    }
    rc = dbfs_read_plain(c, cred, fh, off, count, buf, nread, eof, &a);
    if (rc == DBFS_XF_ELINK)
        rc = a.valid ? dbfs_xf_link_read(c, cred, &a.attr, off, count, buf, nread, eof) : -EIO;
    if (attr)
        *attr = a;
    return rc;
}
