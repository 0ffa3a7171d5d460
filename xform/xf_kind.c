/*
 * xf_kind.c -- the stage kinds of an env: the built-ins, registered at
 * xf_env_new, and plug-ins, loaded the first time a chain names them
 * (xf_plugin.c) and kept until xf_env_free. Each kind gets an index, its
 * slot in every xf_work.
 *
 * A name that is no built-in is looked for as PLUGIN_DIR/NAME.so. A
 * plug-in that fails to load is not remembered: the next chain that names
 * it tries again (the administrator may have fixed it).
 *
 * NOTES
 *   xf_kind_find runs with env->mu held (xf_chain_get). env->nkinds is
 *   published after the kind is complete; xf_work_free reads kinds
 *   without the lock, up to that count.
 */
#include <errno.h>
#include <stdlib.h>

#include "xf_int.h"

static const xf_builtin xf_builtins[] = {
    {&xf_identity_desc, NULL, 0, NULL},       {&xf_increment_desc, NULL, 0, NULL},
    {&xf_zstd_desc, xf_zstd_opts, 1, NULL},   {&xf_lz4_desc, xf_lz4_opts, 1, NULL},
    {&xf_aes_desc, NULL, 0, xf_aes_init_env}, {&xf_sha256_desc, NULL, 0, NULL},
};

/* xf_kind_init -- see xf_int.h. Returns 0 or -ENOMEM. */
int xf_kind_init(xf_env *env, xf_err *err)
{
    for (size_t i = 0; i < sizeof xf_builtins / sizeof xf_builtins[0]; i++) {
        xf_kind *k = calloc(1, sizeof *k);

        if (!k) {
            xf_errf(err, "out of memory");
            return -ENOMEM;
        }
        k->d = xf_builtins[i].d;
        k->builtin = true;
        k->opts = xf_builtins[i].opts;
        k->nopts = xf_builtins[i].nopts;
        k->init_env = xf_builtins[i].init_env;
        k->index = (int)i;
        env->kinds[i] = k;
        atomic_store(&env->nkinds, (int)i + 1);
    }
    return 0;
}

/* xf_kind_find -- see xf_int.h. name is lower case and checked by the
 * parser ([a-z0-9][a-z0-9_-]*). Returns 0 and *out, -ENOENT (no built-in
 * and no plug-in directory or file), -ELIBBAD/-EACCES (a plug-in
 * refused), -ENOSPC (too many kinds), -ENOMEM. */
int xf_kind_find(xf_env *env, const char *name, const xf_kind **out, xf_err *err)
{
    int n = atomic_load(&env->nkinds), rc;
    xf_kind *k;

    for (int i = 0; i < n; i++) {
        if (strcmp(env->kinds[i]->d->name, name) == 0) {
            *out = env->kinds[i];
            return 0;
        }
    }
    if (!env->plugin_dir) {
        xf_errf(err,
                "unknown transformation '%s' (built-ins: identity, increment, zstd, lz4, "
                "aes-256-gcm, sha256, sql; no [xform] plugin_dir for plug-ins)",
                name);
        return -ENOENT;
    }
    if (n >= XF_MAX_KINDS) {
        xf_errf(err, "plug-in '%s': too many plug-ins loaded (at most %d kinds)", name,
                XF_MAX_KINDS);
        return -ENOSPC;
    }
    k = calloc(1, sizeof *k);
    if (!k) {
        xf_errf(err, "out of memory");
        return -ENOMEM;
    }
    rc = xf_plugin_load(env->plugin_dir, name, k, err);
    if (rc < 0) {
        free(k);
        return rc;
    }
    k->index = n;
    env->kinds[n] = k;
    atomic_store(&env->nkinds, n + 1);
    *out = k;
    return 0;
}

/* xf_kind_free_all -- see xf_int.h. */
void xf_kind_free_all(xf_env *env)
{
    int n = atomic_load(&env->nkinds);

    for (int i = 0; i < n; i++) {
        if (!env->kinds[i]->builtin)
            xf_plugin_unload(env->kinds[i]);
        free(env->kinds[i]);
        env->kinds[i] = NULL;
    }
    atomic_store(&env->nkinds, 0);
}
