/*
 * dbfs_wb.c -- write-back of UNSTABLE writes (RFC 1813 3.3.7, 3.3.21):
 * the write-back buffer (cache/cache_wb.h) seen from dbfs, and its flushes
 * into the database.
 *
 * An UNSTABLE WRITE is checked as the database would check it (the file
 * exists, is a regular file, the caller may write it), against the stat
 * cache or one GETATTR, and its bytes are buffered; the reply says
 * UNSTABLE. The data reaches the database in a *flush*: everything the
 * file holds, in the order it was written, in one transaction (one batch:
 * the layout's statements for each contiguous run, store.h), with the
 * time of the latest buffered write as mtime.
 *
 * When a file is flushed:
 *   - COMMIT of the file (dbfs_commit);
 *   - before anything that must see its data: READ, SETATTR (a truncation
 *     must cut buffered data too), an UNCHECKED CREATE that cuts it, and a
 *     FILE_SYNC or DATA_SYNC WRITE to it (dbfs_wb_write_through);
 *   - when it holds more than the per-file flush size (the writer that
 *     crosses it flushes, so a stream turns into large transactions);
 *   - when the buffer is full: the writer flushes the oldest file and
 *     tries again; if it still does not fit, its own write goes straight
 *     to the database (the back-pressure is the writer's own round trip);
 *   - by age, from the server's flusher (dbfs_wb_flush_due), and all of
 *     it at shutdown.
 * Space: a write is buffered only if the space guard (dbfs_space.c) would
 * store it with everything the buffer holds already; otherwise it answers
 * -ENOSPC (or -EAGAIN) at once, and nothing is buffered. Its flush is
 * admitted again when it is stored.
 *
 * What clients see before a flush: GETATTR, ACCESS, LOOKUP, READDIRPLUS
 * and LINK attributes carry the buffered size and mtime/ctime
 * (dbfs_wb_overlay), so a file never seems to shrink or go back in time.
 *
 * Failures of a flush: a transient one (-EAGAIN: the database is away)
 * keeps the data for the next flush; a file that is gone (-ESTALE) drops
 * it; any other (-ENOSPC, -EIO) drops it and the file's next COMMIT
 * answers that error, so the client does not take the data as stored.
 * A crash loses what is buffered: the write verifier changes with every
 * server start (server/pgnfsd_run.c), so clients send it again.
 *
 * NOTES
 *   Flushes store as root (uid 0), kill_priv off: the writes were checked
 *   when they were buffered. A write by a non-root caller to a file with
 *   setuid or setgid set is not buffered (it must clear them at once).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cache_wb.h"
#include "dbfs_atime.h"
#include "dbfs_codec.h"
#include "dbfs_data.h"
#include "dbfs_fetch.h"
#include "dbfs_perm.h"
#include "dbfs_space.h"
#include "dbfs_wb.h"

/* Files the pressure path flushes before it gives up on buffering. */
#define DBFS_WB_RELIEVE 2

/* dbfs_wb_open -- see dbfs_wb.h. */
int dbfs_wb_open(dbfs *fs, const dbfs_config *cfg)
{
    cache_wb_opts o = {0};
    int rc;

    fs->wb = NULL;
    if (cfg->writeback_bytes == 0)
        return 0;
    o.limit = (size_t)cfg->writeback_bytes;
    o.chunk_size = fs->info.chunk_size;
    rc = cache_wb_new(&o, &fs->wb);
    if (rc != 0)
        return rc;
    fs->wb_file_bytes = cfg->writeback_file_bytes ? cfg->writeback_file_bytes : DBFS_WB_FILE_BYTES;
    g_info("write-back buffer: %" PRIu64 " bytes, files flushed past %" PRIu64 " bytes",
           cfg->writeback_bytes, fs->wb_file_bytes);
    return 0;
}

/* dbfs_wb_close -- see dbfs_wb.h. */
void dbfs_wb_close(dbfs *fs)
{
    if (!fs)
        return;
    if (fs->wb) {
        cache_wb_stats st;

        cache_wb_get_stats(fs->wb, &st);
        if (st.bytes > 0)
            g_warning("write-back buffer: %" PRIu64 " files still held data at close", st.files);
    }
    cache_wb_free(fs->wb);
    fs->wb = NULL;
}

/* dbfs_wb_holds_any -- see dbfs_wb.h. */
bool dbfs_wb_holds_any(const dbfs *fs)
{
    return fs->wb && !cache_wb_empty(fs->wb);
}

/* dbfs_wb_holds -- see dbfs_wb.h. */
bool dbfs_wb_holds(dbfs *fs, uint64_t ino)
{
    uint64_t end;
    int64_t mtime;

    return fs->wb && cache_wb_overlay(fs->wb, ino, &end, &mtime);
}

/* dbfs_wb_overlay -- see dbfs_wb.h. */
void dbfs_wb_overlay(dbfs *fs, dbfs_attr *a)
{
    uint64_t end;
    int64_t mtime;

    dbfs_atime_overlay(fs, a);
    if (!fs->wb || a->type != DBFS_REG || !cache_wb_overlay(fs->wb, a->ino, &end, &mtime))
        return;
    if (end > a->size)
        a->size = end;
    if (mtime > a->mtime_ns)
        a->mtime_ns = mtime;
    if (mtime > a->ctime_ns)
        a->ctime_ns = mtime;
}

/* dbfs_wb_attr -- see dbfs_wb.h. */
int dbfs_wb_attr(dbfs_conn *c, dbfs_fh fh, dbfs_attr *out)
{
    int rc = dbfs_fetch_attr(c, fh, out);

    if (rc == 0 && out)
        dbfs_wb_overlay(c->fs, out);
    return rc;
}

/* dbfs_wb_error -- see dbfs_wb.h. */
int dbfs_wb_error(dbfs *fs, uint64_t ino)
{
    return fs->wb ? cache_wb_take_error(fs->wb, ino) : 0;
}

/* The writes of one flush: a store_write per contiguous run of pieces,
 * and what they allocated. */
typedef struct {
    store_write *w;
    size_t n;
    void **bufs; /* per run: the joined bytes (or NULL), the encoded bytes, the pieces */
} dbfs_wb_runs;

static void dbfs_wb_runs_free(dbfs_wb_runs *r)
{
    for (size_t i = 0; r->bufs && i < 3 * r->n; i++)
        free(r->bufs[i]);
    free(r->bufs);
    free(r->w);
}

/* Does piece b continue piece a in the file, in the same layer? */
static bool dbfs_wb_continues(const cache_wb_piece *a, const cache_wb_piece *b, uint32_t cs)
{
    return a->layer == b->layer && b->chunk == a->chunk + 1 && a->at + a->n == cs && b->at == 0;
}

/* The run pc[0 .. n) as the single layout's binary statements take it:
 * the pieces where they are, no copy, with the buffer's headroom before
 * each (a guarded write's header goes there: dbfs_xf_write.c). bufs[2]
 * gets the piece array. Returns 0 or -ENOMEM. */
static int dbfs_wb_run_direct(const cache_wb_piece *pc, size_t n, store_write *w, void **bufs)
{
    store_piece *sp = calloc(n, sizeof *sp);

    if (!sp)
        return -ENOMEM;
    for (size_t k = 0; k < n; k++)
        sp[k] = (store_piece){.chunk = pc[k].chunk,
                              .at = pc[k].at,
                              .n = pc[k].n,
                              .data = pc[k].data,
                              .data_len = pc[k].n,
                              .raw = pc[k].data,
                              .head = pc[k].data - CACHE_WB_HEADROOM};
    bufs[2] = sp;
    w->pieces = sp;
    w->npieces = n;
    w->data_len = w->len;
    return 0;
}

/* The run pc[0 .. n) joined into one buffer (bufs[0], when n > 1) and cut
 * into encoded pieces (dbfs_data_pieces: bufs[1] and bufs[2]). Returns 0
 * or -ENOMEM. */
static int dbfs_wb_run_encoded(const dbfs *fs, const cache_wb_piece *pc, size_t n, store_write *w,
                               void **bufs)
{
    const void *data = pc[0].data;

    if (n > 1) {
        unsigned char *joined = malloc(w->len);
        size_t at = 0;

        if (!joined)
            return -ENOMEM;
        for (size_t k = 0; k < n; k++) {
            memcpy(joined + at, pc[k].data, pc[k].n);
            at += pc[k].n;
        }
        bufs[0] = joined;
        data = joined;
    }
    return dbfs_data_pieces(&fs->info, data, w, (store_piece **)&bufs[2], &bufs[1]);
}

/*
 * Turn the taken pieces into store_writes (r), one per contiguous run,
 * stored by cred at now_ns; the pieces' memory stays the taken flush's.
 * Returns 0 or -ENOMEM (r freed).
 */
static int dbfs_wb_make_runs(const dbfs *fs, dbfs_fh fh, const cache_wb_piece *pc, size_t np,
                             const dbfs_cred *cred, int64_t now_ns, dbfs_wb_runs *r)
{
    const uint32_t cs = fs->info.chunk_size;
    /* Binary chunks into allfiles: the single layout's statements take
     * each piece on its own, so runs need not be joined. */
    const bool direct = fs->info.encoding == DBFS_ENC_BINARY && fs->store == &store_single;
    size_t nruns = 0;
    int rc = 0;

    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < np; i++)
        if (i == 0 || !dbfs_wb_continues(&pc[i - 1], &pc[i], cs))
            nruns++;
    r->w = calloc(nruns, sizeof *r->w);
    r->bufs = calloc(3 * nruns, sizeof *r->bufs);
    if (!r->w || !r->bufs)
        rc = -ENOMEM;
    for (size_t i = 0, j; rc == 0 && i < np; i = j) {
        store_write *w = &r->w[r->n];
        void **bufs = &r->bufs[3 * r->n];

        *w = (store_write){.fh = fh,
                           .cred = cred,
                           .off = pc[i].chunk * cs + pc[i].at,
                           .len = pc[i].n,
                           .now_ns = now_ns};
        for (j = i + 1; j < np && dbfs_wb_continues(&pc[j - 1], &pc[j], cs); j++)
            w->len += pc[j].n;
        r->n++;
        rc = direct ? dbfs_wb_run_direct(&pc[i], j - i, w, bufs)
                    : dbfs_wb_run_encoded(fs, &pc[i], j - i, w, bufs);
    }
    if (rc != 0) {
        dbfs_wb_runs_free(r);
        memset(r, 0, sizeof *r);
    }
    return rc;
}

/*
 * dbfs_wb_flush -- see dbfs_wb.h. One round trip when ino holds data,
 * none otherwise.
 */
int dbfs_wb_flush(dbfs_conn *c, uint64_t ino, dbfs_attr *pre, dbfs_attr *post, bool *flushed)
{
    static const dbfs_cred root = {0};
    cache_wb_taken *t;
    const cache_wb_piece *pc;
    dbfs_wb_runs runs;
    dbfs_attr before, after;
    dbfs_fh fh;
    size_t np;
    int rc;

    if (flushed)
        *flushed = false;
    if (!c->fs->wb || !(t = cache_wb_take(c->fs->wb, ino)))
        return 0;
    fh.ino = ino;
    fh.gen = cache_wb_taken_gen(t);
    pc = cache_wb_taken_pieces(t, &np);
    rc = dbfs_wb_make_runs(c->fs, fh, pc, np, &root, cache_wb_taken_mtime(t), &runs);
    if (rc == 0) {
        rc = dbfs_data_store(c, fh, runs.w, runs.n, &before, &after);
        dbfs_wb_runs_free(&runs);
    }
    if (rc != 0 && rc != -ESTALE && rc != -EAGAIN && rc != -ENOMEM)
        g_warning("write-back: storing %" PRIu64 " buffered bytes of inode %" PRIu64
                  " failed (%s): the data is dropped and the file's next COMMIT fails",
                  cache_wb_taken_bytes(t), ino, g_strerror(-rc));
    /* Before: as clients saw it (the data in flight included). */
    if (rc == 0 && pre) {
        *pre = before;
        dbfs_wb_overlay(c->fs, pre);
    }
    cache_wb_done(c->fs->wb, t, rc == -EAGAIN || rc == -ENOMEM ? CACHE_WB_KEEP : rc);
    if (flushed)
        *flushed = true;
    if (rc == 0 && post) {
        *post = after;
        dbfs_wb_overlay(c->fs, post);
    }
    return rc;
}

/*
 * Make room: flush the files holding the oldest data (at most
 * DBFS_WB_RELIEVE of them). Errors are the flushes' own business (kept
 * or reported at COMMIT). Cannot fail.
 */
static void dbfs_wb_relieve(dbfs_conn *c)
{
    uint64_t inos[DBFS_WB_RELIEVE];
    size_t n = cache_wb_due(c->fs->wb, INT64_MAX, inos, DBFS_WB_RELIEVE);

    for (size_t i = 0; i < n; i++)
        dbfs_wb_flush(c, inos[i], NULL, NULL, NULL);
}

/*
 * Check an UNSTABLE write as the database would (the file exists, is a
 * regular file, the caller may write it: dbfs_perm_may_io) on the
 * attributes as stored, *a. Returns 0, or the errno the write answers.
 */
static int dbfs_wb_check(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, dbfs_attr *a)
{
    int rc = dbfs_fetch_attr(c, fh, a);

    if (rc != 0)
        return rc;
    if (a->type == DBFS_DIR)
        return -EISDIR;
    if (a->type != DBFS_REG)
        return -EINVAL;
    if (!dbfs_perm_may_io(a, cred, DBFS_MAY_WRITE))
        return -EACCES;
    return 0;
}

/*
 * Put a checked write into the buffer; when it does not fit, flush the
 * file (a layer of it is in flight) or the oldest files and try once
 * more. Returns 0 (buffered; *held: what the file holds now, *a: the
 * attributes as stored now) or an errno of cache_wb_put.
 */
static int dbfs_wb_put(dbfs_conn *c, dbfs_fh fh, uint64_t off, const void *data, uint32_t len,
                       int64_t now, dbfs_attr *a, size_t *held)
{
    dbfs *fs = c->fs;
    int rc = cache_wb_put(fs->wb, fh.ino, fh.gen, off, data, len, now, held);

    if (rc != -EBUSY && rc != -ENOSPC)
        return rc;
    if (rc == -EBUSY)
        dbfs_wb_flush(c, fh.ino, NULL, NULL, NULL);
    else
        dbfs_wb_relieve(c);
    rc = cache_wb_put(fs->wb, fh.ino, fh.gen, off, data, len, now, held);
    /* The flushes may have stored this file: what is stored now. */
    if (rc == 0)
        dbfs_fetch_attr(c, fh, a);
    return rc;
}

/* dbfs_wb_write -- see dbfs_wb.h. */
int dbfs_wb_write(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, const void *data,
                  uint32_t len, dbfs_wcc *wcc, dbfs_wb_outcome *outcome)
{
    dbfs *fs = c->fs;
    dbfs_attr a, pre, post;
    size_t held = 0;
    int rc;

    *outcome = DBFS_WB_THROUGH;
    if (!fs->wb || dbfs_data_space_short(fs))
        return 0;
    rc = dbfs_wb_check(c, cred, fh, &a);
    if (rc != 0)
        return rc;
    if (dbfs_attr_is_xlink(&a))
        return 0; /* a transformation link: its base is written at once */
    if (cred->uid != 0 && (a.mode & (DBFS_MODE_SETUID | DBFS_MODE_SETGID)))
        return 0; /* the write must clear setuid/setgid now */
    rc = dbfs_space_check(fs, dbfs_codec_enc_len(fs->info.encoding, len), cache_wb_bytes(fs->wb),
                          dbfs_space_shared(fs, off + len));
    if (rc != 0)
        return rc;
    pre = a;
    dbfs_wb_overlay(fs, &pre);
    if (dbfs_wb_put(c, fh, off, data, len, dbfs_now_ns(), &a, &held) != 0)
        return 0;
    post = a;
    dbfs_wb_overlay(fs, &post);
    dbfs_wcc_of(wcc, &pre, &post);
    *outcome = DBFS_WB_BUFFERED;
    /* A stream turns into large transactions: the writer that crosses
     * the file's flush size stores it (the write itself stays UNSTABLE;
     * a failure is kept, or reported by the next COMMIT). */
    if (held >= fs->wb_file_bytes)
        dbfs_wb_flush(c, fh.ino, NULL, NULL, NULL);
    return 0;
}

/* dbfs_wb_write_through -- see dbfs_wb.h. */
int dbfs_wb_write_through(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off,
                          const void *data, uint32_t len, dbfs_wcc *wcc)
{
    dbfs_attr seen;
    bool have_seen = false;
    int rc;

    if (dbfs_wb_holds(c->fs, fh.ino)) {
        /* What the client saw before this write includes buffered data. */
        have_seen = dbfs_wb_attr(c, fh, &seen) == 0;
        rc = dbfs_wb_flush(c, fh.ino, NULL, NULL, NULL);
        if (rc == -EAGAIN)
            return rc;
    }
    rc = dbfs_data_write_sync(c, cred, fh, off, data, len, wcc);
    if (rc == 0 && wcc && have_seen)
        dbfs_wcc_of(wcc, &seen, &wcc->post);
    return rc;
}

/* dbfs_wb_flush_due -- see dbfs.h. */
int dbfs_wb_flush_due(dbfs_conn *c, unsigned age_ms)
{
    int64_t before = age_ms ? cache_wb_now_us() - (int64_t)age_ms * 1000 : INT64_MAX;
    uint64_t inos[64];
    size_t n;
    /* Deferred atimes first (dbfs_atime.h): they wait only for this. */
    int done = dbfs_atime_flush(c);

    if (done == -EAGAIN)
        return -EAGAIN;
    if (!c->fs->wb)
        return done;
    do {
        n = cache_wb_due(c->fs->wb, before, inos, G_N_ELEMENTS(inos));
        for (size_t i = 0; i < n; i++) {
            int rc = dbfs_wb_flush(c, inos[i], NULL, NULL, NULL);

            if (rc == -EAGAIN)
                return done ? done : -EAGAIN;
            done++;
        }
    } while (n == G_N_ELEMENTS(inos));
    return done;
}

/* dbfs_wb_figures -- see dbfs.h. */
void dbfs_wb_figures(const dbfs *fs, dbfs_wb_stats *out)
{
    cache_wb_stats st;

    memset(out, 0, sizeof *out);
    if (!fs || !fs->wb)
        return;
    cache_wb_get_stats(fs->wb, &st);
    out->enabled = true;
    out->limit = st.limit;
    out->bytes = st.bytes;
    out->files = st.files;
    out->writes = st.writes;
    out->refused = st.refused;
    out->flushes = st.flushes;
    out->flushed_bytes = st.flushed_bytes;
    out->errors = st.errors;
    out->oldest_age_ms = (uint64_t)(st.oldest_age_us / 1000);
}
