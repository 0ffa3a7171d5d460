/*
 * dbfs_snap.c -- the metadata of a snapshot as dbfs.h's calls read it
 * (dbfs_snap_int.h): attributes, lookups, symbolic links, directory
 * listings, and the directory of snapshots itself (dbfs_snap.h).
 *
 * NOTES
 *   Every read is one prepared statement (DBFS_ST_SNAP_*, dbfs_sql.c) over
 *   the SQL functions of schema/functions/21_snap.sql, one round trip,
 *   no cache: what a snapshot holds never changes, but it may be deleted,
 *   and then every statement finds no row (-ESTALE). Permissions are
 *   checked here on the attributes as the snapshot holds them, with the
 *   live rules (dbfs_perm_allows).
 *
 *   The directory of snapshots (snap DBFS_SNAP_DIR, inode and generation
 *   of the export's root) is made up from the live root and the list of
 *   snapshots: mode 0555, owned by root, a link per snapshot, times of the
 *   newest snapshot whose nanoseconds change with every snapshot taken or
 *   deleted. Its entries' cookies are the snapshots' ids + 2 ("." and ".."
 *   are 1 and 2), stable while they exist; READDIRPLUS gives each the
 *   export's root as that snapshot saw it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbfs_conn.h"
#include "dbfs_dirent.h"
#include "dbfs_fetch.h"
#include "dbfs_int.h"
#include "dbfs_perm.h"
#include "dbfs_snap_int.h"
#include "dbfs_wire.h"

/* The directory of snapshots: r-x for everyone. */
#define DBFS_SNAP_DIR_MODE 0555u
#define DBFS_SNAP_DIR_SIZE 4096u
/* A snapshot's cookie in that directory. */
#define DBFS_SNAP_COOKIE(id) ((uint64_t)(id) + DBFS_COOKIE_DOTDOT)
#define DBFS_NS_PER_S        INT64_C(1000000000)

/* dbfs_snap_fsid -- see dbfs_snap.h (a large odd multiplier keeps the
 * snapshots' fsids apart from each other and from the live one). */
uint64_t dbfs_snap_fsid(const dbfs_info *info, uint32_t snap)
{
    return snap == 0 ? info->fsid : info->fsid + (uint64_t)snap * UINT64_C(0x9E3779B97F4A7C15);
}

/* Run statement id with the handle's inode, generation and snapshot. */
static int dbfs_sn_by_handle(dbfs_conn *c, dbfs_stmt id, dbfs_fh fh, PGresult **r)
{
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)fh.ino);
    dbfs_param_i4(&p, (int32_t)fh.gen);
    dbfs_param_i8(&p, (int64_t)fh.snap);
    return dbfs_exec(c, id, &p, r);
}

/* Attributes at column col of row 0 of r, as snapshot snap holds them. */
static void dbfs_sn_attr(const PGresult *r, int row, int col, uint32_t snap, dbfs_attr *a)
{
    dbfs_get_attr(r, row, col, a);
    a->snap = snap;
}

/* dbfs_snap_dir -- see dbfs_snap.h. */
int dbfs_snap_dir(dbfs_conn *c, dbfs_fh root, dbfs_attr *out)
{
    dbfs_params p;
    PGresult *r = NULL;
    int64_t t, count;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)root.ino);
    dbfs_param_i4(&p, (int32_t)root.gen);
    rc = dbfs_exec(c, DBFS_ST_SNAP_DIR, &p, &r);
    if (rc == 0 && PQntuples(r) == 0)
        rc = -ESTALE;
    if (rc != 0)
        goto out;
    dbfs_get_attr(r, 0, 0, out);
    if (out->type != DBFS_DIR) {
        rc = -ENOTDIR;
        goto out;
    }
    count = dbfs_get_i8(r, 0, DBFS_ATTR_NCOLS);
    t = dbfs_get_null(r, 0, DBFS_ATTR_NCOLS + 2) ? out->ctime_ns
                                                 : dbfs_get_i8(r, 0, DBFS_ATTR_NCOLS + 2) * 1000;
    /* Moves with every snapshot taken or deleted: ids are never reused,
     * so the newest id and the number of snapshots name the set. */
    out->change = (uint64_t)dbfs_get_i8(r, 0, DBFS_ATTR_NCOLS + 1) * 65536 + (uint64_t)count;
    out->mode = DBFS_SNAP_DIR_MODE;
    out->nlink = 2 + (uint32_t)count;
    out->uid = out->gid = 0;
    out->size = out->used = DBFS_SNAP_DIR_SIZE;
    /* An NFSv3 client knows a directory changed by its times alone; the
     * newest snapshot's time stays when an older one is deleted, so the
     * nanoseconds carry the change. */
    t = t - t % DBFS_NS_PER_S + (int64_t)(out->change % DBFS_NS_PER_S);
    out->atime_ns = out->mtime_ns = out->ctime_ns = t;
    out->snap = DBFS_SNAP_DIR;
out:
    PQclear(r);
    return rc;
}

/* dbfs_sn_getattr -- see dbfs_snap_int.h. */
int dbfs_sn_getattr(dbfs_conn *c, dbfs_fh fh, dbfs_attr *out)
{
    PGresult *r = NULL;
    int rc;

    if (fh.snap == DBFS_SNAP_DIR)
        return dbfs_snap_dir(c, (dbfs_fh){fh.ino, fh.gen, 0}, out);
    rc = dbfs_sn_by_handle(c, DBFS_ST_SNAP_GETATTR, fh, &r);
    if (rc == 0 && PQntuples(r) == 0)
        rc = -ESTALE;
    if (rc == 0)
        dbfs_sn_attr(r, 0, 0, fh.snap, out);
    PQclear(r);
    return rc;
}

/* The id of snapshot `name` (bytes): 0, -ENOENT or a database error. */
static int dbfs_sn_find(dbfs_conn *c, const char *name, uint32_t *id)
{
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_bytes(&p, name, strlen(name));
    rc = dbfs_exec(c, DBFS_ST_SNAP_FIND, &p, &r);
    if (rc == 0 && PQntuples(r) == 0)
        rc = -ENOENT;
    if (rc == 0)
        *id = (uint32_t)dbfs_get_i8(r, 0, 0);
    PQclear(r);
    return rc;
}

/* dbfs_snap_find -- see dbfs_snap.h. */
int dbfs_snap_find(dbfs_conn *c, const char *name, uint32_t *id)
{
    return dbfs_sn_find(c, name, id);
}

/* LOOKUP in the directory of snapshots: ".", ".." (the live root), or a
 * snapshot's name (the export's root as it saw it). */
static int dbfs_sn_lookup_dir(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                              dbfs_attr *obj, dbfs_attr_opt *dir_attr)
{
    dbfs_attr d, o;
    uint32_t id = 0;
    int rc = dbfs_snap_dir(c, (dbfs_fh){dir.ino, dir.gen, 0}, &d);

    if (rc != 0)
        return rc;
    dbfs_attr_opt_set(dir_attr, &d);
    if (!dbfs_perm_allows(&d, cred, DBFS_MAY_EXEC))
        return -EACCES;
    if (dbfs_name_is_dot(name)) {
        o = d;
    } else if (dbfs_name_is_dotdot(name)) {
        rc = dbfs_fetch_attr(c, (dbfs_fh){dir.ino, dir.gen, 0}, &o);
    } else {
        rc = dbfs_sn_find(c, name, &id);
        if (rc == 0 && id >= DBFS_SNAP_DIR)
            rc = -ENOENT;
        if (rc == 0)
            rc = dbfs_sn_getattr(c, (dbfs_fh){dir.ino, dir.gen, id}, &o);
        /* The export's root did not exist then (or the snapshot just went). */
        if (rc == -ESTALE)
            rc = -ENOENT;
    }
    if (rc == 0 && obj)
        *obj = o;
    return rc;
}

/* dbfs_sn_lookup -- see dbfs_snap_int.h. */
int dbfs_sn_lookup(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                   dbfs_attr *obj, dbfs_attr_opt *dir_attr)
{
    dbfs_params p;
    PGresult *r = NULL;
    dbfs_attr d, o;
    bool none;
    int rc;

    dbfs_attr_opt_set(dir_attr, NULL);
    rc = dbfs_name_check(name, -ENOENT);
    if (rc != 0)
        return rc;
    if (dir.snap == DBFS_SNAP_DIR)
        return dbfs_sn_lookup_dir(c, cred, dir, name, obj, dir_attr);
    if (dbfs_name_is_dot(name) || dbfs_name_is_dotdot(name)) {
        rc = dbfs_sn_by_handle(
            c, dbfs_name_is_dot(name) ? DBFS_ST_SNAP_GETATTR : DBFS_ST_SNAP_PARENT, dir, &r);
    } else {
        dbfs_params_init(&p);
        dbfs_param_i8(&p, (int64_t)dir.ino);
        dbfs_param_i4(&p, (int32_t)dir.gen);
        dbfs_param_bytes(&p, name, strlen(name));
        dbfs_param_i8(&p, (int64_t)dir.snap);
        rc = dbfs_exec(c, DBFS_ST_SNAP_LOOKUP, &p, &r);
    }
    if (rc == 0 && PQntuples(r) == 0)
        rc = -ESTALE;
    if (rc != 0)
        goto out;
    dbfs_sn_attr(r, 0, 0, dir.snap, &d);
    dbfs_attr_opt_set(dir_attr, &d);
    none = dbfs_name_is_dot(name) || PQnfields(r) <= DBFS_ATTR_NCOLS ||
           dbfs_get_null(r, 0, DBFS_ATTR_NCOLS);
    if (d.type != DBFS_DIR)
        rc = -ENOTDIR;
    else if (!dbfs_perm_allows(&d, cred, DBFS_MAY_EXEC))
        rc = -EACCES;
    else if (none && !dbfs_name_is_dot(name) && !dbfs_name_is_dotdot(name))
        rc = -ENOENT;
    if (rc == 0 && obj) {
        /* ".", and ".." of the root (its own parent), are the directory. */
        if (none)
            o = d;
        else
            dbfs_sn_attr(r, 0, DBFS_ATTR_NCOLS, dir.snap, &o);
        *obj = o;
    }
out:
    PQclear(r);
    return rc;
}

/* dbfs_sn_readlink -- see dbfs_snap_int.h. */
int dbfs_sn_readlink(dbfs_conn *c, dbfs_fh fh, char **target, dbfs_attr *attr)
{
    PGresult *r = NULL;
    dbfs_attr a;
    int rc;

    *target = NULL;
    if (fh.snap == DBFS_SNAP_DIR) {
        rc = dbfs_snap_dir(c, (dbfs_fh){fh.ino, fh.gen, 0}, &a);
        if (rc == 0 && attr)
            *attr = a;
        return rc == 0 ? -EINVAL : rc;
    }
    rc = dbfs_sn_by_handle(c, DBFS_ST_SNAP_READLINK, fh, &r);
    if (rc == 0 && PQntuples(r) == 0)
        rc = -ESTALE;
    if (rc != 0)
        goto out;
    dbfs_sn_attr(r, 0, 0, fh.snap, &a);
    if (attr)
        *attr = a;
    rc = dbfs_get_target(r, DBFS_ATTR_NCOLS, &a, target);
out:
    PQclear(r);
    return rc;
}

/* READDIR of the directory of snapshots: the dots, then the snapshots
 * after the cookie; with plus, each with the export's root as it saw it
 * (its attributes and so its handle), as dbfs_sn_lookup_dir finds it, or
 * without attributes where that root did not exist then. */
static int dbfs_sn_readdir_dir(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, uint64_t cookie,
                               uint32_t max_entries, bool plus, dbfs_dirent **entries, size_t *n,
                               bool *eof, dbfs_attr_opt *dir_attr)
{
    dbfs_dots dots = dbfs_dots_after(cookie, max_entries);
    uint32_t want = max_entries - dots.n;
    dbfs_attr d, root;
    dbfs_dirent *e = NULL;
    dbfs_params p;
    PGresult *r = NULL;
    size_t got = 0;
    int rc = dbfs_snap_dir(c, (dbfs_fh){dir.ino, dir.gen, 0}, &d);

    if (rc != 0)
        return rc;
    dbfs_attr_opt_set(dir_attr, &d);
    if (!dbfs_perm_allows(&d, cred, DBFS_MAY_READ))
        return -EACCES;
    rc = dbfs_fetch_attr(c, (dbfs_fh){dir.ino, dir.gen, 0}, &root);
    if (rc != 0)
        return rc;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, cookie > DBFS_COOKIE_DOTDOT && cookie < (uint64_t)INT64_MAX
                          ? (int64_t)(cookie - DBFS_COOKIE_DOTDOT)
                          : (cookie >= (uint64_t)INT64_MAX ? INT64_MAX : 0));
    dbfs_param_i8(&p, (int64_t)want + 1);
    if (plus) {
        dbfs_param_i8(&p, (int64_t)dir.ino);
        dbfs_param_i4(&p, (int32_t)dir.gen);
    }
    rc = dbfs_exec(c, plus ? DBFS_ST_SNAP_LIST_PLUS : DBFS_ST_SNAP_LIST, &p, &r);
    if (rc != 0)
        return rc;
    e = calloc((size_t)dots.n + want + 1, sizeof *e);
    rc = e ? dbfs_dirent_dots(e, &got, dots, &d, root.ino, &root, plus) : -ENOMEM;
    for (int i = 0; rc == 0 && i < PQntuples(r) && (uint32_t)i < want; i++) {
        uint32_t id = (uint32_t)dbfs_get_i8(r, i, 0);
        bool has = plus && id < DBFS_SNAP_DIR && !dbfs_get_null(r, i, 2);
        dbfs_attr a;

        if (has)
            dbfs_sn_attr(r, i, 2, id, &a);
        rc = dbfs_dirent_add(e, &got, DBFS_SNAP_COOKIE(id), dir.ino, PQgetvalue(r, i, 1),
                             (size_t)PQgetlength(r, i, 1), has ? &a : NULL);
    }
    if (rc == 0) {
        *eof = dots.n == dots.left && (uint32_t)PQntuples(r) <= want;
        *entries = e;
        *n = got;
        e = NULL;
    }
    dbfs_dirents_free(e, got);
    PQclear(r);
    return rc;
}

/* dbfs_sn_readdir -- see dbfs_snap_int.h: one batch, the directory with
 * its parent and the entries after the cookie, as live READDIR does. */
int dbfs_sn_readdir(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, uint64_t cookie,
                    uint32_t max_entries, bool plus, dbfs_dirent **entries, size_t *n, bool *eof,
                    dbfs_attr_opt *dir_attr)
{
    dbfs_dots dots;
    uint32_t want;
    dbfs_params p;
    PGresult *rd = NULL, *re = NULL;
    dbfs_attr d, parent;
    dbfs_dirent *e = NULL;
    size_t got = 0;
    int rc;

    *entries = NULL;
    *n = 0;
    *eof = false;
    dbfs_attr_opt_set(dir_attr, NULL);
    if (dir.snap == DBFS_SNAP_DIR)
        return dbfs_sn_readdir_dir(c, cred, dir, cookie, max_entries, plus, entries, n, eof,
                                   dir_attr);
    dots = dbfs_dots_after(cookie, max_entries);
    want = max_entries - dots.n;
    rc = dbfs_sn_by_handle(c, DBFS_ST_SNAP_PARENT, dir, &rd);
    if (rc == 0 && PQntuples(rd) == 0)
        rc = -ESTALE;
    if (rc != 0)
        goto out;
    dbfs_sn_attr(rd, 0, 0, dir.snap, &d);
    dbfs_attr_opt_set(dir_attr, &d);
    if (d.type != DBFS_DIR) {
        rc = -ENOTDIR;
        goto out;
    }
    if (!dbfs_perm_allows(&d, cred, DBFS_MAY_READ)) {
        rc = -EACCES;
        goto out;
    }
    if (dbfs_get_null(rd, 0, DBFS_ATTR_NCOLS))
        parent = d;
    else
        dbfs_sn_attr(rd, 0, DBFS_ATTR_NCOLS, dir.snap, &parent);
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)dir.ino);
    dbfs_param_i8(&p, cookie > (uint64_t)INT64_MAX
                          ? INT64_MAX
                          : (int64_t)(cookie > DBFS_COOKIE_DOTDOT ? cookie : DBFS_COOKIE_DOTDOT));
    dbfs_param_i8(&p, (int64_t)want + 1);
    dbfs_param_i8(&p, (int64_t)dir.snap);
    rc = dbfs_exec(c, plus ? DBFS_ST_SNAP_READDIRPLUS : DBFS_ST_SNAP_READDIR, &p, &re);
    if (rc != 0)
        goto out;
    e = calloc((size_t)dots.n + want + 1, sizeof *e);
    rc = e ? dbfs_dirent_dots(e, &got, dots, &d, parent.ino, &parent, plus) : -ENOMEM;
    for (int i = 0; rc == 0 && i < PQntuples(re) && (uint32_t)i < want; i++) {
        dbfs_attr a;

        if (plus)
            dbfs_sn_attr(re, i, 3, dir.snap, &a);
        rc = dbfs_dirent_add(e, &got, (uint64_t)dbfs_get_i8(re, i, 0),
                             (uint64_t)dbfs_get_i8(re, i, 1), PQgetvalue(re, i, 2),
                             (size_t)PQgetlength(re, i, 2), plus ? &a : NULL);
    }
    if (rc == 0) {
        *eof = dots.n == dots.left && (uint32_t)PQntuples(re) <= want;
        *entries = e;
        *n = got;
        e = NULL;
    }
out:
    dbfs_dirents_free(e, got);
    PQclear(rd);
    PQclear(re);
    return rc;
}
