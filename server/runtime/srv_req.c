/*
 * srv_req.c -- what a handler may ask of its request (srv.h): request
 * memory (srv_req_alloc and friends), rate-limited complaints about the
 * caller (srv_req_complain), and the caller's address.
 *
 * A request's memory is a chain of blocks: small allocations are carved
 * from the current block (SRV_ALLOC_BLOCK bytes), a large one gets a block
 * of its own. srv_req_release frees the whole chain at once after the
 * reply has been encoded.
 *
 * NOTES
 *   Blocks belong to the srv_req (req->allocs) and to the worker thread
 *   running it; nothing here is shared between threads. Allocation cannot
 *   fail: like g_malloc, exhaustion aborts.
 */
#include <netdb.h>
#include <stdarg.h>
#include <string.h>

#include <glib.h>

#include "srv.h"

#define SRV_ALLOC_BLOCK 8192
#define SRV_ALLOC_ALIGN 16

struct srv_alloc_block {
    srv_alloc_block *next;
    size_t size, used;
    _Alignas(SRV_ALLOC_ALIGN) unsigned char data[];
};

void *srv_req_alloc(srv_req *req, size_t n)
{
    size_t need = (n + SRV_ALLOC_ALIGN - 1) & ~(size_t)(SRV_ALLOC_ALIGN - 1);
    srv_alloc_block *b = req->allocs;

    if (need == 0)
        need = SRV_ALLOC_ALIGN;
    if (need < n)
        g_error("srv_req_alloc: %zu bytes is too large", n);
    if (b && b->size - b->used >= need) {
        void *p = b->data + b->used;
        b->used += need;
        return p; /* blocks are zeroed when made and never reused */
    }
    size_t size = need > SRV_ALLOC_BLOCK / 4 ? need : SRV_ALLOC_BLOCK;
    b = g_malloc0(sizeof *b + size);
    b->size = size;
    b->used = need;
    if (size == need && req->allocs) {
        /* A dedicated block: keep the current block first for small ones. */
        b->next = req->allocs->next;
        req->allocs->next = b;
    } else {
        b->next = req->allocs;
        req->allocs = b;
    }
    return b->data;
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

void srv_req_release(srv_req *req)
{
    srv_alloc_block *b = req->allocs;

    while (b) {
        srv_alloc_block *next = b->next;
        g_free(b);
        b = next;
    }
    req->allocs = NULL;
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
