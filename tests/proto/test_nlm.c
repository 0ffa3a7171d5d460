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
 * requests against the limits; `pgnfs locks`; the grace period after a
 * restart (reclaims granted, new locks refused, its early and its timed
 * end); a second server on the same database.
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

int main(int argc, char **argv)
{
    GString *set = g_string_new(g_getenv("PGNFS_TEST_SERVER_SET"));

    for (const char *const *s = nlm_settings; *s; s++)
        g_string_append_printf(set, " %s", *s);
    g_setenv("PGNFS_TEST_SERVER_SET", set->str, TRUE);
    g_string_free(set, TRUE);
    pt_init(&argc, &argv);
    if (pt.server) {
        nr_ctx *c = pt_open(NULL);
        pt_mkdir(c, &pt.root, "ro", 0777);
        nr_close(c);
    }
    pt_add("/nlm/null_versions", test_null_versions);
    pt_add("/nlm/conflicts", test_conflicts);
    pt_add("/nlm/posix", test_posix);
    pt_add("/nlm/blocking", test_blocking);
    pt_add("/nlm/handles", test_handles);
    pt_add("/nlm/readonly_perm", test_readonly_and_perm);
    return pt_run();
}
