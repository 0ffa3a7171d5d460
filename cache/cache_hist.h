/*
 * cache_hist.h -- which chunks of a file changed since when: the recent
 * data changes of the files being written, so that a chunk cached as of
 * an older ctime is known to be still current when no change since has
 * touched it.
 *
 * Why: the chunk buffer cache (cache_chunk.h) tags every entry with the
 * ctime of its file and serves it only for that ctime. A file written in
 * many transactions (a stream flushed every few MiB) has a new ctime after
 * each, so the chunks written by the earlier ones would all miss, and a
 * file just written would be read back from the database. A writer that
 * commits a change knows exactly which chunks it touched; recorded here,
 * that makes the other chunks' older entries current again.
 *
 * The facts. A file's ctime moves forward with every change and never
 * back; ctimes of one file are distinct. cache_hist_moved(ino, pre, post,
 * lo, hi) says: "a committed change took ino from ctime pre to ctime post
 * and altered no stored byte outside chunks lo..hi". Per file the history
 * keeps a chain base -> ... -> head of such changes, each beginning where
 * the previous ended, and for every chunk the ctime of its last change in
 * the chain (a map of disjoint chunk ranges). A chunk's bytes as of tag
 * are its bytes at now if the chain reaches now (head == now), began no
 * later than tag (base <= tag) and no change after tag touched the chunk.
 *
 * Exactness: a change that is not reported (a truncation, any SETATTR, a
 * write that failed to report) leaves a gap: the next report does not
 * begin at head, and the chain restarts there (base = its pre), so
 * nothing older than the gap is current any more; and while the gap is
 * the latest change, head != now and nothing but exact tags is current.
 * A report that arrives late (its post <= head) is older than the chain's
 * base (the chain cannot have passed over it) and is ignored. Merging
 * ranges to stay within bounds only ever makes a chunk look changed later
 * than it was: a miss, never a wrong hit.
 *
 * NOTES
 *   Bounded: CACHE_HIST_SLOTS files at once (a file's slot is its inode's
 *   hash; another file taking the slot forgets the first: misses), at
 *   most CACHE_HIST_RANGES ranges each. Thread-safe: a mutex per slot,
 *   held for a scan of one file's ranges; it is never held while any
 *   other lock is taken.
 */
#ifndef PGNFS_CACHE_HIST_H
#define PGNFS_CACHE_HIST_H

#include <stdbool.h>
#include <stdint.h>

#define CACHE_HIST_SLOTS  256
#define CACHE_HIST_RANGES 512

typedef struct cache_hist cache_hist;

/* cache_hist_new -- an empty history. Returns NULL only when out of
 * memory. */
cache_hist *cache_hist_new(void);
/* cache_hist_free -- free it (NULL is fine). */
void cache_hist_free(cache_hist *h);

/*
 * cache_hist_moved -- a committed change took file ino from ctime pre to
 * ctime post (post > pre) and altered no stored byte outside chunks
 * lo..hi (lo > hi: no byte at all). Cannot fail (out of memory for a
 * range, the file's history restarts at this change: safe).
 */
void cache_hist_moved(cache_hist *h, uint64_t ino, int64_t pre, int64_t post, uint64_t lo,
                      uint64_t hi);

/*
 * cache_hist_current -- are chunk `chunk` of file ino's bytes as of ctime
 * tag still its bytes at ctime now? True if tag == now, or if the chain
 * recorded takes the file from tag to now and no change after tag touched
 * the chunk. False whenever that is not known.
 */
bool cache_hist_current(cache_hist *h, uint64_t ino, uint64_t chunk, int64_t tag, int64_t now);

/*
 * cache_hist_head -- the ctime file ino has after the last change
 * recorded (*head), if its history is kept: a guess at its current
 * ctime, for a caller that learns the real one only later. Returns false
 * if none is kept.
 */
bool cache_hist_head(cache_hist *h, uint64_t ino, int64_t *head);

#endif /* PGNFS_CACHE_HIST_H */
