/*
 * emb_wal.c -- the embedded cluster's write-ahead log sized for the disk
 * it is on, and the space left on that disk.
 *
 * PostgreSQL's defaults (max_wal_size 1 GiB, min_wal_size 80 MiB) suit a
 * disk of many gigabytes. On a small one the WAL alone could fill it
 * between two checkpoints, and then the checkpointer cannot create its
 * next segment ("could not write to file pg_wal/xlogtemp...: No space
 * left on device"), PostgreSQL stops and cannot start again until space
 * is freed. So at every start, with statvfs of the cluster's directory:
 *
 *   max_wal_size  the WAL written between checkpoints before one is
 *                 forced, so about what pg_wal holds: a sixteenth of the
 *                 file system and at most a quarter of what is free now,
 *                 clamped to [32 MiB, 1 GiB] (32 MiB = two 16 MiB
 *                 segments, the least PostgreSQL accepts; 1 GiB its
 *                 default, plenty on any large disk).
 *   min_wal_size  segments kept for recycling after a checkpoint instead
 *                 of being removed (recycling avoids creating files): a
 *                 sixty-fourth of the file system in [32 MiB, 80 MiB]
 *                 (80 MiB the default), never above max_wal_size.
 *   max_slot_wal_keep_size
 *                 WAL a replication slot may hold back (default: without
 *                 limit, so a forgotten slot could fill the disk); set to
 *                 max_wal_size: a slot that falls further behind is
 *                 invalidated rather than the disk filled.
 *
 * checkpoint_timeout (5 min) and checkpoint_completion_target (0.9) keep
 * their defaults: a checkpoint forced by max_wal_size recycles the WAL on
 * a small disk anyway, and a shorter timeout would only add full-page
 * writes. The settings go on pg_ctl's command line (-o "-c ..."), so they
 * follow the disk when it is grown or the directory moved, and they win
 * over postgresql.conf.
 */
#include "emb_int.h"

#include <errno.h>
#include <sys/statvfs.h>

#include <glib.h>

#define EMB_MIB            (1024ull * 1024ull)
#define EMB_WAL_FLOOR_MB   32u   /* two 16 MiB segments */
#define EMB_MAX_WAL_CAP_MB 1024u /* PostgreSQL's default max_wal_size */
#define EMB_MIN_WAL_CAP_MB 80u   /* PostgreSQL's default min_wal_size */

static unsigned emb_clamp_mb(unsigned long long bytes, unsigned lo, unsigned hi)
{
    unsigned long long mb = bytes / EMB_MIB;

    return mb < lo ? lo : mb > hi ? hi : (unsigned)mb;
}

/* emb_wal_for_disk -- see emb.h. */
void emb_wal_for_disk(unsigned long long total_bytes, unsigned long long avail_bytes, emb_wal *out)
{
    unsigned long long budget = MIN(total_bytes / 16, avail_bytes / 4);

    out->max_wal_mb = emb_clamp_mb(budget, EMB_WAL_FLOOR_MB, EMB_MAX_WAL_CAP_MB);
    out->min_wal_mb = emb_clamp_mb(total_bytes / 64, EMB_WAL_FLOOR_MB, EMB_MIN_WAL_CAP_MB);
    if (out->min_wal_mb > out->max_wal_mb)
        out->min_wal_mb = out->max_wal_mb;
    out->slot_keep_mb = out->max_wal_mb;
}

/* The reserve's share for everything but WAL (emb_reserve_for_disk). */
#define EMB_RESERVE_FLOOR_MB 24u
#define EMB_RESERVE_CAP_MB   1024u

/* emb_reserve_for_disk -- see emb.h. */
unsigned long long emb_reserve_for_disk(unsigned long long total_bytes,
                                        unsigned long long avail_bytes)
{
    emb_wal w;

    emb_wal_for_disk(total_bytes, avail_bytes, &w);
    return 2ull * w.max_wal_mb * EMB_MIB + (unsigned long long)emb_clamp_mb(total_bytes / 32,
                                                                            EMB_RESERVE_FLOOR_MB,
                                                                            EMB_RESERVE_CAP_MB) *
                                               EMB_MIB;
}

/* emb_space_of -- see emb.h. */
int emb_space_of(const char *data_dir, emb_space *out)
{
    char *pg = g_build_filename(data_dir, "pg", NULL);
    struct statvfs st;
    int rc = statvfs(pg, &st);

    if (rc != 0 && errno == ENOENT)
        rc = statvfs(data_dir, &st);
    g_free(pg);
    if (rc != 0)
        return -errno;
    out->total_bytes = (unsigned long long)st.f_blocks * st.f_frsize;
    out->avail_bytes = (unsigned long long)st.f_bavail * st.f_frsize;
    return 0;
}

/* emb_wal_options -- see emb_int.h. */
char *emb_wal_options(const emb_cluster *c, char **why)
{
    emb_space sp = {0, 0};
    emb_wal w;

    if (emb_space_of(c->data_dir, &sp) != 0) {
        /* Unmeasurable: PostgreSQL's own defaults. */
        sp.total_bytes = sp.avail_bytes = 64ull * 1024 * EMB_MIB;
    }
    emb_wal_for_disk(sp.total_bytes, sp.avail_bytes, &w);
    *why = g_strdup_printf("PostgreSQL in %s: WAL sized for its file system (%llu MiB, %llu MiB "
                           "free): min_wal_size %uMB, max_wal_size %uMB, "
                           "max_slot_wal_keep_size %uMB",
                           c->pg_dir, sp.total_bytes / EMB_MIB, sp.avail_bytes / EMB_MIB,
                           w.min_wal_mb, w.max_wal_mb, w.slot_keep_mb);
    return g_strdup_printf("-c min_wal_size=%uMB -c max_wal_size=%uMB "
                           "-c max_slot_wal_keep_size=%uMB",
                           w.min_wal_mb, w.max_wal_mb, w.slot_keep_mb);
}
