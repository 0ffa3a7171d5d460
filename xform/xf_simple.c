/*
 * xf_simple.c -- the built-in stages for experiments: identity (the bytes
 * as they are) and increment (adds 1 to every byte; the inverse
 * subtracts it). Both keep lengths, work in place, keep no header bytes
 * and no state.
 *
 * identity in place costs nothing; out of place it is one memcpy (the
 * move every chain's first stage makes from the caller's plain bytes).
 * increment works on 8 bytes at a time without carries between bytes:
 * for x with bytes b = 128h + l, ((x & 0x7f..) + 0x01..) ^ (x & 0x80..)
 * adds 1 to every byte modulo 256, and ((x | 0x80..) - 0x01..) ^
 * (~x & 0x80..) subtracts it.
 */
#include <errno.h>

#include "xf_int.h"

#define XF_LO7 UINT64_C(0x7f7f7f7f7f7f7f7f)
#define XF_HI  UINT64_C(0x8080808080808080)
#define XF_ONE UINT64_C(0x0101010101010101)

static int xf_none_init(const char *options, void **state, char *err, size_t err_len)
{
    (void)err;
    (void)err_len;
    *state = NULL;
    return options[0] ? -EINVAL : 0;
}

static void xf_none_fini(void *state)
{
    (void)state;
}

static int xf_identity_run(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                           unsigned char *out, size_t room, size_t *out_len)
{
    (void)state;
    (void)call;
    if (room < n)
        return -ENOBUFS;
    if (out != in)
        memcpy(out, in, n);
    *out_len = n;
    return 0;
}

/* out = in + delta (delta 1 or -1), byte by byte modulo 256. */
static void xf_add(const unsigned char *in, unsigned char *out, size_t n, int delta)
{
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;

        memcpy(&x, in + i, 8);
        y = delta > 0 ? ((x & XF_LO7) + XF_ONE) ^ (x & XF_HI)
                      : ((x | XF_HI) - XF_ONE) ^ (~x & XF_HI);
        memcpy(out + i, &y, 8);
    }
    for (; i < n; i++)
        out[i] = (unsigned char)(in[i] + delta);
}

static int xf_increment_fwd(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                            unsigned char *out, size_t room, size_t *out_len)
{
    (void)state;
    (void)call;
    if (room < n)
        return -ENOBUFS;
    xf_add(in, out, n, 1);
    *out_len = n;
    return 0;
}

static int xf_increment_inv(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                            unsigned char *out, size_t room, size_t *out_len)
{
    (void)state;
    (void)call;
    if (room < n)
        return -ENOBUFS;
    xf_add(in, out, n, -1);
    *out_len = n;
    return 0;
}

const pgnfs_xform_desc xf_identity_desc = {
    .abi_version = PGNFS_XFORM_ABI_VERSION,
    .flags = PGNFS_XFORM_PRESERVES_LENGTH | PGNFS_XFORM_IN_PLACE,
    .name = "identity",
    .meta_size = 0,
    .init = xf_none_init,
    .fini = xf_none_fini,
    .forward = xf_identity_run,
    .inverse = xf_identity_run,
};

const pgnfs_xform_desc xf_increment_desc = {
    .abi_version = PGNFS_XFORM_ABI_VERSION,
    .flags = PGNFS_XFORM_PRESERVES_LENGTH | PGNFS_XFORM_IN_PLACE,
    .name = "increment",
    .meta_size = 0,
    .init = xf_none_init,
    .fini = xf_none_fini,
    .forward = xf_increment_fwd,
    .inverse = xf_increment_inv,
};
