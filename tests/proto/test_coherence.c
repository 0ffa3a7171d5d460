/*
 * test_coherence.c -- the server's caches (stat, naming, chunk buffer) are
 * invisible to clients: two clients of one server, interleaving changes
 * and reads of the same files and directories, see exactly what a server
 * without caches shows.
 *
 * Four servers run side by side: every cache (and the write-back buffer
 * of UNSTABLE writes) on, and all of them off, each with relatime and
 * with noatime (see co_servers). Each scenario
 * runs once against each, in a fresh directory, with two independent
 * clients A and B (two connections of libnfs's raw RPC API, which has no
 * attribute, directory or data cache of its own: every call reaches the
 * server). Every step asserts the exact POSIX result, and records what a
 * client can observe -- statuses, types, modes, nlink, sizes, owners,
 * bytes read, access bits, fileids (numbered in order of first sight, so
 * that the servers' inode numbers need not agree) and whether ctime and
 * mtime moved since the file was last observed (not the times
 * themselves). Every server's record must equal the uncached one line for
 * line. Finally the cached servers' hit counters (metrics) must have
 * moved during the scenario, so that they really answered from their
 * caches. A sixth server is the second frontend of the fifth, on its
 * database with [cache] coherence = shared: there client B talks to the
 * other frontend, so every observation B makes crosses frontends (the
 * close-to-open guarantee of several frontends, issue 19).
 *
 * The scenarios: rename over an existing name (file, file with a second
 * link, directory, across directories); unlink while the other client
 * reads through a handle it holds; truncation and extension while it
 * reads; hard links (nlink and ctime through either name); rmdir and
 * mkdir of the same name; creation of every kind after a negative lookup;
 * chmod seen by the other's GETATTR, ACCESS, READ and LOOKUP; writes
 * (stable and unstable) seen by the other's next READ.
 *
 * NOTES
 *   The cases run one after another, each in a child process (pt_add), so
 *   that the counters read before and after a scenario are its own.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ptest.h"

/* One of the servers. */
typedef struct {
    const char *name; /* "cached", "uncached", ... */
    bool caches;      /* every cache and write-back on, or all off */
    bool relatime;    /* [storage] relatime; false = noatime */
    /* [cache] coherence = shared, without write-back: client B talks to
     * the next server (the peer), a second frontend on this one's
     * database, so every change A makes must reach B's frontend's caches
     * (UNSTABLE data too: with no write-back buffer it is stored at once). */
    bool shared;
    bool peer; /* that second frontend: runs no scenario of its own */
    tl_server *server;
    unsigned port;
    unsigned metrics_port;
    nr_fh root;
} co_server;

/*
 * Two pairs: with relatime a READ right after a change updates atime and
 * so always goes to the database; with noatime the same READ is served
 * from the caches alone (stat cache and buffer cache) when they hold the
 * file, which needs its own proof. The uncached relatime server is the
 * reference every other record is compared with.
 */
enum {
    CO_UNCACHED,
    CO_CACHED,
    CO_UNCACHED_NOATIME,
    CO_CACHED_NOATIME,
    CO_SHARED,
    CO_SHARED_PEER,
    CO_NSERVERS
};
static co_server co_servers[CO_NSERVERS] = {
    {.name = "uncached", .caches = false, .relatime = true},
    {.name = "cached", .caches = true, .relatime = true},
    {.name = "uncached noatime", .caches = false, .relatime = false},
    {.name = "cached noatime", .caches = true, .relatime = false},
    {.name = "two shared frontends", .caches = true, .relatime = false, .shared = true},
    {.name = "shared peer", .caches = true, .relatime = false, .shared = true, .peer = true},
};

/* One scenario on one server: two clients and what they observed. */
typedef struct {
    co_server *srv;
    nr_ctx *a, *b;
    nr_fh dir;    /* the scenario's directory, mode 0777 */
    GString *log; /* one observation per line */
    GArray *ids;  /* co_seen by fileid, in order of first sight */
} co_run;

/* A file as last observed: its times tell whether they moved since. */
typedef struct {
    uint64_t fileid;
    nfstime3 ctime, mtime;
} co_seen;

/* A scenario: every step asserts and records through the co_ helpers. */
typedef void (*co_scenario)(co_run *r);

/* ---- the servers ------------------------------------------------------- */

static void co_server_start(co_server *s)
{
    const char *on = s->caches ? "true" : "false";
    char *stat = g_strdup_printf("cache.stat=%s", on);
    char *naming = g_strdup_printf("cache.naming=%s", on);
    char *buffer = g_strdup_printf("cache.buffer=%s", on);
    const char *small = s->caches ? "cache.small_file_size=65536" : "cache.small_file_size=0";
    char *relatime = g_strdup_printf("storage.relatime=%s", s->relatime ? "true" : "false");
    char *mport;
    nr_ctx *c;
    mountres3 res;

    s->metrics_port = tl_free_port();
    mport = g_strdup_printf("metrics.port=%u", s->metrics_port);
    /* The reference stores every write at once: no write-back buffer. */
    const char *wb = s->caches && !s->shared ? "writeback.enable=true" : "writeback.enable=false";
    const char *coherence = s->shared ? "cache.coherence=shared" : "cache.coherence=single";
    char *db = s->peer ? g_strdup_printf("database.conninfo=%s",
                                         tl_server_conninfo(co_servers[CO_SHARED].server))
                       : g_strdup("server.udp=true");
    const char *const over[] = {
        stat,      naming, buffer, small, relatime, wb, "metrics.enable=true",
        coherence, db,     mport,  NULL};
    s->server = tl_server_start(over);
    s->port = tl_server_port(s->server);
    c = nr_open(s->port, NULL);
    if (!c)
        g_error("cannot connect to the %s server", s->name);
    if (nr_mnt(c, "/", &res, &s->root) != MNT3_OK)
        g_error("MOUNT of / on the %s server failed: %s", s->name, nr_error(c));
    nr_close(c);
    g_free(stat);
    g_free(naming);
    g_free(buffer);
    g_free(relatime);
    g_free(mport);
    g_free(db);
}

/* GET /metrics of s (g_free). */
static char *co_metrics(const co_server *s)
{
    char *page = tl_metrics(s->metrics_port);

    g_assert_nonnull(page);
    return page;
}

/* The value of series{cache="which"} on s's metrics page. */
static double co_cache_metric(const co_server *s, const char *series, const char *which)
{
    char *page = co_metrics(s);
    char *key = g_strdup_printf("\n%s{cache=\"%s\"} ", series, which);
    const char *p = strstr(page, key);

    if (!p)
        g_error("%s{cache=\"%s\"} is not on the %s server's metrics page", series, which, s->name);
    double v = g_ascii_strtod(p + strlen(key), NULL);
    g_free(key);
    g_free(page);
    return v;
}

/* ---- recording what clients see ---------------------------------------- */

static const char *co_who(const co_run *r, const nr_ctx *c)
{
    return c == r->a ? "A" : "B";
}

static void co_note(co_run *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void co_note(co_run *r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    g_string_append_vprintf(r->log, fmt, ap);
    va_end(ap);
    g_string_append_c(r->log, '\n');
}

static bool co_time_eq(nfstime3 x, nfstime3 y)
{
    return x.seconds == y.seconds && x.nseconds == y.nseconds;
}

/* The record of a's file, added on first sight; *n is its number (1, 2,
 * ... in order of first sight) and *first says whether it is new. */
static co_seen *co_find(co_run *r, const fattr3 *a, unsigned *n, bool *first)
{
    co_seen s = {.fileid = a->fileid, .ctime = a->ctime, .mtime = a->mtime};

    *first = false;
    for (unsigned i = 0; i < r->ids->len; i++) {
        if (g_array_index(r->ids, co_seen, i).fileid == a->fileid) {
            *n = i + 1;
            return &g_array_index(r->ids, co_seen, i);
        }
    }
    g_array_append_val(r->ids, s);
    *first = true;
    *n = r->ids->len;
    return &g_array_index(r->ids, co_seen, *n - 1);
}

/*
 * "type=1 mode=0644 nlink=1 size=4 uid=0 gid=0 id=#3 ctime+ mtime=" (g_free):
 * the file's number and whether its ctime and mtime moved since it was
 * last observed ('*' on first sight). Every change moves ctime forward,
 * so a cache that kept old attributes shows '=' where a server without
 * caches shows '+', whatever the clocks say.
 */
static char *co_attr_text(co_run *r, const fattr3 *a)
{
    unsigned n;
    bool first;
    co_seen *s = co_find(r, a, &n, &first);
    char c = first ? '*' : co_time_eq(s->ctime, a->ctime) ? '=' : '+';
    char m = first ? '*' : co_time_eq(s->mtime, a->mtime) ? '=' : '+';

    s->ctime = a->ctime;
    s->mtime = a->mtime;
    return g_strdup_printf("type=%d mode=%04o nlink=%u size=%" G_GUINT64_FORMAT
                           " uid=%u gid=%u id=#%u ctime%c mtime%c",
                           (int)a->type, a->mode & 07777, a->nlink, (guint64)a->size, a->uid,
                           a->gid, n, c, m);
}

static void co_note_status(co_run *r, nr_ctx *c, const char *op, const char *what, int st,
                           const fattr3 *a)
{
    char *attr = a ? co_attr_text(r, a) : NULL;

    co_note(r, "%s %s %s: %s%s%s", co_who(r, c), op, what, nr_stat_name(st), attr ? " " : "",
            attr ? attr : "");
    g_free(attr);
}

/* FNV-1a of len bytes. */
static uint64_t co_hash(const void *p, size_t len)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* ---- steps: each asserts its status and records what it saw ------------- */

static fattr3 co_getattr(co_run *r, nr_ctx *c, const char *what, const nr_fh *fh, int want)
{
    GETATTR3res res;
    fattr3 a;
    int st = nr_getattr(c, fh, &res);

    memset(&a, 0, sizeof a);
    pt_stat(c, st, want);
    if (st == NFS3_OK)
        a = res.GETATTR3res_u.resok.obj_attributes;
    co_note_status(r, c, "GETATTR", what, st, st == NFS3_OK ? &a : NULL);
    return a;
}

/* LOOKUP name in dir; on success *out (may be NULL) is the handle and the
 * object's attributes are returned. */
static fattr3 co_lookup(co_run *r, nr_ctx *c, const nr_fh *dir, const char *name, int want,
                        nr_fh *out)
{
    LOOKUP3res res;
    fattr3 a;
    int st = nr_lookup(c, dir, name, &res);

    memset(&a, 0, sizeof a);
    pt_stat(c, st, want);
    if (st == NFS3_OK) {
        a = pt_post_attr(&res.LOOKUP3res_u.resok.obj_attributes);
        if (out)
            *out = nr_fh_from(&res.LOOKUP3res_u.resok.object);
    }
    co_note_status(r, c, "LOOKUP", name, st, st == NFS3_OK ? &a : NULL);
    return a;
}

/* READ count bytes at off: on success they must be expect (expect_len
 * bytes) and eof must be expect_eof. */
static void co_read(co_run *r, nr_ctx *c, const char *what, const nr_fh *fh, uint64_t off,
                    uint32_t count, int want, const void *expect, uint32_t expect_len,
                    bool expect_eof)
{
    READ3res res;
    int st = nr_read(c, fh, off, count, &res);

    pt_stat(c, st, want);
    if (st != NFS3_OK) {
        co_note(r, "%s READ %s %" G_GUINT64_FORMAT "+%u: %s", co_who(r, c), what, (guint64)off,
                count, nr_stat_name(st));
        return;
    }
    const READ3resok *ok = &res.READ3res_u.resok;
    g_assert_cmpuint(ok->count, ==, ok->data.data_len);
    g_assert_cmpuint(ok->data.data_len, ==, expect_len);
    if (expect_len)
        g_assert_cmpmem(ok->data.data_val, ok->data.data_len, expect, expect_len);
    g_assert_cmpint(!!ok->eof, ==, expect_eof);
    co_note(r,
            "%s READ %s %" G_GUINT64_FORMAT "+%u: %s len=%u eof=%d hash=%016" G_GINT64_MODIFIER "x",
            co_who(r, c), what, (guint64)off, count, nr_stat_name(st), ok->data.data_len, !!ok->eof,
            (guint64)co_hash(ok->data.data_val, ok->data.data_len));
    nr_arena_clear(c);
}

/* ACCESS asking for `ask`; returns the bits granted (0 on failure). */
static uint32_t co_access(co_run *r, nr_ctx *c, const char *what, const nr_fh *fh, uint32_t ask,
                          int want)
{
    ACCESS3res res;
    int st = nr_access(c, fh, ask, &res);
    uint32_t got = st == NFS3_OK ? res.ACCESS3res_u.resok.access : 0;

    pt_stat(c, st, want);
    co_note(r, "%s ACCESS %s 0x%02x: %s 0x%02x", co_who(r, c), what, ask, nr_stat_name(st), got);
    return got;
}

static nr_fh co_create(co_run *r, nr_ctx *c, const nr_fh *dir, const char *name, uint32_t mode)
{
    CREATE3res res;
    sattr3 sa = nr_sattr_mode(mode);
    int st = nr_create(c, dir, name, GUARDED, &sa, NULL, &res);

    pt_ok(c, st);
    fattr3 a = pt_post_attr(&res.CREATE3res_u.resok.obj_attributes);
    co_note_status(r, c, "CREATE", name, st, &a);
    return pt_post_fh(&res.CREATE3res_u.resok.obj);
}

static nr_fh co_mkdir(co_run *r, nr_ctx *c, const nr_fh *dir, const char *name, uint32_t mode)
{
    MKDIR3res res;
    sattr3 sa = nr_sattr_mode(mode);
    int st = nr_mkdir(c, dir, name, &sa, &res);

    pt_ok(c, st);
    fattr3 a = pt_post_attr(&res.MKDIR3res_u.resok.obj_attributes);
    co_note_status(r, c, "MKDIR", name, st, &a);
    return pt_post_fh(&res.MKDIR3res_u.resok.obj);
}

static void co_write(co_run *r, nr_ctx *c, const char *what, const nr_fh *fh, uint64_t off,
                     const void *data, uint32_t len, stable_how how, int want)
{
    WRITE3res res;
    int st = nr_write(c, fh, off, data, len, how, &res);

    pt_stat(c, st, want);
    if (st == NFS3_OK)
        g_assert_cmpuint(res.WRITE3res_u.resok.count, ==, len);
    co_note(r, "%s WRITE %s %" G_GUINT64_FORMAT "+%u: %s", co_who(r, c), what, (guint64)off, len,
            nr_stat_name(st));
}

static void co_setattr(co_run *r, nr_ctx *c, const char *what, const nr_fh *fh, const sattr3 *sa,
                       int want)
{
    SETATTR3res res;
    int st = nr_setattr(c, fh, sa, NULL, &res);

    pt_stat(c, st, want);
    co_note(r, "%s SETATTR %s: %s", co_who(r, c), what, nr_stat_name(st));
}

static void co_chmod(co_run *r, nr_ctx *c, const char *what, const nr_fh *fh, uint32_t mode)
{
    sattr3 sa = nr_sattr_mode(mode);

    co_setattr(r, c, what, fh, &sa, NFS3_OK);
}

static void co_truncate(co_run *r, nr_ctx *c, const char *what, const nr_fh *fh, uint64_t size)
{
    sattr3 sa = nr_sattr_none();

    sa.size.set_it = 1;
    sa.size.set_size3_u.size = size;
    co_setattr(r, c, what, fh, &sa, NFS3_OK);
}

static void co_remove(co_run *r, nr_ctx *c, const nr_fh *dir, const char *name, int want)
{
    int st = nr_remove(c, dir, name, NULL);

    pt_stat(c, st, want);
    co_note(r, "%s REMOVE %s: %s", co_who(r, c), name, nr_stat_name(st));
}

static void co_rmdir(co_run *r, nr_ctx *c, const nr_fh *dir, const char *name, int want)
{
    int st = nr_rmdir(c, dir, name, NULL);

    pt_stat(c, st, want);
    co_note(r, "%s RMDIR %s: %s", co_who(r, c), name, nr_stat_name(st));
}

static void co_rename(co_run *r, nr_ctx *c, const nr_fh *from_dir, const char *from,
                      const nr_fh *to_dir, const char *to, int want)
{
    int st = nr_rename(c, from_dir, from, to_dir, to, NULL);

    pt_stat(c, st, want);
    co_note(r, "%s RENAME %s -> %s: %s", co_who(r, c), from, to, nr_stat_name(st));
}

/* LINK file as name in dir; returns the file's attributes after. */
static fattr3 co_link(co_run *r, nr_ctx *c, const nr_fh *file, const nr_fh *dir, const char *name,
                      int want)
{
    LINK3res res;
    fattr3 a;
    int st = nr_link(c, file, dir, name, &res);

    memset(&a, 0, sizeof a);
    pt_stat(c, st, want);
    if (st == NFS3_OK)
        a = pt_post_attr(&res.LINK3res_u.resok.file_attributes);
    co_note_status(r, c, "LINK", name, st, st == NFS3_OK ? &a : NULL);
    return a;
}

static gint co_strcmp_p(gconstpointer x, gconstpointer y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* READDIR of dir: records its status and the names it lists, sorted. */
static void co_readdir(co_run *r, nr_ctx *c, const char *what, const nr_fh *dir, int want)
{
    READDIR3res res;
    GPtrArray *names = g_ptr_array_new();
    int st = nr_readdir(c, dir, 0, NULL, 65536, &res);

    pt_stat(c, st, want);
    if (st == NFS3_OK) {
        g_assert_true(res.READDIR3res_u.resok.reply.eof);
        for (entry3 *e = res.READDIR3res_u.resok.reply.entries; e; e = e->nextentry)
            if (strcmp(e->name, ".") != 0 && strcmp(e->name, "..") != 0)
                g_ptr_array_add(names, g_strdup(e->name));
    }
    g_ptr_array_sort(names, co_strcmp_p);
    g_ptr_array_add(names, NULL);
    char **v = (char **)g_ptr_array_free(names, FALSE);
    char *list = g_strjoinv(",", v);
    co_note(r, "%s READDIR %s: %s [%s]", co_who(r, c), what, nr_stat_name(st), list);
    g_free(list);
    g_strfreev(v);
    nr_arena_clear(c);
}

/* Bytes of a recognisable pattern (g_free). */
static unsigned char *co_pattern(size_t len, unsigned seed)
{
    unsigned char *p = g_malloc(len ? len : 1);

    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)((i * 7 + seed * 13 + (i >> 8)) & 0xff);
    return p;
}

/* ---- the scenarios -------------------------------------------------------- */

/* RENAME over an existing name, seen by the other client. */
static void sc_rename_over(co_run *r)
{
    nr_fh x, y, bx, by, h;
    fattr3 ax, a;

    x = co_create(r, r->a, &r->dir, "x", 0644);
    co_write(r, r->a, "x", &x, 0, "XXXX", 4, FILE_SYNC, NFS3_OK);
    y = co_create(r, r->a, &r->dir, "y", 0644);
    co_write(r, r->a, "y", &y, 0, "YY", 2, FILE_SYNC, NFS3_OK);
    /* B learns both names, their attributes and y's data, twice. */
    for (int i = 0; i < 2; i++) {
        ax = co_lookup(r, r->b, &r->dir, "x", NFS3_OK, &bx);
        co_lookup(r, r->b, &r->dir, "y", NFS3_OK, &by);
        a = co_getattr(r, r->b, "y", &by, NFS3_OK);
        g_assert_cmpuint(a.nlink, ==, 1);
        g_assert_cmpuint(a.size, ==, 2);
        co_read(r, r->b, "y", &by, 0, 100, NFS3_OK, "YY", 2, true);
    }
    co_rename(r, r->a, &r->dir, "x", &r->dir, "y", NFS3_OK);
    /* The moved file's ctime moved, through its new name and its handle. */
    a = co_lookup(r, r->b, &r->dir, "y", NFS3_OK, NULL);
    g_assert_false(co_time_eq(a.ctime, ax.ctime));
    a = co_getattr(r, r->b, "x", &bx, NFS3_OK);
    g_assert_false(co_time_eq(a.ctime, ax.ctime));
    /* The replaced file had one link: it is gone, whatever B cached. */
    co_getattr(r, r->b, "old y", &by, NFS3ERR_STALE);
    co_read(r, r->b, "old y", &by, 0, 100, NFS3ERR_STALE, NULL, 0, false);
    co_access(r, r->b, "old y", &by, ACCESS3_READ, NFS3ERR_STALE);
    co_lookup(r, r->b, &r->dir, "x", NFS3ERR_NOENT, NULL);
    a = co_lookup(r, r->b, &r->dir, "y", NFS3_OK, &h);
    g_assert_cmpuint(a.fileid, ==, ax.fileid);
    g_assert_true(nr_fh_equal(&h, &bx));
    g_assert_cmpuint(a.size, ==, 4);
    co_read(r, r->b, "y", &h, 0, 100, NFS3_OK, "XXXX", 4, true);
    a = co_getattr(r, r->b, "x", &bx, NFS3_OK);
    g_assert_cmpuint(a.nlink, ==, 1);
    g_assert_false(co_time_eq(a.ctime, ax.ctime)); /* a rename changes the object's ctime */

    /* Over a file that keeps another name: it loses one link. */
    nr_fh z = co_create(r, r->a, &r->dir, "z", 0644), bz;
    co_write(r, r->a, "z", &z, 0, "ZZZ", 3, FILE_SYNC, NFS3_OK);
    co_link(r, r->a, &z, &r->dir, "z2", NFS3_OK);
    nr_fh w = co_create(r, r->a, &r->dir, "w", 0600);
    for (int i = 0; i < 2; i++) {
        a = co_lookup(r, r->b, &r->dir, "z", NFS3_OK, &bz);
        g_assert_cmpuint(a.nlink, ==, 2);
        co_lookup(r, r->b, &r->dir, "z2", NFS3_OK, NULL);
        co_lookup(r, r->b, &r->dir, "w", NFS3_OK, NULL);
    }
    co_rename(r, r->a, &r->dir, "w", &r->dir, "z", NFS3_OK);
    a = co_getattr(r, r->b, "old z", &bz, NFS3_OK);
    g_assert_cmpuint(a.nlink, ==, 1);
    a = co_lookup(r, r->b, &r->dir, "z2", NFS3_OK, NULL);
    g_assert_cmpuint(a.nlink, ==, 1);
    g_assert_cmpuint(a.size, ==, 3);
    a = co_lookup(r, r->b, &r->dir, "z", NFS3_OK, &h);
    g_assert_true(nr_fh_equal(&h, &w));
    g_assert_cmpuint(a.mode & 07777, ==, 0600);
    co_lookup(r, r->b, &r->dir, "w", NFS3ERR_NOENT, NULL);

    /* A directory over an empty directory. */
    nr_fh d1 = co_mkdir(r, r->a, &r->dir, "d1", 0755), bd2, h2;
    co_mkdir(r, r->a, &r->dir, "d2", 0755);
    nr_fh f = co_create(r, r->a, &d1, "f", 0644);
    for (int i = 0; i < 2; i++) {
        a = co_getattr(r, r->b, "dir", &r->dir, NFS3_OK);
        g_assert_cmpuint(a.nlink, ==, 4);
        co_lookup(r, r->b, &r->dir, "d1", NFS3_OK, NULL);
        co_lookup(r, r->b, &r->dir, "d2", NFS3_OK, &bd2);
        co_lookup(r, r->b, &bd2, "f", NFS3ERR_NOENT, NULL);
    }
    co_rename(r, r->a, &r->dir, "d1", &r->dir, "d2", NFS3_OK);
    co_getattr(r, r->b, "old d2", &bd2, NFS3ERR_STALE);
    co_lookup(r, r->b, &bd2, "f", NFS3ERR_STALE, NULL);
    co_lookup(r, r->b, &r->dir, "d1", NFS3ERR_NOENT, NULL);
    co_lookup(r, r->b, &r->dir, "d2", NFS3_OK, &h2);
    g_assert_true(nr_fh_equal(&h2, &d1));
    co_lookup(r, r->b, &h2, "f", NFS3_OK, &h);
    g_assert_true(nr_fh_equal(&h, &f));
    a = co_getattr(r, r->b, "dir", &r->dir, NFS3_OK);
    g_assert_cmpuint(a.nlink, ==, 3);

    /* Across directories, onto a name B knows to be absent. */
    for (int i = 0; i < 2; i++) {
        co_lookup(r, r->b, &r->dir, "moved", NFS3ERR_NOENT, NULL);
        co_lookup(r, r->b, &d1, "f", NFS3_OK, NULL);
    }
    co_rename(r, r->a, &d1, "f", &r->dir, "moved", NFS3_OK);
    co_lookup(r, r->b, &d1, "f", NFS3ERR_NOENT, NULL);
    co_lookup(r, r->b, &r->dir, "moved", NFS3_OK, &h);
    g_assert_true(nr_fh_equal(&h, &f));
    co_readdir(r, r->b, "dir", &r->dir, NFS3_OK);
    co_readdir(r, r->b, "d2", &d1, NFS3_OK);
}

/* REMOVE while the other client reads through a handle it holds. */
static void sc_unlink_while_reading(co_run *r)
{
    enum { LEN = 3 * 8192 + 100 };
    unsigned char *data = co_pattern(LEN, 1);
    nr_fh f, bf, h;
    fattr3 a;

    f = co_create(r, r->a, &r->dir, "f", 0644);
    co_write(r, r->a, "f", &f, 0, data, LEN, FILE_SYNC, NFS3_OK);
    for (int i = 0; i < 2; i++) {
        co_lookup(r, r->b, &r->dir, "f", NFS3_OK, &bf);
        co_read(r, r->b, "f", &bf, 0, LEN + 10, NFS3_OK, data, LEN, true);
        co_read(r, r->b, "f", &bf, 8000, 400, NFS3_OK, data + 8000, 400, false);
    }
    /* A second name keeps the file (and its data) alive. */
    co_link(r, r->a, &f, &r->dir, "g", NFS3_OK);
    a = co_getattr(r, r->b, "f", &bf, NFS3_OK);
    g_assert_cmpuint(a.nlink, ==, 2);
    co_remove(r, r->a, &r->dir, "f", NFS3_OK);
    co_read(r, r->b, "f", &bf, 0, LEN, NFS3_OK, data, LEN, true);
    a = co_getattr(r, r->b, "f", &bf, NFS3_OK);
    g_assert_cmpuint(a.nlink, ==, 1);
    co_lookup(r, r->b, &r->dir, "f", NFS3ERR_NOENT, NULL);
    co_lookup(r, r->b, &r->dir, "g", NFS3_OK, &h);
    g_assert_true(nr_fh_equal(&h, &f));
    /* Data written UNSTABLE is read by the other client before COMMIT. */
    co_write(r, r->a, "f", &f, 100, "unstable", 8, UNSTABLE, NFS3_OK);
    memcpy(data + 100, "unstable", 8);
    co_read(r, r->b, "f", &bf, 0, LEN, NFS3_OK, data, LEN, true);
    /* The last name goes: the file is gone for the reader at once, and
     * for the writer's COMMIT. */
    co_remove(r, r->a, &r->dir, "g", NFS3_OK);
    COMMIT3res cres;
    int st = nr_commit(r->a, &f, 0, 0, &cres);
    pt_stat(r->a, st, NFS3ERR_STALE);
    co_note(r, "A COMMIT f: %s", nr_stat_name(st));
    co_read(r, r->b, "f", &bf, 0, LEN, NFS3ERR_STALE, NULL, 0, false);
    co_read(r, r->b, "f", &bf, 8000, 400, NFS3ERR_STALE, NULL, 0, false);
    co_getattr(r, r->b, "f", &bf, NFS3ERR_STALE);
    co_access(r, r->b, "f", &bf, ACCESS3_READ | ACCESS3_MODIFY, NFS3ERR_STALE);
    co_write(r, r->b, "f", &bf, 0, "x", 1, FILE_SYNC, NFS3ERR_STALE);
    sattr3 mode = nr_sattr_mode(0600);
    co_setattr(r, r->b, "f", &bf, &mode, NFS3ERR_STALE);
    co_lookup(r, r->b, &r->dir, "g", NFS3ERR_NOENT, NULL);

    /* The other way round: B removes what A reads. */
    h = co_create(r, r->b, &r->dir, "h", 0644);
    co_write(r, r->b, "h", &h, 0, data, 9000, FILE_SYNC, NFS3_OK);
    for (int i = 0; i < 2; i++) {
        co_lookup(r, r->a, &r->dir, "h", NFS3_OK, NULL);
        co_read(r, r->a, "h", &h, 0, 9000, NFS3_OK, data, 9000, true);
    }
    co_remove(r, r->b, &r->dir, "h", NFS3_OK);
    co_read(r, r->a, "h", &h, 0, 9000, NFS3ERR_STALE, NULL, 0, false);
    co_lookup(r, r->a, &r->dir, "h", NFS3ERR_NOENT, NULL);
    co_readdir(r, r->a, "dir", &r->dir, NFS3_OK);
    g_free(data);
}

/* Truncation and extension while the other client reads. */
static void sc_truncate_while_reading(co_run *r)
{
    enum { LEN = 3 * 8192 + 100 };
    unsigned char *data = co_pattern(LEN, 2);
    unsigned char *want = g_malloc0(LEN);
    nr_fh f, bf;
    fattr3 a;

    f = co_create(r, r->a, &r->dir, "f", 0644);
    co_write(r, r->a, "f", &f, 0, data, LEN, FILE_SYNC, NFS3_OK);
    co_lookup(r, r->b, &r->dir, "f", NFS3_OK, &bf);
    for (int i = 0; i < 2; i++)
        co_read(r, r->b, "f", &bf, 0, LEN + 100, NFS3_OK, data, LEN, true);

    co_truncate(r, r->a, "f", &f, 5000);
    a = co_getattr(r, r->b, "f", &bf, NFS3_OK);
    g_assert_cmpuint(a.size, ==, 5000);
    co_read(r, r->b, "f", &bf, 0, LEN + 100, NFS3_OK, data, 5000, true);
    co_read(r, r->b, "f", &bf, 8192, 100, NFS3_OK, NULL, 0, true);

    /* Extending reads zeros past the old end, never the old bytes. */
    co_truncate(r, r->a, "f", &f, 12000);
    memcpy(want, data, 5000);
    a = co_getattr(r, r->b, "f", &bf, NFS3_OK);
    g_assert_cmpuint(a.size, ==, 12000);
    co_read(r, r->b, "f", &bf, 0, LEN, NFS3_OK, want, 12000, true);
    co_write(r, r->a, "f", &f, 10000, "abc", 3, FILE_SYNC, NFS3_OK);
    memcpy(want + 10000, "abc", 3);
    co_read(r, r->b, "f", &bf, 9990, 30, NFS3_OK, want + 9990, 30, false);
    co_read(r, r->b, "f", &bf, 0, LEN, NFS3_OK, want, 12000, true);

    /* Data written UNSTABLE (perhaps still buffered) is cut like the rest. */
    co_write(r, r->a, "f", &f, 11000, "uvw", 3, UNSTABLE, NFS3_OK);
    memcpy(want + 11000, "uvw", 3);
    co_read(r, r->b, "f", &bf, 10990, 20, NFS3_OK, want + 10990, 20, false);
    co_truncate(r, r->b, "f", &bf, 11001);
    memset(want + 11001, 0, 12000 - 11001);
    a = co_getattr(r, r->a, "f", &f, NFS3_OK);
    g_assert_cmpuint(a.size, ==, 11001);
    co_read(r, r->a, "f", &f, 10990, 100, NFS3_OK, want + 10990, 11, true);
    co_truncate(r, r->a, "f", &f, 12000);
    co_read(r, r->b, "f", &bf, 0, LEN, NFS3_OK, want, 12000, true);

    /* To nothing, then new data. */
    co_truncate(r, r->a, "f", &f, 0);
    a = co_getattr(r, r->b, "f", &bf, NFS3_OK);
    g_assert_cmpuint(a.size, ==, 0);
    co_read(r, r->b, "f", &bf, 0, 100, NFS3_OK, NULL, 0, true);
    co_write(r, r->a, "f", &f, 0, data + 100, 8200, FILE_SYNC, NFS3_OK);
    co_read(r, r->b, "f", &bf, 0, LEN, NFS3_OK, data + 100, 8200, true);

    /* An UNCHECKED CREATE with a size truncates the existing file too. */
    CREATE3res cres;
    sattr3 sa = nr_sattr_none();
    sa.size.set_it = 1;
    sa.size.set_size3_u.size = 10;
    pt_ok(r->a, nr_create(r->a, &r->dir, "f", UNCHECKED, &sa, NULL, &cres));
    co_note(r, "A CREATE UNCHECKED f size 10: NFS3_OK");
    a = co_getattr(r, r->b, "f", &bf, NFS3_OK);
    g_assert_cmpuint(a.size, ==, 10);
    co_read(r, r->b, "f", &bf, 0, LEN, NFS3_OK, data + 100, 10, true);
    /* B truncates, A reads. */
    co_truncate(r, r->b, "f", &bf, 3);
    co_read(r, r->a, "f", &f, 0, 100, NFS3_OK, data + 100, 3, true);
    g_free(want);
    g_free(data);
}

/* Hard links: nlink and ctime, seen by both clients through either name. */
static void sc_hard_links(co_run *r)
{
    nr_fh f, bf, g;
    fattr3 a, l, c0;

    f = co_create(r, r->a, &r->dir, "f", 0644);
    co_write(r, r->a, "f", &f, 0, "hello", 5, FILE_SYNC, NFS3_OK);
    for (int i = 0; i < 2; i++) {
        co_lookup(r, r->b, &r->dir, "f", NFS3_OK, &bf);
        c0 = co_getattr(r, r->b, "f", &bf, NFS3_OK);
        g_assert_cmpuint(c0.nlink, ==, 1);
        co_lookup(r, r->b, &r->dir, "g", NFS3ERR_NOENT, NULL);
    }
    l = co_link(r, r->a, &f, &r->dir, "g", NFS3_OK);
    g_assert_cmpuint(l.nlink, ==, 2);
    g_assert_false(co_time_eq(l.ctime, c0.ctime));
    a = co_getattr(r, r->b, "f", &bf, NFS3_OK);
    g_assert_cmpuint(a.nlink, ==, 2);
    g_assert_true(co_time_eq(a.ctime, l.ctime));
    a = co_lookup(r, r->b, &r->dir, "g", NFS3_OK, &g);
    g_assert_true(nr_fh_equal(&g, &f));
    g_assert_cmpuint(a.nlink, ==, 2);
    g_assert_true(co_time_eq(a.ctime, l.ctime));
    co_read(r, r->b, "g", &g, 0, 100, NFS3_OK, "hello", 5, true);

    /* B links, A sees. */
    l = co_link(r, r->b, &bf, &r->dir, "h", NFS3_OK);
    g_assert_cmpuint(l.nlink, ==, 3);
    a = co_getattr(r, r->a, "f", &f, NFS3_OK);
    g_assert_cmpuint(a.nlink, ==, 3);
    g_assert_true(co_time_eq(a.ctime, l.ctime));
    a = co_lookup(r, r->a, &r->dir, "h", NFS3_OK, NULL);
    g_assert_cmpuint(a.nlink, ==, 3);

    /* Removing one name changes nlink and ctime for every name. */
    co_remove(r, r->a, &r->dir, "g", NFS3_OK);
    a = co_getattr(r, r->b, "f", &bf, NFS3_OK);
    g_assert_cmpuint(a.nlink, ==, 2);
    g_assert_false(co_time_eq(a.ctime, l.ctime));
    c0 = a;
    a = co_lookup(r, r->b, &r->dir, "h", NFS3_OK, NULL);
    g_assert_cmpuint(a.nlink, ==, 2);
    g_assert_true(co_time_eq(a.ctime, c0.ctime));
    co_lookup(r, r->b, &r->dir, "g", NFS3ERR_NOENT, NULL);

    /* Data written through one name is read through the other. */
    co_write(r, r->a, "h", &f, 5, " world", 6, FILE_SYNC, NFS3_OK);
    co_read(r, r->b, "f", &bf, 0, 100, NFS3_OK, "hello world", 11, true);
    /* A link to a name that exists fails and changes nothing. */
    co_link(r, r->b, &bf, &r->dir, "h", NFS3ERR_EXIST);
    a = co_getattr(r, r->a, "f", &f, NFS3_OK);
    g_assert_cmpuint(a.nlink, ==, 2);
    co_readdir(r, r->b, "dir", &r->dir, NFS3_OK);
}

/* RMDIR and MKDIR of one name, and what lies under it. */
static void sc_rmdir_mkdir(co_run *r)
{
    nr_fh d1, bd, d2, h;
    fattr3 a, old;

    memset(&old, 0, sizeof old);

    d1 = co_mkdir(r, r->a, &r->dir, "d", 0755);
    co_create(r, r->a, &d1, "inner0", 0644);
    for (int i = 0; i < 2; i++) {
        a = co_getattr(r, r->b, "dir", &r->dir, NFS3_OK);
        g_assert_cmpuint(a.nlink, ==, 3);
        old = co_lookup(r, r->b, &r->dir, "d", NFS3_OK, &bd);
        co_lookup(r, r->b, &bd, "inner0", NFS3_OK, NULL);
        co_lookup(r, r->b, &bd, "inner", NFS3ERR_NOENT, NULL);
        co_readdir(r, r->b, "d", &bd, NFS3_OK);
    }
    co_remove(r, r->a, &d1, "inner0", NFS3_OK);
    co_rmdir(r, r->a, &r->dir, "d", NFS3_OK);
    co_lookup(r, r->b, &r->dir, "d", NFS3ERR_NOENT, NULL);
    co_getattr(r, r->b, "old d", &bd, NFS3ERR_STALE);
    co_lookup(r, r->b, &bd, "inner", NFS3ERR_STALE, NULL);
    co_lookup(r, r->b, &bd, "inner0", NFS3ERR_STALE, NULL);
    co_readdir(r, r->b, "old d", &bd, NFS3ERR_STALE);
    CREATE3res cres;
    sattr3 mode = nr_sattr_mode(0644);
    int st = nr_create(r->b, &bd, "late", GUARDED, &mode, NULL, &cres);
    pt_stat(r->b, st, NFS3ERR_STALE);
    co_note(r, "B CREATE old d/late: %s", nr_stat_name(st));
    a = co_getattr(r, r->b, "dir", &r->dir, NFS3_OK);
    g_assert_cmpuint(a.nlink, ==, 2);

    /* The same name again: another directory, empty. */
    d2 = co_mkdir(r, r->a, &r->dir, "d", 0700);
    a = co_lookup(r, r->b, &r->dir, "d", NFS3_OK, &h);
    g_assert_true(nr_fh_equal(&h, &d2));
    g_assert_cmpuint(a.fileid, !=, old.fileid);
    g_assert_cmpuint(a.mode & 07777, ==, 0700);
    co_lookup(r, r->b, &h, "inner", NFS3ERR_NOENT, NULL);
    co_lookup(r, r->b, &h, "inner0", NFS3ERR_NOENT, NULL);
    a = co_getattr(r, r->b, "dir", &r->dir, NFS3_OK);
    g_assert_cmpuint(a.nlink, ==, 3);
    co_create(r, r->a, &d2, "inner", 0644);
    co_lookup(r, r->b, &h, "inner", NFS3_OK, NULL);

    /* B takes it away, A sees. */
    co_remove(r, r->b, &h, "inner", NFS3_OK);
    co_rmdir(r, r->b, &r->dir, "d", NFS3_OK);
    co_lookup(r, r->a, &r->dir, "d", NFS3ERR_NOENT, NULL);
    co_getattr(r, r->a, "d", &d2, NFS3ERR_STALE);
    co_lookup(r, r->a, &d2, "inner", NFS3ERR_STALE, NULL);

    /* A file, then a directory, under the name. */
    co_create(r, r->a, &r->dir, "d", 0644);
    a = co_lookup(r, r->b, &r->dir, "d", NFS3_OK, NULL);
    g_assert_cmpint(a.type, ==, NF3REG);
    co_rmdir(r, r->b, &r->dir, "d", NFS3ERR_NOTDIR);
    co_remove(r, r->a, &r->dir, "d", NFS3_OK);
    co_mkdir(r, r->a, &r->dir, "d", 0755);
    a = co_lookup(r, r->b, &r->dir, "d", NFS3_OK, NULL);
    g_assert_cmpint(a.type, ==, NF3DIR);
    co_remove(r, r->b, &r->dir, "d", NFS3ERR_ISDIR);
    co_readdir(r, r->b, "dir", &r->dir, NFS3_OK);
}

/* Names B has seen absent, then made by A in every way there is. */
static void sc_create_after_negative(co_run *r)
{
    static const char *const names[] = {"n1", "n2", "n3", "n4", "n5", "n6", "n7"};
    char verf[NFS3_CREATEVERFSIZE] = "verfverf";
    nr_fh n1, h;
    fattr3 a;

    for (int i = 0; i < 2; i++)
        for (size_t k = 0; k < G_N_ELEMENTS(names); k++)
            co_lookup(r, r->b, &r->dir, names[k], NFS3ERR_NOENT, NULL);

    n1 = co_create(r, r->a, &r->dir, "n1", 0644);
    a = co_lookup(r, r->b, &r->dir, "n1", NFS3_OK, &h);
    g_assert_true(nr_fh_equal(&h, &n1));
    g_assert_cmpint(a.type, ==, NF3REG);

    co_mkdir(r, r->a, &r->dir, "n2", 0755);
    a = co_lookup(r, r->b, &r->dir, "n2", NFS3_OK, NULL);
    g_assert_cmpint(a.type, ==, NF3DIR);

    SYMLINK3res sres;
    sattr3 none = nr_sattr_none();
    pt_ok(r->a, nr_symlink(r->a, &r->dir, "n3", "target/of/n3", &none, &sres));
    co_note(r, "A SYMLINK n3: NFS3_OK");
    a = co_lookup(r, r->b, &r->dir, "n3", NFS3_OK, &h);
    g_assert_cmpint(a.type, ==, NF3LNK);
    READLINK3res lres;
    pt_ok(r->b, nr_readlink(r->b, &h, &lres));
    g_assert_cmpstr(lres.READLINK3res_u.resok.data, ==, "target/of/n3");
    co_note(r, "B READLINK n3: %s", lres.READLINK3res_u.resok.data);

    MKNOD3res mres;
    sattr3 mode = nr_sattr_mode(0600);
    pt_ok(r->a, nr_mknod(r->a, &r->dir, "n4", NF3FIFO, &mode, 0, 0, &mres));
    co_note(r, "A MKNOD n4: NFS3_OK");
    a = co_lookup(r, r->b, &r->dir, "n4", NFS3_OK, NULL);
    g_assert_cmpint(a.type, ==, NF3FIFO);

    co_link(r, r->a, &n1, &r->dir, "n5", NFS3_OK);
    a = co_lookup(r, r->b, &r->dir, "n5", NFS3_OK, &h);
    g_assert_true(nr_fh_equal(&h, &n1));
    g_assert_cmpuint(a.nlink, ==, 2);

    co_create(r, r->a, &r->dir, "tmp", 0644);
    co_lookup(r, r->b, &r->dir, "tmp", NFS3_OK, NULL);
    co_rename(r, r->a, &r->dir, "tmp", &r->dir, "n6", NFS3_OK);
    co_lookup(r, r->b, &r->dir, "n6", NFS3_OK, NULL);
    co_lookup(r, r->b, &r->dir, "tmp", NFS3ERR_NOENT, NULL);

    CREATE3res cres;
    pt_ok(r->a, nr_create(r->a, &r->dir, "n7", EXCLUSIVE, NULL, verf, &cres));
    co_note(r, "A CREATE EXCLUSIVE n7: NFS3_OK");
    co_lookup(r, r->b, &r->dir, "n7", NFS3_OK, NULL);

    /* READDIRPLUS fills names too; they must follow a REMOVE and a new
     * CREATE under the same name. */
    READDIRPLUS3res pres;
    pt_ok(r->b, nr_readdirplus(r->b, &r->dir, 0, NULL, 65536, 65536, &pres));
    co_note(r, "B READDIRPLUS dir: NFS3_OK");
    nr_arena_clear(r->b);
    co_remove(r, r->a, &r->dir, "n1", NFS3_OK);
    co_lookup(r, r->b, &r->dir, "n1", NFS3ERR_NOENT, NULL);
    a = co_lookup(r, r->b, &r->dir, "n5", NFS3_OK, NULL);
    g_assert_cmpuint(a.nlink, ==, 1);
    nr_fh again = co_create(r, r->a, &r->dir, "n1", 0640);
    a = co_lookup(r, r->b, &r->dir, "n1", NFS3_OK, &h);
    g_assert_true(nr_fh_equal(&h, &again));
    g_assert_false(nr_fh_equal(&h, &n1));
    g_assert_cmpuint(a.mode & 07777, ==, 0640);
    /* A GUARDED create of a name that now exists fails for B. */
    CREATE3res gres;
    sattr3 sa = nr_sattr_mode(0644);
    pt_stat(r->b, nr_create(r->b, &r->dir, "n6", GUARDED, &sa, NULL, &gres), NFS3ERR_EXIST);
    co_note(r, "B CREATE GUARDED n6: NFS3ERR_EXIST");
    co_readdir(r, r->b, "dir", &r->dir, NFS3_OK);
}

/* chmod by one client, seen by the other's GETATTR, ACCESS, READ, LOOKUP. */
static void sc_chmod_access(co_run *r)
{
    const uint32_t file_bits = ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_EXECUTE;
    const uint32_t dir_bits =
        ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE;
    nr_fh f, d, x;
    fattr3 a;

    f = co_create(r, r->a, &r->dir, "f", 0644);
    co_write(r, r->a, "f", &f, 0, "data", 4, FILE_SYNC, NFS3_OK);
    nr_set_cred(r->b, &pt_other); /* B is another user from here on */
    for (int i = 0; i < 2; i++) {
        g_assert_cmpuint(co_access(r, r->b, "f", &f, file_bits, NFS3_OK), ==, ACCESS3_READ);
        a = co_getattr(r, r->b, "f", &f, NFS3_OK);
        g_assert_cmpuint(a.mode & 07777, ==, 0644);
        co_read(r, r->b, "f", &f, 0, 10, NFS3_OK, "data", 4, true);
    }
    co_chmod(r, r->a, "f", &f, 0600);
    g_assert_cmpuint(co_access(r, r->b, "f", &f, file_bits, NFS3_OK), ==, 0);
    a = co_getattr(r, r->b, "f", &f, NFS3_OK);
    g_assert_cmpuint(a.mode & 07777, ==, 0600);
    co_read(r, r->b, "f", &f, 0, 10, NFS3ERR_ACCES, NULL, 0, false);
    co_write(r, r->b, "f", &f, 0, "B", 1, FILE_SYNC, NFS3ERR_ACCES);

    co_chmod(r, r->a, "f", &f, 0666);
    g_assert_cmpuint(co_access(r, r->b, "f", &f, file_bits, NFS3_OK), ==,
                     ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND);
    co_write(r, r->b, "f", &f, 4, "+B", 2, FILE_SYNC, NFS3_OK);
    co_read(r, r->a, "f", &f, 0, 10, NFS3_OK, "data+B", 6, true);
    co_chmod(r, r->a, "f", &f, 0705);
    g_assert_cmpuint(co_access(r, r->b, "f", &f, file_bits, NFS3_OK), ==,
                     ACCESS3_READ | ACCESS3_EXECUTE);
    co_read(r, r->b, "f", &f, 0, 10, NFS3_OK, "data+B", 6, true);

    /* The owner changes: B becomes the owner's class. */
    co_chmod(r, r->a, "f", &f, 0604);
    pt_chown(r->a, &f, PT_OTHER_UID, PT_OTHER_GID);
    co_note(r, "A CHOWN f: NFS3_OK");
    a = co_getattr(r, r->b, "f", &f, NFS3_OK);
    g_assert_cmpuint(a.uid, ==, PT_OTHER_UID);
    g_assert_cmpuint(co_access(r, r->b, "f", &f, file_bits, NFS3_OK), ==,
                     ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND);

    /* A directory's search permission guards names B has cached. */
    d = co_mkdir(r, r->a, &r->dir, "d", 0755);
    x = co_create(r, r->a, &d, "x", 0644);
    for (int i = 0; i < 2; i++) {
        nr_fh h;
        co_lookup(r, r->b, &d, "x", NFS3_OK, &h);
        g_assert_true(nr_fh_equal(&h, &x));
        co_lookup(r, r->b, &d, "none", NFS3ERR_NOENT, NULL);
        g_assert_cmpuint(co_access(r, r->b, "d", &d, dir_bits, NFS3_OK), ==,
                         ACCESS3_READ | ACCESS3_LOOKUP);
    }
    co_chmod(r, r->a, "d", &d, 0700);
    co_lookup(r, r->b, &d, "x", NFS3ERR_ACCES, NULL);
    co_lookup(r, r->b, &d, "none", NFS3ERR_ACCES, NULL);
    g_assert_cmpuint(co_access(r, r->b, "d", &d, dir_bits, NFS3_OK), ==, 0);
    co_readdir(r, r->b, "d", &d, NFS3ERR_ACCES);
    co_chmod(r, r->a, "d", &d, 0711);
    co_lookup(r, r->b, &d, "x", NFS3_OK, NULL);
    co_lookup(r, r->b, &d, "none", NFS3ERR_NOENT, NULL);
    co_readdir(r, r->b, "d", &d, NFS3ERR_ACCES);
    co_remove(r, r->b, &d, "x", NFS3ERR_ACCES);
    co_chmod(r, r->a, "d", &d, 0777);
    g_assert_cmpuint(co_access(r, r->b, "d", &d, dir_bits, NFS3_OK), ==, dir_bits);
    co_remove(r, r->b, &d, "x", NFS3_OK);
    co_lookup(r, r->a, &d, "x", NFS3ERR_NOENT, NULL);
    nr_set_cred(r->b, NULL);
}

/* Writes by one client are read by the other at once. */
static void sc_write_read(co_run *r)
{
    enum { SPAN = 5 * 8192 };
    unsigned char *model = g_malloc0(SPAN);
    unsigned char *data = co_pattern(SPAN, 3);
    static const struct {
        uint32_t off, len;
        bool by_b, unstable;
    } w[] = {
        {0, 100, false, false},      {8190, 10, false, false},      {8192, 8192, true, false},
        {20000, 3000, false, true},  {50, 1, true, true},           {16380, 8200, false, false},
        {SPAN - 1, 1, false, false}, {4096, 8192 * 2, true, false},
    };
    uint64_t size = 0;
    nr_fh f, bf;
    fattr3 a;

    f = co_create(r, r->a, &r->dir, "f", 0644);
    co_lookup(r, r->b, &r->dir, "f", NFS3_OK, &bf);
    co_read(r, r->b, "f", &bf, 0, 100, NFS3_OK, NULL, 0, true);
    for (size_t i = 0; i < G_N_ELEMENTS(w); i++) {
        nr_ctx *writer = w[i].by_b ? r->b : r->a, *reader = w[i].by_b ? r->a : r->b;
        const unsigned char *bytes = data + (i * 977) % 1000;

        /* The reader's caches hold the file first. */
        co_read(r, reader, "f", &f, 0, SPAN, NFS3_OK, model, (uint32_t)size, true);
        co_write(r, writer, "f", &f, w[i].off, bytes, w[i].len,
                 w[i].unstable ? UNSTABLE : FILE_SYNC, NFS3_OK);
        memcpy(model + w[i].off, bytes, w[i].len);
        if (w[i].off + w[i].len > size)
            size = w[i].off + w[i].len;
        a = co_getattr(r, reader, "f", &f, NFS3_OK);
        g_assert_cmpuint(a.size, ==, size);
        co_read(r, reader, "f", &f, w[i].off, w[i].len, NFS3_OK, model + w[i].off, w[i].len,
                w[i].off + w[i].len == size);
        co_read(r, reader, "f", &f, 0, SPAN, NFS3_OK, model, (uint32_t)size, true);
        if (w[i].unstable) {
            COMMIT3res cres;
            pt_ok(writer, nr_commit(writer, &f, 0, 0, &cres));
            co_note(r, "%s COMMIT f: NFS3_OK", co_who(r, writer));
            co_read(r, reader, "f", &f, 0, SPAN, NFS3_OK, model, (uint32_t)size, true);
        }
    }
    g_free(data);
    g_free(model);
}

/* ---- running a scenario on every server --------------------------------- */

/* The hits of s's cache `which`, and of its peer's (shared). */
static double co_hits(const co_server *s, const char *which)
{
    double h = co_cache_metric(s, "pgnfs_cache_hits_total", which);

    if (s->shared && !s->peer)
        h += co_cache_metric(&co_servers[CO_SHARED_PEER], "pgnfs_cache_hits_total", which);
    return h;
}

static void co_run_open(co_run *r, co_server *s)
{
    const char *path = g_test_get_path();
    const char *slash = strrchr(path, '/');

    memset(r, 0, sizeof *r);
    r->srv = s;
    r->a = nr_open(s->port, NULL);
    r->b = nr_open(s->shared ? co_servers[CO_SHARED_PEER].port : s->port, NULL);
    if (!r->a || !r->b)
        g_error("cannot connect two clients to the %s server", s->name);
    r->log = g_string_new(NULL);
    r->ids = g_array_new(FALSE, FALSE, sizeof(co_seen));
    r->dir = co_mkdir(r, r->a, &s->root, slash ? slash + 1 : path, 0777);
}

/* Close r's clients; returns what was observed (g_free). */
static char *co_run_close(co_run *r)
{
    nr_close(r->a);
    nr_close(r->b);
    g_array_free(r->ids, TRUE);
    return g_string_free(r->log, FALSE);
}

/* The two records must be equal line for line (else the test fails,
 * printing both). Returns the number of observations. */
static unsigned co_agree(const co_server *sx, const char *x, const co_server *sy, const char *y)
{
    char **xl = g_strsplit(x, "\n", -1), **yl = g_strsplit(y, "\n", -1);
    unsigned n = g_strv_length(xl) - 1;

    for (unsigned i = 0; xl[i] || yl[i]; i++) {
        if (xl[i] && yl[i] && strcmp(xl[i], yl[i]) == 0)
            continue;
        g_printerr("# the %s server:\n%s# the %s server:\n%s", sx->name, x, sy->name, y);
        g_error("observation %u differs: the %s server '%s', the %s server '%s'", i + 1, sx->name,
                xl[i] ? xl[i] : "(none)", sy->name, yl[i] ? yl[i] : "(none)");
    }
    g_strfreev(xl);
    g_strfreev(yl);
    return n;
}

/*
 * Run sc on every server; every record must equal the uncached relatime
 * server's, and each cached server must have answered from its stat
 * cache (and from its naming cache when names says so).
 */
static void co_compare(co_scenario sc, bool names)
{
    double stat0[CO_NSERVERS], name0[CO_NSERVERS];
    char *seen[CO_NSERVERS];
    unsigned n = 0;

    for (int i = 0; i < CO_NSERVERS; i++) {
        co_run r;
        if (co_servers[i].peer)
            continue;
        if (co_servers[i].caches) {
            stat0[i] = co_hits(&co_servers[i], "stat");
            name0[i] = co_hits(&co_servers[i], "naming");
        }
        co_run_open(&r, &co_servers[i]);
        sc(&r);
        seen[i] = co_run_close(&r);
    }
    for (int i = 0; i < CO_NSERVERS; i++)
        if (i != CO_UNCACHED && !co_servers[i].peer)
            n = co_agree(&co_servers[CO_UNCACHED], seen[CO_UNCACHED], &co_servers[i], seen[i]);
    g_test_message("%u observations agree on %d servers", n, CO_NSERVERS - 1);
    if (g_test_verbose())
        g_printerr("%s", seen[CO_UNCACHED]);
    for (int i = 0; i < CO_NSERVERS; i++) {
        if (co_servers[i].peer)
            continue;
        g_free(seen[i]);
        if (!co_servers[i].caches)
            continue;
        double stat1 = co_hits(&co_servers[i], "stat");
        double name1 = co_hits(&co_servers[i], "naming");
        if (stat1 <= stat0[i])
            g_error("the %s server's stat cache answered nothing during the scenario (%.0f hits "
                    "before and after)",
                    co_servers[i].name, stat0[i]);
        if (names && name1 <= name0[i])
            g_error("the %s server's naming cache answered nothing during the scenario (%.0f "
                    "hits before and after)",
                    co_servers[i].name, name0[i]);
    }
}

static void test_rename_over(void)
{
    co_compare(sc_rename_over, true);
}

static void test_unlink_while_reading(void)
{
    co_compare(sc_unlink_while_reading, true);
}

static void test_truncate_while_reading(void)
{
    co_compare(sc_truncate_while_reading, false);
}

static void test_hard_links(void)
{
    co_compare(sc_hard_links, true);
}

static void test_rmdir_mkdir(void)
{
    co_compare(sc_rmdir_mkdir, true);
}

static void test_create_after_negative(void)
{
    co_compare(sc_create_after_negative, true);
}

static void test_chmod_access(void)
{
    co_compare(sc_chmod_access, true);
}

static void test_write_read(void)
{
    co_compare(sc_write_read, false);
}

/* The servers are what this test assumes: every cache on, or every off. */
static void test_servers(void)
{
    static const char *const caches[] = {"stat", "naming", "buffer", "small"};

    for (int i = 0; i < CO_NSERVERS; i++) {
        for (size_t k = 0; k < G_N_ELEMENTS(caches); k++) {
            double cap = co_cache_metric(&co_servers[i], "pgnfs_cache_capacity", caches[k]);
            if ((cap > 0) != co_servers[i].caches)
                g_error("the %s server's %s cache has capacity %.0f", co_servers[i].name, caches[k],
                        cap);
        }
    }
}

int main(int argc, char **argv)
{
    bool listing = false;

    /* Go on after a failed case (each runs in a child), as ptest does. */
    static char **args; /* reachable for the life of the program (LeakSanitizer) */
    args = g_new0(char *, (size_t)argc + 2);
    for (int i = 0; i < argc; i++) {
        args[i] = argv[i];
        listing |= strcmp(argv[i], "-l") == 0;
    }
    args[argc++] = "--keep-going";
    argv = args; /* kept for the life of the program, as g_test_init wants */
    g_test_init(&argc, &argv, NULL);
    for (int i = 0; i < CO_NSERVERS && !listing; i++)
        co_server_start(&co_servers[i]);
    pt_add("/coherence/servers", test_servers);
    pt_add("/coherence/rename_over", test_rename_over);
    pt_add("/coherence/unlink_while_reading", test_unlink_while_reading);
    pt_add("/coherence/truncate_while_reading", test_truncate_while_reading);
    pt_add("/coherence/hard_links", test_hard_links);
    pt_add("/coherence/rmdir_mkdir", test_rmdir_mkdir);
    pt_add("/coherence/create_after_negative", test_create_after_negative);
    pt_add("/coherence/chmod_access", test_chmod_access);
    pt_add("/coherence/write_read", test_write_read);
    int rc = g_test_run();
    for (int i = 0; i < CO_NSERVERS; i++)
        if (co_servers[i].server)
            tl_server_stop(co_servers[i].server);
    return rc;
}
