/*
 * dbfs_data.c -- storing file data (dbfs_data.h): writes cut into pieces,
 * encoded (dbfs_codec.c) and queued through the storage layout (store.h)
 * in one batch; the chunk buffer cache (cache/cache_chunk.h) that learns
 * what a committed write stored.
 *
 * NOTES
 *   A WRITE is one batch: the layout's statements, which check and lock
 *   first, so nothing is stored when the write is not allowed. After it
 *   commits, the chunks it wrote go into the buffer cache tagged with the
 *   file's new ctime (cache_chunk_wrote). One Sync ends each batch, so each
 *   is one round trip and one transaction; libpq reads incoming results
 *   while it waits to send, so a large batch cannot deadlock on full
 *   socket buffers. The metadata caches see every WRITE
 *   (dbfs_cache_file_begin/end).
 *
 *   Space: every store is admitted by the space guard first
 *   (dbfs_space.c): a write that would leave the disk below PostgreSQL's
 *   reserve stores nothing and answers -ENOSPC (or -EAGAIN while removed
 *   space is being reclaimed); an overwrite tells it that dead rows wait
 *   for VACUUM.
 *
 *   Durability: synchronous commit; what this file stores is durable when
 *   the call returns.
 *
 *   The caller owns the data; nothing is kept after a call but copies in
 *   the caches.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cache_chunk.h"
#include "dbfs_cache.h"
#include "dbfs_codec.h"
#include "dbfs_data.h"
#include "dbfs_small.h"
#include "dbfs_space.h"
#include "dbfs_xf.h"

/* --- the buffer cache ---------------------------------------------------- */

/* dbfs_chunks_open -- see dbfs_data.h. */
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

/* dbfs_chunks_close -- see dbfs_data.h. */
void dbfs_chunks_close(dbfs *fs)
{
    cache_chunk_free(fs->chunks);
    fs->chunks = NULL;
}

/* dbfs_chunks_figures -- see dbfs_data.h. Capacity and entries in bytes. */
void dbfs_chunks_figures(const dbfs *fs, dbfs_cache_figures *out)
{
    cache_chunk_stats st;

    if (fs->chunks)
        cache_chunk_get_stats(fs->chunks, &st);
    dbfs_cache_figures_tagged("buffer", fs->chunks ? &st : NULL, out);
    out->waits = atomic_load(&fs->ra_waits);
}

/* --- storing writes ------------------------------------------------------ */

/*
 * dbfs_data_pieces -- see dbfs_data.h. The pieces of a write of len (> 0)
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
 * Read the results of one write (nst statements queued) into *pre and
 * *post. Returns the batch's error, -EIO for malformed rows, or the
 * write's own status.
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

/* The writes of one dbfs_data_store and what its batch answered. */
typedef struct {
    const store_write *ws;
    size_t n;
    size_t *nst;     /* statements queued per write */
    int64_t *ctimes; /* per write: ctime before, after */
    uint64_t *sizes; /* per write: size before, after */
    dbfs_attr *pre, *post;
} dbfs_data_batch;

/* Queue every write, sync, and read each one's results (dbfs_batch_run's
 * fn). Returns the first write's error, if any. */
static int dbfs_data_queue(dbfs_conn *c, void *arg)
{
    dbfs_data_batch *b = arg;
    dbfs_attr a0, a1;
    int first_err = 0;

    for (size_t i = 0; i < b->n; i++)
        b->nst[i] = c->fs->store->queue_write(c, &b->ws[i]);
    dbfs_batch_sync(c);
    for (size_t i = 0; i < b->n; i++) {
        int r = dbfs_data_results(c, b->nst[i], &a0, &a1);

        if (r != 0 && first_err == 0)
            first_err = r;
        if (r == 0) {
            if (i == 0)
                *b->pre = a0;
            *b->post = a1;
            b->ctimes[2 * i] = a0.ctime_ns;
            b->ctimes[2 * i + 1] = a1.ctime_ns;
            b->sizes[2 * i] = a0.size;
            b->sizes[2 * i + 1] = a1.size;
        }
    }
    return first_err;
}

/* A store that ended with rc: out of space (for DBFS_SPACE_SHORT_US), or
 * not (any more). */
static void dbfs_data_note_space(dbfs *fs, int rc)
{
    if (rc == -ENOSPC)
        atomic_store(&fs->space_short_until_us, g_get_monotonic_time() + DBFS_SPACE_SHORT_US);
    else if (rc == 0 && atomic_load(&fs->space_short_until_us) != 0)
        atomic_store(&fs->space_short_until_us, 0);
}

/* dbfs_data_space_short -- see dbfs_data.h. */
bool dbfs_data_space_short(const dbfs *fs)
{
    return atomic_load(&fs->space_short_until_us) > g_get_monotonic_time();
}

/* Committed: which chunks each write changed (the buffer cache's history:
 * the other chunks' entries stay current) and what its pieces hold now,
 * as of its new ctime, into the buffer cache; a small file's whole
 * contents, when known, into the small-file cache. */
static void dbfs_data_learn(dbfs_conn *c, dbfs_fh fh, const dbfs_data_batch *b)
{
    const uint32_t cs = c->fs->info.chunk_size;

    for (size_t i = 0; i < b->n; i++) {
        const store_write *w = &b->ws[i];

        dbfs_small_learn_write(c->fs, fh.ino, b->ctimes[2 * i], b->sizes[2 * i],
                               b->ctimes[2 * i + 1], b->sizes[2 * i + 1], w);
        if (!c->fs->chunks)
            continue;

        cache_chunk_moved(c->fs->chunks, fh.ino, b->ctimes[2 * i], b->ctimes[2 * i + 1],
                          w->npieces ? w->pieces[0].chunk : 1,
                          w->npieces ? w->pieces[w->npieces - 1].chunk : 0);
        for (size_t k = 0; k < w->npieces; k++) {
            const store_piece *pc = &w->pieces[k];

            cache_chunk_wrote(c->fs->chunks, fh.ino, pc->chunk, b->ctimes[2 * i],
                              b->ctimes[2 * i + 1], pc->at, pc->raw, pc->n, cs);
        }
    }
}

/* Ask the space guard to admit the writes ws[0 .. n): their stored bytes,
 * and whether they all go to allfiles. */
static int dbfs_data_admit(dbfs *fs, const store_write *ws, size_t n, dbfs_space_ticket *t)
{
    uint64_t bytes = 0, end = 0;

    for (size_t i = 0; i < n; i++) {
        bytes += ws[i].data_len;
        end = MAX(end, ws[i].off + ws[i].len);
    }
    return dbfs_space_take(fs, bytes, 0, dbfs_space_shared(fs, end), t);
}

/* Did the writes replace stored data (dead rows for VACUUM)? pre: the
 * file before them. */
static bool dbfs_data_overwrote(const store_write *ws, size_t n, const dbfs_attr *pre)
{
    for (size_t i = 0; i < n && pre->used > 0; i++)
        if (ws[i].len > 0 && ws[i].off < pre->size)
            return true;
    return false;
}

/*
 * dbfs_data_store -- see dbfs_data.h. The writes are admitted by the
 * space guard, queued in order, each by the layout (store.h
 * queue_write), and end with one Sync; a serialization failure or
 * deadlock reruns the whole batch (bounded).
 */
int dbfs_data_store(dbfs_conn *c, dbfs_fh fh, const store_write *ws, size_t n, dbfs_attr *pre,
                    dbfs_attr *post)
{
    dbfs_data_batch b = {.ws = ws, .n = n, .pre = pre, .post = post};
    dbfs_space_ticket ticket;
    dbfs_cache_op op;
    int rc;

    /* A file last seen guarded takes the guarded path at once
     * (dbfs_xf_write.c); one the database finds guarded, after its refusal. */
    if (dbfs_xf_seen(c->fs, fh.ino) != 0)
        return dbfs_xf_store(c, fh, ws, n, pre, post);
    rc = dbfs_data_admit(c->fs, ws, n, &ticket);
    if (rc != 0)
        return rc;
    b.nst = calloc(n, sizeof *b.nst);
    b.ctimes = calloc(2 * n, sizeof *b.ctimes);
    b.sizes = calloc(2 * n, sizeof *b.sizes);
    if (!b.nst || !b.ctimes || !b.sizes) {
        free(b.nst);
        free(b.ctimes);
        free(b.sizes);
        dbfs_space_done(c->fs, &ticket, false);
        return -ENOMEM;
    }
    dbfs_cache_file_begin(c->fs, fh, &op);
    rc = dbfs_batch_run(c, dbfs_data_queue, &b);
    if (rc == 0)
        dbfs_data_learn(c, fh, &b);
    dbfs_cache_file_end(&op, rc, rc == 0 ? post : NULL);
    dbfs_space_done(c->fs, &ticket, rc == 0);
    if (rc == 0 && dbfs_data_overwrote(ws, n, pre))
        dbfs_space_changed(c->fs);
    dbfs_data_note_space(c->fs, rc);
    free(b.nst);
    free(b.ctimes);
    free(b.sizes);
    if (rc == DBFS_XF_EGUARDED)
        rc = dbfs_xf_store(c, fh, ws, n, pre, post);
    return rc;
}

/*
 * dbfs_data_write_sync -- see dbfs_data.h: one WRITE stored at once
 * (FILE_SYNC).
 */
int dbfs_data_write_sync(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off,
                         const void *data, uint32_t len, dbfs_wcc *wcc)
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
    else if (rc == DBFS_XF_ELINK)
        rc = dbfs_xf_link_write(c, cred, fh, off, data, len, wcc);
out:
    free(buf);
    free(pieces);
    return rc;
}
