/*
 * xf_sha256.c -- the built-in stage sha256: a checksum per stored chunk,
 * verified on every read. Forward stores SHA-256(aad || input) in the
 * header (32 bytes) and passes the bytes on unchanged; inverse recomputes
 * it and answers -EBADMSG on a mismatch, so damaged data is never
 * returned. The aad (header fields, file id, chunk number, position)
 * makes a chunk copied to another place fail too.
 *
 * NOTES
 *   State: the fetched digest (read-only). Each worker keeps one digest
 *   context in its slot. Keeps lengths, works in place (in place it
 *   writes nothing but the header).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "xf_int.h"

#define XF_SHA_LEN 32

static int xf_sha_init(const char *options, void **state, char *err, size_t err_len)
{
    EVP_MD *md;

    if (options[0]) {
        snprintf(err, err_len, "takes no options");
        return -EINVAL;
    }
    md = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (!md) {
        snprintf(err, err_len, "libcrypto has no SHA256");
        return -ENOMEM;
    }
    *state = md;
    return 0;
}

static void xf_sha_fini(void *state)
{
    EVP_MD_free(state);
}

static void xf_sha_worker_fini(void *worker)
{
    EVP_MD_CTX_free(worker);
}

/* SHA-256(aad || in) into md. */
static int xf_sha_digest(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                         unsigned char md[XF_SHA_LEN])
{
    unsigned int len = 0;

    if (!*call->worker) {
        *call->worker = EVP_MD_CTX_new();
        if (!*call->worker)
            return -ENOMEM;
    }
    if (!EVP_DigestInit_ex2(*call->worker, state, NULL) ||
        !EVP_DigestUpdate(*call->worker, call->aad, call->aad_len) ||
        !EVP_DigestUpdate(*call->worker, in, n) || !EVP_DigestFinal_ex(*call->worker, md, &len) ||
        len != XF_SHA_LEN) {
        snprintf(call->err, call->err_len, "sha256 failed (libcrypto)");
        return -EIO;
    }
    return 0;
}

static int xf_sha_fwd(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                      unsigned char *out, size_t room, size_t *out_len)
{
    int rc;

    if (room < n)
        return -ENOBUFS;
    rc = xf_sha_digest(state, call, in, n, call->meta);
    if (rc < 0)
        return rc;
    if (out != in)
        memcpy(out, in, n);
    *out_len = n;
    return 0;
}

static int xf_sha_inv(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                      unsigned char *out, size_t room, size_t *out_len)
{
    unsigned char md[XF_SHA_LEN];
    int rc;

    if (room < n)
        return -ENOBUFS;
    rc = xf_sha_digest(state, call, in, n, md);
    if (rc < 0)
        return rc;
    if (CRYPTO_memcmp(md, call->meta, XF_SHA_LEN) != 0) {
        snprintf(call->err, call->err_len,
                 "sha256 digest mismatch: the chunk was changed, damaged or moved");
        return -EBADMSG;
    }
    if (out != in)
        memcpy(out, in, n);
    *out_len = n;
    return 0;
}

const pgnfs_xform_desc xf_sha256_desc = {
    .abi_version = PGNFS_XFORM_ABI_VERSION,
    .flags = PGNFS_XFORM_PRESERVES_LENGTH | PGNFS_XFORM_IN_PLACE,
    .name = "sha256",
    .meta_size = XF_SHA_LEN,
    .init = xf_sha_init,
    .fini = xf_sha_fini,
    .forward = xf_sha_fwd,
    .inverse = xf_sha_inv,
    .worker_fini = xf_sha_worker_fini,
};
