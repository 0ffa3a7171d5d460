/*
 * dbfs_codec.h -- how a chunk's bytes are stored: the encodings "binary"
 * and "base64" (dbfs_codec.c says why each piece is encoded on its own).
 *
 * NOTES
 *   Stateless; callers own every buffer; nothing here allocates.
 */
#ifndef PGNFS_DBFS_CODEC_H
#define PGNFS_DBFS_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "dbfs.h"

/* Stored bytes of n file bytes in encoding e (a base64 value has no line
 * breaks and no terminator). Cannot fail. */
size_t dbfs_codec_enc_len(dbfs_encoding e, size_t n);
/* Encode n bytes of src into dst, which has room for dbfs_codec_enc_len()
 * plus one byte (the encoder writes a NUL after the text). Returns the
 * stored length. Cannot fail. */
size_t dbfs_codec_encode(dbfs_encoding e, const void *src, size_t n, void *dst);
/* Decode the stored value src (len bytes) into dst, which has room for
 * `room` bytes. Returns the number of file bytes, or -EIO for a value that
 * is not a valid encoding or does not fit (logged). */
int64_t dbfs_codec_decode(dbfs_encoding e, const void *src, size_t len, void *dst, size_t room);

#endif /* PGNFS_DBFS_CODEC_H */
