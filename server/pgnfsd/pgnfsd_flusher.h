/*
 * pgnfsd_flusher.h -- the daemon's background thread (pgnfsd_flusher.c): the
 * write-back flusher, which stores buffered UNSTABLE writes once they are
 * [writeback] max_age_ms old and everything left when the server stops;
 * and the space guard's reclaim (VACUUM after removals when the disk is
 * at its reserve), which must never run on a request thread.
 */
#ifndef PGNFS_PGNFSD_FLUSHER_H
#define PGNFS_PGNFSD_FLUSHER_H

#include "cfg.h"
#include "dbfs.h"

typedef struct pgnfsd_flusher pgnfsd_flusher;

/*
 * pgnfsd_flusher_start -- start the thread that stores buffered writes once
 * they are [writeback] max_age_ms old and tends the space guard
 * (dbfs_space_tend). Returns it, or NULL when write-back is off and
 * there is no space guard (or the thread could not start: logged).
 */
pgnfsd_flusher *pgnfsd_flusher_start(dbfs *fs, const cfg *c);

/*
 * pgnfsd_flusher_stop -- store everything still buffered (retrying a while
 * if the database is away; what cannot be stored is logged), stop the
 * thread and free f. Call after the workers have stopped. NULL is fine.
 */
void pgnfsd_flusher_stop(pgnfsd_flusher *f);

#endif /* PGNFS_PGNFSD_FLUSHER_H */
