/*
 * met.h -- the optional metrics endpoint of the daemon: GET
 * /metrics in the Prometheus text format (met.c lists the
 * series), served on [metrics] listen and port. It sits above the RPC
 * runtime, whose figures it shows (srv_rt_metrics), beside the caches
 * and the write-back buffer of the file system.
 */
#ifndef PGNFS_MET_H
#define PGNFS_MET_H

#include "cfg.h"
#include "dbfs.h"
#include "srv_rt.h"

typedef struct met met;

/* More series for the page (a program's own), appended to out; called on
 * the endpoint's thread, so it must be thread-safe. */
typedef void (*met_fn)(void *arg, GString *out);

/*
 * met_start -- when [metrics] enable is set in c, serve GET
 * /metrics for configuration c, runtime rt and file system fs, with the
 * series of more (may be NULL) called with more_arg (all must outlive the
 * endpoint), with libmicrohttpd's own thread; *out is the endpoint (NULL
 * when disabled; met_stop it). Returns 0, or -1 after logging why the
 * endpoint cannot be served (the port is taken, ...).
 */
int met_start(const cfg *c, srv_rt *rt, dbfs *fs, met_fn more, void *more_arg, met **out);

/* met_stop -- stop the endpoint and free m (NULL is fine). */
void met_stop(met *m);

#endif /* PGNFS_MET_H */
