/*
 * srv_buf.h -- a growable byte buffer: the reply a worker encodes, the
 * copy the duplicate request cache hands back.
 *
 * NOTES
 *   data is g_malloc'd and owned by the buffer; a zeroed srv_buf is empty
 *   and ready. Not thread-safe: one owner at a time.
 */
#ifndef PGNFS_SRV_BUF_H
#define PGNFS_SRV_BUF_H

#include <stddef.h>

typedef struct {
    unsigned char *data;
    size_t len, cap;
} srv_buf;

/* srv_buf_reserve -- make room for at least cap bytes. Cannot fail. */
void srv_buf_reserve(srv_buf *b, size_t cap);
/* srv_buf_set -- replace the contents with n bytes of d. Cannot fail. */
void srv_buf_set(srv_buf *b, const void *d, size_t n);
/* srv_buf_clear -- free the storage; the buffer is empty and reusable. */
void srv_buf_clear(srv_buf *b);

#endif /* PGNFS_SRV_BUF_H */
