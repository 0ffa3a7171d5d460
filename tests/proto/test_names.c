/*
 * test_names.c -- names and paths the server must refuse before they touch
 * anything. Once, a name holding a NUL byte acted on the name before the
 * NUL: RENAME to "important\0.bak" replaced "important", REMOVE of
 * "other\0xyz" removed "other", CREATE of "a\0b" made "a", SYMLINK to
 * "abc\0def" stored "abc", all answered NFS3_OK.
 *
 * libnfs cannot send a name holding a NUL, so every call here is an RPC
 * record built by hand (nfsraw.h), and every case checks both the reply and
 * that nothing changed: a snapshot of the directory tree it aimed at
 * (attributes but atime, every entry, every file's bytes) is the same
 * before and after.
 *
 * The replies (as Linux nfsd gives them; server/nfs/nfs3_proc.h NOTES):
 *
 *   a name holding a NUL or '/', or empty      GARBAGE_ARGS, every procedure
 *   a SYMLINK target holding a NUL             GARBAGE_ARGS
 *   a MNT or UMNT path holding a NUL           GARBAGE_ARGS
 *   "." or ".." created, made or linked to     NFS3ERR_EXIST
 *   "." or ".." removed (REMOVE, RMDIR)        NFS3ERR_ACCES
 *   "." or ".." renamed, from or to            NFS3ERR_PERM
 *   "." or ".." looked up                      the directory, its parent
 *   a name of 256 to 1024 bytes                NFS3ERR_NAMETOOLONG
 *   a longer one                               GARBAGE_ARGS
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ptest.h"

enum { RECV_MS = 30000 };

/* NFSv3 and MOUNTv3 procedure numbers (RFC 1813). */
enum {
    P_LOOKUP = 3,
    P_CREATE = 8,
    P_MKDIR = 9,
    P_SYMLINK = 10,
    P_MKNOD = 11,
    P_REMOVE = 12,
    P_RMDIR = 13,
    P_RENAME = 14,
    P_LINK = 15,
    P_MNT = 1,
    P_UMNT = 3,
};

/* A call the server did not execute: -(accept_stat). */
#define GARBAGE (-(int)NR_GARBAGE_ARGS)

/* A name as bytes: it may hold a NUL. */
typedef struct {
    const char *p;
    size_t n;
} nm;
#define NM(lit) ((nm){(lit), sizeof(lit) - 1})

static nm nm_of(const char *s)
{
    return (nm){s, strlen(s)};
}

static uint32_t next_xid(void)
{
    static uint32_t counter;

    return ((uint32_t)getpid() << 16) + ++counter;
}

/* ---- hand-built calls ----------------------------------------------------------- */

/* sattr3 that sets the mode only. */
static void xdr_sattr_mode(GByteArray *b, uint32_t mode)
{
    nr_xdr_u32(b, 1);
    nr_xdr_u32(b, mode);
    for (int i = 0; i < 5; i++) /* uid, gid, size, atime, mtime: not set */
        nr_xdr_u32(b, 0);
}

static void xdr_name(GByteArray *b, nm n)
{
    nr_xdr_opaque(b, n.p, (uint32_t)n.n);
}

static GByteArray *call_begin(uint32_t prog, uint32_t proc)
{
    GByteArray *rec = g_byte_array_new();

    nr_xdr_call(rec, next_xid(), prog, 3, proc, &pt_root);
    return rec;
}

/* Send rec (and free it) on a connection of its own: the status word of
 * the reply, or -(accept_stat) when the call was not executed. */
static int call_end(GByteArray *rec)
{
    int fd = nr_raw_connect(pt.port);
    nr_reply rep;

    if (fd < 0)
        g_error("connect: %s", g_strerror(errno));
    GByteArray *reply = nr_raw_call(fd, rec, RECV_MS);
    close(fd);
    g_assert_nonnull(reply);
    g_assert_cmphex(nr_get_u32(reply, 0), ==, nr_get_u32(rec, 0));
    g_assert_true(nr_reply_parse(reply, &rep));
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    int st =
        rep.accept_stat == NR_SUCCESS ? (int)nr_get_u32(reply, rep.body) : -(int)rep.accept_stat;
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    return st;
}

/*
 * A procedure with one name, n in dir: LOOKUP, CREATE (GUARDED, mode
 * 0644), MKDIR, SYMLINK (to "target"), MKNOD (a FIFO), REMOVE, RMDIR.
 */
static int call_name(uint32_t proc, const nr_fh *dir, nm n)
{
    GByteArray *rec = call_begin(NR_NFS_PROGRAM, proc);

    nr_xdr_fh(rec, dir);
    xdr_name(rec, n);
    switch (proc) {
    case P_CREATE:
        nr_xdr_u32(rec, GUARDED);
        xdr_sattr_mode(rec, 0644);
        break;
    case P_MKDIR:
        xdr_sattr_mode(rec, 0755);
        break;
    case P_SYMLINK:
        xdr_sattr_mode(rec, 0777);
        xdr_name(rec, NM("target"));
        break;
    case P_MKNOD:
        nr_xdr_u32(rec, NF3FIFO);
        xdr_sattr_mode(rec, 0644);
        break;
    default:
        break;
    }
    return call_end(rec);
}

/* CREATE UNCHECKED of n setting size 0: on an existing file, a truncation. */
static int call_create_truncating(const nr_fh *dir, nm n)
{
    GByteArray *rec = call_begin(NR_NFS_PROGRAM, P_CREATE);

    nr_xdr_fh(rec, dir);
    xdr_name(rec, n);
    nr_xdr_u32(rec, UNCHECKED);
    nr_xdr_u32(rec, 0); /* mode */
    nr_xdr_u32(rec, 0); /* uid */
    nr_xdr_u32(rec, 0); /* gid */
    nr_xdr_u32(rec, 1); /* size: 0 */
    nr_xdr_u64(rec, 0);
    nr_xdr_u32(rec, 0); /* atime */
    nr_xdr_u32(rec, 0); /* mtime */
    return call_end(rec);
}

static int call_symlink(const nr_fh *dir, nm name, nm target)
{
    GByteArray *rec = call_begin(NR_NFS_PROGRAM, P_SYMLINK);

    nr_xdr_fh(rec, dir);
    xdr_name(rec, name);
    xdr_sattr_mode(rec, 0777);
    xdr_name(rec, target);
    return call_end(rec);
}

static int call_rename(const nr_fh *from_dir, nm from, const nr_fh *to_dir, nm to)
{
    GByteArray *rec = call_begin(NR_NFS_PROGRAM, P_RENAME);

    nr_xdr_fh(rec, from_dir);
    xdr_name(rec, from);
    nr_xdr_fh(rec, to_dir);
    xdr_name(rec, to);
    return call_end(rec);
}

static int call_link(const nr_fh *file, const nr_fh *dir, nm name)
{
    GByteArray *rec = call_begin(NR_NFS_PROGRAM, P_LINK);

    nr_xdr_fh(rec, file);
    nr_xdr_fh(rec, dir);
    xdr_name(rec, name);
    return call_end(rec);
}

/* MNT or UMNT of path (UMNT has no status: 0 when executed). */
static int call_mount(uint32_t proc, nm path)
{
    GByteArray *rec = call_begin(NR_MOUNT_PROGRAM, proc);

    xdr_name(rec, path);
    return call_end(rec);
}

/*
 * Every way a name n can reach the server in dir, each expected to answer
 * want: the one-name procedures (call_name), RENAME of "src" to n and of n
 * to "dst", LINK of file as n. dir holds a regular file "src".
 */
static void assert_everywhere(const nr_fh *dir, const nr_fh *file, nm n, int want)
{
    const uint32_t procs[] = {P_LOOKUP, P_CREATE, P_MKDIR, P_SYMLINK, P_MKNOD, P_REMOVE, P_RMDIR};

    for (size_t i = 0; i < G_N_ELEMENTS(procs); i++) {
        int got = call_name(procs[i], dir, n);
        if (got != want)
            g_error("procedure %u with a %zu-byte name: expected %d, got %d", procs[i], n.n, want,
                    got);
    }
    g_assert_cmpint(call_rename(dir, NM("src"), dir, n), ==, want);
    g_assert_cmpint(call_rename(dir, n, dir, NM("dst")), ==, want);
    g_assert_cmpint(call_link(file, dir, n), ==, want);
}

/* ---- what a change could touch -------------------------------------------------------- */

static void snap_attr(GString *s, const fattr3 *a)
{
    g_string_append_printf(
        s, "type %d mode %o nlink %u uid %u size %llu mtime %u.%09u ctime %u.%09u", (int)a->type,
        a->mode, a->nlink, a->uid, (unsigned long long)a->size, a->mtime.seconds, a->mtime.nseconds,
        a->ctime.seconds, a->ctime.nseconds);
}

static gint cmp_lines(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lines describing dir's entries, recursively, into lines. */
static void snap_dir(nr_ctx *c, const nr_fh *dir, const char *prefix, GPtrArray *lines)
{
    uint64_t cookie = 0;
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    bool eof = false;

    while (!eof) {
        READDIRPLUS3res res;
        pt_ok(c, nr_readdirplus(c, dir, cookie, verf, 65536, 1024 * 1024, &res));
        READDIRPLUS3resok *ok = &res.READDIRPLUS3res_u.resok;
        memcpy(verf, ok->cookieverf, sizeof verf);
        for (const entryplus3 *e = ok->reply.entries; e; e = e->nextentry) {
            cookie = e->cookie;
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            char *path = g_strdup_printf("%s/%s", prefix, e->name);
            nr_fh fh = pt_post_fh(&e->name_handle);
            fattr3 a = pt_getattr(c, &fh);
            GString *s = g_string_new(NULL);
            g_string_append_printf(s, "%s fileid %llu ", path, (unsigned long long)e->fileid);
            snap_attr(s, &a);
            if (a.type == NF3REG) {
                READ3res rd;
                pt_ok(c, nr_read(c, &fh, 0, 65536, &rd));
                char *sum = g_compute_checksum_for_data(
                    G_CHECKSUM_SHA256, (const guchar *)rd.READ3res_u.resok.data.data_val,
                    rd.READ3res_u.resok.data.data_len);
                g_string_append_printf(s, " data %s", sum);
                g_free(sum);
            } else if (a.type == NF3LNK) {
                READLINK3res rl;
                pt_ok(c, nr_readlink(c, &fh, &rl));
                g_string_append_printf(s, " -> %s", rl.READLINK3res_u.resok.data);
            }
            g_ptr_array_add(lines, g_string_free(s, FALSE));
            if (a.type == NF3DIR)
                snap_dir(c, &fh, path, lines);
            g_free(path);
        }
        eof = ok->reply.eof;
    }
}

/* The state of dir and everything below it (but access times), as text. */
static char *snapshot(const nr_fh *dir)
{
    nr_ctx *c = pt_open(NULL);
    GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
    GString *s = g_string_new(". ");
    fattr3 a = pt_getattr(c, dir);

    snap_attr(s, &a);
    g_string_append_c(s, '\n');
    snap_dir(c, dir, ".", lines);
    g_ptr_array_sort(lines, cmp_lines);
    for (guint i = 0; i < lines->len; i++)
        g_string_append_printf(s, "%s\n", (const char *)g_ptr_array_index(lines, i));
    g_ptr_array_unref(lines);
    nr_close(c);
    return g_string_free(s, FALSE);
}

#define assert_unchanged(dir, before)                                                              \
    do {                                                                                           \
        char *after_ = snapshot(dir);                                                              \
        g_assert_cmpstr(after_, ==, (before));                                                     \
        g_free(after_);                                                                            \
    } while (0)

/* A regular file name in dir holding text. */
static nr_fh make_file(nr_ctx *c, const nr_fh *dir, const char *name, const char *text)
{
    nr_fh f = pt_create(c, dir, name, 0644);

    pt_write(c, &f, 0, text, (uint32_t)strlen(text));
    return f;
}

/* The bytes of file f are text. */
static void assert_content(nr_ctx *c, const nr_fh *f, const char *text)
{
    READ3res rd;

    pt_ok(c, nr_read(c, f, 0, 4096, &rd));
    g_assert_cmpmem(rd.READ3res_u.resok.data.data_val, rd.READ3res_u.resok.data.data_len, text,
                    strlen(text));
}

/* ---- the cases of the issue ---------------------------------------------------------- */

/* RENAME to "important\0.bak" must not replace "important". */
static void test_rename_nul(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);

    nr_fh imp = make_file(c, &dir, "important", "precious data");
    make_file(c, &dir, "victim", "attacker's data");
    char *before = snapshot(&dir);

    g_assert_cmpint(call_rename(&dir, NM("victim"), &dir, NM("important\0.bak")), ==, GARBAGE);
    /* The same with the NUL in the source name, and across directories. */
    g_assert_cmpint(call_rename(&dir, NM("victim\0.tmp"), &dir, NM("important")), ==, GARBAGE);
    g_assert_cmpint(call_rename(&dir, NM("victim"), &pt.root, NM("important\0")), ==, GARBAGE);
    assert_unchanged(&dir, before);
    nr_fh found = pt_lookup(c, &dir, "important");
    g_assert_true(nr_fh_equal(&found, &imp));
    assert_content(c, &imp, "precious data");

    /* An honest RENAME still works. */
    pt_ok(c, nr_rename(c, &dir, "victim", &dir, "important.bak", NULL));
    assert_content(c, &imp, "precious data");
    g_free(before);
    nr_close(c);
}

/* REMOVE of "other\0xyz" must not remove "other"; RMDIR the same. */
static void test_remove_nul(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);

    nr_fh other = make_file(c, &dir, "other", "still here");
    pt_mkdir(c, &dir, "keep", 0755);
    char *before = snapshot(&dir);

    g_assert_cmpint(call_name(P_REMOVE, &dir, NM("other\0xyz")), ==, GARBAGE);
    g_assert_cmpint(call_name(P_REMOVE, &dir, NM("other\0")), ==, GARBAGE);
    g_assert_cmpint(call_name(P_RMDIR, &dir, NM("keep\0xyz")), ==, GARBAGE);
    assert_unchanged(&dir, before);
    assert_content(c, &other, "still here");
    pt_ok(c, nr_remove(c, &dir, "other", NULL));
    pt_ok(c, nr_rmdir(c, &dir, "keep", NULL));
    g_free(before);
    nr_close(c);
}

/* CREATE of "a\0b" must make nothing (and must not truncate an "a"). */
static void test_create_nul(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);
    char *before = snapshot(&dir);

    g_assert_cmpint(call_name(P_CREATE, &dir, NM("a\0b")), ==, GARBAGE);
    g_assert_cmpint(call_name(P_MKDIR, &dir, NM("a\0b")), ==, GARBAGE);
    g_assert_cmpint(call_name(P_MKNOD, &dir, NM("a\0b")), ==, GARBAGE);
    g_assert_cmpint(call_name(P_SYMLINK, &dir, NM("a\0b")), ==, GARBAGE);
    g_assert_cmpint(call_name(P_CREATE, &dir, NM("\0")), ==, GARBAGE);
    assert_unchanged(&dir, before);
    pt_stat(c, nr_lookup(c, &dir, "a", NULL), NFS3ERR_NOENT);
    g_free(before);

    /* With "a" there: an UNCHECKED create of "a\0b" setting size 0 would
     * have emptied it. */
    nr_fh a = make_file(c, &dir, "a", "keep my bytes");
    before = snapshot(&dir);
    g_assert_cmpint(call_create_truncating(&dir, NM("a\0b")), ==, GARBAGE);
    assert_unchanged(&dir, before);
    assert_content(c, &a, "keep my bytes");
    /* The same call with the plain name is what it looks like. */
    g_assert_cmpint(call_create_truncating(&dir, NM("a")), ==, NFS3_OK);
    g_assert_cmpuint(pt_getattr(c, &a).size, ==, 0);
    g_free(before);
    nr_close(c);
}

/* SYMLINK to "abc\0def" must not store "abc". */
static void test_symlink_target_nul(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);
    char *before = snapshot(&dir);

    g_assert_cmpint(call_symlink(&dir, NM("s"), NM("abc\0def")), ==, GARBAGE);
    g_assert_cmpint(call_symlink(&dir, NM("s"), NM("\0")), ==, GARBAGE);
    g_assert_cmpint(call_symlink(&dir, NM("s"), NM("abc\0")), ==, GARBAGE);
    assert_unchanged(&dir, before);
    pt_stat(c, nr_lookup(c, &dir, "s", NULL), NFS3ERR_NOENT);

    /* An empty target is NFS3ERR_INVAL; '/' in a target is a path. */
    g_assert_cmpint(call_symlink(&dir, NM("s"), NM("")), ==, NFS3ERR_INVAL);
    assert_unchanged(&dir, before);
    g_assert_cmpint(call_symlink(&dir, NM("s"), NM("abc/def")), ==, NFS3_OK);
    READLINK3res rl;
    pt_ok(c, nr_readlink(c, (nr_fh[]){pt_lookup(c, &dir, "s")}, &rl));
    g_assert_cmpstr(rl.READLINK3res_u.resok.data, ==, "abc/def");
    g_free(before);
    nr_close(c);
}

/* MKDIR, LINK and LOOKUP with a NUL: nothing made, nothing found. */
static void test_mkdir_link_lookup_nul(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);

    nr_fh f = make_file(c, &dir, "important", "data");
    char *before = snapshot(&dir);

    g_assert_cmpint(call_name(P_MKDIR, &dir, NM("d\0x")), ==, GARBAGE);
    g_assert_cmpint(call_link(&f, &dir, NM("l\0x")), ==, GARBAGE);
    /* LOOKUP would have found "important" under "important\0x". */
    g_assert_cmpint(call_name(P_LOOKUP, &dir, NM("important\0x")), ==, GARBAGE);
    g_assert_cmpint(call_name(P_LOOKUP, &dir, NM("important\0")), ==, GARBAGE);
    g_assert_cmpint(call_name(P_LOOKUP, &dir, NM("\0important")), ==, GARBAGE);
    assert_unchanged(&dir, before);
    g_assert_cmpuint(pt_getattr(c, &f).nlink, ==, 1);
    g_assert_cmpint(call_name(P_LOOKUP, &dir, NM("important")), ==, NFS3_OK);
    g_free(before);
    nr_close(c);
}

/* A NUL anywhere, for every procedure that takes a name. */
static void test_nul_everywhere(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);

    nr_fh src = make_file(c, &dir, "src", "s");
    pt_mkdir(c, &dir, "x", 0755);
    char *before = snapshot(&dir);

    assert_everywhere(&dir, &src, NM("x\0"), GARBAGE);
    assert_everywhere(&dir, &src, NM("\0x"), GARBAGE);
    assert_everywhere(&dir, &src, NM("src\0"), GARBAGE);
    assert_everywhere(&dir, &src, NM("\0\0\0\0"), GARBAGE);
    assert_unchanged(&dir, before);
    g_free(before);
    nr_close(c);
}

/* ---- '/', empty, ".", "..", long ------------------------------------------------------ */

/* A name with a '/' is GARBAGE_ARGS everywhere, whatever it would name. */
static void test_slash(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);

    nr_fh src = make_file(c, &dir, "src", "s");
    nr_fh a = pt_mkdir(c, &dir, "a", 0755);
    make_file(c, &a, "b", "b's bytes");
    char *before = snapshot(&dir);

    const char *names[] = {"a/b", "/", "a/", "/b", "../x", "a/../src", "//"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
        assert_everywhere(&dir, &src, nm_of(names[i]), GARBAGE);
    assert_unchanged(&dir, before);
    g_free(before);
    nr_close(c);
}

/* An empty name is GARBAGE_ARGS everywhere. */
static void test_empty(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);

    nr_fh src = make_file(c, &dir, "src", "s");
    char *before = snapshot(&dir);

    assert_everywhere(&dir, &src, NM(""), GARBAGE);
    assert_unchanged(&dir, before);
    g_free(before);
    nr_close(c);
}

/* "." and "..": Linux nfsd's status for each procedure. */
static void test_dots(void)
{
    nr_fh top = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);

    nr_fh dir = pt_mkdir(c, &top, "dir", 0755);
    nr_fh src = make_file(c, &dir, "src", "s");
    pt_mkdir(c, &dir, "sub", 0755);
    char *before = snapshot(&top);

    const nm dots[] = {NM("."), NM("..")};
    for (size_t i = 0; i < G_N_ELEMENTS(dots); i++) {
        nm d = dots[i];
        g_assert_cmpint(call_name(P_CREATE, &dir, d), ==, NFS3ERR_EXIST);
        g_assert_cmpint(call_create_truncating(&dir, d), ==, NFS3ERR_EXIST);
        g_assert_cmpint(call_name(P_MKDIR, &dir, d), ==, NFS3ERR_EXIST);
        g_assert_cmpint(call_name(P_SYMLINK, &dir, d), ==, NFS3ERR_EXIST);
        g_assert_cmpint(call_name(P_MKNOD, &dir, d), ==, NFS3ERR_EXIST);
        g_assert_cmpint(call_link(&src, &dir, d), ==, NFS3ERR_EXIST);
        g_assert_cmpint(call_name(P_REMOVE, &dir, d), ==, NFS3ERR_ACCES);
        g_assert_cmpint(call_name(P_RMDIR, &dir, d), ==, NFS3ERR_ACCES);
        g_assert_cmpint(call_rename(&dir, NM("src"), &dir, d), ==, NFS3ERR_PERM);
        g_assert_cmpint(call_rename(&dir, d, &dir, NM("dst")), ==, NFS3ERR_PERM);
        nr_fh sub = pt_lookup(c, &dir, "sub");
        g_assert_cmpint(call_rename(&sub, d, &dir, NM("dst")), ==, NFS3ERR_PERM);
    }
    assert_unchanged(&top, before);

    /* LOOKUP resolves them: the directory itself and its parent. */
    nr_fh self = pt_lookup(c, &dir, ".");
    g_assert_true(nr_fh_equal(&self, &dir));
    nr_fh parent = pt_lookup(c, &dir, "..");
    g_assert_true(nr_fh_equal(&parent, &top));
    /* Names that only start with dots are names. */
    pt_create(c, &dir, "...", 0644);
    pt_create(c, &dir, ".hidden", 0644);
    pt_lookup(c, &dir, "...");
    g_free(before);
    nr_close(c);
}

/* 256 to 1024 bytes: NAMETOOLONG everywhere; longer: GARBAGE_ARGS. */
static void test_long(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);
    char name[1026];

    nr_fh src = make_file(c, &dir, "src", "s");
    char *before = snapshot(&dir);
    memset(name, 'n', sizeof name);
    assert_everywhere(&dir, &src, (nm){name, 256}, NFS3ERR_NAMETOOLONG);
    assert_everywhere(&dir, &src, (nm){name, 1024}, NFS3ERR_NAMETOOLONG);
    assert_everywhere(&dir, &src, (nm){name, 1025}, GARBAGE);
    /* A NUL is refused whatever the length. */
    name[100] = '\0';
    assert_everywhere(&dir, &src, (nm){name, 256}, GARBAGE);
    name[100] = '/';
    assert_everywhere(&dir, &src, (nm){name, 300}, GARBAGE);
    name[100] = 'n';
    assert_unchanged(&dir, before);

    /* 255 bytes is a name. */
    name[255] = '\0';
    pt_create(c, &dir, name, 0644);
    pt_lookup(c, &dir, name);
    pt_ok(c, nr_remove(c, &dir, name, NULL));
    g_free(before);
    nr_close(c);
}

/* ---- every other byte ---------------------------------------------------------------- */

/*
 * Every byte but NUL and '/' is a name byte, and every byte but NUL a target
 * byte: names made of all of them come back from READDIR and READDIRPLUS
 * exactly (length and bytes), LOOKUP finds them, READLINK gives the target
 * back.
 */
static void test_every_byte(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(NULL);
    GHashTable *want = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    char name[128], target[256];
    size_t t = 0;

    /* Bytes 1..255 but '/', spread over names of up to 100 bytes. */
    for (unsigned b = 1, n = 0; b <= 255; b++) {
        if (b != '/')
            name[n++] = (char)b;
        if (n == 100 || b == 255) {
            name[n] = '\0';
            g_hash_table_add(want, g_strdup(name));
            n = 0;
        }
    }
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, want);
    while (g_hash_table_iter_next(&it, &key, NULL))
        pt_create(c, &dir, key, 0644);

    READDIR3res rd;
    pt_ok(c, nr_readdir(c, &dir, 0, NULL, 65536, &rd));
    g_assert_true(rd.READDIR3res_u.resok.reply.eof);
    unsigned seen = 0;
    for (const entry3 *e = rd.READDIR3res_u.resok.reply.entries; e; e = e->nextentry) {
        if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
            continue;
        g_assert_true(g_hash_table_contains(want, e->name));
        seen++;
    }
    g_assert_cmpuint(seen, ==, g_hash_table_size(want));
    char *listed = snapshot(&dir); /* READDIRPLUS, a LOOKUP-free walk */
    g_hash_table_iter_init(&it, want);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        nr_fh f = pt_lookup(c, &dir, key);
        g_assert_cmpuint(pt_getattr(c, &f).type, ==, NF3REG);
        char *line = g_strdup_printf("./%s fileid", (const char *)key);
        g_assert_nonnull(strstr(listed, line));
        g_free(line);
    }

    /* A target of bytes 255..1, '/' included. */
    for (unsigned b = 255; b >= 1; b--)
        target[t++] = (char)b;
    target[t] = '\0';
    g_assert_cmpint(call_symlink(&dir, NM("all"), (nm){target, t}), ==, NFS3_OK);
    READLINK3res rl;
    pt_ok(c, nr_readlink(c, (nr_fh[]){pt_lookup(c, &dir, "all")}, &rl));
    g_assert_cmpstr(rl.READLINK3res_u.resok.data, ==, target);
    g_free(listed);
    g_hash_table_unref(want);
    nr_close(c);
}

/* ---- MOUNT ------------------------------------------------------------------------- */

/* The mount list as text, one "host path" line per entry, sorted. */
static char *dump_text(void)
{
    nr_ctx *m = pt_open_mount(NULL);
    mountlist list = NULL;
    GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
    GString *s = g_string_new(NULL);

    g_assert_cmpint(nr_dump(m, &list), ==, 0);
    for (mountlist e = list; e; e = e->ml_next)
        g_ptr_array_add(lines, g_strdup_printf("%s %s", e->ml_hostname, e->ml_directory));
    g_ptr_array_sort(lines, cmp_lines);
    for (guint i = 0; i < lines->len; i++)
        g_string_append_printf(s, "%s\n", (const char *)g_ptr_array_index(lines, i));
    g_ptr_array_unref(lines);
    nr_close(m);
    return g_string_free(s, FALSE);
}

/* A MNT or UMNT path holding a NUL is GARBAGE_ARGS and changes no list. */
static void test_mount_nul(void)
{
    GString *path = g_string_new(pt.export_path);

    /* A path that names the export up to its NUL. */
    g_string_append(path, strcmp(pt.export_path, "/") == 0 ? "" : "/");
    g_string_append_len(path, "\0/../../etc", 11);
    char *before = dump_text();

    g_assert_cmpint(call_mount(P_MNT, (nm){path->str, path->len}), ==, GARBAGE);
    g_assert_cmpint(call_mount(P_MNT, NM("/\0")), ==, GARBAGE);
    g_assert_cmpint(call_mount(P_UMNT, (nm){path->str, path->len}), ==, GARBAGE);
    char *after = dump_text();
    g_assert_cmpstr(after, ==, before);

    /* The export's own path mounts. */
    g_assert_cmpint(call_mount(P_MNT, nm_of(pt.export_path)), ==, 0);
    g_assert_cmpint(call_mount(P_UMNT, nm_of(pt.export_path)), ==, 0);
    g_free(before);
    g_free(after);
    g_string_free(path, TRUE);
}

int main(int argc, char **argv)
{
    pt_init(&argc, &argv);
    pt_add("/names/rename_nul", test_rename_nul);
    pt_add("/names/remove_nul", test_remove_nul);
    pt_add("/names/create_nul", test_create_nul);
    pt_add("/names/symlink_target_nul", test_symlink_target_nul);
    pt_add("/names/mkdir_link_lookup_nul", test_mkdir_link_lookup_nul);
    pt_add("/names/nul_everywhere", test_nul_everywhere);
    pt_add("/names/slash", test_slash);
    pt_add("/names/empty", test_empty);
    pt_add("/names/dots", test_dots);
    pt_add("/names/long", test_long);
    pt_add("/names/every_byte", test_every_byte);
    pt_add("/names/mount_nul", test_mount_nul);
    return pt_run();
}
