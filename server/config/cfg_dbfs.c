/*
 * cfg_dbfs.c -- from a configuration to the dbfs_config that opens the
 * file system: the one place where [storage] relatime, space_path and
 * reserve, the [cache] keys and the [writeback] bounds become dbfs
 * settings, shared by `pgnfs serve` (and the other pgnfs commands that
 * attach) and `pgnfsd`; and the check of a configuration against the file
 * system it opened (cfg_check_fs).
 *
 * The space guard's reserve, unless [storage] reserve sets it, is derived
 * from the disk under the space path as it is at start
 * (emb_reserve_for_disk: twice the WAL the embedded cluster allows
 * between checkpoints, plus a share of the disk).
 *
 * NOTES
 *   A cache or buffer switched off ([cache] stat/naming/buffer = false,
 *   [writeback] enable = false) is a bound of 0, which is how dbfs_config
 *   says "off"; its size key is then ignored. The result borrows c's
 *   strings and the caller's conninfo.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cfg.h"
#include "emb.h"

#define CFG_MIB (1024ull * 1024ull)

/* The directory whose file system holds the database, or NULL (none: a
 * remote database, or [storage] space_path = none). */
static const char *cfg_space_path(const cfg *c, bool embedded)
{
    if (strcmp(c->space_path, "none") == 0)
        return NULL;
    if (*c->space_path)
        return c->space_path;
    return embedded ? c->data_dir : NULL;
}

/* The bytes the space guard keeps free under path (0: no guard). A
 * space_path set but not there is worth a warning; the embedded
 * cluster's directory is there whenever a server attaches. */
static uint64_t cfg_space_reserve(const cfg *c, const char *path)
{
    emb_space sp;
    int rc;

    if (c->reserve_mb)
        return (uint64_t)c->reserve_mb * CFG_MIB;
    rc = emb_space_of(path, &sp);
    if (rc != 0 && *c->space_path) {
        g_warning("[storage] space_path %s cannot be measured (%s): data writes are not held "
                  "back from filling its disk",
                  path, g_strerror(-rc));
        return 0;
    }
    if (rc != 0)
        return 0;
    return emb_reserve_for_disk(sp.total_bytes, sp.avail_bytes);
}

/* The chunk buffer cache's and the small-file cache's bounds: as
 * configured, or from the memory ("auto"), with a line saying so. */
static void cfg_dbfs_data_caches(const cfg *c, dbfs_config *out)
{
    uint64_t mem = 0;

    if ((c->buffer_cache && !c->buffer_size) || (c->small_file_size && !c->small_files))
        mem = cfg_mem_total();
    out->buffer_cache_bytes = !c->buffer_cache ? 0
                              : c->buffer_size ? c->buffer_size
                                               : cfg_buffer_auto(mem);
    out->small_file_bytes = c->small_file_size;
    out->small_cache_bytes = !c->small_file_size ? 0
                             : c->small_files    ? c->small_files
                                                 : cfg_small_auto(mem);
    if (mem)
        g_info("cache sizes from %.1f GiB of memory: buffer cache %" G_GUINT64_FORMAT
               " bytes%s, small-file cache %" G_GUINT64_FORMAT " bytes%s",
               (double)mem / (double)(1ull << 30), out->buffer_cache_bytes,
               c->buffer_cache && !c->buffer_size ? " (auto: 1/8)" : "", out->small_cache_bytes,
               c->small_file_size && !c->small_files ? " (auto: 1/64)" : "");
}

/* cfg_dbfs_config -- see cfg.h. */
void cfg_dbfs_config(const cfg *c, const char *conninfo, dbfs_config *out)
{
    bool embedded = !c->conninfo || !*c->conninfo;

    memset(out, 0, sizeof *out);
    out->conninfo = conninfo;
    out->relatime = c->relatime;
    /* FSSTAT and the space guard measure the disk under the embedded
     * cluster's directory; a remote database's disk only when
     * [storage] space_path names a directory on it. */
    out->space_path = cfg_space_path(c, embedded);
    out->space_reserve = out->space_path ? cfg_space_reserve(c, out->space_path) : 0;
    out->stat_cache_entries = c->stat_cache ? c->stat_size : 0;
    out->name_cache_entries = c->name_cache ? c->naming_size : 0;
    cfg_dbfs_data_caches(c, out);
    out->writeback_bytes = c->wb_enable ? c->wb_size : 0;
    out->writeback_file_bytes = c->wb_file_size;
    out->xform_root_chain = c->xform_root_chain;
    out->xform_key_file = c->xform_key_file;
    out->xform_plugin_dir = c->xform_plugin_dir;
    out->xform_zstd_level = (int)c->xform_zstd_level;
}

/* cfg_check_fs -- see cfg.h. */
int cfg_check_fs(const cfg *c, dbfs *fs, char **err)
{
    const dbfs_info *info = dbfs_get_info(fs);
    dbfs_fh root_fh = {.ino = DBFS_ROOT_INO, .gen = info->root_gen};
    dbfs_conn *conn = NULL;
    dbfs_attr root;
    int rc;

    *err = NULL;
    if (cfg_check_storage(c, info, err) != 0)
        return -EINVAL;
    if (!cfg_is_explicit(c, "storage", "root_mode") && !cfg_is_explicit(c, "storage", "root_uid") &&
        !cfg_is_explicit(c, "storage", "root_gid"))
        return 0;
    rc = dbfs_conn_open(fs, &conn);
    if (rc == 0)
        rc = dbfs_getattr(conn, root_fh, &root);
    if (conn)
        dbfs_conn_close(conn);
    if (rc != 0) {
        char *msg = g_strdup_printf("cannot read the root directory to check [storage] root_*: %s",
                                    g_strerror(-rc));
        *err = strdup(msg);
        g_free(msg);
        return rc;
    }
    return cfg_check_root(c, &root, err) == 0 ? 0 : -EINVAL;
}
