/*
 * pgnfsd_run.h -- the daemon's one entry: serve a pgnfs file system over
 * NFSv3 and MOUNTv3 (and the portmapper, as configured) until SIGINT or
 * SIGTERM. Called by `pgnfsd` and by `pgnfs serve`.
 */
#ifndef PGNFS_PGNFSD_RUN_H
#define PGNFS_PGNFSD_RUN_H

#include "cfg.h"
#include "dbfs.h"

/*
 * pgnfsd_run -- serve NFS and MOUNT (and NLM and NSM, [nlm] enable) for file
 * system fs with configuration c until SIGINT or SIGTERM: listeners,
 * workers (one dbfs_conn each), the lock service,
 * rpcbind registration or the built-in portmapper, the metrics endpoint.
 * Returns 0 after a clean shutdown, or -1 after logging why the server
 * could not start (port in use, ...).
 */
int pgnfsd_run(const cfg *c, dbfs *fs);

#endif /* PGNFS_PGNFSD_RUN_H */
