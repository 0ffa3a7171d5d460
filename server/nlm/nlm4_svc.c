/*
 * nlm4_svc.c -- the lock service's life cycle (nlm4_svc.h): made with its
 * descriptors and outgoing client, registered, started as this server
 * (its NSM state and grace period from the database, SM_NOTIFY to the
 * hosts it monitors), stopped; a host's reboot; its metrics.
 *
 *   nlm4_new --> nlm4_register --> nlm4_start: watch connection, server
 *   start in the database, notifications sent (in the background), the
 *   background thread --> ... --> nlm4_free: background thread stopped,
 *   outgoing calls cancelled, connection closed
 *
 * Hosts are known by the caller_name their lock manager sends (monitoring,
 * FREE_ALL and SM_NOTIFY match by that name, as Linux's lockd does with
 * nsm_use_hostnames); callbacks and notifications go to the address a
 * host's requests came from. SM_NOTIFY names us as the address the host
 * reached us on (what a Linux client's statd monitors us by), or by our
 * server name when that is unknown.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nlm4_int.h"
#include "nsm.h" /* the XDR types (rpc/nsm.x) */

/* Outgoing calls pending at once, and to one host. */
#define NLM4_OUT_PENDING  1024
#define NLM4_OUT_PER_HOST 64
/* Log lines about failed calls per host and second. */
#define NLM4_LOG_PER_SECOND 2

/* nlm4_new -- see nlm4_svc.h. */
nlm4_svc *nlm4_new(const cfg *c, dbfs *fs)
{
    srv_client_opts o = {.max_pending = NLM4_OUT_PENDING, .max_per_host = NLM4_OUT_PER_HOST};
    nlm4_svc *s = g_new0(nlm4_svc, 1);

    s->cfg = c;
    s->fs = fs;
    s->wake_fd = -1;
    s->renew_watch = -1;
    g_strlcpy(s->name,
              c->nlm_server_name && *c->nlm_server_name ? c->nlm_server_name : g_get_host_name(),
              sizeof s->name);
    s->ls.max_waiters_host = c->nlm_max_waiters_host;
    s->ls.max_waiters = c->nlm_max_waiters;
    s->rl = log_ratelimit_new(NLM4_LOG_PER_SECOND);
    g_mutex_init(&s->retry_lock);
    g_queue_init(&s->retry);
    nlm4_programs(s, s->progs);
    s->client = srv_client_new(&o);
    if (!s->client) {
        nlm4_free(s);
        return NULL;
    }
    return s;
}

/* nlm4_register -- see nlm4_svc.h. */
int nlm4_register(nlm4_svc *s, srv_rt *rt)
{
    for (int i = 0; i < 3; i++) {
        int rc = srv_rt_register(rt, &s->progs[i]);

        if (rc != 0)
            return rc;
    }
    return 0;
}

/* nlm4_programs_of -- see nlm4_svc.h. */
const srv_program *nlm4_programs_of(const nlm4_svc *s)
{
    return s->progs;
}

/* The socket address of numeric text addr (port 0); its length, 0 if none. */
static socklen_t nlm4_sockaddr(const char *addr, struct sockaddr_storage *out)
{
    struct sockaddr_in *s4 = (struct sockaddr_in *)out;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)out;

    memset(out, 0, sizeof *out);
    if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        return sizeof *s4;
    }
    if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        return sizeof *s6;
    }
    return 0;
}

/* SM_NOTIFY to every host the server monitored before it restarted. */
static void nlm4_notify_hosts(nlm4_svc *s, const dbfs_lock_start_res *st)
{
    for (size_t i = 0; i < st->nhosts; i++) {
        const dbfs_lock_host *h = &st->hosts[i];
        struct sockaddr_storage to, local;
        socklen_t tolen = nlm4_sockaddr(h->addr, &to);
        socklen_t llen = nlm4_sockaddr(h->local, &local);
        const char *me = h->local[0] ? h->local : s->name;
        stat_chge args = {.mon_name = {(u_int)strlen(me), (char *)me}, .state = st->state};
        nlm4_out *o;

        if (tolen == 0)
            continue;
        o = nlm4_out_new(s, (struct sockaddr *)&to, tolen, (struct sockaddr *)&local, llen, false,
                         SM_PROG, SM_VERS, SM_NOTIFY, (xdrproc_t)xdr_stat_chge, &args, "SM_NOTIFY");
        if (o)
            nlm4_out_send(o);
    }
}

/* nlm4_start -- see nlm4_svc.h. */
int nlm4_start(nlm4_svc *s, unsigned port)
{
    dbfs_lock_start_res st;
    int rc;

    s->port = port;
    /* Several servers of one file system may share a host: unless named,
     * a shared-coherence server's lock manager is host:port. */
    if (!(s->cfg->nlm_server_name && *s->cfg->nlm_server_name) && s->cfg->coherence &&
        strcmp(s->cfg->coherence, "shared") == 0)
        g_snprintf(s->name, sizeof s->name, "%s:%u", g_get_host_name(), port);
    rc = dbfs_lock_watch_open(s->fs, &s->watch);
    if (rc == 0)
        rc =
            dbfs_lock_server_start(dbfs_lock_watch_conn(s->watch), s->name, s->cfg->nlm_grace, &st);
    if (rc != 0) {
        g_critical("nlm: cannot start the lock manager: %s", g_strerror(-rc));
        return -1;
    }
    s->ls.srv = st.srv;
    atomic_store(&s->state, st.state);
    if (st.grace_ms)
        atomic_store(&s->grace_until_us,
                     g_get_monotonic_time() + (int64_t)st.grace_ms * (G_USEC_PER_SEC / 1000));
    g_message("nlm: lock manager \"%s\", NSM state %d; %s; telling %zu host%s of the restart",
              s->name, (int)st.state,
              st.grace_ms ? "grace period: only reclaims until the locks held before are back"
                          : "no grace period",
              st.nhosts, st.nhosts == 1 ? "" : "s");
    if (st.grace_ms)
        g_message("nlm: the grace period ends in %" G_GUINT64_FORMAT " s at the latest",
                  (st.grace_ms + 999) / 1000);
    nlm4_notify_hosts(s, &st);
    dbfs_lock_start_free(&st);
    return nlm4_bg_start(s) == 0 ? 0 : -1;
}

/* nlm4_free -- see nlm4_svc.h. */
void nlm4_free(nlm4_svc *s)
{
    if (!s)
        return;
    nlm4_bg_stop(s);
    srv_client_free(s->client); /* pending calls end here, -ECANCELED */
    nlm4_bg_stop(s);            /* what their failures queued */
    dbfs_lock_watch_close(s->watch);
    if (s->wake_fd >= 0)
        close(s->wake_fd);
    g_mutex_clear(&s->retry_lock);
    log_ratelimit_free(s->rl);
    g_free(s);
}

/* nlm4_state -- see nlm4_svc.h. */
int32_t nlm4_state(const nlm4_svc *s)
{
    return atomic_load(&s->state);
}

/* nlm4_host_rebooted -- see nlm4_svc.h. */
int nlm4_host_rebooted(nlm4_svc *s, srv_req *req, const void *name, size_t len, int32_t state,
                       bool all)
{
    dbfs_lock_result res;
    int rc;

    if (!req->db) {
        srv_req_drop(req);
        return -EAGAIN;
    }
    rc = dbfs_lock_free_host(req->db, &s->ls, name, len, all, state, &res);
    if (rc == -EAGAIN) {
        srv_req_drop(req);
        return rc;
    }
    if (rc != 0) {
        srv_req_complain(req, "cannot free the locks of a rebooted host: %s", g_strerror(-rc));
        return rc;
    }
    g_debug("nlm: host %.*s rebooted (state %d): its locks are freed", (int)MIN(len, 255),
            (const char *)name, (int)state);
    nlm4_grant_calls(s, &res);
    dbfs_lock_result_free(&res);
    return 0;
}

/* nlm4_metrics -- see nlm4_svc.h. */
void nlm4_metrics(nlm4_svc *s, GString *out)
{
    int64_t until = atomic_load(&s->grace_until_us), now = g_get_monotonic_time();
    double left = until > now ? (double)(until - now) / G_USEC_PER_SEC : 0;

    g_string_append_printf(
        out,
        "# HELP pgnfs_nlm_locks File locks in the database, every server's (sampled every 5 s).\n"
        "# TYPE pgnfs_nlm_locks gauge\n"
        "pgnfs_nlm_locks{state=\"held\"} %" G_GUINT64_FORMAT "\n"
        "pgnfs_nlm_locks{state=\"waiting\"} %" G_GUINT64_FORMAT "\n"
        "# HELP pgnfs_nlm_grace_seconds Seconds left in this server's grace period (0: none).\n"
        "# TYPE pgnfs_nlm_grace_seconds gauge\npgnfs_nlm_grace_seconds %.3f\n"
        "# HELP pgnfs_nlm_grace_active 1 while this server grants only reclaims.\n"
        "# TYPE pgnfs_nlm_grace_active gauge\npgnfs_nlm_grace_active %d\n"
        "# HELP pgnfs_nlm_nsm_state This server's NSM state number.\n"
        "# TYPE pgnfs_nlm_nsm_state gauge\npgnfs_nlm_nsm_state %d\n"
        "# HELP pgnfs_nlm_grants_total Blocked lock requests of this server granted.\n"
        "# TYPE pgnfs_nlm_grants_total counter\npgnfs_nlm_grants_total %" G_GUINT64_FORMAT "\n",
        (uint64_t)atomic_load(&s->held), (uint64_t)atomic_load(&s->waiting), left,
        until != 0 ? 1 : 0, (int)atomic_load(&s->state), (uint64_t)atomic_load(&s->grants));
    g_string_append_printf(
        out,
        "# HELP pgnfs_nlm_callbacks_total Calls to clients (GRANTED, *_RES) by outcome.\n"
        "# TYPE pgnfs_nlm_callbacks_total counter\n"
        "pgnfs_nlm_callbacks_total{result=\"sent\"} %" G_GUINT64_FORMAT "\n"
        "pgnfs_nlm_callbacks_total{result=\"failed\"} %" G_GUINT64_FORMAT "\n"
        "pgnfs_nlm_callbacks_total{result=\"self\"} %" G_GUINT64_FORMAT "\n"
        "pgnfs_nlm_callbacks_total{result=\"refused\"} %" G_GUINT64_FORMAT "\n"
        "pgnfs_nlm_callbacks_total{result=\"retried\"} %" G_GUINT64_FORMAT "\n"
        "# HELP pgnfs_nsm_notify_total SM_NOTIFY calls to monitored hosts by outcome.\n"
        "# TYPE pgnfs_nsm_notify_total counter\n"
        "pgnfs_nsm_notify_total{result=\"sent\"} %" G_GUINT64_FORMAT "\n"
        "pgnfs_nsm_notify_total{result=\"failed\"} %" G_GUINT64_FORMAT "\n",
        (uint64_t)atomic_load(&s->cb_sent), (uint64_t)atomic_load(&s->cb_failed),
        (uint64_t)atomic_load(&s->cb_self), (uint64_t)atomic_load(&s->cb_refused),
        (uint64_t)atomic_load(&s->cb_retried), (uint64_t)atomic_load(&s->notify_sent),
        (uint64_t)atomic_load(&s->notify_failed));
}
