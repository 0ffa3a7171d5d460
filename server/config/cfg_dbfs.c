/*
 * cfg_dbfs.c -- from a configuration to the dbfs_config that opens the
 * file system: the one place where [storage] relatime, the [cache] keys
 * and the [writeback] bounds become dbfs settings, shared by `pgnfs serve`
 * (and the other pgnfs commands that attach) and `pgnfsd`.
 *
 * NOTES
 *   A cache or buffer switched off ([cache] stat/naming/buffer = false,
 *   [writeback] enable = false) is a bound of 0, which is how dbfs_config
 *   says "off"; its size key is then ignored. The result borrows c's
 *   strings and the caller's conninfo.
 */
#include <string.h>

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
