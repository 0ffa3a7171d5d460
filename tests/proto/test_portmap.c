/*
 * test_portmap.c -- finding pgnfsd through port 111, as a plain
 * `mount -t nfs host:/ /mnt` does: the built-in portmapper (PMAP v2
 * NULL, GETPORT, DUMP; rpcbind v3/v4 NULL, GETADDR, DUMP) when no rpcbind
 * runs, registration with rpcbind when one does, libnfs mounting and
 * copying data with no port given through either, and a clean
 * NLM (versions 1, 3, 4) and NSM announced on the NFS port, and a clean
 * PROG_UNAVAIL for NLM when [nlm] enable is false.
 *
 * Port 111 is fixed, so the program runs in private network and mount
 * namespaces it creates at start (unshare(2)): its own loopback, its own
 * /run (for the private rpcbind of the last case). Tests running in
 * parallel, and the machine's own rpcbind, never see it. That needs root
 * (CAP_SYS_ADMIN); without it the program reports a skip (exit 77).
 *
 * NOTES
 *   Cases run in order in this process and share the first server; the
 *   rpcbind case stops it and starts another.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nfsraw.h"
#include "testlib.h"

#define PMAP_PORT 111
#define PMAP_PROG 100000
#define NLM_PROG  100021
#define NSM_PROG  100024
#define RECV_MS   30000
#define SKIP_CODE 77

static tl_server *server;

static uint32_t next_xid(void)
{
    static uint32_t counter;

    return ((uint32_t)getpid() << 16) + ++counter;
}

/* Bring the loopback interface of this namespace up. */
static int lo_up(void)
{
    struct ifreq ifr = {0};
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    int rc = -1;

    if (fd < 0)
        return -1;
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
    }
    close(fd);
    return rc;
}

/* Private network and mount namespaces with their own /run. */
static bool isolate(void)
{
    if (geteuid() != 0) {
        printf("1..0 # SKIP needs root to create a private network namespace for port 111\n");
        return false;
    }
    if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) {
        printf("1..0 # SKIP unshare(CLONE_NEWNET | CLONE_NEWNS): %s\n", g_strerror(errno));
        return false;
    }
    if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") != 0) {
        printf("1..0 # SKIP cannot give the test its own /run: %s\n", g_strerror(errno));
        return false;
    }
    if (lo_up() != 0) {
        printf("1..0 # SKIP cannot bring the private loopback up: %s\n", g_strerror(errno));
        return false;
    }
    return true;
}

/* ---- raw portmapper calls ------------------------------------------------- */

/* Call over TCP or UDP on port 111; returns the reply (unref it), asserting one came. */
static GByteArray *pmap_call(bool tcp, const GByteArray *rec, nr_reply *rep)
{
    int fd = tcp ? nr_raw_connect(PMAP_PORT) : nr_udp_connect(PMAP_PORT);
    GByteArray *reply;

    g_assert_cmpint(fd, >=, 0);
    if (tcp) {
        g_assert_cmpint(nr_raw_send(fd, rec->data, rec->len), ==, 0);
        reply = nr_raw_recv(fd, RECV_MS);
    } else {
        g_assert_cmpint(nr_udp_send(fd, rec->data, rec->len), ==, 0);
        reply = nr_udp_recv(fd, RECV_MS);
    }
    close(fd);
    g_assert_nonnull(reply);
    g_assert_true(nr_reply_parse(reply, rep));
    g_assert_cmphex(rep->xid, ==, nr_get_u32(rec, 0));
    return reply;
}

/* PMAP v2 GETPORT; returns the port (0 = not registered). */
static uint32_t getport(bool tcp, uint32_t prog, uint32_t vers, uint32_t prot)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    nr_xdr_call(rec, next_xid(), PMAP_PROG, 2, 3, NULL);
    nr_xdr_u32(rec, prog);
    nr_xdr_u32(rec, vers);
    nr_xdr_u32(rec, prot);
    nr_xdr_u32(rec, 0);
    GByteArray *reply = pmap_call(tcp, rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    uint32_t port = nr_get_u32(reply, rep.body);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    return port;
}

/* rpcbind GETADDR (proc 3) or GETVERSADDR (proc 9); returns the address (g_free). */
static char *getaddr(bool tcp, uint32_t vers, uint32_t proc, uint32_t prog, uint32_t pvers,
                     const char *netid)
{
    GByteArray *rec = g_byte_array_new();
    nr_reply rep;

    nr_xdr_call(rec, next_xid(), PMAP_PROG, vers, proc, NULL);
    nr_xdr_u32(rec, prog);
    nr_xdr_u32(rec, pvers);
    nr_xdr_string(rec, netid);
    nr_xdr_string(rec, "");
    nr_xdr_string(rec, "");
    GByteArray *reply = pmap_call(tcp, rec, &rep);
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    uint32_t len = nr_get_u32(reply, rep.body);
    g_assert_cmpuint(rep.body + 4 + len, <=, reply->len);
    char *addr = g_strndup((const char *)reply->data + rep.body + 4, len);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    return addr;
}

/* "127.0.0.1.H.L" for port. */
static char *uaddr(unsigned port)
{
    return g_strdup_printf("127.0.0.1.%u.%u", port >> 8, port & 0xff);
}

/* The netids in an rpcbind v3 DUMP, space-separated with their programs. */
static char *dump34(void)
{
    GByteArray *rec = g_byte_array_new();
    GString *out = g_string_new(NULL);
    nr_reply rep;

    nr_xdr_call(rec, next_xid(), PMAP_PROG, 3, 4, NULL);
    GByteArray *reply = pmap_call(true, rec, &rep);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    size_t off = rep.body;
    while (nr_get_u32(reply, off) == 1) {
        uint32_t prog = nr_get_u32(reply, off + 4);
        off += 12;
        for (int s = 0; s < 3; s++) { /* netid, addr, owner */
            uint32_t len = nr_get_u32(reply, off);
            g_assert_cmpuint(off + 4 + len, <=, reply->len);
            if (s == 0)
                g_string_append_printf(out, "%u:%.*s ", prog, (int)len,
                                       (const char *)reply->data + off + 4);
            off += 4 + ((len + 3) & ~3u);
        }
    }
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    return g_string_free(out, FALSE);
}

/* ---- cases ------------------------------------------------------------------------ */

/* libnfs with no ports asks the portmapper on 111, then mounts and copies. */
static void test_libnfs_no_ports(void)
{
    struct nfs_context *nfs = nfs_init_context();
    struct nfsfh *fh = NULL;
    size_t len = 1 << 20;
    unsigned char *data = g_malloc(len), *back = g_malloc0(len);

    for (size_t i = 0; i < len; i++)
        data[i] = (unsigned char)g_random_int();
    g_assert_nonnull(nfs);
    g_assert_cmpint(nfs_set_version(nfs, 3), ==, 0);
    if (nfs_mount(nfs, "127.0.0.1", "/") != 0)
        g_error("mount through the portmapper failed: %s", nfs_get_error(nfs));
    g_assert_cmpint(nfs_creat(nfs, "/through-portmap", 0644, &fh), ==, 0);
    for (size_t off = 0; off < len; off += 65536)
        g_assert_cmpint(nfs_pwrite(nfs, fh, off, 65536, data + off), ==, 65536);
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    nfs_destroy_context(nfs);

    /* A second mount, through a URL without ports, reads it back. */
    nfs = nfs_init_context();
    struct nfs_url *u = nfs_parse_url_full(nfs, "nfs://127.0.0.1//through-portmap?version=3");
    g_assert_nonnull(u);
    if (nfs_mount(nfs, u->server, u->path) != 0)
        g_error("mount of a URL without ports failed: %s", nfs_get_error(nfs));
    g_assert_cmpint(nfs_open(nfs, u->file, O_RDONLY, &fh), ==, 0);
    size_t got = 0;
    while (got < len) {
        int n = nfs_pread(nfs, fh, got, len - got, back + got);
        g_assert_cmpint(n, >, 0);
        got += (size_t)n;
    }
    g_assert_cmpint(memcmp(data, back, len), ==, 0);
    nfs_close(nfs, fh);
    nfs_destroy_url(u);
    nfs_destroy_context(nfs);
    g_free(data);
    g_free(back);
}

/* NULL (procedure 0) of PMAP v2 and rpcbind v3/v4, over TCP and UDP:
 * an empty success, what rpcinfo -p and clients send first. */
static void test_null(void)
{
    for (uint32_t vers = 2; vers <= 4; vers++) {
        for (int tcp = 0; tcp < 2; tcp++) {
            GByteArray *rec = g_byte_array_new();
            nr_reply rep;

            nr_xdr_call(rec, next_xid(), PMAP_PROG, vers, 0, NULL);
            GByteArray *reply = pmap_call(tcp, rec, &rep);
            g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
            g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
            g_assert_cmpuint(reply->len, ==, rep.body); /* no result body */
            g_byte_array_unref(reply);
            g_byte_array_unref(rec);
        }
    }
}

static void test_getport(void)
{
    unsigned port = tl_server_port(server);

    for (int tcp = 0; tcp < 2; tcp++) {
        g_assert_cmpuint(getport(tcp, NR_NFS_PROGRAM, 3, 6), ==, port);
        g_assert_cmpuint(getport(tcp, NR_NFS_PROGRAM, 3, 17), ==, port);
        g_assert_cmpuint(getport(tcp, NR_MOUNT_PROGRAM, 3, 6), ==, port);
        g_assert_cmpuint(getport(tcp, NR_MOUNT_PROGRAM, 3, 17), ==, port);
        g_assert_cmpuint(getport(tcp, PMAP_PROG, 2, 6), ==, PMAP_PORT);
        /* The lock manager and the status monitor, on the NFS port. */
        for (uint32_t v = 1; v <= 4; v++) {
            g_assert_cmpuint(getport(tcp, NLM_PROG, v, 6), ==, v == 2 ? 0 : port);
            g_assert_cmpuint(getport(tcp, NLM_PROG, v, 17), ==, v == 2 ? 0 : port);
        }
        g_assert_cmpuint(getport(tcp, NSM_PROG, 1, 6), ==, port);
        g_assert_cmpuint(getport(tcp, NSM_PROG, 1, 17), ==, port);
        /* Versions and programs we do not serve. */
        g_assert_cmpuint(getport(tcp, NR_NFS_PROGRAM, 4, 6), ==, 0);
        g_assert_cmpuint(getport(tcp, NR_MOUNT_PROGRAM, 1, 17), ==, 0);
        g_assert_cmpuint(getport(tcp, 100099, 1, 6), ==, 0);
    }
}

static void test_getaddr(void)
{
    unsigned port = tl_server_port(server);
    char *want = uaddr(port), *got;

    for (int tcp = 0; tcp < 2; tcp++) {
        for (uint32_t v = 3; v <= 4; v++) {
            got = getaddr(tcp, v, 3, NR_NFS_PROGRAM, 3, "tcp");
            g_assert_cmpstr(got, ==, want);
            g_free(got);
            got = getaddr(tcp, v, 3, NR_MOUNT_PROGRAM, 3, "udp");
            g_assert_cmpstr(got, ==, want);
            g_free(got);
            /* "" = the netid of the transport asked over. */
            got = getaddr(tcp, v, 3, NR_MOUNT_PROGRAM, 3, "");
            g_assert_cmpstr(got, ==, want);
            g_free(got);
            /* The server listens on 127.0.0.1: nothing over IPv6. */
            got = getaddr(tcp, v, 3, NR_NFS_PROGRAM, 3, "tcp6");
            g_assert_cmpstr(got, ==, "");
            g_free(got);
            got = getaddr(tcp, v, 3, NLM_PROG, 4, "tcp");
            g_assert_cmpstr(got, ==, want);
            g_free(got);
            got = getaddr(tcp, v, 3, NSM_PROG, 1, "udp");
            g_assert_cmpstr(got, ==, want);
            g_free(got);
        }
        /* v3 GETADDR takes any version (the client learns the versions from
         * PROG_MISMATCH); v4 GETADDR and GETVERSADDR want the one asked. */
        got = getaddr(tcp, 3, 3, NR_NFS_PROGRAM, 4, "tcp");
        g_assert_cmpstr(got, ==, want);
        g_free(got);
        got = getaddr(tcp, 4, 3, NR_NFS_PROGRAM, 4, "tcp");
        g_assert_cmpstr(got, ==, "");
        g_free(got);
        got = getaddr(tcp, 4, 9, NR_NFS_PROGRAM, 3, "tcp");
        g_assert_cmpstr(got, ==, want);
        g_free(got);
    }
    got = dump34();
    g_assert_nonnull(strstr(got, "100003:tcp "));
    g_assert_nonnull(strstr(got, "100005:udp "));
    g_assert_nonnull(strstr(got, "100000:tcp "));
    g_free(got);
    g_free(want);
}

static void test_dump_and_refusals(void)
{
    GByteArray *rec = g_byte_array_new(), *reply;
    nr_reply rep;
    unsigned found = 0;

    /* PMAP DUMP over UDP: refused (no amplification); over TCP: every
     * mapping, ours included. */
    nr_xdr_call(rec, next_xid(), PMAP_PROG, 2, 4, NULL);
    reply = pmap_call(false, rec, &rep);
    g_assert_cmpuint(rep.accept_stat, ==, NR_PROC_UNAVAIL);
    g_byte_array_unref(reply);
    reply = pmap_call(true, rec, &rep);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    for (size_t off = rep.body; nr_get_u32(reply, off) == 1; off += 20)
        if (nr_get_u32(reply, off + 4) == NR_NFS_PROGRAM &&
            nr_get_u32(reply, off + 16) == tl_server_port(server))
            found++;
    g_assert_cmpuint(found, ==, 2); /* tcp and udp */
    g_byte_array_unref(reply);

    /* SET from a stranger: false, and nothing changes. */
    g_byte_array_set_size(rec, 0);
    nr_xdr_call(rec, next_xid(), PMAP_PROG, 2, 1, NULL);
    nr_xdr_u32(rec, 100099);
    nr_xdr_u32(rec, 4);
    nr_xdr_u32(rec, 6);
    nr_xdr_u32(rec, 4045);
    reply = pmap_call(true, rec, &rep);
    g_assert_cmpuint(rep.accept_stat, ==, NR_SUCCESS);
    g_assert_cmpuint(nr_get_u32(reply, rep.body), ==, 0);
    g_byte_array_unref(reply);
    g_assert_cmpuint(getport(true, 100099, 4, 6), ==, 0);

    /* Version 5: PROG_MISMATCH 2..4; procedure 99: PROC_UNAVAIL; a
     * truncated GETPORT: GARBAGE_ARGS; another program: PROG_UNAVAIL. */
    g_byte_array_set_size(rec, 0);
    nr_xdr_call(rec, next_xid(), PMAP_PROG, 5, 0, NULL);
    reply = pmap_call(true, rec, &rep);
    g_assert_cmpuint(rep.accept_stat, ==, NR_PROG_MISMATCH);
    g_assert_cmpuint(rep.low, ==, 2);
    g_assert_cmpuint(rep.high, ==, 4);
    g_byte_array_unref(reply);
    g_byte_array_set_size(rec, 0);
    nr_xdr_call(rec, next_xid(), PMAP_PROG, 4, 99, NULL);
    reply = pmap_call(false, rec, &rep);
    g_assert_cmpuint(rep.accept_stat, ==, NR_PROC_UNAVAIL);
    g_byte_array_unref(reply);
    g_byte_array_set_size(rec, 0);
    nr_xdr_call(rec, next_xid(), PMAP_PROG, 2, 3, NULL);
    nr_xdr_u32(rec, NR_NFS_PROGRAM);
    reply = pmap_call(true, rec, &rep);
    g_assert_cmpuint(rep.accept_stat, ==, NR_GARBAGE_ARGS);
    g_byte_array_unref(reply);
    g_byte_array_set_size(rec, 0);
    nr_xdr_call(rec, next_xid(), NR_NFS_PROGRAM, 3, 0, NULL);
    reply = pmap_call(true, rec, &rep);
    g_assert_cmpuint(rep.accept_stat, ==, NR_PROG_UNAVAIL);
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    /* Still serving. */
    g_assert_cmpuint(getport(false, NR_NFS_PROGRAM, 3, 6), ==, tl_server_port(server));
}

/* One NULL call of (prog, vers) to port over TCP or UDP; the accept_stat
 * (and *low, *high of a PROG_MISMATCH). */
static uint32_t null_call(unsigned port, bool tcp, uint32_t prog, uint32_t vers, uint32_t *low,
                          uint32_t *high)
{
    GByteArray *rec = g_byte_array_new(), *reply;
    nr_reply rep;
    int fd = tcp ? nr_raw_connect(port) : nr_udp_connect(port);
    nr_cred root = {0};

    g_assert_cmpint(fd, >=, 0);
    nr_xdr_call(rec, next_xid(), prog, vers, 0, &root);
    if (tcp) {
        g_assert_cmpint(nr_raw_send(fd, rec->data, rec->len), ==, 0);
        reply = nr_raw_recv(fd, RECV_MS);
    } else {
        g_assert_cmpint(nr_udp_send(fd, rec->data, rec->len), ==, 0);
        reply = nr_udp_recv(fd, RECV_MS);
    }
    g_assert_nonnull(reply);
    g_assert_true(nr_reply_parse(reply, &rep));
    g_assert_cmpuint(rep.reply_stat, ==, NR_MSG_ACCEPTED);
    *low = rep.low;
    *high = rep.high;
    g_byte_array_unref(reply);
    g_byte_array_unref(rec);
    close(fd);
    return rep.accept_stat;
}

/* NLM (program 100021, versions 1, 3 and 4) and NSM (100024) answer on the
 * NFS port, over TCP and UDP; version 2 (which Linux's lockd does not
 * speak either) is PROG_MISMATCH 1..4. With [nlm] enable = false both are
 * a clean PROG_UNAVAIL. */
static void test_nlm_served(void)
{
    const char *const off[] = {"server.portmap=off", "nlm.enable=false", NULL};
    unsigned port = tl_server_port(server);
    uint32_t low, high;
    tl_server *plain;

    for (int tcp = 0; tcp < 2; tcp++) {
        for (uint32_t vers = 1; vers <= 4; vers++) {
            g_assert_cmpuint(null_call(port, tcp, NLM_PROG, vers, &low, &high), ==,
                             vers == 2 ? NR_PROG_MISMATCH : NR_SUCCESS);
            if (vers == 2) {
                g_assert_cmpuint(low, ==, 1);
                g_assert_cmpuint(high, ==, 4);
            }
        }
        g_assert_cmpuint(null_call(port, tcp, NSM_PROG, 1, &low, &high), ==, NR_SUCCESS);
    }
    plain = tl_server_start(off);
    for (int tcp = 0; tcp < 2; tcp++) {
        g_assert_cmpuint(null_call(tl_server_port(plain), tcp, NLM_PROG, 4, &low, &high), ==,
                         NR_PROG_UNAVAIL);
        g_assert_cmpuint(null_call(tl_server_port(plain), tcp, NSM_PROG, 1, &low, &high), ==,
                         NR_PROG_UNAVAIL);
    }
    tl_server_stop(plain);
}

/* With a system rpcbind running, pgnfsd registers there instead of
 * serving port 111 itself, and unregisters at exit. */
static void test_with_rpcbind(void)
{
    const char *rpcbind = "/usr/sbin/rpcbind";
    const char *const over[] = {"server.portmap=auto", "server.rpcbind=true", NULL};
    GPid pid;
    GError *err = NULL;
    char *dump;

    if (!g_file_test(rpcbind, G_FILE_TEST_IS_EXECUTABLE)) {
        g_test_skip("rpcbind is not installed (apt-get install rpcbind)");
        return;
    }
    tl_server_stop(server);
    server = NULL;
    char *argv[] = {(char *)rpcbind, "-f", "-w", NULL};
    g_assert_true(
        g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, &err));
    /* Wait until rpcbind answers. */
    for (int i = 0; i < 200; i++) {
        int fd = nr_raw_connect(PMAP_PORT);
        if (fd >= 0) {
            close(fd);
            break;
        }
        g_usleep(50 * 1000);
    }
    server = tl_server_start(over);
    unsigned port = tl_server_port(server);
    g_assert_cmpuint(getport(true, NR_NFS_PROGRAM, 3, 6), ==, port);
    g_assert_cmpuint(getport(false, NR_MOUNT_PROGRAM, 3, 17), ==, port);
    g_assert_cmpuint(getport(true, NLM_PROG, 4, 6), ==, port);
    g_assert_cmpuint(getport(false, NLM_PROG, 4, 17), ==, port);
    g_assert_cmpuint(getport(false, NSM_PROG, 1, 17), ==, port);
    /* It is the real rpcbind answering: it lists its local transports. */
    dump = dump34();
    g_assert_nonnull(strstr(dump, "100000:local "));
    g_free(dump);
    /* libnfs, given no ports, finds the server through that rpcbind. */
    struct nfs_context *nfs = nfs_init_context();
    struct nfsfh *fh = NULL;
    char back[16] = {0};
    g_assert_nonnull(nfs);
    g_assert_cmpint(nfs_set_version(nfs, 3), ==, 0);
    if (nfs_mount(nfs, "127.0.0.1", "/") != 0)
        g_error("mount through rpcbind failed: %s", nfs_get_error(nfs));
    g_assert_cmpint(nfs_creat(nfs, "/through-rpcbind", 0644, &fh), ==, 0);
    g_assert_cmpint(nfs_pwrite(nfs, fh, 0, 7, "rpcbind"), ==, 7);
    g_assert_cmpint(nfs_pread(nfs, fh, 0, sizeof back, back), ==, 7);
    g_assert_cmpstr(back, ==, "rpcbind");
    g_assert_cmpint(nfs_close(nfs, fh), ==, 0);
    nfs_destroy_context(nfs);
    tl_server_stop(server);
    server = NULL;
    g_assert_cmpuint(getport(true, NR_NFS_PROGRAM, 3, 6), ==, 0);
    g_assert_cmpuint(getport(true, NLM_PROG, 4, 6), ==, 0);
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    g_spawn_close_pid(pid);
}

int main(int argc, char **argv)
{
    /* Named here: test servers may default to neither. */
    const char *const over[] = {"server.portmap=auto", "server.rpcbind=true", NULL};
    int rc;

    if (!isolate())
        return SKIP_CODE;
    g_test_init(&argc, &argv, NULL);
    server = tl_server_start(over);
    g_test_add_func("/portmap/libnfs_no_ports", test_libnfs_no_ports);
    g_test_add_func("/portmap/null", test_null);
    g_test_add_func("/portmap/getport", test_getport);
    g_test_add_func("/portmap/getaddr", test_getaddr);
    g_test_add_func("/portmap/dump_and_refusals", test_dump_and_refusals);
    g_test_add_func("/portmap/nlm_served", test_nlm_served);
    g_test_add_func("/portmap/with_rpcbind", test_with_rpcbind);
    rc = g_test_run();
    if (server)
        tl_server_stop(server);
    return rc;
}
