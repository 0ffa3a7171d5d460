/*
 * test_snap_crash.c -- kill -9 during a snapshot's reclaim and during a
 * restore leaves a consistent file system: every check of pgnfs fsck
 * passes (but the one that says a reclaim is under way), the snapshots
 * left read back unchanged, and running the command again finishes the
 * job. ctest runs it once per storage layout and encoding.
 *
 * NOTES
 *   The reclaim runs in a child process (dbfs_snap_reclaim) whose
 *   progress callback waits for a go-ahead on a pipe, so it is killed at
 *   a known step; then once more killed as soon as it is let go (within
 *   a step, most likely mid-transaction). The restore is `pgnfs snapshot
 *   restore`, killed once it has printed some files.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dbfs_snap.h"
#include "td.h"
#include "testlib.h"

#define SC_CHUNK 4096u
#define SC_FILES 24

/* The bytes of file i in version v. */
static void sc_fill(unsigned char *buf, size_t len, unsigned i, unsigned v)
{
    for (size_t k = 0; k < len; k++)
        buf[k] = (unsigned char)(k * 13 + i * 7 + v * 101);
}

static size_t sc_len(unsigned i)
{
    return 1000 + (size_t)i * 2500; /* from under a chunk to several, past 16 KiB */
}

/* Problems fsck finds, all checks; *snapshots: those of the snapshots
 * check. */
typedef struct {
    unsigned long all, snapshots;
} sc_found;

static void sc_problem(void *arg, unsigned pass, const dbfs_fsck_problem *p)
{
    sc_found *f = arg;

    (void)pass;
    f->all++;
    if (strcmp(p->check, "snapshots") == 0)
        f->snapshots++;
    else
        g_message("fsck: %s: %s", p->check, p->detail);
}

static sc_found sc_fsck(td_fs *t)
{
    sc_found f = {0};
    dbfs_fsck_opts o = {.problem = sc_problem, .arg = &f};
    dbfs_fsck_report rep;

    td_rc(dbfs_fsck(t->fs, &o, &rep), 0);
    return f;
}

/* File i of directory dir at snapshot id reads as version v. */
static void sc_check_file(td_fs *t, dbfs_fh dir, unsigned i, unsigned v)
{
    dbfs_cred root = td_root();
    char name[16];
    size_t len = sc_len(i);
    unsigned char *want = g_malloc(len), *got = g_malloc(len);

    g_snprintf(name, sizeof name, "f%u", i);
    dbfs_attr a = td_lookup(t, &root, dir, name);
    g_assert_cmpuint(a.size, ==, len);
    sc_fill(want, len, i, v);
    td_read(t, &root, td_fh(&a), 0, got, (uint32_t)len);
    g_assert_cmpmem(got, len, want, len);
    g_free(want);
    g_free(got);
}

/* Files f0 .. f<SC_FILES-1> in /d, their inodes far apart (so that the
 * reclaim takes many steps), each written as version v. */
static dbfs_attr sc_make(td_fs *t, unsigned v)
{
    dbfs_cred root = td_root();
    dbfs_attr d = td_mkdir(t, &root, t->root, "d", 0755);

    for (unsigned i = 0; i < SC_FILES; i++) {
        char name[16];
        size_t len = sc_len(i);
        unsigned char *buf = g_malloc(len);

        td_sql(t->conninfo, "SELECT setval('pgnfs_inode_seq', nextval('pgnfs_inode_seq') + 30000)");
        g_snprintf(name, sizeof name, "f%u", i);
        dbfs_attr f = td_create(t, &root, td_fh(&d), name, 0644);
        sc_fill(buf, len, i, v);
        td_write(t, &root, td_fh(&f), 0, buf, (uint32_t)len);
        g_free(buf);
    }
    return d;
}

static void sc_rewrite(td_fs *t, dbfs_fh d, unsigned v)
{
    dbfs_cred root = td_root();

    for (unsigned i = 0; i < SC_FILES; i++) {
        char name[16];
        size_t len = sc_len(i);
        unsigned char *buf = g_malloc(len);

        g_snprintf(name, sizeof name, "f%u", i);
        dbfs_attr f = td_lookup(t, &root, d, name);
        sc_fill(buf, len, i, v);
        td_write(t, &root, td_fh(&f), 0, buf, (uint32_t)len);
        g_free(buf);
    }
}

/* The child's progress: tell the parent, wait for its go-ahead. */
typedef struct {
    int up, down;
} sc_pipes;

static void sc_step(const dbfs_snap_progress *p, void *arg)
{
    sc_pipes *pp = arg;
    char c = 's';

    (void)p;
    if (write(pp->up, &c, 1) != 1 || read(pp->down, &c, 1) != 1)
        _exit(3);
}

/* Fork a reclaim; kill it -9 after `steps` steps (0: as soon as it is
 * let go after its first). */
static void sc_reclaim_killed(td_fs *t, unsigned steps)
{
    int up[2], down[2];
    pid_t pid;
    char c;

    g_assert_cmpint(pipe(up), ==, 0);
    g_assert_cmpint(pipe(down), ==, 0);
    pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0) {
        dbfs_config cfg = {.conninfo = t->conninfo, .relatime = true};
        sc_pipes pp = {up[1], down[0]};
        dbfs *fs;

        if (dbfs_open(&cfg, &fs) != 0)
            _exit(2);
        dbfs_snap_reclaim(fs, 0, sc_step, &pp, NULL);
        _exit(0);
    }
    for (unsigned i = 0; i < (steps ? steps : 1); i++) {
        g_assert_cmpint(read(up[0], &c, 1), ==, 1);
        if (i + 1 < steps || steps == 0)
            g_assert_cmpint(write(down[1], "g", 1), ==, 1);
    }
    kill(pid, SIGKILL);
    int status = 0;
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_assert_true(WIFSIGNALED(status));
    close(up[0]);
    close(up[1]);
    close(down[0]);
    close(down[1]);
}

static void test_reclaim(void)
{
    td_fs t;
    uint32_t id;
    dbfs_snap_progress p;

    td_open_opts(&t, SC_CHUNK, true);
    dbfs_attr d = sc_make(&t, 1);
    td_rc(dbfs_snap_create(t.fs, "keep", NULL), 0);
    sc_rewrite(&t, td_fh(&d), 2);
    td_rc(dbfs_snap_create(t.fs, "gone", NULL), 0);
    sc_rewrite(&t, td_fh(&d), 3);
    td_rc(dbfs_snap_delete(t.fs, "gone"), 0);
    /* Killed at a step boundary, then within a step. */
    sc_reclaim_killed(&t, 3);
    sc_found f = sc_fsck(&t);
    g_assert_cmpuint(f.all, ==, f.snapshots);
    g_assert_cmpuint(f.snapshots, ==, 1); /* the kept rows of "gone", reclaim under way */
    sc_reclaim_killed(&t, 0);
    f = sc_fsck(&t);
    g_assert_cmpuint(f.all, ==, f.snapshots);
    /* What is left reads as it did; the reclaim goes on and ends. */
    td_rc(dbfs_snap_find(t.c, "keep", &id), 0);
    dbfs_cred root = td_root();
    dbfs_attr sd = td_lookup(&t, &root, (dbfs_fh){DBFS_ROOT_INO, t.root.gen, id}, "d");
    for (unsigned i = 0; i < SC_FILES; i++)
        sc_check_file(&t, td_fh(&sd), i, 1);
    td_rc(dbfs_snap_reclaim(t.fs, 0, NULL, NULL, &p), 0);
    g_assert_true(p.done);
    f = sc_fsck(&t);
    g_assert_cmpuint(f.all, ==, 0);
    for (unsigned i = 0; i < SC_FILES; i++) {
        sc_check_file(&t, td_fh(&sd), i, 1);
        sc_check_file(&t, td_fh(&d), i, 3);
    }
    td_close(&t);
}

/* Run `pgnfs snapshot restore NAME / --to /r`; kill it -9 after `lines`
 * lines of output (0: let it finish). Returns its exit status (-1:
 * killed). */
static int sc_restore(td_fs *t, unsigned lines)
{
    const char *argv[] = {tl_pgnfs_bin(), "snapshot", "restore",    "s",         "/d",
                          "--to",         "/r",       "--conninfo", t->conninfo, NULL};
    GError *err = NULL;
    GPid pid;
    int out, status = 0;

    if (!g_spawn_async_with_pipes(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                  &pid, NULL, &out, NULL, &err))
        g_error("cannot run pgnfs: %s", err->message);
    FILE *f = fdopen(out, "r");
    char line[512];
    unsigned n = 0;

    while (lines > 0 && n < lines && fgets(line, sizeof line, f))
        n += g_str_has_prefix(line, "restored ");
    if (lines > 0) {
        g_assert_cmpuint(n, ==, lines);
        kill(pid, SIGKILL);
    } else {
        while (fgets(line, sizeof line, f))
            ;
    }
    fclose(f);
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_restore(void)
{
    td_fs t;
    dbfs_cred root = td_root();

    td_open_opts(&t, SC_CHUNK, true);
    dbfs_attr d = sc_make(&t, 1);
    td_rc(dbfs_snap_create(t.fs, "s", NULL), 0);
    sc_rewrite(&t, td_fh(&d), 2);
    /* /r holds version 2 of every file; the restore puts back version 1. */
    td_rc(dbfs_rename(t.c, &root, t.root, "d", t.root, "r", NULL, NULL), 0);
    g_assert_cmpint(sc_restore(&t, 5), ==, -1);
    sc_found f = sc_fsck(&t);
    g_assert_cmpuint(f.all, ==, 0);
    /* Every file is wholly old or wholly restored. */
    for (unsigned i = 0; i < SC_FILES; i++) {
        char name[16];
        size_t len = sc_len(i);
        unsigned char *v1 = g_malloc(len), *v2 = g_malloc(len), *got = g_malloc(len);

        g_snprintf(name, sizeof name, "f%u", i);
        dbfs_attr r = td_lookup(&t, &root, td_fh(&d), name);
        sc_fill(v1, len, i, 1);
        sc_fill(v2, len, i, 2);
        td_read(&t, &root, td_fh(&r), 0, got, (uint32_t)len);
        g_assert_true(memcmp(got, v1, len) == 0 || memcmp(got, v2, len) == 0);
        g_free(v1);
        g_free(v2);
        g_free(got);
    }
    g_assert_cmpint(sc_restore(&t, 0), ==, 0);
    for (unsigned i = 0; i < SC_FILES; i++)
        sc_check_file(&t, td_fh(&d), i, 1);
    g_assert_cmpint(td_sql(t.conninfo, "SELECT count(*) FROM naming"
                                       " WHERE position('.pgnfs-restore'::bytea IN name) > 0"),
                    ==, 0);
    f = sc_fsck(&t);
    g_assert_cmpuint(f.all, ==, 0);
    td_close(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/snapcrash/reclaim", test_reclaim);
    g_test_add_func("/snapcrash/restore", test_restore);
    return g_test_run();
}
