/*
 * test_xform.c -- guarded files through a real server and a real client
 * (libnfs): `pgnfs xform set` gives directories chains beside the running
 * server; files made in them round-trip random writes, reads and
 * truncations against a model, for every built-in chain; `pgnfs du` shows
 * compression (stored bytes) against --apparent-size; `pgnfs fsck` is
 * clean; a damaged stored chunk read by a restarted server (cold caches)
 * is NFS3ERR_IO, and fsck names it. Transformation links made with
 * `pgnfs xform link` are regular files to the client, read through their
 * chain, written through the inverse (or refused), sized as their base or
 * as computed, listed and shown. `pgnfs xform apply` killed with SIGKILL
 * half way leaves every file readable (in its old chain or its new one)
 * and a second run finishes the job.
 *
 * NOTES
 *   One server for the program, with an aes-256-gcm key file; ctest runs
 *   it once per storage layout (PGNFS_TEST_SERVER_SET).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "nfsraw.h"
#include "testlib.h"

#define TX_MAX (300u * 1024u)

static tl_server *server;
static char *key_dir, *key_path;

static const char *const chains[] = {
    "identity", "increment", "zstd", "lz4", "aes-256-gcm", "sha256", "zstd,aes-256-gcm,sha256",
};

/* Run `pgnfs ARGS...`; returns stdout (g_free), *status its exit status. */
static char *run_pgnfs(int *status, const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    char *out = NULL, *err = NULL;
    GError *gerr = NULL;
    int wait = 0;
    char *set = g_strdup_printf("xform.key_file=%s", key_path);

    g_ptr_array_add(argv, (char *)PGNFS_BIN);
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, (char *)*a);
    g_ptr_array_add(argv, (char *)"--conninfo");
    g_ptr_array_add(argv, (char *)tl_server_conninfo(server));
    g_ptr_array_add(argv, (char *)"--set");
    g_ptr_array_add(argv, set);
    g_ptr_array_add(argv, NULL);
    if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                      &wait, &gerr))
        g_error("cannot run %s: %s", PGNFS_BIN, gerr->message);
    *status = WIFEXITED(wait) ? WEXITSTATUS(wait) : -1;
    if (*status != 0)
        g_test_message("pgnfs %s exited %d: %s", args[0], *status, err);
    g_free(err);
    g_free(set);
    g_ptr_array_free(argv, TRUE);
    return out;
}

/* A libnfs context mounted on the export root. */
static struct nfs_context *mount_root(void)
{
    struct nfs_context *nfs = nfs_init_context();
    char *base = tl_server_url(server, "");
    char *url = g_strconcat(base, "&auto-traverse-mounts=0", NULL);
    struct nfs_url *u = nfs_parse_url_dir(nfs, url);

    g_assert_nonnull(u);
    g_assert_cmpint(nfs_mount(nfs, u->server, u->path), ==, 0);
    nfs_destroy_url(u);
    g_free(url);
    g_free(base);
    return nfs;
}

/* Make directory /name through the raw client. */
static void make_dir(const char *name)
{
    nr_ctx *c = nr_open(tl_server_port(server), NULL);
    nr_fh root;
    MKDIR3res mk;

    g_assert_nonnull(c);
    g_assert_cmpint(nr_mnt(c, "/", NULL, &root), ==, 0);
    g_assert_cmpint(nr_mkdir(c, &root, name, NULL, &mk), ==, NFS3_OK);
    nr_close(c);
}

static void fill(unsigned char *b, size_t n, bool text)
{
    static const char words[] = "transformation networks on file data, after MonA; ";

    for (size_t i = 0; i < n; i++)
        b[i] = text ? (unsigned char)words[(i * 7 + (i >> 9)) % (sizeof words - 1)]
                    : (unsigned char)g_random_int();
}

/* Read all of path through nfs into buf (at most max): its length. */
static int read_all(struct nfs_context *nfs, const char *path, unsigned char *buf, uint32_t max)
{
    struct nfsfh *fh;
    int n;

    g_assert_cmpint(nfs_open(nfs, path, O_RDONLY, &fh), ==, 0);
    n = nfs_pread(nfs, fh, 0, max, buf);
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    return n;
}

/* Random pwrite/pread/ftruncate of one file against a model. */
static void model_run(struct nfs_context *nfs, const char *path, bool text)
{
    unsigned char *model = g_malloc0(TX_MAX), *data = g_malloc(TX_MAX), *buf = g_malloc(TX_MAX);
    struct nfsfh *fh;
    uint64_t size = 0;

    g_assert_cmpint(nfs_creat(nfs, path, 0644, &fh), ==, 0);
    for (int i = 0; i < 120; i++) {
        int what = g_random_int_range(0, 10);

        if (what < 6) {
            uint32_t off = (uint32_t)g_random_int_range(0, TX_MAX - 1);
            uint32_t len = (uint32_t)g_random_int_range(1, (int)MIN(TX_MAX - off, 150000u));

            fill(data, len, text);
            g_assert_cmpint(nfs_pwrite(nfs, fh, off, len, data), ==, (int)len);
            if (off > size)
                memset(model + size, 0, off - size);
            memcpy(model + off, data, len);
            size = MAX(size, (uint64_t)off + len);
        } else if (what < 9) {
            uint32_t off = (uint32_t)g_random_int_range(0, TX_MAX);
            uint32_t len = (uint32_t)g_random_int_range(1, 100000);
            uint32_t want = off >= size ? 0 : (uint32_t)MIN(len, size - off);

            g_assert_cmpint(nfs_pread(nfs, fh, off, len, buf), ==, (int)want);
            g_assert_cmpmem(buf, want, model + off, want);
        } else {
            uint64_t ns = (uint64_t)g_random_int_range(0, TX_MAX);

            g_assert_cmpint(nfs_ftruncate(nfs, fh, ns), ==, 0);
            if (ns > size)
                memset(model + size, 0, ns - size);
            size = ns;
        }
    }
    g_assert_cmpint(nfs_fsync(nfs, fh), ==, 0);
    g_assert_cmpint(nfs_pread(nfs, fh, 0, TX_MAX, buf), ==, (int)size);
    g_assert_cmpmem(buf, size, model, size);
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    g_free(model);
    g_free(data);
    g_free(buf);
}

/* Every built-in chain on a directory of its own, set beside the running
 * server; a file made there round-trips against a model. */
static void test_chains(void)
{
    struct nfs_context *nfs;
    int status;
    char *out;

    for (size_t i = 0; i < G_N_ELEMENTS(chains); i++) {
        char *dir = g_strdup_printf("c%zu", i), *abs = g_strdup_printf("/c%zu", i);

        make_dir(dir);
        g_free(run_pgnfs(&status, (const char *[]){"xform", "set", abs, chains[i], NULL}));
        g_assert_cmpint(status, ==, 0);
        out = run_pgnfs(&status, (const char *[]){"xform", "show", abs, NULL});
        g_assert_cmpint(status, ==, 0);
        g_assert_nonnull(strstr(out, strchr(chains[i], ',') ? "aes-256-gcm" : chains[i]));
        g_free(out);
        g_free(dir);
        g_free(abs);
    }
    nfs = mount_root();
    for (size_t i = 0; i < G_N_ELEMENTS(chains); i++) {
        char *path = g_strdup_printf("/c%zu/f", i);

        g_test_message("chain %s", chains[i]);
        model_run(nfs, path, i % 2 == 0);
        g_free(path);
    }
    nfs_destroy_context(nfs);
    /* The files were made guarded (SQL sees their chains). */
    out = run_pgnfs(&status, (const char *[]){"xform", "show", "/c2/f", NULL});
    g_assert_cmpint(status, ==, 0);
    g_assert_cmpstr(out, ==, "zstd:level=3\n");
    g_free(out);
    out = run_pgnfs(&status, (const char *[]){"fsck", NULL});
    g_assert_cmpint(status, ==, 0);
    g_free(out);
}

/* du shows what the database stores: zstd on text stores far less than
 * the apparent size. */
static void test_du(void)
{
    struct nfs_context *nfs;
    unsigned char *data = g_malloc(TX_MAX);
    struct nfsfh *fh;
    unsigned long stored, apparent;
    int status;
    char *out;

    make_dir("z");
    g_free(run_pgnfs(&status, (const char *[]){"xform", "set", "/z", "zstd", NULL}));
    g_assert_cmpint(status, ==, 0);
    nfs = mount_root();
    fill(data, TX_MAX, true);
    g_assert_cmpint(nfs_creat(nfs, "/z/text", 0644, &fh), ==, 0);
    g_assert_cmpint(nfs_pwrite(nfs, fh, 0, TX_MAX, data), ==, (int)TX_MAX);
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    nfs_destroy_context(nfs);
    out = run_pgnfs(&status, (const char *[]){"du", "-s", "-b", "/z", NULL});
    g_assert_cmpint(status, ==, 0);
    apparent = strtoul(out, NULL, 10);
    g_free(out);
    out = run_pgnfs(&status, (const char *[]){"du", "-s", "/z", NULL});
    g_assert_cmpint(status, ==, 0);
    stored = strtoul(out, NULL, 10) * 1024;
    g_free(out);
    g_test_message("du: %lu bytes apparent, about %lu stored", apparent, stored);
    g_assert_cmpuint(apparent, ==, TX_MAX);
    g_assert_cmpuint(stored, <, apparent * 4 / 10);
    g_free(data);
}

/* A damaged stored chunk: after a restart (cold caches) the read of its
 * range fails with an I/O error, others work; fsck names it. */
static void test_corrupt(void)
{
    struct nfs_context *nfs;
    unsigned char *data = g_malloc(TX_MAX), *buf = g_malloc(TX_MAX);
    struct nfsfh *fh;
    PGconn *pg;
    PGresult *r;
    int status;
    char *out;

    make_dir("s");
    g_free(run_pgnfs(&status, (const char *[]){"xform", "set", "/s", "sha256", NULL}));
    g_assert_cmpint(status, ==, 0);
    nfs = mount_root();
    fill(data, TX_MAX, false);
    g_assert_cmpint(nfs_creat(nfs, "/s/f", 0644, &fh), ==, 0);
    g_assert_cmpint(nfs_pwrite(nfs, fh, 0, TX_MAX, data), ==, (int)TX_MAX);
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    nfs_destroy_context(nfs);
    pg = PQconnectdb(tl_server_conninfo(server));
    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    r = PQexec(pg,
               "CREATE FUNCTION pg_temp.flip(x bytea) RETURNS bytea LANGUAGE sql AS"
               " $f$ SELECT set_byte(x, length(x) - 9, 255 - get_byte(x, length(x) - 9)) $f$;"
               "CREATE FUNCTION pg_temp.damage(x bytea) RETURNS bytea LANGUAGE sql AS"
               " $f$ SELECT CASE WHEN (SELECT encoding FROM pgnfs_fs) = 'base64'"
               " THEN pgnfs_b64_enc(pg_temp.flip(pgnfs_b64_dec(x))) ELSE pg_temp.flip(x) END $f$;"
               "DO $$ DECLARE ino bigint; BEGIN"
               " SELECT n.inode INTO ino FROM naming n JOIN naming d ON d.inode = n.parent"
               "  WHERE d.name = 's' AND n.name = 'f';"
               " IF pgnfs_data_tab(ino) THEN"
               "  EXECUTE format('UPDATE %I SET data = pg_temp.damage(data) WHERE chunk = 1',"
               "   pgnfs_inv_name(ino));"
               " ELSE"
               "  UPDATE allfiles SET data = pg_temp.damage(data) WHERE inode = ino AND chunk = 1;"
               " END IF; END $$");
    g_assert_cmpint(PQresultStatus(r), ==, PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(pg);
    tl_server_restart(server);
    out = run_pgnfs(&status, (const char *[]){"fsck", NULL});
    g_assert_cmpint(status, ==, 4);
    g_assert_nonnull(strstr(out, "xform-chunk"));
    g_free(out);
    nfs = mount_root();
    g_assert_cmpint(nfs_open(nfs, "/s/f", O_RDONLY, &fh), ==, 0);
    g_assert_cmpint(nfs_pread(nfs, fh, 0, 1000, buf), ==, 1000);
    g_assert_cmpmem(buf, 1000, data, 1000);
    /* Chunk 1 of the default 64 KiB chunks. */
    g_assert_cmpint(nfs_pread(nfs, fh, 65536 + 100, 1000, buf), <, 0);
    g_assert_cmpint(nfs_pread(nfs, fh, 3 * 65536, 1000, buf), ==, 1000);
    g_assert_cmpmem(buf, 1000, data + 3 * 65536, 1000);
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    /* Writing the whole chunk again mends it (no old bytes needed), so
     * that fsck is clean for the tests after this one. */
    g_assert_cmpint(nfs_open(nfs, "/s/f", O_WRONLY, &fh), ==, 0);
    g_assert_cmpint(nfs_pwrite(nfs, fh, 65536, 65536, data + 65536), ==, 65536);
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    g_assert_cmpint(read_all(nfs, "/s/f", buf, TX_MAX), ==, (int)TX_MAX);
    g_assert_cmpmem(buf, TX_MAX, data, TX_MAX);
    nfs_destroy_context(nfs);
    out = run_pgnfs(&status, (const char *[]){"fsck", NULL});
    g_assert_cmpint(status, ==, 0);
    g_free(out);
    g_free(data);
    g_free(buf);
}

/* Links through NFS: a writable increment link and a read-only zstd link
 * of one base; attributes follow the base; listed and shown. */
static void test_links(void)
{
    struct nfs_context *nfs;
    unsigned char *data = g_malloc(TX_MAX), *buf = g_malloc(2 * TX_MAX);
    struct nfs_stat_64 st, zst;
    struct nfsdir *dir;
    struct nfsdirent *de;
    struct nfsfh *fh;
    int status, seen = 0;
    char *out;

    make_dir("lk");
    nfs = mount_root();
    fill(data, TX_MAX, true);
    g_assert_cmpint(nfs_creat(nfs, "/lk/base", 0644, &fh), ==, 0);
    g_assert_cmpint(nfs_pwrite(nfs, fh, 0, TX_MAX / 2, data), ==, (int)(TX_MAX / 2));
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    g_free(run_pgnfs(
        &status, (const char *[]){"xform", "link", "/lk/base", "/lk/shift", "increment", NULL}));
    g_assert_cmpint(status, ==, 0);
    g_free(run_pgnfs(&status,
                     (const char *[]){"xform", "link", "/lk/base", "/lk/base.zst", "zstd", NULL}));
    g_assert_cmpint(status, ==, 0);
    /* A link through aes-256-gcm is refused, with the reason. */
    g_free(run_pgnfs(&status,
                     (const char *[]){"xform", "link", "/lk/base", "/lk/x", "aes-256-gcm", NULL}));
    g_assert_cmpint(status, ==, 1);
    /* A regular file of the base's size, its bytes plus one. */
    g_assert_cmpint(nfs_stat64(nfs, "/lk/shift", &st), ==, 0);
    g_assert_true(S_ISREG(st.nfs_mode));
    g_assert_cmpuint(st.nfs_size, ==, TX_MAX / 2);
    g_assert_cmpint(read_all(nfs, "/lk/shift", buf, 2 * TX_MAX), ==, (int)(TX_MAX / 2));
    for (uint32_t i = 0; i < TX_MAX / 2; i++)
        g_assert_cmpuint(buf[i], ==, (unsigned char)(data[i] + 1));
    /* Written through the link: the base gets the bytes minus one, and
     * grows; the link follows. */
    g_assert_cmpint(nfs_open(nfs, "/lk/shift", O_WRONLY, &fh), ==, 0);
    for (uint32_t i = 0; i < TX_MAX; i++)
        buf[i] = (unsigned char)(data[i] + 1);
    g_assert_cmpint(nfs_pwrite(nfs, fh, 1000, TX_MAX - 1000, buf + 1000), ==, (int)(TX_MAX - 1000));
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    g_assert_cmpint(read_all(nfs, "/lk/base", buf, 2 * TX_MAX), ==, (int)TX_MAX);
    g_assert_cmpmem(buf, TX_MAX, data, TX_MAX);
    g_assert_cmpint(nfs_stat64(nfs, "/lk/shift", &st), ==, 0);
    g_assert_cmpuint(st.nfs_size, ==, TX_MAX);
    /* The zstd link: read-only, its size computed (text compresses). */
    g_assert_cmpint(nfs_stat64(nfs, "/lk/base.zst", &zst), ==, 0);
    g_assert_cmpuint(zst.nfs_size, >, 0);
    g_assert_cmpuint(zst.nfs_size, <, TX_MAX / 4);
    g_assert_cmpuint(zst.nfs_mode & 0222, ==, 0);
    g_assert_cmpint(read_all(nfs, "/lk/base.zst", buf, 2 * TX_MAX), ==, (int)zst.nfs_size);
    g_assert_cmpint(nfs_open(nfs, "/lk/base.zst", O_RDONLY, &fh), ==, 0);
    g_assert_cmpint(nfs_pwrite(nfs, fh, 0, 1, "x"), <, 0);
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    /* READDIRPLUS shows both links as regular files of those sizes. */
    g_assert_cmpint(nfs_opendir(nfs, "/lk", &dir), ==, 0);
    while ((de = nfs_readdir(nfs, dir)) != NULL) {
        if (strcmp(de->name, "shift") == 0) {
            g_assert_cmpuint(de->size, ==, TX_MAX);
            seen++;
        } else if (strcmp(de->name, "base.zst") == 0) {
            g_assert_cmpuint(de->size, ==, zst.nfs_size);
            seen++;
        }
    }
    nfs_closedir(nfs, dir);
    g_assert_cmpint(seen, ==, 2);
    nfs_destroy_context(nfs);
    out = run_pgnfs(&status, (const char *[]){"xform", "list", "--links", NULL});
    g_assert_cmpint(status, ==, 0);
    g_assert_nonnull(strstr(out, "/lk/shift /lk/base increment\n"));
    g_assert_nonnull(strstr(out, "/lk/base.zst /lk/base zstd:level=3 read-only\n"));
    g_free(out);
    out = run_pgnfs(&status, (const char *[]){"xform", "show", "/lk/shift", NULL});
    g_assert_cmpstr(out, ==, "link to /lk/base through increment\n");
    g_free(out);
    out = run_pgnfs(&status, (const char *[]){"fsck", NULL});
    g_assert_cmpint(status, ==, 0);
    g_free(out);
    g_free(data);
    g_free(buf);
}

/* The files of the apply test: distinct text of distinct lengths. */
#define KILL_FILES 60
static void kill_data(unsigned char *b, int i, uint32_t *len)
{
    *len = TX_MAX / 2 + (uint32_t)i * 997;
    fill(b, *len, true);
    memcpy(b, &i, sizeof i);
}

/* Count the files in /k whose chain is their directory's (SQL). */
static long kill_converted(void)
{
    PGconn *pg = PQconnectdb(tl_server_conninfo(server));
    PGresult *r;
    long n;

    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    r = PQexec(pg, "SELECT count(*) FROM naming n JOIN fileatt f ON f.inode = n.inode"
                   " JOIN naming d ON d.inode = n.parent JOIN fileatt df ON df.inode = d.inode"
                   " WHERE d.name = 'k' AND coalesce(f.chain, 0) = df.chain");
    g_assert_cmpint(PQresultStatus(r), ==, PGRES_TUPLES_OK);
    n = strtol(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    PQfinish(pg);
    return n;
}

/* Every file of /k reads back whole through a restarted server (cold
 * caches: every chunk is decoded from what is stored). */
static void kill_check(void)
{
    unsigned char *want = g_malloc(TX_MAX * 2), *buf = g_malloc(TX_MAX * 2);
    struct nfs_context *nfs;

    tl_server_restart(server);
    nfs = mount_root();
    for (int i = 0; i < KILL_FILES; i++) {
        char *path = g_strdup_printf("/k/f%d", i);
        uint32_t len;

        kill_data(want, i, &len);
        g_assert_cmpint(read_all(nfs, path, buf, 2 * TX_MAX), ==, (int)len);
        g_assert_cmpmem(buf, len, want, len);
        g_free(path);
    }
    nfs_destroy_context(nfs);
    g_free(want);
    g_free(buf);
}

/* pgnfs xform apply killed with SIGKILL after a few files: every file is
 * whole in its old chain or its new one; a second apply finishes. */
static void test_apply_kill(void)
{
    unsigned char *data = g_malloc(TX_MAX * 2);
    char *set = g_strdup_printf("xform.key_file=%s", key_path);
    const char *argv[] = {PGNFS_BIN, "xform",      "apply",
                          "/k",      "--conninfo", tl_server_conninfo(server),
                          "--set",   set,          NULL};
    struct nfs_context *nfs;
    struct nfsfh *fh;
    GError *gerr = NULL;
    GPid pid;
    int out_fd, status, lines = 0;
    long before, after;
    char line[1024], *out;
    FILE *f;

    make_dir("k");
    nfs = mount_root();
    for (int i = 0; i < KILL_FILES; i++) {
        char *path = g_strdup_printf("/k/f%d", i);
        uint32_t len;

        kill_data(data, i, &len);
        g_assert_cmpint(nfs_creat(nfs, path, 0644, &fh), ==, 0);
        g_assert_cmpint(nfs_pwrite(nfs, fh, 0, len, data), ==, (int)len);
        g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
        g_free(path);
    }
    nfs_destroy_context(nfs);
    /* A slow chain: each file takes a while to rewrite. */
    g_free(run_pgnfs(&status, (const char *[]){"xform", "set", "/k",
                                               "zstd:level=19,sha256,"
                                               "aes-256-gcm",
                                               NULL}));
    g_assert_cmpint(status, ==, 0);
    g_assert_cmpint(kill_converted(), ==, 0);
    if (!g_spawn_async_with_pipes(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                  &pid, NULL, &out_fd, NULL, &gerr))
        g_error("cannot run %s: %s", PGNFS_BIN, gerr->message);
    f = fdopen(out_fd, "r");
    g_assert_nonnull(f);
    while (lines < 3 && fgets(line, sizeof line, f))
        lines++;
    g_assert_cmpint(lines, ==, 3);
    g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_assert_true(WIFSIGNALED(status));
    fclose(f);
    g_spawn_close_pid(pid);
    before = kill_converted();
    g_test_message("killed after %ld of %d files", before, KILL_FILES);
    g_assert_cmpint(before, >=, 3);
    g_assert_cmpint(before, <, KILL_FILES);
    kill_check();
    /* The second run does the rest, and only the rest. */
    out = run_pgnfs(&status, (const char *[]){"xform", "apply", "/k", NULL});
    g_assert_cmpint(status, ==, 0);
    lines = 0;
    for (const char *p = out; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    g_free(out);
    after = kill_converted();
    g_assert_cmpint(after, ==, KILL_FILES);
    g_assert_cmpint(lines, ==, KILL_FILES - before);
    kill_check();
    out = run_pgnfs(&status, (const char *[]){"fsck", NULL});
    g_assert_cmpint(status, ==, 0);
    g_free(out);
    g_free(set);
    g_free(data);
}

int main(int argc, char **argv)
{
    unsigned char k[32];
    int fd;

    g_test_init(&argc, &argv, NULL);
    key_dir = g_dir_make_tmp("pgnfs-xfkey-XXXXXX", NULL);
    key_path = g_build_filename(key_dir, "key", NULL);
    for (size_t i = 0; i < sizeof k; i++)
        k[i] = (unsigned char)g_random_int();
    fd = open(key_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(write(fd, k, sizeof k), ==, (ssize_t)sizeof k);
    close(fd);
    char *set = g_strdup_printf("xform.key_file=%s", key_path);
    const char *const over[] = {set, NULL};
    server = tl_server_start(over);
    g_test_add_func("/xform/chains", test_chains);
    g_test_add_func("/xform/du", test_du);
    g_test_add_func("/xform/corrupt", test_corrupt);
    g_test_add_func("/xform/links", test_links);
    g_test_add_func("/xform/apply-kill", test_apply_kill);
    int rc = g_test_run();
    tl_server_stop(server);
    unlink(key_path);
    rmdir(key_dir);
    g_free(set);
    g_free(key_path);
    g_free(key_dir);
    return rc;
}
