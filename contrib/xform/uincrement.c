/*
 * uincrement.c -- an example transformation plug-in (pgnfs_xform.h) with
 * an option: adds `by` (default 1) to every byte, modulo 256; the inverse
 * subtracts it. "uincrement" or "uincrement:by=3".
 *
 *   cc -shared -fPIC -I xform -o uincrement.so contrib/xform/uincrement.c
 *
 * It keeps lengths and works in place. Its state (the amount) is made by
 * init and only read afterwards, as the interface requires: forward and
 * inverse run in many threads at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgnfs_xform.h"

typedef struct uinc {
    unsigned char by;
} uinc;

static int uinc_init(const char *options, void **state, char *err, size_t err_len)
{
    long by = 1;
    uinc *u;

    if (options[0]) {
        char *end;

        if (strncmp(options, "by=", 3) != 0) {
            snprintf(err, err_len, "uincrement takes one option, by=N (1..255)");
            return -EINVAL;
        }
        by = strtol(options + 3, &end, 10);
        if (*end || by < 1 || by > 255) {
            snprintf(err, err_len, "by=%s: expected an integer in 1..255", options + 3);
            return -EINVAL;
        }
    }
    u = malloc(sizeof *u);
    if (!u)
        return -ENOMEM;
    u->by = (unsigned char)by;
    *state = u;
    return 0;
}

static void uinc_fini(void *state)
{
    free(state);
}

static int uinc_add(const uinc *u, int sign, const unsigned char *in, size_t n, unsigned char *out,
                    size_t room, size_t *out_len)
{
    if (room < n)
        return -ENOBUFS;
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(in[i] + sign * u->by);
    *out_len = n;
    return 0;
}

static int uinc_fwd(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                    unsigned char *out, size_t room, size_t *out_len)
{
    (void)call;
    return uinc_add(state, 1, in, n, out, room, out_len);
}

static int uinc_inv(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
                    unsigned char *out, size_t room, size_t *out_len)
{
    (void)call;
    return uinc_add(state, -1, in, n, out, room, out_len);
}

static const pgnfs_xform_desc uinc_desc = {
    .abi_version = PGNFS_XFORM_ABI_VERSION,
    .flags = PGNFS_XFORM_PRESERVES_LENGTH | PGNFS_XFORM_IN_PLACE,
    .name = "uincrement",
    .meta_size = 0,
    .init = uinc_init,
    .fini = uinc_fini,
    .max_expansion = NULL,
    .forward = uinc_fwd,
    .inverse = uinc_inv,
    .worker_fini = NULL,
};

/* pgnfs_xform_describe -- the plug-in's one exported symbol. */
const pgnfs_xform_desc *pgnfs_xform_describe(void)
{
    return &uinc_desc;
}
