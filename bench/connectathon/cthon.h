/*
 * cthon.h -- the Connectathon basic tests: one test body over an operations
 * vector, with two front ends (libnfs, POSIX path calls).
 *
 * The nine basic tests (with their classic default parameters):
 *   1   create a tree LEVELS deep, FILES files and DIRS directories per level
 *   2   remove that tree
 *   3   LOOKUPS getcwd-style walks up to the root, and as many stats
 *   4   ATTR_FILES files, ATTR_COUNT rounds of chmod + stat each
 *   4a  ATTR_FILES files, ATTR_COUNT rounds of lookup + getattr each
 *   5a  write an IO_SIZE-byte file IO_COUNT times
 *   5b  read it IO_COUNT times, verifying every byte
 *   6   READDIR_FILES files, the directory read READDIR_COUNT times
 *   7   LINK_FILES files, LINK_COUNT rounds of rename + link each
 *   8   SYMLINK_FILES files, SYMLINK_COUNT rounds of symlink + readlink each
 *   9   STATFS_COUNT statfs calls
 *
 * NOTES
 *   Every operation of the vector returns 0 (or a byte count) on success and
 *   a negative errno on failure; after a failure ops->strerror() may add
 *   the front end's own detail (libnfs's error string). Paths given to the
 *   operations are relative to the front end's working directory, which
 *   only ops->chdir() changes; names never contain "..", except that
 *   ops->chdir(fs, "..") goes one level up.
 *
 *   Memory: a cthon_fs is owned by whoever called the front end's
 *   constructor and is released with ops->destroy(). Open files and
 *   directories belong to the caller until ops->close()/ops->closedir().
 *   Strings returned by ops->readdir() and ops->strerror() are owned by the
 *   front end and valid until the next call on the same object.
 *
 *   Threads: none. A cthon_fs is used by one thread.
 */
#ifndef PGNFS_CTHON_H
#define PGNFS_CTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Attributes the tests look at (stat or lstat). */
typedef struct cthon_stat {
    uint64_t ino;
    uint32_t mode; /* file type bits and permission bits, as in st_mode */
    uint32_t nlink;
    uint64_t size;
} cthon_stat;

/* What statfs reports, in bytes and file slots. */
typedef struct cthon_statfs {
    uint64_t bsize;
    uint64_t blocks, bfree, bavail;
    uint64_t files, ffree;
} cthon_statfs;

typedef struct cthon_fs cthon_fs;     /* a front end's state */
typedef struct cthon_file cthon_file; /* an open file */
typedef struct cthon_dir cthon_dir;   /* an open directory */

/* Flags for ops->open(). */
#define CTHON_O_READ  0x1 /* open an existing file for reading */
#define CTHON_O_WRITE 0x2 /* create or truncate, open for writing */

/* Largest number of levels ops->walkup() reports. */
#define CTHON_WALK_MAX 64

typedef struct cthon_ops {
    const char *name; /* "libnfs" or "path" */
    int (*mkdir)(cthon_fs *fs, const char *path, unsigned mode);
    int (*rmdir)(cthon_fs *fs, const char *path);
    /* Open a file; with CTHON_O_WRITE create it (mode) or truncate it. */
    int (*open)(cthon_fs *fs, const char *path, int flags, unsigned mode, cthon_file **f);
    /* Write or read n bytes at the file position: the count moved, or -errno. */
    ssize_t (*write)(cthon_fs *fs, cthon_file *f, const void *buf, size_t n);
    ssize_t (*read)(cthon_fs *fs, cthon_file *f, void *buf, size_t n);
    /* Close (a file written to is flushed and committed first, as a kernel
     * NFS client does on close). f is freed even when an error is returned. */
    int (*close)(cthon_fs *fs, cthon_file *f);
    int (*unlink)(cthon_fs *fs, const char *path);
    int (*stat)(cthon_fs *fs, const char *path, cthon_stat *st);
    int (*lstat)(cthon_fs *fs, const char *path, cthon_stat *st);
    int (*chmod)(cthon_fs *fs, const char *path, unsigned mode);
    int (*link)(cthon_fs *fs, const char *oldpath, const char *newpath);
    int (*rename)(cthon_fs *fs, const char *oldpath, const char *newpath);
    int (*symlink)(cthon_fs *fs, const char *target, const char *path);
    /* The link's target, NUL-terminated, into buf: its length, or -errno
     * (-ENAMETOOLONG when it does not fit). */
    ssize_t (*readlink)(cthon_fs *fs, const char *path, char *buf, size_t size);
    int (*opendir)(cthon_fs *fs, const char *path, cthon_dir **d);
    /* The next entry: 1 and *name set, 0 at the end, or -errno. */
    int (*readdir)(cthon_fs *fs, cthon_dir *d, const char **name);
    void (*closedir)(cthon_fs *fs, cthon_dir *d);
    int (*statfs)(cthon_fs *fs, const char *path, cthon_statfs *sf);
    /* Change the working directory to path (a name, or ".."). */
    int (*chdir)(cthon_fs *fs, const char *path);
    /*
     * The getcwd walk: from the working directory, look up ".." level by
     * level until the front end's root. ino[0] is the working directory,
     * ino[i] the directory reached after i lookups of ".."; *n is the count
     * of entries (levels + 1). -ELOOP when the root is not reached within
     * CTHON_WALK_MAX levels.
     */
    int (*walkup)(cthon_fs *fs, uint64_t ino[CTHON_WALK_MAX + 1], unsigned *n);
    /* The front end's detail about the last failure, or "" (never NULL). */
    const char *(*strerror)(cthon_fs *fs);
    /* Release everything; fs is invalid afterwards. */
    void (*destroy)(cthon_fs *fs);
} cthon_ops;

/*
 * cthon_path_open -- the POSIX front end, rooted at directory dir (a local
 * directory or a mounted NFS file system). Returns 0 and sets *fs and *ops,
 * or -errno with a message in err (err_size bytes).
 */
int cthon_path_open(const char *dir, cthon_fs **fs, const cthon_ops **ops, char *err,
                    size_t err_size);

/*
 * cthon_nfs_open -- the libnfs front end: mount the export of an
 * "nfs://host[:port]/export[?options]" URL with libnfs's synchronous API,
 * with libnfs's directory cache, page cache and read-ahead off so every
 * operation reaches the server. timeout_ms bounds each call (0: none).
 * Returns 0 and sets *fs and *ops, or -errno with a message in err.
 */
int cthon_nfs_open(const char *url, int timeout_ms, cthon_fs **fs, const cthon_ops **ops, char *err,
                   size_t err_size);

/* The parameters of a run (see cthon_params_default()). */
typedef struct cthon_params {
    unsigned levels, files, dirs;          /* tests 1, 2 */
    unsigned lookups;                      /* test 3 */
    unsigned attr_files, attr_count;       /* tests 4, 4a */
    uint64_t io_size;                      /* tests 5a, 5b */
    unsigned io_count, bufsize;            /* tests 5a, 5b */
    unsigned readdir_files, readdir_count; /* test 6 */
    unsigned link_files, link_count;       /* test 7 */
    unsigned symlink_files, symlink_count; /* test 8 */
    unsigned statfs_count;                 /* test 9 */
} cthon_params;

/* cthon_params_default -- the classic Connectathon defaults, or with quick
 * the small counts of a CI smoke run. Cannot fail. */
void cthon_params_default(cthon_params *p, bool quick);

/* What running a test needs and leaves behind. */
typedef struct cthon_run {
    cthon_fs *fs;
    const cthon_ops *ops;
    const cthon_params *p;
    unsigned depth;      /* levels of the working directory below the root */
    bool tree_exists;    /* test 1's tree is present (test 2 removes it) */
    bool bigfile_exists; /* test 5a's file is present (test 5b reads it) */
    char errmsg[1024];   /* why the last test failed */
} cthon_run;

/* One test of the suite. */
typedef struct cthon_test {
    const char *id;   /* "1", "4a", ... */
    const char *name; /* "create tree", ... */
    /* Run it: 0, or -1 with run->errmsg set. */
    int (*run)(cthon_run *run, char *summary, size_t summary_size);
} cthon_test;

/* The tests in their classic order (cthon_ntests of them). */
extern const cthon_test cthon_tests[];
extern const size_t cthon_ntests;

/*
 * cthon_rmtree -- remove path (a file or a whole directory tree) below the
 * working directory through the vector. Returns 0 or -errno (an entry that
 * could not be removed); ENOENT for path itself is not an error.
 */
int cthon_rmtree(cthon_run *run, const char *path);

#endif
