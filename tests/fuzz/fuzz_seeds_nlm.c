/*
 * fuzz_seeds_nlm.c -- the lock manager's seeds (fuzz_seeds_int.h): every
 * procedure of NLM versions 1, 3 and 4 (program 100021) and of NSM
 * (program 100024) with well-formed arguments encoded by the rpcgen
 * routines of rpc/nlm4.x and rpc/nsm.x, naming the seeds' regular file;
 * plus a blocking LOCK and one whose range reaches past 2^63 - 1.
 */
#include <string.h>

#include <glib.h>

#include "fuzz_seeds_int.h"
#include "nlm4.h"
#include "nsm.h"

static char fuzz_caller[] = "fuzzhost";
static char fuzz_oh[] = "1@fuzzhost";
static char fuzz_cookie[] = "ck";

static nlm4_lock fuzz_lock4(const fuzz_fh *fh, uint64_t off, uint64_t len)
{
    return (nlm4_lock){.caller_name = {strlen(fuzz_caller), fuzz_caller},
                       .fh = {fh->len, (char *)fh->data},
                       .oh = {strlen(fuzz_oh), fuzz_oh},
                       .svid = 1,
                       .l_offset = off,
                       .l_len = len};
}

static nlm_lock fuzz_lock3(const fuzz_fh *fh, uint32_t off, uint32_t len)
{
    return (nlm_lock){.caller_name = {strlen(fuzz_caller), fuzz_caller},
                      .fh = {fh->len, (char *)fh->data},
                      .oh = {strlen(fuzz_oh), fuzz_oh},
                      .uppid = 1,
                      .l_offset = off,
                      .l_len = len};
}

static void fuzz_emit(fuzz_seed_sink *s, const char *name, uint32_t prog, uint32_t vers,
                      uint32_t proc, xdrproc_t x, void *args)
{
    fuzz_seed_emit_full(s, name, 2, prog, vers, proc, true, 0, x, args);
}

/* Version 4: each procedure with its argument type. */
static void fuzz_seeds_nlm4(fuzz_seed_sink *s, const fuzz_handles *h)
{
    nlm_netobj ck = {strlen(fuzz_cookie), fuzz_cookie};
    nlm4_testargs t = {.cookie = ck, .exclusive = 1, .alock = fuzz_lock4(&h->file, 0, 100)};
    nlm4_lockargs l = {.cookie = ck, .exclusive = 1, .alock = t.alock, .state = 1};
    nlm4_cancargs cn = {.cookie = ck, .block = 1, .exclusive = 1, .alock = t.alock};
    nlm4_unlockargs u = {.cookie = ck, .alock = t.alock};
    nlm4_res r = {.cookie = ck, .stat = {NLM4_GRANTED}};
    nlm4_testres tr = {.cookie = ck, .stat = {.stat = NLM4_GRANTED}};
    nlm4_shareargs sh = {.cookie = ck,
                         .share = {.caller_name = t.alock.caller_name,
                                   .fh = t.alock.fh,
                                   .oh = t.alock.oh,
                                   .mode = fsm_DW,
                                   .access = fsa_R}};
    nlm4_notify n = {.name = {strlen(fuzz_caller), fuzz_caller}, .state = 3};

    fuzz_emit(s, "nlm4-00-null", NLM_PROG, 4, NLMPROC_NULL, NULL, NULL);
    fuzz_emit(s, "nlm4-01-test", NLM_PROG, 4, NLMPROC_TEST, (xdrproc_t)xdr_nlm4_testargs, &t);
    fuzz_emit(s, "nlm4-02-lock", NLM_PROG, 4, NLMPROC_LOCK, (xdrproc_t)xdr_nlm4_lockargs, &l);
    l.block = 1;
    fuzz_emit(s, "nlm4-02-lock-block", NLM_PROG, 4, NLMPROC_LOCK, (xdrproc_t)xdr_nlm4_lockargs, &l);
    l.alock.l_offset = UINT64_C(1) << 63;
    fuzz_emit(s, "nlm4-02-lock-fbig", NLM_PROG, 4, NLMPROC_LOCK, (xdrproc_t)xdr_nlm4_lockargs, &l);
    fuzz_emit(s, "nlm4-03-cancel", NLM_PROG, 4, NLMPROC_CANCEL, (xdrproc_t)xdr_nlm4_cancargs, &cn);
    fuzz_emit(s, "nlm4-04-unlock", NLM_PROG, 4, NLMPROC_UNLOCK, (xdrproc_t)xdr_nlm4_unlockargs, &u);
    fuzz_emit(s, "nlm4-05-granted", NLM_PROG, 4, NLMPROC_GRANTED, (xdrproc_t)xdr_nlm4_testargs, &t);
    fuzz_emit(s, "nlm4-06-test-msg", NLM_PROG, 4, NLMPROC_TEST_MSG, (xdrproc_t)xdr_nlm4_testargs,
              &t);
    l.alock.l_offset = 0;
    fuzz_emit(s, "nlm4-07-lock-msg", NLM_PROG, 4, NLMPROC_LOCK_MSG, (xdrproc_t)xdr_nlm4_lockargs,
              &l);
    fuzz_emit(s, "nlm4-08-cancel-msg", NLM_PROG, 4, NLMPROC_CANCEL_MSG,
              (xdrproc_t)xdr_nlm4_cancargs, &cn);
    fuzz_emit(s, "nlm4-09-unlock-msg", NLM_PROG, 4, NLMPROC_UNLOCK_MSG,
              (xdrproc_t)xdr_nlm4_unlockargs, &u);
    fuzz_emit(s, "nlm4-10-granted-msg", NLM_PROG, 4, NLMPROC_GRANTED_MSG,
              (xdrproc_t)xdr_nlm4_testargs, &t);
    fuzz_emit(s, "nlm4-11-test-res", NLM_PROG, 4, NLMPROC_TEST_RES, (xdrproc_t)xdr_nlm4_testres,
              &tr);
    fuzz_emit(s, "nlm4-12-lock-res", NLM_PROG, 4, NLMPROC_LOCK_RES, (xdrproc_t)xdr_nlm4_res, &r);
    fuzz_emit(s, "nlm4-15-granted-res", NLM_PROG, 4, NLMPROC_GRANTED_RES, (xdrproc_t)xdr_nlm4_res,
              &r);
    fuzz_emit(s, "nlm4-20-share", NLM_PROG, 4, NLMPROC_SHARE, (xdrproc_t)xdr_nlm4_shareargs, &sh);
    fuzz_emit(s, "nlm4-21-unshare", NLM_PROG, 4, NLMPROC_UNSHARE, (xdrproc_t)xdr_nlm4_shareargs,
              &sh);
    fuzz_emit(s, "nlm4-22-nm-lock", NLM_PROG, 4, NLMPROC_NM_LOCK, (xdrproc_t)xdr_nlm4_lockargs, &l);
    fuzz_emit(s, "nlm4-23-free-all", NLM_PROG, 4, NLMPROC_FREE_ALL, (xdrproc_t)xdr_nlm4_notify, &n);
}

/* Versions 1 and 3: the 32-bit forms. */
static void fuzz_seeds_nlm3(fuzz_seed_sink *s, const fuzz_handles *h)
{
    nlm_netobj ck = {strlen(fuzz_cookie), fuzz_cookie};
    nlm_testargs t = {.cookie = ck, .exclusive = 0, .alock = fuzz_lock3(&h->file, 10, 0)};
    nlm_lockargs l = {.cookie = ck, .block = 1, .exclusive = 1, .alock = t.alock, .state = 1};
    nlm_unlockargs u = {.cookie = ck, .alock = t.alock};
    nlm_shareargs sh = {.cookie = ck,
                        .share = {.caller_name = t.alock.caller_name,
                                  .fh = t.alock.fh,
                                  .oh = t.alock.oh,
                                  .mode = fsm_DN,
                                  .access = fsa_RW}};
    nlm_notify n = {.name = {strlen(fuzz_caller), fuzz_caller}, .state = 5};

    fuzz_emit(s, "nlm1-01-test", NLM_PROG, 1, NLMPROC_TEST, (xdrproc_t)xdr_nlm_testargs, &t);
    fuzz_emit(s, "nlm1-02-lock", NLM_PROG, 1, NLMPROC_LOCK, (xdrproc_t)xdr_nlm_lockargs, &l);
    fuzz_emit(s, "nlm3-01-test", NLM_PROG, 3, NLMPROC_TEST, (xdrproc_t)xdr_nlm_testargs, &t);
    fuzz_emit(s, "nlm3-02-lock", NLM_PROG, 3, NLMPROC_LOCK, (xdrproc_t)xdr_nlm_lockargs, &l);
    fuzz_emit(s, "nlm3-04-unlock", NLM_PROG, 3, NLMPROC_UNLOCK, (xdrproc_t)xdr_nlm_unlockargs, &u);
    fuzz_emit(s, "nlm3-07-lock-msg", NLM_PROG, 3, NLMPROC_LOCK_MSG, (xdrproc_t)xdr_nlm_lockargs,
              &l);
    fuzz_emit(s, "nlm3-20-share", NLM_PROG, 3, NLMPROC_SHARE, (xdrproc_t)xdr_nlm_shareargs, &sh);
    fuzz_emit(s, "nlm3-22-nm-lock", NLM_PROG, 3, NLMPROC_NM_LOCK, (xdrproc_t)xdr_nlm_lockargs, &l);
    fuzz_emit(s, "nlm3-23-free-all", NLM_PROG, 3, NLMPROC_FREE_ALL, (xdrproc_t)xdr_nlm_notify, &n);
    fuzz_emit(s, "nlm1-20-share-unavail", NLM_PROG, 1, NLMPROC_SHARE, (xdrproc_t)xdr_nlm_shareargs,
              &sh);
}

/* NSM: the server side of statd. */
static void fuzz_seeds_nsm(fuzz_seed_sink *s)
{
    sm_string name = {strlen(fuzz_caller), fuzz_caller};
    sm_name sn = {name};
    my_id me = {name, NLM_PROG, 4, 16};
    mon m = {.mon_id = {name, me}};
    stat_chge ch = {name, 7};

    fuzz_seed_emit_full(s, "nsm1-00-null", 2, SM_PROG, SM_VERS, SM_NULL, false, 0, NULL, NULL);
    fuzz_emit(s, "nsm1-01-stat", SM_PROG, SM_VERS, SM_STAT, (xdrproc_t)xdr_sm_name, &sn);
    fuzz_emit(s, "nsm1-02-mon", SM_PROG, SM_VERS, SM_MON, (xdrproc_t)xdr_mon, &m);
    fuzz_emit(s, "nsm1-03-unmon", SM_PROG, SM_VERS, SM_UNMON, (xdrproc_t)xdr_mon_id, &m.mon_id);
    fuzz_emit(s, "nsm1-04-unmon-all", SM_PROG, SM_VERS, SM_UNMON_ALL, (xdrproc_t)xdr_my_id, &me);
    fuzz_emit(s, "nsm1-05-simu-crash", SM_PROG, SM_VERS, SM_SIMU_CRASH, NULL, NULL);
    fuzz_seed_emit_full(s, "nsm1-06-notify", 2, SM_PROG, SM_VERS, SM_NOTIFY, false, 0,
                        (xdrproc_t)xdr_stat_chge, &ch);
}

/* fuzz_seeds_nlm -- see fuzz_seeds_int.h. */
void fuzz_seeds_nlm(fuzz_seed_sink *s, const fuzz_handles *h)
{
    fuzz_seeds_nlm4(s, h);
    fuzz_seeds_nlm3(s, h);
    fuzz_seeds_nsm(s);
}
