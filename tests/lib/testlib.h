/*
 * testlib.h -- fixtures shared by the test programs: a throw-away PostgreSQL
 * cluster per test program, fresh databases, and a running pgnfs server.
 *
 * NOTES
 *   Everything a fixture starts is stopped and removed at process exit
 *   (atexit), also when a test fails. Failures to set up abort the test
 *   program with a message that says what is missing.
 *   Set PGNFS_TEST_KEEP=1 to keep temporary directories for inspection.
 */
#ifndef PGNFS_TESTLIB_H
#define PGNFS_TESTLIB_H

#include <stdbool.h>

#include "dbfs.h"

/* The conninfo of this program's private cluster, started on first call. */
const char *tl_cluster_conninfo(void);

/*
 * tl_fresh_db -- create an empty database in the private cluster and return
 * its conninfo (g_free it). Every call gives a new database.
 */
char *tl_fresh_db(void);

/* tl_fresh_fs -- tl_fresh_db() with dbfs_mkfs() applied (default options,
 * root directory owned by root, mode 0777 so unprivileged test uids can
 * work in it). g_free the result. */
char *tl_fresh_fs(void);

/*
 * tl_mkfs_opts -- apply the environment variable PGNFS_TEST_MKFS to *o
 * (what tl_fresh_fs() does): "storage.schema=inversion storage.encoding=
 * base64 storage.chunk_size=4096 storage.hybrid_threshold=16384", the keys
 * of pgnfs.conf's [storage]. ctest uses it to run a dbfs suite once per
 * storage variant. Aborts on a key or value it does not know.
 */
void tl_mkfs_opts(dbfs_mkfs_opts *o);

typedef struct tl_server tl_server;

/*
 * tl_server_start -- run `pgnfs serve` (from this build) on a free port with
 * a fresh data directory and the given extra configuration (NULL-terminated
 * "group.key=value" strings, may be NULL); returns once it answers MOUNT
 * NULL. The default export is "/" for 127.0.0.1 with rw,no_root_squash, and
 * the root directory is mode 0777. The environment variable
 * PGNFS_TEST_SERVER_SET ("group.key=value group.key=value") adds settings to
 * every server a test starts: ctest uses it to run a suite once per variant
 * (storage layout, caches).
 */
tl_server *tl_server_start(const char *const *overrides);
/* tl_free_port -- a port free for both TCP and UDP on 127.0.0.1 now (for
 * a server's other listeners: metrics, a portmapper). Aborts if none is
 * found. */
unsigned tl_free_port(void);
/* tl_metrics -- GET /metrics from 127.0.0.1:port: the page (g_free it),
 * or NULL when it cannot be read. */
char *tl_metrics(unsigned port);
/* Stop the server (SIGTERM) and start it again on the same data and port. */
void tl_server_restart(tl_server *s);
/* SIGKILL the server, then start it again (crash recovery tests). */
void tl_server_crash_restart(tl_server *s);
unsigned tl_server_port(const tl_server *s);
/* The server's process id (for /proc/PID/status, signals); 0 if stopped. */
int tl_server_pid(const tl_server *s);
/* "nfs://127.0.0.1/<path>?nfsport=P&mountport=P&version=3" (g_free it). */
char *tl_server_url(const tl_server *s, const char *path);
/* The conninfo of the server's database (for tests that inspect it). */
const char *tl_server_conninfo(const tl_server *s);
/* Everything the server has logged so far (g_free it). */
char *tl_server_log(const tl_server *s);
/*
 * tl_server_pg_ctl -- run `pg_ctl ACTION` on the server's embedded
 * PostgreSQL (DIR/data/pg) as the cluster's owner: "stop" (fast),
 * "stop-immediate" (a crash of the database), "start". The server keeps
 * running. Returns pg_ctl's exit status (0 = done); aborts if pg_ctl
 * cannot be run at all.
 */
int tl_server_pg_ctl(const tl_server *s, const char *action);
/* The server's data directory (what `pgnfs --data` takes; owned by s). */
const char *tl_server_data_dir(const tl_server *s);
/* The `pgnfs` binary of this build (for tests that run its commands). */
const char *tl_pgnfs_bin(void);
void tl_server_stop(tl_server *s);

#endif
