/*
 * pgnfsd_flusher.c -- the write-back flusher: a thread with a database
 * connection of its own that stores buffered UNSTABLE writes once they
 * are [writeback] max_age_ms old (dbfs_wb_flush_due), so data a client
 * never COMMITs does not wait in memory, and stores everything left when
 * the server stops. The same thread does the space guard's reclaim
 * (dbfs_space_tend: VACUUM after removals when the disk is at its
 * reserve) on a session of its own, so no request thread ever waits for
 * a VACUUM; requests meanwhile answer JUKEBOX.
 *
 *   pgnfsd_flusher_start --> RUNNING: every max_age_ms / 4 (50 .. 500 ms;
 *                         250 ms without write-back), flush what is due
 *                         and tend the space guard; no connection: retry
 *                         later
 *   pgnfsd_flusher_stop  --> (workers already joined) flush everything, at
 *                         most PGNFSD_FLUSHER_FINAL_TRIES times while the
 *                         database is away --> EXITED (joined, closed)
 *
 * NOTES
 *   Nothing here when write-back is off and space is not guarded
 *   (pgnfsd_flusher_start returns NULL). The flusher owns its connection and
 *   the guard's session; the pgnfsd_flusher belongs to the caller of
 *   pgnfsd_flusher_start until pgnfsd_flusher_stop frees it.
 */
#include <errno.h>
#include <pthread.h>

#include <glib.h>

#include "dbfs_renew.h"
#include "pgnfsd_flusher.h"

/* Attempts of the final flush while the database answers -EAGAIN. */
#define PGNFSD_FLUSHER_FINAL_TRIES 10
/* The period without write-back (the space guard's alone), in ms. */
#define PGNFSD_FLUSHER_SPACE_MS 250

struct pgnfsd_flusher {
    dbfs *fs;
    bool wb;         /* write-back is on */
    unsigned age_ms; /* its max_age_ms */
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
    int64_t period_us =
        f->wb ? CLAMP((int64_t)f->age_ms * 250, 50000, 500000) : PGNFSD_FLUSHER_SPACE_MS * 1000;
    dbfs_conn *c = NULL, *space = NULL;
    bool warned = false, stop = false;

    while (!stop) {
        g_mutex_lock(&f->lock);
        if (!f->stop)
            g_cond_wait_until(&f->cond, &f->lock, g_get_monotonic_time() + period_us);
        stop = f->stop;
        g_mutex_unlock(&f->lock);
        if (stop)
            break;
        if (f->wb && (c = pgnfsd_flusher_conn(f, c, &warned)) != NULL)
            dbfs_wb_flush_due(c, f->age_ms);
        dbfs_space_tend(f->fs, &space);
        /* After a reclaim's CHECKPOINT, this connection is opened anew
         * too (dbfs_renew.h), at once rather than at its next flush. */
        dbfs_conn_tend(c);
    }
    /* Everything, now; a flush the space guard holds back for a reclaim
     * gets it here too. */
    for (int i = 0; f->wb && i < PGNFSD_FLUSHER_FINAL_TRIES; i++) {
        c = pgnfsd_flusher_conn(f, c, &warned);
        if (c && dbfs_wb_flush_due(c, 0) != -EAGAIN)
            break;
        if (dbfs_space_tend(f->fs, &space) <= 0)
            g_usleep(G_USEC_PER_SEC / 2);
    }
    dbfs_conn_close(space);
    dbfs_conn_close(c);
    return NULL;
}

/* pgnfsd_flusher_start -- see pgnfsd_flusher.h. */
pgnfsd_flusher *pgnfsd_flusher_start(dbfs *fs, const cfg *c)
{
    dbfs_wb_stats st;
    pgnfsd_flusher *f;

    dbfs_wb_figures(fs, &st);
    if (!st.enabled && !dbfs_space_guarded(fs))
        return NULL;
    f = g_new0(pgnfsd_flusher, 1);
    f->fs = fs;
    f->wb = st.enabled;
    f->age_ms = c->wb_age_ms;
    g_mutex_init(&f->lock);
    g_cond_init(&f->cond);
    if (pthread_create(&f->thread, NULL, pgnfsd_flusher_main, f) != 0) {
        g_warning("write-back flusher: cannot start a thread: buffered data is stored only "
                  "by COMMIT and memory pressure, and space removals free is not reclaimed "
                  "(autovacuum's)");
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
