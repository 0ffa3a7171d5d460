/*
 * cfg.c -- the pgnfs configuration: defaults, pgnfs.conf (GKeyFile), the
 * environment and the command line, in that order of precedence, into one
 * immutable cfg (see cfg.h and pgnfs.conf.example for every key).
 *
 * Every key has one entry in cfg_keys[]: its group, name, type, range and
 * default (as text, parsed like any other value, so defaults go through
 * the same checks). Layers are applied in order; each value is checked
 * when it is applied, and an error names where the value came from:
 *
 *   pgnfs.conf: [server] port: '70000' is not a whole number from 0 to 65535
 *   environment variable PGNFS_SERVER_THREADS: '0' is not a whole number ...
 *   command line server.listen: 'here' is not an IPv4 or IPv6 address ...
 *
 * Exports: group [exports], one key per exported path, the value in
 * /etc/exports syntax (`/ = 10.0.0.0/8(rw) *(ro)`); GKeyFile takes '/' in
 * key names, so a path is its own key (a path cannot contain '=' or start
 * with '[' or '#'). The environment has PGNFS_EXPORTS="PATH SPEC; PATH SPEC",
 * the command line `--set exports.PATH=SPEC` and `--export "PATH SPEC"`.
 * A path set by a later layer replaces the earlier one; when no layer sets
 * any, the default is `/ = 127.0.0.1(rw) ::1(rw)` (local clients only, root
 * squashed). The exports are kept sorted by path, so a handle's export
 * index does not depend on the order the file lists them in.
 *
 * NOTES
 *   Everything in a cfg is g_malloc'd and owned by it (cfg_free). Error
 *   messages handed to callers are malloc'd (free()), as cfg.h says.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cfg.h"

/* At most this many exports: a file handle stores the index in one byte. */
#define CFG_EXPORTS_MAX 256
/* Longest export path (MNTPATHLEN). */
#define CFG_PATH_MAX 1024

typedef enum {
    CFG_T_STRING, /* any text (nonempty if the key says so) */
    CFG_T_UINT,   /* decimal in [min, max] */
    CFG_T_POW2,   /* a power of two in [min, max] */
    CFG_T_BOOL,   /* true/false, yes/no, on/off, 1/0 */
    CFG_T_CHOICE, /* one of choices[] */
    CFG_T_ADDR,   /* a numeric IPv4 or IPv6 address */
    CFG_T_MODE    /* file permission bits in octal, 0 .. 07777 */
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

static const char *const cfg_levels[] = {"error", "warning", "info", "debug", NULL};
static const char *const cfg_storages[] = {"single", "inversion", "hybrid", NULL};
static const char *const cfg_encodings[] = {"binary", "base64", NULL};
static const char *const cfg_portmap_modes[] = {"auto", "on", "off", NULL};

static const cfg_key cfg_keys[] = {
    {"database", "conninfo", CFG_T_STRING, offsetof(cfg, conninfo), "", 0, 0, NULL, false},
    {"embedded", "data_dir", CFG_T_STRING, offsetof(cfg, data_dir), "./pgnfs-data", 0, 0, NULL,
     true},
    {"embedded", "pg_bindir", CFG_T_STRING, offsetof(cfg, pg_bindir), "", 0, 0, NULL, false},
    {"embedded", "pg_user", CFG_T_STRING, offsetof(cfg, pg_user), "postgres", 0, 0, NULL, false},
    {"server", "listen", CFG_T_ADDR, offsetof(cfg, listen), "0.0.0.0", 0, 0, NULL, true},
    {"server", "port", CFG_T_UINT, offsetof(cfg, port), "2049", 0, 65535, NULL, false},
    {"server", "threads", CFG_T_UINT, offsetof(cfg, threads), "4", 1, 256, NULL, false},
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
    {"storage", "root_uid", CFG_T_UINT, offsetof(cfg, root_uid), "0", 0, 4294967294u, NULL, false},
    {"storage", "root_gid", CFG_T_UINT, offsetof(cfg, root_gid), "0", 0, 4294967294u, NULL, false},
    {"storage", "root_mode", CFG_T_MODE, offsetof(cfg, root_mode), "0755", 0, 0, NULL, false},
    {"cache", "stat", CFG_T_BOOL, offsetof(cfg, stat_cache), "true", 0, 0, NULL, false},
    {"cache", "stat_size", CFG_T_UINT, offsetof(cfg, stat_size), "65536", 1, 16777216, NULL, false},
    {"cache", "naming", CFG_T_BOOL, offsetof(cfg, name_cache), "true", 0, 0, NULL, false},
    {"cache", "naming_size", CFG_T_UINT, offsetof(cfg, naming_size), "65536", 1, 16777216, NULL,
     false},
    {"cache", "buffer", CFG_T_BOOL, offsetof(cfg, buffer_cache), "true", 0, 0, NULL, false},
    {"cache", "buffer_size", CFG_T_UINT, offsetof(cfg, buffer_size), "67108864", 65536, 4294967295u,
     NULL, false},
    {"writeback", "enable", CFG_T_BOOL, offsetof(cfg, wb_enable), "true", 0, 0, NULL, false},
    {"writeback", "buffer_size", CFG_T_UINT, offsetof(cfg, wb_size), "268435456", 1048576,
     4294967295u, NULL, false},
    {"writeback", "file_flush_size", CFG_T_UINT, offsetof(cfg, wb_file_size), "8388608", 65536,
     1073741824, NULL, false},
    {"writeback", "max_age_ms", CFG_T_UINT, offsetof(cfg, wb_age_ms), "2000", 10, 3600000, NULL,
     false},
};

static const char *const cfg_groups[] = {"database", "embedded", "server", "log",       "storage",
                                         "exports",  "metrics",  "cache",  "writeback", NULL};

static const char cfg_default_export[] = "127.0.0.1(rw) ::1(rw)";

static const char cfg_export_options[] = "rw, ro, root_squash, no_root_squash, all_squash, "
                                         "no_all_squash, anonuid=N, anongid=N, secure, insecure";

/* Loading state: the cfg being built and the exports by path. */
typedef struct {
    cfg *c;
    GHashTable *exports; /* char *path -> cfg_export * (both owned) */
} cfg_loader;

/* *err = a malloc'd message (replacing nothing: *err must be NULL). */
static void G_GNUC_PRINTF(2, 3) cfg_error(char **err, const char *fmt, ...)
{
    va_list ap;
    char *msg = NULL;

    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        g_error("out of memory formatting a configuration error");
    va_end(ap);
    *err = msg;
}

/* *err = "prefix: *err" (both malloc'd). */
static void cfg_error_prefix(char **err, const char *prefix)
{
    char *inner = *err;

    *err = NULL;
    cfg_error(err, "%s: %s", prefix, inner);
    free(inner);
}

/* "a, b, c" of a NULL-terminated list (g_free). */
static char *cfg_join(const char *const *list)
{
    return g_strjoinv(", ", (char **)list);
}

/* A strict unsigned decimal: digits only, no sign, no spaces, <= max. */
static bool cfg_parse_u64(const char *s, uint64_t max, uint64_t *out)
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

static const cfg_key *cfg_find_key(const char *group, const char *key)
{
    for (size_t i = 0; i < G_N_ELEMENTS(cfg_keys); i++)
        if (strcmp(cfg_keys[i].group, group) == 0 && strcmp(cfg_keys[i].key, key) == 0)
            return &cfg_keys[i];
    return NULL;
}

static bool cfg_known_group(const char *group)
{
    for (const char *const *g = cfg_groups; *g; g++)
        if (strcmp(*g, group) == 0)
            return true;
    return false;
}

/* "port, threads, ..." for the keys of group (g_free). */
static char *cfg_group_keys(const char *group)
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

/*
 * Check and store value for key k in c. where names the origin for
 * messages. Returns 0, or -1 with *err set (c unchanged).
 */
static int cfg_set(cfg *c, const cfg_key *k, const char *value, const char *where, char **err)
{
    char *field = (char *)c + k->offset;
    uint64_t u;
    bool b;

    if (c->explicit_keys) /* a layer above the defaults (cfg_is_explicit) */
        c->explicit_keys[k - cfg_keys] = 1;

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

/* ---- exports ------------------------------------------------------------- */

void cfg_export_clear(cfg_export *e)
{
    if (!e)
        return;
    for (unsigned i = 0; i < e->nclients; i++)
        g_free(e->clients[i].host);
    g_free(e->clients);
    g_free(e->path);
    memset(e, 0, sizeof *e);
}

static void cfg_export_free(gpointer p)
{
    cfg_export_clear(p);
    g_free(p);
}

/* An export path: absolute, normalized, no control characters. */
static int cfg_check_path(const char *path, char **err)
{
    size_t len = strlen(path);

    if (path[0] != '/') {
        cfg_error(err, "'%s' is not an absolute path (it must start with '/')", path);
        return -1;
    }
    if (len > CFG_PATH_MAX) {
        cfg_error(err, "path of %zu bytes is longer than %d", len, CFG_PATH_MAX);
        return -1;
    }
    if (len > 1 && path[len - 1] == '/') {
        cfg_error(err, "'%s' ends with '/'; write it without", path);
        return -1;
    }
    for (const char *p = path; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            cfg_error(err, "path contains a control character");
            return -1;
        }
    }
    for (const char *p = path; *p;) {
        /* p is at a '/': look at the component after it */
        const char *q = p + 1;
        size_t n = strcspn(q, "/");
        if (n == 0 && len > 1) {
            cfg_error(err, "'%s' contains an empty component ('//')", path);
            return -1;
        }
        if ((n == 1 && q[0] == '.') || (n == 2 && q[0] == '.' && q[1] == '.')) {
            cfg_error(err, "'%s' contains '.' or '..'; write the path plainly", path);
            return -1;
        }
        p = q + n;
    }
    return 0;
}

/* Clear the host bits beyond prefix of an address of alen bytes. */
static void cfg_mask(unsigned char *addr, unsigned alen, unsigned prefix)
{
    for (unsigned i = 0; i < alen; i++) {
        unsigned bits = prefix >= 8 * (i + 1) ? 8 : prefix > 8 * i ? prefix - 8 * i : 0;
        addr[i] &= (unsigned char)(bits ? 0xff << (8 - bits) : 0);
    }
}

/* "255.255.0.0" as a prefix length; false if not a contiguous mask. */
static bool cfg_netmask_prefix(const char *s, unsigned *prefix)
{
    struct in_addr m;
    uint32_t v;
    unsigned n = 0;

    if (inet_pton(AF_INET, s, &m) != 1)
        return false;
    v = ntohl(m.s_addr);
    while (n < 32 && (v & (0x80000000u >> n)))
        n++;
    if (n < 32 && (v << n) != 0)
        return false;
    *prefix = n;
    return true;
}

/* A host name as DNS allows it (letters, digits, '-', '_', dots between labels). */
static bool cfg_valid_hostname(const char *s)
{
    size_t len = strlen(s), label = 0;

    if (len == 0 || len > 253 || s[0] == '.' || s[0] == '-')
        return false;
    for (const char *p = s; *p; p++) {
        if (*p == '.') {
            if (label == 0)
                return false;
            label = 0;
        } else if (g_ascii_isalnum(*p) || *p == '-' || *p == '_') {
            if (++label > 63)
                return false;
        } else {
            return false;
        }
    }
    return true;
}

/* Parse the client part of "CLIENT(OPTS)" (text, NUL-terminated) into c. */
static int cfg_parse_client_name(const char *text, cfg_client *c, char **err)
{
    const char *slash = strchr(text, '/');
    unsigned char addr[16];

    if (strcmp(text, "*") == 0) {
        c->kind = CFG_CLIENT_ANY;
        return 0;
    }
    if (slash) {
        char *a = g_strndup(text, (size_t)(slash - text));
        const char *pfx = slash + 1;
        uint64_t p;
        int rc = -1;

        if (inet_pton(AF_INET, a, addr) == 1) {
            c->family = AF_INET;
        } else if (inet_pton(AF_INET6, a, addr) == 1) {
            c->family = AF_INET6;
        } else {
            cfg_error(err, "client '%s': '%s' is not an IPv4 or IPv6 network address", text, a);
            goto out;
        }
        unsigned maxp = c->family == AF_INET ? 32 : 128;
        if (cfg_parse_u64(pfx, maxp, &p)) {
            c->prefix = (unsigned)p;
        } else if (c->family == AF_INET && strchr(pfx, '.') &&
                   cfg_netmask_prefix(pfx, &c->prefix)) {
            /* 10.0.0.0/255.0.0.0 */
        } else {
            cfg_error(err, "client '%s': '%s' is not a prefix length from 0 to %u%s", text, pfx,
                      maxp, c->family == AF_INET ? " or a netmask such as 255.255.0.0" : "");
            goto out;
        }
        cfg_mask(addr, c->family == AF_INET ? 4 : 16, c->prefix);
        memcpy(c->addr, addr, c->family == AF_INET ? 4 : 16);
        c->kind = CFG_CLIENT_NET;
        rc = 0;
    out:
        g_free(a);
        return rc;
    }
    if (inet_pton(AF_INET, text, addr) == 1) {
        c->kind = CFG_CLIENT_NET;
        c->family = AF_INET;
        c->prefix = 32;
        memcpy(c->addr, addr, 4);
        return 0;
    }
    if (inet_pton(AF_INET6, text, addr) == 1) {
        c->kind = CFG_CLIENT_NET;
        c->family = AF_INET6;
        c->prefix = 128;
        memcpy(c->addr, addr, 16);
        return 0;
    }
    if (text[0] == '@') {
        cfg_error(err,
                  "client '%s': netgroups are not supported; use *, an address, a network "
                  "such as 10.0.0.0/8, or a host name",
                  text);
        return -1;
    }
    if (strpbrk(text, "*?[")) {
        cfg_error(err,
                  "client '%s': wildcards in host names are not supported; use * or a "
                  "network such as 10.0.0.0/8",
                  text);
        return -1;
    }
    if (!cfg_valid_hostname(text)) {
        cfg_error(err,
                  "client '%s' is not *, an IPv4/IPv6 address, a network (ADDR/PREFIX) "
                  "or a host name",
                  text);
        return -1;
    }
    c->kind = CFG_CLIENT_HOST;
    c->host = g_strdup(text);
    return 0;
}

/* Apply one option ("rw", "anonuid=1000") to c. */
static int cfg_parse_option(const char *client, const char *opt, cfg_client *c, char **err)
{
    static const struct {
        const char *name;
        size_t offset;
        bool value;
    } flags[] = {
        {"rw", offsetof(cfg_client, rw), true},
        {"ro", offsetof(cfg_client, rw), false},
        {"root_squash", offsetof(cfg_client, root_squash), true},
        {"no_root_squash", offsetof(cfg_client, root_squash), false},
        {"all_squash", offsetof(cfg_client, all_squash), true},
        {"no_all_squash", offsetof(cfg_client, all_squash), false},
        {"secure", offsetof(cfg_client, secure), true},
        {"insecure", offsetof(cfg_client, secure), false},
    };
    uint64_t id;

    for (size_t i = 0; i < G_N_ELEMENTS(flags); i++) {
        if (strcmp(opt, flags[i].name) == 0) {
            *(bool *)((char *)c + flags[i].offset) = flags[i].value;
            return 0;
        }
    }
    if (strncmp(opt, "anonuid=", 8) == 0 || strncmp(opt, "anongid=", 8) == 0) {
        if (!cfg_parse_u64(opt + 8, UINT32_MAX, &id)) {
            cfg_error(err, "client '%s': option '%s': '%s' is not a whole number from 0 to %u",
                      client, opt, opt + 8, UINT32_MAX);
            return -1;
        }
        if (opt[4] == 'u')
            c->anonuid = (uint32_t)id;
        else
            c->anongid = (uint32_t)id;
        return 0;
    }
    if (!*opt) {
        cfg_error(err, "client '%s': empty option (two commas?); accepted: %s", client,
                  cfg_export_options);
        return -1;
    }
    cfg_error(err, "client '%s': unknown option '%s'; accepted: %s", client, opt,
              cfg_export_options);
    return -1;
}

/* Parse "CLIENT" or "CLIENT(OPTS)" (name and opts are separate strings). */
static int cfg_parse_client(const char *name, const char *opts, cfg_client *c, char **err)
{
    memset(c, 0, sizeof *c);
    c->root_squash = true;
    c->anonuid = 65534;
    c->anongid = 65534;
    if (cfg_parse_client_name(name, c, err) != 0)
        return -1;
    if (!opts)
        return 0;

    char **items = g_strsplit(opts, ",", -1);
    int rc = 0;
    /* "()" is allowed and means the defaults */
    if (!(items[0] && !items[1] && !*g_strstrip(items[0]))) {
        for (char **it = items; *it && rc == 0; it++)
            rc = cfg_parse_option(name, g_strstrip(*it), c, err);
    }
    g_strfreev(items);
    if (rc != 0) {
        g_free(c->host);
        c->host = NULL;
    }
    return rc;
}

/* The export line parser behind cfg_parse_export (no "export PATH:" prefix). */
static int cfg_parse_export_spec(const char *path, const char *spec, cfg_export *out, char **err)
{
    GArray *clients = g_array_new(FALSE, TRUE, sizeof(cfg_client));
    const char *p = spec;
    int rc = -1;

    if (cfg_check_path(path, err) != 0)
        goto out;
    for (;;) {
        while (g_ascii_isspace(*p))
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && *p != '(' && !g_ascii_isspace(*p))
            p++;
        char *name = g_strndup(start, (size_t)(p - start));
        char *opts = NULL;
        if (!*name) {
            cfg_error(err,
                      "options '%s' without a client before them; write *(...) for every "
                      "client",
                      p);
            g_free(name);
            goto out;
        }
        if (*p == '(') {
            const char *close = strchr(p, ')');
            if (!close) {
                cfg_error(err, "client '%s': missing ')' after the options", name);
                g_free(name);
                goto out;
            }
            opts = g_strndup(p + 1, (size_t)(close - p - 1));
            p = close + 1;
            if (*p && !g_ascii_isspace(*p)) {
                cfg_error(err,
                          "client '%s': unexpected '%s' after ')'; separate clients with "
                          "spaces",
                          name, p);
                g_free(name);
                g_free(opts);
                goto out;
            }
        }
        cfg_client c;
        int crc = cfg_parse_client(name, opts, &c, err);
        g_free(name);
        g_free(opts);
        if (crc != 0)
            goto out;
        g_array_append_val(clients, c);
    }
    if (clients->len == 0) {
        cfg_error(err, "no clients; write e.g. '192.168.0.0/16(rw) *(ro)'");
        goto out;
    }
    out->path = g_strdup(path);
    out->nclients = clients->len;
    out->clients = (cfg_client *)g_array_free(clients, FALSE);
    clients = NULL;
    rc = 0;
out:
    if (clients) {
        for (unsigned i = 0; i < clients->len; i++)
            g_free(g_array_index(clients, cfg_client, i).host);
        g_array_free(clients, TRUE);
    }
    return rc;
}

int cfg_parse_export(const char *path, const char *spec, cfg_export *out, char **err)
{
    memset(out, 0, sizeof *out);
    *err = NULL;
    if (cfg_parse_export_spec(path, spec, out, err) != 0) {
        char *prefix = g_strdup_printf("export %s", path);
        cfg_error_prefix(err, prefix);
        g_free(prefix);
        return -1;
    }
    return 0;
}

/* Parse and record one export of a layer (replacing the same path). */
static int cfg_add_export(cfg_loader *l, const char *path, const char *spec, const char *where,
                          char **err)
{
    cfg_export *e = g_new0(cfg_export, 1);

    if (cfg_parse_export_spec(path, spec, e, err) != 0) {
        cfg_error_prefix(err, where);
        g_free(e);
        return -1;
    }
    g_hash_table_replace(l->exports, g_strdup(path), e);
    return 0;
}

/* ---- layers ---------------------------------------------------------------- */

static int cfg_load_file(cfg_loader *l, const char *path, char **err)
{
    GKeyFile *kf = g_key_file_new();
    GError *gerr = NULL;
    char **groups = NULL;
    int rc = -1;

    if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &gerr)) {
        cfg_error(err, "cannot load configuration file %s: %s", path, gerr->message);
        goto out;
    }
    groups = g_key_file_get_groups(kf, NULL);
    for (char **g = groups; *g; g++) {
        if (!cfg_known_group(*g)) {
            char *list = cfg_join(cfg_groups);
            cfg_error(err, "%s: unknown group [%s]; groups are: %s", path, *g, list);
            g_free(list);
            goto out;
        }
        char **keys = g_key_file_get_keys(kf, *g, NULL, NULL);
        for (char **k = keys; k && *k; k++) {
            char *where = g_strdup_printf("%s: [%s] %s", path, *g, *k);
            char *value = g_key_file_get_string(kf, *g, *k, &gerr);
            const cfg_key *ck = NULL;
            int krc = -1;

            if (!value) {
                cfg_error(err, "%s: %s", where, gerr->message);
            } else if (strcmp(*g, "exports") == 0) {
                krc = cfg_add_export(l, *k, value, where, err);
            } else if ((ck = cfg_find_key(*g, *k)) != NULL) {
                krc = cfg_set(l->c, ck, value, where, err);
            } else {
                char *list = cfg_group_keys(*g);
                cfg_error(err, "%s: unknown key '%s' in [%s]; keys of [%s]: %s", path, *k, *g, *g,
                          list);
                g_free(list);
            }
            g_free(value);
            g_free(where);
            if (krc != 0) {
                g_strfreev(keys);
                goto out;
            }
        }
        g_strfreev(keys);
    }
    rc = 0;
out:
    g_clear_error(&gerr);
    g_strfreev(groups);
    g_key_file_free(kf);
    return rc;
}

/* PGNFS_GROUP_KEY for every key, and PGNFS_EXPORTS. */
static int cfg_load_env(cfg_loader *l, char **err)
{
    for (size_t i = 0; i < G_N_ELEMENTS(cfg_keys); i++) {
        char *name = g_strdup_printf("PGNFS_%s_%s", cfg_keys[i].group, cfg_keys[i].key);
        char *upper = g_ascii_strup(name, -1);
        const char *value = g_getenv(upper);
        int rc = 0;

        if (value) {
            char *where = g_strdup_printf("environment variable %s", upper);
            rc = cfg_set(l->c, &cfg_keys[i], value, where, err);
            g_free(where);
        }
        g_free(upper);
        g_free(name);
        if (rc != 0)
            return -1;
    }

    const char *exports = g_getenv("PGNFS_EXPORTS");
    if (!exports)
        return 0;
    char **entries = g_strsplit(exports, ";", -1);
    int rc = 0;
    for (char **e = entries; *e && rc == 0; e++) {
        char *entry = g_strstrip(*e);
        if (!*entry)
            continue;
        size_t n = strcspn(entry, " \t");
        char *path = g_strndup(entry, n);
        if (!entry[n]) {
            cfg_error(err,
                      "environment variable PGNFS_EXPORTS: '%s' has no clients; expected "
                      "\"PATH CLIENT(OPTIONS) ...; PATH ...\"",
                      entry);
            rc = -1;
        } else {
            char *where = g_strdup_printf("environment variable PGNFS_EXPORTS: %s", path);
            rc = cfg_add_export(l, path, entry + n, where, err);
            g_free(where);
        }
        g_free(path);
    }
    g_strfreev(entries);
    return rc;
}

/* One "group.key=value" from the command line. */
static int cfg_load_override(cfg_loader *l, const char *o, char **err)
{
    const char *dot = strchr(o, '.');
    const char *eq = dot ? strchr(dot, '=') : NULL;
    int rc = -1;

    if (!dot || !eq || dot == o || eq == dot + 1) {
        cfg_error(err, "command line '%s': expected GROUP.KEY=VALUE, e.g. server.port=2049", o);
        return -1;
    }
    char *group = g_strndup(o, (size_t)(dot - o));
    char *key = g_strndup(dot + 1, (size_t)(eq - dot - 1));
    char *where = g_strdup_printf("command line %s.%s", group, key);
    const cfg_key *ck;

    if (strcmp(group, "exports") == 0) {
        rc = cfg_add_export(l, key, eq + 1, where, err);
    } else if ((ck = cfg_find_key(group, key)) != NULL) {
        rc = cfg_set(l->c, ck, eq + 1, where, err);
    } else if (!cfg_known_group(group)) {
        char *list = cfg_join(cfg_groups);
        cfg_error(err, "command line '%s': unknown group '%s'; groups are: %s", o, group, list);
        g_free(list);
    } else {
        char *list = cfg_group_keys(group);
        cfg_error(err, "command line '%s': unknown key '%s' in [%s]; keys of [%s]: %s", o, key,
                  group, group, list);
        g_free(list);
    }
    g_free(where);
    g_free(key);
    g_free(group);
    return rc;
}

static gint cfg_export_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(((const cfg_export *)a)->path, ((const cfg_export *)b)->path);
}

/* Move the exports from the loader into c, sorted by path. */
static int cfg_finish_exports(cfg_loader *l, const char *path, char **err)
{
    GHashTableIter it;
    gpointer k, v;
    unsigned n = g_hash_table_size(l->exports), i = 0;

    if (n == 0) {
        if (cfg_add_export(l, "/", cfg_default_export, "default export", err) != 0)
            return -1;
        n = 1;
    }
    if (n > CFG_EXPORTS_MAX) {
        cfg_error(err,
                  "%s%s[exports]: %u exports (file, environment and command line "
                  "together); at most %d are supported",
                  path ? path : "", path ? ": " : "", n, CFG_EXPORTS_MAX);
        return -1;
    }
    l->c->exports = g_new0(cfg_export, n);
    g_hash_table_iter_init(&it, l->exports);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        l->c->exports[i++] = *(cfg_export *)v;
        memset(v, 0, sizeof(cfg_export)); /* ownership moved */
    }
    l->c->nexports = n;
    qsort(l->c->exports, n, sizeof(cfg_export), cfg_export_cmp);
    return 0;
}

cfg *cfg_load(const char *path, const char *const *overrides, char **err)
{
    cfg_loader l = {
        .c = g_new0(cfg, 1),
        .exports = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, cfg_export_free),
    };

    *err = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(cfg_keys); i++) {
        char *where = g_strdup_printf("default of [%s] %s", cfg_keys[i].group, cfg_keys[i].key);
        int rc = cfg_set(l.c, &cfg_keys[i], cfg_keys[i].def, where, err);
        g_free(where);
        if (rc != 0)
            goto fail;
    }
    l.c->explicit_keys = g_new0(unsigned char, G_N_ELEMENTS(cfg_keys));
    if (path && cfg_load_file(&l, path, err) != 0)
        goto fail;
    if (cfg_load_env(&l, err) != 0)
        goto fail;
    for (const char *const *o = overrides; o && *o; o++)
        if (cfg_load_override(&l, *o, err) != 0)
            goto fail;
    if (cfg_finish_exports(&l, path, err) != 0)
        goto fail;
    g_hash_table_destroy(l.exports);
    return l.c;
fail:
    g_hash_table_destroy(l.exports);
    cfg_free(l.c);
    return NULL;
}

void cfg_free(cfg *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < G_N_ELEMENTS(cfg_keys); i++) {
        if (cfg_keys[i].type == CFG_T_STRING || cfg_keys[i].type == CFG_T_CHOICE ||
            cfg_keys[i].type == CFG_T_ADDR)
            g_free(*(char **)((char *)c + cfg_keys[i].offset));
    }
    for (unsigned i = 0; i < c->nexports; i++)
        cfg_export_clear(&c->exports[i]);
    g_free(c->exports);
    g_free(c->explicit_keys);
    g_free(c);
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

/* cfg_is_explicit -- see cfg.h. */
bool cfg_is_explicit(const cfg *c, const char *group, const char *key)
{
    const cfg_key *k = cfg_find_key(group, key);

    return k && c->explicit_keys && c->explicit_keys[k - cfg_keys];
}

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

/* ---- command line ------------------------------------------------------------ */

static const struct {
    const char *option;
    const char *key; /* "group.key" */
} cfg_shortcuts[] = {
    {"--port", "server.port"},       {"--listen", "server.listen"},
    {"--data", "embedded.data_dir"}, {"--conninfo", "database.conninfo"},
    {"--threads", "server.threads"}, {"--log-level", "log.level"},
};

/*
 * If arg is option name ("--port" or "--port=VALUE"), set *value (from the
 * arg or the next argv element, consumed by advancing *i) and return 1;
 * 0 if arg is another option; -1 with *err if the value is missing.
 */
static int cfg_match_option(const char *name, int argc, char **argv, int *i, const char **value,
                            char **err)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);

    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        cfg_error(err, "option %s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

cfg *cfg_from_cmdline(int *argc, char ***argv, char **err)
{
    GPtrArray *overrides = g_ptr_array_new_with_free_func(g_free);
    const char *config = NULL;
    char **av = *argv;
    int ac = *argc, kept = ac > 0 ? 1 : 0;
    /* What stays for the caller; copied back into argv only on success. */
    char **keep = g_new0(char *, ac + 1);
    cfg *c = NULL;

    *err = NULL;
    if (ac > 0)
        keep[0] = av[0];
    for (int i = 1; i < ac; i++) {
        const char *value = NULL;
        int m;

        if (strcmp(av[i], "--") == 0) {
            while (i < ac)
                keep[kept++] = av[i++];
            break;
        }
        if ((m = cfg_match_option("--config", ac, av, &i, &value, err)) != 0) {
            if (m < 0)
                goto out;
            if (config) {
                cfg_error(err, "--config given twice ('%s' and '%s'); give one file", config,
                          value);
                goto out;
            }
            config = value;
            continue;
        }
        if ((m = cfg_match_option("--set", ac, av, &i, &value, err)) != 0) {
            if (m < 0)
                goto out;
            g_ptr_array_add(overrides, g_strdup(value));
            continue;
        }
        if ((m = cfg_match_option("--export", ac, av, &i, &value, err)) != 0) {
            if (m < 0)
                goto out;
            const char *v = value;
            while (g_ascii_isspace(*v))
                v++;
            size_t n = strcspn(v, " \t");
            if (n == 0 || !v[n]) {
                cfg_error(err,
                          "--export '%s': expected \"PATH CLIENT(OPTIONS) ...\", e.g. "
                          "\"/ 192.168.0.0/16(rw) *(ro)\"",
                          value);
                goto out;
            }
            g_ptr_array_add(overrides, g_strdup_printf("exports.%.*s=%s", (int)n, v, v + n));
            continue;
        }
        bool matched = false;
        for (size_t s = 0; s < G_N_ELEMENTS(cfg_shortcuts) && !matched; s++) {
            m = cfg_match_option(cfg_shortcuts[s].option, ac, av, &i, &value, err);
            if (m < 0)
                goto out;
            if (m > 0) {
                g_ptr_array_add(overrides, g_strdup_printf("%s=%s", cfg_shortcuts[s].key, value));
                matched = true;
            }
        }
        if (!matched)
            keep[kept++] = av[i];
    }
    g_ptr_array_add(overrides, NULL);
    c = cfg_load(config, (const char *const *)overrides->pdata, err);
    if (c) {
        memcpy(av, keep, sizeof(char *) * (size_t)kept);
        if (kept < ac)
            av[kept] = NULL;
        *argc = kept;
    }
out:
    g_free(keep);
    g_ptr_array_free(overrides, TRUE);
    return c;
}
