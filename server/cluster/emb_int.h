/*
 * emb_int.h -- what the files of the embedded cluster share (not for use
 * outside server/cluster/):
 *
 *   emb_cluster.c  emb_start, emb_stop: create, start, adopt, stop
 *   emb_tools.c    PostgreSQL's tools run as the cluster user; pg_ctl;
 *                  postmaster.pid
 *   emb_wal.c      WAL sized for the disk; the space left on it
 *   emb_log.c      its log kept small: PostgreSQL's rotation, old files
 *                  removed, the end of the current one
 *   emb_diag.c     why the cluster stopped or did not start: the end of
 *                  its log and what to do
 *   emb_watch.c    the supervisor that restarts it while serving
 *
 * NOTES
 *   An emb_cluster is immutable after emb_start returns it, so the
 *   supervisor's thread may read it while the caller's threads serve.
 */
#ifndef PGNFS_EMB_INT_H
#define PGNFS_EMB_INT_H

#include <stdbool.h>
#include <sys/types.h>

#include "emb.h"

#define EMB_DBNAME "pgnfs"
#define EMB_PORT   "5432"
/* Seconds pg_ctl waits for a start or a stop. */
#define EMB_PG_CTL_WAIT "120"

struct emb_cluster {
    char *data_dir; /* absolute */
    char *pg_dir;   /* data_dir/pg */
    char *sock_dir; /* pg_dir/socket */
    char *log_file; /* pg_dir/postgresql.log */
    char *bindir;
    char *db_user;   /* the cluster's superuser role = its OS user */
    char *conninfo;  /* for database EMB_DBNAME */
    bool drop_privs; /* children run as uid/gid/groups below */
    uid_t uid;
    gid_t gid;
    gid_t *groups; /* the user's supplementary groups, resolved before any fork */
    int ngroups;
    int lock_fd;
    unsigned shared_buffers_mb; /* emb_opts': 0 = not given */
};

/*
 * emb_run -- run argv (NULL-terminated) to completion as the cluster user,
 * with an empty signal mask and default SIGPIPE, and no descriptor of this
 * process but stdin/stdout/stderr. Safe in a threaded process: the child
 * makes only system calls before exec. Returns 0, or -1 with *err (g_free)
 * naming the command, its exit status and its output.
 */
int emb_run(const emb_cluster *c, char **argv, char **err);

/*
 * emb_find_bindir -- the directory holding initdb, pg_ctl and createdb:
 * the configured one, else PATH, else `pg_config --bindir`, else the
 * newest /usr/lib/postgresql/N/bin. Returns a g_malloc'd path or NULL.
 */
char *emb_find_bindir(const char *configured);

/*
 * emb_pg_start -- pg_ctl start, waiting until the cluster accepts
 * connections, with the WAL settings of emb_wal_options for its disk and
 * its socket in sock_dir even if the directory was moved.
 * Returns 0, or -1 with *err (g_free) saying why, the end of the log and
 * what to do (emb_diagnose; `serving` as there).
 */
int emb_pg_start(const emb_cluster *c, bool serving, char **err);

/* emb_pg_stop -- pg_ctl stop -m fast. Returns 0, or -1 with *err (g_free). */
int emb_pg_stop(const emb_cluster *c, char **err);

/* emb_pg_status -- does a postmaster run from pg_dir (pg_ctl status)? */
bool emb_pg_status(const emb_cluster *c);

/*
 * emb_pid_alive -- does process pid exist, and not as a zombie? (A killed
 * postmaster stays a zombie until init reaps it, and kill(pid, 0) still
 * succeeds then.) Cannot fail.
 */
bool emb_pid_alive(pid_t pid);

/*
 * emb_pm_read -- the postmaster named by pg_dir/postmaster.pid: true with
 * *pid (and *ready: its status line says it accepts connections) when the
 * file names a process that exists; false when there is no file, it does
 * not parse, or its process is gone. Cannot fail otherwise.
 */
bool emb_pm_read(const emb_cluster *c, pid_t *pid, bool *ready);

/*
 * emb_wal_options -- the postgres options ("-c name=value ...") that size
 * the WAL for the disk under c's directory now (emb_wal_for_disk), and a
 * line saying so for the log in *why (both g_free). Never NULL.
 */
char *emb_wal_options(const emb_cluster *c, char **why);

/* --- the log (emb_log.c) ----------------------------------------------- */

/* The collector starts a new file past this many KiB; the newest
 * EMB_LOG_KEEP files stay. pg_ctl's own log file is cut to its last
 * EMB_LOG_STDERR_KEEP bytes at a start once it is over EMB_LOG_STDERR_MAX. */
#define EMB_LOG_FILE_KB     1024u
#define EMB_LOG_KEEP        4u
#define EMB_LOG_STDERR_MAX  (1024 * 1024)
#define EMB_LOG_STDERR_KEEP (64 * 1024)
/* Without inotify, how often the supervisor prunes the log, in ms. */
#define EMB_LOG_PRUNE_MS 5000

/*
 * emb_log_options -- the postgres options ("-c name=value ...") that make
 * PostgreSQL rotate its own log by size into pg_dir/log (g_free). Never
 * NULL.
 */
char *emb_log_options(void);

/* emb_log_dir -- pg_dir/log, where the collector writes (g_free). */
char *emb_log_dir(const emb_cluster *c);

/*
 * emb_log_prune -- remove the collector's files but the EMB_LOG_KEEP
 * newest; stopped (no postmaster runs): also cut pg_ctl's log file when
 * it is over EMB_LOG_STDERR_MAX. Returns how many files went. Failures
 * other than a file already gone are logged as warnings.
 */
unsigned emb_log_prune(const emb_cluster *c, bool stopped);

/*
 * emb_log_tail -- the last n lines of the log written last (the newest
 * collector file, or pg_ctl's file when that is newer): a g_malloc'd
 * string ("" when unreadable), and *path (g_free) the file it comes from.
 */
char *emb_log_tail(const emb_cluster *c, unsigned n, char **path);

/*
 * emb_diagnose -- the end of the cluster's log and what to do about what
 * it says, as lines ("last lines of LOG:", "  ...", "what to do: ...").
 * serving: the supervisor asks (it restarts the cluster by itself);
 * otherwise pgnfs is starting it. Returns a g_malloc'd string, possibly
 * without log lines when the log cannot be read.
 */
char *emb_diagnose(const emb_cluster *c, bool serving);

#endif /* PGNFS_EMB_INT_H */
