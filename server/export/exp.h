/*
 * exp.h -- the served file system as the programs (NFS, MOUNT, NLM)
 * share it: the context every handler gets as req->srv (configuration,
 * dbfs, verifiers, the MOUNT list), which client an export admits and as
 * whom (exp_client_match, exp_cred_squash), the handles they take
 * (exp_fh_in), and whether any export admits
 * an address at all (exp_admits, the runtime's admission test for
 * connections).
 *
 * NOTES
 *   The srv_ctx is built by the daemon (pgnfsd_run) and read-only once the
 *   runtime runs, except for the fields marked "locked", which have their
 *   own mutex. The matching functions keep no state.
 */
#ifndef PGNFS_EXP_H
#define PGNFS_EXP_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "cfg.h"
#include "dbfs.h"
#include "srv.h"

typedef struct exp_mount {
    char *host;
    char *path;
    struct exp_mount *next;
} exp_mount;

struct srv_ctx {
    const cfg *cfg;
    dbfs *fs;
    const dbfs_info *info;
    /* WRITE/COMMIT verifier: changes on every server start (RFC 1813 3.3.7). */
    unsigned char write_verf[8];
    /* READDIR cookie verifier: our cookies never go stale, so it is fixed. */
    unsigned char cookie_verf[8];
    /* Matching a caller against the exports may block (exp_match_may_block
     * at start; the exports do not change while serving): the quick forms
     * leave every call to a worker. */
    bool match_may_block;
    /* MOUNT DUMP list (locked by mounts_lock). */
    pthread_mutex_t mounts_lock;
    exp_mount *mounts;
};

/*
 * exp_client_match -- the first client pattern of export e that admits peer,
 * or NULL. Host-name patterns are resolved on each call (which may block).
 */
const cfg_client *exp_client_match(const cfg_export *e, const struct sockaddr *peer,
                                   socklen_t peerlen);

/*
 * exp_match_may_block -- may matching a caller against c's exports block
 * (does a client pattern name a host, resolved on each check)? Cannot fail.
 */
bool exp_match_may_block(const cfg *c);

/*
 * exp_admits -- does any export of c admit peer (ignoring `secure`,
 * which is about ports, not addresses)? Resolves host-name patterns like
 * exp_client_match, so it may block; the runtime calls it from a worker.
 */
bool exp_admits(const cfg *c, const struct sockaddr *peer, socklen_t peerlen);

/*
 * exp_fh_in -- check and decode the file handle data[0 .. len) a caller
 * sent, for the procedure of req: its MAC and file system (fh.h), its
 * export, whether that export admits the caller (and from a privileged
 * port when it is `secure`). On success sets req->export, req->client and
 * req->cred (the caller after squashing), *out, and returns 0. Else
 * returns -EBADF (not a handle of ours: damaged, wrong length or version),
 * -ESTALE (another file system, or an export no longer configured) or
 * -EACCES (not admitted), with a rate-limited log line. Whether the file
 * still exists is for dbfs to say.
 */
int exp_fh_in(srv_req *req, const void *data, size_t len, dbfs_fh *out);

/*
 * exp_cred_squash -- the credential to act as, after root_squash/all_squash
 * of client c are applied to the AUTH_SYS credential a. Cannot fail.
 */
void exp_cred_squash(const srv_authsys *a, const cfg_client *c, dbfs_cred *out);

#endif /* PGNFS_EXP_H */
