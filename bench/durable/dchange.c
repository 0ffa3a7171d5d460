/*
 * dchange.c -- the durable changes, one after the other, timed one by one:
 * the client of bench/durable/run.
 *
 *   dchange URL [--clients N] [--seconds S] [--size BYTES] [--commit] [--hook CMD]
 *
 * Each of N clients (a thread, a connection and a directory of its own)
 * repeats one round for S seconds:
 *
 *   CREATE f (GUARDED)          SETATTR f (chmod)     WRITE f FILE_SYNC
 *   LINK f g                    RENAME g h            REMOVE h
 *   SYMLINK s                   REMOVE s              MKDIR m
 *   RMDIR m                     MKNOD p (a FIFO)      REMOVE p
 *   REMOVE f
 *
 * every one of which changes the file system and, on a sync export, must
 * be on disk before its reply; with --commit the round is CREATE f, WRITE
 * f UNSTABLE, COMMIT f, REMOVE f instead (so that a server's figures for
 * WRITE hold one kind of write only). URL is "nfs://HOST/EXPORT?nfsport=P&
 * mountport=P". --hook CMD runs "CMD changes before" and "CMD changes
 * after" around the timed part (the runner takes the server's statistics
 * there).
 *
 * Output: "key value" lines: clients, seconds, rounds, rounds_s, and per
 * procedure PROC_calls and PROC_us (the client's mean latency in
 * microseconds).
 *
 * NOTES
 *   Exit status 0, or 1 after a message naming the call that failed (no
 *   reply within DC_TIMEOUT_S, a broken connection, a status other than
 *   NFS3_OK). Threads: one rpc_context each. Memory: replies are copied
 *   (handles) in the callback; nothing outlives its call.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#define DC_TIMEOUT_S  300
#define DC_FH_MAX     64
#define DC_CLIENTS    256
#define DC_WRITE_SIZE 4096

typedef enum {
    DC_CREATE,
    DC_SETATTR,
    DC_WRITE,
    DC_UWRITE,
    DC_COMMIT,
    DC_LINK,
    DC_RENAME,
    DC_REMOVE,
    DC_SYMLINK,
    DC_MKDIR,
    DC_RMDIR,
    DC_MKNOD,
    DC_NPROCS
} dc_proc;

static const char *const dc_names[DC_NPROCS] = {"CREATE",  "SETATTR", "WRITE",  "WRITE_UNSTABLE",
                                                "COMMIT",  "LINK",    "RENAME", "REMOVE",
                                                "SYMLINK", "MKDIR",   "RMDIR",  "MKNOD"};

typedef struct {
    uint32_t len;
    unsigned char data[DC_FH_MAX];
} dc_fh;

/* One call waited for: what the callback leaves. */
typedef struct {
    bool done;
    int rpc;  /* RPC_STATUS_* */
    int nfs;  /* the reply's nfsstat3 */
    dc_fh fh; /* CREATE, MKDIR: the new object's handle */
    char err[256];
} dc_wait;

typedef struct {
    char host[256], export[1024];
    int nfsport, mountport;
    unsigned clients;
    double seconds;
    uint32_t size;
    const char *hook;
    bool commit; /* the COMMIT round */
} dc_opts;

/* A client's figures. */
typedef struct {
    unsigned index;
    const dc_opts *o;
    uint64_t calls[DC_NPROCS];
    double us[DC_NPROCS];
    uint64_t rounds;
} dc_client;

static pthread_barrier_t dc_ready, dc_go, dc_timed;
static double dc_end;

static void dc_die(const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fputs("dchange: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static double dc_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static nfs_fh3 dc_fh3(const dc_fh *fh)
{
    nfs_fh3 f = {.data = {.data_len = fh->len, .data_val = (char *)fh->data}};
    return f;
}

static void dc_fh_copy(dc_fh *dst, const char *val, uint32_t len)
{
    if (len > DC_FH_MAX)
        dc_die("a file handle of %u bytes", len);
    dst->len = len;
    memcpy(dst->data, val, len);
}

/* Run rpc's loop until w is done; dies on a broken connection or timeout. */
static void dc_service(struct rpc_context *rpc, dc_wait *w, const char *what)
{
    double deadline = dc_now() + DC_TIMEOUT_S;

    while (!w->done) {
        struct pollfd p = {.fd = rpc_get_fd(rpc), .events = (short)rpc_which_events(rpc)};
        int n = poll(&p, 1, 1000);

        if (n < 0 && errno != EINTR)
            dc_die("%s: poll: %s", what, strerror(errno));
        if (rpc_service(rpc, n > 0 ? p.revents : 0) < 0)
            dc_die("%s: connection failed: %s", what, rpc_get_error(rpc));
        if (dc_now() > deadline)
            dc_die("%s: no reply within %d s", what, DC_TIMEOUT_S);
    }
    if (w->rpc != RPC_STATUS_SUCCESS)
        dc_die("%s: %s", what, w->err);
}

/* Connecting, and every NFS reply: the status, and a new object's handle. */
static void dc_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
    dc_wait *w = private_data;

    (void)rpc;
    w->done = true;
    w->rpc = status;
    if (status != RPC_STATUS_SUCCESS) {
        snprintf(w->err, sizeof w->err, "%s", data ? (const char *)data : "cancelled");
        return;
    }
    w->nfs = data ? (int)*(const nfsstat3 *)data : 0;
}

static void dc_create_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
    dc_wait *w = private_data;
    const CREATE3res *r = data;

    dc_cb(rpc, status, data, private_data);
    if (status == RPC_STATUS_SUCCESS && r->status == NFS3_OK &&
        r->CREATE3res_u.resok.obj.handle_follows) {
        const nfs_fh3 *h = &r->CREATE3res_u.resok.obj.post_op_fh3_u.handle;
        dc_fh_copy(&w->fh, h->data.data_val, h->data.data_len);
    }
}

static void dc_mkdir_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
    dc_wait *w = private_data;
    const MKDIR3res *r = data;

    dc_cb(rpc, status, data, private_data);
    if (status == RPC_STATUS_SUCCESS && r->status == NFS3_OK &&
        r->MKDIR3res_u.resok.obj.handle_follows) {
        const nfs_fh3 *h = &r->MKDIR3res_u.resok.obj.post_op_fh3_u.handle;
        dc_fh_copy(&w->fh, h->data.data_val, h->data.data_len);
    }
}

static void dc_mnt_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
    dc_wait *w = private_data;
    const mountres3 *r = data;

    dc_cb(rpc, status, NULL, private_data);
    if (status != RPC_STATUS_SUCCESS)
        return;
    w->nfs = (int)r->fhs_status;
    if (r->fhs_status == MNT3_OK)
        dc_fh_copy(&w->fh, r->mountres3_u.mountinfo.fhandle.fhandle3_val,
                   r->mountres3_u.mountinfo.fhandle.fhandle3_len);
}

static struct rpc_context *dc_connect(const dc_opts *o, int port)
{
    struct rpc_context *rpc = rpc_init_context();
    dc_wait w = {0};

    if (!rpc)
        dc_die("rpc_init_context failed");
    rpc_set_auth(rpc, libnfs_authunix_create("dchange", 0, 0, 0, NULL));
    if (rpc_connect_async(rpc, o->host, port, dc_cb, &w) != 0)
        dc_die("connect %s:%d: %s", o->host, port, rpc_get_error(rpc));
    dc_service(rpc, &w, "connect");
    return rpc;
}

/* Check a call was queued (rc) and wait for its reply, which must be OK. */
static void dc_call(struct rpc_context *rpc, int rc, dc_wait *w, const char *what)
{
    if (rc != 0)
        dc_die("%s: cannot queue the call: %s", what, rpc_get_error(rpc));
    dc_service(rpc, w, what);
    if (w->nfs != NFS3_OK)
        dc_die("%s: NFS status %d", what, w->nfs);
}

/* One procedure, timed into cl's figures. */
#define DC_TIMED(cl, proc, stmt)                                                                   \
    do {                                                                                           \
        double t0_ = dc_now();                                                                     \
        stmt;                                                                                      \
        (cl)->us[proc] += (dc_now() - t0_) * 1e6;                                                  \
        (cl)->calls[proc]++;                                                                       \
    } while (0)

static void dc_round(dc_client *cl, struct rpc_context *rpc, const dc_fh *dir,
                     const unsigned char *buf)
{
    dc_wait w;
    dc_fh f;
    diropargs3 at_f = {.dir = dc_fh3(dir), .name = "f"};
    diropargs3 at_g = {.dir = dc_fh3(dir), .name = "g"};
    diropargs3 at_h = {.dir = dc_fh3(dir), .name = "h"};
    diropargs3 at_s = {.dir = dc_fh3(dir), .name = "s"};
    diropargs3 at_m = {.dir = dc_fh3(dir), .name = "m"};
    diropargs3 at_p = {.dir = dc_fh3(dir), .name = "p"};

    CREATE3args ca = {.where = at_f};
    ca.how.mode = GUARDED;
    ca.how.createhow3_u.obj_attributes.mode.set_it = 1;
    ca.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
    w = (dc_wait){0};
    DC_TIMED(cl, DC_CREATE,
             dc_call(rpc, rpc_nfs3_create_async(rpc, dc_create_cb, &ca, &w), &w, "CREATE"));
    if (!w.fh.len)
        dc_die("CREATE: no handle in the reply");
    f = w.fh;

    REMOVE3args rm = {.object = at_f};
    if (cl->o->commit) {
        WRITE3args ua = {.file = dc_fh3(&f), .count = cl->o->size, .stable = UNSTABLE};
        COMMIT3args cm = {.file = dc_fh3(&f)};

        ua.data.data_len = cl->o->size;
        ua.data.data_val = (char *)buf;
        w = (dc_wait){0};
        DC_TIMED(cl, DC_UWRITE,
                 dc_call(rpc, rpc_nfs3_write_async(rpc, dc_cb, &ua, &w), &w, "WRITE UNSTABLE"));
        w = (dc_wait){0};
        DC_TIMED(cl, DC_COMMIT,
                 dc_call(rpc, rpc_nfs3_commit_async(rpc, dc_cb, &cm, &w), &w, "COMMIT"));
        w = (dc_wait){0};
        DC_TIMED(cl, DC_REMOVE,
                 dc_call(rpc, rpc_nfs3_remove_async(rpc, dc_cb, &rm, &w), &w, "REMOVE"));
        cl->rounds++;
        return;
    }

    SETATTR3args sa = {.object = dc_fh3(&f)};
    sa.new_attributes.mode.set_it = 1;
    sa.new_attributes.mode.set_mode3_u.mode = 0600;
    w = (dc_wait){0};
    DC_TIMED(cl, DC_SETATTR,
             dc_call(rpc, rpc_nfs3_setattr_async(rpc, dc_cb, &sa, &w), &w, "SETATTR"));

    WRITE3args wa = {.file = dc_fh3(&f), .offset = 0, .count = cl->o->size, .stable = FILE_SYNC};
    wa.data.data_len = cl->o->size;
    wa.data.data_val = (char *)buf;
    w = (dc_wait){0};
    DC_TIMED(cl, DC_WRITE, dc_call(rpc, rpc_nfs3_write_async(rpc, dc_cb, &wa, &w), &w, "WRITE"));

    LINK3args la = {.file = dc_fh3(&f), .link = at_g};
    w = (dc_wait){0};
    DC_TIMED(cl, DC_LINK, dc_call(rpc, rpc_nfs3_link_async(rpc, dc_cb, &la, &w), &w, "LINK"));

    RENAME3args ra = {.from = at_g, .to = at_h};
    w = (dc_wait){0};
    DC_TIMED(cl, DC_RENAME, dc_call(rpc, rpc_nfs3_rename_async(rpc, dc_cb, &ra, &w), &w, "RENAME"));

    rm.object = at_h;
    w = (dc_wait){0};
    DC_TIMED(cl, DC_REMOVE, dc_call(rpc, rpc_nfs3_remove_async(rpc, dc_cb, &rm, &w), &w, "REMOVE"));

    SYMLINK3args sl = {.where = at_s};
    sl.symlink.symlink_data = "f";
    w = (dc_wait){0};
    DC_TIMED(cl, DC_SYMLINK,
             dc_call(rpc, rpc_nfs3_symlink_async(rpc, dc_cb, &sl, &w), &w, "SYMLINK"));
    rm.object = at_s;
    w = (dc_wait){0};
    DC_TIMED(cl, DC_REMOVE, dc_call(rpc, rpc_nfs3_remove_async(rpc, dc_cb, &rm, &w), &w, "REMOVE"));

    MKDIR3args ma = {.where = at_m};
    ma.attributes.mode.set_it = 1;
    ma.attributes.mode.set_mode3_u.mode = 0755;
    w = (dc_wait){0};
    DC_TIMED(cl, DC_MKDIR,
             dc_call(rpc, rpc_nfs3_mkdir_async(rpc, dc_mkdir_cb, &ma, &w), &w, "MKDIR"));
    RMDIR3args rd = {.object = at_m};
    w = (dc_wait){0};
    DC_TIMED(cl, DC_RMDIR, dc_call(rpc, rpc_nfs3_rmdir_async(rpc, dc_cb, &rd, &w), &w, "RMDIR"));

    MKNOD3args na = {.where = at_p};
    na.what.type = NF3FIFO;
    na.what.mknoddata3_u.pipe_attributes.mode.set_it = 1;
    na.what.mknoddata3_u.pipe_attributes.mode.set_mode3_u.mode = 0644;
    w = (dc_wait){0};
    DC_TIMED(cl, DC_MKNOD, dc_call(rpc, rpc_nfs3_mknod_async(rpc, dc_cb, &na, &w), &w, "MKNOD"));
    rm.object = at_p;
    w = (dc_wait){0};
    DC_TIMED(cl, DC_REMOVE, dc_call(rpc, rpc_nfs3_remove_async(rpc, dc_cb, &rm, &w), &w, "REMOVE"));

    rm.object = at_f;
    w = (dc_wait){0};
    DC_TIMED(cl, DC_REMOVE, dc_call(rpc, rpc_nfs3_remove_async(rpc, dc_cb, &rm, &w), &w, "REMOVE"));
    cl->rounds++;
}

static void *dc_client_run(void *arg)
{
    dc_client *cl = arg;
    const dc_opts *o = cl->o;
    struct rpc_context *m = dc_connect(o, o->mountport);
    struct rpc_context *rpc;
    unsigned char *buf = calloc(1, o->size);
    char name[64];
    dc_fh root, dir;
    dc_wait w = {0};

    if (!buf)
        dc_die("out of memory");
    memset(buf, 'a' + (int)(cl->index % 26), o->size);
    if (rpc_mount3_mnt_async(m, dc_mnt_cb, (char *)o->export, &w) != 0)
        dc_die("MNT %s: %s", o->export, rpc_get_error(m));
    dc_service(m, &w, "MNT");
    if (w.nfs != MNT3_OK)
        dc_die("MNT %s: status %d", o->export, w.nfs);
    root = w.fh;
    rpc_destroy_context(m);
    rpc = dc_connect(o, o->nfsport);
    snprintf(name, sizeof name, "dchange.%ld.%u", (long)getpid(), cl->index);
    MKDIR3args ma = {.where = {.dir = dc_fh3(&root), .name = name}};
    ma.attributes.mode.set_it = 1;
    ma.attributes.mode.set_mode3_u.mode = 0755;
    w = (dc_wait){0};
    dc_call(rpc, rpc_nfs3_mkdir_async(rpc, dc_mkdir_cb, &ma, &w), &w, "MKDIR (the client's)");
    dir = w.fh;

    pthread_barrier_wait(&dc_ready);
    pthread_barrier_wait(&dc_go);
    while (dc_now() < dc_end)
        dc_round(cl, rpc, &dir, buf);
    pthread_barrier_wait(&dc_timed); /* the runner's statistics, then clean up */
    pthread_barrier_wait(&dc_timed);

    RMDIR3args rd = {.object = {.dir = dc_fh3(&root), .name = name}};
    w = (dc_wait){0};
    dc_call(rpc, rpc_nfs3_rmdir_async(rpc, dc_cb, &rd, &w), &w, "RMDIR (the client's)");
    rpc_destroy_context(rpc);
    free(buf);
    return NULL;
}

/* "nfs://HOST/EXPORT?nfsport=P&mountport=P". Returns 0 or -1. */
static int dc_parse_url(const char *s, dc_opts *o)
{
    const char *p, *q;
    size_t n;

    if (strncmp(s, "nfs://", 6) != 0)
        return -1;
    s += 6;
    p = s + strcspn(s, "/?");
    if (p == s || (size_t)(p - s) >= sizeof o->host)
        return -1;
    memcpy(o->host, s, (size_t)(p - s));
    q = strchr(p, '?');
    n = q ? (size_t)(q - p) : strlen(p);
    if (n >= sizeof o->export)
        return -1;
    memcpy(o->export, p, n);
    if (n == 0)
        strcpy(o->export, "/");
    o->nfsport = 2049;
    for (q = q ? q + 1 : NULL; q && *q; q = strchr(q, '&') ? strchr(q, '&') + 1 : NULL) {
        if (strncmp(q, "nfsport=", 8) == 0)
            o->nfsport = atoi(q + 8);
        else if (strncmp(q, "mountport=", 10) == 0)
            o->mountport = atoi(q + 10);
    }
    if (!o->mountport)
        o->mountport = o->nfsport;
    return o->nfsport > 0 ? 0 : -1;
}

static void dc_hook(const dc_opts *o, const char *when)
{
    char cmd[4096];

    if (!o->hook)
        return;
    snprintf(cmd, sizeof cmd, "%s changes %s", o->hook, when);
    fflush(stdout);
    if (system(cmd) != 0)
        dc_die("hook '%s' failed", cmd);
}

int main(int argc, char **argv)
{
    dc_opts o = {.clients = 1, .seconds = 5, .size = DC_WRITE_SIZE};
    dc_client *cl;
    pthread_t *th;
    double t0, t1;
    uint64_t calls[DC_NPROCS] = {0}, rounds = 0;
    double us[DC_NPROCS] = {0};

    if (argc < 2 || dc_parse_url(argv[1], &o) != 0)
        dc_die("usage: dchange nfs://HOST/EXPORT?nfsport=P&mountport=P [--clients N] "
               "[--seconds S] [--size BYTES] [--commit] [--hook CMD]");
    for (int i = 2; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v && strcmp(argv[i], "--commit") != 0)
            dc_die("%s needs a value", argv[i]);
        if (strcmp(argv[i], "--clients") == 0)
            o.clients = (unsigned)atoi(v);
        else if (strcmp(argv[i], "--seconds") == 0)
            o.seconds = atof(v);
        else if (strcmp(argv[i], "--size") == 0)
            o.size = (uint32_t)atoi(v);
        else if (strcmp(argv[i], "--hook") == 0)
            o.hook = v;
        else if (strcmp(argv[i], "--commit") == 0) {
            o.commit = true;
            continue;
        } else
            dc_die("unknown option %s", argv[i]);
        i++;
    }
    if (o.clients < 1 || o.clients > DC_CLIENTS || o.seconds <= 0 || o.size < 1 || o.size > 1048576)
        dc_die("--clients 1..%d, --seconds > 0, --size 1..1048576", DC_CLIENTS);
    cl = calloc(o.clients, sizeof *cl);
    th = calloc(o.clients, sizeof *th);
    if (!cl || !th)
        dc_die("out of memory");
    pthread_barrier_init(&dc_ready, NULL, o.clients + 1);
    pthread_barrier_init(&dc_go, NULL, o.clients + 1);
    pthread_barrier_init(&dc_timed, NULL, o.clients + 1);
    for (unsigned i = 0; i < o.clients; i++) {
        cl[i] = (dc_client){.index = i, .o = &o};
        if (pthread_create(&th[i], NULL, dc_client_run, &cl[i]) != 0)
            dc_die("cannot start client %u", i);
    }
    pthread_barrier_wait(&dc_ready);
    dc_hook(&o, "before");
    t0 = dc_now();
    dc_end = t0 + o.seconds;
    pthread_barrier_wait(&dc_go);
    pthread_barrier_wait(&dc_timed);
    t1 = dc_now();
    dc_hook(&o, "after");
    pthread_barrier_wait(&dc_timed);
    for (unsigned i = 0; i < o.clients; i++)
        pthread_join(th[i], NULL);
    for (unsigned i = 0; i < o.clients; i++) {
        rounds += cl[i].rounds;
        for (int p = 0; p < DC_NPROCS; p++) {
            calls[p] += cl[i].calls[p];
            us[p] += cl[i].us[p];
        }
    }
    printf("clients %u\nseconds %.3f\nrounds %" PRIu64 "\nrounds_s %.1f\n", o.clients, t1 - t0,
           rounds, (double)rounds / (t1 - t0));
    for (int p = 0; p < DC_NPROCS; p++)
        printf("%s_calls %" PRIu64 "\n%s_us %.1f\n", dc_names[p], calls[p], dc_names[p],
               calls[p] ? us[p] / (double)calls[p] : 0.0);
    free(cl);
    free(th);
    return 0;
}
