/*
 * test_xform_sql.c -- in-database transformation stages
 * ("sql:forward=F:inverse=G", 26_xform_sql.sql): chains with them
 * round-trip random writes, reads and truncations against a model (alone,
 * after in-server stages, two of them, pgcrypto's encryption); a function
 * missing, failing, returning NULL or not undone by its inverse gives an
 * I/O error and stores nothing, and the data reads back whole once the
 * function is back; a wrong key of pgcrypto is refused; pgnfs xform set
 * refuses a chain whose functions do not exist or do not invert, names
 * the reason, and rewrites a file into and out of such a chain; fsck
 * decodes through them.
 *
 * Runs once per storage variant (tests/dbfs/CMakeLists.txt: PGNFS_TEST_MKFS).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "tx.h"

/* The test's functions, made in the file system's database. */
static const char tq_functions[] =
    "CREATE EXTENSION IF NOT EXISTS pgcrypto;"
    /* deterministic, longer than its input: the bytes as base64 text */
    "CREATE FUNCTION tq_b64(x bytea) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT"
    " AS $$ SELECT convert_to(encode(x, 'base64'), 'SQL_ASCII') $$;"
    "CREATE FUNCTION tq_unb64(x bytea) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT"
    " AS $$ SELECT decode(convert_from(x, 'SQL_ASCII'), 'base64') $$;"
    /* pgcrypto, the key in a table */
    "CREATE TABLE tq_key (k text);"
    "INSERT INTO tq_key VALUES ('the key');"
    "CREATE FUNCTION tq_enc(x bytea) RETURNS bytea LANGUAGE sql STRICT"
    " AS $$ SELECT pgp_sym_encrypt_bytea(x, (SELECT k FROM tq_key), 's2k-mode=1') $$;"
    "CREATE FUNCTION tq_dec(x bytea) RETURNS bytea LANGUAGE sql STRICT"
    " AS $$ SELECT pgp_sym_decrypt_bytea(x, (SELECT k FROM tq_key)) $$;"
    /* PL/pgSQL, schema-qualified */
    "CREATE FUNCTION public.tq_id(x bytea) RETURNS bytea LANGUAGE plpgsql"
    " AS $$ BEGIN RETURN x; END $$;"
    /* a forward that fails on a chunk holding 'FAIL', and one that returns NULL on 'NULL' */
    "CREATE FUNCTION tq_picky(x bytea) RETURNS bytea LANGUAGE plpgsql AS $$ BEGIN"
    " IF position('FAIL'::bytea IN x) > 0 THEN RAISE EXCEPTION 'tq_picky refuses this chunk';"
    " END IF;"
    " IF position('NULL'::bytea IN x) > 0 THEN RETURN NULL; END IF;"
    " RETURN x; END $$;"
    /* not an inverse of anything */
    "CREATE FUNCTION tq_lossy(x bytea) RETURNS bytea LANGUAGE sql"
    " AS $$ SELECT substring(x FROM 2) $$;"
    /* the wrong signature */
    "CREATE FUNCTION tq_text(x text) RETURNS bytea LANGUAGE sql AS $$ SELECT x::bytea $$;";

static void tq_env_open(tx_env *e, const char *chain, bool cache)
{
    tx_env_open(e, NULL, cache);
    td_sql(e->conninfo, tq_functions);
    if (chain) {
        td_close(&e->t);
        td_rc(tx_open_fs(&e->t, e->conninfo, chain, e->key, cache), 0);
    }
}

/* Chains with in-database stages, with and without the caches: random
 * operations against a model, then a cold server reads the same bytes;
 * fsck decodes every chunk. */
static void test_roundtrip(void)
{
    static const char *const chains[] = {
        "sql:forward=tq_b64:inverse=tq_unb64",
        "zstd,sha256,sql:forward=tq_enc:inverse=tq_dec",
        "increment,sql:forward=public.tq_id:inverse=public.tq_id,"
        "sql:forward=tq_b64:inverse=tq_unb64",
    };

    for (size_t i = 0; i < G_N_ELEMENTS(chains); i++) {
        for (int cache = 0; cache < 2; cache++) {
            tx_env e;
            dbfs_cred root = td_root();
            dbfs_attr f;
            td_fs cold;
            unsigned char *model = g_malloc(TX_MAX), *buf = g_malloc(TX_MAX);
            uint64_t problems = 1;
            int seen = 0;
            uint32_t n;
            bool eof;

            g_test_message("chain %s, %s", chains[i], cache ? "caches" : "no caches");
            tq_env_open(&e, chains[i], cache);
            f = td_create(&e.t, &root, e.t.root, "f", 0644);
            g_assert_cmpint(tx_chain_of(e.conninfo, f.ino), !=, 0);
            tx_model_run(&e.t, td_fh(&f), 100, i % 2 == 0);
            f = td_getattr(&e.t, td_fh(&f));
            td_read(&e.t, &root, td_fh(&f), 0, model, (uint32_t)f.size);
            td_rc(tx_open_fs(&cold, e.conninfo, NULL, e.key, false), 0);
            td_rc(dbfs_read(cold.c, &root, td_fh(&f), 0, TX_MAX, buf, &n, &eof, NULL), 0);
            g_assert_cmpuint(n, ==, f.size);
            g_assert_cmpmem(buf, n, model, f.size);
            /* The database stores what the in-database stages made: base64
             * text is longer than the chunks the server sent. */
            if (i == 0) {
                dbfs_attr g = td_create(&e.t, &root, e.t.root, "g", 0644);

                tx_fill(buf, TX_MAX, false);
                td_write(&e.t, &root, td_fh(&g), 0, buf, TX_MAX);
                g = td_getattr(&e.t, td_fh(&g));
                g_assert_cmpuint(g.used, >, TX_MAX);
            }
            td_rc(dbfs_xform_check(cold.fs, tx_count_problem, &seen, &problems), 0);
            g_assert_cmpuint(problems, ==, 0);
            td_close(&cold);
            tx_env_close(&e);
            g_free(model);
            g_free(buf);
        }
    }
}

/* An I/O error with a warning that matches pattern. */
#define TQ_EIO(pattern, call)                                                                      \
    do {                                                                                           \
        g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, pattern);                         \
        td_rc((call), -EIO);                                                                       \
        g_test_assert_expected_messages();                                                         \
    } while (0)

/* What the file reads through a fresh server (no cache) equals data. */
static void tq_same(tx_env *e, dbfs_fh fh, const unsigned char *data, uint32_t len)
{
    dbfs_cred root = td_root();
    unsigned char *buf = g_malloc(len + 1);
    td_fs cold;
    uint32_t n = 0;
    bool eof;

    td_rc(tx_open_fs(&cold, e->conninfo, NULL, e->key, false), 0);
    td_rc(dbfs_read(cold.c, &root, fh, 0, len + 1, buf, &n, &eof, NULL), 0);
    g_assert_cmpuint(n, ==, len);
    g_assert_cmpmem(buf, n, data, len);
    td_close(&cold);
    g_free(buf);
}

/* A function that goes missing, fails on a chunk, returns NULL or stops
 * inverting: every read and write it takes part in is an I/O error with a
 * message naming file, chunk, chain and function; nothing is stored; once
 * it is back, the data reads back whole. A wrong pgcrypto key is refused
 * the same way. */
static void test_failures(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    unsigned char *data = g_malloc(3 * TX_CHUNK), *other = g_malloc(3 * TX_CHUNK);
    dbfs_attr f, g;

    tq_env_open(&e, NULL, false);
    td_close(&e.t);
    /* tq_picky is no inverse of tq_unb64: refused at open, with why. */
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_CRITICAL,
                          "xform: [xform] root_chain *: in-database stage 1: *");
    g_assert_cmpint(tx_open_fs(&e.t, e.conninfo,
                               "sql:forward=tq_picky:inverse=tq_unb64,"
                               "sql:forward=tq_enc:inverse=tq_dec",
                               e.key, false),
                    ==, -EINVAL);
    g_test_assert_expected_messages();
    td_rc(tx_open_fs(&e.t, e.conninfo,
                     "sql:forward=tq_picky:inverse=tq_picky,sql:forward=tq_enc:inverse=tq_dec",
                     e.key, false),
          0);
    f = td_create(&e.t, &root, e.t.root, "f", 0644);
    g = td_create(&e.t, &root, e.t.root, "g", 0644);
    tx_fill(data, 3 * TX_CHUNK, true);
    td_write(&e.t, &root, td_fh(&f), 0, data, 3 * TX_CHUNK);

    /* A forward that fails, or returns NULL, on one chunk: the write of
     * three chunks stores none. */
    memcpy(other, data, 3 * TX_CHUNK);
    memcpy(other + TX_CHUNK + 100, "FAIL", 4);
    TQ_EIO("*file * chunk 1*tq_picky*refuses this chunk*",
           dbfs_write(e.t.c, &root, td_fh(&f), 0, other, 3 * TX_CHUNK, DBFS_FILE_SYNC, NULL, NULL));
    memcpy(other + TX_CHUNK + 100, "NULL", 4);
    TQ_EIO("*tq_picky*returned NULL*",
           dbfs_write(e.t.c, &root, td_fh(&f), 0, other, 3 * TX_CHUNK, DBFS_FILE_SYNC, NULL, NULL));
    tq_same(&e, td_fh(&f), data, 3 * TX_CHUNK);

    /* The inverse goes missing: reads fail and say which function; a
     * partial write (which must read its chunk) fails and stores nothing. */
    td_sql(e.conninfo, "ALTER FUNCTION tq_dec(bytea) RENAME TO tq_dec_away");
    TQ_EIO("*chunk 0*tq_dec(bytea)*does not exist*",
           dbfs_read(e.t.c, &root, td_fh(&f), 0, 100, other, &(uint32_t){0}, &(bool){false}, NULL));
    TQ_EIO("*tq_dec(bytea)*does not exist*",
           dbfs_write(e.t.c, &root, td_fh(&f), 10, "xyz", 3, DBFS_FILE_SYNC, NULL, NULL));
    /* Every value stored is checked through the inverse: a whole chunk
     * written without reading fails too. */
    TQ_EIO("*tq_dec(bytea)*does not exist*",
           dbfs_write(e.t.c, &root, td_fh(&g), 0, data, TX_CHUNK, DBFS_FILE_SYNC, NULL, NULL));
    g_assert_cmpuint(td_getattr(&e.t, td_fh(&g)).size, ==, 0);
    td_sql(e.conninfo, "ALTER FUNCTION tq_dec_away(bytea) RENAME TO tq_dec");
    tq_same(&e, td_fh(&f), data, 3 * TX_CHUNK);

    /* The wrong key: pgcrypto refuses, so does the read; the right one
     * again reads the data. */
    td_sql(e.conninfo, "UPDATE tq_key SET k = 'another key'");
    TQ_EIO("*tq_dec(bytea) failed: Wrong key or corrupt data*",
           dbfs_read(e.t.c, &root, td_fh(&f), 0, 100, other, &(uint32_t){0}, &(bool){false}, NULL));
    td_sql(e.conninfo, "UPDATE tq_key SET k = 'the key'");

    /* A forward replaced by one its inverse does not undo: nothing is
     * stored. */
    td_sql(e.conninfo, "CREATE OR REPLACE FUNCTION tq_picky(x bytea) RETURNS bytea"
                       " LANGUAGE sql AS $$ SELECT x || '\\x00'::bytea $$");
    TQ_EIO("*do not give back what they would store*",
           dbfs_write(e.t.c, &root, td_fh(&f), 0, other, TX_CHUNK, DBFS_FILE_SYNC, NULL, NULL));
    td_sql(e.conninfo, "CREATE OR REPLACE FUNCTION tq_picky(x bytea) RETURNS bytea"
                       " LANGUAGE sql AS $$ SELECT x $$");
    tq_same(&e, td_fh(&f), data, 3 * TX_CHUNK);

    /* Truncating into a chunk (the server cuts it, reading it first). */
    {
        dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = TX_CHUNK + 7};

        td_rc(dbfs_setattr(e.t.c, &root, td_fh(&f), &sa, NULL, NULL), 0);
        tq_same(&e, td_fh(&f), data, TX_CHUNK + 7);
    }
    g_free(data);
    g_free(other);
    tx_env_close(&e);
}

/* pgnfs xform set: refuses chains whose functions are missing, have the
 * wrong signature or do not invert, saying why; rewrites a file with data
 * into such a chain and out again; apply too. */
static void test_admin(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    unsigned char *data = g_malloc(TX_MAX), *buf = g_malloc(TX_MAX);
    static const char *const chains[] = {
        "sql:forward=tq_enc:inverse=tq_dec",
        "lz4:accel=1,sql:forward=tq_b64:inverse=tq_unb64",
        "none",
        "sql:forward=tq_b64:inverse=tq_unb64,sql:forward=tq_enc:inverse=tq_dec",
    };
    uint64_t problems = 1, done = 0;
    int seen = 0;
    char msg[512], *text;
    dbfs_attr d, f, g;

    tq_env_open(&e, NULL, true);
    f = td_create(&e.t, &root, e.t.root, "f", 0644);
    tx_fill(data, TX_MAX, true);
    td_write(&e.t, &root, td_fh(&f), 0, data, TX_MAX);
    g_assert_cmpint(
        dbfs_xform_set(e.t.fs, "/f", "sql:forward=tq_nosuch:inverse=tq_unb64", msg, sizeof msg), ==,
        -EINVAL);
    g_assert_nonnull(strstr(msg, "no function tq_nosuch(bytea)"));
    g_assert_cmpint(
        dbfs_xform_set(e.t.fs, "/f", "sql:forward=tq_text:inverse=tq_text", msg, sizeof msg), ==,
        -EINVAL);
    g_assert_nonnull(strstr(msg, "no function tq_text(bytea)"));
    g_assert_cmpint(
        dbfs_xform_set(e.t.fs, "/f", "sql:forward=tq_lossy:inverse=tq_id", msg, sizeof msg), ==,
        -EINVAL);
    g_assert_nonnull(strstr(msg, "tq_id(tq_lossy(x)) is not x"));
    g_assert_cmpint(dbfs_xform_set(e.t.fs, "/f", "sql:forward=tq_b64", msg, sizeof msg), ==,
                    -EINVAL);
    g_assert_nonnull(strstr(msg, "inverse"));
    /* Nothing changed. */
    g_assert_cmpint(tx_chain_of(e.conninfo, f.ino), ==, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(chains); i++) {
        td_rc(dbfs_xform_set(e.t.fs, "/f", chains[i], msg, sizeof msg), 0);
        td_rc(dbfs_xform_show(e.t.fs, "/f", &text), 0);
        g_assert_cmpstr(text, ==, chains[i]);
        g_free(text);
        td_read(&e.t, &root, td_fh(&f), 0, buf, TX_MAX);
        g_assert_cmpmem(buf, TX_MAX, data, TX_MAX);
        memset(data + TX_CHUNK + 5, (int)('A' + i), 3);
        td_write(&e.t, &root, td_fh(&f), TX_CHUNK + 5, data + TX_CHUNK + 5, 3);
        tq_same(&e, td_fh(&f), data, TX_MAX);
    }
    /* A directory's in-database chain, inherited and applied. */
    d = td_mkdir(&e.t, &root, e.t.root, "d", 0755);
    g = td_create(&e.t, &root, td_fh(&d), "old", 0644);
    td_write(&e.t, &root, td_fh(&g), 0, data, TX_MAX);
    td_rc(dbfs_xform_set(e.t.fs, "/d", chains[1], msg, sizeof msg), 0);
    td_rc(dbfs_xform_apply(e.t.fs, "/d", NULL, NULL, &done), 0);
    g_assert_cmpuint(done, ==, 1);
    g_assert_cmpint(tx_chain_of(e.conninfo, g.ino), ==, tx_chain_of(e.conninfo, d.ino));
    tq_same(&e, td_fh(&g), data, TX_MAX);
    g = td_create(&e.t, &root, td_fh(&d), "new", 0644);
    g_assert_cmpint(tx_chain_of(e.conninfo, g.ino), ==, tx_chain_of(e.conninfo, d.ino));
    tx_model_run(&e.t, td_fh(&g), 40, true);
    td_rc(dbfs_xform_check(e.t.fs, tx_count_problem, &seen, &problems), 0);
    g_assert_cmpuint(problems, ==, 0);
    /* fsck reports a chunk it cannot read through a missing function. */
    td_sql(e.conninfo, "ALTER FUNCTION tq_unb64(bytea) RENAME TO tq_unb64_away");
    {
        /* (one warning per file, with the function's name) */
        GLogLevelFlags fatal = g_log_set_always_fatal(G_LOG_FATAL_MASK);

        td_rc(dbfs_xform_check(e.t.fs, tx_count_problem, &seen, &problems), 0);
        g_log_set_always_fatal(fatal);
    }
    g_assert_cmpuint(problems, ==, 3); /* f, d/old, d/new */
    td_sql(e.conninfo, "ALTER FUNCTION tq_unb64_away(bytea) RENAME TO tq_unb64");
    g_free(data);
    g_free(buf);
    tx_env_close(&e);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/xform-sql/roundtrip", test_roundtrip);
    g_test_add_func("/xform-sql/failures", test_failures);
    g_test_add_func("/xform-sql/admin", test_admin);
    return g_test_run();
}
