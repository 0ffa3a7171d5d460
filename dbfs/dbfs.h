/*
 * dbfs.h -- the pgnfs file-system API over PostgreSQL.
 *
 * With dbfs_locks.h (the lock manager's calls), this is all server/ includes from
 * dbfs/. It speaks inode numbers, byte ranges and POSIX-style errors; it knows
 * nothing of NFS or XDR.
 *
 * NOTES
 *   Return values: every function that can fail returns 0 on success or a
 *   negative errno. The errors used, and what they mean here:
 *     -ENOENT        a name does not exist
 *     -EEXIST        a name exists (create, mkdir, link, rename onto a dir
 *                    that is not empty is -ENOTEMPTY instead)
 *     -ENOTEMPTY     rmdir or rename over a directory that has entries
 *     -EACCES        permission bits deny the caller
 *     -EPERM         the operation needs ownership or root (chmod, chown,
 *                    utimes with client time, sticky-directory removal)
 *     -ENOTDIR       a directory was needed
 *     -EISDIR        a non-directory was needed (remove, link of a dir)
 *     -EINVAL        bad argument: a directory renamed into its own subtree,
 *                    "." or ".." as a name to create/remove, bad type
 *     -ENAMETOOLONG  a name over DBFS_NAME_MAX or a target over DBFS_PATH_MAX
 *     -EFBIG         an offset/size beyond DBFS_MAX_FILESIZE
 *     -ESTALE        the (inode, generation) no longer exists
 *     -ENOSPC        the database is out of space, or a data write would
 *                    leave less than the space guard's reserve free on
 *                    its disk (dbfs_config space_reserve)
 *     -EMLINK        too many links
 *     -EAGAIN        a transient database failure (lost connection,
 *                    serialization failure after retries), or a data
 *                    write waiting for the space guard to reclaim what
 *                    removals freed: the caller may retry; NFS answers
 *                    JUKEBOX
 *     -EIO           anything else; the SQLSTATE and statement name are logged
 *     -EBADMSG       (setattr only) the guard ctime did not match: NOT_SYNC
 *   Database errors are classified the same way on every call, the admin
 *   calls (mkfs, open, du, find, fsck) included: by SQLSTATE, in one place
 *   (dbfs/dbfs_err.h holds the table).
 *
 *   Transactions: each call is one PostgreSQL transaction (or none, for reads
 *   that need a single statement). A mutating call happens whole or not at
 *   all. Calls never hold a transaction open across returns.
 *
 *   Threads: a dbfs is shared by all threads and immutable after dbfs_open().
 *   A dbfs_conn belongs to one thread at a time; never share one.
 *
 *   Attributes and wcc: on success the attribute outputs are filled. On
 *   failure, outputs are filled where the call could read them (the flags
 *   in dbfs_wcc and dbfs_attr_opt say so), so NFS can return post-op
 *   attributes in its failure replies.
 *
 *   Memory: outputs that carry variable-length data (readlink target,
 *   readdir entries) are allocated by dbfs and released by the caller with
 *   the matching free function named at each call. dbfs never keeps a
 *   pointer to caller memory after a call returns.
 */
#ifndef PGNFS_DBFS_H
#define PGNFS_DBFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DBFS_NAME_MAX     255
#define DBFS_PATH_MAX     4096
#define DBFS_MAX_FILESIZE INT64_MAX
#define DBFS_NGROUPS_MAX  16
#define DBFS_ROOT_INO     1
#define DBFS_SECRET_LEN   32
/* The default chunk size: bench/results/paper-fig4.md (the best large
 * transfers, and 32 KiB writes within reach of the best). */
#define DBFS_CHUNK_SIZE_DEFAULT 65536
/* The default size past which a hybrid file gets its own table. */
#define DBFS_HYBRID_THRESHOLD 65536

typedef struct dbfs dbfs;
typedef struct dbfs_conn dbfs_conn;

/* File types; the numbers match what the schema stores (fileatt.type). */
typedef enum {
    DBFS_REG = 1,
    DBFS_DIR = 2,
    DBFS_BLK = 3,
    DBFS_CHR = 4,
    DBFS_LNK = 5,
    DBFS_SOCK = 6,
    DBFS_FIFO = 7
} dbfs_type;

/* A file as a handle names it: live (snap 0) or as snapshot snap saw it
 * (read-only; dbfs_snap.h). */
typedef struct {
    uint64_t ino;
    uint32_t gen;
    uint32_t snap;
} dbfs_fh;

typedef struct {
    uint64_t ino;
    uint32_t gen;
    dbfs_type type;
    uint32_t mode; /* 07777 bits only */
    uint32_t nlink;
    uint32_t uid, gid;
    uint64_t size;
    uint64_t used; /* bytes of storage the file occupies */
    uint32_t rdev_major, rdev_minor;
    int64_t atime_ns, mtime_ns, ctime_ns;
    uint64_t change; /* increases with every change to the file */
    uint32_t snap;   /* 0 live, else the snapshot it was read in (dbfs_snap.h) */
} dbfs_attr;

/* A transformation link (dbfs_xform.h) is a regular file with this
 * rdev_major (no other regular file has a device number); rdev_minor is 1
 * when its size is current. Its attributes follow its base's: dbfs never
 * caches them. */
#define DBFS_XLINK_RDEV 0x50584Cu

/* dbfs_attr_is_xlink -- is a a transformation link? */
static inline bool dbfs_attr_is_xlink(const dbfs_attr *a)
{
    return a->type == DBFS_REG && a->rdev_major == DBFS_XLINK_RDEV;
}

/* Attributes that may be missing (NFS post_op_attr). */
typedef struct {
    bool valid;
    dbfs_attr attr;
} dbfs_attr_opt;

/* Weak cache consistency data: attributes before and after an operation. */
typedef struct {
    bool have_pre, have_post;
    uint64_t pre_size;
    int64_t pre_mtime_ns, pre_ctime_ns;
    dbfs_attr post;
} dbfs_wcc;

/* The caller, as AUTH_SYS describes it (after any squashing). */
typedef struct {
    uint32_t uid, gid;
    uint32_t ngroups;
    uint32_t groups[DBFS_NGROUPS_MAX];
} dbfs_cred;

/* Attributes to set: DBFS_SET_* bits in `set` say which fields count. */
enum {
    DBFS_SET_MODE = 1u << 0,
    DBFS_SET_UID = 1u << 1,
    DBFS_SET_GID = 1u << 2,
    DBFS_SET_SIZE = 1u << 3,
    DBFS_SET_ATIME = 1u << 4,     /* to atime_ns */
    DBFS_SET_ATIME_NOW = 1u << 5, /* to the server's time */
    DBFS_SET_MTIME = 1u << 6,
    DBFS_SET_MTIME_NOW = 1u << 7,
};
typedef struct {
    unsigned set;
    uint32_t mode, uid, gid;
    uint64_t size;
    int64_t atime_ns, mtime_ns;
} dbfs_sattr;

/* ACCESS bits (same meaning as RFC 1813 ACCESS3_*). */
enum {
    DBFS_ACCESS_READ = 0x01,
    DBFS_ACCESS_LOOKUP = 0x02,
    DBFS_ACCESS_MODIFY = 0x04,
    DBFS_ACCESS_EXTEND = 0x08,
    DBFS_ACCESS_DELETE = 0x10,
    DBFS_ACCESS_EXECUTE = 0x20,
};

typedef enum {
    DBFS_CREATE_UNCHECKED = 0,
    DBFS_CREATE_GUARDED = 1,
    DBFS_CREATE_EXCLUSIVE = 2
} dbfs_createmode;

typedef enum { DBFS_UNSTABLE = 0, DBFS_DATA_SYNC = 1, DBFS_FILE_SYNC = 2 } dbfs_stable;

typedef enum { DBFS_STORAGE_SINGLE, DBFS_STORAGE_INVERSION, DBFS_STORAGE_HYBRID } dbfs_storage;
typedef enum { DBFS_ENC_BINARY, DBFS_ENC_BASE64 } dbfs_encoding;

/* What a file system is, as recorded in the database by mkfs. */
typedef struct {
    uint64_t fsid;
    uint32_t chunk_size;
    dbfs_storage storage;
    dbfs_encoding encoding;
    int schema_version;
    unsigned char secret[DBFS_SECRET_LEN]; /* handle MAC key */
    uint32_t root_gen;
    uint64_t hybrid_threshold; /* hybrid: a file larger gets its own table */
    bool citus;                /* the database is a Citus coordinator */
} dbfs_info;

typedef struct {
    const char *conninfo; /* libpq connection string; never NULL */
    /* Time-of-access policy for reads: true = relatime (atime moves when it
     * is older than mtime/ctime or a day old), false = noatime. */
    bool relatime;
    /* A local directory on the file system that holds the database (the
     * embedded cluster's data directory), for FSSTAT space figures; NULL
     * when the database is remote (then space is reported from the
     * database's own size and a configured-free figure is unknown). */
    const char *space_path;
    /* The space guard (dbfs_space.c): bytes of the file system under
     * space_path kept free for PostgreSQL itself (WAL until a checkpoint
     * recycles it, checkpoints, vacuum). A data write that would leave
     * less free answers -ENOSPC (or -EAGAIN while space that removals
     * freed is being reclaimed); metadata changes and removals are never
     * refused. 0 (or no space_path) = no guard. */
    uint64_t space_reserve;
    /* Metadata caches (dbfs_cache.c): how many entries the stat cache
     * (inode -> attributes) and the naming cache ((directory, name) ->
     * inode) hold; 0 = that cache is off. The caches assume this process
     * is the database's only writer: changes made through SQL bypass them. */
    uint32_t stat_cache_entries;
    uint32_t name_cache_entries;
    /* The chunk buffer cache ((inode, chunk) -> bytes, dbfs_data.c): its
     * bound in bytes; 0 = off. At least one chunk (plus a little). */
    uint64_t buffer_cache_bytes;
    /* The small-file cache (inode -> a small file's whole contents,
     * dbfs_small.c): its bound in bytes, and the largest file it keeps;
     * either 0 = off. The bound must hold one such file (plus a little). */
    uint64_t small_cache_bytes;
    uint32_t small_file_bytes;
    /* The write-back buffer of UNSTABLE writes (dbfs_wb.c): its bound in
     * bytes (0 = off: every write is stored at once, FILE_SYNC), and the
     * size past which one file's data is flushed (0 = 8 MiB). */
    uint64_t writeback_bytes;
    uint64_t writeback_file_bytes;
    /* Transformation chains (dbfs_xf.c, xform/xf.h): the root directory's
     * chain, set at open (NULL or "": keep the file system's); the key
     * file of aes-256-gcm and the plug-in directory (NULL or "": none);
     * the level of "zstd" without level= (0 = 3). A wrong key (another id
     * than the file system recorded), an unreadable key file or a root
     * chain that does not make fail dbfs_open with the reason logged. */
    const char *xform_root_chain;
    const char *xform_key_file;
    const char *xform_plugin_dir;
    int xform_zstd_level;
} dbfs_config;

/* FSSTAT figures (the type has its own name: dbfs_fsstat is the call). */
typedef struct {
    uint64_t tbytes, fbytes, abytes;
    uint64_t tfiles, ffiles, afiles;
} dbfs_fsstat_res;

typedef struct {
    uint64_t cookie; /* position after this entry; pass back to continue */
    uint64_t ino;
    char *name; /* NUL-terminated */
    bool has_attr;
    dbfs_attr attr; /* only with plus (and has_attr) */
} dbfs_dirent;

/* Options for dbfs_mkfs(). Zero-initialize, then set what differs. */
typedef struct {
    dbfs_storage storage;   /* default SINGLE */
    uint32_t chunk_size;    /* 0 = DBFS_CHUNK_SIZE_DEFAULT */
    dbfs_encoding encoding; /* default BINARY */
    /* hybrid: bytes past which a file gets its own table, 1 .. 2^40;
     * 0 = DBFS_HYBRID_THRESHOLD */
    uint64_t hybrid_threshold;
    uint32_t root_uid, root_gid;
    uint32_t root_mode; /* 0 = 0755 */
    bool force;         /* replace an existing file system */
} dbfs_mkfs_opts;

/* --- life cycle ------------------------------------------------------- */

/*
 * dbfs_mkfs -- create a file system in the database `conninfo` names.
 * Applies every schema file in one transaction and creates the root.
 * Returns 0, -EEXIST if a file system is there and !opts->force, -EINVAL
 * for bad options, or another errno of the classifier (dbfs_err.h's
 * table: -EAGAIN, -ENOSPC, -EIO with a log line saying why).
 */
int dbfs_mkfs(const char *conninfo, const dbfs_mkfs_opts *opts);

/*
 * dbfs_open -- attach to an existing file system: reads its facts, and
 * upgrades the schema if it is older than this build's. Returns 0 and
 * *out, or -ENOENT (no file system: run mkfs), -EPROTO (schema newer than
 * this build), -EAGAIN (database unreachable), -ENOSPC, -EIO.
 */
int dbfs_open(const dbfs_config *cfg, dbfs **out);
void dbfs_close(dbfs *fs);
const dbfs_info *dbfs_get_info(const dbfs *fs);

/*
 * dbfs_conn_open -- a connection for one worker thread, with its statements
 * prepared. Returns 0 and *out, or -EAGAIN/-EIO. A connection that breaks
 * later is reset by the next call that uses it.
 */
int dbfs_conn_open(dbfs *fs, dbfs_conn **out);
void dbfs_conn_close(dbfs_conn *c);

/* Database round trips made on this connection since it was opened. */
uint64_t dbfs_conn_round_trips(const dbfs_conn *c);

/*
 * dbfs_conn_set_async -- how the changes of the calls that follow on c
 * commit. false (a new connection's mode): durable, each change is on
 * disk when its call returns. true (an exports(5) `async` export): each
 * change still commits whole, in the same one transaction, but the call
 * returns without waiting for the commit to reach the disk (PostgreSQL's
 * synchronous_commit off for that transaction, set in the same round
 * trip); PostgreSQL's WAL writer flushes such commits together, within
 * 3 x wal_writer_delay, and a crash of PostgreSQL or of the machine
 * before then loses them (never a part of one). A crash of this process
 * alone loses nothing committed. Reads are not affected. Cannot fail.
 */
void dbfs_conn_set_async(dbfs_conn *c, bool async);

/* dbfs_conn_async -- the mode dbfs_conn_set_async last set on c. */
bool dbfs_conn_async(const dbfs_conn *c);

/* --- permission rule (shared by dbfs and its tests) -------------------- */

/*
 * dbfs_perm_allows -- does `cred` get `want` (a mask of R=4, W=2, X=1) on a
 * file with attributes `a`? Root gets read and write always, execute if any
 * x bit is set or the file is a directory. Cannot fail.
 */
bool dbfs_perm_allows(const dbfs_attr *a, const dbfs_cred *cred, unsigned want);

/* --- attributes (RFC 1813 3.3.1, 3.3.2, 3.3.4) ------------------------- */

int dbfs_getattr(dbfs_conn *c, dbfs_fh fh, dbfs_attr *out);

/*
 * dbfs_getattr_quick -- dbfs_getattr from memory alone, for a caller that
 * must not wait for the database (the server's event thread): 0 and *out,
 * or -ESTALE, as dbfs_getattr would answer; -ENODATA when only the
 * database can say (not cached, a snapshot's file, a transformation link
 * whose size is still to be computed, several servers on the file
 * system), having counted no cache miss: then call dbfs_getattr.
 */
int dbfs_getattr_quick(dbfs *fs, dbfs_fh fh, dbfs_attr *out);

/*
 * dbfs_setattr -- change attributes with POSIX (Linux) rules: chmod by
 * owner/root, chown by root (owner may change group to one of his), size
 * needs write permission, times as utimes(2). Truncation drops and trims
 * chunks. guard_ctime_ns, when not NULL, must equal the current ctime or the
 * call fails with -EBADMSG and changes nothing.
 */
int dbfs_setattr(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, const dbfs_sattr *sa,
                 const int64_t *guard_ctime_ns, dbfs_wcc *wcc);

/*
 * dbfs_access -- which of `want` (DBFS_ACCESS_*) the caller has; *granted
 * is a subset of want. *attr is filled on success.
 */
int dbfs_access(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint32_t want, uint32_t *granted,
                dbfs_attr *attr);

/* dbfs_access_quick -- dbfs_access from memory alone, as dbfs_getattr_quick
 * (-ENODATA: call dbfs_access). */
int dbfs_access_quick(dbfs *fs, const dbfs_cred *cred, dbfs_fh fh, uint32_t want, uint32_t *granted,
                      dbfs_attr *attr);

/* --- names (3.3.3, 3.3.8 - 3.3.15) -------------------------------------- */

/*
 * dbfs_lookup -- find `name` in directory `dir` ("." and ".." included;
 * ".." of the root is the root). Needs search permission on dir.
 * *obj filled on success; *dir_attr filled whenever dir could be read.
 */
int dbfs_lookup(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name, dbfs_attr *obj,
                dbfs_attr_opt *dir_attr);

/* dbfs_lookup_quick -- dbfs_lookup from memory alone, as dbfs_getattr_quick
 * (-ENODATA: call dbfs_lookup; also for "..", a snapshot's directory, a
 * name that is not one, and a transformation link of unknown size). */
int dbfs_lookup_quick(dbfs *fs, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                      dbfs_attr *obj, dbfs_attr_opt *dir_attr);

/*
 * dbfs_create -- create a regular file. UNCHECKED: an existing regular file
 * is opened (and truncated if sa sets size); GUARDED: -EEXIST if the name
 * exists; EXCLUSIVE: `verf` is stored with the file; the same verifier on a
 * retry succeeds, another one is -EEXIST. sa may be NULL (EXCLUSIVE); a
 * mode it does not set defaults to 0644 (the client follows an EXCLUSIVE
 * create with SETATTR).
 */
int dbfs_create(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                dbfs_createmode how, const dbfs_sattr *sa, uint64_t verf, dbfs_attr *obj,
                dbfs_wcc *dir_wcc);
int dbfs_mkdir(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
               const dbfs_sattr *sa, dbfs_attr *obj, dbfs_wcc *dir_wcc);
int dbfs_symlink(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                 const char *target, const dbfs_sattr *sa, dbfs_attr *obj, dbfs_wcc *dir_wcc);
/* type is DBFS_CHR, DBFS_BLK, DBFS_SOCK or DBFS_FIFO; else -EINVAL. */
int dbfs_mknod(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name, dbfs_type type,
               uint32_t major, uint32_t minor, const dbfs_sattr *sa, dbfs_attr *obj,
               dbfs_wcc *dir_wcc);
int dbfs_remove(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
                dbfs_wcc *dir_wcc);
int dbfs_rmdir(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, const char *name,
               dbfs_wcc *dir_wcc);
int dbfs_rename(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh from_dir, const char *from_name,
                dbfs_fh to_dir, const char *to_name, dbfs_wcc *from_wcc, dbfs_wcc *to_wcc);
int dbfs_link(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh file, dbfs_fh dir, const char *name,
              dbfs_attr_opt *file_attr, dbfs_wcc *dir_wcc);

/*
 * dbfs_readlink -- *target is malloc'd and NUL-terminated; caller frees it
 * with free(). -EINVAL if fh is not a symbolic link.
 */
int dbfs_readlink(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, char **target, dbfs_attr *attr);

/*
 * dbfs_readdir -- up to max_entries entries of `dir` after position
 * `cookie` (0 = from the start; "." and ".." come first, cookies 1 and 2).
 * Cookies are stable: an entry keeps its cookie while it exists, new
 * entries get larger ones, so a listing interrupted by changes resumes
 * where it was. plus fills each entry's attributes. Returns 0 with
 * *entries (free with dbfs_dirents_free) and *n; *eof is true when no
 * entries remain after the last one returned. Needs read permission.
 */
int dbfs_readdir(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, uint64_t cookie,
                 uint32_t max_entries, bool plus, dbfs_dirent **entries, size_t *n, bool *eof,
                 dbfs_attr_opt *dir_attr);
void dbfs_dirents_free(dbfs_dirent *entries, size_t n);

/* --- data (3.3.6, 3.3.7, 3.3.21) ----------------------------------------- */

/*
 * dbfs_read -- read up to count bytes at off into buf (caller's, at least
 * count bytes). Holes read as zeros. *nread may be short only at end of
 * file; *eof says whether off + *nread reached the end. Needs read or
 * execute permission (a client runs a program by reading it; RFC 1813
 * 4.4), and the owner always may, as Linux knfsd allows.
 */
int dbfs_read(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, uint32_t count,
              void *buf, uint32_t *nread, bool *eof, dbfs_attr_opt *attr);

/*
 * dbfs_read_quick -- dbfs_read from memory alone, as dbfs_getattr_quick:
 * 0 with the outputs filled when the caches hold the range (the small-file
 * cache or the buffer cache) as of the file's current attributes, the
 * caller may read it and the READ moves no atime (or, for a caller whose
 * export is async, its update is deferred, as dbfs_read defers it);
 * -ENODATA otherwise (also for a snapshot's file, a transformation link,
 * a file with buffered writes), having counted no miss: then call
 * dbfs_read.
 */
int dbfs_read_quick(dbfs *fs, const dbfs_cred *cred, dbfs_fh fh, bool async, uint64_t off,
                    uint32_t count, void *buf, uint32_t *nread, bool *eof, dbfs_attr_opt *attr);

/*
 * dbfs_write -- write len bytes at off. Needs write permission (the owner
 * always may). Clears setuid/setgid for a non-root writer. *committed says
 * what stability was reached (never less than `how`).
 */
int dbfs_write(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, const void *data,
               uint32_t len, dbfs_stable how, dbfs_stable *committed, dbfs_wcc *wcc);

/* dbfs_commit -- make writes in [off, off+count) durable (count 0 = all). */
int dbfs_commit(dbfs_conn *c, dbfs_fh fh, uint64_t off, uint32_t count, dbfs_wcc *wcc);

int dbfs_fsstat(dbfs_conn *c, dbfs_fsstat_res *out);

/*
 * dbfs_fsstat_fh -- FSSTAT of the file system with the attributes of fh
 * for the reply (RFC 1813 3.3.18): one round trip (GETATTR and FSSTAT in
 * one batch, or FSSTAT alone when the stat cache knows fh). Returns 0,
 * -ESTALE (fh is gone), -EAGAIN or -EIO; *attr is filled whenever fh was
 * read.
 */
int dbfs_fsstat_fh(dbfs_conn *c, dbfs_fh fh, dbfs_fsstat_res *out, dbfs_attr_opt *attr);

/* --- the space guard (dbfs_space.c) ---------------------------------------- */

/* dbfs_space_guarded -- does fs hold data writes back from filling the
 * database's disk (dbfs_config space_path and space_reserve)? */
bool dbfs_space_guarded(const dbfs *fs);

/*
 * dbfs_space_tend -- the space guard's work off the request path: call it
 * every few hundred ms from one thread (the server's flusher). When a
 * data write found the disk at its reserve after files were removed,
 * truncated or overwritten, it VACUUMs the data tables (their dead rows
 * become space PostgreSQL reuses; empty pages at their end go back to the
 * disk) and measures the reusable space inside allfiles, which later
 * writes may use; after its CHECKPOINT it asks every connection of fs to
 * be opened anew (dbfs_renew.h). *session: its own connection, opened on
 * first need (NULL at first; closed after a CHECKPOINT; dbfs_conn_close
 * it at the end). Returns 1 after a reclaim, 0 when there was nothing to do, or -EAGAIN /
 * -EIO (the reclaim is tried again at the next call; writes meanwhile
 * answer -EAGAIN).
 */
int dbfs_space_tend(dbfs *fs, dbfs_conn **session);

/* --- write-back (dbfs_wb.c) ------------------------------------------------ */

/*
 * dbfs_wb_flush_due -- store the buffered writes of every file whose
 * oldest buffered data is at least age_ms old (0: every file, as at
 * shutdown), on connection c, after the atime updates READs of an async
 * export deferred (dbfs/dbfs_atime.h; all of them, whatever age_ms).
 * Returns how many files were flushed or had their atime stored (a flush
 * that failed for good counts: its error waits for that file's COMMIT),
 * or -EAGAIN when the database is away (the data is kept).
 */
int dbfs_wb_flush_due(dbfs_conn *c, unsigned age_ms);

/* The write-back buffer's figures (all zero when it is off). */
typedef struct {
    bool enabled;
    uint64_t limit, bytes, files; /* bound, held now (bytes, files) */
    uint64_t writes;              /* UNSTABLE writes buffered */
    uint64_t refused;             /* writes that did not fit at first */
    uint64_t flushes, flushed_bytes, errors;
    uint64_t oldest_age_ms; /* age of the oldest data held */
} dbfs_wb_stats;

/* dbfs_wb_figures -- fill *out. Cannot fail. */
void dbfs_wb_figures(const dbfs *fs, dbfs_wb_stats *out);

/* --- administration: questions about the tree answered in SQL ----------
 * (dbfs_admin.c; `pgnfs du`, `pgnfs find`). A dbfs_admin is a connection
 * of its own, outside any server, used by one thread. Rows stream to a
 * callback, so a tree of any size costs constant memory here. */

typedef struct dbfs_admin dbfs_admin;

/*
 * dbfs_admin_open -- connect to the file system in conninfo. Returns 0
 * and *out (dbfs_admin_close it), -EAGAIN (cannot connect; logged) or
 * -ENOENT (the database holds no file system).
 */
int dbfs_admin_open(const char *conninfo, dbfs_admin **out);
void dbfs_admin_close(dbfs_admin *a);

/*
 * dbfs_admin_resolve -- the inode and type of an absolute path ("/",
 * "/a/b"; empty components and "." are skipped, ".." is refused) walked
 * from the root. Returns 0, -ENOENT, -ENOTDIR (a component that is not a
 * directory), -EINVAL (".."), or a database error (-EAGAIN, -ENOSPC,
 * -EIO: classified as every call's, see the top of this file).
 */
int dbfs_admin_resolve(dbfs_admin *a, const char *path, uint64_t *ino, dbfs_type *type);

/* One entry of a tree walk; name and path point into the row, valid
 * during the callback only. path is relative to the start ("" for the
 * start itself, else "/a/b"); neither is NUL-terminated. */
typedef struct {
    const char *path;
    size_t path_len;
    unsigned depth;
    uint64_t ino;
    dbfs_type type;
    uint32_t mode, nlink, uid, gid;
    uint64_t size, used;
    int64_t mtime_ns;
} dbfs_find_entry;

typedef struct {
    const char *name_like;  /* SQL LIKE pattern on the entry's name; NULL = any */
    const char *start_name; /* the name -name tests for the start entry */
    int type;               /* a dbfs_type, or 0 = any */
    int size_cmp;           /* -1 less, 0 equal, 1 more, 2 = no size test */
    uint64_t size_unit;     /* bytes per unit (size rounded up to units) */
    uint64_t size_n;
    unsigned mindepth, maxdepth;
    int64_t uid, gid; /* -1 = any */
} dbfs_find_query;

/*
 * dbfs_admin_find -- every entry under start (itself included) that
 * matches q, in path order, to cb; a nonzero return of cb stops the walk
 * (the query is cancelled) and is returned. Returns 0, cb's value, or
 * a database error (-EAGAIN, -ENOSPC, -EIO; logged).
 */
int dbfs_admin_find(dbfs_admin *a, uint64_t start, const dbfs_find_query *q,
                    int (*cb)(const dbfs_find_entry *e, void *arg), void *arg);

/*
 * dbfs_views_reader -- prepare the read-only access to the SQL views of
 * the file system in conninfo (schema pgnfs): the roles pgnfs_reader
 * (NOLOGIN, SELECT on the views only) and pgnfs_ro (LOGIN, a member of
 * it) are made if missing and conninfo's user may make roles, and granted
 * this database's views. Returns 0 and *out, a conninfo for the same
 * database as pgnfs_ro (conninfo's user and password left out, search_path
 * pgnfs then public, read-only transactions; g_free it); -EPERM when the
 * roles do not exist and this user may not make them (logged: what to ask
 * the database's administrator); -ENOENT (no file system there); -EINVAL
 * (conninfo does not parse); or a database error (-EAGAIN, -EIO; logged).
 */
int dbfs_views_reader(const char *conninfo, char **out);

/* One directory of a disk-usage walk (path as in dbfs_find_entry). */
typedef struct {
    const char *path;
    size_t path_len;
    unsigned depth;
    uint64_t ino;
    uint64_t used;  /* stored bytes of every distinct inode beneath, itself included */
    uint64_t size;  /* their sizes */
    uint64_t files; /* their number */
} dbfs_du_entry;

/*
 * dbfs_admin_du -- the disk usage of start and of every directory beneath
 * it down to maxdepth, children before their parent, to cb (a nonzero
 * return stops the walk and is returned). Returns 0, cb's value, or
 * a database error (-EAGAIN, -ENOSPC, -EIO; logged).
 */
int dbfs_admin_du(dbfs_admin *a, uint64_t start, unsigned maxdepth,
                  int (*cb)(const dbfs_du_entry *e, void *arg), void *arg);

/* --- transformation chains and links: dbfs_xform.h ---------------------- */

/* --- cache statistics (dbfs_cache.c) ------------------------------------ */

/* The counters of one cache. */
typedef struct {
    const char *name; /* "stat", "naming", ...: a static string */
    bool enabled;
    uint64_t capacity, entries; /* in the cache's unit (entries, or bytes) */
    uint64_t hits, misses;
    uint64_t inserts, evictions, invalidations;
    uint64_t refused; /* fills dropped because a concurrent change made them stale */
    uint64_t waits;   /* lookups that waited for another request's fetch of the data */
} dbfs_cache_figures;

#define DBFS_CACHES_MAX 5

/*
 * dbfs_cache_stats -- the counters of fs's caches, enabled or not, into
 * out[0 .. max); returns how many were written. Lock-free for callers (each
 * cache shard is read under its own lock briefly). Cannot fail.
 */
unsigned dbfs_cache_stats(const dbfs *fs, dbfs_cache_figures *out, unsigned max);

/* --- consistency check and repair (dbfs_fsck.c; `pgnfs fsck`) -----------
 * The checks and their repairs are listed in schema/functions/90_fsck.sql.
 * Checking takes no locks and runs beside a server; repairing holds each
 * check's tables against writers and changes rows in SQL, which a running
 * server's caches do not see: repair with the server stopped. */

/* One problem a check found (strings valid during the callback only). */
typedef struct {
    const char *check; /* "nlink", "orphans", ... */
    uint64_t ino;      /* the inode it is about (0: none) */
    const char *detail;
    bool repaired;
} dbfs_fsck_problem;

typedef struct {
    bool repair; /* fix what is found, then check everything again */
    /* Before each check (may be NULL): step 1..nsteps; pass is 1, or 2 for
     * the checks run again after repairs. */
    void (*progress)(void *arg, unsigned pass, unsigned step, unsigned nsteps, const char *what);
    /* Each problem found (may be NULL). */
    void (*problem)(void *arg, unsigned pass, const dbfs_fsck_problem *p);
    void *arg;
} dbfs_fsck_opts;

typedef struct {
    unsigned long found;    /* problems found (by the first pass) */
    unsigned long repaired; /* of those, repaired */
    unsigned long left;     /* problems the checks still find at the end */
} dbfs_fsck_report;

/*
 * dbfs_fsck -- check (and with opts->repair, repair) the file system fs,
 * on a connection of its own. When the root directory is missing or not a
 * directory, nothing is repaired. Returns 0 with *out filled (problems are
 * not errors: see out), or -EAGAIN (database unreachable or lost, or a
 * check kept meeting writers) / -ENOSPC / -EIO (a check failed in the
 * database; logged with its SQLSTATE) with *out holding what was counted
 * so far.
 */
int dbfs_fsck(dbfs *fs, const dbfs_fsck_opts *opts, dbfs_fsck_report *out);

/* --- file locks: dbfs_locks.h ------------------------------------------ */

/* --- several frontends on one file system (dbfs_coh.c, dbfs_front.c) -----
 * Every server registers in pgnfs_frontends (schema/005_frontends.sql)
 * and keeps its row live with a heartbeat. With coherence `single` (one
 * server, exact caches, the default) a server refuses to start beside
 * another live one; with `shared`, servers read each other's
 * invalidations from a log (schema/010_inval_log.sql) and a request
 * answered from the caches has seen every change committed before it
 * arrived (the argument: dbfs_coh.c, dbfs_coh_log.c). */

/* A row whose heartbeat is older than this many seconds, or whose
 * database session is gone, belongs to a dead server: it does not count. */
#define DBFS_FRONTEND_STALE_S 60

typedef struct {
    const char *host;    /* NULL: the host's name */
    const char *address; /* what clients reach the server on ("0.0.0.0") */
    unsigned port;
    bool shared; /* [cache] coherence = shared */
} dbfs_frontend_self;

/*
 * dbfs_frontend_start -- register fs's server, on a session and a thread
 * of its own that heartbeats and (shared) reads the invalidation log;
 * resets the caches once reading. A shared server that joins others waits
 * (at most DBFS_FRONTEND_STALE_S + 10 s) until one serving alone reads
 * the log too. Call after the server's listener is open and before it
 * serves. Returns 0; -EBUSY with *why (g_malloc'd: a message naming the
 * other server and what to change) when another live server is in the
 * way (single: any; shared: one in single mode, or a lone one that did
 * not start reading the log); or
 * -EAGAIN / -EIO / -ENOMEM with *why saying so. dbfs_frontend_stop ends
 * it and deletes the row (no-op when not started).
 */
int dbfs_frontend_start(dbfs *fs, const dbfs_frontend_self *self, char **why);
void dbfs_frontend_stop(dbfs *fs);

/*
 * dbfs_conn_request -- a request begins on c (its worker thread): cache
 * lookups until the next call answer only after seeing every change any
 * frontend committed before now (shared coherence; nothing otherwise).
 * Cheap (two atomic operations). Cannot fail.
 */
void dbfs_conn_request(dbfs_conn *c);

/* This server's part (all zero when not registered). */
typedef struct {
    bool registered, shared, up; /* up: invalidations are being received */
    bool solo;                   /* shared, alone so far: no barriers */
    int64_t id;
    uint64_t calls, invalidations, barriers;
    uint64_t resets; /* the caches emptied: log trimmed past us, or joined */
} dbfs_frontend_stats;

/* dbfs_frontend_figures -- fill *out. Cannot fail. */
void dbfs_frontend_figures(const dbfs *fs, dbfs_frontend_stats *out);

/* One row of pgnfs_frontends (strings valid during the callback only). */
typedef struct {
    int64_t id;
    const char *host, *address, *coherence;
    unsigned port;
    int pid;
    int64_t uptime_s, heartbeat_age_s;
    uint64_t calls, stat_entries, naming_entries, buffer_bytes, small_bytes, writeback_bytes;
    uint64_t invalidations;
    bool live;
    bool solo; /* shared, registered alone, not reading the log yet */
} dbfs_frontend_row;

/*
 * dbfs_admin_frontends -- every registered server, live or not, to cb
 * (a nonzero return stops and is returned). Returns 0, cb's value,
 * -EAGAIN, -EIO.
 */
int dbfs_admin_frontends(dbfs_admin *a, int (*cb)(const dbfs_frontend_row *r, void *arg),
                         void *arg);

/* The database's place in its replication topology. */
typedef struct {
    bool standby; /* pg_is_in_recovery(): a read-only standby */
    char version[32];
    char server[128];     /* address:port, or "local socket" */
    char sync_names[256]; /* synchronous_standby_names ("" = none) */
    unsigned nreplicas;   /* standbys streaming from it */
    char replicas[512];   /* "name state sync_state, ..." */
} dbfs_topology;

/* dbfs_admin_topology -- fill *out (one query). Returns 0, -EAGAIN, -EIO. */
int dbfs_admin_topology(dbfs_admin *a, dbfs_topology *out);

#endif /* PGNFS_DBFS_H */
