/*
 * testplug.c -- transformation plug-ins for the tests, good and broken,
 * one library per variant: the build compiles this file once per name
 * with PLUG_NAME set to the name and PLUG_<NAME> defined.
 *
 * Broken at load: nosym (no pgnfs_xform_describe), nulldesc (returns
 * NULL), badabi (ABI version 999), wrongname (calls itself otherwise),
 * nullfn (no forward), nobound (changes lengths, no max_expansion),
 * badflags (unknown flag bits), bigmeta (65 header bytes).
 * Broken at the probe: liar (inverse does not undo forward), overrun
 * (writes 8 bytes past its room), badlen (preserves length, it says, but
 * drops a byte), inputwriter (scribbles on its input), leaky (per-worker
 * state without worker_fini).
 * Good: fixedlen (identity that needs the plain length), trailer (works
 * in place, appends two bytes, keeps a per-worker counter), noncexor
 * (XORs with its nonce, kept in 12 header bytes), failer (identity that
 * fails forward on chunk fail=N and inverse on chunk failread=N).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgnfs_xform.h"

typedef struct tp_state {
    long fail, failread;
} tp_state;

static int tp_opt(const char *options, const char *key, long *v)
{
    const char *p = strstr(options, key);
    size_t k = strlen(key);

    if (!p || p[k] != '=')
        return 0;
    *v = strtol(p + k + 1, NULL, 10);
    return 1;
}

static int tp_init(const char *options, void **state, char *err, size_t err_len)
{
    tp_state *s = calloc(1, sizeof *s);

    (void)err;
    (void)err_len;
    if (!s)
        return -ENOMEM;
    s->fail = s->failread = -1;
    tp_opt(options, "fail", &s->fail);
    tp_opt(options, "failread", &s->failread);
    *state = s;
    return 0;
}

static void tp_fini(void *state)
{
    free(state);
}

static size_t tp_bound(void *state, size_t n)
{
    (void)state;
#ifdef PLUG_TRAILER
    return n + 2;
#else
    return n;
#endif
}

__attribute__((unused)) static int tp_fwd(void *state, pgnfs_xform_call *call,
                                          const unsigned char *in, size_t n, unsigned char *out,
                                          size_t room, size_t *out_len)
{
    tp_state *s = state;

    if (room < tp_bound(state, n))
        return -ENOBUFS;
    if (s->fail >= 0 && call->chunk->chunk == (uint64_t)s->fail) {
        snprintf(call->err, call->err_len, "failer: refusing chunk %ld", s->fail);
        return -EPROTO;
    }
    if (out != in)
        memmove(out, in, n);
    *out_len = n;
#if defined(PLUG_LIAR)
    for (size_t i = 0; i < n; i++)
        out[i]++;
#elif defined(PLUG_OVERRUN)
    memset(out + n, 0, room - n + 8);
#elif defined(PLUG_BADLEN)
    if (n > 0)
        *out_len = n - 1;
#elif defined(PLUG_INPUTWRITER)
    if (n > 0 && out != in)
        ((unsigned char *)in)[0] ^= 1;
#elif defined(PLUG_LEAKY)
    {
        /* Per-worker state with nothing to free it (static here, so that
         * the refused plug-in leaves no real leak behind). */
        static long slot;

        *call->worker = &slot;
    }
#elif defined(PLUG_TRAILER)
    out[n] = 0xAB;
    out[n + 1] = 0xCD;
    *out_len = n + 2;
    if (!*call->worker)
        *call->worker = calloc(1, sizeof(long));
    if (*call->worker)
        ++*(long *)*call->worker;
#elif defined(PLUG_NONCEXOR)
    if (!call->nonce)
        return -EINVAL;
    memcpy(call->meta, call->nonce, PGNFS_XFORM_NONCE_LEN);
    for (size_t i = 0; i < n; i++)
        out[i] ^= call->nonce[i % PGNFS_XFORM_NONCE_LEN];
#endif
    return 0;
}

static int tp_inv(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                  unsigned char *out, size_t room, size_t *out_len)
{
    tp_state *s = state;
    size_t m = n;

    if (s->failread >= 0 && call->chunk->chunk == (uint64_t)s->failread) {
        snprintf(call->err, call->err_len, "failer: cannot read chunk %ld", s->failread);
        return -EPROTO;
    }
#ifdef PLUG_TRAILER
    if (n < 2 || in[n - 2] != 0xAB || in[n - 1] != 0xCD)
        return -EBADMSG;
    m = n - 2;
#endif
    if (room < m)
        return -ENOBUFS;
    if (out != in)
        memmove(out, in, m);
#ifdef PLUG_NONCEXOR
    for (size_t i = 0; i < m; i++)
        out[i] ^= call->meta[i % PGNFS_XFORM_NONCE_LEN];
#endif
    *out_len = m;
    return 0;
}

__attribute__((unused)) static void tp_worker_fini(void *worker)
{
    free(worker);
}

__attribute__((unused)) static const pgnfs_xform_desc tp_desc = {
#ifdef PLUG_BADABI
    .abi_version = 999,
#else
    .abi_version = PGNFS_XFORM_ABI_VERSION,
#endif
#if defined(PLUG_BADFLAGS)
    .flags = 0x100,
#elif defined(PLUG_NOBOUND)
    .flags = PGNFS_XFORM_IN_PLACE,
#elif defined(PLUG_FIXEDLEN)
    .flags = PGNFS_XFORM_PRESERVES_LENGTH | PGNFS_XFORM_IN_PLACE | PGNFS_XFORM_NEEDS_PLAIN_LENGTH,
#elif defined(PLUG_TRAILER)
    .flags = PGNFS_XFORM_IN_PLACE,
#elif defined(PLUG_NONCEXOR)
    .flags = PGNFS_XFORM_PRESERVES_LENGTH | PGNFS_XFORM_NEEDS_NONCE,
#else
    .flags = PGNFS_XFORM_PRESERVES_LENGTH | PGNFS_XFORM_IN_PLACE,
#endif
#ifdef PLUG_WRONGNAME
    .name = "somethingelse",
#else
    .name = PLUG_NAME,
#endif
#if defined(PLUG_BIGMETA)
    .meta_size = 65,
#elif defined(PLUG_NONCEXOR)
    .meta_size = PGNFS_XFORM_NONCE_LEN,
#else
    .meta_size = 0,
#endif
    .init = tp_init,
    .fini = tp_fini,
#if defined(PLUG_NOBOUND)
    .max_expansion = NULL,
#else
    .max_expansion = tp_bound,
#endif
#ifdef PLUG_NULLFN
    .forward = NULL,
#else
    .forward = tp_fwd,
#endif
    .inverse = tp_inv,
#ifdef PLUG_LEAKY
    .worker_fini = NULL,
#else
    .worker_fini = tp_worker_fini,
#endif
};

#if defined(PLUG_NOSYM)
/* The wrong symbol: a library that is no pgnfs transformation. */
const pgnfs_xform_desc *pgnfs_xform_describe_v0(void)
{
    return &tp_desc;
}
#else
/* pgnfs_xform_describe -- the plug-in's one exported symbol. */
const pgnfs_xform_desc *pgnfs_xform_describe(void)
{
#ifdef PLUG_NULLDESC
    return NULL;
#else
    return &tp_desc;
#endif
}
#endif
