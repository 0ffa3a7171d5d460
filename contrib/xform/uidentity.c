/*
 * uidentity.c -- an example transformation plug-in (pgnfs_xform.h): the
 * identity, as a user would write it. Build it as a shared library named
 * after the stage (uidentity.so), put it in [xform] plugin_dir, and name
 * it in a chain: "uidentity" or "uidentity,zstd".
 *
 *   cc -shared -fPIC -I xform -o uidentity.so contrib/xform/uidentity.c
 *
 * It keeps lengths and works in place, keeps no state and no header
 * bytes, and takes no options.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pgnfs_xform.h"

static int uid_init(const char *options, void **state, char *err, size_t err_len)
{
    if (options[0]) {
        snprintf(err, err_len, "uidentity takes no options");
        return -EINVAL;
    }
    *state = NULL;
    return 0;
}

static void uid_fini(void *state)
{
    (void)state;
}

static int uid_copy(void *state, pgnfs_xform_call *call, const unsigned char *in, size_t n,
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

static const pgnfs_xform_desc uid_desc = {
    .abi_version = PGNFS_XFORM_ABI_VERSION,
    .flags = PGNFS_XFORM_PRESERVES_LENGTH | PGNFS_XFORM_IN_PLACE,
    .name = "uidentity",
    .meta_size = 0,
    .init = uid_init,
    .fini = uid_fini,
    .max_expansion = NULL,
    .forward = uid_copy,
    .inverse = uid_copy,
    .worker_fini = NULL,
};

/* pgnfs_xform_describe -- the plug-in's one exported symbol. */
const pgnfs_xform_desc *pgnfs_xform_describe(void)
{
    return &uid_desc;
}
