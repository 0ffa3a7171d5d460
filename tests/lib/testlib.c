/*
 * testlib.c -- test fixtures: a throw-away PostgreSQL cluster per test
 * program, fresh databases and file systems in it, and running pgnfs servers.
 *
 * NOTES
 *   Cleanup must happen even when a test aborts (g_assert calls abort(), and
 *   atexit handlers do not run then). So every temporary directory gets a
 *   reaper: a small shell process that waits for end-of-file on a pipe whose
 *   only writer is this test process. When the test process ends, however
 *   it ends, the pipe closes and the reaper stops the pgnfs server (if one
 *   runs from that directory), then the PostgreSQL postmaster, and removes
 *   the directory. Nothing else in the test process holds the write end
 *   (O_CLOEXEC, and g_spawn closes inherited descriptors).
 *
 *   Fixture state is process-wide (one cluster per test program); the
 *   functions are meant to be called from the test program's main thread.
 */
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>
#include <libpq-fe.h>
#include <nfsc/libnfs.h>

#include "dbfs.h"
#include "emb.h"

/* The reaper: waits for EOF on stdin, then cleans up directory $1. */
static const char tl_reaper_script[] =
    "dir=\"$1\"\n"
    "cat >/dev/null\n"
    "if [ -n \"$PGNFS_TEST_KEEP\" ]; then exit 0; fi\n"
    "stop() { pid=$1; [ -n \"$pid\" ] || return; kill -\"$2\" \"$pid\" 2>/dev/null || return;\n"
    "  i=0; while kill -0 \"$pid\" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); "
    "done\n"
    "  kill -KILL \"$pid\" 2>/dev/null; }\n"
    "[ -f \"$dir/server.pid\" ] && stop \"$(cat \"$dir/server.pid\")\" TERM\n"
    "for p in \"$dir\"/pg/postmaster.pid \"$dir\"/data/pg/postmaster.pid; do\n"
    "  [ -f \"$p\" ] && stop \"$(head -n 1 \"$p\")\" QUIT\n"
    "done\n"
    "rm -rf \"$dir\"\n";

/*
 * tl_tempdir -- a new directory under $TMPDIR (or /tmp), readable by the
 * PostgreSQL user, with a reaper watching this process. Aborts on failure.
 */
static char *tl_tempdir(const char *what)
{
    char *tmpl = g_build_filename(g_get_tmp_dir(), "pgnfs-test-XXXXXX", NULL);
    int fds[2];
    GError *err = NULL;

    if (!g_mkdtemp(tmpl))
        g_error("cannot create a temporary directory for %s: %s", what, g_strerror(errno));
    if (chmod(tmpl, 0755) != 0)
        g_error("chmod %s: %s", tmpl, g_strerror(errno));
    if (pipe2(fds, O_CLOEXEC) != 0)
        g_error("pipe: %s", g_strerror(errno));

    char *argv[] = {"/bin/sh", "-c", (char *)tl_reaper_script, "pgnfs-test-reaper", tmpl, NULL};
    if (!g_spawn_async_with_fds(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, NULL,
                                fds[0], -1, -1, &err))
        g_error("cannot start the cleanup process for %s: %s", tmpl, err->message);
    close(fds[0]);
    /* fds[1] stays open, unused, until this process ends. */
    return tmpl;
}

/* --- the cluster ---------------------------------------------------------- */

static emb_cluster *tl_cluster;
static char *tl_cluster_dir;
static char *tl_cluster_admin; /* conninfo of database "postgres" */

const char *tl_cluster_conninfo(void)
{
    char *err = NULL;

    if (tl_cluster)
        return tl_cluster_admin;
    tl_cluster_dir = tl_tempdir("the test cluster");
    emb_opts opts = {
        .data_dir = tl_cluster_dir,
        /* Throw-away data: durability against power loss buys nothing. */
        .extra_conf = "fsync = off\nfull_page_writes = off\nmax_connections = 200\n",
    };
    tl_cluster = emb_start(&opts, &err);
    if (!tl_cluster)
        g_error("cannot start a test PostgreSQL cluster: %s", err);
    tl_cluster_admin = emb_conninfo_db(tl_cluster, "postgres");
    return tl_cluster_admin;
}

char *tl_fresh_db(void)
{
    static unsigned counter;
    char name[64];
    PGconn *conn = PQconnectdb(tl_cluster_conninfo());

    if (PQstatus(conn) != CONNECTION_OK)
        g_error("cannot connect to the test cluster: %s", PQerrorMessage(conn));
    snprintf(name, sizeof name, "t%u_%u", (unsigned)getpid(), ++counter);
    /* The name is built from two numbers only. */
    char *sql = g_strdup_printf("CREATE DATABASE %s", name);
    PGresult *res = PQexec(conn, sql);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        g_error("CREATE DATABASE %s: %s", name, PQresultErrorMessage(res));
    PQclear(res);
    PQfinish(conn);
    g_free(sql);
    return emb_conninfo_db(tl_cluster, name);
}

void tl_mkfs_opts(dbfs_mkfs_opts *o)
{
    const char *env = g_getenv("PGNFS_TEST_MKFS");
    char **set = g_strsplit_set(env ? env : "", " \t\n", -1);

    for (char **kv = set; *kv; kv++) {
        const char *eq = strchr(*kv, '=');
        const char *v = eq ? eq + 1 : "";
        char *end = NULL;
        unsigned long long n = strtoull(v, &end, 10);
        bool num = *v && end && !*end;

        if (!**kv)
            continue;
        if (g_str_has_prefix(*kv, "storage.schema=") && strcmp(v, "single") == 0)
            o->storage = DBFS_STORAGE_SINGLE;
        else if (g_str_has_prefix(*kv, "storage.schema=") && strcmp(v, "inversion") == 0)
            o->storage = DBFS_STORAGE_INVERSION;
        else if (g_str_has_prefix(*kv, "storage.schema=") && strcmp(v, "hybrid") == 0)
            o->storage = DBFS_STORAGE_HYBRID;
        else if (g_str_has_prefix(*kv, "storage.encoding=") && strcmp(v, "binary") == 0)
            o->encoding = DBFS_ENC_BINARY;
        else if (g_str_has_prefix(*kv, "storage.encoding=") && strcmp(v, "base64") == 0)
            o->encoding = DBFS_ENC_BASE64;
        else if (g_str_has_prefix(*kv, "storage.chunk_size=") && num)
            o->chunk_size = (uint32_t)n;
        else if (g_str_has_prefix(*kv, "storage.hybrid_threshold=") && num)
            o->hybrid_threshold = n;
        else
            g_error("PGNFS_TEST_MKFS: cannot use '%s' (storage.schema, storage.encoding, "
                    "storage.chunk_size, storage.hybrid_threshold)",
                    *kv);
    }
    g_strfreev(set);
}

char *tl_fresh_fs(void)
{
    char *conninfo = tl_fresh_db();
    dbfs_mkfs_opts opts = {.root_mode = 0777};
    int rc;

    tl_mkfs_opts(&opts);
    rc = dbfs_mkfs(conninfo, &opts);

    if (rc != 0)
        g_error("dbfs_mkfs on a fresh database failed: %s", g_strerror(-rc));
    return conninfo;
}

/* --- servers ---------------------------------------------------------------- */

struct tl_server {
    char *dir; /* temporary directory: data/, server.log, server.pid */
    /* dir/data: the server's --data */
    char *data_dir;
    unsigned port;
    GPid pid;
    char **argv;
    char *conninfo;
};

/* tl_free_port -- see testlib.h. */
unsigned tl_free_port(void)
{
    for (int attempt = 0; attempt < 50; attempt++) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        int t = socket(AF_INET, SOCK_STREAM, 0);
        int u = socket(AF_INET, SOCK_DGRAM, 0);
        unsigned port = 0;

        if (t >= 0 && bind(t, (struct sockaddr *)&a, sizeof a) == 0 &&
            getsockname(t, (struct sockaddr *)&a, &len) == 0 && u >= 0 &&
            bind(u, (struct sockaddr *)&a, sizeof a) == 0)
            port = ntohs(a.sin_port);
        if (t >= 0)
            close(t);
        if (u >= 0)
            close(u);
        if (port)
            return port;
    }
    g_error("no free port on 127.0.0.1");
    return 0;
}

/* tl_metrics -- see testlib.h. */
char *tl_metrics(unsigned port)
{
    static const char req[] = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    GString *in = g_string_new(NULL);
    char buf[8192];
    ssize_t n;

    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        send(fd, req, sizeof req - 1, 0) != (ssize_t)(sizeof req - 1)) {
        if (fd >= 0)
            close(fd);
        g_string_free(in, TRUE);
        return NULL;
    }
    while ((n = recv(fd, buf, sizeof buf, 0)) > 0)
        g_string_append_len(in, buf, n);
    close(fd);
    return g_string_free(in, FALSE);
}

static void tl_server_dump_log(const tl_server *s)
{
    char *path = g_build_filename(s->dir, "server.log", NULL);
    char *text = NULL;

    if (g_file_get_contents(path, &text, NULL, NULL))
        g_printerr("---- %s ----\n%s---- end of server log ----\n", path, text);
    g_free(text);
    g_free(path);
}

static void tl_server_write_pid(const tl_server *s)
{
    char *path = g_build_filename(s->dir, "server.pid", NULL);
    char pid[32];

    snprintf(pid, sizeof pid, "%d\n", (int)s->pid);
    if (!g_file_set_contents(path, pid, -1, NULL))
        g_error("cannot write %s", path);
    g_free(path);
}

/* Try one MOUNT of "/": true once the server answers. */
static bool tl_server_answers(const tl_server *s)
{
    struct nfs_context *nfs = nfs_init_context();
    char *base = tl_server_url(s, "");
    /* Mount "/" only: libnfs would also mount every other export under it
     * (which a test may not have created yet). */
    char *url = g_strconcat(base, "&auto-traverse-mounts=0", NULL);
    g_free(base);
    struct nfs_url *u = nfs_parse_url_dir(nfs, url);
    bool ok = u && nfs_mount(nfs, u->server, u->path) == 0;

    if (ok && nfs_chmod(nfs, "/", 0777) != 0)
        g_error("cannot open the test server's root directory to all: %s", nfs_get_error(nfs));
    if (u)
        nfs_destroy_url(u);
    nfs_destroy_context(nfs);
    g_free(url);
    return ok;
}

static void tl_server_spawn(tl_server *s)
{
    char *log_path = g_build_filename(s->dir, "server.log", NULL);
    int log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    GError *err = NULL;

    if (log_fd < 0)
        g_error("cannot open %s: %s", log_path, g_strerror(errno));
    if (!g_spawn_async_with_fds(NULL, s->argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &s->pid,
                                -1, log_fd, log_fd, &err))
        g_error("cannot run %s: %s", s->argv[0], err->message);
    close(log_fd);
    tl_server_write_pid(s);

    for (int i = 0; i < 1200; i++) {
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            tl_server_dump_log(s);
            g_error("pgnfs serve exited during start-up (status %d)", status);
        }
        if (tl_server_answers(s)) {
            g_free(log_path);
            return;
        }
        g_usleep(50 * 1000);
    }
    tl_server_dump_log(s);
    g_error("pgnfs serve did not answer on port %u within 60 s", s->port);
}

tl_server *tl_server_start(const char *const *overrides)
{
    tl_server *s = g_new0(tl_server, 1);
    GPtrArray *argv = g_ptr_array_new();

    s->dir = tl_tempdir("a test server");
    s->port = tl_free_port();
    g_ptr_array_add(argv, g_strdup(PGNFS_BIN));
    g_ptr_array_add(argv, g_strdup("serve"));
    g_ptr_array_add(argv, g_strdup("--data"));
    s->data_dir = g_build_filename(s->dir, "data", NULL);
    g_ptr_array_add(argv, g_strdup(s->data_dir));
    g_ptr_array_add(argv, g_strdup("--listen"));
    g_ptr_array_add(argv, g_strdup("127.0.0.1"));
    g_ptr_array_add(argv, g_strdup("--port"));
    g_ptr_array_add(argv, g_strdup_printf("%u", s->port));
    g_ptr_array_add(argv, g_strdup("--export"));
    g_ptr_array_add(argv, g_strdup("/ 127.0.0.1(rw,no_root_squash)"));
    /* Port 111 is the host's: a test server neither serves it nor
     * registers there unless a test asks (overrides come later and win). */
    g_ptr_array_add(argv, g_strdup("--set"));
    g_ptr_array_add(argv, g_strdup("server.portmap=off"));
    g_ptr_array_add(argv, g_strdup("--set"));
    g_ptr_array_add(argv, g_strdup("server.rpcbind=false"));
    for (const char *const *o = overrides; o && *o; o++) {
        g_ptr_array_add(argv, g_strdup("--set"));
        g_ptr_array_add(argv, g_strdup(*o));
    }
    /* A test run's variant (storage layout, caches ...) for every server. */
    const char *variant = g_getenv("PGNFS_TEST_SERVER_SET");
    char **extra = g_strsplit_set(variant ? variant : "", " \t\n", -1);
    for (char **o = extra; *o; o++) {
        if (!**o)
            continue;
        g_ptr_array_add(argv, g_strdup("--set"));
        g_ptr_array_add(argv, g_strdup(*o));
    }
    g_strfreev(extra);
    g_ptr_array_add(argv, NULL);
    s->argv = (char **)g_ptr_array_free(argv, FALSE);

    struct passwd *pw = getpwuid(geteuid());
    const char *user = geteuid() == 0 ? "postgres" : (pw ? pw->pw_name : "postgres");
    s->conninfo =
        g_strdup_printf("host=%s/data/pg/socket port=5432 dbname=pgnfs user=%s", s->dir, user);
    tl_server_spawn(s);
    return s;
}

/* Signal the server and wait for it to exit (within 60 s, else SIGKILL). */
static void tl_server_kill(tl_server *s, int sig)
{
    int status;

    if (kill(s->pid, sig) != 0)
        g_error("kill pgnfs serve: %s", g_strerror(errno));
    for (int i = 0; i < 1200; i++) {
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            g_spawn_close_pid(s->pid);
            /* A clean stop exits 0: anything else (a sanitizer's report,
             * a failed shutdown) fails the test. */
            if (sig == SIGTERM && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
                tl_server_dump_log(s);
                if (WIFSIGNALED(status))
                    g_error("pgnfs serve died of signal %d while stopping", WTERMSIG(status));
                g_error("pgnfs serve exited with status %d after SIGTERM (see its log above)",
                        WEXITSTATUS(status));
            }
            return;
        }
        g_usleep(50 * 1000);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &status, 0);
    tl_server_dump_log(s);
    g_error("pgnfs serve did not stop within 60 s of signal %d", sig);
}

void tl_server_restart(tl_server *s)
{
    tl_server_kill(s, SIGTERM);
    tl_server_spawn(s);
}

void tl_server_crash_restart(tl_server *s)
{
    tl_server_kill(s, SIGKILL);
    tl_server_spawn(s);
}

unsigned tl_server_port(const tl_server *s)
{
    return s->port;
}

int tl_server_pid(const tl_server *s)
{
    return (int)s->pid;
}

char *tl_server_url(const tl_server *s, const char *path)
{
    while (*path == '/')
        path++;
    return g_strdup_printf("nfs://127.0.0.1/%s?nfsport=%u&mountport=%u&version=3", path, s->port,
                           s->port);
}

const char *tl_server_conninfo(const tl_server *s)
{
    return s->conninfo;
}

char *tl_server_log(const tl_server *s)
{
    char *path = g_build_filename(s->dir, "server.log", NULL);
    char *text = NULL;

    if (!g_file_get_contents(path, &text, NULL, NULL))
        text = g_strdup("");
    g_free(path);
    return text;
}

/* pg_ctl from PATH, else the newest /usr/lib/postgresql/N/bin. */
static char *tl_find_pg_ctl(void)
{
    char *p = g_find_program_in_path("pg_ctl");
    GDir *d;

    if (p)
        return p;
    d = g_dir_open("/usr/lib/postgresql", 0, NULL);
    if (d) {
        const char *v;
        long best = -1;
        while ((v = g_dir_read_name(d)) != NULL) {
            char *cand = g_build_filename("/usr/lib/postgresql", v, "bin", "pg_ctl", NULL);
            long n = strtol(v, NULL, 10);
            if (n > best && g_file_test(cand, G_FILE_TEST_IS_EXECUTABLE)) {
                g_free(p);
                p = cand;
                best = n;
            } else {
                g_free(cand);
            }
        }
        g_dir_close(d);
    }
    if (!p)
        g_error("cannot find pg_ctl (install postgresql)");
    return p;
}

/* In the child of tl_server_pg_ctl: become the owner of the cluster. */
static void tl_become_owner(gpointer data)
{
    const struct stat *st = data;

    if (geteuid() == 0 && st->st_uid != 0) {
        if (setgid(st->st_gid) != 0 || setuid(st->st_uid) != 0)
            _exit(126);
    }
}

int tl_server_pg_ctl(const tl_server *s, const char *action)
{
    char *pg_ctl = tl_find_pg_ctl();
    char *pgdir = g_build_filename(s->dir, "data", "pg", NULL);
    char *log = g_build_filename(pgdir, "postgresql.log", NULL);
    struct stat st;
    GError *err = NULL;
    int status = -1;

    if (stat(pgdir, &st) != 0)
        g_error("%s: %s", pgdir, g_strerror(errno));
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, pg_ctl);
    if (strcmp(action, "stop-immediate") == 0) {
        const char *args[] = {"stop", "-w", "-m", "immediate", NULL};
        for (const char *const *a = args; *a; a++)
            g_ptr_array_add(argv, (char *)*a);
    } else if (strcmp(action, "stop") == 0) {
        const char *args[] = {"stop", "-w", "-m", "fast", NULL};
        for (const char *const *a = args; *a; a++)
            g_ptr_array_add(argv, (char *)*a);
    } else if (strcmp(action, "start") == 0) {
        g_ptr_array_add(argv, "start");
        g_ptr_array_add(argv, "-w");
        g_ptr_array_add(argv, "-l");
        g_ptr_array_add(argv, log);
    } else {
        g_error("tl_server_pg_ctl: unknown action '%s'", action);
    }
    g_ptr_array_add(argv, "-t");
    g_ptr_array_add(argv, "120");
    g_ptr_array_add(argv, "-D");
    g_ptr_array_add(argv, pgdir);
    g_ptr_array_add(argv, NULL);
    if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, tl_become_owner,
                      &st, NULL, NULL, &status, &err))
        g_error("cannot run %s: %s", pg_ctl, err->message);
    g_ptr_array_free(argv, TRUE);
    g_free(pg_ctl);
    g_free(log);
    g_free(pgdir);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

const char *tl_server_data_dir(const tl_server *s)
{
    return s->data_dir;
}

const char *tl_pgnfs_bin(void)
{
    return PGNFS_BIN;
}

void tl_server_stop(tl_server *s)
{
    tl_server_kill(s, SIGTERM);
    g_strfreev(s->argv);
    g_free(s->conninfo);
    /* The reaper removes the directory when this process ends. */
    g_free(s->data_dir);
    g_free(s->dir);
    g_free(s);
}
