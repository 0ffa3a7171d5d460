/*
 * test_cfg.c -- configuration (cfg.c): defaults, the file, environment and
 * command line and their precedence, every error path (the message must
 * name where the value came from and the key), and export lines with every
 * client form and option.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "cfg.h"
#include "emb.h"

/* Environment variables cfg reads; cleared before every test. */
static const char *const env_names[] = {
    "PGNFS_DATABASE_CONNINFO", "PGNFS_EMBEDDED_DATA_DIR",      "PGNFS_EMBEDDED_PG_BINDIR",
    "PGNFS_EMBEDDED_PG_USER",  "PGNFS_EMBEDDED_RESTART",       "PGNFS_SERVER_LISTEN",
    "PGNFS_SERVER_PORT",       "PGNFS_SERVER_THREADS",         "PGNFS_SERVER_UDP",
    "PGNFS_SERVER_RPCBIND",    "PGNFS_SERVER_MAX_CONNECTIONS", "PGNFS_SERVER_DRC_ENTRIES",
    "PGNFS_LOG_LEVEL",         "PGNFS_STORAGE_SCHEMA",         "PGNFS_STORAGE_CHUNK_SIZE",
    "PGNFS_STORAGE_ENCODING",  "PGNFS_STORAGE_RELATIME",       "PGNFS_STORAGE_ROOT_MODE",
    "PGNFS_CACHE_STAT",        "PGNFS_CACHE_STAT_SIZE",        "PGNFS_CACHE_NAMING",
    "PGNFS_CACHE_NAMING_SIZE", "PGNFS_CACHE_BUFFER",           "PGNFS_CACHE_BUFFER_SIZE",
    "PGNFS_EXPORTS",
};

static void clear_env(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(env_names); i++)
        g_unsetenv(env_names[i]);
}

/* A temporary file with text; returns its path (g_free; caller unlinks). */
static char *write_file(const char *text)
{
    GError *err = NULL;
    char *path = NULL;
    int fd = g_file_open_tmp("pgnfs-cfg-XXXXXX.conf", &path, &err);

    g_assert_no_error(err);
    close(fd);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

/* Load with a file (may be NULL) and overrides; must fail with a message
 * containing every one of the NULL-terminated needles. */
static void expect_error(const char *file_text, const char *const *overrides, ...)
{
    char *path = file_text ? write_file(file_text) : NULL;
    char *err = NULL;
    cfg *c = cfg_load(path, overrides, &err);
    va_list ap;

    g_assert_null(c);
    g_assert_nonnull(err);
    va_start(ap, overrides);
    for (const char *needle = va_arg(ap, const char *); needle; needle = va_arg(ap, const char *))
        if (!strstr(err, needle))
            g_error("error message '%s' does not contain '%s'", err, needle);
    va_end(ap);
    if (path && !strstr(err, path) && !strstr(err, "command line") && !strstr(err, "environment"))
        g_error("error message '%s' does not name the file %s", err, path);
    free(err);
    if (path) {
        g_unlink(path);
        g_free(path);
    }
}

static cfg *load_ok(const char *file_text, const char *const *overrides)
{
    char *path = file_text ? write_file(file_text) : NULL;
    char *err = NULL;
    cfg *c = cfg_load(path, overrides, &err);

    if (!c)
        g_error("cfg_load failed: %s", err);
    g_assert_null(err);
    if (path) {
        g_unlink(path);
        g_free(path);
    }
    return c;
}

static const cfg_export *find_export(const cfg *c, const char *path)
{
    for (unsigned i = 0; i < c->nexports; i++)
        if (strcmp(c->exports[i].path, path) == 0)
            return &c->exports[i];
    return NULL;
}

static void test_defaults(void)
{
    cfg *c;

    clear_env();
    c = load_ok(NULL, NULL);
    g_assert_cmpstr(c->conninfo, ==, "");
    /* The per-user default (test_data_dir_default checks the rule). */
    char *dd = cfg_default_data_dir();
    g_assert_cmpstr(c->data_dir, ==, dd);
    g_assert_true(g_path_is_absolute(c->data_dir));
    g_free(dd);
    g_assert_cmpstr(c->pg_bindir, ==, "");
    g_assert_cmpstr(c->pg_user, ==, "postgres");
    g_assert_true(c->pg_restart);
    g_assert_cmpstr(c->listen, ==, "0.0.0.0");
    g_assert_cmpuint(c->port, ==, 2049);
    g_assert_cmpuint(c->threads, ==, 16);
    g_assert_true(c->udp);
    g_assert_true(c->rpcbind);
    g_assert_cmpuint(c->max_connections, ==, 1024);
    g_assert_cmpuint(c->drc_entries, ==, 4096);
    g_assert_cmpstr(c->log_level, ==, "info");
    g_assert_cmpstr(c->storage, ==, "single");
    g_assert_cmpuint(c->chunk_size, ==, 65536);
    g_assert_cmpstr(c->encoding, ==, "binary");
    g_assert_true(c->relatime);
    /* Every cache on. */
    g_assert_true(c->stat_cache);
    g_assert_cmpuint(c->stat_size, ==, 65536);
    g_assert_true(c->name_cache);
    g_assert_cmpuint(c->naming_size, ==, 65536);
    g_assert_true(c->buffer_cache);
    g_assert_cmpuint(c->buffer_size, ==, 0); /* auto: from the memory */
    g_assert_cmpuint(c->small_file_size, ==, 65536);
    g_assert_cmpuint(c->small_files, ==, 0);

    /* The default export: local clients only, read-write, root squashed. */
    g_assert_cmpuint(c->nexports, ==, 1);
    const cfg_export *e = &c->exports[0];
    g_assert_cmpstr(e->path, ==, "/");
    g_assert_cmpuint(e->nclients, ==, 2);
    g_assert_cmpint(e->clients[0].kind, ==, CFG_CLIENT_NET);
    g_assert_cmpint(e->clients[0].family, ==, AF_INET);
    g_assert_cmpuint(e->clients[0].prefix, ==, 32);
    g_assert_cmpmem(e->clients[0].addr, 4, "\x7f\0\0\x01", 4);
    g_assert_true(e->clients[0].rw);
    g_assert_true(e->clients[0].root_squash);
    g_assert_cmpint(e->clients[1].family, ==, AF_INET6);
    g_assert_cmpuint(e->clients[1].prefix, ==, 128);
    g_assert_true(e->clients[1].rw);
    cfg_free(c);
}

static void test_file(void)
{
    clear_env();
    cfg *c = load_ok("# a comment\n"
                     "[database]\nconninfo = host=db dbname=fs user=x\n"
                     "[embedded]\ndata_dir = /var/lib/pgnfs\npg_bindir=/usr/lib/postgresql/15/bin\n"
                     "pg_user = pgnfs\n"
                     "[server]\nlisten = ::\nport = 0\nthreads = 256\nudp = no\nrpcbind = off\n"
                     "max_connections = 10\ndrc_entries = 0\n"
                     "[log]\nlevel = debug\n"
                     "[storage]\nschema = hybrid\nchunk_size = 65536\nencoding = base64\n"
                     "relatime = false\n"
                     "[exports]\n/ = 127.0.0.1(rw,no_root_squash) 10.0.0.0/8(ro) *(ro)\n"
                     "/home/a b = host.example.com(rw)\n",
                     NULL);
    g_assert_cmpstr(c->conninfo, ==, "host=db dbname=fs user=x");
    g_assert_cmpstr(c->data_dir, ==, "/var/lib/pgnfs");
    g_assert_cmpstr(c->pg_bindir, ==, "/usr/lib/postgresql/15/bin");
    g_assert_cmpstr(c->pg_user, ==, "pgnfs");
    g_assert_cmpstr(c->listen, ==, "::");
    g_assert_cmpuint(c->port, ==, 0);
    g_assert_cmpuint(c->threads, ==, 256);
    g_assert_false(c->udp);
    g_assert_false(c->rpcbind);
    g_assert_cmpuint(c->max_connections, ==, 10);
    g_assert_cmpuint(c->drc_entries, ==, 0);
    g_assert_cmpstr(c->log_level, ==, "debug");
    g_assert_cmpstr(c->storage, ==, "hybrid");
    g_assert_cmpuint(c->chunk_size, ==, 65536);
    g_assert_cmpstr(c->encoding, ==, "base64");
    g_assert_false(c->relatime);
    g_assert_cmpuint(c->nexports, ==, 2);
    /* sorted by path */
    g_assert_cmpstr(c->exports[0].path, ==, "/");
    g_assert_cmpstr(c->exports[1].path, ==, "/home/a b");
    g_assert_cmpuint(c->exports[0].nclients, ==, 3);
    g_assert_false(c->exports[0].clients[0].root_squash);
    g_assert_true(c->exports[0].clients[0].rw);
    g_assert_false(c->exports[0].clients[1].rw);
    g_assert_cmpint(c->exports[0].clients[2].kind, ==, CFG_CLIENT_ANY);
    g_assert_cmpint(c->exports[1].clients[0].kind, ==, CFG_CLIENT_HOST);
    g_assert_cmpstr(c->exports[1].clients[0].host, ==, "host.example.com");
    cfg_free(c);
}

static void test_precedence(void)
{
    const char *file = "[server]\nport = 1000\nthreads = 3\n[log]\nlevel = warning\n"
                       "[exports]\n/ = *(ro)\n/a = *(ro)\n";
    const char *const over[] = {"server.port=3000", "exports./=10.0.0.0/8(rw)", NULL};
    cfg *c;

    clear_env();
    c = load_ok(file, NULL);
    g_assert_cmpuint(c->port, ==, 1000);
    g_assert_cmpuint(c->threads, ==, 3);
    cfg_free(c);

    g_setenv("PGNFS_SERVER_PORT", "2000", TRUE);
    g_setenv("PGNFS_LOG_LEVEL", "error", TRUE);
    g_setenv("PGNFS_EXPORTS", "/b 10.1.0.0/16(rw) ; /a 192.168.0.0/16(rw);", TRUE);
    c = load_ok(file, NULL);
    g_assert_cmpuint(c->port, ==, 2000); /* env over file */
    g_assert_cmpuint(c->threads, ==, 3); /* file over default */
    g_assert_cmpstr(c->log_level, ==, "error");
    g_assert_cmpuint(c->nexports, ==, 3); /* /, /a (replaced by env), /b */
    const cfg_export *a = find_export(c, "/a");
    g_assert_nonnull(a);
    g_assert_cmpuint(a->nclients, ==, 1);
    g_assert_cmpint(a->clients[0].kind, ==, CFG_CLIENT_NET);
    g_assert_true(a->clients[0].rw);
    g_assert_nonnull(find_export(c, "/b"));
    cfg_free(c);

    c = load_ok(file, over);
    g_assert_cmpuint(c->port, ==, 3000); /* command line over env */
    g_assert_cmpstr(c->log_level, ==, "error");
    const cfg_export *root = find_export(c, "/");
    g_assert_cmpuint(root->nclients, ==, 1);
    g_assert_true(root->clients[0].rw);
    g_assert_cmpuint(root->clients[0].prefix, ==, 8);
    cfg_free(c);

    /* The last of several command-line values wins. */
    const char *const twice[] = {"server.threads=5", "server.threads=6", NULL};
    c = load_ok(NULL, twice);
    g_assert_cmpuint(c->threads, ==, 6);
    cfg_free(c);
    clear_env();
}

static void test_errors_file(void)
{
    clear_env();
    expect_error("[srever]\nport = 1\n", NULL, "[srever]", "server", NULL);
    expect_error("[server]\nprot = 1\n", NULL, "prot", "[server]", "port", NULL);
    expect_error("[server]\nport = 70000\n", NULL, "[server] port", "70000", "0 to 65535", NULL);
    expect_error("[server]\nport = -1\n", NULL, "port", "-1", NULL);
    expect_error("[server]\nport = 12ab\n", NULL, "port", "12ab", NULL);
    expect_error("[server]\nthreads = 0\n", NULL, "threads", "1 to 256", NULL);
    expect_error("[server]\nthreads = 257\n", NULL, "threads", "257", NULL);
    expect_error("[server]\nmax_connections = 0\n", NULL, "max_connections", NULL);
    expect_error("[server]\ndrc_entries = 99999999\n", NULL, "drc_entries", NULL);
    expect_error("[server]\nudp = maybe\n", NULL, "udp", "maybe", "true or false", NULL);
    expect_error("[server]\nlisten = localhost\n", NULL, "listen", "localhost", "IPv4 or IPv6",
                 NULL);
    expect_error("[storage]\nchunk_size = 3000\n", NULL, "chunk_size", "power of two", NULL);
    expect_error("[storage]\nchunk_size = 512\n", NULL, "chunk_size", "1024", NULL);
    expect_error("[storage]\nchunk_size = 2097152\n", NULL, "chunk_size", "1048576", NULL);
    expect_error("[storage]\nschema = raid\n", NULL, "schema", "raid", "single, inversion, hybrid",
                 NULL);
    expect_error("[storage]\nencoding = hex\n", NULL, "encoding", "binary, base64", NULL);
    expect_error("[log]\nlevel = verbose\n", NULL, "level", "error, warning, info, debug", NULL);
    expect_error("[embedded]\nrestart = maybe\n", NULL, "restart", "boolean", NULL);
    expect_error("this is not a key file\n", NULL, "cannot load", NULL);
    expect_error("[exports]\nrelative = *(rw)\n", NULL, "[exports] relative", "absolute", NULL);
    expect_error("[exports]\n/ = *(rw,wdelay)\n", NULL, "[exports] /", "wdelay", "no_root_squash",
                 "async", NULL);

    /* A file that does not exist. */
    char *err = NULL;
    g_assert_null(cfg_load("/nonexistent/pgnfs.conf", NULL, &err));
    g_assert_nonnull(strstr(err, "/nonexistent/pgnfs.conf"));
    free(err);
}

static void test_errors_env_cmdline(void)
{
    clear_env();
    g_setenv("PGNFS_SERVER_THREADS", "lots", TRUE);
    expect_error(NULL, NULL, "PGNFS_SERVER_THREADS", "lots", NULL);
    clear_env();
    g_setenv("PGNFS_EXPORTS", "/x", TRUE);
    expect_error(NULL, NULL, "PGNFS_EXPORTS", "/x", NULL);
    g_setenv("PGNFS_EXPORTS", "/x 10.0.0.0/40(rw)", TRUE);
    expect_error(NULL, NULL, "PGNFS_EXPORTS", "/x", "10.0.0.0/40", NULL);
    clear_env();

    const char *const a[] = {"server.threads=0", NULL};
    expect_error(NULL, a, "command line server.threads", "1 to 256", NULL);
    const char *const b[] = {"serverport=1", NULL};
    expect_error(NULL, b, "serverport=1", "GROUP.KEY=VALUE", NULL);
    const char *const c[] = {"server.port", NULL};
    expect_error(NULL, c, "server.port", "GROUP.KEY=VALUE", NULL);
    const char *const d[] = {"nope.port=1", NULL};
    expect_error(NULL, d, "nope", "groups are", NULL);
    const char *const e[] = {"server.nope=1", NULL};
    expect_error(NULL, e, "nope", "[server]", "listen", NULL);
    const char *const f[] = {"exports./x=", NULL};
    expect_error(NULL, f, "exports./x", "no clients", NULL);
    const char *const g[] = {"log.level=loud", NULL};
    expect_error(NULL, g, "log.level", "loud", NULL);
}

/* [cache]: every key from each layer, the precedence, the bounds, and
 * what dbfs is given (cfg_dbfs_config). */
/* [storage] root_mode is octal; root_uid/root_gid are plain numbers. */
static void test_root(void)
{
    const char *const ok[] = {"storage.root_mode=1777", "storage.root_uid=1000", NULL};
    const char *const bad8[] = {"storage.root_mode=0999", NULL};
    const char *const big[] = {"storage.root_mode=17777", NULL};
    const char *const neg[] = {"storage.root_mode=-1", NULL};
    cfg *c;

    clear_env();
    /* Like /tmp, so that root-squashed clients can write at once. */
    c = load_ok(NULL, NULL);
    g_assert_cmpuint(c->root_mode, ==, 01777);
    g_assert_cmpuint(c->root_uid, ==, 0);
    cfg_free(c);
    c = load_ok("[storage]\nroot_mode = 0700\nroot_gid = 50\n", ok);
    g_assert_cmpuint(c->root_mode, ==, 01777);
    g_assert_cmpuint(c->root_uid, ==, 1000);
    g_assert_cmpuint(c->root_gid, ==, 50);
    cfg_free(c);
    expect_error(NULL, bad8, "root_mode", "octal", NULL);
    expect_error(NULL, big, "root_mode", NULL);
    expect_error(NULL, neg, "root_mode", NULL);
}

/* The non-root rule of cfg_default_data_dir, for this (non-root) user:
 * $XDG_DATA_HOME/pgnfs, else ~/.local/share/pgnfs. tmp is a directory
 * to use as both. Changes XDG_DATA_HOME and HOME. */
static void check_user_default(const char *tmp)
{
    char *want, *dd;

    g_setenv("XDG_DATA_HOME", tmp, TRUE);
    dd = cfg_default_data_dir();
    want = g_build_filename(tmp, "pgnfs", NULL);
    g_assert_cmpstr(dd, ==, want);
    g_free(want);
    g_free(dd);
    /* A relative XDG_DATA_HOME is ignored, as is an unset one. */
    g_setenv("XDG_DATA_HOME", "relative/dir", TRUE);
    g_setenv("HOME", tmp, TRUE);
    want = g_build_filename(tmp, ".local", "share", "pgnfs", NULL);
    dd = cfg_default_data_dir();
    g_assert_cmpstr(dd, ==, want);
    g_free(dd);
    g_unsetenv("XDG_DATA_HOME");
    dd = cfg_default_data_dir();
    g_assert_cmpstr(dd, ==, want);
    g_free(dd);
    g_free(want);
}

/* [embedded] data_dir: one directory per user whatever the working
 * directory, /var/lib/pgnfs for root; an empty value means the default;
 * --data and the other layers still choose. As root, the rule for other
 * users is checked in a child process that becomes user 65534. */
static void test_data_dir_default(void)
{
    char *tmp = g_dir_make_tmp("pgnfs-cfg-XXXXXX", NULL);
    char *saved_xdg = g_strdup(g_getenv("XDG_DATA_HOME"));
    char *saved_home = g_strdup(g_getenv("HOME"));
    char *dd;
    cfg *c;

    clear_env();
    g_assert_nonnull(tmp);
    if (geteuid() == 0) {
        dd = cfg_default_data_dir();
        g_assert_cmpstr(dd, ==, "/var/lib/pgnfs");
        g_free(dd);
        g_assert_cmpint(chmod(tmp, 0777), ==, 0);
        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
            if (setgid(65534) != 0 || setuid(65534) != 0)
                _exit(3);
            check_user_default(tmp);
            _exit(0);
        }
        int status = 0;
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    } else {
        check_user_default(tmp);
    }
    if (saved_xdg)
        g_setenv("XDG_DATA_HOME", saved_xdg, TRUE);
    else
        g_unsetenv("XDG_DATA_HOME");
    if (saved_home)
        g_setenv("HOME", saved_home, TRUE);

    /* The default does not depend on the working directory. */
    dd = cfg_default_data_dir();
    char *cwd = g_get_current_dir();
    g_assert_cmpint(chdir(tmp), ==, 0);
    char *again = cfg_default_data_dir();
    g_assert_cmpstr(again, ==, dd);
    g_free(again);
    g_assert_cmpint(chdir(cwd), ==, 0);
    g_free(cwd);

    /* Empty in the file means the default; a value wins. */
    c = load_ok("[embedded]\ndata_dir =\n", NULL);
    g_assert_cmpstr(c->data_dir, ==, dd);
    cfg_free(c);
    const char *const data[] = {"embedded.data_dir=/srv/x", NULL};
    c = load_ok("[embedded]\ndata_dir = /srv/y\n", data);
    g_assert_cmpstr(c->data_dir, ==, "/srv/x");
    cfg_free(c);

    g_free(saved_xdg);
    g_free(saved_home);
    g_free(dd);
    g_rmdir(tmp);
    g_free(tmp);
}

static void test_cache(void)
{
    const char *file = "[cache]\nstat = no\nstat_size = 10\nnaming = off\nnaming_size = 1\n"
                       "buffer = 0\nbuffer_size = 65536\n";
    dbfs_config dc;
    cfg *c;

    clear_env();
    c = load_ok(file, NULL);
    g_assert_false(c->stat_cache);
    g_assert_cmpuint(c->stat_size, ==, 10);
    g_assert_false(c->name_cache);
    g_assert_cmpuint(c->naming_size, ==, 1);
    g_assert_false(c->buffer_cache);
    g_assert_cmpuint(c->buffer_size, ==, 65536);
    /* Off is a bound of 0, whatever the size says. */
    cfg_dbfs_config(c, "dbname=x", &dc);
    g_assert_cmpuint(dc.stat_cache_entries, ==, 0);
    g_assert_cmpuint(dc.name_cache_entries, ==, 0);
    g_assert_cmpuint(dc.buffer_cache_bytes, ==, 0);
    cfg_free(c);

    /* The environment over the file. */
    g_setenv("PGNFS_CACHE_STAT", "yes", TRUE);
    g_setenv("PGNFS_CACHE_STAT_SIZE", "16777216", TRUE);
    g_setenv("PGNFS_CACHE_NAMING", "true", TRUE);
    g_setenv("PGNFS_CACHE_NAMING_SIZE", "300", TRUE);
    g_setenv("PGNFS_CACHE_BUFFER", "on", TRUE);
    g_setenv("PGNFS_CACHE_BUFFER_SIZE", "1048576", TRUE);
    c = load_ok(file, NULL);
    g_assert_true(c->stat_cache);
    g_assert_cmpuint(c->stat_size, ==, 16777216);
    g_assert_true(c->name_cache);
    g_assert_cmpuint(c->naming_size, ==, 300);
    g_assert_true(c->buffer_cache);
    g_assert_cmpuint(c->buffer_size, ==, 1048576);
    cfg_dbfs_config(c, "dbname=x", &dc);
    g_assert_cmpuint(dc.stat_cache_entries, ==, 16777216);
    g_assert_cmpuint(dc.name_cache_entries, ==, 300);
    g_assert_cmpuint(dc.buffer_cache_bytes, ==, 1048576);
    cfg_free(c);

    /* The command line over the environment, one cache at a time. */
    const char *const over[] = {"cache.stat=false", "cache.naming_size=7", NULL};
    c = load_ok(file, over);
    g_assert_false(c->stat_cache);
    g_assert_true(c->name_cache);
    g_assert_cmpuint(c->naming_size, ==, 7);
    cfg_dbfs_config(c, "dbname=x", &dc);
    g_assert_cmpuint(dc.stat_cache_entries, ==, 0);
    g_assert_cmpuint(dc.name_cache_entries, ==, 7);
    g_assert_cmpuint(dc.buffer_cache_bytes, ==, 1048576);
    cfg_free(c);
    clear_env();

    /* Bounds and values that do not parse name the key. */
    expect_error("[cache]\nstat_size = 0\n", NULL, "[cache] stat_size", "1 to 16777216", NULL);
    expect_error("[cache]\nnaming_size = 16777217\n", NULL, "[cache] naming_size", "16777217",
                 NULL);
    expect_error("[cache]\nnaming = sometimes\n", NULL, "[cache] naming", "true or false", NULL);
    expect_error("[cache]\nnames = true\n", NULL, "names", "[cache]", "naming", "stat_size", NULL);
    g_setenv("PGNFS_CACHE_STAT", "maybe", TRUE);
    expect_error(NULL, NULL, "PGNFS_CACHE_STAT", "maybe", NULL);
    clear_env();
    const char *const bad[] = {"cache.stat_size=lots", NULL};
    expect_error(NULL, bad, "command line cache.stat_size", "lots", NULL);
}

/* cfg_dbfs_config: the rest of what dbfs is given. */
static void test_dbfs_config(void)
{
    const char *const remote[] = {"database.conninfo=host=db", "storage.relatime=false", NULL};
    dbfs_config dc;
    cfg *c;

    clear_env();
    /* The embedded cluster: space figures from its directory (not there
     * yet: no guard). */
    c = load_ok("[embedded]\ndata_dir = /srv/pgnfs\n", NULL);
    cfg_dbfs_config(c, "host=/srv/pgnfs/pg/socket", &dc);
    g_assert_cmpstr(dc.conninfo, ==, "host=/srv/pgnfs/pg/socket");
    g_assert_cmpstr(dc.space_path, ==, "/srv/pgnfs");
    g_assert_cmpuint(dc.space_reserve, ==, 0);
    g_assert_true(dc.relatime);
    g_assert_cmpuint(dc.stat_cache_entries, ==, 65536);
    g_assert_cmpuint(dc.name_cache_entries, ==, 65536);
    g_assert_cmpuint(dc.buffer_cache_bytes, ==, cfg_buffer_auto(cfg_mem_total()));
    g_assert_cmpuint(dc.small_file_bytes, ==, 65536);
    g_assert_cmpuint(dc.small_cache_bytes, ==, cfg_small_auto(cfg_mem_total()));
    cfg_free(c);

    /* A database of its own: no local directory to measure. */
    c = load_ok(NULL, remote);
    cfg_dbfs_config(c, c->conninfo, &dc);
    g_assert_cmpstr(dc.conninfo, ==, "host=db");
    g_assert_null(dc.space_path);
    g_assert_cmpuint(dc.space_reserve, ==, 0);
    g_assert_false(dc.relatime);
    cfg_free(c);
}

/* The space guard's directory and reserve. */
static void test_space_config(void)
{
    const char *tmp = g_get_tmp_dir();
    char *emb = g_strdup_printf("embedded.data_dir=%s", tmp);
    char *path = g_strdup_printf("storage.space_path=%s", tmp);
    const char *const embedded[] = {emb, NULL};
    const char *const none[] = {emb, "storage.space_path=none", NULL};
    const char *const fixed[] = {emb, "storage.reserve=300", NULL};
    const char *const remote[] = {"database.conninfo=host=db", path, NULL};
    struct statvfs sv;
    dbfs_config dc;
    cfg *c;

    clear_env();
    g_assert_cmpint(statvfs(tmp, &sv), ==, 0);
    unsigned long long total = (unsigned long long)sv.f_blocks * sv.f_frsize;
    unsigned long long avail = (unsigned long long)sv.f_bavail * sv.f_frsize;

    /* The embedded cluster: its directory, a reserve derived from its disk
     * (the free space moves while the test runs: the WAL part depends on
     * it only for disks of under 4 GiB free). */
    c = load_ok(NULL, embedded);
    cfg_dbfs_config(c, "dbname=x", &dc);
    g_assert_cmpstr(dc.space_path, ==, tmp);
    if (avail > 4ull << 30)
        g_assert_cmpuint(dc.space_reserve, ==, emb_reserve_for_disk(total, avail));
    g_assert_cmpuint(dc.space_reserve, >=, 88ull << 20);
    cfg_free(c);
    /* none: no guard, no space figures. */
    c = load_ok(NULL, none);
    cfg_dbfs_config(c, "dbname=x", &dc);
    g_assert_null(dc.space_path);
    g_assert_cmpuint(dc.space_reserve, ==, 0);
    cfg_free(c);
    /* A reserve of its own, in MiB. */
    c = load_ok(NULL, fixed);
    cfg_dbfs_config(c, "dbname=x", &dc);
    g_assert_cmpuint(dc.space_reserve, ==, 300ull << 20);
    cfg_free(c);
    /* A remote database whose disk is mounted here. */
    c = load_ok(NULL, remote);
    cfg_dbfs_config(c, c->conninfo, &dc);
    g_assert_cmpstr(dc.space_path, ==, tmp);
    g_assert_cmpuint(dc.space_reserve, >=, 88ull << 20);
    cfg_free(c);
    /* One set but not there: said, and no guard. */
    const char *const missing[] = {"storage.space_path=/no/such/dir", NULL};
    c = load_ok(NULL, missing);
    g_test_expect_message("pgnfs", G_LOG_LEVEL_WARNING, "*space_path /no/such/dir cannot be*");
    cfg_dbfs_config(c, "dbname=x", &dc);
    g_test_assert_expected_messages();
    g_assert_cmpstr(dc.space_path, ==, "/no/such/dir");
    g_assert_cmpuint(dc.space_reserve, ==, 0);
    cfg_free(c);
    g_free(emb);
    g_free(path);
}

/* Parse one export; must succeed. */
static cfg_export parse_ok(const char *path, const char *spec)
{
    cfg_export e;
    char *err = NULL;

    if (cfg_parse_export(path, spec, &e, &err) != 0)
        g_error("cfg_parse_export(%s, %s): %s", path, spec, err);
    g_assert_cmpstr(e.path, ==, path);
    return e;
}

static void parse_bad(const char *path, const char *spec, const char *needle)
{
    cfg_export e;
    char *err = NULL;

    g_assert_cmpint(cfg_parse_export(path, spec, &e, &err), ==, -1);
    g_assert_nonnull(err);
    if (!strstr(err, needle))
        g_error("error '%s' for '%s %s' lacks '%s'", err, path, spec, needle);
    g_assert_nonnull(strstr(err, path));
    g_assert_cmpuint(e.nclients, ==, 0);
    g_assert_null(e.path);
    free(err);
}

static void test_export_clients(void)
{
    cfg_export e = parse_ok("/", "*");
    g_assert_cmpuint(e.nclients, ==, 1);
    cfg_client *c = &e.clients[0];
    g_assert_cmpint(c->kind, ==, CFG_CLIENT_ANY);
    /* defaults: ro, root_squash, no all_squash, insecure, anon 65534 */
    g_assert_false(c->rw);
    g_assert_true(c->root_squash);
    g_assert_false(c->all_squash);
    g_assert_false(c->secure);
    g_assert_false(c->async); /* sync is the default (exports(5)) */
    g_assert_cmpuint(c->anonuid, ==, 65534);
    g_assert_cmpuint(c->anongid, ==, 65534);
    cfg_export_clear(&e);

    e = parse_ok("/data", "10.1.2.3 10.1.2.3/8 10.0.0.0/255.255.0.0 ::1 fe80::1234/10 "
                          "host-1.example.com 0.0.0.0/0");
    g_assert_cmpuint(e.nclients, ==, 7);
    g_assert_cmpint(e.clients[0].kind, ==, CFG_CLIENT_NET);
    g_assert_cmpint(e.clients[0].family, ==, AF_INET);
    g_assert_cmpuint(e.clients[0].prefix, ==, 32);
    g_assert_cmpmem(e.clients[0].addr, 4, "\x0a\x01\x02\x03", 4);
    g_assert_cmpuint(e.clients[1].prefix, ==, 8);
    g_assert_cmpmem(e.clients[1].addr, 4, "\x0a\0\0\0", 4); /* host bits cleared */
    g_assert_cmpuint(e.clients[2].prefix, ==, 16);
    g_assert_cmpint(e.clients[3].family, ==, AF_INET6);
    g_assert_cmpuint(e.clients[3].prefix, ==, 128);
    unsigned char one[16] = {0};
    one[15] = 1;
    g_assert_cmpmem(e.clients[3].addr, 16, one, 16);
    g_assert_cmpuint(e.clients[4].prefix, ==, 10);
    unsigned char fe80[16] = {0xfe, 0x80};
    g_assert_cmpmem(e.clients[4].addr, 16, fe80, 16);
    g_assert_cmpint(e.clients[5].kind, ==, CFG_CLIENT_HOST);
    g_assert_cmpstr(e.clients[5].host, ==, "host-1.example.com");
    g_assert_cmpuint(e.clients[6].prefix, ==, 0);
    cfg_export_clear(&e);
    g_assert_null(e.clients);
}

static void test_export_options(void)
{
    cfg_export e = parse_ok("/", "a(rw,no_root_squash,all_squash,anonuid=1000,anongid=2000,secure) "
                                 "b(rw,ro) c( rw , insecure ,no_all_squash, root_squash ) d() "
                                 "e(ro,rw,all_squash,no_all_squash,secure,insecure)");
    g_assert_cmpuint(e.nclients, ==, 5);
    cfg_client *a = &e.clients[0];
    g_assert_true(a->rw);
    g_assert_false(a->root_squash);
    g_assert_true(a->all_squash);
    g_assert_cmpuint(a->anonuid, ==, 1000);
    g_assert_cmpuint(a->anongid, ==, 2000);
    g_assert_true(a->secure);
    g_assert_false(e.clients[1].rw); /* the last one wins */
    g_assert_true(e.clients[2].rw);
    g_assert_false(e.clients[2].secure);
    g_assert_false(e.clients[2].all_squash);
    g_assert_true(e.clients[2].root_squash);
    g_assert_false(e.clients[3].rw); /* "()" is the defaults */
    g_assert_true(e.clients[3].root_squash);
    g_assert_true(e.clients[4].rw);
    g_assert_false(e.clients[4].all_squash);
    g_assert_false(e.clients[4].secure);
    cfg_export_clear(&e);

    /* sync / async, the last one winning; sync is the default. */
    e = parse_ok("/", "a(rw,async) b(async,sync) c(sync,async) d(rw)");
    g_assert_true(e.clients[0].async);
    g_assert_false(e.clients[1].async);
    g_assert_true(e.clients[2].async);
    g_assert_false(e.clients[3].async);
    cfg_export_clear(&e);

    e = parse_ok("/", "*(anonuid=0,anongid=4294967295)");
    g_assert_cmpuint(e.clients[0].anonuid, ==, 0);
    g_assert_cmpuint(e.clients[0].anongid, ==, 4294967295u);
    cfg_export_clear(&e);
}

static void test_export_errors(void)
{
    parse_bad("/", "10.0.0.0/33", "0 to 32");
    parse_bad("/", "::/129", "0 to 128");
    parse_bad("/", "10.0.0.0/abc", "prefix length");
    parse_bad("/", "10.0.0.0/255.0.255.0", "netmask");
    parse_bad("/", "300.1.1.1/8", "network address");
    parse_bad("/", "*(no_subtree_check)", "unknown option 'no_subtree_check'");
    parse_bad("/", "*(rw,,ro)", "empty option");
    parse_bad("/", "*(anonuid=-1)", "anonuid=-1");
    parse_bad("/", "*(anonuid=4294967296)", "0 to 4294967295");
    parse_bad("/", "*(anongid=)", "anongid");
    parse_bad("/", "*(rw", "missing ')'");
    parse_bad("/", "*(rw)x", "after ')'");
    parse_bad("/", "(rw)", "without a client");
    parse_bad("/", "", "no clients");
    parse_bad("/", "   ", "no clients");
    parse_bad("/", "@trusted(rw)", "netgroups");
    parse_bad("/", "*.example.com(rw)", "wildcards");
    parse_bad("/", "bad_host!(rw)", "host name");
    parse_bad("relative", "*", "absolute");
    parse_bad("/a/", "*", "ends with '/'");
    parse_bad("/a//b", "*", "empty component");
    parse_bad("/a/../b", "*", "'..'");
    parse_bad("/.", "*", "'.'");

    /* More exports than a handle can number. */
    GString *big = g_string_new("[exports]\n");
    for (int i = 0; i < 257; i++)
        g_string_append_printf(big, "/e%d = *\n", i);
    expect_error(big->str, NULL, "257 exports", NULL);
    g_string_free(big, TRUE);
}

static void test_cmdline(void)
{
    char *file = write_file("[server]\nthreads = 7\n[exports]\n/ = *(ro)\n");
    char *args[] = {"prog",
                    "serve",
                    "--config",
                    file,
                    "--set",
                    "storage.chunk_size=4096",
                    "--port",
                    "1234",
                    "--listen=::1",
                    "--data",
                    "/tmp/d",
                    "--conninfo",
                    "dbname=x",
                    "--threads=9",
                    "--log-level",
                    "debug",
                    "--force",
                    "--export",
                    "/ 10.0.0.0/8(rw)",
                    "--export=/x *(ro)",
                    "--",
                    "--port",
                    NULL};
    char **argv = args;
    int argc = G_N_ELEMENTS(args) - 1;
    char *err = NULL;

    clear_env();
    cfg *c = cfg_from_cmdline(&argc, &argv, &err);
    if (!c)
        g_error("cfg_from_cmdline: %s", err);
    g_assert_cmpuint(c->threads, ==, 9);
    g_assert_cmpuint(c->chunk_size, ==, 4096);
    g_assert_cmpuint(c->port, ==, 1234);
    g_assert_cmpstr(c->listen, ==, "::1");
    g_assert_cmpstr(c->data_dir, ==, "/tmp/d");
    g_assert_cmpstr(c->conninfo, ==, "dbname=x");
    g_assert_cmpstr(c->log_level, ==, "debug");
    g_assert_cmpuint(c->nexports, ==, 2);
    g_assert_true(find_export(c, "/")->clients[0].rw);
    g_assert_nonnull(find_export(c, "/x"));
    /* What it does not know stays, in order; after "--" nothing is taken. */
    g_assert_cmpint(argc, ==, 5);
    g_assert_cmpstr(argv[0], ==, "prog");
    g_assert_cmpstr(argv[1], ==, "serve");
    g_assert_cmpstr(argv[2], ==, "--force");
    g_assert_cmpstr(argv[3], ==, "--");
    g_assert_cmpstr(argv[4], ==, "--port");
    g_assert_null(argv[5]);
    cfg_free(c);

    char *bad1[] = {"prog", "--port", NULL};
    argv = bad1;
    argc = 2;
    g_assert_null(cfg_from_cmdline(&argc, &argv, &err));
    g_assert_nonnull(strstr(err, "--port"));
    g_assert_cmpint(argc, ==, 2);
    free(err);

    char *bad2[] = {"prog", "--export", "/nospec", NULL};
    argv = bad2;
    argc = 3;
    g_assert_null(cfg_from_cmdline(&argc, &argv, &err));
    g_assert_nonnull(strstr(err, "--export"));
    free(err);

    char *bad3[] = {"prog", "--config", file, "--config=other", NULL};
    argv = bad3;
    argc = 4;
    g_assert_null(cfg_from_cmdline(&argc, &argv, &err));
    g_assert_nonnull(strstr(err, "twice"));
    free(err);

    char *bad4[] = {"prog", "--port", "99999", NULL};
    argv = bad4;
    argc = 3;
    g_assert_null(cfg_from_cmdline(&argc, &argv, &err));
    g_assert_nonnull(strstr(err, "server.port"));
    g_assert_nonnull(strstr(err, "99999"));
    free(err);

    /* A longer option that starts like a known one is not taken for it. */
    char *other[] = {"prog", "--portable", NULL};
    argv = other;
    argc = 2;
    c = cfg_from_cmdline(&argc, &argv, &err);
    g_assert_nonnull(c);
    g_assert_cmpint(argc, ==, 2);
    g_assert_cmpstr(argv[1], ==, "--portable");
    cfg_free(c);

    g_unlink(file);
    g_free(file);
}

/* pgnfs.conf.example at the top of the source tree loads, sets every key,
 * and shows the defaults. */
static void test_example(void)
{
    char *unit = g_path_get_dirname(__FILE__);
    char *tests = g_path_get_dirname(unit);
    char *top = g_path_get_dirname(tests);
    char *path = g_build_filename(top, "pgnfs.conf.example", NULL);
    GKeyFile *kf = g_key_file_new();
    char *err = NULL;

    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_test_skip("pgnfs.conf.example is not next to the sources");
        goto out;
    }
    g_assert_true(g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, NULL));
    /* Every key the configuration knows is there, documented. */
    const char *group, *key;
    unsigned nkeys = 0;
    for (unsigned i = 0; cfg_key_at(i, &group, &key); i++, nkeys++)
        if (!g_key_file_has_key(kf, group, key, NULL))
            g_error("pgnfs.conf.example does not set [%s] %s", group, key);
    g_assert_cmpuint(nkeys, >=, 30);
    g_assert_true(g_key_file_has_key(kf, "exports", "/", NULL));

    clear_env();
    cfg *c = cfg_load(path, NULL, &err);
    if (!c)
        g_error("pgnfs.conf.example does not load: %s", err);
    cfg *d = load_ok(NULL, NULL);
    g_assert_cmpstr(c->conninfo, ==, d->conninfo);
    g_assert_cmpstr(c->data_dir, ==, d->data_dir);
    g_assert_cmpstr(c->pg_user, ==, d->pg_user);
    g_assert_cmpuint(c->pg_restart, ==, d->pg_restart);
    g_assert_cmpuint(c->root_mode, ==, d->root_mode);
    g_assert_cmpuint(c->root_uid, ==, d->root_uid);
    g_assert_cmpstr(c->listen, ==, d->listen);
    g_assert_cmpuint(c->port, ==, d->port);
    g_assert_cmpuint(c->threads, ==, d->threads);
    g_assert_cmpuint(c->udp, ==, d->udp);
    g_assert_cmpuint(c->rpcbind, ==, d->rpcbind);
    g_assert_cmpuint(c->max_connections, ==, d->max_connections);
    g_assert_cmpuint(c->drc_entries, ==, d->drc_entries);
    g_assert_cmpstr(c->log_level, ==, d->log_level);
    g_assert_cmpstr(c->storage, ==, d->storage);
    g_assert_cmpuint(c->chunk_size, ==, d->chunk_size);
    g_assert_cmpstr(c->encoding, ==, d->encoding);
    g_assert_cmpuint(c->relatime, ==, d->relatime);
    g_assert_cmpuint(c->stat_cache, ==, d->stat_cache);
    g_assert_cmpuint(c->stat_size, ==, d->stat_size);
    g_assert_cmpuint(c->name_cache, ==, d->name_cache);
    g_assert_cmpuint(c->naming_size, ==, d->naming_size);
    g_assert_cmpuint(c->buffer_cache, ==, d->buffer_cache);
    g_assert_cmpuint(c->buffer_size, ==, d->buffer_size);
    g_assert_cmpuint(c->nexports, ==, d->nexports);
    g_assert_cmpuint(c->exports[0].nclients, ==, d->exports[0].nclients);
    cfg_free(c);
    cfg_free(d);
out:
    g_key_file_free(kf);
    g_free(path);
    g_free(top);
    g_free(tests);
    g_free(unit);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cfg/defaults", test_defaults);
    g_test_add_func("/cfg/file", test_file);
    g_test_add_func("/cfg/precedence", test_precedence);
    g_test_add_func("/cfg/cache", test_cache);
    g_test_add_func("/cfg/root", test_root);
    g_test_add_func("/cfg/data_dir_default", test_data_dir_default);
    g_test_add_func("/cfg/dbfs_config", test_dbfs_config);
    g_test_add_func("/cfg/space_config", test_space_config);
    g_test_add_func("/cfg/errors_file", test_errors_file);
    g_test_add_func("/cfg/errors_env_cmdline", test_errors_env_cmdline);
    g_test_add_func("/cfg/export_clients", test_export_clients);
    g_test_add_func("/cfg/export_options", test_export_options);
    g_test_add_func("/cfg/export_errors", test_export_errors);
    g_test_add_func("/cfg/cmdline", test_cmdline);
    g_test_add_func("/cfg/example", test_example);
    return g_test_run();
}
