/*
 * test_cache_stat.c -- the stat cache (cache/cache_stat.c): hits and
 * misses by (inode, generation), gone entries (final, answered STALE),
 * the change-counter keep rule, late victims, reset refusing old tickets,
 * the bound, and threads updating attributes against a model.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <glib.h>

#include "cache_stat.h"

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

/* The attributes the tests keep: a plain struct of their own (the cache
 * holds any fixed-size value). */
typedef struct {
    uint64_t ino;
    uint32_t gen;
    uint32_t mode;
    uint64_t change;
    uint64_t size;
} ts_attr;

static ts_attr attr_of(uint64_t ino, uint32_t gen, uint64_t change, uint64_t size)
{
    ts_attr a;

    memset(&a, 0, sizeof a);
    a.ino = ino;
    a.gen = gen;
    a.mode = 0644;
    a.change = change;
    a.size = size;
    return a;
}

static cache_stat_id id_of(const ts_attr *a)
{
    return (cache_stat_id){.ino = a->ino, .gen = a->gen, .change = a->change};
}

static int ts_fill(cache_stat *s, cache_lru_ticket t, const ts_attr *a)
{
    return cache_stat_fill(s, t, id_of(a), a);
}

static int ts_store(cache_stat *s, const cache_lru_mut *m, const ts_attr *a)
{
    return cache_stat_store(s, m, id_of(a), a);
}

static cache_stat *new_stat(size_t n)
{
    cache_stat *s = NULL;

    g_assert_cmpint(cache_stat_new(n, sizeof(ts_attr), &s), ==, 0);
    return s;
}

static void test_basic(void)
{
    cache_stat *s = NULL;
    ts_attr a = attr_of(10, 7, 1, 100), out;
    cache_lru_stats st;

    g_assert_cmpint(cache_stat_new(0, sizeof a, &s), ==, -EINVAL);
    g_assert_null(s);
    g_assert_cmpint(cache_stat_new(100, 0, &s), ==, -EINVAL);
    g_assert_cmpint(cache_stat_new(100, CACHE_STAT_VAL_MAX + 1, &s), ==, -EINVAL);
    g_assert_null(s);
    s = new_stat(100);
    g_assert_cmpint(cache_stat_get(s, 10, 7, &out), ==, -ENOENT);
    g_assert_cmpint(ts_fill(s, cache_stat_ticket(s), &a), ==, 0);
    g_assert_cmpint(cache_stat_get(s, 10, 7, &out), ==, 0);
    g_assert_cmpmem(&out, sizeof out, &a, sizeof a);
    /* Another generation of the same inode number: that handle is stale. */
    g_assert_cmpint(cache_stat_get(s, 10, 8, &out), ==, -ESTALE);
    cache_stat_forget(s, 10);
    g_assert_cmpint(cache_stat_get(s, 10, 7, &out), ==, -ENOENT);
    cache_stat_stats(s, &st);
    g_assert_cmpuint(st.hits, ==, 2);
    g_assert_cmpuint(st.misses, ==, 2);
    g_assert_cmpuint(st.invalidations, ==, 1);
    cache_stat_free(s);
    cache_stat_free(NULL);
}

static void test_gone(void)
{
    cache_stat *s = new_stat(100);
    ts_attr a = attr_of(11, 3, 5, 0), out;
    cache_lru_ticket t = cache_stat_ticket(s);
    cache_lru_mut m;
    uint64_t ino = 11;

    g_assert_cmpint(ts_fill(s, t, &a), ==, 0);
    g_assert_cmpint(cache_stat_fill_gone(s, t, 11, 3), ==, 0);
    g_assert_cmpint(cache_stat_get(s, 11, 3, &out), ==, -ESTALE);
    /* Gone says nothing about another generation. */
    g_assert_cmpint(cache_stat_get(s, 11, 4, &out), ==, -ENOENT);
    /* Gone is final: a late reader's attributes do not bring it back, nor
     * does a writer's store. */
    a.change = 9;
    ts_fill(s, cache_stat_ticket(s), &a);
    g_assert_cmpint(cache_stat_get(s, 11, 3, &out), ==, -ESTALE);
    cache_stat_mut_begin(s, &m, &ino, 1);
    ts_store(s, &m, &a);
    cache_stat_mut_end(s, &m);
    g_assert_cmpint(cache_stat_get(s, 11, 3, &out), ==, -ESTALE);
    /* A gone fill needs no ticket: it is true whenever it was read. */
    cache_stat_mut_begin(s, &m, &ino, 1);
    g_assert_cmpint(cache_stat_fill_gone(s, t, 12, 1), ==, 0);
    cache_stat_mut_end(s, &m);
    g_assert_cmpint(cache_stat_get(s, 12, 1, &out), ==, -ESTALE);
    cache_stat_free(s);
}

static void test_keep_change(void)
{
    cache_stat *s = new_stat(100);
    ts_attr a = attr_of(20, 1, 6, 600), old = attr_of(20, 1, 5, 500), out;

    g_assert_cmpint(ts_fill(s, cache_stat_ticket(s), &a), ==, 0);
    g_assert_cmpint(ts_fill(s, cache_stat_ticket(s), &old), ==, 0);
    g_assert_cmpint(cache_stat_get(s, 20, 1, &out), ==, 0);
    g_assert_cmpuint(out.change, ==, 6);
    g_assert_cmpuint(out.size, ==, 600);
    cache_stat_free(s);
}

static void test_victim(void)
{
    cache_stat *s = new_stat(100);
    ts_attr a = attr_of(30, 2, 1, 0), out;
    cache_lru_ticket t;

    /* A reader read the victim before the commit ... */
    t = cache_stat_ticket(s);
    /* ... the remove commits and reports the victim (nlink dropped) ... */
    cache_stat_victim(s, 30, 2, false);
    /* ... and the reader's late fill is refused. */
    g_assert_cmpint(ts_fill(s, t, &a), ==, -EAGAIN);
    g_assert_cmpint(cache_stat_get(s, 30, 2, &out), ==, -ENOENT);
    /* A cached victim is dropped, or marked gone. */
    g_assert_cmpint(ts_fill(s, cache_stat_ticket(s), &a), ==, 0);
    cache_stat_victim(s, 30, 2, false);
    g_assert_cmpint(cache_stat_get(s, 30, 2, &out), ==, -ENOENT);
    g_assert_cmpint(ts_fill(s, cache_stat_ticket(s), &a), ==, 0);
    cache_stat_victim(s, 30, 2, true);
    g_assert_cmpint(cache_stat_get(s, 30, 2, &out), ==, -ESTALE);
    cache_stat_free(s);
}

static void test_reset(void)
{
    cache_stat *s = new_stat(100);
    ts_attr a = attr_of(40, 1, 1, 0), b = attr_of(41, 1, 1, 0), out;
    cache_lru_ticket t = cache_stat_ticket(s);
    cache_lru_stats st;

    g_assert_cmpint(ts_fill(s, t, &a), ==, 0);
    cache_stat_reset(s);
    g_assert_cmpint(cache_stat_get(s, 40, 1, &out), ==, -ENOENT);
    /* Tickets from before the reset are refused everywhere. */
    g_assert_cmpint(ts_fill(s, t, &b), ==, -EAGAIN);
    g_assert_cmpint(ts_fill(s, cache_stat_ticket(s), &b), ==, 0);
    cache_stat_stats(s, &st);
    g_assert_cmpuint(st.entries, ==, 1);
    cache_stat_free(s);
}

static void test_bound(void)
{
    cache_stat *s = new_stat(1000);
    cache_lru_stats st;

    for (uint64_t i = 1; i <= 5000; i++) {
        ts_attr a = attr_of(i, 1, 1, i);
        ts_fill(s, cache_stat_ticket(s), &a);
    }
    cache_stat_stats(s, &st);
    g_assert_cmpuint(st.entries, <=, 1000);
    g_assert_cmpuint(st.entries, >=, 900);
    g_assert_cmpuint(st.evictions, ==, 5000 - st.entries);
    cache_stat_free(s);
}

/* --- threads: writers change files under row locks, readers check every
 * hit against what was committed and what was replied ---------------- */

#define SH_FILES   32
#define SH_THREADS 6
#define SH_OPS     40000

typedef struct {
    pthread_mutex_t row[SH_FILES];
    ts_attr db[SH_FILES];
    atomic_uint_fast64_t replied[SH_FILES];
    cache_stat *s;
    atomic_int errors;
} sh_model;

static void *sh_thread(void *arg)
{
    sh_model *h = arg;
    GRand *r = g_rand_new_with_seed((guint32)(uintptr_t)pthread_self());

    for (int op = 0; op < SH_OPS; op++) {
        uint64_t i = (uint64_t)g_rand_int_range(r, 0, SH_FILES);
        uint64_t ino = i + 1;
        ts_attr a;
        if (g_rand_int_range(r, 0, 5) == 0) {
            cache_lru_mut m;
            cache_stat_mut_begin(h->s, &m, &ino, 1);
            pthread_mutex_lock(&h->row[i]);
            h->db[i].change++;
            h->db[i].size = h->db[i].change * 10;
            a = h->db[i];
            pthread_mutex_unlock(&h->row[i]);
            if (g_rand_boolean(r))
                tc_widen(r);
            ts_store(h->s, &m, &a);
            cache_stat_mut_end(h->s, &m);
            uint_fast64_t cur = atomic_load(&h->replied[i]);
            while (cur < a.change && !atomic_compare_exchange_weak(&h->replied[i], &cur, a.change))
                ;
        } else {
            uint64_t before = atomic_load(&h->replied[i]);
            if (cache_stat_get(h->s, ino, 1, &a) == 0) {
                if (a.change < before || a.size != a.change * 10)
                    atomic_fetch_add(&h->errors, 1);
                continue;
            }
            cache_lru_ticket t = cache_stat_ticket(h->s);
            pthread_mutex_lock(&h->row[i]);
            a = h->db[i];
            pthread_mutex_unlock(&h->row[i]);
            if (g_rand_boolean(r))
                tc_widen(r);
            ts_fill(h->s, t, &a);
        }
    }
    g_rand_free(r);
    return NULL;
}

static void test_threads(void)
{
    sh_model h;
    pthread_t th[SH_THREADS];

    memset(&h, 0, sizeof h);
    h.s = new_stat(SH_FILES / 2);
    for (int i = 0; i < SH_FILES; i++) {
        pthread_mutex_init(&h.row[i], NULL);
        h.db[i] = attr_of((uint64_t)i + 1, 1, 1, 10);
        atomic_init(&h.replied[i], 1);
    }
    atomic_init(&h.errors, 0);
    for (int i = 0; i < SH_THREADS; i++)
        g_assert_cmpint(pthread_create(&th[i], NULL, sh_thread, &h), ==, 0);
    for (int i = 0; i < SH_THREADS; i++)
        pthread_join(th[i], NULL);
    g_assert_cmpint(atomic_load(&h.errors), ==, 0);
    for (int i = 0; i < SH_FILES; i++) {
        ts_attr a;
        if (cache_stat_get(h.s, (uint64_t)i + 1, 1, &a) == 0)
            g_assert_cmpuint(a.change, ==, h.db[i].change);
        pthread_mutex_destroy(&h.row[i]);
    }
    cache_stat_free(h.s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cache_stat/basic", test_basic);
    g_test_add_func("/cache_stat/gone", test_gone);
    g_test_add_func("/cache_stat/keep_change", test_keep_change);
    g_test_add_func("/cache_stat/victim", test_victim);
    g_test_add_func("/cache_stat/reset", test_reset);
    g_test_add_func("/cache_stat/bound", test_bound);
    g_test_add_func("/cache_stat/threads", test_threads);
    return g_test_run();
}
