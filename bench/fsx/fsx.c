/*
 * fsx.c -- pgnfs_fsx, an fsx-style file-system exerciser over libnfs's raw
 * NFSv3 calls (after the fsx of NeXT/Apple and the Linux test suites):
 * random reads, writes (UNSTABLE, DATA_SYNC, FILE_SYNC), COMMITs,
 * truncations and extensions of one file, each checked against an
 * in-memory model, and whole-file compares at intervals and at the end.
 * Writes land anywhere below the largest size, so they overwrite, extend
 * the file at its end and extend it past its end (the gap must read as
 * zeros); SETATTR of the size shrinks and extends it (likewise). The
 * summary counts each kind, so a run shows it exercised all of them.
 * Every WRITE and COMMIT reply must carry the same write verifier: the
 * server does not restart during a run, so a change would mean UNSTABLE
 * data the model counts on may have been dropped (RFC 1813 3.3.7).
 *
 *   pgnfs_fsx [-N ops] [-S seed] [-l maxlen] [-o maxoplen] [-c compare_every]
 *             [-r reconnect_every] [-p progress_every] [-P port] [-q]
 *
 *   -N  operations (default 10000)          -S  seed (default: the time)
 *   -l  largest file size (default 262144)  -o  largest read/write (65536)
 *   -c  whole-file compare every N ops (1000; 0 = only at the end)
 *   -r  new connection every N ops (500; 0 = never)
 *   -p  a progress line every N ops (0 = none); "progress OPS SECONDS OPS/S"
 *   -P  use the NFS server already on 127.0.0.1:PORT (export "/", NFS and
 *       MOUNT on that port) instead of starting one (pgnfs serve from this
 *       build, PGNFS_TEST_SERVER_SET applies, see tests/lib/testlib.h)
 *
 * The sequence of operations depends on the seed and the options only,
 * never on the server's answers: the same command repeats a run exactly.
 * On the first disagreement it prints the seed, the operation number, the
 * last 64 operations and the bytes that differ, and exits 1. Exit 0: every
 * check passed; 2: bad usage or no server.
 *
 * NOTES
 *   Single-threaded; the model, the operation log and the buffers are
 *   this program's (freed at exit).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "nfsraw.h"
#include "testlib.h"

#define FSX_LOG 64

typedef enum {
    OP_READ,
    OP_WRITE,
    OP_TRUNCATE,
    OP_COMMIT,
    OP_GETATTR,
    OP_COMPARE,
    OP_RECONNECT
} fsx_opk;

static const char *const fsx_opnames[] = {"READ",    "WRITE",   "TRUNCATE", "COMMIT",
                                          "GETATTR", "COMPARE", "RECONNECT"};

typedef struct {
    unsigned long n;
    fsx_opk kind;
    uint64_t off, len;
    int how;
    bool reconnected; /* a new connection was made just before */
    uint64_t size_before;
} fsx_logent;

typedef struct {
    /* options */
    unsigned long nops;
    uint64_t seed, maxlen, maxoplen;
    unsigned long compare_every, reconnect_every, progress_every;
    unsigned port;
    bool quiet;
    /* state */
    uint64_t rng;
    unsigned char *model, *buf;
    uint64_t size;
    nr_ctx *ctx;
    nr_fh fh;
    char verf[NFS3_WRITEVERFSIZE]; /* the first reply's write verifier */
    bool have_verf;
    fsx_logent log[FSX_LOG];
    unsigned long opno;
    /* counters */
    unsigned long counts[7];
    unsigned long write_extends, write_holes, trunc_shrinks, trunc_extends;
    uint64_t bytes_written, bytes_read, bytes_verified;
} fsx;

static uint64_t fsx_rand(fsx *f)
{
    f->rng ^= f->rng >> 12;
    f->rng ^= f->rng << 25;
    f->rng ^= f->rng >> 27;
    return f->rng * 0x2545f4914f6cdd1dull;
}

static uint64_t fsx_below(fsx *f, uint64_t n)
{
    return n ? fsx_rand(f) % n : 0;
}

static void fsx_dump_log(const fsx *f)
{
    fprintf(stderr, "fsx: the last operations (newest last):\n");
    unsigned long first = f->opno >= FSX_LOG ? f->opno - FSX_LOG + 1 : 1;
    for (unsigned long n = first; n <= f->opno; n++) {
        const fsx_logent *e = &f->log[n % FSX_LOG];
        if (e->n != n)
            continue;
        fprintf(stderr, "  %7lu %-9s off %8llu len %6llu", e->n, fsx_opnames[e->kind],
                (unsigned long long)e->off, (unsigned long long)e->len);
        if (e->kind == OP_WRITE)
            fprintf(stderr, " stable %d", e->how);
        fprintf(stderr, " (size was %llu)%s\n", (unsigned long long)e->size_before,
                e->reconnected ? " on a new connection" : "");
    }
}

static void G_GNUC_PRINTF(2, 3) fsx_fail(const fsx *f, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "fsx: FAILED at operation %lu (seed %llu): ", f->opno,
            (unsigned long long)f->seed);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fsx_dump_log(f);
    fprintf(stderr, "fsx: repeat with: pgnfs_fsx -N %lu -S %llu -l %llu -o %llu -c %lu -r %lu\n",
            f->nops, (unsigned long long)f->seed, (unsigned long long)f->maxlen,
            (unsigned long long)f->maxoplen, f->compare_every, f->reconnect_every);
    exit(1);
}

/* Compare got[0..n) with the model at off; report the first difference. */
static void fsx_check_bytes(fsx *f, uint64_t off, const unsigned char *got, uint64_t n,
                            const char *what)
{
    for (uint64_t i = 0; i < n; i++) {
        if (got[i] != f->model[off + i]) {
            uint64_t end = i;
            while (end < n && got[end] != f->model[off + end])
                end++;
            fsx_fail(f,
                     "%s: byte %llu is 0x%02x, the model says 0x%02x (%llu bytes differ from "
                     "there)",
                     what, (unsigned long long)(off + i), got[i], f->model[off + i],
                     (unsigned long long)(end - i));
        }
    }
    f->bytes_verified += n;
}

static void fsx_connect(fsx *f)
{
    nr_close(f->ctx);
    f->ctx = nr_open(f->port, NULL);
    if (!f->ctx)
        fsx_fail(f, "cannot connect to 127.0.0.1:%u", f->port);
}

static int fsx_call_status(fsx *f, int st, const char *what)
{
    if (st != NFS3_OK)
        fsx_fail(f, "%s answered %s (%s)", what, nr_stat_name(st),
                 st == NR_RPC_FAILED ? nr_error(f->ctx) : "");
    return st;
}

/* Read [off, off+len) and compare with the model (zeros past its end). */
static void fsx_read(fsx *f, uint64_t off, uint64_t len, const char *what)
{
    READ3res rd;

    fsx_call_status(f, nr_read(f->ctx, &f->fh, off, (uint32_t)len, &rd), what);
    uint64_t want = off >= f->size ? 0 : MIN(len, f->size - off);
    uint32_t got = rd.READ3res_u.resok.count;
    if (got != want || rd.READ3res_u.resok.data.data_len != got)
        fsx_fail(f, "%s of %llu bytes at %llu returned %u bytes, the file has %llu: expected %llu",
                 what, (unsigned long long)len, (unsigned long long)off, got,
                 (unsigned long long)f->size, (unsigned long long)want);
    bool eof = off + got >= f->size;
    if ((bool)rd.READ3res_u.resok.eof != eof)
        fsx_fail(f, "%s at %llu: eof %d, expected %d", what, (unsigned long long)off,
                 rd.READ3res_u.resok.eof, eof);
    fsx_check_bytes(f, off, (const unsigned char *)rd.READ3res_u.resok.data.data_val, got, what);
    f->bytes_read += got;
    nr_arena_clear(f->ctx);
}

static void fsx_compare_all(fsx *f)
{
    GETATTR3res ga;

    fsx_call_status(f, nr_getattr(f->ctx, &f->fh, &ga), "GETATTR");
    if (ga.GETATTR3res_u.resok.obj_attributes.size != f->size)
        fsx_fail(f, "the file has %llu bytes, the model %llu",
                 (unsigned long long)ga.GETATTR3res_u.resok.obj_attributes.size,
                 (unsigned long long)f->size);
    for (uint64_t off = 0; off < f->size; off += f->maxoplen)
        fsx_read(f, off, MIN(f->maxoplen, f->size - off), "COMPARE");
}

/* A WRITE's or COMMIT's verifier must be the run's first one. */
static void fsx_check_verf(fsx *f, const char *verf, const char *what)
{
    if (!f->have_verf) {
        memcpy(f->verf, verf, sizeof f->verf);
        f->have_verf = true;
    } else if (memcmp(f->verf, verf, sizeof f->verf) != 0) {
        fsx_fail(f, "%s: the write verifier changed during the run (the server restarted?)", what);
    }
}

/* The post-operation size in wcc data must be the model's. */
static void fsx_check_wcc(fsx *f, const wcc_data *w, const char *what)
{
    if (w->after.attributes_follow && w->after.post_op_attr_u.attributes.size != f->size)
        fsx_fail(f, "%s: the reply's post-operation size is %llu, the model's %llu", what,
                 (unsigned long long)w->after.post_op_attr_u.attributes.size,
                 (unsigned long long)f->size);
}

static void fsx_one(fsx *f)
{
    fsx_logent *e = &f->log[f->opno % FSX_LOG];
    uint64_t r = fsx_below(f, 100);

    memset(e, 0, sizeof *e);
    e->n = f->opno;
    e->size_before = f->size;
    /* A new connection comes before the operation, not instead of it, so
     * that it never takes the place of a whole-file compare. */
    if (f->reconnect_every && f->opno % f->reconnect_every == 0) {
        fsx_connect(f);
        f->counts[OP_RECONNECT]++;
        e->reconnected = true;
    }
    if (f->compare_every && f->opno % f->compare_every == 0)
        e->kind = OP_COMPARE;
    else if (r < 35)
        e->kind = OP_READ;
    else if (r < 75)
        e->kind = OP_WRITE;
    else if (r < 87)
        e->kind = OP_TRUNCATE;
    else if (r < 95)
        e->kind = OP_COMMIT;
    else
        e->kind = OP_GETATTR;
    f->counts[e->kind]++;

    switch (e->kind) {
    case OP_READ:
        /* Mostly inside the file, sometimes across or past its end. */
        e->off = fsx_below(f, (f->size ? f->size : 1) + f->maxoplen / 4);
        e->len = 1 + fsx_below(f, f->maxoplen);
        fsx_read(f, e->off, e->len, "READ");
        break;
    case OP_WRITE: {
        e->off = fsx_below(f, f->maxlen);
        e->len = 1 + fsx_below(f, MIN(f->maxoplen, f->maxlen - e->off));
        static const stable_how hows[] = {UNSTABLE, DATA_SYNC, FILE_SYNC};
        e->how = hows[fsx_below(f, 3)];
        for (uint64_t i = 0; i < e->len; i++)
            f->buf[i] = (unsigned char)(fsx_rand(f) >> 32);
        WRITE3res w;
        fsx_call_status(
            f, nr_write(f->ctx, &f->fh, e->off, f->buf, (uint32_t)e->len, (stable_how)e->how, &w),
            "WRITE");
        if (w.WRITE3res_u.resok.count != e->len)
            fsx_fail(f, "WRITE of %llu bytes wrote %u", (unsigned long long)e->len,
                     w.WRITE3res_u.resok.count);
        if ((int)w.WRITE3res_u.resok.committed < e->how)
            fsx_fail(f, "WRITE asked stability %d, got %d", e->how, w.WRITE3res_u.resok.committed);
        /* A gap between the old end and the write reads as zeros. */
        if (e->off > f->size)
            memset(f->model + f->size, 0, e->off - f->size);
        memcpy(f->model + e->off, f->buf, e->len);
        f->write_extends += e->off + e->len > f->size;
        f->write_holes += e->off > f->size;
        f->size = MAX(f->size, e->off + e->len);
        f->bytes_written += e->len;
        fsx_check_wcc(f, &w.WRITE3res_u.resok.file_wcc, "WRITE");
        fsx_check_verf(f, w.WRITE3res_u.resok.verf, "WRITE");
        break;
    }
    case OP_TRUNCATE: {
        /* Shrink, or extend (a hole), to anywhere up to maxlen. */
        e->off = fsx_below(f, f->maxlen + 1);
        sattr3 sa = nr_sattr_none();
        SETATTR3res res;
        sa.size.set_it = 1;
        sa.size.set_size3_u.size = e->off;
        fsx_call_status(f, nr_setattr(f->ctx, &f->fh, &sa, NULL, &res), "TRUNCATE");
        if (e->off > f->size)
            memset(f->model + f->size, 0, e->off - f->size);
        f->trunc_shrinks += e->off < f->size;
        f->trunc_extends += e->off > f->size;
        f->size = e->off;
        fsx_check_wcc(f, &res.SETATTR3res_u.resok.obj_wcc, "TRUNCATE");
        break;
    }
    case OP_COMMIT: {
        COMMIT3res res;
        fsx_call_status(f, nr_commit(f->ctx, &f->fh, 0, 0, &res), "COMMIT");
        fsx_check_verf(f, res.COMMIT3res_u.resok.verf, "COMMIT");
        break;
    }
    case OP_GETATTR: {
        GETATTR3res ga;
        fsx_call_status(f, nr_getattr(f->ctx, &f->fh, &ga), "GETATTR");
        if (ga.GETATTR3res_u.resok.obj_attributes.size != f->size)
            fsx_fail(f, "GETATTR size %llu, the model's %llu",
                     (unsigned long long)ga.GETATTR3res_u.resok.obj_attributes.size,
                     (unsigned long long)f->size);
        break;
    }
    case OP_COMPARE:
        fsx_compare_all(f);
        break;
    case OP_RECONNECT: /* done above */
        break;
    }
}

static void fsx_usage(void)
{
    fprintf(stderr, "usage: pgnfs_fsx [-N ops] [-S seed] [-l maxlen] [-o maxoplen] "
                    "[-c compare_every] [-r reconnect_every] [-p progress_every] [-P port] "
                    "[-q]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    fsx f = {
        .nops = 10000,
        .seed = (uint64_t)g_get_real_time(),
        .maxlen = 256 * 1024,
        .maxoplen = 64 * 1024,
        .compare_every = 1000,
        .reconnect_every = 500,
    };
    tl_server *server = NULL;
    int opt;

    while ((opt = getopt(argc, argv, "N:S:l:o:c:r:p:P:q")) != -1) {
        switch (opt) {
        case 'N':
            f.nops = strtoul(optarg, NULL, 10);
            break;
        case 'S':
            f.seed = strtoull(optarg, NULL, 10);
            break;
        case 'l':
            f.maxlen = strtoull(optarg, NULL, 10);
            break;
        case 'o':
            f.maxoplen = strtoull(optarg, NULL, 10);
            break;
        case 'c':
            f.compare_every = strtoul(optarg, NULL, 10);
            break;
        case 'r':
            f.reconnect_every = strtoul(optarg, NULL, 10);
            break;
        case 'p':
            f.progress_every = strtoul(optarg, NULL, 10);
            break;
        case 'P':
            f.port = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'q':
            f.quiet = true;
            break;
        default:
            fsx_usage();
        }
    }
    if (optind != argc || f.maxlen == 0 || f.maxoplen == 0 || f.maxoplen > 1024 * 1024)
        fsx_usage();
    f.rng = f.seed ? f.seed : 1;
    f.model = g_malloc0(f.maxlen + f.maxoplen);
    f.buf = g_malloc(f.maxoplen);
    if (!f.quiet)
        printf("fsx: seed %llu, %lu operations, file up to %llu bytes, operations up to %llu\n",
               (unsigned long long)f.seed, f.nops, (unsigned long long)f.maxlen,
               (unsigned long long)f.maxoplen);
    if (!f.port) {
        server = tl_server_start(NULL);
        f.port = tl_server_port(server);
    }

    /* A fresh file in the export's root. */
    nr_ctx *m = nr_open(f.port, NULL);
    nr_fh root;
    if (!m || nr_mnt(m, "/", NULL, &root) != MNT3_OK) {
        fprintf(stderr, "fsx: cannot mount / on 127.0.0.1:%u\n", f.port);
        return 2;
    }
    nr_close(m);
    fsx_connect(&f);
    char name[64];
    snprintf(name, sizeof name, "fsx-%d-%llu", (int)getpid(), (unsigned long long)f.seed);
    CREATE3res cr;
    sattr3 sa = nr_sattr_mode(0644);
    fsx_call_status(&f, nr_create(f.ctx, &root, name, GUARDED, &sa, NULL, &cr), "CREATE");
    f.fh = nr_fh_from(&cr.CREATE3res_u.resok.obj.post_op_fh3_u.handle);

    gint64 t0 = g_get_monotonic_time();
    for (f.opno = 1; f.opno <= f.nops; f.opno++) {
        fsx_one(&f);
        if (f.progress_every && f.opno % f.progress_every == 0) {
            double s = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
            printf("progress %lu %.1f %.0f\n", f.opno, s, (double)f.opno / s);
            fflush(stdout);
        }
    }
    f.opno = f.nops;
    fsx_compare_all(&f);
    double secs = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
    printf("fsx: %lu operations in %.1f s (%.0f/s): read %lu, write %lu, truncate %lu, commit %lu, "
           "getattr %lu, compare %lu, reconnect %lu; writes extending %lu (past the end %lu), "
           "truncates shrinking %lu, extending %lu; %llu bytes written, %llu read, %llu "
           "verified; no difference (seed %llu)\n",
           f.nops, secs, (double)f.nops / secs, f.counts[OP_READ], f.counts[OP_WRITE],
           f.counts[OP_TRUNCATE], f.counts[OP_COMMIT], f.counts[OP_GETATTR], f.counts[OP_COMPARE],
           f.counts[OP_RECONNECT], f.write_extends, f.write_holes, f.trunc_shrinks, f.trunc_extends,
           (unsigned long long)f.bytes_written, (unsigned long long)f.bytes_read,
           (unsigned long long)f.bytes_verified, (unsigned long long)f.seed);
    nr_remove(f.ctx, &root, name, NULL);
    nr_close(f.ctx);
    if (server)
        tl_server_stop(server);
    g_free(f.model);
    g_free(f.buf);
    return 0;
}
