/*
 * test_dispatch.c -- srv_dispatch_record driven with hand-built call
 * records, no sockets and no database: every RPC-level reply (RPC_MISMATCH,
 * PROG_UNAVAIL, PROG_MISMATCH, PROC_UNAVAIL, GARBAGE_ARGS, AUTH_ERROR with
 * BADCRED, BADVERF, REJECTEDCRED, TOOWEAK), calls that get no reply, the
 * NULL procedures, NFS3ERR_JUKEBOX without a database, the duplicate
 * request cache as dispatch uses it (through a test program whose handler
 * counts its executions), and what a program's descriptor decides: several
 * versions of one program (PROG_MISMATCH low..high), programs not served
 * where a call arrives, any credential (SRV_AUTH_ANY), TCP-only
 * procedures, procedure table holes, per-status counters, registration
 * errors. Replies are decoded word by word.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "mnt3_program.h"
#include "nfs3_program.h"
#include "srv_dispatch.h"
#include "exp.h"

enum { NFS = 100003, MOUNT = 100005, NLM = 100021 };

/* The test program: 0x20000099 version 1, procedure 1 "BUMP" is
 * non-idempotent and needs no database; versions 4 and 7 of it exist too
 * (for PROG_MISMATCH), and 0x2000009a takes any credential. */
enum { TESTPROG = 0x20000099u, ANYPROG = 0x2000009au };

/* Program indexes in env (registration order). */
enum { IX_NFS, IX_MOUNT, IX_TEST, IX_TEST4, IX_TEST7, IX_ANY };

static srv_ctx ctx;
static srv_stats stats;
static srv_env env;

static unsigned bump_runs;
static bool bump_reenter;
static const GByteArray *bump_record;
static srv_dispatch_result bump_reenter_result;

static struct sockaddr_in peer(unsigned port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return sa;
}

static void bump_handler(srv_req *req, void *args, void *res)
{
    (void)req;
    bump_runs++;
    *(uint32_t *)res = *(uint32_t *)args + 1000 * bump_runs;
    if (bump_reenter) {
        /* The client retransmits while the first execution runs. */
        struct sockaddr_in sa = peer(4242);
        srv_origin from;
        srv_buf out = {0};
        srv_origin_set(&from, (struct sockaddr *)&sa, sizeof sa, NULL, 0, true, SRV_PROGS_ALL);
        bump_reenter_result =
            srv_dispatch_record(&env, NULL, bump_record->data, bump_record->len, &from, &out);
        srv_buf_clear(&out);
    }
}

/* Result: the argument + 1000 * runs; status 7 when odd, else 8. */
static bool bump_status(uint32_t proc, const void *res, uint32_t *st)
{
    if (proc != 1)
        return false;
    *st = *(const uint32_t *)res % 2 ? 7 : 8;
    return true;
}

static const srv_status bump_statuses[] = {{7, "ODD"}, {8, "EVEN"}};

static const srv_proc test_procs[] = {
    {.name = "NULL"},
    {.name = "BUMP",
     .args_xdr = (xdrproc_t)xdr_u_int,
     .res_xdr = (xdrproc_t)xdr_u_int,
     .args_size = sizeof(uint32_t),
     .res_size = sizeof(uint32_t),
     .handler = bump_handler,
     .non_idempotent = true},
    {0}, /* a hole: not served */
    {.name = "BIG", .res_xdr = (xdrproc_t)xdr_u_int, .res_size = 4, .tcp_only = true},
};

static const srv_program test_v1 = {.name = "test1",
                                    .prog = TESTPROG,
                                    .vers = 1,
                                    .procs = test_procs,
                                    .nprocs = G_N_ELEMENTS(test_procs),
                                    .status_of = bump_status,
                                    .statuses = bump_statuses,
                                    .nstatuses = G_N_ELEMENTS(bump_statuses),
                                    .status_metric = "pgnfs_test_replies_total"};
static const srv_program test_v4 = {
    .name = "test4", .prog = TESTPROG, .vers = 4, .procs = test_procs, .nprocs = 1};
static const srv_program test_v7 = {
    .name = "test7", .prog = TESTPROG, .vers = 7, .procs = test_procs, .nprocs = 1};
static const srv_program any_v1 = {.name = "any1",
                                   .prog = ANYPROG,
                                   .vers = 1,
                                   .procs = test_procs,
                                   .nprocs = G_N_ELEMENTS(test_procs),
                                   .auth = SRV_AUTH_ANY};

/* ---- building calls ------------------------------------------------------- */

static void put32(GByteArray *a, uint32_t v)
{
    uint32_t n = htonl(v);

    g_byte_array_append(a, (const guint8 *)&n, 4);
}

static void put_opaque(GByteArray *a, const void *d, uint32_t len)
{
    static const guint8 zeros[4] = {0};

    put32(a, len);
    g_byte_array_append(a, d, len);
    g_byte_array_append(a, zeros, (4 - len % 4) % 4);
}

/* An AUTH_SYS body: stamp, machine name of mlen bytes, uid 1000, gid 100,
 * ngids groups; extra adds 4 bytes the format does not account for. */
static GByteArray *authsys(uint32_t mlen, uint32_t ngids, bool extra)
{
    GByteArray *b = g_byte_array_new();
    char *machine = g_malloc(mlen + 1);

    memset(machine, 'm', mlen);
    put32(b, 12345);
    put_opaque(b, machine, mlen);
    put32(b, 1000);
    put32(b, 100);
    put32(b, ngids);
    for (uint32_t i = 0; i < ngids; i++)
        put32(b, 200 + i);
    if (extra)
        put32(b, 0);
    g_free(machine);
    return b;
}

typedef enum { CRED_NONE, CRED_SYS, CRED_CUSTOM } cred_kind;

/* A call header with the given credential (CRED_CUSTOM: flavor and body). */
static GByteArray *call(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc, cred_kind kind,
                        uint32_t flavor, const GByteArray *body)
{
    GByteArray *a = g_byte_array_new();

    put32(a, xid);
    put32(a, 0); /* CALL */
    put32(a, 2);
    put32(a, prog);
    put32(a, vers);
    put32(a, proc);
    if (kind == CRED_NONE) {
        put32(a, AUTH_NONE);
        put32(a, 0);
    } else if (kind == CRED_SYS) {
        GByteArray *b = authsys(9, 2, false);
        put32(a, AUTH_SYS);
        put_opaque(a, b->data, b->len);
        g_byte_array_unref(b);
    } else {
        put32(a, flavor);
        put_opaque(a, body ? body->data : NULL, body ? body->len : 0);
    }
    put32(a, AUTH_NONE); /* verifier */
    put32(a, 0);
    return a;
}

static void put_fh(GByteArray *a)
{
    unsigned char fh[38] = {1};

    put_opaque(a, fh, sizeof fh);
}

/* ---- decoding replies --------------------------------------------------------- */

typedef struct {
    uint32_t xid, reply_stat;
    uint32_t accept_stat; /* MSG_ACCEPTED */
    uint32_t reject_stat; /* MSG_DENIED */
    uint32_t low, high;   /* PROG_MISMATCH, RPC_MISMATCH */
    uint32_t auth_stat;   /* AUTH_ERROR */
    size_t body;          /* offset of the results (SUCCESS) */
    size_t len;
} reply;

static uint32_t get32(const srv_buf *b, size_t off)
{
    uint32_t v;

    g_assert_cmpuint(off + 4, <=, b->len);
    memcpy(&v, b->data + off, 4);
    return ntohl(v);
}

static void parse(const srv_buf *b, reply *r)
{
    memset(r, 0, sizeof *r);
    r->len = b->len;
    r->xid = get32(b, 0);
    g_assert_cmpuint(get32(b, 4), ==, 1); /* REPLY */
    r->reply_stat = get32(b, 8);
    if (r->reply_stat == MSG_ACCEPTED) {
        g_assert_cmpuint(get32(b, 12), ==, AUTH_NONE);
        g_assert_cmpuint(get32(b, 16), ==, 0);
        r->accept_stat = get32(b, 20);
        r->body = 24;
        if (r->accept_stat == PROG_MISMATCH) {
            r->low = get32(b, 24);
            r->high = get32(b, 28);
            g_assert_cmpuint(b->len, ==, 32);
        } else if (r->accept_stat != SUCCESS) {
            g_assert_cmpuint(b->len, ==, 24);
        }
    } else {
        g_assert_cmpuint(r->reply_stat, ==, MSG_DENIED);
        r->reject_stat = get32(b, 12);
        if (r->reject_stat == RPC_MISMATCH) {
            r->low = get32(b, 16);
            r->high = get32(b, 20);
            g_assert_cmpuint(b->len, ==, 24);
        } else {
            g_assert_cmpuint(r->reject_stat, ==, AUTH_ERROR);
            r->auth_stat = get32(b, 16);
            g_assert_cmpuint(b->len, ==, 20);
        }
    }
}

/* Dispatch rec from 127.0.0.1:900 over tcp (or UDP) where the programs of
 * mask progs are served, without a database; parse the reply. */
static srv_dispatch_result run_on(const GByteArray *rec, bool tcp, uint32_t progs, srv_buf *out,
                                  reply *r)
{
    struct sockaddr_in sa = peer(900);
    srv_origin from;

    srv_origin_set(&from, (struct sockaddr *)&sa, sizeof sa, NULL, 0, tcp, progs);
    srv_dispatch_result res = srv_dispatch_record(&env, NULL, rec->data, rec->len, &from, out);
    if (res == SRV_DISPATCH_REPLY)
        parse(out, r);
    return res;
}

static srv_dispatch_result run(const GByteArray *rec, srv_buf *out, reply *r)
{
    return run_on(rec, true, SRV_PROGS_ALL, out, r);
}

/* Dispatch and expect a reply with this xid. */
static void run_reply(GByteArray *rec, srv_buf *out, reply *r)
{
    uint32_t xid = ntohl(*(uint32_t *)rec->data);

    g_assert_cmpint(run(rec, out, r), ==, SRV_DISPATCH_REPLY);
    g_assert_cmphex(r->xid, ==, xid);
    g_byte_array_unref(rec);
}

static uint64_t event_count(srv_stat_event ev)
{
    return atomic_load(&stats.events[ev]);
}

/* ---- tests ------------------------------------------------------------------------ */

static void test_null(void)
{
    srv_buf out = {0};
    reply r;
    uint64_t before = atomic_load(&stats.progs[IX_NFS].procs[0].calls);

    /* NULL needs no credentials, for either program. */
    run_reply(call(1, NFS, 3, 0, CRED_NONE, 0, NULL), &out, &r);
    g_assert_cmpuint(r.reply_stat, ==, MSG_ACCEPTED);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    g_assert_cmpuint(r.len, ==, 24); /* void result */
    run_reply(call(2, MOUNT, 3, 0, CRED_NONE, 0, NULL), &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    g_assert_cmpuint(r.len, ==, 24);
    run_reply(call(3, NFS, 3, 0, CRED_SYS, 0, NULL), &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    g_assert_cmpuint(atomic_load(&stats.progs[IX_NFS].procs[0].calls), ==, before + 2);
    srv_buf_clear(&out);
}

static void test_rpc_mismatch(void)
{
    srv_buf out = {0};
    reply r;
    GByteArray *rec = call(10, NFS, 3, 0, CRED_SYS, 0, NULL);

    rec->data[11] = 3; /* rpcvers 3 */
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.reply_stat, ==, MSG_DENIED);
    g_assert_cmpuint(r.reject_stat, ==, RPC_MISMATCH);
    g_assert_cmpuint(r.low, ==, 2);
    g_assert_cmpuint(r.high, ==, 2);

    /* Only xid, type and version present: still the same answer. */
    GByteArray *tiny = g_byte_array_new();
    put32(tiny, 11);
    put32(tiny, 0);
    put32(tiny, 1);
    run_reply(tiny, &out, &r);
    g_assert_cmpuint(r.reject_stat, ==, RPC_MISMATCH);
    srv_buf_clear(&out);
}

static void test_prog_unavail(void)
{
    srv_buf out = {0};
    reply r;
    uint64_t before = event_count(SRV_EV_PROG_UNAVAIL);

    run_reply(call(20, NLM, 4, 1, CRED_SYS, 0, NULL), &out, &r);
    g_assert_cmpuint(r.reply_stat, ==, MSG_ACCEPTED);
    g_assert_cmpuint(r.accept_stat, ==, PROG_UNAVAIL);
    run_reply(call(21, 100099, 1, 0, CRED_NONE, 0, NULL), &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, PROG_UNAVAIL);
    g_assert_cmpuint(event_count(SRV_EV_PROG_UNAVAIL), ==, before + 2);
    srv_buf_clear(&out);
}

static void test_prog_mismatch(void)
{
    srv_buf out = {0};
    reply r;
    const struct {
        uint32_t prog, vers;
    } calls[] = {{NFS, 2}, {NFS, 4}, {MOUNT, 1}, {MOUNT, 2}};

    for (size_t i = 0; i < G_N_ELEMENTS(calls); i++) {
        run_reply(call(30 + (uint32_t)i, calls[i].prog, calls[i].vers, 0, CRED_SYS, 0, NULL), &out,
                  &r);
        g_assert_cmpuint(r.accept_stat, ==, PROG_MISMATCH);
        g_assert_cmpuint(r.low, ==, 3);
        g_assert_cmpuint(r.high, ==, 3);
    }
    srv_buf_clear(&out);
}

static void test_proc_unavail(void)
{
    srv_buf out = {0};
    reply r;

    run_reply(call(40, NFS, 3, 22, CRED_SYS, 0, NULL), &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, PROC_UNAVAIL);
    run_reply(call(41, NFS, 3, 0xffffffffu, CRED_SYS, 0, NULL), &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, PROC_UNAVAIL);
    run_reply(call(42, MOUNT, 3, 6, CRED_SYS, 0, NULL), &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, PROC_UNAVAIL);
    srv_buf_clear(&out);
}

static void test_garbage_args(void)
{
    srv_buf out = {0};
    reply r;
    GByteArray *rec;
    uint64_t errors = atomic_load(&stats.progs[IX_NFS].procs[1].errors);

    /* GETATTR whose handle claims 32 bytes and has 4. */
    rec = call(50, NFS, 3, 1, CRED_SYS, 0, NULL);
    put32(rec, 32);
    put32(rec, 0xdeadbeef);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, GARBAGE_ARGS);
    g_assert_cmpuint(atomic_load(&stats.progs[IX_NFS].procs[1].errors), ==, errors + 1);

    /* GETATTR with a 65-byte handle (over NFS3_FHSIZE). */
    unsigned char big[65] = {0};
    rec = call(51, NFS, 3, 1, CRED_SYS, 0, NULL);
    put_opaque(rec, big, sizeof big);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, GARBAGE_ARGS);

    /* GETATTR with no arguments at all. */
    run_reply(call(52, NFS, 3, 1, CRED_SYS, 0, NULL), &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, GARBAGE_ARGS);

    /* LOOKUP without the name. */
    rec = call(53, NFS, 3, 3, CRED_SYS, 0, NULL);
    put_fh(rec);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, GARBAGE_ARGS);

    /* WRITE whose data length is a lie. */
    rec = call(54, NFS, 3, 7, CRED_SYS, 0, NULL);
    put_fh(rec);
    put32(rec, 0);
    put32(rec, 0); /* offset */
    put32(rec, 4); /* count */
    put32(rec, 2); /* FILE_SYNC */
    put32(rec, 0x7fffffffu);
    put32(rec, 0x41414141);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, GARBAGE_ARGS);

    /* MNT with a path over MNTPATHLEN (1024). */
    char path[1101];
    memset(path, 'p', sizeof path);
    path[0] = '/';
    rec = call(55, MOUNT, 3, 1, CRED_SYS, 0, NULL);
    put_opaque(rec, path, 1100);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, GARBAGE_ARGS);
    srv_buf_clear(&out);
}

static void test_auth_badcred(void)
{
    srv_buf out = {0};
    reply r;
    GByteArray *body;
    uint64_t before = event_count(SRV_EV_AUTH_ERROR);

    /* 16 groups and a 255-byte machine name are the limits: accepted. */
    body = authsys(255, 16, false);
    run_reply(call(60, NFS, 3, 0, CRED_CUSTOM, AUTH_SYS, body), &out, &r);
    g_assert_cmpuint(r.reply_stat, ==, MSG_ACCEPTED);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    g_byte_array_unref(body);

    const struct {
        uint32_t mlen, ngids;
        bool extra;
    } bad[] = {
        {9, 17, false},  /* more than 16 groups */
        {256, 2, false}, /* machine name over 255 bytes */
        {9, 2, true},    /* 4 bytes the body does not account for */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        body = authsys(bad[i].mlen, bad[i].ngids, bad[i].extra);
        run_reply(call(61 + (uint32_t)i, NFS, 3, 1, CRED_CUSTOM, AUTH_SYS, body), &out, &r);
        g_assert_cmpuint(r.reply_stat, ==, MSG_DENIED);
        g_assert_cmpuint(r.reject_stat, ==, AUTH_ERROR);
        g_assert_cmpuint(r.auth_stat, ==, AUTH_BADCRED);
        g_byte_array_unref(body);
    }

    /* A body shorter than its fields say. */
    body = authsys(9, 2, false);
    g_byte_array_set_size(body, body->len - 4);
    run_reply(call(65, NFS, 3, 0, CRED_CUSTOM, AUTH_SYS, body), &out, &r);
    g_assert_cmpuint(r.auth_stat, ==, AUTH_BADCRED);
    g_byte_array_unref(body);

    /* A credential over 400 bytes. */
    body = g_byte_array_new();
    g_byte_array_set_size(body, 404);
    memset(body->data, 0, body->len);
    run_reply(call(66, NFS, 3, 0, CRED_CUSTOM, AUTH_SYS, body), &out, &r);
    g_assert_cmpuint(r.auth_stat, ==, AUTH_BADCRED);

    /* AUTH_NONE carrying a body. */
    g_byte_array_set_size(body, 8);
    run_reply(call(67, NFS, 3, 0, CRED_CUSTOM, AUTH_NONE, body), &out, &r);
    g_assert_cmpuint(r.auth_stat, ==, AUTH_BADCRED);
    g_byte_array_unref(body);

    /* A verifier over 400 bytes. */
    GByteArray *rec = call(68, NFS, 3, 0, CRED_SYS, 0, NULL);
    g_byte_array_set_size(rec, rec->len - 4);
    put32(rec, 500);
    for (int i = 0; i < 125; i++)
        put32(rec, 0);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.auth_stat, ==, AUTH_BADVERF);

    g_assert_cmpuint(event_count(SRV_EV_AUTH_ERROR), ==, before + 7);
    srv_buf_clear(&out);
}

static void test_auth_other(void)
{
    srv_buf out = {0};
    reply r;
    GByteArray *rec;

    /* AUTH_NONE for GETATTR: too weak. */
    rec = call(70, NFS, 3, 1, CRED_NONE, 0, NULL);
    put_fh(rec);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.reply_stat, ==, MSG_DENIED);
    g_assert_cmpuint(r.reject_stat, ==, AUTH_ERROR);
    g_assert_cmpuint(r.auth_stat, ==, AUTH_TOOWEAK);

    /* ... and for MNT. */
    rec = call(71, MOUNT, 3, 1, CRED_NONE, 0, NULL);
    put_opaque(rec, "/", 1);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.auth_stat, ==, AUTH_TOOWEAK);

    /* Unknown flavors, RPCSEC_GSS (6) among them. */
    const uint32_t flavors[] = {77, 6, 2};
    for (size_t i = 0; i < G_N_ELEMENTS(flavors); i++) {
        rec = call(72 + (uint32_t)i, NFS, 3, 1, CRED_CUSTOM, flavors[i], NULL);
        put_fh(rec);
        run_reply(rec, &out, &r);
        g_assert_cmpuint(r.reject_stat, ==, AUTH_ERROR);
        g_assert_cmpuint(r.auth_stat, ==, AUTH_REJECTEDCRED);
    }
    srv_buf_clear(&out);
}

static void test_dropped(void)
{
    srv_buf out = {0};
    reply r;
    GByteArray *rec;
    uint64_t before = event_count(SRV_EV_BAD_CALL);

    /* Too short to hold an xid and a message type. */
    rec = g_byte_array_new();
    g_byte_array_append(rec, (const guint8 *)"\0\0", 2);
    g_assert_cmpint(run(rec, &out, &r), ==, SRV_DISPATCH_DROP);
    g_assert_cmpuint(out.len, ==, 0);
    g_byte_array_unref(rec);

    /* A reply, not a call. */
    rec = call(80, NFS, 3, 0, CRED_SYS, 0, NULL);
    rec->data[7] = 1;
    g_assert_cmpint(run(rec, &out, &r), ==, SRV_DISPATCH_DROP);
    g_byte_array_unref(rec);

    /* A header cut inside the credential. */
    rec = call(81, NFS, 3, 0, CRED_SYS, 0, NULL);
    g_byte_array_set_size(rec, 36);
    g_assert_cmpint(run(rec, &out, &r), ==, SRV_DISPATCH_DROP);
    g_byte_array_unref(rec);

    /* Cut before the verifier. */
    rec = call(82, NFS, 3, 0, CRED_NONE, 0, NULL);
    g_byte_array_set_size(rec, rec->len - 8);
    g_assert_cmpint(run(rec, &out, &r), ==, SRV_DISPATCH_DROP);
    g_byte_array_unref(rec);
    g_assert_cmpuint(event_count(SRV_EV_BAD_CALL), ==, before + 4);
    srv_buf_clear(&out);
}

static void test_no_database(void)
{
    srv_buf out = {0};
    reply r;
    GByteArray *rec;

    /* GETATTR: answered NFS3ERR_JUKEBOX with no attributes. */
    rec = call(90, NFS, 3, 1, CRED_SYS, 0, NULL);
    put_fh(rec);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    g_assert_cmpuint(get32(&out, r.body), ==, 10008);
    g_assert_cmpuint(r.len, ==, r.body + 4);

    /* REMOVE: JUKEBOX as well (status, then wcc_data: two FALSE flags), and
     * not kept in the duplicate request cache (nothing was done). */
    unsigned drc_before = srv_drc_count(env.drc);
    for (int i = 0; i < 2; i++) {
        rec = call(91, NFS, 3, 12, CRED_SYS, 0, NULL);
        put_fh(rec);
        put_opaque(rec, "victim", 6);
        run_reply(rec, &out, &r);
        g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
        g_assert_cmpuint(get32(&out, r.body), ==, 10008);
        g_assert_cmpuint(r.len, ==, r.body + 12);
        g_assert_cmpuint(get32(&out, r.body + 4), ==, 0);
        g_assert_cmpuint(get32(&out, r.body + 8), ==, 0);
    }
    g_assert_cmpuint(srv_drc_count(env.drc), ==, drc_before);

    /* MNT: dropped, to be retried. */
    rec = call(92, MOUNT, 3, 1, CRED_SYS, 0, NULL);
    put_opaque(rec, "/", 1);
    g_assert_cmpint(run(rec, &out, &r), ==, SRV_DISPATCH_DROP);
    g_byte_array_unref(rec);
    srv_buf_clear(&out);
}

static void test_drc(void)
{
    srv_buf out = {0}, first = {0};
    reply r;
    GByteArray *rec = call(100, TESTPROG, 1, 1, CRED_SYS, 0, NULL);
    struct sockaddr_in other = peer(901);

    put32(rec, 7);
    bump_runs = 0;
    g_assert_cmpint(run(rec, &first, &r), ==, SRV_DISPATCH_REPLY);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    g_assert_cmpuint(get32(&first, r.body), ==, 1007);
    g_assert_cmpuint(bump_runs, ==, 1);

    /* The retransmission, even from another port: the first reply again. */
    srv_origin from;
    srv_origin_set(&from, (struct sockaddr *)&other, sizeof other, NULL, 0, true, SRV_PROGS_ALL);
    g_assert_cmpint(srv_dispatch_record(&env, NULL, rec->data, rec->len, &from, &out), ==,
                    SRV_DISPATCH_REPLY);
    g_assert_cmpmem(out.data, out.len, first.data, first.len);
    g_assert_cmpuint(bump_runs, ==, 1);
    g_assert_cmpuint(atomic_load(&stats.progs[IX_TEST].procs[1].drc_hits), ==, 1);

    /* The same xid with other arguments is another call. */
    GByteArray *rec2 = call(100, TESTPROG, 1, 1, CRED_SYS, 0, NULL);
    put32(rec2, 8);
    run_reply(rec2, &out, &r);
    g_assert_cmpuint(get32(&out, r.body), ==, 2008);
    g_assert_cmpuint(bump_runs, ==, 2);

    /* A retransmission arriving while the first execution runs is dropped. */
    GByteArray *rec3 = call(101, TESTPROG, 1, 1, CRED_SYS, 0, NULL);
    put32(rec3, 9);
    bump_reenter = true;
    bump_record = rec3;
    bump_reenter_result = SRV_DISPATCH_REPLY;
    run_reply(rec3, &out, &r);
    bump_reenter = false;
    g_assert_cmpint(bump_reenter_result, ==, SRV_DISPATCH_DROP);
    g_assert_cmpuint(bump_runs, ==, 3);

    /* Undecodable arguments are not kept: a corrected call with the same
     * xid and bytes cannot exist, but the entry must not linger either. */
    unsigned n = srv_drc_count(env.drc);
    run_reply(call(102, TESTPROG, 1, 1, CRED_SYS, 0, NULL), &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, GARBAGE_ARGS);
    g_assert_cmpuint(srv_drc_count(env.drc), ==, n);

    g_byte_array_unref(rec);
    srv_buf_clear(&out);
    srv_buf_clear(&first);
}

static void test_stats_log(void)
{
    /* The table is written through GLib; here it must just not fail. */
    srv_stats_log(&stats, "test");
    g_assert_cmpuint(atomic_load(&stats.progs[IX_NFS].procs[0].calls), >, 0);
    g_assert_cmpuint(atomic_load(&stats.progs[IX_NFS].procs[0].max_ns), >, 0);
}

/* Several versions of one program: PROG_MISMATCH names the lowest and
 * highest registered; each version answers for itself. */
static void test_versions(void)
{
    srv_buf out = {0};
    reply r;
    const uint32_t missing[] = {0, 2, 3, 5, 8, 0xffffffffu};

    for (size_t i = 0; i < G_N_ELEMENTS(missing); i++) {
        run_reply(call(110 + (uint32_t)i, TESTPROG, missing[i], 0, CRED_SYS, 0, NULL), &out, &r);
        g_assert_cmpuint(r.accept_stat, ==, PROG_MISMATCH);
        g_assert_cmpuint(r.low, ==, 1);
        g_assert_cmpuint(r.high, ==, 7);
    }
    uint64_t v4 = atomic_load(&stats.progs[IX_TEST4].procs[0].calls);
    run_reply(call(120, TESTPROG, 4, 0, CRED_SYS, 0, NULL), &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    g_assert_cmpuint(atomic_load(&stats.progs[IX_TEST4].procs[0].calls), ==, v4 + 1);
    /* Version 4 has only NULL. */
    run_reply(call(121, TESTPROG, 4, 1, CRED_SYS, 0, NULL), &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, PROC_UNAVAIL);
    srv_buf_clear(&out);
}

/* Where a call arrives decides which programs exist for it. */
static void test_served_here(void)
{
    srv_buf out = {0};
    reply r;
    GByteArray *rec;
    uint32_t only_test = (1u << IX_TEST) | (1u << IX_TEST4) | (1u << IX_TEST7);

    rec = call(130, NFS, 3, 0, CRED_SYS, 0, NULL);
    g_assert_cmpint(run_on(rec, true, only_test, &out, &r), ==, SRV_DISPATCH_REPLY);
    g_assert_cmpuint(r.accept_stat, ==, PROG_UNAVAIL);
    g_byte_array_unref(rec);
    /* Only version 4 of TESTPROG served there: PROG_MISMATCH 4..4. */
    rec = call(131, TESTPROG, 1, 0, CRED_SYS, 0, NULL);
    g_assert_cmpint(run_on(rec, true, 1u << IX_TEST4, &out, &r), ==, SRV_DISPATCH_REPLY);
    g_assert_cmpuint(r.accept_stat, ==, PROG_MISMATCH);
    g_assert_cmpuint(r.low, ==, 4);
    g_assert_cmpuint(r.high, ==, 4);
    g_byte_array_unref(rec);
    rec = call(132, TESTPROG, 1, 0, CRED_SYS, 0, NULL);
    g_assert_cmpint(run_on(rec, true, only_test, &out, &r), ==, SRV_DISPATCH_REPLY);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    g_byte_array_unref(rec);
    srv_buf_clear(&out);
}

/* A program that takes any credential; TCP-only procedures; holes. */
static void test_descriptor_rules(void)
{
    srv_buf out = {0};
    reply r;
    GByteArray *rec, *body = authsys(256, 2, false);

    /* AUTH_NONE, an unknown flavor and a malformed AUTH_SYS all run BUMP. */
    rec = call(140, ANYPROG, 1, 1, CRED_NONE, 0, NULL);
    put32(rec, 1);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    rec = call(141, ANYPROG, 1, 1, CRED_CUSTOM, 77, body);
    put32(rec, 2);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    rec = call(142, ANYPROG, 1, 1, CRED_CUSTOM, AUTH_SYS, body);
    put32(rec, 3);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    /* ... but the same credentials to an AUTH_SYS program are refused. */
    rec = call(143, TESTPROG, 1, 1, CRED_NONE, 0, NULL);
    put32(rec, 4);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.auth_stat, ==, AUTH_TOOWEAK);
    rec = call(144, TESTPROG, 1, 1, CRED_CUSTOM, AUTH_SYS, body);
    put32(rec, 5);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.auth_stat, ==, AUTH_BADCRED);
    g_byte_array_unref(body);

    /* A hole in the table; a TCP-only procedure over UDP and over TCP. */
    run_reply(call(145, TESTPROG, 1, 2, CRED_SYS, 0, NULL), &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, PROC_UNAVAIL);
    rec = call(146, TESTPROG, 1, 3, CRED_SYS, 0, NULL);
    g_assert_cmpint(run_on(rec, false, SRV_PROGS_ALL, &out, &r), ==, SRV_DISPATCH_REPLY);
    g_assert_cmpuint(r.accept_stat, ==, PROC_UNAVAIL);
    g_assert_cmpint(run_on(rec, true, SRV_PROGS_ALL, &out, &r), ==, SRV_DISPATCH_REPLY);
    g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    g_assert_cmpuint(r.len, ==, r.body + 4);
    g_byte_array_unref(rec);
    srv_buf_clear(&out);
}

/* Replies counted by the status the program's status_of reports. */
static void test_status_counters(void)
{
    srv_buf out = {0};
    reply r;
    uint64_t odd = atomic_load(&stats.progs[IX_TEST].statuses[0]);
    uint64_t even = atomic_load(&stats.progs[IX_TEST].statuses[1]);
    uint64_t ok = atomic_load(&stats.progs[IX_NFS].statuses[0]);

    for (uint32_t i = 0; i < 3; i++) {
        GByteArray *rec = call(150 + i, TESTPROG, 1, 1, CRED_SYS, 0, NULL);
        put32(rec, 2 * i); /* + 1000 * runs: every result even */
        run_reply(rec, &out, &r);
        g_assert_cmpuint(r.accept_stat, ==, SUCCESS);
    }
    g_assert_cmpuint(atomic_load(&stats.progs[IX_TEST].statuses[0]), ==, odd);
    g_assert_cmpuint(atomic_load(&stats.progs[IX_TEST].statuses[1]), ==, even + 3);
    g_assert_cmpstr(srv_stats_status_name(&test_v1, 7), ==, "ODD");
    g_assert_null(srv_stats_status_name(&test_v1, 9));
    g_assert_cmpstr(srv_stats_status_name(&nfs3_program, 10008), ==, "NFS3ERR_JUKEBOX");
    /* NFS NULL has no status; the metrics page lists both programs'. */
    run_reply(call(160, NFS, 3, 0, CRED_SYS, 0, NULL), &out, &r);
    g_assert_cmpuint(atomic_load(&stats.progs[IX_NFS].statuses[0]), ==, ok);
    GString *page = g_string_new(NULL);
    srv_stats_metrics(&stats, page);
    g_assert_nonnull(strstr(page->str, "pgnfs_nfs3_replies_total{status=\"NFS3ERR_JUKEBOX\"} "));
    g_assert_nonnull(strstr(page->str, "# TYPE pgnfs_test_replies_total counter"));
    g_assert_nonnull(strstr(page->str, "pgnfs_rpc_calls_total{prog=\"test4\",proc=\"NULL\"} "));
    g_string_free(page, TRUE);
    srv_buf_clear(&out);
}

/* Registration refuses duplicates and empty descriptors. */
static void test_register(void)
{
    srv_env e = {0};
    const srv_program empty = {.name = "empty", .prog = 1, .vers = 1};

    g_assert_cmpint(srv_env_register(&e, &test_v1), ==, 0);
    g_assert_cmpint(srv_env_register(&e, &test_v4), ==, 1);
    g_assert_cmpint(srv_env_register(&e, &test_v1), ==, -EEXIST);
    g_assert_cmpint(srv_env_register(&e, &empty), ==, -EINVAL);
    g_assert_cmpuint(e.nprogs, ==, 2);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    log_setup("error"); /* bad-call lines are expected; keep the output readable */

    srv_stats_init(&stats);
    pthread_mutex_init(&ctx.mounts_lock, NULL);
    env = (srv_env){
        .ctx = &ctx,
        .drc = srv_drc_new(64),
        .stats = &stats,
        .rl = log_ratelimit_new(5),
    };
    const srv_program *all[] = {&nfs3_program, &mnt3_program, &test_v1,
                                &test_v4,      &test_v7,      &any_v1};
    for (size_t i = 0; i < G_N_ELEMENTS(all); i++)
        g_assert_cmpint(srv_env_register(&env, all[i]), ==, (int)i);

    g_test_add_func("/dispatch/null", test_null);
    g_test_add_func("/dispatch/rpc_mismatch", test_rpc_mismatch);
    g_test_add_func("/dispatch/prog_unavail", test_prog_unavail);
    g_test_add_func("/dispatch/prog_mismatch", test_prog_mismatch);
    g_test_add_func("/dispatch/proc_unavail", test_proc_unavail);
    g_test_add_func("/dispatch/garbage_args", test_garbage_args);
    g_test_add_func("/dispatch/auth_badcred", test_auth_badcred);
    g_test_add_func("/dispatch/auth_other", test_auth_other);
    g_test_add_func("/dispatch/dropped", test_dropped);
    g_test_add_func("/dispatch/no_database", test_no_database);
    g_test_add_func("/dispatch/drc", test_drc);
    g_test_add_func("/dispatch/stats_log", test_stats_log);
    g_test_add_func("/dispatch/versions", test_versions);
    g_test_add_func("/dispatch/served_here", test_served_here);
    g_test_add_func("/dispatch/descriptor_rules", test_descriptor_rules);
    g_test_add_func("/dispatch/status_counters", test_status_counters);
    g_test_add_func("/dispatch/register", test_register);
    int rc = g_test_run();
    srv_drc_free(env.drc);
    log_ratelimit_free(env.rl);
    srv_stats_clear(&stats);
    return rc;
}
