/*
 * store_single.c -- storage layout "single": the chunks of every file in
 * one table, allfiles (inode, chunk, data).
 *
 * NOTES
 *   A read is one prepared SELECT joining fileatt with allfiles
 *   (DBFS_ST_SINGLE_READ). A write is a pipeline of prepared statements:
 *   pgnfs_write_begin (checks and locks, raising so that nothing is
 *   stored when the write is not allowed), one upsert per chunk piece
 *   (whole chunks replace without reading the stored one; partial pieces
 *   merge inside the statement), and the UPDATE of size, times, used and
 *   setuid/setgid. With every chunk in one known table, plain prepared
 *   statements cost less than pgnfs_write's PL/pgSQL (measured in
 *   bench/paper/tabcost), which the layouts with per-file tables need.
 *   Nothing here keeps state or memory.
 */
#include "dbfs_xf.h"
#include "store.h"

static int store_single_queue_read(dbfs_conn *c, dbfs_fh fh, uint64_t first, uint64_t last)
{
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)fh.ino);
    dbfs_param_i4(&p, (int32_t)fh.gen);
    dbfs_param_i8(&p, (int64_t)first);
    dbfs_param_i8(&p, (int64_t)last);
    dbfs_param_bool(&p, dbfs_xf_want_text(c->fs, fh.ino));
    return dbfs_batch_add(c, DBFS_ST_SINGLE_READ, &p);
}

static size_t store_single_queue_write(dbfs_conn *c, const store_write *w)
{
    const uint64_t cs = c->fs->info.chunk_size;
    const bool b64 = c->fs->info.encoding == DBFS_ENC_BASE64;
    const int64_t first = (int64_t)(w->off / cs);
    const int64_t last = w->len > 0 ? (int64_t)((w->off + w->len - 1) / cs) : first - 1;
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)w->fh.ino);
    dbfs_param_i4(&p, (int32_t)w->fh.gen);
    dbfs_param_cred(&p, w->cred);
    dbfs_param_i8(&p, first);
    dbfs_param_i8(&p, last);
    dbfs_batch_add(c, DBFS_ST_WRITE_BEGIN, &p);
    if (w->len == 0)
        return 1;
    for (size_t i = 0; i < w->npieces; i++) {
        const store_piece *pc = &w->pieces[i];

        if (pc->at == 0 && pc->n == cs) {
            store_single_queue_chunk(c, w->fh.ino, pc->chunk, pc->data, pc->data_len);
            continue;
        }
        dbfs_params_init(&p);
        dbfs_param_i8(&p, (int64_t)w->fh.ino);
        dbfs_param_i8(&p, (int64_t)pc->chunk);
        dbfs_param_i4(&p, (int32_t)pc->at);
        dbfs_param_bytes(&p, pc->data, pc->data_len);
        dbfs_batch_add(c, b64 ? DBFS_ST_SINGLE_WRITE_PART64 : DBFS_ST_SINGLE_WRITE_PART, &p);
    }
    store_single_queue_end(c, w->fh.ino, w->off + w->len, w->now_ns, w->kill_priv, first, last);
    return w->npieces + 2;
}

/* store_single_queue_chunk -- see store.h. */
int store_single_queue_chunk(dbfs_conn *c, uint64_t ino, uint64_t k, const void *v, size_t vlen)
{
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)ino);
    dbfs_param_i8(&p, (int64_t)k);
    dbfs_param_bytes(&p, v, vlen);
    return dbfs_batch_add(c, DBFS_ST_SINGLE_WRITE_FULL, &p);
}

/* store_single_queue_end -- see store.h. */
int store_single_queue_end(dbfs_conn *c, uint64_t ino, uint64_t end, int64_t now_ns, bool kill_priv,
                           int64_t first, int64_t last)
{
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)ino);
    dbfs_param_i8(&p, (int64_t)end);
    dbfs_param_i8(&p, now_ns);
    dbfs_param_bool(&p, kill_priv);
    dbfs_param_i8(&p, first);
    dbfs_param_i8(&p, last);
    return dbfs_batch_add(c, DBFS_ST_WRITE_END, &p);
}

const store_ops store_single = {
    .name = "single",
    .queue_read = store_single_queue_read,
    .queue_write = store_single_queue_write,
};
