/*
 * cthon_main.c -- `cthon`, the Connectathon basic tests against an NFS
 * server (through libnfs) or a directory (through POSIX calls).
 *
 *   cthon [options] nfs://HOST/EXPORT?nfsport=N&mountport=N   libnfs front end
 *   cthon [options] DIRECTORY                                  path front end
 *
 * The suite makes a fresh test directory (cthon.HOST.PID) in the target,
 * runs the selected tests in it in the classic order, and removes it.
 * Output: one line per test with its time, then one machine-readable line
 * per test for scripts:
 *
 *   RESULT test=ID seconds=S status=ok|fail
 *
 * and a last "RESULT total seconds=S status=ok|fail".
 *
 * Exit status: 0 all selected tests passed, 1 a test failed (the message
 * on stderr names the test, the file, and what was expected and seen),
 * 2 usage error, 3 the target could not be reached or set up.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cthon.h"

#define CTHON_EXIT_OK    0
#define CTHON_EXIT_FAIL  1
#define CTHON_EXIT_USAGE 2
#define CTHON_EXIT_SETUP 3

static const char cthon_usage[] =
    "usage: cthon [options] TARGET\n"
    "\n"
    "TARGET is nfs://HOST/EXPORT[?nfsport=N&mountport=N&...] (libnfs, no mount\n"
    "needed) or a directory (POSIX calls: a mounted NFS file system, or a local\n"
    "directory as a control).\n"
    "\n"
    "options:\n"
    "  -t, --tests LIST      tests to run, e.g. 1,2,5a,5b (default all: 1 2 3 4 4a\n"
    "                        5a 5b 6 7 8 9); 2 brings 1 along, 5b brings 5a\n"
    "  -q, --quick           small counts for smoke runs (set before the options\n"
    "                        below, whatever their order)\n"
    "      --levels N        test 1/2: tree depth (5)\n"
    "      --files N         test 1/2: files per directory (5)\n"
    "      --dirs N          test 1/2: directories per directory (2)\n"
    "      --lookups N       test 3: getcwd walks and stats (250)\n"
    "      --attr-files N    test 4/4a: files (10)\n"
    "      --attr-count N    test 4/4a: rounds (50)\n"
    "      --io-size N       test 5: file size in bytes (1048576)\n"
    "      --io-count N      test 5: times written and read (10)\n"
    "      --bufsize N       test 5: bytes per write and read call (8192)\n"
    "      --readdir-files N test 6: files (200)\n"
    "      --readdir-count N test 6: times the directory is read (100)\n"
    "      --link-files N    test 7: files (10)\n"
    "      --link-count N    test 7: rounds (20)\n"
    "      --symlink-files N test 8: files (10)\n"
    "      --symlink-count N test 8: rounds (20)\n"
    "      --statfs-count N  test 9: statfs calls (1500)\n"
    "      --dir NAME        test directory name (default cthon.HOST.PID)\n"
    "  -k, --keep            keep the test directory at the end\n"
    "      --hook CMD        run `CMD before ID` and `CMD after ID` (sh -c) around\n"
    "                        each test, e.g. to snapshot server statistics\n"
    "      --timeout SEC     libnfs: give up on a call after SEC seconds (60; 0 none)\n"
    "  -h, --help            this text\n";

enum {
    CTHON_OPT_LEVELS = 256,
    CTHON_OPT_FILES,
    CTHON_OPT_DIRS,
    CTHON_OPT_LOOKUPS,
    CTHON_OPT_ATTR_FILES,
    CTHON_OPT_ATTR_COUNT,
    CTHON_OPT_IO_SIZE,
    CTHON_OPT_IO_COUNT,
    CTHON_OPT_BUFSIZE,
    CTHON_OPT_READDIR_FILES,
    CTHON_OPT_READDIR_COUNT,
    CTHON_OPT_LINK_FILES,
    CTHON_OPT_LINK_COUNT,
    CTHON_OPT_SYMLINK_FILES,
    CTHON_OPT_SYMLINK_COUNT,
    CTHON_OPT_STATFS_COUNT,
    CTHON_OPT_DIR,
    CTHON_OPT_HOOK,
    CTHON_OPT_TIMEOUT,
};

static const struct option cthon_longopts[] = {
    {"tests", required_argument, NULL, 't'},
    {"quick", no_argument, NULL, 'q'},
    {"levels", required_argument, NULL, CTHON_OPT_LEVELS},
    {"files", required_argument, NULL, CTHON_OPT_FILES},
    {"dirs", required_argument, NULL, CTHON_OPT_DIRS},
    {"lookups", required_argument, NULL, CTHON_OPT_LOOKUPS},
    {"attr-files", required_argument, NULL, CTHON_OPT_ATTR_FILES},
    {"attr-count", required_argument, NULL, CTHON_OPT_ATTR_COUNT},
    {"io-size", required_argument, NULL, CTHON_OPT_IO_SIZE},
    {"io-count", required_argument, NULL, CTHON_OPT_IO_COUNT},
    {"bufsize", required_argument, NULL, CTHON_OPT_BUFSIZE},
    {"readdir-files", required_argument, NULL, CTHON_OPT_READDIR_FILES},
    {"readdir-count", required_argument, NULL, CTHON_OPT_READDIR_COUNT},
    {"link-files", required_argument, NULL, CTHON_OPT_LINK_FILES},
    {"link-count", required_argument, NULL, CTHON_OPT_LINK_COUNT},
    {"symlink-files", required_argument, NULL, CTHON_OPT_SYMLINK_FILES},
    {"symlink-count", required_argument, NULL, CTHON_OPT_SYMLINK_COUNT},
    {"statfs-count", required_argument, NULL, CTHON_OPT_STATFS_COUNT},
    {"dir", required_argument, NULL, CTHON_OPT_DIR},
    {"keep", no_argument, NULL, 'k'},
    {"hook", required_argument, NULL, CTHON_OPT_HOOK},
    {"timeout", required_argument, NULL, CTHON_OPT_TIMEOUT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Parse a non-negative decimal number no larger than max. Returns 0 or -1. */
static int cthon_parse_num(const char *opt, const char *s, unsigned long long max,
                           unsigned long long *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > max) {
        fprintf(stderr, "cthon: --%s: '%s' is not a number from 0 to %llu\n", opt, s, max);
        return -1;
    }
    *out = v;
    return 0;
}

/* Mark the tests of a comma-separated list in sel[]. Returns 0 or -1. */
static int cthon_parse_tests(const char *list, bool *sel)
{
    char *copy = strdup(list), *tok, *save = NULL;
    int rc = 0;

    if (!copy)
        return -1;
    for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        size_t i;
        for (i = 0; i < cthon_ntests; i++) {
            if (strcmp(tok, cthon_tests[i].id) == 0)
                break;
        }
        if (i == cthon_ntests) {
            fprintf(stderr, "cthon: unknown test '%s' (known: 1 2 3 4 4a 5a 5b 6 7 8 9)\n", tok);
            rc = -1;
            break;
        }
        sel[i] = true;
    }
    free(copy);
    return rc;
}

/* Index of test id in cthon_tests[]. */
static size_t cthon_test_index(const char *id)
{
    for (size_t i = 0; i < cthon_ntests; i++) {
        if (strcmp(cthon_tests[i].id, id) == 0)
            return i;
    }
    return cthon_ntests;
}

static double cthon_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run `hook phase id` through the shell. Returns 0 or -1 after a message. */
static int cthon_run_hook(const char *hook, const char *phase, const char *id)
{
    size_t len = strlen(hook) + strlen(phase) + strlen(id) + 3;
    char *cmd = malloc(len);
    int rc;

    if (!cmd)
        return -1;
    snprintf(cmd, len, "%s %s %s", hook, phase, id);
    fflush(stdout);
    rc = system(cmd);
    free(cmd);
    if (rc != 0) {
        fprintf(stderr, "cthon: hook '%s %s %s' failed (status %d)\n", hook, phase, id, rc);
        return -1;
    }
    return 0;
}

/* Go back up to the root and remove the test directory (unless keep). */
static void cthon_finish(cthon_run *run, const char *dir, bool keep)
{
    int rc;

    while (run->depth > 0) {
        rc = run->ops->chdir(run->fs, "..");
        if (rc < 0) {
            fprintf(stderr, "cthon: cannot go back up to remove %s: %s\n", dir, strerror(-rc));
            return;
        }
        run->depth--;
    }
    if (keep) {
        fprintf(stderr, "cthon: kept the test directory %s\n", dir);
        return;
    }
    rc = cthon_rmtree(run, dir);
    if (rc < 0)
        fprintf(stderr, "cthon: cannot remove the test directory %s: %s %s\n", dir, strerror(-rc),
                run->ops->strerror(run->fs));
}

int main(int argc, char **argv)
{
    cthon_params p;
    bool sel[16] = {false}, any = false, keep = false, quick = false;
    const char *hook = NULL, *target;
    char dir[HOST_NAME_MAX + 64], host[HOST_NAME_MAX + 1], err[512];
    unsigned long long timeout_s = 60, v;
    cthon_run run;
    int c, rc, status = CTHON_EXIT_OK;
    double total = 0;

    /* --quick first, so that explicit counts override it in any order. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--quick") == 0 || strcmp(argv[i], "-q") == 0)
            quick = true;
    }
    cthon_params_default(&p, quick);
    dir[0] = '\0';

    while ((c = getopt_long(argc, argv, "t:qkh", cthon_longopts, NULL)) != -1) {
        unsigned long long max = UINT_MAX;
        if (c == CTHON_OPT_IO_SIZE)
            max = 1ULL << 40;
        if (c >= CTHON_OPT_LEVELS && c <= CTHON_OPT_STATFS_COUNT) {
            const char *name = cthon_longopts[c - CTHON_OPT_LEVELS + 2].name;
            if (cthon_parse_num(name, optarg, max, &v) < 0)
                return CTHON_EXIT_USAGE;
        }
        switch (c) {
        case 't':
            if (cthon_parse_tests(optarg, sel) < 0)
                return CTHON_EXIT_USAGE;
            any = true;
            break;
        case 'q':
            break;
        case CTHON_OPT_LEVELS:
            p.levels = (unsigned)v;
            break;
        case CTHON_OPT_FILES:
            p.files = (unsigned)v;
            break;
        case CTHON_OPT_DIRS:
            p.dirs = (unsigned)v;
            break;
        case CTHON_OPT_LOOKUPS:
            p.lookups = (unsigned)v;
            break;
        case CTHON_OPT_ATTR_FILES:
            p.attr_files = (unsigned)v;
            break;
        case CTHON_OPT_ATTR_COUNT:
            p.attr_count = (unsigned)v;
            break;
        case CTHON_OPT_IO_SIZE:
            p.io_size = v;
            break;
        case CTHON_OPT_IO_COUNT:
            p.io_count = (unsigned)v;
            break;
        case CTHON_OPT_BUFSIZE:
            p.bufsize = (unsigned)v;
            break;
        case CTHON_OPT_READDIR_FILES:
            p.readdir_files = (unsigned)v;
            break;
        case CTHON_OPT_READDIR_COUNT:
            p.readdir_count = (unsigned)v;
            break;
        case CTHON_OPT_LINK_FILES:
            p.link_files = (unsigned)v;
            break;
        case CTHON_OPT_LINK_COUNT:
            p.link_count = (unsigned)v;
            break;
        case CTHON_OPT_SYMLINK_FILES:
            p.symlink_files = (unsigned)v;
            break;
        case CTHON_OPT_SYMLINK_COUNT:
            p.symlink_count = (unsigned)v;
            break;
        case CTHON_OPT_STATFS_COUNT:
            p.statfs_count = (unsigned)v;
            break;
        case CTHON_OPT_DIR:
            if (strlen(optarg) >= sizeof dir || strchr(optarg, '/') || !*optarg ||
                strcmp(optarg, ".") == 0 || strcmp(optarg, "..") == 0) {
                fprintf(stderr, "cthon: --dir: '%s' is not a plain file name\n", optarg);
                return CTHON_EXIT_USAGE;
            }
            strcpy(dir, optarg);
            break;
        case 'k':
            keep = true;
            break;
        case CTHON_OPT_HOOK:
            hook = optarg;
            break;
        case CTHON_OPT_TIMEOUT:
            if (cthon_parse_num("timeout", optarg, 86400, &timeout_s) < 0)
                return CTHON_EXIT_USAGE;
            break;
        case 'h':
            fputs(cthon_usage, stdout);
            return CTHON_EXIT_OK;
        default:
            fputs(cthon_usage, stderr);
            return CTHON_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fputs(cthon_usage, stderr);
        return CTHON_EXIT_USAGE;
    }
    target = argv[optind];
    if (!any) {
        for (size_t i = 0; i < cthon_ntests; i++)
            sel[i] = true;
    }
    /* Tests that need what another one leaves. */
    if (sel[cthon_test_index("2")])
        sel[cthon_test_index("1")] = true;
    if (sel[cthon_test_index("5b")])
        sel[cthon_test_index("5a")] = true;
    if (!dir[0]) {
        if (gethostname(host, sizeof host) < 0)
            strcpy(host, "localhost");
        host[sizeof host - 1] = '\0';
        snprintf(dir, sizeof dir, "cthon.%s.%ld", host, (long)getpid());
    }

    memset(&run, 0, sizeof run);
    run.p = &p;
    if (strncmp(target, "nfs://", 6) == 0)
        rc = cthon_nfs_open(target, (int)timeout_s * 1000, &run.fs, &run.ops, err, sizeof err);
    else
        rc = cthon_path_open(target, &run.fs, &run.ops, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "cthon: %s\n", err);
        return CTHON_EXIT_SETUP;
    }
    rc = run.ops->mkdir(run.fs, dir, 0777);
    if (rc == 0)
        rc = run.ops->chdir(run.fs, dir);
    if (rc < 0) {
        fprintf(stderr, "cthon: cannot make the test directory %s in %s: %s %s\n", dir, target,
                strerror(-rc), run.ops->strerror(run.fs));
        run.ops->destroy(run.fs);
        return CTHON_EXIT_SETUP;
    }
    run.depth = 1;
    printf("cthon: %s front end, %s, test directory %s\n", run.ops->name, target, dir);

    double *secs = calloc(cthon_ntests, sizeof *secs);
    int *result = calloc(cthon_ntests, sizeof *result); /* 0 not run, 1 ok, -1 failed */
    if (!secs || !result) {
        fprintf(stderr, "cthon: out of memory\n");
        status = CTHON_EXIT_SETUP;
        goto out;
    }
    for (size_t i = 0; i < cthon_ntests; i++) {
        const cthon_test *t = &cthon_tests[i];
        char summary[256] = "";
        double t0;

        if (!sel[i])
            continue;
        if (hook && cthon_run_hook(hook, "before", t->id) < 0) {
            status = CTHON_EXIT_SETUP;
            break;
        }
        run.errmsg[0] = '\0';
        t0 = cthon_now();
        rc = t->run(&run, summary, sizeof summary);
        secs[i] = cthon_now() - t0;
        total += secs[i];
        result[i] = rc == 0 ? 1 : -1;
        if (rc == 0) {
            printf("test %-3s %-18s %-58s %8.3f s\n", t->id, t->name, summary, secs[i]);
        } else {
            printf("test %-3s %-18s FAILED after %.3f s\n", t->id, t->name, secs[i]);
            fflush(stdout);
            fprintf(stderr, "cthon: test %s (%s) failed: %s\n", t->id, t->name, run.errmsg);
            status = CTHON_EXIT_FAIL;
        }
        fflush(stdout);
        if (hook && cthon_run_hook(hook, "after", t->id) < 0 && status == CTHON_EXIT_OK)
            status = CTHON_EXIT_SETUP;
        if (status != CTHON_EXIT_OK)
            break;
    }
    for (size_t i = 0; i < cthon_ntests; i++) {
        if (result[i] != 0)
            printf("RESULT test=%s seconds=%.6f status=%s\n", cthon_tests[i].id, secs[i],
                   result[i] > 0 ? "ok" : "fail");
    }
    printf("RESULT total seconds=%.6f status=%s\n", total, status == 0 ? "ok" : "fail");
out:
    fflush(stdout);
    free(secs);
    free(result);
    cthon_finish(&run, dir, keep);
    run.ops->destroy(run.fs);
    return status;
}
