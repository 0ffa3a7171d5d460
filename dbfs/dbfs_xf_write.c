/*
 * dbfs_xf_write.c -- storing the data of guarded files (dbfs_xf.h): every
 * chunk a write touches is stored whole, as its chain encodes it; a chunk
 * the write covers only in part is decoded first and the write overlaid
 * on its plain bytes (read-modify-write).
 *
 * NOTES
 *   Two round trips (25_xform.sql says why they are one atomic change),
 *   one when the writes cover whole chunks or the caches hold the chunks
 *   they cover in part (dbfs_xf_old_cached):
 *     1. pgnfs_xf_old: the file's change counter, size and chain, and the
 *        stored chunks the write merges with;
 *     2. pgnfs_xf_write: lock, check, refuse when change or chain moved
 *        since 1 (DBFS_XF_ECHANGED: both run again, bounded), replace the
 *        chunks, move size, times and used.
 *   With the single layout and a chain whose stages all run here, step 2
 *   is the plain write's pipeline instead (dbfs_xf_step_pipe): one
 *   pgnfs_xf_write_begin (check, lock, compare), one prepared upsert per
 *   chunk, pgnfs_write_end; the same statements, batching and cost as an
 *   unguarded write, where pgnfs_xf_write's PL/pgSQL stored row by row.
 *   Nothing is stored when a chunk fails to decode (its stored bytes are
 *   left as they are, -EIO) or to encode (-EIO). The file's chain may be
 *   none by the time step 1 runs (pgnfs xform set): then the chunks are
 *   stored plain, whole, which the plain path reads as it always does.
 *
 *   Memory: one plain chunk per chunk touched and their stored values,
 *   all freed before return. The caches learn the plain bytes after the
 *   commit, as dbfs_data.c's writes tell them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <glib.h>

#include "cache_chunk.h"
#include "cache_wb.h"
#include "dbfs_cache.h"
#include "dbfs_codec.h"
#include "dbfs_small.h"
#include "dbfs_space.h"
#include "dbfs_xf.h"

/* Runs of a guarded write whose file changed under it before -EAGAIN. */
#define DBFS_XF_TRIES 8

/* One chunk a write touches. */
typedef struct {
    uint64_t k;
    bool covered;        /* one piece covers all of it: no need of the old bytes */
    char *plain;         /* chunk_size bytes (NULL until needed: a covered chunk
                          * takes the piece where it is) */
    const char *src;     /* the plain bytes: plain, or the piece of a write
                          * that covers the whole chunk (not copied) */
    unsigned char *head; /* when src is such a piece with room before it
                          * (store_piece.head), that room; else NULL */
    size_t len;          /* plain bytes */
    void *stored;        /* the value to store */
    size_t stored_len;
    bool own; /* stored is malloc'd (else it points into src's buffer) */
} dbfs_xf_ck;

/* A guarded write in progress. */
typedef struct {
    dbfs_conn *c;
    dbfs_fh fh;
    const dbfs_cred *cred;
    dbfs_xf_ck *ck;
    size_t nck;
    uint64_t end; /* the writes' end: the size at least */
    int64_t now_ns;
    bool kill_priv;
    /* step 1's answer */
    PGresult *old;
    /* step 2's parameters and answer */
    /* step 2's statements: the arrays of each (until the batch ends) */
    unsigned char **a_chunks, **a_vals;
    size_t nstmt;
    int64_t change;
    uint64_t chain;
    bool pipe; /* step 2 as plain statements (dbfs_xf_step_pipe) */
    dbfs_attr pre, post;
} dbfs_xf_op;

/* int8[] of the chunk numbers of op's chunks from .. to - 1 (all of them,
 * or those not covered). */
static unsigned char *dbfs_xf_chunk_array(const dbfs_xf_op *op, size_t from, size_t to,
                                          bool uncovered_only, size_t *len)
{
    unsigned char(*be)[8] = calloc(op->nck ? op->nck : 1, 8);
    const void **vals = calloc(op->nck ? op->nck : 1, sizeof *vals);
    size_t *lens = calloc(op->nck ? op->nck : 1, sizeof *lens);
    unsigned char *a = NULL;
    size_t n = 0;

    if (be && vals && lens) {
        for (size_t i = from; i < to; i++) {
            if (uncovered_only && op->ck[i].covered)
                continue;
            dbfs_xf_put_be(be[n], op->ck[i].k, 8);
            vals[n] = be[n];
            lens[n] = 8;
            n++;
        }
        a = dbfs_xf_array(DBFS_XF_INT8OID, n, vals, lens, len);
    }
    free(be);
    free(vals);
    free(lens);
    return a;
}

static int dbfs_xf_ck_cmp(const void *a, const void *b)
{
    const dbfs_xf_ck *x = a, *y = b;

    return x->k < y->k ? -1 : x->k > y->k;
}

/* The chunks the writes touch, in chunk order, each once. */
static int dbfs_xf_collect(dbfs_xf_op *op, const store_write *ws, size_t n)
{
    const uint32_t cs = op->c->fs->info.chunk_size;
    size_t total = 0, m = 0;

    for (size_t i = 0; i < n; i++)
        total += ws[i].npieces;
    op->ck = calloc(total ? total : 1, sizeof *op->ck);
    if (!op->ck)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < ws[i].npieces; j++) {
            const store_piece *pc = &ws[i].pieces[j];

            op->ck[m].k = pc->chunk;
            op->ck[m].covered = pc->at == 0 && pc->n == cs;
            m++;
        }
    qsort(op->ck, m, sizeof *op->ck, dbfs_xf_ck_cmp);
    op->nck = 0;
    for (size_t i = 0; i < m; i++) {
        if (op->nck > 0 && op->ck[op->nck - 1].k == op->ck[i].k) {
            op->ck[op->nck - 1].covered |= op->ck[i].covered;
            continue;
        }
        op->ck[op->nck++] = op->ck[i];
    }
    for (size_t i = 0; i < op->nck; i++) {
        if (op->ck[i].covered)
            continue; /* (dbfs_xf_overlay allocates it if it must) */
        op->ck[i].plain = malloc(cs);
        if (!op->ck[i].plain)
            return -ENOMEM;
        op->ck[i].src = op->ck[i].plain;
    }
    return 0;
}

/* Step 1 (dbfs_batch_run's fn). */
static int dbfs_xf_step_old(dbfs_conn *c, void *arg)
{
    dbfs_xf_op *op = arg;
    unsigned char *want;
    size_t wlen = 0;
    dbfs_params p;
    int rc;

    PQclear(op->old);
    op->old = NULL;
    want = dbfs_xf_chunk_array(op, 0, op->nck, true, &wlen);
    if (!want)
        return -ENOMEM;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)op->fh.ino);
    dbfs_param_i4(&p, (int32_t)op->fh.gen);
    dbfs_param_bytes(&p, want, wlen);
    dbfs_batch_add(c, DBFS_ST_XF_OLD, &p);
    dbfs_batch_sync(c);
    rc = dbfs_batch_result(c, &op->old);
    free(want);
    return rc;
}

/* The chunk index of chunk k, or -1. */
static ssize_t dbfs_xf_find(const dbfs_xf_op *op, uint64_t k)
{
    size_t lo = 0, hi = op->nck;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (op->ck[mid].k == k)
            return (ssize_t)mid;
        if (op->ck[mid].k < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* The old plain bytes of the chunks step 1 returned, into their buffers
 * (the others start empty). */
static int dbfs_xf_load_old(dbfs_xf_op *op)
{
    dbfs *fs = op->c->fs;
    const uint32_t cs = fs->info.chunk_size;
    const PGresult *r = op->old;
    void *tmp = NULL;
    int rc = 0;

    for (size_t i = 0; i < op->nck; i++)
        op->ck[i].len = 0;
    for (int row = 0; row < PQntuples(r) && rc == 0; row++) {
        const char *v;
        size_t vlen, plen;
        uint64_t k;
        ssize_t at;

        if (dbfs_get_null(r, row, 3))
            continue;
        k = (uint64_t)dbfs_get_i8(r, row, 3);
        at = dbfs_xf_find(op, k);
        if (at < 0 || !op->ck[at].plain)
            continue; /* (not asked for: a covered chunk has no buffer) */
        v = PQgetvalue(r, row, 4);
        vlen = (size_t)PQgetlength(r, row, 4);
        if (fs->info.encoding != DBFS_ENC_BINARY) {
            size_t room = DBFS_XF_STORED_MAX(cs);
            int64_t dl;

            if (!tmp && !(tmp = malloc(room))) {
                rc = -ENOMEM;
                break;
            }
            dl = dbfs_codec_decode(fs->info.encoding, v, vlen, tmp, room);
            if (dl < 0) {
                rc = (int)dl;
                break;
            }
            v = tmp;
            vlen = (size_t)dl;
        }
        if (op->chain != 0) {
            rc = dbfs_xf_decode(op->c, op->chain, op->fh.ino, k, v, vlen, &v, &plen);
            vlen = plen;
        } else if (vlen > cs) {
            g_warning("write: chunk %" PRIu64 " of file %" PRIu64 " holds more than a chunk", k,
                      op->fh.ino);
            rc = -EIO;
        }
        if (rc == 0) {
            memcpy(op->ck[at].plain, v, vlen);
            op->ck[at].len = vlen;
        }
    }
    free(tmp);
    return rc;
}

/* Overlay the writes' pieces on the chunks' plain bytes, in the writes'
 * order; a piece that covers a whole chunk is taken where it is. Returns
 * 0 or -ENOMEM. */
static int dbfs_xf_overlay(dbfs_xf_op *op, const store_write *ws, size_t n)
{
    const uint32_t cs = op->c->fs->info.chunk_size;

    for (size_t i = 0; i < op->nck; i++) {
        op->ck[i].src = op->ck[i].plain;
        op->ck[i].head = NULL;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < ws[i].npieces; j++) {
            const store_piece *pc = &ws[i].pieces[j];
            dbfs_xf_ck *ck = &op->ck[dbfs_xf_find(op, pc->chunk)];

            if (pc->at == 0 && pc->n == cs) {
                ck->src = pc->raw;
                ck->head = pc->head;
                ck->len = cs;
                continue;
            }
            if (!ck->plain && !(ck->plain = malloc(cs)))
                return -ENOMEM;
            if (ck->src != ck->plain) {
                if (ck->src) /* (a covered chunk met no piece yet: nothing to keep) */
                    memcpy(ck->plain, ck->src, ck->len);
                ck->src = ck->plain;
                ck->head = NULL;
            }
            if (ck->len < pc->at)
                memset(ck->plain + ck->len, 0, pc->at - ck->len);
            memcpy(ck->plain + pc->at, pc->raw, pc->n);
            if (ck->len < (size_t)pc->at + pc->n)
                ck->len = (size_t)pc->at + pc->n;
        }
    return 0;
}

static void dbfs_xf_ck_drop(dbfs_xf_ck *ck)
{
    if (ck->own)
        free(ck->stored);
    ck->stored = NULL;
    ck->own = false;
}

/* Encode every chunk (chain, then the file system's encoding) into its
 * stored value. *stored: the bytes they store. */
static int dbfs_xf_encode_all(dbfs_xf_op *op, uint64_t *stored)
{
    dbfs *fs = op->c->fs;
    const bool binary = fs->info.encoding == DBFS_ENC_BINARY;
    const xf_chain *ch = NULL;
    bool in_room;
    int rc = 0;

    *stored = 0;
    if (op->chain != 0)
        rc = dbfs_xf_chain(op->c, op->chain, &ch);
    if (rc == 0 && ch && !op->c->xf)
        rc = xf_work_new(fs->xf, &op->c->xf);
    /* A chain of built-in identities stores a header and the plain bytes
     * as they are: the header goes in the room the write-back buffer keeps
     * before a piece, and both are stored from there, no copy. */
    in_room =
        binary && ch && xf_chain_header_only(ch) && xf_chain_header_len(ch) <= CACHE_WB_HEADROOM;
    /* Every stage runs here: the single layout stores the values with the
     * plain statements its plain write uses. */
    op->pipe = rc == 0 && op->nck > 0 && fs->info.storage == DBFS_STORAGE_SINGLE &&
               (!ch || xf_chain_sql_count(ch) == 0);
    for (size_t i = 0; i < op->nck && rc == 0; i++) {
        dbfs_xf_ck *ck = &op->ck[i];
        const void *val = ck->src;
        size_t vlen = ck->len;
        void *enc = NULL;
        xf_err xe = {{0}};

        dbfs_xf_ck_drop(ck);
        if (in_room && ck->head) {
            ck->stored = ck->head + CACHE_WB_HEADROOM - xf_chain_header_len(ch);
            ck->stored_len = xf_chain_header_len(ch) + ck->len;
            rc = xf_encode_header(ch, &(xf_chunk){op->fh.ino, ck->k, 0}, ck->len, ck->stored, &xe);
            if (rc != 0) {
                g_warning("xform: %s", xe.msg);
                rc = -EIO;
                break;
            }
            *stored += ck->stored_len;
            continue;
        }
        if (binary && !ch) { /* chain none: the plain bytes where they are */
            ck->stored = (void *)ck->src;
            ck->stored_len = ck->len;
            *stored += ck->stored_len;
            continue;
        }
        if (ch) {
            size_t room = xf_encode_room(ch, ck->len);

            enc = malloc(room);
            if (!enc) {
                rc = -ENOMEM;
                break;
            }
            rc = xf_encode(ch, op->c->xf, &(xf_chunk){op->fh.ino, ck->k, 0}, ck->src, ck->len, enc,
                           room, &vlen, &xe);
            if (rc != 0) {
                g_warning("xform: %s", xe.msg);
                free(enc);
                rc = rc == -ENOMEM ? rc : -EIO;
                break;
            }
            val = enc;
        }
        if (enc && binary) {
            ck->stored = enc; /* stored as the chain made it: no copy */
            ck->stored_len = vlen;
            enc = NULL;
        } else {
            ck->stored = malloc(dbfs_codec_enc_len(fs->info.encoding, vlen) + 1);
            if (!ck->stored) {
                free(enc);
                rc = -ENOMEM;
                break;
            }
            ck->stored_len = dbfs_codec_encode(fs->info.encoding, val, vlen, ck->stored);
        }
        ck->own = true;
        free(enc);
        *stored += ck->stored_len;
    }
    return rc;
}

/* The plain bytes of the chunks one statement of step 2 carries (at least
 * a chunk): PostgreSQL takes one message of megabytes far more slowly than
 * several of one (bench/results/xform-e2e.md). */
#define DBFS_XF_STMT_BYTES (1u << 20)

static void dbfs_xf_free_arrays(dbfs_xf_op *op)
{
    for (size_t i = 0; i < op->nstmt; i++) {
        free(op->a_chunks[i]);
        free(op->a_vals[i]);
    }
    free(op->a_chunks);
    free(op->a_vals);
    op->a_chunks = op->a_vals = NULL;
    op->nstmt = 0;
}

/* Queue one pgnfs_xf_write for chunks from .. to - 1 (the first statement
 * of the store compares the change counter, the others only the chain). */
static int dbfs_xf_queue_write(dbfs_conn *c, dbfs_xf_op *op, size_t from, size_t to)
{
    /* the layout's placement threshold (pgnfs_write's p_threshold) */
    const dbfs_storage st = c->fs->info.storage;
    const int64_t threshold = st == DBFS_STORAGE_INVERSION ? 0
                              : st == DBFS_STORAGE_HYBRID  ? (int64_t)c->fs->info.hybrid_threshold
                                                           : -1;
    const void **vals = calloc(to > from ? to - from : 1, sizeof *vals);
    size_t *lens = calloc(to > from ? to - from : 1, sizeof *lens), clen = 0, vlen = 0;
    unsigned char *ac, *av;
    dbfs_params p;

    if (!vals || !lens) {
        free(vals);
        free(lens);
        return -ENOMEM;
    }
    for (size_t i = from; i < to; i++) {
        vals[i - from] = op->ck[i].stored;
        lens[i - from] = op->ck[i].stored_len;
    }
    ac = dbfs_xf_chunk_array(op, from, to, false, &clen);
    av = dbfs_xf_array(DBFS_XF_BYTEAOID, to - from, vals, lens, &vlen);
    free(vals);
    free(lens);
    op->a_chunks[op->nstmt] = ac;
    op->a_vals[op->nstmt] = av;
    op->nstmt++;
    if (!ac || !av)
        return -ENOMEM;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)op->fh.ino);
    dbfs_param_i4(&p, (int32_t)op->fh.gen);
    dbfs_param_cred(&p, op->cred);
    if (op->change < 0 || op->nstmt > 1)
        dbfs_param_null(&p);
    else
        dbfs_param_i8(&p, op->change);
    dbfs_param_i8(&p, (int64_t)op->chain);
    dbfs_param_bytes(&p, ac, clen);
    dbfs_param_bytes(&p, av, vlen);
    dbfs_param_i8(&p, (int64_t)op->end);
    dbfs_param_i8(&p, op->now_ns);
    dbfs_param_bool(&p, op->kill_priv);
    if (threshold < 0)
        dbfs_param_null(&p);
    else
        dbfs_param_i8(&p, threshold);
    return dbfs_batch_add(c, DBFS_ST_XF_WRITE, &p);
}

/* Step 2 as the single layout's plain write does it, one round trip:
 * pgnfs_xf_write_begin (check, lock, compare, used), one upsert per
 * chunk, pgnfs_write_end (size, times, used; the attributes after). */
static int dbfs_xf_step_pipe(dbfs_conn *c, dbfs_xf_op *op)
{
    const int64_t first = (int64_t)op->ck[0].k, last = (int64_t)op->ck[op->nck - 1].k;
    PGresult *r = NULL;
    dbfs_fnres f;
    dbfs_params p;
    int rc, src;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)op->fh.ino);
    dbfs_param_i4(&p, (int32_t)op->fh.gen);
    dbfs_param_cred(&p, op->cred);
    if (op->change < 0)
        dbfs_param_null(&p);
    else
        dbfs_param_i8(&p, op->change);
    dbfs_param_i8(&p, (int64_t)op->chain);
    dbfs_param_i8(&p, first);
    dbfs_param_i8(&p, last);
    dbfs_batch_add(c, DBFS_ST_XF_WRITE_BEGIN, &p);
    for (size_t i = 0; i < op->nck; i++)
        store_single_queue_chunk(c, op->fh.ino, op->ck[i].k, op->ck[i].stored,
                                 op->ck[i].stored_len);
    store_single_queue_end(c, op->fh.ino, op->end, op->now_ns, op->kill_priv, first, last);
    dbfs_batch_sync(c);

    rc = dbfs_batch_result(c, &r);
    if (rc == 0)
        rc = dbfs_fnres_parse(r, "guarded write", &f);
    if (rc == 0)
        rc = f.status;
    if (rc == 0 && !f.have[DBFS_ROLE_PRE]) {
        g_warning("guarded write: the database answered without the attributes before");
        rc = -EIO;
    }
    if (rc == 0)
        op->pre = f.attr[DBFS_ROLE_PRE];
    PQclear(r);
    for (size_t i = 0; i < op->nck; i++) {
        r = NULL;
        src = dbfs_batch_result(c, &r);
        if (src != 0 && rc == 0)
            rc = src;
        PQclear(r);
    }
    r = NULL;
    src = dbfs_batch_result(c, &r);
    if (src != 0 && rc == 0)
        rc = src;
    if (rc == 0 && PQntuples(r) != 1) {
        g_warning("guarded write: the database answered without the attributes after");
        rc = -EIO;
    }
    if (rc == 0)
        dbfs_get_attr(r, 0, 0, &op->post);
    PQclear(r);
    return rc;
}

/* Step 2 (dbfs_batch_run's fn): one transaction, one round trip, the
 * chunks in statements of at most about DBFS_XF_STMT_BYTES. */
static int dbfs_xf_step_write(dbfs_conn *c, void *arg)
{
    dbfs_xf_op *op = arg;
    size_t nmax = op->nck ? op->nck : 1, from = 0, queued = 0;
    int rc = 0, first = 0;

    if (op->pipe)
        return dbfs_xf_step_pipe(c, op);
    dbfs_xf_free_arrays(op);
    op->a_chunks = calloc(nmax, sizeof *op->a_chunks);
    op->a_vals = calloc(nmax, sizeof *op->a_vals);
    if (!op->a_chunks || !op->a_vals)
        return -ENOMEM;
    do {
        /* (plain bytes: a statement of whole chunks is one chunk's header
         * or so past the bound, not a chunk short of it) */
        const size_t per = DBFS_XF_STMT_BYTES / c->fs->info.chunk_size;
        size_t to = from + (per ? per : 1);

        if (to > op->nck)
            to = op->nck;
        rc = dbfs_xf_queue_write(c, op, from, to);
        queued += rc == 0;
        from = to;
    } while (rc == 0 && from < op->nck);
    dbfs_batch_sync(c);
    for (size_t i = 0; i < queued; i++) {
        PGresult *r = NULL;
        dbfs_fnres f;
        int src = dbfs_batch_result(c, &r);

        if (src == 0)
            src = dbfs_fnres_parse(r, "guarded write", &f);
        if (src == 0)
            src = f.status;
        if (src == 0 && (!f.have[DBFS_ROLE_PRE] || !f.have[DBFS_ROLE_POST])) {
            g_warning("guarded write: the database answered without the attributes");
            src = -EIO;
        }
        if (src == 0) {
            if (i == 0)
                op->pre = f.attr[DBFS_ROLE_PRE];
            op->post = f.attr[DBFS_ROLE_POST];
        }
        if (src != 0 && first == 0)
            first = src;
        PQclear(r);
    }
    return rc != 0 ? rc : first;
}

/*
 * Step 1 from the caches, when they can answer it: the file was last seen
 * with chain `known`, the stat cache knows it, and the buffer cache holds,
 * as of its ctime, every chunk the writes cover only in part within the
 * file's size (their plain bytes: what step 1 would decode), which for a
 * new file is none, so that it needs no buffer cache. Step 2 then checks
 * the change counter and chain the caches showed, so a guess that is no
 * longer the file's is DBFS_XF_ECHANGED and both steps run. Returns true
 * with the chunks' old bytes in place, false (nothing usable) otherwise.
 */
static bool dbfs_xf_old_cached(dbfs_xf_op *op, uint64_t known)
{
    dbfs *fs = op->c->fs;
    const uint32_t cs = fs->info.chunk_size;
    dbfs_attr a;

    if (known == 0 || dbfs_cache_attr(fs, op->fh, &a) != 0 || a.type != DBFS_REG)
        return false;
    for (size_t i = 0; i < op->nck; i++) {
        dbfs_xf_ck *ck = &op->ck[i];
        long n;

        ck->len = 0;
        if (ck->covered || ck->k * cs >= a.size)
            continue; /* nothing to keep: written whole, or past the end */
        if (!fs->chunks)
            return false; /* (a new file's writes need no buffer cache) */
        n = cache_chunk_get(fs->chunks, op->fh.ino, ck->k, a.ctime_ns, 0, cs, ck->plain);
        if (n < 0)
            return false;
        ck->len = (size_t)n;
    }
    op->change = (int64_t)a.change;
    op->chain = known;
    return true;
}

/* One run of steps 1 and 2; step 2 alone when `known` (the chain the
 * file was last seen with) and the writes cover every chunk they touch:
 * no old bytes are needed, and step 2 checks the chain (a guess that
 * turned out wrong is DBFS_XF_ECHANGED, and the caller runs both steps);
 * or when the caches hold the old bytes (dbfs_xf_old_cached). */
static int dbfs_xf_run(dbfs_xf_op *op, const store_write *ws, size_t n, uint64_t known)
{
    dbfs *fs = op->c->fs;
    dbfs_space_ticket ticket;
    uint64_t stored;
    bool covered;
    int rc = 0;

    if (known == DBFS_XF_SEEN_GUARDED)
        known = 0; /* guarded, chain unknown: step 1 tells */
    covered = known != 0;
    for (size_t i = 0; i < op->nck && covered; i++)
        covered = op->ck[i].covered;
    if (covered) {
        op->change = -1; /* step 2 does not compare it */
        op->chain = known;
        for (size_t i = 0; i < op->nck; i++)
            op->ck[i].len = 0;
    } else if (!dbfs_xf_old_cached(op, known)) {
        rc = dbfs_batch_run(op->c, dbfs_xf_step_old, op);
        if (rc != 0)
            return rc;
        if (PQntuples(op->old) == 0)
            return -ESTALE;
        op->change = dbfs_get_i8(op->old, 0, 0);
        op->chain = (uint64_t)dbfs_get_i8(op->old, 0, 2);
        rc = dbfs_xf_load_old(op);
        if (rc != 0)
            return rc;
    }
    rc = dbfs_xf_overlay(op, ws, n);
    if (rc == 0)
        rc = dbfs_xf_encode_all(op, &stored);
    if (rc != 0)
        return rc;
    rc = dbfs_space_take(fs, stored, 0, dbfs_space_shared(fs, op->end), &ticket);
    if (rc != 0)
        return rc;
    rc = dbfs_batch_run(op->c, dbfs_xf_step_write, op);
    dbfs_space_done(fs, &ticket, rc == 0);
    return rc;
}

/* Committed: the caches learn the chunks' plain bytes as of the new ctime. */
static void dbfs_xf_learn(dbfs_xf_op *op, const store_write *ws, size_t n)
{
    dbfs *fs = op->c->fs;

    if (n == 1)
        dbfs_small_learn_write(fs, op->fh.ino, op->pre.ctime_ns, op->pre.size, op->post.ctime_ns,
                               op->post.size, &ws[0]);
    if (!fs->chunks || op->nck == 0)
        return;
    cache_chunk_moved(fs->chunks, op->fh.ino, op->pre.ctime_ns, op->post.ctime_ns, op->ck[0].k,
                      op->ck[op->nck - 1].k);
    for (size_t i = 0; i < op->nck; i++)
        cache_chunk_wrote(fs->chunks, op->fh.ino, op->ck[i].k, op->pre.ctime_ns, op->post.ctime_ns,
                          0, op->ck[i].src, (uint32_t)op->ck[i].len, fs->info.chunk_size);
}

static void dbfs_xf_op_free(dbfs_xf_op *op)
{
    for (size_t i = 0; op->ck && i < op->nck; i++) {
        free(op->ck[i].plain);
        dbfs_xf_ck_drop(&op->ck[i]);
    }
    free(op->ck);
    dbfs_xf_free_arrays(op);
    PQclear(op->old);
}

/* The guarded write of ws[0 .. n) (see dbfs_xf_store). */
static int dbfs_xf_write_all(dbfs_conn *c, dbfs_fh fh, const dbfs_cred *cred, const store_write *ws,
                             size_t n, dbfs_attr *pre, dbfs_attr *post)
{
    dbfs_xf_op op;
    dbfs_cache_op cop;
    int rc;

    memset(&op, 0, sizeof op);
    op.c = c;
    op.fh = fh;
    op.cred = cred;
    for (size_t i = 0; i < n; i++) {
        if (ws[i].len > 0 && ws[i].off + ws[i].len > op.end)
            op.end = ws[i].off + ws[i].len;
        op.kill_priv |= ws[i].kill_priv;
        op.now_ns = ws[i].now_ns;
    }
    rc = dbfs_xf_collect(&op, ws, n);
    if (rc == 0) {
        dbfs_cache_file_begin(c->fs, fh, &cop);
        uint64_t known = dbfs_xf_seen(c->fs, fh.ino);

        for (int t = 0; t < DBFS_XF_TRIES; t++, known = 0) {
            rc = dbfs_xf_run(&op, ws, n, known);
            if (rc != DBFS_XF_ECHANGED)
                break;
        }
        if (rc == DBFS_XF_ECHANGED)
            rc = -EAGAIN;
        if (rc == 0)
            dbfs_xf_learn(&op, ws, n);
        dbfs_cache_file_end(&cop, rc, rc == 0 ? &op.post : NULL);
        if (rc == 0 && op.pre.used > 0)
            dbfs_space_changed(c->fs);
    }
    if (rc == 0) {
        dbfs_xf_note(c->fs, fh.ino, op.chain);
        *pre = op.pre;
        *post = op.post;
    }
    dbfs_xf_op_free(&op);
    return rc;
}

/* dbfs_xf_store -- see dbfs_xf.h. */
int dbfs_xf_store(dbfs_conn *c, dbfs_fh fh, const store_write *ws, size_t n, dbfs_attr *pre,
                  dbfs_attr *post)
{
    return dbfs_xf_write_all(c, fh, n ? ws[0].cred : NULL, ws, n, pre, post);
}

/* dbfs_xf_cut -- see dbfs_xf.h: a write of nothing into the chunk where
 * size falls, with the chunk's plain bytes cut to size first. */
int dbfs_xf_cut(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t size)
{
    const uint32_t cs = c->fs->info.chunk_size;
    const uint64_t k = size / cs, keep = size % cs;
    store_piece pc = {.chunk = k, .at = (uint32_t)keep, .n = 0, .raw = ""};
    store_write w = {.fh = fh, .cred = cred, .off = size, .pieces = &pc, .npieces = 1};
    dbfs_xf_op op;
    dbfs_cache_op cop;
    int rc;

    if (keep == 0)
        return 0; /* whole chunks only: SQL deletes them */
    memset(&op, 0, sizeof op);
    op.c = c;
    op.fh = fh;
    op.cred = cred;
    op.now_ns = dbfs_now_ns();
    rc = dbfs_xf_collect(&op, &w, 1);
    if (rc == 0) {
        dbfs_cache_file_begin(c->fs, fh, &cop);
        for (int t = 0; t < DBFS_XF_TRIES; t++) {
            rc = dbfs_batch_run(c, dbfs_xf_step_old, &op);
            if (rc == 0 && PQntuples(op.old) == 0)
                rc = -ESTALE;
            if (rc == 0) {
                op.change = dbfs_get_i8(op.old, 0, 0);
                op.chain = (uint64_t)dbfs_get_i8(op.old, 0, 2);
                rc = dbfs_xf_load_old(&op);
            }
            if (rc == 0 && op.ck[0].len <= keep)
                break; /* nothing stored past size in that chunk */
            if (rc == 0)
                op.ck[0].len = keep;
            if (rc == 0)
                rc = dbfs_xf_encode_all(&op, &(uint64_t){0});
            if (rc == 0)
                rc = dbfs_batch_run(c, dbfs_xf_step_write, &op);
            if (rc != DBFS_XF_ECHANGED)
                break;
        }
        if (rc == DBFS_XF_ECHANGED)
            rc = -EAGAIN;
        if (rc == 0 && op.post.ctime_ns != 0 && c->fs->chunks) {
            cache_chunk_moved(c->fs->chunks, fh.ino, op.pre.ctime_ns, op.post.ctime_ns, k, k);
            cache_chunk_wrote(c->fs->chunks, fh.ino, k, op.pre.ctime_ns, op.post.ctime_ns, 0,
                              op.ck[0].plain, (uint32_t)op.ck[0].len, cs);
        }
        dbfs_cache_file_end(&cop, rc, rc == 0 ? &op.post : NULL);
    }
    dbfs_xf_op_free(&op);
    return rc;
}
