/*
 * test_client_hostile.c -- the outgoing RPC client (srv_client.h) against
 * peers that answer wrongly (client_peer.h): garbage, wrong xids, results
 * cut short, RPC errors, record marks announcing 2 GiB or nonsense,
 * replies beyond the size cap, floods of unsolicited replies, a peer that
 * closes every connection, one that accepts and never answers, spoofed
 * UDP replies from another port, portmappers that lie, and randomly
 * mutated replies. Each call's done must run exactly once with an error
 * the header lists, nothing may crash (run it under tests/sanitize.sh),
 * and the client must keep working for well-behaved peers afterwards.
 *
 * NOTES
 *   No case depends on timing: waits are for events with a generous
 *   deadline; where a counter is checked after a timeout, the test waits
 *   for the counter to reach its value rather than assume it has.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "client_peer.h"
#include "srv_client.h"

#define WAIT_S   60
#define LONG_MS  60000
#define SHORT_MS 300
#define STR_MAX  64

typedef struct {
    GMutex lock;
    GCond cond;
    unsigned ran, want;
    int errs[1024];
    unsigned nerr;
} tally;

static bool_t xdr_str64(XDR *x, char **s)
{
    return xdr_string(x, s, STR_MAX);
}

static void tally_init(tally *t)
{
    memset(t, 0, sizeof *t);
    g_mutex_init(&t->lock);
    g_cond_init(&t->cond);
}

static void tally_clear(tally *t)
{
    g_mutex_clear(&t->lock);
    g_cond_clear(&t->cond);
}

/* done: count, keep the error; a string result must respect its bound. */
static void on_done(void *arg, int err, void *res)
{
    tally *t = arg;

    if (err == 0 && res) {
        char *s = *(char **)res;
        g_assert_true(s == NULL || strlen(s) <= STR_MAX);
    }
    g_mutex_lock(&t->lock);
    if (t->nerr < G_N_ELEMENTS(t->errs))
        t->errs[t->nerr++] = err;
    t->ran++;
    g_cond_broadcast(&t->cond);
    g_mutex_unlock(&t->lock);
}

/* Wait until n dones ran in all; asserts it happens within WAIT_S. */
static void tally_wait(tally *t, unsigned n)
{
    gint64 end = g_get_monotonic_time() + WAIT_S * G_USEC_PER_SEC;

    g_mutex_lock(&t->lock);
    while (t->ran < n)
        g_assert_true(g_cond_wait_until(&t->cond, &t->lock, end) || t->ran >= n);
    g_mutex_unlock(&t->lock);
}

static struct sockaddr_in addr_of(unsigned port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return sa;
}

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

/* One INC call to a peer in mode over one transport; done's error. */
static int call_peer(srv_client *c, peer *p, bool tcp, unsigned timeout_ms)
{
    struct sockaddr_in sa = addr_of(peer_port(p));
    u_int arg = 1, res = 0;
    srv_client_call call = inc_call(&sa, tcp, &arg, timeout_ms);

    return srv_client_call_sync(c, &call, &res);
}

/* Wait until a counter of c reaches n (read through get); false after WAIT_S. */
static bool stats_wait(srv_client *c, size_t field, uint64_t n)
{
    gint64 end = g_get_monotonic_time() + WAIT_S * G_USEC_PER_SEC;

    for (;;) {
        srv_client_stats st;
        srv_client_stats_get(c, &st);
        uint64_t v;
        memcpy(&v, (const char *)&st + field, sizeof v);
        if (v >= n)
            return true;
        if (g_get_monotonic_time() > end)
            return false;
        g_usleep(10 * 1000);
    }
}

/* The client still serves a peer that behaves. */
static void assert_still_works(srv_client *c)
{
    peer *good = peer_start(&(peer_opts){.mode = PEER_ECHO});

    g_assert_cmpint(call_peer(c, good, true, LONG_MS), ==, 0);
    g_assert_cmpint(call_peer(c, good, false, LONG_MS), ==, 0);
    peer_stop(good);
}

/* ---- replies that are not replies ------------------------------------------ */

/* Garbage and wrong xids match nothing: the call times out; each is counted. */
static void test_unmatched(void)
{
    peer_mode modes[] = {PEER_GARBAGE, PEER_WRONG_XID};
    srv_client *c = srv_client_new(NULL);

    for (unsigned m = 0; m < G_N_ELEMENTS(modes); m++) {
        peer *p = peer_start(&(peer_opts){.mode = modes[m]});
        for (int tcp = 0; tcp < 2; tcp++)
            g_assert_cmpint(call_peer(c, p, tcp, SHORT_MS), ==, -ETIMEDOUT);
        peer_stop(p);
    }
    g_assert_true(stats_wait(c, G_STRUCT_OFFSET(srv_client_stats, unmatched), 1));
    assert_still_works(c);
    srv_client_free(c);
}

/* The right xid with an undecodable or failed reply: -EPROTO at once. */
static void test_bad_replies(void)
{
    peer_mode modes[] = {PEER_BAD_BODY, PEER_PROG_UNAVAIL};
    srv_client *c = srv_client_new(NULL);

    for (unsigned m = 0; m < G_N_ELEMENTS(modes); m++) {
        peer *p = peer_start(&(peer_opts){.mode = modes[m]});
        for (int tcp = 0; tcp < 2; tcp++)
            g_assert_cmpint(call_peer(c, p, tcp, LONG_MS), ==, -EPROTO);
        peer_stop(p);
    }
    srv_client_stats st;
    srv_client_stats_get(c, &st);
    g_assert_cmpuint(st.bad_replies, ==, 4);
    assert_still_works(c);
    srv_client_free(c);
}

/* ---- streams --------------------------------------------------------------- */

/* A mark announcing 2 GiB, a zero-length fragment that is not the last, a
 * record beyond max_reply: the stream is closed, the call fails -EPROTO,
 * nothing of the announced size is allocated. */
static void test_broken_streams(void)
{
    srv_client *c = srv_client_new(&(srv_client_opts){.max_reply = 4096});
    peer *huge = peer_start(&(peer_opts){.mode = PEER_HUGE_MARK});
    peer *bad = peer_start(&(peer_opts){.mode = PEER_BAD_MARK});
    peer *big = peer_start(&(peer_opts){.mode = PEER_BIG, .big = 100 * 1024});

    g_assert_cmpint(call_peer(c, huge, true, LONG_MS), ==, -EPROTO);
    g_assert_cmpint(call_peer(c, bad, true, LONG_MS), ==, -EPROTO);
    g_assert_cmpint(call_peer(c, big, true, LONG_MS), ==, -EPROTO);
    srv_client_stats st;
    srv_client_stats_get(c, &st);
    g_assert_cmpuint(st.broken_streams, ==, 3);
    /* The connections were closed by the client. */
    g_assert_true(peer_wait(huge, PEER_N_EOFS, 1));
    g_assert_true(peer_wait(bad, PEER_N_EOFS, 1));
    g_assert_true(peer_wait(big, PEER_N_EOFS, 1));
    assert_still_works(c);
    srv_client_free(c);
    peer_stop(big);
    peer_stop(bad);
    peer_stop(huge);
}

/* A UDP reply beyond max_reply is dropped (the call times out). */
static void test_oversize_datagram(void)
{
    srv_client *c = srv_client_new(&(srv_client_opts){.max_reply = 4096});
    peer *big = peer_start(&(peer_opts){.mode = PEER_BIG, .big = 60000});

    g_assert_cmpint(call_peer(c, big, false, SHORT_MS), ==, -ETIMEDOUT);
    g_assert_true(stats_wait(c, G_STRUCT_OFFSET(srv_client_stats, dropped_oversize), 1));
    srv_client_free(c);
    peer_stop(big);
}

/* A peer that closes every connection on the first call: one reconnect,
 * then -ECONNRESET. */
static void test_close_on_call(void)
{
    srv_client *c = srv_client_new(NULL);
    peer *p = peer_start(&(peer_opts){.mode = PEER_CLOSE});

    g_assert_cmpint(call_peer(c, p, true, LONG_MS), ==, -ECONNRESET);
    g_assert_cmpuint(peer_count(p, PEER_N_ACCEPTS), ==, 2);
    g_assert_cmpuint(peer_count(p, PEER_N_CALLS), ==, 2);
    srv_client_free(c);
    peer_stop(p);
}

/* Thousands of unsolicited replies before the right one. */
static void test_flood(void)
{
    srv_client *c = srv_client_new(NULL);
    peer *tcp = peer_start(&(peer_opts){.mode = PEER_FLOOD, .flood = 5000});
    peer *udp = peer_start(&(peer_opts){.mode = PEER_FLOOD, .flood = 100});

    g_assert_cmpint(call_peer(c, tcp, true, LONG_MS), ==, 0);
    srv_client_stats st;
    srv_client_stats_get(c, &st);
    g_assert_cmpuint(st.unmatched, ==, 5000); /* a stream keeps their order */
    /* Datagrams may be lost in a full buffer: the call is retransmitted. */
    g_assert_cmpint(call_peer(c, udp, false, LONG_MS), ==, 0);
    srv_client_free(c);
    peer_stop(udp);
    peer_stop(tcp);
}

/* A peer that accepts and never answers, under a flood of calls: exactly
 * max_per_host are taken, the rest refused; every taken one times out. */
static void test_silent_flood(void)
{
    enum { PER_HOST = 64, TRIES = 1000 };
    srv_client *c =
        srv_client_new(&(srv_client_opts){.max_pending = 1000, .max_per_host = PER_HOST});
    peer *p = peer_start(&(peer_opts){.mode = PEER_SILENT});
    struct sockaddr_in sa = addr_of(peer_port(p));
    tally t;
    unsigned taken = 0;
    u_int arg = 1;

    tally_init(&t);
    for (unsigned i = 0; i < TRIES; i++) {
        srv_client_call call = inc_call(&sa, i % 2, &arg, SHORT_MS);
        int rc = srv_client_submit(c, &call, on_done, &t);
        g_assert_true(rc == 0 || rc == -EBUSY);
        taken += rc == 0;
        if (taken == PER_HOST)
            break;
    }
    g_assert_cmpuint(taken, ==, PER_HOST);
    srv_client_call call = inc_call(&sa, true, &arg, SHORT_MS);
    /* Refused while they are pending (some may have timed out already: then
     * the place is free again, which is right too). */
    int rc = srv_client_submit(c, &call, on_done, &t);
    if (rc == 0)
        taken++;
    else
        g_assert_cmpint(rc, ==, -EBUSY);
    tally_wait(&t, taken);
    for (unsigned i = 0; i < t.nerr; i++)
        g_assert_cmpint(t.errs[i], ==, -ETIMEDOUT);
    g_assert_cmpuint(t.ran, ==, taken);
    srv_client_free(c);
    tally_clear(&t);
    peer_stop(p);
}

/* A reply with the right xid from another port (spoofed UDP) is not taken:
 * the connected socket drops it; the call still times out. */
static void test_spoofed_udp(void)
{
    srv_client *c = srv_client_new(NULL);
    peer *p = peer_start(&(peer_opts){.mode = PEER_SILENT});
    struct sockaddr_in sa = addr_of(peer_port(p));
    u_int arg = 1;
    tally t;

    tally_init(&t);
    srv_client_call call = inc_call(&sa, false, &arg, 3000);
    g_assert_cmpint(srv_client_submit(c, &call, on_done, &t), ==, 0);
    g_assert_true(peer_wait(p, PEER_N_CALLS, 1));
    struct sockaddr_storage from;
    uint32_t xid;
    peer_last_udp(p, &from, &xid);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    uint32_t reply[] = {htonl(xid), htonl(1), 0, 0, 0, 0, htonl(42)};
    g_assert_cmpint(
        sendto(fd, reply, sizeof reply, 0, (struct sockaddr *)&from, sizeof(struct sockaddr_in)),
        ==, sizeof reply);
    close(fd);
    tally_wait(&t, 1);
    g_assert_cmpint(t.errs[0], ==, -ETIMEDOUT);
    srv_client_free(c);
    tally_clear(&t);
    peer_stop(p);
}

/* ---- portmappers that lie -------------------------------------------------- */

static void test_bad_portmappers(void)
{
    struct {
        peer_opts o;
        int want;
    } cases[] = {
        {{.mode = PEER_PMAP, .pmap_prog = PEER_PROG, .pmap_answer = 70000}, -EPROTO},
        {{.mode = PEER_PROG_UNAVAIL}, -EPROTO},
        {{.mode = PEER_BAD_BODY}, -EPROTO},
        {{.mode = PEER_GARBAGE}, -ETIMEDOUT},
        {{.mode = PEER_SILENT}, -ETIMEDOUT},
    };
    struct sockaddr_in sa = addr_of(0);
    u_int arg = 1;

    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        peer *pm = peer_start(&cases[i].o);
        srv_client *c = srv_client_new(&(srv_client_opts){.pmap_port = peer_port(pm)});
        for (int tcp = 0; tcp < 2; tcp++) {
            srv_client_call call =
                inc_call(&sa, tcp, &arg, cases[i].want == -ETIMEDOUT ? SHORT_MS : LONG_MS);
            g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, cases[i].want);
        }
        srv_client_free(c);
        peer_stop(pm);
    }
    /* No portmapper at all: refused. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in pa = addr_of(0);
    socklen_t pl = sizeof pa;
    g_assert_cmpint(bind(fd, (struct sockaddr *)&pa, sizeof pa), ==, 0);
    g_assert_cmpint(getsockname(fd, (struct sockaddr *)&pa, &pl), ==, 0);
    srv_client *c = srv_client_new(&(srv_client_opts){.pmap_port = ntohs(pa.sin_port)});
    srv_client_call call = inc_call(&sa, true, &arg, LONG_MS);
    g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, -ECONNREFUSED);
    srv_client_free(c);
    close(fd);
}

/* ---- bounds ---------------------------------------------------------------- */

/* Calls to many destinations: idle sockets are closed to stay within
 * max_pending + SRV_CLIENT_SPARE_DESTS. */
static void test_many_destinations(void)
{
    enum { N = 200 };
    srv_client *c = srv_client_new(&(srv_client_opts){.max_pending = 1, .idle_ms = 600000});
    int fds[N];
    u_int arg = 1;

    for (unsigned i = 0; i < N; i++) {
        struct sockaddr_in sa = addr_of(0);
        socklen_t sl = sizeof sa;
        fds[i] = socket(AF_INET, SOCK_DGRAM, 0); /* bound, never read: silent */
        g_assert_cmpint(bind(fds[i], (struct sockaddr *)&sa, sizeof sa), ==, 0);
        g_assert_cmpint(getsockname(fds[i], (struct sockaddr *)&sa, &sl), ==, 0);
        srv_client_call call = inc_call(&sa, false, &arg, LONG_MS);
        call.no_reply = true;
        g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, 0);
        srv_client_stats st;
        srv_client_stats_get(c, &st);
        g_assert_cmpuint(st.dests, >=, 1);
        g_assert_cmpuint(st.dests, <=, 1 + SRV_CLIENT_SPARE_DESTS);
    }
    srv_client_free(c);
    for (unsigned i = 0; i < N; i++)
        close(fds[i]);
}

/* Lookups of many programs: at most SRV_CLIENT_PMAP_CACHE answers kept. */
static void test_many_programs(void)
{
    enum { N = SRV_CLIENT_PMAP_CACHE + 44 };
    int fd = socket(AF_INET, SOCK_DGRAM, 0); /* where every program "is": silent */
    struct sockaddr_in sa = addr_of(0);
    socklen_t sl = sizeof sa;

    g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, sizeof sa), ==, 0);
    g_assert_cmpint(getsockname(fd, (struct sockaddr *)&sa, &sl), ==, 0);
    peer *pm = peer_start(&(peer_opts){.mode = PEER_PMAP, .pmap_answer = ntohs(sa.sin_port)});
    srv_client *c = srv_client_new(&(srv_client_opts){.pmap_port = peer_port(pm)});
    struct sockaddr_in host = addr_of(0);
    u_int arg = 1;
    srv_client_stats st;

    for (unsigned i = 0; i < N; i++) {
        srv_client_call call = inc_call(&host, false, &arg, LONG_MS);
        call.prog = PEER_PROG + i;
        call.no_reply = true;
        g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, 0);
        srv_client_stats_get(c, &st);
        g_assert_cmpuint(st.pmap_cached, ==, MIN(i + 1, SRV_CLIENT_PMAP_CACHE));
    }
    g_assert_cmpuint(st.pmap_lookups, ==, N);
    srv_client_free(c);
    peer_stop(pm);
    close(fd);
}

/* ---- fuzz ------------------------------------------------------------------ */

/* Echo replies with random bytes changed or cut short, in batches of
 * concurrent calls with allocated (bounded) results: every done runs once
 * with 0, -EPROTO, -ETIMEDOUT or (TCP) -ECONNRESET. */
static void test_mutated(void)
{
    enum { BATCH = 32, ROUNDS = 12 };
    srv_client *c = srv_client_new(&(srv_client_opts){.max_per_host = BATCH});
    peer *p = peer_start(&(peer_opts){.mode = PEER_MUTATE});
    struct sockaddr_in sa = addr_of(peer_port(p));
    unsigned ok = 0;

    for (unsigned r = 0; r < ROUNDS; r++) {
        tally t;
        u_int n[BATCH];
        tally_init(&t);
        for (unsigned i = 0; i < BATCH; i++) {
            n[i] = (u_int)g_random_int_range(0, STR_MAX + 1);
            srv_client_call call = inc_call(&sa, r % 2, &n[i], 500);
            call.proc = PEER_PROC_STR;
            call.res_xdr = (xdrproc_t)xdr_str64;
            call.res_size = sizeof(char *);
            g_assert_cmpint(srv_client_submit(c, &call, on_done, &t), ==, 0);
        }
        tally_wait(&t, BATCH);
        g_assert_cmpuint(t.ran, ==, BATCH);
        for (unsigned i = 0; i < t.nerr; i++) {
            int e = t.errs[i];
            g_assert_true(e == 0 || e == -EPROTO || e == -ETIMEDOUT || e == -ECONNRESET);
            ok += e == 0;
        }
        tally_clear(&t);
    }
    g_test_message("%u of %u mutated replies still decoded", ok, BATCH * ROUNDS);
    assert_still_works(c);
    srv_client_free(c);
    peer_stop(p);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/client_hostile/unmatched", test_unmatched);
    g_test_add_func("/client_hostile/bad_replies", test_bad_replies);
    g_test_add_func("/client_hostile/broken_streams", test_broken_streams);
    g_test_add_func("/client_hostile/oversize_datagram", test_oversize_datagram);
    g_test_add_func("/client_hostile/close_on_call", test_close_on_call);
    g_test_add_func("/client_hostile/flood", test_flood);
    g_test_add_func("/client_hostile/silent_flood", test_silent_flood);
    g_test_add_func("/client_hostile/spoofed_udp", test_spoofed_udp);
    g_test_add_func("/client_hostile/bad_portmappers", test_bad_portmappers);
    g_test_add_func("/client_hostile/many_destinations", test_many_destinations);
    g_test_add_func("/client_hostile/many_programs", test_many_programs);
    g_test_add_func("/client_hostile/mutated", test_mutated);
    return g_test_run();
}
