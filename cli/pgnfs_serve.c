/*
 * pgnfs_serve.c -- `pgnfs serve` and `pgnfs mkfs`, and what every command
 * shares: the database (configured, or the embedded cluster) and attaching
 * to the file system in it.
 *
 *   pgnfs serve   the server in the foreground: the embedded cluster
 *                 started (created on first use), watched while serving
 *                 (emb_watch: restarted if it stops) and stopped at exit;
 *                 the file system created if the database has none
 *   pgnfs mkfs [--force]
 *
 *   serve:  check arguments --> database (emb_start) --> attach (mkfs if
 *           needed; refuse a contradicting configuration) --> watch the
 *           cluster --> pgnfsd_run until SIGINT/SIGTERM --> stop watching
 *           --> close --> emb_stop. Every failure takes back what was
 *           done before it, in that order backwards.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "pgnfs_cmd.h"
#include "pgnfsd_run.h"

const char pgnfs_help_serve[] =
    "usage: pgnfs serve [options]\n"
    "\n"
    "Serve NFSv3 and MOUNTv3 from the file system in PostgreSQL, in the foreground,\n"
    "until Ctrl-C (SIGINT) or SIGTERM. Without [database] conninfo it runs its own\n"
    "PostgreSQL cluster in the data directory (--data): created on first use,\n"
    "watched while serving (started again, with a logged error, if it stops),\n"
    "stopped at exit. A database with no file system gets one ([storage] keys).\n"
    "A new file system's root is mode 1777, like /tmp, so root-squashed clients\n"
    "(the default export: 127.0.0.1 and ::1, read-write) can write at once.\n"
    "\n"
    "It takes no arguments besides the options below. [storage] keys that\n"
    "contradict an existing file system are refused (exit status 2).\n"
    "\n"
    "examples:\n"
    "  pgnfs serve --port 20490                    as a user; mount with port=20490\n"
    "  pgnfs serve --export \"/ 10.0.0.0/8(rw)\" --set metrics.enable=true\n"
    "  pgnfs serve --conninfo 'host=db dbname=files user=pgnfs'\n";

const char pgnfs_help_mkfs[] =
    "usage: pgnfs mkfs [--force] [options]\n"
    "\n"
    "Create a file system in the database (the embedded cluster's, created on first\n"
    "use, unless --conninfo), laid out as [storage] says: schema (single, inversion,\n"
    "hybrid), chunk_size, encoding, hybrid_threshold, and the root directory's\n"
    "root_uid, root_gid and root_mode (default 0, 0, 1777). These cannot change\n"
    "later. `pgnfs serve` does the same on its first start.\n"
    "\n"
    "  --force    replace a file system that is there (every file in it is lost)\n"
    "\n"
    "examples:\n"
    "  pgnfs mkfs --set storage.schema=hybrid\n"
    "  pgnfs mkfs --set storage.root_uid=1000 --set storage.root_gid=1000 \\\n"
    "             --set storage.root_mode=0755\n"
    "  pgnfs mkfs --conninfo 'host=db dbname=files user=pgnfs'\n";

/* pgnfs_database -- see pgnfs_cmd.h. */
const char *pgnfs_database(const cfg *c, emb_cluster **cluster)
{
    char *err = NULL;

    *cluster = NULL;
    if (c->conninfo && *c->conninfo)
        return c->conninfo;

    emb_opts opts = {
        .data_dir = c->data_dir,
        .pg_bindir = c->pg_bindir,
        .run_as = c->pg_user,
        /* A file system deletes chunks all the time: look for tables to
         * vacuum every few seconds, not every minute, so that dead chunks
         * are reused before the table grows (the per-table thresholds are
         * in schema/002_storage.sql; bench/results/paper-fig2.md). */
        .extra_conf = "autovacuum_naptime = 5s\n",
        /* A buffer pool that holds what a burst of small files dirties
         * until the checkpoint writes it once, sorted: with PostgreSQL's
         * 128 MiB, backends evicted dirty pages (and flushed WAL to do
         * so) and the disk saw 5x the write requests per object
         * (bench/results/durable.md, "Where an async export's disk writes
         * come from"). */
        .shared_buffers_mb =
            (unsigned)((c->pg_buffers ? c->pg_buffers : cfg_pg_buffers_auto(cfg_mem_total())) >>
                       20),
    };
    *cluster = emb_start(&opts, &err);
    if (!*cluster) {
        g_printerr("pgnfs: cannot start the embedded PostgreSQL: %s\n", err);
        free(err);
        return NULL;
    }
    return emb_conninfo(*cluster);
}

/* The file-system layout the configuration asks mkfs for. Returns 0 or -1. */
static int pgnfs_mkfs_opts(const cfg *c, dbfs_mkfs_opts *o)
{
    memset(o, 0, sizeof *o);
    if (strcmp(c->storage, "single") == 0) {
        o->storage = DBFS_STORAGE_SINGLE;
    } else if (strcmp(c->storage, "inversion") == 0) {
        o->storage = DBFS_STORAGE_INVERSION;
    } else if (strcmp(c->storage, "hybrid") == 0) {
        o->storage = DBFS_STORAGE_HYBRID;
    } else {
        g_printerr("pgnfs: [storage] schema '%s' is not single, inversion or hybrid\n", c->storage);
        return -1;
    }
    o->encoding = strcmp(c->encoding, "base64") == 0 ? DBFS_ENC_BASE64 : DBFS_ENC_BINARY;
    o->chunk_size = c->chunk_size;
    o->hybrid_threshold = c->hybrid_threshold;
    o->root_uid = c->root_uid;
    o->root_gid = c->root_gid;
    o->root_mode = c->root_mode;
    return 0;
}

static int pgnfs_mkfs(const cfg *c, const char *conninfo, bool force)
{
    dbfs_mkfs_opts opts;
    int rc;

    if (pgnfs_mkfs_opts(c, &opts) != 0)
        return PGNFS_EXIT_USAGE;
    opts.force = force;
    rc = dbfs_mkfs(conninfo, &opts);
    if (rc == -EEXIST) {
        g_printerr("pgnfs: the database already holds a pgnfs file system (use --force to "
                   "replace it and lose its contents)\n");
        return PGNFS_EXIT_FAIL;
    }
    if (rc != 0) {
        g_printerr("pgnfs: mkfs failed: %s\n", g_strerror(-rc));
        return PGNFS_EXIT_FAIL;
    }
    g_print("pgnfs: created a file system (storage %s, chunk size %u, encoding %s)\n", c->storage,
            c->chunk_size, c->encoding);
    return PGNFS_EXIT_OK;
}

/* pgnfs_attach -- see pgnfs_cmd.h. */
dbfs *pgnfs_attach(const cfg *c, const char *conninfo, bool create, bool *conflict)
{
    dbfs_config dc;
    dbfs *fs = NULL;
    int rc;

    *conflict = false;
    cfg_dbfs_config(c, conninfo, &dc);
    rc = dbfs_open(&dc, &fs);

    if (rc == -ENOENT && !create) {
        g_printerr("pgnfs: the database holds no pgnfs file system (run `pgnfs mkfs`)\n");
        return NULL;
    }
    if (rc == -ENOENT) {
        g_message("no file system in the database yet: creating one");
        if (pgnfs_mkfs(c, conninfo, false) != PGNFS_EXIT_OK)
            return NULL;
        rc = dbfs_open(&dc, &fs);
    }
    if (rc == -EPROTO) {
        g_printerr("pgnfs: the file system's schema is newer than this pgnfs: upgrade pgnfs\n");
        return NULL;
    }
    if (rc != 0) {
        g_printerr("pgnfs: cannot open the file system: %s\n", g_strerror(-rc));
        return NULL;
    }
    char *err = NULL;
    rc = cfg_check_fs(c, fs, &err);
    if (rc != 0) {
        g_printerr("pgnfs: %s\n", err);
        free(err);
        dbfs_close(fs);
        *conflict = rc == -EINVAL;
        return NULL;
    }
    return fs;
}

static void pgnfs_print_mount_hint(const cfg *c)
{
    if (c->port == 0) {
        g_print("pgnfs: serving on a free port (see the 'listening' line below)\n");
        return;
    }
    const char *host =
        strcmp(c->listen, "0.0.0.0") == 0 || strcmp(c->listen, "::") == 0 ? "localhost" : c->listen;

    /* Locks reach the server's lock manager through its portmapper: without
     * one, or without locking, the client must keep them local (nolock). */
    bool pmap = strcmp(c->portmap, "off") != 0;
    bool locks = c->nlm_enable && pmap;

    g_print("pgnfs: serving. Mount it with\n");
    if (c->port == 2049 && pmap && locks)
        g_print("  mount -t nfs %s:/ /mnt\n", host);
    else
        g_print("  mount -t nfs -o vers=3,proto=tcp,port=%u,mountport=%u%s %s:/ /mnt\n", c->port,
                c->port, locks ? "" : ",nolock", host);
    g_print("or reach it without a mount:\n"
            "  nfs-ls 'nfs://%s/?nfsport=%u&mountport=%u&version=3'\n"
            "  nfs-cp FILE 'nfs://%s//FILE?nfsport=%u&mountport=%u&version=3'\n",
            host, c->port, c->port, host, c->port, c->port);
}

/* pgnfs serve: run the server in the foreground until SIGINT/SIGTERM. */
int pgnfs_cmd_serve(const cfg *c, int argc, char **argv)
{
    emb_cluster *cluster = NULL;
    emb_watch *watch = NULL;
    const char *conninfo;
    bool conflict = false;
    char *err = NULL;
    dbfs *fs = NULL;
    int rc = PGNFS_EXIT_FAIL;

    if (argc > 1) {
        g_printerr("pgnfs serve: unknown argument '%s' (see pgnfs serve --help)\n", argv[1]);
        return PGNFS_EXIT_USAGE;
    }
    conninfo = pgnfs_database(c, &cluster);
    if (!conninfo)
        return PGNFS_EXIT_FAIL;
    fs = pgnfs_attach(c, conninfo, true, &conflict);
    if (!fs) {
        rc = conflict ? PGNFS_EXIT_USAGE : PGNFS_EXIT_FAIL;
        goto out;
    }
    if (cluster) {
        watch = emb_watch_start(cluster, c->pg_restart, &err);
        if (!watch) {
            g_printerr("pgnfs serve: %s\n", err);
            g_free(err);
            goto out;
        }
    }
    pgnfs_print_mount_hint(c);
    rc = pgnfsd_run(c, fs) == 0 ? PGNFS_EXIT_OK : PGNFS_EXIT_FAIL;
out:
    emb_watch_stop(watch);
    if (fs)
        dbfs_close(fs);
    if (cluster && emb_stop(cluster) != 0)
        rc = PGNFS_EXIT_FAIL;
    return rc;
}

/* pgnfs mkfs [--force]: create the file system. */
int pgnfs_cmd_mkfs(const cfg *c, int argc, char **argv)
{
    emb_cluster *cluster = NULL;
    bool force = false;
    int rc;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--force") != 0) {
            g_printerr("pgnfs mkfs: unknown argument '%s' (see pgnfs mkfs --help)\n", argv[i]);
            return PGNFS_EXIT_USAGE;
        }
        force = true;
    }
    const char *conninfo = pgnfs_database(c, &cluster);
    if (!conninfo)
        return PGNFS_EXIT_FAIL;
    rc = pgnfs_mkfs(c, conninfo, force);
    if (cluster && emb_stop(cluster) != 0)
        rc = PGNFS_EXIT_FAIL;
    return rc;
}
