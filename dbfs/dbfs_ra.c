/*
 * dbfs_ra.c -- read-ahead and the fetches in flight: see dbfs_ra.h.
 *
 * NOTES
 *   The stream guess (ino, next, window) is kept in atomics without a
 *   lock: races between threads only cost a guess. The flights are kept
 *   under the slot's mutex, and a landing wakes every waiter of the slot
 *   (each checks whether its own flight has landed).
 */
#include <glib.h>
#include <stdatomic.h>

#include "dbfs_ra.h"

/* How far from the last end a read still counts as the stream (clients
 * keep several READs in flight and they arrive out of order). */
#define DBFS_RA_SLACK (4u << 20)

/* The read-ahead slot of ino. */
static dbfs_ra_slot *dbfs_ra_slot_of(dbfs *fs, uint64_t ino)
{
    return &fs->ra[(ino * UINT64_C(0x9E3779B97F4A7C15) >> 40) % DBFS_RA_SLOTS];
}

/* dbfs_ra_init -- see dbfs_ra.h. */
void dbfs_ra_init(dbfs *fs)
{
    for (unsigned i = 0; i < DBFS_RA_SLOTS; i++) {
        g_mutex_init(&fs->ra[i].lock);
        g_cond_init(&fs->ra[i].done);
    }
}

/* dbfs_ra_clear -- see dbfs_ra.h. */
void dbfs_ra_clear(dbfs *fs)
{
    for (unsigned i = 0; i < DBFS_RA_SLOTS; i++) {
        g_mutex_clear(&fs->ra[i].lock);
        g_cond_clear(&fs->ra[i].done);
    }
}

/* dbfs_ra_window -- see dbfs_ra.h. At most an eighth of the buffer cache. */
uint64_t dbfs_ra_window(dbfs *fs, uint64_t ino, uint64_t off, uint64_t end)
{
    const uint64_t cs = fs->info.chunk_size;
    dbfs_ra_slot *sl = dbfs_ra_slot_of(fs, ino);
    uint64_t want = end > off ? (end - off + cs - 1) / cs : 1;
    uint64_t max = DBFS_RA_MAX_BYTES / cs, cap = fs->chunks_bytes / 8 / cs;
    uint64_t next = atomic_load(&sl->next), w = atomic_load(&sl->window);
    bool stream =
        atomic_load(&sl->ino) == ino && off + DBFS_RA_SLACK >= next && off <= next + DBFS_RA_SLACK;

    if (cap < max)
        max = cap;
    w = !stream ? 0 : w ? 2 * w : want;
    if (w > max)
        w = max;
    atomic_store(&sl->ino, ino);
    if (end > next || !stream)
        atomic_store(&sl->next, end);
    atomic_store(&sl->window, w);
    return w;
}

/* The flight of ino holding all of first .. last (under sl->lock), or
 * -1. */
static int dbfs_ra_holding(const dbfs_ra_slot *sl, uint64_t ino, uint64_t first, uint64_t last)
{
    for (int i = 0; i < DBFS_RA_FLIGHTS; i++)
        if (sl->fl[i].seq != 0 && sl->fl[i].ino == ino && sl->fl[i].first <= first &&
            last <= sl->fl[i].last)
            return i;
    return -1;
}

/* dbfs_ra_wait -- see dbfs_ra.h. */
bool dbfs_ra_wait(dbfs *fs, uint64_t ino, uint64_t first, uint64_t last)
{
    dbfs_ra_slot *sl = dbfs_ra_slot_of(fs, ino);
    const gint64 deadline = g_get_monotonic_time() + DBFS_RA_WAIT_US;
    uint64_t seq;
    int i;

    g_mutex_lock(&sl->lock);
    i = dbfs_ra_holding(sl, ino, first, last);
    if (i < 0) {
        g_mutex_unlock(&sl->lock);
        return false;
    }
    seq = sl->fl[i].seq;
    atomic_fetch_add(&fs->ra_waits, 1);
    while (sl->fl[i].seq == seq)
        if (!g_cond_wait_until(&sl->done, &sl->lock, deadline))
            break;
    g_mutex_unlock(&sl->lock);
    return true;
}

/* dbfs_ra_begin -- see dbfs_ra.h. */
uint64_t dbfs_ra_begin(dbfs *fs, uint64_t ino, uint64_t first, uint64_t own_last, uint64_t *flast)
{
    dbfs_ra_slot *sl = dbfs_ra_slot_of(fs, ino);
    uint64_t seq = 0;

    g_mutex_lock(&sl->lock);
    for (int i = 0; i < DBFS_RA_FLIGHTS; i++) {
        if (*flast <= own_last)
            break; /* no read-ahead (left) */
        if (sl->fl[i].seq == 0 || sl->fl[i].ino != ino || sl->fl[i].last <= own_last ||
            sl->fl[i].first > *flast)
            continue;
        /* It brings chunks of the read-ahead: stop before them. */
        *flast = sl->fl[i].first > own_last + 1 ? sl->fl[i].first - 1 : own_last;
    }
    for (int i = 0; i < DBFS_RA_FLIGHTS; i++) {
        if (sl->fl[i].seq != 0)
            continue;
        seq = ++sl->seq;
        sl->fl[i].seq = seq;
        sl->fl[i].ino = ino;
        sl->fl[i].first = first;
        sl->fl[i].last = *flast;
        break;
    }
    g_mutex_unlock(&sl->lock);
    return seq;
}

/* dbfs_ra_end -- see dbfs_ra.h. */
void dbfs_ra_end(dbfs *fs, uint64_t ino, uint64_t seq)
{
    dbfs_ra_slot *sl = dbfs_ra_slot_of(fs, ino);

    if (seq == 0)
        return;
    g_mutex_lock(&sl->lock);
    for (int i = 0; i < DBFS_RA_FLIGHTS; i++)
        if (sl->fl[i].seq == seq)
            sl->fl[i].seq = 0;
    g_cond_broadcast(&sl->done);
    g_mutex_unlock(&sl->lock);
}
