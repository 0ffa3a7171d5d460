/*
 * srv_drc.h -- the duplicate request cache: replies of non-idempotent
 * calls kept for retransmissions (see srv_drc.c for the key, the entry
 * states and the locking).
 */
#ifndef PGNFS_SRV_DRC_H
#define PGNFS_SRV_DRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "srv_buf.h"

typedef struct srv_drc srv_drc;

/* What identifies one call: the client address (not its port), the xid,
 * the procedure, and a checksum of the argument bytes. */
typedef struct {
    unsigned char addr[16];
    uint8_t family; /* AF_INET (IPv4-mapped IPv6 included) or AF_INET6 */
    uint32_t xid, prog, vers, proc;
    uint64_t csum;
} srv_drc_key;

typedef enum {
    SRV_DRC_MISS,        /* new call: now IN_PROGRESS; finish or abort it */
    SRV_DRC_IN_PROGRESS, /* the first execution is still running: drop */
    SRV_DRC_HIT          /* done before: the reply was copied out */
} srv_drc_result;

/*
 * srv_drc_key_init -- fill k for a call from peer whose argument bytes are
 * args[0..len). Cannot fail.
 */
void srv_drc_key_init(srv_drc_key *k, const struct sockaddr *peer, uint32_t xid, uint32_t prog,
                      uint32_t vers, uint32_t proc, const void *args, size_t len);

/* srv_drc_new -- a cache of at most entries replies. Cannot fail. */
srv_drc *srv_drc_new(unsigned entries);
/* srv_drc_free -- free d and every reply it holds (NULL is fine). */
void srv_drc_free(srv_drc *d);

/*
 * srv_drc_begin -- look the call up. On SRV_DRC_HIT the cached reply is
 * copied into *reply. On SRV_DRC_MISS an IN_PROGRESS entry now exists and
 * the caller must end it with srv_drc_finish or srv_drc_abort.
 */
srv_drc_result srv_drc_begin(srv_drc *d, const srv_drc_key *k, srv_buf *reply);

/* srv_drc_finish -- the call's reply (copied); retransmissions get it. */
void srv_drc_finish(srv_drc *d, const srv_drc_key *k, const void *reply, size_t len);

/* srv_drc_abort -- forget the call (no reply worth replaying). */
void srv_drc_abort(srv_drc *d, const srv_drc_key *k);

/* Entries currently held (for tests and statistics). */
unsigned srv_drc_count(srv_drc *d);

#endif /* PGNFS_SRV_DRC_H */
