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

void srv_buf_set(srv_buf *b, const void *d, size_t n)
{
    srv_buf_reserve(b, n);
    if (n)
        memcpy(b->data, d, n);
    b->len = n;
}

void srv_buf_clear(srv_buf *b)
{
    g_free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}
