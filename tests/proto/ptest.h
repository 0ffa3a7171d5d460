/*
 * ptest.h -- what the protocol test programs share: one pgnfs server per
 * program, a fresh subdirectory per test case, the test users, and
 * assertions that print NFS statuses by name.
 *
 * NOTES
 *   pt_init() starts the server with tl_server_start() (a fresh database,
 *   export "/" rw,no_root_squash for 127.0.0.1, root directory 0777);
 *   pt_run() runs the cases and stops it.
 *
 *   Developer option: with PGNFS_TEST_NFS_PORT set, the programs use an
 *   NFSv3 server that already listens on 127.0.0.1 at that port (NFS and
 *   MOUNT on the same port unless PGNFS_TEST_MOUNT_PORT says otherwise)
 *   instead, mounting PGNFS_TEST_NFS_EXPORT (default "/"). Meant for comparing with another server
 * such as nfs-ganesha; the tests do not need it. Steps that need our server (a restart) are skipped
 * then.
 *
 *   Cases registered with pt_add() run each in a forked child process, so a
 *   failed assertion (which aborts) ends only its own case: the program goes
 *   on with the next one and reports every failure, while all cases still
 *   share the one server. A case that restarts the server, or that leaves
 *   state for later cases, is registered with pt_add_inproc() instead.
 *   PGNFS_TEST_NOFORK=1 runs every case in-process (for a debugger).
 *
 *   State is process-wide (one server per program) and used from the main
 *   thread only.
 */
#ifndef PGNFS_PTEST_H
#define PGNFS_PTEST_H

#include <stdbool.h>
#include <stdint.h>

#include "nfsraw.h"
#include "testlib.h"

/* Test users: root, the owner of the files a case makes, another user. */
#define PT_OWNER_UID 1000
#define PT_OWNER_GID 1000
#define PT_OTHER_UID 2000
#define PT_OTHER_GID 2000
extern const nr_cred pt_root, pt_owner, pt_other;

typedef struct {
    tl_server *server;   /* NULL when PGNFS_TEST_NFS_PORT is used */
    unsigned port;       /* NFS */
    unsigned mount_port; /* MOUNT: the same port for pgnfs */
    const char *export_path;
    nr_fh root; /* the export's root handle */
} pt_env;

extern pt_env pt;

/* Parse GTest arguments and start the server. Aborts if it cannot start. */
void pt_init(int *argc, char ***argv);
/* Run the registered cases, stop the server, return the g_test_run status. */
int pt_run(void);
/* Register a case run in a child process / in this process (see NOTES). */
void pt_add(const char *path, void (*fn)(void));
void pt_add_inproc(const char *path, void (*fn)(void));

/* Restart the server on the same data; false (nothing done) in override mode. */
bool pt_restart(void);

/* A connected context acting as cred (NULL = root); aborts on failure. */
nr_ctx *pt_open(const nr_cred *cred);
/* The same, connected to the MOUNT port. */
nr_ctx *pt_open_mount(const nr_cred *cred);
/* The root handle of export path, mounted as root; aborts on failure. */
nr_fh pt_mount_root(const char *path);

/*
 * pt_fresh_dir -- a new, empty directory under the export root for the
 * running case, mode 0777, owned by root (made through a context of its
 * own). Returns its handle.
 */
nr_fh pt_fresh_dir(void);

/* Assert a status; on NR_RPC_FAILED the message includes nr_error(c). */
#define pt_stat(c, got, want) pt_check_stat((c), __FILE__, __LINE__, #got, (got), (want))
#define pt_ok(c, got)         pt_stat((c), (got), NFS3_OK)
void pt_check_stat(nr_ctx *c, const char *file, int line, const char *expr, int got, int want);

/* Assert two fattr3 times are equal, printing both. */
#define pt_assert_time(a, b) pt_check_time(__FILE__, __LINE__, #a, (a), #b, (b))
void pt_check_time(const char *file, int line, const char *an, nfstime3 a, const char *bn,
                   nfstime3 b);

/* Helpers that assert success and return what a test needs next. */
fattr3 pt_getattr(nr_ctx *c, const nr_fh *fh);
nr_fh pt_lookup(nr_ctx *c, const nr_fh *dir, const char *name);
/* GUARDED create of a regular file with mode `mode`. */
nr_fh pt_create(nr_ctx *c, const nr_fh *dir, const char *name, uint32_t mode);
nr_fh pt_mkdir(nr_ctx *c, const nr_fh *dir, const char *name, uint32_t mode);
/* FILE_SYNC write of all len bytes. */
void pt_write(nr_ctx *c, const nr_fh *fh, uint64_t off, const void *data, uint32_t len);
/* All of fh read through NFS (64 KiB READs up to EOF); the caller frees it. */
GByteArray *pt_read_all(nr_ctx *c, const nr_fh *fh);
void pt_chmod(nr_ctx *c, const nr_fh *fh, uint32_t mode);
void pt_chown(nr_ctx *c, const nr_fh *fh, uint32_t uid, uint32_t gid);

/* The handle in a post_op_fh3, asserting it is there. */
nr_fh pt_post_fh(const post_op_fh3 *p);
/* The attributes in a post_op_attr, asserting they are there. */
fattr3 pt_post_attr(const post_op_attr *p);

/* Credential helper: uid, gid and supplementary groups. */
nr_cred pt_cred(uint32_t uid, uint32_t gid, uint32_t ngroups, const uint32_t *groups);

#endif /* PGNFS_PTEST_H */
