/*
 * dbfs_dirent.c -- READDIR entries (dbfs_dirent.h): appending named
 * entries and the dots, which dots a page lists, and freeing a reply.
 *
 * NOTES
 *   Each entry's name is malloc'd here; dbfs_dirents_free() frees the
 *   names and the array. Nothing else allocates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dbfs_dirent.h"

/* dbfs_attr_opt_set -- see dbfs_dirent.h. */
void dbfs_attr_opt_set(dbfs_attr_opt *o, const dbfs_attr *a)
{
    if (!o)
        return;
    o->valid = a != NULL;
    if (a)
        o->attr = *a;
    else
        memset(&o->attr, 0, sizeof o->attr);
}

/* dbfs_dirents_free -- see dbfs.h: free what dbfs_readdir returned (NULL
 * is ignored). */
void dbfs_dirents_free(dbfs_dirent *entries, size_t n)
{
    if (!entries)
        return;
    for (size_t i = 0; i < n; i++)
        free(entries[i].name);
    free(entries);
}

/* dbfs_dirent_add -- see dbfs_dirent.h. */
int dbfs_dirent_add(dbfs_dirent *e, size_t *n, uint64_t cookie, uint64_t ino, const char *name,
                    size_t len, const dbfs_attr *attr)
{
    dbfs_dirent *d = &e[*n];

    memset(d, 0, sizeof *d);
    d->name = malloc(len + 1);
    if (!d->name)
        return -ENOMEM;
    memcpy(d->name, name, len);
    d->name[len] = 0;
    d->cookie = cookie;
    d->ino = ino;
    if (attr) {
        d->has_attr = true;
        d->attr = *attr;
    }
    (*n)++;
    return 0;
}

/* dbfs_dots_after -- see dbfs_dirent.h. */
dbfs_dots dbfs_dots_after(uint64_t cookie, uint32_t max_entries)
{
    dbfs_dots d;

    d.first = cookie < DBFS_COOKIE_DOTDOT ? (uint32_t)cookie + 1 : DBFS_COOKIE_FIRST;
    d.left = DBFS_COOKIE_FIRST - d.first;
    d.n = d.left < max_entries ? d.left : max_entries;
    return d;
}

/* dbfs_dirent_dots -- see dbfs_dirent.h. */
int dbfs_dirent_dots(dbfs_dirent *e, size_t *n, dbfs_dots d, const dbfs_attr *dir,
                     uint64_t parent_ino, const dbfs_attr *parent, bool plus)
{
    int rc = 0;

    for (uint32_t k = d.first; rc == 0 && k < d.first + d.n; k++) {
        if (k == DBFS_COOKIE_DOT)
            rc = dbfs_dirent_add(e, n, DBFS_COOKIE_DOT, dir->ino, ".", 1, plus ? dir : NULL);
        else
            rc = dbfs_dirent_add(e, n, DBFS_COOKIE_DOTDOT, parent_ino, "..", 2,
                                 plus ? parent : NULL);
    }
    return rc;
}
