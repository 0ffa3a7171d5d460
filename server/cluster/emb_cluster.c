/*
 * emb_cluster.c -- the embedded private PostgreSQL cluster's life (see
 * emb.h): created, started or adopted by emb_start, stopped by emb_stop.
 *
 * States of a cluster directory, and the function that moves between them:
 *
 *     (absent) --emb_start: initdb, createdb--> (stopped)
 *     (stopped) --emb_start: pg_ctl start--> (running, ours)
 *     (running, left over by a crashed pgnfs) --emb_start: adopt--> (running, ours)
 *     (running, ours) --emb_stop: pg_ctl stop -m fast--> (stopped)
 *     (running, ours) --postmaster dies--> emb_watch.c brings it back
 *
 * A lock file (DATA_DIR/pgnfs.lock, flock) held from emb_start to emb_stop
 * keeps two pgnfs processes from driving one cluster. emb_start undoes
 * what it did when a later step fails: a postmaster it started is stopped
 * again before it returns NULL.
 *
 * NOTES
 *   emb_start runs before the server's threads exist. The emb_cluster owns
 *   every string it holds; emb_stop frees it.
 */
#include "emb_int.h"

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
    g_free(c->groups);
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
    /* The supplementary groups, now: a child forked later (from a thread,
     * by the supervisor) must not look them up itself (emb_tools.c). */
    if (c->drop_privs) {
        int n = 16;
        c->groups = g_new(gid_t, n);
        while (getgrouplist(c->db_user, c->gid, c->groups, &n) < 0)
            c->groups = g_renew(gid_t, c->groups, n);
        c->ngroups = n;
    }
    return 0;
}

/* emb_start -- see emb.h. */
emb_cluster *emb_start(const emb_opts *opts, char **err)
{
    emb_cluster *c = g_new0(emb_cluster, 1);
    char *lock_path = NULL;
    bool started = false; /* a postmaster runs that emb_stop would stop */

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

    c->shared_buffers_mb = opts->shared_buffers_mb;
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

    if (emb_pg_status(c)) {
        g_message("adopting the PostgreSQL cluster already running in %s", c->pg_dir);
    } else if (emb_pg_start(c, false, err) != 0) {
        goto err;
    }
    started = true;
    if (emb_createdb(c, err) != 0)
        goto err;

    c->conninfo = g_strdup_printf("host=%s port=%s dbname=%s user=%s", c->sock_dir, EMB_PORT,
                                  EMB_DBNAME, c->db_user);
    g_free(lock_path);
    return c;
err:
    if (started) {
        char *why = NULL;
        if (emb_pg_stop(c, &why) != 0) {
            g_warning("stopping the PostgreSQL cluster in %s failed: %s", c->pg_dir, why);
            g_free(why);
        }
    }
    g_free(lock_path);
    emb_free(c);
    return NULL;
}

/* emb_conninfo -- see emb.h. */
const char *emb_conninfo(const emb_cluster *c)
{
    return c->conninfo;
}

/* emb_conninfo_db -- see emb.h. */
char *emb_conninfo_db(const emb_cluster *c, const char *dbname)
{
    return g_strdup_printf("host=%s port=%s dbname=%s user=%s", c->sock_dir, EMB_PORT, dbname,
                           c->db_user);
}

/* emb_stop -- see emb.h. */
int emb_stop(emb_cluster *c)
{
    pid_t pid;
    bool ready;
    char *why = NULL;
    int rc = 0;

    /* A cluster that is down already (the supervisor could not bring it
     * back) has nothing to stop. */
    if (emb_pm_read(c, &pid, &ready) && emb_pg_stop(c, &why) != 0) {
        g_warning("stopping the PostgreSQL cluster in %s failed: %s", c->pg_dir, why);
        rc = -1;
    }
    g_free(why);
    emb_free(c);
    return rc;
}
