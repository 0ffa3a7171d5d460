/*
 * dbfs_atime.c -- deferred atime updates of an async export (see
 * dbfs_atime.h for why and when).
 *
 *   (none) --READ served from the caches, atime due--> waiting (t)
 *   waiting (t) --a later READ: not due any more (the overlay shows t)
 *   waiting (t) --flush: UPDATE + GETATTR in one transaction, the stat
 *                 cache told the attributes after--> (none)
 *   waiting (t) --flush fails transiently--> waiting (t)
 *
 * NOTES
 *   An entry leaves the table only after the stat cache holds what the
 *   flush stored, so a GETATTR never sees atime go back. The flush checks
 *   the relatime rule again in the statement (pgnfs_atime): a file written
 *   since the READ gets its atime as Linux would have set it at the READ.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dbfs_atime.h"
#include "dbfs_cache.h"
#include "dbfs_conn.h"
#include "dbfs_sql.h"
#include "dbfs_wire.h"

typedef struct {
    uint32_t gen;
    int64_t t;
} dbfs_atime_ent;

struct dbfs_atime {
    GMutex lock;
    GHashTable *pending; /* under lock: ino (guint64 *) -> dbfs_atime_ent * */
    atomic_uint count;   /* its size, read without the lock */
};

/* One transaction's files. */
typedef struct {
    unsigned n;
    uint64_t ino[CACHE_LRU_MUT_MAX];
    dbfs_atime_ent e[CACHE_LRU_MUT_MAX];
    bool have[CACHE_LRU_MUT_MAX];
    dbfs_attr a[CACHE_LRU_MUT_MAX];
} dbfs_atime_group;

/* dbfs_atime_open -- see dbfs_atime.h. */
int dbfs_atime_open(dbfs *fs)
{
    struct dbfs_atime *at = calloc(1, sizeof *at);

    if (!at)
        return -ENOMEM;
    g_mutex_init(&at->lock);
    at->pending = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    atomic_init(&at->count, 0);
    fs->atime = at;
    return 0;
}

/* dbfs_atime_close -- see dbfs_atime.h. */
void dbfs_atime_close(dbfs *fs)
{
    if (!fs->atime)
        return;
    g_hash_table_destroy(fs->atime->pending);
    g_mutex_clear(&fs->atime->lock);
    free(fs->atime);
    fs->atime = NULL;
}

/* dbfs_atime_may_defer -- see dbfs_atime.h. */
bool dbfs_atime_may_defer(const dbfs *fs, bool async)
{
    return fs->atime && fs->wb && async;
}

/* dbfs_atime_defer -- see dbfs_atime.h. */
bool dbfs_atime_defer(dbfs *fs, dbfs_fh fh, int64_t now)
{
    struct dbfs_atime *at = fs->atime;
    dbfs_atime_ent *e;
    bool ok = true;

    if (!at)
        return false;
    g_mutex_lock(&at->lock);
    e = g_hash_table_lookup(at->pending, &fh.ino);
    if (e) {
        /* Another generation's update is of a file that is gone. */
        if (e->gen != fh.gen || now > e->t) {
            e->gen = fh.gen;
            e->t = now;
        }
    } else if (g_hash_table_size(at->pending) >= DBFS_ATIME_MAX) {
        ok = false;
    } else {
        guint64 *k = g_new(guint64, 1);

        *k = fh.ino;
        e = g_new(dbfs_atime_ent, 1);
        e->gen = fh.gen;
        e->t = now;
        g_hash_table_insert(at->pending, k, e);
        atomic_store(&at->count, g_hash_table_size(at->pending));
    }
    g_mutex_unlock(&at->lock);
    return ok;
}

/* dbfs_atime_overlay -- see dbfs_atime.h. */
void dbfs_atime_overlay(dbfs *fs, dbfs_attr *a)
{
    struct dbfs_atime *at = fs->atime;
    const dbfs_atime_ent *e;

    if (!at || a->type != DBFS_REG || atomic_load(&at->count) == 0)
        return;
    g_mutex_lock(&at->lock);
    e = g_hash_table_lookup(at->pending, &a->ino);
    if (e && e->gen == a->gen && e->t > a->atime_ns)
        a->atime_ns = e->t;
    g_mutex_unlock(&at->lock);
}

/* dbfs_atime_waiting -- see dbfs_atime.h. */
unsigned dbfs_atime_waiting(dbfs *fs)
{
    return fs->atime ? atomic_load(&fs->atime->count) : 0;
}

/* Copy up to CACHE_LRU_MUT_MAX waiting entries into g. */
static void dbfs_atime_take(struct dbfs_atime *at, dbfs_atime_group *g)
{
    GHashTableIter it;
    gpointer k, v;

    g->n = 0;
    g_mutex_lock(&at->lock);
    g_hash_table_iter_init(&it, at->pending);
    while (g->n < CACHE_LRU_MUT_MAX && g_hash_table_iter_next(&it, &k, &v)) {
        g->ino[g->n] = *(guint64 *)k;
        g->e[g->n] = *(dbfs_atime_ent *)v;
        g->n++;
    }
    g_mutex_unlock(&at->lock);
}

/* Remove g's entries that no READ has moved since they were taken. */
static void dbfs_atime_drop(struct dbfs_atime *at, const dbfs_atime_group *g)
{
    g_mutex_lock(&at->lock);
    for (unsigned i = 0; i < g->n; i++) {
        const dbfs_atime_ent *e = g_hash_table_lookup(at->pending, &g->ino[i]);

        if (e && e->gen == g->e[i].gen && e->t == g->e[i].t)
            g_hash_table_remove(at->pending, &g->ino[i]);
    }
    atomic_store(&at->count, g_hash_table_size(at->pending));
    g_mutex_unlock(&at->lock);
}

/* The batch (dbfs_batch_run's fn): per file the atime UPDATE and the
 * attributes after it; one transaction. */
static int dbfs_atime_queue(dbfs_conn *c, void *arg)
{
    static const dbfs_cred root = {0};
    dbfs_atime_group *g = arg;
    int rc = 0;

    for (unsigned i = 0; i < g->n; i++) {
        dbfs_params p, q;

        g->have[i] = false;
        dbfs_params_init(&p);
        dbfs_param_i8(&p, (int64_t)g->ino[i]);
        dbfs_param_i4(&p, (int32_t)g->e[i].gen);
        dbfs_param_i8(&p, g->e[i].t);
        dbfs_param_cred(&p, &root);
        dbfs_batch_add(c, DBFS_ST_ATIME, &p);
        dbfs_params_init(&q);
        dbfs_param_i8(&q, (int64_t)g->ino[i]);
        dbfs_param_i4(&q, (int32_t)g->e[i].gen);
        dbfs_batch_add(c, DBFS_ST_GETATTR, &q);
    }
    dbfs_batch_sync(c);
    for (unsigned i = 0; i < g->n; i++) {
        PGresult *r = NULL;
        int rr = dbfs_batch_result(c, &r);

        PQclear(r);
        r = NULL;
        if (rr == 0)
            rr = dbfs_batch_result(c, &r);
        if (rr == 0 && PQntuples(r) > 0) {
            dbfs_get_attr(r, 0, 0, &g->a[i]);
            g->have[i] = true;
        }
        PQclear(r);
        if (rr != 0 && rc == 0)
            rc = rr;
    }
    return rc;
}

/* dbfs_atime_flush -- see dbfs_atime.h. */
int dbfs_atime_flush(dbfs_conn *c)
{
    struct dbfs_atime *at = c->fs->atime;
    unsigned rounds, done = 0;
    dbfs_atime_group g;

    if (!at || atomic_load(&at->count) == 0)
        return 0;
    /* What waits now, not what READs add meanwhile. */
    rounds = (atomic_load(&at->count) + CACHE_LRU_MUT_MAX - 1) / CACHE_LRU_MUT_MAX;
    for (unsigned r = 0; r < rounds; r++) {
        dbfs_cache_op op;
        int rc;

        dbfs_atime_take(at, &g);
        if (g.n == 0)
            break;
        dbfs_cache_mut_begin(c->fs, &op, g.ino, g.n, NULL, 0);
        rc = dbfs_batch_run(c, dbfs_atime_queue, &g);
        for (unsigned i = 0; rc == 0 && i < g.n; i++)
            if (g.have[i])
                dbfs_cache_put_attr(&op, &g.a[i]);
        dbfs_cache_end(&op);
        /* Committed or not: the stat cache forgets these files. */
        for (unsigned i = 0; rc != 0 && i < g.n; i++)
            dbfs_cache_inval_ino(c->fs, g.ino[i]);
        if (rc == -EAGAIN)
            return done ? (int)done : -EAGAIN;
        if (rc != 0)
            g_warning("atime: storing the deferred atime of %u files failed (%s): dropped", g.n,
                      g_strerror(-rc));
        dbfs_atime_drop(at, &g);
        done += g.n;
    }
    return (int)done;
}
