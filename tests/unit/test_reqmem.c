/*
 * test_reqmem.c -- the memory of a call, kept and reused: a READ's bytes
 * placed in the reply buffer and the reply built around them
 * (srv_req_payload, srv_reply_payload, srv_xout.c) byte for byte as the
 * ordinary encoder builds it; request memory kept by a worker thread and
 * still zeroed when handed out again (srv_req.c); the pool of big record
 * buffers (srv_pool.c) and a record that grows into a pooled buffer
 * (srv_record.c); a WRITE's data decoded in place and not freed with the
 * arguments (nfs3_args_write).
 */
#include <string.h>

#include <glib.h>

#include "nfs3_proc.h"
#include "srv_buf.h"
#include "srv_pool.h"
#include "srv_record.h"
#include "srv_reply.h"

#define XID 0x01020304u

/* A READ result of n bytes at data (attributes when attrs). */
static READ3res read_res(bool attrs, char *data, uint32_t n)
{
    READ3res r;

    memset(&r, 0, sizeof r);
    r.status = NFS3_OK;
    r.READ3res_u.resok.file_attributes.attributes_follow = attrs;
    if (attrs) {
        fattr3 *a = &r.READ3res_u.resok.file_attributes.post_op_attr_u.attributes;
        a->type = NF3REG;
        a->mode = 0644;
        a->nlink = 1;
        a->size = 123456789;
        a->fileid = 42;
        a->mtime.seconds = 1700000000;
    }
    r.READ3res_u.resok.count = n;
    r.READ3res_u.resok.eof = true;
    r.READ3res_u.resok.data.data_len = n;
    r.READ3res_u.resok.data.data_val = data;
    return r;
}

/* The reply built around a payload equals the ordinary encoding, and the
 * payload's bytes stay where the handler put them. */
static void check_payload(bool attrs, uint32_t cap, uint32_t n)
{
    srv_buf out = {0}, ref = {0};
    srv_req req;

    memset(&req, 0, sizeof req);
    req.out = &out;
    unsigned char *p = srv_req_payload(&req, cap);
    g_assert_true(p == out.data + SRV_PAYLOAD_HEAD);
    for (uint32_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7 + 3);
    READ3res r = read_res(attrs, (char *)p, n);

    g_assert_true(srv_reply_success(&ref, XID, (xdrproc_t)xdr_READ3res, &r));
    g_assert_true(
        srv_reply_payload(&out, XID, (xdrproc_t)xdr_READ3res, &r, req.payload, req.payload_cap));
    g_assert_cmpmem(srv_buf_msg(&out), out.len, ref.data, ref.len);
    if (n > 0) {
        /* In place: the message contains the payload where it was put. */
        g_assert_true(p > srv_buf_msg(&out) && p + n <= srv_buf_msg(&out) + out.len);
        g_assert_true(out.data + SRV_PAYLOAD_HEAD == p);
    }
    srv_req_release(&req);
    srv_buf_clear(&out);
    srv_buf_clear(&ref);
}

static void test_payload_read(void)
{
    const uint32_t sizes[] = {1, 2, 3, 4, 5, 4095, 4096, 65537, 1u << 20};

    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        check_payload(true, sizes[i], sizes[i]);
        check_payload(false, sizes[i], sizes[i]);
        /* A short read: fewer bytes than asked for. */
        check_payload(true, sizes[i] + 100, sizes[i]);
    }
    /* Nothing read: the payload is not in the message at all. */
    check_payload(true, 4096, 0);
}

/* An error result never refers to the payload: the message lies before it. */
static void test_payload_error(void)
{
    srv_buf out = {0}, ref = {0};
    srv_req req;
    READ3res r;

    memset(&req, 0, sizeof req);
    req.out = &out;
    srv_req_payload(&req, 8192);
    memset(&r, 0, sizeof r);
    r.status = NFS3ERR_STALE;
    g_assert_true(srv_reply_success(&ref, XID, (xdrproc_t)xdr_READ3res, &r));
    g_assert_true(
        srv_reply_payload(&out, XID, (xdrproc_t)xdr_READ3res, &r, req.payload, req.payload_cap));
    g_assert_cmpuint(out.off, ==, 0);
    g_assert_cmpmem(srv_buf_msg(&out), out.len, ref.data, ref.len);
    srv_req_release(&req);
    srv_buf_clear(&out);
    srv_buf_clear(&ref);
}

/* A result whose encoding before the payload exceeds SRV_PAYLOAD_HEAD. */
typedef struct {
    char *big;
    u_int biglen;
    char *data;
    u_int len;
} fat_res;

static bool_t xdr_fat_res(XDR *x, fat_res *r)
{
    return xdr_bytes(x, &r->big, &r->biglen, 1u << 20) && xdr_bytes(x, &r->data, &r->len, 1u << 20);
}

static void test_payload_fallback(void)
{
    srv_buf out = {0}, ref = {0};
    srv_req req;
    char big[2 * SRV_PAYLOAD_HEAD];

    memset(&req, 0, sizeof req);
    req.out = &out;
    unsigned char *p = srv_req_payload(&req, 10000);
    memset(p, 0x5a, 10000);
    memset(big, 0x11, sizeof big);
    fat_res r = {big, sizeof big, (char *)p, 10000};
    g_assert_true(srv_reply_success(&ref, XID, (xdrproc_t)xdr_fat_res, &r));
    g_assert_true(
        srv_reply_payload(&out, XID, (xdrproc_t)xdr_fat_res, &r, req.payload, req.payload_cap));
    g_assert_cmpmem(srv_buf_msg(&out), out.len, ref.data, ref.len);
    srv_req_release(&req);
    srv_buf_clear(&out);
    srv_buf_clear(&ref);
}

/* A worker keeps its request memory: the same blocks come back, zeroed
 * where they are handed out, however they were scribbled on. */
static void test_alloc_kept_zeroed(void)
{
    const size_t sizes[] = {24, 200, 3000, 100000, 8, 5000};
    void *first[G_N_ELEMENTS(sizes)];
    srv_req req;

    srv_req_keep_begin();
    for (int round = 0; round < 3; round++) {
        memset(&req, 0, sizeof req);
        for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
            unsigned char *p = srv_req_alloc(&req, sizes[i]);

            for (size_t k = 0; k < sizes[i]; k++)
                g_assert_cmpuint(p[k], ==, 0);
            memset(p, 0xab, sizes[i]);
            if (round == 0)
                first[i] = p;
            else
                g_assert_true(p == first[i]); /* reused, not allocated */
        }
        srv_req_release(&req);
    }
    srv_req_keep_end();
    /* Not kept any more: released memory is freed (a sanitizer build
     * reports a leak otherwise). */
    memset(&req, 0, sizeof req);
    memset(srv_req_alloc(&req, 100000), 1, 100000);
    srv_req_release(&req);
}

static void test_pool(void)
{
    size_t bufs, bytes, cap;

    srv_pool_drain();
    /* Small buffers are not kept. */
    srv_pool_put(g_malloc(1000));
    srv_pool_held(&bufs, &bytes);
    g_assert_cmpuint(bufs, ==, 0);
    /* Big ones are, and the smallest that fits comes back. */
    void *a = g_malloc(SRV_POOL_MIN), *b = g_malloc(4 * SRV_POOL_MIN);
    srv_pool_put(b);
    srv_pool_put(a);
    srv_pool_held(&bufs, &bytes);
    g_assert_cmpuint(bufs, ==, 2);
    g_assert_true(srv_pool_get(2 * SRV_POOL_MIN, &cap) == b);
    g_assert_cmpuint(cap, >=, 4 * SRV_POOL_MIN);
    g_assert_null(srv_pool_get(8 * SRV_POOL_MIN, &cap));
    g_assert_cmpuint(cap, ==, 0);
    g_assert_true(srv_pool_get(100, &cap) == a);
    g_free(a);
    g_free(b);
    /* Bounded in number. */
    for (int i = 0; i < SRV_POOL_MAX_BUFS + 5; i++)
        srv_pool_put(g_malloc(SRV_POOL_MIN));
    srv_pool_held(&bufs, &bytes);
    g_assert_cmpuint(bufs, ==, SRV_POOL_MAX_BUFS);
    g_assert_cmpuint(bytes, <=, SRV_POOL_MAX_BYTES);
    srv_pool_drain();
    srv_pool_held(&bufs, &bytes);
    g_assert_cmpuint(bufs, ==, 0);
}

/* A big record grows into a pooled buffer, with the right bytes. */
static void test_record_pooled(void)
{
    const size_t len = 700000;
    unsigned char *in = g_malloc(4 + len), *rec;
    srv_record r;
    size_t used, got, pos = 0;
    int rc = SRV_RECORD_NEED;

    srv_pool_drain();
    void *kept = g_malloc(SRV_RECORD_MAX);
    srv_pool_put(kept);
    srv_record_mark(in, len);
    for (size_t i = 0; i < len; i++)
        in[4 + i] = (unsigned char)(i % 251);
    srv_record_init(&r, SRV_RECORD_MAX);
    while (pos < 4 + len && rc == SRV_RECORD_NEED) {
        size_t n = 4 + len - pos < 1000 ? 4 + len - pos : 1000;
        rc = srv_record_feed(&r, in + pos, n, &used);
        pos += used;
    }
    g_assert_cmpint(rc, ==, SRV_RECORD_COMPLETE);
    rec = srv_record_take(&r, &got);
    g_assert_true(rec == kept); /* the pool's buffer, not a new one */
    g_assert_cmpmem(rec, got, in + 4, len);
    srv_pool_put(rec);
    srv_record_clear(&r);
    srv_pool_drain();
    g_free(in);
}

/* WRITE's data is decoded in place; freeing the arguments leaves it. */
static void test_write_args_inplace(void)
{
    unsigned char fh[38], data[5003], buf[6000];
    WRITE3args in, out;
    XDR x;

    memset(fh, 7, sizeof fh);
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 13);
    memset(&in, 0, sizeof in);
    in.file.data.data_len = sizeof fh;
    in.file.data.data_val = (char *)fh;
    in.offset = 1ull << 40;
    in.count = sizeof data;
    in.stable = FILE_SYNC;
    in.data.data_len = sizeof data;
    in.data.data_val = (char *)data;
    xdrmem_create(&x, (char *)buf, sizeof buf, XDR_ENCODE);
    g_assert_true(xdr_WRITE3args(&x, &in));
    u_int len = xdr_getpos(&x);
    xdr_destroy(&x);

    memset(&out, 0, sizeof out);
    xdrmem_create(&x, (char *)buf, len, XDR_DECODE);
    g_assert_true(nfs3_args_write(&x, &out));
    xdr_destroy(&x);
    g_assert_cmpuint(out.offset, ==, in.offset);
    g_assert_cmpuint(out.count, ==, sizeof data);
    g_assert_cmpint(out.stable, ==, FILE_SYNC);
    g_assert_cmpmem(out.file.data.data_val, out.file.data.data_len, fh, sizeof fh);
    g_assert_cmpmem(out.data.data_val, out.data.data_len, data, sizeof data);
    g_assert_true((unsigned char *)out.data.data_val > buf &&
                  (unsigned char *)out.data.data_val < buf + len);
    xdr_free((xdrproc_t)nfs3_args_write, (char *)&out); /* must not free buf's bytes */
    g_assert_null(out.data.data_val);

    /* Data longer than the record holds: refused, nothing left to free. */
    memset(&out, 0, sizeof out);
    xdrmem_create(&x, (char *)buf, len - 8, XDR_DECODE);
    g_assert_false(nfs3_args_write(&x, &out));
    xdr_destroy(&x);
    xdr_free((xdrproc_t)nfs3_args_write, (char *)&out);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/reqmem/payload-read", test_payload_read);
    g_test_add_func("/reqmem/payload-error", test_payload_error);
    g_test_add_func("/reqmem/payload-fallback", test_payload_fallback);
    g_test_add_func("/reqmem/alloc-kept-zeroed", test_alloc_kept_zeroed);
    g_test_add_func("/reqmem/pool", test_pool);
    g_test_add_func("/reqmem/record-pooled", test_record_pooled);
    g_test_add_func("/reqmem/write-args-inplace", test_write_args_inplace);
    return g_test_run();
}
