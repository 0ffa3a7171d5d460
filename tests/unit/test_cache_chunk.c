/*
 * test_cache_chunk.c -- the chunk buffer cache without a database: hits
 * only for the exact ctime tag, the keep rule (a later tag wins whatever
 * the order of stores), merges of partial writes only into the state the
 * write started from, the byte bound and its counters, and threads
 * hammering one cache.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "cache_chunk.h"

enum { CS = 4096 };

static void tc_fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31 + seed * 7);
}

static void test_tags(void)
{
    cache_chunk *cc;
    unsigned char a[CS], b[CS], out[CS];
    cache_chunk_stats st;

    g_assert_cmpint(cache_chunk_new(1 << 20, CS, &cc), ==, 0);
    tc_fill(a, CS, 1);
    tc_fill(b, CS, 2);
    g_assert_cmpint(cache_chunk_get(cc, 5, 0, 100, 0, CS, out), ==, -ENOENT);
    g_assert_cmpint(cache_chunk_put(cc, 5, 0, 100, a, 3000), ==, 0);
    /* Only the exact tag hits; the length says where zeros begin. */
    g_assert_cmpint(cache_chunk_get(cc, 5, 0, 100, 0, CS, out), ==, 3000);
    g_assert_cmpmem(out, 3000, a, 3000);
    g_assert_cmpint(cache_chunk_get(cc, 5, 0, 101, 0, CS, out), ==, -ENOENT);
    g_assert_cmpint(cache_chunk_get(cc, 5, 0, 99, 0, CS, out), ==, -ENOENT);
    g_assert_cmpint(cache_chunk_get(cc, 5, 1, 100, 0, CS, out), ==, -ENOENT);
    g_assert_cmpint(cache_chunk_get(cc, 6, 0, 100, 0, CS, out), ==, -ENOENT);
    /* A slice. */
    memset(out, 0, sizeof out);
    g_assert_cmpint(cache_chunk_get(cc, 5, 0, 100, 2990, 100, out), ==, 3000);
    g_assert_cmpmem(out, 10, a + 2990, 10);
    g_assert_cmpuint(out[10], ==, 0);
    /* The keep rule: an older fact never replaces a newer one. */
    g_assert_cmpint(cache_chunk_put(cc, 5, 0, 200, b, CS), ==, 0);
    g_assert_cmpint(cache_chunk_put(cc, 5, 0, 150, a, CS), ==, 0);
    g_assert_cmpint(cache_chunk_get(cc, 5, 0, 200, 0, CS, out), ==, CS);
    g_assert_cmpmem(out, CS, b, CS);
    g_assert_cmpint(cache_chunk_get(cc, 5, 0, 150, 0, CS, out), ==, -ENOENT);
    /* Peek sees any tag and counts nothing. */
    int64_t tag = 0;
    cache_chunk_get_stats(cc, &st);
    uint64_t hits = st.hits, misses = st.misses;
    g_assert_cmpint(cache_chunk_peek(cc, 5, 0, 0, 4, out, &tag), ==, CS);
    g_assert_cmpint(tag, ==, 200);
    g_assert_cmpint(cache_chunk_peek(cc, 5, 9, 0, 4, out, &tag), ==, -ENOENT);
    cache_chunk_get_stats(cc, &st);
    g_assert_cmpuint(st.hits, ==, hits);
    g_assert_cmpuint(st.misses, ==, misses);
    g_assert_cmpuint(st.stale, >=, 2);
    /* An empty chunk is a fact too. */
    g_assert_cmpint(cache_chunk_put(cc, 5, 3, 200, "", 0), ==, 0);
    g_assert_cmpint(cache_chunk_get(cc, 5, 3, 200, 0, CS, out), ==, 0);
    cache_chunk_free(cc);
}

static void test_wrote(void)
{
    cache_chunk *cc;
    unsigned char a[CS], p[100], out[CS], want[CS];

    g_assert_cmpint(cache_chunk_new(1 << 20, CS, &cc), ==, 0);
    tc_fill(a, CS, 3);
    tc_fill(p, sizeof p, 4);
    /* A partial write into a chunk cached as of its pre-write ctime: the
     * merged chunk, as of the new ctime. */
    g_assert_cmpint(cache_chunk_put(cc, 1, 0, 10, a, 1000), ==, 0);
    g_assert_cmpint(cache_chunk_wrote(cc, 1, 0, 10, 11, 500, p, 100, CS), ==, 0);
    memcpy(want, a, 1000);
    memcpy(want + 500, p, 100);
    g_assert_cmpint(cache_chunk_get(cc, 1, 0, 11, 0, CS, out), ==, 1000);
    g_assert_cmpmem(out, 1000, want, 1000);
    /* Past the stored end: zeros fill the gap. */
    g_assert_cmpint(cache_chunk_wrote(cc, 1, 0, 11, 12, 2000, p, 100, CS), ==, 0);
    memset(want + 1000, 0, 1000);
    memcpy(want + 2000, p, 100);
    g_assert_cmpint(cache_chunk_get(cc, 1, 0, 12, 0, CS, out), ==, 2100);
    g_assert_cmpmem(out, 2100, want, 2100);
    /* A write that did not start from the cached state merges nothing. */
    g_assert_cmpint(cache_chunk_wrote(cc, 1, 0, 20, 21, 0, p, 100, CS), ==, 0);
    g_assert_cmpint(cache_chunk_get(cc, 1, 0, 21, 0, CS, out), ==, -ENOENT);
    g_assert_cmpint(cache_chunk_get(cc, 1, 0, 12, 0, CS, out), ==, 2100);
    /* A whole chunk needs no earlier state. */
    g_assert_cmpint(cache_chunk_wrote(cc, 1, 7, 30, 31, 0, a, CS, CS), ==, 0);
    g_assert_cmpint(cache_chunk_get(cc, 1, 7, 31, 0, CS, out), ==, CS);
    g_assert_cmpmem(out, CS, a, CS);
    /* A piece that does not fit a chunk is refused. */
    g_assert_cmpint(cache_chunk_wrote(cc, 1, 7, 31, 32, CS - 10, p, 100, CS), ==, -EINVAL);
    cache_chunk_free(cc);
}

static void test_bound(void)
{
    cache_chunk *cc;
    unsigned char a[CS], out[CS];
    cache_chunk_stats st;
    const size_t cap = 64 * 1024;

    g_assert_cmpint(cache_chunk_new(1000, CS, &cc), ==, -EINVAL);
    g_assert_cmpint(cache_chunk_new(cap, CS, &cc), ==, 0);
    tc_fill(a, CS, 5);
    for (uint64_t k = 0; k < 200; k++)
        g_assert_cmpint(cache_chunk_put(cc, 9, k, 1, a, CS), ==, 0);
    cache_chunk_get_stats(cc, &st);
    g_assert_cmpuint(st.bytes, <=, cap);
    g_assert_cmpuint(st.capacity, ==, cap);
    g_assert_cmpuint(st.entries, <, 16);
    g_assert_cmpuint(st.evictions, >=, 200 - st.entries);
    g_assert_cmpuint(st.inserts, ==, 200);
    /* The last one is still there; the first one long gone. */
    g_assert_cmpint(cache_chunk_get(cc, 9, 199, 1, 0, CS, out), ==, CS);
    g_assert_cmpint(cache_chunk_get(cc, 9, 0, 1, 0, CS, out), ==, -ENOENT);
    cache_chunk_free(cc);
}

/* Threads store facts about the same chunks with increasing tags and read
 * them back: a hit must always return the bytes of its tag. */
typedef struct {
    cache_chunk *cc;
    unsigned seed;
    int bad;
} tc_thread;

static gpointer tc_hammer(gpointer p)
{
    tc_thread *t = p;
    GRand *r = g_rand_new_with_seed(t->seed);
    unsigned char buf[256], out[256];

    for (int i = 0; i < 20000; i++) {
        uint64_t chunk = (uint64_t)g_rand_int_range(r, 0, 8);
        int64_t tag = g_rand_int_range(r, 0, 64);

        if (g_rand_boolean(r)) {
            memset(buf, (int)(tag + (int64_t)chunk), sizeof buf);
            cache_chunk_put(t->cc, 1, chunk, tag, buf, sizeof buf);
        } else if (cache_chunk_get(t->cc, 1, chunk, tag, 0, sizeof out, out) >= 0) {
            for (size_t k = 0; k < sizeof out; k++)
                if (out[k] != (unsigned char)(tag + (int64_t)chunk))
                    t->bad++;
        }
    }
    g_rand_free(r);
    return NULL;
}

static void test_threads(void)
{
    cache_chunk *cc;
    tc_thread t[4];
    GThread *th[4];

    g_assert_cmpint(cache_chunk_new(1 << 20, 256, &cc), ==, 0);
    for (int i = 0; i < 4; i++) {
        t[i] = (tc_thread){cc, (unsigned)i + 1, 0};
        th[i] = g_thread_new("hammer", tc_hammer, &t[i]);
    }
    for (int i = 0; i < 4; i++) {
        g_thread_join(th[i]);
        g_assert_cmpint(t[i].bad, ==, 0);
    }
    cache_chunk_free(cc);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cache_chunk/tags", test_tags);
    g_test_add_func("/cache_chunk/wrote", test_wrote);
    g_test_add_func("/cache_chunk/bound", test_bound);
    g_test_add_func("/cache_chunk/threads", test_threads);
    return g_test_run();
}
