/*
 * pgnfsd_flusher.h -- the write-back flusher of the daemon: a thread that
 * stores buffered UNSTABLE writes once they are [writeback] max_age_ms
 * old, and everything left when the server stops (pgnfsd_flusher.c).
 */
#ifndef PGNFS_PGNFSD_FLUSHER_H
#define PGNFS_PGNFSD_FLUSHER_H

#include "cfg.h"
#include "dbfs.h"

typedef struct pgnfsd_flusher pgnfsd_flusher;

/*
 * pgnfsd_flusher_start -- start the thread that stores buffered writes once
 * they are [writeback] max_age_ms old. Returns it, or NULL when
 * write-back is off (or the thread could not start: logged).
 */
pgnfsd_flusher *pgnfsd_flusher_start(dbfs *fs, const cfg *c);

/*
 * pgnfsd_flusher_stop -- store everything still buffered (retrying a while
 * if the database is away; what cannot be stored is logged), stop the
 * thread and free f. Call after the workers have stopped. NULL is fine.
 */
void pgnfsd_flusher_stop(pgnfsd_flusher *f);

#endif /* PGNFS_PGNFSD_FLUSHER_H */
