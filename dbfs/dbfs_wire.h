/*
 * dbfs_wire.h -- values to and from PostgreSQL in its binary format:
 * statement parameters (dbfs_params), result columns, the rows of the
 * schema's metadata functions parsed into attributes by role, and small
 * helpers every dbfs file uses (the clock, name checks).
 *
 * NOTES
 *   dbfs_params points into itself: fill it and pass it without copying
 *   it. Nothing here allocates, connects or logs, but for a malformed
 *   function answer (dbfs_fnres_parse).
 */
#ifndef PGNFS_DBFS_WIRE_H
#define PGNFS_DBFS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "dbfs.h"
#include "dbfs_sql.h"

/* --- binary parameters ------------------------------------------------- */

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

/* --- binary results ---------------------------------------------------- */

bool dbfs_get_null(const PGresult *r, int row, int col);
int16_t dbfs_get_i2(const PGresult *r, int row, int col);
int32_t dbfs_get_i4(const PGresult *r, int row, int col);
int64_t dbfs_get_i8(const PGresult *r, int row, int col);
/* DBFS_ATTR_NCOLS attribute columns starting at col. */
void dbfs_get_attr(const PGresult *r, int row, int col, dbfs_attr *a);
/* The target of symbolic link a, in column col of row 0, into *target
 * (malloc'd, NUL-terminated). Returns 0, -EINVAL (a is no link, or the
 * column is NULL) or -ENOMEM. */
int dbfs_get_target(const PGresult *r, int col, const dbfs_attr *a, char **target);

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

/* Fill *w (may be NULL) from the attributes before and after. */
void dbfs_wcc_of(dbfs_wcc *w, const dbfs_attr *pre, const dbfs_attr *post);

/* --- small shared helpers ---------------------------------------------- */

/* Nanoseconds in a second and in a day (times are int8 nanoseconds). */
#define DBFS_NS_PER_SEC INT64_C(1000000000)
#define DBFS_NS_PER_DAY (86400 * DBFS_NS_PER_SEC)

/* The server's clock in nanoseconds since the epoch. */
int64_t dbfs_now_ns(void);

/* Check a name for a call: 0, -ENAMETOOLONG (over DBFS_NAME_MAX bytes),
 * -EINVAL (contains '/'), or `if_empty` for "". "." and ".." pass; callers
 * decide what they mean. */
int dbfs_name_check(const char *name, int if_empty);
bool dbfs_name_is_dot(const char *name);
bool dbfs_name_is_dotdot(const char *name);

#endif /* PGNFS_DBFS_WIRE_H */
