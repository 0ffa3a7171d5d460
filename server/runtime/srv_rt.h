/*
 * srv_rt.h -- the RPC runtime as the daemon drives it: make one
 * (srv_rt_new), register programs (srv_rt_register, see srv.h for the
 * descriptor), open listeners that serve some of them (srv_rt_listen),
 * run until SIGINT or SIGTERM (srv_rt_run), free it. The runtime knows no
 * program: NFS, MOUNT and the portmapper are all registered this way.
 *
 *   srv_rt_new --> srv_rt_register, srv_rt_listen (any order) --> srv_rt_run
 *              --> srv_rt_free
 *
 * NOTES
 *   Everything before srv_rt_run happens on one thread; the descriptors
 *   registered, the listeners' admit_user and the ctx must outlive the
 *   runtime. The caller blocks SIGINT, SIGTERM and SIGUSR1 in every
 *   thread before srv_rt_new (threads inherit the mask): the runtime
 *   reads them from a signalfd.
 */
#ifndef PGNFS_SRV_RT_H
#define PGNFS_SRV_RT_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "dbfs.h"
#include "srv.h"
#include "srv_listen.h"

typedef struct srv_rt srv_rt;

typedef struct {
    dbfs *fs;                 /* each worker opens its own connection to it */
    srv_ctx *ctx;             /* handed to every handler as req->srv */
    unsigned threads;         /* worker threads (= database connections) */
    unsigned max_connections; /* TCP connections at once, every listener */
    unsigned max_per_address; /* from one client address; 0 = no cap */
    unsigned drc_entries;     /* duplicate request cache; 0 = none */
    unsigned slow_ms;         /* log calls that take this long; 0 = never */
} srv_rt_config;

/*
 * srv_rt_new -- a runtime with no programs and no listeners. Returns it,
 * or NULL after logging why the event loop cannot be set up.
 */
srv_rt *srv_rt_new(const srv_rt_config *c);

/*
 * srv_rt_register -- serve program version p (see srv.h) on the listeners
 * that name its program number, before or after they are opened. Register
 * every version of a program the same way: a call for another version gets
 * PROG_MISMATCH with the lowest and highest registered. Returns 0,
 * -EEXIST (this program and version are registered), -EINVAL (no name or
 * no procedures) or -ENOSPC (SRV_PROGS_MAX reached), with a log line.
 */
int srv_rt_register(srv_rt *rt, const srv_program *p);

/*
 * srv_rt_listen -- bind l's address (TCP, and UDP if asked) and serve the
 * programs l names there (every version registered, now or later). *port
 * is the port bound. Returns 0,
 * or -errno (nothing kept; logs nothing: the caller says what it means)
 * with *failed naming what could not be bound ("tcp", "udp", ...).
 */
int srv_rt_listen(srv_rt *rt, const srv_listen *l, unsigned *port, const char **failed);

/* One program version served at a port (srv_rt_mappings). */
typedef void (*srv_rt_mapping_fn)(void *user, const srv_program *p, bool tcp, unsigned port);

/*
 * srv_rt_mappings -- call fn for every (program version, transport, port)
 * the listeners serve, in the order listeners and programs were added
 * (what a portmapper announces). Cannot fail.
 */
void srv_rt_mappings(const srv_rt *rt, srv_rt_mapping_fn fn, void *user);

/*
 * srv_rt_run -- start the workers and serve until SIGINT or SIGTERM; then
 * finish the calls in progress, stop the workers and log the statistics.
 * Returns 0 after a clean shutdown, or -1 after logging why the workers
 * could not start.
 */
int srv_rt_run(srv_rt *rt);

/*
 * srv_rt_metrics -- the runtime's part of the metrics page (Prometheus
 * text format, appended to out): per-procedure counters and latency,
 * RPC events, replies by status, the database gauge, workers, calls in
 * progress, duplicate request cache entries. Thread-safe. Cannot fail.
 */
void srv_rt_metrics(srv_rt *rt, GString *out);

/* srv_rt_free -- close every socket and free rt (NULL is fine). */
void srv_rt_free(srv_rt *rt);

#endif /* PGNFS_SRV_RT_H */
