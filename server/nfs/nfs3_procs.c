/*
 * nfs3_procs.c -- the NFS version 3 procedure table (program 100003,
 * version 3, RFC 1813 section 3.3), indexed by procedure number.
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
#include "nfs3_proc.h"

#define NFS3_PROC_DEC(num, nm, args, dec, res, fn, nonidem)                                        \
    [num] = {.name = nm,                                                                           \
             .args_xdr = (xdrproc_t)dec,                                                           \
             .res_xdr = (xdrproc_t)xdr_##res,                                                      \
             .args_size = sizeof(args),                                                            \
             .res_size = sizeof(res),                                                              \
             .handler = fn,                                                                        \
             .non_idempotent = nonidem}
/* A procedure whose arguments are what rpcgen decodes, unchecked. */
#define NFS3_PROC(num, nm, args, res, fn, nonidem)                                                 \
    NFS3_PROC_DEC(num, nm, args, xdr_##args, res, fn, nonidem)

const srv_proc nfs3_procs[] = {
    [NFSPROC3_NULL] = {.name = "NULL",
                       .args_xdr = NFS3_XDR_VOID,
                       .res_xdr = NFS3_XDR_VOID,
                       .args_size = 0,
                       .res_size = 0,
                       .handler = nfs3_proc_null,
                       .non_idempotent = false},
    NFS3_PROC(NFSPROC3_GETATTR, "GETATTR", GETATTR3args, GETATTR3res, nfs3_proc_getattr, false),
    NFS3_PROC(NFSPROC3_SETATTR, "SETATTR", SETATTR3args, SETATTR3res, nfs3_proc_setattr, true),
    NFS3_PROC_DEC(NFSPROC3_LOOKUP, "LOOKUP", LOOKUP3args, nfs3_args_lookup, LOOKUP3res,
                  nfs3_proc_lookup, false),
    NFS3_PROC(NFSPROC3_ACCESS, "ACCESS", ACCESS3args, ACCESS3res, nfs3_proc_access, false),
    NFS3_PROC(NFSPROC3_READLINK, "READLINK", READLINK3args, READLINK3res, nfs3_proc_readlink,
              false),
    NFS3_PROC(NFSPROC3_READ, "READ", READ3args, READ3res, nfs3_proc_read, false),
    NFS3_PROC(NFSPROC3_WRITE, "WRITE", WRITE3args, WRITE3res, nfs3_proc_write, true),
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

const unsigned nfs3_nprocs = sizeof nfs3_procs / sizeof nfs3_procs[0];
