/*
 * nfs3_attr.c -- NFSv3 procedures about attributes and the file system:
 * NULL, GETATTR, SETATTR, ACCESS, FSSTAT, FSINFO, PATHCONF (RFC 1813
 * sections 3.3.0 - 3.3.2, 3.3.4, 3.3.18 - 3.3.20).
 *
 * NOTES
 *   Handlers follow nfs3_proc.h: handles first, then the arguments, one
 *   dbfs call, the status mapped once, resok or resfail filled. FSSTAT,
 *   FSINFO and PATHCONF read the object's attributes too, so a stale handle
 *   is answered STALE and the reply carries post-op attributes.
 */
#include <string.h>

#include "nfs3_proc.h"

/* Largest link count: fileatt.nlink is a PostgreSQL int (int32). */
#define NFS3_LINK_MAX 2147483647u
/* The ACCESS bits RFC 1813 defines (3.3.4); others are never granted. */
#define NFS3_ACCESS_KNOWN                                                                          \
    (ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE |            \
     ACCESS3_EXECUTE)
/* Preferred READDIR size we advertise (FSINFO dtpref). */
#define NFS3_DTPREF (64u * 1024u)

/* NULL: do nothing (RFC 1813 3.3.0). */
void nfs3_proc_null(srv_req *req, void *argp, void *resp)
{
    (void)req;
    (void)argp;
    (void)resp;
}

/* GETATTR: attributes of a file (RFC 1813 3.3.1). */
void nfs3_proc_getattr(srv_req *req, void *argp, void *resp)
{
    const GETATTR3args *args = argp;
    GETATTR3res *res = resp;
    dbfs_fh fh;
    dbfs_attr attr;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->object, &fh);
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(dbfs_getattr(req->db, fh, &attr), NFSPROC3_GETATTR);
    res->status = st;
    if (st == NFS3_OK)
        nfs3_fattr(req->srv->info, &attr, &res->GETATTR3res_u.resok.obj_attributes);
}

/* NULL from the event thread: nothing to do there either. */
bool nfs3_quick_null(srv_req *req, void *argp, void *resp)
{
    nfs3_proc_null(req, argp, resp);
    return true;
}

/* GETATTR from the event thread: what nfs3_proc_getattr answers, when the
 * export's client patterns are addresses (a host name is resolved, which
 * may block) and the attributes are in memory (dbfs_getattr_quick). */
bool nfs3_quick_getattr(srv_req *req, void *argp, void *resp)
{
    const GETATTR3args *args = argp;
    GETATTR3res *res = resp;
    dbfs_fh fh;
    dbfs_attr attr;
    nfsstat3 st;

    if (!nfs3_quick_fh_in(req, &args->object, &fh, &st) ||
        (st == NFS3_OK &&
         !nfs3_quick_status(dbfs_getattr_quick(req->srv->fs, fh, &attr), NFSPROC3_GETATTR, &st)))
        return false;
    res->status = st;
    if (st == NFS3_OK)
        nfs3_fattr(req->srv->info, &attr, &res->GETATTR3res_u.resok.obj_attributes);
    return true;
}

/* SETATTR: change attributes, optionally guarded by ctime (RFC 1813 3.3.2). */
void nfs3_proc_setattr(srv_req *req, void *argp, void *resp)
{
    const SETATTR3args *args = argp;
    SETATTR3res *res = resp;
    dbfs_fh fh;
    dbfs_sattr sa;
    dbfs_wcc wcc = {0};
    int64_t guard = 0;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->object, &fh);
    if (st == NFS3_OK)
        st = nfs3_sattr_in(&args->new_attributes, &sa);
    if (st == NFS3_OK && nfs3_read_only(req))
        st = NFS3ERR_ROFS;
    if (st == NFS3_OK && args->guard.check) {
        /* No ctime has nseconds >= 10^9, so such a guard never matches. */
        if (args->guard.sattrguard3_u.obj_ctime.nseconds >= 1000000000u)
            st = NFS3ERR_NOT_SYNC;
        else
            guard = nfs3_time_to_ns(&args->guard.sattrguard3_u.obj_ctime);
    }
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(
            dbfs_setattr(req->db, &req->cred, fh, &sa, args->guard.check ? &guard : NULL, &wcc),
            NFSPROC3_SETATTR);
    res->status = st;
    if (st == NFS3_OK)
        nfs3_wcc(req->srv->info, &wcc, &res->SETATTR3res_u.resok.obj_wcc);
    else
        nfs3_wcc(req->srv->info, &wcc, &res->SETATTR3res_u.resfail.obj_wcc);
}

/* ACCESS's reply from the attributes and grants dbfs gave, or its status. */
static void nfs3_access_res(srv_req *req, const ACCESS3args *args, ACCESS3res *res, nfsstat3 st,
                            uint32_t granted, const dbfs_attr *attr)
{
    res->status = st;
    if (st != NFS3_OK)
        return;
    if (nfs3_read_only(req))
        granted &= ~(uint32_t)(ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE);
    nfs3_post_op_attr_of(req->srv->info, attr, &res->ACCESS3res_u.resok.obj_attributes);
    res->ACCESS3res_u.resok.access = granted & args->access;
}

/* ACCESS: which of the asked permissions the caller has (RFC 1813 3.3.4). */
void nfs3_proc_access(srv_req *req, void *argp, void *resp)
{
    const ACCESS3args *args = argp;
    dbfs_fh fh;
    dbfs_attr attr;
    uint32_t granted = 0;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->object, &fh);
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(
            dbfs_access(req->db, &req->cred, fh, args->access & NFS3_ACCESS_KNOWN, &granted, &attr),
            NFSPROC3_ACCESS);
    nfs3_access_res(req, args, resp, st, granted, &attr);
}

/* ACCESS from the event thread, as GETATTR's quick form. */
bool nfs3_quick_access(srv_req *req, void *argp, void *resp)
{
    const ACCESS3args *args = argp;
    dbfs_fh fh;
    dbfs_attr attr;
    uint32_t granted = 0;
    nfsstat3 st;

    if (!nfs3_quick_fh_in(req, &args->object, &fh, &st) ||
        (st == NFS3_OK &&
         !nfs3_quick_status(dbfs_access_quick(req->srv->fs, &req->cred, fh,
                                              args->access & NFS3_ACCESS_KNOWN, &granted, &attr),
                            NFSPROC3_ACCESS, &st)))
        return false;
    nfs3_access_res(req, args, resp, st, granted, &attr);
    return true;
}

/* FSSTAT: space and file counts of the file system (RFC 1813 3.3.18). */
void nfs3_proc_fsstat(srv_req *req, void *argp, void *resp)
{
    const FSSTAT3args *args = argp;
    FSSTAT3res *res = resp;
    dbfs_fh fh;
    dbfs_attr attr;
    dbfs_fsstat_res fs;
    bool have_attr = false;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->fsroot, &fh);
    if (st == NFS3_OK) {
        st = nfs3_errno_to_stat(dbfs_getattr(req->db, fh, &attr), NFSPROC3_FSSTAT);
        have_attr = st == NFS3_OK;
    }
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(dbfs_fsstat(req->db, &fs), NFSPROC3_FSSTAT);
    res->status = st;
    if (st != NFS3_OK) {
        if (have_attr)
            nfs3_post_op_attr_of(req->srv->info, &attr, &res->FSSTAT3res_u.resfail.obj_attributes);
        return;
    }
    FSSTAT3resok *ok = &res->FSSTAT3res_u.resok;
    nfs3_post_op_attr_of(req->srv->info, &attr, &ok->obj_attributes);
    ok->tbytes = fs.tbytes;
    ok->fbytes = fs.fbytes;
    ok->abytes = fs.abytes;
    ok->tfiles = fs.tfiles;
    ok->ffiles = fs.ffiles;
    ok->afiles = fs.afiles;
    ok->invarsec = 0; /* the figures may change at any moment */
}

/*
 * FSINFO: what the server can do (RFC 1813 3.3.19). rtpref = rtmax: every
 * READ or WRITE costs at least one database round trip, so fewer, larger
 * transfers are faster. rtmult/wtmult is the storage chunk size: transfers
 * aligned to it never read-modify-write a chunk.
 */
void nfs3_proc_fsinfo(srv_req *req, void *argp, void *resp)
{
    const FSINFO3args *args = argp;
    FSINFO3res *res = resp;
    dbfs_fh fh;
    dbfs_attr attr;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->fsroot, &fh);
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(dbfs_getattr(req->db, fh, &attr), NFSPROC3_FSINFO);
    res->status = st;
    if (st != NFS3_OK)
        return;
    FSINFO3resok *ok = &res->FSINFO3res_u.resok;
    uint32_t mult = req->srv->info->chunk_size ? req->srv->info->chunk_size : 4096;
    nfs3_post_op_attr_of(req->srv->info, &attr, &ok->obj_attributes);
    ok->rtmax = SRV_IO_MAX;
    ok->rtpref = SRV_IO_MAX;
    ok->rtmult = mult;
    ok->wtmax = SRV_IO_MAX;
    ok->wtpref = SRV_IO_MAX;
    ok->wtmult = mult;
    ok->dtpref = NFS3_DTPREF;
    ok->maxfilesize = DBFS_MAX_FILESIZE;
    ok->time_delta.seconds = 0;
    ok->time_delta.nseconds = 1;
    ok->properties = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME;
}

/* PATHCONF: POSIX limits of the file system (RFC 1813 3.3.20). */
void nfs3_proc_pathconf(srv_req *req, void *argp, void *resp)
{
    const PATHCONF3args *args = argp;
    PATHCONF3res *res = resp;
    dbfs_fh fh;
    dbfs_attr attr;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->object, &fh);
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(dbfs_getattr(req->db, fh, &attr), NFSPROC3_PATHCONF);
    res->status = st;
    if (st != NFS3_OK)
        return;
    PATHCONF3resok *ok = &res->PATHCONF3res_u.resok;
    nfs3_post_op_attr_of(req->srv->info, &attr, &ok->obj_attributes);
    ok->linkmax = NFS3_LINK_MAX;
    ok->name_max = DBFS_NAME_MAX;
    ok->no_trunc = TRUE;
    ok->chown_restricted = TRUE;
    ok->case_insensitive = FALSE;
    ok->case_preserving = TRUE;
}
