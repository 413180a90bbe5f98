/* arena.c - bump allocator (see arena.h). Chunks are a singly linked list;
 * a request larger than the chunk size gets a chunk of its own. */
#include "util/arena.h"

#include "util/qctx.h"

#include <stdlib.h>
#include <string.h>

struct qr_arena_chunk {
    qr_arena_chunk *next;
    size_t size, off;
    _Alignas(16) unsigned char data[];
};

void qr_arena_init(qr_arena *a, size_t chunk_size, size_t limit)
{
    memset(a, 0, sizeof *a);
    a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
    a->limit = limit;
}

void qr_arena_set_ctx(qr_arena *a, qr_qctx *ctx)
{
    qr_qctx_release(a->ctx, a->reserved);
    if (ctx) /* what it already holds, taken even past the limit */
        atomic_fetch_add(&ctx->used, a->reserved);
    a->ctx = ctx;
}

void *qr_arena_alloc(qr_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    qr_arena_chunk *c = a->head;
    if (!c || c->size - c->off < n) {
        size_t sz = n > a->chunk_size ? n : a->chunk_size;
        if (a->limit && a->reserved + sz > a->limit)
            return NULL;
        if (qr_qctx_charge(a->ctx, sz) != 0)
            return NULL;
        c = malloc(sizeof *c + sz);
        if (!c) {
            qr_qctx_release(a->ctx, sz);
            return NULL;
        }
        c->size = sz;
        c->off = 0;
        c->next = a->head;
        a->head = c;
        a->reserved += sz;
    }
    void *p = c->data + c->off;
    c->off += n;
    a->used += n;
    return p;
}

void *qr_arena_memdup(qr_arena *a, const void *p, size_t n)
{
    void *q = qr_arena_alloc(a, n ? n : 1);
    if (q && n)
        memcpy(q, p, n);
    return q;
}

void qr_arena_reset(qr_arena *a)
{
    qr_arena_chunk *c = a->head;
    if (!c)
        return;
    /* keep the oldest chunk of default size if there is one, free the rest */
    qr_arena_chunk *keep = NULL;
    while (c) {
        qr_arena_chunk *n = c->next;
        if (!keep && !n && c->size == a->chunk_size)
            keep = c;
        else
            free(c);
        c = n;
    }
    a->head = keep;
    qr_qctx_release(a->ctx, a->reserved - (keep ? keep->size : 0));
    a->reserved = keep ? keep->size : 0;
    if (keep)
        keep->off = 0;
    a->used = 0;
}

void qr_arena_free(qr_arena *a)
{
    qr_arena_chunk *c = a->head;
    while (c) {
        qr_arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
    qr_qctx_release(a->ctx, a->reserved);
    a->used = a->reserved = 0;
}

char *qr_arena_strndup(qr_arena *a, const char *p, size_t n)
{
    char *c = qr_arena_alloc(a, n + 1);
    if (c) {
        if (n)
            memcpy(c, p, n);
        c[n] = 0;
    }
    return c;
}
