/*
 * test_readdir.c -- dbfs_readdir against a real database: "." and "..",
 * paging by cookie, eof, attributes with plus, cookies that stay valid
 * while entries come and go mid-listing, 10,000 entries listed exactly
 * once, errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "td.h"
#include "testlib.h"

static const uint32_t td_no_groups[1] = {0};

/* List the whole directory in pages of `page`, calling `between` (may be
 * NULL) after each page. Returns a table name -> times listed. */
static GHashTable *td_list_all(td_fs *t, const dbfs_cred *cr, dbfs_fh dir, uint32_t page, bool plus,
                               void (*between)(td_fs *, int), int *pages)
{
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    uint64_t cookie = 0, last = 0;
    bool eof = false;
    int n_pages = 0;

    while (!eof) {
        dbfs_dirent *e;
        size_t n;
        dbfs_attr_opt da;

        td_rc(dbfs_readdir(t->c, cr, dir, cookie, page, plus, &e, &n, &eof, &da), 0);
        g_assert_true(da.valid);
        g_assert_cmpuint(n, <=, page);
        g_assert_true(n > 0 || eof);
        for (size_t i = 0; i < n; i++) {
            gpointer old = g_hash_table_lookup(seen, e[i].name);

            g_hash_table_insert(seen, g_strdup(e[i].name),
                                GINT_TO_POINTER(GPOINTER_TO_INT(old) + 1));
            g_assert_cmpuint(e[i].cookie, >, last);
            last = e[i].cookie;
            g_assert_cmpint(e[i].has_attr, ==, plus);
            if (plus)
                g_assert_cmpuint(e[i].attr.ino, ==, e[i].ino);
        }
        if (n)
            cookie = e[n - 1].cookie;
        dbfs_dirents_free(e, n);
        n_pages++;
        if (between && !eof)
            between(t, n_pages);
    }
    if (pages)
        *pages = n_pages;
    return seen;
}

static void test_basic(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr d, f, sub;
    dbfs_dirent *e;
    dbfs_attr_opt da;
    size_t n;
    bool eof;

    td_open(&t);
    d = td_mkdir(&t, &u, t.root, "d", 0755);
    td_rc(dbfs_readdir(t.c, &u, td_fh(&d), 0, 100, false, &e, &n, &eof, &da), 0);
    g_assert_cmpuint(n, ==, 2);
    g_assert_true(eof);
    g_assert_cmpstr(e[0].name, ==, ".");
    g_assert_cmpuint(e[0].cookie, ==, 1);
    g_assert_cmpuint(e[0].ino, ==, d.ino);
    g_assert_cmpstr(e[1].name, ==, "..");
    g_assert_cmpuint(e[1].cookie, ==, 2);
    g_assert_cmpuint(e[1].ino, ==, DBFS_ROOT_INO);
    dbfs_dirents_free(e, n);

    f = td_create(&t, &u, td_fh(&d), "file", 0644);
    sub = td_mkdir(&t, &u, td_fh(&d), "sub", 0755);
    td_rc(dbfs_readdir(t.c, &u, td_fh(&d), 0, 100, true, &e, &n, &eof, &da), 0);
    g_assert_cmpuint(n, ==, 4);
    g_assert_true(eof);
    g_assert_cmpstr(e[2].name, ==, "file");
    g_assert_cmpuint(e[2].ino, ==, f.ino);
    g_assert_true(e[2].has_attr);
    g_assert_cmpmem(&e[2].attr, sizeof f, &f, sizeof f);
    g_assert_cmpstr(e[3].name, ==, "sub");
    g_assert_cmpuint(e[3].attr.nlink, ==, 2);
    g_assert_cmpuint(e[3].attr.gen, ==, sub.gen);
    g_assert_true(e[0].has_attr && e[1].has_attr);
    g_assert_cmpuint(e[0].attr.nlink, ==, 3);
    g_assert_cmpuint(e[1].attr.ino, ==, DBFS_ROOT_INO);
    g_assert_cmpuint(e[3].cookie, >, e[2].cookie);
    g_assert_cmpuint(e[2].cookie, >, 2);
    uint64_t c_file = e[2].cookie;
    dbfs_dirents_free(e, n);

    /* Small pages: ".", then "..", then entries; eof only at the end. */
    td_rc(dbfs_readdir(t.c, &u, td_fh(&d), 0, 1, false, &e, &n, &eof, &da), 0);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpstr(e[0].name, ==, ".");
    g_assert_false(eof);
    dbfs_dirents_free(e, n);
    td_rc(dbfs_readdir(t.c, &u, td_fh(&d), 1, 1, false, &e, &n, &eof, &da), 0);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpstr(e[0].name, ==, "..");
    g_assert_false(eof);
    dbfs_dirents_free(e, n);
    td_rc(dbfs_readdir(t.c, &u, td_fh(&d), 2, 1, false, &e, &n, &eof, &da), 0);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpstr(e[0].name, ==, "file");
    g_assert_false(eof);
    dbfs_dirents_free(e, n);
    td_rc(dbfs_readdir(t.c, &u, td_fh(&d), c_file, 1, false, &e, &n, &eof, &da), 0);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpstr(e[0].name, ==, "sub");
    g_assert_true(eof);
    uint64_t c_sub = e[0].cookie;
    dbfs_dirents_free(e, n);
    td_rc(dbfs_readdir(t.c, &u, td_fh(&d), c_sub + 1000, 10, false, &e, &n, &eof, &da), 0);
    g_assert_cmpuint(n, ==, 0);
    g_assert_true(eof);
    dbfs_dirents_free(e, n);
    td_rc(dbfs_readdir(t.c, &u, td_fh(&d), UINT64_MAX, 10, false, &e, &n, &eof, &da), 0);
    g_assert_cmpuint(n, ==, 0);
    g_assert_true(eof);
    dbfs_dirents_free(e, n);
    /* A page that ends exactly at the last entry is not known to be the
     * end unless nothing follows. */
    td_rc(dbfs_readdir(t.c, &u, td_fh(&d), 0, 4, false, &e, &n, &eof, &da), 0);
    g_assert_cmpuint(n, ==, 4);
    g_assert_true(eof);
    dbfs_dirents_free(e, n);
    td_rc(dbfs_readdir(t.c, &u, td_fh(&d), 0, 3, false, &e, &n, &eof, &da), 0);
    g_assert_cmpuint(n, ==, 3);
    g_assert_false(eof);
    dbfs_dirents_free(e, n);

    /* Errors. */
    td_rc(dbfs_readdir(t.c, &u, td_fh(&f), 0, 10, false, &e, &n, &eof, &da), -ENOTDIR);
    g_assert_null(e);
    td_rc(dbfs_readdir(t.c, &u, (dbfs_fh){d.ino, d.gen + 1, 0}, 0, 10, false, &e, &n, &eof, &da),
          -ESTALE);
    g_assert_false(da.valid);
    dbfs_cred v = td_user(1001, 200, 0, td_no_groups);
    td_chmod(&t, &u, td_fh(&d), 0711);
    td_rc(dbfs_readdir(t.c, &v, td_fh(&d), 0, 10, false, &e, &n, &eof, &da), -EACCES);
    g_assert_true(da.valid);
    td_chmod(&t, &u, td_fh(&d), 0744);
    td_rc(dbfs_readdir(t.c, &v, td_fh(&d), 0, 10, false, &e, &n, &eof, &da), 0);
    dbfs_dirents_free(e, n);
    td_close(&t);
}

/* State of the stability test: what is added and removed between pages. */
static dbfs_fh td_stab_dir;
static int td_stab_next;

static void td_stab_between(td_fs *t, int page)
{
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    char name[32];
    dbfs_wcc w;

    /* Remove one early and one late "gone" entry, add a "new" one. */
    g_snprintf(name, sizeof name, "gone%03d", page);
    td_rc(dbfs_remove(t->c, &u, td_stab_dir, name, &w), 0);
    g_snprintf(name, sizeof name, "gone%03d", 199 - page);
    td_rc(dbfs_remove(t->c, &u, td_stab_dir, name, &w), 0);
    g_snprintf(name, sizeof name, "new%03d", td_stab_next++);
    td_create(t, &u, td_stab_dir, name, 0644);
}

static void test_stability(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr d;
    GHashTable *seen;
    char name[32];
    int pages;

    td_open(&t);
    d = td_mkdir(&t, &u, t.root, "d", 0755);
    /* keep and gone entries interleaved. */
    for (int i = 0; i < 200; i++) {
        g_snprintf(name, sizeof name, "keep%03d", i);
        td_create(&t, &u, td_fh(&d), name, 0644);
        g_snprintf(name, sizeof name, "gone%03d", i);
        td_create(&t, &u, td_fh(&d), name, 0644);
    }
    td_stab_dir = td_fh(&d);
    td_stab_next = 0;
    seen = td_list_all(&t, &u, td_fh(&d), 17, false, td_stab_between, &pages);
    g_assert_cmpint(pages, >, 20);
    /* Every entry that lived through the listing: exactly once. No entry
     * twice. New entries (made after their position) appear at most once:
     * here all of them, since new cookies are larger. */
    for (int i = 0; i < 200; i++) {
        g_snprintf(name, sizeof name, "keep%03d", i);
        g_assert_cmpint(GPOINTER_TO_INT(g_hash_table_lookup(seen, name)), ==, 1);
    }
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, seen);
    while (g_hash_table_iter_next(&it, &k, &v))
        g_assert_cmpint(GPOINTER_TO_INT(v), ==, 1);
    for (int i = 0; i < td_stab_next; i++) {
        g_snprintf(name, sizeof name, "new%03d", i);
        g_assert_cmpint(GPOINTER_TO_INT(g_hash_table_lookup(seen, name)), ==, 1);
    }
    g_hash_table_destroy(seen);
    td_close(&t);
}

static void test_many(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr d;
    GHashTable *seen;
    char name[32];
    int pages;

    td_open(&t);
    d = td_mkdir(&t, &u, t.root, "many", 0755);
    for (int i = 0; i < 10000; i++) {
        dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0644};
        dbfs_attr a;
        dbfs_wcc w;

        g_snprintf(name, sizeof name, "entry-%05d", i);
        if (i % 10 == 0)
            td_rc(dbfs_mkdir(t.c, &u, td_fh(&d), name, &sa, &a, &w), 0);
        else
            td_rc(dbfs_create(t.c, &u, td_fh(&d), name, DBFS_CREATE_GUARDED, &sa, 0, &a, &w), 0);
    }
    g_assert_cmpuint(td_getattr(&t, td_fh(&d)).nlink, ==, 1002);
    seen = td_list_all(&t, &u, td_fh(&d), 1000, false, NULL, &pages);
    g_assert_cmpuint(g_hash_table_size(seen), ==, 10002);
    for (int i = 0; i < 10000; i++) {
        g_snprintf(name, sizeof name, "entry-%05d", i);
        g_assert_cmpint(GPOINTER_TO_INT(g_hash_table_lookup(seen, name)), ==, 1);
    }
    g_hash_table_destroy(seen);
    /* With attributes, in odd-sized pages, one round trip per page. */
    td_trips(&t);
    seen = td_list_all(&t, &u, td_fh(&d), 333, true, NULL, &pages);
    g_assert_cmpuint(td_trips(&t), ==, (uint64_t)pages);
    g_assert_cmpuint(g_hash_table_size(seen), ==, 10002);
    g_hash_table_destroy(seen);
    td_close(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/readdir/basic", test_basic);
    g_test_add_func("/readdir/stability", test_stability);
    g_test_add_func("/readdir/many", test_many);
    return g_test_run();
}
