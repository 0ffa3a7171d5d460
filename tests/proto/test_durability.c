/*
 * test_durability.c -- how each change commits, export by export: on a
 * sync export (the default) every transaction that changes the file
 * system commits with synchronous_commit on, so nothing is answered
 * before it is on disk; on an exports(5) `async` export every one
 * commits with synchronous_commit off; a LINK or RENAME between the two
 * exports changes nothing (XDEV); a READ's atime update never
 * waits for the disk (on an async export, where the caches serve the
 * READ, it comes later, from the write-back flusher); and the mode of one
 * call never leaks into the next one on the same worker.
 *
 * How it is seen: a deferred constraint trigger on fileatt, naming and
 * allfiles records, when each changing transaction commits, the
 * synchronous_commit in force then (the setting PostgreSQL applies to
 * that commit), with the transaction's id. The server exports "/" (sync,
 * the test library's) and "/fast" (async); both are the same file
 * system.
 *
 * NOTES
 *   The cases share one server and run in this process, one after the
 *   other, each reading the records the calls before it left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "ptest.h"

static PGconn *db;

/* Run sql on the server's database; aborts on an error. Returns the first
 * column of the first row, or "" (g_free it). */
static char *sql(const char *q)
{
    PGresult *r = PQexec(db, q);
    ExecStatusType st = PQresultStatus(r);
    char *v;

    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
        g_error("%s: %s", q, PQerrorMessage(db));
    v = g_strdup(st == PGRES_TUPLES_OK && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "");
    PQclear(r);
    return v;
}

/* The recorder: one row per changing transaction (its xid and mode). */
static void install_recorder(void)
{
    db = PQconnectdb(tl_server_conninfo(pt.server));
    if (PQstatus(db) != CONNECTION_OK)
        g_error("cannot connect to the server's database: %s", PQerrorMessage(db));
    g_free(sql("CREATE TABLE durtest_commits (xid xid8 PRIMARY KEY, mode text NOT NULL)"));
    g_free(sql("CREATE FUNCTION durtest_record() RETURNS trigger LANGUAGE plpgsql AS $$ "
               "BEGIN INSERT INTO durtest_commits VALUES (pg_current_xact_id(),"
               " current_setting('synchronous_commit')) ON CONFLICT (xid) DO NOTHING;"
               " RETURN NULL; END $$"));
    const char *tables[] = {"fileatt", "naming", "allfiles"};
    for (size_t i = 0; i < G_N_ELEMENTS(tables); i++) {
        char *q = g_strdup_printf("CREATE CONSTRAINT TRIGGER durtest_%s AFTER INSERT OR UPDATE OR"
                                  " DELETE ON %s DEFERRABLE INITIALLY DEFERRED FOR EACH ROW"
                                  " EXECUTE FUNCTION durtest_record()",
                                  tables[i], tables[i]);
        g_free(sql(q));
        g_free(q);
    }
}

/*
 * The transactions recorded since the last call, checked: at least one,
 * and each committed asynchronously (synchronous_commit off) iff `async`.
 * `what` names the calls in the message.
 */
static void expect_commits(const char *what, bool async)
{
    char *n = sql("SELECT count(*) FROM durtest_commits");
    char *wrong = sql(async ? "SELECT count(*) FROM durtest_commits WHERE mode <> 'off'"
                            : "SELECT count(*) FROM durtest_commits WHERE mode = 'off'");

    if (atoi(n) == 0)
        g_error("%s: no changing transaction was recorded", what);
    if (atoi(wrong) != 0)
        g_error("%s: %s of %s transactions committed %s", what, wrong, n,
                async ? "durably on an async export" : "asynchronously on a sync export");
    g_free(n);
    g_free(wrong);
    g_free(sql("DELETE FROM durtest_commits"));
}

/* Wait (a generous deadline) until a changing transaction is recorded. */
static void wait_commit(const char *what)
{
    int64_t until = g_get_monotonic_time() + 120 * G_USEC_PER_SEC;

    for (;;) {
        char *n = sql("SELECT count(*) FROM durtest_commits");
        bool some = atoi(n) > 0;

        g_free(n);
        if (some)
            return;
        if (g_get_monotonic_time() > until)
            g_error("%s: no changing transaction was recorded in 120 s", what);
        g_usleep(20000);
    }
}

/* Every changing procedure once in directory dir, through c; checks the
 * commits after each (async says how they must be). */
static void every_change(nr_ctx *c, const nr_fh *dir, bool async)
{
    static const unsigned char data[10000] = {1, 2, 3};
    WRITE3res w;
    COMMIT3res cm;
    READ3res rd;
    sattr3 sa = nr_sattr_mode(0640);

    nr_fh f = pt_create(c, dir, "file", 0644);
    expect_commits("CREATE", async);
    pt_ok(c, nr_write(c, &f, 0, data, sizeof data, FILE_SYNC, &w));
    g_assert_cmpint(w.WRITE3res_u.resok.committed, ==, FILE_SYNC);
    expect_commits("WRITE FILE_SYNC", async);
    pt_ok(c, nr_write(c, &f, 20000, data, sizeof data, UNSTABLE, &w));
    g_assert_cmpint(w.WRITE3res_u.resok.committed, >=, UNSTABLE);
    pt_ok(c, nr_commit(c, &f, 0, 0, &cm));
    g_assert_cmpmem(cm.COMMIT3res_u.resok.verf, NFS3_WRITEVERFSIZE, w.WRITE3res_u.resok.verf,
                    NFS3_WRITEVERFSIZE);
    expect_commits("WRITE UNSTABLE, COMMIT", async);
    pt_ok(c, nr_setattr(c, &f, &sa, NULL, NULL));
    expect_commits("SETATTR", async);
    nr_fh d = pt_mkdir(c, dir, "sub", 0755);
    expect_commits("MKDIR", async);
    pt_ok(c, nr_symlink(c, dir, "link", "file", NULL, NULL));
    expect_commits("SYMLINK", async);
    pt_ok(c, nr_mknod(c, dir, "fifo", NF3FIFO, NULL, 0, 0, NULL));
    expect_commits("MKNOD", async);
    pt_ok(c, nr_link(c, &f, &d, "hard", NULL));
    expect_commits("LINK", async);
    pt_ok(c, nr_rename(c, dir, "file", &d, "moved", NULL));
    expect_commits("RENAME", async);
    pt_ok(c, nr_remove(c, &d, "hard", NULL));
    pt_ok(c, nr_remove(c, &d, "moved", NULL));
    pt_ok(c, nr_remove(c, dir, "link", NULL));
    pt_ok(c, nr_remove(c, dir, "fifo", NULL));
    expect_commits("REMOVE", async);
    pt_ok(c, nr_rmdir(c, dir, "sub", NULL));
    expect_commits("RMDIR", async);

    /* A READ whose atime moves (relatime: atime <= mtime) changes the
     * file, and never waits for the disk, on either kind of export; on
     * the async one the small-file cache serves the READ and the flusher
     * stores the atime. */
    nr_fh r = pt_create(c, dir, "readme", 0644);
    pt_write(c, &r, 0, data, 100);
    g_free(sql("DELETE FROM durtest_commits"));
    pt_ok(c, nr_read(c, &r, 0, 100, &rd));
    if (async)
        wait_commit("READ (atime)");
    expect_commits("READ (atime)", true);
    pt_ok(c, nr_remove(c, dir, "readme", NULL));
    g_free(sql("DELETE FROM durtest_commits"));
    nr_arena_clear(c);
}

static nr_fh fast_root;

static void test_sync_export(void)
{
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_mkdir(c, &pt.root, "s", 0777);

    expect_commits("MKDIR of the test's directory", false);
    every_change(c, &dir, false);
    nr_close(c);
}

static void test_async_export(void)
{
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_mkdir(c, &fast_root, "a", 0777);

    expect_commits("MKDIR of the test's directory", true);
    every_change(c, &dir, true);
    nr_close(c);
}

/* Two handles of different exports: LINK and RENAME answer XDEV and
 * change nothing; within the async export they are async. */
static void test_two_exports(void)
{
    nr_ctx *c = pt_open(NULL);
    nr_fh sdir = pt_mkdir(c, &pt.root, "two", 0777);
    nr_fh adir = pt_mkdir(c, &fast_root, "two", 0777);
    nr_fh f = pt_create(c, &adir, "f", 0644);
    char *n;

    g_free(sql("DELETE FROM durtest_commits"));
    pt_stat(c, nr_link(c, &f, &sdir, "l", NULL), NFS3ERR_XDEV);
    pt_stat(c, nr_rename(c, &adir, "f", &sdir, "g", NULL), NFS3ERR_XDEV);
    n = sql("SELECT count(*) FROM durtest_commits");
    g_assert_cmpstr(n, ==, "0");
    g_free(n);
    pt_ok(c, nr_link(c, &f, &adir, "l", NULL));
    expect_commits("LINK inside the async export", true);
    pt_ok(c, nr_rename(c, &adir, "l", &adir, "m", NULL));
    expect_commits("RENAME inside the async export", true);
    nr_close(c);
}

/* Calls of both modes one after the other, from several clients at once
 * (the server's workers take them in any order): each commits as its own
 * export says, whatever the call before it on the same worker was. */
static void test_no_leak(void)
{
    enum { CLIENTS = 4, ROUNDS = 40 };
    nr_ctx *c[CLIENTS];
    nr_fh sdir, adir;
    nr_ctx *m = pt_open(NULL);

    sdir = pt_mkdir(m, &pt.root, "leak", 0777);
    adir = pt_mkdir(m, &fast_root, "leak", 0777);
    nr_close(m);
    for (int i = 0; i < CLIENTS; i++)
        c[i] = pt_open(NULL);
    g_free(sql("DELETE FROM durtest_commits"));
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < CLIENTS; i++) {
            bool async = (r + i) % 2 == 1;
            sattr3 sa = nr_sattr_mode(0600 + (unsigned)r % 8);

            pt_ok(c[i], nr_setattr(c[i], async ? &adir : &sdir, &sa, NULL, NULL));
            expect_commits(async ? "SETATTR (async)" : "SETATTR (sync)", async);
        }
    }
    for (int i = 0; i < CLIENTS; i++)
        nr_close(c[i]);
}

int main(int argc, char **argv)
{
    /* "/fast" is a directory of the same file system, exported async. */
    const char *const settings[] = {"exports./fast=127.0.0.1(rw,async,no_root_squash)", NULL};
    char **args = g_new0(char *, (size_t)argc + 2);
    bool listing = false;

    for (int i = 0; i < argc; i++) {
        args[i] = argv[i];
        listing |= strcmp(argv[i], "-l") == 0;
    }
    g_test_init(&argc, &args, NULL);
    g_test_add_func("/durability/sync-export", test_sync_export);
    g_test_add_func("/durability/async-export", test_async_export);
    g_test_add_func("/durability/two-exports", test_two_exports);
    g_test_add_func("/durability/no-leak", test_no_leak);
    if (listing)
        return g_test_run();
    pt.server = tl_server_start(settings);
    pt.port = pt.mount_port = tl_server_port(pt.server);
    pt.export_path = "/";
    pt.root = pt_mount_root("/");
    nr_ctx *c = pt_open(NULL);
    pt_mkdir(c, &pt.root, "fast", 0777);
    nr_close(c);
    fast_root = pt_mount_root("/fast");
    install_recorder();
    g_free(sql("DELETE FROM durtest_commits"));
    int rc = g_test_run();
    PQfinish(db);
    tl_server_stop(pt.server);
    g_free(args);
    return rc;
}
