/* arena.h - bump allocator for per-query and per-segment-build memory.
 *
 * Allocations live until qr_arena_reset() or qr_arena_free(); nothing is freed
 * one by one. An arena may carry a byte limit: past it, allocation returns
 * NULL (and the caller reports QR_E_NOMEM) instead of growing without bound.
 * An arena may also draw on a query's budget (util/qctx.h): its chunks are
 * charged to the context when taken and released when freed.
 */
#ifndef QR_ARENA_H
#define QR_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct qr_arena_chunk qr_arena_chunk;

typedef struct qr_arena {
    qr_arena_chunk *head; /* current chunk, linked to older ones */
    size_t chunk_size;    /* default size of new chunks */
    size_t used;          /* bytes handed out since init/reset */
    size_t reserved;      /* bytes malloc'ed for chunks */
    size_t limit;         /* 0 = unlimited; else max reserved bytes */
    struct qr_qctx *ctx;  /* chunks charged to it; NULL = not counted */
} qr_arena;

void qr_arena_init(qr_arena *a, size_t chunk_size, size_t limit);
/* Charge the arena's chunks to ctx from now on (what it holds moves from
 * the old context to the new one). */
void qr_arena_set_ctx(qr_arena *a, struct qr_qctx *ctx);
/* Returns 8-byte-aligned memory, or NULL when the limit or malloc fails. */
void *qr_arena_alloc(qr_arena *a, size_t n);
void *qr_arena_memdup(qr_arena *a, const void *p, size_t n);
/* A NUL-terminated copy of n bytes (which may hold NULs); NULL when full. */
char *qr_arena_strndup(qr_arena *a, const char *p, size_t n);
/* Frees all chunks but the first, keeps it for reuse. */
void qr_arena_reset(qr_arena *a);
void qr_arena_free(qr_arena *a);

#endif
