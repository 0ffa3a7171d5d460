/*
 * cache_stat.h -- the stat cache: inode -> attributes, or the knowledge
 * that an (inode, generation) is gone. A typed layer over cache_lru
 * (cache_lru.h explains the fill/mutation protocol every caller follows;
 * the guard of an entry is its inode number).
 *
 * The cache knows three things of a file: its inode number, its
 * generation and its change counter (a number that grows with every
 * change). The attributes themselves are the caller's bytes, of one fixed
 * size chosen when the cache is made, copied in and out whole.
 *
 * NOTES
 *   "Gone" entries: inode numbers come from a sequence and are never
 *   reused, so an (inode, generation) that does not exist now never will
 *   again. A gone entry can therefore never become stale, and a GETATTR of
 *   a removed file's handle is answered STALE from the cache. A gone entry
 *   is never replaced by a present one (the keep rule), whatever the order
 *   in which racing threads store them. A present entry is never replaced
 *   by one with a smaller change counter of the same generation.
 *
 *   Values are copied in and out; the cache owns nothing of the caller's.
 */
#ifndef PGNFS_CACHE_STAT_H
#define PGNFS_CACHE_STAT_H

#include <stdbool.h>
#include <stdint.h>

#include "cache_lru.h"

/* The largest attribute value an entry may hold (bytes). */
#define CACHE_STAT_VAL_MAX 256

typedef struct cache_stat cache_stat;

/*
 * cache_stat_new -- a stat cache of at most `entries` entries (> 0) whose
 * values are val_size bytes (1 .. CACHE_STAT_VAL_MAX). Returns 0 and
 * *out, -EINVAL or -ENOMEM.
 */
int cache_stat_new(size_t entries, size_t val_size, cache_stat **out);
/* cache_stat_free -- free it (NULL is fine). */
void cache_stat_free(cache_stat *s);

/* Which file a value describes, and how new it is. */
typedef struct {
    uint64_t ino;
    uint32_t gen;
    uint64_t change;
} cache_stat_id;

/*
 * cache_stat_get -- the value of (ino, gen) into out (val_size bytes; NULL:
 * not wanted). Returns 0 (a hit), -ESTALE (known gone, or the inode has
 * another generation), or -ENOENT (not cached: a miss). Counts a hit or a
 * miss.
 */
int cache_stat_get(cache_stat *s, uint64_t ino, uint32_t gen, void *out);

/* cache_stat_find -- cache_stat_get that counts nothing; cache_stat_hit
 * counts one hit of ino (see cache_lru_find). */
int cache_stat_find(cache_stat *s, uint64_t ino, uint32_t gen, void *out);
void cache_stat_hit(cache_stat *s, uint64_t ino);

/* Reader side (cache_lru_fill): take the ticket before reading the
 * database; fill with what was read (val: val_size bytes). Results as
 * cache_lru_fill's. */
cache_lru_ticket cache_stat_ticket(cache_stat *s);
int cache_stat_fill(cache_stat *s, cache_lru_ticket t, cache_stat_id id, const void *val);
int cache_stat_fill_gone(cache_stat *s, cache_lru_ticket t, uint64_t ino, uint32_t gen);

/* Writer side: begin on the inodes the mutation will change (known
 * before it runs), store what it committed, end. */
void cache_stat_mut_begin(cache_stat *s, cache_lru_mut *m, const uint64_t *inos, unsigned n);
int cache_stat_store(cache_stat *s, const cache_lru_mut *m, cache_stat_id id, const void *val);
void cache_stat_mut_end(cache_stat *s, cache_lru_mut *m);

/*
 * cache_stat_victim -- after a commit that changed inode ino, which the
 * mutation could not name before it ran (the object a REMOVE or RENAME
 * found under a name): gone says the (ino, gen) no longer exists. Holds
 * the inode's stripe for the update (a late cache_lru mutation), so a
 * reader that read before the commit cannot store afterwards; then
 * records gone, or drops the entry (its new attributes are not stored: an
 * overlapping writer may have committed later). Cannot fail.
 */
void cache_stat_victim(cache_stat *s, uint64_t ino, uint32_t gen, bool gone);

/* cache_stat_forget -- drop ino's entry (always safe). */
void cache_stat_forget(cache_stat *s, uint64_t ino);

/*
 * cache_stat_reset -- drop every entry, and refuse every fill whose ticket
 * was taken before (for a mutation whose outcome is unknown: a connection
 * lost around its commit). Cannot fail.
 */
void cache_stat_reset(cache_stat *s);

/* cache_stat_stats -- the LRU's counters. */
void cache_stat_stats(cache_stat *s, cache_lru_stats *out);

#endif /* PGNFS_CACHE_STAT_H */
