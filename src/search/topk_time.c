/* topk_time.c - the k newest rows: segments newest first by their time
 * bounds, windows of rows read from a segment's end (its rows are in time
 * order), stopping once no later segment can hold a newer row. */
#include "search/topk_int.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct segkey {
    int64_t ts;
    uint32_t seg;
} segkey;

static int cmp_segkey(const void *a, const void *b)
{
    const segkey *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts > y->ts ? -1 : 1;
    return x->seg > y->seg ? -1 : x->seg < y->seg;
}

/* Timestamp of row d (INT64_MIN for NULL; rows below z are the NULLs). */
static int row_ts(qr_par_search *p, uint32_t si, uint32_t d, uint32_t z, qr_colreader **r,
                  int64_t *ts, qr_err *e)
{
    int isnull = 1;
    *ts = INT64_MIN;
    if (d < z)
        return 0;
    if (!*r && !(*r = qr_colr_open(p->ss[si].seg, p->ss[si].seg->sort_col, e)))
        return -1;
    if (qr_colr_int(*r, d, ts, &isnull, e) != 0)
        return -1;
    if (isnull)
        *ts = INT64_MIN;
    return 0;
}

/* Offer row d of segment si: 1 taken, 0 not (nor will any earlier row of
 * the segment be), -1 with e set. */
static int offer_row(qr_par_search *p, uint32_t si, uint32_t d, uint32_t z, heap *h,
                     qr_colreader **r, qr_err *e)
{
    qr_hit hit = {0, 0, si, d};
    if (row_ts(p, si, d, z, r, &hit.ts, e) != 0)
        return -1;
    return heap_offer(h, &hit) ? 1 : 0;
}

/* The newest matches of a bitmap filter: rows from the last set bit down,
 * until one does not make the heap (every earlier row is older). */
static int newest_bits(qr_par_search *p, uint32_t si, const void *bits, uint32_t rows, uint32_t z,
                       heap *h, qr_colreader **r, qr_err *e)
{
    for (size_t w = ((size_t)rows + 63) / 64; w-- > 0;) {
        uint64_t x;
        memcpy(&x, (const unsigned char *)bits + w * 8, 8);
        while (x) {
            uint32_t d = (uint32_t)(w * 64 + 63 - (size_t)__builtin_clzll(x));
            x &= ~(1ull << (d & 63));
            if (d >= rows)
                continue;
            int k = offer_row(p, si, d, z, h, r, e);
            if (k <= 0)
                return k;
        }
    }
    return 0;
}

/* The newest rows of [lo, hi) (a row range matches every row of it). */
static int newest_range(qr_par_search *p, uint32_t si, uint32_t lo, uint32_t hi, uint32_t z,
                        heap *h, qr_colreader **r, qr_err *e)
{
    for (uint32_t d = hi; d-- > lo;) {
        int k = offer_row(p, si, d, z, h, r, e);
        if (k <= 0)
            return k;
    }
    return 0;
}

static int seg_newest(qr_par_search *p, uint32_t si, heap *h, qr_topk_stats *st, qr_err *e)
{
    qr_segsearch *ss = &p->ss[si];
    qr_segment *s = ss->seg;
    uint32_t rows = (uint32_t)s->rows, z = (uint32_t)s->cols[s->sort_col].null_count;
    qr_arena *a = &p->run[0];
    qr_colreader *r = NULL;
    uint32_t *docs = NULL;
    size_t cap = 0;
    int rc = 0;
    uint64_t win = 0;
    /* rows outside the filter's time range on the sort column cannot match:
     * the windows start at its end and stop at its start */
    uint32_t lo_all, hi;
    ss->run = &p->qrun[0];
    if (qr_segsearch_row_bounds(ss, p->q[0], a, &lo_all, &hi, e) != 0)
        return -1;
    st->segments++;
    while (hi > lo_all && rc == 0) {
        if (qr_par_check(p, e) != 0) { /* a window can be a whole segment's rows */
            rc = -1;
            break;
        }
        qr_arena_reset(a);
        ss->run = &p->qrun[0];
        qr_it *it = qr_segsearch_compile(ss, p->q[0], a, e);
        if (!it) {
            rc = -1;
            break;
        }
        const void *bits = qr_it_bitmap_bits(it);
        uint32_t rlo, rhi;
        if (bits) { /* a bitmap (dense words, expansions, ranges): walk it backwards */
            rc = newest_bits(p, si, bits, rows, z, h, &r, e);
            break;
        }
        if (qr_it_range_bounds(it, &rlo, &rhi)) { /* a row range: its last rows */
            rc = newest_range(p, si, rlo, rhi, z, h, &r, e);
            break;
        }
        if (!win) { /* first window: sized to hold k matches at the filter's density */
            uint64_t need = h->k - (heap_full(h) ? 0 : h->n);
            win = it->cost ? need * 2 * (hi - lo_all) / it->cost + 1 : rows;
            win = win < 1024 ? 1024 : win;
        }
        uint32_t lo = hi - lo_all > win ? hi - (uint32_t)win : lo_all;
        size_t n = 0;
        uint32_t d = qr_it_next(it);
        if (d != QR_NO_DOC && d < lo)
            d = qr_it_advance(it, lo);
        for (; d < hi; d = qr_it_next(it)) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 1024;
                uint32_t *nd = qr_qrealloc(p->ctx, docs, sizeof *nd * nc);
                if (!nd) {
                    rc = qr_qctx_nomem(p->ctx, e);
                    break;
                }
                docs = nd;
                cap = nc;
            }
            docs[n++] = d;
        }
        if (rc == 0 && qr_it_failed(it))
            rc = qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                         s->path);
        /* newest first: once a row does not make the heap, no earlier one will */
        for (size_t i = n; i-- > 0 && rc == 0;) {
            int k = offer_row(p, si, docs[i], z, h, &r, e);
            if (k < 0)
                rc = -1;
            else if (k == 0)
                break;
        }
        if (rc != 0 || lo == lo_all)
            break;
        if (heap_full(h)) { /* can any row before lo still win? */
            qr_hit x = {0, 0, si, lo - 1};
            if (row_ts(p, si, lo - 1, z, &r, &x.ts, e) != 0) {
                rc = -1;
                break;
            }
            if (!better(QR_BY_TIME, &x, &h->v[0]))
                break;
        }
        hi = lo;
        win *= 4;
    }
    qr_colr_close(r);
    qr_qfree(p->ctx, docs);
    qr_arena_reset(a);
    return rc;
}

int tk_by_time(qr_par_search *p, uint32_t k, qr_hit *out, uint32_t *nout, qr_topk_stats *st,
                   qr_err *e)
{
    segkey *order = malloc(sizeof *order * (p->nsegs ? p->nsegs : 1));
    if (!order)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < p->nsegs; i++) {
        const qr_segment *s = p->ss[i].seg;
        if (s->sort_col < 0) {
            free(order);
            return qr_errf(e, QR_E_FEATURE, "segment %s has no sort column: the newest rows of "
                           "a table need one (a timestamp the rows are sorted by)", s->path);
        }
        int all_null = s->cols[s->sort_col].null_count >= s->rows;
        order[i] = (segkey){all_null ? INT64_MIN : s->max_ts, i};
    }
    qsort(order, p->nsegs, sizeof *order, cmp_segkey);
    heap h = {QR_BY_TIME, out, 0, k};
    int rc = 0;
    for (uint32_t j = 0; j < p->nsegs && rc == 0; j++) {
        const qr_segment *s = p->ss[order[j].seg].seg;
        if (!s->rows)
            continue;
        qr_hit top = {0, order[j].ts, order[j].seg, (uint32_t)s->rows - 1};
        if (heap_full(&h) && !better(QR_BY_TIME, &top, &h.v[0]))
            break; /* this segment and every later one are older */
        rc = qr_par_check(p, e) != 0 ? -1 : seg_newest(p, order[j].seg, &h, st, e);
    }
    free(order);
    if (rc != 0)
        return -1;
    sort_hits(QR_BY_TIME, out, h.n);
    *nout = h.n;
    return 0;
}
