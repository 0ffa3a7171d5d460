/*
 * test_client.c -- the outgoing RPC client (server/runtime/srv_client.h)
 * against fake peers on loopback (client_peer.h): calls and replies over
 * TCP and UDP, credentials, void and allocated results, send-and-forget,
 * portmapper lookups and their cache, timeouts, refused ports, UDP
 * retransmission, one connection reused and closed when idle, the
 * limits (-EBUSY), bad arguments (-EINVAL), cancellation on free.
 *
 * NOTES
 *   No case depends on timing: every wait is for an event (a done, a
 *   counter of the peer) with a generous deadline; timeouts are asserted
 *   only as the outcome, never by how long they took.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "client_peer.h"
#include "srv_client.h"

#define WAIT_S    60
#define LONG_MS   60000
#define SHORT_MS  300
#define STR_MAX   64
#define PMAP_PROG 100000u

/* What one done told. */
typedef struct {
    GMutex lock;
    GCond cond;
    unsigned ran;
    int err;
    u_int val;
    char *str;
    srv_client *resubmit; /* submit once more from done, to this client */
    int resubmit_rc;
} outcome;

static bool_t xdr_str64(XDR *x, char **s)
{
    return xdr_string(x, s, STR_MAX);
}

static void outcome_init(outcome *o)
{
    memset(o, 0, sizeof *o);
    g_mutex_init(&o->lock);
    g_cond_init(&o->cond);
}

static void outcome_clear(outcome *o)
{
    g_free(o->str);
    g_mutex_clear(&o->lock);
    g_cond_clear(&o->cond);
}

static void on_done_int(void *arg, int err, void *res)
{
    outcome *o = arg;

    g_mutex_lock(&o->lock);
    o->ran++;
    o->err = err;
    if (err == 0 && res)
        o->val = *(u_int *)res;
    g_cond_broadcast(&o->cond);
    g_mutex_unlock(&o->lock);
}

/* Wait for o's done; its err. Fails the test after WAIT_S. */
static int outcome_wait(outcome *o)
{
    gint64 end = g_get_monotonic_time() + WAIT_S * G_USEC_PER_SEC;

    g_mutex_lock(&o->lock);
    while (o->ran == 0)
        g_assert_true(g_cond_wait_until(&o->cond, &o->lock, end) || o->ran > 0);
    int err = o->err;
    g_mutex_unlock(&o->lock);
    return err;
}

static struct sockaddr_in addr_of(const char *ip, unsigned port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

    g_assert_cmpint(inet_pton(AF_INET, ip, &sa.sin_addr), ==, 1);
    return sa;
}

/* A PEER_PROC_INC call of *arg to sa. */
static srv_client_call inc_call(const struct sockaddr_in *sa, bool tcp, const u_int *arg,
                                unsigned timeout_ms)
{
    return (srv_client_call){.addr = (const struct sockaddr *)sa,
                             .addrlen = sizeof *sa,
                             .tcp = tcp,
                             .prog = PEER_PROG,
                             .vers = PEER_VERS,
                             .proc = PEER_PROC_INC,
                             .args_xdr = (xdrproc_t)xdr_u_int,
                             .args = arg,
                             .res_xdr = (xdrproc_t)xdr_u_int,
                             .res_size = sizeof(u_int),
                             .timeout_ms = timeout_ms};
}

static peer *start(peer_mode mode)
{
    return peer_start(&(peer_opts){.mode = mode});
}

/* ---- calls and replies ----------------------------------------------------- */

/* INC over one transport: results, the credential, one connection reused. */
static void call_on(bool tcp)
{
    peer *p = start(PEER_ECHO);
    srv_client *c = srv_client_new(&(srv_client_opts){.idle_ms = LONG_MS});
    struct sockaddr_in sa = addr_of("127.0.0.1", peer_port(p));

    for (u_int i = 0; i < 10; i++) {
        u_int arg = 1000 + i, res = 0;
        srv_client_call call = inc_call(&sa, tcp, &arg, LONG_MS);
        call.machine = "client.test";
        call.uid = 4321 + i;
        call.gid = 99;
        g_assert_cmpint(srv_client_call_sync(c, &call, &res), ==, 0);
        g_assert_cmpuint(res, ==, arg + 1);
        g_assert_cmpuint(peer_last_uid(p), ==, 4321 + i);
    }
    g_assert_cmpuint(peer_count(p, PEER_N_AUTHSYS), ==, 10);
    g_assert_cmpuint(peer_count(p, PEER_N_ACCEPTS), ==, tcp ? 1 : 0);
    srv_client_stats st;
    srv_client_stats_get(c, &st);
    g_assert_cmpuint(st.calls, ==, 10);
    g_assert_cmpuint(st.replies, ==, 10);
    srv_client_free(c);
    peer_stop(p);
}

static void test_tcp_call(void)
{
    call_on(true);
}

static void test_udp_call(void)
{
    call_on(false);
}

/* IPv6: a call over each transport to ::1 (skipped without IPv6). */
static void test_ipv6(void)
{
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    int fd = socket(AF_INET6, SOCK_DGRAM, 0);
    bool have = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0;

    if (fd >= 0)
        close(fd);
    if (!have) {
        g_test_skip("no IPv6 loopback");
        return;
    }
    peer *p = peer_start(&(peer_opts){.mode = PEER_ECHO, .addr = "::1"});
    srv_client *c = srv_client_new(NULL);
    sa.sin6_port = htons((uint16_t)peer_port(p));
    for (int tcp = 0; tcp < 2; tcp++) {
        u_int arg = 41, res = 0;
        srv_client_call call = {.addr = (struct sockaddr *)&sa,
                                .addrlen = sizeof sa,
                                .tcp = tcp,
                                .prog = PEER_PROG,
                                .vers = PEER_VERS,
                                .proc = PEER_PROC_INC,
                                .args_xdr = (xdrproc_t)xdr_u_int,
                                .args = &arg,
                                .res_xdr = (xdrproc_t)xdr_u_int,
                                .res_size = sizeof res,
                                .timeout_ms = LONG_MS};
        g_assert_cmpint(srv_client_call_sync(c, &call, &res), ==, 0);
        g_assert_cmpuint(res, ==, 42);
    }
    srv_client_free(c);
    peer_stop(p);
}

/* Void results, allocated results taken by the caller, AUTH_NONE. */
static void test_results(void)
{
    peer *p = start(PEER_ECHO);
    srv_client *c = srv_client_new(NULL);
    struct sockaddr_in sa = addr_of("127.0.0.1", peer_port(p));

    for (int tcp = 0; tcp < 2; tcp++) {
        srv_client_call call = {.addr = (struct sockaddr *)&sa,
                                .addrlen = sizeof sa,
                                .tcp = tcp,
                                .prog = PEER_PROG,
                                .vers = PEER_VERS,
                                .proc = PEER_PROC_NULL,
                                .timeout_ms = LONG_MS};
        g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, 0);
        u_int n = 17;
        char *s = NULL;
        call.proc = PEER_PROC_STR;
        call.args_xdr = (xdrproc_t)xdr_u_int;
        call.args = &n;
        call.res_xdr = (xdrproc_t)xdr_str64;
        call.res_size = sizeof s;
        g_assert_cmpint(srv_client_call_sync(c, &call, &s), ==, 0);
        g_assert_cmpstr(s, ==, "xxxxxxxxxxxxxxxxx");
        xdr_free((xdrproc_t)xdr_str64, (char *)&s);
        n = STR_MAX + 1; /* beyond the result's bound: undecodable */
        g_assert_cmpint(srv_client_call_sync(c, &call, &s), ==, -EPROTO);
        g_assert_null(s);
    }
    g_assert_cmpuint(peer_count(p, PEER_N_AUTHSYS), ==, 0);
    srv_client_free(c);
    peer_stop(p);
}

/* no_reply: done runs with 0 once sent, and the peer gets the call. */
static void test_no_reply(void)
{
    peer *p = start(PEER_SILENT);
    srv_client *c = srv_client_new(NULL);
    struct sockaddr_in sa = addr_of("127.0.0.1", peer_port(p));
    u_int arg = 5;

    for (int tcp = 0; tcp < 2; tcp++) {
        srv_client_call call = inc_call(&sa, tcp, &arg, LONG_MS);
        call.no_reply = true;
        g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, 0);
        g_assert_true(peer_wait(p, PEER_N_CALLS, (unsigned)tcp + 1));
    }
    srv_client_free(c);
    peer_stop(p);
}

/* ---- the portmapper -------------------------------------------------------- */

/* Port 0: the host's portmapper is asked once per (transport, program,
 * version); its answer is cached; an unknown program is -ENOENT. */
static void test_pmap(void)
{
    peer *p = start(PEER_ECHO);
    peer *pm = peer_start(
        &(peer_opts){.mode = PEER_PMAP, .pmap_prog = PEER_PROG, .pmap_answer = peer_port(p)});
    srv_client *c = srv_client_new(&(srv_client_opts){.pmap_port = peer_port(pm)});
    struct sockaddr_in sa = addr_of("127.0.0.1", 0);
    srv_client_stats st;

    for (int tcp = 0; tcp < 2; tcp++) {
        for (u_int i = 0; i < 3; i++) {
            u_int arg = i, res = 0;
            srv_client_call call = inc_call(&sa, tcp, &arg, LONG_MS);
            g_assert_cmpint(srv_client_call_sync(c, &call, &res), ==, 0);
            g_assert_cmpuint(res, ==, i + 1);
        }
    }
    srv_client_stats_get(c, &st);
    g_assert_cmpuint(st.pmap_lookups, ==, 2);
    g_assert_cmpuint(peer_count(pm, PEER_N_CALLS), ==, 2);
    g_assert_cmpuint(peer_count(p, PEER_N_CALLS), ==, 6);

    u_int arg = 1;
    srv_client_call call = inc_call(&sa, true, &arg, LONG_MS);
    call.prog = PEER_PROG + 1;
    g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, -ENOENT);
    call.tcp = false;
    g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, -ENOENT);
    srv_client_free(c);
    peer_stop(pm);
    peer_stop(p);
}

/* Calls waiting on one lookup all go on when it answers. */
static void test_pmap_shared(void)
{
    enum { N = 8 };
    peer *p = start(PEER_ECHO);
    peer *pm = peer_start(
        &(peer_opts){.mode = PEER_PMAP, .pmap_prog = PEER_PROG, .pmap_answer = peer_port(p)});
    srv_client *c = srv_client_new(&(srv_client_opts){.pmap_port = peer_port(pm)});
    struct sockaddr_in sa = addr_of("127.0.0.1", 0);
    outcome o[N];
    u_int args[N];

    for (unsigned i = 0; i < N; i++) {
        outcome_init(&o[i]);
        args[i] = 100 * i;
        srv_client_call call = inc_call(&sa, true, &args[i], LONG_MS);
        g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o[i]), ==, 0);
    }
    for (unsigned i = 0; i < N; i++) {
        g_assert_cmpint(outcome_wait(&o[i]), ==, 0);
        g_assert_cmpuint(o[i].val, ==, 100 * i + 1);
        g_assert_cmpuint(o[i].ran, ==, 1);
    }
    /* However they interleaved with the lookup, it was made at most once at a time. */
    srv_client_stats st;
    srv_client_stats_get(c, &st);
    g_assert_cmpuint(st.pmap_lookups, >=, 1);
    g_assert_cmpuint(st.pmap_lookups, ==, peer_count(pm, PEER_N_CALLS));
    srv_client_free(c);
    for (unsigned i = 0; i < N; i++)
        outcome_clear(&o[i]);
    peer_stop(pm);
    peer_stop(p);
}

/* ---- failures -------------------------------------------------------------- */

/* A peer that never answers: -ETIMEDOUT, over both transports, also when
 * the silent one is the portmapper. */
static void test_timeout(void)
{
    peer *p = start(PEER_SILENT);
    srv_client *c = srv_client_new(&(srv_client_opts){.pmap_port = peer_port(p)});
    u_int arg = 1;

    for (int tcp = 0; tcp < 2; tcp++) {
        struct sockaddr_in sa = addr_of("127.0.0.1", peer_port(p));
        srv_client_call call = inc_call(&sa, tcp, &arg, SHORT_MS);
        g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, -ETIMEDOUT);
        sa = addr_of("127.0.0.1", 0);
        call = inc_call(&sa, tcp, &arg, SHORT_MS);
        g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, -ETIMEDOUT);
    }
    srv_client_stats st;
    srv_client_stats_get(c, &st);
    g_assert_cmpuint(st.timeouts, ==, 4);
    srv_client_free(c);
    peer_stop(p);
}

/* A UDP peer that drops the first datagrams: retransmission gets through. */
static void test_retransmit(void)
{
    peer *p = peer_start(&(peer_opts){.mode = PEER_DROP, .drop = 2});
    srv_client *c = srv_client_new(NULL);
    struct sockaddr_in sa = addr_of("127.0.0.1", peer_port(p));
    u_int arg = 7, res = 0;
    srv_client_call call = inc_call(&sa, false, &arg, LONG_MS);

    g_assert_cmpint(srv_client_call_sync(c, &call, &res), ==, 0);
    g_assert_cmpuint(res, ==, 8);
    g_assert_cmpuint(peer_count(p, PEER_N_CALLS), >=, 3);
    srv_client_stats st;
    srv_client_stats_get(c, &st);
    g_assert_cmpuint(st.retransmits, >=, 2);
    srv_client_free(c);
    peer_stop(p);
}

/* A port nobody listens on: -ECONNREFUSED (TCP: RST; UDP: ICMP). */
static void test_refused(void)
{
    int tcp_fd = socket(AF_INET, SOCK_STREAM, 0); /* bound, never listening */
    struct sockaddr_in sa = addr_of("127.0.0.1", 0);
    socklen_t sl = sizeof sa;

    g_assert_cmpint(bind(tcp_fd, (struct sockaddr *)&sa, sizeof sa), ==, 0);
    g_assert_cmpint(getsockname(tcp_fd, (struct sockaddr *)&sa, &sl), ==, 0);
    srv_client *c = srv_client_new(NULL);
    u_int arg = 1;
    srv_client_call call = inc_call(&sa, true, &arg, LONG_MS);
    g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, -ECONNREFUSED);

    /* UDP: a port that was free a moment ago (bound and closed). */
    int udp_fd = socket(AF_INET, SOCK_DGRAM, 0);
    sa = addr_of("127.0.0.1", 0);
    g_assert_cmpint(bind(udp_fd, (struct sockaddr *)&sa, sizeof sa), ==, 0);
    g_assert_cmpint(getsockname(udp_fd, (struct sockaddr *)&sa, &sl), ==, 0);
    close(udp_fd);
    call = inc_call(&sa, false, &arg, LONG_MS);
    g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, -ECONNREFUSED);
    srv_client_free(c);
    close(tcp_fd);
}

/* ---- connections ----------------------------------------------------------- */

/* Calls submitted together to one TCP destination share one connection
 * (the later ones wait behind the connect); it closes when idle and the
 * next call opens another. */
static void test_connection(void)
{
    enum { N = 16 };
    peer *p = start(PEER_ECHO);
    srv_client *c = srv_client_new(&(srv_client_opts){.idle_ms = 200});
    struct sockaddr_in sa = addr_of("127.0.0.1", peer_port(p));
    outcome o[N];
    u_int args[N];

    for (unsigned i = 0; i < N; i++) {
        outcome_init(&o[i]);
        args[i] = i;
        srv_client_call call = inc_call(&sa, true, &args[i], LONG_MS);
        g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o[i]), ==, 0);
    }
    for (unsigned i = 0; i < N; i++) {
        g_assert_cmpint(outcome_wait(&o[i]), ==, 0);
        g_assert_cmpuint(o[i].val, ==, i + 1);
        outcome_clear(&o[i]);
    }
    /* Every connection ends with a close by the client (idle); a close
     * before every call was answered would have shown as a failure above. */
    unsigned accepts = peer_count(p, PEER_N_ACCEPTS);
    g_assert_cmpuint(accepts, >=, 1);
    g_assert_true(peer_wait(p, PEER_N_EOFS, accepts));
    u_int arg = 1, res = 0;
    srv_client_call call = inc_call(&sa, true, &arg, LONG_MS);
    g_assert_cmpint(srv_client_call_sync(c, &call, &res), ==, 0);
    g_assert_cmpuint(res, ==, 2);
    g_assert_cmpuint(peer_count(p, PEER_N_ACCEPTS), ==, accepts + 1);
    srv_client_free(c);
    peer_stop(p);
}

/* With idle connections kept long, N calls in a row use one connection. */
static void test_connection_reuse(void)
{
    peer *p = start(PEER_ECHO);
    srv_client *c = srv_client_new(&(srv_client_opts){.idle_ms = 10 * LONG_MS});
    struct sockaddr_in sa = addr_of("127.0.0.1", peer_port(p));
    enum { N = 16 };
    outcome o[N];
    u_int args[N];

    for (unsigned i = 0; i < N; i++) {
        outcome_init(&o[i]);
        args[i] = i;
        srv_client_call call = inc_call(&sa, true, &args[i], LONG_MS);
        g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o[i]), ==, 0);
    }
    for (unsigned i = 0; i < N; i++) {
        g_assert_cmpint(outcome_wait(&o[i]), ==, 0);
        outcome_clear(&o[i]);
    }
    g_assert_cmpuint(peer_count(p, PEER_N_ACCEPTS), ==, 1);
    srv_client_free(c);
    peer_stop(p);
}

/* ---- limits and arguments -------------------------------------------------- */

/* max_per_host and max_pending: -EBUSY beyond them; room again once calls end. */
static void test_busy(void)
{
    peer *p1 = start(PEER_SILENT);
    peer *p2 = peer_start(&(peer_opts){.mode = PEER_SILENT, .addr = "127.0.0.2"});
    srv_client *c = srv_client_new(&(srv_client_opts){.max_pending = 3, .max_per_host = 2});
    struct sockaddr_in a1 = addr_of("127.0.0.1", peer_port(p1));
    struct sockaddr_in a2 = addr_of("127.0.0.2", peer_port(p2));
    outcome o[4];
    u_int arg = 1;

    for (unsigned i = 0; i < 4; i++)
        outcome_init(&o[i]);
    srv_client_call call = inc_call(&a1, true, &arg, LONG_MS);
    g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o[0]), ==, 0);
    call.tcp = false;
    g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o[1]), ==, 0);
    g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o[3]), ==, -EBUSY); /* per host */
    call = inc_call(&a2, true, &arg, SHORT_MS);
    g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o[2]), ==, 0);
    g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o[3]), ==, -EBUSY); /* pending */
    /* The short one times out and gives its place back before its done runs. */
    g_assert_cmpint(outcome_wait(&o[2]), ==, -ETIMEDOUT);
    g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o[3]), ==, 0);
    g_assert_cmpint(outcome_wait(&o[3]), ==, -ETIMEDOUT);
    srv_client_stats st;
    srv_client_stats_get(c, &st);
    g_assert_cmpuint(st.busy, ==, 2);
    srv_client_free(c);
    g_assert_cmpint(o[0].err, ==, -ECANCELED);
    g_assert_cmpint(o[1].err, ==, -ECANCELED);
    for (unsigned i = 0; i < 4; i++) {
        g_assert_cmpuint(o[i].ran, ==, 1);
        outcome_clear(&o[i]);
    }
    peer_stop(p2);
    peer_stop(p1);
}

static void test_invalid(void)
{
    srv_client *c = srv_client_new(NULL);
    struct sockaddr_in sa = addr_of("127.0.0.1", 9);
    struct sockaddr_un {
        sa_family_t family;
        char path[108];
    } un = {.family = AF_UNIX};
    u_int arg = 1;
    outcome o;
    char machine[300];

    outcome_init(&o);
    srv_client_call call = inc_call(&sa, true, &arg, LONG_MS);
    g_assert_cmpint(srv_client_submit(c, &call, NULL, &o), ==, -EINVAL);
    g_assert_cmpint(srv_client_submit(NULL, &call, on_done_int, &o), ==, -EINVAL);
    g_assert_cmpint(srv_client_submit(c, NULL, on_done_int, &o), ==, -EINVAL);
    call.addrlen = 4;
    g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o), ==, -EINVAL);
    call.addr = (struct sockaddr *)&un;
    call.addrlen = sizeof un;
    g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o), ==, -EINVAL);
    call = inc_call(&sa, true, &arg, LONG_MS);
    call.res_size = 0;
    g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o), ==, -EINVAL);
    call = inc_call(&sa, true, &arg, LONG_MS);
    memset(machine, 'm', sizeof machine - 1);
    machine[sizeof machine - 1] = 0;
    call.machine = machine;
    g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o), ==, -EINVAL);
    /* Arguments beyond SRV_CLIENT_CALL_MAX. */
    u_int n = SRV_CLIENT_CALL_MAX;
    char *big = g_malloc0(n + 1);
    memset(big, 'b', n);
    call = inc_call(&sa, true, &arg, LONG_MS);
    call.args_xdr = (xdrproc_t)xdr_wrapstring;
    call.args = &big;
    g_assert_cmpint(srv_client_submit(c, &call, on_done_int, &o), ==, -EINVAL);
    g_free(big);
    srv_client_free(c);
    g_assert_cmpuint(o.ran, ==, 0);
    outcome_clear(&o);
}

/* done of test_cancel: record, and try to submit once more. */
static void on_done_resubmit(void *arg, int err, void *res)
{
    outcome *o = arg;

    if (o->resubmit) {
        struct sockaddr_in sa = addr_of("127.0.0.1", 9);
        u_int v = 1;
        srv_client_call call = inc_call(&sa, false, &v, LONG_MS);
        o->resubmit_rc = srv_client_submit(o->resubmit, &call, on_done_int, o);
    }
    on_done_int(arg, err, res);
}

/* Free with calls everywhere (in flight on TCP and UDP, waiting for a
 * lookup): every done runs once with -ECANCELED before free returns; a
 * submit from such a done is refused. */
static void test_cancel(void)
{
    enum { N = 12 };
    peer *p = start(PEER_SILENT);
    srv_client *c = srv_client_new(&(srv_client_opts){.pmap_port = peer_port(p)});
    outcome o[N];
    u_int arg = 1;

    for (unsigned i = 0; i < N; i++) {
        outcome_init(&o[i]);
        struct sockaddr_in sa = addr_of("127.0.0.1", i % 3 == 2 ? 0 : peer_port(p));
        srv_client_call call = inc_call(&sa, i % 2, &arg, LONG_MS);
        o[i].resubmit = i == 0 ? c : NULL;
        g_assert_cmpint(srv_client_submit(c, &call, on_done_resubmit, &o[i]), ==, 0);
    }
    /* Some of them reached the peer: calls in flight, not only queued. */
    g_assert_true(peer_wait(p, PEER_N_CALLS, 2));
    srv_client_free(c);
    for (unsigned i = 0; i < N; i++) {
        g_assert_cmpuint(o[i].ran, ==, 1);
        g_assert_cmpint(o[i].err, ==, -ECANCELED);
        outcome_clear(&o[i]);
    }
    g_assert_cmpint(o[0].resubmit_rc, ==, -ECANCELED);
    peer_stop(p);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/client/tcp_call", test_tcp_call);
    g_test_add_func("/client/udp_call", test_udp_call);
    g_test_add_func("/client/ipv6", test_ipv6);
    g_test_add_func("/client/results", test_results);
    g_test_add_func("/client/no_reply", test_no_reply);
    g_test_add_func("/client/pmap", test_pmap);
    g_test_add_func("/client/pmap_shared", test_pmap_shared);
    g_test_add_func("/client/timeout", test_timeout);
    g_test_add_func("/client/retransmit", test_retransmit);
    g_test_add_func("/client/refused", test_refused);
    g_test_add_func("/client/connection", test_connection);
    g_test_add_func("/client/connection_reuse", test_connection_reuse);
    g_test_add_func("/client/busy", test_busy);
    g_test_add_func("/client/invalid", test_invalid);
    g_test_add_func("/client/cancel", test_cancel);
    return g_test_run();
}
