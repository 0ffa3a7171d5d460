/*
 * cache_chunk.h -- the chunk buffer cache: (inode, chunk) -> the chunk's
 * bytes, bounded in bytes, a typed layer over cache_lru (cache_lru.h).
 *
 * Coherence by validity tags rather than by invalidation. Every entry
 * carries the ctime of its file at which its bytes are the chunk's
 * contents: "chunk k of inode i, as of ctime t, holds these bytes". A
 * file's ctime moves forward with every change to it (pgnfs_next_ctime: a
 * write, a truncation, any SETATTR, a link count change) and never with a
 * read (atime does not touch ctime), so such a fact never becomes false.
 * A lookup names the ctime the caller knows to be current (from the
 * database, or from the exact stat cache) and only an entry with exactly
 * that tag is a hit. Consequences:
 *
 *   1. Nothing another component does to a file needs to reach this
 *      cache: a truncation, a SETATTR, a rename over the file, anything
 *      that changes the data changes ctime, and the old entries stop
 *      matching. Removal: inode numbers are never reused and a removed
 *      inode's attributes are never current again, so its entries are
 *      never hit again; the LRU bound reclaims them.
 *   2. A failed transaction stores nothing, so the cache stays as it was.
 *   3. Races cannot store a wrong fact: a reader stores what it read at the
 *      ctime it read; a writer stores the chunks it wrote at the ctime its
 *      commit produced, and merges a partial piece only into an entry
 *      tagged with the ctime its commit started from (its pre-operation
 *      ctime, read under the row lock). When two facts about one chunk
 *      meet, the later ctime is kept (the keep rule), so a slow reader
 *      never pushes out a newer entry.
 *
 *   4. A write to a file leaves the chunks it did not touch tagged with
 *      the old ctime. The writer reports which chunks its committed change
 *      touched (cache_chunk_moved), and a history of such reports
 *      (cache_hist.h) shows an older tag still current when no change
 *      since has touched that chunk; such an entry is then retagged with
 *      the current ctime. Without a report for every change in between
 *      (a truncation, a SETATTR) the old tag is not current: a miss.
 *
 * NOTES
 *   Thread-safe: cache_lru's shards, each with its own lock; nothing here
 *   takes a lock of its own. Values are copied in, and copied out (only
 *   the slice asked for) under the shard lock; nothing handed out
 *   outlives a call. Counters: hits and misses are this layer's (a tag
 *   mismatch is a miss, counted also as "stale"); evictions and the rest
 *   are cache_lru's.
 */
#ifndef PGNFS_CACHE_CHUNK_H
#define PGNFS_CACHE_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "cache_lru.h"

typedef struct cache_chunk cache_chunk;

typedef cache_tagged_stats cache_chunk_stats;

/*
 * cache_chunk_new -- a cache holding at most capacity bytes of chunks
 * (with a small per-entry overhead charged too). Returns 0 and *out,
 * -EINVAL (capacity too small for one shard to hold a chunk of
 * max_chunk bytes) or -ENOMEM.
 */
int cache_chunk_new(size_t capacity, uint32_t max_chunk, cache_chunk **out);
/* cache_chunk_free -- free it (NULL is fine). */
void cache_chunk_free(cache_chunk *cc);

/*
 * cache_chunk_get -- if chunk (ino, chunk) is cached as of ctime (its tag,
 * or an older tag that cache_chunk_current finds current at ctime), copy
 * its bytes [from, from + n) (as far as it holds them) to dst and return
 * the chunk's length (its stored bytes: what lies past it reads as
 * zeros), a hit. Returns -ENOENT otherwise (a miss; dst's bytes are then
 * unspecified). Counts a hit or a miss.
 */
long cache_chunk_get(cache_chunk *cc, uint64_t ino, uint64_t chunk, int64_t ctime, uint32_t from,
                     uint32_t n, void *dst);

/*
 * cache_chunk_peek -- for a caller that learns the current ctime only
 * later: copy bytes [from, from + n) of chunk (ino, chunk) whatever its
 * tag, and return its length with *tag; -ENOENT if not cached. Counts
 * nothing: the caller reports the outcome with cache_chunk_count() once it
 * knows whether *tag was current.
 */
long cache_chunk_peek(cache_chunk *cc, uint64_t ino, uint64_t chunk, uint32_t from, uint32_t n,
                      void *dst, int64_t *tag);
/*
 * cache_chunk_current -- are chunk (ino, chunk)'s bytes as of ctime tag
 * (what cache_chunk_peek found) still its bytes at ctime now? True when
 * tag == now, or when the changes reported with cache_chunk_moved take
 * the file from tag to now without touching the chunk (the entry is then
 * retagged now). Counts nothing.
 */
bool cache_chunk_current(cache_chunk *cc, uint64_t ino, uint64_t chunk, int64_t tag, int64_t now);

/*
 * cache_chunk_moved -- a committed change took file ino from ctime pre to
 * ctime post and altered no stored byte outside chunks lo..hi (lo > hi:
 * none): the chunk writer's report (see 4. above; cache_hist.h). Cannot
 * fail.
 */
void cache_chunk_moved(cache_chunk *cc, uint64_t ino, int64_t pre, int64_t post, uint64_t lo,
                       uint64_t hi);

/* cache_chunk_head -- file ino's ctime after the last change reported, if
 * the history still holds it (a guess at its current ctime). */
bool cache_chunk_head(cache_chunk *cc, uint64_t ino, int64_t *ctime);

/* cache_chunk_count -- add to the hit, miss and stale counters. */
void cache_chunk_count(cache_chunk *cc, uint64_t hits, uint64_t misses, uint64_t stale);

/*
 * cache_chunk_put -- chunk (ino, chunk) holds these len bytes as of ctime
 * (read from the database in a snapshot where the file's ctime was
 * ctime). Returns 0 (stored, or an entry with a later ctime kept),
 * -E2BIG or -ENOMEM (not stored; nothing else changed).
 */
int cache_chunk_put(cache_chunk *cc, uint64_t ino, uint64_t chunk, int64_t ctime, const void *data,
                    uint32_t len);

/*
 * cache_chunk_wrote -- a committed write took file ino from ctime pre to
 * ctime post and stored n bytes at byte `at` of chunk `chunk` (chunk_size
 * bytes). A whole chunk (at 0, n == chunk_size) is stored as of post; a
 * partial piece is merged into an entry tagged pre (the chunk's contents
 * just before this write), else nothing is stored. Returns 0, or -ENOMEM
 * (nothing stored). Never makes the cache hold a wrong fact.
 */
int cache_chunk_wrote(cache_chunk *cc, uint64_t ino, uint64_t chunk, int64_t pre, int64_t post,
                      uint32_t at, const void *data, uint32_t n, uint32_t chunk_size);

/* cache_chunk_get_stats -- the counters (see cache_chunk_stats). Cannot
 * fail. */
void cache_chunk_get_stats(cache_chunk *cc, cache_chunk_stats *out);

#endif /* PGNFS_CACHE_CHUNK_H */
