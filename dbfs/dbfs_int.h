/*
 * dbfs_int.h -- the state of an open file system (struct dbfs), which
 * every layer of dbfs/ reads and nobody outside dbfs/ sees.
 *
 * NOTES
 *   Data only: nothing here calls anything. Each part belongs to the file
 *   that opens, uses and frees it (named at the field); the parts of
 *   upper layers are opaque pointers here, so a lower file never needs an
 *   upper file's header. The whole is immutable after dbfs_open() but for
 *   the parts that say how they are shared (atomics, a mutex).
 *
 *   The layers of dbfs/, bottom to top (a file calls only files below it):
 *
 *     dbfs_perm.c dbfs_codec.c dbfs_sql.c dbfs_dirent.c  (pure helpers)
 *     dbfs_err.c            SQLSTATE -> errno, bounded retries
 *     dbfs_wire.c           binary parameters and results
 *     dbfs_renew.c          which connections are owed a new server session
 *     dbfs_link.c           connecting, setting a worker connection up
 *     dbfs_conn.c           connections, batches, sessions
 *     store_tab.c           statements of layouts with per-file tables
 *     store_single.c store_inversion.c store_hybrid.c   the layouts
 *     store.c               the layouts by name
 *     dbfs_space.c          the space guard: NOSPC before the disk is full
 *     dbfs_cache.c          the metadata caches seen from dbfs
 *     dbfs_fetch.c          attributes from the stat cache or the database
 *     dbfs_data.c           storing writes, the chunk buffer cache
 *     dbfs_wb.c             the write-back buffer of UNSTABLE writes
 *     dbfs_dirlist.c        READDIR pages from the listing cache
 *     dbfs_attr.c dbfs_names.c dbfs_readdir.c dbfs_read.c dbfs_write.c
 *     dbfs_stats.c dbfs_fs.c dbfs_admin.c dbfs_fsck.c dbfs_coh_log.c
 *     dbfs_coh.c
 *     dbfs_front.c                                     (the API, dbfs.h)
 */
#ifndef PGNFS_DBFS_INT_H
#define PGNFS_DBFS_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "dbfs.h"

struct store_ops;
struct dbfs_cache;
struct cache_chunk;
struct cache_small;
struct cache_wb;
struct dbfs_space;
typedef struct dbfs_coh dbfs_coh;

/* The database's FSSTAT figures, kept a moment (dbfs_attr.c): computing
 * the database's size stats every file of it. */
#define DBFS_FSSTAT_TTL_US 1000000
typedef struct {
    GMutex lock;
    int64_t until_us; /* g_get_monotonic_time(): fresh until then */
    uint64_t db_bytes, files;
} dbfs_fsstat_memo;

/* One read-ahead slot (dbfs_ra.c): where the last read of ino ended and
 * the window it earned, in chunks (a guess, kept without a lock); and,
 * under lock, the fetches of the inodes that share the slot now on their
 * way from the database, which READs of their chunks wait for (done). */
#define DBFS_RA_SLOTS   256
#define DBFS_RA_FLIGHTS 4
typedef struct {
    _Atomic uint64_t ino, next, window;
    GMutex lock;
    GCond done;
    uint64_t seq; /* the last flight's number */
    struct {
        uint64_t seq; /* 0: a free entry */
        uint64_t ino, first, last;
    } fl[DBFS_RA_FLIGHTS];
} dbfs_ra_slot;

/* Connections opened anew (dbfs_renew.c): the renewal epoch, the
 * connections that follow it, how many of them were connected before the
 * current epoch, and the owners to wake when a renewal is asked. */
#define DBFS_RENEW_WATCHERS 8
typedef struct {
    GMutex lock;
    _Atomic uint64_t epoch; /* written under lock, also read without */
    /* Under lock: */
    unsigned open, stale;
    int64_t asked_us; /* g_get_monotonic_time() of the last renewal */
    bool late_said;   /* the last renewal's lateness was logged */
    struct {
        void (*wake)(void *arg);
        void *arg;
    } watch[DBFS_RENEW_WATCHERS];
} dbfs_renew_state;

/* Slots of dbfs.xf_seen. */
#define DBFS_XF_SEEN_SLOTS 1024

/* A transformation link met (dbfs_xf_link.c): its base and chain never
 * change, so what a READ learns of it is kept (by inode hash). */
#define DBFS_XL_SLOTS 256
typedef struct {
    uint64_t ino; /* 0: empty */
    uint64_t base, chain;
    bool preserves, writable;
} dbfs_xl_slot;

struct dbfs {
    char *conninfo;
    bool relatime;
    char *space_path; /* NULL: none */
    dbfs_info info;
    const struct store_ops *store; /* the layout (store.h) */
    struct dbfs_cache *cache;      /* metadata caches (dbfs_cache.c); NULL: all off */
    /* The chunk buffer cache (dbfs_data.c); NULL: off. */
    struct cache_chunk *chunks;
    uint64_t chunks_bytes; /* its bound */
    /* The small-file cache (dbfs_small.c); NULL: off. */
    struct cache_small *small;
    dbfs_ra_slot ra[DBFS_RA_SLOTS];
    _Atomic uint64_t ra_waits; /* READs that waited for a fetch (dbfs_ra.c) */
    /* Until then (g_get_monotonic_time) the database was out of space
     * (dbfs_data.c): the write-back buffer takes no UNSTABLE write, so a
     * write answers -ENOSPC itself. */
    _Atomic int64_t space_short_until_us;
    /* The space guard (dbfs_space.c); NULL: none. */
    struct dbfs_space *space;
    /* Renewals of this file system's connections (dbfs_renew.c). */
    dbfs_renew_state renew;
    /* The write-back buffer (dbfs_wb.c); NULL: off. */
    struct cache_wb *wb;
    /* Deferred atime updates of async exports (dbfs_atime.c). */
    struct dbfs_atime *atime;
    uint64_t wb_file_bytes; /* a file holding this much is flushed */
    dbfs_fsstat_memo fsstat_memo;
    /* Transformation chains (dbfs_xf.c): the env (never NULL after open),
     * and the files last seen guarded (inode, by hash; a guess). */
    struct xf_env *xf;
    _Atomic uint64_t xf_seen[DBFS_XF_SEEN_SLOTS];
    _Atomic uint64_t xf_seen_chain[DBFS_XF_SEEN_SLOTS]; /* its chain id */
    /* Directories whose new files were last seen with a chain (dbfs_xf_hint),
     * and new files whose chain is not known yet, with their directory. */
    _Atomic uint64_t xf_dir[DBFS_XF_SEEN_SLOTS], xf_dir_chain[DBFS_XF_SEEN_SLOTS];
    _Atomic uint64_t xf_new[DBFS_XF_SEEN_SLOTS], xf_new_dir[DBFS_XF_SEEN_SLOTS];
    GMutex xl_lock; /* the links met */
    dbfs_xl_slot xl[DBFS_XL_SLOTS];
    /* This frontend among others (dbfs_coh.c); NULL: not registered. */
    dbfs_coh *coh;
    /* Shared coherence: may a cache lookup answer now (it waits for the
     * request's barrier)? NULL: always (set while no request runs). */
    bool (*coh_fresh)(dbfs_coh *h);
};

/*
 * dbfs_coh_wait_solos -- on session c, wait until no shared frontend other
 * than row self (0: none of ours) serves the file system alone (each has
 * read a snapshot of the invalidation log, or its heartbeat is stale), at
 * most DBFS_FRONTEND_STALE_S + 10 s (dbfs_coh.c). The caller has woken
 * them (DBFS_ST_COH_JOIN). Returns 0, -EBUSY with *why (g_free it), or a
 * database error.
 */
int dbfs_coh_wait_solos(dbfs_conn *c, int64_t self, char **why);

#endif /* PGNFS_DBFS_INT_H */
