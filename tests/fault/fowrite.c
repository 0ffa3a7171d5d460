/*
 * fowrite.c -- the client of tests/fault/failover.sh: writes files through
 * a server while its database fails over, and checks afterwards that
 * every write the server acknowledged as stable is there.
 *
 *   fault_fowrite write PORT DIR ACKS [MAX]
 *       in directory DIR of the export "/" (made if missing), files
 *       f000000, f000001 ... of 4 KiB each (the bytes a function of the
 *       file's number), until SIGTERM or MAX files: even files by one
 *       FILE_SYNC WRITE, odd ones by an UNSTABLE WRITE and a COMMIT with
 *       the same write verifier. A file is acknowledged when that reply
 *       is NFS3_OK: its number is then appended to ACKS (flushed at
 *       once). JUKEBOX, and a connection that breaks, are retried (a
 *       new connection; the file again from its CREATE) until the server
 *       answers, for at most FO_GIVE_UP_S seconds in a row.
 *   fault_fowrite verify PORT DIR ACKS
 *       every file named in ACKS must hold exactly its bytes; prints
 *       "verified N" and exits 0, or names the first file that does not.
 *
 * NOTES
 *   Exit status 0, or 1 after a message. One connection (nfsraw.h).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsraw.h"

#define FO_SIZE      4096
#define FO_GIVE_UP_S 120

static volatile sig_atomic_t fo_stop;

static void fo_on_term(int sig)
{
    (void)sig;
    fo_stop = 1;
}

static void fo_bytes(unsigned long i, unsigned char *b)
{
    for (unsigned k = 0; k < FO_SIZE; k++)
        b[k] = (unsigned char)((i * 131u + k * 7u + (k >> 8)) & 0xff);
}

typedef struct {
    unsigned port;
    nr_ctx *c;
    nr_fh dir;
    const char *dirname;
    int64_t failing_since; /* monotonic us; 0: the last call worked */
} fo_client;

/* (Re)connect and find (or make) the directory. false: not now. */
static bool fo_connect(fo_client *f, bool make)
{
    mountres3 mr;
    nr_fh root;
    LOOKUP3res lr;
    MKDIR3res mk;
    int st;

    if (f->c)
        nr_close(f->c);
    f->c = nr_open(f->port, NULL);
    if (!f->c)
        return false;
    if (nr_mnt(f->c, "/", &mr, &root) != MNT3_OK)
        return false;
    st = nr_lookup(f->c, &root, f->dirname, &lr);
    if (st == NFS3_OK) {
        f->dir = nr_fh_from(&lr.LOOKUP3res_u.resok.object);
        return true;
    }
    if (st != NFS3ERR_NOENT || !make)
        return false;
    sattr3 sa = nr_sattr_mode(0777);
    st = nr_mkdir(f->c, &root, f->dirname, &sa, &mk);
    if (st != NFS3_OK && st != NFS3ERR_EXIST)
        return false;
    return fo_connect(f, false);
}

/* A call's status: true to go on; false to try the file again (after
 * a reconnection when the connection broke). Exits after FO_GIVE_UP_S. */
static bool fo_ok(fo_client *f, int st, const char *what)
{
    int64_t now = g_get_monotonic_time();

    if (st == NFS3_OK) {
        f->failing_since = 0;
        return true;
    }
    if (st != NFS3ERR_JUKEBOX && st != NR_RPC_FAILED) {
        fprintf(stderr, "fowrite: %s: %s\n", what, nr_stat_name(st));
        exit(1);
    }
    if (!f->failing_since)
        f->failing_since = now;
    if (now - f->failing_since > (int64_t)FO_GIVE_UP_S * G_USEC_PER_SEC) {
        fprintf(stderr, "fowrite: %s: no answer but %s for %d s\n", what,
                st == NR_RPC_FAILED ? nr_error(f->c) : "JUKEBOX", FO_GIVE_UP_S);
        exit(1);
    }
    g_usleep(100000); /* the server is waiting for its database: poll */
    if (st == NR_RPC_FAILED)
        while (!fo_connect(f, true) && !fo_stop) {
            if (g_get_monotonic_time() - f->failing_since >
                (int64_t)FO_GIVE_UP_S * G_USEC_PER_SEC) {
                fprintf(stderr, "fowrite: cannot reach the server for %d s\n", FO_GIVE_UP_S);
                exit(1);
            }
            g_usleep(100000);
        }
    return false;
}

/* Write file i until acknowledged; false when stopped first. */
static bool fo_file(fo_client *f, unsigned long i, const unsigned char *b)
{
    char name[32];

    g_snprintf(name, sizeof name, "f%06lu", i);
    while (!fo_stop) {
        CREATE3res cr;
        WRITE3res wr;
        COMMIT3res cm;
        sattr3 sa = nr_sattr_mode(0644);
        int st = nr_create(f->c, &f->dir, name, UNCHECKED, &sa, NULL, &cr);
        nr_fh fh;

        if (!fo_ok(f, st, "CREATE"))
            continue;
        if (!cr.CREATE3res_u.resok.obj.handle_follows) {
            fprintf(stderr, "fowrite: CREATE %s: no handle\n", name);
            exit(1);
        }
        fh = nr_fh_from(&cr.CREATE3res_u.resok.obj.post_op_fh3_u.handle);
        st = nr_write(f->c, &fh, 0, b, FO_SIZE, i % 2 ? UNSTABLE : FILE_SYNC, &wr);
        if (!fo_ok(f, st, "WRITE"))
            continue;
        if (i % 2 == 0) {
            if (wr.WRITE3res_u.resok.committed != FILE_SYNC) {
                fprintf(stderr, "fowrite: WRITE FILE_SYNC answered as less\n");
                exit(1);
            }
            return true;
        }
        char verf[NFS3_WRITEVERFSIZE];
        memcpy(verf, wr.WRITE3res_u.resok.verf, sizeof verf);
        st = nr_commit(f->c, &fh, 0, 0, &cm);
        if (!fo_ok(f, st, "COMMIT"))
            continue;
        if (memcmp(verf, cm.COMMIT3res_u.resok.verf, sizeof verf) == 0)
            return true;
        /* The server restarted in between: write again. */
    }
    return false;
}

static int fo_write(fo_client *f, const char *acks, unsigned long max)
{
    FILE *out = fopen(acks, "a");
    unsigned char b[FO_SIZE];

    if (!out) {
        perror(acks);
        return 1;
    }
    signal(SIGTERM, fo_on_term);
    signal(SIGINT, fo_on_term);
    if (!fo_connect(f, true))
        fo_ok(f, NR_RPC_FAILED, "MOUNT"); /* returns connected, or exits */
    for (unsigned long i = 0; !fo_stop && (!max || i < max); i++) {
        fo_bytes(i, b);
        if (!fo_file(f, i, b))
            break;
        fprintf(out, "%lu\n", i);
        fflush(out);
        nr_arena_clear(f->c);
    }
    fclose(out);
    return 0;
}

static int fo_verify(fo_client *f, const char *acks)
{
    FILE *in = fopen(acks, "r");
    unsigned char b[FO_SIZE];
    unsigned long i, n = 0;

    if (!in) {
        perror(acks);
        return 1;
    }
    if (!fo_connect(f, false)) {
        fprintf(stderr, "fowrite: cannot reach the server or the directory\n");
        return 1;
    }
    while (fscanf(in, "%lu", &i) == 1) {
        char name[32];
        LOOKUP3res lr;
        READ3res rr;
        nr_fh fh;

        g_snprintf(name, sizeof name, "f%06lu", i);
        fo_bytes(i, b);
        if (nr_lookup(f->c, &f->dir, name, &lr) != NFS3_OK) {
            fprintf(stderr, "fowrite: acknowledged file %s is missing\n", name);
            return 1;
        }
        fh = nr_fh_from(&lr.LOOKUP3res_u.resok.object);
        if (nr_read(f->c, &fh, 0, FO_SIZE + 1, &rr) != NFS3_OK ||
            rr.READ3res_u.resok.count != FO_SIZE ||
            memcmp(rr.READ3res_u.resok.data.data_val, b, FO_SIZE) != 0) {
            fprintf(stderr, "fowrite: acknowledged file %s does not hold its bytes\n", name);
            return 1;
        }
        nr_arena_clear(f->c);
        n++;
    }
    fclose(in);
    printf("verified %lu\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    fo_client f = {0};

    if (argc < 5 || (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "verify") != 0)) {
        fprintf(stderr, "usage: fault_fowrite write|verify PORT DIR ACKS [MAX]\n");
        return 2;
    }
    f.port = (unsigned)strtoul(argv[2], NULL, 10);
    f.dirname = argv[3];
    if (strcmp(argv[1], "write") == 0)
        return fo_write(&f, argv[4], argc > 5 ? strtoul(argv[5], NULL, 10) : 0);
    return fo_verify(&f, argv[4]);
}
