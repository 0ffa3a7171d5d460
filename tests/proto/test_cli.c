/*
 * test_cli.c -- the `pgnfs` tool as a new user meets it, through the
 * binary of this build:
 *
 *   - every command's --help (and -h, but for du, where it is
 *     --human-readable), `pgnfs --help` and `pgnfs help CMD`: usage, an
 *     example, exit 0, and nothing else done -- no data directory created
 *     (neither the one given nor the default), so no PostgreSQL started;
 *     bad arguments refused the same way, with the usage status;
 *   - a file system made by `pgnfs mkfs`: its root is mode 1777;
 *   - [storage] settings that contradict an existing file system (its
 *     layout, its root directory) refused by fsck, serve and pgnfsd with
 *     the key, both values and what to do, serve's PostgreSQL stopped
 *     again; the same values pass;
 *   - serve on a cluster that cannot start: why (PostgreSQL's log), what
 *     to do, exit 1, no postmaster left.
 *
 * NOTES
 *   One server (tl_server_start) for pgnfsd to check against; the other
 *   data directories live beside its own and go with it at exit. Commands
 *   that would serve forever if they failed to refuse are run with a
 *   deadline (run_bounded).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "testlib.h"

static tl_server *server;

/*
 * Run prog (a path) with args (NULL-terminated) in directory cwd (NULL:
 * here) and environment envp (NULL: ours); returns its exit status, with
 * stdout and stderr in *out and *err (g_free; either may be NULL). A
 * program that has not ended within 120 s is killed and the test fails:
 * for commands that would serve forever if they failed to refuse.
 */
static int run_bounded(const char *prog, const char *cwd, char **envp, const char *const *args,
                       char **out, char **err)
{
    char *dir = g_dir_make_tmp("pgnfs-admin-run-XXXXXX", NULL);
    char *out_path = g_build_filename(dir, "out", NULL),
         *err_path = g_build_filename(dir, "err", NULL);
    int ofd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int efd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    GPtrArray *argv = g_ptr_array_new();
    GError *gerr = NULL;
    GPid pid;
    int wait = 0;

    g_assert_cmpint(ofd, >=, 0);
    g_assert_cmpint(efd, >=, 0);
    g_ptr_array_add(argv, (char *)prog);
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, (char *)*a);
    g_ptr_array_add(argv, NULL);
    if (!g_spawn_async_with_fds(cwd, (char **)argv->pdata, envp, G_SPAWN_DO_NOT_REAP_CHILD, NULL,
                                NULL, &pid, -1, ofd, efd, &gerr))
        g_error("cannot run %s: %s", prog, gerr->message);
    close(ofd);
    close(efd);
    gint64 deadline = g_get_monotonic_time() + 120 * G_USEC_PER_SEC;
    while (waitpid(pid, &wait, WNOHANG) != pid) {
        if (g_get_monotonic_time() > deadline) {
            kill(pid, SIGTERM);
            waitpid(pid, &wait, 0);
            g_error("%s %s did not end within 120 s", prog, args[0]);
        }
        g_usleep(20 * 1000);
    }
    g_spawn_close_pid(pid);
    char *o = NULL, *e = NULL;
    g_assert_true(g_file_get_contents(out_path, &o, NULL, NULL));
    g_assert_true(g_file_get_contents(err_path, &e, NULL, NULL));
    if (out)
        *out = o;
    else
        g_free(o);
    if (err)
        *err = e;
    else
        g_free(e);
    g_unlink(out_path);
    g_unlink(err_path);
    g_rmdir(dir);
    g_free(out_path);
    g_free(err_path);
    g_free(dir);
    g_ptr_array_free(argv, TRUE);
    return WIFEXITED(wait) ? WEXITSTATUS(wait) : -1;
}

/* Run `pgnfs ARGS...` (bounded); returns stdout (g_free), *status its
 * exit status. */
static char *run_pgnfs(int *status, const char *const *args)
{
    char *out = NULL, *err = NULL;

    *status = run_bounded(PGNFS_BIN, NULL, NULL, args, &out, &err);
    if (*status != 0)
        g_printerr("pgnfs %s exited %d: %s", args[0], *status, err);
    g_free(err);
    return out;
}

/* A directory beside the server's data directory, for commands' own data
 * directories (removed with the server's at exit); g_free. */
static char *scratch_dir(const char *name)
{
    char *parent = g_path_get_dirname(tl_server_data_dir(server));
    char *dir = g_build_filename(parent, name, NULL);

    g_free(parent);
    return dir;
}

/*
 * Every command's --help (and -h, but for du): usage, options and an
 * example on stdout, exit 0, and nothing else done: no data directory
 * created (neither the one given nor the default), so no PostgreSQL
 * started. The same for bad arguments (the usage status) -- checked
 * before anything is started. Help wins over a configuration that does
 * not load.
 */
static void test_help(void)
{
    static const char *const cmds[] = {"serve", "mkfs", "stats", "sql", "du", "find", "fsck"};
    char *tmp = scratch_dir("help");
    char *home = g_build_filename(tmp, "home", NULL);
    char *fresh = g_build_filename(tmp, "fresh", NULL);
    char *xdg_default = g_build_filename(home, "pgnfs", NULL);
    char **envp = g_get_environ();
    bool var_lib_before = g_file_test("/var/lib/pgnfs", G_FILE_TEST_EXISTS);
    char *out, *err;
    int st;

    g_assert_cmpint(g_mkdir_with_parents(home, 0755), ==, 0);
    /* The default data directory of a non-root user goes here. */
    envp = g_environ_setenv(envp, "HOME", home, TRUE);
    envp = g_environ_setenv(envp, "XDG_DATA_HOME", home, TRUE);

    st = run_bounded(PGNFS_BIN, tmp, envp, (const char *[]){"--help", NULL}, &out, NULL);
    g_assert_cmpint(st, ==, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(cmds); i++) {
        char *line = g_strdup_printf("\n  %s ", cmds[i]);
        g_assert_nonnull(strstr(out, line));
        g_free(line);
    }
    g_assert_nonnull(strstr(out, "--data DIR"));
    g_free(out);
    st = run_bounded(PGNFS_BIN, tmp, envp, (const char *[]){"help", "fsck", NULL}, &out, NULL);
    g_assert_cmpint(st, ==, 0);
    g_assert_true(g_str_has_prefix(out, "usage: pgnfs fsck"));
    g_free(out);

    for (size_t i = 0; i < G_N_ELEMENTS(cmds); i++) {
        const char *forms[] = {"--help", "-h"};
        for (size_t f = 0; f < G_N_ELEMENTS(forms); f++) {
            if (strcmp(cmds[i], "du") == 0 && f == 1)
                continue; /* du -h is --human-readable, as for du(1) */
            const char *args[] = {cmds[i], forms[f], "--data", fresh, NULL};
            st = run_bounded(PGNFS_BIN, tmp, envp, args, &out, &err);
            if (st != 0)
                g_error("pgnfs %s %s exited %d: %s", cmds[i], forms[f], st, err);
            char *usage = g_strdup_printf("usage: pgnfs %s", cmds[i]);
            g_assert_true(g_str_has_prefix(out, usage));
            g_assert_nonnull(strstr(out, "example"));
            g_assert_nonnull(strstr(out, "options of every command"));
            g_assert_cmpstr(err, ==, "");
            g_free(usage);
            g_free(out);
            g_free(err);
        }
        /* Without --data, the default: not created either. */
        st = run_bounded(PGNFS_BIN, tmp, envp, (const char *[]){cmds[i], "--help", NULL}, NULL,
                         NULL);
        g_assert_cmpint(st, ==, 0);
        /* Help whatever the rest says. */
        st = run_bounded(PGNFS_BIN, tmp, envp,
                         (const char *[]){cmds[i], "--config", "/nonexistent.conf", "--help", NULL},
                         NULL, NULL);
        g_assert_cmpint(st, ==, 0);
    }

    /* Bad arguments: refused before anything starts. */
    static const struct {
        const char *args[4];
        int status;
    } bad[] = {
        {{"serve", "--bogus", NULL}, 2},
        {{"serve", "extra", NULL}, 2},
        {{"mkfs", "--frce", NULL}, 2},
        {{"du", "-x", NULL}, 2},
        {{"du", "-sx", NULL}, 2},
        {{"du", "-d", NULL}, 2},
        {{"find", "-size", "x", NULL}, 2},
        {{"find", "-bogus", "1", NULL}, 2},
        {{"fsck", "--fix", NULL}, 16},
        {{"stats", "--interval", NULL}, 2},
        {{"serve", "--port", "x", NULL}, 2},
        {{"fsck", "--set", "nope", NULL}, 16},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *args[8] = {NULL};
        size_t n = 0;
        for (; bad[i].args[n]; n++)
            args[n] = bad[i].args[n];
        args[n++] = "--data";
        args[n++] = fresh;
        st = run_bounded(PGNFS_BIN, tmp, envp, args, NULL, &err);
        if (st != bad[i].status)
            g_error("pgnfs %s %s exited %d, not %d: %s", args[0], args[1], st, bad[i].status, err);
        g_assert_nonnull(strstr(err, "--help"));
        g_free(err);
    }
    g_assert_false(g_file_test(fresh, G_FILE_TEST_EXISTS));
    g_assert_false(g_file_test(xdg_default, G_FILE_TEST_EXISTS));
    if (!var_lib_before)
        g_assert_false(g_file_test("/var/lib/pgnfs", G_FILE_TEST_EXISTS));
    char *cwd_default = g_build_filename(tmp, "pgnfs-data", NULL);
    g_assert_false(g_file_test(cwd_default, G_FILE_TEST_EXISTS));
    g_free(cwd_default);
    g_strfreev(envp);
    g_free(xdg_default);
    g_free(fresh);
    g_free(home);
    g_free(tmp);
}

/*
 * A file system made by `pgnfs mkfs` in a data directory of its own: its
 * root is mode 1777 (shown by find -ls as drwxrwxrwt). Settings of the
 * root and of the layout that the file system does not have are refused
 * -- by fsck, by serve (before it serves; its PostgreSQL stopped again)
 * and by pgnfsd -- with the key, both values and what to do; the same
 * values pass. Then the cluster cannot start (a setting PostgreSQL does
 * not know): serve says why, from PostgreSQL's log, and what to do, exits
 * 1, and leaves no postmaster.
 */
static void test_refused_keys(void)
{
    char *dir = scratch_dir("own");
    char *pidfile = g_build_filename(dir, "pg", "postmaster.pid", NULL);
    char *out, *err;
    int st;

    st = run_bounded(PGNFS_BIN, NULL, NULL, (const char *[]){"mkfs", "--data", dir, NULL}, &out,
                     &err);
    if (st != 0)
        g_error("pgnfs mkfs exited %d: %s", st, err);
    g_free(out);
    g_free(err);
    g_assert_false(g_file_test(pidfile, G_FILE_TEST_EXISTS));
    out =
        run_pgnfs(&st, (const char *[]){"find", "--data", dir, "/", "-maxdepth", "0", "-ls", NULL});
    g_assert_cmpint(st, ==, 0);
    g_assert_nonnull(strstr(out, " drwxrwxrwt "));
    g_free(out);

    /* What the file system has passes, whoever sets it. */
    out = run_pgnfs(&st, (const char *[]){"fsck", "--data", dir, "--set", "storage.root_mode=1777",
                                          "--set", "storage.chunk_size=65536", "-q", NULL});
    g_assert_cmpint(st, ==, 0);
    g_free(out);
    static const struct {
        const char *set, *says[3];
    } cases[] = {
        {"storage.root_mode=0755",
         {"[storage] root_mode is 0755 in the configuration", "root directory has mode 1777",
          "drop the setting"}},
        {"storage.root_uid=1000",
         {"[storage] root_uid is 1000 in the configuration", "has owner 0", "no_root_squash"}},
        {"storage.chunk_size=4096",
         {"[storage] chunk_size is 4096 in the configuration", "created with chunk_size 65536",
          "pgnfs mkfs --force"}},
        {"storage.schema=hybrid",
         {"[storage] schema is 'hybrid'", "created with schema 'single'",
          "the setting comes from the command line"}},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *fsck[] = {"fsck", "--data", dir, "--set", cases[i].set, NULL};
        const char *serve[] = {"serve",
                               "--data",
                               dir,
                               "--port",
                               "0",
                               "--listen",
                               "127.0.0.1",
                               "--set",
                               "server.portmap=off",
                               "--set",
                               "server.rpcbind=false",
                               "--set",
                               cases[i].set,
                               NULL};
        st = run_bounded(PGNFS_BIN, NULL, NULL, fsck, NULL, &err);
        g_assert_cmpint(st, ==, 16);
        for (size_t k = 0; k < G_N_ELEMENTS(cases[i].says); k++)
            if (!strstr(err, cases[i].says[k]))
                g_error("fsck --set %s said '%s', without '%s'", cases[i].set, err,
                        cases[i].says[k]);
        g_free(err);
        st = run_bounded(PGNFS_BIN, NULL, NULL, serve, NULL, &err);
        g_assert_cmpint(st, ==, 2);
        g_assert_nonnull(strstr(err, cases[i].says[0]));
        g_assert_false(g_file_test(pidfile, G_FILE_TEST_EXISTS));
        g_free(err);
    }
    /* pgnfsd refuses as pgnfs serve does (the test server's root is 0777). */
    char *bindir = g_path_get_dirname(PGNFS_BIN);
    char *pgnfsd = g_build_filename(bindir, "pgnfsd", NULL);
    g_free(bindir);
    st = run_bounded(pgnfsd, NULL, NULL,
                     (const char *[]){"--conninfo", tl_server_conninfo(server), "--port", "0",
                                      "--listen", "127.0.0.1", "--set", "server.portmap=off",
                                      "--set", "server.rpcbind=false", "--set",
                                      "storage.root_mode=0700", NULL},
                     NULL, &err);
    g_assert_cmpint(st, ==, 2);
    g_assert_nonnull(strstr(err, "[storage] root_mode is 0700 in the configuration, but the file "
                                 "system already exists and its root directory has mode 0777"));
    g_free(err);

    /* A cluster that cannot start. */
    char *conf = g_build_filename(dir, "pg", "postgresql.conf", NULL);
    struct stat cst;
    g_assert_cmpint(stat(conf, &cst), ==, 0);
    FILE *f = fopen(conf, "a");
    g_assert_nonnull(f);
    fputs("\nno_such_setting_of_pgnfs = 1\n", f);
    g_assert_cmpint(fclose(f), ==, 0);
    st = run_bounded(PGNFS_BIN, NULL, NULL,
                     (const char *[]){"serve", "--data", dir, "--port", "0", "--listen",
                                      "127.0.0.1", "--set", "server.portmap=off", "--set",
                                      "server.rpcbind=false", NULL},
                     NULL, &err);
    g_assert_cmpint(st, ==, 1);
    g_assert_nonnull(strstr(err, "cannot start the embedded PostgreSQL"));
    g_assert_nonnull(strstr(err, "postgresql.log:\n"));
    g_assert_nonnull(
        strstr(err, "unrecognized configuration parameter \"no_such_setting_of_pgnfs\""));
    g_assert_nonnull(strstr(err, "what to do: correct the setting the log names"));
    g_assert_false(g_file_test(pidfile, G_FILE_TEST_EXISTS));
    g_free(err);
    g_assert_cmpint(truncate(conf, cst.st_size), ==, 0);
    out = run_pgnfs(&st, (const char *[]){"fsck", "--data", dir, "-q", NULL});
    g_assert_cmpint(st, ==, 0);
    g_free(out);
    g_assert_false(g_file_test(pidfile, G_FILE_TEST_EXISTS));
    g_free(conf);
    g_free(pgnfsd);
    g_free(pidfile);
    g_free(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    server = tl_server_start(NULL);
    g_test_add_func("/cli/help", test_help);
    g_test_add_func("/cli/refused_keys", test_refused_keys);
    int rc = g_test_run();
    tl_server_stop(server);
    return rc;
}
