/*
 * test_cache_wb.c -- the write-back buffer without a database: how writes
 * coalesce into extents and layers, what a flush takes and in which
 * order, the three ways a flush ends (stored, kept, dropped with an
 * error), the overlay, the byte bound, forgetting, the age query, and a
 * take that waits for a flush in flight.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "cache_wb.h"

enum { CS = 1024 };

/* A generous bound for waiting on an event (a deadline, never a pace). */
#define TW_DEADLINE_US (60 * G_USEC_PER_SEC)

/* Wait until cache_wb_now_us() has moved past t (so the next put is
 * younger than t): the clock's event, not a pause of a guessed length. */
static void tw_after(int64_t t)
{
    while (cache_wb_now_us() <= t)
        g_thread_yield();
}

static cache_wb *tw_new(size_t limit)
{
    cache_wb_opts o = {.limit = limit, .chunk_size = CS, .max_layers = 4};
    cache_wb *wb;

    g_assert_cmpint(cache_wb_new(&o, &wb), ==, 0);
    return wb;
}

/* Replay the pieces of t into a file image (later layers win). */
static void tw_apply(const cache_wb_taken *t, unsigned char *img, size_t max)
{
    size_t n;
    const cache_wb_piece *p = cache_wb_taken_pieces(t, &n);

    for (size_t i = 0; i < n; i++) {
        uint64_t off = p[i].chunk * CS + p[i].at;

        g_assert_cmpuint(off + p[i].n, <=, max);
        g_assert_cmpuint(p[i].at + p[i].n, <=, CS);
        if (i > 0)
            g_assert_true(p[i].layer > p[i - 1].layer ||
                          (p[i].layer == p[i - 1].layer && p[i].chunk > p[i - 1].chunk));
        memcpy(img + off, p[i].data, p[i].n);
    }
}

/* Streaming writes, in and out of order, coalesce into whole chunks of
 * one layer; a write that leaves a gap in a chunk opens a new layer. */
static void test_coalesce(void)
{
    cache_wb *wb = tw_new(1 << 20);
    unsigned char data[4 * CS], img[4 * CS] = {0};
    size_t held, n;
    uint64_t end;
    int64_t mtime;

    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 7 + 3);
    g_assert_false(cache_wb_overlay(wb, 9, &end, &mtime));
    g_assert_true(cache_wb_empty(wb));
    /* [2 CS, 4 CS), then [0, 1.5 CS), then [1.5 CS, 2 CS). */
    g_assert_cmpint(cache_wb_put(wb, 9, 1, 2 * CS, data + 2 * CS, 2 * CS, 100, &held), ==, 0);
    g_assert_cmpint(cache_wb_put(wb, 9, 1, 0, data, CS + CS / 2, 200, &held), ==, 0);
    g_assert_cmpint(cache_wb_put(wb, 9, 1, CS + CS / 2, data + CS + CS / 2, CS / 2, 150, &held), ==,
                    0);
    g_assert_cmpuint(held, >=, 4 * CS);
    g_assert_true(cache_wb_overlay(wb, 9, &end, &mtime));
    g_assert_cmpuint(end, ==, 4 * CS);
    g_assert_cmpint(mtime, ==, 200);

    cache_wb_taken *t = cache_wb_take(wb, 9);
    g_assert_nonnull(t);
    const cache_wb_piece *p = cache_wb_taken_pieces(t, &n);
    g_assert_cmpuint(n, ==, 4); /* four whole chunks, one layer */
    for (size_t i = 0; i < n; i++) {
        g_assert_cmpuint(p[i].chunk, ==, i);
        g_assert_cmpuint(p[i].at, ==, 0);
        g_assert_cmpuint(p[i].n, ==, CS);
        g_assert_cmpuint(p[i].layer, ==, 0);
    }
    g_assert_cmpuint(cache_wb_taken_gen(t), ==, 1);
    g_assert_cmpint(cache_wb_taken_mtime(t), ==, 200);
    g_assert_cmpuint(cache_wb_taken_bytes(t), ==, 4 * CS);
    tw_apply(t, img, sizeof img);
    g_assert_cmpmem(img, sizeof img, data, sizeof data);
    cache_wb_done(wb, t, 0);
    g_assert_true(cache_wb_empty(wb));
    g_assert_null(cache_wb_take(wb, 9));

    /* A gap inside a chunk opens a layer; so does a write that does not
     * meet the newest layer's extent, even if it meets an older one. */
    g_assert_cmpint(cache_wb_put(wb, 9, 1, 0, "aaaa", 4, 1, NULL), ==, 0);
    g_assert_cmpint(cache_wb_put(wb, 9, 1, 100, "bbbb", 4, 2, NULL), ==, 0);
    g_assert_cmpint(cache_wb_put(wb, 9, 1, 2, "cc", 2, 3, NULL), ==, 0);
    t = cache_wb_take(wb, 9);
    p = cache_wb_taken_pieces(t, &n);
    g_assert_cmpuint(n, ==, 3);
    for (unsigned i = 0; i < 3; i++)
        g_assert_cmpuint(p[i].layer, ==, i);
    memset(img, 0, sizeof img);
    tw_apply(t, img, sizeof img);
    g_assert_cmpmem(img, 4, "aacc", 4);
    g_assert_cmpmem(img + 100, 4, "bbbb", 4);
    cache_wb_done(wb, t, 0);
    cache_wb_stats st;
    cache_wb_get_stats(wb, &st);
    g_assert_cmpuint(st.bytes, ==, 0);
    g_assert_cmpuint(st.files, ==, 0);
    cache_wb_free(wb);
}

/* Layers keep order: a later overlapping write wins after replay; too
 * many layers answer -EBUSY and nothing changes. */
static void test_layers(void)
{
    cache_wb *wb = tw_new(1 << 20);
    unsigned char img[2 * CS] = {0};
    size_t n;

    g_assert_cmpint(cache_wb_put(wb, 4, 1, 0, "1111", 4, 1, NULL), ==, 0);
    g_assert_cmpint(cache_wb_put(wb, 4, 1, 10, "2222", 4, 2, NULL), ==, 0); /* layer 2 */
    g_assert_cmpint(cache_wb_put(wb, 4, 1, 1, "33", 2, 3, NULL), ==, 0);    /* layer 3 */
    g_assert_cmpint(cache_wb_put(wb, 4, 1, 20, "44", 2, 4, NULL), ==, 0);   /* layer 4 */
    g_assert_cmpint(cache_wb_put(wb, 4, 1, 0, "5", 1, 5, NULL), ==, -EBUSY);
    /* Joining the newest layer still works: [20,22) meets [22,24). */
    g_assert_cmpint(cache_wb_put(wb, 4, 1, 22, "66", 2, 6, NULL), ==, 0);
    cache_wb_taken *t = cache_wb_take(wb, 4);
    cache_wb_taken_pieces(t, &n);
    g_assert_cmpuint(n, ==, 4);
    tw_apply(t, img, sizeof img);
    g_assert_cmpmem(img, 24,
                    "1331\0\0\0\0\0\0"
                    "2222\0\0\0\0\0\0"
                    "4466",
                    24);
    cache_wb_done(wb, t, 0);
    cache_wb_free(wb);
}

/* KEEP puts the data back before what came meanwhile; an error drops it
 * and is reported once; -ESTALE drops it silently. */
static void test_outcomes(void)
{
    cache_wb *wb = tw_new(1 << 20);
    unsigned char img[CS] = {0};
    uint64_t end;
    int64_t mtime;

    g_assert_cmpint(cache_wb_put(wb, 7, 3, 0, "old!", 4, 10, NULL), ==, 0);
    cache_wb_taken *t = cache_wb_take(wb, 7);
    /* While in flight: the overlay still shows it; writes may come. */
    g_assert_true(cache_wb_overlay(wb, 7, &end, &mtime));
    g_assert_cmpuint(end, ==, 4);
    g_assert_cmpint(cache_wb_put(wb, 7, 3, 2, "NEW", 3, 20, NULL), ==, 0);
    g_assert_true(cache_wb_overlay(wb, 7, &end, &mtime));
    g_assert_cmpuint(end, ==, 5);
    g_assert_cmpint(mtime, ==, 20);
    cache_wb_done(wb, t, CACHE_WB_KEEP);
    t = cache_wb_take(wb, 7);
    tw_apply(t, img, sizeof img);
    g_assert_cmpmem(img, 5, "olNEW", 5); /* the old data first, then the new */
    cache_wb_done(wb, t, -ENOSPC);
    g_assert_false(cache_wb_overlay(wb, 7, &end, &mtime));
    g_assert_cmpint(cache_wb_take_error(wb, 7), ==, -ENOSPC);
    g_assert_cmpint(cache_wb_take_error(wb, 7), ==, 0);
    g_assert_true(cache_wb_empty(wb));

    g_assert_cmpint(cache_wb_put(wb, 8, 1, 0, "x", 1, 1, NULL), ==, 0);
    t = cache_wb_take(wb, 8);
    cache_wb_done(wb, t, -ESTALE);
    g_assert_cmpint(cache_wb_take_error(wb, 8), ==, 0);

    /* Forget: the file is gone; a flush in flight ends on its own. */
    g_assert_cmpint(cache_wb_put(wb, 9, 1, 0, "y", 1, 1, NULL), ==, 0);
    t = cache_wb_take(wb, 9);
    g_assert_cmpint(cache_wb_put(wb, 9, 1, 5, "z", 1, 2, NULL), ==, 0);
    cache_wb_forget(wb, 9);
    cache_wb_done(wb, t, CACHE_WB_KEEP);
    g_assert_null(cache_wb_take(wb, 9));
    cache_wb_stats st;
    cache_wb_get_stats(wb, &st);
    g_assert_cmpuint(st.bytes, ==, 0);
    g_assert_cmpuint(st.files, ==, 0);
    g_assert_cmpuint(st.errors, ==, 2);
    cache_wb_free(wb);
}

/* The bound: a put that would pass it is refused whole. The age query
 * lists files oldest first. */
static void test_bound_and_age(void)
{
    cache_wb *wb = tw_new(8 * CS);
    unsigned char data[8 * CS] = {0};
    uint64_t inos[4];
    cache_wb_stats st;

    g_assert_cmpint(cache_wb_put(wb, 1, 1, 0, data, 2 * CS, 1, NULL), ==, 0);
    tw_after(cache_wb_now_us());
    int64_t mid = cache_wb_now_us();
    tw_after(mid);
    g_assert_cmpint(cache_wb_put(wb, 2, 1, 0, data, 2 * CS, 1, NULL), ==, 0);
    g_assert_cmpint(cache_wb_put(wb, 3, 1, 0, data, 6 * CS, 1, NULL), ==, -ENOSPC);
    g_assert_false(cache_wb_overlay(wb, 3, &(uint64_t){0}, &(int64_t){0}));
    cache_wb_get_stats(wb, &st);
    g_assert_cmpuint(st.bytes, <=, st.limit);
    g_assert_cmpuint(st.files, ==, 2);
    g_assert_cmpuint(st.refused, ==, 1);
    g_assert_cmpint(st.oldest_age_us, >, 0);
    g_assert_cmpuint(cache_wb_due(wb, INT64_MAX, inos, 4), ==, 2);
    g_assert_cmpuint(inos[0], ==, 1);
    g_assert_cmpuint(inos[1], ==, 2);
    g_assert_cmpuint(cache_wb_due(wb, mid, inos, 4), ==, 1);
    g_assert_cmpuint(inos[0], ==, 1);
    cache_wb_forget(wb, 1);
    cache_wb_forget(wb, 2);
    cache_wb_get_stats(wb, &st);
    g_assert_cmpuint(st.bytes, ==, 0);
    cache_wb_free(wb);
}

/* A second take waits until the flush in flight ends: the test waits
 * until the buffer counts it waiting (the event), then ends the flush. */
typedef struct {
    cache_wb *wb;
    gint taken;
} tw_waiter;

static gpointer tw_waiter_main(gpointer p)
{
    tw_waiter *w = p;
    cache_wb_taken *t = cache_wb_take(w->wb, 5);

    g_atomic_int_set(&w->taken, 1);
    if (t)
        cache_wb_done(w->wb, t, 0);
    return NULL;
}

static void test_take_waits(void)
{
    cache_wb *wb = tw_new(1 << 20);
    tw_waiter w = {wb, 0};

    g_assert_cmpint(cache_wb_put(wb, 5, 1, 0, "a", 1, 1, NULL), ==, 0);
    cache_wb_taken *t = cache_wb_take(wb, 5);
    g_assert_cmpint(cache_wb_put(wb, 5, 1, 1, "b", 1, 2, NULL), ==, 0);
    GThread *th = g_thread_new("take", tw_waiter_main, &w);
    int64_t deadline = g_get_monotonic_time() + TW_DEADLINE_US;
    cache_wb_stats st;

    for (cache_wb_get_stats(wb, &st); st.waiting == 0; cache_wb_get_stats(wb, &st)) {
        if (g_get_monotonic_time() > deadline)
            g_error("the second take never started waiting");
        g_thread_yield();
    }
    g_assert_cmpint(g_atomic_int_get(&w.taken), ==, 0);
    cache_wb_done(wb, t, 0);
    g_thread_join(th);
    g_assert_cmpint(g_atomic_int_get(&w.taken), ==, 1);
    g_assert_true(cache_wb_empty(wb));
    cache_wb_get_stats(wb, &st);
    g_assert_cmpuint(st.waiting, ==, 0);
    cache_wb_free(wb);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cache_wb/coalesce", test_coalesce);
    g_test_add_func("/cache_wb/layers", test_layers);
    g_test_add_func("/cache_wb/outcomes", test_outcomes);
    g_test_add_func("/cache_wb/bound-and-age", test_bound_and_age);
    g_test_add_func("/cache_wb/take-waits", test_take_waits);
    return g_test_run();
}
