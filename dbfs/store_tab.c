/*
 * store_tab.c -- the statements of the layouts that may give a file a
 * table of its own (inversion, hybrid; store.h): the read through
 * pgnfs_data_read() and the whole WRITE in one statement (pgnfs_write),
 * with the layout's placement rule as a parameter.
 *
 * NOTES
 *   Both only queue on the caller's batch. Nothing here keeps state.
 */
#include "dbfs_xf.h"
#include "store.h"

/* store_queue_tab_read -- see store.h. */
int store_queue_tab_read(dbfs_conn *c, dbfs_fh fh, uint64_t first, uint64_t last)
{
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)fh.ino);
    dbfs_param_i4(&p, (int32_t)fh.gen);
    dbfs_param_i8(&p, (int64_t)first);
    dbfs_param_i8(&p, (int64_t)last);
    dbfs_param_bool(&p, dbfs_xf_want_text(c->fs, fh.ino));
    return dbfs_batch_add(c, DBFS_ST_TAB_READ, &p);
}

/* store_queue_write_stmt -- see store.h. */
size_t store_queue_write_stmt(dbfs_conn *c, const store_write *w, int64_t threshold)
{
    const dbfs_info *info = &c->fs->info;
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)w->fh.ino);
    dbfs_param_i4(&p, (int32_t)w->fh.gen);
    dbfs_param_cred(&p, w->cred);
    dbfs_param_i8(&p, (int64_t)w->off);
    dbfs_param_i8(&p, (int64_t)w->len);
    dbfs_param_bytes(&p, w->data ? w->data : "", w->data_len);
    dbfs_param_i8(&p, w->now_ns);
    dbfs_param_bool(&p, w->kill_priv);
    dbfs_param_i4(&p, (int32_t)info->chunk_size);
    dbfs_param_bool(&p, info->encoding == DBFS_ENC_BASE64);
    if (threshold < 0)
        dbfs_param_null(&p);
    else
        dbfs_param_i8(&p, threshold);
    dbfs_batch_add(c, DBFS_ST_WRITE, &p);
    return 1;
}
