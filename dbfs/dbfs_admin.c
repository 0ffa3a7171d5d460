/*
 * dbfs_admin.c -- questions about the whole tree, answered by the
 * database in one query each (recursive CTEs over naming and fileatt)
 * instead of by walking the file system: `pgnfs du` and `pgnfs find`.
 *
 * A dbfs_admin is a session (dbfs_conn.h) that prepares the statements it
 * uses on first use (DBFS_ST_ADMIN_*, dbfs_sql.c). The walks are streams
 * (dbfs_stream): rows reach the callback as the server produces them, so
 * a tree of millions of entries needs no memory here; a callback that
 * stops early cancels the query and drains the rest.
 *
 *   open --dbfs_admin_open: connect, is there a file system?--> ready
 *   ready --resolve / find / du (one statement at a time)--> ready
 *   ready --dbfs_admin_close--> (gone)
 *
 * NOTES
 *   Errors: as dbfs_err.h's table says, like every dbfs path: a lost
 *   connection is -EAGAIN (and the session is reset for the next call),
 *   serialization failures run the statement again (bounded), 53100 is
 *   -ENOSPC, the rest -EIO logged with its SQLSTATE and the statement's
 *   name. Every PGresult is cleared where it is taken.
 *   Paths in results are bytes (names may be any bytes but '/' and NUL).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_admin.h"

/* A deep tree stops here: a damaged one with a cycle must not recurse forever. */
#define DBFS_ADMIN_DEPTH_MAX 4096

/*
 * dbfs_admin_open -- see dbfs.h. Two round trips after connecting: is
 * there a file system (DBFS_ST_ADM_EXISTS)? then JIT off for the session
 * (DBFS_ST_ADMIN_NOJIT).
 */
int dbfs_admin_open(const char *conninfo, dbfs_admin **out)
{
    dbfs_admin *a = calloc(1, sizeof *a);
    PGresult *r = NULL;
    int rc;

    *out = NULL;
    if (!a)
        return -ENOMEM;
    rc = dbfs_session_open(conninfo, "pgnfs-admin", &a->c);
    if (rc != 0)
        goto err;
    rc = dbfs_exec(a->c, DBFS_ST_ADM_EXISTS, NULL, &r);
    if (rc != 0)
        goto err;
    if (PQntuples(r) != 1 || PQgetlength(r, 0, 0) != 1 || PQgetvalue(r, 0, 0)[0] == 0) {
        rc = -ENOENT;
        goto err;
    }
    PQclear(r);
    r = NULL;
    rc = dbfs_exec(a->c, DBFS_ST_ADMIN_NOJIT, NULL, &r);
    if (rc != 0)
        goto err;
    PQclear(r);
    *out = a;
    return 0;
err:
    PQclear(r);
    dbfs_admin_close(a);
    return rc;
}

/* dbfs_admin_close -- see dbfs.h (NULL is ignored). */
void dbfs_admin_close(dbfs_admin *a)
{
    if (!a)
        return;
    dbfs_conn_close(a->c);
    free(a);
}

/* dbfs_admin_resolve -- see dbfs.h. One round trip per component. */
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
        rc = dbfs_exec(a->c, DBFS_ST_ADMIN_LOOKUP, &prm, &r);
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

/* dbfs_admin_find -- see dbfs.h: one streamed statement (a recursive CTE). */
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
    return dbfs_stream(a->c, DBFS_ST_ADMIN_FIND, &p, dbfs_find_row, &w);
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

/* dbfs_admin_du -- see dbfs.h: one streamed statement (a recursive CTE). */
int dbfs_admin_du(dbfs_admin *a, uint64_t start, unsigned maxdepth,
                  int (*cb)(const dbfs_du_entry *e, void *arg), void *arg)
{
    dbfs_du_walk w = {cb, arg};
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)start);
    dbfs_param_i4(&p, (int32_t)(maxdepth < DBFS_ADMIN_DEPTH_MAX ? maxdepth : DBFS_ADMIN_DEPTH_MAX));
    dbfs_param_i4(&p, DBFS_ADMIN_DEPTH_MAX);
    return dbfs_stream(a->c, DBFS_ST_ADMIN_DU, &p, dbfs_du_row, &w);
}
