/*
 * fuzz_seeds_int.h -- what the files of the seed corpus share: the sink
 * seeds go to, the encoder of one call record, and the seed groups built
 * outside fuzz_seeds.c.
 */
#ifndef PGNFS_FUZZ_SEEDS_INT_H
#define PGNFS_FUZZ_SEEDS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "fuzz_seeds.h"

typedef struct {
    fuzz_seed_fn fn;
    void *user;
    unsigned count;
} fuzz_seed_sink;

/*
 * fuzz_seed_emit_full -- encode one call (an RPC header of version
 * rpcvers for prog, vers, proc; AUTH_SYS root with ngroups groups, or
 * AUTH_NONE; then args with xdr_args, which may be NULL) and hand it to
 * the sink as seed `name`. Aborts if the arguments do not encode.
 */
void fuzz_seed_emit_full(fuzz_seed_sink *s, const char *name, uint32_t rpcvers, uint32_t prog,
                         uint32_t vers, uint32_t proc, bool auth_sys, unsigned ngroups,
                         xdrproc_t xdr_args, void *args);

/* Every NLM (versions 1, 3, 4) and NSM procedure, naming h's file. */
void fuzz_seeds_nlm(fuzz_seed_sink *s, const fuzz_handles *h);

#endif /* PGNFS_FUZZ_SEEDS_INT_H */
