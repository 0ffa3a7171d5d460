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
 *   falls back to the database path in dbfs_names.c, which answers as if
 *   there were no cache; the pages served here are the ones it would send.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbfs_int.h"

/*
 * dbfs_dirlist_serve -- see dbfs_int.h.
 */
int dbfs_dirlist_serve(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh dir, uint64_t cookie,
                       uint32_t max_entries, bool plus, dbfs_dirent **entries, size_t *n, bool *eof,
                       dbfs_attr_opt *dir_attr, bool *fetch)
{
    cache_dir *cd = dbfs_cache_dir(c->fs);
    uint32_t first_dot = cookie == 0 ? 1 : cookie == 1 ? 2 : 3;
    uint32_t dots_left = 3 - first_dot, ndots = dots_left, want;
    dbfs_attr d, parent;
    cache_dir_page pg;
    dbfs_dirent *e;
    size_t got = 0, take;
    bool more;
    int rc;

    *fetch = cd != NULL && cookie == 0;
    if (!cd || dbfs_cache_attr(c->fs, dir, &d) != 0 || d.type != DBFS_DIR ||
        !dbfs_perm_allows(&d, cred, 4))
        return -ENOENT;
    if (ndots > max_entries)
        ndots = max_entries;
    want = max_entries - ndots;
    rc = cache_dir_slice(cd, (cache_dir_key){.ino = dir.ino, .gen = dir.gen, .change = d.change},
                         cookie > 2 ? cookie : 2, want + 1, &pg);
    if (rc == -EFBIG)
        *fetch = false;
    if (rc != 0)
        return -ENOENT;
    parent = d;
    if (plus && first_dot <= 2 && first_dot + ndots > 2 && pg.parent_ino != dir.ino &&
        dbfs_cache_attr(c->fs, (dbfs_fh){.ino = pg.parent_ino, .gen = pg.parent_gen}, &parent) !=
            0) {
        cache_dir_page_free(&pg);
        return -ENOENT;
    }
    take = pg.n < want ? pg.n : want;
    e = calloc((size_t)ndots + take + 1, sizeof *e);
    if (!e) {
        cache_dir_page_free(&pg);
        return -ENOENT;
    }
    rc = dbfs_dirent_dots(e, &got, first_dot, ndots, &d, pg.parent_ino, &parent, plus);
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
    *eof = ndots == dots_left && !more;
    *entries = e;
    *n = got;
    return 0;
}

/*
 * dbfs_dirlist_limit -- see dbfs_int.h.
 */
int64_t dbfs_dirlist_limit(dbfs *fs)
{
    cache_dir *cd = dbfs_cache_dir(fs);

    return cd ? (int64_t)cache_dir_max_entries(cd) + 1 : 0;
}

/*
 * dbfs_dirlist_fill -- see dbfs_int.h. Rows: change, parent inode and
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
