/*
 * dbfs_fetch.c -- attributes by handle, through the stat cache
 * (dbfs_fetch.h).
 *
 * NOTES
 *   Every PGresult is cleared here or handed to the caller. Nothing is
 *   kept but what the stat cache copies.
 */
#include <errno.h>

#include "dbfs_cache.h"
#include "dbfs_fetch.h"
#include "dbfs_wire.h"

/* dbfs_fetch_by_handle -- see dbfs_fetch.h. */
int dbfs_fetch_by_handle(dbfs_conn *c, dbfs_stmt id, dbfs_fh fh, PGresult **res)
{
    dbfs_params p;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)fh.ino);
    dbfs_param_i4(&p, (int32_t)fh.gen);
    rc = dbfs_exec(c, id, &p, res);
    if (rc == 0 && PQntuples(*res) == 0) {
        PQclear(*res);
        *res = NULL;
        rc = -ESTALE;
    }
    return rc;
}

/* dbfs_fetch_attr -- see dbfs_fetch.h. */
int dbfs_fetch_attr(dbfs_conn *c, dbfs_fh fh, dbfs_attr *out)
{
    PGresult *r = NULL;
    dbfs_cache_op op;
    dbfs_attr a;
    int rc = dbfs_cache_attr(c->fs, fh, &a);

    if (rc != -ENOENT) {
        if (rc == 0 && out)
            *out = a;
        return rc;
    }
    dbfs_cache_read_begin(c->fs, &op);
    rc = dbfs_fetch_by_handle(c, DBFS_ST_GETATTR, fh, &r);
    if (rc == 0) {
        dbfs_get_attr(r, 0, 0, &a);
        dbfs_cache_put_attr(&op, &a);
        if (out)
            *out = a;
    } else if (rc == -ESTALE) {
        dbfs_cache_put_gone(&op, fh);
    }
    dbfs_cache_end(&op);
    PQclear(r);
    return rc;
}
