/*
 * log_peer.c -- socket addresses as text for log lines (log.h):
 * "1.2.3.4:800", "[::1]:800".
 *
 * NOTES
 *   No state; writes only into the caller's buffer.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

#include "log.h"

void log_peer_string(const struct sockaddr *sa, socklen_t len, char *buf, size_t size)
{
    char host[INET6_ADDRSTRLEN];

    if (sa && sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        snprintf(buf, size, "%s:%u", host, (unsigned)ntohs(in->sin_port));
    } else if (sa && sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        snprintf(buf, size, "[%s]:%u", host, (unsigned)ntohs(in6->sin6_port));
    } else {
        snprintf(buf, size, "?");
    }
}
