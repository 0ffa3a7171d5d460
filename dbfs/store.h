/*
 * store.h -- the storage layouts of file data behind one small interface.
 *
 * A layout decides where the chunks of a file live:
 *   single     every file's chunks in the table allfiles (store_single.c);
 *   inversion  every file that holds data has its own table inv<inode>,
 *              made by its first write, dropped with its last link
 *              (store_inversion.c);
 *   hybrid     a file stays in allfiles until a write makes it larger than
 *              the file system's hybrid_threshold, and then moves to its own
 *              table inside that write's transaction (store_hybrid.c).
 * The SQL that places, stores, reads, truncates and drops chunks is in
 * schema/functions/20_data.sql and 80_write.sql; it answers for every
 * layout (pgnfs_filetab says which files have a table), so the layouts
 * differ only in the statements they queue and in their placement rule.
 *
 * Per-file tables and prepared statements: a prepared statement names its
 * tables, so the statements that reach a per-file table call PL/pgSQL
 * functions that run EXECUTE format('... %I ...', 'inv' || inode) (the
 * table name built from the number alone). The choice, against per-file
 * statements prepared lazily on each connection and against a partitioned
 * table, is measured in bench/paper/tabcost (see bench/results/tabcost.md).
 *
 * NOTES
 *   The operations only queue statements on the caller's batch (see
 *   dbfs_conn.h); they never sync or read results, so a READ or WRITE stays
 *   one round trip whatever the layout, and a caller may queue many writes
 *   (a write-back flush) in one batch.
 *
 *   Truncation and the dropping of a file's data happen inside the
 *   metadata functions' transactions (SETATTR, CREATE over a file, REMOVE,
 *   RENAME over a file), through pgnfs_data_truncate() and pgnfs_data_drop()
 *   in 20_data.sql, which answer for the layout there.
 *
 *   Invariants every layout keeps: no stored byte lies at or beyond the
 *   file's size; a missing chunk, or the part of a chunk past its stored
 *   length, reads as zeros; fileatt.used is the sum of the stored lengths
 *   of the file's chunks.
 */
#ifndef PGNFS_STORE_H
#define PGNFS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dbfs_conn.h"
#include "dbfs_int.h"

/* The piece of one chunk that a write stores. */
typedef struct store_piece {
    uint64_t chunk;
    uint32_t at;      /* byte in the chunk where the piece starts */
    uint32_t n;       /* file bytes */
    const void *data; /* the piece, encoded (into store_write.data) */
    const void *raw;  /* the piece's file bytes, unencoded (for the caches) */
    size_t data_len;  /* its stored length */
    /* NULL, or CACHE_WB_HEADROOM writable bytes that end where raw starts
     * (the write-back buffer's pieces, cache_wb.h): a layer may put a
     * header there, until the batch is synced, and store both without a
     * copy. raw itself is never written. */
    unsigned char *head;
} store_piece;

/* One WRITE, as a layout queues it. Everything it points to must stay
 * valid until the batch is synced. */
typedef struct store_write {
    dbfs_fh fh;
    const dbfs_cred *cred;
    uint64_t off;              /* file offset */
    uint64_t len;              /* file bytes written (0: only check and lock) */
    const void *data;          /* the pieces of the chunks touched, one after the
                                * other, each encoded on its own (NULL for a
                                * layout that takes pieces only: single) */
    size_t data_len;           /* stored bytes in data */
    const store_piece *pieces; /* the same, piece by piece, in chunk order */
    size_t npieces;
    int64_t now_ns;
    bool kill_priv; /* a non-root writer: clear setuid/setgid */
} store_write;

typedef struct store_ops {
    const char *name; /* as pgnfs_fs.storage says */
    /*
     * queue_read -- queue the statement that returns, in one snapshot, the
     * attributes of file fh (DBFS_ATTR_NCOLS columns; no row if the inode
     * and generation do not exist) joined with its chunks first..last:
     * column DBFS_ATTR_NCOLS is the chunk number (int8) and the next one
     * its stored value (bytea), both NULL when no chunk of the range is
     * stored; rows in chunk order. first > last asks for the attributes
     * only. Returns what dbfs_batch_add() returns.
     */
    int (*queue_read)(dbfs_conn *c, dbfs_fh fh, uint64_t first, uint64_t last);
    /*
     * queue_write -- queue the statements that make the whole write w
     * (checks and lock, placement, chunks, size, times, used). Returns how
     * many it queued (n >= 1). Their results, in order: the first is the
     * rows of a metadata function with role 2, the attributes before (and
     * role 3, the attributes after, when n is 1); when n > 1 the last is
     * one attribute row (DBFS_ATTR_NCOLS columns), the attributes after,
     * and those between carry nothing. A write that is not allowed fails
     * the first statement (PN SQLSTATE) before anything is stored.
     */
    size_t (*queue_write)(dbfs_conn *c, const store_write *w);
} store_ops;

extern const store_ops store_single;
extern const store_ops store_inversion;
extern const store_ops store_hybrid;

/* The operations of a layout, or NULL if this build has none for it. */
const store_ops *store_for(dbfs_storage storage);

/*
 * store_queue_write_stmt -- queue DBFS_ST_WRITE (pgnfs_write, one
 * statement) for w with the layout's placement rule: a file moves to its
 * own table when the write makes it larger than threshold bytes;
 * threshold < 0 means never. For the layouts' queue_write; returns 1.
 */
size_t store_queue_write_stmt(dbfs_conn *c, const store_write *w, int64_t threshold);

/*
 * store_single_queue_chunk -- queue the single layout's upsert of chunk k
 * of file ino as the whole stored value v (vlen bytes, encoded already;
 * DBFS_ST_SINGLE_WRITE_FULL). store_single_queue_end -- queue
 * pgnfs_write_end for chunks first .. last: size at least end, mtime and
 * ctime now_ns, set-id bits cleared when kill_priv, used corrected; its
 * row is the attributes after. The plain write (store_single.c) and the
 * guarded write of the single layout (dbfs_xf_write.c) both end so.
 * Return what dbfs_batch_add returns.
 */
int store_single_queue_chunk(dbfs_conn *c, uint64_t ino, uint64_t k, const void *v, size_t vlen);
int store_single_queue_end(dbfs_conn *c, uint64_t ino, uint64_t end, int64_t now_ns, bool kill_priv,
                           int64_t first, int64_t last);

/* store_queue_tab_read -- the queue_read of the layouts that may give a
 * file its own table (DBFS_ST_TAB_READ). */
int store_queue_tab_read(dbfs_conn *c, dbfs_fh fh, uint64_t first, uint64_t last);

#endif /* PGNFS_STORE_H */
