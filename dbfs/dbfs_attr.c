/*
 * dbfs_attr.c -- attributes: the permission rule, GETATTR, SETATTR,
 * ACCESS, READLINK and FSSTAT (RFC 1813 3.3.1, 3.3.2, 3.3.4, 3.3.5,
 * 3.3.18).
 *
 * NOTES
 *   Reads are one prepared SELECT each; their permission checks happen
 *   here, on the attributes the SELECT returned, with dbfs_perm_allows().
 *   SETATTR is the PL/pgSQL function pgnfs_setattr (30_setattr.sql), which
 *   holds the same rule as pgnfs_may(). Every call is at most one round
 *   trip: GETATTR and ACCESS none when the stat cache knows the file
 *   (dbfs_cache.c), FSSTAT one either way (its figures are never cached).
 *   SETATTR stores the attributes after in the stat cache.
 *   Output structs may be NULL when the caller does not want them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include <glib.h>

#include "dbfs_cache.h"
#include "dbfs_fetch.h"
#include "dbfs_perm.h"
#include "dbfs_snap_int.h"
#include "dbfs_space.h"
#include "dbfs_wb.h"
#include "dbfs_xf.h"

/* What FSSTAT reports as free when it cannot know (no space_path for
 * bytes; always for files, which only the database's size limits). */
#define DBFS_FREE_BYTES_UNKNOWN (UINT64_C(1) << 50)
#define DBFS_FREE_FILES         (UINT64_C(1) << 40)

/*
 * dbfs_getattr -- see dbfs.h: the attributes of fh with what the
 * write-back buffer holds of it (dbfs_wb_attr). Returns 0, -ESTALE (the
 * inode and generation no longer exist), -EAGAIN or -EIO. No round trip
 * when the stat cache knows fh, else one.
 */
int dbfs_getattr(dbfs_conn *c, dbfs_fh fh, dbfs_attr *out)
{
    int rc;

    if (fh.snap != 0)
        return dbfs_sn_getattr(c, fh, out);
    rc = dbfs_wb_attr(c, fh, out);
    /* A transformation link's size, when it must be computed first. */
    if (rc == 0 && dbfs_attr_is_xlink(out))
        rc = dbfs_xf_link_size(c, out);
    return rc;
}

/*
 * dbfs_getattr_quick -- see dbfs.h: dbfs_getattr's answer when the stat
 * cache has it (a transformation link's only once its size is known),
 * its hit counted as dbfs_getattr counts it.
 */
int dbfs_getattr_quick(dbfs *fs, dbfs_fh fh, dbfs_attr *out)
{
    dbfs_attr a;
    int rc;

    if (fh.snap != 0)
        return -ENODATA;
    rc = dbfs_cache_attr_quick(fs, fh, &a);
    if (rc == -ENOENT || (rc == 0 && dbfs_attr_is_xlink(&a) && a.rdev_minor != 1))
        return -ENODATA;
    dbfs_cache_attr_hit(fs, fh);
    if (rc != 0)
        return rc;
    dbfs_wb_overlay(fs, &a);
    *out = a;
    return 0;
}

/*
 * dbfs_setattr -- see dbfs.h. Sizes over DBFS_MAX_FILESIZE are -EFBIG
 * before any round trip; the rest is pgnfs_setattr's (one round trip),
 * whose rules its comment lists. wcc holds the attributes before and after
 * (both equal on failure) whenever the file exists.
 */
static int dbfs_setattr_once(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, const dbfs_sattr *sa,
                             const int64_t *guard_ctime_ns, dbfs_wcc *wcc)
{
    dbfs_params p;
    dbfs_fnres f;
    dbfs_cache_op op;
    PGresult *r = NULL;
    int rc;

    if (wcc)
        memset(wcc, 0, sizeof *wcc);
    if (fh.snap != 0)
        return -EROFS;
    if ((sa->set & DBFS_SET_SIZE) && sa->size > (uint64_t)DBFS_MAX_FILESIZE)
        return -EFBIG;
    /* Buffered writes came first: store them before the change (a
     * truncation must cut them too). */
    rc = dbfs_wb_flush(c, fh.ino, NULL, NULL, NULL);
    if (rc == -EAGAIN)
        return rc;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)fh.ino);
    dbfs_param_i4(&p, (int32_t)fh.gen);
    dbfs_param_cred(&p, cred);
    dbfs_param_i8(&p, dbfs_now_ns());
    dbfs_param_i4(&p, (int32_t)sa->set);
    dbfs_param_i4(&p, (int32_t)(sa->mode & DBFS_MODE_MASK));
    dbfs_param_i8(&p, sa->uid);
    dbfs_param_i8(&p, sa->gid);
    dbfs_param_i8(&p, (int64_t)((sa->set & DBFS_SET_SIZE) ? sa->size : 0));
    dbfs_param_i8(&p, sa->atime_ns);
    dbfs_param_i8(&p, sa->mtime_ns);
    if (guard_ctime_ns)
        dbfs_param_i8(&p, *guard_ctime_ns);
    else
        dbfs_param_null(&p);
    /* One inode changes: a file change for the stat cache. The attributes
     * after are current on failures too (read under the row lock). */
    dbfs_cache_file_begin(c->fs, fh, &op);
    rc = dbfs_exec(c, DBFS_ST_SETATTR, &p, &r);
    if (rc == 0)
        rc = dbfs_fnres_parse(r, "setattr", &f);
    if (rc == 0) {
        dbfs_wcc_from(wcc, &f, DBFS_ROLE_PRE, DBFS_ROLE_POST);
        dbfs_cache_file_end(&op, f.have[DBFS_ROLE_POST] ? 0 : -ENOENT,
                            f.have[DBFS_ROLE_POST] ? &f.attr[DBFS_ROLE_POST] : NULL);
        rc = f.status;
        /* A truncation leaves dead rows for VACUUM (the space guard). */
        if (rc == 0 && (sa->set & DBFS_SET_SIZE) && f.have[DBFS_ROLE_PRE] &&
            f.attr[DBFS_ROLE_PRE].used > 0 && sa->size < f.attr[DBFS_ROLE_PRE].size)
            dbfs_space_changed(c->fs);
    } else {
        dbfs_cache_file_end(&op, rc, NULL);
    }
    PQclear(r);
    return rc;
}

/* SETATTR of a file (see dbfs_setattr_once). A truncation of a guarded
 * file that cuts a chunk is refused by the database (its stored bytes are
 * transformed): the server cuts that chunk first (dbfs_xf_cut), then the
 * truncation runs again. */
static int dbfs_setattr_file(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, const dbfs_sattr *sa,
                             const int64_t *guard_ctime_ns, dbfs_wcc *wcc)
{
    int rc = dbfs_setattr_once(c, cred, fh, sa, guard_ctime_ns, wcc);

    if (rc == DBFS_XF_EGUARDED && (sa->set & DBFS_SET_SIZE)) {
        rc = dbfs_xf_cut(c, cred, fh, sa->size);
        if (rc == 0)
            rc = dbfs_setattr_once(c, cred, fh, sa, guard_ctime_ns, wcc);
    }
    return rc;
}

/* A new size of a transformation link is its base's (refused by the
 * database as PN067): the base's size is set (a writable link only, as
 * the caller), then the other attributes the call sets, on the link. */
static int dbfs_setattr_link(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, const dbfs_sattr *sa,
                             const int64_t *guard_ctime_ns, dbfs_wcc *wcc)
{
    dbfs_sattr rest = *sa, size = {.set = DBFS_SET_SIZE, .size = sa->size};
    dbfs_attr pre, post;
    dbfs_fh base;
    int rc = dbfs_fetch_attr(c, fh, &pre);

    if (rc == 0 && guard_ctime_ns && pre.ctime_ns != *guard_ctime_ns)
        rc = -EBADMSG; /* NOT_SYNC, as pgnfs_setattr answers a guard */
    if (rc == 0)
        rc = dbfs_xf_link_base(c, fh.ino, &base);
    if (rc == 0)
        rc = dbfs_setattr_file(c, cred, base, &size, NULL, NULL);
    rest.set &= ~(uint32_t)DBFS_SET_SIZE;
    if (rc == 0 && rest.set != 0)
        rc = dbfs_setattr_once(c, cred, fh, &rest, NULL, NULL);
    if (rc == 0)
        rc = dbfs_fetch_attr(c, fh, &post);
    if (rc == 0)
        dbfs_wcc_of(wcc, &pre, &post);
    return rc;
}

/* dbfs_setattr -- see dbfs_setattr_file; a transformation link's size is
 * its base's (dbfs_setattr_link). */
int dbfs_setattr(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, const dbfs_sattr *sa,
                 const int64_t *guard_ctime_ns, dbfs_wcc *wcc)
{
    int rc = dbfs_setattr_file(c, cred, fh, sa, guard_ctime_ns, wcc);

    if (rc == DBFS_XF_ELINK && (sa->set & DBFS_SET_SIZE))
        rc = dbfs_setattr_link(c, cred, fh, sa, guard_ctime_ns, wcc);
    return rc;
}

/* What cred gets of want on a file of attributes a (handle fh). */
static uint32_t dbfs_access_of(const dbfs_attr *a, const dbfs_cred *cred, dbfs_fh fh, uint32_t want)
{
    uint32_t g = 0;

    if ((want & DBFS_ACCESS_READ) && dbfs_perm_allows(a, cred, DBFS_MAY_READ))
        g |= DBFS_ACCESS_READ;
    if (a->type == DBFS_DIR) {
        if ((want & DBFS_ACCESS_LOOKUP) && dbfs_perm_allows(a, cred, DBFS_MAY_EXEC))
            g |= DBFS_ACCESS_LOOKUP;
        if (dbfs_perm_allows(a, cred, DBFS_MAY_WRITE | DBFS_MAY_EXEC))
            g |= want & (DBFS_ACCESS_MODIFY | DBFS_ACCESS_EXTEND | DBFS_ACCESS_DELETE);
    } else {
        if (dbfs_perm_allows(a, cred, DBFS_MAY_WRITE))
            g |= want & (DBFS_ACCESS_MODIFY | DBFS_ACCESS_EXTEND);
        if ((want & DBFS_ACCESS_EXECUTE) && dbfs_perm_allows(a, cred, DBFS_MAY_EXEC))
            g |= DBFS_ACCESS_EXECUTE;
    }
    /* A snapshot is read-only: no change is ever granted. */
    if (fh.snap != 0)
        g &= ~(uint32_t)(DBFS_ACCESS_MODIFY | DBFS_ACCESS_EXTEND | DBFS_ACCESS_DELETE);
    return g;
}

/* dbfs_access and dbfs_access_quick after reading the attributes: rc, or
 * 0 with *granted and *attr from a. */
static int dbfs_access_answer(int rc, const dbfs_attr *a, const dbfs_cred *cred, dbfs_fh fh,
                              uint32_t want, uint32_t *granted, dbfs_attr *attr)
{
    if (rc != 0)
        return rc;
    if (granted)
        *granted = dbfs_access_of(a, cred, fh, want);
    if (attr)
        *attr = *a;
    return 0;
}

/*
 * dbfs_access -- see dbfs.h. The bits follow Linux nfsd: on a directory
 * READ needs r, LOOKUP x, MODIFY, EXTEND and DELETE w and x; on anything
 * else READ needs r, MODIFY and EXTEND w, EXECUTE x (LOOKUP and DELETE are
 * never granted there, nor EXECUTE on a directory). Returns 0, -ESTALE,
 * -EAGAIN or -EIO. One round trip.
 */
int dbfs_access(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint32_t want, uint32_t *granted,
                dbfs_attr *attr)
{
    dbfs_attr a;
    int rc = dbfs_getattr(c, fh, &a);

    return dbfs_access_answer(rc, &a, cred, fh, want, granted, attr);
}

/* dbfs_access_quick -- see dbfs.h. */
int dbfs_access_quick(dbfs *fs, const dbfs_cred *cred, dbfs_fh fh, uint32_t want, uint32_t *granted,
                      dbfs_attr *attr)
{
    dbfs_attr a;
    int rc = dbfs_getattr_quick(fs, fh, &a);

    return dbfs_access_answer(rc, &a, cred, fh, want, granted, attr);
}

/*
 * dbfs_readlink -- see dbfs.h. Needs no permission (as readlink(2)).
 * Returns 0 with *target (malloc'd, caller frees) and *attr, -EINVAL if fh
 * is not a symbolic link, -ESTALE, -ENOMEM, -EAGAIN or -EIO. One round
 * trip.
 */
int dbfs_readlink(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, char **target, dbfs_attr *attr)
{
    PGresult *r = NULL;
    dbfs_cache_op op;
    dbfs_attr a;
    int rc;

    (void)cred;
    if (fh.snap != 0)
        return dbfs_sn_readlink(c, fh, target, attr);
    *target = NULL;
    dbfs_cache_read_begin(c->fs, &op);
    rc = dbfs_fetch_by_handle(c, DBFS_ST_READLINK, fh, &r);
    if (rc != 0)
        goto out;
    dbfs_get_attr(r, 0, 0, &a);
    dbfs_cache_put_attr(&op, &a);
    if (attr)
        *attr = a;
    rc = dbfs_get_target(r, DBFS_ATTR_NCOLS, &a, target);
out:
    dbfs_cache_end(&op);
    PQclear(r);
    return rc;
}

/* The FSSTAT figures from the database's size and file count. */
static void dbfs_fsstat_fill(dbfs_conn *c, uint64_t db_bytes, uint64_t files, dbfs_fsstat_res *out)
{
    struct statvfs sv;

    memset(out, 0, sizeof *out);
    if (dbfs_space_figures(c->fs, &out->tbytes, &out->abytes)) {
        /* What data writes may still use: above the space guard's
         * reserve, and what removals freed inside the data tables. */
        out->fbytes = out->abytes;
    } else if (c->fs->space_path && statvfs(c->fs->space_path, &sv) == 0) {
        out->tbytes = (uint64_t)sv.f_blocks * sv.f_frsize;
        out->fbytes = (uint64_t)sv.f_bfree * sv.f_frsize;
        out->abytes = (uint64_t)sv.f_bavail * sv.f_frsize;
    } else {
        if (c->fs->space_path)
            g_warning("fsstat: statvfs of the data directory failed: %s", g_strerror(errno));
        out->tbytes = db_bytes + DBFS_FREE_BYTES_UNKNOWN;
        out->fbytes = DBFS_FREE_BYTES_UNKNOWN;
        out->abytes = DBFS_FREE_BYTES_UNKNOWN;
    }
    out->tfiles = files + DBFS_FREE_FILES;
    out->ffiles = DBFS_FREE_FILES;
    out->afiles = DBFS_FREE_FILES;
}

/*
 * The FSSTAT figures from the row of DBFS_ST_FSSTAT (r), which are then
 * kept for DBFS_FSSTAT_TTL_US. Returns 0 or -EIO (not one row).
 */
static int dbfs_fsstat_from(dbfs_conn *c, const PGresult *r, dbfs_fsstat_res *out)
{
    dbfs_fsstat_memo *m = &c->fs->fsstat_memo;
    uint64_t db_bytes, files;

    if (PQntuples(r) != 1)
        return -EIO;
    db_bytes = (uint64_t)dbfs_get_i8(r, 0, 0);
    files = (uint64_t)dbfs_get_i8(r, 0, 1);
    g_mutex_lock(&m->lock);
    m->db_bytes = db_bytes;
    m->files = files;
    m->until_us = g_get_monotonic_time() + DBFS_FSSTAT_TTL_US;
    g_mutex_unlock(&m->lock);
    dbfs_fsstat_fill(c, db_bytes, files, out);
    return 0;
}

/* The kept FSSTAT figures, if still fresh: true and *out filled. */
static bool dbfs_fsstat_kept(dbfs_conn *c, dbfs_fsstat_res *out)
{
    dbfs_fsstat_memo *m = &c->fs->fsstat_memo;
    uint64_t db_bytes = 0, files = 0;
    bool fresh;

    g_mutex_lock(&m->lock);
    fresh = m->until_us > g_get_monotonic_time();
    if (fresh) {
        db_bytes = m->db_bytes;
        files = m->files;
    }
    g_mutex_unlock(&m->lock);
    if (fresh)
        dbfs_fsstat_fill(c, db_bytes, files, out);
    return fresh;
}

/*
 * dbfs_fsstat -- space and file counts. With a space_path, bytes come
 * from statvfs of it (the disk the database lives on); without one, the
 * database's size is reported as used and DBFS_FREE_BYTES_UNKNOWN (1 PiB)
 * as free. Files: the used count is the planner's estimate of fileatt rows
 * (cheap, not exact), DBFS_FREE_FILES (2^40) are reported free. The
 * database's figures are kept for DBFS_FSSTAT_TTL_US (statvfs is asked
 * every time). Returns 0, -EAGAIN or -EIO. One round trip, none while the
 * figures are fresh.
 */
int dbfs_fsstat(dbfs_conn *c, dbfs_fsstat_res *out)
{
    PGresult *r = NULL;
    int rc;

    if (dbfs_fsstat_kept(c, out))
        return 0;
    rc = dbfs_exec(c, DBFS_ST_FSSTAT, NULL, &r);

    if (rc == 0)
        rc = dbfs_fsstat_from(c, r, out);
    PQclear(r);
    return rc;
}

/* GETATTR and FSSTAT in one batch (dbfs_batch_run's fn). */
typedef struct {
    const dbfs_params *p;
    PGresult *ra, *rf;
} dbfs_fsstat_batch;

static int dbfs_fsstat_queue(dbfs_conn *c, void *arg)
{
    dbfs_fsstat_batch *b = arg;

    PQclear(b->ra);
    PQclear(b->rf);
    b->ra = b->rf = NULL;
    dbfs_batch_add(c, DBFS_ST_GETATTR, b->p);
    dbfs_batch_add(c, DBFS_ST_FSSTAT, NULL);
    dbfs_batch_sync(c);
    dbfs_batch_result(c, &b->ra);
    return dbfs_batch_result(c, &b->rf);
}

/*
 * dbfs_fsstat_fh -- see dbfs.h. The attributes come from the stat cache
 * when it has them (then dbfs_fsstat: none or one round trip); otherwise
 * GETATTR and FSSTAT go in one batch, one round trip.
 */
int dbfs_fsstat_fh(dbfs_conn *c, dbfs_fh fh, dbfs_fsstat_res *out, dbfs_attr_opt *attr)
{
    dbfs_fsstat_batch b = {0};
    dbfs_cache_op op;
    dbfs_params p;
    dbfs_attr a;
    int rc;

    if (attr)
        memset(attr, 0, sizeof *attr);
    if (fh.snap != 0) {
        rc = dbfs_sn_getattr(c, fh, &a);
        if (rc != 0)
            return rc;
        if (attr) {
            attr->valid = true;
            attr->attr = a;
        }
        return dbfs_fsstat(c, out);
    }
    rc = dbfs_cache_attr(c->fs, fh, &a);
    if (rc == -ESTALE)
        return rc;
    if (rc == 0) {
        if (attr) {
            attr->valid = true;
            attr->attr = a;
            dbfs_wb_overlay(c->fs, &attr->attr);
        }
        return dbfs_fsstat(c, out);
    }
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)fh.ino);
    dbfs_param_i4(&p, (int32_t)fh.gen);
    b.p = &p;
    dbfs_cache_read_begin(c->fs, &op);
    rc = dbfs_batch_run(c, dbfs_fsstat_queue, &b);
    if (rc != 0)
        goto out;
    if (PQntuples(b.ra) == 0) {
        dbfs_cache_put_gone(&op, fh);
        rc = -ESTALE;
        goto out;
    }
    dbfs_get_attr(b.ra, 0, 0, &a);
    dbfs_cache_put_attr(&op, &a);
    if (attr) {
        attr->valid = true;
        attr->attr = a;
    }
    rc = dbfs_fsstat_from(c, b.rf, out);
out:
    dbfs_cache_end(&op);
    PQclear(b.ra);
    PQclear(b.rf);
    return rc;
}
