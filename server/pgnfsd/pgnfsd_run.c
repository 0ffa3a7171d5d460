/*
 * pgnfsd_run.c -- pgnfsd_run() (pgnfsd_run.h): the daemon put together. It builds
 * the programs' shared context, makes the RPC runtime, registers NFS v3
 * and MOUNT v3 with it (and, with [nlm] enable, the lock service's NLM v1,
 * v3, v4 and NSM v1: nlm4_svc.h), opens the main listener, makes the programs
 * findable through port 111 (pmap_server.h), starts the write-back
 * flusher and the metrics endpoint, runs the runtime until SIGINT or
 * SIGTERM, and takes it all down again.
 *
 *   pgnfsd_run:  setup ctx (fresh write verifier) --> runtime, programs
 *             --> main listener (fail: -1) --> registered among the file
 *             system's servers ([cache] coherence; refused: -1)
 *             --> the lock service starts
 *             (NSM state, grace period, SM_NOTIFY) --> rpcbind registration or
 *             the built-in portmapper --> flusher, snapshot thread, metrics endpoint
 *             --> "serving" line --> srv_rt_run (workers, event loop)
 *             --signal--> workers finish their calls, statistics
 *             --> the write-back flusher stores what is buffered
 *             --> metrics stop --> runtime freed --> unregistered
 *             --> lock service stopped
 *             --> rpcbind unregister
 *
 * NOTES
 *   Signals: SIGINT, SIGTERM and SIGUSR1 are blocked in the calling thread
 *   before any thread starts (threads inherit the mask) and read from a
 *   signalfd by the runtime's event loop; the caller's mask is restored
 *   at the end. SIGPIPE is ignored process-wide (sends also use
 *   MSG_NOSIGNAL).
 *   The srv_ctx and everything made here belong to pgnfsd_run; the MOUNT list
 *   (entries and strings g_malloc'd by mnt3.c) is freed here.
 *   Descriptors: the runtime points to the programs' descriptors (static)
 *   and the portmapper's (in the pmap_server, freed after the runtime).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>

#include <glib.h>

#include "mnt3_program.h"
#include "nfs3_program.h"
#include "nlm4_svc.h"
#include "nsm_program.h"
#include "exp.h"
#include "pgnfsd_flusher.h"
#include "pgnfsd_snap.h"
#include "met.h"
#include "pmap_run.h"
#include "srv_rt.h"
#include "pgnfsd_run.h"

/* Descriptors the daemon needs besides its connections (database,
 * listeners, epoll, logs, cluster). */
#define SRV_FD_RESERVE 256

/* A fresh write verifier: random, mixed with the time, never the last one. */
static void srv_write_verf(unsigned char out[8])
{
    uint64_t v = 0, t = (uint64_t)g_get_real_time();

    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
        v = ((uint64_t)g_random_int() << 32) | g_random_int();
    v ^= t * 0x9e3779b97f4a7c15ull;
    memcpy(out, &v, 8);
}

/* "10.0.0.0/8(rw,no_root_squash)" for the start-up line. */
static void srv_append_client(GString *s, const cfg_client *c)
{
    char addr[INET6_ADDRSTRLEN];

    switch (c->kind) {
    case CFG_CLIENT_ANY:
        g_string_append_c(s, '*');
        break;
    case CFG_CLIENT_NET:
        inet_ntop(c->family, c->addr, addr, sizeof addr);
        g_string_append_printf(s, "%s/%u", addr, c->prefix);
        break;
    case CFG_CLIENT_HOST:
        g_string_append(s, c->host);
        break;
    }
    g_string_append_printf(s, "(%s,%s%s%s", c->rw ? "rw" : "ro",
                           c->root_squash ? "root_squash" : "no_root_squash",
                           c->all_squash ? ",all_squash" : "", c->secure ? ",secure" : "");
    if (c->async)
        g_string_append(s, ",async");
    if (c->anonuid != 65534 || c->anongid != 65534)
        g_string_append_printf(s, ",anonuid=%u,anongid=%u", c->anonuid, c->anongid);
    g_string_append_c(s, ')');
}

static void srv_log_start(const cfg *c, const srv_ctx *ctx, unsigned port)
{
    GString *ex = g_string_new(NULL);

    for (unsigned i = 0; i < c->nexports; i++) {
        if (i)
            g_string_append(ex, "; ");
        g_string_append(ex, c->exports[i].path);
        for (unsigned k = 0; k < c->exports[i].nclients; k++) {
            g_string_append_c(ex, ' ');
            srv_append_client(ex, &c->exports[i].clients[k]);
        }
    }
    g_message("serving fsid %016" G_GINT64_MODIFIER "x on %s port %u (%s), %u worker threads, "
              "file locking %s, exports: %s",
              (guint64)ctx->info->fsid, c->listen, port, c->udp ? "tcp and udp" : "tcp", c->threads,
              c->nlm_enable ? "on (NLM, NSM)" : "off ([nlm] enable = false)", ex->str);
    g_string_free(ex, TRUE);
}

/* The runtime's admission test: does any export admit peer? */
static bool pgnfsd_run_admit(void *user, const struct sockaddr *peer, socklen_t len)
{
    return exp_admits(user, peer, len);
}

/* Raise the soft descriptor limit so max_connections can be reached. */
static void pgnfsd_run_fd_limit(const cfg *c)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)c->max_connections + SRV_FD_RESERVE + 4 * (rlim_t)c->threads;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
        g_warning("open files: the limit (%lu) allows fewer than [server] max_connections = %u "
                  "connections; raise it (ulimit -n)",
                  (unsigned long)rl.rlim_max, c->max_connections);
        want = rl.rlim_max;
    }
    rl.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        g_warning("open files: cannot raise the limit to %lu: %s", (unsigned long)want,
                  g_strerror(errno));
}

/* The context every handler shares. */
static void srv_ctx_init(srv_ctx *ctx, const cfg *c, dbfs *fs)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->cfg = c;
    ctx->fs = fs;
    ctx->info = dbfs_get_info(fs);
    srv_write_verf(ctx->write_verf);
    memset(ctx->cookie_verf, 0, sizeof ctx->cookie_verf); /* cookies never go stale */
    ctx->match_may_block = exp_match_may_block(c);
    pthread_mutex_init(&ctx->mounts_lock, NULL);
}

static void srv_ctx_clear(srv_ctx *ctx)
{
    for (exp_mount *m = ctx->mounts, *next; m; m = next) {
        next = m->next;
        g_free(m->host);
        g_free(m->path);
        g_free(m);
    }
    ctx->mounts = NULL;
    pthread_mutex_destroy(&ctx->mounts_lock);
}

/* The lock service and its two programs (NLM, NSM), with [nlm] enable. */
typedef struct {
    nlm4_svc *svc; /* NULL: locking is not served */
    srv_program nsm;
} pgnfsd_run_locks;

/* Make the lock service and register NLM and NSM with rt (nothing when
 * [nlm] enable is false). Returns 0, or -1 after logging why not. */
static int pgnfsd_run_locks_register(const cfg *c, dbfs *fs, srv_rt *rt, pgnfsd_run_locks *l)
{
    if (!c->nlm_enable)
        return 0;
    l->svc = nlm4_new(c, fs);
    if (!l->svc)
        return -1;
    nsm_program(l->svc, &l->nsm);
    if (nlm4_register(l->svc, rt) != 0 || srv_rt_register(rt, &l->nsm) != 0)
        return -1;
    return 0;
}

/* The metrics page's lock series. */
static void pgnfsd_run_lock_metrics(void *arg, GString *out)
{
    nlm4_metrics(arg, out);
}

/* The runtime with NFS and MOUNT (and NLM and NSM) on the main listener;
 * NULL after logging why not. */
static srv_rt *pgnfsd_run_runtime(const cfg *c, dbfs *fs, srv_ctx *ctx, pgnfsd_run_locks *locks,
                                  unsigned *port)
{
    const srv_rt_config rc = {.fs = fs,
                              .ctx = ctx,
                              .threads = c->threads,
                              .max_connections = c->max_connections,
                              .max_per_address = c->max_connections_per_address,
                              .drc_entries = c->drc_entries,
                              .slow_ms = c->slow_ms};
    const uint32_t progs[] = {nfs3_program.prog, mnt3_program.prog, NLM4_PROG, NSM_PROG};
    const srv_listen l = {.name = "nfs",
                          .addr = c->listen,
                          .port = c->port,
                          .udp = c->udp,
                          .progs = progs,
                          .nprogs = c->nlm_enable ? G_N_ELEMENTS(progs) : 2,
                          .admit = pgnfsd_run_admit,
                          .admit_user = (void *)c};
    const char *failed;
    srv_rt *rt = srv_rt_new(&rc);
    int err;

    if (!rt || srv_rt_register(rt, &nfs3_program) != 0 || srv_rt_register(rt, &mnt3_program) != 0 ||
        pgnfsd_run_locks_register(c, fs, rt, locks) != 0) {
        srv_rt_free(rt);
        return NULL;
    }
    if ((err = srv_rt_listen(rt, &l, port, &failed)) != 0) {
        g_critical(
            "cannot listen on %s port %u (%s): %s%s", c->listen, c->port, failed, g_strerror(-err),
            err != -EADDRINUSE           ? ""
            : strcmp(failed, "udp") == 0 ? " (set [server] udp = false to serve TCP only)"
                                         : " (another NFS server? choose a port with --port)");
        srv_rt_free(rt);
        return NULL;
    }
    if (c->port == 0)
        g_message("port 0 configured: picked free port %u", *port);
    return rt;
}

/* Register among the file system's servers ([cache] coherence), once
 * the listener holds the port. Returns 0, or -1 after logging why not. */
static int pgnfsd_run_frontend(const cfg *c, dbfs *fs, unsigned port)
{
    const dbfs_frontend_self self = {
        .address = c->listen, .port = port, .shared = strcmp(c->coherence, "shared") == 0};
    char *why = NULL;

    if (dbfs_frontend_start(fs, &self, &why) == 0)
        return 0;
    g_critical("cannot start: %s", why ? why : "cannot register among the file system's servers");
    g_free(why);
    return -1;
}

int pgnfsd_run(const cfg *c, dbfs *fs)
{
    srv_ctx ctx;
    srv_rt *rt = NULL;
    pmap_server *pm = NULL;
    met *metrics = NULL;
    pgnfsd_flusher *flusher = NULL;
    pgnfsd_snap *snap = NULL;
    pgnfsd_run_locks locks = {0};
    sigset_t mask, old;
    unsigned port = 0;
    int rc = -1;

    if (log_setup(c->log_level) != 0)
        g_warning("unknown [log] level '%s': keeping the current one", c->log_level);
    srv_ctx_init(&ctx, c, fs);
    pgnfsd_run_fd_limit(c);
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &mask, &old);

    rt = pgnfsd_run_runtime(c, fs, &ctx, &locks, &port);
    if (!rt || pgnfsd_run_frontend(c, fs, port) != 0 ||
        (locks.svc && nlm4_start(locks.svc, port) != 0) ||
        pmap_start(rt, c, port, c->udp, &pm) != 0 ||
        met_start(c, rt, fs, locks.svc ? pgnfsd_run_lock_metrics : NULL, locks.svc, &metrics) != 0)
        goto out;
    flusher = pgnfsd_flusher_start(fs, c);
    snap = pgnfsd_snap_start(fs, c);
    srv_log_start(c, &ctx, port);
    rc = srv_rt_run(rt);
out:
    pgnfsd_snap_stop(snap);
    pgnfsd_flusher_stop(flusher);
    met_stop(metrics);
    srv_rt_free(rt);
    dbfs_frontend_stop(fs);
    nlm4_free(locks.svc);
    pmap_stop(pm);
    srv_ctx_clear(&ctx);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        g_message("stopped");
    return rc;
}
