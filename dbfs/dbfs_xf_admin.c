/*
 * dbfs_xf_admin.c -- transformation chains for the admin tool (dbfs.h):
 * set and show the chain of a file or directory (pgnfs xform), and check
 * that every guarded chunk decodes (pgnfs fsck).
 *
 * NOTES
 *   Each call runs on a session of its own (dbfs_admin_open), beside a
 *   running server or without one. Setting the chain of a file that holds
 *   data rewrites all of its chunks in one transaction that holds the
 *   file's row lock (pgnfs_xf_rechain): after a crash the file is wholly
 *   in its old chain or wholly in its new one. A running server learns a
 *   file's new chain at its next write (the database refuses the old
 *   path) or read (the chain comes with the chunks); its buffer cache
 *   holds plain bytes, which do not change.
 *
 *   Memory: every buffer is freed before return; texts returned are the
 *   caller's (g_free).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_admin.h"
#include "dbfs_codec.h"
#include "dbfs_xf.h"
#include "dbfs_xform.h"

/* One file's rewrite (the transaction's body and its state). */
typedef struct {
    dbfs *fs;
    uint64_t ino;
    const xf_chain *to;
    xf_work *w;
    char *msg;
    size_t msglen;
} dbfs_xf_rechain_op;

/* The plain bytes of stored value v (vlen) of chunk k under chain id into
 * plain (room: a chunk). Returns 0 and *plen, or -EIO (msg says why). */
static int dbfs_xf_plain_of(dbfs_xf_rechain_op *op, dbfs_conn *c, uint64_t id, uint64_t k,
                            const char *v, size_t vlen, char *tmp, char *plain, size_t *plen)
{
    const uint32_t cs = op->fs->info.chunk_size;
    const xf_chain *from;
    xf_err xe = {{0}};
    int rc;

    if (op->fs->info.encoding != DBFS_ENC_BINARY) {
        int64_t dl = dbfs_codec_decode(op->fs->info.encoding, v, vlen, tmp, DBFS_XF_STORED_MAX(cs));

        if (dl < 0)
            return -EIO;
        v = tmp;
        vlen = (size_t)dl;
    }
    if (id == 0) {
        if (vlen > cs)
            return -EIO;
        memcpy(plain, v, vlen);
        *plen = vlen;
        return 0;
    }
    rc = dbfs_xf_chain_on(op->fs, c, id, &from);
    if (rc != 0)
        return -EIO;
    rc = xf_decode(from, op->w, &(xf_chunk){op->ino, k, 0}, v, vlen, plain, cs, plen, &xe);
    if (rc != 0) {
        g_snprintf(op->msg, op->msglen, "%s", xe.msg);
        return -EIO;
    }
    return 0;
}

/* The transaction of a rewrite (dbfs_txn's body). */
static int dbfs_xf_rechain_txn(dbfs_conn *c, void *arg)
{
    dbfs_xf_rechain_op *op = arg;
    const uint32_t cs = op->fs->info.chunk_size;
    const uint64_t to_id = xf_chain_id(op->to);
    const char *text = xf_chain_text(op->to);
    PGresult *lk = NULL, *r = NULL, *done = NULL;
    char *tmp = NULL, *plain = NULL, *enc = NULL, **vals = NULL;
    unsigned char(*be)[8] = NULL, *ac = NULL, *av = NULL;
    const void **pv = NULL, **pc = NULL;
    size_t *lens = NULL, *clens = NULL, aclen = 0, avlen = 0;
    uint64_t from;
    dbfs_params p;
    int n = 0, rc;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)op->ino);
    rc = dbfs_exec(c, DBFS_ST_XF_LOCK, &p, &lk);
    if (rc != 0)
        return rc;
    if (PQntuples(lk) != 1) {
        rc = -ENOENT;
        goto out;
    }
    from = (uint64_t)dbfs_get_i8(lk, 0, 0);
    rc = dbfs_exec(c, DBFS_ST_XF_CHUNKS, &p, &r);
    if (rc != 0)
        goto out;
    n = PQntuples(r);
    tmp = malloc(DBFS_XF_STORED_MAX(cs));
    plain = malloc(cs);
    enc = malloc(xf_encode_room(op->to, cs));
    vals = calloc((size_t)n + 1, sizeof *vals);
    lens = calloc((size_t)n + 1, sizeof *lens);
    be = calloc((size_t)n + 1, 8);
    pc = calloc((size_t)n + 1, sizeof *pc);
    clens = calloc((size_t)n + 1, sizeof *clens);
    if (!tmp || !plain || !enc || !vals || !lens || !be || !pc || !clens) {
        rc = -ENOMEM;
        goto out;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        uint64_t k = (uint64_t)dbfs_get_i8(r, i, 0);
        const char *val = plain;
        size_t plen = 0, elen;
        xf_err xe = {{0}};

        rc = dbfs_xf_plain_of(op, c, from, k, PQgetvalue(r, i, 1), (size_t)PQgetlength(r, i, 1),
                              tmp, plain, &plen);
        if (rc != 0) {
            if (!*op->msg)
                g_snprintf(op->msg, op->msglen,
                           "file %" PRIu64 " chunk %" PRIu64 " does not decode under its chain",
                           op->ino, k);
            break;
        }
        elen = plen;
        if (to_id != 0) {
            rc = xf_encode(op->to, op->w, &(xf_chunk){op->ino, k, 0}, plain, plen, enc,
                           xf_encode_room(op->to, cs), &elen, &xe);
            if (rc != 0) {
                g_snprintf(op->msg, op->msglen, "%s", xe.msg);
                rc = -EIO;
                break;
            }
            val = enc;
        }
        vals[i] = malloc(dbfs_codec_enc_len(op->fs->info.encoding, elen) + 1);
        if (!vals[i]) {
            rc = -ENOMEM;
            break;
        }
        if (op->fs->info.encoding == DBFS_ENC_BINARY) {
            memcpy(vals[i], val, elen);
            lens[i] = elen;
        } else {
            lens[i] = dbfs_codec_encode(op->fs->info.encoding, val, elen, vals[i]);
        }
        dbfs_xf_put_be(be[i], k, 8);
        pc[i] = be[i];
        clens[i] = 8;
    }
    if (rc != 0)
        goto out;
    pv = (const void **)vals;
    ac = dbfs_xf_array(DBFS_XF_INT8OID, (size_t)n, pc, clens, &aclen);
    av = dbfs_xf_array(DBFS_XF_BYTEAOID, (size_t)n, pv, lens, &avlen);
    if (!ac || !av) {
        rc = -ENOMEM;
        goto out;
    }
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)op->ino);
    dbfs_param_i8(&p, (int64_t)to_id);
    dbfs_param_bytes(&p, text, strlen(text));
    dbfs_param_bytes(&p, ac, aclen);
    dbfs_param_bytes(&p, av, avlen);
    rc = dbfs_exec(c, DBFS_ST_XF_RECHAIN, &p, &done);
out:
    for (int i = 0; vals && i < n; i++)
        free(vals[i]);
    free(vals);
    free(lens);
    free(be);
    free(pc);
    free(clens);
    free(ac);
    free(av);
    free(tmp);
    free(plain);
    free(enc);
    PQclear(lk);
    PQclear(r);
    PQclear(done);
    return rc;
}

/* dbfs_xform_set -- see dbfs.h. */
int dbfs_xform_set(dbfs *fs, const char *path, const char *chain, char *msg, size_t msglen)
{
    dbfs_admin *a = NULL;
    const xf_chain *ch;
    xf_err xe = {{0}};
    dbfs_type type;
    uint64_t ino;
    PGresult *r = NULL;
    dbfs_params p;
    int rc;

    *msg = 0;
    rc = xf_chain_get(fs->xf, chain, &ch, &xe);
    if (rc != 0) {
        g_snprintf(msg, msglen, "chain \"%s\": %s", chain, xe.msg);
        return rc;
    }
    rc = dbfs_admin_open(fs->conninfo, &a);
    if (rc == 0)
        rc = dbfs_admin_resolve(a, path, &ino, &type);
    if (rc != 0) {
        g_snprintf(msg, msglen, "%s: %s", path, g_strerror(-rc));
        goto out;
    }
    {
        char *why = NULL;

        rc = dbfs_xf_sql_problem(a->c, ch, &why);
        if (rc == 0 && why) {
            g_snprintf(msg, msglen, "chain \"%s\": %s", chain, why);
            g_free(why);
            rc = -EINVAL;
        }
        if (rc != 0)
            goto out;
    }
    if (type != DBFS_REG && type != DBFS_DIR) {
        g_snprintf(msg, msglen, "%s: only files and directories have chains", path);
        rc = -EINVAL;
        goto out;
    }
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)ino);
    rc = dbfs_exec(a->c, DBFS_ST_XF_GET, &p, &r);
    if (rc != 0)
        goto out;
    if (type == DBFS_DIR || dbfs_get_i8(r, 0, 4) == 0) {
        const char *text = xf_chain_text(ch);

        dbfs_params_init(&p);
        dbfs_param_i8(&p, (int64_t)ino);
        dbfs_param_i8(&p, (int64_t)xf_chain_id(ch));
        dbfs_param_bytes(&p, text, strlen(text));
        PQclear(r);
        r = NULL;
        rc = dbfs_exec(a->c, DBFS_ST_XF_SET, &p, &r);
    } else {
        dbfs_xf_rechain_op op = {fs, ino, ch, NULL, msg, msglen};

        rc = xf_work_new(fs->xf, &op.w);
        if (rc == 0)
            rc = dbfs_txn(a->c, "rewriting a file's chunks", dbfs_xf_rechain_txn, &op);
        xf_work_free(op.w);
    }
    if (rc != 0 && !*msg)
        g_snprintf(msg, msglen, "%s: %s", path, g_strerror(-rc));
out:
    PQclear(r);
    dbfs_admin_close(a);
    return rc;
}

/* dbfs_xform_apply -- see dbfs.h. */
int dbfs_xform_apply(dbfs *fs, const char *path, void (*progress)(const char *line, void *arg),
                     void *arg, uint64_t *done)
{
    dbfs_admin *a = NULL;
    PGresult *r = NULL;
    dbfs_type type;
    uint64_t ino;
    dbfs_params p;
    xf_work *w = NULL;
    char msg[512], line[700];
    int rc = dbfs_admin_open(fs->conninfo, &a);

    *done = 0;
    if (rc == 0)
        rc = dbfs_admin_resolve(a, path, &ino, &type);
    if (rc == 0 && type != DBFS_DIR)
        rc = -ENOTDIR;
    if (rc == 0)
        rc = xf_work_new(fs->xf, &w);
    if (rc == 0) {
        dbfs_params_init(&p);
        dbfs_param_i8(&p, (int64_t)ino);
        rc = dbfs_exec(a->c, DBFS_ST_XF_STRAYS, &p, &r);
    }
    for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
        const char *text = PQgetvalue(r, i, 2);
        dbfs_xf_rechain_op op = {fs, (uint64_t)dbfs_get_i8(r, i, 0), NULL, w, msg, sizeof msg};
        xf_err xe = {{0}};

        msg[0] = 0;
        rc = xf_chain_get(fs->xf, text, &op.to, &xe);
        if (rc != 0) {
            g_snprintf(line, sizeof line, "file %" PRIu64 ": chain \"%s\": %s", op.ino, text,
                       xe.msg);
        } else {
            rc = dbfs_txn(a->c, "rewriting a file's chunks", dbfs_xf_rechain_txn, &op);
            if (rc == 0) {
                ++*done;
                g_snprintf(line, sizeof line, "%d/%d file %" PRIu64 " (%.*s): %s", i + 1,
                           PQntuples(r), op.ino, PQgetlength(r, i, 3), PQgetvalue(r, i, 3), text);
            } else {
                g_snprintf(line, sizeof line, "file %" PRIu64 ": %s", op.ino,
                           *msg ? msg : g_strerror(-rc));
            }
        }
        if (progress)
            progress(line, arg);
    }
    PQclear(r);
    xf_work_free(w);
    dbfs_admin_close(a);
    return rc;
}

/* dbfs_xform_show -- see dbfs.h. */
int dbfs_xform_show(dbfs *fs, const char *path, char **text)
{
    dbfs_admin *a = NULL;
    dbfs_type type = DBFS_DIR;
    uint64_t ino = 0;
    PGresult *r = NULL;
    dbfs_params p;
    int rc = dbfs_admin_open(fs->conninfo, &a);

    *text = NULL;
    if (rc == 0)
        rc = dbfs_admin_resolve(a, path, &ino, &type);
    if (rc == 0) {
        dbfs_params_init(&p);
        dbfs_param_i8(&p, (int64_t)ino);
        rc = dbfs_exec(a->c, DBFS_ST_XF_GET, &p, &r);
    }
    if (rc == 0 && PQntuples(r) != 1)
        rc = -ENOENT;
    if (rc == 0)
        *text = dbfs_get_i8(r, 0, 0) == 0 || dbfs_get_null(r, 0, 1)
                    ? g_strdup("none")
                    : g_strndup(PQgetvalue(r, 0, 1), (gsize)PQgetlength(r, 0, 1));
    PQclear(r);
    r = NULL;
    /* A transformation link: what it presents. */
    if (rc == 0 && type == DBFS_REG && dbfs_exec(a->c, DBFS_ST_XF_LINKS, NULL, &r) == 0) {
        for (int i = 0; i < PQntuples(r); i++) {
            if ((uint64_t)dbfs_get_i8(r, i, 0) != ino)
                continue;
            g_free(*text);
            *text = g_strdup_printf("link to %.*s through %.*s%s", PQgetlength(r, i, 6),
                                    dbfs_get_null(r, i, 6) ? "(base gone)" : PQgetvalue(r, i, 6),
                                    PQgetlength(r, i, 2), PQgetvalue(r, i, 2),
                                    PQgetvalue(r, i, 3)[0] ? "" : " (read-only)");
        }
        PQclear(r);
    }
    dbfs_admin_close(a);
    return rc;
}

/* The check of one guarded file: its chain makes, every chunk decodes and
 * holds no byte past the size. Returns the problems found. */
static uint64_t dbfs_xf_check_file(dbfs *fs, dbfs_conn *c, xf_work *w, const PGresult *files,
                                   int row, void (*cb)(const dbfs_xform_problem *, void *),
                                   void *arg)
{
    const uint32_t cs = fs->info.chunk_size;
    dbfs_xform_problem pb = {.ino = (uint64_t)dbfs_get_i8(files, row, 0)};
    const uint64_t id = (uint64_t)dbfs_get_i8(files, row, 1);
    const uint64_t size = (uint64_t)dbfs_get_i8(files, row, 2);
    dbfs_xf_rechain_op op = {fs, pb.ino, NULL, w, pb.detail, sizeof pb.detail};
    char *tmp = malloc(DBFS_XF_STORED_MAX(cs)), *plain = malloc(cs);
    PGresult *r = NULL;
    uint64_t bad = 0;
    dbfs_params p;
    const xf_chain *ch;

    if (!tmp || !plain)
        goto out;
    if (dbfs_get_null(files, row, 3) || dbfs_xf_chain_on(fs, c, id, &ch) != 0) {
        g_snprintf(pb.detail, sizeof pb.detail,
                   "file %" PRIu64 ": chain %016" PRIx64 " is not recorded or does not make here",
                   pb.ino, id);
        cb(&pb, arg);
        bad++;
        goto out;
    }
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)pb.ino);
    if (dbfs_exec(c, DBFS_ST_XF_CHUNKS, &p, &r) != 0) {
        /* An in-database stage that fails (logged with its reason). */
        g_snprintf(pb.detail, sizeof pb.detail,
                   "file %" PRIu64 ": its chunks cannot be read through chain %016" PRIx64
                   " (an in-database stage failed: see the log)",
                   pb.ino, id);
        cb(&pb, arg);
        bad++;
        goto out;
    }
    for (int i = 0; i < PQntuples(r); i++) {
        size_t plen = 0;

        pb.chunk = (uint64_t)dbfs_get_i8(r, i, 0);
        pb.detail[0] = 0;
        if (dbfs_xf_plain_of(&op, c, id, pb.chunk, PQgetvalue(r, i, 1),
                             (size_t)PQgetlength(r, i, 1), tmp, plain, &plen) != 0) {
            if (!pb.detail[0])
                g_snprintf(pb.detail, sizeof pb.detail,
                           "file %" PRIu64 " chunk %" PRIu64 ": does not decode", pb.ino, pb.chunk);
        } else if (pb.chunk * cs + plen > size) {
            g_snprintf(pb.detail, sizeof pb.detail,
                       "file %" PRIu64 " chunk %" PRIu64 ": holds data past the size %" PRIu64,
                       pb.ino, pb.chunk, size);
        } else {
            continue;
        }
        cb(&pb, arg);
        bad++;
    }
out:
    PQclear(r);
    free(tmp);
    free(plain);
    return bad;
}

/* dbfs_xform_check -- see dbfs.h. */
int dbfs_xform_check(dbfs *fs, void (*cb)(const dbfs_xform_problem *p, void *arg), void *arg,
                     uint64_t *problems)
{
    dbfs_admin *a = NULL;
    PGresult *files = NULL;
    xf_work *w = NULL;
    int rc = dbfs_admin_open(fs->conninfo, &a);

    *problems = 0;
    if (rc == 0)
        rc = xf_work_new(fs->xf, &w);
    if (rc == 0)
        rc = dbfs_exec(a->c, DBFS_ST_XF_FILES, NULL, &files);
    for (int i = 0; rc == 0 && i < PQntuples(files); i++)
        *problems += dbfs_xf_check_file(fs, a->c, w, files, i, cb, arg);
    PQclear(files);
    files = NULL;
    /* Transformation links: a base that is gone, a chain that does not make. */
    if (rc == 0)
        rc = dbfs_exec(a->c, DBFS_ST_XF_LINKS, NULL, &files);
    for (int i = 0; rc == 0 && i < PQntuples(files); i++) {
        dbfs_xform_problem pb = {.ino = (uint64_t)dbfs_get_i8(files, i, 0)};
        const xf_chain *ch;
        xf_err xe = {{0}};
        char *text = g_strndup(PQgetvalue(files, i, 2), (gsize)PQgetlength(files, i, 2));

        if (dbfs_get_null(files, i, 6))
            g_snprintf(pb.detail, sizeof pb.detail,
                       "transformation link %" PRIu64 " (%s): its base file %" PRIu64
                       " is gone (remove the link)",
                       pb.ino, dbfs_get_null(files, i, 5) ? "no name" : PQgetvalue(files, i, 5),
                       (uint64_t)dbfs_get_i8(files, i, 1));
        else if (xf_chain_get(fs->xf, text, &ch, &xe) != 0)
            g_snprintf(pb.detail, sizeof pb.detail,
                       "transformation link %" PRIu64 ": chain \"%s\" does not make here: %s",
                       pb.ino, text, xe.msg);
        g_free(text);
        if (pb.detail[0]) {
            cb(&pb, arg);
            ++*problems;
        }
    }
    PQclear(files);
    xf_work_free(w);
    dbfs_admin_close(a);
    return rc;
}
