/*
 * pgnfs_du.c -- `pgnfs du` and `pgnfs find`: du(1)- and find(1)-style
 * questions answered by the database in one query each (dbfs_admin.c),
 * without walking the file system over NFS. They read only, so they work
 * beside a running server (pgnfs_database_peek).
 *
 *   pgnfs du [-s] [-d N] [-b | --apparent-size] [-h] [PATH...]
 *       per directory (children first), the stored bytes beneath it in
 *       KiB (rounded up), or with -b / --apparent-size the file sizes
 *       (bytes / KiB); -h prints K, M, G; -s only the PATHs themselves;
 *       -d N directories down to depth N. Hard links count once. Short
 *       options combine as du(1) takes them (-sh, -d1); help is --help.
 *
 *   pgnfs find [PATH...] [-name PATTERN] [-type f|d|l|b|c|p|s]
 *              [-size [+|-]N[c|k|M|G|b]] [-mindepth N] [-maxdepth N]
 *              [-uid N] [-gid N] [-ls | -print0]
 *       the entries that match every test, in path order; -ls as find's,
 *       setuid, setgid and sticky bits shown as s/S and t/T. -name takes a
 *       shell pattern (*, ?, [...], \ escapes) matched against the name;
 *       -size rounds the size up to units (default 512-byte blocks) as
 *       find does, + meaning more and - less.
 *
 * PATHs are absolute paths inside the file system (default "/").
 *
 * NOTES
 *   The database filters with LIKE (a pattern with [...] is narrowed to
 *   '_' there) and fnmatch(3) decides exactly here, so the answer is
 *   find's. Output is written as rows arrive; nothing is kept.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib.h>

#include "pgnfs_cmd.h"

/* Parse a whole unsigned decimal. */
static bool pgnfs_parse_uint(const char *s, uint64_t *out)
{
    char *end = NULL;

    if (!s || !*s || *s == '-' || *s == '+')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

/* "/a/b" normalized for printing: no trailing '/' except for "/". */
static char *pgnfs_norm_path(const char *p)
{
    GString *s = g_string_new("/");
    char **parts = g_strsplit(p, "/", -1);

    for (char **q = parts; *q; q++) {
        if (!**q || strcmp(*q, ".") == 0)
            continue;
        if (s->len > 1)
            g_string_append_c(s, '/');
        g_string_append(s, *q);
    }
    g_strfreev(parts);
    return g_string_free(s, FALSE);
}

/* Open the database and resolve path; prints why on failure. */
static int pgnfs_admin_start(const cfg *c, dbfs_admin **a, emb_cluster **cluster, char **conninfo)
{
    int rc;

    *a = NULL;
    *conninfo = pgnfs_database_peek(c, cluster);
    if (!*conninfo)
        return -1;
    rc = dbfs_admin_open(*conninfo, a);
    if (rc == -ENOENT) {
        g_printerr("pgnfs: the database holds no pgnfs file system (run `pgnfs mkfs`)\n");
        return -1;
    }
    if (rc != 0) {
        g_printerr("pgnfs: cannot open the database: %s\n", g_strerror(-rc));
        return -1;
    }
    return 0;
}

static int pgnfs_admin_finish(dbfs_admin *a, emb_cluster *cluster, char *conninfo, int rc)
{
    dbfs_admin_close(a);
    if (cluster && emb_stop(cluster) != 0 && rc == PGNFS_EXIT_OK)
        rc = PGNFS_EXIT_FAIL;
    g_free(conninfo);
    return rc;
}

/* Resolve path, printing why it cannot be; 0 or -1. */
static int pgnfs_resolve(dbfs_admin *a, const char *cmd, const char *path, uint64_t *ino,
                         dbfs_type *type)
{
    int rc = dbfs_admin_resolve(a, path, ino, type);

    if (rc == 0)
        return 0;
    if (rc == -EINVAL)
        g_printerr("pgnfs %s: %s: '..' is not allowed in a path\n", cmd, path);
    else
        g_printerr("pgnfs %s: %s: %s\n", cmd, path, g_strerror(-rc));
    return -1;
}

/* ---- du ------------------------------------------------------------------------- */

typedef struct {
    const char *start; /* normalized, as printed */
    bool bytes, apparent, human;
} pgnfs_du_opts;

static void pgnfs_human(char *buf, size_t size, uint64_t bytes)
{
    static const char units[] = "KMGTPE";
    double v = (double)bytes;
    int u = -1;

    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    if (u < 0)
        snprintf(buf, size, "%" G_GUINT64_FORMAT, bytes);
    else
        snprintf(buf, size, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

static int pgnfs_du_print(const dbfs_du_entry *e, void *arg)
{
    const pgnfs_du_opts *o = arg;
    uint64_t bytes = o->apparent ? e->size : e->used;
    char num[32];

    if (o->human)
        pgnfs_human(num, sizeof num, bytes);
    else if (o->bytes)
        snprintf(num, sizeof num, "%" G_GUINT64_FORMAT, bytes);
    else
        snprintf(num, sizeof num, "%" G_GUINT64_FORMAT, (bytes + 1023) / 1024);
    printf("%s\t%s%.*s\n", num, strcmp(o->start, "/") == 0 && e->path_len ? "" : o->start,
           (int)e->path_len, e->path);
    return ferror(stdout) ? -EIO : 0;
}

const char pgnfs_help_du[] =
    "usage: pgnfs du [-s] [-d N] [-b | --apparent-size] [-h] [PATH...] [options]\n"
    "\n"
    "Disk usage like du(1), answered by the database in one query (no NFS traffic;\n"
    "works beside a running server): for each directory under PATH (default /,\n"
    "paths inside the file system), children first, the bytes stored beneath it,\n"
    "in KiB rounded up. Hard links count once. Short options combine (-sh, -d1).\n"
    "\n"
    "  -s, --summarize         only each PATH itself\n"
    "  -d N, --max-depth=N     directories down to depth N below PATH\n"
    "  -b, --bytes             file sizes in bytes (--apparent-size in bytes)\n"
    "  --apparent-size         file sizes instead of the bytes stored\n"
    "  -h, --human-readable    K, M, G ... (help is --help only, as for du(1))\n"
    "\n"
    "examples:\n"
    "  pgnfs du -sh /\n"
    "  pgnfs du -d1 -h /home\n";

/* The value of du's -d / --max-depth into *depth; false after printing why. */
static bool pgnfs_du_depth(const char *opt, const char *value, uint64_t *depth)
{
    if (!value) {
        g_printerr("pgnfs du: %s needs a number (see pgnfs du --help)\n", opt);
        return false;
    }
    if (!pgnfs_parse_uint(value, depth)) {
        g_printerr("pgnfs du: %s '%s' is not a whole number (see pgnfs du --help)\n", opt, value);
        return false;
    }
    return true;
}

/*
 * du's arguments into *o, *depth and paths: long options (--max-depth N or
 * =N), short ones alone or combined as du(1) takes them (-sh, -d1, -shd
 * 1), "--" before paths that start with '-'. Returns 0, or -1 after
 * printing why.
 */
static int pgnfs_du_args(int argc, char **argv, pgnfs_du_opts *o, uint64_t *depth, GPtrArray *paths)
{
    bool only_paths = false;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;

        if (only_paths || arg[0] != '-' || !arg[1]) {
            g_ptr_array_add(paths, pgnfs_norm_path(arg));
        } else if (strcmp(arg, "--") == 0) {
            only_paths = true;
        } else if (strcmp(arg, "--summarize") == 0) {
            *depth = 0;
        } else if (strcmp(arg, "--max-depth") == 0) {
            i++;
            if (!pgnfs_du_depth(arg, next, depth))
                return -1;
        } else if (g_str_has_prefix(arg, "--max-depth=")) {
            if (!pgnfs_du_depth("--max-depth", arg + 12, depth))
                return -1;
        } else if (strcmp(arg, "--bytes") == 0) {
            o->bytes = o->apparent = true;
        } else if (strcmp(arg, "--apparent-size") == 0) {
            o->apparent = true;
        } else if (strcmp(arg, "--human-readable") == 0) {
            o->human = true;
        } else if (arg[1] == '-') {
            g_printerr("pgnfs du: unknown option '%s' (see pgnfs du --help)\n", arg);
            return -1;
        } else {
            for (const char *p = arg + 1; *p; p++) {
                if (*p == 's') {
                    *depth = 0;
                } else if (*p == 'b') {
                    o->bytes = o->apparent = true;
                } else if (*p == 'h') {
                    o->human = true;
                } else if (*p == 'd') {
                    /* -d1, or -d 1; the rest of the word is the number. */
                    if (!pgnfs_du_depth("-d", p[1] ? p + 1 : next, depth))
                        return -1;
                    if (!p[1])
                        i++;
                    break;
                } else {
                    g_printerr("pgnfs du: unknown option '-%c'%s%s (see pgnfs du --help)\n", *p,
                               arg[2] ? " in " : "", arg[2] ? arg : "");
                    return -1;
                }
            }
        }
    }
    return 0;
}

/* pgnfs du: see the header. */
int pgnfs_cmd_du(const cfg *c, int argc, char **argv)
{
    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
    pgnfs_du_opts o = {0};
    uint64_t depth = G_MAXUINT;
    dbfs_admin *a = NULL;
    emb_cluster *cluster = NULL;
    char *conninfo = NULL;
    int rc = PGNFS_EXIT_USAGE;

    if (pgnfs_du_args(argc, argv, &o, &depth, paths) != 0)
        goto out;
    if (paths->len == 0)
        g_ptr_array_add(paths, g_strdup("/"));
    rc = PGNFS_EXIT_FAIL;
    if (pgnfs_admin_start(c, &a, &cluster, &conninfo) != 0)
        goto out;
    rc = PGNFS_EXIT_OK;
    for (unsigned i = 0; i < paths->len; i++) {
        uint64_t ino;
        dbfs_type type;
        o.start = paths->pdata[i];
        if (pgnfs_resolve(a, "du", o.start, &ino, &type) != 0) {
            rc = PGNFS_EXIT_FAIL;
            continue;
        }
        int wrc = dbfs_admin_du(a, ino, (unsigned)MIN(depth, G_MAXUINT), pgnfs_du_print, &o);
        if (wrc != 0) {
            g_printerr("pgnfs du: %s: %s\n", o.start, g_strerror(-wrc));
            rc = PGNFS_EXIT_FAIL;
        }
    }
out:
    g_ptr_array_free(paths, TRUE);
    return a || cluster || conninfo ? pgnfs_admin_finish(a, cluster, conninfo, rc) : rc;
}

/* ---- find ------------------------------------------------------------------------- */

typedef struct {
    const char *start;
    const char *start_name; /* the start's own name, for -name */
    const char *pattern;    /* -name, for fnmatch; NULL = none */
    bool ls, print0;
} pgnfs_find_opts;

/*
 * The LIKE pattern (g_free) that admits at least what shell pattern pat
 * matches: * -> %, ? and [...] -> _, LIKE's own % _ \ escaped.
 */
static char *pgnfs_glob_to_like(const char *pat)
{
    GString *s = g_string_new(NULL);

    for (const char *p = pat; *p; p++) {
        if (*p == '*') {
            g_string_append_c(s, '%');
        } else if (*p == '?') {
            g_string_append_c(s, '_');
        } else if (*p == '[') {
            const char *q = p + 1;
            if (*q == '!' || *q == '^')
                q++;
            if (*q == ']')
                q++;
            q = strchr(q, ']');
            if (!q) {
                g_string_append(s, "[");
                continue;
            }
            g_string_append_c(s, '_');
            p = q;
        } else if (*p == '\\' && p[1]) {
            p++;
            if (*p == '%' || *p == '_' || *p == '\\')
                g_string_append_c(s, '\\');
            g_string_append_c(s, *p);
        } else {
            if (*p == '%' || *p == '_')
                g_string_append_c(s, '\\');
            g_string_append_c(s, *p);
        }
    }
    return g_string_free(s, FALSE);
}

static char pgnfs_type_char(dbfs_type t)
{
    switch (t) {
    case DBFS_REG:
        return '-';
    case DBFS_DIR:
        return 'd';
    case DBFS_BLK:
        return 'b';
    case DBFS_CHR:
        return 'c';
    case DBFS_LNK:
        return 'l';
    case DBFS_SOCK:
        return 's';
    case DBFS_FIFO:
        return 'p';
    }
    return '?';
}

/*
 * The mode as ls -l and find -ls show it ("drwxr-sr-x"): type letter,
 * then rwx for owner, group and others, where setuid, setgid and sticky
 * show in the x places as s/S (setuid, setgid) and t/T (sticky): lower
 * case when x is set too, upper case when it is not. out has 11 bytes.
 */
static void pgnfs_mode_string(dbfs_type type, uint32_t mode, char out[11])
{
    static const struct {
        uint32_t bit;  /* the special bit */
        int pos;       /* the x place it shows in */
        char set, unx; /* with x, without */
    } special[] = {{04000, 3, 's', 'S'}, {02000, 6, 's', 'S'}, {01000, 9, 't', 'T'}};

    out[0] = pgnfs_type_char(type);
    for (int i = 0; i < 9; i++)
        out[1 + i] = (mode >> (8 - i)) & 1 ? "rwxrwxrwx"[i] : '-';
    for (size_t k = 0; k < G_N_ELEMENTS(special); k++)
        if (mode & special[k].bit)
            out[special[k].pos] = out[special[k].pos] == 'x' ? special[k].set : special[k].unx;
    out[10] = '\0';
}

static int pgnfs_find_print(const dbfs_find_entry *e, void *arg)
{
    const pgnfs_find_opts *o = arg;
    const char *prefix = strcmp(o->start, "/") == 0 && e->path_len ? "" : o->start;

    if (o->pattern) {
        const char *slash = memrchr(e->path, '/', e->path_len);
        char *name = e->depth == 0
                         ? g_strdup(o->start_name)
                         : g_strndup(slash ? slash + 1 : e->path,
                                     e->path_len - (slash ? (size_t)(slash + 1 - e->path) : 0));
        bool match = fnmatch(o->pattern, name, 0) == 0;
        g_free(name);
        if (!match)
            return 0;
    }
    if (o->ls) {
        char mode[11], when[32];
        time_t t = (time_t)(e->mtime_ns / 1000000000);
        struct tm tm;
        pgnfs_mode_string(e->type, e->mode, mode);
        localtime_r(&t, &tm);
        strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
        printf("%10" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %s %3u %6u %6u %12" G_GUINT64_FORMAT
               " %s %s%.*s\n",
               e->ino, (e->used + 1023) / 1024, mode, e->nlink, e->uid, e->gid, e->size, when,
               prefix, (int)e->path_len, e->path);
    } else {
        printf("%s%.*s%c", prefix, (int)e->path_len, e->path, o->print0 ? '\0' : '\n');
    }
    return ferror(stdout) ? -EIO : 0;
}

/* -size [+-]N[ckMGb] into q. */
static bool pgnfs_parse_size(const char *s, dbfs_find_query *q)
{
    char *num;
    size_t n;
    uint64_t v;

    q->size_cmp = 0;
    if (*s == '+' || *s == '-')
        q->size_cmp = *s++ == '+' ? 1 : -1;
    n = strlen(s);
    q->size_unit = 512;
    if (n > 0 && strchr("ckMGb", s[n - 1])) {
        switch (s[n - 1]) {
        case 'c':
            q->size_unit = 1;
            break;
        case 'k':
            q->size_unit = 1024;
            break;
        case 'M':
            q->size_unit = 1024 * 1024;
            break;
        case 'G':
            q->size_unit = 1024 * 1024 * 1024;
            break;
        default:
            break;
        }
        n--;
    }
    num = g_strndup(s, n);
    bool ok = pgnfs_parse_uint(num, &v) && v <= INT64_MAX / 2;
    g_free(num);
    q->size_n = v;
    return ok;
}

const char pgnfs_help_find[] =
    "usage: pgnfs find [PATH...] [TESTS...] [-print | -print0 | -ls] [options]\n"
    "\n"
    "Find like find(1), answered by the database in one query (no NFS traffic;\n"
    "works beside a running server): the entries under each PATH (default /,\n"
    "paths inside the file system) that pass every test, in path order.\n"
    "\n"
    "tests:\n"
    "  -name PATTERN       the name matches a shell pattern (*, ?, [...], \\)\n"
    "  -type f|d|l|b|c|p|s the type\n"
    "  -size [+|-]N[c|k|M|G|b]\n"
    "                      size in units (default 512-byte blocks, rounded up);\n"
    "                      +N more than N, -N less\n"
    "  -mindepth N, -maxdepth N\n"
    "  -uid N, -gid N      owner, group\n"
    "actions:\n"
    "  -print              the path (the default)\n"
    "  -print0             the path and a NUL, for xargs -0\n"
    "  -ls                 inode, KiB, mode (setuid/setgid s/S, sticky t/T), links,\n"
    "                      uid, gid, size, time, path, as find -ls\n"
    "\n"
    "examples:\n"
    "  pgnfs find / -name '*.log' -size +10M\n"
    "  pgnfs find /home -type d -maxdepth 1 -ls\n";

/* pgnfs find: see the header. */
int pgnfs_cmd_find(const cfg *c, int argc, char **argv)
{
    static const struct {
        char letter;
        dbfs_type type;
    } types[] = {{'f', DBFS_REG}, {'d', DBFS_DIR},  {'l', DBFS_LNK}, {'b', DBFS_BLK},
                 {'c', DBFS_CHR}, {'p', DBFS_FIFO}, {'s', DBFS_SOCK}};
    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
    dbfs_find_query q = {.size_cmp = 2, .maxdepth = G_MAXUINT, .uid = -1, .gid = -1};
    pgnfs_find_opts o = {0};
    char *like = NULL;
    dbfs_admin *a = NULL;
    emb_cluster *cluster = NULL;
    char *conninfo = NULL;
    int rc = PGNFS_EXIT_USAGE;
    int i = 1;

    for (; i < argc && argv[i][0] != '-'; i++)
        g_ptr_array_add(paths, pgnfs_norm_path(argv[i]));
    for (; i < argc; i++) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t v;
        if (strcmp(arg, "-ls") == 0) {
            o.ls = true;
            continue;
        }
        if (strcmp(arg, "-print0") == 0) {
            o.print0 = true;
            continue;
        }
        if (strcmp(arg, "-print") == 0)
            continue;
        if (!val || val[0] == '\0') {
            g_printerr("pgnfs find: %s: unknown, or needs a value (tests: -name -type -size "
                       "-mindepth -maxdepth -uid -gid; actions: -print -print0 -ls; see pgnfs "
                       "find --help)\n",
                       arg);
            goto out;
        }
        i++;
        if (strcmp(arg, "-name") == 0) {
            o.pattern = val;
            g_free(like);
            like = pgnfs_glob_to_like(val);
            q.name_like = like;
        } else if (strcmp(arg, "-type") == 0) {
            q.type = -1;
            for (size_t t = 0; t < G_N_ELEMENTS(types); t++)
                if (val[0] == types[t].letter && val[1] == '\0')
                    q.type = types[t].type;
            if (q.type < 0) {
                g_printerr("pgnfs find: -type '%s': one of f d l b c p s (see pgnfs find --help)\n",
                           val);
                goto out;
            }
        } else if (strcmp(arg, "-size") == 0) {
            if (!pgnfs_parse_size(val, &q)) {
                g_printerr("pgnfs find: -size '%s': expected [+|-]N[c|k|M|G|b] (see pgnfs find "
                           "--help)\n",
                           val);
                goto out;
            }
        } else if (strcmp(arg, "-maxdepth") == 0 || strcmp(arg, "-mindepth") == 0 ||
                   strcmp(arg, "-uid") == 0 || strcmp(arg, "-gid") == 0) {
            if (!pgnfs_parse_uint(val, &v) || v > G_MAXUINT32) {
                g_printerr("pgnfs find: %s '%s' is not a whole number (see pgnfs find --help)\n",
                           arg, val);
                goto out;
            }
            if (arg[1] == 'm')
                *(arg[2] == 'a' ? &q.maxdepth : &q.mindepth) = (unsigned)v;
            else
                *(arg[1] == 'u' ? &q.uid : &q.gid) = (int64_t)v;
        } else {
            g_printerr("pgnfs find: unknown test '%s' (tests: -name -type -size -mindepth "
                       "-maxdepth -uid -gid; actions: -print -print0 -ls; see pgnfs find "
                       "--help)\n",
                       arg);
            goto out;
        }
    }
    if (paths->len == 0)
        g_ptr_array_add(paths, g_strdup("/"));
    rc = PGNFS_EXIT_FAIL;
    if (pgnfs_admin_start(c, &a, &cluster, &conninfo) != 0)
        goto out;
    rc = PGNFS_EXIT_OK;
    for (unsigned k = 0; k < paths->len; k++) {
        uint64_t ino;
        dbfs_type type;
        o.start = paths->pdata[k];
        if (pgnfs_resolve(a, "find", o.start, &ino, &type) != 0) {
            rc = PGNFS_EXIT_FAIL;
            continue;
        }
        const char *base = strrchr(o.start, '/');
        q.start_name = o.start_name = base && base[1] ? base + 1 : "/";
        int wrc = dbfs_admin_find(a, ino, &q, pgnfs_find_print, &o);
        if (wrc != 0) {
            g_printerr("pgnfs find: %s: %s\n", o.start, g_strerror(-wrc));
            rc = PGNFS_EXIT_FAIL;
        }
    }
out:
    g_free(like);
    g_ptr_array_free(paths, TRUE);
    return a || cluster || conninfo ? pgnfs_admin_finish(a, cluster, conninfo, rc) : rc;
}
