/*
 * nfs3_io.c -- NFSv3 data procedures: READ, WRITE, COMMIT (RFC 1813
 * sections 3.3.6, 3.3.7, 3.3.21).
 *
 * NOTES
 *   Counts and offsets, as Linux nfsd treats them:
 *   - READ: a count over SRV_IO_MAX (FSINFO rtmax) is clamped -- a short
 *     read is legal and the client asks for the rest. An offset beyond the
 *     largest file size reads nothing (count 0, eof), and a range that
 *     would pass it is cut there.
 *   - WRITE: a count that differs from the length of the data is
 *     NFS3ERR_INVAL (Linux rejects such a call at decoding); a count over
 *     SRV_IO_MAX (FSINFO wtmax) is clamped and the reply says how much was
 *     written, which the client must accept (3.3.7: count may be less than
 *     asked). A range ending beyond 2^63-1 is NFS3ERR_FBIG.
 *   - COMMIT: an offset beyond 2^63-1 is NFS3ERR_INVAL.
 *
 *   The write verifier is srv->write_verf in every WRITE and COMMIT reply;
 *   it changes only when the server restarts (srv.h).
 *
 *   Memory: a READ's bytes go straight into the reply buffer
 *   (srv_req_payload), a WRITE's data is read where it lies in the call
 *   record (nfs3_args_write): neither is copied, allocated or zeroed here.
 */
#include <string.h>

#include "nfs3_proc.h"

/* READ and WRITE data are bounded in rpc/nfs3.x by the size we serve. */
_Static_assert(SRV_IO_MAX == PGNFS_DATA_DECODE_MAX, "rpc/nfs3.x data bound != SRV_IO_MAX");

static stable_how nfs3_stable_out(dbfs_stable s)
{
    switch (s) {
    case DBFS_UNSTABLE:
        return UNSTABLE;
    case DBFS_DATA_SYNC:
        return DATA_SYNC;
    case DBFS_FILE_SYNC:
        return FILE_SYNC;
    }
    return FILE_SYNC;
}

/* A READ's range: the offset and count asked, clamped as the NOTES say. */
static void nfs3_read_range(const READ3args *args, uint64_t *off, uint32_t *count)
{
    *off = args->offset > (uint64_t)DBFS_MAX_FILESIZE ? (uint64_t)DBFS_MAX_FILESIZE : args->offset;
    *count = args->count > SRV_IO_MAX ? SRV_IO_MAX : args->count;
    if (*count > (uint64_t)DBFS_MAX_FILESIZE - *off)
        *count = (uint32_t)((uint64_t)DBFS_MAX_FILESIZE - *off);
}

/* What a READ answers besides its status: the file's attributes and
 * nread bytes of buf (the payload), eof. */
typedef struct {
    dbfs_attr_opt attr;
    uint32_t nread;
    bool eof;
    char *buf;
} nfs3_read_out;

/* The READ reply for status st. */
static void nfs3_read_res(srv_req *req, READ3res *res, nfsstat3 st, const nfs3_read_out *o)
{
    res->status = st;
    if (st != NFS3_OK) {
        nfs3_post_op_attr(req->srv->info, &o->attr, &res->READ3res_u.resfail.file_attributes);
        return;
    }
    READ3resok *ok = &res->READ3res_u.resok;
    nfs3_post_op_attr(req->srv->info, &o->attr, &ok->file_attributes);
    ok->count = o->nread;
    ok->eof = o->eof;
    ok->data.data_len = o->nread;
    ok->data.data_val = o->buf;
}

/* READ: bytes of a file (RFC 1813 3.3.6). */
void nfs3_proc_read(srv_req *req, void *argp, void *resp)
{
    const READ3args *args = argp;
    nfs3_read_out o = {0};
    uint64_t off;
    uint32_t count;
    dbfs_fh fh;
    nfsstat3 st;

    nfs3_read_range(args, &off, &count);
    st = nfs3_fh_in(req, &args->file, &fh);
    if (st == NFS3_OK) {
        o.buf = srv_req_payload(req, count); /* the reply is built around it */
        st = nfs3_errno_to_stat(
            dbfs_read(req->db, &req->cred, fh, off, count, o.buf, &o.nread, &o.eof, &o.attr),
            NFSPROC3_READ);
    }
    nfs3_read_res(req, resp, st, &o);
}

/* READ's quick form: a range of at most NFS3_QUICK_READ_MAX bytes the
 * caches hold; a larger one goes to a worker, so that no copy on the
 * event thread holds up the calls behind it for long. */
bool nfs3_quick_read(srv_req *req, void *argp, void *resp)
{
    const READ3args *args = argp;
    nfs3_read_out o = {0};
    uint64_t off;
    uint32_t count;
    dbfs_fh fh;
    nfsstat3 st;

    nfs3_read_range(args, &off, &count);
    if (count > NFS3_QUICK_READ_MAX || !nfs3_quick_fh_in(req, &args->file, &fh, &st))
        return false;
    if (st == NFS3_OK) {
        o.buf = srv_req_payload(req, count);
        if (!nfs3_quick_status(dbfs_read_quick(req->srv->fs, &req->cred, fh,
                                               req->client && req->client->async, off, count, o.buf,
                                               &o.nread, &o.eof, &o.attr),
                               NFSPROC3_READ, &st))
            return false;
    }
    nfs3_read_res(req, resp, st, &o);
    return true;
}

/* WRITE: bytes into a file, at the stability asked or better (RFC 1813 3.3.7). */
void nfs3_proc_write(srv_req *req, void *argp, void *resp)
{
    const WRITE3args *args = argp;
    WRITE3res *res = resp;
    uint64_t off = args->offset;
    uint32_t count = args->count > SRV_IO_MAX ? SRV_IO_MAX : args->count;
    dbfs_stable how = DBFS_FILE_SYNC, committed = DBFS_FILE_SYNC;
    dbfs_fh fh;
    dbfs_wcc wcc = {0};
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->file, &fh);
    if (st == NFS3_OK && args->data.data_len != args->count)
        st = NFS3ERR_INVAL;
    if (st == NFS3_OK) {
        switch (args->stable) {
        case UNSTABLE:
            how = DBFS_UNSTABLE;
            break;
        case DATA_SYNC:
            how = DBFS_DATA_SYNC;
            break;
        case FILE_SYNC:
            how = DBFS_FILE_SYNC;
            break;
        default:
            st = NFS3ERR_INVAL;
            break;
        }
    }
    if (st == NFS3_OK && nfs3_read_only(req))
        st = NFS3ERR_ROFS;
    if (st == NFS3_OK &&
        (off > (uint64_t)DBFS_MAX_FILESIZE || count > (uint64_t)DBFS_MAX_FILESIZE - off))
        st = NFS3ERR_FBIG;
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(dbfs_write(req->db, &req->cred, fh, off, args->data.data_val, count,
                                           how, &committed, &wcc),
                                NFSPROC3_WRITE);
    res->status = st;
    if (st != NFS3_OK) {
        nfs3_wcc(req->srv->info, &wcc, &res->WRITE3res_u.resfail.file_wcc);
        return;
    }
    WRITE3resok *ok = &res->WRITE3res_u.resok;
    nfs3_wcc(req->srv->info, &wcc, &ok->file_wcc);
    ok->count = count;
    ok->committed = nfs3_stable_out(committed);
    memcpy(ok->verf, req->srv->write_verf, NFS3_WRITEVERFSIZE);
}

/* COMMIT: make earlier UNSTABLE writes durable (RFC 1813 3.3.21). */
void nfs3_proc_commit(srv_req *req, void *argp, void *resp)
{
    const COMMIT3args *args = argp;
    COMMIT3res *res = resp;
    dbfs_fh fh;
    dbfs_wcc wcc = {0};
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->file, &fh);
    if (st == NFS3_OK && args->offset > (uint64_t)DBFS_MAX_FILESIZE)
        st = NFS3ERR_INVAL;
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(dbfs_commit(req->db, fh, args->offset, args->count, &wcc),
                                NFSPROC3_COMMIT);
    res->status = st;
    if (st != NFS3_OK) {
        nfs3_wcc(req->srv->info, &wcc, &res->COMMIT3res_u.resfail.file_wcc);
        return;
    }
    nfs3_wcc(req->srv->info, &wcc, &res->COMMIT3res_u.resok.file_wcc);
    memcpy(res->COMMIT3res_u.resok.verf, req->srv->write_verf, NFS3_WRITEVERFSIZE);
}
