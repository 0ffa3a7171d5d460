/*
 * test_drc.c -- the duplicate request cache (srv_drc.c): replay of a
 * finished call, dropping of a call still in progress, what makes two
 * calls different (address, xid, arguments; not the port), LRU eviction
 * within the bound, and many threads at once.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "srv_drc.h"

static struct sockaddr_in v4(const char *addr, unsigned port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

    g_assert_cmpint(inet_pton(AF_INET, addr, &sa.sin_addr), ==, 1);
    return sa;
}

static void key_for(srv_drc_key *k, const struct sockaddr_in *sa, uint32_t xid, const char *args)
{
    srv_drc_key_init(k, (const struct sockaddr *)sa, xid, 100003, 3, 12, args, strlen(args));
}

static void test_hit(void)
{
    srv_drc *d = srv_drc_new(128);
    struct sockaddr_in a = v4("10.1.2.3", 900);
    srv_drc_key k;
    srv_buf reply = {0};

    key_for(&k, &a, 7, "remove victim");
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_MISS);
    srv_drc_finish(d, &k, "first reply", 11);
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_HIT);
    g_assert_cmpmem(reply.data, reply.len, "first reply", 11);

    /* Another port of the same client: a reconnect. Still the same call. */
    struct sockaddr_in a2 = v4("10.1.2.3", 1234);
    key_for(&k, &a2, 7, "remove victim");
    reply.len = 0;
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_HIT);
    g_assert_cmpmem(reply.data, reply.len, "first reply", 11);

    /* The same client over IPv6 as an IPv4-mapped address. */
    struct sockaddr_in6 m = {.sin6_family = AF_INET6, .sin6_port = htons(55)};
    g_assert_cmpint(inet_pton(AF_INET6, "::ffff:10.1.2.3", &m.sin6_addr), ==, 1);
    srv_drc_key_init(&k, (const struct sockaddr *)&m, 7, 100003, 3, 12, "remove victim", 13);
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_HIT);

    g_assert_cmpuint(srv_drc_count(d), ==, 1);
    srv_buf_clear(&reply);
    srv_drc_free(d);
}

static void test_miss(void)
{
    srv_drc *d = srv_drc_new(128);
    struct sockaddr_in a = v4("10.1.2.3", 900), b = v4("10.1.2.4", 900);
    srv_drc_key k;
    srv_buf reply = {0};

    key_for(&k, &a, 7, "remove one");
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_MISS);
    srv_drc_finish(d, &k, "r1", 2);

    /* Same xid, other arguments: another call. */
    key_for(&k, &a, 7, "remove two");
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_MISS);
    srv_drc_finish(d, &k, "r2", 2);
    /* Other client. */
    key_for(&k, &b, 7, "remove one");
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_MISS);
    srv_drc_finish(d, &k, "r3", 2);
    /* Other xid. */
    key_for(&k, &a, 8, "remove one");
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_MISS);
    srv_drc_finish(d, &k, "r4", 2);
    /* Other procedure. */
    srv_drc_key_init(&k, (const struct sockaddr *)&a, 7, 100003, 3, 13, "remove one", 10);
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_MISS);
    srv_drc_abort(d, &k);

    /* Each first call is still there with its own reply. */
    key_for(&k, &a, 7, "remove two");
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_HIT);
    g_assert_cmpmem(reply.data, reply.len, "r2", 2);
    key_for(&k, &b, 7, "remove one");
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_HIT);
    g_assert_cmpmem(reply.data, reply.len, "r3", 2);
    g_assert_cmpuint(srv_drc_count(d), ==, 4);
    srv_buf_clear(&reply);
    srv_drc_free(d);
}

static void test_in_progress(void)
{
    srv_drc *d = srv_drc_new(128);
    struct sockaddr_in a = v4("192.168.1.1", 700);
    srv_drc_key k;
    srv_buf reply = {0};

    key_for(&k, &a, 99, "mkdir x");
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_MISS);
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_IN_PROGRESS);
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_IN_PROGRESS);
    g_assert_cmpuint(reply.len, ==, 0);

    /* Aborted: the next one runs. */
    srv_drc_abort(d, &k);
    g_assert_cmpuint(srv_drc_count(d), ==, 0);
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_MISS);
    srv_drc_finish(d, &k, "done", 4);
    /* A finish or abort for a call already done changes nothing. */
    srv_drc_finish(d, &k, "other", 5);
    srv_drc_abort(d, &k);
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_HIT);
    g_assert_cmpmem(reply.data, reply.len, "done", 4);
    srv_buf_clear(&reply);
    srv_drc_free(d);
}

static void test_eviction(void)
{
    const unsigned cap = 64;
    srv_drc *d = srv_drc_new(cap);
    struct sockaddr_in a = v4("10.0.0.1", 1), b = v4("10.0.0.2", 1);
    srv_drc_key keep, first, k;
    srv_buf reply = {0};

    key_for(&keep, &a, 1, "keep me");
    g_assert_cmpint(srv_drc_begin(d, &keep, &reply), ==, SRV_DRC_MISS);
    srv_drc_finish(d, &keep, "kept", 4);
    key_for(&first, &b, 1, "first");
    g_assert_cmpint(srv_drc_begin(d, &first, &reply), ==, SRV_DRC_MISS);
    srv_drc_finish(d, &first, "gone", 4);

    for (uint32_t xid = 1000; xid < 1000 + 50 * cap; xid++) {
        key_for(&k, &b, xid, "filler");
        g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_MISS);
        srv_drc_finish(d, &k, "f", 1);
        /* Used again and again: least recently used never. */
        g_assert_cmpint(srv_drc_begin(d, &keep, &reply), ==, SRV_DRC_HIT);
        g_assert_cmpuint(srv_drc_count(d), <=, cap);
    }
    g_assert_cmpint(srv_drc_begin(d, &keep, &reply), ==, SRV_DRC_HIT);
    g_assert_cmpmem(reply.data, reply.len, "kept", 4);
    /* The untouched first entry was evicted: it runs again. */
    g_assert_cmpint(srv_drc_begin(d, &first, &reply), ==, SRV_DRC_MISS);
    srv_drc_abort(d, &first);
    /* The most recent filler is there. */
    key_for(&k, &b, 1000 + 50 * cap - 1, "filler");
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_HIT);
    g_assert_cmpuint(srv_drc_count(d), <=, cap);
    g_assert_cmpuint(srv_drc_count(d), >=, cap / 2);
    srv_buf_clear(&reply);
    srv_drc_free(d);

    /* The smallest cache still holds one entry. */
    d = srv_drc_new(1);
    key_for(&k, &a, 5, "x");
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_MISS);
    srv_drc_finish(d, &k, "y", 1);
    g_assert_cmpint(srv_drc_begin(d, &k, &reply), ==, SRV_DRC_HIT);
    srv_buf_clear(&reply);
    srv_drc_free(d);
}

typedef struct {
    srv_drc *d;
    unsigned seed;
    unsigned hits, misses, busy;
    bool bad;
} hammer_arg;

static gpointer hammer(gpointer p)
{
    hammer_arg *h = p;
    GRand *rnd = g_rand_new_with_seed(h->seed);
    srv_buf reply = {0};

    for (int i = 0; i < 40000; i++) {
        uint32_t xid = (uint32_t)g_rand_int_range(rnd, 0, 600);
        struct sockaddr_in a = v4(xid % 2 ? "10.9.9.9" : "10.9.9.8", 1 + (unsigned)i % 7);
        char args[32];
        srv_drc_key k;

        snprintf(args, sizeof args, "args-%u", xid % 5);
        key_for(&k, &a, xid, args);
        switch (srv_drc_begin(h->d, &k, &reply)) {
        case SRV_DRC_MISS: {
            char r[64];
            int n = snprintf(r, sizeof r, "reply %u %s", xid, args);
            if (g_rand_int_range(rnd, 0, 10) == 0)
                srv_drc_abort(h->d, &k);
            else
                srv_drc_finish(h->d, &k, r, (size_t)n);
            h->misses++;
            break;
        }
        case SRV_DRC_HIT: {
            char r[64];
            int n = snprintf(r, sizeof r, "reply %u %s", xid, args);
            if (reply.len != (size_t)n || memcmp(reply.data, r, reply.len) != 0)
                h->bad = true;
            h->hits++;
            break;
        }
        case SRV_DRC_IN_PROGRESS:
            h->busy++;
            break;
        }
    }
    srv_buf_clear(&reply);
    g_rand_free(rnd);
    return NULL;
}

static void test_threads(void)
{
    enum { N = 8 };
    srv_drc *d = srv_drc_new(512);
    hammer_arg args[N];
    GThread *t[N];
    unsigned hits = 0, misses = 0;

    for (unsigned i = 0; i < N; i++) {
        args[i] = (hammer_arg){.d = d, .seed = 17 + i};
        t[i] = g_thread_new("hammer", hammer, &args[i]);
    }
    for (unsigned i = 0; i < N; i++) {
        g_thread_join(t[i]);
        g_assert_false(args[i].bad);
        hits += args[i].hits;
        misses += args[i].misses;
    }
    g_assert_cmpuint(hits, >, 0);
    g_assert_cmpuint(misses, >, 0);
    g_assert_cmpuint(srv_drc_count(d), <=, 512);
    srv_drc_free(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/drc/hit", test_hit);
    g_test_add_func("/drc/miss", test_miss);
    g_test_add_func("/drc/in_progress", test_in_progress);
    g_test_add_func("/drc/eviction", test_eviction);
    g_test_add_func("/drc/threads", test_threads);
    return g_test_run();
}
