/*
 * pbench.c -- the client half of the paper benchmarks (bench/paper/run):
 * timed file operations through libnfs's synchronous API against one NFS
 * server, printed as "key value" lines the driver parses.
 *
 *   pbench URL schema NFILES SIZE IOSIZE SEED
 *       write NFILES files of SIZE bytes in IOSIZE writes, read one random
 *       IOSIZE block of each, remove them all; prints write_s, read_s,
 *       remove_s (NFS/DBMS paper, Figure 1)
 *   pbench URL copy NAME SIZE IOSIZE
 *       write NAME (SIZE bytes in IOSIZE writes), then remove it; prints
 *       write_s, remove_s (Figure 2: one iteration)
 *   pbench URL write NAME SIZE IOSIZE      prints write_s, mb_s, rpcs
 *   pbench URL read NAME SIZE IOSIZE       prints read_s, mb_s; checks data
 *
 * URL is "nfs://HOST/?nfsport=P&mountport=P&version=3". File contents are
 * a fixed pattern of the offset, so `read` checks what `write` wrote.
 * libnfs's own caches and read-ahead are off: every call is an RPC.
 *
 * NOTES
 *   Exit status 0, or 1 with a message on stderr naming the call and the
 *   libnfs error. One process, one NFS context; nothing is left behind but
 *   the files `write` creates (the driver removes them with the server).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nfsc/libnfs.h>

static double pb_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void pb_die(struct nfs_context *nfs, const char *what, const char *name)
{
    fprintf(stderr, "pbench: %s %s: %s\n", what, name ? name : "", nfs ? nfs_get_error(nfs) : "");
    exit(1);
}

/* The pattern byte at file offset off. */
static unsigned char pb_byte(uint64_t off)
{
    return (unsigned char)((off * 2654435761u) >> 13);
}

static void pb_fill(unsigned char *buf, uint64_t off, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = pb_byte(off + i);
}

static uint64_t pb_num(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    if (!*s || *end) {
        fprintf(stderr, "pbench: '%s' is not a number\n", s);
        exit(2);
    }
    return v;
}

static struct nfs_context *pb_mount(const char *url)
{
    struct nfs_context *nfs = nfs_init_context();
    struct nfs_url *u;

    if (!nfs)
        pb_die(NULL, "nfs_init_context", NULL);
    u = nfs_parse_url_dir(nfs, url);
    if (!u)
        pb_die(nfs, "parse url", url);
    if (nfs_mount(nfs, u->server, u->path) != 0)
        pb_die(nfs, "mount", url);
    nfs_destroy_url(u);
    nfs_set_dircache(nfs, 0);
    nfs_set_pagecache(nfs, 0);
    nfs_set_readahead(nfs, 0);
    return nfs;
}

/* Write name: size bytes in iosize writes. Returns the seconds taken
 * (create to close, which commits). */
static double pb_write(struct nfs_context *nfs, const char *name, uint64_t size, uint64_t iosize,
                       unsigned char *buf)
{
    struct nfsfh *fh;
    double t0 = pb_now();

    if (nfs_creat(nfs, name, 0644, &fh) != 0)
        pb_die(nfs, "creat", name);
    for (uint64_t off = 0; off < size; off += iosize) {
        uint64_t n = size - off < iosize ? size - off : iosize;

        pb_fill(buf, off, n);
        if (nfs_pwrite(nfs, fh, off, n, buf) != (int)n)
            pb_die(nfs, "pwrite", name);
    }
    if (nfs_close(nfs, fh) != 0)
        pb_die(nfs, "close", name);
    return pb_now() - t0;
}

/* Read iosize bytes at off of an open file and check them. */
static void pb_read_at(struct nfs_context *nfs, struct nfsfh *fh, const char *name, uint64_t off,
                       uint64_t n, unsigned char *buf)
{
    uint64_t got = 0;

    while (got < n) {
        int r = nfs_pread(nfs, fh, off + got, n - got, buf + got);

        if (r <= 0)
            pb_die(nfs, "pread", name);
        got += (uint64_t)r;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (buf[i] != pb_byte(off + i)) {
            fprintf(stderr, "pbench: %s: byte %llu differs from what was written\n", name,
                    (unsigned long long)(off + i));
            exit(1);
        }
    }
}

static int pb_schema(struct nfs_context *nfs, char **argv)
{
    uint64_t nfiles = pb_num(argv[0]), size = pb_num(argv[1]), io = pb_num(argv[2]);
    unsigned seed = (unsigned)pb_num(argv[3]);
    unsigned char *buf = malloc(io);
    char name[64];
    double t0, tw, tr, tu;

    if (!buf || io == 0)
        return 2;
    srand(seed);
    t0 = pb_now();
    for (uint64_t i = 0; i < nfiles; i++) {
        snprintf(name, sizeof name, "/s%llu", (unsigned long long)i);
        pb_write(nfs, name, size, io, buf);
    }
    tw = pb_now() - t0;
    t0 = pb_now();
    for (uint64_t i = 0; i < nfiles; i++) {
        struct nfsfh *fh;
        uint64_t blocks = (size + io - 1) / io;
        uint64_t b = (uint64_t)rand() % blocks;
        uint64_t n = size - b * io < io ? size - b * io : io;

        snprintf(name, sizeof name, "/s%llu", (unsigned long long)i);
        if (nfs_open(nfs, name, O_RDONLY, &fh) != 0)
            pb_die(nfs, "open", name);
        pb_read_at(nfs, fh, name, b * io, n, buf);
        nfs_close(nfs, fh);
    }
    tr = pb_now() - t0;
    t0 = pb_now();
    for (uint64_t i = 0; i < nfiles; i++) {
        snprintf(name, sizeof name, "/s%llu", (unsigned long long)i);
        if (nfs_unlink(nfs, name) != 0)
            pb_die(nfs, "unlink", name);
    }
    tu = pb_now() - t0;
    printf("write_s %.6f\nread_s %.6f\nremove_s %.6f\n", tw, tr, tu);
    free(buf);
    return 0;
}

static int pb_copy(struct nfs_context *nfs, char **argv)
{
    const char *name = argv[0];
    uint64_t size = pb_num(argv[1]), io = pb_num(argv[2]);
    unsigned char *buf = malloc(io);
    double tw, t0;

    if (!buf || io == 0)
        return 2;
    tw = pb_write(nfs, name, size, io, buf);
    t0 = pb_now();
    if (nfs_unlink(nfs, name) != 0)
        pb_die(nfs, "unlink", name);
    printf("write_s %.6f\nremove_s %.6f\n", tw, pb_now() - t0);
    free(buf);
    return 0;
}

static int pb_writecmd(struct nfs_context *nfs, char **argv)
{
    const char *name = argv[0];
    uint64_t size = pb_num(argv[1]), io = pb_num(argv[2]);
    unsigned char *buf = malloc(io);
    double t;

    if (!buf || io == 0)
        return 2;
    t = pb_write(nfs, name, size, io, buf);
    printf("write_s %.6f\nmb_s %.3f\nrpcs %llu\n", t, (double)size / t / 1e6,
           (unsigned long long)((size + io - 1) / io));
    free(buf);
    return 0;
}

static int pb_readcmd(struct nfs_context *nfs, char **argv)
{
    const char *name = argv[0];
    uint64_t size = pb_num(argv[1]), io = pb_num(argv[2]);
    unsigned char *buf = malloc(io);
    struct nfsfh *fh;
    double t0;

    if (!buf || io == 0)
        return 2;
    t0 = pb_now();
    if (nfs_open(nfs, name, O_RDONLY, &fh) != 0)
        pb_die(nfs, "open", name);
    for (uint64_t off = 0; off < size; off += io)
        pb_read_at(nfs, fh, name, off, size - off < io ? size - off : io, buf);
    nfs_close(nfs, fh);
    t0 = pb_now() - t0;
    printf("read_s %.6f\nmb_s %.3f\n", t0, (double)size / t0 / 1e6);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int nargs;
        int (*fn)(struct nfs_context *, char **);
    } cmds[] = {
        {"schema", 4, pb_schema},
        {"copy", 3, pb_copy},
        {"write", 3, pb_writecmd},
        {"read", 3, pb_readcmd},
    };

    if (argc >= 3) {
        for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
            if (strcmp(argv[2], cmds[i].name) == 0 && argc == 3 + cmds[i].nargs) {
                struct nfs_context *nfs = pb_mount(argv[1]);
                int rc = cmds[i].fn(nfs, argv + 3);

                nfs_destroy_context(nfs);
                return rc;
            }
        }
    }
    fprintf(stderr, "usage: pbench URL schema NFILES SIZE IOSIZE SEED\n"
                    "       pbench URL copy NAME SIZE IOSIZE\n"
                    "       pbench URL write NAME SIZE IOSIZE\n"
                    "       pbench URL read NAME SIZE IOSIZE\n");
    return 2;
}
