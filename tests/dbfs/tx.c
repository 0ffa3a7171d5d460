/*
 * tx.c -- what the tests of guarded files share (tx.h): file systems with
 * small chunks and a key, and random operations against a model.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "tx.h"

const char *tx_plugin_dir;

/* A key file of 32 random bytes, mode 0600, in dir. */
char *tx_key_file(const char *dir, const char *name)
{
    char *path = g_build_filename(dir, name, NULL);
    unsigned char k[32];
    int fd;

    for (size_t i = 0; i < sizeof k; i++)
        k[i] = (unsigned char)g_random_int();
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(write(fd, k, sizeof k), ==, (ssize_t)sizeof k);
    close(fd);
    return path;
}

/* tx_config -- see tx.h. */
dbfs_config tx_config(const char *conninfo, const char *chain, const char *key, bool cache)
{
    dbfs_config cfg = {0};

    cfg.conninfo = conninfo;
    cfg.relatime = true;
    cfg.xform_root_chain = chain;
    cfg.xform_key_file = key;
    cfg.xform_plugin_dir = tx_plugin_dir;
    cfg.buffer_cache_bytes = cache ? 64u * TX_CHUNK : 0;
    cfg.writeback_bytes = cache ? 1u << 20 : 0;
    return cfg;
}

/* tx_open_with -- see tx.h. */
int tx_open_with(td_fs *t, const dbfs_config *cfg)
{
    int rc;

    memset(t, 0, sizeof *t);
    rc = dbfs_open(cfg, &t->fs);
    if (rc != 0)
        return rc;
    td_rc(dbfs_conn_open(t->fs, &t->c), 0);
    t->conninfo = g_strdup(cfg->conninfo);
    t->root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t->fs)->root_gen, 0};
    return 0;
}

/* tx_open_fs -- see tx.h. */
int tx_open_fs(td_fs *t, const char *conninfo, const char *chain, const char *key, bool cache)
{
    dbfs_config cfg = tx_config(conninfo, chain, key, cache);

    return tx_open_with(t, &cfg);
}

/* A fresh file system of TX_CHUNK chunks (the run's storage variant). */
char *tx_fresh(void)
{
    dbfs_mkfs_opts o = {.root_mode = 0777};
    char *conninfo;

    tl_mkfs_opts(&o);
    o.chunk_size = TX_CHUNK;
    conninfo = tl_fresh_db();
    td_rc(dbfs_mkfs(conninfo, &o), 0);
    return conninfo;
}

void tx_env_open(tx_env *e, const char *chain, bool cache)
{
    memset(e, 0, sizeof *e);
    e->dir = g_dir_make_tmp("pgnfs-xf-XXXXXX", NULL);
    g_assert_nonnull(e->dir);
    e->key = tx_key_file(e->dir, "key");
    e->conninfo = tx_fresh();
    td_rc(tx_open_fs(&e->t, e->conninfo, chain, e->key, cache), 0);
}

void tx_env_close(tx_env *e)
{
    char *k2 = g_build_filename(e->dir, "key2", NULL);

    td_close(&e->t);
    unlink(e->key);
    unlink(k2);
    rmdir(e->dir);
    g_free(k2);
    g_free(e->key);
    g_free(e->dir);
    g_free(e->conninfo);
}

/* Text-like bytes (compressible) or random ones. */
void tx_fill(unsigned char *b, size_t n, bool text)
{
    static const char words[] = "the quick brown fox jumps over the lazy dog; ";

    for (size_t i = 0; i < n; i++)
        b[i] = text ? (unsigned char)words[(i + g_random_int_range(0, 2)) % (sizeof words - 1)]
                    : (unsigned char)g_random_int();
}

/* The whole file read back equals the model (size included). */
void tx_check(td_fs *t, dbfs_fh fh, const unsigned char *model, uint64_t size)
{
    dbfs_cred root = td_root();
    unsigned char *buf = g_malloc0(TX_MAX + 1);
    dbfs_attr a = td_getattr(t, fh);

    g_assert_cmpuint(a.size, ==, size);
    if (size > 0)
        td_read(t, &root, fh, 0, buf, (uint32_t)size);
    g_assert_cmpmem(buf, size, model, size);
    g_free(buf);
}

/* Random writes (stable and unstable), reads and truncations of one file
 * against a model. */
void tx_model_run(td_fs *t, dbfs_fh fh, int ops, bool text)
{
    dbfs_cred root = td_root();
    unsigned char *model = g_malloc0(TX_MAX), *data = g_malloc(TX_MAX), *buf = g_malloc(TX_MAX);
    uint64_t size = 0;

    for (int i = 0; i < ops; i++) {
        int what = g_random_int_range(0, 10);

        if (what < 6) {
            uint32_t off = (uint32_t)g_random_int_range(0, TX_MAX - 1);
            uint32_t len = (uint32_t)g_random_int_range(1, (int)MIN(TX_MAX - off, 3 * TX_CHUNK));
            dbfs_stable how = what < 3 ? DBFS_FILE_SYNC : DBFS_UNSTABLE, got;

            tx_fill(data, len, text);
            td_rc(dbfs_write(t->c, &root, fh, off, data, len, how, &got, NULL), 0);
            if (off > size)
                memset(model + size, 0, off - size);
            memcpy(model + off, data, len);
            size = MAX(size, (uint64_t)off + len);
        } else if (what < 8) {
            uint32_t off = (uint32_t)g_random_int_range(0, TX_MAX);
            uint32_t len = (uint32_t)g_random_int_range(1, 2 * TX_CHUNK);
            uint32_t n = 0, want;
            bool eof;

            td_rc(dbfs_read(t->c, &root, fh, off, len, buf, &n, &eof, NULL), 0);
            want = off >= size ? 0 : (uint32_t)MIN(len, size - off);
            g_assert_cmpuint(n, ==, want);
            g_assert_cmpmem(buf, n, model + off, want);
        } else if (what == 8) {
            dbfs_sattr sa = {.set = DBFS_SET_SIZE};

            sa.size = (uint64_t)g_random_int_range(0, TX_MAX);
            td_rc(dbfs_setattr(t->c, &root, fh, &sa, NULL, NULL), 0);
            if (sa.size > size)
                memset(model + size, 0, sa.size - size);
            size = sa.size;
        } else {
            td_rc(dbfs_commit(t->c, fh, 0, 0, NULL), 0);
        }
    }
    td_rc(dbfs_commit(t->c, fh, 0, 0, NULL), 0);
    tx_check(t, fh, model, size);
    g_free(model);
    g_free(data);
    g_free(buf);
}

/* The chain id of inode ino as SQL sees it (0: none). */
long tx_chain_of(const char *conninfo, uint64_t ino)
{
    char *q = g_strdup_printf(
        "SELECT coalesce(chain, 0) FROM fileatt WHERE inode = %" G_GUINT64_FORMAT, ino);
    long v = td_sql(conninfo, q);

    g_free(q);
    return v;
}

void tx_count_problem(const dbfs_xform_problem *p, void *arg)
{
    g_test_message("problem: %s", p->detail);
    (*(int *)arg)++;
}
