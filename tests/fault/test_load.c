/*
 * test_load.c -- 16 clients at once doing random operations on overlapping
 * trees for a bounded time (PGNFS_LOAD_SECONDS, default 20), then:
 *
 *   - no request was lost or answered twice: every call of every client
 *     got exactly one reply (the synchronous clients count calls and
 *     replies; two raw clients pipeline calls with their own xids and
 *     check each is answered once and nothing more arrives), and the
 *     server counted exactly as many NFS calls as the clients sent
 *     (its statistics, SIGUSR1, before and after);
 *   - every answer was one the operation may give under concurrency (a
 *     name another client removed is NOENT, a handle of a removed file
 *     STALE, ...); IO, SERVERFAULT, BADHANDLE and the like fail the test;
 *   - each client's private file holds exactly what it wrote;
 *   - `pgnfs fsck` finds no broken invariant (exit 0).
 *
 * A second case drives `pgnfs fsck` itself: exit 0 on a clean file system,
 * 4 when it finds problems and is not asked to repair, 1 after repairing
 * them (the checks find nothing afterwards), 16 for a bad argument.
 *
 * The trees: /load/{a,b,a/x} are fixed; clients create, remove, rename and
 * link the names n0..n9 in them and in the n* directories they find there,
 * so they meet on the same names constantly.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "fault.h"

enum { LD_CLIENTS = 16, LD_RAW = 2, LD_DIRS = 4, LD_NAMES = 10, LD_PRIV = 64 * 1024 };

typedef struct {
    unsigned index;
    nr_fh dirs[LD_DIRS];
    nr_fh priv;
    unsigned char *priv_model; /* LD_PRIV bytes: what priv holds */
    uint64_t priv_size;
    ft_rng rng;
    uint64_t calls, replies, ops, jukebox;
    char *error;
} ld_client;

static atomic_bool ld_stop;

/* Statuses concurrency may explain. */
static bool ld_allowed(int st)
{
    switch (st) {
    case NFS3_OK:
    case NFS3ERR_NOENT:
    case NFS3ERR_EXIST:
    case NFS3ERR_NOTEMPTY:
    case NFS3ERR_NOTDIR:
    case NFS3ERR_ISDIR:
    case NFS3ERR_STALE:
    case NFS3ERR_INVAL:
    case NFS3ERR_JUKEBOX:
        return true;
    default:
        return false;
    }
}

/* Account for one call's answer; false (c->error set) if it is wrong. */
static bool ld_answer(ld_client *c, nr_ctx *ctx, const char *what, int st)
{
    c->calls++;
    if (st == NR_RPC_FAILED) {
        c->error = g_strdup_printf("%s got no reply: %s", what, nr_error(ctx));
        return false;
    }
    c->replies++;
    if (st == NFS3ERR_JUKEBOX)
        c->jukebox++;
    if (!ld_allowed(st)) {
        c->error = g_strdup_printf("%s answered %s", what, nr_stat_name(st));
        return false;
    }
    return true;
}

static const char *ld_name(ld_client *c, char *buf)
{
    snprintf(buf, 8, "n%u", (unsigned)ft_below(&c->rng, LD_NAMES));
    return buf;
}

/* A directory to work in: a fixed one, or an n* directory found in one. */
static bool ld_pick_dir(ld_client *c, nr_ctx *ctx, nr_fh *out)
{
    *out = c->dirs[ft_below(&c->rng, LD_DIRS)];
    if (ft_below(&c->rng, 3) != 0)
        return true;
    char name[8];
    LOOKUP3res lk;
    int st = nr_lookup(ctx, out, ld_name(c, name), &lk);
    if (!ld_answer(c, ctx, "LOOKUP", st))
        return false;
    if (st == NFS3_OK && lk.LOOKUP3res_u.resok.obj_attributes.attributes_follow &&
        lk.LOOKUP3res_u.resok.obj_attributes.post_op_attr_u.attributes.type == NF3DIR)
        *out = nr_fh_from(&lk.LOOKUP3res_u.resok.object);
    return true;
}

/* A file handle by name in dir (or false with *found false when none). */
static bool ld_find(ld_client *c, nr_ctx *ctx, const nr_fh *dir, nr_fh *fh, bool *found)
{
    char name[8];
    LOOKUP3res lk;
    int st = nr_lookup(ctx, dir, ld_name(c, name), &lk);

    *found = st == NFS3_OK;
    if (*found)
        *fh = nr_fh_from(&lk.LOOKUP3res_u.resok.object);
    return ld_answer(c, ctx, "LOOKUP", st);
}

static bool ld_priv_write(ld_client *c, nr_ctx *ctx)
{
    uint32_t off = (uint32_t)ft_below(&c->rng, LD_PRIV - 1);
    uint32_t len = 1 + (uint32_t)ft_below(&c->rng, MIN(8192, LD_PRIV - off));
    unsigned char buf[8192];
    stable_how how = ft_below(&c->rng, 2) ? FILE_SYNC : UNSTABLE;
    WRITE3res res;

    ft_pattern(buf, len, ft_rand(&c->rng));
    int st;
    do {
        st = nr_write(ctx, &c->priv, off, buf, len, how, &res);
        if (!ld_answer(c, ctx, "WRITE (own file)", st))
            return false;
    } while (st == NFS3ERR_JUKEBOX);
    if (st != NFS3_OK) {
        c->error = g_strdup_printf("WRITE of its own file answered %s", nr_stat_name(st));
        return false;
    }
    memcpy(c->priv_model + off, buf, len);
    c->priv_size = MAX(c->priv_size, (uint64_t)off + len);
    return true;
}

/* One random operation. */
static bool ld_op(ld_client *c, nr_ctx *ctx)
{
    nr_fh dir, dir2, fh;
    char name[8], name2[8];
    sattr3 sa = nr_sattr_mode(0777);
    bool found;
    int st;

    if (!ld_pick_dir(c, ctx, &dir))
        return false;
    switch (ft_below(&c->rng, 16)) {
    case 0: {
        static const createmode3 how[] = {UNCHECKED, GUARDED, EXCLUSIVE};
        char verf[NFS3_CREATEVERFSIZE];
        createmode3 m = how[ft_below(&c->rng, 3)];
        memset(verf, (int)c->index, sizeof verf);
        st = nr_create(ctx, &dir, ld_name(c, name), m, m == EXCLUSIVE ? NULL : &sa, verf, NULL);
        return ld_answer(c, ctx, "CREATE", st);
    }
    case 1:
        return ld_answer(c, ctx, "MKDIR", nr_mkdir(ctx, &dir, ld_name(c, name), &sa, NULL));
    case 2:
        return ld_answer(c, ctx, "REMOVE", nr_remove(ctx, &dir, ld_name(c, name), NULL));
    case 3:
        return ld_answer(c, ctx, "RMDIR", nr_rmdir(ctx, &dir, ld_name(c, name), NULL));
    case 4:
        if (!ld_pick_dir(c, ctx, &dir2))
            return false;
        return ld_answer(c, ctx, "RENAME",
                         nr_rename(ctx, &dir, ld_name(c, name), &dir2, ld_name(c, name2), NULL));
    case 5:
        if (!ld_find(c, ctx, &dir, &fh, &found))
            return false;
        if (!found)
            return true;
        if (!ld_pick_dir(c, ctx, &dir2))
            return false;
        return ld_answer(c, ctx, "LINK", nr_link(ctx, &fh, &dir2, ld_name(c, name), NULL));
    case 6:
        return ld_answer(c, ctx, "SYMLINK",
                         nr_symlink(ctx, &dir, ld_name(c, name), "n1/n2", NULL, NULL));
    case 7:
    case 8: {
        unsigned char buf[4096];
        if (!ld_find(c, ctx, &dir, &fh, &found))
            return false;
        if (!found)
            return true;
        ft_pattern(buf, sizeof buf, ft_rand(&c->rng));
        st = nr_write(ctx, &fh, ft_below(&c->rng, 20000), buf,
                      1 + (uint32_t)ft_below(&c->rng, sizeof buf), FILE_SYNC, NULL);
        return ld_answer(c, ctx, "WRITE", st);
    }
    case 9:
        if (!ld_find(c, ctx, &dir, &fh, &found))
            return false;
        if (!found)
            return true;
        st = nr_read(ctx, &fh, ft_below(&c->rng, 20000), 8192, NULL);
        return ld_answer(c, ctx, "READ", st);
    case 10: {
        if (!ld_find(c, ctx, &dir, &fh, &found))
            return false;
        if (!found)
            return true;
        sattr3 t = nr_sattr_none();
        if (ft_below(&c->rng, 2)) {
            t.size.set_it = 1;
            t.size.set_size3_u.size = ft_below(&c->rng, 30000);
        } else {
            t = nr_sattr_mode(0700 | (uint32_t)ft_below(&c->rng, 0100));
        }
        return ld_answer(c, ctx, "SETATTR", nr_setattr(ctx, &fh, &t, NULL, NULL));
    }
    case 11:
        st = nr_readdirplus(ctx, &dir, 0, NULL, 4096, 32768, NULL);
        nr_arena_clear(ctx);
        return ld_answer(c, ctx, "READDIRPLUS", st);
    case 12:
        st = nr_readdir(ctx, &dir, 0, NULL, 2048, NULL);
        nr_arena_clear(ctx);
        return ld_answer(c, ctx, "READDIR", st);
    case 13:
        if (!ld_find(c, ctx, &dir, &fh, &found))
            return false;
        return !found || ld_answer(c, ctx, "ACCESS", nr_access(ctx, &fh, 0x3f, NULL));
    case 14:
        return ld_answer(c, ctx, "GETATTR", nr_getattr(ctx, &dir, NULL));
    default:
        return ld_priv_write(c, ctx);
    }
}

static void *ld_client_main(void *arg)
{
    ld_client *c = arg;
    nr_ctx *ctx = nr_open(pt.port, &pt_root);

    if (!ctx) {
        c->error = g_strdup("cannot connect");
        return NULL;
    }
    while (!atomic_load(&ld_stop) && ld_op(c, ctx)) {
        c->ops++;
        nr_arena_clear(ctx);
    }
    nr_close(ctx);
    return NULL;
}

/* A raw client: batches of 8 pipelined GETATTR/LOOKUP calls with its own
 * xids; each must be answered exactly once. */
typedef struct {
    unsigned index;
    nr_fh dir;
    uint64_t calls, replies;
    char *error;
} ld_raw;

static void *ld_raw_main(void *arg)
{
    ld_raw *r = arg;
    int fd = nr_raw_connect(pt.port);
    uint32_t xid = 0x40000000u + (r->index << 24);

    if (fd < 0) {
        r->error = g_strdup("cannot connect");
        return NULL;
    }
    while (!atomic_load(&ld_stop) && !r->error) {
        GByteArray *all = g_byte_array_new();
        uint32_t first = xid;
        bool seen[8] = {false};
        for (int i = 0; i < 8; i++) {
            GByteArray *rec = g_byte_array_new();
            nr_xdr_call(rec, xid++, NR_NFS_PROGRAM, 3, i % 2 ? 3 : 1, &pt_root);
            nr_xdr_fh(rec, &r->dir);
            if (i % 2)
                nr_xdr_string(rec, "n3");
            nr_xdr_u32(all, 0x80000000u | rec->len);
            g_byte_array_append(all, rec->data, rec->len);
            g_byte_array_unref(rec);
        }
        if (write(fd, all->data, all->len) != (ssize_t)all->len)
            r->error = g_strdup("write failed");
        r->calls += 8;
        for (int i = 0; i < 8 && !r->error; i++) {
            GByteArray *reply = nr_raw_recv(fd, 60000);
            if (!reply) {
                r->error =
                    g_strdup_printf("a call of xid %08x..%08x got no reply", first, first + 7);
                break;
            }
            uint32_t k = nr_get_u32(reply, 0) - first;
            if (k >= 8 || seen[k])
                r->error = g_strdup_printf("reply xid %08x: not one of the batch, or twice",
                                           nr_get_u32(reply, 0));
            else
                seen[k] = true;
            r->replies++;
            g_byte_array_unref(reply);
        }
        g_byte_array_unref(all);
    }
    /* Nothing more may come. */
    if (!r->error) {
        GByteArray *extra = nr_raw_recv(fd, 300);
        if (extra) {
            r->error = g_strdup_printf("an extra reply (xid %08x) after the last batch",
                                       nr_get_u32(extra, 0));
            g_byte_array_unref(extra);
        }
    }
    close(fd);
    return NULL;
}

static void test_load(void)
{
    const char *env = getenv("PGNFS_LOAD_SECONDS");
    unsigned secs = env && *env ? (unsigned)strtoul(env, NULL, 10) : 20;
    const char *senv = getenv("PGNFS_FAULT_SEED");
    uint64_t seed = senv && *senv ? g_ascii_strtoull(senv, NULL, 10) : (uint64_t)g_get_real_time();
    ld_client *cl = g_new0(ld_client, LD_CLIENTS);
    ld_raw raw[LD_RAW] = {{0}};
    pthread_t th[LD_CLIENTS], rth[LD_RAW];
    nr_ctx *c = pt_open(NULL);

    g_test_message("%u s, %u clients (+%u raw), seed %" G_GUINT64_FORMAT, secs, LD_CLIENTS, LD_RAW,
                   seed);
    nr_fh load = pt_mkdir(c, &pt.root, "load", 0777);
    nr_fh a = pt_mkdir(c, &load, "a", 0777);
    nr_fh b = pt_mkdir(c, &load, "b", 0777);
    nr_fh x = pt_mkdir(c, &a, "x", 0777);
    for (unsigned i = 0; i < LD_CLIENTS; i++) {
        char name[16];
        snprintf(name, sizeof name, "priv%u", i);
        cl[i].index = i;
        cl[i].dirs[0] = load;
        cl[i].dirs[1] = a;
        cl[i].dirs[2] = b;
        cl[i].dirs[3] = x;
        cl[i].priv = pt_create(c, &load, name, 0666);
        cl[i].priv_model = g_malloc0(LD_PRIV);
        ft_rng_seed(&cl[i].rng, seed + i);
    }
    for (unsigned i = 0; i < LD_RAW; i++) {
        raw[i].index = i;
        raw[i].dir = i ? a : load;
    }

    uint64_t before = ft_nfs_calls();
    atomic_store(&ld_stop, false);
    for (unsigned i = 0; i < LD_CLIENTS; i++)
        g_assert_cmpint(pthread_create(&th[i], NULL, ld_client_main, &cl[i]), ==, 0);
    for (unsigned i = 0; i < LD_RAW; i++)
        g_assert_cmpint(pthread_create(&rth[i], NULL, ld_raw_main, &raw[i]), ==, 0);
    g_usleep((gulong)secs * G_USEC_PER_SEC);
    atomic_store(&ld_stop, true);
    uint64_t calls = 0, replies = 0, ops = 0, jukebox = 0;
    for (unsigned i = 0; i < LD_CLIENTS; i++) {
        pthread_join(th[i], NULL);
        if (cl[i].error)
            g_error("client %u: %s", i, cl[i].error);
        calls += cl[i].calls;
        replies += cl[i].replies;
        ops += cl[i].ops;
        jukebox += cl[i].jukebox;
    }
    for (unsigned i = 0; i < LD_RAW; i++) {
        pthread_join(rth[i], NULL);
        if (raw[i].error)
            g_error("raw client %u: %s", i, raw[i].error);
        calls += raw[i].calls;
        replies += raw[i].replies;
    }
    uint64_t after = ft_nfs_calls();
    g_test_message("%" G_GUINT64_FORMAT " operations, %" G_GUINT64_FORMAT
                   " calls (%.0f/s), %" G_GUINT64_FORMAT " replies, %" G_GUINT64_FORMAT
                   " JUKEBOX; the server counted %" G_GUINT64_FORMAT,
                   ops, calls, (double)calls / secs, replies, jukebox, after - before);
    g_assert_cmpuint(replies, ==, calls);
    g_assert_cmpuint(after - before, ==, calls);
    g_assert_cmpuint(ops, >, 0);

    /* Each private file holds what its client wrote. */
    for (unsigned i = 0; i < LD_CLIENTS; i++) {
        READ3res rd;
        g_assert_cmpuint(pt_getattr(c, &cl[i].priv).size, ==, cl[i].priv_size);
        for (uint64_t off = 0; off < cl[i].priv_size; off += 32768) {
            uint32_t n = (uint32_t)MIN(32768, cl[i].priv_size - off);
            pt_ok(c, nr_read(c, &cl[i].priv, off, n, &rd));
            g_assert_cmpmem(rd.READ3res_u.resok.data.data_val, rd.READ3res_u.resok.data.data_len,
                            cl[i].priv_model + off, n);
            ft_verified_add(n);
            nr_arena_clear(c);
        }
        g_free(cl[i].priv_model);
    }
    nr_close(c);

    /* The invariants hold. */
    char *out = NULL;
    const char *args[] = {"fsck", "--conninfo", tl_server_conninfo(pt.server), NULL};
    int rc = ft_pgnfs(&out, args);
    if (rc != 0)
        g_error("pgnfs fsck after the load: exit %d:\n%s", rc, out);
    g_test_message("pgnfs fsck: exit 0 (%s)", g_strstrip(out));
    g_free(out);
    g_free(cl);
}

static void ld_sql(const char *sql)
{
    PGconn *pg = PQconnectdb(tl_server_conninfo(pt.server));
    PGresult *r = PQexec(pg, sql);

    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
        g_error("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(pg);
}

static void test_fsck_cli(void)
{
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_fresh_dir();
    nr_fh f = pt_create(c, &dir, "f", 0644);
    const char *conninfo = tl_server_conninfo(pt.server);
    const char *check[] = {"fsck", "--conninfo", conninfo, NULL};
    const char *repair[] = {"fsck", "--repair", "--conninfo", conninfo, NULL};
    const char *bad[] = {"fsck", "--frobnicate", "--conninfo", conninfo, NULL};
    char *out = NULL;

    pt_write(c, &f, 0, "0123456789", 10);
    uint64_t ino = pt_getattr(c, &f).fileid;
    nr_close(c);
    g_assert_cmpint(ft_pgnfs(&out, check), ==, 0);
    g_free(out);
    g_assert_cmpint(ft_pgnfs(&out, bad), ==, 16);
    g_free(out);

    char *sql = g_strdup_printf("UPDATE fileatt SET nlink = 3, used = 1 WHERE inode = %llu",
                                (unsigned long long)ino);
    ld_sql(sql);
    g_free(sql);
    int rc = ft_pgnfs(&out, check);
    g_test_message("pgnfs fsck (broken): exit %d\n%s", rc, out);
    g_assert_cmpint(rc, ==, 4);
    g_assert_nonnull(strstr(out, "nlink"));
    g_assert_nonnull(strstr(out, "used"));
    g_free(out);
    rc = ft_pgnfs(&out, repair);
    g_test_message("pgnfs fsck --repair: exit %d\n%s", rc, out);
    g_assert_cmpint(rc, ==, 1);
    g_free(out);
    g_assert_cmpint(ft_pgnfs(&out, check), ==, 0);
    g_free(out);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv, NULL);
    g_test_add_func("/fault/load16", test_load);
    g_test_add_func("/fault/fsck_cli", test_fsck_cli);
    return ft_run();
}
