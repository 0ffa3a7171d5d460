/*
 * cthon_nolibnfs.c -- the libnfs front end's entry point for the static
 * `cthon-path` build (the basic tests on a directory, for a guest without a
 * C library or libnfs): it only says that nfs:// targets need `cthon`.
 */
#include <errno.h>
#include <stdio.h>

#include "cthon.h"

int cthon_nfs_open(const char *url, int timeout_ms, cthon_fs **fs, const cthon_ops **ops, char *err,
                   size_t err_size)
{
    (void)timeout_ms;
    *fs = NULL;
    *ops = NULL;
    snprintf(err, err_size,
             "%s: this build has no libnfs front end; give a directory, or use cthon", url);
    return -ENOTSUP;
}
