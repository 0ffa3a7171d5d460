/*
 * test_errors.c -- one SQLSTATE classifier for every path (dbfs_err.h's
 * table), pinned against a real database: each SQLSTATE of the table is
 * raised by PostgreSQL itself inside the statements of the request path
 * (GETATTR on a worker connection) and of every admin path (du, find,
 * path resolution, fsck, open, mkfs), and each path must answer the same
 * errno, make the same number of attempts (DBFS_RETRIES for
 * serialization failures and deadlocks, one otherwise) and reset its
 * connection exactly for the connection-loss classes. Also: a session
 * whose backend is killed while it is idle reconnects and works at once.
 *
 * How a failure is raised: the paths connect as a role that is not a
 * superuser, for which a row-level security policy on fileatt calls
 * inject.fail(); that counts its call (a sequence: it survives the
 * rollback) and raises the SQLSTATE in table inject.state (NULL: no
 * failure). Every statement of those paths reads fileatt, so the failure
 * is PostgreSQL's own, in the middle of dbfs's statement. mkfs creates
 * tables instead: there an event trigger on DDL raises.
 */
#include <errno.h>
#include <string.h>

#include "dbfs_err.h"
#include "td.h"
#include "testlib.h"

/* One line of the table, as every path must answer it. */
typedef struct {
    const char *state;
    int err;
    bool retried; /* DBFS_RETRIES attempts, else one */
    bool reset;   /* the connection is reset */
} te_case;

static const te_case te_cases[] = {
    {"PN013", -EACCES, false, false}, {"23505", -EEXIST, false, false},
    {"40001", -EAGAIN, true, false},  {"40P01", -EAGAIN, true, false},
    {"08006", -EAGAIN, false, true},  {"57P01", -EAGAIN, false, true},
    {"53100", -ENOSPC, false, false}, {"53300", -EAGAIN, false, false},
    {"57014", -EAGAIN, false, false}, {"22012", -EIO, false, false},
};

static const char te_inject_sql[] =
    "CREATE SCHEMA inject;"
    "CREATE TABLE inject.state (sqlstate text);"
    "INSERT INTO inject.state VALUES (NULL);"
    "CREATE SEQUENCE inject.calls;"
    "CREATE FUNCTION inject.fail() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$"
    " DECLARE s text;"
    " BEGIN"
    "  SELECT sqlstate INTO s FROM inject.state;"
    "  IF s IS NULL THEN RETURN true; END IF;"
    "  PERFORM nextval('inject.calls');"
    "  RAISE EXCEPTION 'injected failure' USING ERRCODE = s;"
    " END $$;"
    "CREATE FUNCTION inject.ddl_fail() RETURNS event_trigger LANGUAGE plpgsql AS $$"
    " BEGIN PERFORM inject.fail(); END $$;"
    "CREATE EVENT TRIGGER inject_ddl ON ddl_command_start EXECUTE FUNCTION inject.ddl_fail();"
    "ALTER EVENT TRIGGER inject_ddl DISABLE;";
/* The role the paths under test connect as, and the policy that fails
 * its reads of fileatt. */
static const char te_inject_rls_sql[] =
    "DO $$ BEGIN"
    "  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pgnfs_inject') THEN"
    "    CREATE ROLE pgnfs_inject LOGIN;"
    "  END IF;"
    " END $$;"
    "GRANT ALL ON ALL TABLES IN SCHEMA public, inject TO pgnfs_inject;"
    "GRANT ALL ON ALL SEQUENCES IN SCHEMA public, inject TO pgnfs_inject;"
    "GRANT USAGE ON SCHEMA inject TO pgnfs_inject;"
    "ALTER TABLE fileatt ENABLE ROW LEVEL SECURITY;"
    "CREATE POLICY inject ON fileatt USING (inject.fail());";

/* The pure table, without a database: every line, and what is not one. */
static void test_table(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(te_cases); i++) {
        dbfs_err_class k = dbfs_err_sqlstate(te_cases[i].state);

        g_assert_cmpint(k.err, ==, te_cases[i].retried ? DBFS_ERETRY : te_cases[i].err);
        g_assert_true(k.broken == te_cases[i].reset);
    }
    g_assert_cmpint(dbfs_err_sqlstate("08001").err, ==, -EAGAIN);
    g_assert_true(dbfs_err_sqlstate("08001").broken);
    g_assert_cmpint(dbfs_err_sqlstate("PN002").err, ==, -ENOENT);
    g_assert_cmpint(dbfs_err_sqlstate("PN116").err, ==, -ESTALE);
    g_assert_cmpint(dbfs_err_sqlstate("42P01").err, ==, -EIO);
    g_assert_false(dbfs_err_sqlstate("42P01").broken);
    /* No SQLSTATE: libpq's own error, taken as a lost connection. */
    g_assert_cmpint(dbfs_err_sqlstate(NULL).err, ==, -EAGAIN);
    g_assert_true(dbfs_err_sqlstate(NULL).broken);
}

/* The file system under test, with the injection in place (and off). */
typedef struct {
    td_fs t;
    dbfs_attr f;    /* /f, so that a lookup and a walk read a row */
    char *conninfo; /* as the role the policy fails */
    dbfs *fs;       /* opened with that conninfo */
} te_env;

static void te_open(te_env *e)
{
    dbfs_cred root = td_root();

    td_open(&e->t);
    e->f = td_create(&e->t, &root, e->t.root, "f", 0644);
    /* The test's worker connection predates the injection: close it, the
     * paths below open their own. */
    dbfs_conn_close(e->t.c);
    e->t.c = NULL;
    td_sql(e->t.conninfo, te_inject_sql);
    td_sql(e->t.conninfo, te_inject_rls_sql);
    e->conninfo = g_strdup_printf("%s user=pgnfs_inject", e->t.conninfo);
    td_rc(dbfs_open(&(dbfs_config){.conninfo = e->conninfo}, &e->fs), 0);
}

static void te_close(te_env *e)
{
    dbfs_close(e->fs);
    g_free(e->conninfo);
    td_close(&e->t);
}

/* Raise state (NULL: nothing) from now on; zero the count of calls. */
static void te_arm(te_env *e, const char *state)
{
    char *sql = state ? g_strdup_printf("UPDATE inject.state SET sqlstate = '%s';"
                                        "SELECT setval('inject.calls', 1, false)",
                                        state)
                      : g_strdup("UPDATE inject.state SET sqlstate = NULL");

    td_sql(e->t.conninfo, sql);
    g_free(sql);
}

/* How many times the failure was raised since te_arm. */
static long te_calls(const char *conninfo)
{
    return td_sql(conninfo, "SELECT CASE WHEN is_called THEN last_value ELSE 0 END"
                            " FROM inject.calls");
}

/* The backend of the one session named app (0: none). */
static long te_backend(const char *conninfo, const char *app)
{
    char *sql = g_strdup_printf("SELECT coalesce(max(pid), 0) FROM pg_stat_activity"
                                " WHERE datname = current_database()"
                                " AND application_name = '%s'",
                                app);
    long pid = td_sql(conninfo, sql);

    g_free(sql);
    return pid;
}

/* Expect the log line an -EIO answer must leave (the SQLSTATE and the
 * statement's name). */
static void te_expect_log(const te_case *k, const char *stmt)
{
    if (k->err == -EIO) {
        char *pat = g_strdup_printf("%s failed: SQLSTATE %s*", stmt, k->state);

        g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, pat);
        g_free(pat);
    }
}

/* Check one answer of a path against the table. */
static void te_check(const te_env *e, const te_case *k, const char *path, int got)
{
    long calls = te_calls(e->t.conninfo);
    long want_calls = k->retried ? DBFS_RETRIES : 1;

    g_test_assert_expected_messages();
    if (got != k->err)
        g_error("%s, SQLSTATE %s: answered %d (%s), the table says %d (%s)", path, k->state, got,
                got < 0 ? g_strerror(-got) : "ok", k->err, g_strerror(-k->err));
    if (calls != want_calls)
        g_error("%s, SQLSTATE %s: %ld attempts, the table says %ld", path, k->state, calls,
                want_calls);
}

/* The request path: GETATTR on a worker connection. */
static void test_request_path(void)
{
    te_env e;
    dbfs_conn *c;
    dbfs_attr a;

    te_open(&e);
    td_rc(dbfs_conn_open(e.fs, &c), 0);
    for (size_t i = 0; i < G_N_ELEMENTS(te_cases); i++) {
        const te_case *k = &te_cases[i];
        long pid = te_backend(e.t.conninfo, "pgnfs");

        te_arm(&e, k->state);
        te_expect_log(k, "pgnfs_getattr");
        te_check(&e, k, "getattr", dbfs_getattr(c, td_fh(&e.f), &a));
        te_arm(&e, NULL);
        td_rc(dbfs_getattr(c, td_fh(&e.f), &a), 0);
        g_assert_cmpuint(a.ino, ==, e.f.ino);
        g_assert_true((te_backend(e.t.conninfo, "pgnfs") != pid) == k->reset);
    }
    dbfs_conn_close(c);
    te_close(&e);
}

typedef struct {
    int rows;
} te_count;

static int te_count_find(const dbfs_find_entry *en, void *arg)
{
    (void)en;
    ((te_count *)arg)->rows++;
    return 0;
}

static int te_count_du(const dbfs_du_entry *en, void *arg)
{
    (void)en;
    ((te_count *)arg)->rows++;
    return 0;
}

/* The admin tool's paths: resolve, find and du on one session. */
static void test_admin_paths(void)
{
    te_env e;
    dbfs_admin *a;
    dbfs_find_query q = {.size_cmp = 2, .maxdepth = 10, .uid = -1, .gid = -1};
    uint64_t ino;
    dbfs_type type;
    te_count n;

    te_open(&e);
    td_rc(dbfs_admin_open(e.conninfo, &a), 0);
    for (size_t i = 0; i < G_N_ELEMENTS(te_cases); i++) {
        const te_case *k = &te_cases[i];
        long pid = te_backend(e.t.conninfo, "pgnfs-admin");

        te_arm(&e, k->state);
        te_expect_log(k, "pgnfs_admin_lookup");
        te_check(&e, k, "resolve", dbfs_admin_resolve(a, "/f", &ino, &type));
        te_arm(&e, k->state);
        te_expect_log(k, "pgnfs_admin_find");
        n.rows = 0;
        te_check(&e, k, "find", dbfs_admin_find(a, DBFS_ROOT_INO, &q, te_count_find, &n));
        g_assert_cmpint(n.rows, ==, 0);
        te_arm(&e, k->state);
        te_expect_log(k, "pgnfs_admin_du");
        te_check(&e, k, "du", dbfs_admin_du(a, DBFS_ROOT_INO, 10, te_count_du, &n));
        g_assert_cmpint(n.rows, ==, 0);
        te_arm(&e, NULL);
        g_assert_true((te_backend(e.t.conninfo, "pgnfs-admin") != pid) == k->reset);
        td_rc(dbfs_admin_resolve(a, "/f", &ino, &type), 0);
        g_assert_cmpuint(ino, ==, e.f.ino);
        td_rc(dbfs_admin_find(a, DBFS_ROOT_INO, &q, te_count_find, &n), 0);
        g_assert_cmpint(n.rows, ==, 2); /* "/" and /f */
    }
    dbfs_admin_close(a);
    te_close(&e);
}

/* fsck and open: sessions of their own, closed on return. */
static void test_fsck_open(void)
{
    te_env e;
    dbfs_fsck_opts o = {0};
    dbfs_fsck_report rep;
    dbfs_config cfg = {0};
    dbfs *fs;

    te_open(&e);
    cfg.conninfo = e.conninfo;
    for (size_t i = 0; i < G_N_ELEMENTS(te_cases); i++) {
        const te_case *k = &te_cases[i];

        te_arm(&e, k->state);
        te_expect_log(k, "pgnfs_fsck_check");
        te_check(&e, k, "fsck", dbfs_fsck(e.fs, &o, &rep));
        te_arm(&e, k->state);
        te_expect_log(k, "pgnfs_adm_facts");
        fs = NULL;
        te_check(&e, k, "open", dbfs_open(&cfg, &fs));
        g_assert_null(fs);
    }
    te_arm(&e, NULL);
    td_rc(dbfs_fsck(e.fs, &o, &rep), 0);
    g_assert_cmpuint(rep.found, ==, 0);
    td_rc(dbfs_open(&cfg, &fs), 0);
    dbfs_close(fs);
    te_close(&e);
}

/* mkfs: an event trigger raises at its first CREATE. */
static void test_mkfs(void)
{
    dbfs_mkfs_opts o = {0};

    for (size_t i = 0; i < G_N_ELEMENTS(te_cases); i++) {
        const te_case *k = &te_cases[i];
        char *db = tl_fresh_db();
        te_env e = {.t.conninfo = db};

        td_sql(db, te_inject_sql);
        td_sql(db, "ALTER EVENT TRIGGER inject_ddl ENABLE");
        te_arm(&e, k->state);
        te_expect_log(k, "001_base.sql");
        te_check(&e, k, "mkfs", dbfs_mkfs(db, &o));
        /* Nothing of it stayed: with the trigger gone, mkfs works. */
        td_sql(db, "DROP EVENT TRIGGER inject_ddl");
        td_rc(dbfs_mkfs(db, &o), 0);
        g_free(db);
    }
}

/* A session whose backend goes away while it is idle: the next call
 * finds it ended, reconnects and works at once. */
static void test_admin_killed(void)
{
    td_fs t;
    dbfs_admin *a;
    uint64_t ino;
    dbfs_type type;

    td_open(&t);
    td_rc(dbfs_admin_open(t.conninfo, &a), 0);
    td_rc(dbfs_admin_resolve(a, "/", &ino, &type), 0);
    td_rc(dbfs_admin_resolve(a, "/nothing", &ino, &type), -ENOENT);
    g_assert_cmpint(td_sql(t.conninfo, "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid,"
                                       " 30000)) FROM pg_stat_activity"
                                       " WHERE datname = current_database()"
                                       " AND application_name = 'pgnfs-admin'"),
                    ==, 1);
    td_rc(dbfs_admin_resolve(a, "/nothing", &ino, &type), -ENOENT);
    td_rc(dbfs_admin_resolve(a, "/", &ino, &type), 0);
    dbfs_admin_close(a);
    td_close(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/errors/table", test_table);
    g_test_add_func("/errors/request-path", test_request_path);
    g_test_add_func("/errors/admin-paths", test_admin_paths);
    g_test_add_func("/errors/fsck-open", test_fsck_open);
    g_test_add_func("/errors/mkfs", test_mkfs);
    g_test_add_func("/errors/admin-killed", test_admin_killed);
    return g_test_run();
}
