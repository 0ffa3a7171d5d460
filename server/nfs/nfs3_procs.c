/*
 * nfs3_procs.c -- the NFS version 3 program as the RPC runtime sees it
 * (nfs3_program.h): the procedure table (program 100003, version 3, RFC
 * 1813 section 3.3), indexed by procedure number, and what the runtime
 * must know about NFSv3 results.
 *
 * JUKEBOX without a handler: every NFSv3 result (RFC 1813) is a union
 * whose discriminant, the nfsstat3 status, is its first member, and every
 * failure arm holds only post_op_attr/wcc_data whose zeroed form encodes
 * "no attributes". So a zeroed result with its status set to
 * nfs3_errno_to_stat(-EAGAIN) (NFS3ERR_JUKEBOX: "try again later") is a
 * complete, valid reply for every procedure; the runtime answers it when
 * a worker has no database connection, and never replays it from the
 * duplicate request cache (nothing was done).
 *
 * NOTES
 *   Non-idempotent procedures -- those whose second execution differs
 *   from the first (SETATTR, WRITE, CREATE, MKDIR, SYMLINK, MKNOD, REMOVE,
 *   RMDIR, RENAME, LINK) -- have their replies kept in the duplicate
 *   request cache by dispatch.
 *
 *   Procedures that carry names or paths decode their arguments with the
 *   routines of nfs3_args.c (NFS3_PROC_DEC), which refuse a name holding a
 *   NUL or '/' (GARBAGE_ARGS) before any handler runs.
 */
#include <errno.h>

#include <glib.h>

#include "nfs3_proc.h"
#include "nfs3_program.h"

/* A procedure whose arguments dec decodes; qfn its quick form (NULL:
 * none; srv_proc.quick: answered from memory on the event thread when it
 * can be). */
#define NFS3_PROC_DECQ(num, nm, args, dec, res, fn, nonidem, qfn)                                  \
    [num] = {.name = nm,                                                                           \
             .args_xdr = (xdrproc_t)dec,                                                           \
             .res_xdr = (xdrproc_t)xdr_##res,                                                      \
             .args_size = sizeof(args),                                                            \
             .res_size = sizeof(res),                                                              \
             .handler = fn,                                                                        \
             .non_idempotent = nonidem,                                                            \
             .quick = qfn}
#define NFS3_PROC_DEC(num, nm, args, dec, res, fn, nonidem)                                        \
    NFS3_PROC_DECQ(num, nm, args, dec, res, fn, nonidem, NULL)
/* A procedure whose arguments are what rpcgen decodes, unchecked. */
#define NFS3_PROC(num, nm, args, res, fn, nonidem)                                                 \
    NFS3_PROC_DEC(num, nm, args, xdr_##args, res, fn, nonidem)
/* An idempotent one with a quick form. */
#define NFS3_PROC_QUICK(num, nm, args, res, fn, qfn)                                               \
    NFS3_PROC_DECQ(num, nm, args, xdr_##args, res, fn, false, qfn)

static const srv_proc nfs3_procs[] = {
    [NFSPROC3_NULL] = {.name = "NULL",
                       .args_xdr = NFS3_XDR_VOID,
                       .res_xdr = NFS3_XDR_VOID,
                       .args_size = 0,
                       .res_size = 0,
                       .handler = nfs3_proc_null,
                       .non_idempotent = false,
                       .quick = nfs3_quick_null},
    NFS3_PROC_QUICK(NFSPROC3_GETATTR, "GETATTR", GETATTR3args, GETATTR3res, nfs3_proc_getattr,
                    nfs3_quick_getattr),
    NFS3_PROC(NFSPROC3_SETATTR, "SETATTR", SETATTR3args, SETATTR3res, nfs3_proc_setattr, true),
    NFS3_PROC_DECQ(NFSPROC3_LOOKUP, "LOOKUP", LOOKUP3args, nfs3_args_lookup, LOOKUP3res,
                   nfs3_proc_lookup, false, nfs3_quick_lookup),
    NFS3_PROC_QUICK(NFSPROC3_ACCESS, "ACCESS", ACCESS3args, ACCESS3res, nfs3_proc_access,
                    nfs3_quick_access),
    NFS3_PROC(NFSPROC3_READLINK, "READLINK", READLINK3args, READLINK3res, nfs3_proc_readlink,
              false),
    NFS3_PROC_QUICK(NFSPROC3_READ, "READ", READ3args, READ3res, nfs3_proc_read, nfs3_quick_read),
    NFS3_PROC_DEC(NFSPROC3_WRITE, "WRITE", WRITE3args, nfs3_args_write, WRITE3res, nfs3_proc_write,
                  true),
    NFS3_PROC_DEC(NFSPROC3_CREATE, "CREATE", CREATE3args, nfs3_args_create, CREATE3res,
                  nfs3_proc_create, true),
    NFS3_PROC_DEC(NFSPROC3_MKDIR, "MKDIR", MKDIR3args, nfs3_args_mkdir, MKDIR3res, nfs3_proc_mkdir,
                  true),
    NFS3_PROC_DEC(NFSPROC3_SYMLINK, "SYMLINK", SYMLINK3args, nfs3_args_symlink, SYMLINK3res,
                  nfs3_proc_symlink, true),
    NFS3_PROC_DEC(NFSPROC3_MKNOD, "MKNOD", MKNOD3args, nfs3_args_mknod, MKNOD3res, nfs3_proc_mknod,
                  true),
    NFS3_PROC_DEC(NFSPROC3_REMOVE, "REMOVE", REMOVE3args, nfs3_args_remove, REMOVE3res,
                  nfs3_proc_remove, true),
    NFS3_PROC_DEC(NFSPROC3_RMDIR, "RMDIR", RMDIR3args, nfs3_args_rmdir, RMDIR3res, nfs3_proc_rmdir,
                  true),
    NFS3_PROC_DEC(NFSPROC3_RENAME, "RENAME", RENAME3args, nfs3_args_rename, RENAME3res,
                  nfs3_proc_rename, true),
    NFS3_PROC_DEC(NFSPROC3_LINK, "LINK", LINK3args, nfs3_args_link, LINK3res, nfs3_proc_link, true),
    NFS3_PROC(NFSPROC3_READDIR, "READDIR", READDIR3args, READDIR3res, nfs3_proc_readdir, false),
    NFS3_PROC(NFSPROC3_READDIRPLUS, "READDIRPLUS", READDIRPLUS3args, READDIRPLUS3res,
              nfs3_proc_readdirplus, false),
    NFS3_PROC(NFSPROC3_FSSTAT, "FSSTAT", FSSTAT3args, FSSTAT3res, nfs3_proc_fsstat, false),
    NFS3_PROC(NFSPROC3_FSINFO, "FSINFO", FSINFO3args, FSINFO3res, nfs3_proc_fsinfo, false),
    NFS3_PROC(NFSPROC3_PATHCONF, "PATHCONF", PATHCONF3args, PATHCONF3res, nfs3_proc_pathconf,
              false),
    NFS3_PROC(NFSPROC3_COMMIT, "COMMIT", COMMIT3args, COMMIT3res, nfs3_proc_commit, false),
};

/* NFSv3 statuses (RFC 1813 section 2.6) by name, for the statistics. */
static const srv_status nfs3_statuses[] = {
    {NFS3_OK, "NFS3_OK"},
    {NFS3ERR_PERM, "NFS3ERR_PERM"},
    {NFS3ERR_NOENT, "NFS3ERR_NOENT"},
    {NFS3ERR_IO, "NFS3ERR_IO"},
    {NFS3ERR_NXIO, "NFS3ERR_NXIO"},
    {NFS3ERR_ACCES, "NFS3ERR_ACCES"},
    {NFS3ERR_EXIST, "NFS3ERR_EXIST"},
    {NFS3ERR_XDEV, "NFS3ERR_XDEV"},
    {NFS3ERR_NODEV, "NFS3ERR_NODEV"},
    {NFS3ERR_NOTDIR, "NFS3ERR_NOTDIR"},
    {NFS3ERR_ISDIR, "NFS3ERR_ISDIR"},
    {NFS3ERR_INVAL, "NFS3ERR_INVAL"},
    {NFS3ERR_FBIG, "NFS3ERR_FBIG"},
    {NFS3ERR_NOSPC, "NFS3ERR_NOSPC"},
    {NFS3ERR_ROFS, "NFS3ERR_ROFS"},
    {NFS3ERR_MLINK, "NFS3ERR_MLINK"},
    {NFS3ERR_NAMETOOLONG, "NFS3ERR_NAMETOOLONG"},
    {NFS3ERR_NOTEMPTY, "NFS3ERR_NOTEMPTY"},
    {NFS3ERR_DQUOT, "NFS3ERR_DQUOT"},
    {NFS3ERR_STALE, "NFS3ERR_STALE"},
    {NFS3ERR_REMOTE, "NFS3ERR_REMOTE"},
    {NFS3ERR_BADHANDLE, "NFS3ERR_BADHANDLE"},
    {NFS3ERR_NOT_SYNC, "NFS3ERR_NOT_SYNC"},
    {NFS3ERR_BAD_COOKIE, "NFS3ERR_BAD_COOKIE"},
    {NFS3ERR_NOTSUPP, "NFS3ERR_NOTSUPP"},
    {NFS3ERR_TOOSMALL, "NFS3ERR_TOOSMALL"},
    {NFS3ERR_SERVERFAULT, "NFS3ERR_SERVERFAULT"},
    {NFS3ERR_BADTYPE, "NFS3ERR_BADTYPE"},
    {NFS3ERR_JUKEBOX, "NFS3ERR_JUKEBOX"},
};

/* Without a database: "try again later" (see the header). */
static bool nfs3_retry_later(uint32_t proc, void *res)
{
    *(nfsstat3 *)res = nfs3_errno_to_stat(-EAGAIN, proc);
    return true;
}

/* Every result but NULL's starts with its nfsstat3 (see the header). */
static bool nfs3_status_of(uint32_t proc, const void *res, uint32_t *status)
{
    if (proc == NFSPROC3_NULL)
        return false;
    *status = (uint32_t) * (const nfsstat3 *)res;
    return true;
}

/* A JUKEBOX reply did nothing: a retransmission must run, not replay it. */
static bool nfs3_cacheable(uint32_t proc, const void *res)
{
    uint32_t st;

    return !nfs3_status_of(proc, res, &st) || st != NFS3ERR_JUKEBOX;
}

const srv_program nfs3_program = {
    .name = "nfs3",
    .prog = NFS_PROGRAM,
    .vers = NFS_V3,
    .procs = nfs3_procs,
    .nprocs = G_N_ELEMENTS(nfs3_procs),
    .auth = SRV_AUTH_SYS,
    .needs_db = true,
    .retry_later = nfs3_retry_later,
    .cacheable = nfs3_cacheable,
    .status_of = nfs3_status_of,
    .statuses = nfs3_statuses,
    .nstatuses = G_N_ELEMENTS(nfs3_statuses),
    .status_metric = "pgnfs_nfs3_replies_total",
    .status_help = "NFSv3 replies by status.",
};
