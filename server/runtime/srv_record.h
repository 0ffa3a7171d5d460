/*
 * srv_record.h -- RPC record marking over TCP (RFC 5531 section 11):
 * reassembly of a byte stream into whole records, and the mark of a
 * record sent. Pure functions over caller-owned state; see srv_record.c
 * for the states.
 */
#ifndef PGNFS_SRV_RECORD_H
#define PGNFS_SRV_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The last-fragment bit of a record mark. */
#define SRV_RECORD_LAST 0x80000000u

/*
 * Reassembly state of one TCP stream. See srv_record.c for the states.
 * Event-thread only; no locking.
 */
typedef struct {
    size_t max;            /* largest record accepted */
    unsigned char mark[4]; /* the fragment header being read */
    unsigned mark_have;    /* bytes of it read so far */
    bool in_fragment;      /* reading a fragment's payload */
    bool last;             /* the current fragment ends the record */
    uint32_t frag_left;    /* payload bytes of the fragment still to come */
    unsigned char *buf;    /* the record so far (g_malloc'd) */
    size_t len, cap;
} srv_record;

enum {
    SRV_RECORD_NEED = 0,    /* all input consumed, record not complete */
    SRV_RECORD_COMPLETE = 1 /* a record is ready: srv_record_take */
};

/* srv_record_init -- an empty reassembler for records of at most max bytes. */
void srv_record_init(srv_record *r, size_t max);
/* srv_record_clear -- free what r holds; r is empty again. */
void srv_record_clear(srv_record *r);

/*
 * srv_record_feed -- consume input until a record completes or the input
 * runs out; *used is how many bytes were consumed. Returns
 * SRV_RECORD_COMPLETE (take the record, then feed the rest), SRV_RECORD_NEED,
 * -EMSGSIZE if the record would exceed max, or -EBADMSG for a zero-length
 * fragment that is not the end of a non-empty record. After an error the
 * stream is beyond repair: close it.
 */
int srv_record_feed(srv_record *r, const void *data, size_t len, size_t *used);

/*
 * srv_record_take -- the completed record (g_malloc'd, caller g_frees it)
 * and its length; r starts on the next record. Only after
 * SRV_RECORD_COMPLETE.
 */
unsigned char *srv_record_take(srv_record *r, size_t *len);

/* srv_record_partial -- true while a record has begun and not completed. */
bool srv_record_partial(const srv_record *r);

/* srv_record_mark -- the 4-byte mark of a single-fragment record of len. */
void srv_record_mark(unsigned char out[4], size_t len);

#endif /* PGNFS_SRV_RECORD_H */
