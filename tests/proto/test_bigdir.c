/*
 * test_bigdir.c -- a directory of 10,000 entries lists completely and
 * exactly once through READDIR and READDIRPLUS with the counts real clients
 * use, cookies strictly increasing; and a listing that goes on while
 * entries are removed and added resumes where it was (stable cookies,
 * dbfs.h dbfs_readdir) without repeating a name.
 *
 * The entries are made with pipelined asynchronous CREATEs (many calls in
 * flight on one connection), so that setting up takes seconds.
 */
#include <string.h>

#include "ptest.h"

enum { NENTRIES = 10000, WINDOW = 64, BATCH_MS = 120000 };

/* One directory shared by the cases; made by the first. */
static nr_fh big_dir;
static bool big_made;
static uint64_t fileids[NENTRIES];

static char *entry_name(int i)
{
    /* Names of varied length, as real directories have. */
    static const char *const tails[] = {"", ".txt", "-with-a-longer-tail.data", "_x", ".tar.gz"};

    return g_strdup_printf("e%05d%s", i, tails[i % G_N_ELEMENTS(tails)]);
}

/* --- pipelined calls ---------------------------------------------------------- */

typedef struct {
    int pending;
    int failures;
    char first_failure[200];
} batch;

typedef struct {
    batch *b;
    int index;
} op;

static void note_failure(batch *b, const char *what, int index, int status)
{
    if (b->failures++ == 0)
        snprintf(b->first_failure, sizeof b->first_failure, "%s of entry %d: %s", what, index,
                 nr_stat_name(status));
}

static void create_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
    op *o = private_data;

    (void)rpc;
    o->b->pending--;
    if (status != RPC_STATUS_SUCCESS) {
        note_failure(o->b, "CREATE (RPC)", o->index, NR_RPC_FAILED);
    } else {
        const CREATE3res *res = data;
        if (res->status != NFS3_OK || !res->CREATE3res_u.resok.obj_attributes.attributes_follow)
            note_failure(o->b, "CREATE", o->index, res->status);
        else
            fileids[o->index] =
                res->CREATE3res_u.resok.obj_attributes.post_op_attr_u.attributes.fileid;
    }
    g_free(o);
}

static void remove_cb(struct rpc_context *rpc, int status, void *data, void *private_data)
{
    op *o = private_data;

    (void)rpc;
    o->b->pending--;
    if (status != RPC_STATUS_SUCCESS)
        note_failure(o->b, "REMOVE (RPC)", o->index, NR_RPC_FAILED);
    else if (((const REMOVE3res *)data)->status != NFS3_OK)
        note_failure(o->b, "REMOVE", o->index, ((const REMOVE3res *)data)->status);
    g_free(o);
}

/*
 * Create (remove == false) or remove entries [from, to) of dir, with up to
 * WINDOW calls in flight. step > 1 takes every step-th index.
 */
static void pipeline(nr_ctx *c, const nr_fh *dir, int from, int to, int step, bool remove)
{
    batch b = {0};
    nfs_fh3 dfh = nr_fh3(dir);

    for (int i = from; i < to; i += step) {
        char *name = entry_name(i);
        op *o = g_new0(op, 1);
        o->b = &b;
        o->index = i;
        int rc;
        if (remove) {
            REMOVE3args a = {.object = {.dir = dfh, .name = name}};
            rc = rpc_nfs3_remove_async(nr_rpc(c), remove_cb, &a, o);
        } else {
            CREATE3args a;
            memset(&a, 0, sizeof a);
            a.where.dir = dfh;
            a.where.name = name;
            a.how.mode = GUARDED;
            a.how.createhow3_u.obj_attributes = nr_sattr_mode(0644);
            rc = rpc_nfs3_create_async(nr_rpc(c), create_cb, &a, o);
        }
        g_free(name);
        g_assert_cmpint(rc, ==, 0);
        b.pending++;
        if (nr_service(c, &b.pending, WINDOW - 1, BATCH_MS) != 0)
            g_error("pipelined calls: %s", nr_error(c));
    }
    if (nr_service(c, &b.pending, 0, BATCH_MS) != 0)
        g_error("pipelined calls: %s", nr_error(c));
    if (b.failures)
        g_error("%d pipelined calls failed; the first: %s", b.failures, b.first_failure);
}

static void make_big_dir(void)
{
    if (big_made)
        return;
    nr_ctx *c = pt_open(&pt_owner);
    gint64 t0 = g_get_monotonic_time();

    big_dir = pt_fresh_dir();
    pipeline(c, &big_dir, 0, NENTRIES, 1, false);
    g_test_message("%d CREATEs in %.1f s", NENTRIES, (g_get_monotonic_time() - t0) / 1e6);
    g_assert_cmpuint(pt_getattr(c, &big_dir).nlink, ==, 2);
    nr_close(c);
    big_made = true;
}

/* The index of an entry name, or -1 for "." and "..". Fails on others. */
static int entry_index(const char *name)
{
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return -1;
    g_assert_cmpint(name[0], ==, 'e');
    int i = atoi(name + 1);
    g_assert_cmpint(i, >=, 0);
    g_assert_cmpint(i, <, NENTRIES);
    char *expect = entry_name(i);
    g_assert_cmpstr(name, ==, expect);
    g_free(expect);
    return i;
}

/* --- cases ------------------------------------------------------------------------ */

static void test_readdir_all(void)
{
    make_big_dir();
    nr_ctx *c = pt_open(&pt_owner);
    unsigned char *seen = g_malloc0(NENTRIES);
    int dots = 0, calls = 0, total = 0;
    uint64_t cookie = 0;
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    bool eof = false;
    gint64 t0 = g_get_monotonic_time();

    while (!eof) {
        READDIR3res res;
        pt_ok(c, nr_readdir(c, &big_dir, cookie, verf, 8192, &res));
        calls++;
        g_assert_cmpint(calls, <, 2 * NENTRIES);
        const READDIR3resok *ok = &res.READDIR3res_u.resok;
        memcpy(verf, ok->cookieverf, sizeof verf);
        int in_reply = 0;
        for (const entry3 *e = ok->reply.entries; e; e = e->nextentry) {
            g_assert_cmpuint(e->cookie, >, cookie);
            cookie = e->cookie;
            int i = entry_index(e->name);
            if (i < 0) {
                dots++;
            } else {
                g_assert_cmpint(seen[i], ==, 0);
                seen[i] = 1;
                g_assert_cmpuint(e->fileid, ==, fileids[i]);
            }
            in_reply++;
            total++;
        }
        eof = ok->reply.eof;
        /* Every reply but the last makes progress. */
        g_assert_true(eof || in_reply > 0);
        nr_arena_clear(c);
    }
    g_test_message("READDIR: %d entries in %d calls, %.2f s", total, calls,
                   (g_get_monotonic_time() - t0) / 1e6);
    g_assert_cmpint(dots, ==, 2);
    g_assert_cmpint(total, ==, NENTRIES + 2);
    for (int i = 0; i < NENTRIES; i++)
        g_assert_cmpint(seen[i], ==, 1);
    /* count 8192 holds far more than one entry: not one entry per call */
    g_assert_cmpint(calls, <, NENTRIES / 20);
    g_free(seen);
    nr_close(c);
}

static void test_readdirplus_all(void)
{
    make_big_dir();
    nr_ctx *c = pt_open(&pt_owner);
    unsigned char *seen = g_malloc0(NENTRIES);
    int dots = 0, calls = 0, total = 0;
    uint64_t cookie = 0;
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    bool eof = false;
    gint64 t0 = g_get_monotonic_time();

    while (!eof) {
        READDIRPLUS3res res;
        pt_ok(c, nr_readdirplus(c, &big_dir, cookie, verf, 8192, 65536, &res));
        calls++;
        g_assert_cmpint(calls, <, 2 * NENTRIES);
        const READDIRPLUS3resok *ok = &res.READDIRPLUS3res_u.resok;
        memcpy(verf, ok->cookieverf, sizeof verf);
        int in_reply = 0;
        for (const entryplus3 *e = ok->reply.entries; e; e = e->nextentry) {
            g_assert_cmpuint(e->cookie, >, cookie);
            cookie = e->cookie;
            int i = entry_index(e->name);
            in_reply++;
            total++;
            if (i < 0) {
                dots++;
                continue;
            }
            g_assert_cmpint(seen[i], ==, 0);
            seen[i] = 1;
            g_assert_cmpuint(e->fileid, ==, fileids[i]);
            fattr3 a = pt_post_attr(&e->name_attributes);
            g_assert_cmpuint(a.fileid, ==, fileids[i]);
            g_assert_cmpint(a.type, ==, NF3REG);
            g_assert_cmpuint(a.mode, ==, 0644);
            g_assert_cmpuint(a.uid, ==, PT_OWNER_UID);
            g_assert_true(e->name_handle.handle_follows);
            g_assert_cmpuint(e->name_handle.post_op_fh3_u.handle.data.data_len, >, 0);
            /* Spot-check that the handles work. */
            if (i % 997 == 0) {
                nr_fh h = nr_fh_from(&e->name_handle.post_op_fh3_u.handle);
                g_assert_cmpuint(pt_getattr(c, &h).fileid, ==, fileids[i]);
            }
        }
        eof = ok->reply.eof;
        g_assert_true(eof || in_reply > 0);
        nr_arena_clear(c);
    }
    g_test_message("READDIRPLUS: %d entries in %d calls, %.2f s", total, calls,
                   (g_get_monotonic_time() - t0) / 1e6);
    g_assert_cmpint(dots, ==, 2);
    g_assert_cmpint(total, ==, NENTRIES + 2);
    for (int i = 0; i < NENTRIES; i++)
        g_assert_cmpint(seen[i], ==, 1);
    g_assert_cmpint(calls, <, NENTRIES / 20);
    g_free(seen);
    nr_close(c);
}

/* Runs last: it changes the directory. */
static void test_readdir_while_removing(void)
{
    make_big_dir();
    nr_ctx *c = pt_open(&pt_owner);
    nr_ctx *w = pt_open(&pt_owner);
    unsigned char *seen = g_malloc0(NENTRIES);
    unsigned char *removed = g_malloc0(NENTRIES);
    GHashTable *added_seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    uint64_t cookie = 0;
    char verf[NFS3_COOKIEVERFSIZE] = {0};
    bool eof = false, changed = false;
    int seen_before = 0;

    while (!eof) {
        READDIR3res res;
        pt_ok(c, nr_readdir(c, &big_dir, cookie, verf, 8192, &res));
        const READDIR3resok *ok = &res.READDIR3res_u.resok;
        memcpy(verf, ok->cookieverf, sizeof verf);
        for (const entry3 *e = ok->reply.entries; e; e = e->nextentry) {
            g_assert_cmpuint(e->cookie, >, cookie);
            cookie = e->cookie;
            if (strncmp(e->name, "new-", 4) == 0) {
                g_assert_true(changed);
                g_assert_false(g_hash_table_contains(added_seen, e->name));
                g_hash_table_add(added_seen, g_strdup(e->name));
                continue;
            }
            int i = entry_index(e->name);
            if (i < 0)
                continue;
            /* Never twice, and nothing that was removed before we got there. */
            g_assert_cmpint(seen[i], ==, 0);
            g_assert_cmpint(removed[i], ==, 0);
            seen[i] = 1;
            if (!changed)
                seen_before++;
        }
        eof = ok->reply.eof;
        nr_arena_clear(c);

        if (!changed && seen_before >= NENTRIES / 2) {
            /* Half-way: remove every third entry, listed or not, and add some. */
            pipeline(w, &big_dir, 0, NENTRIES, 3, true);
            for (int i = 0; i < NENTRIES; i += 3)
                removed[i] = 1;
            for (int i = 0; i < 50; i++) {
                char name[32];
                snprintf(name, sizeof name, "new-%02d", i);
                pt_create(w, &big_dir, name, 0644);
            }
            changed = true;
        }
    }
    g_assert_true(changed);
    /* Everything that stayed was listed exactly once, and the new entries too. */
    for (int i = 0; i < NENTRIES; i++)
        if (!removed[i])
            g_assert_cmpint(seen[i], ==, 1);
    g_assert_cmpuint(g_hash_table_size(added_seen), ==, 50);
    g_hash_table_unref(added_seen);
    g_free(seen);
    g_free(removed);
    nr_close(c);
    nr_close(w);
}

int main(int argc, char **argv)
{
    pt_init(&argc, &argv);
    pt_add_inproc("/bigdir/readdir", test_readdir_all);
    pt_add_inproc("/bigdir/readdirplus", test_readdirplus_all);
    pt_add_inproc("/bigdir/readdir_while_removing", test_readdir_while_removing);
    return pt_run();
}
