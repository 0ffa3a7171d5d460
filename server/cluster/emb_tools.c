/*
 * emb_tools.c -- PostgreSQL's own tools (initdb, pg_ctl, createdb) run as
 * child processes for the embedded cluster, as the cluster's user, and the
 * postmaster's lock file (pg_dir/postmaster.pid).
 *
 * NOTES
 *   A child drops to the cluster user before it executes when this process
 *   is root, because PostgreSQL refuses to run as root. The supervisor runs
 *   pg_ctl from a thread while other threads serve, so between fork and
 *   exec the child makes system calls only (setgroups with the groups
 *   resolved by emb_start, setgid, setuid, sigprocmask, signal): nothing
 *   that takes a lock another thread might have held at the fork.
 *   GLib closes every other descriptor in the child, so PostgreSQL never
 *   inherits the server's sockets.
 */
#include "emb_int.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

/* What a child process needs to become the cluster user. */
typedef struct {
    bool drop;
    uid_t uid;
    gid_t gid;
    const gid_t *groups;
    int ngroups;
} emb_child;

static void emb_child_setup(gpointer data)
{
    const emb_child *c = data;
    sigset_t none;

    /* The server blocks its signals and ignores SIGPIPE: PostgreSQL's
     * tools get the defaults. */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    if (!c->drop)
        return;
    /* Failing to drop must not run PostgreSQL's tools as root: exit. */
    if (setgroups((size_t)c->ngroups, c->groups) != 0 || setgid(c->gid) != 0 || setuid(c->uid) != 0)
        _exit(126);
}

/* emb_run -- see emb_int.h. */
int emb_run(const emb_cluster *c, char **argv, char **err)
{
    emb_child child = {c->drop_privs, c->uid, c->gid, c->groups, c->ngroups};
    char *out = NULL, *errout = NULL;
    GError *gerr = NULL;
    int status = 0;
    int rc = -1;

    if (!g_spawn_sync("/", argv, NULL, G_SPAWN_DEFAULT, emb_child_setup, &child, &out, &errout,
                      &status, &gerr)) {
        *err = g_strdup_printf("cannot run %s: %s", argv[0], gerr->message);
        goto out;
    }
    if (!g_spawn_check_wait_status(status, &gerr)) {
        *err = g_strdup_printf("%s failed (%s):\n%s%s", argv[0], gerr->message, out ? out : "",
                               errout ? errout : "");
        goto out;
    }
    rc = 0;
out:
    g_clear_error(&gerr);
    g_free(out);
    g_free(errout);
    return rc;
}

static bool emb_has_tools(const char *dir)
{
    static const char *const tools[] = {"initdb", "pg_ctl", "createdb"};
    bool ok = true;

    for (size_t i = 0; ok && i < G_N_ELEMENTS(tools); i++) {
        char *path = g_build_filename(dir, tools[i], NULL);
        ok = g_file_test(path, G_FILE_TEST_IS_EXECUTABLE);
        g_free(path);
    }
    return ok;
}

/* emb_find_bindir -- see emb_int.h. */
char *emb_find_bindir(const char *configured)
{
    char *found = NULL;
    char *out = NULL;

    if (configured && *configured)
        return emb_has_tools(configured) ? g_strdup(configured) : NULL;

    /* PATH may hold symbolic links to a few of the tools: follow them. */
    char *initdb = g_find_program_in_path("initdb");
    char *real = initdb ? realpath(initdb, NULL) : NULL;
    g_free(initdb);
    if (real) {
        found = g_path_get_dirname(real);
        free(real);
        if (emb_has_tools(found))
            return found;
        g_clear_pointer(&found, g_free);
    }

    char *argv[] = {"pg_config", "--bindir", NULL};
    if (g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                     &out, NULL, NULL, NULL) &&
        out) {
        g_strstrip(out);
        if (emb_has_tools(out))
            return out;
    }
    g_free(out);

    GDir *d = g_dir_open("/usr/lib/postgresql", 0, NULL);
    int best = -1;
    if (d) {
        const char *name;
        while ((name = g_dir_read_name(d))) {
            int v = atoi(name);
            char *bin = g_build_filename("/usr/lib/postgresql", name, "bin", NULL);
            if (v > best && emb_has_tools(bin)) {
                best = v;
                g_free(found);
                found = bin;
            } else {
                g_free(bin);
            }
        }
        g_dir_close(d);
    }
    return found;
}

/* emb_pg_status -- see emb_int.h. */
bool emb_pg_status(const emb_cluster *c)
{
    char *pg_ctl = g_build_filename(c->bindir, "pg_ctl", NULL);
    char *argv[] = {pg_ctl, "status", "-D", c->pg_dir, NULL};
    char *why = NULL;
    bool running = emb_run(c, argv, &why) == 0;

    g_free(why);
    g_free(pg_ctl);
    return running;
}

/*
 * The postgres options of a start: the WAL's, the log's rotation, the
 * buffer pool's size when given, and the socket directory (initdb wrote it
 * into postgresql.conf, but a data directory that was moved or renamed
 * must still put its socket where pgnfs looks). pg_ctl passes the options
 * through /bin/sh, so the directory is given only when it needs no
 * quoting (g_free the result).
 */
static char *emb_start_options(const emb_cluster *c, char **why)
{
    char *wal = emb_wal_options(c, why);
    char *log = emb_log_options();
    char *buffers = c->shared_buffers_mb
                        ? g_strdup_printf(" -c shared_buffers=%uMB", c->shared_buffers_mb)
                        : g_strdup("");
    bool plain = strspn(c->sock_dir, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789/._-+@") == strlen(c->sock_dir);
    char *all = plain ? g_strdup_printf("%s %s%s -c unix_socket_directories=%s", wal, log, buffers,
                                        c->sock_dir)
                      : g_strdup_printf("%s %s%s", wal, log, buffers);

    if (c->shared_buffers_mb) {
        char *more = g_strdup_printf("%s; shared_buffers %uMB", *why, c->shared_buffers_mb);
        g_free(*why);
        *why = more;
    }
    g_free(buffers);
    g_free(log);
    g_free(wal);
    return all;
}

/* emb_pg_start -- see emb_int.h. */
int emb_pg_start(const emb_cluster *c, bool serving, char **err)
{
    char *why = NULL;
    char *options = emb_start_options(c, &why);
    char *pg_ctl = g_build_filename(c->bindir, "pg_ctl", NULL);
    char *argv[] = {pg_ctl,    "start", "-w",        "-t", EMB_PG_CTL_WAIT, "-D",
                    c->pg_dir, "-l",    c->log_file, "-o", options,         NULL};
    char *failed = NULL;
    int rc;

    g_message("%s", why);
    emb_log_prune(c, true);
    rc = emb_run(c, argv, &failed);
    if (rc != 0) {
        char *diag = emb_diagnose(c, serving);
        g_strstrip(failed);
        *err = g_strdup_printf("PostgreSQL did not start in %s: %s\n%s", c->pg_dir, failed, diag);
        g_free(diag);
    }
    g_free(failed);
    g_free(pg_ctl);
    g_free(options);
    g_free(why);
    return rc;
}

/* emb_pg_stop -- see emb_int.h. */
int emb_pg_stop(const emb_cluster *c, char **err)
{
    char *pg_ctl = g_build_filename(c->bindir, "pg_ctl", NULL);
    char *argv[] = {pg_ctl, "stop", "-w", "-t",      EMB_PG_CTL_WAIT,
                    "-m",   "fast", "-D", c->pg_dir, NULL};
    int rc = emb_run(c, argv, err);

    g_free(pg_ctl);
    return rc;
}

/* emb_pid_alive -- see emb_int.h. */
bool emb_pid_alive(pid_t pid)
{
    char path[64], *stat = NULL;
    bool alive = kill(pid, 0) == 0 || errno == EPERM;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (alive && g_file_get_contents(path, &stat, NULL, NULL)) {
        /* "pid (comm) S ...": the state follows the last ')'. */
        const char *p = strrchr(stat, ')');
        alive = !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
    }
    g_free(stat);
    return alive;
}

/* emb_pm_read -- see emb_int.h. */
bool emb_pm_read(const emb_cluster *c, pid_t *pid, bool *ready)
{
    char *path = g_build_filename(c->pg_dir, "postmaster.pid", NULL);
    char *text = NULL;
    bool alive = false;

    *pid = 0;
    *ready = false;
    /* Line 1 the pid; line 8 the status (PostgreSQL 10 and later):
     * "starting", "stopping", "ready" or "standby". */
    if (g_file_get_contents(path, &text, NULL, NULL)) {
        char **lines = g_strsplit(text, "\n", 9);
        long v = lines[0] ? strtol(lines[0], NULL, 10) : 0;
        if (v > 0) {
            *pid = (pid_t)v;
            alive = emb_pid_alive(*pid);
            *ready = alive && g_strv_length(lines) > 7 && g_str_has_prefix(lines[7], "ready");
        }
        g_strfreev(lines);
    }
    g_free(text);
    g_free(path);
    return alive;
}
