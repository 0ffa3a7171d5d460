/*
 * xf.h -- transformation chains on chunk data (after MonA): the API that
 * dbfs calls at flush (xf_encode) and at fetch (xf_decode). Knows no
 * PostgreSQL and no dbfs: bytes in, bytes out.
 *
 * A chain is an ordered list of stages, written as text:
 *
 *     chain  := "none" | stage { "," stage }
 *     stage  := name { ":" key "=" value }
 *     name   := [a-z0-9][a-z0-9_-]*     (upper case is folded)
 *
 *   "zstd,aes-256-gcm"   "zstd:level=9,sha256"   "none"
 *   "uincrement,sql:forward=my_enc:inverse=my_dec"
 *
 * Built-in stages: identity, increment, zstd[:level=N], lz4[:accel=N],
 * aes-256-gcm, sha256; any other name is a plug-in (pgnfs_xform.h),
 * PLUGIN_DIR/name.so; "sql:forward=F:inverse=G" is an in-database stage:
 * PostgreSQL functions bytea -> bytea that dbfs applies in SQL to what
 * xf_encode produced (forward) and before xf_decode sees it (inverse).
 * In-database stages come after every in-server stage. The canonical
 * text (xf_chain_text) spells every built-in option out (defaults
 * included), so equal chains have equal text and equal ids.
 *
 * One stored chunk = a header + the payload (the plain bytes after every
 * in-server stage's forward):
 *
 *   offset size
 *     0     3   magic "PXF"
 *     3     1   format version (1)
 *     4     1   number of in-server stages
 *     5     1   reserved, 0
 *     6     2   header length (this part and the stage areas)
 *     8     8   chain id
 *    16     4   plain length
 *    20     4   payload length
 *    24     4   CRC-32C of the header, this field taken as zero
 *    28         per stage, in chain order: its input length (4 bytes)
 *               if it may change lengths, then its meta_size bytes
 *               (zstd/lz4: mode; aes-256-gcm: key id, nonce, tag;
 *               sha256: digest)
 *
 * All integers little-endian. Decoding checks every field, that the
 * stored length is the header's plus the payload's, that every stage's
 * output is as long as recorded, and never writes past a buffer.
 *
 * NOTES
 *   Ownership: an xf_env owns its chains (alive until xf_env_free), its
 *   plug-ins and the key. An xf_work (one per worker thread) owns one
 *   scratch buffer and each stage kind's per-worker state; it must be
 *   freed before its env. The caller owns every data buffer.
 *   Threads: xf_env and xf_chain are shared by all threads; an xf_work is
 *   used by one thread at a time.
 *   Errors: 0 or a negative errno; when an xf_err is given (it may be
 *   NULL) it receives one line for the log that names the file, the
 *   chunk and the stage (never a key or data).
 *     -EINVAL   a chain's text or option, a configuration value
 *     -ENOENT   an unknown stage name (no built-in, no plug-in file)
 *     -ELIBBAD  a plug-in refused (symbol, ABI, functions, probe)
 *     -EACCES   a key file or plug-in others may read or write
 *     -ENOKEY   aes-256-gcm named without a key file
 *     -EBADMSG  a stored chunk fails a check (header, length, digest,
 *               tag, wrong key): the data is not returned
 *     -EIO      a stage failed on a chunk (a plug-in's error)
 *     -ENOBUFS  a buffer smaller than the call needs (a caller's bug)
 *     -ENOMEM
 */
#ifndef PGNFS_XF_H
#define PGNFS_XF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgnfs_xform.h"

/* The largest chunk (plain bytes) a chain encodes. */
#define XF_PLAIN_MAX (16u << 20)
/* The most in-server stages in one chain, and in-database ones. */
#define XF_MAX_STAGES 32
#define XF_MAX_SQL    4
/* The fixed part of the header. */
#define XF_HDR_FIXED 28

typedef struct xf_env xf_env;
typedef struct xf_chain xf_chain;
typedef struct xf_work xf_work;
/* file id, chunk number, chunk version */
typedef pgnfs_xform_chunk xf_chunk;

/* A message for the log, filled when a call fails. */
typedef struct xf_err {
    char msg[384];
} xf_err;

/* What an env is made from: the [xform] configuration keys. */
typedef struct xf_env_config {
    const char *key_file;   /* 32 raw bytes or 64 hex digits; NULL or "": no key */
    const char *plugin_dir; /* NULL or "": no plug-ins */
    int zstd_level;         /* "zstd" without level=; 0 = 3 */
    uint32_t epoch;         /* the nonce epoch (see xf_env_set_epoch); 0 = not yet */
} xf_env_config;

/*
 * xf_env_new -- an environment: the key (read and checked now: a regular
 * file, not readable or writable by others, 32 raw bytes or 64 hex
 * digits), the plug-in directory (not searched until a chain names a
 * plug-in), the default zstd level. Returns 0 and *out, or -EINVAL,
 * -EACCES, -ENOENT (key file), -ENOMEM, with *err filled.
 */
int xf_env_new(const xf_env_config *cfg, xf_env **out, xf_err *err);
/* xf_env_free -- free the env, its chains and key, unload its plug-ins.
 * Every xf_work made from it must be freed first. NULL is fine. */
void xf_env_free(xf_env *env);

/*
 * xf_env_set_epoch -- the nonce epoch: a 32-bit value this process got
 * from the file system and no other process (or earlier run) ever got.
 * Nonces are epoch (32 bits) || a 64-bit counter that only grows in this
 * process, so they never repeat under one key. Forward of a stage that
 * needs a nonce (aes-256-gcm) fails with -EINVAL until an epoch is set.
 * Setting a new one at any time is fine (the counter keeps growing).
 */
void xf_env_set_epoch(xf_env *env, uint32_t epoch);
/* xf_env_key_id -- a 32-bit id of the loaded key (a hash; reveals
 * nothing of it), stored with each encrypted chunk and worth recording
 * with the file system to refuse a wrong key at start. -ENOKEY without a
 * key. */
int xf_env_key_id(const xf_env *env, uint32_t *id);

/*
 * xf_chain_get -- the chain that text describes, made on first use
 * (parsed, checked, plug-ins loaded and probed, stages initialised) and
 * kept in env for later calls: the same canonical text gives the same
 * pointer. Thread-safe. Returns 0 and *out (valid until xf_env_free),
 * or an error above with *err naming the stage and the reason; nothing
 * is kept then.
 */
int xf_chain_get(xf_env *env, const char *text, const xf_chain **out, xf_err *err);
/* xf_chain_find -- the chain with this id among those xf_chain_get has
 * made, or NULL. id 0 is "none". Thread-safe. */
const xf_chain *xf_chain_find(xf_env *env, uint64_t id);

/* xf_chain_text -- the canonical text ("none" for none). */
const char *xf_chain_text(const xf_chain *c);
/* xf_chain_id -- 64 bits of SHA-256 of the canonical text; 0 only for
 * "none". Stable across versions and machines: store it with files. */
uint64_t xf_chain_id(const xf_chain *c);
/* xf_chain_guarded -- false for "none": the file takes the plain path
 * (no header, no encode, no decode). */
bool xf_chain_guarded(const xf_chain *c);
/* xf_chain_stages -- the number of in-server stages. */
int xf_chain_stages(const xf_chain *c);
/* xf_chain_header_len -- the header's length in every chunk it stores. */
size_t xf_chain_header_len(const xf_chain *c);
/* What a chain's in-server stages are, taken together (xf_chain_traits). */
typedef struct xf_traits {
    bool preserves; /* every stage keeps lengths */
    bool nonce;     /* some stage draws a nonce (its output differs each time) */
    bool bare;      /* preserves, and no stage keeps per-chunk metadata: a
                       stage's inverse needs nothing but the bytes */
} xf_traits;
/* xf_chain_traits -- *t for chain c ("none": preserves and bare). Cannot fail. */
void xf_chain_traits(const xf_chain *c, xf_traits *t);
/* xf_chain_header_only -- true when every in-server stage of c (at least
 * one) is the built-in identity: what c stores of a chunk is its header
 * and the plain bytes as they are (xf_encode_header). */
bool xf_chain_header_only(const xf_chain *c);
/* xf_chain_sql_count, xf_chain_sql -- the in-database stages, in chain
 * order: on write the stored value is forward_k(...forward_1(encoded));
 * on read xf_decode gets inverse_1(...inverse_k(stored)). The names are
 * checked identifiers ([a-z_][a-z0-9_]*, optionally schema.name). */
int xf_chain_sql_count(const xf_chain *c);
void xf_chain_sql(const xf_chain *c, int i, const char **forward, const char **inverse);

/* xf_work_new -- per-worker state (scratch buffer, stage contexts) for
 * chains of env. Returns 0 and *out, or -ENOMEM. */
int xf_work_new(xf_env *env, xf_work **out);
/* xf_work_free -- free it (NULL is fine). */
void xf_work_free(xf_work *w);

/* xf_encode_room -- the room xf_encode needs for n plain bytes (the
 * header plus the largest any stage may produce). */
size_t xf_encode_room(const xf_chain *c, size_t n);

/*
 * xf_encode -- store n plain bytes of chunk `at` (n <= XF_PLAIN_MAX):
 * writes header and payload to out (room >= xf_encode_room(c, n)) and
 * sets *stored_len. The first stage reads plain (never written), then
 * each stage works in place or moves between out and w's scratch buffer;
 * the last lands in out. Nothing is allocated except when w's scratch
 * must grow. Returns 0, or -EINVAL (none, too long, no epoch for a nonce),
 * -ENOBUFS, -EIO (a stage failed: store nothing), -ENOMEM.
 */
int xf_encode(const xf_chain *c, xf_work *w, const xf_chunk *at, const void *plain, size_t n,
              void *out, size_t room, size_t *stored_len, xf_err *err);

/*
 * xf_encode_header -- for a chain c with xf_chain_header_only: write to
 * hdr the xf_chain_header_len(c) bytes that, followed by the n plain
 * bytes of chunk `at` as they are, make exactly what xf_encode stores
 * (so a caller with room before the plain bytes stores them without a
 * copy). Returns 0, or -EINVAL (another chain, n over XF_PLAIN_MAX) with
 * *err filled.
 */
int xf_encode_header(const xf_chain *c, const xf_chunk *at, size_t n, void *hdr, xf_err *err);

/*
 * xf_decode -- the plain bytes of stored chunk `at` (len bytes, after the
 * in-database stages' inverse) into out, *plain_len of them. out needs
 * room for the plain length; when a chain's intermediate results would
 * have to pass through out and are longer, -ENOBUFS (xf_decode_room(c,
 * chunk size) is always enough). Every check failing is -EBADMSG with
 * the file, chunk and reason in *err; out's contents are then undefined
 * (never past room). Also -EIO (a plug-in failed), -ENOMEM.
 */
int xf_decode(const xf_chain *c, xf_work *w, const xf_chunk *at, const void *stored, size_t len,
              void *out, size_t room, size_t *plain_len, xf_err *err);
/* xf_decode_room -- room in out with which xf_decode never answers
 * -ENOBUFS for chunks of at most n plain bytes. */
size_t xf_decode_room(const xf_chain *c, size_t n);

/* What a stored chunk's header says (xf_peek). */
typedef struct xf_peek_info {
    uint64_t chain_id;
    uint32_t plain_len, payload_len;
    uint16_t header_len;
    uint8_t stages;
} xf_peek_info;

/*
 * xf_peek -- read and check a stored chunk's header without decoding
 * (fsck, du, a chunk stored by another chain). Returns 0, or -EBADMSG
 * (not a chunk header, wrong checksum, lengths that disagree with len).
 */
int xf_peek(const void *stored, size_t len, xf_peek_info *out, xf_err *err);

#endif /* PGNFS_XF_H */
