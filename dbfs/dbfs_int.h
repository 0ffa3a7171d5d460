/*
 * dbfs_int.h -- what the files of dbfs/ share and nobody else sees: the
 * dbfs and dbfs_conn structures, the table of prepared statements, binary
 * parameter and result helpers, and the batch (pipeline) runner.
 *
 * NOTES
 *   Every statement dbfs runs is a named prepared statement in the table of
 *   dbfs_sql.c, with binary parameters and binary results. A worker
 *   connection (dbfs_conn) stays in libpq pipeline mode for its whole life:
 *   an operation queues one or more statements (a "batch"), ends the batch
 *   with one Sync and reads the results. One batch is one round trip and,
 *   because a Sync ends an implicit transaction, one transaction.
 *
 *   Batch life on a connection:
 *
 *     idle --dbfs_batch_begin--> queuing --dbfs_batch_add*--> queuing
 *     queuing --dbfs_batch_sync--> reading --dbfs_batch_result*--> reading
 *     reading --dbfs_batch_end--> idle      (drains what was not read, and
 *                                            resets a broken connection)
 *
 *   Errors are classified once, by SQLSTATE, when the first failing result
 *   of a batch arrives (dbfs_conn.c); later results of an aborted pipeline
 *   do not overwrite it. dbfs_batch_end() returns that first error.
 *
 *   Ownership: a PGresult handed out by dbfs_batch_result() or dbfs_exec()
 *   belongs to the caller, who PQclear()s it on every path. dbfs_params
 *   points into itself: fill it and pass it without copying it.
 */
#ifndef PGNFS_DBFS_INT_H
#define PGNFS_DBFS_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>
#include <libpq-fe.h>

#include "cache_dir.h"
#include "cache_name.h"
#include "cache_stat.h"
#include "dbfs.h"

struct store_ops;

/* The database's FSSTAT figures, kept a moment (dbfs_attr.c): computing
 * the database's size stats every file of it. */
#define DBFS_FSSTAT_TTL_US 1000000
typedef struct {
    GMutex lock;
    int64_t until_us; /* g_get_monotonic_time(): fresh until then */
    uint64_t db_bytes, files;
} dbfs_fsstat_memo;

/* One read-ahead slot (dbfs_data.c): where the last read of ino ended and
 * the window it earned, in chunks. */
#define DBFS_RA_SLOTS 256
typedef struct {
    _Atomic uint64_t ino, next, window;
} dbfs_ra_slot;

struct dbfs {
    char *conninfo;
    bool relatime;
    char *space_path; /* NULL: none */
    dbfs_info info;
    const struct store_ops *store;
    struct dbfs_cache *cache; /* metadata caches (dbfs_cache.c); NULL: all off */
    /* The chunk buffer cache (dbfs_data.c); NULL: off. */
    struct cache_chunk *chunks;
    uint64_t chunks_bytes; /* its bound */
    dbfs_ra_slot ra[DBFS_RA_SLOTS];
    /* The write-back buffer (dbfs_wb.c); NULL: off. */
    struct cache_wb *wb;
    uint64_t wb_file_bytes; /* a file holding this much is flushed */
    /* Until then (dbfs_wb_now_us clock) the database was out of space: an
     * UNSTABLE write is stored at once, so it answers -ENOSPC itself. */
    _Atomic int64_t wb_full_until_us;
    dbfs_fsstat_memo fsstat_memo;
};

#include "dbfs_sql.h"

#include "dbfs_wire.h"

#include "dbfs_conn.h"

/* --- the chunk buffer cache (dbfs_data.c) ---------------------------------- */

/* Open fs->chunks as cfg asks (left NULL when the size is 0). Returns 0,
 * -EINVAL (a size too small for one chunk; logged) or -ENOMEM. */
int dbfs_chunks_open(dbfs *fs, const dbfs_config *cfg);
/* Free fs->chunks (NULL is fine). */
void dbfs_chunks_close(dbfs *fs);
/* The chunk cache's figures as one dbfs_cache_stats() row ("buffer"). */
void dbfs_chunks_figures(const dbfs *fs, dbfs_cache_figures *out);

/* --- the write path (dbfs_data.c) ---------------------------------------- */

struct store_write;
struct store_piece;

/*
 * dbfs_data_pieces -- cut a write (w->off, w->len > 0) of the file bytes
 * `data` into its pieces, one per chunk, encoded as the file system
 * stores them; fills w->pieces, npieces, data and data_len. The
 * caller frees *pieces and *buf (the encoded bytes; NULL for binary) after
 * the batch. Returns 0 or -ENOMEM.
 */
int dbfs_data_pieces(const dbfs_info *info, const void *data, struct store_write *w,
                     struct store_piece **pieces, void **buf);

/*
 * dbfs_data_store -- store the writes ws[0 .. n) (n >= 1, all of file fh)
 * in one batch: one round trip, one transaction, rerun on serialization
 * failures. Returns 0 with *pre (the attributes before the first write)
 * and *post (after the last); or the first error the layout's statements
 * raised (-ESTALE, -EISDIR, -EINVAL, -EACCES, -ENOSPC), -ENOMEM, -EAGAIN or
 * -EIO, and nothing is stored. The stat cache sees the change and the
 * chunk buffer cache learns the pieces written.
 */
int dbfs_data_store(dbfs_conn *c, dbfs_fh fh, const struct store_write *ws, size_t n,
                    dbfs_attr *pre, dbfs_attr *post);

/*
 * dbfs_write_sync -- one WRITE stored at once (DBFS_FILE_SYNC): the
 * caller's permission checked in the database, setuid/setgid cleared for
 * a non-root writer. Returns as dbfs_data_store; *wcc filled on success.
 */
int dbfs_write_sync(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, const void *data,
                    uint32_t len, dbfs_wcc *wcc);

/* dbfs_getattr_db -- the attributes of fh as the database holds them
 * (stat cache or one round trip), without buffered writes. Returns as
 * dbfs_getattr. */
int dbfs_getattr_db(dbfs_conn *c, dbfs_fh fh, dbfs_attr *out);

/* --- write-back of UNSTABLE writes (dbfs_wb.c) ---------------------------- */

/* The default per-file flush size. */
#define DBFS_WB_FILE_BYTES (8u << 20)

/* Open fs->wb as cfg asks (NULL when writeback_bytes is 0). Returns 0,
 * -EINVAL or -ENOMEM. dbfs_wb_close frees it (warns when it still holds
 * data: flush with dbfs_wb_flush_due first). */
int dbfs_wb_open(dbfs *fs, const dbfs_config *cfg);
void dbfs_wb_close(dbfs *fs);

/* After a write failed for lack of space: for DBFS_WB_FULL_US, UNSTABLE
 * writes are not buffered (dbfs_data_store sets and clears it). */
#define DBFS_WB_FULL_US (5 * 1000000)
void dbfs_wb_note_space(dbfs *fs, int rc);

/* Does any file hold buffered data? Cannot fail. */
bool dbfs_wb_holds_any(const dbfs *fs);

/* Apply to *a what the buffer holds of its file: size at least the end of
 * the data held, mtime and ctime at least its latest write. Cannot fail. */
void dbfs_wb_overlay(dbfs *fs, dbfs_attr *a);

/*
 * dbfs_wb_write -- buffer an UNSTABLE write after checking it. Returns 0
 * (buffered; *wcc filled), -EWOULDBLOCK (not buffered: the caller stores it
 * with dbfs_wb_write_through), or what the check found: -ESTALE,
 * -EISDIR, -EINVAL, -EACCES, -EAGAIN, -EIO.
 */
int dbfs_wb_write(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, const void *data,
                  uint32_t len, dbfs_wcc *wcc);

/*
 * dbfs_wb_write_through -- store a write now (stable): first what the
 * file holds buffered, then the write. Returns as dbfs_write_sync, or
 * -EAGAIN when the buffered data could not be stored.
 */
int dbfs_wb_write_through(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off,
                          const void *data, uint32_t len, dbfs_wcc *wcc);

/*
 * dbfs_wb_flush -- store what file ino holds, waiting for a flush of it in
 * flight. Returns 0 (*flushed says whether there was anything; if there
 * was, *pre the attributes before as clients saw them and *post those
 * after, both with writes buffered meanwhile),
 * -EAGAIN (kept for later), or -ESTALE, -ENOSPC, -EIO (dropped; a later
 * dbfs_wb_error reports it unless it was -ESTALE). pre, post and flushed
 * may be NULL.
 */
int dbfs_wb_flush(dbfs_conn *c, uint64_t ino, dbfs_attr *pre, dbfs_attr *post, bool *flushed);

/* The error a dropped flush of ino left, cleared by the call; 0 if none. */
int dbfs_wb_error(dbfs *fs, uint64_t ino);

/* --- chunk encodings (dbfs_codec.c) -------------------------------------- */

/* Stored bytes of n file bytes in encoding e (a base64 value has no line
 * breaks and no terminator). Cannot fail. */
size_t dbfs_codec_enc_len(dbfs_encoding e, size_t n);
/* Encode n bytes of src into dst, which has room for dbfs_codec_enc_len()
 * plus one byte (the encoder writes a NUL after the text). Returns the
 * stored length. Cannot fail. */
size_t dbfs_codec_encode(dbfs_encoding e, const void *src, size_t n, void *dst);
/* Decode the stored value src (len bytes) into dst, which has room for
 * `room` bytes. Returns the number of file bytes, or -EIO for a value that
 * is not a valid encoding or does not fit (logged). */
int64_t dbfs_codec_decode(dbfs_encoding e, const void *src, size_t len, void *dst, size_t room);

/* --- metadata caches (dbfs_cache.c) --------------------------------------
 *
 * The stat and naming caches (cache/cache_stat.h, cache/cache_name.h) seen
 * from dbfs. Every call is a no-op when the caches are off. The protocol
 * (cache/cache_lru.h) in dbfs terms:
 *
 *   read:      dbfs_cache_read_begin(fs, &op) before the statement; then
 *              dbfs_cache_put_*(&op, what was read); dbfs_cache_end(&op).
 *   mutation:  dbfs_cache_mut_begin(fs, &op, inodes, dirs) before the
 *              transaction, naming every inode whose attributes it may
 *              change and every directory whose names it may change that
 *              are known beforehand; after it: dbfs_cache_put_*() for what
 *              it committed or read, dbfs_cache_put_new() for an inode it
 *              created, dbfs_cache_victim() for an inode it changed that
 *              was not named at begin; dbfs_cache_lost() when the outcome
 *              is unknown; then dbfs_cache_end(&op) on every path.
 *
 * The data path (dbfs_data.c) brackets a WRITE with dbfs_cache_file_begin()
 * and dbfs_cache_file_end(), which stores the post-write attributes. */

typedef struct dbfs_cache dbfs_cache;

typedef struct {
    dbfs_cache *cache;          /* NULL: caches off, every call a no-op */
    cache_lru_ticket st_ticket; /* taken at begin */
    cache_lru_ticket nm_ticket; /* taken at begin */
    bool mut;
    /* mutations only: what they hold */
    cache_lru_mut st_mut, nm_mut;
    uint64_t inos[CACHE_LRU_MUT_MAX], dirs[CACHE_LRU_MUT_MAX];
    unsigned ninos, ndirs;
} dbfs_cache_op;

/* Open fs->cache as cfg asks (NULL when every cache is off). Returns 0 or
 * -ENOMEM. dbfs_cache_close frees it (NULL is fine). */
int dbfs_cache_open(dbfs *fs, const dbfs_config *cfg);
void dbfs_cache_close(dbfs *fs);

/* Lookups. dbfs_cache_attr: 0 and *out (hit), -ESTALE (known gone or
 * another generation), -ENOENT (miss, or off). dbfs_cache_name: a
 * cache_name_result (CACHE_NAME_MISS when off). */
int dbfs_cache_attr(dbfs *fs, dbfs_fh fh, dbfs_attr *out);
cache_name_result dbfs_cache_name(dbfs *fs, uint64_t dir, const char *name, dbfs_fh *out);
/* The listing cache (cache/cache_dir.h; dbfs_dirlist.c), NULL when off. */
cache_dir *dbfs_cache_dir(dbfs *fs);

/* --- READDIR from the listing cache (dbfs_dirlist.c) --------------------- */

/* Set *o to a (or to "no attributes" for NULL); o may be NULL.
 * (dbfs_names.c) */
void dbfs_attr_opt_set(dbfs_attr_opt *o, const dbfs_attr *a);

/* Append an entry to e[*n] (room is the caller's); the name is copied (len
 * bytes). Returns 0 or -ENOMEM. (dbfs_names.c) */
int dbfs_dirent_add(dbfs_dirent *e, size_t *n, uint64_t cookie, uint64_t ino, const char *name,
                    size_t len, const dbfs_attr *attr);
/* dbfs_dirent_dots -- append "." (position 1: dir) and ".." (position 2:
 * parent_ino, with *parent's attributes) for positions first ..
 * first + count - 1, with attributes when plus. Returns 0 or -ENOMEM. */
int dbfs_dirent_dots(dbfs_dirent *e, size_t *n, uint32_t first, uint32_t count,
                     const dbfs_attr *dir, uint64_t parent_ino, const dbfs_attr *parent, bool plus);

/* A page as dbfs_readdir answers it, from the caches alone: 0, or -ENOENT
 * when it cannot (then the database answers). *fetch says whether the
 * database path should also fetch the whole listing (DBFS_ST_LISTING). */
int dbfs_dirlist_serve(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, uint64_t cookie,
                       uint32_t max_entries, bool plus, dbfs_dirent **entries, size_t *n, bool *eof,
                       dbfs_attr_opt *dir_attr, bool *fetch);
/* The row limit for DBFS_ST_LISTING (0: the cache is off). */
int64_t dbfs_dirlist_limit(dbfs *fs);
/* Store what DBFS_ST_LISTING read for dir (r may be NULL). */
void dbfs_dirlist_fill(dbfs *fs, dbfs_fh dir, const PGresult *r);

void dbfs_cache_read_begin(dbfs *fs, dbfs_cache_op *op);
/* inos: up to CACHE_LRU_MUT_MAX inodes; dirs: up to CACHE_LRU_MUT_MAX. */
void dbfs_cache_mut_begin(dbfs *fs, dbfs_cache_op *op, const uint64_t *inos, unsigned ninos,
                          const uint64_t *dirs, unsigned ndirs);
/* Attributes read or committed (stored if op holds the inode, else filled
 * as read: only for an inode the operation did not change). */
void dbfs_cache_put_attr(dbfs_cache_op *op, const dbfs_attr *a);
/* (fh) was found not to exist. */
void dbfs_cache_put_gone(dbfs_cache_op *op, dbfs_fh fh);
/* name in dir names obj (NULL: does not exist). */
void dbfs_cache_put_name(dbfs_cache_op *op, uint64_t dir, const char *name, const dbfs_attr *obj);
/* An inode the mutation created: nobody could have read it before. */
void dbfs_cache_put_new(dbfs_cache_op *op, const dbfs_attr *a);
/* An inode the mutation changed without naming it at begin: gone, or
 * changed (its entry is dropped). */
void dbfs_cache_victim(dbfs_cache_op *op, const dbfs_attr *a, bool gone);
/* The mutation's outcome is unknown (lost connection): forget everything
 * read before now. */
void dbfs_cache_lost(dbfs_cache_op *op);
/* End a read or mutation. Cannot fail. */
void dbfs_cache_end(dbfs_cache_op *op);

/* A change to one file's data and attributes (WRITE): begin before the
 * batch; end after it with its status and, on success, the attributes
 * after (NULL if not known: the entry is dropped). */
void dbfs_cache_file_begin(dbfs_conn *c, dbfs_fh fh, dbfs_cache_op *op);
void dbfs_cache_file_end(dbfs_cache_op *op, int rc, const dbfs_attr *post);

#endif /* PGNFS_DBFS_INT_H */
