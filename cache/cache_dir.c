/*
 * cache_dir.c -- the listing cache (contract and why it is exact in
 * cache_dir.h).
 *
 * NOTES
 *   Key: the directory's inode (8 bytes). Value: a cache_dir_hdr, then n
 *   cache_dir_rec in cookie order, then the names back to back; record i's
 *   name runs from its off to record i+1's (the last to the end). A "too
 *   large" listing is a header with large set and no records. Charge: the
 *   value's size plus a fixed overhead per listing.
 *
 *   The LRU counts a hit whenever it finds the directory's listing; one of
 *   another counter is a miss here, so those are counted apart (stale) and
 *   moved from hits to misses in cache_dir_stats.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cache_dir.h"

#define CACHE_DIR_SHARDS   4
#define CACHE_DIR_OVERHEAD 128 /* per listing: the LRU's entry and key */
#define CACHE_DIR_MAX_ENTS 65536

struct cache_dir {
    cache_lru *lru;
    size_t max_entries;
    atomic_uint_fast64_t stale; /* found, but of another counter or generation */
};

typedef struct {
    uint64_t change;
    uint64_t parent_ino;
    uint32_t gen, parent_gen;
    uint32_t n;
    uint32_t large; /* 1: too large to hold, n is 0 */
} cache_dir_hdr;

typedef struct {
    uint64_t cookie;
    uint64_t ino;
    uint32_t gen;
    uint32_t off; /* of the name, from the start of the names */
} cache_dir_rec;

/* Record i of a value (values need not be aligned: copied out). */
static cache_dir_rec cache_dir_rec_at(const unsigned char *recs, size_t i)
{
    cache_dir_rec r;

    memcpy(&r, recs + i * sizeof r, sizeof r);
    return r;
}

/* Keep the listing of the larger counter (racing readers). */
static bool cache_dir_keep(const void *old_val, size_t old_len, const void *new_val, size_t new_len)
{
    cache_dir_hdr o, n;

    (void)old_len;
    (void)new_len;
    memcpy(&o, old_val, sizeof o);
    memcpy(&n, new_val, sizeof n);
    return o.gen == n.gen && o.change > n.change;
}

/*
 * cache_dir_new -- see cache_dir.h. A listing may fill a shard.
 */
int cache_dir_new(size_t bytes, cache_dir **out)
{
    cache_lru_opts o = {.capacity = bytes, .shards = CACHE_DIR_SHARDS, .keep = cache_dir_keep};
    size_t per_shard = bytes / CACHE_DIR_SHARDS;
    cache_dir *d;
    int rc;

    *out = NULL;
    if (bytes < 4096)
        return -EINVAL;
    d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    rc = cache_lru_new(&o, &d->lru);
    if (rc != 0) {
        free(d);
        return rc;
    }
    /* As many entries as fit with names of up to 16 bytes (longer names
     * make a listing too large by its bytes, cache_dir_put). */
    d->max_entries =
        (per_shard - sizeof(cache_dir_hdr) - CACHE_DIR_OVERHEAD) / (sizeof(cache_dir_rec) + 16);
    if (d->max_entries > CACHE_DIR_MAX_ENTS)
        d->max_entries = CACHE_DIR_MAX_ENTS;
    atomic_init(&d->stale, 0);
    *out = d;
    return 0;
}

/*
 * cache_dir_free -- see cache_dir.h.
 */
void cache_dir_free(cache_dir *d)
{
    if (!d)
        return;
    cache_lru_free(d->lru);
    free(d);
}

/*
 * cache_dir_max_entries -- see cache_dir.h.
 */
size_t cache_dir_max_entries(const cache_dir *d)
{
    return d->max_entries;
}

/* Outside the fill protocol: the counter makes the value exact. */
static int cache_dir_store(cache_dir *d, uint64_t ino, const void *val, size_t len)
{
    return cache_lru_force(d->lru, &ino, sizeof ino, val, len, len + CACHE_DIR_OVERHEAD);
}

/*
 * cache_dir_put -- see cache_dir.h.
 */
int cache_dir_put(cache_dir *d, cache_dir_key k, uint64_t parent_ino, uint32_t parent_gen,
                  const cache_dir_ent *ents, size_t n)
{
    cache_dir_hdr h = {.change = k.change,
                       .parent_ino = parent_ino,
                       .gen = k.gen,
                       .parent_gen = parent_gen,
                       .n = (uint32_t)n};
    size_t names = 0, len;
    unsigned char *v, *p;
    int rc;

    if (n > d->max_entries) {
        cache_dir_put_large(d, k);
        return -E2BIG;
    }
    for (size_t i = 0; i < n; i++)
        names += ents[i].len;
    len = sizeof h + n * sizeof(cache_dir_rec) + names;
    v = malloc(len);
    if (!v)
        return -ENOMEM;
    memcpy(v, &h, sizeof h);
    p = v + sizeof h + n * sizeof(cache_dir_rec);
    names = 0;
    for (size_t i = 0; i < n; i++) {
        cache_dir_rec r = {.cookie = ents[i].cookie,
                           .ino = ents[i].ino,
                           .gen = ents[i].gen,
                           .off = (uint32_t)names};

        memcpy(v + sizeof h + i * sizeof r, &r, sizeof r);
        memcpy(p + names, ents[i].name, ents[i].len);
        names += ents[i].len;
    }
    rc = cache_dir_store(d, k.ino, v, len);
    free(v);
    if (rc == -E2BIG) /* long names: more bytes than a shard holds */
        cache_dir_put_large(d, k);
    return rc;
}

/*
 * cache_dir_put_large -- see cache_dir.h.
 */
void cache_dir_put_large(cache_dir *d, cache_dir_key k)
{
    cache_dir_hdr h = {.change = k.change, .gen = k.gen, .large = 1};

    (void)cache_dir_store(d, k.ino, &h, sizeof h);
}

typedef struct {
    cache_dir_key k;
    uint64_t cookie;
    uint32_t max;
    cache_dir_page *out;
} cache_dir_slice_arg;

/* Under the shard lock: copy the page out (result 0), or say why not. */
static int cache_dir_slice_fn(void *val, size_t len, void *arg)
{
    cache_dir_slice_arg *a = arg;
    const unsigned char *v = val;
    const unsigned char *recs = v + sizeof(cache_dir_hdr);
    const char *names;
    cache_dir_hdr h;
    size_t lo, hi, take, nbytes, names_len;
    char *block;

    memcpy(&h, v, sizeof h);
    if (h.gen != a->k.gen || h.change != a->k.change)
        return 1;
    if (h.large)
        return 2;
    names = (const char *)(recs + (size_t)h.n * sizeof(cache_dir_rec));
    names_len = len - (size_t)(names - (const char *)v);
    /* The first record with a cookie after a->cookie. */
    lo = 0;
    hi = h.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cache_dir_rec_at(recs, mid).cookie <= a->cookie)
            lo = mid + 1;
        else
            hi = mid;
    }
    take = h.n - lo < a->max ? h.n - lo : a->max;
    nbytes = (lo + take < h.n ? cache_dir_rec_at(recs, lo + take).off : names_len) -
             (take ? cache_dir_rec_at(recs, lo).off : 0);
    a->out->ents = malloc(take * sizeof(cache_dir_ent) + nbytes + take + 1);
    if (!a->out->ents)
        return 3;
    block = (char *)(a->out->ents + take);
    for (size_t i = 0; i < take; i++) {
        cache_dir_rec r = cache_dir_rec_at(recs, lo + i);
        size_t next = lo + i + 1 < h.n ? cache_dir_rec_at(recs, lo + i + 1).off : names_len;
        size_t nl = next - r.off;

        memcpy(block, names + r.off, nl);
        block[nl] = 0;
        a->out->ents[i] = (cache_dir_ent){
            .cookie = r.cookie, .ino = r.ino, .gen = r.gen, .len = (uint32_t)nl, .name = block};
        block += nl + 1;
    }
    a->out->n = take;
    a->out->more = lo + take < h.n;
    a->out->parent_ino = h.parent_ino;
    a->out->parent_gen = h.parent_gen;
    return 0;
}

/*
 * cache_dir_slice -- see cache_dir.h.
 */
int cache_dir_slice(cache_dir *d, cache_dir_key k, uint64_t cookie, uint32_t max,
                    cache_dir_page *out)
{
    cache_dir_slice_arg a = {.k = k, .cookie = cookie, .max = max, .out = out};
    int rc;

    memset(out, 0, sizeof *out);
    rc = cache_lru_visit(d->lru, &k.ino, sizeof k.ino, cache_dir_slice_fn, &a);
    switch (rc) {
    case 0:
    case -ENOENT:
        return rc;
    case 1:
        atomic_fetch_add(&d->stale, 1);
        return -ENOENT;
    case 2:
        atomic_fetch_add(&d->stale, 1);
        return -EFBIG;
    default:
        return -ENOMEM;
    }
}

/*
 * cache_dir_page_free -- see cache_dir.h.
 */
void cache_dir_page_free(cache_dir_page *p)
{
    free(p->ents);
    memset(p, 0, sizeof *p);
}

/*
 * cache_dir_reset -- see cache_dir.h.
 */
void cache_dir_reset(cache_dir *d)
{
    cache_lru_clear(d->lru);
}

/*
 * cache_dir_stats -- see cache_dir.h.
 */
void cache_dir_stats(cache_dir *d, cache_lru_stats *out)
{
    uint64_t stale = atomic_load(&d->stale);

    cache_lru_get_stats(d->lru, out);
    if (stale > out->hits)
        stale = out->hits;
    out->hits -= stale;
    out->misses += stale;
}
