/*
 * emb.h -- the embedded private PostgreSQL cluster.
 *
 * With no database configured, pgnfs runs its own cluster in a data
 * directory: initdb the first time, pg_ctl start on a Unix socket inside that
 * directory (no TCP), pg_ctl stop -m fast at exit. Tests use the same code for
 * their throw-away databases.
 *
 * When the caller is root (initdb refuses to run as root), the cluster runs
 * as an unprivileged user (default "postgres") that owns the cluster
 * directory; the socket directory stays private to that user and root.
 *
 * Layout under DATA_DIR:
 *   DATA_DIR/pg/                 the PostgreSQL data directory
 *   DATA_DIR/pg/socket/          the Unix socket directory
 *   DATA_DIR/pg/postgresql.log   the server log
 *   DATA_DIR/pgnfs.lock          held (flock) while a pgnfs process drives it
 *
 * The cluster has one database for the file system, "pgnfs", owned by the
 * cluster user, who connects over the socket without a password.
 */
#ifndef PGNFS_EMB_H
#define PGNFS_EMB_H

#include <stdbool.h>

typedef struct emb_cluster emb_cluster;

typedef struct {
    const char *data_dir;  /* required */
    const char *pg_bindir; /* NULL or "": search PATH, pg_config, /usr/lib/postgresql/N/bin */
    const char *run_as;    /* NULL or "": "postgres"; used only when euid is 0 */
    /* Settings appended to postgresql.conf at initdb time, "key = value\n"
     * lines (may be NULL). */
    const char *extra_conf;
} emb_opts;

/*
 * emb_start -- create the cluster if DATA_DIR/pg does not exist, then start it
 * (or adopt it if it is already running from this directory, e.g. after a
 * crash of the previous pgnfs) and wait until it accepts connections; make
 * sure the "pgnfs" database exists. Returns the cluster, or NULL with *err set to a
 * malloc'd message that says what failed and what to do (caller frees).
 */
emb_cluster *emb_start(const emb_opts *opts, char **err);

/* A libpq conninfo for the cluster's "pgnfs" database (owned by c). */
const char *emb_conninfo(const emb_cluster *c);

/*
 * emb_conninfo_db -- a malloc'd conninfo for database `dbname` of the
 * cluster (caller frees).
 */
char *emb_conninfo_db(const emb_cluster *c, const char *dbname);

/*
 * emb_stop -- stop the cluster (fast shutdown) if this process started it,
 * and free c. Returns 0, or -1 after logging why the stop failed.
 */
int emb_stop(emb_cluster *c);

#endif /* PGNFS_EMB_H */
