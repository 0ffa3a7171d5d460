/*
 * cthon_path.c -- the POSIX front end of the Connectathon suite: the
 * operations of cthon.h as system calls under a directory (a mounted NFS
 * file system, or a local directory as a control).
 *
 * NOTES
 *   The working directory is a descriptor held in the cthon_fs, and every
 *   call is relative to it (mkdirat, openat, ...): the process's own
 *   working directory is never changed. The root of the getcwd walk is the
 *   directory given to cthon_path_open().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cthon.h"

struct cthon_fs {
    int cwd;        /* the working directory */
    dev_t root_dev; /* the root of the walk */
    ino_t root_ino;
};

struct cthon_file {
    int fd;
    bool written;
};

struct cthon_dir {
    DIR *dir;
};

static int cthon_path_mkdir(cthon_fs *fs, const char *path, unsigned mode)
{
    return mkdirat(fs->cwd, path, mode) < 0 ? -errno : 0;
}

static int cthon_path_rmdir(cthon_fs *fs, const char *path)
{
    return unlinkat(fs->cwd, path, AT_REMOVEDIR) < 0 ? -errno : 0;
}

static int cthon_path_open_file(cthon_fs *fs, const char *path, int flags, unsigned mode,
                                cthon_file **f)
{
    int oflags = (flags & CTHON_O_WRITE) ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY;
    cthon_file *nf = malloc(sizeof *nf);

    if (!nf)
        return -ENOMEM;
    nf->fd = openat(fs->cwd, path, oflags | O_CLOEXEC, mode);
    if (nf->fd < 0) {
        int err = errno;
        free(nf);
        return -err;
    }
    nf->written = false;
    *f = nf;
    return 0;
}

static ssize_t cthon_path_write(cthon_fs *fs, cthon_file *f, const void *buf, size_t n)
{
    size_t done = 0;

    (void)fs;
    f->written = true;
    while (done < n) {
        ssize_t w = write(f->fd, (const char *)buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        if (w == 0)
            break;
        done += (size_t)w;
    }
    return (ssize_t)done;
}

static ssize_t cthon_path_read(cthon_fs *fs, cthon_file *f, void *buf, size_t n)
{
    size_t done = 0;

    (void)fs;
    while (done < n) {
        ssize_t r = read(f->fd, (char *)buf + done, n - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (ssize_t)done;
}

static int cthon_path_close(cthon_fs *fs, cthon_file *f)
{
    int rc = 0;

    (void)fs;
    /* close() itself reports a failed flush on an NFS mount. */
    if (close(f->fd) < 0)
        rc = -errno;
    free(f);
    return rc;
}

static int cthon_path_unlink(cthon_fs *fs, const char *path)
{
    return unlinkat(fs->cwd, path, 0) < 0 ? -errno : 0;
}

static void cthon_path_fill(cthon_stat *st, const struct stat *sb)
{
    st->ino = sb->st_ino;
    st->mode = sb->st_mode;
    st->nlink = (uint32_t)sb->st_nlink;
    st->size = (uint64_t)sb->st_size;
}

static int cthon_path_stat(cthon_fs *fs, const char *path, cthon_stat *st)
{
    struct stat sb;

    if (fstatat(fs->cwd, path, &sb, 0) < 0)
        return -errno;
    cthon_path_fill(st, &sb);
    return 0;
}

static int cthon_path_lstat(cthon_fs *fs, const char *path, cthon_stat *st)
{
    struct stat sb;

    if (fstatat(fs->cwd, path, &sb, AT_SYMLINK_NOFOLLOW) < 0)
        return -errno;
    cthon_path_fill(st, &sb);
    return 0;
}

static int cthon_path_chmod(cthon_fs *fs, const char *path, unsigned mode)
{
    return fchmodat(fs->cwd, path, mode, 0) < 0 ? -errno : 0;
}

static int cthon_path_link(cthon_fs *fs, const char *oldpath, const char *newpath)
{
    return linkat(fs->cwd, oldpath, fs->cwd, newpath, 0) < 0 ? -errno : 0;
}

static int cthon_path_rename(cthon_fs *fs, const char *oldpath, const char *newpath)
{
    return renameat(fs->cwd, oldpath, fs->cwd, newpath) < 0 ? -errno : 0;
}

static int cthon_path_symlink(cthon_fs *fs, const char *target, const char *path)
{
    return symlinkat(target, fs->cwd, path) < 0 ? -errno : 0;
}

static ssize_t cthon_path_readlink(cthon_fs *fs, const char *path, char *buf, size_t size)
{
    ssize_t n = readlinkat(fs->cwd, path, buf, size);

    if (n < 0)
        return -errno;
    if ((size_t)n >= size)
        return -ENAMETOOLONG;
    buf[n] = '\0';
    return n;
}

static int cthon_path_opendir(cthon_fs *fs, const char *path, cthon_dir **d)
{
    cthon_dir *nd = malloc(sizeof *nd);
    int fd, err;

    if (!nd)
        return -ENOMEM;
    fd = openat(fs->cwd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        goto err;
    nd->dir = fdopendir(fd);
    if (!nd->dir) {
        err = errno;
        close(fd);
        errno = err;
        goto err;
    }
    *d = nd;
    return 0;
err:
    err = errno;
    free(nd);
    return -err;
}

static int cthon_path_readdir(cthon_fs *fs, cthon_dir *d, const char **name)
{
    struct dirent *de;

    (void)fs;
    errno = 0;
    de = readdir(d->dir);
    if (!de)
        return errno ? -errno : 0;
    *name = de->d_name;
    return 1;
}

static void cthon_path_closedir(cthon_fs *fs, cthon_dir *d)
{
    (void)fs;
    closedir(d->dir);
    free(d);
}

static int cthon_path_statfs(cthon_fs *fs, const char *path, cthon_statfs *sf)
{
    struct statvfs sv;
    int fd = openat(fs->cwd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = 0;

    if (fd < 0)
        return -errno;
    if (fstatvfs(fd, &sv) < 0)
        rc = -errno;
    close(fd);
    if (rc < 0)
        return rc;
    sf->bsize = sv.f_frsize ? sv.f_frsize : sv.f_bsize;
    sf->blocks = sv.f_blocks;
    sf->bfree = sv.f_bfree;
    sf->bavail = sv.f_bavail;
    sf->files = sv.f_files;
    sf->ffree = sv.f_ffree;
    return 0;
}

static int cthon_path_chdir(cthon_fs *fs, const char *path)
{
    int fd = openat(fs->cwd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0)
        return -errno;
    close(fs->cwd);
    fs->cwd = fd;
    return 0;
}

static int cthon_path_walkup(cthon_fs *fs, uint64_t ino[CTHON_WALK_MAX + 1], unsigned *n)
{
    struct stat sb;
    int fd = openat(fs->cwd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    int rc = 0;

    *n = 0;
    if (fd < 0)
        return -errno;
    for (;;) {
        if (fstat(fd, &sb) < 0) {
            rc = -errno;
            break;
        }
        ino[(*n)++] = sb.st_ino;
        if (sb.st_dev == fs->root_dev && sb.st_ino == fs->root_ino)
            break;
        if (*n > CTHON_WALK_MAX) {
            rc = -ELOOP;
            break;
        }
        int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (up < 0) {
            rc = -errno;
            break;
        }
        close(fd);
        fd = up;
    }
    close(fd);
    return rc;
}

static const char *cthon_path_strerror(cthon_fs *fs)
{
    (void)fs;
    return "";
}

static void cthon_path_destroy(cthon_fs *fs)
{
    if (fs->cwd >= 0)
        close(fs->cwd);
    free(fs);
}

static const cthon_ops cthon_path_ops = {
    .name = "path",
    .mkdir = cthon_path_mkdir,
    .rmdir = cthon_path_rmdir,
    .open = cthon_path_open_file,
    .write = cthon_path_write,
    .read = cthon_path_read,
    .close = cthon_path_close,
    .unlink = cthon_path_unlink,
    .stat = cthon_path_stat,
    .lstat = cthon_path_lstat,
    .chmod = cthon_path_chmod,
    .link = cthon_path_link,
    .rename = cthon_path_rename,
    .symlink = cthon_path_symlink,
    .readlink = cthon_path_readlink,
    .opendir = cthon_path_opendir,
    .readdir = cthon_path_readdir,
    .closedir = cthon_path_closedir,
    .statfs = cthon_path_statfs,
    .chdir = cthon_path_chdir,
    .walkup = cthon_path_walkup,
    .strerror = cthon_path_strerror,
    .destroy = cthon_path_destroy,
};

int cthon_path_open(const char *dir, cthon_fs **fsp, const cthon_ops **ops, char *err,
                    size_t err_size)
{
    struct stat sb;
    cthon_fs *fs = malloc(sizeof *fs);
    int rc;

    if (!fs) {
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    fs->cwd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fs->cwd < 0 || fstat(fs->cwd, &sb) < 0) {
        rc = -errno;
        snprintf(err, err_size, "%s: %s", dir, strerror(-rc));
        if (fs->cwd >= 0)
            close(fs->cwd);
        free(fs);
        return rc;
    }
    fs->root_dev = sb.st_dev;
    fs->root_ino = sb.st_ino;
    *fsp = fs;
    *ops = &cthon_path_ops;
    return 0;
}
