/*
 * pmap_rpcbind.c -- registration of the programs the runtime serves (NFS
 * v3 and MOUNT v3) with a system portmapper (rpcbind) on 127.0.0.1:111,
 * so that clients that ask it (mount.nfs without port=/mountport=, libnfs
 * without nfsport=) find our port (pmap_table.h).
 *
 * We speak PORTMAP version 2 (RFC 1833 section 3) over TCP ourselves
 * (calls encoded with libtirpc's xdr_callmsg, replies decoded with
 * xdr_replymsg into our own buffers): every step has a short deadline
 * (PMAP_TIMEOUT_MS), so a missing or stuck portmapper costs at most a
 * second or two at start and exit and never hangs the server (libtirpc's
 * pmap_set waits up to a minute). The calls are SET/UNSET/GETPORT with
 * AUTH_NONE; rpcbind accepts SET and UNSET from the loopback address.
 *
 *   register:   NULL (is anyone there?) -- no answer: log, carry on
 *               for each program version: GETPORT tcp -- registered to another
 *               port: leave it (another server owns it), log; else SET
 *               tcp (and udp)
 *   unregister: for what we set: GETPORT tcp still ours? then UNSET
 *               (PORTMAP UNSET drops every protocol of the version)
 *
 * NOTES
 *   No state besides the pmap_rpcbind the caller owns; one short-lived
 *   socket per call.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include <glib.h>

#include "pmap_int.h"
#include "srv_record.h"

#define PMAP_TIMEOUT_MS 1000
#define SRV_US_PER_MS   1000
/* Largest reply record taken from a portmapper. */
#define PMAP_REPLY_MAX 512

/* Milliseconds left until deadline (monotonic µs), at least 0. */
static int pmap_left(int64_t deadline)
{
    int64_t left = (deadline - g_get_monotonic_time()) / SRV_US_PER_MS;

    return left > 0 ? (int)left : 0;
}

/* Wait for events on fd until deadline. Returns 0 or -ETIMEDOUT/-errno. */
static int pmap_wait(int fd, short events, int64_t deadline)
{
    struct pollfd p = {.fd = fd, .events = events};

    for (;;) {
        int n = poll(&p, 1, pmap_left(deadline));
        if (n > 0)
            return 0;
        if (n == 0)
            return -ETIMEDOUT;
        if (errno != EINTR)
            return -errno;
    }
}

/* A TCP connection to 127.0.0.1:111 made before deadline; fd or -errno. */
static int pmap_connect(int64_t deadline)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(PGNFS_PMAP_PORT)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), err = 0, rc;
    socklen_t el = sizeof err;

    if (fd < 0)
        return -errno;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
        return fd;
    rc = errno == EINPROGRESS ? pmap_wait(fd, POLLOUT, deadline) : -errno;
    if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0)
        return fd;
    close(fd);
    return rc ? rc : -err;
}

/* Send all of data before deadline. Returns 0 or -errno. */
static int pmap_send(int fd, const void *data, size_t len, int64_t deadline)
{
    size_t off = 0;
    int rc;

    while (off < len) {
        ssize_t k = send(fd, (const char *)data + off, len - off, MSG_NOSIGNAL);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
            if ((rc = pmap_wait(fd, POLLOUT, deadline)) != 0)
                return rc;
            continue;
        }
        if (k < 0)
            return -errno;
        off += (size_t)k;
    }
    return 0;
}

/* Read one whole record into rec before deadline. Returns 0 or -errno. */
static int pmap_recv(int fd, srv_record *rec, int64_t deadline)
{
    unsigned char buf[256];
    int rc;

    for (;;) {
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
            if ((rc = pmap_wait(fd, POLLIN, deadline)) != 0)
                return rc;
            continue;
        }
        if (k <= 0)
            return k == 0 ? -ECONNRESET : -errno;
        size_t used, pos = 0;
        int r = 0;
        while (pos < (size_t)k && r == 0) {
            r = srv_record_feed(rec, buf + pos, (size_t)k - pos, &used);
            pos += used;
        }
        if (r < 0)
            return -EPROTO;
        if (r == SRV_RECORD_COMPLETE)
            return 0;
    }
}

/* The call record (mark included) of PORTMAP proc with args m (NULL: none)
 * into out (size bytes), with libtirpc's xdr_callmsg; its length, or 0. */
static size_t pmap_encode(uint32_t xid, uint32_t proc, const uint32_t m[4], unsigned char *out,
                          size_t size)
{
    struct rpc_msg call = {.rm_xid = xid, .rm_direction = CALL};
    pgnfs_pmap_mapping map = {0};
    XDR x;

    call.rm_call.cb_rpcvers = RPC_MSG_VERSION;
    call.rm_call.cb_prog = PGNFS_PMAP_PROG;
    call.rm_call.cb_vers = PGNFS_PMAP_VERS;
    call.rm_call.cb_proc = proc;
    call.rm_call.cb_cred = _null_auth;
    call.rm_call.cb_verf = _null_auth;
    if (m)
        map = (pgnfs_pmap_mapping){m[0], m[1], m[2], m[3]};
    xdrmem_create(&x, (char *)out + 4, (u_int)(size - 4), XDR_ENCODE);
    bool ok = xdr_callmsg(&x, &call) && (!m || xdr_pgnfs_pmap_mapping(&x, &map));
    size_t len = ok ? xdr_getpos(&x) : 0;
    xdr_destroy(&x);
    if (!len)
        return 0;
    srv_record_mark(out, len);
    return len + 4;
}

/* The one-word result of a successful reply to xid, with libtirpc's
 * xdr_replymsg. Returns 0, or -EPROTO for anything else. */
static int pmap_decode(const unsigned char *rec, size_t len, uint32_t xid, uint32_t proc,
                       uint32_t *result)
{
    char verf[MAX_AUTH_BYTES];
    u_int res = 0;
    struct rpc_msg reply;
    XDR x;

    memset(&reply, 0, sizeof reply);
    reply.acpted_rply.ar_verf.oa_base = verf; /* no allocation */
    reply.acpted_rply.ar_results.where = (caddr_t)&res;
    reply.acpted_rply.ar_results.proc =
        proc == PGNFS_PMAPPROC_NULL ? (xdrproc_t)(void (*)(void))xdr_void : (xdrproc_t)xdr_u_int;
    xdrmem_create(&x, (char *)rec, (u_int)len, XDR_DECODE);
    bool ok = xdr_replymsg(&x, &reply);
    xdr_destroy(&x);
    if (!ok || reply.rm_xid != xid || reply.rm_reply.rp_stat != MSG_ACCEPTED ||
        reply.acpted_rply.ar_stat != SUCCESS)
        return -EPROTO;
    if (result)
        *result = res;
    return 0;
}

/*
 * One PORTMAP call: proc with the mapping (prog, vers, prot, port) as
 * arguments (none for NULL); *result gets the one-word result (bool or
 * port; 0 for NULL). Returns 0, or a negative errno (-ETIMEDOUT,
 * -ECONNREFUSED, -EPROTO for a reply that is not a successful one).
 */
static int pmap_call(uint32_t proc, const uint32_t mapping[4], uint32_t *result, int timeout_ms)
{
    int64_t deadline = g_get_monotonic_time() + (int64_t)timeout_ms * SRV_US_PER_MS;
    uint32_t xid = g_random_int();
    unsigned char call[128];
    size_t len = pmap_encode(xid, proc, mapping, call, sizeof call), rlen;
    srv_record rec;
    int fd, rc;

    if (len == 0)
        return -EPROTO;
    if ((fd = pmap_connect(deadline)) < 0)
        return fd;
    srv_record_init(&rec, PMAP_REPLY_MAX);
    rc = pmap_send(fd, call, len, deadline);
    if (rc == 0)
        rc = pmap_recv(fd, &rec, deadline);
    if (rc == 0) {
        unsigned char *r = srv_record_take(&rec, &rlen);
        rc = pmap_decode(r, rlen, xid, proc, result);
        g_free(r);
    }
    srv_record_clear(&rec);
    close(fd);
    return rc;
}

/* Register (prog, vers) for tcp (and udp) at port; true if anything was set. */
static bool pmap_register(const char *name, uint32_t prog, uint32_t vers, unsigned port, bool udp)
{
    uint32_t m[4] = {prog, vers, PGNFS_PMAP_IPPROTO_TCP, port}, res = 0;
    int rc;

    rc = pmap_call(PGNFS_PMAPPROC_GETPORT, m, &res, PMAP_TIMEOUT_MS);
    if (rc == 0 && res != 0 && res != port) {
        g_warning("rpcbind: %s is registered at port %u by another server: leaving it (clients "
                  "asking rpcbind reach that server; give them port=%u)",
                  name, res, port);
        return false;
    }
    if (rc == 0 && res == port) {
        /* A leftover of an earlier run of ours (or of a crash): replace it. */
        pmap_call(PGNFS_PMAPPROC_UNSET, m, &res, PMAP_TIMEOUT_MS);
    }
    bool any = false;
    for (int i = 0; i < (udp ? 2 : 1); i++) {
        m[2] = i == 0 ? PGNFS_PMAP_IPPROTO_TCP : PGNFS_PMAP_IPPROTO_UDP;
        rc = pmap_call(PGNFS_PMAPPROC_SET, m, &res, PMAP_TIMEOUT_MS);
        if (rc != 0 || res == 0)
            g_warning("rpcbind: registering %s %s port %u failed: %s", name, i == 0 ? "tcp" : "udp",
                      port, rc != 0 ? g_strerror(-rc) : "refused");
        else
            any = true;
    }
    return any;
}

/* Collect a served program version (srv_rt_mappings): one entry per
 * program version and port, udp set when UDP is served too. */
static void pmap_rpcbind_collect(void *user, const srv_program *p, bool tcp, unsigned port)
{
    pmap_rpcbind *r = user;

    for (unsigned i = 0; i < r->n; i++) {
        if (r->progs[i].prog == p->prog && r->progs[i].vers == p->vers &&
            r->progs[i].port == port) {
            r->progs[i].udp |= !tcp;
            return;
        }
    }
    if (r->n < PMAP_MAPS_MAX)
        r->progs[r->n++] = (pmap_rpcbind_prog){p->name, p->prog, p->vers, port, !tcp, false};
}

void pmap_rpcbind_register(pmap_rpcbind *r, const srv_rt *rt)
{
    GString *done = g_string_new(NULL);
    int rc;

    memset(r, 0, sizeof *r);
    srv_rt_mappings(rt, pmap_rpcbind_collect, r);
    rc = pmap_call(PGNFS_PMAPPROC_NULL, NULL, NULL, PMAP_TIMEOUT_MS / 2);
    if (rc != 0) {
        unsigned port = r->n ? r->progs[0].port : 0;
        g_message("rpcbind: no portmapper answers on 127.0.0.1:111 (%s): not registering; "
                  "clients need port=%u,mountport=%u (libnfs: ?nfsport=%u&mountport=%u)",
                  g_strerror(-rc), port, port, port, port);
        r->n = 0;
        g_string_free(done, TRUE);
        return;
    }
    for (unsigned i = 0; i < r->n; i++) {
        r->progs[i].set = pmap_register(r->progs[i].name, r->progs[i].prog, r->progs[i].vers,
                                        r->progs[i].port, r->progs[i].udp);
        if (r->progs[i].set)
            g_string_append_printf(done, " %s (%s port %u)", r->progs[i].name,
                                   r->progs[i].udp ? "tcp and udp" : "tcp", r->progs[i].port);
    }
    if (done->len)
        g_message("rpcbind: registered%s", done->str);
    g_string_free(done, TRUE);
}

bool pmap_rpcbind_probe(void)
{
    return pmap_call(PGNFS_PMAPPROC_NULL, NULL, NULL, PMAP_TIMEOUT_MS / 2) == 0;
}

void pmap_rpcbind_unregister(pmap_rpcbind *r)
{
    for (unsigned i = 0; i < r->n; i++) {
        uint32_t m[4] = {r->progs[i].prog, r->progs[i].vers, PGNFS_PMAP_IPPROTO_TCP,
                         r->progs[i].port},
                 res = 0;
        if (!r->progs[i].set)
            continue;
        r->progs[i].set = false;
        int rc = pmap_call(PGNFS_PMAPPROC_GETPORT, m, &res, PMAP_TIMEOUT_MS);
        if (rc == 0 && res != r->progs[i].port) {
            g_message("rpcbind: %s now belongs to port %u: leaving it", r->progs[i].name, res);
            continue;
        }
        rc = pmap_call(PGNFS_PMAPPROC_UNSET, m, &res, PMAP_TIMEOUT_MS);
        if (rc != 0 || res == 0)
            g_warning("rpcbind: unregistering %s failed: %s", r->progs[i].name,
                      rc != 0 ? g_strerror(-rc) : "refused");
        else
            g_message("rpcbind: unregistered %s", r->progs[i].name);
    }
}
