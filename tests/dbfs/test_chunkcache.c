/*
 * test_chunkcache.c -- the chunk buffer cache inside dbfs, against a real
 * database: reads through a dbfs with the caches on must always equal
 * reads through a cache-less dbfs of the same database, whatever another
 * connection of the cached dbfs did in between (partial and whole writes,
 * truncation then extension, hard links and removal, rename over, a write
 * that fails); a repeated read makes no round trip with the stat cache on
 * and fetches no chunk without it; and threads writing versioned blocks
 * while others read never let a reader see a block older than the last
 * write that completed before its read began (the writer keeps writing
 * until the readers have read enough, so they race whatever the
 * scheduler does). Every case runs in the
 * single and the hybrid layout, the stress with and without the stat
 * cache. A stream written one transaction per chunk reads back with no
 * round trip (the buffer cache's history), and not after a change the
 * history was not told of.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "td.h"
#include "testlib.h"

static const uint32_t tk_no_groups[1] = {0};

/* The file system under test: a cached dbfs (two connections) and a
 * cache-less dbfs of the same database (the truth; noatime, so it never
 * writes). */
typedef struct {
    char *conninfo;
    dbfs *fs, *truth;
    dbfs_conn *c1, *c2, *tc;
    dbfs_fh root;
} tk_fs;

static void tk_open(tk_fs *t, dbfs_storage st, bool stat_cache, bool relatime)
{
    dbfs_mkfs_opts o = {
        .storage = st, .chunk_size = 4096, .hybrid_threshold = 10000, .root_mode = 0777};
    dbfs_config cfg = {.relatime = relatime, .buffer_cache_bytes = 4u << 20};
    dbfs_config plain = {0};

    memset(t, 0, sizeof *t);
    t->conninfo = tl_fresh_db();
    td_rc(dbfs_mkfs(t->conninfo, &o), 0);
    cfg.conninfo = plain.conninfo = t->conninfo;
    if (stat_cache)
        cfg.stat_cache_entries = cfg.name_cache_entries = 1000;
    td_rc(dbfs_open(&cfg, &t->fs), 0);
    td_rc(dbfs_open(&plain, &t->truth), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c1), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c2), 0);
    td_rc(dbfs_conn_open(t->truth, &t->tc), 0);
    t->root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t->fs)->root_gen, 0};
}

static void tk_close(tk_fs *t)
{
    dbfs_conn_close(t->c1);
    dbfs_conn_close(t->c2);
    dbfs_conn_close(t->tc);
    dbfs_close(t->fs);
    dbfs_close(t->truth);
    g_free(t->conninfo);
}

/* Read [off, off + len) through connection c and through the truth; both
 * must answer alike. Returns the status. */
static int tk_read_eq(tk_fs *t, dbfs_conn *c, dbfs_fh fh, uint64_t off, uint32_t len)
{
    dbfs_cred root = {0};
    unsigned char *a = g_malloc(len + 1), *b = g_malloc(len + 1);
    uint32_t na = 0, nb = 0;
    bool ea = false, eb = false;
    dbfs_attr_opt aa, ab;
    int ra = dbfs_read(c, &root, fh, off, len, a, &na, &ea, &aa);
    int rb = dbfs_read(t->tc, &root, fh, off, len, b, &nb, &eb, &ab);

    g_assert_cmpint(ra, ==, rb);
    if (ra == 0) {
        g_assert_cmpuint(na, ==, nb);
        g_assert_true(ea == eb);
        if (memcmp(a, b, na) != 0) {
            uint32_t k = 0;
            while (a[k] == b[k])
                k++;
            g_error("read [%" G_GUINT64_FORMAT ", +%u): byte %u differs from a cache-less read "
                    "(%u, not %u)",
                    off, len, k, a[k], b[k]);
        }
        g_assert_cmpuint(aa.attr.size, ==, ab.attr.size);
        g_assert_cmpint(aa.attr.ctime_ns, ==, ab.attr.ctime_ns);
    }
    g_free(a);
    g_free(b);
    return ra;
}

static void tk_fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 73 + seed * 41 + (i >> 8)) | 1);
}

static void tk_write(dbfs_conn *c, const dbfs_cred *cr, dbfs_fh fh, uint64_t off, const void *d,
                     uint32_t len)
{
    dbfs_stable st;
    dbfs_wcc w;

    td_rc(dbfs_write(c, cr, fh, off, d, len, DBFS_FILE_SYNC, &st, &w), 0);
}

static void tk_size(dbfs_conn *c, dbfs_fh fh, uint64_t size)
{
    dbfs_cred root = {0};
    dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = size};
    dbfs_wcc w;

    td_rc(dbfs_setattr(c, &root, fh, &sa, NULL, &w), 0);
}

static dbfs_attr tk_create(dbfs_conn *c, dbfs_fh dir, const char *name, uint32_t uid)
{
    dbfs_cred cr = {.uid = uid, .gid = uid};
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0644};
    dbfs_attr a;
    dbfs_wcc w;

    td_rc(dbfs_create(c, &cr, dir, name, DBFS_CREATE_GUARDED, &sa, 0, &a, &w), 0);
    return a;
}

static void coherence(dbfs_storage st, bool stat_cache)
{
    tk_fs t;
    dbfs_cred root = {0};
    dbfs_cred other = td_user(2000, 2000, 0, tk_no_groups);
    unsigned char d[30000];
    dbfs_cache_figures b0, b1;
    dbfs_attr_opt fa;
    dbfs_wcc w, w2;

    tk_open(&t, st, stat_cache, true);
    tk_fill(d, sizeof d, 1);
    dbfs_attr f = tk_create(t.c1, t.root, "f", 0);
    dbfs_fh fh = td_fh(&f);
    tk_write(t.c1, &root, fh, 0, d, 20000);
    tk_read_eq(&t, t.c2, fh, 0, 25000);
    tk_read_eq(&t, t.c2, fh, 0, 25000);
    /* Partial write by the other connection: merged or refetched. */
    tk_write(t.c1, &root, fh, 5000, d + 100, 100);
    tk_read_eq(&t, t.c2, fh, 0, 25000);
    tk_read_eq(&t, t.c2, fh, 4096, 4096);
    /* Truncation, then extension by SETATTR: the cut bytes must read as
     * zeros, however much of them was cached. */
    tk_read_eq(&t, t.c2, fh, 0, 25000);
    tk_size(t.c1, fh, 3000);
    tk_read_eq(&t, t.c2, fh, 0, 25000);
    tk_size(t.c1, fh, 20000);
    tk_read_eq(&t, t.c2, fh, 0, 25000);
    tk_read_eq(&t, t.c2, fh, 2000, 3000);
    /* Whole chunks, then a read inside them. */
    tk_write(t.c1, &root, fh, 8192, d + 7, 8192);
    tk_read_eq(&t, t.c2, fh, 8192, 8192);
    tk_read_eq(&t, t.c1, fh, 0, 25000);
    /* Growth across the hybrid threshold and back (layout moves). */
    tk_write(t.c1, &root, fh, 20000, d, 10000);
    tk_read_eq(&t, t.c2, fh, 0, 30000);
    tk_size(t.c1, fh, 5000);
    tk_read_eq(&t, t.c2, fh, 0, 30000);
    tk_write(t.c2, &root, fh, 6000, d, 10);
    tk_read_eq(&t, t.c1, fh, 0, 30000);

    /* A write that fails changes nothing: the next read still hits. */
    tk_read_eq(&t, t.c2, fh, 0, 30000);
    b0 = td_cache(t.fs, "buffer");
    dbfs_stable stb;
    td_rc(dbfs_write(t.c1, &other, fh, 0, d, 100, DBFS_FILE_SYNC, &stb, &w), -EACCES);
    tk_read_eq(&t, t.c2, fh, 0, 30000);
    b1 = td_cache(t.fs, "buffer");
    g_assert_cmpuint(b1.hits - b0.hits, ==, 2);
    g_assert_cmpuint(b1.misses, ==, b0.misses);

    /* Hard links: the data lives while a name does. */
    td_rc(dbfs_link(t.c1, &root, fh, t.root, "g", &fa, &w), 0);
    td_rc(dbfs_remove(t.c1, &root, t.root, "f", &w), 0);
    tk_read_eq(&t, t.c2, fh, 0, 30000);
    td_rc(dbfs_remove(t.c1, &root, t.root, "g", &w), 0);
    g_assert_cmpint(tk_read_eq(&t, t.c2, fh, 0, 30000), ==, -ESTALE);

    /* Rename over a cached file. */
    dbfs_attr a = tk_create(t.c1, t.root, "a", 0);
    dbfs_attr b = tk_create(t.c1, t.root, "b", 0);
    tk_write(t.c1, &root, td_fh(&a), 0, d, 9000);
    tk_write(t.c1, &root, td_fh(&b), 0, d + 1, 9000);
    tk_read_eq(&t, t.c2, td_fh(&a), 0, 9000);
    tk_read_eq(&t, t.c2, td_fh(&b), 0, 9000);
    td_rc(dbfs_rename(t.c1, &root, t.root, "a", t.root, "b", &w, &w2), 0);
    g_assert_cmpint(tk_read_eq(&t, t.c2, td_fh(&b), 0, 9000), ==, -ESTALE);
    tk_read_eq(&t, t.c2, td_fh(&a), 0, 9000);
    /* An UNCHECKED create over the file truncates it. */
    dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = 10};
    dbfs_attr o;
    td_rc(dbfs_create(t.c1, &root, t.root, "b", DBFS_CREATE_UNCHECKED, &sa, 0, &o, &w), 0);
    g_assert_cmpuint(o.ino, ==, a.ino);
    tk_size(t.c1, td_fh(&a), 9000);
    tk_read_eq(&t, t.c2, td_fh(&a), 0, 9000);
    tk_close(&t);
}

static void test_coherence_single(void)
{
    coherence(DBFS_STORAGE_SINGLE, false);
}

static void test_coherence_single_stat(void)
{
    coherence(DBFS_STORAGE_SINGLE, true);
}

static void test_coherence_hybrid_stat(void)
{
    coherence(DBFS_STORAGE_HYBRID, true);
}

/* A repeated read: no round trip with the stat cache, no chunk fetched
 * without it (one round trip for the attributes). */
static void round_trips(bool stat_cache)
{
    tk_fs t;
    dbfs_cred root = {0};
    unsigned char d[16384], back[16384];
    uint32_t n;
    bool eof;
    dbfs_attr_opt a;

    tk_open(&t, DBFS_STORAGE_SINGLE, stat_cache, true);
    tk_fill(d, sizeof d, 2);
    dbfs_attr f = tk_create(t.c1, t.root, "f", 0);
    tk_write(t.c1, &root, td_fh(&f), 0, d, sizeof d);
    /* The first read fills (and moves atime, which is due after a write). */
    td_rc(dbfs_read(t.c2, &root, td_fh(&f), 0, sizeof back, back, &n, &eof, &a), 0);
    dbfs_cache_figures b0 = td_cache(t.fs, "buffer");
    uint64_t trips = dbfs_conn_round_trips(t.c2);
    td_rc(dbfs_read(t.c2, &root, td_fh(&f), 100, 10000, back, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, 10000);
    g_assert_cmpmem(back, 10000, d + 100, 10000);
    dbfs_cache_figures b1 = td_cache(t.fs, "buffer");
    g_assert_cmpuint(dbfs_conn_round_trips(t.c2) - trips, ==, stat_cache ? 0 : 1);
    g_assert_cmpuint(b1.hits - b0.hits, ==, 3);
    g_assert_cmpuint(b1.misses - b0.misses, ==, 0);
    g_assert_true(b1.enabled);
    g_assert_cmpuint(b1.entries, >, 0);
    tk_close(&t);
}

static void test_round_trips(void)
{
    round_trips(false);
}

static void test_round_trips_stat(void)
{
    round_trips(true);
}

/* A file written as a stream, one transaction per chunk, reads back from
 * the buffer cache alone (the history shows the early chunks unchanged
 * since); after a change the history does not know of (a chmod), the
 * chunks must come from the database again, and equal the truth. */
static void test_stream_recent(void)
{
    enum { NCH = 12, CS = 4096 };
    tk_fs t;
    dbfs_cred root = {0};
    unsigned char d[NCH * CS], back[NCH * CS];
    uint32_t n;
    bool eof;
    dbfs_attr_opt a;
    dbfs_wcc w;

    tk_open(&t, DBFS_STORAGE_SINGLE, true, false);
    tk_fill(d, sizeof d, 3);
    dbfs_attr f = tk_create(t.c1, t.root, "s", 0);
    for (int k = 0; k < NCH; k++)
        tk_write(t.c1, &root, td_fh(&f), (uint64_t)k * CS, d + k * CS, CS);
    uint64_t trips = dbfs_conn_round_trips(t.c2);
    td_rc(dbfs_read(t.c2, &root, td_fh(&f), 0, sizeof back, back, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, sizeof back);
    g_assert_cmpmem(back, n, d, sizeof d);
    g_assert_cmpuint(dbfs_conn_round_trips(t.c2) - trips, ==, 0);

    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0600};
    td_rc(dbfs_setattr(t.c1, &root, td_fh(&f), &sa, NULL, &w), 0);
    tk_write(t.c1, &root, td_fh(&f), 5 * CS + 10, d, 100);
    trips = dbfs_conn_round_trips(t.c2);
    g_assert_cmpint(tk_read_eq(&t, t.c2, td_fh(&f), 0, sizeof back), ==, 0);
    g_assert_cmpuint(dbfs_conn_round_trips(t.c2) - trips, >=, 1);
    tk_close(&t);
}

/* Versioned blocks: a writer stamps block k with increasing versions
 * (half-chunk blocks, so writes merge into cached chunks), publishing the
 * version once the write returned; readers check they never see a block
 * older than what was published before their read began. The writer goes
 * on past TK_WRITES until every reader has read TK_READS times while it
 * was writing (whatever the scheduler did), within TK_DEADLINE_US. */
enum { TK_BLOCKS = 16, TK_BLOCK = 2048, TK_READERS = 2, TK_WRITES = 300, TK_READS = 50 };
#define TK_DEADLINE_US (120 * G_USEC_PER_SEC)

typedef struct {
    tk_fs *t;
    dbfs_fh fh;
    gint published[TK_BLOCKS];
    gint stop;
    gint bad;
    gint reads[TK_READERS];
} tk_stress;

typedef struct {
    tk_stress *s;
    int id;
} tk_reader_arg;

static void tk_stamp(unsigned char *blk, gint version, int k)
{
    for (int i = 0; i < TK_BLOCK; i += 8) {
        memcpy(blk + i, &version, 4);
        memcpy(blk + i + 4, &k, 4);
    }
}

/* Check the blocks k0 .. k0 + nb - 1 read into buf against the versions
 * published before the read (before[]). Returns the wrong blocks. */
static int tk_check_blocks(const unsigned char *buf, int k0, int nb, const gint *before)
{
    int bad = 0;

    for (int k = k0; k < k0 + nb; k++) {
        const unsigned char *blk = buf + (k - k0) * TK_BLOCK;
        gint v;
        int kk;

        memcpy(&v, blk, 4);
        memcpy(&kk, blk + 4, 4);
        for (int i = 8; i < TK_BLOCK; i += 8)
            if (memcmp(blk + i, blk, 8) != 0)
                bad++;
        if (kk != k || v < before[k])
            bad++;
    }
    return bad;
}

static gpointer tk_reader(gpointer p)
{
    tk_reader_arg *ra = p;
    tk_stress *s = ra->s;
    dbfs_conn *c;
    dbfs_cred root = {0};
    unsigned char buf[TK_BLOCKS * TK_BLOCK];
    GRand *r = g_rand_new();

    td_rc(dbfs_conn_open(s->t->fs, &c), 0);
    while (!g_atomic_int_get(&s->stop)) {
        int k0 = g_rand_int_range(r, 0, TK_BLOCKS);
        int nb = g_rand_int_range(r, 1, TK_BLOCKS - k0 + 1);
        gint before[TK_BLOCKS];
        uint32_t n;
        bool eof;
        dbfs_attr_opt a;

        for (int k = k0; k < k0 + nb; k++)
            before[k] = g_atomic_int_get(&s->published[k]);
        td_rc(dbfs_read(c, &root, s->fh, (uint64_t)k0 * TK_BLOCK, (uint32_t)nb * TK_BLOCK, buf, &n,
                        &eof, &a),
              0);
        g_assert_cmpuint(n, ==, (uint32_t)nb * TK_BLOCK);
        g_atomic_int_add(&s->bad, tk_check_blocks(buf, k0, nb, before));
        g_atomic_int_inc(&s->reads[ra->id]);
    }
    dbfs_conn_close(c);
    g_rand_free(r);
    return NULL;
}

/* Has every reader read TK_READS times? */
static bool tk_readers_done(tk_stress *s)
{
    for (int i = 0; i < TK_READERS; i++)
        if (g_atomic_int_get(&s->reads[i]) < TK_READS)
            return false;
    return true;
}

static void stress(dbfs_storage st, bool stat_cache)
{
    tk_fs t;
    dbfs_cred root = {0};
    tk_stress s = {0};
    tk_reader_arg ra[TK_READERS];
    unsigned char blk[2 * TK_BLOCK];
    GThread *th[TK_READERS];
    GRand *r = g_rand_new();
    int64_t deadline;
    gint v;

    tk_open(&t, st, stat_cache, true);
    dbfs_attr f = tk_create(t.c1, t.root, "f", 0);
    s.t = &t;
    s.fh = td_fh(&f);
    for (int k = 0; k < TK_BLOCKS; k++) {
        tk_stamp(blk, 0, k);
        tk_write(t.c1, &root, s.fh, (uint64_t)k * TK_BLOCK, blk, TK_BLOCK);
    }
    for (int i = 0; i < TK_READERS; i++) {
        ra[i] = (tk_reader_arg){&s, i};
        th[i] = g_thread_new("reader", tk_reader, &ra[i]);
    }
    deadline = g_get_monotonic_time() + TK_DEADLINE_US;
    for (v = 1; v <= TK_WRITES || !tk_readers_done(&s); v++) {
        int k = g_rand_int_range(r, 0, TK_BLOCKS - 1);
        int two = g_rand_boolean(r);

        if (g_get_monotonic_time() > deadline)
            g_error("the readers did not read %d times each in %d s of writing", TK_READS,
                    (int)(TK_DEADLINE_US / G_USEC_PER_SEC));
        tk_stamp(blk, v, k);
        tk_stamp(blk + TK_BLOCK, v, k + 1);
        tk_write(t.c1, &root, s.fh, (uint64_t)k * TK_BLOCK, blk, (uint32_t)(two + 1) * TK_BLOCK);
        g_atomic_int_set(&s.published[k], v);
        if (two)
            g_atomic_int_set(&s.published[k + 1], v);
    }
    g_atomic_int_set(&s.stop, 1);
    for (int i = 0; i < TK_READERS; i++)
        g_thread_join(th[i]);
    dbfs_cache_figures bf = td_cache(t.fs, "buffer");
    g_test_message("%d and %d reads against %d writes; buffer hits %" G_GUINT64_FORMAT
                   ", misses %" G_GUINT64_FORMAT,
                   s.reads[0], s.reads[1], v - 1, bf.hits, bf.misses);
    g_assert_cmpint(g_atomic_int_get(&s.bad), ==, 0);
    tk_read_eq(&t, t.c2, s.fh, 0, TK_BLOCKS * TK_BLOCK);
    g_rand_free(r);
    tk_close(&t);
}

static void test_stress(void)
{
    stress(DBFS_STORAGE_SINGLE, false);
}

static void test_stress_stat(void)
{
    stress(DBFS_STORAGE_INVERSION, true);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/chunkcache/coherence-single", test_coherence_single);
    g_test_add_func("/chunkcache/coherence-single-stat", test_coherence_single_stat);
    g_test_add_func("/chunkcache/coherence-hybrid-stat", test_coherence_hybrid_stat);
    g_test_add_func("/chunkcache/round-trips", test_round_trips);
    g_test_add_func("/chunkcache/round-trips-stat", test_round_trips_stat);
    g_test_add_func("/chunkcache/stream-recent", test_stream_recent);
    g_test_add_func("/chunkcache/stress", test_stress);
    g_test_add_func("/chunkcache/stress-stat", test_stress_stat);
    return g_test_run();
}
