/*
 * pgnfs_xform.c -- `pgnfs xform`: the transformation chains of files and
 * directories (dbfs_xform_set / dbfs_xform_show, xform/xf.h).
 *
 *   pgnfs xform set PATH CHAIN   a directory: the chain its new files and
 *                                directories take; a file: its chunks
 *                                rewritten under CHAIN in one transaction
 *   pgnfs xform apply PATH       every file beneath directory PATH
 *                                rewritten under its directory's chain,
 *                                one transaction per file (restartable)
 *   pgnfs xform show PATH...     the chain of each PATH ("none": none;
 *                                a link: "link to BASE through CHAIN")
 *   pgnfs xform link BASE NAME CHAIN  make NAME a transformation link
 *                                presenting file BASE through CHAIN
 *   pgnfs xform list             the transformations a chain may name,
 *                                one a line: built-ins, then the plug-ins
 *                                of [xform] plugin_dir
 *   pgnfs xform list --links     the transformation links, one a line:
 *                                NAME BASE CHAIN [read-only]
 *
 * CHAIN is a comma-separated list ("zstd,aes-256-gcm,sha256"); "none"
 * clears. Works beside a running server (pgnfs_database_peek): a chain
 * set on a directory applies to every file created after the command
 * returns.
 *
 * NOTES
 *   Exit status 0, 1 (refused or failed, the reason on stderr), 2 (usage).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "dbfs_xform.h"
#include "pgnfs_cmd.h"

const char pgnfs_help_xform[] =
    "usage: pgnfs xform set PATH CHAIN | apply PATH | show PATH... | link BASE NAME CHAIN\n"
    "                   | list [--links] [options]\n"
    "\n"
    "Transformation chains on file data: a guarded file's chunks are compressed,\n"
    "encrypted, checksummed (or passed through plug-ins) on their way to the\n"
    "database and back. A new file or directory takes its directory's chain.\n"
    "\n"
    "  set PATH CHAIN   a directory: the chain of the files and directories made\n"
    "                   in it from now on; a file: every chunk rewritten under\n"
    "                   CHAIN in one transaction (wholly old or new after a crash)\n"
    "  apply PATH       every file beneath directory PATH whose chain is not its\n"
    "                   directory's rewritten under it, one transaction per file\n"
    "                   (a line per file; run it again to go on after a crash)\n"
    "  show PATH...     the chain of each PATH (of a link: its base and chain)\n"
    "  link BASE NAME CHAIN\n"
    "                   make NAME a transformation link: a file whose bytes are\n"
    "                   BASE's through CHAIN, chunk by chunk (identity, increment,\n"
    "                   zstd, lz4, sha256, plug-ins); written through the inverse\n"
    "                   when every stage keeps lengths and needs no metadata\n"
    "                   (identity, increment), else read-only\n"
    "  list             the transformations a chain may name, one a line\n"
    "  list --links     the transformation links: NAME BASE CHAIN [read-only]\n"
    "\n"
    "CHAIN: comma-separated stages, e.g. zstd,aes-256-gcm,sha256 or zstd:level=9;\n"
    "none clears. Built-ins: identity, increment, zstd[:level=N], lz4[:accel=N],\n"
    "aes-256-gcm (needs [xform] key_file), sha256; any other name is a plug-in\n"
    "NAME.so in [xform] plugin_dir; sql:forward=F:inverse=G, last, names two\n"
    "PostgreSQL functions F(bytea), G(bytea) RETURNS bytea applied in the database\n"
    "(G(F(x)) = x). Works beside a running server.\n"
    "\n"
    "examples:\n"
    "  pgnfs xform set /projects zstd,aes-256-gcm\n"
    "  pgnfs xform show /projects /projects/report.txt\n"
    "  pgnfs xform link /data/log /data/log.shifted increment\n";

/* The built-in transformations (xform/xf_kind.c). */
static const char *const pgnfs_xform_builtins[] = {
    "identity", "increment", "zstd", "lz4", "aes-256-gcm", "sha256",
};

/* pgnfs xform list: built-ins, then NAME for every NAME.so in plugin_dir. */
static int pgnfs_xform_list(const cfg *c)
{
    GDir *d;
    const char *name;

    for (size_t i = 0; i < G_N_ELEMENTS(pgnfs_xform_builtins); i++)
        printf("%s\n", pgnfs_xform_builtins[i]);
    if (!c->xform_plugin_dir || !*c->xform_plugin_dir)
        return PGNFS_EXIT_OK;
    d = g_dir_open(c->xform_plugin_dir, 0, NULL);
    if (!d) {
        g_printerr("pgnfs xform: [xform] plugin_dir %s cannot be read\n", c->xform_plugin_dir);
        return PGNFS_EXIT_FAIL;
    }
    while ((name = g_dir_read_name(d)) != NULL)
        if (g_str_has_suffix(name, ".so") && strlen(name) > 3)
            printf("%.*s\n", (int)(strlen(name) - 3), name);
    g_dir_close(d);
    return PGNFS_EXIT_OK;
}

static void pgnfs_xform_line(const char *line, void *arg)
{
    (void)arg;
    printf("%s\n", line);
    fflush(stdout);
}

/* One line of pgnfs xform list --links. */
static int pgnfs_xform_link_line(const dbfs_xform_link_info *l, void *arg)
{
    (void)arg;
    printf("%s %s %s%s\n", l->path ? l->path : "(no name)",
           l->base_path ? l->base_path : "(base gone)", l->chain, l->writable ? "" : " read-only");
    return 0;
}

/* set ('s'), apply ('a'), show ('v'), link ('l') or list the links ('L')
 * on the file system (argv: the words after it). */
static int pgnfs_xform_on_fs(const cfg *c, char what, int argc, char **argv)
{
    emb_cluster *cluster = NULL;
    char *conninfo = pgnfs_database_peek(c, &cluster);
    bool conflict = false;
    int rc = PGNFS_EXIT_FAIL;
    dbfs *fs;

    if (!conninfo)
        return PGNFS_EXIT_FAIL;
    fs = pgnfs_attach(c, conninfo, false, &conflict);
    if (fs && what == 'a') {
        uint64_t done = 0;
        int err = dbfs_xform_apply(fs, argv[0], pgnfs_xform_line, NULL, &done);

        if (err != 0)
            g_printerr("pgnfs xform apply: %s: %s (%" G_GUINT64_FORMAT " files rewritten)\n",
                       argv[0], g_strerror(-err), done);
        else
            rc = PGNFS_EXIT_OK;
    } else if (fs && what == 'l') {
        char msg[512];
        int err = dbfs_xform_link(fs, argv[0], argv[1], argv[2], msg, sizeof msg);

        if (err != 0)
            g_printerr("pgnfs xform link: %s\n", msg);
        else
            rc = PGNFS_EXIT_OK;
    } else if (fs && what == 'L') {
        int err = dbfs_xform_links(fs, pgnfs_xform_link_line, NULL);

        if (err != 0)
            g_printerr("pgnfs xform list --links: %s\n", g_strerror(-err));
        else
            rc = PGNFS_EXIT_OK;
    } else if (fs && what == 's') {
        char msg[512];
        int err = dbfs_xform_set(fs, argv[0], argv[1], msg, sizeof msg);

        if (err != 0)
            g_printerr("pgnfs xform set: %s\n", msg);
        else
            rc = PGNFS_EXIT_OK;
    } else if (fs) {
        rc = PGNFS_EXIT_OK;
        for (int i = 0; i < argc; i++) {
            char *text = NULL;
            int err = dbfs_xform_show(fs, argv[i], &text);

            if (err != 0) {
                g_printerr("pgnfs xform show: %s: %s\n", argv[i], g_strerror(-err));
                rc = PGNFS_EXIT_FAIL;
            } else if (argc > 1) {
                printf("%s: %s\n", argv[i], text);
            } else {
                printf("%s\n", text);
            }
            g_free(text);
        }
    } else if (conflict) {
        rc = PGNFS_EXIT_USAGE;
    }
    if (fs)
        dbfs_close(fs);
    if (cluster && emb_stop(cluster) != 0)
        rc = PGNFS_EXIT_FAIL;
    g_free(conninfo);
    return rc;
}

/* pgnfs xform set|show|list: see the file header. */
int pgnfs_cmd_xform(const cfg *c, int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "list") == 0 && argc == 2)
        return pgnfs_xform_list(c);
    if (argc == 3 && strcmp(argv[1], "list") == 0 && strcmp(argv[2], "--links") == 0)
        return pgnfs_xform_on_fs(c, 'L', 0, argv + 3);
    if (argc == 5 && strcmp(argv[1], "link") == 0)
        return pgnfs_xform_on_fs(c, 'l', 3, argv + 2);
    if (argc == 4 && strcmp(argv[1], "set") == 0)
        return pgnfs_xform_on_fs(c, 's', 2, argv + 2);
    if (argc == 3 && strcmp(argv[1], "apply") == 0)
        return pgnfs_xform_on_fs(c, 'a', 1, argv + 2);
    if (argc >= 3 && strcmp(argv[1], "show") == 0)
        return pgnfs_xform_on_fs(c, 'v', argc - 2, argv + 2);
    g_printerr("pgnfs xform: expected set PATH CHAIN, apply PATH, show PATH..., "
               "link BASE NAME CHAIN or list [--links] (see pgnfs xform --help)\n");
    return PGNFS_EXIT_USAGE;
}
