/*
 * srv_pool.h -- large buffers kept for reuse: the record buffers of big
 * calls (a 1 MiB WRITE), so that receiving one costs neither a fresh
 * allocation nor the page faults and zeroing of fresh memory, and so
 * that a record does not grow by copying itself into ever larger
 * buffers.
 *
 * NOTES
 *   Buffers are g_malloc'd; their size is what malloc_usable_size says,
 *   so a buffer can be given back by whoever holds it without its size.
 *   Only buffers of at least SRV_POOL_MIN bytes are kept, at most
 *   SRV_POOL_MAX_BUFS of them and SRV_POOL_MAX_BYTES in all; the rest
 *   are freed. Thread-safe (one mutex): the event thread takes, workers
 *   give back.
 */
#ifndef PGNFS_SRV_POOL_H
#define PGNFS_SRV_POOL_H

#include <stddef.h>

/* Smaller buffers are not kept (malloc serves them well). */
#define SRV_POOL_MIN       (64u * 1024u)
#define SRV_POOL_MAX_BUFS  64
#define SRV_POOL_MAX_BYTES (96u * 1024u * 1024u)

/*
 * srv_pool_get -- the smallest kept buffer of at least want bytes, taken
 * out of the pool: the caller owns it (not zeroed) and sets *cap to its
 * size. NULL (and *cap 0) when none is kept. Cannot fail.
 */
void *srv_pool_get(size_t want, size_t *cap);

/* srv_pool_put -- give back a g_malloc'd buffer (NULL is fine): kept if it
 * is large enough and there is room, else freed. Cannot fail. */
void srv_pool_put(void *p);

/* srv_pool_held -- how many buffers, and bytes, the pool keeps now. */
void srv_pool_held(size_t *bufs, size_t *bytes);

/* srv_pool_drain -- free every kept buffer (at exit, and in tests). */
void srv_pool_drain(void);

/*
 * srv_pool_tune_malloc -- make the C library keep the memory the server
 * frees for its next allocations instead of handing it back to the kernel
 * at once: blocks up to SRV_MALLOC_MMAP_MAX bytes come from the heap
 * (not a mapping of their own, unmapped at free), and the heap is trimmed
 * only past SRV_MALLOC_TRIM_MIN bytes free at its top. Otherwise every
 * flush of the write-back buffer, every eviction of the buffer cache and
 * every large result freed gives pages back that the next one faults in
 * and the kernel zeroes again. The resident size then stays at its high
 * mark (which the caches' bounds already bound). Process-wide; idempotent;
 * cannot fail (a refused setting is logged).
 */
#define SRV_MALLOC_MMAP_MAX (8u * 1024u * 1024u)
#define SRV_MALLOC_TRIM_MIN (256u * 1024u * 1024u)
void srv_pool_tune_malloc(void);

#endif /* PGNFS_SRV_POOL_H */
