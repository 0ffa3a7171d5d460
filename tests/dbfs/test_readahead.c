/*
 * test_readahead.c -- sequential READs fetch the next chunks along
 * (dbfs_ra.c read-ahead), so a stream of small reads costs far fewer
 * round trips than reads; random reads fetch only what they ask; a READ
 * of chunks another READ is fetching (a client with several in flight)
 * waits for them instead of fetching them again; a read-ahead stops where
 * another fetch of the file begins; and every byte is right either way.
 */
#include <string.h>

#include <libpq-fe.h>

#include "td.h"
#include "testlib.h"

enum { CS = 4096, CHUNKS = 64 };

/* A file of CHUNKS chunks written through its own dbfs (so t's caches are
 * cold), then t opened with the buffer cache. */
static dbfs_attr tr_setup(td_fs *t, unsigned char *data)
{
    dbfs_mkfs_opts o = {.chunk_size = CS, .root_mode = 0777};
    dbfs_config cfg = {0};
    dbfs_cred root = td_root();
    td_fs w = {0};
    dbfs_attr f;

    memset(t, 0, sizeof *t);
    t->conninfo = tl_fresh_db();
    td_rc(dbfs_mkfs(t->conninfo, &o), 0);
    cfg.conninfo = t->conninfo;
    td_rc(dbfs_open(&cfg, &w.fs), 0);
    td_rc(dbfs_conn_open(w.fs, &w.c), 0);
    w.root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(w.fs)->root_gen, 0};
    for (size_t i = 0; i < (size_t)CS * CHUNKS; i++)
        data[i] = (unsigned char)(i * 13 + (i >> 12));
    f = td_create(&w, &root, w.root, "f", 0644);
    td_write(&w, &root, td_fh(&f), 0, data, CS * CHUNKS);
    dbfs_conn_close(w.c);
    dbfs_close(w.fs);

    cfg.stat_cache_entries = 100;
    cfg.buffer_cache_bytes = 8u << 20;
    td_rc(dbfs_open(&cfg, &t->fs), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c), 0);
    t->root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t->fs)->root_gen, 0};
    t->trips_mark = dbfs_conn_round_trips(t->c);
    return f;
}

static void test_stream(void)
{
    unsigned char *data = g_malloc(CS * CHUNKS), buf[CS];
    dbfs_cred root = td_root();
    td_fs t;
    dbfs_attr f = tr_setup(&t, data);

    td_trips(&t);
    for (unsigned i = 0; i < CHUNKS; i++) {
        td_read(&t, &root, td_fh(&f), (uint64_t)i * CS, buf, CS);
        g_assert_cmpmem(buf, CS, data + (size_t)i * CS, CS);
    }
    uint64_t trips = td_trips(&t);
    g_test_message("%u sequential reads of one chunk: %" G_GUINT64_FORMAT " round trips", CHUNKS,
                   trips);
    /* Windows 1, 2, 4, ... 128 chunks: a handful of fetches. */
    g_assert_cmpuint(trips, <=, 10);

    /* Random reads of a fresh file system: each one fetches what it
     * asks, nothing is wrong. */
    td_close(&t);
    f = tr_setup(&t, data);
    GRand *r = g_rand_new_with_seed(7);
    td_trips(&t);
    for (unsigned i = 0; i < 16; i++) {
        unsigned k = (unsigned)g_rand_int_range(r, 0, CHUNKS);
        td_read(&t, &root, td_fh(&f), (uint64_t)k * CS, buf, CS);
        g_assert_cmpmem(buf, CS, data + (size_t)k * CS, CS);
    }
    g_assert_cmpuint(td_trips(&t), >=, 8);
    g_rand_free(r);
    td_close(&t);
    g_free(data);
}

/* One READ of chunk k on a connection of its own (a worker thread),
 * opened beforehand (opening one prepares statements, which waits for
 * the table lock). */
typedef struct {
    dbfs_conn *c;
    dbfs_fh fh;
    unsigned k;
    unsigned char buf[CS];
    int rc;
} tr_reader;

static gpointer tr_read(gpointer arg)
{
    tr_reader *r = arg;
    dbfs_cred root = td_root();
    uint32_t n = 0;
    bool eof;

    r->rc = dbfs_read(r->c, &root, r->fh, (uint64_t)r->k * CS, CS, r->buf, &n, &eof, NULL);
    if (r->rc == 0 && n != CS)
        r->rc = -1;
    return NULL;
}

/* Wait (deadline 60 s) until n sessions wait for a lock. */
static void tr_wait_blocked(PGconn *pg, long n)
{
    gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;

    for (;;) {
        PGresult *r = PQexec(pg, "SELECT count(*) FROM pg_locks WHERE NOT granted");
        long got = PQresultStatus(r) == PGRES_TUPLES_OK ? atol(PQgetvalue(r, 0, 0)) : -1;

        PQclear(r);
        if (got >= n)
            return;
        if (g_get_monotonic_time() > deadline)
            g_error("%ld sessions wait for a lock after 60 s, not %ld", got, n);
        g_usleep(10000);
    }
}

static void tr_exec(PGconn *pg, const char *sql)
{
    PGresult *r = PQexec(pg, sql);

    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        g_error("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
}

/* The buffer cache's row of dbfs_cache_stats. */
static dbfs_cache_figures tr_buffer(const dbfs *fs)
{
    dbfs_cache_figures f[DBFS_CACHES_MAX];
    unsigned n = dbfs_cache_stats(fs, f, DBFS_CACHES_MAX);

    for (unsigned i = 0; i < n; i++)
        if (strcmp(f[i].name, "buffer") == 0)
            return f[i];
    g_error("no buffer cache row in dbfs_cache_stats");
}

/* Wait (deadline 60 s) until n READs in all waited for another's fetch. */
static void tr_wait_waits(const dbfs *fs, uint64_t n)
{
    gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;

    while (tr_buffer(fs).waits < n) {
        if (g_get_monotonic_time() > deadline)
            g_error("%" G_GUINT64_FORMAT
                    " READs waited for a fetch after 60 s, not %" G_GUINT64_FORMAT,
                    tr_buffer(fs).waits, n);
        g_usleep(10000);
    }
}

/* A stream's READ at the database (the data table locked meanwhile) reads
 * the next chunk ahead; the READ of that chunk, arriving meanwhile, waits
 * for it and is served from the buffer cache with no round trip. */
static void test_wait(void)
{
    unsigned char *data = g_malloc(CS * CHUNKS);
    dbfs_cred root = td_root();
    td_fs t;
    dbfs_attr f = tr_setup(&t, data);
    tr_reader a = {.fh = td_fh(&f), .k = 1}, b = {.fh = td_fh(&f), .k = 2};
    PGconn *lock = PQconnectdb(t.conninfo);
    GThread *ta, *tb;
    uint64_t b_trips;

    g_assert_cmpint(PQstatus(lock), ==, CONNECTION_OK);
    td_rc(dbfs_conn_open(t.fs, &a.c), 0);
    td_rc(dbfs_conn_open(t.fs, &b.c), 0);
    /* The stream begins: chunk 0. */
    td_read(&t, &root, td_fh(&f), 0, a.buf, CS);
    b_trips = dbfs_conn_round_trips(b.c);
    tr_exec(lock, "BEGIN");
    tr_exec(lock, "LOCK TABLE allfiles IN ACCESS EXCLUSIVE MODE");
    /* a fetches chunk 1 and, ahead, chunk 2; b asks for chunk 2. */
    ta = g_thread_new("a", tr_read, &a);
    tr_wait_blocked(lock, 1);
    tb = g_thread_new("b", tr_read, &b);
    tr_wait_waits(t.fs, 1);
    tr_exec(lock, "ROLLBACK");
    g_thread_join(ta);
    g_thread_join(tb);
    PQfinish(lock);
    td_rc(a.rc, 0);
    td_rc(b.rc, 0);
    g_assert_cmpmem(a.buf, CS, data + (size_t)1 * CS, CS);
    g_assert_cmpmem(b.buf, CS, data + (size_t)2 * CS, CS);
    g_assert_cmpuint(dbfs_conn_round_trips(b.c) - b_trips, ==, 0);
    dbfs_conn_close(a.c);
    dbfs_conn_close(b.c);
    td_close(&t);
    g_free(data);
}

/* Two READs of a stream at the database at once: the one behind stops its
 * read-ahead where the other's fetch begins, so no chunk is fetched
 * twice. */
static void test_trim(void)
{
    unsigned char *data = g_malloc(CS * CHUNKS), buf[CS];
    dbfs_cred root = td_root();
    td_fs t;
    dbfs_attr f = tr_setup(&t, data);
    tr_reader a = {.fh = td_fh(&f), .k = 3}, b = {.fh = td_fh(&f), .k = 1};
    PGconn *lock = PQconnectdb(t.conninfo);
    GThread *ta, *tb;
    uint64_t inserts;

    g_assert_cmpint(PQstatus(lock), ==, CONNECTION_OK);
    td_rc(dbfs_conn_open(t.fs, &a.c), 0);
    td_rc(dbfs_conn_open(t.fs, &b.c), 0);
    td_read(&t, &root, td_fh(&f), 0, buf, CS);
    inserts = tr_buffer(t.fs).inserts;
    tr_exec(lock, "BEGIN");
    tr_exec(lock, "LOCK TABLE allfiles IN ACCESS EXCLUSIVE MODE");
    /* a fetches chunks 3 and 4 (window 1); b chunk 1 and ahead (window
     * 2) chunk 2, not 3. */
    ta = g_thread_new("a", tr_read, &a);
    tr_wait_blocked(lock, 1);
    tb = g_thread_new("b", tr_read, &b);
    tr_wait_blocked(lock, 2);
    tr_exec(lock, "ROLLBACK");
    g_thread_join(ta);
    g_thread_join(tb);
    PQfinish(lock);
    td_rc(a.rc, 0);
    td_rc(b.rc, 0);
    g_assert_cmpmem(a.buf, CS, data + (size_t)3 * CS, CS);
    g_assert_cmpmem(b.buf, CS, data + (size_t)1 * CS, CS);
    /* Chunks 1 to 4, each stored once. */
    g_assert_cmpuint(tr_buffer(t.fs).inserts - inserts, ==, 4);
    td_trips(&t);
    for (unsigned k = 1; k <= 4; k++) {
        td_read(&t, &root, td_fh(&f), (uint64_t)k * CS, buf, CS);
        g_assert_cmpmem(buf, CS, data + (size_t)k * CS, CS);
    }
    g_assert_cmpuint(td_trips(&t), ==, 0);
    dbfs_conn_close(a.c);
    dbfs_conn_close(b.c);
    td_close(&t);
    g_free(data);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/readahead/stream", test_stream);
    g_test_add_func("/readahead/wait", test_wait);
    g_test_add_func("/readahead/trim", test_trim);
    return g_test_run();
}
