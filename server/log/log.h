/*
 * log.h -- logging for pgnfs, the daemon and the admin tool alike: the
 * line format and level threshold (log_setup), socket addresses as text
 * for log lines (log_peer_string), and a per-client rate limiter for the
 * lines a client can provoke (log_ratelimit).
 *
 * NOTES
 *   Lines are written through GLib (g_message, g_warning, ...); log_setup
 *   installs the writer that prints them. Nothing here knows RPC or NFS:
 *   the RPC runtime, the programs and the admin tool all sit above it.
 *   Thread safety: every function may be called from any thread.
 */
#ifndef PGNFS_LOG_H
#define PGNFS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/*
 * log_setup -- route GLib logging to stderr, one line per event
 * ("2026-11-22T10:00:00.123Z pgnfsd[pid] LEVEL domain: message"), and drop
 * messages below level: "error", "warning", "info" or "debug". May be
 * called again to change the level. Returns 0, or -1 for an unknown level
 * (nothing changes).
 */
int log_setup(const char *level);

/* Room for "[ffff:...:ffff%iface]:65535" and "1.2.3.4:65535". */
#define LOG_PEER_STRLEN 80

/*
 * log_peer_string -- "1.2.3.4:800" or "[::1]:800" for a socket address
 * into buf (size bytes). Cannot fail (unknown families print "?").
 */
void log_peer_string(const struct sockaddr *sa, socklen_t len, char *buf, size_t size);

typedef struct log_ratelimit log_ratelimit;

/*
 * log_ratelimit_new -- a limiter that lets at most per_second log lines
 * about one client address (ports ignored) through per second. Cannot
 * fail; free it with log_ratelimit_free.
 */
log_ratelimit *log_ratelimit_new(unsigned per_second);
/* log_ratelimit_free -- free rl (NULL is fine). */
void log_ratelimit_free(log_ratelimit *rl);

/*
 * log_ratelimit_allow -- may a line about peer be logged now? When true,
 * *suppressed is the number of lines refused for this client since the
 * last one allowed (to mention in the line). rl NULL always allows.
 */
bool log_ratelimit_allow(log_ratelimit *rl, const struct sockaddr *peer, unsigned *suppressed);

#endif /* PGNFS_LOG_H */
