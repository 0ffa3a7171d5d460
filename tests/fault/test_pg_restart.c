/*
 * test_pg_restart.c -- PostgreSQL stopped and restarted under load: while
 * the database is away the server answers NFS3ERR_JUKEBOX (never another
 * error, never silence), reconnects by itself when it is back, and the
 * workload completes with its data intact.
 *
 * What must answer JUKEBOX is a call that needs the database: the probe
 * is a FILE_SYNC WRITE (durable before the reply, so never answered from
 * memory). A GETATTR may be answered from the stat cache while the
 * database is away, and the workload accepts that.
 *
 * Four clients write, read back and stat regions of their own files and
 * create and remove names, retrying a JUKEBOX answer after a pause as an
 * NFS client does. The database is stopped twice: a fast shutdown (its
 * sessions are terminated) and an immediate one (a crash: recovery on
 * start). Afterwards every file must equal the model exactly, every call
 * must have been answered, and the server process must be the one that
 * started (it reconnected; nobody restarted it).
 *
 * The server runs with [embedded] restart = false, so the outages last as
 * long as the test makes them (fault/pg_supervise covers the server
 * restarting its cluster itself); it still says, at error level, that the
 * database stopped.
 *
 * /fault/pg_restart_prompt: once the database answers again, no call
 * waits for a worker to find out that its connection died with the old
 * PostgreSQL: after each restart (fast and immediate stop), clients that
 * start then see no JUKEBOX at all. And a MOUNT that comes while the
 * database is away is not refused (MNT3ERR_IO would end a mount): it gets
 * no answer, and the client's next attempt, after the database is back,
 * gets the real one. Every wait is for an event (pg_ctl -w, a log line, a
 * reply), with a generous deadline.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"

enum { PR_THREADS = 4, PR_SLOTS = 32, PR_SLOT = 5000, PR_OUTAGE_MS = 3000 };

typedef struct {
    unsigned index;
    nr_fh dir, fh;
    uint32_t ver[PR_SLOTS]; /* the version each region holds (0: zeros) */
    uint32_t next_ver;
    ft_rng rng;
    unsigned calls, jukebox, ops;
    char *error;
} pr_client;

static atomic_bool pr_stop;

static uint64_t pr_key(const pr_client *c, unsigned slot, uint32_t ver)
{
    return ((uint64_t)c->index << 40) ^ ((uint64_t)slot << 24) ^ ver;
}

/*
 * After each attempt of a call: count it; on JUKEBOX pause 100 ms (as
 * clients do), note it in *jb, and return true to try again.
 */
static bool pr_again(pr_client *c, int st, bool *jb)
{
    c->calls++;
    if (st != NFS3ERR_JUKEBOX)
        return false;
    c->jukebox++;
    *jb = true;
    g_usleep(100000);
    return true;
}

static bool pr_fail(pr_client *c, const char *what, int st)
{
    c->error = g_strdup_printf("%s answered %s", what, nr_stat_name(st));
    return false;
}

/* One random operation; false (with c->error) on a wrong answer. */
static bool pr_op(pr_client *c, nr_ctx *ctx, unsigned char *buf, unsigned char *want)
{
    unsigned s = (unsigned)ft_below(&c->rng, PR_SLOTS);
    bool jb = false;
    int st;

    switch (ft_below(&c->rng, 5)) {
    case 0:
    case 1: { /* write a new version of a region */
        uint32_t v = ++c->next_ver;
        WRITE3res res;
        ft_pattern(buf, PR_SLOT, pr_key(c, s, v));
        do
            st = nr_write(ctx, &c->fh, (uint64_t)s * PR_SLOT, buf, PR_SLOT, FILE_SYNC, &res);
        while (pr_again(c, st, &jb));
        if (st != NFS3_OK)
            return pr_fail(c, "WRITE", st);
        c->ver[s] = v;
        return true;
    }
    case 2: { /* read a region back */
        READ3res rd;
        do
            st = nr_read(ctx, &c->fh, (uint64_t)s * PR_SLOT, PR_SLOT, &rd);
        while (pr_again(c, st, &jb));
        if (st != NFS3_OK)
            return pr_fail(c, "READ", st);
        memset(want, 0, PR_SLOT);
        if (c->ver[s])
            ft_pattern(want, PR_SLOT, pr_key(c, s, c->ver[s]));
        unsigned n = rd.READ3res_u.resok.data.data_len;
        if (n > PR_SLOT || memcmp(rd.READ3res_u.resok.data.data_val, want, n) != 0 ||
            (n < PR_SLOT && memcmp(want + n, (unsigned char[PR_SLOT]){0}, PR_SLOT - n) != 0)) {
            c->error = g_strdup_printf("region %u does not hold version %u", s, c->ver[s]);
            return false;
        }
        ft_verified_add(PR_SLOT);
        nr_arena_clear(ctx);
        return true;
    }
    case 3: { /* create a name, then remove it */
        char name[32];
        snprintf(name, sizeof name, "n%u", s);
        sattr3 sa = nr_sattr_mode(0644);
        do
            st = nr_create(ctx, &c->dir, name, UNCHECKED, &sa, NULL, NULL);
        while (pr_again(c, st, &jb));
        if (st != NFS3_OK)
            return pr_fail(c, "CREATE", st);
        jb = false;
        do
            st = nr_remove(ctx, &c->dir, name, NULL);
        while (pr_again(c, st, &jb));
        /* A REMOVE whose first attempt met the database going away may
         * have committed before the connection was cut: NOENT then. */
        if (st != NFS3_OK && !(jb && st == NFS3ERR_NOENT))
            return pr_fail(c, "REMOVE", st);
        nr_arena_clear(ctx);
        return true;
    }
    default: { /* attributes */
        GETATTR3res ga;
        do
            st = nr_getattr(ctx, &c->fh, &ga);
        while (pr_again(c, st, &jb));
        if (st != NFS3_OK)
            return pr_fail(c, "GETATTR", st);
        return true;
    }
    }
}

static void *pr_client_main(void *arg)
{
    pr_client *c = arg;
    nr_ctx *ctx = nr_open(pt.port, &pt_root);
    unsigned char *buf = g_malloc(PR_SLOT), *want = g_malloc(PR_SLOT);

    if (!ctx) {
        c->error = g_strdup("cannot connect");
        return NULL;
    }
    while (!atomic_load(&pr_stop) && pr_op(c, ctx, buf, want))
        c->ops++;
    if (!c->error && nr_error(ctx)[0])
        c->error = g_strdup(nr_error(ctx));
    nr_close(ctx);
    g_free(buf);
    g_free(want);
    return NULL;
}

/* A call that needs the database: a FILE_SYNC WRITE of one byte. */
static int pr_probe(nr_ctx *c, const nr_fh *probe)
{
    return nr_write(c, probe, 0, "p", 1, FILE_SYNC, NULL);
}

/* Seconds until the probe answers NFS3_OK again (polling every 50 ms). */
static double pr_time_to_service(const nr_fh *probe)
{
    nr_ctx *c = pt_open(NULL);
    gint64 t0 = g_get_monotonic_time();

    for (;;) {
        int st = pr_probe(c, probe);
        if (st == NFS3_OK)
            break;
        pt_stat(c, st, NFS3ERR_JUKEBOX);
        g_assert_cmpint(g_get_monotonic_time() - t0, <, 60 * G_USEC_PER_SEC);
        g_usleep(50000);
    }
    nr_close(c);
    return (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
}

static void test_pg_restart(void)
{
    const char *env = getenv("PGNFS_FAULT_SEED");
    uint64_t seed = env && *env ? g_ascii_strtoull(env, NULL, 10) : (uint64_t)g_get_real_time();
    pr_client *clients = g_new0(pr_client, PR_THREADS);
    pthread_t th[PR_THREADS];
    int pid = tl_server_pid(pt.server);
    nr_ctx *c = pt_open(NULL);
    nr_fh probe = pt_create(c, &pt.root, "probe", 0666);

    g_test_message("seed %" G_GUINT64_FORMAT, seed);
    for (unsigned i = 0; i < PR_THREADS; i++) {
        char name[32];
        snprintf(name, sizeof name, "pr%u-%d", i, (int)getpid());
        clients[i].index = i;
        clients[i].dir = pt_mkdir(c, &pt.root, name, 0777);
        clients[i].fh = pt_create(c, &clients[i].dir, "data", 0666);
        ft_rng_seed(&clients[i].rng, seed + i);
    }
    atomic_store(&pr_stop, false);
    for (unsigned i = 0; i < PR_THREADS; i++)
        g_assert_cmpint(pthread_create(&th[i], NULL, pr_client_main, &clients[i]), ==, 0);

    const char *stops[] = {"stop", "stop-immediate"};
    for (size_t k = 0; k < G_N_ELEMENTS(stops); k++) {
        g_usleep(1000000);
        g_assert_cmpint(tl_server_pg_ctl(pt.server, stops[k]), ==, 0);
        /* While the database is away: JUKEBOX, promptly. */
        gint64 t0 = g_get_monotonic_time();
        pt_stat(c, pr_probe(c, &probe), NFS3ERR_JUKEBOX);
        g_assert_cmpint(g_get_monotonic_time() - t0, <, 5 * G_USEC_PER_SEC);
        g_usleep(PR_OUTAGE_MS * 1000);
        pt_stat(c, nr_write(c, &clients[0].fh, 0, "x", 1, FILE_SYNC, NULL), NFS3ERR_JUKEBOX);
        g_assert_cmpint(tl_server_pg_ctl(pt.server, "start"), ==, 0);
        double back = pr_time_to_service(&probe);
        g_test_message("pg_ctl %s: service back %.2f s after the database started", stops[k], back);
        g_assert_cmpfloat(back, <, 15.0);
    }
    g_usleep(1500000);
    atomic_store(&pr_stop, true);
    unsigned calls = 0, jukebox = 0, ops = 0;
    for (unsigned i = 0; i < PR_THREADS; i++) {
        pthread_join(th[i], NULL);
        if (clients[i].error)
            g_error("client %u: %s", i, clients[i].error);
        calls += clients[i].calls;
        jukebox += clients[i].jukebox;
        ops += clients[i].ops;
    }
    g_test_message("%u operations, %u calls, %u answered JUKEBOX", ops, calls, jukebox);
    g_assert_cmpuint(jukebox, >, 0);

    /* Every region holds its last version; the server never restarted. */
    unsigned char *want = g_malloc(PR_SLOT);
    for (unsigned i = 0; i < PR_THREADS; i++) {
        for (unsigned s = 0; s < PR_SLOTS; s++) {
            READ3res rd;
            pt_ok(c, nr_read(c, &clients[i].fh, (uint64_t)s * PR_SLOT, PR_SLOT, &rd));
            memset(want, 0, PR_SLOT);
            if (clients[i].ver[s])
                ft_pattern(want, PR_SLOT, pr_key(&clients[i], s, clients[i].ver[s]));
            unsigned n = rd.READ3res_u.resok.data.data_len;
            g_assert_cmpmem(rd.READ3res_u.resok.data.data_val, n, want, n);
            ft_verified_add(PR_SLOT);
            nr_arena_clear(c);
        }
    }
    g_free(want);
    g_assert_cmpint(tl_server_pid(pt.server), ==, pid);
    /* Each outage was reported as an error, with what to do. */
    char *log = tl_server_log(pt.server);
    g_assert_nonnull(strstr(log, "ERROR pgnfs-embed: PostgreSQL in "));
    g_assert_nonnull(strstr(log, "[embedded] restart is false: not starting it again"));
    g_free(log);
    char *why = NULL;
    if (!ft_server_running(&why))
        g_error("the server is gone (%s): it should have reconnected by itself", why);
    nr_close(c);
    g_free(clients);
}

/* --- no JUKEBOX once the database is back ------------------------------- */

enum { PP_CLIENTS = 4, PP_WRITES = 8, PP_DEADLINE_S = 120 };

typedef struct {
    nr_fh fh;
    unsigned jukebox;
    char *error;
} pp_client;

/* PP_WRITES FILE_SYNC writes of a fresh connection, each retried while it
 * answers JUKEBOX (as clients do), counting those answers. */
static void *pp_client_main(void *arg)
{
    pp_client *c = arg;
    nr_ctx *ctx = nr_open(pt.port, &pt_root);
    gint64 deadline = g_get_monotonic_time() + PP_DEADLINE_S * G_USEC_PER_SEC;

    if (!ctx) {
        c->error = g_strdup("cannot connect");
        return NULL;
    }
    for (unsigned i = 0; i < PP_WRITES && !c->error; i++) {
        int st;
        while ((st = nr_write(ctx, &c->fh, 16 * i, "sixteen bytes..!", 16, FILE_SYNC, NULL)) ==
                   NFS3ERR_JUKEBOX &&
               g_get_monotonic_time() < deadline) {
            c->jukebox++;
            g_usleep(100000);
        }
        if (st != NFS3_OK)
            c->error = g_strdup_printf("WRITE answered %s", nr_stat_name(st));
    }
    nr_close(ctx);
    return NULL;
}

/* Wait until the server's log holds needle (deadline PP_DEADLINE_S). */
static void pp_wait_log(const char *needle)
{
    gint64 deadline = g_get_monotonic_time() + PP_DEADLINE_S * G_USEC_PER_SEC;

    for (;;) {
        char *log = tl_server_log(pt.server);
        bool seen = strstr(log, needle) != NULL;
        if (!seen && g_get_monotonic_time() > deadline)
            g_error("the server did not log '%s' within %d s; its log:\n%s", needle, PP_DEADLINE_S,
                    log);
        g_free(log);
        if (seen)
            return;
        g_usleep(50 * 1000);
    }
}

/* A raw MNT call of path with the given xid (the reply is read by the caller). */
static void pp_send_mnt(int fd, uint32_t xid, const char *path)
{
    GByteArray *rec = g_byte_array_new();

    nr_xdr_call(rec, xid, NR_MOUNT_PROGRAM, 3, 1, &pt_root);
    nr_xdr_string(rec, path);
    g_assert_cmpint(nr_raw_send(fd, rec->data, rec->len), ==, 0);
    g_byte_array_unref(rec);
}

static void test_pg_restart_prompt(void)
{
    const char *stops[] = {"stop", "stop-immediate"};
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_mkdir(c, &pt.root, "prompt", 0777);
    pp_client clients[PP_CLIENTS];

    for (unsigned i = 0; i < PP_CLIENTS; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%u", i);
        memset(&clients[i], 0, sizeof clients[i]);
        clients[i].fh = pt_create(c, &dir, name, 0666);
    }
    for (size_t k = 0; k < G_N_ELEMENTS(stops); k++) {
        /* A path no cache knows: MNT must ask the database. */
        char *path = g_strdup_printf("/absent-%d-%zu", (int)getpid(), k);
        char *said = g_strdup_printf("asked for \"%s\" while the database is away", path);
        uint32_t xid = 0x5e000000u + 2 * (uint32_t)k;
        int fd = nr_raw_connect(pt.port);
        nr_reply rep;

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(tl_server_pg_ctl(pt.server, stops[k]), ==, 0);
        pp_send_mnt(fd, xid, path);
        pp_wait_log(said);
        g_assert_cmpint(tl_server_pg_ctl(pt.server, "start"), ==, 0);

        /* The database answers again. The client's MNT, sent again: its
         * answer is the first this connection gets (the first call got
         * none), and it is the real one. */
        pp_send_mnt(fd, xid + 1, path);
        GByteArray *reply = nr_raw_recv(fd, PP_DEADLINE_S * 1000);
        g_assert_nonnull(reply);
        g_assert_true(nr_reply_parse(reply, &rep));
        g_assert_cmphex(rep.xid, ==, xid + 1);
        g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
        g_assert_cmpuint(nr_get_u32(reply, rep.body), ==, MNT3ERR_NOENT);
        g_byte_array_unref(reply);
        close(fd);

        /* Writes from clients that start now: not one JUKEBOX. */
        pthread_t th[PP_CLIENTS];
        unsigned jukebox = 0;
        for (unsigned i = 0; i < PP_CLIENTS; i++)
            g_assert_cmpint(pthread_create(&th[i], NULL, pp_client_main, &clients[i]), ==, 0);
        for (unsigned i = 0; i < PP_CLIENTS; i++) {
            pthread_join(th[i], NULL);
            if (clients[i].error)
                g_error("after pg_ctl %s: client %u: %s", stops[k], i, clients[i].error);
            jukebox += clients[i].jukebox;
            clients[i].jukebox = 0;
        }
        g_test_message("after pg_ctl %s and start: %u writes, %u JUKEBOX answers", stops[k],
                       PP_CLIENTS * PP_WRITES, jukebox);
        g_assert_cmpuint(jukebox, ==, 0);
        g_free(said);
        g_free(path);
    }
    nr_close(c);
}

int main(int argc, char **argv)
{
    const char *const settings[] = {"embedded.restart=false", NULL};

    ft_init(&argc, &argv, settings);
    g_test_add_func("/fault/pg_restart", test_pg_restart);
    g_test_add_func("/fault/pg_restart_prompt", test_pg_restart_prompt);
    return ft_run();
}
