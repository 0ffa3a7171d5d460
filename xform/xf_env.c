/*
 * xf_env.c -- a transformation environment: the configuration ([xform]
 * key_file, plugin_dir, zstd_level), the key, the stage kinds (xf_kind.c)
 * and the chains made so far (xf_chain.c), and the nonces.
 *
 * Nonces (for stages flagged PGNFS_XFORM_NEEDS_NONCE: aes-256-gcm) are
 * 96 bits: the epoch (32 bits, little-endian) then a counter (64 bits,
 * little-endian) that starts at 0 in each process and only grows
 * (one atomic add per nonce). The epoch comes from the caller, who takes
 * it from the file system so that no two processes, and no two runs,
 * ever hold the same one (xf_env_set_epoch). Hence no (epoch, counter)
 * pair is handed out twice for one file system, and since the key
 * belongs to the file system, no nonce repeats under a key. Changing the
 * epoch mid-run keeps the counter, so even an epoch set twice in one
 * process cannot repeat a nonce there. The counter would need 2^64
 * encryptions to wrap; xf_env_nonce refuses from 2^63 on, so it never
 * does.
 *
 * NOTES
 *   env->mu guards loading kinds and adding chains; lookups read the
 *   chain table without it (xf_chain.c). The key is cleansed at free.
 */
#include <errno.h>
#include <stdlib.h>

#include <openssl/crypto.h>

#include "xf_int.h"

/* xf_env_new -- see xf.h. */
int xf_env_new(const xf_env_config *cfg, xf_env **out, xf_err *err)
{
    xf_env *env;
    int rc;

    *out = NULL;
    if (cfg->zstd_level != 0 && (cfg->zstd_level < -7 || cfg->zstd_level > 22)) {
        xf_errf(err, "[xform] zstd_level %d is outside -7..22", cfg->zstd_level);
        return -EINVAL;
    }
    env = calloc(1, sizeof *env);
    if (!env) {
        xf_errf(err, "out of memory");
        return -ENOMEM;
    }
    pthread_mutex_init(&env->mu, NULL);
    env->zstd_level = cfg->zstd_level ? cfg->zstd_level : 3;
    atomic_init(&env->epoch, cfg->epoch);
    atomic_init(&env->counter, 0);
    env->none.env = env;
    env->none.text = "none";
    if (cfg->plugin_dir && cfg->plugin_dir[0]) {
        env->plugin_dir = strdup(cfg->plugin_dir);
        if (!env->plugin_dir) {
            xf_errf(err, "out of memory");
            rc = -ENOMEM;
            goto err;
        }
    }
    if (cfg->key_file && cfg->key_file[0]) {
        rc = xf_key_load(cfg->key_file, env->key, &env->key_id, err);
        if (rc < 0)
            goto err;
        env->has_key = true;
    }
    rc = xf_kind_init(env, err);
    if (rc < 0)
        goto err;
    *out = env;
    return 0;
err:
    xf_env_free(env);
    return rc;
}

/* xf_env_free -- see xf.h. Chains first (their stages' fini), then the
 * kinds (plug-ins unloaded last). */
void xf_env_free(xf_env *env)
{
    if (!env)
        return;
    xf_chain_free_all(env);
    xf_kind_free_all(env);
    free(env->plugin_dir);
    OPENSSL_cleanse(env->key, sizeof env->key);
    pthread_mutex_destroy(&env->mu);
    free(env);
}

/* xf_env_set_epoch -- see xf.h. */
void xf_env_set_epoch(xf_env *env, uint32_t epoch)
{
    atomic_store(&env->epoch, epoch);
}

/* xf_env_key_id -- see xf.h. */
int xf_env_key_id(const xf_env *env, uint32_t *id)
{
    if (!env->has_key)
        return -ENOKEY;
    *id = env->key_id;
    return 0;
}

/* xf_env_nonce -- see xf_int.h. -EINVAL without an epoch; -EOVERFLOW
 * once 2^63 nonces were handed out. */
int xf_env_nonce(xf_env *env, unsigned char nonce[PGNFS_XFORM_NONCE_LEN])
{
    uint32_t epoch = atomic_load(&env->epoch);
    uint64_t n;

    if (epoch == 0)
        return -EINVAL;
    n = atomic_fetch_add(&env->counter, 1);
    if (n >= UINT64_C(1) << 63) /* refused long before the counter could wrap */
        return -EOVERFLOW;
    xf_put32(nonce, epoch);
    xf_put64(nonce + 4, n);
    return 0;
}
