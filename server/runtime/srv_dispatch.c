/*
 * srv_dispatch.c -- one RPC call record in, one reply record out (RFC 5531):
 * call header, credentials, program/version/procedure lookup, the
 * duplicate request cache, argument decoding, the handler, reply encoding.
 * It knows nothing about sockets and nothing about the programs beyond
 * their descriptors (srv.h): srv_dispatch_record() is driven by the
 * workers, by the unit tests and by the fuzzer alike.
 * srv_dispatch_quick() is its short form for the event thread: a call
 * whose procedure has a quick form (srv_proc.quick) and that passes every
 * step below without a complaint is answered there from memory; any other
 * call, untouched and uncounted, goes on to a worker.
 *
 *   Steps, in order, and the reply each failure gets:
 *
 *     srv_step_header      xid, msg_type == CALL: else dropped (no reply)
 *                          rpcvers == 2: else MSG_DENIED RPC_MISMATCH 2..2
 *                          prog, vers, proc, cred, verf: truncated: dropped
 *     srv_step_program     credential (srv_call_credential): AUTH_ERROR
 *                          BADCRED, REJECTEDCRED or BADVERF -- unless the
 *                          program takes any credential (SRV_AUTH_ANY)
 *                          program number not served here: PROG_UNAVAIL
 *                          version not registered: PROG_MISMATCH with the
 *                          lowest and highest registered version
 *                          procedure beyond the table, or without a name,
 *                          or TCP-only over UDP: PROC_UNAVAIL
 *                          AUTH_NONE on a procedure other than NULL (0)
 *                          of an SRV_AUTH_SYS program: AUTH_ERROR TOOWEAK
 *     srv_step_drc         non-idempotent calls only: a call still running
 *                          is dropped, a finished one gets its first reply
 *     srv_step_run         arguments: GARBAGE_ARGS if args_xdr fails
 *                          no database connection (needs_db, not NULL):
 *                          the program's retry_later result without running
 *                          the handler, or dropped; a handler that asked
 *                          for no reply (srv_req_drop): dropped
 *                          reply encoding: SYSTEM_ERR if res_xdr fails
 *
 * Every bad call gets one log line (rate-limited per client address).
 * Every call slower than slow_ms gets one "slow:" line (srv_slow_log);
 * the status of its result (for programs that have one) and the database
 * state go to the statistics.
 *
 * NOTES
 *   Memory: the argument struct and the result struct are carved from the
 *   request's memory (srv_req_alloc), zeroed; what the argument decoder
 *   allocates inside is released with xdr_free after the reply is encoded;
 *   then srv_req_release frees everything the handler allocated. The
 *   reply goes into the caller's srv_buf, which grows as needed; a
 *   handler's payload (srv_req_payload) is already in it, and the reply
 *   is built around it (srv_reply_payload): the message then starts at
 *   out->off.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include <rpc/rpc.h>

#include "srv_call.h"
#include "srv_dispatch.h"
#include "srv_reply.h"

#define SRV_NS_PER_SEC 1000000000ull
#define SRV_NS_PER_MS  1000000ull

typedef bool_t (*srv_xdr_fn)(XDR *, void *);

G_STATIC_ASSERT(SRV_PROGS_MAX <= 32); /* a srv_origin's progs is a 32-bit mask */

/* One call on its way through the steps. */
typedef struct {
    const srv_env *env;
    const srv_origin *from;
    dbfs_conn *db;
    const unsigned char *rec;
    size_t len;
    srv_buf *out;
    uint64_t t0;
    srv_call call;
    srv_call_status call_status;
    srv_authsys auth;
    const srv_program *prog;
    unsigned prog_index;
    const srv_proc *proc;
    bool cached; /* in the duplicate request cache: finish or abort key */
    srv_drc_key key;
    srv_dispatch_result result;
} srv_dispatch;

static uint64_t srv_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * SRV_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

int srv_env_register(srv_env *env, const srv_program *p)
{
    int idx;

    if (!p->name || !p->procs || p->nprocs == 0)
        return -EINVAL;
    for (unsigned i = 0; i < env->nprogs; i++)
        if (env->progs[i]->prog == p->prog && env->progs[i]->vers == p->vers)
            return -EEXIST;
    if (env->nprogs >= SRV_PROGS_MAX)
        return -ENOSPC;
    if (env->stats && (idx = srv_stats_add(env->stats, p)) != (int)env->nprogs)
        return idx < 0 ? idx : -EINVAL; /* stats shared with another env: a bug */
    env->progs[env->nprogs] = p;
    return (int)env->nprogs++;
}

void srv_origin_set(srv_origin *o, const struct sockaddr *peer, socklen_t peerlen,
                    const struct sockaddr *local, socklen_t locallen, bool tcp, uint32_t progs)
{
    memset(o, 0, sizeof *o);
    if (peer && peerlen <= sizeof o->peer) {
        memcpy(&o->peer, peer, peerlen);
        o->peerlen = peerlen;
    }
    if (local && locallen <= sizeof o->local) {
        memcpy(&o->local, local, locallen);
        o->locallen = locallen;
    }
    o->tcp = tcp;
    o->progs = progs;
}

/* One log line about a bad call, if the rate limit allows. */
static void G_GNUC_PRINTF(2, 3) srv_complain(const srv_dispatch *d, const char *fmt, ...)
{
    const struct sockaddr *peer = (const struct sockaddr *)&d->from->peer;
    unsigned suppressed;
    char who[LOG_PEER_STRLEN];
    va_list ap;

    if (!log_ratelimit_allow(d->env->rl, peer, &suppressed))
        return;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    log_peer_string(peer, d->from->peerlen, who, sizeof who);
    if (suppressed)
        g_message("bad call from %s: xid 0x%08x: %s (%u similar lines suppressed)", who,
                  d->call.xid, msg, suppressed);
    else
        g_message("bad call from %s: xid 0x%08x: %s", who, d->call.xid, msg);
    g_free(msg);
}

/* Count ev, finish with reply (or DROP), and say so: false ends the steps. */
static bool srv_end(srv_dispatch *d, srv_stat_event ev, srv_dispatch_result r)
{
    srv_stats_event(d->env->stats, ev);
    d->result = r;
    return false;
}

/* ---- the steps -------------------------------------------------------------- */

static bool srv_step_header(srv_dispatch *d)
{
    d->call_status = srv_call_decode(d->rec, d->len, &d->call);
    switch (d->call_status) {
    case SRV_CALL_OK:
    case SRV_CALL_AUTH_LONG: /* answered once the program is known */
        return true;
    case SRV_CALL_NOT_CALL:
        srv_complain(d, "record of %zu bytes is no call", d->len);
        return srv_end(d, SRV_EV_BAD_CALL, SRV_DISPATCH_DROP);
    case SRV_CALL_RPCVERS:
        srv_complain(d, "RPC version %u (only 2)", d->call.rpcvers);
        srv_reply_rpc_mismatch(d->out, d->call.xid);
        return srv_end(d, SRV_EV_RPC_MISMATCH, SRV_DISPATCH_REPLY);
    case SRV_CALL_TRUNCATED:
        break;
    }
    srv_complain(d, "call header truncated (%zu bytes)", d->len);
    return srv_end(d, SRV_EV_BAD_CALL, SRV_DISPATCH_DROP);
}

/*
 * The registered version of the call's program served where it arrived
 * (d->prog, NULL if none), the lowest and highest such version, and
 * whether any version of the program number is served there.
 */
static bool srv_find_program(srv_dispatch *d, uint32_t *low, uint32_t *high)
{
    const srv_env *env = d->env;
    bool any = false;

    for (unsigned i = 0; i < env->nprogs; i++) {
        const srv_program *p = env->progs[i];
        if (p->prog != d->call.prog || !(d->from->progs & (1u << i)))
            continue;
        if (!any || p->vers < *low)
            *low = p->vers;
        if (!any || p->vers > *high)
            *high = p->vers;
        any = true;
        if (p->vers == d->call.vers) {
            d->prog = p;
            d->prog_index = i;
        }
    }
    return any;
}

/* Point d->proc at the call's procedure of d->prog; false when it is not
 * served (beyond the table, unnamed, or TCP-only and called over UDP). */
static bool srv_proc_served(srv_dispatch *d)
{
    if (d->call.proc < d->prog->nprocs)
        d->proc = &d->prog->procs[d->call.proc];
    return d->proc && d->proc->name && (!d->proc->tcp_only || d->from->tcp);
}

/* AUTH_NONE on a procedure other than NULL of an SRV_AUTH_SYS program. */
static bool srv_auth_too_weak(const srv_dispatch *d)
{
    return !d->auth.present && d->call.proc != 0 && d->prog->auth == SRV_AUTH_SYS;
}

/* Credentials, then program, version and procedure. */
static bool srv_step_program(srv_dispatch *d)
{
    uint32_t low = 0, high = 0;
    const char *why;
    enum auth_stat as = srv_call_credential(&d->call, &d->auth, &why);
    bool known = srv_find_program(d, &low, &high);

    if (as != AUTH_OK &&
        (d->call_status != SRV_CALL_OK || !d->prog || d->prog->auth != SRV_AUTH_ANY)) {
        srv_complain(d, "%s (flavor %u)", why, d->call.cred_flavor);
        srv_reply_auth_error(d->out, d->call.xid, as);
        return srv_end(d, SRV_EV_AUTH_ERROR, SRV_DISPATCH_REPLY);
    }
    if (!known) {
        srv_complain(d, "program %u is not served here", d->call.prog);
        srv_reply_accepted(d->out, d->call.xid, PROG_UNAVAIL);
        return srv_end(d, SRV_EV_PROG_UNAVAIL, SRV_DISPATCH_REPLY);
    }
    if (!d->prog) {
        srv_complain(d, "program %u version %u (only %u to %u)", d->call.prog, d->call.vers, low,
                     high);
        srv_reply_prog_mismatch(d->out, d->call.xid, low, high);
        return srv_end(d, SRV_EV_PROG_MISMATCH, SRV_DISPATCH_REPLY);
    }
    if (!srv_proc_served(d)) {
        srv_complain(d, "%s has no procedure %u%s", d->prog->name, d->call.proc,
                     d->proc && d->proc->name ? " over UDP" : "");
        srv_reply_accepted(d->out, d->call.xid, PROC_UNAVAIL);
        return srv_end(d, SRV_EV_PROC_UNAVAIL, SRV_DISPATCH_REPLY);
    }
    if (srv_auth_too_weak(d)) {
        srv_complain(d, "%s %s needs AUTH_SYS, got flavor %u", d->prog->name, d->proc->name,
                     d->call.cred_flavor);
        srv_stats_call(d->env->stats, d->prog_index, d->call.proc, srv_now_ns() - d->t0, 0, true,
                       false);
        srv_reply_auth_error(d->out, d->call.xid, AUTH_TOOWEAK);
        return srv_end(d, SRV_EV_AUTH_ERROR, SRV_DISPATCH_REPLY);
    }
    return true;
}

/* The duplicate request cache, for non-idempotent procedures. */
static bool srv_step_drc(srv_dispatch *d)
{
    const srv_env *env = d->env;

    if (!d->proc->non_idempotent || !env->drc)
        return true;
    srv_drc_key_init(&d->key, (const struct sockaddr *)&d->from->peer, d->call.xid, d->call.prog,
                     d->call.vers, d->call.proc, d->rec + d->call.args_off,
                     d->len - d->call.args_off);
    switch (srv_drc_begin(env->drc, &d->key, d->out)) {
    case SRV_DRC_MISS:
        d->cached = true;
        return true;
    case SRV_DRC_HIT:
        srv_stats_call(env->stats, d->prog_index, d->call.proc, srv_now_ns() - d->t0, 0, false,
                       true);
        g_debug("xid 0x%08x: %s %s retransmitted: first reply replayed", d->call.xid, d->prog->name,
                d->proc->name);
        d->result = SRV_DISPATCH_REPLY;
        return false;
    case SRV_DRC_IN_PROGRESS:
        break;
    }
    g_debug("xid 0x%08x: %s %s retransmitted while running: dropped", d->call.xid, d->prog->name,
            d->proc->name);
    return srv_end(d, SRV_EV_DRC_DROP, SRV_DISPATCH_DROP);
}

/* ---- running the procedure ---------------------------------------------------- */

/* The request context of the call. */
static void srv_req_setup(srv_dispatch *d, srv_req *req)
{
    const srv_origin *from = d->from;

    memset(req, 0, sizeof *req);
    req->srv = d->env->ctx;
    req->prog = d->prog;
    req->proc = d->call.proc;
    req->db = d->db;
    memcpy(&req->peer, &from->peer, sizeof req->peer);
    req->peerlen = from->peerlen;
    memcpy(&req->local, &from->local, sizeof req->local);
    req->locallen = from->locallen;
    req->tcp = from->tcp;
    req->xid = d->call.xid;
    req->auth = d->auth;
    req->rl = d->env->rl;
    req->out = d->out;
}

/* Decode the arguments into args; false if they are not. */
static bool srv_args_in(const srv_dispatch *d, void *args)
{
    XDR x;

    xdrmem_create(&x, (char *)d->rec + d->call.args_off, (u_int)(d->len - d->call.args_off),
                  XDR_DECODE);
    bool ok = !d->proc->args_xdr || ((srv_xdr_fn)d->proc->args_xdr)(&x, args);
    xdr_destroy(&x);
    return ok;
}

/* Decode the arguments into args; false (GARBAGE_ARGS sent) if they are not. */
static bool srv_decode_args(srv_dispatch *d, void *args)
{
    bool ok = srv_args_in(d, args);

    if (!ok) {
        srv_complain(d, "%s %s: undecodable arguments (%zu bytes)", d->prog->name, d->proc->name,
                     d->len - d->call.args_off);
        srv_reply_accepted(d->out, d->call.xid, GARBAGE_ARGS);
    }
    return ok;
}

/*
 * Run the handler, or what stands for it without a database. Returns
 * false when the call is dropped; *keep says whether the result may be
 * replayed from the duplicate request cache.
 */
static bool pgnfsd_run_handler(srv_dispatch *d, srv_req *req, void *args, void *res, bool *keep)
{
    const srv_program *p = d->prog;
    bool needs_db = p->needs_db && d->call.proc != 0;

    if (needs_db)
        srv_stats_db(d->env->stats, d->db != NULL);
    if (needs_db && !d->db) {
        srv_stats_event(d->env->stats, SRV_EV_NO_DB);
        *keep = false;
        if (p->retry_later && p->retry_later(d->call.proc, res))
            return true;
        srv_complain(d, "%s %s: no database connection: dropped", p->name, d->proc->name);
        return false;
    }
    /* Every call starts durable; a program whose caller's export is
     * exports(5) `async` says so (nfs3_fh_in). */
    if (d->db)
        dbfs_conn_set_async(d->db, false);
    if (d->proc->handler)
        d->proc->handler(req, args, res);
    if (req->drop) {
        srv_stats_event(d->env->stats, SRV_EV_NO_DB);
        *keep = false;
        return false;
    }
    *keep = !p->cacheable || p->cacheable(d->call.proc, res);
    return true;
}

/*
 * The slow-operation log: one line for a call that took slow_ms or longer
 * (0 = never), with what to look at first: the procedure, the client, the
 * time and the database round trips it took.
 */
static void srv_slow_log(const srv_dispatch *d, uint64_t ns, uint64_t rt, const char *status)
{
    char who[LOG_PEER_STRLEN];

    if (d->env->slow_ms == 0 || ns < (uint64_t)d->env->slow_ms * SRV_NS_PER_MS)
        return;
    log_peer_string((const struct sockaddr *)&d->from->peer, d->from->peerlen, who, sizeof who);
    g_message(
        "slow: prog=%s proc=%s client=%s xid=0x%08x duration_ms=%.1f round_trips=%" G_GUINT64_FORMAT
        " status=%s",
        d->prog->name, d->proc->name, who, d->call.xid, (double)ns / (double)SRV_NS_PER_MS, rt,
        status ? status : "-");
}

/* The DRC entry, statistics and the slow log, once the reply is made. */
static void srv_finish(srv_dispatch *d, const void *res, bool rpc_error, bool keep, uint64_t rt)
{
    const char *status = NULL;

    if (d->cached) {
        if (keep && d->result == SRV_DISPATCH_REPLY)
            srv_drc_finish(d->env->drc, &d->key, srv_buf_msg(d->out), d->out->len);
        else
            srv_drc_abort(d->env->drc, &d->key);
    }
    uint32_t st;
    if (d->prog->status_of && !rpc_error && d->result == SRV_DISPATCH_REPLY &&
        d->prog->status_of(d->call.proc, res, &st)) {
        srv_stats_status(d->env->stats, d->prog_index, st);
        status = srv_stats_status_name(d->prog, st);
    }
    uint64_t ns = srv_now_ns() - d->t0;
    srv_stats_call(d->env->stats, d->prog_index, d->call.proc, ns, rt, rpc_error, false);
    srv_slow_log(d, ns, rt, status);
}

/* Encode a successful call's reply (around the handler's payload, if it
 * made one); false if the result cannot be encoded. */
static bool srv_reply_result(srv_dispatch *d, const srv_req *req, void *res)
{
    return req->payload ? srv_reply_payload(d->out, d->call.xid, d->proc->res_xdr, res,
                                            req->payload, req->payload_cap)
                        : srv_reply_success(d->out, d->call.xid, d->proc->res_xdr, res);
}

/* Run the decoded call and encode its reply; false if the call is dropped. */
static bool srv_reply_to(srv_dispatch *d, srv_req *req, void *args, void *res, bool *keep,
                         bool *rpc_error)
{
    *rpc_error = false;
    if (!pgnfsd_run_handler(d, req, args, res, keep))
        return false;
    if (srv_reply_result(d, req, res))
        return true;
    g_warning("xid 0x%08x: %s %s: the result cannot be encoded (a server bug): SYSTEM_ERR",
              d->call.xid, d->prog->name, d->proc->name);
    srv_reply_accepted(d->out, d->call.xid, SYSTEM_ERR);
    *rpc_error = true;
    *keep = false;
    return true;
}

/* Arguments, handler, reply. */
static void srv_step_run(srv_dispatch *d)
{
    uint64_t rt0 = d->db ? dbfs_conn_round_trips(d->db) : 0;
    bool rpc_error = true, keep = false;
    srv_req req;

    srv_req_setup(d, &req);
    void *args = srv_req_alloc(&req, d->proc->args_size);
    void *res = srv_req_alloc(&req, d->proc->res_size);
    d->result = SRV_DISPATCH_REPLY;
    if (srv_decode_args(d, args) && !srv_reply_to(d, &req, args, res, &keep, &rpc_error))
        d->result = SRV_DISPATCH_DROP;
    srv_finish(d, res, rpc_error, keep, d->db ? dbfs_conn_round_trips(d->db) - rt0 : 0);
    if (d->proc->args_xdr)
        xdr_free(d->proc->args_xdr, args);
    srv_req_release(&req);
}

/* ---- the quick form ------------------------------------------------------------ */

/* Would the steps above let d's call through to its handler without a
 * word? (Header, credential, program, procedure; the quick form is for
 * idempotent procedures, which the duplicate request cache skips.) */
static bool srv_quick_eligible(srv_dispatch *d)
{
    uint32_t low = 0, high = 0;
    const char *why;

    if (srv_call_decode(d->rec, d->len, &d->call) != SRV_CALL_OK)
        return false;
    if (srv_call_credential(&d->call, &d->auth, &why) != AUTH_OK)
        return false;
    if (!srv_find_program(d, &low, &high) || !d->prog || !srv_proc_served(d))
        return false;
    return d->proc->quick && !d->proc->non_idempotent && !srv_auth_too_weak(d);
}

srv_dispatch_result srv_dispatch_quick(const srv_env *env, const void *rec, size_t len,
                                       const srv_origin *from, srv_buf *out)
{
    srv_dispatch d = {.env = env,
                      .from = from,
                      .rec = rec,
                      .len = len,
                      .out = out,
                      .t0 = srv_now_ns(),
                      .result = SRV_DISPATCH_DEFER};
    srv_req req;

    if (!srv_quick_eligible(&d))
        return SRV_DISPATCH_DEFER;
    out->len = 0;
    srv_req_setup(&d, &req);
    void *args = srv_req_alloc(&req, d.proc->args_size);
    void *res = srv_req_alloc(&req, d.proc->res_size);
    if (srv_args_in(&d, args) && d.proc->quick(&req, args, res) &&
        srv_reply_result(&d, &req, res)) {
        d.result = SRV_DISPATCH_REPLY;
        srv_stats_quick(env->stats, d.prog_index, d.call.proc);
        srv_finish(&d, res, false, true, 0);
    }
    if (d.proc->args_xdr)
        xdr_free(d.proc->args_xdr, args);
    srv_req_release(&req);
    return d.result;
}

srv_dispatch_result srv_dispatch_record(const srv_env *env, dbfs_conn *db, const void *rec,
                                        size_t len, const srv_origin *from, srv_buf *out)
{
    srv_dispatch d = {.env = env,
                      .from = from,
                      .db = db,
                      .rec = rec,
                      .len = len,
                      .out = out,
                      .t0 = srv_now_ns(),
                      .result = SRV_DISPATCH_DROP};

    out->len = 0;
    if (srv_step_header(&d) && srv_step_program(&d) && srv_step_drc(&d))
        srv_step_run(&d);
    return d.result;
}
