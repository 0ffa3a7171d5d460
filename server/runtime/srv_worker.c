/*
 * srv_worker.c -- worker threads (srv_worker.h): each owns one database
 * connection and a queue of calls from the event thread; it dispatches a
 * call, hands the reply to the job's sink and takes the next.
 *
 *   A worker's database connection:
 *
 *     start --dbfs_conn_open ok--> CONNECTED --(dbfs resets a broken
 *       |                            ^          connection itself and
 *       | fails                      |          answers -EAGAIN meanwhile)
 *       v                            | dbfs_conn_open ok
 *     DOWN: calls that need the database get their program's "try again
 *           later" result or are dropped (srv_dispatch.c); before a call,
 *           a new attempt if SRV_RECONNECT_US has passed since the last one
 *
 *   A worker's life: RUNNING (pop, dispatch, reply) --stop job--> EXITED
 *   (its connection closed, on_exit called).
 *
 *   Renewals (dbfs_renew.h): when the space guard asks for every database
 *   connection to be opened anew, each worker gets a renew job (jobs with
 *   srv_worker_renew_ops), so an idle one does it at once
 *   (dbfs_conn_tend); a busy one has done it before its next batch.
 *
 * NOTES
 *   Queues: one per worker (srv_wq: its lock is shared only by the event
 *   thread and that worker; there is no lock common to all calls). The
 *   pusher wakes a sleeping worker after it has let the lock go, so the
 *   woken worker does not meet the lock still held (GAsyncQueue signals
 *   under its lock: two more futex calls and often a context switch per
 *   call).
 *   The event thread puts a call on the lowest-numbered idle worker whose
 *   database connection is up, so light load stays on a few connections
 *   whose backends are warm (their caches, plans and pages); when none is
 *   idle, on the worker with the fewest calls queued or running, those
 *   with a connection first. A worker whose connection is down is offered
 *   calls only when no other can take them, so it tries to connect again
 *   by itself (every SRV_RECONNECT_US while it waits for calls).
 *   Stacks are SRV_WORKER_STACK: rpcgen's XDR recurses once per entry of
 *   a READDIR/READDIRPLUS reply.
 *   A job and its record belong to the worker once queued; its ops->done
 *   frees them (a big record goes back to the buffer pool, srv_pool.h).
 *   Memory a worker keeps between its calls: the reply buffer (up to
 *   SRV_OUT_KEEP) and its request memory blocks (srv_req_keep_begin), so
 *   that a call in the steady state allocates nothing and touches no
 *   fresh page.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <glib.h>

#include "dbfs_renew.h"
#include "srv_pool.h"
#include "srv_worker.h"

/* Minimum time between two connection attempts of one worker. */
#define SRV_RECONNECT_US (1 * G_USEC_PER_SEC)
/* A reply buffer grown beyond this is released after the call. */
#define SRV_OUT_KEEP (4u * 1024u * 1024u)
/* Worker thread stack: rpcgen's XDR recurses once per READDIR entry. */
#define SRV_WORKER_STACK (16u * 1024u * 1024u)

/* A worker's queue of srv_job *: many may push (the event thread, a
 * renewal), its worker pops. */
typedef struct {
    GMutex lock;
    GCond cond;
    GQueue jobs;   /* under lock */
    bool sleeping; /* under lock: the worker waits on cond */
} srv_wq;

static void srv_wq_init(srv_wq *q)
{
    g_mutex_init(&q->lock);
    g_cond_init(&q->cond);
    g_queue_init(&q->jobs);
    q->sleeping = false;
}

static void srv_wq_clear(srv_wq *q)
{
    g_queue_clear(&q->jobs);
    g_cond_clear(&q->cond);
    g_mutex_clear(&q->lock);
}

/* Queue job; wake the worker if it sleeps, once the lock is free. */
static void srv_wq_push(srv_wq *q, srv_job *job)
{
    bool wake;

    g_mutex_lock(&q->lock);
    g_queue_push_tail(&q->jobs, job);
    wake = q->sleeping;
    q->sleeping = false;
    g_mutex_unlock(&q->lock);
    if (wake)
        g_cond_signal(&q->cond);
}

/* The next job, waiting for one until `until` (g_get_monotonic_time;
 * 0: for ever). NULL when none came in time. */
static srv_job *srv_wq_pop(srv_wq *q, int64_t until)
{
    srv_job *job;

    g_mutex_lock(&q->lock);
    while ((job = g_queue_pop_head(&q->jobs)) == NULL) {
        q->sleeping = true;
        if (until == 0)
            g_cond_wait(&q->cond, &q->lock);
        else if (!g_cond_wait_until(&q->cond, &q->lock, until)) {
            job = g_queue_pop_head(&q->jobs);
            break;
        }
    }
    q->sleeping = false;
    g_mutex_unlock(&q->lock);
    return job;
}

/* The next job if one is queued, else NULL. */
static srv_job *srv_wq_try_pop(srv_wq *q)
{
    srv_job *job;

    g_mutex_lock(&q->lock);
    job = g_queue_pop_head(&q->jobs);
    g_mutex_unlock(&q->lock);
    return job;
}

typedef struct {
    srv_workers *all;
    unsigned index;
    pthread_t thread;
    bool started, stop_sent;
    srv_wq queue;            /* the stop job has no ops */
    atomic_uint pending;     /* jobs queued or running */
    dbfs_conn *db;           /* NULL while the database is unreachable */
    atomic_bool up;          /* db is open (read by the event thread) */
    bool db_down;            /* the last connection attempt failed (logged once) */
    int64_t next_connect_us; /* monotonic: earliest reconnection attempt */
    srv_buf out;             /* reply buffer, reused */
} srv_worker;

struct srv_workers {
    dbfs *fs;
    const srv_env *env;
    void (*on_exit)(void *);
    void *user;
    srv_worker *w;
    unsigned n;
    bool stopping;
    atomic_uint running;
    int renew_watch; /* dbfs_renew_watch's id; -1: none */
};

void srv_job_free(srv_job *job)
{
    if (!job)
        return;
    srv_pool_put(job->rec);
    g_free(job);
}

/* Try to (re)connect if it is time to. */
static void srv_worker_connect(srv_worker *w)
{
    int64_t now = g_get_monotonic_time();
    int rc;

    if (w->db || now < w->next_connect_us)
        return;
    rc = dbfs_conn_open(w->all->fs, &w->db);
    if (rc == 0) {
        if (w->db_down)
            g_message("worker %u: database connection is back", w->index);
        w->db_down = false;
        atomic_store(&w->up, true);
        return;
    }
    w->db = NULL;
    w->next_connect_us = now + SRV_RECONNECT_US;
    if (!w->db_down)
        g_warning("worker %u: cannot connect to the database (%s): calls that need it answer "
                  "\"try again later\" until it is back",
                  w->index, g_strerror(-rc));
    w->db_down = true;
}

/* A renew job is freed by whoever ends it (a worker, or srv_workers_join). */
static void srv_worker_renew_done(srv_job *job)
{
    srv_job_free(job);
}

static const srv_job_ops srv_worker_renew_ops = {.reply = NULL, .done = srv_worker_renew_done};

/* dbfs's renewal watcher: a renew job for every worker (from the thread
 * that asked for the renewal; pushing is all it does). */
static void srv_workers_renew(void *arg)
{
    srv_workers *all = arg;

    for (unsigned i = 0; i < all->n; i++) {
        srv_job *job;

        if (!all->w[i].started)
            continue;
        job = g_new0(srv_job, 1);
        job->ops = &srv_worker_renew_ops;
        srv_wq_push(&all->w[i].queue, job);
    }
}

/* One call: dispatch, reply, finish. */
static void srv_worker_run(srv_worker *w, srv_job *job)
{
    srv_worker_connect(w);
    if (w->db)
        dbfs_conn_request(w->db);
    if (srv_dispatch_record(w->all->env, w->db, job->rec, job->len, &job->from, &w->out) ==
        SRV_DISPATCH_REPLY)
        job->ops->reply(job, srv_buf_msg(&w->out), w->out.len);
    job->ops->done(job);
    atomic_fetch_sub(&w->pending, 1);
    if (w->out.cap > SRV_OUT_KEEP)
        srv_buf_clear(&w->out);
}

static void *srv_worker_main(void *arg)
{
    srv_worker *w = arg;
    srv_workers *all = w->all;

    srv_req_keep_begin();
    srv_worker_connect(w);
    for (;;) {
        srv_job *job;

        /* Down: try again now and then, since calls go to others. */
        if (w->db)
            job = srv_wq_pop(&w->queue, 0);
        else if ((job = srv_wq_pop(&w->queue, g_get_monotonic_time() + SRV_RECONNECT_US)) == NULL) {
            srv_worker_connect(w);
            continue;
        }
        if (!job->ops) {
            srv_job_free(job);
            break;
        }
        if (job->ops == &srv_worker_renew_ops) {
            dbfs_conn_tend(w->db);
            srv_job_free(job);
            continue;
        }
        srv_worker_run(w, job);
    }
    if (w->db) {
        atomic_store(&w->up, false);
        dbfs_conn_close(w->db);
        w->db = NULL;
    }
    srv_req_keep_end();
    atomic_fetch_sub(&all->running, 1);
    if (all->on_exit)
        all->on_exit(all->user);
    return NULL;
}

srv_workers *srv_workers_new(unsigned n, dbfs *fs, const srv_env *env, void (*on_exit)(void *),
                             void *user)
{
    srv_workers *all = g_new0(srv_workers, 1);

    all->fs = fs;
    all->env = env;
    all->on_exit = on_exit;
    all->user = user;
    all->n = n;
    all->w = g_new0(srv_worker, n ? n : 1);
    all->renew_watch = -1;
    atomic_init(&all->running, 0);
    for (unsigned i = 0; i < n; i++) {
        srv_worker *w = &all->w[i];
        w->all = all;
        w->index = i;
        srv_wq_init(&w->queue);
        atomic_init(&w->pending, 0);
        atomic_init(&w->up, false);
    }
    return all;
}

int srv_workers_start(srv_workers *all)
{
    pthread_attr_t attr;
    int rc = 0;

    srv_pool_tune_malloc();
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, SRV_WORKER_STACK);
    for (unsigned i = 0; i < all->n; i++) {
        srv_worker *w = &all->w[i];
        atomic_fetch_add(&all->running, 1);
        int err = pthread_create(&w->thread, &attr, srv_worker_main, w);
        if (err != 0) {
            atomic_fetch_sub(&all->running, 1);
            g_critical("cannot start worker thread %u of %u: %s", i + 1, all->n, g_strerror(err));
            rc = -1;
            break;
        }
        w->started = true;
    }
    pthread_attr_destroy(&attr);
    if (all->fs)
        all->renew_watch = dbfs_renew_watch(all->fs, srv_workers_renew, all);
    return rc;
}

/* Which worker takes the next call: the lowest-numbered idle one with its
 * connection up; else the one with the fewest calls, connection up first,
 * the lowest-numbered among equals. NULL when none started. */
static srv_worker *srv_workers_pick(srv_workers *all)
{
    srv_worker *best = NULL;
    unsigned best_pending = 0;
    bool best_up = false;

    for (unsigned i = 0; i < all->n; i++) {
        srv_worker *w = &all->w[i];
        unsigned p = atomic_load(&w->pending);
        bool up = atomic_load(&w->up);

        if (!w->started)
            continue;
        if (p == 0 && up)
            return w;
        if (!best || (up && !best_up) || (up == best_up && p < best_pending)) {
            best = w;
            best_pending = p;
            best_up = up;
        }
    }
    return best;
}

void srv_workers_submit(srv_workers *all, srv_job *job)
{
    srv_worker *w = all->stopping ? NULL : srv_workers_pick(all);

    if (!w) { /* stopping, or no worker thread runs (start-up failed) */
        job->ops->done(job);
        return;
    }
    atomic_fetch_add(&w->pending, 1);
    srv_wq_push(&w->queue, job);
}

void srv_workers_stop(srv_workers *all)
{
    all->stopping = true;
    for (unsigned i = 0; i < all->n; i++) {
        srv_worker *w = &all->w[i];
        if (!w->started || w->stop_sent)
            continue;
        srv_wq_push(&w->queue, g_new0(srv_job, 1));
        w->stop_sent = true;
    }
}

unsigned srv_workers_running(srv_workers *all)
{
    return atomic_load(&all->running);
}

unsigned srv_workers_count(const srv_workers *all)
{
    return all->n;
}

unsigned srv_workers_pending(srv_workers *all)
{
    unsigned n = 0;

    for (unsigned i = 0; i < all->n; i++)
        n += atomic_load(&all->w[i].pending);
    return n;
}

void srv_workers_join(srv_workers *all)
{
    srv_job *job;

    dbfs_renew_unwatch(all->fs, all->renew_watch);
    all->renew_watch = -1;
    srv_workers_stop(all);
    for (unsigned i = 0; i < all->n; i++) {
        srv_worker *w = &all->w[i];
        if (w->started)
            pthread_join(w->thread, NULL);
        w->started = false;
        while ((job = srv_wq_try_pop(&w->queue)) != NULL) {
            if (job->ops)
                job->ops->done(job);
            else
                srv_job_free(job);
        }
        atomic_store(&w->pending, 0);
    }
}

void srv_workers_free(srv_workers *all)
{
    if (!all)
        return;
    srv_workers_join(all);
    for (unsigned i = 0; i < all->n; i++) {
        srv_wq_clear(&all->w[i].queue);
        srv_buf_clear(&all->w[i].out);
    }
    g_free(all->w);
    g_free(all);
    srv_pool_drain();
}
