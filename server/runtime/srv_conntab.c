/*
 * srv_conntab.c -- the table of open TCP connections and the policy that
 * keeps it from locking clients out (srv_transport.h).
 *
 * Limits: [server] max_connections in all, and
 * [server] max_connections_per_address from one client address (ports
 * ignored; 0 = no cap). A new connection that would exceed one does not
 * simply get refused -- that would let anyone who opens enough idle
 * connections shut every other client out. Instead, as Linux's RPC server
 * does, the connection idle longest makes room:
 *
 *   new connection from A
 *     A holds max_connections_per_address already?
 *       close A's connection idle longest, one that never finished a call
 *       first; none can go: refuse the new one
 *     the table holds max_connections?
 *       close the connection idle longest among those whose client is not
 *       admitted (or not yet known to be: no call finished); if there is
 *       none, among the admitted ones; none can go: refuse the new one
 *
 * "Can go": no calls running and no replies queued (a connection in the
 * middle of receiving a record can go). "Idle longest": the oldest last
 * complete call (or accept). Connections from addresses no export admits
 * do not linger either: srv_conn.c closes them after their first reply,
 * so they hold a slot only while they send nothing -- and then they are
 * the first to go.
 *
 *   Episodes (each logged once, not once per connection):
 *
 *     table below max --a new connection finds it full--> FULL (warning)
 *     FULL --closes bring it to 3/4 of max or less--> not full (a line
 *            with the connections closed and refused meanwhile)
 *     address below cap --a new connection finds it at cap--> CAPPED
 *            (warning naming the address)
 *     CAPPED --its connections fall to 3/4 of the cap or less--> not capped
 *
 *   (An eviction does not end an episode: the new connection takes the
 *   place it made at once.) An address whose connections all close loses
 *   its entry, and with it its episode.
 *
 * NOTES
 *   Event thread only; the only lock taken is each connection's own (to
 *   read whether it can go). Per-address counts are g_malloc'd entries of
 *   per_addr, removed when their count drops to 0.
 */
#include <netinet/in.h>
#include <string.h>

#include "srv_transport.h"

/* FNV-1a, 32 bits. */
#define SRV_FNV32_OFFSET 2166136261u
#define SRV_FNV32_PRIME  16777619u

struct srv_addr_count {
    srv_addr addr; /* the key */
    unsigned n;
    bool capped; /* a per-address episode is on (logged once) */
};

void srv_addr_of(const struct sockaddr *sa, socklen_t len, srv_addr *out)
{
    memset(out, 0, sizeof *out);
    if (sa && sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        out->family = AF_INET;
        memcpy(out->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa && sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        bool mapped = IN6_IS_ADDR_V4MAPPED(a);
        out->family = mapped ? AF_INET : AF_INET6;
        memcpy(out->addr, mapped ? a->s6_addr + 12 : a->s6_addr, mapped ? 4 : 16);
    }
}

static guint srv_addr_hash(gconstpointer p)
{
    const srv_addr *a = p;
    uint32_t h = SRV_FNV32_OFFSET ^ a->family;

    for (unsigned i = 0; i < sizeof a->addr; i++)
        h = (h ^ a->addr[i]) * SRV_FNV32_PRIME;
    return h;
}

static gboolean srv_addr_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(srv_addr)) == 0;
}

void srv_conntab_init(srv_conntab *tab, unsigned max, unsigned max_per_addr)
{
    memset(tab, 0, sizeof *tab);
    tab->max = max ? max : 1;
    tab->max_per_addr = max_per_addr;
    tab->per_addr = g_hash_table_new_full(srv_addr_hash, srv_addr_equal, NULL, g_free);
}

void srv_conntab_clear(srv_conntab *tab)
{
    if (tab->per_addr)
        g_hash_table_destroy(tab->per_addr);
    tab->per_addr = NULL;
}

void srv_conntab_add(srv_conntab *tab, srv_conn *c)
{
    srv_addr_count *ac = g_hash_table_lookup(tab->per_addr, &c->addr);

    if (!ac) {
        ac = g_new0(srv_addr_count, 1);
        ac->addr = c->addr;
        g_hash_table_insert(tab->per_addr, &ac->addr, ac);
    }
    ac->n++;
    c->prev = NULL;
    c->next = tab->head;
    if (tab->head)
        tab->head->prev = c;
    tab->head = c;
    tab->n++;
}

/* Threshold below which an episode ends: 3/4 of the limit. */
static unsigned srv_conntab_low(unsigned limit)
{
    return limit - limit / 4 - (limit >= 4 ? 0 : 1);
}

void srv_conntab_remove(srv_conntab *tab, srv_conn *c)
{
    srv_addr_count *ac = g_hash_table_lookup(tab->per_addr, &c->addr);

    if (c->prev)
        c->prev->next = c->next;
    else
        tab->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    tab->n--;
    if (ac && --ac->n == 0 && !(c->evicted && ac->capped))
        g_hash_table_remove(tab->per_addr, &c->addr); /* (kept for the one that evicted it) */
    else if (ac && ac->capped && !c->evicted && ac->n <= srv_conntab_low(tab->max_per_addr))
        ac->capped = false;
    if (tab->full && !c->evicted && tab->n <= srv_conntab_low(tab->max)) {
        g_message("connections: %u of %u open, room again; %" G_GUINT64_FORMAT
                  " idle connections were closed to make room and %" G_GUINT64_FORMAT
                  " new ones refused meanwhile",
                  tab->n, tab->max, tab->evicted, tab->refused);
        tab->full = false;
    }
}

/*
 * The connection that can go and is idle longest, from addr (NULL: from
 * anyone); with prefer_unadmitted, one whose client is not known to be
 * admitted if there is such a one.
 */
static srv_conn *srv_conntab_oldest(srv_conntab *tab, const srv_addr *addr, bool prefer_unadmitted)
{
    srv_conn *best = NULL;
    bool best_unadmitted = false;

    for (srv_conn *c = tab->head; c; c = c->next) {
        if (addr && memcmp(&c->addr, addr, sizeof *addr) != 0)
            continue;
        pthread_mutex_lock(&c->lock);
        bool can_go = !c->closed && c->inflight == 0 && g_queue_is_empty(&c->outq);
        bool unadmitted = prefer_unadmitted && c->admission != SRV_ADMIT_YES;
        pthread_mutex_unlock(&c->lock);
        if (!can_go)
            continue;
        if (!best || (unadmitted && !best_unadmitted) ||
            (unadmitted == best_unadmitted && c->last_call_us < best->last_call_us)) {
            best = c;
            best_unadmitted = unadmitted;
        }
    }
    return best;
}

/* The per-address cap: a victim from addr, or a refusal. */
static srv_conn *srv_conntab_addr_victim(srv_conntab *tab, srv_addr_count *ac,
                                         const struct sockaddr *peer, socklen_t peerlen, bool *ok)
{
    srv_conn *v = srv_conntab_oldest(tab, &ac->addr, true);

    if (!ac->capped) {
        char who[LOG_PEER_STRLEN];
        log_peer_string(peer, peerlen, who, sizeof who);
        g_warning("connections: %s holds %u connections ([server] max_connections_per_address): "
                  "each new one from there closes its connection idle longest",
                  who, ac->n);
        ac->capped = true;
    }
    *ok = v != NULL;
    return v;
}

srv_conn *srv_conntab_victim(srv_conntab *tab, const srv_addr *addr, const struct sockaddr *peer,
                             socklen_t peerlen, const char **why, bool *ok)
{
    srv_addr_count *ac = g_hash_table_lookup(tab->per_addr, addr);
    srv_conn *v = NULL;

    *ok = true;
    *why = NULL;
    if (tab->max_per_addr && ac && ac->n >= tab->max_per_addr) {
        v = srv_conntab_addr_victim(tab, ac, peer, peerlen, ok);
        *why = "closed for a new connection from its address (max_connections_per_address)";
    } else if (tab->n >= tab->max) {
        if (!tab->full) {
            g_warning("connections: the table is full (%u, [server] max_connections): each new "
                      "connection closes the one idle longest, from clients not admitted first",
                      tab->n);
            tab->full = true;
            tab->evicted = tab->refused = 0;
        }
        v = srv_conntab_oldest(tab, NULL, true);
        *ok = v != NULL;
        *why = "closed for a new connection (max_connections)";
    }
    if (v && tab->full)
        tab->evicted++;
    if (!*ok && tab->full)
        tab->refused++;
    return v;
}
