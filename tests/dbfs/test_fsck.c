/*
 * test_fsck.c -- dbfs_fsck (schema/functions/90_fsck.sql): every invariant
 * broken by SQL on a fresh file system, found by the check, repaired by
 * --repair, and the file system clean and usable afterwards. Every case
 * runs on three file systems: layout single (binary), inversion (binary),
 * and hybrid with a 16 KiB threshold in base64, chunk size 4 KiB, so
 * files cross chunks, tables and encodings.
 *
 * bad_names: names no client can use (a NUL or '/' byte, ".", "..") put
 * there by SQL are reported, renamed to usable unique names in place, and
 * the report says old -> new.
 *
 * After a repair the file system is read through a new dbfs (dbfs may
 * cache what it read before the SQL changed it underneath).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "td.h"
#include "testlib.h"

typedef struct {
    const char *name;
    dbfs_storage storage;
    dbfs_encoding encoding;
} fk_layout;

static const fk_layout fk_layouts[] = {
    {"single", DBFS_STORAGE_SINGLE, DBFS_ENC_BINARY},
    {"inversion", DBFS_STORAGE_INVERSION, DBFS_ENC_BINARY},
    {"hybrid-base64", DBFS_STORAGE_HYBRID, DBFS_ENC_BASE64},
};

enum { FK_CHUNK = 4096, FK_THRESHOLD = 16384 };

static void fk_open(td_fs *t, const fk_layout *l)
{
    dbfs_mkfs_opts o = {.root_mode = 0777,
                        .storage = l->storage,
                        .encoding = l->encoding,
                        .chunk_size = FK_CHUNK,
                        .hybrid_threshold = FK_THRESHOLD};
    dbfs_config cfg = {0};

    memset(t, 0, sizeof *t);
    t->conninfo = tl_fresh_db();
    td_rc(dbfs_mkfs(t->conninfo, &o), 0);
    cfg.conninfo = t->conninfo;
    cfg.relatime = true;
    td_rc(dbfs_open(&cfg, &t->fs), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c), 0);
    t->root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t->fs)->root_gen, 0};
}

/* Run SQL (printf-built: test code) as the superuser; the first column of
 * the first row as a number (0 if none). */
static long G_GNUC_PRINTF(2, 3) fk_sql(const td_fs *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *sql = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    PGconn *pg = PQconnectdb(t->conninfo);
    long v = 0;

    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    PGresult *r = PQexec(pg, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
        g_error("%s: %s", sql, PQresultErrorMessage(r));
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
        v = atol(PQgetvalue(r, 0, 0));
    PQclear(r);
    PQfinish(pg);
    g_free(sql);
    return v;
}

/* What one fsck run reported: "check:ino" per problem, and the counts. */
typedef struct {
    GPtrArray *seen; /* of g_malloc'd "check:ino" */
    GString *text;   /* every line, for failure messages */
    dbfs_fsck_report rep;
} fk_result;

static void fk_problem(void *arg, unsigned pass, const dbfs_fsck_problem *p)
{
    fk_result *r = arg;

    if (pass == 1)
        g_ptr_array_add(r->seen, g_strdup_printf("%s:%llu", p->check, (unsigned long long)p->ino));
    g_string_append_printf(r->text, "  pass %u %s %llu: %s%s\n", pass, p->check,
                           (unsigned long long)p->ino, p->detail, p->repaired ? "" : " (left)");
}

static fk_result *fk_run(td_fs *t, bool repair)
{
    fk_result *r = g_new0(fk_result, 1);
    dbfs_fsck_opts opts = {.repair = repair, .problem = fk_problem, .arg = r};

    r->seen = g_ptr_array_new_with_free_func(g_free);
    r->text = g_string_new(NULL);
    td_rc(dbfs_fsck(t->fs, &opts, &r->rep), 0);
    return r;
}

static void fk_free(fk_result *r)
{
    g_ptr_array_unref(r->seen);
    g_string_free(r->text, TRUE);
    g_free(r);
}

static bool fk_has(const fk_result *r, const char *check, uint64_t ino)
{
    char *want = g_strdup_printf("%s:%llu", check, (unsigned long long)ino);
    bool found = false;

    for (guint i = 0; i < r->seen->len && !found; i++)
        found = strcmp(g_ptr_array_index(r->seen, i), want) == 0;
    g_free(want);
    return found;
}

#define fk_assert_has(r, check, ino)                                                               \
    do {                                                                                           \
        if (!fk_has((r), (check), (ino)))                                                          \
            g_error("fsck did not report %s for inode %llu; it said:\n%s", (check),                \
                    (unsigned long long)(ino), (r)->text->str);                                    \
    } while (0)

/* The file system is clean. */
static void fk_assert_clean(td_fs *t)
{
    fk_result *r = fk_run(t, false);

    if (r->rep.found != 0)
        g_error("fsck found %lu problems in a file system that should be clean:\n%s", r->rep.found,
                r->text->str);
    fk_free(r);
}

/* Check (each problem in want is found, nothing changes), then repair
 * (all repaired, nothing left), then check again (clean). */
static void fk_check_and_repair(td_fs *t, const char *const *checks, const uint64_t *inos, size_t n)
{
    fk_result *r = fk_run(t, false);
    for (size_t i = 0; i < n; i++)
        fk_assert_has(r, checks[i], inos[i]);
    g_assert_cmpuint(r->rep.repaired, ==, 0);
    g_assert_cmpuint(r->rep.left, ==, r->rep.found);
    unsigned long found = r->rep.found;
    fk_free(r);
    /* Looking changed nothing. */
    r = fk_run(t, false);
    g_assert_cmpuint(r->rep.found, ==, found);
    fk_free(r);

    r = fk_run(t, true);
    for (size_t i = 0; i < n; i++)
        fk_assert_has(r, checks[i], inos[i]);
    if (r->rep.repaired != r->rep.found || r->rep.left != 0)
        g_error("repair: %lu found, %lu repaired, %lu left:\n%s", r->rep.found, r->rep.repaired,
                r->rep.left, r->text->str);
    g_test_message("repaired:\n%s", r->text->str);
    fk_free(r);
    fk_assert_clean(t);
}

/* A new dbfs on t's database (nothing cached from before the repair). */
static void fk_reopen(const td_fs *t, td_fs *out)
{
    dbfs_config cfg = {.conninfo = t->conninfo, .relatime = true};

    memset(out, 0, sizeof *out);
    out->conninfo = g_strdup(t->conninfo);
    td_rc(dbfs_open(&cfg, &out->fs), 0);
    td_rc(dbfs_conn_open(out->fs, &out->c), 0);
    out->root = t->root;
}

static void fk_pattern(unsigned char *buf, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)((i * 131 + seed * 7) >> 2);
}

/* A file of n bytes of pattern seed. */
static dbfs_attr fk_file(td_fs *t, dbfs_fh dir, const char *name, size_t n, unsigned seed)
{
    dbfs_cred root = td_root();
    dbfs_attr a = td_create(t, &root, dir, name, 0644);
    unsigned char *buf = g_malloc(n ? n : 1);

    fk_pattern(buf, n, seed);
    for (size_t off = 0; off < n; off += 65536)
        td_write(t, &root, td_fh(&a), off, buf + off, (uint32_t)MIN(65536, n - off));
    g_free(buf);
    return td_getattr(t, td_fh(&a));
}

/* The file at dir/name holds n bytes of pattern seed (through a new dbfs). */
static void fk_assert_content(const td_fs *t, dbfs_fh dir, const char *name, size_t n,
                              unsigned seed)
{
    td_fs u;
    dbfs_cred root = td_root();

    fk_reopen(t, &u);
    dbfs_attr a = td_lookup(&u, &root, dir, name);
    g_assert_cmpuint(a.size, ==, n);
    unsigned char *want = g_malloc(n + 1), *got = g_malloc(n + 1);
    fk_pattern(want, n, seed);
    if (n)
        td_read(&u, &root, td_fh(&a), 0, got, (uint32_t)n);
    g_assert_cmpmem(got, n, want, n);
    g_free(want);
    g_free(got);
    td_close(&u);
}

/* A small tree: /d (dir) /d/sub (dir) /d/f (file, 3 chunks) /big (a file
 * over the hybrid threshold) /l (symlink) /h = hard link of /d/f. */
typedef struct {
    dbfs_attr d, sub, f, big;
} fk_tree;

static fk_tree fk_populate(td_fs *t)
{
    dbfs_cred root = td_root();
    fk_tree tr;
    dbfs_attr obj;
    dbfs_attr_opt fa;
    dbfs_wcc wcc;
    dbfs_sattr sa = {0};

    tr.d = td_mkdir(t, &root, t->root, "d", 0755);
    tr.sub = td_mkdir(t, &root, td_fh(&tr.d), "sub", 0755);
    tr.f = fk_file(t, td_fh(&tr.d), "f", 3 * FK_CHUNK - 100, 1);
    tr.big = fk_file(t, t->root, "big", FK_THRESHOLD * 2 + 5, 2);
    td_rc(dbfs_symlink(t->c, &root, t->root, "l", "d/f", &sa, &obj, &wcc), 0);
    td_rc(dbfs_link(t->c, &root, td_fh(&tr.f), t->root, "h", &fa, &wcc), 0);
    tr.f = td_getattr(t, td_fh(&tr.f));
    return tr;
}

/* ---- the cases ------------------------------------------------------------------ */

static void case_clean(const fk_layout *l)
{
    td_fs t;

    fk_open(&t, l);
    fk_assert_clean(&t);
    fk_populate(&t);
    fk_assert_clean(&t);
    /* A repair of a clean file system changes nothing. */
    fk_result *r = fk_run(&t, true);
    g_assert_cmpuint(r->rep.found, ==, 0);
    fk_free(r);
    td_close(&t);
}

static void case_nlink(const fk_layout *l)
{
    td_fs t;

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    fk_sql(&t, "UPDATE fileatt SET nlink = 7 WHERE inode = %llu", (unsigned long long)tr.f.ino);
    fk_sql(&t, "UPDATE fileatt SET nlink = 2 WHERE inode = %llu", (unsigned long long)tr.d.ino);
    fk_sql(&t, "UPDATE fileatt SET nlink = 9 WHERE inode = 1");
    const char *checks[] = {"nlink", "nlink", "nlink"};
    const uint64_t inos[] = {tr.f.ino, tr.d.ino, 1};
    fk_check_and_repair(&t, checks, inos, 3);
    g_assert_cmpint(
        fk_sql(&t, "SELECT nlink FROM fileatt WHERE inode = %llu", (unsigned long long)tr.f.ino),
        ==, 2);
    g_assert_cmpint(
        fk_sql(&t, "SELECT nlink FROM fileatt WHERE inode = %llu", (unsigned long long)tr.d.ino),
        ==, 3);
    g_assert_cmpint(fk_sql(&t, "SELECT nlink FROM fileatt WHERE inode = 1"), ==, 3);
    td_close(&t);
}

static void case_orphans(const fk_layout *l)
{
    td_fs t, u;
    dbfs_cred root = td_root();

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    /* A file with data and a directory with contents lose their names. */
    fk_sql(&t, "DELETE FROM naming WHERE inode = %llu", (unsigned long long)tr.big.ino);
    fk_sql(&t, "DELETE FROM naming WHERE inode = %llu", (unsigned long long)tr.d.ino);
    const char *checks[] = {"orphans", "orphans"};
    const uint64_t inos[] = {tr.big.ino, tr.d.ino};
    fk_check_and_repair(&t, checks, inos, 2);

    /* Both are in /lost+found, whole. */
    fk_reopen(&t, &u);
    dbfs_attr lf = td_lookup(&u, &root, u.root, "lost+found");
    g_assert_cmpint(lf.type, ==, DBFS_DIR);
    g_assert_cmpuint(lf.mode, ==, 0700);
    char name[32];
    snprintf(name, sizeof name, "#%llu", (unsigned long long)tr.big.ino);
    fk_assert_content(&t, td_fh(&lf), name, FK_THRESHOLD * 2 + 5, 2);
    snprintf(name, sizeof name, "#%llu", (unsigned long long)tr.d.ino);
    dbfs_attr d = td_lookup(&u, &root, td_fh(&lf), name);
    g_assert_cmpuint(d.ino, ==, tr.d.ino);
    fk_assert_content(&t, td_fh(&d), "f", 3 * FK_CHUNK - 100, 1);
    dbfs_attr sub = td_lookup(&u, &root, td_fh(&d), "sub");
    dbfs_attr up = td_lookup(&u, &root, td_fh(&sub), "..");
    g_assert_cmpuint(up.ino, ==, tr.d.ino);
    g_assert_cmpuint(td_getattr(&u, td_fh(&lf)).nlink, ==, 3);
    td_close(&u);
    td_close(&t);
}

static void case_dangling_names(const fk_layout *l)
{
    td_fs t;

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    /* The file /big disappears under its name (foreign keys off), taking
     * its table with it when it has one; a name appears inside a regular
     * file; a name leads to the root. */
    fk_sql(&t,
           "SET session_replication_role = replica;"
           " DELETE FROM fileatt WHERE inode = %llu;"
           " INSERT INTO naming (parent, name, inode) VALUES (%llu, 'x', %llu);"
           " INSERT INTO naming (parent, name, inode) VALUES (%llu, 'up', 1)",
           (unsigned long long)tr.big.ino, (unsigned long long)tr.f.ino,
           (unsigned long long)tr.sub.ino, (unsigned long long)tr.d.ino);
    const char *checks[] = {"names", "names", "names"};
    const uint64_t inos[] = {tr.big.ino, tr.sub.ino, 1};
    fk_check_and_repair(&t, checks, inos, 3);
    g_assert_cmpint(fk_sql(&t, "SELECT count(*) FROM naming WHERE inode = %llu",
                           (unsigned long long)tr.big.ino),
                    ==, 0);
    g_assert_cmpint(fk_sql(&t, "SELECT count(*) FROM naming WHERE inode = 1"), ==, 0);
    /* The data of the vanished file went too, wherever it was. */
    g_assert_cmpint(fk_sql(&t, "SELECT count(*) FROM pgnfs_fsck_chunks() WHERE ino = %llu",
                           (unsigned long long)tr.big.ino),
                    ==, 0);
    g_assert_cmpint(fk_sql(&t, "SELECT count(*) FROM pg_class WHERE relname = 'inv%llu'",
                           (unsigned long long)tr.big.ino),
                    ==, 0);
    fk_assert_content(&t, td_fh(&tr.d), "f", 3 * FK_CHUNK - 100, 1);
    td_close(&t);
}

static void case_data_eof_and_used(const fk_layout *l)
{
    td_fs t;

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    /* /d/f claims 5000 bytes but stores ~12 KiB; /big claims to use 1234. */
    fk_sql(&t, "UPDATE fileatt SET size = 5000 WHERE inode = %llu", (unsigned long long)tr.f.ino);
    fk_sql(&t, "UPDATE fileatt SET used = 1234 WHERE inode = %llu", (unsigned long long)tr.big.ino);
    fk_sql(&t, "UPDATE fileatt SET used = 99 WHERE inode = %llu", (unsigned long long)tr.sub.ino);
    const char *checks[] = {"data-eof", "used", "used"};
    const uint64_t inos[] = {tr.f.ino, tr.big.ino, tr.sub.ino};
    fk_check_and_repair(&t, checks, inos, 3);
    /* The first 5000 bytes are intact; extending reads zeros past them. */
    fk_assert_content(&t, td_fh(&tr.d), "f", 5000, 1);
    td_fs u;
    dbfs_cred root = td_root();
    fk_reopen(&t, &u);
    dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = 3 * FK_CHUNK};
    dbfs_wcc wcc;
    td_rc(dbfs_setattr(u.c, &root, td_fh(&tr.f), &sa, NULL, &wcc), 0);
    unsigned char tail[FK_CHUNK], zeros[FK_CHUNK] = {0};
    td_read(&u, &root, td_fh(&tr.f), 5000, tail, sizeof tail);
    g_assert_cmpmem(tail, sizeof tail, zeros, sizeof zeros);
    td_close(&u);
    fk_assert_clean(&t);
    td_close(&t);
}

static void case_data_orphans(const fk_layout *l)
{
    td_fs t;

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    /* Chunks of an inode that does not exist, and of a directory. */
    fk_sql(&t,
           "INSERT INTO allfiles (inode, chunk, data) VALUES (987654, 0, 'abc'),"
           " (987654, 3, 'def'), (%llu, 0, 'dir data')",
           (unsigned long long)tr.sub.ino);
    /* A per-file table of no file. */
    fk_sql(&t, "CREATE TABLE inv987655 (chunk bigint PRIMARY KEY, data bytea NOT NULL);"
               " INSERT INTO inv987655 VALUES (0, 'zzz')");
    const char *checks[] = {"data-orphans", "data-orphans", "data-tables"};
    const uint64_t inos[] = {987654, tr.sub.ino, 987655};
    fk_check_and_repair(&t, checks, inos, 3);
    g_assert_cmpint(fk_sql(&t, "SELECT count(*) FROM allfiles WHERE inode IN (987654, %llu)",
                           (unsigned long long)tr.sub.ino),
                    ==, 0);
    g_assert_cmpint(fk_sql(&t, "SELECT count(*) FROM pg_class WHERE relname = 'inv987655'"), ==, 0);
    td_close(&t);
}

/* Without the foreign keys (006), plain SQL can delete a file under its
 * name and its locks, and put a name in a directory that does not exist:
 * fsck finds each, and its repair leaves a clean file system. */
static void case_no_keys(const fk_layout *l)
{
    td_fs t;

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    /* A lock and a share reservation on /big, then /big goes (no
     * session_replication_role: nothing refuses this any more). */
    fk_sql(&t,
           "WITH s AS (INSERT INTO pgnfs_nlm_server (name) VALUES ('fsck') RETURNING id),"
           " h AS (INSERT INTO pgnfs_nlm_host (name) VALUES ('\x68') RETURNING id),"
           " o AS (INSERT INTO pgnfs_nlm_owner (host, svid, oh) SELECT h.id, 1, '\x6f' FROM h"
           "       RETURNING id),"
           " sh AS (INSERT INTO pgnfs_nlm_share (inode, owner, access, deny, srv, epoch)"
           "        SELECT %llu, o.id, 1, 0, s.id, 1 FROM o, s)"
           " INSERT INTO pgnfs_nlm_lock (inode, owner, range, excl, srv, epoch, cstate)"
           " SELECT %llu, o.id, int8range(0, 10), true, s.id, 1, 1 FROM o, s",
           (unsigned long long)tr.big.ino, (unsigned long long)tr.big.ino);
    fk_sql(&t, "DELETE FROM fileatt WHERE inode = %llu", (unsigned long long)tr.big.ino);
    fk_sql(&t, "INSERT INTO naming (parent, name, inode) VALUES (999999, 'x', %llu)",
           (unsigned long long)tr.f.ino);
    const char *checks[] = {"names", "lock-orphans", "names"};
    const uint64_t inos[] = {tr.big.ino, tr.big.ino, tr.f.ino};
    fk_check_and_repair(&t, checks, inos, 3);
    g_assert_cmpint(fk_sql(&t, "SELECT count(*) FROM pgnfs_nlm_lock"), ==, 0);
    g_assert_cmpint(fk_sql(&t, "SELECT count(*) FROM pgnfs_nlm_share"), ==, 0);
    g_assert_cmpint(fk_sql(&t, "SELECT count(*) FROM naming WHERE inode IN (%llu, %llu)",
                           (unsigned long long)tr.big.ino, (unsigned long long)tr.f.ino),
                    ==, 2); /* d/f and h stay */
    fk_assert_content(&t, td_fh(&tr.d), "f", 3 * FK_CHUNK - 100, 1);
    td_close(&t);
}

/* Values fileatt's CHECK constraints refused before 006. */
static void case_attributes(const fk_layout *l)
{
    td_fs t;

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    unsigned long long lnk =
        (unsigned long long)fk_sql(&t, "SELECT inode FROM naming WHERE parent = 1 AND name = 'l'");
    fk_sql(&t, "UPDATE fileatt SET mode = 70000 WHERE inode = %llu", (unsigned long long)tr.f.ino);
    fk_sql(&t, "UPDATE fileatt SET uid = -1 WHERE inode = %llu", (unsigned long long)tr.sub.ino);
    fk_sql(&t, "UPDATE fileatt SET size = -5 WHERE inode = %llu", (unsigned long long)tr.big.ino);
    fk_sql(&t, "UPDATE fileatt SET type = 9 WHERE inode = %llu", (unsigned long long)tr.d.ino);
    fk_sql(&t, "UPDATE fileatt SET target = NULL WHERE inode = %llu", lnk);
    const char *checks[] = {"attributes", "attributes", "attributes", "attributes", "attributes"};
    const uint64_t inos[] = {tr.f.ino, tr.sub.ino, tr.big.ino, tr.d.ino, lnk};
    fk_check_and_repair(&t, checks, inos, 5);
    g_assert_cmpint(
        fk_sql(&t, "SELECT mode FROM fileatt WHERE inode = %llu", (unsigned long long)tr.f.ino), ==,
        70000 & 07777);
    g_assert_cmpint(
        fk_sql(&t, "SELECT uid FROM fileatt WHERE inode = %llu", (unsigned long long)tr.sub.ino),
        ==, 65534);
    g_assert_cmpint(
        fk_sql(&t, "SELECT type FROM fileatt WHERE inode = %llu", (unsigned long long)tr.d.ino), ==,
        DBFS_DIR);
    g_assert_cmpint(fk_sql(&t, "SELECT size FROM fileatt WHERE inode = %llu", lnk), ==, 0);
    /* /big's size is where its data ends, and the data is whole. */
    fk_assert_content(&t, t.root, "big", FK_THRESHOLD * 2 + 5, 2);
    fk_assert_content(&t, td_fh(&tr.d), "f", 3 * FK_CHUNK - 100, 1);
    td_close(&t);
}

/* The placement of a file's data: pgnfs_filetab and inv<inode> disagree. */
static void case_data_tables(const fk_layout *l)
{
    td_fs t;

    if (l->storage == DBFS_STORAGE_SINGLE) {
        g_test_skip("the single layout has no per-file tables");
        return;
    }
    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    /* /big is in its own table in both layouts. */
    g_assert_cmpint(fk_sql(&t, "SELECT count(*) FROM pgnfs_filetab WHERE inode = %llu",
                           (unsigned long long)tr.big.ino),
                    ==, 1);
    dbfs_attr g = fk_file(&t, t.root, "gone", FK_THRESHOLD + 100, 3);
    fk_sql(&t, "DELETE FROM pgnfs_filetab WHERE inode = %llu", (unsigned long long)tr.big.ino);
    fk_sql(&t, "DROP TABLE inv%llu", (unsigned long long)g.ino);
    const char *checks[] = {"data-tables", "data-tables", "used"};
    const uint64_t inos[] = {tr.big.ino, g.ino, g.ino};
    fk_check_and_repair(&t, checks, inos, 3);
    /* /big is whole again; /gone lost its data (reads zeros, uses none). */
    fk_assert_content(&t, t.root, "big", FK_THRESHOLD * 2 + 5, 2);
    g_assert_cmpint(
        fk_sql(&t, "SELECT used FROM fileatt WHERE inode = %llu", (unsigned long long)g.ino), ==,
        0);
    td_close(&t);
}

static void case_dir_cycle(const fk_layout *l)
{
    td_fs t, u;
    dbfs_cred root = td_root();

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    /* /d/sub becomes the parent of /d: d -> sub -> d, cut off from /. */
    fk_sql(&t, "UPDATE naming SET parent = %llu WHERE inode = %llu", (unsigned long long)tr.sub.ino,
           (unsigned long long)tr.d.ino);
    const char *checks[] = {"dir-cycles"};
    const uint64_t inos[] = {MIN(tr.d.ino, tr.sub.ino)};
    fk_check_and_repair(&t, checks, inos, 1);
    /* The smaller inode (d) is in /lost+found with sub inside it. */
    fk_reopen(&t, &u);
    dbfs_attr lf = td_lookup(&u, &root, u.root, "lost+found");
    char name[32];
    snprintf(name, sizeof name, "#%llu", (unsigned long long)tr.d.ino);
    dbfs_attr d = td_lookup(&u, &root, td_fh(&lf), name);
    dbfs_attr sub = td_lookup(&u, &root, td_fh(&d), "sub");
    g_assert_cmpuint(sub.ino, ==, tr.sub.ino);
    g_assert_cmpuint(td_getattr(&u, td_fh(&d)).nlink, ==, 3);
    td_close(&u);
    fk_assert_content(&t, td_fh(&d), "f", 3 * FK_CHUNK - 100, 1);
    td_close(&t);
}

static void case_dir_links(const fk_layout *l)
{
    td_fs t, u;
    dbfs_cred root = td_root();

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    /* /alias is a second name of /d/sub; /d/sub/loop a name of /d (which
     * makes a cycle through the extra name). */
    fk_sql(&t, "INSERT INTO naming (parent, name, inode) VALUES (1, 'alias', %llu)",
           (unsigned long long)tr.sub.ino);
    fk_sql(&t, "INSERT INTO naming (parent, name, inode) VALUES (%llu, 'loop', %llu)",
           (unsigned long long)tr.sub.ino, (unsigned long long)tr.d.ino);
    const char *checks[] = {"dir-links", "dir-links"};
    const uint64_t inos[] = {tr.sub.ino, tr.d.ino};
    fk_check_and_repair(&t, checks, inos, 2);
    /* The original names stay. */
    fk_reopen(&t, &u);
    dbfs_attr d = td_lookup(&u, &root, u.root, "d");
    g_assert_cmpuint(td_lookup(&u, &root, td_fh(&d), "sub").ino, ==, tr.sub.ino);
    dbfs_attr out;
    dbfs_attr_opt dir;
    td_rc(dbfs_lookup(u.c, &root, u.root, "alias", &out, &dir), -ENOENT);
    td_rc(dbfs_lookup(u.c, &root, td_fh(&tr.sub), "loop", &out, &dir), -ENOENT);
    td_close(&u);
    td_close(&t);
}

/* Give the entry `name` of dir the bytes `hex` (any bytes, by SQL). */
static void fk_rename_raw(td_fs *t, uint64_t dir, const char *name, const char *hex)
{
    g_assert_cmpint(fk_sql(t,
                           "WITH u AS (UPDATE naming SET name = decode('%s', 'hex')"
                           " WHERE parent = %llu AND name = convert_to('%s', 'UTF8') RETURNING 1)"
                           " SELECT count(*) FROM u",
                           hex, (unsigned long long)dir, name),
                    ==, 1);
}

/* Names no client can use, as older versions or SQL could leave them. */
static void case_bad_names(const fk_layout *l)
{
    td_fs t, u;
    dbfs_cred root = td_root();
    char a255[256], hex[2 * 256 + 1];

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    /* Files to rename, and names in the way of the repairs. */
    dbfs_attr q1 = fk_file(&t, td_fh(&tr.d), "q1", 10, 4);
    dbfs_attr q2 = fk_file(&t, td_fh(&tr.d), "q2", 20, 5);
    dbfs_attr hx = fk_file(&t, t.root, "h_x", 30, 6);
    memset(a255, 'a', 255);
    a255[255] = '\0';
    a255[254] = '_';
    dbfs_attr taken = fk_file(&t, t.root, a255, 40, 7); /* 254 'a' and '_' */
    dbfs_attr longf = fk_file(&t, t.root, "long", 50, 8);
    int64_t d_ctime =
        fk_sql(&t, "SELECT ctime FROM fileatt WHERE inode = %llu", (unsigned long long)tr.d.ino);

    fk_rename_raw(&t, tr.d.ino, "f", "6100622f63"); /* "a\0b/c" */
    fk_rename_raw(&t, 1, "big", "2e");              /* "." */
    fk_rename_raw(&t, 1, "l", "2e2e");              /* ".." */
    fk_rename_raw(&t, 1, "h", "682f78");            /* "h/x": "h_x" is taken */
    fk_rename_raw(&t, tr.d.ino, "sub", "73756200"); /* "sub\0" */
    fk_rename_raw(&t, tr.d.ino, "q1", "7100");      /* "q\0" and "q/": both "q_" */
    fk_rename_raw(&t, tr.d.ino, "q2", "712f");
    for (int i = 0; i < 254; i++) /* 254 'a' and a NUL: 255 bytes, its fix taken */
        memcpy(hex + 2 * i, "61", 2);
    memcpy(hex + 2 * 254, "00", 3);
    fk_rename_raw(&t, 1, "long", hex);

    /* Checking finds each, and changes nothing. */
    fk_result *r = fk_run(&t, false);
    const uint64_t inos[] = {tr.f.ino, tr.big.ino, tr.f.ino, tr.sub.ino, q1.ino, q2.ino, longf.ino};
    for (size_t i = 0; i < G_N_ELEMENTS(inos); i++)
        fk_assert_has(r, "bad-names", inos[i]);
    if (r->rep.found != 8)
        g_error("expected 8 bad names, found:\n%s", r->text->str);
    fk_free(r);
    g_assert_cmpint(fk_sql(&t, "SELECT count(*) FROM naming WHERE name = '\\x2e'::bytea"), ==, 1);

    /* Repairing renames each in place and says to what. */
    r = fk_run(&t, true);
    if (r->rep.found != 8 || r->rep.repaired != 8 || r->rep.left != 0)
        g_error("repair: %lu found, %lu repaired, %lu left:\n%s", r->rep.found, r->rep.repaired,
                r->rep.left, r->text->str);
    const char *said[] = {
        "name \"a\\000b/c\" in directory",
        "holds NUL and '/' bytes: renamed to \"a_b_c\"",
        "is \".\" or \"..\": renamed to \"_.\"",
        "renamed to \"_..\"",
        "holds a '/' byte: renamed to \"h_x~1\"",
        "holds a NUL byte: renamed to \"sub_\"",
        "renamed to \"q_\"",
        "renamed to \"q_~1\"",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(said); i++)
        if (!strstr(r->text->str, said[i]))
            g_error("the repair report lacks '%s':\n%s", said[i], r->text->str);
    g_test_message("repaired:\n%s", r->text->str);
    fk_free(r);
    fk_assert_clean(&t);

    /* Every file is found under its new name, whole; the names in the way
     * kept theirs; the directory shows the change. */
    fk_reopen(&t, &u);
    g_assert_cmpuint(td_lookup(&u, &root, td_fh(&tr.d), "a_b_c").ino, ==, tr.f.ino);
    fk_assert_content(&t, td_fh(&tr.d), "a_b_c", 3 * FK_CHUNK - 100, 1);
    fk_assert_content(&t, t.root, "_.", FK_THRESHOLD * 2 + 5, 2);
    g_assert_cmpint(td_lookup(&u, &root, u.root, "_..").type, ==, DBFS_LNK);
    g_assert_cmpuint(td_lookup(&u, &root, u.root, "h_x~1").ino, ==, tr.f.ino);
    g_assert_cmpuint(td_lookup(&u, &root, u.root, "h_x").ino, ==, hx.ino);
    g_assert_cmpuint(td_lookup(&u, &root, td_fh(&tr.d), "sub_").ino, ==, tr.sub.ino);
    g_assert_cmpuint(td_lookup(&u, &root, td_fh(&tr.d), "q_").ino, ==, q1.ino);
    g_assert_cmpuint(td_lookup(&u, &root, td_fh(&tr.d), "q_~1").ino, ==, q2.ino);
    g_assert_cmpuint(td_lookup(&u, &root, u.root, a255).ino, ==, taken.ino);
    char cut[256];
    memset(cut, 'a', 253);
    memcpy(cut + 253, "~1", 3); /* cut to stay within 255 bytes */
    g_assert_cmpuint(td_lookup(&u, &root, u.root, cut).ino, ==, longf.ino);
    fk_assert_content(&t, t.root, cut, 50, 8);
    g_assert_cmpint(td_getattr(&u, td_fh(&tr.f)).nlink, ==, 2);
    g_assert_cmpint(
        fk_sql(&t, "SELECT ctime FROM fileatt WHERE inode = %llu", (unsigned long long)tr.d.ino), >,
        d_ctime);
    td_close(&u);
    td_close(&t);
}

static void case_root(const fk_layout *l)
{
    td_fs t;

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    /* The root is a regular file now, and a file has a wrong nlink: the
     * root cannot be repaired, and then nothing else is either. */
    fk_sql(&t, "UPDATE fileatt SET type = 1 WHERE inode = 1");
    fk_sql(&t, "UPDATE fileatt SET nlink = 5 WHERE inode = %llu", (unsigned long long)tr.f.ino);
    fk_result *r = fk_run(&t, true);
    fk_assert_has(r, "root", 1);
    g_assert_cmpuint(r->rep.repaired, ==, 0);
    g_assert_cmpuint(r->rep.left, ==, r->rep.found);
    fk_free(r);
    g_assert_cmpint(
        fk_sql(&t, "SELECT nlink FROM fileatt WHERE inode = %llu", (unsigned long long)tr.f.ino),
        ==, 5);
    td_close(&t);
}

/* Many problems at once, as a crash or a careless hand might leave them. */
static void case_everything(const fk_layout *l)
{
    td_fs t;

    fk_open(&t, l);
    fk_tree tr = fk_populate(&t);
    fk_sql(&t,
           "SET session_replication_role = replica;"
           " UPDATE fileatt SET nlink = nlink + 3 WHERE type = 2;"
           " UPDATE fileatt SET used = used + 1 WHERE type = 1;"
           " DELETE FROM naming WHERE inode = %llu;"
           " UPDATE fileatt SET size = 10 WHERE inode = %llu;"
           " INSERT INTO allfiles (inode, chunk, data) VALUES (555555, 0, 'x');",
           (unsigned long long)tr.big.ino, (unsigned long long)tr.f.ino);
    fk_result *r = fk_run(&t, true);
    g_assert_cmpuint(r->rep.found, >=, 6);
    if (r->rep.left != 0)
        g_error("left after repair:\n%s", r->text->str);
    fk_free(r);
    fk_assert_clean(&t);
    fk_assert_content(&t, td_fh(&tr.d), "f", 10, 1);
    td_close(&t);
}

typedef void (*fk_case)(const fk_layout *l);

/* One registered case: which, on which layout. */
typedef struct {
    fk_case fn;
    const fk_layout *l;
} fk_reg;

static void fk_dispatch(gconstpointer data)
{
    const fk_reg *c = data;

    c->fn(c->l);
}

int main(int argc, char **argv)
{
    const struct {
        const char *name;
        fk_case fn;
    } cases[] = {
        {"clean", case_clean},
        {"nlink", case_nlink},
        {"orphans", case_orphans},
        {"dangling_names", case_dangling_names},
        {"no_keys", case_no_keys},
        {"attributes", case_attributes},
        {"bad_names", case_bad_names},
        {"data_eof_and_used", case_data_eof_and_used},
        {"data_orphans", case_data_orphans},
        {"data_tables", case_data_tables},
        {"dir_cycle", case_dir_cycle},
        {"dir_links", case_dir_links},
        {"root", case_root},
        {"everything", case_everything},
    };

    g_test_init(&argc, &argv, NULL);
    for (size_t k = 0; k < G_N_ELEMENTS(fk_layouts); k++) {
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
            fk_reg *reg = g_new0(fk_reg, 1);
            reg->fn = cases[i].fn;
            reg->l = &fk_layouts[k];
            char *path = g_strdup_printf("/fsck/%s/%s", fk_layouts[k].name, cases[i].name);
            g_test_add_data_func(path, reg, fk_dispatch);
            g_free(path);
        }
    }
    return g_test_run();
}
