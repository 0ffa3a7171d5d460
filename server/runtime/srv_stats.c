/*
 * srv_stats.c -- per-procedure counters: calls, RPC-level errors, replies
 * from the duplicate request cache, latency (total and maximum) and
 * database round trips; and counters of RPC events not tied to one
 * procedure. All counters are C11 atomics: no lock anywhere.
 *
 * Log format (stable: the Connectathon runner parses it). srv_stats_log
 * writes, at INFO level through GLib (so each line carries the usual
 * "TIMESTAMP PROG[PID] INFO pgnfs: " prefix), in this order:
 *
 *   stats: begin reason=REASON uptime_s=SECONDS
 *   stats: proc prog=PROG proc=NAME calls=N errors=N drc_hits=N total_us=N
 *          avg_us=N max_us=N round_trips=N quick=N
 *   ...    (one "proc" line per procedure called at least once, in program
 *           registration and procedure-number order)
 *   stats: rpc bad_call=N rpc_mismatch=N prog_unavail=N prog_mismatch=N
 *          proc_unavail=N auth_error=N drc_drop=N no_db=N bad_record=N
 *          conn_refused=N udp_drop=N conn_evicted=N conn_not_admitted=N
 *   stats: end
 *
 * (each line is one line; they are wrapped here). PROG is the program's
 * registered name ("nfs3", "mount3", "pmap2"); NAME is the procedure's name
 * from its table
 * ("GETATTR"). Every value is a decimal integer (microseconds truncated);
 * fields are "key=value" separated by one space; new fields are only ever
 * appended at the end of a line. REASON is "shutdown" or "SIGUSR1".
 * Counters are cumulative since the server started.
 *
 *   errors       RPC-level error replies for this procedure (GARBAGE_ARGS,
 *                AUTH_ERROR, SYSTEM_ERR); a program's own error statuses
 *                (NFS3ERR_NOENT, ...) are not counted
 *   drc_hits     replies replayed from the duplicate request cache (these
 *                are included in calls and take no round trips)
 *   round_trips  database round trips made by the handler
 *   quick        calls answered on the event thread from memory, without
 *                a hand-off to a worker (srv_dispatch_quick; included in
 *                calls)
 *
 * Latency histograms (SRV_STATS_BUCKETS buckets per procedure, bounds in
 * srv_stats_bucket_us), replies by status (for programs whose descriptor
 * lists statuses: NFSv3's pgnfs_nfs3_replies_total) and the database
 * connection state are kept for the metrics endpoint (srv_stats_metrics);
 * they do not appear in the log lines.
 *
 * NOTES
 *   A srv_stats is embedded in the runtime (or a test) and lives as long
 *   as it; the program descriptors it points to must outlive it. The
 *   per-program arrays are g_malloc'd by srv_stats_add and freed by
 *   srv_stats_clear.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "srv_stats.h"

#define SRV_NS_PER_US  1000u
#define SRV_US_PER_SEC 1e6
#define SRV_NS_PER_SEC 1e9

static const char *const srv_stats_event_names[SRV_EV_N] = {
    [SRV_EV_BAD_CALL] = "bad_call",
    [SRV_EV_RPC_MISMATCH] = "rpc_mismatch",
    [SRV_EV_PROG_UNAVAIL] = "prog_unavail",
    [SRV_EV_PROG_MISMATCH] = "prog_mismatch",
    [SRV_EV_PROC_UNAVAIL] = "proc_unavail",
    [SRV_EV_AUTH_ERROR] = "auth_error",
    [SRV_EV_DRC_DROP] = "drc_drop",
    [SRV_EV_NO_DB] = "no_db",
    [SRV_EV_BAD_RECORD] = "bad_record",
    [SRV_EV_CONN_REFUSED] = "conn_refused",
    [SRV_EV_UDP_DROP] = "udp_drop",
    [SRV_EV_CONN_EVICTED] = "conn_evicted",
    [SRV_EV_CONN_NOT_ADMITTED] = "conn_not_admitted",
};

/* 10 us .. 10 s in 1-2.5-5 steps: fine enough for percentiles by
 * interpolation, few enough for a scrape of every procedure. */
const uint64_t srv_stats_bucket_us[SRV_STATS_BUCKETS - 1] = {
    10,    25,    50,     100,    250,    500,     1000,    2500,    5000,    10000,
    25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000};

/* Zero every counter of a procedure. */
static void srv_stat_proc_init(srv_stat_proc *c)
{
    atomic_init(&c->calls, 0);
    atomic_init(&c->errors, 0);
    atomic_init(&c->drc_hits, 0);
    atomic_init(&c->total_ns, 0);
    atomic_init(&c->max_ns, 0);
    atomic_init(&c->round_trips, 0);
    atomic_init(&c->quick, 0);
    for (unsigned b = 0; b < SRV_STATS_BUCKETS; b++)
        atomic_init(&c->hist[b], 0);
}

void srv_stats_init(srv_stats *s)
{
    memset(s, 0, sizeof *s);
    for (unsigned e = 0; e < SRV_EV_N; e++)
        atomic_init(&s->events[e], 0);
    atomic_init(&s->db_connected, 1);
    s->start_us = g_get_monotonic_time();
}

int srv_stats_add(srv_stats *s, const srv_program *p)
{
    if (s->nprogs >= SRV_PROGS_MAX)
        return -ENOSPC;
    srv_stat_prog *sp = &s->progs[s->nprogs];
    sp->prog = p;
    sp->procs = g_new(srv_stat_proc, p->nprocs ? p->nprocs : 1);
    for (unsigned i = 0; i < p->nprocs; i++)
        srv_stat_proc_init(&sp->procs[i]);
    sp->statuses = g_new(atomic_uint_fast64_t, p->nstatuses ? p->nstatuses : 1);
    for (unsigned i = 0; i < p->nstatuses; i++)
        atomic_init(&sp->statuses[i], 0);
    return (int)s->nprogs++;
}

void srv_stats_clear(srv_stats *s)
{
    if (!s)
        return;
    for (unsigned p = 0; p < s->nprogs; p++) {
        g_free(s->progs[p].procs);
        g_free(s->progs[p].statuses);
    }
    s->nprogs = 0;
}

/* The histogram bucket of a call that took ns nanoseconds. */
static unsigned srv_stats_bucket(uint64_t ns)
{
    uint64_t us = (ns + SRV_NS_PER_US - 1) / SRV_NS_PER_US; /* rounded up */
    unsigned b = 0;

    while (b < SRV_STATS_BUCKETS - 1 && us > srv_stats_bucket_us[b])
        b++;
    return b;
}

void srv_stats_call(srv_stats *s, unsigned prog_index, uint32_t proc, uint64_t ns, uint64_t rt,
                    bool error, bool drc_hit)
{
    if (!s || prog_index >= s->nprogs || proc >= s->progs[prog_index].prog->nprocs)
        return;
    srv_stat_proc *c = &s->progs[prog_index].procs[proc];
    atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
    if (error)
        atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
    if (drc_hit)
        atomic_fetch_add_explicit(&c->drc_hits, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->total_ns, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->round_trips, rt, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->hist[srv_stats_bucket(ns)], 1, memory_order_relaxed);
    uint_fast64_t max = atomic_load_explicit(&c->max_ns, memory_order_relaxed);
    while (ns > max && !atomic_compare_exchange_weak_explicit(
                           &c->max_ns, &max, ns, memory_order_relaxed, memory_order_relaxed)) {
        /* max now holds the current value: try again while ours is larger */
    }
}

void srv_stats_quick(srv_stats *s, unsigned prog_index, uint32_t proc)
{
    if (!s || prog_index >= s->nprogs || proc >= s->progs[prog_index].prog->nprocs)
        return;
    atomic_fetch_add_explicit(&s->progs[prog_index].procs[proc].quick, 1, memory_order_relaxed);
}

void srv_stats_event(srv_stats *s, srv_stat_event ev)
{
    if (!s || ev >= SRV_EV_N)
        return;
    atomic_fetch_add_explicit(&s->events[ev], 1, memory_order_relaxed);
}

void srv_stats_log(const srv_stats *s, const char *reason)
{
    int64_t up = (g_get_monotonic_time() - s->start_us) / G_USEC_PER_SEC;

    g_message("stats: begin reason=%s uptime_s=%" G_GINT64_FORMAT, reason, up);
    for (unsigned p = 0; p < s->nprogs; p++) {
        const srv_program *prog = s->progs[p].prog;
        for (unsigned i = 0; i < prog->nprocs; i++) {
            const srv_stat_proc *c = &s->progs[p].procs[i];
            uint64_t calls = atomic_load(&c->calls);
            if (calls == 0 || !prog->procs[i].name)
                continue;
            uint64_t total_us = atomic_load(&c->total_ns) / SRV_NS_PER_US;
            g_message("stats: proc prog=%s proc=%s calls=%" G_GUINT64_FORMAT
                      " errors=%" G_GUINT64_FORMAT " drc_hits=%" G_GUINT64_FORMAT
                      " total_us=%" G_GUINT64_FORMAT " avg_us=%" G_GUINT64_FORMAT
                      " max_us=%" G_GUINT64_FORMAT " round_trips=%" G_GUINT64_FORMAT
                      " quick=%" G_GUINT64_FORMAT,
                      prog->name, prog->procs[i].name ? prog->procs[i].name : "?", calls,
                      (uint64_t)atomic_load(&c->errors), (uint64_t)atomic_load(&c->drc_hits),
                      total_us, total_us / calls, (uint64_t)atomic_load(&c->max_ns) / SRV_NS_PER_US,
                      (uint64_t)atomic_load(&c->round_trips), (uint64_t)atomic_load(&c->quick));
        }
    }
    GString *line = g_string_new("stats: rpc");
    for (unsigned e = 0; e < SRV_EV_N; e++)
        g_string_append_printf(line, " %s=%" G_GUINT64_FORMAT, srv_stats_event_names[e],
                               (uint64_t)atomic_load(&s->events[e]));
    g_message("%s", line->str);
    g_string_free(line, TRUE);
    g_message("stats: end");
}

/* The index of status st in p's list, or p->nstatuses if it is not there. */
static unsigned srv_stats_status_index(const srv_program *p, uint32_t st)
{
    unsigned i = 0;

    while (i < p->nstatuses && p->statuses[i].value != st)
        i++;
    return i;
}

void srv_stats_status(srv_stats *s, unsigned prog_index, uint32_t st)
{
    if (!s || prog_index >= s->nprogs)
        return;
    const srv_stat_prog *sp = &s->progs[prog_index];
    unsigned i = srv_stats_status_index(sp->prog, st);
    if (i < sp->prog->nstatuses)
        atomic_fetch_add_explicit(&sp->statuses[i], 1, memory_order_relaxed);
}

const char *srv_stats_status_name(const srv_program *p, uint32_t st)
{
    unsigned i = srv_stats_status_index(p, st);

    return i < p->nstatuses ? p->statuses[i].name : NULL;
}

void srv_stats_db(srv_stats *s, bool connected)
{
    if (s)
        atomic_store_explicit(&s->db_connected, connected ? 1 : 0, memory_order_relaxed);
}

/* "# HELP name help" and "# TYPE name type" lines. */
static void srv_stats_head(GString *out, const char *name, const char *type, const char *help)
{
    g_string_append_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The per-procedure counters, one series per served procedure. */
static void srv_stats_metrics_counters(const srv_stats *s, GString *out)
{
    static const struct {
        const char *name, *help;
        size_t offset;
    } counters[] = {
        {"pgnfs_rpc_calls_total", "Calls answered, per procedure (replays included).",
         offsetof(srv_stat_proc, calls)},
        {"pgnfs_rpc_errors_total",
         "RPC-level error replies (GARBAGE_ARGS, AUTH_ERROR, SYSTEM_ERR), per procedure.",
         offsetof(srv_stat_proc, errors)},
        {"pgnfs_rpc_drc_hits_total", "Replies replayed from the duplicate request cache.",
         offsetof(srv_stat_proc, drc_hits)},
        {"pgnfs_db_round_trips_total", "Database round trips made by the handlers.",
         offsetof(srv_stat_proc, round_trips)},
        {"pgnfs_rpc_quick_total",
         "Calls answered on the event thread from memory, without a hand-off to a worker.",
         offsetof(srv_stat_proc, quick)},
    };

    for (size_t k = 0; k < G_N_ELEMENTS(counters); k++) {
        srv_stats_head(out, counters[k].name, "counter", counters[k].help);
        for (unsigned p = 0; p < s->nprogs; p++) {
            const srv_program *prog = s->progs[p].prog;
            for (unsigned i = 0; i < prog->nprocs; i++) {
                const atomic_uint_fast64_t *v =
                    (const atomic_uint_fast64_t *)((const char *)&s->progs[p].procs[i] +
                                                   counters[k].offset);
                if (prog->procs[i].name)
                    g_string_append_printf(out,
                                           "%s{prog=\"%s\",proc=\"%s\"} %" G_GUINT64_FORMAT "\n",
                                           counters[k].name, prog->name, prog->procs[i].name,
                                           (uint64_t)atomic_load(v));
            }
        }
    }
}

/* The latency histogram of one procedure (prog, name) with counters c. */
static void srv_stats_metrics_histogram(const char *prog, const char *name, const srv_stat_proc *c,
                                        GString *out)
{
    uint64_t cum = 0;

    for (unsigned b = 0; b < SRV_STATS_BUCKETS; b++) {
        cum += atomic_load(&c->hist[b]);
        if (b < SRV_STATS_BUCKETS - 1)
            g_string_append_printf(out,
                                   "pgnfs_rpc_duration_seconds_bucket{prog=\"%s\","
                                   "proc=\"%s\",le=\"%g\"} %" G_GUINT64_FORMAT "\n",
                                   prog, name, (double)srv_stats_bucket_us[b] / SRV_US_PER_SEC,
                                   cum);
        else
            g_string_append_printf(out,
                                   "pgnfs_rpc_duration_seconds_bucket{prog=\"%s\","
                                   "proc=\"%s\",le=\"+Inf\"} %" G_GUINT64_FORMAT "\n",
                                   prog, name, cum);
    }
    g_string_append_printf(out,
                           "pgnfs_rpc_duration_seconds_sum{prog=\"%s\",proc=\"%s\"} %.9f\n"
                           "pgnfs_rpc_duration_seconds_count{prog=\"%s\",proc=\"%s\"} "
                           "%" G_GUINT64_FORMAT "\n",
                           prog, name, (double)atomic_load(&c->total_ns) / SRV_NS_PER_SEC, prog,
                           name, cum);
}

/* Replies by status, for the programs that count them. */
static void srv_stats_metrics_statuses(const srv_stats *s, GString *out)
{
    for (unsigned p = 0; p < s->nprogs; p++) {
        const srv_program *prog = s->progs[p].prog;
        if (!prog->status_metric || prog->nstatuses == 0)
            continue;
        srv_stats_head(out, prog->status_metric, "counter",
                       prog->status_help ? prog->status_help : "Replies by status.");
        for (unsigned i = 0; i < prog->nstatuses; i++)
            g_string_append_printf(out, "%s{status=\"%s\"} %" G_GUINT64_FORMAT "\n",
                                   prog->status_metric, prog->statuses[i].name,
                                   (uint64_t)atomic_load(&s->progs[p].statuses[i]));
    }
}

void srv_stats_metrics(const srv_stats *s, GString *out)
{
    g_string_append_printf(out,
                           "# HELP pgnfs_uptime_seconds Seconds since the server started.\n"
                           "# TYPE pgnfs_uptime_seconds gauge\npgnfs_uptime_seconds %.3f\n",
                           (double)(g_get_monotonic_time() - s->start_us) / G_USEC_PER_SEC);
    srv_stats_metrics_counters(s, out);
    srv_stats_head(out, "pgnfs_rpc_duration_seconds", "histogram",
                   "Time from a call's arrival at a worker to its encoded reply.");
    for (unsigned p = 0; p < s->nprogs; p++) {
        const srv_program *prog = s->progs[p].prog;
        for (unsigned i = 0; i < prog->nprocs; i++) {
            /* An empty histogram tells nothing: keep the page short. */
            if (prog->procs[i].name && atomic_load(&s->progs[p].procs[i].calls) > 0)
                srv_stats_metrics_histogram(prog->name, prog->procs[i].name, &s->progs[p].procs[i],
                                            out);
        }
    }
    srv_stats_head(out, "pgnfs_rpc_events_total", "counter",
                   "RPC-level events not tied to one procedure.");
    for (unsigned e = 0; e < SRV_EV_N; e++)
        g_string_append_printf(out, "pgnfs_rpc_events_total{event=\"%s\"} %" G_GUINT64_FORMAT "\n",
                               srv_stats_event_names[e], (uint64_t)atomic_load(&s->events[e]));
    srv_stats_metrics_statuses(s, out);
    srv_stats_head(out, "pgnfs_db_connected", "gauge",
                   "1 if the last call that needed the database had a connection, else 0.");
    g_string_append_printf(out, "pgnfs_db_connected %d\n", atomic_load(&s->db_connected));
}
