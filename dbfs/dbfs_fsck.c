/*
 * dbfs_fsck.c -- `pgnfs fsck` on the database side (dbfs.h): run the checks
 * of schema/functions/90_fsck.sql in order, each as one statement, report
 * every problem to the caller, and after repairs run them all again.
 *
 *   connect --isolation: repeatable read (check) / read committed (repair)
 *     --> pass 1: for each check, pgnfs_fsck(check, repair)
 *           a root problem stops repairs: the rest is only checked
 *     --> repair only: isolation repeatable read, pass 2: every check
 *         again without repairing ("left" = what it finds)
 *     --> close
 *
 * Order matters for repairs: attribute values (a type) before anything
 * that reads them, names pointing nowhere before the
 * structure checks, extra directory names before cycles, cycles before
 * orphans (a broken cycle becomes a name in /lost+found), all of those
 * before nlink, and the placement of data before the checks that read it.
 *
 * NOTES
 *   The connection is a session of its own (dbfs_conn.h), closed on
 *   return; statements are prepared on first use. Errors as dbfs_err.h's
 *   table, like every dbfs path: a lost connection is -EAGAIN; a deadlock
 *   or serialization failure runs the check again, bounded (it ran in a
 *   transaction of its own: nothing of it stayed); 53100 is -ENOSPC;
 *   anything else is -EIO with the SQLSTATE logged. Every PGresult is
 *   cleared where it is taken. Nothing here keeps state between calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_conn.h"
#include "dbfs_int.h"

typedef struct {
    const char *name; /* as pgnfs_fsck() knows it */
    const char *what; /* for progress lines */
} dbfs_fsck_check;

static const dbfs_fsck_check dbfs_fsck_checks[] = {
    {"root", "the root directory"},
    {"attributes", "attribute values (type, mode, owner, size, target)"},
    {"names", "names and what they point to"},
    {"bad-names", "names no client can use (NUL, '/', \"\", \".\", \"..\")"},
    {"dir-links", "directories with more than one name"},
    {"dir-cycles", "directories the root does not reach"},
    {"orphans", "inodes without a name"},
    {"nlink", "link counts"},
    {"data-tables", "per-file tables"},
    {"data-orphans", "chunks without a file"},
    {"data-eof", "data past the end of files"},
    {"used", "stored bytes (used)"},
    {"lock-orphans", "locks on files that do not exist"},
    {"snapshots", "rows kept for snapshots"},
};
#define DBFS_FSCK_NCHECKS (sizeof dbfs_fsck_checks / sizeof dbfs_fsck_checks[0])

static int dbfs_fsck_isolation(dbfs_conn *f, const char *level)
{
    dbfs_params p;
    PGresult *r;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_bytes(&p, level, strlen(level));
    rc = dbfs_exec(f, DBFS_ST_FSCK_ISOLATION, &p, &r);
    PQclear(r);
    return rc;
}

/*
 * One check; every problem row to the caller's callback. *found and
 * *repaired count the rows and those repaired. Returns 0 or an errno.
 */
static int dbfs_fsck_run(dbfs_conn *f, const dbfs_fsck_check *chk, bool repair, unsigned pass,
                         const dbfs_fsck_opts *opts, unsigned long *found, unsigned long *repaired)
{
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_bytes(&p, chk->name, strlen(chk->name));
    dbfs_param_bool(&p, repair);
    /* A check is a transaction of its own: a serialization failure or a
     * deadlock with a server's writes runs it again (bounded). */
    rc = dbfs_exec(f, DBFS_ST_FSCK_CHECK, &p, &r);
    if (rc != 0)
        return rc;
    for (int row = 0; row < PQntuples(r); row++) {
        char *detail = g_strndup(PQgetvalue(r, row, 2), (gsize)PQgetlength(r, row, 2));
        dbfs_fsck_problem prob = {
            .check = chk->name,
            .ino = dbfs_get_null(r, row, 1) ? 0 : (uint64_t)dbfs_get_i8(r, row, 1),
            .detail = detail,
            .repaired = PQgetlength(r, row, 3) == 1 && PQgetvalue(r, row, 3)[0] != 0,
        };
        (*found)++;
        if (prob.repaired)
            (*repaired)++;
        if (opts->problem)
            opts->problem(opts->arg, pass, &prob);
        g_free(detail);
    }
    PQclear(r);
    return 0;
}

/* One pass over every check; repairs only when repair (and the root is
 * sound). */
static int dbfs_fsck_pass(dbfs_conn *f, const dbfs_fsck_opts *opts, bool repair, unsigned pass,
                          unsigned long *found, unsigned long *repaired)
{
    int rc;

    if ((rc = dbfs_fsck_isolation(f, repair ? "read committed" : "repeatable read")) != 0)
        return rc;
    for (unsigned i = 0; i < DBFS_FSCK_NCHECKS; i++) {
        unsigned long before = *found;
        if (opts->progress)
            opts->progress(opts->arg, pass, i + 1, DBFS_FSCK_NCHECKS, dbfs_fsck_checks[i].what);
        rc = dbfs_fsck_run(f, &dbfs_fsck_checks[i], repair, pass, opts, found, repaired);
        if (rc != 0)
            return rc;
        if (i == 0 && repair && *found > before) {
            g_message("fsck: the root directory is damaged: nothing will be repaired");
            repair = false;
            if ((rc = dbfs_fsck_isolation(f, "repeatable read")) != 0)
                return rc;
        }
    }
    return 0;
}

/* dbfs_fsck -- see dbfs.h. */
int dbfs_fsck(dbfs *fs, const dbfs_fsck_opts *opts, dbfs_fsck_report *out)
{
    dbfs_conn *f;
    unsigned long again = 0, unused = 0;
    int rc;

    memset(out, 0, sizeof *out);
    rc = dbfs_session_open(fs->conninfo, "pgnfs-fsck", &f);
    if (rc != 0)
        return rc;
    rc = dbfs_fsck_pass(f, opts, opts->repair, 1, &out->found, &out->repaired);
    if (rc == 0) {
        out->left = out->found;
        if (opts->repair && out->found > 0) {
            rc = dbfs_fsck_pass(f, opts, false, 2, &again, &unused);
            if (rc == 0)
                out->left = again;
        }
    }
    dbfs_conn_close(f);
    return rc;
}
