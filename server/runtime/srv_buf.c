/*
 * srv_buf.c -- the growable byte buffer (srv_buf.h): capacity doubles
 * from 256 bytes as needed.
 *
 * NOTES
 *   Allocation cannot fail (g_realloc aborts on exhaustion).
 */
#include <string.h>

#include <glib.h>

#include "srv_buf.h"

#define SRV_BUF_MIN 256

/* srv_buf_reserve -- see srv_buf.h. */
void srv_buf_reserve(srv_buf *b, size_t cap)
{
    if (cap <= b->cap)
        return;
    size_t n = b->cap ? b->cap : SRV_BUF_MIN;
    while (n < cap)
        n *= 2;
    b->data = g_realloc(b->data, n);
    b->cap = n;
}

/* srv_buf_set -- see srv_buf.h. */
void srv_buf_set(srv_buf *b, const void *d, size_t n)
{
    srv_buf_reserve(b, n);
    if (n)
        memcpy(b->data, d, n);
    b->len = n;
    b->off = 0;
}

/* srv_buf_clear -- see srv_buf.h. */
void srv_buf_clear(srv_buf *b)
{
    g_free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->off = 0;
}
