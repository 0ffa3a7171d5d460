/*
 * test_fh.c -- the file-handle codec (server/fh.c): handles round-trip,
 * any change to a handle is refused, and handles of another file system
 * or another secret are told apart.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "fh.h"

static dbfs_info test_info(uint64_t fsid, unsigned char secret_seed)
{
    dbfs_info info;

    memset(&info, 0, sizeof info);
    info.fsid = fsid;
    info.chunk_size = 8192;
    for (unsigned i = 0; i < DBFS_SECRET_LEN; i++)
        info.secret[i] = (unsigned char)(secret_seed + 7 * i);
    return info;
}

static void test_roundtrip(void)
{
    const dbfs_info info = test_info(0x0123456789abcdefULL, 1);
    const struct {
        unsigned export_index;
        uint64_t ino;
        uint32_t gen;
    } cases[] = {
        {0, DBFS_ROOT_INO, 0},
        {0, 2, 1},
        {3, 0xfedcba9876543210ULL, 0xdeadbeefu},
        {255, UINT64_MAX, UINT32_MAX},
        {17, 1ULL << 40, 12345},
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        unsigned char h[FH_SIZE];
        fh_decoded d;
        dbfs_fh fh = {.ino = cases[i].ino, .gen = cases[i].gen};

        fh_encode(&info, cases[i].export_index, fh, h);
        g_assert_cmpint(h[0], ==, FH_VERSION);
        g_assert_cmpint(fh_decode(&info, h, sizeof h, &d), ==, 0);
        g_assert_cmpuint(d.export_index, ==, cases[i].export_index);
        g_assert_cmpuint(d.fh.ino, ==, cases[i].ino);
        g_assert_cmpuint(d.fh.gen, ==, cases[i].gen);

        /* Deterministic: the same file gives the same handle. */
        unsigned char again[FH_SIZE];
        fh_encode(&info, cases[i].export_index, fh, again);
        g_assert_cmpmem(h, sizeof h, again, sizeof again);
    }
}

static void test_layout(void)
{
    const dbfs_info info = test_info(0x1122334455667788ULL, 2);
    unsigned char h[FH_SIZE];

    fh_encode(&info, 9, (dbfs_fh){.ino = 0x0102030405060708ULL, .gen = 0x0a0b0c0d}, h);
    const unsigned char fsid[] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    const unsigned char ino[] = {1, 2, 3, 4, 5, 6, 7, 8};
    const unsigned char gen[] = {0x0a, 0x0b, 0x0c, 0x0d};
    g_assert_cmpint(h[0], ==, FH_VERSION);
    g_assert_cmpint(h[1], ==, 9);
    g_assert_cmpmem(h + 2, 8, fsid, 8);
    g_assert_cmpmem(h + 10, 8, ino, 8);
    g_assert_cmpmem(h + 18, 4, gen, 4);
}

static void test_every_bit_flip(void)
{
    const dbfs_info info = test_info(42, 3);
    unsigned char h[FH_SIZE];
    unsigned refused = 0;

    fh_encode(&info, 1, (dbfs_fh){.ino = 1000, .gen = 7}, h);
    for (unsigned bit = 0; bit < FH_SIZE * 8; bit++) {
        unsigned char bad[FH_SIZE];
        fh_decoded d;
        memcpy(bad, h, sizeof bad);
        bad[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        g_assert_cmpint(fh_decode(&info, bad, sizeof bad, &d), ==, -EBADF);
        refused++;
    }
    g_assert_cmpuint(refused, ==, FH_SIZE * 8);
}

static void test_wrong_length(void)
{
    const dbfs_info info = test_info(42, 4);
    unsigned char h[64]; /* NFS3_FHSIZE */
    fh_decoded d;

    memset(h, 0, sizeof h);
    fh_encode(&info, 0, (dbfs_fh){.ino = 5, .gen = 1}, h);
    g_assert_cmpint(fh_decode(&info, h, FH_SIZE, &d), ==, 0);
    for (size_t len = 0; len < sizeof h; len++) {
        if (len == FH_SIZE)
            continue;
        g_assert_cmpint(fh_decode(&info, h, len, &d), ==, -EBADF);
    }
    g_assert_cmpint(fh_decode(&info, NULL, 0, &d), ==, -EBADF);
    g_assert_cmpint(fh_decode(&info, NULL, FH_SIZE, &d), ==, -EBADF);
}

static void test_other_fsid(void)
{
    dbfs_info a = test_info(100, 5);
    dbfs_info b = a;
    unsigned char h[FH_SIZE];
    fh_decoded d;

    b.fsid = 101;
    fh_encode(&a, 0, (dbfs_fh){.ino = 77, .gen = 3}, h);
    g_assert_cmpint(fh_decode(&b, h, sizeof h, &d), ==, -ESTALE);
    g_assert_cmpint(fh_decode(&a, h, sizeof h, &d), ==, 0);
}

static void test_other_secret(void)
{
    dbfs_info a = test_info(100, 6);
    dbfs_info b = a;
    unsigned char h[FH_SIZE];
    fh_decoded d;

    b.secret[DBFS_SECRET_LEN - 1] ^= 1;
    fh_encode(&a, 0, (dbfs_fh){.ino = 77, .gen = 3}, h);
    g_assert_cmpint(fh_decode(&b, h, sizeof h, &d), ==, -EBADF);

    /* A handle made with the other secret for the same file differs. */
    unsigned char h2[FH_SIZE];
    fh_encode(&b, 0, (dbfs_fh){.ino = 77, .gen = 3}, h2);
    g_assert_true(memcmp(h, h2, FH_SIZE) != 0);
    g_assert_cmpmem(h, 22, h2, 22);
}

static void test_forgery(void)
{
    const dbfs_info info = test_info(9, 7);
    GRand *rnd = g_rand_new_with_seed(1813);
    unsigned char h[FH_SIZE];
    fh_decoded d;

    /* A client that knows the layout but not the secret: right header, any MAC. */
    for (int i = 0; i < 20000; i++) {
        fh_encode(&info, 0, (dbfs_fh){.ino = (uint64_t)i, .gen = 0}, h);
        for (unsigned j = 22; j < FH_SIZE; j++)
            h[j] = (unsigned char)g_rand_int_range(rnd, 0, 256);
        h[10] ^= 0x80; /* another inode than the one signed */
        g_assert_cmpint(fh_decode(&info, h, sizeof h, &d), ==, -EBADF);
    }
    g_rand_free(rnd);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/fh/roundtrip", test_roundtrip);
    g_test_add_func("/fh/layout", test_layout);
    g_test_add_func("/fh/every_bit_flip", test_every_bit_flip);
    g_test_add_func("/fh/wrong_length", test_wrong_length);
    g_test_add_func("/fh/other_fsid", test_other_fsid);
    g_test_add_func("/fh/other_secret", test_other_secret);
    g_test_add_func("/fh/forgery", test_forgery);
    return g_test_run();
}
