/*
 * test_emb.c -- the embedded cluster's pure parts: the WAL settings
 * chosen for a disk (emb_wal_for_disk), the space measured under a data
 * directory (emb_space_of), and the advice given for what PostgreSQL's
 * log says (emb_advice). The cluster itself is tested through real
 * servers (tests/fault/test_pg_supervise.c, tests/proto/test_cli.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/statvfs.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "emb.h"

#define MIB (1024ull * 1024ull)
#define GIB (1024ull * MIB)

static void test_wal_sizes(void)
{
    emb_wal w;

    /* A large, mostly free disk: PostgreSQL's own defaults. */
    emb_wal_for_disk(500 * GIB, 400 * GIB, &w);
    g_assert_cmpuint(w.max_wal_mb, ==, 1024);
    g_assert_cmpuint(w.min_wal_mb, ==, 80);
    g_assert_cmpuint(w.slot_keep_mb, ==, 1024);

    /* A 200 MiB disk: the least PostgreSQL takes (two segments). */
    emb_wal_for_disk(200 * MIB, 150 * MIB, &w);
    g_assert_cmpuint(w.max_wal_mb, ==, 32);
    g_assert_cmpuint(w.min_wal_mb, ==, 32);

    /* 4 GiB: a sixteenth is 256 MiB; 64 MiB kept for recycling. */
    emb_wal_for_disk(4 * GIB, 4 * GIB, &w);
    g_assert_cmpuint(w.max_wal_mb, ==, 256);
    g_assert_cmpuint(w.min_wal_mb, ==, 64);
    g_assert_cmpuint(w.slot_keep_mb, ==, 256);

    /* A large disk nearly full: a quarter of what is free. */
    emb_wal_for_disk(100 * GIB, 400 * MIB, &w);
    g_assert_cmpuint(w.max_wal_mb, ==, 100);
    g_assert_cmpuint(w.min_wal_mb, ==, 80);

    /* min never above max, both at least 32 MiB, on any disk. */
    for (unsigned long long total = MIB; total <= 64 * GIB; total *= 2) {
        for (unsigned long long avail = 0; avail <= total; avail += total / 4 + 1) {
            emb_wal_for_disk(total, avail, &w);
            g_assert_cmpuint(w.min_wal_mb, >=, 32);
            g_assert_cmpuint(w.max_wal_mb, >=, w.min_wal_mb);
            g_assert_cmpuint(w.max_wal_mb, <=, 1024);
            g_assert_cmpuint(w.min_wal_mb, <=, 80);
        }
    }
}

static void test_space(void)
{
    char *dir = g_dir_make_tmp("pgnfs-emb-XXXXXX", NULL);
    struct statvfs st;
    emb_space sp;

    g_assert_nonnull(dir);
    g_assert_cmpint(emb_space_of(dir, &sp), ==, 0);
    g_assert_cmpint(statvfs(dir, &st), ==, 0);
    g_assert_cmpuint(sp.total_bytes, ==, (unsigned long long)st.f_blocks * st.f_frsize);
    g_assert_cmpuint(sp.avail_bytes, <=, sp.total_bytes);
    g_assert_cmpuint(sp.total_bytes, >, 0);
    g_assert_cmpint(emb_space_of("/nonexistent/pgnfs", &sp), ==, -ENOENT);
    g_rmdir(dir);
    g_free(dir);
}

/* What each kind of log says leads to its own advice, for a serving
 * server (it restarts PostgreSQL itself) and for a start (run pgnfs
 * again). */
static void test_advice(void)
{
    static const struct {
        const char *log, *says;
    } cases[] = {
        {"PANIC:  could not write to file \"pg_wal/xlogtemp.77\": No space left on device",
         "the file system holding /srv/d is full: free space on it (df -h /srv/d)"},
        {"FATAL:  could not extend file \"base/16384/2619\": wrote only 4096 of 8192 bytes",
         "is full"},
        {"LOG:  unrecognized configuration parameter \"x\" in file \"/srv/d/pg/postgresql.conf\""
         " line 3\nFATAL:  configuration file \"/srv/d/pg/postgresql.conf\" contains errors",
         "correct the setting the log names in /srv/d/pg/postgresql.conf"},
        {"FATAL:  database files are incompatible with server", "pg_upgrade"},
        {"FATAL:  pre-existing shared memory block (key 1, ID 2) is still in use",
         "still running (ps -u postgres)"},
        {"FATAL:  could not open file \"global/pg_control\": Permission denied",
         "chown -R postgres /srv/d/pg"},
        {"FATAL:  terminating connection due to unexpected postmaster exit",
         "PostgreSQL was killed"},
        {"LOG:  something nobody foresaw",
         "read the newest file in /srv/d/pg/log (and /srv/d/pg/postgresql.log) for the cause"},
        /* A reload mentions configuration files without an error. */
        {"LOG:  received SIGHUP, reloading configuration files", "newest file in /srv/d/pg/log"},
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *serving = emb_advice(cases[i].log, "/srv/d", "postgres", true);
        char *starting = emb_advice(cases[i].log, "/srv/d", "postgres", false);
        if (!strstr(serving, cases[i].says))
            g_error("for '%s' the advice is '%s'", cases[i].log, serving);
        g_assert_nonnull(strstr(serving, "pgnfs starts PostgreSQL again by itself"));
        g_assert_nonnull(strstr(starting, cases[i].says));
        g_assert_nonnull(strstr(starting, "then start pgnfs again"));
        g_free(serving);
        g_free(starting);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/emb/wal_sizes", test_wal_sizes);
    g_test_add_func("/emb/space", test_space);
    g_test_add_func("/emb/advice", test_advice);
    return g_test_run();
}
