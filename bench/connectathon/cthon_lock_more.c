/*
 * cthon_lock_more.c -- the lock tests beyond the range checks: the classic
 * suite's 8 (rate), 9 (mandatory locking, not run), 13 (mmap), 14 (I/O
 * rate) and 15 (second open), and this project's 16 to 20 (shared read
 * locks, promotion and demotion, 64-bit offsets, an interrupted wait,
 * adjoining ranges). See cthon_lock.h for the list.
 *
 * NOTES
 *   As in cthon_lock_classic.c, every test starts with the parent's
 *   descriptor open and the child running, and the driver cleans up.
 *   Tests 13 and 19 start a helper of their own and stop it on every path.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cthon_lock.h"

#define CL_END 0

/* Test 8: lock/unlock pairs of one byte per second (F_SETLK, F_UNLCK). */
int cl_test8(cl_run *r)
{
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    struct flock ul = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    unsigned n = r->p->rate_count;
    double t0, secs;

    t0 = cl_now();
    for (unsigned i = 0; i < n; i++) {
        if (fcntl(r->fd, F_SETLK, &lk) < 0)
            return cl_fail(r, "8: lock %u of %u: %s", i + 1, n, strerror(errno));
        if (fcntl(r->fd, F_SETLK, &ul) < 0)
            return cl_fail(r, "8: unlock %u of %u: %s", i + 1, n, strerror(errno));
    }
    secs = cl_now() - t0;
    r->pass++;
    cl_metric(r, "pairs_per_s", secs > 0 ? n / secs : 0);
    snprintf(r->summary, sizeof r->summary, "%u lock/unlock pairs in %.3f s: %.0f pairs/s", n, secs,
             secs > 0 ? n / secs : 0);
    return 0;
}

/* Test 9: mandatory locking. Not run: Linux 5.15 removed it (the classic
 * suite runs this test only when asked to, with -m). */
int cl_test9(cl_run *r)
{
    snprintf(r->summary, sizeof r->summary, "not run: Linux has no mandatory locking since 5.15");
    return 1;
}

/* Test 13: locking and mmap of one file. Whether a file with a lock that
 * is not page-aligned may be mapped is the system's choice: a refusal is
 * expected (EAGAIN), a success is a warning, as in the classic suite. */
int cl_test13(cl_run *r)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t len = page > 0 ? (size_t)page : 4096;
    void *map;
    int lock1err, rc = -1;

    if (cl_lk(r, "13.0", NULL, F_SETLK, F_WRLCK, (int64_t)len - 2, CL_END, CL_OK) < 0)
        return -1;
    map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    lock1err = map == MAP_FAILED ? errno : 0;
    if (lock1err == EAGAIN) {
        r->pass++;
    } else {
        r->warn++;
        cl_note(r,
                "13.1   mmap of a file with a lock that is not page-aligned: %s (expected "
                "EAGAIN)  WARNING",
                lock1err ? strerror(lock1err) : "mapped");
    }
    if (cl_lk(r, "13.2", NULL, F_SETLK, F_UNLCK, 0, CL_END, CL_OK) < 0)
        goto out;
    if (map != MAP_FAILED)
        munmap(map, len);
    map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    if (map == MAP_FAILED)
        return cl_fail(r, "13.3: mmap of the unlocked file: %s", strerror(errno));
    r->pass++;
    if (cl_lk(r, "13.4", NULL, F_SETLK, F_WRLCK, (int64_t)len - 2, CL_END,
              (lock1err ? CL_DENIED : CL_OK) | CL_WARN) < 0)
        goto out;
    rc = cl_lk(r, "13.5", NULL, F_SETLK, F_UNLCK, 0, CL_END, CL_OK);
out:
    if (map != MAP_FAILED)
        munmap(map, len);
    return rc;
}

/* One round of test 14: truncate, write kb KiB, read them back. 0 or -1. */
static int cl_iorate_round(cl_run *r, char *buf, char *back, size_t bufsize)
{
    int64_t total = (int64_t)r->p->iorate_kb * 1024;

    if (ftruncate(r->fd, 0) < 0)
        return cl_fail(r, "14: ftruncate: %s", strerror(errno));
    for (int64_t off = 0; off < total; off += (int64_t)bufsize) {
        size_t n = total - off < (int64_t)bufsize ? (size_t)(total - off) : bufsize;
        if (pwrite(r->fd, buf, n, off) != (ssize_t)n)
            return cl_fail(r, "14: write at %lld: %s", (long long)off, strerror(errno));
    }
    for (int64_t off = 0; off < total; off += (int64_t)bufsize) {
        size_t n = total - off < (int64_t)bufsize ? (size_t)(total - off) : bufsize;
        if (pread(r->fd, back, n, off) != (ssize_t)n)
            return cl_fail(r, "14: read at %lld: %s", (long long)off, strerror(errno));
        if (memcmp(buf, back, n) != 0)
            return cl_fail(r, "14: the data read at %lld differ from what was written",
                           (long long)off);
    }
    return 0;
}

/* Test 14: I/O rate on the unlocked file, then on the file locked whole. */
int cl_test14(cl_run *r)
{
    const size_t bufsize = 32768;
    char *buf = malloc(bufsize), *back = malloc(bufsize);
    double rate[2];
    int rc = -1;

    if (!buf || !back) {
        cl_fail(r, "14: out of memory");
        goto out;
    }
    for (size_t i = 0; i < bufsize; i++)
        buf[i] = (char)('a' + i % 26);
    for (int locked = 0; locked < 2; locked++) {
        double t0;
        if (locked && cl_lk(r, "14.0", NULL, F_SETLK, F_WRLCK, 0, CL_END, CL_OK) < 0)
            goto out;
        t0 = cl_now();
        for (unsigned i = 0; i < r->p->iorate_count; i++) {
            if (cl_iorate_round(r, buf, back, bufsize) < 0)
                goto out;
        }
        rate[locked] = 2.0 * r->p->iorate_kb * r->p->iorate_count / (cl_now() - t0);
        r->pass++;
    }
    if (cl_lk(r, "14.1", NULL, F_SETLK, F_UNLCK, 0, CL_END, CL_OK) < 0)
        goto out;
    cl_metric(r, "io_unlocked_kib_s", rate[0]);
    cl_metric(r, "io_locked_kib_s", rate[1]);
    snprintf(r->summary, sizeof r->summary, "%u x %u KiB: %.0f KiB/s unlocked, %.0f locked",
             r->p->iorate_count, r->p->iorate_kb, rate[0], rate[1]);
    rc = 0;
out:
    free(buf);
    free(back);
    return rc;
}

/* Test 15: a second descriptor stays usable across a lock, an unlock and
 * the close of the first; then I/O on a new first descriptor. */
int cl_test15(cl_run *r)
{
    const char *data = "abcdefghij";
    int fd2 = open(r->path, O_RDWR | O_CREAT | O_SYNC, 0666), rc = -1;

    if (fd2 < 0)
        return cl_fail(r, "15: second open: %s", strerror(errno));
    if (cl_lk(r, "15.0", NULL, F_SETLKW, F_WRLCK, 0, CL_END, CL_OK) < 0 ||
        cl_lk(r, "15.1", NULL, F_SETLK, F_UNLCK, 0, CL_END, CL_OK) < 0)
        goto out;
    cl_close(r);
    if (cl_open(r) < 0 || cl_write(r, NULL, 0, data) < 0 ||
        cl_read_expect(r, "15.2", NULL, 0, data) < 0)
        goto out;
    rc = 0;
out:
    close(fd2);
    return rc;
}

/* Test 16: read locks are shared; a write lock conflicts with either. */
int cl_test16(cl_run *r)
{
    if (cl_lk(r, "16.0", NULL, F_SETLK, F_RDLCK, 0, 100, CL_OK) < 0 ||
        cl_lk(r, "16.1", &r->child, F_SETLK, F_RDLCK, 50, 100, CL_OK) < 0 ||
        cl_lk(r, "16.2", &r->child, F_GETLK, F_RDLCK, 0, 100, CL_OK) < 0 ||
        cl_test_range(r, "16.3", &r->child, 0, 10, CL_DENIED) < 0 ||
        cl_lk(r, "16.4", NULL, F_SETLK, F_WRLCK, 60, 10, CL_DENIED) < 0 ||
        cl_lk(r, "16.5", NULL, F_SETLK, F_WRLCK, 0, 50, CL_OK) < 0 ||
        cl_lk(r, "16.6", &r->child, F_GETLK, F_RDLCK, 40, 1, CL_DENIED) < 0 ||
        cl_lk(r, "16.7", &r->child, F_SETLK, F_RDLCK, 40, 1, CL_DENIED) < 0 ||
        cl_lk(r, "16.8", &r->child, F_GETLK, F_RDLCK, 60, 10, CL_OK) < 0 ||
        cl_lk(r, "16.9", &r->child, F_SETLK, F_UNLCK, 50, 100, CL_OK) < 0 ||
        cl_lk(r, "16.10", NULL, F_SETLK, F_WRLCK, 50, 50, CL_OK) < 0 ||
        cl_lk(r, "16.11", &r->child, F_SETLK, F_RDLCK, 99, 1, CL_DENIED) < 0 ||
        cl_lk(r, "16.12", &r->child, F_SETLK, F_RDLCK, 100, 1, CL_OK) < 0 ||
        cl_lk(r, "16.13", &r->child, F_SETLK, F_UNLCK, 100, 1, CL_OK) < 0)
        return -1;
    return cl_lk(r, "16.14", NULL, F_SETLK, F_UNLCK, 0, 100, CL_OK);
}

/* Test 17: a lock changes type in place, whole and in part. */
int cl_test17(cl_run *r)
{
    if (cl_lk(r, "17.0", NULL, F_SETLK, F_RDLCK, 0, 100, CL_OK) < 0 ||
        cl_lk(r, "17.1", &r->child, F_SETLK, F_RDLCK, 0, 1, CL_OK) < 0 ||
        cl_lk(r, "17.2", &r->child, F_SETLK, F_UNLCK, 0, 1, CL_OK) < 0 ||
        /* promotion of the whole range */
        cl_lk(r, "17.3", NULL, F_SETLK, F_WRLCK, 0, 100, CL_OK) < 0 ||
        cl_lk(r, "17.4", &r->child, F_SETLK, F_RDLCK, 50, 1, CL_DENIED) < 0 ||
        /* demotion of the whole range */
        cl_lk(r, "17.5", NULL, F_SETLK, F_RDLCK, 0, 100, CL_OK) < 0 ||
        cl_lk(r, "17.6", &r->child, F_SETLK, F_RDLCK, 50, 1, CL_OK) < 0 ||
        cl_lk(r, "17.7", &r->child, F_SETLK, F_UNLCK, 50, 1, CL_OK) < 0 ||
        /* promotion of a piece: R [0,40) W [40,60) R [60,100) */
        cl_lk(r, "17.8", NULL, F_SETLK, F_WRLCK, 40, 20, CL_OK) < 0 ||
        cl_lk(r, "17.9", &r->child, F_SETLK, F_RDLCK, 30, 1, CL_OK) < 0 ||
        cl_lk(r, "17.10", &r->child, F_SETLK, F_UNLCK, 30, 1, CL_OK) < 0 ||
        cl_lk(r, "17.11", &r->child, F_SETLK, F_RDLCK, 45, 1, CL_DENIED) < 0 ||
        cl_lk(r, "17.12", &r->child, F_SETLK, F_RDLCK, 59, 2, CL_DENIED) < 0 ||
        cl_lk(r, "17.13", &r->child, F_SETLK, F_RDLCK, 60, 1, CL_OK) < 0 ||
        cl_lk(r, "17.14", &r->child, F_SETLK, F_UNLCK, 60, 1, CL_OK) < 0 ||
        cl_test_range(r, "17.15", &r->child, 0, 1, CL_DENIED) < 0 ||
        /* demotion of the piece: all read again */
        cl_lk(r, "17.16", NULL, F_SETLK, F_RDLCK, 40, 20, CL_OK) < 0 ||
        cl_lk(r, "17.17", &r->child, F_SETLK, F_RDLCK, 45, 1, CL_OK) < 0 ||
        cl_lk(r, "17.18", &r->child, F_SETLK, F_UNLCK, 45, 1, CL_OK) < 0 ||
        cl_lk(r, "17.19", NULL, F_SETLK, F_UNLCK, 0, 100, CL_OK) < 0 ||
        cl_lk(r, "17.20", &r->child, F_SETLK, F_WRLCK, 0, 100, CL_OK) < 0)
        return -1;
    return cl_lk(r, "17.21", &r->child, F_SETLK, F_UNLCK, 0, 100, CL_OK);
}

/* Test 18: ranges past 2^31 and 2^32, where a server that kept 32-bit
 * offsets, or wrapped start + length, would see other bytes. */
int cl_test18(cl_run *r)
{
    const int64_t g2 = INT64_C(1) << 31, g4 = INT64_C(1) << 32, t40 = INT64_C(1) << 40;

    if (cl_lk(r, "18.0", NULL, F_SETLK, F_WRLCK, g2 - 1, 2, CL_OK) < 0 ||
        cl_lk(r, "18.1", NULL, F_SETLK, F_WRLCK, g4, 1, CL_OK) < 0 ||
        cl_lk(r, "18.2", NULL, F_SETLK, F_WRLCK, g4 + g2, 1, CL_OK) < 0 ||
        cl_lk(r, "18.3", NULL, F_SETLK, F_WRLCK, t40, INT64_C(1) << 20, CL_OK) < 0)
        return -1;
    if (cl_test_range(r, "18.4", &r->child, g2 - 2, 1, CL_OK) < 0 ||
        cl_test_range(r, "18.5", &r->child, g2 - 1, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "18.6", &r->child, g2, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "18.7", &r->child, g2 + 1, 1, CL_OK) < 0 ||
        cl_test_range(r, "18.8", &r->child, g4 - 1, 1, CL_OK) < 0 ||
        cl_test_range(r, "18.9", &r->child, g4, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "18.10", &r->child, g4 + 1, 1, CL_OK) < 0 ||
        cl_test_range(r, "18.11", &r->child, 0, 1, CL_OK) < 0 ||
        cl_test_range(r, "18.12", &r->child, 1, 1, CL_OK) < 0 ||
        cl_test_range(r, "18.13", &r->child, g2 - 1 + g4, 1, CL_OK) < 0 ||
        cl_test_range(r, "18.14", &r->child, t40 - 1, 1, CL_OK) < 0 ||
        cl_test_range(r, "18.15", &r->child, t40 + (INT64_C(1) << 19), 1, CL_DENIED) < 0 ||
        cl_test_range(r, "18.16", &r->child, t40 + (INT64_C(1) << 20), 1, CL_OK) < 0)
        return -1;
    /* Lengths that end exactly before, or exactly on, a held byte. */
    if (cl_lk(r, "18.17", &r->child, F_SETLK, F_WRLCK, g4 + 1, g2 - 1, CL_OK) < 0 ||
        cl_lk(r, "18.18", &r->child, F_SETLK, F_UNLCK, g4 + 1, g2 - 1, CL_OK) < 0 ||
        cl_lk(r, "18.19", &r->child, F_SETLK, F_WRLCK, g4 + 1, g2, CL_DENIED) < 0 ||
        cl_lk(r, "18.20", &r->child, F_SETLK, F_WRLCK, g2 + 1, g4 - g2 - 1, CL_OK) < 0 ||
        cl_lk(r, "18.21", &r->child, F_SETLK, F_UNLCK, g2 + 1, g4 - g2 - 1, CL_OK) < 0 ||
        cl_lk(r, "18.22", &r->child, F_SETLK, F_WRLCK, g2 + 1, g4 - g2, CL_DENIED) < 0)
        return -1;
    return cl_lk(r, "18.23", NULL, F_SETLK, F_UNLCK, 0, CL_END, CL_OK);
}

/* Test 19: a wait for a lock (F_SETLKW) interrupted by a signal returns
 * EINTR and leaves every lock as it was: the holder keeps its range, and
 * the interrupted process gets nothing later. */
int cl_test19(cl_run *r)
{
    cl_peer third;
    int err, rc;

    if (cl_lk(r, "19.0", NULL, F_SETLK, F_WRLCK, 0, 10, CL_OK) < 0 ||
        cl_peer_send_lock(r, &r->child, F_SETLKW, F_WRLCK, 0, 10) < 0)
        return -1;
    rc = cl_wait_blocked(r, r->child.pid, &r->child);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        if (cl_peer_result(r, &r->child, &err, NULL) < 0)
            return -1;
        return cl_fail(r,
                       "19.1: the child's F_SETLKW returned (%s) while the parent held "
                       "the range",
                       err ? strerror(err) : "granted");
    }
    r->pass++;
    kill(r->child.pid, SIGUSR1);
    if (cl_peer_result(r, &r->child, &err, NULL) < 0)
        return -1;
    if (err != EINTR)
        return cl_fail(r, "19.2: the interrupted F_SETLKW returned %s, expected EINTR",
                       err ? strerror(err) : "success (granted)");
    r->pass++;
    cl_note(r, "19.2 the child's wait was interrupted: EINTR");
    if (cl_test_range(r, "19.3", &r->child, 0, 10, CL_DENIED) < 0 ||
        cl_lk(r, "19.4", NULL, F_SETLK, F_UNLCK, 0, 10, CL_OK) < 0)
        return -1;
    /* A third process gets the range at once: nothing was granted to the
     * interrupted waiter. */
    if (cl_peer_start(r, &third, "third") < 0)
        return -1;
    rc = -1;
    if (cl_lk(r, "19.5", &third, F_SETLK, F_WRLCK, 0, 10, CL_OK) == 0 &&
        cl_test_range(r, "19.6", &r->child, 0, 10, CL_DENIED) == 0 &&
        cl_lk(r, "19.7", &third, F_SETLK, F_UNLCK, 0, 10, CL_OK) == 0 &&
        cl_lk(r, "19.8", &r->child, F_SETLK, F_WRLCK, 0, 10, CL_OK) == 0 &&
        cl_lk(r, "19.9", &r->child, F_SETLK, F_UNLCK, 0, 10, CL_OK) == 0)
        rc = 0;
    cl_peer_stop(&third);
    return rc;
}

/* Test 20: two adjoining ranges of one owner act as one; unlocking a
 * middle piece splits them; a new type over them replaces both. */
int cl_test20(cl_run *r)
{
    if (cl_lk(r, "20.0", NULL, F_SETLK, F_WRLCK, 10, 10, CL_OK) < 0 ||
        cl_lk(r, "20.1", NULL, F_SETLK, F_WRLCK, 20, 10, CL_OK) < 0 ||
        cl_lk(r, "20.2", NULL, F_SETLK, F_UNLCK, 15, 10, CL_OK) < 0 ||
        cl_test_range(r, "20.3", &r->child, 14, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "20.4", &r->child, 15, 1, CL_OK) < 0 ||
        cl_test_range(r, "20.5", &r->child, 24, 1, CL_OK) < 0 ||
        cl_test_range(r, "20.6", &r->child, 25, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "20.7", &r->child, 29, 1, CL_DENIED) < 0 ||
        cl_test_range(r, "20.8", &r->child, 30, 1, CL_OK) < 0 ||
        cl_test_range(r, "20.9", &r->child, 15, 10, CL_OK) < 0 ||
        cl_test_range(r, "20.10", &r->child, 14, 2, CL_DENIED) < 0 ||
        cl_lk(r, "20.11", NULL, F_SETLK, F_RDLCK, 10, 20, CL_OK) < 0 ||
        cl_lk(r, "20.12", &r->child, F_SETLK, F_RDLCK, 12, 16, CL_OK) < 0 ||
        cl_lk(r, "20.13", &r->child, F_SETLK, F_UNLCK, 12, 16, CL_OK) < 0 ||
        cl_test_range(r, "20.14", &r->child, 20, 1, CL_DENIED) < 0 ||
        cl_lk(r, "20.15", NULL, F_SETLK, F_UNLCK, 10, 20, CL_OK) < 0)
        return -1;
    return cl_test_range(r, "20.16", &r->child, 10, 20, CL_OK);
}
