/*
 * cfg_load.c -- cfg_load(): the configuration's layers, lowest to highest
 * precedence: the built-in defaults (cfg_keys.c), pgnfs.conf (GKeyFile),
 * the environment (PGNFS_GROUP_KEY, PGNFS_EXPORTS) and the overrides of
 * the command line ("group.key=value"), into one immutable cfg.
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
 * [embedded] data_dir left empty by every layer becomes
 * cfg_default_data_dir() (a per-user directory, /var/lib/pgnfs for root).
 *
 * NOTES
 *   Everything in a cfg is g_malloc'd and owned by it (cfg_free). Error
 *   messages handed to callers are malloc'd (free()), as cfg.h says.
 */
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg_int.h"

/* At most this many exports: a file handle stores the index in one byte. */
#define CFG_EXPORTS_MAX 256
/* The embedded cluster's directory for root (cfg_default_data_dir). */
#define CFG_ROOT_DATA_DIR "/var/lib/pgnfs"

static const char cfg_default_export[] = "127.0.0.1(rw) ::1(rw)";

/* Loading state: the cfg being built and the exports by path. */
typedef struct {
    cfg *c;
    GHashTable *exports; /* char *path -> cfg_export * (both owned) */
} cfg_loader;

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
                krc = cfg_set(l->c, ck, value, CFG_ORIGIN_FILE, where, err);
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
    for (size_t i = 0; i < cfg_nkeys; i++) {
        char *name = g_strdup_printf("PGNFS_%s_%s", cfg_keys[i].group, cfg_keys[i].key);
        char *upper = g_ascii_strup(name, -1);
        const char *value = g_getenv(upper);
        int rc = 0;

        if (value) {
            char *where = g_strdup_printf("environment variable %s", upper);
            rc = cfg_set(l->c, &cfg_keys[i], value, CFG_ORIGIN_ENV, where, err);
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
        rc = cfg_set(l->c, ck, eq + 1, CFG_ORIGIN_CMDLINE, where, err);
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

/* cfg_default_data_dir -- see cfg.h. */
char *cfg_default_data_dir(void)
{
    const char *xdg = g_getenv("XDG_DATA_HOME");
    const char *home = g_getenv("HOME");
    struct passwd *pw;

    if (geteuid() == 0)
        return g_strdup(CFG_ROOT_DATA_DIR);
    /* The XDG base directory rules: a relative XDG_DATA_HOME is ignored. */
    if (xdg && g_path_is_absolute(xdg))
        return g_build_filename(xdg, "pgnfs", NULL);
    if ((!home || !g_path_is_absolute(home)) && (pw = getpwuid(geteuid())) != NULL)
        home = pw->pw_dir;
    if (home && g_path_is_absolute(home))
        return g_build_filename(home, ".local", "share", "pgnfs", NULL);
    return g_strdup("./pgnfs-data");
}

/* cfg_load -- see cfg.h. */
cfg *cfg_load(const char *path, const char *const *overrides, char **err)
{
    cfg_loader l = {
        .c = g_new0(cfg, 1),
        .exports = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, cfg_export_free),
    };

    *err = NULL;
    for (size_t i = 0; i < cfg_nkeys; i++) {
        char *where = g_strdup_printf("default of [%s] %s", cfg_keys[i].group, cfg_keys[i].key);
        int rc = cfg_set(l.c, &cfg_keys[i], cfg_keys[i].def, CFG_ORIGIN_DEFAULT, where, err);
        g_free(where);
        if (rc != 0)
            goto fail;
    }
    l.c->explicit_keys = g_new0(unsigned char, cfg_nkeys);
    if (path && cfg_load_file(&l, path, err) != 0)
        goto fail;
    if (cfg_load_env(&l, err) != 0)
        goto fail;
    for (const char *const *o = overrides; o && *o; o++)
        if (cfg_load_override(&l, *o, err) != 0)
            goto fail;
    if (cfg_finish_exports(&l, path, err) != 0)
        goto fail;
    if (!*l.c->data_dir) {
        g_free(l.c->data_dir);
        l.c->data_dir = cfg_default_data_dir();
    }
    g_hash_table_destroy(l.exports);
    return l.c;
fail:
    g_hash_table_destroy(l.exports);
    cfg_free(l.c);
    return NULL;
}

/* cfg_free -- see cfg.h. */
void cfg_free(cfg *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < cfg_nkeys; i++) {
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
