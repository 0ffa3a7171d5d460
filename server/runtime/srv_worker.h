/*
 * srv_worker.h -- the worker threads: each owns one database connection
 * and a queue of calls (srv_job); it dispatches a call and hands the
 * reply to the job's sink. The workers know no sockets: a job carries
 * where its reply goes as a small interface (srv_job_ops) that whoever
 * made the job implements (the transport: a TCP connection, a UDP
 * socket), so calls go one way, from the transport to the workers.
 */
#ifndef PGNFS_SRV_WORKER_H
#define PGNFS_SRV_WORKER_H

#include <stdbool.h>
#include <stddef.h>

#include "dbfs.h"
#include "srv_dispatch.h"

typedef struct srv_job srv_job;

/* Where a job's reply goes. Both are called on the worker's thread. */
typedef struct {
    /* Send the reply record rec[0..len) (no record mark): the call is
     * finished as far as the client can tell. */
    void (*reply)(srv_job *job, const void *rec, size_t len);
    /* The job is finished (replied or dropped): release what it holds of
     * the sink, then free it (srv_job_free). */
    void (*done)(srv_job *job);
} srv_job_ops;

/* One call for a worker. */
struct srv_job {
    const srv_job_ops *ops;
    void *sink; /* the maker's: its connection, its socket */
    srv_origin from;
    unsigned char *rec; /* g_malloc'd, owned by the job */
    size_t len;
    bool replied; /* the sink's: reply was called */
};

/* srv_job_free -- free a job and its record (not what sink refers to). */
void srv_job_free(srv_job *job);

typedef struct srv_workers srv_workers;

/*
 * srv_workers_new -- n workers (not started) that dispatch through env
 * with connections to fs; on_exit(user) is called by each worker thread
 * as it exits (to wake whoever waits for them). Cannot fail.
 */
srv_workers *srv_workers_new(unsigned n, dbfs *fs, const srv_env *env, void (*on_exit)(void *),
                             void *user);

/*
 * srv_workers_start -- start the threads; each opens its own database
 * connection (an unreachable database is retried). Returns 0, or -1 after
 * logging why a thread could not start (those that started are stopped by
 * srv_workers_stop and srv_workers_join).
 */
int srv_workers_start(srv_workers *w);

/*
 * srv_workers_submit -- queue job on the lowest-numbered idle worker
 * whose database connection is up, else on the least busy (srv_worker.c);
 * the job belongs to the workers from now on. When no worker can take it
 * (stopping, none started) it is finished at once: ops->done without a
 * reply. Called by one thread (the event thread).
 */
void srv_workers_submit(srv_workers *w, srv_job *job);

/* srv_workers_stop -- ask every worker to exit after its queued jobs; no
 * job is taken from now on. */
void srv_workers_stop(srv_workers *w);

/* srv_workers_running -- worker threads that have not exited. Thread-safe. */
unsigned srv_workers_running(srv_workers *w);

/* srv_workers_count -- workers configured. */
unsigned srv_workers_count(const srv_workers *w);

/* srv_workers_pending -- calls queued or running (for the metrics). Thread-safe. */
unsigned srv_workers_pending(srv_workers *w);

/*
 * srv_workers_join -- stop the workers, wait for them (each closes its
 * database connection), and finish the jobs still queued (ops->done).
 * The counts above stay readable.
 */
void srv_workers_join(srv_workers *w);

/* srv_workers_free -- srv_workers_join, then free w (NULL is fine). */
void srv_workers_free(srv_workers *w);

#endif /* PGNFS_SRV_WORKER_H */
