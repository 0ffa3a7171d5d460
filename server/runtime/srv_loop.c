/*
 * srv_loop.c -- the event thread (srv_transport.h): one epoll over every
 * listener's sockets, every connection, a signalfd and the workers'
 * eventfd; the once-a-second scan for idle connections; the shutdown.
 *
 *   The loop:
 *
 *     RUNNING: wait (at most a second) --> for each event: accept, read
 *              UDP, connection I/O, signal, wake --> release the
 *              connections closed in this batch --> once a second: close
 *              connections idle for their listener's idle timeout, resume
 *              paused listeners
 *        | SIGINT/SIGTERM (srv_transport_begin_stop)
 *        v
 *     STOPPING: listeners closed, UDP no longer read, connections no
 *              longer read (partial records dropped); workers told to
 *              finish what they have and exit
 *        | every worker exited (their on_exit wakes the loop)
 *        v
 *     FLUSHING: replies still queued are sent, for at most
 *              SRV_FLUSH_TIMEOUT_S --> return
 *
 *   A second SIGINT/SIGTERM while stopping exits the process at once.
 *   SIGUSR1 logs the statistics table.
 *
 * NOTES
 *   Everything here runs on the event thread but srv_transport_wake. The
 *   caller blocks SIGINT, SIGTERM and SIGUSR1 in every thread before any
 *   starts (threads inherit the mask), so they arrive only on the
 *   signalfd.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "srv_transport.h"

#define SRV_EVENTS_MAX      64
#define SRV_RBUF_SIZE       (128u * 1024u) /* holds any UDP datagram */
#define SRV_FLUSH_TIMEOUT_S 5
#define SRV_WAIT_MS         1000

/* Watch fd for EPOLLIN, naming tag. Returns 0, or -1 after logging why. */
static int srv_transport_add_fd(srv_transport *t, int fd, srv_fd_tag *tag)
{
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = tag};

    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
        g_critical("epoll_ctl: %s", g_strerror(errno));
        return -1;
    }
    return 0;
}

srv_transport *srv_transport_new(unsigned max_conns, unsigned max_per_addr, srv_stats *stats,
                                 log_ratelimit *rl)
{
    srv_transport *t = g_new0(srv_transport, 1);
    sigset_t mask;

    t->stats = stats;
    t->rl = rl;
    t->sig_tag = (srv_fd_tag){SRV_FD_SIGNAL, t};
    t->wake_tag = (srv_fd_tag){SRV_FD_WAKE, t};
    srv_conntab_init(&t->tab, max_conns, max_per_addr);
    t->rbuf_size = SRV_RBUF_SIZE;
    t->rbuf = g_malloc(t->rbuf_size);
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    t->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGUSR1);
    t->sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (t->epfd < 0 || t->wake_fd < 0 || t->sig_fd < 0) {
        g_critical("cannot set up the event loop: %s", g_strerror(errno));
        srv_transport_free(t);
        return NULL;
    }
    if (srv_transport_add_fd(t, t->sig_fd, &t->sig_tag) != 0 ||
        srv_transport_add_fd(t, t->wake_fd, &t->wake_tag) != 0) {
        srv_transport_free(t);
        return NULL;
    }
    return t;
}

void srv_transport_wake(void *user)
{
    srv_transport *t = user;
    uint64_t one = 1;

    if (t->wake_fd >= 0 && write(t->wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
        g_debug("eventfd write: %s", g_strerror(errno));
}

/* Drop the event thread's references to the connections closed this batch. */
static void srv_transport_bury(srv_transport *t)
{
    while (t->graveyard) {
        srv_conn *c = t->graveyard;
        t->graveyard = c->next;
        srv_conn_unref(c);
    }
}

/* SIGINT/SIGTERM: no new calls; workers finish theirs. */
static void srv_transport_begin_stop(srv_transport *t)
{
    t->stopping = true;
    for (unsigned i = 0; i < t->nlisteners; i++) {
        srv_listener *l = t->listeners[i];
        if (l->tcp_fd >= 0) {
            epoll_ctl(t->epfd, EPOLL_CTL_DEL, l->tcp_fd, NULL);
            close(l->tcp_fd);
            l->tcp_fd = -1;
        }
        if (l->udp_fd >= 0) /* kept open for the replies still to come */
            epoll_ctl(t->epfd, EPOLL_CTL_DEL, l->udp_fd, NULL);
    }
    /* Connections are not closed here: those with nothing left are shut
     * down, and the event thread closes them on EPOLLHUP. */
    for (srv_conn *c = t->tab.head; c; c = c->next)
        srv_conn_stop(c);
    srv_workers_stop(t->workers);
}

/* Returns true to leave the loop at once (a second stop signal). */
static bool srv_transport_signal(srv_transport *t)
{
    struct signalfd_siginfo si;

    while (read(t->sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGUSR1) {
            srv_stats_log(t->stats, "SIGUSR1");
            continue;
        }
        if (t->stopping) {
            g_warning("signal %u again while shutting down: exiting without waiting", si.ssi_signo);
            return true;
        }
        g_message("signal %u: shutting down (finishing the calls in progress)", si.ssi_signo);
        srv_transport_begin_stop(t);
    }
    return false;
}

/* Close connections without a call for their listener's idle timeout. */
static void srv_transport_idle_scan(srv_transport *t, int64_t now)
{
    for (srv_conn *c = t->tab.head, *next; c; c = next) {
        next = c->next;
        int64_t limit = (int64_t)c->l->idle_timeout_s * G_USEC_PER_SEC;
        if (now - c->last_call_us >= limit && srv_conn_idle(c))
            srv_conn_close(t, c, "idle");
    }
}

/* Is every reply flushed? (after the workers have exited) */
static bool srv_transport_flushed(srv_transport *t)
{
    for (srv_conn *c = t->tab.head; c; c = c->next)
        if (!srv_conn_idle(c))
            return false;
    return true;
}

/* One epoll event. */
static void srv_transport_event(srv_transport *t, const struct epoll_event *e)
{
    srv_fd_tag *tag = e->data.ptr;
    uint64_t v;

    switch (tag->kind) {
    case SRV_FD_LISTEN:
        if (!t->stopping)
            srv_listen_accept(tag->obj);
        break;
    case SRV_FD_UDP:
        if (!t->stopping)
            srv_udp_readable(tag->obj);
        break;
    case SRV_FD_CONN:
        srv_conn_event(t, tag->obj, e->events);
        break;
    case SRV_FD_SIGNAL:
        if (srv_transport_signal(t))
            _exit(1);
        break;
    case SRV_FD_WAKE:
        while (read(t->wake_fd, &v, sizeof v) > 0) {
        }
        break;
    }
}

/* Once a second: idle connections, paused listeners. */
static void srv_transport_tick(srv_transport *t, int64_t now)
{
    if (t->stopping)
        return;
    srv_transport_idle_scan(t, now);
    for (unsigned i = 0; i < t->nlisteners; i++)
        srv_listen_resume(t->listeners[i], now);
}

void srv_transport_loop(srv_transport *t)
{
    struct epoll_event evs[SRV_EVENTS_MAX];
    int64_t next_tick = g_get_monotonic_time() + G_USEC_PER_SEC, flush_deadline = 0;

    /* Calls answered here (srv_dispatch_quick) keep their request memory
     * for the next, as a worker's do. */
    srv_req_keep_begin();
    for (;;) {
        int n = epoll_wait(t->epfd, evs, SRV_EVENTS_MAX, SRV_WAIT_MS);
        if (n < 0 && errno != EINTR) {
            g_critical("epoll_wait: %s", g_strerror(errno));
            if (!t->stopping)
                srv_transport_begin_stop(t);
            g_usleep(G_USEC_PER_SEC / 10);
        }
        for (int i = 0; i < n; i++)
            srv_transport_event(t, &evs[i]);
        srv_transport_bury(t);
        int64_t now = g_get_monotonic_time();
        if (now >= next_tick) {
            next_tick = now + G_USEC_PER_SEC;
            srv_transport_tick(t, now);
            srv_transport_bury(t);
        }
        if (!t->stopping || srv_workers_running(t->workers) > 0)
            continue;
        if (!flush_deadline)
            flush_deadline = now + SRV_FLUSH_TIMEOUT_S * G_USEC_PER_SEC;
        if (srv_transport_flushed(t))
            break;
        if (now >= flush_deadline) {
            g_warning("replies still unsent after %d s: closing their connections",
                      SRV_FLUSH_TIMEOUT_S);
            break;
        }
    }
    srv_req_keep_end();
}

void srv_transport_free(srv_transport *t)
{
    if (!t)
        return;
    while (t->tab.head)
        srv_conn_close(t, t->tab.head, NULL);
    srv_transport_bury(t);
    for (unsigned i = 0; i < t->nlisteners; i++)
        srv_listener_free(t->listeners[i]);
    if (t->sig_fd >= 0)
        close(t->sig_fd);
    if (t->wake_fd >= 0)
        close(t->wake_fd);
    if (t->epfd >= 0)
        close(t->epfd);
    srv_conntab_clear(&t->tab);
    srv_buf_clear(&t->quick_out);
    g_free(t->rbuf);
    g_free(t);
}
