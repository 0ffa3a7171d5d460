/*
 * pgnfs_main.c -- `pgnfs`, the administration tool: finds the command in
 * pgnfs_cmds[], answers --help, loads the configuration from the command
 * line, and runs the command (each lives in its own pgnfs_<name>.c; see
 * pgnfs_cmd.h).
 *
 *   pgnfs --help | -h | help [COMMAND]     the commands, or one's help
 *   pgnfs COMMAND --help                   the command's help (also -h,
 *                                          but for du, where -h is
 *                                          --human-readable)
 *   pgnfs --version
 *
 * Options are those of every pgnfs program (cfg_from_cmdline): --config
 * FILE, --set GROUP.KEY=VALUE, --data DIR, --port N, --conninfo STR, ...
 * Help is printed before the configuration is even loaded, so it works
 * with any other argument and never touches a data directory.
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
    {"serve", "serve NFSv3 from PostgreSQL (the embedded cluster unless --conninfo)",
     pgnfs_help_serve, pgnfs_cmd_serve, true, true, PGNFS_EXIT_USAGE},
    {"mkfs", "[--force]  create a file system as [storage] says", pgnfs_help_mkfs, pgnfs_cmd_mkfs,
     true, true, PGNFS_EXIT_USAGE},
    {"stats", "[--watch] [--once] [--interval S] [--url URL]  live figures of a running server",
     pgnfs_help_stats, pgnfs_cmd_stats, false, true, PGNFS_EXIT_USAGE},
    {"sql", "[psql arguments]  psql on the file system's database", pgnfs_help_sql, pgnfs_cmd_sql,
     false, true, PGNFS_EXIT_USAGE},
    {"du", "[-s] [-d N] [-b] [-h] [PATH...]  disk usage, answered in SQL", pgnfs_help_du,
     pgnfs_cmd_du, false, false, PGNFS_EXIT_USAGE},
    {"find", "[PATH...] [-name PAT] [-type T] [-size [+-]N] [-ls] ...  find, answered in SQL",
     pgnfs_help_find, pgnfs_cmd_find, false, true, PGNFS_EXIT_USAGE},
    {"fsck", "[--repair] [-q]  check the file system's invariants (and repair them)",
     pgnfs_help_fsck, pgnfs_cmd_fsck, false, true, 16},
    {"locks", "  the file locks clients hold and wait for, answered in SQL", pgnfs_help_locks,
     pgnfs_cmd_locks, false, true, PGNFS_EXIT_USAGE},
    {"xform", "set PATH CHAIN | apply PATH | show PATH... | list  transformation chains",
     pgnfs_help_xform, pgnfs_cmd_xform, false, true, PGNFS_EXIT_USAGE},
    {"snapshot", "create NAME | list | delete NAME... | reclaim | restore NAME PATH  snapshots",
     pgnfs_help_snapshot, pgnfs_cmd_snapshot, false, true, PGNFS_EXIT_USAGE},
    {"diff", "SNAP1 [SNAP2]  what changed between two snapshots, or since one", pgnfs_help_diff,
     pgnfs_cmd_diff, false, true, PGNFS_EXIT_USAGE},
    {"frontends", "  the servers registered on the file system", pgnfs_help_frontends,
     pgnfs_cmd_frontends, false, true, PGNFS_EXIT_USAGE},
    {"conninfo", "  the libpq connection string of the file system's database", pgnfs_help_conninfo,
     pgnfs_cmd_conninfo, false, true, PGNFS_EXIT_USAGE},
    {NULL, NULL, NULL, NULL, false, false, 0},
};

/* The options every command takes; %s is the default data directory. */
static const char pgnfs_options[] =
    "options of every command:\n"
    "  --config FILE          configuration file (every key: pgnfs.conf.example)\n"
    "  --set GROUP.KEY=VALUE  set any configuration key, e.g. --set metrics.enable=true\n"
    "  --data DIR             the embedded PostgreSQL cluster's directory\n"
    "                         (default here: %s)\n"
    "  --conninfo STR         use this PostgreSQL database instead of the embedded one\n"
    "  --port N               NFS and MOUNT port, TCP and UDP (default 2049)\n"
    "  --listen ADDR          listen address (default 0.0.0.0)\n"
    "  --export \"PATH SPEC\"   e.g. \"/ 192.168.0.0/16(rw) *(ro)\"\n"
    "  --threads N            worker threads (default 16)\n"
    "  --log-level LEVEL      error, warning, info or debug\n"
    "Every key can also be set as PGNFS_GROUP_KEY in the environment.\n";

static void pgnfs_print_options(FILE *out)
{
    char *dir = cfg_default_data_dir();

    fprintf(out, pgnfs_options, dir);
    g_free(dir);
}

static void pgnfs_print_usage(FILE *out)
{
    char *dir = cfg_default_data_dir();

    fputs("usage: pgnfs COMMAND [arguments] [options]\n\n"
          "pgnfs keeps a whole file system in PostgreSQL and serves it over NFSv3.\n\n"
          "commands:\n",
          out);
    for (const pgnfs_cmd *cmd = pgnfs_cmds; cmd->name; cmd++)
        fprintf(out, "  %-6s %s\n", cmd->name, cmd->summary);
    fprintf(out,
            "  help   [COMMAND]  this text, or a command's\n\n"
            "The file system lives in the database of [database] conninfo (--conninfo),\n"
            "or else in the embedded PostgreSQL cluster of the data directory (--data;\n"
            "here %s, the same for every command: /var/lib/pgnfs for root,\n"
            "$XDG_DATA_HOME/pgnfs or ~/.local/share/pgnfs for other users).\n\n",
            dir);
    g_free(dir);
    pgnfs_print_options(out);
    fputs("\nRun `pgnfs COMMAND --help` for a command's arguments and examples.\n", out);
}

static void pgnfs_print_help(const pgnfs_cmd *cmd)
{
    fputs(cmd->help, stdout);
    fputs("\n", stdout);
    pgnfs_print_options(stdout);
}

static const pgnfs_cmd *pgnfs_find_cmd(const char *name)
{
    for (const pgnfs_cmd *cmd = pgnfs_cmds; cmd->name; cmd++)
        if (strcmp(cmd->name, name) == 0)
            return cmd;
    return NULL;
}

/* Does the command line ask cmd for its help (before any "--")? */
static bool pgnfs_wants_help(const pgnfs_cmd *cmd, int argc, char **argv)
{
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || (cmd->short_help && strcmp(argv[i], "-h") == 0))
            return true;
    return false;
}

int main(int argc, char **argv)
{
    char *err = NULL;
    const pgnfs_cmd *cmd;
    cfg *c;
    int rc;

    if (argc < 2) {
        pgnfs_print_usage(stderr);
        return PGNFS_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        (strcmp(argv[1], "help") == 0 && argc == 2)) {
        pgnfs_print_usage(stdout);
        return PGNFS_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0) {
        cmd = pgnfs_find_cmd(argv[2]);
        if (!cmd || argc > 3) {
            g_printerr("pgnfs help: '%s' is not a command (see pgnfs --help)\n", argv[2]);
            return PGNFS_EXIT_USAGE;
        }
        pgnfs_print_help(cmd);
        return PGNFS_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("pgnfs %s\n", PGNFS_VERSION);
        return PGNFS_EXIT_OK;
    }
    cmd = pgnfs_find_cmd(argv[1]);
    if (!cmd) {
        g_printerr("pgnfs: unknown command '%s' (see pgnfs --help)\n", argv[1]);
        return PGNFS_EXIT_USAGE;
    }
    if (pgnfs_wants_help(cmd, argc, argv)) {
        pgnfs_print_help(cmd);
        return PGNFS_EXIT_OK;
    }

    int sub_argc = argc - 1;
    char **sub_argv = argv + 1;
    c = cfg_from_cmdline(&sub_argc, &sub_argv, &err);
    if (!c) {
        g_printerr("pgnfs %s: %s (see pgnfs %s --help)\n", cmd->name, err, cmd->name);
        free(err);
        return cmd->usage_status;
    }
    /* The level was validated by cfg_load. */
    log_setup(!cmd->chatty && strcmp(c->log_level, "info") == 0 ? "warning" : c->log_level);
    rc = cmd->run(c, sub_argc, sub_argv);
    cfg_free(c);
    return rc;
}
