/*
 * dbfs_views.c -- the read-only door to the SQL views of a file system
 * (schema pgnfs, schema/functions/95_views.sql): make sure the roles
 * exist and hold this database's views, and say how to connect as the
 * login role. `pgnfs sql --read-only` runs psql with what it returns.
 *
 * NOTES
 *   The roles are the cluster's, not the database's: pgnfs_reader (NOLOGIN;
 *   USAGE on schema pgnfs, SELECT on its views, EXECUTE on its functions,
 *   nothing else) and pgnfs_ro (LOGIN, in pgnfs_reader). A login role
 *   rather than SET ROLE in the owner's session: a session may RESET ROLE,
 *   a login as pgnfs_ro cannot become anyone else. How pgnfs_ro
 *   authenticates is the server's pg_hba.conf (the embedded cluster trusts
 *   its private socket; elsewhere give it a password and a ~/.pgpass line).
 *   The returned conninfo keeps every keyword of the given one but user
 *   and password, so it reaches the same server and database.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "dbfs_conn.h"
#include "dbfs_int.h"

/* The login role of the views (95_views.sql makes it). */
#define DBFS_VIEWS_LOGIN "pgnfs_ro"
/* What a pgnfs_ro session sets, added to the conninfo's own options. */
#define DBFS_VIEWS_OPTIONS "-c search_path=pgnfs,public -c default_transaction_read_only=on"

/* Append keyword = 'value' to s, quoted as a conninfo value. */
static void dbfs_views_kv(GString *s, const char *key, const char *val)
{
    if (s->len)
        g_string_append_c(s, ' ');
    g_string_append_printf(s, "%s='", key);
    for (const char *p = val; *p; p++) {
        if (*p == '\'' || *p == '\\')
            g_string_append_c(s, '\\');
        g_string_append_c(s, *p);
    }
    g_string_append_c(s, '\'');
}

/* conninfo for the login role (see dbfs.h); NULL if conninfo does not
 * parse (logged). */
static char *dbfs_views_conninfo(const char *conninfo)
{
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &err);
    GString *s;
    bool had_options = false;

    if (!opts) {
        g_warning("the database's conninfo does not parse: %s", err ? err : "out of memory");
        PQfreemem(err);
        return NULL;
    }
    s = g_string_new(NULL);
    for (PQconninfoOption *o = opts; o->keyword; o++) {
        if (!o->val || strcmp(o->keyword, "user") == 0 || strcmp(o->keyword, "password") == 0)
            continue;
        if (strcmp(o->keyword, "options") == 0) {
            char *both = g_strdup_printf("%s %s", o->val, DBFS_VIEWS_OPTIONS);
            dbfs_views_kv(s, o->keyword, both);
            g_free(both);
            had_options = true;
            continue;
        }
        dbfs_views_kv(s, o->keyword, o->val);
    }
    if (!had_options)
        dbfs_views_kv(s, "options", DBFS_VIEWS_OPTIONS);
    dbfs_views_kv(s, "user", DBFS_VIEWS_LOGIN);
    PQconninfoFree(opts);
    return g_string_free(s, FALSE);
}

/* dbfs_views_reader -- see dbfs.h. Two round trips after connecting: is
 * there a file system (DBFS_ST_ADM_EXISTS), then DBFS_ST_VIEWS_ROLES. */
int dbfs_views_reader(const char *conninfo, char **out)
{
    dbfs_conn *c;
    PGresult *r = NULL;
    int rc;

    *out = dbfs_views_conninfo(conninfo);
    if (!*out)
        return -EINVAL;
    rc = dbfs_session_open(conninfo, "pgnfs-admin", &c);
    if (rc != 0)
        goto err;
    rc = dbfs_exec(c, DBFS_ST_ADM_EXISTS, NULL, &r);
    if (rc == 0 && (PQntuples(r) != 1 || PQgetlength(r, 0, 0) != 1 || PQgetvalue(r, 0, 0)[0] == 0))
        rc = -ENOENT;
    PQclear(r);
    r = NULL;
    if (rc == 0)
        rc = dbfs_exec(c, DBFS_ST_VIEWS_ROLES, NULL, &r);
    if (rc == 0 &&
        (PQntuples(r) != 1 || PQgetlength(r, 0, 0) != 1 || PQgetvalue(r, 0, 0)[0] == 0)) {
        g_warning("the read-only roles do not exist and this database user may not create "
                  "roles: ask the database's administrator to run `CREATE ROLE pgnfs_reader "
                  "NOLOGIN; CREATE ROLE " DBFS_VIEWS_LOGIN " LOGIN IN ROLE pgnfs_reader;`, "
                  "then run this again");
        rc = -EPERM;
    }
    PQclear(r);
    dbfs_conn_close(c);
    if (rc == 0)
        return 0;
err:
    g_free(*out);
    *out = NULL;
    return rc;
}
