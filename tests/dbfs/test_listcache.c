/*
 * test_listcache.c -- READDIR and READDIRPLUS through the listing cache
 * (cache/cache_dir.c, dbfs/dbfs_dirlist.c) against a real PostgreSQL:
 * every listing a dbfs with its caches gives equals what a dbfs without
 * caches reads from the same database (paged every way, from any cookie,
 * after every kind of change, across changes made mid-listing, for a
 * directory too large to cache, while another thread changes it), and
 * unchanged directories are listed with no round trip.
 *
 * NOTES
 *   Changes are made through the cached dbfs: as with any NFS server's
 *   attribute cache, a second server process writing the same database
 *   behind its back is not something the stat cache follows, and the
 *   listing cache is exact relative to it.
 */
#include <errno.h>
#include <string.h>

#include "td.h"
#include "testlib.h"

/* The cached file system (t) and a cache-less view of the same database
 * (ref, rc): what is stored. */
typedef struct {
    td_fs t;
    dbfs *ref;
    dbfs_conn *rc;
} tl_pair;

static void tl_open(tl_pair *p, uint32_t name_entries, uint64_t wb_bytes)
{
    dbfs_mkfs_opts o = {0};
    dbfs_config cfg = {0}, plain = {0};

    memset(p, 0, sizeof *p);
    tl_mkfs_opts(&o);
    o.root_mode = 0777;
    p->t.conninfo = tl_fresh_db();
    td_rc(dbfs_mkfs(p->t.conninfo, &o), 0);
    cfg.conninfo = p->t.conninfo;
    cfg.stat_cache_entries = 10000;
    cfg.name_cache_entries = name_entries;
    cfg.buffer_cache_bytes = 4u << 20;
    cfg.writeback_bytes = wb_bytes;
    cfg.writeback_file_bytes = wb_bytes / 2;
    td_rc(dbfs_open(&cfg, &p->t.fs), 0);
    td_rc(dbfs_conn_open(p->t.fs, &p->t.c), 0);
    p->t.root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(p->t.fs)->root_gen, 0};
    p->t.trips_mark = dbfs_conn_round_trips(p->t.c);
    plain.conninfo = p->t.conninfo;
    td_rc(dbfs_open(&plain, &p->ref), 0);
    td_rc(dbfs_conn_open(p->ref, &p->rc), 0);
}

static void tl_close(tl_pair *p)
{
    dbfs_conn_close(p->rc);
    dbfs_close(p->ref);
    td_close(&p->t);
}

/* One entry as text: cookie, inode, name, and for plus what a client
 * sees of the attributes (atime aside: reading may move it). */
static void tl_entry_text(GString *s, const dbfs_dirent *e, bool plus)
{
    g_string_append_printf(s, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %s", e->cookie, e->ino,
                           e->name);
    if (plus) {
        const dbfs_attr *a = &e->attr;

        g_assert_true(e->has_attr);
        g_string_append_printf(s,
                               " type=%d mode=%o nlink=%u uid=%u gid=%u size=%" G_GUINT64_FORMAT
                               " gen=%u mtime=%" G_GINT64_FORMAT " ctime=%" G_GINT64_FORMAT,
                               (int)a->type, a->mode, a->nlink, a->uid, a->gid, a->size, a->gen,
                               a->mtime_ns, a->ctime_ns);
    }
    g_string_append_c(s, '\n');
}

/* Pages of up to `page` entries from `cookie` on until eof (at most
 * `pages` of them; 0: no limit), as text; *last gets the cookie to resume
 * from. The directory's own attributes must come with every page. */
static char *tl_list_from(dbfs_conn *c, dbfs_fh dir, uint32_t page, bool plus, uint64_t cookie,
                          unsigned pages, uint64_t *last)
{
    dbfs_cred root = td_root();
    GString *s = g_string_new(NULL);
    bool eof = false;

    for (unsigned k = 0; !eof && (pages == 0 || k < pages); k++) {
        dbfs_dirent *e = NULL;
        dbfs_attr_opt da;
        size_t n = 0;

        td_rc(dbfs_readdir(c, &root, dir, cookie, page, plus, &e, &n, &eof, &da), 0);
        g_assert_true(da.valid);
        g_assert_cmpuint(da.attr.ino, ==, dir.ino);
        g_assert_cmpuint(n, <=, page);
        g_assert_true(n > 0 || eof);
        for (size_t i = 0; i < n; i++)
            tl_entry_text(s, &e[i], plus);
        if (n)
            cookie = e[n - 1].cookie;
        dbfs_dirents_free(e, n);
    }
    if (last)
        *last = cookie;
    return g_string_free(s, FALSE);
}

static char *tl_list(dbfs_conn *c, dbfs_fh dir, uint32_t page, bool plus)
{
    return tl_list_from(c, dir, page, plus, 0, 0, NULL);
}

/* The cached listing equals the stored one, plus and not, paged two ways. */
static void tl_expect_same(tl_pair *p, dbfs_fh dir, const char *what)
{
    static const uint32_t pages[] = {7, 1000};

    for (int plus = 0; plus < 2; plus++)
        for (size_t i = 0; i < G_N_ELEMENTS(pages); i++) {
            char *want = tl_list(p->rc, dir, pages[i], plus);
            char *got = tl_list(p->t.c, dir, pages[i], plus);

            if (strcmp(want, got) != 0)
                g_test_message("after %s (page %u, plus %d)", what, pages[i], plus);
            g_assert_cmpstr(got, ==, want);
            g_free(want);
            g_free(got);
        }
}

/* A directory of files, directories, a symbolic link and a FIFO, some
 * files with data. */
static dbfs_attr tl_populate(tl_pair *p, dbfs_fh parent, const char *name, int files)
{
    dbfs_cred root = td_root();
    dbfs_attr d = td_mkdir(&p->t, &root, parent, name, 0755), a;
    char nm[64];
    dbfs_wcc w;

    for (int i = 0; i < files; i++) {
        g_snprintf(nm, sizeof nm, "file-%03d%s", i, i % 5 ? "" : "-with-a-longer-name");
        a = td_create(&p->t, &root, td_fh(&d), nm, 0600 + (uint32_t)i % 8);
        if (i % 3 == 0)
            td_write(&p->t, &root, td_fh(&a), 0, nm, (uint32_t)strlen(nm));
    }
    td_mkdir(&p->t, &root, td_fh(&d), "sub1", 0700);
    td_mkdir(&p->t, &root, td_fh(&d), "sub2", 0750);
    td_rc(dbfs_symlink(p->t.c, &root, td_fh(&d), "link", "file-000", NULL, &a, &w), 0);
    td_rc(dbfs_mknod(p->t.c, &root, td_fh(&d), "fifo", DBFS_FIFO, 0, 0, NULL, &a, &w), 0);
    return d;
}

/* Every page size, plus or not, gives the stored listing; from any
 * cookie too; a second listing costs no round trip and counts hits. */
static void test_same(void)
{
    static const uint32_t pages[] = {1, 2, 3, 7, 13, 1000};
    tl_pair p;
    dbfs_cache_figures before, after;
    uint64_t mid;
    char *want, *got;

    tl_open(&p, 1000, 0);
    dbfs_attr d = tl_populate(&p, p.t.root, "d", 50);
    dbfs_fh dh = td_fh(&d);
    for (int plus = 0; plus < 2; plus++)
        for (size_t i = 0; i < G_N_ELEMENTS(pages); i++) {
            want = tl_list(p.rc, dh, pages[i], plus);
            got = tl_list(p.t.c, dh, pages[i], plus);
            g_assert_cmpstr(got, ==, want);
            g_free(want);
            g_free(got);
        }
    /* Unchanged: from memory, both kinds. */
    before = td_cache(p.t.fs, "listing");
    g_assert_true(before.enabled);
    g_assert_cmpuint(before.hits, >, 0);
    td_trips(&p.t);
    for (int plus = 0; plus < 2; plus++) {
        got = tl_list(p.t.c, dh, 5, plus);
        g_free(got);
    }
    g_assert_cmpuint(td_trips(&p.t), ==, 0);
    after = td_cache(p.t.fs, "listing");
    g_assert_cmpuint(after.hits, >=, before.hits + 2 * 12);
    /* Resuming from the middle, and from a cookie past the end. */
    g_free(tl_list_from(p.rc, dh, 10, true, 0, 2, &mid));
    want = tl_list_from(p.rc, dh, 4, true, mid, 0, NULL);
    got = tl_list_from(p.t.c, dh, 4, true, mid, 0, NULL);
    g_assert_cmpstr(got, ==, want);
    g_assert_cmpstr(got, !=, "");
    g_free(want);
    g_free(got);
    want = tl_list_from(p.rc, dh, 4, false, mid + 1, 0, NULL);
    got = tl_list_from(p.t.c, dh, 4, false, mid + 1, 0, NULL);
    g_assert_cmpstr(got, ==, want);
    g_free(want);
    g_free(got);
    got = tl_list_from(p.t.c, dh, 4, false, 1u << 30, 0, NULL);
    g_assert_cmpstr(got, ==, "");
    g_free(got);
    /* The root (its own parent), and an empty directory. */
    tl_expect_same(&p, p.t.root, "nothing (root)");
    dbfs_cred root = td_root();
    dbfs_attr e = td_mkdir(&p.t, &root, p.t.root, "empty", 0755);
    tl_expect_same(&p, td_fh(&e), "nothing (empty)");
    tl_close(&p);
}

/* After every kind of change, the listings of the directories it touched
 * are the stored ones. */
static void test_changes(void)
{
    dbfs_cred root = td_root();
    dbfs_cred u = td_user(1000, 1000, 0, NULL);
    tl_pair p;
    dbfs_wcc w, w2;
    dbfs_attr a, f;
    dbfs_attr_opt ao;

    tl_open(&p, 1000, 0);
    dbfs_attr d = tl_populate(&p, p.t.root, "d", 10);
    dbfs_attr o = tl_populate(&p, p.t.root, "o", 3);
    dbfs_fh dh = td_fh(&d), oh = td_fh(&o);
    f = td_lookup(&p.t, &root, dh, "file-001");
#define TL_STEP(what, ...)                                                                         \
    do {                                                                                           \
        tl_expect_same(&p, dh, "(before) " what);                                                  \
        tl_expect_same(&p, oh, "(before) " what);                                                  \
        __VA_ARGS__;                                                                               \
        tl_expect_same(&p, dh, what);                                                              \
        tl_expect_same(&p, oh, what);                                                              \
    } while (0)
    TL_STEP("create", td_create(&p.t, &root, dh, "new", 0644));
    TL_STEP("mkdir", td_mkdir(&p.t, &root, dh, "newdir", 0755));
    TL_STEP("symlink", td_rc(dbfs_symlink(p.t.c, &root, dh, "sl", "somewhere", NULL, &a, &w), 0));
    TL_STEP("link in", td_rc(dbfs_link(p.t.c, &root, td_fh(&f), oh, "hard", &ao, &w), 0));
    TL_STEP("remove", td_rc(dbfs_remove(p.t.c, &root, dh, "file-002", &w), 0));
    TL_STEP("remove a link", td_rc(dbfs_remove(p.t.c, &root, oh, "hard", &w), 0));
    TL_STEP("rmdir", td_rc(dbfs_rmdir(p.t.c, &root, dh, "newdir", &w), 0));
    TL_STEP("rename within", td_rc(dbfs_rename(p.t.c, &root, dh, "new", dh, "newer", &w, &w2), 0));
    TL_STEP("rename over",
            td_rc(dbfs_rename(p.t.c, &root, dh, "newer", dh, "file-003", &w, &w2), 0));
    TL_STEP("rename out",
            td_rc(dbfs_rename(p.t.c, &root, dh, "file-004", oh, "moved", &w, &w2), 0));
    TL_STEP("rename in over",
            td_rc(dbfs_rename(p.t.c, &root, oh, "moved", dh, "file-006", &w, &w2), 0));
    TL_STEP("rename a directory out",
            td_rc(dbfs_rename(p.t.c, &root, dh, "sub1", oh, "sub1", &w, &w2), 0));
    TL_STEP("chmod an entry", td_chmod(&p.t, &root, td_fh(&f), 0604));
    TL_STEP("chown an entry", td_chown(&p.t, &root, td_fh(&f), 1000, 1000));
    TL_STEP("write an entry", td_write(&p.t, &u, td_fh(&f), 100, "more", 4));
    TL_STEP("truncate an entry", {
        dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = 3};
        td_rc(dbfs_setattr(p.t.c, &root, td_fh(&f), &sa, NULL, &w), 0);
    });
    TL_STEP("chmod the directory", td_chmod(&p.t, &root, dh, 0711));
    /* The directory moves: its ".." changes. */
    TL_STEP("move the directory",
            td_rc(dbfs_rename(p.t.c, &root, p.t.root, "d", oh, "d", &w, &w2), 0));
    TL_STEP("move it back", td_rc(dbfs_rename(p.t.c, &root, oh, "d", p.t.root, "d2", &w, &w2), 0));
    /* A failed change changes nothing. */
    TL_STEP("a failed create",
            td_rc(dbfs_create(p.t.c, &root, dh, "file-001", DBFS_CREATE_GUARDED, NULL, 0, &a, &w),
                  -EEXIST));
    TL_STEP("a refused remove", td_rc(dbfs_remove(p.t.c, &u, dh, "file-007", &w), -EACCES));
#undef TL_STEP
    tl_close(&p);
}

/* A listing read a page at a time while entries come and go between the
 * pages gives what the stored directory gives for the same sequence. */
static void test_midlisting(void)
{
    dbfs_cred root = td_root();
    tl_pair p;
    dbfs_wcc w, w2;
    uint64_t kc, kr;

    tl_open(&p, 1000, 0);
    dbfs_attr d = tl_populate(&p, p.t.root, "d", 20);
    dbfs_fh dh = td_fh(&d);
    g_free(tl_list(p.t.c, dh, 1000, true)); /* cached */
    GString *got = g_string_new(NULL), *want = g_string_new(NULL);
    char *s;

    s = tl_list_from(p.t.c, dh, 6, true, 0, 1, &kc);
    g_string_append(got, s);
    g_free(s);
    s = tl_list_from(p.rc, dh, 6, true, 0, 1, &kr);
    g_string_append(want, s);
    g_free(s);
    g_assert_cmpuint(kc, ==, kr);
    /* One entry ahead goes, one behind goes, one is renamed, one comes. */
    td_rc(dbfs_remove(p.t.c, &root, dh, "file-010-with-a-longer-name", &w), 0);
    td_rc(dbfs_remove(p.t.c, &root, dh, "file-000-with-a-longer-name", &w), 0);
    td_rc(dbfs_rename(p.t.c, &root, dh, "file-012", dh, "renamed", &w, &w2), 0);
    td_create(&p.t, &root, dh, "late", 0644);
    s = tl_list_from(p.t.c, dh, 6, true, kc, 0, NULL);
    g_string_append(got, s);
    g_free(s);
    s = tl_list_from(p.rc, dh, 6, true, kr, 0, NULL);
    g_string_append(want, s);
    g_free(s);
    g_assert_cmpstr(got->str, ==, want->str);
    g_assert_nonnull(strstr(got->str, " late "));
    g_assert_null(strstr(got->str, "file-010"));
    g_string_free(got, TRUE);
    g_string_free(want, TRUE);
    tl_close(&p);
}

/* A directory with more entries than a listing may hold is listed from
 * the database, right, and counts no hits. */
static void test_large(void)
{
    tl_pair p;
    dbfs_cache_figures before, after;

    tl_open(&p, 64, 0); /* 4096 bytes of listings: about 20 entries each */
    dbfs_attr d = tl_populate(&p, p.t.root, "big", 60);
    dbfs_attr s = tl_populate(&p, p.t.root, "small", 3);
    tl_expect_same(&p, td_fh(&d), "nothing (large)");
    before = td_cache(p.t.fs, "listing");
    tl_expect_same(&p, td_fh(&d), "nothing (large, again)");
    after = td_cache(p.t.fs, "listing");
    g_assert_cmpuint(after.hits, ==, before.hits);
    g_assert_cmpuint(after.misses, >, before.misses);
    /* A small one beside it is still cached. */
    tl_expect_same(&p, td_fh(&s), "nothing (small)");
    before = td_cache(p.t.fs, "listing");
    td_trips(&p.t);
    g_free(tl_list(p.t.c, td_fh(&s), 1000, true));
    g_assert_cmpuint(td_trips(&p.t), ==, 0);
    after = td_cache(p.t.fs, "listing");
    g_assert_cmpuint(after.hits, ==, before.hits + 1);
    tl_close(&p);
}

/* UNSTABLE writes still in the write-back buffer show in READDIRPLUS's
 * attributes as in GETATTR's. */
static void test_writeback(void)
{
    dbfs_cred root = td_root();
    tl_pair p;
    char data[5000];
    dbfs_stable st;
    dbfs_wcc w;
    dbfs_attr now;
    dbfs_dirent *e = NULL;
    dbfs_attr_opt da;
    size_t n = 0;
    bool eof;
    int found = 0;

    tl_open(&p, 1000, 16u << 20);
    dbfs_attr d = tl_populate(&p, p.t.root, "d", 4);
    dbfs_attr f = td_lookup(&p.t, &root, td_fh(&d), "file-001");
    g_free(tl_list(p.t.c, td_fh(&d), 1000, true));
    memset(data, 'x', sizeof data);
    td_rc(dbfs_write(p.t.c, &root, td_fh(&f), 0, data, sizeof data, DBFS_UNSTABLE, &st, &w), 0);
    td_rc(dbfs_getattr(p.t.c, td_fh(&f), &now), 0);
    g_assert_cmpuint(now.size, ==, sizeof data);
    td_rc(dbfs_readdir(p.t.c, &root, td_fh(&d), 0, 1000, true, &e, &n, &eof, &da), 0);
    for (size_t i = 0; i < n; i++)
        if (e[i].ino == f.ino) {
            found++;
            g_assert_cmpuint(e[i].attr.size, ==, now.size);
            g_assert_cmpint(e[i].attr.mtime_ns, ==, now.mtime_ns);
        }
    g_assert_cmpint(found, ==, 1);
    dbfs_dirents_free(e, n);
    td_rc(dbfs_commit(p.t.c, td_fh(&f), 0, 0, &w), 0);
    tl_expect_same(&p, td_fh(&d), "COMMIT");
    tl_close(&p);
}

/* One thread makes and removes names while another lists: every listing
 * is whole (the dots, every stable name once, no name twice), and at the
 * end the cached listing is the stored one. The writer goes on past
 * TL_WRITES until TL_LISTINGS listings were made while it wrote (whatever
 * the scheduler did), within TL_DEADLINE_US. */
enum { TL_WRITES = 300, TL_LISTINGS = 20 };
#define TL_DEADLINE_US (120 * G_USEC_PER_SEC)

typedef struct {
    tl_pair *p;
    dbfs_fh dir;
    gint stop;
    gint listings;
} tl_race;

static gpointer tl_writer(gpointer arg)
{
    tl_race *r = arg;
    dbfs_cred root = td_root();
    int64_t deadline = g_get_monotonic_time() + TL_DEADLINE_US;
    dbfs_conn *c;
    char nm[32];

    td_rc(dbfs_conn_open(r->p->t.fs, &c), 0);
    for (int i = 0; i < TL_WRITES || g_atomic_int_get(&r->listings) < TL_LISTINGS; i++) {
        dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0644};
        dbfs_attr a;
        dbfs_wcc w;

        if (g_get_monotonic_time() > deadline)
            g_error("no %d listings in %d s of changes", TL_LISTINGS,
                    (int)(TL_DEADLINE_US / G_USEC_PER_SEC));
        g_snprintf(nm, sizeof nm, "t%d", i);
        td_rc(dbfs_create(c, &root, r->dir, nm, DBFS_CREATE_GUARDED, &sa, 0, &a, &w), 0);
        if (i % 2 == 0) {
            g_snprintf(nm, sizeof nm, "t%d", i / 2);
            td_rc(dbfs_remove(c, &root, r->dir, nm, &w), 0);
        }
    }
    g_atomic_int_set(&r->stop, 1);
    dbfs_conn_close(c);
    return NULL;
}

/* One listing of the race, checked. */
static void tl_race_listing(tl_race *r, bool plus)
{
    char *s = tl_list(r->p->t.c, r->dir, 5, plus);
    gchar **lines = g_strsplit(s, "\n", -1);
    GHashTable *names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    guint stable = 0;

    for (gchar **l = lines; *l && **l; l++) {
        gchar **f = g_strsplit(*l, " ", 4);

        g_assert_nonnull(f[2]);
        g_assert_false(g_hash_table_contains(names, f[2]));
        g_hash_table_add(names, g_strdup(f[2]));
        if (f[2][0] != 't')
            stable++;
        g_strfreev(f);
    }
    g_assert_true(g_hash_table_contains(names, "."));
    g_assert_true(g_hash_table_contains(names, ".."));
    g_assert_cmpuint(stable, ==, 2 + 10 + 4); /* dots, files, sub1, sub2, link, fifo */
    g_hash_table_destroy(names);
    g_strfreev(lines);
    g_free(s);
}

static void test_race(void)
{
    tl_pair p;
    tl_race r = {.p = &p};
    GThread *th;
    int listings = 0;

    tl_open(&p, 1000, 0);
    dbfs_attr d = tl_populate(&p, p.t.root, "d", 10);
    r.dir = td_fh(&d);
    th = g_thread_new("writer", tl_writer, &r);
    while (!g_atomic_int_get(&r.stop)) {
        tl_race_listing(&r, listings % 2 == 0);
        listings++;
        g_atomic_int_set(&r.listings, listings);
    }
    g_thread_join(th);
    tl_race_listing(&r, true);
    tl_expect_same(&p, r.dir, "the race");
    g_test_message("%d listings beside the writer", listings);
    g_assert_cmpint(listings, >=, TL_LISTINGS);
    tl_close(&p);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/listcache/same", test_same);
    g_test_add_func("/listcache/changes", test_changes);
    g_test_add_func("/listcache/midlisting", test_midlisting);
    g_test_add_func("/listcache/large", test_large);
    g_test_add_func("/listcache/writeback", test_writeback);
    g_test_add_func("/listcache/race", test_race);
    return g_test_run();
}
