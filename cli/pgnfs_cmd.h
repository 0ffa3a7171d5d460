/*
 * pgnfs_cmd.h -- the commands of the `pgnfs` administration tool and what
 * they share: their help, finding the database (the configured one, or the
 * embedded cluster) and attaching to its file system.
 *
 * NOTES
 *   A command receives the loaded configuration and the arguments that
 *   cfg_from_cmdline() left (argv[0] is the command name). It checks them
 *   all before it creates a data directory, starts PostgreSQL or touches
 *   the network, and stops whatever it started on every path. It returns
 *   the process exit status: PGNFS_EXIT_OK, PGNFS_EXIT_FAIL (a runtime
 *   failure, already explained on stderr), PGNFS_EXIT_USAGE (bad arguments
 *   or a configuration that contradicts the file system), or its own
 *   documented codes (fsck). `--help` never reaches it: pgnfs_main.c
 *   prints the command's help text first.
 */
#ifndef PGNFS_CMD_H
#define PGNFS_CMD_H

#include <stdbool.h>

#include "cfg.h"
#include "dbfs.h"
#include "emb.h"

#define PGNFS_EXIT_OK    0
#define PGNFS_EXIT_FAIL  1
#define PGNFS_EXIT_USAGE 2

typedef struct {
    const char *name;
    const char *summary; /* one line for `pgnfs --help` */
    /* `pgnfs NAME --help`: usage, what it does, its arguments, examples
     * (the options every command takes follow it). */
    const char *help;
    int (*run)(const cfg *c, int argc, char **argv);
    /* Log at [log] level as configured; otherwise INFO lines (caches
     * opened, ...) are dropped: the command's own output is what counts. */
    bool chatty;
    /* -h asks for the help too (not for du, where it is -human-readable). */
    bool short_help;
    /* The exit status for bad arguments (fsck: 16, as fsck(8)). */
    int usage_status;
} pgnfs_cmd;

/* The help texts, each beside its command. */
extern const char pgnfs_help_serve[], pgnfs_help_mkfs[], pgnfs_help_stats[], pgnfs_help_sql[],
    pgnfs_help_du[], pgnfs_help_find[], pgnfs_help_fsck[], pgnfs_help_locks[], pgnfs_help_xform[],
    pgnfs_help_frontends[], pgnfs_help_conninfo[], pgnfs_help_snapshot[], pgnfs_help_diff[];

/* The command table (pgnfs_main.c), terminated by an entry with name NULL. */
extern const pgnfs_cmd pgnfs_cmds[];

/*
 * pgnfs_database -- the conninfo to use: the configured one, or that of the
 * embedded cluster in the data directory, started now (then *cluster is set
 * and the caller stops it with emb_stop). Returns NULL after printing why.
 */
const char *pgnfs_database(const cfg *c, emb_cluster **cluster);

/*
 * pgnfs_attach -- open the file system in conninfo; if the database holds
 * none and create is true, make one first as the configuration's [storage]
 * says; refuse it if the configuration contradicts it (cfg_check_fs).
 * Returns the dbfs (dbfs_close it), or NULL after printing why, with
 * *conflict true when the configuration was refused (a usage error) and
 * false for any other failure.
 */
dbfs *pgnfs_attach(const cfg *c, const char *conninfo, bool create, bool *conflict);

/* The commands. */
int pgnfs_cmd_serve(const cfg *c, int argc, char **argv);
int pgnfs_cmd_mkfs(const cfg *c, int argc, char **argv);
int pgnfs_cmd_stats(const cfg *c, int argc, char **argv);
int pgnfs_cmd_sql(const cfg *c, int argc, char **argv);
int pgnfs_cmd_du(const cfg *c, int argc, char **argv);
int pgnfs_cmd_find(const cfg *c, int argc, char **argv);
/* pgnfs fsck: exit codes as fsck(8), see pgnfs_fsck.c. */
int pgnfs_cmd_fsck(const cfg *c, int argc, char **argv);
int pgnfs_cmd_locks(const cfg *c, int argc, char **argv);
int pgnfs_cmd_xform(const cfg *c, int argc, char **argv);
int pgnfs_cmd_frontends(const cfg *c, int argc, char **argv);
int pgnfs_cmd_conninfo(const cfg *c, int argc, char **argv);
int pgnfs_cmd_snapshot(const cfg *c, int argc, char **argv);
int pgnfs_cmd_diff(const cfg *c, int argc, char **argv);

/* pgnfs snapshot restore (pgnfs_restore.c); argv: the words after
 * "restore". Returns an exit status. */
int pgnfs_snapshot_restore(const cfg *c, int argc, char **argv);

/*
 * pgnfs_front_stats -- `pgnfs stats`'s lines about the file system's
 * servers and the database's replication topology, when the database is
 * reachable without starting anything (a configured conninfo, or the
 * embedded cluster running); otherwise one line saying so. Cannot fail.
 */
void pgnfs_front_stats(const cfg *c);

/*
 * pgnfs_database_peek -- like pgnfs_database, but when the embedded
 * cluster is already running (a server uses it), its socket is used
 * as it is, without the data directory's lock: for commands that only
 * read (sql, du, find). It never creates a cluster (see
 * pgnfs_database_exists). Returns a conninfo (g_free it) and *cluster
 * when the cluster had to be started here (emb_stop it), or NULL after
 * printing why.
 */
char *pgnfs_database_peek(const cfg *c, emb_cluster **cluster);

/*
 * pgnfs_database_exists -- true when a database is configured ([database]
 * conninfo) or the data directory holds an embedded cluster; otherwise
 * false after printing which directory was looked at and what to give
 * instead. For the commands that work on an existing file system, so
 * that a wrong --data does not create a new cluster just to find it empty.
 */
bool pgnfs_database_exists(const cfg *c);

#endif /* PGNFS_CMD_H */
