/*
 * srv_drc.c -- the duplicate request cache: a retransmitted non-idempotent
 * call (CREATE, REMOVE, RENAME, WRITE, ...) gets the reply of its first
 * execution instead of a second execution (see DESIGN.md).
 *
 * Key: the client's address (not its port: a TCP client retransmits after
 * reconnecting from another port), xid, program, version, procedure and a
 * checksum of the argument bytes (FNV-1a over the first SRV_DRC_CSUM_LEN
 * bytes, and their total length, as Linux nfsd does): the same xid with
 * other arguments is another call.
 *
 *   Entry states:
 *
 *     (none) --srv_drc_begin: MISS--> IN_PROGRESS --srv_drc_finish--> DONE
 *                                        |                             |
 *                                        +--srv_drc_abort--> (none)    |
 *     IN_PROGRESS --srv_drc_begin--> IN_PROGRESS (caller drops the call)
 *     DONE --srv_drc_begin--> DONE (reply copied out: HIT; entry refreshed)
 *     any --LRU eviction (shard full)--> (none)
 *
 *   An IN_PROGRESS entry can be evicted by a flood of newer calls; its
 *   finish then finds no entry and does nothing (a retransmission after
 *   that runs again, which is the best a bounded cache can do).
 *
 * Invariants: every shard holds at most per_shard entries; the LRU list
 * and the hash table of a shard hold the same entries.
 *
 * NOTES
 *   Thread safety: SRV_DRC_SHARDS shards, each with its own mutex, chosen
 *   by the key's hash; no lock is shared by all calls. Replies are copied
 *   in and out; the cache owns its copies.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>

#include <glib.h>

#include "srv_drc.h"

#define SRV_DRC_SHARDS   16
#define SRV_DRC_CSUM_LEN 512

typedef enum { SRV_DRC_ENTRY_IN_PROGRESS, SRV_DRC_ENTRY_DONE } srv_drc_state;

typedef struct {
    srv_drc_key key;
    guint hash;
    srv_drc_state state;
    unsigned char *reply; /* DONE: g_malloc'd */
    size_t reply_len;
    GList lru; /* link in the shard's LRU queue; data points to the entry */
} srv_drc_entry;

typedef struct {
    pthread_mutex_t lock;
    GHashTable *table; /* srv_drc_entry * -> same (key fields compared) */
    GQueue lru;        /* head = most recently used */
} srv_drc_shard;

struct srv_drc {
    unsigned per_shard;
    srv_drc_shard shards[SRV_DRC_SHARDS];
};

static uint64_t srv_drc_fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;

    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

void srv_drc_key_init(srv_drc_key *k, const struct sockaddr *peer, uint32_t xid, uint32_t prog,
                      uint32_t vers, uint32_t proc, const void *args, size_t len)
{
    uint64_t n = len;

    memset(k, 0, sizeof *k);
    if (peer && peer->sa_family == AF_INET) {
        k->family = AF_INET;
        memcpy(k->addr, &((const struct sockaddr_in *)peer)->sin_addr, 4);
    } else if (peer && peer->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)peer)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) {
            k->family = AF_INET;
            memcpy(k->addr, a->s6_addr + 12, 4);
        } else {
            k->family = AF_INET6;
            memcpy(k->addr, a->s6_addr, 16);
        }
    }
    k->xid = xid;
    k->prog = prog;
    k->vers = vers;
    k->proc = proc;
    k->csum =
        srv_drc_fnv(0xcbf29ce484222325ull, args, len < SRV_DRC_CSUM_LEN ? len : SRV_DRC_CSUM_LEN);
    k->csum = srv_drc_fnv(k->csum, &n, sizeof n);
}

static guint srv_drc_key_hash(const srv_drc_key *k)
{
    uint64_t h = 0xcbf29ce484222325ull;

    h = srv_drc_fnv(h, k->addr, sizeof k->addr);
    h = srv_drc_fnv(h, &k->family, sizeof k->family);
    h = srv_drc_fnv(h, &k->xid, sizeof k->xid);
    h = srv_drc_fnv(h, &k->prog, sizeof k->prog);
    h = srv_drc_fnv(h, &k->vers, sizeof k->vers);
    h = srv_drc_fnv(h, &k->proc, sizeof k->proc);
    h = srv_drc_fnv(h, &k->csum, sizeof k->csum);
    return (guint)(h ^ (h >> 32));
}

static bool srv_drc_key_equal(const srv_drc_key *a, const srv_drc_key *b)
{
    return a->family == b->family && memcmp(a->addr, b->addr, sizeof a->addr) == 0 &&
           a->xid == b->xid && a->prog == b->prog && a->vers == b->vers && a->proc == b->proc &&
           a->csum == b->csum;
}

static guint srv_drc_entry_hash(gconstpointer p)
{
    return ((const srv_drc_entry *)p)->hash;
}

static gboolean srv_drc_entry_equal(gconstpointer a, gconstpointer b)
{
    return srv_drc_key_equal(&((const srv_drc_entry *)a)->key, &((const srv_drc_entry *)b)->key);
}

static void srv_drc_entry_free(gpointer p)
{
    srv_drc_entry *e = p;

    g_free(e->reply);
    g_free(e);
}

srv_drc *srv_drc_new(unsigned entries)
{
    srv_drc *d = g_new0(srv_drc, 1);

    d->per_shard = (entries + SRV_DRC_SHARDS - 1) / SRV_DRC_SHARDS;
    if (d->per_shard == 0)
        d->per_shard = 1;
    for (unsigned i = 0; i < SRV_DRC_SHARDS; i++) {
        pthread_mutex_init(&d->shards[i].lock, NULL);
        d->shards[i].table = g_hash_table_new_full(srv_drc_entry_hash, srv_drc_entry_equal, NULL,
                                                   srv_drc_entry_free);
        g_queue_init(&d->shards[i].lru);
    }
    return d;
}

void srv_drc_free(srv_drc *d)
{
    if (!d)
        return;
    for (unsigned i = 0; i < SRV_DRC_SHARDS; i++) {
        g_hash_table_destroy(d->shards[i].table);
        pthread_mutex_destroy(&d->shards[i].lock);
    }
    g_free(d);
}

/* The shard of a key, and a lookup probe for it (hash filled). */
static srv_drc_shard *srv_drc_shard_of(srv_drc *d, const srv_drc_key *k, srv_drc_entry *probe)
{
    probe->key = *k;
    probe->hash = srv_drc_key_hash(k);
    return &d->shards[probe->hash % SRV_DRC_SHARDS];
}

/* Remove e from shard s and free it (lock held). */
static void srv_drc_remove_locked(srv_drc_shard *s, srv_drc_entry *e)
{
    g_queue_unlink(&s->lru, &e->lru);
    g_hash_table_remove(s->table, e);
}

srv_drc_result srv_drc_begin(srv_drc *d, const srv_drc_key *k, srv_buf *reply)
{
    srv_drc_entry probe;
    srv_drc_shard *s = srv_drc_shard_of(d, k, &probe);
    srv_drc_result r;

    pthread_mutex_lock(&s->lock);
    srv_drc_entry *e = g_hash_table_lookup(s->table, &probe);
    if (e) {
        g_queue_unlink(&s->lru, &e->lru);
        g_queue_push_head_link(&s->lru, &e->lru);
        if (e->state == SRV_DRC_ENTRY_DONE) {
            srv_buf_set(reply, e->reply, e->reply_len);
            r = SRV_DRC_HIT;
        } else {
            r = SRV_DRC_IN_PROGRESS;
        }
        goto out;
    }
    while (g_hash_table_size(s->table) >= d->per_shard) {
        GList *oldest = g_queue_peek_tail_link(&s->lru);
        srv_drc_remove_locked(s, oldest->data);
    }
    e = g_new0(srv_drc_entry, 1);
    e->key = probe.key;
    e->hash = probe.hash;
    e->state = SRV_DRC_ENTRY_IN_PROGRESS;
    e->lru.data = e;
    g_hash_table_add(s->table, e);
    g_queue_push_head_link(&s->lru, &e->lru);
    r = SRV_DRC_MISS;
out:
    pthread_mutex_unlock(&s->lock);
    return r;
}

void srv_drc_finish(srv_drc *d, const srv_drc_key *k, const void *reply, size_t len)
{
    srv_drc_entry probe;
    srv_drc_shard *s = srv_drc_shard_of(d, k, &probe);

    pthread_mutex_lock(&s->lock);
    srv_drc_entry *e = g_hash_table_lookup(s->table, &probe);
    if (e && e->state == SRV_DRC_ENTRY_IN_PROGRESS) {
        e->reply = g_memdup2(reply, len);
        e->reply_len = len;
        e->state = SRV_DRC_ENTRY_DONE;
    }
    pthread_mutex_unlock(&s->lock);
}

void srv_drc_abort(srv_drc *d, const srv_drc_key *k)
{
    srv_drc_entry probe;
    srv_drc_shard *s = srv_drc_shard_of(d, k, &probe);

    pthread_mutex_lock(&s->lock);
    srv_drc_entry *e = g_hash_table_lookup(s->table, &probe);
    if (e && e->state == SRV_DRC_ENTRY_IN_PROGRESS)
        srv_drc_remove_locked(s, e);
    pthread_mutex_unlock(&s->lock);
}

unsigned srv_drc_count(srv_drc *d)
{
    unsigned n = 0;

    for (unsigned i = 0; i < SRV_DRC_SHARDS; i++) {
        pthread_mutex_lock(&d->shards[i].lock);
        n += g_hash_table_size(d->shards[i].table);
        pthread_mutex_unlock(&d->shards[i].lock);
    }
    return n;
}
