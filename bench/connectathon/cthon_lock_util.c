/*
 * cthon_lock_util.c -- what the lock tests share: the helper process that
 * plays the child (a loop that runs lock and I/O requests on its own
 * descriptor and answers over a socket pair), the checks with their
 * one-line reports, and the wait for "process X is blocked in fcntl".
 *
 * NOTES
 *   Requests and answers are fixed-size records on an AF_UNIX
 *   SOCK_SEQPACKET pair, one answer per request, except that a blocking
 *   F_SETLKW is announced by an extra "entering" answer first, so that the
 *   parent knows the helper has gone into the call.
 *
 *   A helper runs with SIGUSR1 caught without SA_RESTART (the signal
 *   interrupts a waiting F_SETLKW with EINTR) and SIGINT at its default
 *   (it kills the helper, which releases its locks).
 *
 *   Blocked: /proc/PID/syscall names fcntl and /proc/PID/stat says 'S'
 *   (sleeping); when /proc/PID/wchan is readable and names a function of
 *   the RPC layer, the call is still talking to the server and not yet
 *   waiting for the lock, so the wait goes on. Without /proc/PID/syscall
 *   (no permission), "sleeping after it announced the call" is taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cthon_lock.h"

#define CL_DATA_MAX 64

enum {
    CL_RQ_LOCK = 1,
    CL_RQ_WRITE,
    CL_RQ_READ,
    CL_RQ_CLOSE,
    CL_RQ_UNLOCK_WHEN_BLOCKED,
    CL_RQ_EXIT,
};

typedef struct cl_req {
    int op;
    int cmd;
    short type;
    int64_t start, len;
    pid_t watch;         /* CL_RQ_UNLOCK_WHEN_BLOCKED: the process to wait for */
    unsigned deadline_s; /* ... and how long at most */
    uint32_t n;
    char data[CL_DATA_MAX];
} cl_req;

typedef struct cl_rep {
    int err;      /* 0 or errno */
    int entering; /* 1: "going into the blocking call now"; 0: the answer */
    short type;   /* F_GETLK: the conflicting lock, or F_UNLCK */
    int64_t start, len;
    pid_t pid;
    double t; /* cl_now() when the call returned */
    uint32_t n;
    char data[CL_DATA_MAX];
} cl_rep;

double cl_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cl_fail(cl_run *r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(r->errmsg, sizeof r->errmsg, fmt, ap);
    va_end(ap);
    return -1;
}

void cl_note(cl_run *r, const char *fmt, ...)
{
    va_list ap;

    printf("  %-6s ", r->id);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

void cl_metric(cl_run *r, const char *name, double value)
{
    if (r->nmetric < sizeof r->metric / sizeof r->metric[0]) {
        r->metric_name[r->nmetric] = name;
        r->metric[r->nmetric++] = value;
    }
}

static const char *cl_cmd_name(int cmd)
{
    switch (cmd) {
    case F_GETLK:
        return "F_GETLK";
    case F_SETLK:
        return "F_SETLK";
    case F_SETLKW:
        return "F_SETLKW";
    default:
        return "F_?";
    }
}

static char cl_type_char(short type)
{
    return type == F_RDLCK ? 'R' : type == F_WRLCK ? 'W' : 'U';
}

/* "[start, +len)" or "[start, EOF)". */
static void cl_fmt_range(char *buf, size_t size, int64_t start, int64_t len)
{
    if (len == 0)
        snprintf(buf, size, "[%" PRId64 ", EOF)", start);
    else
        snprintf(buf, size, "[%" PRId64 ", +%" PRId64 ")", start, len);
}

static const char *cl_expect_name(int expect)
{
    switch (expect & ~CL_WARN) {
    case CL_OK:
        return "ok";
    case CL_DENIED:
        return "denied";
    default:
        return "EINVAL/EOVERFLOW";
    }
}

/* ---------------------------------------------------------------- /proc */

/* Read the first line of /proc/PID/NAME into buf: length, or -errno. */
static int cl_proc_read(pid_t pid, const char *name, char *buf, size_t size)
{
    char path[64];
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, name);
    fd = open(path, O_RDONLY);
    if (fd < 0)
        return -errno;
    n = read(fd, buf, size - 1);
    if (n < 0)
        n = -errno;
    close(fd);
    if (n < 0)
        return (int)n;
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return (int)n;
}

/* The state letter of /proc/PID/stat, or 0 (gone). */
static char cl_proc_state(pid_t pid)
{
    char buf[512], *p;

    if (cl_proc_read(pid, "stat", buf, sizeof buf) < 0)
        return 0;
    p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : 0;
}

/* Is pid asleep in fcntl(2), waiting for a lock? (See the notes.) */
static bool cl_proc_blocked(pid_t pid)
{
    char buf[256];
    int n;

    if (cl_proc_state(pid) != 'S')
        return false;
    n = cl_proc_read(pid, "syscall", buf, sizeof buf);
    if (n >= 0 && atol(buf) != SYS_fcntl)
        return false;
    if (cl_proc_read(pid, "wchan", buf, sizeof buf) > 0 && strstr(buf, "rpc"))
        return false;
    /* The state again: the process may have left the call meanwhile. */
    return cl_proc_state(pid) == 'S';
}

/* Sleep a little longer each time (1 ms up to 50 ms). */
static void cl_backoff(unsigned *ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)*ms * 1000000L};

    nanosleep(&ts, NULL);
    if (*ms < 50)
        *ms *= 2;
}

/* --------------------------------------------------------------- helper */

static void cl_sigusr1(int sig)
{
    (void)sig;
}

static void cl_peer_answer(int sock, const cl_rep *rep)
{
    if (send(sock, rep, sizeof *rep, MSG_NOSIGNAL) != (ssize_t)sizeof *rep)
        _exit(3);
}

/* Run one request on fd; the answer goes to sock. */
static void cl_peer_do(int sock, int *fd, const char *path, const cl_req *rq)
{
    cl_rep rep = {0};
    struct flock fl = {.l_whence = SEEK_SET};
    double t_start = 0;

    switch (rq->op) {
    case CL_RQ_LOCK:
        fl.l_type = rq->type;
        fl.l_start = rq->start;
        fl.l_len = rq->len;
        if (rq->cmd == F_SETLKW) {
            rep.entering = 1;
            cl_peer_answer(sock, &rep);
            rep.entering = 0;
        }
        if (*fd < 0)
            *fd = open(path, O_RDWR | O_CREAT | O_SYNC, 0666);
        if (*fd < 0 || fcntl(*fd, rq->cmd, &fl) < 0)
            rep.err = errno;
        rep.type = fl.l_type;
        rep.start = fl.l_start;
        rep.len = fl.l_len;
        rep.pid = fl.l_pid;
        break;
    case CL_RQ_UNLOCK_WHEN_BLOCKED: {
        double end = cl_now() + rq->deadline_s;
        unsigned ms = 1;
        while (!cl_proc_blocked(rq->watch)) {
            if (cl_now() > end) {
                rep.err = ETIMEDOUT;
                break;
            }
            cl_backoff(&ms);
        }
        if (rep.err == 0) {
            t_start = cl_now();
            fl.l_type = F_UNLCK;
            fl.l_start = rq->start;
            fl.l_len = rq->len;
            if (fcntl(*fd, F_SETLK, &fl) < 0)
                rep.err = errno;
        }
        break;
    }
    case CL_RQ_WRITE:
        if (pwrite(*fd, rq->data, rq->n, rq->start) != (ssize_t)rq->n)
            rep.err = errno ? errno : EIO;
        break;
    case CL_RQ_READ: {
        ssize_t got = pread(*fd, rep.data, rq->n < CL_DATA_MAX ? rq->n : CL_DATA_MAX, rq->start);
        if (got < 0)
            rep.err = errno;
        else
            rep.n = (uint32_t)got;
        break;
    }
    case CL_RQ_CLOSE:
        if (*fd >= 0 && close(*fd) < 0)
            rep.err = errno;
        *fd = -1;
        break;
    default:
        rep.err = EINVAL;
    }
    rep.t = t_start > 0 ? t_start : cl_now();
    cl_peer_answer(sock, &rep);
}

/* The helper's life: open the file, say so, then serve requests. */
static void cl_peer_main(int sock, const char *path)
{
    struct sigaction sa = {0};
    cl_rep hello = {0};
    cl_req rq;
    int fd;

    sa.sa_handler = cl_sigusr1; /* no SA_RESTART: interrupts F_SETLKW */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGINT, SIG_DFL);
    fd = open(path, O_RDWR | O_CREAT | O_SYNC, 0666);
    hello.err = fd < 0 ? errno : 0;
    cl_peer_answer(sock, &hello);
    for (;;) {
        ssize_t n = recv(sock, &rq, sizeof rq, 0);
        if (n != (ssize_t)sizeof rq || rq.op == CL_RQ_EXIT)
            _exit(0);
        cl_peer_do(sock, &fd, path, &rq);
    }
}

/* Wait up to the deadline for the helper's next record. 0 or -1. */
static int cl_peer_recv(cl_run *r, cl_peer *peer, cl_rep *rep)
{
    struct pollfd pfd = {.fd = peer->sock, .events = POLLIN};
    int rc;

    do {
        rc = poll(&pfd, 1, (int)r->p->deadline_s * 1000);
    } while (rc < 0 && errno == EINTR);
    if (rc == 0)
        return cl_fail(r, "%s (pid %ld) did not answer within %u s", peer->who, (long)peer->pid,
                       r->p->deadline_s);
    if (rc < 0 || recv(peer->sock, rep, sizeof *rep, 0) != (ssize_t)sizeof *rep)
        return cl_fail(r, "%s (pid %ld) is gone", peer->who, (long)peer->pid);
    return 0;
}

static int cl_peer_send(cl_run *r, cl_peer *peer, const cl_req *rq)
{
    if (peer->pid <= 0)
        return cl_fail(r, "%s is not running", peer->who);
    if (peer->busy)
        return cl_fail(r, "%s has not answered its last request", peer->who);
    if (send(peer->sock, rq, sizeof *rq, MSG_NOSIGNAL) != (ssize_t)sizeof *rq)
        return cl_fail(r, "cannot send to %s: %s", peer->who, strerror(errno));
    peer->busy = true;
    return 0;
}

/* Send a request and wait for its answer. 0 or -1. */
static int cl_peer_call(cl_run *r, cl_peer *peer, const cl_req *rq, cl_rep *rep)
{
    if (cl_peer_send(r, peer, rq) < 0)
        return -1;
    do {
        if (cl_peer_recv(r, peer, rep) < 0)
            return -1;
    } while (rep->entering);
    peer->busy = false;
    return 0;
}

int cl_peer_start(cl_run *r, cl_peer *peer, const char *who)
{
    int sv[2];
    cl_rep hello;

    memset(peer, 0, sizeof *peer);
    peer->sock = -1;
    snprintf(peer->who, sizeof peer->who, "%s", who);
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return cl_fail(r, "socketpair: %s", strerror(errno));
    fflush(stdout);
    peer->pid = fork();
    if (peer->pid < 0) {
        close(sv[0]);
        close(sv[1]);
        peer->pid = 0;
        return cl_fail(r, "fork: %s", strerror(errno));
    }
    if (peer->pid == 0) {
        close(sv[0]);
        if (r->fd >= 0)
            close(r->fd); /* the helper's locks are its own */
        cl_peer_main(sv[1], r->ppath);
        _exit(0);
    }
    close(sv[1]);
    peer->sock = sv[0];
    if (cl_peer_recv(r, peer, &hello) < 0)
        return -1;
    if (hello.err)
        return cl_fail(r, "%s: open(%s): %s", who, r->ppath, strerror(hello.err));
    return 0;
}

void cl_peer_stop(cl_peer *peer)
{
    cl_req rq = {.op = CL_RQ_EXIT};
    int st;

    if (peer->pid <= 0)
        return;
    /* A helper that waits in a call is not listening: end it. */
    if (peer->busy || send(peer->sock, &rq, sizeof rq, MSG_NOSIGNAL) != (ssize_t)sizeof rq)
        kill(peer->pid, SIGKILL);
    while (waitpid(peer->pid, &st, 0) < 0 && errno == EINTR)
        ;
    close(peer->sock);
    peer->sock = -1;
    peer->pid = 0;
    peer->busy = false;
}

int cl_peer_kill(cl_run *r, cl_peer *peer, int sig)
{
    int st = 0;
    pid_t pid = peer->pid;

    if (pid <= 0)
        return cl_fail(r, "%s is not running", peer->who);
    kill(pid, sig);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    close(peer->sock);
    peer->sock = -1;
    peer->pid = 0;
    peer->busy = false;
    if (!WIFSIGNALED(st) || WTERMSIG(st) != sig)
        return cl_fail(r, "%s (pid %ld) did not die of signal %d (status %#x)", peer->who,
                       (long)pid, sig, st);
    return 0;
}

int cl_peer_send_lock(cl_run *r, cl_peer *peer, int cmd, short type, int64_t start, int64_t len)
{
    cl_req rq = {.op = CL_RQ_LOCK, .cmd = cmd, .type = type, .start = start, .len = len};
    cl_rep rep;

    if (cl_peer_send(r, peer, &rq) < 0)
        return -1;
    if (cmd == F_SETLKW) {
        if (cl_peer_recv(r, peer, &rep) < 0)
            return -1;
        if (!rep.entering)
            return cl_fail(r, "%s answered F_SETLKW without going into the call", peer->who);
    }
    return 0;
}

int cl_peer_result(cl_run *r, cl_peer *peer, int *err, double *t_done)
{
    cl_rep rep;

    if (!peer->busy)
        return cl_fail(r, "%s has no request running", peer->who);
    if (cl_peer_recv(r, peer, &rep) < 0)
        return -1;
    peer->busy = false;
    *err = rep.err;
    if (t_done)
        *t_done = rep.t;
    return 0;
}

bool cl_peer_ready(cl_peer *peer)
{
    struct pollfd pfd = {.fd = peer->sock, .events = POLLIN};

    return poll(&pfd, 1, 0) > 0;
}

int cl_peer_unlock_when_blocked(cl_run *r, cl_peer *peer, pid_t waiter, int64_t start, int64_t len)
{
    cl_req rq = {.op = CL_RQ_UNLOCK_WHEN_BLOCKED,
                 .start = start,
                 .len = len,
                 .watch = waiter,
                 .deadline_s = r->p->deadline_s};

    return cl_peer_send(r, peer, &rq);
}

int cl_peer_close(cl_run *r, cl_peer *peer)
{
    cl_req rq = {.op = CL_RQ_CLOSE};
    cl_rep rep;

    if (cl_peer_call(r, peer, &rq, &rep) < 0)
        return -1;
    if (rep.err)
        return cl_fail(r, "%s: close: %s", peer->who, strerror(rep.err));
    return 0;
}

int cl_wait_blocked(cl_run *r, pid_t pid, cl_peer *peer)
{
    double end = cl_now() + r->p->deadline_s;
    unsigned ms = 1;

    for (;;) {
        if (peer && cl_peer_ready(peer))
            return 1;
        if (cl_proc_blocked(pid))
            return 0;
        if (cl_now() > end)
            return cl_fail(r, "process %ld did not block in fcntl within %u s", (long)pid,
                           r->p->deadline_s);
        cl_backoff(&ms);
    }
}

/* ---------------------------------------------------------------- checks */

int cl_open(cl_run *r)
{
    if (r->fd >= 0)
        return 0;
    r->fd = open(r->path, O_RDWR | O_CREAT | O_SYNC, 0666);
    if (r->fd < 0)
        return cl_fail(r, "open(%s): %s", r->path, strerror(errno));
    return 0;
}

void cl_close(cl_run *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

/* What happened, as one of the CL_ outcomes; -1 for any other error. */
static int cl_outcome(int cmd, int err, short type)
{
    if (err == EAGAIN || err == EACCES)
        return CL_DENIED;
    if (err == EINVAL || err == EOVERFLOW)
        return CL_BADRANGE;
    if (err)
        return -1;
    if (cmd == F_GETLK && type != F_UNLCK)
        return CL_DENIED;
    return CL_OK;
}

int cl_lk(cl_run *r, const char *label, cl_peer *peer, int cmd, short type, int64_t start,
          int64_t len, int expect)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
    char range[64], seen[160], holder[96] = "";
    int err = 0, got, want = expect & ~CL_WARN;
    const char *verdict;

    if (peer) {
        cl_req rq = {.op = CL_RQ_LOCK, .cmd = cmd, .type = type, .start = start, .len = len};
        cl_rep rep;
        if (cl_peer_call(r, peer, &rq, &rep) < 0)
            return -1;
        err = rep.err;
        fl.l_type = rep.type;
        fl.l_start = rep.start;
        fl.l_len = rep.len;
        fl.l_pid = rep.pid;
    } else {
        /* A wait that never ends is ended by SIGALRM (caught, no restart). */
        if (cmd == F_SETLKW)
            alarm(r->p->deadline_s);
        if (fcntl(r->fd, cmd, &fl) < 0)
            err = errno;
        if (cmd == F_SETLKW)
            alarm(0);
    }
    got = cl_outcome(cmd, err, fl.l_type);
    cl_fmt_range(range, sizeof range, start, len);
    if (cmd == F_GETLK && err == 0 && fl.l_type != F_UNLCK) {
        char hr[64];
        cl_fmt_range(hr, sizeof hr, fl.l_start, fl.l_len);
        snprintf(holder, sizeof holder, " (held: %c %s pid %ld)", cl_type_char(fl.l_type), hr,
                 (long)fl.l_pid);
    }
    snprintf(seen, sizeof seen, "%s%s",
             err                ? strerror(err)
             : got == CL_DENIED ? "denied"
                                : "ok",
             holder);
    if (got == want) {
        verdict = "PASSED";
        r->pass++;
    } else if (want == CL_BADRANGE || (expect & CL_WARN)) {
        verdict = "WARNING";
        r->warn++;
    } else {
        verdict = "FAILED";
    }
    if (r->p->verbose || strcmp(verdict, "PASSED") != 0) {
        printf("  %-6s %-6s %-8s %c %-34s %-36s %s\n", label, peer ? peer->who : "parent",
               cl_cmd_name(cmd), cl_type_char(type), range, seen, verdict);
        if (strcmp(verdict, "PASSED") != 0)
            printf("  %-6s expected %s\n", label, cl_expect_name(expect));
        fflush(stdout);
    }
    if (strcmp(verdict, "FAILED") == 0)
        return cl_fail(r, "%s: %s %s %c %s by the %s: expected %s, got %s", label, cl_cmd_name(cmd),
                       "lock", cl_type_char(type), range, peer ? peer->who : "parent",
                       cl_expect_name(expect), seen);
    return 0;
}

int cl_test_range(cl_run *r, const char *label, cl_peer *peer, int64_t start, int64_t len,
                  int expect)
{
    if (cl_lk(r, label, peer, F_GETLK, F_WRLCK, start, len, expect) < 0)
        return -1;
    if ((expect & ~CL_WARN) == CL_DENIED && peer)
        return cl_lk(r, label, peer, F_SETLK, F_WRLCK, start, len, CL_DENIED);
    return 0;
}

int cl_write(cl_run *r, cl_peer *peer, int64_t off, const char *data)
{
    size_t n = strlen(data);

    if (n > CL_DATA_MAX)
        return cl_fail(r, "cl_write: %zu bytes is more than %d", n, CL_DATA_MAX);
    if (peer) {
        cl_req rq = {.op = CL_RQ_WRITE, .start = off, .n = (uint32_t)n};
        cl_rep rep;
        memcpy(rq.data, data, n);
        if (cl_peer_call(r, peer, &rq, &rep) < 0)
            return -1;
        if (rep.err)
            return cl_fail(r, "%s: write at %" PRId64 ": %s", peer->who, off, strerror(rep.err));
    } else if (pwrite(r->fd, data, n, off) != (ssize_t)n) {
        return cl_fail(r, "parent: write at %" PRId64 ": %s", off, strerror(errno));
    }
    if (r->p->verbose)
        cl_note(r, "%s wrote '%s' at %" PRId64, peer ? peer->who : "parent", data, off);
    return 0;
}

int cl_read_expect(cl_run *r, const char *label, cl_peer *peer, int64_t off, const char *data)
{
    char buf[CL_DATA_MAX + 1];
    size_t n = strlen(data);
    ssize_t got;

    if (n > CL_DATA_MAX)
        return cl_fail(r, "cl_read_expect: %zu bytes is more than %d", n, CL_DATA_MAX);
    if (peer) {
        cl_req rq = {.op = CL_RQ_READ, .start = off, .n = (uint32_t)n};
        cl_rep rep;
        if (cl_peer_call(r, peer, &rq, &rep) < 0)
            return -1;
        if (rep.err)
            return cl_fail(r, "%s: read at %" PRId64 ": %s", peer->who, off, strerror(rep.err));
        got = rep.n;
        memcpy(buf, rep.data, rep.n);
    } else {
        got = pread(r->fd, buf, n, off);
        if (got < 0)
            return cl_fail(r, "parent: read at %" PRId64 ": %s", off, strerror(errno));
    }
    buf[got] = '\0';
    if ((size_t)got != n || memcmp(buf, data, n) != 0) {
        printf("  %-6s %-6s COMPARE  at %" PRId64 ": '%s', expected '%s'  FAILED\n", label,
               peer ? peer->who : "parent", off, buf, data);
        return cl_fail(r, "%s: read '%s' at %" PRId64 ", expected '%s'", label, buf, off, data);
    }
    r->pass++;
    if (r->p->verbose)
        printf("  %-6s %-6s COMPARE  at %" PRId64 ": '%s'  PASSED\n", label,
               peer ? peer->who : "parent", off, buf);
    return 0;
}
