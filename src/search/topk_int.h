/* topk_int.h - what the top-k collectors share (topk.c: the entry point;
 * topk_score.c: by score; topk_time.c: newest first; rows.c: first-k and
 * reading rows): the orders of topk.h and the bounded heap, inline because
 * every collected hit goes through them. Include only from src/search/. */
#ifndef QR_TOPK_INT_H
#define QR_TOPK_INT_H

#include <stdlib.h>

#include "search/topk.h"

static inline int better(qr_topk_by by, const qr_hit *a, const qr_hit *b)
{
    if (by == QR_BY_SCORE) {
        if (a->score != b->score)
            return a->score > b->score;
        return a->seg != b->seg ? a->seg < b->seg : a->doc < b->doc;
    }
    if (by == QR_BY_TIME) {
        if (a->ts != b->ts)
            return a->ts > b->ts;
        return a->seg != b->seg ? a->seg > b->seg : a->doc > b->doc;
    }
    return a->seg != b->seg ? a->seg < b->seg : a->doc < b->doc;
}

/* A bounded heap whose root is the worst hit kept: the threshold. */
typedef struct heap {
    qr_topk_by by;
    qr_hit *v;
    uint32_t n, k;
} heap;

static inline void heap_down(heap *h, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < h->n && better(h->by, &h->v[w], &h->v[l]))
            w = l;
        if (r < h->n && better(h->by, &h->v[w], &h->v[r]))
            w = r;
        if (w == i)
            return;
        qr_hit t = h->v[i];
        h->v[i] = h->v[w];
        h->v[w] = t;
        i = w;
    }
}

/* Offer a hit; 1 when it was kept. */
static inline int heap_offer(heap *h, const qr_hit *x)
{
    if (h->n < h->k) {
        uint32_t i = h->n++;
        h->v[i] = *x;
        while (i > 0) { /* up */
            uint32_t p = (i - 1) / 2;
            if (!better(h->by, &h->v[p], &h->v[i]))
                break;
            qr_hit t = h->v[i];
            h->v[i] = h->v[p];
            h->v[p] = t;
            i = p;
        }
        return 1;
    }
    if (!h->k || !better(h->by, x, &h->v[0]))
        return 0;
    h->v[0] = *x;
    heap_down(h, 0);
    return 1;
}

static inline int heap_full(const heap *h) { return h->n == h->k; }

static inline int cmp_hits(const void *a, const void *b, void *by)
{
    qr_topk_by o = *(const qr_topk_by *)by;
    return better(o, a, b) ? -1 : better(o, b, a) ? 1 : 0;
}
static inline void sort_hits(qr_topk_by by, qr_hit *v, uint32_t n)
{
    qsort_r(v, n, sizeof *v, cmp_hits, &by);
}

int tk_by_score(qr_par_search *p, uint32_t k, int exhaustive, qr_hit *out, uint32_t *nout,
                qr_topk_stats *st, qr_err *e);
int tk_by_time(qr_par_search *p, uint32_t k, qr_hit *out, uint32_t *nout, qr_topk_stats *st,
               qr_err *e);

#endif
