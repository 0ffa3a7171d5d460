/*
 * nlm4_v3.c -- NLM versions 1 and 3 (XNFS chapter 10: 32-bit offsets,
 * fewer statuses), served by the version 4 core (nlm4_proc.c): each
 * handler widens its arguments to version 4, runs the core and narrows
 * the result, as Linux's lockd does (fs/lockd/svcproc.c): statuses that
 * versions 1 and 3 lack become LCK_DENIED (a deadlock) or
 * LCK_DENIED_NOLOCKS (the rest); a holder's offsets beyond 2^31 - 1 are
 * clamped to it.
 *
 * NOTES
 *   The handle in a version 1 or 3 call is our NFS handle as in version 4
 *   (we serve no NFS version 2, whose handles Linux's lockd expects
 *   there). Version 1 has no SHARE, UNSHARE, NM_LOCK or FREE_ALL: its
 *   table leaves them out (PROC_UNAVAIL).
 */
#include <string.h>

#include "nlm4_int.h"

/* The largest offset a version 1/3 holder reports (Linux's NLM_OFFSET_MAX). */
#define NLM3_OFFSET_MAX 0x7fffffffu

/* A version 4 status as versions 1 and 3 know it. */
static nlm_stats nlm3_stat(nlm4_stats st)
{
    switch (st) {
    case NLM4_GRANTED:
    case NLM4_DENIED:
    case NLM4_DENIED_NOLOCKS:
    case NLM4_BLOCKED:
    case NLM4_DENIED_GRACE_PERIOD:
        return (nlm_stats)st;
    case NLM4_DEADLCK:
        return LCK_DENIED;
    default:
        return LCK_DENIED_NOLOCKS;
    }
}

static void nlm3_lock_in(const nlm_lock *l, nlm4_lock *out)
{
    out->caller_name = l->caller_name;
    out->fh = l->fh;
    out->oh = l->oh;
    out->svid = l->uppid;
    out->l_offset = l->l_offset;
    out->l_len = l->l_len;
}

static void nlm3_res_out(const nlm4_res *r, nlm_res *out)
{
    out->cookie = r->cookie;
    out->stat.stat = nlm3_stat(r->stat.stat);
}

static u_int nlm3_clamp(uint64_t v)
{
    return v > NLM3_OFFSET_MAX ? NLM3_OFFSET_MAX : (u_int)v;
}

static void nlm3_testres_out(const nlm4_testres *r, nlm_testres *out)
{
    const nlm4_holder *h = &r->stat.nlm4_testrply_u.holder;
    nlm_holder *o = &out->test_stat.nlm_testrply_u.holder;

    out->cookie = r->cookie;
    out->test_stat.stat = nlm3_stat(r->stat.stat);
    if (out->test_stat.stat != LCK_DENIED || r->stat.stat != NLM4_DENIED)
        return;
    o->exclusive = h->exclusive;
    o->uppid = h->svid;
    o->oh = h->oh;
    o->l_offset = nlm3_clamp(h->l_offset);
    o->l_len = h->l_len == 0 ? 0 : nlm3_clamp(h->l_len);
}

static void nlm3_test(srv_req *req, const nlm_testargs *a, nlm_testres *r)
{
    nlm4_testargs a4 = {.cookie = a->cookie, .exclusive = a->exclusive};
    nlm4_testres r4;

    memset(&r4, 0, sizeof r4);
    nlm3_lock_in(&a->alock, &a4.alock);
    nlm4_do_test(req, &a4, &r4);
    nlm3_testres_out(&r4, r);
}

static void nlm3_lock(srv_req *req, bool monitor, bool msg, const nlm_lockargs *a, nlm_res *r)
{
    nlm4_lockargs a4 = {.cookie = a->cookie,
                        .block = a->block,
                        .exclusive = a->exclusive,
                        .reclaim = a->reclaim,
                        .state = a->state};
    nlm4_res r4;

    memset(&r4, 0, sizeof r4);
    nlm3_lock_in(&a->alock, &a4.alock);
    nlm4_do_lock(req, req->prog->vers, monitor, msg, &a4, &r4);
    nlm3_res_out(&r4, r);
}

static void nlm3_cancel(srv_req *req, const nlm_cancargs *a, nlm_res *r)
{
    nlm4_cancargs a4 = {.cookie = a->cookie, .block = a->block, .exclusive = a->exclusive};
    nlm4_res r4;

    memset(&r4, 0, sizeof r4);
    nlm3_lock_in(&a->alock, &a4.alock);
    nlm4_do_cancel(req, &a4, &r4);
    nlm3_res_out(&r4, r);
}

static void nlm3_unlock(srv_req *req, const nlm_unlockargs *a, nlm_res *r)
{
    nlm4_unlockargs a4 = {.cookie = a->cookie};
    nlm4_res r4;

    memset(&r4, 0, sizeof r4);
    nlm3_lock_in(&a->alock, &a4.alock);
    nlm4_do_unlock(req, &a4, &r4);
    nlm3_res_out(&r4, r);
}

/* NLM_TEST (versions 1 and 3). */
void nlm3_proc_test(srv_req *req, void *args, void *res)
{
    nlm3_test(req, args, res);
}

/* NLM_LOCK. */
void nlm3_proc_lock(srv_req *req, void *args, void *res)
{
    nlm3_lock(req, true, false, args, res);
}

/* NLM_CANCEL. */
void nlm3_proc_cancel(srv_req *req, void *args, void *res)
{
    nlm3_cancel(req, args, res);
}

/* NLM_UNLOCK. */
void nlm3_proc_unlock(srv_req *req, void *args, void *res)
{
    nlm3_unlock(req, args, res);
}

/* NLM_GRANTED: we are no client. */
void nlm3_proc_granted(srv_req *req, void *args, void *res)
{
    const nlm_testargs *a = args;
    nlm_res *r = res;

    (void)req;
    r->cookie = a->cookie;
    r->stat.stat = LCK_DENIED;
}

/* NLM_TEST_MSG. */
void nlm3_proc_test_msg(srv_req *req, void *args, void *res)
{
    nlm_testres *r = srv_req_alloc(req, sizeof *r);

    (void)res;
    nlm3_test(req, args, r);
    nlm4_reply_msg(req, req->prog->vers, NLMPROC_TEST_RES, (xdrproc_t)xdr_nlm_testres, r);
}

/* NLM_LOCK_MSG. */
void nlm3_proc_lock_msg(srv_req *req, void *args, void *res)
{
    nlm_res *r = srv_req_alloc(req, sizeof *r);

    (void)res;
    nlm3_lock(req, true, true, args, r);
    nlm4_reply_msg(req, req->prog->vers, NLMPROC_LOCK_RES, (xdrproc_t)xdr_nlm_res, r);
}

/* NLM_CANCEL_MSG. */
void nlm3_proc_cancel_msg(srv_req *req, void *args, void *res)
{
    nlm_res *r = srv_req_alloc(req, sizeof *r);

    (void)res;
    nlm3_cancel(req, args, r);
    nlm4_reply_msg(req, req->prog->vers, NLMPROC_CANCEL_RES, (xdrproc_t)xdr_nlm_res, r);
}

/* NLM_UNLOCK_MSG. */
void nlm3_proc_unlock_msg(srv_req *req, void *args, void *res)
{
    nlm_res *r = srv_req_alloc(req, sizeof *r);

    (void)res;
    nlm3_unlock(req, args, r);
    nlm4_reply_msg(req, req->prog->vers, NLMPROC_UNLOCK_RES, (xdrproc_t)xdr_nlm_res, r);
}

static void nlm3_share(srv_req *req, bool unshare, const nlm_shareargs *a, nlm_shareres *r)
{
    nlm4_shareargs a4 = {.cookie = a->cookie, .reclaim = a->reclaim};
    nlm4_shareres r4;

    memset(&r4, 0, sizeof r4);
    a4.share.caller_name = a->share.caller_name;
    a4.share.fh = a->share.fh;
    a4.share.oh = a->share.oh;
    a4.share.mode = a->share.mode;
    a4.share.access = a->share.access;
    if (unshare)
        nlm4_do_unshare(req, &a4, &r4);
    else
        nlm4_do_share(req, &a4, &r4);
    r->cookie = r4.cookie;
    r->stat = nlm3_stat(r4.stat);
    r->sequence = r4.sequence;
}

/* NLM_SHARE (version 3). */
void nlm3_proc_share(srv_req *req, void *args, void *res)
{
    nlm3_share(req, false, args, res);
}

/* NLM_UNSHARE (version 3). */
void nlm3_proc_unshare(srv_req *req, void *args, void *res)
{
    nlm3_share(req, true, args, res);
}

/* NLM_NM_LOCK (version 3). */
void nlm3_proc_nm_lock(srv_req *req, void *args, void *res)
{
    nlm3_lock(req, false, false, args, res);
}

/* NLM_FREE_ALL (version 3). */
void nlm3_proc_free_all(srv_req *req, void *args, void *res)
{
    const nlm_notify *a = args;
    nlm4_notify a4 = {.name = {a->name.name_len, a->name.name_val}, .state = a->state};

    (void)res;
    nlm4_do_free_all(req, &a4);
}
