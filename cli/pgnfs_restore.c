/*
 * pgnfs_restore.c -- `pgnfs snapshot restore NAME PATH [--to DEST]`: copy
 * a file or a tree as a snapshot saw it back into the live file system,
 * through dbfs's ordinary calls (so every layout, encoding and
 * transformation chain is written as a client's writes would be).
 *
 * Each non-directory is made under a temporary name in its directory
 * (.pgnfs-restore.INODE: a leftover of a crashed run is replaced), filled
 * (holes stay holes), given its owner, mode and times, and renamed into
 * place: one transaction makes it appear whole, replacing what was there.
 * Directories are made (or reused) first and get their mode, owner and
 * times after their entries. Hard links within what is restored are
 * restored as links. One line per file on stdout.
 *
 * NOTES
 *   It acts as root on a connection of its own. A server that serves the
 *   file system in [cache] coherence = single would not see the changes:
 *   restore refuses to run beside one; shared servers are told to drop
 *   their caches before the first file and after every file
 *   (dbfs_snap_notify).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_snap.h"
#include "pgnfs_cmd.h"

/* Bytes copied per READ/WRITE. */
#define PGNFS_RESTORE_IO (1u << 20)
/* Entries per READDIR of a snapshot directory. */
#define PGNFS_RESTORE_DIRENTS 512u

typedef struct {
    dbfs_conn *c;
    dbfs_cred root;
    uint32_t snap;
    dbfs_admin *notify; /* tell shared servers after each file (or NULL) */
    GHashTable *linked; /* snapshot inode -> live dbfs_fh (hard links) */
    char *buf;          /* PGNFS_RESTORE_IO bytes */
    unsigned long files, failed;
} pgnfs_restore;

/* Walk path from fh (a directory), component by component. */
static int pgnfs_restore_walk(pgnfs_restore *r, dbfs_fh fh, const char *path, dbfs_attr *out)
{
    char **parts = g_strsplit(path, "/", -1);
    int rc = dbfs_getattr(r->c, fh, out);

    for (char **p = parts; rc == 0 && *p; p++) {
        if (**p == '\0' || strcmp(*p, ".") == 0)
            continue;
        if (strcmp(*p, "..") == 0) {
            rc = -EINVAL;
            break;
        }
        rc = dbfs_lookup(r->c, &r->root, (dbfs_fh){out->ino, out->gen, out->snap}, *p, out, NULL);
    }
    g_strfreev(parts);
    return rc;
}

/* The owner, mode, times (and size) of src onto live file fh. */
static int pgnfs_restore_attrs(pgnfs_restore *r, dbfs_fh fh, const dbfs_attr *src, bool size)
{
    dbfs_sattr sa = {
        .set = DBFS_SET_UID | DBFS_SET_GID | DBFS_SET_ATIME | DBFS_SET_MTIME |
               (src->type == DBFS_LNK ? 0 : DBFS_SET_MODE) | (size ? DBFS_SET_SIZE : 0),
        .mode = src->mode,
        .uid = src->uid,
        .gid = src->gid,
        .size = src->size,
        .atime_ns = src->atime_ns,
        .mtime_ns = src->mtime_ns,
    };

    return dbfs_setattr(r->c, &r->root, fh, &sa, NULL, NULL);
}

/* The bytes of regular file src (in the snapshot) into live file dst;
 * blocks of zeros are left as holes (the size is set afterwards). */
static int pgnfs_restore_data(pgnfs_restore *r, const dbfs_attr *src, dbfs_fh dst)
{
    dbfs_fh from = {src->ino, src->gen, r->snap};
    uint64_t off = 0;
    int rc = 0;

    while (rc == 0 && off < src->size) {
        uint32_t n = 0;
        bool eof = false;

        rc = dbfs_read(r->c, &r->root, from, off, PGNFS_RESTORE_IO, r->buf, &n, &eof, NULL);
        if (rc != 0 || n == 0)
            break;
        bool zero = true;
        for (uint32_t i = 0; zero && i < n; i++)
            zero = r->buf[i] == 0;
        if (!zero)
            rc = dbfs_write(r->c, &r->root, dst, off, r->buf, n, DBFS_FILE_SYNC, NULL, NULL);
        off += n;
        if (eof)
            break;
    }
    return rc;
}

/* Make the non-directory src as tmp in live directory dir: *made. */
static int pgnfs_restore_make(pgnfs_restore *r, const dbfs_attr *src, dbfs_fh dir, const char *tmp,
                              dbfs_attr *made)
{
    const dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0600};
    dbfs_fh *seen = g_hash_table_lookup(r->linked, &src->ino);
    char *target = NULL;
    int rc;

    if (seen) {
        dbfs_attr_opt a;

        rc = dbfs_link(r->c, &r->root, *seen, dir, tmp, &a, NULL);
        if (rc == 0)
            *made = a.attr;
        return rc;
    }
    switch (src->type) {
    case DBFS_REG:
        rc = dbfs_create(r->c, &r->root, dir, tmp, DBFS_CREATE_GUARDED, &sa, 0, made, NULL);
        if (rc == 0)
            rc = pgnfs_restore_data(r, src, (dbfs_fh){made->ino, made->gen, 0});
        break;
    case DBFS_LNK:
        rc = dbfs_readlink(r->c, &r->root, (dbfs_fh){src->ino, src->gen, r->snap}, &target, NULL);
        if (rc == 0)
            rc = dbfs_symlink(r->c, &r->root, dir, tmp, target, NULL, made, NULL);
        free(target);
        break;
    default:
        rc = dbfs_mknod(r->c, &r->root, dir, tmp, src->type, src->rdev_major, src->rdev_minor, &sa,
                        made, NULL);
        break;
    }
    if (rc == 0)
        rc = pgnfs_restore_attrs(r, (dbfs_fh){made->ino, made->gen, 0}, src, src->type == DBFS_REG);
    if (rc == 0 && src->nlink > 1) {
        dbfs_fh *fh = g_new(dbfs_fh, 1);
        uint64_t *key = g_new(uint64_t, 1);

        *fh = (dbfs_fh){made->ino, made->gen, 0};
        *key = src->ino;
        g_hash_table_insert(r->linked, key, fh);
    }
    return rc;
}

static int pgnfs_restore_item(pgnfs_restore *r, const dbfs_attr *src, dbfs_fh dir, const char *name,
                              const char *path);

/* Directory src (in the snapshot) as `name` in live directory dir. */
static int pgnfs_restore_dir(pgnfs_restore *r, const dbfs_attr *src, dbfs_fh dir, const char *name,
                             const char *path)
{
    const dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0700};
    dbfs_fh from = {src->ino, src->gen, r->snap};
    uint64_t cookie = 0;
    dbfs_attr d;
    bool eof = false;
    int rc = dbfs_lookup(r->c, &r->root, dir, name, &d, NULL);

    if (rc == 0 && d.type != DBFS_DIR) {
        rc = dbfs_remove(r->c, &r->root, dir, name, NULL);
        if (rc == 0)
            rc = -ENOENT;
    }
    if (rc == -ENOENT)
        rc = dbfs_mkdir(r->c, &r->root, dir, name, &sa, &d, NULL);
    if (rc != 0) {
        g_printerr("pgnfs snapshot restore: %s: %s\n", path, g_strerror(-rc));
        return rc;
    }
    while (rc == 0 && !eof) {
        dbfs_dirent *e = NULL;
        size_t n = 0;

        rc = dbfs_readdir(r->c, &r->root, from, cookie, PGNFS_RESTORE_DIRENTS, true, &e, &n, &eof,
                          NULL);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            cookie = e[i].cookie;
            if (strcmp(e[i].name, ".") == 0 || strcmp(e[i].name, "..") == 0 || !e[i].has_attr)
                continue;
            char *sub = g_strconcat(strcmp(path, "/") == 0 ? "" : path, "/", e[i].name, NULL);
            /* A failed file is reported and skipped; a lost database stops. */
            int irc = pgnfs_restore_item(r, &e[i].attr, (dbfs_fh){d.ino, d.gen, 0}, e[i].name, sub);
            if (irc == -EAGAIN || irc == -EIO || irc == -ENOSPC)
                rc = irc;
            g_free(sub);
        }
        dbfs_dirents_free(e, n);
        if (n == 0)
            break;
    }
    if (rc == 0)
        rc = pgnfs_restore_attrs(r, (dbfs_fh){d.ino, d.gen, 0}, src, false);
    return rc;
}

/* src (in the snapshot) as `name` in live directory dir; a line said. */
static int pgnfs_restore_item(pgnfs_restore *r, const dbfs_attr *src, dbfs_fh dir, const char *name,
                              const char *path)
{
    char tmp[64];
    dbfs_attr made;
    int rc;

    if (src->type == DBFS_DIR)
        return pgnfs_restore_dir(r, src, dir, name, path);
    g_snprintf(tmp, sizeof tmp, ".pgnfs-restore.%" G_GUINT64_FORMAT, src->ino);
    rc = dbfs_remove(r->c, &r->root, dir, tmp, NULL);
    if (rc == 0 || rc == -ENOENT)
        rc = pgnfs_restore_make(r, src, dir, tmp, &made);
    if (rc == 0)
        rc = dbfs_rename(r->c, &r->root, dir, tmp, dir, name, NULL, NULL);
    if (rc == 0 && r->notify)
        rc = dbfs_snap_notify(r->notify);
    if (rc != 0) {
        g_printerr("pgnfs snapshot restore: %s: %s\n", path, g_strerror(-rc));
        r->failed++;
        dbfs_remove(r->c, &r->root, dir, tmp, NULL);
        return rc;
    }
    r->files++;
    printf("restored %s (%" G_GUINT64_FORMAT " bytes)\n", path, src->size);
    fflush(stdout);
    return 0;
}

/* Count the live servers: in single coherence, and shared. */
typedef struct {
    unsigned single, shared;
} pgnfs_restore_servers;

static int pgnfs_restore_server(const dbfs_frontend_row *f, void *arg)
{
    pgnfs_restore_servers *s = arg;

    if (f->live && strcmp(f->coherence, "single") == 0)
        s->single++;
    else if (f->live)
        s->shared++;
    return 0;
}

/* Restore src_path of snapshot name to dst_path on fs. */
static int pgnfs_restore_run(dbfs *fs, const char *conninfo, const char *name, const char *src_path,
                             const char *dst_path)
{
    pgnfs_restore r = {.root = {.uid = 0, .gid = 0}};
    pgnfs_restore_servers servers = {0};
    dbfs_admin *a = NULL;
    dbfs_attr src, parent;
    char *dir = NULL, *base = NULL;
    int rc = dbfs_admin_open(conninfo, &a);

    if (rc == 0)
        rc = dbfs_admin_frontends(a, pgnfs_restore_server, &servers);
    if (rc != 0 || servers.shared == 0) {
        dbfs_admin_close(a);
        a = NULL;
    }
    if (rc == 0 && servers.single > 0) {
        g_printerr("pgnfs snapshot restore: a server serves this file system with [cache] "
                   "coherence = single and would not see the files restored: stop it, or copy "
                   "over NFS (cp -a MOUNT/.snapshots/%s%s MOUNT%s)\n",
                   name, src_path, dst_path);
        dbfs_admin_close(a);
        return PGNFS_EXIT_FAIL;
    }
    r.notify = a;
    if (rc == 0)
        rc = dbfs_conn_open(fs, &r.c);
    if (rc == 0)
        rc = dbfs_snap_find(r.c, name, &r.snap);
    /* A shared server serving alone reads the log from now on. */
    if (rc == 0 && r.notify)
        rc = dbfs_snap_notify(r.notify);
    if (rc == -ENOENT) {
        g_printerr("pgnfs snapshot restore: no snapshot named %s\n", name);
        goto out;
    }
    if (rc == 0) {
        rc = pgnfs_restore_walk(&r, (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(fs)->root_gen, r.snap},
                                src_path, &src);
        if (rc != 0)
            g_printerr("pgnfs snapshot restore: %s in snapshot %s: %s\n", src_path, name,
                       g_strerror(-rc));
    }
    if (rc == 0) {
        char *clean = g_canonicalize_filename(dst_path, "/");

        dir = g_path_get_dirname(clean);
        base = g_path_get_basename(clean);
        g_free(clean);
        rc = pgnfs_restore_walk(&r, (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(fs)->root_gen, 0}, dir,
                                &parent);
        if (rc == 0 && parent.type != DBFS_DIR)
            rc = -ENOTDIR;
        if (rc != 0)
            g_printerr("pgnfs snapshot restore: %s: %s\n", dir, g_strerror(-rc));
    }
    if (rc == 0) {
        r.linked = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
        r.buf = g_malloc(PGNFS_RESTORE_IO);
        if (strcmp(base, "/") == 0 && src.type == DBFS_DIR)
            rc = pgnfs_restore_dir(&r, &src, (dbfs_fh){parent.ino, parent.gen, 0}, ".", "/");
        else if (strcmp(base, "/") == 0)
            rc = -EISDIR;
        else
            rc = pgnfs_restore_item(&r, &src, (dbfs_fh){parent.ino, parent.gen, 0}, base, dst_path);
        printf("%lu files restored, %lu failed\n", r.files, r.failed);
        if (r.failed > 0 && rc == 0)
            rc = -EIO;
    }
out:
    if (r.linked)
        g_hash_table_destroy(r.linked);
    g_free(r.buf);
    g_free(dir);
    g_free(base);
    if (r.c)
        dbfs_conn_close(r.c);
    dbfs_admin_close(a);
    return rc == 0 ? PGNFS_EXIT_OK : PGNFS_EXIT_FAIL;
}

/* pgnfs snapshot restore NAME PATH [--to DEST] (argv: after "restore"). */
int pgnfs_snapshot_restore(const cfg *c, int argc, char **argv)
{
    const char *to = NULL;
    emb_cluster *cluster = NULL;
    bool conflict = false;
    char *conninfo;
    dbfs *fs;
    int rc = PGNFS_EXIT_FAIL;

    if (argc == 4 && strcmp(argv[2], "--to") == 0)
        to = argv[3];
    if ((argc != 2 && !to) || argv[1][0] != '/' || (to && to[0] != '/')) {
        g_printerr("pgnfs snapshot restore: expected NAME PATH [--to DEST], paths absolute "
                   "(see pgnfs snapshot --help)\n");
        return PGNFS_EXIT_USAGE;
    }
    conninfo = pgnfs_database_peek(c, &cluster);
    if (!conninfo)
        return PGNFS_EXIT_FAIL;
    fs = pgnfs_attach(c, conninfo, false, &conflict);
    if (fs)
        rc = pgnfs_restore_run(fs, conninfo, argv[0], argv[1], to ? to : argv[1]);
    else if (conflict)
        rc = PGNFS_EXIT_USAGE;
    if (fs)
        dbfs_close(fs);
    if (cluster && emb_stop(cluster) != 0)
        rc = PGNFS_EXIT_FAIL;
    g_free(conninfo);
    return rc;
}
