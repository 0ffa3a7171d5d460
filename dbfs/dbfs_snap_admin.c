/*
 * dbfs_snap_admin.c -- taking, listing, deleting and comparing snapshots,
 * reclaiming what deleted ones kept, and a server's schedule
 * (dbfs_snap.h; the SQL is schema/functions/21_snap.sql and 95_views.sql).
 *
 * NOTES
 *   Each call but dbfs_snap_tick opens a session of its own
 *   (dbfs_admin_open) and closes it on return, so it runs beside a server
 *   or without one; dbfs_snap_tick runs on the caller's session. Every
 *   call is one statement (one transaction) except the reclaim, which is
 *   one statement per step: a crash between steps loses nothing, and the
 *   next reclaim goes on from the step the database recorded.
 *   Errors: dbfs_err.h's, like every dbfs path; the functions' PNxxx codes
 *   give -EINVAL, -EEXIST and -ENOENT.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_admin.h"
#include "dbfs_int.h"
#include "dbfs_snap.h"
#include "dbfs_wire.h"

/* Inodes per reclaim step: a step of a million-file tree whose every row
 * was kept stays well under a second. */
#define DBFS_SNAP_RECLAIM_STEP 20000

/* dbfs_snap_create -- see dbfs_snap.h. One round trip. */
int dbfs_snap_create(dbfs *fs, const char *name, dbfs_snap_row *out)
{
    dbfs_admin *a = NULL;
    PGresult *r = NULL;
    dbfs_params p;
    int rc = dbfs_admin_open(fs->conninfo, &a);

    if (rc == 0) {
        dbfs_params_init(&p);
        dbfs_param_bytes(&p, name, strlen(name));
        dbfs_param_bool(&p, false);
        rc = dbfs_exec(a->c, DBFS_ST_SNAP_CREATE, &p, &r);
    }
    if (rc == 0 && PQntuples(r) != 1)
        rc = -EIO;
    if (rc == 0 && out) {
        memset(out, 0, sizeof *out);
        out->id = (uint32_t)dbfs_get_i8(r, 0, 0);
        out->created_us = dbfs_get_i8(r, 0, 1);
    }
    PQclear(r);
    dbfs_admin_close(a);
    return rc;
}

/* The rows of the listing, to the caller's callback. */
typedef struct {
    int (*cb)(const dbfs_snap_row *r, void *arg);
    void *arg;
} dbfs_snap_list_op;

static int dbfs_snap_list_row(const PGresult *r, int row, void *arg)
{
    dbfs_snap_list_op *op = arg;
    char *name = g_strndup(PQgetvalue(r, row, 1), (gsize)PQgetlength(r, row, 1));
    dbfs_snap_row s = {
        .id = (uint32_t)dbfs_get_i8(r, row, 0),
        .name = name,
        .created_us = dbfs_get_i8(r, row, 2),
        .scheduled = PQgetvalue(r, row, 3)[0] != 0,
        .holds = (uint64_t)dbfs_get_i8(r, row, 4),
    };
    int rc = op->cb(&s, op->arg);

    g_free(name);
    return rc;
}

/* dbfs_snap_list -- see dbfs_snap.h. One statement, streamed. */
int dbfs_snap_list(dbfs *fs, int (*cb)(const dbfs_snap_row *r, void *arg), void *arg)
{
    dbfs_snap_list_op op = {cb, arg};
    dbfs_admin *a = NULL;
    int rc = dbfs_admin_open(fs->conninfo, &a);

    if (rc == 0)
        rc = dbfs_stream(a->c, DBFS_ST_SNAP_LIST_ALL, NULL, dbfs_snap_list_row, &op);
    dbfs_admin_close(a);
    return rc;
}

/* dbfs_snap_delete -- see dbfs_snap.h. One round trip. */
int dbfs_snap_delete(dbfs *fs, const char *name)
{
    dbfs_admin *a = NULL;
    PGresult *r = NULL;
    dbfs_params p;
    int rc = dbfs_admin_open(fs->conninfo, &a);

    if (rc == 0) {
        dbfs_params_init(&p);
        dbfs_param_bytes(&p, name, strlen(name));
        rc = dbfs_exec(a->c, DBFS_ST_SNAP_DELETE, &p, &r);
    }
    PQclear(r);
    dbfs_admin_close(a);
    return rc;
}

/* One step of the reclaim on session c: *p updated. Returns 0 or an errno. */
static int dbfs_snap_step(dbfs_conn *c, dbfs_snap_progress *p)
{
    dbfs_params q;
    PGresult *r = NULL;
    int rc;

    dbfs_params_init(&q);
    dbfs_param_i8(&q, DBFS_SNAP_RECLAIM_STEP);
    rc = dbfs_exec(c, DBFS_ST_SNAP_RECLAIM, &q, &r);
    if (rc == 0 && PQntuples(r) != 1)
        rc = -EIO;
    if (rc == 0) {
        p->done = dbfs_get_null(r, 0, 0);
        p->upto = (uint64_t)dbfs_get_i8(r, 0, 1);
        p->pos = p->done ? p->upto : (uint64_t)dbfs_get_i8(r, 0, 0);
        p->removed += (uint64_t)dbfs_get_i8(r, 0, 2);
    }
    PQclear(r);
    return rc;
}

/* dbfs_snap_reclaim -- see dbfs_snap.h. */
int dbfs_snap_reclaim(dbfs *fs, unsigned max_steps,
                      void (*progress)(const dbfs_snap_progress *p, void *arg), void *arg,
                      dbfs_snap_progress *out)
{
    dbfs_snap_progress p = {0};
    dbfs_admin *a = NULL;
    int rc = dbfs_admin_open(fs->conninfo, &a);

    for (unsigned step = 0; rc == 0 && (max_steps == 0 || step < max_steps); step++) {
        rc = dbfs_snap_step(a->c, &p);
        if (rc == 0 && progress)
            progress(&p, arg);
        if (rc == 0 && p.done)
            break;
    }
    if (out)
        *out = p;
    dbfs_admin_close(a);
    return rc;
}

/* The rows of a comparison, to the caller's callback. */
typedef struct {
    int (*cb)(const dbfs_snap_diff_row *r, void *arg);
    void *arg;
} dbfs_snap_diff_op;

static int dbfs_snap_diff_row_cb(const PGresult *r, int row, void *arg)
{
    dbfs_snap_diff_op *op = arg;
    const char *what = PQgetvalue(r, row, 0);
    char *path = g_strndup(PQgetvalue(r, row, 1), (gsize)PQgetlength(r, row, 1));
    char *type = g_strndup(PQgetvalue(r, row, 2), (gsize)PQgetlength(r, row, 2));
    dbfs_snap_diff_row d = {
        .change = what[0] == 'a'   ? '+'
                  : what[0] == 'r' ? '-'
                                   : 'M',
        .path = path,
        .type = type,
    };
    int rc = op->cb(&d, op->arg);

    g_free(path);
    g_free(type);
    return rc;
}

/* Is there a snapshot `name`? 0, -ENOENT or an errno. */
static int dbfs_snap_exists(dbfs_conn *c, const char *name)
{
    uint32_t id;

    return dbfs_snap_find(c, name, &id);
}

/* dbfs_snap_diff -- see dbfs_snap.h. One statement, streamed. */
int dbfs_snap_diff(dbfs *fs, const char *from, const char *to,
                   int (*cb)(const dbfs_snap_diff_row *r, void *arg), void *arg)
{
    dbfs_snap_diff_op op = {cb, arg};
    dbfs_admin *a = NULL;
    dbfs_params p;
    int rc = dbfs_admin_open(fs->conninfo, &a);

    if (rc == 0)
        rc = dbfs_snap_exists(a->c, from);
    if (rc == 0 && to)
        rc = dbfs_snap_exists(a->c, to);
    if (rc == 0) {
        dbfs_params_init(&p);
        dbfs_param_bytes(&p, from, strlen(from));
        if (to)
            dbfs_param_bytes(&p, to, strlen(to));
        else
            dbfs_param_null(&p);
        rc = dbfs_stream(a->c, DBFS_ST_SNAP_DIFF, &p, dbfs_snap_diff_row_cb, &op);
    }
    dbfs_admin_close(a);
    return rc;
}

/* dbfs_snap_tick -- see dbfs_snap.h: the schedule's statement, then (when
 * a reclaim is pending) a few reclaim steps. */
int dbfs_snap_tick(dbfs *fs, dbfs_conn **session, uint64_t every_s, unsigned keep,
                   const char *prefix)
{
    dbfs_snap_progress prog = {0};
    dbfs_params p;
    PGresult *r = NULL;
    dbfs_conn *c;
    int rc, n = 0;

    rc = *session ? 0 : dbfs_session_open(fs->conninfo, "pgnfs-snapshot", session);
    if (rc != 0)
        return rc;
    c = *session;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)every_s);
    dbfs_param_i4(&p, (int32_t)keep);
    dbfs_param_bytes(&p, prefix, strlen(prefix));
    rc = dbfs_exec(c, DBFS_ST_SNAP_TICK, &p, &r);
    if (rc == 0) {
        n = PQntuples(r);
        for (int i = 0; i < n; i++)
            g_info("snapshot %.*s %s by the schedule", PQgetlength(r, i, 0), PQgetvalue(r, i, 0),
                   PQgetvalue(r, i, 1)[0] ? "taken" : "deleted");
    }
    PQclear(r);
    r = NULL;
    if (rc == 0)
        rc = dbfs_exec(c, DBFS_ST_SNAP_PENDING, NULL, &r);
    if (rc == 0 && PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] != 0) {
        for (int step = 0; rc == 0 && step < 8 && !prog.done; step++)
            rc = dbfs_snap_step(c, &prog);
    }
    PQclear(r);
    return rc == 0 ? n : rc;
}

/* dbfs_snap_notify -- see dbfs_snap.h. A shared server alone on the file
 * system (solo, dbfs_coh.c) answers from its caches without reading the
 * invalidation log: it is woken as a joining server wakes it, and waited
 * for until it reads the log (its row's solo flag clears) or its heartbeat
 * is stale (it has stopped answering from its caches), as a joining server
 * waits (dbfs_coh_wait_solos, bounded); then the row "everything" goes to
 * the log, for every server that reads it. */
int dbfs_snap_notify(dbfs_admin *a)
{
    dbfs_conn *c = a->c;
    static const char who[] = "admin";
    char *why = NULL;
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_bytes(&p, who, sizeof who - 1);
    rc = dbfs_exec(c, DBFS_ST_COH_JOIN, &p, &r);
    PQclear(r);
    if (rc == 0)
        rc = dbfs_coh_wait_solos(c, 0, &why);
    if (rc == -EBUSY) {
        g_warning("snapshot restore: %s", why);
        g_free(why);
    }
    r = NULL;
    if (rc == 0)
        rc = dbfs_exec(c, DBFS_ST_COH_EVERYTHING, NULL, &r);
    PQclear(r);
    return rc;
}
