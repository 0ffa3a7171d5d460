/*
 * cache_wb.c -- the write-back buffer (see cache_wb.h for the model, the
 * state of a file and the invariants).
 *
 * Layout: NSHARDS shards, each a mutex, a condition variable (a take
 * waiting for a flush in flight) and a hash table inode -> wb_file. A
 * layer keeps its extents in an array sorted by chunk: streaming writes
 * append, and a flush reads them in order without sorting.
 *
 * Memory: an extent's buffer holds exactly its bytes [lo, hi), grown by
 * doubling (at most one chunk); its charge is its capacity plus the
 * bookkeeping, and the global charge is what the limit bounds. The charge
 * of layers in flight stays counted until cache_wb_done, so memory held is
 * what is counted.
 *
 * NOTES
 *   A put that fails with -ENOMEM part way through a multi-chunk write may
 *   leave some of its pieces buffered; those are the caller's own bytes,
 *   and the caller then writes the whole write synchronously after a
 *   flush, so the pieces are only stored twice with the same contents.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib.h>
#include <pthread.h>

#include "cache_wb.h"

#define CACHE_WB_SHARDS     16
#define CACHE_WB_MAX_LAYERS 64
#define CACHE_WB_EXT_MIN    512
/* Bookkeeping charged per extent and per layer, beyond data buffers (an
 * extent's headroom included). */
#define CACHE_WB_EXT_CHARGE   (sizeof(wb_ext) + 16 + CACHE_WB_HEADROOM)
#define CACHE_WB_LAYER_CHARGE (sizeof(wb_layer) + 64)

typedef struct {
    uint64_t chunk;
    uint32_t lo, hi;     /* the dirty bytes [lo, hi) of the chunk */
    uint32_t cap;        /* bytes allocated in data (after the headroom) */
    unsigned char *data; /* CACHE_WB_HEADROOM bytes into its allocation */
} wb_ext;

typedef struct wb_layer {
    wb_ext *ext; /* sorted by chunk */
    size_t n, cap;
    uint64_t end;  /* furthest byte end held */
    int64_t mtime; /* latest write time */
    struct wb_layer *next;
} wb_layer;

typedef struct {
    uint64_t ino;
    uint32_t gen;
    wb_layer *head, *tail; /* buffered layers, oldest first */
    unsigned nlayers;
    size_t charge;       /* of the buffered layers */
    int64_t since_us;    /* arrival of the oldest buffered data */
    bool flushing;       /* a taken flush is in flight */
    uint64_t flight_end; /* its overlay */
    int64_t flight_mtime;
    int err;   /* a dropped flush's error, until taken */
    bool gone; /* forgotten while flushing: done drops all */
} wb_file;

struct cache_wb_taken {
    uint64_t ino;
    uint32_t gen;
    wb_layer *head;
    size_t charge;
    uint64_t bytes;
    int64_t since_us, mtime;
    cache_wb_piece *pieces;
    size_t npieces;
};

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t idle; /* a flush ended */
    GHashTable *files;   /* &wb_file.ino -> wb_file */
} wb_shard;

struct cache_wb {
    size_t limit;
    uint32_t cs;
    unsigned max_layers;
    atomic_size_t bytes;
    atomic_uint_fast64_t files;
    atomic_uint_fast64_t writes, refused, flushes, flushed_bytes, errors;
    atomic_uint_fast64_t waiting; /* takes waiting for a flush in flight */
    wb_shard shard[CACHE_WB_SHARDS];
};

/* cache_wb_now_us -- see cache_wb.h: the monotonic clock in microseconds. */
int64_t cache_wb_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static wb_shard *wb_shard_of(cache_wb *wb, uint64_t ino)
{
    uint64_t h = ino * UINT64_C(0x9E3779B97F4A7C15);

    return &wb->shard[(h >> 32) % CACHE_WB_SHARDS];
}

static void wb_layer_free(wb_layer *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->ext[i].data)
            free(l->ext[i].data - CACHE_WB_HEADROOM);
    free(l->ext);
    free(l);
}

static void wb_layers_free(wb_layer *l)
{
    while (l) {
        wb_layer *next = l->next;

        wb_layer_free(l);
        l = next;
    }
}

static void wb_file_free(gpointer p)
{
    wb_file *f = p;

    wb_layers_free(f->head);
    g_free(f);
}

/* cache_wb_new -- see cache_wb.h. */
int cache_wb_new(const cache_wb_opts *o, cache_wb **out)
{
    cache_wb *wb;

    *out = NULL;
    if (o->limit == 0 || o->chunk_size == 0)
        return -EINVAL;
    wb = calloc(1, sizeof *wb);
    if (!wb)
        return -ENOMEM;
    wb->limit = o->limit;
    wb->cs = o->chunk_size;
    wb->max_layers = o->max_layers ? o->max_layers : CACHE_WB_MAX_LAYERS;
    for (unsigned i = 0; i < CACHE_WB_SHARDS; i++) {
        pthread_mutex_init(&wb->shard[i].lock, NULL);
        pthread_cond_init(&wb->shard[i].idle, NULL);
        wb->shard[i].files = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, wb_file_free);
    }
    *out = wb;
    return 0;
}

/* cache_wb_free -- see cache_wb.h. */
void cache_wb_free(cache_wb *wb)
{
    if (!wb)
        return;
    for (unsigned i = 0; i < CACHE_WB_SHARDS; i++) {
        g_hash_table_destroy(wb->shard[i].files);
        pthread_cond_destroy(&wb->shard[i].idle);
        pthread_mutex_destroy(&wb->shard[i].lock);
    }
    free(wb);
}

/* The index of chunk in l's extents, or where it would go (*found false). */
static size_t wb_find(const wb_layer *l, uint64_t chunk, bool *found)
{
    size_t lo = 0, hi = l->n;

    /* Streaming writes append: try the end first. */
    if (l->n > 0 && l->ext[l->n - 1].chunk < chunk) {
        *found = false;
        return l->n;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (l->ext[mid].chunk < chunk)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < l->n && l->ext[lo].chunk == chunk;
    return lo;
}

/* Can every piece of the write [off, off + len) join layer l? */
static bool wb_layer_fits(const cache_wb *wb, const wb_layer *l, uint64_t off, uint64_t len)
{
    for (uint64_t pos = off; pos < off + len;) {
        uint64_t chunk = pos / wb->cs;
        uint32_t at = (uint32_t)(pos % wb->cs);
        uint32_t n = (uint32_t)MIN((uint64_t)wb->cs - at, off + len - pos);
        bool found;
        size_t i = wb_find(l, chunk, &found);

        if (found && (at > l->ext[i].hi || at + n < l->ext[i].lo))
            return false;
        pos += n;
    }
    return true;
}

/*
 * Store n bytes at byte `at` of chunk in layer l; *charge grows by what was
 * allocated. Returns 0 or -ENOMEM (nothing changed for this piece).
 */
static int wb_layer_store(cache_wb *wb, wb_layer *l, uint64_t chunk, uint32_t at, uint32_t n,
                          const unsigned char *src, size_t *charge)
{
    bool found;
    size_t i = wb_find(l, chunk, &found);
    wb_ext *e;
    uint32_t lo, hi, need;

    if (!found) {
        if (l->n == l->cap) {
            size_t ncap = l->cap ? 2 * l->cap : 8;
            wb_ext *ne = realloc(l->ext, ncap * sizeof *ne);

            if (!ne)
                return -ENOMEM;
            l->ext = ne;
            l->cap = ncap;
        }
        memmove(&l->ext[i + 1], &l->ext[i], (l->n - i) * sizeof *l->ext);
        l->n++;
        e = &l->ext[i];
        memset(e, 0, sizeof *e);
        e->chunk = chunk;
        e->lo = e->hi = at;
        *charge += CACHE_WB_EXT_CHARGE;
    }
    e = &l->ext[i];
    lo = MIN(e->lo, at);
    hi = MAX(e->hi, at + n);
    need = hi - lo;
    if (need > e->cap) {
        uint32_t ncap = e->cap ? e->cap : CACHE_WB_EXT_MIN;
        unsigned char *nd;

        while (ncap < need)
            ncap *= 2;
        if (ncap > wb->cs)
            ncap = MAX(wb->cs, need);
        nd = realloc(e->data ? e->data - CACHE_WB_HEADROOM : NULL, CACHE_WB_HEADROOM + ncap);
        if (!nd) {
            if (e->hi == e->lo) { /* a fresh extent: take it back */
                memmove(&l->ext[i], &l->ext[i + 1], (l->n - i - 1) * sizeof *l->ext);
                l->n--;
                *charge -= CACHE_WB_EXT_CHARGE;
            }
            return -ENOMEM;
        }
        *charge += ncap - e->cap;
        e->data = nd + CACHE_WB_HEADROOM;
        e->cap = ncap;
    }
    if (lo < e->lo && e->hi > e->lo)
        memmove(e->data + (e->lo - lo), e->data, e->hi - e->lo);
    memcpy(e->data + (at - lo), src, n);
    e->lo = lo;
    e->hi = hi;
    return 0;
}

/* cache_wb_put -- see cache_wb.h. */
int cache_wb_put(cache_wb *wb, uint64_t ino, uint32_t gen, uint64_t off, const void *data,
                 uint32_t len, int64_t now_ns, size_t *file_bytes)
{
    wb_shard *sh = wb_shard_of(wb, ino);
    size_t charge = 0;
    wb_file *f;
    wb_layer *l;
    int rc = 0;

    if (len == 0)
        return -EINVAL;
    if (atomic_load(&wb->bytes) + len + CACHE_WB_LAYER_CHARGE > wb->limit) {
        atomic_fetch_add(&wb->refused, 1);
        return -ENOSPC;
    }
    pthread_mutex_lock(&sh->lock);
    f = g_hash_table_lookup(sh->files, &ino);
    if (!f) {
        f = g_new0(wb_file, 1);
        f->ino = ino;
        g_hash_table_insert(sh->files, &f->ino, f);
        atomic_fetch_add(&wb->files, 1);
    }
    f->gen = gen;
    if (!f->head)
        f->since_us = cache_wb_now_us();
    l = f->tail;
    if (!l || !wb_layer_fits(wb, l, off, len)) {
        if (f->nlayers >= wb->max_layers) {
            atomic_fetch_add(&wb->refused, 1);
            rc = -EBUSY;
            goto out;
        }
        l = calloc(1, sizeof *l);
        if (!l) {
            rc = -ENOMEM;
            goto out;
        }
        if (f->tail)
            f->tail->next = l;
        else
            f->head = l;
        f->tail = l;
        f->nlayers++;
        charge += CACHE_WB_LAYER_CHARGE;
    }
    for (uint64_t pos = off; pos < off + len;) {
        uint32_t at = (uint32_t)(pos % wb->cs);
        uint32_t n = (uint32_t)MIN((uint64_t)wb->cs - at, off + len - pos);

        rc = wb_layer_store(wb, l, pos / wb->cs, at, n, (const unsigned char *)data + (pos - off),
                            &charge);
        if (rc != 0)
            break;
        pos += n;
        l->end = MAX(l->end, pos);
    }
    if (rc == 0) {
        l->mtime = MAX(l->mtime, now_ns);
        atomic_fetch_add(&wb->writes, 1);
    }
out:
    f->charge += charge;
    atomic_fetch_add(&wb->bytes, charge);
    if (file_bytes)
        *file_bytes = f->charge;
    if (!f->head && !f->flushing && f->err == 0) {
        g_hash_table_remove(sh->files, &ino);
        atomic_fetch_sub(&wb->files, 1);
    }
    pthread_mutex_unlock(&sh->lock);
    return rc;
}

/* cache_wb_overlay -- see cache_wb.h. */
bool cache_wb_overlay(cache_wb *wb, uint64_t ino, uint64_t *end, int64_t *mtime_ns)
{
    wb_shard *sh;
    wb_file *f;
    bool held = false;

    if (cache_wb_empty(wb))
        return false;
    sh = wb_shard_of(wb, ino);
    pthread_mutex_lock(&sh->lock);
    f = g_hash_table_lookup(sh->files, &ino);
    if (f && (f->head || f->flushing)) {
        uint64_t e = f->flushing ? f->flight_end : 0;
        int64_t m = f->flushing ? f->flight_mtime : INT64_MIN;

        for (wb_layer *l = f->head; l; l = l->next) {
            e = MAX(e, l->end);
            m = MAX(m, l->mtime);
        }
        *end = e;
        *mtime_ns = m;
        held = true;
    }
    pthread_mutex_unlock(&sh->lock);
    return held;
}

/* cache_wb_empty -- see cache_wb.h. */
bool cache_wb_empty(const cache_wb *wb)
{
    return atomic_load(&((cache_wb *)wb)->files) == 0;
}

/* cache_wb_bytes -- see cache_wb.h. */
uint64_t cache_wb_bytes(const cache_wb *wb)
{
    return atomic_load(&((cache_wb *)wb)->bytes);
}

/* The pieces of t's layers, in order (malloc'd into t). -ENOMEM or 0. */
static int wb_taken_index(cache_wb_taken *t)
{
    size_t n = 0, k = 0;
    unsigned layer = 0;

    for (wb_layer *l = t->head; l; l = l->next)
        n += l->n;
    t->pieces = calloc(n ? n : 1, sizeof *t->pieces);
    if (!t->pieces)
        return -ENOMEM;
    for (wb_layer *l = t->head; l; l = l->next, layer++) {
        for (size_t i = 0; i < l->n; i++) {
            const wb_ext *e = &l->ext[i];

            t->pieces[k].chunk = e->chunk;
            t->pieces[k].at = e->lo;
            t->pieces[k].n = e->hi - e->lo;
            t->pieces[k].data = e->data;
            t->pieces[k].layer = layer;
            t->bytes += e->hi - e->lo;
            k++;
        }
        t->mtime = MAX(t->mtime, l->mtime);
    }
    t->npieces = k;
    return 0;
}

/* cache_wb_take -- see cache_wb.h. */
cache_wb_taken *cache_wb_take(cache_wb *wb, uint64_t ino)
{
    wb_shard *sh = wb_shard_of(wb, ino);
    cache_wb_taken *t = NULL;
    wb_file *f;

    if (cache_wb_empty(wb))
        return NULL;
    pthread_mutex_lock(&sh->lock);
    for (;;) {
        f = g_hash_table_lookup(sh->files, &ino);
        if (!f || !f->flushing)
            break;
        atomic_fetch_add(&wb->waiting, 1);
        pthread_cond_wait(&sh->idle, &sh->lock);
        atomic_fetch_sub(&wb->waiting, 1);
    }
    if (!f || !f->head)
        goto out;
    t = calloc(1, sizeof *t);
    if (!t)
        goto out;
    t->ino = ino;
    t->gen = f->gen;
    t->head = f->head;
    t->charge = f->charge;
    t->since_us = f->since_us;
    t->mtime = INT64_MIN;
    if (wb_taken_index(t) != 0) {
        free(t);
        t = NULL;
        goto out;
    }
    f->head = f->tail = NULL;
    f->nlayers = 0;
    f->charge = 0;
    f->flushing = true;
    f->flight_end = 0;
    for (wb_layer *l = t->head; l; l = l->next)
        f->flight_end = MAX(f->flight_end, l->end);
    f->flight_mtime = t->mtime;
out:
    pthread_mutex_unlock(&sh->lock);
    return t;
}

/* cache_wb_taken_pieces -- see cache_wb.h. */
const cache_wb_piece *cache_wb_taken_pieces(const cache_wb_taken *t, size_t *n)
{
    *n = t->npieces;
    return t->pieces;
}

/* cache_wb_taken_gen -- see cache_wb.h. */
uint32_t cache_wb_taken_gen(const cache_wb_taken *t)
{
    return t->gen;
}

/* cache_wb_taken_mtime -- see cache_wb.h. */
int64_t cache_wb_taken_mtime(const cache_wb_taken *t)
{
    return t->mtime;
}

/* cache_wb_taken_bytes -- see cache_wb.h. */
uint64_t cache_wb_taken_bytes(const cache_wb_taken *t)
{
    return t->bytes;
}

/* cache_wb_done -- see cache_wb.h. */
void cache_wb_done(cache_wb *wb, cache_wb_taken *t, int outcome)
{
    wb_shard *sh = wb_shard_of(wb, t->ino);
    wb_file *f;

    pthread_mutex_lock(&sh->lock);
    f = g_hash_table_lookup(sh->files, &t->ino);
    atomic_fetch_add(&wb->flushes, 1);
    if (outcome == 0)
        atomic_fetch_add(&wb->flushed_bytes, t->bytes);
    else if (outcome < 0)
        atomic_fetch_add(&wb->errors, 1);
    if (f && f->gone) {
        g_hash_table_remove(sh->files, &t->ino);
        atomic_fetch_sub(&wb->files, 1);
    } else if (f) {
        f->flushing = false;
        if (outcome == CACHE_WB_KEEP) {
            wb_layer *last = t->head;
            unsigned n = 1;

            while (last->next) {
                last = last->next;
                n++;
            }
            last->next = f->head;
            if (!f->head)
                f->tail = last;
            f->head = t->head;
            f->nlayers += n;
            f->charge += t->charge;
            f->since_us = t->since_us;
            t->head = NULL;
            t->charge = 0;
        } else if (outcome < 0 && outcome != -ESTALE) {
            f->err = outcome;
        }
        if (!f->head && f->err == 0) {
            g_hash_table_remove(sh->files, &t->ino);
            atomic_fetch_sub(&wb->files, 1);
        }
    }
    atomic_fetch_sub(&wb->bytes, t->charge);
    pthread_cond_broadcast(&sh->idle);
    pthread_mutex_unlock(&sh->lock);
    wb_layers_free(t->head);
    free(t->pieces);
    free(t);
}

/* cache_wb_take_error -- see cache_wb.h. */
int cache_wb_take_error(cache_wb *wb, uint64_t ino)
{
    wb_shard *sh;
    wb_file *f;
    int err = 0;

    if (cache_wb_empty(wb))
        return 0;
    sh = wb_shard_of(wb, ino);
    pthread_mutex_lock(&sh->lock);
    f = g_hash_table_lookup(sh->files, &ino);
    if (f && f->err) {
        err = f->err;
        f->err = 0;
        if (!f->head && !f->flushing) {
            g_hash_table_remove(sh->files, &ino);
            atomic_fetch_sub(&wb->files, 1);
        }
    }
    pthread_mutex_unlock(&sh->lock);
    return err;
}

/* cache_wb_forget -- see cache_wb.h. */
void cache_wb_forget(cache_wb *wb, uint64_t ino)
{
    wb_shard *sh;
    wb_file *f;

    if (cache_wb_empty(wb))
        return;
    sh = wb_shard_of(wb, ino);
    pthread_mutex_lock(&sh->lock);
    f = g_hash_table_lookup(sh->files, &ino);
    if (f) {
        atomic_fetch_sub(&wb->bytes, f->charge);
        wb_layers_free(f->head);
        f->head = f->tail = NULL;
        f->nlayers = 0;
        f->charge = 0;
        f->err = 0;
        if (f->flushing) {
            f->gone = true;
        } else {
            g_hash_table_remove(sh->files, &ino);
            atomic_fetch_sub(&wb->files, 1);
        }
    }
    pthread_mutex_unlock(&sh->lock);
}

typedef struct {
    int64_t since;
    uint64_t ino;
} wb_due;

static int wb_due_cmp(const void *a, const void *b)
{
    const wb_due *x = a, *y = b;

    return (x->since > y->since) - (x->since < y->since);
}

/* cache_wb_due -- see cache_wb.h. */
size_t cache_wb_due(cache_wb *wb, int64_t before, uint64_t *inos, size_t max)
{
    GArray *due = g_array_new(FALSE, FALSE, sizeof(wb_due));
    size_t n;

    for (unsigned i = 0; i < CACHE_WB_SHARDS && !cache_wb_empty(wb); i++) {
        wb_shard *sh = &wb->shard[i];
        GHashTableIter it;
        gpointer v;

        pthread_mutex_lock(&sh->lock);
        g_hash_table_iter_init(&it, sh->files);
        while (g_hash_table_iter_next(&it, NULL, &v)) {
            wb_file *f = v;

            if (f->head && f->since_us <= before) {
                wb_due d = {f->since_us, f->ino};

                g_array_append_val(due, d);
            }
        }
        pthread_mutex_unlock(&sh->lock);
    }
    g_array_sort(due, wb_due_cmp);
    n = MIN(max, due->len);
    for (size_t i = 0; i < n; i++)
        inos[i] = g_array_index(due, wb_due, i).ino;
    g_array_free(due, TRUE);
    return n;
}

/* cache_wb_get_stats -- see cache_wb.h. */
void cache_wb_get_stats(cache_wb *wb, cache_wb_stats *out)
{
    int64_t now = cache_wb_now_us(), oldest = INT64_MAX;

    memset(out, 0, sizeof *out);
    out->bytes = atomic_load(&wb->bytes);
    out->files = atomic_load(&wb->files);
    out->limit = wb->limit;
    out->writes = atomic_load(&wb->writes);
    out->refused = atomic_load(&wb->refused);
    out->flushes = atomic_load(&wb->flushes);
    out->flushed_bytes = atomic_load(&wb->flushed_bytes);
    out->errors = atomic_load(&wb->errors);
    out->waiting = atomic_load(&wb->waiting);
    for (unsigned i = 0; i < CACHE_WB_SHARDS && out->files > 0; i++) {
        wb_shard *sh = &wb->shard[i];
        GHashTableIter it;
        gpointer v;

        pthread_mutex_lock(&sh->lock);
        g_hash_table_iter_init(&it, sh->files);
        while (g_hash_table_iter_next(&it, NULL, &v)) {
            const wb_file *f = v;

            if (f->head && f->since_us < oldest)
                oldest = f->since_us;
        }
        pthread_mutex_unlock(&sh->lock);
    }
    out->oldest_age_us = oldest == INT64_MAX ? 0 : now - oldest;
}
