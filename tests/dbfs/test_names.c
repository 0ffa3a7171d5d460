/*
 * test_names.c -- dbfs name calls against a real database: lookup,
 * create (UNCHECKED, GUARDED, EXCLUSIVE), mkdir, symlink, readlink, mknod,
 * remove, rmdir, link; their errors, ownership rules (setgid directories),
 * sticky directories, link counts and which times move.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "td.h"
#include "testlib.h"

static const uint32_t td_no_groups[1] = {0};

/* Count rows of a query with one int8 parameter, straight from the
 * database (to see what dbfs left behind). */
static long td_count(const char *conninfo, const char *sql, int64_t arg)
{
    PGconn *pg = PQconnectdb(conninfo);
    char val[32];
    const char *vals[1] = {val};
    PGresult *r;
    long n;

    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    g_snprintf(val, sizeof val, "%" G_GINT64_FORMAT, arg);
    r = PQexecParams(pg, sql, 1, NULL, vals, NULL, NULL, 0);
    g_assert_cmpint(PQresultStatus(r), ==, PGRES_TUPLES_OK);
    n = atol(PQgetvalue(r, 0, 0));
    PQclear(r);
    PQfinish(pg);
    return n;
}

static void test_lookup(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr d, f, a;
    dbfs_attr_opt da;
    char longname[300];

    td_open(&t);
    d = td_mkdir(&t, &root, t.root, "d", 0755);
    f = td_create(&t, &root, td_fh(&d), "f", 0644);

    a = td_lookup(&t, &u, t.root, "d");
    g_assert_cmpuint(a.ino, ==, d.ino);
    g_assert_cmpuint(a.gen, ==, d.gen);
    g_assert_cmpint(a.type, ==, DBFS_DIR);
    a = td_lookup(&t, &u, td_fh(&d), "f");
    g_assert_cmpuint(a.ino, ==, f.ino);
    g_assert_cmpint(a.type, ==, DBFS_REG);
    a = td_lookup(&t, &u, td_fh(&d), ".");
    g_assert_cmpuint(a.ino, ==, d.ino);
    a = td_lookup(&t, &u, td_fh(&d), "..");
    g_assert_cmpuint(a.ino, ==, DBFS_ROOT_INO);
    a = td_lookup(&t, &u, t.root, "..");
    g_assert_cmpuint(a.ino, ==, DBFS_ROOT_INO);

    td_rc(dbfs_lookup(t.c, &u, t.root, "nope", &a, &da), -ENOENT);
    g_assert_true(da.valid);
    g_assert_cmpuint(da.attr.ino, ==, DBFS_ROOT_INO);
    td_rc(dbfs_lookup(t.c, &u, t.root, "", &a, &da), -ENOENT);
    td_rc(dbfs_lookup(t.c, &u, t.root, "a/b", &a, &da), -EINVAL);
    memset(longname, 'x', 256);
    longname[256] = 0;
    td_rc(dbfs_lookup(t.c, &u, t.root, longname, &a, &da), -ENAMETOOLONG);
    longname[255] = 0;
    td_create(&t, &u, t.root, longname, 0644);
    a = td_lookup(&t, &u, t.root, longname);
    g_assert_cmpint(a.type, ==, DBFS_REG);

    /* Not a directory; no search permission; a wrong generation. */
    td_rc(dbfs_lookup(t.c, &u, td_fh(&f), "x", &a, &da), -ENOTDIR);
    g_assert_true(da.valid);
    td_chmod(&t, &root, td_fh(&d), 0700);
    td_rc(dbfs_lookup(t.c, &u, td_fh(&d), "f", &a, &da), -EACCES);
    g_assert_true(da.valid);
    g_assert_cmpuint(da.attr.mode, ==, 0700);
    a = td_lookup(&t, &root, td_fh(&d), "f");
    g_assert_cmpuint(a.ino, ==, f.ino);
    td_chmod(&t, &root, td_fh(&d), 0711);
    a = td_lookup(&t, &u, td_fh(&d), "f");
    g_assert_cmpuint(a.ino, ==, f.ino);
    td_rc(dbfs_lookup(t.c, &u, (dbfs_fh){d.ino, d.gen + 1, 0}, "f", &a, &da), -ESTALE);
    g_assert_false(da.valid);
    td_rc(dbfs_lookup(t.c, &u, (dbfs_fh){999999, 1, 0}, "..", &a, &da), -ESTALE);
    td_close(&t);
}

static void test_create_modes(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0640};
    dbfs_sattr trunc = {.set = DBFS_SET_MODE | DBFS_SET_SIZE, .mode = 0600, .size = 0};
    dbfs_attr f, a, d;
    dbfs_wcc w;
    char buf[16];

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0640);
    g_assert_cmpuint(f.mode, ==, 0640);
    g_assert_cmpuint(f.nlink, ==, 1);
    g_assert_cmpuint(f.size, ==, 0);
    g_assert_cmpint(f.type, ==, DBFS_REG);

    /* GUARDED on an existing name; wcc still comes back. */
    td_rc(dbfs_create(t.c, &u, t.root, "f", DBFS_CREATE_GUARDED, &sa, 0, &a, &w), -EEXIST);
    g_assert_true(w.have_pre && w.have_post);
    g_assert_cmpuint(w.post.ino, ==, DBFS_ROOT_INO);

    /* UNCHECKED over a regular file opens it; a size truncates; the mode
     * of the existing file stays. */
    td_write(&t, &u, td_fh(&f), 0, "hello", 5);
    td_rc(dbfs_create(t.c, &u, t.root, "f", DBFS_CREATE_UNCHECKED, &sa, 0, &a, &w), 0);
    g_assert_cmpuint(a.ino, ==, f.ino);
    g_assert_cmpuint(a.size, ==, 5);
    td_rc(dbfs_create(t.c, &u, t.root, "f", DBFS_CREATE_UNCHECKED, &trunc, 0, &a, &w), 0);
    g_assert_cmpuint(a.ino, ==, f.ino);
    g_assert_cmpuint(a.size, ==, 0);
    g_assert_cmpuint(a.mode, ==, 0640);
    td_write(&t, &u, td_fh(&f), 0, "abc", 3);
    td_read(&t, &u, td_fh(&f), 0, buf, 3);
    g_assert_cmpmem(buf, 3, "abc", 3);

    /* UNCHECKED over a directory. */
    d = td_mkdir(&t, &u, t.root, "d", 0755);
    td_rc(dbfs_create(t.c, &u, t.root, "d", DBFS_CREATE_UNCHECKED, &sa, 0, &a, &w), -EEXIST);

    /* EXCLUSIVE: the same verifier is a retransmission, another is not. */
    td_rc(dbfs_create(t.c, &u, t.root, "x", DBFS_CREATE_EXCLUSIVE, NULL, 0x1234, &a, &w), 0);
    g_assert_cmpuint(a.mode, ==, 0644);
    dbfs_attr x = a;
    td_rc(dbfs_create(t.c, &u, t.root, "x", DBFS_CREATE_EXCLUSIVE, NULL, 0x1234, &a, &w), 0);
    g_assert_cmpuint(a.ino, ==, x.ino);
    td_rc(dbfs_create(t.c, &u, t.root, "x", DBFS_CREATE_EXCLUSIVE, NULL, 0x1235, &a, &w), -EEXIST);
    td_rc(dbfs_create(t.c, &u, t.root, "f", DBFS_CREATE_EXCLUSIVE, NULL, 0, &a, &w), -EEXIST);
    td_rc(dbfs_create(t.c, &u, t.root, "d", DBFS_CREATE_EXCLUSIVE, NULL, 0, &a, &w), -EEXIST);

    /* Names. */
    td_rc(dbfs_create(t.c, &u, t.root, ".", DBFS_CREATE_GUARDED, &sa, 0, &a, &w), -EEXIST);
    td_rc(dbfs_create(t.c, &u, t.root, "..", DBFS_CREATE_UNCHECKED, &sa, 0, &a, &w), -EEXIST);
    td_rc(dbfs_create(t.c, &u, t.root, "", DBFS_CREATE_GUARDED, &sa, 0, &a, &w), -EINVAL);
    td_rc(dbfs_create(t.c, &u, t.root, "a/b", DBFS_CREATE_GUARDED, &sa, 0, &a, &w), -EINVAL);

    /* In a file; in a stale directory; in a directory without write. */
    td_rc(dbfs_create(t.c, &u, td_fh(&f), "y", DBFS_CREATE_GUARDED, &sa, 0, &a, &w), -ENOTDIR);
    td_rc(dbfs_create(t.c, &u, (dbfs_fh){d.ino, d.gen ^ 1, 0}, "y", DBFS_CREATE_GUARDED, &sa, 0, &a,
                      &w),
          -ESTALE);
    g_assert_false(w.have_pre || w.have_post);
    dbfs_cred other = td_user(1001, 100, 0, td_no_groups);
    td_rc(dbfs_create(t.c, &other, td_fh(&d), "y", DBFS_CREATE_GUARDED, &sa, 0, &a, &w), -EACCES);
    g_assert_true(w.have_pre && w.have_post);
    /* An existing name is EEXIST before write permission is looked at. */
    td_create(&t, &u, td_fh(&d), "z", 0644);
    td_rc(dbfs_create(t.c, &other, td_fh(&d), "z", DBFS_CREATE_GUARDED, &sa, 0, &a, &w), -EEXIST);

    /* A create may set more than the mode: owner only by root. */
    dbfs_sattr own = {.set = DBFS_SET_MODE | DBFS_SET_UID, .mode = 0600, .uid = 7};
    td_rc(dbfs_create(t.c, &u, t.root, "o", DBFS_CREATE_GUARDED, &own, 0, &a, &w), -EPERM);
    td_rc(dbfs_lookup(t.c, &u, t.root, "o", &a, NULL), -ENOENT);
    dbfs_cred root = td_root();
    td_rc(dbfs_create(t.c, &root, t.root, "o", DBFS_CREATE_GUARDED, &own, 0, &a, &w), 0);
    g_assert_cmpuint(a.uid, ==, 7);
    dbfs_sattr times = {.set = DBFS_SET_MODE | DBFS_SET_MTIME | DBFS_SET_SIZE,
                        .mode = 0600,
                        .mtime_ns = 1000000000,
                        .size = 10};
    td_rc(dbfs_create(t.c, &u, t.root, "tm", DBFS_CREATE_GUARDED, &times, 0, &a, &w), 0);
    g_assert_cmpint(a.mtime_ns, ==, 1000000000);
    g_assert_cmpuint(a.size, ==, 10);
    td_close(&t);
}

static void test_ownership(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    const uint32_t g50[] = {50};
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_cred member = td_user(1001, 100, 1, g50);
    dbfs_attr sg, f, d;

    td_open(&t);
    f = td_create(&t, &u, t.root, "plain", 0644);
    g_assert_cmpuint(f.uid, ==, 1000);
    g_assert_cmpuint(f.gid, ==, 100);

    sg = td_mkdir(&t, &root, t.root, "sg", 0777);
    td_chown(&t, &root, td_fh(&sg), 0, 50);
    td_chmod(&t, &root, td_fh(&sg), 02777);
    f = td_create(&t, &u, td_fh(&sg), "f", 0644);
    g_assert_cmpuint(f.uid, ==, 1000);
    g_assert_cmpuint(f.gid, ==, 50);
    d = td_mkdir(&t, &u, td_fh(&sg), "sub", 0755);
    g_assert_cmpuint(d.gid, ==, 50);
    g_assert_cmpuint(d.mode, ==, 02755);
    /* Deeper: the setgid directory passes it on. */
    d = td_mkdir(&t, &u, td_fh(&d), "deeper", 0700);
    g_assert_cmpuint(d.gid, ==, 50);
    g_assert_cmpuint(d.mode, ==, 02700);
    /* A setgid, group-executable file made by a non-member of the
     * inherited group loses setgid; a member keeps it. */
    f = td_create(&t, &u, td_fh(&sg), "sgid-nonmember", 02755);
    g_assert_cmpuint(f.mode, ==, 0755);
    f = td_create(&t, &member, td_fh(&sg), "sgid-member", 02755);
    g_assert_cmpuint(f.mode, ==, 02755);
    /* Modes are used as given, masked to 07777. */
    f = td_create(&t, &u, t.root, "m", 0100644);
    g_assert_cmpuint(f.mode, ==, 0644);
    f = td_create(&t, &u, t.root, "m2", 04711);
    g_assert_cmpuint(f.mode, ==, 04711);
    td_close(&t);
}

static void test_nlink(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr a, b, f;
    dbfs_wcc w;

    td_open(&t);
    g_assert_cmpuint(td_getattr(&t, t.root).nlink, ==, 2);
    a = td_mkdir(&t, &u, t.root, "a", 0755);
    g_assert_cmpuint(a.nlink, ==, 2);
    g_assert_cmpuint(td_getattr(&t, t.root).nlink, ==, 3);
    b = td_mkdir(&t, &u, td_fh(&a), "b", 0755);
    td_mkdir(&t, &u, td_fh(&a), "c", 0755);
    g_assert_cmpuint(td_getattr(&t, td_fh(&a)).nlink, ==, 4);
    f = td_create(&t, &u, td_fh(&a), "f", 0644);
    g_assert_cmpuint(td_getattr(&t, td_fh(&a)).nlink, ==, 4);
    g_assert_cmpuint(f.nlink, ==, 1);
    td_rc(dbfs_rmdir(t.c, &u, td_fh(&a), "b", &w), 0);
    g_assert_cmpuint(w.post.nlink, ==, 3);
    td_rc(dbfs_getattr(t.c, td_fh(&b), &b), -ESTALE);
    td_rc(dbfs_rmdir(t.c, &u, td_fh(&a), "c", &w), 0);
    td_rc(dbfs_remove(t.c, &u, td_fh(&a), "f", &w), 0);
    g_assert_cmpuint(w.post.nlink, ==, 2);
    td_rc(dbfs_rmdir(t.c, &u, t.root, "a", &w), 0);
    g_assert_cmpuint(w.post.nlink, ==, 2);
    g_assert_cmpuint(td_getattr(&t, t.root).nlink, ==, 2);
    td_close(&t);
}

static void test_times(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr d, f, f2, before;
    dbfs_attr_opt fa;
    dbfs_wcc w;
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0644};

    td_open(&t);
    d = td_mkdir(&t, &u, t.root, "d", 0755);
    g_assert_cmpint(d.atime_ns, ==, d.mtime_ns);
    g_assert_cmpint(d.mtime_ns, ==, d.ctime_ns);

    /* A new entry moves the directory's mtime and ctime, and the wcc
     * brackets the change. */
    td_rc(dbfs_create(t.c, &u, td_fh(&d), "f", DBFS_CREATE_GUARDED, &sa, 0, &f, &w), 0);
    g_assert_true(w.have_pre && w.have_post);
    g_assert_cmpint(w.pre_mtime_ns, ==, d.mtime_ns);
    g_assert_cmpint(w.pre_ctime_ns, ==, d.ctime_ns);
    g_assert_cmpint(w.post.mtime_ns, >, d.mtime_ns);
    g_assert_cmpint(w.post.ctime_ns, >, d.ctime_ns);
    g_assert_cmpuint(w.post.change, >, d.change);
    g_assert_cmpint(w.post.mtime_ns, ==, f.mtime_ns);
    g_assert_cmpint(f.atime_ns, ==, f.mtime_ns);
    g_assert_cmpint(f.ctime_ns, ==, f.mtime_ns);
    d = w.post;

    /* link: the file's ctime (not mtime) moves, and the directory's times. */
    before = td_getattr(&t, td_fh(&f));
    td_rc(dbfs_link(t.c, &u, td_fh(&f), td_fh(&d), "g", &fa, &w), 0);
    g_assert_true(fa.valid);
    g_assert_cmpuint(fa.attr.nlink, ==, 2);
    g_assert_cmpint(fa.attr.ctime_ns, >, before.ctime_ns);
    g_assert_cmpint(fa.attr.mtime_ns, ==, before.mtime_ns);
    g_assert_cmpint(w.post.mtime_ns, >, d.mtime_ns);
    d = w.post;

    /* remove of one name: the file stays, its ctime moves. */
    before = fa.attr;
    td_rc(dbfs_remove(t.c, &u, td_fh(&d), "g", &w), 0);
    f2 = td_getattr(&t, td_fh(&f));
    g_assert_cmpuint(f2.nlink, ==, 1);
    g_assert_cmpint(f2.ctime_ns, >, before.ctime_ns);
    g_assert_cmpint(f2.mtime_ns, ==, before.mtime_ns);
    g_assert_cmpint(w.post.mtime_ns, >, d.mtime_ns);
    g_assert_cmpint(w.post.ctime_ns, >, d.ctime_ns);
    /* Failed calls change nothing. */
    d = w.post;
    td_rc(dbfs_remove(t.c, &u, td_fh(&d), "nope", &w), -ENOENT);
    g_assert_cmpint(w.post.mtime_ns, ==, d.mtime_ns);
    g_assert_cmpuint(w.post.change, ==, d.change);
    td_close(&t);
}

static void test_symlink(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr l, f, a;
    dbfs_wcc w;
    char *target = NULL;
    char big[DBFS_PATH_MAX + 2];

    td_open(&t);
    td_rc(dbfs_symlink(t.c, &u, t.root, "l", "some/where/../else", NULL, &l, &w), 0);
    g_assert_cmpint(l.type, ==, DBFS_LNK);
    g_assert_cmpuint(l.mode, ==, 0777);
    g_assert_cmpuint(l.size, ==, strlen("some/where/../else"));
    g_assert_cmpuint(l.uid, ==, 1000);
    g_assert_true(w.have_post);
    td_rc(dbfs_readlink(t.c, &u, td_fh(&l), &target, &a), 0);
    g_assert_cmpstr(target, ==, "some/where/../else");
    g_assert_cmpuint(a.ino, ==, l.ino);
    free(target);
    target = NULL;

    f = td_create(&t, &u, t.root, "f", 0644);
    td_rc(dbfs_readlink(t.c, &u, td_fh(&f), &target, &a), -EINVAL);
    g_assert_null(target);
    td_rc(dbfs_readlink(t.c, &u, (dbfs_fh){l.ino, l.gen + 1, 0}, &target, &a), -ESTALE);
    td_rc(dbfs_symlink(t.c, &u, t.root, "l", "x", NULL, &a, &w), -EEXIST);
    td_rc(dbfs_symlink(t.c, &u, t.root, "e", "", NULL, &a, &w), -ENOENT);
    memset(big, 'p', sizeof big);
    big[DBFS_PATH_MAX + 1] = 0;
    td_rc(dbfs_symlink(t.c, &u, t.root, "big", big, NULL, &a, &w), -ENAMETOOLONG);
    big[DBFS_PATH_MAX] = 0;
    td_rc(dbfs_symlink(t.c, &u, t.root, "big", big, NULL, &a, &w), 0);
    td_rc(dbfs_readlink(t.c, &u, td_fh(&a), &target, &a), 0);
    g_assert_cmpuint(strlen(target), ==, DBFS_PATH_MAX);
    free(target);
    /* mode changes are ignored on symbolic links (as Linux nfsd) */
    td_chmod(&t, &u, td_fh(&l), 0600);
    g_assert_cmpuint(td_getattr(&t, td_fh(&l)).mode, ==, 0777);
    td_close(&t);
}

static void test_mknod(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr a;
    dbfs_wcc w;
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0600};

    td_open(&t);
    td_rc(dbfs_mknod(t.c, &root, t.root, "chr", DBFS_CHR, 4, 64, &sa, &a, &w), 0);
    g_assert_cmpint(a.type, ==, DBFS_CHR);
    g_assert_cmpuint(a.rdev_major, ==, 4);
    g_assert_cmpuint(a.rdev_minor, ==, 64);
    g_assert_cmpuint(a.mode, ==, 0600);
    td_rc(dbfs_mknod(t.c, &root, t.root, "blk", DBFS_BLK, 8, 1, &sa, &a, &w), 0);
    g_assert_cmpint(a.type, ==, DBFS_BLK);
    g_assert_cmpuint(td_lookup(&t, &u, t.root, "blk").rdev_major, ==, 8);
    td_rc(dbfs_mknod(t.c, &u, t.root, "chr2", DBFS_CHR, 1, 3, &sa, &a, &w), -EPERM);
    g_assert_true(w.have_post);
    td_rc(dbfs_mknod(t.c, &u, t.root, "fifo", DBFS_FIFO, 1, 3, &sa, &a, &w), 0);
    g_assert_cmpint(a.type, ==, DBFS_FIFO);
    g_assert_cmpuint(a.rdev_major, ==, 0);
    g_assert_cmpuint(a.rdev_minor, ==, 0);
    g_assert_cmpuint(a.uid, ==, 1000);
    td_rc(dbfs_mknod(t.c, &u, t.root, "sock", DBFS_SOCK, 0, 0, NULL, &a, &w), 0);
    g_assert_cmpint(a.type, ==, DBFS_SOCK);
    td_rc(dbfs_mknod(t.c, &root, t.root, "reg", DBFS_REG, 0, 0, &sa, &a, &w), -EINVAL);
    td_rc(dbfs_mknod(t.c, &root, t.root, "dir", DBFS_DIR, 0, 0, &sa, &a, &w), -EINVAL);
    td_rc(dbfs_mknod(t.c, &root, t.root, "fifo", DBFS_FIFO, 0, 0, &sa, &a, &w), -EEXIST);
    td_close(&t);
}

static void test_remove(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_cred v = td_user(1001, 100, 0, td_no_groups);
    dbfs_cred downer = td_user(1002, 100, 0, td_no_groups);
    dbfs_attr d, f, a, s;
    dbfs_wcc w;
    char data[20000];

    td_open_opts(&t, 8192, true); /* 20000 bytes: three chunks */
    d = td_mkdir(&t, &u, t.root, "d", 0755);
    f = td_create(&t, &u, td_fh(&d), "f", 0644);
    memset(data, 'q', sizeof data);
    td_write(&t, &u, td_fh(&f), 0, data, sizeof data);
    g_assert_cmpint(
        td_count(t.conninfo, "SELECT count(*) FROM allfiles WHERE inode = $1", (int64_t)f.ino), ==,
        3);

    td_rc(dbfs_remove(t.c, &u, td_fh(&d), "nope", &w), -ENOENT);
    td_rc(dbfs_remove(t.c, &u, td_fh(&d), "", &w), -ENOENT);
    td_rc(dbfs_remove(t.c, &u, td_fh(&d), ".", &w), -EISDIR);
    td_rc(dbfs_remove(t.c, &u, td_fh(&d), "..", &w), -EISDIR);
    td_rc(dbfs_rmdir(t.c, &u, td_fh(&d), ".", &w), -EINVAL);
    td_rc(dbfs_rmdir(t.c, &u, td_fh(&d), "..", &w), -ENOTEMPTY);
    td_rc(dbfs_rmdir(t.c, &u, td_fh(&d), "f", &w), -ENOTDIR);
    td_rc(dbfs_remove(t.c, &u, t.root, "d", &w), -EISDIR);
    td_rc(dbfs_rmdir(t.c, &u, t.root, "d", &w), -ENOTEMPTY);
    g_assert_true(w.have_pre && w.have_post);
    td_rc(dbfs_remove(t.c, &u, td_fh(&f), "x", &w), -ENOTDIR);
    td_rc(dbfs_remove(t.c, &v, td_fh(&d), "f", &w), -EACCES);
    td_rc(dbfs_remove(t.c, &u, (dbfs_fh){d.ino, d.gen + 1, 0}, "f", &w), -ESTALE);

    td_rc(dbfs_remove(t.c, &u, td_fh(&d), "f", &w), 0);
    td_rc(dbfs_lookup(t.c, &u, td_fh(&d), "f", &a, NULL), -ENOENT);
    td_rc(dbfs_getattr(t.c, td_fh(&f), &a), -ESTALE);
    g_assert_cmpint(
        td_count(t.conninfo, "SELECT count(*) FROM allfiles WHERE inode = $1", (int64_t)f.ino), ==,
        0);
    g_assert_cmpint(
        td_count(t.conninfo, "SELECT count(*) FROM fileatt WHERE inode = $1", (int64_t)f.ino), ==,
        0);
    td_rc(dbfs_rmdir(t.c, &u, t.root, "d", &w), 0);
    td_rc(dbfs_getattr(t.c, td_fh(&d), &a), -ESTALE);

    /* Sticky directory: only root, the directory's owner or the entry's
     * owner may remove an entry. */
    s = td_mkdir(&t, &root, t.root, "sticky", 0777);
    td_chown(&t, &root, td_fh(&s), 1002, 100);
    td_chmod(&t, &downer, td_fh(&s), 01777);
    td_create(&t, &u, td_fh(&s), "uf1", 0666);
    td_create(&t, &u, td_fh(&s), "uf2", 0666);
    td_create(&t, &u, td_fh(&s), "uf3", 0666);
    td_mkdir(&t, &u, td_fh(&s), "ud", 0777);
    td_rc(dbfs_remove(t.c, &v, td_fh(&s), "uf1", &w), -EPERM);
    td_rc(dbfs_rmdir(t.c, &v, td_fh(&s), "ud", &w), -EPERM);
    td_rc(dbfs_remove(t.c, &u, td_fh(&s), "uf1", &w), 0);
    td_rc(dbfs_remove(t.c, &downer, td_fh(&s), "uf2", &w), 0);
    td_rc(dbfs_remove(t.c, &root, td_fh(&s), "uf3", &w), 0);
    td_rc(dbfs_rmdir(t.c, &u, td_fh(&s), "ud", &w), 0);
    /* Without the sticky bit, anyone with write permission may. */
    td_chmod(&t, &downer, td_fh(&s), 0777);
    td_create(&t, &u, td_fh(&s), "uf4", 0600);
    td_rc(dbfs_remove(t.c, &v, td_fh(&s), "uf4", &w), 0);
    td_close(&t);
}

static void test_link(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_cred v = td_user(1001, 100, 0, td_no_groups);
    dbfs_attr f, d, a;
    dbfs_attr_opt fa;
    dbfs_wcc w;
    char buf[4];

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0644);
    td_write(&t, &u, td_fh(&f), 0, "data", 4);
    d = td_mkdir(&t, &u, t.root, "d", 0755);
    td_rc(dbfs_link(t.c, &u, td_fh(&f), td_fh(&d), "g", &fa, &w), 0);
    g_assert_cmpuint(fa.attr.nlink, ==, 2);
    a = td_lookup(&t, &u, td_fh(&d), "g");
    g_assert_cmpuint(a.ino, ==, f.ino);
    g_assert_cmpuint(a.nlink, ==, 2);
    g_assert_cmpuint(td_getattr(&t, td_fh(&d)).nlink, ==, 2);

    td_rc(dbfs_link(t.c, &u, td_fh(&f), td_fh(&d), "g", &fa, &w), -EEXIST);
    g_assert_true(w.have_post);
    td_rc(dbfs_link(t.c, &u, td_fh(&f), td_fh(&d), ".", &fa, &w), -EEXIST);
    td_rc(dbfs_link(t.c, &u, td_fh(&f), td_fh(&d), "", &fa, &w), -EINVAL);
    td_rc(dbfs_link(t.c, &u, td_fh(&d), t.root, "dlink", &fa, &w), -EISDIR);
    td_rc(dbfs_link(t.c, &u, td_fh(&f), td_fh(&f), "x", &fa, &w), -ENOTDIR);
    td_rc(dbfs_link(t.c, &v, td_fh(&f), td_fh(&d), "h", &fa, &w), -EACCES);
    td_rc(dbfs_link(t.c, &u, (dbfs_fh){f.ino, f.gen + 1, 0}, td_fh(&d), "h", &fa, &w), -ESTALE);
    g_assert_false(fa.valid);
    td_rc(dbfs_link(t.c, &u, td_fh(&f), (dbfs_fh){d.ino, d.gen + 1, 0}, "h", &fa, &w), -ESTALE);

    /* Removing one name keeps the data under the other. */
    td_rc(dbfs_remove(t.c, &u, t.root, "f", &w), 0);
    a = td_lookup(&t, &u, td_fh(&d), "g");
    g_assert_cmpuint(a.nlink, ==, 1);
    td_read(&t, &u, td_fh(&a), 0, buf, 4);
    g_assert_cmpmem(buf, 4, "data", 4);
    td_close(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/names/lookup", test_lookup);
    g_test_add_func("/names/create-modes", test_create_modes);
    g_test_add_func("/names/ownership", test_ownership);
    g_test_add_func("/names/nlink", test_nlink);
    g_test_add_func("/names/times", test_times);
    g_test_add_func("/names/symlink", test_symlink);
    g_test_add_func("/names/mknod", test_mknod);
    g_test_add_func("/names/remove", test_remove);
    g_test_add_func("/names/link", test_link);
    return g_test_run();
}
