/*
 * xf_compress.c -- the built-in compression stages: zstd (libzstd, option
 * level, default [xform] zstd_level, frames with a content checksum) and
 * lz4 (liblz4's block format, option accel, default 1).
 *
 * Both keep one header byte: the mode, 1 = compressed, 0 = stored as it
 * came. A chunk that does not get shorter is stored as it came (the
 * compressor is given room for n - 1 bytes and gives up when it needs
 * more), so neither stage ever lengthens a chunk: max_expansion(n) = n,
 * and random data costs one failed attempt and a copy, never space.
 * Inverse knows the exact length to expect (the chunk's header records
 * every length-changing stage's input length) and anything else is
 * -EBADMSG.
 *
 * NOTES
 *   State: the level or acceleration only (read-only after init). Each
 *   worker keeps its own contexts in its slot (ZSTD_CCtx and ZSTD_DCtx;
 *   LZ4's state), made on first use and freed by worker_fini: no
 *   allocation per chunk.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <lz4.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "xf_int.h"

enum { XF_MODE_RAW = 0, XF_MODE_PACKED = 1 };

const xf_optspec xf_zstd_opts[] = {{"level", -7, 22, XF_OPT_DEF_ZSTD}};
const xf_optspec xf_lz4_opts[] = {{"accel", 1, 65537, 1}};

typedef struct xf_zstd_worker {
    ZSTD_CCtx *c;
    ZSTD_DCtx *d;
    int level; /* the level c is set to; INT_MIN: none yet */
} xf_zstd_worker;

/* The integer value of option key in canonical text "key=N" (set by the
 * parser, so only a caller's bug fails). */
static int xf_opt_int(const char *options, const char *key, long *v)
{
    size_t k = strlen(key);
    char *end;

    if (strncmp(options, key, k) != 0 || options[k] != '=')
        return -EINVAL;
    *v = strtol(options + k + 1, &end, 10);
    return *end == '\0' ? 0 : -EINVAL;
}

static int xf_level_init(const char *options, const char *key, void **state, char *err,
                         size_t err_len)
{
    long v;
    int *s;

    if (xf_opt_int(options, key, &v) < 0) {
        snprintf(err, err_len, "expected %s=N, got '%s'", key, options);
        return -EINVAL;
    }
    s = malloc(sizeof *s);
    if (!s)
        return -ENOMEM;
    *s = (int)v;
    *state = s;
    return 0;
}

static void xf_level_fini(void *state)
{
    free(state);
}

static size_t xf_packed_bound(void *state, size_t n)
{
    (void)state;
    return n;
}

/* Stored as it came: out = in, mode raw. */
static int xf_store_raw(pgnfs_xform_call *call, const unsigned char *in, size_t n,
                        unsigned char *out, size_t *out_len)
{
    if (out != in)
        memcpy(out, in, n);
    call->meta[0] = XF_MODE_RAW;
    *out_len = n;
    return 0;
}

/* The check every inverse makes of a raw chunk. */
static int xf_unpack_raw(pgnfs_xform_call *call, const char *name, const unsigned char *in,
                         size_t n, unsigned char *out, size_t room, size_t *out_len)
{
    if (call->meta[0] != XF_MODE_RAW) {
        snprintf(call->err, call->err_len, "%s: unknown mode %u in the header", name,
                 call->meta[0]);
        return -EBADMSG;
    }
    if (n != room) {
        snprintf(call->err, call->err_len, "%s: %zu bytes stored as they came, %zu expected", name,
                 n, room);
        return -EBADMSG;
    }
    if (out != in)
        memcpy(out, in, n);
    *out_len = n;
    return 0;
}

/* --- zstd ----------------------------------------------------------------- */

static int xf_zstd_init(const char *options, void **state, char *err, size_t err_len)
{
    return xf_level_init(options, "level", state, err, err_len);
}

static xf_zstd_worker *xf_zstd_worker_get(pgnfs_xform_call *call)
{
    xf_zstd_worker *w = *call->worker;

    if (w)
        return w;
    w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->c = ZSTD_createCCtx();
    w->d = ZSTD_createDCtx();
    w->level = INT_MIN;
    if (!w->c || !w->d || ZSTD_isError(ZSTD_CCtx_setParameter(w->c, ZSTD_c_checksumFlag, 1))) {
        ZSTD_freeCCtx(w->c);
        ZSTD_freeDCtx(w->d);
        free(w);
        return NULL;
    }
    *call->worker = w;
    return w;
}

static void xf_zstd_worker_fini(void *worker)
{
    xf_zstd_worker *w = worker;

    ZSTD_freeCCtx(w->c);
    ZSTD_freeDCtx(w->d);
    free(w);
}

static int xf_zstd_fwd(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                       unsigned char *out, size_t room, size_t *out_len)
{
    int level = *(int *)state;
    xf_zstd_worker *w;
    size_t r;

    if (room < n)
        return -ENOBUFS;
    if (n < 2)
        return xf_store_raw(call, in, n, out, out_len);
    w = xf_zstd_worker_get(call);
    if (!w)
        return -ENOMEM;
    if (w->level != level) {
        if (ZSTD_isError(ZSTD_CCtx_setParameter(w->c, ZSTD_c_compressionLevel, level)))
            return -EINVAL;
        w->level = level;
    }
    r = ZSTD_compress2(w->c, out, n - 1, in, n);
    if (ZSTD_isError(r)) {
        if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall)
            return xf_store_raw(call, in, n, out, out_len);
        snprintf(call->err, call->err_len, "zstd: %s", ZSTD_getErrorName(r));
        return -EIO;
    }
    call->meta[0] = XF_MODE_PACKED;
    *out_len = r;
    return 0;
}

static int xf_zstd_inv(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                       unsigned char *out, size_t room, size_t *out_len)
{
    xf_zstd_worker *w;
    size_t r;

    (void)state;
    if (call->meta[0] != XF_MODE_PACKED)
        return xf_unpack_raw(call, "zstd", in, n, out, room, out_len);
    w = xf_zstd_worker_get(call);
    if (!w)
        return -ENOMEM;
    r = ZSTD_decompressDCtx(w->d, out, room, in, n);
    if (ZSTD_isError(r)) {
        snprintf(call->err, call->err_len, "zstd: %s", ZSTD_getErrorName(r));
        return -EBADMSG;
    }
    if (r != room) {
        snprintf(call->err, call->err_len, "zstd: %zu bytes decompressed, %zu expected", r, room);
        return -EBADMSG;
    }
    *out_len = r;
    return 0;
}

const pgnfs_xform_desc xf_zstd_desc = {
    .abi_version = PGNFS_XFORM_ABI_VERSION,
    .flags = 0,
    .name = "zstd",
    .meta_size = 1,
    .init = xf_zstd_init,
    .fini = xf_level_fini,
    .max_expansion = xf_packed_bound,
    .forward = xf_zstd_fwd,
    .inverse = xf_zstd_inv,
    .worker_fini = xf_zstd_worker_fini,
};

/* --- lz4 ------------------------------------------------------------------ */

static int xf_lz4_init(const char *options, void **state, char *err, size_t err_len)
{
    return xf_level_init(options, "accel", state, err, err_len);
}

static void xf_lz4_worker_fini(void *worker)
{
    free(worker);
}

static int xf_lz4_fwd(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                      unsigned char *out, size_t room, size_t *out_len)
{
    int accel = *(int *)state, r;

    if (room < n)
        return -ENOBUFS;
    if (n < 2 || n > LZ4_MAX_INPUT_SIZE)
        return xf_store_raw(call, in, n, out, out_len);
    if (!*call->worker) {
        *call->worker = malloc((size_t)LZ4_sizeofState());
        if (!*call->worker)
            return -ENOMEM;
    }
    r = LZ4_compress_fast_extState(*call->worker, (const char *)in, (char *)out, (int)n, (int)n - 1,
                                   accel);
    if (r <= 0)
        return xf_store_raw(call, in, n, out, out_len);
    call->meta[0] = XF_MODE_PACKED;
    *out_len = (size_t)r;
    return 0;
}

static int xf_lz4_inv(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                      unsigned char *out, size_t room, size_t *out_len)
{
    int r;

    (void)state;
    if (call->meta[0] != XF_MODE_PACKED)
        return xf_unpack_raw(call, "lz4", in, n, out, room, out_len);
    if (n > INT_MAX || room > INT_MAX)
        return -EBADMSG;
    r = LZ4_decompress_safe((const char *)in, (char *)out, (int)n, (int)room);
    if (r < 0 || (size_t)r != room) {
        snprintf(call->err, call->err_len, "lz4: corrupt block (%d bytes decoded, %zu expected)", r,
                 room);
        return -EBADMSG;
    }
    *out_len = (size_t)r;
    return 0;
}

const pgnfs_xform_desc xf_lz4_desc = {
    .abi_version = PGNFS_XFORM_ABI_VERSION,
    .flags = 0,
    .name = "lz4",
    .meta_size = 1,
    .init = xf_lz4_init,
    .fini = xf_level_fini,
    .max_expansion = xf_packed_bound,
    .forward = xf_lz4_fwd,
    .inverse = xf_lz4_inv,
    .worker_fini = xf_lz4_worker_fini,
};
