/*
 * srv_transport.h -- the sockets side of the runtime, shared by its files
 * (the daemon sees only srv_rt.h): listeners (srv_listen.c), TCP
 * connections (srv_conn.c) and the table that bounds them
 * (srv_conntab.c), UDP (srv_udp.c), and the one event thread that drives
 * them all (srv_loop.c).
 *
 * NOTES
 *   Threads: the event thread owns every socket: it accepts, reads,
 *   reassembles records, hands calls to the workers (srv_worker.h) as jobs
 *   whose sink is a connection or a UDP listener, flushes queued output,
 *   closes idle connections and handles signals. A worker sends its
 *   reply itself through the job's ops (srv_conn_job_ops, srv_udp_job_ops);
 *   what a TCP socket does not take goes to the connection's output
 *   queue, which the event thread flushes.
 *
 *   Memory: a srv_conn is reference counted: the event thread holds one
 *   reference while the connection is open, every queued job holds one;
 *   the last srv_conn_unref closes the fd and frees it. A connection the
 *   event thread closes goes to the graveyard until the end of the epoll
 *   batch, so a later event of the same batch never names freed memory.
 */
#ifndef PGNFS_SRV_TRANSPORT_H
#define PGNFS_SRV_TRANSPORT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <glib.h>

#include "log.h"
#include "srv_buf.h"
#include "srv_dispatch.h"
#include "srv_listen.h"
#include "srv_record.h"
#include "srv_stats.h"
#include "srv_worker.h"

/* Listeners one runtime serves at most (the NFS port, the portmapper). */
#define SRV_LISTENERS_MAX 8
/* Program numbers one listener serves at most. */
#define SRV_LISTEN_PROGS_MAX 8
/* Calls of one connection queued or running at once before reading stops. */
#define SRV_CONN_INFLIGHT_MAX 32
/* Reply bytes queued on one connection before reading stops. */
#define SRV_CONN_OUTQ_MAX (4u * 1024u * 1024u)
/* UDP calls queued per worker before datagrams are dropped. */
#define SRV_UDP_QUEUE_PER_WORKER 64

typedef struct srv_transport srv_transport;
typedef struct srv_listener srv_listener;
typedef struct srv_conn srv_conn;

/* What an epoll registration names (epoll_event.data.ptr). */
typedef enum { SRV_FD_LISTEN, SRV_FD_UDP, SRV_FD_CONN, SRV_FD_SIGNAL, SRV_FD_WAKE } srv_fd_kind;
typedef struct {
    srv_fd_kind kind;
    void *obj; /* the srv_listener, srv_conn or srv_transport */
} srv_fd_tag;

/* An address without its port, IPv4-mapped IPv6 folded to IPv4. */
typedef struct {
    uint8_t family; /* AF_INET, AF_INET6, or 0 (no IP address) */
    unsigned char addr[16];
} srv_addr;

/* srv_addr_of -- the address of sa (family 0 for non-IP). Cannot fail. */
void srv_addr_of(const struct sockaddr *sa, socklen_t len, srv_addr *out);

/* Whether a connection's client is admitted (see srv_conn.c). */
typedef enum {
    SRV_ADMIT_PENDING, /* no call finished yet: not known */
    SRV_ADMIT_YES,     /* an export admits the address (or the listener admits all) */
    SRV_ADMIT_NO       /* none does: the connection closes after its replies */
} srv_admission;

struct srv_listener {
    srv_transport *t;
    srv_fd_tag tcp_tag, udp_tag;
    char *name; /* "nfs", "portmapper": for logs */
    int tcp_fd, udp_fd;
    int family; /* of the bound address */
    unsigned port;
    uint32_t prognums[SRV_LISTEN_PROGS_MAX]; /* program numbers served here */
    unsigned nprognums;
    uint32_t progs; /* srv_origin.progs of its calls: the registered versions of those */
    bool (*admit)(void *user, const struct sockaddr *peer, socklen_t len); /* NULL: all */
    void *admit_user;
    unsigned idle_timeout_s;
    size_t record_max;
    int64_t accept_resume_us; /* accepting paused (EMFILE) until then; 0 = not */
    atomic_uint udp_pending;  /* UDP calls queued or running */
};

struct srv_conn {
    srv_fd_tag tag;
    atomic_int refs;
    int fd;
    srv_transport *t;
    srv_listener *l;
    struct sockaddr_storage peer, local;
    socklen_t peerlen, locallen;
    srv_addr addr;
    char name[LOG_PEER_STRLEN];

    /* event thread only */
    srv_record rec;
    int64_t last_call_us; /* monotonic time of the last complete call (or accept) */
    srv_conn *prev, *next;
    bool gone;    /* closed by the event thread: ignore its events */
    bool evicted; /* closed to make room (episodes do not end by it) */

    /* under lock */
    pthread_mutex_t lock;
    bool closed;   /* CLOSED: off epoll, replies dropped */
    bool eof;      /* the client sent FIN: DRAINING */
    bool stopping; /* the server is shutting down: no reading */
    bool shut;     /* shutdown(2) done to get the event thread to close */
    srv_admission admission;
    GQueue outq; /* of srv_out * (srv_conn.c) */
    size_t out_bytes;
    unsigned inflight;
    uint32_t events; /* the mask registered with epoll */
};

/* Per-address connection counts (srv_conntab.c). */
typedef struct srv_addr_count srv_addr_count;

/* The open connections and the limits on them (event thread only). */
typedef struct {
    srv_conn *head;
    unsigned n;
    unsigned max;              /* [server] max_connections */
    unsigned max_per_addr;     /* [server] max_connections_per_address; 0: no cap */
    GHashTable *per_addr;      /* srv_addr * -> srv_addr_count * */
    bool full;                 /* a "table full" episode is on (logged once) */
    uint64_t evicted, refused; /* during the episode */
} srv_conntab;

struct srv_transport {
    int epfd, sig_fd, wake_fd;
    srv_fd_tag sig_tag, wake_tag;
    srv_listener *listeners[SRV_LISTENERS_MAX];
    unsigned nlisteners;
    unsigned char *rbuf; /* the event thread's read buffer */
    size_t rbuf_size;
    srv_conntab tab;
    srv_conn *graveyard; /* closed this batch, released after it */
    srv_workers *workers;
    /* The calls answered on the event thread (srv_dispatch_quick): what
     * dispatch shares (NULL: none are), and their reply buffer. */
    const srv_env *env;
    srv_buf quick_out;
    srv_stats *stats;
    log_ratelimit *rl; /* lines about misbehaving clients */
    unsigned udp_queue_max;
    bool stopping; /* SIGINT/SIGTERM seen: no new calls */
};

/* ---- the connection table (srv_conntab.c) --------------------------------- */

/* srv_conntab_init -- an empty table with these limits. Cannot fail. */
void srv_conntab_init(srv_conntab *tab, unsigned max, unsigned max_per_addr);
/* srv_conntab_clear -- free the per-address counts (the table must be empty). */
void srv_conntab_clear(srv_conntab *tab);
/* srv_conntab_add -- link c and count it for its address. */
void srv_conntab_add(srv_conntab *tab, srv_conn *c);
/* srv_conntab_remove -- unlink c; ends the episodes the table has left
 * (unless c was evicted: the connection it made room for comes next). */
void srv_conntab_remove(srv_conntab *tab, srv_conn *c);

/*
 * srv_conntab_victim -- what a new connection from addr must close to get
 * in: NULL with *ok true when there is room; a connection to close (with
 * *why, for the log); or NULL with *ok false when it must be refused
 * (every connection that could go has calls running or replies queued).
 * Counts the eviction or refusal and logs the episode it begins.
 */
srv_conn *srv_conntab_victim(srv_conntab *tab, const srv_addr *addr, const struct sockaddr *peer,
                             socklen_t peerlen, const char **why, bool *ok);

/* ---- connections (srv_conn.c) ------------------------------------------------ */

/*
 * srv_conn_open -- a connection for accepted socket fd from peer on
 * listener l: registered with epoll and the table. Returns it, or NULL
 * after logging why (fd closed).
 */
srv_conn *srv_conn_open(srv_listener *l, int fd, const struct sockaddr *peer, socklen_t peerlen);

/* srv_conn_close -- CLOSED: off epoll, shut down, unlinked, to the
 * graveyard; why (NULL: quiet) goes to the debug log. Event thread. */
void srv_conn_close(srv_transport *t, srv_conn *c, const char *why);

/* srv_conn_event -- handle epoll events ev of c. Event thread. */
void srv_conn_event(srv_transport *t, srv_conn *c, uint32_t ev);

/* srv_conn_stop -- the server stops: no more reading of c; shut it down
 * if nothing is left to send. Event thread. */
void srv_conn_stop(srv_conn *c);

/* srv_conn_idle -- no calls running, no replies queued. Takes c's lock. */
bool srv_conn_idle(srv_conn *c);

/* srv_conn_unref -- drop a reference; the last one closes the fd and frees c. */
void srv_conn_unref(srv_conn *c);

/* ---- listeners (srv_listen.c) ------------------------------------------------- */

/*
 * srv_listen_add -- bind spec's address (TCP, and UDP if asked) for the
 * program numbers spec names (l->progs, the mask of their registered
 * versions, is the caller's to keep up to date). Returns the listener, or
 * NULL with *err = -errno (nothing kept) and *failed saying what could
 * not be bound ("tcp", "udp", "address"); logs nothing.
 */
srv_listener *srv_listen_add(srv_transport *t, const srv_listen *spec, unsigned *port,
                             const char **failed, int *err);

/* srv_listener_free -- close l's sockets and free it (NULL is fine). */
void srv_listener_free(srv_listener *l);

/* srv_listen_accept -- accept what l's TCP socket has. Event thread. */
void srv_listen_accept(srv_listener *l);

/* srv_listen_resume -- accept again on l if a pause (EMFILE) is over. */
void srv_listen_resume(srv_listener *l, int64_t now);

/* ---- UDP (srv_udp.c) ---------------------------------------------------------- */

/* srv_udp_setup -- ask for the local address of every datagram (pktinfo)
 * on UDP socket fd of family. Returns 0 or -errno. */
int srv_udp_setup(int fd, int family);

/* srv_udp_readable -- read what l's UDP socket has, hand calls to the
 * workers. Event thread. */
void srv_udp_readable(srv_listener *l);

/* ---- the event loop (srv_loop.c) ------------------------------------------------ */

/*
 * srv_transport_new -- the event machinery: epoll, a signalfd for SIGINT,
 * SIGTERM and SIGUSR1 (which the caller has blocked in every thread), an
 * eventfd for workers. Returns it, or NULL after logging why.
 */
srv_transport *srv_transport_new(unsigned max_conns, unsigned max_per_addr, srv_stats *stats,
                                 log_ratelimit *rl);

/*
 * srv_transport_loop -- the event thread: accept, read, hand calls to the
 * workers, flush output, close idle connections, until SIGINT/SIGTERM;
 * then stop reading, tell the workers to stop after the calls they have,
 * wait for them and flush their replies (at most a few seconds). Returns
 * when every worker has exited.
 */
void srv_transport_loop(srv_transport *t);

/* srv_transport_wake -- wake the event thread (any thread; user is the
 * srv_transport, so it can be a worker's on_exit). */
void srv_transport_wake(void *user);

/* srv_transport_free -- close every socket and connection left, free t. */
void srv_transport_free(srv_transport *t);

#endif /* PGNFS_SRV_TRANSPORT_H */
