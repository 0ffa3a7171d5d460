/*
 * cfg_dbfs.c -- from a configuration to the dbfs_config that opens the
 * file system: the one place where [storage] relatime, the [cache] keys
 * and the [writeback] bounds become dbfs settings, shared by `pgnfs serve`
 * (and the other pgnfs commands that attach) and `pgnfsd`; and the check
 * of a configuration against the file system it opened (cfg_check_fs).
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

/* cfg_dbfs_config -- see cfg.h. */
void cfg_dbfs_config(const cfg *c, const char *conninfo, dbfs_config *out)
{
    bool embedded = !c->conninfo || !*c->conninfo;

    memset(out, 0, sizeof *out);
    out->conninfo = conninfo;
    out->relatime = c->relatime;
    /* FSSTAT measures the disk under the embedded cluster's directory; a
     * remote database's disk cannot be measured from here. */
    out->space_path = embedded ? c->data_dir : NULL;
    out->stat_cache_entries = c->stat_cache ? c->stat_size : 0;
    out->name_cache_entries = c->name_cache ? c->naming_size : 0;
    out->buffer_cache_bytes = c->buffer_cache ? c->buffer_size : 0;
    out->writeback_bytes = c->wb_enable ? c->wb_size : 0;
    out->writeback_file_bytes = c->wb_file_size;
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
