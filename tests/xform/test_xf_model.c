/*
 * test_xf_model.c -- files kept as transformed chunks, written the way
 * dbfs flushes and read the way it fetches, against a plain model: random
 * writes at random offsets (a partial write of a chunk is a
 * read-modify-write of that chunk: decode, overlay, encode), truncations
 * that shrink and extend, reads anywhere (a missing chunk, and the bytes
 * past a chunk's plain length, read as zeros), and a whole file
 * re-encoded from one chain to another ("xform apply"). Every built-in,
 * a plug-in and chains of them; chunk sizes 4 KiB and 64 KiB; fixed
 * seeds.
 */
#include <errno.h>
#include <string.h>

#include "xtest.h"

#define MAX_CHUNKS 64

typedef struct xfile {
    const xf_chain *c;
    xf_work *w;
    uint64_t ino;
    size_t chunk_size, size;
    unsigned char *stored[MAX_CHUNKS]; /* NULL: no row */
    size_t stored_len[MAX_CHUNKS];
    uint64_t version[MAX_CHUNKS];
    unsigned char *plain; /* scratch: one chunk */
} xfile;

/* Chunk k's plain bytes into f->plain (zeros past what is stored);
 * returns its stored plain length. */
static size_t fetch(xfile *f, size_t k)
{
    xf_chunk at = {f->ino, k, f->version[k]};
    size_t n = 0;
    xf_err err;
    int rc;

    memset(f->plain, 0, f->chunk_size);
    if (!f->stored[k])
        return 0;
    rc = xf_decode(f->c, f->w, &at, f->stored[k], f->stored_len[k], f->plain, f->chunk_size, &n,
                   &err);
    if (rc != 0)
        g_error("fetch: %s", err.msg);
    return n;
}

/* Store f->plain's first n bytes as chunk k (a new version). */
static void store(xfile *f, size_t k, size_t n)
{
    xf_chunk at = {f->ino, k, ++f->version[k]};
    size_t room = xf_encode_room(f->c, n);
    xf_err err;

    g_free(f->stored[k]);
    f->stored[k] = g_malloc(room);
    if (xf_encode(f->c, f->w, &at, f->plain, n, f->stored[k], room, &f->stored_len[k], &err) != 0)
        g_error("store: %s", err.msg);
}

static void drop(xfile *f, size_t k)
{
    g_free(f->stored[k]);
    f->stored[k] = NULL;
}

/* A write, chunk by chunk: a whole chunk is encoded as it comes; a part
 * of one is read-modify-write. */
static void file_write(xfile *f, size_t off, const unsigned char *data, size_t len)
{
    while (len > 0) {
        size_t k = off / f->chunk_size, in = off % f->chunk_size, n = f->chunk_size - in, have;

        if (n > len)
            n = len;
        if (in == 0 && n == f->chunk_size) {
            memcpy(f->plain, data, n);
            store(f, k, n);
        } else {
            have = fetch(f, k);
            memcpy(f->plain + in, data, n);
            store(f, k, in + n > have ? in + n : have);
        }
        off += n;
        data += n;
        len -= n;
    }
    if (off > f->size)
        f->size = off;
}

static void file_read(xfile *f, size_t off, unsigned char *out, size_t len)
{
    while (len > 0) {
        size_t k = off / f->chunk_size, in = off % f->chunk_size, n = f->chunk_size - in;

        if (n > len)
            n = len;
        fetch(f, k);
        memcpy(out, f->plain + in, n);
        off += n;
        out += n;
        len -= n;
    }
}

/* Truncation: chunks past the end go; the last one is cut (RMW). */
static void file_truncate(xfile *f, size_t size)
{
    size_t last = size / f->chunk_size, in = size % f->chunk_size;

    for (size_t k = last + (in ? 1 : 0); k < MAX_CHUNKS; k++)
        drop(f, k);
    if (in && f->stored[last]) {
        size_t have = fetch(f, last);

        if (have > in)
            store(f, last, in);
    }
    f->size = size;
}

/* Every stored chunk re-encoded under chain c. */
static void file_apply(xfile *f, const xf_chain *c)
{
    const xf_chain *old = f->c;

    for (size_t k = 0; k < MAX_CHUNKS; k++) {
        size_t n;

        if (!f->stored[k])
            continue;
        n = fetch(f, k);
        f->c = c;
        store(f, k, n);
        f->c = old;
    }
    f->c = c;
}

static void check_all(xfile *f, const unsigned char *model, unsigned char *buf)
{
    file_read(f, 0, buf, f->size);
    if (memcmp(buf, model, f->size) != 0)
        g_error("'%s': the file differs from the model", xf_chain_text(f->c));
}

static void run_model(xf_env *env, const char *text, const char *apply_to, size_t chunk_size,
                      guint32 seed, int ops)
{
    size_t max = chunk_size * (MAX_CHUNKS - 1);
    unsigned char *model = g_malloc0(max), *buf = g_malloc(max), *data = g_malloc(max);
    GRand *r = g_rand_new_with_seed(seed);
    xfile f = {.c = xt_chain(env, text), .ino = seed, .chunk_size = chunk_size};

    f.plain = g_malloc(chunk_size);
    g_assert_cmpint(xf_work_new(env, &f.w), ==, 0);
    for (int op = 0; op < ops; op++) {
        int what = g_rand_int_range(r, 0, 20);
        size_t off = (size_t)g_rand_int_range(r, 0, (gint32)(max / 2)), len;

        if (what < 12) {
            len = (size_t)g_rand_int_range(r, 1, (gint32)(what < 2 ? 3 * chunk_size : 2000));
            if (what == 0)
                off -= off % chunk_size; /* whole chunks */
            if (off + len > max)
                len = max - off;
            xt_fill(r, (xt_kind)g_rand_int_range(r, 0, XT_KINDS), data, len);
            file_write(&f, off, data, len);
            memcpy(model + off, data, len);
        } else if (what < 17) {
            size_t end = f.size + 100;

            off = (size_t)g_rand_int_range(r, 0, (gint32)end);
            len = (size_t)g_rand_int_range(r, 0, (gint32)(end - off + 1));
            if (off + len > max)
                len = max - off;
            file_read(&f, off, buf, len);
            if (memcmp(buf, model + off, len) != 0)
                g_error("'%s' op %d: read %zu@%zu differs from the model", text, op, len, off);
        } else if (what < 19) {
            size_t size = (size_t)g_rand_int_range(r, 0, (gint32)(max / 2));

            if (size < f.size)
                memset(model + size, 0, f.size - size);
            file_truncate(&f, size);
        } else {
            check_all(&f, model, buf);
        }
    }
    check_all(&f, model, buf);
    if (apply_to) {
        file_apply(&f, xt_chain(env, apply_to));
        check_all(&f, model, buf);
    }
    for (size_t k = 0; k < MAX_CHUNKS; k++)
        drop(&f, k);
    xf_work_free(f.w);
    g_free(f.plain);
    g_free(model);
    g_free(buf);
    g_free(data);
    g_rand_free(r);
}

static void test_builtins(void)
{
    static const char *const chains[] = {"identity",    "increment", "zstd",           "lz4",
                                         "aes-256-gcm", "sha256",    "uincrement:by=9"};
    xf_env *env = xt_env(true, true);

    for (size_t i = 0; i < G_N_ELEMENTS(chains); i++) {
        run_model(env, chains[i], NULL, 4096, (guint32)(50 + i), 1500);
        run_model(env, chains[i], NULL, 65536, (guint32)(60 + i), 300);
    }
    xf_env_free(env);
}

static void test_chains(void)
{
    xf_env *env = xt_env(true, true);

    run_model(env, "zstd,aes-256-gcm", "sha256,lz4", 4096, 70, 1500);
    run_model(env, "zstd,aes-256-gcm,sha256", "identity", 65536, 71, 300);
    run_model(env, "increment,lz4,trailer,aes-256-gcm", "zstd:level=9", 4096, 72, 1500);
    run_model(env, "identity,identity,identity,identity,identity", "increment,increment", 4096, 73,
              800);
    xf_env_free(env);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/xform/model/builtins", test_builtins);
    g_test_add_func("/xform/model/chains", test_chains);
    return g_test_run();
}
