/*
 * cache_stat.c -- the stat cache: inode -> attributes or "gone" over
 * cache_lru (contract in cache_stat.h; the protocol in cache_lru.h).
 *
 *   Entry states of one inode:
 *
 *     (none) --fill/store--> PRESENT(change c) --fill/store(c' >= c)--> PRESENT(c')
 *     (none), PRESENT --fill_gone / victim(gone)--> GONE
 *     PRESENT --victim(not gone), forget, overlapped store--> (none)
 *     any --eviction, reset--> (none)
 *     GONE --anything but eviction/reset--> GONE     (keep rule: gone is final)
 *
 * Invariants: a PRESENT entry's attributes were, when stored, the latest
 * committed ones (cache_lru's protocol); a GONE entry's (ino, gen) does
 * not exist and never will again.
 *
 * NOTES
 *   Key: the inode number (8 bytes). Value: cache_stat_val, its header and
 *   the caller's val_size bytes, copied in and out. Charge 1 per entry: the
 *   bound is in entries. 64 shards, so threads on different inodes rarely
 *   meet on a lock.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cache_stat.h"

#define CACHE_STAT_SHARDS 64

struct cache_stat {
    cache_lru *lru;
    size_t val_size; /* the caller's bytes per value */
};

/* An entry's value: the header, then the caller's bytes (gone: none). */
typedef struct {
    bool gone;
    uint32_t gen;
    uint64_t change;
    unsigned char val[CACHE_STAT_VAL_MAX];
} cache_stat_val;

#define CACHE_STAT_HDR offsetof(cache_stat_val, val)

/* The keep rule: gone is final; otherwise never go back in change. */
static bool cache_stat_keep(const void *old_val, size_t old_len, const void *new_val,
                            size_t new_len)
{
    cache_stat_val o, n;

    if (old_len < CACHE_STAT_HDR || new_len < CACHE_STAT_HDR)
        return false;
    memcpy(&o, old_val, CACHE_STAT_HDR);
    memcpy(&n, new_val, CACHE_STAT_HDR);
    if (o.gone)
        return o.gen == n.gen;
    return !n.gone && o.gen == n.gen && o.change > n.change;
}

/* The value of a present entry for id (the caller's bytes copied in);
 * returns its length. */
static size_t cache_stat_present(const cache_stat *s, cache_stat_id id, const void *val,
                                 cache_stat_val *v)
{
    memset(v, 0, CACHE_STAT_HDR);
    v->gen = id.gen;
    v->change = id.change;
    memcpy(v->val, val, s->val_size);
    return CACHE_STAT_HDR + s->val_size;
}

/* The value of a gone entry of generation gen; returns its length. */
static size_t cache_stat_gone(uint32_t gen, cache_stat_val *v)
{
    memset(v, 0, CACHE_STAT_HDR);
    v->gone = true;
    v->gen = gen;
    return CACHE_STAT_HDR;
}

/*
 * cache_stat_new -- see cache_stat.h.
 */
int cache_stat_new(size_t entries, size_t val_size, cache_stat **out)
{
    cache_lru_opts o = {.capacity = entries, .shards = CACHE_STAT_SHARDS, .keep = cache_stat_keep};
    cache_stat *s;
    int rc;

    *out = NULL;
    if (entries == 0 || val_size == 0 || val_size > CACHE_STAT_VAL_MAX)
        return -EINVAL;
    if (entries < CACHE_STAT_SHARDS)
        o.shards = 1;
    s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->val_size = val_size;
    rc = cache_lru_new(&o, &s->lru);
    if (rc != 0) {
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

/*
 * cache_stat_free -- see cache_stat.h.
 */
void cache_stat_free(cache_stat *s)
{
    if (!s)
        return;
    cache_lru_free(s->lru);
    free(s);
}

/* cache_stat_get and cache_stat_find: the same look-up, counted or not. */
static int cache_stat_value(cache_stat *s, uint64_t ino, uint32_t gen, void *out, bool count)
{
    cache_stat_val v;
    long n = count ? cache_lru_get(s->lru, &ino, sizeof ino, &v, sizeof v)
                   : cache_lru_find(s->lru, &ino, sizeof ino, &v, sizeof v);

    if (n < (long)CACHE_STAT_HDR)
        return -ENOENT;
    if (v.gen != gen)
        return v.gone ? -ENOENT : -ESTALE; /* gone says nothing of other generations */
    if (v.gone)
        return -ESTALE;
    if (n != (long)(CACHE_STAT_HDR + s->val_size))
        return -ENOENT;
    if (out)
        memcpy(out, v.val, s->val_size);
    return 0;
}

/*
 * cache_stat_get -- see cache_stat.h.
 */
int cache_stat_get(cache_stat *s, uint64_t ino, uint32_t gen, void *out)
{
    return cache_stat_value(s, ino, gen, out, true);
}

/*
 * cache_stat_find -- see cache_stat.h.
 */
int cache_stat_find(cache_stat *s, uint64_t ino, uint32_t gen, void *out)
{
    return cache_stat_value(s, ino, gen, out, false);
}

/*
 * cache_stat_hit -- see cache_stat.h.
 */
void cache_stat_hit(cache_stat *s, uint64_t ino)
{
    cache_lru_hit(s->lru, &ino, sizeof ino);
}

/*
 * cache_stat_ticket -- see cache_stat.h.
 */
cache_lru_ticket cache_stat_ticket(cache_stat *s)
{
    return cache_lru_fill_ticket(s->lru);
}

/*
 * cache_stat_fill -- see cache_stat.h.
 */
int cache_stat_fill(cache_stat *s, cache_lru_ticket t, cache_stat_id id, const void *val)
{
    cache_stat_val v;
    size_t len = cache_stat_present(s, id, val, &v);

    return cache_lru_fill(s->lru, t, id.ino, &id.ino, sizeof id.ino, &v, len, 1);
}

/*
 * cache_stat_fill_gone -- see cache_stat.h. Gone never becomes stale, so
 * the ticket is not needed; the parameter keeps the reader's shape.
 */
int cache_stat_fill_gone(cache_stat *s, cache_lru_ticket t, uint64_t ino, uint32_t gen)
{
    cache_stat_val v;
    size_t len = cache_stat_gone(gen, &v);

    (void)t;
    return cache_lru_force(s->lru, &ino, sizeof ino, &v, len, 1);
}

/*
 * cache_stat_mut_begin -- see cache_stat.h.
 */
void cache_stat_mut_begin(cache_stat *s, cache_lru_mut *m, const uint64_t *inos, unsigned n)
{
    cache_lru_mut_begin(s->lru, m, inos, n);
}

/*
 * cache_stat_store -- see cache_stat.h.
 */
int cache_stat_store(cache_stat *s, const cache_lru_mut *m, cache_stat_id id, const void *val)
{
    cache_stat_val v;
    size_t len = cache_stat_present(s, id, val, &v);

    return cache_lru_store(s->lru, m, id.ino, &id.ino, sizeof id.ino, &v, len, 1);
}

/*
 * cache_stat_mut_end -- see cache_stat.h.
 */
void cache_stat_mut_end(cache_stat *s, cache_lru_mut *m)
{
    cache_lru_mut_end(s->lru, m);
}

/*
 * cache_stat_victim -- see cache_stat.h.
 */
void cache_stat_victim(cache_stat *s, uint64_t ino, uint32_t gen, bool gone)
{
    cache_lru_mut m;

    cache_lru_mut_begin(s->lru, &m, &ino, 1);
    if (gone) {
        cache_stat_val v;
        size_t len = cache_stat_gone(gen, &v);

        if (cache_lru_force(s->lru, &ino, sizeof ino, &v, len, 1) != 0)
            cache_lru_remove(s->lru, &ino, sizeof ino);
    } else {
        cache_lru_remove(s->lru, &ino, sizeof ino);
    }
    cache_lru_mut_end(s->lru, &m);
}

/*
 * cache_stat_forget -- see cache_stat.h.
 */
void cache_stat_forget(cache_stat *s, uint64_t ino)
{
    cache_lru_remove(s->lru, &ino, sizeof ino);
}

/*
 * cache_stat_reset -- see cache_stat.h.
 */
void cache_stat_reset(cache_stat *s)
{
    cache_lru_reset(s->lru);
}

/*
 * cache_stat_stats -- see cache_stat.h.
 */
void cache_stat_stats(cache_stat *s, cache_lru_stats *out)
{
    cache_lru_get_stats(s->lru, out);
}
