/*
 * pgnfs_locks.c -- `pgnfs locks`: the file locks NFS clients hold and wait
 * for, from the database in one query (dbfs_admin_locks), every server
 * of the file system included. It only reads, so it works beside a
 * running server (pgnfs_database_peek), as du and find do.
 *
 *   pgnfs locks
 *
 * One line per lock, blocked request or share reservation, by file and
 * start, as space-separated key=value words (in this order; a program
 * may rely on the keys, not on their order):
 *
 *   state=granted|old|waiting|granting|share
 *   type=read|write            (locks; shares: access=r|w|rw deny=none|r|w|rw)
 *   start=N end=N|eof len=N    bytes start .. end inclusive; len 0 = to the end
 *   fileid=N path=/a/b         the NFS fileid; a path from the root ("?" if none)
 *   host=NAME svid=N owner=OH  the client (its caller_name), process, owner handle
 *   server=NAME since=TIME     the server it came through, when (ISO 8601, local)
 *
 * "old" is a lock from before its server's restart, still held until its
 * owner reclaims it or the grace period ends; "granting" a request another
 * server granted whose own server has not yet called its client back.
 * Bytes outside printable ASCII, spaces, '=' and '\' in names are written
 * \xNN. The last line, starting with '#', counts what was listed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <glib.h>

#include "dbfs_locks.h"
#include "pgnfs_cmd.h"

const char pgnfs_help_locks[] =
    "usage: pgnfs locks [options]\n"
    "\n"
    "The file locks NFS clients hold and wait for (NLM, the fcntl, flock and lockf\n"
    "locks of a plain mount), answered by the database in one query: every server\n"
    "of the file system included; works beside a running server.\n"
    "\n"
    "One line per lock, as key=value words:\n"
    "  state=granted|old|waiting|granting|share\n"
    "        old: held from before its server restarted, not reclaimed yet\n"
    "        granting: granted by another server, its own has not called back yet\n"
    "  type=read|write start=N end=N|eof len=N (0: to the end of the file)\n"
    "  fileid=N path=/a/b host=CLIENT svid=N owner=HANDLE server=NAME since=TIME\n"
    "Share reservations (DOS SHARE) show access= and deny= instead of the range.\n"
    "The last line, starting with '#', counts them.\n"
    "\n"
    "example:\n"
    "  pgnfs locks --data /var/lib/pgnfs\n";

typedef struct {
    unsigned long held, old, waiting, shares;
} pgnfs_locks_count;

/* Bytes as a word: printable ASCII but space, '=' and '\'; the rest \xNN. */
static void pgnfs_locks_word(GString *out, const char *key, const void *p, size_t len)
{
    const unsigned char *b = p;

    g_string_append_printf(out, " %s=", key);
    if (len == 0)
        g_string_append_c(out, '-');
    for (size_t i = 0; i < len; i++) {
        if (b[i] > ' ' && b[i] < 0x7f && b[i] != '=' && b[i] != '\\')
            g_string_append_c(out, (char)b[i]);
        else
            g_string_append_printf(out, "\\x%02x", b[i]);
    }
}

static const char *pgnfs_locks_bits(unsigned bits)
{
    static const char *const names[] = {"none", "r", "w", "rw"};

    return names[bits & 3];
}

static void pgnfs_locks_since(GString *out, int64_t us)
{
    time_t t = (time_t)(us / G_USEC_PER_SEC);
    struct tm tm;
    char buf[64];

    if (us == 0 || !localtime_r(&t, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm))
        return;
    g_string_append_printf(out, " since=%s", buf);
}

static int pgnfs_locks_print(const dbfs_lock_entry *e, void *arg)
{
    pgnfs_locks_count *n = arg;
    GString *line = g_string_new(NULL);
    bool share = strcmp(e->state, "share") == 0;

    g_string_append_printf(line, "state=%s", e->state);
    if (share) {
        g_string_append_printf(line, " access=%s deny=%s", pgnfs_locks_bits(e->access),
                               pgnfs_locks_bits(e->deny));
        n->shares++;
    } else {
        g_string_append_printf(line, " type=%s start=%" G_GUINT64_FORMAT,
                               e->excl ? "write" : "read", e->start);
        if (e->end == DBFS_LOCK_EOF)
            g_string_append(line, " end=eof len=0");
        else
            g_string_append_printf(line, " end=%" G_GUINT64_FORMAT " len=%" G_GUINT64_FORMAT,
                                   e->end - 1, e->end - e->start);
        if (strcmp(e->state, "granted") == 0)
            n->held++;
        else if (strcmp(e->state, "old") == 0)
            n->old++;
        else
            n->waiting++;
    }
    g_string_append_printf(line, " fileid=%" G_GUINT64_FORMAT, e->ino);
    if (e->path)
        pgnfs_locks_word(line, "path", e->path, e->path_len);
    else
        g_string_append(line, " path=?");
    pgnfs_locks_word(line, "host", e->host, e->host_len);
    if (e->svid != DBFS_LOCK_NO_SVID)
        g_string_append_printf(line, " svid=%" G_GINT64_FORMAT, e->svid);
    pgnfs_locks_word(line, "owner", e->oh, e->oh_len);
    pgnfs_locks_word(line, "server", e->server, strlen(e->server));
    pgnfs_locks_since(line, e->since_us);
    printf("%s\n", line->str);
    g_string_free(line, TRUE);
    return 0;
}

/* pgnfs locks -- see the top of this file. */
int pgnfs_cmd_locks(const cfg *c, int argc, char **argv)
{
    pgnfs_locks_count n = {0};
    emb_cluster *cluster = NULL;
    dbfs_admin *a = NULL;
    char *conninfo;
    int rc = PGNFS_EXIT_FAIL;

    if (argc > 1) {
        g_printerr("pgnfs locks: unexpected argument '%s' (see pgnfs locks --help)\n", argv[1]);
        return PGNFS_EXIT_USAGE;
    }
    conninfo = pgnfs_database_peek(c, &cluster);
    if (!conninfo)
        return PGNFS_EXIT_FAIL;
    int err = dbfs_admin_open(conninfo, &a);
    if (err == -ENOENT)
        g_printerr("pgnfs: the database holds no pgnfs file system (run `pgnfs mkfs`)\n");
    else if (err != 0)
        g_printerr("pgnfs: cannot open the database: %s\n", g_strerror(-err));
    if (err == 0) {
        err = dbfs_admin_locks(a, pgnfs_locks_print, &n);
        if (err != 0)
            g_printerr("pgnfs locks: %s\n", g_strerror(-err));
        else
            rc = PGNFS_EXIT_OK;
    }
    if (rc == PGNFS_EXIT_OK)
        printf("# %lu held, %lu held from before a restart, %lu waiting, %lu share "
               "reservations\n",
               n.held, n.old, n.waiting, n.shares);
    dbfs_admin_close(a);
    if (cluster && emb_stop(cluster) != 0)
        rc = PGNFS_EXIT_FAIL;
    g_free(conninfo);
    return rc;
}
