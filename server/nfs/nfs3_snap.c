/*
 * nfs3_snap.c -- what the NFS handlers add for snapshots (dbfs_snap.h):
 * /.snapshots in the root of every export, reached by LOOKUP (and listed
 * by READDIR when [snapshot] visible = true), and the way back up from a
 * snapshot's root.
 *
 * NOTES
 *   dbfs serves the directory of snapshots and everything in a snapshot
 *   (handles whose snap is not 0: read-only, -EROFS for any change); only
 *   which directory is an export's root is known here. The root of "/" is
 *   inode 1; another export's is found by walking its path
 *   (mnt3_resolve), which only the names ".snapshots" and ".." pay for.
 *
 *   Its entry in a listing comes after every real one, with cookie
 *   NFS3_SNAP_COOKIE (larger than any a name gets, which dbfs treats as
 *   past the end), and in READDIRPLUS its attributes and handle.
 */
#include <string.h>

#include "nfs3_proc.h"

/* The cookie of the .snapshots entry in an export root's listing. */
#define NFS3_SNAP_COOKIE ((uint64_t)INT64_MAX)

/* The live root of req->export into *root; false when its path does not
 * resolve (then it has no .snapshots). */
static bool nfs3_snap_export_root(srv_req *req, dbfs_attr *root)
{
    if (strcmp(req->export->path, "/") == 0)
        return dbfs_getattr(req->db,
                            (dbfs_fh){.ino = DBFS_ROOT_INO, .gen = req->srv->info->root_gen},
                            root) == 0;
    return mnt3_resolve(req, req->export->path, root) == 0;
}

/* nfs3_snap_lookup -- see nfs3_proc.h. */
bool nfs3_snap_lookup(srv_req *req, dbfs_fh dir, const char *name, int *err, dbfs_attr *obj,
                      dbfs_attr_opt *dir_attr)
{
    dbfs_attr root, d;
    bool snapdir = dir.snap == 0 && strcmp(name, DBFS_SNAP_DIRNAME) == 0;
    bool up = dir.snap != 0 && dir.snap != DBFS_SNAP_DIR && strcmp(name, "..") == 0;

    if (!snapdir && !up)
        return false;
    if (up && dir.ino != DBFS_ROOT_INO && strcmp(req->export->path, "/") == 0)
        return false;
    if (!nfs3_snap_export_root(req, &root) || root.ino != dir.ino || root.gen != dir.gen)
        return false;
    /* The directory itself, as the client sees it. */
    *err = dbfs_getattr(req->db, dir, &d);
    if (*err != 0)
        return true;
    dir_attr->valid = true;
    dir_attr->attr = d;
    if (up && !dbfs_perm_allows(&d, &req->cred, 1 /* search */)) {
        *err = -EACCES;
        return true;
    }
    *err = dbfs_snap_dir(req->db, (dbfs_fh){.ino = root.ino, .gen = root.gen}, obj);
    return true;
}

/* nfs3_snap_listed -- see nfs3_proc.h. */
bool nfs3_snap_listed(srv_req *req, dbfs_fh dir, uint64_t cookie, bool plus, dbfs_dirent *out)
{
    dbfs_attr root;

    if (!req->srv->cfg->snap_visible || dir.snap != 0 || cookie >= NFS3_SNAP_COOKIE)
        return false;
    if (!nfs3_snap_export_root(req, &root) || root.ino != dir.ino || root.gen != dir.gen)
        return false;
    memset(out, 0, sizeof *out);
    out->cookie = NFS3_SNAP_COOKIE;
    out->ino = root.ino;
    out->name = (char *)DBFS_SNAP_DIRNAME;
    /* Without its attributes the entry still lists; a client looks it up. */
    out->has_attr = plus && dbfs_snap_dir(req->db, (dbfs_fh){.ino = root.ino, .gen = root.gen},
                                          &out->attr) == 0;
    return true;
}
