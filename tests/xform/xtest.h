/*
 * xtest.h -- what the transformation library's tests share: a private
 * directory per test program (plug-ins copied in, key files), envs made
 * from it, data of every kind, and encode-then-decode with every check.
 */
#ifndef PGNFS_XTEST_H
#define PGNFS_XTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "xf.h"

/* The kinds of data a chunk is filled with. */
typedef enum {
    XT_TEXT,   /* words: compresses well */
    XT_RANDOM, /* incompressible */
    XT_ZEROS,
    XT_MIXED, /* runs of each */
    XT_KINDS
} xt_kind;

/* The private directory (made on first use, removed at exit), its
 * plug-in directory (every test plug-in and example copied in, mode
 * 0755) and a good key file (0600, 64 hex digits). */
const char *xt_dir(void);
const char *xt_plugin_dir(void);
const char *xt_key_file(void);
/* A new file in xt_dir() holding n bytes with the given mode; its path
 * (g_free it). */
char *xt_file(const char *name, const void *data, size_t n, unsigned mode);

/* An env with the test key, the test plug-ins and epoch 7 (key and
 * plug-ins optional). Asserts success. */
xf_env *xt_env(bool key, bool plugins);
/* The chain text must be accepted; returns it. */
const xf_chain *xt_chain(xf_env *env, const char *text);

/* Fill n bytes with data of kind k. */
void xt_fill(GRand *r, xt_kind k, unsigned char *p, size_t n);

/*
 * Encode n bytes of plain at (file, chunk), check the room was honoured
 * (guard bytes past xf_encode_room untouched), decode into a buffer of
 * exactly n bytes (or xf_decode_room if that is -ENOBUFS) and compare.
 * Returns the stored length.
 */
size_t xt_roundtrip(const xf_chain *c, xf_work *w, uint64_t file, uint64_t chunk,
                    const unsigned char *plain, size_t n);

#endif /* PGNFS_XTEST_H */
