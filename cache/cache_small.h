/*
 * cache_small.h -- the small-file cache: inode -> the whole contents of a
 * small file, bounded in bytes, a typed layer over cache_lru
 * (cache_lru.h).
 *
 * Why beside the chunk buffer cache: a hot small object (a web proxy's,
 * a source tree's) is served by one lookup and one copy, however small
 * the chunks; it is known from the moment it is written (a new file's
 * first write gives its whole contents, which the chunk cache cannot
 * store unless they fill a chunk); and its budget is its own, so a
 * stream of large files through the chunk cache does not push the hot
 * small ones out.
 *
 * Coherence: as the chunk cache's (cache_chunk.h), by validity tags. An
 * entry says "file i, as of ctime t, holds exactly these bytes" (its
 * length is the file's size at t). A file's ctime moves forward with
 * every change and never with a read, so the fact never becomes false; a
 * lookup names the ctime the caller knows to be current and only an
 * entry with exactly that tag is a hit. A writer stores the contents its
 * commit produced only when it knows them whole: the file was empty
 * before (size 0: no stored byte) or its contents as of the write's
 * pre-operation ctime are cached. When two facts about one file meet,
 * the later ctime is kept.
 *
 * NOTES
 *   Thread-safe: cache_lru's shard locks only. Values are copied in once
 *   and copied out (the slice asked for) under the shard lock.
 */
#ifndef PGNFS_CACHE_SMALL_H
#define PGNFS_CACHE_SMALL_H

#include <stddef.h>
#include <stdint.h>

#include "cache_lru.h"

typedef struct cache_small cache_small;

typedef cache_tagged_stats cache_small_stats;

/*
 * cache_small_new -- a cache of at most capacity bytes (a small overhead
 * per entry counted) holding files of at most max_file bytes. Returns 0
 * and *out, -EINVAL (max_file 0, or capacity too small for one file of
 * max_file bytes) or -ENOMEM.
 */
int cache_small_new(size_t capacity, uint32_t max_file, cache_small **out);
/* cache_small_free -- free it (NULL is fine). */
void cache_small_free(cache_small *cs);
/* cache_small_max_file -- the largest file it keeps. */
uint32_t cache_small_max_file(const cache_small *cs);

/*
 * cache_small_get -- if file ino's contents as of ctime are cached, copy
 * its bytes [from, from + n) (as far as the file goes) to dst and return
 * the file's size (a hit); else -ENOENT (a miss). Counts a hit or a miss.
 */
long cache_small_get(cache_small *cs, uint64_t ino, int64_t ctime, uint64_t from, uint32_t n,
                     void *dst);
/* cache_small_try -- cache_small_get that counts a hit only: for a caller
 * that asks again through cache_small_get after a miss. */
long cache_small_try(cache_small *cs, uint64_t ino, int64_t ctime, uint64_t from, uint32_t n,
                     void *dst);

/*
 * cache_small_put -- file ino holds exactly these len bytes as of ctime.
 * Returns 0 (stored, or an entry with a later ctime kept), -E2BIG (larger
 * than max_file: not stored) or -ENOMEM.
 */
int cache_small_put(cache_small *cs, uint64_t ino, int64_t ctime, const void *data, uint32_t len);

/* One piece of a write: n bytes at file offset off. */
typedef struct {
    uint64_t off;
    const void *data;
    uint32_t n;
} cache_small_piece;

/*
 * cache_small_wrote -- a committed write took file ino from ctime pre,
 * pre_size bytes, to ctime post, post_size bytes, writing the pieces
 * pc[0 .. np) (in that order). Stores the contents after it when they are
 * known: the file was empty at pre, or its contents as of pre are cached;
 * and the write alone explains post_size (pre_size, or the end of its
 * last byte if further), which fits max_file. Otherwise stores nothing.
 * Returns 0 or -ENOMEM. Never makes the cache hold a wrong fact.
 */
int cache_small_wrote(cache_small *cs, uint64_t ino, int64_t pre, uint64_t pre_size, int64_t post,
                      uint64_t post_size, const cache_small_piece *pc, size_t np);

/* cache_small_get_stats -- the counters. Cannot fail. */
void cache_small_get_stats(cache_small *cs, cache_small_stats *out);

#endif /* PGNFS_CACHE_SMALL_H */
