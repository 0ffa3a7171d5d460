/*
 * srv_req.c -- per-request memory (srv_req_alloc and friends, srv.h) and
 * the growable byte buffer (srv_buf, srv_int.h).
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
#include <string.h>

#include "srv_int.h"

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

void srv_buf_reserve(srv_buf *b, size_t cap)
{
    if (cap <= b->cap)
        return;
    size_t n = b->cap ? b->cap : 256;
    while (n < cap)
        n *= 2;
    b->data = g_realloc(b->data, n);
    b->cap = n;
}

void srv_buf_set(srv_buf *b, const void *d, size_t n)
{
    srv_buf_reserve(b, n);
    if (n)
        memcpy(b->data, d, n);
    b->len = n;
}

void srv_buf_clear(srv_buf *b)
{
    g_free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}
