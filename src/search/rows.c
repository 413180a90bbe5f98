/* rows.c - the first k matches in table order, streamed in batches, and
 * late materialisation: reading only the winners' rows, grouped by
 * segment, on the search's pool. */
#include "search/topk_int.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- first k ---- */
int qr_par_first(qr_par_search *p, uint64_t k, qr_hits_fn emit, void *ctx, qr_topk_stats *st,
                 qr_err *e)
{
    enum { BATCH = 4096 };
    qr_hit *buf = qr_qmalloc(p->ctx, sizeof *buf * BATCH);
    if (!buf)
        return qr_qctx_nomem(p->ctx, e);
    qr_arena *a = &p->run[0];
    uint64_t n = 0;
    uint32_t nb = 0;
    int rc = 0;
    for (uint32_t i = 0; i < p->nsegs && n < k && rc == 0; i++) {
        if (qr_par_check(p, e) != 0) {
            rc = -1;
            break;
        }
        qr_arena_reset(a);
        p->ss[i].run = &p->qrun[0];
        qr_it *it = qr_segsearch_compile(&p->ss[i], p->q[0], a, e);
        if (!it) {
            rc = -1;
            break;
        }
        if (st)
            st->segments++;
        for (uint32_t d = qr_it_next(it); d != QR_NO_DOC && n < k && rc == 0; d = qr_it_next(it)) {
            buf[nb++] = (qr_hit){0, 0, i, d};
            n++;
            if (nb == BATCH) {
                rc = qr_par_check(p, e) != 0 ? -1 : emit(ctx, buf, nb, e);
                nb = 0;
            }
        }
        if (rc == 0 && qr_it_failed(it))
            rc = qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                         p->ss[i].seg->path);
    }
    if (rc == 0 && nb)
        rc = emit(ctx, buf, nb, e);
    qr_arena_reset(a);
    qr_qfree(p->ctx, buf);
    return rc;
}

/* ---- late materialisation ---- */
static int cmp_place(const void *a, const void *b)
{
    const qr_hit *x = *(const qr_hit *const *)a, *y = *(const qr_hit *const *)b;
    if (x->seg != y->seg)
        return x->seg < y->seg ? -1 : 1;
    return x->doc < y->doc ? -1 : x->doc > y->doc;
}

typedef struct rows_task {
    qr_par_search *p;
    int t, rc;
    const qr_hit *hits, **place;
    uint32_t from, to;
    size_t *off, *len;
    uint8_t *by; /* which task read hit i */
    qr_buf buf;
    size_t charged; /* of buf's capacity, charged to the query's budget */
    qr_err err;
} rows_task;

/* The readers of one segment's row: from the cache entry's pool when the
 * segment is a cache entry's (given back by qr_par_free), else opened. */
static int readers_open(qr_segsearch *ss, const qr_tabdef *d, qr_colreader **rd, qr_err *e)
{
    if (!ss->ref)
        return qr_row_readers_open(ss->seg, d, rd, e);
    for (uint32_t i = 0; i < d->ncols; i++)
        rd[i] = NULL;
    for (uint32_t i = 0; i < d->ncols; i++) {
        int c = qr_row_reader_col(ss->seg, d, i, e);
        if (c == -1)
            continue;
        if (c == -2 || !(rd[i] = qr_segref_reader(ss->ref, c, e))) {
            for (uint32_t j = 0; j < i; j++)
                qr_segref_reader_done(ss->ref, rd[j]);
            memset(rd, 0, sizeof *rd * d->ncols);
            return -1;
        }
    }
    return 0;
}

/* Read place[from..to) with this thread's column readers (kept in p, one
 * set per thread and segment, opened on first use in random-access mode). */
static void rows_worker(void *arg, int w)
{
    rows_task *k = (rows_task *)arg + w;
    qr_par_search *p = k->p;
    uint32_t ticks = 0;
    for (uint32_t i = k->from; i < k->to && k->rc == 0; i++) {
        if (qr_qctx_tick(p->ctx, &ticks, &k->err) != 0) {
            k->rc = -1;
            break;
        }
        const qr_hit *h = k->place[i];
        size_t hi = (size_t)(h - k->hits);
        size_t slot = (size_t)k->t * p->nsegs + h->seg;
        qr_colreader **rd = &p->readers[slot * p->def->ncols];
        if (!p->readers_open[slot]) {
            if (readers_open(&p->ss[h->seg], p->def, rd, &k->err) != 0) {
                k->rc = -1;
                break;
            }
            p->readers_open[slot] = 1;
            for (uint32_t c = 0; c < p->def->ncols; c++)
                if (rd[c])
                    qr_colr_random(rd[c], 1);
        }
        size_t at = k->buf.len;
        if (k->rc == 0 && qr_row_json(p->def, rd, h->doc, &k->buf, &k->err) != 0)
            k->rc = -1;
        if (k->rc == 0 && k->buf.cap > k->charged) { /* the rows read so far count */
            if (qr_qctx_charge(p->ctx, k->buf.cap - k->charged) != 0) {
                k->rc = qr_qctx_nomem(p->ctx, &k->err);
                break;
            }
            k->charged = k->buf.cap;
        }
        k->off[hi] = at;
        k->len[hi] = k->buf.len - at;
        k->by[hi] = (uint8_t)k->t;
    }
}

int qr_par_rows(qr_par_search *p, const qr_hit *hits, uint32_t n, qr_buf *out, qr_err *e)
{
    /* read in (segment, row) order so a block or page serves all its rows;
     * split that order between the threads; emit in the hits' order */
    qr_qctx *c = p->ctx;
    const qr_hit **place = qr_qmalloc(c, sizeof *place * (n ? n : 1));
    size_t *off = qr_qmalloc(c, sizeof *off * (n ? n : 1)),
           *len = qr_qmalloc(c, sizeof *len * (n ? n : 1));
    uint8_t *by = qr_qmalloc(c, n ? n : 1);
    int rc = (!place || !off || !len || !by) ? qr_qctx_nomem(c, e) : 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        if (hits[i].seg >= p->nsegs || hits[i].doc >= p->ss[hits[i].seg].seg->rows)
            rc = qr_errf(e, QR_E_ARGS, "row %u of segment %u does not exist", hits[i].doc,
                         hits[i].seg);
        place[i] = &hits[i];
    }
    if (rc == 0)
        qsort(place, n, sizeof *place, cmp_place);
    size_t nsl = (size_t)p->threads * (p->nsegs ? p->nsegs : 1);
    if (rc == 0 && !p->readers &&
        (!(p->readers = calloc(nsl * p->def->ncols, sizeof *p->readers)) ||
         !(p->readers_open = calloc(nsl, 1))))
        rc = qr_errf(e, QR_E_NOMEM, "out of memory reading rows");
    int nt = n >= 16 ? p->threads : 1;
    rows_task tasks[QR_MAX_SEARCH_THREADS];
    for (int t = 0; t < nt; t++) {
        tasks[t] = (rows_task){.p = p, .t = t, .hits = hits, .place = place, .off = off,
                               .len = len, .by = by};
        tasks[t].from = (uint32_t)((uint64_t)n * t / nt);
        tasks[t].to = (uint32_t)((uint64_t)n * (t + 1) / nt);
        qr_buf_init(&tasks[t].buf);
    }
    if (rc == 0)
        qr_pool_run(p->pool, nt, rows_worker, tasks); /* worker t = slot t */
    for (int t = 0; t < nt && rc == 0; t++)
        if (tasks[t].rc) {
            rc = -1;
            *e = tasks[t].err;
        }
    for (uint32_t i = 0; i < n && rc == 0; i++)
        qr_buf_put(out, tasks[by[i]].buf.p + off[i], len[i]);
    for (int t = 0; t < nt; t++) {
        if (tasks[t].buf.oom && rc == 0)
            rc = qr_errf(e, QR_E_NOMEM, "out of memory reading rows");
        qr_buf_free(&tasks[t].buf);
        qr_qctx_release(c, tasks[t].charged);
    }
    if (rc == 0 && out->oom)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory reading rows");
    qr_qfree(c, place);
    qr_qfree(c, off);
    qr_qfree(c, len);
    qr_qfree(c, by);
    return rc;
}
