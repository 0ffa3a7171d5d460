/*
 * test_views.c -- the SQL views of schema pgnfs (schema/functions/
 * 95_views.sql) against what NFS shows. A tree is made through NFS
 * (directories, files of several sizes, one with a hole, a hard link, a
 * symbolic link, a UTF-8 name); then pgnfs.files, pgnfs.tree(), pgnfs.dirs,
 * pgnfs.content, pgnfs.cat(), pgnfs.lookup() and pgnfs.path() must agree
 * exactly with READDIRPLUS, GETATTR, READLINK and READ. ctest runs it once
 * per storage layout and encoding (PGNFS_TEST_SERVER_SET). Also: the
 * read-only role can read the views and change nothing (no INSERT, UPDATE,
 * DELETE, DDL, mutating functions, other roles), `pgnfs sql --read-only`,
 * and the duplicate-files-by-content-hash query.
 *
 * NOTES
 *   Every file is written FILE_SYNC, so the database holds all of it when
 *   the views are read. Reads move atimes (relatime: a READ or READDIR of
 *   something whose atime is not after its mtime): the contents and the
 *   tree are read once through NFS before the pass whose attributes are
 *   compared, so that pass changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <libpq-fe.h>

#include "ptest.h"

/* One name (or the top directory) as NFS shows it. */
typedef struct {
    char *path;
    fattr3 a;
    nr_fh fh;
    GByteArray *data; /* regular files: the bytes READ returned */
    char *target;     /* symbolic links: READLINK */
} vt_entry;

static void vt_entry_free(gpointer p)
{
    vt_entry *e = p;

    g_free(e->path);
    if (e->data)
        g_byte_array_unref(e->data);
    g_free(e->target);
    g_free(e);
}

/* A connection to the server's database as its owner. */
static PGconn *vt_db(void)
{
    PGconn *db = PQconnectdb(tl_server_conninfo(pt.server));

    if (PQstatus(db) != CONNECTION_OK)
        g_error("cannot connect to the server's database: %s", PQerrorMessage(db));
    return db;
}

/* Run sql with text parameters; assert it succeeded; binary results when
 * binary. The caller PQclear()s. */
static PGresult *vt_q(PGconn *db, const char *sql, int n, const char *const *params, bool binary)
{
    PGresult *r = PQexecParams(db, sql, n, NULL, params, NULL, NULL, binary ? 1 : 0);

    if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
        g_error("%s: %s", sql, PQresultErrorMessage(r));
    return r;
}

/* The SQLSTATE of running sql (NULL if it succeeded; g_free it). */
static char *vt_fails(PGconn *db, const char *sql)
{
    PGresult *r = PQexec(db, sql);
    ExecStatusType st = PQresultStatus(r);
    char *state = NULL;

    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
        state = g_strdup(PQresultErrorField(r, PG_DIAG_SQLSTATE));
    PQclear(r);
    return state;
}

/* A file written FILE_SYNC: len bytes of a pattern seeded by seed at off. */
static void vt_put(nr_ctx *c, const nr_fh *f, uint64_t off, uint32_t len, unsigned seed)
{
    unsigned char *buf = g_malloc(len ? len : 1);

    for (uint32_t i = 0; i < len; i++)
        buf[i] = (unsigned char)((i * 31 + seed * 7 + (i >> 9)) & 0xff);
    for (uint32_t done = 0; done < len;) {
        uint32_t n = len - done < 32768 ? len - done : 32768;
        pt_write(c, f, off + done, buf + done, n);
        done += n;
    }
    g_free(buf);
}

static nr_fh vt_file(nr_ctx *c, const nr_fh *dir, const char *name, uint32_t len, unsigned seed)
{
    nr_fh f = pt_create(c, dir, name, 0640);

    if (len)
        vt_put(c, &f, 0, len, seed);
    return f;
}

/*
 * The tree under a fresh directory /NAME: returns NAME (g_free).
 *   a/            small.txt (1 byte), mid.bin (8193), empty
 *   a/b/          big.bin (200000: crosses the hybrid threshold, several
 *                 chunks), hole.bin (a hole, then 3000 bytes at 150000)
 *   a/b/c/        link.bin (a hard link of a/mid.bin), café.txt (UTF-8)
 *   e/            (empty)
 *   s             symbolic link to a/b/big.bin
 *   dev           a fifo
 *   odd name 'x'  100 bytes, owned by PT_OWNER_UID, mode 0604
 */
static char *vt_make_tree(nr_ctx *c, const char *name)
{
    char *top = g_strdup_printf("%s-%d", name, (int)getpid());
    sattr3 sa = nr_sattr_mode(0755);
    MKNOD3res mk;
    SYMLINK3res sl;
    LINK3res ln;

    nr_fh t = pt_mkdir(c, &pt.root, top, 0755);
    nr_fh a = pt_mkdir(c, &t, "a", 0755);
    nr_fh b = pt_mkdir(c, &a, "b", 0750);
    nr_fh cc = pt_mkdir(c, &b, "c", 0700);
    pt_mkdir(c, &t, "e", 0777);
    vt_file(c, &a, "small.txt", 1, 1);
    nr_fh mid = vt_file(c, &a, "mid.bin", 8193, 2);
    vt_file(c, &a, "empty", 0, 3);
    vt_file(c, &b, "big.bin", 200000, 4);
    nr_fh hole = pt_create(c, &b, "hole.bin", 0600);
    vt_put(c, &hole, 150000, 3000, 5);
    pt_ok(c, nr_link(c, &mid, &cc, "link.bin", &ln));
    vt_file(c, &cc, "caf\xc3\xa9.txt", 5, 6);
    pt_ok(c, nr_symlink(c, &t, "s", "a/b/big.bin", &sa, &sl));
    pt_ok(c, nr_mknod(c, &t, "dev", NF3FIFO, &sa, 0, 0, &mk));
    nr_fh odd = vt_file(c, &t, "odd name 'x'", 100, 7);
    pt_chown(c, &odd, PT_OWNER_UID, PT_OWNER_GID);
    pt_chmod(c, &odd, 0604);
    return top;
}

/* Every entry under dir (whose path is path) through READDIRPLUS, into
 * out; contents and link targets too when deep. */
static void vt_walk(nr_ctx *c, const nr_fh *dir, const char *path, GPtrArray *out, bool deep)
{
    uint64_t cookie = 0;
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    READDIRPLUS3res res;
    GPtrArray *here = g_ptr_array_new();

    for (bool eof = false; !eof;) {
        pt_ok(c, nr_readdirplus(c, dir, cookie, verf, 4096, 32768, &res));
        const READDIRPLUS3resok *ok = &res.READDIRPLUS3res_u.resok;
        memcpy(verf, ok->cookieverf, sizeof verf);
        for (const entryplus3 *e = ok->reply.entries; e; e = e->nextentry) {
            cookie = e->cookie;
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            vt_entry *v = g_new0(vt_entry, 1);
            v->path = g_strconcat(path, "/", e->name, NULL);
            v->a = pt_post_attr(&e->name_attributes);
            v->fh = pt_post_fh(&e->name_handle);
            g_ptr_array_add(here, v);
        }
        eof = ok->reply.eof;
        nr_arena_clear(c);
    }
    for (guint i = 0; i < here->len; i++) {
        vt_entry *v = here->pdata[i];
        g_ptr_array_add(out, v);
        if (v->a.type == NF3DIR)
            vt_walk(c, &v->fh, v->path, out, deep);
        if (deep && v->a.type == NF3REG)
            v->data = pt_read_all(c, &v->fh);
        if (deep && v->a.type == NF3LNK) {
            READLINK3res rl;
            pt_ok(c, nr_readlink(c, &v->fh, &rl));
            v->target = g_strdup(rl.READLINK3res_u.resok.data);
            nr_arena_clear(c);
        }
    }
    g_ptr_array_free(here, TRUE);
}

/* The tree under /top as NFS shows it, top itself first. */
static GPtrArray *vt_nfs_tree(nr_ctx *c, const char *top, bool deep)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(vt_entry_free);
    vt_entry *t = g_new0(vt_entry, 1);

    t->path = g_strconcat("/", top, NULL);
    t->fh = pt_lookup(c, &pt.root, top);
    t->a = pt_getattr(c, &t->fh);
    g_ptr_array_add(out, t);
    vt_walk(c, &t->fh, t->path, out, deep);
    return out;
}

static const char *vt_type_name(ftype3 t)
{
    static const char *const names[] = {NULL,   "file",    "dir",    "block",
                                        "char", "symlink", "socket", "fifo"};

    g_assert_cmpint(t, >=, 1);
    g_assert_cmpint(t, <=, 7);
    return names[t];
}

static long long vt_us(nfstime3 t)
{
    return (long long)t.seconds * 1000000 + t.nseconds / 1000;
}

/* The columns every comparison reads, from a pgnfs.files-shaped source. */
#define VT_COLS                                                                                    \
    "path, inode, type, size, used, mode, uid, gid, nlink,"                                        \
    " (extract(epoch FROM atime) * 1000000)::int8, (extract(epoch FROM mtime) * 1000000)::int8,"   \
    " (extract(epoch FROM ctime) * 1000000)::int8, target"

/* Rows r (VT_COLS, text) must be exactly the entries of nfs. */
static void vt_same(PGresult *r, GPtrArray *nfs, const char *what)
{
    GHashTable *by_path = g_hash_table_new(g_str_hash, g_str_equal);

    for (guint i = 0; i < nfs->len; i++) {
        vt_entry *e = nfs->pdata[i];
        g_hash_table_insert(by_path, e->path, e);
    }
    if ((guint)PQntuples(r) != nfs->len)
        g_error("%s: %d rows, NFS shows %u entries", what, PQntuples(r), nfs->len);
    for (int i = 0; i < PQntuples(r); i++) {
        const char *path = PQgetvalue(r, i, 0);
        vt_entry *e = g_hash_table_lookup(by_path, path);
        if (!e)
            g_error("%s: %s is not what NFS shows", what, path);
        g_hash_table_remove(by_path, path);
        g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 1), NULL, 10), ==, e->a.fileid);
        g_assert_cmpstr(PQgetvalue(r, i, 2), ==, vt_type_name(e->a.type));
        g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 3), NULL, 10), ==, e->a.size);
        g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 4), NULL, 10), ==, e->a.used);
        g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 5), NULL, 10), ==, e->a.mode);
        g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 6), NULL, 10), ==, e->a.uid);
        g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 7), NULL, 10), ==, e->a.gid);
        g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 8), NULL, 10), ==, e->a.nlink);
        g_assert_cmpint(g_ascii_strtoll(PQgetvalue(r, i, 9), NULL, 10), ==, vt_us(e->a.atime));
        g_assert_cmpint(g_ascii_strtoll(PQgetvalue(r, i, 10), NULL, 10), ==, vt_us(e->a.mtime));
        g_assert_cmpint(g_ascii_strtoll(PQgetvalue(r, i, 11), NULL, 10), ==, vt_us(e->a.ctime));
        if (e->a.type == NF3LNK)
            g_assert_cmpstr(PQgetvalue(r, i, 12), ==, e->target);
        else
            g_assert_true(PQgetisnull(r, i, 12));
    }
    g_hash_table_destroy(by_path);
}

/* The bytes of a one-row, one-column binary result. */
static void vt_same_bytes(PGresult *r, const GByteArray *want, const char *what)
{
    g_assert_cmpint(PQntuples(r), ==, 1);
    if ((guint)PQgetlength(r, 0, 0) != want->len ||
        (want->len > 0 && memcmp(PQgetvalue(r, 0, 0), want->data, want->len) != 0))
        g_error("%s: %d bytes that differ from the %u NFS READ returned", what,
                PQgetlength(r, 0, 0), want->len);
}

static void test_agree(void)
{
    nr_ctx *c = pt_open(NULL);
    char *top = vt_make_tree(c, "views");
    char *slash_top = g_strconcat("/", top, NULL);
    GPtrArray *first = vt_nfs_tree(c, top, true);
    GPtrArray *nfs = vt_nfs_tree(c, top, false);
    PGconn *db = vt_db();
    const char *p1[] = {slash_top};
    PGresult *r;

    g_assert_cmpuint(nfs->len, ==, 15);
    g_assert_cmpuint(first->len, ==, nfs->len);
    for (guint i = 0; i < nfs->len; i++) {
        vt_entry *e = nfs->pdata[i], *f = first->pdata[i];
        g_assert_cmpstr(e->path, ==, f->path);
        e->target = g_strdup(f->target);
    }
    r = vt_q(db, "SELECT " VT_COLS " FROM pgnfs.tree($1)", 1, p1, false);
    vt_same(r, nfs, "pgnfs.tree");
    PQclear(r);
    r = vt_q(db,
             "SELECT " VT_COLS " FROM pgnfs.files WHERE path = $1 OR left(path,"
             " length($1) + 1) = $1 || '/'",
             1, p1, false);
    vt_same(r, nfs, "pgnfs.files");
    PQclear(r);
    /* The same path spelled loosely. */
    char *loose = g_strconcat("//", top, "/./", NULL);
    const char *pl[] = {loose};
    r = vt_q(db, "SELECT " VT_COLS " FROM pgnfs.tree($1)", 1, pl, false);
    vt_same(r, nfs, "pgnfs.tree (loose path)");
    PQclear(r);
    g_free(loose);

    /* A hard-linked file: once per path, both with its one inode. */
    r = vt_q(db,
             "SELECT count(*), count(DISTINCT inode), min(nlink) FROM pgnfs.tree($1)"
             " WHERE inode = (SELECT inode FROM pgnfs.files WHERE path = $1 || '/a/mid.bin')",
             1, p1, false);
    g_assert_cmpstr(PQgetvalue(r, 0, 0), ==, "2");
    g_assert_cmpstr(PQgetvalue(r, 0, 1), ==, "1");
    g_assert_cmpstr(PQgetvalue(r, 0, 2), ==, "2");
    PQclear(r);

    /* Directories: pgnfs.dirs has exactly NFS's. */
    r = vt_q(db,
             "SELECT d.path, d.inode, d.mode, d.nlink FROM pgnfs.dirs d WHERE d.path = $1"
             " OR left(d.path, length($1) + 1) = $1 || '/'",
             1, p1, false);
    guint ndirs = 0;
    for (guint i = 0; i < nfs->len; i++)
        ndirs += ((vt_entry *)nfs->pdata[i])->a.type == NF3DIR;
    g_assert_cmpuint((guint)PQntuples(r), ==, ndirs);
    g_assert_cmpuint(ndirs, ==, 5);
    for (int i = 0; i < PQntuples(r); i++) {
        bool found = false;
        for (guint j = 0; j < nfs->len; j++) {
            vt_entry *e = nfs->pdata[j];
            if (strcmp(e->path, PQgetvalue(r, i, 0)) != 0)
                continue;
            found = true;
            g_assert_cmpint(e->a.type, ==, NF3DIR);
            g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 1), NULL, 10), ==, e->a.fileid);
            g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 2), NULL, 10), ==, e->a.mode);
            g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 3), NULL, 10), ==, e->a.nlink);
        }
        g_assert_true(found);
    }
    PQclear(r);

    /* Contents: pgnfs.content, cat(lookup()), path() for every file. */
    guint nfiles = 0;
    for (guint i = 0; i < first->len; i++) {
        vt_entry *e = first->pdata[i];
        const char *pp[] = {e->path};
        char ino[32];
        snprintf(ino, sizeof ino, "%" G_GUINT64_FORMAT, e->a.fileid);
        const char *pi[] = {ino};

        r = vt_q(db, "SELECT pgnfs.lookup($1)", 1, pp, false);
        g_assert_cmpstr(PQgetvalue(r, 0, 0), ==, ino);
        PQclear(r);
        r = vt_q(db,
                 "SELECT pgnfs.path($1::int8) = ANY (array_agg(f.path))"
                 " FROM pgnfs.files f WHERE f.inode = $1::int8",
                 1, pi, false);
        g_assert_cmpstr(PQgetvalue(r, 0, 0), ==, "t");
        PQclear(r);
        if (e->a.type != NF3REG)
            continue;
        nfiles++;
        g_assert_cmpuint(e->data->len, ==, e->a.size);
        r = vt_q(db,
                 "SELECT coalesce(string_agg(data, ''::bytea ORDER BY \"offset\"), '')"
                 " FROM pgnfs.content WHERE path = $1",
                 1, pp, true);
        vt_same_bytes(r, e->data, e->path);
        PQclear(r);
        r = vt_q(db, "SELECT pgnfs.cat(pgnfs.lookup($1))", 1, pp, true);
        vt_same_bytes(r, e->data, e->path);
        PQclear(r);
        /* Chunks are in order, contiguous, and none past the size. */
        r = vt_q(db,
                 "SELECT count(*) FILTER (WHERE \"offset\" <> s), max(\"offset\" +"
                 " length(data)) FROM (SELECT \"offset\", data, coalesce(sum(length(data))"
                 " OVER (ORDER BY \"offset\" ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),"
                 " 0) AS s FROM pgnfs.chunks(pgnfs.lookup($1))) x",
                 1, pp, false);
        g_assert_cmpstr(PQgetvalue(r, 0, 0), ==, "0");
        if (e->a.size)
            g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, 0, 1), NULL, 10), ==, e->a.size);
        PQclear(r);
    }
    g_assert_cmpuint(nfiles, ==, 8);
    /* Not a directory, or no such path: nothing. */
    char *notdir = g_strconcat(slash_top, "/a/small.txt", NULL);
    char *none = g_strconcat(slash_top, "/nothing/here", NULL);
    const char *pn[] = {notdir, none};
    r = vt_q(db,
             "SELECT (SELECT count(*) FROM pgnfs.tree($1)), (SELECT count(*) FROM"
             " pgnfs.tree($2)), pgnfs.lookup($2) IS NULL, pgnfs.lookup($1 || '/x') IS NULL",
             2, pn, false);
    g_assert_cmpstr(PQgetvalue(r, 0, 0), ==, "0");
    g_assert_cmpstr(PQgetvalue(r, 0, 1), ==, "0");
    g_assert_cmpstr(PQgetvalue(r, 0, 2), ==, "t");
    g_assert_cmpstr(PQgetvalue(r, 0, 3), ==, "t");
    PQclear(r);
    g_free(notdir);
    g_free(none);

    PQfinish(db);
    g_ptr_array_free(first, TRUE);
    g_ptr_array_free(nfs, TRUE);
    g_free(slash_top);
    g_free(top);
    nr_close(c);
}

/* The query of the README: files with the same content, by hash. */
static const char vt_dups_sql[] =
    "SELECT encode(h, 'hex'), size, array_agg(path ORDER BY path)"
    "  FROM (SELECT f.path, f.size, pgnfs.sha256(f.inode) AS h, f.inode"
    "          FROM pgnfs.tree($1) f"
    "         WHERE f.type = 'file' AND f.size > 0"
    "           AND f.size IN (SELECT size FROM pgnfs.tree($1) WHERE type = 'file'"
    "                           GROUP BY size HAVING count(DISTINCT inode) > 1)) x"
    " GROUP BY h, size HAVING count(DISTINCT inode) > 1 ORDER BY size";

static void test_duplicates(void)
{
    nr_ctx *c = pt_open(NULL);
    char *top = g_strdup_printf("dups-%d", (int)getpid());
    char *slash_top = g_strconcat("/", top, NULL);
    nr_fh t = pt_mkdir(c, &pt.root, top, 0755);
    nr_fh d = pt_mkdir(c, &t, "d", 0755);
    LINK3res ln;

    /* Two copies of one content (one across several chunks), a hard link
     * of one (the same file, no duplicate), a file of the same size but
     * other bytes, and one copy of another content. */
    vt_file(c, &t, "one", 70000, 11);
    nr_fh two = vt_file(c, &d, "two", 70000, 11);
    pt_ok(c, nr_link(c, &two, &t, "two-link", &ln));
    vt_file(c, &t, "same-size", 70000, 12);
    vt_file(c, &t, "x1", 10, 13);
    vt_file(c, &d, "x2", 10, 13);
    vt_file(c, &d, "x3", 10, 13);
    vt_file(c, &t, "single", 5, 14);

    PGconn *db = vt_db();
    const char *p1[] = {slash_top};
    PGresult *r = vt_q(db, vt_dups_sql, 1, p1, false);
    g_assert_cmpint(PQntuples(r), ==, 2);
    char *want10 = g_strdup_printf("{%s/d/x2,%s/d/x3,%s/x1}", slash_top, slash_top, slash_top);
    char *want70 =
        g_strdup_printf("{%s/d/two,%s/one,%s/two-link}", slash_top, slash_top, slash_top);
    g_assert_cmpstr(PQgetvalue(r, 0, 1), ==, "10");
    g_assert_cmpstr(PQgetvalue(r, 0, 2), ==, want10);
    g_assert_cmpstr(PQgetvalue(r, 1, 1), ==, "70000");
    g_assert_cmpstr(PQgetvalue(r, 1, 2), ==, want70);
    PQclear(r);
    /* The hash is the content's. */
    char *x1 = g_strconcat(slash_top, "/x1", NULL);
    const char *px[] = {x1};
    r = vt_q(db,
             "SELECT pgnfs.sha256(pgnfs.lookup($1)) = sha256(pgnfs.cat(pgnfs.lookup($1))),"
             " length(pgnfs.cat(pgnfs.lookup($1)))",
             1, px, false);
    g_assert_cmpstr(PQgetvalue(r, 0, 0), ==, "t");
    g_assert_cmpstr(PQgetvalue(r, 0, 1), ==, "10");
    PQclear(r);
    g_free(x1);
    g_free(want10);
    g_free(want70);
    PQfinish(db);
    g_free(slash_top);
    g_free(top);
    nr_close(c);
}

/* Run `pgnfs sql --read-only --conninfo CI -At -c SQL`; its stdout (g_free)
 * and exit status. */
static char *vt_pgnfs_sql_ro(const char *sql, int *status)
{
    const char *argv[] = {
        tl_pgnfs_bin(), "sql", "--conninfo", tl_server_conninfo(pt.server), "--read-only", "-At",
        "-c",           sql,   NULL};
    char *out = NULL;
    GError *err = NULL;
    int wait = 0;

    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL,
                      &wait, &err))
        g_error("cannot run pgnfs: %s", err->message);
    *status = WIFEXITED(wait) ? WEXITSTATUS(wait) : -1;
    return out;
}

static void test_readonly(void)
{
    nr_ctx *c = pt_open(NULL);
    char *top = g_strdup_printf("ro-%d", (int)getpid());
    nr_fh t = pt_mkdir(c, &pt.root, top, 0755);
    vt_file(c, &t, "f", 3000, 21);
    char *reader = NULL;

    g_assert_cmpint(dbfs_views_reader(tl_server_conninfo(pt.server), &reader), ==, 0);
    PGconn *ro = PQconnectdb(reader);
    if (PQstatus(ro) != CONNECTION_OK)
        g_error("cannot connect as the read-only role: %s", PQerrorMessage(ro));
    PGconn *db = vt_db();
    PGresult *r =
        vt_q(db, "SELECT count(*), max(inode), sum(size) FROM pgnfs.files", 0, NULL, false);
    char *count = g_strdup(PQgetvalue(r, 0, 0));
    char *maxino = g_strdup(PQgetvalue(r, 0, 1));
    char *sum = g_strdup(PQgetvalue(r, 0, 2));
    PQclear(r);

    /* It reads the views and functions, unqualified too. */
    r = vt_q(ro, "SELECT current_user, count(*), max(inode), sum(size) FROM files", 0, NULL, false);
    g_assert_cmpstr(PQgetvalue(r, 0, 0), ==, "pgnfs_ro");
    g_assert_cmpstr(PQgetvalue(r, 0, 1), ==, count);
    g_assert_cmpstr(PQgetvalue(r, 0, 2), ==, maxino);
    g_assert_cmpstr(PQgetvalue(r, 0, 3), ==, sum);
    PQclear(r);
    char *path = g_strconcat("/", top, "/f", NULL);
    const char *pp[] = {path};
    r = vt_q(ro,
             "SELECT length(pgnfs.cat(pgnfs.lookup($1))), (SELECT count(*) FROM content"
             " WHERE path = $1), pgnfs.path(pgnfs.lookup($1)) = $1",
             1, pp, false);
    g_assert_cmpstr(PQgetvalue(r, 0, 0), ==, "3000");
    g_assert_cmpstr(PQgetvalue(r, 0, 1), ==, "1");
    g_assert_cmpstr(PQgetvalue(r, 0, 2), ==, "t");
    PQclear(r);

    /* Even with read-write transactions asked for, every change is
     * refused by privilege (42501), and leaves no trace. */
    PQclear(vt_q(ro, "SET default_transaction_read_only = off", 0, NULL, false));
    static const char *const refused[] = {
        "SELECT * FROM fileatt LIMIT 1",
        "SELECT * FROM allfiles LIMIT 1",
        "INSERT INTO naming (parent, name, inode) VALUES (1, 'x', 1)",
        "UPDATE fileatt SET mode = 511",
        "DELETE FROM naming",
        "DELETE FROM allfiles",
        "TRUNCATE fileatt",
        "UPDATE pgnfs_fs SET chunk_size = 1024",
        "SELECT pgnfs_data_drop(2)",
        "SELECT pgnfs_create(1, 0, 'new', 0, 0, '{}', 0, 1::int2, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, "
        "0, 0)",
        "SELECT pgnfs_views_roles()",
        "DROP VIEW pgnfs.files",
        "CREATE VIEW pgnfs.mine AS SELECT 1",
        "CREATE OR REPLACE FUNCTION pgnfs.lookup(p text) RETURNS bigint LANGUAGE sql"
        " AS 'SELECT 1::int8'",
        "CREATE TABLE public.mine (a int)",
        "ALTER ROLE pgnfs_ro SUPERUSER",
        "CREATE ROLE mine",
        NULL, /* SET ROLE to the owner, below */
    };
    r = vt_q(db, "SELECT format('SET ROLE %I', current_user)", 0, NULL, false);
    char *setrole = g_strdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        const char *sql = refused[i] ? refused[i] : setrole;
        char *state = vt_fails(ro, sql);
        if (!state)
            g_error("the read-only role could run: %s", sql);
        if (strcmp(state, "42501") != 0)
            g_error("%s: SQLSTATE %s, not a privilege error", sql, state);
        g_free(state);
    }
    g_free(setrole);
    char *state = vt_fails(ro, "SELECT 1");
    g_assert_null(state);
    r = vt_q(db, "SELECT count(*), max(inode), sum(size) FROM pgnfs.files", 0, NULL, false);
    g_assert_cmpstr(PQgetvalue(r, 0, 0), ==, count);
    g_assert_cmpstr(PQgetvalue(r, 0, 1), ==, maxino);
    g_assert_cmpstr(PQgetvalue(r, 0, 2), ==, sum);
    PQclear(r);
    /* The file is still whole through NFS. */
    nr_fh f = pt_lookup(c, &t, "f");
    GByteArray *bytes = pt_read_all(c, &f);
    g_assert_cmpuint(bytes->len, ==, 3000);
    g_byte_array_unref(bytes);

    /* pgnfs sql --read-only: reads; its changes fail. */
    int status;
    char *out = vt_pgnfs_sql_ro("SELECT current_user || ' ' || count(*) FROM pgnfs.files", &status);
    char *want = g_strdup_printf("pgnfs_ro %s\n", count);
    g_assert_cmpint(status, ==, 0);
    g_assert_cmpstr(out, ==, want);
    g_free(out);
    g_free(want);
    out = vt_pgnfs_sql_ro("DELETE FROM naming", &status);
    g_assert_cmpint(status, !=, 0);
    g_free(out);
    out = vt_pgnfs_sql_ro("RESET ROLE; SET default_transaction_read_only = off;"
                          " DELETE FROM naming",
                          &status);
    g_assert_cmpint(status, !=, 0);
    g_free(out);
    r = vt_q(db, "SELECT count(*) FROM pgnfs.files", 0, NULL, false);
    g_assert_cmpstr(PQgetvalue(r, 0, 0), ==, count);
    PQclear(r);

    PQfinish(ro);
    PQfinish(db);
    g_free(path);
    g_free(count);
    g_free(maxino);
    g_free(sum);
    g_free(reader);
    g_free(top);
    nr_close(c);
}

int main(int argc, char **argv)
{
    pt_init(&argc, &argv);
    if (!pt.server) {
        g_printerr("test_views needs its own server (not PGNFS_TEST_NFS_PORT)\n");
        return 77;
    }
    pt_add("/views/agree", test_agree);
    pt_add("/views/duplicates", test_duplicates);
    pt_add("/views/readonly", test_readonly);
    return pt_run();
}
