/*
 * test_xf_roundtrip.c -- every stage, built-in and plug-in, and chains of
 * 1..25 of them give back exactly what they were given: every chunk size
 * 0..4096 with text and random data, large chunks of every kind up to
 * XF_PLAIN_MAX, random chains, the rooms (xf_encode_room, xf_decode_room,
 * exactly the plain length) honoured to the byte, and threads sharing
 * chains with one xf_work each. Fixed seeds: a failure repeats.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "xtest.h"

#define SMALL_CHUNK 4096

/* Single-stage chains: every built-in and the good plug-ins. */
static const char *const singles[] = {
    "identity",     "increment",
    "zstd:level=1", "zstd",
    "lz4",          "lz4:accel=9",
    "aes-256-gcm",  "sha256",
    "uidentity",    "uincrement:by=7",
    "trailer",      "noncexor",
    "fixedlen",     "failer:fail=99999:failread=99999",
};

/* The pool random chains draw from. */
static const char *const pool[] = {
    "identity",  "increment",  "zstd:level=1", "lz4",      "aes-256-gcm",       "sha256",
    "uidentity", "uincrement", "trailer",      "noncexor", "uincrement:by=200",
};

static void test_every_size(void)
{
    xf_env *env = xt_env(true, true);
    unsigned char *plain = g_malloc(SMALL_CHUNK);
    GRand *r = g_rand_new_with_seed(17);
    xf_work *w;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    for (size_t s = 0; s < G_N_ELEMENTS(singles); s++) {
        const xf_chain *c = xt_chain(env, singles[s]);

        for (size_t n = 0; n <= SMALL_CHUNK; n++) {
            xt_fill(r, XT_TEXT, plain, n);
            xt_roundtrip(c, w, 100 + s, n, plain, n);
            xt_fill(r, XT_RANDOM, plain, n);
            xt_roundtrip(c, w, 100 + s, n, plain, n);
        }
    }
    xf_work_free(w);
    g_rand_free(r);
    g_free(plain);
    xf_env_free(env);
}

static void test_large(void)
{
    static const size_t sizes[] = {65535, 65536, 65537, 262144 + 3, 1 << 20};
    xf_env *env = xt_env(true, true);
    unsigned char *plain = g_malloc(XF_PLAIN_MAX);
    GRand *r = g_rand_new_with_seed(18);
    xf_work *w;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    for (size_t s = 0; s < G_N_ELEMENTS(singles); s++) {
        const xf_chain *c = xt_chain(env, singles[s]);

        for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
            for (int k = 0; k < XT_KINDS; k++) {
                xt_fill(r, (xt_kind)k, plain, sizes[i]);
                xt_roundtrip(c, w, 7, i, plain, sizes[i]);
            }
        }
    }
    /* The largest chunk there is, through the heaviest chain. */
    xt_fill(r, XT_MIXED, plain, XF_PLAIN_MAX);
    xt_roundtrip(xt_chain(env, "zstd,lz4,aes-256-gcm,sha256"), w, 8, 0, plain, XF_PLAIN_MAX);
    xf_work_free(w);
    g_rand_free(r);
    g_free(plain);
    xf_env_free(env);
}

/* Compression pays on text and never costs on random data. */
static void test_compression(void)
{
    xf_env *env = xt_env(false, false);
    const size_t n = 65536;
    unsigned char *plain = g_malloc(n);
    GRand *r = g_rand_new_with_seed(19);
    const char *names[] = {"zstd", "lz4"};
    xf_work *w;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    for (int i = 0; i < 2; i++) {
        const xf_chain *c = xt_chain(env, names[i]);
        size_t hdr = xf_chain_header_len(c);

        xt_fill(r, XT_TEXT, plain, n);
        g_assert_cmpuint(xt_roundtrip(c, w, 1, 0, plain, n), <, n / 2);
        xt_fill(r, XT_RANDOM, plain, n);
        g_assert_cmpuint(xt_roundtrip(c, w, 1, 0, plain, n), ==, hdr + n);
        g_assert_cmpuint(xf_encode_room(c, n), ==, hdr + n);
    }
    xf_work_free(w);
    g_rand_free(r);
    g_free(plain);
    xf_env_free(env);
}

/* A random chain of n stages from the pool; fixedlen only at the front. */
static GString *random_chain(GRand *r, int n)
{
    GString *s = g_string_new(NULL);

    for (int i = 0; i < n; i++) {
        const char *st = pool[g_rand_int_range(r, 0, G_N_ELEMENTS(pool))];

        if (i == 0 && g_rand_int_range(r, 0, 8) == 0)
            st = "fixedlen";
        g_string_append_printf(s, "%s%s", i ? "," : "", st);
    }
    return s;
}

static void test_chains(void)
{
    xf_env *env = xt_env(true, true);
    GRand *r = g_rand_new_with_seed(20);
    unsigned char *plain = g_malloc(70000);
    xf_work *w;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    for (int n = 1; n <= 25; n++) {
        for (int t = 0; t < 12; t++) {
            GString *text = random_chain(r, n);
            const xf_chain *c = xt_chain(env, text->str);
            size_t len = (size_t)g_rand_int_range(r, 0, 70000);

            g_assert_cmpint(xf_chain_stages(c), ==, n);
            xt_fill(r, (xt_kind)g_rand_int_range(r, 0, XT_KINDS), plain, len);
            xt_roundtrip(c, w, (uint64_t)n, (uint64_t)t, plain, len);
            xt_roundtrip(c, w, (uint64_t)n, (uint64_t)t, plain, len % 100);
            g_string_free(text, TRUE);
        }
    }
    xf_work_free(w);
    g_free(plain);
    g_rand_free(r);
    xf_env_free(env);
}

/* Chains of identities store the plain bytes after the header, one copy. */
static void test_identity_chains(void)
{
    static const int counts[] = {1, 5, 25};
    xf_env *env = xt_env(false, true);
    unsigned char plain[5000], out[6000];
    GRand *r = g_rand_new_with_seed(21);
    xf_chunk at = {3, 4, 5};
    xf_work *w;
    size_t n;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    xt_fill(r, XT_RANDOM, plain, sizeof plain);
    for (size_t i = 0; i < G_N_ELEMENTS(counts); i++) {
        for (int plug = 0; plug < 2; plug++) {
            GString *s = g_string_new(plug ? "uidentity" : "identity");
            const xf_chain *c;

            for (int k = 1; k < counts[i]; k++)
                g_string_append(s, plug ? ",uidentity" : ",identity");
            c = xt_chain(env, s->str);
            g_assert_cmpuint(xf_chain_header_len(c), ==, XF_HDR_FIXED);
            g_assert_cmpint(xf_encode(c, w, &at, plain, sizeof plain, out, sizeof out, &n, NULL),
                            ==, 0);
            g_assert_cmpuint(n, ==, XF_HDR_FIXED + sizeof plain);
            g_assert_cmpmem(out + XF_HDR_FIXED, sizeof plain, plain, sizeof plain);
            /* Built-in identities only: the header alone is what encode
             * puts before the plain bytes, for every length. */
            g_assert_true(xf_chain_header_only(c) == !plug);
            if (!plug) {
                unsigned char hdr[XF_HDR_FIXED];

                g_assert_cmpint(xf_encode_header(c, &at, sizeof plain, hdr, NULL), ==, 0);
                g_assert_cmpmem(hdr, sizeof hdr, out, XF_HDR_FIXED);
                g_assert_cmpint(xf_encode(c, w, &at, plain, 0, out, sizeof out, &n, NULL), ==, 0);
                g_assert_cmpint(xf_encode_header(c, &at, 0, hdr, NULL), ==, 0);
                g_assert_cmpmem(hdr, sizeof hdr, out, n);
            } else {
                unsigned char hdr[XF_HDR_FIXED];

                g_assert_cmpint(xf_encode_header(c, &at, 1, hdr, NULL), ==, -EINVAL);
            }
            xt_roundtrip(c, w, 3, 4, plain, sizeof plain);
            g_string_free(s, TRUE);
        }
    }
    /* A chain with another stage is not header only. */
    g_assert_false(xf_chain_header_only(xt_chain(env, "identity,increment")));
    g_assert_false(xf_chain_header_only(xt_chain(env, "identity,sha256")));
    xf_work_free(w);
    g_rand_free(r);
    xf_env_free(env);
}

/* Empty chunks through chains that move between buffers, each with a
 * fresh xf_work (no scratch yet): no stage is handed a NULL buffer. */
static void test_empty_fresh(void)
{
    static const char *const chains[] = {"zstd,aes-256-gcm", "lz4,zstd,lz4", "trailer,noncexor",
                                         "noncexor,zstd,trailer,sha256"};
    xf_env *env = xt_env(true, true);
    unsigned char none[1];

    for (size_t i = 0; i < G_N_ELEMENTS(chains); i++) {
        xf_work *w;

        g_assert_cmpint(xf_work_new(env, &w), ==, 0);
        xt_roundtrip(xt_chain(env, chains[i]), w, 1, i, none, 0);
        xf_work_free(w);
        g_assert_cmpint(xf_work_new(env, &w), ==, 0);
        xt_roundtrip(xt_chain(env, chains[i]), w, 1, i, none, 0);
        xt_roundtrip(xt_chain(env, chains[i]), w, 1, i, (const unsigned char *)"x", 1);
        xf_work_free(w);
    }
    xf_env_free(env);
}

/* Rooms, to the byte: encode needs exactly xf_encode_room (one less is
 * -ENOBUFS, nothing written past it); decode into exactly the plain
 * length works for these chains, one less is -ENOBUFS. */
static void test_rooms(void)
{
    static const char *const chains[] = {"zstd,aes-256-gcm", "trailer,trailer,trailer",
                                         "lz4,trailer,increment", "sha256,zstd,noncexor"};
    xf_env *env = xt_env(true, true);
    GRand *r = g_rand_new_with_seed(22);
    xf_work *w;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    for (int iter = 0; iter < 400; iter++) {
        const xf_chain *c = xt_chain(env, chains[iter % G_N_ELEMENTS(chains)]);
        size_t n = (size_t)g_rand_int_range(r, 1, 20000), room = xf_encode_room(c, n), got, back;
        unsigned char *plain = g_malloc(n), *enc = g_malloc(room + 16), *dec = g_malloc(n + 16);
        xf_chunk at = {9, (uint64_t)iter, 0};
        xf_err err;

        xt_fill(r, (xt_kind)(iter % XT_KINDS), plain, n);
        memset(enc, 0xEE, room + 16);
        g_assert_cmpint(xf_encode(c, w, &at, plain, n, enc, room - 1, &got, &err), ==, -ENOBUFS);
        g_assert_cmpint(enc[0], ==, 0xEE);
        g_assert_cmpint(xf_encode(c, w, &at, plain, n, enc, room, &got, &err), ==, 0);
        for (int i = 0; i < 16; i++)
            g_assert_cmpint(enc[room + i], ==, 0xEE);
        memset(dec, 0xEE, n + 16);
        g_assert_cmpint(xf_decode(c, w, &at, enc, got, dec, n - 1, &back, &err), ==, -ENOBUFS);
        g_assert_cmpint(xf_decode(c, w, &at, enc, got, dec, n, &back, &err), ==, 0);
        g_assert_cmpuint(back, ==, n);
        g_assert_cmpmem(dec, n, plain, n);
        for (int i = 0; i < 16; i++)
            g_assert_cmpint(dec[n + i], ==, 0xEE);
        g_free(plain);
        g_free(enc);
        g_free(dec);
    }
    xf_work_free(w);
    g_rand_free(r);
    xf_env_free(env);
}

/* Fuzz-style: random chains, sizes and data; every encode stays within
 * xf_encode_room and every decode gives the bytes back. */
static void test_bounds_fuzz(void)
{
    xf_env *env = xt_env(true, true);
    GRand *r = g_rand_new_with_seed(23);
    unsigned char *plain = g_malloc(1 << 17);
    xf_work *w;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    for (int iter = 0; iter < 1500; iter++) {
        GString *text = random_chain(r, g_rand_int_range(r, 1, 9));
        const xf_chain *c = xt_chain(env, text->str);
        size_t n = (size_t)g_rand_int_range(r, 0, iter % 10 == 0 ? 1 << 17 : 300);

        xt_fill(r, (xt_kind)g_rand_int_range(r, 0, XT_KINDS), plain, n);
        xt_roundtrip(c, w, (uint64_t)iter, 0, plain, n);
        g_string_free(text, TRUE);
    }
    xf_work_free(w);
    g_free(plain);
    g_rand_free(r);
    xf_env_free(env);
}

typedef struct {
    xf_env *env;
    int seed;
} thread_arg;

static void *thread_main(void *p)
{
    thread_arg *a = p;
    GRand *r = g_rand_new_with_seed((guint32)a->seed);
    unsigned char *plain = g_malloc(65536);
    xf_work *w;

    g_assert_cmpint(xf_work_new(a->env, &w), ==, 0);
    for (int i = 0; i < 300; i++) {
        const xf_chain *c =
            xt_chain(a->env, singles[g_rand_int_range(r, 0, G_N_ELEMENTS(singles))]);
        size_t n = (size_t)g_rand_int_range(r, 0, 65536);

        xt_fill(r, (xt_kind)g_rand_int_range(r, 0, XT_KINDS), plain, n);
        xt_roundtrip(c, w, (uint64_t)a->seed, (uint64_t)i, plain, n);
    }
    xf_work_free(w);
    g_free(plain);
    g_rand_free(r);
    return NULL;
}

static void test_threads(void)
{
    xf_env *env = xt_env(true, true);
    pthread_t t[4];
    thread_arg a[4];

    for (int i = 0; i < 4; i++) {
        a[i] = (thread_arg){env, 30 + i};
        g_assert_cmpint(pthread_create(&t[i], NULL, thread_main, &a[i]), ==, 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    xf_env_free(env);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/xform/roundtrip/every-size", test_every_size);
    g_test_add_func("/xform/roundtrip/large", test_large);
    g_test_add_func("/xform/roundtrip/compression", test_compression);
    g_test_add_func("/xform/roundtrip/chains", test_chains);
    g_test_add_func("/xform/roundtrip/identity-chains", test_identity_chains);
    g_test_add_func("/xform/roundtrip/empty-fresh", test_empty_fresh);
    g_test_add_func("/xform/roundtrip/rooms", test_rooms);
    g_test_add_func("/xform/roundtrip/bounds-fuzz", test_bounds_fuzz);
    g_test_add_func("/xform/roundtrip/threads", test_threads);
    return g_test_run();
}
