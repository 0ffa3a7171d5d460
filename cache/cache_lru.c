/*
 * cache_lru.c -- the generic bounded, sharded, thread-safe LRU map and its
 * fill/mutation coherence protocol (the contract is in cache_lru.h).
 *
 * Layout: the cache is a power-of-two number of shards; a key's 64-bit hash
 * picks the shard (high bits) and the bucket in the shard's chained hash
 * table (low bits). Each shard keeps its entries on a doubly linked LRU
 * list (head = most recently used) and evicts from the tail.
 *
 *   Entry life:
 *
 *     (none) --fill/store: allowed--> CACHED --get/visit--> CACHED (to head)
 *     CACHED --fill/store: allowed--> CACHED (value replaced, to head)
 *     CACHED --store: overlapped, remove, remove_if, clear--> (none)
 *     CACHED --fill/store of another key over the bound--> (none) (evicted)
 *
 * Invariants (per shard, under its lock): the hash table and the LRU list
 * hold the same entries; `charge` is the sum of their charges and never
 * exceeds `cap` after an operation returns; `n` is their number.
 * Stripes (the guard table) are outside the shards and use atomics only:
 * `inflight` counts mutations between begin and end; `last_end` only grows.
 *
 * NOTES
 *   Entries are one allocation: header, value (aligned for any type), key.
 *   New entries are allocated before the shard lock is taken and evicted
 *   ones freed after it is released, so a lock is held only for pointer
 *   work and the copy of one value.
 */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cache_lru.h"

#define CACHE_LRU_DEFAULT_SHARDS  16
#define CACHE_LRU_MAX_SHARDS      1024
#define CACHE_LRU_DEFAULT_STRIPES 4096
#define CACHE_LRU_MAX_STRIPES     (1u << 24)
#define CACHE_LRU_MIN_BUCKETS     16

typedef struct cache_lru_entry {
    struct cache_lru_entry *hnext;       /* hash chain */
    struct cache_lru_entry *prev, *next; /* LRU list: prev toward the head */
    uint64_t hash;
    size_t klen, vlen, charge;
} cache_lru_entry;

/* Offset of the value in an entry: the header rounded up for any type. */
#define CACHE_LRU_HDR                                                                              \
    ((sizeof(cache_lru_entry) + alignof(max_align_t) - 1) / alignof(max_align_t) *                 \
     alignof(max_align_t))

typedef struct {
    pthread_mutex_t lock;
    cache_lru_entry **buckets;
    size_t nbuckets; /* a power of two */
    size_t n;
    cache_lru_entry *head, *tail;
    size_t charge, cap;
    uint64_t hits, misses, inserts, evictions, invalidations, refused;
    char pad[64]; /* keep neighbouring shards' locks off one cache line */
} cache_lru_shard;

typedef struct {
    atomic_uint inflight;
    atomic_uint_fast64_t last_end;
} cache_lru_stripe;

struct cache_lru {
    unsigned nshards, shard_shift;
    unsigned nstripes;
    cache_lru_keep_fn keep;
    size_t capacity;
    cache_lru_stripe *stripes;
    cache_lru_shard *shards;
    char pad[64];
    atomic_uint_fast64_t seq;       /* mutations ended so far */
    atomic_uint_fast64_t reset_seq; /* seq of the last cache_lru_reset */
};

static uint64_t cache_lru_mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static uint64_t cache_lru_hash(const void *key, size_t klen)
{
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < klen; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return cache_lru_mix(h ^ klen);
}

static unsigned cache_lru_pow2(unsigned v)
{
    unsigned p = 1;

    while (p < v)
        p <<= 1;
    return p;
}

static void *cache_lru_val(cache_lru_entry *e)
{
    return (unsigned char *)e + CACHE_LRU_HDR;
}

static const unsigned char *cache_lru_key(const cache_lru_entry *e)
{
    return (const unsigned char *)e + CACHE_LRU_HDR + e->vlen;
}

static cache_lru_shard *cache_lru_shard_of(cache_lru *c, uint64_t hash)
{
    return &c->shards[c->shard_shift >= 64 ? 0 : hash >> c->shard_shift];
}

static uint32_t cache_lru_stripe_of(const cache_lru *c, uint64_t guard)
{
    return (uint32_t)(cache_lru_mix(guard) & (c->nstripes - 1));
}

/*
 * cache_lru_new -- see cache_lru.h.
 */
int cache_lru_new(const cache_lru_opts *opts, cache_lru **out)
{
    unsigned nshards = opts->shards ? cache_lru_pow2(opts->shards) : CACHE_LRU_DEFAULT_SHARDS;
    unsigned nstripes = opts->stripes ? cache_lru_pow2(opts->stripes) : CACHE_LRU_DEFAULT_STRIPES;
    unsigned bits = 0;
    cache_lru *c = NULL;

    *out = NULL;
    if (opts->capacity == 0 || nshards > CACHE_LRU_MAX_SHARDS || nstripes > CACHE_LRU_MAX_STRIPES)
        return -EINVAL;
    c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    while ((1u << bits) < nshards)
        bits++;
    c->nshards = nshards;
    c->shard_shift = 64 - bits;
    c->nstripes = nstripes;
    c->keep = opts->keep;
    c->capacity = opts->capacity;
    atomic_init(&c->seq, 0);
    atomic_init(&c->reset_seq, 0);
    c->stripes = calloc(nstripes, sizeof *c->stripes);
    c->shards = calloc(nshards, sizeof *c->shards);
    if (!c->stripes || !c->shards)
        goto err;
    for (unsigned i = 0; i < nstripes; i++) {
        atomic_init(&c->stripes[i].inflight, 0);
        atomic_init(&c->stripes[i].last_end, 0);
    }
    for (unsigned i = 0; i < nshards; i++) {
        cache_lru_shard *s = &c->shards[i];
        /* Spread the capacity: the first (capacity % nshards) get one more. */
        s->cap = opts->capacity / nshards + (i < opts->capacity % nshards ? 1 : 0);
        s->nbuckets = CACHE_LRU_MIN_BUCKETS;
        s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
        if (!s->buckets) {
            for (unsigned j = 0; j < i; j++) {
                free(c->shards[j].buckets);
                pthread_mutex_destroy(&c->shards[j].lock);
            }
            goto err;
        }
        pthread_mutex_init(&s->lock, NULL);
    }
    *out = c;
    return 0;
err:
    free(c->stripes);
    free(c->shards);
    free(c);
    return -ENOMEM;
}

static void cache_lru_free_chain(cache_lru_entry *e)
{
    while (e) {
        cache_lru_entry *next = e->next;
        free(e);
        e = next;
    }
}

/*
 * cache_lru_free -- see cache_lru.h.
 */
void cache_lru_free(cache_lru *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_lru_free_chain(c->shards[i].head);
        free(c->shards[i].buckets);
        pthread_mutex_destroy(&c->shards[i].lock);
    }
    free(c->shards);
    free(c->stripes);
    free(c);
}

/* --- shard internals (caller holds s->lock) ------------------------------ */

static cache_lru_entry **cache_lru_slot(cache_lru_shard *s, uint64_t hash, const void *key,
                                        size_t klen)
{
    cache_lru_entry **pp = &s->buckets[hash & (s->nbuckets - 1)];

    for (; *pp; pp = &(*pp)->hnext) {
        cache_lru_entry *e = *pp;
        if (e->hash == hash && e->klen == klen && memcmp(cache_lru_key(e), key, klen) == 0)
            return pp;
    }
    return pp;
}

static void cache_lru_list_unlink(cache_lru_shard *s, cache_lru_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        s->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        s->tail = e->prev;
    e->prev = e->next = NULL;
}

static void cache_lru_list_push(cache_lru_shard *s, cache_lru_entry *e)
{
    e->prev = NULL;
    e->next = s->head;
    if (s->head)
        s->head->prev = e;
    else
        s->tail = e;
    s->head = e;
}

static void cache_lru_touch(cache_lru_shard *s, cache_lru_entry *e)
{
    if (s->head == e)
        return;
    cache_lru_list_unlink(s, e);
    cache_lru_list_push(s, e);
}

/* Unlink e (whose hash slot is *pp) from the table and the list; it is
 * chained onto *dead (through next) for freeing after the unlock. */
static void cache_lru_drop(cache_lru_shard *s, cache_lru_entry **pp, cache_lru_entry **dead)
{
    cache_lru_entry *e = *pp;

    *pp = e->hnext;
    cache_lru_list_unlink(s, e);
    s->n--;
    s->charge -= e->charge;
    e->next = *dead;
    *dead = e;
}

static void cache_lru_grow(cache_lru_shard *s)
{
    size_t nb = s->nbuckets * 2;
    cache_lru_entry **b = calloc(nb, sizeof *b);

    if (!b)
        return; /* longer chains, still correct */
    for (size_t i = 0; i < s->nbuckets; i++) {
        cache_lru_entry *e = s->buckets[i];
        while (e) {
            cache_lru_entry *next = e->hnext;
            e->hnext = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
            e = next;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = nb;
}

/* Evict from the tail until `need` more charge fits. */
static void cache_lru_make_room(cache_lru_shard *s, size_t need, cache_lru_entry **dead)
{
    while (s->tail && s->charge + need > s->cap) {
        cache_lru_entry *e = s->tail;
        cache_lru_entry **pp = cache_lru_slot(s, e->hash, cache_lru_key(e), e->klen);
        cache_lru_drop(s, pp, dead);
        s->evictions++;
    }
}

/* Put ne (allocated, filled) into s in place of any entry with its key,
 * unless c->keep prefers the old one. Returns true if ne was linked. */
static bool cache_lru_link(cache_lru *c, cache_lru_shard *s, cache_lru_entry *ne,
                           cache_lru_entry **dead)
{
    cache_lru_entry **pp = cache_lru_slot(s, ne->hash, cache_lru_key(ne), ne->klen);

    if (*pp) {
        cache_lru_entry *old = *pp;
        if (c->keep && c->keep(cache_lru_val(old), old->vlen, cache_lru_val(ne), ne->vlen)) {
            cache_lru_touch(s, old);
            return false;
        }
        cache_lru_drop(s, pp, dead);
    }
    cache_lru_make_room(s, ne->charge, dead);
    if (s->n >= s->nbuckets)
        cache_lru_grow(s);
    pp = &s->buckets[ne->hash & (s->nbuckets - 1)];
    ne->hnext = *pp;
    *pp = ne;
    cache_lru_list_push(s, ne);
    s->n++;
    s->charge += ne->charge;
    s->inserts++;
    return true;
}

/* A new entry whose value is the parts one after the other (vlen bytes
 * in all): each copied once, straight into place. */
static cache_lru_entry *cache_lru_entry_new(uint64_t hash, const void *key, size_t klen,
                                            const cache_lru_part *parts, unsigned nparts,
                                            size_t vlen, size_t charge)
{
    cache_lru_entry *e = malloc(CACHE_LRU_HDR + vlen + klen);
    size_t at = 0;

    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->hash = hash;
    e->klen = klen;
    e->vlen = vlen;
    e->charge = charge;
    for (unsigned i = 0; i < nparts; i++) {
        if (parts[i].n)
            memcpy((unsigned char *)cache_lru_val(e) + at, parts[i].p, parts[i].n);
        at += parts[i].n;
    }
    if (klen)
        memcpy((unsigned char *)e + CACHE_LRU_HDR + vlen, key, klen);
    return e;
}

/* --- lookups ------------------------------------------------------------- */

typedef struct {
    void *buf;
    size_t buflen;
} cache_lru_copy_arg;

static int cache_lru_copy_out(void *val, size_t len, void *arg)
{
    cache_lru_copy_arg *a = arg;

    if (a->buflen)
        memcpy(a->buf, val, len < a->buflen ? len : a->buflen);
    return 0;
}

/*
 * cache_lru_visit -- see cache_lru.h.
 */
int cache_lru_visit(cache_lru *c, const void *key, size_t klen, cache_lru_visit_fn fn, void *arg)
{
    uint64_t hash = cache_lru_hash(key, klen);
    cache_lru_shard *s = cache_lru_shard_of(c, hash);
    cache_lru_entry *e;
    int rc;

    pthread_mutex_lock(&s->lock);
    e = *cache_lru_slot(s, hash, key, klen);
    if (!e) {
        s->misses++;
        pthread_mutex_unlock(&s->lock);
        return -ENOENT;
    }
    s->hits++;
    cache_lru_touch(s, e);
    rc = fn(cache_lru_val(e), e->vlen, arg);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* cache_lru_get and cache_lru_find: the same look-up, counted or not. */
static long cache_lru_copy_value(cache_lru *c, const void *key, size_t klen, void *buf,
                                 size_t buflen, bool count)
{
    uint64_t hash = cache_lru_hash(key, klen);
    cache_lru_shard *s = cache_lru_shard_of(c, hash);
    cache_lru_copy_arg a = {buf, buflen};
    cache_lru_entry *e;
    size_t len;

    pthread_mutex_lock(&s->lock);
    e = *cache_lru_slot(s, hash, key, klen);
    if (!e) {
        if (count)
            s->misses++;
        pthread_mutex_unlock(&s->lock);
        return -ENOENT;
    }
    if (count)
        s->hits++;
    cache_lru_touch(s, e);
    cache_lru_copy_out(cache_lru_val(e), e->vlen, &a);
    len = e->vlen;
    pthread_mutex_unlock(&s->lock);
    return (long)len;
}

/*
 * cache_lru_get -- see cache_lru.h.
 */
long cache_lru_get(cache_lru *c, const void *key, size_t klen, void *buf, size_t buflen)
{
    return cache_lru_copy_value(c, key, klen, buf, buflen, true);
}

/*
 * cache_lru_find -- see cache_lru.h.
 */
long cache_lru_find(cache_lru *c, const void *key, size_t klen, void *buf, size_t buflen)
{
    return cache_lru_copy_value(c, key, klen, buf, buflen, false);
}

/*
 * cache_lru_hit -- see cache_lru.h.
 */
void cache_lru_hit(cache_lru *c, const void *key, size_t klen)
{
    cache_lru_shard *s = cache_lru_shard_of(c, cache_lru_hash(key, klen));

    pthread_mutex_lock(&s->lock);
    s->hits++;
    pthread_mutex_unlock(&s->lock);
}

/*
 * cache_lru_contains -- see cache_lru.h.
 */
bool cache_lru_contains(cache_lru *c, const void *key, size_t klen)
{
    uint64_t hash = cache_lru_hash(key, klen);
    cache_lru_shard *s = cache_lru_shard_of(c, hash);
    bool found;

    pthread_mutex_lock(&s->lock);
    found = *cache_lru_slot(s, hash, key, klen) != NULL;
    pthread_mutex_unlock(&s->lock);
    return found;
}

/* --- the coherence protocol ---------------------------------------------- */

/*
 * cache_lru_fill_ticket -- see cache_lru.h.
 */
cache_lru_ticket cache_lru_fill_ticket(cache_lru *c)
{
    cache_lru_ticket t = {atomic_load(&c->seq)};

    return t;
}

/* May a reader holding ticket t store under stripe st? (No mutation in
 * flight, none ended after t.) Called under the key's shard lock. */
static bool cache_lru_fill_ok(cache_lru *c, uint32_t st, cache_lru_ticket t)
{
    cache_lru_stripe *p = &c->stripes[st];

    return atomic_load(&p->inflight) == 0 && atomic_load(&p->last_end) <= t.seq &&
           atomic_load(&c->reset_seq) <= t.seq;
}

/* Is m alone on stripe st since it began, with no reset since either?
 * Called under the key's shard lock. */
static bool cache_lru_store_ok(cache_lru *c, const cache_lru_mut *m, uint32_t st)
{
    cache_lru_stripe *p = &c->stripes[st];
    bool held = false;

    for (unsigned i = 0; i < m->n; i++)
        held = held || m->stripe[i] == st;
    return held && atomic_load(&p->inflight) == 1 && atomic_load(&p->last_end) <= m->seq &&
           atomic_load(&c->reset_seq) <= m->seq;
}

typedef enum { CACHE_LRU_PUT_FILL, CACHE_LRU_PUT_STORE, CACHE_LRU_PUT_FORCE } cache_lru_put_mode;

/* Store key -> val in its shard if the protocol allows it under the shard
 * lock: a reader's fill_ok with t, a writer's store_ok with m, or always
 * (force). A writer that may not store removes the key. Returns 0,
 * -EAGAIN (refused), -E2BIG, -ENOMEM. */
static int cache_lru_put(cache_lru *c, cache_lru_put_mode mode, uint64_t guard, const void *key,
                         size_t klen, const cache_lru_part *parts, unsigned nparts, size_t charge,
                         const cache_lru_mut *m, cache_lru_ticket t)
{
    uint64_t hash = cache_lru_hash(key, klen);
    cache_lru_shard *s = cache_lru_shard_of(c, hash);
    uint32_t st = cache_lru_stripe_of(c, guard);
    cache_lru_entry *ne = NULL, *dead = NULL;
    cache_lru_entry **pp;
    size_t vlen = 0;
    int rc = 0;
    bool ok;

    for (unsigned i = 0; i < nparts; i++)
        vlen += parts[i].n;
    if (charge <= s->cap)
        ne = cache_lru_entry_new(hash, key, klen, parts, nparts, vlen, charge);
    pthread_mutex_lock(&s->lock);
    ok = mode == CACHE_LRU_PUT_FORCE   ? true
         : mode == CACHE_LRU_PUT_STORE ? cache_lru_store_ok(c, m, st)
                                       : cache_lru_fill_ok(c, st, t);
    if (ok && ne) {
        if (cache_lru_link(c, s, ne, &dead))
            ne = NULL;
    } else {
        rc = !ok ? -EAGAIN : charge > s->cap ? -E2BIG : -ENOMEM;
        if (!ok)
            s->refused++;
        /* A writer that cannot store must not leave the old value behind;
         * a refused reader changes nothing. */
        if (mode == CACHE_LRU_PUT_STORE) {
            pp = cache_lru_slot(s, hash, key, klen);
            if (*pp) {
                cache_lru_drop(s, pp, &dead);
                s->invalidations++;
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
    free(ne);
    cache_lru_free_chain(dead);
    return rc;
}

/*
 * cache_lru_fill -- see cache_lru.h.
 */
int cache_lru_fill(cache_lru *c, cache_lru_ticket t, uint64_t guard, const void *key, size_t klen,
                   const void *val, size_t vlen, size_t charge)
{
    cache_lru_part part = {val, vlen};

    return cache_lru_put(c, CACHE_LRU_PUT_FILL, guard, key, klen, &part, 1, charge, NULL, t);
}

/*
 * cache_lru_mut_begin -- see cache_lru.h.
 */
void cache_lru_mut_begin(cache_lru *c, cache_lru_mut *m, const uint64_t *guards, unsigned n)
{
    m->n = 0;
    for (unsigned i = 0; i < n && i < CACHE_LRU_MUT_MAX; i++) {
        uint32_t st = cache_lru_stripe_of(c, guards[i]);
        bool dup = false;
        for (unsigned j = 0; j < m->n; j++)
            dup = dup || m->stripe[j] == st;
        if (dup)
            continue;
        m->stripe[m->n++] = st;
        atomic_fetch_add(&c->stripes[st].inflight, 1);
    }
    m->seq = atomic_load(&c->seq);
}

/*
 * cache_lru_store -- see cache_lru.h.
 */
int cache_lru_store(cache_lru *c, const cache_lru_mut *m, uint64_t guard, const void *key,
                    size_t klen, const void *val, size_t vlen, size_t charge)
{
    cache_lru_ticket none = {0};
    cache_lru_part part = {val, vlen};

    return cache_lru_put(c, CACHE_LRU_PUT_STORE, guard, key, klen, &part, 1, charge, m, none);
}

/*
 * cache_lru_force -- see cache_lru.h.
 */
int cache_lru_force(cache_lru *c, const void *key, size_t klen, const void *val, size_t vlen,
                    size_t charge)
{
    cache_lru_part part = {val, vlen};

    return cache_lru_force_parts(c, key, klen, &part, 1, charge);
}

/*
 * cache_lru_force_parts -- see cache_lru.h.
 */
int cache_lru_force_parts(cache_lru *c, const void *key, size_t klen, const cache_lru_part *parts,
                          unsigned nparts, size_t charge)
{
    cache_lru_ticket none = {0};

    return cache_lru_put(c, CACHE_LRU_PUT_FORCE, 0, key, klen, parts, nparts, charge, NULL, none);
}

/*
 * cache_lru_mut_end -- see cache_lru.h.
 */
void cache_lru_mut_end(cache_lru *c, cache_lru_mut *m)
{
    uint64_t e = atomic_fetch_add(&c->seq, 1) + 1;

    for (unsigned i = 0; i < m->n; i++) {
        cache_lru_stripe *p = &c->stripes[m->stripe[i]];
        uint_fast64_t cur = atomic_load(&p->last_end);
        while (cur < e && !atomic_compare_exchange_weak(&p->last_end, &cur, e))
            ;
        atomic_fetch_sub(&p->inflight, 1);
    }
    m->n = 0;
}

/* --- removal --------------------------------------------------------------- */

/*
 * cache_lru_remove -- see cache_lru.h.
 */
bool cache_lru_remove(cache_lru *c, const void *key, size_t klen)
{
    uint64_t hash = cache_lru_hash(key, klen);
    cache_lru_shard *s = cache_lru_shard_of(c, hash);
    cache_lru_entry *dead = NULL;
    cache_lru_entry **pp;
    bool found;

    pthread_mutex_lock(&s->lock);
    pp = cache_lru_slot(s, hash, key, klen);
    found = *pp != NULL;
    if (found) {
        cache_lru_drop(s, pp, &dead);
        s->invalidations++;
    }
    pthread_mutex_unlock(&s->lock);
    cache_lru_free_chain(dead);
    return found;
}

/*
 * cache_lru_remove_if -- see cache_lru.h.
 */
size_t cache_lru_remove_if(cache_lru *c, cache_lru_pred_fn pred, void *arg)
{
    size_t removed = 0;

    for (unsigned i = 0; i < c->nshards; i++) {
        cache_lru_shard *s = &c->shards[i];
        cache_lru_entry *dead = NULL;
        pthread_mutex_lock(&s->lock);
        for (size_t b = 0; b < s->nbuckets; b++) {
            cache_lru_entry **pp = &s->buckets[b];
            while (*pp) {
                cache_lru_entry *e = *pp;
                if (pred(cache_lru_key(e), e->klen, cache_lru_val(e), e->vlen, arg)) {
                    cache_lru_drop(s, pp, &dead);
                    s->invalidations++;
                    removed++;
                } else {
                    pp = &e->hnext;
                }
            }
        }
        pthread_mutex_unlock(&s->lock);
        cache_lru_free_chain(dead);
    }
    return removed;
}

static bool cache_lru_all(const void *key, size_t klen, const void *val, size_t vlen, void *arg)
{
    (void)key, (void)klen, (void)val, (void)vlen, (void)arg;
    return true;
}

/*
 * cache_lru_clear -- see cache_lru.h.
 */
void cache_lru_clear(cache_lru *c)
{
    cache_lru_remove_if(c, cache_lru_all, NULL);
}

/*
 * cache_lru_reset -- see cache_lru.h. The reset counts as a mutation that
 * ends now on every stripe: tickets taken before it fail fill_ok.
 */
void cache_lru_reset(cache_lru *c)
{
    uint64_t e = atomic_fetch_add(&c->seq, 1) + 1;
    uint_fast64_t cur = atomic_load(&c->reset_seq);

    while (cur < e && !atomic_compare_exchange_weak(&c->reset_seq, &cur, e))
        ;
    cache_lru_clear(c);
}

/*
 * cache_lru_get_stats -- see cache_lru.h.
 */
void cache_lru_get_stats(cache_lru *c, cache_lru_stats *out)
{
    memset(out, 0, sizeof *out);
    out->capacity = c->capacity;
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_lru_shard *s = &c->shards[i];
        pthread_mutex_lock(&s->lock);
        out->hits += s->hits;
        out->misses += s->misses;
        out->inserts += s->inserts;
        out->evictions += s->evictions;
        out->invalidations += s->invalidations;
        out->refused += s->refused;
        out->entries += s->n;
        out->charge += s->charge;
        pthread_mutex_unlock(&s->lock);
    }
}

/* cache_lru_tagged_stats -- see cache_lru.h. */
void cache_lru_tagged_stats(cache_lru *c, uint64_t hits, uint64_t misses, uint64_t stale,
                            uint64_t capacity, cache_tagged_stats *out)
{
    cache_lru_stats st;

    cache_lru_get_stats(c, &st);
    memset(out, 0, sizeof *out);
    out->hits = hits;
    out->misses = misses;
    out->stale = stale;
    out->inserts = st.inserts;
    out->evictions = st.evictions;
    out->invalidations = st.invalidations;
    out->entries = st.entries;
    out->bytes = st.charge;
    out->capacity = capacity;
}
