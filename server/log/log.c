/*
 * log.c -- the log line (log.h): a GLib log writer that prints one
 * readable line per event on stderr, and a level threshold from the
 * configuration.
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
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "log.h"

/* The lowest GLib level printed, as a mask of the levels printed. */
static atomic_int log_mask = G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING |
                             G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO;

static const char *log_level_name(GLogLevelFlags level)
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
static void log_append_clean(GString *line, const char *s, gssize len)
{
    for (gssize i = 0; len < 0 ? s[i] != '\0' : i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        g_string_append_c(line, ch < 0x20 || ch == 0x7f ? '?' : (char)ch);
    }
}

static GLogWriterOutput log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                                   gpointer user_data)
{
    const char *domain = NULL, *message = NULL;
    gssize message_len = -1;
    struct timespec ts;
    struct tm tm;
    char stamp[64];
    GString *line;

    (void)user_data;
    if (!(level & atomic_load(&log_mask)) && !(level & G_LOG_FLAG_FATAL))
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
                           program_invocation_short_name, (long)getpid(), log_level_name(level),
                           domain ? domain : "pgnfs");
    log_append_clean(line, message ? message : "(no message)", message ? message_len : -1);
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

static gsize log_installed;

int log_setup(const char *level)
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
    atomic_store(&log_mask, mask);
    if (g_once_init_enter(&log_installed)) {
        g_log_set_writer_func(log_writer, NULL, NULL);
        g_once_init_leave(&log_installed, 1);
    }
    return 0;
}
