/*
 * test_cache_small.c -- the small-file cache (cache/cache_small.c): hits
 * only for the exact ctime, slices of the file, the keep rule (a later
 * ctime stays), what a committed write may store (a new file's contents;
 * a merge into contents cached as of the write's pre-operation ctime;
 * nothing when the contents before are unknown or the sizes do not add
 * up), the size bounds, and the counters.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "cache_small.h"

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31 + seed);
}

static void test_get_put(void)
{
    cache_small *cs;
    unsigned char d[5000], out[6000];
    cache_small_stats st;

    g_assert_cmpint(cache_small_new(1u << 20, 65536, &cs), ==, 0);
    fill(d, sizeof d, 1);
    g_assert_cmpint(cache_small_get(cs, 4, 100, 0, 10, out), ==, -ENOENT);
    g_assert_cmpint(cache_small_put(cs, 4, 100, d, sizeof d), ==, 0);
    memset(out, 0xee, sizeof out);
    g_assert_cmpint(cache_small_get(cs, 4, 100, 0, sizeof out, out), ==, 5000);
    g_assert_cmpmem(out, 5000, d, 5000);
    g_assert_cmpuint(out[5000], ==, 0xee); /* nothing past the file */
    g_assert_cmpint(cache_small_get(cs, 4, 100, 4990, 100, out), ==, 5000);
    g_assert_cmpmem(out, 10, d + 4990, 10);
    g_assert_cmpint(cache_small_get(cs, 4, 100, 9000, 100, out), ==, 5000);
    /* Another ctime, another file: misses. */
    g_assert_cmpint(cache_small_get(cs, 4, 101, 0, 10, out), ==, -ENOENT);
    g_assert_cmpint(cache_small_get(cs, 4, 99, 0, 10, out), ==, -ENOENT);
    g_assert_cmpint(cache_small_get(cs, 5, 100, 0, 10, out), ==, -ENOENT);
    /* The keep rule: an older fact does not replace a newer one. */
    g_assert_cmpint(cache_small_put(cs, 4, 90, d, 10), ==, 0);
    g_assert_cmpint(cache_small_get(cs, 4, 100, 0, 10, out), ==, 5000);
    g_assert_cmpint(cache_small_get(cs, 4, 90, 0, 10, out), ==, -ENOENT);
    /* Too large to keep; empty files are kept. */
    g_assert_cmpint(cache_small_put(cs, 6, 1, d, 65537), ==, -E2BIG);
    g_assert_cmpint(cache_small_put(cs, 7, 1, d, 0), ==, 0);
    g_assert_cmpint(cache_small_get(cs, 7, 1, 0, 10, out), ==, 0);
    cache_small_get_stats(cs, &st);
    g_assert_cmpuint(st.hits, ==, 5);
    g_assert_cmpuint(st.misses, ==, 5);
    g_assert_cmpuint(st.stale, ==, 3);
    g_assert_cmpuint(cache_small_max_file(cs), ==, 65536);
    g_assert_cmpuint(st.bytes, >, 5000);
    cache_small_free(cs);
}

static void test_wrote(void)
{
    cache_small *cs;
    unsigned char d[8000], want[9000], out[9000];

    g_assert_cmpint(cache_small_new(1u << 20, 8192, &cs), ==, 0);
    fill(d, sizeof d, 2);
    /* A new file's first write: its whole contents. */
    cache_small_piece p1 = {0, d, 3000};
    g_assert_cmpint(cache_small_wrote(cs, 1, 10, 0, 11, 3000, &p1, 1), ==, 0);
    g_assert_cmpint(cache_small_get(cs, 1, 11, 0, 9000, out), ==, 3000);
    g_assert_cmpmem(out, 3000, d, 3000);
    /* A partial write merged into the contents as of its pre-operation
     * ctime, past the end: a hole of zeros in between. */
    cache_small_piece p2 = {5000, d + 100, 1000};
    g_assert_cmpint(cache_small_wrote(cs, 1, 11, 3000, 12, 6000, &p2, 1), ==, 0);
    memcpy(want, d, 3000);
    memset(want + 3000, 0, 2000);
    memcpy(want + 5000, d + 100, 1000);
    g_assert_cmpint(cache_small_get(cs, 1, 12, 0, 9000, out), ==, 6000);
    g_assert_cmpmem(out, 6000, want, 6000);
    /* Two pieces of one write (two chunks, apart in memory). */
    cache_small_piece p3[2] = {{1000, d + 7000, 24}, {1024, d + 10, 500}};
    g_assert_cmpint(cache_small_wrote(cs, 1, 12, 6000, 13, 6000, p3, 2), ==, 0);
    memcpy(want + 1000, d + 7000, 24);
    memcpy(want + 1024, d + 10, 500);
    g_assert_cmpint(cache_small_get(cs, 1, 13, 0, 9000, out), ==, 6000);
    g_assert_cmpmem(out, 6000, want, 6000);
    /* Contents before unknown (pre 20 not cached): nothing stored. */
    g_assert_cmpint(cache_small_wrote(cs, 1, 20, 6000, 21, 6000, &p1, 1), ==, 0);
    g_assert_cmpint(cache_small_get(cs, 1, 21, 0, 10, out), ==, -ENOENT);
    /* Sizes the write does not explain (a truncation in between):
     * nothing. */
    g_assert_cmpint(cache_small_wrote(cs, 1, 13, 6000, 14, 4000, &p1, 1), ==, 0);
    g_assert_cmpint(cache_small_get(cs, 1, 14, 0, 10, out), ==, -ENOENT);
    /* Past the largest file kept: nothing. */
    cache_small_piece big = {0, d, 8000};
    g_assert_cmpint(cache_small_wrote(cs, 1, 13, 6000, 15, 9000, &big, 1), ==, 0);
    g_assert_cmpint(cache_small_get(cs, 1, 15, 0, 10, out), ==, -ENOENT);
    /* A first write that does not start at 0 of a new file. */
    cache_small_piece p4 = {100, d, 50};
    g_assert_cmpint(cache_small_wrote(cs, 2, 1, 0, 2, 150, &p4, 1), ==, 0);
    memset(want, 0, 100);
    memcpy(want + 100, d, 50);
    g_assert_cmpint(cache_small_get(cs, 2, 2, 0, 9000, out), ==, 150);
    g_assert_cmpmem(out, 150, want, 150);
    cache_small_free(cs);
}

static void test_bounds(void)
{
    cache_small *cs;
    unsigned char d[4096] = {0};
    cache_small_stats st;

    g_assert_cmpint(cache_small_new(1000, 4096, &cs), ==, -EINVAL);
    g_assert_cmpint(cache_small_new(1u << 20, 0, &cs), ==, -EINVAL);
    g_assert_cmpint(cache_small_new(64 * 1024, 4096, &cs), ==, 0);
    for (uint64_t ino = 1; ino <= 100; ino++)
        g_assert_cmpint(cache_small_put(cs, ino, 1, d, sizeof d), ==, 0);
    cache_small_get_stats(cs, &st);
    g_assert_cmpuint(st.bytes, <=, 64 * 1024);
    g_assert_cmpuint(st.evictions, >, 0);
    /* The newest are there. */
    g_assert_cmpint(cache_small_get(cs, 100, 1, 0, 1, d), ==, 4096);
    cache_small_free(cs);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cache_small/get-put", test_get_put);
    g_test_add_func("/cache_small/wrote", test_wrote);
    g_test_add_func("/cache_small/bounds", test_bounds);
    return g_test_run();
}
