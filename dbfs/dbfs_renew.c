/*
 * dbfs_renew.c -- which connections of a file system are owed a new
 * server session (dbfs_renew.h says why), and the wait for an old backend
 * to exit.
 *
 *   epoch e, stale 0 --dbfs_renew_all--> epoch e+1, stale = open,
 *                                        watchers woken
 *   a connection of epoch e --dbfs_renew_done--> of epoch e+1, stale - 1
 *   a connection of epoch e --dbfs_renew_leave (closed)--> stale - 1
 *   stale > 0 for DBFS_RENEW_MAX_US --> dbfs_renew_pending answers 0
 *                                       (said once): the guard decides
 *                                       on the space it sees
 *
 * A new connection joins in the current epoch; a broken one that is reset
 * is done too (its old session is over). Two renewals in a row make every
 * connection owe one new session, not two.
 *
 * NOTES
 *   One mutex (fs->renew.lock) guards the counts and the watchers; the
 *   epoch is also read without it (dbfs_renew_due, on every batch). The
 *   watchers' wake-ups run under the mutex, so dbfs_renew_unwatch
 *   returning means its wake is not running. Below dbfs_conn.c: it reads
 *   a connection's fields and calls nothing there.
 *
 *   Why waiting for the socket works: a PostgreSQL backend leaves its end
 *   of the client socket open until the process dies ("so clients can
 *   perform a synchronous close", pqcomm.c), and the postmaster holds no
 *   copy. So once libpq has sent Terminate and closed its descriptor, a
 *   duplicate of it reads end-of-file exactly when the backend is gone,
 *   and with it every file the backend held open.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <glib.h>

#include "dbfs_conn.h"
#include "dbfs_int.h"

/* A renewal that some connection has not followed after this long no
 * longer holds the space guard's NOSPC back. */
#define DBFS_RENEW_MAX_US (30 * G_USEC_PER_SEC)
/* The longest wait for an old backend to exit. */
#define DBFS_RENEW_EXIT_US (5 * G_USEC_PER_SEC)

/* dbfs_renew_join -- see dbfs_conn.h. */
void dbfs_renew_join(dbfs *fs, dbfs_conn *c)
{
    g_mutex_lock(&fs->renew.lock);
    c->renew_fs = fs;
    c->epoch = atomic_load(&fs->renew.epoch);
    fs->renew.open++;
    g_mutex_unlock(&fs->renew.lock);
}

/* dbfs_renew_leave -- see dbfs_conn.h. */
void dbfs_renew_leave(dbfs_conn *c)
{
    dbfs *fs = c->renew_fs;

    if (!fs)
        return;
    g_mutex_lock(&fs->renew.lock);
    if (c->epoch != atomic_load(&fs->renew.epoch) && fs->renew.stale > 0)
        fs->renew.stale--;
    if (fs->renew.open > 0)
        fs->renew.open--;
    g_mutex_unlock(&fs->renew.lock);
    c->renew_fs = NULL;
}

/* dbfs_renew_due -- see dbfs_conn.h. */
bool dbfs_renew_due(const dbfs_conn *c)
{
    return c->renew_fs && c->epoch != atomic_load(&c->renew_fs->renew.epoch);
}

/* dbfs_renew_done -- see dbfs_conn.h. */
void dbfs_renew_done(dbfs_conn *c)
{
    dbfs *fs = c->renew_fs;
    uint64_t epoch;

    if (!fs || !dbfs_renew_due(c))
        return;
    g_mutex_lock(&fs->renew.lock);
    epoch = atomic_load(&fs->renew.epoch);
    if (c->epoch != epoch) {
        c->epoch = epoch;
        if (fs->renew.stale > 0 && --fs->renew.stale == 0)
            g_info("space: every database connection was opened anew in %.1f ms",
                   (double)(g_get_monotonic_time() - fs->renew.asked_us) / 1000);
    }
    g_mutex_unlock(&fs->renew.lock);
}

/* dbfs_renew_hold -- see dbfs_conn.h. */
int dbfs_renew_hold(const dbfs_conn *c)
{
    int fd = c->pg ? PQsocket(c->pg) : -1;

    return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

/* dbfs_renew_wait -- see dbfs_conn.h. The duplicate shares libpq's
 * non-blocking open file: poll, then read what is left until end-of-file
 * or an error (the peer is gone either way). */
void dbfs_renew_wait(int fd)
{
    int64_t until = g_get_monotonic_time() + DBFS_RENEW_EXIT_US;
    char buf[512];

    if (fd < 0)
        return;
    for (;;) {
        int64_t left = until - g_get_monotonic_time();
        struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
        ssize_t n;

        if (left <= 0) {
            g_debug("a database session being renewed did not end within %d s",
                    (int)(DBFS_RENEW_EXIT_US / G_USEC_PER_SEC));
            break;
        }
        if (poll(&p, 1, (int)(left / 1000) + 1) < 0 && errno != EINTR)
            break;
        if (p.revents == 0)
            continue;
        n = read(fd, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            break;
    }
    close(fd);
}

/* dbfs_renew_all -- see dbfs_conn.h. */
void dbfs_renew_all(dbfs *fs)
{
    g_mutex_lock(&fs->renew.lock);
    atomic_fetch_add(&fs->renew.epoch, 1);
    fs->renew.stale = fs->renew.open;
    fs->renew.asked_us = g_get_monotonic_time();
    fs->renew.late_said = false;
    g_info("space: opening the %u database connections anew, so that no idle backend keeps "
           "WAL the checkpoint removed",
           fs->renew.open);
    for (unsigned i = 0; i < DBFS_RENEW_WATCHERS; i++)
        if (fs->renew.watch[i].wake)
            fs->renew.watch[i].wake(fs->renew.watch[i].arg);
    g_mutex_unlock(&fs->renew.lock);
}

/* dbfs_renew_pending -- see dbfs_conn.h. */
unsigned dbfs_renew_pending(dbfs *fs)
{
    unsigned n;

    g_mutex_lock(&fs->renew.lock);
    n = fs->renew.stale;
    if (n > 0 && g_get_monotonic_time() - fs->renew.asked_us > DBFS_RENEW_MAX_US) {
        if (!fs->renew.late_said)
            g_warning("space: %u database connections were not opened anew within %d s (busy "
                      "or stuck?): the WAL their backends hold may keep disk space",
                      n, (int)(DBFS_RENEW_MAX_US / G_USEC_PER_SEC));
        fs->renew.late_said = true;
        n = 0;
    }
    g_mutex_unlock(&fs->renew.lock);
    return n;
}

/* dbfs_renew_watch -- see dbfs_renew.h. */
int dbfs_renew_watch(dbfs *fs, void (*wake)(void *arg), void *arg)
{
    int id = -ENOSPC;

    g_mutex_lock(&fs->renew.lock);
    for (unsigned i = 0; i < DBFS_RENEW_WATCHERS && id < 0; i++) {
        if (!fs->renew.watch[i].wake) {
            fs->renew.watch[i].wake = wake;
            fs->renew.watch[i].arg = arg;
            id = (int)i;
        }
    }
    g_mutex_unlock(&fs->renew.lock);
    if (id < 0)
        g_warning("space: no room for another renewal watcher (%d): its connections renew "
                  "at their next use only",
                  DBFS_RENEW_WATCHERS);
    return id;
}

/* dbfs_renew_unwatch -- see dbfs_renew.h. */
void dbfs_renew_unwatch(dbfs *fs, int id)
{
    if (!fs || id < 0 || id >= DBFS_RENEW_WATCHERS)
        return;
    g_mutex_lock(&fs->renew.lock);
    fs->renew.watch[id].wake = NULL;
    fs->renew.watch[id].arg = NULL;
    g_mutex_unlock(&fs->renew.lock);
}
