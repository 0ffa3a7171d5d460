/*
 * emb_diag.c -- why the embedded cluster stopped or would not start, in
 * words a user can act on: the last lines of PostgreSQL's log (the file
 * written last, emb_log.c) and what to do about what they say.
 *
 *   last lines of /var/lib/pgnfs/pg/log/postgresql-20260101-120000.log:
 *     ... PANIC:  could not write to file "pg_wal/xlogtemp.123": No space
 *     left on device
 *   what to do: the file system holding /var/lib/pgnfs is full: free space
 *   on it (df -h /var/lib/pgnfs); pgnfs starts PostgreSQL again by itself
 */
#include "emb_int.h"

#include <stdio.h>
#include <string.h>

#include <glib.h>

/* Lines of the log shown. */
#define EMB_TAIL_LINES 10

/* Does text hold any of the NULL-terminated needles? */
static bool emb_says(const char *text, const char *const *needles)
{
    for (const char *const *n = needles; *n; n++)
        if (strstr(text, *n))
            return true;
    return false;
}

/* emb_advice -- see emb.h. */
char *emb_advice(const char *log_text, const char *data_dir, const char *user, bool serving)
{
    static const char *const full[] = {"No space left on device", "could not extend file",
                                       "Disk quota exceeded", NULL};
    static const char *const conf[] = {"contains errors", "unrecognized configuration parameter",
                                       "invalid value for parameter", NULL};
    static const char *const version[] = {"database files are incompatible", NULL};
    static const char *const old[] = {"pre-existing shared memory block", "lock file", NULL};
    static const char *const perms[] = {"Permission denied", NULL};
    static const char *const killed[] = {"unexpected postmaster exit", "was terminated by signal",
                                         NULL};
    static const char *const memory[] = {"could not create shared memory segment", "out of memory",
                                         "Cannot allocate memory", NULL};
    const char *then =
        serving ? "; pgnfs starts PostgreSQL again by itself" : ", then start pgnfs again";

    if (emb_says(log_text, full))
        return g_strdup_printf("the file system holding %s is full: free space on it (df -h %s)%s",
                               data_dir, data_dir, then);
    if (emb_says(log_text, conf))
        return g_strdup_printf("correct the setting the log names in %s/pg/postgresql.conf "
                               "(or postgresql.auto.conf)%s",
                               data_dir, then);
    if (emb_says(log_text, version))
        return g_strdup_printf("%s/pg was made by another PostgreSQL major version: point "
                               "[embedded] pg_bindir at that version's programs, or upgrade the "
                               "cluster with pg_upgrade%s",
                               data_dir, then);
    if (emb_says(log_text, old))
        return g_strdup_printf("processes of an earlier PostgreSQL of this cluster are still "
                               "running (ps -u %s): wait for them to end, or end them%s",
                               user, then);
    if (emb_says(log_text, perms))
        return g_strdup_printf("PostgreSQL runs as user %s, which may not use a file the log "
                               "names: give %s/pg back to it (chown -R %s %s/pg)%s",
                               user, data_dir, user, data_dir, then);
    if (emb_says(log_text, killed))
        return g_strdup_printf("PostgreSQL was killed (by a signal: someone's kill, or the "
                               "kernel's out-of-memory killer; see dmesg)%s",
                               then);
    if (emb_says(log_text, memory))
        return g_strdup_printf("the machine is short of memory: free some%s", then);
    return g_strdup_printf("read the newest file in %s/pg/log (and %s/pg/postgresql.log) for the "
                           "cause and remove it%s",
                           data_dir, data_dir, then);
}

/* emb_diagnose -- see emb_int.h. */
char *emb_diagnose(const emb_cluster *c, bool serving)
{
    char *path = NULL;
    char *tail = emb_log_tail(c, EMB_TAIL_LINES, &path);
    char *advice = emb_advice(tail, c->data_dir, c->db_user, serving);
    GString *s = g_string_new(NULL);

    if (*tail) {
        char **lines = g_strsplit(tail, "\n", -1);
        g_string_append_printf(s, "last lines of %s:\n", path);
        for (char **l = lines; *l; l++)
            g_string_append_printf(s, "  %s\n", *l);
        g_strfreev(lines);
    } else {
        g_string_append_printf(s, "%s is empty or cannot be read\n", path);
    }
    g_string_append_printf(s, "what to do: %s", advice);
    g_free(advice);
    g_free(tail);
    g_free(path);
    return g_string_free(s, FALSE);
}
