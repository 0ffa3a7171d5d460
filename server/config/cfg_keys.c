/*
 * cfg_keys.c -- the configuration's keys: one entry per key in cfg_keys[]
 * (group, name, type, range, default), and the checks a value of each type
 * goes through before it is stored (cfg_set). Defaults are text parsed like
 * any other value, so they pass the same checks.
 *
 * An error names where the value came from and what is accepted:
 *
 *   pgnfs.conf: [server] port: '70000' is not a whole number from 0 to 65535
 *   environment variable PGNFS_SERVER_THREADS: '0' is not a whole number ...
 *   command line server.listen: 'here' is not an IPv4 or IPv6 address ...
 *
 * NOTES
 *   Adding a key: a field in cfg (cfg.h), an entry here, a documented line
 *   in pgnfs.conf.example (tests/unit/test_cfg.c checks that every key is
 *   there). A string key's value is g_malloc'd and owned by the cfg.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_int.h"

static const char *const cfg_levels[] = {"error", "warning", "info", "debug", NULL};
static const char *const cfg_storages[] = {"single", "inversion", "hybrid", NULL};
static const char *const cfg_encodings[] = {"binary", "base64", NULL};
static const char *const cfg_portmap_modes[] = {"auto", "on", "off", NULL};
static const char *const cfg_coherences[] = {"single", "shared", NULL};

const cfg_key cfg_keys[] = {
    {"database", "conninfo", CFG_T_STRING, offsetof(cfg, conninfo), "", 0, 0, NULL, false},
    /* "" = cfg_default_data_dir(), filled in by cfg_load */
    {"embedded", "data_dir", CFG_T_STRING, offsetof(cfg, data_dir), "", 0, 0, NULL, false},
    {"embedded", "pg_bindir", CFG_T_STRING, offsetof(cfg, pg_bindir), "", 0, 0, NULL, false},
    {"embedded", "pg_user", CFG_T_STRING, offsetof(cfg, pg_user), "postgres", 0, 0, NULL, false},
    {"embedded", "restart", CFG_T_BOOL, offsetof(cfg, pg_restart), "true", 0, 0, NULL, false},
    {"embedded", "shared_buffers", CFG_T_SIZE, offsetof(cfg, pg_buffers), "auto", 16777216,
     4294967295u, NULL, false},
    {"server", "listen", CFG_T_ADDR, offsetof(cfg, listen), "0.0.0.0", 0, 0, NULL, true},
    {"server", "port", CFG_T_UINT, offsetof(cfg, port), "2049", 0, 65535, NULL, false},
    {"server", "threads", CFG_T_UINT, offsetof(cfg, threads), "16", 1, 256, NULL, false},
    {"server", "udp", CFG_T_BOOL, offsetof(cfg, udp), "true", 0, 0, NULL, false},
    {"server", "rpcbind", CFG_T_BOOL, offsetof(cfg, rpcbind), "true", 0, 0, NULL, false},
    {"server", "max_connections", CFG_T_UINT, offsetof(cfg, max_connections), "1024", 1, 65536,
     NULL, false},
    {"server", "max_connections_per_address", CFG_T_UINT,
     offsetof(cfg, max_connections_per_address), "128", 0, 65536, NULL, false},
    {"server", "drc_entries", CFG_T_UINT, offsetof(cfg, drc_entries), "4096", 0, 1048576, NULL,
     false},
    {"server", "portmap", CFG_T_CHOICE, offsetof(cfg, portmap), "auto", 0, 0, cfg_portmap_modes,
     false},
    {"server", "portmap_port", CFG_T_UINT, offsetof(cfg, portmap_port), "111", 1, 65535, NULL,
     false},
    {"metrics", "enable", CFG_T_BOOL, offsetof(cfg, metrics_enable), "false", 0, 0, NULL, false},
    {"metrics", "listen", CFG_T_ADDR, offsetof(cfg, metrics_listen), "127.0.0.1", 0, 0, NULL, true},
    {"metrics", "port", CFG_T_UINT, offsetof(cfg, metrics_port), "9466", 0, 65535, NULL, false},
    {"log", "slow_ms", CFG_T_UINT, offsetof(cfg, slow_ms), "1000", 0, 3600000, NULL, false},
    {"log", "level", CFG_T_CHOICE, offsetof(cfg, log_level), "info", 0, 0, cfg_levels, false},
    {"storage", "schema", CFG_T_CHOICE, offsetof(cfg, storage), "single", 0, 0, cfg_storages,
     false},
    {"storage", "chunk_size", CFG_T_POW2, offsetof(cfg, chunk_size), "65536", 1024, 1048576, NULL,
     false},
    {"storage", "encoding", CFG_T_CHOICE, offsetof(cfg, encoding), "binary", 0, 0, cfg_encodings,
     false},
    {"storage", "relatime", CFG_T_BOOL, offsetof(cfg, relatime), "true", 0, 0, NULL, false},
    {"storage", "hybrid_threshold", CFG_T_UINT, offsetof(cfg, hybrid_threshold), "65536", 1,
     1073741824, NULL, false},
    {"storage", "space_path", CFG_T_STRING, offsetof(cfg, space_path), "", 0, 0, NULL, false},
    {"storage", "reserve", CFG_T_UINT, offsetof(cfg, reserve_mb), "0", 0, 4194304, NULL, false},
    {"storage", "root_uid", CFG_T_UINT, offsetof(cfg, root_uid), "0", 0, 4294967294u, NULL, false},
    {"storage", "root_gid", CFG_T_UINT, offsetof(cfg, root_gid), "0", 0, 4294967294u, NULL, false},
    {"storage", "root_mode", CFG_T_MODE, offsetof(cfg, root_mode), "1777", 0, 0, NULL, false},
    {"cache", "stat", CFG_T_BOOL, offsetof(cfg, stat_cache), "true", 0, 0, NULL, false},
    {"cache", "stat_size", CFG_T_UINT, offsetof(cfg, stat_size), "65536", 1, 16777216, NULL, false},
    {"cache", "naming", CFG_T_BOOL, offsetof(cfg, name_cache), "true", 0, 0, NULL, false},
    {"cache", "naming_size", CFG_T_UINT, offsetof(cfg, naming_size), "65536", 1, 16777216, NULL,
     false},
    {"cache", "buffer", CFG_T_BOOL, offsetof(cfg, buffer_cache), "true", 0, 0, NULL, false},
    {"cache", "buffer_size", CFG_T_SIZE, offsetof(cfg, buffer_size), "auto", 65536, 4294967295u,
     NULL, false},
    {"cache", "small_file_size", CFG_T_UINT, offsetof(cfg, small_file_size), "65536", 0, 1048576,
     NULL, false},
    {"cache", "small_files", CFG_T_SIZE, offsetof(cfg, small_files), "auto", 65536, 4294967295u,
     NULL, false},
    {"cache", "coherence", CFG_T_CHOICE, offsetof(cfg, coherence), "single", 0, 0, cfg_coherences,
     false},
    {"writeback", "enable", CFG_T_BOOL, offsetof(cfg, wb_enable), "true", 0, 0, NULL, false},
    {"writeback", "buffer_size", CFG_T_UINT, offsetof(cfg, wb_size), "268435456", 1048576,
     4294967295u, NULL, false},
    {"writeback", "file_flush_size", CFG_T_UINT, offsetof(cfg, wb_file_size), "8388608", 65536,
     1073741824, NULL, false},
    {"writeback", "max_age_ms", CFG_T_UINT, offsetof(cfg, wb_age_ms), "2000", 10, 3600000, NULL,
     false},
    {"nlm", "enable", CFG_T_BOOL, offsetof(cfg, nlm_enable), "true", 0, 0, NULL, false},
    {"nlm", "grace", CFG_T_UINT, offsetof(cfg, nlm_grace), "45", 0, 3600, NULL, false},
    {"nlm", "server_name", CFG_T_STRING, offsetof(cfg, nlm_server_name), "", 0, 0, NULL, false},
    {"nlm", "max_waiters_per_host", CFG_T_UINT, offsetof(cfg, nlm_max_waiters_host), "1024", 1,
     1048576, NULL, false},
    {"nlm", "max_waiters", CFG_T_UINT, offsetof(cfg, nlm_max_waiters), "16384", 1, 1048576, NULL,
     false},
    {"xform", "root_chain", CFG_T_STRING, offsetof(cfg, xform_root_chain), "", 0, 0, NULL, false},
    {"xform", "key_file", CFG_T_STRING, offsetof(cfg, xform_key_file), "", 0, 0, NULL, false},
    {"xform", "plugin_dir", CFG_T_STRING, offsetof(cfg, xform_plugin_dir), "", 0, 0, NULL, false},
    {"xform", "zstd_level", CFG_T_UINT, offsetof(cfg, xform_zstd_level), "3", 1, 22, NULL, false},
    {"snapshot", "every", CFG_T_UINT, offsetof(cfg, snap_every), "0", 0, 31622400, NULL, false},
    {"snapshot", "keep", CFG_T_UINT, offsetof(cfg, snap_keep), "0", 0, 100000, NULL, false},
    {"snapshot", "prefix", CFG_T_STRING, offsetof(cfg, snap_prefix), "auto-", 0, 0, NULL, true},
    {"snapshot", "visible", CFG_T_BOOL, offsetof(cfg, snap_visible), "false", 0, 0, NULL, false},
};

const char *const cfg_groups[] = {"database", "embedded", "server", "log",       "storage",
                                  "exports",  "metrics",  "cache",  "writeback", "nlm",
                                  "xform",    "snapshot", NULL};

const size_t cfg_nkeys = G_N_ELEMENTS(cfg_keys);

/* cfg_error -- see cfg_int.h. */
void G_GNUC_PRINTF(2, 3) cfg_error(char **err, const char *fmt, ...)
{
    va_list ap;
    char *msg = NULL;

    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        g_error("out of memory formatting a configuration error");
    va_end(ap);
    *err = msg;
}

/* cfg_error_prefix -- see cfg_int.h. */
void cfg_error_prefix(char **err, const char *prefix)
{
    char *inner = *err;

    *err = NULL;
    cfg_error(err, "%s: %s", prefix, inner);
    free(inner);
}

/* cfg_join -- see cfg_int.h. */
char *cfg_join(const char *const *list)
{
    return g_strjoinv(", ", (char **)list);
}

/* cfg_parse_u64 -- see cfg_int.h. */
bool cfg_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;

    if (!s || !*s)
        return false;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        unsigned d = (unsigned)(*p - '0');
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool cfg_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};

    for (size_t i = 0; i < G_N_ELEMENTS(yes); i++) {
        if (g_ascii_strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (g_ascii_strcasecmp(s, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* cfg_find_key -- see cfg_int.h. */
const cfg_key *cfg_find_key(const char *group, const char *key)
{
    for (size_t i = 0; i < G_N_ELEMENTS(cfg_keys); i++)
        if (strcmp(cfg_keys[i].group, group) == 0 && strcmp(cfg_keys[i].key, key) == 0)
            return &cfg_keys[i];
    return NULL;
}

/* cfg_known_group -- see cfg_int.h. */
bool cfg_known_group(const char *group)
{
    for (const char *const *g = cfg_groups; *g; g++)
        if (strcmp(*g, group) == 0)
            return true;
    return false;
}

/* cfg_group_keys -- see cfg_int.h. */
char *cfg_group_keys(const char *group)
{
    GString *s = g_string_new(NULL);

    if (strcmp(group, "exports") == 0)
        return g_strdup("one key per exported path");
    for (size_t i = 0; i < G_N_ELEMENTS(cfg_keys); i++) {
        if (strcmp(cfg_keys[i].group, group) != 0)
            continue;
        if (s->len)
            g_string_append(s, ", ");
        g_string_append(s, cfg_keys[i].key);
    }
    return g_string_free(s, FALSE);
}

/* cfg_set -- see cfg_int.h. */
int cfg_set(cfg *c, const cfg_key *k, const char *value, cfg_origin origin, const char *where,
            char **err)
{
    char *field = (char *)c + k->offset;
    uint64_t u;
    bool b;

    if (c->explicit_keys) /* a layer above the defaults (cfg_key_origin) */
        c->explicit_keys[k - cfg_keys] = (unsigned char)origin;

    switch (k->type) {
    case CFG_T_STRING:
        if (k->nonempty && !*value) {
            cfg_error(err, "%s: must not be empty", where);
            return -1;
        }
        break;
    case CFG_T_UINT:
        if (!cfg_parse_u64(value, k->max, &u) || u < k->min) {
            cfg_error(err, "%s: '%s' is not a whole number from %u to %u", where, value, k->min,
                      k->max);
            return -1;
        }
        *(unsigned *)field = (unsigned)u;
        return 0;
    case CFG_T_SIZE:
        if (strcmp(value, "auto") == 0) {
            *(unsigned *)field = 0;
            return 0;
        }
        if (!cfg_parse_u64(value, k->max, &u) || u < k->min || u == 0) {
            cfg_error(err, "%s: '%s' is neither auto nor a number of bytes from %u to %u", where,
                      value, k->min, k->max);
            return -1;
        }
        *(unsigned *)field = (unsigned)u;
        return 0;
    case CFG_T_MODE: {
        char *end = NULL;
        unsigned long m = strtoul(value, &end, 8);

        if (!*value || *end || value[0] == '-' || m > 07777) {
            cfg_error(err, "%s: '%s' is not a mode in octal from 0 to 7777 (such as 0755)", where,
                      value);
            return -1;
        }
        *(unsigned *)field = (unsigned)m;
        return 0;
    }
    case CFG_T_POW2:
        if (!cfg_parse_u64(value, k->max, &u) || u < k->min || (u & (u - 1)) != 0) {
            cfg_error(err, "%s: '%s' is not a power of two from %u to %u", where, value, k->min,
                      k->max);
            return -1;
        }
        *(unsigned *)field = (unsigned)u;
        return 0;
    case CFG_T_BOOL:
        if (!cfg_parse_bool(value, &b)) {
            cfg_error(err, "%s: '%s' is not a boolean; use true or false (or yes/no, on/off, 1/0)",
                      where, value);
            return -1;
        }
        *(bool *)field = b;
        return 0;
    case CFG_T_CHOICE: {
        bool ok = false;
        for (const char *const *ch = k->choices; *ch; ch++)
            ok = ok || strcmp(*ch, value) == 0;
        if (!ok) {
            char *list = cfg_join(k->choices);
            cfg_error(err, "%s: '%s' is not one of: %s", where, value, list);
            g_free(list);
            return -1;
        }
        break;
    }
    case CFG_T_ADDR: {
        unsigned char buf[16];
        if (inet_pton(AF_INET, value, buf) != 1 && inet_pton(AF_INET6, value, buf) != 1) {
            cfg_error(err,
                      "%s: '%s' is not an IPv4 or IPv6 address (such as 0.0.0.0, 127.0.0.1 "
                      "or ::)",
                      where, value);
            return -1;
        }
        break;
    }
    }
    g_free(*(char **)field);
    *(char **)field = g_strdup(value);
    return 0;
}

/* cfg_key_at -- see cfg.h. */
bool cfg_key_at(unsigned i, const char **group, const char **key)
{
    if (i >= G_N_ELEMENTS(cfg_keys))
        return false;
    *group = cfg_keys[i].group;
    *key = cfg_keys[i].key;
    return true;
}

/* cfg_key_origin -- see cfg.h. */
cfg_origin cfg_key_origin(const cfg *c, const char *group, const char *key)
{
    const cfg_key *k = cfg_find_key(group, key);

    return k && c->explicit_keys ? (cfg_origin)c->explicit_keys[k - cfg_keys] : CFG_ORIGIN_DEFAULT;
}

/* cfg_is_explicit -- see cfg.h. */
bool cfg_is_explicit(const cfg *c, const char *group, const char *key)
{
    return cfg_key_origin(c, group, key) != CFG_ORIGIN_DEFAULT;
}
