/*
 * fuzz_seeds.c -- the seed corpus of the dispatch fuzzer (fuzz_seeds.h):
 * every NFSv3 and MOUNTv3 procedure's arguments encoded with the rpcgen
 * routines (so the seeds are exactly what a conforming client sends), each
 * behind an RPC call header with an AUTH_SYS credential for root; every
 * portmapper procedure (PORTMAP v2, rpcbind v3/v4) as clients send them,
 * with AUTH_NONE; every NLM and NSM procedure (fuzz_seeds_nlm.c); and a handful of records for the
 * RPC-level replies (wrong RPC version, unknown program, version and procedure, AUTH_NONE, a long
 * credential).
 *
 * NOTES
 *   A record is encoded into a buffer fuzz_seed_emit_full allocates and
 *   frees; the callback must copy what it keeps.
 */
#include "fuzz_seeds.h"
#include "fuzz_seeds_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>
#include <rpc/rpc.h>

#include "mount3.h"
#include "nfs3.h"
#include "pmap.h"

#define FUZZ_SEED_MAX (96u * 1024u)
#define FUZZ_XID      0x5eed0000u

/* The header of a call: AUTH_SYS root (machine "fuzz", no groups), or
 * AUTH_NONE when auth_sys is false. */
static void fuzz_call_header(XDR *x, uint32_t xid, uint32_t rpcvers, uint32_t prog, uint32_t vers,
                             uint32_t proc, bool auth_sys, unsigned ngroups)
{
    uint32_t words[] = {xid, 0 /* CALL */, rpcvers, prog, vers, proc};

    for (size_t i = 0; i < G_N_ELEMENTS(words); i++)
        g_assert(xdr_u_int(x, &words[i]));
    uint32_t flavor = auth_sys ? AUTH_SYS : AUTH_NONE;
    g_assert(xdr_u_int(x, &flavor));
    if (auth_sys) {
        unsigned char body[512];
        XDR b;
        uint32_t stamp = 1, uid = 0, gid = 0, n = ngroups;
        char *machine = "fuzz";
        xdrmem_create(&b, (char *)body, sizeof body, XDR_ENCODE);
        g_assert(xdr_u_int(&b, &stamp) && xdr_string(&b, &machine, 255) && xdr_u_int(&b, &uid) &&
                 xdr_u_int(&b, &gid) && xdr_u_int(&b, &n));
        for (uint32_t i = 0; i < ngroups; i++) {
            uint32_t g = 100 + i;
            g_assert(xdr_u_int(&b, &g));
        }
        u_int blen = xdr_getpos(&b);
        xdr_destroy(&b);
        char *bp = (char *)body;
        g_assert(xdr_bytes(x, &bp, &blen, sizeof body));
    } else {
        uint32_t zero = 0;
        g_assert(xdr_u_int(x, &zero));
    }
    uint32_t vflavor = AUTH_NONE, vlen = 0;
    g_assert(xdr_u_int(x, &vflavor) && xdr_u_int(x, &vlen));
}

/* fuzz_seed_emit_full -- see fuzz_seeds_int.h. */
void fuzz_seed_emit_full(fuzz_seed_sink *s, const char *name, uint32_t rpcvers, uint32_t prog,
                         uint32_t vers, uint32_t proc, bool auth_sys, unsigned ngroups,
                         xdrproc_t xdr_args, void *args)
{
    unsigned char *buf = g_malloc(FUZZ_SEED_MAX);
    XDR x;

    xdrmem_create(&x, (char *)buf, FUZZ_SEED_MAX, XDR_ENCODE);
    fuzz_call_header(&x, FUZZ_XID + s->count, rpcvers, prog, vers, proc, auth_sys, ngroups);
    if (xdr_args && !((bool_t(*)(XDR *, void *))xdr_args)(&x, args))
        g_error("fuzz seeds: cannot encode the arguments of %s", name);
    size_t len = xdr_getpos(&x);
    xdr_destroy(&x);
    s->fn(name, buf, len, s->user);
    s->count++;
    g_free(buf);
}

static void fuzz_seed_emit(fuzz_seed_sink *s, const char *name, uint32_t prog, uint32_t proc,
                           xdrproc_t xdr_args, void *args)
{
    fuzz_seed_emit_full(s, name, 2, prog, 3, proc, true, 0, xdr_args, args);
}

static nfs_fh3 fuzz_fh3(const fuzz_fh *fh)
{
    nfs_fh3 out;

    out.data.data_len = fh->len;
    out.data.data_val = (char *)fh->data;
    return out;
}

/* A name of len bytes at p (it may hold any byte: the bad-name seeds). */
static filename3 fuzz_name_n(const char *p, size_t len)
{
    return (filename3){.filename3_len = (u_int)len, .filename3_val = (char *)p};
}

static filename3 fuzz_name(const char *s)
{
    return fuzz_name_n(s, strlen(s));
}

static nfspath3 fuzz_path_n(const char *p, size_t len)
{
    return (nfspath3){.nfspath3_len = (u_int)len, .nfspath3_val = (char *)p};
}

static dirpath fuzz_dirpath_n(const char *p, size_t len)
{
    return (dirpath){.dirpath_len = (u_int)len, .dirpath_val = (char *)p};
}

/* sattr3 setting mode (and, with all, every other field too). */
static sattr3 fuzz_sattr(uint32_t mode, bool all)
{
    sattr3 sa;

    memset(&sa, 0, sizeof sa);
    sa.mode.set_it = TRUE;
    sa.mode.set_mode3_u.mode = mode;
    if (all) {
        sa.uid.set_it = TRUE;
        sa.uid.set_uid3_u.uid = 1000;
        sa.gid.set_it = TRUE;
        sa.gid.set_gid3_u.gid = 1000;
        sa.size.set_it = TRUE;
        sa.size.set_size3_u.size = 5;
        sa.atime.set_it = SET_TO_CLIENT_TIME;
        sa.atime.set_atime_u.atime.seconds = 1000000000;
        sa.mtime.set_it = SET_TO_SERVER_TIME;
    }
    return sa;
}

/*
 * Names the argument decoders refuse (server/nfs/nfs3_args.c): a NUL
 * inside (the name before it is a real file), a '/', empty; a symbolic
 * link target with a NUL; and "." where a procedure refuses it.
 */
static void fuzz_seeds_bad_names(fuzz_seed_sink *s, const fuzz_handles *h)
{
    static const char nul_file[] = "fz_file\0.bak", nul_dir[] = "fz_dir\0x";
    static const char slash[] = "fz_dir/fz_file", target[] = "abc\0def";

    LOOKUP3args lk = {
        .what = {.dir = fuzz_fh3(&h->root), .name = fuzz_name_n(nul_file, sizeof nul_file - 1)}};
    fuzz_seed_emit(s, "nfs3-03-lookup-nul", NFS_PROGRAM, NFSPROC3_LOOKUP,
                   (xdrproc_t)xdr_LOOKUP3args, &lk);
    lk.what.name = fuzz_name(slash);
    fuzz_seed_emit(s, "nfs3-03-lookup-slash", NFS_PROGRAM, NFSPROC3_LOOKUP,
                   (xdrproc_t)xdr_LOOKUP3args, &lk);
    lk.what.name = fuzz_name("");
    fuzz_seed_emit(s, "nfs3-03-lookup-empty", NFS_PROGRAM, NFSPROC3_LOOKUP,
                   (xdrproc_t)xdr_LOOKUP3args, &lk);

    CREATE3args cr = {
        .where = {.dir = fuzz_fh3(&h->root), .name = fuzz_name_n(nul_file, sizeof nul_file - 1)}};
    cr.how.mode = GUARDED;
    cr.how.createhow3_u.obj_attributes = fuzz_sattr(0644, false);
    fuzz_seed_emit(s, "nfs3-08-create-nul", NFS_PROGRAM, NFSPROC3_CREATE,
                   (xdrproc_t)xdr_CREATE3args, &cr);

    MKDIR3args mk = {.where = {.dir = fuzz_fh3(&h->root), .name = fuzz_name(slash)},
                     .attributes = fuzz_sattr(0755, false)};
    fuzz_seed_emit(s, "nfs3-09-mkdir-slash", NFS_PROGRAM, NFSPROC3_MKDIR, (xdrproc_t)xdr_MKDIR3args,
                   &mk);

    SYMLINK3args sl = {.where = {.dir = fuzz_fh3(&h->dir), .name = fuzz_name("fz_sl")}};
    sl.symlink.symlink_attributes = fuzz_sattr(0777, false);
    sl.symlink.symlink_data = fuzz_path_n(target, sizeof target - 1);
    fuzz_seed_emit(s, "nfs3-10-symlink-target-nul", NFS_PROGRAM, NFSPROC3_SYMLINK,
                   (xdrproc_t)xdr_SYMLINK3args, &sl);

    MKNOD3args mn = {.where = {.dir = fuzz_fh3(&h->dir), .name = fuzz_name(".")}};
    mn.what.type = NF3FIFO;
    mn.what.mknoddata3_u.pipe_attributes = fuzz_sattr(0600, false);
    fuzz_seed_emit(s, "nfs3-11-mknod-dot", NFS_PROGRAM, NFSPROC3_MKNOD, (xdrproc_t)xdr_MKNOD3args,
                   &mn);

    REMOVE3args rm = {
        .object = {.dir = fuzz_fh3(&h->root), .name = fuzz_name_n(nul_file, sizeof nul_file - 1)}};
    fuzz_seed_emit(s, "nfs3-12-remove-nul", NFS_PROGRAM, NFSPROC3_REMOVE,
                   (xdrproc_t)xdr_REMOVE3args, &rm);

    RMDIR3args rmd = {
        .object = {.dir = fuzz_fh3(&h->root), .name = fuzz_name_n(nul_dir, sizeof nul_dir - 1)}};
    fuzz_seed_emit(s, "nfs3-13-rmdir-nul", NFS_PROGRAM, NFSPROC3_RMDIR, (xdrproc_t)xdr_RMDIR3args,
                   &rmd);

    RENAME3args rn = {
        .from = {.dir = fuzz_fh3(&h->root), .name = fuzz_name("fz_link")},
        .to = {.dir = fuzz_fh3(&h->root), .name = fuzz_name_n(nul_file, sizeof nul_file - 1)}};
    fuzz_seed_emit(s, "nfs3-14-rename-to-nul", NFS_PROGRAM, NFSPROC3_RENAME,
                   (xdrproc_t)xdr_RENAME3args, &rn);
    rn.to.name = fuzz_name("..");
    fuzz_seed_emit(s, "nfs3-14-rename-to-dotdot", NFS_PROGRAM, NFSPROC3_RENAME,
                   (xdrproc_t)xdr_RENAME3args, &rn);

    LINK3args ln = {.file = fuzz_fh3(&h->file),
                    .link = {.dir = fuzz_fh3(&h->dir), .name = fuzz_name("a/b")}};
    fuzz_seed_emit(s, "nfs3-15-link-slash", NFS_PROGRAM, NFSPROC3_LINK, (xdrproc_t)xdr_LINK3args,
                   &ln);
}

static void fuzz_seeds_nfs(fuzz_seed_sink *s, const fuzz_handles *h)
{
    char namebuf[] = "fz_new", dirname[] = "fz_newdir", target[] = "fz_file";
    char file[] = "fz_file", link[] = "fz_link", dir[] = "fz_dir", renamed[] = "fz_renamed";
    unsigned char data[4096];

    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 7 + 3);

    fuzz_seed_emit(s, "nfs3-00-null", NFS_PROGRAM, NFSPROC3_NULL, NULL, NULL);

    GETATTR3args ga = {.object = fuzz_fh3(&h->file)};
    fuzz_seed_emit(s, "nfs3-01-getattr", NFS_PROGRAM, NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3args,
                   &ga);
    ga.object = fuzz_fh3(&h->root);
    fuzz_seed_emit(s, "nfs3-01-getattr-root", NFS_PROGRAM, NFSPROC3_GETATTR,
                   (xdrproc_t)xdr_GETATTR3args, &ga);

    SETATTR3args sa = {.object = fuzz_fh3(&h->file), .new_attributes = fuzz_sattr(0644, true)};
    sa.guard.check = TRUE;
    sa.guard.sattrguard3_u.obj_ctime.seconds = 1;
    fuzz_seed_emit(s, "nfs3-02-setattr-guard", NFS_PROGRAM, NFSPROC3_SETATTR,
                   (xdrproc_t)xdr_SETATTR3args, &sa);
    sa.guard.check = FALSE;
    sa.new_attributes = fuzz_sattr(06755, false);
    fuzz_seed_emit(s, "nfs3-02-setattr", NFS_PROGRAM, NFSPROC3_SETATTR, (xdrproc_t)xdr_SETATTR3args,
                   &sa);

    LOOKUP3args lk = {.what = {.dir = fuzz_fh3(&h->root), .name = fuzz_name(file)}};
    fuzz_seed_emit(s, "nfs3-03-lookup", NFS_PROGRAM, NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3args,
                   &lk);
    lk.what.name = fuzz_name("..");
    fuzz_seed_emit(s, "nfs3-03-lookup-dotdot", NFS_PROGRAM, NFSPROC3_LOOKUP,
                   (xdrproc_t)xdr_LOOKUP3args, &lk);

    ACCESS3args ac = {.object = fuzz_fh3(&h->dir), .access = 0x3f};
    fuzz_seed_emit(s, "nfs3-04-access", NFS_PROGRAM, NFSPROC3_ACCESS, (xdrproc_t)xdr_ACCESS3args,
                   &ac);

    READLINK3args rl = {.symlink = fuzz_fh3(&h->link)};
    fuzz_seed_emit(s, "nfs3-05-readlink", NFS_PROGRAM, NFSPROC3_READLINK,
                   (xdrproc_t)xdr_READLINK3args, &rl);

    READ3args rd = {.file = fuzz_fh3(&h->file), .offset = 100, .count = 8192};
    fuzz_seed_emit(s, "nfs3-06-read", NFS_PROGRAM, NFSPROC3_READ, (xdrproc_t)xdr_READ3args, &rd);

    WRITE3args wr = {.file = fuzz_fh3(&h->file), .offset = 8000, .count = sizeof data};
    wr.stable = FILE_SYNC;
    wr.data.data_len = sizeof data;
    wr.data.data_val = (char *)data;
    fuzz_seed_emit(s, "nfs3-07-write", NFS_PROGRAM, NFSPROC3_WRITE, (xdrproc_t)xdr_WRITE3args, &wr);
    wr.stable = UNSTABLE;
    wr.offset = 3;
    wr.count = wr.data.data_len = 17;
    fuzz_seed_emit(s, "nfs3-07-write-unstable", NFS_PROGRAM, NFSPROC3_WRITE,
                   (xdrproc_t)xdr_WRITE3args, &wr);

    CREATE3args cr = {.where = {.dir = fuzz_fh3(&h->dir), .name = fuzz_name(namebuf)}};
    cr.how.mode = UNCHECKED;
    cr.how.createhow3_u.obj_attributes = fuzz_sattr(0644, false);
    fuzz_seed_emit(s, "nfs3-08-create-unchecked", NFS_PROGRAM, NFSPROC3_CREATE,
                   (xdrproc_t)xdr_CREATE3args, &cr);
    cr.how.mode = GUARDED;
    cr.how.createhow3_u.obj_attributes = fuzz_sattr(0600, true);
    fuzz_seed_emit(s, "nfs3-08-create-guarded", NFS_PROGRAM, NFSPROC3_CREATE,
                   (xdrproc_t)xdr_CREATE3args, &cr);
    cr.how.mode = EXCLUSIVE;
    memcpy(cr.how.createhow3_u.verf, "verifier", 8);
    fuzz_seed_emit(s, "nfs3-08-create-exclusive", NFS_PROGRAM, NFSPROC3_CREATE,
                   (xdrproc_t)xdr_CREATE3args, &cr);

    MKDIR3args mk = {.where = {.dir = fuzz_fh3(&h->dir), .name = fuzz_name(dirname)},
                     .attributes = fuzz_sattr(0755, false)};
    fuzz_seed_emit(s, "nfs3-09-mkdir", NFS_PROGRAM, NFSPROC3_MKDIR, (xdrproc_t)xdr_MKDIR3args, &mk);

    SYMLINK3args sl = {.where = {.dir = fuzz_fh3(&h->dir), .name = fuzz_name(namebuf)}};
    sl.symlink.symlink_attributes = fuzz_sattr(0777, false);
    sl.symlink.symlink_data = fuzz_path_n(target, strlen(target));
    fuzz_seed_emit(s, "nfs3-10-symlink", NFS_PROGRAM, NFSPROC3_SYMLINK, (xdrproc_t)xdr_SYMLINK3args,
                   &sl);

    MKNOD3args mn = {.where = {.dir = fuzz_fh3(&h->dir), .name = fuzz_name(namebuf)}};
    mn.what.type = NF3CHR;
    mn.what.mknoddata3_u.device.dev_attributes = fuzz_sattr(0600, false);
    mn.what.mknoddata3_u.device.spec.specdata1 = 1;
    mn.what.mknoddata3_u.device.spec.specdata2 = 3;
    fuzz_seed_emit(s, "nfs3-11-mknod-chr", NFS_PROGRAM, NFSPROC3_MKNOD, (xdrproc_t)xdr_MKNOD3args,
                   &mn);
    mn.what.type = NF3FIFO;
    mn.what.mknoddata3_u.pipe_attributes = fuzz_sattr(0600, false);
    fuzz_seed_emit(s, "nfs3-11-mknod-fifo", NFS_PROGRAM, NFSPROC3_MKNOD, (xdrproc_t)xdr_MKNOD3args,
                   &mn);

    REMOVE3args rm = {.object = {.dir = fuzz_fh3(&h->dir), .name = fuzz_name(namebuf)}};
    fuzz_seed_emit(s, "nfs3-12-remove", NFS_PROGRAM, NFSPROC3_REMOVE, (xdrproc_t)xdr_REMOVE3args,
                   &rm);

    RMDIR3args rmd = {.object = {.dir = fuzz_fh3(&h->dir), .name = fuzz_name(dirname)}};
    fuzz_seed_emit(s, "nfs3-13-rmdir", NFS_PROGRAM, NFSPROC3_RMDIR, (xdrproc_t)xdr_RMDIR3args,
                   &rmd);

    RENAME3args rn = {.from = {.dir = fuzz_fh3(&h->root), .name = fuzz_name(link)},
                      .to = {.dir = fuzz_fh3(&h->dir), .name = fuzz_name(renamed)}};
    fuzz_seed_emit(s, "nfs3-14-rename", NFS_PROGRAM, NFSPROC3_RENAME, (xdrproc_t)xdr_RENAME3args,
                   &rn);
    rn.from.name = fuzz_name(dir);
    rn.to.dir = fuzz_fh3(&h->dir);
    rn.to.name = fuzz_name(dirname);
    fuzz_seed_emit(s, "nfs3-14-rename-into-self", NFS_PROGRAM, NFSPROC3_RENAME,
                   (xdrproc_t)xdr_RENAME3args, &rn);

    LINK3args ln = {.file = fuzz_fh3(&h->file),
                    .link = {.dir = fuzz_fh3(&h->dir), .name = fuzz_name(file)}};
    fuzz_seed_emit(s, "nfs3-15-link", NFS_PROGRAM, NFSPROC3_LINK, (xdrproc_t)xdr_LINK3args, &ln);

    fuzz_seeds_bad_names(s, h);

    READDIR3args rdd = {.dir = fuzz_fh3(&h->root), .cookie = 0, .count = 4096};
    fuzz_seed_emit(s, "nfs3-16-readdir", NFS_PROGRAM, NFSPROC3_READDIR, (xdrproc_t)xdr_READDIR3args,
                   &rdd);
    rdd.cookie = 3;
    rdd.count = 200;
    fuzz_seed_emit(s, "nfs3-16-readdir-cookie", NFS_PROGRAM, NFSPROC3_READDIR,
                   (xdrproc_t)xdr_READDIR3args, &rdd);

    READDIRPLUS3args rdp = {.dir = fuzz_fh3(&h->root), .dircount = 1024, .maxcount = 8192};
    fuzz_seed_emit(s, "nfs3-17-readdirplus", NFS_PROGRAM, NFSPROC3_READDIRPLUS,
                   (xdrproc_t)xdr_READDIRPLUS3args, &rdp);

    FSSTAT3args fs = {.fsroot = fuzz_fh3(&h->root)};
    fuzz_seed_emit(s, "nfs3-18-fsstat", NFS_PROGRAM, NFSPROC3_FSSTAT, (xdrproc_t)xdr_FSSTAT3args,
                   &fs);
    FSINFO3args fi = {.fsroot = fuzz_fh3(&h->root)};
    fuzz_seed_emit(s, "nfs3-19-fsinfo", NFS_PROGRAM, NFSPROC3_FSINFO, (xdrproc_t)xdr_FSINFO3args,
                   &fi);
    PATHCONF3args pc = {.object = fuzz_fh3(&h->file)};
    fuzz_seed_emit(s, "nfs3-20-pathconf", NFS_PROGRAM, NFSPROC3_PATHCONF,
                   (xdrproc_t)xdr_PATHCONF3args, &pc);
    COMMIT3args cm = {.file = fuzz_fh3(&h->file), .offset = 0, .count = 0};
    fuzz_seed_emit(s, "nfs3-21-commit", NFS_PROGRAM, NFSPROC3_COMMIT, (xdrproc_t)xdr_COMMIT3args,
                   &cm);
}

static void fuzz_seeds_mount(fuzz_seed_sink *s)
{
    static const char nul[] = "/fz_dir\0/../..";
    dirpath root = fuzz_dirpath_n("/", 1), dir = fuzz_dirpath_n("/fz_dir", 7);
    dirpath deep = fuzz_dirpath_n("/fz_dir/../fz_file", 18),
            bad = fuzz_dirpath_n(nul, sizeof nul - 1);

    fuzz_seed_emit(s, "mnt3-00-null", MOUNT_PROGRAM, MOUNTPROC3_NULL, NULL, NULL);
    fuzz_seed_emit(s, "mnt3-01-mnt", MOUNT_PROGRAM, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath, &root);
    fuzz_seed_emit(s, "mnt3-01-mnt-dir", MOUNT_PROGRAM, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath,
                   &dir);
    fuzz_seed_emit(s, "mnt3-01-mnt-dotdot", MOUNT_PROGRAM, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath,
                   &deep);
    fuzz_seed_emit(s, "mnt3-01-mnt-nul", MOUNT_PROGRAM, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath,
                   &bad);
    fuzz_seed_emit(s, "mnt3-02-dump", MOUNT_PROGRAM, MOUNTPROC3_DUMP, NULL, NULL);
    fuzz_seed_emit(s, "mnt3-03-umnt", MOUNT_PROGRAM, MOUNTPROC3_UMNT, (xdrproc_t)xdr_dirpath,
                   &root);
    fuzz_seed_emit(s, "mnt3-04-umntall", MOUNT_PROGRAM, MOUNTPROC3_UMNTALL, NULL, NULL);
    fuzz_seed_emit(s, "mnt3-05-export", MOUNT_PROGRAM, MOUNTPROC3_EXPORT, NULL, NULL);
}

/* The portmapper's procedures, AUTH_NONE as rpcinfo and mount.nfs send them. */
static void fuzz_seeds_pmap(fuzz_seed_sink *s)
{
    pgnfs_pmap_mapping m = {NFS_PROGRAM, 3, PGNFS_PMAP_IPPROTO_TCP, 0};
    pgnfs_rpcb q = {
        .r_prog = MOUNT_PROGRAM, .r_vers = 3, .r_netid = "tcp", .r_addr = "", .r_owner = ""};

    for (uint32_t v = PGNFS_PMAP_VERS; v <= PGNFS_RPCB_VERS4; v++)
        fuzz_seed_emit_full(s,
                            v == 2   ? "pmap2-00-null"
                            : v == 3 ? "rpcb3-00-null"
                                     : "rpcb4-00-null",
                            2, PGNFS_PMAP_PROG, v, 0, false, 0, NULL, NULL);
    fuzz_seed_emit_full(s, "pmap2-03-getport", 2, PGNFS_PMAP_PROG, PGNFS_PMAP_VERS,
                        PGNFS_PMAPPROC_GETPORT, false, 0, (xdrproc_t)xdr_pgnfs_pmap_mapping, &m);
    m.port = 4045;
    fuzz_seed_emit_full(s, "pmap2-01-set", 2, PGNFS_PMAP_PROG, PGNFS_PMAP_VERS, PGNFS_PMAPPROC_SET,
                        false, 0, (xdrproc_t)xdr_pgnfs_pmap_mapping, &m);
    fuzz_seed_emit_full(s, "pmap2-02-unset", 2, PGNFS_PMAP_PROG, PGNFS_PMAP_VERS,
                        PGNFS_PMAPPROC_UNSET, false, 0, (xdrproc_t)xdr_pgnfs_pmap_mapping, &m);
    fuzz_seed_emit_full(s, "pmap2-04-dump", 2, PGNFS_PMAP_PROG, PGNFS_PMAP_VERS,
                        PGNFS_PMAPPROC_DUMP, false, 0, NULL, NULL);
    fuzz_seed_emit_full(s, "pmap2-05-callit", 2, PGNFS_PMAP_PROG, PGNFS_PMAP_VERS,
                        PGNFS_PMAPPROC_CALLIT, false, 0, NULL, NULL);
    fuzz_seed_emit_full(s, "rpcb3-03-getaddr", 2, PGNFS_PMAP_PROG, PGNFS_RPCB_VERS,
                        PGNFS_RPCBPROC_GETADDR, false, 0, (xdrproc_t)xdr_pgnfs_rpcb, &q);
    q.r_netid = "";
    q.r_vers = 1;
    fuzz_seed_emit_full(s, "rpcb3-03-getaddr-anyvers", 2, PGNFS_PMAP_PROG, PGNFS_RPCB_VERS,
                        PGNFS_RPCBPROC_GETADDR, false, 0, (xdrproc_t)xdr_pgnfs_rpcb, &q);
    q.r_netid = "udp6";
    q.r_vers = 3;
    fuzz_seed_emit_full(s, "rpcb4-09-getversaddr", 2, PGNFS_PMAP_PROG, PGNFS_RPCB_VERS4,
                        PGNFS_RPCBPROC_GETVERSADDR, false, 0, (xdrproc_t)xdr_pgnfs_rpcb, &q);
    q.r_addr = "127.0.0.1.16.1";
    q.r_owner = "superuser";
    fuzz_seed_emit_full(s, "rpcb4-01-set", 2, PGNFS_PMAP_PROG, PGNFS_RPCB_VERS4, PGNFS_RPCBPROC_SET,
                        false, 0, (xdrproc_t)xdr_pgnfs_rpcb, &q);
    fuzz_seed_emit_full(s, "rpcb3-04-dump", 2, PGNFS_PMAP_PROG, PGNFS_RPCB_VERS,
                        PGNFS_RPCBPROC_DUMP, false, 0, NULL, NULL);
    fuzz_seed_emit_full(s, "rpcb4-06-gettime", 2, PGNFS_PMAP_PROG, PGNFS_RPCB_VERS4,
                        PGNFS_RPCBPROC_GETTIME, false, 0, NULL, NULL);
    fuzz_seed_emit_full(s, "rpcb3-09-getversaddr", 2, PGNFS_PMAP_PROG, PGNFS_RPCB_VERS,
                        PGNFS_RPCBPROC_GETVERSADDR, false, 0, (xdrproc_t)xdr_pgnfs_rpcb, &q);
    fuzz_seed_emit_full(s, "pmap5-mismatch", 2, PGNFS_PMAP_PROG, 5, 0, false, 0, NULL, NULL);
}

/* Calls the RPC layer answers itself. */
static void fuzz_seeds_rpc(fuzz_seed_sink *s, const fuzz_handles *h)
{
    GETATTR3args ga = {.object = fuzz_fh3(&h->root)};

    fuzz_seed_emit_full(s, "rpc-rpcvers3", 3, NFS_PROGRAM, 3, 0, true, 0, NULL, NULL);
    fuzz_seed_emit_full(s, "rpc-prog-unknown", 2, 100099, 4, 0, true, 0, NULL, NULL);
    fuzz_seed_emit_full(s, "rpc-nfs-v4", 2, NFS_PROGRAM, 4, 0, true, 0, NULL, NULL);
    fuzz_seed_emit_full(s, "rpc-proc-22", 2, NFS_PROGRAM, 3, 22, true, 0,
                        (xdrproc_t)xdr_GETATTR3args, &ga);
    fuzz_seed_emit_full(s, "rpc-auth-none-getattr", 2, NFS_PROGRAM, 3, NFSPROC3_GETATTR, false, 0,
                        (xdrproc_t)xdr_GETATTR3args, &ga);
    fuzz_seed_emit_full(s, "rpc-auth-16-groups", 2, NFS_PROGRAM, 3, NFSPROC3_GETATTR, true, 16,
                        (xdrproc_t)xdr_GETATTR3args, &ga);
    fuzz_seed_emit_full(s, "rpc-auth-17-groups", 2, NFS_PROGRAM, 3, NFSPROC3_GETATTR, true, 17,
                        (xdrproc_t)xdr_GETATTR3args, &ga);
}

unsigned fuzz_seeds_build(const fuzz_handles *h, fuzz_seed_fn fn, void *user)
{
    fuzz_seed_sink s = {.fn = fn, .user = user};

    fuzz_seeds_nfs(&s, h);
    fuzz_seeds_mount(&s);
    fuzz_seeds_pmap(&s);
    fuzz_seeds_nlm(&s, h);
    fuzz_seeds_rpc(&s, h);
    return s.count;
}

typedef struct {
    const char *dir;
    int err;
    unsigned written;
} fuzz_dir_sink;

static void fuzz_seed_to_file(const char *name, const void *rec, size_t len, void *user)
{
    fuzz_dir_sink *d = user;
    GError *gerr = NULL;

    if (d->err)
        return;
    char *path = g_build_filename(d->dir, name, NULL);
    if (!g_file_set_contents(path, rec, (gssize)len, &gerr)) {
        fprintf(stderr, "fuzz seeds: %s\n", gerr->message);
        g_error_free(gerr);
        d->err = -EIO;
    } else {
        d->written++;
    }
    g_free(path);
}

int fuzz_seeds_write_dir(const fuzz_handles *h, const char *dir)
{
    fuzz_dir_sink d = {.dir = dir};

    if (g_mkdir_with_parents(dir, 0755) != 0) {
        int e = errno;
        fprintf(stderr, "fuzz seeds: cannot create %s: %s\n", dir, g_strerror(e));
        return -e;
    }
    fuzz_seeds_build(h, fuzz_seed_to_file, &d);
    return d.err ? d.err : (int)d.written;
}
