/*
 * test_space.c -- the space guard (dbfs/dbfs_space.c) against a real
 * database: data writes answer -ENOSPC once they would leave less than the
 * reserve free on the disk under space_path, metadata changes and
 * removals never do, a removal turns the next refusal into -EAGAIN until
 * dbfs_space_tend reclaims (VACUUM), and what the reclaim finds reusable
 * inside allfiles shows in FSSTAT; after the reclaim's CHECKPOINT every
 * connection is opened anew, and the old backends are gone.
 *
 * The reserve is set beyond what the disk under the temporary directory
 * holds (its free space plus a TiB), so every data write is refused
 * whatever else runs on the machine: no assertion depends on how much is
 * free. (A disk really filled, and writes fitting again after removals,
 * is tests/fault/test_diskfull.c, on a tmpfs of its own.)
 */
#include <errno.h>
#include <string.h>
#include <sys/statvfs.h>

#include "dbfs_renew.h"
#include "td.h"
#include "testlib.h"

#define TS_MIB (UINT64_C(1) << 20)

/* A file system opened with the space guard: space_path the temporary
 * directory, its reserve the disk's free space plus a TiB. */
static void ts_open_guarded(td_fs *t, const char *conninfo)
{
    struct statvfs sv;
    dbfs_config cfg = {0};

    memset(t, 0, sizeof *t);
    t->conninfo = g_strdup(conninfo);
    g_assert_cmpint(statvfs(g_get_tmp_dir(), &sv), ==, 0);
    cfg.conninfo = t->conninfo;
    cfg.space_path = g_get_tmp_dir();
    cfg.space_reserve = (uint64_t)sv.f_bavail * sv.f_frsize + (UINT64_C(1) << 40);
    cfg.writeback_bytes = 8 * TS_MIB;
    td_rc(dbfs_open(&cfg, &t->fs), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c), 0);
    t->root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t->fs)->root_gen, 0};
    g_assert_true(dbfs_space_guarded(t->fs));
}

/* Write len bytes of byte b at off, as `how`; returns what dbfs_write does. */
static int ts_write(td_fs *t, dbfs_fh fh, uint64_t off, uint32_t len, int b, dbfs_stable how)
{
    dbfs_cred root = td_root();
    unsigned char *buf = g_malloc(len + 1);
    dbfs_stable st;
    dbfs_wcc w;
    int rc;

    memset(buf, b, len);
    rc = dbfs_write(t->c, &root, fh, off, buf, len, how, &st, &w);
    g_free(buf);
    return rc;
}

/* Full: data refused, stable or not; everything else works. */
static void test_refuses(void)
{
    dbfs_cred root = td_root();
    td_fs t;
    dbfs_fsstat_res s;
    dbfs_wcc w;
    dbfs_attr f, d;
    char *db = tl_fresh_fs();

    ts_open_guarded(&t, db);
    g_free(db);
    f = td_create(&t, &root, t.root, "f", 0644);
    /* Said once (a minute), at warning level. */
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "space: the file system of *NOSPC*");
    td_rc(ts_write(&t, td_fh(&f), 0, 4096, 'a', DBFS_FILE_SYNC), -ENOSPC);
    g_test_assert_expected_messages();
    td_rc(ts_write(&t, td_fh(&f), 0, 4096, 'a', DBFS_UNSTABLE), -ENOSPC);
    td_rc(ts_write(&t, td_fh(&f), 0, 0, 'a', DBFS_FILE_SYNC), 0);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).size, ==, 0);
    /* Names, attributes, growth by SETATTR (it stores nothing), removal. */
    d = td_mkdir(&t, &root, t.root, "d", 0755);
    td_chmod(&t, &root, td_fh(&f), 0600);
    dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = 1 << 20};
    td_rc(dbfs_setattr(t.c, &root, td_fh(&f), &sa, NULL, &w), 0);
    td_rc(dbfs_rename(t.c, &root, t.root, "f", td_fh(&d), "g", &w, &w), 0);
    td_rc(dbfs_remove(t.c, &root, td_fh(&d), "g", &w), 0);
    /* FSSTAT: the disk's size, nothing writable. */
    td_rc(dbfs_fsstat(t.c, &s), 0);
    g_assert_cmpuint(s.tbytes, >, 0);
    g_assert_cmpuint(s.abytes, ==, 0);
    g_assert_cmpuint(s.fbytes, ==, 0);
    td_close(&t);
}

/*
 * A removal, then a refused write: -EAGAIN until the reclaim ran, which
 * finds the removed file's space reusable (FSSTAT shows it); then the
 * refusal is -ENOSPC again (the reserve is still out of reach).
 */
static void test_reclaim(void)
{
    dbfs_cred root = td_root();
    char *db = tl_fresh_fs();
    dbfs_conn *session = NULL;
    dbfs_fsstat_res s;
    dbfs_wcc w;
    td_fs plain, t;

    /* Two files of 2 MiB, written without a guard: A first, B after it,
     * so A's space lies inside allfiles' TOAST relation. */
    memset(&plain, 0, sizeof plain);
    plain.conninfo = g_strdup(db);
    dbfs_config cfg = {.conninfo = db};
    td_rc(dbfs_open(&cfg, &plain.fs), 0);
    td_rc(dbfs_conn_open(plain.fs, &plain.c), 0);
    plain.root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(plain.fs)->root_gen, 0};
    g_assert_false(dbfs_space_guarded(plain.fs));
    dbfs_attr a = td_create(&plain, &root, plain.root, "a", 0644);
    dbfs_attr b = td_create(&plain, &root, plain.root, "b", 0644);
    td_rc(ts_write(&plain, td_fh(&a), 0, 2 * TS_MIB, 'a', DBFS_FILE_SYNC), 0);
    td_rc(ts_write(&plain, td_fh(&b), 0, 2 * TS_MIB, 'b', DBFS_FILE_SYNC), 0);
    td_close(&plain);

    ts_open_guarded(&t, db);
    dbfs_attr f = td_create(&t, &root, t.root, "f", 0644);
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "space: the file system of *NOSPC*");
    td_rc(ts_write(&t, td_fh(&f), 0, 4096, 'f', DBFS_FILE_SYNC), -ENOSPC);
    g_test_assert_expected_messages();
    /* Nothing to reclaim yet. */
    td_rc(dbfs_space_tend(t.fs, &session), 0);
    g_assert_null(session);
    td_rc(dbfs_remove(t.c, &root, t.root, "a", &w), 0);
    td_rc(ts_write(&t, td_fh(&f), 0, 4096, 'f', DBFS_FILE_SYNC), -EAGAIN);
    td_rc(ts_write(&t, td_fh(&f), 0, 4096, 'f', DBFS_UNSTABLE), -EAGAIN);
    td_rc(dbfs_space_tend(t.fs, &session), 1);
    /* Its session ended after the CHECKPOINT (see test_renew). */
    g_assert_null(session);
    /* About A's 2 MiB are reusable now, and nothing else is writable. */
    td_rc(dbfs_fsstat(t.c, &s), 0);
    g_test_message("reusable inside allfiles after removing 2 MiB: %" G_GUINT64_FORMAT " bytes",
                   s.abytes);
    if (dbfs_get_info(t.fs)->storage == DBFS_STORAGE_SINGLE) {
        g_assert_cmpuint(s.abytes, >=, 3 * TS_MIB / 2);
        g_assert_cmpuint(s.abytes, <=, 5 * TS_MIB / 2);
    }
    td_rc(ts_write(&t, td_fh(&f), 0, 4096, 'f', DBFS_FILE_SYNC), -ENOSPC);
    td_rc(dbfs_space_tend(t.fs, &session), 0);
    /* B is whole. */
    unsigned char buf[4096], want[4096];
    memset(want, 'b', sizeof want);
    td_read(&t, &root, td_fh(&b), 2 * TS_MIB - sizeof buf, buf, sizeof buf);
    g_assert_cmpmem(buf, sizeof buf, want, sizeof want);
    dbfs_conn_close(session);
    td_close(&t);
    g_free(db);
}

/* The backend of the one connection named app that is not in pids[0..n). */
static long ts_backend(const char *db, const char *app, const long *pids, int n)
{
    GString *sql = g_string_new(NULL);
    long pid;

    g_string_printf(sql,
                    "SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE application_name = "
                    "'%s' AND datname = current_database()",
                    app);
    for (int i = 0; i < n; i++)
        g_string_append_printf(sql, " AND pid <> %ld", pids[i]);
    pid = td_sql(db, sql->str);
    g_string_free(sql, TRUE);
    return pid;
}

static long ts_alive(const char *db, long pid)
{
    char sql[96];

    g_snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity WHERE pid = %ld", pid);
    return td_sql(db, sql);
}

static void ts_woken(void *arg)
{
    (*(int *)arg)++;
}

/*
 * After the reclaim's CHECKPOINT every connection of the file system is
 * opened anew (an idle backend would keep the WAL segment it last wrote
 * on the disk after the checkpoint removed it): the owners are woken,
 * writes that do not fit answer -EAGAIN until each connection has a new
 * backend, and dbfs_conn_tend returns only once the old backend is gone.
 */
static void test_renew(void)
{
    dbfs_cred root = td_root();
    char *db = tl_fresh_fs();
    dbfs_conn *session = NULL, *c2 = NULL;
    dbfs_fsstat_res s;
    dbfs_wcc w;
    td_fs t;
    int woken = 0, id;
    long pids[4];

    /* A file with data to remove, written without a guard. */
    memset(&t, 0, sizeof t);
    t.conninfo = g_strdup(db);
    dbfs_config cfg = {.conninfo = db};
    td_rc(dbfs_open(&cfg, &t.fs), 0);
    td_rc(dbfs_conn_open(t.fs, &t.c), 0);
    t.root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t.fs)->root_gen, 0};
    dbfs_attr g = td_create(&t, &root, t.root, "gone", 0644);
    td_rc(ts_write(&t, td_fh(&g), 0, 65536, 'g', DBFS_FILE_SYNC), 0);
    td_close(&t);

    ts_open_guarded(&t, db);
    dbfs_attr f = td_create(&t, &root, t.root, "f", 0644);
    pids[0] = ts_backend(db, "pgnfs", NULL, 0);
    td_rc(dbfs_conn_open(t.fs, &c2), 0);
    pids[1] = ts_backend(db, "pgnfs", pids, 1);
    g_assert_cmpint(pids[0], >, 0);
    g_assert_cmpint(pids[1], >, 0);
    id = dbfs_renew_watch(t.fs, ts_woken, &woken);
    g_assert_cmpint(id, >=, 0);

    td_rc(dbfs_remove(t.c, &root, t.root, "gone", &w), 0);
    td_rc(ts_write(&t, td_fh(&f), 0, 4096, 'f', DBFS_FILE_SYNC), -EAGAIN);
    td_rc(dbfs_space_tend(t.fs, &session), 1);
    g_assert_null(session);
    g_assert_cmpint(woken, ==, 1);
    /* c2 has not been opened anew: still JUKEBOX, whatever t.c did. */
    td_rc(ts_write(&t, td_fh(&f), 0, 4096, 'f', DBFS_FILE_SYNC), -EAGAIN);
    g_assert_cmpint(ts_alive(db, pids[1]), ==, 1);
    td_rc(dbfs_conn_tend(c2), 0);
    /* Gone as soon as tend returned; a new backend serves c2. */
    g_assert_cmpint(ts_alive(db, pids[1]), ==, 0);
    td_rc(dbfs_conn_tend(t.c), 0);
    g_assert_cmpint(ts_alive(db, pids[0]), ==, 0);
    pids[2] = ts_backend(db, "pgnfs", pids, 2);
    g_assert_cmpint(pids[2], >, 0);
    pids[3] = ts_backend(db, "pgnfs", pids, 3);
    g_assert_cmpint(pids[3], >, 0);
    /* Nothing is owed any more: the refusal is NOSPC again, and the
     * connections work (a worker's statements prepared anew). */
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "space: the file system of *NOSPC*");
    td_rc(ts_write(&t, td_fh(&f), 0, 4096, 'f', DBFS_FILE_SYNC), -ENOSPC);
    g_test_assert_expected_messages();
    td_rc(dbfs_fsstat(c2, &s), 0);
    td_getattr(&t, td_fh(&f));
    td_rc(dbfs_conn_tend(c2), 0);
    g_assert_cmpint(ts_backend(db, "pgnfs", pids, 4), ==, 0);
    dbfs_renew_unwatch(t.fs, id);
    dbfs_conn_close(c2);
    td_close(&t);
    g_free(db);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/space/refuses", test_refuses);
    g_test_add_func("/space/reclaim", test_reclaim);
    g_test_add_func("/space/renew", test_renew);
    return g_test_run();
}
