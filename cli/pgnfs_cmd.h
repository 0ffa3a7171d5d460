/*
 * pgnfs_cmd.h -- the commands of the `pgnfs` administration tool and what
 * they share: finding the database (the configured one, or the embedded
 * cluster) and attaching to its file system.
 *
 * NOTES
 *   A command receives the loaded configuration and the arguments that
 *   cfg_from_cmdline() left (argv[0] is the command name). It returns the
 *   process exit status: PGNFS_EXIT_OK, PGNFS_EXIT_FAIL (a runtime failure,
 *   already explained on stderr), PGNFS_EXIT_USAGE (bad arguments), or its
 *   own documented codes (fsck).
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
    const char *usage; /* one line: arguments and what the command does */
    int (*run)(const cfg *c, int argc, char **argv);
    /* Log at [log] level as configured; otherwise INFO lines (caches
     * opened, ...) are dropped: the command's own output is what counts. */
    bool chatty;
} pgnfs_cmd;

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
 * says. Returns the dbfs (dbfs_close it), or NULL after printing why.
 */
dbfs *pgnfs_attach(const cfg *c, const char *conninfo, bool create);

/* The commands. */
int pgnfs_cmd_serve(const cfg *c, int argc, char **argv);
int pgnfs_cmd_mkfs(const cfg *c, int argc, char **argv);
int pgnfs_cmd_stats(const cfg *c, int argc, char **argv);
int pgnfs_cmd_sql(const cfg *c, int argc, char **argv);
int pgnfs_cmd_du(const cfg *c, int argc, char **argv);
int pgnfs_cmd_find(const cfg *c, int argc, char **argv);
/* pgnfs fsck: exit codes as fsck(8), see pgnfs_fsck.c. */
int pgnfs_cmd_fsck(const cfg *c, int argc, char **argv);

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
