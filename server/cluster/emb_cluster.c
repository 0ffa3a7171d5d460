/*
 * emb_cluster.c -- the embedded private PostgreSQL cluster (see emb.h).
 *
 * The cluster is driven with PostgreSQL's own tools (initdb, pg_ctl,
 * createdb), run as child processes. When this process is root, each child
 * drops to the cluster user before it executes, because PostgreSQL refuses
 * to run as root.
 *
 * States of a cluster directory, and the function that moves between them:
 *
 *     (absent) --emb_start: initdb, createdb--> (stopped)
 *     (stopped) --emb_start: pg_ctl start--> (running, ours)
 *     (running, left over by a crashed pgnfs) --emb_start: adopt--> (running, ours)
 *     (running, ours) --emb_stop: pg_ctl stop -m fast--> (stopped)
 *
 * A lock file (DATA_DIR/pgnfs.lock, flock) held from emb_start to emb_stop
 * keeps two pgnfs processes from driving one cluster.
 *
 * NOTES
 *   emb_start runs before any thread exists (g_spawn's child setup calls
 *   initgroups, which is not async-signal-safe in a threaded process).
 *   The emb_cluster owns every string it holds; emb_stop frees it.
 */
#include "emb.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#define EMB_DBNAME "pgnfs"
#define EMB_PORT   "5432"

struct emb_cluster {
    char *data_dir; /* absolute */
    char *pg_dir;   /* data_dir/pg */
    char *sock_dir; /* pg_dir/socket */
    char *log_file; /* pg_dir/postgresql.log */
    char *bindir;
    char *db_user;   /* the cluster's superuser role = its OS user */
    char *conninfo;  /* for database EMB_DBNAME */
    bool drop_privs; /* children run as uid/gid below */
    uid_t uid;
    gid_t gid;
    int lock_fd;
};

/* What a child process needs to drop to the cluster user. */
typedef struct {
    bool drop;
    uid_t uid;
    gid_t gid;
    const char *user;
} emb_child;

static void emb_child_setup(gpointer data)
{
    const emb_child *c = data;

    if (!c->drop)
        return;
    /* Failing to drop must not run PostgreSQL's tools as root: exit. */
    if (setgid(c->gid) != 0 || initgroups(c->user, c->gid) != 0 || setuid(c->uid) != 0)
        _exit(126);
}

/*
 * Run argv (NULL-terminated) to completion, as the cluster user. Returns 0,
 * or -1 with *err describing the command, its exit status and its output.
 */
static int emb_run(const emb_cluster *c, char **argv, char **err)
{
    emb_child child = {c->drop_privs, c->uid, c->gid, c->db_user};
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

/*
 * The directory holding initdb, pg_ctl and createdb: the configured one, else PATH,
 * else `pg_config --bindir`, else the newest /usr/lib/postgresql/N/bin.
 * Returns a g_malloc'd path or NULL.
 */
static char *emb_find_bindir(const char *configured)
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

/* Make dir (and parents) owned by the cluster user with the given mode. */
static int emb_mkdir_owned(const emb_cluster *c, const char *dir, int mode, char **err)
{
    if (g_mkdir_with_parents(dir, mode) != 0) {
        *err = g_strdup_printf("cannot create %s: %s", dir, g_strerror(errno));
        return -1;
    }
    if (c->drop_privs && chown(dir, c->uid, c->gid) != 0) {
        *err = g_strdup_printf("cannot give %s to user %s: %s", dir, c->db_user, g_strerror(errno));
        return -1;
    }
    if (chmod(dir, mode) != 0) {
        *err = g_strdup_printf("cannot chmod %s: %s", dir, g_strerror(errno));
        return -1;
    }
    return 0;
}

/* The cluster user must reach its directory through every parent. */
static int emb_check_reachable(const emb_cluster *c, char **err)
{
    char *argv[] = {"/usr/bin/test", "-w", c->pg_dir, NULL};
    char *why = NULL;

    if (!c->drop_privs)
        return 0;
    if (emb_run(c, argv, &why) == 0)
        return 0;
    g_free(why);
    *err = g_strdup_printf("PostgreSQL runs as user '%s', which cannot reach %s (a parent "
                           "directory is closed to it, e.g. /root). Choose a data directory it "
                           "can reach, such as --data /var/lib/pgnfs",
                           c->db_user, c->pg_dir);
    return -1;
}

static int emb_initdb(emb_cluster *c, const emb_opts *opts, char **err)
{
    char *initdb = g_build_filename(c->bindir, "initdb", NULL);
    char *pgdata_arg = g_strdup_printf("--pgdata=%s", c->pg_dir);
    char *user_arg = g_strdup_printf("--username=%s", c->db_user);
    char *conf_path = g_build_filename(c->pg_dir, "postgresql.conf", NULL);
    char *conf = NULL;
    FILE *f = NULL;
    int rc = -1;

    char *init_argv[] = {initdb,       pgdata_arg,        user_arg, "--auth=trust",
                         "--locale=C", "--encoding=UTF8", NULL};
    if (emb_run(c, init_argv, err) != 0)
        goto out;

    /* Only the Unix socket, private to the cluster user (and root). */
    conf = g_strdup_printf("\n# pgnfs embedded cluster\n"
                           "listen_addresses = ''\n"
                           "port = %s\n"
                           "unix_socket_directories = '%s'\n"
                           "unix_socket_permissions = 0700\n"
                           "%s",
                           EMB_PORT, c->sock_dir, opts->extra_conf ? opts->extra_conf : "");
    f = fopen(conf_path, "a");
    if (!f || fputs(conf, f) < 0 || fclose(f) != 0) {
        *err = g_strdup_printf("cannot write %s: %s", conf_path, g_strerror(errno));
        f = NULL;
        goto out;
    }
    f = NULL;
    if (emb_mkdir_owned(c, c->sock_dir, 0700, err) != 0)
        goto out;
    rc = 0;
out:
    if (f)
        fclose(f);
    g_free(conf);
    g_free(conf_path);
    g_free(user_arg);
    g_free(pgdata_arg);
    g_free(initdb);
    return rc;
}

static int emb_createdb(emb_cluster *c, char **err)
{
    char *createdb = g_build_filename(c->bindir, "createdb", NULL);
    char *argv[] = {createdb, "-h",       c->sock_dir, "-p", EMB_PORT,
                    "-U",     c->db_user, EMB_DBNAME,  NULL};
    char *why = NULL;
    int rc = emb_run(c, argv, &why);

    /* An existing database is what we want. */
    if (rc != 0 && why && strstr(why, "already exists")) {
        rc = 0;
    } else if (rc != 0) {
        *err = why;
        why = NULL;
    }
    g_free(why);
    g_free(createdb);
    return rc;
}

/* 0 if a postmaster runs from pg_dir, 1 if not (pg_ctl status's answer). */
static int emb_running(emb_cluster *c)
{
    char *pg_ctl = g_build_filename(c->bindir, "pg_ctl", NULL);
    char *argv[] = {pg_ctl, "status", "-D", c->pg_dir, NULL};
    char *why = NULL;
    int rc = emb_run(c, argv, &why) == 0 ? 0 : 1;

    g_free(why);
    g_free(pg_ctl);
    return rc;
}

static int emb_pg_start(emb_cluster *c, char **err)
{
    char *pg_ctl = g_build_filename(c->bindir, "pg_ctl", NULL);
    char *argv[] = {pg_ctl, "start", "-w", "-t", "120", "-D", c->pg_dir, "-l", c->log_file, NULL};
    char *why = NULL;
    int rc = emb_run(c, argv, &why);

    if (rc != 0) {
        *err = g_strdup_printf("%s\n(see %s)", why, c->log_file);
        g_free(why);
    }
    g_free(pg_ctl);
    return rc;
}

static void emb_free(emb_cluster *c)
{
    if (!c)
        return;
    if (c->lock_fd >= 0)
        close(c->lock_fd);
    g_free(c->data_dir);
    g_free(c->pg_dir);
    g_free(c->sock_dir);
    g_free(c->log_file);
    g_free(c->bindir);
    g_free(c->db_user);
    g_free(c->conninfo);
    g_free(c);
}

/*
 * Decide who runs PostgreSQL: this user; or, when we are root, the owner of
 * an existing cluster directory (PostgreSQL runs only as its owner: e.g. a
 * cluster that the systemd unit's user created, reached by root's admin
 * commands), else run_as.
 */
static int emb_pick_user(emb_cluster *c, const emb_opts *opts, char **err)
{
    struct passwd *pw;
    struct stat st;

    if (geteuid() == 0 && stat(c->pg_dir, &st) == 0 && st.st_uid != 0 &&
        (pw = getpwuid(st.st_uid)) != NULL) {
        c->drop_privs = true;
    } else if (geteuid() == 0) {
        const char *user = opts->run_as && *opts->run_as ? opts->run_as : "postgres";
        pw = getpwnam(user);
        if (!pw) {
            *err = g_strdup_printf("running as root, PostgreSQL needs an unprivileged user, and "
                                   "user '%s' does not exist (create it, or set [embedded] "
                                   "pg_user)",
                                   user);
            return -1;
        }
        c->drop_privs = true;
    } else {
        pw = getpwuid(geteuid());
        if (!pw) {
            *err = g_strdup_printf("no passwd entry for uid %u", (unsigned)geteuid());
            return -1;
        }
    }
    c->uid = pw->pw_uid;
    c->gid = pw->pw_gid;
    c->db_user = g_strdup(pw->pw_name);
    return 0;
}

emb_cluster *emb_start(const emb_opts *opts, char **err)
{
    emb_cluster *c = g_new0(emb_cluster, 1);
    char *lock_path = NULL;

    c->lock_fd = -1;
    *err = NULL;

    if (!opts->data_dir || !*opts->data_dir) {
        *err = g_strdup("no data directory given");
        goto err;
    }
    if (g_mkdir_with_parents(opts->data_dir, 0755) != 0) {
        *err = g_strdup_printf("cannot create data directory %s: %s", opts->data_dir,
                               g_strerror(errno));
        goto err;
    }
    c->data_dir = realpath(opts->data_dir, NULL);
    if (!c->data_dir) {
        *err = g_strdup_printf("cannot resolve %s: %s", opts->data_dir, g_strerror(errno));
        goto err;
    }
    c->pg_dir = g_build_filename(c->data_dir, "pg", NULL);
    c->sock_dir = g_build_filename(c->pg_dir, "socket", NULL);
    c->log_file = g_build_filename(c->pg_dir, "postgresql.log", NULL);
    /* sun_path holds 108 bytes including "/.s.PGSQL.5432" and the NUL. */
    if (strlen(c->sock_dir) > 90) {
        *err = g_strdup_printf("data directory path too long for a Unix socket: %s (use a "
                               "shorter --data path)",
                               c->data_dir);
        goto err;
    }

    c->bindir = emb_find_bindir(opts->pg_bindir);
    if (!c->bindir) {
        *err = g_strdup("cannot find PostgreSQL's initdb and pg_ctl (install postgresql, or set "
                        "[embedded] pg_bindir)");
        goto err;
    }
    if (emb_pick_user(c, opts, err) != 0)
        goto err;

    lock_path = g_build_filename(c->data_dir, "pgnfs.lock", NULL);
    c->lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (c->lock_fd < 0) {
        *err = g_strdup_printf("cannot open %s: %s", lock_path, g_strerror(errno));
        goto err;
    }
    if (flock(c->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        *err = g_strdup_printf("data directory %s is in use by another pgnfs process", c->data_dir);
        goto err;
    }

    bool fresh = !g_file_test(c->pg_dir, G_FILE_TEST_IS_DIR);
    if (fresh) {
        if (emb_mkdir_owned(c, c->pg_dir, 0700, err) != 0)
            goto err;
        if (emb_check_reachable(c, err) != 0)
            goto err;
        g_message("creating PostgreSQL cluster in %s", c->pg_dir);
        if (emb_initdb(c, opts, err) != 0)
            goto err;
    } else if (emb_check_reachable(c, err) != 0) {
        goto err;
    }

    if (emb_running(c) == 0) {
        g_message("adopting the PostgreSQL cluster already running in %s", c->pg_dir);
    } else if (emb_pg_start(c, err) != 0) {
        goto err;
    }
    if (emb_createdb(c, err) != 0)
        goto err;

    c->conninfo = g_strdup_printf("host=%s port=%s dbname=%s user=%s", c->sock_dir, EMB_PORT,
                                  EMB_DBNAME, c->db_user);
    g_free(lock_path);
    return c;
err:
    g_free(lock_path);
    emb_free(c);
    return NULL;
}

const char *emb_conninfo(const emb_cluster *c)
{
    return c->conninfo;
}

char *emb_conninfo_db(const emb_cluster *c, const char *dbname)
{
    return g_strdup_printf("host=%s port=%s dbname=%s user=%s", c->sock_dir, EMB_PORT, dbname,
                           c->db_user);
}

int emb_stop(emb_cluster *c)
{
    char *pg_ctl = g_build_filename(c->bindir, "pg_ctl", NULL);
    char *argv[] = {pg_ctl, "stop", "-w", "-t", "120", "-m", "fast", "-D", c->pg_dir, NULL};
    char *why = NULL;
    int rc = emb_run(c, argv, &why);

    if (rc != 0) {
        g_warning("stopping the PostgreSQL cluster in %s failed: %s", c->pg_dir, why);
        rc = -1;
    }
    g_free(why);
    g_free(pg_ctl);
    emb_free(c);
    return rc;
}
