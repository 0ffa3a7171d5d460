/*
 * emb_log.c -- the embedded cluster's log, kept small: on a small disk an
 * unbounded log is one more way to fill it (and PostgreSQL must never be
 * the one to meet a full disk).
 *
 * PostgreSQL writes its log itself, through its log collector:
 *
 *   pg_dir/log/postgresql-YYYYMMDD-HHMMSS.log
 *                   logging_collector on, a new file (named by the time)
 *                   when the current one passes EMB_LOG_FILE_KB; nothing
 *                   is ever truncated. Names have one-second resolution:
 *                   a file started within the second of the one before
 *                   continues it, so a file holds EMB_LOG_FILE_KB or
 *                   what PostgreSQL logs in one second, whichever is more.
 *   pg_dir/postgresql.log
 *                   pg_ctl's -l file: what the postmaster says before the
 *                   collector starts (a configuration error, a cluster
 *                   that cannot start) and the collector's own trouble.
 *
 * PostgreSQL removes no old file, so pgnfs does (emb_log_prune): only the
 * EMB_LOG_KEEP newest collector files stay, and postgresql.log is cut to
 * its last EMB_LOG_STDERR_KEEP bytes at a start once it is over
 * EMB_LOG_STDERR_MAX. The supervisor prunes as soon as a new file
 * appears (inotify; every EMB_LOG_PRUNE_MS without it). So the log takes
 * about EMB_LOG_KEEP x EMB_LOG_FILE_KB (4 MiB) + EMB_LOG_STDERR_MAX at most
 * (more only while PostgreSQL logs over a MiB a second).
 *
 * What the log says last (emb_log_tail, for the supervisor's and the
 * start's diagnosis) is the end of whichever of the two was written last.
 *
 * NOTES
 *   Settings go on pg_ctl's command line with the WAL's (emb_tools.c), so
 *   a cluster made by an older pgnfs rotates too. The collector files
 *   belong to the cluster's user; pgnfs (that user, or root) removes them.
 *   Nothing here keeps state: every function is safe from any thread.
 */
#include "emb_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#define EMB_LOG_DIR    "log"
#define EMB_LOG_PREFIX "postgresql-"
#define EMB_LOG_SUFFIX ".log"
/* Bytes read from a log's end to find its last lines. */
#define EMB_LOG_TAIL_BYTES 8192

/* emb_log_options -- see emb_int.h. */
char *emb_log_options(void)
{
    return g_strdup_printf("-c logging_collector=on -c log_directory=" EMB_LOG_DIR
                           " -c log_filename=" EMB_LOG_PREFIX "%%Y%%m%%d-%%H%%M%%S" EMB_LOG_SUFFIX
                           " -c log_rotation_size=%ukB -c log_rotation_age=0"
                           " -c log_truncate_on_rotation=off",
                           EMB_LOG_FILE_KB);
}

/* emb_log_dir -- see emb_int.h. */
char *emb_log_dir(const emb_cluster *c)
{
    return g_build_filename(c->pg_dir, EMB_LOG_DIR, NULL);
}

/* Is name one of the collector's files? */
static bool emb_log_is_ours(const char *name)
{
    return g_str_has_prefix(name, EMB_LOG_PREFIX) && g_str_has_suffix(name, EMB_LOG_SUFFIX);
}

static gint emb_log_newest_first(gconstpointer a, gconstpointer b)
{
    return -strcmp(*(char *const *)a, *(char *const *)b);
}

/* The collector's files, newest first (their names sort by time); NULL
 * when there is no log directory. g_ptr_array_unref the result. */
static GPtrArray *emb_log_files(const emb_cluster *c)
{
    char *dir = emb_log_dir(c);
    GDir *d = g_dir_open(dir, 0, NULL);
    GPtrArray *files;
    const char *name;

    g_free(dir);
    if (!d)
        return NULL;
    files = g_ptr_array_new_with_free_func(g_free);
    while ((name = g_dir_read_name(d)) != NULL)
        if (emb_log_is_ours(name))
            g_ptr_array_add(files, g_strdup(name));
    g_dir_close(d);
    g_ptr_array_sort(files, emb_log_newest_first);
    return files;
}

/* Cut pg_ctl's log file to its last EMB_LOG_STDERR_KEEP bytes once it is
 * over EMB_LOG_STDERR_MAX (in place: it keeps its owner). Only when no
 * postmaster writes it. */
static void emb_log_cut_stderr(const emb_cluster *c)
{
    unsigned char *tail = NULL;
    struct stat st;
    int fd = open(c->log_file, O_RDWR | O_CLOEXEC);

    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && st.st_size > EMB_LOG_STDERR_MAX) {
        tail = g_malloc(EMB_LOG_STDERR_KEEP);
        ssize_t n = pread(fd, tail, EMB_LOG_STDERR_KEEP, st.st_size - EMB_LOG_STDERR_KEEP);
        if (n < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, tail, (size_t)n, 0) != n)
            g_warning("cannot shorten %s: %s", c->log_file, g_strerror(errno));
    }
    g_free(tail);
    close(fd);
}

/* emb_log_prune -- see emb_int.h. */
unsigned emb_log_prune(const emb_cluster *c, bool stopped)
{
    GPtrArray *files = emb_log_files(c);
    char *dir = emb_log_dir(c);
    unsigned removed = 0;

    if (stopped)
        emb_log_cut_stderr(c);
    for (guint i = EMB_LOG_KEEP; files && i < files->len; i++) {
        char *path = g_build_filename(dir, g_ptr_array_index(files, i), NULL);

        if (unlink(path) == 0)
            removed++;
        else if (errno != ENOENT)
            g_warning("cannot remove the old PostgreSQL log %s: %s", path, g_strerror(errno));
        g_free(path);
    }
    if (files)
        g_ptr_array_unref(files);
    g_free(dir);
    return removed;
}

/* The last n lines of the file at path ("" if unreadable; g_free). */
static char *emb_log_file_tail(const char *path, unsigned n)
{
    FILE *f = fopen(path, "r");
    char buf[EMB_LOG_TAIL_BYTES + 1];
    size_t len = 0;

    if (!f)
        return g_strdup("");
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size > EMB_LOG_TAIL_BYTES)
            fseek(f, size - EMB_LOG_TAIL_BYTES, SEEK_SET);
        else
            rewind(f);
        len = fread(buf, 1, EMB_LOG_TAIL_BYTES, f);
    }
    fclose(f);
    buf[len] = '\0';
    while (len > 0 && buf[len - 1] == '\n')
        buf[--len] = '\0';
    /* Back from the end over n line breaks. */
    char *start = buf + len;
    for (unsigned seen = 0; start > buf; start--) {
        if (start[-1] == '\n' && ++seen == n)
            break;
    }
    return g_strdup(start);
}

/* The modification time of path in ns (0 if it cannot be read). */
static gint64 emb_log_mtime(const char *path)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return 0;
    return (gint64)st.st_mtim.tv_sec * G_GINT64_CONSTANT(1000000000) + st.st_mtim.tv_nsec;
}

/* emb_log_tail -- see emb_int.h. */
char *emb_log_tail(const emb_cluster *c, unsigned n, char **path)
{
    GPtrArray *files = emb_log_files(c);
    char *newest = NULL;

    if (files && files->len > 0) {
        char *dir = emb_log_dir(c);
        newest = g_build_filename(dir, g_ptr_array_index(files, 0), NULL);
        g_free(dir);
    }
    if (files)
        g_ptr_array_unref(files);
    /* A start that failed wrote pg_ctl's file last; a cluster that ran
     * and then stopped, the collector's. */
    if (newest && emb_log_mtime(newest) >= emb_log_mtime(c->log_file)) {
        *path = newest;
    } else {
        g_free(newest);
        *path = g_strdup(c->log_file);
    }
    return emb_log_file_tail(*path, n);
}
