/*
 * dbfs_data.c -- file data: READ, WRITE and COMMIT (RFC 1813 3.3.6,
 * 3.3.7, 3.3.21), through the storage layout of the file system (store.h),
 * the chunk encoding (dbfs_codec.c) and the chunk buffer cache
 * (cache/cache_chunk.h).
 *
 * NOTES
 *   A READ is at most one batch: (with relatime) the conditional atime
 *   UPDATE, then the layout's read statement, which returns the attributes
 *   and the chunks in one snapshot; for a stream of reads, also the next
 *   chunks (read-ahead, into the buffer cache). With the buffer cache, the chunks
 *   already cached are left out of the range asked for; they are used only
 *   if their ctime tag is the file's ctime in that snapshot (else, rarely,
 *   a second batch reads the whole range). When the stat cache knows the
 *   file and every chunk is cached as of its ctime, and no atime update is
 *   due, the READ makes no round trip at all.
 *
 *   A WRITE is one batch: the layout's statements (store.h), which check
 *   and lock first, so nothing is stored when the write is not allowed.
 *   After it commits, the chunks it wrote go into the buffer cache tagged
 *   with the file's new ctime (cache_chunk_wrote). One Sync ends each
 *   batch, so each is one round trip and one transaction; libpq reads
 *   incoming results while it waits to send, so a large batch cannot
 *   deadlock on full socket buffers.
 *
 *   The metadata caches see every READ (the attributes it read, through
 *   dbfs_cache_read_begin/put_attr, or as a mutation when an atime update
 *   may happen) and every WRITE (dbfs_cache_file_begin/end).
 *
 *   Durability: synchronous commit. An UNSTABLE WRITE may wait in the
 *   write-back buffer (dbfs_wb.c) until COMMIT or another flush; every
 *   other WRITE is durable when it returns (committed = FILE_SYNC). A READ
 *   flushes the file's buffered writes first.
 *
 *   The caller owns buf and data; nothing is kept after a call but copies
 *   in the caches.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cache_chunk.h"
#include "dbfs_int.h"
#include "store.h"

/* --- the buffer cache ---------------------------------------------------- */

/* dbfs_chunks_open -- see dbfs_int.h. */
int dbfs_chunks_open(dbfs *fs, const dbfs_config *cfg)
{
    int rc;

    fs->chunks = NULL;
    if (cfg->buffer_cache_bytes == 0)
        return 0;
    fs->chunks_bytes = cfg->buffer_cache_bytes;
    rc = cache_chunk_new((size_t)cfg->buffer_cache_bytes, fs->info.chunk_size, &fs->chunks);
    if (rc == -EINVAL)
        g_warning("the buffer cache of %" PRIu64 " bytes cannot hold one chunk of %u bytes",
                  cfg->buffer_cache_bytes, fs->info.chunk_size);
    else if (rc == 0)
        g_info("buffer cache: %" PRIu64 " bytes", cfg->buffer_cache_bytes);
    return rc;
}

/* dbfs_chunks_close -- see dbfs_int.h. */
void dbfs_chunks_close(dbfs *fs)
{
    cache_chunk_free(fs->chunks);
    fs->chunks = NULL;
}

/* dbfs_chunks_figures -- see dbfs_int.h. Capacity and entries in bytes. */
void dbfs_chunks_figures(const dbfs *fs, dbfs_cache_figures *out)
{
    cache_chunk_stats st;

    memset(out, 0, sizeof *out);
    out->name = "buffer";
    if (!fs->chunks)
        return;
    cache_chunk_get_stats(fs->chunks, &st);
    out->enabled = true;
    out->capacity = st.capacity;
    out->entries = st.bytes;
    out->hits = st.hits;
    out->misses = st.misses;
    out->inserts = st.inserts;
    out->evictions = st.evictions;
    out->invalidations = st.invalidations;
    out->refused = st.stale;
}

/* --- READ ---------------------------------------------------------------- */

/* Read-ahead: reads of a file that go on where (or near where) its last
 * read ended are a stream; a READ that goes to the database for a stream
 * also fetches the next chunks into the buffer cache, a window that
 * doubles with each such READ up to DBFS_RA_MAX_BYTES. One slot per inode
 * hash: a heuristic, so races between threads only cost a guess. */
#define DBFS_RA_MAX_BYTES (1u << 20)
/* How far from the last end a read still counts as the stream (clients
 * keep several READs in flight and they arrive out of order). */
#define DBFS_RA_SLACK (4u << 20)

/* The chunks to fetch past the READ's last chunk. */
static uint64_t dbfs_ra_extra(dbfs *fs, uint64_t ino, uint64_t off, uint64_t end)
{
    const uint64_t cs = fs->info.chunk_size;
    dbfs_ra_slot *sl = &fs->ra[(ino * UINT64_C(0x9E3779B97F4A7C15) >> 40) % DBFS_RA_SLOTS];
    uint64_t want = end > off ? (end - off + cs - 1) / cs : 1;
    uint64_t max = DBFS_RA_MAX_BYTES / cs, cap = fs->chunks_bytes / 8 / cs;
    uint64_t next = atomic_load(&sl->next), w = atomic_load(&sl->window);
    bool stream =
        atomic_load(&sl->ino) == ino && off + DBFS_RA_SLACK >= next && off <= next + DBFS_RA_SLACK;

    if (cap < max)
        max = cap;
    w = !stream ? 0 : w ? 2 * w : want;
    if (w > max)
        w = max;
    atomic_store(&sl->ino, ino);
    if (end > next || !stream)
        atomic_store(&sl->next, end);
    atomic_store(&sl->window, w);
    return w;
}

/* What a READ knows of one chunk of its range. */
typedef struct {
    bool cached;  /* peeked from the buffer cache */
    int64_t tag;  /* its ctime tag */
    uint32_t len; /* its stored length (file bytes) */
    bool fetched; /* in the range read from the database */
} dbfs_rchunk;

/* Would a permitted read move atime (relatime; the same rule as the
 * pgnfs_atime statement)? */
static bool dbfs_atime_due(const dbfs_attr *a, int64_t now)
{
    return a->atime_ns <= a->mtime_ns || a->atime_ns <= a->ctime_ns ||
           a->atime_ns < now - INT64_C(86400000000000);
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
                             uint64_t *len, void **tmp)
{
    const uint64_t cs = fs->info.chunk_size;

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
 * Serve a READ from the caches alone, if they can: the stat cache knows
 * the file, the caller may read it, no atime update is due, and every
 * chunk of the range is cached as of the file's ctime. Returns 0 (served:
 * outputs filled) or -ENOENT (go to the database; nothing counted as a
 * buffer hit).
 */
static int dbfs_read_cached(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off,
                            uint32_t count, void *buf, uint32_t *nread, bool *eof,
                            dbfs_attr_opt *attr)
{
    const uint64_t cs = c->fs->info.chunk_size;
    cache_chunk *cc = c->fs->chunks;
    dbfs_attr a;
    uint64_t n, nchunks;

    if (!cc || dbfs_cache_attr(c->fs, fh, &a) != 0 || a.type != DBFS_REG ||
        (cred->uid != a.uid && !dbfs_perm_allows(&a, cred, 4)) ||
        (c->fs->relatime && dbfs_atime_due(&a, dbfs_now_ns())))
        return -ENOENT;
    n = off >= a.size ? 0 : (a.size - off < count ? a.size - off : count);
    nchunks = n ? (off + n - 1) / cs - off / cs + 1 : 0;
    for (uint64_t k = 0; k < nchunks; k++) {
        uint64_t chunk = off / cs + k, cstart = chunk * cs;
        uint64_t from = cstart > off ? cstart : off;
        uint64_t to = cstart + cs < off + n ? cstart + cs : off + n;
        int64_t tag;
        long len = cache_chunk_peek(cc, fh.ino, chunk, (uint32_t)(from - cstart),
                                    (uint32_t)(to - from), (char *)buf + (from - off), &tag);

        /* A miss: the database read that follows counts what it finds. */
        if (len < 0 || tag != a.ctime_ns)
            return -ENOENT;
        if (cstart + (uint64_t)len < to)
            dbfs_zero(buf, off, cstart + (uint64_t)len > from ? cstart + (uint64_t)len : from, to);
    }
    cache_chunk_count(cc, nchunks, 0, 0);
    *nread = (uint32_t)n;
    *eof = off + n >= a.size;
    if (attr) {
        attr->valid = true;
        attr->attr = a;
    }
    return 0;
}

/*
 * dbfs_read -- see dbfs.h. Bytes past the end are not returned; holes and
 * the parts of chunks never written read as zeros. Errors: -ESTALE,
 * -EISDIR (a directory), -EINVAL (another non-regular file), -EACCES
 * (no read permission and not the owner), -ENOMEM, -EAGAIN, -EIO. *attr is
 * filled whenever the file was read. At most one round trip (none when the
 * caches hold everything; two when cached chunks turn out stale).
 */
int dbfs_read(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, uint32_t count,
              void *buf, uint32_t *nread, bool *eof, dbfs_attr_opt *attr)
{
    const uint64_t cs = c->fs->info.chunk_size;
    const uint64_t max = (uint64_t)DBFS_MAX_FILESIZE;
    cache_chunk *cc = c->fs->chunks;
    uint64_t end = off < max ? (count < max - off ? off + count : max) : off;
    uint64_t first = 1, last = 0; /* an empty range: attributes only */
    uint64_t ffirst, flast;       /* the range asked of the database */
    uint64_t nchunks = 0, hits = 0, misses = 0, stale = 0;
    PGresult *ra = NULL, *r = NULL;
    dbfs_rchunk *rc_ = NULL;
    dbfs_cache_op op;
    dbfs_params pa;
    dbfs_attr a;
    uint64_t n;
    void *tmp = NULL;
    bool atime_sent = false, again = false;
    int rc;

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
    if (end > off) {
        first = off / cs;
        last = (end - 1) / cs;
        nchunks = last - first + 1;
    }
    ffirst = first;
    flast = last;
    /* What the buffer cache holds of the range: copied into buf now, used
     * once the database says which ctime is current. */
    if (cc && nchunks > 0) {
        int64_t newest = INT64_MIN;

        rc_ = calloc(nchunks, sizeof *rc_);
        if (!rc_)
            return -ENOMEM;
        for (uint64_t k = 0; k < nchunks; k++) {
            uint64_t cstart = (first + k) * cs;
            uint64_t from = cstart > off ? cstart : off;
            uint64_t to = cstart + cs < end ? cstart + cs : end;
            long len =
                cache_chunk_peek(cc, fh.ino, first + k, (uint32_t)(from - cstart),
                                 (uint32_t)(to - from), (char *)buf + (from - off), &rc_[k].tag);

            if (len >= 0) {
                rc_[k].cached = true;
                rc_[k].len = (uint32_t)len;
                if (rc_[k].tag > newest)
                    newest = rc_[k].tag;
            }
        }
        /* Ask only for the chunks not cached as of the newest tag seen. */
        ffirst = last + 1;
        flast = first;
        for (uint64_t k = 0; k < nchunks; k++) {
            if (rc_[k].cached && rc_[k].tag == newest)
                continue;
            if (first + k < ffirst)
                ffirst = first + k;
            flast = first + k;
        }
        /* A stream that goes to the database anyway brings the next
         * chunks along. */
        if (ffirst <= flast) {
            uint64_t extra = dbfs_ra_extra(c->fs, fh.ino, off, end);

            if (extra > 0 && last + extra <= (uint64_t)DBFS_MAX_FILESIZE / cs)
                flast = last + extra;
        }
    }
    dbfs_params_init(&pa);
    dbfs_param_i8(&pa, (int64_t)fh.ino);
    dbfs_param_i4(&pa, (int32_t)fh.gen);
    dbfs_param_i8(&pa, dbfs_now_ns());
    dbfs_param_cred(&pa, cred);
    /* An atime update is a change of the file's attributes: the metadata
     * caches see it as one. */
    if (c->fs->relatime)
        dbfs_cache_file_begin(c, fh, &op);
    else
        dbfs_cache_read_begin(c->fs, &op);
fetch:
    for (int attempt = 1;; attempt++) {
        rc = dbfs_batch_begin(c);
        if (rc != 0)
            goto out;
        if (c->fs->relatime && !atime_sent)
            dbfs_batch_add(c, DBFS_ST_ATIME, &pa);
        c->fs->store->queue_read(c, fh, ffirst, flast);
        dbfs_batch_sync(c);
        if (c->fs->relatime && !atime_sent)
            dbfs_batch_result(c, &ra);
        dbfs_batch_result(c, &r);
        rc = dbfs_batch_end(c);
        PQclear(ra);
        ra = NULL;
        if (rc != DBFS_ERETRY)
            break;
        PQclear(r);
        r = NULL;
        if (!dbfs_retry_wait(attempt)) {
            rc = -EAGAIN;
            break;
        }
    }
    if (rc != 0)
        goto out;
    atime_sent = true;
    if (PQntuples(r) == 0) {
        rc = -ESTALE;
        goto out;
    }
    dbfs_get_attr(r, 0, 0, &a);
    if (attr) {
        attr->valid = true;
        attr->attr = a;
    }
    if (a.type == DBFS_DIR) {
        rc = -EISDIR;
        goto out;
    }
    if (a.type != DBFS_REG) {
        rc = -EINVAL;
        goto out;
    }
    if (cred->uid != a.uid && !dbfs_perm_allows(&a, cred, 4)) {
        rc = -EACCES;
        goto out;
    }
    n = off >= a.size ? 0 : (a.size - off < count ? a.size - off : count);
    /* Chunks cached as of another ctime, outside the range fetched: read
     * the whole range again (their bytes in buf are not the file's). */
    for (uint64_t k = 0; rc_ && !again && k < nchunks; k++) {
        uint64_t ch = first + k;

        rc_[k].fetched = ch >= ffirst && ch <= flast;
        if (!rc_[k].fetched && (!rc_[k].cached || rc_[k].tag != a.ctime_ns) && ch * cs < off + n) {
            again = true;
            PQclear(r);
            r = NULL;
            ffirst = first;
            flast = last;
            stale += rc_[k].cached;
            goto fetch;
        }
    }
    /* Place each chunk's bytes of [off, off + n): cached ones are in buf
     * already (zero what lies past their length); fetched ones are zeroed
     * and copied from the rows. */
    for (uint64_t k = 0; k < nchunks; k++) {
        uint64_t ch = first + k, cstart = ch * cs;
        uint64_t from = cstart > off ? cstart : off;
        uint64_t to = cstart + cs < off + n ? cstart + cs : off + n;
        bool fetched = ch >= ffirst && ch <= flast;

        if (from >= to)
            continue;
        if (!fetched) {
            uint64_t stop = cstart + rc_[k].len;

            dbfs_zero(buf, off, stop > from ? stop : from, to);
            hits++;
        } else {
            dbfs_zero(buf, off, from, to);
            misses++;
        }
    }
    for (int i = 0; i < PQntuples(r); i++) {
        const char *bytes;
        uint64_t ch, cstart, clen, from, to;

        if (dbfs_get_null(r, i, DBFS_ATTR_NCOLS))
            continue;
        ch = (uint64_t)dbfs_get_i8(r, i, DBFS_ATTR_NCOLS);
        rc = dbfs_decode_chunk(c->fs, PQgetvalue(r, i, DBFS_ATTR_NCOLS + 1),
                               (size_t)PQgetlength(r, i, DBFS_ATTR_NCOLS + 1), &bytes, &clen, &tmp);
        if (rc != 0)
            goto out;
        cstart = ch * cs;
        from = cstart > off ? cstart : off;
        to = cstart + clen < off + n ? cstart + clen : off + n;
        if (from < to)
            memcpy((char *)buf + (from - off), bytes + (from - cstart), to - from);
        if (cc)
            cache_chunk_put(cc, fh.ino, ch, a.ctime_ns, bytes, (uint32_t)clen);
        if (rc_ && ch >= first && ch <= last)
            rc_[ch - first].len = UINT32_MAX; /* stored, and cached above */
    }
    /* The chunks of the fetched range (within the file) that hold nothing
     * are facts too: cache them empty. */
    for (uint64_t k = 0; cc && rc_ && k < nchunks; k++) {
        uint64_t ch = first + k;

        if (ch >= ffirst && ch <= flast && rc_[k].len != UINT32_MAX && ch * cs < a.size)
            cache_chunk_put(cc, fh.ino, ch, a.ctime_ns, "", 0);
    }
    if (cc)
        cache_chunk_count(cc, hits, misses, stale);
    *nread = (uint32_t)n;
    *eof = off + n >= a.size;
out:
    if (rc == 0 || rc == -EISDIR || rc == -EINVAL || rc == -EACCES) {
        if (c->fs->relatime)
            dbfs_cache_file_end(&op, 0, &a);
        else {
            dbfs_cache_put_attr(&op, &a);
            dbfs_cache_end(&op);
        }
    } else if (rc == -ESTALE && !c->fs->relatime) {
        dbfs_cache_put_gone(&op, fh);
        dbfs_cache_end(&op);
    } else if (c->fs->relatime) {
        dbfs_cache_file_end(&op, rc, NULL);
    } else {
        dbfs_cache_end(&op);
    }
    PQclear(r);
    free(tmp);
    free(rc_);
    return rc;
}

/* --- WRITE --------------------------------------------------------------- */

/*
 * dbfs_data_pieces -- see dbfs_int.h. The pieces of a write of len (> 0)
 * bytes at off, one per chunk touched, in their stored form: for the
 * binary encoding the caller's bytes themselves; for base64 each piece
 * encoded on its own into one malloc'd buffer, one after the other.
 */
int dbfs_data_pieces(const dbfs_info *info, const void *data, store_write *w, store_piece **pieces,
                     void **buf)
{
    const uint64_t cs = info->chunk_size;
    const uint64_t end = w->off + w->len;
    size_t np = (size_t)((end - 1) / cs - w->off / cs + 1), total = 0, at = 0, i = 0;
    unsigned char *b = NULL;
    store_piece *pc;

    *buf = NULL;
    *pieces = pc = calloc(np, sizeof *pc);
    if (!pc)
        return -ENOMEM;
    for (uint64_t pos = w->off; pos < end; i++) {
        uint64_t n = cs - pos % cs < end - pos ? cs - pos % cs : end - pos;

        pc[i].chunk = pos / cs;
        pc[i].at = (uint32_t)(pos % cs);
        pc[i].n = (uint32_t)n;
        pc[i].data = (const char *)data + (pos - w->off);
        pc[i].raw = pc[i].data;
        pc[i].data_len = dbfs_codec_enc_len(info->encoding, n);
        total += pc[i].data_len;
        pos += n;
    }
    w->pieces = pc;
    w->npieces = np;
    w->data = data;
    w->data_len = total;
    if (info->encoding == DBFS_ENC_BINARY)
        return 0;
    b = malloc(total + 1);
    if (!b)
        return -ENOMEM;
    for (i = 0; i < np; i++) {
        size_t len = dbfs_codec_encode(info->encoding, pc[i].data, pc[i].n, b + at);

        pc[i].data = b + at;
        at += len;
    }
    *buf = b;
    w->data = b;
    return 0;
}

/*
 * Read the results of write w (nst statements queued) into *pre and *post.
 * Returns the batch's error, -EIO for malformed rows, or the write's own
 * status.
 */
static int dbfs_data_results(dbfs_conn *c, size_t nst, dbfs_attr *pre, dbfs_attr *post)
{
    PGresult *rb = NULL, *re = NULL, *rp;
    dbfs_fnres f;
    int rc;

    rc = dbfs_batch_result(c, &rb);
    for (size_t i = 1; i + 1 < nst; i++) {
        if (dbfs_batch_result(c, &rp) == 0)
            PQclear(rp);
    }
    if (nst > 1 && rc == 0)
        rc = dbfs_batch_result(c, &re);
    if (rc != 0)
        goto out;
    rc = dbfs_fnres_parse(rb, "write", &f);
    if (rc != 0)
        goto out;
    if (nst > 1) {
        if (PQntuples(re) != 1) {
            g_warning("write: the database answered without the attributes after");
            rc = -EIO;
            goto out;
        }
        dbfs_get_attr(re, 0, 0, &f.attr[DBFS_ROLE_POST]);
        f.have[DBFS_ROLE_POST] = true;
    } else if (f.status == 0 && !f.have[DBFS_ROLE_POST]) {
        /* A zero-length write of a layout that only checks. */
        f.attr[DBFS_ROLE_POST] = f.attr[DBFS_ROLE_PRE];
        f.have[DBFS_ROLE_POST] = f.have[DBFS_ROLE_PRE];
    }
    rc = f.status;
    if (rc == 0 && (!f.have[DBFS_ROLE_PRE] || !f.have[DBFS_ROLE_POST])) {
        g_warning("write: the database answered without the attributes before and after");
        rc = -EIO;
    }
    if (rc == 0) {
        *pre = f.attr[DBFS_ROLE_PRE];
        *post = f.attr[DBFS_ROLE_POST];
    }
out:
    PQclear(rb);
    PQclear(re);
    return rc;
}

/*
 * dbfs_data_store -- see dbfs_int.h. The writes are queued in order, each
 * by the layout (store.h queue_write), and end with one Sync; a
 * serialization failure or deadlock reruns the whole batch.
 */
int dbfs_data_store(dbfs_conn *c, dbfs_fh fh, const store_write *ws, size_t n, dbfs_attr *pre,
                    dbfs_attr *post)
{
    const uint32_t cs = c->fs->info.chunk_size;
    size_t *nst = calloc(n, sizeof *nst);
    int64_t *ctimes = calloc(2 * n, sizeof *ctimes);
    dbfs_cache_op op;
    dbfs_attr a0, a1;
    int rc;

    if (!nst || !ctimes) {
        free(nst);
        free(ctimes);
        return -ENOMEM;
    }
    dbfs_cache_file_begin(c, fh, &op);
    for (int attempt = 1;; attempt++) {
        int first_err = 0;

        rc = dbfs_batch_begin(c);
        if (rc != 0)
            goto out;
        for (size_t i = 0; i < n; i++)
            nst[i] = c->fs->store->queue_write(c, &ws[i]);
        dbfs_batch_sync(c);
        for (size_t i = 0; i < n; i++) {
            int r = dbfs_data_results(c, nst[i], &a0, &a1);

            if (r != 0 && first_err == 0)
                first_err = r;
            if (r == 0) {
                if (i == 0)
                    *pre = a0;
                *post = a1;
                ctimes[2 * i] = a0.ctime_ns;
                ctimes[2 * i + 1] = a1.ctime_ns;
            }
        }
        rc = dbfs_batch_end(c);
        if (rc == 0)
            rc = first_err;
        if (rc != DBFS_ERETRY)
            break;
        if (!dbfs_retry_wait(attempt)) {
            rc = -EAGAIN;
            break;
        }
    }
    /* Committed: what the pieces hold now, as of each write's new ctime. */
    for (size_t i = 0; rc == 0 && c->fs->chunks && i < n; i++) {
        for (size_t k = 0; k < ws[i].npieces; k++) {
            const store_piece *pc = &ws[i].pieces[k];

            cache_chunk_wrote(c->fs->chunks, fh.ino, pc->chunk, ctimes[2 * i], ctimes[2 * i + 1],
                              pc->at, pc->raw, pc->n, cs);
        }
    }
out:
    dbfs_cache_file_end(&op, rc, rc == 0 ? post : NULL);
    dbfs_wb_note_space(c->fs, rc);
    free(nst);
    free(ctimes);
    return rc;
}

/*
 * dbfs_write_sync -- see dbfs_int.h: one WRITE stored at once (FILE_SYNC).
 */
int dbfs_write_sync(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, const void *data,
                    uint32_t len, dbfs_wcc *wcc)
{
    store_piece *pieces = NULL;
    store_write w;
    dbfs_attr pre, post;
    void *buf = NULL;
    int rc;

    memset(&w, 0, sizeof w);
    w.fh = fh;
    w.cred = cred;
    w.off = off;
    w.len = len;
    w.now_ns = dbfs_now_ns();
    w.kill_priv = cred->uid != 0;
    if (len > 0) {
        rc = dbfs_data_pieces(&c->fs->info, data, &w, &pieces, &buf);
        if (rc != 0)
            goto out;
    }
    rc = dbfs_data_store(c, fh, &w, 1, &pre, &post);
    if (rc == 0)
        dbfs_wcc_of(wcc, &pre, &post);
out:
    free(buf);
    free(pieces);
    return rc;
}

/*
 * dbfs_write -- see dbfs.h. Errors: -EFBIG (off + len beyond
 * DBFS_MAX_FILESIZE, before any round trip), -ESTALE, -EISDIR, -EINVAL
 * (not a regular file), -EACCES, -ENOSPC, -ENOMEM, -EAGAIN, -EIO; on an
 * error nothing is stored and *wcc is empty. A zero-length write changes
 * nothing and returns the attributes as both pre and post.
 *
 * An UNSTABLE write goes to the write-back buffer when it can
 * (dbfs_wb.c): no round trip when the stat cache knows the file,
 * *committed UNSTABLE. Every other write is stored at once, in one round
 * trip, after the file's buffered data when it has some (in the same
 * transaction), and is DBFS_FILE_SYNC.
 */
int dbfs_write(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, const void *data,
               uint32_t len, dbfs_stable how, dbfs_stable *committed, dbfs_wcc *wcc)
{
    const uint64_t max = (uint64_t)DBFS_MAX_FILESIZE;
    int rc;

    if (wcc)
        memset(wcc, 0, sizeof *wcc);
    if (off > max || len > max - off)
        return -EFBIG;
    if (how == DBFS_UNSTABLE && len > 0) {
        rc = dbfs_wb_write(c, cred, fh, off, data, len, wcc);
        if (rc != -EWOULDBLOCK) {
            if (rc == 0 && committed)
                *committed = DBFS_UNSTABLE;
            return rc;
        }
    }
    rc = dbfs_wb_write_through(c, cred, fh, off, data, len, wcc);
    if (rc == 0 && committed)
        *committed = DBFS_FILE_SYNC;
    return rc;
}

/*
 * dbfs_commit -- see dbfs.h: flushes what the write-back buffer holds of
 * fh (one round trip; none when it holds nothing and the stat cache knows
 * fh). *wcc: the attributes clients last saw (buffered writes included)
 * and the stored ones after. Returns 0, -ESTALE, -ENOSPC or -EIO (a flush
 * of this file's data failed, now or earlier: the data is lost, and the
 * client must not take it as stored), -EAGAIN (the database is away: the
 * data is kept and a later COMMIT stores it).
 */
int dbfs_commit(dbfs_conn *c, dbfs_fh fh, uint64_t off, uint32_t count, dbfs_wcc *wcc)
{
    dbfs_attr pre, post;
    bool flushed = false;
    int rc;

    (void)off;
    (void)count;
    if (wcc)
        memset(wcc, 0, sizeof *wcc);
    rc = dbfs_wb_flush(c, fh.ino, &pre, &post, &flushed);
    if (rc == 0 && !flushed) {
        rc = dbfs_getattr(c, fh, &post);
        pre = post;
    }
    if (rc == 0) {
        dbfs_wcc_of(wcc, &pre, &post);
        rc = dbfs_wb_error(c->fs, fh.ino);
    }
    return rc;
}
