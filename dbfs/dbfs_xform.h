/*
 * dbfs_xform.h -- transformation chains and links for the admin tool
 * (pgnfs xform, pgnfs fsck): set, apply, show and check the chains of
 * files and directories (dbfs_xf_admin.c); make and list transformation
 * links (dbfs_xf_linkadm.c).
 *
 * NOTES
 *   Part of dbfs's public API beside dbfs.h, which it builds on. Every
 *   call runs on a session of its own, beside a running server or without
 *   one; messages and texts returned are the caller's.
 */
#ifndef PGNFS_DBFS_XFORM_H
#define PGNFS_DBFS_XFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dbfs.h"

/*
 * dbfs_xform_set -- make `chain` (xform/xf.h text; "none" clears) the
 * chain of PATH: a directory's is the one its new files and directories
 * take; a file that holds data has every chunk rewritten under the new
 * chain in one transaction (wholly old or wholly new after a crash).
 * Works beside a running server. Returns 0, or a negative errno with msg
 * (msglen bytes) saying what was refused and why: -EINVAL (the chain's
 * text, or PATH is neither file nor directory), -ENOENT, -ENOKEY,
 * -ELIBBAD, -EACCES, -EIO (a chunk that does not decode), or a database
 * error.
 */
int dbfs_xform_set(dbfs *fs, const char *path, const char *chain, char *msg, size_t msglen);

/*
 * dbfs_xform_apply -- rewrite every regular file beneath directory PATH
 * whose chain is not its directory's under its directory's chain, one
 * transaction per file (each file wholly old or wholly new after a crash;
 * running it again goes on where it stopped). A line per file to
 * progress (may be NULL); *done counts the files rewritten. Stops at the
 * first file that fails (its line says why). Returns 0, -ENOENT,
 * -ENOTDIR, -EIO, or as dbfs_xform_set.
 */
int dbfs_xform_apply(dbfs *fs, const char *path, void (*progress)(const char *line, void *arg),
                     void *arg, uint64_t *done);

/* dbfs_xform_show -- the chain of PATH as text ("none" for none) in *text
 * (g_free it). Returns 0, -ENOENT, -ENOTDIR, or a database error. */
int dbfs_xform_show(dbfs *fs, const char *path, char **text);

/* A guarded chunk that fails its check (dbfs_xform_check). */
typedef struct {
    uint64_t ino, chunk;
    char detail[400];
} dbfs_xform_problem;

/*
 * dbfs_xform_check -- every guarded file's chain is recorded and makes,
 * and every chunk of it decodes (every check of its chain: digests, tags,
 * lengths) and holds no byte past the size: each problem to cb, their
 * number in *problems. Reads only. Returns 0 or a database error.
 */
int dbfs_xform_check(dbfs *fs, void (*cb)(const dbfs_xform_problem *p, void *arg), void *arg,
                     uint64_t *problems);

/*
 * dbfs_xform_link -- make NAME (a path whose directory exists and which
 * does not) a transformation link that presents regular file BASE through
 * CHAIN (xform/xf.h text): reading it gives BASE's bytes after each
 * stage's forward, chunk by chunk; writing it stores the inverse into
 * BASE when every stage's inverse needs nothing but the bytes
 * (length-preserving, no per-chunk metadata: identity, increment, such
 * plug-ins), else it is read-only (mode without write bits, writes
 * EACCES). Its size is BASE's for a length-preserving chain, else
 * computed at first access. Returns 0, or a negative errno with msg
 * saying why: -EINVAL (the chain, or one a link cannot use: none,
 * in-database stages, a stage drawing nonces; BASE no regular file or a
 * link), -ENOENT, -ENOTDIR, -EEXIST, or as dbfs_xform_set.
 */
int dbfs_xform_link(dbfs *fs, const char *base, const char *name, const char *chain, char *msg,
                    size_t msglen);

/* One transformation link (dbfs_xform_links). */
typedef struct {
    uint64_t ino, base;
    const char *path;      /* the link's first path; NULL when it has none */
    const char *base_path; /* NULL when the base is gone */
    const char *chain;
    bool writable, preserves;
} dbfs_xform_link_info;

/*
 * dbfs_xform_links -- every transformation link to cb (a nonzero return
 * stops and is returned); the strings live until cb returns. Returns 0,
 * cb's value, or a database error.
 */
int dbfs_xform_links(dbfs *fs, int (*cb)(const dbfs_xform_link_info *l, void *arg), void *arg);

#endif /* PGNFS_DBFS_XFORM_H */
