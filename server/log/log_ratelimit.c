/*
 * log_ratelimit.c -- a per-client rate limiter for log lines a client can
 * provoke (bad calls, bad handles, refused connections): at most N lines
 * a second about one address (log.h).
 *
 * NOTES
 *   LOG_RL_SLOTS slots, each with its own mutex, picked by a hash of the
 *   client address (not the port). A slot counts lines in the current
 *   second for the address it holds; another address hashing to the same
 *   slot takes it over (the limit then errs on the side of logging). Lines
 *   refused are counted and reported with the next line allowed for that
 *   client.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "log.h"

#define LOG_RL_SLOTS 64

typedef struct {
    pthread_mutex_t lock;
    unsigned char addr[16];
    int family;
    int64_t second; /* monotonic second of the current window */
    unsigned count; /* lines allowed in that second */
    unsigned suppressed;
} log_rl_slot;

struct log_ratelimit {
    unsigned per_second;
    log_rl_slot slots[LOG_RL_SLOTS];
};

log_ratelimit *log_ratelimit_new(unsigned per_second)
{
    log_ratelimit *rl = g_new0(log_ratelimit, 1);

    rl->per_second = per_second ? per_second : 1;
    for (unsigned i = 0; i < LOG_RL_SLOTS; i++)
        pthread_mutex_init(&rl->slots[i].lock, NULL);
    return rl;
}

void log_ratelimit_free(log_ratelimit *rl)
{
    if (!rl)
        return;
    for (unsigned i = 0; i < LOG_RL_SLOTS; i++)
        pthread_mutex_destroy(&rl->slots[i].lock);
    g_free(rl);
}

bool log_ratelimit_allow(log_ratelimit *rl, const struct sockaddr *peer, unsigned *suppressed)
{
    unsigned char addr[16] = {0};
    int family = peer ? peer->sa_family : AF_UNSPEC;
    uint32_t h = 2166136261u;
    bool allow;

    *suppressed = 0;
    if (!rl)
        return true;
    if (family == AF_INET)
        memcpy(addr, &((const struct sockaddr_in *)peer)->sin_addr, 4);
    else if (family == AF_INET6)
        memcpy(addr, &((const struct sockaddr_in6 *)peer)->sin6_addr, 16);
    for (unsigned i = 0; i < sizeof addr; i++)
        h = (h ^ addr[i]) * 16777619u;

    log_rl_slot *slot = &rl->slots[h % LOG_RL_SLOTS];
    int64_t now = g_get_monotonic_time() / G_USEC_PER_SEC;

    pthread_mutex_lock(&slot->lock);
    if (slot->family != family || memcmp(slot->addr, addr, sizeof addr) != 0) {
        slot->family = family;
        memcpy(slot->addr, addr, sizeof addr);
        slot->second = now;
        slot->count = 0;
        slot->suppressed = 0;
    } else if (slot->second != now) {
        slot->second = now;
        slot->count = 0;
    }
    allow = slot->count < rl->per_second;
    if (allow) {
        slot->count++;
        *suppressed = slot->suppressed;
        slot->suppressed = 0;
    } else {
        slot->suppressed++;
    }
    pthread_mutex_unlock(&slot->lock);
    return allow;
}
