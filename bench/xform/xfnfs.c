/*
 * xfnfs.c -- the client half of bench/xform/e2e: transformation chains
 * measured end to end through a pgnfs server with libnfs, printed as
 * "key value" lines (or one line per measurement) the driver parses.
 *
 *   xfnfs URL first WARM[,WARM...] DIR NAME...
 *       the first access of each DIR/NAME, as a client opens a file it has
 *       not seen (NFS has no OPEN): LOOKUP in DIR, GETATTR, READ of the
 *       first 4 KiB, three RPCs timed together (libnfs's raw API, one at a
 *       time); before them, 40 such accesses of each DIR/WARM warm the
 *       server's connections and statements. Prints "NAME usec" per NAME.
 *   xfnfs URL sweep ROUNDS IO SIZES DIRS
 *       ROUNDS times, for each size of the comma-separated SIZES and each
 *       directory of DIRS (comma-separated, in an order rotated each
 *       round): write a new file of that size in IO-byte writes (create
 *       to close, which commits), then read it back (open to close) and
 *       check it. Prints "w DIR SIZE write_s" and "r DIR SIZE read_s".
 *   xfnfs URL put NAME SRC IO        write local file SRC to NAME in IO-byte
 *                                    writes; prints write_s, mb_s
 *   xfnfs URL get NAME IO [CHECK]    read NAME in IO-byte reads; prints
 *                                    read_s, mb_s, bytes (and checks it
 *                                    against local file CHECK)
 *   xfnfs URL cat NAME IO            NAME's bytes to stdout (a pipeline's
 *                                    head)
 *   xfnfs URL mkdir PATH...          make directories
 *   xfnfs inc                        stdin to stdout, each byte plus one
 *                                    (a pipeline stage)
 *
 * URL is "nfs://HOST/?nfsport=P&mountport=P&version=3". libnfs's own caches
 * and read-ahead are off: every call is an RPC.
 *
 * NOTES
 *   Exit status 0, or 1 with a message on stderr naming the call and the
 *   libnfs error; 2 for usage. File contents of sweep are a pattern of the
 *   offset and the size, so a read checks what its write wrote.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nfsc/libnfs.h>
/* (in this order: each needs the one before) */
#include <nfsc/libnfs-raw.h>
/* */
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

static double xn_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void xn_die(struct nfs_context *nfs, const char *what, const char *name)
{
    fprintf(stderr, "xfnfs: %s %s: %s\n", what, name ? name : "", nfs ? nfs_get_error(nfs) : "");
    exit(1);
}

static uint64_t xn_num(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    if (!*s || *end) {
        fprintf(stderr, "xfnfs: '%s' is not a number\n", s);
        exit(2);
    }
    return v;
}

static struct nfs_context *xn_mount(const char *url)
{
    struct nfs_context *nfs = nfs_init_context();
    struct nfs_url *u;

    if (!nfs)
        xn_die(NULL, "nfs_init_context", NULL);
    u = nfs_parse_url_dir(nfs, url);
    if (!u)
        xn_die(nfs, "parse url", url);
    if (nfs_mount(nfs, u->server, u->path) != 0)
        xn_die(nfs, "mount", url);
    nfs_destroy_url(u);
    nfs_set_dircache(nfs, 0);
    nfs_set_pagecache(nfs, 0);
    nfs_set_readahead(nfs, 0);
    return nfs;
}

/* Step mode (XFNFS_STEP=1 in the environment): before each measured
 * operation, print "ready" and wait for a line on stdin, so that the
 * driver can take the server's CPU time just before and after it (the
 * operation's result line is printed and flushed when it ends). */
static void xn_step(void)
{
    const char *e = getenv("XFNFS_STEP");
    char line[64];

    if (!e || *e != '1')
        return;
    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin))
        exit(0);
}

/* --- raw RPCs, one at a time (first) ------------------------------------- */

/* One call's outcome, as its callback saw it. */
typedef struct {
    int done, status, nfs_status;
    char fh[NFS3_FHSIZE];
    unsigned fh_len;
} xn_call;

static void xn_wait(struct rpc_context *rpc, xn_call *c, const char *what)
{
    while (!c->done) {
        struct pollfd p = {.fd = rpc_get_fd(rpc), .events = (short)rpc_which_events(rpc)};

        if (poll(&p, 1, -1) < 0 || rpc_service(rpc, p.revents) < 0) {
            fprintf(stderr, "xfnfs: %s: %s\n", what, rpc_get_error(rpc));
            exit(1);
        }
    }
    if (c->status != RPC_STATUS_SUCCESS || c->nfs_status != 0) {
        fprintf(stderr, "xfnfs: %s failed (rpc %d, nfs %d)\n", what, c->status, c->nfs_status);
        exit(1);
    }
}

static void xn_fh(xn_call *c, const char *val, unsigned len)
{
    c->fh_len = len < sizeof c->fh ? len : sizeof c->fh;
    memcpy(c->fh, val, c->fh_len);
}

static void xn_mnt_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
    xn_call *c = priv;
    mountres3 *r = data;

    (void)rpc;
    c->done = 1;
    c->status = status;
    if (status == RPC_STATUS_SUCCESS) {
        c->nfs_status = (int)r->fhs_status;
        if (r->fhs_status == MNT3_OK)
            xn_fh(c, r->mountres3_u.mountinfo.fhandle.fhandle3_val,
                  r->mountres3_u.mountinfo.fhandle.fhandle3_len);
    }
}

static void xn_lookup_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
    xn_call *c = priv;
    LOOKUP3res *r = data;

    (void)rpc;
    c->done = 1;
    c->status = status;
    if (status == RPC_STATUS_SUCCESS) {
        c->nfs_status = (int)r->status;
        if (r->status == NFS3_OK)
            xn_fh(c, r->LOOKUP3res_u.resok.object.data.data_val,
                  r->LOOKUP3res_u.resok.object.data.data_len);
    }
}

static void xn_status_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
    xn_call *c = priv;

    (void)rpc;
    c->done = 1;
    c->status = status;
    if (status == RPC_STATUS_SUCCESS)
        c->nfs_status = (int)*(nfsstat3 *)data; /* every NFS3 result begins with its status */
}

/* LOOKUP name in dir: the file's handle in *out. */
static void xn_lookup(struct rpc_context *rpc, const xn_call *dir, const char *name, xn_call *out)
{
    LOOKUP3args a;

    memset(&a, 0, sizeof a);
    memset(out, 0, sizeof *out);
    a.what.dir.data.data_len = dir->fh_len;
    a.what.dir.data.data_val = (char *)dir->fh;
    a.what.name = (char *)name;
    if (rpc_nfs3_lookup_async(rpc, xn_lookup_cb, &a, out) != 0)
        xn_die(NULL, "lookup", name);
    xn_wait(rpc, out, "LOOKUP");
}

/* LOOKUP + GETATTR + READ of 4 KiB of name in dir. */
static void xn_access(struct rpc_context *rpc, const xn_call *dir, const char *name)
{
    xn_call f, g, r;
    GETATTR3args ga;
    READ3args ra;

    xn_lookup(rpc, dir, name, &f);
    memset(&ga, 0, sizeof ga);
    memset(&g, 0, sizeof g);
    ga.object.data.data_len = f.fh_len;
    ga.object.data.data_val = f.fh;
    if (rpc_nfs3_getattr_async(rpc, xn_status_cb, &ga, &g) != 0)
        xn_die(NULL, "getattr", name);
    xn_wait(rpc, &g, "GETATTR");
    memset(&ra, 0, sizeof ra);
    memset(&r, 0, sizeof r);
    ra.file.data.data_len = f.fh_len;
    ra.file.data.data_val = f.fh;
    ra.offset = 0;
    ra.count = 4096;
    if (rpc_nfs3_read_async(rpc, xn_status_cb, &ra, &r) != 0)
        xn_die(NULL, "read", name);
    xn_wait(rpc, &r, "READ");
}

static int xn_first(struct nfs_context *nfs, int argc, char **argv)
{
    struct rpc_context *rpc = nfs_get_rpc_context(nfs);
    xn_call root, dir;

    if (argc < 3)
        return 2;
    memset(&root, 0, sizeof root);
    if (rpc_mount3_mnt_async(rpc, xn_mnt_cb, (char *)"/", &root) != 0)
        xn_die(nfs, "mnt", "/");
    xn_wait(rpc, &root, "MNT");
    xn_lookup(rpc, &root, argv[1], &dir);
    for (char *w = strtok(argv[0], ","); w; w = strtok(NULL, ","))
        for (int i = 0; i < 40; i++)
            xn_access(rpc, &dir, w);
    for (int i = 2; i < argc; i++) {
        double t0;

        xn_step();
        t0 = xn_now();
        xn_access(rpc, &dir, argv[i]);
        printf("%s %.1f\n", argv[i], (xn_now() - t0) * 1e6);
        fflush(stdout);
    }
    return 0;
}

/* --- files ---------------------------------------------------------------- */

/* The pattern byte of sweep's file of size size at offset off. */
static unsigned char xn_byte(uint64_t size, uint64_t off)
{
    return (unsigned char)(((off + size) * 2654435761u) >> 13);
}

static double xn_write_pattern(struct nfs_context *nfs, const char *name, uint64_t size,
                               uint64_t io, unsigned char *buf)
{
    struct nfsfh *fh;
    double t0 = xn_now();

    if (nfs_creat(nfs, name, 0644, &fh) != 0)
        xn_die(nfs, "creat", name);
    for (uint64_t off = 0; off < size; off += io) {
        uint64_t n = size - off < io ? size - off : io;

        for (uint64_t i = 0; i < n; i++)
            buf[i] = xn_byte(size, off + i);
        if (nfs_pwrite(nfs, fh, off, n, buf) != (int)n)
            xn_die(nfs, "pwrite", name);
    }
    if (nfs_close(nfs, fh) != 0)
        xn_die(nfs, "close", name);
    return xn_now() - t0;
}

static double xn_read_pattern(struct nfs_context *nfs, const char *name, uint64_t size, uint64_t io,
                              unsigned char *buf)
{
    struct nfsfh *fh;
    double t = 0, t0 = xn_now();

    if (nfs_open(nfs, name, O_RDONLY, &fh) != 0)
        xn_die(nfs, "open", name);
    for (uint64_t off = 0; off < size; off += io) {
        uint64_t n = size - off < io ? size - off : io;

        if (nfs_pread(nfs, fh, off, n, buf) != (int)n)
            xn_die(nfs, "pread", name);
        /* (the check is left out of the time) */
        t += xn_now() - t0;
        for (uint64_t i = 0; i < n; i++) {
            if (buf[i] != xn_byte(size, off + i)) {
                fprintf(stderr, "xfnfs: %s: byte %llu differs from what was written\n", name,
                        (unsigned long long)(off + i));
                exit(1);
            }
        }
        t0 = xn_now();
    }
    nfs_close(nfs, fh);
    return t + (xn_now() - t0);
}

/* Split a comma-separated list in place; returns the count. */
static int xn_split(char *s, char **out, int max)
{
    int n = 0;

    for (char *t = strtok(s, ","); t && n < max; t = strtok(NULL, ","))
        out[n++] = t;
    return n;
}

static int xn_sweep(struct nfs_context *nfs, int argc, char **argv)
{
    uint64_t rounds, io, max = 0;
    char *sizes_s[64], *dirs[16];
    uint64_t sizes[64];
    int nsizes, ndirs;
    unsigned char *buf;

    if (argc != 4)
        return 2;
    rounds = xn_num(argv[0]);
    io = xn_num(argv[1]);
    nsizes = xn_split(argv[2], sizes_s, 64);
    ndirs = xn_split(argv[3], dirs, 16);
    for (int i = 0; i < nsizes; i++) {
        sizes[i] = xn_num(sizes_s[i]);
        if (sizes[i] > max)
            max = sizes[i];
    }
    buf = malloc(io);
    if (!buf || io == 0)
        return 2;
    for (uint64_t r = 0; r < rounds; r++) {
        for (int s = 0; s < nsizes; s++) {
            for (int k = 0; k < ndirs; k++) {
                const char *d = dirs[(k + (int)r + s) % ndirs];
                char name[512];
                double w, rd;

                snprintf(name, sizeof name, "/%s/s%llu_r%llu", d, (unsigned long long)sizes[s],
                         (unsigned long long)r);
                xn_step();
                w = xn_write_pattern(nfs, name, sizes[s], io, buf);
                printf("w %s %llu %.6f\n", d, (unsigned long long)sizes[s], w);
                fflush(stdout);
                xn_step();
                rd = xn_read_pattern(nfs, name, sizes[s], io, buf);
                printf("r %s %llu %.6f\n", d, (unsigned long long)sizes[s], rd);
                fflush(stdout);
                if (nfs_unlink(nfs, name) != 0)
                    xn_die(nfs, "unlink", name);
            }
        }
    }
    free(buf);
    return 0;
}

static int xn_put(struct nfs_context *nfs, int argc, char **argv)
{
    uint64_t io, total = 0;
    unsigned char *buf;
    struct nfsfh *fh;
    FILE *src;
    double t0;
    size_t n;

    if (argc != 3)
        return 2;
    io = xn_num(argv[2]);
    buf = malloc(io);
    src = fopen(argv[1], "rb");
    if (!buf || !src || io == 0) {
        fprintf(stderr, "xfnfs: put: cannot read %s\n", argv[1]);
        return 1;
    }
    t0 = xn_now();
    if (nfs_creat(nfs, argv[0], 0644, &fh) != 0)
        xn_die(nfs, "creat", argv[0]);
    while ((n = fread(buf, 1, io, src)) > 0) {
        if (nfs_pwrite(nfs, fh, total, n, buf) != (int)n)
            xn_die(nfs, "pwrite", argv[0]);
        total += n;
    }
    if (nfs_close(nfs, fh) != 0)
        xn_die(nfs, "close", argv[0]);
    t0 = xn_now() - t0;
    fclose(src);
    free(buf);
    printf("write_s %.6f\nmb_s %.3f\nbytes %llu\n", t0, (double)total / t0 / 1e6,
           (unsigned long long)total);
    return 0;
}

/* Read name in io-byte reads to out (may be NULL), checking against check
 * (may be NULL). */
static int xn_get_to(struct nfs_context *nfs, const char *name, uint64_t io, FILE *out,
                     const char *check)
{
    unsigned char *buf = malloc(io), *want = malloc(io);
    uint64_t total = 0;
    struct nfsfh *fh;
    FILE *ck = check ? fopen(check, "rb") : NULL;
    double t0;
    int n;

    if (!buf || !want || io == 0 || (check && !ck))
        return 2;
    t0 = xn_now();
    if (nfs_open(nfs, name, O_RDONLY, &fh) != 0)
        xn_die(nfs, "open", name);
    while ((n = nfs_pread(nfs, fh, total, io, buf)) > 0) {
        if (out && fwrite(buf, 1, (size_t)n, out) != (size_t)n)
            xn_die(NULL, "write to stdout", name);
        if (ck && (fread(want, 1, (size_t)n, ck) != (size_t)n || memcmp(want, buf, (size_t)n))) {
            fprintf(stderr, "xfnfs: %s: bytes at %llu differ from %s\n", name,
                    (unsigned long long)total, check);
            return 1;
        }
        total += (uint64_t)n;
    }
    if (n < 0)
        xn_die(nfs, "pread", name);
    nfs_close(nfs, fh);
    if (out)
        fflush(out);
    t0 = xn_now() - t0;
    fprintf(out ? stderr : stdout, "read_s %.6f\nmb_s %.3f\nbytes %llu\n", t0,
            (double)total / t0 / 1e6, (unsigned long long)total);
    if (ck)
        fclose(ck);
    free(buf);
    free(want);
    return 0;
}

static int xn_get(struct nfs_context *nfs, int argc, char **argv)
{
    if (argc != 2 && argc != 3)
        return 2;
    return xn_get_to(nfs, argv[0], xn_num(argv[1]), NULL, argc == 3 ? argv[2] : NULL);
}

static int xn_cat(struct nfs_context *nfs, int argc, char **argv)
{
    if (argc != 2)
        return 2;
    return xn_get_to(nfs, argv[0], xn_num(argv[1]), stdout, NULL);
}

static int xn_mkdir(struct nfs_context *nfs, int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (nfs_mkdir(nfs, argv[i]) != 0)
            xn_die(nfs, "mkdir", argv[i]);
    return argc > 0 ? 0 : 2;
}

/* stdin to stdout, each byte plus one. */
static int xn_inc(void)
{
    static unsigned char buf[1 << 16];
    ssize_t n;

    while ((n = read(0, buf, sizeof buf)) > 0) {
        ssize_t done = 0;

        for (ssize_t i = 0; i < n; i++)
            buf[i]++;
        while (done < n) {
            ssize_t w = write(1, buf + done, (size_t)(n - done));

            if (w <= 0)
                return 1;
            done += w;
        }
    }
    return n < 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(struct nfs_context *, int, char **);
    } cmds[] = {
        {"first", xn_first}, {"sweep", xn_sweep}, {"put", xn_put},
        {"get", xn_get},     {"cat", xn_cat},     {"mkdir", xn_mkdir},
    };

    if (argc == 2 && strcmp(argv[1], "inc") == 0)
        return xn_inc();
    if (argc >= 3) {
        for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
            if (strcmp(argv[2], cmds[i].name) == 0) {
                struct nfs_context *nfs = xn_mount(argv[1]);
                int rc = cmds[i].fn(nfs, argc - 3, argv + 3);

                nfs_destroy_context(nfs);
                if (rc == 2)
                    break;
                return rc;
            }
        }
    }
    fprintf(stderr, "usage: xfnfs URL first WARM[,WARM...] DIR NAME...\n"
                    "       xfnfs URL sweep ROUNDS IO SIZES DIRS\n"
                    "       xfnfs URL put NAME SRC IO\n"
                    "       xfnfs URL get NAME IO [CHECK]\n"
                    "       xfnfs URL cat NAME IO\n"
                    "       xfnfs URL mkdir PATH...\n"
                    "       xfnfs inc\n");
    return 2;
}
