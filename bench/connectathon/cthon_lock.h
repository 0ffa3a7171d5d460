/*
 * cthon_lock.h -- the Connectathon lock tests (record locking with fcntl
 * between a parent and a child process on one file), written for this
 * project: the tests, the helper process that plays the child, and the
 * checks they share. `cthon-lock DIR` (cthon_lock_main.c) runs them.
 *
 * The tests keep the numbers and meaning of the classic suite's tlock
 * program; 16 and up are this project's own:
 *   1   regions of an unlocked file (whole file, ranges, the 2^63-1 byte)
 *   2   the parent locks the whole file; every test of the child fails
 *   3   the parent locks byte 0; the child tests around it
 *   4   the parent locks byte 1; the child tests around it
 *   5   the parent locks bytes 0 and 2; the child tests around them
 *   6   the parent locks the byte at 2^63-1 (the last offset)
 *   7   mutual exclusion: the child waits (F_SETLKW) for the parent's
 *       lock and gets it at the unlock; then the parent waits for the child
 *   8   rate: lock/unlock pairs per second (only when asked for)
 *   9   mandatory locking: not run (Linux has none since 5.15)
 *   10  a locked region is split by unlocking a piece of it
 *   11  close() of any descriptor releases the process's locks
 *   12  a killed process's locks are released
 *   13  locking and mmap of one file (mismatches are warnings)
 *   14  I/O rate on the unlocked and on the locked file
 *   15  a second open, lock and unlock, close, and I/O after it
 *   16  read locks are shared; a write lock conflicts with either
 *   17  promotion and demotion of a lock, whole and in part
 *   18  offsets past 2^31 and 2^32 (64-bit ranges, no truncation)
 *   19  a wait (F_SETLKW) interrupted by a signal changes no lock
 *   20  adjoining ranges of one owner merge, and split again
 *
 * NOTES
 *   Every check prints one line ("  N.M  who  op  range  result") and
 *   counts as passed, warned (a result the classic suite also tolerates)
 *   or failed. A failed check ends its test: the test returns -1 with
 *   run->errmsg set, and the driver stops the helper and removes the file.
 *
 *   "Denied" means what POSIX allows for a conflict: F_SETLK fails with
 *   EAGAIN or EACCES, F_GETLK reports a conflicting lock. When a test
 *   expects the child to see a conflict, the child asks twice: F_GETLK (a
 *   kernel NFS client answers that from its own table when the conflict
 *   is local) and F_SETLK (which a server decides). When the child works
 *   through a second mount of the same directory (--peer-dir), nothing is
 *   local to it and every answer comes from the server.
 *
 *   No check depends on timing: a process is "blocked" when /proc shows it
 *   asleep in fcntl(2), a lock is "released" when a retried F_SETLK gets
 *   it, and every wait has a deadline (--deadline, default 300 s).
 *
 *   Memory and processes: a cl_run owns its helper processes (cl_peer);
 *   cl_peer_stop() reaps them. Nothing is shared between tests.
 */
#ifndef PGNFS_CTHON_LOCK_H
#define PGNFS_CTHON_LOCK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The last byte offset a lock can name (2^63 - 1). */
#define CL_MAXEOF INT64_MAX

/* Expected outcomes of a lock operation (cl_lk's expect). */
enum {
    CL_OK = 0,       /* succeeds (F_GETLK: reports the range free) */
    CL_DENIED = 1,   /* a conflict (EAGAIN/EACCES, or F_GETLK reports a lock) */
    CL_BADRANGE = 2, /* EINVAL or EOVERFLOW (a range that cannot be named);
                      * anything else is only a warning, as in the classic suite */
    CL_WARN = 0x10   /* or'ed in: a different outcome is only a warning */
};

/* Parameters of a run. */
typedef struct cl_params {
    unsigned rate_count;   /* test 8: lock/unlock pairs (1000) */
    unsigned iorate_kb;    /* test 14: file size in KiB (256) */
    unsigned iorate_count; /* test 14: rounds per state (10) */
    unsigned deadline_s;   /* longest wait for any event (300) */
    bool verbose;          /* print every check, not only failures and warnings */
} cl_params;

/* A helper process that runs lock and I/O requests on its own descriptor. */
typedef struct cl_peer {
    pid_t pid;   /* 0: not running */
    int sock;    /* our end of its socket pair */
    bool busy;   /* a request was sent and its reply not yet read */
    char who[8]; /* "child", "third" */
} cl_peer;

/* One run of one test. */
typedef struct cl_run {
    const cl_params *p;
    const char *dir;         /* where the parent opens the file */
    const char *peer_dir;    /* where helpers open it (dir, or a second mount) */
    char name[NAME_MAX + 1]; /* the test file's name in both directories */
    char path[PATH_MAX];     /* dir/name */
    char ppath[PATH_MAX];    /* peer_dir/name */
    int fd;                  /* the parent's descriptor, -1 when closed */
    cl_peer child;           /* the second process of every test */
    const char *id;          /* the running test's number */
    unsigned pass, warn;     /* checks of the running test */
    char errmsg[1024];       /* why it failed */
    char summary[160];       /* one line about what it measured */
    double metric[4];        /* figures for scripts (METRIC lines) */
    const char *metric_name[4];
    unsigned nmetric;
} cl_run;

/* One test. run: 0 passed (possibly with warnings), -1 failed, 1 skipped
 * (with run->summary saying why). */
typedef struct cl_test {
    const char *id;
    const char *name;
    bool by_default; /* run when no list is given */
    int (*run)(cl_run *r);
} cl_test;

/* The tests: 1-7 and 10-12 in cthon_lock_classic.c, the others in
 * cthon_lock_more.c; the table that lists them is in cthon_lock_main.c. */
int cl_test1(cl_run *r);
int cl_test2(cl_run *r);
int cl_test3(cl_run *r);
int cl_test4(cl_run *r);
int cl_test5(cl_run *r);
int cl_test6(cl_run *r);
int cl_test7(cl_run *r);
int cl_test8(cl_run *r);
int cl_test9(cl_run *r);
int cl_test10(cl_run *r);
int cl_test11(cl_run *r);
int cl_test12(cl_run *r);
int cl_test13(cl_run *r);
int cl_test14(cl_run *r);
int cl_test15(cl_run *r);
int cl_test16(cl_run *r);
int cl_test17(cl_run *r);
int cl_test18(cl_run *r);
int cl_test19(cl_run *r);
int cl_test20(cl_run *r);

/* cl_params_default -- the classic parameters, or with quick the small ones
 * of a CI run. Cannot fail. */
void cl_params_default(cl_params *p, bool quick);

/* cl_now -- seconds on CLOCK_MONOTONIC (comparable between processes). */
double cl_now(void);

/* cl_fail -- record why the test failed in r->errmsg; returns -1. */
int cl_fail(cl_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cl_note -- print an informational line of the running test. */
void cl_note(cl_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cl_metric -- record a figure for the METRIC lines (at most four). */
void cl_metric(cl_run *r, const char *name, double value);

/* --- the parent's own operations (fd r->fd) ---------------------------- */

/* cl_open -- open (creating) the test file as the parent: 0 or -1. */
int cl_open(cl_run *r);

/* cl_close -- close the parent's descriptor (no-op when closed). */
void cl_close(cl_run *r);

/*
 * cl_lk -- check fcntl(cmd) with a lock of `type` on [start, start+len) (len
 * 0: to the end of every file) by the parent (peer NULL) or a helper.
 * F_SETLK/F_SETLKW with type F_UNLCK unlocks. The parent's F_SETLKW is
 * interrupted (EINTR) when it waits longer than the deadline. For F_GETLK,
 * "denied" is a reported conflict. expect is CL_OK, CL_DENIED or
 * CL_BADRANGE, possibly with CL_WARN. label is "N.M". Returns 0 when the
 * check passed or only warned, -1 (with r->errmsg) when it failed.
 */
int cl_lk(cl_run *r, const char *label, cl_peer *peer, int cmd, short type, int64_t start,
          int64_t len, int expect);

/*
 * cl_test_range -- the classic "F_TEST": does a write lock on the range
 * conflict? With CL_DENIED the helper also tries F_SETLK (which must fail
 * too, and which the server decides). Same result as cl_lk().
 */
int cl_test_range(cl_run *r, const char *label, cl_peer *peer, int64_t start, int64_t len,
                  int expect);

/* cl_write, cl_read_expect -- write data at off as the parent or a helper;
 * read back len bytes at off and compare them with data. 0 or -1. */
int cl_write(cl_run *r, cl_peer *peer, int64_t off, const char *data);
int cl_read_expect(cl_run *r, const char *label, cl_peer *peer, int64_t off, const char *data);

/* --- helpers ------------------------------------------------------------ */

/* cl_peer_start -- fork a helper named who that opens r->ppath. 0 or -1. */
int cl_peer_start(cl_run *r, cl_peer *peer, const char *who);

/* cl_peer_stop -- end a helper (SIGKILL if it does not exit when asked) and
 * reap it. Safe on a helper that is not running. */
void cl_peer_stop(cl_peer *peer);

/*
 * cl_peer_send_lock -- start fcntl(cmd) on a helper without waiting for its
 * answer (for F_SETLKW that blocks). cl_peer_result() collects it. 0 or -1.
 */
int cl_peer_send_lock(cl_run *r, cl_peer *peer, int cmd, short type, int64_t start, int64_t len);

/*
 * cl_peer_result -- wait up to the deadline for the answer of the request
 * cl_peer_send_lock() started: *err is 0 or the errno, *t_done the time
 * (cl_now) at which the helper's call returned. 0, or -1 (r->errmsg) when no
 * answer came.
 */
int cl_peer_result(cl_run *r, cl_peer *peer, int *err, double *t_done);

/* cl_peer_ready -- has the helper's answer arrived (without waiting)? */
bool cl_peer_ready(cl_peer *peer);

/*
 * cl_peer_unlock_when_blocked -- ask the helper to unlock [start, +len) as
 * soon as process `waiter` is blocked in fcntl; its answer (collected with
 * cl_peer_result) carries the time at which its unlock call started. 0 or -1.
 */
int cl_peer_unlock_when_blocked(cl_run *r, cl_peer *peer, pid_t waiter, int64_t start, int64_t len);

/* cl_peer_kill -- send sig to the helper and reap it (it must die of it).
 * 0, or -1 (r->errmsg) when it exited otherwise. */
int cl_peer_kill(cl_run *r, cl_peer *peer, int sig);

/* cl_peer_close -- the helper closes its descriptor (0 or -1). */
int cl_peer_close(cl_run *r, cl_peer *peer);

/*
 * cl_wait_blocked -- wait until process pid sleeps in fcntl(2) (as /proc
 * shows), or until peer (if not NULL) answers. Returns 0 when blocked, 1
 * when the peer answered first, -1 on the deadline (r->errmsg).
 */
int cl_wait_blocked(cl_run *r, pid_t pid, cl_peer *peer);

#endif
