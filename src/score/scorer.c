/* scorer.c - building the scorer tree of a query for one segment (see
 * scorer.h): which clauses score (Body words and phrases; multi-term
 * queries as a constant 1; filters 0), index-wide weights per scored leaf,
 * dense words onto their bitmaps, frequent words at the root term at a
 * time. The scorers: scorer_leaf.c (constant, word, phrase), scorer_bool.c
 * (AND, OR, at-least-k), scorer_dense.c, scorer_taat.c. */
#include "score/scorer_int.h"

#include <math.h>
#include <string.h>

#include "index/invfmt.h"

/* ---- building ---- */
static int is_multi(const qr_query *q)
{
    return q->type == Q_PREFIX || q->type == Q_REGEXP || q->type == Q_LIKE || q->type == Q_FUZZY;
}

int sc_kind_of(const qr_query *q)
{
    if (qr_bm25_is_leaf(q))
        return SC_SCORED;
    if (is_multi(q) && q->scored)
        return SC_CONST;
    if (q->type == Q_AND || q->type == Q_OR || q->type == Q_MINMATCH)
        for (uint32_t i = 0; i < q->n; i++)
            if (q->kids[i]->type != Q_NOT && sc_kind_of(q->kids[i]) != SC_FILTER)
                return SC_SCORED;
    return SC_FILTER;
}
/* The scorer of q; top: q is the query's root, and min the threshold its
 * scores must beat (-INFINITY: none yet) -- a nested clause's score is
 * only part of a row's, so no threshold applies to it alone. */
static qr_sc *build(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, uint32_t *leaf,
                    int top, double min, qr_arena *a, qr_err *e);

static qr_sc *or_of(qr_segsearch *ss, const qr_query *q, qr_sc **kids, int top, double min,
                    qr_arena *a, qr_err *e);
static qr_sc **or_kids(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, uint32_t *leaf,
                       qr_arena *a, qr_err *e);
static int dense_pays(const qr_sc *dense, qr_sc **kids, uint32_t n);

/* AND, OR or at-least-k of words only, at the root of the query: term at
 * a time when it pays, else NULL (and *oom on failure). Only at the root,
 * which is driven row by row in order; nested, the one-row-at-a-time
 * scorers leapfrog with their siblings instead. */
static qr_sc *try_taat(int top, int is_and, qr_sc **kids, uint32_t n, uint32_t k,
                       qr_segsearch *ss, qr_arena *a, int *oom)
{
    *oom = 0;
    return top ? sc_taat_new(is_and, kids, n, k, (uint32_t)ss->seg->rows, a, oom) : NULL;
}

/* Is q's one scored clause an OR or at-least-k of words, all else
 * filters? Then a row's score is that clause's alone. Its index, or -1. */
static int lone_or(const qr_query *q)
{
    int at = -1;
    for (uint32_t i = 0; i < q->n; i++) {
        const qr_query *k = q->kids[i];
        if (k->type == Q_NOT || sc_kind_of(k) == SC_FILTER)
            continue;
        if (at >= 0 || (k->type != Q_OR && k->type != Q_MINMATCH))
            return -1;
        for (uint32_t j = 0; j < k->n; j++)
            if (k->kids[j]->type != Q_TERM || !qr_bm25_is_leaf(k->kids[j]))
                return -1;
        at = (int)i;
    }
    return at;
}

/* The rows of the filter clause *kid as a bitmap: a bitmap iterator's own
 * words, or its iterator walked when it has at most rows / 8 rows (a
 * selective filter is cheap to turn into one; a broad one, an exclusion
 * alone walks every row, stays a leapfrog clause: NULL). Walking uses the
 * iterator up, so the clause is replaced by one that reads the bitmap,
 * for the leapfrog the conjunction may still come to (with the used-up
 * iterator it found no row, and a segment's rows went missing from the
 * top k). NULL with *bad set on failure (out of memory, corrupt filter
 * postings; e set). */
static const void *filter_bits(qr_segsearch *ss, qr_sc **kid, qr_arena *a, int *bad, qr_err *e)
{
    const const_sc *fk = (const const_sc *)*kid;
    const void *bits = qr_it_bitmap_bits(fk->it);
    if (bits || fk->it->cost > ss->seg->rows / 8)
        return bits;
    uint32_t rows = (uint32_t)ss->seg->rows;
    if (!(bits = sc_it_to_bitmap(fk->it, rows, ss->seg->path, a, e)) ||
        !(*kid = sc_filter_bits(bits, rows, a, e))) {
        *bad = 1;
        return NULL;
    }
    return bits;
}

/* How the plan names a clause sc_dense_apart passed over in a segment. */
#define APART_WAY "passed over: no row can beat the threshold"

static qr_sc *build_and(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw,
                        uint32_t *leaf, int top, double min, qr_arena *a, qr_err *e)
{
    qr_sc **kids = qr_arena_alloc(a, sizeof *kids * (q->n + 2));
    qr_query **flt = qr_arena_alloc(a, sizeof *flt * q->n);
    if (!kids || !flt)
        return sc_nomem(e);
    /* (a OR b) AND filters at the root with a threshold: the OR's words are
     * built here, to be scored from their bitmaps with the filter's and the
     * threshold (below), as an OR alone at the root is */
    int lone = top && min > -INFINITY ? lone_or(q) : -1;
    qr_sc **okids = NULL;
    uint32_t n = 0, nf = 0, at = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        const qr_query *k = q->kids[i];
        if (k->type == Q_NOT || sc_kind_of(k) == SC_FILTER) {
            flt[nf++] = (qr_query *)k; /* filters and exclusions: one iterator */
            *leaf += qr_bm25_count_leaves(k);
        } else if ((int)i == lone) {
            if (!(okids = or_kids(ss, k, qw, leaf, a, e)))
                return NULL;
            at = n++;
        } else if (!(kids[n++] = build(ss, k, qw, leaf, 0, -INFINITY, a, e))) {
            return NULL;
        }
    }
    if (nf) {
        qr_query group = {.type = Q_AND, .n = nf, .kids = flt};
        if (!(kids[n++] = sc_const_new(qr_segsearch_compile(ss, &group, a, e), 0, a, e)))
            return NULL;
    }
    qr_plan *pl = qr_segsearch_plan(ss);
    if (okids) {
        const qr_query *o = q->kids[lone];
        int bad = 0;
        const void *ob = nf ? filter_bits(ss, &kids[n - 1], a, &bad, e) : NULL;
        if (bad)
            return NULL;
        uint32_t k = o->type == Q_MINMATCH ? o->k : 1;
        int apart = sc_dense_apart(okids, o->n, k, (uint32_t)ss->seg->rows, min, a, e);
        if (apart < 0)
            return NULL;
        if (apart) /* the OR alone cannot beat it: nor can it with filters */
            return qr_plan_way(pl, q, APART_WAY), sc_const_new(qr_it_empty(a), 0, a, e);
        if (ob && k <= o->n && sc_dense_materialize(okids, o->n, (uint32_t)ss->seg->rows, a, e) < 0)
            return NULL;
        if (ob && k <= o->n) {
            int oom = 0;
            qr_sc *dn = sc_dense_new(0, okids, o->n, k, ob, (uint32_t)ss->seg->rows, min, a, &oom, e);
            if (oom)
                return NULL;
            if (dn && dense_pays(dn, okids, o->n))
                return qr_plan_way(pl, q, "scored from dense bitmaps with the filter"), dn;
        }
        /* else as any nested clause */
        if (!(kids[at] = or_of(ss, o, okids, 0, -INFINITY, a, e)))
            return NULL;
    }
    if (n == 1)
        return kids[0];
    /* dense words (and the filters, as a bitmap): candidates from bitmaps */
    const void *fbits = NULL;
    uint32_t nw = nf ? n - 1 : n;
    if (nf && sc_dense_words(kids, nw, 1)) { /* even one word: the filter narrows it */
        int bad = 0;
        fbits = filter_bits(ss, &kids[n - 1], a, &bad, e);
        if (bad)
            return NULL;
    }
    if (nf && !fbits)
        nw = 0; /* the filter is not a bitmap: the general conjunction */
    int oom = 0;
    if (sc_dense_words(kids, nw, fbits ? 1 : 2)) {
        /* every row's length bounds it before any postings are read */
        qr_sc *b = sc_dense_new(1, kids, nw, nw, fbits, (uint32_t)ss->seg->rows,
                                top ? min : -INFINITY, a, &oom, e);
        if (oom)
            return NULL;
        if (b)
            return qr_plan_way(pl, q, "scored from dense bitmaps"), b;
    }
    qr_sc *tt = nf ? NULL : try_taat(top, 1, kids, n, n, ss, a, &oom);
    if (tt || oom)
        return tt ? (qr_plan_way(pl, q, "scored term at a time"), tt) : sc_nomem(e);
    int lead = top && nf;
    if (lead) {
        /* with filters, the conjunction's own row iterator leads, scoring
         * nothing: every row it gives matches, so the clauses' scorers
         * only step to matches. A filter and words that rarely share rows
         * (few or no matches) made the scorers' leapfrog zigzag over all
         * their postings (at 100M rows `service:ad AND connection`, no
         * match: 28 ms against the count's 5.5); the iterator intersects
         * as counting does (a list read whole into a bitmap where that is
         * cheaper, dense words' bitmaps). Without a filter the words'
         * rows mostly coincide in templated logs (`refused AND
         * connection`), and the iterator's own walk only adds to the
         * leapfrog's (at 10M rows 1.4 -> 1.9 ms). */
        qr_sc *rows = sc_const_new(qr_segsearch_compile_unrecorded(ss, q, a, e), 0, a, e);
        if (!rows)
            return NULL;
        /* first, and no costlier than any clause: the lead (the sort by
         * cost is stable); 0 + x is x, so the sums are the same */
        memmove(kids + 1, kids, sizeof *kids * n);
        for (uint32_t i = 1; i <= n; i++)
            rows->cost = kids[i]->cost < rows->cost ? kids[i]->cost : rows->cost;
        kids[0] = rows;
        n++;
    }
    qr_plan_way(pl, q,
                lead ? "scored by block-max leapfrog over its matches"
                     : "scored by block-max leapfrog");
    return sc_and_new(kids, n, a, e);
}

/* Does a dense scorer, built with the threshold known, leave few enough
 * rows that scoring them one by one (a cursor step per word each) beats
 * walking every posting term at a time? */
static int dense_pays(const qr_sc *dense, qr_sc **kids, uint32_t n)
{
    uint64_t postings = 0;
    for (uint32_t i = 0; i < n; i++)
        postings += kids[i]->cost;
    return dense->cost * 16 * n <= postings;
}

/* The scorer of OR / at-least-k q from its clauses' scorers. */
static qr_sc *or_of(qr_segsearch *ss, const qr_query *q, qr_sc **kids, int top, double min,
                    qr_arena *a, qr_err *e)
{
    uint32_t k = q->type == Q_MINMATCH ? q->k : 1;
    int oom = 0;
    qr_plan *pl = qr_segsearch_plan(ss);
    qr_sc *dn = NULL;
    if (top && min > -INFINITY && k <= q->n) {
        int apart = sc_dense_apart(kids, q->n, k, (uint32_t)ss->seg->rows, min, a, e);
        if (apart < 0)
            return NULL;
        if (apart)
            return qr_plan_way(pl, q, APART_WAY), sc_const_new(qr_it_empty(a), 0, a, e);
        if (sc_dense_materialize(kids, q->n, (uint32_t)ss->seg->rows, a, e) < 0)
            return NULL;
    }
    if (top && min > -INFINITY && k <= q->n) {
        /* a threshold is known: the rows whose own length lets them beat it
         * may be few (often none), and finding them takes one walk of the
         * words' bitmaps; term at a time would walk every posting */
        dn = sc_dense_new(0, kids, q->n, k, NULL, (uint32_t)ss->seg->rows, min, a, &oom, e);
        if (oom)
            return NULL;
        if (dn && dense_pays(dn, kids, q->n))
            return qr_plan_way(pl, q, "scored from dense bitmaps"), dn;
    }
    qr_sc *tt = k <= q->n ? try_taat(top, 0, kids, q->n, k, ss, a, &oom) : NULL;
    if (tt || oom)
        return tt ? (qr_plan_way(pl, q, "scored term at a time"), tt) : sc_nomem(e);
    if (k <= q->n) { /* dense words: candidates from bitmaps (at least k of them) */
        qr_sc *b = dn ? dn
                      : sc_dense_new(0, kids, q->n, k, NULL, (uint32_t)ss->seg->rows,
                                     top ? min : -INFINITY, a, &oom, e);
        if (oom)
            return NULL;
        if (b)
            return qr_plan_way(pl, q, "scored from dense bitmaps"), b;
    }
    qr_plan_way(pl, q, "scored by block-max MaxScore");
    return sc_or_new(kids, q->n, k, a, e);
}

/* Its clauses' scorers (in query order: leaves are numbered so). */
static qr_sc **or_kids(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, uint32_t *leaf,
                       qr_arena *a, qr_err *e)
{
    qr_sc **kids = qr_arena_alloc(a, sizeof *kids * q->n);
    if (!kids)
        return sc_nomem(e), NULL;
    for (uint32_t i = 0; i < q->n; i++)
        if (!(kids[i] = build(ss, q->kids[i], qw, leaf, 0, -INFINITY, a, e)))
            return NULL;
    return kids;
}

static qr_sc *build_or(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw,
                       uint32_t *leaf, int top, double min, qr_arena *a, qr_err *e)
{
    qr_sc **kids = or_kids(ss, q, qw, leaf, a, e);
    return kids ? or_of(ss, q, kids, top, min, a, e) : NULL;
}

static qr_sc *build(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, uint32_t *leaf,
                    int top, double min, qr_arena *a, qr_err *e)
{
    switch (sc_kind_of(q)) {
    case SC_FILTER:
        *leaf += qr_bm25_count_leaves(q);
        return sc_const_new(qr_segsearch_compile(ss, q, a, e), 0, a, e);
    case SC_CONST:
        return sc_const_new(qr_segsearch_compile(ss, q, a, e), 1, a, e);
    default:
        break;
    }
    if (qr_bm25_is_leaf(q)) {
        if (*leaf >= qw->n)
            return (void)qr_errf(e, QR_E_INTERNAL, "query statistics do not match the query"),
                   NULL;
        const double *tab = qw->tab + (size_t)*leaf * QR_BM25_TAB;
        double w = qw->w[(*leaf)++];
        qr_plan_way(qr_segsearch_plan(ss), q, "scored with block maxima");
        return q->type == Q_TERM ? sc_term_new(ss, q, qw, w, tab, a, e)
                                 : sc_phrase_new(ss, q, qw, w, a, e);
    }
    return q->type == Q_AND ? build_and(ss, q, qw, leaf, top, min, a, e)
                            : build_or(ss, q, qw, leaf, top, min, a, e);
}

qr_sc *qr_scorer_build(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double min,
                       qr_arena *a, qr_err *e)
{
    uint32_t leaf = 0;
    return build(ss, q, qw, &leaf, 1, min, a, e);
}
