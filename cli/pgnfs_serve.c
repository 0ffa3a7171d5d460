/*
 * pgnfs_serve.c -- `pgnfs serve` and `pgnfs mkfs`, and what every command
 * shares: the database (configured, or the embedded cluster) and attaching
 * to the file system in it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "pgnfs_cmd.h"
#include "srv.h"

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
dbfs *pgnfs_attach(const cfg *c, const char *conninfo, bool create)
{
    dbfs_config dc;
    dbfs *fs = NULL;
    int rc;

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
    if (cfg_check_fs(c, fs, &err) != 0) {
        g_printerr("pgnfs: %s\n", err);
        free(err);
        dbfs_close(fs);
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

    g_print("pgnfs: serving. Mount it with\n"
            "  mount -t nfs -o vers=3,proto=tcp,port=%u,mountport=%u,nolock %s:/ /mnt\n"
            "or reach it without a mount:\n"
            "  nfs-ls 'nfs://%s/?nfsport=%u&mountport=%u&version=3'\n",
            c->port, c->port, host, host, c->port, c->port);
}

/* pgnfs serve: run the server in the foreground until SIGINT/SIGTERM. */
int pgnfs_cmd_serve(const cfg *c, int argc, char **argv)
{
    emb_cluster *cluster = NULL;
    const char *conninfo = pgnfs_database(c, &cluster);
    emb_watch *watch = NULL;
    char *err = NULL;
    dbfs *fs = NULL;
    int rc = PGNFS_EXIT_FAIL;

    if (argc > 1) {
        g_printerr("pgnfs serve: unknown argument '%s' (see pgnfs --help)\n", argv[1]);
        return PGNFS_EXIT_USAGE;
    }
    if (!conninfo)
        return PGNFS_EXIT_FAIL;
    fs = pgnfs_attach(c, conninfo, true);
    if (!fs)
        goto out;
    /* The embedded cluster is watched, and restarted if it stops. */
    if (cluster) {
        watch = emb_watch_start(cluster, c->pg_restart, &err);
        if (!watch) {
            g_printerr("pgnfs serve: %s\n", err);
            g_free(err);
            goto out;
        }
    }
    pgnfs_print_mount_hint(c);
    rc = srv_run(c, fs) == 0 ? PGNFS_EXIT_OK : PGNFS_EXIT_FAIL;
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
            g_printerr("pgnfs mkfs: unknown argument '%s' (see pgnfs --help)\n", argv[i]);
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
