/*
 * store_hybrid.c -- storage layout "hybrid": small files share allfiles,
 * large ones get a table of their own.
 *
 * A file lives in allfiles until a write makes it larger than the file
 * system's hybrid_threshold (pgnfs_fs, chosen at mkfs); that write's
 * transaction creates inv<inode>, moves the file's chunks there and then
 * stores the write (pgnfs_write, pgnfs_data_totable), so a reader sees the
 * file whole in one place or the other. A truncation to at most the
 * threshold moves it back (pgnfs_data_truncate); growing by SETATTR alone
 * moves nothing (there is no data to move) until the next write.
 *
 * NOTES
 *   Reads go through pgnfs_data_read(), which finds the file's table by
 *   pgnfs_filetab in the statement's snapshot. Nothing here keeps state.
 */
#include "store.h"

static size_t store_hybrid_queue_write(dbfs_conn *c, const store_write *w)
{
    return store_queue_write_stmt(c, w, (int64_t)c->fs->info.hybrid_threshold);
}

const store_ops store_hybrid = {
    .name = "hybrid",
    .queue_read = store_queue_tab_read,
    .queue_write = store_hybrid_queue_write,
};
