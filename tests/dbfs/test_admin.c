/*
 * test_admin.c -- dbfs_admin (`pgnfs du`, `pgnfs find`): path resolution,
 * disk usage per directory (hard links once, children before parents,
 * depth limits) and find's tests (name patterns, type, size rounding,
 * depth, owner), on a tree built through the dbfs API in a fresh file
 * system, against numbers computed here from what was written.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "td.h"
#include "testlib.h"

/*
 * The tree:
 *   /d1/                      dir
 *   /d1/a.txt                 3000 bytes
 *   /d1/sub/                  dir
 *   /d1/sub/b.bin             10000 bytes
 *   /d1/sub/hard              hard link to b.bin
 *   /d2/                      dir
 *   /d2/c.txt                 1 byte, uid 1000
 *   (test_du links b.bin once more, as /d2/again)
 *   /top.txt                  600 bytes
 */
typedef struct {
    td_fs t;
    dbfs_admin *a;
    uint64_t d1, sub, d2, a_txt, b_bin;
    dbfs_fh b_fh, d2_fh;
} ta_env;

static void ta_fill(td_fs *t, dbfs_fh fh, uint32_t len)
{
    char *buf = g_malloc(len);
    dbfs_cred root = td_root();

    memset(buf, 'x', len);
    td_write(t, &root, fh, 0, buf, len);
    g_free(buf);
}

static void ta_setup(ta_env *e)
{
    dbfs_cred root = td_root();
    dbfs_attr_opt fa;
    dbfs_wcc w;

    td_open(&e->t);
    dbfs_attr d1 = td_mkdir(&e->t, &root, e->t.root, "d1", 0755);
    dbfs_attr sub = td_mkdir(&e->t, &root, td_fh(&d1), "sub", 0755);
    dbfs_attr d2 = td_mkdir(&e->t, &root, e->t.root, "d2", 0755);
    dbfs_attr a = td_create(&e->t, &root, td_fh(&d1), "a.txt", 0644);
    dbfs_attr b = td_create(&e->t, &root, td_fh(&sub), "b.bin", 0644);
    dbfs_attr c = td_create(&e->t, &root, td_fh(&d2), "c.txt", 0644);
    dbfs_attr top = td_create(&e->t, &root, e->t.root, "top.txt", 0644);
    ta_fill(&e->t, td_fh(&a), 3000);
    ta_fill(&e->t, td_fh(&b), 10000);
    ta_fill(&e->t, td_fh(&c), 1);
    ta_fill(&e->t, td_fh(&top), 600);
    td_chown(&e->t, &root, td_fh(&c), 1000, 1000);
    td_rc(dbfs_link(e->t.c, &root, td_fh(&b), td_fh(&sub), "hard", &fa, &w), 0);
    e->d1 = d1.ino;
    e->sub = sub.ino;
    e->d2 = d2.ino;
    e->a_txt = a.ino;
    e->b_bin = b.ino;
    e->b_fh = td_fh(&b);
    e->d2_fh = td_fh(&d2);
    td_rc(dbfs_admin_open(e->t.conninfo, &e->a), 0);
}

static void ta_teardown(ta_env *e)
{
    dbfs_admin_close(e->a);
    td_close(&e->t);
}

/* ---- collecting results ------------------------------------------------ */

typedef struct {
    GPtrArray *paths; /* char * */
    GArray *rows;     /* dbfs_du_entry with path NULL */
    int stop_after;   /* stop the walk after this many rows (0 = never) */
} ta_out;

static void ta_out_init(ta_out *o)
{
    o->paths = g_ptr_array_new_with_free_func(g_free);
    o->rows = g_array_new(FALSE, TRUE, sizeof(dbfs_du_entry));
    o->stop_after = 0;
}

static void ta_out_clear(ta_out *o)
{
    g_ptr_array_free(o->paths, TRUE);
    g_array_free(o->rows, TRUE);
}

static int ta_find_cb(const dbfs_find_entry *e, void *arg)
{
    ta_out *o = arg;

    g_ptr_array_add(o->paths, g_strndup(e->path, e->path_len));
    if (o->stop_after && (int)o->paths->len >= o->stop_after)
        return 42;
    return 0;
}

static int ta_du_cb(const dbfs_du_entry *e, void *arg)
{
    ta_out *o = arg;
    dbfs_du_entry copy = *e;

    copy.path = NULL;
    g_ptr_array_add(o->paths, g_strndup(e->path, e->path_len));
    g_array_append_val(o->rows, copy);
    return 0;
}

/* The paths found, joined by spaces. */
static char *ta_find(ta_env *e, uint64_t start, const dbfs_find_query *q)
{
    ta_out o;

    ta_out_init(&o);
    td_rc(dbfs_admin_find(e->a, start, q, ta_find_cb, &o), 0);
    g_ptr_array_add(o.paths, NULL);
    char *s = g_strjoinv(" ", (char **)o.paths->pdata);
    g_ptr_array_set_size(o.paths, o.paths->len - 1);
    ta_out_clear(&o);
    return s;
}

static dbfs_find_query ta_query(void)
{
    return (dbfs_find_query){.size_cmp = 2, .maxdepth = 1000, .uid = -1, .gid = -1};
}

/* ---- cases ------------------------------------------------------------- */

static void test_resolve(void)
{
    ta_env e;
    uint64_t ino;
    dbfs_type type;

    ta_setup(&e);
    td_rc(dbfs_admin_resolve(e.a, "/", &ino, &type), 0);
    g_assert_cmpuint(ino, ==, DBFS_ROOT_INO);
    g_assert_cmpint(type, ==, DBFS_DIR);
    td_rc(dbfs_admin_resolve(e.a, "//d1/./sub/", &ino, &type), 0);
    g_assert_cmpuint(ino, ==, e.sub);
    td_rc(dbfs_admin_resolve(e.a, "/d1/a.txt", &ino, &type), 0);
    g_assert_cmpuint(ino, ==, e.a_txt);
    g_assert_cmpint(type, ==, DBFS_REG);
    td_rc(dbfs_admin_resolve(e.a, "/d1/nope", &ino, &type), -ENOENT);
    td_rc(dbfs_admin_resolve(e.a, "/d1/a.txt/x", &ino, &type), -ENOTDIR);
    td_rc(dbfs_admin_resolve(e.a, "/d1/../d2", &ino, &type), -EINVAL);
    ta_teardown(&e);
}

static void test_du(void)
{
    ta_env e;
    ta_out o;

    ta_setup(&e);
    ta_out_init(&o);
    td_rc(dbfs_admin_du(e.a, DBFS_ROOT_INO, 1000, ta_du_cb, &o), 0);
    /* Children before parents, siblings by name. */
    g_assert_cmpuint(o.paths->len, ==, 4);
    g_assert_cmpstr(o.paths->pdata[0], ==, "/d1/sub");
    g_assert_cmpstr(o.paths->pdata[1], ==, "/d1");
    g_assert_cmpstr(o.paths->pdata[2], ==, "/d2");
    g_assert_cmpstr(o.paths->pdata[3], ==, "");
    const dbfs_du_entry *sub = &g_array_index(o.rows, dbfs_du_entry, 0);
    const dbfs_du_entry *d1 = &g_array_index(o.rows, dbfs_du_entry, 1);
    const dbfs_du_entry *all = &g_array_index(o.rows, dbfs_du_entry, 3);
    /* The hard link is counted once: sub holds itself and b.bin. */
    g_assert_cmpuint(sub->files, ==, 2);
    g_assert_cmpuint(sub->size, ==, 10000);
    g_assert_cmpuint(sub->used, ==, 10000);
    g_assert_cmpuint(d1->size, ==, 13000);
    g_assert_cmpuint(d1->files, ==, 4);
    g_assert_cmpuint(all->size, ==, 13601);
    g_assert_cmpuint(all->used, ==, 13601);
    g_assert_cmpuint(all->files, ==, 8); /* root, 3 dirs, 4 files */
    g_assert_cmpuint(all->depth, ==, 0);
    ta_out_clear(&o);

    /* Depth 1: the sizes stay, sub is not listed. */
    ta_out_init(&o);
    td_rc(dbfs_admin_du(e.a, DBFS_ROOT_INO, 1, ta_du_cb, &o), 0);
    g_assert_cmpuint(o.paths->len, ==, 3);
    g_assert_cmpstr(o.paths->pdata[0], ==, "/d1");
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 0).size, ==, 13000);
    ta_out_clear(&o);

    /* A file as the start: itself. */
    ta_out_init(&o);
    td_rc(dbfs_admin_du(e.a, e.a_txt, 1000, ta_du_cb, &o), 0);
    g_assert_cmpuint(o.paths->len, ==, 1);
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 0).used, ==, 3000);
    ta_out_clear(&o);

    /* A file with two links as the start: itself, once. */
    ta_out_init(&o);
    td_rc(dbfs_admin_du(e.a, e.b_bin, 1000, ta_du_cb, &o), 0);
    g_assert_cmpuint(o.paths->len, ==, 1);
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 0).files, ==, 1);
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 0).size, ==, 10000);
    ta_out_clear(&o);

    /* A third link in another directory: counted in d2, and still once
     * in the root, which holds all three names. */
    dbfs_cred root = td_root();
    dbfs_attr_opt fa;
    dbfs_wcc w;
    td_rc(dbfs_link(e.t.c, &root, e.b_fh, e.d2_fh, "again", &fa, &w), 0);
    ta_out_init(&o);
    td_rc(dbfs_admin_du(e.a, DBFS_ROOT_INO, 1, ta_du_cb, &o), 0);
    g_assert_cmpuint(o.paths->len, ==, 3);
    g_assert_cmpstr(o.paths->pdata[1], ==, "/d2");
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 1).files, ==, 3);
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 1).size, ==, 10001);
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 2).files, ==, 8);
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 2).size, ==, 13601);
    ta_out_clear(&o);

    /* A subtree of less than a tenth of the directories is read by index
     * (the other branch of the statement): the same sums. */
    for (int i = 0; i < 20; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "e%d", i);
        td_mkdir(&e.t, &root, e.t.root, nm, 0755);
    }
    ta_out_init(&o);
    td_rc(dbfs_admin_du(e.a, e.sub, 1000, ta_du_cb, &o), 0);
    g_assert_cmpuint(o.paths->len, ==, 1);
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 0).files, ==, 2);
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 0).size, ==, 10000);
    ta_out_clear(&o);
    ta_out_init(&o);
    td_rc(dbfs_admin_du(e.a, e.d1, 1000, ta_du_cb, &o), 0);
    g_assert_cmpuint(o.paths->len, ==, 2);
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 1).files, ==, 4);
    g_assert_cmpuint(g_array_index(o.rows, dbfs_du_entry, 1).size, ==, 13000);
    ta_out_clear(&o);
    ta_teardown(&e);
}

static void test_find(void)
{
    ta_env e;
    dbfs_find_query q = ta_query();
    char *s;

    ta_setup(&e);
    s = ta_find(&e, DBFS_ROOT_INO, &q);
    g_assert_cmpstr(s, ==,
                    " /d1 /d1/a.txt /d1/sub /d1/sub/b.bin /d1/sub/hard /d2 /d2/c.txt /top.txt");
    g_free(s);

    q.name_like = "%.txt";
    s = ta_find(&e, DBFS_ROOT_INO, &q);
    g_assert_cmpstr(s, ==, "/d1/a.txt /d2/c.txt /top.txt");
    g_free(s);

    q = ta_query();
    q.type = DBFS_DIR;
    q.mindepth = 1;
    s = ta_find(&e, DBFS_ROOT_INO, &q);
    g_assert_cmpstr(s, ==, "/d1 /d1/sub /d2");
    g_free(s);

    /* -size +5 (512-byte blocks, rounded up): 3000 -> 6, 10000 -> 20. */
    q = ta_query();
    q.type = DBFS_REG;
    q.size_cmp = 1;
    q.size_unit = 512;
    q.size_n = 5;
    s = ta_find(&e, DBFS_ROOT_INO, &q);
    g_assert_cmpstr(s, ==, "/d1/a.txt /d1/sub/b.bin /d1/sub/hard");
    g_free(s);
    /* -size -2: 600 bytes is 2 blocks, 1 byte is 1. */
    q.size_cmp = -1;
    q.size_n = 2;
    s = ta_find(&e, DBFS_ROOT_INO, &q);
    g_assert_cmpstr(s, ==, "/d2/c.txt");
    g_free(s);
    /* -size 600c */
    q.size_cmp = 0;
    q.size_unit = 1;
    q.size_n = 600;
    s = ta_find(&e, DBFS_ROOT_INO, &q);
    g_assert_cmpstr(s, ==, "/top.txt");
    g_free(s);

    q = ta_query();
    q.uid = 1000;
    s = ta_find(&e, DBFS_ROOT_INO, &q);
    g_assert_cmpstr(s, ==, "/d2/c.txt");
    g_free(s);

    q = ta_query();
    q.maxdepth = 1;
    q.mindepth = 1;
    s = ta_find(&e, e.d1, &q);
    g_assert_cmpstr(s, ==, "/a.txt /sub");
    g_free(s);

    /* A LIKE pattern's own characters are escaped by the caller. */
    q = ta_query();
    q.name_like = "a\\_txt";
    s = ta_find(&e, DBFS_ROOT_INO, &q);
    g_assert_cmpstr(s, ==, "");
    g_free(s);
    ta_teardown(&e);
}

static void test_find_stop(void)
{
    ta_env e;
    ta_out o;
    dbfs_find_query q = ta_query();
    uint64_t ino;
    dbfs_type type;

    ta_setup(&e);
    ta_out_init(&o);
    o.stop_after = 2;
    td_rc(dbfs_admin_find(e.a, DBFS_ROOT_INO, &q, ta_find_cb, &o), 42);
    g_assert_cmpuint(o.paths->len, ==, 2);
    ta_out_clear(&o);
    /* The connection is usable after a cancelled walk. */
    td_rc(dbfs_admin_resolve(e.a, "/d2", &ino, &type), 0);
    g_assert_cmpuint(ino, ==, e.d2);
    ta_teardown(&e);
}

static void test_no_fs(void)
{
    char *conninfo = tl_fresh_db();
    dbfs_admin *a = NULL;

    td_rc(dbfs_admin_open(conninfo, &a), -ENOENT);
    g_assert_null(a);
    g_free(conninfo);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/admin/resolve", test_resolve);
    g_test_add_func("/admin/du", test_du);
    g_test_add_func("/admin/find", test_find);
    g_test_add_func("/admin/find_stop", test_find_stop);
    g_test_add_func("/admin/no_fs", test_no_fs);
    return g_test_run();
}
