/*
 * dbfs_xf_linkadm.c -- transformation links for the admin tool
 * (dbfs_xform.h): make one (pgnfs xform link), list them (pgnfs xform
 * list --links, show, fsck).
 *
 * NOTES
 *   Each call runs on a session of its own (dbfs_admin_open), beside a
 *   running server or without one. A link is made in one transaction
 *   (pgnfs_xf_link, 27_xform_link.sql): its row, its name, its directory
 *   touched, its base marked. A server in `single` coherence that cached
 *   the directory's listing, or the name's absence, before the link was
 *   made serves those until the directory next changes through it.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <glib.h>

#include "dbfs_admin.h"
#include "dbfs_wire.h"
#include "dbfs_xf.h"
#include "dbfs_xform.h"

/* Why chain ch cannot present a link, or NULL when it can. */
static const char *dbfs_xf_link_refusal(const xf_chain *ch)
{
    xf_traits t;

    if (!xf_chain_guarded(ch))
        return "a link needs a chain (not none)";
    if (xf_chain_sql_count(ch) > 0)
        return "in-database stages cannot present a link (they run only where the database "
               "stores a chunk)";
    xf_chain_traits(ch, &t);
    if (t.nonce)
        return "a stage draws a fresh nonce per chunk (aes-256-gcm): the link's bytes would "
               "differ from read to read";
    return NULL;
}

/* dbfs_xform_link -- see dbfs_xform.h. */
int dbfs_xform_link(dbfs *fs, const char *base, const char *name, const char *chain, char *msg,
                    size_t msglen)
{
    dbfs_admin *a = NULL;
    const xf_chain *ch;
    xf_err xe = {{0}};
    xf_traits t;
    const char *why, *leaf;
    char *dir = NULL;
    uint64_t bino, dino;
    dbfs_type btype, dtype;
    PGresult *r = NULL;
    dbfs_params p;
    int rc;

    *msg = 0;
    rc = xf_chain_get(fs->xf, chain, &ch, &xe);
    if (rc != 0) {
        g_snprintf(msg, msglen, "chain \"%s\": %s", chain, xe.msg);
        return rc;
    }
    why = dbfs_xf_link_refusal(ch);
    if (why) {
        g_snprintf(msg, msglen, "chain \"%s\": %s", chain, why);
        return -EINVAL;
    }
    xf_chain_traits(ch, &t);
    leaf = strrchr(name, '/');
    if (!leaf || !leaf[1] || strcmp(leaf + 1, ".") == 0 || strcmp(leaf + 1, "..") == 0 ||
        strlen(leaf + 1) > 255) {
        g_snprintf(msg, msglen, "%s: give the link's absolute path, ending in its name", name);
        return -EINVAL;
    }
    dir = leaf == name ? g_strdup("/") : g_strndup(name, (gsize)(leaf - name));
    rc = dbfs_admin_open(fs->conninfo, &a);
    if (rc == 0) {
        rc = dbfs_admin_resolve(a, base, &bino, &btype);
        if (rc != 0)
            g_snprintf(msg, msglen, "%s: %s", base, g_strerror(-rc));
    }
    if (rc == 0 && btype != DBFS_REG) {
        g_snprintf(msg, msglen, "%s: a link presents a regular file", base);
        rc = -EINVAL;
    }
    if (rc == 0) {
        rc = dbfs_admin_resolve(a, dir, &dino, &dtype);
        if (rc == 0 && dtype != DBFS_DIR)
            rc = -ENOTDIR;
        if (rc != 0)
            g_snprintf(msg, msglen, "%s: %s", dir, g_strerror(-rc));
    }
    if (rc == 0) {
        const char *text = xf_chain_text(ch);

        dbfs_params_init(&p);
        dbfs_param_i8(&p, (int64_t)bino);
        dbfs_param_i8(&p, (int64_t)dino);
        dbfs_param_bytes(&p, leaf + 1, strlen(leaf + 1));
        dbfs_param_i8(&p, (int64_t)xf_chain_id(ch));
        dbfs_param_bytes(&p, text, strlen(text));
        dbfs_param_bool(&p, t.bare);
        dbfs_param_bool(&p, t.preserves);
        dbfs_param_i8(&p, dbfs_now_ns());
        rc = dbfs_exec(a->c, DBFS_ST_XF_LINK_MAKE, &p, &r);
        if (rc == -EEXIST)
            g_snprintf(msg, msglen, "%s: the name exists", name);
        else if (rc == -EINVAL)
            g_snprintf(msg, msglen, "%s: a link presents a regular file that is no link", base);
        else if (rc != 0)
            g_snprintf(msg, msglen, "%s: %s", name, g_strerror(-rc));
    }
    PQclear(r);
    dbfs_admin_close(a);
    g_free(dir);
    return rc;
}

/* The text of column col of row 0.. of r, or NULL. */
static const char *dbfs_xf_text(const PGresult *r, int row, int col, char **own)
{
    if (dbfs_get_null(r, row, col))
        return NULL;
    *own = g_strndup(PQgetvalue(r, row, col), (gsize)PQgetlength(r, row, col));
    return *own;
}

/* dbfs_xform_links -- see dbfs_xform.h. */
int dbfs_xform_links(dbfs *fs, int (*cb)(const dbfs_xform_link_info *l, void *arg), void *arg)
{
    dbfs_admin *a = NULL;
    PGresult *r = NULL;
    int rc = dbfs_admin_open(fs->conninfo, &a);

    if (rc == 0)
        rc = dbfs_exec(a->c, DBFS_ST_XF_LINKS, NULL, &r);
    for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
        char *s[3] = {NULL, NULL, NULL};
        dbfs_xform_link_info l = {
            .ino = (uint64_t)dbfs_get_i8(r, i, 0),
            .base = (uint64_t)dbfs_get_i8(r, i, 1),
            .chain = dbfs_xf_text(r, i, 2, &s[0]),
            .writable = PQgetvalue(r, i, 3)[0] != 0,
            .preserves = PQgetvalue(r, i, 4)[0] != 0,
            .path = dbfs_xf_text(r, i, 5, &s[1]),
            .base_path = dbfs_xf_text(r, i, 6, &s[2]),
        };

        rc = cb(&l, arg);
        for (int j = 0; j < 3; j++)
            g_free(s[j]);
    }
    PQclear(r);
    dbfs_admin_close(a);
    return rc;
}
