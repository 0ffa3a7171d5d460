/*
 * cthon_lock_main.c -- `cthon-lock`, the Connectathon lock tests (see
 * cthon_lock.h) on a directory: a mounted NFS file system, or a local
 * directory as a control. Built statically, so that it runs in a guest
 * that has no C library.
 *
 *   cthon-lock [options] DIR
 *
 * Every test gets a file of its own in DIR (lockfile.HOST.PID.ID), the
 * parent's descriptor on it and a child process with its own; both are
 * gone, and the file removed, when the test ends. Output: the checks that
 * did not pass (all of them with -v), one line per test with its time,
 * then for scripts
 *
 *   RESULT test=ID seconds=S status=ok|fail|skip passed=N warnings=N
 *   METRIC test=ID name=NAME value=V      (test 7: grant_s; 8: pairs_per_s; 14)
 *   RESULT total seconds=S status=ok|fail
 *
 * Exit status: 0 every test run passed (warnings allowed), 1 a test
 * failed, 2 usage, 3 DIR cannot be used.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cthon_lock.h"

#define CL_EXIT_OK    0
#define CL_EXIT_FAIL  1
#define CL_EXIT_USAGE 2
#define CL_EXIT_SETUP 3
#define CL_MAX_TESTS  32

const cl_test cl_tests[] = {
    {"1", "regions of an unlocked file", true, cl_test1},
    {"2", "lock the whole file", true, cl_test2},
    {"3", "lock the first byte", true, cl_test3},
    {"4", "lock the second byte", true, cl_test4},
    {"5", "lock bytes 0 and 2", true, cl_test5},
    {"6", "lock the byte at 2^63-1", true, cl_test6},
    {"7", "mutual exclusion, F_SETLKW", true, cl_test7},
    {"8", "lock/unlock rate", false, cl_test8},
    {"9", "mandatory locking", false, cl_test9},
    {"10", "split a locked region", true, cl_test10},
    {"11", "close() releases locks", true, cl_test11},
    {"12", "killed process releases", true, cl_test12},
    {"13", "locking and mmap", true, cl_test13},
    {"14", "I/O rate unlocked, locked", true, cl_test14},
    {"15", "second open, I/O after", true, cl_test15},
    {"16", "shared read locks", true, cl_test16},
    {"17", "promotion and demotion", true, cl_test17},
    {"18", "offsets past 2^31, 2^32", true, cl_test18},
    {"19", "interrupted F_SETLKW", true, cl_test19},
    {"20", "adjoining ranges", true, cl_test20},
};
const size_t cl_ntests = sizeof cl_tests / sizeof cl_tests[0];

static const char cl_usage[] =
    "usage: cthon-lock [options] DIR\n"
    "\n"
    "The Connectathon lock tests (fcntl record locks of a parent and a child\n"
    "process) on files in DIR.\n"
    "\n"
    "options:\n"
    "  -t, --tests LIST      tests to run, e.g. 1,2,7 (default: 1-7 and 10-20;\n"
    "                        8 is the rate test, 9 mandatory locking, not run)\n"
    "  -q, --quick           small counts for CI (set before the options below)\n"
    "  -r, --rate N          test 8 with N lock/unlock pairs (1000), and run it\n"
    "      --iorate-kb N     test 14: file size in KiB (256)\n"
    "      --iorate-count N  test 14: rounds unlocked and locked (10)\n"
    "      --peer-dir DIR2   the child works in DIR2, the same directory through\n"
    "                        another mount (e.g. nosharecache), so that no lock\n"
    "                        of the parent is known to the child's client\n"
    "      --deadline SEC    longest wait for any event (300)\n"
    "  -v, --verbose         print every check, not only those that did not pass\n"
    "  -h, --help            this text\n";

enum { CL_OPT_IORATE_KB = 256, CL_OPT_IORATE_COUNT, CL_OPT_PEER_DIR, CL_OPT_DEADLINE };

static const struct option cl_longopts[] = {
    {"tests", required_argument, NULL, 't'},
    {"quick", no_argument, NULL, 'q'},
    {"rate", required_argument, NULL, 'r'},
    {"iorate-kb", required_argument, NULL, CL_OPT_IORATE_KB},
    {"iorate-count", required_argument, NULL, CL_OPT_IORATE_COUNT},
    {"peer-dir", required_argument, NULL, CL_OPT_PEER_DIR},
    {"deadline", required_argument, NULL, CL_OPT_DEADLINE},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

void cl_params_default(cl_params *p, bool quick)
{
    *p = (cl_params){
        .rate_count = quick ? 100 : 1000,
        .iorate_kb = quick ? 64 : 256,
        .iorate_count = quick ? 2 : 10,
        .deadline_s = 300,
        .verbose = false,
    };
}

/* A number from 1 to max, or -1 after a message. */
static long cl_parse_num(const char *opt, const char *s, long max)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > max) {
        fprintf(stderr, "cthon-lock: --%s: '%s' is not a number from 1 to %ld\n", opt, s, max);
        return -1;
    }
    return v;
}

/* Mark the tests of a comma-separated list. 0 or -1. */
static int cl_parse_tests(const char *list, bool *sel)
{
    char *copy = strdup(list), *tok, *save = NULL;
    int rc = 0;

    if (!copy)
        return -1;
    for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        size_t i;
        for (i = 0; i < cl_ntests; i++) {
            if (strcmp(tok, cl_tests[i].id) == 0)
                break;
        }
        if (i == cl_ntests) {
            fprintf(stderr, "cthon-lock: unknown test '%s' (known: 1 to %zu)\n", tok, cl_ntests);
            rc = -1;
            break;
        }
        sel[i] = true;
    }
    free(copy);
    return rc;
}

static void cl_sigalrm(int sig)
{
    (void)sig;
}

/* Run one test on its own file: 0 passed, 1 skipped, -1 failed. */
static int cl_run_one(cl_run *r, const cl_test *t, const char *stem)
{
    int rc;

    snprintf(r->name, sizeof r->name, "%s.%s", stem, t->id);
    snprintf(r->path, sizeof r->path, "%s/%s", r->dir, r->name);
    snprintf(r->ppath, sizeof r->ppath, "%s/%s", r->peer_dir, r->name);
    r->id = t->id;
    r->fd = -1;
    r->pass = r->warn = 0;
    r->nmetric = 0;
    r->errmsg[0] = r->summary[0] = '\0';
    unlink(r->path);
    if (cl_open(r) < 0)
        return -1;
    if (cl_peer_start(r, &r->child, "child") < 0) {
        cl_close(r);
        unlink(r->path);
        return -1;
    }
    rc = t->run(r);
    cl_peer_stop(&r->child);
    cl_close(r);
    unlink(r->path);
    return rc;
}

int main(int argc, char **argv)
{
    static cl_run run;
    cl_params p;
    bool sel[CL_MAX_TESTS] = {false}, any = false, quick = false, failed = false;
    char host[HOST_NAME_MAX + 1], stem[HOST_NAME_MAX + 48];
    const char *peer_dir = NULL;
    struct sigaction sa = {0};
    struct stat st;
    double total = 0;
    long v;
    int c;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--quick") == 0 || strcmp(argv[i], "-q") == 0)
            quick = true;
    }
    cl_params_default(&p, quick);
    while ((c = getopt_long(argc, argv, "t:qr:vh", cl_longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (cl_parse_tests(optarg, sel) < 0)
                return CL_EXIT_USAGE;
            any = true;
            break;
        case 'q':
            break;
        case 'r':
            if ((v = cl_parse_num("rate", optarg, 100000000)) < 0)
                return CL_EXIT_USAGE;
            p.rate_count = (unsigned)v;
            sel[7] = true; /* test 8 (cl_tests[7]) */
            break;
        case CL_OPT_IORATE_KB:
            if ((v = cl_parse_num("iorate-kb", optarg, 1 << 22)) < 0)
                return CL_EXIT_USAGE;
            p.iorate_kb = (unsigned)v;
            break;
        case CL_OPT_IORATE_COUNT:
            if ((v = cl_parse_num("iorate-count", optarg, 100000)) < 0)
                return CL_EXIT_USAGE;
            p.iorate_count = (unsigned)v;
            break;
        case CL_OPT_PEER_DIR:
            peer_dir = optarg;
            break;
        case CL_OPT_DEADLINE:
            if ((v = cl_parse_num("deadline", optarg, 86400)) < 0)
                return CL_EXIT_USAGE;
            p.deadline_s = (unsigned)v;
            break;
        case 'v':
            p.verbose = true;
            break;
        case 'h':
            fputs(cl_usage, stdout);
            return CL_EXIT_OK;
        default:
            fputs(cl_usage, stderr);
            return CL_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fputs(cl_usage, stderr);
        return CL_EXIT_USAGE;
    }
    if (!any) {
        for (size_t i = 0; i < cl_ntests; i++)
            sel[i] = sel[i] || cl_tests[i].by_default;
    }
    run.p = &p;
    run.dir = argv[optind];
    run.peer_dir = peer_dir ? peer_dir : run.dir;
    if (stat(run.dir, &st) < 0 || !S_ISDIR(st.st_mode) || stat(run.peer_dir, &st) < 0 ||
        !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "cthon-lock: %s%s%s is not a directory\n", run.dir, peer_dir ? " or " : "",
                peer_dir ? peer_dir : "");
        return CL_EXIT_SETUP;
    }
    /* SIGALRM ends a parent's wait that passed the deadline (EINTR). */
    sa.sa_handler = cl_sigalrm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (gethostname(host, sizeof host) < 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(stem, sizeof stem, "lockfile.%s.%ld", host, (long)getpid());
    printf("cthon-lock: %s%s%s, files %s.N, deadline %u s\n", run.dir,
           peer_dir ? ", child in " : "", peer_dir ? peer_dir : "", stem, p.deadline_s);

    double secs[CL_MAX_TESTS] = {0};
    int result[CL_MAX_TESTS] = {0}; /* 0 not run, 1 ok, 2 skip, -1 failed */
    unsigned passes[CL_MAX_TESTS] = {0}, warns[CL_MAX_TESTS] = {0};
    for (size_t i = 0; i < cl_ntests; i++) {
        const cl_test *t = &cl_tests[i];
        double t0;
        int rc;

        if (!sel[i])
            continue;
        t0 = cl_now();
        rc = cl_run_one(&run, t, stem);
        secs[i] = cl_now() - t0;
        total += secs[i];
        passes[i] = run.pass;
        warns[i] = run.warn;
        result[i] = rc == 0 ? 1 : rc > 0 ? 2 : -1;
        if (rc == 0)
            printf("test %-3s %-28s %3u passed %2u warned  %-44s %8.3f s\n", t->id, t->name,
                   run.pass, run.warn, run.summary, secs[i]);
        else if (rc > 0)
            printf("test %-3s %-28s skipped: %s\n", t->id, t->name, run.summary);
        else {
            printf("test %-3s %-28s FAILED after %.3f s: %s\n", t->id, t->name, secs[i],
                   run.errmsg);
            fprintf(stderr, "cthon-lock: test %s (%s) failed: %s\n", t->id, t->name, run.errmsg);
            failed = true;
        }
        for (unsigned m = 0; m < run.nmetric; m++)
            printf("METRIC test=%s name=%s value=%.6f\n", t->id, run.metric_name[m], run.metric[m]);
    }
    for (size_t i = 0; i < cl_ntests; i++) {
        if (result[i] != 0)
            printf("RESULT test=%s seconds=%.6f status=%s passed=%u warnings=%u\n", cl_tests[i].id,
                   secs[i],
                   result[i] == 1   ? "ok"
                   : result[i] == 2 ? "skip"
                                    : "fail",
                   passes[i], warns[i]);
    }
    printf("RESULT total seconds=%.6f status=%s\n", total, failed ? "fail" : "ok");
    return failed ? CL_EXIT_FAIL : CL_EXIT_OK;
}
