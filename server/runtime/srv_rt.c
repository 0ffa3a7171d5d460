/*
 * srv_rt.c -- the runtime put together (srv_rt.h): the registered
 * programs and what dispatch shares (srv_env), the statistics, the
 * duplicate request cache, the transport (srv_transport.h) and the
 * workers (srv_worker.h).
 *
 *   srv_rt_run:  workers start (fail: -1) --> event loop until a stop
 *                signal --> workers finish and exit --> statistics logged
 *
 * NOTES
 *   A srv_rt owns everything in it; descriptors and the ctx are the
 *   caller's. The per-client log limiter is shared by dispatch, the
 *   handlers (srv_req_complain) and the transport.
 */
#include <errno.h>
#include <string.h>

#include "srv_rt.h"
#include "srv_transport.h"

/* How many lines about one misbehaving client per second. */
#define SRV_LOG_PER_CLIENT 5

struct srv_rt {
    srv_env env;
    srv_stats stats;
    srv_transport *t;
    srv_workers *workers;
    unsigned threads;
};

srv_rt *srv_rt_new(const srv_rt_config *c)
{
    srv_rt *rt = g_new0(srv_rt, 1);

    srv_stats_init(&rt->stats);
    rt->env.ctx = c->ctx;
    rt->env.drc = c->drc_entries ? srv_drc_new(c->drc_entries) : NULL;
    rt->env.stats = &rt->stats;
    rt->env.rl = log_ratelimit_new(SRV_LOG_PER_CLIENT);
    rt->env.slow_ms = c->slow_ms;
    rt->threads = c->threads ? c->threads : 1;
    rt->t = srv_transport_new(c->max_connections, c->max_per_address, &rt->stats, rt->env.rl);
    if (!rt->t) {
        srv_rt_free(rt);
        return NULL;
    }
    rt->workers = srv_workers_new(rt->threads, c->fs, &rt->env, srv_transport_wake, rt->t);
    rt->t->workers = rt->workers;
    rt->t->env = &rt->env;
    rt->t->udp_queue_max = rt->threads * SRV_UDP_QUEUE_PER_WORKER;
    return rt;
}

/* The registered versions of the program numbers l serves, as a mask. */
static void srv_rt_mask(srv_rt *rt, srv_listener *l)
{
    l->progs = 0;
    for (unsigned k = 0; k < l->nprognums; k++)
        for (unsigned i = 0; i < rt->env.nprogs; i++)
            if (rt->env.progs[i]->prog == l->prognums[k])
                l->progs |= 1u << i;
}

int srv_rt_register(srv_rt *rt, const srv_program *p)
{
    int idx = srv_env_register(&rt->env, p);

    if (idx < 0) {
        g_critical("cannot register program %s (%u version %u): %s", p->name ? p->name : "?",
                   p->prog, p->vers, g_strerror(-idx));
        return idx;
    }
    for (unsigned k = 0; k < rt->t->nlisteners; k++)
        srv_rt_mask(rt, rt->t->listeners[k]);
    return 0;
}

int srv_rt_listen(srv_rt *rt, const srv_listen *spec, unsigned *port, const char **failed)
{
    int err;
    srv_listener *l = srv_listen_add(rt->t, spec, port, failed, &err);

    if (l)
        srv_rt_mask(rt, l);
    return err;
}

void srv_rt_mappings(const srv_rt *rt, srv_rt_mapping_fn fn, void *user)
{
    for (unsigned k = 0; k < rt->t->nlisteners; k++) {
        const srv_listener *l = rt->t->listeners[k];
        for (unsigned i = 0; i < rt->env.nprogs; i++) {
            if (!(l->progs & (1u << i)))
                continue;
            fn(user, rt->env.progs[i], true, l->port);
            if (l->udp_fd >= 0)
                fn(user, rt->env.progs[i], false, l->port);
        }
    }
}

int srv_rt_run(srv_rt *rt)
{
    int rc = 0;

    if (srv_workers_start(rt->workers) == 0)
        srv_transport_loop(rt->t);
    else
        rc = -1;
    srv_workers_join(rt->workers);
    srv_stats_log(&rt->stats, "shutdown");
    return rc;
}

void srv_rt_metrics(srv_rt *rt, GString *out)
{
    srv_stats_metrics(&rt->stats, out);
    g_string_append_printf(out,
                           "# HELP pgnfs_workers Worker threads, each with one database "
                           "connection.\n"
                           "# TYPE pgnfs_workers gauge\n"
                           "pgnfs_workers %u\n"
                           "# HELP pgnfs_calls_in_progress Calls queued for or running on a "
                           "worker.\n"
                           "# TYPE pgnfs_calls_in_progress gauge\n"
                           "pgnfs_calls_in_progress %u\n"
                           "# HELP pgnfs_drc_entries Replies held by the duplicate request "
                           "cache.\n"
                           "# TYPE pgnfs_drc_entries gauge\n"
                           "pgnfs_drc_entries %u\n",
                           rt->threads, srv_workers_pending(rt->workers),
                           rt->env.drc ? srv_drc_count(rt->env.drc) : 0);
}

void srv_rt_free(srv_rt *rt)
{
    if (!rt)
        return;
    srv_workers_free(rt->workers);
    if (rt->t)
        rt->t->workers = NULL;
    srv_transport_free(rt->t);
    srv_drc_free(rt->env.drc);
    log_ratelimit_free(rt->env.rl);
    srv_stats_clear(&rt->stats);
    g_free(rt);
}
