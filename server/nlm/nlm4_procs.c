/*
 * nlm4_procs.c -- the Network Lock Manager as the RPC runtime sees it:
 * the procedure tables of versions 1, 3 and 4 (program 100021; XNFS
 * chapter 10 and its version 4), indexed by procedure number, their
 * statuses, and the descriptors (nlm4_programs), which carry the lock
 * service as their ctx.
 *
 * NOTES
 *   Every procedure but NULL needs the worker's database connection;
 *   without one the call is dropped (Linux's lockd drops what it cannot
 *   serve yet) and the client sends it again. No procedure is kept in the
 *   duplicate request cache: each may run twice with the same effect (a
 *   LOCK the owner holds is granted again, an UNLOCK of what is not held
 *   is granted).
 *
 *   *_MSG procedures reply void: their result goes back as a call of the
 *   client's *_RES procedure. Version 1 stops at procedure 15.
 */
#include <glib.h>

#include "nlm4_int.h"

#define NLM_XDR_VOID ((xdrproc_t)(void (*)(void))xdr_void)

#define NLM_PROC(num, nm, args, res, fn)                                                           \
    [num] = {.name = nm,                                                                           \
             .args_xdr = (xdrproc_t)xdr_##args,                                                    \
             .res_xdr = (xdrproc_t)xdr_##res,                                                      \
             .args_size = sizeof(args),                                                            \
             .res_size = sizeof(res),                                                              \
             .handler = fn}
/* A procedure with a void result (the *_MSG and *_RES calls, FREE_ALL). */
#define NLM_PROC_VOID(num, nm, args, fn)                                                           \
    [num] = {.name = nm,                                                                           \
             .args_xdr = (xdrproc_t)xdr_##args,                                                    \
             .res_xdr = NLM_XDR_VOID,                                                              \
             .args_size = sizeof(args),                                                            \
             .res_size = 0,                                                                        \
             .handler = fn}
#define NLM_PROC_NULL                                                                              \
    [NLMPROC_NULL] = {.name = "NULL",                                                              \
                      .args_xdr = NLM_XDR_VOID,                                                    \
                      .res_xdr = NLM_XDR_VOID,                                                     \
                      .handler = nlm4_proc_null}

static const srv_proc nlm4_procs[] = {
    NLM_PROC_NULL,
    NLM_PROC(NLMPROC_TEST, "TEST", nlm4_testargs, nlm4_testres, nlm4_proc_test),
    NLM_PROC(NLMPROC_LOCK, "LOCK", nlm4_lockargs, nlm4_res, nlm4_proc_lock),
    NLM_PROC(NLMPROC_CANCEL, "CANCEL", nlm4_cancargs, nlm4_res, nlm4_proc_cancel),
    NLM_PROC(NLMPROC_UNLOCK, "UNLOCK", nlm4_unlockargs, nlm4_res, nlm4_proc_unlock),
    NLM_PROC(NLMPROC_GRANTED, "GRANTED", nlm4_testargs, nlm4_res, nlm4_proc_granted),
    NLM_PROC_VOID(NLMPROC_TEST_MSG, "TEST_MSG", nlm4_testargs, nlm4_proc_test_msg),
    NLM_PROC_VOID(NLMPROC_LOCK_MSG, "LOCK_MSG", nlm4_lockargs, nlm4_proc_lock_msg),
    NLM_PROC_VOID(NLMPROC_CANCEL_MSG, "CANCEL_MSG", nlm4_cancargs, nlm4_proc_cancel_msg),
    NLM_PROC_VOID(NLMPROC_UNLOCK_MSG, "UNLOCK_MSG", nlm4_unlockargs, nlm4_proc_unlock_msg),
    NLM_PROC_VOID(NLMPROC_GRANTED_MSG, "GRANTED_MSG", nlm4_testargs, nlm4_proc_granted_msg),
    NLM_PROC_VOID(NLMPROC_TEST_RES, "TEST_RES", nlm4_testres, nlm4_proc_res),
    NLM_PROC_VOID(NLMPROC_LOCK_RES, "LOCK_RES", nlm4_res, nlm4_proc_res),
    NLM_PROC_VOID(NLMPROC_CANCEL_RES, "CANCEL_RES", nlm4_res, nlm4_proc_res),
    NLM_PROC_VOID(NLMPROC_UNLOCK_RES, "UNLOCK_RES", nlm4_res, nlm4_proc_res),
    NLM_PROC_VOID(NLMPROC_GRANTED_RES, "GRANTED_RES", nlm4_res, nlm4_proc_res),
    NLM_PROC(NLMPROC_SHARE, "SHARE", nlm4_shareargs, nlm4_shareres, nlm4_proc_share),
    NLM_PROC(NLMPROC_UNSHARE, "UNSHARE", nlm4_shareargs, nlm4_shareres, nlm4_proc_unshare),
    NLM_PROC(NLMPROC_NM_LOCK, "NM_LOCK", nlm4_lockargs, nlm4_res, nlm4_proc_nm_lock),
    NLM_PROC_VOID(NLMPROC_FREE_ALL, "FREE_ALL", nlm4_notify, nlm4_proc_free_all),
};

/* Versions 1 and 3: one table; version 1 is its first 16 entries. */
static const srv_proc nlm3_procs[] = {
    NLM_PROC_NULL,
    NLM_PROC(NLMPROC_TEST, "TEST", nlm_testargs, nlm_testres, nlm3_proc_test),
    NLM_PROC(NLMPROC_LOCK, "LOCK", nlm_lockargs, nlm_res, nlm3_proc_lock),
    NLM_PROC(NLMPROC_CANCEL, "CANCEL", nlm_cancargs, nlm_res, nlm3_proc_cancel),
    NLM_PROC(NLMPROC_UNLOCK, "UNLOCK", nlm_unlockargs, nlm_res, nlm3_proc_unlock),
    NLM_PROC(NLMPROC_GRANTED, "GRANTED", nlm_testargs, nlm_res, nlm3_proc_granted),
    NLM_PROC_VOID(NLMPROC_TEST_MSG, "TEST_MSG", nlm_testargs, nlm3_proc_test_msg),
    NLM_PROC_VOID(NLMPROC_LOCK_MSG, "LOCK_MSG", nlm_lockargs, nlm3_proc_lock_msg),
    NLM_PROC_VOID(NLMPROC_CANCEL_MSG, "CANCEL_MSG", nlm_cancargs, nlm3_proc_cancel_msg),
    NLM_PROC_VOID(NLMPROC_UNLOCK_MSG, "UNLOCK_MSG", nlm_unlockargs, nlm3_proc_unlock_msg),
    NLM_PROC_VOID(NLMPROC_GRANTED_MSG, "GRANTED_MSG", nlm_testargs, nlm4_proc_granted_msg),
    NLM_PROC_VOID(NLMPROC_TEST_RES, "TEST_RES", nlm_testres, nlm4_proc_res),
    NLM_PROC_VOID(NLMPROC_LOCK_RES, "LOCK_RES", nlm_res, nlm4_proc_res),
    NLM_PROC_VOID(NLMPROC_CANCEL_RES, "CANCEL_RES", nlm_res, nlm4_proc_res),
    NLM_PROC_VOID(NLMPROC_UNLOCK_RES, "UNLOCK_RES", nlm_res, nlm4_proc_res),
    NLM_PROC_VOID(NLMPROC_GRANTED_RES, "GRANTED_RES", nlm_res, nlm4_proc_res),
    NLM_PROC(NLMPROC_SHARE, "SHARE", nlm_shareargs, nlm_shareres, nlm3_proc_share),
    NLM_PROC(NLMPROC_UNSHARE, "UNSHARE", nlm_shareargs, nlm_shareres, nlm3_proc_unshare),
    NLM_PROC(NLMPROC_NM_LOCK, "NM_LOCK", nlm_lockargs, nlm_res, nlm3_proc_nm_lock),
    NLM_PROC_VOID(NLMPROC_FREE_ALL, "FREE_ALL", nlm_notify, nlm3_proc_free_all),
};

static const srv_status nlm4_statuses[] = {
    {NLM4_GRANTED, "NLM4_GRANTED"},
    {NLM4_DENIED, "NLM4_DENIED"},
    {NLM4_DENIED_NOLOCKS, "NLM4_DENIED_NOLOCKS"},
    {NLM4_BLOCKED, "NLM4_BLOCKED"},
    {NLM4_DENIED_GRACE_PERIOD, "NLM4_DENIED_GRACE_PERIOD"},
    {NLM4_DEADLCK, "NLM4_DEADLCK"},
    {NLM4_ROFS, "NLM4_ROFS"},
    {NLM4_STALE_FH, "NLM4_STALE_FH"},
    {NLM4_FBIG, "NLM4_FBIG"},
    {NLM4_FAILED, "NLM4_FAILED"},
};

static const srv_status nlm3_statuses[] = {
    {LCK_GRANTED, "LCK_GRANTED"},
    {LCK_DENIED, "LCK_DENIED"},
    {LCK_DENIED_NOLOCKS, "LCK_DENIED_NOLOCKS"},
    {LCK_BLOCKED, "LCK_BLOCKED"},
    {LCK_DENIED_GRACE_PERIOD, "LCK_DENIED_GRACE_PERIOD"},
};

/* Where a result's status is: TEST's in its test reply, SHARE's and
 * UNSHARE's at the top, the others' in their nlm_stat. The version 1/3
 * results have the same layouts with their own enum. */
static bool nlm4_status_of(uint32_t proc, const void *res, uint32_t *status)
{
    switch (proc) {
    case NLMPROC_TEST:
        *status = (uint32_t)((const nlm4_testres *)res)->stat.stat;
        return true;
    case NLMPROC_LOCK:
    case NLMPROC_CANCEL:
    case NLMPROC_UNLOCK:
    case NLMPROC_GRANTED:
    case NLMPROC_NM_LOCK:
        *status = (uint32_t)((const nlm4_res *)res)->stat.stat;
        return true;
    case NLMPROC_SHARE:
    case NLMPROC_UNSHARE:
        *status = (uint32_t)((const nlm4_shareres *)res)->stat;
        return true;
    default:
        return false;
    }
}

static bool nlm3_status_of(uint32_t proc, const void *res, uint32_t *status)
{
    switch (proc) {
    case NLMPROC_TEST:
        *status = (uint32_t)((const nlm_testres *)res)->test_stat.stat;
        return true;
    case NLMPROC_LOCK:
    case NLMPROC_CANCEL:
    case NLMPROC_UNLOCK:
    case NLMPROC_GRANTED:
    case NLMPROC_NM_LOCK:
        *status = (uint32_t)((const nlm_res *)res)->stat.stat;
        return true;
    case NLMPROC_SHARE:
    case NLMPROC_UNSHARE:
        *status = (uint32_t)((const nlm_shareres *)res)->stat;
        return true;
    default:
        return false;
    }
}

/* nlm4_programs -- see nlm4_int.h. */
void nlm4_programs(nlm4_svc *svc, srv_program progs[3])
{
    static const struct {
        const char *name, *metric;
        uint32_t vers;
        unsigned nprocs;
    } v[3] = {{"nlm1", "pgnfs_nlm1_replies_total", NLM_VERS, NLMPROC_GRANTED_RES + 1},
              {"nlm3", "pgnfs_nlm3_replies_total", NLM_VERSX, G_N_ELEMENTS(nlm3_procs)},
              {"nlm4", "pgnfs_nlm4_replies_total", NLM4_VERS, G_N_ELEMENTS(nlm4_procs)}};

    for (int i = 0; i < 3; i++) {
        bool v4 = v[i].vers == NLM4_VERS;

        progs[i] = (srv_program){
            .name = v[i].name,
            .prog = NLM_PROG,
            .vers = v[i].vers,
            .procs = v4 ? nlm4_procs : nlm3_procs,
            .nprocs = v[i].nprocs,
            .auth = SRV_AUTH_SYS,
            .needs_db = true,
            .status_of = v4 ? nlm4_status_of : nlm3_status_of,
            .statuses = v4 ? nlm4_statuses : nlm3_statuses,
            .nstatuses = v4 ? G_N_ELEMENTS(nlm4_statuses) : G_N_ELEMENTS(nlm3_statuses),
            .status_metric = v[i].metric,
            .status_help = "NLM replies by status.",
            .ctx = svc,
        };
    }
}
