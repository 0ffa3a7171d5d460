/*
 * nlm4_bg.c -- the lock service's background thread (nlm4_int.h), with
 * the database connection of its dbfs_lock_watch. Each turn of its loop:
 *
 *   grace     at the grace period's end (or when a call found it over),
 *             dbfs_lock_grace_end: the locks nobody reclaimed go, the
 *             requests they held up are granted and called back
 *   grants    a NOTIFY for this server (another server granted one of its
 *             requests), or a connection made again: dbfs_lock_take, and
 *             the callbacks
 *   retries   outgoing calls whose time for another attempt has come
 *   figures   locks held and waiting, every NLM4_BG_COUNT_US
 *   gc        owners and hosts that hold nothing, every NLM4_BG_GC_US
 *
 * then it sleeps in poll(2) on the watch's socket and its eventfd (woken
 * by nlm4_bg_grace_over, nlm4_bg_stop and a renewal of the file system's
 * connections, which the watch's drain carries out) for at most a second.
 *
 * NOTES
 *   A database that is away only delays this work: every step is tried
 *   again on a later turn. The retry queue is bounded (NLM4_RETRY_MAX);
 *   what does not fit fails for good (counted, the lock stays granted).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dbfs_renew.h"
#include "nlm4_int.h"

#define NLM4_BG_COUNT_US (5 * G_USEC_PER_SEC)
#define NLM4_BG_GC_US    (60 * G_USEC_PER_SEC)
#define NLM4_BG_POLL_MS  1000

typedef struct {
    int64_t next_count, next_gc;
    bool take; /* look for grants made by others (first turn: yes) */
} nlm4_bg_turn;

/* nlm4_bg_grace_over -- see nlm4_int.h: the thread asks the database. */
void nlm4_bg_grace_over(nlm4_svc *svc)
{
    uint64_t one = 1;

    if (atomic_load(&svc->grace_until_us) == 0 || svc->wake_fd < 0)
        return;
    atomic_store(&svc->grace_check, true);
    if (write(svc->wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
        g_debug("nlm: cannot wake the background thread: %s", g_strerror(errno));
}

/* dbfs's renewal watcher: wake the thread, whose drain renews the watch's
 * session (dbfs_renew.h). */
static void nlm4_bg_renew(void *arg)
{
    nlm4_svc *svc = arg;
    uint64_t one = 1;

    if (write(svc->wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
        g_debug("nlm: cannot wake the background thread: %s", g_strerror(errno));
}

/* The grace period's end, when it is due or a call found it over. */
static void nlm4_bg_grace(nlm4_svc *svc)
{
    int64_t until = atomic_load(&svc->grace_until_us);
    dbfs_lock_result res;

    if (until == 0)
        return;
    if (g_get_monotonic_time() < until && !atomic_exchange(&svc->grace_check, false))
        return;
    if (dbfs_lock_grace_end(dbfs_lock_watch_conn(svc->watch), &svc->ls, &res) != 0)
        return;
    nlm4_grant_calls(svc, &res);
    if (!res.grace) {
        atomic_store(&svc->grace_until_us, 0);
        g_message("nlm: the grace period is over; new locks are granted");
    }
    dbfs_lock_result_free(&res);
}

/* Grants other servers made for ours. */
static void nlm4_bg_take(nlm4_svc *svc, nlm4_bg_turn *t)
{
    dbfs_lock_result res;
    bool mine = false;

    if (dbfs_lock_watch_drain(svc->watch, svc->ls.srv, &mine) == 0 && mine)
        t->take = true;
    if (!t->take || dbfs_lock_take(dbfs_lock_watch_conn(svc->watch), &svc->ls, &res) != 0)
        return;
    t->take = false;
    nlm4_grant_calls(svc, &res);
    dbfs_lock_result_free(&res);
}

/* Outgoing calls due for another attempt. */
static void nlm4_bg_retries(nlm4_svc *svc)
{
    int64_t now = g_get_monotonic_time();

    for (;;) {
        nlm4_out *o;

        g_mutex_lock(&svc->retry_lock);
        o = g_queue_peek_head(&svc->retry);
        if (o && o->due_us <= now)
            g_queue_pop_head(&svc->retry);
        else
            o = NULL;
        g_mutex_unlock(&svc->retry_lock);
        if (!o)
            return;
        nlm4_out_send(o);
    }
}

/* The figures and the garbage collection, when due. */
static void nlm4_bg_periodic(nlm4_svc *svc, nlm4_bg_turn *t)
{
    int64_t now = g_get_monotonic_time();
    dbfs_conn *c = dbfs_lock_watch_conn(svc->watch);
    dbfs_lock_counts n;

    if (now >= t->next_count) {
        t->next_count = now + NLM4_BG_COUNT_US;
        if (dbfs_lock_count(c, svc->ls.srv, &n) == 0) {
            atomic_store(&svc->held, n.held);
            atomic_store(&svc->waiting, n.waiting);
        }
    }
    if (now >= t->next_gc) {
        int gone;

        t->next_gc = now + NLM4_BG_GC_US;
        gone = dbfs_lock_gc(c);
        if (gone > 0)
            g_debug("nlm: forgot %d lock owners that hold nothing", gone);
    }
}

/* Sleep until something happens, a second at most. */
static void nlm4_bg_sleep(nlm4_svc *svc)
{
    struct pollfd p[2] = {{.fd = svc->wake_fd, .events = POLLIN},
                          {.fd = dbfs_lock_watch_fd(svc->watch), .events = POLLIN}};
    uint64_t v;

    if (poll(p, p[1].fd >= 0 ? 2 : 1, NLM4_BG_POLL_MS) > 0 && (p[0].revents & POLLIN) &&
        read(svc->wake_fd, &v, sizeof v) < 0 && errno != EAGAIN)
        g_debug("nlm: reading the wake-up counter: %s", g_strerror(errno));
}

static gpointer nlm4_bg_main(gpointer arg)
{
    nlm4_svc *svc = arg;
    nlm4_bg_turn t = {
        .next_count = 0, .next_gc = g_get_monotonic_time() + NLM4_BG_GC_US, .take = true};

    while (!atomic_load(&svc->stopping)) {
        nlm4_bg_grace(svc);
        nlm4_bg_take(svc, &t);
        nlm4_bg_retries(svc);
        nlm4_bg_periodic(svc, &t);
        nlm4_bg_sleep(svc);
    }
    return NULL;
}

/* nlm4_bg_start -- see nlm4_int.h. */
int nlm4_bg_start(nlm4_svc *svc)
{
    GError *e = NULL;

    svc->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (svc->wake_fd < 0) {
        g_critical("nlm: cannot make an eventfd: %s", g_strerror(errno));
        return -1;
    }
    svc->bg = g_thread_try_new("pgnfs-nlm", nlm4_bg_main, svc, &e);
    if (!svc->bg) {
        g_critical("nlm: cannot start the background thread: %s", e->message);
        g_error_free(e);
        return -1;
    }
    svc->renew_watch = dbfs_renew_watch(svc->fs, nlm4_bg_renew, svc);
    return 0;
}

/* nlm4_bg_stop -- see nlm4_int.h. */
void nlm4_bg_stop(nlm4_svc *svc)
{
    uint64_t one = 1;
    nlm4_out *o;

    dbfs_renew_unwatch(svc->fs, svc->renew_watch);
    svc->renew_watch = -1;
    atomic_store(&svc->stopping, true);
    if (svc->bg) {
        if (write(svc->wake_fd, &one, sizeof one) < 0)
            g_debug("nlm: cannot wake the background thread: %s", g_strerror(errno));
        g_thread_join(svc->bg);
        svc->bg = NULL;
    }
    g_mutex_lock(&svc->retry_lock);
    while ((o = g_queue_pop_head(&svc->retry)) != NULL)
        nlm4_out_free(o);
    g_mutex_unlock(&svc->retry_lock);
}
