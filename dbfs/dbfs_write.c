/*
 * dbfs_write.c -- WRITE and COMMIT (RFC 1813 3.3.7, 3.3.21): an UNSTABLE
 * write goes to the write-back buffer when it takes it (dbfs_wb.c), any
 * other is stored at once (dbfs_data.c); COMMIT stores what the buffer
 * holds of the file and reports a flush that failed.
 *
 * NOTES
 *   Durability: synchronous commit. An UNSTABLE WRITE may wait in the
 *   write-back buffer until COMMIT or another flush; every other WRITE is
 *   durable when it returns (committed = FILE_SYNC). The caller owns the
 *   data; nothing is kept after a call but copies in the caches and the
 *   write-back buffer.
 */
#include <errno.h>
#include <string.h>

#include "dbfs_wb.h"

/*
 * dbfs_write -- see dbfs.h. Errors: -EFBIG (off + len beyond
 * DBFS_MAX_FILESIZE, before any round trip), -ESTALE, -EISDIR, -EINVAL
 * (not a regular file), -EACCES, -ENOSPC, -ENOMEM, -EAGAIN, -EIO; on an
 * error nothing is stored and *wcc is empty. A zero-length write changes
 * nothing and returns the attributes as both pre and post.
 *
 * An UNSTABLE write goes to the write-back buffer when it can
 * (dbfs_wb.c): no round trip when the stat cache knows the file,
 * *committed UNSTABLE. Every other write is stored at once, in one round
 * trip, after the file's buffered data when it has some (in the same
 * transaction), and is DBFS_FILE_SYNC.
 */
int dbfs_write(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, const void *data,
               uint32_t len, dbfs_stable how, dbfs_stable *committed, dbfs_wcc *wcc)
{
    const uint64_t max = (uint64_t)DBFS_MAX_FILESIZE;
    int rc;

    if (wcc)
        memset(wcc, 0, sizeof *wcc);
    if (fh.snap != 0)
        return -EROFS;
    if (off > max || len > max - off)
        return -EFBIG;
    if (how == DBFS_UNSTABLE && len > 0) {
        dbfs_wb_outcome outcome;

        rc = dbfs_wb_write(c, cred, fh, off, data, len, wcc, &outcome);
        if (rc != 0)
            return rc;
        if (outcome == DBFS_WB_BUFFERED) {
            if (committed)
                *committed = DBFS_UNSTABLE;
            return 0;
        }
    }
    rc = dbfs_wb_write_through(c, cred, fh, off, data, len, wcc);
    if (rc == 0 && committed)
        *committed = DBFS_FILE_SYNC;
    return rc;
}

/*
 * dbfs_commit -- see dbfs.h: flushes what the write-back buffer holds of
 * fh (one round trip; none when it holds nothing and the stat cache knows
 * fh). *wcc: the attributes clients last saw (buffered writes included)
 * and the stored ones after. Returns 0, -ESTALE, -ENOSPC or -EIO (a flush
 * of this file's data failed, now or earlier: the data is lost, and the
 * client must not take it as stored), -EAGAIN (the database is away: the
 * data is kept and a later COMMIT stores it).
 */
int dbfs_commit(dbfs_conn *c, dbfs_fh fh, uint64_t off, uint32_t count, dbfs_wcc *wcc)
{
    dbfs_attr pre, post;
    bool flushed = false;
    int rc;

    (void)off;
    (void)count;
    if (wcc)
        memset(wcc, 0, sizeof *wcc);
    if (fh.snap != 0)
        return -EROFS;
    rc = dbfs_wb_flush(c, fh.ino, &pre, &post, &flushed);
    if (rc == 0 && !flushed) {
        rc = dbfs_wb_attr(c, fh, &post);
        pre = post;
    }
    if (rc == 0) {
        dbfs_wcc_of(wcc, &pre, &post);
        rc = dbfs_wb_error(c->fs, fh.ino);
    }
    return rc;
}
