/*
 * nfs3_err.c -- the one place an errno becomes an nfsstat3 (RFC 1813
 * section 2.6), and the statuses each procedure may return (section 3.3,
 * the ERRORS list of each procedure).
 *
 * NOTES
 *   Two kinds of status. Those that describe the call as a whole -- PERM,
 *   NOENT, IO, NXIO, ACCES, NODEV, NOTDIR, ISDIR, INVAL, NOSPC, DQUOT,
 *   NAMETOOLONG, STALE, BADHANDLE, SERVERFAULT, JUKEBOX -- may come from
 *   any procedure, as they do from Linux nfsd (REMOVE of a directory is
 *   ISDIR, READ of one is ISDIR, a sticky directory makes REMOVE PERM) and
 *   as clients expect. Those that describe the outcome of a particular
 *   operation -- EXIST, XDEV, FBIG, ROFS, MLINK, NOTEMPTY, NOT_SYNC,
 *   BAD_COOKIE, TOOSMALL, BADTYPE, NOTSUPP, REMOTE -- are allowed only from
 *   the procedures whose ERRORS list in section 3.3 names them; anywhere
 *   else they are replaced (with an info line) by a neighbour the procedure
 *   may return (e.g. EMLINK from MKDIR, a parent with too many subdirectories, is
 *   NOSPC; EFBIG from SETATTR, a size beyond the maximum, is INVAL, which
 *   POSIX truncate(2) also allows).
 *
 *   The only process-wide state is the set of errnos already warned about
 *   (atomic flags, so the warning is printed once, like printk_once in
 *   Linux nfsd's nfserrno()).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "nfs3_proc.h"

static const struct {
    int err;
    nfsstat3 st;
} nfs3_errtab[] = {
    {EPERM, NFS3ERR_PERM},
    {ENOENT, NFS3ERR_NOENT},
    {EIO, NFS3ERR_IO},
    {EREMOTEIO, NFS3ERR_IO},
    {EUCLEAN, NFS3ERR_IO},
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
    {EREMOTE, NFS3ERR_REMOTE},
    {EBADF, NFS3ERR_BADHANDLE},
    {EBADMSG, NFS3ERR_NOT_SYNC},
    {ENOTSUP, NFS3ERR_NOTSUPP},
    {EOPNOTSUPP, NFS3ERR_NOTSUPP},
    {ENOSYS, NFS3ERR_NOTSUPP},
    {ENFILE, NFS3ERR_SERVERFAULT},
    {EAGAIN, NFS3ERR_JUKEBOX},
    {EWOULDBLOCK, NFS3ERR_JUKEBOX},
    {ENOMEM, NFS3ERR_JUKEBOX},
    {ETIMEDOUT, NFS3ERR_JUKEBOX},
};

/* Procedures as bits, for the table below. */
#define P(proc) (1u << (proc))
#define NFS3_P_MAKE                                                                                \
    (P(NFSPROC3_CREATE) | P(NFSPROC3_MKDIR) | P(NFSPROC3_SYMLINK) | P(NFSPROC3_MKNOD))
#define NFS3_P_MUTATE                                                                              \
    (NFS3_P_MAKE | P(NFSPROC3_SETATTR) | P(NFSPROC3_WRITE) | P(NFSPROC3_REMOVE) |                  \
     P(NFSPROC3_RMDIR) | P(NFSPROC3_RENAME) | P(NFSPROC3_LINK))

/*
 * The operation-specific statuses: which procedures list them (RFC 1813
 * section 3.3), and what the others say instead.
 */
static const struct {
    nfsstat3 st;
    unsigned procs;
    nfsstat3 instead;
} nfs3_specific[] = {
    {NFS3ERR_EXIST, NFS3_P_MAKE | P(NFSPROC3_RMDIR) | P(NFSPROC3_RENAME) | P(NFSPROC3_LINK),
     NFS3ERR_IO},
    {NFS3ERR_XDEV, P(NFSPROC3_RENAME) | P(NFSPROC3_LINK), NFS3ERR_IO},
    {NFS3ERR_FBIG, P(NFSPROC3_WRITE), NFS3ERR_INVAL},
    {NFS3ERR_ROFS, NFS3_P_MUTATE, NFS3ERR_IO},
    {NFS3ERR_MLINK, P(NFSPROC3_RENAME) | P(NFSPROC3_LINK), NFS3ERR_NOSPC},
    {NFS3ERR_NOTEMPTY, P(NFSPROC3_RMDIR) | P(NFSPROC3_RENAME), NFS3ERR_IO},
    {NFS3ERR_NOT_SYNC, P(NFSPROC3_SETATTR), NFS3ERR_IO},
    {NFS3ERR_BAD_COOKIE, P(NFSPROC3_READDIR) | P(NFSPROC3_READDIRPLUS), NFS3ERR_IO},
    {NFS3ERR_TOOSMALL, P(NFSPROC3_READDIR) | P(NFSPROC3_READDIRPLUS), NFS3ERR_IO},
    {NFS3ERR_BADTYPE, P(NFSPROC3_MKNOD), NFS3ERR_INVAL},
    {NFS3ERR_NOTSUPP,
     NFS3_P_MAKE | P(NFSPROC3_READLINK) | P(NFSPROC3_RMDIR) | P(NFSPROC3_RENAME) |
         P(NFSPROC3_LINK) | P(NFSPROC3_READDIRPLUS),
     NFS3ERR_IO},
    {NFS3ERR_REMOTE, 0, NFS3ERR_IO},
};

/* errno values below this get a flag of their own; the rest share one. */
#define NFS3_WARN_SLOTS 256
static atomic_bool nfs3_warned[NFS3_WARN_SLOTS + 1];

static bool nfs3_first_warning(int err)
{
    unsigned slot = err >= 0 && err < NFS3_WARN_SLOTS ? (unsigned)err : NFS3_WARN_SLOTS;
    return !atomic_exchange(&nfs3_warned[slot], true);
}

bool nfs3_stat_allowed(unsigned proc, nfsstat3 st)
{
    if (proc > NFSPROC3_COMMIT)
        return false;
    if (st == NFS3_OK)
        return true;
    for (size_t i = 0; i < G_N_ELEMENTS(nfs3_specific); i++)
        if (nfs3_specific[i].st == st)
            return (nfs3_specific[i].procs & P(proc)) != 0;
    switch (st) {
    case NFS3ERR_PERM:
    case NFS3ERR_NOENT:
    case NFS3ERR_IO:
    case NFS3ERR_NXIO:
    case NFS3ERR_ACCES:
    case NFS3ERR_NODEV:
    case NFS3ERR_NOTDIR:
    case NFS3ERR_ISDIR:
    case NFS3ERR_INVAL:
    case NFS3ERR_NOSPC:
    case NFS3ERR_DQUOT:
    case NFS3ERR_NAMETOOLONG:
    case NFS3ERR_STALE:
    case NFS3ERR_BADHANDLE:
    case NFS3ERR_SERVERFAULT:
    case NFS3ERR_JUKEBOX:
        return true;
    default:
        return false;
    }
}

nfsstat3 nfs3_errno_to_stat(int err, unsigned proc)
{
    nfsstat3 st = NFS3ERR_IO;
    bool known = false;

    if (err == 0)
        return NFS3_OK;
    if (err < 0)
        err = -err;
    for (size_t i = 0; i < G_N_ELEMENTS(nfs3_errtab); i++) {
        if (nfs3_errtab[i].err == err) {
            st = nfs3_errtab[i].st;
            known = true;
            break;
        }
    }
    if (!known) {
        if (nfs3_first_warning(err))
            g_warning("nfs3: unexpected error %d (%s) answered as NFS3ERR_IO", err, strerror(err));
        return NFS3ERR_IO;
    }
    if (nfs3_stat_allowed(proc, st))
        return st;
    for (size_t i = 0; i < G_N_ELEMENTS(nfs3_specific); i++) {
        if (nfs3_specific[i].st == st) {
            g_info("nfs3: procedure %u may not return status %d (%s); answering %d", proc, (int)st,
                   strerror(err), (int)nfs3_specific[i].instead);
            return nfs3_specific[i].instead;
        }
    }
    return NFS3ERR_IO;
}
