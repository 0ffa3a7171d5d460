/*
 * dbfs_readdir.c -- READDIR and READDIRPLUS (RFC 1813 3.3.16, 3.3.17):
 * a page from the listing cache when it holds it (dbfs_dirlist.c), else
 * from the database in one round trip.
 *
 * NOTES
 *   The database path is one batch: the directory with its parent
 *   (DBFS_ST_PARENT), the entries after the cookie (with their attributes
 *   for plus, from the same JOIN), and, for the first page of a listing
 *   when the listing cache is on, the whole listing for that cache. What
 *   it read is cached (attributes, names for plus, the listing). The
 *   permission check happens here, with dbfs_perm_allows(), on the
 *   directory's attributes as read.
 *
 *   Entries and their names are malloc'd; dbfs_dirents_free() releases
 *   them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbfs_cache.h"
#include "dbfs_dirent.h"
#include "dbfs_dirlist.h"
#include "dbfs_perm.h"
#include "dbfs_snap_int.h"
#include "dbfs_wb.h"

/* One READDIR that goes to the database. */
typedef struct {
    dbfs_conn *c;
    const dbfs_cred *cred;
    dbfs_fh dir;
    bool plus;
    bool fetch;     /* also the whole listing, for the listing cache */
    dbfs_dots dots; /* the dots this page lists */
    uint32_t want;  /* named entries this page may hold */
    dbfs_params pd, pe, pl;
    PGresult *rd, *re, *rl; /* directory and parent, entries, listing */
    dbfs_attr d, parent;
} dbfs_rdd;

/* The parameters of the batch's three statements. */
static void dbfs_rdd_params(dbfs_rdd *q, uint64_t cookie)
{
    dbfs_params_init(&q->pd);
    dbfs_param_i8(&q->pd, (int64_t)q->dir.ino);
    dbfs_param_i4(&q->pd, (int32_t)q->dir.gen);
    dbfs_params_init(&q->pe);
    dbfs_param_i8(&q->pe, (int64_t)q->dir.ino);
    /* Cookies are positive int8; a larger one lies past every entry. */
    dbfs_param_i8(&q->pe,
                  cookie > (uint64_t)INT64_MAX
                      ? INT64_MAX
                      : (int64_t)(cookie > DBFS_COOKIE_DOTDOT ? cookie : DBFS_COOKIE_DOTDOT));
    dbfs_param_i8(&q->pe, (int64_t)q->want + 1);
    dbfs_params_init(&q->pl);
    dbfs_param_i8(&q->pl, (int64_t)q->dir.ino);
    dbfs_param_i4(&q->pl, (int32_t)q->dir.gen);
    dbfs_param_i8(&q->pl, dbfs_dirlist_limit(q->c->fs));
}

/* The batch (dbfs_batch_run's fn). */
static int dbfs_rdd_queue(dbfs_conn *c, void *arg)
{
    dbfs_rdd *q = arg;

    PQclear(q->rd);
    PQclear(q->re);
    PQclear(q->rl);
    q->rd = q->re = q->rl = NULL;
    dbfs_batch_add(c, DBFS_ST_PARENT, &q->pd);
    dbfs_batch_add(c, q->plus ? DBFS_ST_READDIRPLUS : DBFS_ST_READDIR, &q->pe);
    if (q->fetch)
        dbfs_batch_add(c, DBFS_ST_LISTING, &q->pl);
    dbfs_batch_sync(c);
    dbfs_batch_result(c, &q->rd);
    dbfs_batch_result(c, &q->re);
    if (q->fetch)
        return dbfs_batch_result(c, &q->rl);
    return 0;
}

/* The directory and its parent, from the first statement's row: the
 * directory exists (-ESTALE), is one (-ENOTDIR), the caller may read it
 * (-EACCES). *dir_attr is filled when it was read. */
static int dbfs_rdd_dir(dbfs_rdd *q, dbfs_cache_op *op, dbfs_attr_opt *dir_attr)
{
    if (PQntuples(q->rd) == 0) {
        dbfs_cache_put_gone(op, q->dir);
        return -ESTALE;
    }
    dbfs_get_attr(q->rd, 0, 0, &q->d);
    dbfs_cache_put_attr(op, &q->d);
    dbfs_attr_opt_set(dir_attr, &q->d);
    if (q->d.type != DBFS_DIR)
        return -ENOTDIR;
    if (!dbfs_perm_allows(&q->d, q->cred, DBFS_MAY_READ))
        return -EACCES;
    if (dbfs_get_null(q->rd, 0, DBFS_ATTR_NCOLS)) {
        q->parent = q->d; /* the root is its own parent */
    } else {
        dbfs_get_attr(q->rd, 0, DBFS_ATTR_NCOLS, &q->parent);
        dbfs_cache_put_attr(op, &q->parent);
    }
    return 0;
}

/* The page: the dots, then up to want named entries from the second
 * statement's rows (READDIRPLUS read names and attributes in one
 * snapshot: both are cached). Returns 0 or -ENOMEM; *got entries. */
static int dbfs_rdd_entries(dbfs_rdd *q, dbfs_cache_op *op, dbfs_dirent *e, size_t *got)
{
    const int rows = PQntuples(q->re);
    const size_t take = (size_t)rows < q->want ? (size_t)rows : q->want;
    int rc = dbfs_dirent_dots(e, got, q->dots, &q->d, q->parent.ino, &q->parent, q->plus);

    for (size_t i = 0; rc == 0 && i < take; i++) {
        dbfs_attr a;

        if (q->plus)
            dbfs_get_attr(q->re, (int)i, 3, &a);
        rc = dbfs_dirent_add(e, got, (uint64_t)dbfs_get_i8(q->re, (int)i, 0),
                             (uint64_t)dbfs_get_i8(q->re, (int)i, 1), PQgetvalue(q->re, (int)i, 2),
                             (size_t)PQgetlength(q->re, (int)i, 2), q->plus ? &a : NULL);
        if (rc == 0 && q->plus) {
            dbfs_cache_put_attr(op, &a);
            dbfs_cache_put_name(op, q->dir.ino, e[*got - 1].name, &a);
            dbfs_wb_overlay(q->c->fs, &e[*got - 1].attr);
        }
    }
    return rc;
}

/* The READDIR against the database (the caches could not answer). */
static int dbfs_rdd_run(dbfs_rdd *q, dbfs_dirent **entries, size_t *n, bool *eof,
                        dbfs_attr_opt *dir_attr)
{
    dbfs_cache_op op;
    dbfs_dirent *e = NULL;
    size_t got = 0;
    int rc;

    dbfs_cache_read_begin(q->c->fs, &op);
    rc = dbfs_batch_run(q->c, dbfs_rdd_queue, q);
    if (rc == 0)
        rc = dbfs_rdd_dir(q, &op, dir_attr);
    if (rc == 0) {
        size_t rows = (size_t)PQntuples(q->re);

        e = calloc((size_t)q->dots.n + (rows < q->want ? rows : q->want) + 1, sizeof *e);
        rc = e ? dbfs_rdd_entries(q, &op, e, &got) : -ENOMEM;
    }
    if (rc == 0) {
        if (q->fetch)
            dbfs_dirlist_fill(q->c->fs, q->dir, q->rl);
        /* Not at the end while dots were held back or more rows came than
         * asked for. */
        *eof = q->dots.n == q->dots.left && (uint32_t)PQntuples(q->re) <= q->want;
        *entries = e;
        *n = got;
        e = NULL;
    }
    dbfs_cache_end(&op);
    dbfs_dirents_free(e, got);
    return rc;
}

/*
 * dbfs_readdir -- see dbfs.h. From the caches when they hold the page
 * (dbfs_dirlist.c); else one round trip (see the NOTES above). "." and
 * ".." have cookies 1 and 2; entries have their naming.cookie (3 and up,
 * given when the name was made, so stable while it exists). A cookie that
 * names no entry resumes after its position. Errors: -ESTALE, -ENOTDIR,
 * -EACCES (needs read permission), -ENOMEM, -EAGAIN, -EIO; *dir_attr is
 * filled whenever the directory was read.
 */
int dbfs_readdir(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, uint64_t cookie,
                 uint32_t max_entries, bool plus, dbfs_dirent **entries, size_t *n, bool *eof,
                 dbfs_attr_opt *dir_attr)
{
    dbfs_rdd q = {.c = c, .cred = cred, .dir = dir, .plus = plus};
    int rc;

    if (dir.snap != 0)
        return dbfs_sn_readdir(c, cred, dir, cookie, max_entries, plus, entries, n, eof, dir_attr);
    *entries = NULL;
    *n = 0;
    *eof = false;
    dbfs_attr_opt_set(dir_attr, NULL);
    if (dbfs_dirlist_serve(c, cred, dir, cookie, max_entries, plus, entries, n, eof, dir_attr,
                           &q.fetch) == 0)
        return 0;
    q.dots = dbfs_dots_after(cookie, max_entries);
    q.want = max_entries - q.dots.n;
    dbfs_rdd_params(&q, cookie);
    rc = dbfs_rdd_run(&q, entries, n, eof, dir_attr);
    PQclear(q.rd);
    PQclear(q.re);
    PQclear(q.rl);
    return rc;
}
