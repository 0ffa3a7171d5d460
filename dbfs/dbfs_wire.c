/*
 * dbfs_wire.c -- binary parameters and results in PostgreSQL's network
 * byte order, the parsing of the metadata functions' rows, and small
 * helpers every dbfs file uses (clock, names).
 *
 * NOTES
 *   dbfs_params holds the bytes of fixed-size values inside itself; its
 *   value pointers point there (or to caller memory for bytea). Nothing
 *   here allocates. Result getters read binary columns and return 0 for a
 *   NULL or a column of unexpected width (the statements fix the types, so
 *   that would be a schema mismatch).
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include <glib.h>

#include "dbfs_err.h"
#include "dbfs_wire.h"

/* Type OIDs, fixed in PostgreSQL's catalog (pg_type.dat). */
#define DBFS_INT8OID 20

static void dbfs_put_be(unsigned char *out, uint64_t v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        out[i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
}

static uint64_t dbfs_take_be(const unsigned char *in, int width)
{
    uint64_t v = 0;

    for (int i = 0; i < width; i++)
        v = (v << 8) | in[i];
    return v;
}

/* dbfs_params_init -- an empty parameter list. The dbfs_param_* calls
 * below append one parameter each (see dbfs_wire.h); too many is a bug
 * (assert). */
void dbfs_params_init(dbfs_params *p)
{
    p->n = 0;
}

static void dbfs_param_fixed(dbfs_params *p, uint64_t v, int width)
{
    assert(p->n < DBFS_PARAMS_MAX);
    dbfs_put_be(p->fixed[p->n], v, width);
    p->values[p->n] = (const char *)p->fixed[p->n];
    p->lengths[p->n] = width;
    p->formats[p->n] = 1;
    p->n++;
}

/* dbfs_param_i2 -- append an int2 parameter. Cannot fail. */
void dbfs_param_i2(dbfs_params *p, int16_t v)
{
    dbfs_param_fixed(p, (uint16_t)v, 2);
}

/* dbfs_param_i4 -- append an int4 parameter. Cannot fail. */
void dbfs_param_i4(dbfs_params *p, int32_t v)
{
    dbfs_param_fixed(p, (uint32_t)v, 4);
}

/* dbfs_param_i8 -- append an int8 parameter. Cannot fail. */
void dbfs_param_i8(dbfs_params *p, int64_t v)
{
    dbfs_param_fixed(p, (uint64_t)v, 8);
}

/* dbfs_param_bool -- append a bool parameter. Cannot fail. */
void dbfs_param_bool(dbfs_params *p, bool v)
{
    dbfs_param_fixed(p, v ? 1 : 0, 1);
}

/* dbfs_param_null -- append a NULL parameter. Cannot fail. */
void dbfs_param_null(dbfs_params *p)
{
    assert(p->n < DBFS_PARAMS_MAX);
    p->values[p->n] = NULL;
    p->lengths[p->n] = 0;
    p->formats[p->n] = 1;
    p->n++;
}

/* dbfs_param_bytes -- append a bytea (or text) parameter pointing at data,
 * which the caller keeps valid until the statement is sent. Cannot fail. */
void dbfs_param_bytes(dbfs_params *p, const void *data, size_t len)
{
    assert(p->n < DBFS_PARAMS_MAX && len <= INT32_MAX);
    p->values[p->n] = len ? (const char *)data : "";
    p->lengths[p->n] = (int)len;
    p->formats[p->n] = 1;
    p->n++;
}

/* dbfs_param_cred -- append uid, gid and the groups array (int8[] in the
 * array binary format, built inside p). Cannot fail. */
void dbfs_param_cred(dbfs_params *p, const dbfs_cred *cred)
{
    uint32_t n = cred->ngroups < DBFS_NGROUPS_MAX ? cred->ngroups : DBFS_NGROUPS_MAX;
    unsigned char *a = p->groups;
    size_t len;

    dbfs_param_i8(p, cred->uid);
    dbfs_param_i8(p, cred->gid);
    /* Array binary format: ndim, has-nulls flag, element type, then per
     * dimension its length and lower bound, then (length, value) pairs. */
    dbfs_put_be(a, n ? 1 : 0, 4);
    dbfs_put_be(a + 4, 0, 4);
    dbfs_put_be(a + 8, DBFS_INT8OID, 4);
    len = 12;
    if (n) {
        dbfs_put_be(a + 12, n, 4);
        dbfs_put_be(a + 16, 1, 4);
        len = 20;
        for (uint32_t i = 0; i < n; i++) {
            dbfs_put_be(a + len, 8, 4);
            dbfs_put_be(a + len + 4, cred->groups[i], 8);
            len += 12;
        }
    }
    dbfs_param_bytes(p, a, len);
}

/* dbfs_get_null and dbfs_get_i2/i4/i8 -- read a binary column (see
 * dbfs_wire.h). */
bool dbfs_get_null(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col);
}

static uint64_t dbfs_get_fixed(const PGresult *r, int row, int col, int width)
{
    if (PQgetisnull(r, row, col) || PQgetlength(r, row, col) != width)
        return 0;
    return dbfs_take_be((const unsigned char *)PQgetvalue(r, row, col), width);
}

/* dbfs_get_i2 -- an int2 column (0 for NULL). Cannot fail. */
int16_t dbfs_get_i2(const PGresult *r, int row, int col)
{
    return (int16_t)(uint16_t)dbfs_get_fixed(r, row, col, 2);
}

/* dbfs_get_i4 -- an int4 column (0 for NULL). Cannot fail. */
int32_t dbfs_get_i4(const PGresult *r, int row, int col)
{
    return (int32_t)(uint32_t)dbfs_get_fixed(r, row, col, 4);
}

/* dbfs_get_i8 -- an int8 column (0 for NULL). Cannot fail. */
int64_t dbfs_get_i8(const PGresult *r, int row, int col)
{
    return (int64_t)dbfs_get_fixed(r, row, col, 8);
}

/* dbfs_get_attr -- DBFS_ATTR_NCOLS columns from col into *a. */
void dbfs_get_attr(const PGresult *r, int row, int col, dbfs_attr *a)
{
    memset(a, 0, sizeof *a);
    a->ino = (uint64_t)dbfs_get_i8(r, row, col + 0);
    a->gen = (uint32_t)dbfs_get_i4(r, row, col + 1);
    a->type = (dbfs_type)dbfs_get_i2(r, row, col + 2);
    a->mode = (uint32_t)dbfs_get_i4(r, row, col + 3) & 07777;
    a->nlink = (uint32_t)dbfs_get_i4(r, row, col + 4);
    a->uid = (uint32_t)dbfs_get_i8(r, row, col + 5);
    a->gid = (uint32_t)dbfs_get_i8(r, row, col + 6);
    a->size = (uint64_t)dbfs_get_i8(r, row, col + 7);
    a->rdev_major = (uint32_t)dbfs_get_i4(r, row, col + 8);
    a->rdev_minor = (uint32_t)dbfs_get_i4(r, row, col + 9);
    a->atime_ns = dbfs_get_i8(r, row, col + 10);
    a->mtime_ns = dbfs_get_i8(r, row, col + 11);
    a->ctime_ns = dbfs_get_i8(r, row, col + 12);
    a->change = (uint64_t)dbfs_get_i8(r, row, col + 13);
    /* Regular files: the data bytes stored (fileatt.used). Others hold no
     * chunks; their size (a symbolic link's target) is what they occupy. */
    a->used = a->type == DBFS_REG ? (uint64_t)dbfs_get_i8(r, row, col + 14) : a->size;
}

/* dbfs_get_target -- see dbfs_wire.h. */
int dbfs_get_target(const PGresult *r, int col, const dbfs_attr *a, char **target)
{
    size_t len;

    if (a->type != DBFS_LNK || dbfs_get_null(r, 0, col))
        return -EINVAL;
    len = (size_t)PQgetlength(r, 0, col);
    *target = malloc(len + 1);
    if (!*target)
        return -ENOMEM;
    memcpy(*target, PQgetvalue(r, 0, col), len);
    (*target)[len] = 0;
    return 0;
}

/* dbfs_fnres_parse -- see dbfs_wire.h. */
int dbfs_fnres_parse(const PGresult *r, const char *what, dbfs_fnres *out)
{
    int rows = PQntuples(r);
    int status = -1;

    memset(out, 0, sizeof *out);
    if (PQnfields(r) != DBFS_FN_NCOLS || rows < 1)
        goto bad;
    for (int i = 0; i < rows; i++) {
        int st = dbfs_get_i4(r, i, 0);
        int role = dbfs_get_i2(r, i, 1);

        if (st < 0 || (status >= 0 && st != status) || role < 0 || role >= DBFS_ROLE_COUNT)
            goto bad;
        status = st;
        if (role != DBFS_ROLE_NONE) {
            dbfs_get_attr(r, i, 2, &out->attr[role]);
            out->have[role] = true;
        }
    }
    out->status = status ? dbfs_errno_from_linux(status) : 0;
    return 0;
bad:
    g_warning("%s: the database function returned malformed rows (%d rows, %d columns); is the "
              "schema current?",
              what, rows, PQnfields(r));
    return -EIO;
}

/* dbfs_wcc_from -- see dbfs_wire.h. */
void dbfs_wcc_from(dbfs_wcc *w, const dbfs_fnres *f, int pre, int post)
{
    if (!w)
        return;
    memset(w, 0, sizeof *w);
    if (f->have[pre]) {
        w->have_pre = true;
        w->pre_size = f->attr[pre].size;
        w->pre_mtime_ns = f->attr[pre].mtime_ns;
        w->pre_ctime_ns = f->attr[pre].ctime_ns;
    }
    if (f->have[post]) {
        w->have_post = true;
        w->post = f->attr[post];
    }
}

/* dbfs_wcc_of -- see dbfs_wire.h. */
void dbfs_wcc_of(dbfs_wcc *w, const dbfs_attr *pre, const dbfs_attr *post)
{
    if (!w)
        return;
    w->have_pre = w->have_post = true;
    w->pre_size = pre->size;
    w->pre_mtime_ns = pre->mtime_ns;
    w->pre_ctime_ns = pre->ctime_ns;
    w->post = *post;
}

/* dbfs_now_ns -- CLOCK_REALTIME in nanoseconds. Cannot fail. */
int64_t dbfs_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * DBFS_NS_PER_SEC + ts.tv_nsec;
}

/* dbfs_name_check -- see dbfs_wire.h. */
int dbfs_name_check(const char *name, int if_empty)
{
    size_t len;

    if (!name || !*name)
        return if_empty;
    len = strnlen(name, DBFS_NAME_MAX + 1);
    if (len > DBFS_NAME_MAX)
        return -ENAMETOOLONG;
    if (memchr(name, '/', len))
        return -EINVAL;
    return 0;
}

/* dbfs_name_is_dot -- is name "."? Cannot fail. */
bool dbfs_name_is_dot(const char *name)
{
    return strcmp(name, ".") == 0;
}

/* dbfs_name_is_dotdot -- is name ".."? Cannot fail. */
bool dbfs_name_is_dotdot(const char *name)
{
    return strcmp(name, "..") == 0;
}
