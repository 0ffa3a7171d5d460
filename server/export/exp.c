/*
 * exp.c -- who an export admits, and as whom (exp.h):
 * exp_client_match(), exp_admits() and exp_cred_squash().
 *
 * NOTES
 *   Client patterns are tried in the order of the export line and the first
 *   that admits the peer decides its options, as in exports(5).
 *
 *   Addresses: an IPv4 client reaching an IPv6 socket arrives as an
 *   IPv4-mapped address (::ffff:a.b.c.d); it is compared as the IPv4
 *   address it is, so "10.0.0.0/8" admits it. An IPv6 pattern is compared
 *   with the mapped form of an IPv4 peer.
 *
 *   Host names (cfg.c accepts no wildcards in them) are resolved forward on
 *   every call; a name admits the peer if one of its addresses is the
 *   peer's ("localhost" admits 127.0.0.1, and ::1 where the resolver lists
 *   it). A name that does not resolve admits nobody.
 *
 *   No state: the functions read only their arguments.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

#include <glib.h>

#include "exp.h"

/* An address as family + bytes, IPv4-mapped IPv6 folded to IPv4. */
typedef struct {
    int family;
    unsigned char addr[16];
} srv_addr;

static bool srv_addr_from(const struct sockaddr *sa, socklen_t len, srv_addr *out)
{
    memset(out, 0, sizeof *out);
    if (!sa)
        return false;
    if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
        out->family = AF_INET;
        memcpy(out->addr, &sin->sin_addr, 4);
        return true;
    }
    if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
            out->family = AF_INET;
            memcpy(out->addr, sin6->sin6_addr.s6_addr + 12, 4);
        } else {
            out->family = AF_INET6;
            memcpy(out->addr, &sin6->sin6_addr, 16);
        }
        return true;
    }
    return false;
}

/* Do the first `bits` bits of a and b agree? */
static bool srv_prefix_eq(const unsigned char *a, const unsigned char *b, unsigned bits)
{
    unsigned whole = bits / 8, rest = bits % 8;

    if (memcmp(a, b, whole) != 0)
        return false;
    if (rest == 0)
        return true;
    unsigned char mask = (unsigned char)(0xff << (8 - rest));
    return (a[whole] & mask) == (b[whole] & mask);
}

static bool srv_net_match(const cfg_client *c, const srv_addr *peer)
{
    if (c->family == AF_INET && peer->family == AF_INET)
        return srv_prefix_eq(c->addr, peer->addr, c->prefix > 32 ? 32 : c->prefix);
    if (c->family == AF_INET6) {
        unsigned char mapped[16];
        const unsigned char *p = peer->addr;
        if (peer->family == AF_INET) {
            static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
            memcpy(mapped, v4mapped, 12);
            memcpy(mapped + 12, peer->addr, 4);
            p = mapped;
        } else if (peer->family != AF_INET6) {
            return false;
        }
        return srv_prefix_eq(c->addr, p, c->prefix > 128 ? 128 : c->prefix);
    }
    return false;
}

static bool srv_host_match(const cfg_client *c, const srv_addr *peer)
{
    if (!c->host || !*c->host)
        return false;

    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    bool found = false;
    if (getaddrinfo(c->host, NULL, &hints, &res) != 0)
        return false;
    for (const struct addrinfo *ai = res; ai && !found; ai = ai->ai_next) {
        srv_addr a;
        if (srv_addr_from(ai->ai_addr, ai->ai_addrlen, &a))
            found = a.family == peer->family &&
                    memcmp(a.addr, peer->addr, a.family == AF_INET ? 4 : 16) == 0;
    }
    freeaddrinfo(res);
    return found;
}

const cfg_client *exp_client_match(const cfg_export *e, const struct sockaddr *peer,
                                   socklen_t peerlen)
{
    srv_addr pa;
    bool have_addr = srv_addr_from(peer, peerlen, &pa);

    for (unsigned i = 0; e && i < e->nclients; i++) {
        const cfg_client *c = &e->clients[i];
        switch (c->kind) {
        case CFG_CLIENT_ANY:
            return c;
        case CFG_CLIENT_NET:
            if (have_addr && srv_net_match(c, &pa))
                return c;
            break;
        case CFG_CLIENT_HOST:
            if (have_addr && srv_host_match(c, &pa))
                return c;
            break;
        }
    }
    return NULL;
}

bool exp_match_may_block(const cfg *c)
{
    for (unsigned i = 0; c && i < c->nexports; i++)
        for (unsigned k = 0; k < c->exports[i].nclients; k++)
            if (c->exports[i].clients[k].kind == CFG_CLIENT_HOST)
                return true;
    return false;
}

bool exp_admits(const cfg *c, const struct sockaddr *peer, socklen_t peerlen)
{
    for (unsigned i = 0; c && i < c->nexports; i++)
        if (exp_client_match(&c->exports[i], peer, peerlen))
            return true;
    return false;
}

void exp_cred_squash(const srv_authsys *a, const cfg_client *c, dbfs_cred *out)
{
    /* exports(5) defaults, for a caller that has no client entry. */
    static const cfg_client defaults = {.root_squash = true, .anonuid = 65534, .anongid = 65534};

    if (!c)
        c = &defaults;
    memset(out, 0, sizeof *out);
    if (!a || !a->present || c->all_squash) {
        /* AUTH_NONE is the anonymous user, as Linux nfsd treats AUTH_NULL. */
        out->uid = c->anonuid;
        out->gid = c->anongid;
        return;
    }
    out->uid = a->uid;
    out->gid = a->gid;
    out->ngroups = a->ngroups > DBFS_NGROUPS_MAX ? DBFS_NGROUPS_MAX : a->ngroups;
    memcpy(out->groups, a->groups, out->ngroups * sizeof out->groups[0]);
    if (c->root_squash) {
        if (out->uid == 0)
            out->uid = c->anonuid;
        if (out->gid == 0)
            out->gid = c->anongid;
        for (uint32_t i = 0; i < out->ngroups; i++)
            if (out->groups[i] == 0)
                out->groups[i] = c->anongid;
    }
}
