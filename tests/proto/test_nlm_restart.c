/*
 * test_nlm_restart.c -- file locks across a server restart and between two
 * servers on one database, each case on file systems of its own (fresh
 * servers, so that no other case's locks keep a grace period going): the
 * grace period (reclaims granted; TEST, UNLOCK, CANCEL and new locks
 * refused; old locks still conflicting; its end as soon as everything is
 * reclaimed), and a second server that sees the first's locks, is granted
 * by the first's unlock, and whose own timed grace period drops what nobody
 * reclaimed while the first, never in grace, grants the range.
 *
 * The callbacks these grants make are tested in test_nlm_cb.c.
 */
#include <string.h>

#include "nlmraw.h"
#include "ptest.h"

#define WAIT_MS 60000

static const nl_owner own_a = {"hostA", 1, "1@hostA"};
static const nl_owner own_b = {"hostB", 2, "2@hostB"};

#define assert_holder(h, x, o, l, s)                                                               \
    do {                                                                                           \
        g_assert_cmpint((h).excl, ==, (x));                                                        \
        g_assert_cmpuint((h).off, ==, (o));                                                        \
        g_assert_cmpuint((h).len, ==, (l));                                                        \
        g_assert_cmpuint((h).svid, ==, (s));                                                       \
    } while (0)

/* A server of its own; *root its root handle, *c a connection. */
static tl_server *own_server(const char *const *over, nr_fh *root, nr_ctx **c)
{
    tl_server *s = tl_server_start(over);
    nr_ctx *m = nr_open(tl_server_port(s), NULL);
    mountres3 mr;

    g_assert_nonnull(m);
    g_assert_cmpint(nr_mnt(m, "/", &mr, root), ==, MNT3_OK);
    nr_close(m);
    *c = nr_open(tl_server_port(s), NULL);
    g_assert_nonnull(*c);
    return s;
}

static nr_ctx *reopen(tl_server *s, nr_ctx *c)
{
    nr_close(c);
    c = nr_open(tl_server_port(s), NULL);
    g_assert_nonnull(c);
    return c;
}

/*
 * After a restart: only reclaims are granted; TEST, UNLOCK, CANCEL and new
 * locks answer DENIED_GRACE_PERIOD; the locks from before still conflict;
 * once every one is reclaimed the grace period ends at once.
 */
static void test_grace(void)
{
    /* A grace period far longer than the case takes, however slow the machine. */
    const char *const over[] = {"nlm.server_name=one", "nlm.grace=3600", NULL};
    nr_fh root, f;
    nr_ctx *c;
    tl_server *s = own_server(over, &root, &c);
    nl_owner own_d = {"hostD", 4, "4@hostD"};

    f = pt_create(c, &root, "g", 0666);
    /* A fresh file system without locks has no grace period. */
    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 10, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 20, 10, false, false, false, 1), ==, NLM4_GRANTED);
    tl_server_restart(s);
    c = reopen(s, c);
    g_assert_cmpint(nl_lock(c, &f, &own_d, 100, 1, true, false, false, 1), ==,
                    NLM4_DENIED_GRACE_PERIOD);
    g_assert_cmpint(nl_lock(c, &f, &own_d, 100, 1, true, true, false, 1), ==,
                    NLM4_DENIED_GRACE_PERIOD);
    g_assert_cmpint(nl_test(c, &f, &own_d, 0, 1, false, NULL), ==, NLM4_DENIED_GRACE_PERIOD);
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, 10), ==, NLM4_DENIED_GRACE_PERIOD);
    g_assert_cmpint(nl_cancel(c, &f, &own_a, 0, 10, true), ==, NLM4_DENIED_GRACE_PERIOD);
    /* A reclaim cannot take what another owner held. */
    g_assert_cmpint(nl_lock(c, &f, &own_d, 5, 1, true, false, true, 1), ==, NLM4_DENIED);
    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 10, true, false, true, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_d, 100, 1, true, false, false, 1), ==,
                    NLM4_DENIED_GRACE_PERIOD);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 20, 10, false, false, true, 1), ==, NLM4_GRANTED);
    /* Everything is back: new locks are taken again. */
    g_assert_cmpint(nl_lock(c, &f, &own_d, 100, 1, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_test(c, &f, &own_d, 0, 1, false, NULL), ==, NLM4_DENIED);
    nr_close(c);
    tl_server_stop(s);
}

/*
 * Two servers on one database: locks taken through one are seen through
 * the other, a request blocked on one is granted by an unlock on the
 * other; when the second restarts with a short grace period and nobody
 * reclaims, its locks go at the end of it (its own timer), and the first
 * server, which was never in grace, grants the range.
 */
static void test_two_servers(void)
{
    const char *const over1[] = {"nlm.server_name=one", "nlm.grace=45", "cache.coherence=shared",
                                 NULL};
    nr_fh root, f;
    nr_ctx *c1, *c2;
    tl_server *s1 = own_server(over1, &root, &c1), *s2;
    char *db = g_strdup_printf("database.conninfo=%s", tl_server_conninfo(s1));
    const char *const over2[] = {db, "nlm.server_name=two", "nlm.grace=2", "cache.coherence=shared",
                                 NULL};
    nl_owner own_d = {"hostD", 4, "4@hostD"};
    nl_holder h;
    int64_t deadline;
    int st;

    s2 = tl_server_start(over2);
    c2 = nr_open(tl_server_port(s2), NULL);
    g_assert_nonnull(c2);
    f = pt_create(c1, &root, "two", 0666);
    g_assert_cmpint(nl_lock(c1, &f, &own_a, 0, 10, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_test(c2, &f, &own_b, 5, 1, false, &h), ==, NLM4_DENIED);
    assert_holder(h, true, 0, 10, 1);
    g_assert_cmpint(nl_lock(c2, &f, &own_b, 0, 10, true, true, false, 1), ==, NLM4_BLOCKED);
    g_assert_cmpint(nl_unlock(c1, &f, &own_a, 0, NL_EOF), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_test(c1, &f, &own_a, 5, 1, false, &h), ==, NLM4_DENIED);
    assert_holder(h, true, 0, 10, 2);
    g_assert_cmpint(nl_lock(c2, &f, &own_b, 0, 10, true, true, false, 1), ==, NLM4_GRANTED);

    tl_server_restart(s2);
    c2 = reopen(s2, c2);
    deadline = g_get_monotonic_time() + (int64_t)WAIT_MS * 2000;
    do {
        st = nl_lock(c1, &f, &own_d, 0, 10, true, false, false, 1);
        if (st != NLM4_GRANTED) {
            g_assert_cmpint(st, ==, NLM4_DENIED);
            g_usleep(200000);
        }
    } while (st != NLM4_GRANTED && g_get_monotonic_time() < deadline);
    g_assert_cmpint(st, ==, NLM4_GRANTED);
    /* The second server is out of its grace period too. */
    g_assert_cmpint(nl_test(c2, &f, &own_b, 0, 1, false, &h), ==, NLM4_DENIED);
    assert_holder(h, true, 0, 10, 4);
    nr_close(c1);
    nr_close(c2);
    tl_server_stop(s2);
    tl_server_stop(s1);
    g_free(db);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/nlm_restart/grace", test_grace);
    g_test_add_func("/nlm_restart/two_servers", test_two_servers);
    return g_test_run();
}
