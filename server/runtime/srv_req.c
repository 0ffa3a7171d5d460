/*
 * srv_req.c -- what a handler may ask of its request (srv.h): request
 * memory (srv_req_alloc and friends), the payload of a result
 * (srv_req_payload), rate-limited complaints about the caller
 * (srv_req_complain), and the caller's address.
 *
 * A request's memory is a chain of blocks: small allocations are carved
 * from the current block (SRV_ALLOC_BLOCK bytes), a large one gets a block
 * of its own. srv_req_release ends them all at once after the reply has
 * been encoded: freed, or, on a worker thread (srv_req_keep_begin), kept
 * on the thread's spare list for its next requests, up to SRV_ALLOC_KEEP
 * bytes. A call in the steady state thus allocates nothing; what it is
 * handed is zeroed as it is carved (only the bytes asked for).
 *
 * A payload lives in the reply buffer itself, SRV_PAYLOAD_HEAD bytes in,
 * where srv_reply_payload (srv_reply.c) builds the reply around it.
 *
 * NOTES
 *   Blocks belong to the srv_req (req->allocs) and to the worker thread
 *   running it; the spare list is thread-local: nothing here is shared
 *   between threads. Allocation cannot fail: like g_malloc, exhaustion
 *   aborts.
 */
#include <netdb.h>
#include <stdarg.h>
#include <string.h>

#include <glib.h>

#include "srv.h"
#include "srv_buf.h"
#include "srv_reply.h"

#define SRV_ALLOC_BLOCK 8192
#define SRV_ALLOC_ALIGN 16
/* Request memory a worker thread keeps between its requests. */
#define SRV_ALLOC_KEEP (2u * 1024u * 1024u)

struct srv_alloc_block {
    srv_alloc_block *next;
    size_t size, used;
    _Alignas(SRV_ALLOC_ALIGN) unsigned char data[];
};

/* The calling thread's kept blocks (srv_req_keep_begin). */
typedef struct {
    bool on;
    srv_alloc_block *spare;
    size_t bytes;
} srv_req_keep;

static _Thread_local srv_req_keep srv_keep;

/* A block of at least size bytes: a spare one if this thread keeps one
 * (the smallest that fits), else a new one. Its contents are not
 * zeroed. */
static srv_alloc_block *srv_req_block(size_t size)
{
    srv_alloc_block **best = NULL, *b;

    for (srv_alloc_block **pp = &srv_keep.spare; *pp; pp = &(*pp)->next)
        if ((*pp)->size >= size && (!best || (*pp)->size < (*best)->size))
            best = pp;
    if (best) {
        b = *best;
        *best = b->next;
        srv_keep.bytes -= b->size;
        b->next = NULL;
        return b;
    }
    b = g_malloc(sizeof *b + size);
    b->size = size;
    b->next = NULL;
    return b;
}

/* srv_req_alloc -- see srv.h. */
void *srv_req_alloc(srv_req *req, size_t n)
{
    size_t need = (n + SRV_ALLOC_ALIGN - 1) & ~(size_t)(SRV_ALLOC_ALIGN - 1);
    srv_alloc_block *b = req->allocs;
    void *p;

    if (need == 0)
        need = SRV_ALLOC_ALIGN;
    if (need < n)
        g_error("srv_req_alloc: %zu bytes is too large", n);
    if (b && b->size - b->used >= need) {
        p = b->data + b->used;
        b->used += need;
        memset(p, 0, n);
        return p;
    }
    size_t size = need > SRV_ALLOC_BLOCK / 4 ? need : SRV_ALLOC_BLOCK;
    b = srv_req_block(size);
    b->used = need;
    if (need > SRV_ALLOC_BLOCK / 4 && req->allocs) {
        /* A dedicated block: keep the current block first for small ones. */
        b->next = req->allocs->next;
        req->allocs->next = b;
    } else {
        b->next = req->allocs;
        req->allocs = b;
    }
    memset(b->data, 0, n);
    return b->data;
}

/* srv_req_payload -- see srv.h. */
void *srv_req_payload(srv_req *req, size_t n)
{
    if (!req->out || req->payload)
        return srv_req_alloc(req, n);
    srv_buf_reserve(req->out, SRV_PAYLOAD_HEAD + n + SRV_PAYLOAD_TAIL);
    req->payload = req->out->data + SRV_PAYLOAD_HEAD;
    req->payload_cap = n;
    return req->payload;
}

char *srv_req_strdup(srv_req *req, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = srv_req_alloc(req, n);

    memcpy(p, s, n);
    return p;
}

/* srv_req_drop -- see srv.h. */
void srv_req_drop(srv_req *req)
{
    req->drop = true;
}

/* srv_req_release -- see srv.h. */
void srv_req_release(srv_req *req)
{
    srv_alloc_block *b = req->allocs;

    while (b) {
        srv_alloc_block *next = b->next;

        if (srv_keep.on && srv_keep.bytes + b->size <= SRV_ALLOC_KEEP) {
            b->next = srv_keep.spare;
            srv_keep.spare = b;
            srv_keep.bytes += b->size;
        } else {
            g_free(b);
        }
        b = next;
    }
    req->allocs = NULL;
    req->payload = NULL;
    req->payload_cap = 0;
}

/* srv_req_keep_begin -- see srv.h. */
void srv_req_keep_begin(void)
{
    srv_keep.on = true;
}

/* srv_req_keep_end -- see srv.h. */
void srv_req_keep_end(void)
{
    srv_alloc_block *b = srv_keep.spare;

    while (b) {
        srv_alloc_block *next = b->next;
        g_free(b);
        b = next;
    }
    srv_keep.spare = NULL;
    srv_keep.bytes = 0;
    srv_keep.on = false;
}

void srv_req_complain(srv_req *req, const char *fmt, ...)
{
    const struct sockaddr *peer = (const struct sockaddr *)&req->peer;
    char who[LOG_PEER_STRLEN];
    unsigned suppressed;
    va_list ap;

    if (!log_ratelimit_allow(req->rl, peer, &suppressed))
        return;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    log_peer_string(peer, req->peerlen, who, sizeof who);
    if (suppressed)
        g_message("%s from %s: %s (%u similar lines suppressed)",
                  req->prog ? req->prog->name : "call", who, msg, suppressed);
    else
        g_message("%s from %s: %s", req->prog ? req->prog->name : "call", who, msg);
    g_free(msg);
}

void srv_peer_host(const srv_req *req, char *buf, size_t len)
{
    if (getnameinfo((const struct sockaddr *)&req->peer, req->peerlen, buf, (socklen_t)len, NULL, 0,
                    NI_NUMERICHOST) != 0)
        g_strlcpy(buf, "?", len);
}

unsigned srv_peer_port(const srv_req *req)
{
    const struct sockaddr *sa = (const struct sockaddr *)&req->peer;

    if (sa->sa_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)sa)->sin_port);
    if (sa->sa_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
    return 65535;
}
