/*
 * nsm_procs.c -- the Network Status Monitor, program 100024 version 1
 * (XNFS chapter 11), as the server side of statd needs it
 * (nsm_program.h). Our lock manager monitors its clients itself, in the
 * database (nlm4_svc.h); what arrives here from the network is:
 *
 *   SM_NULL       nothing
 *   SM_STAT       our NSM state (stat_succ)
 *   SM_MON        refused (stat_fail, our state): we monitor hosts for
 *                 our own lock manager only, as statd refuses callers
 *                 other than its host's lock manager
 *   SM_UNMON,
 *   SM_UNMON_ALL  our state; nothing was monitored for the caller
 *   SM_SIMU_CRASH nothing (statd takes it from its own host only)
 *   SM_NOTIFY     a host rebooted: its locks taken before (in another NSM
 *                 state) are freed at once and the waiters they held up
 *                 granted (nlm4_host_rebooted); the host is known by the
 *                 mon_name it sends, the caller_name of its lock manager
 *
 * NOTES
 *   Any credential is taken (statd's notifications may carry none).
 *   Every procedure runs without the database but SM_NOTIFY, which is
 *   dropped without one so that the host sends it again.
 */
#include <glib.h>

#include "nsm.h" /* the XDR types (rpc/nsm.x) */
#include "nsm_program.h"

#define NSM_XDR_VOID ((xdrproc_t)(void (*)(void))xdr_void)

static nlm4_svc *nsm_svc_of(const srv_req *req)
{
    return req->prog->ctx;
}

static void nsm_proc_null(srv_req *req, void *args, void *res)
{
    (void)req;
    (void)args;
    (void)res;
}

/* SM_STAT: our state. */
static void nsm_proc_stat(srv_req *req, void *args, void *res)
{
    sm_stat_res *r = res;

    (void)args;
    r->res_stat = stat_succ;
    r->state = nlm4_state(nsm_svc_of(req));
}

/* SM_MON: refused; our state. */
static void nsm_proc_mon(srv_req *req, void *args, void *res)
{
    const mon *a = args;
    sm_stat_res *r = res;

    srv_req_complain(req,
                     "SM_MON of %.*s refused: this status monitor serves its own lock "
                     "manager only",
                     (int)MIN(a->mon_id.mon_name.sm_string_len, 64u),
                     a->mon_id.mon_name.sm_string_val);
    r->res_stat = stat_fail;
    r->state = nlm4_state(nsm_svc_of(req));
}

/* SM_UNMON and SM_UNMON_ALL: nothing to undo; our state. */
static void nsm_proc_unmon(srv_req *req, void *args, void *res)
{
    sm_stat *r = res;

    (void)args;
    r->state = nlm4_state(nsm_svc_of(req));
}

/* SM_SIMU_CRASH: nothing. */
static void nsm_proc_simu_crash(srv_req *req, void *args, void *res)
{
    (void)args;
    (void)res;
    srv_req_complain(req, "SM_SIMU_CRASH ignored");
}

/* SM_NOTIFY: a host rebooted. */
static void nsm_proc_notify(srv_req *req, void *args, void *res)
{
    const stat_chge *a = args;

    (void)res;
    nlm4_host_rebooted(nsm_svc_of(req), req, a->mon_name.sm_string_val, a->mon_name.sm_string_len,
                       a->state, false);
}

#define NSM_PROC(num, nm, args, res, fn)                                                           \
    [num] = {.name = nm,                                                                           \
             .args_xdr = (xdrproc_t)xdr_##args,                                                    \
             .res_xdr = (xdrproc_t)xdr_##res,                                                      \
             .args_size = sizeof(args),                                                            \
             .res_size = sizeof(res),                                                              \
             .handler = fn}

static const srv_proc nsm_procs[] = {
    [SM_NULL] = {.name = "NULL",
                 .args_xdr = NSM_XDR_VOID,
                 .res_xdr = NSM_XDR_VOID,
                 .handler = nsm_proc_null},
    NSM_PROC(SM_STAT, "STAT", sm_name, sm_stat_res, nsm_proc_stat),
    NSM_PROC(SM_MON, "MON", mon, sm_stat_res, nsm_proc_mon),
    NSM_PROC(SM_UNMON, "UNMON", mon_id, sm_stat, nsm_proc_unmon),
    NSM_PROC(SM_UNMON_ALL, "UNMON_ALL", my_id, sm_stat, nsm_proc_unmon),
    [SM_SIMU_CRASH] = {.name = "SIMU_CRASH",
                       .args_xdr = NSM_XDR_VOID,
                       .res_xdr = NSM_XDR_VOID,
                       .handler = nsm_proc_simu_crash},
    [SM_NOTIFY] = {.name = "NOTIFY",
                   .args_xdr = (xdrproc_t)xdr_stat_chge,
                   .res_xdr = NSM_XDR_VOID,
                   .args_size = sizeof(stat_chge),
                   .handler = nsm_proc_notify},
};

static const srv_status nsm_statuses[] = {
    {stat_succ, "STAT_SUCC"},
    {stat_fail, "STAT_FAIL"},
};

/* SM_STAT's and SM_MON's results carry a status. */
static bool nsm_status_of(uint32_t proc, const void *res, uint32_t *status)
{
    if (proc != SM_STAT && proc != SM_MON)
        return false;
    *status = (uint32_t)((const sm_stat_res *)res)->res_stat;
    return true;
}

/* nsm_program -- see nsm_program.h. */
void nsm_program(nlm4_svc *svc, srv_program *out)
{
    *out = (srv_program){
        .name = "nsm1",
        .prog = SM_PROG,
        .vers = SM_VERS,
        .procs = nsm_procs,
        .nprocs = G_N_ELEMENTS(nsm_procs),
        .auth = SRV_AUTH_ANY,
        .status_of = nsm_status_of,
        .statuses = nsm_statuses,
        .nstatuses = G_N_ELEMENTS(nsm_statuses),
        .status_metric = "pgnfs_nsm1_replies_total",
        .status_help = "NSM replies by status.",
        .ctx = svc,
    };
}
