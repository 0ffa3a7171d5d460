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
 *   Key: the inode number (8 bytes). Value: cache_stat_val, copied in and
 *   out. Charge 1 per entry: the bound is in entries. 64 shards, so
 *   threads on different inodes rarely meet on a lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache_stat.h"

#define CACHE_STAT_SHARDS 64

struct cache_stat {
    cache_lru *lru;
};

typedef struct {
    bool gone;
    dbfs_attr attr; /* gone: only ino and gen are meaningful */
} cache_stat_val;

/* The keep rule: gone is final; otherwise never go back in change. */
static bool cache_stat_keep(const void *old_val, size_t old_len, const void *new_val,
                            size_t new_len)
{
    cache_stat_val o, n;

    if (old_len != sizeof o || new_len != sizeof n)
        return false;
    memcpy(&o, old_val, sizeof o);
    memcpy(&n, new_val, sizeof n);
    if (o.gone)
        return o.attr.gen == n.attr.gen;
    return !n.gone && o.attr.gen == n.attr.gen && o.attr.change > n.attr.change;
}

/*
 * cache_stat_new -- see cache_stat.h.
 */
int cache_stat_new(size_t entries, cache_stat **out)
{
    cache_lru_opts o = {.capacity = entries, .shards = CACHE_STAT_SHARDS, .keep = cache_stat_keep};
    cache_stat *s;
    int rc;

    *out = NULL;
    if (entries == 0)
        return -EINVAL;
    if (entries < CACHE_STAT_SHARDS)
        o.shards = 1;
    s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
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

/*
 * cache_stat_get -- see cache_stat.h.
 */
int cache_stat_get(cache_stat *s, uint64_t ino, uint32_t gen, dbfs_attr *out)
{
    cache_stat_val v;
    long n = cache_lru_get(s->lru, &ino, sizeof ino, &v, sizeof v);

    if (n != (long)sizeof v)
        return -ENOENT;
    if (v.attr.gen != gen)
        return v.gone ? -ENOENT : -ESTALE; /* gone says nothing of other generations */
    if (v.gone)
        return -ESTALE;
    if (out)
        *out = v.attr;
    return 0;
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
int cache_stat_fill(cache_stat *s, cache_lru_ticket t, const dbfs_attr *a)
{
    cache_stat_val v;

    memset(&v, 0, sizeof v);
    v.attr = *a;
    return cache_lru_fill(s->lru, t, a->ino, &a->ino, sizeof a->ino, &v, sizeof v, 1);
}

/*
 * cache_stat_fill_gone -- see cache_stat.h. Gone never becomes stale, so
 * the ticket is not needed; the parameter keeps the reader's shape.
 */
int cache_stat_fill_gone(cache_stat *s, cache_lru_ticket t, uint64_t ino, uint32_t gen)
{
    cache_stat_val v;

    (void)t;
    memset(&v, 0, sizeof v);
    v.gone = true;
    v.attr.ino = ino;
    v.attr.gen = gen;
    return cache_lru_force(s->lru, &ino, sizeof ino, &v, sizeof v, 1);
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
int cache_stat_store(cache_stat *s, const cache_lru_mut *m, const dbfs_attr *a)
{
    cache_stat_val v;

    memset(&v, 0, sizeof v);
    v.attr = *a;
    return cache_lru_store(s->lru, m, a->ino, &a->ino, sizeof a->ino, &v, sizeof v, 1);
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
        memset(&v, 0, sizeof v);
        v.gone = true;
        v.attr.ino = ino;
        v.attr.gen = gen;
        if (cache_lru_force(s->lru, &ino, sizeof ino, &v, sizeof v, 1) != 0)
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
