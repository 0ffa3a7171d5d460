/*
 * test_pg_supervise.c -- the embedded PostgreSQL supervised while a server
 * uses it (server/cluster/emb_watch.c): its postmaster is killed with
 * SIGKILL under a running `pgnfs serve`. The server must say so at error
 * level, with what to do; start PostgreSQL again by itself and say when it
 * is back; and a client's call, retried while it answers JUKEBOX as an
 * NFS client does, must then succeed, with the data written before intact
 * and the same server process serving. Twice: the second kill hits the
 * postmaster the server started itself. Then once more while PostgreSQL
 * cannot start: the server reports each failed start and why, backs off,
 * and brings the cluster back once the cause is removed. And its log stays
 * small: PostgreSQL rotates it by size, the server removes old files.
 *
 * No step assumes how long anything takes: each waits for its event (a
 * line in the server's log, an answer) with a generous deadline.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "fault.h"

/* Deadline for each awaited event. */
#define SV_DEADLINE_S 120

/* The pid in the server's DATA/pg/postmaster.pid (0 if none). */
static int sv_postmaster_pid(void)
{
    char *path = g_build_filename(tl_server_data_dir(pt.server), "pg", "postmaster.pid", NULL);
    char *text = NULL;
    int pid = 0;

    if (g_file_get_contents(path, &text, NULL, NULL))
        pid = atoi(text);
    g_free(text);
    g_free(path);
    return pid;
}

/* How often needle occurs in text. */
static unsigned sv_count(const char *text, const char *needle)
{
    unsigned n = 0;

    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Wait until the server's log holds needle more than `before` times. */
static void sv_wait_log(const char *needle, unsigned before)
{
    gint64 deadline = g_get_monotonic_time() + SV_DEADLINE_S * G_USEC_PER_SEC;

    for (;;) {
        char *log = tl_server_log(pt.server);
        bool seen = sv_count(log, needle) > before;
        if (seen || g_get_monotonic_time() > deadline) {
            if (!seen)
                g_error("the server did not log '%s' within %d s; its log:\n%s", needle,
                        SV_DEADLINE_S, log);
            g_free(log);
            return;
        }
        g_free(log);
        g_usleep(50 * 1000);
    }
}

/* A FILE_SYNC WRITE retried while it answers JUKEBOX (as clients do);
 * returns the JUKEBOX answers it took. Fails on any other answer. */
static unsigned sv_write_retried(nr_ctx *c, const nr_fh *fh, uint64_t off, const char *data)
{
    gint64 deadline = g_get_monotonic_time() + SV_DEADLINE_S * G_USEC_PER_SEC;
    unsigned jukebox = 0;

    for (;;) {
        int st = nr_write(c, fh, off, data, (uint32_t)strlen(data), FILE_SYNC, NULL);
        nr_arena_clear(c);
        if (st == NFS3_OK)
            return jukebox;
        if (st != NFS3ERR_JUKEBOX)
            g_error("WRITE after the database came back answered %s", nr_stat_name(st));
        if (g_get_monotonic_time() > deadline)
            g_error("WRITE still answers JUKEBOX %d s after the database came back", SV_DEADLINE_S);
        jukebox++;
        g_usleep(100 * 1000); /* the pause of an NFS client before it retries */
    }
}

static void sv_expect(nr_ctx *c, const nr_fh *fh, const char *want)
{
    READ3res rd;

    pt_ok(c, nr_read(c, fh, 0, 4096, &rd));
    g_assert_cmpmem(rd.READ3res_u.resok.data.data_val, rd.READ3res_u.resok.data.data_len, want,
                    strlen(want));
    nr_arena_clear(c);
}

static void test_pg_supervise(void)
{
    int server = tl_server_pid(pt.server);
    nr_ctx *c = pt_open(NULL);
    nr_fh fh = pt_create(c, &pt.root, "kept", 0666);
    GString *want = g_string_new("before;");

    pt_ok(c, nr_write(c, &fh, 0, want->str, (uint32_t)want->len, FILE_SYNC, NULL));
    nr_arena_clear(c);
    for (int round = 1; round <= 2; round++) {
        char *log = tl_server_log(pt.server);
        unsigned stopped = sv_count(log, "ERROR pgnfs-embed: PostgreSQL in ");
        unsigned back = sv_count(log, " is back (postmaster pid ");
        g_free(log);
        int pm = sv_postmaster_pid();
        g_assert_cmpint(pm, >, 0);

        g_assert_cmpint(kill(pm, SIGKILL), ==, 0);
        /* Said at error level, with the pid, and what to do. */
        char *line = g_strdup_printf("stopped (postmaster pid %d)", pm);
        sv_wait_log(line, 0);
        g_free(line);
        sv_wait_log("ERROR pgnfs-embed: PostgreSQL in ", stopped);
        sv_wait_log("ERROR pgnfs-embed: what to do: ", 0);
        /* Started again by the server, and said so. */
        sv_wait_log(" is back (postmaster pid ", back);
        g_assert_cmpint(sv_postmaster_pid(), !=, pm);

        char piece[32];
        snprintf(piece, sizeof piece, "after %d;", round);
        unsigned jb = sv_write_retried(c, &fh, want->len, piece);
        g_string_append(want, piece);
        g_test_message("round %d: the write succeeded after %u JUKEBOX answers", round, jb);
        sv_expect(c, &fh, want->str);
    }
    /* The same server process served throughout. */
    g_assert_cmpint(tl_server_pid(pt.server), ==, server);
    char *why = NULL;
    if (!ft_server_running(&why))
        g_error("the server is gone (%s)", why);
    g_string_free(want, TRUE);
    nr_close(c);
}

/*
 * A postmaster killed when it cannot start again (a setting PostgreSQL
 * does not know, appended to postgresql.conf): the server says that the
 * start failed, why and what to do, and keeps trying; once the setting is
 * gone it brings the cluster back.
 */
static void test_pg_cannot_restart(void)
{
    char *conf = g_build_filename(tl_server_data_dir(pt.server), "pg", "postgresql.conf", NULL);
    nr_ctx *c = pt_open(NULL);
    nr_fh fh = pt_create(c, &pt.root, "later", 0666);
    struct stat st;
    FILE *f;

    g_assert_cmpint(stat(conf, &st), ==, 0);
    char *log = tl_server_log(pt.server);
    unsigned failed = sv_count(log, "did not start in ");
    unsigned back = sv_count(log, " is back (postmaster pid ");
    g_free(log);

    /* Appended in place, so the file keeps its owner (the cluster's user). */
    f = fopen(conf, "a");
    g_assert_nonnull(f);
    fputs("\nno_such_setting_of_pgnfs = 1\n", f);
    g_assert_cmpint(fclose(f), ==, 0);
    int pm = sv_postmaster_pid();
    g_assert_cmpint(kill(pm, SIGKILL), ==, 0);
    sv_wait_log("did not start in ", failed);
    sv_wait_log("unrecognized configuration parameter \"no_such_setting_of_pgnfs\"", 0);
    sv_wait_log("what to do: correct the setting the log names in ", 0);
    sv_wait_log("next attempt to start PostgreSQL in ", 0);
    g_assert_cmpint(truncate(conf, st.st_size), ==, 0);
    sv_wait_log(" is back (postmaster pid ", back);
    sv_write_retried(c, &fh, 0, "again");
    sv_expect(c, &fh, "again");
    nr_close(c);
    g_free(conf);
}

/* The collector's files in DATA/pg/log: how many, and their bytes. */
static unsigned sv_log_files(uint64_t *bytes)
{
    char *dir = g_build_filename(tl_server_data_dir(pt.server), "pg", "log", NULL);
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    unsigned n = 0;

    *bytes = 0;
    g_assert_nonnull(d);
    while ((name = g_dir_read_name(d)) != NULL) {
        char *path = g_build_filename(dir, name, NULL);
        struct stat st;
        if (g_str_has_prefix(name, "postgresql-") && stat(path, &st) == 0) {
            n++;
            *bytes += (uint64_t)st.st_size;
        }
        g_free(path);
    }
    g_dir_close(d);
    g_free(dir);
    return n;
}

/* The name of the oldest collector file in DATA/pg/log (g_free; NULL if none). */
static char *sv_log_oldest(void)
{
    char *dir = g_build_filename(tl_server_data_dir(pt.server), "pg", "log", NULL);
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    char *oldest = NULL;

    g_assert_nonnull(d);
    while ((name = g_dir_read_name(d)) != NULL) {
        if (g_str_has_prefix(name, "postgresql-") && (!oldest || strcmp(name, oldest) < 0)) {
            g_free(oldest);
            oldest = g_strdup(name);
        }
    }
    g_dir_close(d);
    g_free(dir);
    return oldest;
}

/* Wait until the wall clock's second changes (PostgreSQL names its log
 * files by the second). */
static void sv_next_second(void)
{
    gint64 s = g_get_real_time() / G_USEC_PER_SEC;

    while (g_get_real_time() / G_USEC_PER_SEC == s)
        g_usleep(10 * 1000);
}

/*
 * PostgreSQL logs much more than its rotation size (RAISE LOG lines, 8 x
 * 512 KiB, each half in a second of its own): it starts new files by
 * itself, and the server keeps only the newest four, each about 1 MiB.
 */
static void test_pg_log_bounded(void)
{
    PGconn *pg = PQconnectdb(tl_server_conninfo(pt.server));
    char *first = sv_log_oldest();
    uint64_t bytes = 0;
    unsigned files;

    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    g_assert_nonnull(first);
    for (int round = 0; round < 8; round++) {
        sv_next_second();
        /* 500 lines of about 1 KiB each. */
        PGresult *r = PQexec(pg, "DO $$ BEGIN FOR i IN 1..500 LOOP "
                                 "RAISE LOG 'pgnfs log rotation test line %: %', i, "
                                 "repeat('x', 1000); END LOOP; END $$");
        g_assert_cmpint(PQresultStatus(r), ==, PGRES_COMMAND_OK);
        PQclear(r);
    }
    PQfinish(pg);
    /* The old files went (an event: wait for it, with a generous deadline). */
    gint64 deadline = g_get_monotonic_time() + SV_DEADLINE_S * G_USEC_PER_SEC;
    for (;;) {
        char *oldest = sv_log_oldest();
        bool gone = strcmp(oldest, first) != 0;
        files = sv_log_files(&bytes);
        g_free(oldest);
        if (gone && files <= 4)
            break;
        if (g_get_monotonic_time() > deadline)
            g_error("PostgreSQL's log still has %u files (%" G_GUINT64_FORMAT " bytes), %s among "
                    "them, after %d s",
                    files, bytes, first, SV_DEADLINE_S);
        g_usleep(50 * 1000);
    }
    g_test_message("after 4 MiB of log lines: %u files, %" G_GUINT64_FORMAT " bytes", files, bytes);
    /* Four files of at most 1 MiB and one burst's half MiB each. */
    g_assert_cmpuint(bytes, <, 4 * 1536 * 1024);
    g_free(first);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv, NULL);
    g_test_add_func("/fault/pg_log_bounded", test_pg_log_bounded);
    g_test_add_func("/fault/pg_supervise", test_pg_supervise);
    g_test_add_func("/fault/pg_cannot_restart", test_pg_cannot_restart);
    return ft_run();
}
