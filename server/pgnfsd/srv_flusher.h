/*
 * srv_flusher.h -- the write-back flusher of the daemon: a thread that
 * stores buffered UNSTABLE writes once they are [writeback] max_age_ms
 * old, and everything left when the server stops (srv_flusher.c).
 */
#ifndef PGNFS_SRV_FLUSHER_H
#define PGNFS_SRV_FLUSHER_H

#include "cfg.h"
#include "dbfs.h"

typedef struct srv_flusher srv_flusher;

/*
 * srv_flusher_start -- start the thread that stores buffered writes once
 * they are [writeback] max_age_ms old. Returns it, or NULL when
 * write-back is off (or the thread could not start: logged).
 */
srv_flusher *srv_flusher_start(dbfs *fs, const cfg *c);

/*
 * srv_flusher_stop -- store everything still buffered (retrying a while
 * if the database is away; what cannot be stored is logged), stop the
 * thread and free f. Call after the workers have stopped. NULL is fine.
 */
void srv_flusher_stop(srv_flusher *f);

#endif /* PGNFS_SRV_FLUSHER_H */
