/*
 * cache_hist.c -- which chunks of a file changed since when (the facts
 * and why they keep the chunk buffer cache exact: cache_hist.h).
 *
 * One slot per file being written (the inode's hash picks it): the chain
 * [base, head] and a sorted array of disjoint chunk ranges, each with the
 * ctime of the last change that touched it. A chunk in no range has not
 * changed since base.
 *
 *   slot: EMPTY --moved--> TRACKING (base = pre, head = post, one range)
 *         TRACKING --moved, pre == head--> TRACKING (range set, head = post)
 *         TRACKING --moved, post <= head--> TRACKING (late report: ignored)
 *         TRACKING --moved otherwise, or another inode--> restarted at it
 *
 * NOTES
 *   Setting a range cuts the ranges it overlaps (their parts outside it
 *   stay). Past CACHE_HIST_RANGES the two neighbours closest together
 *   merge into their hull, with the later ctime of the two: conservative.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache_hist.h"

#define CACHE_HIST_FIRST_CAP 16

typedef struct {
    uint64_t lo, hi; /* chunks lo..hi */
    int64_t post;    /* last changed at this ctime */
} cache_hist_range;

typedef struct {
    pthread_mutex_t lock;
    bool used;
    uint64_t ino;
    int64_t base, head;
    unsigned n, cap;
    cache_hist_range *r; /* sorted by lo, disjoint */
} cache_hist_slot;

struct cache_hist {
    cache_hist_slot slots[CACHE_HIST_SLOTS];
};

static cache_hist_slot *cache_hist_slot_of(cache_hist *h, uint64_t ino)
{
    uint64_t x = ino * 0x9E3779B97F4A7C15ull;

    return &h->slots[(x >> 40) % CACHE_HIST_SLOTS];
}

/* cache_hist_new -- see cache_hist.h. */
cache_hist *cache_hist_new(void)
{
    cache_hist *h = calloc(1, sizeof *h);

    if (!h)
        return NULL;
    for (unsigned i = 0; i < CACHE_HIST_SLOTS; i++)
        pthread_mutex_init(&h->slots[i].lock, NULL);
    return h;
}

/* cache_hist_free -- see cache_hist.h. */
void cache_hist_free(cache_hist *h)
{
    if (!h)
        return;
    for (unsigned i = 0; i < CACHE_HIST_SLOTS; i++) {
        pthread_mutex_destroy(&h->slots[i].lock);
        free(h->slots[i].r);
    }
    free(h);
}

/* Room for two more ranges (a cut can add two). False: out of memory. */
static bool cache_hist_room(cache_hist_slot *s)
{
    while (s->n + 2 > CACHE_HIST_RANGES) {
        /* Merge the two neighbours closest together. */
        unsigned best = 0;
        uint64_t gap = UINT64_MAX;

        for (unsigned i = 0; i + 1 < s->n; i++) {
            uint64_t g = s->r[i + 1].lo - s->r[i].hi;
            if (g < gap) {
                gap = g;
                best = i;
            }
        }
        s->r[best].hi = s->r[best + 1].hi;
        if (s->r[best + 1].post > s->r[best].post)
            s->r[best].post = s->r[best + 1].post;
        memmove(&s->r[best + 1], &s->r[best + 2], (s->n - best - 2) * sizeof *s->r);
        s->n--;
    }
    if (s->n + 2 <= s->cap)
        return true;
    unsigned cap = s->cap ? s->cap * 2 : CACHE_HIST_FIRST_CAP;
    if (cap > CACHE_HIST_RANGES)
        cap = CACHE_HIST_RANGES;
    cache_hist_range *r = realloc(s->r, cap * sizeof *r);
    if (!r)
        return false;
    s->r = r;
    s->cap = cap;
    return true;
}

/* Chunks lo..hi last changed at post (lo <= hi). False: out of memory. */
static bool cache_hist_set(cache_hist_slot *s, uint64_t lo, uint64_t hi, int64_t post)
{
    cache_hist_range add[3];
    unsigned i = 0, j, k = 0;

    if (!cache_hist_room(s))
        return false;
    while (i < s->n && s->r[i].hi < lo)
        i++;
    j = i; /* s->r[i .. j) overlap lo..hi */
    while (j < s->n && s->r[j].lo <= hi)
        j++;
    if (j > i && s->r[i].lo < lo)
        add[k++] = (cache_hist_range){s->r[i].lo, lo - 1, s->r[i].post};
    add[k++] = (cache_hist_range){lo, hi, post};
    if (j > i && s->r[j - 1].hi > hi)
        add[k++] = (cache_hist_range){hi + 1, s->r[j - 1].hi, s->r[j - 1].post};
    memmove(&s->r[i + k], &s->r[j], (s->n - j) * sizeof *s->r);
    memcpy(&s->r[i], add, k * sizeof *add);
    s->n = s->n - (j - i) + k;
    return true;
}

/* Start the slot's history over at one change. */
static void cache_hist_restart(cache_hist_slot *s, uint64_t ino, int64_t pre, int64_t post,
                               uint64_t lo, uint64_t hi)
{
    s->used = true;
    s->ino = ino;
    s->base = pre;
    s->head = post;
    s->n = 0;
    if (lo <= hi && !cache_hist_set(s, lo, hi, post))
        s->base = post; /* nothing before this change can be vouched for */
}

/* cache_hist_moved -- see cache_hist.h. */
void cache_hist_moved(cache_hist *h, uint64_t ino, int64_t pre, int64_t post, uint64_t lo,
                      uint64_t hi)
{
    cache_hist_slot *s = cache_hist_slot_of(h, ino);

    if (post <= pre)
        return;
    pthread_mutex_lock(&s->lock);
    if (!s->used || s->ino != ino) {
        cache_hist_restart(s, ino, pre, post, lo, hi);
    } else if (pre == s->head) {
        if (lo <= hi && !cache_hist_set(s, lo, hi, post))
            cache_hist_restart(s, ino, post, post, 1, 0);
        else
            s->head = post;
    } else if (post > s->head) {
        cache_hist_restart(s, ino, pre, post, lo, hi);
    }
    pthread_mutex_unlock(&s->lock);
}

/* The ctime of chunk's last change in the chain, or INT64_MIN (none). */
static int64_t cache_hist_changed(const cache_hist_slot *s, uint64_t chunk)
{
    unsigned lo = 0, hi = s->n;

    while (lo < hi) { /* the first range whose hi >= chunk */
        unsigned mid = lo + (hi - lo) / 2;
        if (s->r[mid].hi < chunk)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->r[lo].lo <= chunk ? s->r[lo].post : INT64_MIN;
}

/* cache_hist_current -- see cache_hist.h. */
bool cache_hist_current(cache_hist *h, uint64_t ino, uint64_t chunk, int64_t tag, int64_t now)
{
    cache_hist_slot *s;
    bool ok;

    if (tag == now)
        return true;
    if (tag > now)
        return false;
    s = cache_hist_slot_of(h, ino);
    pthread_mutex_lock(&s->lock);
    ok = s->used && s->ino == ino && s->head == now && s->base <= tag &&
         cache_hist_changed(s, chunk) <= tag;
    pthread_mutex_unlock(&s->lock);
    return ok;
}

/* cache_hist_head -- see cache_hist.h. */
bool cache_hist_head(cache_hist *h, uint64_t ino, int64_t *head)
{
    cache_hist_slot *s = cache_hist_slot_of(h, ino);
    bool ok;

    pthread_mutex_lock(&s->lock);
    ok = s->used && s->ino == ino;
    if (ok)
        *head = s->head;
    pthread_mutex_unlock(&s->lock);
    return ok;
}
