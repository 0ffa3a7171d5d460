/*
 * dbfs_space.h -- the space guard (dbfs_space.c): data writes are refused
 * with -ENOSPC before they eat into the space PostgreSQL keeps for itself
 * (WAL, checkpoints, vacuum) on the file system that holds the database,
 * so that PostgreSQL never meets a full disk; and space that removals free
 * inside the data tables is made reusable and counted.
 *
 * NOTES
 *   Below the data path (dbfs_data.c, dbfs_wb.c) and FSSTAT (dbfs_attr.c),
 *   which ask it; above the connections (its reclaim runs SQL on a
 *   session of its own). With no guard (fs->space NULL) every call
 *   admits, and dbfs_space_figures answers false.
 */
#ifndef PGNFS_DBFS_SPACE_H
#define PGNFS_DBFS_SPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "dbfs.h"
#include "dbfs_int.h"

/* What a data write was admitted with (dbfs_space_take), for
 * dbfs_space_done. */
typedef struct {
    uint64_t need;   /* bytes charged: the stored bytes and their overhead */
    uint64_t credit; /* of them, taken from free space inside allfiles */
    bool shared;     /* the write goes to allfiles */
} dbfs_space_ticket;

/*
 * dbfs_space_open -- make fs->space as cfg asks (left NULL without a
 * space_path or a reserve) and log what it guards. Returns 0 or -ENOMEM.
 */
int dbfs_space_open(dbfs *fs, const dbfs_config *cfg);
/* Free fs->space (NULL is fine). */
void dbfs_space_close(dbfs *fs);

/*
 * dbfs_space_shared -- does a write whose data ends at `end` go to
 * allfiles, where free space left by removals is reused? (single: always;
 * inversion: never; hybrid: while the file stays within its threshold.)
 * Cannot fail.
 */
bool dbfs_space_shared(const dbfs *fs, uint64_t end);

/*
 * dbfs_space_take -- admit a data write that stores `bytes` (as stored:
 * encoded) while `pending` more bytes wait in memory to be stored
 * (write-back). Returns 0 and *t (hand it to dbfs_space_done); -ENOSPC
 * when the write would leave less than the reserve free; -EAGAIN when it
 * would, but files were removed, truncated or overwritten since space was
 * last reclaimed (a reclaim is asked for: the caller answers JUKEBOX and
 * the client tries again). A write of 0 bytes is always admitted.
 * Thread-safe; at most one statvfs(2), and that only every
 * DBFS_SPACE_PERIOD_US or DBFS_SPACE_BYTES, or when near the line.
 */
int dbfs_space_take(dbfs *fs, uint64_t bytes, uint64_t pending, bool shared, dbfs_space_ticket *t);

/* dbfs_space_check -- dbfs_space_take without admitting (a write that goes
 * to the write-back buffer: its flush is admitted later). Same returns. */
int dbfs_space_check(dbfs *fs, uint64_t bytes, uint64_t pending, bool shared);

/* dbfs_space_done -- the admitted write *t ended: stored (committed) or
 * not. Cannot fail. */
void dbfs_space_done(dbfs *fs, const dbfs_space_ticket *t, bool stored);

/*
 * dbfs_space_changed -- data was removed, cut or overwritten (a REMOVE,
 * RENAME over a file, a truncation, an overwriting write): its rows are
 * dead, and a reclaim can make their space reusable. Cannot fail.
 */
void dbfs_space_changed(dbfs *fs);

/*
 * dbfs_space_figures -- FSSTAT's bytes as the guard sees them, measured
 * now: *total the file system's size, *avail what data writes may still
 * use (free space above the reserve, plus reusable space inside
 * allfiles). false (nothing filled) without a guard or when statvfs
 * fails.
 */
bool dbfs_space_figures(dbfs *fs, uint64_t *total, uint64_t *avail);

#endif /* PGNFS_DBFS_SPACE_H */
