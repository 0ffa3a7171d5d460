/*
 * test_snap.c -- snapshots (dbfs_snap.h, schema/008_snapshots.sql)
 * against a model: random operations on a small tree, interleaved with
 * snapshots taken and deleted; every live snapshot must read back exactly
 * the model's tree at the moment it was taken, through dbfs's calls (the
 * server's path) and through the SQL views (pgnfs.files_at,
 * pgnfs.sha256_at); deleting snapshots and reclaiming must leave no kept
 * row that no snapshot needs (pgnfs fsck's `snapshots` check), and none at
 * all once the last one is gone. ctest runs it once per storage layout
 * and encoding (PGNFS_TEST_MKFS).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "dbfs_snap.h"
#include "dbfs_xform.h"
#include "td.h"
#include "testlib.h"

#define SN_CHUNK 4096u
#define SN_DIRS  3
#define SN_NAMES 6

/* A model file: shared by its hard links. */
typedef struct {
    int refs;
    dbfs_type type;
    uint32_t mode;
    GByteArray *data; /* regular files */
    char *target;     /* symbolic links */
} sn_node;

typedef struct {
    td_fs t;
    dbfs_cred root;
    GRand *rnd;
    GHashTable *live; /* path -> sn_node */
    GPtrArray *snaps; /* sn_snap, live snapshots */
    unsigned taken;
} sn_env;

typedef struct {
    char *name;
    GHashTable *tree; /* path -> sn_node (copies) */
} sn_snap;

static void sn_node_unref(void *p)
{
    sn_node *n = p;

    if (--n->refs > 0)
        return;
    if (n->data)
        g_byte_array_unref(n->data);
    g_free(n->target);
    g_free(n);
}

static sn_node *sn_node_new(dbfs_type type, uint32_t mode)
{
    sn_node *n = g_new0(sn_node, 1);

    n->refs = 1;
    n->type = type;
    n->mode = mode;
    if (type == DBFS_REG)
        n->data = g_byte_array_new();
    return n;
}

static GHashTable *sn_tree_new(void)
{
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, sn_node_unref);
}

/* A deep copy of a tree (links become separate copies: enough to compare
 * what each path holds). */
static GHashTable *sn_tree_copy(GHashTable *from)
{
    GHashTable *to = sn_tree_new();
    GHashTableIter it;
    void *k, *v;

    g_hash_table_iter_init(&it, from);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        sn_node *o = v, *n = sn_node_new(o->type, o->mode);

        if (o->data)
            g_byte_array_append(n->data, o->data->data, o->data->len);
        n->target = g_strdup(o->target);
        g_hash_table_insert(to, g_strdup(k), n);
    }
    return to;
}

/* The live attributes of path (which must exist). */
static dbfs_attr sn_walk(sn_env *e, const char *path)
{
    char **parts = g_strsplit(path, "/", -1);
    dbfs_attr a = td_getattr(&e->t, e->t.root);

    for (char **p = parts; *p; p++)
        if (**p)
            a = td_lookup(&e->t, &e->root, td_fh(&a), *p);
    g_strfreev(parts);
    return a;
}

/* A random existing path of the given type (0: any but the root), or NULL. */
static const char *sn_pick(sn_env *e, dbfs_type type)
{
    GPtrArray *all = g_ptr_array_new();
    GHashTableIter it;
    void *k, *v;
    const char *p = NULL;

    g_hash_table_iter_init(&it, e->live);
    while (g_hash_table_iter_next(&it, &k, &v))
        if ((type == 0 || ((sn_node *)v)->type == type) && strcmp(k, "/") != 0)
            g_ptr_array_add(all, k);
    if (all->len > 0)
        p = all->pdata[g_rand_int_range(e->rnd, 0, (int)all->len)];
    g_ptr_array_free(all, true);
    return p;
}

/* A random free path: a name in "/" or in an existing /dN; NULL when
 * the name drawn is taken. */
static char *sn_free_path(sn_env *e)
{
    int d = g_rand_int_range(e->rnd, -1, SN_DIRS);
    char *dp = d < 0 ? g_strdup("") : g_strdup_printf("/d%d", d);
    sn_node *dn = g_hash_table_lookup(e->live, *dp ? dp : "/");
    char *p;

    if (!dn || dn->type != DBFS_DIR) {
        g_free(dp);
        dp = g_strdup("");
    }
    p = g_strdup_printf("%s/f%d", dp, g_rand_int_range(e->rnd, 0, SN_NAMES));
    g_free(dp);
    if (g_hash_table_contains(e->live, p)) {
        g_free(p);
        return NULL;
    }
    return p;
}

static void sn_split(const char *path, char **dir, char **base)
{
    *dir = g_path_get_dirname(path);
    *base = g_path_get_basename(path);
}

/* One random operation, on dbfs and on the model alike. */
static void sn_op(sn_env *e)
{
    int what = g_rand_int_range(e->rnd, 0, 100);
    char *dir = NULL, *base = NULL, *p = NULL;
    const char *q;

    if (what < 18 && (p = sn_free_path(e)) != NULL) { /* create */
        sn_split(p, &dir, &base);
        dbfs_attr d = sn_walk(e, dir);
        td_create(&e->t, &e->root, td_fh(&d), base, 0644);
        g_hash_table_insert(e->live, g_strdup(p), sn_node_new(DBFS_REG, 0644));
    } else if (what < 45 && (q = sn_pick(e, DBFS_REG)) != NULL) { /* write */
        sn_node *n = g_hash_table_lookup(e->live, q);
        uint32_t off = (uint32_t)g_rand_int_range(e->rnd, 0, 5 * SN_CHUNK);
        uint32_t len = (uint32_t)g_rand_int_range(e->rnd, 1, 3 * SN_CHUNK);
        unsigned char *buf = g_malloc(len);
        dbfs_stable got;

        for (uint32_t i = 0; i < len; i++)
            buf[i] = (unsigned char)g_rand_int(e->rnd);
        dbfs_attr a = sn_walk(e, q);
        td_rc(dbfs_write(e->t.c, &e->root, td_fh(&a), off, buf, len,
                         g_rand_boolean(e->rnd) ? DBFS_UNSTABLE : DBFS_FILE_SYNC, &got, NULL),
              0);
        if (n->data->len < off + len) {
            uint32_t old = n->data->len;
            g_byte_array_set_size(n->data, off + len);
            memset(n->data->data + old, 0, off + len - old);
        }
        memcpy(n->data->data + off, buf, len);
        g_free(buf);
    } else if (what < 55 && (q = sn_pick(e, DBFS_REG)) != NULL) { /* truncate */
        sn_node *n = g_hash_table_lookup(e->live, q);
        uint32_t size = (uint32_t)g_rand_int_range(e->rnd, 0, (int)n->data->len + SN_CHUNK);
        dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = size};
        dbfs_attr a = sn_walk(e, q);
        uint32_t old = n->data->len;

        td_rc(dbfs_setattr(e->t.c, &e->root, td_fh(&a), &sa, NULL, NULL), 0);
        g_byte_array_set_size(n->data, size);
        if (size > old)
            memset(n->data->data + old, 0, size - old);
    } else if (what < 66 && (q = sn_pick(e, 0)) != NULL &&
               ((sn_node *)g_hash_table_lookup(e->live, q))->type != DBFS_DIR) { /* remove */
        sn_split(q, &dir, &base);
        dbfs_attr d = sn_walk(e, dir);
        td_rc(dbfs_remove(e->t.c, &e->root, td_fh(&d), base, NULL), 0);
        g_hash_table_remove(e->live, q);
    } else if (what < 76 && (q = sn_pick(e, 0)) != NULL &&
               ((sn_node *)g_hash_table_lookup(e->live, q))->type != DBFS_DIR) { /* rename */
        char *tdir = NULL, *tb = NULL, *to = sn_free_path(e);
        if (to) {
            sn_split(to, &tdir, &tb);
            sn_split(q, &dir, &base);
            dbfs_attr fd = sn_walk(e, dir), tdd = sn_walk(e, tdir);
            td_rc(dbfs_rename(e->t.c, &e->root, td_fh(&fd), base, td_fh(&tdd), tb, NULL, NULL), 0);
            sn_node *n = g_hash_table_lookup(e->live, q);
            n->refs++;
            g_hash_table_remove(e->live, q);
            g_hash_table_insert(e->live, g_strdup(to), n);
        }
        g_free(tb);
        g_free(to);
        g_free(tdir);
    } else if (what < 82) { /* mkdir or rmdir of /dN */
        char *dp = g_strdup_printf("/d%d", g_rand_int_range(e->rnd, 0, SN_DIRS));
        sn_node *n = g_hash_table_lookup(e->live, dp);
        bool empty = true;
        GHashTableIter it;
        void *k;

        g_hash_table_iter_init(&it, e->live);
        while (g_hash_table_iter_next(&it, &k, NULL))
            empty &= !g_str_has_prefix(k, dp) || ((char *)k)[strlen(dp)] != '/';
        if (!n && !g_hash_table_contains(e->live, dp)) {
            td_mkdir(&e->t, &e->root, e->t.root, dp + 1, 0755);
            g_hash_table_insert(e->live, g_strdup(dp), sn_node_new(DBFS_DIR, 0755));
        } else if (n && n->type == DBFS_DIR && empty) {
            td_rc(dbfs_rmdir(e->t.c, &e->root, e->t.root, dp + 1, NULL), 0);
            g_hash_table_remove(e->live, dp);
        }
        g_free(dp);
    } else if (what < 88 && (q = sn_pick(e, DBFS_REG)) != NULL) { /* chmod */
        sn_node *n = g_hash_table_lookup(e->live, q);
        {
            uint32_t mode = (uint32_t)g_rand_int_range(e->rnd, 0, 0777) | 0600;
            dbfs_attr a = sn_walk(e, q);
            td_chmod(&e->t, &e->root, td_fh(&a), mode);
            n->mode = mode;
        }
    } else if (what < 94 && (q = sn_pick(e, DBFS_REG)) != NULL &&
               (p = sn_free_path(e)) != NULL) { /* link */
        sn_split(p, &dir, &base);
        dbfs_attr f = sn_walk(e, q), d = sn_walk(e, dir);
        td_rc(dbfs_link(e->t.c, &e->root, td_fh(&f), td_fh(&d), base, NULL, NULL), 0);
        sn_node *n = g_hash_table_lookup(e->live, q);
        n->refs++;
        g_hash_table_insert(e->live, g_strdup(p), n);
    } else if ((p = sn_free_path(e)) != NULL) { /* symlink */
        char *target = g_strdup_printf("target-%u", g_rand_int(e->rnd));
        sn_split(p, &dir, &base);
        dbfs_attr d = sn_walk(e, dir), o;
        td_rc(dbfs_symlink(e->t.c, &e->root, td_fh(&d), base, target, NULL, &o, NULL), 0);
        sn_node *n = sn_node_new(DBFS_LNK, 0777);
        n->target = target;
        g_hash_table_insert(e->live, g_strdup(p), n);
    }
    g_free(dir);
    g_free(base);
    g_free(p);
}

/* Compare the tree under directory fh (path prefix) with model m; counts
 * the paths seen. */
static void sn_check_dir(sn_env *e, GHashTable *m, dbfs_fh fh, const char *path, unsigned *seen)
{
    uint64_t cookie = 0;
    bool eof = false;

    while (!eof) {
        dbfs_dirent *ents = NULL;
        size_t n = 0;

        td_rc(dbfs_readdir(e->t.c, &e->root, fh, cookie, 64, true, &ents, &n, &eof, NULL), 0);
        for (size_t i = 0; i < n; i++) {
            dbfs_dirent *d = &ents[i];
            cookie = d->cookie;
            if (strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0)
                continue;
            char *p = g_strconcat(strcmp(path, "/") == 0 ? "" : path, "/", d->name, NULL);
            sn_node *want = g_hash_table_lookup(m, p);
            if (!want)
                g_error("snapshot shows %s, which the model does not have", p);
            g_assert_true(d->has_attr);
            g_assert_cmpuint(d->attr.snap, ==, fh.snap);
            g_assert_cmpint(d->attr.type, ==, want->type);
            if (want->type != DBFS_LNK)
                g_assert_cmpuint(d->attr.mode, ==, want->mode);
            /* The lookup agrees with the listing. */
            dbfs_attr l = td_lookup(&e->t, &e->root, fh, d->name);
            g_assert_cmpuint(l.ino, ==, d->attr.ino);
            if (want->type == DBFS_REG) {
                g_assert_cmpuint(d->attr.size, ==, want->data->len);
                char *buf = g_malloc(want->data->len + 1);
                if (want->data->len > 0)
                    td_read(&e->t, &e->root, td_fh(&d->attr), 0, buf, want->data->len);
                g_assert_cmpmem(buf, want->data->len, want->data->data, want->data->len);
                g_free(buf);
            } else if (want->type == DBFS_LNK) {
                char *target = NULL;
                td_rc(dbfs_readlink(e->t.c, &e->root, td_fh(&d->attr), &target, NULL), 0);
                g_assert_cmpstr(target, ==, want->target);
                free(target);
            } else if (want->type == DBFS_DIR) {
                sn_check_dir(e, m, td_fh(&d->attr), p, seen);
            }
            (*seen)++;
            g_free(p);
        }
        dbfs_dirents_free(ents, n);
    }
}

/* The hex SHA-256 of bytes. */
static char *sn_sha(const GByteArray *b)
{
    return g_compute_checksum_for_data(G_CHECKSUM_SHA256, b->data, b->len);
}

/* Snapshot s (or the live tree: NULL) through the SQL views against m. */
static void sn_check_sql(sn_env *e, const char *s, GHashTable *m)
{
    PGconn *pg = PQconnectdb(e->t.conninfo);
    const char *params[1] = {s};
    PGresult *r;

    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    r = PQexecParams(pg,
                     s ? "SELECT path, type, size, mode, coalesce(target, ''),"
                         " CASE WHEN type = 'file' THEN encode(pgnfs.sha256_at($1, inode), 'hex')"
                         " END FROM pgnfs.files_at($1) WHERE path <> '/'"
                       : "SELECT path, type, size, mode, coalesce(target, ''),"
                         " CASE WHEN type = 'file' THEN encode(pgnfs.sha256(inode), 'hex')"
                         " END FROM pgnfs.files WHERE path <> '/'",
                     s ? 1 : 0, NULL, s ? params : NULL, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        g_error("files_at(%s): %s", s ? s : "live", PQerrorMessage(pg));
    g_assert_cmpint(PQntuples(r) + 1, ==, g_hash_table_size(m)); /* and the root */
    for (int i = 0; i < PQntuples(r); i++) {
        sn_node *want = g_hash_table_lookup(m, PQgetvalue(r, i, 0));
        static const char *const names[] = {"", "file", "dir", "block", "char", "symlink"};

        if (!want)
            g_error("files_at(%s) shows %s, which the model does not have", s ? s : "live",
                    PQgetvalue(r, i, 0));
        g_assert_cmpstr(PQgetvalue(r, i, 1), ==, names[want->type]);
        if (want->type == DBFS_REG) {
            char *sha = sn_sha(want->data);
            g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 2), NULL, 10), ==, want->data->len);
            g_assert_cmpstr(PQgetvalue(r, i, 5), ==, sha);
            g_free(sha);
        }
        if (want->type == DBFS_LNK)
            g_assert_cmpstr(PQgetvalue(r, i, 4), ==, want->target);
        else
            g_assert_cmpuint(g_ascii_strtoull(PQgetvalue(r, i, 3), NULL, 10), ==, want->mode);
    }
    PQclear(r);
    PQfinish(pg);
}

/* Every live snapshot reads back as its model, both ways. */
static void sn_check_all(sn_env *e)
{
    for (unsigned i = 0; i < e->snaps->len; i++) {
        sn_snap *s = e->snaps->pdata[i];
        uint32_t id;
        unsigned seen = 0;

        td_rc(dbfs_snap_find(e->t.c, s->name, &id), 0);
        dbfs_attr root = td_getattr(&e->t, (dbfs_fh){DBFS_ROOT_INO, e->t.root.gen, id});
        g_assert_cmpuint(root.snap, ==, id);
        sn_check_dir(e, s->tree, td_fh(&root), "/", &seen);
        g_assert_cmpuint(seen + 1, ==, g_hash_table_size(s->tree)); /* and the root */
        sn_check_sql(e, s->name, s->tree);
    }
}

static void sn_snap_free(void *p)
{
    sn_snap *s = p;

    g_free(s->name);
    g_hash_table_unref(s->tree);
    g_free(s);
}

/* Problems fsck's checks find (all of them, check only). */
static unsigned long sn_fsck(sn_env *e)
{
    dbfs_fsck_opts o = {0};
    dbfs_fsck_report rep;

    td_rc(dbfs_fsck(e->t.fs, &o, &rep), 0);
    return rep.found;
}

static long sn_kept(sn_env *e)
{
    return td_sql(e->t.conninfo, "SELECT (SELECT count(*) FROM pgnfs_snap_fileatt)"
                                 " + (SELECT count(*) FROM pgnfs_snap_naming)"
                                 " + (SELECT count(*) FROM pgnfs_snap_chunks)"
                                 " + (SELECT count(*) FROM pgnfs_snap_tab)"
                                 " + (SELECT count(*) FROM pg_class WHERE relname LIKE"
                                 "    'pgnfs\\_snapinv%')");
}

static void sn_env_open(sn_env *e, guint32 seed)
{
    dbfs_config cfg = {0};

    memset(e, 0, sizeof *e);
    td_open_opts(&e->t, SN_CHUNK, true);
    /* Again with every cache and the write-back buffer on. */
    dbfs_conn_close(e->t.c);
    dbfs_close(e->t.fs);
    cfg.conninfo = e->t.conninfo;
    cfg.relatime = true;
    cfg.stat_cache_entries = cfg.name_cache_entries = 4096;
    cfg.buffer_cache_bytes = 64u * SN_CHUNK;
    cfg.small_cache_bytes = 64u * SN_CHUNK;
    cfg.small_file_bytes = 2 * SN_CHUNK;
    cfg.writeback_bytes = 1u << 20;
    td_rc(dbfs_open(&cfg, &e->t.fs), 0);
    td_rc(dbfs_conn_open(e->t.fs, &e->t.c), 0);
    e->root = td_root();
    e->rnd = g_rand_new_with_seed(seed);
    e->live = sn_tree_new();
    e->snaps = g_ptr_array_new_with_free_func(sn_snap_free);
    g_hash_table_insert(e->live, g_strdup("/"), sn_node_new(DBFS_DIR, 0777));
}

static void sn_env_close(sn_env *e)
{
    g_ptr_array_free(e->snaps, true);
    g_hash_table_unref(e->live);
    g_rand_free(e->rnd);
    td_close(&e->t);
}

static void sn_take(sn_env *e)
{
    sn_snap *s = g_new0(sn_snap, 1);

    /* What UNSTABLE writes left in the buffer is not in a snapshot: store it. */
    g_assert_cmpint(dbfs_wb_flush_due(e->t.c, 0), >=, 0);
    s->name = g_strdup_printf("s%u", ++e->taken);
    td_rc(dbfs_snap_create(e->t.fs, s->name, NULL), 0);
    s->tree = sn_tree_copy(e->live);
    g_ptr_array_add(e->snaps, s);
}

static void sn_drop(sn_env *e, unsigned i)
{
    sn_snap *s = e->snaps->pdata[i];

    td_rc(dbfs_snap_delete(e->t.fs, s->name), 0);
    g_ptr_array_remove_index(e->snaps, i);
}

/* The model run: see the file header. */
static void test_model(void)
{
    sn_env e;
    dbfs_snap_progress p;

    sn_env_open(&e, 1818);
    for (int round = 0; round < 24; round++) {
        for (int i = 0; i < 25; i++)
            sn_op(&e);
        sn_take(&e);
        if (e.snaps->len > 3 && g_rand_int_range(e.rnd, 0, 3) == 0)
            sn_drop(&e, (unsigned)g_rand_int_range(e.rnd, 0, (int)e.snaps->len));
        if (round % 6 == 5) {
            /* A reclaim that stops half way, then one to the end. */
            td_rc(dbfs_snap_reclaim(e.t.fs, 1, NULL, NULL, &p), 0);
            sn_check_all(&e);
            td_rc(dbfs_snap_reclaim(e.t.fs, 0, NULL, NULL, &p), 0);
            g_assert_true(p.done);
            g_assert_cmpuint(sn_fsck(&e), ==, 0);
            sn_check_all(&e);
        }
    }
    g_assert_cmpint(dbfs_wb_flush_due(e.t.c, 0), >=, 0);
    sn_check_all(&e);
    sn_check_sql(&e, NULL, e.live);
    /* A snapshot's files are read-only. */
    sn_snap *s = e.snaps->pdata[0];
    uint32_t id;
    td_rc(dbfs_snap_find(e.t.c, s->name, &id), 0);
    dbfs_fh sroot = {DBFS_ROOT_INO, e.t.root.gen, id};
    td_rc(dbfs_mkdir(e.t.c, &e.root, sroot, "x", NULL, NULL, NULL), -EROFS);
    td_rc(dbfs_remove(e.t.c, &e.root, sroot, "f0", NULL), -EROFS);
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0700};
    td_rc(dbfs_setattr(e.t.c, &e.root, sroot, &sa, NULL, NULL), -EROFS);
    uint32_t granted = 0;
    td_rc(dbfs_access(e.t.c, &e.root, sroot, 0x3f, &granted, NULL), 0);
    g_assert_cmpuint(granted & (DBFS_ACCESS_MODIFY | DBFS_ACCESS_EXTEND | DBFS_ACCESS_DELETE), ==,
                     0);
    /* Deleted: its handles are stale at once. */
    while (e.snaps->len > 1)
        sn_drop(&e, 1);
    sn_drop(&e, 0);
    dbfs_attr a;
    td_rc(dbfs_getattr(e.t.c, sroot, &a), -ESTALE);
    /* No snapshot: the triggers are off, and the reclaim leaves nothing. */
    g_assert_cmpint(td_sql(e.t.conninfo, "SELECT count(*) FROM pg_trigger WHERE tgname ="
                                         " 'pgnfs_snap_keep' AND tgenabled <> 'D' AND tgrelid IN"
                                         " ('fileatt'::regclass, 'naming'::regclass,"
                                         " 'allfiles'::regclass)"),
                    ==, 0);
    td_rc(dbfs_snap_reclaim(e.t.fs, 0, NULL, NULL, &p), 0);
    g_assert_cmpint(sn_kept(&e), ==, 0);
    g_assert_cmpuint(sn_fsck(&e), ==, 0);
    sn_check_sql(&e, NULL, e.live);
    sn_env_close(&e);
}

/* Taking a snapshot reads and copies nothing; names are checked. */
static void test_create(void)
{
    sn_env e;
    dbfs_snap_row r;

    sn_env_open(&e, 7);
    for (int i = 0; i < 40; i++)
        sn_op(&e);
    g_assert_cmpint(dbfs_wb_flush_due(e.t.c, 0), >=, 0);
    td_rc(dbfs_snap_create(e.t.fs, "one", &r), 0);
    g_assert_cmpuint(r.id, ==, 1);
    g_assert_cmpint(sn_kept(&e), ==, 0);
    td_rc(dbfs_snap_create(e.t.fs, "one", NULL), -EEXIST);
    td_rc(dbfs_snap_create(e.t.fs, "a/b", NULL), -EINVAL);
    td_rc(dbfs_snap_create(e.t.fs, "..", NULL), -EINVAL);
    td_rc(dbfs_snap_create(e.t.fs, "", NULL), -EINVAL);
    td_rc(dbfs_snap_delete(e.t.fs, "two"), -ENOENT);
    td_rc(dbfs_snap_create(e.t.fs, "two", &r), 0);
    g_assert_cmpuint(r.id, ==, 2);
    g_assert_cmpint(sn_kept(&e), ==, 0);
    td_rc(dbfs_snap_delete(e.t.fs, "one"), 0);
    td_rc(dbfs_snap_delete(e.t.fs, "two"), 0);
    /* Ids are never used again. */
    td_rc(dbfs_snap_create(e.t.fs, "one", &r), 0);
    g_assert_cmpuint(r.id, ==, 3);
    sn_env_close(&e);
}

/* A guarded file's chunks are kept as stored and read back decoded. */
static void test_xform(void)
{
    sn_env e;
    char msg[256];
    unsigned char a[3 * SN_CHUNK], b[3 * SN_CHUNK], got[3 * SN_CHUNK];

    sn_env_open(&e, 3);
    for (size_t i = 0; i < sizeof a; i++) {
        a[i] = (unsigned char)(i % 7);
        b[i] = (unsigned char)(i % 5 + 100);
    }
    dbfs_attr d = td_mkdir(&e.t, &e.root, e.t.root, "g", 0755);
    td_rc(dbfs_xform_set(e.t.fs, "/g", "zstd,sha256", msg, sizeof msg), 0);
    dbfs_attr f = td_create(&e.t, &e.root, td_fh(&d), "f", 0644);
    td_write(&e.t, &e.root, td_fh(&f), 0, a, sizeof a);
    td_rc(dbfs_snap_create(e.t.fs, "before", NULL), 0);
    td_write(&e.t, &e.root, td_fh(&f), SN_CHUNK / 2, b, sizeof b - SN_CHUNK);
    td_rc(dbfs_snap_create(e.t.fs, "after", NULL), 0);
    td_rc(dbfs_remove(e.t.c, &e.root, td_fh(&d), "f", NULL), 0);

    uint32_t id;
    td_rc(dbfs_snap_find(e.t.c, "before", &id), 0);
    dbfs_attr sd = td_lookup(&e.t, &e.root, (dbfs_fh){DBFS_ROOT_INO, e.t.root.gen, id}, "g");
    dbfs_attr sf = td_lookup(&e.t, &e.root, td_fh(&sd), "f");
    td_read(&e.t, &e.root, td_fh(&sf), 0, got, sizeof a);
    g_assert_cmpmem(got, sizeof a, a, sizeof a);
    td_rc(dbfs_snap_find(e.t.c, "after", &id), 0);
    sd = td_lookup(&e.t, &e.root, (dbfs_fh){DBFS_ROOT_INO, e.t.root.gen, id}, "g");
    sf = td_lookup(&e.t, &e.root, td_fh(&sd), "f");
    td_read(&e.t, &e.root, td_fh(&sf), 0, got, sizeof a);
    memcpy(a + SN_CHUNK / 2, b, sizeof b - SN_CHUNK);
    g_assert_cmpmem(got, sizeof a, a, sizeof a);
    /* The views leave guarded files to the server. */
    g_assert_cmpint(td_sql(e.t.conninfo, "SELECT count(*) FROM pgnfs.content_at('after')"), ==, 0);
    td_rc(dbfs_snap_delete(e.t.fs, "before"), 0);
    td_rc(dbfs_snap_delete(e.t.fs, "after"), 0);
    td_rc(dbfs_snap_reclaim(e.t.fs, 0, NULL, NULL, NULL), 0);
    g_assert_cmpint(sn_kept(&e), ==, 0);
    g_assert_cmpuint(sn_fsck(&e), ==, 0);
    sn_env_close(&e);
}

/* In-database stages: a snapshot's chunks come back through the
 * inverse, as live ones do. A transformation link is not presented in a
 * snapshot: its read says so (EOPNOTSUPP) and its base reads as kept. */
static void test_xform_sql_link(void)
{
    sn_env e;
    char msg[256];
    unsigned char a[2 * SN_CHUNK + 99], got[sizeof a];
    uint32_t id, n;
    bool eof;

    sn_env_open(&e, 3);
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = (unsigned char)(i * 13 % 251);
    td_sql(e.t.conninfo,
           "CREATE FUNCTION sn_b64(x bytea) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT"
           " AS $$ SELECT convert_to(encode(x, 'base64'), 'SQL_ASCII') $$;"
           "CREATE FUNCTION sn_unb64(x bytea) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT"
           " AS $$ SELECT decode(convert_from(x, 'SQL_ASCII'), 'base64') $$;");
    dbfs_attr d = td_mkdir(&e.t, &e.root, e.t.root, "q", 0755);
    td_rc(dbfs_xform_set(e.t.fs, "/q", "sql:forward=sn_b64:inverse=sn_unb64", msg, sizeof msg), 0);
    dbfs_attr f = td_create(&e.t, &e.root, td_fh(&d), "f", 0644);
    td_write(&e.t, &e.root, td_fh(&f), 0, a, sizeof a);
    dbfs_attr p = td_create(&e.t, &e.root, e.t.root, "plain", 0644);
    td_write(&e.t, &e.root, td_fh(&p), 0, a, sizeof a);
    td_rc(dbfs_xform_link(e.t.fs, "/plain", "/plain.inc", "increment", msg, sizeof msg), 0);
    td_rc(dbfs_snap_create(e.t.fs, "s", NULL), 0);
    td_rc(dbfs_remove(e.t.c, &e.root, td_fh(&d), "f", NULL), 0);

    td_rc(dbfs_snap_find(e.t.c, "s", &id), 0);
    dbfs_fh sroot = {DBFS_ROOT_INO, e.t.root.gen, id};
    dbfs_attr sd = td_lookup(&e.t, &e.root, sroot, "q");
    dbfs_attr sf = td_lookup(&e.t, &e.root, td_fh(&sd), "f");
    td_read(&e.t, &e.root, td_fh(&sf), 0, got, sizeof a);
    g_assert_cmpmem(got, sizeof a, a, sizeof a);
    dbfs_attr sp = td_lookup(&e.t, &e.root, sroot, "plain");
    td_read(&e.t, &e.root, td_fh(&sp), 0, got, sizeof a);
    g_assert_cmpmem(got, sizeof a, a, sizeof a);
    dbfs_attr sl = td_lookup(&e.t, &e.root, sroot, "plain.inc");
    td_rc(dbfs_read(e.t.c, &e.root, td_fh(&sl), 0, 16, got, &n, &eof, NULL), -EOPNOTSUPP);
    td_rc(dbfs_snap_delete(e.t.fs, "s"), 0);
    td_rc(dbfs_snap_reclaim(e.t.fs, 0, NULL, NULL, NULL), 0);
    g_assert_cmpuint(sn_fsck(&e), ==, 0);
    sn_env_close(&e);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/snap/create", test_create);
    g_test_add_func("/snap/model", test_model);
    g_test_add_func("/snap/xform", test_xform);
    g_test_add_func("/snap/xform-sql-link", test_xform_sql_link);
    return g_test_run();
}
