/*
 * cfg_cmdline.c -- cfg_from_cmdline(): the options every pgnfs program
 * takes (--config FILE, --set GROUP.KEY=VALUE, --export "PATH SPEC" and
 * the shortcuts below), taken out of argv and turned into cfg_load()'s
 * file and overrides; what is left is the caller's.
 */
#include <string.h>

#include "cfg_int.h"

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

/* cfg_from_cmdline -- see cfg.h. */
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
