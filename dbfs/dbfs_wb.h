/*
 * dbfs_wb.h -- write-back of UNSTABLE writes (dbfs_wb.c): the write-back
 * buffer (cache/cache_wb.h) seen from dbfs, its flushes into the database
 * (through dbfs_data.h), and the attributes of a file as clients see them
 * while some of its data waits in the buffer.
 */
#ifndef PGNFS_DBFS_WB_H
#define PGNFS_DBFS_WB_H

#include <stdbool.h>
#include <stdint.h>

#include "dbfs.h"
#include "dbfs_conn.h"
#include "dbfs_int.h"

/* The default per-file flush size. */
#define DBFS_WB_FILE_BYTES (8u << 20)

/* Open fs->wb as cfg asks (NULL when writeback_bytes is 0). Returns 0,
 * -EINVAL or -ENOMEM. dbfs_wb_close frees it (warns when it still holds
 * data: flush with dbfs_wb_flush_due first). */
int dbfs_wb_open(dbfs *fs, const dbfs_config *cfg);
void dbfs_wb_close(dbfs *fs);

/* Does any file hold buffered data? Cannot fail. */
bool dbfs_wb_holds_any(const dbfs *fs);
/* Does file ino hold buffered data (or data of a flush still on its way
 * to the database)? Cannot fail. */
bool dbfs_wb_holds(dbfs *fs, uint64_t ino);

/* Apply to *a what the buffer holds of its file: size at least the end of
 * the data held, mtime and ctime at least its latest write. Cannot fail. */
void dbfs_wb_overlay(dbfs *fs, dbfs_attr *a);

/*
 * dbfs_wb_attr -- the attributes of fh as clients see them: as stored
 * (dbfs_fetch_attr) with what the buffer holds (dbfs_wb_overlay). Returns
 * as dbfs_fetch_attr.
 */
int dbfs_wb_attr(dbfs_conn *c, dbfs_fh fh, dbfs_attr *out);

/* What dbfs_wb_write did with a write it found allowed. */
typedef enum {
    DBFS_WB_BUFFERED, /* in the buffer: *wcc filled, the reply says UNSTABLE */
    DBFS_WB_THROUGH   /* not buffered: the caller stores it now (write_through) */
} dbfs_wb_outcome;

/*
 * dbfs_wb_write -- buffer an UNSTABLE write after checking it, when the
 * buffer takes it: not when the buffer is off or full, the database ran
 * out of space lately, or the write must clear setuid/setgid at once.
 * Returns 0 and *outcome, or what the check found (nothing buffered):
 * -ESTALE, -EISDIR, -EINVAL, -EACCES, -EAGAIN, -EIO, and the space
 * guard's -ENOSPC (or -EAGAIN) when the write and what the buffer holds
 * would leave the disk below PostgreSQL's reserve.
 */
int dbfs_wb_write(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, const void *data,
                  uint32_t len, dbfs_wcc *wcc, dbfs_wb_outcome *outcome);

/*
 * dbfs_wb_write_through -- store a write now (stable): first what the
 * file holds buffered, then the write. Returns as dbfs_data_write_sync,
 * or -EAGAIN when the buffered data could not be stored.
 */
int dbfs_wb_write_through(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off,
                          const void *data, uint32_t len, dbfs_wcc *wcc);

/*
 * dbfs_wb_flush -- store what file ino holds, waiting for a flush of it in
 * flight. Returns 0 (*flushed says whether there was anything; if there
 * was, *pre the attributes before as clients saw them and *post those
 * after, both with writes buffered meanwhile),
 * -EAGAIN (kept for later), or -ESTALE, -ENOSPC, -EIO (dropped; a later
 * dbfs_wb_error reports it unless it was -ESTALE). pre, post and flushed
 * may be NULL.
 */
int dbfs_wb_flush(dbfs_conn *c, uint64_t ino, dbfs_attr *pre, dbfs_attr *post, bool *flushed);

/* The error a dropped flush of ino left, cleared by the call; 0 if none. */
int dbfs_wb_error(dbfs *fs, uint64_t ino);

#endif /* PGNFS_DBFS_WB_H */
