/*
 * xfbench.c -- microbenchmarks of the transformation library (xform/), no
 * database and no server: what one chunk costs in each stage, in chains
 * of identities and of increments, against a plain memcpy of the same
 * bytes; what zstd and lz4 make of a text corpus and of random data; how
 * long making a chain takes on first use (built-in, plug-in,
 * in-database). bench/xform/run drives it and writes the results.
 *
 *   xfbench -c CORPUS -k KEYFILE -p PLUGIN_DIR [-t MS] [-r REPEATS]
 *
 * Output, one measurement per line (medians over REPEATS runs of at
 * least MS milliseconds each):
 *   cost CHAIN SIZE ENC_NS DEC_NS STORED     per chunk of SIZE bytes
 *                                            (CHAIN: the canonical text)
 *   memcpy SIZE NS                           the same bytes copied once
 *   ratio CHAIN DATA PLAIN STORED ENC_MBPS DEC_MBPS   a whole corpus
 *   setup CHAIN[+loaded] US                  xf_chain_get in a fresh env
 *                                            (+loaded: its plug-ins already loaded)
 *
 * NOTES
 *   Each measurement repeats one call on the same buffers (warm caches,
 *   as a worker flushing or fetching chunk after chunk). Encoding with
 *   aes-256-gcm takes a fresh nonce every time, as it must.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xf.h"

static double bench_ms = 150;
static int bench_repeats = 3;
static const char *bench_key, *bench_plugins;

/* A sink the compiler cannot see through, so copies are not elided. */
static volatile unsigned char bench_sink;

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, const xf_err *err)
{
    fprintf(stderr, "xfbench: %s: %s\n", what, err ? err->msg : strerror(errno));
    exit(1);
}

static xf_env *bench_env(void)
{
    xf_env_config cfg = {bench_key, bench_plugins, 3, 1};
    xf_env *env;
    xf_err err;

    if (xf_env_new(&cfg, &env, &err) != 0)
        die("env", &err);
    return env;
}

static const xf_chain *bench_chain(xf_env *env, const char *text)
{
    const xf_chain *c;
    xf_err err;

    if (xf_chain_get(env, text, &c, &err) != 0)
        die(text, &err);
    return c;
}

/* What one measured operation works on. */
typedef struct bench_op {
    const xf_chain *c;
    xf_work *w;
    const unsigned char *plain;
    size_t n;
    unsigned char *enc, *dec;
    size_t enc_room, enc_len;
    unsigned char *src, *dst; /* memcpy */
    int kind;                 /* 0 encode, 1 decode, 2 memcpy */
} bench_op;

static void bench_run_once(bench_op *op)
{
    xf_chunk at = {1000, 7, 0};
    size_t back;
    xf_err err;

    switch (op->kind) {
    case 0:
        if (xf_encode(op->c, op->w, &at, op->plain, op->n, op->enc, op->enc_room, &op->enc_len,
                      &err) != 0)
            die("encode", &err);
        break;
    case 1:
        if (xf_decode(op->c, op->w, &at, op->enc, op->enc_len, op->dec, op->n, &back, &err) != 0)
            die("decode", &err);
        break;
    default:
        memcpy(op->dst, op->src, op->n);
        bench_sink = op->dst[op->n / 2];
        break;
    }
}

/* Median nanoseconds per operation. */
static double bench_time(bench_op *op)
{
    double v[32];
    int reps = bench_repeats < 32 ? bench_repeats : 32;

    bench_run_once(op); /* warm-up: buffers grown, contexts made */
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns(), t;
        long iters = 0;

        do {
            for (int i = 0; i < 8; i++)
                bench_run_once(op);
            iters += 8;
            t = now_ns();
        } while (t - t0 < bench_ms * 1e6);
        v[r] = (t - t0) / (double)iters;
    }
    return median(v, reps);
}

/* cost lines: chain at each size (plain from data). */
static void bench_cost(xf_env *env, const char *text, const unsigned char *data,
                       const size_t *sizes, int nsizes)
{
    const xf_chain *c = bench_chain(env, text);
    bench_op op = {.c = c};

    if (xf_work_new(env, &op.w) != 0)
        die("work", NULL);
    for (int i = 0; i < nsizes; i++) {
        double enc, dec;

        op.n = sizes[i];
        op.plain = data;
        op.enc_room = xf_encode_room(c, op.n);
        op.enc = malloc(op.enc_room);
        op.dec = malloc(xf_decode_room(c, op.n));
        op.kind = 0;
        enc = bench_time(&op);
        op.kind = 1;
        dec = bench_time(&op);
        printf("cost %s %zu %.0f %.0f %zu\n", xf_chain_text(c), op.n, enc, dec, op.enc_len);
        fflush(stdout);
        free(op.enc);
        free(op.dec);
    }
    xf_work_free(op.w);
}

static void bench_memcpy(const unsigned char *data, const size_t *sizes, int nsizes)
{
    for (int i = 0; i < nsizes; i++) {
        bench_op op = {.n = sizes[i], .kind = 2};

        op.src = malloc(op.n);
        op.dst = malloc(op.n);
        memcpy(op.src, data, op.n);
        printf("memcpy %zu %.0f\n", op.n, bench_time(&op));
        fflush(stdout);
        free(op.src);
        free(op.dst);
    }
}

/* ratio: the whole of data in chunks of 64 KiB through chain text. */
static void bench_ratio(xf_env *env, const char *text, const char *label, const unsigned char *data,
                        size_t len)
{
    const size_t cs = 65536;
    const xf_chain *c = bench_chain(env, text);
    size_t room = xf_encode_room(c, cs), stored = 0, chunks = (len + cs - 1) / cs, back;
    unsigned char *enc = malloc(room * chunks), *dec = malloc(cs);
    size_t *lens = malloc(chunks * sizeof *lens);
    double t0, t1, t2;
    xf_work *w;
    xf_err err;

    if (xf_work_new(env, &w) != 0 || !enc || !dec || !lens)
        die("memory", NULL);
    t0 = now_ns();
    for (size_t k = 0; k < chunks; k++) {
        xf_chunk at = {5, k, 0};
        size_t n = k + 1 < chunks ? cs : len - k * cs;

        if (xf_encode(c, w, &at, data + k * cs, n, enc + k * room, room, &lens[k], &err) != 0)
            die("encode", &err);
        stored += lens[k];
    }
    t1 = now_ns();
    for (size_t k = 0; k < chunks; k++) {
        xf_chunk at = {5, k, 0};

        if (xf_decode(c, w, &at, enc + k * room, lens[k], dec, cs, &back, &err) != 0)
            die("decode", &err);
        if (memcmp(dec, data + k * cs, back) != 0) {
            fprintf(stderr, "xfbench: %s does not round-trip\n", text);
            exit(1);
        }
    }
    t2 = now_ns();
    printf("ratio %s %s %zu %zu %.1f %.1f\n", xf_chain_text(c), label, len, stored,
           (double)len / ((t1 - t0) / 1e3), (double)len / ((t2 - t1) / 1e3));
    fflush(stdout);
    xf_work_free(w);
    free(enc);
    free(dec);
    free(lens);
}

/* setup: xf_chain_get in a fresh env (plug-ins loaded and probed, stages
 * initialised), median over runs; env creation not counted, nor making
 * the chain `before` first (NULL: none), which leaves its plug-ins
 * loaded. The line names the chain as given, and "+loaded" after a
 * `before`. */
static void bench_setup(const char *text, const char *before)
{
    double v[64];
    int runs = 41;

    for (int r = 0; r < runs; r++) {
        xf_env *env = bench_env();
        double t0;

        if (before)
            bench_chain(env, before);
        t0 = now_ns();
        bench_chain(env, text);
        v[r] = (now_ns() - t0) / 1e3;
        xf_env_free(env);
    }
    printf("setup %s%s %.1f\n", text, before ? "+loaded" : "", median(v, runs));
    fflush(stdout);
}

static char *repeat_chain(const char *stage, int n)
{
    size_t len = (strlen(stage) + 1) * (size_t)n + 1;
    char *s = malloc(len);

    s[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i)
            strcat(s, ",");
        strcat(s, stage);
    }
    return s;
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *p;
    long n;

    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0)
        die(path, NULL);
    p = malloc((size_t)n);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n)
        die(path, NULL);
    fclose(f);
    *len = (size_t)n;
    return p;
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {4096, 16384, 65536, 262144, 1048576};
    static const char *const stages[] = {"identity",  "increment",   "zstd",
                                         "lz4",       "aes-256-gcm", "sha256",
                                         "uidentity", "uincrement",  "zstd,aes-256-gcm"};
    const char *corpus = NULL;
    unsigned char *text, *rnd;
    size_t text_len, rnd_len;
    uint32_t x = 12345;
    xf_env *env;
    int opt;

    while ((opt = getopt(argc, argv, "c:k:p:t:r:")) != -1) {
        switch (opt) {
        case 'c':
            corpus = optarg;
            break;
        case 'k':
            bench_key = optarg;
            break;
        case 'p':
            bench_plugins = optarg;
            break;
        case 't':
            bench_ms = atof(optarg);
            break;
        case 'r':
            bench_repeats = atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: xfbench -c CORPUS -k KEYFILE -p PLUGIN_DIR [-t MS] [-r N]\n");
            return 2;
        }
    }
    if (!corpus || !bench_key || !bench_plugins || bench_repeats < 1) {
        fprintf(stderr, "usage: xfbench -c CORPUS -k KEYFILE -p PLUGIN_DIR [-t MS] [-r N]\n");
        return 2;
    }
    text = read_file(corpus, &text_len);
    if (text_len < sizes[4]) {
        fprintf(stderr, "xfbench: the corpus must hold at least %zu bytes\n", sizes[4]);
        return 2;
    }
    rnd_len = text_len;
    rnd = malloc(rnd_len);
    for (size_t i = 0; i < rnd_len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        rnd[i] = (unsigned char)x;
    }
    env = bench_env();
    xf_env_set_epoch(env, 1);
    bench_memcpy(text, sizes, 5);
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
        bench_cost(env, stages[i], text, sizes, 5);
    for (int n = 5; n <= 25; n += 20) {
        char *chain = repeat_chain("identity", n);

        bench_cost(env, chain, text, sizes, 5);
        free(chain);
    }
    for (int n = 2; n <= 8; n *= 2) {
        char *chain = repeat_chain("increment", n);

        bench_cost(env, chain, text, sizes + 2, 1);
        free(chain);
    }
    bench_ratio(env, "zstd:level=1", "text", text, text_len);
    bench_ratio(env, "zstd", "text", text, text_len);
    bench_ratio(env, "zstd:level=9", "text", text, text_len);
    bench_ratio(env, "lz4", "text", text, text_len);
    bench_ratio(env, "zstd,aes-256-gcm", "text", text, text_len);
    bench_ratio(env, "zstd", "random", rnd, rnd_len);
    bench_ratio(env, "lz4", "random", rnd, rnd_len);
    bench_ratio(env, "aes-256-gcm", "random", rnd, rnd_len);
    bench_ratio(env, "sha256", "random", rnd, rnd_len);
    xf_env_free(env);
    bench_setup("identity", NULL);
    bench_setup("identity,identity,identity,identity,identity", NULL);
    {
        char *chain = repeat_chain("identity", 25);

        bench_setup(chain, NULL);
        free(chain);
    }
    bench_setup("uidentity", NULL);
    bench_setup("uidentity,identity", "uidentity");
    bench_setup("identity,identity", "identity");
    bench_setup("sql:forward=f:inverse=g", NULL);
    bench_setup("zstd,aes-256-gcm,sha256", NULL);
    free(text);
    free(rnd);
    return 0;
}
