/*
 * test_hotpath.c -- a hot small object on an async export (the web-proxy
 * workload's hit, bench/perf pload proxy): once it is written (CREATE,
 * WRITE UNSTABLE, COMMIT), its LOOKUP and READ are served by the server's
 * caches alone, with no database round trip, also the first READ whose
 * atime relatime moves (deferred to the write-back flusher); the READ's
 * bytes are the object's and its attributes show the moved atime. On the
 * sync export the first READ still goes to the database (the atime
 * update), the following ones do not.
 *
 * How it is seen: the server's per-procedure round-trip counters on its
 * metrics endpoint (pgnfs_db_round_trips_total), before and after.
 *
 * NOTES
 *   One server; "/fast" is a directory of the same file system exported
 *   async. Cases run in order in this process.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ptest.h"

static unsigned metrics_port;
static nr_fh fast_root;

/* A counter of procedure proc (0 when the page has none yet). */
static double counter(const char *page, const char *name, const char *proc)
{
    char *pat = g_strdup_printf("\n%s{prog=\"nfs3\",proc=\"%s\"} ", name, proc);
    const char *p = strstr(page, pat);
    double v = p ? g_ascii_strtod(p + strlen(pat), NULL) : 0;

    g_free(pat);
    return v;
}

typedef struct {
    double lookups, reads, lookup_trips, read_trips;
} hp_counts;

static hp_counts counts(void)
{
    char *page = tl_metrics(metrics_port);

    g_assert_nonnull(page);
    hp_counts c = {counter(page, "pgnfs_rpc_calls_total", "LOOKUP"),
                   counter(page, "pgnfs_rpc_calls_total", "READ"),
                   counter(page, "pgnfs_db_round_trips_total", "LOOKUP"),
                   counter(page, "pgnfs_db_round_trips_total", "READ")};

    g_free(page);
    return c;
}

/* The object's bytes. */
static void fill(unsigned char *d, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        d[i] = (unsigned char)(i * 31 + seed);
}

/* Write name in dir as the proxy does: CREATE, WRITE UNSTABLE, COMMIT. */
static nr_fh put_object(nr_ctx *c, const nr_fh *dir, const char *name, const unsigned char *d,
                        uint32_t n)
{
    WRITE3res w;
    COMMIT3res cm;
    nr_fh f = pt_create(c, dir, name, 0644);

    pt_ok(c, nr_write(c, &f, 0, d, n, UNSTABLE, &w));
    pt_ok(c, nr_commit(c, &f, 0, 0, &cm));
    return f;
}

/* LOOKUP and READ of name as the proxy's hit does; checks the bytes;
 * returns the READ's post-op attributes. */
static fattr3 hit(nr_ctx *c, const nr_fh *dir, const char *name, const unsigned char *d, uint32_t n)
{
    READ3res rd;
    nr_fh f = pt_lookup(c, dir, name);

    pt_ok(c, nr_read(c, &f, 0, n + 100, &rd));
    const READ3resok *ok = &rd.READ3res_u.resok;
    g_assert_cmpuint(ok->count, ==, n);
    g_assert_true(ok->eof);
    g_assert_cmpmem(ok->data.data_val, ok->data.data_len, d, n);
    g_assert_true(ok->file_attributes.attributes_follow);
    fattr3 a = ok->file_attributes.post_op_attr_u.attributes;
    nr_arena_clear(c);
    return a;
}

static int cmp_time(nfstime3 a, nfstime3 b)
{
    if (a.seconds != b.seconds)
        return a.seconds < b.seconds ? -1 : 1;
    return a.nseconds < b.nseconds ? -1 : a.nseconds > b.nseconds;
}

/* Async: every LOOKUP and READ of written small objects, the first READ
 * too, makes no round trip; atime moves past mtime at the first READ. */
static void test_async_hits(void)
{
    enum { OBJECTS = 8, ROUNDS = 25 };
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_mkdir(c, &fast_root, "proxy", 0777);
    unsigned char d[OBJECTS][6000];
    char name[16];

    for (unsigned i = 0; i < OBJECTS; i++) {
        fill(d[i], sizeof d[i], i);
        snprintf(name, sizeof name, "o%u", i);
        put_object(c, &dir, name, d[i], 1000 + 600 * i);
    }
    hp_counts before = counts();
    for (unsigned r = 0; r < ROUNDS; r++) {
        for (unsigned i = 0; i < OBJECTS; i++) {
            snprintf(name, sizeof name, "o%u", i);
            fattr3 a = hit(c, &dir, name, d[i], 1000 + 600 * i);
            if (r == 0)
                g_assert_cmpint(cmp_time(a.atime, a.mtime), >, 0);
        }
    }
    hp_counts after = counts();
    g_assert_cmpfloat(after.lookups - before.lookups, ==, OBJECTS * ROUNDS);
    g_assert_cmpfloat(after.reads - before.reads, ==, OBJECTS * ROUNDS);
    g_assert_cmpfloat(after.lookup_trips - before.lookup_trips, ==, 0);
    g_assert_cmpfloat(after.read_trips - before.read_trips, ==, 0);
    /* GETATTR shows the moved atime too. */
    snprintf(name, sizeof name, "o%u", 0);
    nr_fh f = pt_lookup(c, &dir, name);
    fattr3 g = pt_getattr(c, &f);
    g_assert_cmpint(cmp_time(g.atime, g.mtime), >, 0);
    nr_close(c);
}

/* Sync: the first READ of each object updates atime in the database; the
 * following ones are served by the caches. */
static void test_sync_hits(void)
{
    enum { OBJECTS = 4, ROUNDS = 10 };
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_mkdir(c, &pt.root, "proxy", 0777);
    unsigned char d[OBJECTS][3000];
    char name[16];

    for (unsigned i = 0; i < OBJECTS; i++) {
        fill(d[i], sizeof d[i], i + 50);
        snprintf(name, sizeof name, "o%u", i);
        put_object(c, &dir, name, d[i], sizeof d[i]);
    }
    hp_counts before = counts();
    for (unsigned r = 0; r < ROUNDS; r++) {
        for (unsigned i = 0; i < OBJECTS; i++) {
            snprintf(name, sizeof name, "o%u", i);
            hit(c, &dir, name, d[i], sizeof d[i]);
        }
    }
    hp_counts after = counts();
    g_assert_cmpfloat(after.lookup_trips - before.lookup_trips, ==, 0);
    g_assert_cmpfloat(after.read_trips - before.read_trips, ==, OBJECTS);
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
    g_test_add_func("/hotpath/async-hits", test_async_hits);
    g_test_add_func("/hotpath/sync-hits", test_sync_hits);
    if (listing)
        return g_test_run();
    metrics_port = tl_free_port();
    char *port = g_strdup_printf("metrics.port=%u", metrics_port);
    const char *const settings[] = {"metrics.enable=true", port,
                                    "exports./fast=127.0.0.1(rw,async,no_root_squash)", NULL};
    pt.server = tl_server_start(settings);
    pt.port = pt.mount_port = tl_server_port(pt.server);
    pt.export_path = "/";
    pt.root = pt_mount_root("/");
    nr_ctx *c = pt_open(NULL);
    pt_mkdir(c, &pt.root, "fast", 0777);
    nr_close(c);
    fast_root = pt_mount_root("/fast");
    int rc = g_test_run();
    tl_server_stop(pt.server);
    g_free(port);
    g_free(args);
    return rc;
}
