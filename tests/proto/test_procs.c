/*
 * test_procs.c -- every NFSv3 and MOUNTv3 procedure on its success path,
 * with the result fields checked, and the wcc data of the operations that
 * change a directory or a file (RFC 1813 sections 3.3 and 5.2).
 *
 * One server for the program; each case works in its own fresh directory.
 */
#include <stdint.h>
#include <string.h>

#include "ptest.h"

/* --- helpers ----------------------------------------------------------------- */

/* Assert that wcc data matches GETATTRs taken just before and just after. */
static void assert_wcc(const wcc_data *w, const fattr3 *before, const fattr3 *after)
{
    g_assert_true(w->before.attributes_follow);
    const wcc_attr *pre = &w->before.pre_op_attr_u.attributes;
    g_assert_cmpuint(pre->size, ==, before->size);
    pt_assert_time(pre->mtime, before->mtime);
    pt_assert_time(pre->ctime, before->ctime);

    fattr3 post = pt_post_attr(&w->after);
    g_assert_cmpint(post.type, ==, after->type);
    g_assert_cmpuint(post.mode, ==, after->mode);
    g_assert_cmpuint(post.nlink, ==, after->nlink);
    g_assert_cmpuint(post.uid, ==, after->uid);
    g_assert_cmpuint(post.gid, ==, after->gid);
    g_assert_cmpuint(post.size, ==, after->size);
    g_assert_cmpuint(post.fileid, ==, after->fileid);
    g_assert_cmpuint(post.fsid, ==, after->fsid);
    pt_assert_time(post.mtime, after->mtime);
    pt_assert_time(post.ctime, after->ctime);
}

static bool time_before_eq(nfstime3 a, nfstime3 b)
{
    return a.seconds < b.seconds || (a.seconds == b.seconds && a.nseconds <= b.nseconds);
}

/* Does the mount list hold an entry for path? */
static bool dump_has(mountlist m, const char *path)
{
    for (; m; m = m->ml_next)
        if (strcmp(m->ml_directory, path) == 0)
            return true;
    return false;
}

/* --- NULL and MOUNT ----------------------------------------------------------- */

static void test_null(void)
{
    nr_ctx *c = pt_open(NULL);
    nr_ctx *m = pt_open_mount(NULL);

    g_assert_cmpint(nr_null(c), ==, 0);
    g_assert_cmpint(nr_mount_null(m), ==, 0);
    nr_close(c);
    nr_close(m);
}

static void test_mount(void)
{
    nr_ctx *c = pt_open_mount(NULL);
    nr_ctx *n = pt_open(NULL);
    mountres3 res;
    nr_fh root;
    mountlist ml;
    exports ex;

    /* MNT: the root handle, and AUTH_SYS among the flavors. */
    g_assert_cmpint(nr_mnt(c, pt.export_path, &res, &root), ==, MNT3_OK);
    g_assert_cmpuint(root.len, >, 0);
    g_assert_cmpuint(root.len, <=, NFS3_FHSIZE);
    g_assert_true(nr_fh_equal(&root, &pt.root));
    const mountres3_ok *ok = &res.mountres3_u.mountinfo;
    bool has_sys = false;
    for (u_int i = 0; i < ok->auth_flavors.auth_flavors_len; i++)
        has_sys |= ok->auth_flavors.auth_flavors_val[i] == NR_AUTH_SYS;
    g_assert_true(has_sys);
    fattr3 a = pt_getattr(n, &root);
    g_assert_cmpint(a.type, ==, NF3DIR);

    /* MNT of a path that is not exported (and does not exist): refused. */
    int st = nr_mnt(c, "/no/such/export/anywhere", NULL, NULL);
    g_assert_true(st == MNT3ERR_NOENT || st == MNT3ERR_ACCES);

    /* DUMP lists the mount, UMNT removes it. */
    g_assert_cmpint(nr_dump(c, &ml), ==, 0);
    g_assert_true(dump_has(ml, pt.export_path));
    for (mountlist m = ml; m; m = m->ml_next)
        g_assert_cmpstr(m->ml_hostname, !=, "");
    g_assert_cmpint(nr_umnt(c, pt.export_path), ==, 0);
    g_assert_cmpint(nr_dump(c, &ml), ==, 0);
    g_assert_false(dump_has(ml, pt.export_path));

    /* UMNTALL removes every mount of this client. */
    g_assert_cmpint(nr_mnt(c, pt.export_path, NULL, NULL), ==, MNT3_OK);
    g_assert_cmpint(nr_dump(c, &ml), ==, 0);
    g_assert_true(dump_has(ml, pt.export_path));
    g_assert_cmpint(nr_umntall(c), ==, 0);
    g_assert_cmpint(nr_dump(c, &ml), ==, 0);
    g_assert_false(dump_has(ml, pt.export_path));

    /* EXPORT lists the export. */
    g_assert_cmpint(nr_export(c, &ex), ==, 0);
    bool found = false;
    for (exports e = ex; e; e = e->ex_next)
        found |= strcmp(e->ex_dir, pt.export_path) == 0;
    g_assert_true(found);
    nr_close(c);
    nr_close(n);
}

/* --- attributes ------------------------------------------------------------------ */

static void test_getattr(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    CREATE3res cr;
    sattr3 sa = nr_sattr_mode(0640);

    fattr3 root = pt_getattr(c, &pt.root);
    g_assert_cmpint(root.type, ==, NF3DIR);
    g_assert_cmpuint(root.mode & 07777, ==, 0777);
    g_assert_cmpuint(root.nlink, >=, 3); /* ".", its name, and the case directory's ".." */

    pt_ok(c, nr_create(c, &dir, "f", GUARDED, &sa, NULL, &cr));
    nr_fh f = pt_post_fh(&cr.CREATE3res_u.resok.obj);
    fattr3 created = pt_post_attr(&cr.CREATE3res_u.resok.obj_attributes);

    fattr3 a = pt_getattr(c, &f);
    g_assert_cmpint(a.type, ==, NF3REG);
    g_assert_cmpuint(a.mode, ==, 0640);
    g_assert_cmpuint(a.nlink, ==, 1);
    g_assert_cmpuint(a.uid, ==, PT_OWNER_UID);
    g_assert_cmpuint(a.gid, ==, PT_OWNER_GID);
    g_assert_cmpuint(a.size, ==, 0);
    g_assert_cmpuint(a.used, ==, 0);
    g_assert_cmpuint(a.fileid, ==, created.fileid);
    g_assert_cmpuint(a.fsid, ==, root.fsid);
    g_assert_cmpuint(a.rdev.specdata1, ==, 0);
    g_assert_cmpuint(a.rdev.specdata2, ==, 0);
    pt_assert_time(a.mtime, created.mtime);
    pt_assert_time(a.ctime, created.ctime);

    fattr3 d = pt_getattr(c, &dir);
    g_assert_cmpint(d.type, ==, NF3DIR);
    g_assert_cmpuint(d.mode, ==, 0777);
    g_assert_cmpuint(d.nlink, ==, 2);
    g_assert_cmpuint(d.uid, ==, 0);
    g_assert_cmpuint(d.fileid, !=, a.fileid);
    nr_close(c);
}

static void test_setattr(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *root = pt_open(NULL);
    nr_ctx *c = pt_open(&pt_owner);
    SETATTR3res res;

    nr_fh f = pt_create(c, &dir, "f", 0600);

    /* mode */
    sattr3 sa = nr_sattr_mode(0751);
    pt_ok(c, nr_setattr(c, &f, &sa, NULL, &res));
    fattr3 a = pt_getattr(c, &f);
    g_assert_cmpuint(a.mode, ==, 0751);
    fattr3 post = pt_post_attr(&res.SETATTR3res_u.resok.obj_wcc.after);
    g_assert_cmpuint(post.mode, ==, 0751);

    /* size: extend, then shrink */
    sa = nr_sattr_none();
    sa.size.set_it = 1;
    sa.size.set_size3_u.size = 100000;
    pt_ok(c, nr_setattr(c, &f, &sa, NULL, &res));
    g_assert_cmpuint(pt_getattr(c, &f).size, ==, 100000);
    sa.size.set_size3_u.size = 10;
    pt_ok(c, nr_setattr(c, &f, &sa, NULL, &res));
    g_assert_cmpuint(pt_getattr(c, &f).size, ==, 10);

    /* uid and gid, by root */
    pt_chown(root, &f, PT_OTHER_UID, PT_OTHER_GID);
    a = pt_getattr(c, &f);
    g_assert_cmpuint(a.uid, ==, PT_OTHER_UID);
    g_assert_cmpuint(a.gid, ==, PT_OTHER_GID);

    /* a SETATTR that sets nothing succeeds and changes nothing visible */
    fattr3 before = pt_getattr(c, &f);
    sa = nr_sattr_none();
    pt_ok(root, nr_setattr(root, &f, &sa, NULL, &res));
    a = pt_getattr(c, &f);
    g_assert_cmpuint(a.mode, ==, before.mode);
    g_assert_cmpuint(a.size, ==, before.size);
    pt_assert_time(a.mtime, before.mtime);

    nr_close(c);
    nr_close(root);
}

static void test_lookup(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    CREATE3res cr;
    LOOKUP3res lr;
    sattr3 sa = nr_sattr_mode(0644);

    pt_ok(c, nr_create(c, &dir, "name", GUARDED, &sa, NULL, &cr));
    nr_fh f = pt_post_fh(&cr.CREATE3res_u.resok.obj);
    fattr3 created = pt_post_attr(&cr.CREATE3res_u.resok.obj_attributes);

    pt_ok(c, nr_lookup(c, &dir, "name", &lr));
    nr_fh found = nr_fh_from(&lr.LOOKUP3res_u.resok.object);
    g_assert_true(nr_fh_equal(&found, &f));
    fattr3 la = pt_post_attr(&lr.LOOKUP3res_u.resok.obj_attributes);
    g_assert_cmpuint(la.fileid, ==, created.fileid);
    g_assert_cmpint(la.type, ==, NF3REG);
    fattr3 da = pt_post_attr(&lr.LOOKUP3res_u.resok.dir_attributes);
    g_assert_cmpuint(da.fileid, ==, pt_getattr(c, &dir).fileid);

    /* "." is the directory itself, ".." its parent (the export root). */
    pt_ok(c, nr_lookup(c, &dir, ".", &lr));
    g_assert_cmpuint(pt_post_attr(&lr.LOOKUP3res_u.resok.obj_attributes).fileid, ==, da.fileid);
    pt_ok(c, nr_lookup(c, &dir, "..", &lr));
    g_assert_cmpuint(pt_post_attr(&lr.LOOKUP3res_u.resok.obj_attributes).fileid, ==,
                     pt_getattr(c, &pt.root).fileid);
    nr_close(c);
}

static void test_access(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *owner = pt_open(&pt_owner);
    nr_ctx *other = pt_open(&pt_other);
    ACCESS3res res;
    const uint32_t file_bits = ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_EXECUTE;

    nr_fh f = pt_create(owner, &dir, "f", 0644);
    pt_ok(owner, nr_access(owner, &f, file_bits, &res));
    g_assert_cmphex(res.ACCESS3res_u.resok.access, ==,
                    ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND);
    g_assert_cmpuint(pt_post_attr(&res.ACCESS3res_u.resok.obj_attributes).fileid, ==,
                     pt_getattr(owner, &f).fileid);
    pt_ok(other, nr_access(other, &f, file_bits, &res));
    g_assert_cmphex(res.ACCESS3res_u.resok.access, ==, ACCESS3_READ);
    /* Only what was asked for is answered. */
    pt_ok(other, nr_access(other, &f, ACCESS3_MODIFY, &res));
    g_assert_cmphex(res.ACCESS3res_u.resok.access, ==, 0);

    nr_fh d = pt_mkdir(owner, &dir, "d", 0755);
    const uint32_t dir_bits =
        ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE;
    pt_ok(owner, nr_access(owner, &d, dir_bits, &res));
    g_assert_cmphex(res.ACCESS3res_u.resok.access, ==, dir_bits);
    pt_ok(other, nr_access(other, &d, dir_bits, &res));
    g_assert_cmphex(res.ACCESS3res_u.resok.access, ==, ACCESS3_READ | ACCESS3_LOOKUP);
    nr_close(owner);
    nr_close(other);
}

/* --- links and special files ------------------------------------------------------ */

static void test_symlink_readlink(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    SYMLINK3res sr;
    READLINK3res rr;
    const char *target = "../some/where/else with spaces";
    sattr3 sa = nr_sattr_none();

    pt_ok(c, nr_symlink(c, &dir, "link", target, &sa, &sr));
    nr_fh l = pt_post_fh(&sr.SYMLINK3res_u.resok.obj);
    fattr3 a = pt_post_attr(&sr.SYMLINK3res_u.resok.obj_attributes);
    g_assert_cmpint(a.type, ==, NF3LNK);
    g_assert_cmpuint(a.size, ==, strlen(target));
    g_assert_cmpuint(a.uid, ==, PT_OWNER_UID);
    g_assert_cmpuint(a.nlink, ==, 1);

    pt_ok(c, nr_readlink(c, &l, &rr));
    g_assert_cmpstr(rr.READLINK3res_u.resok.data, ==, target);
    g_assert_cmpuint(pt_post_attr(&rr.READLINK3res_u.resok.symlink_attributes).fileid, ==,
                     a.fileid);

    /* LOOKUP does not follow it. */
    nr_fh found = pt_lookup(c, &dir, "link");
    g_assert_true(nr_fh_equal(&found, &l));
    g_assert_cmpint(pt_getattr(c, &found).type, ==, NF3LNK);
    nr_close(c);
}

static void test_mknod(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL); /* device nodes need root on most servers */
    static const struct {
        const char *name;
        ftype3 type;
        uint32_t major, minor;
    } nodes[] = {
        {"fifo", NF3FIFO, 0, 0},
        {"sock", NF3SOCK, 0, 0},
        {"chr", NF3CHR, 1, 3},
        {"blk", NF3BLK, 8, 17},
    };

    for (size_t i = 0; i < G_N_ELEMENTS(nodes); i++) {
        MKNOD3res res;
        sattr3 sa = nr_sattr_mode(0640);

        pt_ok(c, nr_mknod(c, &dir, nodes[i].name, nodes[i].type, &sa, nodes[i].major,
                          nodes[i].minor, &res));
        nr_fh fh = pt_post_fh(&res.MKNOD3res_u.resok.obj);
        fattr3 a = pt_post_attr(&res.MKNOD3res_u.resok.obj_attributes);
        fattr3 g = pt_getattr(c, &fh);
        g_assert_cmpint(a.type, ==, nodes[i].type);
        g_assert_cmpint(g.type, ==, nodes[i].type);
        g_assert_cmpuint(g.mode, ==, 0640);
        g_assert_cmpuint(g.nlink, ==, 1);
        g_assert_cmpuint(g.size, ==, 0);
        g_assert_cmpuint(g.rdev.specdata1, ==, nodes[i].major);
        g_assert_cmpuint(g.rdev.specdata2, ==, nodes[i].minor);
        g_assert_cmpuint(a.rdev.specdata1, ==, nodes[i].major);
        g_assert_cmpuint(a.rdev.specdata2, ==, nodes[i].minor);
        g_assert_cmpuint(pt_getattr(c, &fh).fileid, ==, a.fileid);
    }
    nr_close(c);
}

static void test_link(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    LINK3res res;

    nr_fh sub = pt_mkdir(c, &dir, "sub", 0755);
    nr_fh f = pt_create(c, &dir, "a", 0644);
    pt_ok(c, nr_link(c, &f, &dir, "b", &res));
    g_assert_cmpuint(pt_post_attr(&res.LINK3res_u.resok.file_attributes).nlink, ==, 2);
    pt_ok(c, nr_link(c, &f, &sub, "c", &res));
    g_assert_cmpuint(pt_post_attr(&res.LINK3res_u.resok.file_attributes).nlink, ==, 3);
    g_assert_cmpuint(pt_getattr(c, &f).nlink, ==, 3);

    fattr3 fa = pt_getattr(c, &f);
    nr_fh b = pt_lookup(c, &dir, "b");
    nr_fh cc = pt_lookup(c, &sub, "c");
    g_assert_cmpuint(pt_getattr(c, &b).fileid, ==, fa.fileid);
    g_assert_cmpuint(pt_getattr(c, &cc).fileid, ==, fa.fileid);

    /* Data written through one name is read through another. */
    pt_write(c, &f, 0, "shared", 6);
    READ3res rr;
    pt_ok(c, nr_read(c, &cc, 0, 100, &rr));
    g_assert_cmpuint(rr.READ3res_u.resok.count, ==, 6);
    g_assert_cmpmem(rr.READ3res_u.resok.data.data_val, 6, "shared", 6);

    pt_ok(c, nr_remove(c, &dir, "a", NULL));
    g_assert_cmpuint(pt_getattr(c, &b).nlink, ==, 2);
    pt_ok(c, nr_remove(c, &sub, "c", NULL));
    g_assert_cmpuint(pt_getattr(c, &b).nlink, ==, 1);
    nr_close(c);
}

/* --- data ------------------------------------------------------------------------------ */

static void test_read_write_commit(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    WRITE3res w1, w2;
    COMMIT3res cm;
    READ3res rr;
    enum { N = 20000 };
    char *buf = g_malloc(N);

    for (int i = 0; i < N; i++)
        buf[i] = (char)(i * 7 + i / 256);
    nr_fh f = pt_create(c, &dir, "data", 0644);

    pt_ok(c, nr_write(c, &f, 0, buf, 12000, UNSTABLE, &w1));
    g_assert_cmpuint(w1.WRITE3res_u.resok.count, ==, 12000);
    g_assert_cmpint(w1.WRITE3res_u.resok.committed, >=, UNSTABLE);
    g_assert_cmpuint(pt_post_attr(&w1.WRITE3res_u.resok.file_wcc.after).size, ==, 12000);

    pt_ok(c, nr_write(c, &f, 12000, buf + 12000, N - 12000, FILE_SYNC, &w2));
    g_assert_cmpuint(w2.WRITE3res_u.resok.count, ==, N - 12000);
    g_assert_cmpint(w2.WRITE3res_u.resok.committed, ==, FILE_SYNC);
    g_assert_cmpmem(w1.WRITE3res_u.resok.verf, NFS3_WRITEVERFSIZE, w2.WRITE3res_u.resok.verf,
                    NFS3_WRITEVERFSIZE);

    pt_ok(c, nr_write(c, &f, 100, buf + 100, 50, DATA_SYNC, &w2));
    g_assert_cmpint(w2.WRITE3res_u.resok.committed, >=, DATA_SYNC);

    pt_ok(c, nr_commit(c, &f, 0, 0, &cm));
    g_assert_cmpmem(cm.COMMIT3res_u.resok.verf, NFS3_WRITEVERFSIZE, w1.WRITE3res_u.resok.verf,
                    NFS3_WRITEVERFSIZE);
    g_assert_cmpuint(pt_post_attr(&cm.COMMIT3res_u.resok.file_wcc.after).size, ==, N);

    /* The whole file: eof. */
    pt_ok(c, nr_read(c, &f, 0, N + 100, &rr));
    g_assert_cmpuint(rr.READ3res_u.resok.count, ==, N);
    g_assert_cmpuint(rr.READ3res_u.resok.data.data_len, ==, N);
    g_assert_true(rr.READ3res_u.resok.eof);
    g_assert_cmpmem(rr.READ3res_u.resok.data.data_val, N, buf, N);
    g_assert_cmpuint(pt_post_attr(&rr.READ3res_u.resok.file_attributes).size, ==, N);

    /* A middle range: not eof. */
    pt_ok(c, nr_read(c, &f, 8000, 500, &rr));
    g_assert_cmpuint(rr.READ3res_u.resok.count, ==, 500);
    g_assert_false(rr.READ3res_u.resok.eof);
    g_assert_cmpmem(rr.READ3res_u.resok.data.data_val, 500, buf + 8000, 500);

    /* Exactly up to the end: eof. */
    pt_ok(c, nr_read(c, &f, N - 10, 10, &rr));
    g_assert_cmpuint(rr.READ3res_u.resok.count, ==, 10);
    g_assert_true(rr.READ3res_u.resok.eof);

    /* Past the end: nothing, eof. */
    pt_ok(c, nr_read(c, &f, N + 5000, 100, &rr));
    g_assert_cmpuint(rr.READ3res_u.resok.count, ==, 0);
    g_assert_true(rr.READ3res_u.resok.eof);

    /* A hole reads as zeros. */
    pt_write(c, &f, 100000, "x", 1);
    pt_ok(c, nr_read(c, &f, 50000, 1000, &rr));
    g_assert_cmpuint(rr.READ3res_u.resok.count, ==, 1000);
    for (int i = 0; i < 1000; i++)
        g_assert_cmpint(rr.READ3res_u.resok.data.data_val[i], ==, 0);
    g_assert_cmpuint(pt_getattr(c, &f).size, ==, 100001);
    g_free(buf);
    nr_close(c);
}

/* --- directories ------------------------------------------------------------------------- */

static void test_create_modes(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    CREATE3res res;
    sattr3 sa = nr_sattr_mode(0600);

    pt_ok(c, nr_create(c, &dir, "u", UNCHECKED, &sa, NULL, &res));
    nr_fh f = pt_post_fh(&res.CREATE3res_u.resok.obj);
    fattr3 a = pt_post_attr(&res.CREATE3res_u.resok.obj_attributes);
    g_assert_cmpint(a.type, ==, NF3REG);
    g_assert_cmpuint(a.mode, ==, 0600);
    pt_write(c, &f, 0, "0123456789", 10);

    /* UNCHECKED over an existing file opens it: same file, data kept. */
    sa = nr_sattr_none();
    pt_ok(c, nr_create(c, &dir, "u", UNCHECKED, &sa, NULL, &res));
    fattr3 again = pt_post_attr(&res.CREATE3res_u.resok.obj_attributes);
    g_assert_cmpuint(again.fileid, ==, a.fileid);
    g_assert_cmpuint(pt_getattr(c, &f).size, ==, 10);

    /* ... and truncates it when the attributes set size 0. */
    sa.size.set_it = 1;
    sa.size.set_size3_u.size = 0;
    pt_ok(c, nr_create(c, &dir, "u", UNCHECKED, &sa, NULL, &res));
    g_assert_cmpuint(pt_getattr(c, &f).size, ==, 0);

    /* EXCLUSIVE: a new file. */
    const char verf[NFS3_CREATEVERFSIZE] = {1, 2, 3, 4, 5, 6, 7, 8};
    pt_ok(c, nr_create(c, &dir, "x", EXCLUSIVE, NULL, verf, &res));
    nr_fh x = pt_post_fh(&res.CREATE3res_u.resok.obj);
    g_assert_cmpint(pt_getattr(c, &x).type, ==, NF3REG);
    g_assert_cmpuint(pt_getattr(c, &x).size, ==, 0);
    nr_close(c);
}

static void test_mkdir(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    MKDIR3res res;
    sattr3 sa = nr_sattr_mode(0750);

    fattr3 parent_before = pt_getattr(c, &dir);
    pt_ok(c, nr_mkdir(c, &dir, "sub", &sa, &res));
    nr_fh sub = pt_post_fh(&res.MKDIR3res_u.resok.obj);
    fattr3 a = pt_post_attr(&res.MKDIR3res_u.resok.obj_attributes);
    g_assert_cmpint(a.type, ==, NF3DIR);
    g_assert_cmpuint(a.mode, ==, 0750);
    g_assert_cmpuint(a.nlink, ==, 2);
    g_assert_cmpuint(a.uid, ==, PT_OWNER_UID);
    g_assert_cmpuint(a.gid, ==, PT_OWNER_GID);
    g_assert_cmpuint(pt_getattr(c, &sub).fileid, ==, a.fileid);
    g_assert_cmpuint(pt_getattr(c, &dir).nlink, ==, parent_before.nlink + 1);

    /* Its ".." is the parent. */
    nr_fh dotdot = pt_lookup(c, &sub, "..");
    g_assert_cmpuint(pt_getattr(c, &dotdot).fileid, ==, parent_before.fileid);
    nr_close(c);
}

static void test_remove_rmdir(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    REMOVE3res rr;
    RMDIR3res dr;

    pt_create(c, &dir, "f", 0644);
    pt_mkdir(c, &dir, "d", 0755);
    fattr3 before = pt_getattr(c, &dir);
    g_assert_cmpuint(before.nlink, ==, 3);

    pt_ok(c, nr_remove(c, &dir, "f", &rr));
    pt_stat(c, nr_lookup(c, &dir, "f", NULL), NFS3ERR_NOENT);
    pt_ok(c, nr_rmdir(c, &dir, "d", &dr));
    pt_stat(c, nr_lookup(c, &dir, "d", NULL), NFS3ERR_NOENT);
    g_assert_cmpuint(pt_getattr(c, &dir).nlink, ==, 2);
    g_assert_cmpuint(pt_post_attr(&dr.RMDIR3res_u.resok.dir_wcc.after).nlink, ==, 2);
    nr_close(c);
}

static void test_rename_same_dir(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    RENAME3res res;

    nr_fh f = pt_create(c, &dir, "old", 0644);
    fattr3 fa = pt_getattr(c, &f);
    pt_ok(c, nr_rename(c, &dir, "old", &dir, "new", &res));
    pt_stat(c, nr_lookup(c, &dir, "old", NULL), NFS3ERR_NOENT);
    nr_fh n = pt_lookup(c, &dir, "new");
    g_assert_cmpuint(pt_getattr(c, &n).fileid, ==, fa.fileid);
    /* The handle stays valid across a rename. */
    g_assert_cmpuint(pt_getattr(c, &f).fileid, ==, fa.fileid);

    /* Over an existing file: the target is replaced. */
    nr_fh victim = pt_create(c, &dir, "victim", 0644);
    fattr3 va = pt_getattr(c, &victim);
    pt_ok(c, nr_rename(c, &dir, "new", &dir, "victim", &res));
    nr_fh v = pt_lookup(c, &dir, "victim");
    g_assert_cmpuint(pt_getattr(c, &v).fileid, ==, fa.fileid);
    g_assert_cmpuint(pt_getattr(c, &v).fileid, !=, va.fileid);
    pt_stat(c, nr_getattr(c, &victim, NULL), NFS3ERR_STALE);

    /* Renaming a name onto itself changes nothing. */
    pt_ok(c, nr_rename(c, &dir, "victim", &dir, "victim", &res));
    g_assert_cmpuint(pt_getattr(c, &v).fileid, ==, fa.fileid);
    nr_close(c);
}

static void test_rename_cross_dir(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    RENAME3res res;

    nr_fh a = pt_mkdir(c, &dir, "a", 0755);
    nr_fh b = pt_mkdir(c, &dir, "b", 0755);
    nr_fh f = pt_create(c, &a, "file", 0644);
    nr_fh d = pt_mkdir(c, &a, "sub", 0755);
    fattr3 fa = pt_getattr(c, &f);
    fattr3 da = pt_getattr(c, &d);
    g_assert_cmpuint(pt_getattr(c, &a).nlink, ==, 3);

    pt_ok(c, nr_rename(c, &a, "file", &b, "file2", &res));
    pt_stat(c, nr_lookup(c, &a, "file", NULL), NFS3ERR_NOENT);
    g_assert_cmpuint(pt_getattr(c, &f).fileid, ==, fa.fileid);
    nr_fh moved = pt_lookup(c, &b, "file2");
    g_assert_cmpuint(pt_getattr(c, &moved).fileid, ==, fa.fileid);

    /* A directory: nlink moves from one parent to the other, ".." follows. */
    pt_ok(c, nr_rename(c, &a, "sub", &b, "sub", &res));
    g_assert_cmpuint(pt_getattr(c, &a).nlink, ==, 2);
    g_assert_cmpuint(pt_getattr(c, &b).nlink, ==, 3);
    g_assert_cmpuint(pt_post_attr(&res.RENAME3res_u.resok.fromdir_wcc.after).nlink, ==, 2);
    g_assert_cmpuint(pt_post_attr(&res.RENAME3res_u.resok.todir_wcc.after).nlink, ==, 3);
    nr_fh dotdot = pt_lookup(c, &d, "..");
    g_assert_cmpuint(pt_getattr(c, &dotdot).fileid, ==, pt_getattr(c, &b).fileid);
    g_assert_cmpuint(pt_getattr(c, &d).fileid, ==, da.fileid);

    /* A directory over an empty directory. */
    pt_mkdir(c, &a, "empty", 0755);
    pt_ok(c, nr_rename(c, &b, "sub", &a, "empty", &res));
    nr_fh e = pt_lookup(c, &a, "empty");
    g_assert_cmpuint(pt_getattr(c, &e).fileid, ==, da.fileid);
    g_assert_cmpuint(pt_getattr(c, &a).nlink, ==, 3);
    g_assert_cmpuint(pt_getattr(c, &b).nlink, ==, 2);
    nr_close(c);
}

/* Collect a whole READDIR listing with count `count`, checking cookies. */
static GHashTable *readdir_all(nr_ctx *c, const nr_fh *dir, uint32_t count, int *calls)
{
    GHashTable *names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    uint64_t cookie = 0;
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    bool eof = false;

    *calls = 0;
    while (!eof) {
        READDIR3res res;
        pt_ok(c, nr_readdir(c, dir, cookie, verf, count, &res));
        (*calls)++;
        g_assert_cmpint(*calls, <, 10000);
        const READDIR3resok *ok = &res.READDIR3res_u.resok;
        memcpy(verf, ok->cookieverf, sizeof verf);
        for (const entry3 *e = ok->reply.entries; e; e = e->nextentry) {
            g_assert_cmpuint(e->cookie, >, cookie);
            cookie = e->cookie;
            g_assert_false(g_hash_table_contains(names, e->name));
            g_hash_table_insert(names, g_strdup(e->name), GSIZE_TO_POINTER(e->fileid));
        }
        eof = ok->reply.eof;
        g_assert_true(eof || ok->reply.entries);
        nr_arena_clear(c);
    }
    return names;
}

static void test_readdir(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    enum { N = 40 };
    uint64_t ids[N];
    int calls;

    for (int i = 0; i < N; i++) {
        char name[64];
        snprintf(name, sizeof name, "entry-%03d-%s", i, i % 2 ? "odd" : "even");
        nr_fh f = pt_create(c, &dir, name, 0644);
        ids[i] = pt_getattr(c, &f).fileid;
    }

    /* One call with room for everything: all names, eof. */
    GHashTable *names = readdir_all(c, &dir, 65536, &calls);
    g_assert_cmpint(calls, ==, 1);
    g_assert_cmpuint(g_hash_table_size(names), ==, N + 2);
    g_assert_true(g_hash_table_contains(names, "."));
    g_assert_true(g_hash_table_contains(names, ".."));
    g_assert_cmpuint(GPOINTER_TO_SIZE(g_hash_table_lookup(names, ".")), ==,
                     pt_getattr(c, &dir).fileid);
    for (int i = 0; i < N; i++) {
        char name[64];
        snprintf(name, sizeof name, "entry-%03d-%s", i, i % 2 ? "odd" : "even");
        g_assert_cmpuint(GPOINTER_TO_SIZE(g_hash_table_lookup(names, name)), ==, ids[i]);
    }
    g_hash_table_unref(names);

    /* Small pages: the cookie verifier from one reply continues the listing. */
    names = readdir_all(c, &dir, 512, &calls);
    g_assert_cmpint(calls, >, 1);
    g_assert_cmpuint(g_hash_table_size(names), ==, N + 2);
    g_hash_table_unref(names);

    /* An empty directory: "." and "..", eof. */
    nr_fh empty = pt_mkdir(c, &dir, "zz-empty", 0755);
    names = readdir_all(c, &empty, 4096, &calls);
    g_assert_cmpuint(g_hash_table_size(names), ==, 2);
    g_hash_table_unref(names);
    nr_close(c);
}

static void test_readdirplus(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    enum { N = 30 };
    uint64_t cookie = 0;
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    bool eof = false;
    int seen = 0, calls = 0;
    GHashTable *names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "p%02d", i);
        nr_fh f = pt_create(c, &dir, name, 0600 + i % 8);
        pt_write(c, &f, 0, "abcdefghijklmnopqrstuvwxyz0123456789", (uint32_t)i);
    }
    while (!eof) {
        READDIRPLUS3res res;
        pt_ok(c, nr_readdirplus(c, &dir, cookie, verf, 1024, 4096, &res));
        calls++;
        const READDIRPLUS3resok *ok = &res.READDIRPLUS3res_u.resok;
        memcpy(verf, ok->cookieverf, sizeof verf);
        for (const entryplus3 *e = ok->reply.entries; e; e = e->nextentry) {
            g_assert_cmpuint(e->cookie, >, cookie);
            cookie = e->cookie;
            g_assert_false(g_hash_table_contains(names, e->name));
            g_hash_table_add(names, g_strdup(e->name));
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            int i = atoi(e->name + 1);
            fattr3 a = pt_post_attr(&e->name_attributes);
            g_assert_cmpuint(a.fileid, ==, e->fileid);
            g_assert_cmpint(a.type, ==, NF3REG);
            g_assert_cmpuint(a.mode, ==, 0600u + (unsigned)(i % 8));
            g_assert_cmpuint(a.size, ==, (unsigned)i);
            g_assert_cmpuint(a.uid, ==, PT_OWNER_UID);
            nr_fh h = pt_post_fh(&e->name_handle);
            fattr3 g = pt_getattr(c, &h);
            g_assert_cmpuint(g.fileid, ==, e->fileid);
            g_assert_cmpuint(g.size, ==, (unsigned)i);
            seen++;
        }
        eof = ok->reply.eof;
        g_assert_true(eof || ok->reply.entries);
        g_assert_cmpint(calls, <, 1000);
        nr_arena_clear(c);
    }
    g_assert_cmpint(seen, ==, N);
    g_assert_cmpuint(g_hash_table_size(names), ==, N + 2);
    g_assert_cmpint(calls, >, 1); /* 30 entries with attributes do not fit in 4096 bytes */
    g_hash_table_unref(names);
    nr_close(c);
}

/* --- file system ------------------------------------------------------------------------ */

static void test_fsstat(void)
{
    nr_ctx *c = pt_open(NULL);
    FSSTAT3res res;

    pt_ok(c, nr_fsstat(c, &pt.root, &res));
    const FSSTAT3resok *ok = &res.FSSTAT3res_u.resok;
    g_assert_cmpuint(pt_post_attr(&ok->obj_attributes).fileid, ==, pt_getattr(c, &pt.root).fileid);
    g_assert_cmpuint(ok->tbytes, >, 0);
    g_assert_cmpuint(ok->fbytes, <=, ok->tbytes);
    g_assert_cmpuint(ok->abytes, <=, ok->fbytes);
    g_assert_cmpuint(ok->tfiles, >, 0);
    g_assert_cmpuint(ok->ffiles, <=, ok->tfiles);
    g_assert_cmpuint(ok->afiles, <=, ok->ffiles);
    nr_close(c);
}

static void test_fsinfo(void)
{
    nr_ctx *c = pt_open(NULL);
    FSINFO3res res;

    pt_ok(c, nr_fsinfo(c, &pt.root, &res));
    const FSINFO3resok *ok = &res.FSINFO3res_u.resok;
    g_assert_true(ok->obj_attributes.attributes_follow);
    g_assert_cmpuint(ok->rtmax, >=, 65536);
    g_assert_cmpuint(ok->wtmax, >=, 65536);
    g_assert_cmpuint(ok->rtpref, >, 0);
    g_assert_cmpuint(ok->rtpref, <=, ok->rtmax);
    g_assert_cmpuint(ok->wtpref, >, 0);
    g_assert_cmpuint(ok->wtpref, <=, ok->wtmax);
    g_assert_cmpuint(ok->dtpref, >, 0);
    g_assert_cmpuint(ok->maxfilesize, ==, (uint64_t)INT64_MAX);
    /* Times are kept to the nanosecond. */
    g_assert_cmpuint(ok->time_delta.seconds, ==, 0);
    g_assert_cmpuint(ok->time_delta.nseconds, ==, 1);
    g_assert_cmphex(ok->properties, ==,
                    FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME);

    /* A READ of rtmax bytes and a WRITE of wtmax bytes are served whole. */
    nr_fh dir = pt_fresh_dir();
    nr_fh f = pt_create(c, &dir, "big", 0644);
    uint32_t n = ok->wtmax;
    char *buf = g_malloc(n);
    for (uint32_t i = 0; i < n; i++)
        buf[i] = (char)(i ^ (i >> 9));
    WRITE3res w;
    pt_ok(c, nr_write(c, &f, 0, buf, n, FILE_SYNC, &w));
    g_assert_cmpuint(w.WRITE3res_u.resok.count, ==, n);
    READ3res r;
    uint32_t m = ok->rtmax < n ? ok->rtmax : n;
    pt_ok(c, nr_read(c, &f, 0, m, &r));
    g_assert_cmpuint(r.READ3res_u.resok.count, ==, m);
    g_assert_cmpmem(r.READ3res_u.resok.data.data_val, m, buf, m);

    /* A READ asking for more than rtmax gets at most rtmax. */
    pt_ok(c, nr_write(c, &f, n, buf, n, FILE_SYNC, &w));
    pt_ok(c, nr_read(c, &f, 0, 2 * ok->rtmax + 2 * n, &r));
    g_assert_cmpuint(r.READ3res_u.resok.count, >, 0);
    g_assert_cmpuint(r.READ3res_u.resok.count, <=, ok->rtmax);
    g_assert_cmpuint(r.READ3res_u.resok.data.data_len, ==, r.READ3res_u.resok.count);
    g_free(buf);
    nr_close(c);
}

static void test_pathconf(void)
{
    nr_ctx *c = pt_open(NULL);
    PATHCONF3res res;

    pt_ok(c, nr_pathconf(c, &pt.root, &res));
    const PATHCONF3resok *ok = &res.PATHCONF3res_u.resok;
    g_assert_cmpuint(ok->name_max, ==, 255);
    g_assert_cmpuint(ok->linkmax, >=, 2);
    g_assert_true(ok->no_trunc);
    g_assert_true(ok->chown_restricted);
    g_assert_false(ok->case_insensitive);
    g_assert_true(ok->case_preserving);
    nr_close(c);
}

/* --- wcc data ---------------------------------------------------------------------------- */

static void test_wcc_create(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    CREATE3res cr;
    MKDIR3res mr;
    sattr3 sa = nr_sattr_mode(0644);

    fattr3 before = pt_getattr(c, &dir);
    pt_ok(c, nr_create(c, &dir, "f", GUARDED, &sa, NULL, &cr));
    fattr3 after = pt_getattr(c, &dir);
    assert_wcc(&cr.CREATE3res_u.resok.dir_wcc, &before, &after);
    g_assert_true(time_before_eq(before.mtime, after.mtime));
    g_assert_false(before.mtime.seconds == after.mtime.seconds &&
                   before.mtime.nseconds == after.mtime.nseconds);

    before = after;
    pt_ok(c, nr_mkdir(c, &dir, "d", &sa, &mr));
    after = pt_getattr(c, &dir);
    assert_wcc(&mr.MKDIR3res_u.resok.dir_wcc, &before, &after);
    g_assert_cmpuint(after.nlink, ==, before.nlink + 1);
    nr_close(c);
}

static void test_wcc_remove(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    REMOVE3res res;

    pt_create(c, &dir, "f", 0644);
    fattr3 before = pt_getattr(c, &dir);
    pt_ok(c, nr_remove(c, &dir, "f", &res));
    fattr3 after = pt_getattr(c, &dir);
    assert_wcc(&res.REMOVE3res_u.resok.dir_wcc, &before, &after);
    g_assert_false(before.mtime.seconds == after.mtime.seconds &&
                   before.mtime.nseconds == after.mtime.nseconds);

    /* A failed REMOVE still reports the directory's attributes. */
    before = after;
    pt_stat(c, nr_remove(c, &dir, "f", &res), NFS3ERR_NOENT);
    g_assert_true(res.REMOVE3res_u.resfail.dir_wcc.after.attributes_follow);
    g_assert_cmpuint(pt_post_attr(&res.REMOVE3res_u.resfail.dir_wcc.after).fileid, ==,
                     before.fileid);
    nr_close(c);
}

static void test_wcc_rename(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    RENAME3res res;

    nr_fh a = pt_mkdir(c, &dir, "a", 0755);
    nr_fh b = pt_mkdir(c, &dir, "b", 0755);
    pt_create(c, &a, "f", 0644);
    pt_create(c, &a, "g", 0644);

    fattr3 a_before = pt_getattr(c, &a);
    fattr3 b_before = pt_getattr(c, &b);
    pt_ok(c, nr_rename(c, &a, "f", &b, "f", &res));
    fattr3 a_after = pt_getattr(c, &a);
    fattr3 b_after = pt_getattr(c, &b);
    assert_wcc(&res.RENAME3res_u.resok.fromdir_wcc, &a_before, &a_after);
    assert_wcc(&res.RENAME3res_u.resok.todir_wcc, &b_before, &b_after);

    /* Same directory: both wcc describe it. */
    a_before = a_after;
    pt_ok(c, nr_rename(c, &a, "g", &a, "h", &res));
    a_after = pt_getattr(c, &a);
    fattr3 from_post = pt_post_attr(&res.RENAME3res_u.resok.fromdir_wcc.after);
    fattr3 to_post = pt_post_attr(&res.RENAME3res_u.resok.todir_wcc.after);
    g_assert_cmpuint(from_post.fileid, ==, a_after.fileid);
    g_assert_cmpuint(to_post.fileid, ==, a_after.fileid);
    pt_assert_time(to_post.mtime, a_after.mtime);
    g_assert_true(res.RENAME3res_u.resok.fromdir_wcc.before.attributes_follow);
    const wcc_attr *pre = &res.RENAME3res_u.resok.fromdir_wcc.before.pre_op_attr_u.attributes;
    pt_assert_time(pre->mtime, a_before.mtime);
    nr_close(c);
}

static void test_wcc_setattr(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    SETATTR3res res;

    nr_fh f = pt_create(c, &dir, "f", 0644);
    pt_write(c, &f, 0, "hello", 5);
    fattr3 before = pt_getattr(c, &f);
    sattr3 sa = nr_sattr_none();
    sa.size.set_it = 1;
    sa.size.set_size3_u.size = 3;
    pt_ok(c, nr_setattr(c, &f, &sa, NULL, &res));
    fattr3 after = pt_getattr(c, &f);
    g_assert_cmpuint(after.size, ==, 3);
    assert_wcc(&res.SETATTR3res_u.resok.obj_wcc, &before, &after);

    before = after;
    sa = nr_sattr_mode(0600);
    pt_ok(c, nr_setattr(c, &f, &sa, NULL, &res));
    after = pt_getattr(c, &f);
    assert_wcc(&res.SETATTR3res_u.resok.obj_wcc, &before, &after);
    pt_assert_time(after.mtime, before.mtime); /* chmod changes ctime only */
    g_assert_false(before.ctime.seconds == after.ctime.seconds &&
                   before.ctime.nseconds == after.ctime.nseconds);
    nr_close(c);
}

static void test_wcc_write(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    WRITE3res res;
    char buf[9000];

    memset(buf, 'w', sizeof buf);
    nr_fh f = pt_create(c, &dir, "f", 0644);
    pt_write(c, &f, 0, buf, 100);
    fattr3 before = pt_getattr(c, &f);
    pt_ok(c, nr_write(c, &f, 8000, buf, sizeof buf, FILE_SYNC, &res));
    fattr3 after = pt_getattr(c, &f);
    g_assert_cmpuint(after.size, ==, 8000 + sizeof buf);
    assert_wcc(&res.WRITE3res_u.resok.file_wcc, &before, &after);
    g_assert_false(before.mtime.seconds == after.mtime.seconds &&
                   before.mtime.nseconds == after.mtime.nseconds);

    before = after;
    pt_ok(c, nr_write(c, &f, 10, buf, 10, UNSTABLE, &res));
    after = pt_getattr(c, &f);
    assert_wcc(&res.WRITE3res_u.resok.file_wcc, &before, &after);
    nr_close(c);
}

int main(int argc, char **argv)
{
    pt_init(&argc, &argv);
    pt_add("/procs/null", test_null);
    pt_add("/procs/mount", test_mount);
    pt_add("/procs/getattr", test_getattr);
    pt_add("/procs/setattr", test_setattr);
    pt_add("/procs/lookup", test_lookup);
    pt_add("/procs/access", test_access);
    pt_add("/procs/symlink_readlink", test_symlink_readlink);
    pt_add("/procs/mknod", test_mknod);
    pt_add("/procs/link", test_link);
    pt_add("/procs/read_write_commit", test_read_write_commit);
    pt_add("/procs/create_modes", test_create_modes);
    pt_add("/procs/mkdir", test_mkdir);
    pt_add("/procs/remove_rmdir", test_remove_rmdir);
    pt_add("/procs/rename_same_dir", test_rename_same_dir);
    pt_add("/procs/rename_cross_dir", test_rename_cross_dir);
    pt_add("/procs/readdir", test_readdir);
    pt_add("/procs/readdirplus", test_readdirplus);
    pt_add("/procs/fsstat", test_fsstat);
    pt_add("/procs/fsinfo", test_fsinfo);
    pt_add("/procs/pathconf", test_pathconf);
    pt_add("/wcc/create_mkdir", test_wcc_create);
    pt_add("/wcc/remove", test_wcc_remove);
    pt_add("/wcc/rename", test_wcc_rename);
    pt_add("/wcc/setattr", test_wcc_setattr);
    pt_add("/wcc/write", test_wcc_write);
    return pt_run();
}
