/*
 * fh.c -- the NFS file-handle codec (fh.h): pack and authenticate the
 * (export, fsid, inode, generation; snapshot) a handle names.
 *
 * NOTES
 *   The MAC is HMAC-SHA256 over bytes 0-21 keyed with the file system's
 *   secret, truncated to its first 16 bytes, and compared in constant time,
 *   so a client that changes any bit of a handle, or makes one up, gets
 *   -EBADF. The MAC is checked before the fsid: only a handle this secret
 *   signed can be "for another file system" (-ESTALE).
 *
 *   Thread-safe. Each thread keeps one HMAC context keyed with the secret
 *   (freed when the thread exits): OpenSSL 3's one-shot HMAC() looks the
 *   digest up in its provider tables and keys a new context on every call,
 *   which cost more than the rest of a cached GETATTR.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>
#include <pthread.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "fh.h"

/* Where the fields are (fh.h). */
enum {
    FH_OFF_VERSION = 0,
    FH_OFF_EXPORT = 1,
    FH_OFF_FSID = 2,
    FH_OFF_INO = 10,
    FH_OFF_GEN = 18,
    FH_OFF_MAC = 22,
    FH_MAC_LEN = FH_SIZE - FH_OFF_MAC,
};

static void put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
}

static void put_be32(unsigned char *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--) {
        p[i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
}

static uint64_t get_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t get_be32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = (v << 8) | p[i];
    return v;
}

/* One thread's keyed context, and the secret it was keyed with. */
typedef struct {
    EVP_MAC_CTX *ctx;
    unsigned char key[DBFS_SECRET_LEN];
} fh_mac_state;

static EVP_MAC *fh_hmac;
static pthread_key_t fh_state_key;
static pthread_once_t fh_once = PTHREAD_ONCE_INIT;

static void fh_state_free(void *p)
{
    fh_mac_state *st = p;

    EVP_MAC_CTX_free(st->ctx);
    g_free(st);
}

static void fh_init(void)
{
    fh_hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (!fh_hmac || pthread_key_create(&fh_state_key, fh_state_free) != 0)
        g_error("fh: HMAC-SHA256 is not available from OpenSSL");
}

/*
 * fh_mac -- the full HMAC-SHA256 of the handle's first FH_OFF_MAC bytes.
 * Cannot fail (a missing OpenSSL HMAC is a fatal error).
 */
static void fh_mac(const dbfs_info *info, const unsigned char *h,
                   unsigned char mac[EVP_MAX_MD_SIZE])
{
    fh_mac_state *st;
    size_t len = 0;
    bool rekey = false;

    pthread_once(&fh_once, fh_init);
    st = pthread_getspecific(fh_state_key);
    if (!st) {
        OSSL_PARAM params[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
            OSSL_PARAM_construct_end()};

        st = g_new0(fh_mac_state, 1);
        st->ctx = EVP_MAC_CTX_new(fh_hmac);
        if (!st->ctx || !EVP_MAC_CTX_set_params(st->ctx, params) ||
            pthread_setspecific(fh_state_key, st) != 0)
            g_error("fh: HMAC-SHA256 is not available from OpenSSL");
        rekey = true;
    }
    rekey |= memcmp(st->key, info->secret, DBFS_SECRET_LEN) != 0;
    if (rekey)
        memcpy(st->key, info->secret, DBFS_SECRET_LEN);
    /* A NULL key reuses the one the context has. */
    if (!EVP_MAC_init(st->ctx, rekey ? st->key : NULL, rekey ? DBFS_SECRET_LEN : 0, NULL) ||
        !EVP_MAC_update(st->ctx, h, FH_OFF_MAC) ||
        !EVP_MAC_final(st->ctx, mac, &len, EVP_MAX_MD_SIZE) || len < FH_MAC_LEN)
        g_error("fh: HMAC-SHA256 is not available from OpenSSL");
}

void fh_encode(const dbfs_info *info, unsigned export_index, dbfs_fh fh, unsigned char out[FH_SIZE])
{
    unsigned char mac[EVP_MAX_MD_SIZE];

    g_assert(export_index <= 0xff);
    out[FH_OFF_VERSION] = fh.snap == 0 ? FH_VERSION : FH_VERSION_SNAP;
    out[FH_OFF_EXPORT] = (unsigned char)export_index;
    if (fh.snap == 0) {
        put_be64(out + FH_OFF_FSID, info->fsid);
    } else {
        put_be32(out + FH_OFF_FSID, fh.snap);
        put_be32(out + FH_OFF_FSID + 4, (uint32_t)info->fsid);
    }
    put_be64(out + FH_OFF_INO, fh.ino);
    put_be32(out + FH_OFF_GEN, fh.gen);
    fh_mac(info, out, mac);
    memcpy(out + FH_OFF_MAC, mac, FH_MAC_LEN);
}

int fh_decode(const dbfs_info *info, const void *data, size_t len, fh_decoded *out)
{
    const unsigned char *h = data;
    unsigned char mac[EVP_MAX_MD_SIZE];

    if (!h || len != FH_SIZE ||
        (h[FH_OFF_VERSION] != FH_VERSION && h[FH_OFF_VERSION] != FH_VERSION_SNAP))
        return -EBADF;
    fh_mac(info, h, mac);
    if (CRYPTO_memcmp(mac, h + FH_OFF_MAC, FH_MAC_LEN) != 0)
        return -EBADF;
    out->fh.snap = 0;
    if (h[FH_OFF_VERSION] == FH_VERSION_SNAP) {
        out->fh.snap = get_be32(h + FH_OFF_FSID);
        if (out->fh.snap == 0 || get_be32(h + FH_OFF_FSID + 4) != (uint32_t)info->fsid)
            return -ESTALE;
    } else if (get_be64(h + FH_OFF_FSID) != info->fsid) {
        return -ESTALE;
    }
    out->export_index = h[FH_OFF_EXPORT];
    out->fh.ino = get_be64(h + FH_OFF_INO);
    out->fh.gen = get_be32(h + FH_OFF_GEN);
    return 0;
}
