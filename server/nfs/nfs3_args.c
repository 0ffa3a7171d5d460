/*
 * nfs3_args.c -- the argument decoders of the NFSv3 procedures that carry
 * names or paths: LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR,
 * RENAME and LINK (RFC 1813 sections 3.3.3, 3.3.8 - 3.3.15). Each runs
 * rpcgen's routine for the procedure's arguments, then checks every name
 * and path it decoded; a call that fails is GARBAGE_ARGS from dispatch and
 * never reaches its handler.
 *
 * NOTES
 *   The checks are those of Linux nfsd's decoder (fs/nfsd/nfs3xdr.c,
 *   svcxdr_decode_filename3): a filename3 holds at least one byte and
 *   neither a NUL nor a '/'. A SYMLINK target (nfspath3) holds no NUL, as
 *   Linux nfsd's decoder required up to 4.16 (later ones answer
 *   NFS3ERR_INVAL from the procedure instead); an empty target is the
 *   handler's NFS3ERR_INVAL, as in nfsd. Lengths are not judged here:
 *   names of 256 to PGNFS_NAME_DECODE_MAX bytes reach the handler, which
 *   answers NFS3ERR_NAMETOOLONG (rpc/nfs3.x).
 *
 *   Why here and not in the handlers: names go to dbfs as NUL-terminated
 *   strings, so a name with a NUL inside would act on the name before it
 *   ("important\0.bak" on "important"). Refusing such a call while
 *   decoding keeps every handler from having to know.
 *
 *   Each routine is also what dispatch frees the arguments with
 *   (XDR_FREE): every operation goes to rpcgen's routine, and the checks
 *   apply only to what XDR_DECODE produced.
 *
 *   WRITE (RFC 1813 3.3.7) is here for its data: rpcgen's xdr_bytes would
 *   allocate a buffer of the data's size and copy the data into it;
 *   nfs3_args_write points data_val at the data inside the call record
 *   instead (XDR_INLINE of the memory stream dispatch decodes from; the
 *   record outlives the call), and XDR_FREE leaves it alone.
 */
#include <string.h>

#include "nfs3_proc.h"

bool nfs3_filename_ok(const filename3 *n)
{
    return n->filename3_len > 0 && memchr(n->filename3_val, '\0', n->filename3_len) == NULL &&
           memchr(n->filename3_val, '/', n->filename3_len) == NULL;
}

bool nfs3_path_ok(const nfspath3 *p)
{
    return p->nfspath3_len == 0 || memchr(p->nfspath3_val, '\0', p->nfspath3_len) == NULL;
}

/* rpcgen's result, and for a decode the name checks. */
static bool_t nfs3_args_names(XDR *x, bool_t decoded, const filename3 *a, const filename3 *b)
{
    if (!decoded || x->x_op != XDR_DECODE)
        return decoded;
    return nfs3_filename_ok(a) && (!b || nfs3_filename_ok(b));
}

bool_t nfs3_args_lookup(XDR *x, LOOKUP3args *a)
{
    return nfs3_args_names(x, xdr_LOOKUP3args(x, a), &a->what.name, NULL);
}

bool_t nfs3_args_create(XDR *x, CREATE3args *a)
{
    return nfs3_args_names(x, xdr_CREATE3args(x, a), &a->where.name, NULL);
}

bool_t nfs3_args_mkdir(XDR *x, MKDIR3args *a)
{
    return nfs3_args_names(x, xdr_MKDIR3args(x, a), &a->where.name, NULL);
}

bool_t nfs3_args_symlink(XDR *x, SYMLINK3args *a)
{
    if (!nfs3_args_names(x, xdr_SYMLINK3args(x, a), &a->where.name, NULL))
        return FALSE;
    return x->x_op != XDR_DECODE || nfs3_path_ok(&a->symlink.symlink_data);
}

bool_t nfs3_args_mknod(XDR *x, MKNOD3args *a)
{
    return nfs3_args_names(x, xdr_MKNOD3args(x, a), &a->where.name, NULL);
}

bool_t nfs3_args_remove(XDR *x, REMOVE3args *a)
{
    return nfs3_args_names(x, xdr_REMOVE3args(x, a), &a->object.name, NULL);
}

bool_t nfs3_args_rmdir(XDR *x, RMDIR3args *a)
{
    return nfs3_args_names(x, xdr_RMDIR3args(x, a), &a->object.name, NULL);
}

bool_t nfs3_args_rename(XDR *x, RENAME3args *a)
{
    return nfs3_args_names(x, xdr_RENAME3args(x, a), &a->from.name, &a->to.name);
}

bool_t nfs3_args_link(XDR *x, LINK3args *a)
{
    return nfs3_args_names(x, xdr_LINK3args(x, a), &a->link.name, NULL);
}

bool_t nfs3_args_write(XDR *x, WRITE3args *a)
{
    u_int len;
    int32_t *p;

    if (!xdr_nfs_fh3(x, &a->file))
        return FALSE;
    if (x->x_op == XDR_FREE) {
        /* data_val points into the record: not ours to free. */
        a->data.data_val = NULL;
        a->data.data_len = 0;
        return TRUE;
    }
    if (x->x_op != XDR_DECODE)
        return xdr_WRITE3args(x, a); /* encoding (tests): rpcgen's, whole */
    if (!xdr_offset3(x, &a->offset) || !xdr_count3(x, &a->count) ||
        !xdr_stable_how(x, &a->stable) || !xdr_u_int(x, &len) || len > PGNFS_DATA_DECODE_MAX)
        return FALSE;
    a->data.data_len = len;
    a->data.data_val = NULL;
    if (len == 0)
        return TRUE;
    /* The data and its padding to a multiple of 4, in place. */
    p = XDR_INLINE(x, (len + BYTES_PER_XDR_UNIT - 1) / BYTES_PER_XDR_UNIT * BYTES_PER_XDR_UNIT);
    if (!p)
        return FALSE;
    a->data.data_val = (char *)p;
    return TRUE;
}
