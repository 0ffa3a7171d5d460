/*
 * dbfs_coh.h -- the parts of a frontend among several (struct dbfs_coh)
 * that its two files share: dbfs_coh.c (registration, heartbeat, the
 * thread, the barrier a request waits for) and dbfs_coh_log.c (reading
 * the invalidation log by snapshot and applying it to the caches).
 *
 * NOTES
 *   Private to dbfs/. The log state (dbfs_coh_snap) belongs to the
 *   frontend's thread alone; the fields under `lock` and the atomics are
 *   shared with the worker threads that wait for barriers.
 */
#ifndef PGNFS_DBFS_COH_H
#define PGNFS_DBFS_COH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <glib.h>
#include <libpq-fe.h>

#include "dbfs_conn.h"
#include "dbfs_int.h"

/* Where the last read of the log left off: the snapshot it ran under
 * (its xmax, and the transactions then in progress). The rows not yet
 * read are exactly those of transactions not visible to it: xid >= xmax
 * or xid in xip. valid: false until the first read after (re)connecting. */
typedef struct {
    bool valid;
    uint64_t xmax;
    GArray *xip;      /* uint64_t, the snapshot's in-progress top-level xids */
    uint64_t horizon; /* min(xip, xmax): no row below it is needed again */
} dbfs_coh_snap;

struct dbfs_coh {
    dbfs *fs;
    /* The reading session (shared only). After LISTEN it runs nothing but
     * the log reads, through libpq itself, because dbfs_conn's check of an
     * idle session takes pending notifications for a closed connection
     * and reconnects, which would end the LISTEN unnoticed. */
    dbfs_conn *c;
    dbfs_conn *beat; /* registration, heartbeat, trimming */
    bool shared;
    int64_t id; /* our row */
    char *host, *address;
    unsigned port;
    GThread *thread;
    int wake_fd; /* eventfd: a read is wanted, or stop */
    GMutex lock;
    GCond cond;
    /* Under lock (the atomics are also read without it). */
    _Atomic uint64_t started, done; /* log reads sent, and applied */
    uint64_t wanted;                /* the highest read a waiter needs */
    bool inflight;                  /* a read sent has not come back */
    _Atomic bool up;                /* reading, caches reset since the last loss */
    bool stop;
    bool renewed;    /* down for a renewal, not a loss: nothing to log (thread) */
    int renew_watch; /* dbfs_renew_watch's id; -1: none */
    /* Solo: a shared frontend that registered alone answers from its
     * caches as in single mode, while its heartbeat is fresh, until
     * another joins (dbfs_coh.c). */
    _Atomic bool solo;
    _Atomic int64_t beat_ok_us; /* the last heartbeat that succeeded */
    bool leave_solo, ack_pending;
    _Atomic uint64_t calls, invalidations, barriers, resets;
    int64_t next_beat_us, next_read_us;
    /* The thread's own. */
    dbfs_coh_snap snap;
    char *id_text;  /* our id, as the reads' origin parameter */
    char pidns[64]; /* our process namespace ("pid:[N]"; "" unknown) */
};

/* The statement name of the log read on the reading session. */
#define DBFS_COH_READ_STMT "pgnfs_coh_read"

/*
 * dbfs_coh_log_prepare -- prepare the log read on h->c (after its LISTEN,
 * through libpq). Returns 0 or -EAGAIN (the session is lost).
 */
int dbfs_coh_log_prepare(dbfs_coh *h);

/*
 * dbfs_coh_log_send -- send one read of the log after h->snap (none
 * valid: the snapshot only) without waiting. Returns 0 or -EAGAIN.
 */
int dbfs_coh_log_send(dbfs_coh *h);

/*
 * dbfs_coh_log_apply -- apply the result r of a read: every row another
 * frontend's (or a session's) committed change left since the last read
 * becomes a cache invalidation; h->snap moves to r's snapshot. With no
 * valid snapshot before, or when the log was trimmed past it (this
 * frontend was taken for dead), every cache is reset instead. Returns 0,
 * or -EIO for a result it cannot read (h->snap is then invalid). Does
 * not clear r.
 */
int dbfs_coh_log_apply(dbfs_coh *h, const PGresult *r);

/* dbfs_coh_log_forget -- the session is lost: no snapshot is valid. */
void dbfs_coh_log_forget(dbfs_coh *h);

/* dbfs_coh_log_horizon -- h->snap.horizon as text into buf (xid8 input),
 * or NULL when no snapshot is valid. */
const char *dbfs_coh_log_horizon(const dbfs_coh *h, char *buf, size_t len);

#endif /* PGNFS_DBFS_COH_H */
