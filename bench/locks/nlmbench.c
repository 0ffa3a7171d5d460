/*
 * nlmbench.c -- NLM version 4 figures from one client through libnfs:
 *
 *   pairs   LOCK + UNLOCK of one byte, one after the other, for --seconds:
 *           pairs per second and the mean time of each call
 *   grant   --count times: owner A holds a byte, owner B asks for it
 *           blocking (NLM4_BLOCKED), A unlocks; the time from sending that
 *           UNLOCK to the server's GRANTED callback arriving here
 *
 * The file is made through NFS (MOUNT, then CREATE of nlmbench-PID in
 * --export). For grant the program answers the
 * server's callbacks itself: a receiver on every address (TCP and UDP) and
 * a portmapper on port 111 that names it as the lock manager, so it runs
 * in a network namespace of its own (bench/locks/run-locks sets that up).
 *
 *   nlmbench --server IP --nlm-port N [--nfs-port N] [--mount-port N]
 *            [--export PATH] [--caller NAME] --mode pairs|grant
 *            [--seconds S] [--count K]
 *
 * Output: one "key=value" line per figure, for the runner.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nlmraw.h"

static int nb_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void nb_pairs(nr_ctx *c, const nr_fh *fh, const char *caller, double seconds)
{
    nl_owner a = {caller, 1, "1@nlmbench"};
    int64_t t0 = g_get_monotonic_time(), end = t0 + (int64_t)(seconds * 1e6);
    unsigned long n = 0;
    int st;

    while (g_get_monotonic_time() < end) {
        if ((st = nl_lock(c, fh, &a, 0, 1, true, false, false, 1)) != NLM4_GRANTED ||
            (st = nl_unlock(c, fh, &a, 0, 1)) != NLM4_GRANTED) {
            fprintf(stderr, "nlmbench: a lock or unlock failed (status %d %s)\n", st, nr_error(c));
            exit(1);
        }
        n++;
    }
    double s = (double)(g_get_monotonic_time() - t0) / 1e6;
    printf("pairs=%lu seconds=%.3f pairs_per_s=%.1f call_ms=%.3f\n", n, s, (double)n / s,
           s * 1e3 / (2.0 * (double)n));
}

static void nb_grant(nr_ctx *c, const nr_fh *fh, const char *caller, unsigned count)
{
    nl_owner a = {caller, 1, "1@nlmbench"}, b = {caller, 2, "2@nlmbench"};
    int st;
    nl_cbsrv *cbs = nl_cbsrv_new_on("0.0.0.0");
    nl_pmap *pm = nl_pmap_new(nl_cbsrv_port(cbs), 0);
    double *lat = g_new0(double, count), *rtt = g_new0(double, count);

    if (!pm) {
        fprintf(stderr, "nlmbench: cannot serve port 111 here: %s\n", g_strerror(errno));
        exit(1);
    }
    nl_cbsrv_start(cbs);
    for (unsigned i = 0; i < count; i++) {
        int64_t t0, t1, deadline;

        if ((st = nl_lock(c, fh, &a, 0, 1, true, false, false, 1)) != NLM4_GRANTED ||
            (st = nl_lock(c, fh, &b, 0, 1, true, true, false, 1)) != NLM4_BLOCKED) {
            fprintf(stderr, "nlmbench: setting up round %u failed (status %d)\n", i, st);
            exit(1);
        }
        t0 = g_get_monotonic_time();
        if (nl_unlock(c, fh, &a, 0, 1) != NLM4_GRANTED)
            exit(1);
        t1 = g_get_monotonic_time();
        deadline = t0 + 60 * G_USEC_PER_SEC;
        while (nl_cbsrv_count(cbs) < i + 1 && g_get_monotonic_time() < deadline)
            g_usleep(50);
        if (nl_cbsrv_count(cbs) < i + 1) {
            fprintf(stderr, "nlmbench: no GRANTED callback in round %u within 60 s\n", i);
            exit(1);
        }
        lat[i] = (double)(nl_cbsrv_last_us(cbs) - t0) / 1e3;
        rtt[i] = (double)(t1 - t0) / 1e3;
        if (nl_unlock(c, fh, &b, 0, 1) != NLM4_GRANTED)
            exit(1);
    }
    qsort(lat, count, sizeof *lat, nb_cmp);
    qsort(rtt, count, sizeof *rtt, nb_cmp);
    printf("rounds=%u grant_ms_median=%.3f grant_ms_p90=%.3f grant_ms_max=%.3f "
           "unlock_reply_ms_median=%.3f\n",
           count, lat[count / 2], lat[count * 9 / 10], lat[count - 1], rtt[count / 2]);
    nl_cbsrv_free(cbs);
    nl_pmap_free(pm);
    g_free(lat);
    g_free(rtt);
}

/* The handle of a new file /nlmbench-PID in export (through MOUNT and CREATE). */
static nr_fh nb_file(const char *server, unsigned mount_port, unsigned nfs_port, const char *export)
{
    nr_ctx *m = nr_open_host(server, mount_port, NULL), *c;
    mountres3 mr;
    CREATE3res cr;
    nr_fh root, f;
    char name[64];
    sattr3 sa = nr_sattr_mode(0666);

    if (!m || nr_mnt(m, export, &mr, &root) != MNT3_OK) {
        fprintf(stderr, "nlmbench: MOUNT %s:%s failed: %s\n", server, export,
                m ? nr_error(m) : "no connection");
        exit(1);
    }
    nr_close(m);
    c = nr_open_host(server, nfs_port, NULL);
    g_snprintf(name, sizeof name, "nlmbench-%d", (int)getpid());
    if (!c || nr_create(c, &root, name, UNCHECKED, &sa, NULL, &cr) != NFS3_OK) {
        fprintf(stderr, "nlmbench: CREATE %s failed: %s\n", name, c ? nr_error(c) : "");
        exit(1);
    }
    f = nr_fh_from(&cr.CREATE3res_u.resok.obj.post_op_fh3_u.handle);
    nr_close(c);
    return f;
}

int main(int argc, char **argv)
{
    const char *server = NULL, *export = "/", *mode = "pairs", *caller = "nlmbench";
    unsigned nlm_port = 0, nfs_port = 2049, mount_port = 0, count = 50;
    double seconds = 10;
    nr_ctx *c;
    nr_fh f;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--server"))
            server = argv[i + 1];
        else if (!strcmp(argv[i], "--nlm-port"))
            nlm_port = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--nfs-port"))
            nfs_port = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--mount-port"))
            mount_port = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--export"))
            export = argv[i + 1];
        else if (!strcmp(argv[i], "--caller"))
            caller = argv[i + 1];
        else if (!strcmp(argv[i], "--mode"))
            mode = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--count"))
            count = (unsigned)atoi(argv[i + 1]);
        else {
            fprintf(stderr, "nlmbench: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (!server || !nlm_port || count == 0) {
        fprintf(stderr, "usage: nlmbench --server IP --nlm-port N [--nfs-port N] "
                        "[--mount-port N] [--export PATH] [--caller NAME] --mode pairs|grant "
                        "[--seconds S] [--count K]\n");
        return 2;
    }
    f = nb_file(server, mount_port ? mount_port : nfs_port, nfs_port, export);
    c = nr_open_host(server, nlm_port, NULL);
    if (!c)
        return 1;
    if (!strcmp(mode, "grant"))
        nb_grant(c, &f, caller, count);
    else
        nb_pairs(c, &f, caller, seconds);
    nr_close(c);
    return 0;
}
