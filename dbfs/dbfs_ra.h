/*
 * dbfs_ra.h -- read-ahead and the fetches in flight (dbfs_ra.c), for
 * READs that go to the database (dbfs_read.c).
 *
 * Reads of a file that go on where (or near where) its last read ended
 * are a stream; a READ of a stream that goes to the database also fetches
 * the next chunks into the buffer cache, a window that doubles with each
 * such READ up to DBFS_RA_MAX_BYTES.
 *
 * Each fetch of chunks is announced while it is on its way (a flight). A
 * READ whose chunks are all in one flight waits for it and is then served
 * from the buffer cache, instead of fetching them again: a client keeps
 * several READs in flight, and those that a read-ahead is already
 * bringing would otherwise each fetch their own. A read-ahead stops where
 * another flight of the file begins. Together: a stream of 1 MiB READs,
 * 8 in flight, is read in statements of several MiB, each chunk once.
 *
 * NOTES
 *   Waiting is an economy, never needed for a right answer: the READ that
 *   waited takes the ordinary way when the buffer cache cannot serve it
 *   after all (an eviction, a change meanwhile, a failed fetch). It waits
 *   at most DBFS_RA_WAIT_US, and only once. One slot per inode hash; at
 *   most DBFS_RA_FLIGHTS flights per slot (a fetch that finds no room is
 *   not announced). Thread-safe.
 */
#ifndef PGNFS_DBFS_RA_H
#define PGNFS_DBFS_RA_H

#include <stdbool.h>
#include <stdint.h>

#include "dbfs_int.h"

/* The largest read-ahead window. */
#define DBFS_RA_MAX_BYTES (2u << 20)
/* How long a READ waits at most for another's fetch of its chunks. */
#define DBFS_RA_WAIT_US (30 * G_USEC_PER_SEC)

/* Set up and tear down fs->ra. Cannot fail. */
void dbfs_ra_init(dbfs *fs);
void dbfs_ra_clear(dbfs *fs);

/*
 * dbfs_ra_window -- a READ of [off, end) of ino goes to the database: the
 * chunks to fetch past its last one (0: not a stream). Records where the
 * stream stands. Cannot fail.
 */
uint64_t dbfs_ra_window(dbfs *fs, uint64_t ino, uint64_t off, uint64_t end);

/*
 * dbfs_ra_wait -- when chunks first .. last of ino are all in one flight,
 * wait until it has landed (or DBFS_RA_WAIT_US passed) and return true;
 * false at once otherwise.
 */
bool dbfs_ra_wait(dbfs *fs, uint64_t ino, uint64_t first, uint64_t last);

/*
 * dbfs_ra_begin -- announce the fetch of chunks first .. *flast of ino,
 * of which those past own_last are read-ahead: that part is cut short
 * where another flight of ino begins (*flast lowered, not below
 * own_last). Returns the flight's number for dbfs_ra_end, or 0 when it
 * was not announced (no room).
 */
uint64_t dbfs_ra_begin(dbfs *fs, uint64_t ino, uint64_t first, uint64_t own_last, uint64_t *flast);

/* dbfs_ra_end -- flight seq of ino has landed (its chunks are in the
 * buffer cache, or it failed): wake the READs waiting for it. seq 0 is
 * ignored. */
void dbfs_ra_end(dbfs *fs, uint64_t ino, uint64_t seq);

#endif
