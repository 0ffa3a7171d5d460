/*
 * srv_run.c -- srv_run() (srv.h): builds the server context, opens the
 * listeners, starts the workers, registers with rpcbind, runs the event
 * loop until SIGINT/SIGTERM, and takes it all down again.
 *
 *   srv_run:  setup ctx (fresh write verifier) --> bind (fail: -1)
 *             --> workers, write-back flusher (srv_flusher.c)
 *             --> rpcbind registration or the built-in portmapper
 *             (srv_portmap.c), metrics endpoint (srv_metrics.c)
 *             --> "serving" line --> event loop
 *             --signal--> workers finish their calls --> join
 *             --> the write-back flusher stores what is buffered
 *             --> metrics, portmapper stop --> rpcbind unregister
 *             --> statistics --> close --> 0
 *
 * NOTES
 *   Signals: SIGINT, SIGTERM and SIGUSR1 are blocked in the calling thread
 *   before any thread starts (threads inherit the mask) and read from a
 *   signalfd by the event loop; the caller's mask is restored at the end.
 *   SIGPIPE is ignored process-wide (sends also use MSG_NOSIGNAL).
 *   The srv_server and everything in it belong to srv_run; the MOUNT list
 *   (entries and strings g_malloc'd by mnt3.c) is freed here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "srv_int.h"

/* How many lines about one misbehaving client per second. */
#define SRV_LOG_PER_CLIENT 5

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
    if (c->anonuid != 65534 || c->anongid != 65534)
        g_string_append_printf(s, ",anonuid=%u,anongid=%u", c->anonuid, c->anongid);
    g_string_append_c(s, ')');
}

static void srv_log_start(const srv_server *s)
{
    const cfg *c = s->cfg;
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
              "exports: %s",
              (guint64)s->ctx.info->fsid, c->listen, s->port,
              s->udp_fd >= 0 ? "tcp and udp" : "tcp", s->nworkers, ex->str);
    g_string_free(ex, TRUE);
}

int srv_run(const cfg *c, dbfs *fs)
{
    srv_server *s = g_new0(srv_server, 1);
    srv_rpcbind rb = {0};
    srv_portmap *pm = NULL;
    srv_metrics *metrics = NULL;
    srv_flusher *flusher = NULL;
    sigset_t mask, old;
    unsigned nprogs;
    int rc = -1;

    if (log_setup(c->log_level) != 0)
        g_warning("unknown [log] level '%s': keeping the current one", c->log_level);
    s->cfg = c;
    s->idle_timeout_s = SRV_IDLE_TIMEOUT_S;
    s->epfd = s->tcp_fd = s->udp_fd = s->sig_fd = s->wake_fd = -1;
    s->ctx.cfg = c;
    s->ctx.fs = fs;
    s->ctx.info = dbfs_get_info(fs);
    srv_write_verf(s->ctx.write_verf);
    memset(s->ctx.cookie_verf, 0, sizeof s->ctx.cookie_verf); /* cookies never go stale */
    pthread_mutex_init(&s->ctx.mounts_lock, NULL);
    nprogs = srv_programs_default(s->progs);
    srv_stats_init(&s->stats, s->progs, nprogs);
    s->rl = log_ratelimit_new(SRV_LOG_PER_CLIENT);
    s->env = (srv_env){
        .ctx = &s->ctx,
        .progs = s->progs,
        .nprogs = nprogs,
        .drc = c->drc_entries ? srv_drc_new(c->drc_entries) : NULL,
        .stats = &s->stats,
        .rl = s->rl,
    };
    atomic_init(&s->udp_pending, 0);
    atomic_init(&s->workers_running, 0);

    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &mask, &old);

    if (srv_transport_open(s) != 0)
        goto out;
    if (c->port == 0)
        g_message("port 0 configured: picked free port %u", s->port);
    if (srv_workers_start(s) != 0)
        goto join;
    flusher = srv_flusher_start(fs, c);
    /* rpcbind registration or the built-in portmapper; the metrics endpoint. */
    if (srv_portmap_start(s, &rb, &pm) != 0 || srv_metrics_start(s, &metrics) != 0)
        goto join;
    srv_log_start(s);
    srv_transport_loop(s);
    rc = 0;
join:
    srv_workers_join(s);
    srv_flusher_stop(flusher);
    srv_metrics_stop(metrics);
    srv_portmap_stop(pm);
    srv_rpcbind_unregister(&rb);
    srv_stats_log(&s->stats, "shutdown");
out:
    srv_transport_close(s);
    for (srv_mount *m = s->ctx.mounts, *next; m; m = next) {
        next = m->next;
        g_free(m->host);
        g_free(m->path);
        g_free(m);
    }
    pthread_mutex_destroy(&s->ctx.mounts_lock);
    srv_drc_free(s->env.drc);
    log_ratelimit_free(s->rl);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        g_message("stopped");
    g_free(s);
    return rc;
}
