/*
 * dbfs_snap_read.c -- READ of a file as a snapshot saw it
 * (dbfs_snap_int.h): one statement returns the file's attributes and the
 * chunks of the range, wherever they are kept (21_snap.sql,
 * pgnfs_snap_data: allfiles, the kept chunks, the file's own table and
 * its kept tables); each chunk is decoded like a live one (the encoding,
 * then the file's chain when it is guarded: its chunks were kept as
 * stored).
 *
 * NOTES
 *   No cache: a snapshot never changes, but its reads are not on the
 *   path anyone measures against the live file system, and a deleted
 *   snapshot must read as gone. The caller owns buf.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_codec.h"
#include "dbfs_conn.h"
#include "dbfs_dirent.h"
#include "dbfs_int.h"
#include "dbfs_perm.h"
#include "dbfs_snap_int.h"
#include "dbfs_wire.h"
#include "dbfs_xf.h"

/* The plain bytes of the stored value in column col of row i of r
 * (chunk ch of file ino, chain: its chain or 0) into *bytes / *len;
 * *tmp is a buffer made on first use (the caller frees it). Returns 0,
 * -ENOMEM or -EIO (logged). */
static int dbfs_sn_plain(dbfs_conn *c, const PGresult *r, int i, int col, uint64_t ino, uint64_t ch,
                         uint64_t chain, const char **bytes, size_t *len, void **tmp)
{
    const dbfs_info *info = &c->fs->info;
    const uint64_t room = chain != 0 ? DBFS_XF_STORED_MAX(info->chunk_size) : info->chunk_size;

    *bytes = PQgetvalue(r, i, col);
    *len = (size_t)PQgetlength(r, i, col);
    if (info->encoding != DBFS_ENC_BINARY) {
        int64_t dl;

        if (!*tmp && !(*tmp = malloc(room)))
            return -ENOMEM;
        dl = dbfs_codec_decode(info->encoding, *bytes, *len, *tmp, room);
        if (dl < 0)
            return (int)dl;
        *bytes = *tmp;
        *len = (size_t)dl;
    }
    if (chain != 0)
        return dbfs_xf_decode(c, chain, ino, ch, *bytes, *len, bytes, len);
    if (*len > info->chunk_size) {
        g_warning("snapshot read: chunk %" PRIu64 " of file %" PRIu64 " holds %zu bytes, more "
                  "than a chunk",
                  ch, ino, *len);
        return -EIO;
    }
    return 0;
}

/* dbfs_sn_read -- see dbfs_snap_int.h. */
int dbfs_sn_read(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, uint32_t count,
                 void *buf, uint32_t *nread, bool *eof, dbfs_attr_opt *attr)
{
    const uint64_t cs = c->fs->info.chunk_size;
    uint64_t n, chain;
    dbfs_params p;
    PGresult *r = NULL;
    void *tmp = NULL;
    dbfs_attr a;
    int rc;

    *nread = 0;
    *eof = false;
    dbfs_attr_opt_set(attr, NULL);
    if (fh.snap == DBFS_SNAP_DIR) {
        rc = dbfs_snap_dir(c, (dbfs_fh){fh.ino, fh.gen, 0}, &a);
        dbfs_attr_opt_set(attr, rc == 0 ? &a : NULL);
        return rc == 0 ? -EISDIR : rc;
    }
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)fh.ino);
    dbfs_param_i4(&p, (int32_t)fh.gen);
    dbfs_param_i8(&p, (int64_t)(off / cs));
    dbfs_param_i8(&p, count == 0 || off + count - 1 < off ? (int64_t)(off / cs) - 1
                                                          : (int64_t)((off + count - 1) / cs));
    dbfs_param_i8(&p, (int64_t)fh.snap);
    rc = dbfs_exec(c, DBFS_ST_SNAP_READ, &p, &r);
    if (rc == 0 && PQntuples(r) == 0)
        rc = -ESTALE;
    if (rc != 0)
        goto out;
    dbfs_get_attr(r, 0, 0, &a);
    a.snap = fh.snap;
    dbfs_attr_opt_set(attr, &a);
    if (dbfs_attr_is_xlink(&a)) {
        /* A link's bytes are its base's through a chain, and which base
         * and chain a link had is not kept: read the base instead. */
        g_message("snapshot read: file %" PRIu64 " is a transformation link, which a snapshot "
                  "does not present; read its base",
                  fh.ino);
        rc = -EOPNOTSUPP;
    } else if (a.type == DBFS_DIR) {
        rc = -EISDIR;
    } else if (a.type != DBFS_REG) {
        rc = -EINVAL;
    } else if (!dbfs_perm_may_io(&a, cred, DBFS_MAY_READ)) {
        rc = -EACCES;
    }
    if (rc != 0)
        goto out;
    n = off >= a.size ? 0 : (a.size - off < count ? a.size - off : count);
    memset(buf, 0, n);
    chain = dbfs_get_null(r, 0, DBFS_ATTR_NCOLS + 2)
                ? 0
                : (uint64_t)dbfs_get_i8(r, 0, DBFS_ATTR_NCOLS + 2);
    for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
        uint64_t ch, cstart, from, to;
        const char *bytes;
        size_t len;

        if (dbfs_get_null(r, i, DBFS_ATTR_NCOLS))
            continue;
        ch = (uint64_t)dbfs_get_i8(r, i, DBFS_ATTR_NCOLS);
        rc = dbfs_sn_plain(c, r, i, DBFS_ATTR_NCOLS + 1, fh.ino, ch, chain, &bytes, &len, &tmp);
        if (rc != 0)
            break;
        cstart = ch * cs;
        from = cstart > off ? cstart : off;
        to = cstart + len < off + n ? cstart + len : off + n;
        if (from < to)
            memcpy((char *)buf + (from - off), bytes + (from - cstart), to - from);
    }
    if (rc == 0) {
        *nread = (uint32_t)n;
        *eof = off + n >= a.size;
    }
out:
    free(tmp);
    PQclear(r);
    return rc;
}
