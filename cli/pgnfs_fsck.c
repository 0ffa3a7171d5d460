/*
 * pgnfs_fsck.c -- `pgnfs fsck [--repair]`: check the file system's
 * invariants in the database (dbfs_fsck, schema/functions/90_fsck.sql)
 * and, with --repair, fix what is broken.
 *
 *   pgnfs fsck [--repair] [-q] [--data DIR | --conninfo STR]
 *
 * Problems go to stdout, one line each ("nlink 42: file 42 has nlink 3,
 * should be 1: set"); a summary to stderr; progress to stderr when stderr
 * is a terminal. -q prints nothing but errors (the exit status says the
 * rest). Exit status as fsck(8):
 *
 *   0   no problem found
 *   1   problems found, all repaired (the checks run again find nothing)
 *   4   problems left uncorrected (found without --repair, or not
 *       repairable)
 *   8   operational error (no database, no file system, a check failed)
 *   16  usage error
 *
 * Checking reads the embedded cluster beside a running server (it takes
 * no locks: pgnfs_database_peek). Repairing needs the server stopped: on
 * the embedded cluster it takes the data directory's lock like a server
 * does (so it refuses while one runs); on an external database it cannot
 * tell, and says that a running server must be restarted afterwards (its
 * caches do not see changes made in SQL).
 *
 * NOTES
 *   Output is written as problems arrive; nothing is kept.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "dbfs_xform.h"
#include "pgnfs_cmd.h"

enum {
    PGNFS_FSCK_CLEAN = 0,
    PGNFS_FSCK_CORRECTED = 1,
    PGNFS_FSCK_UNCORRECTED = 4,
    PGNFS_FSCK_OPERATIONAL = 8,
    PGNFS_FSCK_USAGE = 16,
};

typedef struct {
    bool tty;   /* stderr is a terminal (and not -q): progress lines */
    bool quiet; /* -q: no problem lines, no summary */
} pgnfs_fsck_out;

const char pgnfs_help_fsck[] =
    "usage: pgnfs fsck [--repair] [-q] [options]\n"
    "\n"
    "Check the file system's invariants in the database: link counts, names that\n"
    "point nowhere, directories with two names or cut off from the root, inodes\n"
    "without a name, per-file tables and chunks without a file, stored sizes.\n"
    "Problems go to stdout, one line each; a summary to stderr. Checking works\n"
    "beside a running server; repairing needs it stopped.\n"
    "\n"
    "  --repair, -y   fix what is found (orphans go to /lost+found), then check again\n"
    "  -q, --quiet    print nothing but errors; the exit status says the rest\n"
    "\n"
    "exit status (as fsck(8)): 0 clean, 1 problems found and all repaired,\n"
    "4 problems left, 8 operational error, 16 usage error\n"
    "\n"
    "examples:\n"
    "  pgnfs fsck\n"
    "  pgnfs fsck -q || echo \"fsck says $?\"\n"
    "  pgnfs fsck --repair --conninfo 'host=db dbname=files user=pgnfs'\n";

static void pgnfs_fsck_progress(void *arg, unsigned pass, unsigned step, unsigned nsteps,
                                const char *what)
{
    const pgnfs_fsck_out *o = arg;

    if (!o->tty)
        return;
    /* One line, rewritten: cleared at the end of the run. */
    fprintf(stderr, "\r\033[Kpgnfs fsck: %s[%u/%u] %s", pass > 1 ? "checking again " : "", step,
            nsteps, what);
    fflush(stderr);
}

static void pgnfs_fsck_problem(void *arg, unsigned pass, const dbfs_fsck_problem *p)
{
    const pgnfs_fsck_out *o = arg;

    if (o->quiet)
        return;
    if (o->tty)
        fputs("\r\033[K", stderr);
    printf("%s%s %llu: %s\n", pass > 1 ? "still: " : "", p->check, (unsigned long long)p->ino,
           p->detail);
    fflush(stdout);
}

static void pgnfs_fsck_xform(const dbfs_xform_problem *p, void *arg)
{
    const pgnfs_fsck_out *o = arg;

    if (o->quiet)
        return;
    printf("xform-chunk %llu: %s\n", (unsigned long long)p->ino, p->detail);
    fflush(stdout);
}

/* pgnfs fsck [--repair] [-q]: see the file header. */
int pgnfs_cmd_fsck(const cfg *c, int argc, char **argv)
{
    pgnfs_fsck_out o = {.tty = isatty(STDERR_FILENO) == 1};
    dbfs_fsck_opts opts = {
        .progress = pgnfs_fsck_progress,
        .problem = pgnfs_fsck_problem,
        .arg = &o,
    };
    emb_cluster *cluster = NULL;
    char *peeked = NULL;
    const char *conninfo;
    dbfs_fsck_report rep;
    dbfs *fs = NULL;
    int rc = PGNFS_FSCK_OPERATIONAL;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--repair") == 0 || strcmp(argv[i], "-y") == 0) {
            opts.repair = true;
        } else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0) {
            o.quiet = true;
        } else {
            g_printerr("pgnfs fsck: unknown argument '%s' (see pgnfs fsck --help)\n", argv[i]);
            return PGNFS_FSCK_USAGE;
        }
    }
    o.tty = o.tty && !o.quiet;
    if (opts.repair) {
        if (!pgnfs_database_exists(c))
            return PGNFS_FSCK_OPERATIONAL;
        conninfo = pgnfs_database(c, &cluster);
        if (!conninfo)
            g_printerr("pgnfs fsck: --repair works on a stopped server's data directory "
                       "(checking without --repair works beside a running one)\n");
        if (conninfo && !cluster && !o.quiet)
            g_printerr("pgnfs fsck: repairing an external database: a pgnfs server using it "
                       "must be restarted afterwards (its caches do not see the repairs)\n");
    } else {
        conninfo = peeked = pgnfs_database_peek(c, &cluster);
    }
    if (!conninfo)
        return PGNFS_FSCK_OPERATIONAL;
    bool conflict = false;
    fs = pgnfs_attach(c, conninfo, false, &conflict);
    if (!fs) {
        rc = conflict ? PGNFS_FSCK_USAGE : PGNFS_FSCK_OPERATIONAL;
        goto out;
    }

    int err = dbfs_fsck(fs, &opts, &rep);
    if (o.tty)
        fputs("\r\033[K", stderr);
    if (err == 0) {
        /* Guarded chunks decode (not repaired: their bytes are lost). */
        uint64_t bad = 0;

        err = dbfs_xform_check(fs, pgnfs_fsck_xform, &o, &bad);
        rep.found += bad;
        if (opts.repair)
            rep.left += bad;
    }
    if (err != 0) {
        g_printerr("pgnfs fsck: the check could not finish: %s (%lu problems found so far)\n",
                   g_strerror(-err), rep.found);
        goto out;
    }
    if (rep.found == 0) {
        if (!o.quiet)
            g_printerr("pgnfs fsck: clean\n");
        rc = PGNFS_FSCK_CLEAN;
    } else if (!opts.repair) {
        if (!o.quiet)
            g_printerr("pgnfs fsck: %lu problem%s found (run with --repair to fix %s)\n", rep.found,
                       rep.found == 1 ? "" : "s", rep.found == 1 ? "it" : "them");
        rc = PGNFS_FSCK_UNCORRECTED;
    } else if (rep.left == 0) {
        if (!o.quiet)
            g_printerr("pgnfs fsck: %lu problem%s found, all repaired\n", rep.found,
                       rep.found == 1 ? "" : "s");
        rc = PGNFS_FSCK_CORRECTED;
    } else {
        if (!o.quiet)
            g_printerr("pgnfs fsck: %lu problems found, %lu repaired, %lu left\n", rep.found,
                       rep.repaired, rep.left);
        rc = PGNFS_FSCK_UNCORRECTED;
    }
out:
    if (fs)
        dbfs_close(fs);
    if (cluster && emb_stop(cluster) != 0 && rc == PGNFS_FSCK_CLEAN)
        rc = PGNFS_FSCK_OPERATIONAL;
    g_free(peeked);
    return rc;
}
