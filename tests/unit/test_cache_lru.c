/*
 * test_cache_lru.c -- the generic LRU (cache/cache_lru.c): lookups and
 * counters, the bound in entries and in bytes, eviction order, the keep
 * rule, removal, the fill/mutation coherence protocol case by case, and
 * threads hammering it against a model of a backing store whose every
 * observation is checked.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <glib.h>

#include "cache_lru.h"

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

static cache_lru *new_lru(size_t cap, unsigned shards, unsigned stripes)
{
    cache_lru_opts o = {.capacity = cap, .shards = shards, .stripes = stripes};
    cache_lru *c = NULL;

    g_assert_cmpint(cache_lru_new(&o, &c), ==, 0);
    g_assert_nonnull(c);
    return c;
}

/* Store key k (a uint64) -> v (a uint64) as a reader with a fresh ticket. */
static int fill_u64(cache_lru *c, uint64_t k, uint64_t v)
{
    cache_lru_ticket t = cache_lru_fill_ticket(c);

    return cache_lru_fill(c, t, k, &k, sizeof k, &v, sizeof v, 1);
}

static long get_u64(cache_lru *c, uint64_t k, uint64_t *v)
{
    return cache_lru_get(c, &k, sizeof k, v, sizeof *v);
}

static bool has(cache_lru *c, uint64_t k)
{
    return cache_lru_contains(c, &k, sizeof k);
}

static void test_bad_options(void)
{
    cache_lru_opts o = {.capacity = 0};
    cache_lru *c = (cache_lru *)&o;

    g_assert_cmpint(cache_lru_new(&o, &c), ==, -EINVAL);
    g_assert_null(c);
    o.capacity = 10;
    o.shards = 4096;
    g_assert_cmpint(cache_lru_new(&o, &c), ==, -EINVAL);
    g_assert_null(c);
    cache_lru_free(NULL);
}

static void test_get_counts(void)
{
    cache_lru *c = new_lru(100, 4, 0);
    cache_lru_stats st;
    uint64_t v = 0;
    char small[3];

    g_assert_cmpint(get_u64(c, 1, &v), ==, -ENOENT);
    g_assert_cmpint(fill_u64(c, 1, 111), ==, 0);
    g_assert_cmpint(get_u64(c, 1, &v), ==, 8);
    g_assert_cmpuint(v, ==, 111);
    /* A short buffer gets the first bytes; the full length is returned. */
    uint64_t k = 1;
    g_assert_cmpint(cache_lru_get(c, &k, sizeof k, small, sizeof small), ==, 8);
    g_assert_cmpmem(small, 3, &v, 3);
    /* Replacing keeps one entry. */
    g_assert_cmpint(fill_u64(c, 1, 112), ==, 0);
    g_assert_cmpint(get_u64(c, 1, &v), ==, 8);
    g_assert_cmpuint(v, ==, 112);
    /* Variable-length keys: a prefix is another key. */
    g_assert_cmpint(cache_lru_fill(c, cache_lru_fill_ticket(c), 9, "abc", 3, "x", 1, 1), ==, 0);
    g_assert_cmpint(cache_lru_get(c, "ab", 2, NULL, 0), ==, -ENOENT);
    g_assert_cmpint(cache_lru_get(c, "abc", 3, NULL, 0), ==, 1);
    /* Empty values are values. */
    g_assert_cmpint(cache_lru_fill(c, cache_lru_fill_ticket(c), 9, "e", 1, NULL, 0, 1), ==, 0);
    g_assert_cmpint(cache_lru_get(c, "e", 1, NULL, 0), ==, 0);

    cache_lru_get_stats(c, &st);
    g_assert_cmpuint(st.hits, ==, 5);
    g_assert_cmpuint(st.misses, ==, 2);
    g_assert_cmpuint(st.inserts, ==, 4);
    g_assert_cmpuint(st.entries, ==, 3);
    g_assert_cmpuint(st.charge, ==, 3);
    g_assert_cmpuint(st.capacity, ==, 100);
    g_assert_cmpuint(st.evictions, ==, 0);
    cache_lru_free(c);
}

static void test_eviction_order(void)
{
    cache_lru *c = new_lru(4, 1, 0); /* one shard: a global LRU order */
    cache_lru_stats st;
    uint64_t v;

    for (uint64_t k = 1; k <= 4; k++)
        g_assert_cmpint(fill_u64(c, k, k * 10), ==, 0);
    /* Use 1 and 3: the least recently used are now 2, then 4. */
    g_assert_cmpint(get_u64(c, 1, &v), ==, 8);
    g_assert_cmpint(get_u64(c, 3, &v), ==, 8);
    g_assert_cmpint(fill_u64(c, 5, 50), ==, 0);
    g_assert_false(has(c, 2));
    g_assert_true(has(c, 1) && has(c, 3) && has(c, 4) && has(c, 5));
    g_assert_cmpint(fill_u64(c, 6, 60), ==, 0);
    g_assert_false(has(c, 4));
    /* Replacing an entry makes it the most recent. */
    g_assert_cmpint(fill_u64(c, 1, 11), ==, 0);
    g_assert_cmpint(fill_u64(c, 7, 70), ==, 0);
    g_assert_false(has(c, 3));
    g_assert_true(has(c, 1) && has(c, 5) && has(c, 6) && has(c, 7));
    cache_lru_get_stats(c, &st);
    g_assert_cmpuint(st.evictions, ==, 3);
    g_assert_cmpuint(st.entries, ==, 4);
    cache_lru_free(c);
}

static void test_bound_bytes(void)
{
    cache_lru *c = new_lru(1000, 1, 0);
    cache_lru_stats st;
    char big[400];
    char out[400];

    memset(big, 'a', sizeof big);
    for (int i = 0; i < 10; i++) {
        big[0] = (char)('0' + i);
        g_assert_cmpint(cache_lru_fill(c, cache_lru_fill_ticket(c), 1, &i, sizeof i, big,
                                       sizeof big, sizeof big),
                        ==, 0);
        cache_lru_get_stats(c, &st);
        g_assert_cmpuint(st.charge, <=, 1000);
    }
    cache_lru_get_stats(c, &st);
    g_assert_cmpuint(st.entries, ==, 2);
    g_assert_cmpuint(st.charge, ==, 800);
    g_assert_cmpuint(st.evictions, ==, 8);
    int i = 9;
    g_assert_cmpint(cache_lru_get(c, &i, sizeof i, out, sizeof out), ==, 400);
    g_assert_cmpint(out[0], ==, '9');
    /* Over a shard's capacity: refused, nothing evicted. */
    i = 100;
    g_assert_cmpint(
        cache_lru_fill(c, cache_lru_fill_ticket(c), 1, &i, sizeof i, big, sizeof big, 1001), ==,
        -E2BIG);
    cache_lru_get_stats(c, &st);
    g_assert_cmpuint(st.entries, ==, 2);
    cache_lru_free(c);

    /* Capacity is split over shards: 4 shards of 2 entries hold 8 at most. */
    c = new_lru(8, 4, 0);
    for (uint64_t k = 0; k < 1000; k++)
        fill_u64(c, k, k);
    cache_lru_get_stats(c, &st);
    g_assert_cmpuint(st.entries, <=, 8);
    g_assert_cmpuint(st.entries, >=, 4);
    g_assert_cmpuint(st.evictions, ==, 1000 - st.entries);
    cache_lru_free(c);
}

static bool keep_newer(const void *old_val, size_t old_len, const void *new_val, size_t new_len)
{
    uint64_t o, n;

    g_assert_cmpuint(old_len, ==, 8);
    g_assert_cmpuint(new_len, ==, 8);
    memcpy(&o, old_val, 8);
    memcpy(&n, new_val, 8);
    return o > n;
}

static void test_keep(void)
{
    cache_lru_opts o = {.capacity = 10, .keep = keep_newer};
    cache_lru *c = NULL;
    uint64_t v;

    g_assert_cmpint(cache_lru_new(&o, &c), ==, 0);
    g_assert_cmpint(fill_u64(c, 1, 5), ==, 0);
    g_assert_cmpint(fill_u64(c, 1, 4), ==, 0); /* kept 5 */
    get_u64(c, 1, &v);
    g_assert_cmpuint(v, ==, 5);
    g_assert_cmpint(fill_u64(c, 1, 6), ==, 0);
    get_u64(c, 1, &v);
    g_assert_cmpuint(v, ==, 6);
    cache_lru_free(c);
}

static bool pred_even(const void *key, size_t klen, const void *val, size_t vlen, void *arg)
{
    uint64_t k;

    (void)val, (void)vlen;
    g_assert_cmpuint(klen, ==, 8);
    memcpy(&k, key, 8);
    (*(int *)arg)++;
    return k % 2 == 0;
}

static int add_one(void *val, size_t len, void *arg)
{
    uint64_t v;

    g_assert_cmpuint(len, ==, 8);
    memcpy(&v, val, 8);
    v += *(uint64_t *)arg;
    memcpy(val, &v, 8);
    return 7;
}

static void test_remove_visit(void)
{
    cache_lru *c = new_lru(100, 4, 0);
    cache_lru_stats st;
    uint64_t k = 3, inc = 1, v;
    int seen = 0;

    for (uint64_t i = 0; i < 10; i++)
        fill_u64(c, i, i);
    g_assert_true(cache_lru_remove(c, &k, sizeof k));
    g_assert_false(cache_lru_remove(c, &k, sizeof k));
    g_assert_cmpuint(cache_lru_remove_if(c, pred_even, &seen), ==, 5);
    g_assert_cmpint(seen, ==, 9);
    k = 5;
    g_assert_cmpint(cache_lru_visit(c, &k, sizeof k, add_one, &inc), ==, 7);
    g_assert_cmpint(get_u64(c, 5, &v), ==, 8);
    g_assert_cmpuint(v, ==, 6);
    k = 4;
    g_assert_cmpint(cache_lru_visit(c, &k, sizeof k, add_one, &inc), ==, -ENOENT);
    cache_lru_get_stats(c, &st);
    g_assert_cmpuint(st.entries, ==, 4);
    g_assert_cmpuint(st.invalidations, ==, 6);
    cache_lru_clear(c);
    cache_lru_get_stats(c, &st);
    g_assert_cmpuint(st.entries, ==, 0);
    g_assert_cmpuint(st.charge, ==, 0);
    g_assert_cmpuint(st.invalidations, ==, 10);
    g_assert_cmpint(fill_u64(c, 1, 1), ==, 0);
    g_assert_true(has(c, 1));
    cache_lru_free(c);
}

/* The protocol, one rule at a time. */
static void test_protocol(void)
{
    cache_lru *c = new_lru(100, 4, 64);
    cache_lru_mut m, m2;
    cache_lru_ticket t;
    uint64_t g = 42, k = 42, v = 1, out;
    cache_lru_stats st;

    /* A reader whose ticket predates a whole mutation is refused. */
    t = cache_lru_fill_ticket(c);
    cache_lru_mut_begin(c, &m, &g, 1);
    cache_lru_mut_end(c, &m);
    g_assert_cmpint(cache_lru_fill(c, t, g, &k, 8, &v, 8, 1), ==, -EAGAIN);
    g_assert_false(has(c, k));
    /* ... and one during a mutation, even with a fresh ticket. */
    cache_lru_mut_begin(c, &m, &g, 1);
    t = cache_lru_fill_ticket(c);
    g_assert_cmpint(cache_lru_fill(c, t, g, &k, 8, &v, 8, 1), ==, -EAGAIN);
    /* The lone writer stores. */
    v = 2;
    g_assert_cmpint(cache_lru_store(c, &m, g, &k, 8, &v, 8, 1), ==, 0);
    cache_lru_mut_end(c, &m);
    g_assert_cmpint(get_u64(c, k, &out), ==, 8);
    g_assert_cmpuint(out, ==, 2);
    /* A refused reader does not remove what is there. */
    t = cache_lru_fill_ticket(c);
    cache_lru_mut_begin(c, &m, &g, 1);
    v = 9;
    g_assert_cmpint(cache_lru_fill(c, t, g, &k, 8, &v, 8, 1), ==, -EAGAIN);
    cache_lru_mut_end(c, &m);
    g_assert_cmpint(get_u64(c, k, &out), ==, 8);
    g_assert_cmpuint(out, ==, 2);
    /* A fresh reader after the mutations stores; other guards are free. */
    g_assert_cmpint(fill_u64(c, k, 3), ==, 0);

    /* Overlapping writers: both remove, whatever the order of their stores. */
    cache_lru_mut_begin(c, &m, &g, 1);
    cache_lru_mut_begin(c, &m2, &g, 1);
    v = 4;
    g_assert_cmpint(cache_lru_store(c, &m2, g, &k, 8, &v, 8, 1), ==, -EAGAIN);
    g_assert_false(has(c, k));
    fill_u64(c, k, 4); /* refused: in flight */
    g_assert_false(has(c, k));
    cache_lru_mut_end(c, &m2);
    v = 5;
    g_assert_cmpint(cache_lru_store(c, &m, g, &k, 8, &v, 8, 1), ==, -EAGAIN);
    cache_lru_mut_end(c, &m);
    g_assert_false(has(c, k));
    /* A writer that began after another ended is alone. */
    cache_lru_mut_begin(c, &m, &g, 1);
    v = 6;
    g_assert_cmpint(cache_lru_store(c, &m, g, &k, 8, &v, 8, 1), ==, 0);
    cache_lru_mut_end(c, &m);
    /* A writer cannot store under a guard it does not hold: removes. */
    uint64_t other = 7;
    cache_lru_mut_begin(c, &m, &other, 1);
    g_assert_cmpint(cache_lru_store(c, &m, g, &k, 8, &v, 8, 1), ==, -EAGAIN);
    cache_lru_mut_end(c, &m);
    g_assert_false(has(c, k));
    /* Duplicate guards count once; several guards at once. */
    uint64_t gs[3] = {42, 42, 43};
    cache_lru_mut_begin(c, &m, gs, 3);
    g_assert_cmpuint(m.n, ==, 2);
    v = 8;
    g_assert_cmpint(cache_lru_store(c, &m, 42, &k, 8, &v, 8, 1), ==, 0);
    uint64_t k2 = 43;
    g_assert_cmpint(cache_lru_store(c, &m, 43, &k2, 8, &v, 8, 1), ==, 0);
    cache_lru_mut_end(c, &m);
    g_assert_true(has(c, 42) && has(c, 43));
    cache_lru_get_stats(c, &st);
    g_assert_cmpuint(st.refused, ==, 7);
    cache_lru_free(c);
}

/* --- threads against a model -------------------------------------------- */

#define HAM_KEYS    64
#define HAM_THREADS 8
#define HAM_OPS     60000

/* The "database": per key a committed version under a row lock, and the
 * highest version whose writer has finished (replied). */
typedef struct {
    pthread_mutex_t row[HAM_KEYS];
    uint64_t committed[HAM_KEYS];
    atomic_uint_fast64_t replied[HAM_KEYS];
    cache_lru *c;
    atomic_int errors;
    int64_t deadline; /* g_get_monotonic_time(): stop waiting for the events */
} ham_model;

/* Has the hammer seen what it is for: hits, evictions, and fills or
 * stores refused because a mutation overlapped (only threads that really
 * interleave make those)? Then it may stop after HAM_OPS each. */
static bool ham_enough(ham_model *h)
{
    cache_lru_stats st;

    cache_lru_get_stats(h->c, &st);
    return st.hits > 0 && st.evictions > 0 && st.refused > 0;
}

static void *ham_thread(void *arg)
{
    ham_model *h = arg;
    GRand *r = g_rand_new_with_seed((guint32)(uintptr_t)pthread_self());

    /* At least HAM_OPS; then on until the events happened (the threads
     * may have run one after another), within a generous deadline. */
    for (int op = 0;; op++) {
        if (op >= HAM_OPS && op % 1024 == 0 &&
            (ham_enough(h) || g_get_monotonic_time() > h->deadline))
            break;
        uint64_t k = (uint64_t)g_rand_int_range(r, 0, HAM_KEYS);
        uint64_t g = k / 4; /* four keys per guard, like names in a directory */
        int what = g_rand_int_range(r, 0, 10);
        if (what < 2) {
            /* writer: begin, commit under the row lock, store, end */
            cache_lru_mut m;
            uint64_t v;
            cache_lru_mut_begin(h->c, &m, &g, 1);
            pthread_mutex_lock(&h->row[k]);
            v = ++h->committed[k];
            pthread_mutex_unlock(&h->row[k]);
            if (g_rand_int_range(r, 0, 4) == 0)
                tc_widen(r); /* widen the window between commit and store */
            if (g_rand_boolean(r))
                cache_lru_store(h->c, &m, g, &k, 8, &v, 8, 1);
            else
                cache_lru_remove(h->c, &k, 8);
            cache_lru_mut_end(h->c, &m);
            uint_fast64_t cur = atomic_load(&h->replied[k]);
            while (cur < v && !atomic_compare_exchange_weak(&h->replied[k], &cur, v))
                ;
        } else {
            /* reader: a hit must be at least what was replied before it
             * and at most what is committed after it */
            uint64_t before = atomic_load(&h->replied[k]), v, after;
            long n = cache_lru_get(h->c, &k, 8, &v, 8);
            if (n == -ENOENT) {
                cache_lru_ticket t = cache_lru_fill_ticket(h->c);
                pthread_mutex_lock(&h->row[k]);
                v = h->committed[k];
                pthread_mutex_unlock(&h->row[k]);
                if (g_rand_int_range(r, 0, 4) == 0)
                    tc_widen(r);
                cache_lru_fill(h->c, t, g, &k, 8, &v, 8, 1);
                continue;
            }
            pthread_mutex_lock(&h->row[k]);
            after = h->committed[k];
            pthread_mutex_unlock(&h->row[k]);
            if (n != 8 || v < before || v > after)
                atomic_fetch_add(&h->errors, 1);
        }
    }
    g_rand_free(r);
    return NULL;
}

static void test_hammer(void)
{
    ham_model h;
    pthread_t th[HAM_THREADS];
    cache_lru_stats st;

    memset(&h, 0, sizeof h);
    /* Capacity below the key count forces evictions between the steps;
     * few stripes force collisions between guards. */
    h.c = new_lru(HAM_KEYS / 2, 4, 8);
    for (int i = 0; i < HAM_KEYS; i++) {
        pthread_mutex_init(&h.row[i], NULL);
        atomic_init(&h.replied[i], 0);
    }
    atomic_init(&h.errors, 0);
    h.deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    for (int i = 0; i < HAM_THREADS; i++)
        g_assert_cmpint(pthread_create(&th[i], NULL, ham_thread, &h), ==, 0);
    for (int i = 0; i < HAM_THREADS; i++)
        pthread_join(th[i], NULL);
    g_assert_cmpint(atomic_load(&h.errors), ==, 0);
    /* Quiescent: every entry is the committed value. */
    for (uint64_t k = 0; k < HAM_KEYS; k++) {
        uint64_t v;
        if (get_u64(h.c, k, &v) == 8)
            g_assert_cmpuint(v, ==, h.committed[k]);
    }
    cache_lru_get_stats(h.c, &st);
    g_assert_cmpuint(st.hits, >, 0);
    g_assert_cmpuint(st.evictions, >, 0);
    g_assert_cmpuint(st.refused, >, 0);
    g_assert_cmpuint(st.entries, <=, HAM_KEYS / 2);
    g_test_message("hits %" G_GUINT64_FORMAT " misses %" G_GUINT64_FORMAT
                   " evictions %" G_GUINT64_FORMAT " refused %" G_GUINT64_FORMAT,
                   (guint64)st.hits, (guint64)st.misses, (guint64)st.evictions,
                   (guint64)st.refused);
    for (int i = 0; i < HAM_KEYS; i++)
        pthread_mutex_destroy(&h.row[i]);
    cache_lru_free(h.c);
}

/* The same model without the protocol shows the race it prevents: a
 * reader storing a value it read before a writer's store. Run the broken
 * sequence by hand and check that the protocol refuses it. */
static void test_stale_reader_refused(void)
{
    cache_lru *c = new_lru(1, 1, 0); /* one entry: the writer's is evicted */
    uint64_t g = 1, k = 1, other = 2, v_old = 5, v_new = 6, out;
    cache_lru_ticket t;
    cache_lru_mut m;

    t = cache_lru_fill_ticket(c); /* reader reads 5 ... */
    cache_lru_mut_begin(c, &m, &g, 1);
    g_assert_cmpint(cache_lru_store(c, &m, g, &k, 8, &v_new, 8, 1), ==, 0);
    cache_lru_mut_end(c, &m);
    fill_u64(c, other, 0); /* evicts the writer's entry */
    g_assert_false(has(c, k));
    /* ... and stores it late: a version check in the entry could not
     * catch this, the stripe does. */
    g_assert_cmpint(cache_lru_fill(c, t, g, &k, 8, &v_old, 8, 1), ==, -EAGAIN);
    g_assert_cmpint(get_u64(c, k, &out), ==, -ENOENT);
    cache_lru_free(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cache_lru/bad_options", test_bad_options);
    g_test_add_func("/cache_lru/get_counts", test_get_counts);
    g_test_add_func("/cache_lru/eviction_order", test_eviction_order);
    g_test_add_func("/cache_lru/bound_bytes", test_bound_bytes);
    g_test_add_func("/cache_lru/keep", test_keep);
    g_test_add_func("/cache_lru/remove_visit", test_remove_visit);
    g_test_add_func("/cache_lru/protocol", test_protocol);
    g_test_add_func("/cache_lru/stale_reader_refused", test_stale_reader_refused);
    g_test_add_func("/cache_lru/hammer", test_hammer);
    return g_test_run();
}
