/*
 * pattern.h -- the bytes the performance benchmarks write (bench/perf/):
 * a pseudo-random stream that is a pure function of (seed, offset), so the
 * load generator (pload) and the raw PostgreSQL baseline (pgceiling) write
 * the same bytes, a reader can check any range without having kept it, and
 * nothing along the way (pglz, a file system) can compress it.
 *
 * The byte at offset o is byte (o mod 8) of pat_word(seed, o / 8),
 * little-endian.
 *
 * NOTES
 *   Header-only (static inline): both programs include it. Nothing here
 *   allocates or fails.
 */
#ifndef PGNFS_BENCH_PATTERN_H
#define PGNFS_BENCH_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* The seed of the sequential-I/O file (pload seqwrite, pgceiling). */
#define PAT_SEED_SEQ 0x5eed0001u

/* splitmix64 of (seed, index): the 8 bytes at offset 8 * index. */
static inline uint64_t pat_word(uint64_t seed, uint64_t index)
{
    uint64_t z = seed * 0xd1342543de82ef95ull + index * 0x9e3779b97f4a7c15ull;

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The byte at offset off. */
static inline unsigned char pat_byte(uint64_t seed, uint64_t off)
{
    return (unsigned char)(pat_word(seed, off >> 3) >> (8 * (off & 7)));
}

/* pat_fill -- buf[0 .. n) = the stream's bytes at off .. off + n. */
static inline void pat_fill(unsigned char *buf, uint64_t off, size_t n, uint64_t seed)
{
    size_t i = 0;

    while (i < n && ((off + i) & 7))
        buf[i] = pat_byte(seed, off + i), i++;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = pat_word(seed, (off + i) >> 3);
        for (int k = 0; k < 8; k++)
            buf[i + (size_t)k] = (unsigned char)(w >> (8 * k));
    }
    for (; i < n; i++)
        buf[i] = pat_byte(seed, off + i);
}

/*
 * pat_check -- do `samples` bytes spread evenly over buf[0 .. n) (always
 * the first and the last) hold the stream's bytes at off .. off + n?
 * Returns -1 if they do, else the index of the first that does not.
 */
static inline long long pat_check(const unsigned char *buf, uint64_t off, size_t n, uint64_t seed,
                                  unsigned samples)
{
    if (n == 0)
        return -1;
    if (samples < 2)
        samples = 2;
    for (unsigned s = 0; s < samples; s++) {
        size_t i = (size_t)((n - 1) * (uint64_t)s / (samples - 1));
        if (buf[i] != pat_byte(seed, off + i))
            return (long long)i;
    }
    return -1;
}

#endif /* PGNFS_BENCH_PATTERN_H */
