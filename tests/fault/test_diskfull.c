/*
 * test_diskfull.c -- a full disk under the whole embedded cluster (defect
 * 3): `pgnfs serve` with its PostgreSQL -- data, WAL, log -- on a 256 MiB
 * tmpfs. NFS writes fill it until they answer NFS3ERR_NOSPC; files are
 * removed and writes succeed again; over and over, across checkpoints
 * (one forced per round, more from the WAL the writes make), and then
 * across a restart of the server. Throughout:
 *
 *   - PostgreSQL never meets the full disk: its log never says PANIC or
 *     "No space left on device", and it never stops (the server never
 *     logs that its cluster stopped);
 *   - service is never lost: every call is answered, JUKEBOX (while space
 *     that removals freed is reclaimed) only for a bounded stretch;
 *   - nothing stored is damaged: every file is read back byte-exact after
 *     each round and after the restart;
 *   - metadata changes and removals work on the full disk;
 *   - removing files makes room that new writes use, most of it: after
 *     the space guard's CHECKPOINT every database connection is opened
 *     anew, so no idle backend keeps removed WAL on the disk (run it with
 *     PGNFS_TEST_SERVER_SET=server.threads=16 to see many of them).
 *
 * Files are written in 64 KiB pieces, every other file FILE_SYNC and the
 * others UNSTABLE with a COMMIT every MiB (so the write-back buffer's
 * checks and flushes meet the full disk too). An UNSTABLE file whose WRITE
 * or COMMIT answers NOSPC is cut back to what its last COMMIT stored.
 *
 * Needs root (mount); the program makes a private mount namespace first,
 * and the tmpfs becomes $TMPDIR, so the fixture's server directory is on
 * it. Not root: it says so and exits 77 (ctest: skipped). Every wait is for
 * an event (an answer, a checkpoint counted), with a generous deadline.
 * ctest runs it per storage layout (PGNFS_TEST_SERVER_SET).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include <libpq-fe.h>

#include "fault.h"

#define DF_MIB (1024u * 1024u)

enum {
    DF_TMPFS_MB = 256,
    DF_PIECE = 65536,
    DF_FILE_PIECES = 128,  /* 8 MiB files */
    DF_COMMIT_PIECES = 16, /* UNSTABLE files: a COMMIT every MiB */
    DF_ROUNDS = 3,
    DF_MAX_FILES = 512,
    DF_DEADLINE_S = 120,
};

/* How a file is written. */
typedef enum { DF_SYNC, DF_UNSTABLE, DF_ALTERNATE } df_kind;

typedef struct {
    char name[32];
    nr_fh fh;
    uint64_t pieces; /* whole pieces stored, from 0 */
    bool live;
} df_file;

static char *df_tmpfs;
static df_file df_files[DF_MAX_FILES];
static unsigned df_nfiles;
static nr_fh df_dir;

/* JUKEBOX answers seen, and the longest run of them (µs). */
static unsigned df_jukebox;
static gint64 df_longest_us;

/* What piece i of file f holds. */
static void df_piece(unsigned char *buf, unsigned f, uint64_t i)
{
    ft_pattern(buf, DF_PIECE, ((uint64_t)f << 32) ^ i ^ 0xd15cf011ull);
}

/*
 * After a call answered st: on JUKEBOX count it, pause as a client does
 * and say to call again (failing once one run of them lasts DF_DEADLINE_S);
 * on anything else end the run. *t0: when the run began (0: none).
 */
static bool df_again(int st, gint64 *t0)
{
    gint64 now = g_get_monotonic_time();

    if (st == NR_RPC_FAILED)
        g_error("a call got no answer: service was lost");
    if (st != NFS3ERR_JUKEBOX) {
        if (*t0)
            df_longest_us = MAX(df_longest_us, now - *t0);
        *t0 = 0;
        return false;
    }
    df_jukebox++;
    if (!*t0)
        *t0 = now;
    if (now - *t0 > DF_DEADLINE_S * G_USEC_PER_SEC)
        g_error("the server answered JUKEBOX for %d s", DF_DEADLINE_S);
    g_usleep(100 * 1000);
    return true;
}

/* Free MiB on the tmpfs now. */
static double df_free_mib(void)
{
    struct statvfs sv;

    g_assert_cmpint(statvfs(df_tmpfs, &sv), ==, 0);
    return (double)sv.f_bavail * sv.f_frsize / DF_MIB;
}

/* A FILE_SYNC write of piece i of file f, retried while JUKEBOX. */
static int df_write_sync(nr_ctx *c, unsigned f, uint64_t i, unsigned char *buf)
{
    gint64 t0 = 0;
    int st;

    df_piece(buf, f, i);
    do
        st = nr_write(c, &df_files[f].fh, i * DF_PIECE, buf, DF_PIECE, FILE_SYNC, NULL);
    while (df_again(st, &t0));
    nr_arena_clear(c);
    return st;
}

/* COMMIT of file f, retried while JUKEBOX. */
static int df_commit(nr_ctx *c, unsigned f)
{
    gint64 t0 = 0;
    int st;

    do
        st = nr_commit(c, &df_files[f].fh, 0, 0, NULL);
    while (df_again(st, &t0));
    nr_arena_clear(c);
    return st;
}

/* Cut file f to what it holds for sure (a metadata change: never NOSPC). */
static void df_cut(nr_ctx *c, unsigned f)
{
    sattr3 sa = nr_sattr_none();
    gint64 t0 = 0;
    int st;

    sa.size.set_it = 1;
    sa.size.set_size3_u.size = df_files[f].pieces * DF_PIECE;
    do
        st = nr_setattr(c, &df_files[f].fh, &sa, NULL, NULL);
    while (df_again(st, &t0));
    pt_ok(c, st);
    nr_arena_clear(c);
}

/* UNSTABLE writes of file f from its end, a COMMIT every MiB, until the
 * file is whole or something answers NOSPC (false). */
static bool df_fill_unstable(nr_ctx *c, unsigned f, unsigned char *buf)
{
    uint64_t at = df_files[f].pieces;
    int st = NFS3_OK;

    while (at < DF_FILE_PIECES && st == NFS3_OK) {
        gint64 t0 = 0;

        df_piece(buf, f, at);
        do
            st = nr_write(c, &df_files[f].fh, at * DF_PIECE, buf, DF_PIECE, UNSTABLE, NULL);
        while (df_again(st, &t0));
        nr_arena_clear(c);
        if (st == NFS3_OK)
            at++;
        if (st == NFS3_OK && (at % DF_COMMIT_PIECES == 0 || at == DF_FILE_PIECES)) {
            st = df_commit(c, f);
            if (st == NFS3_OK)
                df_files[f].pieces = at;
        }
    }
    if (st == NFS3_OK)
        return true;
    pt_stat(c, st, NFS3ERR_NOSPC);
    /* What was written after the last COMMIT that succeeded may be lost
     * (a flush that failed is reported by the next COMMIT, so every one
     * before held): settle the buffer, and keep only what is sure. */
    st = df_commit(c, f);
    if (st != NFS3_OK)
        pt_stat(c, st, NFS3ERR_NOSPC);
    df_cut(c, f);
    return false;
}

/* Fill the disk with new 8 MiB files, written as `kind` says (or every
 * other one UNSTABLE), until a write answers NOSPC; returns the bytes
 * stored, and in *last how the file that met NOSPC was written. */
static uint64_t df_fill(nr_ctx *c, unsigned round, df_kind kind, unsigned char *buf, df_kind *last)
{
    uint64_t stored = 0;
    bool room = true;

    while (room) {
        g_assert_cmpuint(df_nfiles, <, DF_MAX_FILES);
        unsigned f = df_nfiles++;
        df_file *d = &df_files[f];

        snprintf(d->name, sizeof d->name, "r%u-f%u", round, f);
        d->fh = pt_create(c, &df_dir, d->name, 0644);
        d->live = true;
        *last = kind != DF_ALTERNATE ? kind : f % 2 ? DF_UNSTABLE : DF_SYNC;
        if (*last == DF_UNSTABLE) {
            room = df_fill_unstable(c, f, buf);
        } else {
            while (room && d->pieces < DF_FILE_PIECES) {
                int st = df_write_sync(c, f, d->pieces, buf);
                room = st == NFS3_OK;
                if (room)
                    d->pieces++;
                else
                    pt_stat(c, st, NFS3ERR_NOSPC);
            }
        }
        stored += d->pieces * DF_PIECE;
    }
    return stored;
}

/* Every live file holds exactly what was stored. */
static void df_verify(nr_ctx *c, unsigned char *buf)
{
    for (unsigned f = 0; f < df_nfiles; f++) {
        if (!df_files[f].live)
            continue;
        g_assert_cmpuint(pt_getattr(c, &df_files[f].fh).size, ==, df_files[f].pieces * DF_PIECE);
        for (uint64_t i = 0; i < df_files[f].pieces; i++) {
            READ3res rd;
            gint64 t0 = 0;
            int st;

            do
                st = nr_read(c, &df_files[f].fh, i * DF_PIECE, DF_PIECE, &rd);
            while (df_again(st, &t0));
            pt_ok(c, st);
            df_piece(buf, f, i);
            if (rd.READ3res_u.resok.data.data_len != DF_PIECE ||
                memcmp(rd.READ3res_u.resok.data.data_val, buf, DF_PIECE) != 0)
                g_error("%s: piece %" G_GUINT64_FORMAT " is not what was written", df_files[f].name,
                        i);
            ft_verified_add(DF_PIECE);
            nr_arena_clear(c);
        }
    }
}

/* Full: metadata still changes. */
static void df_full(nr_ctx *c, unsigned round)
{
    char name[32];
    nr_fh fh, sub;

    snprintf(name, sizeof name, "meta%u", round);
    sub = pt_mkdir(c, &df_dir, name, 0755);
    fh = pt_create(c, &sub, "empty", 0644);
    pt_chmod(c, &fh, 0600);
    pt_ok(c, nr_rename(c, &sub, "empty", &sub, "renamed", NULL));
    nr_arena_clear(c);
}

/* Remove every other live file (the space freed lies between the files
 * kept, not only at the end); returns the bytes they held. */
static uint64_t df_remove_half(nr_ctx *c)
{
    uint64_t freed = 0;
    unsigned n = 0;

    for (unsigned f = 0; f < df_nfiles; f++) {
        gint64 t0 = 0;
        int st;

        if (!df_files[f].live || n++ % 2)
            continue;
        do
            st = nr_remove(c, &df_dir, df_files[f].name, NULL);
        while (df_again(st, &t0));
        pt_ok(c, st);
        df_files[f].live = false;
        freed += df_files[f].pieces * DF_PIECE;
        nr_arena_clear(c);
    }
    return freed;
}

/* One int8 from the server's database (aborts on an error). */
static long long df_sql_value(PGconn *pg, const char *sql, bool *ok)
{
    PGresult *r = PQexec(pg, sql);
    long long v = 0;

    *ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
    if (*ok)
        v = atoll(PQgetvalue(r, 0, 0));
    PQclear(r);
    return v;
}

/* Checkpoints PostgreSQL has made since its statistics began. */
static long long df_checkpoints(PGconn *pg)
{
    bool ok;
    long long n =
        df_sql_value(pg, "SELECT num_timed + num_requested FROM pg_stat_checkpointer", &ok);

    if (!ok) /* PostgreSQL before 17 */
        n = df_sql_value(pg, "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter",
                         &ok);
    if (!ok)
        g_error("cannot count checkpoints: %s", PQerrorMessage(pg));
    return n;
}

/* A checkpoint now, on the full disk; returns the checkpoints counted so
 * far (CHECKPOINT returns once it is done, and counted). */
static long long df_checkpoint(void)
{
    PGconn *pg = PQconnectdb(tl_server_conninfo(pt.server));
    PGresult *r;
    long long before, after;

    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    before = df_checkpoints(pg);
    r = PQexec(pg, "CHECKPOINT");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        g_error("CHECKPOINT: %s", PQresultErrorMessage(r));
    PQclear(r);
    /* The statistics may lag the checkpoint a moment: wait for them. */
    gint64 deadline = g_get_monotonic_time() + DF_DEADLINE_S * G_USEC_PER_SEC;
    while ((after = df_checkpoints(pg)) <= before) {
        if (g_get_monotonic_time() > deadline)
            g_error("the forced checkpoint was never counted");
        g_usleep(50 * 1000);
    }
    PQfinish(pg);
    return after;
}

/* Everything PostgreSQL logged: pg_ctl's file and the collector's. */
static char *df_pg_log(void)
{
    char *pg = g_build_filename(tl_server_data_dir(pt.server), "pg", NULL);
    char *logdir = g_build_filename(pg, "log", NULL);
    char *first = g_build_filename(pg, "postgresql.log", NULL);
    GString *all = g_string_new(NULL);
    char *text = NULL;
    GDir *d;

    if (g_file_get_contents(first, &text, NULL, NULL))
        g_string_append(all, text);
    g_free(text);
    if ((d = g_dir_open(logdir, 0, NULL)) != NULL) {
        const char *name;
        while ((name = g_dir_read_name(d)) != NULL) {
            char *path = g_build_filename(logdir, name, NULL);
            if (g_file_get_contents(path, &text, NULL, NULL))
                g_string_append(all, text);
            g_free(text);
            g_free(path);
        }
        g_dir_close(d);
    }
    g_free(first);
    g_free(logdir);
    g_free(pg);
    return g_string_free(all, FALSE);
}

/* PostgreSQL never met the full disk, and never stopped. */
static void df_check_logs(void)
{
    char *pg = df_pg_log();
    char *server = tl_server_log(pt.server);

    if (strstr(pg, "PANIC") || strstr(pg, "No space left on device"))
        g_error("PostgreSQL met the full disk; its log:\n%s", pg);
    if (strstr(server, "ERROR pgnfs-embed: PostgreSQL in "))
        g_error("the embedded PostgreSQL stopped; the server's log:\n%s", server);
    g_free(server);
    g_free(pg);
}

static unsigned df_count(const char *text, const char *needle)
{
    unsigned n = 0;

    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_diskfull(void)
{
    unsigned char *buf = g_malloc(DF_PIECE);
    nr_ctx *c = pt_open(NULL);
    long long checkpoints0, checkpoints = 0;
    uint64_t freed = 0;

    /* The whole cluster is on the tmpfs. */
    g_assert_true(g_str_has_prefix(tl_server_data_dir(pt.server), df_tmpfs));
    df_dir = pt_mkdir(c, &pt.root, "full", 0777);
    {
        PGconn *pg = PQconnectdb(tl_server_conninfo(pt.server));
        g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
        checkpoints0 = df_checkpoints(pg);
        PQfinish(pg);
    }
    g_test_message("a %u MiB tmpfs, %.1f MiB free with the cluster on it", DF_TMPFS_MB,
                   df_free_mib());
    for (unsigned round = 0; round <= DF_ROUNDS; round++) {
        df_kind last;
        uint64_t stored = df_fill(c, round, DF_ALTERNATE, buf, &last);

        g_test_message("round %u: %.1f MiB written before NFS3ERR_NOSPC (%.1f MiB left free on "
                       "the disk)%s",
                       round, (double)stored / DF_MIB, df_free_mib(),
                       round ? " after removing files" : "");
        /* Removing files made room that writes used: most of it, since
         * no idle backend keeps the WAL the reclaim's CHECKPOINT removed
         * (every connection is opened anew after it). */
        g_assert_cmpuint(stored, >, round ? freed / 2 : 32 * DF_MIB);
        /* Writes of the other kind meet NOSPC too (a checkpoint may have
         * recycled some WAL meanwhile: they may store a little first). */
        df_kind other = last == DF_SYNC ? DF_UNSTABLE : DF_SYNC;
        uint64_t more = df_fill(c, round, other, buf, &last);
        g_assert_true(last == other);
        g_test_message("round %u: then %.1f MiB more %s", round, (double)more / DF_MIB,
                       other == DF_SYNC ? "FILE_SYNC" : "UNSTABLE");
        df_full(c, round);
        df_verify(c, buf);
        checkpoints = df_checkpoint();
        df_check_logs();
        if (round == DF_ROUNDS)
            break;
        freed = df_remove_half(c);
        g_test_message("round %u: removed %.1f MiB; %.1f MiB free on the disk", round,
                       (double)freed / DF_MIB, df_free_mib());
    }
    nr_close(c);

    /* A restart of the server (and its cluster) on the full disk. */
    g_assert_true(pt_restart());
    c = pt_open(NULL);
    df_verify(c, buf);
    nr_fh after = pt_create(c, &df_dir, "after-restart", 0644);
    gint64 t0 = 0;
    int st;
    do
        st = nr_write(c, &after, 0, "still here", 10, FILE_SYNC, NULL);
    while (df_again(st, &t0));
    g_assert_true(st == NFS3_OK || st == NFS3ERR_NOSPC);
    /* Make room: remove the largest file. */
    unsigned big = 0;
    for (unsigned f = 0; f < df_nfiles; f++)
        if (df_files[f].live && (!df_files[big].live || df_files[f].pieces > df_files[big].pieces))
            big = f;
    g_assert_true(df_files[big].live && df_files[big].pieces > 0);
    pt_ok(c, nr_remove(c, &df_dir, df_files[big].name, NULL));
    df_files[big].live = false;
    do
        st = nr_write(c, &after, 0, "still here", 10, FILE_SYNC, NULL);
    while (df_again(st, &t0));
    pt_ok(c, st);
    df_verify(c, buf);
    df_check_logs();

    char *log = tl_server_log(pt.server);
    char **lines = g_strsplit(log, "\n", -1);
    for (char **l = lines; *l; l++)
        if (strstr(*l, "space: reclaimed") || strstr(*l, "space: every database connection"))
            g_test_message("server: %s", strstr(*l, "space: "));
    g_strfreev(lines);
    g_test_message("checkpoints: %lld during the rounds (%d forced); %u reclaims after removals, "
                   "%u renewals of every connection; %u JUKEBOX answers, the longest run %.1f s",
                   checkpoints - checkpoints0, DF_ROUNDS + 1,
                   df_count(log, "space: reclaimed after removals"),
                   df_count(log, "space: every database connection was opened anew"), df_jukebox,
                   (double)df_longest_us / G_USEC_PER_SEC);
    g_free(log);
    g_assert_cmpint(checkpoints - checkpoints0, >=, DF_ROUNDS + 1);
    nr_close(c);
    g_free(buf);
}

int main(int argc, char **argv)
{
    bool listing = false;

    for (int i = 1; i < argc; i++)
        listing |= strcmp(argv[i], "-l") == 0;
    if (!listing) {
        ft_private_mounts_or_skip("fault/diskfull");
        df_tmpfs = ft_tmpfs(DF_TMPFS_MB);
        /* The fixture's server directory goes on the tmpfs. */
        g_setenv("TMPDIR", df_tmpfs, TRUE);
    }
    ft_init(&argc, &argv, NULL);
    g_test_add_func("/fault/diskfull", test_diskfull);
    return ft_run();
}
