/*
 * dbfs_dirlist.c -- READDIR and READDIRPLUS from the listing cache
 * (cache/cache_dir.h): a page served from memory when the directory's
 * attributes are in the stat cache and a listing of its current change
 * counter is cached (for READDIRPLUS, every entry's attributes too); and
 * the filling of that cache from the database, by the first page of a
 * listing (cookie 0), in the same round trip as the page itself.
 *
 * NOTES
 *   Anything unusual (an error to answer, an attribute not cached, memory)
 *   falls back to the database path in dbfs_readdir.c, which answers as if
 *   there were no cache; the pages served here are the ones it would send.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbfs_cache.h"
#include "dbfs_dirent.h"
#include "dbfs_dirlist.h"
#include "dbfs_perm.h"
#include "dbfs_wb.h"
#include "dbfs_wire.h"

/*
 * dbfs_dirlist_serve -- see dbfs_dirlist.h.
 */
int dbfs_dirlist_serve(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, uint64_t cookie,
                       uint32_t max_entries, bool plus, dbfs_dirent **entries, size_t *n, bool *eof,
                       dbfs_attr_opt *dir_attr, bool *fetch)
{
    cache_dir *cd = dbfs_cache_dir(c->fs);
    dbfs_dots dots = dbfs_dots_after(cookie, max_entries);
    uint32_t want = max_entries - dots.n;
    dbfs_attr d, parent;
    cache_dir_page pg;
    dbfs_dirent *e;
    size_t got = 0, take;
    bool more;
    int rc;

    *fetch = cd != NULL && cookie == 0;
    if (!cd || dbfs_cache_attr(c->fs, dir, &d) != 0 || d.type != DBFS_DIR ||
        !dbfs_perm_allows(&d, cred, DBFS_MAY_READ))
        return -ENOENT;
    rc = cache_dir_slice(cd, (cache_dir_key){.ino = dir.ino, .gen = dir.gen, .change = d.change},
                         cookie > DBFS_COOKIE_DOTDOT ? cookie : DBFS_COOKIE_DOTDOT, want + 1, &pg);
    if (rc == -EFBIG)
        *fetch = false;
    if (rc != 0)
        return -ENOENT;
    parent = d;
    if (plus && dots.first <= DBFS_COOKIE_DOTDOT && dots.first + dots.n > DBFS_COOKIE_DOTDOT &&
        pg.parent_ino != dir.ino &&
        dbfs_cache_attr(c->fs, (dbfs_fh){.ino = pg.parent_ino, .gen = pg.parent_gen}, &parent) !=
            0) {
        cache_dir_page_free(&pg);
        return -ENOENT;
    }
    take = pg.n < want ? pg.n : want;
    e = calloc((size_t)dots.n + take + 1, sizeof *e);
    if (!e) {
        cache_dir_page_free(&pg);
        return -ENOENT;
    }
    rc = dbfs_dirent_dots(e, &got, dots, &d, pg.parent_ino, &parent, plus);
    for (size_t i = 0; rc == 0 && i < take; i++) {
        const cache_dir_ent *ce = &pg.ents[i];
        dbfs_attr a;

        if (plus && dbfs_cache_attr(c->fs, (dbfs_fh){.ino = ce->ino, .gen = ce->gen}, &a) != 0) {
            rc = -ENOENT; /* not cached: the database path reads them all */
            break;
        }
        rc = dbfs_dirent_add(e, &got, ce->cookie, ce->ino, ce->name, ce->len, plus ? &a : NULL);
        if (rc == 0 && plus)
            dbfs_wb_overlay(c->fs, &e[got - 1].attr);
    }
    more = pg.n > want;
    cache_dir_page_free(&pg);
    if (rc != 0) {
        dbfs_dirents_free(e, got);
        return -ENOENT;
    }
    dbfs_attr_opt_set(dir_attr, &d);
    *eof = dots.n == dots.left && !more;
    *entries = e;
    *n = got;
    return 0;
}

/*
 * dbfs_dirlist_limit -- see dbfs_dirlist.h.
 */
int64_t dbfs_dirlist_limit(dbfs *fs)
{
    cache_dir *cd = dbfs_cache_dir(fs);

    return cd ? (int64_t)cache_dir_max_entries(cd) + 1 : 0;
}

/*
 * dbfs_dirlist_fill -- see dbfs_dirlist.h. Rows: change, parent inode and
 * generation, then cookie, inode, generation and name of an entry (NULL
 * for an empty directory); none for a directory that is gone.
 */
void dbfs_dirlist_fill(dbfs *fs, dbfs_fh dir, const PGresult *r)
{
    cache_dir *cd = dbfs_cache_dir(fs);
    int rows = r ? PQntuples(r) : 0;
    cache_dir_key k = {.ino = dir.ino, .gen = dir.gen};
    cache_dir_ent *ents;
    size_t n = 0;

    if (!cd || rows == 0 || dbfs_get_null(r, 0, 1))
        return;
    k.change = (uint64_t)dbfs_get_i8(r, 0, 0);
    if ((size_t)rows > cache_dir_max_entries(cd)) {
        cache_dir_put_large(cd, k);
        return;
    }
    ents = calloc((size_t)rows, sizeof *ents);
    if (!ents)
        return;
    for (int i = 0; i < rows; i++) {
        if (dbfs_get_null(r, i, 3))
            continue; /* the one row of an empty directory */
        if (dbfs_get_null(r, i, 5)) {
            free(ents); /* a name without a file: fsck's business, not cached */
            return;
        }
        ents[n++] = (cache_dir_ent){.cookie = (uint64_t)dbfs_get_i8(r, i, 3),
                                    .ino = (uint64_t)dbfs_get_i8(r, i, 4),
                                    .gen = (uint32_t)dbfs_get_i4(r, i, 5),
                                    .name = PQgetvalue(r, i, 6),
                                    .len = (uint32_t)PQgetlength(r, i, 6)};
    }
    (void)cache_dir_put(cd, k, (uint64_t)dbfs_get_i8(r, 0, 1), (uint32_t)dbfs_get_i4(r, 0, 2), ents,
                        n);
    free(ents);
}
