/*
 * pgnfsd_snap.h -- the server's snapshot thread: the schedule of
 * [snapshot] every and keep, and the reclaim of deleted snapshots
 * (dbfs_snap_tick), every few seconds on a session of its own.
 */
#ifndef PGNFS_PGNFSD_SNAP_H
#define PGNFS_PGNFSD_SNAP_H

#include "cfg.h"
#include "dbfs.h"

typedef struct pgnfsd_snap pgnfsd_snap;

/*
 * pgnfsd_snap_start -- start the thread for fs as c says. Returns it, or
 * NULL when it could not start (logged; snapshots are then taken and
 * reclaimed only by `pgnfs snapshot`). Never fails the server.
 */
pgnfsd_snap *pgnfsd_snap_start(dbfs *fs, const cfg *c);

/* pgnfsd_snap_stop -- stop and free it (NULL is ignored). */
void pgnfsd_snap_stop(pgnfsd_snap *s);

#endif /* PGNFS_PGNFSD_SNAP_H */
