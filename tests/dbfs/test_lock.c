/*
 * test_lock.c -- the file-lock calls of dbfs (dbfs_lock, dbfs_lock_test,
 * dbfs_unlock, dbfs_lock_cancel, dbfs_share, dbfs_unshare,
 * dbfs_lock_free_host, the server-wide calls and the watch) against a
 * real database: conflicts, POSIX merging and splitting of one owner's
 * locks, blocked requests granted by whatever releases a range (in the
 * same call), deadlocks, limits, stale handles and removal, permissions,
 * the grace period after a restart, host reboots, two servers on one
 * file system, share reservations, and one round trip per call.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include <libpq-fe.h>

#include "dbfs_locks.h"
#include "schema_files.h"
#include "td.h"
#include "testlib.h"

static const uint32_t no_groups[1] = {0};
#define END DBFS_LOCK_EOF

/* Owner svid of host "hostA" or "hostB" (the owner handle names both). */
typedef struct {
    char host[16];
    char oh[32];
    dbfs_lock_owner o;
} owner_t;

static dbfs_lock_owner *own(owner_t *w, const char *host, int64_t svid)
{
    g_snprintf(w->host, sizeof w->host, "%s", host);
    g_snprintf(w->oh, sizeof w->oh, "%" G_GINT64_FORMAT "@%s", svid, host);
    w->o = (dbfs_lock_owner){w->host, strlen(w->host), svid, w->oh, strlen(w->oh)};
    return &w->o;
}

static dbfs_lock_range rng(uint64_t start, uint64_t end, bool excl)
{
    return (dbfs_lock_range){start, end, excl};
}

typedef struct {
    td_fs t;
    dbfs_lock_server s;
    dbfs_cred u;
    dbfs_fh f;
} lk_t;

static void lk_open(lk_t *k)
{
    dbfs_lock_start_res st;
    dbfs_attr a;

    td_open(&k->t);
    k->u = td_user(1000, 100, 0, no_groups);
    a = td_create(&k->t, &k->u, k->t.root, "f", 0644);
    k->f = td_fh(&a);
    td_rc(dbfs_lock_server_start(k->t.c, "srvA", 45, &st), 0);
    g_assert_cmpint(st.state, ==, 1);
    g_assert_cmpuint(st.grace_ms, ==, 0); /* nothing held: no grace */
    k->s = (dbfs_lock_server){st.srv, 64, 1024};
    dbfs_lock_start_free(&st);
}

/* Lock and check the outcome; returns the grants (free them). */
static dbfs_lock_result lk_lock(lk_t *k, const dbfs_lock_owner *o, dbfs_lock_range r, bool block,
                                const char *note, dbfs_lock_outcome want)
{
    dbfs_lock_how how = {.block = block,
                         .monitor = true,
                         .cstate = 1,
                         .addr = "127.0.0.1",
                         .local = "127.0.0.1",
                         .notify = note,
                         .notify_len = strlen(note)};
    dbfs_lock_result res;

    td_rc(dbfs_lock(k->t.c, &k->s, &k->u, k->f, o, &r, &how, &res), 0);
    g_assert_cmpint(res.outcome, ==, want);
    return res;
}

static void lk_ok(lk_t *k, const dbfs_lock_owner *o, dbfs_lock_range r)
{
    dbfs_lock_result res = lk_lock(k, o, r, false, "", DBFS_LOCK_GRANTED);

    g_assert_cmpuint(res.ngrants, ==, 0);
    dbfs_lock_result_free(&res);
}

static dbfs_lock_result lk_unlock(lk_t *k, const dbfs_lock_owner *o, uint64_t s, uint64_t e)
{
    dbfs_lock_range r = rng(s, e, false);
    dbfs_lock_result res;

    td_rc(dbfs_unlock(k->t.c, &k->s, k->f, o, &r, &res), 0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_GRANTED);
    return res;
}

/* TEST: granted, or denied by exactly (excl, start, end, svid). */
static void lk_test(lk_t *k, const dbfs_lock_owner *o, dbfs_lock_range r, bool denied, bool excl,
                    uint64_t s, uint64_t e, int64_t svid)
{
    dbfs_lock_result res;

    td_rc(dbfs_lock_test(k->t.c, &k->s, &k->u, k->f, o, &r, &res), 0);
    g_assert_cmpint(res.outcome, ==, denied ? DBFS_LOCK_DENIED : DBFS_LOCK_GRANTED);
    g_assert_true(res.have_holder == denied);
    if (denied) {
        g_assert_true(res.holder.excl == excl);
        g_assert_cmpuint(res.holder.start, ==, s);
        g_assert_cmpuint(res.holder.end, ==, e);
        g_assert_cmpint(res.holder.svid, ==, svid);
    }
    dbfs_lock_result_free(&res);
}

static long lk_count(lk_t *k, const char *what)
{
    char *sql = g_strdup_printf("SELECT count(*) FROM %s", what);
    long n = td_sql(k->t.conninfo, sql);

    g_free(sql);
    return n;
}

static void test_conflicts(void)
{
    lk_t k;
    owner_t a, b, c;
    dbfs_lock_result res;

    lk_open(&k);
    lk_ok(&k, own(&a, "hostA", 1), rng(0, 100, true));
    /* Another owner: denied, told who holds what. */
    res = lk_lock(&k, own(&b, "hostB", 7), rng(50, 60, false), false, "", DBFS_LOCK_DENIED);
    g_assert_true(res.have_holder && res.holder.excl);
    g_assert_cmpuint(res.holder.start, ==, 0);
    g_assert_cmpuint(res.holder.end, ==, 100);
    g_assert_cmpint(res.holder.svid, ==, 1);
    g_assert_cmpmem(res.holder.oh, res.holder.oh_len, "1@hostA", 7);
    dbfs_lock_result_free(&res);
    /* Beside it: granted. The same svid on another host is another owner. */
    lk_ok(&k, &b.o, rng(100, 110, true));
    lk_test(&k, own(&c, "hostB", 1), rng(99, 100, false), true, true, 0, 100, 1);
    lk_test(&k, &c.o, rng(110, 111, true), false, false, 0, 0, 0);
    /* The owner itself never conflicts with its own locks. */
    lk_test(&k, own(&a, "hostA", 1), rng(0, END, true), true, true, 100, 110, 7);
    lk_ok(&k, &a.o, rng(10, 20, true));

    /* Shared locks share; an exclusive one conflicts with any of them. */
    res = lk_unlock(&k, &a.o, 0, END);
    dbfs_lock_result_free(&res);
    res = lk_unlock(&k, &b.o, 0, END);
    dbfs_lock_result_free(&res);
    lk_ok(&k, &a.o, rng(0, 100, false));
    lk_ok(&k, &c.o, rng(50, 150, false));
    lk_test(&k, &b.o, rng(60, 61, false), false, false, 0, 0, 0);
    res = lk_lock(&k, &b.o, rng(60, 61, true), false, "", DBFS_LOCK_DENIED);
    g_assert_false(res.holder.excl);
    dbfs_lock_result_free(&res);
    /* 64-bit ranges: to the end of the file, and the last nameable byte. */
    lk_ok(&k, &b.o, rng(UINT64_C(1) << 40, END, true));
    lk_test(&k, &a.o, rng(DBFS_LOCK_OFFSET_MAX - 1, DBFS_LOCK_OFFSET_MAX, false), true, true,
            UINT64_C(1) << 40, END, 7);
    /* The byte before b's lock is free; so is 2^32 + 60 (60 is held shared by c). */
    lk_test(&k, &a.o, rng((UINT64_C(1) << 40) - 1, UINT64_C(1) << 40, true), false, false, 0, 0, 0);
    lk_test(&k, &a.o, rng((UINT64_C(1) << 32) + 60, (UINT64_C(1) << 32) + 61, true), false, false,
            0, 0, 0);
    {
        dbfs_lock_range bad = rng(DBFS_LOCK_OFFSET_MAX + 1, END, false);
        dbfs_lock_how how = {.cstate = 1};

        td_rc(dbfs_lock(k.t.c, &k.s, &k.u, k.f, &a.o, &bad, &how, &res), -EINVAL);
        bad = rng(5, 5, false);
        td_rc(dbfs_lock(k.t.c, &k.s, &k.u, k.f, &a.o, &bad, &how, &res), -EINVAL);
    }
    td_close(&k.t);
}

/* The first column of the first row of sql, as text (g_free it). */
static char *sql_text(const char *conninfo, const char *sql)
{
    PGconn *pg = PQconnectdb(conninfo);
    PGresult *r;
    char *out;

    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    r = PQexec(pg, sql);
    g_assert_cmpint(PQresultStatus(r), ==, PGRES_TUPLES_OK);
    out = g_strdup(PQntuples(r) ? PQgetvalue(r, 0, 0) : "");
    PQclear(r);
    PQfinish(pg);
    return out;
}

/* The locks of owner o on the test file as "S0-10 X10-20 ..." ("-" for the end). */
static char *lk_dump(lk_t *k, int64_t svid)
{
    char *sql = g_strdup_printf(
        "SELECT coalesce(string_agg(CASE WHEN l.excl THEN 'X' ELSE 'S' END || lower(l.range) ||"
        " '-' || coalesce(upper(l.range)::text, ''), ' ' ORDER BY lower(l.range)), '')"
        " FROM pgnfs_nlm_lock l JOIN pgnfs_nlm_owner o ON o.id = l.owner"
        " WHERE l.inode = %" G_GUINT64_FORMAT " AND o.svid = %" G_GINT64_FORMAT,
        k->f.ino, svid);
    char *out = sql_text(k->t.conninfo, sql);

    g_free(sql);
    return out;
}

#define assert_locks(k, svid, want)                                                                \
    do {                                                                                           \
        char *got_ = lk_dump((k), (svid));                                                         \
        g_assert_cmpstr(got_, ==, (want));                                                         \
        g_free(got_);                                                                              \
    } while (0)

static void test_posix(void)
{
    lk_t k;
    owner_t a;
    dbfs_lock_result res;

    lk_open(&k);
    own(&a, "hostA", 3);
    /* Adjoining and overlapping locks of one type merge. */
    lk_ok(&k, &a.o, rng(0, 10, false));
    lk_ok(&k, &a.o, rng(10, 20, false));
    lk_ok(&k, &a.o, rng(15, 30, false));
    assert_locks(&k, 3, "S0-30");
    /* Another type over the middle replaces it there. */
    lk_ok(&k, &a.o, rng(10, 20, true));
    assert_locks(&k, 3, "S0-10 X10-20 S20-30");
    /* Adjoining locks of another type do not merge. */
    lk_ok(&k, &a.o, rng(30, 40, true));
    assert_locks(&k, 3, "S0-10 X10-20 S20-30 X30-40");
    /* An unlock of the middle splits. */
    res = lk_unlock(&k, &a.o, 5, 12);
    dbfs_lock_result_free(&res);
    assert_locks(&k, 3, "S0-5 X12-20 S20-30 X30-40");
    /* A new type over everything replaces it all, to the end. */
    lk_ok(&k, &a.o, rng(0, END, true));
    assert_locks(&k, 3, "X0-");
    res = lk_unlock(&k, &a.o, 100, END);
    dbfs_lock_result_free(&res);
    assert_locks(&k, 3, "X0-100");
    /* Unlocking what is not held is fine. */
    res = lk_unlock(&k, &a.o, 1000, 2000);
    dbfs_lock_result_free(&res);
    assert_locks(&k, 3, "X0-100");
    td_close(&k.t);
}

static void test_blocking(void)
{
    lk_t k;
    owner_t a, b, c;
    dbfs_lock_result res;
    dbfs_lock_range r;

    lk_open(&k);
    lk_ok(&k, own(&a, "hostA", 1), rng(0, 100, true));
    res = lk_lock(&k, own(&b, "hostB", 2), rng(10, 20, true), true, "wake-b", DBFS_LOCK_BLOCKED);
    dbfs_lock_result_free(&res);
    res = lk_lock(&k, own(&c, "hostB", 3), rng(50, 60, false), true, "wake-c", DBFS_LOCK_BLOCKED);
    dbfs_lock_result_free(&res);
    /* Asked again (a client polls): still one request. */
    res = lk_lock(&k, &b.o, rng(10, 20, true), true, "wake-b2", DBFS_LOCK_BLOCKED);
    dbfs_lock_result_free(&res);
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_wait"), ==, 2);

    /* Releasing 0..30 lets b go, not c: b's request comes back to call. */
    res = lk_unlock(&k, &a.o, 0, 30);
    g_assert_cmpuint(res.ngrants, ==, 1);
    g_assert_cmpmem(res.grants[0].notify, res.grants[0].notify_len, "wake-b2", 7);
    g_assert_cmpuint(res.grants[0].range.start, ==, 10);
    g_assert_cmpuint(res.grants[0].range.end, ==, 20);
    g_assert_true(res.grants[0].range.excl);
    dbfs_lock_result_free(&res);
    assert_locks(&k, 2, "X10-20");
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_wait"), ==, 1);
    /* b polls again: granted (it holds it), no request left of it. */
    lk_ok(&k, &b.o, rng(10, 20, true));

    /* A cancelled request is never granted. */
    r = rng(50, 60, false);
    td_rc(dbfs_lock_cancel(k.t.c, &k.s, k.f, &c.o, &r, &res), 0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_GRANTED);
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_wait"), ==, 0);
    res = lk_unlock(&k, &a.o, 0, END);
    g_assert_cmpuint(res.ngrants, ==, 0);
    dbfs_lock_result_free(&res);
    res = lk_unlock(&k, &b.o, 0, END);
    dbfs_lock_result_free(&res);

    /* A downgrade lets shared waiters go, oldest first, and all that fit. */
    lk_ok(&k, &a.o, rng(0, 100, true));
    res = lk_lock(&k, &b.o, rng(0, 10, false), true, "1", DBFS_LOCK_BLOCKED);
    dbfs_lock_result_free(&res);
    res = lk_lock(&k, &c.o, rng(5, 15, false), true, "2", DBFS_LOCK_BLOCKED);
    dbfs_lock_result_free(&res);
    res = lk_lock(&k, &a.o, rng(0, 100, false), false, "", DBFS_LOCK_GRANTED);
    g_assert_cmpuint(res.ngrants, ==, 2);
    g_assert_cmpmem(res.grants[0].notify, res.grants[0].notify_len, "1", 1);
    g_assert_cmpmem(res.grants[1].notify, res.grants[1].notify_len, "2", 1);
    dbfs_lock_result_free(&res);
    td_close(&k.t);
}

static void test_deadlock_limits(void)
{
    lk_t k;
    owner_t a, b, x[4];
    dbfs_lock_result res;

    lk_open(&k);
    own(&a, "hostA", 1);
    own(&b, "hostB", 2);
    lk_ok(&k, &a.o, rng(0, 10, true));
    lk_ok(&k, &b.o, rng(10, 20, true));
    res = lk_lock(&k, &a.o, rng(10, 20, true), true, "", DBFS_LOCK_BLOCKED);
    dbfs_lock_result_free(&res);
    /* b waiting for a's lock would close the cycle. */
    res = lk_lock(&k, &b.o, rng(0, 10, true), true, "", DBFS_LOCK_DEADLOCK);
    g_assert_true(res.have_holder);
    dbfs_lock_result_free(&res);
    res = lk_unlock(&k, &b.o, 0, END);
    g_assert_cmpuint(res.ngrants, ==, 1);
    dbfs_lock_result_free(&res);

    /* Limits: two requests per host here. */
    k.s.max_waiters_host = 2;
    for (int i = 0; i < 3; i++) {
        res = lk_lock(&k, own(&x[i], "hostC", 10 + i), rng(0, 1, true), true, "",
                      i < 2 ? DBFS_LOCK_BLOCKED : DBFS_LOCK_NOLOCKS);
        dbfs_lock_result_free(&res);
    }
    /* ...and three in all. */
    k.s.max_waiters = 3;
    res = lk_lock(&k, own(&x[3], "hostD", 1), rng(0, 1, true), true, "", DBFS_LOCK_BLOCKED);
    dbfs_lock_result_free(&res);
    res = lk_lock(&k, &b.o, rng(0, 1, true), true, "", DBFS_LOCK_NOLOCKS);
    dbfs_lock_result_free(&res);
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_wait"), ==, 3);
    td_close(&k.t);
}

static void test_stale_remove_perm(void)
{
    lk_t k;
    owner_t a, b;
    dbfs_lock_result res;
    dbfs_lock_range r = rng(0, 1, true);
    dbfs_lock_how how = {.cstate = 1};
    dbfs_cred other = td_user(2000, 200, 0, no_groups);
    dbfs_wcc w, w2;
    dbfs_attr d, ro;

    lk_open(&k);
    own(&a, "hostA", 1);
    own(&b, "hostB", 1);
    lk_ok(&k, &a.o, rng(0, 10, true));
    res = lk_lock(&k, &b.o, rng(0, 10, true), true, "", DBFS_LOCK_BLOCKED);
    dbfs_lock_result_free(&res);
    /* A rename keeps the locks (they belong to the file). */
    d = td_mkdir(&k.t, &k.u, k.t.root, "d", 0755);
    td_rc(dbfs_rename(k.t.c, &k.u, k.t.root, "f", td_fh(&d), "g", &w, &w2), 0);
    lk_test(&k, &b.o, rng(0, 1, false), true, true, 0, 10, 1);
    /* Its removal drops them, and its waiters. */
    td_rc(dbfs_remove(k.t.c, &k.u, td_fh(&d), "g", &w), 0);
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_lock"), ==, 0);
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_wait"), ==, 0);
    td_rc(dbfs_lock(k.t.c, &k.s, &k.u, k.f, &a.o, &r, &how, &res), -ESTALE);
    td_rc(dbfs_lock_test(k.t.c, &k.s, &k.u, k.f, &a.o, &r, &res), -ESTALE);
    td_rc(dbfs_unlock(k.t.c, &k.s, k.f, &a.o, &r, &res), -ESTALE);
    td_rc(dbfs_lock_cancel(k.t.c, &k.s, k.f, &a.o, &r, &res), -ESTALE);
    /* A rename over a file drops its locks and share reservations too
     * (the functions do it: no ON DELETE CASCADE since 006). */
    dbfs_attr v = td_create(&k.t, &k.u, k.t.root, "v", 0644);
    k.f = td_fh(&v);
    lk_ok(&k, &a.o, rng(0, 10, true));
    td_rc(dbfs_share(k.t.c, &k.s, &k.u, k.f, &b.o, DBFS_SHARE_READ, 0, &how, &res), 0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_GRANTED);
    dbfs_lock_result_free(&res);
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_share"), ==, 1);
    td_create(&k.t, &k.u, k.t.root, "w", 0644);
    td_rc(dbfs_rename(k.t.c, &k.u, k.t.root, "w", k.t.root, "v", &w, &w2), 0);
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_lock"), ==, 0);
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_share"), ==, 0);

    /* Permissions: shared needs read, exclusive write; the owner may. */
    ro = td_create(&k.t, &k.u, k.t.root, "ro", 0444);
    k.f = td_fh(&ro);
    td_rc(dbfs_lock(k.t.c, &k.s, &other, k.f, &a.o, &r, &how, &res), -EACCES);
    r.excl = false;
    td_rc(dbfs_lock(k.t.c, &k.s, &other, k.f, &a.o, &r, &how, &res), 0);
    dbfs_lock_result_free(&res);
    td_chmod(&k.t, &k.u, k.f, 0);
    td_rc(dbfs_lock(k.t.c, &k.s, &other, k.f, &b.o, &r, &how, &res), -EACCES);
    td_rc(dbfs_lock_test(k.t.c, &k.s, &other, k.f, &b.o, &r, &res), -EACCES);
    r.excl = true;
    td_rc(dbfs_lock(k.t.c, &k.s, &k.u, k.f, &b.o, &r, &how, &res), 0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_DENIED); /* a's shared lock is there */
    dbfs_lock_result_free(&res);
    /* Not a regular file. */
    k.f = td_fh(&d);
    td_rc(dbfs_lock(k.t.c, &k.s, &k.u, k.f, &a.o, &r, &how, &res), -EINVAL);
    td_close(&k.t);
}

/* Start server name again (a restart) with grace_s; returns the start result. */
static dbfs_lock_start_res lk_restart(lk_t *k, const char *name, unsigned grace_s)
{
    dbfs_lock_start_res st;

    td_rc(dbfs_lock_server_start(k->t.c, name, grace_s, &st), 0);
    return st;
}

static void test_grace(void)
{
    lk_t k;
    owner_t a, b, c;
    dbfs_lock_result res;
    dbfs_lock_start_res st;
    dbfs_lock_range r;
    dbfs_lock_how how = {.reclaim = true, .monitor = true, .cstate = 1, .addr = "10.0.0.1"};

    lk_open(&k);
    lk_ok(&k, own(&a, "hostA", 1), rng(0, 10, true));
    lk_ok(&k, own(&b, "hostB", 1), rng(20, 30, true));
    st = lk_restart(&k, "srvA", 3600); /* far longer than the case takes */
    g_assert_cmpint(st.state, ==, 3);
    g_assert_cmpuint(st.grace_ms, >, 3500000);
    /* Both hosts are to be told. */
    g_assert_cmpuint(st.nhosts, ==, 2);
    g_assert_cmpstr(st.hosts[0].addr, ==, "127.0.0.1");
    dbfs_lock_start_free(&st);

    /* New locks, TEST and UNLOCK answer "grace"; old locks still conflict. */
    res = lk_lock(&k, own(&c, "hostC", 1), rng(100, 110, true), false, "", DBFS_LOCK_GRACE);
    g_assert_true(res.grace);
    dbfs_lock_result_free(&res);
    r = rng(0, 1, false);
    td_rc(dbfs_lock_test(k.t.c, &k.s, &k.u, k.f, &c.o, &r, &res), 0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_GRACE);
    td_rc(dbfs_unlock(k.t.c, &k.s, k.f, &a.o, &r, &res), 0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_GRACE);
    r = rng(0, 5, true);
    td_rc(dbfs_lock(k.t.c, &k.s, &k.u, k.f, &c.o, &r, &how, &res), 0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_DENIED); /* a reclaim can't take a's lock */
    dbfs_lock_result_free(&res);

    /* a reclaims; grace goes on (b has not); b reclaims: it ends at once. */
    r = rng(0, 10, true);
    td_rc(dbfs_lock(k.t.c, &k.s, &k.u, k.f, &a.o, &r, &how, &res), 0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_GRANTED);
    g_assert_true(res.grace);
    r = rng(20, 30, true);
    td_rc(dbfs_lock(k.t.c, &k.s, &k.u, k.f, &b.o, &r, &how, &res), 0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_GRANTED);
    g_assert_false(res.grace);
    lk_ok(&k, &c.o, rng(100, 110, true));

    /* Restart again; a reclaims, b never does: at the end of grace (its time
     * moved to the past here) b's lock goes and the request it held up is
     * granted. */
    st = lk_restart(&k, "srvA", 3600);
    dbfs_lock_start_free(&st);
    r = rng(0, 10, true);
    td_rc(dbfs_lock(k.t.c, &k.s, &k.u, k.f, &a.o, &r, &how, &res), 0);
    g_assert_true(res.grace);
    /* grace_end before its time changes nothing. */
    td_rc(dbfs_lock_grace_end(k.t.c, &k.s, &res), 0);
    g_assert_true(res.grace);
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_lock"), ==, 3);
    /* ...a server on the same database, not in grace, queues behind b. */
    {
        dbfs_lock_start_res sb = lk_restart(&k, "srvB", 45);
        dbfs_lock_server s2 = {sb.srv, 64, 1024}, s1 = k.s;

        dbfs_lock_start_free(&sb);
        k.s = s2;
        res = lk_lock(&k, &c.o, rng(25, 26, false), true, "c", DBFS_LOCK_BLOCKED);
        dbfs_lock_result_free(&res);
        k.s = s1;
    }
    td_sql(k.t.conninfo, "UPDATE pgnfs_nlm_server SET grace_until = now() - interval '1 s'"
                         " WHERE name = 'srvA'");
    td_rc(dbfs_lock_grace_end(k.t.c, &k.s, &res), 0);
    g_assert_false(res.grace);
    g_assert_cmpuint(res.ngrants, ==, 0); /* the request is srvB's */
    assert_locks(&k, 1, "X0-10 S25-26");  /* c (svid 1 too) got it; b's X20-30 is gone */
    g_assert_cmpint(td_sql(k.t.conninfo, "SELECT count(*) FROM pgnfs_nlm_wait WHERE granted"), ==,
                    1);

    /* grace 0: the locks are simply kept. */
    st = lk_restart(&k, "srvA", 0);
    g_assert_cmpuint(st.grace_ms, ==, 0);
    dbfs_lock_start_free(&st);
    lk_ok(&k, &b.o, rng(200, 210, true));
    lk_test(&k, &b.o, rng(0, 1, false), true, true, 0, 10, 1);
    td_close(&k.t);
}

static void test_hosts(void)
{
    lk_t k;
    owner_t a, a2, b;
    dbfs_lock_result res;
    dbfs_lock_how how = {.monitor = true, .cstate = 5};
    dbfs_lock_range r = rng(50, 60, true);

    lk_open(&k);
    lk_ok(&k, own(&a, "hostA", 1), rng(0, 10, true)); /* hostA's state 1 */
    /* hostA rebooted (state 5) and locked again before its notification came. */
    td_rc(dbfs_lock(k.t.c, &k.s, &k.u, k.f, own(&a2, "hostA", 2), &r, &how, &res), 0);
    dbfs_lock_result_free(&res);
    res = lk_lock(&k, own(&b, "hostB", 1), rng(0, 10, true), true, "b", DBFS_LOCK_BLOCKED);
    dbfs_lock_result_free(&res);
    /* SM_NOTIFY hostA state 5: its lock from before goes, b is granted. */
    td_rc(dbfs_lock_free_host(k.t.c, &k.s, "hostA", 5, false, 5, &res), 0);
    g_assert_cmpuint(res.ngrants, ==, 1);
    dbfs_lock_result_free(&res);
    assert_locks(&k, 2, "X50-60");
    /* The same notification again changes nothing. */
    td_rc(dbfs_lock_free_host(k.t.c, &k.s, "hostA", 5, false, 5, &res), 0);
    assert_locks(&k, 2, "X50-60");
    /* FREE_ALL: everything of the host. Unknown hosts are fine. */
    td_rc(dbfs_lock_free_host(k.t.c, &k.s, "hostA", 5, true, 0, &res), 0);
    assert_locks(&k, 2, "");
    td_rc(dbfs_lock_free_host(k.t.c, &k.s, "nobody", 6, true, 0, &res), 0);
    td_rc(dbfs_lock_free_host(k.t.c, &k.s, "x", DBFS_LOCK_NAME_MAX + 1, true, 0, &res), -EINVAL);
    /* Owners and hosts that hold nothing are forgotten. */
    res = lk_unlock(&k, &b.o, 0, END);
    dbfs_lock_result_free(&res);
    g_assert_cmpint(dbfs_lock_gc(k.t.c), >=, 3);
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_owner"), ==, 0);
    g_assert_cmpint(lk_count(&k, "pgnfs_nlm_host"), ==, 0);
    td_close(&k.t);
}

/* Two servers: B's request granted by A's unlock reaches B by NOTIFY. */
static void test_two_servers(void)
{
    lk_t k;
    owner_t a, b;
    dbfs_lock_result res;
    dbfs_lock_watch *wb;
    dbfs_lock_start_res sb;
    dbfs_lock_server sa, s2;
    dbfs_lock_counts n;
    bool mine = false;
    int64_t deadline;

    lk_open(&k);
    sa = k.s;
    td_rc(dbfs_lock_watch_open(k.t.fs, &wb), 0);
    td_rc(dbfs_lock_server_start(dbfs_lock_watch_conn(wb), "srvB", 45, &sb), 0);
    s2 = (dbfs_lock_server){sb.srv, 64, 1024};
    dbfs_lock_start_free(&sb);
    lk_ok(&k, own(&a, "hostA", 1), rng(0, 10, true));
    k.s = s2;
    res = lk_lock(&k, own(&b, "hostB", 1), rng(0, 10, false), true, "for-b", DBFS_LOCK_BLOCKED);
    dbfs_lock_result_free(&res);
    k.s = sa;
    res = lk_unlock(&k, &a.o, 0, END);
    g_assert_cmpuint(res.ngrants, ==, 0);
    dbfs_lock_result_free(&res);
    deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
    while (!mine && g_get_monotonic_time() < deadline) {
        struct pollfd p = {.fd = dbfs_lock_watch_fd(wb), .events = POLLIN};

        poll(&p, 1, 1000);
        td_rc(dbfs_lock_watch_drain(wb, s2.srv, &mine), 0);
    }
    g_assert_true(mine);
    td_rc(dbfs_lock_take(dbfs_lock_watch_conn(wb), &s2, &res), 0);
    g_assert_cmpuint(res.ngrants, ==, 1);
    g_assert_cmpmem(res.grants[0].notify, res.grants[0].notify_len, "for-b", 5);
    dbfs_lock_result_free(&res);
    td_rc(dbfs_lock_take(dbfs_lock_watch_conn(wb), &s2, &res), 0);
    g_assert_cmpuint(res.ngrants, ==, 0);
    td_rc(dbfs_lock_count(dbfs_lock_watch_conn(wb), s2.srv, &n), 0);
    g_assert_cmpuint(n.held, ==, 1);
    g_assert_cmpuint(n.waiting, ==, 0);
    g_assert_cmpint(n.state, ==, 1);
    dbfs_lock_watch_close(wb);
    td_close(&k.t);
}

static void test_shares_and_trips(void)
{
    lk_t k;
    owner_t a, b;
    dbfs_lock_result res;
    dbfs_lock_how how = {.cstate = 1};
    dbfs_lock_range r = rng(0, 1, true);

    lk_open(&k);
    own(&a, "hostA", DBFS_LOCK_NO_SVID);
    own(&b, "hostB", DBFS_LOCK_NO_SVID);
    td_rc(dbfs_share(k.t.c, &k.s, &k.u, k.f, &a.o, DBFS_SHARE_READ, DBFS_SHARE_WRITE, &how, &res),
          0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_GRANTED);
    /* b wants to write: a denies it. b reads denying writes: a only reads. */
    td_rc(dbfs_share(k.t.c, &k.s, &k.u, k.f, &b.o, DBFS_SHARE_WRITE, 0, &how, &res), 0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_DENIED);
    td_rc(dbfs_share(k.t.c, &k.s, &k.u, k.f, &b.o, DBFS_SHARE_READ, DBFS_SHARE_WRITE, &how, &res),
          0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_GRANTED);
    /* b denying reads now conflicts with a's reading. */
    td_rc(dbfs_share(k.t.c, &k.s, &k.u, k.f, &b.o, DBFS_SHARE_READ, DBFS_SHARE_READ, &how, &res),
          0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_DENIED);
    td_rc(dbfs_unshare(k.t.c, &k.s, k.f, &a.o, &res), 0);
    td_rc(dbfs_share(k.t.c, &k.s, &k.u, k.f, &b.o, DBFS_SHARE_READ, DBFS_SHARE_READ, &how, &res),
          0);
    g_assert_cmpint(res.outcome, ==, DBFS_LOCK_GRANTED);
    td_rc(dbfs_share(k.t.c, &k.s, &k.u, k.f, &a.o, 4, 0, &how, &res), -EINVAL);

    /* One round trip per call. */
    own(&a, "hostA", 1);
    td_trips(&k.t);
    td_rc(dbfs_lock(k.t.c, &k.s, &k.u, k.f, &a.o, &r, &how, &res), 0);
    g_assert_cmpuint(td_trips(&k.t), ==, 1);
    td_rc(dbfs_lock_test(k.t.c, &k.s, &k.u, k.f, &a.o, &r, &res), 0);
    g_assert_cmpuint(td_trips(&k.t), ==, 1);
    td_rc(dbfs_unlock(k.t.c, &k.s, k.f, &a.o, &r, &res), 0);
    g_assert_cmpuint(td_trips(&k.t), ==, 1);
    td_rc(dbfs_lock_cancel(k.t.c, &k.s, k.f, &a.o, &r, &res), 0);
    g_assert_cmpuint(td_trips(&k.t), ==, 1);
    td_close(&k.t);
}

/* A file system of schema version 2 (before locks and chains) opened by
 * this build gets the lock tables and functions (and the chains' schema),
 * loses its foreign keys and CHECKs on fileatt (006), and its files can be
 * locked. */
static void test_upgrade(void)
{
    lk_t k;
    owner_t a;
    dbfs_config cfg = {0};
    dbfs_lock_start_res st;

    lk_open(&k);
    dbfs_conn_close(k.t.c);
    dbfs_close(k.t.fs);
    td_sql(k.t.conninfo,
           /* what later versions add (008: snapshots, first: it holds views of
            * the columns of 004) */
           TD_SQL_DROP_SNAPSHOTS
           " DROP TABLE pgnfs_nlm_lock, pgnfs_nlm_wait, pgnfs_nlm_share, pgnfs_nlm_owner,"
           " pgnfs_nlm_host, pgnfs_nlm_server CASCADE;"
           " DROP TYPE pgnfs_nlm_res CASCADE;"
           /* what later versions add (004: chains, 005: several frontends,
            * 009: links, 010: the invalidation log) */
           " DROP TABLE pgnfs_xform_link, pgnfs_xform_chain, pgnfs_xform_epoch;"
           " ALTER TABLE fileatt DROP COLUMN chain_sql, DROP COLUMN xlinked;"
           " ALTER TABLE fileatt DROP COLUMN chain;"
           " ALTER TABLE pgnfs_fs DROP COLUMN xform_key_id;"
           " DROP TABLE pgnfs_frontends, pgnfs_inval_log, pgnfs_inval_trim;"
           " DROP FUNCTION pgnfs_inval_fileatt, pgnfs_inval_naming, pgnfs_inval_add CASCADE;"
           /* and what 006 (the lean durable path) takes away: naming's keys
            * and fileatt's CHECKs (003 makes the lock tables' keys again) */
           " ALTER TABLE naming ADD FOREIGN KEY (parent) REFERENCES fileatt (inode),"
           " ADD FOREIGN KEY (inode) REFERENCES fileatt (inode);"
           " ALTER TABLE fileatt ADD CHECK (type BETWEEN 1 AND 7),"
           " ADD CHECK (mode BETWEEN 0 AND 4095), ADD CHECK (nlink >= 0),"
           " ADD CHECK ((type = 5) = (target IS NOT NULL));"
           " UPDATE pgnfs_fs SET schema_version = 2, functions_digest = 'version 2'");
    g_assert_cmpint(td_sql(k.t.conninfo, "SELECT count(*) FROM pg_proc"
                                         " WHERE proname = 'pgnfs_nlm_lock'"),
                    ==, 0);
    cfg.conninfo = k.t.conninfo;
    td_rc(dbfs_open(&cfg, &k.t.fs), 0);
    g_assert_cmpint(dbfs_get_info(k.t.fs)->schema_version, ==, schema_version);
    g_assert_cmpint(td_sql(k.t.conninfo, "SELECT count(*) FROM pgnfs_frontends"), ==, 0);
    /* 006: no foreign key to fileatt, no CHECK on it. */
    g_assert_cmpint(td_sql(k.t.conninfo,
                           "SELECT count(*) FROM pg_constraint"
                           " WHERE (contype = 'f' AND confrelid = 'fileatt'::regclass)"
                           " OR (contype = 'c' AND conrelid = 'fileatt'::regclass)"),
                    ==, 0);
    td_rc(dbfs_conn_open(k.t.fs, &k.t.c), 0);
    st = lk_restart(&k, "srvA", 45);
    g_assert_cmpint(st.state, ==, 1);
    k.s.srv = st.srv;
    dbfs_lock_start_free(&st);
    lk_ok(&k, own(&a, "hostA", 1), rng(0, 1, true));
    g_assert_cmpint(td_sql(k.t.conninfo, "SELECT count(*) FROM pgnfs_nlm_lock"), ==, 1);
    td_close(&k.t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/lock/conflicts", test_conflicts);
    g_test_add_func("/lock/posix", test_posix);
    g_test_add_func("/lock/blocking", test_blocking);
    g_test_add_func("/lock/deadlock-limits", test_deadlock_limits);
    g_test_add_func("/lock/stale-remove-perm", test_stale_remove_perm);
    g_test_add_func("/lock/grace", test_grace);
    g_test_add_func("/lock/hosts", test_hosts);
    g_test_add_func("/lock/two-servers", test_two_servers);
    g_test_add_func("/lock/shares-trips", test_shares_and_trips);
    g_test_add_func("/lock/upgrade", test_upgrade);
    return g_test_run();
}
