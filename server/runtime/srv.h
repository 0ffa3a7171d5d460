/*
 * srv.h -- the RPC runtime as a program sees it: how a program describes
 * itself to the runtime (srv_program, srv_proc), the per-request context
 * every handler gets (srv_req), request memory, and the calls a handler
 * may make. The runtime knows no program: NFS, MOUNT, the portmapper
 * (and later NLM and NSM) all register the same way.
 *
 * Registering a program (srv_rt.h):
 *
 *   static const srv_proc my_procs[] = {[0] = {.name = "NULL", ...}, ...};
 *   static const srv_program my_v1 = {.name = "my1", .prog = 100999,
 *       .vers = 1, .procs = my_procs, .nprocs = G_N_ELEMENTS(my_procs)};
 *   srv_rt_register(rt, &my_v1);         -- once per version
 *   srv_rt_listen(rt, &(srv_listen){..., .progs = (uint32_t[]){100999},
 *                                         .nprogs = 1}, ...);
 *
 * A call names (program, version, procedure). The runtime answers
 * PROG_UNAVAIL when no registered program of that number is served where
 * the call arrived, PROG_MISMATCH with the lowest and highest version
 * registered when the version is not, PROC_UNAVAIL for a procedure
 * number beyond the table or an entry without a name, and otherwise
 * decodes the arguments, runs the handler and encodes its result.
 *
 * NOTES
 *   A handler receives decoded arguments and a zeroed result struct and
 *   always "succeeds" at the RPC level: the program's status lives in the
 *   result. RPC-level errors (GARBAGE_ARGS, PROC_UNAVAIL, AUTH_ERROR) come
 *   only from the runtime's dispatch.
 *
 *   Memory: anything a handler puts into its result (handles, names, data,
 *   entry lists) is allocated with srv_req_alloc() and lives until the reply
 *   has been encoded; dispatch releases it all at once. Handlers never use
 *   static buffers and never free what they allocated that way. Decoded
 *   arguments belong to dispatch, which frees them after the reply.
 *   Descriptors (srv_program, srv_proc) are the program's and must outlive
 *   the runtime they are registered with.
 *
 *   Threads: a srv_req is owned by the worker thread that runs it. Handlers
 *   of one program run on several workers at once; whatever a program
 *   shares between calls (its ctx) it locks itself.
 */
#ifndef PGNFS_SRV_H
#define PGNFS_SRV_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <glib.h>
#include <rpc/rpc.h>

#include "cfg.h"
#include "dbfs.h"
#include "log.h"

/* Largest READ/WRITE payload we accept and advertise (FSINFO rtmax/wtmax). */
#define SRV_IO_MAX (1024u * 1024u)
/* Largest RPC record we accept over TCP: the payload plus headers. */
#define SRV_RECORD_MAX (SRV_IO_MAX + 64u * 1024u)

/* The programs' shared context (server/export/exp.h): opaque to
 * the runtime, which hands it to every handler as req->srv. */
typedef struct srv_ctx srv_ctx;
typedef struct srv_program srv_program;

/* The client's AUTH_SYS credential as it arrived (before squashing). */
typedef struct {
    bool present; /* false: AUTH_NONE (or, for SRV_AUTH_ANY programs, anything else) */
    uint32_t uid, gid;
    uint32_t ngroups;
    uint32_t groups[DBFS_NGROUPS_MAX];
    char machine[256];
} srv_authsys;

typedef struct srv_alloc_block srv_alloc_block;
struct srv_buf;

typedef struct srv_req {
    srv_ctx *srv;                 /* the programs' shared context */
    const srv_program *prog;      /* the program called; its own state is prog->ctx */
    uint32_t proc;                /* the procedure number called */
    dbfs_conn *db;                /* the worker's connection (NULL without one) */
    struct sockaddr_storage peer; /* where the call came from */
    socklen_t peerlen;
    struct sockaddr_storage local; /* the local address it arrived on */
    socklen_t locallen;            /* 0: not known */
    bool tcp;
    uint32_t xid;
    srv_authsys auth;
    /* Program state of this call: filled by nfs3_fh_in() from the handle's
     * export -- the export, the client entry that admitted the caller, and
     * the caller after squashing. The runtime never reads them. */
    const cfg_export *export;
    const cfg_client *client;
    dbfs_cred cred;
    /* The runtime's: request memory and the per-client log limiter, and
     * whether the handler asked for no reply (srv_req_drop); the reply
     * buffer and the payload placed in it (srv_req_payload). */
    srv_alloc_block *allocs;
    log_ratelimit *rl;
    bool drop;
    struct srv_buf *out;
    unsigned char *payload;
    size_t payload_cap;
} srv_req;

/* One procedure of a program version. An entry without a name is not
 * served (PROC_UNAVAIL), like a number beyond the table. */
typedef struct {
    const char *name;
    xdrproc_t args_xdr; /* NULL: no arguments */
    xdrproc_t res_xdr;  /* NULL: no result */
    size_t args_size;
    size_t res_size;
    void (*handler)(srv_req *req, void *args, void *res);
    /* Non-idempotent: replies are kept in the duplicate request cache. */
    bool non_idempotent;
    /* Over UDP this procedure is PROC_UNAVAIL: its reply is many times the
     * size of its call (an amplifier for spoofed requests). */
    bool tcp_only;
    /* NULL, or the procedure answered from memory on the event thread
     * (srv_dispatch_quick), without a hand-off to a worker: fill res (a
     * payload, srv_req_payload, is allowed) and return true, or return
     * false, having changed and counted nothing, to leave the call to a
     * worker and its handler. req->db is NULL. It must not block: no
     * database, no name resolution, no waiting for a lock held across
     * anything slow. Idempotent procedures only. */
    bool (*quick)(srv_req *req, void *args, void *res);
} srv_proc;

/* Which credentials a program's procedures other than NULL (number 0,
 * which needs none) take. */
typedef enum {
    SRV_AUTH_SYS = 0, /* AUTH_SYS, parsed strictly; AUTH_NONE is TOOWEAK,
                       * other flavors REJECTEDCRED */
    SRV_AUTH_ANY = 1  /* any flavor: the program needs no identity (a
                       * well-formed AUTH_SYS is still parsed into req->auth) */
} srv_auth;

/* A status a program's results may carry, with its name for statistics,
 * the slow-call log and the metrics page. */
typedef struct {
    uint32_t value;
    const char *name;
} srv_status;

/*
 * srv_program -- one version of one program, as registered with the
 * runtime (srv_rt_register). Every field but name, prog, vers, procs and
 * nprocs may be left zero.
 */
struct srv_program {
    const char *name; /* "nfs3", "mount3": logs, statistics, metric labels */
    uint32_t prog, vers;
    const srv_proc *procs; /* indexed by procedure number */
    unsigned nprocs;
    srv_auth auth;
    /* Procedures other than NULL need the worker's database connection. */
    bool needs_db;
    /* Without a database connection (needs_db): fill res with a "try again
     * later" result for procedure proc and return true, or return false to
     * drop the call (the client retransmits). NULL: drop. */
    bool (*retry_later)(uint32_t proc, void *res);
    /* May the reply with result res be kept in the duplicate request cache
     * (non-idempotent procedures)? A result that says "nothing was done,
     * try again" must not be. NULL: always. */
    bool (*cacheable)(uint32_t proc, const void *res);
    /* The status of result res of procedure proc into *status (a value of
     * statuses[]); false when that procedure's result has none. NULL:
     * results carry no status the runtime counts. */
    bool (*status_of)(uint32_t proc, const void *res, uint32_t *status);
    const srv_status *statuses; /* every status, for counters and names */
    unsigned nstatuses;
    /* The metrics page's counter of replies by status (label "status"),
     * e.g. "pgnfs_nfs3_replies_total", and its help text. */
    const char *status_metric, *status_help;
    /* The program's own state, for its handlers (req->prog->ctx). */
    void *ctx;
};

/*
 * srv_req_alloc -- n zeroed bytes that live until the reply to this request
 * has been sent. Never returns NULL (aborts on exhaustion, like g_malloc).
 */
void *srv_req_alloc(srv_req *req, size_t n);
/*
 * srv_req_payload -- n bytes (not zeroed) for the bulk data of the result
 * (a READ's bytes), which the handler fills before it returns; they live
 * until the reply has been sent. When the result's encoding carries (a
 * prefix of) exactly these bytes as the contents of one opaque, the reply
 * is built around them where they are: they are neither copied nor
 * zeroed. At most one per request (a second call returns srv_req_alloc
 * memory). Never returns NULL.
 */
void *srv_req_payload(srv_req *req, size_t n);
/* srv_req_strdup -- a copy of s in request memory. Never returns NULL. */
char *srv_req_strdup(srv_req *req, const char *s);
/* srv_req_release -- free every srv_req_alloc block of req (dispatch calls
 * it); on a thread between srv_req_keep_begin and _end they are kept for
 * its next requests instead. */
void srv_req_release(srv_req *req);
/* srv_req_keep_begin -- this thread (a worker) keeps released request
 * memory for its next requests (up to SRV_ALLOC_KEEP bytes) instead of
 * freeing it; srv_req_keep_end frees what it keeps and stops. */
void srv_req_keep_begin(void);
void srv_req_keep_end(void);

/*
 * srv_req_drop -- send no reply to this call (its result is discarded and
 * never kept for replays): the client sends it again after its timeout.
 * For a handler whose program has no "try again later" status (MOUNT)
 * when the database is away for a moment. Cannot fail.
 */
void srv_req_drop(srv_req *req);

/*
 * srv_req_complain -- one log line about something the caller of req did
 * wrong ("nfs3 from 10.0.0.5:871: bad file handle (12 bytes)"), rate-limited
 * per client address like dispatch's own lines about bad calls (the count
 * of lines suppressed is appended to the next one let through). Cannot fail.
 */
void srv_req_complain(srv_req *req, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/*
 * srv_peer_host -- the request's peer address as numeric text, without the
 * port, into buf ("?" when it has no numeric form). Cannot fail.
 */
void srv_peer_host(const srv_req *req, char *buf, size_t len);

/* srv_peer_port -- the peer's source port; 65535 for non-IP peers. */
unsigned srv_peer_port(const srv_req *req);

#endif /* PGNFS_SRV_H */
