/*
 * cthon_nfs.c -- the libnfs front end of the Connectathon suite: the
 * operations of cthon.h over libnfs's synchronous high-level API, talking
 * NFSv3 to a server named by an nfs:// URL (no kernel mount needed).
 *
 * NOTES
 *   libnfs's directory cache, page cache and read-ahead are switched off,
 *   so that every stat, read and readdir reaches the server, as the tests
 *   mean them to.
 *
 *   libnfs resolves every path client-side (it folds "a/.." away before
 *   sending anything), so the getcwd walk cannot go through the high-level
 *   API: it sends LOOKUP "..", GETATTR and MOUNT itself through libnfs's raw
 *   RPC layer. The root file handle comes from a MOUNT call of our own on a
 *   second RPC connection (libnfs does not publish the one it holds); the
 *   working directory's handle is found by LOOKUPs from the root, once per
 *   working directory, and cached until the next chdir.
 *
 *   Close flushes: libnfs sends COMMIT when it closes a file it wrote with
 *   UNSTABLE writes, as a kernel NFS client does on close.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "cthon.h"

/* A file handle of our own (raw calls). */
typedef struct cthon_fh {
    uint32_t len;
    char *val;
} cthon_fh;

struct cthon_fs {
    struct nfs_context *nfs;
    char *server;   /* from the URL */
    char *export;   /* the path mounted */
    int mountport;  /* from the URL, 0: ask the portmapper */
    int timeout_ms; /* 0: none */
    cthon_fh root;  /* len 0 until the first walk */
    uint64_t root_ino;
    cthon_fh cwd; /* len 0: not resolved since the last chdir */
    uint64_t cwd_ino;
    char err[512]; /* detail of the last failure */
};

struct cthon_file {
    struct nfsfh *fh;
};

struct cthon_dir {
    struct nfsdir *dir;
};

/* Remember libnfs's message about the failure rc; return rc. */
static int cthon_nfs_err(cthon_fs *fs, int rc)
{
    const char *msg = nfs_get_error(fs->nfs);

    snprintf(fs->err, sizeof fs->err, "%s", msg ? msg : "");
    return rc;
}

static int cthon_nfs_mkdir(cthon_fs *fs, const char *path, unsigned mode)
{
    int rc = nfs_mkdir2(fs->nfs, path, (int)mode);

    return rc < 0 ? cthon_nfs_err(fs, rc) : 0;
}

static int cthon_nfs_rmdir(cthon_fs *fs, const char *path)
{
    int rc = nfs_rmdir(fs->nfs, path);

    return rc < 0 ? cthon_nfs_err(fs, rc) : 0;
}

static int cthon_nfs_open_file(cthon_fs *fs, const char *path, int flags, unsigned mode,
                               cthon_file **f)
{
    cthon_file *nf = malloc(sizeof *nf);
    int rc;

    if (!nf)
        return -ENOMEM;
    if (flags & CTHON_O_WRITE)
        rc = nfs_open2(fs->nfs, path, O_WRONLY | O_CREAT | O_TRUNC, (int)mode, &nf->fh);
    else
        rc = nfs_open(fs->nfs, path, O_RDONLY, &nf->fh);
    if (rc < 0) {
        free(nf);
        return cthon_nfs_err(fs, rc);
    }
    *f = nf;
    return 0;
}

static ssize_t cthon_nfs_write(cthon_fs *fs, cthon_file *f, const void *buf, size_t n)
{
    int rc = nfs_write(fs->nfs, f->fh, n, buf);

    return rc < 0 ? cthon_nfs_err(fs, rc) : rc;
}

static ssize_t cthon_nfs_read(cthon_fs *fs, cthon_file *f, void *buf, size_t n)
{
    size_t done = 0;

    /* libnfs may return less than asked (the server's rtmax): loop. */
    while (done < n) {
        int rc = nfs_read(fs->nfs, f->fh, n - done, (char *)buf + done);
        if (rc < 0)
            return cthon_nfs_err(fs, rc);
        if (rc == 0)
            break;
        done += (size_t)rc;
    }
    return (ssize_t)done;
}

static int cthon_nfs_close(cthon_fs *fs, cthon_file *f)
{
    /* libnfs commits a file it wrote UNSTABLE before it closes it. */
    int rc = nfs_close(fs->nfs, f->fh);

    free(f);
    return rc < 0 ? cthon_nfs_err(fs, rc) : 0;
}

static int cthon_nfs_unlink(cthon_fs *fs, const char *path)
{
    int rc = nfs_unlink(fs->nfs, path);

    return rc < 0 ? cthon_nfs_err(fs, rc) : 0;
}

static void cthon_nfs_fill(cthon_stat *st, const struct nfs_stat_64 *sb)
{
    st->ino = sb->nfs_ino;
    st->mode = (uint32_t)sb->nfs_mode;
    st->nlink = (uint32_t)sb->nfs_nlink;
    st->size = sb->nfs_size;
}

static int cthon_nfs_stat(cthon_fs *fs, const char *path, cthon_stat *st)
{
    struct nfs_stat_64 sb;
    int rc = nfs_stat64(fs->nfs, path, &sb);

    if (rc < 0)
        return cthon_nfs_err(fs, rc);
    cthon_nfs_fill(st, &sb);
    return 0;
}

static int cthon_nfs_lstat(cthon_fs *fs, const char *path, cthon_stat *st)
{
    struct nfs_stat_64 sb;
    int rc = nfs_lstat64(fs->nfs, path, &sb);

    if (rc < 0)
        return cthon_nfs_err(fs, rc);
    cthon_nfs_fill(st, &sb);
    return 0;
}

static int cthon_nfs_chmod(cthon_fs *fs, const char *path, unsigned mode)
{
    int rc = nfs_chmod(fs->nfs, path, (int)mode);

    return rc < 0 ? cthon_nfs_err(fs, rc) : 0;
}

static int cthon_nfs_link(cthon_fs *fs, const char *oldpath, const char *newpath)
{
    int rc = nfs_link(fs->nfs, oldpath, newpath);

    return rc < 0 ? cthon_nfs_err(fs, rc) : 0;
}

static int cthon_nfs_rename(cthon_fs *fs, const char *oldpath, const char *newpath)
{
    int rc = nfs_rename(fs->nfs, oldpath, newpath);

    return rc < 0 ? cthon_nfs_err(fs, rc) : 0;
}

static int cthon_nfs_symlink(cthon_fs *fs, const char *target, const char *path)
{
    int rc = nfs_symlink(fs->nfs, target, path);

    return rc < 0 ? cthon_nfs_err(fs, rc) : 0;
}

static ssize_t cthon_nfs_readlink(cthon_fs *fs, const char *path, char *buf, size_t size)
{
    char *target = NULL;
    size_t len;
    int rc = nfs_readlink2(fs->nfs, path, &target);

    if (rc < 0)
        return cthon_nfs_err(fs, rc);
    len = strlen(target);
    if (len >= size) {
        free(target);
        return -ENAMETOOLONG;
    }
    memcpy(buf, target, len + 1);
    free(target);
    return (ssize_t)len;
}

static int cthon_nfs_opendir(cthon_fs *fs, const char *path, cthon_dir **d)
{
    cthon_dir *nd = malloc(sizeof *nd);
    int rc;

    if (!nd)
        return -ENOMEM;
    rc = nfs_opendir(fs->nfs, path, &nd->dir);
    if (rc < 0) {
        free(nd);
        return cthon_nfs_err(fs, rc);
    }
    *d = nd;
    return 0;
}

static int cthon_nfs_readdir(cthon_fs *fs, cthon_dir *d, const char **name)
{
    /* libnfs reads the whole directory in opendir: no errors here. */
    struct nfsdirent *de = nfs_readdir(fs->nfs, d->dir);

    if (!de)
        return 0;
    *name = de->name;
    return 1;
}

static void cthon_nfs_closedir(cthon_fs *fs, cthon_dir *d)
{
    nfs_closedir(fs->nfs, d->dir);
    free(d);
}

static int cthon_nfs_statfs(cthon_fs *fs, const char *path, cthon_statfs *sf)
{
    struct statvfs sv;
    int rc = nfs_statvfs(fs->nfs, path, &sv);

    if (rc < 0)
        return cthon_nfs_err(fs, rc);
    sf->bsize = sv.f_frsize ? sv.f_frsize : sv.f_bsize;
    sf->blocks = sv.f_blocks;
    sf->bfree = sv.f_bfree;
    sf->bavail = sv.f_bavail;
    sf->files = sv.f_files;
    sf->ffree = sv.f_ffree;
    return 0;
}

static void cthon_fh_free(cthon_fh *fh)
{
    free(fh->val);
    fh->val = NULL;
    fh->len = 0;
}

/* Copy len bytes of a handle into *fh. Returns 0 or -ENOMEM. */
static int cthon_fh_set(cthon_fh *fh, const char *val, uint32_t len)
{
    char *copy = malloc(len ? len : 1);

    if (!copy)
        return -ENOMEM;
    memcpy(copy, val, len);
    free(fh->val);
    fh->val = copy;
    fh->len = len;
    return 0;
}

static int cthon_nfs_chdir(cthon_fs *fs, const char *path)
{
    int rc = nfs_chdir(fs->nfs, path);

    if (rc < 0)
        return cthon_nfs_err(fs, rc);
    cthon_fh_free(&fs->cwd);
    return 0;
}

/* ---- raw calls for the getcwd walk ---- */

/* The state of one raw call in flight. */
typedef struct cthon_call {
    bool done;
    int status;  /* RPC_STATUS_* */
    int nfsstat; /* NFS3_OK, ... or a mountstat3 */
    cthon_fh fh; /* LOOKUP, MNT: the handle returned */
    bool have_ino;
    uint64_t ino; /* LOOKUP, GETATTR: the object's fileid */
    int err;      /* -ENOMEM while copying */
} cthon_call;

/* Run rpc's event loop until call->done. Returns 0 or -errno. */
static int cthon_rpc_wait(cthon_fs *fs, struct rpc_context *rpc, cthon_call *call)
{
    while (!call->done) {
        struct pollfd pfd = {.fd = rpc_get_fd(rpc), .events = (short)rpc_which_events(rpc)};
        int rc = poll(&pfd, 1, fs->timeout_ms > 0 ? fs->timeout_ms : -1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return -errno;
        if (rc == 0) {
            snprintf(fs->err, sizeof fs->err, "no reply within %d ms", fs->timeout_ms);
            return -ETIMEDOUT;
        }
        if (rpc_service(rpc, pfd.revents) < 0) {
            snprintf(fs->err, sizeof fs->err, "RPC connection failed: %s", rpc_get_error(rpc));
            return -EIO;
        }
    }
    if (call->status != RPC_STATUS_SUCCESS) {
        snprintf(fs->err, sizeof fs->err, "RPC failed (status %d): %s", call->status,
                 rpc_get_error(rpc));
        return -EIO;
    }
    return call->err;
}

static void cthon_connect_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
    cthon_call *call = priv;

    (void)rpc;
    (void)data;
    call->status = status;
    call->done = true;
}

static void cthon_mnt_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
    cthon_call *call = priv;
    mountres3 *res = data;

    (void)rpc;
    call->status = status;
    call->done = true;
    if (status != RPC_STATUS_SUCCESS)
        return;
    call->nfsstat = (int)res->fhs_status;
    if (res->fhs_status == MNT3_OK)
        call->err = cthon_fh_set(&call->fh, res->mountres3_u.mountinfo.fhandle.fhandle3_val,
                                 res->mountres3_u.mountinfo.fhandle.fhandle3_len);
}

static void cthon_lookup_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
    cthon_call *call = priv;
    LOOKUP3res *res = data;

    (void)rpc;
    call->status = status;
    call->done = true;
    if (status != RPC_STATUS_SUCCESS)
        return;
    call->nfsstat = (int)res->status;
    if (res->status != NFS3_OK)
        return;
    call->err = cthon_fh_set(&call->fh, res->LOOKUP3res_u.resok.object.data.data_val,
                             res->LOOKUP3res_u.resok.object.data.data_len);
    if (res->LOOKUP3res_u.resok.obj_attributes.attributes_follow) {
        call->have_ino = true;
        call->ino = res->LOOKUP3res_u.resok.obj_attributes.post_op_attr_u.attributes.fileid;
    }
}

static void cthon_getattr_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
    cthon_call *call = priv;
    GETATTR3res *res = data;

    (void)rpc;
    call->status = status;
    call->done = true;
    if (status != RPC_STATUS_SUCCESS)
        return;
    call->nfsstat = (int)res->status;
    if (res->status == NFS3_OK) {
        call->have_ino = true;
        call->ino = res->GETATTR3res_u.resok.obj_attributes.fileid;
    }
}

/* An NFS status as a negative errno (the few the walk can meet). */
static int cthon_nfsstat_errno(int st)
{
    switch (st) {
    case NFS3ERR_NOENT:
        return -ENOENT;
    case NFS3ERR_ACCES:
        return -EACCES;
    case NFS3ERR_NOTDIR:
        return -ENOTDIR;
    case NFS3ERR_STALE:
        return -ESTALE;
    case NFS3ERR_BADHANDLE:
        return -EBADF;
    case NFS3ERR_JUKEBOX:
        return -EAGAIN;
    default:
        return -EIO;
    }
}

/* GETATTR: the fileid of fh. Returns 0 or -errno. */
static int cthon_raw_getattr(cthon_fs *fs, const cthon_fh *fh, uint64_t *ino)
{
    struct rpc_context *rpc = nfs_get_rpc_context(fs->nfs);
    cthon_call call = {0};
    GETATTR3args args = {0};
    int rc;

    args.object.data.data_len = fh->len;
    args.object.data.data_val = fh->val;
    if (rpc_nfs3_getattr_async(rpc, cthon_getattr_cb, &args, &call) != 0) {
        snprintf(fs->err, sizeof fs->err, "cannot send GETATTR: %s", rpc_get_error(rpc));
        return -EIO;
    }
    rc = cthon_rpc_wait(fs, rpc, &call);
    if (rc == 0 && call.nfsstat != NFS3_OK) {
        snprintf(fs->err, sizeof fs->err, "GETATTR answered NFS status %d", call.nfsstat);
        rc = cthon_nfsstat_errno(call.nfsstat);
    }
    if (rc == 0)
        *ino = call.ino;
    return rc;
}

/* LOOKUP name in dir: its handle (into *out) and fileid. Returns 0 or -errno. */
static int cthon_raw_lookup(cthon_fs *fs, const cthon_fh *dir, const char *name, cthon_fh *out,
                            uint64_t *ino)
{
    struct rpc_context *rpc = nfs_get_rpc_context(fs->nfs);
    cthon_call call = {0};
    LOOKUP3args args = {0};
    int rc;

    args.what.dir.data.data_len = dir->len;
    args.what.dir.data.data_val = dir->val;
    args.what.name = (char *)name;
    if (rpc_nfs3_lookup_async(rpc, cthon_lookup_cb, &args, &call) != 0) {
        snprintf(fs->err, sizeof fs->err, "cannot send LOOKUP: %s", rpc_get_error(rpc));
        return -EIO;
    }
    rc = cthon_rpc_wait(fs, rpc, &call);
    if (rc == 0 && call.nfsstat != NFS3_OK) {
        snprintf(fs->err, sizeof fs->err, "LOOKUP \"%s\" answered NFS status %d", name,
                 call.nfsstat);
        rc = cthon_nfsstat_errno(call.nfsstat);
    }
    /* Attributes are optional in a LOOKUP reply: ask when they are missing. */
    if (rc == 0 && !call.have_ino)
        rc = cthon_raw_getattr(fs, &call.fh, &call.ino);
    if (rc == 0) {
        cthon_fh_free(out);
        *out = call.fh;
        *ino = call.ino;
        return 0;
    }
    cthon_fh_free(&call.fh);
    return rc;
}

/* Get the export's root handle with a MOUNT call of our own. */
static int cthon_raw_mount(cthon_fs *fs)
{
    struct rpc_context *rpc = rpc_init_context();
    cthon_call call = {0};
    int rc;

    if (!rpc)
        return -ENOMEM;
    if (fs->mountport > 0)
        rc = rpc_connect_port_async(rpc, fs->server, fs->mountport, MOUNT_PROGRAM, MOUNT_V3,
                                    cthon_connect_cb, &call);
    else
        rc = rpc_connect_program_async(rpc, fs->server, MOUNT_PROGRAM, MOUNT_V3, cthon_connect_cb,
                                       &call);
    if (rc != 0) {
        snprintf(fs->err, sizeof fs->err, "cannot connect to MOUNT: %s", rpc_get_error(rpc));
        rc = -EIO;
        goto out;
    }
    rc = cthon_rpc_wait(fs, rpc, &call);
    if (rc < 0)
        goto out;
    memset(&call, 0, sizeof call);
    if (rpc_mount3_mnt_async(rpc, cthon_mnt_cb, fs->export, &call) != 0) {
        snprintf(fs->err, sizeof fs->err, "cannot send MNT: %s", rpc_get_error(rpc));
        rc = -EIO;
        goto out;
    }
    rc = cthon_rpc_wait(fs, rpc, &call);
    if (rc == 0 && call.nfsstat != MNT3_OK) {
        snprintf(fs->err, sizeof fs->err, "MNT %s answered mount status %d", fs->export,
                 call.nfsstat);
        rc = -EACCES;
    }
    if (rc == 0) {
        fs->root = call.fh;
        call.fh.val = NULL;
        rc = cthon_raw_getattr(fs, &fs->root, &fs->root_ino);
        if (rc < 0)
            cthon_fh_free(&fs->root);
    }
out:
    cthon_fh_free(&call.fh);
    rpc_destroy_context(rpc);
    return rc;
}

/* Resolve the working directory's handle by LOOKUPs from the root. */
static int cthon_resolve_cwd(cthon_fs *fs)
{
    const char *cwd = NULL;
    char *path, *comp, *save = NULL;
    int rc = 0;

    nfs_getcwd(fs->nfs, &cwd);
    path = strdup(cwd ? cwd : "/");
    if (!path)
        return -ENOMEM;
    rc = cthon_fh_set(&fs->cwd, fs->root.val, fs->root.len);
    fs->cwd_ino = fs->root_ino;
    for (comp = strtok_r(path, "/", &save); comp && rc == 0; comp = strtok_r(NULL, "/", &save))
        rc = cthon_raw_lookup(fs, &fs->cwd, comp, &fs->cwd, &fs->cwd_ino);
    free(path);
    if (rc < 0)
        cthon_fh_free(&fs->cwd);
    return rc;
}

static int cthon_nfs_walkup(cthon_fs *fs, uint64_t ino[CTHON_WALK_MAX + 1], unsigned *n)
{
    cthon_fh cur = {0};
    uint64_t cur_ino;
    int rc;

    *n = 0;
    if (fs->root.len == 0 && (rc = cthon_raw_mount(fs)) < 0)
        return rc;
    if (fs->cwd.len == 0 && (rc = cthon_resolve_cwd(fs)) < 0)
        return rc;
    rc = cthon_fh_set(&cur, fs->cwd.val, fs->cwd.len);
    cur_ino = fs->cwd_ino;
    while (rc == 0) {
        ino[(*n)++] = cur_ino;
        if (cur_ino == fs->root_ino)
            break;
        if (*n > CTHON_WALK_MAX) {
            snprintf(fs->err, sizeof fs->err, "root not reached after %u lookups of \"..\"",
                     CTHON_WALK_MAX);
            rc = -ELOOP;
            break;
        }
        rc = cthon_raw_lookup(fs, &cur, "..", &cur, &cur_ino);
    }
    cthon_fh_free(&cur);
    return rc;
}

static const char *cthon_nfs_strerror(cthon_fs *fs)
{
    return fs->err;
}

static void cthon_nfs_destroy(cthon_fs *fs)
{
    if (fs->nfs)
        nfs_destroy_context(fs->nfs);
    cthon_fh_free(&fs->root);
    cthon_fh_free(&fs->cwd);
    free(fs->server);
    free(fs->export);
    free(fs);
}

static const cthon_ops cthon_nfs_ops = {
    .name = "libnfs",
    .mkdir = cthon_nfs_mkdir,
    .rmdir = cthon_nfs_rmdir,
    .open = cthon_nfs_open_file,
    .write = cthon_nfs_write,
    .read = cthon_nfs_read,
    .close = cthon_nfs_close,
    .unlink = cthon_nfs_unlink,
    .stat = cthon_nfs_stat,
    .lstat = cthon_nfs_lstat,
    .chmod = cthon_nfs_chmod,
    .link = cthon_nfs_link,
    .rename = cthon_nfs_rename,
    .symlink = cthon_nfs_symlink,
    .readlink = cthon_nfs_readlink,
    .opendir = cthon_nfs_opendir,
    .readdir = cthon_nfs_readdir,
    .closedir = cthon_nfs_closedir,
    .statfs = cthon_nfs_statfs,
    .chdir = cthon_nfs_chdir,
    .walkup = cthon_nfs_walkup,
    .strerror = cthon_nfs_strerror,
    .destroy = cthon_nfs_destroy,
};

/* The value of "mountport=N" in the URL's query, or 0. */
static int cthon_url_mountport(const char *url)
{
    const char *q = strchr(url, '?');

    while (q) {
        q++;
        if (strncmp(q, "mountport=", 10) == 0)
            return atoi(q + 10);
        q = strchr(q, '&');
    }
    return 0;
}

int cthon_nfs_open(const char *url, int timeout_ms, cthon_fs **fsp, const cthon_ops **ops,
                   char *err, size_t err_size)
{
    struct nfs_url *u = NULL;
    cthon_fs *fs = calloc(1, sizeof *fs);
    int rc;

    if (!fs) {
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    fs->timeout_ms = timeout_ms;
    fs->mountport = cthon_url_mountport(url);
    fs->nfs = nfs_init_context();
    if (!fs->nfs) {
        snprintf(err, err_size, "cannot create a libnfs context");
        rc = -ENOMEM;
        goto err;
    }
    u = nfs_parse_url_dir(fs->nfs, url);
    if (!u) {
        snprintf(err, err_size, "%s: bad NFS URL: %s", url, nfs_get_error(fs->nfs));
        rc = -EINVAL;
        goto err;
    }
    /* After the URL: its options must not switch the caches back on. */
    nfs_set_dircache(fs->nfs, 0);
    nfs_set_pagecache(fs->nfs, 0);
    nfs_set_readahead(fs->nfs, 0);
    if (timeout_ms > 0)
        nfs_set_timeout(fs->nfs, timeout_ms);
    fs->server = strdup(u->server);
    fs->export = strdup(u->path);
    if (!fs->server || !fs->export) {
        snprintf(err, err_size, "out of memory");
        rc = -ENOMEM;
        goto err;
    }
    rc = nfs_mount(fs->nfs, u->server, u->path);
    if (rc < 0) {
        snprintf(err, err_size, "cannot mount %s:%s: %s", u->server, u->path,
                 nfs_get_error(fs->nfs));
        goto err;
    }
    nfs_destroy_url(u);
    *fsp = fs;
    *ops = &cthon_nfs_ops;
    return 0;
err:
    if (u)
        nfs_destroy_url(u);
    cthon_nfs_destroy(fs);
    return rc;
}
