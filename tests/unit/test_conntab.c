/*
 * test_conntab.c -- the connection table's policy (server/runtime/
 * srv_conntab.c) on connections built by hand, no sockets: room while
 * below the limits; a full table closes the connection idle longest, from
 * clients not (yet) admitted first; a connection with calls running or
 * replies queued is never chosen, and when every one is busy the new
 * connection is refused; the per-address cap chooses among that
 * address's connections only; each episode (table full, address capped)
 * is logged once, and an eviction does not end it.
 */
#include <arpa/inet.h>
#include <string.h>

#include <glib.h>

#include "srv_transport.h"

/* Log lines of the server's domain, by what they say. */
static unsigned lines_full, lines_room, lines_capped;

static void count_line(const gchar *domain, GLogLevelFlags level, const gchar *msg, gpointer user)
{
    (void)domain;
    (void)level;
    (void)user;
    if (strstr(msg, "the table is full"))
        lines_full++;
    if (strstr(msg, "room again"))
        lines_room++;
    if (strstr(msg, "max_connections_per_address"))
        lines_capped++;
}

static struct sockaddr_in addr_of(const char *ip)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(900)};

    g_assert_cmpint(inet_pton(AF_INET, ip, &sa.sin_addr), ==, 1);
    return sa;
}

/* A connection from ip whose last call was at `last`, admitted or not,
 * with inflight calls and (queued) a reply waiting. */
static srv_conn *conn(const char *ip, int64_t last, srv_admission adm, unsigned inflight,
                      bool queued)
{
    srv_conn *c = g_new0(srv_conn, 1);
    struct sockaddr_in sa = addr_of(ip);

    memcpy(&c->peer, &sa, sizeof sa);
    c->peerlen = sizeof sa;
    srv_addr_of((struct sockaddr *)&sa, sizeof sa, &c->addr);
    pthread_mutex_init(&c->lock, NULL);
    g_queue_init(&c->outq);
    if (queued)
        g_queue_push_tail(&c->outq, c);
    c->admission = adm;
    c->inflight = inflight;
    c->last_call_us = last;
    return c;
}

static void conn_free(srv_conn *c)
{
    g_queue_clear(&c->outq);
    pthread_mutex_destroy(&c->lock);
    g_free(c);
}

/* What a new connection from ip must close: *ok as the table says. */
static srv_conn *victim(srv_conntab *tab, const char *ip, bool *ok)
{
    struct sockaddr_in sa = addr_of(ip);
    srv_addr a;
    const char *why;

    srv_addr_of((struct sockaddr *)&sa, sizeof sa, &a);
    return srv_conntab_victim(tab, &a, (struct sockaddr *)&sa, sizeof sa, &why, ok);
}

/* Close v to make room, as the transport does. */
static void evict(srv_conntab *tab, srv_conn *v)
{
    v->evicted = true;
    srv_conntab_remove(tab, v);
    conn_free(v);
}

static void test_room_and_full(void)
{
    srv_conntab tab;
    bool ok;

    srv_conntab_init(&tab, 4, 0);
    srv_conn *a = conn("10.0.0.1", 100, SRV_ADMIT_YES, 0, false);
    srv_conn *b = conn("10.0.0.2", 200, SRV_ADMIT_YES, 0, false);
    srv_conn *p = conn("10.0.0.3", 900, SRV_ADMIT_PENDING, 0, false);
    srv_conn *x = conn("10.0.0.4", 800, SRV_ADMIT_NO, 0, false);
    srv_conntab_add(&tab, a);
    srv_conntab_add(&tab, b);
    srv_conntab_add(&tab, p);
    g_assert_null(victim(&tab, "10.0.0.9", &ok));
    g_assert_true(ok);
    srv_conntab_add(&tab, x);
    unsigned full0 = lines_full;

    /* Full: the not-admitted x goes first (idle longer than p), then p,
     * though both are newer than the admitted ones. */
    g_assert_true(victim(&tab, "10.0.0.9", &ok) == x);
    evict(&tab, x);
    srv_conntab_add(&tab, conn("10.0.0.9", 1000, SRV_ADMIT_YES, 0, false));
    g_assert_true(victim(&tab, "10.0.0.10", &ok) == p);
    evict(&tab, p);
    srv_conntab_add(&tab, conn("10.0.0.10", 1100, SRV_ADMIT_YES, 0, false));
    /* Then the admitted one idle longest. */
    g_assert_true(victim(&tab, "10.0.0.11", &ok) == a);
    evict(&tab, a);
    srv_conntab_add(&tab, conn("10.0.0.11", 1200, SRV_ADMIT_YES, 0, false));
    g_assert_cmpuint(lines_full, ==, full0 + 1); /* one episode */
    g_assert_cmpuint(tab.evicted, ==, 3);

    /* Busy ones never go: b has a call running, the rest replies queued. */
    b->inflight = 1;
    for (srv_conn *c = tab.head; c; c = c->next)
        if (c != b)
            g_queue_push_tail(&c->outq, c);
    g_assert_null(victim(&tab, "10.0.0.12", &ok));
    g_assert_false(ok);
    g_assert_cmpuint(tab.refused, ==, 1);
    /* b's call is done: now it can go. */
    b->inflight = 0;
    g_assert_true(victim(&tab, "10.0.0.12", &ok) == b);
    g_assert_true(ok);

    /* Closes (not evictions) down to 3/4 of the table end the episode. */
    unsigned room0 = lines_room;
    srv_conntab_remove(&tab, b);
    conn_free(b);
    g_assert_cmpuint(lines_room, ==, room0 + 1);
    while (tab.head) {
        srv_conn *c = tab.head;
        srv_conntab_remove(&tab, c);
        conn_free(c);
    }
    g_assert_cmpuint(lines_room, ==, room0 + 1);
    g_assert_cmpuint(g_hash_table_size(tab.per_addr), ==, 0);
    srv_conntab_clear(&tab);
}

static void test_per_address(void)
{
    srv_conntab tab;
    bool ok;

    srv_conntab_init(&tab, 100, 2);
    srv_conn *old = conn("10.1.0.1", 100, SRV_ADMIT_YES, 0, false);
    srv_conn *fresh = conn("10.1.0.1", 500, SRV_ADMIT_PENDING, 0, false);
    srv_conn *other = conn("10.1.0.2", 50, SRV_ADMIT_YES, 0, false);
    srv_conntab_add(&tab, old);
    srv_conntab_add(&tab, fresh);
    srv_conntab_add(&tab, other);
    unsigned capped0 = lines_capped;

    /* Another address is not held back. */
    g_assert_null(victim(&tab, "10.1.0.2", &ok));
    g_assert_true(ok);
    /* At the cap: the address's own, one that never finished a call
     * first, though `other` is idle longest. */
    g_assert_true(victim(&tab, "10.1.0.1", &ok) == fresh);
    evict(&tab, fresh);
    srv_conn *next = conn("10.1.0.1", 600, SRV_ADMIT_YES, 0, false);
    srv_conntab_add(&tab, next);
    g_assert_true(victim(&tab, "10.1.0.1", &ok) == old);
    evict(&tab, old);
    srv_conntab_add(&tab, conn("10.1.0.1", 700, SRV_ADMIT_YES, 0, true));
    g_assert_cmpuint(lines_capped, ==, capped0 + 1); /* one episode, evictions or not */
    /* Both of the address's connections busy: the new one is refused. */
    next->inflight = 3;
    g_assert_null(victim(&tab, "10.1.0.1", &ok));
    g_assert_false(ok);
    g_assert_cmpuint(lines_capped, ==, capped0 + 1);
    while (tab.head) {
        srv_conn *c = tab.head;
        srv_conntab_remove(&tab, c);
        conn_free(c);
    }
    srv_conntab_clear(&tab);
}

/* IPv4-mapped IPv6 peers count as the IPv4 address they are. */
static void test_addresses(void)
{
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6};
    struct sockaddr_in v4 = addr_of("192.0.2.7");
    srv_addr a, b;

    g_assert_cmpint(inet_pton(AF_INET6, "::ffff:192.0.2.7", &v6.sin6_addr), ==, 1);
    srv_addr_of((struct sockaddr *)&v6, sizeof v6, &a);
    srv_addr_of((struct sockaddr *)&v4, sizeof v4, &b);
    g_assert_cmpmem(&a, sizeof a, &b, sizeof b);
    g_assert_cmpint(inet_pton(AF_INET6, "2001:db8::7", &v6.sin6_addr), ==, 1);
    srv_addr_of((struct sockaddr *)&v6, sizeof v6, &a);
    g_assert_cmpuint(a.family, ==, AF_INET6);
    srv_addr_of(NULL, 0, &a);
    g_assert_cmpuint(a.family, ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    /* The table's warnings are expected here: counted, not fatal. */
    g_log_set_always_fatal(G_LOG_FATAL_MASK);
    g_log_set_fatal_mask("pgnfs", G_LOG_LEVEL_ERROR);
    g_log_set_handler("pgnfs", G_LOG_LEVEL_MASK, count_line, NULL);
    g_test_add_func("/conntab/room_and_full", test_room_and_full);
    g_test_add_func("/conntab/per_address", test_per_address);
    g_test_add_func("/conntab/addresses", test_addresses);
    return g_test_run();
}
