/*
 * store_single.c -- storage layout "single": the chunks of every file in
 * one table, allfiles (inode, chunk, data).
 *
 * NOTES
 *   Whole-chunk pieces are upserted without reading the stored chunk;
 *   partial pieces merge with it inside the statement (overlay, or zero
 *   padding when the stored chunk is shorter than the piece's offset). The
 *   statements are in dbfs_sql.c (DBFS_ST_SINGLE_*). Nothing here keeps
 *   state or memory.
 */
#include "store.h"

static int store_single_queue_read(dbfs_conn *c, dbfs_fh fh, uint64_t first, uint64_t last)
{
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)fh.ino);
    dbfs_param_i4(&p, (int32_t)fh.gen);
    dbfs_param_i8(&p, (int64_t)first);
    dbfs_param_i8(&p, (int64_t)last);
    return dbfs_batch_add(c, DBFS_ST_SINGLE_READ, &p);
}

static int store_single_queue_write(dbfs_conn *c, uint64_t ino, uint64_t chunk, uint32_t at,
                                    const void *data, uint32_t len, bool whole)
{
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)ino);
    dbfs_param_i8(&p, (int64_t)chunk);
    if (whole) {
        dbfs_param_bytes(&p, data, len);
        return dbfs_batch_add(c, DBFS_ST_SINGLE_WRITE_FULL, &p);
    }
    dbfs_param_i4(&p, (int32_t)at);
    dbfs_param_bytes(&p, data, len);
    return dbfs_batch_add(c, DBFS_ST_SINGLE_WRITE_PART, &p);
}

const store_ops store_single = {
    .name = "single",
    .queue_read = store_single_queue_read,
    .queue_write = store_single_queue_write,
};

/* store_for -- the operations of a layout, or NULL (see store.h). */
const store_ops *store_for(dbfs_storage storage)
{
    switch (storage) {
    case DBFS_STORAGE_SINGLE:
        return &store_single;
    case DBFS_STORAGE_INVERSION:
    case DBFS_STORAGE_HYBRID:
        break;
    }
    return NULL;
}
