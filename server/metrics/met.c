/*
 * met.c -- the optional metrics endpoint: GET /metrics answers
 * the server's figures in the Prometheus text exposition format (version
 * 0.0.4), served by libmicrohttpd on [metrics] listen and port (off by
 * default: [metrics] enable). `pgnfs stats` reads the same page.
 *
 * What the page holds (names are stable; labels in braces):
 *
 *   pgnfs_build_info{version}                       1
 *   pgnfs_uptime_seconds                            since start
 *   pgnfs_rpc_calls_total{prog,proc}                calls, replays included
 *   pgnfs_rpc_errors_total{prog,proc}               RPC-level error replies
 *   pgnfs_rpc_drc_hits_total{prog,proc}             duplicate request cache replays
 *   pgnfs_db_round_trips_total{prog,proc}           database round trips
 *   pgnfs_rpc_quick_total{prog,proc}                answered on the event thread
 *   pgnfs_rpc_duration_seconds{prog,proc} histogram latency (procedures called)
 *   pgnfs_rpc_events_total{event}                   bad calls, PROG_UNAVAIL, ...
 *   pgnfs_nfs3_replies_total{status}                NFSv3 replies by status
 *   pgnfs_db_connected                              gauge: last call had a connection
 *   pgnfs_workers                                   worker threads (= connections)
 *   pgnfs_calls_in_progress                         calls queued or running
 *   pgnfs_drc_entries                               replies held by the DRC
 *   pgnfs_cache_*{cache}                            cache figures (met_caches)
 *   pgnfs_writeback_*                               write-back buffer (met_writeback)
 *   pgnfs_frontend_*                                this server among several (met_frontend)
 *   pgnfs_export_info{path,client,access,mode}      1 per client entry of an export:
 *                                                   access rw|ro, mode sync|async
 *
 * Any other path answers 404 with a pointer to /metrics; methods other
 * than GET and HEAD answer 405.
 *
 * NOTES
 *   libmicrohttpd runs its own thread (MHD_USE_INTERNAL_POLLING_THREAD),
 *   started after the signal mask of pgnfsd_run is in place, so it inherits
 *   the blocked SIGINT/SIGTERM/SIGUSR1. The handler only reads atomics and
 *   immutable server state; each page is built in a GString per request
 *   and handed to libmicrohttpd, which frees it (MHD_RESPMEM_MUST_FREE;
 *   the buffer is malloc'd for that).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "met.h"

struct met {
    struct MHD_Daemon *daemon;
    const cfg *cfg;
    srv_rt *rt;
    dbfs *fs;
    met_fn more; /* NULL: none */
    void *more_arg;
    unsigned port; /* the port actually bound */
};

/*
 * met_caches -- the cache figures, one series per cache (label
 * cache="stat", "naming", "buffer", ...), from dbfs_cache_stats: hits,
 * misses, inserts, evictions, invalidations, refused fills, waits for
 * another request's fetch (counters);
 * entries, capacity, enabled (gauges).
 */
static void met_caches(dbfs *fs, GString *out)
{
    dbfs_cache_figures f[DBFS_CACHES_MAX];
    unsigned n = dbfs_cache_stats(fs, f, DBFS_CACHES_MAX);
    static const struct {
        const char *name, *type, *help;
        size_t offset; /* of a uint64_t in dbfs_cache_figures */
    } series[] = {
        {"pgnfs_cache_hits_total", "counter", "Lookups the cache answered.",
         offsetof(dbfs_cache_figures, hits)},
        {"pgnfs_cache_misses_total", "counter", "Lookups that went to the database.",
         offsetof(dbfs_cache_figures, misses)},
        {"pgnfs_cache_inserts_total", "counter", "Entries filled.",
         offsetof(dbfs_cache_figures, inserts)},
        {"pgnfs_cache_evictions_total", "counter", "Entries dropped for room.",
         offsetof(dbfs_cache_figures, evictions)},
        {"pgnfs_cache_invalidations_total", "counter", "Entries dropped by changes.",
         offsetof(dbfs_cache_figures, invalidations)},
        {"pgnfs_cache_refused_total", "counter",
         "Fills dropped because a concurrent change made them stale.",
         offsetof(dbfs_cache_figures, refused)},
        {"pgnfs_cache_waits_total", "counter",
         "Lookups that waited for another request's fetch of the same data.",
         offsetof(dbfs_cache_figures, waits)},
        {"pgnfs_cache_entries", "gauge", "What the cache holds (entries, or bytes).",
         offsetof(dbfs_cache_figures, entries)},
        {"pgnfs_cache_capacity", "gauge", "What the cache may hold (entries, or bytes).",
         offsetof(dbfs_cache_figures, capacity)},
    };

    for (size_t k = 0; k < G_N_ELEMENTS(series); k++) {
        g_string_append_printf(out, "# HELP %s %s\n# TYPE %s %s\n", series[k].name, series[k].help,
                               series[k].name, series[k].type);
        for (unsigned i = 0; i < n; i++)
            g_string_append_printf(out, "%s{cache=\"%s\"} %" G_GUINT64_FORMAT "\n", series[k].name,
                                   f[i].name,
                                   *(const uint64_t *)((const char *)&f[i] + series[k].offset));
    }
    g_string_append(out, "# HELP pgnfs_cache_enabled 1 when the cache is switched on.\n"
                         "# TYPE pgnfs_cache_enabled gauge\n");
    for (unsigned i = 0; i < n; i++)
        g_string_append_printf(out, "pgnfs_cache_enabled{cache=\"%s\"} %d\n", f[i].name,
                               f[i].enabled ? 1 : 0);
}

/*
 * met_writeback -- the write-back buffer of UNSTABLE writes, from
 * dbfs_wb_figures: enabled, limit, bytes and files held now, the age of
 * the oldest data held (gauges); writes buffered, writes refused for room,
 * flushes, bytes flushed, flushes failed for good (counters). All zero
 * but the limit when the buffer is off.
 */
static void met_writeback(dbfs *fs, GString *out)
{
    dbfs_wb_stats w;
    static const struct {
        const char *name, *type, *help;
        size_t offset; /* of a uint64_t in dbfs_wb_stats */
    } series[] = {
        {"pgnfs_writeback_limit_bytes", "gauge", "Bytes the write-back buffer may hold.",
         offsetof(dbfs_wb_stats, limit)},
        {"pgnfs_writeback_bytes", "gauge",
         "Bytes of UNSTABLE writes held, not yet in the database (the backlog).",
         offsetof(dbfs_wb_stats, bytes)},
        {"pgnfs_writeback_files", "gauge", "Files with data held.", offsetof(dbfs_wb_stats, files)},
        {"pgnfs_writeback_writes_total", "counter", "UNSTABLE writes buffered.",
         offsetof(dbfs_wb_stats, writes)},
        {"pgnfs_writeback_refused_total", "counter",
         "Writes that did not fit at first (stored before the reply instead).",
         offsetof(dbfs_wb_stats, refused)},
        {"pgnfs_writeback_flushes_total", "counter", "Flushes of a file's held data.",
         offsetof(dbfs_wb_stats, flushes)},
        {"pgnfs_writeback_flushed_bytes_total", "counter", "File bytes stored by flushes.",
         offsetof(dbfs_wb_stats, flushed_bytes)},
        {"pgnfs_writeback_errors_total", "counter", "Flushes that failed for good.",
         offsetof(dbfs_wb_stats, errors)},
    };

    dbfs_wb_figures(fs, &w);
    g_string_append_printf(out,
                           "# HELP pgnfs_writeback_enabled 1 when UNSTABLE writes are buffered.\n"
                           "# TYPE pgnfs_writeback_enabled gauge\n"
                           "pgnfs_writeback_enabled %d\n",
                           w.enabled ? 1 : 0);
    for (size_t k = 0; k < G_N_ELEMENTS(series); k++)
        g_string_append_printf(out, "# HELP %s %s\n# TYPE %s %s\n%s %" G_GUINT64_FORMAT "\n",
                               series[k].name, series[k].help, series[k].name, series[k].type,
                               series[k].name,
                               *(const uint64_t *)((const char *)&w + series[k].offset));
    g_string_append_printf(out,
                           "# HELP pgnfs_writeback_oldest_age_seconds Age of the oldest data "
                           "held (0: none).\n"
                           "# TYPE pgnfs_writeback_oldest_age_seconds gauge\n"
                           "pgnfs_writeback_oldest_age_seconds %.3f\n",
                           (double)w.oldest_age_ms / 1000.0);
}

/*
 * met_frontend -- this server among the file system's servers, from
 * dbfs_frontend_figures: its id in pgnfs_frontends and coherence mode
 * (pgnfs_frontend_info), whether it receives the others' invalidations
 * (shared), invalidations applied and barriers sent (counters).
 */
static void met_frontend(dbfs *fs, GString *out)
{
    dbfs_frontend_stats f;

    dbfs_frontend_figures(fs, &f);
    if (!f.registered)
        return;
    g_string_append_printf(
        out,
        "# HELP pgnfs_frontend_info This server's row in pgnfs_frontends and its coherence.\n"
        "# TYPE pgnfs_frontend_info gauge\n"
        "pgnfs_frontend_info{id=\"%" G_GINT64_FORMAT "\",coherence=\"%s\"} 1\n"
        "# HELP pgnfs_frontend_listening 1 while the other servers' invalidations arrive "
        "(shared coherence; 0: the caches are bypassed).\n"
        "# TYPE pgnfs_frontend_listening gauge\n"
        "pgnfs_frontend_listening %d\n"
        "# HELP pgnfs_frontend_invalidations_total Invalidations received from the database.\n"
        "# TYPE pgnfs_frontend_invalidations_total counter\n"
        "pgnfs_frontend_invalidations_total %" G_GUINT64_FORMAT "\n"
        "# HELP pgnfs_frontend_barriers_total Reads of the invalidation log (barriers).\n"
        "# TYPE pgnfs_frontend_barriers_total counter\n"
        "pgnfs_frontend_barriers_total %" G_GUINT64_FORMAT "\n"
        "# HELP pgnfs_frontend_solo 1 while a shared server is alone (no barriers).\n"
        "# TYPE pgnfs_frontend_solo gauge\n"
        "pgnfs_frontend_solo %d\n"
        "# HELP pgnfs_frontend_resets_total Caches emptied because the invalidation log was "
        "trimmed past this server, or it began to read it.\n"
        "# TYPE pgnfs_frontend_resets_total counter\n"
        "pgnfs_frontend_resets_total %" G_GUINT64_FORMAT "\n",
        (gint64)f.id, f.shared ? "shared" : "single", f.shared && f.up ? 1 : 0,
        (guint64)f.invalidations, (guint64)f.barriers, f.solo ? 1 : 0, (guint64)f.resets);
}

/* A label value of the text format: backslash, double quote and newline
 * escaped (export paths have no other control characters). */
static void met_label_value(GString *out, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            g_string_append_c(out, '\\');
        if (*v == '\n')
            g_string_append(out, "\\n");
        else
            g_string_append_c(out, *v);
    }
}

/*
 * met_exports -- one pgnfs_export_info series per client entry of every
 * export: its path, the client pattern as configured (*, ADDR/PREFIX or
 * a host name), access rw or ro, and mode sync (a change is on disk
 * before its reply) or async (exports(5): the reply may come first).
 */
static void met_exports(const cfg *c, GString *out)
{
    char addr[INET6_ADDRSTRLEN];

    g_string_append(out, "# HELP pgnfs_export_info The exports' client entries: access, and "
                         "mode sync (changes on disk before the reply) or async.\n"
                         "# TYPE pgnfs_export_info gauge\n");
    for (unsigned i = 0; i < c->nexports; i++) {
        const cfg_export *e = &c->exports[i];

        for (unsigned j = 0; j < e->nclients; j++) {
            const cfg_client *k = &e->clients[j];

            g_string_append(out, "pgnfs_export_info{path=\"");
            met_label_value(out, e->path);
            g_string_append(out, "\",client=\"");
            if (k->kind == CFG_CLIENT_ANY) {
                g_string_append_c(out, '*');
            } else if (k->kind == CFG_CLIENT_NET) {
                inet_ntop(k->family, k->addr, addr, sizeof addr);
                g_string_append_printf(out, "%s/%u", addr, k->prefix);
            } else {
                met_label_value(out, k->host);
            }
            g_string_append_printf(out, "\",access=\"%s\",mode=\"%s\"} 1\n", k->rw ? "rw" : "ro",
                                   k->async ? "async" : "sync");
        }
    }
}

/* The whole page: build, the runtime's figures, caches, write-back, exports. */
static void met_text(met *m, GString *out)
{
    g_string_append_printf(out,
                           "# HELP pgnfs_build_info The pgnfs version serving.\n"
                           "# TYPE pgnfs_build_info gauge\n"
                           "pgnfs_build_info{version=\"%s\"} 1\n",
                           PGNFS_VERSION);
    srv_rt_metrics(m->rt, out);
    met_caches(m->fs, out);
    met_writeback(m->fs, out);
    met_frontend(m->fs, out);
    met_exports(m->cfg, out);
    if (m->more)
        m->more(m->more_arg, out);
}

/* A response from a malloc'd copy of text, with the given status. */
static enum MHD_Result met_send(struct MHD_Connection *conn, unsigned status, const char *type,
                                const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);
    struct MHD_Response *resp;
    enum MHD_Result ret;

    if (!copy)
        return MHD_NO;
    memcpy(copy, text, len);
    resp = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(copy);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result met_handler(void *cls, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *version, const char *upload_data,
                                   size_t *upload_data_size, void **req_cls)
{
    met *m = cls;
    static const char not_found[] = "pgnfsd: the metrics are at /metrics\n";
    static const char not_allowed[] = "pgnfsd: only GET and HEAD\n";

    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    (void)req_cls;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return met_send(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", not_allowed,
                        sizeof not_allowed - 1);
    if (strcmp(url, "/metrics") != 0)
        return met_send(conn, MHD_HTTP_NOT_FOUND, "text/plain", not_found, sizeof not_found - 1);
    GString *page = g_string_sized_new(16384);
    met_text(m, page);
    enum MHD_Result ret =
        met_send(conn, MHD_HTTP_OK, "text/plain; version=0.0.4", page->str, page->len);
    g_string_free(page, TRUE);
    return ret;
}

/* libmicrohttpd's own complaints go to our log. */
static void met_log(void *cls, const char *fmt, va_list ap)
{
    char *msg = g_strdup_vprintf(fmt, ap);

    (void)cls;
    g_message("metrics: %.*s", (int)strcspn(msg, "\n"), msg);
    g_free(msg);
}

int met_start(const cfg *c, srv_rt *rt, dbfs *fs, met_fn more, void *more_arg, met **out)
{
    struct sockaddr_storage ss;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    met *m;

    *out = NULL;
    if (!c->metrics_enable)
        return 0;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, c->metrics_listen, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)c->metrics_port);
    } else if (inet_pton(AF_INET6, c->metrics_listen, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)c->metrics_port);
        flags |= MHD_USE_IPv6;
    } else {
        g_critical("metrics: [metrics] listen '%s' is not an address", c->metrics_listen);
        return -1;
    }
    m = g_new0(met, 1);
    m->cfg = c;
    m->rt = rt;
    m->fs = fs;
    m->more = more;
    m->more_arg = more_arg;
    /* The logger first: libmicrohttpd complains (on stderr) otherwise. */
    m->daemon = MHD_start_daemon(flags, (uint16_t)c->metrics_port, NULL, NULL, met_handler, m,
                                 MHD_OPTION_EXTERNAL_LOGGER, met_log, NULL, MHD_OPTION_SOCK_ADDR,
                                 (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, 64u,
                                 MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!m->daemon) {
        g_critical("metrics: cannot serve http://%s:%u/metrics (port in use, or a privileged "
                   "port?); set [metrics] port, or [metrics] enable = false",
                   c->metrics_listen, c->metrics_port);
        g_free(m);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(m->daemon, MHD_DAEMON_INFO_BIND_PORT);
    m->port = info ? info->port : c->metrics_port;
    g_message("metrics: serving http://%s%s%s:%u/metrics",
              strchr(c->metrics_listen, ':') ? "[" : "", c->metrics_listen,
              strchr(c->metrics_listen, ':') ? "]" : "", m->port);
    *out = m;
    return 0;
}

void met_stop(met *m)
{
    if (!m)
        return;
    MHD_stop_daemon(m->daemon);
    g_free(m);
}
