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
 *                               fsck` clean at the end.
 *
 * NOTES
 *   Each case has servers of its own: on a fresh database of the test's
 *   private cluster (the first two), or on an embedded cluster (the last).
 *   Nothing waits on time: each step waits for a reply, or for a process
 *   to exit (bounded by timeout(1) so that a server that wrongly keeps
 *   serving fails the case instead of hanging it).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptest.h"

#define FR_ROUNDS 150

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
    const char *const over_b[] = {db, "cache.coherence=shared", "storage.relatime=false",
                                  "server.portmap=off", NULL};
    b = tl_server_start(over_b);
    g_assert_cmpuint(fr_count(ci, (const char *[]){"coherence=shared", "state=live", NULL}), ==, 2);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    pt_add("/frontends/single_refuses", test_single_refuses);
    pt_add("/frontends/stale_rows", test_stale_rows);
    pt_add("/frontends/close_to_open", test_close_to_open);
    return g_test_run();
}
