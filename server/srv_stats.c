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
 *   stats: proc prog=PROG proc=NAME calls=N errors=N drc_hits=N total_us=N avg_us=N max_us=N
 * round_trips=N
 *   ...    (one "proc" line per procedure called at least once, in program
 *           and procedure-number order)
 *   stats: rpc bad_call=N rpc_mismatch=N prog_unavail=N prog_mismatch=N proc_unavail=N auth_error=N
 * drc_drop=N no_db=N bad_record=N conn_refused=N udp_drop=N stats: end
 *
 * PROG is "nfs3" or "mount3"; NAME is the procedure's name from its table
 * ("GETATTR"). Every value is a decimal integer (microseconds truncated);
 * fields are "key=value" separated by one space; new fields are only ever
 * appended at the end of a line. REASON is "shutdown" or "SIGUSR1".
 * Counters are cumulative since the server started.
 *
 *   errors       RPC-level error replies for this procedure (GARBAGE_ARGS,
 *                AUTH_ERROR, SYSTEM_ERR); NFS status errors are not counted
 *   drc_hits     replies replayed from the duplicate request cache (these
 *                are included in calls and take no round trips)
 *   round_trips  database round trips made by the handler
 *
 * NOTES
 *   A srv_stats is embedded in the server (or a test) and lives as long as
 *   it; the program table it points to must outlive it.
 */
#include <string.h>

#include "srv_int.h"

static const char *const srv_stats_event_names[SRV_EV_N] = {
    [SRV_EV_BAD_CALL] = "bad_call",         [SRV_EV_RPC_MISMATCH] = "rpc_mismatch",
    [SRV_EV_PROG_UNAVAIL] = "prog_unavail", [SRV_EV_PROG_MISMATCH] = "prog_mismatch",
    [SRV_EV_PROC_UNAVAIL] = "proc_unavail", [SRV_EV_AUTH_ERROR] = "auth_error",
    [SRV_EV_DRC_DROP] = "drc_drop",         [SRV_EV_NO_DB] = "no_db",
    [SRV_EV_BAD_RECORD] = "bad_record",     [SRV_EV_CONN_REFUSED] = "conn_refused",
    [SRV_EV_UDP_DROP] = "udp_drop",
};

void srv_stats_init(srv_stats *s, const srv_program *progs, unsigned nprogs)
{
    memset(s, 0, sizeof *s);
    s->progs = progs;
    s->nprogs = nprogs < SRV_PROGS_MAX ? nprogs : SRV_PROGS_MAX;
    for (unsigned p = 0; p < SRV_PROGS_MAX; p++) {
        for (unsigned i = 0; i < SRV_PROCS_MAX; i++) {
            srv_stat_proc *c = &s->procs[p][i];
            atomic_init(&c->calls, 0);
            atomic_init(&c->errors, 0);
            atomic_init(&c->drc_hits, 0);
            atomic_init(&c->total_ns, 0);
            atomic_init(&c->max_ns, 0);
            atomic_init(&c->round_trips, 0);
        }
    }
    for (unsigned e = 0; e < SRV_EV_N; e++)
        atomic_init(&s->events[e], 0);
    s->start_us = g_get_monotonic_time();
}

void srv_stats_call(srv_stats *s, unsigned prog_index, uint32_t proc, uint64_t ns, uint64_t rt,
                    bool error, bool drc_hit)
{
    if (!s || prog_index >= s->nprogs || proc >= SRV_PROCS_MAX)
        return;
    srv_stat_proc *c = &s->procs[prog_index][proc];
    atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
    if (error)
        atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
    if (drc_hit)
        atomic_fetch_add_explicit(&c->drc_hits, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->total_ns, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->round_trips, rt, memory_order_relaxed);
    uint_fast64_t max = atomic_load_explicit(&c->max_ns, memory_order_relaxed);
    while (ns > max && !atomic_compare_exchange_weak_explicit(
                           &c->max_ns, &max, ns, memory_order_relaxed, memory_order_relaxed)) {
        /* max now holds the current value: try again while ours is larger */
    }
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
        const srv_program *prog = &s->progs[p];
        for (unsigned i = 0; i < prog->nprocs && i < SRV_PROCS_MAX; i++) {
            const srv_stat_proc *c = &s->procs[p][i];
            uint64_t calls = atomic_load(&c->calls);
            if (calls == 0)
                continue;
            uint64_t total_us = atomic_load(&c->total_ns) / 1000;
            g_message("stats: proc prog=%s proc=%s calls=%" G_GUINT64_FORMAT
                      " errors=%" G_GUINT64_FORMAT " drc_hits=%" G_GUINT64_FORMAT
                      " total_us=%" G_GUINT64_FORMAT " avg_us=%" G_GUINT64_FORMAT
                      " max_us=%" G_GUINT64_FORMAT " round_trips=%" G_GUINT64_FORMAT,
                      prog->name, prog->procs[i].name ? prog->procs[i].name : "?", calls,
                      (uint64_t)atomic_load(&c->errors), (uint64_t)atomic_load(&c->drc_hits),
                      total_us, total_us / calls, (uint64_t)atomic_load(&c->max_ns) / 1000,
                      (uint64_t)atomic_load(&c->round_trips));
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
