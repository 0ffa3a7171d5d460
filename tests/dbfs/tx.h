/*
 * tx.h -- helpers of the tests of guarded files (test_xform*.c): a fresh
 * file system of TX_CHUNK chunks (the run's storage variant) with a key
 * file, opened with a root chain, and random writes (stable and
 * unstable), reads and truncations of one file checked against a model.
 */
#ifndef PGNFS_TEST_TX_H
#define PGNFS_TEST_TX_H

#include <stdbool.h>
#include <stdint.h>

#include "dbfs_xform.h"
#include "td.h"
#include "testlib.h"

/* Small chunks: many chunk boundaries in little data. */
#define TX_CHUNK 4096u
#define TX_MAX   (6u * TX_CHUNK + 777u)

/* The plug-in directory tx_open_fs configures (NULL: none). */
extern const char *tx_plugin_dir;

typedef struct {
    td_fs t;
    char *dir; /* temporary directory of the key files */
    char *key; /* its key file */
    char *conninfo;
} tx_env;

/* A key file of 32 random bytes, mode 0600, in dir (g_free the path). */
char *tx_key_file(const char *dir, const char *name);
/* Open conninfo with [xform] root_chain chain and key file key (both may
 * be NULL); a buffer cache and write-back when cache. Returns dbfs_open's
 * answer. */
int tx_open_fs(td_fs *t, const char *conninfo, const char *chain, const char *key, bool cache);
/* The configuration tx_open_fs opens with (the metadata caches off), for a
 * test to change before tx_open_with. */
dbfs_config tx_config(const char *conninfo, const char *chain, const char *key, bool cache);
/* Open cfg as tx_open_fs does. Returns dbfs_open's answer. */
int tx_open_with(td_fs *t, const dbfs_config *cfg);
/* A fresh file system of TX_CHUNK chunks (the run's storage variant). */
char *tx_fresh(void);
/* A fresh file system, a key, opened with root chain chain. */
void tx_env_open(tx_env *e, const char *chain, bool cache);
void tx_env_close(tx_env *e);
/* Text-like bytes (compressible) or random ones. */
void tx_fill(unsigned char *b, size_t n, bool text);
/* The whole file read back equals the model (size included). */
void tx_check(td_fs *t, dbfs_fh fh, const unsigned char *model, uint64_t size);
/* ops random writes (stable and unstable), reads and truncations of one
 * file against a model, then the whole file checked. */
void tx_model_run(td_fs *t, dbfs_fh fh, int ops, bool text);
/* The chain id of inode ino as SQL sees it (0: none). */
long tx_chain_of(const char *conninfo, uint64_t ino);
/* A dbfs_xform_check callback: counts into *(int *)arg, logs. */
void tx_count_problem(const dbfs_xform_problem *p, void *arg);

#endif /* PGNFS_TEST_TX_H */
