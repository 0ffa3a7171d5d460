/*
 * cache_dir.h -- the listing cache: a directory's whole listing (its
 * parent, and every entry's cookie, inode, generation and name) as of one
 * value of the directory's change counter. READDIR and READDIRPLUS serve
 * pages from it without a database round trip. A typed layer over
 * cache_lru, bounded in bytes.
 *
 * NOTES
 *   Exact without the fill protocol: a listing is stored with the change
 *   counter the directory had in the same snapshot, and is served only to
 *   a caller that presents the directory's current counter (from the stat
 *   cache, which is exact). Every change of a directory's entries moves its
 *   counter in the same transaction (pgnfs_dir_touch), and so does a
 *   rename that moves it elsewhere (its ".."); a listing of an older
 *   counter is never served, so it needs no invalidation and races of
 *   readers storing listings of different ages only cost a miss (the
 *   newer counter is kept).
 *
 *   A directory with more entries than a listing may hold is remembered
 *   as "too large" at its counter, so callers stop fetching it whole until
 *   it changes.
 *
 *   One entry per directory (key: its inode). Names are copied in, and a
 *   slice is copied out; nothing handed out points into the cache.
 */
#ifndef PGNFS_CACHE_DIR_H
#define PGNFS_CACHE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache_lru.h"

typedef struct cache_dir cache_dir;

/* One entry of a listing. */
typedef struct {
    uint64_t cookie;
    uint64_t ino;
    uint32_t gen;
    uint32_t len;     /* name length in bytes */
    const char *name; /* not NUL-terminated in cache_dir_put's input */
} cache_dir_ent;

/* Which listing: the directory and its change counter. */
typedef struct {
    uint64_t ino;
    uint32_t gen;
    uint64_t change;
} cache_dir_key;

/* A page copied out of a listing (cache_dir_slice). */
typedef struct {
    uint64_t parent_ino; /* ".." (the directory itself for the root) */
    uint32_t parent_gen;
    size_t n;
    cache_dir_ent *ents; /* names NUL-terminated, in one block freed with ents */
    bool more;           /* entries remain after the last one */
} cache_dir_page;

/*
 * cache_dir_new -- a listing cache of at most `bytes` bytes (>= 4096).
 * Returns 0 and *out, -EINVAL or -ENOMEM.
 */
int cache_dir_new(size_t bytes, cache_dir **out);
/* cache_dir_free -- free it (NULL is fine). */
void cache_dir_free(cache_dir *d);

/* cache_dir_max_entries -- the most entries one listing may hold. */
size_t cache_dir_max_entries(const cache_dir *d);

/*
 * cache_dir_put -- store the listing of k (n entries in cookie order).
 * A listing already cached with a larger counter is kept. Returns 0,
 * -E2BIG (more than a listing may hold: nothing stored) or -ENOMEM.
 */
int cache_dir_put(cache_dir *d, cache_dir_key k, uint64_t parent_ino, uint32_t parent_gen,
                  const cache_dir_ent *ents, size_t n);

/* cache_dir_put_large -- remember that k's listing is too large. */
void cache_dir_put_large(cache_dir *d, cache_dir_key k);

/*
 * cache_dir_slice -- up to max entries of k's listing after position
 * `cookie` (entries with larger cookies), into *out (free with
 * cache_dir_page_free). Returns 0 (a hit), -ENOENT (no listing of this
 * counter: a miss), -EFBIG (known too large at this counter; counted as
 * a miss) or -ENOMEM. Counts a hit or a miss.
 */
int cache_dir_slice(cache_dir *d, cache_dir_key k, uint64_t cookie, uint32_t max,
                    cache_dir_page *out);
void cache_dir_page_free(cache_dir_page *p);

/* cache_dir_reset -- drop every listing. */
void cache_dir_reset(cache_dir *d);
/* cache_dir_stats -- the LRU's counters (charge and capacity in bytes). */
void cache_dir_stats(cache_dir *d, cache_lru_stats *out);

#endif /* PGNFS_CACHE_DIR_H */
