/*
 * srv_client.h -- asynchronous outgoing RPC calls (RFC 5531) from the
 * server to other hosts: NLM callbacks (GRANTED, the *_RES replies of the
 * *_MSG procedures), NSM SM_NOTIFY, registration with a system rpcbind.
 *
 * A srv_client owns one thread with an event loop. srv_client_submit
 * encodes the call at once (in the caller's thread) and returns; the
 * client's thread connects, sends, retransmits, matches the reply and
 * runs the caller's done function with the outcome. Nothing ever blocks
 * the submitting thread, and a host that never answers costs one pending
 * call until its timeout.
 *
 *   srv_client_new --> srv_client_submit ... (any thread, done() on the
 *   client's thread) --> srv_client_free (pending calls: -ECANCELED)
 *
 * Limits: at most max_pending calls are queued or in flight at once, at
 * most max_per_host of them to one destination address; beyond that
 * submit says -EBUSY (the caller retries later or drops the call).
 * Replies are taken up to max_reply bytes; anything a remote host sends
 * beyond that, or that does not decode, is dropped or fails the one call
 * it answers (-EPROTO).
 *
 * NOTES
 *   The runtime's own module: it knows no program and calls nothing above
 *   it. Threads: submit and stats from any thread (done functions
 *   included); free from any thread but the client's own (not from done).
 *   Ownership: the caller's args need only live during submit; res handed
 *   to done belongs to the client and is freed with xdr_free(res_xdr)
 *   after done returns (done may keep its contents by copying the struct
 *   and zeroing *res: xdr_free frees nothing of a zeroed result).
 *   Hostile replies: res_xdr should bound every variable-length field of
 *   the result (<N> in the .x file), since a reply is remote input.
 */
#ifndef PGNFS_SRV_CLIENT_H
#define PGNFS_SRV_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

typedef struct srv_client srv_client;

/* Defaults for the fields of srv_client_opts left 0. */
#define SRV_CLIENT_MAX_PENDING  256
#define SRV_CLIENT_MAX_PER_HOST 32
#define SRV_CLIENT_PMAP_PORT    111
#define SRV_CLIENT_MAX_REPLY    (64u * 1024u)
#define SRV_CLIENT_IDLE_MS      10000
#define SRV_CLIENT_TIMEOUT_MS   10000
/* Portmapper answers a client keeps at most (each for 30 s). */
#define SRV_CLIENT_PMAP_CACHE 256
/* Destinations (sockets) kept beyond max_pending: idle ones close first. */
#define SRV_CLIENT_SPARE_DESTS 64
/* Largest encoded call (header, credential and arguments) submit takes. */
#define SRV_CLIENT_CALL_MAX (64u * 1024u - 512u)

/* How a client is set up; every field left 0 takes its default. */
typedef struct {
    unsigned max_pending;  /* calls queued or in flight at once; beyond: -EBUSY */
    unsigned max_per_host; /* per destination address; beyond: -EBUSY */
    unsigned pmap_port;    /* where hosts' portmappers listen (111) */
    unsigned max_reply;    /* largest reply record or datagram taken, bytes */
    unsigned idle_ms;      /* a connection with no call this long is closed */
} srv_client_opts;

/*
 * srv_client_new -- a client with options o (NULL: every default); starts
 * its own thread. Returns it, or NULL after logging why (no epoll, no
 * eventfd, no thread).
 */
srv_client *srv_client_new(const srv_client_opts *o);

/*
 * srv_client_free -- stop the client: every pending call's done runs with
 * -ECANCELED (on the client's thread, before this returns), then the
 * thread ends and everything is freed. NULL is ignored. Never from a done
 * function (refused there with a critical log line: the client leaks
 * rather than deadlocks), and never while another thread may still
 * submit. A submit from a done running with -ECANCELED is refused with
 * -ECANCELED.
 */
void srv_client_free(srv_client *c);

/* One call. */
typedef struct {
    const struct sockaddr *addr; /* destination host (AF_INET or AF_INET6); its port 0 = ask */
    socklen_t addrlen;           /* the host's portmapper (PMAP v2 GETPORT, same transport) */
    bool tcp;
    uint32_t prog, vers, proc;
    xdrproc_t args_xdr;  /* NULL: no arguments */
    const void *args;    /* encoded during submit: need not outlive it */
    xdrproc_t res_xdr;   /* NULL: the reply's body is not decoded (void results) */
    size_t res_size;     /* sizeof the result struct res_xdr decodes */
    unsigned timeout_ms; /* the whole call, portmapper lookup and retransmissions
                          * included; 0 = SRV_CLIENT_TIMEOUT_MS */
    const char *machine; /* AUTH_SYS credential (at most 255 bytes); NULL = AUTH_NONE */
    uint32_t uid, gid;
    bool no_reply; /* send and forget (one datagram or one record): done runs
                    * with 0 once it has been sent */
} srv_client_call;

/*
 * What done is told, on the client's thread: err 0 (res decoded; NULL
 * when res_xdr is NULL or no_reply; freed with xdr_free after done
 * returns), -ETIMEDOUT (no reply within timeout_ms), -ECONNREFUSED (the
 * host refused the connection or the datagram: nothing listens there),
 * -EHOSTUNREACH (no route, host or network unreachable), -EPROTO (an
 * undecodable reply, an RPC-level error such as PROG_UNAVAIL or
 * AUTH_ERROR, or a peer that broke record marking), -ENOENT (the
 * portmapper knows no such program), -ECONNRESET (the TCP connection was
 * lost under the call twice: it is resent once on a new connection),
 * -ECANCELED (srv_client_free), or another negative errno a socket could
 * not be made with (-EMFILE).
 * done must not block; it may submit further calls.
 */
typedef void (*srv_client_done)(void *arg, int err, void *res);

/*
 * srv_client_submit -- send call; done(arg, ...) runs exactly once when it
 * has finished. Returns 0 (accepted), -EBUSY (max_pending or max_per_host
 * reached), -EINVAL (no address or family we speak, no done, a machine
 * name over 255 bytes, res_xdr without res_size, arguments that do not
 * encode or encode beyond SRV_CLIENT_CALL_MAX), -ENOMEM, or -ECANCELED
 * (the client is being freed); done never runs when it fails.
 */
int srv_client_submit(srv_client *c, const srv_client_call *call, srv_client_done done, void *arg);

/* Counters of what a client has seen since it started. */
typedef struct {
    uint64_t calls;            /* accepted by submit */
    uint64_t busy;             /* refused with -EBUSY */
    uint64_t replies;          /* replies that finished a call */
    uint64_t timeouts;         /* calls finished with -ETIMEDOUT */
    uint64_t retransmits;      /* UDP datagrams sent again */
    uint64_t pmap_lookups;     /* GETPORT calls made (cache misses) */
    uint64_t connects;         /* TCP connections opened */
    uint64_t unmatched;        /* replies for no call of ours: dropped */
    uint64_t bad_replies;      /* undecodable replies (calls failed -EPROTO) */
    uint64_t broken_streams;   /* TCP streams closed for broken record marking */
    uint64_t dropped_oversize; /* replies over max_reply: dropped */
    /* Gauges. */
    uint64_t pending;     /* calls accepted and not finished */
    uint64_t dests;       /* destinations with a socket (at most max_pending
                           * + SRV_CLIENT_SPARE_DESTS, plus those of lookups) */
    uint64_t pmap_cached; /* portmapper answers kept (at most SRV_CLIENT_PMAP_CACHE) */
} srv_client_stats;

/* srv_client_stats_get -- a snapshot of c's counters into *out. Cannot fail. */
void srv_client_stats_get(srv_client *c, srv_client_stats *out);

/*
 * srv_client_call_sync -- submit call and wait for its outcome: a helper
 * for threads that may block (start-up, shutdown, tests), never a worker
 * and never the client's own thread. The result is decoded into res
 * (res_size bytes, zeroed first; the caller xdr_frees it when 0 is
 * returned). Returns what done would be told, or submit's error.
 */
int srv_client_call_sync(srv_client *c, const srv_client_call *call, void *res);

#endif /* PGNFS_SRV_CLIENT_H */
