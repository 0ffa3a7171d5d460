/*
 * emb_watch.c -- the supervisor of the embedded cluster while a server
 * uses it (emb.h: emb_watch_start, emb_watch_stop).
 *
 * Without it, a PostgreSQL that died (a full disk at a checkpoint, an OOM
 * kill, someone's pg_ctl stop) left the server answering JUKEBOX forever
 * with nothing said at error level. The supervisor is one thread that
 * sleeps until the postmaster exits: it holds a pidfd of the process
 * named by pg_dir/postmaster.pid and polls it together with its stop pipe
 * (on kernels without pidfd_open, it looks once a second). Then:
 *
 *     emb_watch_start
 *           |
 *           v
 *      WATCHING ---- stop pipe ----------------------------------> (end)
 *           | the postmaster exits (pidfd readable; no pidfd: its
 *           | postmaster.pid gone or naming a dead process)
 *           v
 *      DOWN: ERROR "PostgreSQL in DIR stopped", the end of its log,
 *           |       what to do (emb_diagnose)
 *           v
 *      WAITING delay (1 s; doubled after each failed start, to 60 s) -- stop --> (end)
 *           |
 *           +-- a postmaster runs and is ready (someone started it) --> BACK
 *           +-- one runs but is not ready yet (recovering) ---> WAITING
 *           +-- none, restart = false ------------------------> WAITING
 *           +-- none, the old postmaster not yet reaped (zombie) --> WAITING
 *           +-- none, restart = true: emb_pg_start (WAL sized again)
 *                 ok --> BACK
 *                 fails --> ERROR "did not start" (the log's end and what
 *                           to do when the advice changed; else one
 *                           line), delay doubled --> WAITING
 *      BACK: INFO "PostgreSQL in DIR is back" --> WATCHING
 *
 * The server's connections notice the outage themselves: a connection
 * that the old postmaster's backend closed is reconnected before its next
 * call, and calls while the cluster is down answer JUKEBOX, so nothing
 * here talks to the server.
 *
 * While it watches, it also keeps the log small: when PostgreSQL's log
 * collector starts a new file (inotify on pg_dir/log), the old ones past
 * EMB_LOG_KEEP are removed (emb_log.c).
 *
 * NOTES
 *   The thread starts with every asynchronous signal blocked, so SIGINT
 *   and SIGTERM keep going to the server's signalfd. Children (pg_ctl)
 *   get a clean signal mask (emb_tools.c). emb_watch_stop writes the stop
 *   pipe and joins; a pg_ctl start under way (at most EMB_PG_CTL_WAIT s)
 *   finishes first.
 */
#include "emb_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

/* Backoff between attempts to bring the cluster back, in ms. */
#define EMB_WATCH_FIRST_MS 1000
#define EMB_WATCH_MAX_MS   60000
/* Without a pidfd: how often to look at the postmaster, in ms. */
#define EMB_WATCH_POLL_MS 1000

struct emb_watch {
    emb_cluster *c;
    bool restart;
    int stop_rd, stop_wr; /* the stop pipe */
    pthread_t thread;
};

/* Wait up to ms (-1: without end) for the stop pipe: true when stopping. */
static bool emb_watch_stopping(emb_watch *w, int ms)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)ms * 1000;
    struct pollfd p = {.fd = w->stop_rd, .events = POLLIN};

    for (;;) {
        int left = ms < 0 ? -1 : (int)MAX((deadline - g_get_monotonic_time()) / 1000, 0);
        int rc = poll(&p, 1, left);
        if (rc > 0)
            return true;
        if (rc == 0)
            return false;
        if (errno != EINTR) /* cannot wait on the pipe: stop rather than spin */
            return true;
    }
}

/* Is pid still the postmaster of c's directory? */
static bool emb_watch_alive(const emb_cluster *c, pid_t pid)
{
    pid_t now;
    bool ready;

    return emb_pm_read(c, &now, &ready) && now == pid;
}

/* An inotify descriptor that becomes readable when a file appears in
 * the cluster's log directory (-1 when that cannot be watched). */
static int emb_watch_log_notify(const emb_cluster *c)
{
    char *dir = emb_log_dir(c);
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

    if (fd >= 0 && inotify_add_watch(fd, dir, IN_CREATE | IN_MOVED_TO) < 0) {
        close(fd);
        fd = -1;
    }
    g_free(dir);
    return fd;
}

/* Read every pending inotify event of fd (their content does not matter). */
static void emb_watch_drain(int fd)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

    while (read(fd, buf, sizeof buf) > 0) {
        /* again */
    }
}

/*
 * Wait until postmaster pid exits (true) or the watch is stopped (false),
 * pruning the log (emb_log_prune) whenever a new file appears in it. With
 * a pidfd and inotify this sleeps until something happens; without a
 * pidfd it looks at the postmaster every EMB_WATCH_POLL_MS, without
 * inotify it prunes every EMB_LOG_PRUNE_MS.
 */
static bool emb_watch_wait_exit(emb_watch *w, pid_t pid)
{
    int pfd = -1;
#ifdef SYS_pidfd_open
    pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
    int ifd = emb_watch_log_notify(w->c);
    /* poll() skips the negative descriptors. */
    struct pollfd p[3] = {{.fd = w->stop_rd, .events = POLLIN},
                          {.fd = pfd, .events = POLLIN},
                          {.fd = ifd, .events = POLLIN}};
    int timeout = pfd < 0 ? EMB_WATCH_POLL_MS : ifd < 0 ? EMB_LOG_PRUNE_MS : -1;
    /* The pid may have been reused before the pidfd was taken. */
    bool died = !emb_watch_alive(w->c, pid), stopped = false;

    emb_log_prune(w->c, false);
    while (!died && !stopped) {
        int rc = poll(p, 3, timeout);

        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0 || p[0].revents) {
            stopped = true; /* stopping, or cannot wait: stop rather than spin */
            break;
        }
        if (p[2].revents)
            emb_watch_drain(ifd);
        emb_log_prune(w->c, false);
        died = pfd >= 0 ? p[1].revents != 0 : !emb_watch_alive(w->c, pid);
    }
    if (pfd >= 0)
        close(pfd);
    if (ifd >= 0)
        close(ifd);
    return !stopped;
}

/* Log text (lines) at error level, one event per line. */
static void emb_watch_log_lines(const char *text)
{
    char **lines = g_strsplit(text, "\n", -1);

    for (char **l = lines; *l; l++)
        if (**l)
            g_critical("%s", *l);
    g_strfreev(lines);
}

/*
 * The cluster is down (its postmaster was pid, 0 if none was found): say
 * so, and bring it back or wait for it. Returns true once it runs again,
 * false when the watch is stopped first.
 */
static bool emb_watch_recover(emb_watch *w, pid_t pid)
{
    const emb_cluster *c = w->c;
    gint64 t0 = g_get_monotonic_time();
    char *diag = emb_diagnose(c, w->restart);
    char *last = NULL; /* the advice after the last failed start */
    int delay = EMB_WATCH_FIRST_MS;
    unsigned attempts = 0;
    bool back = false;

    g_critical("PostgreSQL in %s stopped (postmaster pid %d): NFS calls that need the database "
               "answer JUKEBOX until it is back",
               c->pg_dir, (int)pid);
    emb_watch_log_lines(diag);
    if (!w->restart)
        g_critical("[embedded] restart is false: not starting it again; start it as user %s "
                   "with: pg_ctl start -D %s -l %s",
                   c->db_user, c->pg_dir, c->log_file);
    while (!back && !emb_watch_stopping(w, delay)) {
        pid_t now;
        bool ready;
        char *err = NULL;

        if (emb_pm_read(c, &now, &ready)) {
            back = ready; /* started by someone else; or still recovering */
            continue;
        }
        /* The old postmaster is a zombie until init reaps it, and
         * PostgreSQL will not start while its pid exists. */
        if (!w->restart || (pid > 0 && kill(pid, 0) == 0 && !emb_pid_alive(pid)))
            continue;
        attempts++;
        if (emb_pg_start(c, true, &err) == 0) {
            back = true;
            continue;
        }
        delay = MIN(delay * 2, EMB_WATCH_MAX_MS);
        /* The whole story when the advice changes, else one line. */
        const char *advice = strrchr(err, '\n');
        advice = advice ? advice + 1 : err;
        if (!last || strcmp(last, advice) != 0) {
            emb_watch_log_lines(err);
            g_critical("next attempt to start PostgreSQL in %d s", delay / 1000);
        } else {
            g_critical("PostgreSQL in %s still does not start (attempt %u, same reason); next "
                       "attempt in %d s",
                       c->pg_dir, attempts, delay / 1000);
        }
        g_free(last);
        last = g_strdup(advice);
        g_free(err);
    }
    if (back) {
        pid_t now = 0;
        bool ready;
        emb_pm_read(c, &now, &ready);
        g_message("PostgreSQL in %s is back (postmaster pid %d) after %.1f s%s", c->pg_dir,
                  (int)now, (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC,
                  attempts ? "" : ", started by someone else");
    }
    g_free(last);
    g_free(diag);
    return back;
}

static void *emb_watch_main(void *arg)
{
    emb_watch *w = arg;

    for (;;) {
        pid_t pid = 0;
        bool ready;

        if (emb_pm_read(w->c, &pid, &ready)) {
            if (!emb_watch_wait_exit(w, pid))
                break;
            /* Reaped here only if it was our child (pgnfs as PID 1). */
            waitpid(pid, NULL, WNOHANG);
        }
        if (!emb_watch_recover(w, pid))
            break;
    }
    return NULL;
}

/* emb_watch_start -- see emb.h. */
emb_watch *emb_watch_start(emb_cluster *c, bool restart, char **err)
{
    emb_watch *w = g_new0(emb_watch, 1);
    int fds[2];
    sigset_t all, old;
    int rc;

    w->c = c;
    w->restart = restart;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        *err = g_strdup_printf("cannot watch PostgreSQL: pipe: %s", g_strerror(errno));
        g_free(w);
        return NULL;
    }
    w->stop_rd = fds[0];
    w->stop_wr = fds[1];
    /* The thread inherits this mask: every asynchronous signal blocked. */
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    sigdelset(&all, SIGABRT);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    rc = pthread_create(&w->thread, NULL, emb_watch_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        *err = g_strdup_printf("cannot watch PostgreSQL: no thread: %s", g_strerror(rc));
        close(w->stop_rd);
        close(w->stop_wr);
        g_free(w);
        return NULL;
    }
    return w;
}

/* emb_watch_stop -- see emb.h. */
void emb_watch_stop(emb_watch *w)
{
    char byte = 0;

    if (!w)
        return;
    while (write(w->stop_wr, &byte, 1) < 0 && errno == EINTR) {
        /* again */
    }
    pthread_join(w->thread, NULL);
    close(w->stop_rd);
    close(w->stop_wr);
    g_free(w);
}
