/*
 * cfg_check.c -- a configuration against the file system it is to serve:
 * the [storage] keys that only mkfs uses cannot change an existing file
 * system, so one set explicitly to something else is refused, never
 * ignored.
 */
#include <string.h>

#include "cfg_int.h"

/* cfg_check_storage -- see cfg.h. */
int cfg_check_storage(const cfg *c, const dbfs_info *info, char **err)
{
    static const char *const storages[] = {"single", "inversion", "hybrid"};
    const char *fs_storage =
        (unsigned)info->storage < G_N_ELEMENTS(storages) ? storages[info->storage] : "unknown";
    const char *fs_encoding = info->encoding == DBFS_ENC_BASE64 ? "base64" : "binary";
    static const char fix[] = "the layout is chosen at mkfs; remove the setting, or set it to "
                              "what the file system has";

    *err = NULL;
    if (cfg_is_explicit(c, "storage", "schema") && strcmp(c->storage, fs_storage) != 0) {
        cfg_error(err,
                  "[storage] schema is '%s' in the configuration, but the file system was created "
                  "with schema '%s' (%s)",
                  c->storage, fs_storage, fix);
        return -1;
    }
    if (cfg_is_explicit(c, "storage", "chunk_size") && c->chunk_size != info->chunk_size) {
        cfg_error(err,
                  "[storage] chunk_size is %u in the configuration, but the file system was "
                  "created with chunk_size %u (%s)",
                  c->chunk_size, info->chunk_size, fix);
        return -1;
    }
    if (cfg_is_explicit(c, "storage", "encoding") && strcmp(c->encoding, fs_encoding) != 0) {
        cfg_error(err,
                  "[storage] encoding is '%s' in the configuration, but the file system was "
                  "created with encoding '%s' (%s)",
                  c->encoding, fs_encoding, fix);
        return -1;
    }
    if (info->storage == DBFS_STORAGE_HYBRID && cfg_is_explicit(c, "storage", "hybrid_threshold") &&
        c->hybrid_threshold != info->hybrid_threshold) {
        cfg_error(err,
                  "[storage] hybrid_threshold is %u in the configuration, but the file system "
                  "was created with hybrid_threshold %" G_GUINT64_FORMAT " (%s)",
                  c->hybrid_threshold, info->hybrid_threshold, fix);
        return -1;
    }
    return 0;
}
