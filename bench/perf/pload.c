/*
 * pload.c -- the load generator of the performance benchmarks
 * (bench/perf/run): NFSv3 workloads driven through libnfs's raw
 * asynchronous RPC API, so that several calls are in flight on one
 * connection, with one connection (and one thread) per simulated client.
 *
 *   pload URL seqwrite [--name F] [--size N] [--io N] [--depth N] [--stable S]
 *       create F (UNCHECKED, size 0) and write SIZE bytes in IO-byte WRITEs,
 *       DEPTH in flight, then COMMIT the file (as a kernel client does at
 *       close); phase "write"
 *   pload URL seqread [--name F] [--io N] [--depth N]
 *       LOOKUP F and READ it whole, DEPTH in flight, checking the data;
 *       phase "read"
 *   pload URL churn [--clients N] [--seconds S] [--size N]
 *       each client in a directory of its own: CREATE, WRITE SIZE bytes
 *       UNSTABLE, COMMIT (close), GETATTR (stat), REMOVE, one file after the
 *       other for S seconds; phase "churn"
 *   pload URL meta [--entries N] [--seconds S] [--depth N] [--ops LIST]
 *       a directory of N files, then S seconds of each of getattr, lookup,
 *       readdirplus (whole listings), rename, setattr (phases of those
 *       names), DEPTH in flight
 *   pload URL proxy [--clients N] [--objects N] [--requests N] [--warmup N]
 *                   [--budget N | --budget-frac F] [--zipf A] [--median N]
 *                   [--sigma F] [--tail F] [--alpha F] [--tail-min N] [--cap N]
 *       a web proxy cache after the Hummingbird paper: a catalogue of
 *       objects with heavy-tailed sizes (lognormal body around the median,
 *       a Pareto tail, capped), requested with Zipf popularity; a miss
 *       writes the object (CREATE, WRITE, COMMIT), a hit reads it (LOOKUP,
 *       READ), and the oldest objects are removed while the cached bytes
 *       exceed the budget; WARMUP requests fill the cache, then phase
 *       "proxy" times REQUESTS more
 *   common: [--seed N] [--hook CMD] [--dir NAME]
 *
 * URL is "nfs://HOST/EXPORT?nfsport=P&mountport=P" (EXPORT may be empty:
 * "/"). Sizes take K, M, G suffixes (powers of 1024). Every client mounts
 * the export itself (MOUNT v3) and talks NFSv3 over TCP as root (AUTH_SYS
 * uid 0; the export must not squash root).
 *
 * Output: "key value" lines on stdout, one figure each, for the runner to
 * parse (MB = 10^6 bytes). --hook CMD runs "CMD PHASE before" just before
 * each timed phase and "CMD PHASE after" just after it, outside the timing
 * (the runner takes the server's statistics there).
 *
 * File contents come from pattern.h (seed PAT_SEED_SEQ for seqwrite, the
 * object number for proxy objects), so every read is checked.
 *
 * NOTES
 *   Exit status 0, or 1 after a message on stderr naming the call and why
 *   (an RPC that got no reply within PL_TIMEOUT_S, a broken connection, an
 *   NFS status other than the expected, data that does not match). A
 *   failure in any client ends the whole process.
 *   Memory: every buffer is the calling workload's and freed before it
 *   returns; libnfs's reply data is valid only during the callback, where
 *   pl_cb copies what the workload needs into the pl_req.
 *   Threads: a pl_conn (its rpc_context) is used by one thread only.
 *   Everything created on the server is removed again, except the file of
 *   seqwrite (seqread reads it; the runner drops the server after).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h> /* struct timeval, which libnfs.h uses */
#include <time.h>
#include <unistd.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "pattern.h"

#define PL_FH_MAX    64
#define PL_TIMEOUT_S 300 /* no reply for this long: give up */
#define PL_SAMPLES   64  /* bytes checked per READ reply */
#define PL_NAME_MAX  64
#define PL_PI        3.14159265358979323846

/* --- options -------------------------------------------------------------- */

typedef struct {
    char host[256];
    char export[1024];
    int nfsport, mountport;
} pl_url;

typedef struct {
    pl_url url;
    const char *mode;
    const char *name; /* seqwrite/seqread file */
    const char *dir;  /* churn/meta/proxy base directory */
    const char *hook;
    const char *ops; /* meta: which phases */
    uint64_t size;
    uint32_t io;
    unsigned depth;
    unsigned clients;
    double seconds;
    stable_how stable;
    unsigned entries;
    uint32_t dircount; /* 0: the server's dtpref */
    unsigned objects;
    unsigned long requests, warmup;
    uint64_t budget;
    double budget_frac;
    double zipf, sigma, tail, alpha;
    uint64_t median, tail_min, cap;
    uint64_t seed;
} pl_opts;

/* --- time, randomness, failure ---------------------------------------------- */

static double pl_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A small PRNG (xorshift64*), one per thread. */
typedef struct {
    uint64_t s;
} pl_rng;

static void pl_rng_seed(pl_rng *r, uint64_t seed)
{
    r->s = pat_word(seed, 0x243f6a8885a308d3ull) | 1;
}

static uint64_t pl_rng_next(pl_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dull;
}

/* Uniform in (0, 1). */
static double pl_rng_unit(pl_rng *r)
{
    return ((double)(pl_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

static void pl_die(const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fputs("pload: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void *pl_alloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);

    if (!p)
        pl_die("out of memory (%zu bytes)", n);
    return p;
}

/* --- connections and calls ----------------------------------------------------- */

typedef struct {
    uint32_t len;
    unsigned char data[PL_FH_MAX];
} pl_fh;

typedef struct {
    struct rpc_context *rpc;
    int inflight;
    pl_fh root;
    uint32_t rtmax, wtmax, dtpref;
} pl_conn;

typedef enum {
    PL_GETATTR,
    PL_SETATTR,
    PL_LOOKUP,
    PL_READ,
    PL_WRITE,
    PL_CREATE,
    PL_MKDIR,
    PL_REMOVE,
    PL_RMDIR,
    PL_RENAME,
    PL_READDIRPLUS,
    PL_FSINFO,
    PL_COMMIT,
} pl_proc;

static const char *const pl_proc_names[] = {
    "GETATTR", "SETATTR", "LOOKUP", "READ",        "WRITE",  "CREATE", "MKDIR",
    "REMOVE",  "RMDIR",   "RENAME", "READDIRPLUS", "FSINFO", "COMMIT",
};

typedef struct pl_req pl_req;
typedef void (*pl_then)(pl_req *r);

/*
 * One call in flight (or done). pl_cb fills the result fields, then calls
 * `then` (if set) while the reply's data is still valid; `then` may queue
 * the next call on the same pl_req.
 */
struct pl_req {
    pl_conn *c;
    pl_proc proc;
    bool done;
    int nfs; /* nfsstat3 of the reply */
    /* results */
    pl_fh fh; /* CREATE, MKDIR, LOOKUP */
    bool has_fh;
    uint64_t size; /* from the object's attributes, when they came */
    char verf[NFS3_WRITEVERFSIZE];
    uint32_t count;             /* WRITE, READ */
    bool eof;                   /* READ, READDIRPLUS */
    int committed;              /* WRITE */
    const unsigned char *rdata; /* READ data, valid during `then` only */
    uint64_t cookie;            /* READDIRPLUS: the last entry's */
    char cookieverf[NFS3_COOKIEVERFSIZE];
    unsigned nentries; /* READDIRPLUS: entries other than . and .. */
    uint32_t rtmax, wtmax, dtpref;
    /* the caller's */
    pl_then then;
    void *arg;
    uint64_t off;
    uint32_t len;
    unsigned idx;
    unsigned char *buf;
};

static nfs_fh3 pl_fh3(const pl_fh *fh)
{
    nfs_fh3 f = {.data = {.data_len = fh->len, .data_val = (char *)fh->data}};
    return f;
}

static void pl_fh_copy(pl_fh *dst, const nfs_fh3 *src)
{
    if (src->data.data_len > PL_FH_MAX)
        pl_die("a file handle of %u bytes (NFSv3 allows 64)", src->data.data_len);
    dst->len = src->data.data_len;
    memcpy(dst->data, src->data.data_val, dst->len);
}

static void pl_attr(pl_req *r, const post_op_attr *a)
{
    if (a->attributes_follow)
        r->size = a->post_op_attr_u.attributes.size;
}

static void pl_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
    pl_req *r = private_data;

    (void)rpc;
    r->c->inflight--;
    r->done = true;
    if (status != RPC_STATUS_SUCCESS)
        pl_die("%s: %s", pl_proc_names[r->proc],
               status == RPC_STATUS_ERROR && data ? (const char *)data : "call cancelled");
    r->nfs = (int)*(const nfsstat3 *)data; /* every result begins with its status */
    if (r->nfs == NFS3_OK) {
        switch (r->proc) {
        case PL_LOOKUP: {
            const LOOKUP3resok *ok = &((const LOOKUP3res *)data)->LOOKUP3res_u.resok;
            pl_fh_copy(&r->fh, &ok->object);
            r->has_fh = true;
            pl_attr(r, &ok->obj_attributes);
            break;
        }
        case PL_CREATE: {
            const CREATE3resok *ok = &((const CREATE3res *)data)->CREATE3res_u.resok;
            r->has_fh = ok->obj.handle_follows;
            if (r->has_fh)
                pl_fh_copy(&r->fh, &ok->obj.post_op_fh3_u.handle);
            break;
        }
        case PL_MKDIR: {
            const MKDIR3resok *ok = &((const MKDIR3res *)data)->MKDIR3res_u.resok;
            r->has_fh = ok->obj.handle_follows;
            if (r->has_fh)
                pl_fh_copy(&r->fh, &ok->obj.post_op_fh3_u.handle);
            break;
        }
        case PL_GETATTR:
            r->size = ((const GETATTR3res *)data)->GETATTR3res_u.resok.obj_attributes.size;
            break;
        case PL_WRITE: {
            const WRITE3resok *ok = &((const WRITE3res *)data)->WRITE3res_u.resok;
            r->count = ok->count;
            r->committed = (int)ok->committed;
            memcpy(r->verf, ok->verf, sizeof r->verf);
            break;
        }
        case PL_COMMIT:
            memcpy(r->verf, ((const COMMIT3res *)data)->COMMIT3res_u.resok.verf, sizeof r->verf);
            break;
        case PL_READ: {
            const READ3resok *ok = &((const READ3res *)data)->READ3res_u.resok;
            r->count = ok->count;
            r->eof = ok->eof;
            r->rdata = (const unsigned char *)ok->data.data_val;
            if (ok->data.data_len < ok->count)
                pl_die("READ: count %u but %u bytes of data", ok->count, ok->data.data_len);
            break;
        }
        case PL_READDIRPLUS: {
            const READDIRPLUS3resok *ok = &((const READDIRPLUS3res *)data)->READDIRPLUS3res_u.resok;
            r->nentries = 0;
            for (const entryplus3 *e = ok->reply.entries; e; e = e->nextentry) {
                if (strcmp(e->name, ".") != 0 && strcmp(e->name, "..") != 0)
                    r->nentries++;
                r->cookie = e->cookie;
            }
            r->eof = ok->reply.eof;
            memcpy(r->cookieverf, ok->cookieverf, sizeof r->cookieverf);
            break;
        }
        case PL_FSINFO: {
            const FSINFO3resok *ok = &((const FSINFO3res *)data)->FSINFO3res_u.resok;
            r->rtmax = ok->rtmax;
            r->wtmax = ok->wtmax;
            r->dtpref = ok->dtpref;
            break;
        }
        default:
            break;
        }
    }
    if (r->then)
        r->then(r);
    r->rdata = NULL;
}

/* Account for a call queued with rc (the *_async return value). */
static void pl_queued(pl_req *r, pl_proc proc, int rc)
{
    if (rc != 0)
        pl_die("%s: cannot queue the call: %s", pl_proc_names[proc], rpc_get_error(r->c->rpc));
    r->c->inflight++;
}

static void pl_prep(pl_req *r, pl_proc proc)
{
    r->proc = proc;
    r->done = false;
    r->nfs = -1;
    r->has_fh = false;
}

static void pl_getattr(pl_req *r, const pl_fh *fh)
{
    GETATTR3args a = {.object = pl_fh3(fh)};

    pl_prep(r, PL_GETATTR);
    pl_queued(r, PL_GETATTR, rpc_nfs3_getattr_async(r->c->rpc, pl_cb, &a, r));
}

static void pl_setattr_mode(pl_req *r, const pl_fh *fh, uint32_t mode)
{
    SETATTR3args a = {.object = pl_fh3(fh)};

    a.new_attributes.mode.set_it = 1;
    a.new_attributes.mode.set_mode3_u.mode = mode;
    pl_prep(r, PL_SETATTR);
    pl_queued(r, PL_SETATTR, rpc_nfs3_setattr_async(r->c->rpc, pl_cb, &a, r));
}

static void pl_lookup(pl_req *r, const pl_fh *dir, const char *name)
{
    LOOKUP3args a = {.what = {.dir = pl_fh3(dir), .name = (char *)name}};

    pl_prep(r, PL_LOOKUP);
    pl_queued(r, PL_LOOKUP, rpc_nfs3_lookup_async(r->c->rpc, pl_cb, &a, r));
}

static void pl_read(pl_req *r, const pl_fh *fh, uint64_t off, uint32_t n)
{
    READ3args a = {.file = pl_fh3(fh), .offset = off, .count = n};

    pl_prep(r, PL_READ);
    pl_queued(r, PL_READ, rpc_nfs3_read_async(r->c->rpc, pl_cb, &a, r));
}

static void pl_write(pl_req *r, const pl_fh *fh, uint64_t off, const void *buf, uint32_t n,
                     stable_how how)
{
    WRITE3args a = {.file = pl_fh3(fh), .offset = off, .count = n, .stable = how};

    a.data.data_len = n;
    a.data.data_val = (char *)buf;
    pl_prep(r, PL_WRITE);
    pl_queued(r, PL_WRITE, rpc_nfs3_write_async(r->c->rpc, pl_cb, &a, r));
}

static void pl_commit(pl_req *r, const pl_fh *fh)
{
    COMMIT3args a = {.file = pl_fh3(fh), .offset = 0, .count = 0};

    pl_prep(r, PL_COMMIT);
    pl_queued(r, PL_COMMIT, rpc_nfs3_commit_async(r->c->rpc, pl_cb, &a, r));
}

/* CREATE dir/name: GUARDED (an error if it exists) or UNCHECKED with size 0. */
static void pl_create(pl_req *r, const pl_fh *dir, const char *name, bool guarded)
{
    CREATE3args a = {.where = {.dir = pl_fh3(dir), .name = (char *)name}};
    sattr3 *sa = &a.how.createhow3_u.obj_attributes;

    a.how.mode = guarded ? GUARDED : UNCHECKED;
    sa->mode.set_it = 1;
    sa->mode.set_mode3_u.mode = 0644;
    if (!guarded) {
        sa->size.set_it = 1;
        sa->size.set_size3_u.size = 0;
    }
    pl_prep(r, PL_CREATE);
    pl_queued(r, PL_CREATE, rpc_nfs3_create_async(r->c->rpc, pl_cb, &a, r));
}

static void pl_mkdir(pl_req *r, const pl_fh *dir, const char *name)
{
    MKDIR3args a = {.where = {.dir = pl_fh3(dir), .name = (char *)name}};

    a.attributes.mode.set_it = 1;
    a.attributes.mode.set_mode3_u.mode = 0755;
    pl_prep(r, PL_MKDIR);
    pl_queued(r, PL_MKDIR, rpc_nfs3_mkdir_async(r->c->rpc, pl_cb, &a, r));
}

static void pl_remove(pl_req *r, const pl_fh *dir, const char *name)
{
    REMOVE3args a = {.object = {.dir = pl_fh3(dir), .name = (char *)name}};

    pl_prep(r, PL_REMOVE);
    pl_queued(r, PL_REMOVE, rpc_nfs3_remove_async(r->c->rpc, pl_cb, &a, r));
}

static void pl_rmdir(pl_req *r, const pl_fh *dir, const char *name)
{
    RMDIR3args a = {.object = {.dir = pl_fh3(dir), .name = (char *)name}};

    pl_prep(r, PL_RMDIR);
    pl_queued(r, PL_RMDIR, rpc_nfs3_rmdir_async(r->c->rpc, pl_cb, &a, r));
}

static void pl_rename(pl_req *r, const pl_fh *dir, const char *from, const char *to)
{
    RENAME3args a = {.from = {.dir = pl_fh3(dir), .name = (char *)from},
                     .to = {.dir = pl_fh3(dir), .name = (char *)to}};

    pl_prep(r, PL_RENAME);
    pl_queued(r, PL_RENAME, rpc_nfs3_rename_async(r->c->rpc, pl_cb, &a, r));
}

static void pl_readdirplus(pl_req *r, const pl_fh *dir, uint64_t cookie, const char *verf,
                           uint32_t dircount, uint32_t maxcount)
{
    READDIRPLUS3args a = {
        .dir = pl_fh3(dir), .cookie = cookie, .dircount = dircount, .maxcount = maxcount};

    memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
    pl_prep(r, PL_READDIRPLUS);
    pl_queued(r, PL_READDIRPLUS, rpc_nfs3_readdirplus_async(r->c->rpc, pl_cb, &a, r));
}

static void pl_fsinfo(pl_req *r, const pl_fh *fh)
{
    FSINFO3args a = {.fsroot = pl_fh3(fh)};

    pl_prep(r, PL_FSINFO);
    pl_queued(r, PL_FSINFO, rpc_nfs3_fsinfo_async(r->c->rpc, pl_cb, &a, r));
}

/*
 * pl_service -- run rpc's event loop until *done is true or (with inflight
 * given) *inflight is at most `until`. Dies when nothing arrives for
 * PL_TIMEOUT_S seconds or the connection fails.
 */
static void pl_service(struct rpc_context *rpc, const bool *done, const int *inflight, int until,
                       const char *what)
{
    double deadline = pl_now() + PL_TIMEOUT_S;
    int before = inflight ? *inflight : 0;

    while (done ? !*done : *inflight > until) {
        struct pollfd p = {.fd = rpc_get_fd(rpc), .events = (short)rpc_which_events(rpc)};
        int n = poll(&p, 1, 1000);

        if (n < 0 && errno != EINTR)
            pl_die("%s: poll: %s", what, strerror(errno));
        if (rpc_service(rpc, n > 0 ? p.revents : 0) < 0)
            pl_die("%s: connection failed: %s", what, rpc_get_error(rpc));
        if (inflight && *inflight != before) {
            before = *inflight;
            deadline = pl_now() + PL_TIMEOUT_S;
        }
        if (pl_now() > deadline)
            pl_die("%s: no reply within %d s", what, PL_TIMEOUT_S);
    }
}

/* Wait for every call in flight on c. */
static void pl_drain(pl_conn *c, const char *what)
{
    pl_service(c->rpc, NULL, &c->inflight, 0, what);
}

/* Wait for r (the only call in flight) and check its status is `want`. */
static void pl_sync(pl_req *r, int want, const char *what)
{
    pl_service(r->c->rpc, &r->done, NULL, 0, what);
    if (r->nfs != want)
        pl_die("%s: %s answered NFS status %d (expected %d)", what, pl_proc_names[r->proc], r->nfs,
               want);
}

typedef struct {
    bool done;
    int status;
    char err[256];
    pl_fh fh;
    int mnt;
} pl_mnt_wait;

static void pl_mnt_connect_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
    pl_mnt_wait *w = private_data;

    (void)rpc;
    w->status = status;
    if (status != RPC_STATUS_SUCCESS)
        snprintf(w->err, sizeof w->err, "%s", data ? (const char *)data : "cancelled");
    w->done = true;
}

static void pl_mnt_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
    pl_mnt_wait *w = private_data;
    const mountres3 *res = data;

    (void)rpc;
    w->status = status;
    w->done = true;
    if (status != RPC_STATUS_SUCCESS) {
        snprintf(w->err, sizeof w->err, "%s", data ? (const char *)data : "cancelled");
        return;
    }
    w->mnt = (int)res->fhs_status;
    if (res->fhs_status == MNT3_OK) {
        const fhandle3 *fh = &res->mountres3_u.mountinfo.fhandle;
        nfs_fh3 f = {.data = {.data_len = fh->fhandle3_len, .data_val = fh->fhandle3_val}};
        pl_fh_copy(&w->fh, &f);
    }
}

/* A connected rpc_context, as root, to host:port. Dies on failure. */
static struct rpc_context *pl_connect(const char *host, int port, const char *what)
{
    struct rpc_context *rpc = rpc_init_context();
    pl_mnt_wait w = {0};

    if (!rpc)
        pl_die("rpc_init_context failed");
    rpc_set_auth(rpc, libnfs_authunix_create("pload", 0, 0, 0, NULL));
    if (rpc_connect_async(rpc, host, port, pl_mnt_connect_cb, &w) != 0)
        pl_die("%s %s:%d: %s", what, host, port, rpc_get_error(rpc));
    pl_service(rpc, &w.done, NULL, 0, what);
    if (w.status != RPC_STATUS_SUCCESS)
        pl_die("%s %s:%d: %s", what, host, port, w.err);
    return rpc;
}

/*
 * pl_open -- mount u's export (MOUNT v3 on its mount port, a connection
 * of its own, closed after) and connect to its NFS port; FSINFO fills the
 * transfer sizes. Dies on failure.
 */
static void pl_open(const pl_url *u, pl_conn *c)
{
    struct rpc_context *m = pl_connect(u->host, u->mountport, "connect to MOUNT");
    pl_mnt_wait w = {0};
    pl_req r = {.c = c};

    if (rpc_mount3_mnt_async(m, pl_mnt_cb, (char *)u->export, &w) != 0)
        pl_die("MNT %s: %s", u->export, rpc_get_error(m));
    pl_service(m, &w.done, NULL, 0, "MNT");
    if (w.status != RPC_STATUS_SUCCESS)
        pl_die("MNT %s: %s", u->export, w.err);
    if (w.mnt != MNT3_OK)
        pl_die("MNT %s: mount status %d", u->export, w.mnt);
    rpc_destroy_context(m);
    memset(c, 0, sizeof *c);
    c->root = w.fh;
    c->rpc = pl_connect(u->host, u->nfsport, "connect to NFS");
    pl_fsinfo(&r, &c->root);
    pl_sync(&r, NFS3_OK, "FSINFO");
    c->rtmax = r.rtmax;
    c->wtmax = r.wtmax;
    c->dtpref = r.dtpref;
}

static void pl_close(pl_conn *c)
{
    if (c->rpc)
        rpc_destroy_context(c->rpc);
    c->rpc = NULL;
}

/* Run the hook (if any): "CMD PHASE WHEN". Dies if it fails. */
static void pl_hook(const pl_opts *o, const char *phase, const char *when)
{
    size_t n;
    char *cmd;
    int rc;

    if (!o->hook || !*o->hook)
        return;
    n = strlen(o->hook) + strlen(phase) + strlen(when) + 3;
    cmd = pl_alloc(n);
    snprintf(cmd, n, "%s %s %s", o->hook, phase, when);
    fflush(stdout);
    rc = system(cmd);
    free(cmd);
    if (rc != 0)
        pl_die("hook for %s %s failed (status %d)", phase, when, rc);
}

/* A transfer size: the wanted one, within what the server allows. */
static uint32_t pl_xfer(uint32_t want, uint32_t max)
{
    return max && max < want ? max : want;
}

/* --- seqwrite / seqread ------------------------------------------------------- */

typedef struct {
    pl_conn *c;
    pl_fh fh;
    uint64_t size, next, done_bytes;
    uint32_t io;
    stable_how stable;
    char verf[NFS3_WRITEVERFSIZE];
    bool have_verf;
    uint64_t rpcs, by_committed[3];
} sq_job;

static void sw_done(pl_req *r);

static void sw_issue(sq_job *j, pl_req *r)
{
    if (j->next >= j->size)
        return;
    r->off = j->next;
    r->len = (uint32_t)(j->size - j->next < j->io ? j->size - j->next : j->io);
    j->next += r->len;
    pat_fill(r->buf, r->off, r->len, PAT_SEED_SEQ);
    pl_write(r, &j->fh, r->off, r->buf, r->len, j->stable);
}

static void sw_done(pl_req *r)
{
    sq_job *j = r->arg;

    if (r->nfs != NFS3_OK)
        pl_die("WRITE at %" PRIu64 ": NFS status %d", r->off, r->nfs);
    if (r->count != r->len)
        pl_die("WRITE at %" PRIu64 ": %u of %u bytes written", r->off, r->count, r->len);
    if (!j->have_verf) {
        memcpy(j->verf, r->verf, sizeof j->verf);
        j->have_verf = true;
    } else if (memcmp(j->verf, r->verf, sizeof j->verf) != 0) {
        pl_die("WRITE at %" PRIu64 ": the write verifier changed (server restarted?)", r->off);
    }
    if (r->committed >= 0 && r->committed <= 2)
        j->by_committed[r->committed]++;
    j->rpcs++;
    j->done_bytes += r->count;
    sw_issue(j, r);
}

/* Open or create o->name at the export's root (UNCHECKED, size 0). */
static void sq_create(pl_conn *c, const pl_opts *o, pl_fh *fh)
{
    pl_req r = {.c = c};

    pl_create(&r, &c->root, o->name, false);
    pl_sync(&r, NFS3_OK, "CREATE");
    if (!r.has_fh) {
        pl_lookup(&r, &c->root, o->name);
        pl_sync(&r, NFS3_OK, "LOOKUP");
    }
    *fh = r.fh;
}

static int cmd_seqwrite(const pl_opts *o)
{
    pl_conn c;
    sq_job j = {.c = &c, .size = o->size, .stable = o->stable};
    pl_req *slots = pl_alloc(o->depth * sizeof *slots);
    pl_req cr;
    double t0, t1, t2;

    pl_open(&o->url, &c);
    j.io = pl_xfer(o->io, c.wtmax);
    sq_create(&c, o, &j.fh);
    for (unsigned i = 0; i < o->depth; i++) {
        slots[i] = (pl_req){.c = &c, .then = sw_done, .arg = &j};
        slots[i].buf = pl_alloc(j.io);
    }
    pl_hook(o, "write", "before");
    t0 = pl_now();
    for (unsigned i = 0; i < o->depth; i++)
        sw_issue(&j, &slots[i]);
    pl_drain(&c, "WRITE");
    t1 = pl_now();
    cr = (pl_req){.c = &c};
    pl_commit(&cr, &j.fh);
    pl_sync(&cr, NFS3_OK, "COMMIT");
    t2 = pl_now();
    pl_hook(o, "write", "after");
    if (j.have_verf && memcmp(cr.verf, j.verf, sizeof j.verf) != 0)
        pl_die("COMMIT: the write verifier differs from the WRITEs' (server restarted?)");
    if (j.done_bytes != o->size)
        pl_die("wrote %" PRIu64 " of %" PRIu64 " bytes", j.done_bytes, o->size);
    printf("bytes %" PRIu64 "\nio %u\ndepth %u\nrpcs %" PRIu64 "\n", o->size, j.io, o->depth,
           j.rpcs);
    printf("replies_unstable %" PRIu64 "\nreplies_data_sync %" PRIu64 "\nreplies_file_sync %" PRIu64
           "\n",
           j.by_committed[0], j.by_committed[1], j.by_committed[2]);
    printf("write_s %.6f\ncommit_s %.6f\nseconds %.6f\nmb_s %.3f\n", t1 - t0, t2 - t1, t2 - t0,
           (double)o->size / 1e6 / (t2 - t0));
    for (unsigned i = 0; i < o->depth; i++)
        free(slots[i].buf);
    free(slots);
    pl_close(&c);
    return 0;
}

static void sr_issue(sq_job *j, pl_req *r)
{
    if (j->next >= j->size)
        return;
    r->off = j->next;
    r->len = (uint32_t)(j->size - j->next < j->io ? j->size - j->next : j->io);
    j->next += r->len;
    pl_read(r, &j->fh, r->off, r->len);
}

static void sr_done(pl_req *r)
{
    sq_job *j = r->arg;
    long long bad;

    if (r->nfs != NFS3_OK)
        pl_die("READ at %" PRIu64 ": NFS status %d", r->off, r->nfs);
    bad = pat_check(r->rdata, r->off, r->count, PAT_SEED_SEQ, PL_SAMPLES);
    if (bad >= 0)
        pl_die("READ at %" PRIu64 ": wrong data at offset %" PRIu64, r->off,
               r->off + (uint64_t)bad);
    j->rpcs++;
    j->done_bytes += r->count;
    if (r->count < r->len) {
        if (r->eof || r->count == 0)
            pl_die("READ at %" PRIu64 ": the file ends early (%u of %u bytes)", r->off, r->count,
                   r->len);
        r->off += r->count; /* a short read: ask for the rest */
        r->len -= r->count;
        pl_read(r, &j->fh, r->off, r->len);
        return;
    }
    sr_issue(j, r);
}

static int cmd_seqread(const pl_opts *o)
{
    pl_conn c;
    sq_job j = {.c = &c};
    pl_req *slots = pl_alloc(o->depth * sizeof *slots);
    pl_req r;
    double t0, t1;

    pl_open(&o->url, &c);
    j.io = pl_xfer(o->io, c.rtmax);
    r = (pl_req){.c = &c};
    pl_lookup(&r, &c.root, o->name);
    pl_sync(&r, NFS3_OK, "LOOKUP");
    j.fh = r.fh;
    pl_getattr(&r, &j.fh);
    pl_sync(&r, NFS3_OK, "GETATTR");
    j.size = r.size;
    for (unsigned i = 0; i < o->depth; i++)
        slots[i] = (pl_req){.c = &c, .then = sr_done, .arg = &j};
    pl_hook(o, "read", "before");
    t0 = pl_now();
    for (unsigned i = 0; i < o->depth; i++)
        sr_issue(&j, &slots[i]);
    pl_drain(&c, "READ");
    t1 = pl_now();
    pl_hook(o, "read", "after");
    if (j.done_bytes != j.size)
        pl_die("read %" PRIu64 " of %" PRIu64 " bytes", j.done_bytes, j.size);
    printf("bytes %" PRIu64 "\nio %u\ndepth %u\nrpcs %" PRIu64 "\n", j.size, j.io, o->depth,
           j.rpcs);
    printf("seconds %.6f\nmb_s %.3f\n", t1 - t0, (double)j.size / 1e6 / (t1 - t0));
    free(slots);
    pl_close(&c);
    return 0;
}

/* --- churn ------------------------------------------------------------------------ */

enum { CH_CREATE, CH_WRITE, CH_COMMIT, CH_GETATTR, CH_REMOVE, CH_NSTEPS };
static const char *const ch_step_names[CH_NSTEPS] = {"create", "write", "commit", "getattr",
                                                     "remove"};

typedef struct {
    const pl_opts *o;
    unsigned id;
    pthread_barrier_t *bar;
    double *deadline; /* set by the main thread before the start barrier */
    uint64_t files;
    double step_s[CH_NSTEPS];
    double end;
} ch_client;

static void ch_step(pl_req *r, ch_client *cl, int step, double *t)
{
    pl_sync(r, NFS3_OK, ch_step_names[step]);
    double now = pl_now();
    cl->step_s[step] += now - *t;
    *t = now;
}

static void *ch_run(void *arg)
{
    ch_client *cl = arg;
    const pl_opts *o = cl->o;
    pl_conn c;
    pl_req r;
    pl_fh dir;
    char dname[PL_NAME_MAX], fname[PL_NAME_MAX];
    unsigned char *buf = pl_alloc(o->size);

    pat_fill(buf, 0, o->size, 7);
    pl_open(&o->url, &c);
    r = (pl_req){.c = &c};
    snprintf(dname, sizeof dname, "%s-churn-%u", o->dir, cl->id);
    pl_mkdir(&r, &c.root, dname);
    pl_sync(&r, NFS3_OK, "MKDIR");
    dir = r.fh;
    pthread_barrier_wait(cl->bar); /* set up */
    pthread_barrier_wait(cl->bar); /* go */
    double deadline = *cl->deadline;
    for (double t = pl_now(); t < deadline; cl->files++) {
        snprintf(fname, sizeof fname, "f%" PRIu64, cl->files);
        pl_create(&r, &dir, fname, true);
        ch_step(&r, cl, CH_CREATE, &t);
        pl_fh fh = r.fh;
        pl_write(&r, &fh, 0, buf, (uint32_t)o->size, UNSTABLE);
        ch_step(&r, cl, CH_WRITE, &t);
        pl_commit(&r, &fh);
        ch_step(&r, cl, CH_COMMIT, &t);
        pl_getattr(&r, &fh);
        ch_step(&r, cl, CH_GETATTR, &t);
        if (r.size != o->size)
            pl_die("churn: GETATTR after COMMIT says %" PRIu64 " bytes, not %" PRIu64, r.size,
                   o->size);
        pl_remove(&r, &dir, fname);
        ch_step(&r, cl, CH_REMOVE, &t);
    }
    cl->end = pl_now();
    pthread_barrier_wait(cl->bar); /* done */
    pthread_barrier_wait(cl->bar); /* statistics taken */
    pl_rmdir(&r, &c.root, dname);
    pl_sync(&r, NFS3_OK, "RMDIR");
    pl_close(&c);
    free(buf);
    return NULL;
}

static int cmd_churn(const pl_opts *o)
{
    ch_client *cl = pl_alloc(o->clients * sizeof *cl);
    pthread_t *th = pl_alloc(o->clients * sizeof *th);
    pthread_barrier_t bar;
    double deadline = 0, t0, end = 0, step[CH_NSTEPS] = {0};
    uint64_t files = 0;

    pthread_barrier_init(&bar, NULL, o->clients + 1);
    for (unsigned i = 0; i < o->clients; i++) {
        cl[i] = (ch_client){.o = o, .id = i, .bar = &bar, .deadline = &deadline};
        if (pthread_create(&th[i], NULL, ch_run, &cl[i]) != 0)
            pl_die("pthread_create failed");
    }
    pthread_barrier_wait(&bar);
    pl_hook(o, "churn", "before");
    t0 = pl_now();
    deadline = t0 + o->seconds;
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    for (unsigned i = 0; i < o->clients; i++) {
        files += cl[i].files;
        end = cl[i].end > end ? cl[i].end : end;
        for (int s = 0; s < CH_NSTEPS; s++)
            step[s] += cl[i].step_s[s];
    }
    pl_hook(o, "churn", "after");
    pthread_barrier_wait(&bar);
    for (unsigned i = 0; i < o->clients; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
    printf("clients %u\nfile_bytes %" PRIu64 "\nfiles %" PRIu64 "\nseconds %.6f\nfiles_s %.3f\n",
           o->clients, o->size, files, end - t0, (double)files / (end - t0));
    for (int s = 0; s < CH_NSTEPS; s++)
        printf("%s_us %.1f\n", ch_step_names[s], files ? step[s] / (double)files * 1e6 : 0.0);
    free(th);
    free(cl);
    return 0;
}

/* --- meta ---------------------------------------------------------------------------- */

enum { MT_GETATTR, MT_LOOKUP, MT_READDIRPLUS, MT_RENAME, MT_SETATTR, MT_NOPS };
static const char *const mt_op_names[MT_NOPS] = {"getattr", "lookup", "readdirplus", "rename",
                                                 "setattr"};

typedef struct {
    pl_conn *c;
    const pl_opts *o;
    pl_fh dir;
    pl_fh *fh;      /* the files' handles */
    bool *renamed;  /* file i is now called its name + ".r" */
    unsigned n;     /* files */
    unsigned next;  /* count-based phases: the next file */
    unsigned depth; /* calls in flight */
    int op;
    double end;
    uint64_t ops, entries, listings;
    uint32_t dircount, maxcount;
    pl_rng rng;
} mt_job;

static void mt_name(char *buf, size_t n, unsigned i, bool renamed)
{
    snprintf(buf, n, "f%07u%s", i, renamed ? ".r" : "");
}

/* Setup and teardown: CREATE or REMOVE every file, depth in flight. */
static void mt_fill_done(pl_req *r);

static void mt_fill_issue(mt_job *j, pl_req *r, bool create)
{
    char name[PL_NAME_MAX];

    if (j->next >= j->n)
        return;
    r->idx = j->next++;
    mt_name(name, sizeof name, r->idx, j->renamed[r->idx]);
    if (create)
        pl_create(r, &j->dir, name, true);
    else
        pl_remove(r, &j->dir, name);
}

static void mt_fill_done(pl_req *r)
{
    mt_job *j = r->arg;
    bool create = r->proc == PL_CREATE;

    if (r->nfs != NFS3_OK)
        pl_die("%s of file %u: NFS status %d", pl_proc_names[r->proc], r->idx, r->nfs);
    if (create) {
        if (!r->has_fh)
            pl_die("CREATE of file %u returned no handle", r->idx);
        j->fh[r->idx] = r->fh;
    }
    mt_fill_issue(j, r, create);
}

static double mt_fill(mt_job *j, pl_req *slots, bool create)
{
    double t0 = pl_now();

    j->next = 0;
    for (unsigned i = 0; i < j->depth; i++) {
        slots[i] = (pl_req){.c = j->c, .then = mt_fill_done, .arg = j};
        mt_fill_issue(j, &slots[i], create);
    }
    pl_drain(j->c, create ? "CREATE" : "REMOVE");
    return pl_now() - t0;
}

/* Timed phases: each completion counts and queues the next call. */
static void mt_issue(mt_job *j, pl_req *r, unsigned slot);

static void mt_done(pl_req *r)
{
    mt_job *j = r->arg;

    if (r->nfs != NFS3_OK)
        pl_die("%s: %s answered NFS status %d", mt_op_names[j->op], pl_proc_names[r->proc], r->nfs);
    if (j->op == MT_READDIRPLUS) {
        j->entries += r->nentries;
        j->ops++;
        if (!r->eof) {
            pl_readdirplus(r, &j->dir, r->cookie, r->cookieverf, j->dircount, j->maxcount);
            return;
        }
        j->listings++;
        if (j->entries != (uint64_t)j->listings * j->n)
            pl_die("readdirplus: a listing of %u files found %" PRIu64 " entries", j->n,
                   j->entries - (uint64_t)(j->listings - 1) * j->n);
    } else {
        if (j->op == MT_RENAME) {
            /* slot k renames files k, k + depth, k + 2 * depth, ... in turn,
             * so no two calls in flight touch one file */
            j->renamed[r->idx] = !j->renamed[r->idx];
            r->idx = r->idx + j->depth < j->n ? r->idx + j->depth : (unsigned)r->off;
        }
        j->ops++;
    }
    if (pl_now() < j->end)
        mt_issue(j, r, (unsigned)r->off);
}

static void mt_issue(mt_job *j, pl_req *r, unsigned slot)
{
    char a[PL_NAME_MAX], b[PL_NAME_MAX];
    unsigned i = (unsigned)(pl_rng_next(&j->rng) % j->n);
    static const char zero[NFS3_COOKIEVERFSIZE];

    r->off = slot;
    switch (j->op) {
    case MT_GETATTR:
        pl_getattr(r, &j->fh[i]);
        break;
    case MT_LOOKUP:
        mt_name(a, sizeof a, i, j->renamed[i]);
        pl_lookup(r, &j->dir, a);
        break;
    case MT_READDIRPLUS:
        pl_readdirplus(r, &j->dir, 0, zero, j->dircount, j->maxcount);
        break;
    case MT_RENAME:
        i = r->idx; /* see mt_done */
        mt_name(a, sizeof a, i, j->renamed[i]);
        mt_name(b, sizeof b, i, !j->renamed[i]);
        pl_rename(r, &j->dir, a, b);
        break;
    case MT_SETATTR:
        pl_setattr_mode(r, &j->fh[i], (j->ops & 1) ? 0640 : 0644);
        break;
    }
}

static int cmd_meta(const pl_opts *o)
{
    pl_conn c;
    mt_job j = {.c = &c, .o = o, .n = o->entries, .depth = o->depth};
    pl_req *slots = pl_alloc(o->depth * sizeof *slots);
    pl_req r;
    char dname[PL_NAME_MAX];
    double create_s, remove_s;

    if (o->entries == 0)
        pl_die("meta: --entries must be at least 1");
    pl_open(&o->url, &c);
    pl_rng_seed(&j.rng, o->seed);
    j.fh = pl_alloc(j.n * sizeof *j.fh);
    j.renamed = pl_alloc(j.n * sizeof *j.renamed);
    /* As the Linux client: count = dtpref (within rtmax), dircount = count / 8. */
    j.maxcount = o->dircount ? o->dircount : pl_xfer(c.dtpref ? c.dtpref : 8192, c.rtmax);
    j.dircount = j.maxcount / 8;
    r = (pl_req){.c = &c};
    snprintf(dname, sizeof dname, "%s-meta", o->dir);
    pl_mkdir(&r, &c.root, dname);
    pl_sync(&r, NFS3_OK, "MKDIR");
    j.dir = r.fh;
    create_s = mt_fill(&j, slots, true);
    printf("entries %u\ndepth %u\nreaddirplus_maxcount %u\nreaddirplus_dircount %u\n", j.n, j.depth,
           j.maxcount, j.dircount);
    printf("create_s %.6f\ncreate_ops_s %.3f\n", create_s, j.n / create_s);
    fflush(stdout);
    for (int op = 0; op < MT_NOPS; op++) {
        if (o->ops && !strstr(o->ops, mt_op_names[op]))
            continue;
        unsigned depth = op == MT_READDIRPLUS ? 1 : j.depth; /* a listing is one chain */
        j.op = op;
        j.ops = j.entries = j.listings = 0;
        pl_hook(o, mt_op_names[op], "before");
        double t0 = pl_now();
        j.end = t0 + o->seconds;
        for (unsigned i = 0; i < depth && i < j.n; i++) {
            slots[i] = (pl_req){.c = &c, .then = mt_done, .arg = &j, .idx = i};
            mt_issue(&j, &slots[i], i);
        }
        pl_drain(&c, mt_op_names[op]);
        double s = pl_now() - t0;
        pl_hook(o, mt_op_names[op], "after");
        printf("%s_ops %" PRIu64 "\n%s_s %.6f\n%s_ops_s %.3f\n", mt_op_names[op], j.ops,
               mt_op_names[op], s, mt_op_names[op], (double)j.ops / s);
        if (op == MT_READDIRPLUS)
            printf("readdirplus_listings %" PRIu64 "\nreaddirplus_entries_s %.3f\n"
                   "readdirplus_listing_s %.6f\nreaddirplus_calls_per_listing %.2f\n",
                   j.listings, (double)j.entries / s, j.listings ? s / (double)j.listings : 0.0,
                   j.listings ? (double)j.ops / (double)j.listings : 0.0);
        fflush(stdout);
    }
    remove_s = mt_fill(&j, slots, false);
    printf("remove_s %.6f\nremove_ops_s %.3f\n", remove_s, j.n / remove_s);
    r = (pl_req){.c = &c};
    pl_rmdir(&r, &c.root, dname);
    pl_sync(&r, NFS3_OK, "RMDIR");
    free(j.fh);
    free(j.renamed);
    free(slots);
    pl_close(&c);
    return 0;
}

/* --- proxy ------------------------------------------------------------------------- */

#define PX_SUBDIRS 16

typedef struct {
    uint32_t *size;     /* per object */
    uint32_t *req;      /* the request stream: object numbers */
    unsigned long nreq; /* warmup + requests */
    unsigned long warmup;
    unsigned nobj;
    uint64_t budget; /* per client */
} px_world;

typedef struct {
    const pl_opts *o;
    const px_world *w;
    unsigned id;
    pthread_barrier_t *bar;
    /* results of the timed part */
    uint64_t requests, hits, misses, evictions, bytes_read, bytes_written;
    double read_s, write_s, evict_s; /* summed: hits (LOOKUP, READs), misses
                                        (CREATE, WRITEs, COMMIT), REMOVEs */
    double start, end;
} px_client;

/* The standard normal distribution function. */
static double px_phi(double x)
{
    return 0.5 * (1.0 + erf(x / sqrt(2.0)));
}

/*
 * px_mu -- the log-scale location of the lognormal body that puts the
 * median of the whole mixture at o->median: below tail_min only the body
 * contributes, so (1 - tail) * phi((ln median - mu) / sigma) = 1/2.
 * (Solved by bisection; with tail >= 1/2 the body cannot reach it and the
 * body's own median is used.)
 */
static double px_mu(const pl_opts *o)
{
    double target = o->tail < 0.5 ? 0.5 / (1.0 - o->tail) : 0.5, lo = -10, hi = 10;

    for (int i = 0; i < 200; i++) {
        double mid = (lo + hi) / 2;
        if (px_phi(mid) < target)
            lo = mid;
        else
            hi = mid;
    }
    return log((double)o->median) - o->sigma * lo;
}

/* Sizes: lognormal (sigma, located by px_mu), or with probability `tail` a
 * Pareto tail from tail_min (alpha); capped; at least 1 byte. */
static uint32_t px_size(const pl_opts *o, double mu, pl_rng *r)
{
    double s;

    if (pl_rng_unit(r) < o->tail) {
        s = (double)o->tail_min / pow(pl_rng_unit(r), 1.0 / o->alpha);
    } else {
        double z = sqrt(-2.0 * log(pl_rng_unit(r))) * cos(2.0 * PL_PI * pl_rng_unit(r));
        s = exp(mu + o->sigma * z);
    }
    if (s > (double)o->cap)
        s = (double)o->cap;
    return s < 1 ? 1 : (uint32_t)s;
}

static int px_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The catalogue and the request stream, the same for every server. */
static void px_world_make(const pl_opts *o, px_world *w)
{
    pl_rng r;
    double *cdf = pl_alloc(o->objects * sizeof *cdf);
    uint32_t *perm = pl_alloc(o->objects * sizeof *perm);
    uint32_t *sorted = pl_alloc(o->objects * sizeof *sorted);
    uint64_t total = 0;
    double sum = 0;

    double mu = px_mu(o);

    pl_rng_seed(&r, o->seed);
    w->nobj = o->objects;
    w->size = pl_alloc(o->objects * sizeof *w->size);
    for (unsigned i = 0; i < o->objects; i++) {
        w->size[i] = px_size(o, mu, &r);
        total += w->size[i];
    }
    /* Popularity rank k (1-based) has weight 1 / k^zipf; which object holds
     * which rank is a random permutation (popularity is not size). */
    for (unsigned i = 0; i < o->objects; i++) {
        sum += 1.0 / pow((double)(i + 1), o->zipf);
        cdf[i] = sum;
        perm[i] = i;
    }
    for (unsigned i = o->objects - 1; i > 0; i--) {
        unsigned k = (unsigned)(pl_rng_next(&r) % (i + 1));
        uint32_t t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }
    w->warmup = o->warmup;
    w->nreq = o->warmup + o->requests;
    w->req = pl_alloc(w->nreq * sizeof *w->req);
    for (unsigned long q = 0; q < w->nreq; q++) {
        double u = pl_rng_unit(&r) * sum;
        unsigned lo = 0, hi = o->objects - 1;
        while (lo < hi) {
            unsigned mid = lo + (hi - lo) / 2;
            if (cdf[mid] < u)
                lo = mid + 1;
            else
                hi = mid;
        }
        w->req[q] = perm[lo];
    }
    uint64_t budget = o->budget ? o->budget : (uint64_t)((double)total * o->budget_frac);
    w->budget = budget / o->clients;
    memcpy(sorted, w->size, o->objects * sizeof *sorted);
    qsort(sorted, o->objects, sizeof *sorted, px_cmp_u32);
    printf("objects %u\ncatalogue_bytes %" PRIu64 "\nbudget_bytes %" PRIu64 "\n", o->objects, total,
           w->budget * o->clients);
    printf("size_median %u\nsize_mean %.1f\nsize_p90 %u\nsize_p99 %u\nsize_max %u\n",
           sorted[o->objects / 2], (double)total / o->objects, sorted[o->objects * 9 / 10],
           sorted[o->objects * 99 / 100], sorted[o->objects - 1]);
    printf("zipf %.3f\nwarmup %lu\nrequests %lu\nclients %u\n", o->zipf, o->warmup, o->requests,
           o->clients);
    fflush(stdout);
    free(sorted);
    free(perm);
    free(cdf);
}

typedef struct {
    pl_conn c;
    pl_fh sub[PX_SUBDIRS];
    pl_fh base;
    uint32_t *fifo; /* cached objects, oldest first (a ring) */
    size_t head, count;
    bool *cached;
    uint64_t bytes;
    unsigned char *buf;
    uint32_t io;
} px_state;

static void px_name(char *buf, size_t n, uint32_t obj)
{
    snprintf(buf, n, "o%u", obj);
}

/* One request for obj; true if it was a hit. Counts into cl if timed. */
static bool px_request(px_client *cl, px_state *s, uint32_t obj, bool timed)
{
    const px_world *w = cl->w;
    uint32_t size = w->size[obj];
    const pl_fh *dir = &s->sub[obj % PX_SUBDIRS];
    char name[PL_NAME_MAX];
    pl_req r = {.c = &s->c};
    pl_fh fh;
    double t0 = pl_now(), t1;

    px_name(name, sizeof name, obj);
    if (s->cached[obj]) {
        pl_lookup(&r, dir, name);
        pl_sync(&r, NFS3_OK, "proxy LOOKUP");
        fh = r.fh;
        for (uint64_t off = 0; off < size;) {
            uint32_t n = (uint32_t)(size - off < s->io ? size - off : s->io);
            pl_read(&r, &fh, off, n);
            pl_service(s->c.rpc, &r.done, NULL, 0, "proxy READ");
            if (r.nfs != NFS3_OK || r.count == 0)
                pl_die("proxy READ of object %u at %" PRIu64 ": status %d, %u bytes", obj, off,
                       r.nfs, r.count);
            off += r.count;
        }
        if (timed) {
            cl->bytes_read += size;
            cl->read_s += pl_now() - t0;
        }
        return true;
    }
    pl_create(&r, dir, name, true);
    pl_sync(&r, NFS3_OK, "proxy CREATE");
    fh = r.fh;
    for (uint64_t off = 0; off < size;) {
        uint32_t n = (uint32_t)(size - off < s->io ? size - off : s->io);
        pat_fill(s->buf, off, n, obj);
        pl_write(&r, &fh, off, s->buf, n, UNSTABLE);
        pl_sync(&r, NFS3_OK, "proxy WRITE");
        off += r.count;
    }
    pl_commit(&r, &fh);
    pl_sync(&r, NFS3_OK, "proxy COMMIT");
    s->cached[obj] = true;
    s->fifo[(s->head + s->count++) % w->nobj] = obj;
    s->bytes += size;
    t1 = pl_now();
    if (timed) {
        cl->bytes_written += size;
        cl->write_s += t1 - t0;
    }
    while (s->bytes > w->budget && s->count > 1) {
        uint32_t old = s->fifo[s->head];
        s->head = (s->head + 1) % w->nobj;
        s->count--;
        px_name(name, sizeof name, old);
        pl_remove(&r, &s->sub[old % PX_SUBDIRS], name);
        pl_sync(&r, NFS3_OK, "proxy REMOVE");
        s->cached[old] = false;
        s->bytes -= w->size[old];
        if (timed)
            cl->evictions++;
    }
    if (timed)
        cl->evict_s += pl_now() - t1;
    return false;
}

static void *px_run(void *arg)
{
    px_client *cl = arg;
    const pl_opts *o = cl->o;
    const px_world *w = cl->w;
    px_state *s = pl_alloc(sizeof *s);
    pl_req r;
    char name[PL_NAME_MAX];

    pl_open(&o->url, &s->c);
    s->io = pl_xfer(pl_xfer(o->io, s->c.wtmax), s->c.rtmax);
    s->buf = pl_alloc(s->io);
    s->fifo = pl_alloc(w->nobj * sizeof *s->fifo);
    s->cached = pl_alloc(w->nobj * sizeof *s->cached);
    r = (pl_req){.c = &s->c};
    snprintf(name, sizeof name, "%s-proxy-%u", o->dir, cl->id);
    pl_mkdir(&r, &s->c.root, name);
    pl_sync(&r, NFS3_OK, "MKDIR");
    s->base = r.fh;
    for (unsigned d = 0; d < PX_SUBDIRS; d++) {
        char sub[8];
        snprintf(sub, sizeof sub, "%02x", d);
        pl_mkdir(&r, &s->base, sub);
        pl_sync(&r, NFS3_OK, "MKDIR");
        s->sub[d] = r.fh;
    }
    /* This client serves the objects whose number is its id modulo the
     * number of clients, in the stream's order. */
    for (unsigned long q = 0; q < w->warmup; q++)
        if (w->req[q] % o->clients == cl->id)
            px_request(cl, s, w->req[q], false);
    pthread_barrier_wait(cl->bar); /* warmed up */
    pthread_barrier_wait(cl->bar); /* go */
    cl->start = pl_now();
    for (unsigned long q = w->warmup; q < w->nreq; q++) {
        if (w->req[q] % o->clients != cl->id)
            continue;
        cl->requests++;
        if (px_request(cl, s, w->req[q], true))
            cl->hits++;
        else
            cl->misses++;
    }
    cl->end = pl_now();
    pthread_barrier_wait(cl->bar); /* done */
    pthread_barrier_wait(cl->bar); /* statistics taken */
    for (size_t k = 0; k < s->count; k++) {
        uint32_t obj = s->fifo[(s->head + k) % w->nobj];
        px_name(name, sizeof name, obj);
        pl_remove(&r, &s->sub[obj % PX_SUBDIRS], name);
        pl_sync(&r, NFS3_OK, "REMOVE");
    }
    for (unsigned d = 0; d < PX_SUBDIRS; d++) {
        char sub[8];
        snprintf(sub, sizeof sub, "%02x", d);
        pl_rmdir(&r, &s->base, sub);
        pl_sync(&r, NFS3_OK, "RMDIR");
    }
    snprintf(name, sizeof name, "%s-proxy-%u", o->dir, cl->id);
    pl_rmdir(&r, &s->c.root, name);
    pl_sync(&r, NFS3_OK, "RMDIR");
    pl_close(&s->c);
    free(s->cached);
    free(s->fifo);
    free(s->buf);
    free(s);
    return NULL;
}

static int cmd_proxy(const pl_opts *o)
{
    px_world w = {0};
    px_client *cl = pl_alloc(o->clients * sizeof *cl);
    pthread_t *th = pl_alloc(o->clients * sizeof *th);
    pthread_barrier_t bar;
    px_client sum = {0};
    double start = 0, end = 0;

    if (o->objects < 2)
        pl_die("proxy: --objects must be at least 2");
    px_world_make(o, &w);
    pthread_barrier_init(&bar, NULL, o->clients + 1);
    for (unsigned i = 0; i < o->clients; i++) {
        cl[i] = (px_client){.o = o, .w = &w, .id = i, .bar = &bar};
        if (pthread_create(&th[i], NULL, px_run, &cl[i]) != 0)
            pl_die("pthread_create failed");
    }
    pthread_barrier_wait(&bar);
    pl_hook(o, "proxy", "before");
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    pl_hook(o, "proxy", "after");
    for (unsigned i = 0; i < o->clients; i++) {
        sum.requests += cl[i].requests;
        sum.hits += cl[i].hits;
        sum.misses += cl[i].misses;
        sum.evictions += cl[i].evictions;
        sum.bytes_read += cl[i].bytes_read;
        sum.bytes_written += cl[i].bytes_written;
        sum.read_s += cl[i].read_s;
        sum.write_s += cl[i].write_s;
        sum.evict_s += cl[i].evict_s;
        if (i == 0 || cl[i].start < start)
            start = cl[i].start;
        end = cl[i].end > end ? cl[i].end : end;
    }
    pthread_barrier_wait(&bar);
    for (unsigned i = 0; i < o->clients; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
    printf("timed_requests %" PRIu64 "\nhits %" PRIu64 "\nmisses %" PRIu64 "\nevictions %" PRIu64
           "\n",
           sum.requests, sum.hits, sum.misses, sum.evictions);
    printf("hit_ratio %.4f\nbytes_read %" PRIu64 "\nbytes_written %" PRIu64 "\n",
           sum.requests ? (double)sum.hits / (double)sum.requests : 0.0, sum.bytes_read,
           sum.bytes_written);
    /* Mean client-side time of one object: a hit's LOOKUP and READs, a
     * miss's CREATE, WRITEs and COMMIT, one eviction's REMOVE. */
    printf("read_ms_mean %.4f\nwrite_ms_mean %.4f\nevict_ms_mean %.4f\n",
           sum.hits ? 1e3 * sum.read_s / (double)sum.hits : 0.0,
           sum.misses ? 1e3 * sum.write_s / (double)sum.misses : 0.0,
           sum.evictions ? 1e3 * sum.evict_s / (double)sum.evictions : 0.0);
    printf("seconds %.6f\nobjects_s %.3f\nmb_s %.3f\n", end - start,
           (double)sum.requests / (end - start),
           (double)(sum.bytes_read + sum.bytes_written) / 1e6 / (end - start));
    free(w.req);
    free(w.size);
    free(th);
    free(cl);
    return 0;
}

/* --- command line ---------------------------------------------------------------- */

/* "nfs://HOST/EXPORT?nfsport=P&mountport=P". Returns 0 or -1. */
static int pl_parse_url(const char *s, pl_url *u)
{
    const char *p, *q;

    memset(u, 0, sizeof *u);
    if (strncmp(s, "nfs://", 6) != 0)
        return -1;
    s += 6;
    p = strchr(s, '/');
    q = strchr(s, '?');
    if (!p || (q && q < p))
        p = q ? q : s + strlen(s);
    if ((size_t)(p - s) >= sizeof u->host || p == s)
        return -1;
    memcpy(u->host, s, (size_t)(p - s));
    q = strchr(p, '?');
    size_t elen = q ? (size_t)(q - p) : strlen(p);
    if (elen >= sizeof u->export)
        return -1;
    memcpy(u->export, p, elen);
    if (elen == 0 || u->export[0] != '/')
        snprintf(u->export, sizeof u->export, "/");
    u->nfsport = 2049;
    u->mountport = 0;
    for (q = q ? q + 1 : NULL; q && *q;) {
        const char *amp = strchr(q, '&');
        size_t n = amp ? (size_t)(amp - q) : strlen(q);
        if (n > 8 && strncmp(q, "nfsport=", 8) == 0)
            u->nfsport = atoi(q + 8);
        else if (n > 10 && strncmp(q, "mountport=", 10) == 0)
            u->mountport = atoi(q + 10);
        q = amp ? amp + 1 : NULL;
    }
    if (!u->mountport)
        u->mountport = u->nfsport;
    return u->nfsport > 0 && u->mountport > 0 ? 0 : -1;
}

/* A size with an optional K, M or G suffix (powers of 1024). */
static uint64_t pl_size_arg(const char *opt, const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10, end++;
        break;
    case 'm':
    case 'M':
        v <<= 20, end++;
        break;
    case 'g':
    case 'G':
        v <<= 30, end++;
        break;
    default:
        break;
    }
    if (end == s || *end)
        pl_die("%s: '%s' is not a size", opt, s);
    return v;
}

static double pl_num_arg(const char *opt, const char *s)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || *end)
        pl_die("%s: '%s' is not a number", opt, s);
    return v;
}

static void pl_usage(void)
{
    fputs("usage: pload URL seqwrite|seqread|churn|meta|proxy [options] (see pload.c)\n", stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    static char dir[PL_NAME_MAX];
    pl_opts o = {
        .name = "seqfile",
        .size = 0,
        .io = 1u << 20,
        .depth = 8,
        .clients = 1,
        .seconds = 5,
        .stable = UNSTABLE,
        .entries = 10000,
        .objects = 20000,
        .requests = 40000,
        .warmup = 20000,
        .budget_frac = 0.3,
        .zipf = 0.8,
        .sigma = 1.0,
        .tail = 0.1,
        .alpha = 1.2,
        .median = 8192,
        .tail_min = 32768,
        .cap = 1u << 20,
        .seed = 1,
    };
    bool size_given = false;

    if (argc < 3)
        pl_usage();
    if (pl_parse_url(argv[1], &o.url) != 0)
        pl_die("'%s' is not nfs://HOST/EXPORT?nfsport=P&mountport=P", argv[1]);
    o.mode = argv[2];
    snprintf(dir, sizeof dir, "pload%ld", (long)getpid());
    o.dir = dir;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            pl_die("%s needs a value", a);
        i++;
        if (!strcmp(a, "--name"))
            o.name = v;
        else if (!strcmp(a, "--dir"))
            o.dir = v;
        else if (!strcmp(a, "--hook"))
            o.hook = v;
        else if (!strcmp(a, "--ops"))
            o.ops = v;
        else if (!strcmp(a, "--size"))
            o.size = pl_size_arg(a, v), size_given = true;
        else if (!strcmp(a, "--io"))
            o.io = (uint32_t)pl_size_arg(a, v);
        else if (!strcmp(a, "--depth"))
            o.depth = (unsigned)pl_num_arg(a, v);
        else if (!strcmp(a, "--clients"))
            o.clients = (unsigned)pl_num_arg(a, v);
        else if (!strcmp(a, "--seconds"))
            o.seconds = pl_num_arg(a, v);
        else if (!strcmp(a, "--entries"))
            o.entries = (unsigned)pl_num_arg(a, v);
        else if (!strcmp(a, "--dircount"))
            o.dircount = (uint32_t)pl_size_arg(a, v);
        else if (!strcmp(a, "--objects"))
            o.objects = (unsigned)pl_num_arg(a, v);
        else if (!strcmp(a, "--requests"))
            o.requests = (unsigned long)pl_num_arg(a, v);
        else if (!strcmp(a, "--warmup"))
            o.warmup = (unsigned long)pl_num_arg(a, v);
        else if (!strcmp(a, "--budget"))
            o.budget = pl_size_arg(a, v);
        else if (!strcmp(a, "--budget-frac"))
            o.budget_frac = pl_num_arg(a, v);
        else if (!strcmp(a, "--zipf"))
            o.zipf = pl_num_arg(a, v);
        else if (!strcmp(a, "--median"))
            o.median = pl_size_arg(a, v);
        else if (!strcmp(a, "--sigma"))
            o.sigma = pl_num_arg(a, v);
        else if (!strcmp(a, "--tail"))
            o.tail = pl_num_arg(a, v);
        else if (!strcmp(a, "--alpha"))
            o.alpha = pl_num_arg(a, v);
        else if (!strcmp(a, "--tail-min"))
            o.tail_min = pl_size_arg(a, v);
        else if (!strcmp(a, "--cap"))
            o.cap = pl_size_arg(a, v);
        else if (!strcmp(a, "--seed"))
            o.seed = (uint64_t)pl_num_arg(a, v);
        else if (!strcmp(a, "--stable"))
            o.stable = !strcmp(v, "file") ? FILE_SYNC : !strcmp(v, "data") ? DATA_SYNC : UNSTABLE;
        else
            pl_die("unknown option %s", a);
    }
    if (o.depth < 1 || o.clients < 1 || o.io < 1 || o.seconds <= 0)
        pl_die("--depth, --clients, --io and --seconds must be positive");
    if (!strcmp(o.mode, "seqwrite")) {
        if (!size_given)
            o.size = 1ull << 30;
        return cmd_seqwrite(&o);
    }
    if (!strcmp(o.mode, "seqread"))
        return cmd_seqread(&o);
    if (!strcmp(o.mode, "churn")) {
        if (!size_given)
            o.size = 4096;
        if (o.size < 1 || o.size > o.io)
            pl_die("churn: --size must be between 1 and --io");
        return cmd_churn(&o);
    }
    if (!strcmp(o.mode, "meta"))
        return cmd_meta(&o);
    if (!strcmp(o.mode, "proxy"))
        return cmd_proxy(&o);
    pl_usage();
    return 2;
}
