/*
 * pgnfs_sql.c -- `pgnfs sql`: psql on the file system's database, and the
 * way the read-only commands (sql, du, find) reach it.
 *
 *   pgnfs sql [--] [psql arguments]   e.g. pgnfs sql -c 'SELECT count(*) FROM fileatt'
 *   pgnfs sql --read-only [--] [psql arguments]
 *
 * --read-only connects psql as the login role pgnfs_ro, which may read the
 * views of schema pgnfs (pgnfs.files, dirs, content, tree(), ...) and
 * nothing else (dbfs_views_reader), so nothing typed there can change the
 * file system.
 *
 * Arguments after a "--" go to psql untouched (`pgnfs sql -- --help` is
 * psql's help; `pgnfs sql --help` is ours).
 *
 * The database is [database] conninfo when set; otherwise the embedded
 * cluster in [embedded] data_dir: used through its socket as it is when a
 * server runs it (pgnfs_database_peek), else started for the session and
 * stopped when psql exits.
 *
 * NOTES
 *   When nothing has to be stopped afterwards, psql replaces this process
 *   (exec), so its exit status is ours. Otherwise psql runs as a child and
 *   this process ignores SIGINT/SIGQUIT meanwhile (they belong to psql),
 *   then stops the cluster.
 */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "pgnfs_cmd.h"

/* The embedded cluster's port on its private socket (emb_cluster.c). */
#define PGNFS_EMB_PORT "5432"

/* The OS user (= database role) the embedded cluster in dir runs as: its
 * owner, as emb_cluster.c decides. */
static char *pgnfs_emb_user(const cfg *c, const char *dir)
{
    char *pg = g_build_filename(dir, "pg", NULL);
    struct passwd *pw;
    struct stat st;
    bool owned = stat(pg, &st) == 0 && st.st_uid != 0;

    g_free(pg);
    if (geteuid() == 0 && owned && (pw = getpwuid(st.st_uid)) != NULL)
        return g_strdup(pw->pw_name);
    if (geteuid() == 0)
        return g_strdup(c->pg_user && *c->pg_user ? c->pg_user : "postgres");
    pw = getpwuid(geteuid());
    return g_strdup(pw ? pw->pw_name : "postgres");
}

/* pgnfs_database_exists -- see pgnfs_cmd.h. */
bool pgnfs_database_exists(const cfg *c)
{
    struct stat st;
    char *version;
    bool found;

    if (c->conninfo && *c->conninfo)
        return true;
    char *dflt = cfg_default_data_dir();
    /* Layout of emb.h: DATA_DIR/pg is the PostgreSQL data directory. */
    version = g_build_filename(c->data_dir, "pg", "PG_VERSION", NULL);
    found = stat(version, &st) == 0;
    g_free(version);
    if (!found)
        g_printerr("pgnfs: no file system in %s (no embedded PostgreSQL cluster there): give "
                   "the data directory of the server (--data DIR; `pgnfs serve` and serve.sh "
                   "use %s without one) or its database (--conninfo STR)\n",
                   c->data_dir, dflt);
    g_free(dflt);
    return found;
}

/* pgnfs_database_peek -- see pgnfs_cmd.h. */
char *pgnfs_database_peek(const cfg *c, emb_cluster **cluster)
{
    struct stat st;
    char *dir, *sock, *conninfo = NULL;

    *cluster = NULL;
    if (c->conninfo && *c->conninfo)
        return g_strdup(c->conninfo);
    if (!pgnfs_database_exists(c))
        return NULL;
    dir = realpath(c->data_dir, NULL);
    if (dir) {
        /* Layout of emb.h: DATA_DIR/pg/socket holds the socket while the
         * cluster runs (PostgreSQL removes it at shutdown). */
        sock = g_strdup_printf("%s/pg/socket/.s.PGSQL.%s", dir, PGNFS_EMB_PORT);
        if (stat(sock, &st) == 0 && S_ISSOCK(st.st_mode)) {
            char *user = pgnfs_emb_user(c, dir);
            conninfo = g_strdup_printf("host=%s/pg/socket port=%s dbname=pgnfs user=%s", dir,
                                       PGNFS_EMB_PORT, user);
            g_free(user);
        }
        g_free(sock);
        free(dir);
    }
    if (conninfo)
        return conninfo;
    const char *started = pgnfs_database(c, cluster);
    return started ? g_strdup(started) : NULL;
}

const char pgnfs_help_sql[] =
    "usage: pgnfs sql [--read-only] [--] [psql arguments] [options]\n"
    "\n"
    "Run psql on the file system's database: the embedded cluster's (through its\n"
    "socket while a server runs it; otherwise started for the session and stopped\n"
    "when psql exits), or that of --conninfo. The file system is ordinary tables:\n"
    "fileatt (attributes), naming (names), allfiles (data chunks).\n"
    "Writing in SQL beside a running server bypasses its caches: stop it first.\n"
    "The views of schema pgnfs show the tree as paths (see --read-only).\n"
    "\n"
    "  --read-only      connect as the role pgnfs_ro, which may only read the views\n"
    "                   of schema pgnfs (made on first use if this database user may\n"
    "                   create roles): pgnfs.files, pgnfs.dirs, pgnfs.content,\n"
    "                   pgnfs.tree(DIR), pgnfs.lookup(PATH), pgnfs.cat(INODE) ...\n"
    "  psql arguments   -c QUERY, -At, -f FILE ...; after -- they go to psql as\n"
    "                   they are (pgnfs sql -- --help shows psql's help)\n"
    "\n"
    "examples:\n"
    "  pgnfs sql\n"
    "  pgnfs sql -At -c 'SELECT count(*) FROM fileatt WHERE type = 1'\n"
    "  pgnfs sql --read-only -c 'SELECT path, size FROM files ORDER BY size DESC LIMIT 10'\n"
    "  pgnfs sql --read-only -c \"SELECT sum(size) FROM pgnfs.tree('/home')\"\n";

/* pgnfs sql: see the header. */
int pgnfs_cmd_sql(const cfg *c, int argc, char **argv)
{
    emb_cluster *cluster = NULL;
    char *conninfo;
    GPtrArray *av;
    int rc = PGNFS_EXIT_FAIL;
    bool ro = false;

    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        ro = ro || strcmp(argv[i], "--read-only") == 0;
    conninfo = pgnfs_database_peek(c, &cluster);
    if (!conninfo)
        return PGNFS_EXIT_FAIL;
    av = g_ptr_array_new();
    g_ptr_array_add(av, "psql");
    if (ro) {
        char *reader = NULL;
        int err = dbfs_views_reader(conninfo, &reader);

        if (err != 0) {
            g_printerr("pgnfs sql: cannot read the file system read-only: %s\n", g_strerror(-err));
            goto out;
        }
        g_free(conninfo);
        conninfo = reader;
    }
    g_ptr_array_add(av, conninfo);
    /* The first "--" only kept pgnfs's options away from what follows. */
    bool dashes = false;
    for (int i = 1; i < argc; i++) {
        if (!dashes && strcmp(argv[i], "--") == 0)
            dashes = true;
        else if (dashes || strcmp(argv[i], "--read-only") != 0)
            g_ptr_array_add(av, argv[i]);
    }
    g_ptr_array_add(av, NULL);
    fflush(NULL);

    if (!cluster) {
        execvp("psql", (char **)av->pdata);
        g_printerr("pgnfs sql: cannot run psql: %s (install postgresql-client)\n",
                   g_strerror(errno));
        goto out;
    }
    pid_t pid = fork();
    if (pid < 0) {
        g_printerr("pgnfs sql: fork: %s\n", g_strerror(errno));
        goto out;
    }
    if (pid == 0) {
        execvp("psql", (char **)av->pdata);
        fprintf(stderr, "pgnfs sql: cannot run psql: %s (install postgresql-client)\n",
                strerror(errno));
        _exit(127);
    }
    struct sigaction ign = {.sa_handler = SIG_IGN}, oldint, oldquit;
    sigaction(SIGINT, &ign, &oldint);
    sigaction(SIGQUIT, &ign, &oldquit);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        /* wait on */
    }
    sigaction(SIGINT, &oldint, NULL);
    sigaction(SIGQUIT, &oldquit, NULL);
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : PGNFS_EXIT_FAIL;
out:
    if (cluster && emb_stop(cluster) != 0 && rc == PGNFS_EXIT_OK)
        rc = PGNFS_EXIT_FAIL;
    g_ptr_array_free(av, TRUE);
    g_free(conninfo);
    return rc;
}
