/*
 * test_quick.c -- calls answered on the server's event thread from memory
 * (srv_dispatch_quick): GETATTR, ACCESS, LOOKUP, READ and NULL of what the
 * caches know are answered there, with the same results a worker gives; a call
 * the cache cannot answer goes on to a worker, which answers it from the
 * database; either way each call looks the file up in the stat cache
 * exactly once (a miss tried on the event thread is not counted twice).
 *
 * How it is seen: the server's counters on its metrics endpoint, before
 * and after: pgnfs_rpc_quick_total and pgnfs_rpc_calls_total per
 * procedure, pgnfs_db_round_trips_total, and the stat cache's hits and
 * misses.
 *
 * NOTES
 *   One server, with a stat cache of QK_STAT_SIZE entries, so that a walk
 *   over more files than that misses on every file it comes back to.
 *   Cases run in order in this process; nothing else calls the server
 *   meanwhile.
 */
#include <stdio.h>
#include <string.h>

#include "ptest.h"

/* The stat cache's bound in entries, and the files of the walk. */
#define QK_STAT_SIZE 64
#define QK_FILES     (4 * QK_STAT_SIZE)

static unsigned metrics_port;

/* A value of the metrics page: series name with labels, 0 when absent. */
static double metric(const char *page, const char *series)
{
    char *pat = g_strdup_printf("\n%s ", series);
    const char *p = strstr(page, pat);
    double v = p ? g_ascii_strtod(p + strlen(pat), NULL) : 0;

    g_free(pat);
    return v;
}

typedef struct {
    double calls, quick, trips; /* of the procedure asked for */
    double hits, misses;        /* of the stat cache */
} qk_counts;

static qk_counts counts(const char *proc)
{
    char *page = tl_metrics(metrics_port);
    char *k;
    qk_counts c;

    g_assert_nonnull(page);
    k = g_strdup_printf("pgnfs_rpc_calls_total{prog=\"nfs3\",proc=\"%s\"}", proc);
    c.calls = metric(page, k);
    g_free(k);
    k = g_strdup_printf("pgnfs_rpc_quick_total{prog=\"nfs3\",proc=\"%s\"}", proc);
    c.quick = metric(page, k);
    g_free(k);
    k = g_strdup_printf("pgnfs_db_round_trips_total{prog=\"nfs3\",proc=\"%s\"}", proc);
    c.trips = metric(page, k);
    g_free(k);
    c.hits = metric(page, "pgnfs_cache_hits_total{cache=\"stat\"}");
    c.misses = metric(page, "pgnfs_cache_misses_total{cache=\"stat\"}");
    g_free(page);
    return c;
}

/* A file the stat cache knows (just made) asked for again and again:
 * every GETATTR and ACCESS is answered on the event thread, with no round
 * trip, and says what a worker says. */
static void test_cached(void)
{
    enum { CALLS = 50 };
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_fresh_dir();
    nr_fh f = pt_create(c, &dir, "f", 0640);
    const char data[] = "twelve bytes";
    ACCESS3res ar;

    pt_write(c, &f, 0, data, 12);
    fattr3 first = pt_getattr(c, &f);
    qk_counts g0 = counts("GETATTR"), a0 = counts("ACCESS");
    for (unsigned i = 0; i < CALLS; i++) {
        fattr3 a = pt_getattr(c, &f);
        g_assert_cmpuint(a.size, ==, 12);
        g_assert_cmpuint(a.mode & 07777, ==, 0640);
        g_assert_cmpuint(a.fileid, ==, first.fileid);
        pt_assert_time(a.mtime, first.mtime);
    }
    qk_counts g1 = counts("GETATTR");
    g_assert_cmpfloat(g1.calls - g0.calls, ==, CALLS);
    g_assert_cmpfloat(g1.quick - g0.quick, ==, CALLS);
    g_assert_cmpfloat(g1.trips - g0.trips, ==, 0);
    g_assert_cmpfloat(g1.hits - g0.hits, ==, CALLS);
    g_assert_cmpfloat(g1.misses - g0.misses, ==, 0);

    for (unsigned i = 0; i < CALLS; i++) {
        pt_ok(c, nr_access(c, &f, ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXECUTE, &ar));
        g_assert_cmpuint(ar.ACCESS3res_u.resok.access, ==, ACCESS3_READ | ACCESS3_MODIFY);
        g_assert_cmpuint(pt_post_attr(&ar.ACCESS3res_u.resok.obj_attributes).size, ==, 12);
        nr_arena_clear(c);
    }
    qk_counts a1 = counts("ACCESS");
    g_assert_cmpfloat(a1.calls - a0.calls, ==, CALLS);
    g_assert_cmpfloat(a1.quick - a0.quick, ==, CALLS);
    g_assert_cmpfloat(a1.trips - a0.trips, ==, 0);

    /* LOOKUP of a name the caches know, found or absent; ".." always goes
     * to a worker. */
    LOOKUP3res lr;
    qk_counts l0 = counts("LOOKUP");
    for (unsigned i = 0; i < CALLS; i++) {
        nr_fh g = pt_lookup(c, &dir, "f");
        g_assert_cmpmem(g.data, g.len, f.data, f.len);
        nr_arena_clear(c);
    }
    qk_counts l1 = counts("LOOKUP");
    g_assert_cmpfloat(l1.calls - l0.calls, ==, CALLS);
    g_assert_cmpfloat(l1.quick - l0.quick, ==, CALLS);
    g_assert_cmpfloat(l1.trips - l0.trips, ==, 0);
    for (unsigned i = 0; i < 3; i++) {
        pt_stat(c, nr_lookup(c, &dir, "nope", &lr), NFS3ERR_NOENT);
        nr_arena_clear(c);
    }
    for (unsigned i = 0; i < 3; i++)
        pt_lookup(c, &dir, "..");
    qk_counts l2 = counts("LOOKUP");
    g_assert_cmpfloat(l2.calls - l1.calls, ==, 6);
    /* The first "nope" taught the naming cache its absence. */
    g_assert_cmpfloat(l2.quick - l1.quick, ==, 2);
    g_assert_cmpfloat(l2.trips - l1.trips, ==, 4);

    /* A file gone is STALE from the event thread too (the cache knows). */
    REMOVE3res rr;
    GETATTR3res gr;
    pt_ok(c, nr_remove(c, &dir, "f", &rr));
    qk_counts s0 = counts("GETATTR");
    pt_stat(c, nr_getattr(c, &f, &gr), NFS3ERR_STALE);
    qk_counts s1 = counts("GETATTR");
    g_assert_cmpfloat(s1.calls - s0.calls, ==, 1);
    g_assert_cmpfloat(s1.trips - s0.trips, ==, 0);
    nr_close(c);
}

/* A walk over more files than the stat cache holds: calls it cannot
 * answer go to a worker (one round trip each), the others are answered on
 * the event thread; each call is one counted look-up, a hit exactly when
 * it was answered there. */
static void test_walk(void)
{
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_fresh_dir();
    nr_fh *f = g_new(nr_fh, QK_FILES);
    char name[16];

    for (unsigned i = 0; i < QK_FILES; i++) {
        snprintf(name, sizeof name, "w%u", i);
        f[i] = pt_create(c, &dir, name, 0600 + (i % 8));
    }
    qk_counts b = counts("GETATTR");
    for (unsigned round = 0; round < 2; round++)
        for (unsigned i = 0; i < QK_FILES; i++) {
            fattr3 a = pt_getattr(c, &f[i]);
            g_assert_cmpuint(a.mode & 07777, ==, 0600 + (i % 8));
            g_assert_cmpuint(a.size, ==, 0);
        }
    qk_counts e = counts("GETATTR");
    double calls = e.calls - b.calls, quick = e.quick - b.quick, trips = e.trips - b.trips;
    double hits = e.hits - b.hits, misses = e.misses - b.misses;
    g_assert_cmpfloat(calls, ==, 2 * QK_FILES);
    g_assert_cmpfloat(hits + misses, ==, calls);
    g_assert_cmpfloat(quick, ==, hits);
    g_assert_cmpfloat(trips, ==, misses);
    /* The cache holds a quarter of the files: most of the walk missed. */
    g_assert_cmpfloat(misses, >=, QK_FILES);
    nr_close(c);
    g_free(f);
}

/* READ of [off, off + count) of f, whose bytes are data (size bytes):
 * the bytes, the count and eof are the file's. */
static void read_check(nr_ctx *c, const nr_fh *f, uint64_t off, uint32_t count,
                       const unsigned char *data, uint64_t size)
{
    READ3res rr;
    uint64_t n = off >= size ? 0 : (size - off < count ? size - off : count);

    pt_ok(c, nr_read(c, f, off, count, &rr));
    g_assert_cmpuint(rr.READ3res_u.resok.count, ==, n);
    g_assert_cmpuint(rr.READ3res_u.resok.data.data_len, ==, n);
    g_assert_cmpint(rr.READ3res_u.resok.eof, ==, off + n >= size);
    if (n)
        g_assert_cmpmem(rr.READ3res_u.resok.data.data_val, n, data + off, n);
    g_assert_cmpuint(pt_post_attr(&rr.READ3res_u.resok.file_attributes).size, ==, size);
    nr_arena_clear(c);
}

/* READs of up to 64 KiB of what the caches hold are answered on the
 * event thread, with the bytes a worker gives; the first READ after a
 * change (it moves atime), a larger READ, a READ of a file with buffered
 * writes and a READ the caller may not make go to a worker. */
static void test_read(void)
{
    enum { CALLS = 40, SIZE = 200 * 1024 };
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_fresh_dir();
    nr_fh f = pt_create(c, &dir, "r", 0644);
    unsigned char *data = g_malloc(SIZE);

    for (unsigned i = 0; i < SIZE; i++)
        data[i] = (unsigned char)(i * 7 + i / 251);
    pt_write(c, &f, 0, data, SIZE);

    /* The first READ moves atime (relatime): a worker's. */
    qk_counts r0 = counts("READ");
    read_check(c, &f, 0, 4096, data, SIZE);
    qk_counts r1 = counts("READ");
    g_assert_cmpfloat(r1.calls - r0.calls, ==, 1);
    g_assert_cmpfloat(r1.quick - r0.quick, ==, 0);

    /* The rest of the file into the buffer cache (one READ, a worker's:
     * over 64 KiB), then READs anywhere, past the end too: all quick,
     * none at the database. */
    read_check(c, &f, 4096, SIZE, data, SIZE);
    qk_counts r2 = counts("READ");
    g_assert_cmpfloat(r2.quick - r1.quick, ==, 0);
    for (unsigned i = 0; i < CALLS; i++) {
        uint64_t off = (uint64_t)i * 5113 % (SIZE + 4096);
        uint32_t count = 1 + i * 4099 % 65536;

        read_check(c, &f, off, count, data, SIZE);
    }
    qk_counts r3 = counts("READ");
    g_assert_cmpfloat(r3.calls - r2.calls, ==, CALLS);
    g_assert_cmpfloat(r3.quick - r2.quick, ==, CALLS);
    g_assert_cmpfloat(r3.trips - r2.trips, ==, 0);
    g_assert_cmpfloat(r3.hits - r2.hits, ==, CALLS);
    g_assert_cmpfloat(r3.misses - r2.misses, ==, 0);

    /* A buffered (UNSTABLE) write: the READ that follows sees it, from a
     * worker, which stores it first; after at most one more worker's READ
     * (moving atime past the change), the event thread answers again. */
    pt_ok(c, nr_write(c, &f, 100, "XYZ", 3, UNSTABLE, NULL));
    memcpy(data + 100, "XYZ", 3);
    read_check(c, &f, 0, 4096, data, SIZE);
    qk_counts r4 = counts("READ");
    g_assert_cmpfloat(r4.calls - r3.calls, ==, 1);
    g_assert_cmpfloat(r4.quick - r3.quick, ==, 0);
    for (unsigned i = 0; i < 3; i++)
        read_check(c, &f, 50, 100, data, SIZE);
    qk_counts r5 = counts("READ");
    g_assert_cmpfloat(r5.quick - r4.quick, >=, 2);

    /* Another user the mode does not let read: ACCES, from a worker. */
    nr_cred other = {.uid = 4242, .gid = 4242};
    nr_ctx *o = pt_open(&other);
    READ3res rr;
    pt_chmod(c, &f, 0600);
    qk_counts r6 = counts("READ");
    pt_stat(o, nr_read(o, &f, 0, 100, &rr), NFS3ERR_ACCES);
    qk_counts r7 = counts("READ");
    g_assert_cmpfloat(r7.calls - r6.calls, ==, 1);
    g_assert_cmpfloat(r7.quick - r6.quick, ==, 0);
    nr_close(o);
    nr_close(c);
    g_free(data);
}

/* NULL (the client's ping) is answered on the event thread, but for the
 * first call of a connection: a worker decides whether an export admits
 * its client (a host-name pattern may take a name look-up). */
static void test_null(void)
{
    nr_ctx *c = pt_open(NULL);
    qk_counts b = counts("NULL");

    for (unsigned i = 0; i < 10; i++)
        g_assert_cmpint(nr_null(c), ==, 0);
    qk_counts e = counts("NULL");
    g_assert_cmpfloat(e.calls - b.calls, ==, 10);
    g_assert_cmpfloat(e.quick - b.quick, ==, 9);
    nr_close(c);
}

int main(int argc, char **argv)
{
    char **args = g_new0(char *, (size_t)argc + 2);
    bool listing = false;

    for (int i = 0; i < argc; i++) {
        args[i] = argv[i];
        listing |= strcmp(argv[i], "-l") == 0;
    }
    g_test_init(&argc, &args, NULL);
    g_test_add_func("/quick/cached", test_cached);
    g_test_add_func("/quick/walk", test_walk);
    g_test_add_func("/quick/null", test_null);
    g_test_add_func("/quick/read", test_read);
    if (listing)
        return g_test_run();
    metrics_port = tl_free_port();
    char *port = g_strdup_printf("metrics.port=%u", metrics_port);
    char *stat = g_strdup_printf("cache.stat_size=%u", QK_STAT_SIZE);
    const char *const settings[] = {"metrics.enable=true", port, stat, NULL};
    pt.server = tl_server_start(settings);
    pt.port = pt.mount_port = tl_server_port(pt.server);
    pt.export_path = "/";
    pt.root = pt_mount_root("/");
    int rc = g_test_run();
    tl_server_stop(pt.server);
    g_free(stat);
    g_free(port);
    g_free(args);
    return rc;
}
