/*
 * nfs3_conv.c -- conversions between dbfs and NFSv3 XDR types (RFC 1813
 * section 2.5/2.6: fattr3, post_op_attr, wcc_data, sattr3, nfs_fh3), and
 * the checks every handler makes on handles and names (nfs3_proc.h).
 *
 * NOTES
 *   Times: dbfs keeps nanoseconds since the epoch in an int64; nfstime3 has
 *   32-bit unsigned seconds. Times before 1970 or after 2106 are clamped on
 *   the wire; what the database holds is never changed by that.
 *
 *   Names: nfs3_name_in() and nfs3_path_in() turn the counted bytes of a
 *   filename3 / nfspath3 into C strings for dbfs, and judge length and
 *   "." / ".." (nfs3_proc.h NOTES); the wire checks (NUL, '/') are the
 *   argument decoders' (nfs3_args.c).
 *
 *   Memory: handles, names and paths are written into srv_req_alloc()
 *   memory; nothing else here allocates.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "nfs3_proc.h"

#define NS_PER_SEC 1000000000LL

nfstime3 nfs3_time_from_ns(int64_t ns)
{
    nfstime3 t;
    int64_t sec = ns / NS_PER_SEC, nsec = ns % NS_PER_SEC;

    if (nsec < 0) { /* floor, not truncation, for times before the epoch */
        nsec += NS_PER_SEC;
        sec--;
    }
    if (sec < 0) {
        t.seconds = 0;
        t.nseconds = 0;
    } else if (sec > (int64_t)UINT32_MAX) {
        t.seconds = UINT32_MAX;
        t.nseconds = NS_PER_SEC - 1;
    } else {
        t.seconds = (u_int)sec;
        t.nseconds = (u_int)nsec;
    }
    return t;
}

int64_t nfs3_time_to_ns(const nfstime3 *t)
{
    return (int64_t)t->seconds * NS_PER_SEC + (int64_t)t->nseconds;
}

ftype3 nfs3_ftype(dbfs_type t)
{
    switch (t) {
    case DBFS_REG:
        return NF3REG;
    case DBFS_DIR:
        return NF3DIR;
    case DBFS_BLK:
        return NF3BLK;
    case DBFS_CHR:
        return NF3CHR;
    case DBFS_LNK:
        return NF3LNK;
    case DBFS_SOCK:
        return NF3SOCK;
    case DBFS_FIFO:
        return NF3FIFO;
    }
    /* The schema stores only the types above. */
    g_warning("nfs3: file of unknown type %d reported as a regular file", (int)t);
    return NF3REG;
}

void nfs3_fattr(const dbfs_info *info, const dbfs_attr *a, fattr3 *out)
{
    out->type = nfs3_ftype(a->type);
    out->mode = a->mode & 07777;
    out->nlink = a->nlink;
    out->uid = a->uid;
    out->gid = a->gid;
    out->size = a->size;
    out->used = a->used;
    /* Device files only (a transformation link keeps a marker there). */
    out->rdev.specdata1 = a->type == DBFS_BLK || a->type == DBFS_CHR ? a->rdev_major : 0;
    out->rdev.specdata2 = a->type == DBFS_BLK || a->type == DBFS_CHR ? a->rdev_minor : 0;
    out->fsid = dbfs_snap_fsid(info, a->snap);
    out->fileid = a->ino;
    out->atime = nfs3_time_from_ns(a->atime_ns);
    out->mtime = nfs3_time_from_ns(a->mtime_ns);
    out->ctime = nfs3_time_from_ns(a->ctime_ns);
}

void nfs3_post_op_attr(const dbfs_info *info, const dbfs_attr_opt *a, post_op_attr *out)
{
    out->attributes_follow = a && a->valid;
    if (out->attributes_follow)
        nfs3_fattr(info, &a->attr, &out->post_op_attr_u.attributes);
}

void nfs3_post_op_attr_of(const dbfs_info *info, const dbfs_attr *a, post_op_attr *out)
{
    out->attributes_follow = TRUE;
    nfs3_fattr(info, a, &out->post_op_attr_u.attributes);
}

void nfs3_wcc(const dbfs_info *info, const dbfs_wcc *w, wcc_data *out)
{
    out->before.attributes_follow = w->have_pre;
    if (w->have_pre) {
        wcc_attr *b = &out->before.pre_op_attr_u.attributes;
        b->size = w->pre_size;
        b->mtime = nfs3_time_from_ns(w->pre_mtime_ns);
        b->ctime = nfs3_time_from_ns(w->pre_ctime_ns);
    }
    out->after.attributes_follow = w->have_post;
    if (w->have_post)
        nfs3_fattr(info, &w->post, &out->after.post_op_attr_u.attributes);
}

/* One time of a sattr3; the *_NOW flag for server time. */
static nfsstat3 nfs3_settime_in(time_how how, const nfstime3 *t, unsigned set_client,
                                unsigned set_now, int64_t *ns, unsigned *set)
{
    switch (how) {
    case DONT_CHANGE:
        return NFS3_OK;
    case SET_TO_SERVER_TIME:
        *set |= set_now;
        return NFS3_OK;
    case SET_TO_CLIENT_TIME:
        if (t->nseconds >= NS_PER_SEC)
            return NFS3ERR_INVAL;
        *ns = nfs3_time_to_ns(t);
        *set |= set_client;
        return NFS3_OK;
    }
    return NFS3ERR_INVAL;
}

nfsstat3 nfs3_sattr_in(const sattr3 *in, dbfs_sattr *out)
{
    nfsstat3 st;

    memset(out, 0, sizeof *out);
    if (in->mode.set_it) {
        out->set |= DBFS_SET_MODE;
        out->mode = in->mode.set_mode3_u.mode & 07777;
    }
    if (in->uid.set_it) {
        out->set |= DBFS_SET_UID;
        out->uid = in->uid.set_uid3_u.uid;
    }
    if (in->gid.set_it) {
        out->set |= DBFS_SET_GID;
        out->gid = in->gid.set_gid3_u.gid;
    }
    if (in->size.set_it) {
        out->set |= DBFS_SET_SIZE;
        out->size = in->size.set_size3_u.size;
    }
    st = nfs3_settime_in(in->atime.set_it, &in->atime.set_atime_u.atime, DBFS_SET_ATIME,
                         DBFS_SET_ATIME_NOW, &out->atime_ns, &out->set);
    if (st != NFS3_OK)
        return st;
    return nfs3_settime_in(in->mtime.set_it, &in->mtime.set_mtime_u.mtime, DBFS_SET_MTIME,
                           DBFS_SET_MTIME_NOW, &out->mtime_ns, &out->set);
}

/*
 * What Linux nfsd answers for "." or ".." as the name a procedure creates,
 * removes or renames (fs/nfsd/vfs.c: nfsd_create, nfsd_symlink and
 * nfsd_link nfserr_exist, nfsd_unlink nfserr_acces, nfsd_rename
 * nfserr_perm; fs/nfsd/nfs3proc.c: nfsd3_create_file nfserr_exist).
 * LOOKUP resolves them (nfsd_lookup_dentry).
 */
static nfsstat3 nfs3_dots_stat(unsigned proc)
{
    switch (proc) {
    case NFSPROC3_CREATE:
    case NFSPROC3_MKDIR:
    case NFSPROC3_SYMLINK:
    case NFSPROC3_MKNOD:
    case NFSPROC3_LINK:
        return NFS3ERR_EXIST;
    case NFSPROC3_REMOVE:
    case NFSPROC3_RMDIR:
        return NFS3ERR_ACCES;
    case NFSPROC3_RENAME:
        return NFS3ERR_PERM;
    default:
        return NFS3_OK;
    }
}

/* A copy of len bytes at p with a NUL after them, in request memory. */
static char *nfs3_cstr(srv_req *req, const char *p, size_t len)
{
    char *s = srv_req_alloc(req, len + 1); /* zeroed: the NUL is there */

    if (len)
        memcpy(s, p, len);
    return s;
}

nfsstat3 nfs3_name_in(srv_req *req, unsigned proc, const filename3 *in, const char **out)
{
    const char *p = in->filename3_val;
    size_t len = in->filename3_len;

    *out = NULL;
    if (!nfs3_filename_ok(in)) {
        g_warning("nfs3: procedure %u got a name its decoder should have refused (%zu bytes)", proc,
                  len);
        return NFS3ERR_SERVERFAULT;
    }
    if (len > DBFS_NAME_MAX)
        return NFS3ERR_NAMETOOLONG;
    if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
        nfsstat3 st = nfs3_dots_stat(proc);
        if (st != NFS3_OK)
            return st;
    }
    /* No NUL inside (checked above): dbfs's C string is the whole name. */
    *out = nfs3_cstr(req, p, len);
    return NFS3_OK;
}

nfsstat3 nfs3_path_in(srv_req *req, const nfspath3 *in, const char **out)
{
    size_t len = in->nfspath3_len;

    *out = NULL;
    if (len == 0)
        return NFS3ERR_INVAL;
    if (!nfs3_path_ok(in)) {
        g_warning("nfs3: a symbolic link target its decoder should have refused (%zu bytes)", len);
        return NFS3ERR_SERVERFAULT;
    }
    if (len > DBFS_PATH_MAX)
        return NFS3ERR_NAMETOOLONG;
    *out = nfs3_cstr(req, in->nfspath3_val, len);
    return NFS3_OK;
}

void nfs3_name_out(srv_req *req, const char *name, filename3 *out)
{
    size_t len = strlen(name);

    out->filename3_val = nfs3_cstr(req, name, len);
    out->filename3_len = (u_int)len;
}

void nfs3_path_out(srv_req *req, const char *path, nfspath3 *out)
{
    size_t len = strlen(path);

    out->nfspath3_val = nfs3_cstr(req, path, len);
    out->nfspath3_len = (u_int)len;
}

nfsstat3 nfs3_fh_in(srv_req *req, const nfs_fh3 *in, dbfs_fh *out)
{
    bool first = req->export == NULL;
    int err = exp_fh_in(req, in->data.data_val, in->data.data_len, out);

    if (err != 0)
        return nfs3_errno_to_stat(err, req->proc); /* -EBADF: BADHANDLE; -ESTALE; -EACCES */
    /* exports(5) async: this call's changes commit without waiting for
     * the disk; with two handles (RENAME, LINK), only if both exports
     * say so. */
    if (req->db)
        dbfs_conn_set_async(req->db, req->client->async && (first || dbfs_conn_async(req->db)));
    return NFS3_OK;
}

bool nfs3_quick_fh_in(srv_req *req, const nfs_fh3 *in, dbfs_fh *out, nfsstat3 *st)
{
    if (req->srv->match_may_block)
        return false;
    *st = nfs3_fh_in(req, in, out);
    return true;
}

bool nfs3_quick_status(int rc, uint32_t proc, nfsstat3 *st)
{
    if (rc == -ENODATA)
        return false;
    *st = nfs3_errno_to_stat(rc, proc);
    return true;
}

bool nfs3_read_only(const srv_req *req)
{
    return !req->client || !req->client->rw;
}

unsigned nfs3_export_index(const srv_req *req)
{
    g_assert(req->export >= req->srv->cfg->exports &&
             req->export < req->srv->cfg->exports + req->srv->cfg->nexports);
    return (unsigned)(req->export - req->srv->cfg->exports);
}

void nfs3_fh_out(srv_req *req, dbfs_fh fh, nfs_fh3 *out)
{
    unsigned char *buf = srv_req_alloc(req, FH_SIZE);

    fh_encode(req->srv->info, nfs3_export_index(req), fh, buf);
    out->data.data_val = (char *)buf;
    out->data.data_len = FH_SIZE;
}

void nfs3_post_op_fh(srv_req *req, dbfs_fh fh, post_op_fh3 *out)
{
    out->handle_follows = TRUE;
    nfs3_fh_out(req, fh, &out->post_op_fh3_u.handle);
}
