/*
 * dbfs_snap.h -- snapshots (schema/008_snapshots.sql): read-only images of
 * the whole file system, taken in O(1) and kept by copy-on-write in the
 * database; the calls that take, list, delete and compare them, and what
 * a server needs to serve them as /.snapshots.
 *
 * NOTES
 *   Reading a snapshot goes through the ordinary calls of dbfs.h with a
 *   handle whose snap is the snapshot's id: dbfs_getattr, dbfs_access,
 *   dbfs_lookup, dbfs_readlink, dbfs_readdir, dbfs_read and
 *   dbfs_fsstat_fh answer as the file system was when it was taken (the
 *   attributes they return carry the same snap), and every call that
 *   changes something answers -EROFS. A handle of a deleted snapshot is
 *   -ESTALE. Such reads bypass the caches and the write-back buffer: a
 *   snapshot holds what was committed when it was taken (UNSTABLE data a
 *   server still held then is not in it, as after a crash).
 *
 *   The directory of snapshots (snap DBFS_SNAP_DIR, inode the export's
 *   root): its entries are the live snapshots, each the export's root as
 *   that snapshot saw it; ".." is the live root. Which directory is an
 *   export's root is the server's knowledge: it asks dbfs_snap_dir for
 *   the handle and attributes when a client looks up DBFS_SNAP_DIRNAME
 *   there.
 *
 *   The administration calls run on a session of their own (like
 *   dbfs_xform_set), beside a running server or without one. Errors are
 *   dbfs.h's.
 */
#ifndef PGNFS_DBFS_SNAP_H
#define PGNFS_DBFS_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dbfs.h"

/* fh.snap / attr.snap of the directory of snapshots. */
#define DBFS_SNAP_DIR UINT32_MAX
/* Its name in an export's root. */
#define DBFS_SNAP_DIRNAME ".snapshots"

/*
 * dbfs_snap_fsid -- the fsid the files of snapshot snap report (0: the
 * file system's own): distinct per snapshot and from the live one, so a
 * client does not take a snapshot's file for a live one. Cannot fail.
 */
uint64_t dbfs_snap_fsid(const dbfs_info *info, uint32_t snap);

/*
 * dbfs_snap_dir -- the attributes of the directory of snapshots of the
 * export whose root is the live directory root (its handle is
 * {root.ino, root.gen, DBFS_SNAP_DIR}). Returns 0, -ESTALE (root is gone),
 * -ENOTDIR, -EAGAIN or -EIO. One round trip.
 */
int dbfs_snap_dir(dbfs_conn *c, dbfs_fh root, dbfs_attr *out);

/* --- administration ------------------------------------------------------ */

/* A live snapshot (name valid during a callback only). */
typedef struct {
    uint32_t id;
    const char *name;
    int64_t created_us; /* microseconds since the epoch */
    bool scheduled;     /* taken by a server's schedule */
    uint64_t holds;     /* bytes only it keeps (what deleting it frees) */
} dbfs_snap_row;

/*
 * dbfs_snap_create -- take snapshot `name` of the whole file system, in
 * constant time, consistent to a transaction boundary. Returns 0 (out, if
 * not NULL, gets id and time; its name is NULL), -EINVAL (not a file
 * name), -EEXIST, or a database error.
 */
int dbfs_snap_create(dbfs *fs, const char *name, dbfs_snap_row *out);

/*
 * dbfs_snap_list -- every live snapshot, oldest first, to cb (a nonzero
 * return stops and is returned). Returns 0, cb's value, or a database
 * error. Reads every kept row (for holds).
 */
int dbfs_snap_list(dbfs *fs, int (*cb)(const dbfs_snap_row *r, void *arg), void *arg);

/*
 * dbfs_snap_delete -- delete snapshot `name`: gone for every reader when
 * this returns; the space only it kept is reclaimed by dbfs_snap_reclaim.
 * Returns 0, -ENOENT, or a database error.
 */
int dbfs_snap_delete(dbfs *fs, const char *name);

/* Where a reclaim stands: inodes [0, pos) of [0, upto) done, rows and
 * tables removed so far. */
typedef struct {
    uint64_t pos, upto, removed;
    bool done;
} dbfs_snap_progress;

/*
 * dbfs_snap_reclaim -- remove the kept rows and tables that no live
 * snapshot needs any more, one short transaction per range of inodes
 * (writers and snapshot commands go on meanwhile), calling progress (may
 * be NULL) after each. Restartable: after a crash it goes on where it
 * stopped. max_steps: stop after that many (0: run to the end). Returns 0
 * (out, if not NULL, says where it stands), or a database error.
 */
int dbfs_snap_reclaim(dbfs *fs, unsigned max_steps,
                      void (*progress)(const dbfs_snap_progress *p, void *arg), void *arg,
                      dbfs_snap_progress *out);

/* One path of a comparison (strings valid during a callback only). */
typedef struct {
    char change; /* '+' added, '-' removed, 'M' modified */
    const char *path;
    const char *type; /* "file", "dir", ... */
} dbfs_snap_diff_row;

/*
 * dbfs_snap_diff -- what changed from snapshot `from` to snapshot `to`
 * (NULL: the live file system), one path a callback, by path (a nonzero
 * return stops and is returned). Returns 0, cb's value, -ENOENT (no such
 * snapshot), or a database error.
 */
int dbfs_snap_diff(dbfs *fs, const char *from, const char *to,
                   int (*cb)(const dbfs_snap_diff_row *r, void *arg), void *arg);

/*
 * dbfs_snap_find -- the id of snapshot `name` on connection c (for reading
 * it through dbfs.h's calls). Returns 0, -ENOENT, or a database error.
 */
int dbfs_snap_find(dbfs_conn *c, const char *name, uint32_t *id);

/*
 * dbfs_snap_notify -- tell every server that reads the invalidation log
 * ([cache] coherence = shared) to drop all its cached metadata, before and
 * after changes made outside them (a restore), on admin session a: one
 * alone on the file system starts reading the log first (waits up to
 * DBFS_FRONTEND_STALE_S + 10 s). Returns 0, -EBUSY (one did not; logged)
 * or a database error.
 */
int dbfs_snap_notify(dbfs_admin *a);

/*
 * dbfs_snap_tick -- a server's schedule, run every few seconds from one
 * thread: when every_s > 0 and the newest scheduled snapshot is every_s
 * seconds old or there is none, take one named "<prefix><UTC time>";
 * then delete the oldest scheduled ones past keep (0: keep all) and
 * reclaim what deleted snapshots left, a few steps per call. Several
 * servers may run it at once: one snapshot per period. *session: its own
 * connection, opened on first need and kept between calls (NULL at
 * first; dbfs_conn_close it at the end). Returns the number of snapshots
 * taken and deleted (each logged), or a database error.
 */
int dbfs_snap_tick(dbfs *fs, dbfs_conn **session, uint64_t every_s, unsigned keep,
                   const char *prefix);

#endif /* PGNFS_DBFS_SNAP_H */
