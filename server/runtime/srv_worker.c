/*
 * srv_worker.c -- worker threads: each owns one database connection and a
 * queue of calls from the event thread; it dispatches a call, writes the
 * reply itself (srv_conn_reply / srv_udp_reply) and takes the next.
 *
 *   A worker's database connection:
 *
 *     start --dbfs_conn_open ok--> CONNECTED --(dbfs resets a broken
 *       |                            ^          connection itself and
 *       | fails                      |          answers -EAGAIN meanwhile)
 *       v                            | dbfs_conn_open ok
 *     DOWN: NFS calls answer NFS3ERR_JUKEBOX, MOUNT calls are dropped;
 *           before a call, a new attempt if SRV_RECONNECT_US has passed
 *           since the last one
 *
 *   A worker's life: RUNNING (pop, dispatch, reply) --stop job--> EXITED
 *   (its connection closed, the event thread woken).
 *
 * NOTES
 *   Queues: one GAsyncQueue per worker (its lock is shared only by the
 *   event thread and that worker; there is no lock common to all calls).
 *   The event thread puts a call on the worker with the fewest calls
 *   queued or running, scanning from a rotating start.
 *   Stacks are SRV_WORKER_STACK: rpcgen's XDR recurses once per entry of
 *   a READDIR/READDIRPLUS reply.
 *   A job and its record belong to the worker once queued; it frees them.
 */
#include <errno.h>
#include <string.h>

#include "srv_int.h"

/* Minimum time between two connection attempts of one worker. */
#define SRV_RECONNECT_US (1 * G_USEC_PER_SEC)
/* A reply buffer grown beyond this is released after the call. */
#define SRV_OUT_KEEP (4u * 1024u * 1024u)

void srv_job_free(srv_job *job)
{
    if (!job)
        return;
    g_free(job->rec);
    g_free(job);
}

/* Try to (re)connect if it is time to. */
static void srv_worker_connect(srv_worker *w)
{
    int64_t now = g_get_monotonic_time();
    int rc;

    if (w->db || now < w->next_connect_us)
        return;
    rc = dbfs_conn_open(w->srv->ctx.fs, &w->db);
    if (rc == 0) {
        if (w->db_down)
            g_message("worker %u: database connection is back", w->index);
        w->db_down = false;
        return;
    }
    w->db = NULL;
    w->next_connect_us = now + SRV_RECONNECT_US;
    if (!w->db_down)
        g_warning("worker %u: cannot connect to the database (%s): NFS calls answer JUKEBOX "
                  "until it is back",
                  w->index, g_strerror(-rc));
    w->db_down = true;
}

static void *srv_worker_main(void *arg)
{
    srv_worker *w = arg;
    srv_server *s = w->srv;

    srv_worker_connect(w);
    for (;;) {
        srv_job *job = g_async_queue_pop(w->queue);
        if (job->stop) {
            srv_job_free(job);
            break;
        }
        srv_worker_connect(w);
        srv_dispatch_result r = srv_dispatch_record(&s->env, w->db, job->rec, job->len,
                                                    (const struct sockaddr *)&job->peer,
                                                    job->peerlen, job->conn != NULL, &w->out);
        if (r == SRV_DISPATCH_REPLY) {
            if (job->conn)
                srv_conn_reply(job->conn, w->out.data, w->out.len);
            else
                srv_udp_reply(s, (const struct sockaddr *)&job->peer, job->peerlen, w->out.data,
                              w->out.len);
        }
        if (job->conn)
            srv_conn_done(job->conn);
        else
            atomic_fetch_sub(&s->udp_pending, 1);
        srv_job_free(job);
        atomic_fetch_sub(&w->pending, 1);
        if (w->out.cap > SRV_OUT_KEEP)
            srv_buf_clear(&w->out);
    }
    if (w->db) {
        dbfs_conn_close(w->db);
        w->db = NULL;
    }
    atomic_fetch_sub(&s->workers_running, 1);
    srv_transport_wake(s);
    return NULL;
}

int srv_workers_start(srv_server *s)
{
    pthread_attr_t attr;
    int rc = 0;

    s->nworkers = s->cfg->threads;
    s->workers = g_new0(srv_worker, s->nworkers);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, SRV_WORKER_STACK);
    for (unsigned i = 0; i < s->nworkers; i++) {
        srv_worker *w = &s->workers[i];
        w->srv = s;
        w->index = i;
        w->queue = g_async_queue_new();
        atomic_init(&w->pending, 0);
    }
    for (unsigned i = 0; i < s->nworkers; i++) {
        srv_worker *w = &s->workers[i];
        atomic_fetch_add(&s->workers_running, 1);
        int err = pthread_create(&w->thread, &attr, srv_worker_main, w);
        if (err != 0) {
            atomic_fetch_sub(&s->workers_running, 1);
            g_critical("cannot start worker thread %u of %u: %s", i + 1, s->nworkers,
                       g_strerror(err));
            rc = -1;
            break;
        }
        w->started = true;
    }
    pthread_attr_destroy(&attr);
    return rc;
}

/* A job that will not run: release what it holds. */
static void srv_job_drop(srv_server *s, srv_job *job)
{
    if (job->conn)
        srv_conn_done(job->conn);
    else
        atomic_fetch_sub(&s->udp_pending, 1);
    srv_job_free(job);
}

void srv_workers_submit(srv_server *s, srv_job *job)
{
    srv_worker *best = NULL;
    unsigned best_pending = 0;

    if (s->stopping || s->nworkers == 0) {
        srv_job_drop(s, job);
        return;
    }
    for (unsigned k = 0; k < s->nworkers; k++) {
        srv_worker *w = &s->workers[(s->next_worker + k) % s->nworkers];
        unsigned p = atomic_load(&w->pending);
        if (!w->started)
            continue;
        if (!best || p < best_pending) {
            best = w;
            best_pending = p;
        }
        if (p == 0)
            break;
    }
    s->next_worker = (s->next_worker + 1) % s->nworkers;
    if (!best) { /* no worker thread runs (start-up failed) */
        srv_job_drop(s, job);
        return;
    }
    atomic_fetch_add(&best->pending, 1);
    g_async_queue_push(best->queue, job);
}

void srv_workers_stop(srv_server *s)
{
    for (unsigned i = 0; i < s->nworkers; i++) {
        srv_worker *w = &s->workers[i];
        if (!w->started || w->stop_sent)
            continue;
        srv_job *job = g_new0(srv_job, 1);
        job->stop = true;
        g_async_queue_push(w->queue, job);
        w->stop_sent = true;
    }
}

void srv_workers_join(srv_server *s)
{
    srv_job *job;

    srv_workers_stop(s);
    for (unsigned i = 0; i < s->nworkers; i++) {
        srv_worker *w = &s->workers[i];
        if (w->started)
            pthread_join(w->thread, NULL);
        while ((job = g_async_queue_try_pop(w->queue)) != NULL) {
            if (job->stop)
                srv_job_free(job);
            else
                srv_job_drop(s, job);
        }
        g_async_queue_unref(w->queue);
        srv_buf_clear(&w->out);
    }
    g_free(s->workers);
    s->workers = NULL;
    s->nworkers = 0;
}
