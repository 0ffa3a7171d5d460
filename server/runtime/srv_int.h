/*
 * srv_int.h -- what the RPC plumbing of server/ shares inside itself:
 * logging, record marking, the duplicate request cache, statistics,
 * dispatch, the transport (event thread and connections) and the workers.
 * The procedure handlers do not include it; they see srv.h only.
 *
 * NOTES
 *   Threads: one event thread (srv_transport.c) owns the sockets, reads,
 *   reassembles records and hands them to worker threads (srv_worker.c).
 *   Workers decode, run the handler and write the reply themselves
 *   (srv_conn_reply); what the socket does not take goes to the
 *   connection's output queue, which the event thread flushes.
 *
 *   Memory: a record handed to a worker (srv_job) is owned by the job;
 *   the worker frees it after the reply. A srv_conn is reference counted:
 *   the event thread holds one reference while the connection is open,
 *   every queued job holds one; the last srv_conn_unref closes the fd.
 */
#ifndef PGNFS_SRV_INT_H
#define PGNFS_SRV_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <glib.h>

#include "log.h"
#include "srv.h"

/* ---- byte buffers (srv_req.c) ------------------------------------------ */

/* A growable byte buffer; data is g_malloc'd and owned by the buffer. */
typedef struct {
    unsigned char *data;
    size_t len, cap;
} srv_buf;

/* srv_buf_reserve -- make room for at least cap bytes. Cannot fail. */
void srv_buf_reserve(srv_buf *b, size_t cap);
/* srv_buf_set -- replace the contents with n bytes of d. Cannot fail. */
void srv_buf_set(srv_buf *b, const void *d, size_t n);
/* srv_buf_clear -- free the storage; the buffer is empty and reusable. */
void srv_buf_clear(srv_buf *b);

/* ---- record marking (srv_record.c, RFC 5531 section 11) ---------------- */

/* The last-fragment bit of a record mark. */
#define SRV_RECORD_LAST 0x80000000u

/*
 * Reassembly state of one TCP stream. See srv_record.c for the states.
 * Event-thread only; no locking.
 */
typedef struct {
    size_t max;            /* largest record accepted */
    unsigned char mark[4]; /* the fragment header being read */
    unsigned mark_have;    /* bytes of it read so far */
    bool in_fragment;      /* reading a fragment's payload */
    bool last;             /* the current fragment ends the record */
    uint32_t frag_left;    /* payload bytes of the fragment still to come */
    unsigned char *buf;    /* the record so far (g_malloc'd) */
    size_t len, cap;
} srv_record;

enum {
    SRV_RECORD_NEED = 0,    /* all input consumed, record not complete */
    SRV_RECORD_COMPLETE = 1 /* a record is ready: srv_record_take */
};

/* srv_record_init -- an empty reassembler for records of at most max bytes. */
void srv_record_init(srv_record *r, size_t max);
/* srv_record_clear -- free what r holds; r is empty again. */
void srv_record_clear(srv_record *r);

/*
 * srv_record_feed -- consume input until a record completes or the input
 * runs out; *used is how many bytes were consumed. Returns
 * SRV_RECORD_COMPLETE (take the record, then feed the rest), SRV_RECORD_NEED,
 * -EMSGSIZE if the record would exceed max, or -EBADMSG for a zero-length
 * fragment that is not the end of a non-empty record. After an error the
 * stream is beyond repair: close it.
 */
int srv_record_feed(srv_record *r, const void *data, size_t len, size_t *used);

/*
 * srv_record_take -- the completed record (g_malloc'd, caller g_frees it)
 * and its length; r starts on the next record. Only after
 * SRV_RECORD_COMPLETE.
 */
unsigned char *srv_record_take(srv_record *r, size_t *len);

/* srv_record_partial -- true while a record has begun and not completed. */
bool srv_record_partial(const srv_record *r);

/* srv_record_mark -- the 4-byte mark of a single-fragment record of len. */
void srv_record_mark(unsigned char out[4], size_t len);

/* ---- duplicate request cache (srv_drc.c) -------------------------------- */

typedef struct srv_drc srv_drc;

/* What identifies one call: the client address (not its port), the xid,
 * the procedure, and a checksum of the argument bytes. */
typedef struct {
    unsigned char addr[16];
    uint8_t family; /* AF_INET (IPv4-mapped IPv6 included) or AF_INET6 */
    uint32_t xid, prog, vers, proc;
    uint64_t csum;
} srv_drc_key;

typedef enum {
    SRV_DRC_MISS,        /* new call: now IN_PROGRESS; finish or abort it */
    SRV_DRC_IN_PROGRESS, /* the first execution is still running: drop */
    SRV_DRC_HIT          /* done before: the reply was copied out */
} srv_drc_result;

/*
 * srv_drc_key_init -- fill k for a call from peer whose argument bytes are
 * args[0..len). Cannot fail.
 */
void srv_drc_key_init(srv_drc_key *k, const struct sockaddr *peer, uint32_t xid, uint32_t prog,
                      uint32_t vers, uint32_t proc, const void *args, size_t len);

/* srv_drc_new -- a cache of at most entries replies. Cannot fail. */
srv_drc *srv_drc_new(unsigned entries);
/* srv_drc_free -- free d and every reply it holds (NULL is fine). */
void srv_drc_free(srv_drc *d);

/*
 * srv_drc_begin -- look the call up. On SRV_DRC_HIT the cached reply is
 * copied into *reply. On SRV_DRC_MISS an IN_PROGRESS entry now exists and
 * the caller must end it with srv_drc_finish or srv_drc_abort.
 */
srv_drc_result srv_drc_begin(srv_drc *d, const srv_drc_key *k, srv_buf *reply);

/* srv_drc_finish -- the call's reply (copied); retransmissions get it. */
void srv_drc_finish(srv_drc *d, const srv_drc_key *k, const void *reply, size_t len);

/* srv_drc_abort -- forget the call (no reply worth replaying). */
void srv_drc_abort(srv_drc *d, const srv_drc_key *k);

/* Entries currently held (for tests and statistics). */
unsigned srv_drc_count(srv_drc *d);

/* ---- programs, statistics (srv_stats.c) ---------------------------------- */

/* One program version the server offers. */
typedef struct {
    const char *name; /* "nfs3", "mount3": used in logs and stats */
    uint32_t prog, vers;
    const srv_proc *procs;
    unsigned nprocs;
    /* Procedures other than NULL need the worker's database connection;
     * without one they are not run but answered as follows: */
    bool needs_db;
    /* true = the result's status (an nfsstat3, first member) is set to
     * NFS3ERR_JUKEBOX; false = the call is dropped (the client retries).
     * Also: a JUKEBOX result is never kept in the duplicate request cache. */
    bool jukebox_without_db;
} srv_program;

#define SRV_PROGS_MAX 4
#define SRV_PROCS_MAX 32

/* Latency histogram of a procedure: bucket i counts calls that took at
 * most srv_stats_bucket_us[i] microseconds (and more than bucket i-1's
 * bound); the last bucket has no bound (+Inf). */
#define SRV_STATS_BUCKETS 20
extern const uint64_t srv_stats_bucket_us[SRV_STATS_BUCKETS - 1];

typedef struct {
    atomic_uint_fast64_t calls, errors, drc_hits, total_ns, max_ns, round_trips;
    atomic_uint_fast64_t hist[SRV_STATS_BUCKETS];
} srv_stat_proc;

/* NFSv3 statuses counted by srv_stats_status: 0..99 as they are, and
 * 10001..10099 (BADHANDLE ... JUKEBOX) at 100 + (status - 10000). */
#define SRV_STATS_NFSSTAT 200

/* RPC-level events not tied to one procedure. */
typedef enum {
    SRV_EV_BAD_CALL,      /* undecodable header: dropped */
    SRV_EV_RPC_MISMATCH,  /* rpcvers != 2 */
    SRV_EV_PROG_UNAVAIL,  /* unknown program */
    SRV_EV_PROG_MISMATCH, /* known program, other version */
    SRV_EV_PROC_UNAVAIL,  /* procedure number beyond the table */
    SRV_EV_AUTH_ERROR,    /* bad, unknown or too weak credentials */
    SRV_EV_DRC_DROP,      /* retransmission of a call still running */
    SRV_EV_NO_DB,         /* answered JUKEBOX or dropped: no database */
    SRV_EV_BAD_RECORD,    /* TCP record marking violated: connection closed */
    SRV_EV_CONN_REFUSED,  /* over max_connections */
    SRV_EV_UDP_DROP,      /* datagram dropped: workers overloaded */
    SRV_EV_N
} srv_stat_event;

typedef struct srv_stats {
    unsigned nprogs;
    const srv_program *progs;
    srv_stat_proc procs[SRV_PROGS_MAX][SRV_PROCS_MAX];
    atomic_uint_fast64_t events[SRV_EV_N];
    int64_t start_us; /* monotonic */
    /* NFSv3 replies by status (srv_stats_status) */
    atomic_uint_fast64_t nfsstat[SRV_STATS_NFSSTAT];
    /* 1 if the last call that needed the database had a connection, else 0 */
    atomic_int db_connected;
} srv_stats;

/* srv_stats_init -- zeroed counters for the given programs. */
void srv_stats_init(srv_stats *s, const srv_program *progs, unsigned nprogs);

/*
 * srv_stats_call -- count one call of procedure proc of program prog_index
 * that took ns nanoseconds and rt database round trips; error says an
 * RPC-level error reply (GARBAGE_ARGS, AUTH_ERROR, SYSTEM_ERR) was sent,
 * drc_hit that the reply came from the duplicate request cache.
 * Lock-free; s NULL does nothing.
 */
void srv_stats_call(srv_stats *s, unsigned prog_index, uint32_t proc, uint64_t ns, uint64_t rt,
                    bool error, bool drc_hit);

/* srv_stats_event -- count one event. Lock-free; s NULL does nothing. */
void srv_stats_event(srv_stats *s, srv_stat_event ev);

/*
 * srv_stats_status -- count one NFSv3 reply with status st (statuses
 * outside the table are not counted). Lock-free; s NULL does nothing.
 */
void srv_stats_status(srv_stats *s, uint32_t st);

/* srv_stats_status_name -- "NFS3ERR_NOENT" for NFSv3 status st, or
 * NULL for a number that is no status. Cannot fail. */
const char *srv_stats_status_name(uint32_t st);

/* srv_stats_db -- record whether a call that needed the database had a
 * connection (the database figure of the metrics). s NULL does nothing. */
void srv_stats_db(srv_stats *s, bool connected);

/*
 * srv_stats_metrics -- append the counters in the Prometheus text format
 * (version 0.0.4) to out: per-procedure calls, errors, replays, round
 * trips and latency histograms, RPC events, NFS statuses, uptime.
 * Cannot fail.
 */
void srv_stats_metrics(const srv_stats *s, GString *out);

/*
 * srv_stats_log -- log the table (format in srv_stats.c's header), with
 * reason ("shutdown", "SIGUSR1") on its first line.
 */
void srv_stats_log(const srv_stats *s, const char *reason);

/* ---- dispatch (srv_dispatch.c) ------------------------------------------- */

/* Everything dispatch needs besides the call itself; shared, read-only. */
typedef struct srv_env {
    srv_ctx *ctx; /* handed to handlers as req->srv */
    const srv_program *progs;
    unsigned nprogs;
    srv_drc *drc;      /* NULL: no duplicate request cache */
    srv_stats *stats;  /* NULL: no statistics */
    log_ratelimit *rl; /* NULL: log every bad call */
} srv_env;

/*
 * srv_programs_default -- NFS v3 (nfs3_procs) and MOUNT v3 (mnt3_procs)
 * into out[0..1]; returns 2.
 */
unsigned srv_programs_default(srv_program out[SRV_PROGS_MAX]);

typedef enum {
    SRV_DISPATCH_DROP = 0, /* send nothing */
    SRV_DISPATCH_REPLY = 1 /* out holds the reply record (no record mark) */
} srv_dispatch_result;

/*
 * srv_dispatch_record -- answer one RPC call record rec[0..len) from peer:
 * decode the header, check credentials, find the procedure, consult the
 * duplicate request cache, decode the arguments, run the handler with db
 * (NULL: no database connection), and encode the reply into *out (its
 * previous contents are replaced). Returns SRV_DISPATCH_REPLY, or
 * SRV_DISPATCH_DROP when nothing must be sent (an undecodable header, a
 * reply message, a retransmission still in progress, MOUNT without a
 * database). Thread-safe for distinct db and out. Never fails otherwise:
 * every problem of the call is an RPC error reply.
 */
srv_dispatch_result srv_dispatch_record(const srv_env *env, dbfs_conn *db, const void *rec,
                                        size_t len, const struct sockaddr *peer, socklen_t peerlen,
                                        bool tcp, srv_buf *out);

/* ---- transport and workers (srv_transport.c, srv_worker.c) ------------- */

typedef struct srv_server srv_server;
typedef struct srv_conn srv_conn;

/* One call for a worker. */
typedef struct srv_job {
    srv_conn *conn; /* TCP: a counted reference; NULL for UDP */
    struct sockaddr_storage peer;
    socklen_t peerlen;
    unsigned char *rec; /* g_malloc'd, owned by the job */
    size_t len;
    bool stop; /* not a call: the worker exits */
} srv_job;

typedef struct srv_worker {
    srv_server *srv;
    unsigned index;
    pthread_t thread;
    bool started, stop_sent;
    GAsyncQueue *queue;      /* of srv_job * */
    atomic_uint pending;     /* jobs queued or running */
    dbfs_conn *db;           /* NULL while the database is unreachable */
    bool db_down;            /* the last connection attempt failed (logged once) */
    int64_t next_connect_us; /* monotonic: earliest reconnection attempt */
    srv_buf out;             /* reply buffer, reused */
} srv_worker;

/* How long a TCP connection may sit without a complete call (Linux nfsd: 6 min). */
#define SRV_IDLE_TIMEOUT_S 360
/* Calls of one connection queued or running at once before reading stops. */
#define SRV_CONN_INFLIGHT_MAX 32
/* Reply bytes queued on one connection before reading stops. */
#define SRV_CONN_OUTQ_MAX (4u * 1024u * 1024u)
/* UDP calls queued per worker before datagrams are dropped. */
#define SRV_UDP_QUEUE_PER_WORKER 64
/* Worker thread stack: rpcgen's XDR recurses once per READDIR entry. */
#define SRV_WORKER_STACK (16u * 1024u * 1024u)

/* The running server: built by srv_run, shared by all threads. */
struct srv_server {
    srv_ctx ctx;
    const cfg *cfg;
    srv_program progs[SRV_PROGS_MAX];
    srv_env env;
    srv_stats stats;
    unsigned idle_timeout_s;

    /* transport (srv_transport.c); fds are -1 when not open */
    int epfd, tcp_fd, udp_fd, sig_fd, wake_fd;
    unsigned port;       /* the port actually bound */
    unsigned char *rbuf; /* event thread's read buffer */
    size_t rbuf_size;
    srv_conn *conns; /* open connections (event thread only) */
    unsigned nconns;
    atomic_uint udp_pending;
    bool stopping;            /* SIGINT/SIGTERM seen: no new calls */
    int64_t accept_resume_us; /* listener paused (EMFILE) until then; 0 = not */

    log_ratelimit *rl; /* log lines about misbehaving clients */

    /* workers (srv_worker.c) */
    srv_worker *workers;
    unsigned nworkers;
    unsigned next_worker;
    atomic_uint workers_running;
};

/*
 * srv_transport_open -- bind TCP (and UDP if configured) on the configured
 * address and port, and set up the event loop (epoll, signalfd for SIGINT,
 * SIGTERM, SIGUSR1, which the caller has blocked; an eventfd for workers).
 * Returns 0, or -1 after logging why (address in use, ...); what was
 * opened is closed by srv_transport_close either way.
 */
int srv_transport_open(srv_server *s);

/*
 * srv_transport_loop -- the event thread: accept, read, hand calls to the
 * workers, flush output, close idle connections, until SIGINT/SIGTERM;
 * then stop reading, tell the workers to stop after the calls they have,
 * wait for them and flush their replies (at most a few seconds). Returns
 * when every worker has exited.
 */
void srv_transport_loop(srv_server *s);

/* The write-back flusher (srv_flusher.c). */
typedef struct srv_flusher srv_flusher;

/*
 * srv_flusher_start -- start the thread that stores buffered writes once
 * they are [writeback] max_age_ms old. Returns it, or NULL when
 * write-back is off (or the thread could not start: logged).
 */
srv_flusher *srv_flusher_start(dbfs *fs, const cfg *c);

/*
 * srv_flusher_stop -- store everything still buffered (retrying a while
 * if the database is away; what cannot be stored is logged), stop the
 * thread and free f. Call after the workers have stopped. NULL is fine.
 */
void srv_flusher_stop(srv_flusher *f);

/* srv_transport_close -- close every socket and connection left. */
void srv_transport_close(srv_server *s);

/* srv_transport_wake -- wake the event thread (thread-safe). */
void srv_transport_wake(srv_server *s);

/*
 * srv_conn_reply -- send a reply record (len bytes, without mark) on c:
 * what the socket does not take now is queued and flushed by the event
 * thread. Dropped if the connection is closed. Thread-safe.
 */
void srv_conn_reply(srv_conn *c, const void *data, size_t len);

/*
 * srv_conn_done -- one call of c is finished (replied or dropped):
 * reading may resume; drops the job's reference. Thread-safe.
 */
void srv_conn_done(srv_conn *c);

/* srv_udp_reply -- send a reply datagram to peer (dropped if it cannot go now). */
void srv_udp_reply(srv_server *s, const struct sockaddr *peer, socklen_t peerlen, const void *data,
                   size_t len);

/*
 * srv_workers_start -- cfg threads workers, each with its own database
 * connection (opened by the worker; an unreachable database is retried).
 * Returns 0, or -1 after logging why a thread could not start (those that
 * started are stopped by srv_workers_stop/join).
 */
int srv_workers_start(srv_server *s);

/* srv_workers_submit -- queue a job on the least busy worker. */
void srv_workers_submit(srv_server *s, srv_job *job);

/* srv_workers_stop -- ask every worker to exit after its queued jobs. */
void srv_workers_stop(srv_server *s);

/* srv_workers_join -- wait for the workers, close their connections, free. */
void srv_workers_join(srv_server *s);

/* srv_job_free -- free a job (not the conn reference: srv_conn_done). */
void srv_job_free(srv_job *job);

/* ---- rpcbind (srv_rpcbind.c) --------------------------------------------- */

typedef struct {
    unsigned port;
    bool udp;
    bool nfs_set, mount_set; /* registrations we made, to undo at exit */
} srv_rpcbind;

/*
 * srv_rpcbind_register -- if a portmapper answers on 127.0.0.1:111 (within
 * a short timeout), register NFS v3 and MOUNT v3 for TCP (and UDP) at port.
 * Logs what it did; never fails the server.
 */
void srv_rpcbind_register(srv_rpcbind *r, unsigned port, bool udp);

/* srv_rpcbind_unregister -- undo srv_rpcbind_register, if it did anything. */
void srv_rpcbind_unregister(srv_rpcbind *r);

/*
 * srv_rpcbind_probe -- does a portmapper answer PMAP NULL on
 * 127.0.0.1:111 within half a second? Cannot fail.
 */
bool srv_rpcbind_probe(void);

/* ---- built-in portmapper (srv_portmap.c) ---------------------------------- */

typedef struct srv_portmap srv_portmap;

/*
 * srv_portmap_start -- make our programs findable through port 111, as
 * [server] portmap says: "off" registers with a running rpcbind (if
 * [server] rpcbind); "auto" does the same when a portmapper answers on
 * 127.0.0.1:111 and otherwise serves a built-in portmapper (PMAP v2,
 * rpcbind v3/v4) for NFS and MOUNT on [server] portmap_port; "on" always
 * serves the built-in one. *out is the running portmapper (NULL when
 * none was started; srv_portmap_stop it). Returns 0, or -1 after logging
 * why when "on" was asked for and the port cannot be bound ("auto" only
 * logs that clients will need explicit ports). rb receives what was
 * registered with rpcbind (srv_rpcbind_unregister undoes it).
 */
int srv_portmap_start(srv_server *s, srv_rpcbind *rb, srv_portmap **out);

/* srv_portmap_stop -- stop the built-in portmapper and free pm (NULL is fine). */
void srv_portmap_stop(srv_portmap *pm);

/*
 * srv_portmap_answer -- answer one portmapper call record rec[0..len)
 * that arrived on `local` over tcp (or UDP) for the mappings of pm: the
 * reply record goes into *out. Returns SRV_DISPATCH_REPLY, or
 * SRV_DISPATCH_DROP for a record that is not a decodable call.
 * Thread-safe. (Exposed for the portmapper's own threads and tests.)
 */
srv_dispatch_result srv_portmap_answer(const srv_portmap *pm, const void *rec, size_t len,
                                       const struct sockaddr *local, socklen_t locallen, bool tcp,
                                       srv_buf *out);

/* ---- metrics endpoint (srv_metrics.c) -------------------------------------- */

typedef struct srv_metrics srv_metrics;

/*
 * srv_metrics_start -- when [metrics] enable is set, serve GET /metrics
 * (Prometheus text format) on [metrics] listen and port with
 * libmicrohttpd's own thread; *out is the endpoint (NULL when disabled;
 * srv_metrics_stop it). Returns 0, or -1 after logging why the endpoint
 * cannot be served (the port is taken, ...).
 */
int srv_metrics_start(srv_server *s, srv_metrics **out);

/* srv_metrics_stop -- stop the endpoint and free m (NULL is fine). */
void srv_metrics_stop(srv_metrics *m);

/*
 * srv_metrics_text -- the whole metrics page of server s into out
 * (appended): srv_stats_metrics, then database, cache and server
 * figures. Cannot fail.
 */
void srv_metrics_text(srv_server *s, GString *out);

#endif /* PGNFS_SRV_INT_H */
