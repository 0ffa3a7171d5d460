/*
 * dbfs_dirent.h -- building the entries READDIR answers (dbfs_dirent,
 * dbfs.h), shared by the database path (dbfs_readdir.c) and the listing
 * cache's (dbfs_dirlist.c), and the optional attributes of the replies.
 *
 * NOTES
 *   Entries are written into an array the caller allocated with room for
 *   them; each name is malloc'd and freed by dbfs_dirents_free() (dbfs.h).
 */
#ifndef PGNFS_DBFS_DIRENT_H
#define PGNFS_DBFS_DIRENT_H

#include <stddef.h>
#include <stdint.h>

#include "dbfs.h"

/* READDIR positions: "." is 1, ".." 2; named entries have cookies from
 * DBFS_COOKIE_FIRST on (schema: pgnfs_cookie_seq). */
enum { DBFS_COOKIE_DOT = 1, DBFS_COOKIE_DOTDOT = 2, DBFS_COOKIE_FIRST = 3 };

/* Set *o to a (or to "no attributes" for NULL); o may be NULL. */
void dbfs_attr_opt_set(dbfs_attr_opt *o, const dbfs_attr *a);

/* Append an entry to e[*n] (room is the caller's); the name is copied (len
 * bytes). Returns 0 or -ENOMEM. */
int dbfs_dirent_add(dbfs_dirent *e, size_t *n, uint64_t cookie, uint64_t ino, const char *name,
                    size_t len, const dbfs_attr *attr);

/* The dots a page after `cookie` still lists ("." and ".." come first):
 * the first one's position and how many, at most max_entries. */
typedef struct {
    uint32_t first; /* DBFS_COOKIE_DOT, DBFS_COOKIE_DOTDOT, or past both */
    uint32_t left;  /* dots after the cookie */
    uint32_t n;     /* of those, on this page */
} dbfs_dots;
dbfs_dots dbfs_dots_after(uint64_t cookie, uint32_t max_entries);

/* dbfs_dirent_dots -- append the dots d names: "." (dir) and ".."
 * (parent_ino, with *parent's attributes), with attributes when plus.
 * Returns 0 or -ENOMEM. */
int dbfs_dirent_dots(dbfs_dirent *e, size_t *n, dbfs_dots d, const dbfs_attr *dir,
                     uint64_t parent_ino, const dbfs_attr *parent, bool plus);

#endif /* PGNFS_DBFS_DIRENT_H */
