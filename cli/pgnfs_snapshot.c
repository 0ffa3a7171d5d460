/*
 * pgnfs_snapshot.c -- `pgnfs snapshot` and `pgnfs diff`: read-only images
 * of the whole file system (dbfs_snap.h) and what changed between them.
 *
 *   pgnfs snapshot create NAME        O(1), consistent to a transaction
 *   pgnfs snapshot list               name, time, bytes only it keeps
 *   pgnfs snapshot delete [--no-wait] NAME...
 *                                     gone at once; the space it alone
 *                                     kept is reclaimed, with progress
 *   pgnfs snapshot reclaim            finish a reclaim (after a crash)
 *   pgnfs snapshot restore NAME PATH [--to DEST]  (pgnfs_restore.c)
 *   pgnfs diff SNAP1 [SNAP2]          +, - or M and the path, one a line
 *
 * All work beside a running server (pgnfs_database_peek), restore with
 * the conditions its help gives. Exit status 0, 1 (failed: the reason on
 * stderr), 2 (usage).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "dbfs_snap.h"
#include "pgnfs_cmd.h"

const char pgnfs_help_snapshot[] =
    "usage: pgnfs snapshot create NAME | list | delete [--no-wait] NAME... | reclaim\n"
    "                      | restore NAME PATH [--to DEST] [options]\n"
    "\n"
    "Snapshots: read-only images of the whole file system, taken in constant time\n"
    "(whatever its size) and consistent to a transaction: every change a client saw\n"
    "answered before it is in, none after. Clients read them under /.snapshots/NAME\n"
    "in the root of every export (hidden from its listing unless [snapshot] visible\n"
    "= true). A snapshot keeps what it sees: the space of rows changed or removed\n"
    "after it is kept until it is deleted.\n"
    "\n"
    "  create NAME     take a snapshot (NAME: a file name, at most 255 bytes)\n"
    "  list            every snapshot: name, time taken, the bytes only it keeps\n"
    "                  (what deleting it frees), and whether the schedule took it\n"
    "  delete NAME...  delete snapshots: gone at once; the space is reclaimed in\n"
    "                  short transactions with progress (--no-wait: leave that to\n"
    "                  a server, or to `pgnfs snapshot reclaim`)\n"
    "  reclaim         reclaim what deleted snapshots kept (goes on where a crash\n"
    "                  or --no-wait left it)\n"
    "  restore NAME PATH [--to DEST]\n"
    "                  copy PATH (a file or a tree) as snapshot NAME saw it back\n"
    "                  to DEST (default PATH), one file a line; see below\n"
    "\n"
    "restore writes each file under a temporary name in its directory\n"
    "(.pgnfs-restore.INODE) and renames it into place in one transaction, so a\n"
    "crash leaves every file wholly old or wholly restored (and perhaps such a\n"
    "temporary file, which the next restore replaces). It changes the database\n"
    "directly: with a server running, use it only when the server runs with\n"
    "[cache] coherence = shared (it tells the servers to drop their caches);\n"
    "otherwise copy over NFS: cp -a /mnt/.snapshots/NAME/PATH /mnt/DEST.\n"
    "\n"
    "examples:\n"
    "  pgnfs snapshot create before-upgrade\n"
    "  pgnfs snapshot list\n"
    "  pgnfs diff before-upgrade\n"
    "  pgnfs snapshot restore before-upgrade /etc/app.conf\n"
    "  pgnfs snapshot restore before-upgrade /home/ann --to /home/ann.old\n"
    "  pgnfs snapshot delete before-upgrade\n";

const char pgnfs_help_diff[] =
    "usage: pgnfs diff SNAP1 [SNAP2] [options]\n"
    "\n"
    "What changed from snapshot SNAP1 to snapshot SNAP2 (without SNAP2: to the\n"
    "file system as it is now), one path a line, by path:\n"
    "  + PATH   added      - PATH   removed      M PATH   modified\n"
    "A path is modified when another file took its name, or its type, size, mode,\n"
    "owner, link count, times or target changed (a directory whose entries changed\n"
    "is modified too). The same in SQL: SELECT * FROM pgnfs.diff('SNAP1', 'SNAP2').\n"
    "\n"
    "examples:\n"
    "  pgnfs diff nightly-1 nightly-2\n"
    "  pgnfs diff before-upgrade | grep '^M '\n";

/* The file system of the configuration, attached (see pgnfs_attach);
 * NULL after printing why. *cluster and *conninfo for pgnfs_snap_done. */
static dbfs *pgnfs_snap_fs(const cfg *c, emb_cluster **cluster, char **conninfo, int *rc)
{
    bool conflict = false;
    dbfs *fs;

    *rc = PGNFS_EXIT_FAIL;
    *conninfo = pgnfs_database_peek(c, cluster);
    if (!*conninfo)
        return NULL;
    fs = pgnfs_attach(c, *conninfo, false, &conflict);
    if (!fs && conflict)
        *rc = PGNFS_EXIT_USAGE;
    return fs;
}

static int pgnfs_snap_done(dbfs *fs, emb_cluster *cluster, char *conninfo, int rc)
{
    if (fs)
        dbfs_close(fs);
    if (cluster && emb_stop(cluster) != 0)
        rc = PGNFS_EXIT_FAIL;
    g_free(conninfo);
    return rc;
}

/* A time in microseconds as local ISO 8601. */
static void pgnfs_snap_time(int64_t us, char *out, size_t len)
{
    time_t t = (time_t)(us / 1000000);
    struct tm tm;

    localtime_r(&t, &tm);
    strftime(out, len, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

static int pgnfs_snap_print(const dbfs_snap_row *r, void *arg)
{
    char when[64];
    char *size = g_format_size_full(r->holds, G_FORMAT_SIZE_IEC_UNITS);

    (void)arg;
    pgnfs_snap_time(r->created_us, when, sizeof when);
    printf("%-24s %s %10s%s\n", r->name, when, size, r->scheduled ? "  (scheduled)" : "");
    g_free(size);
    return 0;
}

/* Progress of a reclaim: a line on a terminal, rewritten in place. */
static void pgnfs_snap_progress(const dbfs_snap_progress *p, void *arg)
{
    bool tty = arg != NULL;

    if (!tty)
        return;
    fprintf(stderr, "\rreclaiming: %3u%%, %" G_GUINT64_FORMAT " rows and tables removed",
            p->upto ? (unsigned)(p->pos * 100 / p->upto) : 100u, p->removed);
    fflush(stderr);
}

static int pgnfs_snap_reclaim_run(dbfs *fs)
{
    dbfs_snap_progress p;
    bool tty = isatty(STDERR_FILENO);
    int err = dbfs_snap_reclaim(fs, 0, pgnfs_snap_progress, tty ? (void *)fs : NULL, &p);

    if (tty)
        fputs("\n", stderr);
    if (err != 0) {
        g_printerr("pgnfs snapshot: reclaim: %s (run `pgnfs snapshot reclaim` to go on)\n",
                   g_strerror(-err));
        return PGNFS_EXIT_FAIL;
    }
    printf("reclaimed: %" G_GUINT64_FORMAT " kept rows and tables removed\n", p.removed);
    return PGNFS_EXIT_OK;
}

/* create, list, delete, reclaim (argv: after "snapshot"). */
static int pgnfs_snap_cmd(const cfg *c, const char *what, int argc, char **argv)
{
    emb_cluster *cluster = NULL;
    char *conninfo = NULL;
    int rc;
    dbfs *fs = pgnfs_snap_fs(c, &cluster, &conninfo, &rc);
    int err = 0;

    if (!fs)
        return pgnfs_snap_done(fs, cluster, conninfo, rc);
    rc = PGNFS_EXIT_OK;
    if (strcmp(what, "create") == 0) {
        dbfs_snap_row r;

        err = dbfs_snap_create(fs, argv[0], &r);
        if (err == -EEXIST)
            g_printerr("pgnfs snapshot create: %s exists\n", argv[0]);
        else if (err == -EINVAL)
            g_printerr("pgnfs snapshot create: '%s' is not a snapshot name (a file name: 1 to "
                       "255 bytes, no '/', not . or ..)\n",
                       argv[0]);
        else if (err != 0)
            g_printerr("pgnfs snapshot create: %s\n", g_strerror(-err));
        else
            printf("snapshot %s taken\n", argv[0]);
    } else if (strcmp(what, "list") == 0) {
        err = dbfs_snap_list(fs, pgnfs_snap_print, NULL);
        if (err != 0)
            g_printerr("pgnfs snapshot list: %s\n", g_strerror(-err));
    } else if (strcmp(what, "delete") == 0) {
        bool wait = true;

        for (int i = 0; i < argc && err == 0; i++) {
            if (strcmp(argv[i], "--no-wait") == 0) {
                wait = false;
                continue;
            }
            err = dbfs_snap_delete(fs, argv[i]);
            if (err == -ENOENT)
                g_printerr("pgnfs snapshot delete: no snapshot named %s\n", argv[i]);
            else if (err != 0)
                g_printerr("pgnfs snapshot delete: %s: %s\n", argv[i], g_strerror(-err));
            else
                printf("snapshot %s deleted\n", argv[i]);
        }
        if (err == 0 && wait)
            rc = pgnfs_snap_reclaim_run(fs);
    } else {
        rc = pgnfs_snap_reclaim_run(fs);
    }
    if (err != 0)
        rc = PGNFS_EXIT_FAIL;
    return pgnfs_snap_done(fs, cluster, conninfo, rc);
}

/* pgnfs snapshot: see the file header. */
int pgnfs_cmd_snapshot(const cfg *c, int argc, char **argv)
{
    const char *what = argc >= 2 ? argv[1] : "";
    int names = 0;

    for (int i = 2; i < argc; i++)
        names += strcmp(argv[i], "--no-wait") != 0;
    if (strcmp(what, "create") == 0 && argc == 3)
        return pgnfs_snap_cmd(c, what, 1, argv + 2);
    if ((strcmp(what, "list") == 0 || strcmp(what, "reclaim") == 0) && argc == 2)
        return pgnfs_snap_cmd(c, what, 0, argv + 2);
    if (strcmp(what, "delete") == 0 && names > 0)
        return pgnfs_snap_cmd(c, what, argc - 2, argv + 2);
    if (strcmp(what, "restore") == 0)
        return pgnfs_snapshot_restore(c, argc - 2, argv + 2);
    g_printerr("pgnfs snapshot: expected create NAME, list, delete NAME..., reclaim or restore "
               "NAME PATH (see pgnfs snapshot --help)\n");
    return PGNFS_EXIT_USAGE;
}

static int pgnfs_diff_print(const dbfs_snap_diff_row *r, void *arg)
{
    (void)arg;
    printf("%c %s%s\n", r->change, r->path, strcmp(r->type, "dir") == 0 && r->path[1] ? "/" : "");
    return 0;
}

/* pgnfs diff: see the file header. */
int pgnfs_cmd_diff(const cfg *c, int argc, char **argv)
{
    emb_cluster *cluster = NULL;
    char *conninfo = NULL;
    dbfs *fs;
    int rc, err;

    if (argc < 2 || argc > 3) {
        g_printerr("pgnfs diff: expected SNAP1 [SNAP2] (see pgnfs diff --help)\n");
        return PGNFS_EXIT_USAGE;
    }
    fs = pgnfs_snap_fs(c, &cluster, &conninfo, &rc);
    if (!fs)
        return pgnfs_snap_done(fs, cluster, conninfo, rc);
    err = dbfs_snap_diff(fs, argv[1], argc == 3 ? argv[2] : NULL, pgnfs_diff_print, NULL);
    rc = PGNFS_EXIT_OK;
    if (err == -ENOENT) {
        g_printerr("pgnfs diff: no snapshot named %s%s%s\n", argv[1], argc == 3 ? " or " : "",
                   argc == 3 ? argv[2] : "");
        rc = PGNFS_EXIT_FAIL;
    } else if (err != 0) {
        g_printerr("pgnfs diff: %s\n", g_strerror(-err));
        rc = PGNFS_EXIT_FAIL;
    }
    return pgnfs_snap_done(fs, cluster, conninfo, rc);
}
