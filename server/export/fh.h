/*
 * fh.h -- the NFS file-handle codec.
 *
 * A handle names a file by fsid, export number, inode and generation, never
 * by path, and carries a MAC (HMAC-SHA256, truncated) keyed with the file
 * system's secret, so a client cannot make a handle it was never given.
 *
 *   byte 0      version (FH_VERSION)
 *   byte 1      export index (position in cfg.exports)
 *   bytes 2-9   fsid, big-endian
 *   bytes 10-17 inode, big-endian
 *   bytes 18-21 generation, big-endian
 *   bytes 22-37 MAC over bytes 0-21
 *
 * A file of a snapshot (dbfs_fh.snap, dbfs_snap.h) has a handle of the
 * same size whose version is FH_VERSION_SNAP and whose fsid field holds
 * the snapshot's id (bytes 2-5) and the low half of the fsid (bytes 6-9):
 * the MAC covers the id, so a client cannot move a handle into another
 * snapshot or out of one.
 */
#ifndef PGNFS_FH_H
#define PGNFS_FH_H

#include <stddef.h>
#include <stdint.h>

#include "dbfs.h"

#define FH_VERSION      1
#define FH_VERSION_SNAP 2
#define FH_SIZE         38

typedef struct {
    unsigned export_index;
    dbfs_fh fh;
} fh_decoded;

/* fh_encode -- write a FH_SIZE-byte handle into out. Cannot fail. */
void fh_encode(const dbfs_info *info, unsigned export_index, dbfs_fh fh,
               unsigned char out[FH_SIZE]);

/*
 * fh_decode -- check and unpack a handle. Returns 0; -EBADF if the length,
 * version or MAC is wrong (NFS3ERR_BADHANDLE); -ESTALE if it is well formed
 * but for another file system (fsid differs). Whether the inode and
 * generation still exist is for dbfs to say (-ESTALE).
 */
int fh_decode(const dbfs_info *info, const void *data, size_t len, fh_decoded *out);

#endif /* PGNFS_FH_H */
