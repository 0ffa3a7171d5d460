/*
 * test_outgoing.c -- the runtime's outgoing RPC client (srv_client.h)
 * against a real pgnfs server: ports found through pgnfs's own built-in
 * portmapper (served on a free port, which the client is pointed at with
 * srv_client_opts.pmap_port), cached per transport and program; real
 * MOUNT and NFS results decoded with the generated XDR routines; the
 * RPC-level errors the runtime answers (PROG_MISMATCH, PROC_UNAVAIL,
 * AUTH_ERROR) as -EPROTO; an unregistered program as -ENOENT.
 *
 * NOTES
 *   No root needed: the portmapper listens on a free port, not 111.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "mount3.h"
#include "nfs3.h"
#include "srv_client.h"
#include "testlib.h"

#define LONG_MS         60000
#define NFS_PROG        100003u
#define MOUNT_PROG      100005u
#define UNKNOWN_PROG    0x20000099u
#define MOUNTPROC_MNT   1u
#define NFSPROC_GETATTR 1u

static tl_server *server;
static unsigned pmap_port;

static struct sockaddr_in host(unsigned port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return sa;
}

static srv_client *client(void)
{
    srv_client *c = srv_client_new(&(srv_client_opts){.pmap_port = pmap_port});

    g_assert_nonnull(c);
    return c;
}

/* A NULL call of (prog, vers) to sa. */
static srv_client_call null_call(const struct sockaddr_in *sa, bool tcp, uint32_t prog,
                                 uint32_t vers)
{
    return (srv_client_call){.addr = (const struct sockaddr *)sa,
                             .addrlen = sizeof *sa,
                             .tcp = tcp,
                             .prog = prog,
                             .vers = vers,
                             .proc = 0,
                             .timeout_ms = LONG_MS};
}

/* NFS and MOUNT NULL with port 0, over TCP and UDP: one lookup each. */
static void test_null_through_portmap(void)
{
    srv_client *c = client();
    struct sockaddr_in sa = host(0);
    srv_client_stats st;

    for (int round = 0; round < 3; round++) {
        for (int tcp = 0; tcp < 2; tcp++) {
            srv_client_call call = null_call(&sa, tcp, NFS_PROG, 3);
            g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, 0);
            call = null_call(&sa, tcp, MOUNT_PROG, 3);
            g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, 0);
        }
    }
    srv_client_stats_get(c, &st);
    g_assert_cmpuint(st.pmap_lookups, ==, 4);
    g_assert_cmpuint(st.replies, ==, 4 + 12);
    srv_client_free(c);
}

/* A program the portmapper does not know: -ENOENT. */
static void test_unknown_program(void)
{
    srv_client *c = client();
    struct sockaddr_in sa = host(0);

    for (int tcp = 0; tcp < 2; tcp++) {
        srv_client_call call = null_call(&sa, tcp, UNKNOWN_PROG, 1);
        g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, -ENOENT);
    }
    srv_client_free(c);
}

/* MNT "/" then GETATTR of the root it returns, with AUTH_SYS: real
 * results, decoded by the generated routines, owned by the caller. */
static void test_mount_and_getattr(void)
{
    srv_client *c = client();
    struct sockaddr_in sa = host(0);
    dirpath path = {.dirpath_len = 1, .dirpath_val = "/"};
    mountres3 mnt;
    GETATTR3res attr;

    for (int tcp = 0; tcp < 2; tcp++) {
        srv_client_call call = {.addr = (struct sockaddr *)&sa,
                                .addrlen = sizeof sa,
                                .tcp = tcp,
                                .prog = MOUNT_PROG,
                                .vers = 3,
                                .proc = MOUNTPROC_MNT,
                                .args_xdr = (xdrproc_t)xdr_dirpath,
                                .args = &path,
                                .res_xdr = (xdrproc_t)xdr_mountres3,
                                .res_size = sizeof mnt,
                                .timeout_ms = LONG_MS,
                                .machine = "outgoing-test",
                                .uid = 0,
                                .gid = 0};
        g_assert_cmpint(srv_client_call_sync(c, &call, &mnt), ==, 0);
        g_assert_cmpint(mnt.fhs_status, ==, MNT3_OK);
        fhandle3 *fh = &mnt.mountres3_u.mountinfo.fhandle;
        g_assert_cmpuint(fh->fhandle3_len, >, 0);

        GETATTR3args ga = {
            .object = {.data = {.data_len = fh->fhandle3_len, .data_val = fh->fhandle3_val}}};
        call.prog = NFS_PROG;
        call.proc = NFSPROC_GETATTR;
        call.args_xdr = (xdrproc_t)xdr_GETATTR3args;
        call.args = &ga;
        call.res_xdr = (xdrproc_t)xdr_GETATTR3res;
        call.res_size = sizeof attr;
        g_assert_cmpint(srv_client_call_sync(c, &call, &attr), ==, 0);
        g_assert_cmpint(attr.status, ==, NFS3_OK);
        g_assert_cmpint(attr.GETATTR3res_u.resok.obj_attributes.type, ==, NF3DIR);
        xdr_free((xdrproc_t)xdr_GETATTR3res, (char *)&attr);

        /* The same without a credential: AUTH_ERROR (too weak) is -EPROTO. */
        call.machine = NULL;
        g_assert_cmpint(srv_client_call_sync(c, &call, &attr), ==, -EPROTO);
        xdr_free((xdrproc_t)xdr_mountres3, (char *)&mnt);
    }
    srv_client_free(c);
}

/* A version not served (PROG_MISMATCH) and a procedure not served
 * (PROC_UNAVAIL), on the NFS port named directly: -EPROTO. */
static void test_rpc_errors(void)
{
    srv_client *c = client();
    struct sockaddr_in sa = host(tl_server_port(server));

    for (int tcp = 0; tcp < 2; tcp++) {
        srv_client_call call = null_call(&sa, tcp, NFS_PROG, 2);
        g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, -EPROTO);
        call = null_call(&sa, tcp, NFS_PROG, 3);
        call.proc = 99;
        call.machine = "outgoing-test";
        g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, -EPROTO);
        call.proc = 0;
        g_assert_cmpint(srv_client_call_sync(c, &call, NULL), ==, 0);
    }
    srv_client_free(c);
}

int main(int argc, char **argv)
{
    int rc;

    g_test_init(&argc, &argv, NULL);
    pmap_port = tl_free_port();
    char *port_set = g_strdup_printf("server.portmap_port=%u", pmap_port);
    const char *const over[] = {"server.portmap=on", port_set, NULL};
    server = tl_server_start(over);
    g_test_add_func("/outgoing/null_through_portmap", test_null_through_portmap);
    g_test_add_func("/outgoing/unknown_program", test_unknown_program);
    g_test_add_func("/outgoing/mount_and_getattr", test_mount_and_getattr);
    g_test_add_func("/outgoing/rpc_errors", test_rpc_errors);
    rc = g_test_run();
    tl_server_stop(server);
    g_free(port_set);
    return rc;
}
