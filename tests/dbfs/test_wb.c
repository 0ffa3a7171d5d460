/*
 * test_wb.c -- the write-back buffer of UNSTABLE writes (dbfs_wb.c,
 * cache/cache_wb.c) against a real PostgreSQL: what is buffered and what
 * is stored (checked in SQL, behind the server's back), when flushes
 * happen, what clients are told (committed, wcc, attributes), and a
 * randomized run against an in-memory model under every storage layout
 * with a buffer small enough to hit every path (pressure, per-file
 * flushes, layers, write-through).
 */
#include <errno.h>
#include <string.h>

#include <libpq-fe.h>

#include "td.h"
#include "testlib.h"

/* A fresh file system opened with write-back (and the metadata caches,
 * as a server runs it). */
static void tw_open_enc(td_fs *t, dbfs_storage st, dbfs_encoding enc, uint32_t cs,
                        uint64_t wb_bytes, uint64_t file_bytes)
{
    dbfs_mkfs_opts o = {.storage = st, .encoding = enc, .chunk_size = cs, .root_mode = 0777};
    dbfs_config cfg = {0};

    memset(t, 0, sizeof *t);
    t->conninfo = tl_fresh_db();
    td_rc(dbfs_mkfs(t->conninfo, &o), 0);
    cfg.conninfo = t->conninfo;
    cfg.relatime = false;
    cfg.stat_cache_entries = 1000;
    cfg.name_cache_entries = 1000;
    cfg.buffer_cache_bytes = 4u << 20;
    cfg.writeback_bytes = wb_bytes;
    cfg.writeback_file_bytes = file_bytes;
    td_rc(dbfs_open(&cfg, &t->fs), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c), 0);
    t->root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t->fs)->root_gen, 0};
    t->trips_mark = dbfs_conn_round_trips(t->c);
}

static void tw_open(td_fs *t, dbfs_storage st, uint32_t cs, uint64_t wb_bytes, uint64_t file_bytes)
{
    tw_open_enc(t, st, DBFS_ENC_BINARY, cs, wb_bytes, file_bytes);
}

/* The size the database holds for ino, read in SQL behind dbfs. */
static long tw_stored_size(const td_fs *t, uint64_t ino)
{
    PGconn *pg = PQconnectdb(t->conninfo);
    char val[32];
    const char *vals[1] = {val};
    PGresult *r;
    long n;

    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    g_snprintf(val, sizeof val, "%" G_GUINT64_FORMAT, ino);
    r = PQexecParams(pg, "SELECT size FROM fileatt WHERE inode = $1", 1, NULL, vals, NULL, NULL, 0);
    g_assert_cmpint(PQresultStatus(r), ==, PGRES_TUPLES_OK);
    g_assert_cmpint(PQntuples(r), ==, 1);
    n = atol(PQgetvalue(r, 0, 0));
    PQclear(r);
    PQfinish(pg);
    return n;
}

/* Read file fh whole through a second dbfs with no caches and no buffer:
 * what the database holds. */
static void tw_expect_stored(const td_fs *t, dbfs_fh fh, const unsigned char *want, size_t size)
{
    dbfs_config cfg = {.conninfo = t->conninfo};
    dbfs_cred root = td_root();
    unsigned char *buf = g_malloc(size + 1);
    dbfs *fs;
    dbfs_conn *c;
    dbfs_attr_opt a;
    uint32_t n = 0;
    bool eof = false;

    td_rc(dbfs_open(&cfg, &fs), 0);
    td_rc(dbfs_conn_open(fs, &c), 0);
    td_rc(dbfs_read(c, &root, fh, 0, (uint32_t)size + 1, buf, &n, &eof, &a), 0);
    g_assert_true(a.valid);
    g_assert_cmpuint(a.attr.size, ==, size);
    g_assert_cmpmem(buf, n, want, size);
    g_assert_true(eof);
    dbfs_conn_close(c);
    dbfs_close(fs);
    g_free(buf);
}

static void tw_fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 131 + seed * 7 + (i >> 9)) & 0xff);
}

static dbfs_stable tw_write(td_fs *t, const dbfs_cred *cr, dbfs_fh fh, uint64_t off,
                            const void *data, uint32_t len, dbfs_stable how, dbfs_wcc *w)
{
    dbfs_stable st = how;

    td_rc(dbfs_write(t->c, cr, fh, off, data, len, how, &st, w), 0);
    return st;
}

/* A generous bound for waiting on an event (never a pace). */
#define TW_DEADLINE_US (120 * G_USEC_PER_SEC)

/* Wait until the oldest data the buffer holds is at least ms old. */
static void tw_wait_age(const dbfs *fs, uint64_t ms)
{
    int64_t deadline = g_get_monotonic_time() + TW_DEADLINE_US;
    dbfs_wb_stats st;

    for (dbfs_wb_figures(fs, &st); st.oldest_age_ms < ms; dbfs_wb_figures(fs, &st)) {
        g_assert_cmpuint(st.bytes, >, 0);
        if (g_get_monotonic_time() > deadline)
            g_error("buffered data did not age %" G_GUINT64_FORMAT " ms", ms);
        g_usleep(1000);
    }
}

/* UNSTABLE writes wait in memory (no round trip, nothing stored), show in
 * the attributes, and COMMIT stores them in one round trip. */
static void test_buffered(void)
{
    enum { CS = 8192, N = 5 * CS + 100 };
    td_fs t;
    dbfs_cred u = td_user(1000, 1000, 0, NULL);
    unsigned char data[N];
    dbfs_wcc w;
    dbfs_attr a;

    tw_open(&t, DBFS_STORAGE_SINGLE, CS, 16u << 20, 8u << 20);
    tw_fill(data, N, 1);
    dbfs_attr f = td_create(&t, &u, t.root, "f", 0644);
    td_trips(&t);
    /* Out of order, and pieces that meet inside a chunk. */
    g_assert_cmpint(
        tw_write(&t, &u, td_fh(&f), 2 * CS, data + 2 * CS, N - 2 * CS, DBFS_UNSTABLE, &w), ==,
        DBFS_UNSTABLE);
    g_assert_true(w.have_pre && w.have_post);
    g_assert_cmpuint(w.pre_size, ==, 0);
    g_assert_cmpuint(w.post.size, ==, N);
    g_assert_cmpint(tw_write(&t, &u, td_fh(&f), 100, data + 100, 2 * CS - 100, DBFS_UNSTABLE, &w),
                    ==, DBFS_UNSTABLE);
    g_assert_cmpuint(w.pre_size, ==, N);
    g_assert_cmpint(w.post.ctime_ns, >=, w.pre_ctime_ns);
    g_assert_cmpint(tw_write(&t, &u, td_fh(&f), 0, data, 100, DBFS_UNSTABLE, &w), ==,
                    DBFS_UNSTABLE);
    g_assert_cmpuint(td_trips(&t), ==, 0);
    g_assert_cmpint(tw_stored_size(&t, f.ino), ==, 0);
    a = td_getattr(&t, td_fh(&f));
    g_assert_cmpuint(a.size, ==, N);
    g_assert_cmpint(a.mtime_ns, ==, w.post.mtime_ns);
    dbfs_attr l = td_lookup(&t, &u, t.root, "f");
    g_assert_cmpuint(l.size, ==, N);
    td_trips(&t);

    td_rc(dbfs_commit(t.c, td_fh(&f), 0, 0, &w), 0);
    g_assert_cmpuint(td_trips(&t), ==, 1);
    g_assert_true(w.have_pre && w.have_post);
    g_assert_cmpuint(w.pre_size, ==, N);
    g_assert_cmpuint(w.post.size, ==, N);
    /* What the client saw is what was stored: no surprise change. */
    g_assert_cmpint(w.post.mtime_ns, ==, w.pre_mtime_ns);
    g_assert_cmpint(tw_stored_size(&t, f.ino), ==, N);
    tw_expect_stored(&t, td_fh(&f), data, N);
    /* A second COMMIT has nothing to do. */
    td_rc(dbfs_commit(t.c, td_fh(&f), 0, 0, &w), 0);
    g_assert_cmpuint(td_trips(&t), ==, 0);
    td_close(&t);
}

/* Everything that must see buffered data stores it first: READ (another
 * connection), SETATTR (a truncation cuts it), a FILE_SYNC write, and the
 * age-based flush. */
static void test_flush_points(void)
{
    enum { CS = 4096 };
    td_fs t;
    dbfs_cred root = td_root();
    unsigned char data[3 * CS], got[3 * CS];
    dbfs_conn *c2;
    dbfs_wcc w;

    tw_open(&t, DBFS_STORAGE_SINGLE, CS, 16u << 20, 8u << 20);
    tw_fill(data, sizeof data, 2);
    td_rc(dbfs_conn_open(t.fs, &c2), 0);

    /* READ on another connection. */
    dbfs_attr f = td_create(&t, &root, t.root, "r", 0644);
    tw_write(&t, &root, td_fh(&f), 0, data, sizeof data, DBFS_UNSTABLE, &w);
    g_assert_cmpint(tw_stored_size(&t, f.ino), ==, 0);
    uint32_t n = 0;
    bool eof;
    dbfs_attr_opt ao;
    td_rc(dbfs_read(c2, &root, td_fh(&f), 0, sizeof got, got, &n, &eof, &ao), 0);
    g_assert_cmpmem(got, n, data, sizeof data);
    g_assert_cmpint(tw_stored_size(&t, f.ino), ==, sizeof data);

    /* SETATTR: a truncation after buffered writes cuts them. */
    dbfs_attr g = td_create(&t, &root, t.root, "s", 0644);
    tw_write(&t, &root, td_fh(&g), 0, data, sizeof data, DBFS_UNSTABLE, &w);
    dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = 100};
    td_rc(dbfs_setattr(t.c, &root, td_fh(&g), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.post.size, ==, 100);
    td_rc(dbfs_commit(t.c, td_fh(&g), 0, 0, &w), 0);
    g_assert_cmpuint(w.post.size, ==, 100);
    tw_expect_stored(&t, td_fh(&g), data, 100);

    /* A FILE_SYNC write after UNSTABLE ones lands after them. */
    dbfs_attr h = td_create(&t, &root, t.root, "w", 0644);
    tw_write(&t, &root, td_fh(&h), 0, data, sizeof data, DBFS_UNSTABLE, &w);
    unsigned char x[10];
    memset(x, 'x', sizeof x);
    g_assert_cmpint(tw_write(&t, &root, td_fh(&h), CS, x, sizeof x, DBFS_FILE_SYNC, &w), ==,
                    DBFS_FILE_SYNC);
    g_assert_cmpuint(w.pre_size, ==, sizeof data); /* as the client saw it */
    unsigned char want[3 * CS];
    memcpy(want, data, sizeof want);
    memcpy(want + CS, x, sizeof x);
    tw_expect_stored(&t, td_fh(&h), want, sizeof want);

    /* Age: the flusher's call stores what is old enough, nothing else. */
    dbfs_attr k = td_create(&t, &root, t.root, "age", 0644);
    tw_write(&t, &root, td_fh(&k), 0, data, 1000, DBFS_UNSTABLE, &w);
    g_assert_cmpint(dbfs_wb_flush_due(c2, 3600 * 1000), ==, 0);
    g_assert_cmpint(tw_stored_size(&t, k.ino), ==, 0);
    tw_wait_age(t.fs, 11);
    g_assert_cmpint(dbfs_wb_flush_due(c2, 10), ==, 1);
    g_assert_cmpint(tw_stored_size(&t, k.ino), ==, 1000);

    dbfs_wb_stats st;
    dbfs_wb_figures(t.fs, &st);
    g_assert_true(st.enabled);
    g_assert_cmpuint(st.bytes, ==, 0);
    g_assert_cmpuint(st.files, ==, 0);
    g_assert_cmpuint(st.writes, ==, 4);
    g_assert_cmpuint(st.flushed_bytes, ==, 3 * sizeof data + 1000);
    dbfs_conn_close(c2);
    td_close(&t);
}

/* A file removed with data buffered: COMMIT is STALE, the data is dropped
 * and nothing stays held. A write to a setuid file by its non-root owner
 * is not buffered: it must clear the bit at once. */
static void test_gone_and_setuid(void)
{
    td_fs t;
    dbfs_cred root = td_root(), u = td_user(1000, 1000, 0, NULL);
    unsigned char data[5000];
    dbfs_wcc w;
    dbfs_wb_stats st;

    tw_open(&t, DBFS_STORAGE_INVERSION, 1024, 16u << 20, 8u << 20);
    tw_fill(data, sizeof data, 3);
    dbfs_attr f = td_create(&t, &u, t.root, "gone", 0644);
    tw_write(&t, &u, td_fh(&f), 0, data, sizeof data, DBFS_UNSTABLE, &w);
    td_rc(dbfs_remove(t.c, &u, t.root, "gone", &w), 0);
    td_rc(dbfs_commit(t.c, td_fh(&f), 0, 0, &w), -ESTALE);
    g_assert_cmpint(dbfs_wb_flush_due(t.c, 0), >=, 0);
    dbfs_wb_figures(t.fs, &st);
    g_assert_cmpuint(st.bytes, ==, 0);
    g_assert_cmpuint(st.files, ==, 0);

    dbfs_attr s = td_create(&t, &u, t.root, "suid", 0644);
    td_chmod(&t, &u, td_fh(&s), 04755);
    g_assert_cmpint(tw_write(&t, &u, td_fh(&s), 0, data, 10, DBFS_UNSTABLE, &w), ==,
                    DBFS_FILE_SYNC);
    g_assert_cmpuint(w.post.mode & 07777, ==, 0755);
    /* Root's write keeps the bit and may be buffered. */
    td_chmod(&t, &root, td_fh(&s), 04755);
    g_assert_cmpint(tw_write(&t, &root, td_fh(&s), 10, data, 10, DBFS_UNSTABLE, &w), ==,
                    DBFS_UNSTABLE);
    td_rc(dbfs_commit(t.c, td_fh(&s), 0, 0, &w), 0);
    g_assert_cmpuint(w.post.mode & 07777, ==, 04755);
    g_assert_cmpuint(w.post.size, ==, 20);
    /* Permission is checked when the write is buffered. */
    dbfs_attr ro = td_create(&t, &root, t.root, "ro", 0644);
    td_rc(dbfs_write(t.c, &u, td_fh(&ro), 0, data, 10, DBFS_UNSTABLE, NULL, &w), -EACCES);
    td_rc(dbfs_write(t.c, &u, t.root, 0, data, 10, DBFS_UNSTABLE, NULL, &w), -EISDIR);
    td_close(&t);
}

/* Allow or refuse new connections to the database of conninfo (from the
 * cluster's "postgres" database, which stays open). */
static void tw_allow_connections(const char *conninfo, bool allow)
{
    const char *db = strstr(conninfo, "dbname=");
    char *name, *sql;

    g_assert_nonnull(db);
    name = g_strndup(db + 7, strcspn(db + 7, " "));
    sql = g_strdup_printf("ALTER DATABASE \"%s\" ALLOW_CONNECTIONS %s", name,
                          allow ? "true" : "false");
    td_sql(tl_cluster_conninfo(), sql);
    g_free(sql);
    g_free(name);
}

/* An UNSTABLE write whose check cannot reach the database (its connection
 * lost, and the database refusing new ones) answers -EAGAIN (JUKEBOX: the
 * client sends it again) and stores nothing: it is not taken for a write
 * the buffer declined and sent again as a stable one. The stat cache is
 * off, so the check is a round trip. */
static void test_lost_check(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    dbfs_config cfg = {0};
    dbfs_stable st = DBFS_UNSTABLE;
    dbfs_wb_stats ws;
    dbfs_wcc w;

    memset(&t, 0, sizeof t);
    t.conninfo = tl_fresh_fs();
    cfg.conninfo = t.conninfo;
    cfg.writeback_bytes = 1u << 20;
    td_rc(dbfs_open(&cfg, &t.fs), 0);
    td_rc(dbfs_conn_open(t.fs, &t.c), 0);
    t.root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t.fs)->root_gen, 0};
    dbfs_attr f = td_create(&t, &root, t.root, "f", 0644);
    tw_allow_connections(t.conninfo, false);
    g_assert_cmpint(td_sql(tl_cluster_conninfo(),
                           "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 30000))"
                           " FROM pg_stat_activity WHERE application_name = 'pgnfs'"),
                    ==, 1);
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_MESSAGE, "*ended an idle connection*");
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING,
                          "cannot reconnect to the database*not currently accepting*");
    td_rc(dbfs_write(t.c, &root, td_fh(&f), 0, "lost", 4, DBFS_UNSTABLE, &st, &w), -EAGAIN);
    g_test_assert_expected_messages();
    tw_allow_connections(t.conninfo, true);
    g_assert_cmpint(tw_stored_size(&t, f.ino), ==, 0);
    dbfs_wb_figures(t.fs, &ws);
    g_assert_cmpuint(ws.bytes, ==, 0);
    /* The database is back: the client's retry is buffered. */
    g_assert_cmpint(tw_write(&t, &root, td_fh(&f), 0, "back", 4, DBFS_UNSTABLE, &w), ==,
                    DBFS_UNSTABLE);
    td_rc(dbfs_commit(t.c, td_fh(&f), 0, 0, &w), 0);
    tw_expect_stored(&t, td_fh(&f), (const unsigned char *)"back", 4);
    td_close(&t);
}

/* Random writes (UNSTABLE mostly, some FILE_SYNC), truncations, reads and
 * COMMITs on a few files, checked against a model after every step that
 * returns data or a size, then stored contents checked in the database.
 * The buffer is small (pressure, write-through) and files flush early
 * (per-file flushes), and same-chunk writes that do not meet open
 * layers. The seed comes from the test run (--seed reproduces it). */
static void tw_random(dbfs_storage st, dbfs_encoding enc, uint32_t seed)
{
    enum { FILES = 3, MAXSZ = 40000, CS = 1024, STEPS = 1500 };
    td_fs t;
    dbfs_cred root = td_root();
    unsigned char *model[FILES], buf[MAXSZ + 64];
    size_t size[FILES] = {0};
    dbfs_attr f[FILES];
    GRand *r = g_rand_new_with_seed(seed);
    dbfs_wcc w;

    g_test_message("storage %d, encoding %d, seed %u", (int)st, (int)enc, seed);
    tw_open_enc(&t, st, enc, CS, 10 * 1024, 6 * 1024);
    for (int i = 0; i < FILES; i++) {
        char name[8];
        g_snprintf(name, sizeof name, "f%d", i);
        f[i] = td_create(&t, &root, t.root, name, 0644);
        model[i] = g_malloc0(MAXSZ + 64);
    }
    for (int step = 0; step < STEPS; step++) {
        int i = g_rand_int_range(r, 0, FILES);
        int op = g_rand_int_range(r, 0, 100);
        dbfs_fh fh = td_fh(&f[i]);

        if (op < 65) {
            uint32_t off = (uint32_t)g_rand_int_range(r, 0, MAXSZ - 1);
            uint32_t len = (uint32_t)g_rand_int_range(r, 1, op < 30 ? 64 : 3 * CS);
            if (off + len > MAXSZ)
                len = MAXSZ - off;
            for (uint32_t k = 0; k < len; k++)
                buf[k] = (unsigned char)g_rand_int(r);
            tw_write(&t, &root, fh, off, buf, len, op < 58 ? DBFS_UNSTABLE : DBFS_FILE_SYNC, &w);
            memcpy(model[i] + off, buf, len);
            if (off + len > size[i])
                size[i] = off + len;
            g_assert_cmpuint(w.post.size, ==, size[i]);
        } else if (op < 75) {
            dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = (uint64_t)g_rand_int_range(r, 0, MAXSZ)};
            td_rc(dbfs_setattr(t.c, &root, fh, &sa, NULL, &w), 0);
            if (sa.size < size[i])
                memset(model[i] + sa.size, 0, size[i] - sa.size);
            size[i] = sa.size;
        } else if (op < 90) {
            uint32_t off = (uint32_t)g_rand_int_range(r, 0, MAXSZ);
            uint32_t n = 0, len = (uint32_t)g_rand_int_range(r, 1, 4 * CS);
            bool eof;
            dbfs_attr_opt a;
            size_t want = off >= size[i] ? 0 : MIN(len, size[i] - off);

            td_rc(dbfs_read(t.c, &root, fh, off, len, buf, &n, &eof, &a), 0);
            g_assert_cmpuint(n, ==, want);
            g_assert_cmpmem(buf, n, model[i] + off, want);
        } else if (op < 95) {
            td_rc(dbfs_commit(t.c, fh, 0, 0, &w), 0);
            g_assert_cmpuint(w.post.size, ==, size[i]);
        } else {
            g_assert_cmpuint(td_getattr(&t, fh).size, ==, size[i]);
        }
    }
    for (int i = 0; i < FILES; i++) {
        td_rc(dbfs_commit(t.c, td_fh(&f[i]), 0, 0, &w), 0);
        tw_expect_stored(&t, td_fh(&f[i]), model[i], size[i]);
        g_free(model[i]);
    }
    dbfs_wb_stats s;
    dbfs_wb_figures(t.fs, &s);
    g_test_message("%" G_GUINT64_FORMAT " writes buffered, %" G_GUINT64_FORMAT
                   " refused at first, %" G_GUINT64_FORMAT " flushes",
                   s.writes, s.refused, s.flushes);
    g_assert_cmpuint(s.bytes, ==, 0);
    g_assert_cmpuint(s.writes, >, 0);
    g_assert_cmpuint(s.flushes, >, 0);
    g_assert_cmpuint(s.refused, >, 0); /* the pressure path ran */
    g_rand_free(r);
    td_close(&t);
}

static void test_random_single(void)
{
    tw_random(DBFS_STORAGE_SINGLE, DBFS_ENC_BINARY, g_test_rand_int());
}

static void test_random_inversion(void)
{
    tw_random(DBFS_STORAGE_INVERSION, DBFS_ENC_BINARY, g_test_rand_int());
}

static void test_random_hybrid(void)
{
    tw_random(DBFS_STORAGE_HYBRID, DBFS_ENC_BINARY, g_test_rand_int());
}

static void test_random_base64(void)
{
    tw_random(DBFS_STORAGE_SINGLE, DBFS_ENC_BASE64, g_test_rand_int());
}

/* Writers on several connections stream into one file out of order while
 * a reader on another reads it; every byte ends up where it was written. */
typedef struct {
    td_fs *t;
    dbfs_fh fh;
    const unsigned char *data;
    unsigned part, parts;
    size_t part_len, piece;
    gint *reads; /* the reader's count so far */
} tw_writer;

/* Reads the reader makes while the writers are half way. */
#define TW_READS_MIDWAY 5

static gpointer tw_writer_main(gpointer p)
{
    tw_writer *a = p;
    dbfs_cred root = td_root();
    dbfs_conn *c;
    dbfs_wcc w;
    dbfs_stable st;
    size_t base = a->part * a->part_len;
    size_t npieces = a->part_len / a->piece;
    int64_t deadline = g_get_monotonic_time() + TW_DEADLINE_US;

    td_rc(dbfs_conn_open(a->t->fs, &c), 0);
    /* Pieces in a scrambled order; half way, wait until the reader has
     * read a few times, so that reads meet a half-written file whatever
     * the scheduler did. */
    for (size_t k = 0; k < npieces; k++) {
        size_t i = (k * 7 + a->part) % npieces;

        while (k == npieces / 2 && g_atomic_int_get(a->reads) < TW_READS_MIDWAY) {
            if (g_get_monotonic_time() > deadline)
                g_error("the reader did not read while the writers waited");
            g_thread_yield();
        }

        td_rc(dbfs_write(c, &root, a->fh, base + i * a->piece, a->data + base + i * a->piece,
                         (uint32_t)a->piece, DBFS_UNSTABLE, &st, &w),
              0);
    }
    dbfs_conn_close(c);
    return NULL;
}

static void test_concurrent(void)
{
    enum { PARTS = 4, PIECE = 3000, PART = 64 * PIECE };
    td_fs t;
    dbfs_cred root = td_root();
    unsigned char *data = g_malloc(PARTS * PART), *buf = g_malloc(PARTS * PART);
    tw_writer wr[PARTS];
    GThread *th[PARTS];
    gint reads = 0;
    dbfs_wcc w;

    tw_open(&t, DBFS_STORAGE_SINGLE, 8192, 1u << 20, 256 * 1024);
    tw_fill(data, PARTS * PART, 9);
    dbfs_attr f = td_create(&t, &root, t.root, "big", 0644);
    for (unsigned i = 0; i < PARTS; i++) {
        wr[i] = (tw_writer){&t, td_fh(&f), data, i, PARTS, PART, PIECE, &reads};
        th[i] = g_thread_new("writer", tw_writer_main, &wr[i]);
    }
    /* Meanwhile: reads see sizes only grow and bytes only as written. */
    for (int k = 0; k < 20; k++, g_atomic_int_inc(&reads)) {
        uint32_t n = 0;
        bool eof;
        dbfs_attr_opt a;
        td_rc(dbfs_read(t.c, &root, td_fh(&f), 0, PARTS * PART, buf, &n, &eof, &a), 0);
        for (uint32_t i = 0; i < n; i++)
            if (buf[i] != 0 && buf[i] != data[i])
                g_error("byte %u: %u, neither 0 nor %u", i, buf[i], data[i]);
    }
    for (unsigned i = 0; i < PARTS; i++)
        g_thread_join(th[i]);
    td_rc(dbfs_commit(t.c, td_fh(&f), 0, 0, &w), 0);
    tw_expect_stored(&t, td_fh(&f), data, PARTS * PART);
    g_free(data);
    g_free(buf);
    td_close(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/wb/buffered", test_buffered);
    g_test_add_func("/wb/flush-points", test_flush_points);
    g_test_add_func("/wb/gone-and-setuid", test_gone_and_setuid);
    g_test_add_func("/wb/lost-check", test_lost_check);
    g_test_add_func("/wb/random-single", test_random_single);
    g_test_add_func("/wb/random-inversion", test_random_inversion);
    g_test_add_func("/wb/random-hybrid", test_random_hybrid);
    g_test_add_func("/wb/random-base64", test_random_base64);
    g_test_add_func("/wb/concurrent", test_concurrent);
    return g_test_run();
}
