/*
 * test_crash.c -- kill -9 of pgnfsd in the middle of a write-heavy
 * workload, then restart, checked against an in-memory model through
 * libnfs raw calls (the NFSv3 write contract, RFC 1813 3.3.7 and 3.3.21):
 *
 *   - a byte acknowledged as stable (a WRITE whose reply says committed
 *     DATA_SYNC or FILE_SYNC, or an UNSTABLE one covered by a later
 *     successful COMMIT that returned the same verifier) is there after
 *     the crash;
 *   - data acknowledged only as UNSTABLE and never committed may be lost,
 *     but then the write verifier has changed, so the client knows to
 *     send it again; this test checks that the verifier changes across
 *     every restart, that every UNSTABLE reply of the killed server
 *     carried that server's verifier, and that each acknowledged UNSTABLE
 *     write found lost carries a verifier the restarted server does not
 *     give (so a client comparing verifiers resends it); it then resends
 *     such data as a client would, and expects it whole;
 *   - a WRITE that got no reply (in flight at the kill) happened whole or
 *     not at all (each WRITE is one transaction).
 *
 * Model: each of FT_THREADS clients owns one file of FT_SLOTS regions of
 * FT_SLOT bytes (regions cross chunk boundaries); every write puts a new
 * version (a pattern of its own) into one region. After the crash a
 * region must hold the last version known durable or one issued after it,
 * exactly, and nothing else. The cycle (workload, kill -9, restart,
 * verify, resend) runs FT_CYCLES times with seeds printed for replay
 * (PGNFS_FAULT_SEED).
 *
 * Today pgnfs makes every write durable before replying (committed is
 * FILE_SYNC); the test reads the committed field, so it holds unchanged
 * once UNSTABLE writes are buffered.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"

enum { FT_THREADS = 4, FT_SLOTS = 48, FT_SLOT = 6000, FT_CYCLES = 3, FT_VERS_MAX = 4096 };

typedef enum { V_INFLIGHT, V_UNSTABLE, V_DURABLE } ft_vstate;

typedef struct {
    uint32_t ver;
    ft_vstate state;
    uint64_t verf; /* the reply's verifier (UNSTABLE) */
} ft_version;

typedef struct {
    uint32_t base; /* the version known on disk when the cycle began */
    ft_version vers[FT_VERS_MAX];
    unsigned nvers; /* issued this cycle, in order */
} ft_slot;

typedef struct {
    unsigned index;
    nr_fh fh;
    ft_slot slots[FT_SLOTS];
    uint32_t next_ver;
    ft_rng rng;
    /* per cycle */
    unsigned writes, commits, unstable_acked, durable_acked;
    bool failed_call; /* the kill cut a call */
    char *error;      /* an unexpected answer (fails the test) */
} ft_client;

static atomic_bool ft_stop;

static uint64_t ft_key(const ft_client *c, unsigned slot, uint32_t ver)
{
    return ((uint64_t)c->index << 48) ^ ((uint64_t)slot << 32) ^ ver;
}

/* The content of version ver of a region (version 0: never written = zeros). */
static void ft_content(const ft_client *c, unsigned slot, uint32_t ver, unsigned char *buf)
{
    if (ver == 0)
        memset(buf, 0, FT_SLOT);
    else
        ft_pattern(buf, FT_SLOT, ft_key(c, slot, ver));
}

/* The client's workload until ft_stop or until a call gets no reply. */
static void *ft_client_main(void *arg)
{
    ft_client *c = arg;
    nr_ctx *ctx = nr_open(pt.port, &pt_root);
    unsigned char buf[FT_SLOT];

    if (!ctx) {
        c->error = g_strdup("cannot connect");
        return NULL;
    }
    while (!atomic_load(&ft_stop)) {
        unsigned s = (unsigned)ft_below(&c->rng, FT_SLOTS);
        ft_slot *sl = &c->slots[s];
        if (sl->nvers == FT_VERS_MAX)
            continue;
        static const stable_how modes[] = {UNSTABLE, UNSTABLE, DATA_SYNC, FILE_SYNC};
        stable_how how = modes[ft_below(&c->rng, 4)];
        ft_version *v = &sl->vers[sl->nvers++];
        v->ver = ++c->next_ver;
        v->state = V_INFLIGHT;
        ft_content(c, s, v->ver, buf);
        WRITE3res res;
        int st = nr_write(ctx, &c->fh, (uint64_t)s * FT_SLOT, buf, FT_SLOT, how, &res);
        if (st == NR_RPC_FAILED) {
            c->failed_call = true;
            break;
        }
        if (st != NFS3_OK || res.WRITE3res_u.resok.count != FT_SLOT) {
            c->error = g_strdup_printf("WRITE answered %s", nr_stat_name(st));
            break;
        }
        c->writes++;
        stable_how got = res.WRITE3res_u.resok.committed;
        if (got < how) {
            c->error = g_strdup_printf("WRITE asked %d, the reply says committed %d", how, got);
            break;
        }
        memcpy(&v->verf, res.WRITE3res_u.resok.verf, sizeof v->verf);
        v->state = got == UNSTABLE ? V_UNSTABLE : V_DURABLE;
        if (v->state == V_DURABLE)
            c->durable_acked++;
        else
            c->unstable_acked++;

        if (ft_below(&c->rng, 8) == 0) {
            COMMIT3res cr;
            st = nr_commit(ctx, &c->fh, 0, 0, &cr);
            if (st == NR_RPC_FAILED) {
                c->failed_call = true;
                break;
            }
            if (st != NFS3_OK) {
                c->error = g_strdup_printf("COMMIT answered %s", nr_stat_name(st));
                break;
            }
            c->commits++;
            uint64_t cv;
            memcpy(&cv, cr.COMMIT3res_u.resok.verf, sizeof cv);
            /* Unstable writes acknowledged with this verifier are durable. */
            for (unsigned k = 0; k < FT_SLOTS; k++)
                for (unsigned i = 0; i < c->slots[k].nvers; i++) {
                    ft_version *w = &c->slots[k].vers[i];
                    if (w->state == V_UNSTABLE && w->verf == cv)
                        w->state = V_DURABLE;
                }
        }
    }
    nr_close(ctx);
    return NULL;
}

/*
 * After a restart: every region holds the last durable version or one
 * issued after it. Returns the number of regions whose content is not the
 * last version issued (the client resends those).
 */
static unsigned ft_verify(ft_client *c, nr_ctx *ctx, uint32_t *found, uint64_t verf_killed,
                          uint64_t verf_now, unsigned *lost_unstable)
{
    unsigned char want[FT_SLOT];
    unsigned stale = 0;

    for (unsigned s = 0; s < FT_SLOTS; s++) {
        ft_slot *sl = &c->slots[s];
        READ3res rd;
        pt_ok(ctx, nr_read(ctx, &c->fh, (uint64_t)s * FT_SLOT, FT_SLOT, &rd));
        const unsigned char *got = (const unsigned char *)rd.READ3res_u.resok.data.data_val;
        unsigned n = rd.READ3res_u.resok.data.data_len;
        unsigned char full[FT_SLOT] = {0};
        memcpy(full, got, MIN(n, FT_SLOT)); /* a short read at the end is zeros */
        ft_verified_add(FT_SLOT);

        /* Candidates: the last durable version (or the base), then later ones. */
        int first = -1;
        for (int i = (int)sl->nvers - 1; i >= 0 && first < 0; i--)
            if (sl->vers[i].state == V_DURABLE)
                first = i;
        uint32_t match = UINT32_MAX;
        if (first < 0) {
            ft_content(c, s, sl->base, want);
            if (memcmp(full, want, FT_SLOT) == 0)
                match = sl->base;
        }
        for (unsigned i = first < 0 ? 0 : (unsigned)first; i < sl->nvers && match == UINT32_MAX;
             i++) {
            ft_content(c, s, sl->vers[i].ver, want);
            if (memcmp(full, want, FT_SLOT) == 0)
                match = sl->vers[i].ver;
        }
        if (match == UINT32_MAX) {
            GString *why = g_string_new(NULL);
            g_string_append_printf(why, "base %u;", sl->base);
            for (unsigned i = 0; i < sl->nvers; i++)
                g_string_append_printf(why, " v%u:%s", sl->vers[i].ver,
                                       sl->vers[i].state == V_DURABLE    ? "durable"
                                       : sl->vers[i].state == V_UNSTABLE ? "unstable"
                                                                         : "in-flight");
            g_error("client %u, region %u (bytes %u..%u): the content is no version the model "
                    "allows (a durable write lost, or a write torn): %s",
                    c->index, s, s * FT_SLOT, (s + 1) * FT_SLOT - 1, why->str);
        }
        found[s] = match;
        /* Every UNSTABLE acknowledgement came from the killed server;
         * those issued after the version found are lost, and their
         * verifier must tell the client so. */
        bool after = first < 0 && match == sl->base;
        for (unsigned i = 0; i < sl->nvers; i++) {
            const ft_version *v = &sl->vers[i];
            if (v->state == V_UNSTABLE && v->verf != verf_killed)
                g_error("client %u, region %u: WRITE v%u (UNSTABLE) carried verifier %016" PRIx64
                        ", the server's was %016" PRIx64,
                        c->index, s, v->ver, v->verf, verf_killed);
            if (after && v->state == V_UNSTABLE) {
                if (v->verf == verf_now)
                    g_error("client %u, region %u: acknowledged UNSTABLE write v%u is lost, but "
                            "the restarted server gives the same verifier %016" PRIx64
                            ": the client cannot know to resend it",
                            c->index, s, v->ver, verf_now);
                (*lost_unstable)++;
            }
            after |= v->ver == match;
        }
        uint32_t latest = sl->nvers ? sl->vers[sl->nvers - 1].ver : sl->base;
        if (match != latest)
            stale++;
        nr_arena_clear(ctx);
    }
    return stale;
}

/* Resend the latest version of every region that lacks it (FILE_SYNC, as a
 * client does after a verifier change), and make it the next base. */
static void ft_resend(ft_client *c, nr_ctx *ctx, const uint32_t *found)
{
    unsigned char buf[FT_SLOT];

    for (unsigned s = 0; s < FT_SLOTS; s++) {
        ft_slot *sl = &c->slots[s];
        uint32_t latest = sl->nvers ? sl->vers[sl->nvers - 1].ver : sl->base;
        if (found[s] != latest) {
            ft_content(c, s, latest, buf);
            pt_write(ctx, &c->fh, (uint64_t)s * FT_SLOT, buf, FT_SLOT);
        }
        sl->base = latest;
        sl->nvers = 0;
    }
}

static void test_kill9_writes(void)
{
    const char *env = getenv("PGNFS_FAULT_SEED");
    uint64_t seed = env && *env ? g_ascii_strtoull(env, NULL, 10) : (uint64_t)g_get_real_time();
    ft_client *clients = g_new0(ft_client, FT_THREADS);
    nr_ctx *c = pt_open(NULL);
    nr_fh dir = pt_fresh_dir();
    nr_fh scratch = pt_create(c, &dir, "scratch", 0666);
    ft_rng rng;
    unsigned total_writes = 0, total_commits = 0, total_resent = 0, total_lost = 0;

    g_test_message("seed %" G_GUINT64_FORMAT " (PGNFS_FAULT_SEED=%" G_GUINT64_FORMAT
                   " repeats this run)",
                   seed, seed);
    ft_rng_seed(&rng, seed);
    for (unsigned i = 0; i < FT_THREADS; i++) {
        char name[32];
        snprintf(name, sizeof name, "file%u", i);
        clients[i].index = i;
        clients[i].fh = pt_create(c, &dir, name, 0666);
        ft_rng_seed(&clients[i].rng, seed + i + 1);
    }
    nr_close(c);

    for (unsigned cycle = 0; cycle < FT_CYCLES; cycle++) {
        pthread_t th[FT_THREADS];
        c = pt_open(NULL);
        uint64_t verf_before = ft_write_verf(c, &scratch);
        nr_close(c);

        atomic_store(&ft_stop, false);
        for (unsigned i = 0; i < FT_THREADS; i++) {
            clients[i].writes = clients[i].commits = 0;
            clients[i].unstable_acked = clients[i].durable_acked = 0;
            clients[i].failed_call = false;
            g_assert_cmpint(pthread_create(&th[i], NULL, ft_client_main, &clients[i]), ==, 0);
        }
        /* Let the writes flow, then kill -9 the server under them -- the
         * server that has been running all along, not one that died. */
        g_usleep((gulong)(400000 + ft_below(&rng, 1200000)));
        char *why = NULL;
        if (!ft_server_running(&why)) {
            char *log = tl_server_log(pt.server);
            g_error("cycle %u: the server died by itself under the workload (%s); its log:\n%s",
                    cycle, why, log);
        }
        tl_server_crash_restart(pt.server);
        atomic_store(&ft_stop, true);
        for (unsigned i = 0; i < FT_THREADS; i++)
            pthread_join(th[i], NULL);

        unsigned cut = 0;
        for (unsigned i = 0; i < FT_THREADS; i++) {
            if (clients[i].error)
                g_error("client %u: %s", i, clients[i].error);
            cut += clients[i].failed_call;
            total_writes += clients[i].writes;
            total_commits += clients[i].commits;
        }

        c = pt_open(NULL);
        /* A new server instance: a new verifier, so unstable data is resent. */
        uint64_t verf_after = ft_write_verf(c, &scratch);
        g_assert_cmphex(verf_after, !=, verf_before);
        COMMIT3res cr;
        pt_ok(c, nr_commit(c, &scratch, 0, 0, &cr));
        uint64_t cv;
        memcpy(&cv, cr.COMMIT3res_u.resok.verf, sizeof cv);
        g_assert_cmphex(cv, ==, verf_after);

        unsigned stale = 0, lost = 0;
        for (unsigned i = 0; i < FT_THREADS; i++) {
            uint32_t found[FT_SLOTS];
            unsigned st = ft_verify(&clients[i], c, found, verf_before, verf_after, &lost);
            stale += st;
            total_resent += st;
            ft_resend(&clients[i], c, found);
        }
        total_lost += lost;
        g_test_message("cycle %u: %u clients were cut by the kill; %u regions behind the last "
                       "version sent (in flight or unstable), resent; %u acknowledged UNSTABLE "
                       "writes lost, each under the old verifier",
                       cycle, cut, stale, lost);
        nr_close(c);
    }

    /* A clean restart: every region holds exactly its last version. */
    g_assert_true(pt_restart());
    c = pt_open(NULL);
    uint64_t verf_last = ft_write_verf(c, &scratch);
    for (unsigned i = 0; i < FT_THREADS; i++) {
        uint32_t found[FT_SLOTS];
        unsigned lost = 0;
        g_assert_cmpuint(ft_verify(&clients[i], c, found, 0, verf_last, &lost), ==, 0);
        g_assert_cmpuint(lost, ==, 0);
    }
    nr_close(c);
    g_test_message("%u writes, %u commits over %u kill -9 cycles, %u regions resent, %u "
                   "acknowledged UNSTABLE writes lost (verifier changed), %" G_GUINT64_FORMAT
                   " bytes verified",
                   total_writes, total_commits, FT_CYCLES, total_resent, total_lost, ft_verified());
    g_assert_cmpuint(total_writes, >, 0);
    g_free(clients);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv, NULL);
    g_test_add_func("/fault/kill9_writes", test_kill9_writes);
    return ft_run();
}
