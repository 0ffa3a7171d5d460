/*
 * test_snap.c -- snapshots through a real client (libnfs) against a
 * model: random changes made over NFS, interleaved with `pgnfs snapshot
 * create` run beside the server; every snapshot, reached as
 * /.snapshots/NAME, must show exactly the model's tree of its moment
 * (READDIRPLUS, LOOKUP, READ, READLINK) and the same through the SQL view
 * pgnfs.tree_at. Also: snapshot files have their own fsid, every change
 * answers NFS3ERR_ROFS, ".." leads back, .snapshots is hidden from the
 * root's listing (and listed with [snapshot] visible = true), READDIRPLUS
 * of .snapshots gives handles and attributes, its times move with every
 * snapshot taken or deleted, a forged or
 * deleted snapshot's handle is refused, pgnfs diff, restore, and the
 * server's schedule. ctest runs it once per storage layout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "ptest.h"

/* A model entry: a path below the test's directory. */
typedef struct {
    ftype3 type;
    uint32_t mode;
    GByteArray *data;
    char *target;
} st_node;

static void st_node_free(void *p)
{
    st_node *n = p;

    if (n->data)
        g_byte_array_unref(n->data);
    g_free(n->target);
    g_free(n);
}

static GHashTable *st_tree_new(void)
{
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, st_node_free);
}

static GHashTable *st_tree_copy(GHashTable *from)
{
    GHashTable *to = st_tree_new();
    GHashTableIter it;
    void *k, *v;

    g_hash_table_iter_init(&it, from);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        st_node *o = v, *n = g_new0(st_node, 1);
        n->type = o->type;
        n->mode = o->mode;
        if (o->data)
            n->data = g_byte_array_new_take(g_memdup2(o->data->data, o->data->len), o->data->len);
        n->target = g_strdup(o->target);
        g_hash_table_insert(to, g_strdup(k), n);
    }
    return to;
}

/* Run pgnfs with args (NULL-terminated) on the server's database; its
 * stdout (g_free) and exit status. */
/* Run pgnfs ARGS... --conninfo CONNINFO; its exit status into *status. */
static char *st_pgnfs_on(const char *conninfo, int *status, const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    char *out = NULL, *errout = NULL;
    GError *err = NULL;
    int wait = 0;

    g_ptr_array_add(argv, (char *)tl_pgnfs_bin());
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, (char *)*a);
    g_ptr_array_add(argv, "--conninfo");
    g_ptr_array_add(argv, (char *)conninfo);
    g_ptr_array_add(argv, NULL);
    if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, 0, NULL, NULL, &out, &errout, &wait, &err))
        g_error("cannot run pgnfs: %s", err->message);
    *status = WIFEXITED(wait) ? WEXITSTATUS(wait) : -1;
    if (*status != 0)
        g_message("pgnfs %s: exit %d: %s", args[0], *status, errout);
    g_free(errout);
    g_ptr_array_free(argv, TRUE);
    return out;
}

static char *st_pgnfs(int *status, const char *const *args)
{
    return st_pgnfs_on(tl_server_conninfo(pt.server), status, args);
}

static void st_snapshot(const char *what, const char *name)
{
    const char *args[] = {"snapshot", what, name, NULL};
    int status;

    g_free(st_pgnfs(&status, args));
    g_assert_cmpint(status, ==, 0);
}

/* Compare the tree under dir (a snapshot's, path relative to the test's
 * directory) with m; count the entries seen. */
static void st_check_dir(nr_ctx *c, const nr_fh *dir, const char *path, GHashTable *m,
                         uint64_t fsid, unsigned *seen)
{
    uint64_t cookie = 0;
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    GPtrArray *sub = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *fhs = g_ptr_array_new_with_free_func(g_free);

    for (bool eof = false; !eof;) {
        READDIRPLUS3res res;

        pt_ok(c, nr_readdirplus(c, dir, cookie, verf, 4096, 32768, &res));
        const READDIRPLUS3resok *ok = &res.READDIRPLUS3res_u.resok;
        memcpy(verf, ok->cookieverf, sizeof verf);
        for (const entryplus3 *e = ok->reply.entries; e; e = e->nextentry) {
            cookie = e->cookie;
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            char *p = g_strconcat(path, "/", e->name, NULL);
            st_node *want = g_hash_table_lookup(m, p);
            if (!want)
                g_error("the snapshot shows %s, which the model does not have", p);
            fattr3 a = pt_post_attr(&e->name_attributes);
            g_assert_cmpuint(a.fsid, ==, fsid);
            g_assert_cmpint(a.type, ==, want->type);
            if (want->type != NF3LNK)
                g_assert_cmpuint(a.mode, ==, want->mode);
            nr_fh *fh = g_new(nr_fh, 1);
            *fh = pt_post_fh(&e->name_handle);
            g_ptr_array_add(sub, p);
            g_ptr_array_add(fhs, fh);
        }
        eof = ok->reply.eof;
        nr_arena_clear(c);
    }
    for (guint i = 0; i < sub->len; i++) {
        const char *p = sub->pdata[i];
        const nr_fh *fh = fhs->pdata[i];
        st_node *want = g_hash_table_lookup(m, p);

        if (want->type == NF3REG) {
            GByteArray *got = pt_read_all(c, fh);
            g_assert_cmpmem(got->data, got->len, want->data->data, want->data->len);
            g_byte_array_unref(got);
        } else if (want->type == NF3LNK) {
            READLINK3res rl;
            pt_ok(c, nr_readlink(c, fh, &rl));
            g_assert_cmpstr(rl.READLINK3res_u.resok.data, ==, want->target);
            nr_arena_clear(c);
        } else if (want->type == NF3DIR) {
            st_check_dir(c, fh, p, m, fsid, seen);
        }
        (*seen)++;
    }
    g_ptr_array_free(sub, TRUE);
    g_ptr_array_free(fhs, TRUE);
}

/* The same through SQL: pgnfs.tree_at(name, /top). */
static void st_check_sql(const char *name, const char *top, GHashTable *m)
{
    PGconn *db = PQconnectdb(tl_server_conninfo(pt.server));
    char *dir = g_strconcat("/", top, NULL);
    const char *params[2] = {name, dir};
    PGresult *r;
    unsigned files = 0;

    g_assert_cmpint(PQstatus(db), ==, CONNECTION_OK);
    r = PQexecParams(db,
                     "SELECT substr(t.path, length($2) + 1), t.type, t.size,"
                     " CASE WHEN t.type = 'file' THEN encode(pgnfs.sha256_at($1, t.inode), 'hex')"
                     " END FROM pgnfs.tree_at($1, $2) t WHERE t.path <> $2",
                     2, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        g_error("tree_at: %s", PQresultErrorMessage(r));
    g_assert_cmpint(PQntuples(r), ==, g_hash_table_size(m));
    for (int i = 0; i < PQntuples(r); i++) {
        st_node *want = g_hash_table_lookup(m, PQgetvalue(r, i, 0));
        if (!want)
            g_error("tree_at shows %s, which the model does not have", PQgetvalue(r, i, 0));
        if (want->type == NF3REG) {
            char *sha =
                g_compute_checksum_for_data(G_CHECKSUM_SHA256, want->data->data, want->data->len);
            g_assert_cmpstr(PQgetvalue(r, i, 1), ==, "file");
            g_assert_cmpstr(PQgetvalue(r, i, 3), ==, sha);
            g_free(sha);
            files++;
        }
    }
    PQclear(r);
    PQfinish(db);
    g_free(dir);
    (void)files;
}

/* The root of snapshot name in the export: /.snapshots/NAME. */
static nr_fh st_snap_root(nr_ctx *c, const char *name, nr_fh *snapdir)
{
    nr_fh d = pt_lookup(c, &pt.root, ".snapshots");

    if (snapdir)
        *snapdir = d;
    return pt_lookup(c, &d, name);
}

/* One random change in the model's tree under t (path "" is t). */
static void st_change(nr_ctx *c, const nr_fh *t, GHashTable *m, GRand *rnd)
{
    char name[16];
    int what = g_rand_int_range(rnd, 0, 10);

    g_snprintf(name, sizeof name, "f%d", g_rand_int_range(rnd, 0, 8));
    char *p = g_strconcat("/", name, NULL);
    st_node *n = g_hash_table_lookup(m, p);

    if (!n && what < 6) {
        nr_fh f = pt_create(c, t, name, 0644);
        uint32_t len = (uint32_t)g_rand_int_range(rnd, 0, 150000);
        unsigned char *buf = g_malloc(len + 1);
        for (uint32_t i = 0; i < len; i++)
            buf[i] = (unsigned char)g_rand_int(rnd);
        for (uint32_t done = 0; done < len;) {
            uint32_t k = len - done < 32768 ? len - done : 32768;
            pt_write(c, &f, done, buf + done, k);
            done += k;
        }
        n = g_new0(st_node, 1);
        n->type = NF3REG;
        n->mode = 0644;
        n->data = g_byte_array_new_take(buf, len);
        g_hash_table_insert(m, g_strdup(p), n);
    } else if (!n) {
        SYMLINK3res sl;
        sattr3 sa = nr_sattr_mode(0777);
        char *target = g_strdup_printf("to-%u", g_rand_int(rnd));
        pt_ok(c, nr_symlink(c, t, name, target, &sa, &sl));
        nr_arena_clear(c);
        n = g_new0(st_node, 1);
        n->type = NF3LNK;
        n->mode = 0777;
        n->target = target;
        g_hash_table_insert(m, g_strdup(p), n);
    } else if (n->type == NF3REG && what < 5) {
        nr_fh f = pt_lookup(c, t, name);
        uint32_t off = (uint32_t)g_rand_int_range(rnd, 0, (int)n->data->len + 1);
        uint32_t len = (uint32_t)g_rand_int_range(rnd, 1, 70000);
        unsigned char *buf = g_malloc(len);
        for (uint32_t i = 0; i < len; i++)
            buf[i] = (unsigned char)g_rand_int(rnd);
        for (uint32_t done = 0; done < len;) {
            uint32_t k = len - done < 32768 ? len - done : 32768;
            pt_write(c, &f, off + done, buf + done, k);
            done += k;
        }
        if (n->data->len < off + len)
            g_byte_array_set_size(n->data, off + len);
        memcpy(n->data->data + off, buf, len);
        g_free(buf);
    } else if (n->type == NF3REG && what < 7) {
        nr_fh f = pt_lookup(c, t, name);
        pt_chmod(c, &f, 0600 | (uint32_t)g_rand_int_range(rnd, 0, 077));
        n->mode = pt_getattr(c, &f).mode;
    } else {
        REMOVE3res rr;
        pt_ok(c, nr_remove(c, t, name, &rr));
        nr_arena_clear(c);
        g_hash_table_remove(m, p);
    }
    g_free(p);
}

/* Snapshots of a changing tree read back as the model, over NFS and SQL. */
static void test_model(void)
{
    nr_ctx *c = pt_open(NULL);
    char *top = g_strdup_printf("model-%d", (int)getpid());
    nr_fh t = pt_mkdir(c, &pt.root, top, 0755);
    GHashTable *live = st_tree_new();
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *trees = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);
    GRand *rnd = g_rand_new_with_seed(18);
    uint64_t live_fsid = pt_getattr(c, &t).fsid, fsids[8];

    for (int s = 0; s < 6; s++) {
        for (int i = 0; i < 12; i++)
            st_change(c, &t, live, rnd);
        char *name = g_strdup_printf("%s-%d", top, s);
        st_snapshot("create", name);
        g_ptr_array_add(names, name);
        g_ptr_array_add(trees, st_tree_copy(live));
    }
    /* One more round after the last snapshot, then delete one. */
    for (int i = 0; i < 12; i++)
        st_change(c, &t, live, rnd);
    st_snapshot("delete", names->pdata[2]);
    for (guint s = 0; s < names->len; s++) {
        nr_fh snapdir, root, dir;
        LOOKUP3res lr;

        if (s == 2) {
            nr_fh d = pt_lookup(c, &pt.root, ".snapshots");
            pt_stat(c, nr_lookup(c, &d, names->pdata[s], &lr), NFS3ERR_NOENT);
            nr_arena_clear(c);
            continue;
        }
        root = st_snap_root(c, names->pdata[s], &snapdir);
        fattr3 ra = pt_getattr(c, &root);
        fsids[s] = ra.fsid;
        g_assert_cmpuint(ra.fsid, !=, live_fsid);
        g_assert_cmpuint(pt_getattr(c, &snapdir).fsid, !=, live_fsid);
        for (guint o = 0; o < s; o++)
            if (o != 2)
                g_assert_cmpuint(fsids[o], !=, ra.fsid);
        dir = pt_lookup(c, &root, top);
        unsigned seen = 0;
        st_check_dir(c, &dir, "", trees->pdata[s], ra.fsid, &seen);
        g_assert_cmpuint(seen, ==, g_hash_table_size(trees->pdata[s]));
        st_check_sql(names->pdata[s], top, trees->pdata[s]);
    }
    for (guint s = 0; s < names->len; s++)
        if (s != 2)
            st_snapshot("delete", names->pdata[s]);
    g_ptr_array_free(names, TRUE);
    g_ptr_array_free(trees, TRUE);
    g_hash_table_unref(live);
    g_rand_free(rnd);
    g_free(top);
    nr_close(c);
}

/* Everything that would change a snapshot answers ROFS; ".." leads back;
 * .snapshots is not listed; forged and deleted handles are refused. */
static void test_readonly(void)
{
    nr_ctx *c = pt_open(NULL);
    char *top = g_strdup_printf("ro-%d", (int)getpid());
    char *name = g_strdup_printf("ro-%d", (int)getpid());
    nr_fh t = pt_mkdir(c, &pt.root, top, 0755);
    nr_fh f = pt_create(c, &t, "f", 0644);
    pt_write(c, &f, 0, "snapshot", 8);
    st_snapshot("create", name);

    nr_fh snapdir, root = st_snap_root(c, name, &snapdir);
    nr_fh st = pt_lookup(c, &root, top), sf = pt_lookup(c, &st, "f");
    sattr3 sa = nr_sattr_mode(0700);
    CREATE3res cr;
    MKDIR3res mk;
    REMOVE3res rm;
    RENAME3res rn;
    LINK3res ln;
    SYMLINK3res sl;
    SETATTR3res sr;
    WRITE3res wr;
    ACCESS3res ac;
    LOOKUP3res lr;

    pt_stat(c, nr_create(c, &st, "new", UNCHECKED, &sa, NULL, &cr), NFS3ERR_ROFS);
    pt_stat(c, nr_mkdir(c, &st, "new", &sa, &mk), NFS3ERR_ROFS);
    pt_stat(c, nr_remove(c, &st, "f", &rm), NFS3ERR_ROFS);
    pt_stat(c, nr_rename(c, &st, "f", &st, "g", &rn), NFS3ERR_ROFS);
    pt_stat(c, nr_rename(c, &st, "f", &t, "g", &rn), NFS3ERR_ROFS);
    pt_stat(c, nr_link(c, &sf, &st, "g", &ln), NFS3ERR_ROFS);
    pt_stat(c, nr_link(c, &sf, &t, "g", &ln), NFS3ERR_ROFS);
    pt_stat(c, nr_symlink(c, &st, "s", "x", &sa, &sl), NFS3ERR_ROFS);
    pt_stat(c, nr_setattr(c, &sf, &sa, NULL, &sr), NFS3ERR_ROFS);
    pt_stat(c, nr_write(c, &sf, 0, "x", 1, FILE_SYNC, &wr), NFS3ERR_ROFS);
    pt_stat(c, nr_mkdir(c, &snapdir, "new", &sa, &mk), NFS3ERR_ROFS);
    pt_ok(c, nr_access(c, &sf, ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND, &ac));
    g_assert_cmpuint(ac.ACCESS3res_u.resok.access, ==, ACCESS3_READ);
    nr_arena_clear(c);
    /* The live file is untouched; the snapshot's reads back. */
    GByteArray *got = pt_read_all(c, &sf);
    g_assert_cmpmem(got->data, got->len, "snapshot", 8);
    g_byte_array_unref(got);
    /* Up: snapshot root -> .snapshots -> the live root. */
    nr_fh up = pt_lookup(c, &root, "..");
    g_assert_true(nr_fh_equal(&up, &snapdir));
    up = pt_lookup(c, &snapdir, "..");
    g_assert_cmpuint(pt_getattr(c, &up).fileid, ==, pt_getattr(c, &pt.root).fileid);
    g_assert_cmpuint(pt_getattr(c, &up).fsid, ==, pt_getattr(c, &pt.root).fsid);
    /* Not in the root's listing (visible = false). */
    READDIR3res rd;
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    uint64_t cookie = 0;
    for (bool eof = false; !eof;) {
        pt_ok(c, nr_readdir(c, &pt.root, cookie, verf, 8192, &rd));
        memcpy(verf, rd.READDIR3res_u.resok.cookieverf, sizeof verf);
        for (const entry3 *e = rd.READDIR3res_u.resok.reply.entries; e; e = e->nextentry) {
            g_assert_cmpstr(e->name, !=, ".snapshots");
            cookie = e->cookie;
        }
        eof = rd.READDIR3res_u.resok.reply.eof;
        nr_arena_clear(c);
    }
    /* A handle moved to another snapshot (its id changed) is no handle. */
    nr_fh forged = sf;
    g_assert_cmpuint(forged.len, ==, 38);
    forged.data[5] ^= 1;
    GETATTR3res ga;
    pt_stat(c, nr_getattr(c, &forged, &ga), NFS3ERR_BADHANDLE);
    /* Deleted: stale at once. */
    st_snapshot("delete", name);
    pt_stat(c, nr_getattr(c, &sf, &ga), NFS3ERR_STALE);
    pt_stat(c, nr_lookup(c, &snapdir, name, &lr), NFS3ERR_NOENT);
    nr_arena_clear(c);
    g_free(name);
    g_free(top);
    nr_close(c);
}

/* The directory of snapshots: READDIRPLUS gives every snapshot's root
 * with its attributes and handle, the same as LOOKUP's; its link count
 * follows the snapshots; its times change when any snapshot goes, the
 * newest or an older one (an NFSv3 client sees that a directory changed
 * by its times alone). */
static void test_snapdir(void)
{
    nr_ctx *c = pt_open(NULL);
    char *names[3];
    GPtrArray *seen = g_ptr_array_new_with_free_func(g_free);
    GArray *fhs = g_array_new(FALSE, FALSE, sizeof(nr_fh));
    GArray *attrs = g_array_new(FALSE, FALSE, sizeof(fattr3));
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    uint64_t cookie = 0;

    for (int i = 0; i < 3; i++) {
        names[i] = g_strdup_printf("sd-%d-%d", (int)getpid(), i);
        st_snapshot("create", names[i]);
    }
    nr_fh sd = pt_lookup(c, &pt.root, ".snapshots");
    fattr3 before = pt_getattr(c, &sd);
    /* Small replies: several pages. */
    for (bool eof = false; !eof;) {
        READDIRPLUS3res res;

        pt_ok(c, nr_readdirplus(c, &sd, cookie, verf, 200, 700, &res));
        const READDIRPLUS3resok *ok = &res.READDIRPLUS3res_u.resok;
        memcpy(verf, ok->cookieverf, sizeof verf);
        for (const entryplus3 *e = ok->reply.entries; e; e = e->nextentry) {
            cookie = e->cookie;
            if (strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0)
                continue;
            g_assert_true(e->name_attributes.attributes_follow);
            g_assert_true(e->name_handle.handle_follows);
            fattr3 a = pt_post_attr(&e->name_attributes);
            nr_fh fh = pt_post_fh(&e->name_handle);
            g_assert_cmpuint(a.fileid, ==, e->fileid);
            g_ptr_array_add(seen, g_strdup(e->name));
            g_array_append_val(fhs, fh);
            g_array_append_val(attrs, a);
        }
        eof = ok->reply.eof;
        nr_arena_clear(c);
    }
    g_assert_cmpuint(before.nlink, ==, 2 + seen->len);
    int mine = 0;
    for (guint i = 0; i < seen->len; i++) {
        const fattr3 *a = &g_array_index(attrs, fattr3, i);
        nr_fh fh = pt_lookup(c, &sd, seen->pdata[i]);
        fattr3 l = pt_getattr(c, &fh);

        g_assert_true(nr_fh_equal(&fh, &g_array_index(fhs, nr_fh, i)));
        g_assert_cmpuint(a->fsid, ==, l.fsid);
        g_assert_cmpuint(a->fsid, !=, before.fsid);
        g_assert_cmpuint(a->fileid, ==, l.fileid);
        g_assert_cmpint(a->type, ==, NF3DIR);
        g_assert_cmpuint(a->mode, ==, l.mode);
        g_assert_cmpuint(a->mtime.seconds, ==, l.mtime.seconds);
        g_assert_cmpuint(a->mtime.nseconds, ==, l.mtime.nseconds);
        for (int k = 0; k < 3; k++)
            mine += strcmp(seen->pdata[i], names[k]) == 0;
    }
    g_assert_cmpint(mine, ==, 3);
    /* The oldest of the three goes: the newest's time stays, the
     * directory's times must not. */
    st_snapshot("delete", names[0]);
    fattr3 after = pt_getattr(c, &sd);
    g_assert_cmpuint(after.nlink, ==, before.nlink - 1);
    g_assert_true(after.mtime.seconds != before.mtime.seconds ||
                  after.mtime.nseconds != before.mtime.nseconds);
    g_assert_true(after.ctime.seconds != before.ctime.seconds ||
                  after.ctime.nseconds != before.ctime.nseconds);
    for (int i = 1; i < 3; i++)
        st_snapshot("delete", names[i]);
    for (int i = 0; i < 3; i++)
        g_free(names[i]);
    g_ptr_array_free(seen, TRUE);
    g_array_free(fhs, TRUE);
    g_array_free(attrs, TRUE);
    nr_close(c);
}

/* pgnfs diff and pgnfs snapshot restore beside a running server (shared
 * coherence is not needed to refuse: this server is single). */
static void test_diff(void)
{
    nr_ctx *c = pt_open(NULL);
    char *top = g_strdup_printf("diff-%d", (int)getpid());
    char *a = g_strconcat(top, "-a", NULL), *b = g_strconcat(top, "-b", NULL);
    nr_fh t = pt_mkdir(c, &pt.root, top, 0755);
    nr_fh f = pt_create(c, &t, "kept", 0644);
    REMOVE3res rm;
    int status;

    pt_create(c, &t, "gone", 0644);
    st_snapshot("create", a);
    pt_write(c, &f, 0, "changed", 7);
    pt_ok(c, nr_remove(c, &t, "gone", &rm));
    pt_create(c, &t, "new", 0644);
    st_snapshot("create", b);
    const char *args[] = {"diff", a, b, NULL};
    char *out = st_pgnfs(&status, args);
    g_assert_cmpint(status, ==, 0);
    char *want = g_strdup_printf("M /%s/\n- /%s/gone\nM /%s/kept\n+ /%s/new\n", top, top, top, top);
    /* Other cases change the root meanwhile: look at this case's lines. */
    g_assert_nonnull(strstr(out, want));
    g_free(want);
    g_free(out);
    const char *bad[] = {"diff", "no-such-snapshot", NULL};
    g_free(st_pgnfs(&status, bad));
    g_assert_cmpint(status, ==, 1);
    /* A single-coherence server would not see a restore: refused. */
    char *path = g_strdup_printf("/%s/gone", top);
    const char *rs[] = {"snapshot", "restore", a, path, NULL};
    g_free(st_pgnfs(&status, rs));
    g_assert_cmpint(status, ==, 1);
    g_free(path);
    st_snapshot("delete", a);
    st_snapshot("delete", b);
    g_free(a);
    g_free(b);
    g_free(top);
    nr_close(c);
}

/* [snapshot] visible = true, and the schedule (every, keep), on a server
 * of their own. */
static void test_visible_schedule(void)
{
    const char *set[] = {"snapshot.visible=true", "snapshot.every=1", "snapshot.keep=2",
                         "snapshot.prefix=sched-", NULL};
    tl_server *s = tl_server_start(set);
    nr_ctx *c = nr_open(tl_server_port(s), &pt_root);
    mountres3 mr;
    nr_fh root;
    PGconn *db = PQconnectdb(tl_server_conninfo(s));
    gint64 deadline = g_get_monotonic_time() + 180 * G_TIME_SPAN_SECOND;
    long taken = 0;
    nr_fh snapfh = {0};
    fattr3 snapattr = {0};

    g_assert_nonnull(c);
    nr_ctx *m = nr_open(tl_server_port(s), &pt_root);
    g_assert_cmpint(nr_mnt(m, "/", &mr, &root), ==, 0);
    nr_close(m);
    g_assert_cmpint(PQstatus(db), ==, CONNECTION_OK);
    /* Three scheduled snapshots taken (ids 1..3 at least), two kept. */
    while (g_get_monotonic_time() < deadline) {
        PGresult *r = PQexec(db, "SELECT (SELECT epoch FROM pgnfs_snap_state),"
                                 " (SELECT count(*) FROM pgnfs_snapshots WHERE scheduled)");
        taken = atol(PQgetvalue(r, 0, 0));
        long kept = atol(PQgetvalue(r, 0, 1));
        PQclear(r);
        if (taken >= 3 && kept == 2)
            break;
        g_usleep(G_USEC_PER_SEC / 5);
    }
    g_assert_cmpint(taken, >=, 3);
    /* Listed last in the root, READDIR and READDIRPLUS, paging through. */
    for (int plus = 0; plus < 2; plus++) {
        char verf[NFS3_COOKIEVERFSIZE] = {0};
        uint64_t cookie = 0;
        int found = 0;
        for (bool eof = false; !eof;) {
            if (plus) {
                READDIRPLUS3res res;
                pt_ok(c, nr_readdirplus(c, &root, cookie, verf, 200, 1000, &res));
                for (const entryplus3 *e = res.READDIRPLUS3res_u.resok.reply.entries; e;
                     e = e->nextentry) {
                    cookie = e->cookie;
                    if (strcmp(e->name, ".snapshots") != 0)
                        continue;
                    /* With its attributes and handle, as LOOKUP gives them. */
                    found++;
                    g_assert_true(e->name_attributes.attributes_follow);
                    g_assert_true(e->name_handle.handle_follows);
                    snapfh = pt_post_fh(&e->name_handle);
                    snapattr = pt_post_attr(&e->name_attributes);
                }
                eof = res.READDIRPLUS3res_u.resok.reply.eof;
            } else {
                READDIR3res res;
                pt_ok(c, nr_readdir(c, &root, cookie, verf, 200, &res));
                for (const entry3 *e = res.READDIR3res_u.resok.reply.entries; e; e = e->nextentry) {
                    found += strcmp(e->name, ".snapshots") == 0;
                    cookie = e->cookie;
                }
                eof = res.READDIR3res_u.resok.reply.eof;
            }
            nr_arena_clear(c);
        }
        g_assert_cmpint(found, ==, 1);
    }
    /* The snapshots directory lists the two kept ones. */
    nr_fh sd = pt_lookup(c, &root, ".snapshots");
    g_assert_true(nr_fh_equal(&sd, &snapfh));
    g_assert_cmpuint(snapattr.fileid, ==, pt_getattr(c, &sd).fileid);
    g_assert_cmpuint(snapattr.fsid, ==, pt_getattr(c, &sd).fsid);
    READDIR3res res;
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    int n = 0;
    pt_ok(c, nr_readdir(c, &sd, 0, verf, 8192, &res));
    for (const entry3 *e = res.READDIR3res_u.resok.reply.entries; e; e = e->nextentry)
        n += g_str_has_prefix(e->name, "sched-");
    g_assert_cmpint(n, ==, 2);
    nr_arena_clear(c);
    PQfinish(db);
    nr_close(c);
    tl_server_stop(s);
}

/* pgnfs snapshot restore beside a shared server that serves the file
 * system alone: such a server answers from its caches without reading the
 * invalidation log, until restore wakes it; its clients then see the
 * restored file (a new inode under the old name), not what it cached. */
static void test_restore_shared(void)
{
    const char *set[] = {"cache.coherence=shared", NULL};
    tl_server *s = tl_server_start(set);
    nr_ctx *c = nr_open(tl_server_port(s), &pt_root);
    nr_ctx *m = nr_open(tl_server_port(s), &pt_root);
    mountres3 mr;
    nr_fh root, f, g;
    int status;

    g_assert_nonnull(c);
    g_assert_cmpint(nr_mnt(m, "/", &mr, &root), ==, 0);
    nr_close(m);
    f = pt_create(c, &root, "r", 0644);
    pt_write(c, &f, 0, "before", 6);
    const char *mk[] = {"snapshot", "create", "s1", NULL};
    g_free(st_pgnfs_on(tl_server_conninfo(s), &status, mk));
    g_assert_cmpint(status, ==, 0);
    pt_write(c, &f, 0, "after!", 6);
    /* In the server's caches now: the name, the attributes, the bytes. */
    g = pt_lookup(c, &root, "r");
    GByteArray *got = pt_read_all(c, &g);
    g_assert_cmpmem(got->data, got->len, "after!", 6);
    g_byte_array_free(got, TRUE);
    const char *rs[] = {"snapshot", "restore", "s1", "/r", NULL};
    g_free(st_pgnfs_on(tl_server_conninfo(s), &status, rs));
    g_assert_cmpint(status, ==, 0);
    g = pt_lookup(c, &root, "r");
    got = pt_read_all(c, &g);
    g_assert_cmpmem(got->data, got->len, "before", 6);
    g_byte_array_free(got, TRUE);
    nr_close(c);
    tl_server_stop(s);
}

int main(int argc, char **argv)
{
    pt_init(&argc, &argv);
    pt_add("/snap/model", test_model);
    pt_add("/snap/readonly", test_readonly);
    pt_add("/snap/snapdir", test_snapdir);
    pt_add("/snap/diff", test_diff);
    pt_add("/snap/visible-schedule", test_visible_schedule);
    pt_add("/snap/restore-shared", test_restore_shared);
    return pt_run();
}
