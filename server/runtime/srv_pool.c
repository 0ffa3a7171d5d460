/*
 * srv_pool.c -- large buffers kept for reuse (srv_pool.h).
 *
 * A small array of (pointer, size) under one mutex; get takes the
 * smallest that fits (best fit keeps the 1 MiB buffers for the 1 MiB
 * records), put keeps a buffer while the bounds allow and otherwise
 * frees it.
 *
 * NOTES
 *   The lock is held for a scan of at most SRV_POOL_MAX_BUFS entries;
 *   buffers are freed outside it.
 */
#include <malloc.h>
#include <stdbool.h>
#include <string.h>

#include <glib.h>

#include "srv_pool.h"

typedef struct {
    void *p;
    size_t size;
} srv_pool_ent;

static GMutex srv_pool_lock;
static srv_pool_ent srv_pool_ents[SRV_POOL_MAX_BUFS];
static size_t srv_pool_n, srv_pool_bytes;

/* srv_pool_get -- see srv_pool.h. */
void *srv_pool_get(size_t want, size_t *cap)
{
    size_t best = SRV_POOL_MAX_BUFS;
    void *p = NULL;

    *cap = 0;
    g_mutex_lock(&srv_pool_lock);
    for (size_t i = 0; i < srv_pool_n; i++)
        if (srv_pool_ents[i].size >= want &&
            (best == SRV_POOL_MAX_BUFS || srv_pool_ents[i].size < srv_pool_ents[best].size))
            best = i;
    if (best < SRV_POOL_MAX_BUFS) {
        p = srv_pool_ents[best].p;
        *cap = srv_pool_ents[best].size;
        srv_pool_bytes -= *cap;
        srv_pool_ents[best] = srv_pool_ents[--srv_pool_n];
    }
    g_mutex_unlock(&srv_pool_lock);
    return p;
}

/* srv_pool_put -- see srv_pool.h. */
void srv_pool_put(void *p)
{
    size_t size;
    bool kept = false;

    if (!p)
        return;
    size = malloc_usable_size(p);
    if (size >= SRV_POOL_MIN) {
        g_mutex_lock(&srv_pool_lock);
        if (srv_pool_n < SRV_POOL_MAX_BUFS && srv_pool_bytes + size <= SRV_POOL_MAX_BYTES) {
            srv_pool_ents[srv_pool_n++] = (srv_pool_ent){p, size};
            srv_pool_bytes += size;
            kept = true;
        }
        g_mutex_unlock(&srv_pool_lock);
    }
    if (!kept)
        g_free(p);
}

/* srv_pool_held -- see srv_pool.h. */
void srv_pool_held(size_t *bufs, size_t *bytes)
{
    g_mutex_lock(&srv_pool_lock);
    *bufs = srv_pool_n;
    *bytes = srv_pool_bytes;
    g_mutex_unlock(&srv_pool_lock);
}

/* srv_pool_tune_malloc -- see srv_pool.h. */
void srv_pool_tune_malloc(void)
{
    static gsize done;

    if (!g_once_init_enter(&done))
        return;
    if (mallopt(M_MMAP_THRESHOLD, (int)SRV_MALLOC_MMAP_MAX) != 1 ||
        mallopt(M_TRIM_THRESHOLD, (int)SRV_MALLOC_TRIM_MIN) != 1)
        g_message("the C library refused to keep freed memory (mallopt): pages freed are "
                  "faulted in and zeroed again");
    g_once_init_leave(&done, 1);
}

/* srv_pool_drain -- see srv_pool.h. */
void srv_pool_drain(void)
{
    srv_pool_ent ents[SRV_POOL_MAX_BUFS];
    size_t n;

    g_mutex_lock(&srv_pool_lock);
    n = srv_pool_n;
    memcpy(ents, srv_pool_ents, n * sizeof *ents);
    srv_pool_n = 0;
    srv_pool_bytes = 0;
    g_mutex_unlock(&srv_pool_lock);
    for (size_t i = 0; i < n; i++)
        g_free(ents[i].p);
}
