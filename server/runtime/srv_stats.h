/*
 * srv_stats.h -- the runtime's counters: per procedure of every registered
 * program (calls, RPC-level errors, replays, latency, database round
 * trips), per status of a program's results, RPC events not tied to one
 * procedure, and the database connection state; their log table and
 * their part of the metrics page (srv_stats.c says the formats).
 *
 * NOTES
 *   Counters are C11 atomics: counting takes no lock. Programs are added
 *   before the runtime serves (srv_stats_add) and never removed; a
 *   srv_stats is embedded in its owner and released with srv_stats_clear.
 */
#ifndef PGNFS_SRV_STATS_H
#define PGNFS_SRV_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "srv.h"

/* Program versions one runtime serves at most (NFS, MOUNT, the three
 * portmapper versions, NLM and NSM leave room). */
#define SRV_PROGS_MAX 16

/* Latency histogram of a procedure: bucket i counts calls that took at
 * most srv_stats_bucket_us[i] microseconds (and more than bucket i-1's
 * bound); the last bucket has no bound (+Inf). */
#define SRV_STATS_BUCKETS 20
extern const uint64_t srv_stats_bucket_us[SRV_STATS_BUCKETS - 1];

typedef struct {
    atomic_uint_fast64_t calls, errors, drc_hits, total_ns, max_ns, round_trips;
    /* Of calls: answered on the event thread from memory (srv_proc.quick). */
    atomic_uint_fast64_t quick;
    atomic_uint_fast64_t hist[SRV_STATS_BUCKETS];
} srv_stat_proc;

/* The counters of one registered program version. */
typedef struct {
    const srv_program *prog;
    srv_stat_proc *procs;           /* prog->nprocs of them */
    atomic_uint_fast64_t *statuses; /* prog->nstatuses of them: replies by status */
} srv_stat_prog;

/* RPC-level events not tied to one procedure. New events are appended
 * (the log line and the metrics keep their order). */
typedef enum {
    SRV_EV_BAD_CALL,          /* undecodable header: dropped */
    SRV_EV_RPC_MISMATCH,      /* rpcvers != 2 */
    SRV_EV_PROG_UNAVAIL,      /* unknown program */
    SRV_EV_PROG_MISMATCH,     /* known program, other version */
    SRV_EV_PROC_UNAVAIL,      /* procedure not served */
    SRV_EV_AUTH_ERROR,        /* bad, unknown or too weak credentials */
    SRV_EV_DRC_DROP,          /* retransmission of a call still running */
    SRV_EV_NO_DB,             /* answered "try later" or dropped: no database */
    SRV_EV_BAD_RECORD,        /* TCP record marking violated: connection closed */
    SRV_EV_CONN_REFUSED,      /* a new connection closed at once: no room */
    SRV_EV_UDP_DROP,          /* datagram dropped: workers overloaded */
    SRV_EV_CONN_EVICTED,      /* an idle connection closed to make room */
    SRV_EV_CONN_NOT_ADMITTED, /* closed after its first reply: no export admits it */
    SRV_EV_N
} srv_stat_event;

typedef struct srv_stats {
    unsigned nprogs;
    srv_stat_prog progs[SRV_PROGS_MAX];
    atomic_uint_fast64_t events[SRV_EV_N];
    int64_t start_us; /* monotonic */
    /* 1 if the last call that needed the database had a connection, else 0 */
    atomic_int db_connected;
} srv_stats;

/* srv_stats_init -- zeroed counters, no programs. Cannot fail. */
void srv_stats_init(srv_stats *s);

/*
 * srv_stats_add -- counters for program p (which must outlive s). Returns
 * its index (the prog_index of the calls below), or -ENOSPC when
 * SRV_PROGS_MAX programs are there already. Not thread-safe: add programs
 * before counting starts.
 */
int srv_stats_add(srv_stats *s, const srv_program *p);

/* srv_stats_clear -- free what srv_stats_add allocated (s NULL is fine). */
void srv_stats_clear(srv_stats *s);

/*
 * srv_stats_call -- count one call of procedure proc of program prog_index
 * that took ns nanoseconds and rt database round trips; error says an
 * RPC-level error reply (GARBAGE_ARGS, AUTH_ERROR, SYSTEM_ERR) was sent,
 * drc_hit that the reply came from the duplicate request cache.
 * Lock-free; s NULL does nothing.
 */
void srv_stats_call(srv_stats *s, unsigned prog_index, uint32_t proc, uint64_t ns, uint64_t rt,
                    bool error, bool drc_hit);

/*
 * srv_stats_quick -- count one call of procedure proc of program prog_index
 * as answered on the event thread (srv_dispatch_quick), besides counting
 * it with srv_stats_call. Lock-free; s NULL does nothing.
 */
void srv_stats_quick(srv_stats *s, unsigned prog_index, uint32_t proc);

/* srv_stats_event -- count one event. Lock-free; s NULL does nothing. */
void srv_stats_event(srv_stats *s, srv_stat_event ev);

/*
 * srv_stats_status -- count one reply of program prog_index whose result
 * has status st (a status the program does not list is not counted).
 * Lock-free; s NULL does nothing.
 */
void srv_stats_status(srv_stats *s, unsigned prog_index, uint32_t st);

/* srv_stats_status_name -- the name program p gives status st, or NULL
 * for a value it does not list. Cannot fail. */
const char *srv_stats_status_name(const srv_program *p, uint32_t st);

/* srv_stats_db -- record whether a call that needed the database had a
 * connection (the database figure of the metrics). s NULL does nothing. */
void srv_stats_db(srv_stats *s, bool connected);

/*
 * srv_stats_metrics -- append the counters in the Prometheus text format
 * (version 0.0.4) to out: per-procedure calls, errors, replays, round
 * trips and latency histograms, RPC events, replies by status of the
 * programs that count them, the database gauge, uptime. Cannot fail.
 */
void srv_stats_metrics(const srv_stats *s, GString *out);

/*
 * srv_stats_log -- log the table (format in srv_stats.c's header), with
 * reason ("shutdown", "SIGUSR1") on its first line.
 */
void srv_stats_log(const srv_stats *s, const char *reason);

#endif /* PGNFS_SRV_STATS_H */
