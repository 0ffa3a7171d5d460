/*
 * nfs3_dir.c -- NFSv3 procedures on names: LOOKUP, READLINK, CREATE,
 * MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK (RFC 1813 sections
 * 3.3.3, 3.3.5, 3.3.8 - 3.3.15).
 *
 * NOTES
 *   Shape of every handler (nfs3_proc.h): handles, names, read-only
 *   export (NFS3ERR_ROFS), one dbfs call, one status mapping, then resok
 *   or resfail with the attributes and wcc data dbfs reported.
 *
 *   Procedures with two handles (RENAME, LINK) need both in the same
 *   export: otherwise NFS3ERR_XDEV, as Linux nfsd answers for a rename
 *   across exports.
 *
 *   LOOKUP ".." in the root directory of an export that is not "/" answers
 *   that root directory itself (as Linux nfsd does), so a client never gets
 *   a handle outside its export. The export root is found by walking the
 *   export's path (mnt3_resolve); only such ".." lookups pay for that.
 *
 *   MKDIR, SYMLINK and MKNOD ignore a size in their attributes, as Linux
 *   nfsd does.
 *
 *   Names reach these handlers checked for NUL and '/' by their decoders
 *   (nfs3_args.c); nfs3_name_in() judges length and "." / ".." per
 *   procedure and gives the C string dbfs takes.
 */
#include <stdlib.h>
#include <string.h>

#include "nfs3_proc.h"

/*
 * nfs3_dotdot_of_root -- is `dir` the root of req->export, for a ".."
 * lookup that must stay there? Root of "/" is left to dbfs (whose ".." of
 * the file-system root is the root). An export path that no longer
 * resolves has no root to stop at.
 */
static bool nfs3_dotdot_of_root(srv_req *req, dbfs_fh dir)
{
    dbfs_attr root;

    if (strcmp(req->export->path, "/") == 0)
        return false;
    if (mnt3_resolve(req, req->export->path, &root) != 0)
        return false;
    return root.ino == dir.ino && root.gen == dir.gen;
}

/* LOOKUP's reply from dbfs's answer st, obj and dir_attr. */
static void nfs3_lookup_res(srv_req *req, LOOKUP3res *res, nfsstat3 st, const dbfs_attr *obj,
                            const dbfs_attr_opt *dir_attr)
{
    const dbfs_info *info = req->srv->info;

    res->status = st;
    if (st != NFS3_OK) {
        nfs3_post_op_attr(info, dir_attr, &res->LOOKUP3res_u.resfail.dir_attributes);
        return;
    }
    LOOKUP3resok *ok = &res->LOOKUP3res_u.resok;
    nfs3_fh_out(req, (dbfs_fh){.ino = obj->ino, .gen = obj->gen, .snap = obj->snap}, &ok->object);
    nfs3_post_op_attr_of(info, obj, &ok->obj_attributes);
    nfs3_post_op_attr(info, dir_attr, &ok->dir_attributes);
}

/* LOOKUP: find a name in a directory (RFC 1813 3.3.3). */
void nfs3_proc_lookup(srv_req *req, void *argp, void *resp)
{
    const LOOKUP3args *args = argp;
    dbfs_fh dir;
    dbfs_attr obj;
    dbfs_attr_opt dir_attr = {0};
    const char *name;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->what.dir, &dir);
    if (st == NFS3_OK)
        st = nfs3_name_in(req, NFSPROC3_LOOKUP, &args->what.name, &name);
    if (st == NFS3_OK) {
        int err;

        /* ".." of the export root is the root: look up "." instead. */
        if (dir.snap == 0 && strcmp(name, "..") == 0 && nfs3_dotdot_of_root(req, dir))
            name = ".";
        if (!nfs3_snap_lookup(req, dir, name, &err, &obj, &dir_attr))
            err = dbfs_lookup(req->db, &req->cred, dir, name, &obj, &dir_attr);
        st = nfs3_errno_to_stat(err, NFSPROC3_LOOKUP);
    }
    nfs3_lookup_res(req, resp, st, &obj, &dir_attr);
}

/* LOOKUP from the event thread: what nfs3_proc_lookup answers, when the
 * caches know the directory, the name and the file (dbfs_lookup_quick);
 * ".." and the directory of snapshots always go to a worker. */
bool nfs3_quick_lookup(srv_req *req, void *argp, void *resp)
{
    const LOOKUP3args *args = argp;
    dbfs_fh dir;
    dbfs_attr obj;
    dbfs_attr_opt dir_attr = {0};
    const char *name;
    nfsstat3 st;

    if (!nfs3_quick_fh_in(req, &args->what.dir, &dir, &st))
        return false;
    if (st == NFS3_OK)
        st = nfs3_name_in(req, NFSPROC3_LOOKUP, &args->what.name, &name);
    if (st == NFS3_OK &&
        (strcmp(name, DBFS_SNAP_DIRNAME) == 0 ||
         !nfs3_quick_status(dbfs_lookup_quick(req->srv->fs, &req->cred, dir, name, &obj, &dir_attr),
                            NFSPROC3_LOOKUP, &st)))
        return false;
    nfs3_lookup_res(req, resp, st, &obj, &dir_attr);
    return true;
}

/* READLINK: the target of a symbolic link (RFC 1813 3.3.5). */
void nfs3_proc_readlink(srv_req *req, void *argp, void *resp)
{
    const READLINK3args *args = argp;
    READLINK3res *res = resp;
    dbfs_fh fh;
    dbfs_attr attr;
    char *target = NULL;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->symlink, &fh);
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(dbfs_readlink(req->db, &req->cred, fh, &target, &attr),
                                NFSPROC3_READLINK);
    res->status = st;
    if (st == NFS3_OK) {
        READLINK3resok *ok = &res->READLINK3res_u.resok;
        nfs3_post_op_attr_of(req->srv->info, &attr, &ok->symlink_attributes);
        nfs3_path_out(req, target, &ok->data);
    }
    free(target);
}

/*
 * nfs3_created -- fill the reply parts every creating procedure shares:
 * on success the new object's handle and attributes and the directory's
 * wcc data, on failure the wcc data alone.
 */
static void nfs3_created(srv_req *req, nfsstat3 st, const dbfs_attr *obj, const dbfs_wcc *wcc,
                         post_op_fh3 *ok_obj, post_op_attr *ok_attr, wcc_data *ok_wcc,
                         wcc_data *fail_wcc)
{
    const dbfs_info *info = req->srv->info;

    if (st != NFS3_OK) {
        nfs3_wcc(info, wcc, fail_wcc);
        return;
    }
    nfs3_post_op_fh(req, (dbfs_fh){.ino = obj->ino, .gen = obj->gen, .snap = obj->snap}, ok_obj);
    nfs3_post_op_attr_of(info, obj, ok_attr);
    nfs3_wcc(info, wcc, ok_wcc);
}

/* The 8 bytes of a create verifier as one number (byte order is ours). */
static uint64_t nfs3_verf_in(const char v[NFS3_CREATEVERFSIZE])
{
    uint64_t x = 0;

    for (int i = 0; i < NFS3_CREATEVERFSIZE; i++)
        x = (x << 8) | (unsigned char)v[i];
    return x;
}

/* CREATE: make a regular file, UNCHECKED, GUARDED or EXCLUSIVE (RFC 1813 3.3.8). */
void nfs3_proc_create(srv_req *req, void *argp, void *resp)
{
    const CREATE3args *args = argp;
    CREATE3res *res = resp;
    dbfs_fh dir;
    dbfs_sattr sa = {0};
    const dbfs_sattr *sap = &sa;
    dbfs_createmode how = DBFS_CREATE_UNCHECKED;
    uint64_t verf = 0;
    dbfs_attr obj;
    dbfs_wcc wcc = {0};
    const char *name;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->where.dir, &dir);
    if (st == NFS3_OK)
        st = nfs3_name_in(req, NFSPROC3_CREATE, &args->where.name, &name);
    if (st == NFS3_OK) {
        switch (args->how.mode) {
        case UNCHECKED:
        case GUARDED:
            how = args->how.mode == GUARDED ? DBFS_CREATE_GUARDED : DBFS_CREATE_UNCHECKED;
            st = nfs3_sattr_in(&args->how.createhow3_u.obj_attributes, &sa);
            break;
        case EXCLUSIVE:
            how = DBFS_CREATE_EXCLUSIVE;
            verf = nfs3_verf_in(args->how.createhow3_u.verf);
            sap = NULL;
            break;
        default:
            st = NFS3ERR_INVAL;
            break;
        }
    }
    if (st == NFS3_OK && nfs3_read_only(req))
        st = NFS3ERR_ROFS;
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(
            dbfs_create(req->db, &req->cred, dir, name, how, sap, verf, &obj, &wcc),
            NFSPROC3_CREATE);
    res->status = st;
    nfs3_created(req, st, &obj, &wcc, &res->CREATE3res_u.resok.obj,
                 &res->CREATE3res_u.resok.obj_attributes, &res->CREATE3res_u.resok.dir_wcc,
                 &res->CREATE3res_u.resfail.dir_wcc);
}

/* MKDIR: make a directory (RFC 1813 3.3.9). */
void nfs3_proc_mkdir(srv_req *req, void *argp, void *resp)
{
    const MKDIR3args *args = argp;
    MKDIR3res *res = resp;
    dbfs_fh dir;
    dbfs_sattr sa = {0};
    dbfs_attr obj;
    dbfs_wcc wcc = {0};
    const char *name;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->where.dir, &dir);
    if (st == NFS3_OK)
        st = nfs3_name_in(req, NFSPROC3_MKDIR, &args->where.name, &name);
    if (st == NFS3_OK)
        st = nfs3_sattr_in(&args->attributes, &sa);
    if (st == NFS3_OK && nfs3_read_only(req))
        st = NFS3ERR_ROFS;
    sa.set &= ~(unsigned)DBFS_SET_SIZE;
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(dbfs_mkdir(req->db, &req->cred, dir, name, &sa, &obj, &wcc),
                                NFSPROC3_MKDIR);
    res->status = st;
    nfs3_created(req, st, &obj, &wcc, &res->MKDIR3res_u.resok.obj,
                 &res->MKDIR3res_u.resok.obj_attributes, &res->MKDIR3res_u.resok.dir_wcc,
                 &res->MKDIR3res_u.resfail.dir_wcc);
}

/*
 * SYMLINK: make a symbolic link (RFC 1813 3.3.10). An empty target is
 * NFS3ERR_INVAL and one over DBFS_PATH_MAX bytes NFS3ERR_NAMETOOLONG, as
 * in Linux nfsd (nfs3_path_in).
 */
void nfs3_proc_symlink(srv_req *req, void *argp, void *resp)
{
    const SYMLINK3args *args = argp;
    SYMLINK3res *res = resp;
    const char *name, *target;
    dbfs_fh dir;
    dbfs_sattr sa = {0};
    dbfs_attr obj;
    dbfs_wcc wcc = {0};
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->where.dir, &dir);
    if (st == NFS3_OK)
        st = nfs3_name_in(req, NFSPROC3_SYMLINK, &args->where.name, &name);
    if (st == NFS3_OK)
        st = nfs3_path_in(req, &args->symlink.symlink_data, &target);
    if (st == NFS3_OK)
        st = nfs3_sattr_in(&args->symlink.symlink_attributes, &sa);
    if (st == NFS3_OK && nfs3_read_only(req))
        st = NFS3ERR_ROFS;
    sa.set &= ~(unsigned)DBFS_SET_SIZE;
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(
            dbfs_symlink(req->db, &req->cred, dir, name, target, &sa, &obj, &wcc),
            NFSPROC3_SYMLINK);
    res->status = st;
    nfs3_created(req, st, &obj, &wcc, &res->SYMLINK3res_u.resok.obj,
                 &res->SYMLINK3res_u.resok.obj_attributes, &res->SYMLINK3res_u.resok.dir_wcc,
                 &res->SYMLINK3res_u.resfail.dir_wcc);
}

/*
 * MKNOD: make a device, socket or FIFO (RFC 1813 3.3.11). Regular files,
 * directories and links have procedures of their own: NFS3ERR_BADTYPE.
 */
void nfs3_proc_mknod(srv_req *req, void *argp, void *resp)
{
    const MKNOD3args *args = argp;
    MKNOD3res *res = resp;
    const sattr3 *attrs = NULL;
    dbfs_type type = DBFS_FIFO;
    uint32_t major = 0, minor = 0;
    dbfs_fh dir;
    dbfs_sattr sa = {0};
    dbfs_attr obj;
    dbfs_wcc wcc = {0};
    const char *name;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->where.dir, &dir);
    if (st == NFS3_OK)
        st = nfs3_name_in(req, NFSPROC3_MKNOD, &args->where.name, &name);
    if (st == NFS3_OK) {
        switch (args->what.type) {
        case NF3CHR:
        case NF3BLK:
            type = args->what.type == NF3CHR ? DBFS_CHR : DBFS_BLK;
            attrs = &args->what.mknoddata3_u.device.dev_attributes;
            major = args->what.mknoddata3_u.device.spec.specdata1;
            minor = args->what.mknoddata3_u.device.spec.specdata2;
            break;
        case NF3SOCK:
        case NF3FIFO:
            type = args->what.type == NF3SOCK ? DBFS_SOCK : DBFS_FIFO;
            attrs = &args->what.mknoddata3_u.pipe_attributes;
            break;
        default:
            st = NFS3ERR_BADTYPE;
            break;
        }
    }
    if (st == NFS3_OK)
        st = nfs3_sattr_in(attrs, &sa);
    if (st == NFS3_OK && nfs3_read_only(req))
        st = NFS3ERR_ROFS;
    sa.set &= ~(unsigned)DBFS_SET_SIZE;
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(
            dbfs_mknod(req->db, &req->cred, dir, name, type, major, minor, &sa, &obj, &wcc),
            NFSPROC3_MKNOD);
    res->status = st;
    nfs3_created(req, st, &obj, &wcc, &res->MKNOD3res_u.resok.obj,
                 &res->MKNOD3res_u.resok.obj_attributes, &res->MKNOD3res_u.resok.dir_wcc,
                 &res->MKNOD3res_u.resfail.dir_wcc);
}

/*
 * What REMOVE and RMDIR share: check the directory handle and the name,
 * remove (a directory when isdir), map the status. *wcc gets what dbfs
 * returned for the directory.
 */
static nfsstat3 nfs3_unlink(srv_req *req, const diropargs3 *what, bool isdir, dbfs_wcc *wcc)
{
    const unsigned proc = isdir ? NFSPROC3_RMDIR : NFSPROC3_REMOVE;
    const char *name;
    dbfs_fh dir;
    nfsstat3 st;

    st = nfs3_fh_in(req, &what->dir, &dir);
    if (st == NFS3_OK)
        st = nfs3_name_in(req, proc, &what->name, &name);
    if (st == NFS3_OK && nfs3_read_only(req))
        st = NFS3ERR_ROFS;
    if (st != NFS3_OK)
        return st;
    if (isdir)
        return nfs3_errno_to_stat(dbfs_rmdir(req->db, &req->cred, dir, name, wcc), proc);
    return nfs3_errno_to_stat(dbfs_remove(req->db, &req->cred, dir, name, wcc), proc);
}

/* REMOVE: remove a name that is not a directory (RFC 1813 3.3.12). */
void nfs3_proc_remove(srv_req *req, void *argp, void *resp)
{
    const REMOVE3args *args = argp;
    REMOVE3res *res = resp;
    dbfs_wcc wcc = {0};

    res->status = nfs3_unlink(req, &args->object, false, &wcc);
    nfs3_wcc(req->srv->info, &wcc,
             res->status == NFS3_OK ? &res->REMOVE3res_u.resok.dir_wcc
                                    : &res->REMOVE3res_u.resfail.dir_wcc);
}

/* RMDIR: remove an empty directory (RFC 1813 3.3.13). */
void nfs3_proc_rmdir(srv_req *req, void *argp, void *resp)
{
    const RMDIR3args *args = argp;
    RMDIR3res *res = resp;
    dbfs_wcc wcc = {0};

    res->status = nfs3_unlink(req, &args->object, true, &wcc);
    nfs3_wcc(req->srv->info, &wcc,
             res->status == NFS3_OK ? &res->RMDIR3res_u.resok.dir_wcc
                                    : &res->RMDIR3res_u.resfail.dir_wcc);
}

/* RENAME: move a name, replacing what the target name held (RFC 1813 3.3.14). */
void nfs3_proc_rename(srv_req *req, void *argp, void *resp)
{
    const RENAME3args *args = argp;
    RENAME3res *res = resp;
    const cfg_export *from_export = NULL;
    dbfs_fh from, to;
    dbfs_wcc from_wcc = {0}, to_wcc = {0};
    const char *from_name, *to_name;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->from.dir, &from);
    if (st == NFS3_OK) {
        from_export = req->export;
        st = nfs3_fh_in(req, &args->to.dir, &to);
    }
    if (st == NFS3_OK && req->export != from_export)
        st = NFS3ERR_XDEV;
    if (st == NFS3_OK)
        st = nfs3_name_in(req, NFSPROC3_RENAME, &args->from.name, &from_name);
    if (st == NFS3_OK)
        st = nfs3_name_in(req, NFSPROC3_RENAME, &args->to.name, &to_name);
    if (st == NFS3_OK && nfs3_read_only(req))
        st = NFS3ERR_ROFS;
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(
            dbfs_rename(req->db, &req->cred, from, from_name, to, to_name, &from_wcc, &to_wcc),
            NFSPROC3_RENAME);
    res->status = st;
    if (st == NFS3_OK) {
        nfs3_wcc(req->srv->info, &from_wcc, &res->RENAME3res_u.resok.fromdir_wcc);
        nfs3_wcc(req->srv->info, &to_wcc, &res->RENAME3res_u.resok.todir_wcc);
    } else {
        nfs3_wcc(req->srv->info, &from_wcc, &res->RENAME3res_u.resfail.fromdir_wcc);
        nfs3_wcc(req->srv->info, &to_wcc, &res->RENAME3res_u.resfail.todir_wcc);
    }
}

/* LINK: give a file another name (RFC 1813 3.3.15). */
void nfs3_proc_link(srv_req *req, void *argp, void *resp)
{
    const LINK3args *args = argp;
    LINK3res *res = resp;
    const cfg_export *file_export = NULL;
    dbfs_fh file, dir;
    dbfs_attr_opt file_attr = {0};
    dbfs_wcc wcc = {0};
    const char *name;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->file, &file);
    if (st == NFS3_OK) {
        file_export = req->export;
        st = nfs3_fh_in(req, &args->link.dir, &dir);
    }
    if (st == NFS3_OK && req->export != file_export)
        st = NFS3ERR_XDEV;
    if (st == NFS3_OK)
        st = nfs3_name_in(req, NFSPROC3_LINK, &args->link.name, &name);
    if (st == NFS3_OK && nfs3_read_only(req))
        st = NFS3ERR_ROFS;
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(dbfs_link(req->db, &req->cred, file, dir, name, &file_attr, &wcc),
                                NFSPROC3_LINK);
    res->status = st;
    if (st == NFS3_OK) {
        nfs3_post_op_attr(req->srv->info, &file_attr, &res->LINK3res_u.resok.file_attributes);
        nfs3_wcc(req->srv->info, &wcc, &res->LINK3res_u.resok.linkdir_wcc);
    } else {
        nfs3_post_op_attr(req->srv->info, &file_attr, &res->LINK3res_u.resfail.file_attributes);
        nfs3_wcc(req->srv->info, &wcc, &res->LINK3res_u.resfail.linkdir_wcc);
    }
}
