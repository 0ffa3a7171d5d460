/*
 * nlm4_int.h -- private to the lock service's files (server/nlm): the
 * service's state (struct nlm4_svc), the calls it makes to clients
 * (nlm4_out), and what each file offers the others.
 *
 * Files, bottom to top (a file calls only those above it in this list):
 *
 *   nlm4_args.c   handles, owners, ranges, addresses and statuses: the
 *                 conversions between NLM arguments and dbfs's lock calls
 *   nlm4_out.c    outgoing calls (srv_client): never to ourselves; a failed
 *                 one waits in the retry queue, which the background
 *                 thread works off
 *   nlm4_grant.c  blocked requests: what is kept with one in the database
 *                 (the callback to make), and the GRANTED callbacks when
 *                 they are granted
 *   nlm4_proc.c   the version 4 procedures
 *   nlm4_v3.c     versions 1 and 3, converted to and from version 4
 *   nlm4_procs.c  the procedure tables (the programs' descriptors)
 *   nlm4_bg.c     the background thread (grace period, grants made by
 *                 other servers, retries, garbage collection, figures)
 *   nlm4_svc.c    the service's life cycle, SM_NOTIFY after a restart,
 *                 host reboots, metrics (nlm4_svc.h)
 *
 * NOTES
 *   Threads: handlers run on the runtime's workers, done functions of
 *   outgoing calls on the srv_client's thread, the background work on its
 *   own thread. What they share in nlm4_svc is either set before the
 *   runtime runs and read-only after, atomic, or under retry_lock.
 */
#ifndef PGNFS_NLM4_INT_H
#define PGNFS_NLM4_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <glib.h>

#include "dbfs_locks.h"
#include "nlm4.h" /* the XDR types (rpc/nlm4.x) */
#include "nlm4_svc.h"
#include "srv_client.h"

/* A client's portmapper, where callbacks find its lock manager. */
#define NLM4_PMAP_PORT 111
/* Attempts of a callback that fails (the first included), and the wait
 * before each retry. */
#define NLM4_CB_ATTEMPTS 3
#define NLM4_CB_RETRY_US (10 * G_USEC_PER_SEC)
/* Outgoing calls waiting for a retry at most; beyond, a failure is final. */
#define NLM4_RETRY_MAX 4096
/* Each attempt's time limit. */
#define NLM4_CB_TIMEOUT_MS 10000

struct nlm4_svc {
    const cfg *cfg;
    dbfs *fs;
    srv_client *client;
    /* Set by nlm4_start before the workers run; read-only after (but
     * state, which nlm4_state reads atomically). */
    dbfs_lock_server ls;
    _Atomic int32_t state;
    unsigned port;
    char name[256]; /* [nlm] server_name, or the host's name */
    srv_program progs[3];
    /* The grace period's end (g_get_monotonic_time), 0 when none. */
    _Atomic int64_t grace_until_us;
    _Atomic bool grace_check; /* a call found it over: ask the database */
    /* Figures (nlm4_metrics). */
    _Atomic uint64_t held, waiting;
    _Atomic uint64_t grants, cb_sent, cb_failed, cb_self, cb_refused, cb_retried;
    _Atomic uint64_t notify_sent, notify_failed;
    log_ratelimit *rl; /* lines about failed calls, per host */
    /* The background thread (nlm4_bg.c). */
    GThread *bg;
    int wake_fd;     /* eventfd: something to do */
    int renew_watch; /* dbfs_renew_watch's id (the watch's session); -1: none */
    _Atomic bool stopping;
    dbfs_lock_watch *watch;
    GMutex retry_lock;
    GQueue retry; /* nlm4_out * due for another attempt, oldest first */
};

/* ---- nlm4_args.c ------------------------------------------------------------ */

/* A lock call's file, caller and lock, as dbfs takes them. */
typedef struct {
    dbfs_fh fh;
    dbfs_lock_owner owner;
    dbfs_lock_range range;
    char addr[64], local[64]; /* numeric, "" when unknown */
} nlm4_call;

/*
 * nlm4_file_in -- the file of handle fh (req->export/client/cred set as
 * exp_fh_in does). Returns NLM4_GRANTED, NLM4_STALE_FH (stale, another
 * file system, an export gone) or NLM4_FAILED (not a handle of ours, not
 * admitted), as Linux's lockd answers; NLM4_ROFS for a snapshot's file.
 */
nlm4_stats nlm4_file_in(srv_req *req, const nlm_netobj *fh, dbfs_fh *out);

/*
 * nlm4_range_in -- bytes l_offset, l_len (0: to the end) as a dbfs range.
 * Returns NLM4_GRANTED, or NLM4_FBIG for a range that names a byte past
 * 2^63 - 1 (as Linux's lockd).
 */
nlm4_stats nlm4_range_in(uint64_t l_offset, uint64_t l_len, bool excl, dbfs_lock_range *out);

/* nlm4_lock_in -- file, owner, range and addresses of lock l into *c;
 * NLM4_GRANTED or the status to answer. */
nlm4_stats nlm4_lock_in(srv_req *req, const nlm4_lock *l, bool excl, nlm4_call *c);

/* nlm4_stat_of -- the NLM status for dbfs outcome o. */
nlm4_stats nlm4_stat_of(dbfs_lock_outcome o);

/*
 * nlm4_stat_err -- the NLM status for a dbfs error (-ESTALE: STALE_FH;
 * -ENOMEM: DENIED_NOLOCKS; -EAGAIN: the call is dropped so that the
 * client sends it again, and DENIED_NOLOCKS is returned for the result;
 * others: FAILED), logged when it is a failure of ours.
 */
nlm4_stats nlm4_stat_err(srv_req *req, int err);

/* nlm4_holder_out -- the holder h as an nlm4_holder (oh in request memory). */
void nlm4_holder_out(srv_req *req, const dbfs_lock_holder *h, nlm4_holder *out);

/* nlm4_addr_text -- the numeric text of sa ("" for none or non-IP). */
void nlm4_addr_text(const struct sockaddr *sa, socklen_t len, char *buf, size_t size);

/* nlm4_unmap -- sa with an IPv4-mapped IPv6 address made IPv4 (in place). */
void nlm4_unmap(struct sockaddr_storage *sa, socklen_t *len);

/* ---- nlm4_out.c --------------------------------------------------------------- */

/* An outgoing call: arguments already XDR-encoded, owned here. */
typedef struct nlm4_out {
    nlm4_svc *svc;
    struct sockaddr_storage dest; /* its port 0: the host's portmapper says */
    socklen_t destlen;
    bool local; /* dest is an address of ours: look the port up, never call ourselves */
    bool tcp;
    uint32_t prog, vers, proc;
    const char *what; /* "GRANTED", "LOCK_RES", "SM_NOTIFY" (logs) */
    bool callback;    /* an NLM callback (counted as one), else an NSM notification */
    unsigned attempts;
    int64_t due_us;
    size_t len;
    unsigned char args[];
} nlm4_out;

/*
 * nlm4_out_new -- a call of proc (prog, vers) to the host at dest
 * (arrived: the local address its request arrived on, NULL if unknown)
 * with arguments args (encoded now with xdr_args). Returns it (owned by
 * the caller until nlm4_out_send), or NULL when the arguments do not
 * encode (logged).
 */
nlm4_out *nlm4_out_new(nlm4_svc *svc, const struct sockaddr *dest, socklen_t destlen,
                       const struct sockaddr *arrived, socklen_t arrivedlen, bool tcp,
                       uint32_t prog, uint32_t vers, uint32_t proc, xdrproc_t xdr_args,
                       const void *args, const char *what);

/*
 * nlm4_out_send -- make call o (one attempt), which is owned here from now
 * on: on failure it is queued for another attempt (NLM4_CB_ATTEMPTS in
 * all) and finally dropped, with the figures counted. Cannot fail.
 */
void nlm4_out_send(nlm4_out *o);

/* nlm4_out_free -- free o (NULL is fine). */
void nlm4_out_free(nlm4_out *o);

/* ---- nlm4_grant.c ------------------------------------------------------------- */

/*
 * nlm4_grant_note -- what to keep with a blocked request in the database:
 * the GRANTED callback to make when it is granted (to the caller of req,
 * NLM version vers, with the request's cookie and lock; GRANTED_MSG when
 * it came as LOCK_MSG). Returns 0 with *out and *len in request memory,
 * or -EINVAL (too large: not kept, logged).
 */
int nlm4_grant_note(srv_req *req, uint32_t vers, bool msg, const nlm_netobj *cookie, bool excl,
                    const nlm4_lock *lock, void **out, size_t *len);

/* nlm4_grant_calls -- call back every request res granted (its notes).
 * Cannot fail (a note that does not decode is logged and skipped). */
void nlm4_grant_calls(nlm4_svc *svc, const dbfs_lock_result *res);

/* ---- nlm4_proc.c / nlm4_v3.c / nlm4_procs.c ---------------------------------- */

/* The version 4 core, which versions 1 and 3 reuse. msg: the request came
 * as LOCK_MSG (its grant goes back as GRANTED_MSG). */
void nlm4_do_test(srv_req *req, const nlm4_testargs *a, nlm4_testres *r);
void nlm4_do_lock(srv_req *req, uint32_t vers, bool monitor, bool msg, const nlm4_lockargs *a,
                  nlm4_res *r);
void nlm4_do_cancel(srv_req *req, const nlm4_cancargs *a, nlm4_res *r);
void nlm4_do_unlock(srv_req *req, const nlm4_unlockargs *a, nlm4_res *r);
void nlm4_do_share(srv_req *req, const nlm4_shareargs *a, nlm4_shareres *r);
void nlm4_do_unshare(srv_req *req, const nlm4_shareargs *a, nlm4_shareres *r);
void nlm4_do_free_all(srv_req *req, const nlm4_notify *a);

/*
 * nlm4_reply_msg -- answer a *_MSG call of version vers by calling the
 * caller's procedure `proc` (a *_RES) with result res (encoded with
 * xdr_res now). Cannot fail (a call that cannot be made is counted).
 */
void nlm4_reply_msg(srv_req *req, uint32_t vers, uint32_t proc, xdrproc_t xdr_res, const void *res);

/* The descriptors of versions 1, 3 and 4 into progs[0..2], ctx = svc. */
void nlm4_programs(nlm4_svc *svc, srv_program progs[3]);

/* Version 4 handlers (the table's). */
void nlm4_proc_null(srv_req *req, void *args, void *res);
void nlm4_proc_test(srv_req *req, void *args, void *res);
void nlm4_proc_lock(srv_req *req, void *args, void *res);
void nlm4_proc_cancel(srv_req *req, void *args, void *res);
void nlm4_proc_unlock(srv_req *req, void *args, void *res);
void nlm4_proc_granted(srv_req *req, void *args, void *res);
void nlm4_proc_test_msg(srv_req *req, void *args, void *res);
void nlm4_proc_lock_msg(srv_req *req, void *args, void *res);
void nlm4_proc_cancel_msg(srv_req *req, void *args, void *res);
void nlm4_proc_unlock_msg(srv_req *req, void *args, void *res);
void nlm4_proc_granted_msg(srv_req *req, void *args, void *res);
void nlm4_proc_res(srv_req *req, void *args, void *res);
void nlm4_proc_share(srv_req *req, void *args, void *res);
void nlm4_proc_unshare(srv_req *req, void *args, void *res);
void nlm4_proc_nm_lock(srv_req *req, void *args, void *res);
void nlm4_proc_free_all(srv_req *req, void *args, void *res);

/* Version 1 and 3 handlers (nlm4_v3.c). */
void nlm3_proc_test(srv_req *req, void *args, void *res);
void nlm3_proc_lock(srv_req *req, void *args, void *res);
void nlm3_proc_cancel(srv_req *req, void *args, void *res);
void nlm3_proc_unlock(srv_req *req, void *args, void *res);
void nlm3_proc_granted(srv_req *req, void *args, void *res);
void nlm3_proc_test_msg(srv_req *req, void *args, void *res);
void nlm3_proc_lock_msg(srv_req *req, void *args, void *res);
void nlm3_proc_cancel_msg(srv_req *req, void *args, void *res);
void nlm3_proc_unlock_msg(srv_req *req, void *args, void *res);
void nlm3_proc_share(srv_req *req, void *args, void *res);
void nlm3_proc_unshare(srv_req *req, void *args, void *res);
void nlm3_proc_nm_lock(srv_req *req, void *args, void *res);
void nlm3_proc_free_all(srv_req *req, void *args, void *res);

/* ---- nlm4_bg.c ------------------------------------------------------------------ */

/* nlm4_bg_start -- start the background thread. 0 or -1 (logged). */
int nlm4_bg_start(nlm4_svc *svc);
/* nlm4_bg_stop -- stop and join it; free what waits for a retry. */
void nlm4_bg_stop(nlm4_svc *svc);
/* nlm4_bg_grace_over -- a call found the grace period over: so is it here. */
void nlm4_bg_grace_over(nlm4_svc *svc);

#endif /* PGNFS_NLM4_INT_H */
