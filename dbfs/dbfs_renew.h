/*
 * dbfs_renew.h -- connections opened anew: what the owners of a file
 * system's database connections do when a renewal is asked (dbfs_renew.c).
 *
 * Why. A PostgreSQL backend keeps the last WAL segment it wrote open until
 * it writes WAL again. When a checkpoint deletes that segment, an idle
 * backend's descriptor keeps its 16 MiB on the disk. The space guard
 * (dbfs_space.c) runs a CHECKPOINT after removals to give space back, and
 * then asks for a renewal: every connection of the file system (the
 * workers', the flusher's, the lock manager's, the frontend sessions') is
 * connected again, so every old backend exits and what it held open is
 * freed. Until all have been, a data write that does not fit answers
 * -EAGAIN (JUKEBOX) rather than -ENOSPC.
 *
 * A connection that is used renews itself before its next batch or
 * statement. An owner whose connection may sit idle registers a wake-up
 * (dbfs_renew_watch) and, when woken, calls dbfs_conn_tend on its own
 * thread.
 */
#ifndef PGNFS_DBFS_RENEW_H
#define PGNFS_DBFS_RENEW_H

#include "dbfs.h"

/*
 * dbfs_conn_tend -- if a renewal was asked since c was connected, connect
 * it again now (waiting, a few seconds at most, until its old backend has
 * exited). Call it on c's owning thread, between calls. Returns 0 (also
 * when nothing was due, or c is NULL), or -EAGAIN when the new connection
 * failed (c is then broken and its next use reconnects, as after any loss).
 */
int dbfs_conn_tend(dbfs_conn *c);

/*
 * dbfs_renew_watch -- have wake(arg) called, on whichever thread asks for
 * a renewal, each time one is asked: it should only wake the owner (push
 * a job, write an eventfd), never block, and never call into dbfs.
 * Returns a watch id (>= 0) for dbfs_renew_unwatch, or -ENOSPC when
 * DBFS_RENEW_WATCHERS are registered already (logged; the owner's
 * connections then renew at their next use only).
 */
int dbfs_renew_watch(dbfs *fs, void (*wake)(void *arg), void *arg);

/* dbfs_renew_unwatch -- stop calling watch id (< 0: nothing); once it
 * returns, its wake is not running and will not be called. */
void dbfs_renew_unwatch(dbfs *fs, int id);

#endif /* PGNFS_DBFS_RENEW_H */
