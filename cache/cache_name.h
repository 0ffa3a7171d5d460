/*
 * cache_name.h -- the naming cache: (directory inode, name) -> (inode,
 * generation), or "no such name" (a negative entry). A typed layer over
 * cache_lru; the guard of every entry is its directory's inode, so every
 * mutation of a directory's names holds that directory (cache_name.c
 * explains why this keeps the cache exact).
 *
 * NOTES
 *   "." and ".." are never cached (callers answer "." from the stat cache
 *   and ask the database for ".."): a directory's ".." changes when it is
 *   renamed, which is a mutation of other directories.
 *
 *   Names are byte strings of 1 .. CACHE_NAME_MAX bytes, copied in; a
 *   longer one is never cached.
 */
#ifndef PGNFS_CACHE_NAME_H
#define PGNFS_CACHE_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache_lru.h"

/* The longest name an entry may hold, in bytes (NFS's and POSIX's 255). */
#define CACHE_NAME_MAX 255

typedef struct cache_name cache_name;

typedef enum {
    CACHE_NAME_MISS = 0, /* not cached */
    CACHE_NAME_FOUND,    /* the name exists: *ino, *gen filled */
    CACHE_NAME_ABSENT    /* the name does not exist (negative entry) */
} cache_name_result;

/*
 * cache_name_new -- a naming cache of at most `entries` entries (> 0).
 * Returns 0 and *out, -EINVAL or -ENOMEM.
 */
int cache_name_new(size_t entries, cache_name **out);
/* cache_name_free -- free it (NULL is fine). */
void cache_name_free(cache_name *n);

/* cache_name_get -- look (dir, name[0..len)) up. Counts a hit or a miss;
 * a name that is never cached ("", ".", "..", too long) is a miss that is
 * not counted. */
cache_name_result cache_name_get(cache_name *n, uint64_t dir, const char *name, size_t len,
                                 uint64_t *ino, uint32_t *gen);

/* cache_name_find -- cache_name_get that counts nothing; cache_name_hit
 * counts one hit of (dir, name) (see cache_lru_find). */
cache_name_result cache_name_find(cache_name *n, uint64_t dir, const char *name, size_t len,
                                  uint64_t *ino, uint32_t *gen);
void cache_name_hit(cache_name *n, uint64_t dir, const char *name, size_t len);

/* Reader side: take the ticket before reading the database; fill with
 * what was read: found (ino, gen) when found, else a negative entry.
 * Results as cache_lru_fill's; -EINVAL for a name that is not cached. */
cache_lru_ticket cache_name_ticket(cache_name *n);
int cache_name_fill(cache_name *n, cache_lru_ticket t, uint64_t dir, const char *name, size_t len,
                    bool found, uint64_t ino, uint32_t gen);

/* Writer side: begin on the directories whose names the mutation may
 * change, store what it committed (found or not), end. */
void cache_name_mut_begin(cache_name *n, cache_lru_mut *m, const uint64_t *dirs, unsigned ndirs);
int cache_name_store(cache_name *n, const cache_lru_mut *m, uint64_t dir, const char *name,
                     size_t len, bool found, uint64_t ino, uint32_t gen);
void cache_name_mut_end(cache_name *n, cache_lru_mut *m);

/* cache_name_forget -- drop (dir, name) (always safe). */
void cache_name_forget(cache_name *n, uint64_t dir, const char *name, size_t len);

/* cache_name_reset -- drop everything and refuse fills of older tickets
 * (see cache_stat_reset). */
void cache_name_reset(cache_name *n);

/* cache_name_stats -- the LRU's counters. */
void cache_name_stats(cache_name *n, cache_lru_stats *out);

#endif /* PGNFS_CACHE_NAME_H */
