/*
 * dbfs_admin.c -- questions about the whole tree, answered by the
 * database in one query each (recursive CTEs over naming and fileatt)
 * instead of by walking the file system: `pgnfs du` and `pgnfs find`.
 *
 * A dbfs_admin is a plain connection (no pipeline mode) that prepares the
 * statements it uses on first use (DBFS_ST_ADMIN_*, dbfs_sql.c). The walks
 * run in libpq's single-row mode: rows reach the callback as the server
 * produces them, so a tree of millions of entries needs no memory here;
 * a callback that stops early cancels the query and drains the rest.
 *
 *   open --dbfs_admin_open: connect, is there a file system?--> ready
 *   ready --resolve / find / du (one statement at a time)--> ready
 *   ready --dbfs_admin_close--> (gone)
 *
 * NOTES
 *   Errors: a lost connection is -EAGAIN, anything else the database
 *   reports is -EIO, logged with its SQLSTATE and the statement's name
 *   (these commands run outside the server: there is nothing to retry and
 *   no status to map). Every PGresult is cleared where it is taken.
 *   Paths in results are bytes (names may be any bytes but '/' and NUL).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_int.h"

struct dbfs_admin {
    PGconn *pg;
    bool prepared[DBFS_ST_COUNT];
};

/* A deep tree stops here: a damaged one with a cycle must not recurse forever. */
#define DBFS_ADMIN_DEPTH_MAX 4096

static void dbfs_admin_notice(void *arg, const char *msg)
{
    (void)arg;
    g_debug("database notice: %.*s", (int)strcspn(msg, "\n"), msg);
}

/* Log a failed statement; -EAGAIN when the connection is gone, else -EIO. */
static int dbfs_admin_fail(dbfs_admin *a, const PGresult *r, dbfs_stmt id)
{
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

    if (PQstatus(a->pg) != CONNECTION_OK) {
        const char *m = PQerrorMessage(a->pg);
        g_warning("%s: lost the database connection: %.*s", dbfs_stmts[id].name,
                  (int)strcspn(m, "\n"), m);
        return -EAGAIN;
    }
    g_warning("%s failed: SQLSTATE %s: %s", dbfs_stmts[id].name, state ? state : "none",
              msg ? msg : PQerrorMessage(a->pg));
    return -EIO;
}

/* Prepare statement id on this connection once. */
static int dbfs_admin_prepare(dbfs_admin *a, dbfs_stmt id)
{
    PGresult *r;
    int rc = 0;

    if (a->prepared[id])
        return 0;
    r = PQprepare(a->pg, dbfs_stmts[id].name, dbfs_stmts[id].sql, 0, NULL);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        rc = dbfs_admin_fail(a, r, id);
    else
        a->prepared[id] = true;
    PQclear(r);
    return rc;
}

/* Run statement id to completion; *res (caller clears) on success. */
static int dbfs_admin_exec(dbfs_admin *a, dbfs_stmt id, const dbfs_params *p, PGresult **res)
{
    PGresult *r;
    int rc;

    *res = NULL;
    if ((rc = dbfs_admin_prepare(a, id)) != 0)
        return rc;
    r = PQexecPrepared(a->pg, dbfs_stmts[id].name, p ? p->n : 0, p ? p->values : NULL,
                       p ? p->lengths : NULL, p ? p->formats : NULL, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK) {
        rc = dbfs_admin_fail(a, r, id);
        PQclear(r);
        return rc;
    }
    *res = r;
    return 0;
}

/* A row of a streamed statement, to the walk's own callback. */
typedef int (*dbfs_admin_row_fn)(const PGresult *r, int row, void *arg);

/* Ask the server to stop the running query (its end is drained anyway). */
static void dbfs_admin_cancel(dbfs_admin *a)
{
    PGcancel *cancel = PQgetCancel(a->pg);
    char errbuf[256];

    if (cancel) {
        if (!PQcancel(cancel, errbuf, sizeof errbuf))
            g_debug("cancel request failed: %s", errbuf);
        PQfreeCancel(cancel);
    }
}

/*
 * Run statement id in single-row mode, each row to fn. A nonzero return
 * of fn cancels the query; the rest is drained and fn's value returned.
 */
static int dbfs_admin_stream(dbfs_admin *a, dbfs_stmt id, const dbfs_params *p,
                             dbfs_admin_row_fn fn, void *arg)
{
    PGresult *r;
    int rc, stop = 0;

    if ((rc = dbfs_admin_prepare(a, id)) != 0)
        return rc;
    if (!PQsendQueryPrepared(a->pg, dbfs_stmts[id].name, p->n, p->values, p->lengths, p->formats,
                             1))
        return dbfs_admin_fail(a, NULL, id);
    if (!PQsetSingleRowMode(a->pg))
        g_debug("%s: single-row mode refused: rows arrive at once", dbfs_stmts[id].name);
    while ((r = PQgetResult(a->pg)) != NULL) {
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_SINGLE_TUPLE || st == PGRES_TUPLES_OK) {
            /* One row each in single-row mode; the final TUPLES_OK has none
             * (or all of them, if single-row mode was refused). */
            for (int row = 0; row < PQntuples(r) && !stop && rc == 0; row++) {
                stop = fn(r, row, arg);
                if (stop)
                    dbfs_admin_cancel(a);
            }
        } else if (rc == 0 && !stop) {
            rc = dbfs_admin_fail(a, r, id);
        }
        PQclear(r);
    }
    return stop ? stop : rc;
}

int dbfs_admin_open(const char *conninfo, dbfs_admin **out)
{
    const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *const vals[] = {"10", "pgnfs-admin", conninfo, NULL};
    dbfs_admin *a = calloc(1, sizeof *a);
    PGresult *r = NULL;
    int rc;

    *out = NULL;
    if (!a)
        return -ENOMEM;
    a->pg = PQconnectdbParams(keys, vals, 1);
    if (!a->pg || PQstatus(a->pg) != CONNECTION_OK) {
        const char *m = a->pg ? PQerrorMessage(a->pg) : "out of memory";
        g_warning("cannot connect to the database: %.*s", (int)strcspn(m, "\n"), m);
        rc = -EAGAIN;
        goto err;
    }
    PQsetNoticeProcessor(a->pg, dbfs_admin_notice, NULL);
    rc = dbfs_admin_exec(a, DBFS_ST_ADM_EXISTS, NULL, &r);
    if (rc != 0)
        goto err;
    if (PQntuples(r) != 1 || PQgetlength(r, 0, 0) != 1 || PQgetvalue(r, 0, 0)[0] == 0) {
        rc = -ENOENT;
        goto err;
    }
    PQclear(r);
    *out = a;
    return 0;
err:
    PQclear(r);
    dbfs_admin_close(a);
    return rc;
}

void dbfs_admin_close(dbfs_admin *a)
{
    if (!a)
        return;
    PQfinish(a->pg);
    free(a);
}

int dbfs_admin_resolve(dbfs_admin *a, const char *path, uint64_t *ino, dbfs_type *type)
{
    uint64_t cur = DBFS_ROOT_INO;
    dbfs_type cur_type = DBFS_DIR;
    const char *p = path;
    int rc = 0;

    while (*p) {
        size_t n;
        PGresult *r;
        dbfs_params prm;

        while (*p == '/')
            p++;
        n = strcspn(p, "/");
        if (n == 0)
            break;
        if (n == 1 && p[0] == '.') {
            p += n;
            continue;
        }
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return -EINVAL;
        if (n > DBFS_NAME_MAX)
            return -ENAMETOOLONG;
        if (cur_type != DBFS_DIR)
            return -ENOTDIR;
        dbfs_params_init(&prm);
        dbfs_param_i8(&prm, (int64_t)cur);
        dbfs_param_bytes(&prm, p, n);
        rc = dbfs_admin_exec(a, DBFS_ST_ADMIN_LOOKUP, &prm, &r);
        if (rc != 0)
            return rc;
        if (PQntuples(r) != 1) {
            PQclear(r);
            return -ENOENT;
        }
        cur = (uint64_t)dbfs_get_i8(r, 0, 0);
        cur_type = (dbfs_type)dbfs_get_i2(r, 0, 1);
        PQclear(r);
        p += n;
    }
    *ino = cur;
    *type = cur_type;
    return 0;
}

typedef struct {
    int (*cb)(const dbfs_find_entry *e, void *arg);
    void *arg;
} dbfs_find_walk;

static int dbfs_find_row(const PGresult *r, int row, void *arg)
{
    dbfs_find_walk *w = arg;
    dbfs_find_entry e = {
        .path = PQgetvalue(r, row, 0),
        .path_len = (size_t)PQgetlength(r, row, 0),
        .depth = (unsigned)dbfs_get_i4(r, row, 1),
        .ino = (uint64_t)dbfs_get_i8(r, row, 2),
        .type = (dbfs_type)dbfs_get_i2(r, row, 3),
        .mode = (uint32_t)dbfs_get_i4(r, row, 4),
        .nlink = (uint32_t)dbfs_get_i4(r, row, 5),
        .uid = (uint32_t)dbfs_get_i8(r, row, 6),
        .gid = (uint32_t)dbfs_get_i8(r, row, 7),
        .size = (uint64_t)dbfs_get_i8(r, row, 8),
        .used = (uint64_t)dbfs_get_i8(r, row, 9),
        .mtime_ns = dbfs_get_i8(r, row, 10),
    };
    return w->cb(&e, w->arg);
}

int dbfs_admin_find(dbfs_admin *a, uint64_t start, const dbfs_find_query *q,
                    int (*cb)(const dbfs_find_entry *e, void *arg), void *arg)
{
    dbfs_find_walk w = {cb, arg};
    dbfs_params p;
    const char *start_name = q->start_name ? q->start_name : "";
    unsigned maxdepth = q->maxdepth < DBFS_ADMIN_DEPTH_MAX ? q->maxdepth : DBFS_ADMIN_DEPTH_MAX;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)start);
    dbfs_param_bytes(&p, start_name, strlen(start_name));
    dbfs_param_i4(&p, (int32_t)q->mindepth);
    dbfs_param_i4(&p, (int32_t)maxdepth);
    if (q->name_like)
        dbfs_param_bytes(&p, q->name_like, strlen(q->name_like));
    else
        dbfs_param_null(&p);
    dbfs_param_i4(&p, q->type);
    dbfs_param_i4(&p, q->size_cmp);
    dbfs_param_i8(&p, (int64_t)(q->size_unit ? q->size_unit : 1));
    dbfs_param_i8(&p, (int64_t)q->size_n);
    dbfs_param_i8(&p, q->uid);
    dbfs_param_i8(&p, q->gid);
    return dbfs_admin_stream(a, DBFS_ST_ADMIN_FIND, &p, dbfs_find_row, &w);
}

typedef struct {
    int (*cb)(const dbfs_du_entry *e, void *arg);
    void *arg;
} dbfs_du_walk;

static int dbfs_du_row(const PGresult *r, int row, void *arg)
{
    dbfs_du_walk *w = arg;
    dbfs_du_entry e = {
        .path = PQgetvalue(r, row, 0),
        .path_len = (size_t)PQgetlength(r, row, 0),
        .depth = (unsigned)dbfs_get_i4(r, row, 1),
        .ino = (uint64_t)dbfs_get_i8(r, row, 2),
        .used = (uint64_t)dbfs_get_i8(r, row, 3),
        .size = (uint64_t)dbfs_get_i8(r, row, 4),
        .files = (uint64_t)dbfs_get_i8(r, row, 5),
    };
    return w->cb(&e, w->arg);
}

int dbfs_admin_du(dbfs_admin *a, uint64_t start, unsigned maxdepth,
                  int (*cb)(const dbfs_du_entry *e, void *arg), void *arg)
{
    dbfs_du_walk w = {cb, arg};
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)start);
    dbfs_param_i4(&p, (int32_t)(maxdepth < DBFS_ADMIN_DEPTH_MAX ? maxdepth : DBFS_ADMIN_DEPTH_MAX));
    dbfs_param_i4(&p, DBFS_ADMIN_DEPTH_MAX);
    return dbfs_admin_stream(a, DBFS_ST_ADMIN_DU, &p, dbfs_du_row, &w);
}
