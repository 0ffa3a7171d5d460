/*
 * srv_log.c -- logging for pgnfs: a GLib log writer that prints one
 * readable line per event on stderr, a level threshold from the
 * configuration, and a per-client rate limiter for lines about bad calls.
 *
 *   2026-11-22T10:00:00.123Z pgnfsd[4711] WARNING pgnfs: message
 *
 * Levels: GLib's ERROR and CRITICAL print as ERROR, WARNING as WARNING,
 * MESSAGE and INFO as INFO, DEBUG as DEBUG. The threshold names the lowest
 * level printed: "error", "warning", "info" (default) or "debug". Control
 * characters in messages (which may quote client input) print as '?', so
 * an event is always one line; the line goes out in one write(2).
 *
 * NOTES
 *   The threshold is process state (an atomic int), set at start-up; the
 *   writer is installed once per process (GLib allows no more).
 *
 *   Rate limiter: SRV_RL_SLOTS slots, each with its own mutex, picked by a
 *   hash of the client address (not the port). A slot counts lines in the
 *   current second for the address it holds; another address hashing to
 *   the same slot takes it over (the limit then errs on the side of
 *   logging). Lines refused are counted and reported with the next line
 *   allowed for that client.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "srv_int.h"

/* The lowest GLib level printed, as a mask of the levels printed. */
static atomic_int srv_log_mask = G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING |
                                 G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO;

static const char *srv_log_level_name(GLogLevelFlags level)
{
    if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
        return "ERROR";
    if (level & G_LOG_LEVEL_WARNING)
        return "WARNING";
    if (level & (G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO))
        return "INFO";
    return "DEBUG";
}

/* Append s to line, control characters replaced by '?'. */
static void srv_log_append_clean(GString *line, const char *s, gssize len)
{
    for (gssize i = 0; len < 0 ? s[i] != '\0' : i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        g_string_append_c(line, ch < 0x20 || ch == 0x7f ? '?' : (char)ch);
    }
}

static GLogWriterOutput srv_log_writer(GLogLevelFlags level, const GLogField *fields,
                                       gsize n_fields, gpointer user_data)
{
    const char *domain = NULL, *message = NULL;
    gssize message_len = -1;
    struct timespec ts;
    struct tm tm;
    char stamp[64];
    GString *line;

    (void)user_data;
    if (!(level & atomic_load(&srv_log_mask)) && !(level & G_LOG_FLAG_FATAL))
        return G_LOG_WRITER_HANDLED;
    for (gsize i = 0; i < n_fields; i++) {
        if (strcmp(fields[i].key, "GLIB_DOMAIN") == 0) {
            domain = fields[i].value;
        } else if (strcmp(fields[i].key, "MESSAGE") == 0) {
            message = fields[i].value;
            message_len = fields[i].length;
        }
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);

    line = g_string_sized_new(160);
    g_string_append_printf(line, "%s.%03ldZ %s[%ld] %s %s: ", stamp, ts.tv_nsec / 1000000L,
                           program_invocation_short_name, (long)getpid(), srv_log_level_name(level),
                           domain ? domain : "pgnfs");
    srv_log_append_clean(line, message ? message : "(no message)", message ? message_len : -1);
    g_string_append_c(line, '\n');

    const char *p = line->str;
    size_t left = line->len;
    while (left > 0) {
        ssize_t n = write(STDERR_FILENO, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        p += n;
        left -= (size_t)n;
    }
    g_string_free(line, TRUE);
    return G_LOG_WRITER_HANDLED;
}

static gsize srv_log_installed;

int srv_log_setup(const char *level)
{
    int mask = G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL;

    if (!level)
        return -1;
    if (strcmp(level, "error") == 0) {
        /* mask as it is */
    } else if (strcmp(level, "warning") == 0) {
        mask |= G_LOG_LEVEL_WARNING;
    } else if (strcmp(level, "info") == 0) {
        mask |= G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO;
    } else if (strcmp(level, "debug") == 0) {
        mask |= G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG;
    } else {
        return -1;
    }
    atomic_store(&srv_log_mask, mask);
    if (g_once_init_enter(&srv_log_installed)) {
        g_log_set_writer_func(srv_log_writer, NULL, NULL);
        g_once_init_leave(&srv_log_installed, 1);
    }
    return 0;
}

void srv_peer_string(const struct sockaddr *sa, socklen_t len, char *buf, size_t size)
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

/* ---- rate limiter -------------------------------------------------------- */

#define SRV_RL_SLOTS 64

typedef struct {
    pthread_mutex_t lock;
    unsigned char addr[16];
    int family;
    int64_t second; /* monotonic second of the current window */
    unsigned count; /* lines allowed in that second */
    unsigned suppressed;
} srv_rl_slot;

struct srv_ratelimit {
    unsigned per_second;
    srv_rl_slot slots[SRV_RL_SLOTS];
};

srv_ratelimit *srv_ratelimit_new(unsigned per_second)
{
    srv_ratelimit *rl = g_new0(srv_ratelimit, 1);

    rl->per_second = per_second ? per_second : 1;
    for (unsigned i = 0; i < SRV_RL_SLOTS; i++)
        pthread_mutex_init(&rl->slots[i].lock, NULL);
    return rl;
}

void srv_ratelimit_free(srv_ratelimit *rl)
{
    if (!rl)
        return;
    for (unsigned i = 0; i < SRV_RL_SLOTS; i++)
        pthread_mutex_destroy(&rl->slots[i].lock);
    g_free(rl);
}

bool srv_ratelimit_allow(srv_ratelimit *rl, const struct sockaddr *peer, unsigned *suppressed)
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

    srv_rl_slot *slot = &rl->slots[h % SRV_RL_SLOTS];
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
