/*
 * dbfs_xf.c -- transformation chains inside dbfs (dbfs_xf.h): the xform
 * environment made at open from the [xform] keys, the nonce epoch and the
 * key id kept in the database, a file's chain by id, and the decode of a
 * fetched chunk.
 *
 * NOTES
 *   The env (fs->xf) is shared by every thread (xf.h); each connection
 *   makes its own xf_work and plain-bytes buffer on first use and frees
 *   them when it closes (dbfs_conn_close).
 *
 *   Nonce epoch: every open takes a random non-zero 32-bit value and
 *   inserts it into pgnfs_xform_epoch; a value some process took before
 *   conflicts and another is drawn. So no two processes, and no two runs
 *   of one, share an epoch, and nonces (epoch || counter) never repeat
 *   under the file system's key.
 *
 *   Key id: recorded in pgnfs_fs.xform_key_id by the first open with a
 *   key; an open with a key of another id is refused (-EKEYREJECTED), an
 *   open without a key of a file system that has one only warns (its
 *   encrypted files then answer IO errors).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <openssl/rand.h>

#include "dbfs_conn.h"
#include "dbfs_xf.h"

/* Draws of an epoch before giving up (each taken one is a 2^-32 event). */
#define DBFS_XF_EPOCH_TRIES 16

/* What open's transaction needs and learns. */
typedef struct {
    dbfs *fs;
    const dbfs_config *cfg;
    const xf_chain *root; /* the configured root chain, or NULL */
    uint32_t epoch;
} dbfs_xf_opening;

/* Take a nonce epoch no process took before. */
static int dbfs_xf_take_epoch(dbfs_conn *a, uint32_t *out)
{
    for (int i = 0; i < DBFS_XF_EPOCH_TRIES; i++) {
        uint32_t e = 0;
        dbfs_params p;
        PGresult *r;
        int rc;

        if (RAND_bytes((unsigned char *)&e, sizeof e) != 1)
            return -EIO;
        if (e == 0)
            continue;
        dbfs_params_init(&p);
        dbfs_param_i8(&p, (int64_t)e);
        rc = dbfs_exec(a, DBFS_ST_XF_EPOCH, &p, &r);
        if (rc != 0)
            return rc;
        rc = PQntuples(r);
        PQclear(r);
        if (rc == 1) {
            *out = e;
            return 0;
        }
    }
    g_warning("xform: no free nonce epoch after %d draws", DBFS_XF_EPOCH_TRIES);
    return -EIO;
}

/* Compare the loaded key's id with the file system's; record it the first
 * time. */
static int dbfs_xf_check_key(dbfs_conn *a, const dbfs_config *cfg, xf_env *env)
{
    uint32_t kid;
    bool have_key = xf_env_key_id(env, &kid) == 0;
    dbfs_params p;
    PGresult *r;
    int rc = dbfs_exec(a, DBFS_ST_XF_KEY_ID, NULL, &r);

    if (rc != 0)
        return rc;
    if (PQntuples(r) == 1 && !dbfs_get_null(r, 0, 0)) {
        uint32_t fs_kid = (uint32_t)dbfs_get_i8(r, 0, 0);

        PQclear(r);
        if (!have_key) {
            g_warning("xform: the file system's data is encrypted under key id %08" PRIx32
                      " but no [xform] key_file is set: encrypted files will answer I/O errors",
                      fs_kid);
            return 0;
        }
        if (fs_kid != kid) {
            g_critical("xform: [xform] key_file %s holds key id %08" PRIx32
                       ", but this file system's data is encrypted under key id %08" PRIx32
                       ": set key_file to the key the file system was made with",
                       cfg->xform_key_file, kid, fs_kid);
            return -EKEYREJECTED;
        }
        return 0;
    }
    PQclear(r);
    if (!have_key)
        return 0;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)kid);
    rc = dbfs_exec(a, DBFS_ST_XF_SET_KEY_ID, &p, &r);
    PQclear(r);
    if (rc == 0)
        g_message("xform: key id %08" PRIx32 " recorded with the file system", kid);
    return rc;
}

/* dbfs_xf_sql_problem -- see dbfs_xf.h. */
int dbfs_xf_sql_problem(dbfs_conn *c, const xf_chain *ch, char **why)
{
    const char *text = xf_chain_text(ch);
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    *why = NULL;
    if (xf_chain_sql_count(ch) == 0)
        return 0;
    dbfs_params_init(&p);
    dbfs_param_bytes(&p, text, strlen(text));
    rc = dbfs_exec(c, DBFS_ST_XF_SQL_PROBLEM, &p, &r);
    if (rc == 0 && PQntuples(r) == 1 && !dbfs_get_null(r, 0, 0))
        *why = g_strndup(PQgetvalue(r, 0, 0), (gsize)PQgetlength(r, 0, 0));
    PQclear(r);
    return rc;
}

/* open's transaction (dbfs_txn). */
static int dbfs_xf_open_txn(dbfs_conn *a, void *arg)
{
    dbfs_xf_opening *o = arg;
    int rc = dbfs_xf_take_epoch(a, &o->epoch);

    if (rc == 0)
        rc = dbfs_xf_check_key(a, o->cfg, o->fs->xf);
    if (rc == 0 && o->root) {
        const char *text = xf_chain_text(o->root);
        char *why = NULL;
        dbfs_params p;
        PGresult *r;

        rc = dbfs_xf_sql_problem(a, o->root, &why);
        if (rc == 0 && why) {
            g_critical("xform: [xform] root_chain \"%s\": %s", text, why);
            g_free(why);
            return -EINVAL;
        }
        if (rc != 0)
            return rc;
        dbfs_params_init(&p);
        dbfs_param_i8(&p, DBFS_ROOT_INO);
        dbfs_param_i8(&p, (int64_t)xf_chain_id(o->root));
        dbfs_param_bytes(&p, text, strlen(text));
        rc = dbfs_exec(a, DBFS_ST_XF_SET, &p, &r);
        PQclear(r);
    }
    return rc;
}

/* dbfs_xf_open -- see dbfs_xf.h. */
int dbfs_xf_open(dbfs *fs, const dbfs_config *cfg, dbfs_conn *a)
{
    xf_env_config xc = {cfg->xform_key_file, cfg->xform_plugin_dir, cfg->xform_zstd_level, 0};
    dbfs_xf_opening o = {.fs = fs, .cfg = cfg};
    xf_err xe = {{0}};
    int rc = xf_env_new(&xc, &fs->xf, &xe);

    if (rc != 0) {
        g_critical("xform: %s", xe.msg);
        return rc;
    }
    if (cfg->xform_root_chain && *cfg->xform_root_chain) {
        rc = xf_chain_get(fs->xf, cfg->xform_root_chain, &o.root, &xe);
        if (rc != 0) {
            g_critical("xform: [xform] root_chain \"%s\": %s", cfg->xform_root_chain, xe.msg);
            return rc;
        }
    }
    rc = dbfs_txn(a, "taking a nonce epoch", dbfs_xf_open_txn, &o);
    if (rc != 0)
        return rc;
    xf_env_set_epoch(fs->xf, o.epoch);
    return 0;
}

/* dbfs_xf_close -- see dbfs_xf.h. */
void dbfs_xf_close(dbfs *fs)
{
    xf_env_free(fs->xf);
    fs->xf = NULL;
}

/* dbfs_xf_chain -- see dbfs_xf.h. */
int dbfs_xf_chain(dbfs_conn *c, uint64_t id, const xf_chain **out)
{
    return dbfs_xf_chain_on(c->fs, c, id, out);
}

/* dbfs_xf_chain_on -- see dbfs_xf.h. */
int dbfs_xf_chain_on(dbfs *fs, dbfs_conn *c, uint64_t id, const xf_chain **out)
{
    dbfs_params p;
    PGresult *r = NULL;
    int rc;

    *out = xf_chain_find(fs->xf, id);
    if (*out)
        return 0;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)id);
    rc = dbfs_exec(c, DBFS_ST_XF_CHAIN_TEXT, &p, &r);
    if (rc != 0)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        g_warning("xform: chain %016" PRIx64 " is not in pgnfs_xform_chain", id);
        return -EIO;
    }
    rc = dbfs_xf_chain_learn(fs, id, PQgetvalue(r, 0, 0), (size_t)PQgetlength(r, 0, 0));
    PQclear(r);
    *out = rc == 0 ? xf_chain_find(fs->xf, id) : NULL;
    return rc;
}

/* dbfs_xf_chain_learn -- see dbfs_xf.h. */
int dbfs_xf_chain_learn(dbfs *fs, uint64_t id, const char *s, size_t len)
{
    const xf_chain *ch = NULL, **out = &ch;
    xf_err xe = {{0}};
    char *text;
    int rc;

    if (xf_chain_find(fs->xf, id))
        return 0;
    text = g_strndup(s, (gsize)len);
    rc = xf_chain_get(fs->xf, text, out, &xe);
    if (rc != 0) {
        g_warning("xform: chain \"%s\" cannot be made here: %s", text, xe.msg);
        rc = -EIO;
    } else if (xf_chain_id(*out) != id) {
        g_warning("xform: chain \"%s\" has id %016" PRIx64 ", recorded as %016" PRIx64, text,
                  xf_chain_id(*out), id);
        rc = -EIO;
    }
    g_free(text);
    return rc;
}

/* dbfs_xf_want_text -- see dbfs_xf.h. */
bool dbfs_xf_want_text(dbfs *fs, uint64_t ino)
{
    uint64_t seen = dbfs_xf_seen(fs, ino);

    return seen == 0 || seen == DBFS_XF_SEEN_GUARDED || !xf_chain_find(fs->xf, seen);
}

/* c's xf_work and a plain buffer of at least room bytes. */
static int dbfs_xf_conn_ready(dbfs_conn *c, size_t room)
{
    if (!c->xf) {
        int rc = xf_work_new(c->fs->xf, &c->xf);

        if (rc != 0)
            return rc;
    }
    if (c->xf_buf_len < room) {
        char *b = realloc(c->xf_buf, room);

        if (!b)
            return -ENOMEM;
        c->xf_buf = b;
        c->xf_buf_len = room;
    }
    return 0;
}

/* dbfs_xf_decode -- see dbfs_xf.h. */
int dbfs_xf_decode(dbfs_conn *c, uint64_t id, uint64_t ino, uint64_t chunk, const void *v,
                   size_t vlen, const char **plain, size_t *plain_len)
{
    return dbfs_xf_decode_to(c, id, ino, chunk, v, vlen, NULL, 0, plain, plain_len);
}

/* dbfs_xf_decode_to -- see dbfs_xf.h. */
int dbfs_xf_decode_to(dbfs_conn *c, uint64_t id, uint64_t ino, uint64_t chunk, const void *v,
                      size_t vlen, void *out, size_t out_room, const char **plain,
                      size_t *plain_len)
{
    const uint32_t cs = c->fs->info.chunk_size;
    const xf_chain *ch;
    xf_err xe = {{0}};
    size_t room;
    int rc = dbfs_xf_chain(c, id, &ch);

    if (rc != 0)
        return rc == -ENOMEM ? rc : -EIO;
    room = xf_decode_room(ch, cs);
    if (out && out_room >= room) {
        room = out_room; /* straight into the caller's buffer: no copy */
        rc = c->xf ? 0 : xf_work_new(c->fs->xf, &c->xf);
    } else {
        out = NULL;
        rc = dbfs_xf_conn_ready(c, room);
    }
    if (rc != 0)
        return rc;
    rc = xf_decode(ch, c->xf, &(xf_chunk){ino, chunk, 0}, v, vlen, out ? out : c->xf_buf, room,
                   plain_len, &xe);
    if (rc == 0 && *plain_len > cs) {
        g_snprintf(xe.msg, sizeof xe.msg,
                   "file %" PRIu64 " chunk %" PRIu64 ": %zu plain bytes, more than a chunk", ino,
                   chunk, *plain_len);
        rc = -EBADMSG;
    }
    if (rc != 0) {
        g_warning("xform: %s", xe.msg);
        return rc == -ENOMEM ? rc : -EIO;
    }
    *plain = out ? out : c->xf_buf;
    return 0;
}

/* The slot of inode ino in fs->xf_seen and fs->xf_seen_chain. */
static size_t dbfs_xf_slot(uint64_t ino)
{
    return (size_t)((ino * UINT64_C(0x9E3779B97F4A7C15) >> 40) % DBFS_XF_SEEN_SLOTS);
}

/* dbfs_xf_seen -- see dbfs_xf.h. The two words of a slot are read apart:
 * a race gives a wrong guess, which the guarded write's check catches. */
uint64_t dbfs_xf_seen(dbfs *fs, uint64_t ino)
{
    const size_t i = dbfs_xf_slot(ino);

    if (atomic_load_explicit(&fs->xf_seen[i], memory_order_relaxed) != ino)
        return 0;
    return atomic_load_explicit(&fs->xf_seen_chain[i], memory_order_relaxed);
}

/* dbfs_xf_note -- see dbfs_xf.h. */
void dbfs_xf_note(dbfs *fs, uint64_t ino, uint64_t chain)
{
    const size_t i = dbfs_xf_slot(ino);

    if (chain != 0) {
        atomic_store_explicit(&fs->xf_seen_chain[i], chain, memory_order_relaxed);
        atomic_store_explicit(&fs->xf_seen[i], ino, memory_order_relaxed);
        /* A new file's chain learned: its directory's next files take it. */
        if (chain != DBFS_XF_SEEN_GUARDED &&
            atomic_load_explicit(&fs->xf_new[i], memory_order_relaxed) == ino) {
            const uint64_t dir = atomic_load_explicit(&fs->xf_new_dir[i], memory_order_relaxed);
            const size_t d = dbfs_xf_slot(dir);

            atomic_store_explicit(&fs->xf_new[i], 0, memory_order_relaxed);
            atomic_store_explicit(&fs->xf_dir_chain[d], chain, memory_order_relaxed);
            atomic_store_explicit(&fs->xf_dir[d], dir, memory_order_relaxed);
        }
    } else if (atomic_load_explicit(&fs->xf_seen[i], memory_order_relaxed) == ino) {
        atomic_store_explicit(&fs->xf_seen[i], 0, memory_order_relaxed);
    }
}

/* dbfs_xf_hint -- see dbfs_xf.h: a regular file that is no link with
 * rdev_minor 1 (pgnfs_xf_hint, 25_xform.sql). The slots' two words are
 * read apart, as dbfs_xf_seen's: a race costs a wrong guess only. */
void dbfs_xf_hint(dbfs *fs, uint64_t dir, const dbfs_attr *a)
{
    const size_t d = dbfs_xf_slot(dir), f = dbfs_xf_slot(a->ino);
    uint64_t chain = 0;

    if (a->type != DBFS_REG || a->rdev_major != 0 || a->rdev_minor != 1 ||
        dbfs_xf_seen(fs, a->ino) != 0)
        return;
    if (atomic_load_explicit(&fs->xf_dir[d], memory_order_relaxed) == dir)
        chain = atomic_load_explicit(&fs->xf_dir_chain[d], memory_order_relaxed);
    /* Its first store tells the directory's chain (dbfs_xf_note). */
    atomic_store_explicit(&fs->xf_new_dir[f], dir, memory_order_relaxed);
    atomic_store_explicit(&fs->xf_new[f], a->ino, memory_order_relaxed);
    atomic_store_explicit(&fs->xf_seen_chain[f], chain ? chain : DBFS_XF_SEEN_GUARDED,
                          memory_order_relaxed);
    atomic_store_explicit(&fs->xf_seen[f], a->ino, memory_order_relaxed);
}

/* dbfs_xf_put_be -- see dbfs_xf.h. */
void dbfs_xf_put_be(unsigned char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)(v & 0xff);
}

/* dbfs_xf_array -- see dbfs_xf.h. */
unsigned char *dbfs_xf_array(uint32_t elem, size_t n, const void *const *vals, const size_t *lens,
                             size_t *len)
{
    size_t total = 20;
    unsigned char *a, *p;

    for (size_t i = 0; i < n; i++)
        total += 4 + lens[i];
    a = malloc(total);
    if (!a)
        return NULL;
    dbfs_xf_put_be(a, n ? 1 : 0, 4);
    dbfs_xf_put_be(a + 4, 0, 4);
    dbfs_xf_put_be(a + 8, elem, 4);
    dbfs_xf_put_be(a + 12, n, 4);
    dbfs_xf_put_be(a + 16, 1, 4);
    p = a + (n ? 20 : 12);
    for (size_t i = 0; i < n; i++) {
        dbfs_xf_put_be(p, lens[i], 4);
        memcpy(p + 4, vals[i], lens[i]);
        p += 4 + lens[i];
    }
    *len = (size_t)(p - a);
    return a;
}
