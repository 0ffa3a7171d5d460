/*
 * srv_client_int.h -- inside the outgoing RPC client (srv_client.h),
 * shared by its files only:
 *
 *   srv_client_msg.c   call and reply messages (libtirpc's xdr_callmsg,
 *                      xdr_replymsg)
 *   srv_client_call.c  a call's bookkeeping: keys, timer order, record,
 *                      start, end
 *   srv_client_dest.c  destinations: one TCP connection or one connected
 *                      UDP socket per (address, port, transport)
 *   srv_client_pmap.c  portmapper lookups and their cache
 *   srv_client.c       the client: submit, limits, the thread and its
 *                      loop, timers
 *
 *   Each file calls only those above it in this list; the end of a call
 *   reaches the queues of the two files above srv_client_call.c through
 *   the pointers of c->up.
 *
 *   A call's life (the function that moves it in brackets):
 *
 *     submit --> INBOX --(srv_client_start)--+--port 0--> PMAP (waiting on a lookup)
 *                                            |               | port known
 *                                            |<--------------+ READY (c->ready)
 *                                            v
 *                  (srv_cdest_route) WAIT: queued on its destination
 *                       |  connected (TCP) / writable (UDP)
 *                       v
 *                  WRITE: its record being written (TCP)
 *                       |  all sent (srv_cdest_flush)
 *                       v
 *                  SENT: awaiting the reply (xid table) --> FINISHED
 *                        UDP: sent again at each retransmission time
 *
 *   From every state: the deadline (srv_client_timers) or a failure of the
 *   destination (srv_cdest_fail) finishes the call (srv_client_finish);
 *   no_reply calls finish when sent. A TCP connection lost puts its calls
 *   into READY, to be routed to a new connection; a call in WRITE or SENT
 *   when its connection is lost a second time finishes with -ECONNRESET.
 *   A call that ends while its record is half written leaves the rest of
 *   the record to its destination (orphan), which writes it out first so
 *   the stream stays framed.
 *
 * NOTES
 *   Everything here but the inbox, the counters of pending calls and the
 *   stats is owned by the client's thread and touched by no other.
 *   Invariants: a call is in at most one queue through its link (a
 *   destination's wait/write/sent queue, or a lookup's waiters); it is in
 *   the xid table and the timer sequence from srv_client_start until
 *   srv_client_finish; every destination with calls has an open socket or
 *   is connecting.
 */
#ifndef PGNFS_SRV_CLIENT_INT_H
#define PGNFS_SRV_CLIENT_INT_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <glib.h>

#include "srv_client.h"
#include "srv_record.h"

/* First UDP retransmission after this long; doubles up to the cap. */
#define SRV_CLIENT_RTO_MS     500
#define SRV_CLIENT_RTO_MAX_MS 4000
/* How long a portmapper's answer is believed. */
#define SRV_CLIENT_PMAP_TTL_MS 30000
/* A call whose TCP connection was lost this often fails (-ECONNRESET). */
#define SRV_CLIENT_RESENDS_MAX 2
/* Reads from one socket per event, so one peer cannot starve the rest. */
#define SRV_CLIENT_READS_PER_EVENT 16

/* An address and port as a hash key (port 0 where it does not matter);
 * IPv4-mapped IPv6 addresses are folded to IPv4. */
typedef struct {
    uint8_t family; /* AF_INET or AF_INET6 */
    uint8_t tcp;
    uint16_t port;
    unsigned char ip[16];
    uint32_t prog, vers; /* portmapper cache keys only; else 0 */
} srv_ckey;

typedef struct srv_cdest srv_cdest;
typedef struct srv_cpmap srv_cpmap;
typedef struct srv_ccall srv_ccall;

typedef enum {
    SRV_CCALL_INBOX, /* submitted, not yet taken by the thread */
    SRV_CCALL_PMAP,  /* waiting for its port (pmap->waiters) */
    SRV_CCALL_READY, /* port known or connection lost: to route (c->ready) */
    SRV_CCALL_WAIT,  /* queued on its destination (dest->wait) */
    SRV_CCALL_WRITE, /* its record being written (dest->write) */
    SRV_CCALL_SENT,  /* awaiting its reply (dest->sent) */
    SRV_CCALL_LOOSE  /* in no queue (being moved or finished) */
} srv_ccall_state;

/* One call, from submit to done. */
struct srv_ccall {
    srv_client *c;
    srv_ccall_state state;
    uint32_t xid;
    struct sockaddr_storage addr; /* destination; port 0 until resolved */
    socklen_t addrlen;
    bool tcp, no_reply;
    bool internal;  /* a portmapper lookup: not counted against the limits */
    bool from_pmap; /* its port came from a lookup (refused: forget it) */
    uint32_t prog, vers;
    unsigned char *rec; /* 4-byte record mark + the call message (g_malloc'd) */
    size_t len;         /* of rec, mark included */
    size_t wrote;       /* bytes of rec written (TCP, state WRITE) */
    unsigned resends;   /* TCP connections lost under it */
    xdrproc_t res_xdr;
    size_t res_size;
    srv_client_done done;
    void *arg;
    srv_ckey host;        /* the address the per-host limit counts */
    int64_t deadline;     /* monotonic µs */
    int64_t retrans_at;   /* next UDP retransmission (state SENT) */
    unsigned rto_ms;      /* current retransmission interval */
    uint64_t seq;         /* tie-break for the timer order */
    GSequenceIter *timer; /* in c->timers, keyed by srv_ccall_when() */
    GList link;           /* in dest->wait/write/sent or pmap->waiters */
    GList all;            /* in c->calls */
    srv_cdest *dest;      /* in WAIT, WRITE, SENT */
    srv_cpmap *pmap;      /* in PMAP */
};

typedef enum {
    SRV_CDEST_CONNECTING, /* TCP: connect in progress */
    SRV_CDEST_OPEN        /* connected (TCP) or ready (UDP) */
} srv_cdest_state;

/* One destination: (address, port, transport) with its socket. */
struct srv_cdest {
    srv_client *c;
    srv_ckey key;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    int fd;
    srv_cdest_state state;
    bool want_out;         /* EPOLLOUT is registered */
    bool dead;             /* closed: in the graveyard until the batch ends */
    GQueue wait;           /* calls not yet written */
    GQueue write;          /* TCP: calls being written, head partially */
    GQueue sent;           /* calls awaiting their reply */
    srv_record rec;        /* TCP reply reassembly */
    unsigned char *orphan; /* the rest of a record whose call ended (g_malloc'd) */
    size_t orphan_len, orphan_wrote;
    int64_t idle_since; /* monotonic µs when it last became empty */
};

/* A portmapper answer, known or being asked. */
struct srv_cpmap {
    srv_client *c;
    srv_ckey key; /* host, transport, prog, vers */
    bool known;   /* port is valid until expires */
    unsigned port;
    int64_t expires;
    srv_ccall *lookup; /* the GETPORT call in flight (not known) */
    GQueue waiters;    /* calls waiting for the port */
};

/* Counters (srv_client_stats), updated from any thread. */
typedef struct {
    atomic_uint_fast64_t calls, busy, replies, timeouts, retransmits, pmap_lookups, connects,
        unmatched, bad_replies, broken_streams, dropped_oversize;
    atomic_uint_fast64_t dests, pmap_cached; /* gauges, set by the thread */
} srv_client_counters;

/* What the end of a call needs from the files above srv_client_call.c. */
typedef struct {
    void (*dest_unlink)(srv_client *c, srv_ccall *call);       /* srv_cdest_unlink */
    void (*pmap_unlink)(srv_client *c, srv_ccall *call);       /* srv_cpmap_unlink */
    void (*pmap_forget)(srv_client *c, const srv_ccall *call); /* srv_cpmap_forget */
} srv_client_up;

struct srv_client {
    srv_client_opts o; /* defaults filled in */
    srv_client_up up;  /* set by srv_client_new */
    /* Shared with submitting threads, under lock. */
    GMutex lock;
    GQueue inbox;         /* calls submitted, not yet taken by the thread */
    unsigned pending;     /* calls accepted and not finished (not internal) */
    GHashTable *per_host; /* srv_ckey (host) -> count of pending calls */
    uint32_t next_xid;
    bool stopping;
    srv_client_counters n;
    /* The thread's own. */
    GThread *thread;
    int epfd, wake_fd;
    GHashTable *xids;     /* xid -> srv_ccall */
    GHashTable *dests;    /* srv_ckey -> srv_cdest */
    GHashTable *pmaps;    /* srv_ckey -> srv_cpmap */
    unsigned pmaps_known; /* entries of pmaps that are known */
    GSequence *timers;    /* srv_ccall, earliest first */
    GQueue calls;         /* every call taken from the inbox and not finished */
    GQueue ready;         /* calls whose port became known: route them */
    GQueue graveyard;     /* srv_cdest closed in this batch */
    uint64_t seq;
    unsigned char *rbuf; /* receive buffer, o.max_reply bytes */
    int64_t next_idle_scan;
};

/* ---- srv_client_call.c ----------------------------------------------------- */

/* Microseconds per millisecond, for deadlines kept in monotonic µs. */
#define SRV_CLIENT_US_PER_MS 1000

/* srv_ccall_new -- a call record for call (not yet encoded nor begun),
 * to finish with done(arg). Cannot fail. */
srv_ccall *srv_ccall_new(srv_client *c, const srv_client_call *call, srv_client_done done,
                         void *arg);
/* srv_ccall_when -- when call needs attention next: its deadline, or an
 * earlier UDP retransmission. */
int64_t srv_ccall_when(const srv_ccall *call);
/* srv_client_uncount -- give back a call's place under the limits (its
 * host's count and the pending count), under c->lock. */
void srv_client_uncount(srv_client *c, const srv_ckey *host);
/* srv_client_begin -- call (encoded, with its xid) enters the client's
 * bookkeeping: the list of calls, the xid table, the timers. */
void srv_client_begin(srv_client *c, srv_ccall *call);

/* srv_client_finish -- call is over: unlink it everywhere, run its done
 * with err and res (freed here after done), free it. */
void srv_client_finish(srv_client *c, srv_ccall *call, int err, void *res);
/* srv_client_retime -- call's deadline or retransmission time changed. */
void srv_client_retime(srv_client *c, srv_ccall *call);
/* srv_client_internal -- an internal call (a portmapper lookup), not
 * counted against the limits; it is routed from the ready queue, so done
 * never runs before this returns. Never fails. */
srv_ccall *srv_client_internal(srv_client *c, const srv_client_call *call, srv_client_done done,
                               void *arg);
/* srv_client_key_of -- the key of sa (port and transport included). */
void srv_client_key_of(const struct sockaddr *sa, bool tcp, srv_ckey *k);
guint srv_client_key_hash(gconstpointer k);
gboolean srv_client_key_equal(gconstpointer a, gconstpointer b);
/* srv_client_set_port -- set the port of a sockaddr_in/in6. */
void srv_client_set_port(struct sockaddr_storage *sa, unsigned port);
/* srv_client_port_of -- the port of a sockaddr_in/in6. */
unsigned srv_client_port_of(const struct sockaddr_storage *sa);

/* ---- srv_client_msg.c ------------------------------------------------------ */

/*
 * srv_client_encode -- the record (4 bytes of room for the mark, then the
 * call message with xid) of call into *rec (g_malloc'd) and *len. Returns
 * 0, or -EINVAL (no encoding, beyond SRV_CLIENT_CALL_MAX, machine name too
 * long).
 */
int srv_client_encode(const srv_client_call *call, uint32_t xid, unsigned char **rec, size_t *len);

/*
 * srv_client_peek -- the xid of a reply message, if msg[0..len) can be
 * one. Returns true and *xid, or false (not a reply: drop it).
 */
bool srv_client_peek(const unsigned char *msg, size_t len, uint32_t *xid);

/*
 * srv_client_decode -- the reply msg[0..len) to a call expecting res_xdr:
 * *res is a zeroed res_size block (g_malloc'd, NULL when res_xdr is NULL)
 * holding the decoded result. Returns 0, or -EPROTO (undecodable, denied,
 * not SUCCESS) with *res NULL and everything freed.
 */
int srv_client_decode(const unsigned char *msg, size_t len, xdrproc_t res_xdr, size_t res_size,
                      void **res);

/* ---- srv_client_dest.c ----------------------------------------------------- */

/* srv_cdest_route -- queue call (port known) on its destination, which is
 * made, connected or written to as needed. May finish call. */
void srv_cdest_route(srv_client *c, srv_ccall *call);
/* srv_cdest_event -- epoll events on d's socket. */
void srv_cdest_event(srv_client *c, srv_cdest *d, uint32_t events);
/* srv_cdest_unlink -- take call (WAIT, WRITE or SENT) off its destination.
 * A record cut short on a TCP stream closes the stream (the other calls on
 * it go back to WAIT). */
void srv_cdest_unlink(srv_client *c, srv_ccall *call);
/* srv_cdest_retransmit -- send a UDP call in SENT once more. */
void srv_cdest_retransmit(srv_client *c, srv_ccall *call);
/* srv_cdest_idle_scan -- close destinations empty for o.idle_ms; returns
 * when the next one may be due (monotonic µs), or 0 if none is idle. */
int64_t srv_cdest_idle_scan(srv_client *c, int64_t now);
/* srv_cdest_close -- close d now; calls on it fail with err. */
void srv_cdest_close(srv_client *c, srv_cdest *d, int err);
/* srv_cdest_free -- free a closed destination (after the batch). */
void srv_cdest_free(srv_cdest *d);

/* ---- srv_client_pmap.c ----------------------------------------------------- */

/* srv_cpmap_resolve -- call's port is 0: find it in the cache (then it is
 * routed at once) or wait for a lookup (started if none runs). */
void srv_cpmap_resolve(srv_client *c, srv_ccall *call);
/* srv_cpmap_unlink -- take call (PMAP) off its lookup's waiters. */
void srv_cpmap_unlink(srv_client *c, srv_ccall *call);
/* srv_cpmap_forget -- a call to a port from the cache was refused: drop
 * the answer so the next call asks again. */
void srv_cpmap_forget(srv_client *c, const srv_ccall *call);
/* srv_cpmap_free -- free a cache entry (the GHashTable's value destroy). */
void srv_cpmap_free(gpointer p);

#endif /* PGNFS_SRV_CLIENT_INT_H */
