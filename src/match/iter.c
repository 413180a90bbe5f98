/* iter.c - the doc-id iterators (see iter.h).
 *
 * Conjunctions leapfrog from the cheapest child; disjunctions keep a binary
 * min-heap of children by current doc; min-should-match counts children on
 * the heap top. Phrases live in phrase.c. Counting uses the cheapest path
 * each iterator has: a range knows its size, a bitmap pops bits.
 */
#include "match/iter.h"

#include <string.h>

#include "util/popcount.h"

uint64_t qr_it_count(qr_it *it)
{
    if (it->vt->count)
        return it->vt->count(it);
    uint64_t n = 0;
    while (qr_it_next(it) != QR_NO_DOC)
        n++;
    return n;
}

int qr_it_failed(qr_it *it) { return it->vt->failed ? it->vt->failed(it) : 0; }

static void *alloc_it(qr_arena *a, size_t size, const qr_it_vt *vt, uint64_t cost)
{
    qr_it *it = qr_arena_alloc(a, size);
    if (!it)
        return NULL;
    memset(it, 0, size);
    it->vt = vt;
    it->cost = cost;
    return it;
}

/* ---- empty ---- */
static uint32_t empty_next(qr_it *it) { return QR_NO_DOC; }
static uint32_t empty_advance(qr_it *it, uint32_t t) { return QR_NO_DOC; }
static uint64_t empty_count(qr_it *it) { return 0; }
static const qr_it_vt empty_vt = {empty_next, empty_advance, empty_count, NULL, "empty"};
qr_it *qr_it_empty(qr_arena *a) { return alloc_it(a, sizeof(qr_it), &empty_vt, 0); }

/* ---- range [lo, hi) ---- */
typedef struct {
    qr_it it;
    uint32_t lo, hi;
} range_it;
static uint32_t range_next(qr_it *it)
{
    range_it *r = (range_it *)it;
    if (it->started && it->doc == QR_NO_DOC)
        return QR_NO_DOC;
    uint32_t d = it->started ? it->doc + 1 : r->lo;
    return d < r->hi ? d : QR_NO_DOC;
}
static uint32_t range_advance(qr_it *it, uint32_t t)
{
    range_it *r = (range_it *)it;
    uint32_t d = t > r->lo ? t : r->lo;
    return d < r->hi ? d : QR_NO_DOC;
}
static uint64_t range_count(qr_it *it)
{
    range_it *r = (range_it *)it;
    if (it->doc == QR_NO_DOC && it->started)
        return 0;
    uint32_t from = it->started ? it->doc + 1 : r->lo;
    return from < r->hi ? r->hi - from : 0;
}
static const qr_it_vt range_vt = {range_next, range_advance, range_count, NULL, "row range"};
int qr_it_range_bounds(const qr_it *it, uint32_t *lo, uint32_t *hi)
{
    if (it->vt != &range_vt || it->started)
        return 0;
    *lo = ((const range_it *)it)->lo;
    *hi = ((const range_it *)it)->hi;
    return 1;
}
qr_it *qr_it_range(qr_arena *a, uint32_t lo, uint32_t hi)
{
    if (hi <= lo)
        return qr_it_empty(a);
    range_it *r = alloc_it(a, sizeof *r, &range_vt, hi - lo);
    if (r) {
        r->lo = lo;
        r->hi = hi;
    }
    return r ? &r->it : NULL; /* NULL: out of (query) memory */
}

/* ---- postings ---- */
typedef struct {
    qr_it it;
    qr_pcursor c;
} post_it;
static uint32_t post_next(qr_it *it) { return qr_pc_next(&((post_it *)it)->c); }
static uint32_t post_advance(qr_it *it, uint32_t t) { return qr_pc_advance(&((post_it *)it)->c, t); }
static int post_failed(qr_it *it) { return ((post_it *)it)->c.corrupt; }
/* Untouched, a term's count is its document frequency: no postings read. */
static uint64_t post_count(qr_it *it)
{
    post_it *p = (post_it *)it;
    if (!it->started && !p->c.corrupt)
        return p->c.ti.df;
    uint64_t n = 0;
    while (qr_it_next(it) != QR_NO_DOC)
        n++;
    return n;
}
static const qr_it_vt post_vt = {post_next, post_advance, post_count, post_failed, "postings"};
qr_it *qr_it_postings(qr_arena *a, const qr_invfield *f, const qr_terminfo *ti)
{
    post_it *p = alloc_it(a, sizeof *p, &post_vt, ti->df);
    if (p)
        qr_invfield_cursor(f, ti, &p->c, NULL); /* a bad location makes it corrupt + empty */
    return p ? &p->it : NULL; /* NULL: out of (query) memory */
}

int qr_it_is_postings(const qr_it *it) { return it->vt == &post_vt && !it->started; }

int64_t qr_it_postings_bits(qr_it *it, uint64_t *bits, uint32_t rows)
{
    if (!qr_it_is_postings(it))
        return -2;
    it->started = 1;
    it->doc = QR_NO_DOC;
    return qr_pc_set_bits(&((post_it *)it)->c, bits, rows);
}

/* ---- bitmap ---- */
typedef struct {
    qr_it it;
    const unsigned char *bits;
    uint32_t rows;
} bitmap_it;
static inline uint64_t word_at(const unsigned char *bits, uint64_t w)
{
    uint64_t v;
    memcpy(&v, bits + w * 8, 8); /* mmapped words need not be aligned */
    return v;
}
static uint32_t bm_from(bitmap_it *b, uint64_t d)
{
    while (d < b->rows) {
        uint64_t w = word_at(b->bits, d >> 6) >> (d & 63);
        if (w)
            return (uint32_t)(d + (uint64_t)__builtin_ctzll(w));
        d = (d | 63) + 1;
    }
    return QR_NO_DOC;
}
static uint32_t bm_next(qr_it *it)
{
    bitmap_it *b = (bitmap_it *)it;
    if (it->started && it->doc == QR_NO_DOC)
        return QR_NO_DOC;
    uint32_t d = bm_from(b, it->started ? (uint64_t)it->doc + 1 : 0);
    return d < b->rows ? d : QR_NO_DOC;
}
static uint32_t bm_advance(qr_it *it, uint32_t t)
{
    uint32_t d = bm_from((bitmap_it *)it, t);
    return d < ((bitmap_it *)it)->rows ? d : QR_NO_DOC;
}
static uint64_t bm_count(qr_it *it)
{
    bitmap_it *b = (bitmap_it *)it;
    if (!it->started)
        return it->cost; /* untouched: the exact count it was made with */
    if (it->doc == QR_NO_DOC)
        return 0;
    uint64_t from = it->started ? (uint64_t)it->doc + 1 : 0, n = 0;
    for (uint64_t d = from; d < b->rows && (d & 63); d++)
        n += (word_at(b->bits, d >> 6) >> (d & 63)) & 1;
    uint64_t w0 = (from + 63) >> 6, w1 = ((uint64_t)b->rows + 63) >> 6;
    if (w1 > w0)
        n += qr_popcount_words(b->bits + w0 * 8, w1 - w0);
    return n;
}
static const qr_it_vt bitmap_vt = {bm_next, bm_advance, bm_count, NULL, "bitmap"};
const void *qr_it_bitmap_bits(const qr_it *it)
{
    return it->vt == &bitmap_vt && !it->started ? ((const bitmap_it *)it)->bits : NULL;
}

qr_it *qr_it_bitmap(qr_arena *a, const void *bits, uint32_t rows, uint64_t count)
{
    bitmap_it *b = alloc_it(a, sizeof *b, &bitmap_vt, count);
    if (b) {
        b->bits = bits;
        b->rows = rows;
    }
    return b ? &b->it : NULL; /* NULL: out of (query) memory */
}

/* ---- postings probed in a bitmap ---- */
typedef struct {
    qr_it it;
    post_it *post; /* untouched when made: its cursor walks */
    const unsigned char *bits;
    uint32_t rows;
    int bad; /* a doc >= rows: corrupt postings */
} probe_it;
/* From the list's doc d on, the first one the bitmap has. The rest of a
 * decoded block is scanned here, a bit test per doc, not a cursor call per
 * doc (3x the count's time when a conjunction's matches lead a top-k). */
static uint32_t probe_from(probe_it *p, uint32_t d)
{
    qr_pcursor *c = &p->post->c;
    for (; d != QR_NO_DOC; d = qr_pc_next(c)) {
        if (d >= p->rows) {
            p->bad = 1;
            return QR_NO_DOC;
        }
        if ((p->bits[d >> 3] >> (d & 7)) & 1)
            return d;
        if (c->i == UINT32_MAX || c->blk >= c->nblocks || c->i + 1 >= c->n)
            continue; /* no decoded block to scan: one step */
        uint32_t i = c->i + 1, n = c->n;
        if (c->docs[n - 1] >= p->rows) /* docs ascend: the last one bounds them */
            continue;
        while (i < n && !((p->bits[c->docs[i] >> 3] >> (c->docs[i] & 7)) & 1))
            i++;
        if (i < n) {
            c->i = i;
            return c->doc = c->docs[i];
        }
        c->i = n - 1; /* on the block's last doc: the next step decodes the next block */
        c->doc = c->docs[n - 1];
    }
    return QR_NO_DOC;
}
static uint32_t probe_next(qr_it *it)
{
    probe_it *p = (probe_it *)it;
    if (it->started && it->doc == QR_NO_DOC)
        return QR_NO_DOC;
    return probe_from(p, qr_pc_next(&p->post->c));
}
static uint32_t probe_advance(qr_it *it, uint32_t t)
{
    probe_it *p = (probe_it *)it;
    if (it->started && it->doc == QR_NO_DOC)
        return QR_NO_DOC;
    return probe_from(p, qr_pc_advance(&p->post->c, t));
}
static uint64_t probe_count(qr_it *it)
{
    probe_it *p = (probe_it *)it;
    if (it->started && it->doc == QR_NO_DOC)
        return 0;
    int64_t n = qr_pc_count_in(&p->post->c, p->bits, p->rows);
    if (n < 0) {
        p->bad = 1;
        return 0;
    }
    return (uint64_t)n;
}
static int probe_failed(qr_it *it)
{
    probe_it *p = (probe_it *)it;
    return p->bad || p->post->c.corrupt;
}
static const qr_it_vt probe_vt = {probe_next, probe_advance, probe_count, probe_failed,
                                  "postings probed in a bitmap"};
qr_it *qr_it_postings_in(qr_arena *a, qr_it *post, const void *bits, uint32_t rows)
{
    if (!qr_it_is_postings(post))
        return NULL;
    probe_it *p = alloc_it(a, sizeof *p, &probe_vt, post->cost);
    if (p) {
        p->post = (post_it *)post;
        p->bits = bits;
        p->rows = rows;
    }
    return p ? &p->it : NULL; /* NULL: out of (query) memory */
}

/* ---- conjunction ---- */
typedef struct {
    qr_it it;
    uint32_t n;
    qr_it **kids; /* by cost, cheapest first */
} and_it;
static int any_failed(qr_it **kids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (qr_it_failed(kids[i]))
            return 1;
    return 0;
}
/* Align all children on a doc >= d, leapfrogging from the lead. */
static uint32_t and_align(and_it *a, uint32_t d)
{
    for (;;) {
        if (d == QR_NO_DOC)
            return QR_NO_DOC;
        uint32_t i = 1;
        for (; i < a->n; i++) {
            qr_it *k = a->kids[i];
            uint32_t kd = k->started && k->doc >= d ? k->doc : qr_it_advance(k, d);
            if (kd != d) {
                d = qr_it_advance(a->kids[0], kd);
                break;
            }
        }
        if (i == a->n)
            return d;
    }
}
static uint32_t and_next(qr_it *it)
{
    and_it *a = (and_it *)it;
    return and_align(a, qr_it_next(a->kids[0]));
}
static uint32_t and_advance(qr_it *it, uint32_t t)
{
    and_it *a = (and_it *)it;
    return and_align(a, qr_it_advance(a->kids[0], t));
}
static int and_failed(qr_it *it) { return any_failed(((and_it *)it)->kids, ((and_it *)it)->n); }
static const qr_it_vt and_vt = {and_next, and_advance, NULL, and_failed, "leapfrog"};

static void sort_by_cost(qr_it **k, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && k[j]->cost < k[j - 1]->cost; j--) {
            qr_it *t = k[j];
            k[j] = k[j - 1];
            k[j - 1] = t;
        }
}

qr_it *qr_it_and(qr_arena *a, qr_it **kids, uint32_t n)
{
    if (n == 1)
        return kids[0];
    sort_by_cost(kids, n);
    and_it *it = alloc_it(a, sizeof *it, &and_vt, n ? kids[0]->cost : 0);
    if (!it)
        return NULL;
    it->n = n;
    it->kids = kids;
    return &it->it;
}

/* ---- disjunction and min-should-match: a heap by current doc ---- */
typedef struct {
    qr_it it;
    uint32_t n, live, k; /* k = min matches (1 for OR) */
    qr_it **heap;
    qr_it **all;
    uint32_t nall;
} or_it;
static void heap_down(qr_it **h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l]->doc < h[m]->doc)
            m = l;
        if (r < n && h[r]->doc < h[m]->doc)
            m = r;
        if (m == i)
            return;
        qr_it *t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}
static void heap_build(or_it *o)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < o->live; i++)
        if (o->heap[i]->doc != QR_NO_DOC)
            o->heap[live++] = o->heap[i];
    o->live = live;
    for (uint32_t i = live / 2; i-- > 0;)
        heap_down(o->heap, live, i);
}
/* Move every child sitting at a doc < t (or == cur when t is cur+1) on. */
static uint32_t or_settle(or_it *o, uint32_t t)
{
    /* children are all positioned; find next doc with >= k children on it */
    for (;;) {
        while (o->live && o->heap[0]->doc < t) {
            qr_it *top = o->heap[0];
            qr_it_advance(top, t);
            if (top->doc == QR_NO_DOC) {
                o->heap[0] = o->heap[--o->live];
            }
            heap_down(o->heap, o->live, 0);
        }
        if (o->live < o->k)
            return QR_NO_DOC;
        uint32_t d = o->heap[0]->doc;
        if (o->k == 1)
            return d;
        /* count children on d */
        uint32_t cnt = 0;
        for (uint32_t i = 0; i < o->live; i++)
            cnt += o->heap[i]->doc == d;
        if (cnt >= o->k)
            return d;
        t = d + 1;
    }
}
static uint32_t or_start(or_it *o)
{
    for (uint32_t i = 0; i < o->live; i++)
        qr_it_next(o->heap[i]);
    heap_build(o);
    return 0;
}
static uint32_t or_next(qr_it *it)
{
    or_it *o = (or_it *)it;
    if (!it->started) {
        or_start(o);
        return or_settle(o, 0);
    }
    if (it->doc == QR_NO_DOC)
        return QR_NO_DOC;
    return or_settle(o, it->doc + 1);
}
static uint32_t or_advance(qr_it *it, uint32_t t)
{
    or_it *o = (or_it *)it;
    if (!it->started)
        or_start(o);
    return or_settle(o, t);
}
static int or_failed(qr_it *it) { return any_failed(((or_it *)it)->all, ((or_it *)it)->nall); }
static const qr_it_vt or_vt = {or_next, or_advance, NULL, or_failed, "heap"};

qr_it *qr_it_minmatch(qr_arena *a, qr_it **kids, uint32_t n, uint32_t k)
{
    if (k == 0)
        k = 1;
    if (k > n)
        return qr_it_empty(a);
    if (n == 1)
        return kids[0];
    if (k == n)
        return qr_it_and(a, kids, n);
    uint64_t cost = 0;
    for (uint32_t i = 0; i < n; i++)
        cost += kids[i]->cost;
    or_it *o = alloc_it(a, sizeof *o, &or_vt, cost);
    qr_it **heap = qr_arena_alloc(a, sizeof *heap * n);
    if (!o || !heap)
        return NULL;
    memcpy(heap, kids, sizeof *heap * n);
    o->heap = heap;
    o->all = kids;
    o->nall = n;
    o->n = o->live = n;
    o->k = k;
    return &o->it;
}

qr_it *qr_it_or(qr_arena *a, qr_it **kids, uint32_t n)
{
    if (n == 0)
        return qr_it_empty(a);
    return qr_it_minmatch(a, kids, n, 1);
}

/* ---- exclusion ---- */
typedef struct {
    qr_it it;
    qr_it *inc, *exc;
} andnot_it;
static uint32_t andnot_skip(andnot_it *x, uint32_t d)
{
    while (d != QR_NO_DOC) {
        qr_it *e = x->exc;
        uint32_t ed = e->started && e->doc >= d ? e->doc : qr_it_advance(e, d);
        if (ed != d)
            return d;
        d = qr_it_next(x->inc);
    }
    return QR_NO_DOC;
}
static uint32_t andnot_next(qr_it *it)
{
    andnot_it *x = (andnot_it *)it;
    return andnot_skip(x, qr_it_next(x->inc));
}
static uint32_t andnot_advance(qr_it *it, uint32_t t)
{
    andnot_it *x = (andnot_it *)it;
    return andnot_skip(x, qr_it_advance(x->inc, t));
}
static int andnot_failed(qr_it *it)
{
    andnot_it *x = (andnot_it *)it;
    return qr_it_failed(x->inc) || qr_it_failed(x->exc);
}
static const qr_it_vt andnot_vt = {andnot_next, andnot_advance, NULL, andnot_failed,
                                   "exclusion"};
qr_it *qr_it_andnot(qr_arena *a, qr_it *inc, qr_it *exc)
{
    andnot_it *x = alloc_it(a, sizeof *x, &andnot_vt, inc->cost);
    if (x) {
        x->inc = inc;
        x->exc = exc;
    }
    return x ? &x->it : NULL; /* NULL: out of (query) memory */
}
