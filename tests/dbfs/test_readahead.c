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

/* Wait (deadline 60 s) until n READs in all waited for another's fetch. */
static void tr_wait_waits(const dbfs *fs, uint64_t n)
{
    gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    uint64_t got;

    while ((got = td_cache(fs, "buffer").waits) < n) {
        if (g_get_monotonic_time() > deadline)
            g_error("%" G_GUINT64_FORMAT
                    " READs waited for a fetch after 60 s, not %" G_GUINT64_FORMAT,
                    got, n);
        g_usleep(10000);
    }
}

/* Two READs of the stream begun at chunk 0, a of chunk ka and b of chunk
 * kb, each on a connection of its own, while a session holds the data
 * table locked. */
typedef struct {
    td_fs t;
    unsigned char *data;
    dbfs_attr f;
    tr_reader a, b;
    PGconn *lock;
    GThread *ta, *tb;
} tr_pair;

static void tr_pair_open(tr_pair *p, unsigned ka, unsigned kb)
{
    dbfs_cred root = td_root();

    p->data = g_malloc(CS * CHUNKS);
    p->f = tr_setup(&p->t, p->data);
    p->a = (tr_reader){.fh = td_fh(&p->f), .k = ka};
    p->b = (tr_reader){.fh = td_fh(&p->f), .k = kb};
    p->lock = PQconnectdb(p->t.conninfo);
    g_assert_cmpint(PQstatus(p->lock), ==, CONNECTION_OK);
    td_rc(dbfs_conn_open(p->t.fs, &p->a.c), 0);
    td_rc(dbfs_conn_open(p->t.fs, &p->b.c), 0);
    /* The stream begins: chunk 0. */
    td_read(&p->t, &root, td_fh(&p->f), 0, p->a.buf, CS);
    tr_exec(p->lock, "BEGIN");
    tr_exec(p->lock, "LOCK TABLE allfiles IN ACCESS EXCLUSIVE MODE");
}

/* Start a, and once it waits for the lock, b. */
static void tr_pair_start(tr_pair *p)
{
    p->ta = g_thread_new("a", tr_read, &p->a);
    tr_wait_blocked(p->lock, 1);
    p->tb = g_thread_new("b", tr_read, &p->b);
}

/* Let them go; both got their chunks right. */
static void tr_pair_finish(tr_pair *p)
{
    tr_exec(p->lock, "ROLLBACK");
    g_thread_join(p->ta);
    g_thread_join(p->tb);
    PQfinish(p->lock);
    td_rc(p->a.rc, 0);
    td_rc(p->b.rc, 0);
    g_assert_cmpmem(p->a.buf, CS, p->data + (size_t)p->a.k * CS, CS);
    g_assert_cmpmem(p->b.buf, CS, p->data + (size_t)p->b.k * CS, CS);
}

static void tr_pair_close(tr_pair *p)
{
    dbfs_conn_close(p->a.c);
    dbfs_conn_close(p->b.c);
    td_close(&p->t);
    g_free(p->data);
}

/* A stream's READ at the database (the data table locked meanwhile) reads
 * the next chunk ahead; the READ of that chunk, arriving meanwhile, waits
 * for it and is served from the buffer cache with no round trip. */
static void test_wait(void)
{
    tr_pair p;
    uint64_t b_trips;

    /* a fetches chunk 1 and, ahead, chunk 2; b asks for chunk 2. */
    tr_pair_open(&p, 1, 2);
    b_trips = dbfs_conn_round_trips(p.b.c);
    tr_pair_start(&p);
    tr_wait_waits(p.t.fs, 1);
    tr_pair_finish(&p);
    g_assert_cmpuint(dbfs_conn_round_trips(p.b.c) - b_trips, ==, 0);
    tr_pair_close(&p);
}

/* Two READs of a stream at the database at once: the one behind stops its
 * read-ahead where the other's fetch begins, so no chunk is fetched
 * twice. */
static void test_trim(void)
{
    dbfs_cred root = td_root();
    unsigned char buf[CS];
    tr_pair p;
    uint64_t inserts;

    /* a fetches chunks 3 and 4 (window 1); b chunk 1 and ahead (window
     * 2) chunk 2, not 3. */
    tr_pair_open(&p, 3, 1);
    inserts = td_cache(p.t.fs, "buffer").inserts;
    tr_pair_start(&p);
    tr_wait_blocked(p.lock, 2);
    tr_pair_finish(&p);
    /* Chunks 1 to 4, each stored once. */
    g_assert_cmpuint(td_cache(p.t.fs, "buffer").inserts - inserts, ==, 4);
    td_trips(&p.t);
    for (unsigned k = 1; k <= 4; k++) {
        td_read(&p.t, &root, td_fh(&p.f), (uint64_t)k * CS, buf, CS);
        g_assert_cmpmem(buf, CS, p.data + (size_t)k * CS, CS);
    }
    g_assert_cmpuint(td_trips(&p.t), ==, 0);
    tr_pair_close(&p);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/readahead/stream", test_stream);
    g_test_add_func("/readahead/wait", test_wait);
    g_test_add_func("/readahead/trim", test_trim);
    return g_test_run();
}
