/*
 * fh.c -- the NFS file-handle codec (fh.h): pack and authenticate the
 * (export, fsid, inode, generation) a handle names.
 *
 * NOTES
 *   The MAC is HMAC-SHA256 over bytes 0-21 keyed with the file system's
 *   secret, truncated to its first 16 bytes, and compared in constant time,
 *   so a client that changes any bit of a handle, or makes one up, gets
 *   -EBADF. The MAC is checked before the fsid: only a handle this secret
 *   signed can be "for another file system" (-ESTALE).
 *
 *   No state: both functions work on the caller's memory only and are safe
 *   to call from any thread.
 */
#include <errno.h>
#include <string.h>

#include <glib.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

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

/*
 * fh_mac -- the full HMAC-SHA256 of the handle's first FH_OFF_MAC bytes.
 * HMAC() fails only if OpenSSL itself is broken (no SHA-256): that is not
 * a client's doing, so it is the loud path.
 */
static void fh_mac(const dbfs_info *info, const unsigned char *h,
                   unsigned char mac[EVP_MAX_MD_SIZE])
{
    unsigned int len = 0;

    if (!HMAC(EVP_sha256(), info->secret, DBFS_SECRET_LEN, h, FH_OFF_MAC, mac, &len) ||
        len < FH_MAC_LEN)
        g_error("fh: HMAC-SHA256 is not available from OpenSSL");
}

void fh_encode(const dbfs_info *info, unsigned export_index, dbfs_fh fh, unsigned char out[FH_SIZE])
{
    unsigned char mac[EVP_MAX_MD_SIZE];

    g_assert(export_index <= 0xff);
    out[FH_OFF_VERSION] = FH_VERSION;
    out[FH_OFF_EXPORT] = (unsigned char)export_index;
    put_be64(out + FH_OFF_FSID, info->fsid);
    put_be64(out + FH_OFF_INO, fh.ino);
    put_be32(out + FH_OFF_GEN, fh.gen);
    fh_mac(info, out, mac);
    memcpy(out + FH_OFF_MAC, mac, FH_MAC_LEN);
}

int fh_decode(const dbfs_info *info, const void *data, size_t len, fh_decoded *out)
{
    const unsigned char *h = data;
    unsigned char mac[EVP_MAX_MD_SIZE];

    if (!h || len != FH_SIZE || h[FH_OFF_VERSION] != FH_VERSION)
        return -EBADF;
    fh_mac(info, h, mac);
    if (CRYPTO_memcmp(mac, h + FH_OFF_MAC, FH_MAC_LEN) != 0)
        return -EBADF;
    if (get_be64(h + FH_OFF_FSID) != info->fsid)
        return -ESTALE;
    out->export_index = h[FH_OFF_EXPORT];
    out->fh.ino = get_be64(h + FH_OFF_INO);
    out->fh.gen = get_be32(h + FH_OFF_GEN);
    return 0;
}
