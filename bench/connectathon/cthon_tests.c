/*
 * cthon_tests.c -- the bodies of the nine Connectathon basic tests, written
 * once over the operations vector of cthon.h.
 *
 * Each test works in the run's working directory (the fresh test directory
 * the driver made), checks the result of every operation and what the file
 * system reports afterwards, and leaves the directory as it found it, except
 * test 1 (its tree stays for test 2) and test 5a (its file stays for 5b).
 *
 * NOTES
 *   A failed check returns -1 with run->errmsg naming the file, the check
 *   and what was expected and seen; the driver prefixes the test's name.
 *   What a test left behind after a failure is removed by the driver (it
 *   removes the whole test directory).
 *
 *   Names: test 1 uses file.N and dir.N (as the original); tests 4 to 7 use
 *   file.N (and newfile.N); 5a/5b use bigfile; test 8 uses symlink.N.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cthon.h"

#define CTHON_NAME_MAX 64

/* Record a failed check in run->errmsg; always returns -1. */
static int cthon_fail(cthon_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int cthon_fail(cthon_run *run, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(run->errmsg, sizeof run->errmsg, fmt, ap);
    va_end(ap);
    return -1;
}

/* Record a failed operation (rc is -errno); always returns -1. */
static int cthon_fail_op(cthon_run *run, const char *op, const char *path, int rc)
{
    const char *detail = run->ops->strerror(run->fs);

    return cthon_fail(run, "%s(%s) failed: %s%s%s%s", op, path, strerror(-rc), *detail ? " [" : "",
                      detail, *detail ? "]" : "");
}

/* Like cthon_fail_op() for the two-name operations. */
static int cthon_fail_op2(cthon_run *run, const char *op, const char *a, const char *b, int rc)
{
    char both[2 * CTHON_NAME_MAX + 8];

    snprintf(both, sizeof both, "%s, %s", a, b);
    return cthon_fail_op(run, op, both, rc);
}

/* Names: "file.3" and the like. */
static void cthon_name(char *buf, const char *prefix, unsigned i)
{
    snprintf(buf, CTHON_NAME_MAX, "%s.%u", prefix, i);
}

/* Stat path and check that it is of type `type` (S_IFREG, ...). */
static int cthon_stat_check(cthon_run *run, const char *path, unsigned type, cthon_stat *st)
{
    int rc = run->ops->stat(run->fs, path, st);

    if (rc < 0)
        return cthon_fail_op(run, "stat", path, rc);
    if ((st->mode & S_IFMT) != type)
        return cthon_fail(run, "%s: file type: expected %06o, seen %06o", path, type,
                          st->mode & S_IFMT);
    return 0;
}

/* Check that path does not exist (stat answers ENOENT). */
static int cthon_check_gone(cthon_run *run, const char *path, const char *after)
{
    cthon_stat st;
    int rc = run->ops->stat(run->fs, path, &st);

    if (rc == -ENOENT)
        return 0;
    if (rc == 0)
        return cthon_fail(run, "%s: still exists after %s (stat succeeded, inode %llu)", path,
                          after, (unsigned long long)st.ino);
    return cthon_fail(run, "%s: stat after %s: expected ENOENT, seen %s", path, after,
                      strerror(-rc));
}

/* Create an empty file (open for writing, close). */
static int cthon_creat(cthon_run *run, const char *path, unsigned mode)
{
    cthon_file *f;
    int rc = run->ops->open(run->fs, path, CTHON_O_WRITE, mode, &f);

    if (rc < 0)
        return cthon_fail_op(run, "creat", path, rc);
    rc = run->ops->close(run->fs, f);
    if (rc < 0)
        return cthon_fail_op(run, "close", path, rc);
    return 0;
}

/* Create file.0 .. file.(n-1) (mode 0666). */
static int cthon_make_files(cthon_run *run, const char *prefix, unsigned n)
{
    char name[CTHON_NAME_MAX];

    for (unsigned i = 0; i < n; i++) {
        cthon_name(name, prefix, i);
        if (cthon_creat(run, name, 0666) < 0)
            return -1;
    }
    return 0;
}

/* Remove file.0 .. file.(n-1). */
static int cthon_remove_files(cthon_run *run, const char *prefix, unsigned n)
{
    char name[CTHON_NAME_MAX];

    for (unsigned i = 0; i < n; i++) {
        cthon_name(name, prefix, i);
        int rc = run->ops->unlink(run->fs, name);
        if (rc < 0)
            return cthon_fail_op(run, "unlink", name, rc);
    }
    return 0;
}

static int cthon_chdir(cthon_run *run, const char *path)
{
    int rc = run->ops->chdir(run->fs, path);

    if (rc < 0)
        return cthon_fail_op(run, "chdir", path, rc);
    if (strcmp(path, "..") == 0)
        run->depth--;
    else
        run->depth++;
    return 0;
}

/* ---- tests 1 and 2: the directory tree ---- */

/* Fill the working directory with one level of the tree, then recurse. */
static int cthon_mktree(cthon_run *run, unsigned levels, unsigned *nfiles, unsigned *ndirs)
{
    const cthon_params *p = run->p;
    char name[CTHON_NAME_MAX];

    for (unsigned i = 0; i < p->files; i++) {
        cthon_name(name, "file", i);
        if (cthon_creat(run, name, 0666) < 0)
            return -1;
        (*nfiles)++;
    }
    for (unsigned i = 0; i < p->dirs; i++) {
        cthon_name(name, "dir", i);
        int rc = run->ops->mkdir(run->fs, name, 0777);
        if (rc < 0)
            return cthon_fail_op(run, "mkdir", name, rc);
        (*ndirs)++;
        if (levels > 1) {
            if (cthon_chdir(run, name) < 0)
                return -1;
            if (cthon_mktree(run, levels - 1, nfiles, ndirs) < 0)
                return -1;
            if (cthon_chdir(run, "..") < 0)
                return -1;
        }
    }
    return 0;
}

/* Remove one level of the tree by its known names, recursing first. */
static int cthon_rmtree_level(cthon_run *run, unsigned levels, unsigned *nfiles, unsigned *ndirs)
{
    const cthon_params *p = run->p;
    char name[CTHON_NAME_MAX];
    int rc;

    for (unsigned i = 0; i < p->files; i++) {
        cthon_name(name, "file", i);
        rc = run->ops->unlink(run->fs, name);
        if (rc < 0)
            return cthon_fail_op(run, "unlink", name, rc);
        (*nfiles)++;
    }
    for (unsigned i = 0; i < p->dirs; i++) {
        cthon_name(name, "dir", i);
        if (levels > 1) {
            if (cthon_chdir(run, name) < 0)
                return -1;
            if (cthon_rmtree_level(run, levels - 1, nfiles, ndirs) < 0)
                return -1;
            if (cthon_chdir(run, "..") < 0)
                return -1;
        }
        rc = run->ops->rmdir(run->fs, name);
        if (rc < 0)
            return cthon_fail_op(run, "rmdir", name, rc);
        (*ndirs)++;
    }
    return 0;
}

/* The number of files and directories the tree should have. */
static void cthon_tree_size(const cthon_params *p, unsigned *nfiles, unsigned *ndirs)
{
    unsigned width = 1; /* directories at the current level */

    *nfiles = *ndirs = 0;
    for (unsigned l = 0; l < p->levels; l++) {
        *nfiles += width * p->files;
        width *= p->dirs;
        *ndirs += width;
    }
}

/* Test 1: create the tree, then check its top level is what was made. */
static int cthon_test1(cthon_run *run, char *summary, size_t size)
{
    const cthon_params *p = run->p;
    unsigned nfiles = 0, ndirs = 0, want_files, want_dirs;
    unsigned depth = run->depth;
    cthon_stat st;

    if (p->levels == 0)
        return cthon_fail(run, "levels must be at least 1");
    run->tree_exists = true; /* partly, from now on */
    if (cthon_mktree(run, p->levels, &nfiles, &ndirs) < 0)
        return -1;
    cthon_tree_size(p, &want_files, &want_dirs);
    if (run->depth != depth)
        return cthon_fail(run, "working directory depth after the tree: expected %u, seen %u",
                          depth, run->depth);
    if (nfiles != want_files || ndirs != want_dirs)
        return cthon_fail(run, "tree size: expected %u files and %u directories, made %u and %u",
                          want_files, want_dirs, nfiles, ndirs);
    if (p->files > 0) {
        if (cthon_stat_check(run, "file.0", S_IFREG, &st) < 0)
            return -1;
        if (st.size != 0)
            return cthon_fail(run, "file.0: size: expected 0, seen %llu",
                              (unsigned long long)st.size);
    }
    if (p->dirs > 0 && cthon_stat_check(run, "dir.0", S_IFDIR, &st) < 0)
        return -1;
    snprintf(summary, size, "%u files %u directories %u levels deep", nfiles, ndirs, p->levels);
    return 0;
}

/* Test 2: remove the tree by name, then check the directory is empty. */
static int cthon_test2(cthon_run *run, char *summary, size_t size)
{
    const cthon_params *p = run->p;
    unsigned nfiles = 0, ndirs = 0;
    cthon_dir *d;
    const char *name;
    int rc;

    if (!run->tree_exists)
        return cthon_fail(run, "there is no tree to remove (test 2 needs test 1)");
    if (cthon_rmtree_level(run, p->levels, &nfiles, &ndirs) < 0)
        return -1;
    run->tree_exists = false;
    rc = run->ops->opendir(run->fs, ".", &d);
    if (rc < 0)
        return cthon_fail_op(run, "opendir", ".", rc);
    while ((rc = run->ops->readdir(run->fs, d, &name)) > 0) {
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
            cthon_fail(run, "%s: still listed in the test directory after removing the tree", name);
            run->ops->closedir(run->fs, d);
            return -1;
        }
    }
    run->ops->closedir(run->fs, d);
    if (rc < 0)
        return cthon_fail_op(run, "readdir", ".", rc);
    snprintf(summary, size, "removed %u files %u directories %u levels deep", nfiles, ndirs,
             p->levels);
    return 0;
}

/* ---- test 3: lookups ---- */

static int cthon_test3(cthon_run *run, char *summary, size_t size)
{
    const cthon_params *p = run->p;
    uint64_t want[CTHON_WALK_MAX + 1], seen[CTHON_WALK_MAX + 1];
    char path[3 * CTHON_WALK_MAX + 2];
    unsigned n;
    cthon_stat st;
    int rc;

    if (run->depth > CTHON_WALK_MAX)
        return cthon_fail(run, "working directory is %u levels deep, more than %u", run->depth,
                          CTHON_WALK_MAX);
    /* What the walk should see: ".", "..", "../..", ... up to the root. */
    for (unsigned i = 0; i <= run->depth; i++) {
        if (i == 0) {
            strcpy(path, ".");
        } else {
            path[0] = '\0';
            for (unsigned j = 0; j < i; j++)
                strcat(path, j ? "/.." : "..");
        }
        if (cthon_stat_check(run, path, S_IFDIR, &st) < 0)
            return -1;
        want[i] = st.ino;
    }
    for (unsigned c = 0; c < p->lookups; c++) {
        rc = run->ops->walkup(run->fs, seen, &n);
        if (rc < 0)
            return cthon_fail_op(run, "getcwd walk", ".", rc);
        if (n != run->depth + 1)
            return cthon_fail(run, "getcwd walk %u: levels to the root: expected %u, seen %u", c,
                              run->depth, n - 1);
        for (unsigned i = 0; i < n; i++) {
            if (seen[i] != want[i])
                return cthon_fail(run,
                                  "getcwd walk %u: inode after %u lookups of \"..\": "
                                  "expected %llu, seen %llu",
                                  c, i, (unsigned long long)want[i], (unsigned long long)seen[i]);
        }
        if (cthon_stat_check(run, ".", S_IFDIR, &st) < 0)
            return -1;
        if (st.ino != want[0])
            return cthon_fail(run, "stat(.) %u: inode: expected %llu, seen %llu", c,
                              (unsigned long long)want[0], (unsigned long long)st.ino);
    }
    snprintf(summary, size, "%u getcwd walks (%u levels) and %u stats", p->lookups, run->depth,
             p->lookups);
    return 0;
}

/* ---- tests 4 and 4a: attributes ---- */

/* Test 4: chmod then stat, checking the mode stuck. */
static int cthon_test4(cthon_run *run, char *summary, size_t size)
{
    const cthon_params *p = run->p;
    char name[CTHON_NAME_MAX];
    cthon_stat st;
    int rc;

    if (cthon_make_files(run, "file", p->attr_files) < 0)
        return -1;
    for (unsigned c = 0; c < p->attr_count; c++) {
        /* Alternate so that every round really changes the mode. */
        unsigned mode = (c % 2 == 0) ? 0600 : 0644;
        for (unsigned i = 0; i < p->attr_files; i++) {
            cthon_name(name, "file", i);
            rc = run->ops->chmod(run->fs, name, mode);
            if (rc < 0)
                return cthon_fail_op(run, "chmod", name, rc);
            if (cthon_stat_check(run, name, S_IFREG, &st) < 0)
                return -1;
            if ((st.mode & 07777) != mode)
                return cthon_fail(run, "%s: mode after chmod %04o (round %u): seen %04o", name,
                                  mode, c, st.mode & 07777);
        }
    }
    if (cthon_remove_files(run, "file", p->attr_files) < 0)
        return -1;
    snprintf(summary, size, "%u chmods and stats on %u files", p->attr_files * p->attr_count,
             p->attr_files);
    return 0;
}

/* Test 4a: lookup + getattr by name, checking the file stays the same. */
static int cthon_test4a(cthon_run *run, char *summary, size_t size)
{
    const cthon_params *p = run->p;
    char name[CTHON_NAME_MAX];
    uint64_t *ino;
    cthon_stat st;

    if (cthon_make_files(run, "file", p->attr_files) < 0)
        return -1;
    ino = calloc(p->attr_files ? p->attr_files : 1, sizeof *ino);
    if (!ino)
        return cthon_fail(run, "out of memory");
    for (unsigned c = 0; c < p->attr_count; c++) {
        for (unsigned i = 0; i < p->attr_files; i++) {
            cthon_name(name, "file", i);
            if (cthon_stat_check(run, name, S_IFREG, &st) < 0)
                goto err;
            if (c == 0) {
                ino[i] = st.ino;
            } else if (st.ino != ino[i]) {
                cthon_fail(run, "%s: inode changed between lookups: expected %llu, seen %llu", name,
                           (unsigned long long)ino[i], (unsigned long long)st.ino);
                goto err;
            }
            if (st.size != 0) {
                cthon_fail(run, "%s: size: expected 0, seen %llu", name,
                           (unsigned long long)st.size);
                goto err;
            }
        }
    }
    free(ino);
    if (cthon_remove_files(run, "file", p->attr_files) < 0)
        return -1;
    snprintf(summary, size, "%u lookups and getattrs on %u files", p->attr_files * p->attr_count,
             p->attr_files);
    return 0;
err:
    free(ino);
    return -1;
}

/* ---- tests 5a and 5b: write and read ---- */

/* The byte expected at each offset: a hash of the offset, so that a chunk
 * written or read at the wrong place never matches. */
static void cthon_fill(unsigned char *buf, uint64_t off, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = (off + i) >> 3;
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 29;
        buf[i] = (unsigned char)(x >> (8 * ((off + i) & 7)));
    }
}

static int cthon_test5a(cthon_run *run, char *summary, size_t size)
{
    const cthon_params *p = run->p;
    unsigned char *buf;
    cthon_file *f;
    cthon_stat st;
    int rc;

    if (p->bufsize == 0)
        return cthon_fail(run, "bufsize must be at least 1");
    buf = malloc(p->bufsize);
    if (!buf)
        return cthon_fail(run, "out of memory");
    for (unsigned c = 0; c < p->io_count; c++) {
        rc = run->ops->open(run->fs, "bigfile", CTHON_O_WRITE, 0666, &f);
        if (rc < 0) {
            cthon_fail_op(run, "creat", "bigfile", rc);
            goto err;
        }
        run->bigfile_exists = true;
        for (uint64_t off = 0; off < p->io_size; off += p->bufsize) {
            size_t n = p->io_size - off < p->bufsize ? (size_t)(p->io_size - off) : p->bufsize;
            cthon_fill(buf, off, n);
            ssize_t w = run->ops->write(run->fs, f, buf, n);
            if (w < 0 || (size_t)w != n) {
                if (w < 0)
                    cthon_fail_op(run, "write", "bigfile", (int)w);
                else
                    cthon_fail(run, "bigfile: write at offset %llu: expected %zu bytes, wrote %zd",
                               (unsigned long long)off, n, w);
                run->ops->close(run->fs, f);
                goto err;
            }
        }
        rc = run->ops->close(run->fs, f);
        if (rc < 0) {
            cthon_fail_op(run, "close", "bigfile", rc);
            goto err;
        }
        if (cthon_stat_check(run, "bigfile", S_IFREG, &st) < 0)
            goto err;
        if (st.size != p->io_size) {
            cthon_fail(run, "bigfile: size after write %u: expected %llu, seen %llu", c,
                       (unsigned long long)p->io_size, (unsigned long long)st.size);
            goto err;
        }
    }
    free(buf);
    snprintf(summary, size, "wrote %llu bytes %u times in %u-byte writes",
             (unsigned long long)p->io_size, p->io_count, p->bufsize);
    return 0;
err:
    free(buf);
    return -1;
}

static int cthon_test5b(cthon_run *run, char *summary, size_t size)
{
    const cthon_params *p = run->p;
    unsigned char *buf = NULL, *want = NULL;
    cthon_file *f;
    int rc;

    if (!run->bigfile_exists)
        return cthon_fail(run, "there is no file to read (test 5b needs test 5a)");
    if (p->bufsize == 0)
        return cthon_fail(run, "bufsize must be at least 1");
    buf = malloc(p->bufsize);
    want = malloc(p->bufsize);
    if (!buf || !want) {
        cthon_fail(run, "out of memory");
        goto err;
    }
    for (unsigned c = 0; c < p->io_count; c++) {
        rc = run->ops->open(run->fs, "bigfile", CTHON_O_READ, 0, &f);
        if (rc < 0) {
            cthon_fail_op(run, "open", "bigfile", rc);
            goto err;
        }
        /* Read to end-of-file: the last read must return 0 at io_size. */
        for (uint64_t off = 0;; off += p->bufsize) {
            size_t n = p->io_size - off < p->bufsize ? (size_t)(p->io_size - off) : p->bufsize;
            ssize_t r = run->ops->read(run->fs, f, buf, p->bufsize);
            if (r < 0) {
                cthon_fail_op(run, "read", "bigfile", (int)r);
                goto err_close;
            }
            if ((size_t)r != n) {
                cthon_fail(run, "bigfile: read %u at offset %llu: expected %zu bytes, got %zd", c,
                           (unsigned long long)off, n, r);
                goto err_close;
            }
            if (n == 0)
                break;
            cthon_fill(want, off, n);
            if (memcmp(buf, want, n) != 0) {
                size_t i = 0;
                while (buf[i] == want[i])
                    i++;
                cthon_fail(run,
                           "bigfile: read %u: byte at offset %llu: expected 0x%02x, seen 0x%02x", c,
                           (unsigned long long)(off + i), want[i], buf[i]);
                goto err_close;
            }
        }
        rc = run->ops->close(run->fs, f);
        if (rc < 0) {
            cthon_fail_op(run, "close", "bigfile", rc);
            goto err;
        }
    }
    rc = run->ops->unlink(run->fs, "bigfile");
    if (rc < 0) {
        cthon_fail_op(run, "unlink", "bigfile", rc);
        goto err;
    }
    run->bigfile_exists = false;
    free(buf);
    free(want);
    snprintf(summary, size, "read %llu bytes %u times in %u-byte reads, all verified",
             (unsigned long long)p->io_size, p->io_count, p->bufsize);
    return 0;
err_close:
    run->ops->close(run->fs, f);
err:
    free(buf);
    free(want);
    return -1;
}

/* ---- test 6: readdir ---- */

/* If name is "file.N" with N < n, return N; else -1. */
static long cthon_file_index(const char *name, unsigned n)
{
    char *end;
    unsigned long i;

    if (strncmp(name, "file.", 5) != 0 || name[5] < '0' || name[5] > '9')
        return -1;
    i = strtoul(name + 5, &end, 10);
    if (*end != '\0' || i >= n || (name[5] == '0' && name[6] != '\0'))
        return -1;
    return (long)i;
}

static int cthon_test6(cthon_run *run, char *summary, size_t size)
{
    const cthon_params *p = run->p;
    unsigned *seen;
    cthon_dir *d;
    const char *name;
    int rc;

    if (cthon_make_files(run, "file", p->readdir_files) < 0)
        return -1;
    seen = malloc((p->readdir_files ? p->readdir_files : 1) * sizeof *seen);
    if (!seen)
        return cthon_fail(run, "out of memory");
    for (unsigned c = 0; c < p->readdir_count; c++) {
        unsigned dots = 0, dotdots = 0;

        memset(seen, 0, p->readdir_files * sizeof *seen);
        rc = run->ops->opendir(run->fs, ".", &d);
        if (rc < 0) {
            cthon_fail_op(run, "opendir", ".", rc);
            goto err;
        }
        while ((rc = run->ops->readdir(run->fs, d, &name)) > 0) {
            long i;
            if (strcmp(name, ".") == 0) {
                dots++;
            } else if (strcmp(name, "..") == 0) {
                dotdots++;
            } else if ((i = cthon_file_index(name, p->readdir_files)) < 0) {
                cthon_fail(run, "read %u: unexpected entry \"%s\" in the test directory", c, name);
                break;
            } else if (++seen[i] > 1) {
                cthon_fail(run, "read %u: %s: listed %u times, expected once", c, name, seen[i]);
                break;
            }
        }
        run->ops->closedir(run->fs, d);
        if (rc < 0) {
            cthon_fail_op(run, "readdir", ".", rc);
            goto err;
        }
        if (rc > 0)
            goto err;
        if (dots > 1 || dotdots > 1) {
            cthon_fail(run,
                       "read %u: \".\" listed %u times and \"..\" %u times, expected at most "
                       "once",
                       c, dots, dotdots);
            goto err;
        }
        for (unsigned i = 0; i < p->readdir_files; i++) {
            if (seen[i] == 0) {
                cthon_fail(run, "read %u: file.%u: not listed, expected once", c, i);
                goto err;
            }
        }
    }
    free(seen);
    if (cthon_remove_files(run, "file", p->readdir_files) < 0)
        return -1;
    snprintf(summary, size, "%u entries read %u times", p->readdir_files, p->readdir_count);
    return 0;
err:
    free(seen);
    return -1;
}

/* ---- test 7: link and rename ---- */

/* Stat path and check its inode and link count. */
static int cthon_check_links(cthon_run *run, const char *path, uint64_t ino, unsigned nlink,
                             const char *after)
{
    cthon_stat st;

    if (cthon_stat_check(run, path, S_IFREG, &st) < 0)
        return -1;
    if (st.ino != ino)
        return cthon_fail(run, "%s: inode after %s: expected %llu, seen %llu", path, after,
                          (unsigned long long)ino, (unsigned long long)st.ino);
    if (st.nlink != nlink)
        return cthon_fail(run, "%s: link count after %s: expected %u, seen %u", path, after, nlink,
                          st.nlink);
    return 0;
}

static int cthon_test7(cthon_run *run, char *summary, size_t size)
{
    const cthon_params *p = run->p;
    char name[CTHON_NAME_MAX], newname[CTHON_NAME_MAX];
    cthon_stat st;
    int rc;

    if (cthon_make_files(run, "file", p->link_files) < 0)
        return -1;
    for (unsigned c = 0; c < p->link_count; c++) {
        for (unsigned i = 0; i < p->link_files; i++) {
            cthon_name(name, "file", i);
            cthon_name(newname, "newfile", i);
            if (cthon_stat_check(run, name, S_IFREG, &st) < 0)
                return -1;
            rc = run->ops->rename(run->fs, name, newname);
            if (rc < 0)
                return cthon_fail_op2(run, "rename", name, newname, rc);
            if (cthon_check_gone(run, name, "rename") < 0)
                return -1;
            if (cthon_check_links(run, newname, st.ino, 1, "rename") < 0)
                return -1;
            rc = run->ops->link(run->fs, newname, name);
            if (rc < 0)
                return cthon_fail_op2(run, "link", newname, name, rc);
            if (cthon_check_links(run, name, st.ino, 2, "link") < 0 ||
                cthon_check_links(run, newname, st.ino, 2, "link") < 0)
                return -1;
            rc = run->ops->unlink(run->fs, newname);
            if (rc < 0)
                return cthon_fail_op(run, "unlink", newname, rc);
            if (cthon_check_gone(run, newname, "unlink") < 0)
                return -1;
            if (cthon_check_links(run, name, st.ino, 1, "unlink of the other name") < 0)
                return -1;
        }
    }
    if (cthon_remove_files(run, "file", p->link_files) < 0)
        return -1;
    snprintf(summary, size, "%u renames and links on %u files", p->link_files * p->link_count,
             p->link_files);
    return 0;
}

/* ---- test 8: symlink and readlink ---- */

static int cthon_test8(cthon_run *run, char *summary, size_t size)
{
    const cthon_params *p = run->p;
    char name[CTHON_NAME_MAX], target[128], buf[256];
    cthon_stat st;
    ssize_t len;
    int rc;

    for (unsigned c = 0; c < p->symlink_count; c++) {
        for (unsigned i = 0; i < p->symlink_files; i++) {
            cthon_name(name, "symlink", i);
            snprintf(target, sizeof target, "/this/is/a/symlink/target/round.%u/file.%u", c, i);
            rc = run->ops->symlink(run->fs, target, name);
            if (rc < 0)
                return cthon_fail_op2(run, "symlink", target, name, rc);
            rc = run->ops->lstat(run->fs, name, &st);
            if (rc < 0)
                return cthon_fail_op(run, "lstat", name, rc);
            if (!S_ISLNK(st.mode))
                return cthon_fail(run, "%s: file type after symlink: expected %06o, seen %06o",
                                  name, S_IFLNK, st.mode & S_IFMT);
            len = run->ops->readlink(run->fs, name, buf, sizeof buf);
            if (len < 0)
                return cthon_fail_op(run, "readlink", name, (int)len);
            if ((size_t)len != strlen(target) || strcmp(buf, target) != 0)
                return cthon_fail(run, "%s: readlink: expected \"%s\", seen \"%s\"", name, target,
                                  buf);
            rc = run->ops->unlink(run->fs, name);
            if (rc < 0)
                return cthon_fail_op(run, "unlink", name, rc);
        }
    }
    snprintf(summary, size, "%u symlinks and readlinks on %u files",
             p->symlink_files * p->symlink_count, p->symlink_files);
    return 0;
}

/* ---- test 9: statfs ---- */

static int cthon_test9(cthon_run *run, char *summary, size_t size)
{
    const cthon_params *p = run->p;
    cthon_statfs sf;
    int rc;

    for (unsigned c = 0; c < p->statfs_count; c++) {
        rc = run->ops->statfs(run->fs, ".", &sf);
        if (rc < 0)
            return cthon_fail_op(run, "statfs", ".", rc);
        if (sf.bsize == 0 || sf.blocks == 0)
            return cthon_fail(run,
                              "statfs %u: block size %llu and block count %llu: expected "
                              "both non-zero",
                              c, (unsigned long long)sf.bsize, (unsigned long long)sf.blocks);
        if (sf.bfree > sf.blocks || sf.bavail > sf.blocks || sf.ffree > sf.files)
            return cthon_fail(run,
                              "statfs %u: free counts exceed totals: blocks %llu free %llu "
                              "avail %llu, files %llu free %llu",
                              c, (unsigned long long)sf.blocks, (unsigned long long)sf.bfree,
                              (unsigned long long)sf.bavail, (unsigned long long)sf.files,
                              (unsigned long long)sf.ffree);
    }
    snprintf(summary, size, "%u statfs calls", p->statfs_count);
    return 0;
}

const cthon_test cthon_tests[] = {
    {"1", "create tree", cthon_test1},
    {"2", "remove tree", cthon_test2},
    {"3", "lookups", cthon_test3},
    {"4", "setattr, getattr", cthon_test4},
    {"4a", "getattr, lookup", cthon_test4a},
    {"5a", "write", cthon_test5a},
    {"5b", "read", cthon_test5b},
    {"6", "readdir", cthon_test6},
    {"7", "link, rename", cthon_test7},
    {"8", "symlink, readlink", cthon_test8},
    {"9", "statfs", cthon_test9},
};
const size_t cthon_ntests = sizeof cthon_tests / sizeof cthon_tests[0];

void cthon_params_default(cthon_params *p, bool quick)
{
    if (!quick) {
        *p = (cthon_params){
            .levels = 5,
            .files = 5,
            .dirs = 2,
            .lookups = 250,
            .attr_files = 10,
            .attr_count = 50,
            .io_size = 1048576,
            .io_count = 10,
            .bufsize = 8192,
            .readdir_files = 200,
            .readdir_count = 100,
            .link_files = 10,
            .link_count = 20,
            .symlink_files = 10,
            .symlink_count = 20,
            .statfs_count = 1500,
        };
    } else {
        *p = (cthon_params){
            .levels = 3,
            .files = 3,
            .dirs = 2,
            .lookups = 20,
            .attr_files = 5,
            .attr_count = 5,
            .io_size = 262144,
            .io_count = 2,
            .bufsize = 8192,
            .readdir_files = 30,
            .readdir_count = 5,
            .link_files = 3,
            .link_count = 3,
            .symlink_files = 3,
            .symlink_count = 3,
            .statfs_count = 20,
        };
    }
}

/* Remove everything inside the working directory's subdirectory `path`. */
static int cthon_rmtree_dir(cthon_run *run, const char *path)
{
    cthon_dir *d;
    const char *name;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc, ret = 0;

    rc = run->ops->opendir(run->fs, path, &d);
    if (rc < 0)
        return rc;
    while ((rc = run->ops->readdir(run->fs, d, &name)) > 0) {
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (!nn) {
                rc = -ENOMEM;
                break;
            }
            names = nn;
            cap = ncap;
        }
        names[n] = strdup(name);
        if (!names[n]) {
            rc = -ENOMEM;
            break;
        }
        n++;
    }
    run->ops->closedir(run->fs, d);
    if (rc < 0)
        ret = rc;
    if (ret == 0) {
        rc = run->ops->chdir(run->fs, path);
        if (rc < 0)
            ret = rc;
    }
    if (ret == 0) {
        for (size_t i = 0; i < n && ret == 0; i++)
            ret = cthon_rmtree(run, names[i]);
        rc = run->ops->chdir(run->fs, "..");
        if (rc < 0 && ret == 0)
            ret = rc;
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return ret;
}

int cthon_rmtree(cthon_run *run, const char *path)
{
    cthon_stat st;
    int rc = run->ops->lstat(run->fs, path, &st);

    if (rc == -ENOENT)
        return 0;
    if (rc < 0)
        return rc;
    if (!S_ISDIR(st.mode))
        return run->ops->unlink(run->fs, path);
    rc = cthon_rmtree_dir(run, path);
    if (rc < 0)
        return rc;
    return run->ops->rmdir(run->fs, path);
}
