/*
 * store_inversion.c -- storage layout "inversion" (after Olson's Inversion
 * file system): every file that holds data has a table of its own,
 * inv<inode> (chunk, data).
 *
 * The table is created by the file's first write, inside that write's
 * transaction (pgnfs_write with threshold 0: any data places the file in
 * its own table), and dropped by the transaction that removes the file's
 * last link (pgnfs_data_drop). Creating it at the first write rather than
 * at CREATE keeps empty files (touch, lock files, files created then
 * renamed over) free of the cost of a table: a CREATE TABLE with its index
 * and TOAST table costs milliseconds, far more than the rest of a CREATE.
 *
 * NOTES
 *   Reads go through pgnfs_data_read(), which finds the file's table by
 *   pgnfs_filetab in the statement's snapshot. Nothing here keeps state.
 */
#include "store.h"

static size_t store_inversion_queue_write(dbfs_conn *c, const store_write *w)
{
    return store_queue_write_stmt(c, w, 0);
}

const store_ops store_inversion = {
    .name = "inversion",
    .queue_read = store_queue_tab_read,
    .queue_write = store_inversion_queue_write,
};
