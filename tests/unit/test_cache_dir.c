/*
 * test_cache_dir.c -- the listing cache without a database: pages by
 * cookie, served only for the exact (generation, change counter), the
 * keep rule, "too large" listings, the byte bound with its counters, and
 * threads storing and slicing one cache.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "cache_dir.h"

/* n entries with cookies 3, 5, 7, ... (gaps, as after removals), inodes
 * 100 + i and names "name-<i>" of varying length; names kept in bufs. */
static cache_dir_ent *tcd_ents(size_t n, char (*bufs)[32])
{
    cache_dir_ent *e = g_new0(cache_dir_ent, n ? n : 1);

    for (size_t i = 0; i < n; i++) {
        int len = snprintf(bufs[i], 32, "name-%zu%.*s", i, (int)(i % 7), "xxxxxxx");

        e[i] = (cache_dir_ent){.cookie = 3 + 2 * i,
                               .ino = 100 + i,
                               .gen = (uint32_t)i,
                               .len = (uint32_t)len,
                               .name = bufs[i]};
    }
    return e;
}

static void tcd_expect(const cache_dir_ent *got, const cache_dir_ent *want)
{
    g_assert_cmpuint(got->cookie, ==, want->cookie);
    g_assert_cmpuint(got->ino, ==, want->ino);
    g_assert_cmpuint(got->gen, ==, want->gen);
    g_assert_cmpuint(got->len, ==, want->len);
    g_assert_cmpmem(got->name, got->len, want->name, want->len);
    g_assert_cmpint(got->name[got->len], ==, 0);
}

/* Paging a listing with every page size gives every entry once, in
 * order, and "more" exactly when entries remain. */
static void test_pages(void)
{
    enum { N = 200 };
    char bufs[N][32];
    cache_dir_ent *e = tcd_ents(N, bufs);
    cache_dir_key k = {.ino = 7, .gen = 2, .change = 40};
    cache_dir_page pg;
    cache_dir *d;

    g_assert_cmpint(cache_dir_new(1 << 20, &d), ==, 0);
    g_assert_cmpint(cache_dir_put(d, k, 1, 9, e, N), ==, 0);
    for (uint32_t max = 1; max <= N + 1; max += (max < 10 ? 1 : 37)) {
        uint64_t cookie = 2;
        size_t seen = 0;
        bool more = true;

        while (more) {
            g_assert_cmpint(cache_dir_slice(d, k, cookie, max, &pg), ==, 0);
            g_assert_cmpuint(pg.parent_ino, ==, 1);
            g_assert_cmpuint(pg.parent_gen, ==, 9);
            g_assert_cmpuint(pg.n, <=, max);
            for (size_t i = 0; i < pg.n; i++)
                tcd_expect(&pg.ents[i], &e[seen + i]);
            seen += pg.n;
            more = pg.more;
            g_assert_true(more == (seen < N));
            if (pg.n)
                cookie = pg.ents[pg.n - 1].cookie;
            cache_dir_page_free(&pg);
        }
        g_assert_cmpuint(seen, ==, N);
    }
    /* A cookie that names no entry (even, or removed) resumes after its
     * position; one past the end gives an empty last page. */
    g_assert_cmpint(cache_dir_slice(d, k, 10, 2, &pg), ==, 0);
    g_assert_cmpuint(pg.n, ==, 2);
    g_assert_cmpuint(pg.ents[0].cookie, ==, 11);
    cache_dir_page_free(&pg);
    g_assert_cmpint(cache_dir_slice(d, k, 3 + 2 * N, 5, &pg), ==, 0);
    g_assert_cmpuint(pg.n, ==, 0);
    g_assert_false(pg.more);
    cache_dir_page_free(&pg);
    g_assert_cmpint(cache_dir_slice(d, k, UINT64_MAX, 5, &pg), ==, 0);
    g_assert_cmpuint(pg.n, ==, 0);
    cache_dir_page_free(&pg);
    /* max 0: nothing taken, but it says whether entries remain. */
    g_assert_cmpint(cache_dir_slice(d, k, 0, 0, &pg), ==, 0);
    g_assert_cmpuint(pg.n, ==, 0);
    g_assert_true(pg.more);
    cache_dir_page_free(&pg);
    cache_dir_free(d);
    g_free(e);
}

/* An empty directory is a listing too (and the root is its own parent). */
static void test_empty(void)
{
    cache_dir_key k = {.ino = 1, .gen = 1, .change = 3};
    cache_dir_page pg;
    cache_dir *d;

    g_assert_cmpint(cache_dir_new(4096, &d), ==, 0);
    g_assert_cmpint(cache_dir_put(d, k, 1, 1, NULL, 0), ==, 0);
    g_assert_cmpint(cache_dir_slice(d, k, 0, 100, &pg), ==, 0);
    g_assert_cmpuint(pg.n, ==, 0);
    g_assert_false(pg.more);
    g_assert_cmpuint(pg.parent_ino, ==, 1);
    cache_dir_page_free(&pg);
    cache_dir_free(d);
    g_assert_cmpint(cache_dir_new(4095, &d), ==, -EINVAL);
    g_assert_null(d);
}

/* Only the exact generation and counter hit; a newer counter is kept
 * over an older one whatever the order of stores; the counters say so. */
static void test_exact(void)
{
    char bufs[4][32];
    cache_dir_ent *e = tcd_ents(4, bufs);
    cache_dir_key k = {.ino = 7, .gen = 2, .change = 40};
    cache_dir_key older = k, newer = k, other_gen = k;
    cache_lru_stats st;
    cache_dir_page pg;
    cache_dir *d;

    older.change = 39;
    newer.change = 41;
    other_gen.gen = 3;
    g_assert_cmpint(cache_dir_new(1 << 16, &d), ==, 0);
    g_assert_cmpint(cache_dir_slice(d, k, 0, 10, &pg), ==, -ENOENT);
    g_assert_cmpint(cache_dir_put(d, k, 1, 1, e, 4), ==, 0);
    g_assert_cmpint(cache_dir_slice(d, k, 0, 10, &pg), ==, 0);
    g_assert_cmpuint(pg.n, ==, 4);
    cache_dir_page_free(&pg);
    g_assert_cmpint(cache_dir_slice(d, older, 0, 10, &pg), ==, -ENOENT);
    g_assert_cmpint(cache_dir_slice(d, newer, 0, 10, &pg), ==, -ENOENT);
    g_assert_cmpint(cache_dir_slice(d, other_gen, 0, 10, &pg), ==, -ENOENT);
    cache_dir_stats(d, &st);
    g_assert_cmpuint(st.hits, ==, 1);
    g_assert_cmpuint(st.misses, ==, 4);
    /* An older listing does not replace a newer one... */
    g_assert_cmpint(cache_dir_put(d, older, 1, 1, e, 2), ==, 0);
    g_assert_cmpint(cache_dir_slice(d, k, 0, 10, &pg), ==, 0);
    g_assert_cmpuint(pg.n, ==, 4);
    cache_dir_page_free(&pg);
    /* ...a newer one does, and the old counter stops hitting. */
    g_assert_cmpint(cache_dir_put(d, newer, 5, 6, e + 1, 3), ==, 0);
    g_assert_cmpint(cache_dir_slice(d, k, 0, 10, &pg), ==, -ENOENT);
    g_assert_cmpint(cache_dir_slice(d, newer, 0, 10, &pg), ==, 0);
    g_assert_cmpuint(pg.n, ==, 3);
    g_assert_cmpuint(pg.parent_ino, ==, 5);
    g_assert_cmpuint(pg.parent_gen, ==, 6);
    tcd_expect(&pg.ents[0], &e[1]);
    cache_dir_page_free(&pg);
    /* A new generation (the inode reused) replaces whatever the counter. */
    other_gen.change = 1;
    g_assert_cmpint(cache_dir_put(d, other_gen, 1, 1, e, 1), ==, 0);
    g_assert_cmpint(cache_dir_slice(d, other_gen, 0, 10, &pg), ==, 0);
    g_assert_cmpuint(pg.n, ==, 1);
    cache_dir_page_free(&pg);
    g_assert_cmpint(cache_dir_slice(d, newer, 0, 10, &pg), ==, -ENOENT);
    cache_dir_stats(d, &st);
    g_assert_cmpuint(st.hits, ==, 4);
    g_assert_cmpuint(st.misses, ==, 6);
    g_assert_cmpuint(st.entries, ==, 1);
    /* Reset drops it. */
    cache_dir_reset(d);
    g_assert_cmpint(cache_dir_slice(d, other_gen, 0, 10, &pg), ==, -ENOENT);
    cache_dir_stats(d, &st);
    g_assert_cmpuint(st.entries, ==, 0);
    g_assert_cmpuint(st.charge, ==, 0);
    cache_dir_free(d);
    g_free(e);
}

/* More entries than a listing may hold, or more name bytes than a shard
 * holds: remembered as too large at that counter only. */
static void test_large(void)
{
    cache_dir_key k = {.ino = 9, .gen = 1, .change = 5};
    cache_dir_key later = k;
    cache_dir_page pg;
    cache_dir *d;
    size_t max;
    char(*bufs)[32];
    cache_dir_ent *e;

    g_assert_cmpint(cache_dir_new(64 * 1024, &d), ==, 0);
    max = cache_dir_max_entries(d);
    g_assert_cmpuint(max, >, 100);
    g_assert_cmpuint(max, <, 1000);
    bufs = g_malloc((max + 1) * sizeof *bufs);
    e = tcd_ents(max + 1, bufs);
    g_assert_cmpint(cache_dir_put(d, k, 1, 1, e, max + 1), ==, -E2BIG);
    g_assert_cmpint(cache_dir_slice(d, k, 0, 10, &pg), ==, -EFBIG);
    later.change = 6;
    g_assert_cmpint(cache_dir_slice(d, later, 0, 10, &pg), ==, -ENOENT);
    /* Exactly the most it may hold fits. */
    g_assert_cmpint(cache_dir_put(d, later, 1, 1, e, max), ==, 0);
    g_assert_cmpint(cache_dir_slice(d, later, 0, (uint32_t)max + 5, &pg), ==, 0);
    g_assert_cmpuint(pg.n, ==, max);
    g_assert_false(pg.more);
    cache_dir_page_free(&pg);

    /* Few entries with long names: over a shard's bytes. */
    {
        enum { LONG = 255 };
        size_t n = (64 * 1024 / 4) / LONG + 2;
        cache_dir_ent *le = g_new0(cache_dir_ent, n);
        char name[LONG];
        cache_dir_key lk = {.ino = 10, .gen = 1, .change = 1};

        memset(name, 'n', sizeof name);
        g_assert_cmpuint(n, <, max);
        for (size_t i = 0; i < n; i++)
            le[i] = (cache_dir_ent){.cookie = 3 + i, .ino = 50 + i, .len = LONG, .name = name};
        g_assert_cmpint(cache_dir_put(d, lk, 1, 1, le, n), ==, -E2BIG);
        g_assert_cmpint(cache_dir_slice(d, lk, 0, 10, &pg), ==, -EFBIG);
        g_free(le);
    }
    cache_dir_free(d);
    g_free(e);
    g_free(bufs);
}

/* The byte bound holds whatever is stored, evicting the least recently
 * used listings, and counts what it evicted. */
static void test_bound(void)
{
    enum { N = 40, DIRS = 2000 };
    char bufs[N][32];
    cache_dir_ent *e = tcd_ents(N, bufs);
    cache_lru_stats st;
    cache_dir_page pg;
    cache_dir *d;
    unsigned hot_hits = 0;

    g_assert_cmpint(cache_dir_new(32 * 1024, &d), ==, 0);
    for (uint64_t i = 0; i < DIRS; i++) {
        cache_dir_key k = {.ino = 1000 + i, .gen = 1, .change = i};
        cache_dir_key hot = {.ino = 1, .gen = 1, .change = 1};

        if (i == 0)
            g_assert_cmpint(cache_dir_put(d, hot, 1, 1, e, 3), ==, 0);
        g_assert_cmpint(cache_dir_put(d, k, 1, 1, e, N), ==, 0);
        if (cache_dir_slice(d, hot, 0, 1, &pg) == 0) {
            hot_hits++;
            cache_dir_page_free(&pg);
        }
        cache_dir_stats(d, &st);
        g_assert_cmpuint(st.charge, <=, st.capacity);
    }
    /* The listing read after every store stays (it is never the least
     * recently used in its shard). */
    g_assert_cmpuint(hot_hits, ==, DIRS);
    cache_dir_stats(d, &st);
    g_assert_cmpuint(st.capacity, ==, 32 * 1024);
    g_assert_cmpuint(st.evictions, >, DIRS / 2);
    g_assert_cmpuint(st.entries + st.evictions, ==, DIRS + 1);
    /* The newest is there, the oldest long gone. */
    g_assert_cmpint(
        cache_dir_slice(d, (cache_dir_key){.ino = 1000 + DIRS - 1, .gen = 1, .change = DIRS - 1}, 0,
                        100, &pg),
        ==, 0);
    g_assert_cmpuint(pg.n, ==, N);
    cache_dir_page_free(&pg);
    g_assert_cmpint(
        cache_dir_slice(d, (cache_dir_key){.ino = 1000, .gen = 1, .change = 0}, 0, 100, &pg), ==,
        -ENOENT);
    cache_dir_free(d);
    g_free(e);
}

/* Threads storing listings of rising counters and slicing them: every
 * page they get is whole and of the counter they asked for. */
typedef struct {
    cache_dir *d;
    unsigned seed;
    unsigned hits;
} tcd_thread_arg;

static gpointer tcd_thread(gpointer p)
{
    tcd_thread_arg *a = p;
    char bufs[64][32];
    cache_dir_ent *e = tcd_ents(64, bufs);
    GRand *r = g_rand_new_with_seed(a->seed);

    for (int i = 0; i < 20000; i++) {
        uint64_t ino = (uint64_t)g_rand_int_range(r, 1, 16);
        uint64_t change = (uint64_t)g_rand_int_range(r, 1, 8);
        /* A listing's entries depend on its counter: n = 8 * change. */
        cache_dir_key k = {.ino = ino, .gen = 1, .change = change};
        cache_dir_page pg;

        if (g_rand_boolean(r)) {
            g_assert_cmpint(cache_dir_put(a->d, k, ino, (uint32_t)change, e, 8 * change), ==, 0);
            continue;
        }
        if (cache_dir_slice(a->d, k, 0, 64, &pg) != 0)
            continue;
        a->hits++;
        g_assert_cmpuint(pg.n, ==, 8 * change);
        g_assert_cmpuint(pg.parent_gen, ==, change);
        for (size_t j = 0; j < pg.n; j++)
            tcd_expect(&pg.ents[j], &e[j]);
        cache_dir_page_free(&pg);
    }
    g_rand_free(r);
    g_free(e);
    return NULL;
}

static void test_threads(void)
{
    enum { T = 4 };
    tcd_thread_arg args[T];
    GThread *th[T];
    cache_lru_stats st;
    cache_dir *d;
    unsigned hits = 0;

    g_assert_cmpint(cache_dir_new(48 * 1024, &d), ==, 0);
    for (int i = 0; i < T; i++) {
        args[i] = (tcd_thread_arg){.d = d, .seed = 17u + (unsigned)i};
        th[i] = g_thread_new("cache-dir", tcd_thread, &args[i]);
    }
    for (int i = 0; i < T; i++) {
        g_thread_join(th[i]);
        hits += args[i].hits;
    }
    cache_dir_stats(d, &st);
    g_assert_cmpuint(hits, >, 0);
    g_assert_cmpuint(st.hits, ==, hits);
    g_assert_cmpuint(st.charge, <=, st.capacity);
    cache_dir_free(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cache_dir/pages", test_pages);
    g_test_add_func("/cache_dir/empty", test_empty);
    g_test_add_func("/cache_dir/exact", test_exact);
    g_test_add_func("/cache_dir/large", test_large);
    g_test_add_func("/cache_dir/bound", test_bound);
    g_test_add_func("/cache_dir/threads", test_threads);
    return g_test_run();
}
