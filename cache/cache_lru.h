/*
 * cache_lru.h -- a generic bounded, sharded, thread-safe LRU map from byte
 * strings to byte strings, with hit/miss/eviction/invalidation counters and
 * a fill/mutation protocol that keeps a cache exactly coherent with a
 * backing store whose changes it does not see itself.
 *
 * The stat cache (cache_stat.c), the naming cache (cache_name.c) and the
 * chunk buffer cache (cache_chunk.c) are thin typed layers over this.
 *
 * NOTES
 *   Bounds: every entry has a caller-chosen charge (1 for "count entries",
 *   its byte size for "count bytes"). The capacity is split evenly over the
 *   shards; a shard evicts least-recently-used entries until a new entry
 *   fits. An entry whose charge exceeds a shard's capacity is refused.
 *
 *   Threads: each shard has its own mutex; a key's shard is chosen by its
 *   hash. No lock is shared by all keys. Callbacks (cache_lru_visit_fn,
 *   cache_lru_keep_fn) run under a shard lock: they must be short and must
 *   not call back into the cache.
 *
 *   Ownership: keys and values are copied in; the cache owns its copies.
 *   Lookups copy out (cache_lru_get) or lend the value to a callback for
 *   the duration of the call (cache_lru_visit). Nothing handed out outlives
 *   the call.
 *
 *   Coherence protocol (the reason this is more than an LRU). A backing
 *   store changes under mutations; readers fill the cache on a miss. Two
 *   races break naive caches: a reader that read old data inserts it after
 *   a writer updated the cache, and two writers whose cache updates land in
 *   the opposite order of their commits (possibly with an eviction in
 *   between, so that version numbers stored in entries cannot help).
 *   Entries are therefore grouped by a 64-bit *guard* (an inode number: the
 *   file for attributes and data, the directory for names), hashed onto a
 *   fixed table of stripes, each with an in-flight count and the sequence
 *   number of the last mutation that ended on it (a global counter):
 *
 *     reader:  t = cache_lru_fill_ticket()        before reading the store
 *              read the store
 *              cache_lru_fill(t, guard, key, value)
 *                stores only if no mutation of the guard's stripe is in
 *                flight and none ended after t (checked under the shard
 *                lock): otherwise the value may be stale and is dropped.
 *
 *     writer:  cache_lru_mut_begin(m, guards)     in-flight++ on each stripe
 *              change the store (commit or fail)
 *              cache_lru_store(m, guard, key, value) or cache_lru_remove()
 *                store replaces the entry only if this mutation was alone
 *                on the stripe for its whole flight (no other in flight, no
 *                other ended since it began); otherwise it removes the
 *                entry, because the order of the overlapping commits is
 *                unknown here.
 *              cache_lru_mut_end(m)               last_end = ++seq; in-flight--
 *
 *   Why it is exact: a reader's value is stored only if no mutation of its
 *   stripe ran between the ticket (taken before its snapshot) and the
 *   store, so the value was current when stored; a later mutation replaces
 *   or removes it after its own commit. A writer stores only when no other
 *   writer of the stripe overlapped it, so it is the last commit so far;
 *   overlapping writers all remove. After every writer has ended, an entry
 *   holds the latest committed value or nothing. Stripe collisions only
 *   cost refusals, never correctness. Removal is always safe.
 *
 *   Writers must therefore begin before they change the store, and end
 *   after their cache updates, on every path (success or failure).
 */
#ifndef PGNFS_CACHE_LRU_H
#define PGNFS_CACHE_LRU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cache_lru cache_lru;

/* Most guards (stripes) one mutation may hold: a rename touches two
 * directories, the object and a victim. */
#define CACHE_LRU_MUT_MAX 8

/* Returned by a cache_lru_keep_fn: keep the old entry, drop the new value. */
typedef bool (*cache_lru_keep_fn)(const void *old_val, size_t old_len, const void *new_val,
                                  size_t new_len);

/* Called with an entry's value under its shard lock; may modify the value
 * in place (not its length). Its return value is returned by
 * cache_lru_visit(); it should be >= 0. */
typedef int (*cache_lru_visit_fn)(void *val, size_t len, void *arg);

/* Called for every entry by cache_lru_remove_if(); true removes it. */
typedef bool (*cache_lru_pred_fn)(const void *key, size_t klen, const void *val, size_t vlen,
                                  void *arg);

typedef struct {
    size_t capacity;        /* total charge; must be > 0 */
    unsigned shards;        /* 0 = 16; rounded up to a power of two, <= 1024 */
    unsigned stripes;       /* guard stripes; 0 = 4096; rounded up to a power of two */
    cache_lru_keep_fn keep; /* NULL: a new value always replaces the old */
} cache_lru_opts;

typedef struct {
    uint64_t hits, misses;
    uint64_t inserts;       /* entries stored (new or replacing) */
    uint64_t evictions;     /* entries pushed out by the bound */
    uint64_t invalidations; /* entries removed by remove/store-as-remove/remove_if/clear */
    uint64_t refused;       /* fills or stores dropped by the coherence protocol */
    uint64_t entries;       /* now */
    uint64_t charge;        /* now */
    uint64_t capacity;
} cache_lru_stats;

/* The counters of a cache whose entries are tagged with their file's
 * ctime (cache_chunk.h, cache_small.h): hits and misses are that layer's,
 * the rest cache_lru's. */
typedef struct {
    uint64_t hits, misses;
    uint64_t stale; /* of the misses: an entry was there, tagged otherwise */
    uint64_t inserts, evictions, invalidations;
    uint64_t entries, bytes, capacity; /* bytes: the charge held now */
} cache_tagged_stats;

/* cache_lru_tagged_stats -- fill *out from c's counters and the layer's
 * hits, misses, stale and capacity. Cannot fail. */
void cache_lru_tagged_stats(cache_lru *c, uint64_t hits, uint64_t misses, uint64_t stale,
                            uint64_t capacity, cache_tagged_stats *out);

/* A reader's ticket: the mutation sequence number before it read. */
typedef struct {
    uint64_t seq;
} cache_lru_ticket;

/* A writer's hold on the stripes of its guards (cache_lru_mut_begin). */
typedef struct {
    uint64_t seq; /* sequence number when the hold was complete */
    unsigned n;
    uint32_t stripe[CACHE_LRU_MUT_MAX];
} cache_lru_mut;

/*
 * cache_lru_new -- a cache with the given bounds. Returns 0 and *out, or
 * -EINVAL (capacity 0, too many shards) or -ENOMEM; *out is NULL then.
 */
int cache_lru_new(const cache_lru_opts *opts, cache_lru **out);

/* cache_lru_free -- free the cache and every entry. c may be NULL. No other
 * thread may use c during or after the call. */
void cache_lru_free(cache_lru *c);

/*
 * cache_lru_get -- copy the value of key into buf (at most buflen bytes)
 * and make the entry most recently used. Returns the value's full length
 * (which may exceed buflen: then only buflen bytes were copied), or -ENOENT.
 * Counts a hit or a miss.
 */
long cache_lru_get(cache_lru *c, const void *key, size_t klen, void *buf, size_t buflen);

/*
 * cache_lru_find -- cache_lru_get that counts nothing: for an answer from
 * memory tried first (srv_dispatch_quick), which counts its hits with
 * cache_lru_hit once it answers and otherwise leaves the look-up to be
 * made again, and counted, by the ordinary path.
 */
long cache_lru_find(cache_lru *c, const void *key, size_t klen, void *buf, size_t buflen);

/* cache_lru_hit -- count one hit of key (found by cache_lru_find). */
void cache_lru_hit(cache_lru *c, const void *key, size_t klen);

/*
 * cache_lru_visit -- call fn with the value of key under its shard lock and
 * make the entry most recently used. Returns fn's result, or -ENOENT (fn
 * not called). Counts a hit or a miss.
 */
int cache_lru_visit(cache_lru *c, const void *key, size_t klen, cache_lru_visit_fn fn, void *arg);

/* cache_lru_contains -- is key cached? Counts nothing, changes no order
 * (for tests and assertions). */
bool cache_lru_contains(cache_lru *c, const void *key, size_t klen);

/* cache_lru_fill_ticket -- take a reader's ticket before reading the store.
 * Cannot fail. */
cache_lru_ticket cache_lru_fill_ticket(cache_lru *c);

/*
 * cache_lru_fill -- a reader stores what it read (see the protocol above).
 * Returns 0 (stored, or kept an entry that opts.keep preferred), -EAGAIN
 * (refused: a mutation of guard's stripe ran since the ticket; nothing
 * changed), -E2BIG (charge over a shard's capacity) or -ENOMEM.
 */
int cache_lru_fill(cache_lru *c, cache_lru_ticket t, uint64_t guard, const void *key, size_t klen,
                   const void *val, size_t vlen, size_t charge);

/*
 * cache_lru_mut_begin -- a writer announces a mutation of the given guards
 * (duplicates allowed; at most CACHE_LRU_MUT_MAX) before changing the
 * store. Must be followed by cache_lru_mut_end(m) on every path.
 * Cannot fail.
 */
void cache_lru_mut_begin(cache_lru *c, cache_lru_mut *m, const uint64_t *guards, unsigned n);

/*
 * cache_lru_store -- a writer stores a value it committed; guard must be
 * one of m's. Returns 0 (stored or kept by opts.keep), -EAGAIN (another
 * mutation of the stripe overlapped: the entry was removed instead),
 * -E2BIG or -ENOMEM (the entry was removed). Whatever the result, the
 * cache never holds an older value for key afterwards.
 */
int cache_lru_store(cache_lru *c, const cache_lru_mut *m, uint64_t guard, const void *key,
                    size_t klen, const void *val, size_t vlen, size_t charge);

/* cache_lru_mut_end -- end the mutation begun with m. Cannot fail. */
void cache_lru_mut_end(cache_lru *c, cache_lru_mut *m);

/*
 * cache_lru_force -- store key -> val outside the protocol (opts.keep still
 * applies). Only for values that can never become stale (a stat cache's
 * "this inode is gone": inode numbers are never reused). Returns 0,
 * -E2BIG or -ENOMEM.
 */
int cache_lru_force(cache_lru *c, const void *key, size_t klen, const void *val, size_t vlen,
                    size_t charge);

/* A value handed over in pieces: stored one after the other. */
typedef struct {
    const void *p;
    size_t n;
} cache_lru_part;

/*
 * cache_lru_force_parts -- cache_lru_force of the value made of
 * parts[0 .. nparts) one after the other, each copied once, straight into
 * the new entry (a header and the bytes it describes need no buffer of
 * their own first). Returns as cache_lru_force.
 */
int cache_lru_force_parts(cache_lru *c, const void *key, size_t klen, const cache_lru_part *parts,
                          unsigned nparts, size_t charge);

/* cache_lru_remove -- drop key. Returns true if it was cached (counted as
 * an invalidation). Always safe for coherence. */
bool cache_lru_remove(cache_lru *c, const void *key, size_t klen);

/* cache_lru_remove_if -- drop every entry pred selects; O(entries), shard
 * by shard. Returns how many were removed (counted as invalidations). */
size_t cache_lru_remove_if(cache_lru *c, cache_lru_pred_fn pred, void *arg);

/* cache_lru_clear -- drop every entry (counted as invalidations). */
void cache_lru_clear(cache_lru *c);

/*
 * cache_lru_reset -- drop every entry and refuse every fill whose ticket
 * was taken before the call: for a mutation whose outcome or extent is
 * unknown (a connection lost around its commit), after which nothing read
 * earlier may be stored; writers in flight when it ran remove instead
 * of storing (a change made elsewhere, whose invalidation the reset
 * stands for, may have committed after theirs). Cannot fail.
 */
void cache_lru_reset(cache_lru *c);

/* cache_lru_get_stats -- the counters summed over the shards (each shard
 * read under its lock; the sum is not one instant). Cannot fail. */
void cache_lru_get_stats(cache_lru *c, cache_lru_stats *out);

#endif /* PGNFS_CACHE_LRU_H */
