/*
 * kc_locks.c -- the guest side of the kclient/locks test: flock and fcntl
 * locks through the kernel NFS client of a guest mounted without nolock,
 * so that every lock goes to the server's lock manager (NLM). Built
 * statically (the guest runs it with no C library of ours).
 *
 *   kc_locks DIR PEERDIR [HOST:PORT]
 *
 * DIR is a directory on the NFS mount; PEERDIR the same directory through
 * a second mount of the export (nosharecache: its own inodes), so that a
 * process working there has no lock of ours in its client's own tables and
 * every answer it gets comes from the server. HOST:PORT (the host, reached
 * through qemu's network) answers "is this lock on the server?": the
 * harness asks the server while we hold the lock and replies OK or FAIL.
 *
 * Checks, in order (a line "KCLOCK ..." each; the first failure ends the
 * program with status 1, "KCLOCK-OK" at the end means all passed):
 *   1. flock: LOCK_EX granted; another process's LOCK_EX|LOCK_NB fails
 *      with EWOULDBLOCK through both mounts; LOCK_SH is shared; after
 *      LOCK_UN the other process gets LOCK_EX.
 *   2. fcntl: a write lock on bytes 0..99 is granted; another process's
 *      F_SETLK on 50..59 fails with EAGAIN through both mounts; 100..109
 *      next to it is granted; F_GETLK through the second mount reports the
 *      holder's range.
 *   3. the host sees the lock on the server (HELD), if HOST:PORT is given.
 *   4. another process waits in F_SETLKW (second mount) for bytes 0..99;
 *      we unlock once it is seen waiting; it must get the lock within the
 *      deadline. The time from the unlock to the grant is printed: a
 *      server cannot call the guest back through qemu's NAT (NLM_GRANTED),
 *      so the client finds out when it asks again, every 30 s or so.
 *   5. after everything is unlocked, the host sees no lock left (RELEASED).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KC_DEADLINE_S 300 /* longest wait for any event */

static const char *kc_path, *kc_ppath, *kc_sync;

static double kc_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void kc_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void kc_fail(const char *fmt, ...)
{
    va_list ap;
    int e = errno;

    printf("KCLOCK FAIL: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf(" (errno %d: %s)\n", e, strerror(e));
    fflush(stdout);
    exit(1);
}

static void kc_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void kc_ok(const char *fmt, ...)
{
    va_list ap;

    printf("KCLOCK ok: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static int kc_fcntl(int fd, int cmd, short type, off_t start, off_t len, struct flock *out)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
    int rc = fcntl(fd, cmd, &fl);

    if (out)
        *out = fl;
    return rc;
}

/* Run fn(path) in a child process: its exit status (0 = as expected). */
static int kc_in_child(int (*fn)(const char *), const char *path)
{
    pid_t pid;
    int st;

    fflush(stdout);
    pid = fork();
    if (pid < 0)
        kc_fail("fork");
    if (pid == 0)
        _exit(fn(path));
    if (waitpid(pid, &st, 0) < 0)
        kc_fail("waitpid");
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* --- the other process's checks (0 = as expected, else a message) ------ */

static int kc_flock_denied(const char *path)
{
    int fd = open(path, O_RDWR);

    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0) {
        printf("KCLOCK FAIL: %s: flock(LOCK_EX|LOCK_NB) %s while another process holds "
               "LOCK_EX\n",
               path, fd < 0 ? strerror(errno) : "granted");
        return 1;
    }
    if (errno != EWOULDBLOCK) {
        printf("KCLOCK FAIL: %s: flock(LOCK_EX|LOCK_NB): %s, expected EWOULDBLOCK\n", path,
               strerror(errno));
        return 1;
    }
    return 0;
}

static int kc_flock_shared(const char *path)
{
    int fd = open(path, O_RDWR);

    if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) != 0) {
        printf("KCLOCK FAIL: %s: flock(LOCK_SH|LOCK_NB) beside another LOCK_SH: %s\n", path,
               strerror(errno));
        return 1;
    }
    return 0;
}

static int kc_flock_free(const char *path)
{
    int fd = open(path, O_RDWR);

    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0 || flock(fd, LOCK_UN) != 0) {
        printf("KCLOCK FAIL: %s: flock(LOCK_EX|LOCK_NB) after the holder's LOCK_UN: %s\n", path,
               strerror(errno));
        return 1;
    }
    return 0;
}

static int kc_range_denied(const char *path)
{
    int fd = open(path, O_RDWR);

    if (fd < 0 || kc_fcntl(fd, F_SETLK, F_WRLCK, 50, 10, NULL) == 0) {
        printf("KCLOCK FAIL: %s: F_SETLK on 50..59 %s inside another process's 0..99\n", path,
               fd < 0 ? strerror(errno) : "granted");
        return 1;
    }
    if (errno != EAGAIN && errno != EACCES) {
        printf("KCLOCK FAIL: %s: F_SETLK on 50..59: %s, expected EAGAIN\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

static int kc_range_next(const char *path)
{
    int fd = open(path, O_RDWR);
    struct flock fl;

    if (fd < 0 || kc_fcntl(fd, F_SETLK, F_WRLCK, 100, 10, NULL) != 0 ||
        kc_fcntl(fd, F_SETLK, F_UNLCK, 100, 10, NULL) != 0) {
        printf("KCLOCK FAIL: %s: F_SETLK on 100..109 next to another process's 0..99: %s\n", path,
               strerror(errno));
        return 1;
    }
    if (kc_fcntl(fd, F_GETLK, F_WRLCK, 0, 200, &fl) != 0) {
        printf("KCLOCK FAIL: %s: F_GETLK on 0..199: %s\n", path, strerror(errno));
        return 1;
    }
    if (fl.l_type != F_WRLCK || fl.l_start != 0 || fl.l_len != 100) {
        printf("KCLOCK FAIL: %s: F_GETLK on 0..199 reports type %d start %lld len %lld, expected "
               "the write lock on 0..99\n",
               path, fl.l_type, (long long)fl.l_start, (long long)fl.l_len);
        return 1;
    }
    return 0;
}

/* --- the host ------------------------------------------------------------ */

/* Send one line to the host and print its answer; exit on FAIL. */
static void kc_ask_host(const char *what, long long fileid)
{
    char line[512], host[64], reply[512];
    struct sockaddr_in sa = {.sin_family = AF_INET};
    struct timeval tv = {.tv_sec = KC_DEADLINE_S};
    const char *colon = strrchr(kc_sync, ':');
    ssize_t n, got = 0;
    int s;

    if (!colon || (size_t)(colon - kc_sync) >= sizeof host)
        kc_fail("bad HOST:PORT %s", kc_sync);
    memcpy(host, kc_sync, (size_t)(colon - kc_sync));
    host[colon - kc_sync] = '\0';
    sa.sin_port = htons((unsigned short)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        kc_fail("bad host address %s", host);
    s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0)
        kc_fail("connect to the host at %s", kc_sync);
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    n = snprintf(line, sizeof line, "%s path=%s fileid=%lld start=0 len=100 type=write\n", what,
                 kc_path, fileid);
    if (write(s, line, (size_t)n) != n)
        kc_fail("send to the host");
    while (got < (ssize_t)sizeof reply - 1 && (n = read(s, reply + got, 1)) == 1 &&
           reply[got] != '\n')
        got++;
    reply[got] = '\0';
    close(s);
    printf("KCLOCK host says (%s): %s\n", what, got ? reply : "(nothing)");
    fflush(stdout);
    if (strncmp(reply, "OK", 2) != 0) {
        errno = 0;
        kc_fail("the host's check of the server's lock table (%s) did not pass", what);
    }
}

/* --- waiting ------------------------------------------------------------- */

static char kc_proc_state(pid_t pid)
{
    char path[64], buf[512], *p;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    p = fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
    fclose(f);
    return p && p[1] == ' ' ? p[2] : 0;
}

/* Is pid asleep in fcntl(2), past the RPC of its request? */
static int kc_blocked(pid_t pid)
{
    char path[64], buf[128] = "";
    FILE *f;

    if (kc_proc_state(pid) != 'S')
        return 0;
    snprintf(path, sizeof path, "/proc/%ld/syscall", (long)pid);
    if ((f = fopen(path, "r"))) {
        long nr = fgets(buf, sizeof buf, f) ? atol(buf) : -1;
        fclose(f);
        if (nr != SYS_fcntl)
            return 0;
    }
    snprintf(path, sizeof path, "/proc/%ld/wchan", (long)pid);
    if ((f = fopen(path, "r"))) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = '\0';
        fclose(f);
        if (strstr(buf, "rpc"))
            return 0;
    }
    return kc_proc_state(pid) == 'S';
}

/* Step 4: a process waits through the second mount; we unlock. */
static void kc_blocking(int fd)
{
    int pipefd[2], st;
    double t_unlock, t_grant, end;
    unsigned ms = 1;
    pid_t pid;

    if (pipe(pipefd) < 0)
        kc_fail("pipe");
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        kc_fail("fork");
    if (pid == 0) {
        int cfd = open(kc_ppath, O_RDWR);
        double t;
        close(pipefd[0]);
        alarm(KC_DEADLINE_S);
        if (cfd < 0 || kc_fcntl(cfd, F_SETLKW, F_WRLCK, 0, 100, NULL) != 0) {
            printf("KCLOCK FAIL: waiter: F_SETLKW on 0..99: %s\n", strerror(errno));
            _exit(1);
        }
        t = kc_now();
        if (write(pipefd[1], &t, sizeof t) != (ssize_t)sizeof t)
            _exit(1);
        if (kc_fcntl(cfd, F_SETLK, F_UNLCK, 0, 100, NULL) != 0) {
            printf("KCLOCK FAIL: waiter: F_UNLCK: %s\n", strerror(errno));
            _exit(1);
        }
        _exit(0);
    }
    close(pipefd[1]);
    end = kc_now() + KC_DEADLINE_S;
    while (!kc_blocked(pid)) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
        if (waitpid(pid, &st, WNOHANG) == pid)
            kc_fail("the waiter ended (status %#x) instead of waiting for 0..99", st);
        if (kc_now() > end)
            kc_fail("the waiter was not seen waiting in fcntl within %d s", KC_DEADLINE_S);
        nanosleep(&ts, NULL);
        if (ms < 50)
            ms *= 2;
    }
    kc_ok("another process (second mount) waits in F_SETLKW for 0..99");
    t_unlock = kc_now();
    if (kc_fcntl(fd, F_SETLK, F_UNLCK, 0, 100, NULL) != 0)
        kc_fail("F_UNLCK 0..99");
    if (read(pipefd[0], &t_grant, sizeof t_grant) != (ssize_t)sizeof t_grant)
        kc_fail("the waiter did not get 0..99 within %d s of the unlock", KC_DEADLINE_S);
    close(pipefd[0]);
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        kc_fail("the waiter failed after the grant (status %#x)", st);
    printf("KCLOCK-GRANT seconds=%.3f\n", t_grant - t_unlock);
    kc_ok("the blocked F_SETLKW was granted %.3f s after the unlock", t_grant - t_unlock);
}

int main(int argc, char **argv)
{
    char buf[4096], path[4096], ppath[4096];
    struct stat st;
    int fd;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: %s DIR PEERDIR [HOST:PORT]\n", argv[0]);
        return 2;
    }
    snprintf(path, sizeof path, "%s/lockfile", argv[1]);
    snprintf(ppath, sizeof ppath, "%s/lockfile", argv[2]);
    kc_path = path;
    kc_ppath = ppath;
    kc_sync = argc > 3 ? argv[3] : NULL;
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        kc_fail("open %s", path);
    memset(buf, 'x', sizeof buf);
    if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf || fsync(fd) != 0 || fstat(fd, &st) != 0)
        kc_fail("write %s", path);

    /* 1. flock */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0)
        kc_fail("flock(LOCK_EX|LOCK_NB) on a free file");
    if (kc_in_child(kc_flock_denied, path) || kc_in_child(kc_flock_denied, ppath))
        kc_fail("flock conflict");
    kc_ok("flock LOCK_EX held; another process's LOCK_EX|LOCK_NB: EWOULDBLOCK (both mounts)");
    if (flock(fd, LOCK_SH | LOCK_NB) != 0)
        kc_fail("flock(LOCK_SH) (conversion from LOCK_EX)");
    if (kc_in_child(kc_flock_shared, ppath))
        kc_fail("shared flock");
    kc_ok("flock LOCK_SH is shared with another process");
    if (flock(fd, LOCK_UN) != 0)
        kc_fail("flock(LOCK_UN)");
    if (kc_in_child(kc_flock_free, path) || kc_in_child(kc_flock_free, ppath))
        kc_fail("flock after LOCK_UN");
    kc_ok("after LOCK_UN another process gets LOCK_EX (both mounts)");

    /* 2. fcntl byte ranges */
    if (kc_fcntl(fd, F_SETLK, F_WRLCK, 0, 100, NULL) != 0)
        kc_fail("F_SETLK write lock on 0..99");
    kc_ok("F_SETLK write lock on 0..99 granted");
    if (kc_in_child(kc_range_denied, path) || kc_in_child(kc_range_denied, ppath))
        kc_fail("range conflict");
    kc_ok("another process's F_SETLK on 50..59: EAGAIN (both mounts)");
    if (kc_in_child(kc_range_next, ppath))
        kc_fail("adjacent range");
    kc_ok("100..109 granted beside it; F_GETLK reports the write lock on 0..99");

    /* 3. the server's own view */
    if (kc_sync) {
        printf("KCLOCK-HELD fileid=%llu\n", (unsigned long long)st.st_ino);
        kc_ask_host("HELD", (long long)st.st_ino);
    }

    /* 4. a blocked lock, granted after our unlock */
    kc_blocking(fd);

    /* 5. nothing left */
    if (kc_sync)
        kc_ask_host("RELEASED", (long long)st.st_ino);
    close(fd);
    printf("KCLOCK-OK\n");
    return 0;
}
