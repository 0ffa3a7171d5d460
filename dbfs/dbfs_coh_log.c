/*
 * dbfs_coh_log.c -- reading the invalidation log (schema/010_inval_log.sql)
 * on a frontend's reading session, and applying what it says to the
 * caches (dbfs_coh.h).
 *
 * Why by snapshot and not by a counter. Rows carry the id of the
 * transaction that wrote them, and a transaction's rows become visible
 * all at once when it commits. Transactions commit in an order that has
 * nothing to do with when they took a sequence number or an id, so "every
 * row above the highest number I have read" would miss the rows of a
 * transaction that took a lower number and committed later. A snapshot
 * says exactly what it could not see: every transaction with an id at or
 * above its xmax, and those in its in-progress list (xip); everything
 * else that committed is visible to it. So a read under snapshot S_n that
 * selects `xid >= S_{n-1}.xmax OR xid = ANY(S_{n-1}.xip)` returns every
 * row visible to S_n and not to S_{n-1}: each committed row exactly once,
 * in the first read whose snapshot sees it. The xids are the top-level
 * transaction's (pg_current_xact_id(), also inside a subtransaction), as
 * in a snapshot's xip; xid8 does not wrap. The rows and the snapshot's
 * figures come from one statement, hence one snapshot
 * (pg_current_snapshot() is the statement's active snapshot).
 *
 * Trimming (dbfs_coh.c, at heartbeats) deletes rows below the oldest
 * horizon (snapshot xmin) that the live readers reported, and raises
 * pgnfs_inval_trim.below in the same transaction. A reader whose horizon
 * that passes (taken for dead: no heartbeat for a minute) finds below
 * above its own horizon in the same snapshot, and resets its caches
 * rather than answer from entries whose invalidation may be gone.
 *
 * NOTES
 *   Called on the frontend's thread only; the session's results are read
 *   by dbfs_coh.c and lent here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbfs_cache.h"
#include "dbfs_coh.h"

/* Columns of DBFS_ST_COH_READ. */
enum {
    DBFS_CR_ROW, /* 1: a log row, 0: the snapshot's figures */
    DBFS_CR_XID, /* the row's xid; the snapshot's xmax */
    DBFS_CR_KIND,
    DBFS_CR_INO,
    DBFS_CR_NAME,
    DBFS_CR_XIP,   /* the snapshot's in-progress xids, "a,b,c" */
    DBFS_CR_BELOW, /* pgnfs_inval_trim.below, NULL: never trimmed */
    DBFS_CR_NCOLS
};

/* dbfs_coh_log_prepare -- see dbfs_coh.h. */
int dbfs_coh_log_prepare(dbfs_coh *h)
{
    PGresult *r =
        PQprepare(h->c->pg, DBFS_COH_READ_STMT, dbfs_stmts[DBFS_ST_COH_READ].sql, 0, NULL);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : -EAGAIN;

    if (rc != 0)
        g_warning("frontend: cannot prepare the invalidation log's read: %s",
                  PQresultErrorMessage(r));
    PQclear(r);
    return rc;
}

/* dbfs_coh_log_send -- see dbfs_coh.h. Text parameters: xmax, xip as an
 * array literal, our id. */
int dbfs_coh_log_send(dbfs_coh *h)
{
    const dbfs_coh_snap *s = &h->snap;
    char xmax[24];
    GString *xip = g_string_new("{");
    const char *vals[3];
    int ok;

    for (guint i = 0; s->valid && i < s->xip->len; i++)
        g_string_append_printf(xip, "%s%" PRIu64, i ? "," : "", g_array_index(s->xip, uint64_t, i));
    g_string_append_c(xip, '}');
    g_snprintf(xmax, sizeof xmax, "%" PRIu64, s->xmax);
    vals[0] = s->valid ? xmax : NULL;
    vals[1] = xip->str;
    vals[2] = h->id_text;
    ok = PQsendQueryPrepared(h->c->pg, DBFS_COH_READ_STMT, 3, vals, NULL, NULL, 0);
    g_string_free(xip, TRUE);
    return ok ? 0 : -EAGAIN;
}

/* dbfs_coh_log_forget -- see dbfs_coh.h. */
void dbfs_coh_log_forget(dbfs_coh *h)
{
    h->snap.valid = false;
}

/* dbfs_coh_log_horizon -- see dbfs_coh.h. */
const char *dbfs_coh_log_horizon(const dbfs_coh *h, char *buf, size_t len)
{
    if (!h->snap.valid)
        return NULL;
    g_snprintf(buf, len, "%" PRIu64, h->snap.horizon);
    return buf;
}

/* A bytea in text output ("\x" and hex digits) into name; its length, or
 * -1 when it is not one or too long. */
static int dbfs_coh_hexname(const char *v, char *name)
{
    size_t hex = strlen(v) >= 2 ? strlen(v) - 2 : 0, len = hex / 2;

    if (v[0] != '\\' || v[1] != 'x' || hex % 2 != 0 || len == 0 || len > DBFS_NAME_MAX)
        return -1;
    for (size_t i = 0; i < len; i++) {
        unsigned b;
        if (sscanf(v + 2 + 2 * i, "%2x", &b) != 1)
            return -1;
        name[i] = (char)b;
    }
    return (int)len;
}

/* One log row to the caches. */
static void dbfs_coh_log_row(dbfs_coh *h, const PGresult *r, int i)
{
    const char *kind = PQgetvalue(r, i, DBFS_CR_KIND);
    uint64_t ino = g_ascii_strtoull(PQgetvalue(r, i, DBFS_CR_INO), NULL, 10);
    char name[DBFS_NAME_MAX + 1];
    int len;

    atomic_fetch_add(&h->invalidations, 1);
    if (kind[0] == 'i' && !PQgetisnull(r, i, DBFS_CR_INO)) {
        dbfs_cache_inval_ino(h->fs, ino);
        return;
    }
    if (kind[0] == 'n' && !PQgetisnull(r, i, DBFS_CR_INO) &&
        (len = dbfs_coh_hexname(PQgetvalue(r, i, DBFS_CR_NAME), name)) > 0) {
        dbfs_cache_inval_name(h->fs, ino, name, (size_t)len);
        return;
    }
    /* '*', or anything not understood: everything. */
    dbfs_cache_inval_all(h->fs);
}

/* Parse "a,b,c" into xip and set the horizon. Returns false if malformed. */
static bool dbfs_coh_parse_snap(dbfs_coh_snap *s, const char *xmax, const char *list)
{
    char *end;

    s->xmax = g_ascii_strtoull(xmax, &end, 10);
    if (end == xmax || *end)
        return false;
    g_array_set_size(s->xip, 0);
    s->horizon = s->xmax;
    while (*list) {
        uint64_t x = g_ascii_strtoull(list, &end, 10);
        if (end == list || (*end && *end != ','))
            return false;
        g_array_append_val(s->xip, x);
        if (x < s->horizon)
            s->horizon = x;
        list = *end ? end + 1 : end;
    }
    return true;
}

/* dbfs_coh_log_apply -- see dbfs_coh.h. */
int dbfs_coh_log_apply(dbfs_coh *h, const PGresult *r)
{
    dbfs_coh_snap *s = &h->snap;
    int snaprow = -1;
    bool was_valid = s->valid, reset;
    uint64_t old_horizon = s->horizon, below = 0;

    if (PQnfields(r) != DBFS_CR_NCOLS)
        goto bad;
    for (int i = 0; i < PQntuples(r) && snaprow < 0; i++)
        if (strcmp(PQgetvalue(r, i, DBFS_CR_ROW), "0") == 0)
            snaprow = i;
    if (snaprow < 0)
        goto bad;
    if (!PQgetisnull(r, snaprow, DBFS_CR_BELOW))
        below = g_ascii_strtoull(PQgetvalue(r, snaprow, DBFS_CR_BELOW), NULL, 10);
    /* Trimmed past us: rows we still needed may be gone. */
    reset = !was_valid || below > old_horizon;
    if (was_valid && reset)
        g_warning("frontend: the invalidation log was trimmed past this server's place in it "
                  "(taken for a dead server?): emptying the caches");
    if (!dbfs_coh_parse_snap(s, PQgetvalue(r, snaprow, DBFS_CR_XID),
                             PQgetvalue(r, snaprow, DBFS_CR_XIP)))
        goto bad;
    s->valid = true;
    if (reset) {
        /* Everything read before this snapshot goes (fills that began
         * before the reset are refused by the caches). */
        atomic_fetch_add(&h->resets, 1);
        dbfs_cache_inval_all(h->fs);
        return 0;
    }
    for (int i = 0; i < PQntuples(r); i++)
        if (i != snaprow)
            dbfs_coh_log_row(h, r, i);
    return 0;
bad:
    g_warning("frontend: an invalidation log read returned what this server cannot read");
    s->valid = false;
    return -EIO;
}
