/*
 * test_xform.c -- guarded files (dbfs_xf.c, dbfs_xf_write.c): every
 * built-in chain (and the example plug-ins) round-trips random writes at random offsets, unstable
 * writes and truncations against a model of the file (a cold server's first
 * read, its chain met for the first time, is one round trip); the root's chain
 * from the configuration, inheritance at create and mkdir; `used` is what
 * the database stores (compression shows); a damaged stored chunk is an
 * I/O error, never wrong bytes; a wrong key and a chain that does not make
 * are refused at open; a new file's first store needs no old bytes.
 *
 * Runs once per storage variant (tests/dbfs/CMakeLists.txt: PGNFS_TEST_MKFS).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <libpq-fe.h>

#include "schema_files.h"
#include "tx.h"

/* Every built-in chain, with and without the buffer cache and write-back:
 * random operations against a model; then the same file read by a
 * second, cold server. */
static void test_roundtrip(void)
{
    static const char *const chains[] = {
        "identity",
        "increment",
        "zstd",
        "lz4",
        "aes-256-gcm",
        "sha256",
        "zstd,aes-256-gcm,sha256",
        "identity,increment,increment,lz4,sha256",
        /* the example plug-ins (contrib/xform, loaded with dlopen) */
        "uidentity,uincrement,zstd",
    };

    tx_plugin_dir = XF_CONTRIB_PLUGIN_DIR;
    for (size_t i = 0; i < G_N_ELEMENTS(chains); i++) {
        for (int cache = 0; cache < 2; cache++) {
            tx_env e;
            dbfs_cred root = td_root();
            dbfs_attr f;
            td_fs cold;
            unsigned char *model = g_malloc(TX_MAX), *buf = g_malloc(TX_MAX);
            uint32_t n;
            bool eof;

            g_test_message("chain %s, %s", chains[i], cache ? "caches" : "no caches");
            tx_env_open(&e, chains[i], cache);
            f = td_create(&e.t, &root, e.t.root, "f", 0644);
            g_assert_cmpint(tx_chain_of(e.conninfo, f.ino), !=, 0);
            g_assert_cmpint(tx_chain_of(e.conninfo, f.ino), ==,
                            tx_chain_of(e.conninfo, DBFS_ROOT_INO));
            tx_model_run(&e.t, td_fh(&f), 150, i % 2 == 0);
            /* A cold server reads the same bytes. */
            f = td_getattr(&e.t, td_fh(&f));
            td_read(&e.t, &root, td_fh(&f), 0, model, (uint32_t)f.size);
            td_rc(tx_open_fs(&cold, e.conninfo, NULL, e.key, false), 0);
            td_trips(&cold);
            td_rc(dbfs_read(cold.c, &root, td_fh(&f), 0, TX_MAX, buf, &n, &eof, NULL), 0);
            /* The chain it meets first comes with the read: no query of its own. */
            g_assert_cmpuint(td_trips(&cold), ==, 1);
            g_assert_cmpuint(n, ==, f.size);
            g_assert_cmpmem(buf, n, model, f.size);
            td_close(&cold);
            tx_env_close(&e);
            g_free(model);
            g_free(buf);
        }
    }
    tx_plugin_dir = NULL;
}

/* Directories inherit at mkdir, files at create; unguarded files stay
 * unguarded (chain NULL) and their stored bytes are the plain ones. */
static void test_inherit(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    dbfs_attr d, sub, f;

    tx_env_open(&e, NULL, false);
    f = td_create(&e.t, &root, e.t.root, "plain", 0644);
    td_write(&e.t, &root, td_fh(&f), 0, "hello", 5);
    g_assert_cmpint(tx_chain_of(e.conninfo, f.ino), ==, 0);
    td_close(&e.t);
    td_rc(tx_open_fs(&e.t, e.conninfo, "lz4", e.key, false), 0);
    d = td_mkdir(&e.t, &root, e.t.root, "d", 0755);
    sub = td_mkdir(&e.t, &root, td_fh(&d), "sub", 0755);
    f = td_create(&e.t, &root, td_fh(&sub), "g", 0644);
    g_assert_cmpint(tx_chain_of(e.conninfo, d.ino), ==, tx_chain_of(e.conninfo, DBFS_ROOT_INO));
    g_assert_cmpint(tx_chain_of(e.conninfo, sub.ino), ==, tx_chain_of(e.conninfo, d.ino));
    g_assert_cmpint(tx_chain_of(e.conninfo, f.ino), ==, tx_chain_of(e.conninfo, d.ino));
    /* The file made before keeps its plain bytes and its plain path. */
    f = td_lookup(&e.t, &root, e.t.root, "plain");
    g_assert_cmpint(tx_chain_of(e.conninfo, f.ino), ==, 0);
    {
        char buf[5];

        td_read(&e.t, &root, td_fh(&f), 0, buf, 5);
        g_assert_cmpmem(buf, 5, "hello", 5);
    }
    tx_env_close(&e);
}

/* A file system made before chains (schema version 3) keeps working: the
 * upgrade adds the chain column, its files stay unguarded and readable,
 * and a root chain set afterwards guards only new files. */
static void test_upgrade(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    dbfs_attr f, g;
    char buf[5];

    tx_env_open(&e, NULL, false);
    f = td_create(&e.t, &root, e.t.root, "old", 0644);
    td_write(&e.t, &root, td_fh(&f), 0, "older", 5);
    td_close(&e.t);
    td_sql(e.conninfo, /* what 008 (snapshots: first, its views read
                        * chain) and 009 (in-database stages, links) add */
           TD_SQL_DROP_SNAPSHOTS
           " DROP TABLE pgnfs_xform_link;"
           " ALTER TABLE fileatt DROP COLUMN chain_sql, DROP COLUMN xlinked;"
           " DROP TABLE pgnfs_xform_chain, pgnfs_xform_epoch;"
           " DROP TRIGGER IF EXISTS pgnfs_xf_inherit ON naming;"
           " ALTER TABLE fileatt DROP COLUMN chain;"
           " ALTER TABLE pgnfs_fs DROP COLUMN xform_key_id;"
           /* and what 005 and 010 (several frontends) add */
           " DROP TABLE pgnfs_frontends, pgnfs_inval_log, pgnfs_inval_trim;"
           " DROP FUNCTION pgnfs_inval_fileatt, pgnfs_inval_naming,"
           " pgnfs_inval_add CASCADE;"
           " UPDATE pgnfs_fs SET schema_version = 3, functions_digest = 'version 3'");
    td_rc(tx_open_fs(&e.t, e.conninfo, "zstd", e.key, false), 0);
    g_assert_cmpint(dbfs_get_info(e.t.fs)->schema_version, ==, schema_version);
    f = td_lookup(&e.t, &root, e.t.root, "old");
    td_read(&e.t, &root, td_fh(&f), 0, buf, 5);
    g_assert_cmpmem(buf, 5, "older", 5);
    g_assert_cmpint(tx_chain_of(e.conninfo, f.ino), ==, 0);
    g = td_create(&e.t, &root, e.t.root, "new", 0644);
    td_write(&e.t, &root, td_fh(&g), 0, "newer", 5);
    g_assert_cmpint(tx_chain_of(e.conninfo, g.ino), !=, 0);
    td_read(&e.t, &root, td_fh(&g), 0, buf, 5);
    g_assert_cmpmem(buf, 5, "newer", 5);
    tx_env_close(&e);
}

/* used is what the database stores: zstd on text stores far less than
 * the plain bytes; the size stays the plain size. */
static void test_used(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    unsigned char *data = g_malloc(TX_MAX);
    dbfs_attr f;
    char *q;

    tx_env_open(&e, "zstd", false);
    f = td_create(&e.t, &root, e.t.root, "text", 0644);
    memset(data, 'a', TX_MAX);
    for (size_t i = 0; i < TX_MAX; i += 50)
        memcpy(data + i, "compress me", 11 < TX_MAX - i ? 11 : TX_MAX - i);
    td_write(&e.t, &root, td_fh(&f), 0, data, TX_MAX);
    f = td_getattr(&e.t, td_fh(&f));
    g_assert_cmpuint(f.size, ==, TX_MAX);
    g_assert_cmpuint(f.used, <, TX_MAX / 4);
    g_assert_cmpuint(f.used, >, 0);
    /* The SQL views cannot decode it: pgnfs.content leaves it out, and
     * reading it by inode is refused with feature_not_supported. */
    g_assert_cmpint(td_sql(e.conninfo, "SELECT count(*) FROM pgnfs.content WHERE path = '/text'"),
                    ==, 0);
    q = g_strdup_printf("DO $$ BEGIN PERFORM pgnfs.cat(%" PRIu64 ");"
                        " RAISE EXCEPTION 'pgnfs.cat read a transformed file';"
                        " EXCEPTION WHEN feature_not_supported THEN NULL; END $$",
                        f.ino);
    td_sql(e.conninfo, q);
    g_free(q);
    g_free(data);
    tx_env_close(&e);
}

/* Damage one stored byte of a sha256-guarded chunk: a cold read of that
 * chunk is -EIO (and returns no byte of it); the other chunks read fine. */
static void test_corrupt(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    unsigned char *data = g_malloc(3 * TX_CHUNK), *buf = g_malloc(3 * TX_CHUNK);
    dbfs_attr f;
    td_fs cold;
    uint32_t n;
    bool eof;
    char *q;

    tx_env_open(&e, "sha256", false);
    f = td_create(&e.t, &root, e.t.root, "f", 0644);
    tx_fill(data, 3 * TX_CHUNK, false);
    td_write(&e.t, &root, td_fh(&f), 0, data, 3 * TX_CHUNK);
    /* Flip a byte near the end of chunk 1, wherever the layout keeps it. */
    q = g_strdup_printf(
        "CREATE FUNCTION pg_temp.tx_flip(x bytea) RETURNS bytea LANGUAGE sql AS"
        " $f$ SELECT set_byte(x, length(x) - 5, 255 - get_byte(x, length(x) - 5)) $f$;"
        "CREATE FUNCTION pg_temp.tx_damage(x bytea) RETURNS bytea LANGUAGE sql AS"
        " $f$ SELECT CASE WHEN (SELECT encoding FROM pgnfs_fs) = 'base64'"
        " THEN pgnfs_b64_enc(pg_temp.tx_flip(pgnfs_b64_dec(x))) ELSE pg_temp.tx_flip(x) END $f$;"
        "DO $$ BEGIN"
        " IF pgnfs_data_tab(%1$" G_GUINT64_FORMAT ") THEN"
        "  EXECUTE format('UPDATE %%I SET data = pg_temp.tx_damage(data) WHERE chunk = 1',"
        "   pgnfs_inv_name(%1$" G_GUINT64_FORMAT "));"
        " ELSE"
        "  UPDATE allfiles SET data = pg_temp.tx_damage(data)"
        "   WHERE inode = %1$" G_GUINT64_FORMAT " AND chunk = 1;"
        " END IF; END $$",
        f.ino);
    td_sql(e.conninfo, q);
    g_free(q);
    td_rc(tx_open_fs(&cold, e.conninfo, NULL, e.key, false), 0);
    td_rc(dbfs_read(cold.c, &root, td_fh(&f), 0, TX_CHUNK, buf, &n, &eof, NULL), 0);
    g_assert_cmpmem(buf, n, data, TX_CHUNK);
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "xform: file * chunk 1: *sha256*");
    td_rc(dbfs_read(cold.c, &root, td_fh(&f), TX_CHUNK, TX_CHUNK, buf, &n, &eof, NULL), -EIO);
    g_test_assert_expected_messages();
    /* fsck's check names the chunk. */
    {
        uint64_t problems = 0;
        int seen = 0;

        td_rc(dbfs_xform_check(cold.fs, tx_count_problem, &seen, &problems), 0);
        g_assert_cmpuint(problems, ==, 1);
        g_assert_cmpint(seen, ==, 1);
    }
    td_rc(dbfs_read(cold.c, &root, td_fh(&f), 2 * TX_CHUNK, TX_CHUNK, buf, &n, &eof, NULL), 0);
    g_assert_cmpmem(buf, n, data + 2 * TX_CHUNK, TX_CHUNK);
    /* A partial write into the damaged chunk stores nothing. */
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "xform: file * chunk 1: *sha256*");
    td_rc(dbfs_write(cold.c, &root, td_fh(&f), TX_CHUNK + 10, "x", 1, DBFS_FILE_SYNC, NULL, NULL),
          -EIO);
    g_test_assert_expected_messages();
    td_close(&cold);
    g_free(data);
    g_free(buf);
    tx_env_close(&e);
}

/* pgnfs xform set / show: a directory's chain for new files; a file with
 * data rewritten under each chain in turn (its bytes unchanged, used
 * following the chain); refusals with their reason; the check finds no
 * problem in a sound file system. */
static void test_admin(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    unsigned char *data = g_malloc(TX_MAX), *buf = g_malloc(TX_MAX);
    static const char *const chains[] = {"zstd", "aes-256-gcm,sha256", "none", "lz4"};
    uint64_t problems = 1;
    int seen = 0;
    char msg[512], *text;
    dbfs_attr d, f, g;

    tx_env_open(&e, NULL, true);
    d = td_mkdir(&e.t, &root, e.t.root, "d", 0755);
    td_rc(dbfs_xform_set(e.t.fs, "/d", "zstd:level=5,sha256", msg, sizeof msg), 0);
    td_rc(dbfs_xform_show(e.t.fs, "/d", &text), 0);
    g_assert_cmpstr(text, ==, "zstd:level=5,sha256");
    g_free(text);
    g = td_create(&e.t, &root, td_fh(&d), "g", 0644);
    g_assert_cmpint(tx_chain_of(e.conninfo, g.ino), ==, tx_chain_of(e.conninfo, d.ino));
    /* A plain file with data, rewritten chain after chain. */
    f = td_create(&e.t, &root, e.t.root, "f", 0644);
    memset(data, 'x', TX_MAX);
    tx_fill(data, TX_MAX / 2, true);
    td_write(&e.t, &root, td_fh(&f), 0, data, TX_MAX);
    for (size_t i = 0; i < G_N_ELEMENTS(chains); i++) {
        td_rc(dbfs_xform_set(e.t.fs, "/f", chains[i], msg, sizeof msg), 0);
        td_rc(dbfs_xform_show(e.t.fs, "/f", &text), 0);
        g_test_message("%s -> %s", chains[i], text);
        g_free(text);
        /* The server reads and writes it under its new chain. */
        td_read(&e.t, &root, td_fh(&f), 0, buf, TX_MAX);
        g_assert_cmpmem(buf, TX_MAX, data, TX_MAX);
        /* A whole chunk: written at once under the chain the server last
         * saw, which the database refuses when it is no longer the file's. */
        memset(data + 2 * TX_CHUNK, (int)('A' + i), TX_CHUNK);
        td_write(&e.t, &root, td_fh(&f), 2 * TX_CHUNK, data + 2 * TX_CHUNK, TX_CHUNK);
        data[TX_CHUNK + 3] = (unsigned char)('a' + i);
        td_write(&e.t, &root, td_fh(&f), TX_CHUNK + 3, data + TX_CHUNK + 3, 1);
    }
    f = td_getattr(&e.t, td_fh(&f));
    g_assert_cmpuint(f.size, ==, TX_MAX);
    td_read(&e.t, &root, td_fh(&f), 0, buf, TX_MAX);
    g_assert_cmpmem(buf, TX_MAX, data, TX_MAX);
    /* Refusals say why. */
    g_assert_cmpint(dbfs_xform_set(e.t.fs, "/f", "zstd:level=99", msg, sizeof msg), ==, -EINVAL);
    g_assert_nonnull(strstr(msg, "level"));
    g_assert_cmpint(dbfs_xform_set(e.t.fs, "/nosuch", "zstd", msg, sizeof msg), ==, -ENOENT);
    g_assert_cmpint(dbfs_xform_set(e.t.fs, "/d", "nosuchstage", msg, sizeof msg), ==, -ENOENT);
    g_assert_nonnull(strstr(msg, "nosuchstage"));
    td_rc(dbfs_xform_check(e.t.fs, tx_count_problem, &seen, &problems), 0);
    g_assert_cmpuint(problems, ==, 0);
    g_assert_cmpint(seen, ==, 0);
    g_free(data);
    g_free(buf);
    tx_env_close(&e);
}

static void tx_line(const char *line, void *arg)
{
    (void)arg;
    g_test_message("%s", line);
}

/* apply: files made before their directory's chain was set (and those in
 * subdirectories) are rewritten under it, contents unchanged; a second
 * run has nothing to do. */
static void test_apply(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    unsigned char *data = g_malloc(TX_MAX), *buf = g_malloc(TX_MAX);
    dbfs_attr d, sub, f[3];
    uint64_t done = 0;
    char msg[512];

    tx_env_open(&e, NULL, true);
    d = td_mkdir(&e.t, &root, e.t.root, "d", 0755);
    sub = td_mkdir(&e.t, &root, td_fh(&d), "sub", 0755);
    tx_fill(data, TX_MAX, true);
    f[0] = td_create(&e.t, &root, td_fh(&d), "a", 0644);
    f[1] = td_create(&e.t, &root, td_fh(&d), "b", 0644);
    f[2] = td_create(&e.t, &root, td_fh(&sub), "c", 0644);
    for (int i = 0; i < 3; i++)
        td_write(&e.t, &root, td_fh(&f[i]), 0, data, TX_MAX - (uint32_t)i * 1000);
    td_rc(dbfs_xform_set(e.t.fs, "/d", "lz4,sha256", msg, sizeof msg), 0);
    td_rc(dbfs_xform_set(e.t.fs, "/d/sub", "aes-256-gcm", msg, sizeof msg), 0);
    g_assert_cmpint(tx_chain_of(e.conninfo, f[0].ino), ==, 0);
    td_rc(dbfs_xform_apply(e.t.fs, "/d", tx_line, NULL, &done), 0);
    g_assert_cmpuint(done, ==, 3);
    g_assert_cmpint(tx_chain_of(e.conninfo, f[0].ino), ==, tx_chain_of(e.conninfo, d.ino));
    g_assert_cmpint(tx_chain_of(e.conninfo, f[1].ino), ==, tx_chain_of(e.conninfo, d.ino));
    g_assert_cmpint(tx_chain_of(e.conninfo, f[2].ino), ==, tx_chain_of(e.conninfo, sub.ino));
    for (int i = 0; i < 3; i++) {
        uint32_t n = TX_MAX - (uint32_t)i * 1000;

        td_read(&e.t, &root, td_fh(&f[i]), 0, buf, n);
        g_assert_cmpmem(buf, n, data, n);
    }
    td_rc(dbfs_xform_apply(e.t.fs, "/d", tx_line, NULL, &done), 0);
    g_assert_cmpuint(done, ==, 0);
    g_assert_cmpint(dbfs_xform_apply(e.t.fs, "/d/a", tx_line, NULL, &done), ==, -ENOTDIR);
    g_free(data);
    g_free(buf);
    tx_env_close(&e);
}

/* An open refused with rc and a critical message matching pattern. */
static void tx_refused(const char *conninfo, const char *chain, const char *key, int rc,
                       const char *pattern)
{
    td_fs t;

    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_CRITICAL, pattern);
    g_assert_cmpint(tx_open_fs(&t, conninfo, chain, key, false), ==, rc);
    g_test_assert_expected_messages();
}

/* Copy plug-in NAME.so of the test plug-ins into dir (mode 0755). */
static void tx_copy_plugin(const char *dir, const char *name)
{
    char *from = g_strdup_printf("%s/%s.so", XF_TEST_PLUGIN_DIR, name);
    char *to = g_strdup_printf("%s/%s.so", dir, name);
    gchar *bytes = NULL;
    gsize len = 0;

    g_assert_true(g_file_get_contents(from, &bytes, &len, NULL));
    g_assert_true(g_file_set_contents(to, bytes, (gssize)len, NULL));
    g_assert_cmpint(chmod(to, 0755), ==, 0);
    g_free(bytes);
    g_free(from);
    g_free(to);
}

/* Plug-ins: one with the wrong interface version refuses the open with
 * the reason; one that fails on a chunk fails that write (-EIO, nothing
 * stored, the reason logged) and no other. */
static void test_plugins(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    unsigned char *data = g_malloc(3 * TX_CHUNK), *buf = g_malloc(3 * TX_CHUNK);
    char *pdir;
    dbfs_attr f;

    tx_env_open(&e, NULL, false);
    pdir = g_build_filename(e.dir, "plugins", NULL);
    g_assert_cmpint(mkdir(pdir, 0755), ==, 0);
    tx_copy_plugin(pdir, "badabi");
    tx_copy_plugin(pdir, "failer");
    td_close(&e.t);
    tx_plugin_dir = pdir;
    tx_refused(e.conninfo, "badabi", e.key, -ELIBBAD, "xform: [xform] root_chain \"badabi\": *");
    td_rc(tx_open_fs(&e.t, e.conninfo, "failer:fail=1", e.key, false), 0);
    f = td_create(&e.t, &root, e.t.root, "f", 0644);
    tx_fill(data, 3 * TX_CHUNK, false);
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "xform: file * chunk 1: *failer*");
    td_rc(dbfs_write(e.t.c, &root, td_fh(&f), 0, data, 3 * TX_CHUNK, DBFS_FILE_SYNC, NULL, NULL),
          -EIO);
    g_test_assert_expected_messages();
    g_assert_cmpuint(td_getattr(&e.t, td_fh(&f)).size, ==, 0);
    td_write(&e.t, &root, td_fh(&f), 0, data, TX_CHUNK);
    td_read(&e.t, &root, td_fh(&f), 0, buf, TX_CHUNK);
    g_assert_cmpmem(buf, TX_CHUNK, data, TX_CHUNK);
    tx_plugin_dir = NULL;
    for (const char *const *n = (const char *const[]){"badabi.so", "failer.so", NULL}; *n; n++) {
        char *path = g_build_filename(pdir, *n, NULL);

        unlink(path);
        g_free(path);
    }
    rmdir(pdir);
    tx_env_close(&e);
    g_free(data);
    g_free(buf);
    g_free(pdir);
}

/* The key id is recorded at the first open with a key; another key is
 * refused; the same key again is fine. A chain that does not make (an
 * unknown stage, aes without a key) refuses the open. */
static void test_refusals(void)
{
    tx_env e;
    char *k2;

    tx_env_open(&e, "aes-256-gcm", false);
    td_close(&e.t);
    k2 = tx_key_file(e.dir, "key2");
    tx_refused(e.conninfo, NULL, k2, -EKEYREJECTED, "xform: *key_file * holds key id *");
    tx_refused(e.conninfo, "nosuchstage", e.key, -ENOENT,
               "xform: [xform] root_chain \"nosuchstage\": *");
    tx_refused(e.conninfo, "aes-256-gcm", NULL, -ENOKEY,
               "xform: [xform] root_chain \"aes-256-gcm\": *");
    tx_refused(e.conninfo, "zstd:level=99", e.key, -EINVAL,
               "xform: [xform] root_chain \"zstd:level=99\": *");
    chmod(e.key, 0644);
    tx_refused(e.conninfo, NULL, e.key, -EACCES, "xform: *readable by others*");
    chmod(e.key, 0600);
    td_rc(tx_open_fs(&e.t, e.conninfo, NULL, e.key, false), 0);
    g_free(k2);
    tx_env_close(&e);
}

/* A store of more chunks than one statement carries (dbfs_xf_write.c:
 * DBFS_XF_STMT_BYTES): one transaction of several statements, whole and
 * partial chunks, read back through a cold server; used is the sum. */
static void test_big_store(void)
{
    const uint32_t big = (3u << 20) + 100;
    tx_env e;
    dbfs_cred root = td_root();
    unsigned char *model = g_malloc0(big + 7), *buf = g_malloc(big + 7);
    dbfs_attr f;
    td_fs cold;
    uint32_t n = 0;
    bool eof;
    char *q;

    tx_env_open(&e, "identity,sha256", true);
    f = td_create(&e.t, &root, e.t.root, "big", 0644);
    tx_fill(model + 7, big, false);
    td_rc(dbfs_write(e.t.c, &root, td_fh(&f), 7, model + 7, big, DBFS_FILE_SYNC, NULL, NULL), 0);
    tx_fill(model + (1u << 20) + 5, 2u << 20, true);
    td_rc(dbfs_write(e.t.c, &root, td_fh(&f), (1u << 20) + 5, model + (1u << 20) + 5, 2u << 20,
                     DBFS_UNSTABLE, NULL, NULL),
          0);
    td_rc(dbfs_commit(e.t.c, td_fh(&f), 0, 0, NULL), 0);
    td_rc(tx_open_fs(&cold, e.conninfo, NULL, e.key, false), 0);
    td_rc(dbfs_read(cold.c, &root, td_fh(&f), 0, big + 7, buf, &n, &eof, NULL), 0);
    g_assert_cmpuint(n, ==, big + 7);
    g_assert_cmpmem(buf, n, model, big + 7);
    f = td_getattr(&cold, td_fh(&f));
    q = g_strdup_printf("SELECT coalesce(sum(length(data)), 0) FROM pgnfs_data_read(%" PRIu64
                        ", 0, 1000000)",
                        f.ino);
    g_assert_cmpint(td_sql(e.conninfo, q), ==, (long)f.used);
    g_free(q);
    td_close(&cold);
    tx_env_close(&e);
    g_free(model);
    g_free(buf);
}

/* Without a buffer cache, a new file's first write in a directory whose
 * chain the server knows needs no old bytes: one round trip, as an
 * unguarded write's. A partial overwrite still reads its chunk first. */
static void test_new_file_store(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    dbfs_attr a, b;
    dbfs_config cfg;
    char buf[5];

    tx_env_open(&e, "identity", false);
    /* the metadata caches on, the buffer cache and write-back off */
    cfg = tx_config(e.conninfo, "identity", e.key, false);
    cfg.stat_cache_entries = cfg.name_cache_entries = 1024;
    td_close(&e.t);
    td_rc(tx_open_with(&e.t, &cfg), 0);
    a = td_create(&e.t, &root, e.t.root, "a", 0644);
    td_write(&e.t, &root, td_fh(&a), 0, "first", 5); /* the directory's chain learned */
    b = td_create(&e.t, &root, e.t.root, "b", 0644);
    td_trips(&e.t);
    td_rc(dbfs_write(e.t.c, &root, td_fh(&b), 0, "hello", 5, DBFS_FILE_SYNC, NULL, NULL), 0);
    g_assert_cmpuint(td_trips(&e.t), ==, 1);
    td_rc(dbfs_write(e.t.c, &root, td_fh(&b), 1, "E", 1, DBFS_FILE_SYNC, NULL, NULL), 0);
    g_assert_cmpuint(td_trips(&e.t), ==, 2);
    td_read(&e.t, &root, td_fh(&b), 0, buf, 5);
    g_assert_cmpmem(buf, 5, "hEllo", 5);
    tx_env_close(&e);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/xform/roundtrip", test_roundtrip);
    g_test_add_func("/xform/inherit", test_inherit);
    g_test_add_func("/xform/upgrade", test_upgrade);
    g_test_add_func("/xform/used", test_used);
    g_test_add_func("/xform/corrupt", test_corrupt);
    g_test_add_func("/xform/refusals", test_refusals);
    g_test_add_func("/xform/admin", test_admin);
    g_test_add_func("/xform/apply", test_apply);
    g_test_add_func("/xform/plugins", test_plugins);
    g_test_add_func("/xform/big-store", test_big_store);
    g_test_add_func("/xform/new-file-store", test_new_file_store);
    return g_test_run();
}
