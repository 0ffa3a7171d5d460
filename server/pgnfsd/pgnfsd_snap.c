/*
 * pgnfsd_snap.c -- the server's snapshot thread (pgnfsd_snap.h).
 *
 *   pgnfsd_snap_start --> RUNNING: every PGNFSD_SNAP_PERIOD_S seconds,
 *                         dbfs_snap_tick (take a scheduled snapshot when
 *                         one is due, delete those past keep, reclaim a
 *                         few steps of what deleted ones kept); no
 *                         connection: logged once, tried again next time
 *   pgnfsd_snap_stop  --> EXITED (joined, its session closed)
 *
 * NOTES
 *   With [snapshot] every = 0 it still reclaims what `pgnfs snapshot
 *   delete --no-wait` left. The thread owns its session; the pgnfsd_snap
 *   belongs to the caller of pgnfsd_snap_start until pgnfsd_snap_stop.
 */
#include <pthread.h>

#include <glib.h>

#include "dbfs_snap.h"
#include "pgnfsd_snap.h"

/* Seconds between ticks. */
#define PGNFSD_SNAP_PERIOD_S 5

struct pgnfsd_snap {
    dbfs *fs;
    uint64_t every_s;
    unsigned keep;
    char *prefix;
    pthread_t thread;
    GMutex lock;
    GCond cond;
    bool stop;
};

static void *pgnfsd_snap_main(void *arg)
{
    pgnfsd_snap *s = arg;
    dbfs_conn *session = NULL;
    bool warned = false, stop = false;

    while (!stop) {
        int rc = dbfs_snap_tick(s->fs, &session, s->every_s, s->keep, s->prefix);

        if (rc < 0 && !warned)
            g_warning("snapshots: the schedule and reclaim cannot run (%s); trying again",
                      g_strerror(-rc));
        warned = rc < 0;
        g_mutex_lock(&s->lock);
        if (!s->stop)
            g_cond_wait_until(&s->cond, &s->lock,
                              g_get_monotonic_time() + PGNFSD_SNAP_PERIOD_S * G_TIME_SPAN_SECOND);
        stop = s->stop;
        g_mutex_unlock(&s->lock);
    }
    dbfs_conn_close(session);
    return NULL;
}

/* pgnfsd_snap_start -- see pgnfsd_snap.h. */
pgnfsd_snap *pgnfsd_snap_start(dbfs *fs, const cfg *c)
{
    pgnfsd_snap *s = g_new0(pgnfsd_snap, 1);

    s->fs = fs;
    s->every_s = c->snap_every;
    s->keep = c->snap_keep;
    s->prefix = g_strdup(c->snap_prefix);
    g_mutex_init(&s->lock);
    g_cond_init(&s->cond);
    if (pthread_create(&s->thread, NULL, pgnfsd_snap_main, s) != 0) {
        g_warning("snapshots: cannot start a thread: no scheduled snapshots, and deleted ones "
                  "are reclaimed only by `pgnfs snapshot reclaim`");
        g_mutex_clear(&s->lock);
        g_cond_clear(&s->cond);
        g_free(s->prefix);
        g_free(s);
        return NULL;
    }
    if (s->every_s > 0)
        g_info("snapshots: one every %" G_GUINT64_FORMAT " s named %s<time>, %u kept (0: all)",
               s->every_s, s->prefix, s->keep);
    return s;
}

/* pgnfsd_snap_stop -- see pgnfsd_snap.h. */
void pgnfsd_snap_stop(pgnfsd_snap *s)
{
    if (!s)
        return;
    g_mutex_lock(&s->lock);
    s->stop = true;
    g_cond_signal(&s->cond);
    g_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    g_mutex_clear(&s->lock);
    g_cond_clear(&s->cond);
    g_free(s->prefix);
    g_free(s);
}
