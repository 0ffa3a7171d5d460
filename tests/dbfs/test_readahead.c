/*
 * test_readahead.c -- sequential READs fetch the next chunks along
 * (dbfs_read.c read-ahead), so a stream of small reads costs far fewer
 * round trips than reads; random reads fetch only what they ask; a READ
 * that another READ of the file is waiting beside (a client with several
 * in flight) fetches only what it asks; and every byte is right either
 * way.
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

/* Two READs of a stream at the database at once (the data table locked
 * meanwhile): the second brings no read-ahead along, since the client
 * that keeps several READs in flight asks for those chunks itself. */
static void test_pipelined(void)
{
    unsigned char *data = g_malloc(CS * CHUNKS), buf[CS];
    dbfs_cred root = td_root();
    td_fs t;
    dbfs_attr f = tr_setup(&t, data);
    tr_reader a = {.fh = td_fh(&f), .k = 1}, b = {.fh = td_fh(&f), .k = 3};
    PGconn *lock = PQconnectdb(t.conninfo);
    GThread *ta, *tb;

    g_assert_cmpint(PQstatus(lock), ==, CONNECTION_OK);
    td_rc(dbfs_conn_open(t.fs, &a.c), 0);
    td_rc(dbfs_conn_open(t.fs, &b.c), 0);
    /* The stream begins: chunk 0. */
    td_read(&t, &root, td_fh(&f), 0, buf, CS);
    tr_exec(lock, "BEGIN");
    tr_exec(lock, "LOCK TABLE allfiles IN ACCESS EXCLUSIVE MODE");
    /* a (chunk 1, alone at the database) may read ahead; b (chunk 3)
     * finds a waiting. */
    ta = g_thread_new("a", tr_read, &a);
    tr_wait_blocked(lock, 1);
    tb = g_thread_new("b", tr_read, &b);
    tr_wait_blocked(lock, 2);
    tr_exec(lock, "ROLLBACK");
    g_thread_join(ta);
    g_thread_join(tb);
    PQfinish(lock);
    dbfs_conn_close(a.c);
    dbfs_conn_close(b.c);
    td_rc(a.rc, 0);
    td_rc(b.rc, 0);
    g_assert_cmpmem(a.buf, CS, data + (size_t)1 * CS, CS);
    g_assert_cmpmem(b.buf, CS, data + (size_t)3 * CS, CS);
    /* Chunk 4 was not read ahead by b: it costs a round trip. */
    td_trips(&t);
    td_read(&t, &root, td_fh(&f), (uint64_t)4 * CS, buf, CS);
    g_assert_cmpmem(buf, CS, data + (size_t)4 * CS, CS);
    g_assert_cmpuint(td_trips(&t), ==, 1);
    td_close(&t);
    g_free(data);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/readahead/stream", test_stream);
    g_test_add_func("/readahead/pipelined", test_pipelined);
    return g_test_run();
}
