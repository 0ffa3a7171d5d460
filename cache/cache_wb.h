/*
 * cache_wb.h -- the write-back buffer: the data of UNSTABLE writes, held in
 * memory per file until it is flushed to the database (RFC 1813 3.3.7 and
 * 3.3.21: a server may keep UNSTABLE data in volatile memory until COMMIT,
 * provided its write verifier changes whenever such data could be lost).
 *
 * What it holds, per file (inode): an ordered list of *layers*, oldest
 * first. A layer maps chunk numbers to one contiguous dirty extent
 * [lo, hi) of that chunk. A write goes into the newest layer when each of
 * its pieces overlaps or touches that layer's extent of its chunk (or the
 * chunk has none there), so sequential and out-of-order streaming writes
 * coalesce into whole chunks; otherwise it opens a new layer. Layers are
 * flushed in order, so a later write always lands after an earlier one.
 *
 * Flushing (the caller does the database work):
 *
 *   cache_wb_take(ino)      waits while another flush of ino is in flight,
 *                           then detaches every layer of ino (the file is
 *                           FLUSHING; new writes go into fresh layers)
 *   ... store the pieces in one transaction ...
 *   cache_wb_done(t, 0)             stored: the memory is released
 *   cache_wb_done(t, CACHE_WB_KEEP) a transient failure: the layers go back
 *                                   in front of anything written since
 *   cache_wb_done(t, -errno)        a permanent failure: the data is dropped
 *                                   and the error kept for the file's next
 *                                   COMMIT (cache_wb_take_error)
 *
 * State of one file:
 *
 *   (absent) --put--> DIRTY --take--> FLUSHING --done(0), nothing left--> (absent)
 *                     ^                 |  --done, layers left--> DIRTY
 *                     +---put-----------+  (a put while FLUSHING stays FLUSHING)
 *   An error kept by done(-errno) keeps the entry until it is taken.
 *
 * Invariants:
 *   1. At most one flush of a file is in flight (take waits), so two
 *      flushes of one file can never commit in the wrong order.
 *   2. The bytes held (the charge of every extent buffer, layers in
 *      flight included) never exceed the limit by more than one write:
 *      a put that would pass it is refused with -ENOSPC.
 *   3. A file's overlay (cache_wb_overlay) covers both its buffered layers
 *      and the layers in flight, so its size and mtime as clients see them
 *      never go back while a flush runs.
 *
 * NOTES
 *   Thread-safe: files are spread over shards by inode, each shard with a
 *   mutex and a condition variable; no lock is shared by all files. Data
 *   is copied in by put; the pieces of a taken flush point into memory the
 *   taken object owns until cache_wb_done. Knows nothing of PostgreSQL.
 */
#ifndef PGNFS_CACHE_WB_H
#define PGNFS_CACHE_WB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cache_wb cache_wb;
typedef struct cache_wb_taken cache_wb_taken;

/* cache_wb_done's outcome for a transient failure: keep the data. */
#define CACHE_WB_KEEP 1

typedef struct {
    size_t limit;        /* bytes held at most, all files together (> 0) */
    uint32_t chunk_size; /* the file system's chunk size (> 0) */
    unsigned max_layers; /* per file; 0 = 64 */
} cache_wb_opts;

/* Writable bytes before every piece's data, which the taker may use until
 * cache_wb_done (e.g. to put a header in front of the bytes and store
 * both without a copy); the data itself is the buffer's and stays as it
 * is. */
#define CACHE_WB_HEADROOM 32

/* One piece of a taken flush: n bytes at byte `at` of chunk `chunk`, with
 * CACHE_WB_HEADROOM writable bytes before data. */
typedef struct {
    uint64_t chunk;
    uint32_t at, n;
    unsigned char *data; /* read only; data - CACHE_WB_HEADROOM .. data writable */
    unsigned layer;      /* 0 = the oldest layer taken */
} cache_wb_piece;

typedef struct {
    uint64_t bytes, files; /* held now (layers in flight included) */
    uint64_t limit;
    uint64_t writes;        /* puts stored */
    uint64_t refused;       /* puts refused (-ENOSPC, -EBUSY) */
    uint64_t flushes;       /* flushes done, any outcome */
    uint64_t flushed_bytes; /* file bytes stored by flushes */
    uint64_t errors;        /* flushes that ended with a permanent error */
    uint64_t waiting;       /* cache_wb_take calls waiting for a flush in flight */
    int64_t oldest_age_us;  /* age of the oldest data held; 0 = none */
} cache_wb_stats;

/*
 * cache_wb_new -- an empty buffer. Returns 0 and *out, -EINVAL (a zero
 * limit or chunk size) or -ENOMEM.
 */
int cache_wb_new(const cache_wb_opts *o, cache_wb **out);
/* cache_wb_free -- free wb and everything held (NULL is fine). No flush may
 * be in flight. */
void cache_wb_free(cache_wb *wb);

/*
 * cache_wb_put -- copy len (> 0) bytes written at offset off of file (ino,
 * gen) at wall-clock time now_ns. Returns 0 and *file_bytes (what the file
 * holds now), -ENOSPC (the buffer is full: nothing stored), -EBUSY (the
 * file has too many layers: flush it first; nothing stored) or -ENOMEM
 * (nothing stored).
 */
int cache_wb_put(cache_wb *wb, uint64_t ino, uint32_t gen, uint64_t off, const void *data,
                 uint32_t len, int64_t now_ns, size_t *file_bytes);

/*
 * cache_wb_overlay -- if ino holds data (buffered or in flight): true, with
 * *end the end of the furthest byte held and *mtime_ns the time of the
 * latest write held. False otherwise (outputs untouched). Cannot fail.
 */
bool cache_wb_overlay(cache_wb *wb, uint64_t ino, uint64_t *end, int64_t *mtime_ns);

/* cache_wb_empty -- true when no file holds anything (a cheap test for the
 * common case). Cannot fail. */
bool cache_wb_empty(const cache_wb *wb);

/* cache_wb_bytes -- the bytes held now (data in flight included), as
 * charged against the bound; one atomic read. Cannot fail. */
uint64_t cache_wb_bytes(const cache_wb *wb);

/*
 * cache_wb_take -- wait until no flush of ino is in flight, then take every
 * layer of ino. Returns the taken flush (finish it with cache_wb_done), or
 * NULL when ino holds nothing. Cannot fail otherwise.
 */
cache_wb_taken *cache_wb_take(cache_wb *wb, uint64_t ino);

/* The pieces of t, oldest layer first, each layer in chunk order; valid
 * until cache_wb_done(t). */
const cache_wb_piece *cache_wb_taken_pieces(const cache_wb_taken *t, size_t *n);
/* The generation of t's file and the time of the latest write in t. */
uint32_t cache_wb_taken_gen(const cache_wb_taken *t);
int64_t cache_wb_taken_mtime(const cache_wb_taken *t);
/* The file bytes t holds. */
uint64_t cache_wb_taken_bytes(const cache_wb_taken *t);

/*
 * cache_wb_done -- end the flush of t (which is freed): outcome 0 (stored),
 * CACHE_WB_KEEP (not stored, to be flushed again: the layers go back before
 * anything buffered since) or a negative errno (not stored and dropped;
 * the error is kept for cache_wb_take_error). Wakes a waiting take. Cannot
 * fail.
 */
void cache_wb_done(cache_wb *wb, cache_wb_taken *t, int outcome);

/* cache_wb_take_error -- the error a dropped flush of ino left (cleared by
 * the call), or 0. Cannot fail. */
int cache_wb_take_error(cache_wb *wb, uint64_t ino);

/*
 * cache_wb_forget -- ino no longer exists: drop what it has buffered (a
 * flush in flight ends on its own). Cannot fail.
 */
void cache_wb_forget(cache_wb *wb, uint64_t ino);

/*
 * cache_wb_due -- the files (at most max, inodes into inos) whose oldest
 * buffered data arrived at or before `before` (a g_get_monotonic_time()-
 * style clock: CLOCK_MONOTONIC microseconds), oldest first; INT64_MAX
 * selects every file holding buffered data. Returns how many. Cannot fail.
 */
size_t cache_wb_due(cache_wb *wb, int64_t before, uint64_t *inos, size_t max);

/* cache_wb_now_us -- that clock. */
int64_t cache_wb_now_us(void);

/* cache_wb_get_stats -- the counters. Cannot fail. */
void cache_wb_get_stats(cache_wb *wb, cache_wb_stats *out);

#endif /* PGNFS_CACHE_WB_H */
