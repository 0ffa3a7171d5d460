/*
 * client_peer.h -- a fake RPC peer on 127.0.0.1 for the tests of the
 * outgoing RPC client (test_client*.c): one thread serving TCP and UDP on
 * the same port with raw sockets, answering calls well, badly or not at
 * all as its mode says, and counting what it saw.
 *
 * NOTES
 *   Counters are read with peer_wait (waits for a count with a generous
 *   deadline, never for a time) or peer_count. The peer's thread owns its
 *   sockets; peer_stop joins it and frees everything.
 */
#ifndef PGNFS_TEST_CLIENT_PEER_H
#define PGNFS_TEST_CLIENT_PEER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* The test program every peer serves (but PEER_PMAP). */
#define PEER_PROG 0x20000099u
#define PEER_VERS 1u
/* Procedures: 0 void; 1 u_int -> u_int + 1; 2 u_int n -> a string of n 'x'. */
#define PEER_PROC_NULL 0u
#define PEER_PROC_INC  1u
#define PEER_PROC_STR  2u

typedef enum {
    PEER_ECHO,         /* answer every call as the procedures above say */
    PEER_SILENT,       /* read everything, answer nothing */
    PEER_DROP,         /* drop the first `drop` calls, then echo */
    PEER_PROG_UNAVAIL, /* answer PROG_UNAVAIL */
    PEER_GARBAGE,      /* answer 64 random bytes (a record over TCP) */
    PEER_WRONG_XID,    /* answer with the wrong xid, never the right one */
    PEER_BAD_BODY,     /* the right xid, SUCCESS, a result cut short */
    PEER_HUGE_MARK,    /* TCP: answer a record mark announcing 2 GiB, then nothing */
    PEER_BAD_MARK,     /* TCP: answer a zero-length non-last fragment */
    PEER_CLOSE,        /* TCP: close the connection when a call arrives */
    PEER_FLOOD,        /* answer `flood` replies with unknown xids, then the right one */
    PEER_BIG,          /* answer a well-formed reply of `big` bytes */
    PEER_PMAP,         /* a portmapper: GETPORT of pmap_prog answers pmap_answer, else 0 */
    PEER_MUTATE        /* an echo reply with 1 to 4 random bytes changed, or cut short */
} peer_mode;

typedef struct {
    peer_mode mode;
    const char *addr;     /* numeric address to bind (IPv4 or IPv6); NULL = 127.0.0.1 */
    unsigned drop;        /* PEER_DROP */
    unsigned flood;       /* PEER_FLOOD */
    unsigned big;         /* PEER_BIG */
    uint32_t pmap_prog;   /* PEER_PMAP; 0 = any program */
    unsigned pmap_answer; /* PEER_PMAP */
} peer_opts;

typedef enum {
    PEER_N_CALLS,   /* calls received (datagrams or records that parse as calls) */
    PEER_N_ACCEPTS, /* TCP connections accepted */
    PEER_N_EOFS,    /* TCP connections the other side closed */
    PEER_N_AUTHSYS, /* calls with an AUTH_SYS credential */
    PEER_N_COUNTERS
} peer_counter;

typedef struct peer peer;

/* peer_start -- a peer on o->addr (TCP and UDP, one port). Asserts it started. */
peer *peer_start(const peer_opts *o);
/* peer_port -- its port. */
unsigned peer_port(const peer *p);
/* peer_count -- a counter now. */
unsigned peer_count(peer *p, peer_counter which);
/* peer_wait -- wait until a counter reaches at least n; false after 60 s. */
bool peer_wait(peer *p, peer_counter which, unsigned n);
/* peer_last_uid -- the uid of the last AUTH_SYS credential seen. */
uint32_t peer_last_uid(peer *p);
/* peer_last_udp -- where the last UDP call came from, and its xid. */
void peer_last_udp(peer *p, struct sockaddr_storage *from, uint32_t *xid);
/* peer_stop -- stop and free p. */
void peer_stop(peer *p);

#endif /* PGNFS_TEST_CLIENT_PEER_H */
