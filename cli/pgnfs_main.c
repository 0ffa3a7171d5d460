/*
 * pgnfs_main.c -- `pgnfs`, the administration tool: finds the command in
 * pgnfs_cmds[], loads the configuration from the command line, and runs the
 * command (each lives in its own pgnfs_<name>.c; see pgnfs_cmd.h).
 *
 * Options are those of every pgnfs program (cfg_from_cmdline): --config FILE,
 * --set GROUP.KEY=VALUE, --data DIR, --port N, --conninfo STR, ...
 *
 * Exit status: 0 success, 1 runtime failure, 2 usage or configuration error
 * (commands may document more, as fsck does).
 *
 * Logging: serve and mkfs log at [log] level; the other commands, whose
 * output is the point, drop INFO lines unless the level is debug.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "pgnfs_cmd.h"
#include "log.h"

const pgnfs_cmd pgnfs_cmds[] = {
    {"serve", "serve NFSv3 from PostgreSQL (embedded cluster unless [database] conninfo is set)",
     pgnfs_cmd_serve, true},
    {"mkfs",
     "[--force]  create a file system ([storage] schema, chunk_size, encoding); --force "
     "replaces an existing one",
     pgnfs_cmd_mkfs, true},
    {"stats",
     "[--url URL] [--interval S] [--watch] [--once]  live figures of a running server (from its "
     "[metrics] endpoint)",
     pgnfs_cmd_stats, false},
    {"sql", "[psql arguments]  psql on the file system's database", pgnfs_cmd_sql, false},
    {"du", "[-s] [-d N] [-b|-h] [--apparent-size] [PATH...]  disk usage, answered in SQL",
     pgnfs_cmd_du, false},
    {"find",
     "[PATH...] [-name PAT] [-type T] [-size [+-]N[ckMG]] [-maxdepth N] [-mindepth N] [-ls]  "
     "find, answered in SQL",
     pgnfs_cmd_find, false},
    {"fsck",
     "[--repair] [-q]  check the file system's invariants; exit 0 clean, 1 all repaired, 4 "
     "problems left, 8 error",
     pgnfs_cmd_fsck, false},
    {NULL, NULL, NULL, false},
};

static const char pgnfs_options[] =
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

static void pgnfs_print_usage(FILE *out)
{
    fputs("usage: pgnfs COMMAND [arguments] [options]\n\ncommands:\n", out);
    for (const pgnfs_cmd *cmd = pgnfs_cmds; cmd->name; cmd++)
        fprintf(out, "  %-8s %s\n", cmd->name, cmd->usage);
    fputs("\n", out);
    fputs(pgnfs_options, out);
}

int main(int argc, char **argv)
{
    char *err = NULL;
    const pgnfs_cmd *cmd;
    cfg *c;
    int rc;

    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        pgnfs_print_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? PGNFS_EXIT_USAGE : PGNFS_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("pgnfs %s\n", PGNFS_VERSION);
        return PGNFS_EXIT_OK;
    }
    for (cmd = pgnfs_cmds; cmd->name; cmd++)
        if (strcmp(cmd->name, argv[1]) == 0)
            break;
    if (!cmd->name) {
        g_printerr("pgnfs: unknown command '%s' (see pgnfs --help)\n", argv[1]);
        return PGNFS_EXIT_USAGE;
    }

    int sub_argc = argc - 1;
    char **sub_argv = argv + 1;
    c = cfg_from_cmdline(&sub_argc, &sub_argv, &err);
    if (!c) {
        g_printerr("pgnfs: %s\n", err);
        free(err);
        return PGNFS_EXIT_USAGE;
    }
    /* The level was validated by cfg_load. */
    log_setup(!cmd->chatty && strcmp(c->log_level, "info") == 0 ? "warning" : c->log_level);
    rc = cmd->run(c, sub_argc, sub_argv);
    cfg_free(c);
    return rc;
}
