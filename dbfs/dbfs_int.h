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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "dbfs.h"

struct store_ops;

/* An internal status, never returned by the API: a serialization failure
 * or deadlock; the whole operation is retried (dbfs_retry_wait). */
#define DBFS_ERETRY (-100000)
/* Attempts of an operation that keeps failing with DBFS_ERETRY. */
#define DBFS_RETRIES 5

struct dbfs {
    char *conninfo;
    bool relatime;
    char *space_path; /* NULL: none */
    dbfs_info info;
    const struct store_ops *store;
};

/* The statements of dbfs_sql.c. Those before DBFS_ST_NWORKER are prepared
 * on every worker connection; the others on mkfs/open connections. */
typedef enum {
    DBFS_ST_SESSION,
    DBFS_ST_GETATTR,
    DBFS_ST_LOOKUP,
    DBFS_ST_PARENT,
    DBFS_ST_READLINK,
    DBFS_ST_READDIR,
    DBFS_ST_READDIRPLUS,
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
    DBFS_ST_NWORKER,
    DBFS_ST_ADM_LOCK = DBFS_ST_NWORKER,
    DBFS_ST_ADM_EXISTS,
    DBFS_ST_ADM_FACTS,
    DBFS_ST_ADM_FS_INSERT,
    DBFS_ST_ADM_ROOT_INSERT,
    DBFS_ST_ADM_SET_DIGEST,
    DBFS_ST_ADM_SET_VERSION,
    DBFS_ST_COUNT
} dbfs_stmt;

typedef struct {
    const char *name; /* the prepared statement's name */
    const char *sql;
} dbfs_stmt_def;

extern const dbfs_stmt_def dbfs_stmts[DBFS_ST_COUNT];
/* A script that drops every pgnfs object (mkfs with force). */
extern const char dbfs_sql_drop_all[];

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
    DBFS_ROLE_COUNT = 6
};

/* --- binary parameters (dbfs_wire.c) ------------------------------------ */

#define DBFS_PARAMS_MAX 24

typedef struct {
    int n;
    const char *values[DBFS_PARAMS_MAX];
    int lengths[DBFS_PARAMS_MAX];
    int formats[DBFS_PARAMS_MAX];
    unsigned char fixed[DBFS_PARAMS_MAX][8];
    unsigned char groups[20 + 12 * DBFS_NGROUPS_MAX];
} dbfs_params;

void dbfs_params_init(dbfs_params *p);
void dbfs_param_i2(dbfs_params *p, int16_t v);
void dbfs_param_i4(dbfs_params *p, int32_t v);
void dbfs_param_i8(dbfs_params *p, int64_t v);
void dbfs_param_bool(dbfs_params *p, bool v);
void dbfs_param_null(dbfs_params *p);
/* A bytea (or text) value; data must stay valid until the batch is sent. */
void dbfs_param_bytes(dbfs_params *p, const void *data, size_t len);
/* Three parameters: uid int8, gid int8, groups int8[]. */
void dbfs_param_cred(dbfs_params *p, const dbfs_cred *cred);

/* --- binary results (dbfs_wire.c) --------------------------------------- */

bool dbfs_get_null(const PGresult *r, int row, int col);
int16_t dbfs_get_i2(const PGresult *r, int row, int col);
int32_t dbfs_get_i4(const PGresult *r, int row, int col);
int64_t dbfs_get_i8(const PGresult *r, int row, int col);
/* DBFS_ATTR_NCOLS attribute columns starting at col. */
void dbfs_get_attr(const PGresult *r, int row, int col, dbfs_attr *a);

/* A metadata function's answer, parsed (dbfs_fnres_parse). */
typedef struct {
    int status; /* 0 or a negative errno */
    bool have[DBFS_ROLE_COUNT];
    dbfs_attr attr[DBFS_ROLE_COUNT];
} dbfs_fnres;

/*
 * dbfs_fnres_parse -- read the rows of a metadata function (status, role,
 * attributes). Returns 0 (out->status holds the operation's status), or
 * -EIO if the rows are malformed (logged).
 */
int dbfs_fnres_parse(const PGresult *r, const char *what, dbfs_fnres *out);

/* Fill *w from roles pre and post of f (either may be missing). w may be
 * NULL. */
void dbfs_wcc_from(dbfs_wcc *w, const dbfs_fnres *f, int pre, int post);

/* Map a Linux errno number (as the SQL functions return) to -errno here;
 * unknown numbers are -EIO (logged). */
int dbfs_errno_from_linux(int linux_errno);

/* --- batches on a worker connection (dbfs_conn.c) ------------------------ */

struct dbfs_conn {
    dbfs *fs;
    PGconn *pg;
    uint64_t round_trips;
    bool ready; /* connected, in pipeline mode, statements prepared */
    /* The current batch: the statements queued, how many results were
     * taken, and the first error (0 if none). */
    dbfs_stmt *queued;
    size_t nqueued, cap, ntaken;
    bool synced;
    int err;
};

/* Start a batch; reconnects a broken connection first. Returns 0 or
 * -EAGAIN (no connection; logged). */
int dbfs_batch_begin(dbfs_conn *c);
/* Queue statement id. Failures are remembered and returned by
 * dbfs_batch_end(); the return value says whether it was queued (0). */
int dbfs_batch_add(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p);
/* End the queue with a Sync: one round trip. */
int dbfs_batch_sync(dbfs_conn *c);
/*
 * dbfs_batch_result -- the result of the next queued statement, in order.
 * Returns 0 and *res (tuples or command OK; caller clears), or the batch's
 * first error with *res NULL (also for statements skipped after an error).
 */
int dbfs_batch_result(dbfs_conn *c, PGresult **res);
/* Drain the rest of the batch; returns its first error (0 if none) and
 * resets the connection if it broke. */
int dbfs_batch_end(dbfs_conn *c);

/*
 * dbfs_exec -- run one statement as its own batch (one round trip),
 * retrying serialization failures and deadlocks. Returns 0 and *res
 * (caller clears) or a negative errno with *res NULL.
 */
int dbfs_exec(dbfs_conn *c, dbfs_stmt id, const dbfs_params *p, PGresult **res);

/* Before attempt `attempt` (1, 2, ...) of an operation that failed with
 * DBFS_ERETRY: sleeps a short jittered while and returns true, or returns
 * false when the attempts are used up. */
bool dbfs_retry_wait(int attempt);

/* --- small shared helpers (dbfs_wire.c) ---------------------------------- */

/* The server's clock in nanoseconds since the epoch. */
int64_t dbfs_now_ns(void);

/* Check a name for a call: 0, -ENAMETOOLONG (over DBFS_NAME_MAX bytes),
 * -EINVAL (contains '/'), or `if_empty` for "". "." and ".." pass; callers
 * decide what they mean. */
int dbfs_name_check(const char *name, int if_empty);
bool dbfs_name_is_dot(const char *name);
bool dbfs_name_is_dotdot(const char *name);

#endif /* PGNFS_DBFS_INT_H */
