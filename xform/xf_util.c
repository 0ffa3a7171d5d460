/*
 * xf_util.c -- small helpers of the transformation library: messages into
 * an xf_err, the CRC-32C that guards a chunk's header, the 64-bit id of a
 * chain's canonical text.
 *
 * NOTES
 *   The CRC table is built once (pthread_once) and then only read.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include <openssl/evp.h>

#include "xf_int.h"

static uint32_t xf_crc_table[256];
static pthread_once_t xf_crc_once = PTHREAD_ONCE_INIT;

/* The table of the reflected Castagnoli polynomial 0x82F63B78. */
static void xf_crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;

        for (int k = 0; k < 8; k++)
            c = c & 1 ? c >> 1 ^ 0x82F63B78u : c >> 1;
        xf_crc_table[i] = c;
    }
}

/* xf_crc32c -- CRC-32C of n bytes at p (the iSCSI check value:
 * "123456789" -> 0xE3069283). Cannot fail. */
uint32_t xf_crc32c(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint32_t c = 0xFFFFFFFFu;

    pthread_once(&xf_crc_once, xf_crc_init);
    for (size_t i = 0; i < n; i++)
        c = xf_crc_table[(c ^ b[i]) & 0xFF] ^ c >> 8;
    return c ^ 0xFFFFFFFFu;
}

/* xf_hdr_crc -- CRC-32C of a chunk header of hdr_len bytes (>= 28) with
 * its CRC field (bytes 24..27) taken as zero. Cannot fail. */
uint32_t xf_hdr_crc(const unsigned char *h, size_t hdr_len)
{
    uint32_t c = 0xFFFFFFFFu;

    pthread_once(&xf_crc_once, xf_crc_init);
    for (size_t i = 0; i < hdr_len; i++)
        c = xf_crc_table[(c ^ (i >= 24 && i < 28 ? 0 : h[i])) & 0xFF] ^ c >> 8;
    return c ^ 0xFFFFFFFFu;
}

/* xf_errf -- format a message into err (NULL: dropped). */
void xf_errf(xf_err *err, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

/* xf_text_id -- *id = the first 8 bytes of SHA-256(text), little-endian,
 * never 0 (that is "none"'s). Returns 0, or -ENOMEM when libcrypto
 * fails. */
int xf_text_id(const char *text, uint64_t *id)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    if (!EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL) || mdlen < 8)
        return -ENOMEM;
    *id = xf_get64(md);
    if (*id == 0)
        *id = 1;
    return 0;
}
