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
 *   DATA_DIR/pg/log/             PostgreSQL's log, rotated by size (a new
 *                                postgresql-DATE-TIME.log past 1 MiB; the 4
 *                                newest kept)
 *   DATA_DIR/pg/postgresql.log   what the postmaster says before its log
 *                                collector runs (start failures)
 *   DATA_DIR/pgnfs.lock          held (flock) while a pgnfs process drives it
 *
 * The cluster has one database for the file system, "pgnfs", owned by the
 * cluster user, who connects over the socket without a password.
 *
 * Its WAL is sized for the disk it is on at every start (emb_wal_for_disk),
 * so that WAL alone never fills that disk. While a server uses it, a
 * supervisor (emb_watch_start) notices when the postmaster stops, logs
 * why at error level and starts it again with backoff.
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
    /* shared_buffers in MiB, given at every start (0: PostgreSQL's own,
     * 128 MiB, or what postgresql.conf says). */
    unsigned shared_buffers_mb;
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
 * emb_stop -- stop the cluster (fast shutdown) if it runs, and free c.
 * Returns 0, or -1 after logging why the stop failed.
 */
int emb_stop(emb_cluster *c);

/* --- WAL and disk space (emb_wal.c) ------------------------------------ */

/*
 * The WAL settings for a disk (all in MiB, as postgresql.conf takes them):
 * checkpoints come after at most max_wal of WAL, so the WAL stays near
 * that size; min_wal is what is kept for recycling; slot_keep caps what a
 * replication slot may hold back.
 */
typedef struct {
    unsigned min_wal_mb;
    unsigned max_wal_mb;
    unsigned slot_keep_mb;
} emb_wal;

/*
 * emb_wal_for_disk -- the WAL settings for a file system of total_bytes
 * with avail_bytes free: max_wal_size the smaller of a sixteenth of the
 * file system and a quarter of what is free, between 32 MiB (two 16 MiB
 * segments, PostgreSQL's least) and 1 GiB (its default); min_wal_size a
 * sixty-fourth of the file system between 32 and 80 MiB (its default),
 * never above max_wal_size; max_slot_wal_keep_size = max_wal_size.
 * Cannot fail.
 */
void emb_wal_for_disk(unsigned long long total_bytes, unsigned long long avail_bytes, emb_wal *out);

/*
 * emb_reserve_for_disk -- the bytes a file system of total_bytes with
 * avail_bytes free keeps free for PostgreSQL itself, which data writes
 * must leave alone (the space guard: dbfs_config space_reserve): twice
 * max_wal_size of emb_wal_for_disk (the WAL between checkpoints, and what
 * is written while one runs), plus a thirty-second of the file system
 * between 24 MiB and 1 GiB (vacuum's maps, the relation cache, the
 * statistics, the log, temporary files). 256 MiB: 88 MiB; 4 GiB: 640 MiB;
 * 100 GiB and more: 3 GiB. Cannot fail.
 */
unsigned long long emb_reserve_for_disk(unsigned long long total_bytes,
                                        unsigned long long avail_bytes);

/* The file system under a cluster directory. */
typedef struct {
    unsigned long long total_bytes; /* its size */
    unsigned long long avail_bytes; /* free to an unprivileged user (PostgreSQL) */
} emb_space;

/*
 * emb_space_of -- how much space is left for the cluster in data_dir (the
 * directory of emb_opts; its pg/ when that exists): statvfs of the file
 * system that holds it. Callable from any thread, with or without a
 * running cluster. Returns 0, or a negative errno (the directory is not
 * there or cannot be measured).
 */
int emb_space_of(const char *data_dir, emb_space *out);

/* --- why it stopped (emb_diag.c) --------------------------------------- */

/*
 * emb_advice -- what to do about what a PostgreSQL log says (log_text: its
 * last lines), for the cluster in data_dir run by OS user `user`: a full
 * disk, a configuration error, a cluster made by another major version, an
 * old postmaster still alive, permissions, or else where to read. serving:
 * the supervisor restarts it by itself; otherwise pgnfs must be started
 * again. Returns a g_malloc'd sentence. Cannot fail.
 */
char *emb_advice(const char *log_text, const char *data_dir, const char *user, bool serving);

/* --- supervision while serving (emb_watch.c) --------------------------- */

typedef struct emb_watch emb_watch;

/*
 * emb_watch_start -- watch the postmaster of c from a thread of its own
 * (all signals blocked in it) until emb_watch_stop. When the postmaster
 * exits, for whatever reason, it logs an error with the end of the log and
 * what to do, then, with restart, starts the cluster again after 1, 2, 4
 * ... at most 60 s until it runs; without restart it waits for someone
 * else to start it. It logs when the cluster is back. A cluster started
 * by someone else meanwhile is adopted. c must outlive the watch.
 * Returns the watch, or NULL with *err (g_free) when no thread can start.
 */
emb_watch *emb_watch_start(emb_cluster *c, bool restart, char **err);

/*
 * emb_watch_stop -- end the watch (a restart under way finishes first)
 * and free w; afterwards nothing restarts the cluster (emb_stop may stop
 * it). NULL is fine. Cannot fail.
 */
void emb_watch_stop(emb_watch *w);

#endif /* PGNFS_EMB_H */
