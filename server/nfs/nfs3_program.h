/*
 * nfs3_program.h -- the NFS version 3 program (100003, RFC 1813) as it
 * registers with the RPC runtime (srv_rt_register): its procedure table
 * and what the runtime must know about its results.
 */
#ifndef PGNFS_NFS3_PROGRAM_H
#define PGNFS_NFS3_PROGRAM_H

#include "srv.h"

/* NFS v3: procedures, JUKEBOX without a database, statuses by name. */
extern const srv_program nfs3_program;

#endif /* PGNFS_NFS3_PROGRAM_H */
