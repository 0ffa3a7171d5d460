/*
 * srv_dispatch.c -- one RPC call record in, one reply record out (RFC 5531):
 * call header, credentials, program/version/procedure lookup, the
 * duplicate request cache, argument decoding, the handler, reply encoding.
 * It knows nothing about sockets: srv_dispatch_record() is driven by the
 * workers, by the unit tests and (later) by a fuzzer alike.
 *
 *   Checks, in order, and the reply each failure gets:
 *
 *     xid, msg_type == CALL          undecodable or a REPLY: dropped (no reply)
 *     rpcvers == 2                   MSG_DENIED RPC_MISMATCH low=2 high=2
 *     prog, vers, proc, cred, verf   truncated: dropped
 *     credential                     AUTH_SYS parsed strictly (body <= 400
 *                                    bytes, machine name <= 255 bytes, <= 16
 *                                    gids, length exactly consumed), AUTH_NONE
 *                                    with an empty body; else AUTH_ERROR
 *                                    AUTH_BADCRED; any other flavor AUTH_ERROR
 *                                    AUTH_REJECTEDCRED; a verifier over 400
 *                                    bytes AUTH_BADVERF
 *     program                        unknown (NLM included): PROG_UNAVAIL
 *     version                        PROG_MISMATCH low=high=the one we serve
 *     procedure                      beyond the table: PROC_UNAVAIL
 *     AUTH_NONE on a procedure       AUTH_ERROR AUTH_TOOWEAK (only the NULL
 *     other than NULL                procedure, number 0, needs no identity)
 *     duplicate request cache        non-idempotent calls only: a call still
 *                                    running is dropped, a finished one gets
 *                                    its first reply again
 *     arguments                      GARBAGE_ARGS if args_xdr fails
 *     database connection            NFS: the result's status is set to
 *                                    NFS3ERR_JUKEBOX without running the
 *                                    handler; MOUNT: dropped (retried)
 *     reply encoding                 SYSTEM_ERR if res_xdr fails (a bug)
 *
 * Every bad call gets one log line (rate-limited per client address).
 * Every call slower than [log] slow_ms gets one "slow:" line (srv_slow_log),
 * and its NFSv3 status and the database state go to the statistics.
 *
 * JUKEBOX without a handler: every NFSv3 result (RFC 1813) is a union
 * whose discriminant, the nfsstat3 status, is its first member, and every
 * failure arm holds only post_op_attr/wcc_data whose zeroed form encodes
 * "no attributes". So a zeroed result with its status set to
 * NFS3ERR_JUKEBOX is a complete, valid reply for every procedure.
 *
 * NOTES
 *   Memory: the argument struct and the result struct are carved from the
 *   request's memory (srv_req_alloc), zeroed; what the argument decoder
 *   allocates inside is released with xdr_free after the reply is encoded;
 *   then srv_req_release frees everything the handler allocated. The
 *   reply goes into the caller's srv_buf, which grows as needed.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include <rpc/rpc.h>

#include "nfs3.h"
#include "srv_int.h"

#define SRV_RPC_VERSION 2
/* Words before an accepted reply's results: xid, REPLY, MSG_ACCEPTED,
 * verifier flavor and length, accept_stat. */
#define SRV_ACCEPTED_HEAD 24
/* No reply we make is larger than this (READ data + attributes). */
#define SRV_REPLY_MAX (SRV_RECORD_MAX)

typedef bool_t (*srv_xdr_fn)(XDR *, void *);

/* The call header, as decoded. */
typedef struct {
    uint32_t xid, rpcvers, prog, vers, proc;
    uint32_t cred_flavor, cred_len;
    unsigned char cred[MAX_AUTH_BYTES];
    uint32_t verf_flavor, verf_len;
    size_t args_off; /* where the arguments start in the record */
} srv_call;

unsigned srv_programs_default(srv_program out[SRV_PROGS_MAX])
{
    memset(out, 0, sizeof(srv_program) * SRV_PROGS_MAX);
    out[0] = (srv_program){
        .name = "nfs3",
        .prog = NFS_PROGRAM,
        .vers = NFS_V3,
        .procs = nfs3_procs,
        .nprocs = nfs3_nprocs,
        .needs_db = true,
        .jukebox_without_db = true,
    };
    out[1] = (srv_program){
        .name = "mount3",
        .prog = 100005, /* MOUNT_PROGRAM */
        .vers = 3,
        .procs = mnt3_procs,
        .nprocs = mnt3_nprocs,
        .needs_db = true,
        .jukebox_without_db = false,
    };
    return 2;
}

static uint64_t srv_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One log line about a bad call from peer, if the rate limit allows. */
static void G_GNUC_PRINTF(4, 5) srv_complain(const srv_env *env, const struct sockaddr *peer,
                                             socklen_t peerlen, const char *fmt, ...)
{
    unsigned suppressed;
    char who[LOG_PEER_STRLEN];
    va_list ap;

    if (!log_ratelimit_allow(env->rl, peer, &suppressed))
        return;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    log_peer_string(peer, peerlen, who, sizeof who);
    if (suppressed)
        g_message("bad call from %s: %s (%u similar lines suppressed)", who, msg, suppressed);
    else
        g_message("bad call from %s: %s", who, msg);
    g_free(msg);
}

/*
 * The slow-operation log: one line for a call that took [log] slow_ms or
 * longer (0 = never), with what to look at first: the procedure, the
 * client, the time and the database round trips it took.
 */
static void srv_slow_log(const srv_env *env, const srv_program *prog, const srv_proc *proc,
                         const srv_call *c, const struct sockaddr *peer, socklen_t peerlen,
                         uint64_t ns, uint64_t rt, uint32_t status)
{
    const cfg *cf = env->ctx ? env->ctx->cfg : NULL;
    char who[LOG_PEER_STRLEN];
    const char *sname = status != UINT32_MAX ? srv_stats_status_name(status) : NULL;

    if (!cf || cf->slow_ms == 0 || ns < (uint64_t)cf->slow_ms * 1000000u)
        return;
    log_peer_string(peer, peerlen, who, sizeof who);
    g_message(
        "slow: prog=%s proc=%s client=%s xid=0x%08x duration_ms=%.1f round_trips=%" G_GUINT64_FORMAT
        " status=%s",
        prog->name, proc->name ? proc->name : "?", who, c->xid, (double)ns / 1e6, rt,
        sname ? sname : "-");
}

/* ---- replies --------------------------------------------------------------- */

/* Start a reply in out: xid, REPLY, reply_stat. */
static void srv_reply_begin(XDR *x, srv_buf *out, uint32_t xid, uint32_t reply_stat)
{
    uint32_t type = REPLY;

    srv_buf_reserve(out, 64);
    xdrmem_create(x, (char *)out->data, (u_int)out->cap, XDR_ENCODE);
    xdr_u_int(x, &xid);
    xdr_u_int(x, &type);
    xdr_u_int(x, &reply_stat);
}

/* The AUTH_NONE verifier and accept_stat of an accepted reply. */
static void srv_reply_accept(XDR *x, uint32_t accept_stat)
{
    uint32_t flavor = AUTH_NONE, len = 0;

    xdr_u_int(x, &flavor);
    xdr_u_int(x, &len);
    xdr_u_int(x, &accept_stat);
}

static void srv_reply_end(XDR *x, srv_buf *out)
{
    out->len = xdr_getpos(x);
    xdr_destroy(x);
}

/* An accepted reply without results (PROG_UNAVAIL, PROC_UNAVAIL, GARBAGE_ARGS,
 * SYSTEM_ERR) or with a version range (PROG_MISMATCH). */
static srv_dispatch_result srv_reply_accepted(srv_buf *out, uint32_t xid, uint32_t stat,
                                              uint32_t low, uint32_t high)
{
    XDR x;

    srv_reply_begin(&x, out, xid, MSG_ACCEPTED);
    srv_reply_accept(&x, stat);
    if (stat == PROG_MISMATCH) {
        xdr_u_int(&x, &low);
        xdr_u_int(&x, &high);
    }
    srv_reply_end(&x, out);
    return SRV_DISPATCH_REPLY;
}

static srv_dispatch_result srv_reply_rpc_mismatch(srv_buf *out, uint32_t xid)
{
    uint32_t stat = RPC_MISMATCH, low = SRV_RPC_VERSION, high = SRV_RPC_VERSION;
    XDR x;

    srv_reply_begin(&x, out, xid, MSG_DENIED);
    xdr_u_int(&x, &stat);
    xdr_u_int(&x, &low);
    xdr_u_int(&x, &high);
    srv_reply_end(&x, out);
    return SRV_DISPATCH_REPLY;
}

static srv_dispatch_result srv_reply_auth_error(srv_buf *out, uint32_t xid, uint32_t why)
{
    uint32_t stat = AUTH_ERROR;
    XDR x;

    srv_reply_begin(&x, out, xid, MSG_DENIED);
    xdr_u_int(&x, &stat);
    xdr_u_int(&x, &why);
    srv_reply_end(&x, out);
    return SRV_DISPATCH_REPLY;
}

/* A SUCCESS reply with res encoded by res_xdr; false if it cannot be encoded. */
static bool srv_reply_success(srv_buf *out, uint32_t xid, xdrproc_t res_xdr, void *res)
{
    srv_xdr_fn fn = (srv_xdr_fn)res_xdr;
    XDR x;

    for (int attempt = 0; attempt < 2; attempt++) {
        srv_reply_begin(&x, out, xid, MSG_ACCEPTED);
        srv_reply_accept(&x, SUCCESS);
        if (!fn || fn(&x, res)) {
            srv_reply_end(&x, out);
            return true;
        }
        xdr_destroy(&x);
        if (attempt > 0)
            break;
        /* Out of room, or res is not encodable: size it and try once more. */
        u_long need = xdr_sizeof(res_xdr, res);
        if (need == 0 || need > SRV_REPLY_MAX)
            break;
        srv_buf_reserve(out, SRV_ACCEPTED_HEAD + need);
    }
    out->len = 0;
    return false;
}

/* ---- the call header --------------------------------------------------------- */

/*
 * Decode the header after xid and msg_type. Returns 0; -EPROTO if the RPC
 * version is not 2 (the rest is not decoded); -EBADMSG if it is truncated.
 */
static int srv_decode_header(XDR *x, srv_call *c)
{
    if (!xdr_u_int(x, &c->rpcvers))
        return -EBADMSG;
    if (c->rpcvers != SRV_RPC_VERSION)
        return -EPROTO;
    if (!xdr_u_int(x, &c->prog) || !xdr_u_int(x, &c->vers) || !xdr_u_int(x, &c->proc))
        return -EBADMSG;
    if (!xdr_u_int(x, &c->cred_flavor) || !xdr_u_int(x, &c->cred_len))
        return -EBADMSG;
    if (c->cred_len > MAX_AUTH_BYTES)
        return 0; /* AUTH_BADCRED, decided by the caller; the rest is unreadable */
    if (!xdr_opaque(x, (char *)c->cred, c->cred_len))
        return -EBADMSG;
    if (!xdr_u_int(x, &c->verf_flavor) || !xdr_u_int(x, &c->verf_len))
        return -EBADMSG;
    if (c->verf_len > MAX_AUTH_BYTES)
        return 0; /* AUTH_BADVERF */
    unsigned char verf[MAX_AUTH_BYTES];
    if (!xdr_opaque(x, (char *)verf, c->verf_len))
        return -EBADMSG;
    c->args_off = xdr_getpos(x);
    return 0;
}

/*
 * Parse an AUTH_SYS credential body (RFC 5531 appendix A) strictly.
 * Returns 0, or -1 if anything is out of bounds or the length disagrees.
 */
static int srv_parse_authsys(const unsigned char *body, uint32_t len, srv_authsys *a)
{
    uint32_t stamp, mlen, ngids;
    XDR x;
    int rc = -1;

    memset(a, 0, sizeof *a);
    xdrmem_create(&x, (char *)body, len, XDR_DECODE);
    if (!xdr_u_int(&x, &stamp) || !xdr_u_int(&x, &mlen) || mlen > sizeof a->machine - 1)
        goto out;
    if (!xdr_opaque(&x, a->machine, mlen) || memchr(a->machine, '\0', mlen))
        goto out;
    a->machine[mlen] = '\0';
    if (!xdr_u_int(&x, &a->uid) || !xdr_u_int(&x, &a->gid) || !xdr_u_int(&x, &ngids) ||
        ngids > DBFS_NGROUPS_MAX)
        goto out;
    for (uint32_t i = 0; i < ngids; i++)
        if (!xdr_u_int(&x, &a->groups[i]))
            goto out;
    a->ngroups = ngids;
    if (xdr_getpos(&x) != len)
        goto out;
    a->present = true;
    rc = 0;
out:
    xdr_destroy(&x);
    return rc;
}

/* ---- dispatch ---------------------------------------------------------------- */

srv_dispatch_result srv_dispatch_record(const srv_env *env, dbfs_conn *db, const void *rec,
                                        size_t len, const struct sockaddr *peer, socklen_t peerlen,
                                        bool tcp, srv_buf *out)
{
    uint64_t t0 = srv_now_ns();
    srv_call c = {0};
    uint32_t msg_type;
    XDR x;
    int rc;

    out->len = 0;
    xdrmem_create(&x, (char *)rec, (u_int)len, XDR_DECODE);
    if (!xdr_u_int(&x, &c.xid) || !xdr_u_int(&x, &msg_type)) {
        xdr_destroy(&x);
        srv_stats_event(env->stats, SRV_EV_BAD_CALL);
        srv_complain(env, peer, peerlen, "record of %zu bytes is too short for a call", len);
        return SRV_DISPATCH_DROP;
    }
    if (msg_type != CALL) {
        xdr_destroy(&x);
        srv_stats_event(env->stats, SRV_EV_BAD_CALL);
        srv_complain(env, peer, peerlen, "xid 0x%08x: message type %u is not a call", c.xid,
                     msg_type);
        return SRV_DISPATCH_DROP;
    }
    rc = srv_decode_header(&x, &c);
    xdr_destroy(&x);
    if (rc == -EPROTO) {
        srv_stats_event(env->stats, SRV_EV_RPC_MISMATCH);
        srv_complain(env, peer, peerlen, "xid 0x%08x: RPC version %u (only 2)", c.xid, c.rpcvers);
        return srv_reply_rpc_mismatch(out, c.xid);
    }
    if (rc != 0) {
        srv_stats_event(env->stats, SRV_EV_BAD_CALL);
        srv_complain(env, peer, peerlen, "xid 0x%08x: call header truncated (%zu bytes)", c.xid,
                     len);
        return SRV_DISPATCH_DROP;
    }

    /* Credentials. */
    srv_req req = {0};
    const char *auth_problem = NULL;
    uint32_t auth_why = 0;
    if (c.cred_len > MAX_AUTH_BYTES) {
        auth_problem = "credential body over 400 bytes";
        auth_why = AUTH_BADCRED;
    } else if (c.verf_len > MAX_AUTH_BYTES) {
        auth_problem = "verifier over 400 bytes";
        auth_why = AUTH_BADVERF;
    } else if (c.cred_flavor == AUTH_SYS) {
        if (srv_parse_authsys(c.cred, c.cred_len, &req.auth) != 0) {
            auth_problem = "malformed AUTH_SYS credential (machine name over 255 bytes, over 16 "
                           "groups, or a length that does not add up)";
            auth_why = AUTH_BADCRED;
        }
    } else if (c.cred_flavor == AUTH_NONE) {
        if (c.cred_len != 0) {
            auth_problem = "AUTH_NONE credential with a body";
            auth_why = AUTH_BADCRED;
        }
    } else {
        auth_problem = "credential flavor not supported (only AUTH_SYS and AUTH_NONE)";
        auth_why = AUTH_REJECTEDCRED;
    }
    if (auth_problem) {
        srv_stats_event(env->stats, SRV_EV_AUTH_ERROR);
        srv_complain(env, peer, peerlen, "xid 0x%08x: %s (flavor %u)", c.xid, auth_problem,
                     c.cred_flavor);
        return srv_reply_auth_error(out, c.xid, auth_why);
    }

    /* Program, version, procedure. */
    const srv_program *prog = NULL;
    unsigned prog_index = 0;
    for (unsigned i = 0; i < env->nprogs && !prog; i++) {
        if (env->progs[i].prog == c.prog) {
            prog = &env->progs[i];
            prog_index = i;
        }
    }
    if (!prog) {
        srv_stats_event(env->stats, SRV_EV_PROG_UNAVAIL);
        srv_complain(env, peer, peerlen, "xid 0x%08x: program %u is not served", c.xid, c.prog);
        return srv_reply_accepted(out, c.xid, PROG_UNAVAIL, 0, 0);
    }
    if (c.vers != prog->vers) {
        srv_stats_event(env->stats, SRV_EV_PROG_MISMATCH);
        srv_complain(env, peer, peerlen, "xid 0x%08x: %s version %u (only %u)", c.xid, prog->name,
                     c.vers, prog->vers);
        return srv_reply_accepted(out, c.xid, PROG_MISMATCH, prog->vers, prog->vers);
    }
    if (c.proc >= prog->nprocs) {
        srv_stats_event(env->stats, SRV_EV_PROC_UNAVAIL);
        srv_complain(env, peer, peerlen, "xid 0x%08x: %s has no procedure %u", c.xid, prog->name,
                     c.proc);
        return srv_reply_accepted(out, c.xid, PROC_UNAVAIL, 0, 0);
    }
    const srv_proc *proc = &prog->procs[c.proc];
    if (!req.auth.present && c.proc != 0) {
        srv_stats_event(env->stats, SRV_EV_AUTH_ERROR);
        srv_stats_call(env->stats, prog_index, c.proc, srv_now_ns() - t0, 0, true, false);
        srv_complain(env, peer, peerlen, "xid 0x%08x: %s %s needs AUTH_SYS, got AUTH_NONE", c.xid,
                     prog->name, proc->name);
        return srv_reply_auth_error(out, c.xid, AUTH_TOOWEAK);
    }

    /* Duplicate request cache. */
    const unsigned char *args_bytes = (const unsigned char *)rec + c.args_off;
    size_t args_len = len - c.args_off;
    srv_drc_key key;
    bool cached = proc->non_idempotent && env->drc;
    if (cached) {
        srv_drc_key_init(&key, peer, c.xid, c.prog, c.vers, c.proc, args_bytes, args_len);
        srv_drc_result dr = srv_drc_begin(env->drc, &key, out);
        if (dr == SRV_DRC_HIT) {
            srv_stats_call(env->stats, prog_index, c.proc, srv_now_ns() - t0, 0, false, true);
            g_debug("xid 0x%08x: %s %s retransmitted: first reply replayed", c.xid, prog->name,
                    proc->name);
            return SRV_DISPATCH_REPLY;
        }
        if (dr == SRV_DRC_IN_PROGRESS) {
            srv_stats_event(env->stats, SRV_EV_DRC_DROP);
            g_debug("xid 0x%08x: %s %s retransmitted while running: dropped", c.xid, prog->name,
                    proc->name);
            return SRV_DISPATCH_DROP;
        }
    }

    /* Arguments. */
    srv_dispatch_result result = SRV_DISPATCH_REPLY;
    bool rpc_error = false, keep_reply = true;
    uint64_t rt0 = db ? dbfs_conn_round_trips(db) : 0;
    void *args, *res;
    bool args_decoded = false;

    req.srv = env->ctx;
    req.db = db;
    if (peer && peerlen <= sizeof req.peer) {
        memcpy(&req.peer, peer, peerlen);
        req.peerlen = peerlen;
    }
    req.tcp = tcp;
    req.xid = c.xid;
    args = srv_req_alloc(&req, proc->args_size);
    res = srv_req_alloc(&req, proc->res_size);

    xdrmem_create(&x, (char *)args_bytes, (u_int)args_len, XDR_DECODE);
    args_decoded = !proc->args_xdr || ((srv_xdr_fn)proc->args_xdr)(&x, args);
    xdr_destroy(&x);
    if (!args_decoded) {
        srv_complain(env, peer, peerlen, "xid 0x%08x: %s %s: undecodable arguments (%zu bytes)",
                     c.xid, prog->name, proc->name, args_len);
        srv_reply_accepted(out, c.xid, GARBAGE_ARGS, 0, 0);
        rpc_error = true;
        keep_reply = false;
        goto out;
    }

    /* The handler, or what stands for it without a database. */
    if (c.proc != 0 && prog->needs_db)
        srv_stats_db(env->stats, db != NULL);
    if (!db && c.proc != 0 && prog->needs_db) {
        srv_stats_event(env->stats, SRV_EV_NO_DB);
        keep_reply = false;
        if (!prog->jukebox_without_db) {
            srv_complain(env, peer, peerlen, "xid 0x%08x: %s %s: no database connection: dropped",
                         c.xid, prog->name, proc->name);
            result = SRV_DISPATCH_DROP;
            goto out;
        }
        if (proc->res_size >= sizeof(nfsstat3))
            *(nfsstat3 *)res = NFS3ERR_JUKEBOX;
    } else if (proc->handler) {
        proc->handler(&req, args, res);
        if (prog->jukebox_without_db && proc->res_size >= sizeof(nfsstat3) &&
            *(nfsstat3 *)res == NFS3ERR_JUKEBOX)
            keep_reply = false; /* nothing happened: a retransmission may run */
    }
    if (!srv_reply_success(out, c.xid, proc->res_xdr, res)) {
        g_warning("xid 0x%08x: %s %s: the result cannot be encoded (a server bug): SYSTEM_ERR",
                  c.xid, prog->name, proc->name);
        srv_reply_accepted(out, c.xid, SYSTEM_ERR, 0, 0);
        rpc_error = true;
        keep_reply = false;
    }

out:
    if (cached) {
        if (keep_reply && result == SRV_DISPATCH_REPLY)
            srv_drc_finish(env->drc, &key, out->data, out->len);
        else
            srv_drc_abort(env->drc, &key);
    }
    /* An NFSv3 result's status is its first member (see the header). */
    uint32_t status = UINT32_MAX;
    if (prog->jukebox_without_db && !rpc_error && result == SRV_DISPATCH_REPLY &&
        proc->res_size >= sizeof(nfsstat3)) {
        status = (uint32_t) * (nfsstat3 *)res;
        srv_stats_status(env->stats, status);
    }
    if (proc->args_xdr)
        xdr_free(proc->args_xdr, args);
    srv_req_release(&req);
    uint64_t ns = srv_now_ns() - t0, rt = db ? dbfs_conn_round_trips(db) - rt0 : 0;
    srv_stats_call(env->stats, prog_index, c.proc, ns, rt, rpc_error, false);
    srv_slow_log(env, prog, proc, &c, peer, peerlen, ns, rt, status);
    return result;
}
