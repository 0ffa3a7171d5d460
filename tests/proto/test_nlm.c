/*
 * test_nlm.c -- file locking through a real server: the Network Lock
 * Manager (program 100021) through libnfs's NLM client (TEST, LOCK,
 * CANCEL, UNLOCK of version 4) and hand-built records for the rest (the
 * *_MSG forms, SHARE, UNSHARE, NM_LOCK, FREE_ALL, versions 1 and 3), and
 * the status monitor (program 100024: SM_STAT, SM_MON, SM_UNMON,
 * SM_UNMON_ALL, SM_SIMU_CRASH, SM_NOTIFY).
 *
 * Cases: every procedure of every version; conflicts and holders; POSIX
 * merging and splitting seen through TEST; 64-bit ranges; blocked
 * requests, polls and CANCEL; handles (bad, stale after REMOVE, kept
 * across RENAME); read-only exports and permissions; a client reboot
 * (SM_NOTIFY, FREE_ALL) freeing locks; hostile arguments (oversized
 * names, owner handles and cookies, truncated calls); a flood of blocked
 * requests against the limits; `pgnfs locks`. Restarts and a second
 * server: test_nlm_restart.c.
 *
 * The callbacks (GRANTED and friends) need the clients' portmapper on
 * port 111: they are tested in test_nlm_cb.c, in a namespace of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nlmraw.h"
#include "ptest.h"

#define WAIT_MS 60000

static const char *const nlm_settings[] = {
    "exports./ro=127.0.0.1(ro,no_root_squash)",
    "nlm.server_name=alpha",
    "nlm.max_waiters_per_host=40",
    "nlm.grace=45",
    NULL,
};

static const nl_owner own_a = {"hostA", 1, "1@hostA"};
static const nl_owner own_b = {"hostB", 2, "2@hostB"};
static const nl_owner own_c = {"hostB", 3, "3@hostB"};
static const nl_owner own_e = {"hostE", 5, "5@hostE"};

/* A fresh file in a fresh directory, and a connection. */
static nr_fh fresh_file(nr_ctx **c, const char *name)
{
    nr_fh d = pt_fresh_dir();

    *c = pt_open(NULL);
    return pt_create(*c, &d, name, 0666);
}

#define assert_holder(h, x, o, l, s)                                                               \
    do {                                                                                           \
        g_assert_cmpint((h).excl, ==, (x));                                                        \
        g_assert_cmpuint((h).off, ==, (o));                                                        \
        g_assert_cmpuint((h).len, ==, (l));                                                        \
        g_assert_cmpuint((h).svid, ==, (s));                                                       \
    } while (0)

/* ---- the procedures ------------------------------------------------------------------ */

static void test_null_versions(void)
{
    nr_ctx *c = pt_open(NULL);
    nr_reply rep;
    GByteArray *r;

    g_assert_cmpint(nl_null(c), ==, 0);
    for (uint32_t v = 1; v <= 4; v++) {
        r = nl_raw(pt.port, false, NL_PROG, v, NL_PROC_NULL, NULL, &rep, WAIT_MS);
        g_assert_nonnull(r);
        g_assert_cmpuint(rep.accept_stat, ==, v == 2 ? NR_PROG_MISMATCH : NR_SUCCESS);
        if (v == 2) {
            g_assert_cmpuint(rep.low, ==, 1);
            g_assert_cmpuint(rep.high, ==, 4);
        }
        g_byte_array_unref(r);
    }
    /* Over UDP too, and the status monitor. */
    r = nl_raw(pt.port, true, NL_PROG, 4, NL_PROC_NULL, NULL, &rep, WAIT_MS);
    g_assert_nonnull(r);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    g_byte_array_unref(r);
    r = nl_raw(pt.port, false, NL_NSM_PROG, 1, 0, NULL, &rep, WAIT_MS);
    g_assert_nonnull(r);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    g_byte_array_unref(r);
    /* Version 1 has no SHARE (procedures 20-23 come with version 3). */
    r = nl_raw(pt.port, false, NL_PROG, 1, NL_PROC_SHARE, NULL, &rep, WAIT_MS);
    g_assert_cmpuint(rep.accept_stat, ==, NR_PROC_UNAVAIL);
    g_byte_array_unref(r);
    nr_close(c);
}

static void test_conflicts(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c, "f");
    nl_holder h;

    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 100, true, false, false, 1), ==, NLM4_GRANTED);
    /* Another owner: denied, and TEST names the holder exactly. */
    g_assert_cmpint(nl_lock(c, &f, &own_b, 50, 10, false, false, false, 1), ==, NLM4_DENIED);
    g_assert_cmpint(nl_test(c, &f, &own_b, 99, 1, false, &h), ==, NLM4_DENIED);
    assert_holder(h, true, 0, 100, 1);
    g_assert_cmpstr(h.oh, ==, "1@hostA");
    g_assert_cmpint(nl_test(c, &f, &own_b, 100, 10, true, &h), ==, NLM4_GRANTED);
    /* The owner never conflicts with itself. */
    g_assert_cmpint(nl_test(c, &f, &own_a, 0, NL_EOF, true, &h), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, NL_EOF), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 50, 10, true, false, false, 1), ==, NLM4_GRANTED);

    /* Shared locks share; an exclusive one conflicts with them. */
    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 10, false, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_c, 5, 10, false, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 1, true, false, false, 1), ==, NLM4_DENIED);

    /* 64 bits: to the end; the last byte; beyond 2^63 - 1 is FBIG. */
    g_assert_cmpint(nl_lock(c, &f, &own_a, UINT64_C(1) << 40, NL_EOF, true, false, false, 1), ==,
                    NLM4_GRANTED);
    g_assert_cmpint(nl_test(c, &f, &own_b, INT64_MAX, 1, false, &h), ==, NLM4_DENIED);
    assert_holder(h, true, UINT64_C(1) << 40, 0, 1);
    g_assert_cmpint(nl_test(c, &f, &own_b, (UINT64_C(1) << 32) + 5, 1, true, &h), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, (uint64_t)INT64_MAX + 1, 1, true, false, false, 1), ==,
                    NLM4_FBIG);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 10, UINT64_MAX, true, false, false, 1), ==, NLM4_FBIG);
    g_assert_cmpint(nl_lock(c, &f, &own_b, INT64_MAX, 1, false, false, true, 1), ==, NLM4_DENIED);
    nr_close(c);
}

/* One owner's locks merge, split and change type in place (TEST sees it). */
static void test_posix(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c, "f");
    nl_holder h;

    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 10, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_a, 10, 10, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_test(c, &f, &own_b, 0, NL_EOF, false, &h), ==, NLM4_DENIED);
    assert_holder(h, true, 0, 20, 1);
    /* The middle unlocked: two pieces. */
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 5, 10), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_test(c, &f, &own_b, 5, 10, true, &h), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_test(c, &f, &own_b, 10, NL_EOF, true, &h), ==, NLM4_DENIED);
    assert_holder(h, true, 15, 5, 1);
    /* Shared over part of it: a reader may now read there only. */
    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 3, false, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_test(c, &f, &own_b, 0, 3, false, &h), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_test(c, &f, &own_b, 0, 4, false, &h), ==, NLM4_DENIED);
    assert_holder(h, true, 3, 2, 1);
    nr_close(c);
}

static void test_blocking(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c, "f");

    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 100, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 10, true, true, false, 1), ==, NLM4_BLOCKED);
    g_assert_cmpint(nl_lock(c, &f, &own_c, 20, 10, true, true, false, 1), ==, NLM4_BLOCKED);
    /* The client polls: still blocked. */
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 10, true, true, false, 1), ==, NLM4_BLOCKED);
    /* c gives up; after the unlock b holds its range and c's is free. */
    g_assert_cmpint(nl_cancel(c, &f, &own_c, 20, 10, true), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, NL_EOF), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_test(c, &f, &own_a, 0, 10, false, NULL), ==, NLM4_DENIED);
    g_assert_cmpint(nl_test(c, &f, &own_a, 20, 10, true, NULL), ==, NLM4_GRANTED);
    /* b's poll finds it granted. */
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 10, true, true, false, 1), ==, NLM4_GRANTED);
    /* A cycle of waiters is refused. */
    g_assert_cmpint(nl_lock(c, &f, &own_a, 50, 10, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 10, true, true, false, 1), ==, NLM4_BLOCKED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 50, 10, true, true, false, 1), ==, NLM4_DEADLCK);
    nr_close(c);
}

/* ---- handles, exports, permissions --------------------------------------------------- */

static void test_handles(void)
{
    nr_ctx *c = pt_open(NULL);
    nr_fh d = pt_fresh_dir(), d2 = pt_mkdir(c, &d, "sub", 0777);
    nr_fh f = pt_create(c, &d, "f", 0666), bad = f;
    RENAME3res rn;
    REMOVE3res rm;

    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 1, true, false, false, 1), ==, NLM4_GRANTED);
    /* Renamed, it keeps its lock. */
    pt_ok(c, nr_rename(c, &d, "f", &d2, "g", &rn));
    g_assert_cmpint(nl_test(c, &f, &own_b, 0, 1, false, NULL), ==, NLM4_DENIED);
    /* A damaged handle is no handle of ours; a removed file's is stale. */
    bad.data[bad.len - 1] ^= 1;
    g_assert_cmpint(nl_lock(c, &bad, &own_a, 0, 1, true, false, false, 1), ==, NLM4_FAILED);
    bad.len = 3;
    g_assert_cmpint(nl_test(c, &bad, &own_a, 0, 1, true, NULL), ==, NLM4_FAILED);
    pt_ok(c, nr_remove(c, &d2, "g", &rm));
    g_assert_cmpint(nl_test(c, &f, &own_b, 0, 1, false, NULL), ==, NLM4_STALE_FH);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 1, false, false, false, 1), ==, NLM4_STALE_FH);
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, 1), ==, NLM4_STALE_FH);
    nr_close(c);
}

static void test_readonly_and_perm(void)
{
    nr_ctx *root = pt_open(NULL), *other = pt_open(&pt_other), *m = pt_open_mount(NULL);
    nr_fh d, f, rod, rof;
    mountres3 mr;
    char name[64];

    /* /ro is read-only for us: shared locks yes, exclusive no. */
    d = pt_lookup(root, &pt.root, "ro");
    g_snprintf(name, sizeof name, "f%d", (int)getpid());
    f = pt_create(root, &d, name, 0644);
    g_assert_cmpint(nr_mnt(m, "/ro", &mr, &rod), ==, MNT3_OK);
    rof = pt_lookup(root, &rod, name);
    g_assert_cmpint(nl_lock(root, &rof, &own_a, 0, 1, false, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(root, &rof, &own_a, 0, 1, true, false, false, 1), ==, NLM4_FAILED);
    g_assert_cmpint(nl_test(root, &rof, &own_b, 0, 1, true, NULL), ==, NLM4_FAILED);
    g_assert_cmpint(nl_lock(root, &f, &own_b, 0, 1, true, false, false, 1), ==, NLM4_DENIED);

    /* Permissions: shared needs read, exclusive write (0644: others may read). */
    g_assert_cmpint(nl_lock(other, &f, &own_c, 10, 1, false, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(other, &f, &own_c, 20, 1, true, false, false, 1), ==, NLM4_FAILED);
    pt_chmod(root, &f, 0600);
    g_assert_cmpint(nl_lock(other, &f, &own_c, 30, 1, false, false, false, 1), ==, NLM4_FAILED);
    /* Not a regular file. */
    g_assert_cmpint(nl_lock(root, &d, &own_a, 0, 1, false, false, false, 1), ==, NLM4_FAILED);
    nr_close(root);
    nr_close(other);
    nr_close(m);
}

/* ---- hand-built calls: versions 1 and 3, *_MSG, SHARE, NM_LOCK, FREE_ALL ----------- */

/* A cookie of 2 bytes takes 8 bytes of a reply: the status follows. */
#define SKIP_COOKIE 8

static GByteArray *v3_lockargs(const nr_fh *f, const nl_owner *o, uint32_t off, uint32_t len,
                               bool excl, bool block)
{
    GByteArray *a = g_byte_array_new();

    nr_xdr_string(a, "c3");
    nr_xdr_u32(a, block);
    nr_xdr_u32(a, excl);
    nl_xdr_lock3(a, f, o, off, len);
    nr_xdr_u32(a, 0); /* reclaim */
    nr_xdr_u32(a, 1); /* state */
    return a;
}

static void test_v1_v3(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c, "f"), stale;
    nr_reply rep;
    GByteArray *a, *r;
    nl_holder h;

    for (uint32_t v = 1; v <= 3; v += 2) {
        a = v3_lockargs(&f, &own_a, 0, 10, true, false);
        g_assert_cmpint(nl_raw_stat(pt.port, NL_PROG, v, NL_PROC_LOCK, a, &rep, SKIP_COOKIE), ==,
                        LCK_GRANTED);
        g_byte_array_unref(a);
        /* Version 4 sees it; version 3 TEST names it, 32-bit. */
        g_assert_cmpint(nl_test(c, &f, &own_b, 0, 1, false, &h), ==, NLM4_DENIED);
        assert_holder(h, true, 0, 10, 1);
        a = g_byte_array_new();
        nr_xdr_string(a, "t3");
        nr_xdr_u32(a, 0);
        nl_xdr_lock3(a, &f, &own_b, 5, 1);
        r = nl_raw(pt.port, false, NL_PROG, v, NL_PROC_TEST, a, &rep, WAIT_MS);
        g_assert_nonnull(r);
        g_assert_cmpuint(nr_get_u32(r, rep.body + SKIP_COOKIE), ==, LCK_DENIED);
        g_assert_cmpuint(nr_get_u32(r, rep.body + SKIP_COOKIE + 4), ==, 1); /* exclusive */
        g_assert_cmpuint(nr_get_u32(r, rep.body + SKIP_COOKIE + 8), ==, 1); /* uppid */
        /* oh "1@hostA": 4 + 8 bytes, then offset and length */
        g_assert_cmpuint(nr_get_u32(r, rep.body + SKIP_COOKIE + 24), ==, 0);
        g_assert_cmpuint(nr_get_u32(r, rep.body + SKIP_COOKIE + 28), ==, 10);
        g_byte_array_unref(r);
        g_byte_array_unref(a);
        a = g_byte_array_new();
        nr_xdr_string(a, "u3");
        nl_xdr_lock3(a, &f, &own_a, 0, 0);
        g_assert_cmpint(nl_raw_stat(pt.port, NL_PROG, v, NL_PROC_UNLOCK, a, &rep, SKIP_COOKIE), ==,
                        LCK_GRANTED);
        g_byte_array_unref(a);
    }
    /* A holder past 2^31 - 1 starts there for version 3; statuses v3 lacks
     * (here NLM4_STALE_FH) become LCK_DENIED_NOLOCKS. */
    g_assert_cmpint(nl_lock(c, &f, &own_a, UINT64_C(1) << 40, 5, true, false, false, 1), ==,
                    NLM4_GRANTED);
    a = g_byte_array_new();
    nr_xdr_string(a, "t3");
    nr_xdr_u32(a, 1);
    nl_xdr_lock3(a, &f, &own_b, 0, 0);
    r = nl_raw(pt.port, false, NL_PROG, 3, NL_PROC_TEST, a, &rep, WAIT_MS);
    g_assert_cmpuint(nr_get_u32(r, rep.body + SKIP_COOKIE), ==, LCK_DENIED);
    g_assert_cmpuint(nr_get_u32(r, rep.body + SKIP_COOKIE + 24), ==, 0x7fffffffu);
    g_assert_cmpuint(nr_get_u32(r, rep.body + SKIP_COOKIE + 28), ==, 5);
    g_byte_array_unref(r);
    g_byte_array_unref(a);
    stale = f;
    stale.data[stale.len - 1] ^= 0x40;
    a = v3_lockargs(&stale, &own_b, 0, 1, true, false);
    g_assert_cmpint(nl_raw_stat(pt.port, NL_PROG, 3, NL_PROC_LOCK, a, &rep, SKIP_COOKIE), ==,
                    LCK_DENIED_NOLOCKS);
    g_byte_array_unref(a);
    nr_close(c);
}

/* The *_MSG forms reply void (their answer is a *_RES call: test_nlm_cb.c);
 * GRANTED (we are no client) is denied; *_RES calls are taken. */
static void test_msg(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c, "f");
    nr_reply rep;
    GByteArray *a = g_byte_array_new(), *r;

    nl_xdr_lockargs4(a, "m1", false, true, &f, &own_a, 0, 10, false, 1);
    r = nl_raw(pt.port, false, NL_PROG, 4, NL_PROC_LOCK_MSG, a, &rep, WAIT_MS);
    g_assert_nonnull(r);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    g_assert_cmpuint(r->len, ==, rep.body);
    g_byte_array_unref(r);
    g_assert_cmpint(nl_test(c, &f, &own_b, 0, 1, false, NULL), ==, NLM4_DENIED);
    g_byte_array_set_size(a, 0);
    nr_xdr_string(a, "m2");
    nl_xdr_lock4(a, &f, &own_a, 0, 0);
    r = nl_raw(pt.port, false, NL_PROG, 4, NL_PROC_UNLOCK_MSG, a, &rep, WAIT_MS);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    g_byte_array_unref(r);
    g_assert_cmpint(nl_test(c, &f, &own_b, 0, 1, true, NULL), ==, NLM4_GRANTED);
    g_byte_array_set_size(a, 0);
    nr_xdr_string(a, "g1");
    nr_xdr_u32(a, 1);
    nl_xdr_lock4(a, &f, &own_a, 0, 1);
    g_assert_cmpint(nl_raw_stat(pt.port, NL_PROG, 4, NL_PROC_GRANTED, a, &rep, SKIP_COOKIE), ==,
                    NLM4_DENIED);
    for (uint32_t p = NL_PROC_TEST_MSG; p <= NL_PROC_GRANTED_RES; p++) {
        if (p == NL_PROC_LOCK_MSG || p == NL_PROC_UNLOCK_MSG)
            continue;
        g_byte_array_set_size(a, 0);
        nr_xdr_string(a, "x");
        if (p >= NL_PROC_TEST_RES) {
            nr_xdr_u32(a, 0); /* a result: status granted */
        } else {
            nr_xdr_u32(a, 0);
            if (p == NL_PROC_CANCEL_MSG)
                nr_xdr_u32(a, 0);
            nl_xdr_lock4(a, &f, &own_a, 0, 1);
        }
        r = nl_raw(pt.port, false, NL_PROG, 4, p, a, &rep, WAIT_MS);
        g_assert_nonnull(r);
        g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
        g_byte_array_unref(r);
    }
    g_byte_array_unref(a);
    nr_close(c);
}

/* SHARE/UNSHARE (DOS): access and deny modes, read 1, write 2. */
static int share(uint32_t vers, uint32_t proc, const nr_fh *f, const char *host, const char *oh,
                 uint32_t access, uint32_t deny)
{
    GByteArray *a = g_byte_array_new();
    nr_reply rep;
    int st;

    nr_xdr_string(a, "sh");
    nr_xdr_string(a, host);
    nr_xdr_fh(a, f);
    nr_xdr_string(a, oh);
    nr_xdr_u32(a, deny);
    nr_xdr_u32(a, access);
    nr_xdr_u32(a, 0);
    st = nl_raw_stat(pt.port, NL_PROG, vers, proc, a, &rep, SKIP_COOKIE);
    g_byte_array_unref(a);
    return st;
}

static void test_share(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c, "f");

    for (uint32_t v = 3; v <= 4; v++) {
        g_assert_cmpint(share(v, NL_PROC_SHARE, &f, "dosA", "a", 1, 2), ==, NLM4_GRANTED);
        g_assert_cmpint(share(v, NL_PROC_SHARE, &f, "dosB", "b", 2, 0), ==, NLM4_DENIED);
        g_assert_cmpint(share(v, NL_PROC_SHARE, &f, "dosB", "b", 1, 2), ==, NLM4_GRANTED);
        g_assert_cmpint(share(v, NL_PROC_SHARE, &f, "dosB", "b", 1, 1), ==, NLM4_DENIED);
        g_assert_cmpint(share(v, NL_PROC_UNSHARE, &f, "dosA", "a", 0, 0), ==, NLM4_GRANTED);
        g_assert_cmpint(share(v, NL_PROC_SHARE, &f, "dosB", "b", 3, 3), ==, NLM4_GRANTED);
        g_assert_cmpint(share(v, NL_PROC_SHARE, &f, "dosA", "a", 1, 0), ==, NLM4_DENIED);
        g_assert_cmpint(share(v, NL_PROC_UNSHARE, &f, "dosB", "b", 0, 0), ==, NLM4_GRANTED);
    }
    nr_close(c);
}

static void free_all(uint32_t vers, const char *name, uint32_t state)
{
    GByteArray *a = g_byte_array_new(), *r;
    nr_reply rep;

    nr_xdr_string(a, name);
    nr_xdr_u32(a, state);
    r = nl_raw(pt.port, false, NL_PROG, vers, NL_PROC_FREE_ALL, a, &rep, WAIT_MS);
    g_assert_nonnull(r);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    g_byte_array_unref(r);
    g_byte_array_unref(a);
}

/* NM_LOCK (a host that is not monitored), and FREE_ALL when it reboots. */
static void test_nm_lock_free_all(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c, "f");
    nl_owner dos = {"dosC", 7, "7@dosC"};
    GByteArray *a = g_byte_array_new();
    nr_reply rep;

    for (uint32_t v = 3; v <= 4; v++) {
        g_byte_array_set_size(a, 0);
        nl_xdr_lockargs4(a, "nm", false, true, &f, &dos, 0, 10, false, 1);
        if (v == 3) {
            g_byte_array_unref(a);
            a = v3_lockargs(&f, &dos, 0, 10, true, false);
        }
        g_assert_cmpint(nl_raw_stat(pt.port, NL_PROG, v, NL_PROC_NM_LOCK, a, &rep, SKIP_COOKIE), ==,
                        NLM4_GRANTED);
        g_assert_cmpint(share(v, NL_PROC_SHARE, &f, "dosC", "s", 1, 2), ==, NLM4_GRANTED);
        g_assert_cmpint(nl_test(c, &f, &own_a, 0, 1, true, NULL), ==, NLM4_DENIED);
        g_assert_cmpint(share(v, NL_PROC_SHARE, &f, "other", "o", 2, 0), ==, NLM4_DENIED);
        free_all(v, "dosC", 9);
        g_assert_cmpint(nl_test(c, &f, &own_a, 0, 1, true, NULL), ==, NLM4_GRANTED);
        g_assert_cmpint(share(v, NL_PROC_SHARE, &f, "other", "o", 2, 0), ==, NLM4_GRANTED);
        g_assert_cmpint(share(v, NL_PROC_UNSHARE, &f, "other", "o", 0, 0), ==, NLM4_GRANTED);
    }
    g_byte_array_unref(a);
    nr_close(c);
}

/* ---- the status monitor ------------------------------------------------------------- */

/* Through libnfs's NSM client (rpc_nsm1_*_async). */
static void test_nsm(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c, "f");
    int state, s2;
    nl_owner x1 = {"rebooter", 1, "1@rebooter"}, x2 = {"rebooter", 2, "2@rebooter"};

    g_assert_cmpint(nl_sm_null(c), ==, 0);
    g_assert_cmpint(nl_sm_stat(c, "anyhost", &state), ==, NSM_STAT_SUCC);
    g_assert_cmpint(state % 2, ==, 1);
    /* We monitor for our own lock manager only. */
    g_assert_cmpint(nl_sm_mon(c, "somehost", "me", &s2), ==, NSM_STAT_FAIL);
    g_assert_cmpint(s2, ==, state);
    g_assert_cmpint(nl_sm_unmon(c, "somehost", "me", &s2), ==, 0);
    g_assert_cmpint(s2, ==, state);
    g_assert_cmpint(nl_sm_unmon_all(c, "me", &s2), ==, 0);
    g_assert_cmpint(s2, ==, state);
    g_assert_cmpint(nl_sm_simu_crash(c), ==, 0);

    /* A client reboot (its statd's SM_NOTIFY, state 3) frees what it held in
     * state 1 and grants who waited; what it took in state 3 stays. */
    g_assert_cmpint(nl_lock(c, &f, &x1, 0, 10, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &x2, 20, 10, true, false, false, 3), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 10, true, true, false, 1), ==, NLM4_BLOCKED);
    g_assert_cmpint(nl_sm_notify(c, "rebooter", 3), ==, 0);
    g_assert_cmpint(nl_test(c, &f, &own_a, 0, 10, false, NULL), ==, NLM4_DENIED); /* b's now */
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 10, true, true, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_test(c, &f, &own_a, 25, 1, false, NULL), ==, NLM4_DENIED);
    nr_close(c);
}

/* ---- hostile input ------------------------------------------------------------------- */

/* LOCK with a caller_name, oh and cookie of the given sizes (bytes 'x'). */
static uint32_t lock_sized(const nr_fh *f, size_t name, size_t oh, size_t cookie)
{
    char *n = g_strnfill(name, 'x'), *o = g_strnfill(oh, 'o'), *k = g_strnfill(cookie, 'k');
    nl_owner ow = {n, 77, o};
    GByteArray *a = g_byte_array_new(), *r;
    nr_reply rep;
    uint32_t st;

    nl_xdr_lockargs4(a, k, false, false, f, &ow, 0, 1, false, 1);
    r = nl_raw(pt.port, false, NL_PROG, 4, NL_PROC_LOCK, a, &rep, WAIT_MS);
    g_assert_nonnull(r);
    st = rep.accept_stat == NR_SUCCESS ? 100 + nr_get_u32(r, rep.body + 4 + ((cookie + 3) & ~3u))
                                       : rep.accept_stat;
    g_byte_array_unref(r);
    g_byte_array_unref(a);
    g_free(n);
    g_free(o);
    g_free(k);
    return st;
}

static void test_hostile(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c, "f"), big = f;
    GByteArray *a = g_byte_array_new(), *r;
    nr_reply rep;

    /* At the bounds (1024 bytes) fine, past them GARBAGE_ARGS. */
    g_assert_cmpuint(lock_sized(&f, 1024, 1024, 1024), ==, 100 + NLM4_GRANTED);
    g_assert_cmpuint(lock_sized(&f, 1025, 8, 8), ==, NR_GARBAGE_ARGS);
    g_assert_cmpuint(lock_sized(&f, 8, 1025, 8), ==, NR_GARBAGE_ARGS);
    g_assert_cmpuint(lock_sized(&f, 8, 8, 1025), ==, NR_GARBAGE_ARGS);
    /* Handles: empty and long ones are not ours. */
    big.len = 0;
    g_assert_cmpint(nl_lock(c, &big, &own_a, 0, 1, true, false, false, 1), ==, NLM4_FAILED);
    /* A call cut short, and one with a length word that lies. */
    nl_xdr_lockargs4(a, "cut", false, true, &f, &own_a, 0, 1, false, 1);
    for (guint cut = 0; cut < a->len; cut += 12) {
        GByteArray *part = g_byte_array_new();

        g_byte_array_append(part, a->data, cut);
        r = nl_raw(pt.port, false, NL_PROG, 4, NL_PROC_LOCK, part, &rep, WAIT_MS);
        g_assert_nonnull(r);
        g_assert_cmpuint(rep.accept_stat, ==, NR_GARBAGE_ARGS);
        g_byte_array_unref(r);
        g_byte_array_unref(part);
    }
    g_byte_array_set_size(a, 0);
    nr_xdr_u32(a, 0xfffffff0u); /* a cookie of 4 GiB */
    r = nl_raw(pt.port, false, NL_PROG, 4, NL_PROC_TEST, a, &rep, WAIT_MS);
    g_assert_cmpuint(rep.accept_stat, ==, NR_GARBAGE_ARGS);
    g_byte_array_unref(r);
    /* NSM and FREE_ALL names past their bounds. */
    g_byte_array_set_size(a, 0);
    {
        char *n = g_strnfill(1025, 'n');

        nr_xdr_string(a, n);
        nr_xdr_u32(a, 3);
        r = nl_raw(pt.port, false, NL_NSM_PROG, 1, NL_SM_NOTIFY, a, &rep, WAIT_MS);
        g_assert_cmpuint(rep.accept_stat, ==, NR_GARBAGE_ARGS);
        g_byte_array_unref(r);
        g_free(n);
        n = g_strnfill(1026, 'n');
        g_byte_array_set_size(a, 0);
        nr_xdr_string(a, n);
        nr_xdr_u32(a, 3);
        r = nl_raw(pt.port, false, NL_PROG, 4, NL_PROC_FREE_ALL, a, &rep, WAIT_MS);
        g_assert_cmpuint(rep.accept_stat, ==, NR_GARBAGE_ARGS);
        g_byte_array_unref(r);
        g_free(n);
    }
    /* Credentials: NLM wants AUTH_SYS (AUTH_NONE is too weak), NSM takes any. */
    g_byte_array_set_size(a, 0);
    nr_xdr_call(a, 0x5151, NL_PROG, 4, NL_PROC_TEST, NULL);
    nr_xdr_string(a, "n");
    nr_xdr_u32(a, 0);
    nl_xdr_lock4(a, &f, &own_a, 0, 1);
    {
        int fd = nr_raw_connect(pt.port);

        r = nr_raw_call(fd, a, WAIT_MS);
        g_assert_nonnull(r);
        g_assert_true(nr_reply_parse(r, &rep));
        g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_DENIED);
        g_assert_cmpuint(rep.auth_stat, ==, NR_AUTH_TOOWEAK);
        g_byte_array_unref(r);
        close(fd);
    }
    /* Still serving. */
    g_assert_cmpint(nl_null(c), ==, 0);
    g_assert_cmpint(nl_test(c, &f, &own_b, 0, 1, true, NULL), ==, NLM4_DENIED);
    g_byte_array_unref(a);
    nr_close(c);
}

/* A flood of blocked requests from one host meets [nlm]
 * max_waiters_per_host (40 here): the rest is refused, other hosts still
 * queue, and the server keeps serving. */
static void test_flood(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c, "f");
    char oh[32];
    unsigned blocked = 0, refused = 0;

    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, NL_EOF, true, false, false, 1), ==, NLM4_GRANTED);
    for (uint32_t i = 0; i < 200; i++) {
        g_snprintf(oh, sizeof oh, "%u@flooder", i);
        nl_owner o = {"flooder", 5000 + i, oh};
        int st = nl_lock(c, &f, &o, i, 1, true, true, false, 1);

        if (st == NLM4_BLOCKED)
            blocked++;
        else if (st == NLM4_DENIED_NOLOCKS)
            refused++;
        else
            g_error("request %u: status %d", i, st);
    }
    g_assert_cmpuint(blocked, ==, 40);
    g_assert_cmpuint(refused, ==, 160);
    g_assert_cmpint(nl_lock(c, &f, &own_e, 0, 1, true, true, false, 1), ==, NLM4_BLOCKED);
    g_assert_cmpint(nl_cancel(c, &f, &own_e, 0, 1, true), ==, NLM4_GRANTED);
    /* Released: every one of them holds its byte. */
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, NL_EOF), ==, NLM4_GRANTED);
    for (uint32_t i = 0; i < 40; i++)
        g_assert_cmpint(nl_test(c, &f, &own_a, i, 1, true, NULL), ==, NLM4_DENIED);
    g_assert_cmpint(nl_test(c, &f, &own_a, 40, 1, true, NULL), ==, NLM4_GRANTED);
    nr_close(c);
}

/* `pgnfs locks` lists a lock with its file, range, type and owner. */
static void test_locks_cmd(void)
{
    nr_ctx *c;
    nr_fh d = pt_fresh_dir(), f;
    const char *argv[] = {tl_pgnfs_bin(), "locks", "--data", tl_server_data_dir(pt.server), NULL};
    char *out = NULL, *err = NULL, *want, *dname;
    int status = -1;
    READDIRPLUS3res rd;
    fattr3 a;

    c = pt_open(NULL);
    f = pt_create(c, &d, "locked file", 0666);
    a = pt_getattr(c, &f);
    g_assert_cmpint(nl_lock(c, &f, &own_a, 100, 50, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 10, false, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_c, 100, 1, false, true, false, 1), ==, NLM4_BLOCKED);
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &status, NULL));
    g_assert_cmpint(status, ==, 0);
    /* The directory's name, for the path. */
    pt_ok(c, nr_readdirplus(c, &pt.root, 0, NULL, 65536, 1 << 20, &rd));
    dname = NULL;
    for (entryplus3 *e = rd.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry)
        if (e->name_handle.handle_follows) {
            nr_fh h = nr_fh_from(&e->name_handle.post_op_fh3_u.handle);
            if (nr_fh_equal(&h, &d))
                dname = g_strdup(e->name);
        }
    g_assert_nonnull(dname);
    want = g_strdup_printf(
        "state=granted type=write start=100 end=149 len=50 fileid=%" G_GUINT64_FORMAT
        " path=/%s/locked\\x20file host=hostA svid=1 owner=1@hostA server=alpha",
        a.fileid, dname);
    g_assert_nonnull(strstr(out, want));
    g_free(want);
    want = g_strdup_printf("state=granted type=read start=0 end=9 len=10 fileid=%" G_GUINT64_FORMAT,
                           a.fileid);
    g_assert_nonnull(strstr(out, want));
    g_free(want);
    want = g_strdup_printf(
        "state=waiting type=read start=100 end=100 len=1 fileid=%" G_GUINT64_FORMAT, a.fileid);
    g_assert_nonnull(strstr(out, want));
    g_assert_nonnull(strstr(out, "\n# "));
    g_free(want);
    g_free(dname);
    g_free(out);
    g_free(err);
    nr_close(c);
}

int main(int argc, char **argv)
{
    /* As pt_init(), with this program's settings (only for its own server:
     * the cases that start more give theirs). */
    char **args = g_new0(char *, (size_t)argc + 2);
    int rc;
    bool listing = false;

    for (int i = 0; i < argc; i++) {
        args[i] = argv[i];
        listing |= strcmp(argv[i], "-l") == 0;
    }
    args[argc++] = "--keep-going";
    argv = args;
    g_test_init(&argc, &argv, NULL);
    if (!listing) {
        nr_ctx *m, *c;
        mountres3 mr;

        pt.server = tl_server_start(nlm_settings);
        pt.port = pt.mount_port = tl_server_port(pt.server);
        pt.export_path = "/";
        m = pt_open_mount(NULL);
        g_assert_cmpint(nr_mnt(m, "/", &mr, &pt.root), ==, MNT3_OK);
        nr_close(m);
        c = pt_open(NULL);
        pt_mkdir(c, &pt.root, "ro", 0777);
        nr_close(c);
    }
    pt_add("/nlm/null_versions", test_null_versions);
    pt_add("/nlm/conflicts", test_conflicts);
    pt_add("/nlm/posix", test_posix);
    pt_add("/nlm/blocking", test_blocking);
    pt_add("/nlm/handles", test_handles);
    pt_add("/nlm/readonly_perm", test_readonly_and_perm);
    pt_add("/nlm/v1_v3", test_v1_v3);
    pt_add("/nlm/msg", test_msg);
    pt_add("/nlm/share", test_share);
    pt_add("/nlm/nm_lock_free_all", test_nm_lock_free_all);
    pt_add("/nsm/procs_notify", test_nsm);
    pt_add("/nlm/hostile", test_hostile);
    pt_add("/nlm/flood", test_flood);
    pt_add("/nlm/locks_cmd", test_locks_cmd);
    rc = pt_run();
    g_free(args); /* g_test_init's, until g_test_run is over */
    return rc;
}
