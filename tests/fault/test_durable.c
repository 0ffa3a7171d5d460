/*
 * test_durable.c -- kill -9 of PostgreSQL, and of pgnfs, under a stream of
 * changes of every kind, on a sync export and on an exports(5) async one:
 *
 *   - sync export ("/"): every change whose success reply arrived (CREATE,
 *     WRITE FILE_SYNC, SETATTR, a COMMIT after an UNSTABLE WRITE, RENAME,
 *     REMOVE) is there after either kill and the restart;
 *   - async export ("/fast"), pgnfs killed: nothing acknowledged is lost
 *     either (the changes committed; PostgreSQL lives on);
 *   - async export, PostgreSQL killed: what is lost is the last changes
 *     only -- what survives of each client's stream is a prefix of it,
 *     but for the data of an UNSTABLE write pgnfs still held (see
 *     dt_verify) -- and every change acknowledged before PostgreSQL
 *     reported its WAL flushed past that point survives; the test
 *     measures how long that flush took after the changes were
 *     acknowledged (the window the README documents: 3 x wal_writer_delay)
 *     and how old the oldest lost change was at the kill, and prints both;
 *   - every time: `pgnfs fsck` finds the file system consistent.
 *
 * Model: each client (a thread, a connection, a directory of its own)
 * makes files f0, f1, ... one change at a time: CREATE fI; WRITE fI
 * FILE_SYNC (version 2I+1); SETATTR fI mode; WRITE fI UNSTABLE (version
 * 2I+2) and COMMIT; RENAME fI gI; REMOVE g(I-3). The state after the
 * first k changes of a stream is known exactly; after the restart the
 * directory must show the state after some k between what must survive
 * and what was sent (the call cut by the kill may have happened whole,
 * or not at all) -- or, when PostgreSQL alone was killed and the cut
 * change is a WRITE UNSTABLE + COMMIT, that state with the file's data
 * of that write (dt_verify says why).
 *
 * No timing assumption: the kill comes once every client has had a
 * number of changes acknowledged (an event), the flush point is waited
 * for in pg_current_wal_flush_lsn(), and service after a restart in an
 * answered FSSTAT, each with a generous deadline.
 */
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "fault.h"

enum {
    DT_CLIENTS = 4,
    DT_BEFORE_KILL = 36, /* changes each client has acknowledged before the kill */
    DT_MAX_CHANGES = 4096,
    DT_LEN = 3000, /* bytes of a version */
    DT_DEADLINE_S = 120,
};

typedef enum { C_CREATE, C_WRITE, C_SETATTR, C_COMMIT, C_RENAME, C_REMOVE, C_KINDS } dt_kind;

static const char *const dt_kind_names[] = {
    "CREATE", "WRITE FILE_SYNC", "SETATTR", "WRITE UNSTABLE + COMMIT", "RENAME", "REMOVE"};

/* Change n of a client's stream: the file (index), and what it does. */
static dt_kind dt_change_kind(unsigned n)
{
    return (dt_kind)(n % C_KINDS);
}

static unsigned dt_change_file(unsigned n)
{
    return n / C_KINDS;
}

static uint32_t dt_mode(unsigned file)
{
    return 0600 + file % 8;
}

typedef struct {
    unsigned index;
    nr_fh dir;
    unsigned sent;  /* changes sent (the last may have no reply) */
    unsigned acked; /* changes whose success reply arrived */
    double ack_time[DT_MAX_CHANGES];
    char *error;
} dt_client;

static dt_client dt_clients[DT_CLIENTS];
static atomic_uint dt_ready; /* clients past DT_BEFORE_KILL acknowledged changes */
static atomic_bool dt_stop;

static double dt_now(void)
{
    return (double)g_get_monotonic_time() / 1e6;
}

static void dt_content(const dt_client *c, uint32_t version, unsigned char *buf)
{
    ft_pattern(buf, DT_LEN, ((uint64_t)c->index << 40) ^ version);
}

/* Make change n; NFS3_OK, a status, or NR_RPC_FAILED. */
static int dt_change(dt_client *c, nr_ctx *ctx, unsigned n)
{
    unsigned i = dt_change_file(n);
    char f[32], g[32];
    unsigned char buf[DT_LEN];
    WRITE3res w;
    int st;

    snprintf(f, sizeof f, "f%u", i);
    snprintf(g, sizeof g, "g%u", i);
    switch (dt_change_kind(n)) {
    case C_CREATE: {
        sattr3 sa = nr_sattr_mode(0644);
        return nr_create(ctx, &c->dir, f, GUARDED, &sa, NULL, NULL);
    }
    case C_WRITE:
    case C_COMMIT: {
        LOOKUP3res l;
        bool sync = dt_change_kind(n) == C_WRITE;
        st = nr_lookup(ctx, &c->dir, f, &l);
        if (st != NFS3_OK)
            return st;
        nr_fh fh = nr_fh_from(&l.LOOKUP3res_u.resok.object);
        dt_content(c, 2 * i + (sync ? 1 : 2), buf);
        st = nr_write(ctx, &fh, 0, buf, DT_LEN, sync ? FILE_SYNC : UNSTABLE, &w);
        if (st != NFS3_OK || sync)
            return st;
        return nr_commit(ctx, &fh, 0, 0, NULL);
    }
    case C_SETATTR: {
        LOOKUP3res l;
        sattr3 sa = nr_sattr_mode(dt_mode(i));
        st = nr_lookup(ctx, &c->dir, f, &l);
        if (st != NFS3_OK)
            return st;
        nr_fh fh = nr_fh_from(&l.LOOKUP3res_u.resok.object);
        return nr_setattr(ctx, &fh, &sa, NULL, NULL);
    }
    case C_RENAME:
        return nr_rename(ctx, &c->dir, f, &c->dir, g, NULL);
    case C_REMOVE:
        if (i < 3)
            return NFS3_OK; /* nothing to remove yet: a change that changes nothing */
        snprintf(g, sizeof g, "g%u", i - 3);
        return nr_remove(ctx, &c->dir, g, NULL);
    default:
        return NFS3ERR_SERVERFAULT;
    }
}

/* A client's stream until the kill cuts it (or dt_stop). */
static void *dt_client_main(void *arg)
{
    dt_client *c = arg;
    nr_ctx *ctx = nr_open(pt.port, &pt_root);

    if (!ctx) {
        c->error = g_strdup("cannot connect");
        return NULL;
    }
    while (!atomic_load(&dt_stop) && c->sent < DT_MAX_CHANGES) {
        unsigned n = c->sent++;
        int st = dt_change(c, ctx, n);

        nr_arena_clear(ctx);
        if (st == NR_RPC_FAILED || st == NFS3ERR_JUKEBOX)
            break; /* cut by the kill: this change may or may not have happened */
        if (st != NFS3_OK) {
            c->error = g_strdup_printf("change %u (%s of f%u) answered %s", n,
                                       dt_kind_names[dt_change_kind(n)], dt_change_file(n),
                                       nr_stat_name(st));
            break;
        }
        c->ack_time[n] = dt_now();
        c->acked = n + 1;
        if (c->acked == DT_BEFORE_KILL)
            atomic_fetch_add(&dt_ready, 1);
    }
    nr_close(ctx);
    return NULL;
}

/* What a name holds in the model: absent, or a file's mode and version. */
typedef struct {
    bool exists;
    uint32_t mode;
    uint32_t version; /* 0: empty */
} dt_file;

/* The state of names f<i> and g<i> (i < files) after the first k changes. */
static void dt_model(unsigned k, unsigned files, dt_file *f, dt_file *g)
{
    memset(f, 0, files * sizeof *f);
    memset(g, 0, files * sizeof *g);
    for (unsigned n = 0; n < k; n++) {
        unsigned i = dt_change_file(n);
        switch (dt_change_kind(n)) {
        case C_CREATE:
            f[i] = (dt_file){.exists = true, .mode = 0644};
            break;
        case C_WRITE:
            f[i].version = 2 * i + 1;
            break;
        case C_SETATTR:
            f[i].mode = dt_mode(i);
            break;
        case C_COMMIT:
            f[i].version = 2 * i + 2;
            break;
        case C_RENAME:
            g[i] = f[i];
            f[i].exists = false;
            break;
        case C_REMOVE:
            if (i >= 3)
                g[i - 3].exists = false;
            break;
        default:
            break;
        }
    }
}

/* What the server shows of name, which file `file` may have: its mode and
 * the version it holds (one of the file's two, or UINT32_MAX: bytes of no
 * version). */
static dt_file dt_observe(const dt_client *c, nr_ctx *ctx, const char *name, unsigned file)
{
    LOOKUP3res l;
    int st = nr_lookup(ctx, &c->dir, name, &l);
    dt_file o = {0};

    if (st == NFS3ERR_NOENT)
        return o;
    pt_ok(ctx, st);
    nr_fh fh = nr_fh_from(&l.LOOKUP3res_u.resok.object);
    fattr3 a = pt_getattr(ctx, &fh);
    o.exists = true;
    o.mode = a.mode & 07777;
    o.version = UINT32_MAX;
    if (a.size == 0) {
        o.version = 0;
    } else if (a.size == DT_LEN) {
        READ3res rd;
        unsigned char want[DT_LEN];
        pt_ok(ctx, nr_read(ctx, &fh, 0, DT_LEN, &rd));
        g_assert_cmpuint(rd.READ3res_u.resok.data.data_len, ==, DT_LEN);
        ft_verified_add(DT_LEN);
        for (uint32_t v = 2 * file + 1; v <= 2 * file + 2 && o.version == UINT32_MAX; v++) {
            dt_content(c, v, want);
            if (memcmp(want, rd.READ3res_u.resok.data.data_val, DT_LEN) == 0)
                o.version = v;
        }
    }
    return o;
}

static bool dt_same(const dt_file *a, const dt_file *b)
{
    return a->exists == b->exists &&
           (!a->exists || (a->mode == b->mode && a->version == b->version));
}

/* Does the observed directory (of, og) show the model (mf, mg)? */
static bool dt_matches(unsigned files, const dt_file *of, const dt_file *og, const dt_file *mf,
                       const dt_file *mg)
{
    for (unsigned i = 0; i < files; i++)
        if (!dt_same(&of[i], &mf[i]) || !dt_same(&og[i], &mg[i]))
            return false;
    return true;
}

/*
 * The client's directory after the restart: the state after k changes,
 * for some k between must (the changes that must have survived) and
 * sent. Returns that k (*by_kept: whether it took the allowance below);
 * fails the test (naming what differs) otherwise.
 *
 * kept (pgnfs lived on, PostgreSQL was killed): the change cut by the
 * kill may be a WRITE UNSTABLE + COMMIT whose WRITE pgnfs buffered and
 * whose COMMIT found the database away. pgnfs keeps that data (its write
 * verifier stays the same, so a client would not send it again) and
 * stores it once PostgreSQL is back -- on top of whatever survived,
 * which on an async export may be short of the changes acknowledged just
 * before (the SETATTR, the WRITE FILE_SYNC of the same file). An UNSTABLE
 * write may reach storage at any time before its COMMIT (RFC 1813
 * 3.3.7), and a client that saw the verifier change would send it again
 * onto the same state, so that is a state the server may show: the state
 * after k changes in which the file written, if it exists, holds the
 * data of that write. Only that file, only that version: a change lost
 * before an acknowledged one still fails, and so does a half-done one.
 * Where k >= sent - 1 (all acknowledged changes survive: a sync export)
 * the allowance is the state after sent changes, nothing new.
 */
static unsigned dt_verify(dt_client *c, unsigned must, bool kept, bool *by_kept)
{
    unsigned files = dt_change_file(c->sent) + 1;
    dt_file *of = g_new0(dt_file, files), *og = g_new0(dt_file, files);
    dt_file *mf = g_new0(dt_file, files), *mg = g_new0(dt_file, files);
    nr_ctx *ctx = pt_open(NULL);
    char name[32];
    unsigned entries = 0;
    int found = -1;
    /* The file whose UNSTABLE data pgnfs may have kept, if any. */
    bool held = kept && c->sent > 0 && dt_change_kind(c->sent - 1) == C_COMMIT;
    unsigned hf = held ? dt_change_file(c->sent - 1) : 0;

    *by_kept = false;
    for (unsigned i = 0; i < files; i++) {
        snprintf(name, sizeof name, "f%u", i);
        of[i] = dt_observe(c, ctx, name, i);
        snprintf(name, sizeof name, "g%u", i);
        og[i] = dt_observe(c, ctx, name, i);
        entries += of[i].exists + og[i].exists;
        nr_arena_clear(ctx);
    }
    /* Nothing else in the directory. */
    READDIR3res rd;
    unsigned listed = 0;
    pt_ok(ctx, nr_readdir(ctx, &c->dir, 0, NULL, 65536, &rd));
    g_assert_true(rd.READDIR3res_u.resok.reply.eof);
    GString *names = g_string_new(NULL);
    for (entry3 *e = rd.READDIR3res_u.resok.reply.entries; e; e = e->nextentry)
        if (strcmp(e->name, ".") != 0 && strcmp(e->name, "..") != 0) {
            listed++;
            g_string_append_printf(names, " %s", e->name);
        }
    if (listed != entries)
        g_error("client %u: READDIR lists %u names (%s ), LOOKUP finds %u of f0..f%u, g0..g%u",
                c->index, listed, names->str, entries, files - 1, files - 1);
    g_string_free(names, TRUE);
    nr_close(ctx);

    for (unsigned k = c->sent + 1; k-- > must && found < 0;) {
        dt_model(k, files, mf, mg);
        if (dt_matches(files, of, og, mf, mg)) {
            found = (int)k;
        } else if (held && mf[hf].exists && mf[hf].version != 2 * hf + 2) {
            mf[hf].version = 2 * hf + 2;
            if (dt_matches(files, of, og, mf, mg)) {
                found = (int)k;
                *by_kept = true;
            }
        }
    }
    if (found < 0) {
        GString *s = g_string_new(NULL);
        dt_model(c->acked, files, mf, mg);
        for (unsigned i = 0; i < files; i++)
            g_string_append_printf(s,
                                   " f%u %s%o/v%u (model %s%o/v%u), g%u %s%o/v%u (model %s%o/v%u);",
                                   i, of[i].exists ? "" : "absent ", of[i].mode, of[i].version,
                                   mf[i].exists ? "" : "absent ", mf[i].mode, mf[i].version, i,
                                   og[i].exists ? "" : "absent ", og[i].mode, og[i].version,
                                   mg[i].exists ? "" : "absent ", mg[i].mode, mg[i].version);
        g_error("client %u: the directory is the state after no prefix of its changes between %u "
                "(must have survived) and %u (sent); %u acknowledged:%s",
                c->index, must, c->sent, c->acked, s->str);
    }
    g_free(of);
    g_free(og);
    g_free(mf);
    g_free(mg);
    return (unsigned)found;
}

/* The postmaster of the server's cluster, from DATA/pg/postmaster.pid. */
static pid_t dt_postmaster(void)
{
    char *path = g_build_filename(tl_server_data_dir(pt.server), "pg", "postmaster.pid", NULL);
    char *text = NULL;
    pid_t pid = 0;

    if (g_file_get_contents(path, &text, NULL, NULL))
        pid = (pid_t)atoi(text);
    g_free(text);
    g_free(path);
    if (pid <= 0)
        g_error("no postmaster.pid in the server's cluster");
    return pid;
}

/* kill -9 of the whole cluster at once: the postmaster and every child. */
static void dt_kill_postgres(void)
{
    pid_t pm = dt_postmaster();
    GArray *pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
    DIR *d = opendir("/proc");
    struct dirent *e;

    g_assert_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        char path[64], *stat = NULL;
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        if (g_file_get_contents(path, &stat, NULL, NULL)) {
            const char *p = strrchr(stat, ')'); /* "pid (comm) S ppid ..." */
            int ppid = 0;
            if (p && sscanf(p + 2, "%*c %d", &ppid) == 1 && ppid == (int)pm)
                g_array_append_val(pids, pid);
        }
        g_free(stat);
    }
    closedir(d);
    kill(pm, SIGKILL);
    for (guint i = 0; i < pids->len; i++)
        kill(g_array_index(pids, pid_t, i), SIGKILL);
    g_test_message("kill -9 of PostgreSQL: the postmaster %d and %u children", (int)pm, pids->len);
    g_array_free(pids, TRUE);
}

/* Wait until the server answers a call that needs the database. */
static void dt_wait_service(void)
{
    double deadline = dt_now() + DT_DEADLINE_S;

    for (;;) {
        nr_ctx *ctx = nr_open(pt.port, &pt_root);
        int st = ctx ? nr_fsstat(ctx, &pt.root, NULL) : NR_RPC_FAILED;
        if (ctx)
            nr_close(ctx);
        if (st == NFS3_OK)
            return;
        if (dt_now() > deadline)
            g_error("the server does not serve again within %d s of the kill (last: %s)",
                    DT_DEADLINE_S, nr_stat_name(st));
        g_usleep(100000);
    }
}

/* A session on the server's database (for the WAL positions). */
static PGconn *dt_db(void)
{
    PGconn *db = PQconnectdb(tl_server_conninfo(pt.server));

    if (PQstatus(db) != CONNECTION_OK)
        g_error("cannot connect to the server's database: %s", PQerrorMessage(db));
    return db;
}

static char *dt_db_value(PGconn *db, const char *sql)
{
    PGresult *r = PQexec(db, sql);
    char *v;

    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        g_error("%s: %s", sql, PQerrorMessage(db));
    v = g_strdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    return v;
}

/* Who is killed; for PostgreSQL under an async export, whether the test
 * first waits for the WAL flush point (else it only measures the loss). */
typedef enum { DT_KILL_POSTGRES, DT_KILL_POSTGRES_AT_ONCE, DT_KILL_PGNFS } dt_victim;

/*
 * One case: clients in fresh directories under export root `root`
 * (async: an async export), the victim killed once each client has
 * DT_BEFORE_KILL changes acknowledged, the restart, the checks.
 */
static void dt_run(const nr_fh *root, bool async, dt_victim victim)
{
    pthread_t th[DT_CLIENTS];
    unsigned flushed[DT_CLIENTS] = {0}; /* acknowledged before the flush point */
    double t_flush_wait = 0, t_kill;
    nr_ctx *c = pt_open(NULL);
    static unsigned run;
    char name[32];

    run++;
    for (unsigned i = 0; i < DT_CLIENTS; i++) {
        memset(&dt_clients[i], 0, sizeof dt_clients[i]);
        dt_clients[i].index = i;
        snprintf(name, sizeof name, "run%u.%u", run, i);
        dt_clients[i].dir = pt_mkdir(c, root, name, 0777);
    }
    nr_close(c);
    atomic_store(&dt_ready, 0);
    atomic_store(&dt_stop, false);
    for (unsigned i = 0; i < DT_CLIENTS; i++)
        g_assert_cmpint(pthread_create(&th[i], NULL, dt_client_main, &dt_clients[i]), ==, 0);
    /* The event: every client has had its first changes acknowledged. */
    double deadline = dt_now() + DT_DEADLINE_S;
    while (atomic_load(&dt_ready) < DT_CLIENTS) {
        for (unsigned i = 0; i < DT_CLIENTS; i++)
            if (dt_clients[i].error)
                g_error("client %u: %s", i, dt_clients[i].error);
        if (dt_now() > deadline)
            g_error("the clients did not make %d changes each within %d s", DT_BEFORE_KILL,
                    DT_DEADLINE_S);
        g_usleep(2000);
    }
    if (async && victim == DT_KILL_POSTGRES) {
        /* Everything acknowledged before this WAL position must survive
         * once PostgreSQL reports it flushed -- which it does by itself,
         * the WAL writer's job: wait for that, and measure it. */
        PGconn *db = dt_db();
        for (unsigned i = 0; i < DT_CLIENTS; i++)
            flushed[i] = dt_clients[i].acked;
        double t0 = dt_now();
        char *lsn = dt_db_value(db, "SELECT pg_current_wal_insert_lsn()");
        char *q = g_strdup_printf("SELECT pg_current_wal_flush_lsn() >= '%s'::pg_lsn", lsn);
        for (;;) {
            char *v = dt_db_value(db, q);
            bool done = strcmp(v, "t") == 0;
            g_free(v);
            if (done)
                break;
            if (dt_now() > t0 + DT_DEADLINE_S)
                g_error("PostgreSQL did not flush its WAL past %s within %d s", lsn, DT_DEADLINE_S);
            g_usleep(1000);
        }
        t_flush_wait = dt_now() - t0;
        g_free(q);
        g_free(lsn);
        PQfinish(db);
    }
    t_kill = dt_now();
    if (victim != DT_KILL_PGNFS) {
        dt_kill_postgres();
    } else {
        char *why = NULL;
        if (!ft_server_running(&why))
            g_error("the server died by itself under the workload: %s", why);
        tl_server_crash_restart(pt.server);
    }
    for (unsigned i = 0; i < DT_CLIENTS; i++)
        pthread_join(th[i], NULL);
    dt_wait_service();

    unsigned lost = 0, acked = 0, kept = 0;
    double oldest_lost = 0;
    for (unsigned i = 0; i < DT_CLIENTS; i++) {
        dt_client *cl = &dt_clients[i];
        if (cl->error)
            g_error("client %u: %s", i, cl->error);
        /* What must survive: everything acknowledged, but for PostgreSQL
         * killed under an async export, what was flushed. */
        unsigned must = !async || victim == DT_KILL_PGNFS ? cl->acked : flushed[i];
        bool by_kept;
        unsigned k = dt_verify(cl, must, victim != DT_KILL_PGNFS, &by_kept);
        kept += by_kept;
        acked += cl->acked;
        if (k < cl->acked) {
            lost += cl->acked - k;
            oldest_lost = MAX(oldest_lost, t_kill - cl->ack_time[k]);
        }
    }
    g_test_message("%s export, kill -9 of %s: %u changes acknowledged, %u of them lost%s",
                   async ? "async" : "sync", victim == DT_KILL_PGNFS ? "pgnfs" : "PostgreSQL",
                   acked, lost, !async || victim == DT_KILL_PGNFS ? " (none may be)" : "");
    if (kept)
        g_test_message("%u clients: the data of the cut UNSTABLE write, kept by pgnfs while "
                       "PostgreSQL was away, stored after the restart onto what survived",
                       kept);
    if (async && victim == DT_KILL_POSTGRES)
        g_test_message("the WAL writer flushed what was acknowledged %.3f s after; the oldest "
                       "change lost was acknowledged %.3f s before the kill",
                       t_flush_wait, oldest_lost);
    if (async && victim == DT_KILL_POSTGRES_AT_ONCE)
        g_test_message("killed at once: the oldest change lost was acknowledged %.3f s before "
                       "the kill (the window: 3 x wal_writer_delay at most)",
                       oldest_lost);

    char *out = NULL;
    const char *args[] = {"fsck", "--conninfo", tl_server_conninfo(pt.server), NULL};
    int rc = ft_pgnfs(&out, args);
    if (rc != 0)
        g_error("pgnfs fsck after the kill: exit %d:\n%s", rc, out);
    g_free(out);
}

static nr_fh dt_fast;

static void test_sync_postgres(void)
{
    dt_run(&pt.root, false, DT_KILL_POSTGRES);
}

static void test_sync_pgnfs(void)
{
    dt_run(&pt.root, false, DT_KILL_PGNFS);
}

static void test_async_pgnfs(void)
{
    dt_run(&dt_fast, true, DT_KILL_PGNFS);
}

/* Four times, two of them without waiting for the flush point first:
 * the figures of the window vary from kill to kill. */
static void test_async_postgres(void)
{
    for (int i = 0; i < 4; i++)
        dt_run(&dt_fast, true, i % 2 ? DT_KILL_POSTGRES_AT_ONCE : DT_KILL_POSTGRES);
}

int main(int argc, char **argv)
{
    const char *const settings[] = {"exports./fast=127.0.0.1(rw,async,no_root_squash)", NULL};

    ft_init(&argc, &argv, settings);
    if (pt.server) {
        nr_ctx *c = pt_open(NULL);
        nr_ctx *m = pt_open_mount(NULL);
        pt_mkdir(c, &pt.root, "fast", 0777);
        if (nr_mnt(m, "/fast", NULL, &dt_fast) != MNT3_OK)
            g_error("MOUNT /fast failed: %s", nr_error(m));
        nr_close(m);
        nr_close(c);
    }
    g_test_add_func("/durable/sync-kill-postgres", test_sync_postgres);
    g_test_add_func("/durable/sync-kill-pgnfs", test_sync_pgnfs);
    g_test_add_func("/durable/async-kill-pgnfs", test_async_pgnfs);
    g_test_add_func("/durable/async-kill-postgres", test_async_postgres);
    return ft_run();
}
