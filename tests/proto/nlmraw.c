/*
 * nlmraw.c -- the lock tests' client, records and callback receiver
 * (nlmraw.h).
 *
 * NOTES
 *   The libnfs calls run the context's event loop until their callback
 *   (nr_service). The receiver and the portmapper decode calls by hand
 *   (the versions 1 and 3 and the *_RES procedures have no libnfs types)
 *   and answer accepted/SUCCESS with the procedure's result.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nlmraw.h"

#define NL_CALL_MS 60000

/* --- libnfs NLM version 4 ------------------------------------------------------ */

typedef struct {
    int pending;
    int status; /* NLM status, or NR_RPC_FAILED */
    nl_holder *holder;
} nl_wait;

static void nl_fill_lock(struct nlm4_lock *l, const nr_fh *fh, const nl_owner *o, uint64_t off,
                         uint64_t len)
{
    l->caller_name = (char *)o->caller;
    l->fh.data.data_len = fh->len;
    l->fh.data.data_val = (char *)fh->data;
    l->oh = (char *)o->oh;
    l->svid = o->svid;
    l->l_offset = off;
    l->l_len = len;
}

static void nl_res_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
    nl_wait *w = priv;

    (void)rpc;
    w->pending--;
    /* NLM4_LOCKres, NLM4_CANCres and NLM4_UNLOCKres: cookie, then the status. */
    w->status =
        status == RPC_STATUS_SUCCESS && data ? (int)((NLM4_LOCKres *)data)->status : NR_RPC_FAILED;
}

static void nl_test_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
    nl_wait *w = priv;
    NLM4_TESTres *r = data;

    (void)rpc;
    w->pending--;
    if (status != RPC_STATUS_SUCCESS || !r) {
        w->status = NR_RPC_FAILED;
        return;
    }
    w->status = (int)r->reply.status;
    if (r->reply.status == NLM4_DENIED && w->holder) {
        nlm4_holder *h = &r->reply.nlm4_testreply_u.lock.holder;

        w->holder->excl = h->exclusive;
        w->holder->svid = h->svid;
        g_strlcpy(w->holder->oh, h->oh ? h->oh : "", sizeof w->holder->oh);
        w->holder->off = h->l_offset;
        w->holder->len = h->l_len;
    }
}

static void nl_null_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
    nl_wait *w = priv;

    (void)rpc;
    (void)data;
    w->pending--;
    w->status = status == RPC_STATUS_SUCCESS ? 0 : NR_RPC_FAILED;
}

static int nl_finish(nr_ctx *c, nl_wait *w, int rc)
{
    if (rc != 0)
        return NR_RPC_FAILED;
    if (nr_service(c, &w->pending, 0, NL_CALL_MS) != 0)
        return NR_RPC_FAILED;
    return w->status;
}

int nl_null(nr_ctx *c)
{
    nl_wait w = {.pending = 1};

    return nl_finish(c, &w, rpc_nlm4_null_async(nr_rpc(c), nl_null_cb, &w));
}

int nl_test(nr_ctx *c, const nr_fh *fh, const nl_owner *o, uint64_t off, uint64_t len, bool excl,
            nl_holder *h)
{
    nl_wait w = {.pending = 1, .holder = h};
    NLM4_TESTargs a = {.cookie = {{4, "test"}}, .exclusive = excl};

    nl_fill_lock(&a.lock, fh, o, off, len);
    return nl_finish(c, &w, rpc_nlm4_test_async(nr_rpc(c), nl_test_cb, &a, &w));
}

int nl_lock(nr_ctx *c, const nr_fh *fh, const nl_owner *o, uint64_t off, uint64_t len, bool excl,
            bool block, bool reclaim, int state)
{
    nl_wait w = {.pending = 1};
    NLM4_LOCKargs a = {.cookie = {{4, "lock"}},
                       .block = block,
                       .exclusive = excl,
                       .reclaim = reclaim,
                       .state = state};

    nl_fill_lock(&a.lock, fh, o, off, len);
    return nl_finish(c, &w, rpc_nlm4_lock_async(nr_rpc(c), nl_res_cb, &a, &w));
}

int nl_cancel(nr_ctx *c, const nr_fh *fh, const nl_owner *o, uint64_t off, uint64_t len, bool excl)
{
    nl_wait w = {.pending = 1};
    NLM4_CANCargs a = {.cookie = {{4, "canc"}}, .block = true, .exclusive = excl};

    nl_fill_lock(&a.lock, fh, o, off, len);
    return nl_finish(c, &w, rpc_nlm4_cancel_async(nr_rpc(c), nl_res_cb, &a, &w));
}

int nl_unlock(nr_ctx *c, const nr_fh *fh, const nl_owner *o, uint64_t off, uint64_t len)
{
    nl_wait w = {.pending = 1};
    NLM4_UNLOCKargs a = {.cookie = {{4, "unlk"}}};

    nl_fill_lock(&a.lock, fh, o, off, len);
    return nl_finish(c, &w, rpc_nlm4_unlock_async(nr_rpc(c), nl_res_cb, &a, &w));
}

/* --- libnfs NSM version 1 ------------------------------------------------------------ */

typedef struct {
    int pending;
    int status, state;
    int kind; /* 0 no result, 1 STAT/MON (res, state), 2 UNMON/UNMON_ALL (state) */
} nl_smwait;

static void nl_sm_cb(struct rpc_context *rpc, int status, void *data, void *priv)
{
    nl_smwait *w = priv;

    (void)rpc;
    w->pending--;
    if (status != RPC_STATUS_SUCCESS) {
        w->status = NR_RPC_FAILED;
        return;
    }
    w->status = 0;
    if (w->kind == 1 && data) {
        w->status = (int)((struct NSM1_STATres *)data)->res;
        w->state = ((struct NSM1_STATres *)data)->state;
    } else if (w->kind == 2 && data) {
        w->state = ((struct NSM1_UNMONres *)data)->state;
    }
}

static int nl_sm_finish(nr_ctx *c, nl_smwait *w, int rc, int *state)
{
    if (rc != 0 || nr_service(c, &w->pending, 0, NL_CALL_MS) != 0)
        return NR_RPC_FAILED;
    if (state)
        *state = w->state;
    return w->status;
}

int nl_sm_null(nr_ctx *c)
{
    nl_smwait w = {.pending = 1};

    return nl_sm_finish(c, &w, rpc_nsm1_null_async(nr_rpc(c), nl_sm_cb, &w), NULL);
}

int nl_sm_stat(nr_ctx *c, const char *name, int *state)
{
    nl_smwait w = {.pending = 1, .kind = 1};
    struct NSM1_STATargs a = {.mon_name = (char *)name};

    return nl_sm_finish(c, &w, rpc_nsm1_stat_async(nr_rpc(c), nl_sm_cb, &a, &w), state);
}

static struct nsm_mon_id nl_mon_id(const char *name, const char *me)
{
    return (struct nsm_mon_id){
        .mon_name = (char *)name,
        .my_id = {.my_name = (char *)me, .my_prog = 100099, .my_vers = 1, .my_proc = 1}};
}

int nl_sm_mon(nr_ctx *c, const char *name, const char *me, int *state)
{
    nl_smwait w = {.pending = 1, .kind = 1};
    struct NSM1_MONargs a = {.mon_id = nl_mon_id(name, me)};

    memcpy(a.priv, "0123456789abcdef", sizeof a.priv);
    return nl_sm_finish(c, &w, rpc_nsm1_mon_async(nr_rpc(c), nl_sm_cb, &a, &w), state);
}

int nl_sm_unmon(nr_ctx *c, const char *name, const char *me, int *state)
{
    nl_smwait w = {.pending = 1, .kind = 2};
    struct NSM1_UNMONargs a = {.mon_id = nl_mon_id(name, me)};

    return nl_sm_finish(c, &w, rpc_nsm1_unmon_async(nr_rpc(c), nl_sm_cb, &a, &w), state);
}

int nl_sm_unmon_all(nr_ctx *c, const char *me, int *state)
{
    nl_smwait w = {.pending = 1, .kind = 2};
    struct NSM1_UNMONALLargs a = {.my_id = nl_mon_id("", me).my_id};

    return nl_sm_finish(c, &w, rpc_nsm1_unmonall_async(nr_rpc(c), nl_sm_cb, &a, &w), state);
}

int nl_sm_simu_crash(nr_ctx *c)
{
    nl_smwait w = {.pending = 1};

    return nl_sm_finish(c, &w, rpc_nsm1_simucrash_async(nr_rpc(c), nl_sm_cb, &w), NULL);
}

int nl_sm_notify(nr_ctx *c, const char *name, int state)
{
    nl_smwait w = {.pending = 1};
    struct NSM1_NOTIFYargs a = {.mon_name = (char *)name, .state = state};

    return nl_sm_finish(c, &w, rpc_nsm1_notify_async(nr_rpc(c), nl_sm_cb, &a, &w), NULL);
}

/* --- records ------------------------------------------------------------------------ */

static void nl_xdr_owner_fh(GByteArray *b, const nr_fh *fh, const nl_owner *o)
{
    nr_xdr_string(b, o->caller);
    nr_xdr_fh(b, fh);
    nr_xdr_string(b, o->oh);
    nr_xdr_u32(b, o->svid);
}

void nl_xdr_lock4(GByteArray *b, const nr_fh *fh, const nl_owner *o, uint64_t off, uint64_t len)
{
    nl_xdr_owner_fh(b, fh, o);
    nr_xdr_u64(b, off);
    nr_xdr_u64(b, len);
}

void nl_xdr_lock3(GByteArray *b, const nr_fh *fh, const nl_owner *o, uint32_t off, uint32_t len)
{
    nl_xdr_owner_fh(b, fh, o);
    nr_xdr_u32(b, off);
    nr_xdr_u32(b, len);
}

void nl_xdr_lockargs4(GByteArray *b, const char *cookie, bool block, bool excl, const nr_fh *fh,
                      const nl_owner *o, uint64_t off, uint64_t len, bool reclaim, int state)
{
    nr_xdr_string(b, cookie);
    nr_xdr_u32(b, block);
    nr_xdr_u32(b, excl);
    nl_xdr_lock4(b, fh, o, off, len);
    nr_xdr_u32(b, reclaim);
    nr_xdr_u32(b, (uint32_t)state);
}

GByteArray *nl_raw(unsigned port, bool udp, uint32_t prog, uint32_t vers, uint32_t proc,
                   const GByteArray *args, nr_reply *rep, int timeout_ms)
{
    static uint32_t xid = 0x4e4c0000;
    GByteArray *rec = g_byte_array_new(), *reply = NULL;
    int fd = udp ? nr_udp_connect(port) : nr_raw_connect(port);

    nr_xdr_call(rec, ++xid, prog, vers, proc, &(nr_cred){0});
    if (args)
        g_byte_array_append(rec, args->data, args->len);
    if (fd >= 0) {
        if (udp)
            reply = nr_udp_send(fd, rec->data, rec->len) == 0 ? nr_udp_recv(fd, timeout_ms) : NULL;
        else
            reply = nr_raw_call(fd, rec, timeout_ms);
        close(fd);
    }
    g_byte_array_unref(rec);
    if (reply && !nr_reply_parse(reply, rep)) {
        g_byte_array_unref(reply);
        reply = NULL;
    }
    return reply;
}

int nl_raw_stat(unsigned port, uint32_t prog, uint32_t vers, uint32_t proc, const GByteArray *args,
                nr_reply *rep, size_t skip)
{
    GByteArray *r = nl_raw(port, false, prog, vers, proc, args, rep, NL_CALL_MS);
    int st = NR_RPC_FAILED;

    if (r && rep->reply_stat == NR_MSG_ACCEPTED && rep->accept_stat == NR_SUCCESS)
        st = (int)nr_get_u32(r, rep->body + skip);
    if (r)
        g_byte_array_unref(r);
    return st;
}

/* --- decoding calls ------------------------------------------------------------------ */

typedef struct {
    const uint8_t *p;
    size_t len, off;
    bool bad;
} nl_rd;

static uint32_t nl_u32(nl_rd *r)
{
    uint32_t v;

    if (r->off + 4 > r->len) {
        r->bad = true;
        return 0;
    }
    memcpy(&v, r->p + r->off, 4);
    r->off += 4;
    return ntohl(v);
}

static uint64_t nl_u64(nl_rd *r)
{
    uint64_t hi = nl_u32(r);

    return hi << 32 | nl_u32(r);
}

/* An opaque into buf (NUL-terminated, cut to size - 1). */
static void nl_opaque(nl_rd *r, char *buf, size_t size)
{
    uint32_t n = nl_u32(r);
    size_t pad = (4 - (n & 3)) & 3;

    if (r->bad || r->off + n + pad > r->len) {
        r->bad = true;
        buf[0] = 0;
        return;
    }
    memcpy(buf, r->p + r->off, n < size ? n : size - 1);
    buf[n < size ? n : size - 1] = 0;
    r->off += n + pad;
}

/* The call header; false when it is not a call we can answer. */
static bool nl_call_head(nl_rd *r, uint32_t *xid, uint32_t *prog, uint32_t *vers, uint32_t *proc)
{
    char skip[512];

    *xid = nl_u32(r);
    if (nl_u32(r) != NR_MSG_CALL || nl_u32(r) != 2)
        return false;
    *prog = nl_u32(r);
    *vers = nl_u32(r);
    *proc = nl_u32(r);
    nl_u32(r);
    nl_opaque(r, skip, sizeof skip); /* credential */
    nl_u32(r);
    nl_opaque(r, skip, sizeof skip); /* verifier */
    return !r->bad;
}

static GByteArray *nl_reply_head(uint32_t xid)
{
    GByteArray *b = g_byte_array_new();

    nr_xdr_u32(b, xid);
    nr_xdr_u32(b, NR_MSG_REPLY);
    nr_xdr_u32(b, NR_MSG_ACCEPTED);
    nr_xdr_u32(b, NR_AUTH_NONE);
    nr_xdr_u32(b, 0);
    nr_xdr_u32(b, NR_SUCCESS);
    return b;
}

/* --- the callback receiver -------------------------------------------------------- */

#define NL_CB_CONNS 16

struct nl_cbsrv {
    int tcp, udp;
    unsigned port;
    atomic_uint count;
    _Atomic int64_t last_us;
    atomic_bool stop;
    pthread_t thread;
    bool threaded;
    int conns[NL_CB_CONNS];
    GByteArray *bufs[NL_CB_CONNS];
    uint32_t answer;
    GArray *got; /* nl_callback */
};

nl_cbsrv *nl_cbsrv_new(void)
{
    return nl_cbsrv_new_on("127.0.0.1");
}

nl_cbsrv *nl_cbsrv_new_on(const char *addr)
{
    nl_cbsrv *s = g_new0(nl_cbsrv, 1);
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof a;
    int one = 1;

    g_assert_cmpint(inet_pton(AF_INET, addr, &a.sin_addr), ==, 1);
    s->answer = NLM4_GRANTED;
    s->got = g_array_new(FALSE, TRUE, sizeof(nl_callback));
    for (int i = 0; i < NL_CB_CONNS; i++)
        s->conns[i] = -1;
    s->tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    setsockopt(s->tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    g_assert_cmpint(bind(s->tcp, (struct sockaddr *)&a, sizeof a), ==, 0);
    g_assert_cmpint(listen(s->tcp, 16), ==, 0);
    g_assert_cmpint(getsockname(s->tcp, (struct sockaddr *)&a, &len), ==, 0);
    s->port = ntohs(a.sin_port);
    s->udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    g_assert_cmpint(bind(s->udp, (struct sockaddr *)&a, sizeof a), ==, 0);
    return s;
}

unsigned nl_cbsrv_port(const nl_cbsrv *s)
{
    return s->port;
}

void nl_cbsrv_answer(nl_cbsrv *s, uint32_t stat)
{
    s->answer = stat;
}

/* Decode one callback call in rec and build its reply (NULL: not one). */
static GByteArray *nl_cbsrv_call(nl_cbsrv *s, const uint8_t *p, size_t len, bool udp)
{
    nl_rd r = {p, len, 0, false};
    uint32_t xid, prog, vers, proc;
    nl_callback cb = {.udp = udp, .at_us = g_get_monotonic_time()};
    GByteArray *out;
    char fh[256];

    if (!nl_call_head(&r, &xid, &prog, &vers, &proc) || (prog != NL_PROG && prog != NL_NSM_PROG))
        return NULL;
    cb.prog = prog;
    cb.vers = vers;
    cb.proc = proc;
    out = nl_reply_head(xid);
    if (prog == NL_NSM_PROG) { /* SM_NOTIFY: mon_name, state */
        nl_opaque(&r, cb.caller, sizeof cb.caller);
        cb.stat = nl_u32(&r);
        g_array_append_val(s->got, cb);
        atomic_fetch_add(&s->count, 1);
        return out;
    }
    nl_opaque(&r, cb.cookie, sizeof cb.cookie);
    if (proc == NL_PROC_GRANTED || proc == NL_PROC_GRANTED_MSG) {
        cb.excl = nl_u32(&r);
        nl_opaque(&r, cb.caller, sizeof cb.caller);
        nl_opaque(&r, fh, sizeof fh);
        nl_opaque(&r, cb.oh, sizeof cb.oh);
        cb.svid = nl_u32(&r);
        cb.off = vers == 4 ? nl_u64(&r) : nl_u32(&r);
        cb.len = vers == 4 ? nl_u64(&r) : nl_u32(&r);
        if (proc == NL_PROC_GRANTED) {
            nr_xdr_string(out, cb.cookie);
            nr_xdr_u32(out, s->answer);
        }
    } else {
        cb.stat = nl_u32(&r); /* *_RES: cookie, then the status */
    }
    g_array_append_val(s->got, cb);
    atomic_store(&s->last_us, cb.at_us);
    atomic_fetch_add(&s->count, 1);
    return out;
}

static void nl_cbsrv_tcp(nl_cbsrv *s, int i)
{
    uint8_t buf[4096];
    ssize_t n = read(s->conns[i], buf, sizeof buf);
    GByteArray *b = s->bufs[i];

    if (n <= 0) {
        close(s->conns[i]);
        s->conns[i] = -1;
        g_byte_array_set_size(b, 0);
        return;
    }
    g_byte_array_append(b, buf, (guint)n);
    while (b->len >= 4) {
        uint32_t mark;

        memcpy(&mark, b->data, 4);
        mark = ntohl(mark) & 0x7fffffffu; /* the tests' callers send one fragment */
        if (b->len < 4 + mark)
            return;
        GByteArray *reply = nl_cbsrv_call(s, b->data + 4, mark, false);
        if (reply) {
            nr_raw_send(s->conns[i], reply->data, reply->len);
            g_byte_array_unref(reply);
        }
        g_byte_array_remove_range(b, 0, 4 + mark);
    }
}

static void nl_cbsrv_turn(nl_cbsrv *s, int timeout_ms)
{
    struct pollfd p[2 + NL_CB_CONNS];
    int n = 0;

    p[n++] = (struct pollfd){.fd = s->tcp, .events = POLLIN};
    p[n++] = (struct pollfd){.fd = s->udp, .events = POLLIN};
    for (int i = 0; i < NL_CB_CONNS; i++)
        p[n++] = (struct pollfd){.fd = s->conns[i], .events = POLLIN};
    if (poll(p, (nfds_t)n, timeout_ms) <= 0)
        return;
    if (p[0].revents & POLLIN) {
        int fd = accept4(s->tcp, NULL, NULL, SOCK_CLOEXEC);

        for (int i = 0; fd >= 0 && i < NL_CB_CONNS; i++) {
            if (s->conns[i] < 0) {
                s->conns[i] = fd;
                s->bufs[i] = s->bufs[i] ? s->bufs[i] : g_byte_array_new();
                fd = -1;
            }
        }
        if (fd >= 0)
            close(fd);
    }
    if (p[1].revents & POLLIN) {
        uint8_t buf[8192];
        struct sockaddr_storage from;
        socklen_t flen = sizeof from;
        ssize_t len = recvfrom(s->udp, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen);
        GByteArray *reply = len > 0 ? nl_cbsrv_call(s, buf, (size_t)len, true) : NULL;

        if (reply) {
            sendto(s->udp, reply->data, reply->len, 0, (struct sockaddr *)&from, flen);
            g_byte_array_unref(reply);
        }
    }
    for (int i = 0; i < NL_CB_CONNS; i++)
        if (s->conns[i] >= 0 && (p[2 + i].revents & (POLLIN | POLLHUP | POLLERR)))
            nl_cbsrv_tcp(s, i);
}

unsigned nl_cbsrv_wait(nl_cbsrv *s, unsigned count, int timeout_ms, nl_callback *out)
{
    int64_t deadline = g_get_monotonic_time() + (int64_t)timeout_ms * 1000;

    while (s->got->len < count && g_get_monotonic_time() < deadline)
        nl_cbsrv_turn(s, 100);
    /* Answer what is still coming in for a moment (a reply in flight). */
    nl_cbsrv_turn(s, 0);
    if (out && count > 0 && s->got->len >= count)
        *out = g_array_index(s->got, nl_callback, count - 1);
    return s->got->len;
}

static void *nl_cbsrv_main(void *arg)
{
    nl_cbsrv *s = arg;

    while (!atomic_load(&s->stop))
        nl_cbsrv_turn(s, 50);
    return NULL;
}

void nl_cbsrv_start(nl_cbsrv *s)
{
    s->threaded = pthread_create(&s->thread, NULL, nl_cbsrv_main, s) == 0;
}

unsigned nl_cbsrv_count(nl_cbsrv *s)
{
    return atomic_load(&s->count);
}

int64_t nl_cbsrv_last_us(nl_cbsrv *s)
{
    return atomic_load(&s->last_us);
}

void nl_cbsrv_free(nl_cbsrv *s)
{
    if (!s)
        return;
    if (s->threaded) {
        atomic_store(&s->stop, true);
        pthread_join(s->thread, NULL);
    }
    for (int i = 0; i < NL_CB_CONNS; i++) {
        if (s->conns[i] >= 0)
            close(s->conns[i]);
        if (s->bufs[i])
            g_byte_array_unref(s->bufs[i]);
    }
    close(s->tcp);
    close(s->udp);
    g_array_unref(s->got);
    g_free(s);
}

/* --- a portmapper for the callbacks ------------------------------------------------ */

struct nl_pmap {
    int tcp, udp, stop[2];
    atomic_uint nlm_port, nsm_port;
    atomic_uint lookups;
    pthread_t thread;
};

static GByteArray *nl_pmap_call(nl_pmap *pm, const uint8_t *p, size_t len)
{
    nl_rd r = {p, len, 0, false};
    uint32_t xid, prog, vers, proc, want;
    GByteArray *out;

    if (!nl_call_head(&r, &xid, &prog, &vers, &proc) || prog != 100000 || vers != 2)
        return NULL;
    out = nl_reply_head(xid);
    if (proc == 3) { /* GETPORT */
        want = nl_u32(&r);
        atomic_fetch_add(&pm->lookups, 1);
        nr_xdr_u32(out, want == NL_PROG ? pm->nlm_port : want == NL_NSM_PROG ? pm->nsm_port : 0);
    }
    return out;
}

static void *nl_pmap_main(void *arg)
{
    nl_pmap *pm = arg;

    for (;;) {
        struct pollfd p[3] = {{.fd = pm->tcp, .events = POLLIN},
                              {.fd = pm->udp, .events = POLLIN},
                              {.fd = pm->stop[0], .events = POLLIN}};
        uint8_t buf[2048];

        if (poll(p, 3, -1) < 0 && errno != EINTR)
            return NULL;
        if (p[2].revents)
            return NULL;
        if (p[1].revents & POLLIN) {
            struct sockaddr_storage from;
            socklen_t flen = sizeof from;
            ssize_t n = recvfrom(pm->udp, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen);
            GByteArray *reply = n > 0 ? nl_pmap_call(pm, buf, (size_t)n) : NULL;

            if (reply) {
                sendto(pm->udp, reply->data, reply->len, 0, (struct sockaddr *)&from, flen);
                g_byte_array_unref(reply);
            }
        }
        if (p[0].revents & POLLIN) {
            int fd = accept4(pm->tcp, NULL, NULL, SOCK_CLOEXEC);
            GByteArray *rec = fd >= 0 ? nr_raw_recv(fd, 5000) : NULL;
            GByteArray *reply = rec ? nl_pmap_call(pm, rec->data, rec->len) : NULL;

            if (reply) {
                nr_raw_send(fd, reply->data, reply->len);
                g_byte_array_unref(reply);
            }
            if (rec)
                g_byte_array_unref(rec);
            if (fd >= 0)
                close(fd);
        }
    }
}

nl_pmap *nl_pmap_new(unsigned nlm_port, unsigned nsm_port)
{
    nl_pmap *pm = g_new0(nl_pmap, 1);
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons(111), .sin_addr.s_addr = htonl(INADDR_ANY)};
    int one = 1;

    atomic_store(&pm->nlm_port, nlm_port);
    atomic_store(&pm->nsm_port, nsm_port);
    pm->tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    pm->udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    setsockopt(pm->tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(pm->tcp, (struct sockaddr *)&a, sizeof a) != 0 || listen(pm->tcp, 16) != 0 ||
        bind(pm->udp, (struct sockaddr *)&a, sizeof a) != 0 || pipe(pm->stop) != 0) {
        int e = errno;

        close(pm->tcp);
        close(pm->udp);
        g_free(pm);
        errno = e;
        return NULL;
    }
    pthread_create(&pm->thread, NULL, nl_pmap_main, pm);
    return pm;
}

unsigned nl_pmap_lookups(nl_pmap *p)
{
    return atomic_load(&p->lookups);
}

void nl_pmap_set(nl_pmap *p, unsigned nlm_port, unsigned nsm_port)
{
    atomic_store(&p->nlm_port, nlm_port);
    atomic_store(&p->nsm_port, nsm_port);
}

void nl_pmap_free(nl_pmap *pm)
{
    if (!pm)
        return;
    if (write(pm->stop[1], "x", 1) != 1)
        g_printerr("nl_pmap_free: cannot stop the thread\n");
    pthread_join(pm->thread, NULL);
    close(pm->stop[0]);
    close(pm->stop[1]);
    close(pm->tcp);
    close(pm->udp);
    g_free(pm);
}

/* --- small helpers ------------------------------------------------------------------ */

double nl_metric(const char *page, const char *key)
{
    char *pat = g_strdup_printf("\n%s ", key);
    const char *p = page ? strstr(page, pat) : NULL;
    double v = p ? g_ascii_strtod(p + strlen(pat), NULL) : -1;

    g_free(pat);
    return v;
}
