/*
 * srv_buf.h -- a growable byte buffer: the reply a worker encodes, the
 * copy the duplicate request cache hands back.
 *
 * NOTES
 *   data is g_malloc'd and owned by the buffer; a zeroed srv_buf is empty
 *   and ready. The message is len bytes at data + off: off is 0 but for a
 *   reply built around a payload already in place (srv_reply_payload).
 *   Not thread-safe: one owner at a time.
 */
#ifndef PGNFS_SRV_BUF_H
#define PGNFS_SRV_BUF_H

#include <stddef.h>

typedef struct srv_buf {
    unsigned char *data;
    size_t len, cap;
    size_t off; /* the message starts at data + off */
} srv_buf;

/* srv_buf_reserve -- make room for at least cap bytes (from data; the
 * contents are kept, data may move). Cannot fail. */
void srv_buf_reserve(srv_buf *b, size_t cap);
/* srv_buf_set -- replace the contents with n bytes of d (off 0). Cannot
 * fail. */
void srv_buf_set(srv_buf *b, const void *d, size_t n);
/* srv_buf_msg -- the message: len bytes from here. */
static inline const unsigned char *srv_buf_msg(const srv_buf *b)
{
    return b->data + b->off;
}
/* srv_buf_clear -- free the storage; the buffer is empty and reusable. */
void srv_buf_clear(srv_buf *b);

#endif /* PGNFS_SRV_BUF_H */
