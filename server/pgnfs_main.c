/*
 * pgnfs_main.c -- `pgnfs`, the administration tool.
 *
 *   pgnfs serve [options]   serve a file system; with no [database] conninfo
 *                           it runs a private PostgreSQL cluster in the data
 *                           directory (created on first use), creates the
 *                           file system in it if there is none, serves it in
 *                           the foreground and stops the cluster at exit
 *   pgnfs mkfs [--force] [options]
 *                           create a file system (in the configured database,
 *                           or in the embedded cluster of --data DIR)
 *
 * Options are those of every pgnfs program (cfg_from_cmdline): --config FILE,
 * --set GROUP.KEY=VALUE, --data DIR, --port N, --conninfo STR, ...
 *
 * Exit status: 0 success, 1 runtime failure, 2 usage or configuration error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cfg.h"
#include "dbfs.h"
#include "emb.h"
#include "srv.h"

#define PGNFS_EXIT_OK    0
#define PGNFS_EXIT_FAIL  1
#define PGNFS_EXIT_USAGE 2

static const char pgnfs_usage[] =
    "usage: pgnfs COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  serve            serve NFSv3 from PostgreSQL (embedded cluster unless\n"
    "                   [database] conninfo is set)\n"
    "  mkfs [--force]   create a file system ([storage] schema, chunk_size,\n"
    "                   encoding); --force replaces an existing one\n"
    "\n"
    "options (all commands):\n"
    "  --config FILE          configuration file (see pgnfs.conf.example)\n"
    "  --set GROUP.KEY=VALUE  set any configuration key\n"
    "  --data DIR             embedded cluster directory (default ./pgnfs-data)\n"
    "  --conninfo STR         serve this database instead of the embedded one\n"
    "  --port N               NFS and MOUNT port, TCP and UDP (default 2049)\n"
    "  --listen ADDR          listen address (default 0.0.0.0)\n"
    "  --export \"PATH SPEC\"   e.g. \"/ 192.168.0.0/16(rw) *(ro)\"\n"
    "  --threads N            worker threads (default 4)\n"
    "  --log-level LEVEL      error, warning, info or debug\n";

/*
 * The database to use: the configured conninfo, or the embedded cluster,
 * started now (*cluster is set; the caller stops it). Returns the conninfo
 * or NULL after printing why.
 */
static const char *pgnfs_database(const cfg *c, emb_cluster **cluster)
{
    char *err = NULL;

    *cluster = NULL;
    if (c->conninfo && *c->conninfo)
        return c->conninfo;

    emb_opts opts = {
        .data_dir = c->data_dir,
        .pg_bindir = c->pg_bindir,
        .run_as = c->pg_user,
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
    o->root_mode = 0755;
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

/* Attach to the file system, creating it first if the database has none. */
static dbfs *pgnfs_attach(const cfg *c, const char *conninfo)
{
    dbfs_config dc = {
        .conninfo = conninfo,
        .relatime = c->relatime,
        .space_path = (c->conninfo && *c->conninfo) ? NULL : c->data_dir,
    };
    dbfs *fs = NULL;
    int rc = dbfs_open(&dc, &fs);

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

static int pgnfs_serve(const cfg *c)
{
    emb_cluster *cluster = NULL;
    const char *conninfo = pgnfs_database(c, &cluster);
    dbfs *fs = NULL;
    int rc = PGNFS_EXIT_FAIL;

    if (!conninfo)
        return PGNFS_EXIT_FAIL;
    fs = pgnfs_attach(c, conninfo);
    if (!fs)
        goto out;
    pgnfs_print_mount_hint(c);
    rc = srv_run(c, fs) == 0 ? PGNFS_EXIT_OK : PGNFS_EXIT_FAIL;
out:
    if (fs)
        dbfs_close(fs);
    if (cluster && emb_stop(cluster) != 0)
        rc = PGNFS_EXIT_FAIL;
    return rc;
}

static int pgnfs_mkfs_command(const cfg *c, bool force)
{
    emb_cluster *cluster = NULL;
    const char *conninfo = pgnfs_database(c, &cluster);
    int rc;

    if (!conninfo)
        return PGNFS_EXIT_FAIL;
    rc = pgnfs_mkfs(c, conninfo, force);
    if (cluster && emb_stop(cluster) != 0)
        rc = PGNFS_EXIT_FAIL;
    return rc;
}

int main(int argc, char **argv)
{
    char *err = NULL;
    cfg *c;
    int rc;

    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(pgnfs_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? PGNFS_EXIT_USAGE : PGNFS_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("pgnfs %s\n", PGNFS_VERSION);
        return PGNFS_EXIT_OK;
    }
    const char *command = argv[1];
    int sub_argc = argc - 1;
    char **sub_argv = argv + 1;

    c = cfg_from_cmdline(&sub_argc, &sub_argv, &err);
    if (!c) {
        g_printerr("pgnfs: %s\n", err);
        free(err);
        return PGNFS_EXIT_USAGE;
    }
    /* The level was validated by cfg_load. */
    srv_log_setup(c->log_level);

    bool force = false;
    for (int i = 1; i < sub_argc; i++) {
        if (strcmp(command, "mkfs") == 0 && strcmp(sub_argv[i], "--force") == 0) {
            force = true;
        } else {
            g_printerr("pgnfs %s: unknown argument '%s' (see pgnfs --help)\n", command,
                       sub_argv[i]);
            cfg_free(c);
            return PGNFS_EXIT_USAGE;
        }
    }

    if (strcmp(command, "serve") == 0) {
        rc = pgnfs_serve(c);
    } else if (strcmp(command, "mkfs") == 0) {
        rc = pgnfs_mkfs_command(c, force);
    } else {
        g_printerr("pgnfs: unknown command '%s' (see pgnfs --help)\n", command);
        rc = PGNFS_EXIT_USAGE;
    }
    cfg_free(c);
    return rc;
}
