/*
 * td.h -- helpers the dbfs test programs share: a fresh file system with
 * an open connection, credentials, and short forms of the dbfs calls that
 * must succeed (they fail the test with the call and errno otherwise).
 *
 * NOTES
 *   A td_fs owns its dbfs, its connection and its conninfo; td_close()
 *   releases them. Helpers that return attributes return copies.
 */
#ifndef PGNFS_TD_H
#define PGNFS_TD_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "dbfs.h"

typedef struct {
    char *conninfo;
    dbfs *fs;
    dbfs_conn *c;
    dbfs_fh root;
    uint64_t trips_mark; /* for td_trips() */
} td_fs;

/* A fresh file system (root 0777, owned by root) and a connection to it.
 * chunk_size 0 is the default. */
void td_open(td_fs *t);
void td_open_opts(td_fs *t, uint32_t chunk_size, bool relatime);
/* td_open_opts in the base64 encoding (the run's layout; no relatime). */
void td_open_base64(td_fs *t, uint32_t chunk_size);
void td_close(td_fs *t);
/* The row of dbfs_cache_stats of the cache called name ("buffer", ...). */
dbfs_cache_figures td_cache(const dbfs *fs, const char *name);

/* The root user, and an ordinary user uid with primary group gid and the
 * given supplementary groups (n of them). */
dbfs_cred td_root(void);
dbfs_cred td_user(uint32_t uid, uint32_t gid, uint32_t n, const uint32_t *groups);

static inline dbfs_fh td_fh(const dbfs_attr *a)
{
    return (dbfs_fh){a->ino, a->gen, a->snap};
}

/* Calls that must succeed; each returns the new or found object's
 * attributes. */
dbfs_attr td_mkdir(td_fs *t, const dbfs_cred *cr, dbfs_fh dir, const char *name, uint32_t mode);
dbfs_attr td_create(td_fs *t, const dbfs_cred *cr, dbfs_fh dir, const char *name, uint32_t mode);
dbfs_attr td_lookup(td_fs *t, const dbfs_cred *cr, dbfs_fh dir, const char *name);
dbfs_attr td_getattr(td_fs *t, dbfs_fh fh);
void td_write(td_fs *t, const dbfs_cred *cr, dbfs_fh fh, uint64_t off, const void *data,
              uint32_t len);
/* Reads exactly len bytes at off (fails the test on a short read). */
void td_read(td_fs *t, const dbfs_cred *cr, dbfs_fh fh, uint64_t off, void *buf, uint32_t len);
void td_chmod(td_fs *t, const dbfs_cred *cr, dbfs_fh fh, uint32_t mode);
void td_chown(td_fs *t, const dbfs_cred *cr, dbfs_fh fh, uint32_t uid, uint32_t gid);

/* Fail the test unless rc == want, naming what was called. */
#define td_rc(rc, want) td_check_rc((rc), (want), #rc, __FILE__, __LINE__)
void td_check_rc(int rc, int want, const char *expr, const char *file, int line);

/* Run sql (one statement or a script) on a connection of its own to
 * conninfo; fails the test on an error. Returns the first column of the
 * first row as a number (0 if none). */
long td_sql(const char *conninfo, const char *sql);

/* SQL that takes from a file system what migrations 008 (snapshots) and
 * 011 (their cheap stamps) add, for the tests that make a file system of
 * an older version. */
#define TD_SQL_DROP_SNAPSHOTS                                                                      \
    " DROP VIEW IF EXISTS pgnfs.attr_versions, pgnfs.names_versions CASCADE;"                      \
    " DROP TABLE pgnfs_snap_state, pgnfs_snapshots, pgnfs_snap_fileatt, pgnfs_snap_naming,"        \
    " pgnfs_snap_chunks, pgnfs_snap_tab CASCADE;"                                                  \
    " DROP FUNCTION pgnfs_snap_keep_fileatt, pgnfs_snap_keep_naming, pgnfs_snap_keep_allfiles,"    \
    " pgnfs_snap_keep_inv CASCADE;"                                                                \
    " DROP FUNCTION IF EXISTS pgnfs_snap_born CASCADE;"                                            \
    " ALTER TABLE fileatt DROP COLUMN born; ALTER TABLE naming DROP COLUMN born;"                  \
    " ALTER TABLE allfiles DROP COLUMN born; ALTER TABLE pgnfs_filetab DROP COLUMN made;"          \
    " DROP SEQUENCE IF EXISTS pgnfs_snap_epoch_seq;"

/* Round trips made on t's connection since the last call. */
uint64_t td_trips(td_fs *t);

#endif
