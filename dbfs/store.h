/*
 * store.h -- the storage layouts of file data behind one small interface.
 *
 * A layout decides where the chunks of a file live: "single" keeps every
 * file's chunks in the table allfiles (store_single.c); "inversion" (one
 * table per file) and "hybrid" come with a later issue and plug in here
 * without changing the callers (dbfs_data.c).
 *
 * NOTES
 *   The operations only queue statements on the caller's batch (see
 *   dbfs_int.h); they never sync or read results, so a READ or WRITE stays
 *   one round trip whatever the layout.
 *
 *   Truncation and the dropping of a file's data happen inside the
 *   metadata functions' transactions (SETATTR, CREATE over a file, REMOVE,
 *   RENAME over a file), so they are SQL functions, pgnfs_data_truncate()
 *   and pgnfs_data_drop() in schema/functions/20_data.sql, which answer for
 *   the layout there.
 *
 *   Invariant every layout keeps: no stored byte lies at or beyond the
 *   file's size; a missing chunk, or the part of a chunk past its stored
 *   length, reads as zeros.
 */
#ifndef PGNFS_STORE_H
#define PGNFS_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "dbfs_int.h"

typedef struct store_ops {
    const char *name; /* as pgnfs_fs.storage says */
    /*
     * queue_read -- queue the statement that returns, in one snapshot, the
     * attributes of file fh (DBFS_ATTR_NCOLS columns; no row if the inode
     * and generation do not exist) joined with its chunks first..last:
     * column DBFS_ATTR_NCOLS is the chunk number (int8) and the next one
     * its data (bytea), both NULL when no chunk of the range is stored;
     * rows in chunk order. Returns what dbfs_batch_add() returns.
     */
    int (*queue_read)(dbfs_conn *c, dbfs_fh fh, uint64_t first, uint64_t last);
    /*
     * queue_write -- queue the storing of len bytes at byte `at` of chunk
     * `chunk` of file ino. whole (at == 0 and len == chunk size) replaces
     * the chunk; a partial piece merges with the stored chunk, padding with
     * zeros when the chunk is shorter than at. data must stay valid until
     * the batch is synced. Returns what dbfs_batch_add() returns.
     */
    int (*queue_write)(dbfs_conn *c, uint64_t ino, uint64_t chunk, uint32_t at, const void *data,
                       uint32_t len, bool whole);
} store_ops;

extern const store_ops store_single;

/* The operations of a layout, or NULL if this build has none for it. */
const store_ops *store_for(dbfs_storage storage);

#endif /* PGNFS_STORE_H */
