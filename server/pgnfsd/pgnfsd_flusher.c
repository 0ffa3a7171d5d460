/*
 * pgnfsd_flusher.c -- the write-back flusher: a thread with a database
 * connection of its own that stores buffered UNSTABLE writes once they
 * are [writeback] max_age_ms old (dbfs_wb_flush_due), so data a client
 * never COMMITs does not wait in memory, and stores everything left when
 * the server stops.
 *
 *   pgnfsd_flusher_start --> RUNNING: every max_age_ms / 4 (50 .. 500 ms),
 *                         flush what is due; no connection: retry later
 *   pgnfsd_flusher_stop  --> (workers already joined) flush everything, at
 *                         most PGNFSD_FLUSHER_FINAL_TRIES times while the
 *                         database is away --> EXITED (joined, closed)
 *
 * NOTES
 *   Nothing here when write-back is off (pgnfsd_flusher_start returns NULL).
 *   The flusher owns its connection; the pgnfsd_flusher belongs to the caller
 *   of pgnfsd_flusher_start until pgnfsd_flusher_stop frees it.
 */
#include <errno.h>
#include <pthread.h>

#include <glib.h>

#include "pgnfsd_flusher.h"

/* Attempts of the final flush while the database answers -EAGAIN. */
#define PGNFSD_FLUSHER_FINAL_TRIES 10

struct pgnfsd_flusher {
    dbfs *fs;
    unsigned age_ms;
    pthread_t thread;
    GMutex lock;
    GCond cond;
    bool stop;
};

/* Open c if it is not, logging the first failure only. */
static dbfs_conn *pgnfsd_flusher_conn(pgnfsd_flusher *f, dbfs_conn *c, bool *warned)
{
    int rc;

    if (c)
        return c;
    rc = dbfs_conn_open(f->fs, &c);
    if (rc == 0) {
        *warned = false;
        return c;
    }
    if (!*warned)
        g_warning("write-back flusher: no database connection (%s): buffered data waits",
                  g_strerror(-rc));
    *warned = true;
    return NULL;
}

static void *pgnfsd_flusher_main(void *arg)
{
    pgnfsd_flusher *f = arg;
    int64_t period_us = CLAMP((int64_t)f->age_ms * 250, 50000, 500000);
    dbfs_conn *c = NULL;
    bool warned = false, stop = false;

    while (!stop) {
        g_mutex_lock(&f->lock);
        if (!f->stop)
            g_cond_wait_until(&f->cond, &f->lock, g_get_monotonic_time() + period_us);
        stop = f->stop;
        g_mutex_unlock(&f->lock);
        c = pgnfsd_flusher_conn(f, c, &warned);
        if (c && !stop)
            dbfs_wb_flush_due(c, f->age_ms);
    }
    for (int i = 0; i < PGNFSD_FLUSHER_FINAL_TRIES; i++) {
        c = pgnfsd_flusher_conn(f, c, &warned);
        if (c && dbfs_wb_flush_due(c, 0) != -EAGAIN)
            break;
        g_usleep(G_USEC_PER_SEC / 2);
    }
    dbfs_conn_close(c);
    return NULL;
}

/* pgnfsd_flusher_start -- see pgnfsd_flusher.h. */
pgnfsd_flusher *pgnfsd_flusher_start(dbfs *fs, const cfg *c)
{
    dbfs_wb_stats st;
    pgnfsd_flusher *f;

    dbfs_wb_figures(fs, &st);
    if (!st.enabled)
        return NULL;
    f = g_new0(pgnfsd_flusher, 1);
    f->fs = fs;
    f->age_ms = c->wb_age_ms;
    g_mutex_init(&f->lock);
    g_cond_init(&f->cond);
    if (pthread_create(&f->thread, NULL, pgnfsd_flusher_main, f) != 0) {
        g_warning("write-back flusher: cannot start a thread: buffered data is stored only "
                  "by COMMIT and memory pressure");
        g_mutex_clear(&f->lock);
        g_cond_clear(&f->cond);
        g_free(f);
        return NULL;
    }
    return f;
}

/* pgnfsd_flusher_stop -- see pgnfsd_flusher.h. */
void pgnfsd_flusher_stop(pgnfsd_flusher *f)
{
    dbfs_wb_stats st;

    if (!f)
        return;
    g_mutex_lock(&f->lock);
    f->stop = true;
    g_cond_signal(&f->cond);
    g_mutex_unlock(&f->lock);
    pthread_join(f->thread, NULL);
    dbfs_wb_figures(f->fs, &st);
    if (st.bytes > 0)
        g_warning("write-back: %" G_GUINT64_FORMAT " files could not be stored at shutdown "
                  "(the database is away); clients will send them again",
                  st.files);
    g_mutex_clear(&f->lock);
    g_cond_clear(&f->cond);
    g_free(f);
}
