/*
 * srv_listen.h -- how the daemon describes a listening address to the
 * runtime (srv_rt_listen): where, which programs are served there, who is
 * admitted, how long an idle connection may stay.
 */
#ifndef PGNFS_SRV_LISTEN_H
#define PGNFS_SRV_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* How long a TCP connection may sit without a complete call (Linux nfsd:
 * 6 min), unless the listener says otherwise. */
#define SRV_IDLE_TIMEOUT_S 360

typedef struct {
    const char *name; /* "nfs", "portmapper": for logs */
    const char *addr; /* numeric IPv4 or IPv6 address; "::" takes IPv4 too */
    unsigned port;    /* 0: a free port (TCP and UDP get the same one) */
    bool udp;         /* serve UDP on the same port too */
    /* The program numbers served here (every registered version of each). */
    const uint32_t *progs;
    unsigned nprogs;
    /*
     * Does anything served here admit peer? Asked once per connection, by
     * a worker after the connection's first call (so it may block); a
     * connection from an address not admitted is closed after its replies.
     * Connections whose admission is not (yet) known are the first closed
     * when the connection table is full. NULL: everyone is admitted.
     */
    bool (*admit)(void *user, const struct sockaddr *peer, socklen_t len);
    void *admit_user;
    unsigned idle_timeout_s; /* 0: SRV_IDLE_TIMEOUT_S */
    size_t record_max;       /* largest call record or datagram; 0: SRV_RECORD_MAX */
} srv_listen;

#endif /* PGNFS_SRV_LISTEN_H */
