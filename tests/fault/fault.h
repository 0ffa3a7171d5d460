/*
 * fault.h -- what the fault-injection test programs (tests/fault/) share:
 * a server started with the program's own settings, content patterns and a
 * random generator for models, the server's call counters, and running
 * `pgnfs` commands.
 *
 * NOTES
 *   The programs use the protocol-test fixture (ptest.h): ft_init() fills
 *   its global `pt` (server, port, root handle), so pt_open() and the pt_*
 *   assertions work as in tests/proto. Cases run in-process (they restart
 *   the server or the database). State is process-wide, main thread only,
 *   except ft_rand and ft_pattern, which are pure.
 */
#ifndef PGNFS_FAULT_H
#define PGNFS_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptest.h"

/*
 * ft_init -- parse the GTest arguments and start a server with extra
 * settings (NULL-terminated "group.key=value", may be NULL); mount "/"
 * into pt.root. Aborts if the server does not start.
 */
void ft_init(int *argc, char ***argv, const char *const *settings);
/* Run the cases, stop the server, print the bytes verified; g_test_run's status. */
int ft_run(void);

/* A seeded generator (xorshift64*): the same seed, the same sequence. */
typedef struct {
    uint64_t s;
} ft_rng;
void ft_rng_seed(ft_rng *r, uint64_t seed);
uint64_t ft_rand(ft_rng *r);
/* Uniform in [0, n) (n > 0). */
uint64_t ft_below(ft_rng *r, uint64_t n);

/* n bytes that depend on (key, position): a version of a region's content. */
void ft_pattern(unsigned char *buf, size_t n, uint64_t key);

/* Bytes compared against a model by this program (thread-safe counter). */
void ft_verified_add(uint64_t n);
uint64_t ft_verified(void);

/*
 * ft_nfs_calls -- NFSv3 calls the server has counted since it started
 * (the sum of its stats "calls" over nfs3 procedures), asked for with
 * SIGUSR1 and read from its log. Aborts if no statistics appear.
 */
uint64_t ft_nfs_calls(void);

/*
 * ft_pgnfs -- run the `pgnfs` of this build with args (NULL-terminated) and
 * return its exit status; *output (may be NULL; g_free it) receives what
 * it printed on stdout and stderr.
 */
int ft_pgnfs(char **output, const char *const *args);

/*
 * ft_server_running -- true if the test server's process is still running:
 * not exited, not killed (a zombie counts as dead, unlike kill(pid, 0)).
 * Otherwise false, with *why (g_free it) saying how it ended, and the
 * process reaped: the program must then stop (g_error), not restart it.
 */
bool ft_server_running(char **why);

/* The server's WRITE verifier now (from a FILE_SYNC write of nothing in a
 * scratch file). */
uint64_t ft_write_verf(nr_ctx *c, const nr_fh *scratch);

/*
 * ft_private_mounts_or_skip -- give this process a mount namespace of its
 * own, with every mount private: what it mounts later is seen only by it
 * and its children (the server, PostgreSQL) and goes away with them. Not
 * root, or no mount namespace: prints why (naming the test `what`) and
 * exits 77 (ctest: skipped), never passing silently. Main thread, before
 * any other thread starts.
 */
void ft_private_mounts_or_skip(const char *what);

/*
 * ft_tmpfs -- mount a tmpfs of mb MiB (mode 0755) on a new directory under
 * $TMPDIR (or /tmp) and return the directory (g_free). When this process
 * ends, however it ends, a cleanup process unmounts it as soon as nothing
 * uses it any more (the fixture's own cleanup stops the server and
 * PostgreSQL first; after 60 s it detaches it) and removes the directory.
 * Aborts if it cannot mount. Call after ft_private_mounts_or_skip, and
 * before anything asks GLib for the temporary directory when the tmpfs is
 * to become $TMPDIR.
 */
char *ft_tmpfs(unsigned mb);

#endif /* PGNFS_FAULT_H */
