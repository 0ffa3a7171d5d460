/*
 * nlmraw.h -- what the lock tests share: synchronous NLM version 4 calls
 * through libnfs's NLM client (rpc_nlm4_*_async: NULL, TEST, LOCK, CANCEL,
 * UNLOCK) and its NSM client (rpc_nsm1_*_async), hand-built records for what libnfs lacks (SHARE,
 * UNSHARE, NM_LOCK, FREE_ALL, the *_MSG forms, versions 1 and 3, NSM), and a receiver for the
 * server's callbacks (GRANTED, GRANTED_MSG, *_RES) made with libnfs's server contexts
 * (rpc_register_service).
 *
 * NOTES
 *   Return values: a call returns the NLM status it got (>= 0), or
 *   NR_RPC_FAILED when no reply came (nr_error() says why).
 *   An owner is (caller_name, svid, oh); the oh is a string here (libnfs
 *   declares it so), which has the wire form of NLM's netobj.
 *   Callbacks: nl_cbsrv_new listens on 127.0.0.1 (TCP and UDP, a free
 *   port); nl_cbsrv_wait runs it until a callback arrives. It answers
 *   GRANTED with NLM4_GRANTED (or what the test set) and records what it
 *   got. Used from one thread.
 */
#ifndef PGNFS_NLMRAW_H
#define PGNFS_NLMRAW_H

#include <stdbool.h>
#include <stdint.h>

#include <nfsc/libnfs-raw-nlm.h>
#include <nfsc/libnfs-raw-nsm.h>

#include "nfsraw.h"

enum {
    NL_PROG = 100021,
    NL_NSM_PROG = 100024,
    NL_PROC_NULL = 0,
    NL_PROC_TEST = 1,
    NL_PROC_LOCK = 2,
    NL_PROC_CANCEL = 3,
    NL_PROC_UNLOCK = 4,
    NL_PROC_GRANTED = 5,
    NL_PROC_TEST_MSG = 6,
    NL_PROC_LOCK_MSG = 7,
    NL_PROC_CANCEL_MSG = 8,
    NL_PROC_UNLOCK_MSG = 9,
    NL_PROC_GRANTED_MSG = 10,
    NL_PROC_TEST_RES = 11,
    NL_PROC_LOCK_RES = 12,
    NL_PROC_UNLOCK_RES = 14,
    NL_PROC_GRANTED_RES = 15,
    NL_PROC_SHARE = 20,
    NL_PROC_UNSHARE = 21,
    NL_PROC_NM_LOCK = 22,
    NL_PROC_FREE_ALL = 23,
    NL_SM_STAT = 1,
    NL_SM_MON = 2,
    NL_SM_UNMON = 3,
    NL_SM_UNMON_ALL = 4,
    NL_SM_SIMU_CRASH = 5,
    NL_SM_NOTIFY = 6,
};

/* Versions 1 and 3 statuses (libnfs has version 4's only). */
enum { LCK_GRANTED = 0, LCK_DENIED = 1, LCK_DENIED_NOLOCKS = 2, LCK_BLOCKED = 3 };

/* End of file (NLM length 0). */
#define NL_EOF 0

typedef struct {
    const char *caller;
    uint32_t svid;
    const char *oh;
} nl_owner;

typedef struct {
    bool excl;
    uint32_t svid;
    char oh[256];
    uint64_t off, len;
} nl_holder;

int nl_null(nr_ctx *c);
/* TEST: *h (may be NULL) receives the holder when denied. */
int nl_test(nr_ctx *c, const nr_fh *fh, const nl_owner *o, uint64_t off, uint64_t len, bool excl,
            nl_holder *h);
int nl_lock(nr_ctx *c, const nr_fh *fh, const nl_owner *o, uint64_t off, uint64_t len, bool excl,
            bool block, bool reclaim, int state);
int nl_cancel(nr_ctx *c, const nr_fh *fh, const nl_owner *o, uint64_t off, uint64_t len, bool excl);
int nl_unlock(nr_ctx *c, const nr_fh *fh, const nl_owner *o, uint64_t off, uint64_t len);

/* --- NSM version 1 through libnfs (rpc_nsm1_*_async) --------------------------- */

/* Each returns the call's status (STAT, MON: res_stat), 0 for the calls
 * without one, or NR_RPC_FAILED; *state (may be NULL) the state answered. */
int nl_sm_null(nr_ctx *c);
int nl_sm_stat(nr_ctx *c, const char *name, int *state);
int nl_sm_mon(nr_ctx *c, const char *name, const char *me, int *state);
int nl_sm_unmon(nr_ctx *c, const char *name, const char *me, int *state);
int nl_sm_unmon_all(nr_ctx *c, const char *me, int *state);
int nl_sm_simu_crash(nr_ctx *c);
int nl_sm_notify(nr_ctx *c, const char *name, int state);

/* --- hand-built records ------------------------------------------------------ */

/* An nlm4_lock (version 4) or nlm_lock (versions 1, 3: 32-bit range). */
void nl_xdr_lock4(GByteArray *b, const nr_fh *fh, const nl_owner *o, uint64_t off, uint64_t len);
void nl_xdr_lock3(GByteArray *b, const nr_fh *fh, const nl_owner *o, uint32_t off, uint32_t len);
/* Arguments of LOCK (v4): cookie, block, exclusive, lock, reclaim, state. */
void nl_xdr_lockargs4(GByteArray *b, const char *cookie, bool block, bool excl, const nr_fh *fh,
                      const nl_owner *o, uint64_t off, uint64_t len, bool reclaim, int state);

/*
 * nl_raw -- one call of (prog, vers, proc) with the encoded arguments args
 * to 127.0.0.1:port over TCP (udp: over UDP), as root. Returns the reply
 * (free it) with *rep parsed, or NULL when none came within timeout_ms.
 */
GByteArray *nl_raw(unsigned port, bool udp, uint32_t prog, uint32_t vers, uint32_t proc,
                   const GByteArray *args, nr_reply *rep, int timeout_ms);
/* The same, returning the first word of the results (a status), or
 * NR_RPC_FAILED when no successful reply came (accept_stat in *rep). */
int nl_raw_stat(unsigned port, uint32_t prog, uint32_t vers, uint32_t proc, const GByteArray *args,
                nr_reply *rep, size_t skip);

/* --- a receiver for the server's callbacks ------------------------------------ */

typedef struct nl_cbsrv nl_cbsrv;

/* What arrived: an NLM callback, or an NSM SM_NOTIFY (prog NL_NSM_PROG:
 * caller is its mon_name, stat its state). */
typedef struct {
    uint32_t prog;
    uint32_t vers, proc; /* version and procedure */
    uint32_t excl, svid;
    char caller[256], oh[256], cookie[64];
    uint64_t off, len;
    uint32_t stat; /* *_RES: the result's status */
    uint32_t udp;
    int64_t at_us; /* g_get_monotonic_time() on arrival */
} nl_callback;

/* A receiver on 127.0.0.1 (any free port), TCP and UDP. */
nl_cbsrv *nl_cbsrv_new(void);
/* The same on address addr ("0.0.0.0": every address). */
nl_cbsrv *nl_cbsrv_new_on(const char *addr);
/*
 * nl_cbsrv_start -- serve in a thread of its own from now on (until
 * nl_cbsrv_free); then only nl_cbsrv_count and nl_cbsrv_last_us may be
 * used: how many callbacks arrived, and when the last one did
 * (g_get_monotonic_time()).
 */
void nl_cbsrv_start(nl_cbsrv *s);
unsigned nl_cbsrv_count(nl_cbsrv *s);
int64_t nl_cbsrv_last_us(nl_cbsrv *s);
unsigned nl_cbsrv_port(const nl_cbsrv *s);
/* The status GRANTED calls get from now on (default NLM4_GRANTED). */
void nl_cbsrv_answer(nl_cbsrv *s, uint32_t stat);
/*
 * nl_cbsrv_wait -- serve until `count` callbacks in all have arrived (since
 * the start) or timeout_ms passes; returns how many have arrived. *out
 * (may be NULL) receives the n-th (0-based) one, n = count - 1.
 */
unsigned nl_cbsrv_wait(nl_cbsrv *s, unsigned count, int timeout_ms, nl_callback *out);
void nl_cbsrv_free(nl_cbsrv *s);

/*
 * nl_pmap_new -- a minimal portmapper on port 111 of every address (TCP and UDP) that
 * answers PMAP GETPORT for NLM (any version) with nlm_port, for NSM with
 * nsm_port (0: not registered), and 0 for anything else; it runs in a
 * thread of its own. Needs port 111 (a private network namespace).
 * Returns NULL (errno set) when the port cannot be bound.
 */
typedef struct nl_pmap nl_pmap;
nl_pmap *nl_pmap_new(unsigned nlm_port, unsigned nsm_port);
/* GETPORT calls it answered so far. */
unsigned nl_pmap_lookups(nl_pmap *p);
/* What it answers from now on. */
void nl_pmap_set(nl_pmap *p, unsigned nlm_port, unsigned nsm_port);
void nl_pmap_free(nl_pmap *p);

/* --- small helpers -------------------------------------------------------------- */

/* The value of "key value" on a metrics page; -1 when it is not there. */
double nl_metric(const char *page, const char *key);

#endif /* PGNFS_NLMRAW_H */
