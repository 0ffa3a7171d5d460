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
 * Order matters for repairs: names pointing nowhere go before the
 * structure checks, extra directory names before cycles, cycles before
 * orphans (a broken cycle becomes a name in /lost+found), all of those
 * before nlink, and the placement of data before the checks that read it.
 *
 * NOTES
 *   The connection is plain (no pipeline mode), its own, and closed on
 *   return; statements are prepared on first use. Errors: a lost
 *   connection is -EAGAIN; a deadlock or serialization failure retries
 *   the check (it ran in a transaction of its own: nothing of it stayed);
 *   anything else is -EIO with the SQLSTATE logged. Every PGresult is
 *   cleared where it is taken. Nothing here keeps state between calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_int.h"

typedef struct {
    const char *name; /* as pgnfs_fsck() knows it */
    const char *what; /* for progress lines */
} dbfs_fsck_check;

static const dbfs_fsck_check dbfs_fsck_checks[] = {
    {"root", "the root directory"},
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
};
#define DBFS_FSCK_NCHECKS (sizeof dbfs_fsck_checks / sizeof dbfs_fsck_checks[0])

typedef struct {
    PGconn *pg;
    bool prepared[DBFS_ST_COUNT];
} dbfs_fsck_conn;

static void dbfs_fsck_notice(void *arg, const char *msg)
{
    (void)arg;
    g_debug("database notice: %.*s", (int)strcspn(msg, "\n"), msg);
}

/* A failed statement: -EAGAIN (connection lost), DBFS_ERETRY (deadlock,
 * serialization failure) or -EIO, logged. */
static int dbfs_fsck_fail(dbfs_fsck_conn *f, const PGresult *r, dbfs_stmt id)
{
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

    if (PQstatus(f->pg) != CONNECTION_OK) {
        const char *m = PQerrorMessage(f->pg);
        g_warning("%s: lost the database connection: %.*s", dbfs_stmts[id].name,
                  (int)strcspn(m, "\n"), m);
        return -EAGAIN;
    }
    if (state && (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0)) {
        g_message("%s: SQLSTATE %s (a server was writing): running the check again",
                  dbfs_stmts[id].name, state);
        return DBFS_ERETRY;
    }
    g_warning("%s failed: SQLSTATE %s: %s", dbfs_stmts[id].name, state ? state : "none",
              msg ? msg : PQerrorMessage(f->pg));
    return -EIO;
}

/* Run statement id; *res (caller clears) on success. */
static int dbfs_fsck_exec(dbfs_fsck_conn *f, dbfs_stmt id, const dbfs_params *p, PGresult **res)
{
    PGresult *r;
    int rc = 0;

    *res = NULL;
    if (!f->prepared[id]) {
        r = PQprepare(f->pg, dbfs_stmts[id].name, dbfs_stmts[id].sql, 0, NULL);
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            rc = dbfs_fsck_fail(f, r, id);
        else
            f->prepared[id] = true;
        PQclear(r);
        if (rc != 0)
            return rc;
    }
    r = PQexecPrepared(f->pg, dbfs_stmts[id].name, p->n, p->values, p->lengths, p->formats, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = dbfs_fsck_fail(f, r, id);
        PQclear(r);
        return rc;
    }
    *res = r;
    return 0;
}

static int dbfs_fsck_isolation(dbfs_fsck_conn *f, const char *level)
{
    dbfs_params p;
    PGresult *r;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_bytes(&p, level, strlen(level));
    rc = dbfs_fsck_exec(f, DBFS_ST_FSCK_ISOLATION, &p, &r);
    PQclear(r);
    return rc;
}

/*
 * One check; every problem row to the caller's callback. *found and
 * *repaired count the rows and those repaired. Returns 0 or an errno.
 */
static int dbfs_fsck_run(dbfs_fsck_conn *f, const dbfs_fsck_check *chk, bool repair, unsigned pass,
                         const dbfs_fsck_opts *opts, unsigned long *found, unsigned long *repaired)
{
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_bytes(&p, chk->name, strlen(chk->name));
    dbfs_param_bool(&p, repair);
    for (int attempt = 1;; attempt++) {
        rc = dbfs_fsck_exec(f, DBFS_ST_FSCK_CHECK, &p, &r);
        if (rc != DBFS_ERETRY)
            break;
        if (!dbfs_retry_wait(attempt)) {
            g_warning("fsck: check %s keeps meeting writers: giving up", chk->name);
            return -EAGAIN;
        }
    }
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
static int dbfs_fsck_pass(dbfs_fsck_conn *f, const dbfs_fsck_opts *opts, bool repair, unsigned pass,
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

int dbfs_fsck(dbfs *fs, const dbfs_fsck_opts *opts, dbfs_fsck_report *out)
{
    /* Defaults first: the conninfo (expanded dbname) overrides them. */
    const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *const vals[] = {"10", "pgnfs-fsck", fs->conninfo, NULL};
    dbfs_fsck_conn f = {0};
    unsigned long again = 0, unused = 0;
    int rc;

    memset(out, 0, sizeof *out);
    f.pg = PQconnectdbParams(keys, vals, 1);
    if (!f.pg || PQstatus(f.pg) != CONNECTION_OK) {
        const char *m = f.pg ? PQerrorMessage(f.pg) : "out of memory";
        g_warning("fsck: cannot connect to the database: %.*s", (int)strcspn(m, "\n"), m);
        rc = -EAGAIN;
        goto out;
    }
    PQsetNoticeProcessor(f.pg, dbfs_fsck_notice, NULL);
    rc = dbfs_fsck_pass(&f, opts, opts->repair, 1, &out->found, &out->repaired);
    if (rc != 0)
        goto out;
    out->left = out->found;
    if (opts->repair && out->found > 0) {
        rc = dbfs_fsck_pass(&f, opts, false, 2, &again, &unused);
        if (rc == 0)
            out->left = again;
    }
out:
    PQfinish(f.pg);
    return rc;
}
