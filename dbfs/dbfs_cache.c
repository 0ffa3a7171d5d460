/*
 * dbfs_cache.c -- the metadata caches seen from dbfs: the stat cache
 * (inode -> attributes or gone) and the naming cache ((directory, name) ->
 * inode or absent), opened from dbfs_config, and the calls through which
 * every dbfs operation reads them and keeps them exact (the contract is in
 * dbfs_cache.h; the protocol and why it is exact in cache/cache_lru.h and
 * cache/cache_name.c).
 *
 * What each operation tells the caches (dbfs_attr.c, dbfs_names.c,
 * dbfs_readdir.c, dbfs_read.c, dbfs_data.c):
 *
 *   GETATTR, ACCESS, LOOKUP, READLINK, READDIR(PLUS), FSSTAT (reads):
 *     hit -> no round trip; miss -> one, whose rows are filled in (a
 *     missing (inode, generation) is filled as gone).
 *   SETATTR, WRITE:   the file (known) -> store its new attributes.
 *   CREATE & co.:     the directory (known) -> store; the name -> store;
 *                     the new inode -> put_new; an existing file that an
 *                     UNCHECKED create truncated -> victim (dropped).
 *   REMOVE, RMDIR:    the directory -> store; the name -> absent; the
 *                     object -> victim: gone, or dropped (nlink, ctime).
 *   RENAME:           both directories -> store; the old name -> absent;
 *                     the new name -> the object; the object (ctime) and
 *                     the replaced target -> victims.
 *   LINK:             the file and the directory (known) -> store; the
 *                     name -> the file.
 *   Any mutation whose outcome is unknown (lost connection): both caches
 *   are reset. So are they whenever a connection is found broken and when
 *   it is made again (dbfs_cache_db_lost, from dbfs_conn.c): a restarted
 *   PostgreSQL may lack an async export's last commits.
 *
 * NOTES
 *   A dbfs_cache belongs to its dbfs and is shared by every connection's
 *   thread; it is created by dbfs_open and freed by dbfs_close. The caches
 *   copy values in and out: nothing here points into caller memory after
 *   a call returns. With [cache] coherence = single the caches assume
 *   this process is the database's only writer; with shared, other
 *   frontends' changes arrive as invalidations (dbfs_coh.c) and every
 *   lookup first waits for its request's barrier (fs->coh_fresh).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "cache_stat.h"
#include "dbfs_cache.h"

struct dbfs_cache {
    cache_stat *stat;  /* NULL: off */
    cache_name *name;  /* NULL: off */
    cache_dir *dir;    /* listings; NULL: off (needs both caches above) */
    uint32_t stat_cap; /* configured entries (0: off) */
    uint32_t name_cap;
    size_t dir_bytes;
};

/* Bytes of listings per configured naming entry (the listing cache has no
 * key of its own: it is part of the naming cache). */
#define DBFS_DIR_BYTES_PER_NAME 64

/*
 * dbfs_cache_open -- see dbfs_cache.h. Logs what it opened.
 */
int dbfs_cache_open(dbfs *fs, const dbfs_config *cfg)
{
    dbfs_cache *dc;
    int rc = 0;

    fs->cache = NULL;
    if (cfg->stat_cache_entries == 0 && cfg->name_cache_entries == 0)
        return 0;
    dc = calloc(1, sizeof *dc);
    if (!dc)
        return -ENOMEM;
    dc->stat_cap = cfg->stat_cache_entries;
    dc->name_cap = cfg->name_cache_entries;
    if (dc->stat_cap)
        rc = cache_stat_new(dc->stat_cap, sizeof(dbfs_attr), &dc->stat);
    if (rc == 0 && dc->name_cap)
        rc = cache_name_new(dc->name_cap, &dc->name);
    if (rc == 0 && dc->stat && dc->name) {
        dc->dir_bytes = (size_t)dc->name_cap * DBFS_DIR_BYTES_PER_NAME;
        if (dc->dir_bytes < 4096)
            dc->dir_bytes = 4096;
        rc = cache_dir_new(dc->dir_bytes, &dc->dir);
    }
    if (rc != 0) {
        cache_stat_free(dc->stat);
        cache_name_free(dc->name);
        cache_dir_free(dc->dir);
        free(dc);
        return rc;
    }
    fs->cache = dc;
    g_info("metadata caches: stat %s (%u entries), naming %s (%u entries)", dc->stat ? "on" : "off",
           dc->stat_cap, dc->name ? "on" : "off", dc->name_cap);
    if (dc->dir)
        g_info("listing cache: on (%zu bytes, listings of up to %zu entries)", dc->dir_bytes,
               cache_dir_max_entries(dc->dir));
    return 0;
}

/*
 * dbfs_cache_close -- see dbfs_cache.h.
 */
void dbfs_cache_close(dbfs *fs)
{
    dbfs_cache *dc = fs ? fs->cache : NULL;

    if (!dc)
        return;
    cache_stat_free(dc->stat);
    cache_name_free(dc->name);
    cache_dir_free(dc->dir);
    free(dc);
    fs->cache = NULL;
}

/* dbfs_cache_attr and dbfs_cache_attr_quick: the stat cache's answer,
 * counted or not (quick: as dbfs_cache_name_look). */
static int dbfs_cache_attr_look(dbfs *fs, dbfs_fh fh, dbfs_attr *out, bool quick)
{
    if (!fs->cache || !fs->cache->stat)
        return -ENOENT;
    if (fs->coh_fresh && (quick || !fs->coh_fresh(fs->coh)))
        return -ENOENT;
    return quick ? cache_stat_find(fs->cache->stat, fh.ino, fh.gen, out)
                 : cache_stat_get(fs->cache->stat, fh.ino, fh.gen, out);
}

/*
 * dbfs_cache_attr -- see dbfs_cache.h.
 */
int dbfs_cache_attr(dbfs *fs, dbfs_fh fh, dbfs_attr *out)
{
    return dbfs_cache_attr_look(fs, fh, out, false);
}

/*
 * dbfs_cache_attr_quick -- see dbfs_cache.h.
 */
int dbfs_cache_attr_quick(dbfs *fs, dbfs_fh fh, dbfs_attr *out)
{
    return dbfs_cache_attr_look(fs, fh, out, true);
}

/* dbfs_cache_name and dbfs_cache_name_quick: the naming cache's answer,
 * counted or not (quick: without the shared file system's freshness
 * check, which may take a round trip: a miss). */
static cache_name_result dbfs_cache_name_look(dbfs *fs, uint64_t dir, const char *name,
                                              dbfs_fh *out, bool quick)
{
    uint64_t ino = 0;
    uint32_t gen = 0;
    cache_name_result r;

    if (!fs->cache || !fs->cache->name)
        return CACHE_NAME_MISS;
    if (fs->coh_fresh && (quick || !fs->coh_fresh(fs->coh)))
        return CACHE_NAME_MISS;
    r = quick ? cache_name_find(fs->cache->name, dir, name, strlen(name), &ino, &gen)
              : cache_name_get(fs->cache->name, dir, name, strlen(name), &ino, &gen);
    if (r == CACHE_NAME_FOUND && out) {
        out->ino = ino;
        out->gen = gen;
    }
    return r;
}

/*
 * dbfs_cache_name -- see dbfs_cache.h.
 */
cache_name_result dbfs_cache_name(dbfs *fs, uint64_t dir, const char *name, dbfs_fh *out)
{
    return dbfs_cache_name_look(fs, dir, name, out, false);
}

/*
 * dbfs_cache_name_quick -- see dbfs_cache.h.
 */
cache_name_result dbfs_cache_name_quick(dbfs *fs, uint64_t dir, const char *name, dbfs_fh *out)
{
    return dbfs_cache_name_look(fs, dir, name, out, true);
}

/*
 * dbfs_cache_attr_hit -- see dbfs_cache.h.
 */
void dbfs_cache_attr_hit(dbfs *fs, dbfs_fh fh)
{
    if (fs->cache && fs->cache->stat)
        cache_stat_hit(fs->cache->stat, fh.ino);
}

/*
 * dbfs_cache_name_hit -- see dbfs_cache.h.
 */
void dbfs_cache_name_hit(dbfs *fs, uint64_t dir, const char *name)
{
    if (fs->cache && fs->cache->name)
        cache_name_hit(fs->cache->name, dir, name, strlen(name));
}

/*
 * dbfs_cache_dir -- see dbfs_cache.h.
 */
cache_dir *dbfs_cache_dir(dbfs *fs)
{
    return fs->cache ? fs->cache->dir : NULL;
}

/* The stat cache keeps whole dbfs_attr values; the naming cache takes
 * every name dbfs may store. */
_Static_assert(sizeof(dbfs_attr) <= CACHE_STAT_VAL_MAX, "dbfs_attr fits a stat cache value");
_Static_assert(DBFS_NAME_MAX <= CACHE_NAME_MAX, "a name fits a naming cache entry");

/* Who a dbfs_attr describes, as the stat cache knows files. */
static cache_stat_id dbfs_cache_id(const dbfs_attr *a)
{
    return (cache_stat_id){.ino = a->ino, .gen = a->gen, .change = a->change};
}

static void dbfs_cache_tickets(dbfs_cache_op *op)
{
    dbfs_cache *dc = op->cache;

    if (dc->stat)
        op->st_ticket = cache_stat_ticket(dc->stat);
    if (dc->name)
        op->nm_ticket = cache_name_ticket(dc->name);
}

/*
 * dbfs_cache_read_begin -- see dbfs_cache.h.
 */
void dbfs_cache_read_begin(dbfs *fs, dbfs_cache_op *op)
{
    memset(op, 0, sizeof *op);
    op->cache = fs->cache;
    if (op->cache)
        dbfs_cache_tickets(op);
}

/*
 * dbfs_cache_mut_begin -- see dbfs_cache.h. The tickets are taken before
 * the guards are held, so they predate the transaction (put_new and the
 * fills of objects read but not changed use them).
 */
void dbfs_cache_mut_begin(dbfs *fs, dbfs_cache_op *op, const uint64_t *inos, unsigned ninos,
                          const uint64_t *dirs, unsigned ndirs)
{
    memset(op, 0, sizeof *op);
    op->cache = fs->cache;
    op->mut = true;
    if (!op->cache)
        return;
    dbfs_cache_tickets(op);
    op->ninos = ninos < CACHE_LRU_MUT_MAX ? ninos : CACHE_LRU_MUT_MAX;
    op->ndirs = ndirs < CACHE_LRU_MUT_MAX ? ndirs : CACHE_LRU_MUT_MAX;
    if (op->ninos)
        memcpy(op->inos, inos, op->ninos * sizeof *inos);
    if (op->ndirs)
        memcpy(op->dirs, dirs, op->ndirs * sizeof *dirs);
    if (op->cache->stat)
        cache_stat_mut_begin(op->cache->stat, &op->st_mut, op->inos, op->ninos);
    if (op->cache->name)
        cache_name_mut_begin(op->cache->name, &op->nm_mut, op->dirs, op->ndirs);
}

static bool dbfs_cache_in(uint64_t g, const uint64_t *set, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (set[i] == g)
            return true;
    return false;
}

/*
 * dbfs_cache_put_attr -- see dbfs_cache.h. A mutation stores what it holds
 * (cache_lru_store: removed instead if another mutation overlapped);
 * everything else is a fill with the ticket from begin.
 */
void dbfs_cache_put_attr(dbfs_cache_op *op, const dbfs_attr *a)
{
    if (!op->cache || !op->cache->stat)
        return;
    if (dbfs_attr_is_xlink(a)) {
        /* A transformation link's attributes follow its base's: never kept. */
        if (op->mut)
            cache_stat_forget(op->cache->stat, a->ino);
        return;
    }
    if (op->mut && dbfs_cache_in(a->ino, op->inos, op->ninos))
        cache_stat_store(op->cache->stat, &op->st_mut, dbfs_cache_id(a), a);
    else
        cache_stat_fill(op->cache->stat, op->st_ticket, dbfs_cache_id(a), a);
}

/*
 * dbfs_cache_put_gone -- see dbfs_cache.h.
 */
void dbfs_cache_put_gone(dbfs_cache_op *op, dbfs_fh fh)
{
    if (op->cache && op->cache->stat)
        cache_stat_fill_gone(op->cache->stat, op->st_ticket, fh.ino, fh.gen);
}

/*
 * dbfs_cache_put_name -- see dbfs_cache.h.
 */
void dbfs_cache_put_name(dbfs_cache_op *op, uint64_t dir, const char *name, const dbfs_attr *obj)
{
    cache_name *n = op->cache ? op->cache->name : NULL;
    size_t len = strlen(name);

    if (!n)
        return;
    if (op->mut && dbfs_cache_in(dir, op->dirs, op->ndirs))
        cache_name_store(n, &op->nm_mut, dir, name, len, obj != NULL, obj ? obj->ino : 0,
                         obj ? obj->gen : 0);
    else if (op->mut)
        cache_name_forget(n, dir, name, len); /* a name the caller did not announce */
    else
        cache_name_fill(n, op->nm_ticket, dir, name, len, obj != NULL, obj ? obj->ino : 0,
                        obj ? obj->gen : 0);
}

/*
 * dbfs_cache_put_new -- see dbfs_cache.h. No reader can have read an inode
 * before the transaction that made it committed, so a fill with the
 * ticket from before the transaction is exact: it is refused only if a
 * mutation of the new inode's stripe ran since (then that mutation's
 * result, or nothing, stays).
 */
void dbfs_cache_put_new(dbfs_cache_op *op, const dbfs_attr *a)
{
    if (op->cache && op->cache->stat && !dbfs_attr_is_xlink(a))
        cache_stat_fill(op->cache->stat, op->st_ticket, dbfs_cache_id(a), a);
}

/*
 * dbfs_cache_victim -- see dbfs_cache.h. An inode the mutation holds is
 * stored like any other (put_attr) or recorded gone.
 */
void dbfs_cache_victim(dbfs_cache_op *op, const dbfs_attr *a, bool gone)
{
    if (!op->cache || !op->cache->stat)
        return;
    if (!gone && op->mut && dbfs_cache_in(a->ino, op->inos, op->ninos) && !dbfs_attr_is_xlink(a))
        cache_stat_store(op->cache->stat, &op->st_mut, dbfs_cache_id(a), a);
    else
        cache_stat_victim(op->cache->stat, a->ino, a->gen, gone);
}

/* Empty every metadata cache and refuse the fills begun before. */
static void dbfs_cache_reset_all(dbfs_cache *dc)
{
    if (dc->stat)
        cache_stat_reset(dc->stat);
    if (dc->name)
        cache_name_reset(dc->name);
    if (dc->dir)
        cache_dir_reset(dc->dir);
}

/*
 * dbfs_cache_lost -- see dbfs_cache.h. Logged: it empties both caches.
 */
void dbfs_cache_lost(dbfs_cache_op *op)
{
    if (!op->cache)
        return;
    g_info("metadata caches: a change's outcome is unknown (connection lost): resetting");
    dbfs_cache_reset_all(op->cache);
}

/*
 * dbfs_cache_db_lost -- see dbfs_cache.h. Logged at debug level: it comes
 * once per connection and attempt while the database is away.
 */
void dbfs_cache_db_lost(dbfs *fs)
{
    if (!fs || !fs->cache)
        return;
    g_debug("metadata caches: a database connection was lost: resetting");
    dbfs_cache_reset_all(fs->cache);
}

/*
 * dbfs_cache_end -- see dbfs_cache.h.
 */
void dbfs_cache_end(dbfs_cache_op *op)
{
    if (!op->cache || !op->mut)
        return;
    if (op->cache->stat)
        cache_stat_mut_end(op->cache->stat, &op->st_mut);
    if (op->cache->name)
        cache_name_mut_end(op->cache->name, &op->nm_mut);
    op->mut = false;
}

/*
 * dbfs_cache_file_begin -- see dbfs_cache.h.
 */
void dbfs_cache_file_begin(dbfs *fs, dbfs_fh fh, dbfs_cache_op *op)
{
    dbfs_cache_mut_begin(fs, op, &fh.ino, 1, NULL, 0);
}

/*
 * dbfs_cache_file_end -- see dbfs_cache.h. A failed change committed
 * nothing; the entry is dropped all the same (cheap, and right whatever
 * the failure was). A transient failure may have committed: the file is
 * the only inode a data change touches, so dropping it is enough.
 */
void dbfs_cache_file_end(dbfs_cache_op *op, int rc, const dbfs_attr *post)
{
    if (op->cache && op->cache->stat && op->ninos == 1) {
        if (rc == 0 && post && post->ino == op->inos[0] && !dbfs_attr_is_xlink(post))
            cache_stat_store(op->cache->stat, &op->st_mut, dbfs_cache_id(post), post);
        else
            cache_stat_forget(op->cache->stat, op->inos[0]);
    }
    dbfs_cache_end(op);
}

/*
 * dbfs_cache_inval_ino -- see dbfs_cache.h. cache_stat_victim holds the
 * inode's stripe around the removal.
 */
void dbfs_cache_inval_ino(dbfs *fs, uint64_t ino)
{
    if (fs->cache && fs->cache->stat)
        cache_stat_victim(fs->cache->stat, ino, 0, false);
}

/*
 * dbfs_cache_inval_name -- see dbfs_cache.h.
 */
void dbfs_cache_inval_name(dbfs *fs, uint64_t dir, const char *name, size_t len)
{
    cache_lru_mut m;

    if (!fs->cache || !fs->cache->name)
        return;
    cache_name_mut_begin(fs->cache->name, &m, &dir, 1);
    cache_name_forget(fs->cache->name, dir, name, len);
    cache_name_mut_end(fs->cache->name, &m);
}

/*
 * dbfs_cache_inval_all -- see dbfs_cache.h.
 */
void dbfs_cache_inval_all(dbfs *fs)
{
    if (!fs->cache)
        return;
    if (fs->cache->stat)
        cache_stat_reset(fs->cache->stat);
    if (fs->cache->name)
        cache_name_reset(fs->cache->name);
    if (fs->cache->dir)
        cache_dir_reset(fs->cache->dir);
}

static void dbfs_cache_figures_of(dbfs_cache_figures *f, const char *name, bool on, uint64_t cap,
                                  const cache_lru_stats *st)
{
    memset(f, 0, sizeof *f);
    f->name = name;
    f->enabled = on;
    f->capacity = cap;
    if (!st)
        return;
    f->entries = st->entries;
    f->hits = st->hits;
    f->misses = st->misses;
    f->inserts = st->inserts;
    f->evictions = st->evictions;
    f->invalidations = st->invalidations;
    f->refused = st->refused;
}

/*
 * dbfs_cache_figures_meta -- see dbfs_cache.h. Rows: "stat", "naming"
 * (capacity in entries), "listing" (capacity in bytes).
 */
unsigned dbfs_cache_figures_meta(const dbfs *fs, dbfs_cache_figures *out, unsigned max)
{
    const dbfs_cache *dc = fs ? fs->cache : NULL;
    cache_lru_stats st;
    unsigned n = 0;

    if (n < max) {
        bool on = dc && dc->stat;
        if (on)
            cache_stat_stats(dc->stat, &st);
        dbfs_cache_figures_of(&out[n++], "stat", on, on ? dc->stat_cap : 0, on ? &st : NULL);
    }
    if (n < max) {
        bool on = dc && dc->name;
        if (on)
            cache_name_stats(dc->name, &st);
        dbfs_cache_figures_of(&out[n++], "naming", on, on ? dc->name_cap : 0, on ? &st : NULL);
    }
    if (n < max) {
        bool on = dc && dc->dir;
        if (on)
            cache_dir_stats(dc->dir, &st);
        dbfs_cache_figures_of(&out[n++], "listing", on, on ? dc->dir_bytes : 0, on ? &st : NULL);
    }
    return n;
}

/* dbfs_cache_figures_tagged -- see dbfs_cache.h. */
void dbfs_cache_figures_tagged(const char *name, const cache_tagged_stats *st,
                               dbfs_cache_figures *out)
{
    memset(out, 0, sizeof *out);
    out->name = name;
    if (!st)
        return;
    out->enabled = true;
    out->capacity = st->capacity;
    out->entries = st->bytes;
    out->hits = st->hits;
    out->misses = st->misses;
    out->inserts = st->inserts;
    out->evictions = st->evictions;
    out->invalidations = st->invalidations;
    out->refused = st->stale;
}
