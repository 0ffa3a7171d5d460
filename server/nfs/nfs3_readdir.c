/*
 * nfs3_readdir.c -- NFSv3 directory listing: READDIR and READDIRPLUS
 * (RFC 1813 sections 3.3.16, 3.3.17).
 *
 * NOTES
 *   Size accounting, exactly as the RFC asks: the whole reply body as XDR
 *   (status, directory attributes, cookie verifier, every entry with its
 *   list marker, the list end and eof) fits in `count` (READDIR) or
 *   `maxcount` (READDIRPLUS) bytes; for READDIRPLUS the directory
 *   information of the entries -- fileid, name and cookie of each, without
 *   attributes and handles -- also fits in `dircount`. Both are first
 *   clamped to SRV_IO_MAX, the largest reply we send. If not even one entry
 *   fits, the answer is NFS3ERR_TOOSMALL.
 *
 *   Fetching: dbfs_readdir is asked for as many entries as could fit if
 *   every name were 1 to 4 bytes long (at most NFS3_READDIR_MAX, since
 *   rpcgen's XDR code recurses once per entry), then as many as fit are
 *   sent. The client resumes after the last cookie sent; eof is set only
 *   when dbfs reached the end and every entry fetched was sent.
 *
 *   Cookies are dbfs's stable positions and never go stale, so the cookie
 *   verifier is a constant of the server (srv->cookie_verf). A call that
 *   continues a listing (cookie != 0) must bring zeros or that verifier,
 *   else NFS3ERR_BAD_COOKIE; a call from the start may bring anything.
 *
 *   READDIRPLUS sends attributes and a handle with every entry that has
 *   attributes, except "..": its handle could lead out of the export (see
 *   LOOKUP in nfs3_dir.c), so the client looks it up instead.
 */
#include <stdlib.h>
#include <string.h>

#include "nfs3_proc.h"

/* Most entries one reply carries (bounds rpcgen's recursion). */
#define NFS3_READDIR_MAX 8192u

/* XDR sizes (RFC 1813 section 2.5; 4-byte units). */
#define XDR_BOOL_SIZE   4u
#define XDR_HYPER_SIZE  8u
#define NFS3_FATTR_SIZE 84u /* 5 ints + 8 hypers (times are 2 ints each) */

static size_t xdr_opaque_size(size_t len)
{
    return 4 + ((len + 3) & ~(size_t)3);
}

static size_t nfs3_post_op_attr_size(bool present)
{
    return XDR_BOOL_SIZE + (present ? NFS3_FATTR_SIZE : 0);
}

static size_t nfs3_post_op_fh_size(bool present)
{
    return XDR_BOOL_SIZE + (present ? xdr_opaque_size(FH_SIZE) : 0);
}

/* Reply bytes besides the entries: status, dir attributes, verifier, list end, eof. */
static size_t nfs3_readdir_fixed_size(bool dir_attr)
{
    return 4 + nfs3_post_op_attr_size(dir_attr) + NFS3_COOKIEVERFSIZE + XDR_BOOL_SIZE + 4;
}

/* fileid, name and cookie of an entry (what dircount counts). */
static size_t nfs3_entry_dir_size(size_t namelen)
{
    return XDR_HYPER_SIZE + xdr_opaque_size(namelen) + XDR_HYPER_SIZE;
}

/* Smallest entry: a name of 1 to 4 bytes. */
#define NFS3_ENTRY_MIN (XDR_BOOL_SIZE + XDR_HYPER_SIZE + 8u + XDR_HYPER_SIZE)

static bool nfs3_cookieverf_ok(const srv_req *req, cookie3 cookie,
                               const char verf[NFS3_COOKIEVERFSIZE])
{
    static const char zero[NFS3_COOKIEVERFSIZE];

    return cookie == 0 || memcmp(verf, zero, sizeof zero) == 0 ||
           memcmp(verf, req->srv->cookie_verf, NFS3_COOKIEVERFSIZE) == 0;
}

/* Append a copy of e to the entries dbfs returned (as dbfs_dirents_free
 * frees them); without memory the entry is left out, and the listing
 * ends without it. */
static void nfs3_readdir_append(dbfs_dirent **ents, size_t *n, const dbfs_dirent *e)
{
    dbfs_dirent *more = realloc(*ents, (*n + 1) * sizeof **ents);
    char *name = strdup(e->name);

    if (more)
        *ents = more;
    if (!more || !name) {
        free(name);
        return;
    }
    more[*n] = *e;
    more[*n].name = name;
    (*n)++;
}

/* Does a READDIRPLUS entry carry attributes and a handle? */
static bool nfs3_entry_plus(const dbfs_dirent *e)
{
    return e->has_attr && strcmp(e->name, "..") != 0;
}

/* READDIR: names in a directory, from a cookie on (RFC 1813 3.3.16). */
void nfs3_proc_readdir(srv_req *req, void *argp, void *resp)
{
    const READDIR3args *args = argp;
    READDIR3res *res = resp;
    const size_t count = args->count > SRV_IO_MAX ? SRV_IO_MAX : args->count;
    const size_t fixed = nfs3_readdir_fixed_size(true);
    dbfs_fh dir;
    dbfs_attr_opt dir_attr = {0};
    dbfs_dirent *ents = NULL;
    size_t n = 0, sent = 0;
    bool eof = false;
    uint32_t want = 1;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->dir, &dir);
    if (st == NFS3_OK && !nfs3_cookieverf_ok(req, args->cookie, args->cookieverf))
        st = NFS3ERR_BAD_COOKIE;
    if (count > fixed) {
        size_t fit = (count - fixed) / NFS3_ENTRY_MIN;
        want = fit > NFS3_READDIR_MAX ? NFS3_READDIR_MAX : fit < 1 ? 1 : (uint32_t)fit;
    }
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(dbfs_readdir(req->db, &req->cred, dir, args->cookie, want, false,
                                             &ents, &n, &eof, &dir_attr),
                                NFSPROC3_READDIR);

    READDIR3resok *ok = &res->READDIR3res_u.resok;
    entry3 *out = srv_req_alloc(req, (n + 1) * sizeof *out);
    size_t used = fixed;
    dbfs_dirent snap;

    /* .snapshots after the last entry ([snapshot] visible, nfs3_snap.c). */
    if (st == NFS3_OK && eof && nfs3_snap_listed(req, dir, args->cookie, false, &snap))
        nfs3_readdir_append(&ents, &n, &snap);
    for (; st == NFS3_OK && sent < n; sent++) {
        const dbfs_dirent *e = &ents[sent];
        size_t size = XDR_BOOL_SIZE + nfs3_entry_dir_size(strlen(e->name));
        if (used + size > count)
            break;
        used += size;
        out[sent].fileid = e->ino;
        nfs3_name_out(req, e->name, &out[sent].name);
        out[sent].cookie = e->cookie;
        out[sent].nextentry = NULL;
        if (sent > 0)
            out[sent - 1].nextentry = &out[sent];
    }
    if (st == NFS3_OK && (fixed > count || (sent == 0 && n > 0)))
        st = NFS3ERR_TOOSMALL;
    dbfs_dirents_free(ents, n);

    res->status = st;
    if (st != NFS3_OK) {
        nfs3_post_op_attr(req->srv->info, &dir_attr, &res->READDIR3res_u.resfail.dir_attributes);
        return;
    }
    nfs3_post_op_attr(req->srv->info, &dir_attr, &ok->dir_attributes);
    memcpy(ok->cookieverf, req->srv->cookie_verf, NFS3_COOKIEVERFSIZE);
    ok->reply.entries = sent ? out : NULL;
    ok->reply.eof = eof && sent == n;
}

/* READDIRPLUS: names with attributes and handles (RFC 1813 3.3.17). */
void nfs3_proc_readdirplus(srv_req *req, void *argp, void *resp)
{
    const READDIRPLUS3args *args = argp;
    READDIRPLUS3res *res = resp;
    const dbfs_info *info = req->srv->info;
    const size_t maxcount = args->maxcount > SRV_IO_MAX ? SRV_IO_MAX : args->maxcount;
    const size_t dircount = args->dircount > SRV_IO_MAX ? SRV_IO_MAX : args->dircount;
    const size_t fixed = nfs3_readdir_fixed_size(true);
    const size_t plus_min =
        NFS3_ENTRY_MIN + nfs3_post_op_attr_size(true) + nfs3_post_op_fh_size(true);
    dbfs_fh dir;
    dbfs_attr_opt dir_attr = {0};
    dbfs_dirent *ents = NULL;
    size_t n = 0, sent = 0;
    bool eof = false;
    uint32_t want = 1;
    nfsstat3 st;

    st = nfs3_fh_in(req, &args->dir, &dir);
    if (st == NFS3_OK && !nfs3_cookieverf_ok(req, args->cookie, args->cookieverf))
        st = NFS3ERR_BAD_COOKIE;
    if (maxcount > fixed) {
        size_t fit = (maxcount - fixed) / plus_min;
        size_t dfit = dircount / nfs3_entry_dir_size(1);
        if (dfit < fit)
            fit = dfit;
        want = fit > NFS3_READDIR_MAX ? NFS3_READDIR_MAX : fit < 1 ? 1 : (uint32_t)fit;
    }
    if (st == NFS3_OK)
        st = nfs3_errno_to_stat(dbfs_readdir(req->db, &req->cred, dir, args->cookie, want, true,
                                             &ents, &n, &eof, &dir_attr),
                                NFSPROC3_READDIRPLUS);

    READDIRPLUS3resok *ok = &res->READDIRPLUS3res_u.resok;
    entryplus3 *out = srv_req_alloc(req, (n + 1) * sizeof *out);
    size_t used = fixed, dused = 0;
    dbfs_dirent snap;

    /* .snapshots after the last entry ([snapshot] visible, nfs3_snap.c). */
    if (st == NFS3_OK && eof && nfs3_snap_listed(req, dir, args->cookie, true, &snap))
        nfs3_readdir_append(&ents, &n, &snap);
    for (; st == NFS3_OK && sent < n; sent++) {
        const dbfs_dirent *e = &ents[sent];
        bool plus = nfs3_entry_plus(e);
        size_t dsize = nfs3_entry_dir_size(strlen(e->name));
        size_t size =
            XDR_BOOL_SIZE + dsize + nfs3_post_op_attr_size(plus) + nfs3_post_op_fh_size(plus);
        if (used + size > maxcount || dused + dsize > dircount)
            break;
        used += size;
        dused += dsize;
        entryplus3 *o = &out[sent];
        o->fileid = e->ino;
        nfs3_name_out(req, e->name, &o->name);
        o->cookie = e->cookie;
        o->name_attributes.attributes_follow = FALSE;
        o->name_handle.handle_follows = FALSE;
        if (plus) {
            nfs3_post_op_attr_of(info, &e->attr, &o->name_attributes);
            nfs3_post_op_fh(req,
                            (dbfs_fh){.ino = e->attr.ino, .gen = e->attr.gen, .snap = e->attr.snap},
                            &o->name_handle);
        }
        o->nextentry = NULL;
        if (sent > 0)
            out[sent - 1].nextentry = o;
    }
    if (st == NFS3_OK && (fixed > maxcount || (sent == 0 && n > 0)))
        st = NFS3ERR_TOOSMALL;
    dbfs_dirents_free(ents, n);

    res->status = st;
    if (st != NFS3_OK) {
        nfs3_post_op_attr(info, &dir_attr, &res->READDIRPLUS3res_u.resfail.dir_attributes);
        return;
    }
    nfs3_post_op_attr(info, &dir_attr, &ok->dir_attributes);
    memcpy(ok->cookieverf, req->srv->cookie_verf, NFS3_COOKIEVERFSIZE);
    ok->reply.entries = sent ? out : NULL;
    ok->reply.eof = eof && sent == n;
}
