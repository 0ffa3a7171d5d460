/*
 * nlm4_proc.c -- the Network Lock Manager's procedures, version 4 (XNFS
 * NLM version 4; nlm4_int.h): one handler each, and the core that
 * versions 1 and 3 reuse (nlm4_do_*). Each is: the arguments as dbfs
 * takes them (nlm4_args.c), one dbfs lock call (one round trip), the
 * outcome as a status, the callbacks of whatever the call granted.
 *
 * Behaviour, as Linux's lockd (fs/lockd/svc4proc.c) unless said:
 *   TEST      granted, or denied with the holder; "grace" in the grace
 *             period
 *   LOCK      granted; denied (with block false); blocked (block true:
 *             queued, the client called back when it is granted);
 *             NLM4_DEADLCK when waiting would close a cycle; "grace" in
 *             the grace period unless reclaim; an exclusive lock on an
 *             export the caller may only read: NLM4_FAILED; the host is
 *             monitored (told when we restart)
 *   CANCEL    the blocked request is gone (granted either way)
 *   UNLOCK    granted, what was held or not; waiters granted
 *   GRANTED   we are no client: denied
 *   *_MSG     the same, answered by calling the client's *_RES
 *   *_RES     nothing to do (we send no *_MSG)
 *   SHARE     DOS share reservation: granted or denied; UNSHARE drops it
 *   NM_LOCK   LOCK without monitoring
 *   FREE_ALL  the host named rebooted: all its locks and shares go
 *
 * NOTES
 *   Results point at the arguments (the cookie) or request memory; both
 *   live until the reply is encoded.
 */
#include <errno.h>
#include <string.h>

#include "nlm4_int.h"

static nlm4_svc *nlm4_svc_of(const srv_req *req)
{
    return req->prog->ctx;
}

/* A call found the server out of its grace period. */
static void nlm4_grace_seen(srv_req *req, const dbfs_lock_result *res)
{
    if (!res->grace)
        nlm4_bg_grace_over(nlm4_svc_of(req));
}

/* NLM4_NULL: nothing. */
void nlm4_proc_null(srv_req *req, void *args, void *res)
{
    (void)req;
    (void)args;
    (void)res;
}

/* nlm4_do_test -- see nlm4_int.h. */
void nlm4_do_test(srv_req *req, const nlm4_testargs *a, nlm4_testres *r)
{
    nlm4_svc *svc = nlm4_svc_of(req);
    dbfs_lock_result res;
    nlm4_call c;
    nlm4_stats st;
    int err;

    r->cookie = a->cookie;
    st = nlm4_lock_in(req, &a->alock, a->exclusive, &c);
    if (st == NLM4_GRANTED && a->exclusive && !req->client->rw)
        st = NLM4_FAILED;
    if (st != NLM4_GRANTED) {
        r->stat.stat = st;
        return;
    }
    err = dbfs_lock_test(req->db, &svc->ls, &req->cred, c.fh, &c.owner, &c.range, &res);
    if (err != 0) {
        r->stat.stat = nlm4_stat_err(req, err);
        return;
    }
    r->stat.stat = nlm4_stat_of(res.outcome);
    if (res.outcome == DBFS_LOCK_DENIED && res.have_holder)
        nlm4_holder_out(req, &res.holder, &r->stat.nlm4_testrply_u.holder);
    nlm4_grace_seen(req, &res);
    dbfs_lock_result_free(&res);
}

/* nlm4_do_lock -- see nlm4_int.h. */
void nlm4_do_lock(srv_req *req, uint32_t vers, bool monitor, bool msg, const nlm4_lockargs *a,
                  nlm4_res *r)
{
    nlm4_svc *svc = nlm4_svc_of(req);
    dbfs_lock_how how = {
        .block = a->block, .reclaim = a->reclaim, .monitor = monitor, .cstate = a->state};
    dbfs_lock_result res;
    nlm4_call c;
    void *note = NULL;
    size_t note_len = 0;
    int err;

    r->cookie = a->cookie;
    r->stat.stat = nlm4_lock_in(req, &a->alock, a->exclusive, &c);
    if (r->stat.stat == NLM4_GRANTED && a->exclusive && !req->client->rw)
        r->stat.stat = NLM4_FAILED;
    if (r->stat.stat == NLM4_GRANTED && how.block &&
        nlm4_grant_note(req, vers, msg, &a->cookie, a->exclusive, &a->alock, &note, &note_len))
        r->stat.stat = NLM4_FAILED;
    if (r->stat.stat != NLM4_GRANTED)
        return;
    how.addr = c.addr;
    how.local = c.local;
    how.notify = note;
    how.notify_len = note_len;
    err = dbfs_lock(req->db, &svc->ls, &req->cred, c.fh, &c.owner, &c.range, &how, &res);
    if (err != 0) {
        r->stat.stat = nlm4_stat_err(req, err);
        return;
    }
    r->stat.stat = nlm4_stat_of(res.outcome);
    nlm4_grant_calls(svc, &res);
    nlm4_grace_seen(req, &res);
    dbfs_lock_result_free(&res);
}

/* CANCEL and UNLOCK: one call each, waiters granted. */
static void nlm4_release(srv_req *req, bool cancel, const nlm_netobj *cookie, bool excl,
                         const nlm4_lock *l, nlm4_res *r)
{
    nlm4_svc *svc = nlm4_svc_of(req);
    dbfs_lock_result res;
    nlm4_call c;
    int err;

    r->cookie = *cookie;
    r->stat.stat = nlm4_lock_in(req, l, excl, &c);
    if (r->stat.stat != NLM4_GRANTED)
        return;
    err = cancel ? dbfs_lock_cancel(req->db, &svc->ls, c.fh, &c.owner, &c.range, &res)
                 : dbfs_unlock(req->db, &svc->ls, c.fh, &c.owner, &c.range, &res);
    if (err != 0) {
        r->stat.stat = nlm4_stat_err(req, err);
        return;
    }
    r->stat.stat = nlm4_stat_of(res.outcome);
    nlm4_grant_calls(svc, &res);
    nlm4_grace_seen(req, &res);
    dbfs_lock_result_free(&res);
}

/* nlm4_do_cancel -- see nlm4_int.h. */
void nlm4_do_cancel(srv_req *req, const nlm4_cancargs *a, nlm4_res *r)
{
    nlm4_release(req, true, &a->cookie, a->exclusive, &a->alock, r);
}

/* nlm4_do_unlock -- see nlm4_int.h. */
void nlm4_do_unlock(srv_req *req, const nlm4_unlockargs *a, nlm4_res *r)
{
    nlm4_release(req, false, &a->cookie, false, &a->alock, r);
}

/* The share reservation's file and owner (svid none). */
static nlm4_stats nlm4_share_in(srv_req *req, const nlm4_share *s, dbfs_fh *fh, dbfs_lock_owner *o)
{
    nlm4_stats st = nlm4_file_in(req, &s->fh, fh);

    o->host = s->caller_name.nlm_name_val;
    o->host_len = s->caller_name.nlm_name_len;
    o->svid = DBFS_LOCK_NO_SVID;
    o->oh = s->oh.nlm_netobj_val;
    o->oh_len = s->oh.nlm_netobj_len;
    return st;
}

/* SHARE (unshare false) and UNSHARE. The access and deny modes are bit
 * masks of read (1) and write (2) in NLM as in dbfs. */
static void nlm4_share_call(srv_req *req, bool unshare, const nlm4_shareargs *a, nlm4_shareres *r)
{
    nlm4_svc *svc = nlm4_svc_of(req);
    dbfs_lock_how how = {.reclaim = a->reclaim};
    dbfs_lock_result res;
    dbfs_lock_owner o;
    dbfs_fh fh;
    char addr[64], local[64];
    int err;

    r->cookie = a->cookie;
    r->sequence = 0;
    r->stat = nlm4_share_in(req, &a->share, &fh, &o);
    if (r->stat != NLM4_GRANTED)
        return;
    nlm4_addr_text((const struct sockaddr *)&req->peer, req->peerlen, addr, sizeof addr);
    nlm4_addr_text((const struct sockaddr *)&req->local, req->locallen, local, sizeof local);
    how.addr = addr;
    how.local = local;
    err = unshare ? dbfs_unshare(req->db, &svc->ls, fh, &o, &res)
                  : dbfs_share(req->db, &svc->ls, &req->cred, fh, &o, (unsigned)a->share.access,
                               (unsigned)a->share.mode, &how, &res);
    if (err != 0) {
        r->stat = nlm4_stat_err(req, err);
        return;
    }
    r->stat = nlm4_stat_of(res.outcome);
    nlm4_grace_seen(req, &res);
    dbfs_lock_result_free(&res);
}

/* nlm4_do_share -- see nlm4_int.h. */
void nlm4_do_share(srv_req *req, const nlm4_shareargs *a, nlm4_shareres *r)
{
    nlm4_share_call(req, false, a, r);
}

/* nlm4_do_unshare -- see nlm4_int.h. */
void nlm4_do_unshare(srv_req *req, const nlm4_shareargs *a, nlm4_shareres *r)
{
    nlm4_share_call(req, true, a, r);
}

/* nlm4_do_free_all -- see nlm4_int.h. */
void nlm4_do_free_all(srv_req *req, const nlm4_notify *a)
{
    nlm4_host_rebooted(nlm4_svc_of(req), req, a->name.name_val, a->name.name_len, a->state, true);
}

/* nlm4_reply_msg -- see nlm4_int.h. Nothing is sent for a call dropped
 * (the client sends it again). */
void nlm4_reply_msg(srv_req *req, uint32_t vers, uint32_t proc, xdrproc_t xdr_res, const void *res)
{
    static const char *const names[] = {"TEST_RES", "LOCK_RES", "CANCEL_RES", "UNLOCK_RES",
                                        "GRANTED_RES"};
    nlm4_out *o;

    if (req->drop)
        return;
    o = nlm4_out_new(nlm4_svc_of(req), (const struct sockaddr *)&req->peer, req->peerlen,
                     (const struct sockaddr *)&req->local, req->locallen, req->tcp, NLM_PROG, vers,
                     proc, xdr_res, res,
                     proc >= NLMPROC_TEST_RES && proc <= NLMPROC_GRANTED_RES
                         ? names[proc - NLMPROC_TEST_RES]
                         : "RES");
    if (o) {
        o->callback = true;
        nlm4_out_send(o);
    }
}

/* NLM4_TEST. */
void nlm4_proc_test(srv_req *req, void *args, void *res)
{
    nlm4_do_test(req, args, res);
}

/* NLM4_LOCK. */
void nlm4_proc_lock(srv_req *req, void *args, void *res)
{
    nlm4_do_lock(req, NLM4_VERS, true, false, args, res);
}

/* NLM4_CANCEL. */
void nlm4_proc_cancel(srv_req *req, void *args, void *res)
{
    nlm4_do_cancel(req, args, res);
}

/* NLM4_UNLOCK. */
void nlm4_proc_unlock(srv_req *req, void *args, void *res)
{
    nlm4_do_unlock(req, args, res);
}

/* NLM4_GRANTED: a server's callback to a client; we are none. */
void nlm4_proc_granted(srv_req *req, void *args, void *res)
{
    const nlm4_testargs *a = args;
    nlm4_res *r = res;

    (void)req;
    r->cookie = a->cookie;
    r->stat.stat = NLM4_DENIED;
}

/* NLM4_TEST_MSG: TEST, answered by TEST_RES. */
void nlm4_proc_test_msg(srv_req *req, void *args, void *res)
{
    nlm4_testres *r = srv_req_alloc(req, sizeof *r);

    (void)res;
    nlm4_do_test(req, args, r);
    nlm4_reply_msg(req, NLM4_VERS, NLMPROC_TEST_RES, (xdrproc_t)xdr_nlm4_testres, r);
}

/* NLM4_LOCK_MSG: LOCK, answered by LOCK_RES (a grant later by GRANTED_MSG). */
void nlm4_proc_lock_msg(srv_req *req, void *args, void *res)
{
    nlm4_res *r = srv_req_alloc(req, sizeof *r);

    (void)res;
    nlm4_do_lock(req, NLM4_VERS, true, true, args, r);
    nlm4_reply_msg(req, NLM4_VERS, NLMPROC_LOCK_RES, (xdrproc_t)xdr_nlm4_res, r);
}

/* NLM4_CANCEL_MSG: CANCEL, answered by CANCEL_RES. */
void nlm4_proc_cancel_msg(srv_req *req, void *args, void *res)
{
    nlm4_res *r = srv_req_alloc(req, sizeof *r);

    (void)res;
    nlm4_do_cancel(req, args, r);
    nlm4_reply_msg(req, NLM4_VERS, NLMPROC_CANCEL_RES, (xdrproc_t)xdr_nlm4_res, r);
}

/* NLM4_UNLOCK_MSG: UNLOCK, answered by UNLOCK_RES. */
void nlm4_proc_unlock_msg(srv_req *req, void *args, void *res)
{
    nlm4_res *r = srv_req_alloc(req, sizeof *r);

    (void)res;
    nlm4_do_unlock(req, args, r);
    nlm4_reply_msg(req, NLM4_VERS, NLMPROC_UNLOCK_RES, (xdrproc_t)xdr_nlm4_res, r);
}

/* NLM4_GRANTED_MSG: a server's callback; we are no client and do not answer. */
void nlm4_proc_granted_msg(srv_req *req, void *args, void *res)
{
    (void)req;
    (void)args;
    (void)res;
}

/* NLM4_*_RES: answers to *_MSG calls, which we never make; GRANTED_RES
 * answers our GRANTED_MSG, and the lock stays granted whatever it says. */
void nlm4_proc_res(srv_req *req, void *args, void *res)
{
    (void)req;
    (void)args;
    (void)res;
}

/* NLM4_SHARE. */
void nlm4_proc_share(srv_req *req, void *args, void *res)
{
    nlm4_do_share(req, args, res);
}

/* NLM4_UNSHARE. */
void nlm4_proc_unshare(srv_req *req, void *args, void *res)
{
    nlm4_do_unshare(req, args, res);
}

/* NLM4_NM_LOCK: LOCK for a host that is not monitored. */
void nlm4_proc_nm_lock(srv_req *req, void *args, void *res)
{
    nlm4_do_lock(req, NLM4_VERS, false, false, args, res);
}

/* NLM4_FREE_ALL: the host named rebooted (no reply). */
void nlm4_proc_free_all(srv_req *req, void *args, void *res)
{
    (void)res;
    nlm4_do_free_all(req, args);
}
