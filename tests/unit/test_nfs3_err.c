/*
 * test_nfs3_err.c -- the errno -> nfsstat3 table (server/nfs3_err.c): every
 * mapped errno, unknown errnos as NFS3ERR_IO with a single warning, and the
 * statuses RFC 1813 reserves for particular procedures.
 */
#include <errno.h>

#include <glib.h>

#include "nfs3_proc.h"

static const struct {
    int err;
    nfsstat3 st;
} mapped[] = {
    {EPERM, NFS3ERR_PERM},
    {ENOENT, NFS3ERR_NOENT},
    {EIO, NFS3ERR_IO},
    {ENXIO, NFS3ERR_NXIO},
    {EACCES, NFS3ERR_ACCES},
    {EEXIST, NFS3ERR_EXIST},
    {EXDEV, NFS3ERR_XDEV},
    {ENODEV, NFS3ERR_NODEV},
    {ENOTDIR, NFS3ERR_NOTDIR},
    {EISDIR, NFS3ERR_ISDIR},
    {EINVAL, NFS3ERR_INVAL},
    {EFBIG, NFS3ERR_FBIG},
    {ENOSPC, NFS3ERR_NOSPC},
    {EROFS, NFS3ERR_ROFS},
    {EMLINK, NFS3ERR_MLINK},
    {ENAMETOOLONG, NFS3ERR_NAMETOOLONG},
    {ENOTEMPTY, NFS3ERR_NOTEMPTY},
    {EDQUOT, NFS3ERR_DQUOT},
    {ESTALE, NFS3ERR_STALE},
    {EBADF, NFS3ERR_BADHANDLE},
    {EBADMSG, NFS3ERR_NOT_SYNC},
    {ENOTSUP, NFS3ERR_NOTSUPP},
    {EOPNOTSUPP, NFS3ERR_NOTSUPP},
    {EAGAIN, NFS3ERR_JUKEBOX},
    {ENOMEM, NFS3ERR_JUKEBOX},
    {ETIMEDOUT, NFS3ERR_JUKEBOX},
};

/* A procedure whose RFC 1813 ERRORS list names st (or any, for general ones). */
static unsigned proc_listing(nfsstat3 st)
{
    switch (st) {
    case NFS3ERR_NOT_SYNC:
        return NFSPROC3_SETATTR;
    case NFS3ERR_FBIG:
        return NFSPROC3_WRITE;
    case NFS3ERR_XDEV:
    case NFS3ERR_MLINK:
    case NFS3ERR_NOTEMPTY:
    case NFS3ERR_EXIST:
        return NFSPROC3_RENAME;
    case NFS3ERR_ROFS:
    case NFS3ERR_NOTSUPP:
        return NFSPROC3_LINK;
    default:
        return NFSPROC3_GETATTR;
    }
}

static void test_mapped(void)
{
    g_assert_cmpint(nfs3_errno_to_stat(0, NFSPROC3_GETATTR), ==, NFS3_OK);
    for (size_t i = 0; i < G_N_ELEMENTS(mapped); i++) {
        unsigned proc = proc_listing(mapped[i].st);
        g_assert_cmpint(nfs3_errno_to_stat(-mapped[i].err, proc), ==, mapped[i].st);
        /* dbfs returns negative errnos; a positive one means the same. */
        g_assert_cmpint(nfs3_errno_to_stat(mapped[i].err, proc), ==, mapped[i].st);
    }
}

static void test_unknown(void)
{
    /* The first time an errno is seen it is named in a warning ... */
    g_test_expect_message("pgnfs", G_LOG_LEVEL_WARNING, "*unexpected error*");
    g_assert_cmpint(nfs3_errno_to_stat(-ECHILD, NFSPROC3_GETATTR), ==, NFS3ERR_IO);
    g_test_assert_expected_messages();
    /* ... and only then (warnings are fatal in tests, so a second one fails). */
    g_assert_cmpint(nfs3_errno_to_stat(-ECHILD, NFSPROC3_READ), ==, NFS3ERR_IO);
    g_assert_cmpint(nfs3_errno_to_stat(-ECHILD, NFSPROC3_LOOKUP), ==, NFS3ERR_IO);

    g_test_expect_message("pgnfs", G_LOG_LEVEL_WARNING, "*unexpected error*");
    g_assert_cmpint(nfs3_errno_to_stat(-ENOLINK, NFSPROC3_WRITE), ==, NFS3ERR_IO);
    g_test_assert_expected_messages();

    g_test_expect_message("pgnfs", G_LOG_LEVEL_WARNING, "*unexpected error*");
    g_assert_cmpint(nfs3_errno_to_stat(-100000, NFSPROC3_WRITE), ==, NFS3ERR_IO);
    g_test_assert_expected_messages();
}

static void test_specific(void)
{
    /* NOT_SYNC only from SETATTR. */
    g_assert_cmpint(nfs3_errno_to_stat(-EBADMSG, NFSPROC3_SETATTR), ==, NFS3ERR_NOT_SYNC);
    g_assert_cmpint(nfs3_errno_to_stat(-EBADMSG, NFSPROC3_WRITE), ==, NFS3ERR_IO);
    g_assert_cmpint(nfs3_errno_to_stat(-EBADMSG, NFSPROC3_GETATTR), ==, NFS3ERR_IO);
    /* EXIST only where names are made or removed. */
    g_assert_cmpint(nfs3_errno_to_stat(-EEXIST, NFSPROC3_CREATE), ==, NFS3ERR_EXIST);
    g_assert_cmpint(nfs3_errno_to_stat(-EEXIST, NFSPROC3_LINK), ==, NFS3ERR_EXIST);
    g_assert_cmpint(nfs3_errno_to_stat(-EEXIST, NFSPROC3_SETATTR), ==, NFS3ERR_IO);
    /* MLINK from RENAME and LINK; a directory full of subdirectories is NOSPC. */
    g_assert_cmpint(nfs3_errno_to_stat(-EMLINK, NFSPROC3_LINK), ==, NFS3ERR_MLINK);
    g_assert_cmpint(nfs3_errno_to_stat(-EMLINK, NFSPROC3_MKDIR), ==, NFS3ERR_NOSPC);
    /* FBIG from WRITE; SETATTR of a size too large is INVAL. */
    g_assert_cmpint(nfs3_errno_to_stat(-EFBIG, NFSPROC3_WRITE), ==, NFS3ERR_FBIG);
    g_assert_cmpint(nfs3_errno_to_stat(-EFBIG, NFSPROC3_SETATTR), ==, NFS3ERR_INVAL);
    g_assert_cmpint(nfs3_errno_to_stat(-EFBIG, NFSPROC3_READ), ==, NFS3ERR_INVAL);
    /* NOTEMPTY from RMDIR and RENAME. */
    g_assert_cmpint(nfs3_errno_to_stat(-ENOTEMPTY, NFSPROC3_RMDIR), ==, NFS3ERR_NOTEMPTY);
    g_assert_cmpint(nfs3_errno_to_stat(-ENOTEMPTY, NFSPROC3_RENAME), ==, NFS3ERR_NOTEMPTY);
    g_assert_cmpint(nfs3_errno_to_stat(-ENOTEMPTY, NFSPROC3_REMOVE), ==, NFS3ERR_IO);
    /* ROFS from the procedures that change something. */
    g_assert_cmpint(nfs3_errno_to_stat(-EROFS, NFSPROC3_WRITE), ==, NFS3ERR_ROFS);
    g_assert_cmpint(nfs3_errno_to_stat(-EROFS, NFSPROC3_READ), ==, NFS3ERR_IO);
    /* XDEV from RENAME and LINK. */
    g_assert_cmpint(nfs3_errno_to_stat(-EXDEV, NFSPROC3_RENAME), ==, NFS3ERR_XDEV);
    g_assert_cmpint(nfs3_errno_to_stat(-EXDEV, NFSPROC3_CREATE), ==, NFS3ERR_IO);
    /* The errors of the call as a whole come from any procedure. */
    for (unsigned p = NFSPROC3_GETATTR; p <= NFSPROC3_COMMIT; p++) {
        g_assert_cmpint(nfs3_errno_to_stat(-EAGAIN, p), ==, NFS3ERR_JUKEBOX);
        g_assert_cmpint(nfs3_errno_to_stat(-ESTALE, p), ==, NFS3ERR_STALE);
        g_assert_cmpint(nfs3_errno_to_stat(-EACCES, p), ==, NFS3ERR_ACCES);
        g_assert_cmpint(nfs3_errno_to_stat(-EISDIR, p), ==, NFS3ERR_ISDIR);
    }
}

static void test_allowed(void)
{
    const nfsstat3 readdir_only[] = {NFS3ERR_BAD_COOKIE, NFS3ERR_TOOSMALL};

    for (unsigned p = 0; p <= NFSPROC3_COMMIT; p++) {
        bool is_readdir = p == NFSPROC3_READDIR || p == NFSPROC3_READDIRPLUS;
        for (size_t i = 0; i < G_N_ELEMENTS(readdir_only); i++)
            g_assert_cmpint(nfs3_stat_allowed(p, readdir_only[i]), ==, is_readdir);
        g_assert_cmpint(nfs3_stat_allowed(p, NFS3ERR_BADTYPE), ==, p == NFSPROC3_MKNOD);
        g_assert_cmpint(nfs3_stat_allowed(p, NFS3ERR_NOT_SYNC), ==, p == NFSPROC3_SETATTR);
        g_assert_true(nfs3_stat_allowed(p, NFS3_OK));
        g_assert_true(nfs3_stat_allowed(p, NFS3ERR_SERVERFAULT));
        g_assert_true(nfs3_stat_allowed(p, NFS3ERR_BADHANDLE));
    }
    g_assert_false(nfs3_stat_allowed(NFSPROC3_COMMIT + 1, NFS3ERR_IO));

    /* Whatever the table says, a procedure only ever gets what it may return. */
    for (unsigned p = NFSPROC3_GETATTR; p <= NFSPROC3_COMMIT; p++)
        for (size_t i = 0; i < G_N_ELEMENTS(mapped); i++)
            g_assert_true(nfs3_stat_allowed(p, nfs3_errno_to_stat(-mapped[i].err, p)));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/nfs3_err/mapped", test_mapped);
    g_test_add_func("/nfs3_err/unknown", test_unknown);
    g_test_add_func("/nfs3_err/specific", test_specific);
    g_test_add_func("/nfs3_err/allowed", test_allowed);
    return g_test_run();
}
