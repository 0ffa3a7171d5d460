/*
 * nlm4_svc.h -- the Network Lock Manager as the daemon and the status monitor
 * see it: a lock service (nlm4_svc) that registers NLM versions 1, 3 and
 * 4 (program 100021) with the RPC runtime, keeps its state in the
 * database (dbfs's file locks), calls clients back when their blocked
 * locks are granted, runs the grace period after a restart and tells the
 * hosts it monitors that it restarted.
 *
 *   nlm4_new --> nlm4_register (the runtime serves it) --> nlm4_start
 *   (after the listener is bound: its port) --> ... --> nlm4_free (after
 *   the runtime has stopped)
 *
 * NOTES
 *   The service owns an outgoing RPC client (srv_client.h) and one
 *   background thread with a database connection of its own
 *   (dbfs_lock_watch): the grace period's end, the grants other servers
 *   make for this one (LISTEN), retries of callbacks, garbage collection
 *   and the figures. Handlers run on the runtime's workers and never
 *   wait for a lock: a blocked request is stored and answered at once.
 *   Everything it makes it frees in nlm4_free.
 */
#ifndef PGNFS_NLM4_SVC_H
#define PGNFS_NLM4_SVC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "dbfs_locks.h"
#include "cfg.h"
#include "dbfs.h"
#include "srv.h"
#include "srv_rt.h"

typedef struct nlm4_svc nlm4_svc;

/* The program number of NLM, for the listener's list. */
#define NLM4_PROG 100021u

/*
 * nlm4_new -- a lock service for configuration c and file system fs (both
 * outlive it), with its descriptors built and its outgoing client
 * started. Returns it, or NULL after logging why not.
 */
nlm4_svc *nlm4_new(const cfg *c, dbfs *fs);

/* nlm4_register -- register NLM versions 1, 3 and 4 with rt. Returns 0
 * or srv_rt_register's error (logged). */
int nlm4_register(nlm4_svc *s, srv_rt *rt);

/* nlm4_programs_of -- the three descriptors (versions 1, 3, 4) nlm4_register
 * registers, owned by s, for whoever dispatches without a runtime (the
 * fuzz target). */
const srv_program *nlm4_programs_of(const nlm4_svc *s);

/*
 * nlm4_start -- the service starts as this server (its [nlm]
 * server_name), serving on port `port` (where it never calls back): the
 * server's next NSM state from the database, a grace period when it held
 * locks before, SM_NOTIFY to the hosts it monitors (in the background),
 * and the background thread. Returns 0, or -1 after logging why not (the
 * database is away).
 */
int nlm4_start(nlm4_svc *s, unsigned port);

/* nlm4_free -- stop the background thread and the outgoing client (calls
 * still pending are dropped), free s (NULL is fine). After the runtime. */
void nlm4_free(nlm4_svc *s);

/* nlm4_state -- the server's NSM state number (0 before nlm4_start). */
int32_t nlm4_state(const nlm4_svc *s);

/*
 * nlm4_host_rebooted -- host `name` (len bytes) has rebooted and is now in
 * NSM state `state` (SM_NOTIFY; with `all`, NLM FREE_ALL: every lock, any
 * state): free its locks and shares, call back whoever that grants, on
 * request req's connection. Returns 0, or -EAGAIN (the database is away:
 * the caller drops the request so that it comes again), or another
 * negative errno (logged).
 */
int nlm4_host_rebooted(nlm4_svc *s, srv_req *req, const void *name, size_t len, int32_t state,
                       bool all);

/* nlm4_metrics -- the lock service's series on the metrics page (appended
 * to out): locks held, requests waiting, grace period, callbacks. */
void nlm4_metrics(nlm4_svc *s, GString *out);

#endif /* PGNFS_NLM4_SVC_H */
