/*
 * pgnfs_front.c -- `pgnfs frontends` and `pgnfs conninfo`: the servers
 * registered on a file system (pgnfs_frontends, dbfs_admin_frontends),
 * and the libpq connection string of an embedded cluster, with which a
 * second server or psql joins the file system that `pgnfs serve` serves:
 *
 *   pgnfs serve --data DIR --set cache.coherence=shared &
 *   pgnfsd --conninfo "$(pgnfs conninfo --data DIR)" --port 2050 \
 *          --set cache.coherence=shared
 *
 * NOTES
 *   Both read only and work beside running servers. `conninfo` needs the
 *   embedded cluster running (it prints the socket that running cluster
 *   listens on); it starts nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "pgnfs_cmd.h"

const char pgnfs_help_frontends[] =
    "usage: pgnfs frontends [options]\n"
    "\n"
    "The servers registered on the file system (table pgnfs_frontends), one line\n"
    "each as key=value words: id, host, listen address:port, pid, coherence\n"
    "(single or shared), solo (a shared server that is alone so far and answers\n"
    "from its caches as in single mode), state (live, or dead: its heartbeat is\n"
    "over a minute old or its database session is gone), uptime and heartbeat age\n"
    "in seconds, calls\n"
    "served, cache figures (stat and naming entries, buffer, small-file and\n"
    "write-back bytes) and the invalidations it received from the others.\n"
    "Works beside running servers.\n"
    "\n"
    "example:\n"
    "  pgnfs frontends --conninfo 'host=db1,db2 dbname=pgnfs target_session_attrs=read-write'\n";

const char pgnfs_help_conninfo[] =
    "usage: pgnfs conninfo [options]\n"
    "\n"
    "Prints the libpq connection string of the file system's database: the\n"
    "configured one (--conninfo), or that of the embedded cluster in the data\n"
    "directory (--data DIR), which must be running (pgnfs serve). With it a\n"
    "second server joins the file system, or psql opens it:\n"
    "\n"
    "  pgnfs serve --data DIR --set cache.coherence=shared &\n"
    "  pgnfsd --conninfo \"$(pgnfs conninfo --data DIR)\" --port 2050 \\\n"
    "         --set cache.coherence=shared\n"
    "  psql \"$(pgnfs conninfo --data DIR)\"\n";

/* One line per server. */
static int pgnfs_front_print(const dbfs_frontend_row *r, void *arg)
{
    unsigned *n = arg;

    printf("id=%" G_GINT64_FORMAT " host=%s address=%s:%u pid=%d coherence=%s solo=%s state=%s "
           "uptime=%" G_GINT64_FORMAT " heartbeat_age=%" G_GINT64_FORMAT " calls=%" G_GUINT64_FORMAT
           " stat_entries=%" G_GUINT64_FORMAT " naming_entries=%" G_GUINT64_FORMAT
           " buffer_bytes=%" G_GUINT64_FORMAT " small_bytes=%" G_GUINT64_FORMAT
           " writeback_bytes=%" G_GUINT64_FORMAT " invalidations=%" G_GUINT64_FORMAT "\n",
           (gint64)r->id, r->host, r->address, r->port, r->pid, r->coherence,
           r->solo ? "yes" : "no", r->live ? "live" : "dead", (gint64)r->uptime_s,
           (gint64)r->heartbeat_age_s, (guint64)r->calls, (guint64)r->stat_entries,
           (guint64)r->naming_entries, (guint64)r->buffer_bytes, (guint64)r->small_bytes,
           (guint64)r->writeback_bytes, (guint64)r->invalidations);
    if (r->live)
        (*n)++;
    return 0;
}

/* pgnfs frontends -- see the top of this file. */
int pgnfs_cmd_frontends(const cfg *c, int argc, char **argv)
{
    emb_cluster *cluster = NULL;
    dbfs_admin *a = NULL;
    unsigned live = 0;
    char *conninfo;
    int rc = PGNFS_EXIT_FAIL, err;

    if (argc > 1) {
        g_printerr("pgnfs frontends: unexpected argument '%s' (see pgnfs frontends --help)\n",
                   argv[1]);
        return PGNFS_EXIT_USAGE;
    }
    conninfo = pgnfs_database_peek(c, &cluster);
    if (!conninfo)
        return PGNFS_EXIT_FAIL;
    err = dbfs_admin_open(conninfo, &a);
    if (err == -ENOENT)
        g_printerr("pgnfs: the database holds no pgnfs file system (run `pgnfs mkfs`)\n");
    else if (err != 0)
        g_printerr("pgnfs: cannot open the database: %s\n", g_strerror(-err));
    if (err == 0) {
        err = dbfs_admin_frontends(a, pgnfs_front_print, &live);
        if (err != 0)
            g_printerr("pgnfs frontends: %s\n", g_strerror(-err));
        else {
            printf("# %u live\n", live);
            rc = PGNFS_EXIT_OK;
        }
    }
    dbfs_admin_close(a);
    if (cluster && emb_stop(cluster) != 0)
        rc = PGNFS_EXIT_FAIL;
    g_free(conninfo);
    return rc;
}

/* The running embedded cluster's conninfo, or the configured one; NULL
 * when neither (nothing is started). g_free it. */
static char *pgnfs_front_running(const cfg *c)
{
    emb_cluster *cluster = NULL;
    char *dir, *sock, *conninfo = NULL;
    struct stat st;

    if (c->conninfo && *c->conninfo)
        return g_strdup(c->conninfo);
    dir = realpath(c->data_dir, NULL);
    if (!dir)
        return NULL;
    /* The layout of emb.h: DATA_DIR/pg/socket holds the running cluster's
     * socket; asking only then starts nothing. */
    sock = g_strdup_printf("%s/pg/socket/.s.PGSQL.5432", dir);
    if (stat(sock, &st) == 0 && S_ISSOCK(st.st_mode))
        conninfo = pgnfs_database_peek(c, &cluster);
    if (cluster) { /* it stopped meanwhile: what was started is not for us */
        emb_stop(cluster);
        g_free(conninfo);
        conninfo = NULL;
    }
    free(dir);
    g_free(sock);
    return conninfo;
}

typedef struct {
    GString *line;
    unsigned live, dead;
} pgnfs_front_sum;

static int pgnfs_front_add(const dbfs_frontend_row *r, void *arg)
{
    pgnfs_front_sum *s = arg;

    if (!r->live) {
        s->dead++;
        return 0;
    }
    s->live++;
    g_string_append_printf(s->line,
                           "\n             #%" G_GINT64_FORMAT " %s %s:%u %s, up %" G_GINT64_FORMAT
                           " s, %" G_GUINT64_FORMAT " calls, %" G_GUINT64_FORMAT
                           " stat + %" G_GUINT64_FORMAT " naming entries",
                           (gint64)r->id, r->host, r->address, r->port, r->coherence,
                           (gint64)r->uptime_s, (guint64)r->calls, (guint64)r->stat_entries,
                           (guint64)r->naming_entries);
    return 0;
}

/* pgnfs_front_stats -- see pgnfs_cmd.h. */
void pgnfs_front_stats(const cfg *c)
{
    char *conninfo = pgnfs_front_running(c);
    pgnfs_front_sum sum = {g_string_new(NULL), 0, 0};
    dbfs_admin *a = NULL;
    dbfs_topology t;
    int rc;

    if (!conninfo) {
        printf("frontends    (the database is not reachable from here: give --conninfo or "
               "--data)\n");
        g_string_free(sum.line, TRUE);
        return;
    }
    rc = dbfs_admin_open(conninfo, &a);
    if (rc == 0)
        rc = dbfs_admin_frontends(a, pgnfs_front_add, &sum);
    if (rc == 0)
        printf("frontends    %u live, %u dead rows%s\n", sum.live, sum.dead, sum.line->str);
    if (rc == 0)
        rc = dbfs_admin_topology(a, &t);
    if (rc == 0) {
        printf("database     %s, PostgreSQL %s at %s; %u standby%s streaming%s%s%s%s\n",
               t.standby ? "STANDBY (read-only)" : "primary", t.version, t.server, t.nreplicas,
               t.nreplicas == 1 ? "" : "s", t.nreplicas ? ": " : "", t.replicas,
               *t.sync_names ? "; synchronous_standby_names " : "", t.sync_names);
    } else {
        printf("frontends    (cannot read them: %s)\n", g_strerror(-rc));
    }
    dbfs_admin_close(a);
    g_string_free(sum.line, TRUE);
    g_free(conninfo);
}

/* pgnfs conninfo -- see the top of this file. */
int pgnfs_cmd_conninfo(const cfg *c, int argc, char **argv)
{
    char *conninfo;

    if (argc > 1) {
        g_printerr("pgnfs conninfo: unexpected argument '%s' (see pgnfs conninfo --help)\n",
                   argv[1]);
        return PGNFS_EXIT_USAGE;
    }
    conninfo = pgnfs_front_running(c);
    if (!conninfo) {
        g_printerr("pgnfs conninfo: no embedded cluster is running in %s (start it with "
                   "`pgnfs serve --data %s`)\n",
                   c->data_dir, c->data_dir);
        return PGNFS_EXIT_FAIL;
    }
    printf("%s\n", conninfo);
    g_free(conninfo);
    return PGNFS_EXIT_OK;
}
