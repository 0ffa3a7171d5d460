/*
 * xf_aes.c -- the built-in stage aes-256-gcm (OpenSSL EVP): encrypts and
 * authenticates a chunk under the env's key ([xform] key_file; never
 * stored in the database, never logged).
 *
 * Header bytes (32): the key id (4, see xf_key.c), the nonce (12) and the
 * tag (16). The nonce is the one the library hands this call
 * (PGNFS_XFORM_NEEDS_NONCE: epoch || counter, xf_env.c), so rewriting a
 * chunk never reuses one. The associated data is the call's aad: the
 * header's fields (format, chain id, plain length), the file id, the
 * chunk number and the stage's position, so a chunk moved to another
 * file, position or chain fails authentication like a changed one.
 *
 * Inverse checks the key id first (a chunk encrypted under another key
 * is reported as such), then decrypts and checks the tag: any failure is
 * -EBADMSG and the caller wipes what was decrypted.
 *
 * NOTES
 *   State: the key's address in the env and its id, and the fetched
 *   cipher (read-only after init). Each worker keeps two cipher contexts
 *   (encrypt, decrypt) in its slot, keyed once; per chunk only the nonce
 *   is set. Works in place (GCM allows out == in).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "xf_int.h"

#define XF_AES_META 32
#define XF_AES_TAG  16

typedef struct xf_aes {
    const unsigned char *key; /* the env's */
    uint32_t key_id;
    EVP_CIPHER *cipher;
} xf_aes;

typedef struct xf_aes_worker {
    EVP_CIPHER_CTX *enc, *dec;
    const unsigned char *key; /* the key both are set up with */
} xf_aes_worker;

/* xf_aes_init_env -- see xf_int.h. -ENOKEY without a key, -EINVAL with
 * options, -ENOMEM. */
int xf_aes_init_env(xf_env *env, const char *options, void **state, char *err, size_t err_len)
{
    xf_aes *a;

    if (options[0]) {
        snprintf(err, err_len, "takes no options");
        return -EINVAL;
    }
    if (!env->has_key) {
        snprintf(err, err_len, "needs a key: set [xform] key_file");
        return -ENOKEY;
    }
    a = calloc(1, sizeof *a);
    if (!a)
        return -ENOMEM;
    a->key = env->key;
    a->key_id = env->key_id;
    a->cipher = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    if (!a->cipher) {
        snprintf(err, err_len, "libcrypto has no AES-256-GCM");
        free(a);
        return -ENOMEM;
    }
    *state = a;
    return 0;
}

/* Never called: the registry uses xf_aes_init_env. */
static int xf_aes_init(const char *options, void **state, char *err, size_t err_len)
{
    (void)options;
    (void)state;
    snprintf(err, err_len, "needs the env's key");
    return -EINVAL;
}

static void xf_aes_fini(void *state)
{
    xf_aes *a = state;

    EVP_CIPHER_free(a->cipher);
    free(a);
}

static void xf_aes_worker_fini(void *worker)
{
    xf_aes_worker *w = worker;

    EVP_CIPHER_CTX_free(w->enc);
    EVP_CIPHER_CTX_free(w->dec);
    free(w);
}

/* The worker's contexts, keyed with a's key (made on first use). */
static xf_aes_worker *xf_aes_worker_get(const xf_aes *a, pgnfs_xform_call *call)
{
    xf_aes_worker *w = *call->worker;

    if (w && w->key == a->key)
        return w;
    if (!w) {
        w = calloc(1, sizeof *w);
        if (!w)
            return NULL;
        w->enc = EVP_CIPHER_CTX_new();
        w->dec = EVP_CIPHER_CTX_new();
        if (!w->enc || !w->dec) {
            xf_aes_worker_fini(w);
            return NULL;
        }
        *call->worker = w;
    }
    if (!EVP_EncryptInit_ex2(w->enc, a->cipher, a->key, NULL, NULL) ||
        !EVP_DecryptInit_ex2(w->dec, a->cipher, a->key, NULL, NULL)) {
        w->key = NULL;
        return NULL;
    }
    w->key = a->key;
    return w;
}

static int xf_aes_fwd(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                      unsigned char *out, size_t room, size_t *out_len)
{
    const xf_aes *a = state;
    xf_aes_worker *w;
    int l = 0, l2 = 0;

    if (room < n || n > INT_MAX || call->aad_len > INT_MAX)
        return -ENOBUFS;
    if (!call->nonce) {
        snprintf(call->err, call->err_len, "no nonce (no epoch set)");
        return -EINVAL;
    }
    w = xf_aes_worker_get(a, call);
    if (!w)
        return -ENOMEM;
    xf_put32(call->meta, a->key_id);
    memcpy(call->meta + 4, call->nonce, PGNFS_XFORM_NONCE_LEN);
    if (!EVP_EncryptInit_ex2(w->enc, NULL, NULL, call->nonce, NULL) ||
        !EVP_EncryptUpdate(w->enc, NULL, &l, call->aad, (int)call->aad_len) ||
        !EVP_EncryptUpdate(w->enc, out, &l, in, (int)n) ||
        !EVP_EncryptFinal_ex(w->enc, out + l, &l2) ||
        !EVP_CIPHER_CTX_ctrl(w->enc, EVP_CTRL_GCM_GET_TAG, XF_AES_TAG, call->meta + 16)) {
        snprintf(call->err, call->err_len, "encryption failed (libcrypto)");
        return -EIO;
    }
    *out_len = (size_t)l + (size_t)l2;
    return 0;
}

static int xf_aes_inv(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                      unsigned char *out, size_t room, size_t *out_len)
{
    const xf_aes *a = state;
    unsigned char tag[XF_AES_TAG];
    uint32_t id = xf_get32(call->meta);
    xf_aes_worker *w;
    int l = 0, l2 = 0;

    if (room < n || n > INT_MAX || call->aad_len > INT_MAX)
        return -ENOBUFS;
    if (id != a->key_id) {
        snprintf(call->err, call->err_len,
                 "encrypted under key id %08x, but the loaded key's id is %08x "
                 "(wrong [xform] key_file?)",
                 id, a->key_id);
        return -EBADMSG;
    }
    w = xf_aes_worker_get(a, call);
    if (!w)
        return -ENOMEM;
    memcpy(tag, call->meta + 16, XF_AES_TAG);
    if (!EVP_DecryptInit_ex2(w->dec, NULL, NULL, call->meta + 4, NULL) ||
        !EVP_DecryptUpdate(w->dec, NULL, &l, call->aad, (int)call->aad_len) ||
        !EVP_DecryptUpdate(w->dec, out, &l, in, (int)n) ||
        !EVP_CIPHER_CTX_ctrl(w->dec, EVP_CTRL_GCM_SET_TAG, XF_AES_TAG, tag)) {
        snprintf(call->err, call->err_len, "decryption failed (libcrypto)");
        return -EIO;
    }
    if (EVP_DecryptFinal_ex(w->dec, out + l, &l2) <= 0) {
        snprintf(call->err, call->err_len,
                 "authentication failed: the chunk was changed, damaged or moved");
        return -EBADMSG;
    }
    *out_len = (size_t)l + (size_t)l2;
    return 0;
}

const pgnfs_xform_desc xf_aes_desc = {
    .abi_version = PGNFS_XFORM_ABI_VERSION,
    .flags = PGNFS_XFORM_PRESERVES_LENGTH | PGNFS_XFORM_IN_PLACE | PGNFS_XFORM_NEEDS_NONCE,
    .name = "aes-256-gcm",
    .meta_size = XF_AES_META,
    .init = xf_aes_init,
    .fini = xf_aes_fini,
    .forward = xf_aes_fwd,
    .inverse = xf_aes_inv,
    .worker_fini = xf_aes_worker_fini,
};
