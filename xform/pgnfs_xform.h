/*
 * pgnfs_xform.h -- the plug-in interface of pgnfs's transformation chains,
 * version PGNFS_XFORM_ABI_VERSION. The only header a plug-in needs.
 *
 * A transformation ("stage") turns the bytes of one stored chunk into
 * other bytes (forward, when pgnfs stores the chunk) and back (inverse,
 * when it reads it). A file's chain is an ordered list of stages; the
 * built-in ones (identity, increment, zstd, lz4, aes-256-gcm, sha256)
 * implement exactly this interface too.
 *
 * A plug-in is a shared library NAME.so in the configured directory
 * ([xform] plugin_dir) that exports one symbol,
 *
 *     const pgnfs_xform_desc *pgnfs_xform_describe(void);
 *
 * returning a descriptor that lives as long as the library is loaded.
 * pgnfs loads it (dlopen, RTLD_NOW | RTLD_LOCAL) the first time a chain
 * names NAME and keeps it loaded. It refuses, with a message naming the
 * file, a library without the symbol, a NULL descriptor, another
 * abi_version, a name other than NAME, unknown flag bits, a meta_size
 * over PGNFS_XFORM_META_MAX, and a NULL init, fini, forward or inverse
 * (or max_expansion when the stage changes lengths). Each time a chain
 * creates an instance (init with that chain's options) pgnfs runs it on
 * probe chunks first: forward then inverse must give back the probe's
 * bytes exactly, write nothing past the room given, leave the input
 * alone, and keep the length when the flags say so. A plug-in that fails
 * is refused; nothing is stored through it.
 *
 * CONTRACT OF THE FUNCTIONS
 *   All return 0 on success or a negative errno, and on failure may put
 *   a short message (no secrets: it is logged) into call->err (err_len
 *   bytes, NUL-terminated). They never keep pointers to buffers past the
 *   call.
 *   init(options, &state, err, err_len): options is the stage's option
 *     text as the chain spells it after the name ("k=v:k2=v2", "" when
 *     none); keys are unique, values have no ',', ':', '=' or blanks.
 *     Reject what you do not understand (-EINVAL and a message).
 *   fini(state): free it. Called once, after every worker has finished.
 *   max_expansion(state, n): the most bytes forward may produce from n
 *     input bytes (may be NULL when PRESERVES_LENGTH is set).
 *   forward(state, call, in, n, out, room, &out_len): transform n bytes
 *     at in into out, at most room bytes (room >= max_expansion(n)); set
 *     *out_len. Write call->meta (meta_size bytes, stored in the chunk's
 *     header) with whatever inverse will need (a nonce, a tag, a mode).
 *   inverse(state, call, in, n, out, room, &out_len): undo forward; room
 *     is exactly the length forward was given (the host records it), and
 *     *out_len must equal it. call->meta holds what forward wrote (read
 *     only). Data that fails a check is -EBADMSG.
 *   worker_fini(worker): free what the stage keeps in call->worker (may
 *     be NULL when the stage keeps nothing there).
 *   in and out never overlap, except that a stage flagged IN_PLACE may be
 *   called with out == in (exactly). Both functions are called from many
 *   threads at once with the same state: state must be read-only after
 *   init, and anything mutable belongs in *call->worker, a slot private
 *   to one worker thread (NULL at first; the stage may allocate into it,
 *   and worker_fini frees it when the worker ends).
 *
 * VERSIONING
 *   A change to any layout or contract here raises
 *   PGNFS_XFORM_ABI_VERSION; a plug-in built against another version is
 *   refused, never called.
 */
#ifndef PGNFS_XFORM_H
#define PGNFS_XFORM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PGNFS_XFORM_ABI_VERSION 1
#define PGNFS_XFORM_SYMBOL      "pgnfs_xform_describe"
/* The most header bytes a stage may keep per chunk (pgnfs_xform_desc.meta_size). */
#define PGNFS_XFORM_META_MAX 64
/* The length of pgnfs_xform_call.nonce. */
#define PGNFS_XFORM_NONCE_LEN 12

/* pgnfs_xform_desc.flags */
/* forward's output is always exactly as long as its input. */
#define PGNFS_XFORM_PRESERVES_LENGTH 0x1u
/* forward and inverse accept out == in. */
#define PGNFS_XFORM_IN_PLACE 0x2u
/* The stage must see the chunk's plain length: it may not follow a stage
 * that changes lengths (the chain is refused). */
#define PGNFS_XFORM_NEEDS_PLAIN_LENGTH 0x4u
/* forward needs call->nonce: 96 bits the host never hands out twice. */
#define PGNFS_XFORM_NEEDS_NONCE 0x8u
#define PGNFS_XFORM_FLAGS_KNOWN 0xfu

/* Which chunk a call works on (for nonces, associated data and messages). */
typedef struct pgnfs_xform_chunk {
    uint64_t file_id; /* the file's inode number (never reused) */
    uint64_t chunk;   /* the chunk's index in the file */
    uint64_t version; /* the chunk's version, as the caller knows it (0: unknown);
                         for messages: never derive a nonce from it */
} pgnfs_xform_chunk;

/* One call of forward or inverse. */
typedef struct pgnfs_xform_call {
    const pgnfs_xform_chunk *chunk;
    /* Bytes that bind this stage's output to its place: the chunk's
     * header fields, file id, chunk number and the stage's position.
     * Authenticating stages include them (AEAD associated data, a digest). */
    const unsigned char *aad;
    size_t aad_len;
    /* forward of a NEEDS_NONCE stage: PGNFS_XFORM_NONCE_LEN fresh bytes;
     * otherwise NULL. Store it in meta if inverse needs it. */
    const unsigned char *nonce;
    /* meta_size bytes in the chunk's header: forward writes (they start
     * zeroed), inverse reads. */
    unsigned char *meta;
    /* This stage kind's slot in the calling worker (see worker_fini). */
    void **worker;
    /* Room for a message on failure. */
    char *err;
    size_t err_len;
} pgnfs_xform_call;

typedef struct pgnfs_xform_desc {
    uint32_t abi_version; /* PGNFS_XFORM_ABI_VERSION */
    uint32_t flags;       /* PGNFS_XFORM_* */
    const char *name;     /* the file's name without ".so": [a-z0-9][a-z0-9_-]* */
    uint32_t meta_size;   /* header bytes per chunk, 0..PGNFS_XFORM_META_MAX */
    int (*init)(const char *options, void **state, char *err, size_t err_len);
    void (*fini)(void *state);
    size_t (*max_expansion)(void *state, size_t n);
    int (*forward)(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                   unsigned char *out, size_t room, size_t *out_len);
    int (*inverse)(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                   unsigned char *out, size_t room, size_t *out_len);
    void (*worker_fini)(void *worker);
} pgnfs_xform_desc;

/* The one symbol a plug-in exports. */
typedef const pgnfs_xform_desc *(*pgnfs_xform_describe_fn)(void);
const pgnfs_xform_desc *pgnfs_xform_describe(void);

#ifdef __cplusplus
}
#endif

#endif /* PGNFS_XFORM_H */
