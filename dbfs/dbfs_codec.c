/*
 * dbfs_codec.c -- how a chunk's bytes are stored: "binary" (the bytes) or
 * "base64" (the ASCII text of their base64 encoding, one line, with '='
 * padding: OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock).
 *
 * Each chunk, and each piece of a chunk that a WRITE sends, is encoded on
 * its own, so a stored base64 value always decodes to exactly the chunk's
 * bytes, and SQL (decode(..., 'base64') in schema/functions/20_data.sql)
 * reads what this file writes and the other way round.
 *
 * NOTES
 *   Stateless; callers own every buffer. Nothing here allocates.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <glib.h>
#include <openssl/evp.h>

#include "dbfs_codec.h"

/* dbfs_codec_enc_len -- see dbfs_codec.h. */
size_t dbfs_codec_enc_len(dbfs_encoding e, size_t n)
{
    return e == DBFS_ENC_BASE64 ? 4 * ((n + 2) / 3) : n;
}

/* dbfs_codec_encode -- see dbfs_codec.h. EVP_EncodeBlock takes an int
 * length: pieces are at most a chunk (1 MiB), far below INT_MAX. */
size_t dbfs_codec_encode(dbfs_encoding e, const void *src, size_t n, void *dst)
{
    if (e != DBFS_ENC_BASE64) {
        memcpy(dst, src, n);
        return n;
    }
    g_assert(n <= INT_MAX / 2);
    return (size_t)EVP_EncodeBlock(dst, src, (int)n);
}

/* dbfs_codec_decode -- see dbfs_codec.h. EVP_DecodeBlock answers whole
 * 3-byte groups (the '=' padding decodes as zero bytes), so the padding
 * is taken off here. */
int64_t dbfs_codec_decode(dbfs_encoding e, const void *src, size_t len, void *dst, size_t room)
{
    const unsigned char *s = src;
    unsigned char quad[3];
    size_t pad = 0, whole;
    int n;

    if (e != DBFS_ENC_BASE64) {
        if (len > room)
            goto bad;
        memcpy(dst, src, len);
        return (int64_t)len;
    }
    if (len == 0)
        return 0;
    if (len % 4 != 0 || len / 4 * 3 > room + 2 || len > INT_MAX / 2)
        goto bad;
    if (s[len - 1] == '=')
        pad = s[len - 2] == '=' ? 2 : 1;
    /* All groups but the last go straight to dst; the last one (which may
     * carry padding) through a small buffer, so dst needs no slack. */
    whole = len - 4;
    if (whole > 0) {
        n = EVP_DecodeBlock(dst, s, (int)whole);
        if (n < 0 || (size_t)n != whole / 4 * 3)
            goto bad;
    }
    n = EVP_DecodeBlock(quad, s + whole, 4);
    if (n != 3 || whole / 4 * 3 + 3 - pad > room)
        goto bad;
    memcpy((unsigned char *)dst + whole / 4 * 3, quad, 3 - pad);
    return (int64_t)(whole / 4 * 3 + 3 - pad);
bad:
    g_warning("a stored chunk of %zu bytes is not valid %s data (the database was changed "
              "behind pgnfs?)",
              len, e == DBFS_ENC_BASE64 ? "base64" : "chunk");
    return -EIO;
}
