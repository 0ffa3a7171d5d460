/*
 * nfs3_proc.h -- private to the NFSv3 and MOUNTv3 procedure handlers
 * (nfs3_*.c, mnt3.c): the handler prototypes, the one errno -> nfsstat3
 * table, the conversions between dbfs and XDR types, and the checks every
 * handler makes on its input.
 *
 * NOTES
 *   Every handler has one shape: nfs3_fh_in() for each handle it gets,
 *   checks of names and counts, one dbfs call, nfs3_errno_to_stat(), then
 *   resok or resfail filled with whatever attributes dbfs could give.
 *
 *   Memory: conversions that need memory (handles, names, data) take it from
 *   srv_req_alloc(), so it lives until the reply has been encoded. Nothing
 *   here keeps state between requests.
 *
 *   Names (filename3) and symbolic link targets (nfspath3) arrive with
 *   their byte count (rpc/nfs3.x declares them opaque). The argument
 *   decoders (nfs3_args.c) refuse, as GARBAGE_ARGS, an empty name and any
 *   name holding a NUL or '/' byte, and a target holding a NUL, as Linux
 *   nfsd's decoder does. The handlers then take them through
 *   nfs3_name_in() / nfs3_path_in(): a NUL-terminated copy for dbfs (safe:
 *   no NUL can be inside any more, so the C string is the whole name),
 *   NFS3ERR_NAMETOOLONG over DBFS_NAME_MAX / DBFS_PATH_MAX bytes, and for
 *   "." and ".." the status Linux nfsd answers the procedure (fs/nfsd/vfs.c,
 *   nfs3proc.c): LOOKUP looks them up, CREATE, MKDIR, SYMLINK, MKNOD and
 *   LINK answer NFS3ERR_EXIST, REMOVE and RMDIR NFS3ERR_ACCES, RENAME (either
 *   name) NFS3ERR_PERM -- before any database call.
 */
#ifndef PGNFS_NFS3_PROC_H
#define PGNFS_NFS3_PROC_H

#include <stdbool.h>
#include <stdint.h>

#include "nfs3.h"
#include "dbfs.h"
#include "dbfs_snap.h"
#include "fh.h"
#include "srv.h"
#include "exp.h"

/*
 * xdr_void as a srv_proc XDR routine; the cast goes through void (*)(void),
 * the type C compilers accept as "any function".
 */
#define NFS3_XDR_VOID ((xdrproc_t)(void (*)(void))xdr_void)

/* --- procedure handlers (srv_proc.handler) -------------------------------- */

void nfs3_proc_null(srv_req *req, void *argp, void *resp);
void nfs3_proc_getattr(srv_req *req, void *argp, void *resp);
/* The forms answered from memory on the event thread (srv_proc.quick):
 * true with the result filled, or false (nothing done) for a worker. */
bool nfs3_quick_null(srv_req *req, void *argp, void *resp);
bool nfs3_quick_getattr(srv_req *req, void *argp, void *resp);
bool nfs3_quick_access(srv_req *req, void *argp, void *resp);
bool nfs3_quick_lookup(srv_req *req, void *argp, void *resp);
bool nfs3_quick_read(srv_req *req, void *argp, void *resp);
/* The largest READ a quick form answers (nfs3_quick_read). */
#define NFS3_QUICK_READ_MAX (64u * 1024u)
void nfs3_proc_setattr(srv_req *req, void *argp, void *resp);
void nfs3_proc_lookup(srv_req *req, void *argp, void *resp);
void nfs3_proc_access(srv_req *req, void *argp, void *resp);
void nfs3_proc_readlink(srv_req *req, void *argp, void *resp);
void nfs3_proc_read(srv_req *req, void *argp, void *resp);
void nfs3_proc_write(srv_req *req, void *argp, void *resp);
void nfs3_proc_create(srv_req *req, void *argp, void *resp);
void nfs3_proc_mkdir(srv_req *req, void *argp, void *resp);
void nfs3_proc_symlink(srv_req *req, void *argp, void *resp);
void nfs3_proc_mknod(srv_req *req, void *argp, void *resp);
void nfs3_proc_remove(srv_req *req, void *argp, void *resp);
void nfs3_proc_rmdir(srv_req *req, void *argp, void *resp);
void nfs3_proc_rename(srv_req *req, void *argp, void *resp);
void nfs3_proc_link(srv_req *req, void *argp, void *resp);
void nfs3_proc_readdir(srv_req *req, void *argp, void *resp);
void nfs3_proc_readdirplus(srv_req *req, void *argp, void *resp);
void nfs3_proc_fsstat(srv_req *req, void *argp, void *resp);
void nfs3_proc_fsinfo(srv_req *req, void *argp, void *resp);
void nfs3_proc_pathconf(srv_req *req, void *argp, void *resp);
void nfs3_proc_commit(srv_req *req, void *argp, void *resp);

/* --- errors (nfs3_err.c) ----------------------------------------------------- */

/*
 * nfs3_errno_to_stat -- the NFS status for dbfs result `err` (0 or a
 * negative errno; a positive errno is taken as its negative) as procedure
 * `proc` (NFSPROC3_*) may report it. 0 is NFS3_OK. An errno the table does
 * not know is NFS3ERR_IO, with a warning naming it the first time it is
 * seen. A status RFC 1813 reserves for other procedures (NOT_SYNC outside
 * SETATTR, EXIST outside the procedures that create or remove names, ...)
 * is replaced by the nearest status this procedure may return, with a
 * warning. Cannot fail.
 */
nfsstat3 nfs3_errno_to_stat(int err, unsigned proc);

/*
 * nfs3_stat_allowed -- may procedure `proc` return status `st`? True for
 * the statuses any procedure may return (section 2.6: permission, I/O,
 * handle, server and argument errors, JUKEBOX) and for those the ERRORS
 * list of the procedure in RFC 1813 section 3.3 names.
 */
bool nfs3_stat_allowed(unsigned proc, nfsstat3 st);

/* --- conversions (nfs3_conv.c) --------------------------------------------- */

/*
 * nfs3_time_from_ns -- nanoseconds since the epoch as nfstime3. Seconds
 * outside [0, 2^32-1] are clamped to the nearest representable time
 * ({0, 0} or {2^32-1, 999999999}). Cannot fail.
 */
nfstime3 nfs3_time_from_ns(int64_t ns);

/* nfs3_time_to_ns -- an nfstime3 as nanoseconds (nseconds taken as given). */
int64_t nfs3_time_to_ns(const nfstime3 *t);

/* nfs3_ftype -- the ftype3 of a dbfs file type. */
ftype3 nfs3_ftype(dbfs_type t);

/* nfs3_fattr -- fattr3 of a (fsid from info, fileid = inode). Cannot fail. */
void nfs3_fattr(const dbfs_info *info, const dbfs_attr *a, fattr3 *out);

/* nfs3_post_op_attr -- attributes if `a` is valid, else none. */
void nfs3_post_op_attr(const dbfs_info *info, const dbfs_attr_opt *a, post_op_attr *out);

/* nfs3_post_op_attr_of -- attributes `a`, always present. */
void nfs3_post_op_attr_of(const dbfs_info *info, const dbfs_attr *a, post_op_attr *out);

/* nfs3_wcc -- wcc_data from dbfs's before/after attributes. */
void nfs3_wcc(const dbfs_info *info, const dbfs_wcc *w, wcc_data *out);

/*
 * nfs3_sattr_in -- sattr3 as dbfs_sattr: mode masked to 07777, times
 * SET_TO_SERVER_TIME as the *_NOW flags. Returns NFS3_OK, or
 * NFS3ERR_INVAL (out untouched beyond what was already converted) for a
 * client time with nseconds >= 10^9 or an unknown time_how.
 */
nfsstat3 nfs3_sattr_in(const sattr3 *in, dbfs_sattr *out);

/*
 * nfs3_name_in -- the name `in` of a call of procedure `proc` (NFSPROC3_*)
 * as a NUL-terminated copy in request memory (*out), after the checks of
 * NOTES. Returns NFS3_OK; NFS3ERR_NAMETOOLONG (over DBFS_NAME_MAX bytes);
 * for "." and "..", NFS3_OK for LOOKUP, NFS3ERR_EXIST for CREATE, MKDIR,
 * SYMLINK, MKNOD and LINK, NFS3ERR_ACCES for REMOVE and RMDIR,
 * NFS3ERR_PERM for RENAME. A name the decoders refuse (empty, NUL, '/')
 * here is a server bug: NFS3ERR_SERVERFAULT with a warning. On error *out
 * is NULL.
 */
nfsstat3 nfs3_name_in(srv_req *req, unsigned proc, const filename3 *in, const char **out);

/*
 * nfs3_path_in -- a SYMLINK target as a NUL-terminated copy in request
 * memory (*out). Returns NFS3_OK; NFS3ERR_INVAL when empty and
 * NFS3ERR_NAMETOOLONG over DBFS_PATH_MAX bytes, as Linux nfsd answers
 * (fs/nfsd/nfs3proc.c, nfsd3_proc_symlink); NFS3ERR_SERVERFAULT with a
 * warning for a NUL the decoder should have refused. On error *out is NULL.
 */
nfsstat3 nfs3_path_in(srv_req *req, const nfspath3 *in, const char **out);

/* nfs3_name_out -- filename3 of the C string name, copied into request memory. */
void nfs3_name_out(srv_req *req, const char *name, filename3 *out);

/* nfs3_path_out -- nfspath3 of the C string path, copied into request memory. */
void nfs3_path_out(srv_req *req, const char *path, nfspath3 *out);

/* --- argument decoders (nfs3_args.c) ------------------------------------------ */

/*
 * nfs3_filename_ok -- may n be a file name on the wire: at least one byte,
 * none of them NUL or '/'? (Its length is judged later: nfs3_name_in.)
 */
bool nfs3_filename_ok(const filename3 *n);

/* nfs3_path_ok -- may p be a SYMLINK target on the wire: no NUL byte? */
bool nfs3_path_ok(const nfspath3 *p);

/*
 * The srv_proc.args_xdr routines of the procedures that carry names:
 * rpcgen's xdr_<PROC>3args for every operation, and after XDR_DECODE
 * FALSE (dispatch answers GARBAGE_ARGS) when a name fails
 * nfs3_filename_ok() or SYMLINK's target fails nfs3_path_ok(). What was
 * decoded is freed by the same routine with XDR_FREE, as after any decode.
 */
bool_t nfs3_args_lookup(XDR *x, LOOKUP3args *a);
bool_t nfs3_args_create(XDR *x, CREATE3args *a);
bool_t nfs3_args_mkdir(XDR *x, MKDIR3args *a);
bool_t nfs3_args_symlink(XDR *x, SYMLINK3args *a);
bool_t nfs3_args_mknod(XDR *x, MKNOD3args *a);
bool_t nfs3_args_remove(XDR *x, REMOVE3args *a);
bool_t nfs3_args_rmdir(XDR *x, RMDIR3args *a);
bool_t nfs3_args_rename(XDR *x, RENAME3args *a);
bool_t nfs3_args_link(XDR *x, LINK3args *a);
/* WRITE: rpcgen's decoding but for the data, which is left in the call
 * record (data_val points into it; XDR_FREE does not free it). */
bool_t nfs3_args_write(XDR *x, WRITE3args *a);

/*
 * nfs3_fh_in -- the file named by handle `in`, and the caller as the
 * handle's export sees him (exp_fh_in, exp.h, with the errors as
 * statuses). Decodes and authenticates the handle (-EBADF:
 * NFS3ERR_BADHANDLE; -ESTALE: NFS3ERR_STALE for another file system or an
 * export index beyond the configuration), checks that the export admits
 * the client (-EACCES: NFS3ERR_ACCES; a `secure` export also needs a
 * source port below 1024), and sets req->export, req->client and req->cred,
 * and the commit mode of req->db: async when the client entry says
 * exports(5) `async` (and, for a second handle, the first one's did too),
 * else durable (dbfs_conn_set_async).
 * Statuses come from nfs3_errno_to_stat; every refusal is logged, at most
 * a few lines a second per client address (srv_req_complain). Returns
 * NFS3_OK with *out filled; on error *out and req are unchanged.
 */
nfsstat3 nfs3_fh_in(srv_req *req, const nfs_fh3 *in, dbfs_fh *out);

/*
 * nfs3_quick_fh_in -- nfs3_fh_in for a quick form (srv_proc.quick): false
 * when the call must go to a worker (matching the caller against the
 * exports may resolve a host name, which may block: srv_ctx's
 * match_may_block); else true and *st as nfs3_fh_in answers.
 */
bool nfs3_quick_fh_in(srv_req *req, const nfs_fh3 *in, dbfs_fh *out, nfsstat3 *st);

/* nfs3_quick_status -- a quick form's dbfs answer rc for procedure proc:
 * false when only a worker can give it (-ENODATA), else true and *st. */
bool nfs3_quick_status(int rc, uint32_t proc, nfsstat3 *st);

/* nfs3_read_only -- is the export read-only for this client? (after fh_in) */
bool nfs3_read_only(const srv_req *req);

/* nfs3_export_index -- position of req->export in the configuration. */
unsigned nfs3_export_index(const srv_req *req);

/* nfs3_fh_out -- the handle of fh in req->export, in request memory. */
void nfs3_fh_out(srv_req *req, dbfs_fh fh, nfs_fh3 *out);

/* nfs3_post_op_fh -- a post_op_fh3 holding the handle of fh. */
void nfs3_post_op_fh(srv_req *req, dbfs_fh fh, post_op_fh3 *out);

/* --- snapshots (nfs3_snap.c) ----------------------------------------------- */

/*
 * nfs3_snap_lookup -- LOOKUP of `name` in dir when snapshots answer it:
 * ".snapshots" in the live root of req->export (the directory of
 * snapshots), or ".." in a snapshot's copy of that root (the directory of
 * snapshots again). Returns false when they do not (the ordinary LOOKUP
 * follows); else true with *err (0 or a dbfs errno), *obj and *dir_attr
 * filled as dbfs_lookup fills them.
 */
bool nfs3_snap_lookup(srv_req *req, dbfs_fh dir, const char *name, int *err, dbfs_attr *obj,
                      dbfs_attr_opt *dir_attr);

/*
 * nfs3_snap_listed -- does a listing of dir that reached its end after
 * `cookie` also show ".snapshots" ([snapshot] visible = true, dir the live
 * root of req->export)? Then true and *out is its entry (the name is
 * static: do not free it), with attributes for READDIRPLUS (plus) when
 * they could be read.
 */
bool nfs3_snap_listed(srv_req *req, dbfs_fh dir, uint64_t cookie, bool plus, dbfs_dirent *out);

/* --- exports (mnt3.c) -------------------------------------------------------- */

/*
 * mnt3_resolve -- walk `path` (absolute, components separated by '/',
 * without "." or "..") from the root of the file system as root (uid 0),
 * one dbfs_lookup per component. Returns 0 and *out, or the dbfs error of
 * the step that failed (-ENOENT, -ENOTDIR, -ENAMETOOLONG, -EAGAIN, ...).
 * The last component may be of any type.
 */
int mnt3_resolve(srv_req *req, const char *path, dbfs_attr *out);

#endif /* PGNFS_NFS3_PROC_H */
