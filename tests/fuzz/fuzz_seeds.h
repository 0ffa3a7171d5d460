/*
 * fuzz_seeds.h -- the seed corpus of the dispatch fuzzer: one well-formed
 * RPC call record per NFSv3, MOUNTv3 and portmapper (PORTMAP v2, rpcbind
 * v3/v4) procedure (several for procedures with interesting variants),
 * encoded with the rpcgen XDR routines of rpc/, plus a few records that
 * exercise the RPC-level error paths.
 *
 * NOTES
 *   The records name files by the handles the caller passes, so a seed
 *   reaches a handler's real work only when the handles are valid for the
 *   file system the fuzzer serves (see fuzz_dispatch.c). Records are built
 *   in memory and handed to a callback; nothing is kept.
 */
#ifndef PGNFS_FUZZ_SEEDS_H
#define PGNFS_FUZZ_SEEDS_H

#include <stddef.h>
#include <stdint.h>

/* A file handle as it goes on the wire (up to NFS3_FHSIZE bytes). */
typedef struct {
    unsigned len;
    unsigned char data[64];
} fuzz_fh;

/* The files the seeds name: the export root, a directory, a regular file
 * with data, and a symbolic link, all inside the root. */
typedef struct {
    fuzz_fh root, dir, file, link;
} fuzz_handles;

/* Called once per seed: a short name ("nfs3-07-write") and the record. */
typedef void (*fuzz_seed_fn)(const char *name, const void *rec, size_t len, void *user);

/*
 * fuzz_seeds_build -- call fn for every seed record, naming the files of h.
 * Returns the number of seeds. Cannot fail (aborts if an XDR encoder
 * fails, which would be a bug in the seed table).
 */
unsigned fuzz_seeds_build(const fuzz_handles *h, fuzz_seed_fn fn, void *user);

/*
 * fuzz_seeds_write_dir -- write every seed as a file named after it into
 * directory dir (created if missing). Returns the number written, or a
 * negative errno (with a message on stderr) if a file cannot be written.
 */
int fuzz_seeds_write_dir(const fuzz_handles *h, const char *dir);

#endif /* PGNFS_FUZZ_SEEDS_H */
