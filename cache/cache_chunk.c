/*
 * cache_chunk.c -- the chunk buffer cache (see cache_chunk.h for the
 * coherence argument: entries are tagged with their file's ctime and are
 * hits only for exactly that ctime).
 *
 * An entry's key is (inode, chunk); its value a header (cache_tagged.h:
 * the ctime tag and the chunk's length) followed by the bytes. Its charge,
 * cache_tagged_charge, counts the cache_lru bookkeeping an entry costs, so
 * the configured size bounds the memory really held. The keep rule and
 * the sharding are cache_tagged's, shared with the small-file cache.
 *
 * State of one key:
 *
 *   (absent) --put / wrote(whole) / wrote(merge at pre)--> tagged t
 *   tagged t --put or wrote with a tag >= t--> tagged t' (keep rule:
 *                                               a smaller tag is dropped)
 *   tagged t --LRU bound--> (absent)
 *   tagged t --found current at t' by the history (cache_hist.h)--> tagged t'
 *
 * NOTES
 *   Nothing here locks: cache_lru's shard locks cover every access. The
 *   merge of a partial write copies the old entry out (one chunk) and
 *   stores the merged value; a racing store in between can only carry a
 *   later tag, which the keep rule then prefers.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cache_chunk.h"
#include "cache_hist.h"
#include "cache_tagged.h"

#define CACHE_CHUNK_STALE CACHE_TAGGED_STALE

typedef struct {
    uint64_t ino, chunk;
} cache_chunk_key;

typedef cache_tagged_hdr cache_chunk_hdr;

struct cache_chunk {
    cache_lru *lru;
    cache_hist *hist; /* which chunks changed since when */
    size_t capacity;
    atomic_uint_fast64_t hits, misses, stale;
};

/* cache_chunk_new -- see cache_chunk.h. */
int cache_chunk_new(size_t capacity, uint32_t max_chunk, cache_chunk **out)
{
    cache_chunk *cc;
    int rc;

    *out = NULL;
    if (capacity < cache_tagged_charge(max_chunk))
        return -EINVAL;
    cc = calloc(1, sizeof *cc);
    if (!cc)
        return -ENOMEM;
    cc->hist = cache_hist_new();
    if (!cc->hist) {
        free(cc);
        return -ENOMEM;
    }
    rc = cache_tagged_lru_new(capacity, max_chunk, &cc->lru);
    if (rc != 0) {
        cache_hist_free(cc->hist);
        free(cc);
        return rc;
    }
    cc->capacity = capacity;
    atomic_init(&cc->hits, 0);
    atomic_init(&cc->misses, 0);
    atomic_init(&cc->stale, 0);
    *out = cc;
    return 0;
}

/* cache_chunk_free -- see cache_chunk.h. */
void cache_chunk_free(cache_chunk *cc)
{
    if (!cc)
        return;
    cache_lru_free(cc->lru);
    cache_hist_free(cc->hist);
    free(cc);
}

/* cache_chunk_get -- see cache_chunk.h. */
long cache_chunk_get(cache_chunk *cc, uint64_t ino, uint64_t chunk, int64_t ctime, uint32_t from,
                     uint32_t n, void *dst)
{
    int64_t tag;
    long len = cache_chunk_peek(cc, ino, chunk, from, n, dst, &tag);

    if (len >= 0 && cache_chunk_current(cc, ino, chunk, tag, ctime)) {
        atomic_fetch_add(&cc->hits, 1);
        return len;
    }
    atomic_fetch_add(&cc->misses, 1);
    if (len >= 0)
        atomic_fetch_add(&cc->stale, 1);
    return -ENOENT;
}

typedef struct {
    int64_t from, to;
} cache_chunk_retag_arg;

/* Under the shard lock: the entry tagged `from` is the chunk's at `to`. */
static int cache_chunk_retag_fn(void *val, size_t len, void *arg)
{
    const cache_chunk_retag_arg *a = arg;
    cache_chunk_hdr h;

    if (len < sizeof h)
        return 0;
    memcpy(&h, val, sizeof h);
    if (h.ctime == a->from) {
        h.ctime = a->to;
        memcpy(val, &h, sizeof h);
    }
    return 0;
}

/* cache_chunk_current -- see cache_chunk.h. */
bool cache_chunk_current(cache_chunk *cc, uint64_t ino, uint64_t chunk, int64_t tag, int64_t now)
{
    cache_chunk_key k = {ino, chunk};
    cache_chunk_retag_arg a = {tag, now};

    if (tag == now)
        return true;
    if (!cache_hist_current(cc->hist, ino, chunk, tag, now))
        return false;
    /* Found current through the history: say so in the entry itself, so
     * that the next lookup needs no history. */
    cache_lru_visit(cc->lru, &k, sizeof k, cache_chunk_retag_fn, &a);
    return true;
}

/* cache_chunk_moved -- see cache_chunk.h. */
void cache_chunk_moved(cache_chunk *cc, uint64_t ino, int64_t pre, int64_t post, uint64_t lo,
                       uint64_t hi)
{
    cache_hist_moved(cc->hist, ino, pre, post, lo, hi);
}

/* cache_chunk_head -- see cache_chunk.h. */
bool cache_chunk_head(cache_chunk *cc, uint64_t ino, int64_t *ctime)
{
    return cache_hist_head(cc->hist, ino, ctime);
}

typedef struct {
    uint32_t from, n;
    void *dst;
    int64_t tag;
} cache_chunk_peeked;

/* Under the shard lock: copy the slice, note the tag. */
static int cache_chunk_peek_fn(void *val, size_t len, void *arg)
{
    cache_chunk_peeked *a = arg;
    cache_chunk_hdr h;

    if (len < sizeof h)
        return CACHE_CHUNK_STALE;
    memcpy(&h, val, sizeof h);
    if (sizeof h + h.len > len)
        return CACHE_CHUNK_STALE;
    if (a->from < h.len) {
        uint32_t k = h.len - a->from < a->n ? h.len - a->from : a->n;

        memcpy(a->dst, (const char *)val + sizeof h + a->from, k);
    }
    a->tag = h.ctime;
    return (int)h.len;
}

/* cache_chunk_peek -- see cache_chunk.h. */
long cache_chunk_peek(cache_chunk *cc, uint64_t ino, uint64_t chunk, uint32_t from, uint32_t n,
                      void *dst, int64_t *tag)
{
    cache_chunk_key k = {ino, chunk};
    cache_chunk_peeked a = {from, n, dst, 0};
    int rc = cache_lru_visit(cc->lru, &k, sizeof k, cache_chunk_peek_fn, &a);

    if (rc < 0 || rc == CACHE_CHUNK_STALE)
        return -ENOENT;
    *tag = a.tag;
    return rc;
}

/* cache_chunk_count -- see cache_chunk.h. */
void cache_chunk_count(cache_chunk *cc, uint64_t hits, uint64_t misses, uint64_t stale)
{
    if (hits)
        atomic_fetch_add(&cc->hits, hits);
    if (misses)
        atomic_fetch_add(&cc->misses, misses);
    if (stale)
        atomic_fetch_add(&cc->stale, stale);
}

/* cache_chunk_put -- see cache_chunk.h. */
int cache_chunk_put(cache_chunk *cc, uint64_t ino, uint64_t chunk, int64_t ctime, const void *data,
                    uint32_t len)
{
    cache_chunk_key k = {ino, chunk};
    cache_chunk_hdr h = {ctime, len, 0};
    cache_lru_part parts[2] = {{&h, sizeof h}, {data, len}};

    return cache_lru_force_parts(cc->lru, &k, sizeof k, parts, 2, cache_tagged_charge(len));
}

typedef struct {
    int64_t ctime;
    unsigned char *buf; /* chunk_size bytes */
    uint32_t room;
    uint32_t len;
} cache_chunk_take;

/* Under the shard lock: copy the whole chunk out if the tag matches. */
static int cache_chunk_take_fn(void *val, size_t len, void *arg)
{
    cache_chunk_take *a = arg;
    cache_chunk_hdr h;

    if (len < sizeof h)
        return CACHE_CHUNK_STALE;
    memcpy(&h, val, sizeof h);
    if (h.ctime != a->ctime || sizeof h + h.len > len || h.len > a->room)
        return CACHE_CHUNK_STALE;
    memcpy(a->buf, (const char *)val + sizeof h, h.len);
    a->len = h.len;
    return 0;
}

/* cache_chunk_wrote -- see cache_chunk.h. */
int cache_chunk_wrote(cache_chunk *cc, uint64_t ino, uint64_t chunk, int64_t pre, int64_t post,
                      uint32_t at, const void *data, uint32_t n, uint32_t chunk_size)
{
    cache_chunk_key k = {ino, chunk};
    cache_chunk_take a = {pre, NULL, chunk_size, 0};
    uint32_t len;
    int rc;

    if (at == 0 && n == chunk_size)
        return cache_chunk_put(cc, ino, chunk, post, data, n);
    if (at > chunk_size || n > chunk_size - at)
        return -EINVAL;
    a.buf = malloc(chunk_size);
    if (!a.buf)
        return -ENOMEM;
    rc = cache_lru_visit(cc->lru, &k, sizeof k, cache_chunk_take_fn, &a);
    if (rc != 0) {
        /* Not cached as of pre: the merged contents are unknown here. */
        free(a.buf);
        return 0;
    }
    len = a.len;
    if (at > len)
        memset(a.buf + len, 0, at - len);
    memcpy(a.buf + at, data, n);
    if (at + n > len)
        len = at + n;
    rc = cache_chunk_put(cc, ino, chunk, post, a.buf, len);
    free(a.buf);
    return rc;
}

/* cache_chunk_get_stats -- see cache_chunk.h. */
void cache_chunk_get_stats(cache_chunk *cc, cache_chunk_stats *out)
{
    cache_lru_tagged_stats(cc->lru, atomic_load(&cc->hits), atomic_load(&cc->misses),
                           atomic_load(&cc->stale), cc->capacity, out);
}
