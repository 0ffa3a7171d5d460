/*
 * cfg_check.c -- a configuration against the file system it is to serve.
 * The [storage] keys that only mkfs uses (schema, chunk_size, encoding,
 * hybrid_threshold; root_uid, root_gid, root_mode) cannot change a file
 * system that exists. One that a layer sets explicitly to something else
 * is refused, never ignored: the message names the key, where it was set,
 * the value it asks for, the file system's, and what to do.
 *
 *   [storage] chunk_size is 4096 in the configuration, but the file system
 *   was created with chunk_size 65536 (the setting comes from the command
 *   line). The layout is chosen when a file system is created: drop the
 *   setting (or set it to 65536) to serve this one; `pgnfs mkfs --force`
 *   would replace it with an empty one (every file lost)
 *
 * Keys left at their defaults never count: any file system is served.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_int.h"

/* What to do about a layout key, after "... created with KEY VALUE. " */
#define CFG_LAYOUT_FIX                                                                             \
    "The layout is chosen when a file system is created: drop the setting (or set it to %s) "      \
    "to serve this one; `pgnfs mkfs --force` would replace it with an empty one (every file "      \
    "lost)"

/* What to do about a root key. */
#define CFG_ROOT_FIX                                                                               \
    "root_uid, root_gid and root_mode shape the root directory of a new file system only: "        \
    "drop the setting to serve this one. To change the root directory itself, chmod or chown "     \
    "it as root from an NFS client through an export without root squashing (e.g. --export \"/ "   \
    "127.0.0.1(rw,no_root_squash)\"), or start over with `pgnfs mkfs --force` (every file lost)"

/* "the command line" for [storage] key's origin (g_free). */
static char *cfg_where_set(const cfg *c, const char *key)
{
    switch (cfg_key_origin(c, "storage", key)) {
    case CFG_ORIGIN_FILE:
        return g_strdup("the configuration file");
    case CFG_ORIGIN_ENV: {
        char *var = g_ascii_strup(key, -1);
        char *s = g_strdup_printf("the environment variable PGNFS_STORAGE_%s", var);
        g_free(var);
        return s;
    }
    case CFG_ORIGIN_CMDLINE:
        return g_strdup("the command line");
    case CFG_ORIGIN_DEFAULT:
        break;
    }
    return g_strdup("the default");
}

/* The refusal of a layout key: want and have are the values as text. */
static int cfg_refuse_layout(const cfg *c, const char *key, const char *want, const char *have,
                             char **err)
{
    char *where = cfg_where_set(c, key);
    char *fix = g_strdup_printf(CFG_LAYOUT_FIX, have);

    cfg_error(err,
              "[storage] %s is %s in the configuration, but the file system was created with %s "
              "%s (the setting comes from %s). %s",
              key, want, key, have, where, fix);
    g_free(fix);
    g_free(where);
    return -1;
}

/* cfg_check_storage -- see cfg.h. */
int cfg_check_storage(const cfg *c, const dbfs_info *info, char **err)
{
    static const char *const storages[] = {"single", "inversion", "hybrid"};
    const char *fs_storage =
        (unsigned)info->storage < G_N_ELEMENTS(storages) ? storages[info->storage] : "unknown";
    const char *fs_encoding = info->encoding == DBFS_ENC_BASE64 ? "base64" : "binary";
    char want[32], have[32];

    *err = NULL;
    if (cfg_is_explicit(c, "storage", "schema") && strcmp(c->storage, fs_storage) != 0) {
        char *w = g_strdup_printf("'%s'", c->storage), *h = g_strdup_printf("'%s'", fs_storage);
        cfg_refuse_layout(c, "schema", w, h, err);
        g_free(w);
        g_free(h);
        return -1;
    }
    if (cfg_is_explicit(c, "storage", "chunk_size") && c->chunk_size != info->chunk_size) {
        snprintf(want, sizeof want, "%u", c->chunk_size);
        snprintf(have, sizeof have, "%u", info->chunk_size);
        return cfg_refuse_layout(c, "chunk_size", want, have, err);
    }
    if (cfg_is_explicit(c, "storage", "encoding") && strcmp(c->encoding, fs_encoding) != 0) {
        char *w = g_strdup_printf("'%s'", c->encoding), *h = g_strdup_printf("'%s'", fs_encoding);
        cfg_refuse_layout(c, "encoding", w, h, err);
        g_free(w);
        g_free(h);
        return -1;
    }
    if (info->storage == DBFS_STORAGE_HYBRID && cfg_is_explicit(c, "storage", "hybrid_threshold") &&
        c->hybrid_threshold != info->hybrid_threshold) {
        snprintf(want, sizeof want, "%u", c->hybrid_threshold);
        snprintf(have, sizeof have, "%" G_GUINT64_FORMAT, info->hybrid_threshold);
        return cfg_refuse_layout(c, "hybrid_threshold", want, have, err);
    }
    return 0;
}

/* The refusal of a root key: the root directory's value as text. */
static int cfg_refuse_root(const cfg *c, const char *key, const char *what, const char *want,
                           const char *have, char **err)
{
    char *where = cfg_where_set(c, key);

    cfg_error(err,
              "[storage] %s is %s in the configuration, but the file system already exists and "
              "its root directory has %s %s (the setting comes from %s). " CFG_ROOT_FIX,
              key, want, what, have, where);
    g_free(where);
    return -1;
}

/* cfg_check_root -- see cfg.h. */
int cfg_check_root(const cfg *c, const dbfs_attr *root, char **err)
{
    /* mkfs takes a mode of 0 as 0755 (dbfs_mkfs_opts). */
    unsigned mode = c->root_mode ? c->root_mode & 07777 : 0755;
    char want[32], have[32];

    *err = NULL;
    if (cfg_is_explicit(c, "storage", "root_mode") && mode != (root->mode & 07777)) {
        snprintf(want, sizeof want, "%04o", mode);
        snprintf(have, sizeof have, "%04o", root->mode & 07777);
        return cfg_refuse_root(c, "root_mode", "mode", want, have, err);
    }
    if (cfg_is_explicit(c, "storage", "root_uid") && c->root_uid != root->uid) {
        snprintf(want, sizeof want, "%u", c->root_uid);
        snprintf(have, sizeof have, "%u", root->uid);
        return cfg_refuse_root(c, "root_uid", "owner", want, have, err);
    }
    if (cfg_is_explicit(c, "storage", "root_gid") && c->root_gid != root->gid) {
        snprintf(want, sizeof want, "%u", c->root_gid);
        snprintf(have, sizeof have, "%u", root->gid);
        return cfg_refuse_root(c, "root_gid", "group", want, have, err);
    }
    return 0;
}
