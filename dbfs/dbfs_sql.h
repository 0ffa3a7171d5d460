/*
 * dbfs_sql.h -- the statements dbfs runs (their text is in dbfs_sql.c) and
 * the shape of what they return: the attribute columns every statement
 * returns in one order, and the rows of the schema's metadata functions
 * (status, role, attributes).
 *
 * NOTES
 *   Data only: nothing here calls anything. A statement is named by its
 *   dbfs_stmt; dbfs_stmts[id].name is its prepared name (and the name the
 *   logs give it), .sql its text.
 */
#ifndef PGNFS_DBFS_SQL_H
#define PGNFS_DBFS_SQL_H

#include <stdbool.h>

/* The statements of dbfs_sql.c. Those before DBFS_ST_NWORKER are prepared
 * on every worker connection; the others on mkfs/open connections. */
typedef enum {
    DBFS_ST_SESSION,
    DBFS_ST_ASYNC_COMMIT,
    DBFS_ST_GETATTR,
    DBFS_ST_LOOKUP,
    DBFS_ST_PARENT,
    DBFS_ST_READLINK,
    DBFS_ST_READDIR,
    DBFS_ST_READDIRPLUS,
    DBFS_ST_LISTING,
    DBFS_ST_SETATTR,
    DBFS_ST_CREATE,
    DBFS_ST_REMOVE,
    DBFS_ST_RENAME,
    DBFS_ST_LINK,
    DBFS_ST_WRITE_BEGIN,
    DBFS_ST_WRITE_END,
    DBFS_ST_ATIME,
    DBFS_ST_FSSTAT,
    DBFS_ST_SINGLE_READ,
    DBFS_ST_SINGLE_WRITE_FULL,
    DBFS_ST_SINGLE_WRITE_PART,
    DBFS_ST_SINGLE_WRITE_PART64,
    DBFS_ST_WRITE,
    DBFS_ST_TAB_READ,
    /* file locks (dbfs_lock.c) */
    DBFS_ST_NLM_LOCK,
    DBFS_ST_NLM_TEST,
    DBFS_ST_NLM_UNLOCK,
    DBFS_ST_NLM_CANCEL,
    DBFS_ST_NLM_SHARE,
    DBFS_ST_NLM_UNSHARE,
    DBFS_ST_NLM_FREE_HOST,
    DBFS_ST_NLM_START,
    DBFS_ST_NLM_GRACE_END,
    DBFS_ST_NLM_TAKE,
    DBFS_ST_NLM_GC,
    DBFS_ST_NLM_COUNT,
    /* guarded files (dbfs_xf.c, dbfs_xf_write.c) */
    DBFS_ST_XF_CHAIN_TEXT,
    DBFS_ST_XF_OLD,
    DBFS_ST_XF_WRITE,
    DBFS_ST_XF_WRITE_BEGIN,
    /* transformation links (dbfs_xf_link.c) */
    DBFS_ST_XF_LINK_GET,
    DBFS_ST_XF_LINK_MAP,
    DBFS_ST_XF_LINK_READ,
    DBFS_ST_XF_LINK_READ_SINGLE,
    /* several frontends: tag the session's changes (dbfs_coh.c) */
    DBFS_ST_COH_TAG,
    /* reading snapshots (dbfs_snap.c) */
    DBFS_ST_SNAP_GETATTR,
    DBFS_ST_SNAP_LOOKUP,
    DBFS_ST_SNAP_PARENT,
    DBFS_ST_SNAP_READLINK,
    DBFS_ST_SNAP_READDIR,
    DBFS_ST_SNAP_READDIRPLUS,
    DBFS_ST_SNAP_READ,
    DBFS_ST_SNAP_DIR,
    DBFS_ST_SNAP_LIST,
    DBFS_ST_SNAP_LIST_PLUS,
    DBFS_ST_SNAP_FIND,
    DBFS_ST_NWORKER,
    DBFS_ST_ADM_LOCK = DBFS_ST_NWORKER,
    DBFS_ST_ADM_EXISTS,
    DBFS_ST_ADM_FACTS,
    DBFS_ST_ADM_FS_INSERT,
    DBFS_ST_ADM_ROOT_INSERT,
    DBFS_ST_ADM_SET_DIGEST,
    DBFS_ST_ADM_SET_VERSION,
    DBFS_ST_ADM_SET_THRESHOLD,
    DBFS_ST_ADM_THRESHOLD,
    DBFS_ST_ADM_CITUS,
    /* pgnfs du / find (dbfs_admin.c) */
    DBFS_ST_ADMIN_LOOKUP,
    DBFS_ST_ADMIN_NOJIT,
    DBFS_ST_ADMIN_DU,
    DBFS_ST_ADMIN_FIND,
    /* pgnfs sql --read-only (dbfs_views.c) */
    DBFS_ST_VIEWS_ROLES,
    /* pgnfs fsck (dbfs_fsck.c) */
    DBFS_ST_FSCK_ISOLATION,
    DBFS_ST_FSCK_CHECK,
    /* file locks: listening (dbfs_lock_watch.c), listing (pgnfs locks) */
    DBFS_ST_NLM_LISTEN,
    DBFS_ST_NLM_LIST,
    /* the space guard's reclaim (dbfs_space.c) */
    DBFS_ST_SPACE_LIVE,
    DBFS_ST_SPACE_TOAST,
    /* transformation chains: open, pgnfs xform, fsck (dbfs_xf*.c) */
    DBFS_ST_XF_EPOCH,
    DBFS_ST_XF_KEY_ID,
    DBFS_ST_XF_SET_KEY_ID,
    DBFS_ST_XF_SET,
    DBFS_ST_XF_GET,
    DBFS_ST_XF_FILES,
    DBFS_ST_XF_CHUNKS,
    DBFS_ST_XF_LOCK,
    DBFS_ST_XF_RECHAIN,
    DBFS_ST_XF_STRAYS,
    DBFS_ST_XF_SQL_PROBLEM,
    DBFS_ST_XF_LINK_MAKE,
    DBFS_ST_XF_LINKS,
    /* several frontends (dbfs_front.c, dbfs_coh.c) */
    DBFS_ST_FRONT_LIVE,
    DBFS_ST_FRONT_INSERT,
    DBFS_ST_FRONT_BEAT,
    DBFS_ST_FRONT_DELETE,
    DBFS_ST_FRONT_LIST,
    DBFS_ST_FRONT_TOPOLOGY,
    /* snapshot administration (dbfs_snap_admin.c) */
    DBFS_ST_SNAP_CREATE,
    DBFS_ST_SNAP_DELETE,
    DBFS_ST_SNAP_RECLAIM,
    DBFS_ST_SNAP_PENDING,
    DBFS_ST_SNAP_LIST_ALL,
    DBFS_ST_SNAP_DIFF,
    DBFS_ST_SNAP_TICK,
    DBFS_ST_COH_READ,
    DBFS_ST_COH_TRIM,
    DBFS_ST_COH_ACK,
    DBFS_ST_COH_SOLOS,
    DBFS_ST_COH_JOIN,
    DBFS_ST_COH_EVERYTHING,
    DBFS_ST_COUNT
} dbfs_stmt;

typedef struct {
    const char *name; /* the prepared statement's name */
    const char *sql;
    /* It changes the file system: a batch holding one on a connection in
     * async mode (dbfs_conn_set_async) commits with synchronous_commit
     * off (DBFS_ST_ASYNC_COMMIT). */
    bool changes;
    /* It changes only what no client waits to see on disk (the atime of
     * a READ): its batch commits with synchronous_commit off in either
     * mode, unless the batch also holds a change. */
    bool lazy;
    /* The text on a Citus coordinator, where it differs (NULL: sql). */
    const char *citus;
} dbfs_stmt_def;

extern const dbfs_stmt_def dbfs_stmts[DBFS_ST_COUNT];

/* The text of statement id for a file system on Citus or not. */
static inline const char *dbfs_stmt_sql(dbfs_stmt id, bool citus)
{
    return citus && dbfs_stmts[id].citus ? dbfs_stmts[id].citus : dbfs_stmts[id].sql;
}
/* pgnfs du's and find's statements (dbfs_sql_admin.c). */
extern const char dbfs_sql_admin_du[];
extern const char dbfs_sql_admin_find[];
/* A script that drops every pgnfs object (mkfs with force). */
extern const char dbfs_sql_drop_all[];
/* The space guard's VACUUM: of allfiles (layout single), of everything
 * (layouts with per-file tables). */
extern const char dbfs_sql_vacuum_data[];
extern const char dbfs_sql_vacuum_all[];
/* And the checkpoint after it, which recycles the WAL they wrote. */
extern const char dbfs_sql_checkpoint[];
/* The invalidation triggers (schema/005_frontends.sql) on, or off; each
 * takes the tables' lock only when they are not as wanted already. */
extern const char dbfs_sql_inval_on[];
extern const char dbfs_sql_inval_off[];
/* A frontend's reading session: no statements prepared by name (the log
 * read is prepared after this), LISTEN for servers that join. */
extern const char dbfs_sql_coh_listen[];

/* Attribute columns as every statement returns them, in this order. */
#define DBFS_ATTR_NCOLS 15
/* Columns of a metadata function's row: status, role, attributes. */
#define DBFS_FN_NCOLS (2 + DBFS_ATTR_NCOLS)

/* Roles of metadata function rows (schema type pgnfs_result). */
enum {
    DBFS_ROLE_NONE = 0,
    DBFS_ROLE_OBJ = 1,
    DBFS_ROLE_PRE = 2,
    DBFS_ROLE_POST = 3,
    DBFS_ROLE_PRE2 = 4,
    DBFS_ROLE_POST2 = 5,
    /* An object whose name a REMOVE or RENAME took away (metadata caches):
     * VICTIM its attributes after, when it still exists; GONE its
     * attributes before, when it no longer exists. */
    DBFS_ROLE_VICTIM = 6,
    DBFS_ROLE_GONE = 7,
    DBFS_ROLE_COUNT = 8
};

#endif /* PGNFS_DBFS_SQL_H */
