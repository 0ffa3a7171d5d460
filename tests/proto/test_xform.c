/*
 * test_xform.c -- guarded files through a real server and a real client
 * (libnfs): `pgnfs xform set` gives directories chains beside the running
 * server; files made in them round-trip random writes, reads and
 * truncations against a model, for every built-in chain; `pgnfs du` shows
 * compression (stored bytes) against --apparent-size; `pgnfs fsck` is
 * clean; a damaged stored chunk read by a restarted server (cold caches)
 * is NFS3ERR_IO, and fsck names it.
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
    nfs_destroy_context(nfs);
    g_free(data);
    g_free(buf);
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
    int rc = g_test_run();
    tl_server_stop(server);
    unlink(key_path);
    rmdir(key_dir);
    g_free(set);
    g_free(key_path);
    g_free(key_dir);
    return rc;
}
