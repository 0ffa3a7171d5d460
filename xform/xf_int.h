/*
 * xf_int.h -- the library's insides, shared by its files only: stage
 * kinds (built-in and plug-in), parsed chain text, chains, the env, the
 * per-worker state, and small helpers (little-endian fields, CRC-32C,
 * messages).
 *
 * NOTES
 *   Layers, each file calling only those beneath it:
 *     xf_codec.c (encode, decode, peek)
 *     xf_chain.c (get, find, instantiate) -> xf_parse.c (text, options)
 *     xf_kind.c (the registry) -> xf_plugin.c (dlopen, checks, probe)
 *     xf_env.c (config, key, nonces) -> xf_key.c ; xf_work.c
 *     built-ins: xf_simple.c xf_compress.c xf_aes.c xf_sha256.c
 *     xf_util.c (messages, CRC-32C)
 */
#ifndef PGNFS_XF_INT_H
#define PGNFS_XF_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "xf.h"

#define XF_NAME_MAX   48  /* a stage name, NUL included */
#define XF_OPTS_MAX   256 /* a stage's option text, NUL included */
#define XF_TEXT_MAX   4096
#define XF_MAX_KINDS  64 /* built-ins and plug-ins loaded, per env */
#define XF_KEY_LEN    32
#define XF_AAD_LEN    37 /* header bytes 0..19, file id, chunk, stage index */
#define XF_MAGIC0     'P'
#define XF_MAGIC1     'X'
#define XF_MAGIC2     'F'
#define XF_FORMAT     1
#define XF_CHAIN_HASH 64 /* buckets of the env's chain table */
/* The longest intermediate result a chain may produce from a chunk. */
#define XF_ROOM_MAX (2u * XF_PLAIN_MAX + (1u << 20))

/* --- stage kinds ---------------------------------------------------------- */

/* An option a built-in takes: an integer in [min, max]. */
typedef struct xf_optspec {
    const char *key;
    long min, max;
    long def; /* the default, or XF_OPT_DEF_ZSTD: the env's zstd level */
} xf_optspec;
#define XF_OPT_DEF_ZSTD (-1000000L)

typedef struct xf_kind {
    const pgnfs_xform_desc *d;
    int index;    /* its slot in every xf_work */
    bool builtin; /* built-in: options checked and spelt out by opts */
    const xf_optspec *opts;
    int nopts;
    /* built-ins that need the env (the key) instead of d->init */
    int (*init_env)(xf_env *env, const char *options, void **state, char *err, size_t err_len);
    void *dl;   /* plug-ins: the dlopen handle */
    char *path; /* plug-ins: the file */
} xf_kind;

/* A built-in, as the registry lists it. */
typedef struct xf_builtin {
    const pgnfs_xform_desc *d;
    const xf_optspec *opts;
    int nopts;
    int (*init_env)(xf_env *env, const char *options, void **state, char *err, size_t err_len);
} xf_builtin;

extern const pgnfs_xform_desc xf_identity_desc, xf_increment_desc;
extern const pgnfs_xform_desc xf_zstd_desc, xf_lz4_desc;
extern const pgnfs_xform_desc xf_aes_desc, xf_sha256_desc;
extern const xf_optspec xf_zstd_opts[], xf_lz4_opts[];
/* aes-256-gcm's init: the env's key. */
int xf_aes_init_env(xf_env *env, const char *options, void **state, char *err, size_t err_len);

/* --- parsed chain text ---------------------------------------------------- */

typedef struct xf_spec_stage {
    char name[XF_NAME_MAX];
    char opts[XF_OPTS_MAX]; /* canonical option text, "" when none */
    const xf_kind *kind;    /* set by xf_parse */
} xf_spec_stage;

typedef struct xf_spec {
    bool none;
    int nst;
    xf_spec_stage st[XF_MAX_STAGES];
    int nsql;
    char sql_fwd[XF_MAX_SQL][2 * XF_NAME_MAX], sql_inv[XF_MAX_SQL][2 * XF_NAME_MAX];
    char text[XF_TEXT_MAX]; /* canonical */
    uint64_t id;
} xf_spec;

/* --- chains, env, workers ------------------------------------------------ */

typedef struct xf_stage {
    const xf_kind *kind;
    void *state;
    uint32_t flags;
    uint32_t len_off;  /* header offset of its input length; 0: preserves length */
    uint32_t meta_off; /* header offset of its meta */
    uint32_t meta_size;
} xf_stage;

struct xf_chain {
    xf_env *env;
    uint64_t id;
    char *text;
    int nst;
    xf_stage st[XF_MAX_STAGES];
    int nsql;
    char *sql_fwd[XF_MAX_SQL], *sql_inv[XF_MAX_SQL];
    uint32_t hdr_len;
    bool header_only;      /* every stage the built-in identity (xf_chain_header_only) */
    struct xf_chain *next; /* the env's bucket */
};

struct xf_env {
    pthread_mutex_t mu; /* kinds (loading) and chains (adding) */
    unsigned char key[XF_KEY_LEN];
    bool has_key;
    uint32_t key_id;
    char *plugin_dir;
    int zstd_level;
    _Atomic uint32_t epoch;
    _Atomic uint64_t counter;
    xf_kind *kinds[XF_MAX_KINDS];
    _Atomic int nkinds;
    xf_chain *_Atomic chains[XF_CHAIN_HASH];
    xf_chain none;
};

struct xf_work {
    xf_env *env;
    unsigned char *scratch;
    size_t scratch_room;
    void *slot[XF_MAX_KINDS];
};

/* xf_util.c */
void xf_errf(xf_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint32_t xf_crc32c(const void *p, size_t n);
uint32_t xf_hdr_crc(const unsigned char *h, size_t hdr_len);
int xf_text_id(const char *text, uint64_t *id);

/* xf_key.c: load a key file (see xf_env_new); *key_id from it. */
int xf_key_load(const char *path, unsigned char key[XF_KEY_LEN], uint32_t *key_id, xf_err *err);

/* xf_env.c: a fresh nonce (-EINVAL without an epoch). */
int xf_env_nonce(xf_env *env, unsigned char nonce[PGNFS_XFORM_NONCE_LEN]);

/* xf_kind.c: register the built-ins; find (or load) the kind called name;
 * free them all. xf_kind_find is called with env->mu held. */
int xf_kind_init(xf_env *env, xf_err *err);
int xf_kind_find(xf_env *env, const char *name, const xf_kind **out, xf_err *err);
void xf_kind_free_all(xf_env *env);

/* xf_plugin.c: dlopen dir/name.so and check its descriptor; probe an
 * instance (state) of it; unload. */
int xf_plugin_load(const char *dir, const char *name, xf_kind *k, xf_err *err);
int xf_plugin_probe(const xf_kind *k, void *state, const char *opts, xf_err *err);
void xf_plugin_unload(xf_kind *k);

/* xf_parse.c: text -> spec (syntax, names, options, order); loads the
 * plug-ins named (env->mu held). */
int xf_parse(xf_env *env, const char *text, xf_spec *spec, xf_err *err);

/* xf_chain.c: b[i] = the bound of stage i's output for n plain bytes
 * (each at most XF_ROOM_MAX); returns the largest of n and every b[i].
 * Free every chain of env (xf_env_free). */
size_t xf_chain_bounds(const xf_chain *c, size_t n, size_t *b);
void xf_chain_free_all(xf_env *env);

/* xf_work.c: w's scratch made (never NULL after success) and grown to at
 * least n bytes; -ENOMEM, -ENOBUFS (n over XF_ROOM_MAX). */
int xf_work_scratch(xf_work *w, size_t n);

/* Little-endian fields. */
static inline void xf_put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static inline void xf_put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline void xf_put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint16_t xf_get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t xf_get32(const unsigned char *p)
{
    uint32_t v = 0;

    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static inline uint64_t xf_get64(const unsigned char *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

#endif /* PGNFS_XF_INT_H */
