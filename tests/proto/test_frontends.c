/*
 * test_frontends.c -- several servers on one file system (issue 19).
 *
 *   /frontends/single_refuses   a server with [cache] coherence = single
 *                               refuses to start beside a live server
 *                               (single or shared), naming it and what to
 *                               change; a shared one refuses beside a
 *                               single one; `pgnfs frontends` lists it.
 *   /frontends/stale_rows       rows of dead servers (an old heartbeat, or
 *                               a database session that is gone) block
 *                               nobody, and go when a server registers.
 *   /frontends/solo_session_lost  a shared server alone (solo) whose
 *                               heartbeat session is killed still counts:
 *                               one that joins is not solo too, and both
 *                               end up reading the invalidation log.
 *   /frontends/close_to_open    `pgnfs serve --data DIR` in shared mode, a
 *                               second server joining through `pgnfs
 *                               conninfo --data DIR`, every cache and the
 *                               write-back buffer on, noatime: rounds of
 *                               changes through one (create, UNSTABLE
 *                               write + COMMIT, FILE_SYNC write, chmod,
 *                               chown, truncate, rename, remove) each
 *                               seen through the other right after the
 *                               reply, after the other had cached the old
 *                               state (attributes, names found and absent,
 *                               listings, data); the two swap roles every
 *                               round. Zero stale answers, and `pgnfs
 *                               fsck` clean at the end. The first server
 *                               is solo until the second joins; then
 *                               neither is.
 *   /frontends/rounds           three servers, FR_MANY rounds of one change
 *                               through one (chmod, FILE_SYNC write,
 *                               UNSTABLE write + COMMIT, rename, remove
 *                               and create again) each checked through the
 *                               next one, which had cached the old state
 *                               (attributes, names, listings, data); every
 *                               answer through any server is checked
 *                               against a model. Zero stale answers.
 *   /frontends/concurrent       three threads, each through its own
 *                               server, creating, renaming (also across
 *                               directories), removing files and making
 *                               and removing directories over a small pool
 *                               of names; then every server lists the
 *                               same names with the same handles, and
 *                               `pgnfs fsck` is clean.
 *   /frontends/log              the invalidation log is trimmed once both
 *                               servers have read it; a server whose place
 *                               in the log was trimmed past (taken for
 *                               dead) resets its caches instead of
 *                               answering stale; a server whose reading
 *                               session is killed (again and again) never
 *                               answers stale.
 *
 * NOTES
 *   Each case has servers of its own: on a fresh database of the test's
 *   private cluster (the first two), or on an embedded cluster (the last).
 *   Nothing waits on time: each step waits for a reply, or for a process
 *   to exit (bounded by timeout(1) so that a server that wrongly keeps
 *   serving fails the case instead of hanging it).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptest.h"

#define FR_ROUNDS 150
#define FR_MANY   2000 /* rounds of /frontends/rounds */
#define FR_SLOTS  8    /* files those rounds change */
#define FR_CONC   300  /* operations per thread of /frontends/concurrent */

/* Run `pgnfs ARGS...` (at most 120 s); returns stdout (g_free), *status
 * its exit status, *errout its stderr (g_free; NULL: not wanted). */
static char *fr_pgnfs(int *status, char **errout, const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    char *out = NULL, *err = NULL;
    GError *gerr = NULL;
    int wait = 0;

    g_ptr_array_add(argv, (char *)"timeout");
    g_ptr_array_add(argv, (char *)"120");
    g_ptr_array_add(argv, (char *)tl_pgnfs_bin());
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, (char *)*a);
    g_ptr_array_add(argv, NULL);
    if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                      &wait, &gerr))
        g_error("cannot run %s: %s", tl_pgnfs_bin(), gerr->message);
    *status = WIFEXITED(wait) ? WEXITSTATUS(wait) : -1;
    if (errout)
        *errout = err;
    else
        g_free(err);
    g_ptr_array_free(argv, TRUE);
    return out;
}

/* `pgnfs sql --conninfo ci -c SQL` must succeed. */
static void fr_sql(const char *ci, const char *sql)
{
    int st;
    char *err = NULL;
    char *out = fr_pgnfs(&st, &err, (const char *[]){"sql", "--conninfo", ci, "-c", sql, NULL});

    if (st != 0)
        g_error("pgnfs sql '%s' exited %d: %s", sql, st, err);
    g_free(out);
    g_free(err);
}

/* How many lines of `pgnfs frontends` hold every one of the words. */
static unsigned fr_count(const char *ci, const char *const *words)
{
    int st;
    char *out = fr_pgnfs(&st, NULL, (const char *[]){"frontends", "--conninfo", ci, NULL});
    char **lines = g_strsplit(out, "\n", -1);
    unsigned n = 0;

    g_assert_cmpint(st, ==, 0);
    for (char **l = lines; *l; l++) {
        bool all = **l && **l != '#';
        for (const char *const *w = words; *w && all; w++)
            all = strstr(*l, *w) != NULL;
        n += all;
    }
    g_strfreev(lines);
    g_free(out);
    return n;
}

static int64_t fr_sql_int(const char *ci, const char *q);
static void fr_wait_sql(const char *ci, const char *q, int64_t want, bool exact);

/* A server on database ci; NULL-terminated extra settings. */
static tl_server *fr_server(const char *ci, const char *coherence, const char *extra)
{
    char *db = g_strdup_printf("database.conninfo=%s", ci);
    char *coh = g_strdup_printf("cache.coherence=%s", coherence);
    const char *const over[] = {db, coh, "server.portmap=off", extra, NULL};
    tl_server *s = tl_server_start(over);

    g_free(db);
    g_free(coh);
    return s;
}

/* `pgnfs serve` on ci must refuse to start, saying why. */
static void fr_refused(const char *ci, const char *coherence, const char *want)
{
    char *dir = g_dir_make_tmp("pgnfs-fr-XXXXXX", NULL);
    char *coh = g_strdup_printf("cache.coherence=%s", coherence);
    char *err = NULL, *out;
    int st;

    out = fr_pgnfs(&st, &err,
                   (const char *[]){"serve", "--conninfo", ci, "--data", dir, "--port", "0",
                                    "--listen", "127.0.0.1", "--set", "server.portmap=off", "--set",
                                    coh, NULL});
    if (st == 0 || st == 124 || !strstr(err, "another pgnfs server") || !strstr(err, want))
        g_error("pgnfs serve (coherence %s) beside a live server: exit %d, expected a refusal "
                "naming '%s'; it said: %s",
                coherence, st, want, err);
    g_free(out);
    g_free(err);
    g_free(coh);
    rmdir(dir);
    g_free(dir);
}

static void test_single_refuses(void)
{
    char *ci = tl_fresh_fs();
    tl_server *s = fr_server(ci, "single", NULL);

    g_assert_cmpuint(fr_count(ci, (const char *[]){"coherence=single", "state=live", NULL}), ==, 1);
    fr_refused(ci, "single", "cache.coherence=shared");
    fr_refused(ci, "shared", "cache.coherence=shared");
    tl_server_stop(s);
    /* Stopped cleanly: its row is gone. */
    g_assert_cmpuint(fr_count(ci, (const char *[]){"id=", NULL}), ==, 0);

    /* A shared server refuses a single one as well; another shared one
     * joins. */
    s = fr_server(ci, "shared", NULL);
    fr_refused(ci, "single", "stop the other one");
    tl_server *t = fr_server(ci, "shared", NULL);
    g_assert_cmpuint(fr_count(ci, (const char *[]){"coherence=shared", "state=live", NULL}), ==, 2);
    tl_server_stop(t);
    tl_server_stop(s);
    g_free(ci);
}

static void test_stale_rows(void)
{
    char *ci = tl_fresh_fs();

    /* A server whose heartbeat stopped an hour ago (its session still
     * there: this one's), and one whose session is gone (no backend has
     * a negative pid). */
    fr_sql(ci, "INSERT INTO pgnfs_frontends (host, address, port, pid, coherence, backend_pid,"
               " started, heartbeat) VALUES ('gone-host', '10.0.0.1', 2049, 1, 'single',"
               " pg_backend_pid(), now() - interval '2 hours', now() - interval '1 hour')");
    fr_sql(ci, "INSERT INTO pgnfs_frontends (host, address, port, pid, coherence, backend_pid)"
               " VALUES ('crashed-host', '10.0.0.2', 2049, 2, 'shared', -1)");
    g_assert_cmpuint(fr_count(ci, (const char *[]){"state=dead", NULL}), ==, 2);
    tl_server *s = fr_server(ci, "single", NULL);
    /* Registering removed the dead rows. */
    g_assert_cmpuint(fr_count(ci, (const char *[]){"id=", NULL}), ==, 1);
    g_assert_cmpuint(fr_count(ci, (const char *[]){"state=live", "coherence=single", NULL}), ==, 1);
    tl_server_stop(s);
    g_free(ci);
}

/* A solo server whose heartbeat session is gone may still answer from its
 * caches: a server that joins then must not be solo too, and both end up
 * reading the log. */
static void test_solo_session_lost(void)
{
    char *ci = tl_fresh_fs();
    tl_server *a = fr_server(ci, "shared", NULL), *b;
    char *q;
    int64_t pid;

    g_assert_cmpuint(fr_count(ci, (const char *[]){"solo=yes", "state=live", NULL}), ==, 1);
    pid = fr_sql_int(ci, "SELECT backend_pid FROM pgnfs_frontends");
    q = g_strdup_printf("SELECT count(*) FROM pg_stat_activity WHERE pid = %" PRId64, pid);
    fr_sql(ci, "SELECT pg_terminate_backend(backend_pid) FROM pgnfs_frontends");
    fr_wait_sql(ci, q, 0, true);
    g_free(q);
    b = fr_server(ci, "shared", NULL);
    g_assert_cmpuint(
        fr_count(ci, (const char *[]){"coherence=shared", "solo=no", "state=live", NULL}), ==, 2);
    tl_server_stop(b);
    tl_server_stop(a);
    g_free(ci);
}

/* ---- close-to-open across two frontends ---------------------------------- */

static int fr_lookup(nr_ctx *c, const nr_fh *dir, const char *name, nr_fh *out)
{
    LOOKUP3res res;
    int st = nr_lookup(c, dir, name, &res);

    if (st == NFS3_OK && out)
        *out = nr_fh_from(&res.LOOKUP3res_u.resok.object);
    return st;
}

/* Does a READDIRPLUS of dir (one page) list name? */
static bool fr_listed(nr_ctx *c, const nr_fh *dir, const char *name)
{
    READDIRPLUS3res res;
    bool found = false;

    pt_ok(c, nr_readdirplus(c, dir, 0, NULL, 65536, 65536, &res));
    g_assert_true(res.READDIRPLUS3res_u.resok.reply.eof);
    for (entryplus3 *e = res.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry)
        found = found || strcmp(e->name, name) == 0;
    return found;
}

/* READ of the whole file must give exactly want[0 .. len). */
static void fr_read(nr_ctx *c, const nr_fh *fh, const unsigned char *want, uint32_t len)
{
    READ3res res;

    pt_ok(c, nr_read(c, fh, 0, 65536, &res));
    g_assert_cmpuint(res.READ3res_u.resok.count, ==, len);
    g_assert_true(res.READ3res_u.resok.eof);
    g_assert_cmpmem(res.READ3res_u.resok.data.data_val, len, want, len);
}

static void fr_setattr(nr_ctx *c, const nr_fh *fh, sattr3 sa)
{
    SETATTR3res res;

    pt_ok(c, nr_setattr(c, fh, &sa, NULL, &res));
}

/* One round: w changes, r (the other frontend) looks, after caching. */
static void fr_round(nr_ctx *w, nr_ctx *r, const nr_fh *dir, unsigned i)
{
    char f[32], g[32];
    unsigned char data[3000];
    nr_fh fw, fr, x;
    fattr3 a;
    WRITE3res wres;
    COMMIT3res cres;
    REMOVE3res rres;
    RENAME3res nres;
    uint32_t len = 100 + (i * 37) % 2900;

    g_snprintf(f, sizeof f, "f%u", i);
    g_snprintf(g, sizeof g, "g%u", i);
    for (uint32_t k = 0; k < len; k++)
        data[k] = (unsigned char)(i * 31 + k * 7);

    /* Names: absent, then created. */
    pt_stat(r, fr_lookup(r, dir, f, NULL), NFS3ERR_NOENT);
    g_assert_false(fr_listed(r, dir, f));
    pt_getattr(r, dir);
    fw = pt_create(w, dir, f, 0644);
    pt_ok(r, fr_lookup(r, dir, f, &fr));
    g_assert_true(nr_fh_equal(&fw, &fr));
    g_assert_true(fr_listed(r, dir, f));

    /* Data: the reader holds the empty file, the writer writes UNSTABLE
     * and commits (a close); then FILE_SYNC over part of it. */
    a = pt_getattr(r, &fr);
    g_assert_cmpuint(a.size, ==, 0);
    fr_read(r, &fr, data, 0);
    pt_ok(w, nr_write(w, &fw, 0, data, len, UNSTABLE, &wres));
    pt_ok(w, nr_commit(w, &fw, 0, 0, &cres));
    a = pt_getattr(r, &fr);
    g_assert_cmpuint(a.size, ==, len);
    fr_read(r, &fr, data, len);
    memset(data + 10, 'x', 20);
    pt_ok(w, nr_write(w, &fw, 10, data + 10, 20, FILE_SYNC, &wres));
    fr_read(r, &fr, data, len);

    /* Attributes: chmod, chown, truncate. */
    fr_setattr(w, &fw, nr_sattr_mode(0600 | (i % 8) << 3));
    a = pt_getattr(r, &fr);
    g_assert_cmpuint(a.mode & 07777, ==, 0600 | (i % 8) << 3);
    sattr3 own = nr_sattr_none();
    own.uid.set_it = TRUE;
    own.uid.set_uid3_u.uid = 1000 + i;
    fr_setattr(w, &fw, own);
    a = pt_getattr(r, &fr);
    g_assert_cmpuint(a.uid, ==, 1000 + i);
    sattr3 cut = nr_sattr_none();
    cut.size.set_it = TRUE;
    cut.size.set_size3_u.size = len / 2;
    fr_setattr(w, &fw, cut);
    a = pt_getattr(r, &fr);
    g_assert_cmpuint(a.size, ==, len / 2);
    fr_read(r, &fr, data, len / 2);

    /* Rename, then remove. */
    pt_stat(r, fr_lookup(r, dir, g, NULL), NFS3ERR_NOENT);
    pt_ok(w, nr_rename(w, dir, f, dir, g, &nres));
    pt_stat(r, fr_lookup(r, dir, f, NULL), NFS3ERR_NOENT);
    pt_ok(r, fr_lookup(r, dir, g, &x));
    g_assert_true(nr_fh_equal(&x, &fr));
    g_assert_false(fr_listed(r, dir, f));
    g_assert_true(fr_listed(r, dir, g));
    pt_ok(w, nr_remove(w, dir, g, &rres));
    pt_stat(r, fr_lookup(r, dir, g, NULL), NFS3ERR_NOENT);
    g_assert_false(fr_listed(r, dir, g));
    GETATTR3res gres;
    pt_stat(r, nr_getattr(r, &fr, &gres), NFS3ERR_STALE);
    nr_arena_clear(w);
    nr_arena_clear(r);
}

static void test_close_to_open(void)
{
    const char *const over_a[] = {"cache.coherence=shared", "storage.relatime=false",
                                  "server.portmap=off", NULL};
    tl_server *a = tl_server_start(over_a), *b;
    const char *dir = tl_server_data_dir(a);
    char *err = NULL, *ci, *db, *fsck;
    nr_ctx *ca, *cb, *m;
    mountres3 mr;
    nr_fh root, rb, d;
    int st;

    /* The second server joins through the embedded cluster's conninfo. */
    ci = fr_pgnfs(&st, &err, (const char *[]){"conninfo", "--data", dir, NULL});
    if (st != 0)
        g_error("pgnfs conninfo --data %s exited %d: %s", dir, st, err);
    g_strchomp(ci);
    g_assert_nonnull(strstr(ci, "dbname=pgnfs"));
    db = g_strdup_printf("database.conninfo=%s", ci);
    /* Alone, the first server is solo (no barriers); once the second has
     * joined (it waits for that), neither is. */
    g_assert_cmpuint(fr_count(ci, (const char *[]){"solo=yes", "state=live", NULL}), ==, 1);
    const char *const over_b[] = {db, "cache.coherence=shared", "storage.relatime=false",
                                  "server.portmap=off", NULL};
    b = tl_server_start(over_b);
    g_assert_cmpuint(fr_count(ci, (const char *[]){"coherence=shared", "state=live", NULL}), ==, 2);
    g_assert_cmpuint(fr_count(ci, (const char *[]){"solo=no", "state=live", NULL}), ==, 2);
    /* Two lock managers on one host, kept apart by their ports. */
    char *names = fr_pgnfs(&st, NULL,
                           (const char *[]){"sql", "--conninfo", ci, "-qAt", "-c",
                                            "SELECT count(*) FROM pgnfs_nlm_server", NULL});
    g_assert_cmpint(st, ==, 0);
    g_assert_cmpstr(g_strstrip(names), ==, "2");
    g_free(names);

    m = nr_open(tl_server_port(a), NULL);
    g_assert_nonnull(m);
    g_assert_cmpint(nr_mnt(m, "/", &mr, &root), ==, MNT3_OK);
    nr_close(m);
    m = nr_open(tl_server_port(b), NULL);
    g_assert_nonnull(m);
    g_assert_cmpint(nr_mnt(m, "/", &mr, &rb), ==, MNT3_OK);
    nr_close(m);
    /* One file system: the same handles through either server. */
    g_assert_true(nr_fh_equal(&root, &rb));
    ca = nr_open(tl_server_port(a), NULL);
    cb = nr_open(tl_server_port(b), NULL);
    g_assert_nonnull(ca);
    g_assert_nonnull(cb);
    d = pt_mkdir(ca, &root, "cto", 0777);
    for (unsigned i = 0; i < FR_ROUNDS; i++) {
        if (i % 2 == 0)
            fr_round(ca, cb, &d, i);
        else
            fr_round(cb, ca, &d, i);
    }
    g_test_message("%u rounds, no stale answer", FR_ROUNDS);
    nr_close(ca);
    nr_close(cb);
    tl_server_stop(b);
    g_free(err);
    fsck = fr_pgnfs(&st, &err, (const char *[]){"fsck", "--conninfo", ci, NULL});
    if (st != 0)
        g_error("pgnfs fsck exited %d: %s%s", st, fsck, err);
    g_free(fsck);
    tl_server_stop(a);
    g_free(err);
    g_free(db);
    g_free(ci);
}

/* ---- three frontends, many rounds ---------------------------------------- */

typedef struct {
    tl_server *s[3];
    unsigned n;
    char *ci; /* the database's conninfo */
    nr_ctx *c[3];
    nr_fh root;
} fr_group;

/* n shared servers on one embedded cluster (the others join through
 * `pgnfs conninfo`), a client on each, the root handle. */
static void fr_group_start(fr_group *g, unsigned n)
{
    const char *const over_a[] = {"cache.coherence=shared", "storage.relatime=false",
                                  "server.portmap=off", NULL};
    char *err = NULL, *db;
    mountres3 mr;
    int st;

    memset(g, 0, sizeof *g);
    g->n = n;
    g->s[0] = tl_server_start(over_a);
    g->ci = fr_pgnfs(&st, &err,
                     (const char *[]){"conninfo", "--data", tl_server_data_dir(g->s[0]), NULL});
    if (st != 0)
        g_error("pgnfs conninfo exited %d: %s", st, err);
    g_strchomp(g->ci);
    g_free(err);
    db = g_strdup_printf("database.conninfo=%s", g->ci);
    const char *const over_b[] = {db, "cache.coherence=shared", "storage.relatime=false",
                                  "server.portmap=off", NULL};
    for (unsigned i = 1; i < n; i++)
        g->s[i] = tl_server_start(over_b);
    g_free(db);
    for (unsigned i = 0; i < n; i++) {
        nr_ctx *m = nr_open(tl_server_port(g->s[i]), NULL);
        nr_fh root;
        g_assert_nonnull(m);
        g_assert_cmpint(nr_mnt(m, "/", &mr, &root), ==, MNT3_OK);
        nr_close(m);
        if (i == 0)
            g->root = root;
        g_assert_true(nr_fh_equal(&root, &g->root));
        g->c[i] = nr_open(tl_server_port(g->s[i]), NULL);
        g_assert_nonnull(g->c[i]);
    }
}

/* Stop everything; with fsck, `pgnfs fsck` must be clean first. */
static void fr_group_stop(fr_group *g, bool fsck)
{
    for (unsigned i = 0; i < g->n; i++)
        nr_close(g->c[i]);
    for (unsigned i = g->n; i-- > 1;)
        tl_server_stop(g->s[i]);
    if (fsck) {
        int st;
        char *err = NULL;
        char *out = fr_pgnfs(&st, &err, (const char *[]){"fsck", "--conninfo", g->ci, NULL});
        if (st != 0)
            g_error("pgnfs fsck exited %d: %s%s", st, out, err);
        g_free(out);
        g_free(err);
    }
    tl_server_stop(g->s[0]);
    g_free(g->ci);
}

/* One file of /frontends/rounds as it must look. */
typedef struct {
    char name[24];
    unsigned gen; /* renames so far: the name's suffix */
    nr_fh fh;
    uint32_t mode, len;
    unsigned char tag; /* the data's pattern */
} fr_slot;

#define FR_DATA 1400

static void fr_fill(unsigned char *buf, uint32_t len, unsigned char tag)
{
    for (uint32_t k = 0; k < len; k++)
        buf[k] = (unsigned char)(tag + k * 13);
}

/* Slot m through c: its name, attributes and data as the model says. */
static void fr_check(nr_ctx *c, const nr_fh *dir, const fr_slot *m)
{
    unsigned char want[FR_DATA];
    nr_fh x;
    fattr3 a;

    pt_ok(c, fr_lookup(c, dir, m->name, &x));
    g_assert_true(nr_fh_equal(&x, &m->fh));
    a = pt_getattr(c, &m->fh);
    g_assert_cmpuint(a.mode & 07777, ==, m->mode);
    g_assert_cmpuint(a.size, ==, m->len);
    fr_fill(want, m->len, m->tag);
    fr_read(c, &m->fh, want, m->len);
}

/* Round i: the writer changes one slot, the reader had cached it. */
static void fr_many_round(fr_group *g, const nr_fh *dir, fr_slot *slots, unsigned i)
{
    nr_ctx *w = g->c[i % g->n], *r = g->c[(i + 1) % g->n];
    fr_slot *m = &slots[i % FR_SLOTS];
    uint32_t full = 300 + (uint32_t)(i % FR_SLOTS) * 130;
    unsigned char data[FR_DATA];
    char next[24];
    WRITE3res wres;
    COMMIT3res cres;
    RENAME3res nres;
    REMOVE3res rres;
    GETATTR3res gres;
    nr_fh old;

    fr_check(r, dir, m);
    switch ((i / FR_SLOTS) % 5) {
    case 0: /* attributes */
        m->mode = 0600 | ((((m->mode >> 3) & 7) + 1) % 8) << 3;
        fr_setattr(w, &m->fh, nr_sattr_mode(m->mode));
        break;
    case 1: /* data, stable */
    case 2: /* data, UNSTABLE then COMMIT (a close) */
        m->tag++;
        m->len = full;
        fr_fill(data, m->len, m->tag);
        pt_ok(w, nr_write(w, &m->fh, 0, data, m->len,
                          (i / FR_SLOTS) % 5 == 1 ? FILE_SYNC : UNSTABLE, &wres));
        if ((i / FR_SLOTS) % 5 == 2)
            pt_ok(w, nr_commit(w, &m->fh, 0, 0, &cres));
        break;
    case 3: /* names: the new one was absent for the reader */
        g_snprintf(next, sizeof next, "s%u-%u", i % FR_SLOTS, m->gen + 1);
        pt_stat(r, fr_lookup(r, dir, next, NULL), NFS3ERR_NOENT);
        g_assert_true(fr_listed(r, dir, m->name));
        pt_ok(w, nr_rename(w, dir, m->name, dir, next, &nres));
        pt_stat(r, fr_lookup(r, dir, m->name, NULL), NFS3ERR_NOENT);
        g_assert_false(fr_listed(r, dir, m->name));
        g_assert_true(fr_listed(r, dir, next));
        g_strlcpy(m->name, next, sizeof m->name);
        m->gen++;
        break;
    default: /* a new file under the same name */
        old = m->fh;
        pt_ok(w, nr_remove(w, dir, m->name, &rres));
        m->fh = pt_create(w, dir, m->name, 0644);
        m->mode = 0644;
        m->len = 0;
        pt_stat(r, nr_getattr(r, &old, &gres), NFS3ERR_STALE);
        break;
    }
    fr_check(r, dir, m);
    if (i % 16 == 0)
        fr_check(g->c[(i + 2) % g->n], dir, m);
    nr_arena_clear(w);
    nr_arena_clear(r);
}

static void test_rounds(void)
{
    fr_group g;
    fr_slot slots[FR_SLOTS];
    unsigned char data[FR_DATA];
    WRITE3res wres;
    nr_fh d;
    gint64 t0;

    fr_group_start(&g, 3);
    d = pt_mkdir(g.c[0], &g.root, "many", 0777);
    for (unsigned k = 0; k < FR_SLOTS; k++) {
        fr_slot *m = &slots[k];
        memset(m, 0, sizeof *m);
        g_snprintf(m->name, sizeof m->name, "s%u-0", k);
        m->fh = pt_create(g.c[0], &d, m->name, 0644);
        m->mode = 0644;
        m->tag = (unsigned char)k;
        m->len = 300 + k * 130;
        fr_fill(data, m->len, m->tag);
        pt_ok(g.c[0], nr_write(g.c[0], &m->fh, 0, data, m->len, FILE_SYNC, &wres));
    }
    t0 = g_get_monotonic_time();
    for (unsigned i = 0; i < FR_MANY; i++)
        fr_many_round(&g, &d, slots, i);
    g_test_message("%u rounds across 3 servers in %.1f s, no stale answer", FR_MANY,
                   (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC);
    fr_group_stop(&g, true);
}

/* ---- concurrent changes through three frontends ---------------------------- */

typedef struct {
    nr_ctx *c;
    nr_fh d[2];
    uint32_t seed;
    unsigned done;
} fr_worker;

/* Is st one of the statuses a racing name operation may get? */
static bool fr_racy_ok(int st)
{
    return st == NFS3_OK || st == NFS3ERR_NOENT || st == NFS3ERR_EXIST || st == NFS3ERR_NOTEMPTY ||
           st == NFS3ERR_ISDIR || st == NFS3ERR_NOTDIR || st == NFS3ERR_INVAL ||
           st == NFS3ERR_JUKEBOX;
}

static gpointer fr_conc_thread(gpointer p)
{
    fr_worker *w = p;

    for (unsigned i = 0; i < FR_CONC; i++) {
        uint32_t r = w->seed = w->seed * 1103515245u + 12345u;
        uint32_t v = r >> 8;
        char a[16], b[16];
        const nr_fh *da = &w->d[v % 2], *db = &w->d[(v / 2) % 2];
        sattr3 sa = nr_sattr_mode(0755);
        int st;

        g_snprintf(a, sizeof a, "n%u", (v / 4) % 10);
        g_snprintf(b, sizeof b, "n%u", (v / 40) % 10);
        switch ((v / 400) % 5) {
        case 0: {
            CREATE3res res;
            st = nr_create(w->c, da, a, GUARDED, &sa, NULL, &res);
            break;
        }
        case 1: {
            RENAME3res res;
            st = nr_rename(w->c, da, a, db, b, &res);
            break;
        }
        case 2: {
            REMOVE3res res;
            st = nr_remove(w->c, da, a, &res);
            break;
        }
        case 3: {
            MKDIR3res res;
            st = nr_mkdir(w->c, da, a, &sa, &res);
            break;
        }
        default: {
            RMDIR3res res;
            st = nr_rmdir(w->c, da, a, &res);
            break;
        }
        }
        if (!fr_racy_ok(st))
            g_error("a racing name operation got %d (%s)", st, nr_error(w->c));
        nr_arena_clear(w->c);
        w->done++;
    }
    return NULL;
}

/* The names of directory ino, from the database: "a,b,c" sorted. */
static char *fr_sql_names(const char *ci, uint64_t ino)
{
    char *q = g_strdup_printf("SELECT coalesce(string_agg(convert_from(name, 'UTF8') || '='"
                              " || inode, ',' ORDER BY name), '') FROM naming"
                              " WHERE parent = %" PRIu64,
                              ino);
    int st;
    char *out =
        fr_pgnfs(&st, NULL, (const char *[]){"sql", "--conninfo", ci, "-qAt", "-c", q, NULL});

    g_assert_cmpint(st, ==, 0);
    g_free(q);
    return g_strstrip(out);
}

static int fr_strcmp_p(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The same from a READDIRPLUS listing through c (names and file ids). */
static char *fr_nfs_names(nr_ctx *c, const nr_fh *dir)
{
    READDIRPLUS3res res;
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    GString *out = g_string_new("");

    pt_ok(c, nr_readdirplus(c, dir, 0, NULL, 65536, 65536, &res));
    g_assert_true(res.READDIRPLUS3res_u.resok.reply.eof);
    for (entryplus3 *e = res.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry)
        if (strcmp(e->name, ".") != 0 && strcmp(e->name, "..") != 0)
            g_ptr_array_add(names, g_strdup_printf("%s=%" PRIu64, e->name, (uint64_t)e->fileid));
    g_ptr_array_sort(names, fr_strcmp_p);
    for (guint i = 0; i < names->len; i++) {
        /* sorted as the SQL sorts bytes: names "nN=ino" differ before '=' */
        g_string_append_printf(out, "%s%s", i ? "," : "", (char *)g_ptr_array_index(names, i));
    }
    g_ptr_array_free(names, TRUE);
    nr_arena_clear(c);
    return g_string_free(out, FALSE);
}

static void test_concurrent(void)
{
    fr_group g;
    fr_worker w[3];
    GThread *t[3];
    nr_fh d[2];
    uint64_t ino[2];

    fr_group_start(&g, 3);
    d[0] = pt_mkdir(g.c[0], &g.root, "race0", 0777);
    d[1] = pt_mkdir(g.c[0], &g.root, "race1", 0777);
    for (unsigned k = 0; k < 2; k++)
        ino[k] = pt_getattr(g.c[0], &d[k]).fileid;
    /* Every server has cached both (empty) directories first. */
    for (unsigned i = 0; i < 3; i++)
        for (unsigned k = 0; k < 2; k++)
            g_free(fr_nfs_names(g.c[i], &d[k]));
    for (unsigned i = 0; i < 3; i++) {
        w[i] = (fr_worker){.c = g.c[i], .d = {d[0], d[1]}, .seed = 7919u * (i + 1)};
        t[i] = g_thread_new("fr-conc", fr_conc_thread, &w[i]);
    }
    for (unsigned i = 0; i < 3; i++) {
        g_thread_join(t[i]);
        g_assert_cmpuint(w[i].done, ==, FR_CONC);
    }
    /* Quiet now: every server lists what the database holds, and finds
     * each name of the pool (or not) as the database says. */
    for (unsigned k = 0; k < 2; k++) {
        char *truth = fr_sql_names(g.ci, ino[k]);
        char **parts = g_strsplit(truth, ",", -1);
        char *sorted;
        qsort(parts, g_strv_length(parts), sizeof *parts, fr_strcmp_p);
        sorted = g_strjoinv(",", parts);
        for (unsigned i = 0; i < 3; i++) {
            char *got = fr_nfs_names(g.c[i], &d[k]);
            if (strcmp(got, sorted) != 0)
                g_error("server %u lists race%u as {%s}; the database holds {%s}", i + 1, k, got,
                        sorted);
            g_free(got);
            for (unsigned n = 0; n < 10; n++) {
                char name[16], key[32];
                LOOKUP3res res;
                g_snprintf(name, sizeof name, "n%u", n);
                g_snprintf(key, sizeof key, "%s=", name);
                bool want = false;
                for (char **q = parts; *q; q++)
                    want = want || g_str_has_prefix(*q, key);
                pt_stat(g.c[i], nr_lookup(g.c[i], &d[k], name, &res),
                        want ? NFS3_OK : NFS3ERR_NOENT);
                nr_arena_clear(g.c[i]);
            }
        }
        g_strfreev(parts);
        g_free(sorted);
        g_free(truth);
    }
    fr_group_stop(&g, true);
}

/* ---- the invalidation log: trimmed, trimmed past, session lost ------------ */

/* The first value of `pgnfs sql -qAt -c q`, as a number. */
static int64_t fr_sql_int(const char *ci, const char *q)
{
    int st;
    char *out =
        fr_pgnfs(&st, NULL, (const char *[]){"sql", "--conninfo", ci, "-qAt", "-c", q, NULL});
    int64_t v;

    g_assert_cmpint(st, ==, 0);
    v = g_ascii_strtoll(g_strstrip(out), NULL, 10);
    g_free(out);
    return v;
}

/* Wait (at most 120 s) until `q` gives at least / exactly want. */
static void fr_wait_sql(const char *ci, const char *q, int64_t want, bool exact)
{
    gint64 until = g_get_monotonic_time() + 120 * G_USEC_PER_SEC;
    int64_t v = fr_sql_int(ci, q);

    for (; exact ? v != want : v < want; v = fr_sql_int(ci, q)) {
        if (g_get_monotonic_time() > until)
            g_error("'%s' gave %" PRId64 ", waited 120 s for %s%" PRId64, q, v,
                    exact ? "" : "at least ", want);
        g_usleep(200 * 1000);
    }
}

static void test_log(void)
{
    fr_group g;
    nr_fh d, f;
    fattr3 a;
    char *q, *log;

    fr_group_start(&g, 2);
    d = pt_mkdir(g.c[0], &g.root, "log", 0777);
    for (unsigned i = 0; i < 100; i++) {
        char name[16];
        g_snprintf(name, sizeof name, "f%u", i);
        pt_create(g.c[0], &d, name, 0644);
    }
    /* Server 2 read them, then both moved past them: the log is empty. */
    q = g_strdup_printf("SELECT invalidations FROM pgnfs_frontends WHERE port = %u",
                        tl_server_port(g.s[1]));
    fr_wait_sql(g.ci, q, 200, false);
    g_free(q);
    fr_wait_sql(g.ci, "SELECT count(*) FROM pgnfs_inval_log", 0, true);

    /* Trimmed past: server 2 caches f0, then a change whose log rows are
     * gone with the trim mark above every server's place (as when the
     * others trim past a server they took for dead). */
    f = pt_lookup(g.c[1], &d, "f0");
    a = pt_getattr(g.c[1], &f);
    g_assert_cmpuint(a.mode & 07777, ==, 0644);
    q = g_strdup_printf("BEGIN; UPDATE fileatt SET mode = 448, change = change + 1"
                        " WHERE inode = %" PRIu64 ";"
                        " DELETE FROM pgnfs_inval_log;"
                        " INSERT INTO pgnfs_inval_trim (id, below)"
                        "  VALUES (1, (pg_current_xact_id()::text::int8 + 1)::text::xid8)"
                        "  ON CONFLICT (id) DO UPDATE SET below = EXCLUDED.below; COMMIT",
                        (uint64_t)a.fileid);
    fr_sql(g.ci, q);
    g_free(q);
    a = pt_getattr(g.c[1], &f);
    g_assert_cmpuint(a.mode & 07777, ==, 0700);
    log = tl_server_log(g.s[1]);
    g_assert_nonnull(strstr(log, "trimmed past"));
    g_free(log);

    /* The reading sessions killed, again and again, each time right
     * before a change through server 1: server 2 never answers stale. */
    for (unsigned i = 0; i < 10; i++) {
        uint32_t mode = 0600 | (i % 8) << 3;
        a = pt_getattr(g.c[1], &f);
        fr_sql(g.ci, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                     " WHERE application_name = 'pgnfs-frontend-listen'");
        fr_setattr(g.c[0], &f, nr_sattr_mode(mode));
        a = pt_getattr(g.c[1], &f);
        g_assert_cmpuint(a.mode & 07777, ==, mode);
        nr_arena_clear(g.c[0]);
        nr_arena_clear(g.c[1]);
    }
    log = tl_server_log(g.s[1]);
    g_assert_nonnull(strstr(log, "lost the database session that reads cache invalidations"));
    g_free(log);
    fr_group_stop(&g, true);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    pt_add("/frontends/single_refuses", test_single_refuses);
    pt_add("/frontends/stale_rows", test_stale_rows);
    pt_add("/frontends/solo_session_lost", test_solo_session_lost);
    pt_add("/frontends/close_to_open", test_close_to_open);
    pt_add("/frontends/rounds", test_rounds);
    pt_add("/frontends/concurrent", test_concurrent);
    pt_add("/frontends/log", test_log);
    return g_test_run();
}
