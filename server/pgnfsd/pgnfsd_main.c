/*
 * pgnfsd_main.c -- `pgnfsd`, the bare NFS daemon: serves the pgnfs file
 * system of an existing PostgreSQL database in the foreground until
 * SIGINT or SIGTERM. It never creates a file system and never starts a
 * database (that is `pgnfs serve` / `pgnfs mkfs`).
 *
 *   pgnfsd --config FILE [--set GROUP.KEY=VALUE] [--port N] [--listen ADDR]
 *          [--conninfo STR] [--threads N] [--export "PATH SPEC"]
 *          [--log-level LEVEL]
 *
 * Exit status: 0 after a clean shutdown, 1 for a runtime failure (database
 * unreachable, no file system, port in use), 2 for a usage or
 * configuration error.
 *
 * NOTES
 *   Owns the cfg and the dbfs for the life of the process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cfg.h"
#include "dbfs.h"
#include "log.h"
#include "pgnfsd_run.h"

#define PGNFSD_EXIT_OK    0
#define PGNFSD_EXIT_FAIL  1
#define PGNFSD_EXIT_USAGE 2

static const char pgnfsd_usage[] =
    "usage: pgnfsd --config FILE [options]\n"
    "\n"
    "Serve NFSv3 and MOUNTv3 from the pgnfs file system in the PostgreSQL\n"
    "database of [database] conninfo (create it first with `pgnfs mkfs`).\n"
    "\n"
    "options:\n"
    "  --config FILE          configuration file (see pgnfs.conf.example)\n"
    "  --set GROUP.KEY=VALUE  set any configuration key (e.g. server.threads=8)\n"
    "  --conninfo STR         the database (libpq connection string)\n"
    "  --port N               NFS and MOUNT port, TCP and UDP (default 2049; 0 = any)\n"
    "  --listen ADDR          listen address (default 0.0.0.0)\n"
    "  --export \"PATH SPEC\"   e.g. \"/ 192.168.0.0/16(rw) *(ro)\"\n"
    "  --threads N            worker threads = database connections (default 16)\n"
    "  --log-level LEVEL      error, warning, info or debug\n"
    "  --help, --version\n"
    "\n"
    "Every key can also be set as PGNFS_GROUP_KEY in the environment\n"
    "(e.g. PGNFS_DATABASE_CONNINFO); the command line wins over the\n"
    "environment, which wins over the file.\n";

/* Open the file system of c's database; NULL after saying why. */
static dbfs *pgnfsd_open(const cfg *c)
{
    dbfs_config dc;
    dbfs *fs = NULL;
    int rc;

    cfg_dbfs_config(c, c->conninfo, &dc);
    rc = dbfs_open(&dc, &fs);
    if (rc == 0)
        return fs;
    if (rc == -ENOENT)
        g_critical("no pgnfs file system in that database: run `pgnfs mkfs`");
    else if (rc == -EPROTO)
        g_critical("the file system's schema is newer than this pgnfsd: upgrade pgnfs");
    else if (rc == -EAGAIN)
        g_critical("cannot reach the database of [database] conninfo (see above why)");
    else
        g_critical("cannot open the file system: %s", g_strerror(-rc));
    return NULL;
}

/* The configuration from the command line; NULL (and *status) to exit. */
static cfg *pgnfsd_config(int *argc, char ***argv, int *status)
{
    char *err = NULL;
    cfg *c = cfg_from_cmdline(argc, argv, &err);

    *status = PGNFSD_EXIT_USAGE;
    if (!c) {
        fprintf(stderr, "pgnfsd: %s\n", err);
        free(err);
        return NULL;
    }
    if (*argc > 1) {
        fprintf(stderr, "pgnfsd: unknown argument '%s' (see pgnfsd --help)\n", (*argv)[1]);
        cfg_free(c);
        return NULL;
    }
    if (!*c->conninfo) {
        fprintf(stderr, "pgnfsd needs [database] conninfo; for the embedded database use "
                        "`pgnfs serve`\n");
        cfg_free(c);
        return NULL;
    }
    return c;
}

int main(int argc, char **argv)
{
    char *err = NULL;
    dbfs *fs;
    cfg *c;
    int rc;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(pgnfsd_usage, stdout);
            return PGNFSD_EXIT_OK;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("pgnfsd %s\n", PGNFS_VERSION);
            return PGNFSD_EXIT_OK;
        }
    }
    if (!(c = pgnfsd_config(&argc, &argv, &rc)))
        return rc;
    log_setup(c->log_level);
    if (!(fs = pgnfsd_open(c))) {
        cfg_free(c);
        return PGNFSD_EXIT_FAIL;
    }
    rc = cfg_check_fs(c, fs, &err);
    if (rc != 0) {
        g_critical("%s", err);
        free(err);
        dbfs_close(fs);
        cfg_free(c);
        return rc == -EINVAL ? PGNFSD_EXIT_USAGE : PGNFSD_EXIT_FAIL;
    }
    rc = pgnfsd_run(c, fs) == 0 ? PGNFSD_EXIT_OK : PGNFSD_EXIT_FAIL;
    dbfs_close(fs);
    cfg_free(c);
    return rc;
}
