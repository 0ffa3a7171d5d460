/*
 * test_integrity.c -- file data survives random writes, truncations and
 * reads, compared byte for byte with an in-memory model, and a server
 * restart.
 *
 * Writes have random sizes (1 byte to 1 MiB, split at the server's wtmax)
 * at random offsets: unaligned, straddling 8 KiB chunk boundaries, beyond
 * the end (leaving holes), extending. SETATTR shrinks and extends. After
 * every step the changed range and one random range are read back; every
 * STEPS_PER_FULL steps, and at the end, the whole file.
 *
 * A crash (SIGKILL) keeps what was written FILE_SYNC or committed, and
 * changes the write verifier.
 *
 * The run is deterministic for a seed: PGNFS_TEST_SEED overrides the fixed
 * default, and every failure message names the seed and the step.
 */
#include <stdlib.h>
#include <string.h>

#include "ptest.h"

enum {
    CHUNK = 8192,
    FILE_SPAN = 12 * 1024 * 1024, /* offsets stay below this */
    MAX_WRITE = 1024 * 1024,
    STEPS = 800,
    STEPS_PER_FULL = 40,
};
static const guint32 DEFAULT_SEED = 20261122;

typedef struct {
    guint32 seed;
    GRand *rand;
    int step;
    unsigned char *data; /* the model: FILE_SPAN + MAX_WRITE bytes */
    uint64_t size;
    uint32_t rtmax, wtmax;
    nr_ctx *c;
    nr_fh fh;
    char verf[NFS3_WRITEVERFSIZE];
    bool have_verf;
    uint64_t written, read; /* bytes, for the log */
} model;

static void fail(const model *m, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void fail(const model *m, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    char *msg = g_strdup_printf("seed %u (set PGNFS_TEST_SEED=%u to repeat), step %d: %s", m->seed,
                                m->seed, m->step, what);
    g_assertion_message("pgnfs-test", __FILE__, __LINE__, G_STRFUNC, msg);
    g_free(msg);
    g_free(what);
}

static uint64_t rnd(model *m, uint64_t n) /* 0 .. n-1 */
{
    return n <= 1 ? 0 : (uint64_t)(g_rand_double(m->rand) * (double)n) % n;
}

/* A write size: mostly small, sometimes large, 1 .. MAX_WRITE. */
static uint32_t pick_size(model *m)
{
    uint64_t r = rnd(m, 100);

    if (r < 45)
        return 1 + (uint32_t)rnd(m, 3 * CHUNK);
    if (r < 85)
        return 1 + (uint32_t)rnd(m, 256 * 1024);
    return 1 + (uint32_t)rnd(m, MAX_WRITE);
}

/* An offset: anywhere, near a chunk boundary, at or beyond the end. */
static uint64_t pick_offset(model *m, uint32_t len)
{
    uint64_t r = rnd(m, 100);
    uint64_t off;

    if (r < 35) {
        off = rnd(m, FILE_SPAN);
    } else if (r < 65) {
        uint64_t boundary = CHUNK * (1 + rnd(m, FILE_SPAN / CHUNK - 1));
        off = boundary - 1 - rnd(m, len < 64 ? len : 64);
    } else if (r < 85) {
        off = m->size + rnd(m, 3 * CHUNK); /* extend, maybe leaving a hole */
    } else {
        off = m->size > 0 ? rnd(m, m->size) : 0; /* inside the data */
    }
    if (off + len > FILE_SPAN)
        off = FILE_SPAN - len;
    return off;
}

static void check_range(model *m, uint64_t off, uint32_t len)
{
    READ3res res;

    while (len > 0) {
        uint32_t n = len < m->rtmax ? len : m->rtmax;
        int st = nr_read(m->c, &m->fh, off, n, &res);
        if (st != NFS3_OK)
            fail(m, "READ %u at %" G_GUINT64_FORMAT ": %s %s", n, off, nr_stat_name(st),
                 nr_error(m->c));
        const READ3resok *ok = &res.READ3res_u.resok;
        uint64_t expect = off >= m->size ? 0 : MIN((uint64_t)n, m->size - off);
        if (ok->count != expect || ok->data.data_len != expect)
            fail(m,
                 "READ %u at %" G_GUINT64_FORMAT " (size %" G_GUINT64_FORMAT
                 "): count %u, data %u, expected %" G_GUINT64_FORMAT,
                 n, off, m->size, ok->count, ok->data.data_len, expect);
        bool eof = off + expect >= m->size;
        if ((bool)ok->eof != eof)
            fail(m, "READ %u at %" G_GUINT64_FORMAT " (size %" G_GUINT64_FORMAT "): eof %d", n, off,
                 m->size, (int)ok->eof);
        if (memcmp(ok->data.data_val, m->data + off, expect) != 0) {
            uint64_t i = 0;
            while (ok->data.data_val[i] == (char)m->data[off + i])
                i++;
            fail(m,
                 "READ %u at %" G_GUINT64_FORMAT ": first difference at byte %" G_GUINT64_FORMAT
                 " (chunk %" G_GUINT64_FORMAT " + %" G_GUINT64_FORMAT "): got 0x%02x, "
                 "expected 0x%02x",
                 n, off, off + i, (off + i) / CHUNK, (off + i) % CHUNK,
                 (unsigned char)ok->data.data_val[i], m->data[off + i]);
        }
        m->read += expect;
        nr_arena_clear(m->c);
        if (expect < n)
            return;
        off += n;
        len -= n;
    }
}

static void check_size(model *m)
{
    fattr3 a = pt_getattr(m->c, &m->fh);

    if (a.size != m->size)
        fail(m, "size %" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT, (uint64_t)a.size,
             m->size);
}

static void check_all(model *m)
{
    check_size(m);
    check_range(m, 0, (uint32_t)m->size + 1);
}

static void do_write(model *m, uint64_t off, uint32_t len)
{
    static const stable_how hows[] = {UNSTABLE, DATA_SYNC, FILE_SYNC};
    stable_how how = hows[rnd(m, 3)];

    for (uint32_t i = 0; i < len; i++)
        m->data[off + i] = (unsigned char)g_rand_int(m->rand);
    for (uint32_t done = 0; done < len;) {
        uint32_t n = MIN(len - done, m->wtmax);
        WRITE3res res;
        int st = nr_write(m->c, &m->fh, off + done, m->data + off + done, n, how, &res);
        if (st != NFS3_OK)
            fail(m, "WRITE %u at %" G_GUINT64_FORMAT ": %s %s", n, off + done, nr_stat_name(st),
                 nr_error(m->c));
        const WRITE3resok *ok = &res.WRITE3res_u.resok;
        /* A short write is legal; the rest is sent again. */
        if (ok->count == 0 || ok->count > n)
            fail(m, "WRITE %u at %" G_GUINT64_FORMAT ": count %u", n, off + done, ok->count);
        if ((int)ok->committed < (int)how)
            fail(m, "WRITE asked for stability %d and got %d", how, ok->committed);
        if (m->have_verf && memcmp(m->verf, ok->verf, sizeof m->verf) != 0)
            fail(m, "the write verifier changed without a restart");
        memcpy(m->verf, ok->verf, sizeof m->verf);
        m->have_verf = true;
        done += ok->count;
        m->written += ok->count;
    }
    if (off + len > m->size)
        m->size = off + len;
}

static void do_truncate(model *m, uint64_t size)
{
    sattr3 sa = nr_sattr_none();

    sa.size.set_it = 1;
    sa.size.set_size3_u.size = size;
    int st = nr_setattr(m->c, &m->fh, &sa, NULL, NULL);
    if (st != NFS3_OK)
        fail(m, "SETATTR size %" G_GUINT64_FORMAT ": %s %s", size, nr_stat_name(st),
             nr_error(m->c));
    if (size < m->size)
        memset(m->data + size, 0, m->size - size);
    m->size = size;
}

static void do_commit(model *m)
{
    COMMIT3res res;
    int st = nr_commit(m->c, &m->fh, 0, 0, &res);

    if (st != NFS3_OK)
        fail(m, "COMMIT: %s %s", nr_stat_name(st), nr_error(m->c));
    if (m->have_verf && memcmp(m->verf, res.COMMIT3res_u.resok.verf, sizeof m->verf) != 0)
        fail(m, "COMMIT verifier differs from WRITE's");
}

static void test_random_io(void)
{
    model m = {0};
    const char *env = getenv("PGNFS_TEST_SEED");
    FSINFO3res fi;

    m.seed = env && *env ? (guint32)strtoul(env, NULL, 0) : DEFAULT_SEED;
    g_test_message("seed %u (PGNFS_TEST_SEED overrides)", m.seed);
    m.rand = g_rand_new_with_seed(m.seed);
    m.data = g_malloc0(FILE_SPAN + MAX_WRITE);
    m.c = pt_open(&pt_owner);
    pt_ok(m.c, nr_fsinfo(m.c, &pt.root, &fi));
    m.rtmax = MIN(fi.FSINFO3res_u.resok.rtmax, (uint32_t)MAX_WRITE);
    m.wtmax = MIN(fi.FSINFO3res_u.resok.wtmax, (uint32_t)MAX_WRITE);
    nr_fh dir = pt_fresh_dir();
    m.fh = pt_create(m.c, &dir, "data", 0644);

    for (m.step = 1; m.step <= STEPS; m.step++) {
        uint64_t r = rnd(&m, 100);
        if (r < 88) {
            uint32_t len = pick_size(&m);
            uint64_t off = pick_offset(&m, len);
            do_write(&m, off, len);
            /* The written range with a chunk of margin each side. */
            uint64_t from = off > CHUNK ? off - CHUNK : 0;
            check_range(&m, from, (uint32_t)(off + len + CHUNK - from));
        } else if (r < 97) {
            uint64_t size = r < 93 ? rnd(&m, m.size + 1) : m.size + rnd(&m, 4 * CHUNK) + 1;
            size = MIN(size, (uint64_t)FILE_SPAN);
            do_truncate(&m, size);
            check_size(&m);
            uint64_t from = size > 2 * CHUNK ? size - 2 * CHUNK : 0;
            check_range(&m, from, 4 * CHUNK);
        } else {
            do_commit(&m);
        }
        uint64_t roff = rnd(&m, m.size + CHUNK);
        check_range(&m, roff, 1 + (uint32_t)rnd(&m, MAX_WRITE));
        if (m.step % STEPS_PER_FULL == 0)
            check_all(&m);
    }
    m.step = STEPS + 1;
    check_all(&m);
    g_test_message("%d steps: %" G_GUINT64_FORMAT " MB written, %" G_GUINT64_FORMAT
                   " MB read, final size %" G_GUINT64_FORMAT,
                   STEPS, m.written >> 20, m.read >> 20, m.size);

    /* Make everything durable, restart, compare again. */
    do_commit(&m);
    nr_close(m.c);
    if (pt_restart()) {
        m.c = pt_open(&pt_owner);
        m.step = STEPS + 2;
        check_all(&m);
        /* The write verifier changed with the restart. */
        WRITE3res res;
        pt_ok(m.c, nr_write(m.c, &m.fh, 0, m.data, 1, UNSTABLE, &res));
        if (memcmp(res.WRITE3res_u.resok.verf, m.verf, sizeof m.verf) == 0)
            fail(&m, "the write verifier did not change across a restart");
        nr_close(m.c);
    } else {
        g_test_message("no restart: not our server (PGNFS_TEST_NFS_PORT)");
    }
    g_rand_free(m.rand);
    g_free(m.data);
}

/* Sparse files: far holes read as zeros and cost no storage. */
static void test_sparse(void)
{
    nr_ctx *c = pt_open(&pt_owner);
    nr_fh dir = pt_fresh_dir();
    nr_fh f = pt_create(c, &dir, "sparse", 0644);
    const uint64_t far = (uint64_t)1 << 40; /* 1 TiB */
    READ3res res;

    pt_write(c, &f, far, "end", 3);
    fattr3 a = pt_getattr(c, &f);
    g_assert_cmpuint(a.size, ==, far + 3);
    pt_ok(c, nr_read(c, &f, far - 5000, 5003, &res));
    g_assert_cmpuint(res.READ3res_u.resok.count, ==, 5003);
    g_assert_true(res.READ3res_u.resok.eof);
    for (int i = 0; i < 5000; i++)
        g_assert_cmpint(res.READ3res_u.resok.data.data_val[i], ==, 0);
    g_assert_cmpmem(res.READ3res_u.resok.data.data_val + 5000, 3, "end", 3);
    pt_ok(c, nr_read(c, &f, 12345, 100, &res));
    g_assert_cmpuint(res.READ3res_u.resok.count, ==, 100);
    g_assert_false(res.READ3res_u.resok.eof);

    /* Shrinking to the middle of a chunk and growing again gives zeros. */
    /* The 1 TiB hole takes no space: "used" counts what is stored. */
    g_assert_cmpuint(pt_getattr(c, &f).used, <, 1024 * 1024);

    f = pt_create(c, &dir, "shrink", 0644);
    pt_write(c, &f, 0, "abcdefghijklmnopqrstuvwxyz", 26);
    sattr3 sa = nr_sattr_none();
    sa.size.set_it = 1;
    sa.size.set_size3_u.size = 10;
    pt_ok(c, nr_setattr(c, &f, &sa, NULL, NULL));
    sa.size.set_size3_u.size = 26;
    pt_ok(c, nr_setattr(c, &f, &sa, NULL, NULL));
    pt_ok(c, nr_read(c, &f, 0, 100, &res));
    g_assert_cmpuint(res.READ3res_u.resok.count, ==, 26);
    g_assert_cmpmem(res.READ3res_u.resok.data.data_val, 10, "abcdefghij", 10);
    for (int i = 10; i < 26; i++)
        g_assert_cmpint(res.READ3res_u.resok.data.data_val[i], ==, 0);
    nr_close(c);
}

/*
 * After a crash (SIGKILL), stable data is there, and the write verifier
 * has changed, so a client knows to resend its UNSTABLE writes.
 */
static void test_crash(void)
{
    nr_ctx *c = pt_open(&pt_owner);
    nr_fh dir = pt_fresh_dir();
    nr_fh f = pt_create(c, &dir, "crash", 0644);
    enum { N = 3 * CHUNK + 100 };
    unsigned char *stable = g_malloc(N), *committed = g_malloc(N), *unstable = g_malloc(N);
    WRITE3res w;
    COMMIT3res cm;
    READ3res r;

    for (int i = 0; i < N; i++) {
        stable[i] = (unsigned char)(i * 13);
        committed[i] = (unsigned char)(i * 17 + 1);
        unstable[i] = (unsigned char)(i * 19 + 2);
    }
    pt_ok(c, nr_write(c, &f, 0, stable, N, FILE_SYNC, &w));
    g_assert_cmpint(w.WRITE3res_u.resok.committed, ==, FILE_SYNC);
    pt_ok(c, nr_write(c, &f, N, committed, N, UNSTABLE, &w));
    pt_ok(c, nr_commit(c, &f, N, N, &cm));
    char verf[NFS3_WRITEVERFSIZE];
    memcpy(verf, cm.COMMIT3res_u.resok.verf, sizeof verf);
    g_assert_cmpmem(verf, sizeof verf, w.WRITE3res_u.resok.verf, sizeof verf);
    pt_ok(c, nr_write(c, &f, 2 * N, unstable, N, UNSTABLE, &w));
    nr_close(c);

    if (!pt.server) {
        g_test_skip("not our server (PGNFS_TEST_NFS_PORT): cannot crash it");
        goto out;
    }
    tl_server_crash_restart(pt.server);
    c = pt_open(&pt_owner);
    pt_ok(c, nr_read(c, &f, 0, 2 * N, &r));
    g_assert_cmpuint(r.READ3res_u.resok.count, ==, 2 * N);
    g_assert_cmpmem(r.READ3res_u.resok.data.data_val, N, stable, N);
    g_assert_cmpmem(r.READ3res_u.resok.data.data_val + N, N, committed, N);
    /* The UNSTABLE data may be lost; if so, the verifier says it. */
    pt_ok(c, nr_commit(c, &f, 0, 0, &cm));
    g_assert_true(memcmp(cm.COMMIT3res_u.resok.verf, verf, sizeof verf) != 0);
    nr_close(c);
out:
    g_free(stable);
    g_free(committed);
    g_free(unstable);
}

int main(int argc, char **argv)
{
    pt_init(&argc, &argv);
    pt_add_inproc("/integrity/random_io", test_random_io);
    pt_add_inproc("/integrity/crash", test_crash);
    pt_add("/integrity/sparse", test_sparse);
    return pt_run();
}
