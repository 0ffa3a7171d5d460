/*
 * srv_dispatch.h -- one RPC call record in, one reply record out: the
 * registered programs, where a call came from, and srv_dispatch_record,
 * which the workers, the unit tests and the fuzzer all drive.
 */
#ifndef PGNFS_SRV_DISPATCH_H
#define PGNFS_SRV_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "log.h"
#include "srv.h"
#include "srv_buf.h"
#include "srv_drc.h"
#include "srv_stats.h"

/* Everything dispatch needs besides the call itself; shared, read-only
 * once serving starts. */
typedef struct srv_env {
    srv_ctx *ctx;                            /* handed to handlers as req->srv */
    const srv_program *progs[SRV_PROGS_MAX]; /* registered, by index */
    unsigned nprogs;
    srv_drc *drc;      /* NULL: no duplicate request cache */
    srv_stats *stats;  /* NULL: no statistics */
    log_ratelimit *rl; /* NULL: log every bad call */
    unsigned slow_ms;  /* log calls that take this long; 0: never */
} srv_env;

/* Every registered program (a srv_origin's progs). */
#define SRV_PROGS_ALL UINT32_MAX

/* Where a call came from, and which programs are served there. */
typedef struct {
    struct sockaddr_storage peer;
    socklen_t peerlen;
    struct sockaddr_storage local; /* the address it arrived on */
    socklen_t locallen;            /* 0: not known */
    bool tcp;
    uint32_t progs; /* bit i: env->progs[i] is served here */
} srv_origin;

/*
 * srv_env_register -- add program p (one version; its descriptor must
 * outlive env) to env and to env->stats. Returns its index, -EEXIST when
 * the same program and version is registered already, -EINVAL for a
 * descriptor without name or procedures, or -ENOSPC beyond SRV_PROGS_MAX.
 * Not thread-safe: register before serving.
 */
int srv_env_register(srv_env *env, const srv_program *p);

/*
 * srv_origin_set -- fill *o for a call from peer, arriving on local (NULL:
 * not known), over tcp or UDP, where programs progs (SRV_PROGS_ALL for
 * all) are served. Cannot fail.
 */
void srv_origin_set(srv_origin *o, const struct sockaddr *peer, socklen_t peerlen,
                    const struct sockaddr *local, socklen_t locallen, bool tcp, uint32_t progs);

typedef enum {
    SRV_DISPATCH_DROP = 0,  /* send nothing */
    SRV_DISPATCH_REPLY = 1, /* out holds the reply record (no record mark):
                             * out->len bytes at srv_buf_msg(out) */
    SRV_DISPATCH_DEFER = 2  /* srv_dispatch_quick: not answered; a worker must */
} srv_dispatch_result;

/*
 * srv_dispatch_record -- answer one RPC call record rec[0..len) that came
 * from `from`: decode the header, check credentials, find the program
 * version and procedure among those served where it arrived, consult the
 * duplicate request cache, decode the arguments, run the handler with db
 * (NULL: no database connection), and encode the reply into *out (its
 * previous contents are replaced). Returns SRV_DISPATCH_REPLY, or
 * SRV_DISPATCH_DROP when nothing must be sent (an undecodable header, a
 * reply message, a retransmission still in progress, a call its program
 * drops without a database). Thread-safe for distinct db and out. Never
 * fails otherwise: every problem of the call is an RPC error reply.
 */
srv_dispatch_result srv_dispatch_record(const srv_env *env, dbfs_conn *db, const void *rec,
                                        size_t len, const srv_origin *from, srv_buf *out);

/*
 * srv_dispatch_quick -- answer the call in rec on the calling thread (the
 * event thread) when its procedure can be answered from memory
 * (srv_proc.quick), as srv_dispatch_record would answer it. Returns
 * SRV_DISPATCH_REPLY with the reply in out (counted in the statistics,
 * and as quick), or SRV_DISPATCH_DEFER, having sent, logged and counted
 * nothing: anything else about the call -- a bad header, credential or
 * argument, a procedure without a quick form, one that needs the
 * database -- is for srv_dispatch_record on a worker.
 */
srv_dispatch_result srv_dispatch_quick(const srv_env *env, const void *rec, size_t len,
                                       const srv_origin *from, srv_buf *out);

#endif /* PGNFS_SRV_DISPATCH_H */
