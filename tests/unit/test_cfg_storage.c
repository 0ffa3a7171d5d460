/*
 * test_cfg_storage.c -- which [storage] keys a configuration sets
 * explicitly (file, environment, command line; not defaults) and where,
 * and the checks that refuse a configuration contradicting the file
 * system the database holds (its layout, its root directory), naming the
 * key, where it was set, both values and what to do.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "cfg.h"

static dbfs_info tc_info(dbfs_storage st, uint32_t cs, dbfs_encoding enc, uint64_t thr)
{
    dbfs_info i;

    memset(&i, 0, sizeof i);
    i.storage = st;
    i.chunk_size = cs;
    i.encoding = enc;
    i.hybrid_threshold = thr;
    return i;
}

static cfg *tc_load(const char *file_text, const char *const *over)
{
    char *path = NULL, *err = NULL;
    cfg *c;

    if (file_text) {
        int fd = g_file_open_tmp("pgnfs-cfg-XXXXXX.conf", &path, NULL);

        g_assert_cmpint(fd, >=, 0);
        close(fd);
        g_assert_true(g_file_set_contents(path, file_text, -1, NULL));
    }
    c = cfg_load(path, over, &err);
    if (!c)
        g_error("cfg_load: %s", err);
    if (path) {
        g_unlink(path);
        g_free(path);
    }
    return c;
}

static void test_explicit(void)
{
    const char *const over[] = {"storage.chunk_size=4096", NULL};
    cfg *c = tc_load("[storage]\nschema = hybrid\n", over);

    g_assert_true(cfg_is_explicit(c, "storage", "schema"));
    g_assert_true(cfg_is_explicit(c, "storage", "chunk_size"));
    g_assert_cmpint(cfg_key_origin(c, "storage", "schema"), ==, CFG_ORIGIN_FILE);
    g_assert_cmpint(cfg_key_origin(c, "storage", "chunk_size"), ==, CFG_ORIGIN_CMDLINE);
    g_assert_cmpint(cfg_key_origin(c, "storage", "encoding"), ==, CFG_ORIGIN_DEFAULT);
    g_assert_false(cfg_is_explicit(c, "storage", "encoding"));
    g_assert_false(cfg_is_explicit(c, "server", "port"));
    g_assert_false(cfg_is_explicit(c, "storage", "no_such_key"));
    cfg_free(c);

    /* The environment counts too, even when it repeats the default. */
    g_setenv("PGNFS_STORAGE_ENCODING", "binary", TRUE);
    c = tc_load(NULL, NULL);
    g_unsetenv("PGNFS_STORAGE_ENCODING");
    g_assert_true(cfg_is_explicit(c, "storage", "encoding"));
    g_assert_cmpint(cfg_key_origin(c, "storage", "encoding"), ==, CFG_ORIGIN_ENV);
    g_assert_false(cfg_is_explicit(c, "storage", "schema"));
    cfg_free(c);
}

static void test_check(void)
{
    dbfs_info inv = tc_info(DBFS_STORAGE_INVERSION, 4096, DBFS_ENC_BINARY, 65536);
    dbfs_info hyb = tc_info(DBFS_STORAGE_HYBRID, 8192, DBFS_ENC_BASE64, 1 << 20);
    char *err = NULL;
    cfg *c;

    /* Nothing set: any file system is served. */
    c = tc_load(NULL, NULL);
    g_assert_cmpint(cfg_check_storage(c, &inv, &err), ==, 0);
    g_assert_cmpint(cfg_check_storage(c, &hyb, &err), ==, 0);
    g_assert_null(err);
    cfg_free(c);

    /* Set and equal: served. */
    const char *const same[] = {"storage.schema=inversion", "storage.chunk_size=4096",
                                "storage.encoding=binary", NULL};
    c = tc_load(NULL, same);
    g_assert_cmpint(cfg_check_storage(c, &inv, &err), ==, 0);
    /* ... against another file system: the first key that differs. */
    g_assert_cmpint(cfg_check_storage(c, &hyb, &err), ==, -1);
    g_assert_nonnull(strstr(err, "[storage] schema is 'inversion' in the configuration, but the "
                                 "file system was created with schema 'hybrid' (the setting "
                                 "comes from the command line)"));
    /* ... and says what to do. */
    g_assert_nonnull(strstr(err, "drop the setting (or set it to 'hybrid')"));
    g_assert_nonnull(strstr(err, "pgnfs mkfs --force"));
    free(err);
    err = NULL;
    cfg_free(c);

    const char *const cs[] = {"storage.chunk_size=8192", NULL};
    c = tc_load(NULL, cs);
    g_assert_cmpint(cfg_check_storage(c, &inv, &err), ==, -1);
    g_assert_nonnull(strstr(err, "chunk_size is 8192"));
    g_assert_nonnull(strstr(err, "chunk_size 4096"));
    free(err);
    err = NULL;
    cfg_free(c);

    c = tc_load("[storage]\nencoding = binary\n", NULL);
    g_assert_cmpint(cfg_check_storage(c, &hyb, &err), ==, -1);
    g_assert_nonnull(strstr(err, "(the setting comes from the configuration file)"));
    g_assert_nonnull(strstr(err, "encoding 'base64'"));
    free(err);
    err = NULL;
    cfg_free(c);

    /* The threshold matters only for a hybrid file system. */
    const char *const thr[] = {"storage.hybrid_threshold=1024", NULL};
    c = tc_load(NULL, thr);
    g_assert_cmpint(cfg_check_storage(c, &inv, &err), ==, 0);
    g_assert_cmpint(cfg_check_storage(c, &hyb, &err), ==, -1);
    g_assert_nonnull(strstr(err, "hybrid_threshold is 1024"));
    g_assert_nonnull(strstr(err, "hybrid_threshold 1048576"));
    free(err);
    cfg_free(c);

    /* Where an environment variable set it, the message names it. */
    g_setenv("PGNFS_STORAGE_CHUNK_SIZE", "16384", TRUE);
    c = tc_load(NULL, NULL);
    g_unsetenv("PGNFS_STORAGE_CHUNK_SIZE");
    g_assert_cmpint(cfg_check_storage(c, &inv, &err), ==, -1);
    g_assert_nonnull(strstr(err, "chunk_size is 16384 in the configuration"));
    g_assert_nonnull(strstr(err, "comes from the environment variable PGNFS_STORAGE_CHUNK_SIZE"));
    free(err);
    cfg_free(c);
}

/* The root directory's keys against an existing root: the same value
 * passes (whatever layer set it), another one is refused with the key,
 * both values and what to do; defaults never count. */
static void test_check_root(void)
{
    dbfs_attr root = {.type = DBFS_DIR, .mode = 0755, .uid = 0, .gid = 0};
    char *err = NULL;
    cfg *c;

    /* Nothing set (the default root_mode is 1777): any root is served. */
    c = tc_load(NULL, NULL);
    g_assert_cmpint(cfg_check_root(c, &root, &err), ==, 0);
    g_assert_null(err);
    cfg_free(c);

    const char *const sticky[] = {"storage.root_mode=1777", NULL};
    c = tc_load(NULL, sticky);
    g_assert_cmpint(cfg_check_root(c, &root, &err), ==, -1);
    g_assert_nonnull(strstr(err, "[storage] root_mode is 1777 in the configuration, but the file "
                                 "system already exists and its root directory has mode 0755 "
                                 "(the setting comes from the command line)"));
    g_assert_nonnull(strstr(err, "drop the setting"));
    g_assert_nonnull(strstr(err, "no_root_squash"));
    free(err);
    err = NULL;
    root.mode = 01777;
    g_assert_cmpint(cfg_check_root(c, &root, &err), ==, 0);
    cfg_free(c);

    /* 0 means 0755, as for mkfs. */
    const char *const zero[] = {"storage.root_mode=0", NULL};
    root.mode = 0755;
    c = tc_load(NULL, zero);
    g_assert_cmpint(cfg_check_root(c, &root, &err), ==, 0);
    cfg_free(c);

    c = tc_load("[storage]\nroot_uid = 1000\nroot_gid = 100\n", NULL);
    root.uid = 1000;
    g_assert_cmpint(cfg_check_root(c, &root, &err), ==, -1);
    g_assert_nonnull(strstr(err, "root_gid is 100 in the configuration"));
    g_assert_nonnull(strstr(err, "comes from the configuration file"));
    g_assert_nonnull(strstr(err, "has group 0"));
    free(err);
    err = NULL;
    root.gid = 100;
    g_assert_cmpint(cfg_check_root(c, &root, &err), ==, 0);
    root.uid = 0;
    g_assert_cmpint(cfg_check_root(c, &root, &err), ==, -1);
    g_assert_nonnull(strstr(err, "root_uid is 1000"));
    g_assert_nonnull(strstr(err, "has owner 0"));
    free(err);
    cfg_free(c);
}

static void test_cache_keys(void)
{
    const char *const over[] = {"cache.buffer=off", "cache.buffer_size=1048576",
                                "cache.small_file_size=0", "cache.small_files=2097152", NULL};
    const char *const autos[] = {"cache.buffer_size=auto", "cache.small_files=auto", NULL};
    const char *const bad[][2] = {{"cache.buffer_size=100", NULL},
                                  {"cache.small_files=0", NULL},
                                  {"cache.small_files=lots", NULL},
                                  {"cache.small_file_size=1048577", NULL}};
    const char *const bad_key[] = {"buffer_size", "small_files", "small_files", "small_file_size"};
    char *err = NULL;
    cfg *c = tc_load(NULL, NULL);
    dbfs_config dc;

    g_assert_true(c->buffer_cache);
    g_assert_cmpuint(c->buffer_size, ==, 0); /* auto */
    g_assert_cmpuint(c->small_file_size, ==, 65536);
    g_assert_cmpuint(c->small_files, ==, 0); /* auto */
    g_assert_cmpuint(c->hybrid_threshold, ==, 65536);
    cfg_free(c);
    c = tc_load(NULL, over);
    g_assert_false(c->buffer_cache);
    g_assert_cmpuint(c->buffer_size, ==, 1u << 20);
    g_assert_cmpuint(c->small_file_size, ==, 0);
    g_assert_cmpuint(c->small_files, ==, 2u << 20);
    cfg_dbfs_config(c, "dbname=x", &dc);
    g_assert_cmpuint(dc.buffer_cache_bytes, ==, 0);
    g_assert_cmpuint(dc.small_cache_bytes, ==, 0); /* files of 0 bytes: off */
    cfg_free(c);
    c = tc_load(NULL, autos);
    cfg_dbfs_config(c, "dbname=x", &dc);
    g_assert_cmpuint(dc.buffer_cache_bytes, ==, cfg_buffer_auto(cfg_mem_total()));
    g_assert_cmpuint(dc.small_cache_bytes, ==, cfg_small_auto(cfg_mem_total()));
    cfg_free(c);
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_assert_null(cfg_load(NULL, bad[i], &err));
        g_assert_nonnull(strstr(err, bad_key[i]));
        free(err);
        err = NULL;
    }
}

/* The sizing rule of "auto": a share of the memory, bounded; the memory
 * as this process may use it. */
static void test_cache_auto(void)
{
    const uint64_t M = 1ull << 20, G = 1ull << 30;
    const struct {
        uint64_t mem, buffer, small, pg;
    } cases[] = {
        {0, 64 * M, 16 * M, 128 * M},       /* unknown: the least */
        {256 * M, 64 * M, 16 * M, 128 * M}, /* small machines: the least */
        {1 * G, 128 * M, 16 * M, 128 * M},  /* 1/8; 1/64 and 1/32 under their floors */
        {2 * G, 256 * M, 32 * M, 128 * M},  /* 1/8, 1/64 */
        {8 * G, 1 * G, 128 * M, 256 * M},   /* 1/8, 1/64, 1/32 */
        {24 * G, 3 * G, 384 * M, 768 * M},  /* a 24 GiB machine */
        {64 * G, 4 * G, 1 * G, 1 * G},      /* the ceilings */
        {1024 * G, 4 * G, 1 * G, 1 * G},
    };
    char *text = NULL;
    uint64_t total = 0;

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_assert_cmpuint(cfg_buffer_auto(cases[i].mem), ==, cases[i].buffer);
        g_assert_cmpuint(cfg_small_auto(cases[i].mem), ==, cases[i].small);
        g_assert_cmpuint(cfg_pg_buffers_auto(cases[i].mem), ==, cases[i].pg);
    }
    /* Never more than the machine has (a cgroup may say less). */
    g_assert_true(g_file_get_contents("/proc/meminfo", &text, NULL, NULL));
    g_assert_cmpint(sscanf(strstr(text, "MemTotal:") + 9, "%" SCNu64, &total), ==, 1);
    g_free(text);
    g_assert_cmpuint(cfg_mem_total(), >, 0);
    g_assert_cmpuint(cfg_mem_total(), <=, total * 1024);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cfg_storage/explicit", test_explicit);
    g_test_add_func("/cfg_storage/check", test_check);
    g_test_add_func("/cfg_storage/check_root", test_check_root);
    g_test_add_func("/cfg_storage/cache-keys", test_cache_keys);
    g_test_add_func("/cfg_storage/cache-auto", test_cache_auto);
    return g_test_run();
}
