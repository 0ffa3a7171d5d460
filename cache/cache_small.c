/*
 * cache_small.c -- the small-file cache (see cache_small.h for why and for
 * the coherence argument: entries are tagged with their file's ctime and
 * are hits only for exactly that ctime).
 *
 * An entry's key is the inode; its value a header (cache_tagged.h: the
 * ctime tag and the file's size) followed by the bytes; its charge
 * cache_tagged_charge. The keep rule and the sharding are cache_tagged's.
 *
 *   (absent) --put / wrote (contents known)--> tagged t
 *   tagged t --put or wrote with a tag >= t--> tagged t' (keep rule)
 *   tagged t --LRU bound--> (absent)
 *
 * NOTES
 *   Nothing here locks: cache_lru's shard locks cover every access. A
 *   write's merge copies the old contents out, applies the write and
 *   stores the result; a racing store in between can only carry a later
 *   tag, which the keep rule prefers.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cache_small.h"
#include "cache_tagged.h"

#define CACHE_SMALL_STALE CACHE_TAGGED_STALE

typedef cache_tagged_hdr cache_small_hdr;

struct cache_small {
    cache_lru *lru;
    size_t capacity;
    uint32_t max_file;
    atomic_uint_fast64_t hits, misses, stale;
};

/* cache_small_new -- see cache_small.h. */
int cache_small_new(size_t capacity, uint32_t max_file, cache_small **out)
{
    cache_small *cs;
    int rc;

    *out = NULL;
    if (max_file == 0 || capacity < cache_tagged_charge(max_file))
        return -EINVAL;
    cs = calloc(1, sizeof *cs);
    if (!cs)
        return -ENOMEM;
    rc = cache_tagged_lru_new(capacity, max_file, &cs->lru);
    if (rc != 0) {
        free(cs);
        return rc;
    }
    cs->capacity = capacity;
    cs->max_file = max_file;
    atomic_init(&cs->hits, 0);
    atomic_init(&cs->misses, 0);
    atomic_init(&cs->stale, 0);
    *out = cs;
    return 0;
}

/* cache_small_free -- see cache_small.h. */
void cache_small_free(cache_small *cs)
{
    if (!cs)
        return;
    cache_lru_free(cs->lru);
    free(cs);
}

/* cache_small_max_file -- see cache_small.h. */
uint32_t cache_small_max_file(const cache_small *cs)
{
    return cs->max_file;
}

typedef struct {
    int64_t ctime;
    uint64_t from;
    uint32_t n;
    void *dst; /* the slice (get), or a max_file buffer for all of it (take) */
    bool whole;
} cache_small_copy;

/* Under the shard lock: copy the slice (or everything) if the tag
 * matches; the file's size, or CACHE_SMALL_STALE. */
static int cache_small_copy_fn(void *val, size_t len, void *arg)
{
    cache_small_copy *a = arg;
    cache_small_hdr h;
    const char *bytes = (const char *)val + sizeof h;

    if (len < sizeof h)
        return CACHE_SMALL_STALE;
    memcpy(&h, val, sizeof h);
    if (h.ctime != a->ctime || sizeof h + h.len > len)
        return CACHE_SMALL_STALE;
    if (a->whole)
        memcpy(a->dst, bytes, h.len);
    else if (a->from < h.len)
        memcpy(a->dst, bytes + a->from, h.len - a->from < a->n ? h.len - a->from : a->n);
    return (int)h.len;
}

/* cache_small_get and cache_small_try: a miss counted or not. */
static long cache_small_look(cache_small *cs, uint64_t ino, int64_t ctime, uint64_t from,
                             uint32_t n, void *dst, bool count_miss)
{
    cache_small_copy a = {ctime, from, n, dst, false};
    int rc = cache_lru_visit(cs->lru, &ino, sizeof ino, cache_small_copy_fn, &a);

    if (rc >= 0 && rc != CACHE_SMALL_STALE) {
        atomic_fetch_add(&cs->hits, 1);
        return rc;
    }
    if (count_miss) {
        atomic_fetch_add(&cs->misses, 1);
        if (rc == CACHE_SMALL_STALE)
            atomic_fetch_add(&cs->stale, 1);
    }
    return -ENOENT;
}

/* cache_small_get -- see cache_small.h. */
long cache_small_get(cache_small *cs, uint64_t ino, int64_t ctime, uint64_t from, uint32_t n,
                     void *dst)
{
    return cache_small_look(cs, ino, ctime, from, n, dst, true);
}

/* cache_small_try -- see cache_small.h. */
long cache_small_try(cache_small *cs, uint64_t ino, int64_t ctime, uint64_t from, uint32_t n,
                     void *dst)
{
    return cache_small_look(cs, ino, ctime, from, n, dst, false);
}

/* cache_small_put -- see cache_small.h. */
int cache_small_put(cache_small *cs, uint64_t ino, int64_t ctime, const void *data, uint32_t len)
{
    cache_small_hdr h = {ctime, len, 0};
    cache_lru_part parts[2] = {{&h, sizeof h}, {data, len}};

    if (len > cs->max_file)
        return -E2BIG;
    return cache_lru_force_parts(cs->lru, &ino, sizeof ino, parts, 2, cache_tagged_charge(len));
}

/* cache_small_wrote -- see cache_small.h. */
int cache_small_wrote(cache_small *cs, uint64_t ino, int64_t pre, uint64_t pre_size, int64_t post,
                      uint64_t post_size, const cache_small_piece *pc, size_t np)
{
    uint64_t end = pre_size;
    unsigned char *buf;
    int rc;

    for (size_t i = 0; i < np; i++)
        if (pc[i].off + pc[i].n > end)
            end = pc[i].off + pc[i].n;
    if (post_size > cs->max_file || post_size != end || post <= pre)
        return 0;
    if (pre_size == 0 && np == 1 && pc[0].off == 0)
        return cache_small_put(cs, ino, post, pc[0].data, pc[0].n);
    buf = malloc(post_size ? post_size : 1);
    if (!buf)
        return -ENOMEM;
    if (pre_size > 0) {
        cache_small_copy a = {pre, 0, 0, buf, true};

        rc = cache_lru_visit(cs->lru, &ino, sizeof ino, cache_small_copy_fn, &a);
        if (rc < 0 || rc == CACHE_SMALL_STALE || (uint64_t)rc != pre_size) {
            /* Its contents before the write are not known here. */
            free(buf);
            return 0;
        }
    }
    /* Never written bytes below the end read as zeros. */
    memset(buf + pre_size, 0, post_size - pre_size);
    for (size_t i = 0; i < np; i++)
        memcpy(buf + pc[i].off, pc[i].data, pc[i].n);
    rc = cache_small_put(cs, ino, post, buf, (uint32_t)post_size);
    free(buf);
    return rc;
}

/* cache_small_get_stats -- see cache_small.h. */
void cache_small_get_stats(cache_small *cs, cache_small_stats *out)
{
    cache_lru_tagged_stats(cs->lru, atomic_load(&cs->hits), atomic_load(&cs->misses),
                           atomic_load(&cs->stale), cs->capacity, out);
}
