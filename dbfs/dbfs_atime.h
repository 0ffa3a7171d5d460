/*
 * dbfs_atime.h -- deferred atime updates of an async export
 * (dbfs_atime.c): a READ served whole from the caches whose relatime rule
 * says atime must move does not go to the database for it; the new atime
 * is kept here, shown in every attribute clients see (dbfs_wb_overlay),
 * and stored by the write-back flusher, several files per transaction.
 *
 * Why: on an async export (dbfs_conn_set_async) a hot small object's READ
 * should cost one lookup in memory. With relatime, the first READ after
 * every write would otherwise cost a transaction of its own (the atime
 * UPDATE), which is lazy already (it never waits for the WAL): a crash
 * can lose it either way, so keeping it a moment longer changes nothing a
 * client may count on. Sync exports, and any READ the caches cannot
 * serve, keep the atime UPDATE in the READ's own batch.
 *
 * NOTES
 *   Only when the write-back buffer is on (its flusher stores the
 *   deferred updates: dbfs_wb_flush_due) and while fewer than
 *   DBFS_ATIME_MAX files wait; otherwise the READ goes to the database as
 *   before. Thread-safe (one mutex; a lock-free count keeps the overlay
 *   free when nothing waits).
 */
#ifndef PGNFS_DBFS_ATIME_H
#define PGNFS_DBFS_ATIME_H

#include <stdbool.h>
#include <stdint.h>

#include "dbfs.h"
#include "dbfs_int.h"

/* Files whose deferred atime may wait at once. */
#define DBFS_ATIME_MAX 4096

/* Open fs->atime (always; it costs nothing when unused). Returns 0 or
 * -ENOMEM. */
int dbfs_atime_open(dbfs *fs);
/* Free fs->atime (NULL is fine); what still waits is dropped. */
void dbfs_atime_close(dbfs *fs);

/*
 * dbfs_atime_may_defer -- may a READ of fs leave its atime update to the
 * flusher: its changes commit async (an async export: dbfs_conn_async of
 * its connection, or the export's own option on the event thread) and
 * the write-back buffer (with its flusher) is on. Cannot fail.
 */
bool dbfs_atime_may_defer(const dbfs *fs, bool async);

/*
 * dbfs_atime_defer -- file fh was read at now (ns) and its atime is due:
 * keep the update for the flusher. Returns true, or false when
 * DBFS_ATIME_MAX files wait already (the caller updates it itself).
 */
bool dbfs_atime_defer(dbfs *fs, dbfs_fh fh, int64_t now);

/* dbfs_atime_overlay -- a deferred atime of a's file (same generation),
 * if later than a->atime_ns, into *a. Cannot fail. */
void dbfs_atime_overlay(dbfs *fs, dbfs_attr *a);

/* dbfs_atime_waiting -- how many files' atime waits. Cannot fail. */
unsigned dbfs_atime_waiting(dbfs *fs);

/*
 * dbfs_atime_flush -- store the deferred atime updates on c, at most
 * CACHE_LRU_MUT_MAX files per transaction (the relatime rule checked
 * again by the statement, as root), and tell the stat cache the
 * attributes after. An update stays shown until it is stored. Returns the
 * number of files handled, or -EAGAIN (the database is away: the rest
 * waits for the next flush). Other failures drop the updates of that
 * transaction (logged): an atime is not worth retrying for ever.
 */
int dbfs_atime_flush(dbfs_conn *c);

#endif /* PGNFS_DBFS_ATIME_H */
