/*
 * cthon_lock_classic.c -- the classic suite's lock tests 1 to 7 and 10 to
 * 12 (see cthon_lock.h for the list): record locks of a parent and a child
 * process on one file, with the classic suite's numbering of the checks
 * ("N.M"), and each expected result as the classic suite expects it.
 *
 * Differences from the classic program, all on purpose:
 *   - where it waited a fixed time for the other process (sleep 3), these
 *     tests wait for the event (blocked in fcntl, lock released) with a
 *     deadline;
 *   - a conflict the child expects is also tried with F_SETLK, which the
 *     server decides (see cthon_lock.h);
 *   - test 7 reports how long after the unlock each waiter got the lock;
 *   - test 12 kills a helper of the parent (not a grandchild), reaps it and
 *     then retries until its lock is gone, reporting how long that took.
 *
 * NOTES
 *   Every test starts with the parent's descriptor open (r->fd) and the
 *   child running (r->child), both on the test's own file; the driver
 *   closes, stops and removes them afterwards, also after a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cthon_lock.h"

#define CL_END 0 /* a length of 0: to the end of the file (and beyond) */

/* Test 1: regions of an unlocked file. */
int cl_test1(cl_run *r)
{
    static const struct {
        const char *label;
        int64_t start, len;
        int expect;
    } c[] = {
        {"1.1", 0, 1, CL_OK},
        {"1.2", 0, CL_END, CL_OK},
        {"1.3", 0, CL_MAXEOF, CL_OK},
        {"1.4", 1, 1, CL_OK},
        {"1.5", 1, CL_END, CL_OK},
        {"1.6", 1, CL_MAXEOF, CL_OK},
        {"1.7", CL_MAXEOF, 1, CL_OK},
        {"1.8", CL_MAXEOF, CL_END, CL_OK},
        {"1.9", CL_MAXEOF, CL_MAXEOF, CL_BADRANGE},
    };

    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        if (cl_test_range(r, c[i].label, NULL, c[i].start, c[i].len, c[i].expect) < 0)
            return -1;
    }
    /* The child sees the same (through its own mount, when it has one). */
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        if (cl_test_range(r, c[i].label, &r->child, c[i].start, c[i].len, c[i].expect) < 0)
            return -1;
    }
    return 0;
}

/* Test 2: the parent locks the whole file. */
int cl_test2(cl_run *r)
{
    static const struct {
        const char *label;
        int64_t start, len;
        int expect;
    } c[] = {
        {"2.1", 0, 1, CL_DENIED},
        {"2.2", 0, CL_END, CL_DENIED},
        {"2.3", 0, CL_MAXEOF, CL_DENIED},
        {"2.4", 1, 1, CL_DENIED},
        {"2.5", 1, CL_END, CL_DENIED},
        {"2.6", 1, CL_MAXEOF, CL_DENIED},
        {"2.7", CL_MAXEOF, 1, CL_DENIED},
        {"2.8", CL_MAXEOF, CL_END, CL_DENIED},
        {"2.9", CL_MAXEOF, CL_MAXEOF, CL_BADRANGE},
    };

    if (cl_lk(r, "2.0", NULL, F_SETLK, F_WRLCK, 0, CL_END, CL_OK) < 0)
        return -1;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        if (cl_test_range(r, c[i].label, &r->child, c[i].start, c[i].len, c[i].expect) < 0)
            return -1;
    }
    return cl_lk(r, "2.10", NULL, F_SETLK, F_UNLCK, 0, CL_END, CL_OK);
}

/* Test 3: the parent locks the first byte. */
int cl_test3(cl_run *r)
{
    if (cl_lk(r, "3.0", NULL, F_SETLK, F_WRLCK, 0, 1, CL_OK) < 0 ||
        cl_test_range(r, "3.1", &r->child, 0, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "3.2", &r->child, 0, CL_END, CL_DENIED) < 0 ||
        cl_test_range(r, "3.3", &r->child, 1, 1, CL_OK) < 0 ||
        cl_test_range(r, "3.4", &r->child, 1, CL_END, CL_OK) < 0)
        return -1;
    return cl_lk(r, "3.5", NULL, F_SETLK, F_UNLCK, 0, 1, CL_OK);
}

/* Test 4: the parent locks the second byte. */
int cl_test4(cl_run *r)
{
    if (cl_lk(r, "4.0", NULL, F_SETLK, F_WRLCK, 1, 1, CL_OK) < 0 ||
        cl_test_range(r, "4.1", &r->child, 0, 1, CL_OK) < 0 ||
        cl_test_range(r, "4.2", &r->child, 0, 2, CL_DENIED) < 0 ||
        cl_test_range(r, "4.3", &r->child, 0, CL_END, CL_DENIED) < 0 ||
        cl_test_range(r, "4.4", &r->child, 1, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "4.5", &r->child, 1, 2, CL_DENIED) < 0 ||
        cl_test_range(r, "4.6", &r->child, 1, CL_END, CL_DENIED) < 0 ||
        cl_test_range(r, "4.7", &r->child, 2, 1, CL_OK) < 0 ||
        cl_test_range(r, "4.8", &r->child, 2, 2, CL_OK) < 0 ||
        cl_test_range(r, "4.9", &r->child, 2, CL_END, CL_OK) < 0)
        return -1;
    return cl_lk(r, "4.10", NULL, F_SETLK, F_UNLCK, 1, 1, CL_OK);
}

/* Test 5: the parent locks bytes 0 and 2 (two locks, a gap between). */
int cl_test5(cl_run *r)
{
    if (cl_lk(r, "5.0", NULL, F_SETLK, F_WRLCK, 0, 1, CL_OK) < 0 ||
        cl_lk(r, "5.1", NULL, F_SETLK, F_WRLCK, 2, 1, CL_OK) < 0 ||
        cl_test_range(r, "5.2", &r->child, 0, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "5.3", &r->child, 0, 2, CL_DENIED) < 0 ||
        cl_test_range(r, "5.4", &r->child, 0, CL_END, CL_DENIED) < 0 ||
        cl_test_range(r, "5.5", &r->child, 1, 1, CL_OK) < 0 ||
        cl_test_range(r, "5.6", &r->child, 1, 2, CL_DENIED) < 0 ||
        cl_test_range(r, "5.7", &r->child, 1, CL_END, CL_DENIED) < 0 ||
        cl_test_range(r, "5.8", &r->child, 2, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "5.9", &r->child, 2, 2, CL_DENIED) < 0 ||
        cl_test_range(r, "5.10", &r->child, 2, CL_END, CL_DENIED) < 0 ||
        cl_test_range(r, "5.11", &r->child, 3, 1, CL_OK) < 0 ||
        cl_test_range(r, "5.12", &r->child, 3, 2, CL_OK) < 0 ||
        cl_test_range(r, "5.13", &r->child, 3, CL_END, CL_OK) < 0)
        return -1;
    if (cl_lk(r, "5.14", NULL, F_SETLK, F_UNLCK, 0, 1, CL_OK) < 0)
        return -1;
    return cl_lk(r, "5.15", NULL, F_SETLK, F_UNLCK, 2, 1, CL_OK);
}

/* Test 6: the parent locks the last byte there is (2^63 - 1). Ranges that
 * cannot be named are warnings, as in the classic suite. */
int cl_test6(cl_run *r)
{
    const int64_t past = INT64_MIN; /* "2^63" wraps to the lowest offset */

    if (cl_lk(r, "6.0", NULL, F_SETLK, F_WRLCK, CL_MAXEOF, 1, CL_OK) < 0 ||
        cl_test_range(r, "6.1", &r->child, CL_MAXEOF - 1, 1, CL_OK) < 0 ||
        cl_test_range(r, "6.2", &r->child, CL_MAXEOF - 1, 2, CL_DENIED) < 0 ||
        cl_test_range(r, "6.3", &r->child, CL_MAXEOF - 1, CL_END, CL_DENIED) < 0 ||
        cl_test_range(r, "6.4", &r->child, CL_MAXEOF, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "6.5", &r->child, CL_MAXEOF, 2, CL_BADRANGE) < 0 ||
        cl_test_range(r, "6.6", &r->child, CL_MAXEOF, CL_END, CL_DENIED) < 0 ||
        cl_test_range(r, "6.7", &r->child, past, CL_END, CL_BADRANGE) < 0 ||
        cl_test_range(r, "6.8", &r->child, past, 1, CL_BADRANGE) < 0 ||
        cl_test_range(r, "6.9", &r->child, past, CL_MAXEOF, CL_BADRANGE) < 0 ||
        cl_test_range(r, "6.10", &r->child, past, past, CL_BADRANGE) < 0)
        return -1;
    return cl_lk(r, "6.11", NULL, F_SETLK, F_UNLCK, CL_MAXEOF, 1, CL_OK);
}

/*
 * Test 7: mutual exclusion. The parent holds a range and writes into it;
 * the child waits for the range (F_SETLKW); the parent checks its data,
 * unlocks, and the child gets the range and writes. Then the parent waits
 * for it while the child holds it, and the child unlocks as soon as the
 * parent is seen waiting. The range crosses a page boundary.
 */
int cl_test7(cl_run *r)
{
    const char *pmsg = "aaaa eh", *cmsg = "bebebebeb";
    long page = sysconf(_SC_PAGESIZE);
    int64_t start = (page > 0 ? page : 65536) - 4, len = 9;
    double t_unlock, t_grant, t_cunlock;
    int err, rc;

    if (cl_lk(r, "7.0", NULL, F_SETLK, F_WRLCK, start, len, CL_OK) < 0 ||
        cl_write(r, NULL, start, pmsg) < 0)
        return -1;
    if (cl_peer_send_lock(r, &r->child, F_SETLKW, F_WRLCK, start, len) < 0)
        return -1;
    rc = cl_wait_blocked(r, r->child.pid, &r->child);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        if (cl_peer_result(r, &r->child, &err, NULL) < 0)
            return -1;
        return cl_fail(r, "7.3: the child's F_SETLKW returned (%s) while the parent held the range",
                       err ? strerror(err) : "granted");
    }
    cl_note(r, "the child waits in F_SETLKW for the parent's range");
    if (cl_read_expect(r, "7.1", NULL, start, pmsg) < 0)
        return -1;
    t_unlock = cl_now();
    if (cl_lk(r, "7.2", NULL, F_SETLK, F_UNLCK, start, len, CL_OK) < 0)
        return -1;
    if (cl_peer_result(r, &r->child, &err, &t_grant) < 0)
        return -1;
    if (err)
        return cl_fail(r, "7.3: the child's F_SETLKW failed: %s", strerror(err));
    r->pass++;
    cl_note(r, "7.3 the child got the range %.3f s after the parent's unlock", t_grant - t_unlock);
    cl_metric(r, "grant_s", t_grant - t_unlock);

    if (cl_write(r, &r->child, start, cmsg) < 0 ||
        cl_peer_unlock_when_blocked(r, &r->child, getpid(), start, len) < 0)
        return -1;
    if (cl_lk(r, "7.5", NULL, F_SETLKW, F_WRLCK, start, len, CL_OK) < 0)
        return -1;
    t_grant = cl_now();
    if (cl_peer_result(r, &r->child, &err, &t_cunlock) < 0)
        return -1;
    if (err)
        return cl_fail(r, "7.4: the child's unlock (once the parent waited) failed: %s",
                       strerror(err));
    r->pass++;
    cl_note(r, "7.5 the parent got the range %.3f s after the child's unlock", t_grant - t_cunlock);
    cl_metric(r, "grant_s", t_grant - t_cunlock);
    if (cl_read_expect(r, "7.6", NULL, start, cmsg) < 0)
        return -1;
    snprintf(r->summary, sizeof r->summary, "grants %.3f s and %.3f s after the unlocks",
             r->metric[0], r->metric[1]);
    return cl_lk(r, "7.7", NULL, F_SETLK, F_UNLCK, start, len, CL_OK);
}

/* Test 10: a locked region is split by unlocking a piece of it. */
int cl_test10(cl_run *r)
{
    if (cl_lk(r, "10.0", NULL, F_SETLK, F_WRLCK, 0, 3, CL_OK) < 0 ||
        cl_lk(r, "10.1", NULL, F_SETLK, F_UNLCK, 1, 1, CL_OK) < 0 ||
        cl_test_range(r, "10.2", &r->child, 0, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "10.3", &r->child, 2, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "10.4", &r->child, 3, CL_END, CL_OK) < 0 ||
        cl_test_range(r, "10.5", &r->child, 1, 1, CL_OK) < 0)
        return -1;
    if (cl_lk(r, "10.6", NULL, F_SETLK, F_UNLCK, 0, 1, CL_OK) < 0 ||
        cl_lk(r, "10.7", NULL, F_SETLK, F_UNLCK, 2, 1, CL_OK) < 0 ||
        cl_test_range(r, "10.8", &r->child, 0, 3, CL_OK) < 0)
        return -1;
    if (cl_lk(r, "10.9", NULL, F_SETLK, F_UNLCK, 0, 1, CL_OK) < 0 ||
        cl_lk(r, "10.10", NULL, F_SETLK, F_WRLCK, 1, 3, CL_OK) < 0 ||
        cl_lk(r, "10.11", NULL, F_SETLK, F_UNLCK, 2, 1, CL_OK) < 0 ||
        cl_test_range(r, "10.12", &r->child, 1, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "10.13", &r->child, 3, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "10.14", &r->child, 4, CL_END, CL_OK) < 0 ||
        cl_test_range(r, "10.15", &r->child, 2, 1, CL_OK) < 0 ||
        cl_test_range(r, "10.16", &r->child, 0, 1, CL_OK) < 0)
        return -1;
    return 0;
}

/* Test 11 helper: the parent closes its descriptor (which must release
 * all its locks on the file), and the child locks and unlocks the whole
 * file; then the parent's descriptor is made again from dupfd. */
static int cl_test11_step(cl_run *r, int dupfd, const char *lock, const char *unlock)
{
    cl_close(r);
    if (cl_lk(r, lock, &r->child, F_SETLK, F_WRLCK, 0, CL_END, CL_OK) < 0 ||
        cl_lk(r, unlock, &r->child, F_SETLK, F_UNLCK, 0, CL_END, CL_OK) < 0)
        return -1;
    r->fd = dup(dupfd);
    if (r->fd < 0)
        return cl_fail(r, "dup: %s", strerror(errno));
    return 0;
}

/* Test 11: close() of any descriptor releases the process's locks. */
int cl_test11(cl_run *r)
{
    const char *data = "123456789abcdef";
    int64_t n = (int64_t)strlen(data);
    int dupfd = dup(r->fd), rc = -1;

    if (dupfd < 0)
        return cl_fail(r, "dup: %s", strerror(errno));
    if (cl_lk(r, "11.0", NULL, F_SETLK, F_WRLCK, 0, CL_END, CL_OK) < 0 ||
        cl_test11_step(r, dupfd, "11.1", "11.2") < 0)
        goto out;
    if (cl_lk(r, "11.3", NULL, F_SETLK, F_WRLCK, 29, 1463, CL_OK) < 0 ||
        cl_lk(r, "11.4", NULL, F_SETLK, F_WRLCK, 0x2000, 87, CL_OK) < 0 ||
        cl_test11_step(r, dupfd, "11.5", "11.6") < 0)
        goto out;
    if (cl_write(r, NULL, 0, data) < 0 ||
        cl_lk(r, "11.7", NULL, F_SETLK, F_WRLCK, 0, CL_END, CL_OK) < 0 ||
        cl_write(r, NULL, n - 3, data) < 0 || cl_test11_step(r, dupfd, "11.8", "11.9") < 0)
        goto out;
    if (cl_write(r, NULL, 0, data) < 0 ||
        cl_lk(r, "11.10", NULL, F_SETLK, F_WRLCK, 0, CL_END, CL_OK) < 0)
        goto out;
    if (ftruncate(r->fd, 0) < 0) {
        cl_fail(r, "ftruncate: %s", strerror(errno));
        goto out;
    }
    if (cl_test11_step(r, dupfd, "11.11", "11.12") < 0)
        goto out;
    rc = 0;
out:
    close(dupfd);
    return rc;
}

/* Test 12: the locks of a process killed by a signal are released. */
int cl_test12(cl_run *r)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    cl_peer holder;
    double t0, end;
    unsigned tries = 0;

    if (cl_peer_start(r, &holder, "holder") < 0)
        return -1;
    if (cl_lk(r, "12.0", &holder, F_SETLK, F_WRLCK, 0, CL_END, CL_OK) < 0 ||
        cl_test_range(r, "12.0a", &r->child, 0, CL_END, CL_DENIED) < 0) {
        cl_peer_stop(&holder);
        return -1;
    }
    if (cl_peer_kill(r, &holder, SIGINT) < 0)
        return -1;
    cl_note(r, "killed the holder (SIGINT) and reaped it");
    t0 = cl_now();
    end = t0 + r->p->deadline_s;
    while (fcntl(r->fd, F_SETLK, &fl) < 0) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 20 * 1000000L};
        if (errno != EAGAIN && errno != EACCES)
            return cl_fail(r, "12.1: F_SETLK after the holder died: %s", strerror(errno));
        if (cl_now() > end)
            return cl_fail(r, "12.1: the killed holder's lock was still there after %u s",
                           r->p->deadline_s);
        tries++;
        nanosleep(&ts, NULL);
        fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET};
    }
    r->pass++;
    cl_note(r, "12.1 the parent got the whole file %.3f s after the holder was reaped (%u retries)",
            cl_now() - t0, tries);
    return cl_lk(r, "12.2", NULL, F_SETLK, F_UNLCK, 0, CL_END, CL_OK);
}
