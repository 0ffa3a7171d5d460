/*
 * test_conn.c -- dbfs life cycle and connections against a real database:
 * mkfs (options, an existing file system, force), open (no file system, a
 * newer schema, out-of-date functions), round trips per call, two threads
 * with their own connections, a connection killed under dbfs, fsstat and
 * commit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "td.h"
#include "testlib.h"

static const uint32_t td_no_groups[1] = {0};

static void test_mkfs_open(void)
{
    char *db = tl_fresh_db();
    dbfs_config cfg = {.conninfo = db, .relatime = true};
    dbfs_mkfs_opts o = {.root_uid = 12, .root_gid = 34, .root_mode = 0750};
    dbfs *fs = NULL;
    dbfs_conn *c = NULL;
    dbfs_info first;
    dbfs_attr a;

    /* Nothing there yet. */
    td_rc(dbfs_open(&cfg, &fs), -ENOENT);
    g_assert_null(fs);
    /* Bad options change nothing. */
    o.chunk_size = 512;
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "*chunk size 512*");
    td_rc(dbfs_mkfs(db, &o), -EINVAL);
    g_test_assert_expected_messages();
    o.chunk_size = 0;
    o.storage = (dbfs_storage)7; /* no such layout */
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "*not available*");
    td_rc(dbfs_mkfs(db, &o), -EINVAL);
    g_test_assert_expected_messages();
    o.storage = DBFS_STORAGE_SINGLE;
    td_rc(dbfs_open(&cfg, &fs), -ENOENT);

    o.chunk_size = 16384;
    td_rc(dbfs_mkfs(db, &o), 0);
    td_rc(dbfs_open(&cfg, &fs), 0);
    first = *dbfs_get_info(fs);
    g_assert_cmpuint(first.chunk_size, ==, 16384);
    unsigned char zero[DBFS_SECRET_LEN] = {0};
    g_assert_cmpint(memcmp(first.secret, zero, sizeof zero), !=, 0);
    td_rc(dbfs_conn_open(fs, &c), 0);
    td_rc(dbfs_getattr(c, (dbfs_fh){DBFS_ROOT_INO, first.root_gen, 0}, &a), 0);
    g_assert_cmpuint(a.uid, ==, 12);
    g_assert_cmpuint(a.gid, ==, 34);
    g_assert_cmpuint(a.mode, ==, 0750);
    dbfs_cred root = td_root();
    dbfs_fh rootfh = {DBFS_ROOT_INO, first.root_gen, 0};
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0644};
    dbfs_wcc w;
    td_rc(dbfs_create(c, &root, rootfh, "old", DBFS_CREATE_GUARDED, &sa, 0, &a, &w), 0);
    dbfs_conn_close(c);
    dbfs_close(fs);

    /* Again without force: refused; with force: a new file system. */
    o.chunk_size = 0;
    td_rc(dbfs_mkfs(db, &o), -EEXIST);
    o.force = true;
    td_rc(dbfs_mkfs(db, &o), 0);
    td_rc(dbfs_open(&cfg, &fs), 0);
    g_assert_cmpuint(dbfs_get_info(fs)->chunk_size, ==, DBFS_CHUNK_SIZE_DEFAULT);
    g_assert_cmpint(memcmp(dbfs_get_info(fs)->secret, first.secret, DBFS_SECRET_LEN), !=, 0);
    td_rc(dbfs_conn_open(fs, &c), 0);
    rootfh.gen = dbfs_get_info(fs)->root_gen;
    td_rc(dbfs_lookup(c, &root, rootfh, "old", &a, NULL), -ENOENT);
    dbfs_conn_close(c);
    dbfs_close(fs);

    /* Out-of-date functions are put back by open. */
    td_sql(db, "DROP FUNCTION pgnfs_link(bigint, int, bigint, int, bytea, bigint, bigint, bigint[],"
               " bigint)");
    td_sql(db, "UPDATE pgnfs_fs SET functions_digest = 'old'");
    td_rc(dbfs_open(&cfg, &fs), 0);
    g_assert_cmpint(td_sql(db, "SELECT count(*) FROM pg_proc WHERE proname = 'pgnfs_link'"), ==, 1);
    g_assert_cmpint(td_sql(db, "SELECT count(*) FROM pgnfs_fs WHERE functions_digest = 'old'"), ==,
                    0);
    dbfs_close(fs);

    /* A schema newer than this build is refused. */
    td_sql(db, "UPDATE pgnfs_fs SET schema_version = schema_version + 1");
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "*newer than this build*");
    td_rc(dbfs_open(&cfg, &fs), -EPROTO);
    g_test_assert_expected_messages();
    g_assert_null(fs);
    g_free(db);

    /* A database that does not answer. */
    cfg.conninfo = "host=/nonexistent-socket-dir dbname=nope connect_timeout=2";
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "cannot connect to the database*");
    td_rc(dbfs_open(&cfg, &fs), -EAGAIN);
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "cannot connect to the database*");
    td_rc(dbfs_mkfs(cfg.conninfo, &o), -EAGAIN);
    g_test_assert_expected_messages();
}

static void test_round_trips(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0644};
    dbfs_sattr dsa = {.set = DBFS_SET_MODE, .mode = 0755};
    dbfs_attr d, f, a;
    dbfs_attr_opt ao;
    dbfs_wcc w, w2;
    dbfs_dirent *e;
    size_t n;
    bool eof;
    uint32_t got, nread;
    char *target;
    char buf[100];
    dbfs_stable st;
    dbfs_fsstat_res fsst;

    td_open(&t);
    td_trips(&t);
#define ONE(call)                                                                                  \
    do {                                                                                           \
        td_rc(call, 0);                                                                            \
        if (td_trips(&t) != 1)                                                                     \
            g_error("%s took more than one round trip", #call);                                    \
    } while (0)
    ONE(dbfs_mkdir(t.c, &u, t.root, "d", &dsa, &d, &w));
    ONE(dbfs_create(t.c, &u, td_fh(&d), "f", DBFS_CREATE_GUARDED, &sa, 0, &f, &w));
    ONE(dbfs_create(t.c, &u, td_fh(&d), "x", DBFS_CREATE_EXCLUSIVE, NULL, 7, &a, &w));
    ONE(dbfs_symlink(t.c, &u, td_fh(&d), "l", "f", NULL, &a, &w));
    ONE(dbfs_mknod(t.c, &u, td_fh(&d), "p", DBFS_FIFO, 0, 0, &sa, &a, &w));
    ONE(dbfs_getattr(t.c, td_fh(&f), &a));
    ONE(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w));
    ONE(dbfs_access(t.c, &u, td_fh(&f), 0x3f, &got, &a));
    ONE(dbfs_lookup(t.c, &u, td_fh(&d), "f", &a, &ao));
    ONE(dbfs_lookup(t.c, &u, td_fh(&d), "..", &a, &ao));
    ONE(dbfs_lookup(t.c, &u, td_fh(&d), ".", &a, &ao));
    ONE(dbfs_readlink(t.c, &u, td_fh(&a), &target, &a) == -EINVAL ? 0 : -1);
    dbfs_attr l = td_lookup(&t, &u, td_fh(&d), "l");
    td_trips(&t);
    ONE(dbfs_readlink(t.c, &u, td_fh(&l), &target, &a));
    free(target);
    ONE(dbfs_link(t.c, &u, td_fh(&f), td_fh(&d), "f2", &ao, &w));
    ONE(dbfs_rename(t.c, &u, td_fh(&d), "f2", t.root, "f3", &w, &w2));
    ONE(dbfs_remove(t.c, &u, t.root, "f3", &w));
    ONE(dbfs_readdir(t.c, &u, td_fh(&d), 0, 100, true, &e, &n, &eof, &ao));
    dbfs_dirents_free(e, n);
    ONE(dbfs_readdir(t.c, &u, td_fh(&d), 0, 100, false, &e, &n, &eof, &ao));
    dbfs_dirents_free(e, n);
    ONE(dbfs_write(t.c, &u, td_fh(&f), 0, "abc", 3, DBFS_FILE_SYNC, &st, &w));
    ONE(dbfs_read(t.c, &u, td_fh(&f), 0, 100, buf, &nread, &eof, &ao));
    ONE(dbfs_commit(t.c, td_fh(&f), 0, 0, &w));
    ONE(dbfs_fsstat(t.c, &fsst));
    ONE(dbfs_mkdir(t.c, &u, td_fh(&d), "sub", &dsa, &a, &w));
    ONE(dbfs_rmdir(t.c, &u, td_fh(&d), "sub", &w));
    /* Failures answered by the database cost one too; argument errors
     * none. */
    td_rc(dbfs_create(t.c, &u, td_fh(&d), "f", DBFS_CREATE_GUARDED, &sa, 0, &a, &w), -EEXIST);
    g_assert_cmpuint(td_trips(&t), ==, 1);
    td_rc(dbfs_create(t.c, &u, td_fh(&d), "a/b", DBFS_CREATE_GUARDED, &sa, 0, &a, &w), -EINVAL);
    g_assert_cmpuint(td_trips(&t), ==, 0);
#undef ONE
    td_close(&t);
}

static void test_fsstat_commit(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_fsstat_res s;
    dbfs_attr f;
    dbfs_wcc w;

    td_open(&t);
    td_rc(dbfs_fsstat(t.c, &s), 0);
    g_assert_cmpuint(s.tbytes, >, s.fbytes);
    g_assert_cmpuint(s.fbytes, >=, s.abytes);
    g_assert_cmpuint(s.tbytes - s.fbytes, >, 1024 * 1024); /* the database's own size */
    g_assert_cmpuint(s.tfiles, >=, s.ffiles + 1);
    g_assert_cmpuint(s.afiles, ==, s.ffiles);

    f = td_create(&t, &u, t.root, "f", 0644);
    td_write(&t, &u, td_fh(&f), 0, "x", 1);
    td_rc(dbfs_commit(t.c, td_fh(&f), 0, 0, &w), 0);
    /* Nothing was buffered (a FILE_SYNC write): before and after agree. */
    g_assert_true(w.have_pre);
    g_assert_true(w.have_post);
    g_assert_cmpuint(w.pre_size, ==, 1);
    g_assert_cmpint(w.pre_ctime_ns, ==, w.post.ctime_ns);
    g_assert_cmpuint(w.post.size, ==, 1);
    td_rc(dbfs_commit(t.c, (dbfs_fh){f.ino, f.gen + 1, 0}, 0, 0, &w), -ESTALE);
    g_assert_false(w.have_post);
    td_close(&t);

    /* With a space path, bytes come from the disk under it. */
    td_fs t2;
    td_open(&t2);
    dbfs_conn_close(t2.c);
    dbfs_close(t2.fs);
    dbfs_config cfg = {.conninfo = t2.conninfo, .space_path = g_get_tmp_dir()};
    td_rc(dbfs_open(&cfg, &t2.fs), 0);
    td_rc(dbfs_conn_open(t2.fs, &t2.c), 0);
    td_rc(dbfs_fsstat(t2.c, &s), 0);
    g_assert_cmpuint(s.tbytes, >, 0);
    g_assert_cmpuint(s.tbytes, <, UINT64_C(1) << 50);
    g_assert_cmpuint(s.fbytes, <=, s.tbytes);
    td_close(&t2);
}

/* Two threads, each with its own connection, create the same names. */
typedef struct {
    dbfs *fs;
    dbfs_fh dir;
    int rounds;
    int *results; /* one per round */
    bool data;    /* write chunks instead */
    dbfs_fh file;
    int id;
} td_worker;

static gpointer td_worker_run(gpointer arg)
{
    td_worker *wk = arg;
    dbfs_conn *c;
    dbfs_cred u = td_user(1000 + (uint32_t)wk->id, 100, 0, td_no_groups);
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0666};
    char name[32];

    td_rc(dbfs_conn_open(wk->fs, &c), 0);
    for (int i = 0; i < wk->rounds; i++) {
        dbfs_attr a;
        dbfs_wcc w;

        if (wk->data) {
            unsigned char chunk[8192];
            dbfs_stable st;

            memset(chunk, 'A' + wk->id, sizeof chunk);
            /* Thread 0 writes even chunks, thread 1 odd ones, of one file. */
            wk->results[i] = dbfs_write(c, &u, wk->file, (uint64_t)(2 * i + wk->id) * 8192, chunk,
                                        sizeof chunk, DBFS_FILE_SYNC, &st, &w);
            continue;
        }
        g_snprintf(name, sizeof name, "race%d", i);
        wk->results[i] = dbfs_create(c, &u, wk->dir, name, DBFS_CREATE_GUARDED, &sa, 0, &a, &w);
    }
    dbfs_conn_close(c);
    return NULL;
}

/* Two threads create the same names; exactly one of each pair wins. */
static void td_create_race(td_fs *t, int rounds)
{
    int *r0 = g_new0(int, rounds), *r1 = g_new0(int, rounds);
    td_worker w0 = {.fs = t->fs, .dir = t->root, .rounds = rounds, .results = r0, .id = 0};
    td_worker w1 = {.fs = t->fs, .dir = t->root, .rounds = rounds, .results = r1, .id = 1};
    GThread *t0 = g_thread_new("w0", td_worker_run, &w0);
    GThread *t1 = g_thread_new("w1", td_worker_run, &w1);

    g_thread_join(t0);
    g_thread_join(t1);
    for (int i = 0; i < rounds; i++) {
        if (!((r0[i] == 0 && r1[i] == -EEXIST) || (r0[i] == -EEXIST && r1[i] == 0)))
            g_error("round %d: the two creates answered %d and %d", i, r0[i], r1[i]);
    }
    g_free(r0);
    g_free(r1);
}

static void test_concurrency(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    enum { ROUNDS = 100 };
    int r0[ROUNDS], r1[ROUNDS];
    td_worker w0 = {0}, w1 = {0};
    GThread *t0, *t1;
    dbfs_attr f;

    td_open(&t);
    td_create_race(&t, ROUNDS);

    /* Concurrent writes to different chunks of one file both land. */
    f = td_create(&t, &root, t.root, "shared", 0666);
    w0 = (td_worker){
        .fs = t.fs, .rounds = 40, .results = r0, .id = 0, .data = true, .file = td_fh(&f)};
    w1 = (td_worker){
        .fs = t.fs, .rounds = 40, .results = r1, .id = 1, .data = true, .file = td_fh(&f)};
    t0 = g_thread_new("w0", td_worker_run, &w0);
    t1 = g_thread_new("w1", td_worker_run, &w1);
    g_thread_join(t0);
    g_thread_join(t1);
    for (int i = 0; i < 40; i++) {
        td_rc(r0[i], 0);
        td_rc(r1[i], 0);
    }
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).size, ==, 80 * 8192);
    unsigned char *all = g_malloc(80 * 8192);
    td_read(&t, &root, td_fh(&f), 0, all, 80 * 8192);
    for (int k = 0; k < 80; k++) {
        for (int b = 0; b < 8192; b += 1000)
            g_assert_cmpint(all[k * 8192 + b], ==, 'A' + (k % 2));
    }
    g_free(all);
    td_close(&t);
}

/* The namespace must stay a tree with right link counts, whatever two
 * threads do to it at the same time. Returns violations found. */
static long td_namespace_violations(const char *conninfo)
{
    return td_sql(conninfo,
                  "SELECT"
                  " (SELECT count(*) FROM fileatt d WHERE d.type = 2 AND d.nlink <> 2 +"
                  "   (SELECT count(*) FROM naming n JOIN fileatt c ON c.inode = n.inode"
                  "     WHERE n.parent = d.inode AND c.type = 2))"
                  " + (SELECT count(*) FROM fileatt f WHERE f.type <> 2 AND f.nlink <>"
                  "   (SELECT count(*) FROM naming n WHERE n.inode = f.inode))"
                  " + (SELECT count(*) FROM fileatt d WHERE d.type = 2 AND d.inode <> 1 AND"
                  "   (SELECT count(*) FROM naming n WHERE n.inode = d.inode) <> 1)"
                  " + (SELECT count(*) FROM fileatt WHERE type = 2) - (WITH RECURSIVE t(ino) AS"
                  "   (SELECT 1::bigint UNION SELECT n.inode FROM naming n JOIN t ON n.parent ="
                  "    t.ino JOIN fileatt c ON c.inode = n.inode AND c.type = 2)"
                  "   SELECT count(*) FROM t)");
}

typedef struct {
    dbfs *fs;
    dbfs_fh dirs[3];
    guint32 seed;
    int ops;
    int bad; /* results outside the expected set */
} td_racer;

static gpointer td_racer_run(gpointer arg)
{
    td_racer *r = arg;
    static const char *const names[] = {"a", "b", "c", "d"};
    dbfs_cred root = td_root();
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0755};
    GRand *rnd = g_rand_new_with_seed(r->seed);
    dbfs_conn *c;

    td_rc(dbfs_conn_open(r->fs, &c), 0);
    for (int i = 0; i < r->ops; i++) {
        dbfs_fh d1 = r->dirs[g_rand_int_range(rnd, 0, 3)];
        dbfs_fh d2 = r->dirs[g_rand_int_range(rnd, 0, 3)];
        const char *n1 = names[g_rand_int_range(rnd, 0, 4)];
        const char *n2 = names[g_rand_int_range(rnd, 0, 4)];
        dbfs_attr a;
        dbfs_attr_opt ao;
        dbfs_wcc w, w2;
        int rc = 0;

        /* Sometimes work inside a subdirectory found by name. */
        if (g_rand_boolean(rnd) && dbfs_lookup(c, &root, d1, n2, &a, &ao) == 0 &&
            a.type == DBFS_DIR)
            d1 = td_fh(&a);
        switch (g_rand_int_range(rnd, 0, 6)) {
        case 0:
            rc = dbfs_mkdir(c, &root, d1, n1, &sa, &a, &w);
            break;
        case 1:
            rc = dbfs_create(c, &root, d1, n1, DBFS_CREATE_GUARDED, &sa, 0, &a, &w);
            break;
        case 2:
            rc = dbfs_remove(c, &root, d1, n1, &w);
            break;
        case 3:
            rc = dbfs_rmdir(c, &root, d1, n1, &w);
            break;
        case 4:
            rc = dbfs_rename(c, &root, d1, n1, d2, n2, &w, &w2);
            break;
        case 5:
            rc = dbfs_lookup(c, &root, d1, n1, &a, &ao);
            if (rc == 0)
                rc = dbfs_link(c, &root, td_fh(&a), d2, n2, &ao, &w);
            break;
        }
        if (rc != 0 && rc != -ENOENT && rc != -EEXIST && rc != -ENOTEMPTY && rc != -ENOTDIR &&
            rc != -EISDIR && rc != -EINVAL && rc != -EPERM && rc != -ESTALE) {
            g_printerr("racer seed %u op %d: unexpected %s\n", r->seed, i, g_strerror(-rc));
            r->bad++;
        }
    }
    dbfs_conn_close(c);
    g_rand_free(rnd);
    return NULL;
}

/* dbfs runs at READ COMMITTED whatever the database's default: under a
 * default of SERIALIZABLE, racing creates on one directory still answer
 * 0 and EEXIST (not serialization failures retried until EAGAIN). */
static void test_serializable_default(void)
{
    td_fs t;

    td_open(&t);
    dbfs_conn_close(t.c);
    t.c = NULL;
    td_sql(t.conninfo,
           "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET"
           " default_transaction_isolation = serializable', current_database()); END $$");
    td_create_race(&t, 60);
    td_rc(dbfs_conn_open(t.fs, &t.c), 0);
    td_close(&t);
}

typedef struct {
    dbfs *fs;
    dbfs_fh dir;
    int rc;
} td_remover;

static gpointer td_remover_run(gpointer arg)
{
    td_remover *r = arg;
    dbfs_cred root = td_root();
    dbfs_conn *c;
    dbfs_wcc w;

    td_rc(dbfs_conn_open(r->fs, &c), 0);
    r->rc = dbfs_remove(c, &root, r->dir, "victim", &w);
    dbfs_conn_close(c);
    return NULL;
}

/* Wait until a session of conninfo's database waits for a lock, within a
 * generous deadline. */
static void td_wait_lock_waiter(const char *conninfo)
{
    int64_t deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;

    while (td_sql(conninfo,
                  "SELECT count(*) FROM pg_stat_activity"
                  " WHERE datname = current_database() AND wait_event_type = 'Lock'") == 0) {
        if (g_get_monotonic_time() > deadline)
            g_error("no session came to wait for a lock in 60 s");
        g_usleep(10 * 1000);
    }
}

/* A deadlock between dbfs and another session: dbfs's transaction is the
 * one PostgreSQL aborts (40P01); dbfs runs it again and it succeeds. */
static void test_deadlock_retry(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    dbfs_attr f;
    td_remover rm;
    PGconn *ext;
    PGresult *r;
    GThread *th;
    char ino[32];
    const char *vals[1] = {ino};

    td_open(&t);
    f = td_create(&t, &root, t.root, "victim", 0644);
    ext = PQconnectdb(t.conninfo);
    g_assert_cmpint(PQstatus(ext), ==, CONNECTION_OK);
    /* This session never looks for deadlocks itself, so dbfs's does. */
    r = PQexec(ext, "SET deadlock_timeout = '60s'");
    g_assert_cmpint(PQresultStatus(r), ==, PGRES_COMMAND_OK);
    PQclear(r);
    r = PQexec(ext, "BEGIN");
    PQclear(r);
    g_snprintf(ino, sizeof ino, "%" G_GUINT64_FORMAT, f.ino);
    r = PQexecParams(ext, "SELECT 1 FROM fileatt WHERE inode = $1::int8 FOR UPDATE", 1, NULL, vals,
                     NULL, NULL, 0);
    g_assert_cmpint(PQresultStatus(r), ==, PGRES_TUPLES_OK);
    PQclear(r);

    /* dbfs locks the directory, then waits for the file (wait until the
     * database shows it waiting for a lock: the event, not a pause)... */
    rm = (td_remover){.fs = t.fs, .dir = t.root};
    th = g_thread_new("remover", td_remover_run, &rm);
    td_wait_lock_waiter(t.conninfo);
    /* ... while this session waits for the directory. */
    g_assert_true(PQsendQuery(ext, "SELECT 1 FROM fileatt WHERE inode = 1 FOR UPDATE"));
    r = PQgetResult(ext);
    g_assert_cmpint(PQresultStatus(r), ==, PGRES_TUPLES_OK);
    PQclear(r);
    r = PQgetResult(ext);
    g_assert_null(r);
    /* This session got the directory: dbfs's transaction was the victim. */
    r = PQexec(ext, "COMMIT");
    PQclear(r);
    PQfinish(ext);
    g_thread_join(th);
    td_rc(rm.rc, 0);
    td_rc(dbfs_getattr(t.c, td_fh(&f), &f), -ESTALE);
    td_close(&t);
}

static void test_namespace_race(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    td_racer r0, r1;
    GThread *t0, *t1;
    guint32 seed = g_random_int();
    dbfs_attr x, y;

    g_test_message("namespace race seeds %u and %u", seed, seed + 1);
    td_open(&t);
    x = td_mkdir(&t, &root, t.root, "X", 0755);
    y = td_mkdir(&t, &root, td_fh(&x), "Y", 0755);
    r0 = (td_racer){.fs = t.fs, .dirs = {t.root, td_fh(&x), td_fh(&y)}, .seed = seed, .ops = 400};
    r1 = r0;
    r1.seed = seed + 1;
    t0 = g_thread_new("r0", td_racer_run, &r0);
    t1 = g_thread_new("r1", td_racer_run, &r1);
    g_thread_join(t0);
    g_thread_join(t1);
    g_assert_cmpint(r0.bad + r1.bad, ==, 0);
    g_assert_cmpint(td_namespace_violations(t.conninfo), ==, 0);
    td_close(&t);
}

/* Terminate every other session on the database of conninfo (waiting
 * until they are gone); returns how many there were. */
static long td_kill_others(const char *conninfo)
{
    /* OFFSET 0 keeps the filter below the call: never kill ourselves. */
    return td_sql(conninfo, "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000))"
                            " FROM (SELECT pid FROM pg_stat_activity"
                            "        WHERE datname = current_database()"
                            "          AND pid <> pg_backend_pid() OFFSET 0) s");
}

/* A write on a connection of its own, for the mid-call kill below. */
typedef struct {
    dbfs *fs;
    dbfs_fh fh;
    int rc;
} td_writer;

static gpointer td_writer_run(gpointer arg)
{
    td_writer *w = arg;
    dbfs_cred root = td_root();
    dbfs_conn *c;
    dbfs_stable st;
    dbfs_wcc wcc;

    td_rc(dbfs_conn_open(w->fs, &c), 0);
    w->rc = dbfs_write(c, &root, w->fh, 0, "dead", 4, DBFS_FILE_SYNC, &st, &wcc);
    dbfs_conn_close(c);
    return NULL;
}

/*
 * The backend behind a connection goes away. While the connection is
 * idle (PostgreSQL restarted, an administrator's pg_terminate_backend),
 * the next call finds it ended before it sends anything, reconnects and
 * works at once. In the middle of a call the call answers -EAGAIN (it may
 * have committed: it is not run again), and the next one works.
 */
static void test_lost_connection(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr a, f;
    char buf[4];
    char ino[32];
    const char *vals[1] = {ino};

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0644);
    td_write(&t, &u, td_fh(&f), 0, "live", 4);

    /* Idle: kill the backend behind dbfs's connection (the only other
     * session on this database is the one doing the killing). */
    g_assert_cmpint(td_kill_others(t.conninfo), ==, 1);
    a = td_getattr(&t, t.root);
    g_assert_cmpuint(a.ino, ==, DBFS_ROOT_INO);
    g_assert_cmpint(td_kill_others(t.conninfo), ==, 1);
    td_write(&t, &u, td_fh(&f), 0, "next", 4);
    g_assert_cmpint(td_kill_others(t.conninfo), ==, 1);
    td_read(&t, &u, td_fh(&f), 0, buf, 4);
    g_assert_cmpmem(buf, 4, "next", 4);

    /* In the middle of a call: a write waits for the file's row, which
     * another session holds; its backend is killed while it waits. */
    PGconn *ext = PQconnectdb(t.conninfo);
    PGresult *r;
    g_assert_cmpint(PQstatus(ext), ==, CONNECTION_OK);
    r = PQexec(ext, "BEGIN");
    PQclear(r);
    g_snprintf(ino, sizeof ino, "%" G_GUINT64_FORMAT, f.ino);
    r = PQexecParams(ext, "SELECT 1 FROM fileatt WHERE inode = $1::int8 FOR UPDATE", 1, NULL, vals,
                     NULL, NULL, 0);
    g_assert_cmpint(PQresultStatus(r), ==, PGRES_TUPLES_OK);
    PQclear(r);
    td_writer w = {.fs = t.fs, .fh = td_fh(&f)};
    GThread *th = g_thread_new("writer", td_writer_run, &w);
    td_wait_lock_waiter(t.conninfo);
    g_assert_cmpint(td_sql(t.conninfo, "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid,"
                                       " 30000)) FROM pg_stat_activity"
                                       " WHERE datname = current_database()"
                                       " AND wait_event_type = 'Lock'"),
                    ==, 1);
    g_thread_join(th);
    td_rc(w.rc, -EAGAIN);
    r = PQexec(ext, "ROLLBACK");
    PQclear(r);
    PQfinish(ext);
    td_read(&t, &u, td_fh(&f), 0, buf, 4);
    g_assert_cmpmem(buf, 4, "next", 4);
    td_write(&t, &u, td_fh(&f), 0, "back", 4);
    td_read(&t, &u, td_fh(&f), 0, buf, 4);
    g_assert_cmpmem(buf, 4, "back", 4);
    td_close(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/conn/mkfs-open", test_mkfs_open);
    g_test_add_func("/conn/round-trips", test_round_trips);
    g_test_add_func("/conn/fsstat-commit", test_fsstat_commit);
    g_test_add_func("/conn/concurrency", test_concurrency);
    g_test_add_func("/conn/serializable-default", test_serializable_default);
    g_test_add_func("/conn/deadlock-retry", test_deadlock_retry);
    g_test_add_func("/conn/namespace-race", test_namespace_race);
    g_test_add_func("/conn/lost-connection", test_lost_connection);
    return g_test_run();
}
