/*
 * dbfs_lock.c -- file locks (see "file locks" in dbfs.h): each call is one
 * of the SQL functions of schema/functions/85_lock.sql, one statement,
 * one round trip, one transaction, on whatever connection the caller
 * gives (a worker's, or the lock watch's session).
 *
 * NOTES
 *   The functions return pgnfs_nlm_res rows (003_locks.sql), read here by
 *   kind: 0 the outcome (status, outcome, grace), 1 the lock in the way,
 *   2 a blocked request granted for the calling server. Ranges travel as
 *   lo int8 and hi int8 (NULL: to the end of the file).
 *
 *   Memory: a dbfs_lock_result's grants (and their notify bytes) are
 *   malloc'd here and freed by dbfs_lock_result_free(); the inputs are the
 *   caller's and only read during the call. The PGresult is cleared on
 *   every path before returning.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_locks.h"
#include "dbfs_conn.h"

/* Columns of pgnfs_nlm_res. */
enum {
    DBFS_LK_KIND,
    DBFS_LK_STATUS,
    DBFS_LK_OUTCOME,
    DBFS_LK_GRACE,
    DBFS_LK_EXCL,
    DBFS_LK_SVID,
    DBFS_LK_OH,
    DBFS_LK_LO,
    DBFS_LK_HI,
    DBFS_LK_NOTIFY,
    DBFS_LK_NCOLS
};

/* Row kinds. */
enum { DBFS_LK_ROW_STATUS = 0, DBFS_LK_ROW_HOLDER = 1, DBFS_LK_ROW_GRANT = 2 };

static bool dbfs_lk_bool(const PGresult *r, int row, int col)
{
    return !PQgetisnull(r, row, col) && PQgetlength(r, row, col) == 1 &&
           PQgetvalue(r, row, col)[0] != 0;
}

/* The end of a range as stored: NULL is to the end of the file. */
static uint64_t dbfs_lk_end(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? DBFS_LOCK_EOF : (uint64_t)dbfs_get_i8(r, row, col);
}

/* dbfs_lock_result_free -- see dbfs.h. */
void dbfs_lock_result_free(dbfs_lock_result *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->ngrants; i++)
        free(res->grants[i].notify);
    free(res->grants);
    res->grants = NULL;
    res->ngrants = 0;
}

/* One kind 2 row into res->grants. 0 or -ENOMEM. */
static int dbfs_lk_grant(const PGresult *r, int row, dbfs_lock_result *res)
{
    size_t len = (size_t)PQgetlength(r, row, DBFS_LK_NOTIFY);
    dbfs_lock_grant *g;
    void *n = malloc(len ? len : 1);

    if (!n)
        return -ENOMEM;
    g = realloc(res->grants, (res->ngrants + 1) * sizeof *g);
    if (!g) {
        free(n);
        return -ENOMEM;
    }
    res->grants = g;
    g = &res->grants[res->ngrants++];
    memcpy(n, PQgetvalue(r, row, DBFS_LK_NOTIFY), len);
    g->notify = n;
    g->notify_len = len;
    g->range.start = (uint64_t)dbfs_get_i8(r, row, DBFS_LK_LO);
    g->range.end = dbfs_lk_end(r, row, DBFS_LK_HI);
    g->range.excl = dbfs_lk_bool(r, row, DBFS_LK_EXCL);
    return 0;
}

/* One kind 1 row into res->holder. */
static void dbfs_lk_holder(const PGresult *r, int row, dbfs_lock_result *res)
{
    dbfs_lock_holder *h = &res->holder;
    size_t len = (size_t)PQgetlength(r, row, DBFS_LK_OH);

    res->have_holder = true;
    h->excl = dbfs_lk_bool(r, row, DBFS_LK_EXCL);
    h->svid = dbfs_get_i8(r, row, DBFS_LK_SVID);
    h->oh_len = len < sizeof h->oh ? len : sizeof h->oh;
    memcpy(h->oh, PQgetvalue(r, row, DBFS_LK_OH), h->oh_len);
    h->start = (uint64_t)dbfs_get_i8(r, row, DBFS_LK_LO);
    h->end = dbfs_lk_end(r, row, DBFS_LK_HI);
}

/* Read a function's rows into res. Returns 0 (res filled), the call's
 * status (-ESTALE, -EACCES, ...), -ENOMEM, or -EIO for rows that make no
 * sense (logged). */
static int dbfs_lk_parse(const PGresult *r, const char *what, dbfs_lock_result *res)
{
    int status = 1; /* no status row yet */

    if (PQnfields(r) != DBFS_LK_NCOLS)
        goto bad;
    for (int i = 0; i < PQntuples(r); i++) {
        int rc = 0;

        switch (dbfs_get_i2(r, i, DBFS_LK_KIND)) {
        case DBFS_LK_ROW_STATUS:
            status = dbfs_get_i4(r, i, DBFS_LK_STATUS);
            res->outcome = (dbfs_lock_outcome)dbfs_get_i2(r, i, DBFS_LK_OUTCOME);
            res->grace = dbfs_lk_bool(r, i, DBFS_LK_GRACE);
            break;
        case DBFS_LK_ROW_HOLDER:
            dbfs_lk_holder(r, i, res);
            break;
        case DBFS_LK_ROW_GRANT:
            rc = dbfs_lk_grant(r, i, res);
            break;
        default:
            goto bad;
        }
        if (rc != 0)
            return rc;
    }
    if (status == 1 || (unsigned)res->outcome > DBFS_LOCK_DEADLOCK)
        goto bad;
    return status == 0 ? 0 : dbfs_errno_from_linux(status);
bad:
    g_warning("%s: the database answered rows this build does not understand (is the schema "
              "current?)",
              what);
    return -EIO;
}

/* Run statement id with p and read its rows into res (cleared first). */
static int dbfs_lk_run(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p, dbfs_lock_result *res)
{
    PGresult *r = NULL;
    int rc;

    memset(res, 0, sizeof *res);
    rc = dbfs_exec(c, id, p, &r);
    if (rc == 0)
        rc = dbfs_lk_parse(r, dbfs_stmts[id].name, res);
    PQclear(r);
    if (rc != 0)
        dbfs_lock_result_free(res);
    return rc;
}

/* Are the owner's sizes and the range within what a call may name? */
static bool dbfs_lk_args_ok(const dbfs_lock_owner *o, const dbfs_lock_range *r)
{
    if (o->host_len > DBFS_LOCK_NAME_MAX || o->oh_len > DBFS_LOCK_OH_MAX ||
        o->svid < DBFS_LOCK_NO_SVID || o->svid > (int64_t)UINT32_MAX)
        return false;
    if (!r)
        return true;
    if (r->start > DBFS_LOCK_OFFSET_MAX)
        return false;
    return r->end == DBFS_LOCK_EOF || (r->end > r->start && r->end <= DBFS_LOCK_OFFSET_MAX);
}

static void dbfs_lk_param_range(dbfs_params *p, const dbfs_lock_range *r)
{
    dbfs_param_i8(p, (int64_t)r->start);
    if (r->end == DBFS_LOCK_EOF)
        dbfs_param_null(p);
    else
        dbfs_param_i8(p, (int64_t)r->end);
}

static void dbfs_lk_param_text(dbfs_params *p, const char *s)
{
    if (s && *s)
        dbfs_param_bytes(p, s, strlen(s));
    else
        dbfs_param_null(p);
}

/* The parameters every per-file call starts with: server, inode, generation. */
static void dbfs_lk_param_file(dbfs_params *p, const dbfs_lock_server *s, dbfs_fh fh)
{
    dbfs_params_init(p);
    dbfs_param_i4(p, s->srv);
    dbfs_param_i8(p, (int64_t)fh.ino);
    dbfs_param_i4(p, (int32_t)fh.gen);
}

/*
 * dbfs_lock -- see dbfs.h: pgnfs_nlm_lock, one round trip. -EINVAL before
 * any round trip for names or handles over their bounds and ranges that
 * name bytes past DBFS_LOCK_OFFSET_MAX or none.
 */
int dbfs_lock(dbfs_conn *c, const dbfs_lock_server *s, const dbfs_cred *cred, dbfs_fh fh,
              const dbfs_lock_owner *o, const dbfs_lock_range *r, const dbfs_lock_how *how,
              dbfs_lock_result *res)
{
    dbfs_params p;

    memset(res, 0, sizeof *res);
    if (!dbfs_lk_args_ok(o, r) || o->svid < 0 || how->notify_len > DBFS_LOCK_NOTIFY_MAX)
        return -EINVAL;
    dbfs_lk_param_file(&p, s, fh);
    dbfs_param_cred(&p, cred);
    dbfs_param_bytes(&p, o->host, o->host_len);
    dbfs_lk_param_text(&p, how->addr);
    dbfs_lk_param_text(&p, how->local);
    dbfs_param_i8(&p, o->svid);
    dbfs_param_bytes(&p, o->oh, o->oh_len);
    dbfs_lk_param_range(&p, r);
    dbfs_param_bool(&p, r->excl);
    dbfs_param_bool(&p, how->block);
    dbfs_param_bool(&p, how->reclaim);
    dbfs_param_bool(&p, how->monitor);
    dbfs_param_i4(&p, how->cstate);
    dbfs_param_bytes(&p, how->notify, how->notify_len);
    dbfs_param_i4(&p, (int32_t)MIN(s->max_waiters_host, (uint32_t)INT32_MAX));
    dbfs_param_i4(&p, (int32_t)MIN(s->max_waiters, (uint32_t)INT32_MAX));
    return dbfs_lk_run(c, DBFS_ST_NLM_LOCK, &p, res);
}

/* dbfs_lock_test -- see dbfs.h: pgnfs_nlm_test, one round trip, reads only. */
int dbfs_lock_test(dbfs_conn *c, const dbfs_lock_server *s, const dbfs_cred *cred, dbfs_fh fh,
                   const dbfs_lock_owner *o, const dbfs_lock_range *r, dbfs_lock_result *res)
{
    dbfs_params p;

    memset(res, 0, sizeof *res);
    if (!dbfs_lk_args_ok(o, r))
        return -EINVAL;
    dbfs_lk_param_file(&p, s, fh);
    dbfs_param_cred(&p, cred);
    dbfs_param_bytes(&p, o->host, o->host_len);
    dbfs_param_i8(&p, o->svid);
    dbfs_param_bytes(&p, o->oh, o->oh_len);
    dbfs_lk_param_range(&p, r);
    dbfs_param_bool(&p, r->excl);
    return dbfs_lk_run(c, DBFS_ST_NLM_TEST, &p, res);
}

/* UNLOCK and CANCEL: the same parameters, CANCEL with the type too. */
static int dbfs_lk_release(dbfs_conn *c, dbfs_stmt id, const dbfs_lock_server *s, dbfs_fh fh,
                           const dbfs_lock_owner *o, const dbfs_lock_range *r,
                           dbfs_lock_result *res)
{
    dbfs_params p;

    memset(res, 0, sizeof *res);
    if (!dbfs_lk_args_ok(o, r))
        return -EINVAL;
    dbfs_lk_param_file(&p, s, fh);
    dbfs_param_bytes(&p, o->host, o->host_len);
    dbfs_param_i8(&p, o->svid);
    dbfs_param_bytes(&p, o->oh, o->oh_len);
    dbfs_lk_param_range(&p, r);
    if (id == DBFS_ST_NLM_CANCEL)
        dbfs_param_bool(&p, r->excl);
    return dbfs_lk_run(c, id, &p, res);
}

/* dbfs_unlock -- see dbfs.h: pgnfs_nlm_unlock, one round trip. */
int dbfs_unlock(dbfs_conn *c, const dbfs_lock_server *s, dbfs_fh fh, const dbfs_lock_owner *o,
                const dbfs_lock_range *r, dbfs_lock_result *res)
{
    return dbfs_lk_release(c, DBFS_ST_NLM_UNLOCK, s, fh, o, r, res);
}

/* dbfs_lock_cancel -- see dbfs.h: pgnfs_nlm_cancel, one round trip. */
int dbfs_lock_cancel(dbfs_conn *c, const dbfs_lock_server *s, dbfs_fh fh, const dbfs_lock_owner *o,
                     const dbfs_lock_range *r, dbfs_lock_result *res)
{
    return dbfs_lk_release(c, DBFS_ST_NLM_CANCEL, s, fh, o, r, res);
}

/* dbfs_share -- see dbfs.h: pgnfs_nlm_share, one round trip. */
int dbfs_share(dbfs_conn *c, const dbfs_lock_server *s, const dbfs_cred *cred, dbfs_fh fh,
               const dbfs_lock_owner *o, unsigned access, unsigned deny, const dbfs_lock_how *how,
               dbfs_lock_result *res)
{
    const unsigned all = DBFS_SHARE_READ | DBFS_SHARE_WRITE;
    dbfs_params p;

    memset(res, 0, sizeof *res);
    if (!dbfs_lk_args_ok(o, NULL) || (access & ~all) || (deny & ~all))
        return -EINVAL;
    dbfs_lk_param_file(&p, s, fh);
    dbfs_param_cred(&p, cred);
    dbfs_param_bytes(&p, o->host, o->host_len);
    dbfs_lk_param_text(&p, how->addr);
    dbfs_lk_param_text(&p, how->local);
    dbfs_param_bytes(&p, o->oh, o->oh_len);
    dbfs_param_i4(&p, (int32_t)access);
    dbfs_param_i4(&p, (int32_t)deny);
    dbfs_param_bool(&p, how->reclaim);
    return dbfs_lk_run(c, DBFS_ST_NLM_SHARE, &p, res);
}

/* dbfs_unshare -- see dbfs.h: pgnfs_nlm_unshare, one round trip. */
int dbfs_unshare(dbfs_conn *c, const dbfs_lock_server *s, dbfs_fh fh, const dbfs_lock_owner *o,
                 dbfs_lock_result *res)
{
    dbfs_params p;

    memset(res, 0, sizeof *res);
    if (!dbfs_lk_args_ok(o, NULL))
        return -EINVAL;
    dbfs_lk_param_file(&p, s, fh);
    dbfs_param_bytes(&p, o->host, o->host_len);
    dbfs_param_bytes(&p, o->oh, o->oh_len);
    return dbfs_lk_run(c, DBFS_ST_NLM_UNSHARE, &p, res);
}

/* dbfs_lock_free_host -- see dbfs.h: pgnfs_nlm_free_host, one round trip. */
int dbfs_lock_free_host(dbfs_conn *c, const dbfs_lock_server *s, const void *name, size_t len,
                        bool all, int32_t state, dbfs_lock_result *res)
{
    dbfs_params p;

    memset(res, 0, sizeof *res);
    if (len > DBFS_LOCK_NAME_MAX)
        return -EINVAL;
    dbfs_params_init(&p);
    dbfs_param_i4(&p, s->srv);
    dbfs_param_bytes(&p, name, len);
    if (all)
        dbfs_param_null(&p);
    else
        dbfs_param_i4(&p, state);
    return dbfs_lk_run(c, DBFS_ST_NLM_FREE_HOST, &p, res);
}

/* dbfs_lock_grace_end -- see dbfs.h: pgnfs_nlm_grace_end, one round trip. */
int dbfs_lock_grace_end(dbfs_conn *c, const dbfs_lock_server *s, dbfs_lock_result *res)
{
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i4(&p, s->srv);
    return dbfs_lk_run(c, DBFS_ST_NLM_GRACE_END, &p, res);
}

/* dbfs_lock_take -- see dbfs.h: pgnfs_nlm_take, one round trip. Its rows
 * carry no status row: the outcome is "granted". */
int dbfs_lock_take(dbfs_conn *c, const dbfs_lock_server *s, dbfs_lock_result *res)
{
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    memset(res, 0, sizeof *res);
    dbfs_params_init(&p);
    dbfs_param_i4(&p, s->srv);
    rc = dbfs_exec(c, DBFS_ST_NLM_TAKE, &p, &r);
    for (int i = 0; rc == 0 && i < PQntuples(r); i++)
        rc = dbfs_lk_grant(r, i, res);
    PQclear(r);
    if (rc != 0)
        dbfs_lock_result_free(res);
    return rc;
}

/* dbfs_lock_gc -- see dbfs.h: pgnfs_nlm_gc, one round trip. */
int dbfs_lock_gc(dbfs_conn *c)
{
    PGresult *r = NULL;
    int rc = dbfs_exec(c, DBFS_ST_NLM_GC, NULL, &r);

    if (rc == 0)
        rc = PQntuples(r) == 1 ? dbfs_get_i4(r, 0, 0) : 0;
    PQclear(r);
    return rc;
}

/* dbfs_lock_count -- see dbfs.h: pgnfs_nlm_counts, one round trip. */
int dbfs_lock_count(dbfs_conn *c, int32_t srv, dbfs_lock_counts *out)
{
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    dbfs_params_init(&p);
    dbfs_param_i4(&p, srv);
    rc = dbfs_exec(c, DBFS_ST_NLM_COUNT, &p, &r);
    if (rc == 0 && PQntuples(r) == 1 && PQnfields(r) == 4) {
        out->held = (uint64_t)dbfs_get_i8(r, 0, 0);
        out->waiting = (uint64_t)dbfs_get_i8(r, 0, 1);
        out->grace_ms = (uint64_t)dbfs_get_i8(r, 0, 2);
        out->state = dbfs_get_i4(r, 0, 3);
    } else if (rc == 0) {
        rc = -EIO;
    }
    PQclear(r);
    return rc;
}

/* Copy the text column col of row into out (size bytes, NUL-terminated). */
static void dbfs_lk_text(const PGresult *r, int row, int col, char *out, size_t size)
{
    size_t len = PQgetisnull(r, row, col) ? 0 : (size_t)PQgetlength(r, row, col);

    if (len >= size)
        len = 0; /* not an address */
    memcpy(out, PQgetvalue(r, row, col), len);
    out[len] = 0;
}

/* The hosts rows of pgnfs_nlm_start (host not NULL) into out->hosts. */
static int dbfs_lk_start_hosts(const PGresult *r, dbfs_lock_start_res *out)
{
    int n = PQntuples(r);

    out->hosts = calloc((size_t)n, sizeof *out->hosts);
    if (n && !out->hosts)
        return -ENOMEM;
    for (int i = 0; i < n; i++) {
        dbfs_lock_host *h = &out->hosts[out->nhosts];
        size_t len = (size_t)PQgetlength(r, i, 3);

        if (PQgetisnull(r, i, 3))
            continue;
        h->name = malloc(len ? len : 1);
        if (!h->name)
            return -ENOMEM;
        memcpy(h->name, PQgetvalue(r, i, 3), len);
        h->name_len = len;
        dbfs_lk_text(r, i, 4, h->addr, sizeof h->addr);
        dbfs_lk_text(r, i, 5, h->local, sizeof h->local);
        out->nhosts++;
    }
    return 0;
}

/* dbfs_lock_start_free -- see dbfs.h. */
void dbfs_lock_start_free(dbfs_lock_start_res *out)
{
    if (!out)
        return;
    for (size_t i = 0; i < out->nhosts; i++)
        free(out->hosts[i].name);
    free(out->hosts);
    out->hosts = NULL;
    out->nhosts = 0;
}

/* dbfs_lock_server_start -- see dbfs.h: pgnfs_nlm_start, one round trip. */
int dbfs_lock_server_start(dbfs_conn *c, const char *name, unsigned grace_s,
                           dbfs_lock_start_res *out)
{
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    dbfs_params_init(&p);
    dbfs_param_bytes(&p, name, strlen(name));
    dbfs_param_i4(&p, (int32_t)MIN(grace_s, (unsigned)INT32_MAX));
    rc = dbfs_exec(c, DBFS_ST_NLM_START, &p, &r);
    if (rc == 0 && (PQntuples(r) < 1 || PQnfields(r) != 6)) {
        g_warning("nlm_start: the database answered rows this build does not understand");
        rc = -EIO;
    }
    if (rc == 0) {
        out->srv = dbfs_get_i4(r, 0, 0);
        out->state = dbfs_get_i4(r, 0, 1);
        for (int i = 0; i < PQntuples(r); i++)
            out->grace_ms = MAX(out->grace_ms, (uint64_t)MAX(dbfs_get_i8(r, i, 2), 0));
        rc = dbfs_lk_start_hosts(r, out);
    }
    PQclear(r);
    if (rc != 0)
        dbfs_lock_start_free(out);
    return rc;
}
