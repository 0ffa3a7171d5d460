/*
 * srv_rpcbind.c -- registration of NFS v3 and MOUNT v3 with a portmapper
 * (rpcbind) on 127.0.0.1:111, so that clients that ask it (mount.nfs
 * without port=/mountport=, libnfs without nfsport=) find our port.
 *
 * We speak PORTMAP version 2 (RFC 1833 section 3) over TCP ourselves:
 * every step has a short deadline (SRV_PMAP_TIMEOUT_MS), so a missing or
 * stuck portmapper costs at most a second or two at start and exit and
 * never hangs the server (libtirpc's pmap_set waits up to a minute). The
 * calls are SET/UNSET/GETPORT with AUTH_NONE; rpcbind accepts SET and
 * UNSET from the loopback address.
 *
 *   register:   NULL (is anyone there?) -- no answer: log, carry on
 *               for NFS and MOUNT: GETPORT tcp -- registered to another
 *               port: leave it (another server owns it), log; else SET
 *               tcp (and udp)
 *   unregister: for what we set: GETPORT tcp still ours? then UNSET
 *               (PORTMAP UNSET drops every protocol of the version)
 *
 * NOTES
 *   No state besides the srv_rpcbind the caller owns; one short-lived
 *   socket per call.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "srv_int.h"

#define SRV_PMAP_PROG       100000u
#define SRV_PMAP_VERS       2u
#define SRV_PMAP_NULL       0u
#define SRV_PMAP_SET        1u
#define SRV_PMAP_UNSET      2u
#define SRV_PMAP_GETPORT    3u
#define SRV_PMAP_PORT       111
#define SRV_PMAP_TIMEOUT_MS 1000
#define SRV_NFS_PROG        100003u
#define SRV_MOUNT_PROG      100005u
#define SRV_IPPROTO_TCP     6u
#define SRV_IPPROTO_UDP     17u

/* Milliseconds left until deadline (monotonic µs), at least 0. */
static int srv_pmap_left(int64_t deadline)
{
    int64_t left = (deadline - g_get_monotonic_time()) / 1000;

    return left > 0 ? (int)left : 0;
}

/* Wait for events on fd until deadline. Returns 0 or -ETIMEDOUT/-errno. */
static int srv_pmap_wait(int fd, short events, int64_t deadline)
{
    struct pollfd p = {.fd = fd, .events = events};

    for (;;) {
        int n = poll(&p, 1, srv_pmap_left(deadline));
        if (n > 0)
            return 0;
        if (n == 0)
            return -ETIMEDOUT;
        if (errno != EINTR)
            return -errno;
    }
}

/*
 * One PORTMAP call: proc with the mapping (prog, vers, prot, port) as
 * arguments (none for NULL); *result gets the one-word result (bool or
 * port). Returns 0, or a negative errno (-ETIMEDOUT, -ECONNREFUSED,
 * -EPROTO for a reply that is not a successful one).
 */
static int srv_pmap_call(uint32_t proc, const uint32_t mapping[4], uint32_t *result, int timeout_ms)
{
    int64_t deadline = g_get_monotonic_time() + (int64_t)timeout_ms * 1000;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(SRV_PMAP_PORT)};
    uint32_t xid = g_random_int(), call[20], n = 0;
    unsigned char reply[512];
    srv_record rec;
    int fd, rc;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    srv_record_init(&rec, sizeof reply);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (errno != EINPROGRESS) {
            rc = -errno;
            goto out;
        }
        int err = 0;
        socklen_t el = sizeof err;
        if ((rc = srv_pmap_wait(fd, POLLOUT, deadline)) != 0)
            goto out;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
        if (err != 0) {
            rc = -err;
            goto out;
        }
    }

    /* mark, xid, CALL, rpcvers 2, prog, vers, proc, AUTH_NONE cred and verf */
    call[n++] = 0;
    call[n++] = htonl(xid);
    call[n++] = htonl(CALL);
    call[n++] = htonl(2);
    call[n++] = htonl(SRV_PMAP_PROG);
    call[n++] = htonl(SRV_PMAP_VERS);
    call[n++] = htonl(proc);
    for (int i = 0; i < 4; i++)
        call[n++] = 0;
    for (int i = 0; mapping && i < 4; i++)
        call[n++] = htonl(mapping[i]);
    call[0] = htonl(SRV_RECORD_LAST | (uint32_t)(4 * (n - 1)));

    size_t off = 0, total = 4 * (size_t)n;
    while (off < total) {
        ssize_t k = send(fd, (char *)call + off, total - off, MSG_NOSIGNAL);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
            if ((rc = srv_pmap_wait(fd, POLLOUT, deadline)) != 0)
                goto out;
            continue;
        }
        if (k < 0) {
            rc = -errno;
            goto out;
        }
        off += (size_t)k;
    }

    /* Read one reply record. */
    for (;;) {
        unsigned char buf[256];
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
            if ((rc = srv_pmap_wait(fd, POLLIN, deadline)) != 0)
                goto out;
            continue;
        }
        if (k <= 0) {
            rc = k == 0 ? -ECONNRESET : -errno;
            goto out;
        }
        size_t used, pos = 0;
        int r = 0;
        while (pos < (size_t)k && r == 0) {
            r = srv_record_feed(&rec, buf + pos, (size_t)k - pos, &used);
            pos += used;
        }
        if (r < 0) {
            rc = -EPROTO;
            goto out;
        }
        if (r == SRV_RECORD_COMPLETE)
            break;
    }

    size_t len;
    unsigned char *r = srv_record_take(&rec, &len);
    uint32_t w[8] = {0};
    memcpy(w, r, len < sizeof w ? len : sizeof w);
    g_free(r);
    /* xid, REPLY, MSG_ACCEPTED, verf flavor, verf len (0), SUCCESS, result */
    if (len < 24 || ntohl(w[0]) != xid || ntohl(w[1]) != REPLY || ntohl(w[2]) != MSG_ACCEPTED ||
        ntohl(w[4]) != 0 || ntohl(w[5]) != SUCCESS || (proc != SRV_PMAP_NULL && len < 28)) {
        rc = -EPROTO;
        goto out;
    }
    if (result)
        *result = proc == SRV_PMAP_NULL ? 0 : ntohl(w[6]);
    rc = 0;
out:
    srv_record_clear(&rec);
    close(fd);
    return rc;
}

/* Register (prog, 3) for tcp and udp at port; true if anything was set. */
static bool srv_pmap_register(const char *name, uint32_t prog, unsigned port, bool udp)
{
    uint32_t m[4] = {prog, 3, SRV_IPPROTO_TCP, port}, res = 0;
    int rc;

    rc = srv_pmap_call(SRV_PMAP_GETPORT, m, &res, SRV_PMAP_TIMEOUT_MS);
    if (rc == 0 && res != 0 && res != port) {
        g_warning("rpcbind: %s v3 is registered at port %u by another server: leaving it (clients "
                  "asking rpcbind reach that server; give them port=%u)",
                  name, res, port);
        return false;
    }
    if (rc == 0 && res == port) {
        /* A leftover of an earlier run of ours (or of a crash): replace it. */
        srv_pmap_call(SRV_PMAP_UNSET, m, &res, SRV_PMAP_TIMEOUT_MS);
    }
    bool any = false;
    for (int i = 0; i < (udp ? 2 : 1); i++) {
        m[2] = i == 0 ? SRV_IPPROTO_TCP : SRV_IPPROTO_UDP;
        rc = srv_pmap_call(SRV_PMAP_SET, m, &res, SRV_PMAP_TIMEOUT_MS);
        if (rc != 0 || res == 0)
            g_warning("rpcbind: registering %s v3 %s port %u failed: %s", name,
                      i == 0 ? "tcp" : "udp", port, rc != 0 ? g_strerror(-rc) : "refused");
        else
            any = true;
    }
    return any;
}

void srv_rpcbind_register(srv_rpcbind *r, unsigned port, bool udp)
{
    int rc;

    memset(r, 0, sizeof *r);
    r->port = port;
    r->udp = udp;
    rc = srv_pmap_call(SRV_PMAP_NULL, NULL, NULL, SRV_PMAP_TIMEOUT_MS / 2);
    if (rc != 0) {
        g_message("rpcbind: no portmapper answers on 127.0.0.1:111 (%s): not registering; "
                  "clients need port=%u,mountport=%u (libnfs: ?nfsport=%u&mountport=%u)",
                  g_strerror(-rc), port, port, port, port);
        return;
    }
    r->nfs_set = srv_pmap_register("nfs", SRV_NFS_PROG, port, udp);
    r->mount_set = srv_pmap_register("mount", SRV_MOUNT_PROG, port, udp);
    if (r->nfs_set || r->mount_set)
        g_message("rpcbind: registered%s%s v3 on %s port %u", r->nfs_set ? " nfs" : "",
                  r->mount_set ? " mount" : "", udp ? "tcp and udp" : "tcp", port);
}

bool srv_rpcbind_probe(void)
{
    return srv_pmap_call(SRV_PMAP_NULL, NULL, NULL, SRV_PMAP_TIMEOUT_MS / 2) == 0;
}

void srv_rpcbind_unregister(srv_rpcbind *r)
{
    const struct {
        const char *name;
        uint32_t prog;
        bool set;
    } progs[] = {{"nfs", SRV_NFS_PROG, r->nfs_set}, {"mount", SRV_MOUNT_PROG, r->mount_set}};

    for (size_t i = 0; i < G_N_ELEMENTS(progs); i++) {
        uint32_t m[4] = {progs[i].prog, 3, SRV_IPPROTO_TCP, r->port}, res = 0;
        if (!progs[i].set)
            continue;
        int rc = srv_pmap_call(SRV_PMAP_GETPORT, m, &res, SRV_PMAP_TIMEOUT_MS);
        if (rc == 0 && res != r->port) {
            g_message("rpcbind: %s v3 now belongs to port %u: leaving it", progs[i].name, res);
            continue;
        }
        rc = srv_pmap_call(SRV_PMAP_UNSET, m, &res, SRV_PMAP_TIMEOUT_MS);
        if (rc != 0 || res == 0)
            g_warning("rpcbind: unregistering %s v3 failed: %s", progs[i].name,
                      rc != 0 ? g_strerror(-rc) : "refused");
        else
            g_message("rpcbind: unregistered %s v3", progs[i].name);
    }
    r->nfs_set = r->mount_set = false;
}
