/*
 * nsm_program.h -- the Network Status Monitor (program 100024, version 1,
 * XNFS chapter 11) as it registers with the RPC runtime: the server side
 * of statd for the lock service of nlm4_svc.h.
 */
#ifndef PGNFS_NSM_PROGRAM_H
#define PGNFS_NSM_PROGRAM_H

#include "nlm4_svc.h"
#include "srv.h"

/* The program number of NSM, for the listener's list. */
#define NSM_PROG 100024u

/*
 * nsm_program -- the NSM version 1 descriptor into *out, serving the
 * status of lock service svc (its ctx; svc must outlive the runtime).
 * Cannot fail.
 */
void nsm_program(nlm4_svc *svc, srv_program *out);

#endif /* PGNFS_NSM_PROGRAM_H */
