/*
 * dbfs_space.c -- the space guard (dbfs_space.h).
 *
 * PostgreSQL must never be the one to meet a full disk: a checkpoint or a
 * WAL segment that cannot be written stops it (PANIC), and it may not
 * start again until space is freed. So data writes stop first. The file
 * system under space_path (the embedded cluster's directory, or
 * [storage] space_path for a database elsewhere) keeps `reserve` bytes
 * free for PostgreSQL itself: WAL until the next checkpoint recycles it,
 * checkpoints, vacuum's maps, its log. The rule, for a write that stores
 * b bytes:
 *
 *   need = b + b / 16 + DBFS_SPACE_SLACK     (heap and index overhead)
 *   avail - since - inflight - pending + credit - need >= reserve  or refuse
 *
 *   avail     statvfs f_bavail (what PostgreSQL, not root, may use),
 *             measured at most every DBFS_SPACE_PERIOD_US or
 *             DBFS_SPACE_BYTES of writes, and at every write once the
 *             margin left is under DBFS_SPACE_NEAR (exact near the line);
 *   since     bytes stored since that measurement (not reused space);
 *   inflight  bytes admitted and not yet stored (concurrent writes);
 *   pending   what the write-back buffer holds (an UNSTABLE write);
 *   credit    free space inside allfiles that PostgreSQL will reuse,
 *             as the last reclaim measured it, less what writes to
 *             allfiles took since (single and hybrid layouts only).
 *
 * Metadata changes and removals are never refused: they are how space
 * comes back. Removals in allfiles leave dead rows, which only VACUUM
 * turns into reusable space. So a write the rule refuses after something
 * was removed, truncated or overwritten (dbfs_space_changed) since the
 * last reclaim answers -EAGAIN (JUKEBOX) and asks for one; the server's
 * flusher thread runs it (dbfs_space_tend, never a request thread):
 *
 *     live  = the toast slots the files in allfiles may hold (fileatt:
 *             stored bytes / slot + chunks), read before VACUUM
 *     VACUUM allfiles (single) or the whole database (per-file tables)
 *     CHECKPOINT: the removals and VACUUM wrote WAL (a full page image of
 *             every page they touched), which only a checkpoint lets
 *             PostgreSQL recycle; skipped for good if the role may not
 *     pages = allfiles' TOAST relation size; dead = its rows VACUUM could
 *             not remove yet (pg_stat_all_tables)
 *     credit = (4 slots x pages - live - dead) x slot bytes
 *
 * A TOAST page holds four full slots (TOAST_TUPLES_PER_PAGE), so counting
 * every live chunk row as whole slots gives a lower bound of the room for
 * full slots. VACUUM also cuts empty pages off the relation's end, which
 * statvfs then shows. The next write decides with the new figures: it
 * fits, or (nothing changed since) -ENOSPC.
 *
 *     OK --rule fails, nothing changed--> -ENOSPC (logged once a minute)
 *     OK --rule fails, changes since the last reclaim--> -EAGAIN, WANT
 *     WANT --dbfs_space_tend--> RUNNING --done--> OK (figures new)
 *     RUNNING --done, the CHECKPOINT ran--> RENEWING: every connection is
 *             opened anew (dbfs_renew_all), since a checkpoint's removed
 *             WAL stays on the disk while an idle backend holds it open;
 *             a write that does not fit meanwhile answers -EAGAIN
 *     RENEWING --all opened anew, or DBFS_RENEW_MAX_US--> OK
 *
 * NOTES
 *   One mutex guards the figures; a write takes it twice (take, done) and
 *   calls statvfs only as said above. The reclaim's session belongs to
 *   the thread that calls dbfs_space_tend.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include <glib.h>

#include "dbfs_conn.h"
#include "dbfs_space.h"

#define DBFS_SPACE_MIB       (UINT64_C(1) << 20)
#define DBFS_SPACE_PERIOD_US (250 * 1000)
#define DBFS_SPACE_BYTES     (8 * DBFS_SPACE_MIB)
#define DBFS_SPACE_NEAR      (32 * DBFS_SPACE_MIB)
#define DBFS_SPACE_SLACK     4096
/* After a reclaim failed (the database away), the next one waits this long. */
#define DBFS_SPACE_RETRY_US (2 * G_USEC_PER_SEC)
/* A refusal is logged at most this often. */
#define DBFS_SPACE_WARN_US (60 * G_USEC_PER_SEC)
/* TOAST: full slots per page (TOAST_TUPLES_PER_PAGE), and a slot's bytes
 * for a page of b bytes (TOAST_MAX_CHUNK_SIZE: 1996 for 8 KiB pages). */
#define DBFS_TOAST_PER_PAGE 4
#define DBFS_TOAST_SLOT(b)  ((b) / DBFS_TOAST_PER_PAGE - 52)

struct dbfs_space {
    char *path;
    uint64_t reserve;
    GMutex lock;
    /* Under lock: */
    int64_t measured_us; /* 0: measure at the next write */
    uint64_t total, avail;
    uint64_t since, inflight;
    uint64_t credit, credit_used;
    uint64_t shared_total, shared_inflight; /* bytes admitted to allfiles */
    uint64_t changes, reclaimed;            /* changes as of the last reclaim's start */
    bool want, running;
    bool measure_failed;
    int64_t warned_us;
    int64_t retry_us;   /* no reclaim before (after a failed one) */
    bool no_checkpoint; /* CHECKPOINT failed once: the role may not (tend's thread only) */
};

static uint64_t dbfs_space_sub(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

/* dbfs_space_open -- see dbfs_space.h. */
int dbfs_space_open(dbfs *fs, const dbfs_config *cfg)
{
    struct dbfs_space *s;

    fs->space = NULL;
    if (!cfg->space_path || !*cfg->space_path || cfg->space_reserve == 0)
        return 0;
    s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(cfg->space_path))) {
        free(s);
        return -ENOMEM;
    }
    s->reserve = cfg->space_reserve;
    g_mutex_init(&s->lock);
    fs->space = s;
    g_info("space: data writes keep %" PRIu64 " MiB free on the file system of %s for "
           "PostgreSQL (WAL, checkpoints, vacuum)",
           s->reserve / DBFS_SPACE_MIB, s->path);
    return 0;
}

/* dbfs_space_close -- see dbfs_space.h. */
void dbfs_space_close(dbfs *fs)
{
    struct dbfs_space *s = fs ? fs->space : NULL;

    if (!s)
        return;
    g_mutex_clear(&s->lock);
    free(s->path);
    free(s);
    fs->space = NULL;
}

/* dbfs_space_shared -- see dbfs_space.h. */
bool dbfs_space_shared(const dbfs *fs, uint64_t end)
{
    switch (fs->info.storage) {
    case DBFS_STORAGE_SINGLE:
        return true;
    case DBFS_STORAGE_HYBRID:
        return end <= fs->info.hybrid_threshold;
    default:
        return false;
    }
}

/* dbfs_space_guarded -- see dbfs.h. */
bool dbfs_space_guarded(const dbfs *fs)
{
    return fs && fs->space;
}

/* statvfs now (locked). False when it fails (logged once). */
static bool dbfs_space_measure(struct dbfs_space *s, int64_t now)
{
    struct statvfs sv;

    if (statvfs(s->path, &sv) != 0) {
        if (!s->measure_failed)
            g_warning("space: statvfs of %s failed (%s): data writes are not held back from "
                      "filling its disk",
                      s->path, g_strerror(errno));
        s->measure_failed = true;
        return false;
    }
    s->measure_failed = false;
    s->total = (uint64_t)sv.f_blocks * sv.f_frsize;
    s->avail = (uint64_t)sv.f_bavail * sv.f_frsize;
    s->since = 0;
    s->measured_us = now;
    return true;
}

/* The margin a write of need bytes would leave above the reserve
 * (negative: it does not fit). Locked. */
static int64_t dbfs_space_margin(const struct dbfs_space *s, uint64_t need, uint64_t pending,
                                 bool shared)
{
    uint64_t credit = shared ? dbfs_space_sub(s->credit, s->credit_used) : 0;
    int64_t have =
        (int64_t)s->avail - (int64_t)(s->since + s->inflight + pending) + (int64_t)credit;

    return have - (int64_t)need - (int64_t)s->reserve;
}

/* The write does not fit: -EAGAIN when space may come back (a reclaim
 * asked for, or the connections still being opened anew after one), else
 * -ENOSPC, said once a minute. Locked. */
static int dbfs_space_refuse(dbfs *fs, struct dbfs_space *s, int64_t now, uint64_t need)
{
    if (s->changes != s->reclaimed || s->running) {
        s->want = true;
        return -EAGAIN;
    }
    if (dbfs_renew_pending(fs) > 0)
        return -EAGAIN;
    if (s->warned_us == 0 || now - s->warned_us >= DBFS_SPACE_WARN_US) {
        s->warned_us = now;
        g_warning("space: the file system of %s has %" PRIu64 " MiB free and keeps %" PRIu64
                  " MiB for PostgreSQL: a write of %" PRIu64
                  " KiB answers NOSPC (remove files to make room)",
                  s->path, s->avail / DBFS_SPACE_MIB, s->reserve / DBFS_SPACE_MIB, need / 1024);
    }
    return -ENOSPC;
}

/* take (admit) or check: see dbfs_space.h. */
static int dbfs_space_decide(dbfs *fs, uint64_t bytes, uint64_t pending, bool shared, bool admit,
                             dbfs_space_ticket *t)
{
    struct dbfs_space *s = fs->space;
    uint64_t need = bytes + bytes / 16 + DBFS_SPACE_SLACK;
    int64_t now, margin;
    int rc = 0;

    if (t)
        memset(t, 0, sizeof *t);
    if (!s || bytes == 0)
        return 0;
    now = g_get_monotonic_time();
    g_mutex_lock(&s->lock);
    margin = dbfs_space_margin(s, need, pending, shared);
    if (s->measured_us == 0 || now - s->measured_us >= DBFS_SPACE_PERIOD_US ||
        s->since >= DBFS_SPACE_BYTES || margin < (int64_t)DBFS_SPACE_NEAR) {
        if (dbfs_space_measure(s, now))
            margin = dbfs_space_margin(s, need, pending, shared);
        else
            margin = 0; /* cannot know: let it through */
    }
    if (margin < 0) {
        rc = dbfs_space_refuse(fs, s, now, need);
    } else if (admit) {
        uint64_t credit = shared ? dbfs_space_sub(s->credit, s->credit_used) : 0;

        t->need = need;
        t->credit = MIN(credit, need);
        t->shared = shared;
        s->inflight += need;
        s->credit_used += t->credit;
        if (shared) {
            s->shared_total += need;
            s->shared_inflight += need;
        }
    }
    g_mutex_unlock(&s->lock);
    return rc;
}

/* dbfs_space_take -- see dbfs_space.h. */
int dbfs_space_take(dbfs *fs, uint64_t bytes, uint64_t pending, bool shared, dbfs_space_ticket *t)
{
    return dbfs_space_decide(fs, bytes, pending, shared, true, t);
}

/* dbfs_space_check -- see dbfs_space.h. */
int dbfs_space_check(dbfs *fs, uint64_t bytes, uint64_t pending, bool shared)
{
    return dbfs_space_decide(fs, bytes, pending, shared, false, NULL);
}

/* dbfs_space_done -- see dbfs_space.h. What came from reused space did
 * not take any of the disk's. */
void dbfs_space_done(dbfs *fs, const dbfs_space_ticket *t, bool stored)
{
    struct dbfs_space *s = fs->space;

    if (!s || t->need == 0)
        return;
    g_mutex_lock(&s->lock);
    s->inflight = dbfs_space_sub(s->inflight, t->need);
    if (t->shared)
        s->shared_inflight = dbfs_space_sub(s->shared_inflight, t->need);
    if (stored)
        s->since += t->need - t->credit;
    else
        s->credit_used = dbfs_space_sub(s->credit_used, t->credit);
    g_mutex_unlock(&s->lock);
}

/* dbfs_space_changed -- see dbfs_space.h. */
void dbfs_space_changed(dbfs *fs)
{
    struct dbfs_space *s = fs->space;

    if (!s)
        return;
    g_mutex_lock(&s->lock);
    s->changes++;
    g_mutex_unlock(&s->lock);
}

/* dbfs_space_figures -- see dbfs_space.h. */
bool dbfs_space_figures(dbfs *fs, uint64_t *total, uint64_t *avail)
{
    struct dbfs_space *s = fs->space;
    bool ok;

    if (!s)
        return false;
    g_mutex_lock(&s->lock);
    ok = dbfs_space_measure(s, g_get_monotonic_time());
    if (ok) {
        uint64_t credit = fs->info.storage == DBFS_STORAGE_INVERSION
                              ? 0
                              : dbfs_space_sub(s->credit, s->credit_used);
        *total = s->total;
        *avail = dbfs_space_sub(s->avail, s->reserve + s->inflight) + credit;
    }
    g_mutex_unlock(&s->lock);
    return ok;
}

/* --- the reclaim (the flusher's thread) ---------------------------------- */

/* Read one row of int8 columns of statement id into v[0 .. n). */
static int dbfs_space_row(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p, int64_t *v, int n)
{
    PGresult *r = NULL;
    int rc = dbfs_exec(c, id, p, &r);

    if (rc == 0 && (PQntuples(r) != 1 || PQnfields(r) < n)) {
        g_warning("space: %s answered without its row", dbfs_stmts[id].name);
        rc = -EIO;
    }
    for (int i = 0; rc == 0 && i < n; i++)
        v[i] = PQgetisnull(r, 0, i) ? 0 : dbfs_get_i8(r, 0, i);
    PQclear(r);
    return rc;
}

/* What allfiles' live rows may occupy, in TOAST slots: stored bytes /
 * slot, plus one per chunk (the last, partial slot of each); and *slot,
 * a slot's bytes for this database's page size. */
static int dbfs_space_live(dbfs *fs, dbfs_conn *c, int64_t *slots, int64_t *slot)
{
    dbfs_params p;
    int64_t v[3];
    int rc;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, fs->info.chunk_size);
    rc = dbfs_space_row(c, DBFS_ST_SPACE_LIVE, &p, v, 3);
    if (rc == 0 && v[2] < 1024) {
        g_warning("space: the database's page size (%" PRId64 ") makes no sense", v[2]);
        rc = -EIO;
    }
    if (rc == 0) {
        *slot = DBFS_TOAST_SLOT(v[2]);
        *slots = (v[0] + *slot - 1) / *slot + v[1];
    }
    return rc;
}

/* The CHECKPOINT after the VACUUM: 0 (*done: it ran), or -EAGAIN (the
 * database went away). A role that may not (the classifier logged why) is
 * not asked again: PostgreSQL's own checkpoints recycle the WAL then. */
static int dbfs_space_checkpoint(struct dbfs_space *s, dbfs_conn *c, bool *done)
{
    int rc;

    *done = false;
    if (s->no_checkpoint)
        return 0;
    rc = dbfs_script(c, "CHECKPOINT", dbfs_sql_checkpoint);
    if (rc == -EAGAIN)
        return rc;
    if (rc != 0) {
        g_message("space: no CHECKPOINT after VACUUM from now on (see above why): PostgreSQL's "
                  "own checkpoints recycle the WAL they write");
        s->no_checkpoint = true;
        return 0;
    }
    *done = true;
    return 0;
}

/*
 * The reclaim itself: count the live rows, VACUUM, measure allfiles'
 * TOAST relation. Returns 0 and the new credit in *credit (0 for the
 * inversion layout, which keeps nothing in allfiles), or an errno.
 * *vacuum_us and *measure_us: what the VACUUM and the counting took.
 */
static int dbfs_space_reclaim(dbfs *fs, dbfs_conn *c, uint64_t *credit, int64_t *vacuum_us,
                              int64_t *measure_us, bool *checkpointed)
{
    const bool shared = fs->info.storage != DBFS_STORAGE_INVERSION;
    int64_t t0 = g_get_monotonic_time(), live = 0, slot = 0, v[2] = {0, 0};
    int rc = 0;

    *credit = 0;
    *vacuum_us = *measure_us = 0;
    *checkpointed = false;
    if (shared)
        rc = dbfs_space_live(fs, c, &live, &slot);
    *measure_us = g_get_monotonic_time() - t0;
    if (rc != 0)
        return rc;
    t0 = g_get_monotonic_time();
    rc = dbfs_script(c, "VACUUM",
                     fs->info.storage == DBFS_STORAGE_SINGLE ? dbfs_sql_vacuum_data
                                                             : dbfs_sql_vacuum_all);
    if (rc == 0)
        rc = dbfs_space_checkpoint(fs->space, c, checkpointed);
    *vacuum_us = g_get_monotonic_time() - t0;
    if (rc != 0 || !shared)
        return rc;
    t0 = g_get_monotonic_time();
    rc = dbfs_space_row(c, DBFS_ST_SPACE_TOAST, NULL, v, 2);
    *measure_us += g_get_monotonic_time() - t0;
    if (rc == 0) {
        /* v[0]: the TOAST relation's pages, v[1]: its dead rows left. */
        int64_t free_slots = v[0] * DBFS_TOAST_PER_PAGE - live - v[1];
        *credit = free_slots > 0 ? (uint64_t)(free_slots * slot) : 0;
    }
    return rc;
}

/* dbfs_space_tend -- see dbfs.h. */
int dbfs_space_tend(dbfs *fs, dbfs_conn **session)
{
    struct dbfs_space *s = fs ? fs->space : NULL;
    uint64_t epoch, shared0, inflight0, credit = 0;
    int64_t vacuum_us, measure_us;
    bool checkpointed = false;
    int rc;

    if (!s)
        return 0;
    g_mutex_lock(&s->lock);
    if (!s->want || s->running || g_get_monotonic_time() < s->retry_us) {
        g_mutex_unlock(&s->lock);
        return 0;
    }
    s->running = true;
    epoch = s->changes;
    shared0 = s->shared_total;
    inflight0 = s->shared_inflight;
    g_mutex_unlock(&s->lock);

    rc = *session ? 0 : dbfs_session_open(fs->conninfo, "pgnfs-space", session);
    if (rc == 0)
        rc = dbfs_space_reclaim(fs, *session, &credit, &vacuum_us, &measure_us, &checkpointed);
    /* The WAL the CHECKPOINT removed stays on the disk while a backend
     * holds it open: this session's is ended, every other connection is
     * opened anew, and until they all are, writes that do not fit answer
     * -EAGAIN (dbfs_space_refuse). */
    if (rc == 0 && checkpointed) {
        dbfs_conn_close(*session);
        *session = NULL;
        dbfs_renew_all(fs);
    }

    g_mutex_lock(&s->lock);
    s->running = false;
    s->retry_us = rc == 0 ? 0 : g_get_monotonic_time() + DBFS_SPACE_RETRY_US;
    if (rc == 0) {
        s->want = false;
        s->reclaimed = epoch;
        s->credit = credit;
        /* Writes to allfiles since the live rows were counted (and those
         * under way then) took from it already. */
        s->credit_used = s->shared_total - shared0 + inflight0;
        s->measured_us = 0;
        dbfs_space_measure(s, g_get_monotonic_time());
    }
    uint64_t avail = s->avail;
    g_mutex_unlock(&s->lock);
    if (rc != 0)
        return rc;
    g_info("space: reclaimed after removals: VACUUM and CHECKPOINT %.1f ms, measuring %.1f ms; "
           "%" PRIu64 " MiB free on the disk, %" PRIu64 " MiB reusable inside allfiles",
           (double)vacuum_us / 1000, (double)measure_us / 1000, avail / DBFS_SPACE_MIB,
           credit / DBFS_SPACE_MIB);
    return 1;
}
