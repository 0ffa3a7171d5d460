/*
 * test_xf_corrupt.c -- what decoding refuses: every damaged header byte,
 * every damaged payload byte under sha256 or aes-256-gcm, truncated and
 * extended chunks, a chunk read at another file, chunk or chain, a wrong
 * key (and key files that must be refused), nonces (never repeated, none
 * without an epoch), and no unverified plaintext left behind.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "xtest.h"

/* Chains whose last stage checks every stored byte, and others (with a
 * check below a decompressor, a changed bit may still decode to the
 * right bytes: zstd's and lz4's streams have bits that do not matter). */
static const char *const checked[] = {"sha256",
                                      "aes-256-gcm",
                                      "zstd,aes-256-gcm",
                                      "increment,lz4,sha256",
                                      "zstd,aes-256-gcm,sha256",
                                      "lz4,uincrement,sha256"};
static const char *const below[] = {"sha256,zstd", "sha256,lz4", "aes-256-gcm,zstd",
                                    "increment,sha256,lz4"};
static const char *const unchecked[] = {"identity", "increment",  "zstd",
                                        "lz4",      "uincrement", "trailer"};

typedef struct {
    unsigned char *buf;
    size_t len;
} blob;

static blob encode(const xf_chain *c, xf_work *w, const xf_chunk *at, const unsigned char *plain,
                   size_t n)
{
    blob b = {g_malloc(xf_encode_room(c, n)), 0};
    xf_err err;

    if (xf_encode(c, w, at, plain, n, b.buf, xf_encode_room(c, n), &b.len, &err) != 0)
        g_error("encode: %s", err.msg);
    return b;
}

/* Decode must fail with -EBADMSG and a message naming file and chunk. */
static void bad(const xf_chain *c, xf_work *w, const xf_chunk *at, const unsigned char *s,
                size_t len, size_t n, const char *what)
{
    unsigned char *out = g_malloc(xf_decode_room(c, n) + 1);
    char prefix[64];
    size_t back;
    xf_err err = {""};
    int rc = xf_decode(c, w, at, s, len, out, xf_decode_room(c, n), &back, &err);

    if (rc != -EBADMSG)
        g_error("'%s' %s: decode gave %d (%s), not -EBADMSG", xf_chain_text(c), what, rc, err.msg);
    g_snprintf(prefix, sizeof prefix, "file %" G_GUINT64_FORMAT " chunk %" G_GUINT64_FORMAT ": ",
               at->file_id, at->chunk);
    g_assert_true(g_str_has_prefix(err.msg, prefix));
    g_free(out);
}

static void test_header(void)
{
    xf_env *env = xt_env(true, true);
    GRand *r = g_rand_new_with_seed(40);
    unsigned char plain[3000];
    xf_chunk at = {42, 7, 0};
    xf_work *w;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    xt_fill(r, XT_MIXED, plain, sizeof plain);
    for (int set = 0; set < 2; set++) {
        for (size_t i = 0; i < G_N_ELEMENTS(checked); i++) {
            const xf_chain *c = xt_chain(env, set ? unchecked[i] : checked[i]);
            blob b = encode(c, w, &at, plain, sizeof plain);
            size_t hdr = xf_chain_header_len(c);

            for (size_t at_byte = 0; at_byte < hdr; at_byte++) {
                for (int bit = 0; bit < 8; bit++) {
                    b.buf[at_byte] ^= (unsigned char)(1 << bit);
                    bad(c, w, &at, b.buf, b.len, sizeof plain, "header bit flipped");
                    b.buf[at_byte] ^= (unsigned char)(1 << bit);
                }
                b.buf[at_byte] ^= 0xFF;
                bad(c, w, &at, b.buf, b.len, sizeof plain, "header byte flipped");
                b.buf[at_byte] ^= 0xFF;
            }
            xt_roundtrip(c, w, 42, 7, plain, sizeof plain);
            g_free(b.buf);
        }
    }
    xf_work_free(w);
    g_rand_free(r);
    xf_env_free(env);
}

static void test_payload(void)
{
    xf_env *env = xt_env(true, true);
    GRand *r = g_rand_new_with_seed(41);
    unsigned char plain[2000], out[4000];
    xf_chunk at = {5, 6, 0};
    xf_work *w;
    size_t back;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(checked); i++) {
        const xf_chain *c = xt_chain(env, checked[i]);
        blob b;
        size_t hdr = xf_chain_header_len(c);

        xt_fill(r, (xt_kind)(i % XT_KINDS), plain, sizeof plain);
        b = encode(c, w, &at, plain, sizeof plain);
        for (size_t p = hdr; p < b.len; p++) {
            unsigned char flip = (unsigned char)(1 << (p % 8));

            b.buf[p] ^= flip;
            bad(c, w, &at, b.buf, b.len, sizeof plain, "payload bit flipped");
            b.buf[p] ^= flip;
        }
        g_free(b.buf);
    }
    /* A check below a decompressor: refused, or the right bytes. */
    for (size_t i = 0; i < G_N_ELEMENTS(below); i++) {
        const xf_chain *c = xt_chain(env, below[i]);
        blob b;

        xt_fill(r, (xt_kind)(i % XT_KINDS), plain, sizeof plain);
        b = encode(c, w, &at, plain, sizeof plain);
        for (size_t p = xf_chain_header_len(c); p < b.len; p++) {
            unsigned char flip = (unsigned char)(1 << (p % 8));
            int rc;

            b.buf[p] ^= flip;
            rc = xf_decode(c, w, &at, b.buf, b.len, out, sizeof plain, &back, NULL);
            g_assert_true(rc == -EBADMSG || (rc == 0 && memcmp(out, plain, sizeof plain) == 0));
            b.buf[p] ^= flip;
        }
        g_free(b.buf);
    }
    /* Unchecked chains: damage may go unseen, but never crashes or
     * overruns; zstd and lz4 refuse what they cannot decode. */
    for (size_t i = 0; i < G_N_ELEMENTS(unchecked); i++) {
        const xf_chain *c = xt_chain(env, unchecked[i]);
        blob b;

        xt_fill(r, XT_TEXT, plain, sizeof plain);
        b = encode(c, w, &at, plain, sizeof plain);
        for (size_t p = xf_chain_header_len(c); p < b.len; p++) {
            int rc;

            b.buf[p] ^= 0x55;
            rc = xf_decode(c, w, &at, b.buf, b.len, out, sizeof plain, &back, NULL);
            g_assert_true(rc == 0 || rc == -EBADMSG);
            b.buf[p] ^= 0x55;
        }
        g_free(b.buf);
    }
    xf_work_free(w);
    g_rand_free(r);
    xf_env_free(env);
}

static void test_lengths(void)
{
    xf_env *env = xt_env(true, true);
    GRand *r = g_rand_new_with_seed(42);
    unsigned char plain[1500];
    xf_chunk at = {11, 12, 0};
    xf_work *w;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    for (int set = 0; set < 2; set++) {
        for (size_t i = 0; i < G_N_ELEMENTS(checked); i++) {
            const xf_chain *c = xt_chain(env, set ? unchecked[i] : checked[i]);
            blob b;
            unsigned char *longer;

            xt_fill(r, XT_MIXED, plain, sizeof plain);
            b = encode(c, w, &at, plain, sizeof plain);
            for (size_t len = 0; len < b.len; len++)
                bad(c, w, &at, b.buf, len, sizeof plain, "truncated");
            longer = g_malloc(b.len + 3);
            memcpy(longer, b.buf, b.len);
            memset(longer + b.len, 0, 3);
            for (size_t extra = 1; extra <= 3; extra++)
                bad(c, w, &at, longer, b.len + extra, sizeof plain, "extended");
            g_free(longer);
            g_free(b.buf);
        }
    }
    xf_work_free(w);
    g_rand_free(r);
    xf_env_free(env);
}

static void test_misplaced(void)
{
    xf_env *env = xt_env(true, true);
    unsigned char plain[1000];
    xf_chunk at = {100, 3, 0}, other_file = {101, 3, 0}, other_chunk = {100, 4, 0};
    xf_work *w;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    memset(plain, 'x', sizeof plain);
    for (size_t i = 0; i < G_N_ELEMENTS(checked); i++) {
        const xf_chain *c = xt_chain(env, checked[i]);
        blob b = encode(c, w, &at, plain, sizeof plain);

        bad(c, w, &other_file, b.buf, b.len, sizeof plain, "read as another file's");
        bad(c, w, &other_chunk, b.buf, b.len, sizeof plain, "read as another chunk");
        g_free(b.buf);
    }
    /* The chunk's version, when the caller knows it, is in the message. */
    {
        const xf_chain *c = xt_chain(env, "sha256");
        xf_chunk v5 = {100, 3, 5};
        blob b = encode(c, w, &v5, plain, sizeof plain);
        unsigned char out[1000];
        size_t back;
        xf_err err;

        b.buf[b.len - 1] ^= 1;
        g_assert_cmpint(xf_decode(c, w, &v5, b.buf, b.len, out, sizeof out, &back, &err), ==,
                        -EBADMSG);
        g_assert_true(g_str_has_prefix(err.msg, "file 100 chunk 3 (version 5): stage 1 'sha256'"));
        g_free(b.buf);
    }
    /* Another chain, even one with the same layout, is refused by id. */
    {
        const xf_chain *c1 = xt_chain(env, "zstd:level=1"), *c3 = xt_chain(env, "zstd:level=3");
        unsigned char out[1000];
        size_t back;
        xf_err err;
        blob b = encode(c1, w, &at, plain, sizeof plain);

        g_assert_cmpint(xf_decode(c3, w, &at, b.buf, b.len, out, sizeof out, &back, &err), ==,
                        -EBADMSG);
        g_assert_nonnull(strstr(err.msg, "but the file's chain is 'zstd:level=3'"));
        g_free(b.buf);
    }
    xf_work_free(w);
    xf_env_free(env);
}

static void test_wrong_key(void)
{
    static const char other[] = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
    char *path = xt_file("other.key", other, sizeof other - 1, 0400);
    xf_env_config cfg = {path, NULL, 0, 3};
    xf_env *good = xt_env(true, false), *wrong = NULL;
    unsigned char plain[4096], out[4096];
    xf_chunk at = {77, 1, 0};
    xf_work *wg, *ww;
    uint32_t id1, id2;
    size_t back;
    xf_err err;
    blob b;

    g_assert_cmpint(xf_env_new(&cfg, &wrong, &err), ==, 0);
    g_assert_cmpint(xf_env_key_id(good, &id1), ==, 0);
    g_assert_cmpint(xf_env_key_id(wrong, &id2), ==, 0);
    g_assert_cmpuint(id1, !=, id2);
    g_assert_cmpint(xf_work_new(good, &wg), ==, 0);
    g_assert_cmpint(xf_work_new(wrong, &ww), ==, 0);
    memset(plain, 'k', sizeof plain);
    b = encode(xt_chain(good, "aes-256-gcm"), wg, &at, plain, sizeof plain);
    memset(out, 0xEE, sizeof out);
    g_assert_cmpint(xf_decode(xt_chain(wrong, "aes-256-gcm"), ww, &at, b.buf, b.len, out,
                              sizeof out, &back, &err),
                    ==, -EBADMSG);
    g_assert_nonnull(strstr(err.msg, "file 77 chunk 1: stage 1 'aes-256-gcm'"));
    g_assert_nonnull(strstr(err.msg, "wrong [xform] key_file?"));
    /* A chunk whose key id was changed to the wrong key's (CRC fixed up):
     * the tag catches it, and nothing decrypted is left in out. */
    {
        unsigned char *h = b.buf;
        guint32 crc;

        h[28] = (unsigned char)id2;
        h[29] = (unsigned char)(id2 >> 8);
        h[30] = (unsigned char)(id2 >> 16);
        h[31] = (unsigned char)(id2 >> 24);
        memset(h + 24, 0, 4);
        crc = 0;
        {
            /* CRC-32C, as xform computes it, over the header. */
            guint32 c = 0xFFFFFFFFu;

            for (size_t i = 0; i < xf_chain_header_len(xt_chain(wrong, "aes-256-gcm")); i++) {
                c ^= h[i];
                for (int k = 0; k < 8; k++)
                    c = c & 1 ? c >> 1 ^ 0x82F63B78u : c >> 1;
            }
            crc = c ^ 0xFFFFFFFFu;
        }
        h[24] = (unsigned char)crc;
        h[25] = (unsigned char)(crc >> 8);
        h[26] = (unsigned char)(crc >> 16);
        h[27] = (unsigned char)(crc >> 24);
        memset(out, 0xEE, sizeof out);
        g_assert_cmpint(xf_decode(xt_chain(wrong, "aes-256-gcm"), ww, &at, b.buf, b.len, out,
                                  sizeof out, &back, &err),
                        ==, -EBADMSG);
        g_assert_nonnull(strstr(err.msg, "authentication failed"));
        for (size_t i = 0; i < sizeof out; i++)
            g_assert_cmpint(out[i], ==, 0);
    }
    g_free(b.buf);
    xf_work_free(wg);
    xf_work_free(ww);
    xf_env_free(good);
    xf_env_free(wrong);
    g_free(path);
}

static void key_refused(const char *name, const void *data, size_t n, unsigned mode, int rc,
                        const char *what)
{
    char *path = xt_file(name, data, n, mode);
    xf_env_config cfg = {path, NULL, 0, 1};
    xf_env *env = (xf_env *)&env;
    xf_err err = {""};
    int got = xf_env_new(&cfg, &env, &err);

    if (got != rc || !strstr(err.msg, what) || !strstr(err.msg, path))
        g_error("key %s: expected %d \"%s\", got %d \"%s\"", name, rc, what, got, err.msg);
    g_assert_null(env);
    g_free(path);
}

static void test_key_files(void)
{
    static const char hex[] = "00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef";
    unsigned char raw[32];
    xf_env_config cfg = {NULL, NULL, 0, 1};
    xf_env *a, *b;
    uint32_t ida, idb;
    xf_err err;
    char *p;

    for (int i = 0; i < 32; i++)
        raw[i] = (unsigned char)(g_ascii_xdigit_value(hex[2 * i]) << 4 |
                                 g_ascii_xdigit_value(hex[2 * i + 1]));
    key_refused("k1", hex, 64, 0644, -EACCES, "readable by others");
    key_refused("k2", hex, 64, 0602, -EACCES, "writable by others");
    key_refused("k3", hex, 63, 0600, -EINVAL, "32 raw bytes or 64 hexadecimal digits");
    key_refused("k4", raw, 31, 0600, -EINVAL, "(it holds 31 bytes)");
    key_refused("k5", "zz112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef", 64, 0600,
                -EINVAL, "not a hexadecimal digit");
    key_refused("k6", hex, 0, 0600, -EINVAL, "it holds 0 bytes");
    p = g_build_filename(xt_dir(), "no-such-key", NULL);
    cfg.key_file = p;
    g_assert_cmpint(xf_env_new(&cfg, &a, &err), ==, -ENOENT);
    g_assert_nonnull(strstr(err.msg, "cannot open"));
    g_free(p);
    cfg.key_file = xt_dir();
    g_assert_cmpint(xf_env_new(&cfg, &a, &err), ==, -EINVAL);
    g_assert_nonnull(strstr(err.msg, "not a regular file"));
    /* Raw and hex spellings of one key are one key. */
    p = xt_file("raw.key", raw, 32, 0600);
    cfg.key_file = p;
    g_assert_cmpint(xf_env_new(&cfg, &a, &err), ==, 0);
    g_free(p);
    p = xt_file("hex.key", "00112233445566778899AABBCCDDEEFF0123456789abcdef0123456789abcdef \n",
                66, 0640);
    cfg.key_file = p;
    g_assert_cmpint(xf_env_new(&cfg, &b, &err), ==, 0);
    g_free(p);
    g_assert_cmpint(xf_env_key_id(a, &ida), ==, 0);
    g_assert_cmpint(xf_env_key_id(b, &idb), ==, 0);
    g_assert_cmpuint(ida, ==, idb);
    xf_env_free(a);
    xf_env_free(b);
    a = xt_env(false, false);
    g_assert_cmpint(xf_env_key_id(a, &ida), ==, -ENOKEY);
    xf_env_free(a);
}

typedef struct {
    xf_env *env;
    GPtrArray *seen; /* nonces, 12 bytes each */
    GMutex *mu;
} nonce_arg;

static void *nonce_thread(void *p)
{
    nonce_arg *a = p;
    const xf_chain *c = xt_chain(a->env, "aes-256-gcm");
    unsigned char plain[64] = {0}, out[256];
    xf_chunk at = {1, 1, 1}; /* the same chunk, rewritten */
    xf_work *w;
    size_t n;

    g_assert_cmpint(xf_work_new(a->env, &w), ==, 0);
    for (int i = 0; i < 5000; i++) {
        g_assert_cmpint(xf_encode(c, w, &at, plain, sizeof plain, out, sizeof out, &n, NULL), ==,
                        0);
        g_mutex_lock(a->mu);
        g_ptr_array_add(a->seen, g_memdup2(out + 32, 12));
        g_mutex_unlock(a->mu);
    }
    xf_work_free(w);
    return NULL;
}

static void test_nonces(void)
{
    xf_env_config cfg = {xt_key_file(), NULL, 0, 0};
    xf_env *env;
    xf_work *w;
    unsigned char plain[64] = {0}, out1[256], out2[256];
    xf_chunk at = {1, 1, 1};
    size_t n1, n2;
    xf_err err;
    GHashTable *set;
    GPtrArray *seen = g_ptr_array_new_with_free_func(g_free);
    GMutex mu;
    pthread_t t[4];
    nonce_arg arg;

    g_assert_cmpint(xf_env_new(&cfg, &env, &err), ==, 0);
    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    /* No epoch: refused, saying why. */
    g_assert_cmpint(xf_encode(xt_chain(env, "aes-256-gcm"), w, &at, plain, sizeof plain, out1,
                              sizeof out1, &n1, &err),
                    ==, -EINVAL);
    g_assert_nonnull(strstr(err.msg, "no nonce epoch"));
    g_assert_cmpint(
        xf_encode(xt_chain(env, "zstd"), w, &at, plain, sizeof plain, out1, sizeof out1, &n1, &err),
        ==, 0);
    xf_env_set_epoch(env, 0xA1B2C3D4u);
    /* The same bytes, the same chunk, twice: two nonces, two ciphertexts. */
    g_assert_cmpint(xf_encode(xt_chain(env, "aes-256-gcm"), w, &at, plain, sizeof plain, out1,
                              sizeof out1, &n1, NULL),
                    ==, 0);
    g_assert_cmpint(xf_encode(xt_chain(env, "aes-256-gcm"), w, &at, plain, sizeof plain, out2,
                              sizeof out2, &n2, NULL),
                    ==, 0);
    g_assert_cmpuint(n1, ==, n2);
    g_assert_true(memcmp(out1 + 32, out2 + 32, 12) != 0);
    g_assert_true(memcmp(out1 + 60, out2 + 60, n1 - 60) != 0);
    /* The nonce is the epoch, then the counter. */
    g_assert_cmpint(out1[32], ==, 0xD4);
    g_assert_cmpint(out1[35], ==, 0xA1);
    xf_work_free(w);
    /* 20,000 nonces from four threads: all different. */
    g_mutex_init(&mu);
    arg = (nonce_arg){env, seen, &mu};
    for (int i = 0; i < 4; i++)
        g_assert_cmpint(pthread_create(&t[i], NULL, nonce_thread, &arg), ==, 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    set = g_hash_table_new(g_bytes_hash, g_bytes_equal);
    for (guint i = 0; i < seen->len; i++) {
        GBytes *bytes = g_bytes_new_static(seen->pdata[i], 12);

        g_assert_false(g_hash_table_contains(set, bytes));
        g_hash_table_add(set, bytes);
    }
    g_assert_cmpuint(g_hash_table_size(set), ==, 20000);
    g_hash_table_foreach(set, (GHFunc)(void (*)(void))g_bytes_unref, NULL);
    g_hash_table_destroy(set);
    g_ptr_array_free(seen, TRUE);
    g_mutex_clear(&mu);
    xf_env_free(env);
}

static void test_peek(void)
{
    xf_env *env = xt_env(true, false);
    const xf_chain *c = xt_chain(env, "zstd,aes-256-gcm");
    unsigned char plain[5000];
    xf_chunk at = {1, 2, 3};
    xf_peek_info pi;
    xf_work *w;
    xf_err err;
    blob b;

    g_assert_cmpint(xf_work_new(env, &w), ==, 0);
    memset(plain, 'p', sizeof plain);
    b = encode(c, w, &at, plain, sizeof plain);
    g_assert_cmpint(xf_peek(b.buf, b.len, &pi, &err), ==, 0);
    g_assert_cmpuint(pi.chain_id, ==, xf_chain_id(c));
    g_assert_cmpuint(pi.plain_len, ==, sizeof plain);
    g_assert_cmpuint(pi.header_len, ==, xf_chain_header_len(c));
    g_assert_cmpuint(pi.payload_len, ==, b.len - pi.header_len);
    g_assert_cmpuint(pi.stages, ==, 2);
    g_assert_cmpuint(pi.payload_len, <, 200);
    g_assert_cmpint(xf_peek(plain, sizeof plain, &pi, &err), ==, -EBADMSG);
    g_assert_nonnull(strstr(err.msg, "no transformation header"));
    g_assert_cmpint(xf_peek(b.buf, b.len - 1, &pi, &err), ==, -EBADMSG);
    g_free(b.buf);
    xf_work_free(w);
    xf_env_free(env);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/xform/corrupt/header", test_header);
    g_test_add_func("/xform/corrupt/payload", test_payload);
    g_test_add_func("/xform/corrupt/lengths", test_lengths);
    g_test_add_func("/xform/corrupt/misplaced", test_misplaced);
    g_test_add_func("/xform/corrupt/wrong-key", test_wrong_key);
    g_test_add_func("/xform/corrupt/key-files", test_key_files);
    g_test_add_func("/xform/corrupt/nonces", test_nonces);
    g_test_add_func("/xform/corrupt/peek", test_peek);
    return g_test_run();
}
