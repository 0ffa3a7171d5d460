/*
 * fuzz_replay.c -- the dispatch fuzz target without libFuzzer: runs inputs
 * through LLVMFuzzerTestOneInput() in any build (gcc, sanitizers), so CI
 * exercises the target and a crash file from a fuzzing run can be replayed
 * under a debugger.
 *
 *   fuzz_replay FILE|DIR ...       run every file given (directories: every
 *                                  file in them)
 *   fuzz_replay [--mutations N] [--seed S]
 *                                  run the seed corpus (fuzz_seeds.h), every
 *                                  truncation of every seed, and N seeded
 *                                  random mutations of each (default 300,
 *                                  seed 1): a deterministic mini-fuzz
 *   fuzz_replay --write-seeds DIR  write the seed corpus into DIR
 *
 * The environment chooses the harness mode (PGNFS_FUZZ_CONNINFO, see
 * fuzz_harness.h). Exit status: 0 when every input ran (a broken rule
 * aborts), 2 on bad usage or an unreadable file. Prints how many inputs
 * ran, and the seed, so a failure can be reproduced.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "fuzz_harness.h"

typedef struct {
    uint64_t rng;
    unsigned mutations;
    uint64_t runs;
} fuzz_replay_state;

static uint64_t fuzz_rand(fuzz_replay_state *st)
{
    /* xorshift64* */
    st->rng ^= st->rng >> 12;
    st->rng ^= st->rng << 25;
    st->rng ^= st->rng >> 27;
    return st->rng * 0x2545f4914f6cdd1dull;
}

static void fuzz_run(fuzz_replay_state *st, const void *data, size_t len)
{
    /* A copy of exactly len bytes, so ASan sees any read past the end. */
    unsigned char *copy = g_memdup2(data, len ? len : 1);

    LLVMFuzzerTestOneInput(copy, len);
    g_free(copy);
    st->runs++;
}

static const uint32_t fuzz_interesting[] = {
    0,      1,      2,      3,          4,          16,         17,         64,      65,
    255,    256,    1024,   1025,       4096,       8192,       65536,      1048576, 1048577,
    0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 100003,  100005,
};

/* One random change to buf (len may change; cap is its size). */
static void fuzz_mutate_once(fuzz_replay_state *st, unsigned char *buf, size_t *len, size_t cap)
{
    size_t n = *len;
    uint64_t r = fuzz_rand(st);

    switch (r % 6) {
    case 0: /* flip a bit */
        if (n)
            buf[(r >> 8) % n] ^= (unsigned char)(1u << ((r >> 40) % 8));
        break;
    case 1: /* a random byte */
        if (n)
            buf[(r >> 8) % n] = (unsigned char)(r >> 48);
        break;
    case 2: /* an aligned word set to an interesting value */
        if (n >= 4) {
            size_t at = ((r >> 8) % (n / 4)) * 4;
            uint32_t v = fuzz_interesting[(r >> 40) % G_N_ELEMENTS(fuzz_interesting)];
            buf[at] = (unsigned char)(v >> 24);
            buf[at + 1] = (unsigned char)(v >> 16);
            buf[at + 2] = (unsigned char)(v >> 8);
            buf[at + 3] = (unsigned char)v;
        }
        break;
    case 3: /* delete a word */
        if (n >= 8) {
            size_t at = ((r >> 8) % (n / 4 - 1)) * 4;
            memmove(buf + at, buf + at + 4, n - at - 4);
            *len = n - 4;
        }
        break;
    case 4: /* duplicate a word */
        if (n >= 4 && n + 4 <= cap) {
            size_t at = ((r >> 8) % (n / 4)) * 4;
            memmove(buf + at + 4, buf + at, n - at);
            *len = n + 4;
        }
        break;
    default: /* append random bytes */
        for (unsigned k = 0; k < 1 + (r >> 8) % 16 && *len < cap; k++)
            buf[(*len)++] = (unsigned char)fuzz_rand(st);
        break;
    }
}

static void fuzz_seed_run(const char *name, const void *rec, size_t len, void *user)
{
    fuzz_replay_state *st = user;
    size_t cap = len + 256;
    unsigned char *buf = g_malloc(cap);

    (void)name;
    fuzz_run(st, rec, len);
    for (size_t cut = 0; cut < len; cut++)
        fuzz_run(st, rec, cut);
    for (unsigned m = 0; m < st->mutations; m++) {
        size_t n = len;
        memcpy(buf, rec, len);
        unsigned changes = 1 + (unsigned)(fuzz_rand(st) % 4);
        for (unsigned k = 0; k < changes; k++)
            fuzz_mutate_once(st, buf, &n, cap);
        fuzz_run(st, buf, n);
    }
    g_free(buf);
}

static int fuzz_run_path(fuzz_replay_state *st, const char *path)
{
    GError *err = NULL;

    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        GDir *d = g_dir_open(path, 0, &err);
        if (!d) {
            fprintf(stderr, "fuzz_replay: %s\n", err->message);
            g_error_free(err);
            return -1;
        }
        const char *name;
        int rc = 0;
        while (rc == 0 && (name = g_dir_read_name(d)) != NULL) {
            char *sub = g_build_filename(path, name, NULL);
            rc = fuzz_run_path(st, sub);
            g_free(sub);
        }
        g_dir_close(d);
        return rc;
    }
    char *data = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &data, &len, &err)) {
        fprintf(stderr, "fuzz_replay: %s\n", err->message);
        g_error_free(err);
        return -1;
    }
    fuzz_run(st, data, len);
    g_free(data);
    return 0;
}

int main(int argc, char **argv)
{
    fuzz_replay_state st = {.rng = 1, .mutations = 300};
    const char *write_dir = NULL;
    int first_path = argc;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mutations") == 0 && i + 1 < argc) {
            st.mutations = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            st.rng = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--write-seeds") == 0 && i + 1 < argc) {
            write_dir = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: fuzz_replay [--mutations N] [--seed S] | --write-seeds DIR | "
                            "FILE|DIR ...\n");
            return 2;
        } else {
            first_path = i;
            break;
        }
    }
    if (st.rng == 0)
        st.rng = 1;
    uint64_t seed = st.rng;
    LLVMFuzzerInitialize(&argc, &argv);
    if (write_dir) {
        int n = fuzz_seeds_write_dir(fuzz_harness_handles(), write_dir);
        if (n < 0)
            return 2;
        printf("fuzz_replay: %d seeds written to %s\n", n, write_dir);
        return 0;
    }
    if (first_path < argc) {
        for (int i = first_path; i < argc; i++)
            if (fuzz_run_path(&st, argv[i]) != 0)
                return 2;
    } else {
        unsigned nseeds = fuzz_seeds_build(fuzz_harness_handles(), fuzz_seed_run, &st);
        printf("fuzz_replay: %u seeds, their truncations and %u mutations each (seed %llu)\n",
               nseeds, st.mutations, (unsigned long long)seed);
    }
    printf("fuzz_replay: %llu inputs ran (%s), no rule broken\n", (unsigned long long)st.runs,
           fuzz_harness_has_db() ? "with a database" : "no database");
    return 0;
}
