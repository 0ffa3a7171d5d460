/*
 * cache_tagged.h -- what the ctime-tagged caches (cache_chunk.c,
 * cache_small.c) share: an entry's value is a header carrying the file's
 * ctime it was valid for, then the bytes; a store never replaces an entry
 * tagged with a later ctime (the keep rule); and the cache_lru behind them
 * is split into as many shards (at most CACHE_TAGGED_SHARDS) as can each
 * hold the largest value.
 */
#ifndef PGNFS_CACHE_TAGGED_H
#define PGNFS_CACHE_TAGGED_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "cache_lru.h"

/* What an entry costs beyond its value (cache_lru's node, the key's copy). */
#define CACHE_TAGGED_OVERHEAD 96
/* At most this many shards; fewer when a shard could not hold a value. */
#define CACHE_TAGGED_SHARDS 16
/* A cache_lru_visit callback returns this when the entry's tag is another
 * ctime (never a length). */
#define CACHE_TAGGED_STALE INT_MAX

/* The header at the start of every value. */
typedef struct {
    int64_t ctime;
    uint32_t len; /* bytes after the header */
    uint32_t pad;
} cache_tagged_hdr;

/*
 * cache_tagged_lru_new -- a cache_lru of capacity bytes for values of up
 * to max_len bytes after the header, with the keep rule. Returns 0 and
 * *out (cache_lru_free it), -EINVAL when not even one value fits, or
 * -ENOMEM.
 */
int cache_tagged_lru_new(size_t capacity, size_t max_len, cache_lru **out);

/* cache_tagged_charge -- what an entry with len bytes after the header
 * costs. */
static inline size_t cache_tagged_charge(size_t len)
{
    return sizeof(cache_tagged_hdr) + len + CACHE_TAGGED_OVERHEAD;
}

#endif /* PGNFS_CACHE_TAGGED_H */
