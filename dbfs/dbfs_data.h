/*
 * dbfs_data.h -- storing file data (dbfs_data.c): the pieces of a write in
 * their stored form, the batch that stores one or more writes of a file
 * through the layout (store.h) in one transaction, a single write stored
 * at once, and the chunk buffer cache those writes and every READ keep
 * exact.
 *
 * NOTES
 *   Below the write-back buffer (dbfs_wb.c stores its flushes here) and
 *   the READ path; knows neither.
 */
#ifndef PGNFS_DBFS_DATA_H
#define PGNFS_DBFS_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dbfs.h"
#include "dbfs_conn.h"
#include "dbfs_int.h"
#include "store.h"

/* --- the chunk buffer cache --------------------------------------------- */

/* Open fs->chunks as cfg asks (left NULL when the size is 0). Returns 0,
 * -EINVAL (a size too small for one chunk; logged) or -ENOMEM. */
int dbfs_chunks_open(dbfs *fs, const dbfs_config *cfg);
/* Free fs->chunks (NULL is fine). */
void dbfs_chunks_close(dbfs *fs);
/* The chunk cache's figures as one dbfs_cache_stats() row ("buffer"). */
void dbfs_chunks_figures(const dbfs *fs, dbfs_cache_figures *out);

/* --- storing writes ------------------------------------------------------ */

/*
 * dbfs_data_pieces -- cut a write (w->off, w->len > 0) of the file bytes
 * `data` into its pieces, one per chunk, encoded as the file system
 * stores them; fills w->pieces, npieces, data and data_len. The caller
 * frees *pieces and *buf (the encoded bytes; NULL for binary) after the
 * batch. Returns 0 or -ENOMEM.
 */
int dbfs_data_pieces(const dbfs_info *info, const void *data, store_write *w, store_piece **pieces,
                     void **buf);

/*
 * dbfs_data_store -- store the writes ws[0 .. n) (n >= 1, all of file fh)
 * in one batch: one round trip, one transaction, rerun on serialization
 * failures. Returns 0 with *pre (the attributes before the first write)
 * and *post (after the last); or the first error the layout's statements
 * raised (-ESTALE, -EISDIR, -EINVAL, -EACCES, -ENOSPC), -ENOMEM, -EAGAIN or
 * -EIO, and nothing is stored. The space guard admits the writes first:
 * -ENOSPC when they would leave the disk below PostgreSQL's reserve,
 * -EAGAIN when space that removals freed is being reclaimed. The stat cache sees the change and the
 * chunk buffer cache learns the pieces written. An -ENOSPC makes
 * dbfs_data_space_short() true for DBFS_SPACE_SHORT_US; a success ends
 * that at once.
 */
int dbfs_data_store(dbfs_conn *c, dbfs_fh fh, const store_write *ws, size_t n, dbfs_attr *pre,
                    dbfs_attr *post);

/*
 * dbfs_data_write_sync -- one WRITE stored at once (DBFS_FILE_SYNC): the
 * caller's permission checked in the database, setuid/setgid cleared for
 * a non-root writer. Returns as dbfs_data_store; *wcc filled on success.
 */
int dbfs_data_write_sync(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off,
                         const void *data, uint32_t len, dbfs_wcc *wcc);

/* How long a store that ran out of space keeps dbfs_data_space_short(). */
#define DBFS_SPACE_SHORT_US (5 * G_USEC_PER_SEC)

/* Did a store run out of space lately (see dbfs_data_store)? Cannot fail. */
bool dbfs_data_space_short(const dbfs *fs);

/* --- reading (dbfs_read.c) ---------------------------------------------- */

/*
 * dbfs_read_plain -- dbfs_read without the path of transformation links:
 * a link answers DBFS_XF_ELINK (dbfs_xf.h) with *attr filled (its
 * attributes, as the READ's round trip read them). For dbfs_read and the
 * link's path, which reads the base with it.
 */
int dbfs_read_plain(dbfs_conn *c, const dbfs_cred *cred, dbfs_fh fh, uint64_t off, uint32_t count,
                    void *buf, uint32_t *nread, bool *eof, dbfs_attr_opt *attr);

#endif /* PGNFS_DBFS_DATA_H */
