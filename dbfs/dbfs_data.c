/*
 * dbfs_data.c -- file data: READ, WRITE and COMMIT (RFC 1813 3.3.6,
 * 3.3.7, 3.3.21), through the storage layout of the file system (store.h).
 *
 * NOTES
 *   A READ is one batch: (with relatime) the conditional atime UPDATE,
 *   then the layout's read statement, which returns the attributes and the
 *   chunks in one snapshot. A WRITE is one batch: pgnfs_write_begin (checks
 *   and locks, raising so that nothing is stored when the write is not
 *   allowed), one statement per chunk piece, and the UPDATE of size, times
 *   and setuid/setgid. One Sync ends each batch, so each is one round trip
 *   and one transaction. libpq reads incoming results while it waits to
 *   send, so a large batch cannot deadlock on full socket buffers.
 *
 *   Durability: synchronous commit; every WRITE is durable when it returns
 *   (committed = FILE_SYNC). COMMIT therefore has nothing to flush and
 *   returns the current attributes; a write-back buffer comes later.
 *
 *   The caller owns buf and data; nothing is kept after a call.
 */
#include <errno.h>
#include <string.h>

#include "dbfs_int.h"
#include "store.h"

/*
 * dbfs_read -- see dbfs.h. Bytes past the end are not returned; holes and
 * the parts of chunks never written read as zeros. Errors: -ESTALE,
 * -EISDIR (a directory), -EINVAL (another non-regular file), -EACCES
 * (no read permission and not the owner), -EAGAIN, -EIO. *attr is filled
 * whenever the file was read. One round trip.
 */
int dbfs_read(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, uint32_t count,
              void *buf, uint32_t *nread, bool *eof, dbfs_attr_opt *attr)
{
    const uint64_t cs = c->fs->info.chunk_size;
    const uint64_t max = (uint64_t)DBFS_MAX_FILESIZE;
    uint64_t end = off < max ? (count < max - off ? off + count : max) : off;
    uint64_t first = 1, last = 0; /* an empty range: attributes only */
    PGresult *ra = NULL, *r = NULL;
    dbfs_params pa;
    dbfs_attr a;
    uint64_t n;
    int rc;

    *nread = 0;
    *eof = false;
    if (attr)
        memset(attr, 0, sizeof *attr);
    if (end > off) {
        first = off / cs;
        last = (end - 1) / cs;
    }
    dbfs_params_init(&pa);
    dbfs_param_i8(&pa, (int64_t)fh.ino);
    dbfs_param_i4(&pa, (int32_t)fh.gen);
    dbfs_param_i8(&pa, dbfs_now_ns());
    dbfs_param_cred(&pa, cred);
    for (int attempt = 1;; attempt++) {
        rc = dbfs_batch_begin(c);
        if (rc != 0)
            return rc;
        if (c->fs->relatime)
            dbfs_batch_add(c, DBFS_ST_ATIME, &pa);
        c->fs->store->queue_read(c, fh, first, last);
        dbfs_batch_sync(c);
        if (c->fs->relatime)
            dbfs_batch_result(c, &ra);
        dbfs_batch_result(c, &r);
        rc = dbfs_batch_end(c);
        PQclear(ra);
        ra = NULL;
        if (rc != DBFS_ERETRY)
            break;
        PQclear(r);
        r = NULL;
        if (!dbfs_retry_wait(attempt)) {
            rc = -EAGAIN;
            break;
        }
    }
    if (rc != 0)
        goto out;
    if (PQntuples(r) == 0) {
        rc = -ESTALE;
        goto out;
    }
    dbfs_get_attr(r, 0, 0, &a);
    if (attr) {
        attr->valid = true;
        attr->attr = a;
    }
    if (a.type == DBFS_DIR) {
        rc = -EISDIR;
        goto out;
    }
    if (a.type != DBFS_REG) {
        rc = -EINVAL;
        goto out;
    }
    if (cred->uid != a.uid && !dbfs_perm_allows(&a, cred, 4)) {
        rc = -EACCES;
        goto out;
    }
    n = off >= a.size ? 0 : (a.size - off < count ? a.size - off : count);
    memset(buf, 0, n);
    for (int i = 0; i < PQntuples(r); i++) {
        uint64_t cstart, clen, from, to;

        if (dbfs_get_null(r, i, DBFS_ATTR_NCOLS))
            continue;
        cstart = (uint64_t)dbfs_get_i8(r, i, DBFS_ATTR_NCOLS) * cs;
        clen = (uint64_t)PQgetlength(r, i, DBFS_ATTR_NCOLS + 1);
        from = cstart > off ? cstart : off;
        to = cstart + clen < off + n ? cstart + clen : off + n;
        if (from < to)
            memcpy((char *)buf + (from - off),
                   PQgetvalue(r, i, DBFS_ATTR_NCOLS + 1) + (from - cstart), to - from);
    }
    *nread = (uint32_t)n;
    *eof = off + n >= a.size;
out:
    PQclear(r);
    return rc;
}

/* Queue the chunk pieces of [off, off + len). Returns their number. */
static size_t dbfs_queue_pieces(dbfs_conn *c, uint64_t ino, uint64_t off, const void *data,
                                uint32_t len)
{
    const uint64_t cs = c->fs->info.chunk_size;
    const store_ops *st = c->fs->store;
    uint64_t pos = off, end = off + len;
    size_t pieces = 0;

    while (pos < end) {
        uint64_t chunk = pos / cs;
        uint32_t at = (uint32_t)(pos % cs);
        uint32_t n = (uint32_t)(cs - at < end - pos ? cs - at : end - pos);

        st->queue_write(c, ino, chunk, at, (const char *)data + (pos - off), n, at == 0 && n == cs);
        pieces++;
        pos += n;
    }
    return pieces;
}

/*
 * dbfs_write -- see dbfs.h. Errors: -EFBIG (off + len beyond
 * DBFS_MAX_FILESIZE, before any round trip), -ESTALE, -EISDIR, -EINVAL
 * (not a regular file), -EACCES, -ENOSPC, -EAGAIN, -EIO; on an error
 * nothing is stored and *wcc is empty. A zero-length write changes nothing
 * and returns the attributes as both pre and post. Every write is durable
 * on return: *committed is DBFS_FILE_SYNC. One round trip.
 */
int dbfs_write(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, const void *data,
               uint32_t len, dbfs_stable how, dbfs_stable *committed, dbfs_wcc *wcc)
{
    const uint64_t max = (uint64_t)DBFS_MAX_FILESIZE;
    PGresult *rb = NULL, *re = NULL, *rp;
    dbfs_params pb, pe;
    dbfs_fnres f;
    size_t pieces = 0;
    int rc;

    (void)how;
    if (wcc)
        memset(wcc, 0, sizeof *wcc);
    if (off > max || len > max - off)
        return -EFBIG;
    /* The chunks the write touches (none for a zero-length write). */
    const uint64_t cs = c->fs->info.chunk_size;
    const int64_t first = (int64_t)(off / cs);
    const int64_t last = len > 0 ? (int64_t)((off + len - 1) / cs) : first - 1;

    dbfs_params_init(&pb);
    dbfs_param_i8(&pb, (int64_t)fh.ino);
    dbfs_param_i4(&pb, (int32_t)fh.gen);
    dbfs_param_cred(&pb, cred);
    dbfs_param_i8(&pb, first);
    dbfs_param_i8(&pb, last);
    dbfs_params_init(&pe);
    dbfs_param_i8(&pe, (int64_t)fh.ino);
    dbfs_param_i8(&pe, (int64_t)(off + len));
    dbfs_param_i8(&pe, dbfs_now_ns());
    dbfs_param_bool(&pe, cred->uid != 0);
    dbfs_param_i8(&pe, first);
    dbfs_param_i8(&pe, last);
    for (int attempt = 1;; attempt++) {
        rc = dbfs_batch_begin(c);
        if (rc != 0)
            return rc;
        dbfs_batch_add(c, DBFS_ST_WRITE_BEGIN, &pb);
        if (len > 0) {
            pieces = dbfs_queue_pieces(c, fh.ino, off, data, len);
            dbfs_batch_add(c, DBFS_ST_WRITE_END, &pe);
        }
        dbfs_batch_sync(c);
        dbfs_batch_result(c, &rb);
        for (size_t i = 0; i < pieces; i++) {
            dbfs_batch_result(c, &rp);
            PQclear(rp);
        }
        if (len > 0)
            dbfs_batch_result(c, &re);
        rc = dbfs_batch_end(c);
        if (rc != DBFS_ERETRY)
            break;
        PQclear(rb);
        PQclear(re);
        rb = re = NULL;
        if (!dbfs_retry_wait(attempt)) {
            rc = -EAGAIN;
            break;
        }
    }
    if (rc != 0)
        goto out;
    rc = dbfs_fnres_parse(rb, "write", &f);
    if (rc != 0)
        goto out;
    if (len > 0) {
        if (PQntuples(re) != 1) {
            rc = -EIO;
            goto out;
        }
        dbfs_get_attr(re, 0, 0, &f.attr[DBFS_ROLE_POST]);
    } else {
        f.attr[DBFS_ROLE_POST] = f.attr[DBFS_ROLE_PRE];
    }
    f.have[DBFS_ROLE_POST] = f.have[DBFS_ROLE_PRE];
    dbfs_wcc_from(wcc, &f, DBFS_ROLE_PRE, DBFS_ROLE_POST);
    rc = f.status;
    if (rc == 0 && committed)
        *committed = DBFS_FILE_SYNC;
out:
    PQclear(rb);
    PQclear(re);
    return rc;
}

/*
 * dbfs_commit -- see dbfs.h. Writes are already durable, so this returns
 * the current attributes as the post-operation part of *wcc (no pre-op
 * part). Returns 0, -ESTALE, -EAGAIN or -EIO. One round trip.
 */
int dbfs_commit(dbfs_conn *c, dbfs_fh fh, uint64_t off, uint32_t count, dbfs_wcc *wcc)
{
    dbfs_attr a;
    int rc;

    (void)off;
    (void)count;
    if (wcc)
        memset(wcc, 0, sizeof *wcc);
    rc = dbfs_getattr(c, fh, &a);
    if (rc == 0 && wcc) {
        wcc->have_post = true;
        wcc->post = a;
    }
    return rc;
}
