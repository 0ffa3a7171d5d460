/*
 * test_nlm_cb.c -- the calls the lock manager makes to its clients: the
 * GRANTED callback when a blocked lock is granted (TCP and UDP, versions
 * 1/3 and 4, GRANTED_MSG for LOCK_MSG), the *_RES answers to *_MSG calls,
 * SM_NOTIFY after a restart, and what the server does when a client
 * refuses, never answers or is itself: it stays responsive and the lock
 * stays granted.
 *
 * A server finds a client's lock manager through the client's portmapper
 * on port 111, so the program runs in private network and mount namespaces
 * it creates at start (as test_portmap.c does; root only, else a skip with
 * exit 77). There a small portmapper (nlmraw.c) on port 111 sends the
 * server's callbacks to this program's receiver; the server runs with its
 * own portmapper off. Cases run in this process, in order (the portmapper
 * is a thread of it).
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nlmraw.h"
#include "ptest.h"

#define WAIT_MS 60000

static nl_pmap *pmap;
static nl_cbsrv *cbs;
static unsigned metrics_port;

static const nl_owner own_a = {"hostA", 1, "1@hostA"};
static const nl_owner own_b = {"hostB", 2, "2@hostB"};

static int lo_up(void)
{
    struct ifreq ifr = {0};
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    int rc = -1;

    if (fd < 0)
        return -1;
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
    }
    close(fd);
    return rc;
}

/* Private network and mount namespaces with their own /run. */
static bool isolate(void)
{
    if (geteuid() != 0) {
        printf("1..0 # SKIP needs root to create a private network namespace for port 111\n");
        return false;
    }
    if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0 ||
        mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") != 0 || lo_up() != 0) {
        printf("1..0 # SKIP cannot make private namespaces: %s\n", g_strerror(errno));
        return false;
    }
    return true;
}

static nr_fh fresh_file(nr_ctx **c)
{
    nr_fh d = pt_fresh_dir();

    *c = pt_open(NULL);
    return pt_create(*c, &d, "f", 0666);
}

/* Callbacks received so far (serves none). */
static unsigned received(void)
{
    return nl_cbsrv_wait(cbs, 0, 0, NULL);
}

/* The callback number n (1-based), waited for. */
static nl_callback callback(unsigned n)
{
    nl_callback cb;

    g_assert_cmpuint(nl_cbsrv_wait(cbs, n, WAIT_MS, &cb), >=, n);
    return cb;
}

static double metric_wait(const char *key, double at_least)
{
    int64_t deadline = g_get_monotonic_time() + (int64_t)WAIT_MS * 2000;
    double v = -1;

    while (g_get_monotonic_time() < deadline) {
        char *page = tl_metrics(metrics_port);

        v = nl_metric(page, key);
        g_free(page);
        if (v >= at_least)
            return v;
        g_usleep(100000);
    }
    g_error("metric %s stayed at %g (wanted %g)", key, v, at_least);
}

static void test_granted(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c);
    unsigned n = received();
    nl_callback cb;

    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 10, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 10, true, true, false, 1), ==, NLM4_BLOCKED);
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, NL_EOF), ==, NLM4_GRANTED);
    cb = callback(n + 1);
    g_assert_cmpuint(cb.prog, ==, NL_PROG);
    g_assert_cmpuint(cb.vers, ==, 4);
    g_assert_cmpuint(cb.proc, ==, NL_PROC_GRANTED);
    g_assert_false(cb.udp);
    g_assert_cmpstr(cb.caller, ==, "hostB");
    g_assert_cmpstr(cb.oh, ==, "2@hostB");
    g_assert_cmpstr(cb.cookie, ==, "lock");
    g_assert_cmpuint(cb.svid, ==, 2);
    g_assert_cmpuint(cb.excl, ==, 1);
    g_assert_cmpuint(cb.off, ==, 0);
    g_assert_cmpuint(cb.len, ==, 10);
    /* b holds it; its poll says so. */
    g_assert_cmpint(nl_test(c, &f, &own_a, 5, 1, false, NULL), ==, NLM4_DENIED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 10, true, true, false, 1), ==, NLM4_GRANTED);
    /* The metrics page counts it (the figures are sampled every 5 s). */
    metric_wait("pgnfs_nlm_locks{state=\"held\"}", 1);
    metric_wait("pgnfs_nlm_grants_total", 1);
    metric_wait("pgnfs_nlm_callbacks_total{result=\"sent\"}", 1);
    nr_close(c);
}

/* LOCK_MSG over UDP: LOCK_RES, then GRANTED_MSG, over UDP. */
static void test_msg_udp(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c);
    unsigned n = received();
    GByteArray *args = g_byte_array_new(), *r;
    nr_reply rep;
    nl_callback cb;

    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 10, true, false, false, 1), ==, NLM4_GRANTED);
    nl_xdr_lockargs4(args, "msg1", true, false, &f, &own_b, 5, 1, false, 1);
    r = nl_raw(pt.port, true, NL_PROG, 4, NL_PROC_LOCK_MSG, args, &rep, WAIT_MS);
    g_assert_nonnull(r);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    g_assert_cmpuint(r->len, ==, rep.body); /* a void reply */
    g_byte_array_unref(r);
    cb = callback(n + 1);
    g_assert_cmpuint(cb.proc, ==, NL_PROC_LOCK_RES);
    g_assert_true(cb.udp);
    g_assert_cmpuint(cb.stat, ==, NLM4_BLOCKED);
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, NL_EOF), ==, NLM4_GRANTED);
    cb = callback(n + 2);
    g_assert_cmpuint(cb.proc, ==, NL_PROC_GRANTED_MSG);
    g_assert_true(cb.udp);
    g_assert_cmpstr(cb.cookie, ==, "msg1");
    g_assert_cmpuint(cb.excl, ==, 0);
    g_assert_cmpuint(cb.off, ==, 5);
    g_assert_cmpuint(cb.len, ==, 1);
    g_byte_array_unref(args);
    nr_close(c);
}

/* Version 3 over TCP: GRANTED in version 3, 32-bit offsets. */
static void test_v3(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c);
    unsigned n = received();
    GByteArray *args = g_byte_array_new();
    nr_reply rep;
    nl_callback cb;

    g_assert_cmpint(nl_lock(c, &f, &own_a, 100, 10, true, false, false, 1), ==, NLM4_GRANTED);
    nr_xdr_string(args, "v3");
    nr_xdr_u32(args, 1); /* block */
    nr_xdr_u32(args, 1); /* exclusive */
    nl_xdr_lock3(args, &f, &own_b, 105, 0);
    nr_xdr_u32(args, 0);
    nr_xdr_u32(args, 1);
    g_assert_cmpint(nl_raw_stat(pt.port, NL_PROG, 3, NL_PROC_LOCK, args, &rep, 8), ==,
                    NLM4_BLOCKED);
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, NL_EOF), ==, NLM4_GRANTED);
    cb = callback(n + 1);
    g_assert_cmpuint(cb.vers, ==, 3);
    g_assert_cmpuint(cb.proc, ==, NL_PROC_GRANTED);
    g_assert_cmpuint(cb.off, ==, 105);
    g_assert_cmpuint(cb.len, ==, 0);
    g_byte_array_unref(args);
    nr_close(c);
}

/* A client that refuses the grant keeps the lock (it will find it when it
 * polls), as Linux's lockd does. */
static void test_refused(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c);
    unsigned n = received();

    nl_cbsrv_answer(cbs, NLM4_DENIED);
    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 1, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 1, true, true, false, 1), ==, NLM4_BLOCKED);
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, 1), ==, NLM4_GRANTED);
    callback(n + 1);
    metric_wait("pgnfs_nlm_callbacks_total{result=\"refused\"}", 1);
    g_assert_cmpint(nl_test(c, &f, &own_a, 0, 1, false, NULL), ==, NLM4_DENIED);
    nl_cbsrv_answer(cbs, NLM4_GRANTED);
    nr_close(c);
}

/* The client's portmapper names our own port: no call to ourselves. */
static void test_self(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c);
    double self0 = metric_wait("pgnfs_nlm_callbacks_total{result=\"self\"}", 0);

    nl_pmap_set(pmap, pt.port, pt.port);
    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 1, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 1, true, true, false, 1), ==, NLM4_BLOCKED);
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, 1), ==, NLM4_GRANTED);
    metric_wait("pgnfs_nlm_callbacks_total{result=\"self\"}", self0 + 1);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 0, 1, true, true, false, 1), ==, NLM4_GRANTED);
    nl_pmap_set(pmap, nl_cbsrv_port(cbs), nl_cbsrv_port(cbs));
    nr_close(c);
}

/*
 * Clients that never answer: a flood of grants to a port that accepts
 * connections and never reads. The server goes on answering everyone
 * (other owners lock and unlock), keeps the grants, and gives up on the
 * calls after their attempts.
 */
static void test_unreachable(void)
{
    enum { N = 150, PAIRS = 100 };
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int hole = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    nr_ctx *c;
    nr_fh f = fresh_file(&c);
    char caller[32], oh[32];
    nl_owner o;

    g_assert_cmpint(bind(hole, (struct sockaddr *)&a, sizeof a), ==, 0);
    g_assert_cmpint(listen(hole, 1024), ==, 0);
    g_assert_cmpint(getsockname(hole, (struct sockaddr *)&a, &alen), ==, 0);
    nl_pmap_set(pmap, ntohs(a.sin_port), 0);
    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, NL_EOF, true, false, false, 1), ==, NLM4_GRANTED);
    for (unsigned i = 0; i < N; i++) {
        g_snprintf(caller, sizeof caller, "flood%u", i % 3);
        g_snprintf(oh, sizeof oh, "%u@flood", i);
        o = (nl_owner){caller, 1000 + i, oh};
        g_assert_cmpint(nl_lock(c, &f, &o, 10 + i, 1, true, true, false, 1), ==, NLM4_BLOCKED);
    }
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, NL_EOF), ==, NLM4_GRANTED);
    /* Every request is granted at once, whatever the callbacks do. */
    g_assert_cmpint(nl_test(c, &f, &own_a, 10, N, false, NULL), ==, NLM4_DENIED);
    /* The server keeps answering. */
    for (unsigned i = 0; i < PAIRS; i++) {
        g_assert_cmpint(nl_lock(c, &f, &own_b, 1000, 1, true, false, false, 1), ==, NLM4_GRANTED);
        g_assert_cmpint(nl_unlock(c, &f, &own_b, 1000, 1), ==, NLM4_GRANTED);
    }
    /* The calls it makes are bounded: some wait, none piles up without end. */
    metric_wait("pgnfs_nlm_callbacks_total{result=\"retried\"}", 1);
    nl_pmap_set(pmap, nl_cbsrv_port(cbs), nl_cbsrv_port(cbs));
    close(hole);
    nr_close(c);
}

/* A second server on the same database calls back its own client when the
 * first server's unlock grants it. */
static void test_second_server(void)
{
    char *db = g_strdup_printf("database.conninfo=%s", tl_server_conninfo(pt.server));
    const char *const over[] = {db, "nlm.server_name=beta", "server.portmap=off",
                                "cache.coherence=shared", NULL};
    tl_server *b = tl_server_start(over);
    nr_ctx *c, *cb2 = nr_open(tl_server_port(b), NULL);
    nr_fh f = fresh_file(&c);
    unsigned n = received();
    nl_callback cb;

    g_assert_nonnull(cb2);
    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 1, true, false, false, 1), ==, NLM4_GRANTED);
    g_assert_cmpint(nl_lock(cb2, &f, &own_b, 0, 1, true, true, false, 1), ==, NLM4_BLOCKED);
    g_assert_cmpint(nl_unlock(c, &f, &own_a, 0, 1), ==, NLM4_GRANTED);
    cb = callback(n + 1);
    g_assert_cmpuint(cb.proc, ==, NL_PROC_GRANTED);
    g_assert_cmpstr(cb.caller, ==, "hostB");
    g_assert_cmpint(nl_test(c, &f, &own_a, 0, 1, false, NULL), ==, NLM4_DENIED);
    nr_close(cb2);
    nr_close(c);
    tl_server_stop(b);
    g_free(db);
}

/* After a restart the server tells the hosts that held locks (SM_NOTIFY). */
static void test_notify_after_restart(void)
{
    nr_ctx *c;
    nr_fh f = fresh_file(&c);
    unsigned n = received();
    nl_callback cb;

    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 1, true, false, false, 1), ==, NLM4_GRANTED);
    nr_close(c);
    pt_restart();
    cb = callback(n + 1);
    g_assert_cmpuint(cb.prog, ==, NL_NSM_PROG);
    g_assert_cmpuint(cb.proc, ==, NL_SM_NOTIFY);
    g_assert_cmpstr(cb.caller, ==, "127.0.0.1"); /* as the host reached us */
    g_assert_cmpuint(cb.stat % 2, ==, 1);
    g_assert_cmpuint(cb.stat, >, 1);
    g_assert_cmpuint(metric_wait("pgnfs_nlm_nsm_state", cb.stat), ==, cb.stat);
    g_assert_cmpfloat(metric_wait("pgnfs_nlm_grace_active", 1), ==, 1);
    g_assert_cmpfloat(metric_wait("pgnfs_nlm_grace_seconds", 1), <=, 3600);
    /* The client reclaims in the grace period (the other cases' locks keep
     * it going: test_nlm.c checks its end). */
    c = pt_open(NULL);
    g_assert_cmpint(nl_lock(c, &f, &own_b, 5, 1, true, false, false, 3), ==,
                    NLM4_DENIED_GRACE_PERIOD);
    g_assert_cmpint(nl_lock(c, &f, &own_a, 0, 1, true, false, true, 1), ==, NLM4_GRANTED);
    nr_close(c);
}

int main(int argc, char **argv)
{
    char *mport;
    nr_ctx *m;
    mountres3 mr;

    if (!isolate())
        return 77;
    cbs = nl_cbsrv_new();
    pmap = nl_pmap_new(nl_cbsrv_port(cbs), nl_cbsrv_port(cbs));
    if (!pmap) {
        printf("1..0 # SKIP cannot bind port 111: %s\n", g_strerror(errno));
        return 77;
    }
    metrics_port = tl_free_port();
    mport = g_strdup_printf("metrics.port=%u", metrics_port);
    /* nlm.grace: longer than any run of the cases after the restart. */
    const char *const over[] = {"server.portmap=off",
                                "nlm.server_name=alpha",
                                "nlm.grace=3600",
                                "metrics.enable=true",
                                "cache.coherence=shared",
                                mport,
                                NULL};
    g_test_init(&argc, &argv, NULL);
    pt.server = tl_server_start(over);
    pt.port = pt.mount_port = tl_server_port(pt.server);
    pt.export_path = "/";
    m = pt_open_mount(NULL);
    g_assert_cmpint(nr_mnt(m, "/", &mr, &pt.root), ==, MNT3_OK);
    nr_close(m);
    pt_add_inproc("/nlm_cb/granted", test_granted);
    pt_add_inproc("/nlm_cb/msg_udp", test_msg_udp);
    pt_add_inproc("/nlm_cb/v3", test_v3);
    pt_add_inproc("/nlm_cb/refused", test_refused);
    pt_add_inproc("/nlm_cb/self", test_self);
    pt_add_inproc("/nlm_cb/unreachable", test_unreachable);
    pt_add_inproc("/nlm_cb/second_server", test_second_server);
    pt_add_inproc("/nlm_cb/notify_after_restart", test_notify_after_restart);
    g_free(mport);
    return pt_run();
}
