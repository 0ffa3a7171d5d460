/*
 * mnt3_program.h -- the MOUNT version 3 program (100005, RFC 1813 section
 * 5) as it registers with the RPC runtime (srv_rt_register).
 */
#ifndef PGNFS_MNT3_PROGRAM_H
#define PGNFS_MNT3_PROGRAM_H

#include "srv.h"

/* MOUNT v3: calls are dropped (the client retries) without a database. */
extern const srv_program mnt3_program;

#endif /* PGNFS_MNT3_PROGRAM_H */
