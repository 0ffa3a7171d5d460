/*
 * fuzz_harness.h -- the dispatch fuzz target (fuzz_dispatch.c) as the two
 * programs built from it see it: the libFuzzer binary (PGNFS_FUZZ=ON,
 * clang) and the replay program every build has (fuzz_replay.c), which
 * runs the seed corpus and deterministic mutations of it through the same
 * target in CI.
 */
#ifndef PGNFS_FUZZ_HARNESS_H
#define PGNFS_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz_seeds.h"

/*
 * LLVMFuzzerInitialize -- set up the server context the target dispatches
 * into. Without PGNFS_FUZZ_CONNINFO in the environment there is no
 * database: every NFS procedure but NULL is answered NFS3ERR_JUKEBOX after
 * its arguments were decoded, MOUNT calls are dropped. With it, the
 * database it names is made into a fresh file system (mkfs --force: its
 * contents are lost) holding the files fuzz_seeds.h describes, and every
 * call runs its handler for real. With PGNFS_FUZZ_SEEDS=DIR the seed corpus
 * for that file system is written into DIR. Exits the process (status 1)
 * if the set-up fails. Returns 0.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/*
 * LLVMFuzzerTestOneInput -- dispatch data[0..size) as one RPC record from
 * 127.0.0.1:700 over TCP, then check the reply: a reply record starts with
 * the call's xid and REPLY, is a whole number of XDR words and is not
 * larger than a record may be. A broken rule aborts (libFuzzer reports
 * it as a crash). Returns 0.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_harness_handles -- the handles the seeds should name (after
 * LLVMFuzzerInitialize). */
const fuzz_handles *fuzz_harness_handles(void);

/* fuzz_harness_has_db -- true in the database mode (see above). */
int fuzz_harness_has_db(void);

#endif /* PGNFS_FUZZ_HARNESS_H */
