/*
 * dbfs_link.c -- making a database connection (dbfs_conn.h): connecting
 * with the session settings every pgnfs session needs (its search_path,
 * notices to the debug log), setting a worker connection up (pipeline
 * mode, every worker statement prepared, the session settings, all in one
 * round trip), and connecting an existing one again (PQreset).
 *
 * NOTES
 *   Below dbfs_conn.c, which decides when to connect again and what a
 *   lost connection means (the caches); here only how. Every result read
 *   here is cleared here.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "dbfs_conn.h"
#include "dbfs_int.h"

/* Server notices (none are expected) go to the debug log. */
static void dbfs_link_notice(void *arg, const char *msg)
{
    (void)arg;
    g_debug("database notice: %.*s", (int)strcspn(msg, "\n"), msg);
}

/* dbfs_log_conn_error -- see dbfs_conn.h. */
void dbfs_log_conn_error(const char *what, PGconn *pg)
{
    const char *msg = pg ? PQerrorMessage(pg) : "out of memory";
    size_t len = strcspn(msg, "\n");

    g_warning("%s: %.*s", what, (int)len, msg);
}

/*
 * Keep the file system's objects out of the schema "pgnfs" (the SQL views,
 * schema/functions/95_views.sql): the default search_path starts with
 * "$user", so for a role named pgnfs that schema would become the current
 * one once it exists, and the tables and functions that the schema files
 * and the per-file tables create without a schema name would land there.
 * Drops it from this session's search_path when it is the current schema.
 * Returns false when the statement failed (logged).
 */
static bool dbfs_link_pin_path(PGconn *pg)
{
    PGresult *r = PQexec(pg, "SELECT set_config('search_path',"
                             " string_agg(quote_ident(s), ', ' ORDER BY o), false)"
                             " FROM unnest(current_schemas(false)) WITH ORDINALITY AS u(s, o)"
                             " WHERE s <> 'pgnfs' HAVING current_schema() = 'pgnfs'"
                             " AND count(*) > 0");
    bool ok = PQresultStatus(r) == PGRES_TUPLES_OK;

    if (!ok)
        dbfs_log_conn_error("cannot set the session's search_path", pg);
    PQclear(r);
    return ok;
}

/* dbfs_connect -- see dbfs_conn.h. */
PGconn *dbfs_connect(const char *conninfo, const char *app)
{
    const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *const vals[] = {"10", app, conninfo, NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);

    if (!pg || PQstatus(pg) != CONNECTION_OK) {
        dbfs_log_conn_error("cannot connect to the database", pg);
        PQfinish(pg);
        return NULL;
    }
    PQsetNoticeProcessor(pg, dbfs_link_notice, NULL);
    if (!dbfs_link_pin_path(pg)) {
        PQfinish(pg);
        return NULL;
    }
    return pg;
}

/* Read the results of the preparing of every worker statement (one per
 * statement, each ended by a NULL). Returns 0, -EAGAIN (the connection
 * went) or -EIO (a statement did not prepare: the schema is not this
 * build's; logged). */
static int dbfs_link_prepared(dbfs_conn *c)
{
    int rc = 0;

    for (int i = 0; i < DBFS_ST_NWORKER; i++) {
        PGresult *res = PQgetResult(c->pg);

        if (!res)
            return -EAGAIN;
        if (PQresultStatus(res) != PGRES_COMMAND_OK && rc == 0) {
            const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
            const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

            g_warning("cannot prepare statement %s: SQLSTATE %s: %s (is the schema current?)",
                      dbfs_stmts[i].name, state ? state : "none", msg ? msg : "no message");
            rc = -EIO;
        }
        PQclear(res);
        PQclear(PQgetResult(c->pg)); /* the NULL that ends each statement */
    }
    return rc;
}

/* Read the session settings' results and the Sync's (none on a broken
 * connection). Returns rc, or -EIO when the settings failed (logged). */
static int dbfs_link_rest(dbfs_conn *c, int rc)
{
    PGresult *res;

    while ((res = PQgetResult(c->pg)) != NULL) {
        if (PQresultStatus(res) != PGRES_TUPLES_OK && rc == 0) {
            const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

            g_warning("cannot set the session up: %s", msg ? msg : "no message");
            rc = -EIO;
        }
        PQclear(res);
    }
    while ((res = PQgetResult(c->pg)) != NULL) {
        ExecStatusType st = PQresultStatus(res);

        PQclear(res);
        if (st == PGRES_PIPELINE_SYNC)
            break;
    }
    return rc;
}

/*
 * Set a worker up: enter pipeline mode, prepare every worker statement
 * and run the session settings (DBFS_ST_SESSION), all in one round trip.
 * Returns 0 or -EAGAIN/-EIO (logged).
 */
static int dbfs_link_setup(dbfs_conn *c)
{
    int rc;
    int i;

    c->ready = false;
    if (PQstatus(c->pg) != CONNECTION_OK)
        return -EAGAIN;
    if (!PQenterPipelineMode(c->pg)) {
        dbfs_log_conn_error("cannot enter pipeline mode", c->pg);
        return -EIO;
    }
    for (i = 0; i < DBFS_ST_NWORKER; i++) {
        if (!PQsendPrepare(c->pg, dbfs_stmts[i].name,
                           dbfs_stmt_sql((dbfs_stmt)i, c->fs && c->fs->info.citus), 0, NULL))
            break;
    }
    if (i < DBFS_ST_NWORKER ||
        !PQsendQueryPrepared(c->pg, dbfs_stmts[DBFS_ST_SESSION].name, 0, NULL, NULL, NULL, 1) ||
        !PQpipelineSync(c->pg)) {
        dbfs_log_conn_error("cannot send the statements to prepare", c->pg);
        return -EAGAIN;
    }
    c->round_trips++;
    rc = dbfs_link_rest(c, dbfs_link_prepared(c));
    if (rc == 0 && PQstatus(c->pg) != CONNECTION_OK)
        rc = -EAGAIN;
    c->ready = rc == 0;
    return rc;
}

/* dbfs_link_again -- see dbfs_conn.h. */
int dbfs_link_again(dbfs_conn *c)
{
    c->ready = false;
    memset(c->prepared, 0, sizeof c->prepared);
    PQreset(c->pg);
    if (PQstatus(c->pg) != CONNECTION_OK) {
        dbfs_log_conn_error("cannot reconnect to the database", c->pg);
        return -EAGAIN;
    }
    PQsetNoticeProcessor(c->pg, dbfs_link_notice, NULL);
    if (!dbfs_link_pin_path(c->pg))
        return -EAGAIN;
    if (c->pipeline && dbfs_link_setup(c) != 0)
        return -EAGAIN;
    c->ready = true;
    c->generation++;
    return 0;
}

/* dbfs_link_worker -- see dbfs_conn.h. */
int dbfs_link_worker(dbfs_conn *c)
{
    int rc = dbfs_link_setup(c);

    if (rc == 0)
        c->generation++;
    return rc;
}
