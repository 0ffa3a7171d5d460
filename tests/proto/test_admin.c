/*
 * test_admin.c -- the view into a running server and the admin commands
 * beside it: the metrics endpoint (Prometheus text: counters, latency
 * histograms, statuses, database state; 404/405), `pgnfs stats`, the
 * slow-operation log, and `pgnfs du`, `find`, `sql`, `mkfs` and `fsck`
 * against the database of a running server (through --conninfo and
 * through --data, which uses the running embedded cluster's socket):
 * du's combined options, find -ls's special bits, mkfs's refusal without
 * --force, fsck's exit codes and -q. (test_cli.c: the tool as a new user
 * meets it.)
 *
 * NOTES
 *   One server for the program, started with [metrics] enable on a free
 *   port and [log] slow_ms = 1. Cases run in order in this process; the
 *   files the first one writes are what the later ones count.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nfsraw.h"
#include "testlib.h"

static tl_server *server;
static unsigned metrics_port;

/* One HTTP request to the metrics port; returns the whole answer (g_free). */
static char *http(const char *method, const char *path)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)metrics_port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    GString *in = g_string_new(NULL);
    char buf[8192];
    ssize_t n;

    g_assert_cmpint(connect(fd, (struct sockaddr *)&a, sizeof a), ==, 0);
    char *req = g_strdup_printf("%s %s HTTP/1.0\r\nHost: x\r\n\r\n", method, path);
    g_assert_cmpint(send(fd, req, strlen(req), 0), ==, (ssize_t)strlen(req));
    g_free(req);
    while ((n = recv(fd, buf, sizeof buf, 0)) > 0)
        g_string_append_len(in, buf, n);
    close(fd);
    return g_string_free(in, FALSE);
}

/* The value of the metric line "key value" in page (asserts it is there). */
static double metric(const char *page, const char *key)
{
    char *pat = g_strdup_printf("\n%s ", key);
    const char *p = strstr(page, pat);

    if (!p)
        g_error("metric %s is not on the page", key);
    double v = g_ascii_strtod(p + strlen(pat), NULL);
    g_free(pat);
    return v;
}

/* Run `pgnfs ARGS...`; returns stdout (g_free), *status its exit status,
 * and *errout its stderr (g_free) when errout is not NULL. */
static char *run_pgnfs_err(int *status, char **errout, const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    char *out = NULL, *err = NULL;
    GError *gerr = NULL;
    int wait = 0;

    g_ptr_array_add(argv, (char *)PGNFS_BIN);
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, (char *)*a);
    g_ptr_array_add(argv, NULL);
    if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                      &wait, &gerr))
        g_error("cannot run %s: %s", PGNFS_BIN, gerr->message);
    *status = WIFEXITED(wait) ? WEXITSTATUS(wait) : -1;
    if (*status != 0)
        g_printerr("pgnfs %s exited %d: %s", args[0], *status, err);
    if (errout)
        *errout = err;
    else
        g_free(err);
    g_ptr_array_free(argv, TRUE);
    return out;
}

/* Run `pgnfs ARGS...`; returns stdout (g_free), *status its exit status. */
static char *run_pgnfs(int *status, const char *const *args)
{
    return run_pgnfs_err(status, NULL, args);
}

/* The server's data directory (from its conninfo "host=DIR/pg/socket ..."). */
static char *data_dir(void)
{
    const char *ci = tl_server_conninfo(server);
    const char *h = strstr(ci, "host=") + 5;
    const char *end = strstr(h, "/pg/socket");

    g_assert_nonnull(end);
    return g_strndup(h, (size_t)(end - h));
}

/* The export root's URL, without libnfs's traversal of nested exports
 * (its EXPORT reply would otherwise leak a little per mount). */
static char *mount_url(void)
{
    char *base = tl_server_url(server, "");
    char *url = g_strconcat(base, "&auto-traverse-mounts=0", NULL);

    g_free(base);
    return url;
}

/* Write n bytes of pattern to path over NFS (ports given). */
static void nfs_put(struct nfs_context *nfs, const char *path, size_t n)
{
    struct nfsfh *fh;
    char *buf = g_malloc(n);

    memset(buf, 'p', n);
    g_assert_cmpint(nfs_creat(nfs, path, 0644, &fh), ==, 0);
    g_assert_cmpint(nfs_pwrite(nfs, fh, 0, n, buf), ==, (int)n);
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    g_free(buf);
}

static void test_metrics(void)
{
    struct nfs_context *nfs = nfs_init_context();
    char *url = mount_url();
    struct nfs_url *u = nfs_parse_url_dir(nfs, url);

    /* The directories through the raw client (libnfs 4.0's nfs_mkdir
     * leaks a little, which the sanitizer build would report). */
    nr_ctx *c = nr_open(tl_server_port(server), NULL);
    nr_fh root;
    MKDIR3res mk;
    g_assert_nonnull(c);
    g_assert_cmpint(nr_mnt(c, "/", NULL, &root), ==, 0);
    g_assert_cmpint(nr_mkdir(c, &root, "tree", NULL, &mk), ==, NFS3_OK);
    nr_fh tree = nr_fh_from(&mk.MKDIR3res_u.resok.obj.post_op_fh3_u.handle);
    g_assert_cmpint(nr_mkdir(c, &tree, "sub", NULL, &mk), ==, NFS3_OK);
    nr_close(c);
    g_assert_cmpint(nfs_mount(nfs, u->server, u->path), ==, 0);
    nfs_put(nfs, "/tree/one.bin", 20000);
    nfs_put(nfs, "/tree/sub/two.bin", 5000);
    nfs_put(nfs, "/tree/sub/three.txt", 100);
    nfs_destroy_url(u);
    nfs_destroy_context(nfs);
    g_free(url);

    char *page = http("GET", "/metrics");
    g_assert_true(g_str_has_prefix(page, "HTTP/1.0 200") || g_str_has_prefix(page, "HTTP/1.1 200"));
    g_assert_nonnull(strstr(page, "text/plain; version=0.0.4"));
    double writes = metric(page, "pgnfs_rpc_calls_total{prog=\"nfs3\",proc=\"WRITE\"}");
    g_assert_cmpfloat(writes, >=, 3);
    g_assert_cmpfloat(
        metric(page, "pgnfs_rpc_duration_seconds_count{prog=\"nfs3\",proc=\"WRITE\"}"), ==, writes);
    g_assert_cmpfloat(
        metric(page, "pgnfs_rpc_duration_seconds_bucket{prog=\"nfs3\",proc=\"WRITE\",le=\"+Inf\"}"),
        ==, writes);
    /* A CREATE misses every cache: at least one round trip each (an
     * UNSTABLE WRITE may have none: the write-back buffer holds it). */
    g_assert_cmpfloat(metric(page, "pgnfs_db_round_trips_total{prog=\"nfs3\",proc=\"CREATE\"}"), >=,
                      metric(page, "pgnfs_rpc_calls_total{prog=\"nfs3\",proc=\"CREATE\"}"));
    g_assert_cmpfloat(metric(page, "pgnfs_rpc_calls_total{prog=\"nfs3\",proc=\"CREATE\"}"), >=, 3);
    /* The write-back figures are there, on or off. */
    g_assert_cmpfloat(metric(page, "pgnfs_writeback_enabled"), >=, 0);
    g_assert_cmpfloat(metric(page, "pgnfs_writeback_bytes"), >=, 0);
    g_assert_cmpfloat(metric(page, "pgnfs_writeback_writes_total"), >=, 0);
    g_assert_cmpfloat(metric(page, "pgnfs_nfs3_replies_total{status=\"NFS3_OK\"}"), >=, writes);
    g_assert_cmpfloat(metric(page, "pgnfs_db_connected"), ==, 1);
    g_assert_cmpfloat(metric(page, "pgnfs_workers"), >=, 1);
    g_assert_cmpfloat(metric(page, "pgnfs_uptime_seconds"), >, 0);
    g_assert_nonnull(strstr(page, "# TYPE pgnfs_cache_hits_total counter\n"));
    /* Each export's mode: "/" as the test library exports it, "/fast"
     * async as main() adds it. */
    g_assert_cmpfloat(metric(page, "pgnfs_export_info{path=\"/\",client=\"127.0.0.1/32\","
                                   "access=\"rw\",mode=\"sync\"}"),
                      ==, 1);
    g_assert_cmpfloat(metric(page, "pgnfs_export_info{path=\"/fast\",client=\"*\","
                                   "access=\"ro\",mode=\"async\"}"),
                      ==, 1);
    g_free(page);

    /* The counters move. */
    nfs = nfs_init_context();
    url = mount_url();
    u = nfs_parse_url_dir(nfs, url);
    g_assert_cmpint(nfs_mount(nfs, u->server, u->path), ==, 0);
    nfs_put(nfs, "/extra", 10);
    g_assert_cmpint(nfs_unlink(nfs, "/extra"), ==, 0);
    nfs_destroy_url(u);
    nfs_destroy_context(nfs);
    g_free(url);
    /* A LOOKUP of a missing name: NFS3ERR_NOENT in the statuses. */
    c = nr_open(tl_server_port(server), NULL);
    g_assert_nonnull(c);
    g_assert_cmpint(nr_mnt(c, "/", NULL, &root), ==, 0);
    g_assert_cmpint(nr_lookup(c, &root, "nothing-here", NULL), ==, NFS3ERR_NOENT);
    nr_close(c);
    page = http("GET", "/metrics");
    g_assert_cmpfloat(metric(page, "pgnfs_rpc_calls_total{prog=\"nfs3\",proc=\"WRITE\"}"), >,
                      writes);
    g_assert_cmpfloat(metric(page, "pgnfs_rpc_calls_total{prog=\"nfs3\",proc=\"REMOVE\"}"), >=, 1);
    g_assert_cmpfloat(metric(page, "pgnfs_nfs3_replies_total{status=\"NFS3ERR_NOENT\"}"), >=, 1);
    g_free(page);

    page = http("GET", "/other");
    g_assert_nonnull(strstr(page, " 404 "));
    g_free(page);
    page = http("POST", "/metrics");
    g_assert_nonnull(strstr(page, " 405 "));
    g_free(page);
}

static void test_stats_cli(void)
{
    char *urlarg = g_strdup_printf("http://127.0.0.1:%u/metrics", metrics_port);
    const char *once[] = {"stats", "--url", urlarg, "--once", NULL};
    const char *interval[] = {"stats", "--url", urlarg, "--interval", "0.2", NULL};
    const char *bad[] = {"stats", "--url", "http://127.0.0.1:1/metrics", "--once", NULL};
    const char *usage[] = {"stats", "--interval", "zero", NULL};
    int status;
    char *out;

    /* No NFS traffic between the page and the command: the same counts. */
    char *page = http("GET", "/metrics");
    double writes = metric(page, "pgnfs_rpc_calls_total{prog=\"nfs3\",proc=\"WRITE\"}");
    g_free(page);
    out = run_pgnfs(&status, once);
    g_assert_cmpint(status, ==, 0);
    g_assert_nonnull(strstr(out, "totals since it started"));
    g_assert_nonnull(strstr(out, "p99_ms"));
    const char *row = strstr(out, "\nnfs3   WRITE ");
    double rate = 0, calls = 0;
    g_assert_nonnull(row);
    g_assert_cmpint(sscanf(row, " nfs3 WRITE %lf %lf", &rate, &calls), ==, 2);
    g_assert_cmpfloat(calls, ==, writes);
    g_assert_cmpfloat(rate, >, 0);
    g_assert_nonnull(strstr(out, "\ndatabase     connected, "));
    g_assert_nonnull(strstr(out, "\nnfs errors   NFS3ERR_NOENT="));
    g_assert_nonnull(strstr(out, "\ncaches       "));
    g_assert_nonnull(strstr(out, "\nwrite-back   "));
    g_assert_nonnull(strstr(out, "\nexports      / 127.0.0.1/32(rw,sync); /fast *(ro,async)\n"));
    g_free(out);
    /* Two samples: the stats calls themselves do not count, so the
     * interval may be quiet; the screen is there either way. */
    out = run_pgnfs(&status, interval);
    g_assert_cmpint(status, ==, 0);
    g_assert_nonnull(strstr(out, "the last 0."));
    g_free(out);
    out = run_pgnfs(&status, bad);
    g_assert_cmpint(status, ==, 1);
    g_free(out);
    /* Without --url, the endpoint the same [metrics] settings give the
     * server (serve.sh turns metrics on at the defaults). */
    char *port = g_strdup_printf("metrics.port=%u", metrics_port);
    out = run_pgnfs(&status, (const char *[]){"stats", "--set", port, "--once", NULL});
    g_assert_cmpint(status, ==, 0);
    g_assert_nonnull(strstr(out, "totals since it started"));
    g_free(out);
    g_free(port);
    out = run_pgnfs(&status, usage);
    g_assert_cmpint(status, ==, 2);
    g_free(out);
    g_free(urlarg);
}

static void test_slow_log(void)
{
    char *log = tl_server_log(server);

    /* slow_ms = 1: a call that commits a transaction (CREATE, MKDIR, a
     * COMMIT that stores buffered data) takes longer. Every slow line has
     * the same fields, in order. */
    char **lines = g_strsplit(log, "\n", -1);
    unsigned slow = 0;
    for (char **l = lines; *l; l++) {
        const char *p = strstr(*l, "slow: prog=");
        if (!p)
            continue;
        slow++;
        GRegex *re =
            g_regex_new("slow: prog=(nfs3|mount3) proc=[A-Z0-9_?]+ client=127\\.0\\.0\\.1:[0-9]+ "
                        "xid=0x[0-9a-f]+ duration_ms=[0-9.]+ round_trips=[0-9]+ "
                        "status=[A-Z0-9_-]+",
                        0, 0, NULL);
        if (!g_regex_match(re, p, 0, NULL))
            g_error("a slow-call line not in the documented form: %s", *l);
        g_regex_unref(re);
    }
    g_assert_cmpuint(slow, >, 0);
    g_strfreev(lines);
    g_free(log);
}

static void test_du_find_sql(void)
{
    const char *ci = tl_server_conninfo(server);
    char *data = data_dir();
    int status;
    char *out;

    /* du -s -b: apparent sizes; default: stored bytes in KiB, rounded up. */
    out = run_pgnfs(&status, (const char *[]){"du", "--conninfo", ci, "-s", "-b", "/tree", NULL});
    g_assert_cmpint(status, ==, 0);
    g_assert_cmpstr(out, ==, "25100\t/tree\n");
    g_free(out);
    out = run_pgnfs(&status, (const char *[]){"du", "--data", data, "/tree", NULL});
    g_assert_cmpint(status, ==, 0);
    g_assert_cmpstr(out, ==, "5\t/tree/sub\n25\t/tree\n");
    g_free(out);

    out = run_pgnfs(&status,
                    (const char *[]){"find", "--conninfo", ci, "/tree", "-name", "*.bin", NULL});
    g_assert_cmpint(status, ==, 0);
    g_assert_cmpstr(out, ==, "/tree/one.bin\n/tree/sub/two.bin\n");
    g_free(out);
    out = run_pgnfs(&status, (const char *[]){"find", "--data", data, "/tree", "-type", "f",
                                              "-size", "-10k", "-name", "t[hw]*", NULL});
    g_assert_cmpint(status, ==, 0);
    g_assert_cmpstr(out, ==, "/tree/sub/three.txt\n/tree/sub/two.bin\n");
    g_free(out);
    out = run_pgnfs(&status, (const char *[]){"find", "--conninfo", ci, "/nowhere", NULL});
    g_assert_cmpint(status, ==, 1);
    g_free(out);
    out = run_pgnfs(&status, (const char *[]){"find", "--conninfo", ci, "-size", "x", NULL});
    g_assert_cmpint(status, ==, 2);
    g_free(out);

    out = run_pgnfs(&status, (const char *[]){"sql", "--data", data, "-At", "-c",
                                              "SELECT count(*) FROM naming n JOIN fileatt f"
                                              " ON f.inode = n.inode WHERE f.type = 1",
                                              NULL});
    g_assert_cmpint(status, ==, 0);
    g_assert_cmpstr(out, ==, "3\n");
    g_free(out);
    g_free(data);
}

/* pgnfs mkfs on a second database of the server's cluster: creates a
 * file system, refuses to replace it without --force, replaces it with. */
static void test_mkfs_cli(void)
{
    const char *ci = tl_server_conninfo(server);
    /* libpq: a keyword given twice takes the last value. */
    char *ci2 = g_strdup_printf("%s dbname=second", ci);
    int status;
    char *out, *err;

    out = run_pgnfs(
        &status, (const char *[]){"sql", "--conninfo", ci, "-c", "CREATE DATABASE second", NULL});
    g_assert_cmpint(status, ==, 0);
    g_free(out);
    out = run_pgnfs_err(&status, &err, (const char *[]){"mkfs", "--conninfo", ci2, NULL});
    g_assert_cmpint(status, ==, 0);
    g_assert_nonnull(strstr(out, "created a file system"));
    g_free(out);
    g_free(err);
    out = run_pgnfs_err(&status, &err, (const char *[]){"mkfs", "--conninfo", ci2, NULL});
    g_assert_cmpint(status, ==, 1);
    g_assert_nonnull(strstr(err, "already holds a pgnfs file system"));
    g_assert_nonnull(strstr(err, "--force"));
    g_free(out);
    g_free(err);
    out = run_pgnfs(&status, (const char *[]){"mkfs", "--conninfo", ci2, "--force", NULL});
    g_assert_cmpint(status, ==, 0);
    g_free(out);
    out = run_pgnfs(&status, (const char *[]){"mkfs", "--conninfo", ci2, "--frce", NULL});
    g_assert_cmpint(status, ==, 2);
    g_free(out);
    /* The new file system checks clean. */
    out = run_pgnfs(&status, (const char *[]){"fsck", "--conninfo", ci2, NULL});
    g_assert_cmpint(status, ==, 0);
    g_free(out);
    g_free(ci2);
}

/* pgnfs fsck's exit codes, as fsck(8): 0 clean, 4 problems left, 1 all
 * repaired, 8 operational error, 16 usage. The problem: a wrong link count
 * written in SQL. Runs last: the repair changes rows under the server. */
static void test_fsck_cli(void)
{
    const char *ci = tl_server_conninfo(server);
    char *data = data_dir();
    int status;
    char *out, *err;

    out = run_pgnfs(&status, (const char *[]){"fsck", "--conninfo", ci, NULL});
    g_assert_cmpint(status, ==, 0);
    g_free(out);
    out = run_pgnfs(&status, (const char *[]){"sql", "--conninfo", ci, "-c",
                                              "UPDATE fileatt SET nlink = 7 WHERE inode = "
                                              "(SELECT inode FROM naming WHERE name = 'three.txt')",
                                              NULL});
    g_assert_cmpint(status, ==, 0);
    g_free(out);
    /* Checking reads beside the running server, through its socket. */
    out = run_pgnfs_err(&status, &err, (const char *[]){"fsck", "--data", data, NULL});
    g_assert_cmpint(status, ==, 4);
    g_assert_true(g_str_has_prefix(out, "nlink "));
    g_assert_nonnull(strstr(err, "--repair"));
    g_free(out);
    g_free(err);
    /* -q: nothing on stdout or stderr; the status says it. */
    out = run_pgnfs_err(&status, &err, (const char *[]){"fsck", "--data", data, "-q", NULL});
    g_assert_cmpint(status, ==, 4);
    g_assert_cmpstr(out, ==, "");
    g_assert_cmpstr(err, ==, "");
    g_free(out);
    g_free(err);
    /* Repairing the embedded cluster needs its lock, which the server holds. */
    out = run_pgnfs(&status, (const char *[]){"fsck", "--data", data, "--repair", NULL});
    g_assert_cmpint(status, ==, 8);
    g_free(out);
    out =
        run_pgnfs_err(&status, &err, (const char *[]){"fsck", "--conninfo", ci, "--repair", NULL});
    g_assert_cmpint(status, ==, 1);
    g_assert_nonnull(strstr(err, "all repaired"));
    g_free(out);
    g_free(err);
    out = run_pgnfs(&status, (const char *[]){"sql", "--conninfo", ci, "-At", "-c",
                                              "SELECT nlink FROM fileatt WHERE inode = "
                                              "(SELECT inode FROM naming WHERE name = 'three.txt')",
                                              NULL});
    g_assert_cmpstr(out, ==, "1\n");
    g_free(out);
    out = run_pgnfs_err(&status, &err, (const char *[]){"fsck", "--conninfo", ci, "-q", NULL});
    g_assert_cmpint(status, ==, 0);
    g_assert_cmpstr(out, ==, "");
    g_assert_cmpstr(err, ==, "");
    g_free(out);
    g_free(err);
    out = run_pgnfs(&status, (const char *[]){"fsck", "--conninfo", ci, "--fix", NULL});
    g_assert_cmpint(status, ==, 16);
    g_free(out);
    /* A data directory with no cluster: said so, nothing created. */
    char *nowhere = g_build_filename(data, "nowhere", NULL);
    out = run_pgnfs_err(&status, &err, (const char *[]){"fsck", "--data", nowhere, NULL});
    g_assert_cmpint(status, ==, 8);
    g_assert_nonnull(strstr(err, "no embedded PostgreSQL cluster there"));
    g_assert_false(g_file_test(nowhere, G_FILE_TEST_EXISTS));
    g_free(out);
    g_free(err);
    out = run_pgnfs(&status, (const char *[]){"du", "--data", nowhere, "/", NULL});
    g_assert_cmpint(status, ==, 1);
    g_assert_false(g_file_test(nowhere, G_FILE_TEST_EXISTS));
    g_free(out);
    g_free(nowhere);
    g_free(data);
}

/* du's short options combine as du(1)'s do: -sh is -s -h, -sb is -s -b,
 * -d1 is -d 1 is --max-depth=1. */
static void test_du_combined(void)
{
    const char *ci = tl_server_conninfo(server);
    static const char *const pairs[][2][4] = {
        {{"-sh", NULL}, {"-s", "-h", NULL}},
        {{"-sb", NULL}, {"-s", "-b", NULL}},
        {{"-bhs", NULL}, {"-h", "-b", "-s", NULL}},
        {{"-d1", NULL}, {"-d", "1", NULL}},
        {{"--max-depth=1", NULL}, {"--max-depth", "1", NULL}},
        {{"-hd0", NULL}, {"-s", "-h", NULL}},
    };
    int st;

    for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++) {
        char *outs[2];
        for (int k = 0; k < 2; k++) {
            const char *args[10] = {"du", "--conninfo", ci};
            size_t n = 3;
            for (size_t j = 0; pairs[i][k][j]; j++)
                args[n++] = pairs[i][k][j];
            args[n++] = "/tree";
            outs[k] = run_pgnfs(&st, args);
            g_assert_cmpint(st, ==, 0);
        }
        g_assert_cmpstr(outs[0], ==, outs[1]);
        g_free(outs[0]);
        g_free(outs[1]);
    }
    char *out = run_pgnfs(&st, (const char *[]){"du", "--conninfo", ci, "-sb", "/tree", NULL});
    g_assert_cmpstr(out, ==, "25100\t/tree\n");
    g_free(out);
    out = run_pgnfs(&st, (const char *[]){"du", "--conninfo", ci, "-sh", "/tree", NULL});
    g_assert_true(g_str_has_suffix(out, "K\t/tree\n"));
    g_free(out);
}

/* find -ls shows setuid, setgid and sticky as ls -l does: s/S in the
 * owner's and group's x places, t/T in the others' (lower case when x is
 * set too). The modes are set by SETATTR as root. */
static void test_find_ls_modes(void)
{
    static const struct {
        const char *name;
        bool dir;
        uint32_t mode;
        const char *shows;
    } files[] = {
        {"suid-x", false, 04755, "-rwsr-xr-x"},  {"suid", false, 04644, "-rwSr--r--"},
        {"sgid-x", false, 02755, "-rwxr-sr-x"},  {"sgid", false, 02644, "-rw-r-Sr--"},
        {"all", false, 07777, "-rwsrwsrwt"},     {"none", false, 07000, "---S--S--T"},
        {"sticky-x", true, 01777, "drwxrwxrwt"}, {"sticky", true, 01770, "drwxrwx--T"},
        {"plain", false, 0640, "-rw-r-----"},
    };
    nr_ctx *c = nr_open(tl_server_port(server), NULL);
    nr_fh root, dir;
    MKDIR3res mk;
    int st;

    g_assert_nonnull(c);
    g_assert_cmpint(nr_mnt(c, "/", NULL, &root), ==, 0);
    g_assert_cmpint(nr_mkdir(c, &root, "modes", NULL, &mk), ==, NFS3_OK);
    dir = nr_fh_from(&mk.MKDIR3res_u.resok.obj.post_op_fh3_u.handle);
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        nr_fh fh;
        if (files[i].dir) {
            g_assert_cmpint(nr_mkdir(c, &dir, files[i].name, NULL, &mk), ==, NFS3_OK);
            fh = nr_fh_from(&mk.MKDIR3res_u.resok.obj.post_op_fh3_u.handle);
        } else {
            CREATE3res cr;
            g_assert_cmpint(nr_create(c, &dir, files[i].name, UNCHECKED, NULL, NULL, &cr), ==,
                            NFS3_OK);
            fh = nr_fh_from(&cr.CREATE3res_u.resok.obj.post_op_fh3_u.handle);
        }
        sattr3 sa = nr_sattr_mode(files[i].mode);
        g_assert_cmpint(nr_setattr(c, &fh, &sa, NULL, NULL), ==, NFS3_OK);
        nr_arena_clear(c);
    }
    nr_close(c);

    char *out = run_pgnfs(&st, (const char *[]){"find", "--data", tl_server_data_dir(server),
                                                "/modes", "-mindepth", "1", "-ls", NULL});
    g_assert_cmpint(st, ==, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        char *want = g_strdup_printf(" %s ", files[i].shows);
        char *path = g_strdup_printf(" /modes/%s\n", files[i].name);
        bool found = false;
        char **lines = g_strsplit(out, "\n", -1);
        for (char **l = lines; *l && !found; l++) {
            char *line = g_strconcat(*l, "\n", NULL);
            found = strstr(line, path) && strstr(line, want);
            g_free(line);
        }
        if (!found)
            g_error("find -ls does not show %s as %s:\n%s", files[i].name, files[i].shows, out);
        g_strfreev(lines);
        g_free(path);
        g_free(want);
    }
    g_free(out);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    metrics_port = tl_free_port();
    char *port = g_strdup_printf("metrics.port=%u", metrics_port);
    const char *const over[] = {"metrics.enable=true", port, "log.slow_ms=1",
                                "exports./fast=*(async)", NULL};
    server = tl_server_start(over);
    g_test_add_func("/admin/metrics", test_metrics);
    g_test_add_func("/admin/stats_cli", test_stats_cli);
    g_test_add_func("/admin/slow_log", test_slow_log);
    g_test_add_func("/admin/du_find_sql", test_du_find_sql);
    g_test_add_func("/admin/du_combined", test_du_combined);
    g_test_add_func("/admin/find_ls_modes", test_find_ls_modes);
    g_test_add_func("/admin/mkfs_cli", test_mkfs_cli);
    g_test_add_func("/admin/fsck_cli", test_fsck_cli);
    int rc = g_test_run();
    tl_server_stop(server);
    g_free(port);
    return rc;
}
