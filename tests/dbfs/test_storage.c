/*
 * test_storage.c -- the storage layouts and encodings against a real
 * database: mkfs options and what open reads back; where each layout puts
 * a file's data (allfiles or inv<inode>); the inversion table's life (made
 * by the first write, kept while a hard link remains, dropped with the
 * last link or by a rename over the file); hybrid migration at exactly the
 * threshold and back on truncation, byte-identical and with "used" exact;
 * the stored form of base64; reads racing migrations and removals on a
 * second connection; the same random workload giving the same bytes in
 * every layout and encoding; and a server that refuses a configuration
 * contradicting the file system.
 *
 * The random cases print their seed; rerun with PGNFS_TEST_SEED=<seed>.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <libpq-fe.h>

#include "td.h"
#include "testlib.h"

static const uint32_t ts_no_groups[1] = {0};

/* A file system with the given layout, encoding, chunk size and hybrid
 * threshold (0 = defaults), and a connection. */
static void ts_open(td_fs *t, dbfs_storage st, dbfs_encoding enc, uint32_t cs, uint64_t thr)
{
    dbfs_mkfs_opts o = {.storage = st,
                        .encoding = enc,
                        .chunk_size = cs,
                        .hybrid_threshold = thr,
                        .root_mode = 0777};
    dbfs_config cfg = {0};

    memset(t, 0, sizeof *t);
    t->conninfo = tl_fresh_db();
    td_rc(dbfs_mkfs(t->conninfo, &o), 0);
    cfg.conninfo = t->conninfo;
    cfg.relatime = true;
    td_rc(dbfs_open(&cfg, &t->fs), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c), 0);
    t->root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t->fs)->root_gen, 0};
    t->trips_mark = dbfs_conn_round_trips(t->c);
}

/* The number an SQL query with an optional int8 parameter answers. */
static long ts_sql(const td_fs *t, const char *sql, int64_t arg)
{
    PGconn *pg = PQconnectdb(t->conninfo);
    char val[32];
    const char *vals[1] = {val};
    PGresult *r;
    long n;

    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    g_snprintf(val, sizeof val, "%" G_GINT64_FORMAT, arg);
    r = PQexecParams(pg, sql, strstr(sql, "$1") ? 1 : 0, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        g_error("%s: %s", sql, PQresultErrorMessage(r));
    n = atol(PQgetvalue(r, 0, 0));
    PQclear(r);
    PQfinish(pg);
    return n;
}

/* Does file ino have its own table (and is it listed)? Checks that the
 * catalog and pgnfs_filetab agree. */
static bool ts_has_table(const td_fs *t, uint64_t ino)
{
    long cat =
        ts_sql(t, "SELECT count(*) FROM pg_class WHERE relname = 'inv' || $1::text", (int64_t)ino);
    long listed = ts_sql(t, "SELECT count(*) FROM pgnfs_filetab WHERE inode = $1", (int64_t)ino);

    g_assert_cmpint(cat, ==, listed);
    return cat == 1;
}

static long ts_allfiles_rows(const td_fs *t, uint64_t ino)
{
    return ts_sql(t, "SELECT count(*) FROM allfiles WHERE inode = $1", (int64_t)ino);
}

/* Every file's used equals its stored bytes, no chunk outlives its file,
 * no stored byte lies past a file's size, no table lacks its file. */
static void ts_check_invariants(const td_fs *t)
{
    g_assert_cmpint(ts_sql(t,
                           "SELECT count(*) FROM fileatt f LEFT JOIN (SELECT inode,"
                           " sum(stored) AS s FROM pgnfs_data_chunks() GROUP BY inode) c"
                           " ON c.inode = f.inode WHERE f.used <> coalesce(c.s, 0)",
                           0),
                    ==, 0);
    g_assert_cmpint(ts_sql(t,
                           "SELECT count(*) FROM pgnfs_data_chunks() c LEFT JOIN fileatt f"
                           " ON f.inode = c.inode WHERE f.inode IS NULL"
                           " OR c.chunk * (SELECT chunk_size FROM pgnfs_fs) + c.bytes > f.size",
                           0),
                    ==, 0);
    g_assert_cmpint(ts_sql(t,
                           "SELECT count(*) FROM pg_class c WHERE c.relname ~ '^inv[0-9]+$'"
                           " AND NOT EXISTS (SELECT 1 FROM pgnfs_filetab t JOIN fileatt f"
                           " ON f.inode = t.inode WHERE c.relname = 'inv' || t.inode)",
                           0),
                    ==, 0);
}

static void ts_fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 197 + seed * 13 + (i >> 7)) & 0xff);
}

/* Read all of file fh (size bytes) and compare with want. */
static void ts_expect(td_fs *t, dbfs_fh fh, const unsigned char *want, size_t size)
{
    unsigned char *back = g_malloc(size + 1);
    dbfs_cred root = td_root();
    dbfs_attr_opt a;
    uint32_t n = 0;
    bool eof = false;

    td_rc(dbfs_read(t->c, &root, fh, 0, (uint32_t)size + 1, back, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, size);
    g_assert_true(eof);
    g_assert_cmpmem(back, size, want, size);
    g_free(back);
}

static void test_mkfs_options(void)
{
    char *ci = tl_fresh_db();
    dbfs_mkfs_opts o = {.chunk_size = 3000};
    dbfs_config cfg = {.conninfo = ci};
    dbfs *fs = NULL;

    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "*chunk size 3000*power of two*");
    td_rc(dbfs_mkfs(ci, &o), -EINVAL);
    o.chunk_size = 512;
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "*chunk size 512*");
    td_rc(dbfs_mkfs(ci, &o), -EINVAL);
    o.chunk_size = 2u << 20;
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "*chunk size 2097152*");
    td_rc(dbfs_mkfs(ci, &o), -EINVAL);
    o.chunk_size = 4096;
    o.hybrid_threshold = (UINT64_C(1) << 40) + 1;
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "*hybrid threshold*");
    td_rc(dbfs_mkfs(ci, &o), -EINVAL);
    o.storage = (dbfs_storage)7;
    o.hybrid_threshold = 0;
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "*not available*");
    td_rc(dbfs_mkfs(ci, &o), -EINVAL);
    g_test_assert_expected_messages();
    /* Nothing was created by any of them. */
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_MESSAGE, "*holds no pgnfs file system*");
    td_rc(dbfs_open(&cfg, &fs), -ENOENT);
    g_test_assert_expected_messages();
    /* A layout this build does not know, recorded in the database, is
     * refused by open. */
    o.storage = DBFS_STORAGE_SINGLE;
    td_rc(dbfs_mkfs(ci, &o), 0);
    PGconn *pg = PQconnectdb(ci);
    PGresult *r = PQexec(pg, "ALTER TABLE pgnfs_fs DROP CONSTRAINT pgnfs_fs_storage_check;"
                             " UPDATE pgnfs_fs SET storage = 'striped'");
    g_assert_cmpint(PQresultStatus(r), ==, PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(pg);
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "*\"striped\"*cannot serve*");
    td_rc(dbfs_open(&cfg, &fs), -EPROTO);
    g_test_assert_expected_messages();
    g_free(ci);

    /* Every layout and encoding is recorded and read back. */
    for (int st = DBFS_STORAGE_SINGLE; st <= DBFS_STORAGE_HYBRID; st++) {
        for (int enc = DBFS_ENC_BINARY; enc <= DBFS_ENC_BASE64; enc++) {
            td_fs t;
            const dbfs_info *info;

            ts_open(&t, (dbfs_storage)st, (dbfs_encoding)enc, 1024u << (st + enc),
                    4096u * (st + 1));
            info = dbfs_get_info(t.fs);
            g_assert_cmpint(info->storage, ==, st);
            g_assert_cmpint(info->encoding, ==, enc);
            g_assert_cmpuint(info->chunk_size, ==, 1024u << (st + enc));
            g_assert_cmpuint(info->hybrid_threshold, ==, 4096u * (st + 1));
            td_close(&t);
        }
    }
    /* The default threshold. */
    td_fs t;
    ts_open(&t, DBFS_STORAGE_HYBRID, DBFS_ENC_BINARY, 0, 0);
    g_assert_cmpuint(dbfs_get_info(t.fs)->hybrid_threshold, ==, DBFS_HYBRID_THRESHOLD);
    g_assert_cmpuint(dbfs_get_info(t.fs)->chunk_size, ==, DBFS_CHUNK_SIZE_DEFAULT);
    td_close(&t);
}

/* inversion: the table comes with the first byte and goes with the last
 * link, not before. */
static void test_inversion_table_life(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, ts_no_groups);
    unsigned char data[20000];
    dbfs_attr_opt fa;
    dbfs_wcc w;

    ts_open(&t, DBFS_STORAGE_INVERSION, DBFS_ENC_BINARY, 4096, 0);
    ts_fill(data, sizeof data, 1);
    dbfs_attr f = td_create(&t, &u, t.root, "f", 0644);
    g_assert_false(ts_has_table(&t, f.ino));
    /* A zero-length write only checks. */
    td_write(&t, &u, td_fh(&f), 0, data, 0);
    g_assert_false(ts_has_table(&t, f.ino));
    td_write(&t, &u, td_fh(&f), 100, data, sizeof data);
    g_assert_true(ts_has_table(&t, f.ino));
    g_assert_cmpint(ts_allfiles_rows(&t, f.ino), ==, 0);
    g_assert_cmpint(
        ts_sql(&t, "SELECT count(*) FROM pgnfs_data_chunks() WHERE inode = $1", (int64_t)f.ino), ==,
        (100 + sizeof data + 4095) / 4096);
    ts_check_invariants(&t);

    /* A second name keeps the table through the removal of the first. */
    td_rc(dbfs_link(t.c, &u, td_fh(&f), t.root, "g", &fa, &w), 0);
    td_rc(dbfs_remove(t.c, &u, t.root, "f", &w), 0);
    g_assert_true(ts_has_table(&t, f.ino));
    unsigned char *want = g_malloc0(100 + sizeof data);
    memcpy(want + 100, data, sizeof data);
    ts_expect(&t, td_fh(&f), want, 100 + sizeof data);
    td_rc(dbfs_remove(t.c, &u, t.root, "g", &w), 0);
    g_assert_false(ts_has_table(&t, f.ino));
    ts_check_invariants(&t);

    /* A rename over a file drops the replaced file's table; the renamed
     * file keeps its own. */
    dbfs_attr a = td_create(&t, &u, t.root, "a", 0644);
    dbfs_attr b = td_create(&t, &u, t.root, "b", 0644);
    td_write(&t, &u, td_fh(&a), 0, data, 5000);
    td_write(&t, &u, td_fh(&b), 0, data + 7, 9000);
    g_assert_true(ts_has_table(&t, a.ino) && ts_has_table(&t, b.ino));
    dbfs_wcc w2;
    td_rc(dbfs_rename(t.c, &u, t.root, "a", t.root, "b", &w, &w2), 0);
    g_assert_true(ts_has_table(&t, a.ino));
    g_assert_false(ts_has_table(&t, b.ino));
    ts_expect(&t, td_fh(&a), data, 5000);
    /* Truncation keeps the table (inversion), and trims exactly. */
    dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = 1234};
    td_rc(dbfs_setattr(t.c, &u, td_fh(&a), &sa, NULL, &w), 0);
    g_assert_true(ts_has_table(&t, a.ino));
    g_assert_cmpuint(w.post.used, ==, 1234);
    ts_expect(&t, td_fh(&a), data, 1234);
    ts_check_invariants(&t);
    /* An empty file that is removed never had a table to drop. */
    dbfs_attr e = td_create(&t, &u, t.root, "e", 0644);
    td_rc(dbfs_remove(t.c, &u, t.root, "e", &w), 0);
    g_assert_false(ts_has_table(&t, e.ino));
    g_free(want);
    td_close(&t);
}

/* hybrid: at most the threshold stays in allfiles; one byte more moves the
 * file, in the transaction of that write; a truncation to at most the
 * threshold moves it back. Contents and "used" never change by a move. */
static void hybrid_migrate(dbfs_encoding enc)
{
    enum { CS = 4096, THR = 16384 };
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, ts_no_groups);
    unsigned char data[3 * THR];
    dbfs_wcc w;
    dbfs_attr a;

    ts_open(&t, DBFS_STORAGE_HYBRID, enc, CS, THR);
    ts_fill(data, sizeof data, 2);
    dbfs_attr f = td_create(&t, &u, t.root, "f", 0644);
    /* Up to exactly the threshold, in uneven pieces. */
    td_write(&t, &u, td_fh(&f), 0, data, 5000);
    td_write(&t, &u, td_fh(&f), 5000, data + 5000, THR - 5000);
    a = td_getattr(&t, td_fh(&f));
    g_assert_cmpuint(a.size, ==, THR);
    g_assert_false(ts_has_table(&t, f.ino));
    g_assert_cmpint(ts_allfiles_rows(&t, f.ino), ==, THR / CS);
    uint64_t used_before = a.used;
    ts_check_invariants(&t);
    /* A write inside the file that does not grow it moves nothing. */
    td_write(&t, &u, td_fh(&f), 10, data + 10, 100);
    g_assert_false(ts_has_table(&t, f.ino));
    /* One byte more. */
    td_write(&t, &u, td_fh(&f), THR, data + THR, 1);
    g_assert_true(ts_has_table(&t, f.ino));
    g_assert_cmpint(ts_allfiles_rows(&t, f.ino), ==, 0);
    a = td_getattr(&t, td_fh(&f));
    g_assert_cmpuint(a.size, ==, THR + 1);
    g_assert_cmpuint(a.used, ==, used_before + (enc == DBFS_ENC_BASE64 ? 4 : 1));
    ts_expect(&t, td_fh(&f), data, THR + 1);
    ts_check_invariants(&t);
    /* Growth continues in the table. */
    td_write(&t, &u, td_fh(&f), THR + 1, data + THR + 1, sizeof data - THR - 1);
    ts_expect(&t, td_fh(&f), data, sizeof data);
    ts_check_invariants(&t);
    /* Truncation above the threshold stays; to it, moves back. */
    dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = THR + 100};
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_true(ts_has_table(&t, f.ino));
    ts_check_invariants(&t);
    sa.size = THR - 1;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_false(ts_has_table(&t, f.ino));
    g_assert_cmpint(ts_allfiles_rows(&t, f.ino), ==, THR / CS);
    ts_expect(&t, td_fh(&f), data, THR - 1);
    g_assert_cmpuint(w.post.used, ==, td_getattr(&t, td_fh(&f)).used);
    ts_check_invariants(&t);

    /* Growing by SETATTR moves nothing; the next write does. */
    dbfs_attr g = td_create(&t, &u, t.root, "g", 0644);
    td_write(&t, &u, td_fh(&g), 0, data, 100);
    sa.size = 4 * THR;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&g), &sa, NULL, &w), 0);
    g_assert_false(ts_has_table(&t, g.ino));
    td_write(&t, &u, td_fh(&g), 200, data, 10);
    g_assert_true(ts_has_table(&t, g.ino));
    unsigned char *want = g_malloc0(4 * THR);
    memcpy(want, data, 100);
    memcpy(want + 200, data, 10);
    ts_expect(&t, td_fh(&g), want, 4 * THR);
    g_free(want);
    /* The last link takes the table with it. */
    td_rc(dbfs_remove(t.c, &u, t.root, "g", &w), 0);
    g_assert_false(ts_has_table(&t, g.ino));
    ts_check_invariants(&t);
    td_close(&t);
}

static void test_hybrid_migrate(void)
{
    hybrid_migrate(DBFS_ENC_BINARY);
}

static void test_hybrid_migrate_base64(void)
{
    hybrid_migrate(DBFS_ENC_BASE64);
}

/* base64: what is stored is the base64 text of each chunk (SQL decodes it
 * to the file's bytes), also after partial merges done in SQL. */
static void test_base64_stored(void)
{
    enum { CS = 1024 };
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, ts_no_groups);
    unsigned char data[5000], model[6000] = {0};

    ts_open(&t, DBFS_STORAGE_SINGLE, DBFS_ENC_BASE64, CS, 0);
    ts_fill(data, sizeof data, 3);
    dbfs_attr f = td_create(&t, &u, t.root, "f", 0644);
    td_write(&t, &u, td_fh(&f), 0, data, 3000);
    memcpy(model, data, 3000);
    /* Partial merges: inside a chunk, across chunks, past the end with a
     * gap in the same chunk. */
    td_write(&t, &u, td_fh(&f), 10, data + 100, 7);
    memcpy(model + 10, data + 100, 7);
    td_write(&t, &u, td_fh(&f), 1020, data + 200, 10);
    memcpy(model + 1020, data + 200, 10);
    td_write(&t, &u, td_fh(&f), 3100, data + 300, 5);
    memcpy(model + 3100, data + 300, 5);
    ts_expect(&t, td_fh(&f), model, 3105);
    /* Every stored value is one line of base64 that decodes to the chunk's
     * bytes. */
    g_assert_cmpint(ts_sql(&t,
                           "SELECT count(*) FROM allfiles WHERE inode = $1 AND"
                           " convert_from(data, 'SQL_ASCII') !~ '^[A-Za-z0-9+/]*={0,2}$'",
                           (int64_t)f.ino),
                    ==, 0);
    char sql[256];
    for (int c = 0; c * CS < 3105; c++) {
        PGconn *pg = PQconnectdb(t.conninfo);
        g_snprintf(sql, sizeof sql,
                   "SELECT decode(convert_from(data, 'SQL_ASCII'), 'base64') FROM allfiles"
                   " WHERE inode = %" G_GUINT64_FORMAT " AND chunk = %d",
                   f.ino, c);
        PGresult *r = PQexecParams(pg, sql, 0, NULL, NULL, NULL, NULL, 1);
        g_assert_cmpint(PQresultStatus(r), ==, PGRES_TUPLES_OK);
        g_assert_cmpint(PQntuples(r), ==, 1);
        size_t len = (size_t)PQgetlength(r, 0, 0);
        /* Chunk 2 ends where the first write ended (3000): the gap up to
         * the last write's chunk is a hole, not stored zeros. */
        g_assert_cmpuint(len, ==, c == 3 ? 3105 - 3 * CS : c == 2 ? 3000 - 2 * CS : CS);
        g_assert_cmpmem(PQgetvalue(r, 0, 0), len, model + c * CS, len);
        PQclear(r);
        PQfinish(pg);
    }
    /* used counts the stored (encoded) bytes: 4 per 3, rounded up. */
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).used, ==,
                     2 * 4 * ((CS + 2) / 3) + 4 * ((3000 - 2 * CS + 2) / 3) +
                         4 * ((3105 - 3 * CS + 2) / 3));
    ts_check_invariants(&t);
    /* A value that is not base64 is an I/O error, not a crash. */
    PGconn *pg = PQconnectdb(t.conninfo);
    PGresult *r = PQexec(pg, "UPDATE allfiles SET data = '\\x2a2a2a'::bytea WHERE chunk = 0");
    g_assert_cmpint(PQresultStatus(r), ==, PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(pg);
    uint32_t n;
    bool eof;
    dbfs_attr_opt a;
    g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING, "*not valid base64*");
    td_rc(dbfs_read(t.c, &u, td_fh(&f), 0, 100, data, &n, &eof, &a), -EIO);
    g_test_assert_expected_messages();
    td_close(&t);
}

/* Two connections: one moves a hybrid file between allfiles and its own
 * table over and over (grow past the threshold, cut back), the other reads
 * it; every read must see a whole state: each byte it returns is the
 * pattern's byte at that offset (a file only ever holds the pattern). */
typedef struct {
    td_fs *t;
    dbfs_fh fh;
    const unsigned char *pattern;
    size_t max;
    gint stop;
    gint reads, errors;
} ts_race;

/* A generous bound for waiting on the other thread (never a pace). */
#define TS_DEADLINE_US (120 * G_USEC_PER_SEC)

static gpointer ts_race_reader(gpointer p)
{
    ts_race *r = p;
    dbfs_conn *c;
    dbfs_cred root = td_root();
    unsigned char *buf = g_malloc(r->max + 1);

    td_rc(dbfs_conn_open(r->t->fs, &c), 0);
    while (!g_atomic_int_get(&r->stop)) {
        uint32_t n = 0;
        bool eof;
        dbfs_attr_opt a;
        int rc = dbfs_read(c, &root, r->fh, 0, (uint32_t)r->max + 1, buf, &n, &eof, &a);

        if (rc != 0 || !a.valid || n != a.attr.size || memcmp(buf, r->pattern, n) != 0) {
            size_t k = 0;

            while (rc == 0 && k < n && buf[k] == r->pattern[k])
                k++;
            if (g_atomic_int_add(&r->errors, 1) < 5)
                g_test_message("read: rc %d, %u bytes of %" G_GUINT64_FORMAT ", first wrong "
                               "byte at %zu",
                               rc, n, a.valid ? a.attr.size : 0, k);
        }
        g_atomic_int_inc(&r->reads);
    }
    dbfs_conn_close(c);
    g_free(buf);
    return NULL;
}

/* A reader reads a hybrid file over and over while the writer moves it to
 * its own table and back: every read is whole. The writer goes on past 60
 * rounds until the reader has read 30 times (whatever the scheduler did). */
static void test_hybrid_race(void)
{
    enum { CS = 2048, THR = 8192, ROUNDS = 60, READS = 30 };
    td_fs t;
    dbfs_cred root = td_root();
    unsigned char pattern[4 * THR];
    ts_race r = {0};
    dbfs_wcc w;
    int64_t deadline;
    int i;

    ts_open(&t, DBFS_STORAGE_HYBRID, DBFS_ENC_BINARY, CS, THR);
    ts_fill(pattern, sizeof pattern, 4);
    dbfs_attr f = td_create(&t, &root, t.root, "f", 0644);
    td_write(&t, &root, td_fh(&f), 0, pattern, THR / 2);
    r.t = &t;
    r.fh = td_fh(&f);
    r.pattern = pattern;
    r.max = sizeof pattern;
    GThread *th = g_thread_new("reader", ts_race_reader, &r);
    deadline = g_get_monotonic_time() + TS_DEADLINE_US;
    for (i = 0; i < ROUNDS || g_atomic_int_get(&r.reads) < READS; i++) {
        dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = (uint64_t)(i % 3) * 1000 + 10};

        if (g_get_monotonic_time() > deadline)
            g_error("the reader did not read %d times in %d s", READS,
                    (int)(TS_DEADLINE_US / G_USEC_PER_SEC));
        td_write(&t, &root, td_fh(&f), THR / 2, pattern + THR / 2, sizeof pattern - THR / 2);
        td_rc(dbfs_setattr(t.c, &root, td_fh(&f), &sa, NULL, &w), 0);
        td_write(&t, &root, td_fh(&f), sa.size, pattern + sa.size, THR / 2 - sa.size);
    }
    g_atomic_int_set(&r.stop, 1);
    g_thread_join(th);
    g_test_message("%d reads raced %d migrations each way", r.reads, i);
    g_assert_cmpint(r.errors, ==, 0);
    ts_check_invariants(&t);
    td_close(&t);
}

/* A read racing the removal of the file's last link (which drops its
 * table) answers the data or ESTALE, never an I/O error. */
typedef struct {
    td_fs *t;
    dbfs_fh fh;
    gint ok;
    int stale, other;
} ts_rm;

static gpointer ts_rm_reader(gpointer p)
{
    ts_rm *r = p;
    dbfs_conn *c;
    dbfs_cred root = td_root();
    unsigned char *buf = g_malloc(65536);

    td_rc(dbfs_conn_open(r->t->fs, &c), 0);
    for (;;) {
        uint32_t n;
        bool eof;
        dbfs_attr_opt a;
        int rc = dbfs_read(c, &root, r->fh, 0, 65536, buf, &n, &eof, &a);

        if (rc == 0)
            g_atomic_int_inc(&r->ok);
        else if (rc == -ESTALE)
            break;
        else {
            r->other++;
            break;
        }
    }
    r->stale++;
    dbfs_conn_close(c);
    g_free(buf);
    return NULL;
}

/* The reader reads until the file is gone; the removal comes once it has
 * read 1, 2 or 3 times (the event), so it lands in the middle of reads. */
static void test_remove_while_reading(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    unsigned char data[65536];
    dbfs_wcc w;

    ts_open(&t, DBFS_STORAGE_INVERSION, DBFS_ENC_BINARY, 8192, 0);
    ts_fill(data, sizeof data, 5);
    for (int i = 0; i < 10; i++) {
        ts_rm r = {0};
        dbfs_attr f = td_create(&t, &root, t.root, "f", 0644);
        int64_t deadline = g_get_monotonic_time() + TS_DEADLINE_US;

        td_write(&t, &root, td_fh(&f), 0, data, sizeof data);
        r.t = &t;
        r.fh = td_fh(&f);
        GThread *th = g_thread_new("reader", ts_rm_reader, &r);
        while (g_atomic_int_get(&r.ok) < 1 + i % 3) {
            if (g_get_monotonic_time() > deadline)
                g_error("the reader did not read in %d s", (int)(TS_DEADLINE_US / G_USEC_PER_SEC));
            g_thread_yield();
        }
        td_rc(dbfs_remove(t.c, &root, t.root, "f", &w), 0);
        g_thread_join(th);
        g_assert_cmpint(r.other, ==, 0);
        g_assert_cmpint(r.stale, ==, 1);
    }
    ts_check_invariants(&t);
    td_close(&t);
}

/* The same seeded workload (writes, truncations, extensions, reads, over a
 * file that crosses the hybrid threshold both ways) in every layout and
 * encoding gives the same bytes as an in-memory model, with the storage
 * invariants holding at the end. */
static void test_layouts_random(void)
{
    const char *env = g_getenv("PGNFS_TEST_SEED");
    guint32 seed = env ? (guint32)strtoul(env, NULL, 10) : g_random_int();

    g_test_message("layouts random test: seed %u (PGNFS_TEST_SEED=%u to repeat)", seed, seed);
    for (int st = DBFS_STORAGE_SINGLE; st <= DBFS_STORAGE_HYBRID; st++) {
        for (int enc = DBFS_ENC_BINARY; enc <= DBFS_ENC_BASE64; enc++) {
            enum { CS = 1024, SPAN = 12 * CS };
            GRand *rnd = g_rand_new_with_seed(seed);
            unsigned char *model = g_malloc0(2 * SPAN), *buf = g_malloc(2 * SPAN),
                          *back = g_malloc(2 * SPAN + 1);
            size_t size = 0;
            dbfs_cred u = td_user(1000, 100, 0, ts_no_groups);
            td_fs t;

            ts_open(&t, (dbfs_storage)st, (dbfs_encoding)enc, CS, 4 * CS);
            dbfs_attr f = td_create(&t, &u, t.root, "r", 0644);
            for (int i = 0; i < 150; i++) {
                int what = g_rand_int_range(rnd, 0, 10);
                size_t off = (size_t)g_rand_int_range(rnd, 0, SPAN);
                size_t len = (size_t)g_rand_int_range(rnd, 0, SPAN);

                if (what < 6) {
                    for (size_t k = 0; k < len; k++)
                        buf[k] = (unsigned char)g_rand_int(rnd);
                    td_write(&t, &u, td_fh(&f), off, buf, (uint32_t)len);
                    if (len && off + len > size) {
                        memset(model + size, 0, off + len - size);
                        size = off + len;
                    }
                    memcpy(model + off, buf, len);
                } else if (what < 8) {
                    dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = off};
                    dbfs_wcc w;

                    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
                    if (off > size)
                        memset(model + size, 0, off - size);
                    size = off;
                } else {
                    uint32_t n = 0;
                    bool eof;
                    dbfs_attr_opt a;
                    size_t want = off >= size ? 0 : (size - off < len ? size - off : len);

                    td_rc(dbfs_read(t.c, &u, td_fh(&f), off, (uint32_t)len, back, &n, &eof, &a), 0);
                    if (n != want || memcmp(back, model + off, want) != 0)
                        g_error("layouts random test (storage %d, encoding %d, seed %u): op %d "
                                "read [%zu, +%zu) differs",
                                st, enc, seed, i, off, len);
                }
            }
            ts_expect(&t, td_fh(&f), model, size);
            ts_check_invariants(&t);
            td_close(&t);
            g_free(model);
            g_free(buf);
            g_free(back);
            g_rand_free(rnd);
        }
    }
}

/* pgnfsd against a file system whose layout its configuration
 * contradicts: it refuses to start and says which key and what the file
 * system has. */
static void test_server_refuses(void)
{
    char *ci = tl_fresh_db();
    dbfs_mkfs_opts o = {.storage = DBFS_STORAGE_INVERSION, .chunk_size = 4096};
    static const struct {
        const char *set, *says;
    } cases[] = {
        {"storage.schema=single", "[storage] schema is 'single' in the configuration, but the "
                                  "file system was created with schema 'inversion'"},
        {"storage.chunk_size=8192", "[storage] chunk_size is 8192 in the configuration, but the "
                                    "file system was created with chunk_size 4096"},
        {"storage.encoding=base64", "[storage] encoding is 'base64' in the configuration, but "
                                    "the file system was created with encoding 'binary'"},
    };

    td_rc(dbfs_mkfs(ci, &o), 0);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *out = NULL, *err = NULL;
        int status = 0;
        GError *ge = NULL;
        const char *argv[] = {PGNFS_BIN_DIR "/pgnfsd",
                              "--conninfo",
                              ci,
                              "--port",
                              "0",
                              "--listen",
                              "127.0.0.1",
                              "--set",
                              cases[i].set,
                              NULL};

        if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                          &status, &ge))
            g_error("cannot run pgnfsd: %s", ge->message);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 2);
        if (!strstr(err, cases[i].says))
            g_error("pgnfsd with %s said: %s", cases[i].set, err);
        g_free(out);
        g_free(err);
    }
    g_free(ci);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/storage/mkfs-options", test_mkfs_options);
    g_test_add_func("/storage/inversion-table-life", test_inversion_table_life);
    g_test_add_func("/storage/hybrid-migrate", test_hybrid_migrate);
    g_test_add_func("/storage/hybrid-migrate-base64", test_hybrid_migrate_base64);
    g_test_add_func("/storage/base64-stored", test_base64_stored);
    g_test_add_func("/storage/hybrid-race", test_hybrid_race);
    g_test_add_func("/storage/remove-while-reading", test_remove_while_reading);
    g_test_add_func("/storage/layouts-random", test_layouts_random);
    g_test_add_func("/storage/server-refuses", test_server_refuses);
    return g_test_run();
}
