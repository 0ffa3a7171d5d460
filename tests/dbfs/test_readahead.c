/*
 * test_readahead.c -- sequential READs fetch the next chunks along
 * (dbfs_read.c read-ahead), so a stream of small reads costs far fewer
 * round trips than reads; random reads fetch only what they ask; and
 * every byte is right either way.
 */
#include <string.h>

#include "td.h"
#include "testlib.h"

enum { CS = 4096, CHUNKS = 64 };

/* A file of CHUNKS chunks written through its own dbfs (so t's caches are
 * cold), then t opened with the buffer cache. */
static dbfs_attr tr_setup(td_fs *t, unsigned char *data)
{
    dbfs_mkfs_opts o = {.chunk_size = CS, .root_mode = 0777};
    dbfs_config cfg = {0};
    dbfs_cred root = td_root();
    td_fs w = {0};
    dbfs_attr f;

    memset(t, 0, sizeof *t);
    t->conninfo = tl_fresh_db();
    td_rc(dbfs_mkfs(t->conninfo, &o), 0);
    cfg.conninfo = t->conninfo;
    td_rc(dbfs_open(&cfg, &w.fs), 0);
    td_rc(dbfs_conn_open(w.fs, &w.c), 0);
    w.root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(w.fs)->root_gen, 0};
    for (size_t i = 0; i < (size_t)CS * CHUNKS; i++)
        data[i] = (unsigned char)(i * 13 + (i >> 12));
    f = td_create(&w, &root, w.root, "f", 0644);
    td_write(&w, &root, td_fh(&f), 0, data, CS * CHUNKS);
    dbfs_conn_close(w.c);
    dbfs_close(w.fs);

    cfg.stat_cache_entries = 100;
    cfg.buffer_cache_bytes = 8u << 20;
    td_rc(dbfs_open(&cfg, &t->fs), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c), 0);
    t->root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t->fs)->root_gen, 0};
    t->trips_mark = dbfs_conn_round_trips(t->c);
    return f;
}

static void test_stream(void)
{
    unsigned char *data = g_malloc(CS * CHUNKS), buf[CS];
    dbfs_cred root = td_root();
    td_fs t;
    dbfs_attr f = tr_setup(&t, data);

    td_trips(&t);
    for (unsigned i = 0; i < CHUNKS; i++) {
        td_read(&t, &root, td_fh(&f), (uint64_t)i * CS, buf, CS);
        g_assert_cmpmem(buf, CS, data + (size_t)i * CS, CS);
    }
    uint64_t trips = td_trips(&t);
    g_test_message("%u sequential reads of one chunk: %" G_GUINT64_FORMAT " round trips", CHUNKS,
                   trips);
    /* Windows 1, 2, 4, ... 128 chunks: a handful of fetches. */
    g_assert_cmpuint(trips, <=, 10);

    /* Random reads of a fresh file system: each one fetches what it
     * asks, nothing is wrong. */
    td_close(&t);
    f = tr_setup(&t, data);
    GRand *r = g_rand_new_with_seed(7);
    td_trips(&t);
    for (unsigned i = 0; i < 16; i++) {
        unsigned k = (unsigned)g_rand_int_range(r, 0, CHUNKS);
        td_read(&t, &root, td_fh(&f), (uint64_t)k * CS, buf, CS);
        g_assert_cmpmem(buf, CS, data + (size_t)k * CS, CS);
    }
    g_assert_cmpuint(td_trips(&t), >=, 8);
    g_rand_free(r);
    td_close(&t);
    g_free(data);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/readahead/stream", test_stream);
    return g_test_run();
}
