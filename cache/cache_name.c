/*
 * cache_name.c -- the naming cache: (directory, name) -> (inode,
 * generation) or "absent", over cache_lru (contract in cache_name.h).
 *
 * Why it stays exact (the argument the tests check):
 *
 *   A name has no version of its own to order updates by: naming rows carry
 *   no counter, and the directory's change counter orders the directory's
 *   mutations but says nothing about one name (a cached name is still valid
 *   after a create of another name moved the counter). Storing version
 *   numbers in entries would not be enough anyway: an entry can be evicted
 *   between a writer's store and a late reader's fill, and then the stale
 *   fill finds nothing to compare with.
 *
 *   So the order comes from the cache_lru protocol with the directory as the
 *   guard of all its names:
 *     1. Every mutation of names in directory D (create, mkdir, symlink,
 *        mknod, remove, rmdir, link, rename: both directories) calls
 *        cache_name_mut_begin(D) before its transaction and
 *        cache_name_mut_end(D) after its cache updates. D is always known
 *        before the transaction (it is in the request).
 *     2. A reader (LOOKUP, READDIRPLUS) takes a ticket before its query and
 *        fills after it; the fill is refused if a mutation of D's stripe is
 *        in flight or ended after the ticket. So a fill never stores a name
 *        read before a commit that changed D: either that commit's
 *        mutation ended after the ticket (refused), or it was still in
 *        flight (refused), or it ended before the ticket, and then the
 *        query (which began after the ticket) saw it.
 *     3. A writer stores its result only if no other mutation of D's stripe
 *        overlapped it; then its commit is the latest for D, because all
 *        mutations of D's names lock D's fileatt row (the SQL functions
 *        lock the directory first), so they commit one after another, and
 *        one that begins later commits later. Overlapping writers remove
 *        the names they touched instead: the cache holds the latest value
 *        or nothing.
 *   Stripe collisions between directories cost refused fills, never a
 *   wrong answer. tests/unit/test_cache_name.c hammers this with threads
 *   against a model directory; tests/proto/test_coherence.c checks it
 *   through the server with two clients.
 *
 *   Negative entries are as exact as positive ones: a create is a
 *   mutation of D like any other.
 *
 * NOTES
 *   Key: 8 bytes of directory inode, then the name's bytes (no NUL).
 *   Value: cache_name_val. Charge 1 per entry (the bound is in entries; a
 *   name is at most CACHE_NAME_MAX bytes, so the memory per entry is
 *   bounded too).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache_name.h"

#define CACHE_NAME_SHARDS 64

struct cache_name {
    cache_lru *lru;
};

typedef struct {
    bool found;
    uint32_t gen;
    uint64_t ino;
} cache_name_val;

/* Build the key of (dir, name) into buf (8 + CACHE_NAME_MAX bytes); returns
 * its length, or 0 for a name the cache does not hold. */
static size_t cache_name_key(unsigned char *buf, uint64_t dir, const char *name, size_t len)
{
    if (len == 0 || len > CACHE_NAME_MAX || (len == 1 && name[0] == '.') ||
        (len == 2 && name[0] == '.' && name[1] == '.'))
        return 0;
    memcpy(buf, &dir, sizeof dir);
    memcpy(buf + sizeof dir, name, len);
    return sizeof dir + len;
}

/*
 * cache_name_new -- see cache_name.h.
 */
int cache_name_new(size_t entries, cache_name **out)
{
    cache_lru_opts o = {.capacity = entries, .shards = CACHE_NAME_SHARDS};
    cache_name *n;
    int rc;

    *out = NULL;
    if (entries == 0)
        return -EINVAL;
    if (entries < CACHE_NAME_SHARDS)
        o.shards = 1;
    n = calloc(1, sizeof *n);
    if (!n)
        return -ENOMEM;
    rc = cache_lru_new(&o, &n->lru);
    if (rc != 0) {
        free(n);
        return rc;
    }
    *out = n;
    return 0;
}

/*
 * cache_name_free -- see cache_name.h.
 */
void cache_name_free(cache_name *n)
{
    if (!n)
        return;
    cache_lru_free(n->lru);
    free(n);
}

/* cache_name_get and cache_name_find: the same look-up, counted or not. */
static cache_name_result cache_name_value(cache_name *n, uint64_t dir, const char *name, size_t len,
                                          uint64_t *ino, uint32_t *gen, bool count)
{
    unsigned char key[sizeof(uint64_t) + CACHE_NAME_MAX];
    size_t klen = cache_name_key(key, dir, name, len);
    cache_name_val v;
    long n_got;

    if (klen == 0)
        return CACHE_NAME_MISS;
    n_got = count ? cache_lru_get(n->lru, key, klen, &v, sizeof v)
                  : cache_lru_find(n->lru, key, klen, &v, sizeof v);
    if (n_got != (long)sizeof v)
        return CACHE_NAME_MISS;
    if (!v.found)
        return CACHE_NAME_ABSENT;
    if (ino)
        *ino = v.ino;
    if (gen)
        *gen = v.gen;
    return CACHE_NAME_FOUND;
}

/*
 * cache_name_get -- see cache_name.h.
 */
cache_name_result cache_name_get(cache_name *n, uint64_t dir, const char *name, size_t len,
                                 uint64_t *ino, uint32_t *gen)
{
    return cache_name_value(n, dir, name, len, ino, gen, true);
}

/*
 * cache_name_find -- see cache_name.h.
 */
cache_name_result cache_name_find(cache_name *n, uint64_t dir, const char *name, size_t len,
                                  uint64_t *ino, uint32_t *gen)
{
    return cache_name_value(n, dir, name, len, ino, gen, false);
}

/*
 * cache_name_hit -- see cache_name.h.
 */
void cache_name_hit(cache_name *n, uint64_t dir, const char *name, size_t len)
{
    unsigned char key[sizeof(uint64_t) + CACHE_NAME_MAX];
    size_t klen = cache_name_key(key, dir, name, len);

    if (klen != 0)
        cache_lru_hit(n->lru, key, klen);
}

/*
 * cache_name_ticket -- see cache_name.h.
 */
cache_lru_ticket cache_name_ticket(cache_name *n)
{
    return cache_lru_fill_ticket(n->lru);
}

static void cache_name_val_set(cache_name_val *v, bool found, uint64_t ino, uint32_t gen)
{
    memset(v, 0, sizeof *v);
    v->found = found;
    if (found) {
        v->ino = ino;
        v->gen = gen;
    }
}

/*
 * cache_name_fill -- see cache_name.h.
 */
int cache_name_fill(cache_name *n, cache_lru_ticket t, uint64_t dir, const char *name, size_t len,
                    bool found, uint64_t ino, uint32_t gen)
{
    unsigned char key[sizeof(uint64_t) + CACHE_NAME_MAX];
    size_t klen = cache_name_key(key, dir, name, len);
    cache_name_val v;

    if (klen == 0)
        return -EINVAL;
    cache_name_val_set(&v, found, ino, gen);
    return cache_lru_fill(n->lru, t, dir, key, klen, &v, sizeof v, 1);
}

/*
 * cache_name_mut_begin -- see cache_name.h.
 */
void cache_name_mut_begin(cache_name *n, cache_lru_mut *m, const uint64_t *dirs, unsigned ndirs)
{
    cache_lru_mut_begin(n->lru, m, dirs, ndirs);
}

/*
 * cache_name_store -- see cache_name.h. A name that is not cached is
 * -EINVAL and changes nothing.
 */
int cache_name_store(cache_name *n, const cache_lru_mut *m, uint64_t dir, const char *name,
                     size_t len, bool found, uint64_t ino, uint32_t gen)
{
    unsigned char key[sizeof(uint64_t) + CACHE_NAME_MAX];
    size_t klen = cache_name_key(key, dir, name, len);
    cache_name_val v;

    if (klen == 0)
        return -EINVAL;
    cache_name_val_set(&v, found, ino, gen);
    return cache_lru_store(n->lru, m, dir, key, klen, &v, sizeof v, 1);
}

/*
 * cache_name_mut_end -- see cache_name.h.
 */
void cache_name_mut_end(cache_name *n, cache_lru_mut *m)
{
    cache_lru_mut_end(n->lru, m);
}

/*
 * cache_name_forget -- see cache_name.h.
 */
void cache_name_forget(cache_name *n, uint64_t dir, const char *name, size_t len)
{
    unsigned char key[sizeof(uint64_t) + CACHE_NAME_MAX];
    size_t klen = cache_name_key(key, dir, name, len);

    if (klen != 0)
        cache_lru_remove(n->lru, key, klen);
}

/*
 * cache_name_reset -- see cache_name.h.
 */
void cache_name_reset(cache_name *n)
{
    cache_lru_reset(n->lru);
}

/*
 * cache_name_stats -- see cache_name.h.
 */
void cache_name_stats(cache_name *n, cache_lru_stats *out)
{
    cache_lru_get_stats(n->lru, out);
}
