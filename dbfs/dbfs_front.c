/*
 * dbfs_front.c -- the administration calls about frontends (dbfs.h):
 * the rows of pgnfs_frontends (`pgnfs frontends`, `pgnfs stats`) and
 * the database's place in its replication topology (`pgnfs stats`).
 *
 * NOTES
 *   Reads only, on the caller's dbfs_admin session; results are copied
 *   to the caller's structures or lent to its callback for one row.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "dbfs_admin.h"

/* Columns of DBFS_ST_FRONT_LIST. */
enum {
    DBFS_FL_ID,
    DBFS_FL_HOST,
    DBFS_FL_ADDRESS,
    DBFS_FL_PORT,
    DBFS_FL_PID,
    DBFS_FL_COHERENCE,
    DBFS_FL_UPTIME,
    DBFS_FL_BEAT_AGE,
    DBFS_FL_CALLS,
    DBFS_FL_STAT,
    DBFS_FL_NAMING,
    DBFS_FL_BUFFER,
    DBFS_FL_SMALL,
    DBFS_FL_WB,
    DBFS_FL_INVAL,
    DBFS_FL_SOLO,
    DBFS_FL_LIVE,
    DBFS_FL_NCOLS
};

/* dbfs_admin_frontends -- see dbfs.h. One statement. */
int dbfs_admin_frontends(dbfs_admin *a, int (*cb)(const dbfs_frontend_row *r, void *arg), void *arg)
{
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, DBFS_FRONTEND_STALE_S);
    rc = dbfs_exec(a->c, DBFS_ST_FRONT_LIST, &p, &r);
    if (rc == 0 && PQnfields(r) != DBFS_FL_NCOLS)
        rc = -EIO;
    for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
        dbfs_frontend_row f = {
            .id = dbfs_get_i8(r, i, DBFS_FL_ID),
            .host = PQgetvalue(r, i, DBFS_FL_HOST),
            .address = PQgetvalue(r, i, DBFS_FL_ADDRESS),
            .coherence = PQgetvalue(r, i, DBFS_FL_COHERENCE),
            .port = (unsigned)dbfs_get_i4(r, i, DBFS_FL_PORT),
            .pid = dbfs_get_i4(r, i, DBFS_FL_PID),
            .uptime_s = dbfs_get_i8(r, i, DBFS_FL_UPTIME),
            .heartbeat_age_s = dbfs_get_i8(r, i, DBFS_FL_BEAT_AGE),
            .calls = (uint64_t)dbfs_get_i8(r, i, DBFS_FL_CALLS),
            .stat_entries = (uint64_t)dbfs_get_i8(r, i, DBFS_FL_STAT),
            .naming_entries = (uint64_t)dbfs_get_i8(r, i, DBFS_FL_NAMING),
            .buffer_bytes = (uint64_t)dbfs_get_i8(r, i, DBFS_FL_BUFFER),
            .small_bytes = (uint64_t)dbfs_get_i8(r, i, DBFS_FL_SMALL),
            .writeback_bytes = (uint64_t)dbfs_get_i8(r, i, DBFS_FL_WB),
            .invalidations = (uint64_t)dbfs_get_i8(r, i, DBFS_FL_INVAL),
            .live = PQgetlength(r, i, DBFS_FL_LIVE) == 1 && PQgetvalue(r, i, DBFS_FL_LIVE)[0],
            .solo = PQgetlength(r, i, DBFS_FL_SOLO) == 1 && PQgetvalue(r, i, DBFS_FL_SOLO)[0],
        };
        rc = cb(&f, arg);
    }
    PQclear(r);
    return rc;
}

/* dbfs_admin_topology -- see dbfs.h. One statement. */
int dbfs_admin_topology(dbfs_admin *a, dbfs_topology *out)
{
    PGresult *r = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    rc = dbfs_exec(a->c, DBFS_ST_FRONT_TOPOLOGY, NULL, &r);
    if (rc == 0 && (PQntuples(r) != 1 || PQnfields(r) != 7))
        rc = -EIO;
    if (rc == 0) {
        out->standby = PQgetlength(r, 0, 0) == 1 && PQgetvalue(r, 0, 0)[0];
        g_strlcpy(out->version, PQgetvalue(r, 0, 1), sizeof out->version);
        if (dbfs_get_i4(r, 0, 3))
            g_snprintf(out->server, sizeof out->server, "%s:%d", PQgetvalue(r, 0, 2),
                       (int)dbfs_get_i4(r, 0, 3));
        else
            g_strlcpy(out->server, PQgetvalue(r, 0, 2), sizeof out->server);
        g_strlcpy(out->sync_names, PQgetvalue(r, 0, 4), sizeof out->sync_names);
        out->nreplicas = (unsigned)dbfs_get_i8(r, 0, 5);
        g_strlcpy(out->replicas, PQgetvalue(r, 0, 6), sizeof out->replicas);
    }
    PQclear(r);
    return rc;
}
