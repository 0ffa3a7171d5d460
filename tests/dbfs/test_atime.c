/*
 * test_atime.c -- deferred atime updates (dbfs/dbfs_atime.h), against a
 * real database: on an async connection a hot small file's LOOKUP and
 * READ make no round trip even when relatime says atime must move; the
 * new atime is what GETATTR shows at once, and what the database holds
 * after the write-back flusher's pass (dbfs_wb_flush_due), with the stat
 * cache told (no round trip, atime never goes back). A file written after
 * the READ gets the READ's atime; a file removed before the flush costs
 * nothing and leaves nothing waiting. On a sync connection the READ still
 * updates atime in its own round trip. A READ from memory alone
 * (dbfs_read_quick) defers it for an async export only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cache_lru.h"
#include "dbfs_atime.h"
#include "td.h"
#include "testlib.h"

typedef struct {
    char *conninfo;
    dbfs *fs, *truth;
    dbfs_conn *c, *flusher, *tc;
    dbfs_fh root;
} at_fs;

/* A dbfs with relatime, the stat, naming and small-file caches and
 * write-back; connection c (async as asked) and the flusher's; and a
 * cache-less truth of the same database. */
static void at_open(at_fs *t, bool async)
{
    dbfs_mkfs_opts o = {.chunk_size = 4096, .root_mode = 0777};
    dbfs_config cfg = {.relatime = true,
                       .stat_cache_entries = 1000,
                       .name_cache_entries = 1000,
                       .small_cache_bytes = 1u << 20,
                       .small_file_bytes = 8192,
                       .writeback_bytes = 8u << 20};
    dbfs_config plain = {.relatime = true};

    memset(t, 0, sizeof *t);
    t->conninfo = tl_fresh_db();
    td_rc(dbfs_mkfs(t->conninfo, &o), 0);
    cfg.conninfo = plain.conninfo = t->conninfo;
    td_rc(dbfs_open(&cfg, &t->fs), 0);
    td_rc(dbfs_open(&plain, &t->truth), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c), 0);
    td_rc(dbfs_conn_open(t->fs, &t->flusher), 0);
    td_rc(dbfs_conn_open(t->truth, &t->tc), 0);
    dbfs_conn_set_async(t->c, async);
    t->root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t->fs)->root_gen, 0};
}

/* The real-time clock in ns, as dbfs stamps times. */
static int64_t at_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void at_close(at_fs *t)
{
    dbfs_conn_close(t->c);
    dbfs_conn_close(t->flusher);
    dbfs_conn_close(t->tc);
    dbfs_close(t->fs);
    dbfs_close(t->truth);
    g_free(t->conninfo);
}

/* A new file name of 3000 bytes, written UNSTABLE and committed on c (so
 * the small-file cache knows it whole). */
static dbfs_attr at_file(at_fs *t, const char *name, unsigned char *d)
{
    dbfs_cred root = {0};
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0644};
    dbfs_attr a;
    dbfs_wcc w;
    dbfs_stable st;

    for (unsigned i = 0; i < 3000; i++)
        d[i] = (unsigned char)(i * 13 + name[0]);
    td_rc(dbfs_create(t->c, &root, t->root, name, DBFS_CREATE_GUARDED, &sa, 0, &a, &w), 0);
    td_rc(dbfs_write(t->c, &root, td_fh(&a), 0, d, 3000, DBFS_UNSTABLE, &st, &w), 0);
    td_rc(dbfs_commit(t->c, td_fh(&a), 0, 0, &w), 0);
    return a;
}

/* The file's atime as the database holds it (the cache-less truth). */
static int64_t at_stored_atime(at_fs *t, dbfs_fh fh)
{
    dbfs_attr a;

    td_rc(dbfs_getattr(t->tc, fh, &a), 0);
    return a.atime_ns;
}

/* A READ of all of fh on t->c: its bytes equal d; returns the attributes
 * it answered, *trips the round trips it made. */
static dbfs_attr at_read(at_fs *t, dbfs_fh fh, const unsigned char *d, uint64_t *trips)
{
    dbfs_cred root = {0};
    unsigned char back[4096];
    uint64_t before = dbfs_conn_round_trips(t->c);
    dbfs_attr_opt a;
    uint32_t n;
    bool eof;

    td_rc(dbfs_read(t->c, &root, fh, 0, sizeof back, back, &n, &eof, &a), 0);
    *trips = dbfs_conn_round_trips(t->c) - before;
    g_assert_cmpuint(n, ==, 3000);
    g_assert_true(eof);
    g_assert_cmpmem(back, n, d, 3000);
    g_assert_true(a.valid);
    return a.attr;
}

/* Async: LOOKUP and READ of a cached small file make no round trip, the
 * atime moves for clients at once and in the database at the flush. */
static void test_deferred(void)
{
    at_fs t;
    dbfs_cred root = {0};
    unsigned char d[3000];
    dbfs_attr f, l, g, r1, r2;
    uint64_t trips;

    at_open(&t, true);
    f = at_file(&t, "f", d);
    dbfs_fh fh = td_fh(&f);
    td_rc(dbfs_getattr(t.c, fh, &g), 0);
    int64_t old = g.atime_ns;
    g_assert_cmpint(old, <=, g.mtime_ns); /* so a READ is due to move it */

    trips = dbfs_conn_round_trips(t.c);
    td_rc(dbfs_lookup(t.c, &root, t.root, "f", &l, NULL), 0);
    g_assert_cmpuint(dbfs_conn_round_trips(t.c) - trips, ==, 0);
    g_assert_cmpuint(l.ino, ==, f.ino);

    int64_t t0 = at_now_ns();
    r1 = at_read(&t, fh, d, &trips);
    g_assert_cmpuint(trips, ==, 0);
    g_assert_cmpint(r1.atime_ns, >=, t0);
    g_assert_cmpint(r1.ctime_ns, ==, g.ctime_ns); /* atime is no change of ctime */
    g_assert_cmpuint(dbfs_atime_waiting(t.fs), ==, 1);
    /* Clients see it at once; the database does not hold it yet. */
    trips = dbfs_conn_round_trips(t.c);
    td_rc(dbfs_getattr(t.c, fh, &g), 0);
    td_rc(dbfs_lookup(t.c, &root, t.root, "f", &l, NULL), 0);
    g_assert_cmpuint(dbfs_conn_round_trips(t.c) - trips, ==, 0);
    g_assert_cmpint(g.atime_ns, ==, r1.atime_ns);
    g_assert_cmpint(l.atime_ns, ==, r1.atime_ns);
    g_assert_cmpint(at_stored_atime(&t, fh), ==, old);

    /* Read again: not due any more (relatime), nothing new waits. */
    r2 = at_read(&t, fh, d, &trips);
    g_assert_cmpuint(trips, ==, 0);
    g_assert_cmpint(r2.atime_ns, ==, r1.atime_ns);

    /* The flusher's pass stores it, in one round trip, and tells the
     * stat cache: GETATTR on c still makes none and agrees. */
    uint64_t ft = dbfs_conn_round_trips(t.flusher);
    g_assert_cmpint(dbfs_wb_flush_due(t.flusher, 0), >=, 1);
    g_assert_cmpuint(dbfs_conn_round_trips(t.flusher) - ft, ==, 1);
    g_assert_cmpuint(dbfs_atime_waiting(t.fs), ==, 0);
    g_assert_cmpint(at_stored_atime(&t, fh), ==, r1.atime_ns);
    trips = dbfs_conn_round_trips(t.c);
    td_rc(dbfs_getattr(t.c, fh, &g), 0);
    g_assert_cmpuint(dbfs_conn_round_trips(t.c) - trips, ==, 0);
    g_assert_cmpint(g.atime_ns, ==, r1.atime_ns);
    at_close(&t);
}

/* Several files: one transaction per CACHE_LRU_MUT_MAX of them; a file
 * written after its READ gets the READ's atime; a removed one is skipped. */
static void test_many(void)
{
    enum { N = 2 * CACHE_LRU_MUT_MAX + 3 };
    at_fs t;
    dbfs_cred root = {0};
    unsigned char d[N][3000];
    dbfs_attr f[N], r[N];
    char name[16];
    uint64_t trips;
    dbfs_stable st;
    dbfs_wcc w;

    at_open(&t, true);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "m%d", i);
        f[i] = at_file(&t, name, d[i]);
    }
    for (int i = 0; i < N; i++) {
        r[i] = at_read(&t, td_fh(&f[i]), d[i], &trips);
        g_assert_cmpuint(trips, ==, 0);
    }
    g_assert_cmpuint(dbfs_atime_waiting(t.fs), ==, N);
    /* File 0 written after its READ, file 1 removed. */
    td_rc(dbfs_write(t.c, &root, td_fh(&f[0]), 0, "x", 1, DBFS_FILE_SYNC, &st, &w), 0);
    td_rc(dbfs_remove(t.c, &root, t.root, "m1", NULL), 0);
    uint64_t ft = dbfs_conn_round_trips(t.flusher);
    g_assert_cmpint(dbfs_wb_flush_due(t.flusher, 0), ==, N);
    g_assert_cmpuint(dbfs_conn_round_trips(t.flusher) - ft, ==,
                     (N + CACHE_LRU_MUT_MAX - 1) / CACHE_LRU_MUT_MAX);
    g_assert_cmpuint(dbfs_atime_waiting(t.fs), ==, 0);
    for (int i = 0; i < N; i++) {
        dbfs_attr g;

        if (i == 1) {
            td_rc(dbfs_getattr(t.tc, td_fh(&f[i]), &g), -ESTALE);
            continue;
        }
        g_assert_cmpint(at_stored_atime(&t, td_fh(&f[i])), ==, r[i].atime_ns);
        td_rc(dbfs_getattr(t.c, td_fh(&f[i]), &g), 0);
        g_assert_cmpint(g.atime_ns, ==, r[i].atime_ns);
    }
    at_close(&t);
}

/* Sync: the READ updates atime itself, in its round trip; nothing waits. */
static void test_sync(void)
{
    at_fs t;
    unsigned char d[3000];
    dbfs_attr f, r;
    uint64_t trips;

    at_open(&t, false);
    f = at_file(&t, "s", d);
    int64_t t0 = at_now_ns();
    r = at_read(&t, td_fh(&f), d, &trips);
    g_assert_cmpuint(trips, ==, 1);
    g_assert_cmpint(r.atime_ns, >=, t0);
    g_assert_cmpuint(dbfs_atime_waiting(t.fs), ==, 0);
    g_assert_cmpint(at_stored_atime(&t, td_fh(&f)), ==, r.atime_ns);
    /* Not due any more: the next READ is served from the caches. */
    r = at_read(&t, td_fh(&f), d, &trips);
    g_assert_cmpuint(trips, ==, 0);
    at_close(&t);
}

/* A READ from memory alone (dbfs_read_quick: the event thread's): for an
 * async export a due atime update is deferred, as on a worker; for a sync
 * one such a READ is left to a worker, and so is a READ of a file with
 * buffered writes (the worker stores them first). */
static void test_quick(void)
{
    at_fs t;
    dbfs_cred root = {0};
    unsigned char d[3000], back[4096];
    dbfs_attr f, r;
    dbfs_attr_opt a;
    uint64_t trips;
    uint32_t n;
    bool eof;
    dbfs_stable st;
    dbfs_wcc w;

    at_open(&t, true);
    f = at_file(&t, "q", d);
    dbfs_fh fh = td_fh(&f);
    td_rc(dbfs_read_quick(t.fs, &root, fh, false, 0, sizeof back, back, &n, &eof, &a), -ENODATA);
    g_assert_cmpuint(dbfs_atime_waiting(t.fs), ==, 0);
    int64_t t0 = at_now_ns();
    td_rc(dbfs_read_quick(t.fs, &root, fh, true, 0, sizeof back, back, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, 3000);
    g_assert_true(eof);
    g_assert_cmpmem(back, n, d, 3000);
    g_assert_true(a.valid);
    g_assert_cmpint(a.attr.atime_ns, >=, t0);
    g_assert_cmpuint(dbfs_atime_waiting(t.fs), ==, 1);
    /* Not due any more: from memory for a sync export too. */
    td_rc(dbfs_read_quick(t.fs, &root, fh, false, 0, sizeof back, back, &n, &eof, &a), 0);
    g_assert_cmpmem(back, n, d, 3000);

    td_rc(dbfs_write(t.c, &root, fh, 0, "y", 1, DBFS_UNSTABLE, &st, &w), 0);
    td_rc(dbfs_read_quick(t.fs, &root, fh, true, 0, sizeof back, back, &n, &eof, &a), -ENODATA);
    d[0] = 'y';
    r = at_read(&t, fh, d, &trips);
    g_assert_cmpuint(r.size, ==, 3000);
    at_close(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/atime/deferred", test_deferred);
    g_test_add_func("/atime/many", test_many);
    g_test_add_func("/atime/quick", test_quick);
    g_test_add_func("/atime/sync", test_sync);
    return g_test_run();
}
