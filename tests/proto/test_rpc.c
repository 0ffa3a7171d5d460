/*
 * test_rpc.c -- the RPC layer, by hand-built records over a TCP socket
 * (RFC 5531 replies: PROG_UNAVAIL, PROG_MISMATCH, PROC_UNAVAIL,
 * GARBAGE_ARGS, AUTH_ERROR, RPC_MISMATCH) and the duplicate request cache:
 * a retransmitted non-idempotent call gets the first call's reply.
 *
 * After every malformed input the server must still answer a new
 * connection; each case ends by checking that.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ptest.h"

enum { RECV_MS = 30000 };

/* Xids unique across the cases, which run in processes of their own. */
static uint32_t next_xid(void)
{
    static uint32_t counter;

    return ((uint32_t)getpid() << 16) + ++counter;
}

/* Send one record on a fresh connection to port and return the decoded reply. */
static GByteArray *call_port(unsigned port, const GByteArray *rec, nr_reply *rep)
{
    int fd = nr_raw_connect(port);

    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(nr_raw_send(fd, rec->data, rec->len), ==, 0);
    GByteArray *reply = nr_raw_recv(fd, RECV_MS);
    g_assert_nonnull(reply);
    g_assert_true(nr_reply_parse(reply, rep));
    g_assert_cmphex(rep->xid, ==, nr_get_u32(rec, 0));
    g_assert_cmpuint(rep->msg_type, ==, NR_MSG_REPLY);
    close(fd);
    return reply;
}

/* The same to the NFS port. */
static GByteArray *call_once(const GByteArray *rec, nr_reply *rep)
{
    return call_port(pt.port, rec, rep);
}

/*
 * The nfsstat3 of a reply to the call with xid `xid`, asserting that the
 * call was accepted and executed.
 */
static int reply_status(const GByteArray *reply, uint32_t xid)
{
    nr_reply rep;

    g_assert_nonnull(reply);
    g_assert_true(nr_reply_parse(reply, &rep));
    g_assert_cmphex(rep.xid, ==, xid);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    return (int)nr_get_u32(reply, rep.body);
}

/* The server still answers NFS NULL on a new connection. */
static void assert_alive(void)
{
    nr_ctx *c = pt_open(NULL);

    g_assert_cmpint(nr_null(c), ==, 0);
    pt_getattr(c, &pt.root);
    nr_close(c);
}

static void test_null_auth_none(void)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    /* NULL needs no credentials. */
    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 0, NULL);
    GByteArray *reply = call_once(rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    g_assert_cmpuint(reply->len, ==, rep.body); /* void result */
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
}

static void test_proc_unavail(void)
{
    const struct {
        uint32_t prog, vers, proc;
    } calls[] = {
        {NR_NFS_PROGRAM, 3, 22},
        {NR_NFS_PROGRAM, 3, 0x7fffffff},
        {NR_MOUNT_PROGRAM, 3, 6},
    };

    for (size_t i = 0; i < G_N_ELEMENTS(calls); i++) {
        GByteArray *rec = g_byte_array_new();
        nr_reply rep;
        nr_xdr_call(rec, next_xid(), calls[i].prog, calls[i].vers, calls[i].proc, &pt_root);
        nr_xdr_fh(rec, &pt.root);
        unsigned port = calls[i].prog == NR_MOUNT_PROGRAM ? pt.mount_port : pt.port;
        GByteArray *reply = call_port(port, rec, &rep);
        g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
        g_assert_cmpuint(rep.accept_stat, ==, NR_PROC_UNAVAIL);
        g_byte_array_unref(reply);
        g_byte_array_unref(rec);
    }
    assert_alive();
}

static void test_prog_unavail(void)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    nr_xdr_call(rec, next_xid(), 100099, 1, 0, &pt_root);
    GByteArray *reply = call_once(rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep.accept_stat, ==, NR_PROG_UNAVAIL);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    assert_alive();
}

static void test_prog_mismatch(void)
{
    const uint32_t versions[] = {2, 4};

    for (size_t i = 0; i < G_N_ELEMENTS(versions); i++) {
        GByteArray *rec = g_byte_array_new();
        nr_reply rep;
        nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, versions[i], 0, &pt_root);
        GByteArray *reply = call_once(rec, &rep);
        g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
        g_assert_cmpuint(rep.accept_stat, ==, NR_PROG_MISMATCH);
        /* The versions supported: 3 and only 3. */
        g_assert_cmpuint(rep.low, ==, 3);
        g_assert_cmpuint(rep.high, ==, 3);
        g_byte_array_unref(reply);
        g_byte_array_unref(rec);
    }
    assert_alive();
}

static void test_rpc_mismatch(void)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 0, &pt_root);
    /* RPC version 3 instead of 2 (the third word). */
    rec->data[8 + 3] = 3;
    GByteArray *reply = call_once(rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_DENIED);
    g_assert_cmpuint(rep.reject_stat, ==, NR_RPC_MISMATCH);
    g_assert_cmpuint(rep.low, ==, 2);
    g_assert_cmpuint(rep.high, ==, 2);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    assert_alive();
}

static void test_garbage_args(void)
{
    nr_reply rep;
    GByteArray *reply;

    /* GETATTR whose handle claims 32 bytes and has 4. */
    GByteArray *rec = g_byte_array_new();
    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 1, &pt_root);
    nr_xdr_u32(rec, 32);
    nr_xdr_u32(rec, 0xdeadbeef);
    reply = call_once(rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep.accept_stat, ==, NR_GARBAGE_ARGS);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);

    /* GETATTR with a 65-byte handle (over NFS3_FHSIZE). */
    unsigned char big[65] = {0};
    rec = g_byte_array_new();
    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 1, &pt_root);
    nr_xdr_opaque(rec, big, sizeof big);
    reply = call_once(rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep.accept_stat, ==, NR_GARBAGE_ARGS);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);

    /* LOOKUP with the name missing altogether. */
    rec = g_byte_array_new();
    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 3, &pt_root);
    nr_xdr_fh(rec, &pt.root);
    reply = call_once(rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep.accept_stat, ==, NR_GARBAGE_ARGS);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);

    /* WRITE whose data length is a lie (4 GiB - 1). */
    rec = g_byte_array_new();
    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 7, &pt_root);
    nr_xdr_fh(rec, &pt.root);
    nr_xdr_u64(rec, 0);
    nr_xdr_u32(rec, 4);
    nr_xdr_u32(rec, FILE_SYNC);
    nr_xdr_u32(rec, 0xffffffffu);
    nr_xdr_u32(rec, 0x41414141);
    reply = call_once(rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep.accept_stat, ==, NR_GARBAGE_ARGS);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);

    /* MNT with a path longer than MNTPATHLEN (1024). */
    char *path = g_malloc(1101);
    memset(path, 'p', 1100);
    path[0] = '/';
    path[1100] = '\0';
    rec = g_byte_array_new();
    nr_xdr_call(rec, next_xid(), NR_MOUNT_PROGRAM, 3, 1, &pt_root);
    nr_xdr_string(rec, path);
    reply = call_port(pt.mount_port, rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep.accept_stat, ==, NR_GARBAGE_ARGS);
    g_free(path);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    assert_alive();
}

static void test_write_count_mismatch(void)
{
    nr_ctx *c = pt_open(&pt_owner);
    nr_fh dir = pt_fresh_dir();
    nr_fh f = pt_create(c, &dir, "f", 0644);
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    /* WRITE whose count (10) disagrees with its data (5 bytes). */
    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 7, &pt_owner);
    nr_xdr_fh(rec, &f);
    nr_xdr_u64(rec, 0);
    nr_xdr_u32(rec, 10);
    nr_xdr_u32(rec, FILE_SYNC);
    nr_xdr_opaque(rec, "hello", 5);
    GByteArray *reply = call_once(rec, &rep);
    pt_stat(c, reply_status(reply, rep.xid), NFS3ERR_INVAL);
    g_assert_cmpuint(pt_getattr(c, &f).size, ==, 0);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    nr_close(c);
}

static void test_auth_none(void)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 1, NULL);
    nr_xdr_fh(rec, &pt.root);
    GByteArray *reply = call_once(rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_DENIED);
    g_assert_cmpuint(rep.reject_stat, ==, NR_AUTH_ERROR);
    g_assert_cmpuint(rep.auth_stat, ==, NR_AUTH_TOOWEAK);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);

    /* An unknown flavor. */
    rec = g_byte_array_new();
    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 1, NULL);
    rec->data[24 + 3] = 77; /* the credential flavor */
    nr_xdr_fh(rec, &pt.root);
    reply = call_once(rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_DENIED);
    g_assert_cmpuint(rep.reject_stat, ==, NR_AUTH_ERROR);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    assert_alive();
}

static void test_bad_record(void)
{
    /* A record mark announcing 2 GiB: the server drops the connection. */
    int fd = nr_raw_connect(pt.port);
    g_assert_cmpint(fd, >=, 0);
    uint32_t mark = htonl(0xffffffffu);
    g_assert_cmpint(write(fd, &mark, 4), ==, 4);
    g_assert_true(nr_raw_wait_closed(fd, 10000));
    close(fd);

    /* A record that is too short to be a call. */
    fd = nr_raw_connect(pt.port);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(nr_raw_send(fd, "\0\0\0\1\0\0", 6), ==, 0);
    close(fd);

    /* A connection closed in the middle of a record. */
    fd = nr_raw_connect(pt.port);
    g_assert_cmpint(fd, >=, 0);
    mark = htonl(0x80000100u);
    g_assert_cmpint(write(fd, &mark, 4), ==, 4);
    g_assert_cmpint(write(fd, "abcd", 4), ==, 4);
    close(fd);
    assert_alive();
}

/* Build a REMOVE (or RMDIR) call record. */
static GByteArray *remove_record(uint32_t xid, uint32_t proc, const nr_fh *dir, const char *name)
{
    GByteArray *rec = g_byte_array_new();

    nr_xdr_call(rec, xid, NR_NFS_PROGRAM, 3, proc, &pt_owner);
    nr_xdr_fh(rec, dir);
    nr_xdr_string(rec, name);
    return rec;
}

static void test_drc_remove(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    uint32_t xid = next_xid();

    pt_create(c, &dir, "victim", 0644);
    GByteArray *rec = remove_record(xid, 12, &dir, "victim");
    int fd = nr_raw_connect(pt.port);
    g_assert_cmpint(fd, >=, 0);

    g_assert_cmpint(nr_raw_send(fd, rec->data, rec->len), ==, 0);
    GByteArray *a = nr_raw_recv(fd, RECV_MS);
    pt_stat(c, reply_status(a, xid), NFS3_OK);

    /* The retransmission: same xid, same bytes. */
    g_assert_cmpint(nr_raw_send(fd, rec->data, rec->len), ==, 0);
    GByteArray *b = nr_raw_recv(fd, RECV_MS);
    pt_stat(c, reply_status(b, xid), NFS3_OK);
    /* It is the first reply, replayed. */
    g_assert_cmpmem(a->data, a->len, b->data, b->len);
    pt_stat(c, nr_lookup(c, &dir, "victim", NULL), NFS3ERR_NOENT);

    /* A new xid is a new call: NOENT now. */
    uint32_t xid2 = next_xid();
    GByteArray *rec2 = remove_record(xid2, 12, &dir, "victim");
    g_assert_cmpint(nr_raw_send(fd, rec2->data, rec2->len), ==, 0);
    GByteArray *d = nr_raw_recv(fd, RECV_MS);
    pt_stat(c, reply_status(d, xid2), NFS3ERR_NOENT);

    close(fd);
    g_byte_array_unref(a);
    g_byte_array_unref(b);
    g_byte_array_unref(d);
    g_byte_array_unref(rec);
    g_byte_array_unref(rec2);
    nr_close(c);
}

static void test_udp(void)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;
    int fd = nr_udp_connect(pt.port);

    /* NULL and GETATTR over UDP. */
    g_assert_cmpint(fd, >=, 0);
    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 0, &pt_root);
    g_assert_cmpint(nr_udp_send(fd, rec->data, rec->len), ==, 0);
    GByteArray *reply = nr_udp_recv(fd, RECV_MS);
    g_assert_nonnull(reply);
    g_assert_true(nr_reply_parse(reply, &rep));
    g_assert_cmphex(rep.xid, ==, nr_get_u32(rec, 0));
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    g_byte_array_unref(reply);

    g_byte_array_set_size(rec, 0);
    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 1, &pt_root);
    nr_xdr_fh(rec, &pt.root);
    g_assert_cmpint(nr_udp_send(fd, rec->data, rec->len), ==, 0);
    reply = nr_udp_recv(fd, RECV_MS);
    g_assert_cmpint(reply_status(reply, nr_get_u32(rec, 0)), ==, NFS3_OK);
    g_assert_true(nr_reply_parse(reply, &rep));
    g_assert_cmpuint(nr_get_u32(reply, rep.body + 4), ==, NF3DIR);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    close(fd);
}

static void test_drc_remove_udp(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    uint32_t xid = next_xid();

    pt_create(c, &dir, "victim", 0644);
    GByteArray *rec = remove_record(xid, 12, &dir, "victim");
    int fd = nr_udp_connect(pt.port);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(nr_udp_send(fd, rec->data, rec->len), ==, 0);
    GByteArray *a = nr_udp_recv(fd, RECV_MS);
    pt_stat(c, reply_status(a, xid), NFS3_OK);
    g_assert_cmpint(nr_udp_send(fd, rec->data, rec->len), ==, 0);
    GByteArray *b = nr_udp_recv(fd, RECV_MS);
    pt_stat(c, reply_status(b, xid), NFS3_OK);
    g_assert_cmpmem(a->data, a->len, b->data, b->len);
    pt_stat(c, nr_lookup(c, &dir, "victim", NULL), NFS3ERR_NOENT);
    close(fd);
    g_byte_array_unref(a);
    g_byte_array_unref(b);
    g_byte_array_unref(rec);
    nr_close(c);
}

static void test_drc_mkdir_reconnect(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);
    uint32_t xid = next_xid();
    GByteArray *rec = g_byte_array_new();

    /* MKDIR, retransmitted after a reconnect (a client's usual TCP case). */
    nr_xdr_call(rec, xid, NR_NFS_PROGRAM, 3, 9, &pt_owner);
    nr_xdr_fh(rec, &dir);
    nr_xdr_string(rec, "newdir");
    nr_xdr_u32(rec, 1); /* mode */
    nr_xdr_u32(rec, 0755);
    for (int i = 0; i < 5; i++)
        nr_xdr_u32(rec, 0); /* uid, gid, size, atime, mtime: not set */

    int fd = nr_raw_connect(pt.port);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(nr_raw_send(fd, rec->data, rec->len), ==, 0);
    GByteArray *a = nr_raw_recv(fd, RECV_MS);
    pt_stat(c, reply_status(a, xid), NFS3_OK);
    unsigned local = nr_raw_local_port(fd);
    g_assert_cmpuint(local, !=, 0);
    nr_raw_abort(fd);

    fd = nr_raw_connect_from(pt.port, local);
    if (fd < 0) {
        /* Another socket took that port meanwhile (tests run side by side):
         * the duplicate request cache keys on the client's address, not its
         * port, so another port shows the same. */
        g_test_message("reconnecting from port %u: %s: from another port", local,
                       g_strerror(errno));
        fd = nr_raw_connect(pt.port);
    }
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(nr_raw_send(fd, rec->data, rec->len), ==, 0);
    GByteArray *b = nr_raw_recv(fd, RECV_MS);
    pt_stat(c, reply_status(b, xid), NFS3_OK);
    close(fd);

    nr_fh d = pt_lookup(c, &dir, "newdir");
    g_assert_cmpint(pt_getattr(c, &d).type, ==, NF3DIR);
    g_assert_cmpuint(pt_getattr(c, &dir).nlink, ==, 3);
    g_byte_array_unref(a);
    g_byte_array_unref(b);
    g_byte_array_unref(rec);
    nr_close(c);
}

static void test_drc_other_args(void)
{
    nr_fh dir = pt_fresh_dir();
    nr_ctx *c = pt_open(&pt_owner);

    /* The same xid with other arguments is not a retransmission. */
    pt_create(c, &dir, "one", 0644);
    pt_create(c, &dir, "two", 0644);
    uint32_t xid = next_xid();
    GByteArray *r1 = remove_record(xid, 12, &dir, "one");
    GByteArray *r2 = remove_record(xid, 12, &dir, "two");
    int fd = nr_raw_connect(pt.port);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(nr_raw_send(fd, r1->data, r1->len), ==, 0);
    GByteArray *a = nr_raw_recv(fd, RECV_MS);
    pt_stat(c, reply_status(a, xid), NFS3_OK);
    g_assert_cmpint(nr_raw_send(fd, r2->data, r2->len), ==, 0);
    GByteArray *b = nr_raw_recv(fd, RECV_MS);
    pt_stat(c, reply_status(b, xid), NFS3_OK);
    close(fd);
    pt_stat(c, nr_lookup(c, &dir, "one", NULL), NFS3ERR_NOENT);
    pt_stat(c, nr_lookup(c, &dir, "two", NULL), NFS3ERR_NOENT);
    g_byte_array_unref(a);
    g_byte_array_unref(b);
    g_byte_array_unref(r1);
    g_byte_array_unref(r2);
    nr_close(c);
}

static void test_pipelined(void)
{
    /* Several calls in one write, answered each by its xid. */
    GByteArray *all = g_byte_array_new();
    uint32_t xids[8];

    for (int i = 0; i < 8; i++) {
        GByteArray *rec = g_byte_array_new();
        xids[i] = next_xid();
        nr_xdr_call(rec, xids[i], NR_NFS_PROGRAM, 3, 1, &pt_root);
        nr_xdr_fh(rec, &pt.root);
        uint32_t mark = htonl(0x80000000u | rec->len);
        g_byte_array_append(all, (const guint8 *)&mark, 4);
        g_byte_array_append(all, rec->data, rec->len);
        g_byte_array_unref(rec);
    }
    int fd = nr_raw_connect(pt.port);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(write(fd, all->data, all->len), ==, (ssize_t)all->len);
    bool seen[8] = {false};
    for (int i = 0; i < 8; i++) {
        nr_reply rep;
        GByteArray *reply = nr_raw_recv(fd, RECV_MS);
        g_assert_nonnull(reply);
        g_assert_true(nr_reply_parse(reply, &rep));
        g_assert_cmpint(reply_status(reply, rep.xid), ==, NFS3_OK);
        int k = -1;
        for (int j = 0; j < 8; j++)
            if (xids[j] == rep.xid)
                k = j;
        g_assert_cmpint(k, >=, 0);
        g_assert_false(seen[k]);
        seen[k] = true;
        g_byte_array_unref(reply);
    }
    close(fd);
    g_byte_array_unref(all);
}

int main(int argc, char **argv)
{
    pt_init(&argc, &argv);
    pt_add("/rpc/null_auth_none", test_null_auth_none);
    pt_add("/rpc/proc_unavail", test_proc_unavail);
    pt_add("/rpc/prog_unavail", test_prog_unavail);
    pt_add("/rpc/prog_mismatch", test_prog_mismatch);
    pt_add("/rpc/rpc_mismatch", test_rpc_mismatch);
    pt_add("/rpc/garbage_args", test_garbage_args);
    pt_add("/rpc/write_count_mismatch", test_write_count_mismatch);
    pt_add("/rpc/auth_none", test_auth_none);
    pt_add("/rpc/bad_record", test_bad_record);
    pt_add("/rpc/pipelined", test_pipelined);
    pt_add("/rpc/udp", test_udp);
    pt_add("/drc/remove", test_drc_remove);
    pt_add("/drc/remove_udp", test_drc_remove_udp);
    pt_add("/drc/mkdir_reconnect", test_drc_mkdir_reconnect);
    pt_add("/drc/same_xid_other_args", test_drc_other_args);
    return pt_run();
}
