/*
 * test_rename.c -- dbfs_rename against a real database: same and cross
 * directory, over each kind of target, link counts and "..", a directory
 * into its own subtree, the same file under two names, names, permissions
 * and sticky directories, which times move.
 */
#include <errno.h>
#include <string.h>

#include "td.h"
#include "testlib.h"

static const uint32_t td_no_groups[1] = {0};

static void test_same_dir(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr d, f, a;
    dbfs_wcc fw, tw;

    td_open(&t);
    d = td_mkdir(&t, &u, t.root, "d", 0755);
    f = td_create(&t, &u, td_fh(&d), "a", 0644);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "a", td_fh(&d), "b", &fw, &tw), 0);
    td_rc(dbfs_lookup(t.c, &u, td_fh(&d), "a", &a, NULL), -ENOENT);
    a = td_lookup(&t, &u, td_fh(&d), "b");
    g_assert_cmpuint(a.ino, ==, f.ino);
    g_assert_cmpuint(a.nlink, ==, 1);
    /* The object's ctime moves, its mtime does not; the directory's both. */
    g_assert_cmpint(a.ctime_ns, >, f.ctime_ns);
    g_assert_cmpint(a.mtime_ns, ==, f.mtime_ns);
    g_assert_true(fw.have_pre && fw.have_post && tw.have_pre && tw.have_post);
    g_assert_cmpint(fw.post.mtime_ns, >, fw.pre_mtime_ns);
    g_assert_cmpint(tw.post.ctime_ns, >, tw.pre_ctime_ns);
    g_assert_cmpuint(fw.post.nlink, ==, 2);

    /* Names and missing sources. */
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "nope", td_fh(&d), "c", &fw, &tw), -ENOENT);
    g_assert_true(fw.have_post && tw.have_post);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), ".", td_fh(&d), "c", &fw, &tw), -EINVAL);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "..", td_fh(&d), "c", &fw, &tw), -EINVAL);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "b", td_fh(&d), ".", &fw, &tw), -EINVAL);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "b", td_fh(&d), "..", &fw, &tw), -EINVAL);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "", td_fh(&d), "c", &fw, &tw), -ENOENT);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "b", td_fh(&d), "", &fw, &tw), -EINVAL);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "b", td_fh(&d), "x/y", &fw, &tw), -EINVAL);
    td_rc(dbfs_rename(t.c, &u, (dbfs_fh){d.ino, d.gen + 1, 0}, "b", t.root, "c", &fw, &tw),
          -ESTALE);
    g_assert_false(fw.have_post);
    g_assert_true(tw.have_post);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "b", td_fh(&a), "c", &fw, &tw), -ENOTDIR);
    /* Renaming onto itself changes nothing. */
    a = td_lookup(&t, &u, td_fh(&d), "b");
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "b", td_fh(&d), "b", &fw, &tw), 0);
    g_assert_cmpuint(td_lookup(&t, &u, td_fh(&d), "b").change, ==, a.change);
    td_close(&t);
}

static void test_cross_dir(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr p1, p2, sub, f, a;
    dbfs_wcc fw, tw;

    td_open(&t);
    p1 = td_mkdir(&t, &u, t.root, "p1", 0755);
    p2 = td_mkdir(&t, &u, t.root, "p2", 0755);
    sub = td_mkdir(&t, &u, td_fh(&p1), "sub", 0755);
    f = td_create(&t, &u, td_fh(&p1), "f", 0644);
    td_mkdir(&t, &u, td_fh(&sub), "inner", 0755);

    /* A file: parents' nlink unchanged. */
    td_rc(dbfs_rename(t.c, &u, td_fh(&p1), "f", td_fh(&p2), "g", &fw, &tw), 0);
    g_assert_cmpuint(fw.post.nlink, ==, 3);
    g_assert_cmpuint(tw.post.nlink, ==, 2);
    g_assert_cmpuint(fw.post.ino, ==, p1.ino);
    g_assert_cmpuint(tw.post.ino, ==, p2.ino);
    g_assert_cmpint(tw.post.mtime_ns, >, p2.mtime_ns);
    a = td_lookup(&t, &u, td_fh(&p2), "g");
    g_assert_cmpuint(a.ino, ==, f.ino);

    /* A directory: nlink moves from one parent to the other, and its ".."
     * follows. */
    td_rc(dbfs_rename(t.c, &u, td_fh(&p1), "sub", td_fh(&p2), "sub2", &fw, &tw), 0);
    g_assert_cmpuint(fw.post.nlink, ==, 2);
    g_assert_cmpuint(tw.post.nlink, ==, 3);
    a = td_lookup(&t, &u, td_fh(&sub), "..");
    g_assert_cmpuint(a.ino, ==, p2.ino);
    a = td_lookup(&t, &u, td_fh(&sub), "inner");
    g_assert_cmpuint(td_lookup(&t, &u, td_fh(&a), "..").ino, ==, sub.ino);
    g_assert_cmpuint(td_getattr(&t, td_fh(&sub)).nlink, ==, 3);
    td_close(&t);
}

static void test_over_targets(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr d, f1, f2, h, d1, d2, a;
    dbfs_attr_opt fa;
    dbfs_wcc fw, tw;
    char buf[2];

    td_open(&t);
    d = td_mkdir(&t, &u, t.root, "d", 0755);
    f1 = td_create(&t, &u, td_fh(&d), "f1", 0644);
    f2 = td_create(&t, &u, td_fh(&d), "f2", 0644);
    td_write(&t, &u, td_fh(&f1), 0, "11", 2);
    td_write(&t, &u, td_fh(&f2), 0, "22", 2);

    /* File over file: the target goes with its data. */
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "f1", td_fh(&d), "f2", &fw, &tw), 0);
    td_rc(dbfs_getattr(t.c, td_fh(&f2), &a), -ESTALE);
    a = td_lookup(&t, &u, td_fh(&d), "f2");
    g_assert_cmpuint(a.ino, ==, f1.ino);
    td_read(&t, &u, td_fh(&a), 0, buf, 2);
    g_assert_cmpmem(buf, 2, "11", 2);

    /* File over a file with another name: the target loses one link. */
    h = td_create(&t, &u, td_fh(&d), "h", 0644);
    td_rc(dbfs_link(t.c, &u, td_fh(&h), t.root, "h-other", &fa, &fw), 0);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "f2", td_fh(&d), "h", &fw, &tw), 0);
    a = td_getattr(&t, td_fh(&h));
    g_assert_cmpuint(a.nlink, ==, 1);
    g_assert_cmpint(a.ctime_ns, >, h.ctime_ns);

    /* Directory over an empty directory; over a non-empty one. */
    d1 = td_mkdir(&t, &u, td_fh(&d), "d1", 0755);
    d2 = td_mkdir(&t, &u, td_fh(&d), "d2", 0755);
    g_assert_cmpuint(td_getattr(&t, td_fh(&d)).nlink, ==, 4);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "d1", td_fh(&d), "d2", &fw, &tw), 0);
    g_assert_cmpuint(fw.post.nlink, ==, 3);
    td_rc(dbfs_getattr(t.c, td_fh(&d2), &a), -ESTALE);
    g_assert_cmpuint(td_lookup(&t, &u, td_fh(&d), "d2").ino, ==, d1.ino);
    td_mkdir(&t, &u, td_fh(&d), "d3", 0755);
    td_create(&t, &u, td_fh(&d1), "content", 0644);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "d3", td_fh(&d), "d2", &fw, &tw), -ENOTEMPTY);
    g_assert_true(fw.have_post && tw.have_post);

    /* Directory over a file, file over a directory. */
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "d3", td_fh(&d), "h", &fw, &tw), -ENOTDIR);
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "h", td_fh(&d), "d3", &fw, &tw), -EISDIR);

    /* Cross-directory directory over an empty directory: counts stay
     * right on both sides. */
    dbfs_attr e = td_mkdir(&t, &u, t.root, "e", 0755);
    td_mkdir(&t, &u, td_fh(&e), "victim", 0755);
    uint32_t root_links = td_getattr(&t, t.root).nlink;
    td_rc(dbfs_rename(t.c, &u, td_fh(&d), "d3", td_fh(&e), "victim", &fw, &tw), 0);
    g_assert_cmpuint(fw.post.nlink, ==, 3);
    g_assert_cmpuint(tw.post.nlink, ==, 3);
    g_assert_cmpuint(td_getattr(&t, t.root).nlink, ==, root_links);
    td_close(&t);
}

static void test_subtree(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr a, b, c, x;
    dbfs_wcc fw, tw;

    td_open(&t);
    a = td_mkdir(&t, &u, t.root, "a", 0755);
    b = td_mkdir(&t, &u, td_fh(&a), "b", 0755);
    c = td_mkdir(&t, &u, td_fh(&b), "c", 0755);
    td_rc(dbfs_rename(t.c, &u, t.root, "a", td_fh(&c), "a", &fw, &tw), -EINVAL);
    td_rc(dbfs_rename(t.c, &u, t.root, "a", td_fh(&a), "x", &fw, &tw), -EINVAL);
    td_rc(dbfs_rename(t.c, &u, td_fh(&a), "b", td_fh(&c), "b", &fw, &tw), -EINVAL);
    g_assert_true(fw.have_post && tw.have_post);
    /* A target that is an ancestor of the source is not empty. */
    td_rc(dbfs_rename(t.c, &u, td_fh(&b), "c", t.root, "a", &fw, &tw), -ENOTEMPTY);
    /* Moving up and sideways is fine. */
    td_rc(dbfs_rename(t.c, &u, td_fh(&b), "c", t.root, "c", &fw, &tw), 0);
    x = td_lookup(&t, &u, td_fh(&c), "..");
    g_assert_cmpuint(x.ino, ==, DBFS_ROOT_INO);
    td_rc(dbfs_rename(t.c, &u, t.root, "a", td_fh(&c), "a", &fw, &tw), 0);
    g_assert_cmpuint(td_lookup(&t, &u, td_fh(&a), "..").ino, ==, c.ino);
    td_close(&t);
}

static void test_same_file(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr f, a;
    dbfs_attr_opt fa;
    dbfs_wcc fw, tw;

    td_open(&t);
    f = td_create(&t, &u, t.root, "a", 0644);
    td_rc(dbfs_link(t.c, &u, td_fh(&f), t.root, "b", &fa, &fw), 0);
    td_rc(dbfs_rename(t.c, &u, t.root, "a", t.root, "b", &fw, &tw), 0);
    /* POSIX: both names stay. */
    a = td_lookup(&t, &u, t.root, "a");
    g_assert_cmpuint(a.ino, ==, f.ino);
    g_assert_cmpuint(a.nlink, ==, 2);
    a = td_lookup(&t, &u, t.root, "b");
    g_assert_cmpuint(a.ino, ==, f.ino);
    td_close(&t);
}

static void test_permissions(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_cred v = td_user(1001, 100, 0, td_no_groups);
    dbfs_attr ud, vd, s, sub;
    dbfs_wcc fw, tw;

    td_open(&t);
    ud = td_mkdir(&t, &u, t.root, "ud", 0755);
    vd = td_mkdir(&t, &v, t.root, "vd", 0777);
    td_create(&t, &u, td_fh(&ud), "f", 0644);
    /* No write permission on the source directory. */
    td_rc(dbfs_rename(t.c, &v, td_fh(&ud), "f", td_fh(&vd), "f", &fw, &tw), -EACCES);
    /* No write permission on the target directory. */
    td_create(&t, &v, td_fh(&vd), "g", 0644);
    td_rc(dbfs_rename(t.c, &v, td_fh(&vd), "g", td_fh(&ud), "g", &fw, &tw), -EACCES);
    /* A directory that changes parent needs write permission on itself
     * (its ".." changes); in the same parent it does not. */
    sub = td_mkdir(&t, &u, td_fh(&vd), "usub", 0555);
    td_rc(dbfs_rename(t.c, &u, td_fh(&vd), "usub", t.root, "usub", &fw, &tw), -EACCES);
    dbfs_cred v2 = td_user(1001, 100, 0, td_no_groups);
    td_rc(dbfs_rename(t.c, &v2, td_fh(&vd), "usub", td_fh(&vd), "usub2", &fw, &tw), 0);
    td_chmod(&t, &u, td_fh(&sub), 0755);
    td_rc(dbfs_rename(t.c, &u, td_fh(&vd), "usub2", t.root, "usub", &fw, &tw), 0);

    /* Sticky directory: renaming away or over another's entry. */
    s = td_mkdir(&t, &root, t.root, "sticky", 01777);
    td_create(&t, &u, td_fh(&s), "ufile", 0644);
    td_create(&t, &v, td_fh(&s), "vfile", 0644);
    td_rc(dbfs_rename(t.c, &v, td_fh(&s), "ufile", td_fh(&s), "mine", &fw, &tw), -EPERM);
    td_rc(dbfs_rename(t.c, &v, td_fh(&s), "vfile", td_fh(&s), "ufile", &fw, &tw), -EPERM);
    td_rc(dbfs_rename(t.c, &v, td_fh(&s), "vfile", td_fh(&s), "vfile2", &fw, &tw), 0);
    td_rc(dbfs_rename(t.c, &u, td_fh(&s), "ufile", td_fh(&s), "vfile2", &fw, &tw), -EPERM);
    td_rc(dbfs_rename(t.c, &root, td_fh(&s), "ufile", td_fh(&s), "vfile2", &fw, &tw), 0);
    td_close(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rename/same-dir", test_same_dir);
    g_test_add_func("/rename/cross-dir", test_cross_dir);
    g_test_add_func("/rename/over-targets", test_over_targets);
    g_test_add_func("/rename/subtree", test_subtree);
    g_test_add_func("/rename/same-file", test_same_file);
    g_test_add_func("/rename/permissions", test_permissions);
    return g_test_run();
}
