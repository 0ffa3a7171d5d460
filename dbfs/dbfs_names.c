/*
 * dbfs_names.c -- names: LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD, REMOVE,
 * RMDIR, RENAME and LINK (RFC 1813 3.3.3, 3.3.8 - 3.3.15; READDIR is
 * dbfs_readdir.c).
 *
 * NOTES
 *   Every call is at most one round trip; a LOOKUP whose directory, name
 *   and object the metadata caches know (dbfs_cache.c) makes none. Every
 *   change tells the caches what it changed (the table in dbfs_cache.c's
 *   header), from the rows its function returns. Changes are the PL/pgSQL
 *   functions of schema/functions/ (one statement, one transaction, all
 *   checks before any change, wcc read under the lock); lookups are
 *   SELECTs whose permission checks happen here with
 *   dbfs_perm_allows(). Names are checked here before any round trip:
 *   longer than DBFS_NAME_MAX is -ENAMETOOLONG, a '/' is -EINVAL, and
 *   "", "." and ".." get the error Linux's system calls give (each call's
 *   comment says which), since an NFS client resolves those itself.
 *
 *   Output structs may be NULL when the caller does not want them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_cache.h"
#include "dbfs_dirent.h"
#include "dbfs_perm.h"
#include "dbfs_snap_int.h"
#include "dbfs_space.h"
#include "dbfs_wb.h"
#include "dbfs_xf.h"

/* The mode of a new file when the caller sets none (a symbolic link's is
 * always DBFS_MODE_LINK). */
#define DBFS_MODE_FILE_DEFAULT 0644u
#define DBFS_MODE_DIR_DEFAULT  0755u
#define DBFS_MODE_LINK         0777u

/* The cached answer of a LOOKUP: true and *rc (the answer, with the
 * outputs filled as dbfs_lookup fills them), or false when the caches
 * cannot give it (a miss anywhere: the caller asks the database). quick
 * (dbfs_lookup_quick): look without counting, and count the look-ups used
 * once the answer is given, as the counted look-ups would have. */
static bool dbfs_lookup_cached(dbfs *fs, bool quick, const dbfs_cred *cred, dbfs_fh dir,
                               const char *name, dbfs_attr *obj, dbfs_attr_opt *dir_attr, int *rc)
{
    dbfs_attr d, o;
    dbfs_fh ofh = {0};
    bool dot = dbfs_name_is_dot(name), named = false;
    cache_name_result nr = CACHE_NAME_MISS;

    *rc = quick ? dbfs_cache_attr_quick(fs, dir, &d) : dbfs_cache_attr(fs, dir, &d);
    if (*rc != 0 && *rc != -ESTALE)
        return false;
    if (*rc == 0 && d.type == DBFS_DIR && dbfs_perm_allows(&d, cred, DBFS_MAY_EXEC) && !dot) {
        nr = quick ? dbfs_cache_name_quick(fs, dir.ino, name, &ofh)
                   : dbfs_cache_name(fs, dir.ino, name, &ofh);
        if (nr == CACHE_NAME_MISS)
            return false;
        named = true;
        if (nr == CACHE_NAME_FOUND &&
            (quick ? dbfs_cache_attr_quick(fs, ofh, &o) : dbfs_cache_attr(fs, ofh, &o)) != 0)
            return false;
        /* A transformation link whose size is still to be computed. */
        if (quick && nr == CACHE_NAME_FOUND && dbfs_attr_is_xlink(&o) && o.rdev_minor != 1)
            return false;
    }
    if (quick) {
        dbfs_cache_attr_hit(fs, dir);
        if (named)
            dbfs_cache_name_hit(fs, dir.ino, name);
        if (nr == CACHE_NAME_FOUND)
            dbfs_cache_attr_hit(fs, ofh);
    }
    if (*rc == -ESTALE)
        return true;
    dbfs_attr_opt_set(dir_attr, &d);
    if (d.type != DBFS_DIR || !dbfs_perm_allows(&d, cred, DBFS_MAY_EXEC)) {
        *rc = d.type != DBFS_DIR ? -ENOTDIR : -EACCES;
        return true;
    }
    if (nr == CACHE_NAME_ABSENT) {
        *rc = -ENOENT;
        return true;
    }
    if (obj)
        *obj = dot ? d : o;
    return true;
}

/*
 * What the database answered a LOOKUP (statement id: DBFS_ST_GETATTR for
 * ".", DBFS_ST_PARENT for "..", else DBFS_ST_LOOKUP; r its rows: the
 * directory, and the object's columns, NULL when there is none): the
 * caches learn it, then the checks as dbfs_lookup's comment lists them.
 */
static int dbfs_lookup_answer(dbfs_conn *c, const dbfs_cred *cred, dbfs_cache_op *op, dbfs_fh dir,
                              const char *name, dbfs_stmt id, const PGresult *r, dbfs_attr *obj,
                              dbfs_attr_opt *dir_attr)
{
    bool none; /* no object columns: ".", or no such name */
    dbfs_attr d, o;

    if (PQntuples(r) == 0) {
        dbfs_cache_put_gone(op, dir);
        return -ESTALE;
    }
    none = id == DBFS_ST_GETATTR || dbfs_get_null(r, 0, DBFS_ATTR_NCOLS);
    dbfs_get_attr(r, 0, 0, &d);
    dbfs_cache_put_attr(op, &d);
    if (!none) {
        dbfs_get_attr(r, 0, DBFS_ATTR_NCOLS, &o);
        dbfs_cache_put_attr(op, &o);
    }
    if (id == DBFS_ST_LOOKUP && (!none || d.type == DBFS_DIR))
        dbfs_cache_put_name(op, dir.ino, name, none ? NULL : &o);
    dbfs_attr_opt_set(dir_attr, &d);
    if (d.type != DBFS_DIR)
        return -ENOTDIR;
    if (!dbfs_perm_allows(&d, cred, DBFS_MAY_EXEC))
        return -EACCES;
    if (none && id == DBFS_ST_LOOKUP)
        return -ENOENT;
    /* ".", and ".." of the root (its own parent), are the directory. */
    if (obj)
        *obj = none ? d : o;
    if (obj && !none)
        dbfs_wb_overlay(c->fs, obj);
    return 0;
}

/*
 * dbfs_lookup -- see dbfs.h. "" is -ENOENT. Checks: the directory exists
 * (-ESTALE) and is one (-ENOTDIR), search permission (-EACCES), the name
 * (-ENOENT). No round trip when the caches know the directory, the name
 * and the object (".." is always asked); else one, whose rows are cached.
 */
int dbfs_lookup(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name, dbfs_attr *obj,
                dbfs_attr_opt *dir_attr)
{
    dbfs_params p;
    PGresult *r = NULL;
    dbfs_cache_op op;
    dbfs_stmt id = DBFS_ST_LOOKUP;
    int rc;

    if (dir.snap != 0)
        return dbfs_sn_lookup(c, cred, dir, name, obj, dir_attr);
    dbfs_attr_opt_set(dir_attr, NULL);
    rc = dbfs_name_check(name, -ENOENT);
    if (rc != 0)
        return rc;
    if (!dbfs_name_is_dotdot(name)) {
        if (dbfs_lookup_cached(c->fs, false, cred, dir, name, obj, dir_attr, &rc)) {
            if (rc == 0 && obj)
                dbfs_wb_overlay(c->fs, obj);
            return rc;
        }
        dbfs_attr_opt_set(dir_attr, NULL);
    }
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)dir.ino);
    dbfs_param_i4(&p, (int32_t)dir.gen);
    if (dbfs_name_is_dot(name))
        id = DBFS_ST_GETATTR;
    else if (dbfs_name_is_dotdot(name))
        id = DBFS_ST_PARENT;
    else
        dbfs_param_bytes(&p, name, strlen(name));
    dbfs_cache_read_begin(c->fs, &op);
    rc = dbfs_exec(c, id, &p, &r);
    if (rc == 0)
        rc = dbfs_lookup_answer(c, cred, &op, dir, name, id, r, obj, dir_attr);
    dbfs_cache_end(&op);
    PQclear(r);
    /* A transformation link's size, when it must be computed first. */
    if (rc == 0 && obj && dbfs_attr_is_xlink(obj))
        rc = dbfs_xf_link_size(c, obj);
    return rc;
}

/*
 * dbfs_lookup_quick -- see dbfs.h: dbfs_lookup's cached answer, or
 * -ENODATA (".." and snapshots always ask the database).
 */
int dbfs_lookup_quick(dbfs *fs, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                      dbfs_attr *obj, dbfs_attr_opt *dir_attr)
{
    dbfs_attr o;
    int rc;

    dbfs_attr_opt_set(dir_attr, NULL);
    if (dir.snap != 0 || dbfs_name_check(name, -ENOENT) != 0 || dbfs_name_is_dotdot(name))
        return -ENODATA;
    if (!dbfs_lookup_cached(fs, true, cred, dir, name, &o, dir_attr, &rc))
        return -ENODATA; /* dir_attr untouched: still not set */
    if (rc == 0) {
        dbfs_wb_overlay(fs, &o);
        if (obj)
            *obj = o;
    }
    return rc;
}

/* Queue-free one-call runner of a metadata function: executes statement
 * id and parses its rows into *f. Returns 0 (f->status holds the
 * operation's answer) or the error of running it. */
static int dbfs_call(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p, const char *what,
                     dbfs_fnres *f)
{
    PGresult *r = NULL;
    int rc = dbfs_exec(c, id, p, &r);

    if (rc == 0)
        rc = dbfs_fnres_parse(r, what, f);
    PQclear(r);
    return rc;
}

/* What every directory change tells the stat cache from its rows: the
 * directories after (roles POST and POST2; held, so stored), or that the
 * directory handle is stale. */
static void dbfs_cache_learn(dbfs_cache_op *op, dbfs_fh dir, const dbfs_fnres *f)
{
    if (f->have[DBFS_ROLE_POST])
        dbfs_cache_put_attr(op, &f->attr[DBFS_ROLE_POST]);
    if (f->have[DBFS_ROLE_POST2])
        dbfs_cache_put_attr(op, &f->attr[DBFS_ROLE_POST2]);
    if (f->status == -ESTALE && !f->have[DBFS_ROLE_POST])
        dbfs_cache_put_gone(op, dir);
}

/*
 * Make a file of any type (pgnfs_create, 40_create.sql). A mode that sa
 * does not set is default_mode. Names: "" and '/' are -EINVAL, "." and
 * ".." -EEXIST.
 */
static int dbfs_make(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                     dbfs_type type, dbfs_createmode how, uint64_t verf, const char *target,
                     uint32_t major, uint32_t minor, const dbfs_sattr *sa, uint32_t default_mode,
                     dbfs_attr *obj, dbfs_wcc *dir_wcc)
{
    dbfs_sattr s = {0};
    dbfs_params p;
    dbfs_fnres f;
    dbfs_cache_op op;
    int rc;

    if (dir_wcc)
        memset(dir_wcc, 0, sizeof *dir_wcc);
    if (dir.snap != 0)
        return -EROFS;
    rc = dbfs_name_check(name, -EINVAL);
    if (rc != 0)
        return rc;
    if (dbfs_name_is_dot(name) || dbfs_name_is_dotdot(name))
        return -EEXIST;
    if (sa)
        s = *sa;
    if (!(s.set & DBFS_SET_MODE)) {
        s.set |= DBFS_SET_MODE;
        s.mode = default_mode;
    }
    if ((s.set & DBFS_SET_SIZE) && s.size > (uint64_t)DBFS_MAX_FILESIZE)
        return -EFBIG;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)dir.ino);
    dbfs_param_i4(&p, (int32_t)dir.gen);
    dbfs_param_bytes(&p, name, strlen(name));
    dbfs_param_cred(&p, cred);
    dbfs_param_i8(&p, dbfs_now_ns());
    dbfs_param_i2(&p, (int16_t)type);
    dbfs_param_i4(&p, (int32_t)how);
    dbfs_param_i8(&p, (int64_t)verf);
    if (target)
        dbfs_param_bytes(&p, target, strlen(target));
    else
        dbfs_param_null(&p);
    dbfs_param_i4(&p, (int32_t)major);
    dbfs_param_i4(&p, (int32_t)minor);
    dbfs_param_i4(&p, (int32_t)s.set);
    dbfs_param_i4(&p, (int32_t)(s.mode & DBFS_MODE_MASK));
    dbfs_param_i8(&p, s.uid);
    dbfs_param_i8(&p, s.gid);
    dbfs_param_i8(&p, (int64_t)((s.set & DBFS_SET_SIZE) ? s.size : 0));
    dbfs_param_i8(&p, s.atime_ns);
    dbfs_param_i8(&p, s.mtime_ns);
    dbfs_cache_mut_begin(c->fs, &op, &dir.ino, 1, &dir.ino, 1);
    rc = dbfs_call(c, DBFS_ST_CREATE, &p, "create", &f);
    if (rc != 0) {
        dbfs_cache_lost(&op);
        dbfs_cache_end(&op);
        return rc;
    }
    dbfs_cache_learn(&op, dir, &f);
    if (f.have[DBFS_ROLE_VICTIM]) {
        /* The name existed: an UNCHECKED create may have cut the file
         * (dead rows for VACUUM: the space guard). */
        dbfs_cache_victim(&op, &f.attr[DBFS_ROLE_VICTIM], false);
        dbfs_cache_put_name(&op, dir.ino, name, &f.attr[DBFS_ROLE_VICTIM]);
        if (f.status == 0 && (s.set & DBFS_SET_SIZE))
            dbfs_space_changed(c->fs);
    } else if (f.status == 0 && f.have[DBFS_ROLE_OBJ]) {
        dbfs_cache_put_new(&op, &f.attr[DBFS_ROLE_OBJ]);
        dbfs_cache_put_name(&op, dir.ino, name, &f.attr[DBFS_ROLE_OBJ]);
        dbfs_xf_hint(c->fs, dir.ino, &f.attr[DBFS_ROLE_OBJ]);
    }
    dbfs_cache_end(&op);
    dbfs_wcc_from(dir_wcc, &f, DBFS_ROLE_PRE, DBFS_ROLE_POST);
    if (f.status == 0 && obj)
        *obj = f.attr[DBFS_ROLE_OBJ];
    return f.status;
}

/*
 * dbfs_create -- see dbfs.h. UNCHECKED over an existing regular file
 * applies only the size of sa (as Linux nfsd: a mode must not change a
 * file that exists) and returns that file; over anything else -EEXIST.
 * EXCLUSIVE keeps verf in the file (fileatt.createverf); the same verifier
 * on an existing regular file returns it, another is -EEXIST. Other
 * errors: -ESTALE, -ENOTDIR, -EACCES (search or write on the directory,
 * or write on the file for UNCHECKED with a size), -EPERM (sa sets an
 * owner the caller may not give), -EINVAL, -ENAMETOOLONG. One round trip.
 */
int dbfs_create(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                dbfs_createmode how, const dbfs_sattr *sa, uint64_t verf, dbfs_attr *obj,
                dbfs_wcc *dir_wcc)
{
    /* UNCHECKED with a size cuts an existing file: its buffered writes
     * came first and must be stored before (dbfs_wb.c). */
    if (how == DBFS_CREATE_UNCHECKED && sa && (sa->set & DBFS_SET_SIZE) &&
        dbfs_wb_holds_any(c->fs)) {
        dbfs_attr old;
        int rc = dbfs_lookup(c, cred, dir, name, &old, NULL);

        if (rc == 0)
            rc = dbfs_wb_flush(c, old.ino, NULL, NULL, NULL);
        if (rc == -EAGAIN)
            return rc;
    }
    return dbfs_make(c, cred, dir, name, DBFS_REG, how, verf, NULL, 0, 0, sa,
                     DBFS_MODE_FILE_DEFAULT, obj, dir_wcc);
}

/*
 * dbfs_mkdir -- make a directory (mode 0755 unless sa sets one; setgid
 * when the parent is setgid). The parent's nlink grows by one. Errors as
 * dbfs_create's with GUARDED. One round trip.
 */
int dbfs_mkdir(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
               const dbfs_sattr *sa, dbfs_attr *obj, dbfs_wcc *dir_wcc)
{
    return dbfs_make(c, cred, dir, name, DBFS_DIR, DBFS_CREATE_GUARDED, 0, NULL, 0, 0, sa,
                     DBFS_MODE_DIR_DEFAULT, obj, dir_wcc);
}

/*
 * dbfs_symlink -- make a symbolic link to target (mode 0777; sa's owner
 * and times apply). An empty target is -ENOENT (as symlink(2)), one over
 * DBFS_PATH_MAX bytes -ENAMETOOLONG; else errors as dbfs_mkdir's. One
 * round trip.
 */
int dbfs_symlink(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                 const char *target, const dbfs_sattr *sa, dbfs_attr *obj, dbfs_wcc *dir_wcc)
{
    if (dir_wcc)
        memset(dir_wcc, 0, sizeof *dir_wcc);
    if (!target || !*target)
        return -ENOENT;
    if (strnlen(target, DBFS_PATH_MAX + 1) > DBFS_PATH_MAX)
        return -ENAMETOOLONG;
    return dbfs_make(c, cred, dir, name, DBFS_LNK, DBFS_CREATE_GUARDED, 0, target, 0, 0, sa,
                     DBFS_MODE_LINK, obj, dir_wcc);
}

/*
 * dbfs_mknod -- make a device node (DBFS_CHR, DBFS_BLK: root only, else
 * -EPERM; major and minor kept), a socket or a fifo (device numbers 0).
 * Other types are -EINVAL. Mode 0644 unless sa sets one. Errors otherwise
 * as dbfs_mkdir's. One round trip.
 */
int dbfs_mknod(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name, dbfs_type type,
               uint32_t major, uint32_t minor, const dbfs_sattr *sa, dbfs_attr *obj,
               dbfs_wcc *dir_wcc)
{
    if (dir_wcc)
        memset(dir_wcc, 0, sizeof *dir_wcc);
    if (type != DBFS_CHR && type != DBFS_BLK && type != DBFS_SOCK && type != DBFS_FIFO)
        return -EINVAL;
    if (type == DBFS_SOCK || type == DBFS_FIFO)
        major = minor = 0;
    if (major > INT32_MAX || minor > INT32_MAX)
        return -EINVAL;
    return dbfs_make(c, cred, dir, name, type, DBFS_CREATE_GUARDED, 0, NULL, major, minor, sa,
                     DBFS_MODE_FILE_DEFAULT, obj, dir_wcc);
}

/* A REMOVE or RENAME that took a file with data away with its last name:
 * its rows are dead, for VACUUM to make reusable (the space guard). */
static void dbfs_names_freed(dbfs *fs, const dbfs_fnres *f)
{
    if (f->status == 0 && f->have[DBFS_ROLE_GONE] && f->attr[DBFS_ROLE_GONE].used > 0)
        dbfs_space_changed(fs);
}

/* REMOVE and RMDIR: pgnfs_remove (50_remove.sql). */
static int dbfs_unname(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                       bool rmdir, dbfs_wcc *dir_wcc)
{
    dbfs_params p;
    dbfs_fnres f;
    dbfs_cache_op op;
    int rc;

    if (dir_wcc)
        memset(dir_wcc, 0, sizeof *dir_wcc);
    if (dir.snap != 0)
        return -EROFS;
    rc = dbfs_name_check(name, -ENOENT);
    if (rc != 0)
        return rc;
    if (dbfs_name_is_dot(name))
        return rmdir ? -EINVAL : -EISDIR;
    if (dbfs_name_is_dotdot(name))
        return rmdir ? -ENOTEMPTY : -EISDIR;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)dir.ino);
    dbfs_param_i4(&p, (int32_t)dir.gen);
    dbfs_param_bytes(&p, name, strlen(name));
    dbfs_param_bool(&p, rmdir);
    dbfs_param_cred(&p, cred);
    dbfs_param_i8(&p, dbfs_now_ns());
    dbfs_cache_mut_begin(c->fs, &op, &dir.ino, 1, &dir.ino, 1);
    rc = dbfs_call(c, DBFS_ST_REMOVE, &p, rmdir ? "rmdir" : "remove", &f);
    if (rc != 0) {
        dbfs_cache_lost(&op);
        dbfs_cache_end(&op);
        return rc;
    }
    dbfs_cache_learn(&op, dir, &f);
    if (f.status == 0 || f.status == -ENOENT)
        dbfs_cache_put_name(&op, dir.ino, name, NULL);
    if (f.status == 0 && f.have[DBFS_ROLE_GONE])
        dbfs_cache_victim(&op, &f.attr[DBFS_ROLE_GONE], true);
    if (f.status == 0 && f.have[DBFS_ROLE_VICTIM])
        dbfs_cache_victim(&op, &f.attr[DBFS_ROLE_VICTIM], false);
    dbfs_cache_end(&op);
    dbfs_names_freed(c->fs, &f);
    dbfs_wcc_from(dir_wcc, &f, DBFS_ROLE_PRE, DBFS_ROLE_POST);
    return f.status;
}

/*
 * dbfs_remove -- remove a non-directory's name; the file and its data go
 * with its last name. "" is -ENOENT; "." and ".." -EISDIR (as unlink(2)).
 * Errors: -ESTALE, -ENOTDIR, -EACCES (search, or write on the directory),
 * -ENOENT, -EPERM (sticky directory: only root, the directory's owner or
 * the file's may), -EISDIR (a directory). One round trip.
 */
int dbfs_remove(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                dbfs_wcc *dir_wcc)
{
    return dbfs_unname(c, cred, dir, name, false, dir_wcc);
}

/*
 * dbfs_rmdir -- remove an empty directory. "." is -EINVAL and ".."
 * -ENOTEMPTY (as rmdir(2) on Linux); -ENOTDIR for a non-directory,
 * -ENOTEMPTY when it has entries; otherwise as dbfs_remove. One round
 * trip.
 */
int dbfs_rmdir(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
               dbfs_wcc *dir_wcc)
{
    return dbfs_unname(c, cred, dir, name, true, dir_wcc);
}

/*
 * dbfs_rename -- see pgnfs_rename (60_rename.sql) for the rules: same
 * file is a no-op success; file over file, directory over an empty
 * directory; -ENOTEMPTY, -ENOTDIR, -EISDIR over the wrong kind; -EINVAL
 * for a directory into its own subtree; -EPERM for sticky directories.
 * Names: "." or ".." on either side -EINVAL (Linux says EBUSY, which NFS
 * cannot carry); an empty source -ENOENT, an empty target -EINVAL. One
 * round trip.
 */
int dbfs_rename(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh from_dir, const char *from_name,
                dbfs_fh to_dir, const char *to_name, dbfs_wcc *from_wcc, dbfs_wcc *to_wcc)
{
    const uint64_t dirs[2] = {from_dir.ino, to_dir.ino};
    dbfs_params p;
    dbfs_fnres f;
    dbfs_cache_op op;
    int rc;

    if (from_wcc)
        memset(from_wcc, 0, sizeof *from_wcc);
    if (to_wcc)
        memset(to_wcc, 0, sizeof *to_wcc);
    if (from_dir.snap != 0 || to_dir.snap != 0)
        return -EROFS;
    rc = dbfs_name_check(from_name, -ENOENT);
    if (rc == 0)
        rc = dbfs_name_check(to_name, -EINVAL);
    if (rc != 0)
        return rc;
    if (dbfs_name_is_dot(from_name) || dbfs_name_is_dotdot(from_name) ||
        dbfs_name_is_dot(to_name) || dbfs_name_is_dotdot(to_name))
        return -EINVAL;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)from_dir.ino);
    dbfs_param_i4(&p, (int32_t)from_dir.gen);
    dbfs_param_bytes(&p, from_name, strlen(from_name));
    dbfs_param_i8(&p, (int64_t)to_dir.ino);
    dbfs_param_i4(&p, (int32_t)to_dir.gen);
    dbfs_param_bytes(&p, to_name, strlen(to_name));
    dbfs_param_cred(&p, cred);
    dbfs_param_i8(&p, dbfs_now_ns());
    dbfs_cache_mut_begin(c->fs, &op, dirs, 2, dirs, 2);
    rc = dbfs_call(c, DBFS_ST_RENAME, &p, "rename", &f);
    if (rc != 0) {
        dbfs_cache_lost(&op);
        dbfs_cache_end(&op);
        return rc;
    }
    dbfs_cache_learn(&op, from_dir, &f);
    if (f.status == -ENOENT)
        dbfs_cache_put_name(&op, from_dir.ino, from_name, NULL);
    if (f.status == 0 && f.have[DBFS_ROLE_OBJ]) {
        /* Moved (not the same file under both names): the names, the
         * object's new ctime, and what the target name held. */
        dbfs_cache_put_name(&op, from_dir.ino, from_name, NULL);
        dbfs_cache_put_name(&op, to_dir.ino, to_name, &f.attr[DBFS_ROLE_OBJ]);
        dbfs_cache_victim(&op, &f.attr[DBFS_ROLE_OBJ], false);
        if (f.have[DBFS_ROLE_GONE])
            dbfs_cache_victim(&op, &f.attr[DBFS_ROLE_GONE], true);
        if (f.have[DBFS_ROLE_VICTIM])
            dbfs_cache_victim(&op, &f.attr[DBFS_ROLE_VICTIM], false);
    }
    dbfs_cache_end(&op);
    dbfs_names_freed(c->fs, &f);
    dbfs_wcc_from(from_wcc, &f, DBFS_ROLE_PRE, DBFS_ROLE_POST);
    dbfs_wcc_from(to_wcc, &f, DBFS_ROLE_PRE2, DBFS_ROLE_POST2);
    return f.status;
}

/*
 * dbfs_link -- give file a new name in dir. Names: "" -EINVAL, "." and
 * ".." -EEXIST. Errors: -ESTALE (either handle), -ENOTDIR, -EACCES,
 * -EEXIST, -EISDIR for a directory (as Linux nfsd answers LINK), -EMLINK. The
 * file's nlink and ctime change. One round trip.
 */
int dbfs_link(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh file, dbfs_fh dir, const char *name,
              dbfs_attr_opt *file_attr, dbfs_wcc *dir_wcc)
{
    const uint64_t inos[2] = {file.ino, dir.ino};
    dbfs_params p;
    dbfs_fnres f;
    dbfs_cache_op op;
    int rc;

    dbfs_attr_opt_set(file_attr, NULL);
    if (dir_wcc)
        memset(dir_wcc, 0, sizeof *dir_wcc);
    if (file.snap != 0 || dir.snap != 0)
        return -EROFS;
    rc = dbfs_name_check(name, -EINVAL);
    if (rc != 0)
        return rc;
    if (dbfs_name_is_dot(name) || dbfs_name_is_dotdot(name))
        return -EEXIST;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)file.ino);
    dbfs_param_i4(&p, (int32_t)file.gen);
    dbfs_param_i8(&p, (int64_t)dir.ino);
    dbfs_param_i4(&p, (int32_t)dir.gen);
    dbfs_param_bytes(&p, name, strlen(name));
    dbfs_param_cred(&p, cred);
    dbfs_param_i8(&p, dbfs_now_ns());
    dbfs_cache_mut_begin(c->fs, &op, inos, 2, &dir.ino, 1);
    rc = dbfs_call(c, DBFS_ST_LINK, &p, "link", &f);
    if (rc != 0) {
        dbfs_cache_lost(&op);
        dbfs_cache_end(&op);
        return rc;
    }
    dbfs_cache_learn(&op, dir, &f);
    if (f.have[DBFS_ROLE_OBJ])
        dbfs_cache_put_attr(&op, &f.attr[DBFS_ROLE_OBJ]);
    if (f.status == 0 && f.have[DBFS_ROLE_OBJ])
        dbfs_cache_put_name(&op, dir.ino, name, &f.attr[DBFS_ROLE_OBJ]);
    dbfs_cache_end(&op);
    dbfs_wcc_from(dir_wcc, &f, DBFS_ROLE_PRE, DBFS_ROLE_POST);
    if (f.have[DBFS_ROLE_OBJ]) {
        dbfs_attr_opt_set(file_attr, &f.attr[DBFS_ROLE_OBJ]);
        if (file_attr)
            dbfs_wb_overlay(c->fs, &file_attr->attr);
    }
    return f.status;
}
