/*
 * test_nfs3_conv.c -- conversions between dbfs and NFSv3 types and the
 * checks on handles and names (server/nfs3_conv.c): nanoseconds <-> nfstime3
 * with clamping, sattr3 -> dbfs_sattr, fattr3/post_op_attr/wcc_data, names,
 * the argument decoders that refuse names with NUL or '/' (nfs3_args.c),
 * and nfs3_fh_in's decisions (bad handle, stale, not admitted, secure port,
 * squashing).
 */
#include <arpa/inet.h>
#include <string.h>

#include <glib.h>

#include "nfs3_proc.h"

#define NS 1000000000LL

static void test_time_from_ns(void)
{
    const struct {
        int64_t ns;
        uint32_t sec, nsec;
    } cases[] = {
        {0, 0, 0},
        {1, 0, 1},
        {999999999, 0, 999999999},
        {NS, 1, 0},
        {1500000000LL, 1, 500000000},
        {1234567890LL * NS + 123456789, 1234567890u, 123456789},
        {4000000000LL * NS + 1, 4000000000u, 1},
        /* the last representable time */
        {(int64_t)UINT32_MAX * NS + 999999999, UINT32_MAX, 999999999},
        /* beyond 2106: clamped to the last representable time */
        {((int64_t)UINT32_MAX + 1) * NS, UINT32_MAX, 999999999},
        {INT64_MAX, UINT32_MAX, 999999999},
        /* before 1970: clamped to the epoch */
        {-1, 0, 0},
        {-NS, 0, 0},
        {-1500000000LL, 0, 0},
        {INT64_MIN, 0, 0},
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        nfstime3 t = nfs3_time_from_ns(cases[i].ns);
        g_assert_cmpuint(t.seconds, ==, cases[i].sec);
        g_assert_cmpuint(t.nseconds, ==, cases[i].nsec);
        g_assert_cmpuint(t.nseconds, <, NS);
    }
}

static void test_time_to_ns(void)
{
    const nfstime3 cases[] = {
        {0, 0},
        {0, 1},
        {1, 0},
        {1234567890, 123456789},
        {4000000000u, 999999999},
        {UINT32_MAX, 999999999},
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        int64_t ns = nfs3_time_to_ns(&cases[i]);
        g_assert_cmpint(ns, ==, (int64_t)cases[i].seconds * NS + cases[i].nseconds);
        nfstime3 back = nfs3_time_from_ns(ns);
        g_assert_cmpuint(back.seconds, ==, cases[i].seconds);
        g_assert_cmpuint(back.nseconds, ==, cases[i].nseconds);
    }
}

static sattr3 sattr_none(void)
{
    sattr3 s;

    memset(&s, 0, sizeof s);
    s.atime.set_it = DONT_CHANGE;
    s.mtime.set_it = DONT_CHANGE;
    return s;
}

static void test_sattr(void)
{
    sattr3 in = sattr_none();
    dbfs_sattr out;

    g_assert_cmpint(nfs3_sattr_in(&in, &out), ==, NFS3_OK);
    g_assert_cmpuint(out.set, ==, 0);

    in.mode.set_it = TRUE;
    in.mode.set_mode3_u.mode = 0104755; /* file type bits are not a mode */
    in.uid.set_it = TRUE;
    in.uid.set_uid3_u.uid = 1000;
    in.gid.set_it = TRUE;
    in.gid.set_gid3_u.gid = 100;
    in.size.set_it = TRUE;
    in.size.set_size3_u.size = 1ULL << 40;
    in.atime.set_it = SET_TO_SERVER_TIME;
    in.mtime.set_it = SET_TO_CLIENT_TIME;
    in.mtime.set_mtime_u.mtime.seconds = 4000000000u;
    in.mtime.set_mtime_u.mtime.nseconds = 999999999;
    g_assert_cmpint(nfs3_sattr_in(&in, &out), ==, NFS3_OK);
    g_assert_cmpuint(out.set, ==,
                     DBFS_SET_MODE | DBFS_SET_UID | DBFS_SET_GID | DBFS_SET_SIZE |
                         DBFS_SET_ATIME_NOW | DBFS_SET_MTIME);
    g_assert_cmpuint(out.mode, ==, 04755);
    g_assert_cmpuint(out.uid, ==, 1000);
    g_assert_cmpuint(out.gid, ==, 100);
    g_assert_cmpuint(out.size, ==, 1ULL << 40);
    g_assert_cmpint(out.mtime_ns, ==, 4000000000LL * NS + 999999999);

    in = sattr_none();
    in.atime.set_it = SET_TO_CLIENT_TIME;
    in.atime.set_atime_u.atime.seconds = 1;
    in.atime.set_atime_u.atime.nseconds = 2;
    in.mtime.set_it = SET_TO_SERVER_TIME;
    g_assert_cmpint(nfs3_sattr_in(&in, &out), ==, NFS3_OK);
    g_assert_cmpuint(out.set, ==, DBFS_SET_ATIME | DBFS_SET_MTIME_NOW);
    g_assert_cmpint(out.atime_ns, ==, NS + 2);
}

static void test_sattr_bad_time(void)
{
    sattr3 in = sattr_none();
    dbfs_sattr out;

    in.atime.set_it = SET_TO_CLIENT_TIME;
    in.atime.set_atime_u.atime.nseconds = 1000000000u;
    g_assert_cmpint(nfs3_sattr_in(&in, &out), ==, NFS3ERR_INVAL);

    in = sattr_none();
    in.mtime.set_it = SET_TO_CLIENT_TIME;
    in.mtime.set_mtime_u.mtime.seconds = 5;
    in.mtime.set_mtime_u.mtime.nseconds = UINT32_MAX;
    g_assert_cmpint(nfs3_sattr_in(&in, &out), ==, NFS3ERR_INVAL);

    /* A server time ignores whatever nseconds holds (it is not sent). */
    in = sattr_none();
    in.mtime.set_it = SET_TO_SERVER_TIME;
    in.mtime.set_mtime_u.mtime.nseconds = UINT32_MAX;
    g_assert_cmpint(nfs3_sattr_in(&in, &out), ==, NFS3_OK);

    /* time_how is an enum on the wire; other values are not valid. */
    in = sattr_none();
    in.atime.set_it = (time_how)7;
    g_assert_cmpint(nfs3_sattr_in(&in, &out), ==, NFS3ERR_INVAL);
}

static dbfs_attr sample_attr(void)
{
    dbfs_attr a;

    memset(&a, 0, sizeof a);
    a.ino = 0x123456789aULL;
    a.gen = 3;
    a.type = DBFS_CHR;
    a.mode = 02755;
    a.nlink = 7;
    a.uid = 1000;
    a.gid = 100;
    a.size = 1ULL << 35;
    a.used = 1ULL << 36;
    a.rdev_major = 8;
    a.rdev_minor = 17;
    a.atime_ns = 1 * NS + 1;
    a.mtime_ns = 2 * NS + 2;
    a.ctime_ns = -5;
    return a;
}

static void test_fattr(void)
{
    dbfs_info info;
    dbfs_attr a = sample_attr();
    fattr3 f;

    memset(&info, 0, sizeof info);
    info.fsid = 0xabcdef;
    nfs3_fattr(&info, &a, &f);
    g_assert_cmpint(f.type, ==, NF3CHR);
    g_assert_cmpuint(f.mode, ==, 02755);
    g_assert_cmpuint(f.nlink, ==, 7);
    g_assert_cmpuint(f.uid, ==, 1000);
    g_assert_cmpuint(f.gid, ==, 100);
    g_assert_cmpuint(f.size, ==, 1ULL << 35);
    g_assert_cmpuint(f.used, ==, 1ULL << 36);
    g_assert_cmpuint(f.rdev.specdata1, ==, 8);
    g_assert_cmpuint(f.rdev.specdata2, ==, 17);
    g_assert_cmpuint(f.fsid, ==, 0xabcdef);
    g_assert_cmpuint(f.fileid, ==, 0x123456789aULL);
    g_assert_cmpuint(f.atime.seconds, ==, 1);
    g_assert_cmpuint(f.atime.nseconds, ==, 1);
    g_assert_cmpuint(f.mtime.seconds, ==, 2);
    g_assert_cmpuint(f.mtime.nseconds, ==, 2);
    g_assert_cmpuint(f.ctime.seconds, ==, 0);
    g_assert_cmpuint(f.ctime.nseconds, ==, 0);

    const struct {
        dbfs_type d;
        ftype3 n;
    } types[] = {{DBFS_REG, NF3REG}, {DBFS_DIR, NF3DIR},   {DBFS_BLK, NF3BLK},  {DBFS_CHR, NF3CHR},
                 {DBFS_LNK, NF3LNK}, {DBFS_SOCK, NF3SOCK}, {DBFS_FIFO, NF3FIFO}};
    for (size_t i = 0; i < G_N_ELEMENTS(types); i++)
        g_assert_cmpint(nfs3_ftype(types[i].d), ==, types[i].n);

    dbfs_attr_opt opt = {.valid = false, .attr = a};
    post_op_attr p;
    nfs3_post_op_attr(&info, &opt, &p);
    g_assert_false(p.attributes_follow);
    opt.valid = true;
    nfs3_post_op_attr(&info, &opt, &p);
    g_assert_true(p.attributes_follow);
    g_assert_cmpuint(p.post_op_attr_u.attributes.fileid, ==, a.ino);
    nfs3_post_op_attr(&info, NULL, &p);
    g_assert_false(p.attributes_follow);
}

static void test_wcc(void)
{
    dbfs_info info;
    dbfs_wcc w;
    wcc_data out;

    memset(&info, 0, sizeof info);
    memset(&w, 0, sizeof w);
    nfs3_wcc(&info, &w, &out);
    g_assert_false(out.before.attributes_follow);
    g_assert_false(out.after.attributes_follow);

    w.have_pre = true;
    w.pre_size = 4096;
    w.pre_mtime_ns = 10 * NS + 5;
    w.pre_ctime_ns = 11 * NS + 6;
    w.have_post = true;
    w.post = sample_attr();
    nfs3_wcc(&info, &w, &out);
    g_assert_true(out.before.attributes_follow);
    g_assert_cmpuint(out.before.pre_op_attr_u.attributes.size, ==, 4096);
    g_assert_cmpuint(out.before.pre_op_attr_u.attributes.mtime.seconds, ==, 10);
    g_assert_cmpuint(out.before.pre_op_attr_u.attributes.mtime.nseconds, ==, 5);
    g_assert_cmpuint(out.before.pre_op_attr_u.attributes.ctime.seconds, ==, 11);
    g_assert_cmpuint(out.before.pre_op_attr_u.attributes.ctime.nseconds, ==, 6);
    g_assert_true(out.after.attributes_follow);
    g_assert_cmpuint(out.after.post_op_attr_u.attributes.nlink, ==, 7);
}

static filename3 name_n(const char *p, size_t len)
{
    return (filename3){.filename3_len = (u_int)len, .filename3_val = (char *)p};
}

static filename3 name_of(const char *s)
{
    return name_n(s, strlen(s));
}

static void test_names(void)
{
    srv_req req = {0};
    char name[300];
    const char *out;

    memset(name, 'n', sizeof name);
    g_assert_cmpint(nfs3_name_in(&req, NFSPROC3_LOOKUP, (filename3[]){name_of("x")}, &out), ==,
                    NFS3_OK);
    g_assert_cmpstr(out, ==, "x");
    /* The copy holds exactly the name's bytes and a NUL after them. */
    g_assert_cmpint(nfs3_name_in(&req, NFSPROC3_CREATE, (filename3[]){name_n(name, 7)}, &out), ==,
                    NFS3_OK);
    g_assert_cmpstr(out, ==, "nnnnnnn");
    g_assert_cmpint(
        nfs3_name_in(&req, NFSPROC3_CREATE, (filename3[]){name_n(name, DBFS_NAME_MAX)}, &out), ==,
        NFS3_OK);
    g_assert_cmpuint(strlen(out), ==, DBFS_NAME_MAX);
    g_assert_cmpint(
        nfs3_name_in(&req, NFSPROC3_CREATE, (filename3[]){name_n(name, DBFS_NAME_MAX + 1)}, &out),
        ==, NFS3ERR_NAMETOOLONG);
    g_assert_null(out);
    g_assert_cmpint(nfs3_name_in(&req, NFSPROC3_LOOKUP, (filename3[]){name_n(name, 300)}, &out), ==,
                    NFS3ERR_NAMETOOLONG);

    /* "." and "..": what Linux nfsd answers each procedure. "..." is a name. */
    const struct {
        unsigned proc;
        nfsstat3 st;
    } dots[] = {
        {NFSPROC3_LOOKUP, NFS3_OK},       {NFSPROC3_CREATE, NFS3ERR_EXIST},
        {NFSPROC3_MKDIR, NFS3ERR_EXIST},  {NFSPROC3_SYMLINK, NFS3ERR_EXIST},
        {NFSPROC3_MKNOD, NFS3ERR_EXIST},  {NFSPROC3_LINK, NFS3ERR_EXIST},
        {NFSPROC3_REMOVE, NFS3ERR_ACCES}, {NFSPROC3_RMDIR, NFS3ERR_ACCES},
        {NFSPROC3_RENAME, NFS3ERR_PERM},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(dots); i++) {
        g_assert_cmpint(nfs3_name_in(&req, dots[i].proc, (filename3[]){name_of(".")}, &out), ==,
                        dots[i].st);
        g_assert_cmpint(nfs3_name_in(&req, dots[i].proc, (filename3[]){name_of("..")}, &out), ==,
                        dots[i].st);
        g_assert_true(nfs3_stat_allowed(dots[i].proc, dots[i].st));
        g_assert_cmpint(nfs3_name_in(&req, dots[i].proc, (filename3[]){name_of("...")}, &out), ==,
                        NFS3_OK);
        g_assert_cmpint(nfs3_name_in(&req, dots[i].proc, (filename3[]){name_of(".a")}, &out), ==,
                        NFS3_OK);
    }

    /* What the decoders refuse never gets here; if it does, it is our bug. */
    const filename3 bad[] = {name_n("a\0b", 3), name_of("a/b"), name_of("/"), name_n("", 0),
                             name_n("\0", 1)};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_test_expect_message("pgnfs", G_LOG_LEVEL_WARNING, "*decoder should have refused*");
        g_assert_cmpint(nfs3_name_in(&req, NFSPROC3_REMOVE, &bad[i], &out), ==,
                        NFS3ERR_SERVERFAULT);
        g_test_assert_expected_messages();
        g_assert_null(out);
    }
    srv_req_release(&req);
}

static void test_paths(void)
{
    srv_req req = {0};
    char *big = g_malloc(DBFS_PATH_MAX + 1);
    const char *out;

    memset(big, 't', DBFS_PATH_MAX + 1);
    nfspath3 p = {.nfspath3_len = 5, .nfspath3_val = "a/b/c"};
    g_assert_cmpint(nfs3_path_in(&req, &p, &out), ==, NFS3_OK);
    g_assert_cmpstr(out, ==, "a/b/c");
    p = (nfspath3){.nfspath3_len = 0, .nfspath3_val = NULL};
    g_assert_cmpint(nfs3_path_in(&req, &p, &out), ==, NFS3ERR_INVAL);
    g_assert_null(out);
    p = (nfspath3){.nfspath3_len = DBFS_PATH_MAX, .nfspath3_val = big};
    g_assert_cmpint(nfs3_path_in(&req, &p, &out), ==, NFS3_OK);
    g_assert_cmpuint(strlen(out), ==, DBFS_PATH_MAX);
    p.nfspath3_len = DBFS_PATH_MAX + 1;
    g_assert_cmpint(nfs3_path_in(&req, &p, &out), ==, NFS3ERR_NAMETOOLONG);
    p = (nfspath3){.nfspath3_len = 7, .nfspath3_val = "abc\0def"};
    g_test_expect_message("pgnfs", G_LOG_LEVEL_WARNING, "*decoder should have refused*");
    g_assert_cmpint(nfs3_path_in(&req, &p, &out), ==, NFS3ERR_SERVERFAULT);
    g_test_assert_expected_messages();

    /* And back: a C string as counted bytes in request memory. */
    filename3 n;
    nfs3_name_out(&req, "entry", &n);
    g_assert_cmpuint(n.filename3_len, ==, 5);
    g_assert_cmpmem(n.filename3_val, 5, "entry", 5);
    nfspath3 t;
    nfs3_path_out(&req, "../x", &t);
    g_assert_cmpuint(t.nfspath3_len, ==, 4);
    g_assert_cmpmem(t.nfspath3_val, 4, "../x", 4);
    g_free(big);
    srv_req_release(&req);
}

/* --- the argument decoders (nfs3_args.c) ----------------------------------------- */

/*
 * Encode args with rpcgen's routine `enc`, decode them with `dec` into a
 * zeroed struct of size `size`, free them with `dec` (XDR_FREE), and
 * return what the decode returned.
 */
static bool decode_with(xdrproc_t enc, xdrproc_t dec, void *args, size_t size)
{
    char buf[16384];
    XDR x;

    xdrmem_create(&x, buf, sizeof buf, XDR_ENCODE);
    g_assert_true(((bool_t(*)(XDR *, void *))enc)(&x, args));
    u_int len = xdr_getpos(&x);
    xdr_destroy(&x);

    void *out = g_malloc0(size);
    xdrmem_create(&x, buf, len, XDR_DECODE);
    bool ok = ((bool_t(*)(XDR *, void *))dec)(&x, out);
    xdr_destroy(&x);
    xdr_free(dec, out);
    g_free(out);
    return ok;
}

#define DECODES(type, dec, argsp)                                                                  \
    decode_with((xdrproc_t)xdr_##type, (xdrproc_t)(dec), (argsp), sizeof(type))

static void test_args(void)
{
    unsigned char fhb[FH_SIZE] = {1, 2, 3};
    nfs_fh3 fh = {.data = {.data_len = FH_SIZE, .data_val = (char *)fhb}};
    char big[1025];

    memset(big, 'b', sizeof big);
    /* LOOKUP: a name, "." and "..", long names (the handler judges
     * length) pass; NUL, '/' and empty do not. */
    LOOKUP3args lk = {.what = {.dir = fh, .name = name_of("important")}};
    g_assert_true(DECODES(LOOKUP3args, nfs3_args_lookup, &lk));
    lk.what.name = name_of("..");
    g_assert_true(DECODES(LOOKUP3args, nfs3_args_lookup, &lk));
    lk.what.name = name_n(big, 1024);
    g_assert_true(DECODES(LOOKUP3args, nfs3_args_lookup, &lk));
    /* Over the decode bound (rpc/nfs3.x): rpcgen will not even encode it. */
    lk.what.name = name_n(big, 1025);
    char wire[2048];
    XDR w;
    xdrmem_create(&w, wire, sizeof wire, XDR_ENCODE);
    g_assert_false(xdr_LOOKUP3args(&w, &lk));
    xdr_destroy(&w);
    const filename3 bad[] = {name_n("important\0.bak", 14),
                             name_n("\0", 1),
                             name_of("a/b"),
                             name_of("/"),
                             name_of("a/"),
                             name_n("", 0)};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        lk.what.name = bad[i];
        g_assert_false(DECODES(LOOKUP3args, nfs3_args_lookup, &lk));
        g_assert_false(nfs3_filename_ok(&bad[i]));
    }

    /* Every other procedure with a name, good and bad. */
    sattr3 sa = {0};
    for (int good = 0; good < 2; good++) {
        filename3 n = good ? name_of("a.b") : name_n("other\0xyz", 9);
        CREATE3args cr = {.where = {.dir = fh, .name = n}, .how = {.mode = GUARDED}};
        cr.how.createhow3_u.obj_attributes = sa;
        g_assert_cmpint(DECODES(CREATE3args, nfs3_args_create, &cr), ==, good);
        MKDIR3args mk = {.where = {.dir = fh, .name = n}, .attributes = sa};
        g_assert_cmpint(DECODES(MKDIR3args, nfs3_args_mkdir, &mk), ==, good);
        MKNOD3args mn = {.where = {.dir = fh, .name = n}, .what = {.type = NF3FIFO}};
        g_assert_cmpint(DECODES(MKNOD3args, nfs3_args_mknod, &mn), ==, good);
        REMOVE3args rm = {.object = {.dir = fh, .name = n}};
        g_assert_cmpint(DECODES(REMOVE3args, nfs3_args_remove, &rm), ==, good);
        RMDIR3args rd = {.object = {.dir = fh, .name = n}};
        g_assert_cmpint(DECODES(RMDIR3args, nfs3_args_rmdir, &rd), ==, good);
        LINK3args ln = {.file = fh, .link = {.dir = fh, .name = n}};
        g_assert_cmpint(DECODES(LINK3args, nfs3_args_link, &ln), ==, good);
        SYMLINK3args sl = {.where = {.dir = fh, .name = n}};
        sl.symlink.symlink_data = (nfspath3){.nfspath3_len = 1, .nfspath3_val = "t"};
        g_assert_cmpint(DECODES(SYMLINK3args, nfs3_args_symlink, &sl), ==, good);
        /* RENAME: either name. */
        RENAME3args rn = {.from = {.dir = fh, .name = n}, .to = {.dir = fh, .name = name_of("x")}};
        g_assert_cmpint(DECODES(RENAME3args, nfs3_args_rename, &rn), ==, good);
        rn = (RENAME3args){.from = {.dir = fh, .name = name_of("x")}, .to = {.dir = fh, .name = n}};
        g_assert_cmpint(DECODES(RENAME3args, nfs3_args_rename, &rn), ==, good);
    }

    /* SYMLINK targets: '/' is fine, NUL is not; empty is the handler's. */
    SYMLINK3args sl = {.where = {.dir = fh, .name = name_of("s")}};
    sl.symlink.symlink_data = (nfspath3){.nfspath3_len = 7, .nfspath3_val = "abc/def"};
    g_assert_true(DECODES(SYMLINK3args, nfs3_args_symlink, &sl));
    sl.symlink.symlink_data = (nfspath3){.nfspath3_len = 0, .nfspath3_val = NULL};
    g_assert_true(DECODES(SYMLINK3args, nfs3_args_symlink, &sl));
    sl.symlink.symlink_data = (nfspath3){.nfspath3_len = 7, .nfspath3_val = "abc\0def"};
    g_assert_false(DECODES(SYMLINK3args, nfs3_args_symlink, &sl));
    sl.symlink.symlink_data = (nfspath3){.nfspath3_len = 1, .nfspath3_val = "\0"};
    g_assert_false(DECODES(SYMLINK3args, nfs3_args_symlink, &sl));

    /* A decoded name keeps its length and bytes. */
    char buf[512];
    XDR x;
    LOOKUP3args in = {.what = {.dir = fh, .name = name_of("n\xc3\xa4me")}}, got = {0};
    xdrmem_create(&x, buf, sizeof buf, XDR_ENCODE);
    g_assert_true(xdr_LOOKUP3args(&x, &in));
    u_int len = xdr_getpos(&x);
    xdr_destroy(&x);
    xdrmem_create(&x, buf, len, XDR_DECODE);
    g_assert_true(nfs3_args_lookup(&x, &got));
    xdr_destroy(&x);
    g_assert_cmpmem(got.what.name.filename3_val, got.what.name.filename3_len, "n\xc3\xa4me", 5);
    xdr_free((xdrproc_t)nfs3_args_lookup, (char *)&got);
}

/* --- nfs3_fh_in --------------------------------------------------------------------- */

typedef struct {
    cfg conf;
    cfg_export exports[2];
    dbfs_info info;
    srv_ctx srv;
    srv_req req;
} fixture;

static void fixture_init(fixture *f)
{
    char *err = NULL;

    memset(f, 0, sizeof *f);
    if (cfg_parse_export("/", "127.0.0.1(rw) 10.0.0.0/8(ro,all_squash,anonuid=9,anongid=9)",
                         &f->exports[0], &err) != 0 ||
        cfg_parse_export("/secure", "127.0.0.1(rw,secure,no_root_squash)", &f->exports[1], &err) !=
            0)
        g_error("cfg_parse_export: %s", err);
    f->conf.exports = f->exports;
    f->conf.nexports = 2;
    f->info.fsid = 77;
    memset(f->info.secret, 0x5a, sizeof f->info.secret);
    f->srv.cfg = &f->conf;
    f->srv.info = &f->info;
    f->req.srv = &f->srv;
}

static void fixture_clear(fixture *f)
{
    srv_req_release(&f->req);
    cfg_export_clear(&f->exports[0]);
    cfg_export_clear(&f->exports[1]);
}

static void set_peer(fixture *f, const char *addr, unsigned port)
{
    struct sockaddr_in *sin = (struct sockaddr_in *)&f->req.peer;

    memset(&f->req.peer, 0, sizeof f->req.peer);
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)port);
    g_assert_cmpint(inet_pton(AF_INET, addr, &sin->sin_addr), ==, 1);
    f->req.peerlen = sizeof *sin;
    f->req.export = NULL;
    f->req.client = NULL;
}

static nfs_fh3 make_fh(fixture *f, unsigned export_index, uint64_t ino, unsigned char *buf)
{
    nfs_fh3 fh;

    fh_encode(&f->info, export_index, (dbfs_fh){.ino = ino, .gen = 4}, buf);
    fh.data.data_val = (char *)buf;
    fh.data.data_len = FH_SIZE;
    return fh;
}

static void test_fh_in(void)
{
    fixture f;
    unsigned char buf[FH_SIZE];
    dbfs_fh out;

    fixture_init(&f);
    f.req.auth.present = true;
    f.req.auth.uid = 0;
    f.req.auth.gid = 0;

    /* A good handle: the export, the client entry and the squashed caller. */
    set_peer(&f, "127.0.0.1", 40000);
    nfs_fh3 fh = make_fh(&f, 0, 99, buf);
    g_assert_cmpint(nfs3_fh_in(&f.req, &fh, &out), ==, NFS3_OK);
    g_assert_cmpuint(out.ino, ==, 99);
    g_assert_cmpuint(out.gen, ==, 4);
    g_assert_true(f.req.export == &f.exports[0]);
    g_assert_true(f.req.client == &f.exports[0].clients[0]);
    g_assert_cmpuint(nfs3_export_index(&f.req), ==, 0);
    g_assert_false(nfs3_read_only(&f.req));
    g_assert_cmpuint(f.req.cred.uid, ==, 65534); /* root_squash by default */

    /* Another client entry of the same export: read-only, all squashed. */
    set_peer(&f, "10.1.2.3", 40000);
    f.req.auth.uid = 1000;
    g_assert_cmpint(nfs3_fh_in(&f.req, &fh, &out), ==, NFS3_OK);
    g_assert_true(nfs3_read_only(&f.req));
    g_assert_cmpuint(f.req.cred.uid, ==, 9);

    /* Not admitted. */
    set_peer(&f, "192.168.0.1", 800);
    g_assert_cmpint(nfs3_fh_in(&f.req, &fh, &out), ==, NFS3ERR_ACCES);
    g_assert_null(f.req.export);

    /* A secure export wants a privileged source port. */
    set_peer(&f, "127.0.0.1", 40000);
    nfs_fh3 sfh = make_fh(&f, 1, 5, buf);
    g_assert_cmpint(nfs3_fh_in(&f.req, &sfh, &out), ==, NFS3ERR_ACCES);
    set_peer(&f, "127.0.0.1", 1023);
    f.req.auth.uid = 0;
    g_assert_cmpint(nfs3_fh_in(&f.req, &sfh, &out), ==, NFS3_OK);
    g_assert_cmpuint(f.req.cred.uid, ==, 0);

    /* Handles the configuration does not have, or another file system's. */
    nfs_fh3 gone = make_fh(&f, 2, 5, buf);
    g_assert_cmpint(nfs3_fh_in(&f.req, &gone, &out), ==, NFS3ERR_STALE);
    dbfs_info other = f.info;
    other.fsid = 78;
    fh_encode(&other, 0, (dbfs_fh){.ino = 5, .gen = 1}, buf);
    fh.data.data_val = (char *)buf;
    g_assert_cmpint(nfs3_fh_in(&f.req, &fh, &out), ==, NFS3ERR_STALE);

    /* Broken handles. */
    fh = make_fh(&f, 0, 5, buf);
    buf[12] ^= 1;
    g_assert_cmpint(nfs3_fh_in(&f.req, &fh, &out), ==, NFS3ERR_BADHANDLE);
    fh = make_fh(&f, 0, 5, buf);
    fh.data.data_len = FH_SIZE - 1;
    g_assert_cmpint(nfs3_fh_in(&f.req, &fh, &out), ==, NFS3ERR_BADHANDLE);
    fh.data.data_len = 0;
    fh.data.data_val = NULL;
    g_assert_cmpint(nfs3_fh_in(&f.req, &fh, &out), ==, NFS3ERR_BADHANDLE);
    fixture_clear(&f);
}

static void test_fh_out(void)
{
    fixture f;
    unsigned char buf[FH_SIZE];
    dbfs_fh out;
    nfs_fh3 made;
    post_op_fh3 post;

    fixture_init(&f);
    set_peer(&f, "127.0.0.1", 700);
    nfs_fh3 fh = make_fh(&f, 1, 5, buf);
    g_assert_cmpint(nfs3_fh_in(&f.req, &fh, &out), ==, NFS3_OK);

    /* Handles made for a request carry the request's export. */
    nfs3_fh_out(&f.req, (dbfs_fh){.ino = 1234, .gen = 56}, &made);
    g_assert_cmpuint(made.data.data_len, ==, FH_SIZE);
    fh_decoded d;
    g_assert_cmpint(fh_decode(&f.info, made.data.data_val, made.data.data_len, &d), ==, 0);
    g_assert_cmpuint(d.export_index, ==, 1);
    g_assert_cmpuint(d.fh.ino, ==, 1234);
    g_assert_cmpuint(d.fh.gen, ==, 56);
    g_assert_true((unsigned char *)made.data.data_val != buf);

    nfs3_post_op_fh(&f.req, (dbfs_fh){.ino = 9, .gen = 1}, &post);
    g_assert_true(post.handle_follows);
    g_assert_cmpint(nfs3_fh_in(&f.req, &post.post_op_fh3_u.handle, &out), ==, NFS3_OK);
    g_assert_cmpuint(out.ino, ==, 9);
    fixture_clear(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/nfs3_conv/time_from_ns", test_time_from_ns);
    g_test_add_func("/nfs3_conv/time_to_ns", test_time_to_ns);
    g_test_add_func("/nfs3_conv/sattr", test_sattr);
    g_test_add_func("/nfs3_conv/sattr_bad_time", test_sattr_bad_time);
    g_test_add_func("/nfs3_conv/fattr", test_fattr);
    g_test_add_func("/nfs3_conv/wcc", test_wcc);
    g_test_add_func("/nfs3_conv/names", test_names);
    g_test_add_func("/nfs3_conv/paths", test_paths);
    g_test_add_func("/nfs3_conv/args", test_args);
    g_test_add_func("/nfs3_conv/fh_in", test_fh_in);
    g_test_add_func("/nfs3_conv/fh_out", test_fh_out);
    return g_test_run();
}
