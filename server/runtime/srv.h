/*
 * srv.h -- what the RPC layer (transport, dispatch, workers) shares with the
 * procedure handlers (nfs3_*.c, mnt3.c): the server context, the per-request
 * context, and the shape of a procedure table entry.
 *
 * NOTES
 *   A handler receives decoded arguments and a zeroed result struct and
 *   always "succeeds" at the RPC level: the NFS or MOUNT status lives in the
 *   result. RPC-level errors (GARBAGE_ARGS, PROC_UNAVAIL, AUTH_ERROR) come
 *   only from dispatch.
 *
 *   Memory: anything a handler puts into its result (handles, names, data,
 *   entry lists) is allocated with srv_req_alloc() and lives until the reply
 *   has been encoded; dispatch releases it all at once. Handlers never use
 *   static buffers and never free what they allocated that way. Decoded
 *   arguments belong to dispatch, which frees them after the reply.
 *
 *   Threads: a srv_req is owned by the worker thread that runs it. The
 *   srv_ctx is shared and read-only after srv_ctx setup, except for the
 *   fields marked "locked", which have their own mutex.
 */
#ifndef PGNFS_SRV_H
#define PGNFS_SRV_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#include "cfg.h"
#include "dbfs.h"

/* Largest READ/WRITE payload we accept and advertise (FSINFO rtmax/wtmax). */
#define SRV_IO_MAX (1024u * 1024u)
/* Largest RPC record we accept over TCP: the payload plus headers. */
#define SRV_RECORD_MAX (SRV_IO_MAX + 64u * 1024u)

typedef struct srv_mount {
    char *host;
    char *path;
    struct srv_mount *next;
} srv_mount;

typedef struct srv_ctx {
    const cfg *cfg;
    dbfs *fs;
    const dbfs_info *info;
    /* WRITE/COMMIT verifier: changes on every server start (RFC 1813 3.3.7). */
    unsigned char write_verf[8];
    /* READDIR cookie verifier: our cookies never go stale, so it is fixed. */
    unsigned char cookie_verf[8];
    /* MOUNT DUMP list (locked by mounts_lock). */
    pthread_mutex_t mounts_lock;
    srv_mount *mounts;
} srv_ctx;

/* The client's AUTH_SYS credential as it arrived (before squashing). */
typedef struct {
    bool present; /* false: AUTH_NONE */
    uint32_t uid, gid;
    uint32_t ngroups;
    uint32_t groups[DBFS_NGROUPS_MAX];
    char machine[256];
} srv_authsys;

typedef struct srv_alloc_block srv_alloc_block;

typedef struct srv_req {
    srv_ctx *srv;
    dbfs_conn *db; /* the worker's connection */
    /* Where the call came from. */
    struct sockaddr_storage peer;
    socklen_t peerlen;
    bool tcp;
    uint32_t xid;
    srv_authsys auth;
    /* Filled by nfs3_fh_in() from the handle's export: the caller after
     * squashing, and whether the export is read-only for this client. */
    const cfg_export *export;
    const cfg_client *client;
    dbfs_cred cred;
    /* Per-request allocations, released after the reply (srv_req_alloc). */
    srv_alloc_block *allocs;
} srv_req;

/*
 * srv_req_alloc -- n zeroed bytes that live until the reply to this request
 * has been sent. Never returns NULL (aborts on exhaustion, like g_malloc).
 */
void *srv_req_alloc(srv_req *req, size_t n);
/* srv_req_strdup -- a copy of s in request memory. */
char *srv_req_strdup(srv_req *req, const char *s);
/* Releases every srv_req_alloc block of req (dispatch calls it). */
void srv_req_release(srv_req *req);

/* One procedure of a program version. */
typedef struct {
    const char *name;
    xdrproc_t args_xdr;
    xdrproc_t res_xdr;
    size_t args_size;
    size_t res_size;
    void (*handler)(srv_req *req, void *args, void *res);
    /* Non-idempotent: replies are kept in the duplicate request cache. */
    bool non_idempotent;
} srv_proc;

/* Tables indexed by procedure number (nfs3_procs.c, mnt3.c). */
extern const srv_proc nfs3_procs[];
extern const unsigned nfs3_nprocs;
extern const srv_proc mnt3_procs[];
extern const unsigned mnt3_nprocs;

/*
 * srv_client_match -- the first client pattern of export e that admits peer,
 * or NULL. Host-name patterns are resolved on each call.
 */
const cfg_client *srv_client_match(const cfg_export *e, const struct sockaddr *peer,
                                   socklen_t peerlen);

/*
 * srv_peer_host -- the request's peer address as numeric text, without the
 * port, into buf ("?" when it has no numeric form). Cannot fail.
 */
void srv_peer_host(const srv_req *req, char *buf, size_t len);

/* srv_peer_port -- the peer's source port; 65535 for non-IP peers. */
unsigned srv_peer_port(const srv_req *req);

/*
 * srv_cred_squash -- the credential to act as, after root_squash/all_squash
 * of client c are applied to the AUTH_SYS credential a. Cannot fail.
 */
void srv_cred_squash(const srv_authsys *a, const cfg_client *c, dbfs_cred *out);

/*
 * srv_run -- serve NFS and MOUNT for file system fs with configuration c
 * until SIGINT or SIGTERM: listeners, workers (one dbfs_conn each),
 * rpcbind registration. Returns 0 after a clean shutdown, or -1 after
 * logging why the server could not start (port in use, ...).
 */
int srv_run(const cfg *c, dbfs *fs);

#endif /* PGNFS_SRV_H */
