/*
 * test_access.c -- who gets in, and as whom: exports, squashing, secure
 * ports, handles that cannot be forged, and credentials that are refused,
 * all through a real server.
 *
 * One server with these exports (cfg syntax) serves every case:
 *
 *   /        127.0.0.1(rw,no_root_squash)           (the fixture's default)
 *   /ro      127.0.0.1(ro,no_root_squash)
 *   /sq      127.0.0.1(rw)                           root_squash by default
 *   /all     127.0.0.1(rw,all_squash,anonuid=3000,anongid=3001)
 *   /anon    127.0.0.1(rw,anonuid=4000,anongid=4001)
 *   /sec     127.0.0.2(rw,secure,no_root_squash)
 *   /other   127.0.0.2(rw,no_root_squash)
 *   /host    localhost(ro,no_root_squash)            a host-name pattern
 *   /nohost  no-such-host.invalid(ro)                a name that resolves nowhere
 *   /mixed   127.0.0.2(rw,no_root_squash) 127.0.0.1(ro,no_root_squash)
 *   /net     127.0.0.0/30(ro,no_root_squash)         a network
 *
 * A client that an export does not admit is simulated by binding the
 * client socket to another loopback address (127.0.0.2, 127.0.0.5: Linux
 * routes all of 127/8 to lo) and sending hand-built records. MNT picks the
 * longest export path that contains the path and admits the client, so
 * 127.0.0.1, admitted by "/", mounts every directory; the cases tell which
 * export it got by whether it may write there (the patterns being tested
 * are read-only ones). `secure` needs a source port below 1024: the tests
 * run as root (as CI does); as another user the privileged half of that
 * case is skipped with a message. The raw calls go over TCP, and once
 * more over UDP (/access/udp: the server takes the client's address from
 * each datagram there).
 *
 * /access/exec_only: a program that others may execute but not read runs
 * (a client executes a file by READing it with the caller's credentials:
 * READ is allowed to whoever the execute bit admits, as Linux knfsd
 * allows it), ACCESS still reports the true bits, and the owner reads and
 * writes its own file of mode 000.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptest.h"

enum { RECV_MS = 30000 };

static const char *const access_exports[] = {
    "exports./ro=127.0.0.1(ro,no_root_squash)",
    "exports./sq=127.0.0.1(rw)",
    "exports./all=127.0.0.1(rw,all_squash,anonuid=3000,anongid=3001)",
    "exports./anon=127.0.0.1(rw,anonuid=4000,anongid=4001)",
    "exports./sec=127.0.0.2(rw,secure,no_root_squash)",
    "exports./other=127.0.0.2(rw,no_root_squash)",
    "exports./host=localhost(ro,no_root_squash)",
    "exports./nohost=no-such-host.invalid(ro)",
    "exports./mixed=127.0.0.2(rw,no_root_squash) 127.0.0.1(ro,no_root_squash)",
    "exports./net=127.0.0.0/30(ro,no_root_squash)",
    NULL,
};
static const char *const access_dirs[] = {"ro",   "sq",     "all",   "anon", "sec", "other",
                                          "host", "nohost", "mixed", "net",  NULL};

static uint32_t next_xid(void)
{
    static uint32_t counter;

    return ((uint32_t)getpid() << 16) + ++counter;
}

/* ---- raw calls from a chosen source address and port ------------------------ */

/* The transport raw_from() uses: TCP, or UDP while raw_udp is set. */
static bool raw_udp;

/* One call on a new connection (or a new UDP socket) from addr:lport; the
 * reply (asserted to be one, for this xid). */
static GByteArray *raw_from(const char *addr, unsigned lport, const GByteArray *rec, nr_reply *rep)
{
    int fd = raw_udp ? nr_udp_connect_addr(pt.port, addr, lport)
                     : nr_raw_connect_addr(pt.port, addr, lport);

    if (fd < 0)
        g_error("cannot connect from %s port %u: %s", addr, lport, g_strerror(errno));
    GByteArray *reply = NULL;
    if (!raw_udp)
        reply = nr_raw_call(fd, rec, RECV_MS);
    else if (nr_udp_send(fd, rec->data, rec->len) == 0)
        reply = nr_udp_recv(fd, RECV_MS);
    g_assert_nonnull(reply);
    g_assert_true(nr_reply_parse(reply, rep));
    g_assert_cmphex(rep->xid, ==, nr_get_u32(rec, 0));
    close(fd);
    return reply;
}

/* The status word of an accepted, executed call. */
static int raw_status(const GByteArray *reply, const nr_reply *rep)
{
    g_assert_cmpuint(rep->reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep->accept_stat, ==, NR_SUCCESS);
    return (int)nr_get_u32(reply, rep->body);
}

/* An nfs_fh3 at offset off of reply (length word, bytes). */
static nr_fh raw_fh_at(const GByteArray *reply, size_t off)
{
    nr_fh fh = {0};

    fh.len = nr_get_u32(reply, off);
    g_assert_cmpuint(fh.len, <=, sizeof fh.data);
    g_assert_cmpuint(off + 4 + fh.len, <=, reply->len);
    memcpy(fh.data, reply->data + off + 4, fh.len);
    return fh;
}

/* MNT path from addr:lport as root. Returns the mountstat3; *fh on MNT3_OK. */
static int raw_mnt(const char *addr, unsigned lport, const char *path, nr_fh *fh)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    nr_xdr_call(rec, next_xid(), NR_MOUNT_PROGRAM, 3, 1, &pt_root);
    nr_xdr_string(rec, path);
    GByteArray *reply = raw_from(addr, lport, rec, &rep);
    int st = raw_status(reply, &rep);
    if (st == MNT3_OK && fh)
        *fh = raw_fh_at(reply, rep.body + 4);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    return st;
}

static int raw_getattr(const char *addr, unsigned lport, const nr_fh *fh)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 1, &pt_root);
    nr_xdr_fh(rec, fh);
    GByteArray *reply = raw_from(addr, lport, rec, &rep);
    int st = raw_status(reply, &rep);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    return st;
}

/* LOOKUP; *out gets the object's handle on NFS3_OK. */
static int raw_lookup(const char *addr, unsigned lport, const nr_fh *dir, const char *name,
                      nr_fh *out)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 3, &pt_root);
    nr_xdr_fh(rec, dir);
    nr_xdr_string(rec, name);
    GByteArray *reply = raw_from(addr, lport, rec, &rep);
    int st = raw_status(reply, &rep);
    if (st == NFS3_OK && out)
        *out = raw_fh_at(reply, rep.body + 4);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    return st;
}

/* GUARDED CREATE of name in dir with mode 0644, as root. */
static int raw_create(const char *addr, unsigned lport, const nr_fh *dir, const char *name)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 8, &pt_root);
    nr_xdr_fh(rec, dir);
    nr_xdr_string(rec, name);
    nr_xdr_u32(rec, GUARDED);
    nr_xdr_u32(rec, 1); /* set mode */
    nr_xdr_u32(rec, 0644);
    for (int i = 0; i < 5; i++)
        nr_xdr_u32(rec, 0); /* uid, gid, size, atime, mtime: not set */
    GByteArray *reply = raw_from(addr, lport, rec, &rep);
    int st = raw_status(reply, &rep);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    return st;
}

/* MNT path from 127.0.0.1 through libnfs, asserting success. */
static nr_fh mnt_local(const char *path)
{
    nr_ctx *m = pt_open_mount(NULL);
    nr_fh fh;

    g_assert_cmpint(nr_mnt(m, path, NULL, &fh), ==, MNT3_OK);
    nr_close(m);
    return fh;
}

/* Can root write into directory dir (through the export its handle names)?
 * Creates and removes a file; NFS3ERR_ROFS means the export is read-only. */
static int try_write(nr_ctx *c, const nr_fh *dir)
{
    char name[64];
    sattr3 sa = nr_sattr_mode(0644);

    snprintf(name, sizeof name, "probe-%d-%u", (int)getpid(), next_xid());
    int st = nr_create(c, dir, name, GUARDED, &sa, NULL, NULL);
    if (st == NFS3_OK)
        pt_ok(c, nr_remove(c, dir, name, NULL));
    return st;
}

/* The server still answers. */
static void assert_alive(void)
{
    nr_ctx *c = pt_open(NULL);

    g_assert_cmpint(nr_null(c), ==, 0);
    pt_getattr(c, &pt.root);
    nr_close(c);
}

/* ---- exports: who gets in ----------------------------------------------------- */

static void test_mount_refused(void)
{
    nr_fh fh;
    nr_ctx *c = pt_open(NULL);

    /* "/" admits only 127.0.0.1. */
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/", NULL), ==, MNT3ERR_ACCES);
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/ro", NULL), ==, MNT3ERR_ACCES);
    g_assert_cmpint(raw_mnt("127.0.0.1", 0, "/", NULL), ==, MNT3_OK);
    /* "/other" admits 127.0.0.2 and nobody else it does not name. */
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/other", &fh), ==, MNT3_OK);
    g_assert_cmpint(raw_mnt("127.0.0.5", 0, "/other", NULL), ==, MNT3ERR_ACCES);
    /* A path below an export is that export's too. */
    g_assert_cmpint(raw_mnt("127.0.0.5", 0, "/other/..", NULL), ==, MNT3ERR_INVAL);
    /* CIDR: 127.0.0.0/30 holds .0 to .3. */
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/net", NULL), ==, MNT3_OK);
    g_assert_cmpint(raw_mnt("127.0.0.3", 0, "/net", NULL), ==, MNT3_OK);
    g_assert_cmpint(raw_mnt("127.0.0.4", 0, "/net", NULL), ==, MNT3ERR_ACCES);
    /* Host names: localhost is 127.0.0.1 here, not 127.0.0.2; a name that
     * does not resolve admits nobody. */
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/host", NULL), ==, MNT3ERR_ACCES);
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/nohost", NULL), ==, MNT3ERR_ACCES);
    /* 127.0.0.1 mounts them (through "/" if nothing closer admits it):
     * "localhost" admits it -- read-only; the unresolvable name does not --
     * so it gets "/", writable; the network admits it -- read-only. */
    nr_fh host = mnt_local("/host"), nohost = mnt_local("/nohost"), net = mnt_local("/net");
    pt_stat(c, try_write(c, &host), NFS3ERR_ROFS);
    pt_ok(c, try_write(c, &nohost));
    pt_stat(c, try_write(c, &net), NFS3ERR_ROFS);
    nr_close(c);
    assert_alive();
}

static void test_nfs_refused(void)
{
    nr_ctx *c = pt_open(NULL);
    nr_fh other, dir = pt_fresh_dir();

    /* A valid handle of export "/" from a client "/" does not admit. */
    g_assert_cmpint(raw_getattr("127.0.0.1", 0, &pt.root), ==, NFS3_OK);
    g_assert_cmpint(raw_getattr("127.0.0.2", 0, &pt.root), ==, NFS3ERR_ACCES);
    g_assert_cmpint(raw_getattr("127.0.0.2", 0, &dir), ==, NFS3ERR_ACCES);
    g_assert_cmpint(raw_lookup("127.0.0.2", 0, &pt.root, "other", NULL), ==, NFS3ERR_ACCES);
    g_assert_cmpint(raw_create("127.0.0.2", 0, &dir, "intruder"), ==, NFS3ERR_ACCES);
    pt_stat(c, nr_lookup(c, &dir, "intruder", NULL), NFS3ERR_NOENT);

    /* A handle of export "/other" (admits 127.0.0.2 only) from 127.0.0.1,
     * which "/" admits: the handle's export decides. */
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/other", &other), ==, MNT3_OK);
    g_assert_cmpint(raw_getattr("127.0.0.2", 0, &other), ==, NFS3_OK);
    g_assert_cmpint(raw_getattr("127.0.0.1", 0, &other), ==, NFS3ERR_ACCES);
    pt_stat(c, nr_getattr(c, &other, NULL), NFS3ERR_ACCES);
    pt_stat(c, nr_create(c, &other, "intruder", GUARDED, NULL, NULL, NULL), NFS3ERR_ACCES);
    g_assert_cmpint(raw_create("127.0.0.2", 0, &other, "guest"), ==, NFS3_OK);
    nr_close(c);
}

/* ".." of an export's root stays in the export: a client admitted to
 * "/other" only cannot climb to "/". */
static void test_export_boundary(void)
{
    nr_fh other, up, sub, subup;
    nr_ctx *c = pt_open(NULL);

    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/other", &other), ==, MNT3_OK);
    g_assert_cmpint(raw_lookup("127.0.0.2", 0, &other, "..", &up), ==, NFS3_OK);
    g_assert_true(nr_fh_equal(&up, &other));
    g_assert_cmpint(raw_lookup("127.0.0.2", 0, &other, ".", &up), ==, NFS3_OK);
    g_assert_true(nr_fh_equal(&up, &other));
    /* A subdirectory's ".." is the export root again. */
    nr_fh rootside = pt_lookup(c, &pt.root, "other");
    char name[64];
    snprintf(name, sizeof name, "sub-%d", (int)getpid());
    pt_mkdir(c, &rootside, name, 0777);
    g_assert_cmpint(raw_lookup("127.0.0.2", 0, &other, name, &sub), ==, NFS3_OK);
    g_assert_cmpint(raw_lookup("127.0.0.2", 0, &sub, "..", &subup), ==, NFS3_OK);
    g_assert_true(nr_fh_equal(&subup, &other));
    g_assert_cmpint(raw_lookup("127.0.0.2", 0, &subup, "..", &up), ==, NFS3_OK);
    g_assert_true(nr_fh_equal(&up, &other));

    /* The same through libnfs for read-only "/ro" from 127.0.0.1. */
    nr_fh ro = mnt_local("/ro");
    g_assert_true(nr_fh_equal((nr_fh[]){pt_lookup(c, &ro, "..")}, &ro));
    /* READDIRPLUS gives no handle for ".." of an export root, or the root's own. */
    READDIRPLUS3res rp;
    pt_ok(c, nr_readdirplus(c, &ro, 0, NULL, 4096, 65536, &rp));
    for (const entryplus3 *e = rp.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
        if (strcmp(e->name, "..") == 0 && e->name_handle.handle_follows) {
            nr_fh h = nr_fh_from(&e->name_handle.post_op_fh3_u.handle);
            g_assert_true(nr_fh_equal(&h, &ro));
        }
    }
    nr_close(c);
}

/* ---- read-only exports ---------------------------------------------------------- */

static void check_rofs(nr_ctx *c, const nr_fh *ro)
{
    nr_fh f = pt_lookup(c, ro, "f"), d = pt_lookup(c, ro, "d");
    sattr3 mode = nr_sattr_mode(0600), size = nr_sattr_none();
    char verf[NFS3_CREATEVERFSIZE] = "verfverf";

    size.size.set_it = 1;
    size.size.set_size3_u.size = 0;
    pt_stat(c, nr_setattr(c, &f, &mode, NULL, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_setattr(c, &f, &size, NULL, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_setattr(c, ro, &mode, NULL, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_write(c, &f, 0, "xx", 2, FILE_SYNC, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_write(c, &f, 1000, "xx", 2, UNSTABLE, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_create(c, ro, "new", UNCHECKED, &mode, NULL, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_create(c, ro, "new", GUARDED, &mode, NULL, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_create(c, ro, "new", EXCLUSIVE, NULL, verf, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_create(c, ro, "f", UNCHECKED, &size, NULL, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_mkdir(c, ro, "new", &mode, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_symlink(c, ro, "new", "f", NULL, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_mknod(c, ro, "new", NF3FIFO, &mode, 0, 0, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_mknod(c, ro, "new", NF3CHR, &mode, 1, 3, NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_remove(c, ro, "f", NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_rmdir(c, ro, "d", NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_rename(c, ro, "f", ro, "g", NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_rename(c, ro, "f", &d, "f", NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_link(c, &f, ro, "f2", NULL), NFS3ERR_ROFS);
    pt_stat(c, nr_link(c, &f, &d, "f2", NULL), NFS3ERR_ROFS);

    /* Reading works, and ACCESS grants nothing that writes. */
    READ3res rd;
    pt_ok(c, nr_read(c, &f, 0, 100, &rd));
    g_assert_cmpmem(rd.READ3res_u.resok.data.data_val, rd.READ3res_u.resok.data.data_len,
                    "read-only data", 14);
    ACCESS3res ac;
    pt_ok(c, nr_access(c, &f, 0x3f, &ac));
    g_assert_cmphex(ac.ACCESS3res_u.resok.access & (ACCESS3_MODIFY | ACCESS3_EXTEND), ==, 0);
    g_assert_cmphex(ac.ACCESS3res_u.resok.access & ACCESS3_READ, ==, ACCESS3_READ);
    pt_ok(c, nr_access(c, ro, 0x3f, &ac));
    g_assert_cmphex(
        ac.ACCESS3res_u.resok.access & (ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE), ==, 0);
    pt_ok(c, nr_readdir(c, ro, 0, NULL, 4096, NULL));
    pt_ok(c, nr_commit(c, &f, 0, 0, NULL));
}

static void test_rofs(void)
{
    nr_ctx *root = pt_open(NULL), *owner = pt_open(&pt_owner);
    nr_fh ro = mnt_local("/ro");

    check_rofs(root, &ro);
    check_rofs(owner, &ro);

    /* Nothing changed, as the read-write export shows. */
    nr_fh rw = pt_lookup(root, &pt.root, "ro");
    nr_fh f = pt_lookup(root, &rw, "f");
    fattr3 a = pt_getattr(root, &f);
    g_assert_cmpuint(a.size, ==, 14);
    g_assert_cmpuint(a.mode & 07777, ==, 0666);
    g_assert_cmpuint(a.nlink, ==, 1);
    READDIR3res rd;
    pt_ok(root, nr_readdir(root, &rw, 0, NULL, 4096, &rd));
    unsigned n = 0;
    for (const entry3 *e = rd.READDIR3res_u.resok.reply.entries; e; e = e->nextentry)
        n++;
    g_assert_cmpuint(n, ==, 5); /* . .. f d l */

    /* Through "/" the same directory is writable. */
    pt_ok(root, try_write(root, &rw));

    /* The first pattern that admits a client decides: "/mixed" is rw for
     * 127.0.0.2 (listed first) and ro for 127.0.0.1. */
    nr_fh mixed, mixed2;
    mixed = mnt_local("/mixed");
    pt_stat(root, try_write(root, &mixed), NFS3ERR_ROFS);
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/mixed", &mixed2), ==, MNT3_OK);
    char name[64];
    snprintf(name, sizeof name, "m-%d", (int)getpid());
    g_assert_cmpint(raw_create("127.0.0.2", 0, &mixed2, name), ==, NFS3_OK);
    g_assert_cmpint(raw_create("127.0.0.1", 0, &mixed, "x"), ==, NFS3ERR_ROFS);
    nr_close(root);
    nr_close(owner);
}

/* ---- squashing ------------------------------------------------------------------- */

/* Create name in dir as c and return its attributes. */
static fattr3 created(nr_ctx *c, const nr_fh *dir, const char *name)
{
    nr_fh f = pt_create(c, dir, name, 0644);

    return pt_getattr(c, &f);
}

static void test_root_squash(void)
{
    nr_ctx *root = pt_open(NULL), *owner = pt_open(&pt_owner);
    uint32_t groups[] = {5, 0, 7};
    nr_cred root_groups = pt_cred(0, 0, 3, groups);
    nr_ctx *rootg = pt_open(&root_groups);
    nr_fh sq = mnt_local("/sq");
    char name[64];

    /* Without squashing (export "/"), root is root. */
    nr_fh dir = pt_fresh_dir();
    fattr3 a = created(root, &dir, "mine");
    g_assert_cmpuint(a.uid, ==, 0);
    g_assert_cmpuint(a.gid, ==, 0);

    /* root_squash (the default): uid 0 and gid 0 become 65534. */
    snprintf(name, sizeof name, "root-%d", (int)getpid());
    a = created(root, &sq, name);
    g_assert_cmpuint(a.uid, ==, 65534);
    g_assert_cmpuint(a.gid, ==, 65534);
    snprintf(name, sizeof name, "rootg-%d", (int)getpid());
    a = created(rootg, &sq, name);
    g_assert_cmpuint(a.uid, ==, 65534);
    g_assert_cmpuint(a.gid, ==, 65534);
    /* Other users are left alone. */
    snprintf(name, sizeof name, "owner-%d", (int)getpid());
    a = created(owner, &sq, name);
    g_assert_cmpuint(a.uid, ==, PT_OWNER_UID);
    g_assert_cmpuint(a.gid, ==, PT_OWNER_GID);

    /* Squashed root has no root powers: another user's 0600 file cannot be
     * read, chowned or chmodded; a root-owned 0640 file with group 0 is not
     * readable through group 0 either (group 0 is squashed too). */
    nr_fh owned = pt_lookup(owner, &sq, name);
    pt_chmod(owner, &owned, 0600);
    pt_write(owner, &owned, 0, "secret", 6);
    pt_stat(root, nr_read(root, &owned, 0, 6, NULL), NFS3ERR_ACCES);
    sattr3 sa = nr_sattr_mode(0666);
    pt_stat(root, nr_setattr(root, &owned, &sa, NULL, NULL), NFS3ERR_PERM);
    sa = nr_sattr_none();
    sa.uid.set_it = 1;
    sa.uid.set_uid3_u.uid = 0;
    pt_stat(root, nr_setattr(root, &owned, &sa, NULL, NULL), NFS3ERR_PERM);
    nr_fh rwside = pt_lookup(root, &pt.root, "sq");
    snprintf(name, sizeof name, "grp0-%d", (int)getpid());
    nr_fh g0 = pt_create(root, &rwside, name, 0640);
    pt_write(root, &g0, 0, "grp", 3);
    nr_fh g0sq = pt_lookup(rootg, &sq, name);
    pt_stat(rootg, nr_read(rootg, &g0sq, 0, 3, NULL), NFS3ERR_ACCES);
    /* The same file through "/" (no squashing) reads. */
    pt_ok(root, nr_read(root, &g0, 0, 3, NULL));
    nr_close(root);
    nr_close(owner);
    nr_close(rootg);
}

static void test_all_squash(void)
{
    nr_ctx *root = pt_open(NULL), *owner = pt_open(&pt_owner);
    nr_fh all = mnt_local("/all");
    char name[64];

    snprintf(name, sizeof name, "root-%d", (int)getpid());
    fattr3 a = created(root, &all, name);
    g_assert_cmpuint(a.uid, ==, 3000);
    g_assert_cmpuint(a.gid, ==, 3001);
    snprintf(name, sizeof name, "owner-%d", (int)getpid());
    a = created(owner, &all, name);
    g_assert_cmpuint(a.uid, ==, 3000);
    g_assert_cmpuint(a.gid, ==, 3001);
    /* Everyone is the anonymous user: the owner's own file through "/" is
     * not his through "/all". */
    nr_fh dir = pt_lookup(root, &pt.root, "all");
    snprintf(name, sizeof name, "priv-%d", (int)getpid());
    nr_fh f = pt_create(owner, &dir, name, 0600);
    nr_fh fall = pt_lookup(owner, &all, name);
    pt_ok(owner, nr_read(owner, &f, 0, 1, NULL));
    pt_stat(owner, nr_read(owner, &fall, 0, 1, NULL), NFS3ERR_ACCES);
    pt_stat(owner, nr_write(owner, &fall, 0, "x", 1, FILE_SYNC, NULL), NFS3ERR_ACCES);
    nr_close(root);
    nr_close(owner);
}

static void test_anon_ids(void)
{
    nr_ctx *root = pt_open(NULL), *owner = pt_open(&pt_owner);
    nr_fh anon = mnt_local("/anon");
    char name[64];

    snprintf(name, sizeof name, "root-%d", (int)getpid());
    fattr3 a = created(root, &anon, name);
    g_assert_cmpuint(a.uid, ==, 4000);
    g_assert_cmpuint(a.gid, ==, 4001);
    snprintf(name, sizeof name, "owner-%d", (int)getpid());
    a = created(owner, &anon, name);
    g_assert_cmpuint(a.uid, ==, PT_OWNER_UID);
    g_assert_cmpuint(a.gid, ==, PT_OWNER_GID);
    nr_close(root);
    nr_close(owner);
}

/* ---- secure: privileged source ports only ------------------------------------------ */

static void test_secure(void)
{
    nr_fh sec;

    /* From an unprivileged port (the kernel's ephemeral range): refused. */
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/sec", NULL), ==, MNT3ERR_ACCES);
    g_assert_cmpint(raw_mnt("127.0.0.2", 5000, "/sec", NULL), ==, MNT3ERR_ACCES);
    if (geteuid() != 0) {
        g_test_skip("not root: cannot bind a port below 1024 for the privileged half");
        return;
    }
    /* From a port below 1024: admitted. */
    g_assert_cmpint(raw_mnt("127.0.0.2", NR_PORT_PRIVILEGED, "/sec", &sec), ==, MNT3_OK);
    g_assert_cmpint(raw_getattr("127.0.0.2", NR_PORT_PRIVILEGED, &sec), ==, NFS3_OK);
    g_assert_cmpint(raw_create("127.0.0.2", NR_PORT_PRIVILEGED, &sec, "ok"), ==, NFS3_OK);
    /* The same handle from unprivileged ports: NFS3ERR_ACCES. */
    g_assert_cmpint(raw_getattr("127.0.0.2", 0, &sec), ==, NFS3ERR_ACCES);
    g_assert_cmpint(raw_getattr("127.0.0.2", 1024, &sec), ==, NFS3ERR_ACCES);
    g_assert_cmpint(raw_create("127.0.0.2", 0, &sec, "nope"), ==, NFS3ERR_ACCES);
    g_assert_cmpint(raw_lookup("127.0.0.2", NR_PORT_PRIVILEGED, &sec, "nope", NULL), ==,
                    NFS3ERR_NOENT);
}

/* ---- the same over UDP -------------------------------------------------------------- */

static void test_udp(void)
{
    nr_fh other, ro, sec;

    raw_udp = true;
    /* MOUNT: a client the export does not name, a network, a host name. */
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/", NULL), ==, MNT3ERR_ACCES);
    g_assert_cmpint(raw_mnt("127.0.0.1", 0, "/", NULL), ==, MNT3_OK);
    g_assert_cmpint(raw_mnt("127.0.0.3", 0, "/net", NULL), ==, MNT3_OK);
    g_assert_cmpint(raw_mnt("127.0.0.4", 0, "/net", NULL), ==, MNT3ERR_ACCES);
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/host", NULL), ==, MNT3ERR_ACCES);
    /* NFS with valid handles from clients their exports do not admit. */
    g_assert_cmpint(raw_getattr("127.0.0.1", 0, &pt.root), ==, NFS3_OK);
    g_assert_cmpint(raw_getattr("127.0.0.2", 0, &pt.root), ==, NFS3ERR_ACCES);
    g_assert_cmpint(raw_create("127.0.0.2", 0, &pt.root, "udp-intruder"), ==, NFS3ERR_ACCES);
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/other", &other), ==, MNT3_OK);
    g_assert_cmpint(raw_getattr("127.0.0.2", 0, &other), ==, NFS3_OK);
    g_assert_cmpint(raw_getattr("127.0.0.1", 0, &other), ==, NFS3ERR_ACCES);
    g_assert_cmpint(raw_getattr("127.0.0.5", 0, &other), ==, NFS3ERR_ACCES);
    /* A read-only export. */
    g_assert_cmpint(raw_mnt("127.0.0.1", 0, "/ro", &ro), ==, MNT3_OK);
    g_assert_cmpint(raw_create("127.0.0.1", 0, &ro, "udp-new"), ==, NFS3ERR_ROFS);
    g_assert_cmpint(raw_lookup("127.0.0.1", 0, &ro, "f", NULL), ==, NFS3_OK);
    /* secure: privileged source ports only. */
    g_assert_cmpint(raw_mnt("127.0.0.2", 0, "/sec", NULL), ==, MNT3ERR_ACCES);
    if (geteuid() == 0) {
        g_assert_cmpint(raw_mnt("127.0.0.2", NR_PORT_PRIVILEGED, "/sec", &sec), ==, MNT3_OK);
        g_assert_cmpint(raw_getattr("127.0.0.2", NR_PORT_PRIVILEGED, &sec), ==, NFS3_OK);
        g_assert_cmpint(raw_getattr("127.0.0.2", 0, &sec), ==, NFS3ERR_ACCES);
    } else {
        g_test_message("not root: the privileged half of secure over UDP skipped");
    }
    raw_udp = false;
    nr_ctx *c = pt_open(NULL);
    pt_stat(c, nr_lookup(c, &pt.root, "udp-intruder", NULL), NFS3ERR_NOENT);
    nr_close(c);
}

/* ---- handles cannot be forged ----------------------------------------------------- */

static bool bad_or_stale(int st)
{
    return st == NFS3ERR_BADHANDLE || st == NFS3ERR_STALE;
}

/* Every single-bit change of a file's and a directory's handle, through
 * the server: GETATTR and a mutating call answer BADHANDLE or STALE. */
static void test_handle_bitflips(void)
{
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_fresh_dir();
    nr_fh f = pt_create(c, &dir, "victim", 0644);
    unsigned bad = 0, stale = 0;

    pt_write(c, &f, 0, "data", 4);
    for (uint32_t bit = 0; bit < f.len * 8; bit++) {
        nr_fh h = f, d = dir;
        h.data[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        d.data[bit / 8 % d.len] ^= (unsigned char)(1u << (bit % 8));
        int st = nr_getattr(c, &h, NULL);
        if (!bad_or_stale(st))
            g_error("bit %u of a file handle flipped: GETATTR answered %s", bit, nr_stat_name(st));
        bad += st == NFS3ERR_BADHANDLE;
        stale += st == NFS3ERR_STALE;
        st = nr_write(c, &h, 0, "XXXX", 4, FILE_SYNC, NULL);
        if (!bad_or_stale(st))
            g_error("bit %u flipped: WRITE answered %s", bit, nr_stat_name(st));
        st = nr_remove(c, &d, "victim", NULL);
        if (!bad_or_stale(st))
            g_error("bit %u of a directory handle flipped: REMOVE answered %s", bit,
                    nr_stat_name(st));
    }
    g_test_message("%u bit flips: %u BADHANDLE, %u STALE", f.len * 8, bad, stale);
    /* Nothing happened to the file. */
    READ3res rd;
    pt_ok(c, nr_read(c, &f, 0, 10, &rd));
    g_assert_cmpmem(rd.READ3res_u.resok.data.data_val, rd.READ3res_u.resok.data.data_len, "data",
                    4);
    nr_close(c);
}

/* Handles made up by a client that knows the layout (fh.h) but not the
 * secret: for an inode it was never given, for another export, with the
 * MAC of another handle. */
static void test_handle_crafted(void)
{
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_fresh_dir();
    nr_fh f = pt_create(c, &dir, "given", 0644);
    nr_ctx *other = pt_open(NULL);
    fattr3 fa = pt_getattr(c, &f);

    /* A file made by someone else: this client never sees its handle. */
    nr_fh hidden = pt_create(other, &dir, "hidden", 0600);
    uint64_t hidden_ino = pt_getattr(other, &hidden).fileid;
    nr_close(other);
    g_assert_cmpuint(f.len, ==, 38);

    /* Same layout as `given`, inode of `hidden`, each generation guess. */
    const uint32_t gens[] = {0, 1, 2, 0x7fffffff, fa.fileid & 0xffffffffu};
    for (size_t i = 0; i < G_N_ELEMENTS(gens); i++) {
        nr_fh h = f;
        for (int k = 0; k < 8; k++)
            h.data[10 + k] = (unsigned char)(hidden_ino >> (56 - 8 * k));
        for (int k = 0; k < 4; k++)
            h.data[18 + k] = (unsigned char)(gens[i] >> (24 - 8 * k));
        pt_stat(c, nr_getattr(c, &h, NULL), NFS3ERR_BADHANDLE);
        memset(h.data + 22, 0, 16); /* a zero MAC */
        pt_stat(c, nr_getattr(c, &h, NULL), NFS3ERR_BADHANDLE);
        for (int k = 22; k < 38; k++) /* a random one */
            h.data[k] = (unsigned char)g_random_int();
        pt_stat(c, nr_getattr(c, &h, NULL), NFS3ERR_BADHANDLE);
    }
    /* The root's inode (1) with the file's MAC; another export index. */
    nr_fh h = f;
    memset(h.data + 10, 0, 8);
    h.data[17] = 1;
    pt_stat(c, nr_getattr(c, &h, NULL), NFS3ERR_BADHANDLE);
    for (unsigned e = 1; e < 12; e++) {
        h = f;
        h.data[1] = (unsigned char)e;
        pt_stat(c, nr_getattr(c, &h, NULL), NFS3ERR_BADHANDLE);
    }
    /* Other lengths and versions. */
    const unsigned lens[] = {0, 1, 21, 22, 37, 39, 64};
    for (size_t i = 0; i < G_N_ELEMENTS(lens); i++) {
        h = f;
        h.len = lens[i];
        pt_stat(c, nr_getattr(c, &h, NULL), NFS3ERR_BADHANDLE);
    }
    for (unsigned v = 0; v < 256; v += 51) {
        h = f;
        h.data[0] = (unsigned char)v;
        if (v != f.data[0])
            pt_stat(c, nr_getattr(c, &h, NULL), NFS3ERR_BADHANDLE);
    }
    nr_close(c);
}

/* A correctly signed handle of a file that is gone: STALE, also after a
 * name of the same kind takes its place. */
static void test_handle_removed(void)
{
    nr_ctx *c = pt_open(&pt_owner);
    nr_fh dir = pt_fresh_dir();
    nr_fh f = pt_create(c, &dir, "gone", 0644);
    nr_fh d = pt_mkdir(c, &dir, "gonedir", 0755);
    nr_fh l;
    SYMLINK3res sl;

    pt_ok(c, nr_symlink(c, &dir, "gonelink", "x", NULL, &sl));
    l = pt_post_fh(&sl.SYMLINK3res_u.resok.obj);
    pt_ok(c, nr_remove(c, &dir, "gone", NULL));
    pt_ok(c, nr_rmdir(c, &dir, "gonedir", NULL));
    pt_ok(c, nr_remove(c, &dir, "gonelink", NULL));
    pt_create(c, &dir, "gone", 0644);
    pt_mkdir(c, &dir, "gonedir", 0755);

    pt_stat(c, nr_getattr(c, &f, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_commit(c, &f, 0, 0, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_link(c, &f, &dir, "again", NULL), NFS3ERR_STALE);
    pt_stat(c, nr_getattr(c, &d, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_mkdir(c, &d, "x", NULL, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_rename(c, &dir, "gone", &d, "x", NULL), NFS3ERR_STALE);
    pt_stat(c, nr_readdirplus(c, &d, 0, NULL, 4096, 8192, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_readlink(c, &l, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_fsstat(c, &l, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_pathconf(c, &l, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_lookup(c, &dir, "again", NULL), NFS3ERR_NOENT);
    nr_close(c);
}

/* ---- credentials ---------------------------------------------------------------- */

/* A GETATTR of the root whose credential is flavor/body as given. */
static GByteArray *call_with_cred(uint32_t flavor, const GByteArray *body, uint32_t verf_len)
{
    GByteArray *rec = g_byte_array_new();

    nr_xdr_u32(rec, next_xid());
    nr_xdr_u32(rec, NR_MSG_CALL);
    nr_xdr_u32(rec, 2);
    nr_xdr_u32(rec, NR_NFS_PROGRAM);
    nr_xdr_u32(rec, 3);
    nr_xdr_u32(rec, 1);
    nr_xdr_u32(rec, flavor);
    nr_xdr_opaque(rec, body ? body->data : (const guint8 *)"", body ? body->len : 0);
    nr_xdr_u32(rec, NR_AUTH_NONE);
    char *verf = g_malloc0(verf_len + 1);
    memset(verf, 'v', verf_len);
    nr_xdr_opaque(rec, verf, verf_len);
    g_free(verf);
    nr_xdr_fh(rec, &pt.root);
    return rec;
}

/* An AUTH_SYS body: machine name of mlen bytes (byte `fill`), uid 0, gid 0,
 * ngids groups (the count word says claimed_ngids), extra bytes after. */
static GByteArray *authsys_body(uint32_t mlen, char fill, uint32_t claimed_ngids, uint32_t ngids,
                                uint32_t extra)
{
    GByteArray *b = g_byte_array_new();
    char *machine = g_malloc(mlen + 1);

    memset(machine, fill, mlen);
    nr_xdr_u32(b, 42);
    nr_xdr_opaque(b, machine, mlen);
    nr_xdr_u32(b, 0);
    nr_xdr_u32(b, 0);
    nr_xdr_u32(b, claimed_ngids);
    for (uint32_t i = 0; i < ngids; i++)
        nr_xdr_u32(b, 100 + i);
    for (uint32_t i = 0; i < extra; i++)
        g_byte_array_append(b, (const guint8 *)"e", 1);
    g_free(machine);
    return b;
}

/* Send rec and return the reply's auth_stat (-1: accepted). */
static int auth_result(const GByteArray *rec)
{
    nr_reply rep;
    GByteArray *reply = raw_from("127.0.0.1", 0, rec, &rep);
    int r;

    if (rep.reply_stat == NR_MSG_ACCEPTED) {
        g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
        g_assert_cmpuint(nr_get_u32(reply, rep.body), ==, NFS3_OK);
        r = -1;
    } else {
        g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_DENIED);
        g_assert_cmpuint(rep.reject_stat, ==, NR_AUTH_ERROR);
        r = (int)rep.auth_stat;
    }
    g_byte_array_unref(reply);
    return r;
}

static void test_credentials(void)
{
    struct {
        const char *what;
        uint32_t mlen, claimed, ngids, extra;
        char fill;
        int want; /* auth_stat, or -1: accepted */
    } cases[] = {
        {"16 groups, 255-byte machine name", 255, 16, 16, 0, 'm', -1},
        {"17 groups", 4, 17, 17, 0, 'm', NR_AUTH_BADCRED},
        {"a group count of 2^32-1", 4, 0xffffffffu, 3, 0, 'm', NR_AUTH_BADCRED},
        {"256-byte machine name", 256, 0, 0, 0, 'm', NR_AUTH_BADCRED},
        {"machine name with a NUL", 8, 0, 0, 0, '\0', NR_AUTH_BADCRED},
        {"groups counted but missing", 4, 5, 2, 0, 'm', NR_AUTH_BADCRED},
        {"bytes after the groups", 4, 1, 1, 4, 'm', NR_AUTH_BADCRED},
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GByteArray *body = authsys_body(cases[i].mlen, cases[i].fill, cases[i].claimed,
                                        cases[i].ngids, cases[i].extra);
        GByteArray *rec = call_with_cred(NR_AUTH_SYS, body, 0);
        int got = auth_result(rec);
        if (got != cases[i].want)
            g_error("AUTH_SYS with %s: got %d, expected %d", cases[i].what, got, cases[i].want);
        g_byte_array_unref(rec);
        g_byte_array_unref(body);
    }

    /* A machine name whose length word exceeds the body. */
    GByteArray *body = g_byte_array_new();
    nr_xdr_u32(body, 1);
    nr_xdr_u32(body, 300);
    nr_xdr_u32(body, 0x41414141);
    GByteArray *rec = call_with_cred(NR_AUTH_SYS, body, 0);
    g_assert_cmpint(auth_result(rec), ==, NR_AUTH_BADCRED);
    g_byte_array_unref(rec);
    /* An empty AUTH_SYS body. */
    g_byte_array_set_size(body, 0);
    rec = call_with_cred(NR_AUTH_SYS, body, 0);
    g_assert_cmpint(auth_result(rec), ==, NR_AUTH_BADCRED);
    g_byte_array_unref(rec);
    /* A credential body over 400 bytes (RFC 5531's limit). */
    g_byte_array_unref(body);
    body = authsys_body(200, 'm', 16, 16, 200);
    g_assert_cmpuint(body->len, >, 400);
    rec = call_with_cred(NR_AUTH_SYS, body, 0);
    g_assert_cmpint(auth_result(rec), ==, NR_AUTH_BADCRED);
    g_byte_array_unref(rec);
    g_byte_array_unref(body);
    /* A verifier over 400 bytes. */
    body = authsys_body(4, 'm', 0, 0, 0);
    rec = call_with_cred(NR_AUTH_SYS, body, 404);
    g_assert_cmpint(auth_result(rec), ==, NR_AUTH_BADVERF);
    g_byte_array_unref(rec);
    /* AUTH_NONE with a body; flavors we do not take: AUTH_SHORT, AUTH_DH,
     * RPCSEC_GSS. */
    rec = call_with_cred(NR_AUTH_NONE, body, 0);
    g_assert_cmpint(auth_result(rec), ==, NR_AUTH_BADCRED);
    g_byte_array_unref(rec);
    const uint32_t flavors[] = {2, 3, 6, 390003};
    for (size_t i = 0; i < G_N_ELEMENTS(flavors); i++) {
        rec = call_with_cred(flavors[i], body, 0);
        g_assert_cmpint(auth_result(rec), ==, NR_AUTH_REJECTEDCRED);
        g_byte_array_unref(rec);
    }
    g_byte_array_unref(body);
    /* AUTH_NONE on MOUNT MNT: too weak. */
    rec = g_byte_array_new();
    nr_xdr_call(rec, next_xid(), NR_MOUNT_PROGRAM, 3, 1, NULL);
    nr_xdr_string(rec, "/");
    nr_reply rep;
    GByteArray *reply = raw_from("127.0.0.1", 0, rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_DENIED);
    g_assert_cmpuint(rep.auth_stat, ==, NR_AUTH_TOOWEAK);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    assert_alive();
}

/* AUTH_NONE identifies nobody: enough for the NULL procedure of each
 * program, AUTH_ERROR AUTH_TOOWEAK for every other procedure (whatever
 * its arguments: the credential is judged first). */
static void test_auth_none_procs(void)
{
    const struct {
        uint32_t prog, nprocs;
    } progs[] = {{NR_NFS_PROGRAM, 22}, {NR_MOUNT_PROGRAM, 6}};
    unsigned refused = 0;

    for (size_t i = 0; i < G_N_ELEMENTS(progs); i++) {
        for (uint32_t proc = 0; proc < progs[i].nprocs; proc++) {
            GByteArray *rec = g_byte_array_new();
            nr_reply rep;
            nr_xdr_call(rec, next_xid(), progs[i].prog, 3, proc, NULL);
            if (proc != 0)
                nr_xdr_fh(rec, &pt.root);
            GByteArray *reply = raw_from("127.0.0.1", 0, rec, &rep);
            if (proc == 0) {
                g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
                g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
            } else if (rep.reply_stat != NR_MSG_DENIED || rep.reject_stat != NR_AUTH_ERROR ||
                       rep.auth_stat != NR_AUTH_TOOWEAK) {
                g_error("program %u procedure %u with AUTH_NONE: reply_stat %u, reject_stat %u, "
                        "auth_stat %u (expected AUTH_ERROR AUTH_TOOWEAK)",
                        progs[i].prog, proc, rep.reply_stat, rep.reject_stat, rep.auth_stat);
            } else {
                refused++;
            }
            g_byte_array_unref(reply);
            g_byte_array_unref(rec);
        }
    }
    g_assert_cmpuint(refused, ==, 21 + 5);
    assert_alive();
}

/* ---- execute without read ----------------------------------------------------- */

/* The ACCESS3 bits of READ and EXECUTE that c gets on fh. */
static uint32_t access_rx(nr_ctx *c, const nr_fh *fh)
{
    ACCESS3res ac;

    pt_ok(c, nr_access(c, fh, ACCESS3_READ | ACCESS3_EXECUTE, &ac));
    return ac.ACCESS3res_u.resok.access;
}

/* READ of all of fh by c: NFS3_OK and the program's bytes, or the status. */
static int read_prog(nr_ctx *c, const nr_fh *fh)
{
    READ3res rd;
    int st = nr_read(c, fh, 0, 100, &rd);

    if (st == NFS3_OK)
        g_assert_cmpmem(rd.READ3res_u.resok.data.data_val, rd.READ3res_u.resok.data.data_len,
                        "#!/bin/true", 11);
    return st;
}

static void test_exec_only(void)
{
    /* The owner (uid 1000, group 1000), a member of the owner's group and
     * somebody else (uid 2000, group 2000). */
    nr_cred member_cred = pt_cred(3000, PT_OWNER_GID, 0, NULL);
    nr_ctx *owner = pt_open(&pt_owner), *other = pt_open(&pt_other);
    nr_ctx *member = pt_open(&member_cred), *root = pt_open(NULL);
    nr_fh dir = pt_fresh_dir();
    nr_fh f = pt_create(owner, &dir, "prog", 0755);

    pt_write(owner, &f, 0, "#!/bin/true", 11);

    /* 001: the others' execute bit admits uid 2000, who may READ (run)
     * it; the group's class has no bit. ACCESS: EXECUTE, never READ. */
    pt_chmod(owner, &f, 0001);
    pt_ok(other, read_prog(other, &f));
    pt_stat(member, read_prog(member, &f), NFS3ERR_ACCES);
    g_assert_cmphex(access_rx(other, &f), ==, ACCESS3_EXECUTE);
    g_assert_cmphex(access_rx(member, &f), ==, 0);
    pt_stat(other, nr_write(other, &f, 0, "x", 1, FILE_SYNC, NULL), NFS3ERR_ACCES);

    /* 010: the group's execute bit admits the member; not the others. */
    pt_chmod(owner, &f, 0010);
    pt_ok(member, read_prog(member, &f));
    pt_stat(other, read_prog(other, &f), NFS3ERR_ACCES);
    g_assert_cmphex(access_rx(member, &f), ==, ACCESS3_EXECUTE);
    g_assert_cmphex(access_rx(other, &f), ==, 0);
    pt_stat(member, nr_write(member, &f, 0, "x", 1, UNSTABLE, NULL), NFS3ERR_ACCES);

    /* 000: the owner still reads and writes its file (the owner
     * override), though ACCESS tells it the bits; nobody else reads;
     * root does. */
    pt_chmod(owner, &f, 0000);
    pt_ok(owner, read_prog(owner, &f));
    g_assert_cmphex(access_rx(owner, &f), ==, 0);
    pt_ok(owner, nr_write(owner, &f, 0, "#", 1, FILE_SYNC, NULL));
    pt_stat(other, read_prog(other, &f), NFS3ERR_ACCES);
    pt_stat(member, read_prog(member, &f), NFS3ERR_ACCES);
    pt_ok(root, read_prog(root, &f));
    nr_close(owner);
    nr_close(other);
    nr_close(member);
    nr_close(root);
}

/* ---- the fixture ----------------------------------------------------------------- */

/* Directories the exports name, and /ro's contents, made through "/". */
static void access_populate(void)
{
    nr_ctx *c = pt_open(NULL);
    SYMLINK3res sl;

    for (const char *const *d = access_dirs; *d; d++)
        pt_mkdir(c, &pt.root, *d, 0777);
    nr_fh ro = pt_lookup(c, &pt.root, "ro");
    nr_fh f = pt_create(c, &ro, "f", 0666);
    pt_write(c, &f, 0, "read-only data", 14);
    pt_mkdir(c, &ro, "d", 0777);
    pt_ok(c, nr_symlink(c, &ro, "l", "f", NULL, &sl));
    nr_close(c);
}

int main(int argc, char **argv)
{
    /* As pt_init(), with this program's exports. */
    char **args = g_new0(char *, (size_t)argc + 2);
    bool listing = false;

    for (int i = 0; i < argc; i++) {
        args[i] = argv[i];
        listing |= strcmp(argv[i], "-l") == 0;
    }
    args[argc++] = "--keep-going";
    argv = args;
    g_test_init(&argc, &argv, NULL);
    if (!listing) {
        if (getenv("PGNFS_TEST_NFS_PORT")) {
            g_printerr("# test_access needs its own server: PGNFS_TEST_NFS_PORT ignored\n");
        }
        pt.server = tl_server_start(access_exports);
        pt.port = pt.mount_port = tl_server_port(pt.server);
        pt.export_path = "/";
        pt.root = mnt_local("/");
        access_populate();
    }
    pt_add("/access/mount_refused", test_mount_refused);
    pt_add("/access/nfs_refused", test_nfs_refused);
    pt_add("/access/export_boundary", test_export_boundary);
    pt_add("/access/rofs", test_rofs);
    pt_add("/access/root_squash", test_root_squash);
    pt_add("/access/all_squash", test_all_squash);
    pt_add("/access/anon_ids", test_anon_ids);
    pt_add("/access/secure", test_secure);
    pt_add("/access/udp", test_udp);
    pt_add("/access/exec_only", test_exec_only);
    pt_add("/handles/bitflips", test_handle_bitflips);
    pt_add("/handles/crafted", test_handle_crafted);
    pt_add("/handles/removed", test_handle_removed);
    pt_add("/auth/credentials", test_credentials);
    pt_add("/auth/auth_none_procs", test_auth_none_procs);
    return pt_run();
}
