/* topk.c - top-k by score (threads, shared threshold, block-max scorers),
 * newest-k (segments newest first, windows of rows from the end), first-k,
 * and reading the winners' rows (see topk.h). */
#include "search/topk.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "search/bm25.h"
#include "search/scorer.h"

/* ---- the orders (topk.h) ---- */
static int better(qr_topk_by by, const qr_hit *a, const qr_hit *b)
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

static void heap_down(heap *h, uint32_t i)
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
static int heap_offer(heap *h, const qr_hit *x)
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

static int heap_full(const heap *h) { return h->n == h->k; }

static int cmp_hits(const void *a, const void *b, void *by)
{
    qr_topk_by o = *(const qr_topk_by *)by;
    return better(o, a, b) ? -1 : better(o, b, a) ? 1 : 0;
}
static void sort_hits(qr_topk_by by, qr_hit *v, uint32_t n)
{
    qsort_r(v, n, sizeof *v, cmp_hits, &by);
}

/* ---- by score ---- */
typedef struct shared {
    qr_par_search *p;
    const qr_qweights *qw;
    uint32_t k;
    int exhaustive;
    atomic_uint next;
    _Atomic double thr; /* the best full-heap threshold of any thread */
} shared;

typedef struct task {
    shared *sh;
    int t, rc;
    heap h;
    qr_topk_stats st;
    qr_err err;
} task;

static void publish(shared *sh, double v)
{
    double cur = atomic_load(&sh->thr);
    while (v > cur && !atomic_compare_exchange_weak(&sh->thr, &cur, v))
        ;
}

/* The minimum to push down: docs scoring <= it cannot make the result.
 * Our own heap: a later doc with an equal score loses the tie (this
 * thread visits segments in increasing order). Another thread's
 * threshold: an equal score might still win on order, so strictly below. */
static double competitive(task *k)
{
    double m = -INFINITY, s = atomic_load(&k->sh->thr);
    if (heap_full(&k->h))
        m = k->h.v[0].score;
    if (s != -INFINITY && nextafter(s, -INFINITY) > m)
        m = nextafter(s, -INFINITY);
    return m;
}

static int score_segment(task *k, uint32_t si)
{
    shared *sh = k->sh;
    qr_par_search *p = sh->p;
    qr_arena *a = &p->run[k->t];
    qr_arena_reset(a);
    p->ss[si].run = &p->qrun[k->t];
    qr_sc *sc = qr_scorer_build(&p->ss[si], p->q[k->t], sh->qw, a, &k->err);
    if (!sc)
        return -1;
    k->st.segments++;
    double applied = -INFINITY;
    if (!sh->exhaustive && (applied = competitive(k)) != -INFINITY)
        sc->vt->set_min(sc, applied);
    uint64_t n = 0;
    for (uint32_t d = qr_sc_next(sc); d != QR_NO_DOC; d = qr_sc_next(sc)) {
        qr_hit h = {qr_sc_score(sc), 0, si, d};
        n++;
        if (!heap_offer(&k->h, &h) && (n & 1023))
            continue;
        if (sh->exhaustive || !heap_full(&k->h))
            continue;
        publish(sh, k->h.v[0].score);
        double m = competitive(k);
        if (m > applied) {
            sc->vt->set_min(sc, m);
            applied = m;
        }
    }
    k->st.docs_collected += n;
    qr_sc_stats st = {0, 0};
    sc->vt->stats(sc, &st);
    k->st.blocks_total += st.blocks_total;
    k->st.blocks_decoded += st.blocks_decoded;
    if (sc->vt->failed(sc))
        return qr_errf(&k->err, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                       p->ss[si].seg->path);
    return 0;
}

static void score_worker(void *arg, int slot)
{
    task *k = (task *)arg + slot;
    shared *sh = k->sh;
    for (;;) {
        uint32_t i = atomic_fetch_add(&sh->next, 1);
        if (i >= sh->p->nsegs)
            break;
        if (qr_par_check(sh->p, &k->err) != 0 || score_segment(k, i) != 0) {
            k->rc = -1;
            atomic_store(&sh->next, sh->p->nsegs); /* stop the others early */
            break;
        }
    }
    qr_arena_reset(&sh->p->run[k->t]);
}

static int by_score(qr_par_search *p, uint32_t k, int exhaustive, qr_hit *out, uint32_t *nout,
                    qr_topk_stats *st, qr_err *e)
{
    qr_qweights qw;
    qr_arena wa;
    qr_arena_init(&wa, 4096, 0);
    int rc = qr_qweights_compute(&qw, p->ss, p->nsegs, p->q[0], &wa, e);
    shared sh = {.p = p, .qw = &qw, .k = k, .exhaustive = exhaustive};
    atomic_init(&sh.next, 0);
    atomic_init(&sh.thr, -INFINITY);
    task tasks[QR_MAX_SEARCH_THREADS];
    int nt = rc == 0 ? p->threads : 0;
    for (int t = 0; t < nt; t++) {
        tasks[t] = (task){.sh = &sh, .t = t, .h = {QR_BY_SCORE, malloc(sizeof(qr_hit) * (k ? k : 1)), 0, k}};
        if (!tasks[t].h.v) {
            rc = qr_errf(e, QR_E_NOMEM, "out of memory for the top-%u heap", k);
            nt = t + 1;
            break;
        }
    }
    if (rc == 0)
        qr_pool_run(p->pool, nt, score_worker, tasks); /* worker t = slot t */
    heap all = {QR_BY_SCORE, out, 0, k};
    for (int t = 0; t < nt; t++) {
        if (tasks[t].rc && rc == 0) {
            rc = -1;
            *e = tasks[t].err;
        }
        for (uint32_t i = 0; i < tasks[t].h.n; i++)
            heap_offer(&all, &tasks[t].h.v[i]);
        if (st) {
            st->segments += tasks[t].st.segments;
            st->blocks_total += tasks[t].st.blocks_total;
            st->blocks_decoded += tasks[t].st.blocks_decoded;
            st->docs_collected += tasks[t].st.docs_collected;
        }
        free(tasks[t].h.v);
    }
    qr_arena_free(&wa);
    if (rc != 0)
        return -1;
    sort_hits(QR_BY_SCORE, out, all.n);
    *nout = all.n;
    return 0;
}

/* ---- newest first ---- */
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
            qr_hit hit = {0, 0, si, d};
            if (row_ts(p, si, d, z, r, &hit.ts, e) != 0)
                return -1;
            if (!heap_offer(h, &hit))
                return 0;
        }
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
    uint32_t hi = rows;
    st->segments++;
    while (hi > 0 && rc == 0) {
        qr_arena_reset(a);
        ss->run = &p->qrun[0];
        qr_it *it = qr_segsearch_compile(ss, p->q[0], a, e);
        if (!it) {
            rc = -1;
            break;
        }
        const void *bits = qr_it_bitmap_bits(it);
        if (bits) { /* a bitmap (dense words, expansions, ranges): walk it backwards */
            rc = newest_bits(p, si, bits, rows, z, h, &r, e);
            break;
        }
        if (!win) { /* first window: sized to hold k matches at the filter's density */
            uint64_t need = h->k - (heap_full(h) ? 0 : h->n);
            win = it->cost ? need * 2 * rows / it->cost + 1 : rows;
            win = win < 1024 ? 1024 : win;
        }
        uint32_t lo = hi > win ? hi - (uint32_t)win : 0;
        size_t n = 0;
        uint32_t d = qr_it_next(it);
        if (d != QR_NO_DOC && d < lo)
            d = qr_it_advance(it, lo);
        for (; d < hi; d = qr_it_next(it)) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 1024;
                uint32_t *nd = realloc(docs, sizeof *nd * nc);
                if (!nd) {
                    rc = qr_errf(e, QR_E_NOMEM, "out of memory collecting newest rows");
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
            qr_hit x = {0, 0, si, docs[i]};
            if (row_ts(p, si, docs[i], z, &r, &x.ts, e) != 0)
                rc = -1;
            else if (!heap_offer(h, &x))
                break;
        }
        if (rc != 0 || lo == 0)
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
    free(docs);
    qr_arena_reset(a);
    return rc;
}

static int by_time(qr_par_search *p, uint32_t k, qr_hit *out, uint32_t *nout, qr_topk_stats *st,
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

/* ---- first k ---- */
int qr_par_first(qr_par_search *p, uint64_t k, qr_hits_fn emit, void *ctx, qr_topk_stats *st,
                 qr_err *e)
{
    enum { BATCH = 4096 };
    qr_hit *buf = malloc(sizeof *buf * BATCH);
    if (!buf)
        return qr_errf(e, QR_E_NOMEM, "out of memory listing rows");
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
                rc = emit(ctx, buf, nb, e);
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
    free(buf);
    return rc;
}

typedef struct collect {
    qr_hit *out;
    uint32_t n;
} collect;

static int collect_hits(void *ctx, const qr_hit *hits, uint32_t n, qr_err *e)
{
    collect *c = ctx;
    memcpy(c->out + c->n, hits, sizeof *hits * n);
    c->n += n;
    return 0;
}

int qr_par_topk(qr_par_search *p, qr_topk_by by, uint32_t k, int exhaustive, qr_hit *out,
                uint32_t *nout, qr_topk_stats *stats, qr_err *e)
{
    qr_topk_stats local;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    *nout = 0;
    if (k > QR_TOPK_MAX)
        return qr_errf(e, QR_E_ARGS, "top-k: k = %u is above the limit %u", k, QR_TOPK_MAX);
    if (k == 0)
        return 0;
    if (by == QR_BY_SCORE)
        return by_score(p, k, exhaustive, out, nout, stats, e);
    if (by == QR_BY_TIME)
        return by_time(p, k, out, nout, stats, e);
    collect c = {out, 0};
    int rc = qr_par_first(p, k, collect_hits, &c, stats, e);
    *nout = c.n;
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
    qr_err err;
} rows_task;

/* Read place[from..to) with this thread's column readers (kept in p, one
 * set per thread and segment, opened on first use in random-access mode). */
static void rows_worker(void *arg, int w)
{
    rows_task *k = (rows_task *)arg + w;
    qr_par_search *p = k->p;
    for (uint32_t i = k->from; i < k->to && k->rc == 0; i++) {
        const qr_hit *h = k->place[i];
        size_t hi = (size_t)(h - k->hits);
        size_t slot = (size_t)k->t * p->nsegs + h->seg;
        qr_colreader **rd = &p->readers[slot * p->def->ncols];
        if (!p->readers_open[slot]) {
            if (qr_row_readers_open(p->ss[h->seg].seg, p->def, rd, &k->err) != 0) {
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
        k->off[hi] = at;
        k->len[hi] = k->buf.len - at;
        k->by[hi] = (uint8_t)k->t;
    }
}

int qr_par_rows(qr_par_search *p, const qr_hit *hits, uint32_t n, qr_buf *out, qr_err *e)
{
    /* read in (segment, row) order so a block or page serves all its rows;
     * split that order between the threads; emit in the hits' order */
    const qr_hit **place = malloc(sizeof *place * (n ? n : 1));
    size_t *off = malloc(sizeof *off * (n ? n : 1)), *len = malloc(sizeof *len * (n ? n : 1));
    uint8_t *by = malloc(n ? n : 1);
    int rc = (!place || !off || !len || !by) ? qr_errf(e, QR_E_NOMEM, "out of memory reading rows")
                                             : 0;
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
    }
    if (rc == 0 && out->oom)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory reading rows");
    free(place);
    free(off);
    free(len);
    free(by);
    return rc;
}
