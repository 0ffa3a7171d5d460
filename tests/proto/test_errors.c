/*
 * test_errors.c -- NFSv3 error statuses (RFC 1813 section 2.6, as the
 * server maps dbfs errors, dbfs.h NOTES) and the POSIX rules the server
 * promises: permissions for owner, group (with supplementary groups) and
 * others, sticky and setgid directories, setuid/setgid clearing, and the
 * two ways of setting times.
 *
 * One server for the program; each case works in its own fresh directory.
 */
#include <string.h>

#include "ptest.h"

static const uint32_t GROUP_X = 3000; /* a group neither test user is in by default */

static bool time_eq(nfstime3 a, nfstime3 b)
{
    return a.seconds == b.seconds && a.nseconds == b.nseconds;
}

/* --- errors ---------------------------------------------------------------------- */

static void test_noent(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    LOOKUP3res lr;

    pt_stat(c, nr_lookup(c, &dir, "missing", &lr), NFS3ERR_NOENT);
    g_assert_cmpuint(pt_post_attr(&lr.LOOKUP3res_u.resfail.dir_attributes).fileid, ==,
                     pt_getattr(c, &dir).fileid);
    pt_stat(c, nr_remove(c, &dir, "missing", NULL), NFS3ERR_NOENT);
    pt_stat(c, nr_rmdir(c, &dir, "missing", NULL), NFS3ERR_NOENT);
    pt_stat(c, nr_rename(c, &dir, "missing", &dir, "other", NULL), NFS3ERR_NOENT);
    nr_close(c);
}

static void test_exist(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    sattr3 sa = nr_sattr_mode(0644);

    nr_fh f = pt_create(c, &dir, "file", 0644);
    pt_mkdir(c, &dir, "dir", 0755);

    pt_stat(c, nr_create(c, &dir, "file", GUARDED, &sa, NULL, NULL), NFS3ERR_EXIST);
    pt_stat(c, nr_create(c, &dir, "dir", GUARDED, &sa, NULL, NULL), NFS3ERR_EXIST);
    pt_stat(c, nr_mkdir(c, &dir, "dir", &sa, NULL), NFS3ERR_EXIST);
    pt_stat(c, nr_mkdir(c, &dir, "file", &sa, NULL), NFS3ERR_EXIST);
    pt_stat(c, nr_symlink(c, &dir, "file", "target", &sa, NULL), NFS3ERR_EXIST);
    pt_stat(c, nr_mknod(c, &dir, "file", NF3FIFO, &sa, 0, 0, NULL), NFS3ERR_EXIST);
    pt_stat(c, nr_link(c, &f, &dir, "dir", NULL), NFS3ERR_EXIST);
    /* The file is untouched. */
    fattr3 a = pt_getattr(c, &f);
    g_assert_cmpint(a.type, ==, NF3REG);
    g_assert_cmpuint(a.nlink, ==, 1);
    nr_close(c);
}

static void test_notempty(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);

    nr_fh full = pt_mkdir(c, &dir, "full", 0755);
    pt_create(c, &full, "x", 0644);
    pt_mkdir(c, &dir, "other", 0755);

    pt_stat(c, nr_rmdir(c, &dir, "full", NULL), NFS3ERR_NOTEMPTY);
    /* Renaming a directory over a non-empty one. */
    pt_stat(c, nr_rename(c, &dir, "other", &dir, "full", NULL), NFS3ERR_NOTEMPTY);
    pt_lookup(c, &full, "x");
    pt_lookup(c, &dir, "other");
    nr_close(c);
}

static void test_acces(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *owner = pt_open(&pt_owner);
    nr_ctx *other = pt_open(&pt_other);
    sattr3 sa = nr_sattr_mode(0644);

    nr_fh f = pt_create(owner, &dir, "file", 0644);
    pt_write(owner, &f, 0, "data", 4);
    nr_fh private = pt_create(owner, &dir, "private", 0600);
    nr_fh d = pt_mkdir(owner, &dir, "d", 0755);
    pt_create(owner, &d, "inside", 0644);
    nr_fh closed = pt_mkdir(owner, &dir, "closed", 0700);
    pt_create(owner, &closed, "hidden", 0644);

    /* A 0644 file of another user: no writing, no truncating. */
    pt_stat(other, nr_write(other, &f, 0, "evil", 4, FILE_SYNC, NULL), NFS3ERR_ACCES);
    sattr3 size = nr_sattr_none();
    size.size.set_it = 1;
    size.size.set_size3_u.size = 0;
    pt_stat(other, nr_setattr(other, &f, &size, NULL, NULL), NFS3ERR_ACCES);
    /* A 0600 file: no reading. */
    pt_stat(other, nr_read(other, &private, 0, 10, NULL), NFS3ERR_ACCES);
    /* A 0755 directory of another user: no creating, removing, renaming. */
    pt_stat(other, nr_create(other, &d, "new", GUARDED, &sa, NULL, NULL), NFS3ERR_ACCES);
    pt_stat(other, nr_mkdir(other, &d, "newdir", &sa, NULL), NFS3ERR_ACCES);
    pt_stat(other, nr_symlink(other, &d, "newlink", "t", &sa, NULL), NFS3ERR_ACCES);
    pt_stat(other, nr_remove(other, &d, "inside", NULL), NFS3ERR_ACCES);
    pt_stat(other, nr_rename(other, &d, "inside", &d, "renamed", NULL), NFS3ERR_ACCES);
    /* A 0700 directory: no lookup, no listing. */
    pt_stat(other, nr_lookup(other, &closed, "hidden", NULL), NFS3ERR_ACCES);
    pt_stat(other, nr_readdir(other, &closed, 0, NULL, 4096, NULL), NFS3ERR_ACCES);

    /* Nothing changed. */
    READ3res rr;
    pt_ok(owner, nr_read(owner, &f, 0, 100, &rr));
    g_assert_cmpmem(rr.READ3res_u.resok.data.data_val, rr.READ3res_u.resok.count, "data", 4);
    pt_lookup(owner, &d, "inside");
    pt_stat(owner, nr_lookup(owner, &d, "new", NULL), NFS3ERR_NOENT);
    nr_close(owner);
    nr_close(other);
}

static void test_perm(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *owner = pt_open(&pt_owner);
    nr_ctx *other = pt_open(&pt_other);

    nr_fh f = pt_create(owner, &dir, "file", 0666);
    /* chmod by a non-owner, even one with write permission */
    sattr3 sa = nr_sattr_mode(0777);
    pt_stat(other, nr_setattr(other, &f, &sa, NULL, NULL), NFS3ERR_PERM);
    g_assert_cmpuint(pt_getattr(owner, &f).mode, ==, 0666);
    /* chown to someone else by a non-root owner */
    sa = nr_sattr_none();
    sa.uid.set_it = 1;
    sa.uid.set_uid3_u.uid = PT_OTHER_UID;
    pt_stat(owner, nr_setattr(owner, &f, &sa, NULL, NULL), NFS3ERR_PERM);
    /* chgrp by the owner to a group he is not in */
    sa = nr_sattr_none();
    sa.gid.set_it = 1;
    sa.gid.set_gid3_u.gid = GROUP_X;
    pt_stat(owner, nr_setattr(owner, &f, &sa, NULL, NULL), NFS3ERR_PERM);
    /* explicit times by a non-owner with write permission */
    sa = nr_sattr_none();
    sa.mtime.set_it = SET_TO_CLIENT_TIME;
    sa.mtime.set_mtime_u.mtime.seconds = 1000;
    pt_stat(other, nr_setattr(other, &f, &sa, NULL, NULL), NFS3ERR_PERM);
    fattr3 a = pt_getattr(owner, &f);
    g_assert_cmpuint(a.uid, ==, PT_OWNER_UID);
    g_assert_cmpuint(a.gid, ==, PT_OWNER_GID);
    g_assert_cmpuint(a.mtime.seconds, !=, 1000);
    nr_close(owner);
    nr_close(other);
}

static void test_notdir(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    sattr3 sa = nr_sattr_mode(0644);

    nr_fh f = pt_create(c, &dir, "file", 0644);
    pt_stat(c, nr_lookup(c, &f, "x", NULL), NFS3ERR_NOTDIR);
    pt_stat(c, nr_create(c, &f, "x", GUARDED, &sa, NULL, NULL), NFS3ERR_NOTDIR);
    pt_stat(c, nr_mkdir(c, &f, "x", &sa, NULL), NFS3ERR_NOTDIR);
    pt_stat(c, nr_readdir(c, &f, 0, NULL, 4096, NULL), NFS3ERR_NOTDIR);
    pt_stat(c, nr_readdirplus(c, &f, 0, NULL, 4096, 8192, NULL), NFS3ERR_NOTDIR);
    pt_stat(c, nr_rmdir(c, &dir, "file", NULL), NFS3ERR_NOTDIR);
    pt_stat(c, nr_rename(c, &dir, "file", &f, "x", NULL), NFS3ERR_NOTDIR);
    /* A directory renamed over a file. */
    pt_mkdir(c, &dir, "d", 0755);
    pt_stat(c, nr_rename(c, &dir, "d", &dir, "file", NULL), NFS3ERR_NOTDIR);
    nr_close(c);
}

static void test_isdir(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);

    nr_fh d = pt_mkdir(c, &dir, "d", 0755);
    pt_create(c, &dir, "file", 0644);
    pt_stat(c, nr_remove(c, &dir, "d", NULL), NFS3ERR_ISDIR);
    pt_stat(c, nr_read(c, &d, 0, 100, NULL), NFS3ERR_ISDIR);
    pt_stat(c, nr_write(c, &d, 0, "x", 1, FILE_SYNC, NULL), NFS3ERR_ISDIR);
    pt_stat(c, nr_link(c, &d, &dir, "dlink", NULL), NFS3ERR_ISDIR);
    /* A file renamed over a directory. */
    pt_stat(c, nr_rename(c, &dir, "file", &dir, "d", NULL), NFS3ERR_ISDIR);
    g_assert_cmpint(pt_getattr(c, &d).type, ==, NF3DIR);
    nr_close(c);
}

static void test_inval(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);

    nr_fh a = pt_mkdir(c, &dir, "a", 0755);
    nr_fh b = pt_mkdir(c, &a, "b", 0755);
    pt_mkdir(c, &b, "c", 0755);
    nr_fh f = pt_create(c, &dir, "file", 0644);

    /* A directory into its own subtree, at two depths. */
    pt_stat(c, nr_rename(c, &dir, "a", &b, "a", NULL), NFS3ERR_INVAL);
    nr_fh cc = pt_lookup(c, &b, "c");
    pt_stat(c, nr_rename(c, &dir, "a", &cc, "x", NULL), NFS3ERR_INVAL);
    pt_lookup(c, &dir, "a");
    /* READLINK of something that is not a symbolic link. */
    pt_stat(c, nr_readlink(c, &f, NULL), NFS3ERR_INVAL);
    /* ("." and ".." as names that would be made, removed or renamed have
     * Linux nfsd's statuses: test_names.c.) */
    nr_close(c);
}

static void test_stale(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    sattr3 sa = nr_sattr_mode(0600);

    nr_fh f = pt_create(c, &dir, "file", 0644);
    nr_fh d = pt_mkdir(c, &dir, "d", 0755);
    pt_ok(c, nr_remove(c, &dir, "file", NULL));
    pt_ok(c, nr_rmdir(c, &dir, "d", NULL));

    pt_stat(c, nr_getattr(c, &f, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_setattr(c, &f, &sa, NULL, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_read(c, &f, 0, 10, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_write(c, &f, 0, "x", 1, FILE_SYNC, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_access(c, &f, ACCESS3_READ, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_lookup(c, &d, "x", NULL), NFS3ERR_STALE);
    pt_stat(c, nr_create(c, &d, "x", GUARDED, &sa, NULL, NULL), NFS3ERR_STALE);
    pt_stat(c, nr_readdir(c, &d, 0, NULL, 4096, NULL), NFS3ERR_STALE);

    /* A file created under the same name is another file. */
    nr_fh again = pt_create(c, &dir, "file", 0644);
    g_assert_false(nr_fh_equal(&again, &f));
    pt_stat(c, nr_getattr(c, &f, NULL), NFS3ERR_STALE);
    nr_close(c);
}

static void test_badhandle(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);

    nr_fh f = pt_create(c, &dir, "file", 0644);
    g_assert_cmpuint(f.len, >=, 8);
    /* One byte flipped: at the start, in the middle, at the end. */
    const uint32_t where[] = {0, f.len / 2, f.len - 1};
    for (size_t i = 0; i < G_N_ELEMENTS(where); i++) {
        nr_fh bad = f;
        bad.data[where[i]] ^= 0x01;
        pt_stat(c, nr_getattr(c, &bad, NULL), NFS3ERR_BADHANDLE);
        pt_stat(c, nr_lookup(c, &bad, "x", NULL), NFS3ERR_BADHANDLE);
    }
    /* Truncated: one byte short, and only 8 bytes. */
    nr_fh shortfh = f;
    shortfh.len = f.len - 1;
    pt_stat(c, nr_getattr(c, &shortfh, NULL), NFS3ERR_BADHANDLE);
    shortfh.len = 8;
    pt_stat(c, nr_getattr(c, &shortfh, NULL), NFS3ERR_BADHANDLE);
    /* One byte too long. */
    nr_fh longfh = f;
    longfh.data[longfh.len++] = 0;
    pt_stat(c, nr_getattr(c, &longfh, NULL), NFS3ERR_BADHANDLE);
    /* Empty. */
    nr_fh empty = {0};
    pt_stat(c, nr_getattr(c, &empty, NULL), NFS3ERR_BADHANDLE);
    /* The real one still works. */
    pt_getattr(c, &f);
    nr_close(c);
}

static void test_nametoolong(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    char name[257];
    sattr3 sa = nr_sattr_mode(0644);

    memset(name, 'n', 256);
    name[256] = '\0';
    pt_stat(c, nr_create(c, &dir, name, GUARDED, &sa, NULL, NULL), NFS3ERR_NAMETOOLONG);
    pt_stat(c, nr_mkdir(c, &dir, name, &sa, NULL), NFS3ERR_NAMETOOLONG);
    pt_stat(c, nr_lookup(c, &dir, name, NULL), NFS3ERR_NAMETOOLONG);
    pt_stat(c, nr_symlink(c, &dir, name, "t", &sa, NULL), NFS3ERR_NAMETOOLONG);

    /* 255 bytes is fine, and found again. */
    name[255] = '\0';
    nr_fh f = pt_create(c, &dir, name, 0644);
    nr_fh found = pt_lookup(c, &dir, name);
    g_assert_true(nr_fh_equal(&f, &found));
    /* Renaming it to 256 bytes is not. */
    char longer[257];
    memset(longer, 'm', 256);
    longer[256] = '\0';
    pt_stat(c, nr_rename(c, &dir, name, &dir, longer, NULL), NFS3ERR_NAMETOOLONG);
    pt_stat(c, nr_link(c, &f, &dir, longer, NULL), NFS3ERR_NAMETOOLONG);
    nr_close(c);
}

static void test_not_sync(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    SETATTR3res res;

    nr_fh f = pt_create(c, &dir, "file", 0644);
    fattr3 a = pt_getattr(c, &f);
    nfstime3 wrong = a.ctime;
    wrong.nseconds = (wrong.nseconds + 1) % 1000000000;
    if (wrong.nseconds == 0)
        wrong.seconds++;
    sattr3 sa = nr_sattr_mode(0600);

    pt_stat(c, nr_setattr(c, &f, &sa, &wrong, &res), NFS3ERR_NOT_SYNC);
    g_assert_cmpuint(pt_getattr(c, &f).mode, ==, 0644);
    nfstime3 old = {.seconds = 1, .nseconds = 0};
    pt_stat(c, nr_setattr(c, &f, &sa, &old, &res), NFS3ERR_NOT_SYNC);
    g_assert_cmpuint(pt_getattr(c, &f).mode, ==, 0644);

    /* The right guard. */
    pt_ok(c, nr_setattr(c, &f, &sa, &a.ctime, &res));
    g_assert_cmpuint(pt_getattr(c, &f).mode, ==, 0600);
    /* ... which is now stale, since ctime moved. */
    sa = nr_sattr_mode(0640);
    pt_stat(c, nr_setattr(c, &f, &sa, &a.ctime, &res), NFS3ERR_NOT_SYNC);
    g_assert_cmpuint(pt_getattr(c, &f).mode, ==, 0600);
    nr_close(c);
}

static void test_exclusive(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    CREATE3res res;
    const char v1[NFS3_CREATEVERFSIZE] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    const char v2[NFS3_CREATEVERFSIZE] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x89};

    pt_ok(c, nr_create(c, &dir, "x", EXCLUSIVE, NULL, v1, &res));
    nr_fh first = pt_post_fh(&res.CREATE3res_u.resok.obj);
    uint64_t id = pt_getattr(c, &first).fileid;

    /* A retransmission (same verifier) succeeds with the same file. */
    pt_ok(c, nr_create(c, &dir, "x", EXCLUSIVE, NULL, v1, &res));
    nr_fh second = pt_post_fh(&res.CREATE3res_u.resok.obj);
    g_assert_true(nr_fh_equal(&first, &second));
    g_assert_cmpuint(pt_getattr(c, &second).fileid, ==, id);

    /* Another verifier: the name exists. */
    pt_stat(c, nr_create(c, &dir, "x", EXCLUSIVE, NULL, v2, &res), NFS3ERR_EXIST);

    /* The client then sets the real attributes. */
    sattr3 sa = nr_sattr_mode(0640);
    sa.mtime.set_it = SET_TO_SERVER_TIME;
    sa.atime.set_it = SET_TO_SERVER_TIME;
    pt_ok(c, nr_setattr(c, &first, &sa, NULL, NULL));
    fattr3 a = pt_getattr(c, &first);
    g_assert_cmpuint(a.mode, ==, 0640);
    g_assert_cmpuint(a.size, ==, 0);
    g_assert_cmpuint(a.uid, ==, PT_OWNER_UID);

    /* EXCLUSIVE over a file made by GUARDED: the name exists. */
    pt_create(c, &dir, "plain", 0644);
    pt_stat(c, nr_create(c, &dir, "plain", EXCLUSIVE, NULL, v1, &res), NFS3ERR_EXIST);
    nr_close(c);
}

static void test_bad_cookie(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    READDIR3res res;

    for (int i = 0; i < 20; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%02d", i);
        pt_create(c, &dir, name, 0644);
    }
    pt_ok(c, nr_readdir(c, &dir, 0, NULL, 512, &res));
    g_assert_false(res.READDIR3res_u.resok.reply.eof);
    uint64_t cookie = 0;
    for (const entry3 *e = res.READDIR3res_u.resok.reply.entries; e; e = e->nextentry)
        cookie = e->cookie;
    g_assert_cmpuint(cookie, !=, 0);

    char garbage[NFS3_COOKIEVERFSIZE];
    memcpy(garbage, res.READDIR3res_u.resok.cookieverf, sizeof garbage);
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] ^= (char)0xa5;
    pt_stat(c, nr_readdir(c, &dir, cookie, garbage, 512, NULL), NFS3ERR_BAD_COOKIE);
    pt_stat(c, nr_readdirplus(c, &dir, cookie, garbage, 512, 4096, NULL), NFS3ERR_BAD_COOKIE);
    /* The right verifier continues. */
    pt_ok(c, nr_readdir(c, &dir, cookie, res.READDIR3res_u.resok.cookieverf, 512, NULL));
    nr_close(c);
}

static void test_toosmall(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);

    pt_create(c, &dir, "some-file-name", 0644);
    pt_stat(c, nr_readdir(c, &dir, 0, NULL, 16, NULL), NFS3ERR_TOOSMALL);
    pt_stat(c, nr_readdirplus(c, &dir, 0, NULL, 16, 16, NULL), NFS3ERR_TOOSMALL);
    nr_close(c);
}

static void test_badtype(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);
    sattr3 sa = nr_sattr_mode(0644);

    pt_stat(c, nr_mknod(c, &dir, "reg", NF3REG, &sa, 0, 0, NULL), NFS3ERR_BADTYPE);
    pt_stat(c, nr_mknod(c, &dir, "dir", NF3DIR, &sa, 0, 0, NULL), NFS3ERR_BADTYPE);
    pt_stat(c, nr_mknod(c, &dir, "lnk", NF3LNK, &sa, 0, 0, NULL), NFS3ERR_BADTYPE);
    pt_stat(c, nr_lookup(c, &dir, "reg", NULL), NFS3ERR_NOENT);
    nr_close(c);
}

static void test_bad_names(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    sattr3 sa = nr_sattr_mode(0644);

    /* A name with a slash, a NUL, or an empty one is GARBAGE_ARGS and
     * never makes anything: test_names.c. An empty symbolic link target is
     * NFS3ERR_INVAL. */
    pt_stat(c, nr_symlink(c, &dir, "empty", "", &sa, NULL), NFS3ERR_INVAL);
    pt_stat(c, nr_lookup(c, &dir, "empty", NULL), NFS3ERR_NOENT);
    READDIR3res res;
    pt_ok(c, nr_readdir(c, &dir, 0, NULL, 4096, &res));
    int n = 0;
    for (const entry3 *e = res.READDIR3res_u.resok.reply.entries; e; e = e->nextentry)
        n++;
    g_assert_cmpint(n, ==, 2);
    nr_close(c);
}

/* --- POSIX rules ------------------------------------------------------------------ */

static void test_sticky(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *root = pt_open(NULL);
    nr_ctx *owner = pt_open(&pt_owner);
    nr_ctx *other = pt_open(&pt_other);

    nr_fh tmp = pt_mkdir(root, &dir, "tmp", 0777);
    pt_chmod(root, &tmp, 01777);
    g_assert_cmpuint(pt_getattr(root, &tmp).mode, ==, 01777);
    pt_create(owner, &tmp, "mine", 0666);
    pt_create(other, &tmp, "theirs", 0666);

    /* Another user may not remove or rename my file... */
    pt_stat(other, nr_remove(other, &tmp, "mine", NULL), NFS3ERR_PERM);
    pt_stat(other, nr_rename(other, &tmp, "mine", &tmp, "stolen", NULL), NFS3ERR_PERM);
    /* ... nor replace it by renaming over it. */
    pt_stat(other, nr_rename(other, &tmp, "theirs", &tmp, "mine", NULL), NFS3ERR_PERM);
    pt_lookup(owner, &tmp, "mine");
    /* I may, and root may remove anybody's. */
    pt_ok(owner, nr_remove(owner, &tmp, "mine", NULL));
    pt_ok(root, nr_remove(root, &tmp, "theirs", NULL));
    nr_close(root);
    nr_close(owner);
    nr_close(other);
}

static void test_setgid_dir(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *root = pt_open(NULL);
    nr_ctx *owner = pt_open(&pt_owner);

    nr_fh shared = pt_mkdir(root, &dir, "shared", 0777);
    pt_chown(root, &shared, 0, GROUP_X);
    pt_chmod(root, &shared, 02777);
    g_assert_cmpuint(pt_getattr(root, &shared).mode, ==, 02777);

    nr_fh f = pt_create(owner, &shared, "file", 0644);
    fattr3 fa = pt_getattr(owner, &f);
    g_assert_cmpuint(fa.uid, ==, PT_OWNER_UID);
    g_assert_cmpuint(fa.gid, ==, GROUP_X);

    /* A subdirectory inherits the group and the setgid bit. */
    nr_fh sub = pt_mkdir(owner, &shared, "sub", 0755);
    fattr3 sa = pt_getattr(owner, &sub);
    g_assert_cmpuint(sa.gid, ==, GROUP_X);
    g_assert_cmpuint(sa.mode, ==, 02755);

    /* Without setgid, the creator's group. */
    nr_fh plain = pt_mkdir(root, &dir, "plain", 0777);
    pt_chown(root, &plain, 0, GROUP_X);
    nr_fh g = pt_create(owner, &plain, "file", 0644);
    g_assert_cmpuint(pt_getattr(owner, &g).gid, ==, PT_OWNER_GID);
    nr_close(root);
    nr_close(owner);
}

static void test_setuid_write(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *root = pt_open(NULL);
    nr_ctx *owner = pt_open(&pt_owner);

    /* A non-root write clears setuid and setgid. */
    nr_fh f = pt_create(owner, &dir, "prog", 0755);
    pt_chmod(owner, &f, 06755);
    g_assert_cmpuint(pt_getattr(owner, &f).mode, ==, 06755);
    pt_write(owner, &f, 0, "#!", 2);
    g_assert_cmpuint(pt_getattr(owner, &f).mode, ==, 0755);

    /* A write by root keeps them. */
    nr_fh g = pt_create(root, &dir, "rootprog", 0755);
    pt_chmod(root, &g, 06755);
    pt_write(root, &g, 0, "#!", 2);
    g_assert_cmpuint(pt_getattr(root, &g).mode, ==, 06755);
    nr_close(root);
    nr_close(owner);
}

static void test_setuid_chown(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *root = pt_open(NULL);
    nr_ctx *owner = pt_open(&pt_owner);
    nr_cred in_x = pt_cred(PT_OWNER_UID, PT_OWNER_GID, 1, &GROUP_X);
    nr_ctx *member = pt_open(&in_x);

    /* chown by root of a regular file clears setuid and setgid. */
    nr_fh f = pt_create(owner, &dir, "prog", 0755);
    pt_chmod(owner, &f, 06755);
    pt_chown(root, &f, PT_OTHER_UID, PT_OTHER_GID);
    fattr3 a = pt_getattr(root, &f);
    g_assert_cmpuint(a.uid, ==, PT_OTHER_UID);
    g_assert_cmpuint(a.mode, ==, 0755);

    /* chgrp by the owner to one of his groups clears them too. */
    nr_fh g = pt_create(owner, &dir, "prog2", 0755);
    pt_chmod(owner, &g, 06755);
    sattr3 sa = nr_sattr_none();
    sa.gid.set_it = 1;
    sa.gid.set_gid3_u.gid = GROUP_X;
    pt_ok(member, nr_setattr(member, &g, &sa, NULL, NULL));
    a = pt_getattr(root, &g);
    g_assert_cmpuint(a.gid, ==, GROUP_X);
    g_assert_cmpuint(a.mode, ==, 0755);

    /* chmod by a non-root owner not in the file's group drops setgid. */
    pt_chmod(owner, &g, 02755);
    g_assert_cmpuint(pt_getattr(root, &g).mode, ==, 0755);
    /* ... but a member of the group keeps it. */
    pt_chmod(member, &g, 02755);
    g_assert_cmpuint(pt_getattr(root, &g).mode, ==, 02755);
    nr_close(root);
    nr_close(owner);
    nr_close(member);
}

static void test_groups(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *root = pt_open(NULL);
    const uint32_t groups[] = {4000, GROUP_X, 4001};
    nr_cred with = pt_cred(PT_OTHER_UID, PT_OTHER_GID, 3, groups);
    nr_ctx *member = pt_open(&with);
    nr_ctx *outsider = pt_open(&pt_other);

    nr_fh f = pt_create(root, &dir, "groupfile", 0060);
    pt_chown(root, &f, 0, GROUP_X);
    pt_chmod(root, &f, 0060);

    /* Supplementary group membership grants the group bits. */
    pt_ok(member, nr_write(member, &f, 0, "ok", 2, FILE_SYNC, NULL));
    pt_ok(member, nr_read(member, &f, 0, 2, NULL));
    pt_stat(outsider, nr_write(outsider, &f, 0, "no", 2, FILE_SYNC, NULL), NFS3ERR_ACCES);
    pt_stat(outsider, nr_read(outsider, &f, 0, 2, NULL), NFS3ERR_ACCES);

    /* Group bits come before other bits: a member gets group's (none). */
    nr_fh g = pt_create(root, &dir, "othersonly", 0606);
    pt_chown(root, &g, 0, GROUP_X);
    pt_chmod(root, &g, 0606);
    pt_stat(member, nr_read(member, &g, 0, 1, NULL), NFS3ERR_ACCES);
    pt_ok(outsider, nr_read(outsider, &g, 0, 1, NULL));
    nr_close(root);
    nr_close(member);
    nr_close(outsider);
}

static void test_times_client(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    SETATTR3res res;

    nr_fh f = pt_create(c, &dir, "file", 0644);
    fattr3 before = pt_getattr(c, &f);
    sattr3 sa = nr_sattr_none();
    sa.atime.set_it = SET_TO_CLIENT_TIME;
    sa.atime.set_atime_u.atime.seconds = 1234567890;
    sa.atime.set_atime_u.atime.nseconds = 123456789;
    sa.mtime.set_it = SET_TO_CLIENT_TIME;
    sa.mtime.set_mtime_u.mtime.seconds = 1000000000;
    sa.mtime.set_mtime_u.mtime.nseconds = 999999999;
    pt_ok(c, nr_setattr(c, &f, &sa, NULL, &res));
    fattr3 a = pt_getattr(c, &f);
    g_assert_cmpuint(a.atime.seconds, ==, 1234567890);
    g_assert_cmpuint(a.atime.nseconds, ==, 123456789);
    g_assert_cmpuint(a.mtime.seconds, ==, 1000000000);
    g_assert_cmpuint(a.mtime.nseconds, ==, 999999999);
    /* ctime moves to now instead. */
    g_assert_false(time_eq(a.ctime, before.ctime));

    /* Only mtime; atime stays. Times past 2038 fit the unsigned field. */
    sa = nr_sattr_none();
    sa.mtime.set_it = SET_TO_CLIENT_TIME;
    sa.mtime.set_mtime_u.mtime.seconds = 4000000000u;
    sa.mtime.set_mtime_u.mtime.nseconds = 1;
    pt_ok(c, nr_setattr(c, &f, &sa, NULL, &res));
    a = pt_getattr(c, &f);
    g_assert_cmpuint(a.mtime.seconds, ==, 4000000000u);
    g_assert_cmpuint(a.mtime.nseconds, ==, 1);
    g_assert_cmpuint(a.atime.seconds, ==, 1234567890);
    g_assert_cmpuint(a.atime.nseconds, ==, 123456789);
    nr_close(c);
}

static void test_times_server(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *owner = pt_open(&pt_owner);
    nr_ctx *other = pt_open(&pt_other);
    sattr3 old = nr_sattr_none();
    sattr3 now = nr_sattr_none();

    old.mtime.set_it = SET_TO_CLIENT_TIME;
    old.mtime.set_mtime_u.mtime.seconds = 100;
    old.atime.set_it = SET_TO_CLIENT_TIME;
    old.atime.set_atime_u.atime.seconds = 100;
    now.mtime.set_it = SET_TO_SERVER_TIME;
    now.atime.set_it = SET_TO_SERVER_TIME;

    /* Another user with write permission may set both times to now. */
    nr_fh w = pt_create(owner, &dir, "writable", 0666);
    pt_ok(owner, nr_setattr(owner, &w, &old, NULL, NULL));
    g_assert_cmpuint(pt_getattr(owner, &w).mtime.seconds, ==, 100);
    pt_ok(other, nr_setattr(other, &w, &now, NULL, NULL));
    fattr3 a = pt_getattr(owner, &w);
    fattr3 dir_attr = pt_getattr(owner, &dir); /* a recent server time */
    g_assert_cmpuint(a.mtime.seconds, >, 100);
    g_assert_cmpuint(a.atime.seconds, >, 100);
    g_assert_cmpuint(a.mtime.seconds + 60, >=, dir_attr.ctime.seconds);

    /* Without write permission they may not. */
    nr_fh r = pt_create(owner, &dir, "readonly", 0644);
    pt_ok(owner, nr_setattr(owner, &r, &old, NULL, NULL));
    pt_stat(other, nr_setattr(other, &r, &now, NULL, NULL), NFS3ERR_ACCES);
    g_assert_cmpuint(pt_getattr(owner, &r).mtime.seconds, ==, 100);
    /* The owner may, without write permission. */
    pt_chmod(owner, &r, 0444);
    pt_ok(owner, nr_setattr(owner, &r, &now, NULL, NULL));
    g_assert_cmpuint(pt_getattr(owner, &r).mtime.seconds, >, 100);
    nr_close(owner);
    nr_close(other);
}

int main(int argc, char **argv)
{
    pt_init(&argc, &argv);
    pt_add("/errors/noent", test_noent);
    pt_add("/errors/exist", test_exist);
    pt_add("/errors/notempty", test_notempty);
    pt_add("/errors/acces", test_acces);
    pt_add("/errors/perm", test_perm);
    pt_add("/errors/notdir", test_notdir);
    pt_add("/errors/isdir", test_isdir);
    pt_add("/errors/inval", test_inval);
    pt_add("/errors/stale", test_stale);
    pt_add("/errors/badhandle", test_badhandle);
    pt_add("/errors/nametoolong", test_nametoolong);
    pt_add("/errors/not_sync", test_not_sync);
    pt_add("/errors/exclusive", test_exclusive);
    pt_add("/errors/bad_cookie", test_bad_cookie);
    pt_add("/errors/toosmall", test_toosmall);
    pt_add("/errors/badtype", test_badtype);
    pt_add("/errors/bad_names", test_bad_names);
    pt_add("/posix/sticky", test_sticky);
    pt_add("/posix/setgid_dir", test_setgid_dir);
    pt_add("/posix/setuid_write", test_setuid_write);
    pt_add("/posix/setuid_chown", test_setuid_chown);
    pt_add("/posix/supplementary_groups", test_groups);
    pt_add("/posix/times_client", test_times_client);
    pt_add("/posix/times_server", test_times_server);
    return pt_run();
}
