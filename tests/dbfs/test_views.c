/*
 * test_views.c -- how the SQL views of schema pgnfs (schema/functions/
 * 95_views.sql) reach a file system and stay out of its way: a file system
 * made before them gets them when dbfs_open finds its functions out of
 * date; mkfs --force makes them again; and a database role named pgnfs,
 * whose default search_path starts with "$user" = the schema pgnfs, still
 * gets every table and function of the file system (per-file tables too)
 * in its own schema, none in pgnfs (dbfs_conn.c pins the search_path).
 * (tests/proto/test_views.c: what the views show, against NFS.)
 */
#include <stdio.h>
#include <string.h>

#include "td.h"
#include "testlib.h"

/* How many of schema pgnfs's relations are tables, and functions named
 * pgnfs_*: both must stay 0 (only views and the views' functions). */
static const char vw_strays_sql[] =
    "SELECT (SELECT count(*) FROM pg_class c WHERE c.relnamespace = 'pgnfs'::regnamespace"
    "          AND c.relkind <> 'v')"
    "     + (SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'pgnfs'::regnamespace"
    "          AND p.proname LIKE 'pgnfs\\_%')";

static void test_upgrade(void)
{
    char *ci = tl_fresh_fs();
    dbfs_config cfg = {.conninfo = ci, .relatime = true};
    dbfs *fs;

    g_assert_cmpint(td_sql(ci, "SELECT count(*) FROM pgnfs.files"), ==, 1);
    /* As a file system from before the views: none of it, older functions. */
    td_sql(ci, "DROP SCHEMA pgnfs CASCADE; DROP INDEX fileatt_dirs;"
               " DROP FUNCTION pgnfs_views_roles();"
               " UPDATE pgnfs_fs SET functions_digest = 'older'");
    g_assert_cmpint(td_sql(ci, "SELECT count(*) FROM pg_namespace WHERE nspname = 'pgnfs'"), ==, 0);
    td_rc(dbfs_open(&cfg, &fs), 0);
    dbfs_close(fs);
    g_assert_cmpint(td_sql(ci, "SELECT count(*) FROM pgnfs.files"), ==, 1);
    g_assert_cmpint(td_sql(ci, "SELECT count(*) FROM pg_indexes WHERE indexname ="
                               " 'fileatt_dirs'"),
                    ==, 1);
    g_assert_cmpint(td_sql(ci, "SELECT pgnfs.lookup('/')"), ==, DBFS_ROOT_INO);
    /* Applied again (another digest) over what is there: idempotent. */
    td_sql(ci, "UPDATE pgnfs_fs SET functions_digest = 'older'");
    td_rc(dbfs_open(&cfg, &fs), 0);
    dbfs_close(fs);
    g_assert_cmpint(td_sql(ci, "SELECT count(*) FROM pgnfs.dirs"), ==, 1);
    /* mkfs --force replaces the file system, views included. */
    dbfs_mkfs_opts o = {.force = true, .root_mode = 0777};
    td_rc(dbfs_mkfs(ci, &o), 0);
    g_assert_cmpint(td_sql(ci, "SELECT count(*) FROM pgnfs.files"), ==, 1);
    g_assert_cmpint(td_sql(ci, vw_strays_sql), ==, 0);
    g_free(ci);
}

static void test_role_named_pgnfs(void)
{
    static unsigned n;
    char *db = g_strdup_printf("views_owner_%u", ++n);
    char *sql = g_strdup_printf("CREATE DATABASE %s OWNER pgnfs", db);
    char *ci = g_strdup_printf("%s dbname=%s user=pgnfs", tl_cluster_conninfo(), db);
    td_sql(tl_cluster_conninfo(), "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE"
                                  " rolname = 'pgnfs') THEN CREATE ROLE pgnfs LOGIN CREATEROLE;"
                                  " END IF; END $$");
    td_sql(tl_cluster_conninfo(), sql);
    g_free(sql);

    /* The per-file tables of the inversion layout are made by name. */
    dbfs_mkfs_opts o = {.storage = DBFS_STORAGE_INVERSION, .root_mode = 0777};
    td_rc(dbfs_mkfs(ci, &o), 0);
    g_assert_cmpint(td_sql(ci, "SELECT count(*) FROM pg_namespace WHERE nspname = 'pgnfs'"), ==, 1);
    td_fs t = {.conninfo = ci};
    dbfs_config cfg = {.conninfo = ci, .relatime = true};
    td_rc(dbfs_open(&cfg, &t.fs), 0);
    td_rc(dbfs_conn_open(t.fs, &t.c), 0);
    t.root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t.fs)->root_gen, 0};
    dbfs_cred root = td_root();
    dbfs_attr d = td_mkdir(&t, &root, t.root, "d", 0755);
    dbfs_attr f = td_create(&t, &root, td_fh(&d), "f", 0644);
    td_write(&t, &root, td_fh(&f), 0, "views", 5);
    dbfs_conn_close(t.c);
    dbfs_close(t.fs);
    /* A server of another build would apply its functions again. */
    td_sql(ci, "UPDATE pgnfs_fs SET functions_digest = 'older'");
    td_rc(dbfs_open(&cfg, &t.fs), 0);
    dbfs_close(t.fs);

    g_assert_cmpint(td_sql(ci, vw_strays_sql), ==, 0);
    char *q = g_strdup_printf("SELECT count(*) FROM pg_class c JOIN pg_namespace s ON s.oid ="
                              " c.relnamespace WHERE s.nspname = 'public' AND c.relname ="
                              " 'inv%" G_GUINT64_FORMAT "'",
                              f.ino);
    g_assert_cmpint(td_sql(ci, q), ==, 1);
    g_free(q);
    /* And the views read it, the file's own table included. */
    g_assert_cmpint(td_sql(ci, "SELECT length(pgnfs.cat(pgnfs.lookup('/d/f')))"), ==, 5);
    g_assert_cmpint(td_sql(ci, "SELECT count(*) FROM pgnfs.files WHERE path = '/d/f'"), ==, 1);
    g_free(ci);
    g_free(db);
}

/* A digest of pgnfs.files: every row's path, size and name. */
static const char vw_digest_sql[] =
    "SELECT sum(hashtext(path || ':' || size || ':' || coalesce(name, '-'))::int8)"
    " FROM pgnfs.files";

/* pgnfs.files in parallel (how it runs on a large tree: each worker makes
 * the directories' paths itself) gives the rows it gives in one process,
 * for the read-only role too; and a name shows as itself when it is valid
 * UTF-8 (backslash included), else in bytea escape form. */
static void test_parallel_and_names(void)
{
    td_fs t;
    td_open(&t);
    char *ci = g_strdup(t.conninfo);
    dbfs_cred root = td_root();
    static const char *const names[] = {"plain", "a\\b", "caf\xc3\xa9",
                                        "\xff"
                                        "A",
                                        "e\x7f"};
    dbfs_attr top = td_mkdir(&t, &root, t.root, "top", 0755);
    for (int i = 0; i < 3; i++) {
        char dn[8];
        snprintf(dn, sizeof(dn), "d%d", i);
        dbfs_attr d = td_mkdir(&t, &root, td_fh(&top), dn, 0755);
        for (size_t j = 0; j < G_N_ELEMENTS(names); j++) {
            dbfs_attr f = td_create(&t, &root, td_fh(&d), names[j], 0644);
            td_write(&t, &root, td_fh(&f), 0, "views", 1 + (i + j) % 5);
        }
    }
    td_close(&t);

    const char *force = "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;"
                        " SET min_parallel_table_scan_size = 0; SET force_parallel_mode = on;";
    char *one = g_strdup_printf("SET max_parallel_workers_per_gather = 0; %s", vw_digest_sql);
    char *par = g_strdup_printf("%s %s", force, vw_digest_sql);
    long want = td_sql(ci, one);
    g_assert_cmpint(td_sql(ci, "SELECT count(*) FROM pgnfs.files"), ==,
                    1 + 1 + 3 + 3 * (long)G_N_ELEMENTS(names));
    g_assert_cmpint(td_sql(ci, par), ==, want);
    char *like = g_strdup_printf("%s SELECT count(*) * 1000 + sum(size) FROM pgnfs.files"
                                 " WHERE path LIKE '/top/d1/%%'",
                                 force);
    g_assert_cmpint(td_sql(ci, like), ==, 5 * 1000 + 2 + 3 + 4 + 5 + 1);
    /* The read-only role reads the tables only through the views. */
    if (td_sql(ci, "SELECT pgnfs_views_roles()::int") == 1) {
        char *ro = g_strdup_printf("%s user=pgnfs_ro", ci);
        g_assert_cmpint(td_sql(ro, par), ==, want);
        g_free(ro);
    }
    g_assert_cmpint(td_sql(ci, "SELECT count(*) FROM pgnfs.files WHERE name IN"
                               " ('plain', 'a\\b', 'café', '\\377A', 'e' || chr(127))"),
                    ==, 3 * 5);
    g_free(like);
    g_free(par);
    g_free(one);
    g_free(ci);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/views/upgrade", test_upgrade);
    g_test_add_func("/views/role-named-pgnfs", test_role_named_pgnfs);
    g_test_add_func("/views/parallel-and-names", test_parallel_and_names);
    return g_test_run();
}
