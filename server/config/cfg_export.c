/*
 * cfg_export.c -- export lines in /etc/exports syntax: a path and its
 * clients, each CLIENT or CLIENT(OPTIONS):
 *
 *   / = 127.0.0.1(rw,no_root_squash) 10.0.0.0/8(ro) host.example.com *(ro)
 *
 * A client is *, an address, a network (ADDR/PREFIX or ADDR/NETMASK) or a
 * host name (resolved on each check by exp.c); options are those
 * of cfg_export_options below, the last of two contradicting ones
 * winning. The path must be absolute and plain (no '.', '..', '//' or
 * trailing '/').
 *
 * NOTES
 *   A parsed export owns its path, clients and host names (g_malloc'd);
 *   cfg_export_clear frees them.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_int.h"

/* Longest export path (MNTPATHLEN). */
#define CFG_PATH_MAX 1024

static const char cfg_export_options[] = "rw, ro, root_squash, no_root_squash, all_squash, "
                                         "no_all_squash, anonuid=N, anongid=N, secure, insecure, "
                                         "sync, async";

/* cfg_export_clear -- see cfg.h. */
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

/* cfg_export_free -- see cfg_int.h. */
void cfg_export_free(gpointer p)
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
        {"sync", offsetof(cfg_client, async), false},
        {"async", offsetof(cfg_client, async), true},
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

/* cfg_parse_export_spec -- see cfg_int.h. */
int cfg_parse_export_spec(const char *path, const char *spec, cfg_export *out, char **err)
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

/* cfg_parse_export -- see cfg.h. */
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
