/*
 * test_xform_link.c -- transformation links (dbfs_xf_link.c,
 * 27_xform_link.sql): a link through a length-preserving chain reads as
 * its base through the chain and writes back through the inverse, against
 * a model, over a plain and a guarded base, with and without caches; its
 * attributes follow the base (size, times) whoever writes; renaming the
 * base changes nothing; truncating either truncates the base; removing the
 * base leaves the link dangling (EIO, fsck reports it) and removing the
 * link drops its row. A link through a chain that changes lengths is
 * read-only and its size is computed at first access, again after the base
 * changes; its bytes are each chunk's output, one after the other. Chains a
 * link cannot use are refused with the reason.
 *
 * Runs once per storage variant (tests/dbfs/CMakeLists.txt: PGNFS_TEST_MKFS).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "tx.h"
#include "xf.h"

/* Read all of fh (at most max bytes) through t; returns its length. */
static uint32_t tl_read_all(td_fs *t, dbfs_fh fh, unsigned char *buf, uint32_t max)
{
    dbfs_cred root = td_root();
    uint32_t n = 0;
    bool eof = false;

    td_rc(dbfs_read(t->c, &root, fh, 0, max, buf, &n, &eof, NULL), 0);
    g_assert_true(eof);
    return n;
}

/* The link model: the base's bytes, each plus one. */
static void tl_inc(const unsigned char *in, unsigned char *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(in[i] + 1);
}

/* The base and its increment link checked against the base's model. */
static void tl_check(td_fs *t, dbfs_fh base, dbfs_fh link, const unsigned char *model,
                     uint64_t size)
{
    unsigned char *buf = g_malloc(TX_MAX + 1), *want = g_malloc(TX_MAX + 1);

    g_assert_cmpuint(td_getattr(t, link).size, ==, size);
    g_assert_cmpuint(tl_read_all(t, base, buf, TX_MAX + 1), ==, size);
    g_assert_cmpmem(buf, size, model, size);
    tl_inc(model, want, size);
    g_assert_cmpuint(tl_read_all(t, link, buf, TX_MAX + 1), ==, size);
    g_assert_cmpmem(buf, size, want, size);
    g_free(buf);
    g_free(want);
}

/* Random writes to the base and to the link (stable and unstable),
 * truncations of either, reads of either at random offsets, against the
 * base's model; the link's ctime moves with every change of the base. */
static void tl_model_run(td_fs *t, dbfs_fh base, dbfs_fh link, int ops)
{
    dbfs_cred root = td_root();
    unsigned char *model = g_malloc0(TX_MAX), *data = g_malloc(TX_MAX), *buf = g_malloc(TX_MAX);
    unsigned char *want = g_malloc(TX_MAX);
    uint64_t size = td_getattr(t, base).size;

    g_assert_cmpuint(tl_read_all(t, base, model, TX_MAX), ==, size);
    for (int i = 0; i < ops; i++) {
        int what = g_random_int_range(0, 10);
        bool to_link = g_random_boolean();
        int64_t ctime = td_getattr(t, link).ctime_ns;

        if (what < 5) {
            uint32_t off = (uint32_t)g_random_int_range(0, TX_MAX - 1);
            uint32_t len = (uint32_t)g_random_int_range(1, (int)MIN(TX_MAX - off, 2 * TX_CHUNK));
            dbfs_stable how = what < 3 ? DBFS_FILE_SYNC : DBFS_UNSTABLE;

            tx_fill(data, len, true);
            g_test_message("op %d: write %s %u+%u %s", i, to_link ? "link" : "base", off, len,
                           how == DBFS_UNSTABLE ? "unstable" : "stable");
            td_rc(dbfs_write(t->c, &root, to_link ? link : base, off, data, len, how, NULL, NULL),
                  0);
            /* (mostly left buffered: a read of the link stores them first) */
            if (what == 0)
                td_rc(dbfs_commit(t->c, base, 0, 0, NULL), 0);
            if (off > size)
                memset(model + size, 0, off - size);
            for (uint32_t j = 0; j < len; j++)
                model[off + j] = to_link ? (unsigned char)(data[j] - 1) : data[j];
            size = MAX(size, (uint64_t)off + len);
            if (how != DBFS_UNSTABLE || what == 0)
                g_assert_cmpint(td_getattr(t, link).ctime_ns, >, ctime);
        } else if (what < 8) {
            uint32_t off = (uint32_t)g_random_int_range(0, TX_MAX);
            uint32_t len = (uint32_t)g_random_int_range(1, 2 * TX_CHUNK);
            uint32_t n = 0, expect;
            bool eof;

            td_rc(dbfs_read(t->c, &root, to_link ? link : base, off, len, buf, &n, &eof, NULL), 0);
            expect = off >= size ? 0 : (uint32_t)MIN(len, size - off);
            g_assert_cmpuint(n, ==, expect);
            if (to_link)
                tl_inc(model + off, want, expect);
            else
                memcpy(want, model + off, expect);
            if (memcmp(buf, want, n) != 0) {
                uint32_t k = 0;

                while (buf[k] == want[k])
                    k++;
                g_test_message("op %d: read of the %s at %u (%u bytes): byte %u is %u, want %u", i,
                               to_link ? "link" : "base", off, n, k, buf[k], want[k]);
            }
            g_assert_cmpmem(buf, n, want, expect);
        } else {
            dbfs_sattr sa = {.set = DBFS_SET_SIZE};

            sa.size = (uint64_t)g_random_int_range(0, TX_MAX);
            g_test_message("op %d: truncate %s to %llu", i, to_link ? "link" : "base",
                           (unsigned long long)sa.size);
            td_rc(dbfs_setattr(t->c, &root, to_link ? link : base, &sa, NULL, NULL), 0);
            if (sa.size > size)
                memset(model + size, 0, sa.size - size);
            size = sa.size;
        }
    }
    td_rc(dbfs_commit(t->c, base, 0, 0, NULL), 0);
    tl_check(t, base, link, model, size);
    g_free(model);
    g_free(data);
    g_free(buf);
    g_free(want);
}

/* Make link `name` of base through chain (dbfs_xform_link must succeed). */
static dbfs_attr tl_link(tx_env *e, const char *base, const char *name, const char *chain)
{
    dbfs_cred root = td_root();
    char msg[512];
    dbfs_attr a;

    td_rc(dbfs_xform_link(e->t.fs, base, name, chain, msg, sizeof msg), 0);
    a = td_lookup(&e->t, &root, e->t.root, strrchr(name, '/') + 1);
    g_assert_cmpint(a.type, ==, DBFS_REG);
    return a;
}

/* A writable link (increment) over a plain and a guarded base, caches on
 * and off: the model; then rename, dangling base, fsck, removal. */
static void test_preserving(void)
{
    static const char *const bases[] = {NULL, "zstd,sha256"};

    for (size_t i = 0; i < G_N_ELEMENTS(bases); i++) {
        for (int cache = 0; cache < 2; cache++) {
            tx_env e;
            dbfs_cred root = td_root();
            unsigned char *data = g_malloc(TX_MAX), *buf = g_malloc(TX_MAX + 1);
            dbfs_attr b, l;
            uint64_t problems = 0;
            int seen = 0;
            char *text;

            g_test_message("base chain %s, %s", bases[i] ? bases[i] : "none",
                           cache ? "caches" : "no caches");
            tx_env_open(&e, bases[i], cache);
            b = td_create(&e.t, &root, e.t.root, "base", 0640);
            tx_fill(data, TX_MAX / 2, true);
            td_write(&e.t, &root, td_fh(&b), 0, data, TX_MAX / 2);
            l = tl_link(&e, "/base", "/lnk", "increment");
            g_assert_cmpuint(l.size, ==, TX_MAX / 2);
            g_assert_cmpuint(l.mode, ==, 0640);
            g_assert_cmpint(tx_chain_of(e.conninfo, l.ino), ==, 0);
            td_rc(dbfs_xform_show(e.t.fs, "/lnk", &text), 0);
            g_assert_cmpstr(text, ==, "link to /base through increment");
            g_free(text);
            tl_model_run(&e.t, td_fh(&b), td_fh(&l), 120);
            /* Renaming the base (or the link) changes nothing. */
            td_rc(dbfs_rename(e.t.c, &root, e.t.root, "base", e.t.root, "base2", NULL, NULL), 0);
            tl_model_run(&e.t, td_fh(&b), td_fh(&l), 20);
            td_rc(dbfs_xform_check(e.t.fs, tx_count_problem, &seen, &problems), 0);
            g_assert_cmpuint(problems, ==, 0);
            /* The base's last name goes: the link dangles. */
            td_rc(dbfs_remove(e.t.c, &root, e.t.root, "base2", NULL), 0);
            g_test_expect_message("pgnfs-dbfs", G_LOG_LEVEL_WARNING,
                                  "transformation link *: its base file * is gone*");
            td_rc(dbfs_read(e.t.c, &root, td_fh(&l), 0, 10, buf, &(uint32_t){0}, &(bool){false},
                            NULL),
                  -EIO);
            g_test_assert_expected_messages();
            td_rc(dbfs_xform_check(e.t.fs, tx_count_problem, &seen, &problems), 0);
            g_assert_cmpuint(problems, ==, 1);
            td_rc(dbfs_remove(e.t.c, &root, e.t.root, "lnk", NULL), 0);
            g_assert_cmpint(td_sql(e.conninfo, "SELECT count(*) FROM pgnfs_xform_link"), ==, 0);
            td_rc(dbfs_xform_check(e.t.fs, tx_count_problem, &seen, &problems), 0);
            g_assert_cmpuint(problems, ==, 0);
            tx_env_close(&e);
            g_free(data);
            g_free(buf);
        }
    }
}

/* What a link through chain text must read for base bytes b (n): each
 * chunk's payload, one after the other. */
static GByteArray *tl_expect(const char *text, uint64_t ino, const unsigned char *b, size_t n)
{
    xf_env_config cfg = {0};
    xf_env *env;
    xf_work *w;
    const xf_chain *ch;
    GByteArray *out = g_byte_array_new();
    unsigned char *enc;

    td_rc(xf_env_new(&cfg, &env, NULL), 0);
    td_rc(xf_work_new(env, &w), 0);
    td_rc(xf_chain_get(env, text, &ch, NULL), 0);
    enc = g_malloc(xf_encode_room(ch, TX_CHUNK));
    for (size_t at = 0, k = 0; at < n; at += TX_CHUNK, k++) {
        size_t len = MIN(TX_CHUNK, n - at), stored = 0;

        td_rc(xf_encode(ch, w, &(xf_chunk){ino, k, 0}, b + at, len, enc,
                        xf_encode_room(ch, TX_CHUNK), &stored, NULL),
              0);
        g_byte_array_append(out, enc + xf_chain_header_len(ch),
                            (guint)(stored - xf_chain_header_len(ch)));
    }
    g_free(enc);
    xf_work_free(w);
    xf_env_free(env);
    return out;
}

/* A link through lz4 (lengths change): read-only, size computed at first
 * access and again after the base changes, bytes as expected at random
 * offsets. */
static void test_resized(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    unsigned char *data = g_malloc(TX_MAX), *buf = g_malloc(2 * TX_MAX);
    dbfs_attr b, l;
    dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = 10};
    GByteArray *want;

    tx_env_open(&e, NULL, true);
    b = td_create(&e.t, &root, e.t.root, "base", 0644);
    tx_fill(data, TX_MAX, true);
    td_write(&e.t, &root, td_fh(&b), 0, data, TX_MAX);
    l = tl_link(&e, "/base", "/lnk.lz4", "lz4");
    for (int round = 0; round < 3; round++) {
        want = tl_expect("lz4", l.ino, data, TX_MAX);
        /* The first access computes the size. */
        l = td_getattr(&e.t, td_fh(&l));
        g_assert_cmpuint(l.size, ==, want->len);
        g_assert_cmpuint(l.size, <, TX_MAX);
        g_assert_cmpuint(l.mode, ==, 0444);
        g_assert_cmpuint(tl_read_all(&e.t, td_fh(&l), buf, 2 * TX_MAX), ==, want->len);
        g_assert_cmpmem(buf, want->len, want->data, want->len);
        for (int i = 0; i < 30; i++) {
            uint32_t off = (uint32_t)g_random_int_range(0, (int)want->len + 10);
            uint32_t len = (uint32_t)g_random_int_range(1, 3 * TX_CHUNK), n = 0;
            uint32_t expect = off >= want->len ? 0 : MIN(len, want->len - off);
            bool eof;

            td_rc(dbfs_read(e.t.c, &root, td_fh(&l), off, len, buf, &n, &eof, NULL), 0);
            g_assert_cmpuint(n, ==, expect);
            g_assert_cmpmem(buf, n, want->data + off, expect);
        }
        g_byte_array_unref(want);
        /* Read-only, whoever asks. */
        td_rc(dbfs_write(e.t.c, &root, td_fh(&l), 0, "x", 1, DBFS_FILE_SYNC, NULL, NULL), -EACCES);
        td_rc(dbfs_write(e.t.c, &root, td_fh(&l), 0, "x", 1, DBFS_UNSTABLE, NULL, NULL), -EACCES);
        td_rc(dbfs_setattr(e.t.c, &root, td_fh(&l), &sa, NULL, NULL), -EACCES);
        /* The base changes: the next access computes again. */
        memset(data + round * 1000, 'A' + round, 2000);
        td_write(&e.t, &root, td_fh(&b), (uint64_t)round * 1000, data + round * 1000, 2000);
    }
    tx_env_close(&e);
    g_free(data);
    g_free(buf);
}

/* Chains and bases a link cannot have, each refused with why; and the
 * list of links. */
static int tl_count(const dbfs_xform_link_info *l, void *arg)
{
    g_assert_cmpstr(l->path, ==, "/d/ok");
    g_assert_cmpstr(l->base_path, ==, "/base");
    g_assert_cmpstr(l->chain, ==, "identity,increment");
    g_assert_true(l->writable && l->preserves);
    (*(int *)arg)++;
    return 0;
}

static void test_refusals(void)
{
    tx_env e;
    dbfs_cred root = td_root();
    char msg[512];
    int n = 0;

    tx_env_open(&e, NULL, false);
    td_create(&e.t, &root, e.t.root, "base", 0644);
    td_mkdir(&e.t, &root, e.t.root, "d", 0755);
    g_assert_cmpint(dbfs_xform_link(e.t.fs, "/base", "/d/x", "none", msg, sizeof msg), ==, -EINVAL);
    g_assert_nonnull(strstr(msg, "needs a chain"));
    g_assert_cmpint(dbfs_xform_link(e.t.fs, "/base", "/d/x", "aes-256-gcm", msg, sizeof msg), ==,
                    -EINVAL);
    g_assert_nonnull(strstr(msg, "nonce"));
    g_assert_cmpint(
        dbfs_xform_link(e.t.fs, "/base", "/d/x", "sql:forward=a:inverse=b", msg, sizeof msg), ==,
        -EINVAL);
    g_assert_nonnull(strstr(msg, "in-database"));
    g_assert_cmpint(dbfs_xform_link(e.t.fs, "/d", "/d/x", "identity", msg, sizeof msg), ==,
                    -EINVAL);
    g_assert_cmpint(dbfs_xform_link(e.t.fs, "/nosuch", "/d/x", "identity", msg, sizeof msg), ==,
                    -ENOENT);
    g_assert_cmpint(dbfs_xform_link(e.t.fs, "/base", "/nosuch/x", "identity", msg, sizeof msg), ==,
                    -ENOENT);
    g_assert_cmpint(dbfs_xform_link(e.t.fs, "/base", "/base/x", "identity", msg, sizeof msg), ==,
                    -ENOTDIR);
    td_rc(dbfs_xform_link(e.t.fs, "/base", "/d/ok", "identity,increment", msg, sizeof msg), 0);
    g_assert_cmpint(dbfs_xform_link(e.t.fs, "/base", "/d/ok", "identity", msg, sizeof msg), ==,
                    -EEXIST);
    g_assert_cmpint(dbfs_xform_link(e.t.fs, "/d/ok", "/d/y", "identity", msg, sizeof msg), ==,
                    -EINVAL);
    g_assert_nonnull(strstr(msg, "no link"));
    /* A link has no chain of its own, and apply leaves it alone. */
    g_assert_cmpint(dbfs_xform_set(e.t.fs, "/d/ok", "zstd", msg, sizeof msg), ==, -EINVAL);
    td_rc(dbfs_xform_set(e.t.fs, "/d", "zstd", msg, sizeof msg), 0);
    td_rc(dbfs_xform_apply(e.t.fs, "/d", NULL, NULL, &(uint64_t){0}), 0);
    td_rc(dbfs_xform_links(e.t.fs, tl_count, &n), 0);
    g_assert_cmpint(n, ==, 1);
    tx_env_close(&e);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/xform-link/preserving", test_preserving);
    g_test_add_func("/xform-link/resized", test_resized);
    g_test_add_func("/xform-link/refusals", test_refusals);
    return g_test_run();
}
