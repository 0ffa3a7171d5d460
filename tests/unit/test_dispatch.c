/*
 * test_dispatch.c -- srv_dispatch_record driven with hand-built call
 * records, no sockets and no database: every RPC-level reply (RPC_MISMATCH,
 * PROG_UNAVAIL, PROG_MISMATCH, PROC_UNAVAIL, GARBAGE_ARGS, AUTH_ERROR with
 * BADCRED, BADVERF, REJECTEDCRED, TOOWEAK), calls that get no reply, the
 * NULL procedures, NFS3ERR_JUKEBOX without a database, and the duplicate
 * request cache as dispatch uses it (through a test program whose handler
 * counts its executions). Replies are decoded word by word.
 */
#include <arpa/inet.h>
#include <string.h>

#include <glib.h>

#include "srv_int.h"

enum { NFS = 100003, MOUNT = 100005, NLM = 100021 };

/* The test program: 0x20000099 version 1, procedure 1 "BUMP" is
 * non-idempotent and needs no database. */
enum { TESTPROG = 0x20000099u };

static srv_ctx ctx;
static srv_stats stats;
static srv_program progs[SRV_PROGS_MAX];
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
        srv_buf out = {0};
        bump_reenter_result = srv_dispatch_record(&env, NULL, bump_record->data, bump_record->len,
                                                  (struct sockaddr *)&sa, sizeof sa, true, &out);
        srv_buf_clear(&out);
    }
}

static const srv_proc test_procs[] = {
    {.name = "NULL"},
    {.name = "BUMP",
     .args_xdr = (xdrproc_t)xdr_u_int,
     .res_xdr = (xdrproc_t)xdr_u_int,
     .args_size = sizeof(uint32_t),
     .res_size = sizeof(uint32_t),
     .handler = bump_handler,
     .non_idempotent = true},
};

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

/* Dispatch rec from 127.0.0.1:900 without a database; parse the reply. */
static srv_dispatch_result run(const GByteArray *rec, srv_buf *out, reply *r)
{
    struct sockaddr_in sa = peer(900);
    srv_dispatch_result res = srv_dispatch_record(&env, NULL, rec->data, rec->len,
                                                  (struct sockaddr *)&sa, sizeof sa, true, out);

    if (res == SRV_DISPATCH_REPLY)
        parse(out, r);
    return res;
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
    uint64_t before = atomic_load(&stats.procs[0][0].calls);

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
    g_assert_cmpuint(atomic_load(&stats.procs[0][0].calls), ==, before + 2);
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
    uint64_t errors = atomic_load(&stats.procs[0][1].errors);

    /* GETATTR whose handle claims 32 bytes and has 4. */
    rec = call(50, NFS, 3, 1, CRED_SYS, 0, NULL);
    put32(rec, 32);
    put32(rec, 0xdeadbeef);
    run_reply(rec, &out, &r);
    g_assert_cmpuint(r.accept_stat, ==, GARBAGE_ARGS);
    g_assert_cmpuint(atomic_load(&stats.procs[0][1].errors), ==, errors + 1);

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
    g_assert_cmpint(srv_dispatch_record(&env, NULL, rec->data, rec->len, (struct sockaddr *)&other,
                                        sizeof other, true, &out),
                    ==, SRV_DISPATCH_REPLY);
    g_assert_cmpmem(out.data, out.len, first.data, first.len);
    g_assert_cmpuint(bump_runs, ==, 1);
    g_assert_cmpuint(atomic_load(&stats.procs[2][1].drc_hits), ==, 1);

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
    g_assert_cmpuint(atomic_load(&stats.procs[0][0].calls), >, 0);
    g_assert_cmpuint(atomic_load(&stats.procs[0][0].max_ns), >, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    log_setup("error"); /* bad-call lines are expected; keep the output readable */

    unsigned n = srv_programs_default(progs);
    progs[n++] = (srv_program){
        .name = "test",
        .prog = TESTPROG,
        .vers = 1,
        .procs = test_procs,
        .nprocs = G_N_ELEMENTS(test_procs),
    };
    srv_stats_init(&stats, progs, n);
    pthread_mutex_init(&ctx.mounts_lock, NULL);
    env = (srv_env){
        .ctx = &ctx,
        .progs = progs,
        .nprogs = n,
        .drc = srv_drc_new(64),
        .stats = &stats,
        .rl = log_ratelimit_new(5),
    };

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
    int rc = g_test_run();
    srv_drc_free(env.drc);
    log_ratelimit_free(env.rl);
    return rc;
}
