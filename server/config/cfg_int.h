/*
 * cfg_int.h -- what the files of the configuration module share (not for
 * use outside server/config/): the key table and its value types, the
 * error helpers, and the export-line parser.
 *
 *   cfg_keys.c     the key table, defaults, value parsing (cfg_set)
 *   cfg_export.c   export lines ("/ = 10.0.0.0/8(rw) *(ro)")
 *   cfg_load.c     the layers: defaults, file, environment, overrides
 *   cfg_cmdline.c  the command line's options and shortcuts
 *   cfg_check.c    a configuration against an existing file system
 *   cfg_dbfs.c     a configuration as dbfs settings
 *
 * NOTES
 *   Error messages are malloc'd (free()), as cfg.h says; everything a cfg
 *   holds is g_malloc'd and owned by it.
 */
#ifndef PGNFS_CFG_INT_H
#define PGNFS_CFG_INT_H

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "cfg.h"

typedef enum {
    CFG_T_STRING, /* any text (nonempty if the key says so) */
    CFG_T_UINT,   /* decimal in [min, max] */
    CFG_T_POW2,   /* a power of two in [min, max] */
    CFG_T_BOOL,   /* true/false, yes/no, on/off, 1/0 */
    CFG_T_CHOICE, /* one of choices[] */
    CFG_T_ADDR,   /* a numeric IPv4 or IPv6 address */
    CFG_T_MODE,   /* file permission bits in octal, 0 .. 07777 */
    CFG_T_SIZE    /* "auto" (stored as 0) or decimal bytes in [min, max] */
} cfg_type;

typedef struct {
    const char *group, *key;
    cfg_type type;
    size_t offset; /* of the field in cfg */
    const char *def;
    unsigned min, max;
    const char *const *choices;
    bool nonempty;
} cfg_key;

/* The key table (cfg_keys.c) and its length; the groups, NULL-terminated. */
extern const cfg_key cfg_keys[];
extern const size_t cfg_nkeys;
extern const char *const cfg_groups[];

/* *err = a malloc'd message (replacing nothing: *err must be NULL). */
void G_GNUC_PRINTF(2, 3) cfg_error(char **err, const char *fmt, ...);
/* *err = "prefix: *err" (both malloc'd). */
void cfg_error_prefix(char **err, const char *prefix);
/* "a, b, c" of a NULL-terminated list (g_free). */
char *cfg_join(const char *const *list);
/* A strict unsigned decimal: digits only, no sign, no spaces, <= max. */
bool cfg_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* The entry of [group] key, or NULL. */
const cfg_key *cfg_find_key(const char *group, const char *key);
/* Is group one of cfg_groups? */
bool cfg_known_group(const char *group);
/* "port, threads, ..." for the keys of group (g_free). */
char *cfg_group_keys(const char *group);

/*
 * cfg_set -- check value for key k and store it in c; `where` names the
 * origin for messages, `origin` the layer (recorded for cfg_key_origin
 * once c->explicit_keys exists). Returns 0, or -1 with *err set (c
 * unchanged).
 */
int cfg_set(cfg *c, const cfg_key *k, const char *value, cfg_origin origin, const char *where,
            char **err);

/* The export line parser behind cfg_parse_export (messages have no
 * "export PATH:" prefix). Returns 0, or -1 with *err set. */
int cfg_parse_export_spec(const char *path, const char *spec, cfg_export *out, char **err);
/* cfg_export_clear and g_free (a GDestroyNotify). */
void cfg_export_free(gpointer p);

#endif /* PGNFS_CFG_INT_H */
