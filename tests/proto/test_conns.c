/*
 * test_conns.c -- idle connections from anyone must not lock everyone
 * out: the connection table's policy against a real server, through raw
 * RPC connections from chosen loopback addresses (Linux lets a socket
 * bind any 127.0.0.0/8 address, so 127.0.0.2 acts as another client).
 *
 *   server A  defaults ([server] max_connections = 1024), no per-address
 *             cap, exports admitting 127.0.0.1 only
 *     table_full      1,025 idle connections from the non-admitted
 *                     127.0.0.2 fill the table; an admitted client still
 *                     mounts, writes and reads back; one log line for the
 *                     episode, one when it ends
 *     first_call      a non-admitted client's connection is closed after
 *                     its first reply (NULL, or MNT refused); UDP and
 *                     admitted connections are not
 *   server B  max_connections = 4, max_connections_per_address = 2,
 *             127.0.0.0/29 admitted
 *     evict_idle      a full table of idle admitted connections: each new
 *                     client closes the one idle longest
 *     unadmitted_first a full table: a connection from a non-admitted
 *                     address goes before admitted ones idle longer
 *     per_address     the cap closes the address's own connection idle
 *                     longest; other addresses are not held back
 *
 * Nothing waits for time to pass: every step waits for the event it
 * needs (a reply, a closed socket, a log line) with a generous deadline.
 * Each case leaves the table empty, which it knows because it hangs up
 * each connection and waits for the server to close it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nfsraw.h"
#include "testlib.h"

enum { RECV_MS = 60000, FLOOD = 1025 };

static tl_server *server_a, *server_b;
static const nr_cred root = {0};

static uint32_t next_xid(void)
{
    static uint32_t counter;

    return ((uint32_t)getpid() << 16) + ++counter;
}

/* A connection from local address ip to port; aborts the case on failure. */
static int connect_from(unsigned port, const char *ip)
{
    int fd = nr_raw_connect_addr(port, ip, 0);

    if (fd < 0)
        g_error("connect from %s: %s", ip, g_strerror(errno));
    return fd;
}

/* Send a NULL call of prog on fd and assert its (successful) reply. */
static void null_ok(int fd, uint32_t prog)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    nr_xdr_call(rec, next_xid(), prog, 3, 0, &root);
    GByteArray *reply = nr_raw_call(fd, rec, RECV_MS);
    g_assert_nonnull(reply);
    g_assert_true(nr_reply_parse(reply, &rep));
    g_assert_cmphex(rep.xid, ==, nr_get_u32(rec, 0));
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
}

/* True if the server has closed fd (nothing is pending to read but EOF). */
static bool is_closed(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};

    return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR));
}

/* How many of fds[0..n) the server has closed, waiting until at least want are. */
static unsigned wait_closed(const int *fds, unsigned n, unsigned want)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)RECV_MS * 1000;

    for (;;) {
        unsigned closed = 0;
        for (unsigned i = 0; i < n; i++)
            closed += is_closed(fds[i]);
        if (closed >= want || g_get_monotonic_time() > deadline)
            return closed;
        g_usleep(20000);
    }
}

/* Hang up fd and wait until the server has closed its end (so the
 * connection has left the server's table). */
static void hangup(int fd)
{
    shutdown(fd, SHUT_WR);
    g_assert_true(nr_raw_wait_closed(fd, RECV_MS));
    close(fd);
}

/* Occurrences of needle in the server's log. */
static unsigned log_count(const tl_server *s, const char *needle)
{
    char *log = tl_server_log(s);
    unsigned n = 0;

    for (const char *p = log; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    g_free(log);
    return n;
}

/* Wait until needle occurs at least n times in the log; returns the count. */
static unsigned wait_log(const tl_server *s, const char *needle, unsigned n)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)RECV_MS * 1000;
    unsigned got;

    while ((got = log_count(s, needle)) < n && g_get_monotonic_time() < deadline)
        g_usleep(20000);
    return got;
}

/* ---- server A -------------------------------------------------------------------- */

/* Mount "/" of server A as root through a libnfs context (one connection
 * from 127.0.0.1), write a file and read it back. */
static nr_ctx *admitted_client(const char *name)
{
    nr_ctx *c = nr_open(tl_server_port(server_a), NULL);
    nr_fh root_fh, fh;
    mountres3 mres;
    CREATE3res cres;
    READ3res rres;
    char data[4096];

    g_assert_nonnull(c);
    g_assert_cmpint(nr_mnt(c, "/", &mres, &root_fh), ==, MNT3_OK);
    g_assert_cmpint(nr_create(c, &root_fh, name, UNCHECKED, NULL, NULL, &cres), ==, NFS3_OK);
    fh = nr_fh_from(&cres.CREATE3res_u.resok.obj.post_op_fh3_u.handle);
    memset(data, 'a', sizeof data);
    g_assert_cmpint(nr_write(c, &fh, 0, data, sizeof data, FILE_SYNC, NULL), ==, NFS3_OK);
    g_assert_cmpint(nr_read(c, &fh, 0, sizeof data, &rres), ==, NFS3_OK);
    g_assert_cmpmem(rres.READ3res_u.resok.data.data_val, rres.READ3res_u.resok.data.data_len, data,
                    sizeof data);
    return c;
}

static void test_table_full(void)
{
    struct rlimit rl;
    unsigned port = tl_server_port(server_a);

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_max < FLOOD + 256) {
        g_test_skip("the open-files limit is below what 1,025 connections need");
        return;
    }
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    int *fds = g_new(int, FLOOD);
    unsigned full0 = log_count(server_a, "the table is full");

    /* 1,025 connections that send nothing, from an address no export
     * admits: the last one finds the table full (1,024) and closes the
     * oldest. */
    for (unsigned i = 0; i < FLOOD; i++)
        fds[i] = connect_from(port, "127.0.0.2");
    g_assert_cmpuint(wait_closed(fds, FLOOD, 1), >=, 1);
    g_assert_cmpuint(log_count(server_a, "the table is full"), ==, full0 + 1);

    /* An admitted client is not locked out: it mounts and works. */
    nr_ctx *c = admitted_client("table-full");
    g_assert_cmpuint(wait_closed(fds, FLOOD, 2), >=, 2);
    g_assert_cmpuint(log_count(server_a, "the table is full"), ==, full0 + 1);

    /* One of the idle ones sends a call: its reply comes, then the server
     * closes it (no export admits it). */
    unsigned last = FLOOD - 1;
    g_assert_false(is_closed(fds[last]));
    null_ok(fds[last], NR_NFS_PROGRAM);
    g_assert_true(nr_raw_wait_closed(fds[last], RECV_MS));

    /* They go away: the episode ends, once; the admitted client works on. */
    unsigned room0 = log_count(server_a, "room again");
    for (unsigned i = 0; i < FLOOD; i++)
        close(fds[i]);
    g_assert_cmpuint(wait_log(server_a, "room again", room0 + 1), ==, room0 + 1);
    g_assert_cmpint(nr_null(c), ==, 0);
    nr_close(c);
    g_free(fds);
}

static void test_first_call(void)
{
    unsigned port = tl_server_port(server_a);
    GByteArray *rec = g_byte_array_new(), *reply;
    nr_reply rep;

    /* NULL from a non-admitted address: answered, then closed. */
    int fd = connect_from(port, "127.0.0.3");
    null_ok(fd, NR_MOUNT_PROGRAM);
    g_assert_true(nr_raw_wait_closed(fd, RECV_MS));
    close(fd);

    /* MNT from there: refused (MNT3ERR_ACCES), then closed. */
    fd = connect_from(port, "127.0.0.3");
    nr_xdr_call(rec, next_xid(), NR_MOUNT_PROGRAM, 3, 1, &root);
    nr_xdr_string(rec, "/");
    reply = nr_raw_call(fd, rec, RECV_MS);
    g_assert_nonnull(reply);
    g_assert_true(nr_reply_parse(reply, &rep));
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    g_assert_cmpuint(nr_get_u32(reply, rep.body), ==, MNT3ERR_ACCES);
    g_byte_array_unref(reply);
    g_assert_true(nr_raw_wait_closed(fd, RECV_MS));
    close(fd);

    /* UDP from there: every datagram answered (no slot is held). */
    fd = nr_udp_connect_addr(port, "127.0.0.3", 0);
    g_assert_cmpint(fd, >=, 0);
    for (int i = 0; i < 2; i++) {
        g_byte_array_set_size(rec, 0);
        nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 0, &root);
        g_assert_cmpint(nr_udp_send(fd, rec->data, rec->len), ==, 0);
        reply = nr_udp_recv(fd, RECV_MS);
        g_assert_nonnull(reply);
        g_assert_cmphex(nr_get_u32(reply, 0), ==, nr_get_u32(rec, 0));
        g_byte_array_unref(reply);
    }
    close(fd);

    /* An admitted connection takes call after call. */
    fd = connect_from(port, "127.0.0.1");
    for (int i = 0; i < 3; i++)
        null_ok(fd, NR_NFS_PROGRAM);
    hangup(fd);
    g_byte_array_unref(rec);
}

/* ---- server B -------------------------------------------------------------------- */

static void test_evict_idle(void)
{
    unsigned port = tl_server_port(server_b);
    unsigned full0 = log_count(server_b, "the table is full");
    const char *ips[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4",
                         "127.0.0.5", "127.0.0.6", "127.0.0.7"};
    int fds[6];

    /* Four admitted clients, each with a call answered, oldest first:
     * the table (4) is full of idle, admitted connections. */
    for (int i = 0; i < 4; i++) {
        fds[i] = connect_from(port, ips[i]);
        null_ok(fds[i], NR_NFS_PROGRAM);
    }
    /* A fifth client gets in: the one idle longest is closed. */
    fds[4] = connect_from(port, ips[4]);
    null_ok(fds[4], NR_NFS_PROGRAM);
    g_assert_true(nr_raw_wait_closed(fds[0], RECV_MS));
    /* And a sixth: the next idle longest. */
    fds[5] = connect_from(port, ips[5]);
    null_ok(fds[5], NR_NFS_PROGRAM);
    g_assert_true(nr_raw_wait_closed(fds[1], RECV_MS));
    g_assert_cmpuint(log_count(server_b, "the table is full"), ==, full0 + 1);
    /* The others were left alone. */
    for (int i = 2; i < 6; i++)
        null_ok(fds[i], NR_MOUNT_PROGRAM);
    close(fds[0]);
    close(fds[1]);
    for (int i = 2; i < 6; i++)
        hangup(fds[i]);
}

static void test_unadmitted_first(void)
{
    unsigned port = tl_server_port(server_b);
    int fds[3];

    /* Three admitted, idle; then a non-admitted connection, newest of all,
     * that has sent nothing: the table is full. */
    for (int i = 0; i < 3; i++) {
        fds[i] = connect_from(port, i == 0 ? "127.0.0.2" : i == 1 ? "127.0.0.3" : "127.0.0.4");
        null_ok(fds[i], NR_NFS_PROGRAM);
    }
    int stranger = connect_from(port, "127.0.0.9");
    /* A new admitted client closes the stranger's, not the idle-longest
     * admitted one. */
    int fresh = connect_from(port, "127.0.0.5");
    null_ok(fresh, NR_NFS_PROGRAM);
    g_assert_true(nr_raw_wait_closed(stranger, RECV_MS));
    close(stranger);
    for (int i = 0; i < 3; i++)
        null_ok(fds[i], NR_NFS_PROGRAM);
    for (int i = 0; i < 3; i++)
        hangup(fds[i]);
    hangup(fresh);
}

static void test_per_address(void)
{
    unsigned port = tl_server_port(server_b);
    unsigned capped0 = log_count(server_b, "max_connections_per_address");
    int d[4];

    /* 127.0.0.2 may hold 2: its third connection closes its first, its
     * fourth its second; one log line for the episode. */
    d[0] = connect_from(port, "127.0.0.2");
    null_ok(d[0], NR_NFS_PROGRAM);
    d[1] = connect_from(port, "127.0.0.2");
    null_ok(d[1], NR_NFS_PROGRAM);
    d[2] = connect_from(port, "127.0.0.2");
    null_ok(d[2], NR_NFS_PROGRAM);
    g_assert_true(nr_raw_wait_closed(d[0], RECV_MS));
    d[3] = connect_from(port, "127.0.0.2");
    null_ok(d[3], NR_NFS_PROGRAM);
    g_assert_true(nr_raw_wait_closed(d[1], RECV_MS));
    g_assert_cmpuint(log_count(server_b, "max_connections_per_address"), ==, capped0 + 1);
    /* Another address is not held back by it. */
    int other = connect_from(port, "127.0.0.3");
    null_ok(other, NR_NFS_PROGRAM);
    null_ok(d[2], NR_NFS_PROGRAM);
    null_ok(d[3], NR_NFS_PROGRAM);
    close(d[0]);
    close(d[1]);
    hangup(d[2]);
    hangup(d[3]);
    hangup(other);
}

int main(int argc, char **argv)
{
    const char *const a[] = {"server.max_connections_per_address=0", NULL};
    const char *const b[] = {"server.max_connections=4", "server.max_connections_per_address=2",
                             "exports./adm=127.0.0.0/29(ro)", NULL};
    int rc;

    g_test_init(&argc, &argv, NULL);
    server_a = tl_server_start(a);
    server_b = tl_server_start(b);
    g_test_add_func("/conns/table_full", test_table_full);
    g_test_add_func("/conns/first_call", test_first_call);
    g_test_add_func("/conns/evict_idle", test_evict_idle);
    g_test_add_func("/conns/unadmitted_first", test_unadmitted_first);
    g_test_add_func("/conns/per_address", test_per_address);
    rc = g_test_run();
    tl_server_stop(server_a);
    tl_server_stop(server_b);
    return rc;
}
