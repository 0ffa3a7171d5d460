/*
 * cache_tagged.c -- the ctime-tagged caches' shared parts (cache_tagged.h).
 *
 * NOTES
 *   The keep rule runs under a cache_lru shard lock: it only compares two
 *   headers. A value too short for a header (none is stored) never keeps.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cache_tagged.h"

/* The keep rule: an entry with a later ctime stays. */
static bool cache_tagged_keep(const void *old_val, size_t old_len, const void *new_val,
                              size_t new_len)
{
    cache_tagged_hdr o, n;

    if (old_len < sizeof o || new_len < sizeof n)
        return false;
    memcpy(&o, old_val, sizeof o);
    memcpy(&n, new_val, sizeof n);
    return o.ctime > n.ctime;
}

/* cache_tagged_lru_new -- see cache_tagged.h. */
int cache_tagged_lru_new(size_t capacity, size_t max_len, cache_lru **out)
{
    size_t per = cache_tagged_charge(max_len);
    unsigned shards = CACHE_TAGGED_SHARDS;

    *out = NULL;
    while (shards > 1 && capacity / shards < per)
        shards /= 2;
    if (capacity < per)
        return -EINVAL;
    cache_lru_opts o = {.capacity = capacity, .shards = shards, .keep = cache_tagged_keep};
    return cache_lru_new(&o, out);
}
