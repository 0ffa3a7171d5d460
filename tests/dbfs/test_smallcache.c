/*
 * test_smallcache.c -- the small-file cache inside dbfs, against a real
 * database: a small file written whole (FILE_SYNC, or UNSTABLE and
 * COMMIT) is read back with no round trip, from the small-file cache
 * alone (the buffer cache off), and a file above the size is not; reads
 * through the caches equal reads through a cache-less dbfs of the same
 * database whatever another connection did in between (partial writes,
 * truncation, extension, rename over, removal, a chmod); and writers that
 * stamp versions into their own small files, whole or in part, while
 * readers read every file whole, never let a reader see a block older
 * than the last write that completed before its read began, nor a torn
 * file. The writers go on until every reader has read enough (events,
 * not time), within a generous deadline.
 */
#include <errno.h>
#include <string.h>

#include "td.h"
#include "testlib.h"

#define SM_MAX 8192 /* small_file_bytes */

typedef struct {
    char *conninfo;
    dbfs *fs, *truth;
    dbfs_conn *c1, *c2, *tc;
    dbfs_fh root;
} sm_fs;

/* A dbfs with the stat and small-file caches (small_bytes; and the buffer
 * cache when buffer), noatime, two connections; and a cache-less truth. */
static void sm_open(sm_fs *t, bool buffer, uint64_t small_bytes)
{
    dbfs_mkfs_opts o = {.chunk_size = 4096, .root_mode = 0777};
    dbfs_config cfg = {.stat_cache_entries = 1000,
                       .name_cache_entries = 1000,
                       .small_cache_bytes = small_bytes,
                       .small_file_bytes = SM_MAX,
                       .buffer_cache_bytes = buffer ? 1u << 20 : 0,
                       .writeback_bytes = 8u << 20};
    dbfs_config plain = {0};

    memset(t, 0, sizeof *t);
    t->conninfo = tl_fresh_db();
    td_rc(dbfs_mkfs(t->conninfo, &o), 0);
    cfg.conninfo = plain.conninfo = t->conninfo;
    td_rc(dbfs_open(&cfg, &t->fs), 0);
    td_rc(dbfs_open(&plain, &t->truth), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c1), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c2), 0);
    td_rc(dbfs_conn_open(t->truth, &t->tc), 0);
    t->root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t->fs)->root_gen, 0};
}

static void sm_close(sm_fs *t)
{
    dbfs_conn_close(t->c1);
    dbfs_conn_close(t->c2);
    dbfs_conn_close(t->tc);
    dbfs_close(t->fs);
    dbfs_close(t->truth);
    g_free(t->conninfo);
}

static dbfs_attr sm_create(dbfs_conn *c, dbfs_fh dir, const char *name)
{
    dbfs_cred root = {0};
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0644};
    dbfs_attr a;
    dbfs_wcc w;

    td_rc(dbfs_create(c, &root, dir, name, DBFS_CREATE_GUARDED, &sa, 0, &a, &w), 0);
    return a;
}

static void sm_write(dbfs_conn *c, dbfs_fh fh, uint64_t off, const void *d, uint32_t n,
                     bool unstable)
{
    dbfs_cred root = {0};
    dbfs_stable st;
    dbfs_wcc w;

    td_rc(dbfs_write(c, &root, fh, off, d, n, unstable ? DBFS_UNSTABLE : DBFS_FILE_SYNC, &st, &w),
          0);
    if (unstable)
        td_rc(dbfs_commit(c, fh, 0, 0, &w), 0);
}

static void sm_fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 29 + seed * 7) | 1);
}

/* Read [0, len) through c and through the truth: alike. */
static int sm_read_eq(sm_fs *t, dbfs_conn *c, dbfs_fh fh, uint32_t len)
{
    dbfs_cred root = {0};
    unsigned char *a = g_malloc(len + 1), *b = g_malloc(len + 1);
    uint32_t na = 0, nb = 0;
    bool ea = false, eb = false;
    dbfs_attr_opt aa, ab;
    int ra = dbfs_read(c, &root, fh, 0, len, a, &na, &ea, &aa);
    int rb = dbfs_read(t->tc, &root, fh, 0, len, b, &nb, &eb, &ab);

    g_assert_cmpint(ra, ==, rb);
    if (ra == 0) {
        g_assert_cmpuint(na, ==, nb);
        g_assert_true(ea == eb);
        g_assert_cmpmem(a, na, b, nb);
        g_assert_cmpint(aa.attr.ctime_ns, ==, ab.attr.ctime_ns);
    }
    g_free(a);
    g_free(b);
    return ra;
}

/* Written whole, read back with no round trip from the small-file cache
 * alone; a file above the size goes to the database. */
static void test_round_trips(void)
{
    sm_fs t;
    dbfs_cred root = {0};
    unsigned char d[SM_MAX + 100], back[SM_MAX + 100];
    uint32_t n;
    bool eof;
    dbfs_attr_opt a;

    sm_open(&t, false, 1u << 20);
    sm_fill(d, sizeof d, 1);
    for (int unstable = 0; unstable <= 1; unstable++) {
        dbfs_attr f = sm_create(t.c1, t.root, unstable ? "u" : "s");
        sm_write(t.c1, td_fh(&f), 0, d, 5000, unstable);
        dbfs_cache_figures s0 = td_cache(t.fs, "small");
        uint64_t trips = dbfs_conn_round_trips(t.c2);
        td_rc(dbfs_read(t.c2, &root, td_fh(&f), 0, sizeof back, back, &n, &eof, &a), 0);
        g_assert_cmpuint(n, ==, 5000);
        g_assert_true(eof);
        g_assert_cmpmem(back, n, d, 5000);
        /* A slice too. */
        td_rc(dbfs_read(t.c2, &root, td_fh(&f), 4000, 2000, back, &n, &eof, &a), 0);
        g_assert_cmpuint(n, ==, 1000);
        g_assert_cmpmem(back, n, d + 4000, 1000);
        g_assert_cmpuint(dbfs_conn_round_trips(t.c2) - trips, ==, 0);
        g_assert_cmpuint(td_cache(t.fs, "small").hits - s0.hits, ==, 2);
    }
    /* Above small_file_bytes: not kept, so a round trip (no buffer
     * cache). */
    dbfs_attr big = sm_create(t.c1, t.root, "big");
    sm_write(t.c1, td_fh(&big), 0, d, SM_MAX + 1, false);
    uint64_t trips = dbfs_conn_round_trips(t.c2);
    td_rc(dbfs_read(t.c2, &root, td_fh(&big), 0, sizeof back, back, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, SM_MAX + 1);
    g_assert_cmpuint(dbfs_conn_round_trips(t.c2) - trips, ==, 1);
    /* A file whose first write was not seen whole (written through the
     * truth) is kept by its first READ from the database. */
    dbfs_attr o = sm_create(t.tc, t.root, "other");
    sm_write(t.tc, td_fh(&o), 0, d, 3000, false);
    td_rc(dbfs_read(t.c2, &root, td_fh(&o), 0, sizeof back, back, &n, &eof, &a), 0);
    trips = dbfs_conn_round_trips(t.c2);
    td_rc(dbfs_read(t.c2, &root, td_fh(&o), 0, sizeof back, back, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, 3000);
    g_assert_cmpmem(back, n, d, 3000);
    g_assert_cmpuint(dbfs_conn_round_trips(t.c2) - trips, ==, 0);
    sm_close(&t);
}

/* Whatever another connection of the cached dbfs did, reads equal the
 * truth. */
static void coherence(bool buffer)
{
    sm_fs t;
    dbfs_cred root = {0};
    unsigned char d[SM_MAX];
    dbfs_wcc w, w2;

    sm_open(&t, buffer, 1u << 20);
    sm_fill(d, sizeof d, 2);
    dbfs_attr f = sm_create(t.c1, t.root, "f");
    dbfs_fh fh = td_fh(&f);
    sm_write(t.c1, fh, 0, d, 6000, false);
    sm_read_eq(&t, t.c2, fh, SM_MAX);
    sm_write(t.c1, fh, 100, d + 3, 50, true); /* partial, merged */
    sm_read_eq(&t, t.c2, fh, SM_MAX);
    sm_write(t.c1, fh, 7000, d, 100, false); /* past the end: a hole */
    sm_read_eq(&t, t.c2, fh, SM_MAX);
    dbfs_sattr cut = {.set = DBFS_SET_SIZE, .size = 1000};
    td_rc(dbfs_setattr(t.c1, &root, fh, &cut, NULL, &w), 0);
    sm_read_eq(&t, t.c2, fh, SM_MAX);
    dbfs_sattr grow = {.set = DBFS_SET_SIZE, .size = 5000};
    td_rc(dbfs_setattr(t.c1, &root, fh, &grow, NULL, &w), 0);
    sm_read_eq(&t, t.c2, fh, SM_MAX);
    sm_write(t.c1, fh, 10, d, 10, false); /* contents before unknown now */
    sm_read_eq(&t, t.c2, fh, SM_MAX);
    dbfs_sattr mode = {.set = DBFS_SET_MODE, .mode = 0600};
    td_rc(dbfs_setattr(t.c1, &root, fh, &mode, NULL, &w), 0);
    sm_read_eq(&t, t.c2, fh, SM_MAX);
    /* Grown past the size kept, then cut back under it. */
    sm_write(t.c1, fh, 0, d, SM_MAX, false);
    sm_write(t.c1, fh, SM_MAX, d, 10, false);
    sm_read_eq(&t, t.c2, fh, SM_MAX + 10);
    cut.size = 300;
    td_rc(dbfs_setattr(t.c1, &root, fh, &cut, NULL, &w), 0);
    sm_read_eq(&t, t.c2, fh, SM_MAX);
    /* Rename over a cached file, and removal. */
    dbfs_attr g = sm_create(t.c1, t.root, "g");
    sm_write(t.c1, td_fh(&g), 0, d + 9, 2000, false);
    sm_read_eq(&t, t.c2, td_fh(&g), SM_MAX);
    td_rc(dbfs_rename(t.c1, &root, t.root, "f", t.root, "g", &w, &w2), 0);
    g_assert_cmpint(sm_read_eq(&t, t.c2, td_fh(&g), SM_MAX), ==, -ESTALE);
    sm_read_eq(&t, t.c2, fh, SM_MAX);
    td_rc(dbfs_remove(t.c1, &root, t.root, "g", &w), 0);
    g_assert_cmpint(sm_read_eq(&t, t.c2, fh, SM_MAX), ==, -ESTALE);
    sm_close(&t);
}

static void test_coherence(void)
{
    coherence(false);
}

static void test_coherence_buffer(void)
{
    coherence(true);
}

/*
 * Versioned blocks in small files. Each writer owns its files (so versions
 * follow commit order) and stamps a block, a few blocks or the whole file
 * with the next version (FILE_SYNC, or UNSTABLE and COMMIT), publishing
 * it once the write returned. Readers read whole files and check every
 * block against what was published before the read began. The cache holds
 * about four of the eight files, so entries come and go: writes meet
 * files whose contents before are not cached, and fills race evictions.
 */
#define SS_SMALL_BYTES 20000
enum {
    SS_FILES = 8,
    SS_BLOCKS = 8,
    SS_BLOCK = 512, /* a file: 4 KiB */
    SS_WRITERS = 2,
    SS_READERS = 2,
    SS_WRITES = 150,
    SS_READS = 100
};
#define SS_DEADLINE_US (120 * G_USEC_PER_SEC)

typedef struct {
    sm_fs *t;
    dbfs_fh fh[SS_FILES];
    gint published[SS_FILES][SS_BLOCKS];
    gint stop, bad;
    gint reads[SS_READERS];
    gint writes[SS_WRITERS];
} ss_state;

typedef struct {
    ss_state *s;
    int id;
} ss_arg;

static void ss_stamp(unsigned char *blk, gint version, int file, int k)
{
    for (int i = 0; i < SS_BLOCK; i += 12) {
        int rest = SS_BLOCK - i < 12 ? SS_BLOCK - i : 12;
        int v[3] = {version, file, k};
        memcpy(blk + i, v, (size_t)rest);
    }
}

static bool ss_readers_done(ss_state *s)
{
    for (int i = 0; i < SS_READERS; i++)
        if (g_atomic_int_get(&s->reads[i]) < SS_READS)
            return false;
    return true;
}

static gpointer ss_writer(gpointer p)
{
    ss_arg *wa = p;
    ss_state *s = wa->s;
    dbfs_conn *c;
    unsigned char buf[SS_BLOCKS * SS_BLOCK];
    GRand *r = g_rand_new_with_seed(77 + (guint32)wa->id);
    int64_t deadline = g_get_monotonic_time() + SS_DEADLINE_US;
    gint v = 0;

    td_rc(dbfs_conn_open(s->t->fs, &c), 0);
    while (v < SS_WRITES || !ss_readers_done(s)) {
        int f = wa->id + SS_WRITERS * g_rand_int_range(r, 0, SS_FILES / SS_WRITERS);
        int k0 = 0, nb = SS_BLOCKS;

        if (g_get_monotonic_time() > deadline)
            g_error("the readers did not read %d times each in %d s of writing", SS_READS,
                    (int)(SS_DEADLINE_US / G_USEC_PER_SEC));
        if (g_rand_boolean(r)) { /* part of the file */
            k0 = g_rand_int_range(r, 0, SS_BLOCKS);
            nb = g_rand_int_range(r, 1, SS_BLOCKS - k0 + 1);
        }
        v++;
        for (int k = k0; k < k0 + nb; k++)
            ss_stamp(buf + (k - k0) * SS_BLOCK, v, f, k);
        sm_write(c, s->fh[f], (uint64_t)k0 * SS_BLOCK, buf, (uint32_t)nb * SS_BLOCK,
                 g_rand_boolean(r));
        for (int k = k0; k < k0 + nb; k++)
            g_atomic_int_set(&s->published[f][k], v);
        g_atomic_int_inc(&s->writes[wa->id]);
    }
    dbfs_conn_close(c);
    g_rand_free(r);
    return NULL;
}

/* The wrong blocks of file f read into buf, against before[]. */
static int ss_check(const unsigned char *buf, int f, const gint *before)
{
    int bad = 0;

    for (int k = 0; k < SS_BLOCKS; k++) {
        const unsigned char *blk = buf + k * SS_BLOCK;
        int v[3];

        memcpy(v, blk, sizeof v);
        for (int i = 12; i + 12 <= SS_BLOCK; i += 12)
            if (memcmp(blk + i, blk, 12) != 0)
                bad++;
        if (v[1] != f || v[2] != k || v[0] < before[k])
            bad++;
    }
    return bad;
}

static gpointer ss_reader(gpointer p)
{
    ss_arg *ra = p;
    ss_state *s = ra->s;
    dbfs_conn *c;
    dbfs_cred root = {0};
    unsigned char buf[SS_BLOCKS * SS_BLOCK];
    GRand *r = g_rand_new_with_seed(99 + (guint32)ra->id);

    td_rc(dbfs_conn_open(s->t->fs, &c), 0);
    while (!g_atomic_int_get(&s->stop)) {
        int f = g_rand_int_range(r, 0, SS_FILES);
        gint before[SS_BLOCKS];
        uint32_t n;
        bool eof;
        dbfs_attr_opt a;

        for (int k = 0; k < SS_BLOCKS; k++)
            before[k] = g_atomic_int_get(&s->published[f][k]);
        td_rc(dbfs_read(c, &root, s->fh[f], 0, sizeof buf, buf, &n, &eof, &a), 0);
        g_assert_cmpuint(n, ==, sizeof buf);
        g_atomic_int_add(&s->bad, ss_check(buf, f, before));
        /* Counted only while a writer still writes: the race is real. */
        g_atomic_int_inc(&s->reads[ra->id]);
    }
    dbfs_conn_close(c);
    g_rand_free(r);
    return NULL;
}

static void stress(bool buffer)
{
    sm_fs t;
    ss_state s = {0};
    ss_arg wa[SS_WRITERS], ra[SS_READERS];
    GThread *wt[SS_WRITERS], *rt[SS_READERS];
    unsigned char buf[SS_BLOCKS * SS_BLOCK];

    sm_open(&t, buffer, SS_SMALL_BYTES);
    s.t = &t;
    for (int f = 0; f < SS_FILES; f++) {
        char name[16];

        g_snprintf(name, sizeof name, "f%d", f);
        dbfs_attr a = sm_create(t.c1, t.root, name);
        s.fh[f] = td_fh(&a);
        for (int k = 0; k < SS_BLOCKS; k++)
            ss_stamp(buf + k * SS_BLOCK, 0, f, k);
        sm_write(t.c1, s.fh[f], 0, buf, sizeof buf, false);
    }
    for (int i = 0; i < SS_READERS; i++) {
        ra[i] = (ss_arg){&s, i};
        rt[i] = g_thread_new("reader", ss_reader, &ra[i]);
    }
    for (int i = 0; i < SS_WRITERS; i++) {
        wa[i] = (ss_arg){&s, i};
        wt[i] = g_thread_new("writer", ss_writer, &wa[i]);
    }
    for (int i = 0; i < SS_WRITERS; i++)
        g_thread_join(wt[i]);
    g_atomic_int_set(&s.stop, 1);
    for (int i = 0; i < SS_READERS; i++)
        g_thread_join(rt[i]);
    dbfs_cache_figures sf = td_cache(t.fs, "small");
    g_test_message("%d and %d reads against %d and %d writes; small-file hits %" G_GUINT64_FORMAT
                   ", misses %" G_GUINT64_FORMAT,
                   s.reads[0], s.reads[1], s.writes[0], s.writes[1], sf.hits, sf.misses);
    g_assert_cmpint(g_atomic_int_get(&s.bad), ==, 0);
    for (int f = 0; f < SS_FILES; f++)
        sm_read_eq(&t, t.c2, s.fh[f], sizeof buf);
    sm_close(&t);
}

static void test_stress(void)
{
    stress(false);
}

static void test_stress_buffer(void)
{
    stress(true);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/smallcache/round-trips", test_round_trips);
    g_test_add_func("/smallcache/coherence", test_coherence);
    g_test_add_func("/smallcache/coherence-buffer", test_coherence_buffer);
    g_test_add_func("/smallcache/stress", test_stress);
    g_test_add_func("/smallcache/stress-buffer", test_stress_buffer);
    return g_test_run();
}
