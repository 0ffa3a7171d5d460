/*
 * test_cache_name.c -- the naming cache (cache/cache_name.c): found and
 * absent entries, names it never holds (".", "..", "", too long), keys
 * that differ only in the directory or a byte, the directory as the guard
 * of its names, and threads creating and removing names in a few
 * directories while others look them up, every hit checked against the
 * model (the argument in cache_name.c's header).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "cache_name.h"

/* Widen the window between two steps of a thread (a read and its fill, a
 * commit and its store) by a short random spin, so other threads' steps
 * fall into it: on the CPU, not by giving it away (sched_yield would hand
 * it to whatever else runs on the machine and make the test's length
 * depend on the load). */
static void tc_widen(GRand *r)
{
    volatile unsigned spin = 0;
    unsigned n = (unsigned)g_rand_int_range(r, 0, 2048);

    for (unsigned i = 0; i < n; i++)
        spin += i;
}

static cache_name *new_name(size_t n)
{
    cache_name *c = NULL;

    g_assert_cmpint(cache_name_new(n, &c), ==, 0);
    return c;
}

static int fill(cache_name *c, uint64_t dir, const char *name, bool found, uint64_t ino,
                uint32_t gen)
{
    return cache_name_fill(c, cache_name_ticket(c), dir, name, strlen(name), found, ino, gen);
}

static cache_name_result get(cache_name *c, uint64_t dir, const char *name, uint64_t *ino,
                             uint32_t *gen)
{
    return cache_name_get(c, dir, name, strlen(name), ino, gen);
}

static void test_basic(void)
{
    cache_name *c = NULL;
    uint64_t ino = 0;
    uint32_t gen = 0;
    cache_lru_stats st;
    char long_name[CACHE_NAME_MAX + 2];

    g_assert_cmpint(cache_name_new(0, &c), ==, -EINVAL);
    g_assert_null(c);
    c = new_name(100);
    g_assert_cmpint(get(c, 1, "a", &ino, &gen), ==, CACHE_NAME_MISS);
    g_assert_cmpint(fill(c, 1, "a", true, 55, 9), ==, 0);
    g_assert_cmpint(fill(c, 1, "b", false, 0, 0), ==, 0);
    g_assert_cmpint(get(c, 1, "a", &ino, &gen), ==, CACHE_NAME_FOUND);
    g_assert_cmpuint(ino, ==, 55);
    g_assert_cmpuint(gen, ==, 9);
    g_assert_cmpint(get(c, 1, "b", &ino, &gen), ==, CACHE_NAME_ABSENT);
    /* Same name, other directory; a name that is a prefix. */
    g_assert_cmpint(get(c, 2, "a", &ino, &gen), ==, CACHE_NAME_MISS);
    g_assert_cmpint(get(c, 1, "ab", &ino, &gen), ==, CACHE_NAME_MISS);
    /* Binary names are names. */
    g_assert_cmpint(cache_name_fill(c, cache_name_ticket(c), 1, "x\377y", 3, true, 7, 1), ==, 0);
    g_assert_cmpint(cache_name_get(c, 1, "x\377y", 3, &ino, &gen), ==, CACHE_NAME_FOUND);
    g_assert_cmpint(cache_name_get(c, 1, "x\377z", 3, &ino, &gen), ==, CACHE_NAME_MISS);
    /* Never cached: dots, empty, too long. */
    g_assert_cmpint(fill(c, 1, ".", true, 1, 1), ==, -EINVAL);
    g_assert_cmpint(fill(c, 1, "..", true, 1, 1), ==, -EINVAL);
    g_assert_cmpint(fill(c, 1, "", false, 0, 0), ==, -EINVAL);
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    g_assert_cmpint(fill(c, 1, long_name, false, 0, 0), ==, -EINVAL);
    long_name[CACHE_NAME_MAX] = 0; /* exactly the maximum is fine */
    g_assert_cmpint(fill(c, 1, long_name, false, 0, 0), ==, 0);
    g_assert_cmpint(get(c, 1, long_name, &ino, &gen), ==, CACHE_NAME_ABSENT);
    g_assert_cmpint(get(c, 1, "..", &ino, &gen), ==, CACHE_NAME_MISS);
    cache_name_forget(c, 1, "a", 1);
    g_assert_cmpint(get(c, 1, "a", &ino, &gen), ==, CACHE_NAME_MISS);
    cache_name_stats(c, &st);
    g_assert_cmpuint(st.entries, ==, 3);
    g_assert_cmpuint(st.hits, ==, 4); /* ".." is not looked up at all */
    cache_name_reset(c);
    cache_name_stats(c, &st);
    g_assert_cmpuint(st.entries, ==, 0);
    cache_name_free(c);
    cache_name_free(NULL);
}

/* The directory guards its names: a mutation of dir 1 refuses fills of
 * names in dir 1 (read before its commit), not those of dir 2. */
static void test_guard(void)
{
    cache_name *c = new_name(100);
    cache_lru_ticket t = cache_name_ticket(c);
    cache_lru_mut m;
    uint64_t d1 = 1, ino;
    uint32_t gen;

    cache_name_mut_begin(c, &m, &d1, 1);
    g_assert_cmpint(cache_name_store(c, &m, 1, "new", 3, true, 9, 1), ==, 0);
    g_assert_cmpint(cache_name_store(c, &m, 1, ".", 1, true, 9, 1), ==, -EINVAL);
    cache_name_mut_end(c, &m);
    /* the reader saw "new" absent before the create: refused */
    g_assert_cmpint(cache_name_fill(c, t, 1, "new", 3, false, 0, 0), ==, -EAGAIN);
    g_assert_cmpint(cache_name_get(c, 1, "new", 3, &ino, &gen), ==, CACHE_NAME_FOUND);
    /* any name of dir 1 read with that ticket is refused */
    g_assert_cmpint(cache_name_fill(c, t, 1, "other", 5, false, 0, 0), ==, -EAGAIN);
    /* dir 2 was not touched (64 stripes... unless it collides; check) */
    int rc = cache_name_fill(c, t, 2, "other", 5, false, 0, 0);
    g_assert_true(rc == 0 || rc == -EAGAIN);
    cache_name_free(c);
}

/* --- threads against a model directory ------------------------------------
 * Each name's state is a version v: odd = the name exists, as inode v;
 * even = it does not. Writers lock the directory (as the SQL functions
 * lock the directory's row) and move one or two names (a rename) to their
 * next version. */

#define NH_DIRS    3
#define NH_NAMES   12
#define NH_THREADS 6
#define NH_OPS     30000

typedef struct {
    pthread_mutex_t dir[NH_DIRS];
    uint64_t v[NH_DIRS][NH_NAMES];
    atomic_uint_fast64_t replied[NH_DIRS][NH_NAMES];
    cache_name *c;
    atomic_int errors;
} nh_model;

static void nh_name(char *buf, int i)
{
    snprintf(buf, 16, "f%02d", i);
}

static void nh_replied(nh_model *h, int d, int i, uint64_t v)
{
    uint_fast64_t cur = atomic_load(&h->replied[d][i]);

    while (cur < v && !atomic_compare_exchange_weak(&h->replied[d][i], &cur, v))
        ;
}

static void *nh_thread(void *arg)
{
    nh_model *h = arg;
    GRand *r = g_rand_new_with_seed((guint32)(uintptr_t)pthread_self());
    char name[16], name2[16];

    for (int op = 0; op < NH_OPS; op++) {
        int d = g_rand_int_range(r, 0, NH_DIRS);
        int i = g_rand_int_range(r, 0, NH_NAMES);
        uint64_t dir = (uint64_t)d + 100, ino;
        uint32_t gen;
        nh_name(name, i);
        if (g_rand_int_range(r, 0, 4) == 0) {
            int j = g_rand_int_range(r, 0, NH_NAMES);
            bool two = j != i && g_rand_boolean(r);
            uint64_t v, v2 = 0;
            cache_lru_mut m;
            nh_name(name2, j);
            cache_name_mut_begin(h->c, &m, &dir, 1);
            pthread_mutex_lock(&h->dir[d]);
            v = ++h->v[d][i];
            if (two)
                v2 = ++h->v[d][j];
            pthread_mutex_unlock(&h->dir[d]);
            if (g_rand_boolean(r))
                tc_widen(r);
            cache_name_store(h->c, &m, dir, name, 3, v % 2 == 1, v, (uint32_t)v);
            if (two)
                cache_name_store(h->c, &m, dir, name2, 3, v2 % 2 == 1, v2, (uint32_t)v2);
            cache_name_mut_end(h->c, &m);
            nh_replied(h, d, i, v);
            if (two)
                nh_replied(h, d, j, v2);
            continue;
        }
        uint64_t before = atomic_load(&h->replied[d][i]), after;
        cache_name_result res = cache_name_get(h->c, dir, name, 3, &ino, &gen);
        if (res == CACHE_NAME_MISS) {
            cache_lru_ticket t = cache_name_ticket(h->c);
            pthread_mutex_lock(&h->dir[d]);
            uint64_t v = h->v[d][i];
            pthread_mutex_unlock(&h->dir[d]);
            if (g_rand_boolean(r))
                tc_widen(r);
            cache_name_fill(h->c, t, dir, name, 3, v % 2 == 1, v, (uint32_t)v);
            continue;
        }
        pthread_mutex_lock(&h->dir[d]);
        after = h->v[d][i];
        pthread_mutex_unlock(&h->dir[d]);
        if (res == CACHE_NAME_FOUND) {
            if (ino % 2 != 1 || ino < before || ino > after || gen != (uint32_t)ino)
                atomic_fetch_add(&h->errors, 1);
        } else if (before == after && after % 2 == 1) {
            atomic_fetch_add(&h->errors, 1); /* absent, but present all along */
        }
    }
    g_rand_free(r);
    return NULL;
}

static void test_threads(void)
{
    nh_model h;
    pthread_t th[NH_THREADS];
    char name[16];
    cache_lru_stats st;

    memset(&h, 0, sizeof h);
    h.c = new_name(NH_DIRS * NH_NAMES / 2);
    for (int d = 0; d < NH_DIRS; d++) {
        pthread_mutex_init(&h.dir[d], NULL);
        for (int i = 0; i < NH_NAMES; i++)
            atomic_init(&h.replied[d][i], 0);
    }
    atomic_init(&h.errors, 0);
    for (int i = 0; i < NH_THREADS; i++)
        g_assert_cmpint(pthread_create(&th[i], NULL, nh_thread, &h), ==, 0);
    for (int i = 0; i < NH_THREADS; i++)
        pthread_join(th[i], NULL);
    g_assert_cmpint(atomic_load(&h.errors), ==, 0);
    for (int d = 0; d < NH_DIRS; d++) {
        for (int i = 0; i < NH_NAMES; i++) {
            uint64_t ino;
            uint32_t gen;
            nh_name(name, i);
            cache_name_result res = cache_name_get(h.c, (uint64_t)d + 100, name, 3, &ino, &gen);
            if (res == CACHE_NAME_FOUND)
                g_assert_cmpuint(ino, ==, h.v[d][i]);
            else if (res == CACHE_NAME_ABSENT)
                g_assert_cmpuint(h.v[d][i] % 2, ==, 0);
        }
        pthread_mutex_destroy(&h.dir[d]);
    }
    cache_name_stats(h.c, &st);
    g_assert_cmpuint(st.hits, >, 0);
    cache_name_free(h.c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cache_name/basic", test_basic);
    g_test_add_func("/cache_name/guard", test_guard);
    g_test_add_func("/cache_name/threads", test_threads);
    return g_test_run();
}
