/*
 * test_export.c -- which client an export admits, and as whom
 * (server/export/exp.c: exp_client_match, exp_admits,
 * exp_cred_squash). Export lines are parsed by cfg_parse_export, so
 * matcher and parser are tested together; a few patterns are built by
 * hand.
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/un.h>

#include <glib.h>

#include "exp.h"

typedef struct {
    struct sockaddr_storage ss;
    socklen_t len;
} peer;

/* "10.1.2.3" or "2001:db8::1" as a socket address (port 800). */
static peer peer_of(const char *text)
{
    peer p;

    memset(&p, 0, sizeof p);
    struct sockaddr_in *sin = (struct sockaddr_in *)&p.ss;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&p.ss;
    if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = htons(800);
        p.len = sizeof *sin;
    } else if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(800);
        p.len = sizeof *sin6;
    } else {
        g_error("bad test address %s", text);
    }
    return p;
}

static cfg_export parse(const char *spec)
{
    cfg_export e;
    char *err = NULL;

    if (cfg_parse_export("/", spec, &e, &err) != 0)
        g_error("cfg_parse_export(%s): %s", spec, err);
    return e;
}

/* Index of the client of e that admits addr, or -1. */
static int match(const cfg_export *e, const char *addr)
{
    peer p = peer_of(addr);
    const cfg_client *c = exp_client_match(e, (const struct sockaddr *)&p.ss, p.len);
    return c ? (int)(c - e->clients) : -1;
}

static void test_cidr_v4(void)
{
    cfg_export e = parse("10.0.0.0/8(rw) 172.16.0.0/12 192.168.1.7");

    g_assert_cmpint(match(&e, "10.0.0.0"), ==, 0);
    g_assert_cmpint(match(&e, "10.255.255.255"), ==, 0);
    g_assert_cmpint(match(&e, "11.0.0.1"), ==, -1);
    g_assert_cmpint(match(&e, "9.255.255.255"), ==, -1);
    /* A prefix that does not end on a byte boundary. */
    g_assert_cmpint(match(&e, "172.16.0.1"), ==, 1);
    g_assert_cmpint(match(&e, "172.31.255.255"), ==, 1);
    g_assert_cmpint(match(&e, "172.32.0.0"), ==, -1);
    g_assert_cmpint(match(&e, "172.15.255.255"), ==, -1);
    /* A single address. */
    g_assert_cmpint(match(&e, "192.168.1.7"), ==, 2);
    g_assert_cmpint(match(&e, "192.168.1.8"), ==, -1);
    /* An IPv4 client on an IPv6 socket arrives IPv4-mapped. */
    g_assert_cmpint(match(&e, "::ffff:10.1.2.3"), ==, 0);
    g_assert_cmpint(match(&e, "::ffff:11.1.2.3"), ==, -1);
    /* IPv6 clients are not in IPv4 networks. */
    g_assert_cmpint(match(&e, "2001:db8::1"), ==, -1);
    g_assert_cmpint(match(&e, "::a00:1"), ==, -1);
    cfg_export_clear(&e);

    e = parse("0.0.0.0/0(ro)");
    g_assert_cmpint(match(&e, "1.2.3.4"), ==, 0);
    g_assert_cmpint(match(&e, "255.255.255.255"), ==, 0);
    g_assert_cmpint(match(&e, "2001:db8::1"), ==, -1);
    cfg_export_clear(&e);
}

static void test_cidr_v6(void)
{
    cfg_export e = parse("2001:db8::/32(rw) ::1 fe80::/10");

    g_assert_cmpint(match(&e, "2001:db8::5"), ==, 0);
    g_assert_cmpint(match(&e, "2001:db8:ffff:ffff::1"), ==, 0);
    g_assert_cmpint(match(&e, "2001:db9::1"), ==, -1);
    g_assert_cmpint(match(&e, "::1"), ==, 1);
    g_assert_cmpint(match(&e, "::2"), ==, -1);
    g_assert_cmpint(match(&e, "febf::1"), ==, 2);
    g_assert_cmpint(match(&e, "fec0::1"), ==, -1);
    g_assert_cmpint(match(&e, "127.0.0.1"), ==, -1);
    cfg_export_clear(&e);

    /* An IPv6 pattern for IPv4-mapped addresses admits IPv4 clients. */
    e = parse("::ffff:10.0.0.0/104");
    g_assert_cmpint(match(&e, "10.9.8.7"), ==, 0);
    g_assert_cmpint(match(&e, "::ffff:10.9.8.7"), ==, 0);
    g_assert_cmpint(match(&e, "11.0.0.1"), ==, -1);
    cfg_export_clear(&e);
}

static void test_any(void)
{
    cfg_export e = parse("*(ro)");
    struct sockaddr_un un = {.sun_family = AF_UNIX};

    g_assert_cmpint(match(&e, "8.8.8.8"), ==, 0);
    g_assert_cmpint(match(&e, "2001:db8::1"), ==, 0);
    g_assert_nonnull(exp_client_match(&e, (const struct sockaddr *)&un, sizeof un));
    cfg_export_clear(&e);

    /* A network pattern admits no socket that has no IP address. */
    e = parse("10.0.0.0/8");
    g_assert_null(exp_client_match(&e, (const struct sockaddr *)&un, sizeof un));
    g_assert_null(exp_client_match(&e, NULL, 0));
    cfg_export_clear(&e);
}

static void test_hostname(void)
{
    cfg_export e = parse("localhost(rw) no-such-host.invalid(rw)");

    g_assert_cmpint(match(&e, "127.0.0.1"), ==, 0);
    g_assert_cmpint(match(&e, "::ffff:127.0.0.1"), ==, 0);
    g_assert_cmpint(match(&e, "10.0.0.1"), ==, -1);
    cfg_export_clear(&e);

    e = parse("no-such-host.invalid(rw)");
    g_assert_cmpint(match(&e, "127.0.0.1"), ==, -1);
    cfg_export_clear(&e);
}

static void test_first_match_wins(void)
{
    cfg_export e = parse("10.0.0.0/8(rw,no_root_squash) *(ro)");

    g_assert_cmpint(match(&e, "10.1.1.1"), ==, 0);
    g_assert_true(e.clients[0].rw);
    g_assert_cmpint(match(&e, "192.168.0.1"), ==, 1);
    g_assert_false(e.clients[1].rw);
    cfg_export_clear(&e);

    e = parse("*(ro) 10.0.0.0/8(rw)");
    g_assert_cmpint(match(&e, "10.1.1.1"), ==, 0);
    cfg_export_clear(&e);

    e = parse("10.1.0.0/16(rw) 10.0.0.0/8(ro) 10.1.2.3(rw,all_squash)");
    g_assert_cmpint(match(&e, "10.1.2.3"), ==, 0);
    g_assert_cmpint(match(&e, "10.2.0.1"), ==, 1);
    cfg_export_clear(&e);

    /* A hand-made export with no clients admits nobody. */
    cfg_export none = {.path = "/", .clients = NULL, .nclients = 0};
    g_assert_cmpint(match(&none, "127.0.0.1"), ==, -1);
}

static srv_authsys auth(uint32_t uid, uint32_t gid, uint32_t ngroups, const uint32_t *groups)
{
    srv_authsys a;

    memset(&a, 0, sizeof a);
    a.present = true;
    a.uid = uid;
    a.gid = gid;
    a.ngroups = ngroups;
    for (uint32_t i = 0; i < ngroups && i < DBFS_NGROUPS_MAX; i++)
        a.groups[i] = groups[i];
    g_strlcpy(a.machine, "client", sizeof a.machine);
    return a;
}

static void test_root_squash(void)
{
    cfg_export e = parse("*(rw)"); /* root_squash is the default */
    const uint32_t groups[] = {0, 10, 0, 20};
    srv_authsys a = auth(0, 0, 4, groups);
    dbfs_cred cred;

    g_assert_true(e.clients[0].root_squash);
    exp_cred_squash(&a, &e.clients[0], &cred);
    g_assert_cmpuint(cred.uid, ==, 65534);
    g_assert_cmpuint(cred.gid, ==, 65534);
    g_assert_cmpuint(cred.ngroups, ==, 4);
    g_assert_cmpuint(cred.groups[0], ==, 65534);
    g_assert_cmpuint(cred.groups[1], ==, 10);
    g_assert_cmpuint(cred.groups[2], ==, 65534);
    g_assert_cmpuint(cred.groups[3], ==, 20);

    /* Other users pass unchanged, except that group 0 is squashed in
     * every credential (as Linux nfsd does with root_squash). */
    a = auth(1000, 100, 3, groups + 1);
    exp_cred_squash(&a, &e.clients[0], &cred);
    g_assert_cmpuint(cred.uid, ==, 1000);
    g_assert_cmpuint(cred.gid, ==, 100);
    g_assert_cmpuint(cred.ngroups, ==, 3);
    g_assert_cmpuint(cred.groups[0], ==, 10);
    g_assert_cmpuint(cred.groups[1], ==, 65534);
    g_assert_cmpuint(cred.groups[2], ==, 20);

    /* A user in group 0 but not root: the group is squashed too. */
    a = auth(1000, 0, 0, NULL);
    exp_cred_squash(&a, &e.clients[0], &cred);
    g_assert_cmpuint(cred.uid, ==, 1000);
    g_assert_cmpuint(cred.gid, ==, 65534);
    cfg_export_clear(&e);

    /* no_root_squash keeps root. */
    e = parse("*(rw,no_root_squash)");
    a = auth(0, 0, 1, groups);
    exp_cred_squash(&a, &e.clients[0], &cred);
    g_assert_cmpuint(cred.uid, ==, 0);
    g_assert_cmpuint(cred.gid, ==, 0);
    g_assert_cmpuint(cred.groups[0], ==, 0);
    cfg_export_clear(&e);
}

static void test_all_squash(void)
{
    cfg_export e = parse("*(rw,all_squash,anonuid=1234,anongid=5678)");
    const uint32_t groups[] = {1, 2, 3};
    srv_authsys a = auth(1000, 100, 3, groups);
    dbfs_cred cred;

    exp_cred_squash(&a, &e.clients[0], &cred);
    g_assert_cmpuint(cred.uid, ==, 1234);
    g_assert_cmpuint(cred.gid, ==, 5678);
    g_assert_cmpuint(cred.ngroups, ==, 0);
    a = auth(0, 0, 0, NULL);
    exp_cred_squash(&a, &e.clients[0], &cred);
    g_assert_cmpuint(cred.uid, ==, 1234);
    g_assert_cmpuint(cred.gid, ==, 5678);
    cfg_export_clear(&e);

    /* anonuid applies to squashed root too. */
    e = parse("*(rw,anonuid=42,anongid=43)");
    exp_cred_squash(&a, &e.clients[0], &cred);
    g_assert_cmpuint(cred.uid, ==, 42);
    g_assert_cmpuint(cred.gid, ==, 43);
    cfg_export_clear(&e);
}

static void test_auth_none(void)
{
    cfg_export e = parse("*(rw,no_root_squash,anonuid=7,anongid=8)");
    srv_authsys a;
    dbfs_cred cred;

    memset(&a, 0, sizeof a); /* AUTH_NONE */
    exp_cred_squash(&a, &e.clients[0], &cred);
    g_assert_cmpuint(cred.uid, ==, 7);
    g_assert_cmpuint(cred.gid, ==, 8);
    g_assert_cmpuint(cred.ngroups, ==, 0);
    cfg_export_clear(&e);

    /* No client entry: exports(5) defaults (root squashed to 65534). */
    a = auth(0, 0, 0, NULL);
    exp_cred_squash(&a, NULL, &cred);
    g_assert_cmpuint(cred.uid, ==, 65534);
    g_assert_cmpuint(cred.gid, ==, 65534);
}

static void test_groups_clamped(void)
{
    cfg_client c = {.kind = CFG_CLIENT_ANY, .rw = true, .anonuid = 65534, .anongid = 65534};
    srv_authsys a;
    dbfs_cred cred;

    memset(&a, 0, sizeof a);
    a.present = true;
    a.uid = 5;
    a.gid = 6;
    a.ngroups = 1000; /* more than a credential can carry */
    for (unsigned i = 0; i < DBFS_NGROUPS_MAX; i++)
        a.groups[i] = 100 + i;
    exp_cred_squash(&a, &c, &cred);
    g_assert_cmpuint(cred.ngroups, ==, DBFS_NGROUPS_MAX);
    g_assert_cmpuint(cred.groups[DBFS_NGROUPS_MAX - 1], ==, 100 + DBFS_NGROUPS_MAX - 1);
}

/* exp_admits: any export admitting the address will do; `secure`
 * (ports) does not matter; no exports admit nobody. */
static void test_admits(void)
{
    cfg_export ex[2] = {parse("10.0.0.0/8(rw,secure)"), parse("2001:db8::/32(ro)")};
    cfg c = {.exports = ex, .nexports = 2};
    const char *yes[] = {"10.1.2.3", "::ffff:10.9.9.9", "2001:db8::5"};
    const char *no[] = {"11.0.0.1", "2001:db9::1", "127.0.0.1"};

    for (size_t i = 0; i < G_N_ELEMENTS(yes); i++) {
        peer p = peer_of(yes[i]);
        g_assert_true(exp_admits(&c, (struct sockaddr *)&p.ss, p.len));
    }
    for (size_t i = 0; i < G_N_ELEMENTS(no); i++) {
        peer p = peer_of(no[i]);
        g_assert_false(exp_admits(&c, (struct sockaddr *)&p.ss, p.len));
    }
    peer p = peer_of("10.1.2.3");
    c.nexports = 0;
    g_assert_false(exp_admits(&c, (struct sockaddr *)&p.ss, p.len));
    cfg_export_clear(&ex[0]);
    cfg_export_clear(&ex[1]);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/export/cidr_v4", test_cidr_v4);
    g_test_add_func("/export/admits", test_admits);
    g_test_add_func("/export/cidr_v6", test_cidr_v6);
    g_test_add_func("/export/any", test_any);
    g_test_add_func("/export/hostname", test_hostname);
    g_test_add_func("/export/first_match_wins", test_first_match_wins);
    g_test_add_func("/squash/root_squash", test_root_squash);
    g_test_add_func("/squash/all_squash", test_all_squash);
    g_test_add_func("/squash/auth_none", test_auth_none);
    g_test_add_func("/squash/groups_clamped", test_groups_clamped);
    return g_test_run();
}
