/*
 * test_data.c -- file data against a real database: read and write, end
 * of file, chunk boundaries, sparse files, truncation then extension,
 * errors and permissions, times, relatime, round trips of large transfers,
 * and a seeded random test against an in-memory model.
 *
 * The random test prints its seed; rerun it with PGNFS_TEST_SEED=<seed>.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "td.h"
#include "testlib.h"

static const uint32_t td_no_groups[1] = {0};

/* The number sql counts in t's database. */
static long td_sql_count(const td_fs *t, const char *sql)
{
    PGconn *pg = PQconnectdb(t->conninfo);
    PGresult *r;
    long n;

    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    r = PQexec(pg, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        g_error("%s: %s", sql, PQresultErrorMessage(r));
    n = atol(PQgetvalue(r, 0, 0));
    PQclear(r);
    PQfinish(pg);
    return n;
}

/* Chunks that hold bytes at or past their file's size (must be none), in
 * whatever layout and encoding (pgnfs_data_chunks). */
static long td_bytes_past_size(const td_fs *t)
{
    return td_sql_count(t, "SELECT count(*) FROM pgnfs_data_chunks() c"
                           " JOIN fileatt f ON f.inode = c.inode"
                           " WHERE c.chunk * (SELECT chunk_size FROM pgnfs_fs) + c.bytes > f.size");
}

/* Files whose "used" differs from the bytes their chunks store (must be
 * none), and chunks of files that do not exist (must be none). */
static long td_used_wrong(const td_fs *t)
{
    return td_sql_count(t,
                        "SELECT count(*) FROM fileatt f LEFT JOIN"
                        " (SELECT inode, sum(stored) AS s FROM pgnfs_data_chunks() GROUP BY inode)"
                        " c ON c.inode = f.inode WHERE f.used <> coalesce(c.s, 0)") +
           td_sql_count(t, "SELECT count(*) FROM pgnfs_data_chunks() c"
                           " WHERE NOT EXISTS (SELECT 1 FROM fileatt f WHERE f.inode = c.inode)");
}

/* Stored bytes of one chunk holding n file bytes, in t's encoding. */
static uint64_t td_enc(const td_fs *t, uint64_t n)
{
    return dbfs_get_info(t->fs)->encoding == DBFS_ENC_BASE64 ? 4 * ((n + 2) / 3) : n;
}

/* Stored bytes of a file written densely from 0 to n. */
static uint64_t td_dense(const td_fs *t, uint64_t n)
{
    uint64_t cs = dbfs_get_info(t->fs)->chunk_size, s = 0;

    for (uint64_t at = 0; at < n; at += cs)
        s += td_enc(t, n - at < cs ? n - at : cs);
    return s;
}

static void td_fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 131 + seed * 7 + (i >> 9)) & 0xff);
}

static void test_basic(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr f;
    dbfs_attr_opt a;
    dbfs_wcc w;
    dbfs_stable st;
    char buf[64];
    uint32_t n;
    bool eof;

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0644);
    td_rc(dbfs_write(t.c, &u, td_fh(&f), 0, "hello, world", 12, DBFS_UNSTABLE, &st, &w), 0);
    g_assert_cmpint(st, ==, DBFS_FILE_SYNC);
    g_assert_true(w.have_pre && w.have_post);
    g_assert_cmpuint(w.pre_size, ==, 0);
    g_assert_cmpuint(w.post.size, ==, 12);
    g_assert_cmpint(w.post.mtime_ns, >, w.pre_mtime_ns);
    g_assert_cmpint(w.post.ctime_ns, >, w.pre_ctime_ns);
    g_assert_cmpuint(w.post.change, >, f.change);

    td_rc(dbfs_read(t.c, &u, td_fh(&f), 0, 64, buf, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, 12);
    g_assert_true(eof);
    g_assert_true(a.valid);
    g_assert_cmpuint(a.attr.size, ==, 12);
    g_assert_cmpmem(buf, 12, "hello, world", 12);
    td_rc(dbfs_read(t.c, &u, td_fh(&f), 0, 5, buf, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, 5);
    g_assert_false(eof);
    td_rc(dbfs_read(t.c, &u, td_fh(&f), 7, 5, buf, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, 5);
    g_assert_true(eof);
    g_assert_cmpmem(buf, 5, "world", 5);
    td_rc(dbfs_read(t.c, &u, td_fh(&f), 12, 5, buf, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, 0);
    g_assert_true(eof);
    td_rc(dbfs_read(t.c, &u, td_fh(&f), 1000, 5, buf, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, 0);
    g_assert_true(eof);
    td_rc(dbfs_read(t.c, &u, td_fh(&f), 3, 0, buf, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, 0);
    g_assert_false(eof);

    /* Overwrite in the middle; size stays. */
    td_write(&t, &u, td_fh(&f), 5, "!!", 2);
    td_read(&t, &u, td_fh(&f), 0, buf, 12);
    g_assert_cmpmem(buf, 12, "hello!!world", 12);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).size, ==, 12);

    /* A zero-length write changes nothing but answers wcc. */
    dbfs_attr before = td_getattr(&t, td_fh(&f));
    td_rc(dbfs_write(t.c, &u, td_fh(&f), 100, "", 0, DBFS_FILE_SYNC, &st, &w), 0);
    g_assert_true(w.have_pre && w.have_post);
    g_assert_cmpmem(&w.post, sizeof w.post, &before, sizeof before);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).change, ==, before.change);
    td_close(&t);
}

static void test_chunks(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    const uint32_t cs = 8192;
    enum { LEN = 3 * 8192 + 500 };
    unsigned char *data = g_malloc(LEN), *back = g_malloc(LEN);
    unsigned char zero[9000] = {0};
    dbfs_attr f;

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0644);
    /* A piece straddling the first boundary, then whole chunks, then a
     * write covering several chunks with partial ends. */
    td_fill(data, LEN, 1);
    td_write(&t, &u, td_fh(&f), cs - 50, data, 100);
    td_read(&t, &u, td_fh(&f), 0, back, cs + 50);
    g_assert_cmpmem(back, cs - 50, zero, cs - 50);
    g_assert_cmpmem(back + cs - 50, 100, data, 100);
    td_write(&t, &u, td_fh(&f), 100, data, LEN);
    td_read(&t, &u, td_fh(&f), 0, back, 100);
    g_assert_cmpmem(back, 100, zero, 100);
    td_read(&t, &u, td_fh(&f), 100, back, LEN);
    g_assert_cmpmem(back, LEN, data, LEN);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).size, ==, 100 + LEN);
    /* Exactly one whole chunk. */
    td_fill(data, cs, 2);
    td_write(&t, &u, td_fh(&f), cs, data, cs);
    td_read(&t, &u, td_fh(&f), cs, back, cs);
    g_assert_cmpmem(back, cs, data, cs);
    td_read(&t, &u, td_fh(&f), cs - 1, back, 2);
    g_assert_cmpuint(back[1], ==, data[0]);
    g_assert_cmpint(td_bytes_past_size(&t), ==, 0);
    g_free(data);
    g_free(back);
    td_close(&t);
}

/* A READ over stored pieces, holes and the zeros past a chunk's stored
 * end, into a buffer full of other bytes: every byte is the file's. */
static void test_holes_dirty(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_sattr sa = {.set = DBFS_SET_SIZE};
    unsigned char *data, *model, *back;
    uint32_t n = 0, chunk;
    uint64_t size;
    bool eof;
    dbfs_attr_opt a;
    dbfs_attr f;
    dbfs_wcc w;

    td_open(&t);
    chunk = dbfs_get_info(t.fs)->chunk_size;
    size = 5 * (uint64_t)chunk;
    data = g_malloc(chunk);
    model = g_malloc0(size);
    back = g_malloc(size);
    td_fill(data, chunk, 4);
    f = td_create(&t, &u, t.root, "f", 0644);
    /* chunk 0: 100 bytes; 1: a hole; 2: whole; 3: 10 bytes; 4: a hole. */
    td_write(&t, &u, td_fh(&f), 0, data, 100);
    memcpy(model, data, 100);
    td_write(&t, &u, td_fh(&f), 2 * (uint64_t)chunk, data, chunk);
    memcpy(model + 2 * (uint64_t)chunk, data, chunk);
    td_write(&t, &u, td_fh(&f), 3 * (uint64_t)chunk, data + 7, 10);
    memcpy(model + 3 * (uint64_t)chunk, data + 7, 10);
    sa.size = size;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    for (uint64_t off = 0; off < size; off += chunk / 2) {
        memset(back, 0xAA, size);
        td_rc(dbfs_read(t.c, &u, td_fh(&f), off, (uint32_t)(size - off), back, &n, &eof, &a), 0);
        g_assert_cmpuint(n, ==, size - off);
        g_assert_true(eof);
        g_assert_cmpmem(back, n, model + off, n);
    }
    g_free(data);
    g_free(model);
    g_free(back);
    td_close(&t);
}

/* A cut inside a chunk's last base64 group (1,558 -> 1,556 bytes: 712
 * characters either way, only the padding differs) still trims the stored
 * chunk: no byte past the size stays stored, and growing the file again
 * shows zeros there, not the old bytes. */
static void test_cut_base64_group(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    unsigned char data[1558], back[64];
    dbfs_sattr sa = {.set = DBFS_SET_SIZE};
    dbfs_wcc w;

    td_open_base64(&t, 1024);
    dbfs_attr f = td_create(&t, &u, t.root, "f", 0644);
    memset(data, 0xab, sizeof data);
    td_write(&t, &u, td_fh(&f), 0, data, sizeof data);
    for (uint64_t size = 1557; size >= 1552; size--) {
        sa.size = size;
        td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
        g_assert_cmpint(td_bytes_past_size(&t), ==, 0);
    }
    g_assert_cmpint(td_used_wrong(&t), ==, 0);
    sa.size = 1600;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    uint32_t n = 0;
    bool eof;
    dbfs_attr_opt a;
    td_rc(dbfs_read(t.c, &u, td_fh(&f), 1540, sizeof back, back, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, 60);
    for (uint32_t k = 0; k < n; k++)
        g_assert_cmpuint(back[k], ==, k < 12 ? 0xab : 0);
    td_close(&t);
}

static void test_sparse_truncate(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    unsigned char *zero = g_malloc0(20000), *back = g_malloc(20000);
    dbfs_sattr sa = {.set = DBFS_SET_SIZE};
    dbfs_attr f;
    dbfs_wcc w;
    uint64_t far = UINT64_C(1) << 40;

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0644);

    /* Sparse: data far out, zeros before it. */
    td_write(&t, &u, td_fh(&f), far, "tail", 4);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).size, ==, far + 4);
    td_read(&t, &u, td_fh(&f), far - 10000, back, 10004);
    g_assert_cmpmem(back, 10000, zero, 10000);
    g_assert_cmpmem(back + 10000, 4, "tail", 4);
    td_read(&t, &u, td_fh(&f), 12345, back, 5000);
    g_assert_cmpmem(back, 5000, zero, 5000);
    /* A write just below the largest size. */
    td_write(&t, &u, td_fh(&f), (uint64_t)INT64_MAX - 3, "end", 3);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).size, ==, (uint64_t)INT64_MAX);
    td_read(&t, &u, td_fh(&f), (uint64_t)INT64_MAX - 3, back, 3);
    g_assert_cmpmem(back, 3, "end", 3);

    /* Truncate into the middle of a chunk, extend again: zeros, never the
     * old bytes. */
    td_fill(back, 20000, 3);
    td_write(&t, &u, td_fh(&f), 0, back, 20000);
    sa.size = 9000;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpint(td_bytes_past_size(&t), ==, 0);
    sa.size = 20000;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    unsigned char again[20000];
    td_read(&t, &u, td_fh(&f), 0, again, 20000);
    g_assert_cmpmem(again, 9000, back, 9000);
    g_assert_cmpmem(again + 9000, 11000, zero, 11000);
    /* A write past the end after a shrink: the gap reads as zeros. */
    sa.size = 100;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    td_write(&t, &u, td_fh(&f), 150, "x", 1);
    td_read(&t, &u, td_fh(&f), 0, again, 151);
    g_assert_cmpmem(again, 100, back, 100);
    g_assert_cmpmem(again + 100, 50, zero, 50);
    g_assert_cmpuint(again[150], ==, 'x');
    sa.size = 0;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpint(td_bytes_past_size(&t), ==, 0);
    g_free(zero);
    g_free(back);
    td_close(&t);
}

/* "used" counts the bytes stored: holes and cut tails are free. */
static void test_used(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    char buf[20000];
    dbfs_sattr sa = {.set = DBFS_SET_SIZE};
    dbfs_wcc w;

    td_open(&t);
    memset(buf, 'u', sizeof buf);
    dbfs_attr f = td_create(&t, &root, t.root, "u", 0644);
    g_assert_cmpuint(f.used, ==, 0);
    td_write(&t, &root, td_fh(&f), 0, buf, 10000);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).used, ==, td_dense(&t, 10000));
    /* Overwriting inside stored data changes nothing. */
    td_write(&t, &root, td_fh(&f), 100, buf, 5000);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).used, ==, td_dense(&t, 10000));
    /* A byte far away stores one partial chunk: the zeros before it in
     * that chunk count, the hole between does not. */
    uint64_t cs = dbfs_get_info(t.fs)->chunk_size;
    td_write(&t, &root, td_fh(&f), 1u << 30, buf, 1);
    dbfs_attr a = td_getattr(&t, td_fh(&f));
    g_assert_cmpuint(a.size, ==, (1u << 30) + 1);
    g_assert_cmpuint(a.used, ==, td_dense(&t, 10000) + td_enc(&t, ((1u << 30) % cs) + 1));
    g_assert_cmpint(td_used_wrong(&t), ==, 0);
    /* Truncation gives back what it cuts. */
    sa.size = 5000;
    td_rc(dbfs_setattr(t.c, &root, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.post.used, ==, td_dense(&t, 5000));
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).used, ==, td_dense(&t, 5000));
    g_assert_cmpint(td_used_wrong(&t), ==, 0);
    sa.size = 0;
    td_rc(dbfs_setattr(t.c, &root, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).used, ==, 0);
    g_assert_cmpint(td_used_wrong(&t), ==, 0);
    td_close(&t);
}

static void test_errors(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_cred v = td_user(1001, 100, 0, td_no_groups);
    dbfs_attr f, d, l;
    dbfs_attr_opt a;
    dbfs_wcc w;
    dbfs_stable st;
    char buf[8];
    uint32_t n;
    bool eof;

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0644);
    d = td_mkdir(&t, &u, t.root, "d", 0755);
    td_rc(dbfs_symlink(t.c, &u, t.root, "l", "f", NULL, &l, &w), 0);
    td_write(&t, &u, td_fh(&f), 0, "safe", 4);

    td_rc(dbfs_write(t.c, &u, td_fh(&d), 0, "x", 1, DBFS_FILE_SYNC, &st, &w), -EISDIR);
    td_rc(dbfs_write(t.c, &u, td_fh(&l), 0, "x", 1, DBFS_FILE_SYNC, &st, &w), -EINVAL);
    td_rc(dbfs_read(t.c, &u, td_fh(&d), 0, 1, buf, &n, &eof, &a), -EISDIR);
    g_assert_true(a.valid);
    td_rc(dbfs_read(t.c, &u, td_fh(&l), 0, 1, buf, &n, &eof, &a), -EINVAL);
    td_rc(dbfs_write(t.c, &u, (dbfs_fh){f.ino, f.gen + 1, 0}, 0, "x", 1, DBFS_FILE_SYNC, &st, &w),
          -ESTALE);
    td_rc(dbfs_read(t.c, &u, (dbfs_fh){f.ino, f.gen + 1, 0}, 0, 1, buf, &n, &eof, &a), -ESTALE);
    g_assert_false(a.valid);
    td_rc(dbfs_write(t.c, &u, td_fh(&f), (uint64_t)INT64_MAX, "x", 1, DBFS_FILE_SYNC, &st, &w),
          -EFBIG);
    td_rc(dbfs_write(t.c, &u, td_fh(&f), (uint64_t)INT64_MAX - 1, "xy", 2, DBFS_FILE_SYNC, &st, &w),
          -EFBIG);

    /* Another user without write permission: nothing is stored. */
    td_rc(dbfs_write(t.c, &v, td_fh(&f), 0, "EVIL!", 5, DBFS_FILE_SYNC, &st, &w), -EACCES);
    td_read(&t, &v, td_fh(&f), 0, buf, 4);
    g_assert_cmpmem(buf, 4, "safe", 4);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).size, ==, 4);
    /* Without read permission. */
    td_chmod(&t, &u, td_fh(&f), 0600);
    td_rc(dbfs_read(t.c, &v, td_fh(&f), 0, 4, buf, &n, &eof, &a), -EACCES);
    g_assert_true(a.valid);
    /* The owner may read and write whatever the mode says. */
    td_chmod(&t, &u, td_fh(&f), 0000);
    td_write(&t, &u, td_fh(&f), 4, "more", 4);
    td_read(&t, &u, td_fh(&f), 0, buf, 8);
    g_assert_cmpmem(buf, 8, "safemore", 8);
    /* Group write lets a member write. */
    td_chmod(&t, &u, td_fh(&f), 0660);
    td_write(&t, &v, td_fh(&f), 0, "S", 1);
    td_close(&t);
}

static void test_relatime(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_cred v = td_user(1001, 200, 0, td_no_groups);
    dbfs_attr f, a1, a2;
    dbfs_attr_opt a;
    dbfs_sattr sa;
    dbfs_wcc w;
    char buf[4];
    uint32_t n;
    bool eof;

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0600);
    td_write(&t, &u, td_fh(&f), 0, "data", 4);
    a1 = td_getattr(&t, td_fh(&f));
    /* atime <= mtime: a read moves it. */
    td_read(&t, &u, td_fh(&f), 0, buf, 4);
    a2 = td_getattr(&t, td_fh(&f));
    g_assert_cmpint(a2.atime_ns, >, a1.mtime_ns);
    g_assert_cmpint(a2.mtime_ns, ==, a1.mtime_ns);
    g_assert_cmpint(a2.ctime_ns, ==, a1.ctime_ns);
    /* Newer than mtime and ctime and recent: it stays. */
    td_read(&t, &u, td_fh(&f), 0, buf, 4);
    g_assert_cmpint(td_getattr(&t, td_fh(&f)).atime_ns, ==, a2.atime_ns);
    /* A day old: it moves. */
    sa = (dbfs_sattr){.set = DBFS_SET_ATIME, .atime_ns = a2.ctime_ns + 1};
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    sa = (dbfs_sattr){
        .set = DBFS_SET_ATIME | DBFS_SET_MTIME, .atime_ns = 1000000000, .mtime_ns = 500000000};
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    /* ctime moved with that setattr, so atime <= ctime holds: it moves. */
    td_read(&t, &u, td_fh(&f), 0, buf, 4);
    g_assert_cmpint(td_getattr(&t, td_fh(&f)).atime_ns, >, w.post.ctime_ns);
    /* A denied read moves nothing. */
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    td_rc(dbfs_read(t.c, &v, td_fh(&f), 0, 4, buf, &n, &eof, &a), -EACCES);
    g_assert_cmpint(td_getattr(&t, td_fh(&f)).atime_ns, ==, 1000000000);
    td_close(&t);

    /* noatime: reads never move it. */
    td_open_opts(&t, 0, false);
    f = td_create(&t, &u, t.root, "f", 0600);
    td_write(&t, &u, td_fh(&f), 0, "data", 4);
    a1 = td_getattr(&t, td_fh(&f));
    td_read(&t, &u, td_fh(&f), 0, buf, 4);
    g_assert_cmpint(td_getattr(&t, td_fh(&f)).atime_ns, ==, a1.atime_ns);
    td_close(&t);
}

static void test_large_round_trips(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    const uint32_t mib = 1024 * 1024;
    unsigned char *data = g_malloc(mib + 4096), *back = g_malloc(mib + 4096);
    dbfs_attr f;

    td_open(&t);
    f = td_create(&t, &u, t.root, "big", 0644);
    td_fill(data, mib + 4096, 9);
    td_trips(&t);
    td_write(&t, &u, td_fh(&f), 0, data, mib);
    g_assert_cmpuint(td_trips(&t), ==, 1);
    /* Unaligned: 129 pieces, two of them partial. */
    td_write(&t, &u, td_fh(&f), 1000, data + 7, mib);
    g_assert_cmpuint(td_trips(&t), ==, 1);
    td_read(&t, &u, td_fh(&f), 1000, back, mib);
    g_assert_cmpuint(td_trips(&t), ==, 1);
    g_assert_cmpmem(back, mib, data + 7, mib);
    td_read(&t, &u, td_fh(&f), 0, back, 1000);
    g_assert_cmpmem(back, 1000, data, 1000);
    g_assert_cmpuint(td_trips(&t), ==, 1);
    /* Four MiB in one call still works (and is still one round trip). */
    unsigned char *four = g_malloc0(4 * mib);
    td_fill(four, 4 * mib, 4);
    td_write(&t, &u, td_fh(&f), 3, four, 4 * mib);
    g_assert_cmpuint(td_trips(&t), ==, 1);
    unsigned char *four_back = g_malloc(4 * mib);
    td_read(&t, &u, td_fh(&f), 3, four_back, 4 * mib);
    g_assert_cmpmem(four_back, 4 * mib, four, 4 * mib);
    g_free(four);
    g_free(four_back);
    g_free(data);
    g_free(back);
    td_close(&t);
}

/* The model: the file's bytes as they must read. */
typedef struct {
    unsigned char *bytes;
    size_t size, cap;
} td_model;

static void td_model_resize(td_model *m, size_t size)
{
    if (size > m->cap) {
        m->bytes = g_realloc(m->bytes, size);
        m->cap = size;
    }
    if (size > m->size)
        memset(m->bytes + m->size, 0, size - m->size);
    m->size = size;
}

static void td_random_run(uint32_t chunk_size, guint32 seed, int ops)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    GRand *rnd = g_rand_new_with_seed(seed);
    td_model m = {0};
    size_t span = chunk_size * 6;
    unsigned char *buf = g_malloc(span * 2), *back = g_malloc(span * 2);
    dbfs_attr f;

    g_test_message("random data test: chunk size %u, seed %u (PGNFS_TEST_SEED=%u to repeat)",
                   chunk_size, seed, seed);
    td_open_opts(&t, chunk_size, true);
    f = td_create(&t, &u, t.root, "r", 0644);
    for (int i = 0; i < ops; i++) {
        int what = g_rand_int_range(rnd, 0, 10);
        size_t off = (size_t)g_rand_int_range(rnd, 0, (gint32)span);
        size_t len = (size_t)g_rand_int_range(rnd, 0, (gint32)span);

        if (what < 5) {
            for (size_t k = 0; k < len; k++)
                buf[k] = (unsigned char)g_rand_int(rnd);
            td_write(&t, &u, td_fh(&f), off, buf, (uint32_t)len);
            if (len) {
                if (off + len > m.size)
                    td_model_resize(&m, off + len);
                memcpy(m.bytes + off, buf, len);
            }
        } else if (what < 7) {
            dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = off};
            dbfs_wcc w;

            td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
            td_model_resize(&m, off);
        } else {
            uint32_t n = 0;
            bool eof;
            dbfs_attr_opt a;
            size_t want = off >= m.size ? 0 : (m.size - off < len ? m.size - off : len);

            td_rc(dbfs_read(t.c, &u, td_fh(&f), off, (uint32_t)len, back, &n, &eof, &a), 0);
            if (n != want || memcmp(back, m.bytes + off, want) != 0 || eof != (off + n >= m.size))
                g_error("random data test (chunk size %u, seed %u): op %d read [%zu, +%zu) "
                        "returned %u bytes (eof %d), expected %zu of a %zu-byte file, or other "
                        "bytes",
                        chunk_size, seed, i, off, len, n, eof, want, m.size);
        }
        if (td_getattr(&t, td_fh(&f)).size != m.size)
            g_error("random data test (chunk size %u, seed %u): size %" G_GUINT64_FORMAT
                    " after op %d, expected %zu",
                    chunk_size, seed, td_getattr(&t, td_fh(&f)).size, i, m.size);
    }
    /* The whole file, and the storage invariant. */
    unsigned char *all = g_malloc(m.size + 1);
    uint32_t n = 0;
    bool eof;
    dbfs_attr_opt a;
    td_rc(dbfs_read(t.c, &u, td_fh(&f), 0, (uint32_t)m.size + 1, all, &n, &eof, &a), 0);
    if (n != m.size || memcmp(all, m.bytes, m.size) != 0 || !eof)
        g_error("random data test (chunk size %u, seed %u): final contents differ", chunk_size,
                seed);
    if (td_bytes_past_size(&t) != 0)
        g_error("random data test (chunk size %u, seed %u): stored bytes past the size", chunk_size,
                seed);
    if (td_used_wrong(&t) != 0)
        g_error("random data test (chunk size %u, seed %u): \"used\" is not the stored bytes",
                chunk_size, seed);
    g_free(all);
    g_free(m.bytes);
    g_free(buf);
    g_free(back);
    g_rand_free(rnd);
    td_close(&t);
}

static guint32 td_seed(void)
{
    const char *env = g_getenv("PGNFS_TEST_SEED");

    return env ? (guint32)strtoul(env, NULL, 10) : g_random_int();
}

static void test_random(void)
{
    guint32 seed = td_seed();

    td_random_run(1024, seed, 400);
    td_random_run(8192, seed + 1, 200);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/data/basic", test_basic);
    g_test_add_func("/data/chunks", test_chunks);
    g_test_add_func("/data/holes-dirty", test_holes_dirty);
    g_test_add_func("/data/sparse-truncate", test_sparse_truncate);
    g_test_add_func("/data/cut-base64-group", test_cut_base64_group);
    g_test_add_func("/data/used", test_used);
    g_test_add_func("/data/errors", test_errors);
    g_test_add_func("/data/relatime", test_relatime);
    g_test_add_func("/data/large-round-trips", test_large_round_trips);
    g_test_add_func("/data/random", test_random);
    return g_test_run();
}
