/* scorer.c - scoring iterators with block-max pruning (see scorer.h).
 *
 * Bounds are evaluated with the very expression that scores a row
 * (qr_bm25_score on the block's max tf and min norm), and sums of bounds
 * add in the same order as sums of scores, so "bound <= threshold" proves
 * the score is too (IEEE rounding is monotone). Only MaxScore compares
 * partial sums taken in another order; it keeps a relative slack of 1e-12
 * there, far above the rounding error of a few dozen additions. */
#include "search/scorer.h"

#include <string.h>

#include "index/invfmt.h"

#define END (QR_NO_DOC - 1) /* the last possible window end */
#define SLACK (1.0 + 1e-12)

static qr_sc *nomem(qr_err *e)
{
    qr_errf(e, QR_E_NOMEM, "query: out of memory (query memory limit)");
    return NULL;
}

static void *alloc_sc(qr_arena *a, size_t size, const qr_sc_vt *vt, uint64_t cost)
{
    qr_sc *s = qr_arena_alloc(a, size);
    if (s) {
        memset(s, 0, size);
        s->vt = vt;
        s->cost = cost;
    }
    return s;
}

static uint32_t shallow_end(qr_sc *s, uint32_t target) { return END; }
static void no_stats(qr_sc *s, qr_sc_stats *st) {}

/* First doc >= target of a plain iterator (started or not). */
static uint32_t it_seek(qr_it *it, uint32_t target)
{
    if (!it->started) {
        uint32_t d = qr_it_next(it);
        if (d == QR_NO_DOC || d >= target)
            return d;
    } else if (it->doc == QR_NO_DOC || it->doc >= target) {
        return it->doc;
    }
    return qr_it_advance(it, target);
}

/* ---- constant score over a filter ---- */
typedef struct {
    qr_sc sc;
    qr_it *it;
    double c;
    int done; /* set_min at or above c */
} const_sc;

static uint32_t const_advance(qr_sc *s, uint32_t target)
{
    const_sc *k = (const_sc *)s;
    return k->done ? QR_NO_DOC : it_seek(k->it, target);
}
static double const_score(qr_sc *s) { return ((const_sc *)s)->c; }
static double const_max(qr_sc *s, uint32_t upto, uint8_t nfloor) { return ((const_sc *)s)->c; }
static uint8_t no_norm(qr_sc *s, uint32_t upto) { return 0; }
static void const_set_min(qr_sc *s, double min)
{
    const_sc *k = (const_sc *)s;
    if (k->c <= min)
        k->done = 1;
}
static int const_failed(qr_sc *s) { return qr_it_failed(((const_sc *)s)->it); }
static const qr_sc_vt const_vt = {const_advance, const_score,   shallow_end, const_max, no_norm,
                                  const_set_min, const_failed, no_stats};

static qr_sc *const_new(qr_it *it, double c, qr_arena *a, qr_err *e)
{
    if (!it)
        return NULL;
    const_sc *k = alloc_sc(a, sizeof *k, &const_vt, it->cost);
    if (!k)
        return nomem(e);
    k->it = it;
    k->c = c;
    return &k->sc;
}

/* ---- one word ---- */
typedef struct {
    qr_sc sc;
    const qr_bm25 *m;
    double w;
    const uint8_t *norms;
    uint32_t rows, nb, sblk; /* nb > 1: block-max data; sblk: shallow block */
    int blocks, bad, has_min, cstarted;
    const unsigned char *bits; /* dense words: the row bitmap, else NULL */
    double min, exact_max;   /* exact_max: the best score of a list without block data */
    uint32_t list_tf;        /* lists without block data: their impacts */
    uint8_t list_n1, list_n2, list_min_norm;
    qr_pcursor c;            /* last: large, never copied */
} term_sc;

static inline uint8_t umax8(uint8_t a, uint8_t b) { return a > b ? a : b; }

/* The best score a doc of block k with norm >= nfloor can have. Every doc
 * is dominated by one of the block's impacts (1, n1), (max tf, n2); a max
 * tf of 255 means "255 or more": bounded by the weight itself, the limit
 * for tf -> infinity. */
static double impacts_max(const qr_bm25 *m, double w, uint32_t tf, uint8_t n1, uint8_t n2,
                          uint8_t nfloor)
{
    if (tf >= 255 || tf == 0)
        return w;
    double b1 = n1 != 255 ? qr_bm25_score(m, w, 1, umax8(n1, nfloor)) : 0;
    double b2 = n2 != 255 && tf >= 2 ? qr_bm25_score(m, w, tf, umax8(n2, nfloor)) : 0;
    return b1 > b2 ? b1 : b2;
}

static double term_block_max(const term_sc *t, uint32_t k, uint8_t nfloor)
{
    uint32_t tf = qr_pc_block_max_tf(&t->c, k);
    uint8_t n1, n2;
    if (!qr_pc_block_impacts(&t->c, k, &n1, &n2)) /* older files: (max tf, min norm) */
        n1 = n2 = qr_pc_block_min_norm(&t->c, k);
    return impacts_max(t->m, t->w, tf, n1, n2, nfloor);
}

static uint32_t term_shallow(qr_sc *s, uint32_t target)
{
    term_sc *t = (term_sc *)s;
    if (t->nb <= 1)
        return END;
    if (t->sblk < t->nb && qr_pc_block_last(&t->c, t->sblk) < target) {
        /* gallop, then bisect: windows may jump far ahead */
        uint32_t lo = t->sblk + 1, step = 1, hi;
        while (lo + step < t->nb && qr_pc_block_last(&t->c, lo + step) < target)
            lo += step, step *= 2;
        hi = lo + step < t->nb ? lo + step : t->nb;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (qr_pc_block_last(&t->c, mid) < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        t->sblk = lo;
    }
    return t->sblk < t->nb ? qr_pc_block_last(&t->c, t->sblk) : END;
}

static double term_max(qr_sc *s, uint32_t upto, uint8_t nfloor)
{
    term_sc *t = (term_sc *)s;
    if (t->nb <= 1)
        return nfloor ? impacts_max(t->m, t->w, t->list_tf, t->list_n1, t->list_n2, nfloor)
                      : t->exact_max;
    double mx = 0;
    for (uint32_t k = t->sblk; k < t->nb; k++) {
        double b = term_block_max(t, k, nfloor);
        if (b > mx)
            mx = b;
        if (qr_pc_block_last(&t->c, k) >= upto)
            break;
    }
    return mx;
}

static uint8_t term_min_norm(qr_sc *s, uint32_t upto)
{
    term_sc *t = (term_sc *)s;
    if (t->nb <= 1)
        return t->list_min_norm;
    uint8_t mn = 255;
    for (uint32_t k = t->sblk; k < t->nb; k++) {
        uint8_t n = qr_pc_block_min_norm(&t->c, k);
        mn = n < mn ? n : mn;
        if (qr_pc_block_last(&t->c, k) >= upto)
            break;
    }
    return mn;
}

static uint32_t term_advance(qr_sc *s, uint32_t target)
{
    term_sc *t = (term_sc *)s;
    for (;;) {
        uint32_t end = END;
        if (t->has_min) {
            if (t->nb <= 1) {
                if (t->exact_max <= t->min)
                    return QR_NO_DOC;
            } else {
                end = term_shallow(s, target);
                if (t->sblk >= t->nb)
                    return QR_NO_DOC;
                if (term_block_max(t, t->sblk, 0) <= t->min) {
                    if (end >= END)
                        return QR_NO_DOC;
                    target = end + 1; /* the whole block cannot compete */
                    continue;
                }
            }
        }
        uint32_t d;
        if (t->cstarted && t->c.doc >= target)
            d = t->c.doc;
        else
            d = qr_pc_advance(&t->c, target);
        t->cstarted = 1;
        if (d == QR_NO_DOC) {
            t->bad |= t->c.corrupt;
            return d;
        }
        if (d >= t->rows) {
            t->bad = 1;
            return QR_NO_DOC;
        }
        if (d > end) {
            target = d; /* landed in a later block: check its bound */
            continue;
        }
        if (t->has_min && qr_bm25_score(t->m, t->w, qr_pc_tf(&t->c), t->norms[d]) <= t->min) {
            target = d + 1; /* it loses: not worth returning */
            continue;
        }
        return d;
    }
}

static double term_score(qr_sc *s)
{
    term_sc *t = (term_sc *)s;
    return qr_bm25_score(t->m, t->w, qr_pc_tf(&t->c), t->norms[s->doc]);
}
static void term_set_min(qr_sc *s, double min)
{
    term_sc *t = (term_sc *)s;
    t->has_min = 1;
    t->min = min;
}
static int term_failed(qr_sc *s) { return ((term_sc *)s)->bad; }
static void term_stats(qr_sc *s, qr_sc_stats *st)
{
    term_sc *t = (term_sc *)s;
    st->blocks_total += t->blocks;
    st->blocks_decoded += t->c.decoded;
}
static const qr_sc_vt term_vt = {term_advance, term_score,  term_shallow, term_max, term_min_norm,
                                 term_set_min, term_failed, term_stats};

/* Largest tf and smallest norm of a whole list, by reading it (lists
 * without block-max data are at most one block long). */
static int list_maxima(const qr_invfield *f, const qr_terminfo *ti, uint32_t *max_tf,
                       uint8_t *min_norm, qr_err *e)
{
    qr_pcursor c;
    if (qr_invfield_cursor(f, ti, &c, e) != 0)
        return -1;
    *max_tf = 0;
    *min_norm = 255;
    for (uint32_t d = qr_pc_next(&c); d != QR_NO_DOC; d = qr_pc_next(&c)) {
        if (d >= f->rows) {
            c.corrupt = 1;
            break;
        }
        if (qr_pc_tf(&c) > *max_tf)
            *max_tf = qr_pc_tf(&c);
        if (f->norms[d] < *min_norm)
            *min_norm = f->norms[d];
    }
    if (c.corrupt)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s postings (index section %u)",
                       f->seg->path, f->def->name, f->def->sec);
    return 0;
}

/* Exact best score and the impacts of a short list (reads it once more). */
static int list_best(term_sc *t, const qr_invfield *f, const qr_terminfo *ti, qr_err *e)
{
    qr_pcursor c;
    if (qr_invfield_cursor(f, ti, &c, e) != 0)
        return -1;
    t->exact_max = 0;
    t->list_tf = 1;
    t->list_n1 = t->list_n2 = t->list_min_norm = 255;
    for (uint32_t d = qr_pc_next(&c); d != QR_NO_DOC; d = qr_pc_next(&c)) {
        if (d >= f->rows) {
            c.corrupt = 1;
            break;
        }
        uint32_t tf = qr_pc_tf(&c);
        uint8_t nm = f->norms[d];
        double v = qr_bm25_score(t->m, t->w, tf, nm);
        if (v > t->exact_max)
            t->exact_max = v;
        t->list_tf = tf > t->list_tf ? tf : t->list_tf;
        t->list_min_norm = nm < t->list_min_norm ? nm : t->list_min_norm;
        if (tf == 1)
            t->list_n1 = nm < t->list_n1 ? nm : t->list_n1;
        else
            t->list_n2 = nm < t->list_n2 ? nm : t->list_n2;
    }
    if (c.corrupt)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s postings (index section %u)",
                       f->seg->path, f->def->name, f->def->sec);
    if (t->list_min_norm == 255)
        t->list_min_norm = 0;
    return 0;
}

static qr_sc *term_new(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double w,
                       qr_arena *a, qr_err *e)
{
    qr_invfield *f = qr_segsearch_field(ss, q->field, e);
    if (!f)
        return NULL;
    qr_terminfo ti;
    int r = q->len <= QR_MAX_TERM ? qr_tdict_lookup(&f->dict, q->text, q->len, &ti, e) : 0;
    if (r < 0)
        return (void)qr_err_prefix(e, "segment %s: %s index: ", ss->seg->path, f->def->name),
               NULL;
    if (r == 0)
        return const_new(qr_it_empty(a), 0, a, e);
    term_sc *t = alloc_sc(a, sizeof *t, &term_vt, ti.df);
    if (!t)
        return nomem(e);
    t->m = &qw->m;
    t->w = w;
    t->norms = f->norms;
    t->rows = f->rows;
    if (qr_invfield_cursor(f, &ti, &t->c, e) != 0)
        return NULL;
    t->nb = qr_pc_skip_blocks(&t->c);
    t->blocks = ti.kind == TI_INLINE ? 0 : (int)t->c.nblocks;
    if (t->nb <= 1 && list_best(t, f, &ti, e) != 0)
        return NULL;
    if (ti.has_bitmap && !(t->bits = qr_invfield_bitmap(f, &ti, e)))
        return NULL;
    return &t->sc;
}

/* ---- phrase ---- */
typedef struct {
    const qr_pcursor *c;
    uint32_t nb, sblk;
    uint32_t max_tf; /* nb <= 1: of the whole list */
    uint8_t min_norm;
} pword;

typedef struct {
    qr_sc sc;
    qr_it *it;
    const qr_bm25 *m;
    double w, min;
    const uint8_t *norms;
    uint32_t rows, n, within;
    pword *words;
    int has_min, bad, done;
    uint64_t blocks;
} phrase_sc;

static uint32_t phrase_shallow(qr_sc *s, uint32_t target)
{
    phrase_sc *p = (phrase_sc *)s;
    uint32_t end = END;
    for (uint32_t i = 0; i < p->n; i++) {
        pword *w = &p->words[i];
        if (w->nb <= 1)
            continue;
        while (w->sblk < w->nb && qr_pc_block_last(w->c, w->sblk) < target)
            w->sblk++;
        if (w->sblk >= w->nb) {
            p->done = 1; /* a word has no doc from target on */
            return END;
        }
        uint32_t l = qr_pc_block_last(w->c, w->sblk);
        if (l < end)
            end = l;
    }
    return end;
}

/* Phrase frequency <= every word's tf (exact phrases) or the first word's
 * (slop form); the row's norm >= every word's block minimum. */
static void phrase_bounds(phrase_sc *p, uint32_t upto, uint32_t *fmax, uint8_t *nmin)
{
    uint32_t f = UINT32_MAX;
    uint8_t norm = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        pword *w = &p->words[i];
        uint32_t tf = 0;
        uint8_t nm = 255;
        if (w->nb <= 1) {
            tf = w->max_tf;
            nm = w->min_norm;
        } else {
            for (uint32_t k = w->sblk; k < w->nb; k++) {
                uint32_t bt = qr_pc_block_max_tf(w->c, k);
                uint8_t bn = qr_pc_block_min_norm(w->c, k), n1, n2;
                if (qr_pc_block_impacts(w->c, k, &n1, &n2) && n2 == 255)
                    bt = 1; /* no doc of the block has the word twice */
                tf = bt > tf ? bt : tf;
                nm = bn < nm ? bn : nm;
                if (qr_pc_block_last(w->c, k) >= upto)
                    break;
            }
        }
        if ((i == 0 || !p->within) && tf < f)
            f = tf;
        if (nm > norm)
            norm = nm;
    }
    *fmax = f;
    *nmin = norm;
}

static double phrase_max(qr_sc *s, uint32_t upto, uint8_t nfloor)
{
    phrase_sc *p = (phrase_sc *)s;
    if (p->done)
        return 0;
    uint32_t f;
    uint8_t norm;
    phrase_bounds(p, upto, &f, &norm);
    if (f >= 255 || f == 0)
        return p->w;
    return qr_bm25_score(p->m, p->w, f, umax8(norm, nfloor));
}

static uint8_t phrase_min_norm(qr_sc *s, uint32_t upto)
{
    phrase_sc *p = (phrase_sc *)s;
    uint32_t f;
    uint8_t norm;
    if (p->done)
        return 0;
    phrase_bounds(p, upto, &f, &norm);
    return norm;
}

static uint32_t phrase_advance(qr_sc *s, uint32_t target)
{
    phrase_sc *p = (phrase_sc *)s;
    for (;;) {
        uint32_t end = END;
        if (p->has_min) {
            end = phrase_shallow(s, target);
            if (p->done)
                return QR_NO_DOC;
            if (phrase_max(s, end, 0) <= p->min) {
                if (end >= END)
                    return QR_NO_DOC;
                target = end + 1;
                continue;
            }
        }
        uint32_t d = it_seek(p->it, target);
        if (d == QR_NO_DOC) {
            p->bad |= qr_it_failed(p->it);
            return d;
        }
        if (d >= p->rows) {
            p->bad = 1;
            return QR_NO_DOC;
        }
        if (d > end) {
            target = d;
            continue;
        }
        return d;
    }
}

static double phrase_score(qr_sc *s)
{
    phrase_sc *p = (phrase_sc *)s;
    return qr_bm25_score(p->m, p->w, qr_it_phrase_freq(p->it), p->norms[s->doc]);
}
static void phrase_set_min(qr_sc *s, double min)
{
    phrase_sc *p = (phrase_sc *)s;
    p->has_min = 1;
    p->min = min;
}
static int phrase_failed(qr_sc *s) { return ((phrase_sc *)s)->bad; }
static void phrase_stats(qr_sc *s, qr_sc_stats *st)
{
    phrase_sc *p = (phrase_sc *)s;
    st->blocks_total += p->blocks;
    for (uint32_t i = 0; i < p->n; i++)
        st->blocks_decoded += p->words[i].c->decoded;
}
static const qr_sc_vt phrase_vt = {phrase_advance, phrase_score,  phrase_shallow, phrase_max, phrase_min_norm,
                                   phrase_set_min, phrase_failed, phrase_stats};

static qr_sc *phrase_new(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double w,
                         qr_arena *a, qr_err *e)
{
    qr_invfield *f;
    qr_terminfo *tis;
    int r = qr_segsearch_phrase_words(ss, q, a, &f, &tis, e);
    if (r <= 0)
        return r < 0 ? NULL : const_new(qr_it_empty(a), 0, a, e);
    phrase_sc *p = alloc_sc(a, sizeof *p, &phrase_vt, 0);
    if (!p || !(p->words = qr_arena_alloc(a, sizeof *p->words * q->n)))
        return nomem(e);
    if (!(p->it = qr_it_phrase(a, f, tis, q->offs, q->n, q->within)))
        return nomem(e);
    p->sc.cost = p->it->cost;
    p->m = &qw->m;
    p->w = w;
    p->norms = f->norms;
    p->rows = f->rows;
    p->n = q->n;
    p->within = q->within;
    for (uint32_t i = 0; i < q->n; i++) {
        pword *pw = &p->words[i];
        memset(pw, 0, sizeof *pw);
        pw->c = qr_it_phrase_cursor(p->it, i);
        pw->nb = qr_pc_skip_blocks(pw->c);
        p->blocks += tis[i].kind == TI_INLINE ? 0 : pw->c->nblocks;
        if (pw->nb <= 1 && list_maxima(f, &tis[i], &pw->max_tf, &pw->min_norm, e) != 0)
            return NULL;
    }
    return &p->sc;
}

/* ---- conjunction ---- */
typedef struct {
    qr_sc sc;
    qr_sc **kids; /* as written (scores add in this order) */
    qr_sc **lead; /* by cost, cheapest first */
    uint32_t n, wend;
    int has_min, wvalid;
    double min, wmax, cur;
} and_sc;

static uint32_t and_shallow(qr_sc *s, uint32_t target)
{
    and_sc *x = (and_sc *)s;
    uint32_t end = END;
    for (uint32_t i = 0; i < x->n; i++) {
        uint32_t l = x->kids[i]->vt->shallow(x->kids[i], target);
        if (l < end)
            end = l;
    }
    return end;
}
/* Every clause matches the row: its length is at least each clause's
 * smallest norm. */
static uint8_t and_min_norm(qr_sc *s, uint32_t upto)
{
    and_sc *x = (and_sc *)s;
    uint8_t n = 0;
    for (uint32_t i = 0; i < x->n; i++)
        n = umax8(n, x->kids[i]->vt->min_norm(x->kids[i], upto));
    return n;
}
static double and_max(qr_sc *s, uint32_t upto, uint8_t nfloor)
{
    and_sc *x = (and_sc *)s;
    uint8_t n = umax8(nfloor, and_min_norm(s, upto));
    double m = 0;
    for (uint32_t i = 0; i < x->n; i++)
        m += x->kids[i]->vt->max_score(x->kids[i], upto, n);
    return m;
}

static uint32_t and_advance(qr_sc *s, uint32_t target)
{
    and_sc *x = (and_sc *)s;
    for (;;) {
        if (x->has_min) {
            if (!x->wvalid || target > x->wend) {
                x->wend = and_shallow(s, target);
                x->wmax = and_max(s, x->wend, 0);
                x->wvalid = 1;
            }
            if (x->wmax <= x->min) { /* no row of this window can compete */
                if (x->wend >= END)
                    return QR_NO_DOC;
                target = x->wend + 1;
                x->wvalid = 0;
                continue;
            }
        }
        uint32_t d = qr_sc_advance(x->lead[0], target);
        for (uint32_t i = 1; d != QR_NO_DOC && i < x->n;) {
            uint32_t di = qr_sc_advance(x->lead[i], d);
            if (di == d) {
                i++;
            } else {
                d = di == QR_NO_DOC ? di : qr_sc_advance(x->lead[0], di);
                i = 1;
            }
        }
        if (d == QR_NO_DOC)
            return d;
        if (x->has_min && d > x->wend) {
            target = d; /* a new window: check its bound first */
            x->wvalid = 0;
            continue;
        }
        x->cur = 0;
        for (uint32_t i = 0; i < x->n; i++)
            x->cur += qr_sc_score(x->kids[i]);
        if (x->has_min && x->cur <= x->min) { /* scored, and it loses */
            target = d + 1;
            continue;
        }
        return d;
    }
}

static double and_score(qr_sc *s)
{
    return ((and_sc *)s)->cur; /* summed in the written order by and_advance */
}
static void and_set_min(qr_sc *s, double min)
{
    and_sc *x = (and_sc *)s;
    x->has_min = 1;
    x->min = min;
    x->wvalid = 0;
}
static int kids_failed(qr_sc **kids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (kids[i]->vt->failed(kids[i]))
            return 1;
    return 0;
}
static void kids_stats(qr_sc **kids, uint32_t n, qr_sc_stats *st)
{
    for (uint32_t i = 0; i < n; i++)
        kids[i]->vt->stats(kids[i], st);
}
static int and_failed(qr_sc *s) { return kids_failed(((and_sc *)s)->kids, ((and_sc *)s)->n); }
static void and_stats(qr_sc *s, qr_sc_stats *st)
{
    kids_stats(((and_sc *)s)->kids, ((and_sc *)s)->n, st);
}
static const qr_sc_vt and_vt = {and_advance, and_score,  and_shallow, and_max, and_min_norm,
                                and_set_min, and_failed, and_stats};

/* ---- disjunction, minimum-should-match ---- */
typedef struct {
    qr_sc sc;
    qr_sc **kids;
    uint32_t n, k, wend, ness; /* order[0..ness): non-essential this window */
    int has_min, wvalid;
    double min, cur;
    double *wmax, *pref; /* per kid; pref[j] = sum of wmax[order[0..j)] */
    uint32_t *order;     /* kids by window bound, ascending */
} or_sc;

static uint32_t or_shallow(qr_sc *s, uint32_t target)
{
    or_sc *o = (or_sc *)s;
    uint32_t end = END;
    for (uint32_t i = 0; i < o->n; i++) {
        qr_sc *k = o->kids[i];
        if (k->started && k->doc == QR_NO_DOC)
            continue;
        uint32_t l = k->vt->shallow(k, target);
        if (l < end)
            end = l;
    }
    return end;
}
static int or_live(const qr_sc *k) { return !(k->started && k->doc == QR_NO_DOC); }

static uint8_t or_min_norm(qr_sc *s, uint32_t upto)
{
    or_sc *o = (or_sc *)s;
    uint8_t n = 255;
    for (uint32_t i = 0; i < o->n; i++)
        if (or_live(o->kids[i])) {
            uint8_t k = o->kids[i]->vt->min_norm(o->kids[i], upto);
            n = k < n ? k : n;
        }
    return n == 255 ? 0 : n;
}

#define OR_COUPLE_MAX 4 /* clauses up to which every subset is bounded */

/* A row matches some subset of the clauses and has one length, at least
 * the largest smallest-norm of that subset: with few clauses, the bound is
 * the best subset's coupled sum (a row with both words is not the shortest
 * row of each); otherwise the plain sum. */
static double or_max(qr_sc *s, uint32_t upto, uint8_t nfloor)
{
    or_sc *o = (or_sc *)s;
    double m = 0;
    if (o->n > OR_COUPLE_MAX) {
        for (uint32_t i = 0; i < o->n; i++)
            if (or_live(o->kids[i]))
                m += o->kids[i]->vt->max_score(o->kids[i], upto, nfloor);
        return m;
    }
    uint8_t mn[OR_COUPLE_MAX];
    for (uint32_t i = 0; i < o->n; i++)
        mn[i] = or_live(o->kids[i]) ? o->kids[i]->vt->min_norm(o->kids[i], upto) : 0;
    for (uint32_t mask = 1; mask < (1u << o->n); mask++) {
        uint8_t n = nfloor;
        for (uint32_t i = 0; i < o->n; i++)
            if (mask >> i & 1)
                n = umax8(n, mn[i]);
        double sum = 0;
        for (uint32_t i = 0; i < o->n; i++)
            if ((mask >> i & 1) && or_live(o->kids[i]))
                sum += o->kids[i]->vt->max_score(o->kids[i], upto, n);
        m = sum > m ? sum : m;
    }
    return m;
}

/* A window from target: every clause's bound over it; with k = 1 the
 * longest prefix of clauses (by bound) whose bounds together cannot beat
 * the threshold becomes non-essential. */
static void or_window(or_sc *o, uint32_t target)
{
    o->wend = or_shallow(&o->sc, target);
    for (uint32_t i = 0; i < o->n; i++) {
        qr_sc *k = o->kids[i];
        o->wmax[i] = or_live(k) ? k->vt->max_score(k, o->wend, 0) : 0;
        /* insertion sort by bound: n is small */
        uint32_t j = i;
        while (j > 0 && o->wmax[o->order[j - 1]] > o->wmax[i]) {
            o->order[j] = o->order[j - 1];
            j--;
        }
        o->order[j] = i;
    }
    o->pref[0] = 0;
    for (uint32_t j = 0; j < o->n; j++)
        o->pref[j + 1] = o->pref[j] + o->wmax[o->order[j]];
    if (o->k == 1) {
        o->ness = 0;
        while (o->ness < o->n && o->pref[o->ness + 1] * SLACK <= o->min)
            o->ness++;
        if (o->ness < o->n && o->n <= OR_COUPLE_MAX && or_max(&o->sc, o->wend, 0) * SLACK <= o->min)
            o->ness = o->n; /* no subset of the clauses can compete here */
    } else {
        o->ness = o->pref[o->n] * SLACK <= o->min ? o->n : 0;
    }
    o->wvalid = 1;
}

static uint32_t or_advance(qr_sc *s, uint32_t target)
{
    or_sc *o = (or_sc *)s;
    for (;;) {
        uint32_t ness = 0;
        if (o->has_min) {
            if (!o->wvalid || target > o->wend)
                or_window(o, target);
            ness = o->ness;
            if (ness == o->n) { /* nothing in this window can compete */
                if (o->wend >= END)
                    return QR_NO_DOC;
                target = o->wend + 1;
                o->wvalid = 0;
                continue;
            }
        }
        uint32_t cand = QR_NO_DOC;
        for (uint32_t j = ness; j < o->n; j++) {
            uint32_t d = qr_sc_advance(o->kids[o->has_min ? o->order[j] : j], target);
            if (d < cand)
                cand = d;
        }
        if (cand == QR_NO_DOC) {
            if (!o->has_min || o->wend >= END)
                return QR_NO_DOC;
            target = o->wend + 1; /* only non-essential clauses left here */
            o->wvalid = 0;
            continue;
        }
        if (o->has_min && cand > o->wend) {
            /* not past cand: in the next windows other clauses may turn
             * essential and match before it */
            target = o->wend + 1;
            o->wvalid = 0;
            continue;
        }
        uint32_t matched = 0;
        double partial = 0;
        for (uint32_t j = ness; j < o->n; j++) {
            qr_sc *k = o->kids[o->has_min ? o->order[j] : j];
            if (k->doc == cand) {
                partial += qr_sc_score(k);
                matched++;
            }
        }
        int reject = 0;
        for (uint32_t j = ness; j-- > 0;) { /* non-essential, best bound first */
            if ((partial + o->pref[j + 1]) * SLACK <= o->min) {
                reject = 1;
                break;
            }
            qr_sc *k = o->kids[o->order[j]];
            if (qr_sc_advance(k, cand) == cand) {
                partial += qr_sc_score(k);
                matched++;
            }
        }
        if (reject || matched < o->k) {
            target = cand + 1;
            continue;
        }
        double v = 0; /* the score, summed in the written order */
        for (uint32_t i = 0; i < o->n; i++)
            if (o->kids[i]->started && o->kids[i]->doc == cand)
                v += qr_sc_score(o->kids[i]);
        if (o->has_min && v <= o->min) { /* scored, and it loses: not worth returning */
            target = cand + 1;
            continue;
        }
        o->cur = v;
        return cand;
    }
}

static double or_score(qr_sc *s) { return ((or_sc *)s)->cur; }
static void or_set_min(qr_sc *s, double min)
{
    or_sc *o = (or_sc *)s;
    o->has_min = 1;
    o->min = min;
    o->wvalid = 0;
}
static int or_failed(qr_sc *s) { return kids_failed(((or_sc *)s)->kids, ((or_sc *)s)->n); }
static void or_stats(qr_sc *s, qr_sc_stats *st) { kids_stats(((or_sc *)s)->kids, ((or_sc *)s)->n, st); }
static const qr_sc_vt or_vt = {or_advance, or_score,  or_shallow, or_max, or_min_norm,
                               or_set_min, or_failed, or_stats};

/* ---- dense words: candidates from row bitmaps ----
 * An AND, OR or at-least-k of words that all have row bitmaps (and, for
 * AND, filters that are or cheaply become bitmaps) finds its candidates
 * word by word in the combined bitmap (a bit-sliced counter for k). Before any postings block is decoded, a candidate is bounded with
 * its own length (one byte in the norms) and, per word, the block's max tf
 * and impacts; only rows that could beat the threshold get their tfs read.
 * Per window of blocks and per subset of words the largest norm that can
 * still compete is found once (a bound that only falls as the norm grows),
 * so most candidates cost a bit scan and a byte compare. */
#define BM_MAX_WORDS 4

typedef struct {
    qr_sc sc;
    int is_and;
    uint32_t n, rows;
    term_sc **t;       /* the words, as written */
    const uint64_t *cand;
    const uint8_t *norms;
    const qr_bm25 *m;
    double min, cur;
    int has_min, bad, wvalid;
    uint32_t wend;     /* window: every word in one block up to wend */
    uint32_t wtf[BM_MAX_WORDS];
    uint8_t wn2[BM_MAX_WORDS];
    uint16_t nstar[1 << BM_MAX_WORDS]; /* per subset: rows with norm >= it lose; 256 = none; 0xffff unknown */
} bm_sc;

/* Bound of word i in the window for a row of norm code n (falls as n grows):
 * a tf-1 row scores exactly s(1, n); a row with tf >= 2 has n >= n2 and tf
 * <= the block's max tf. */
static double bm_word_bound(const bm_sc *b, uint32_t i, uint32_t n)
{
    const term_sc *t = b->t[i];
    double v = qr_bm25_score(b->m, t->w, 1, (uint8_t)n);
    uint32_t tf = b->wtf[i];
    if (tf >= 255)
        return t->w;
    if (tf >= 2 && b->wn2[i] != 255) {
        double v2 = qr_bm25_score(b->m, t->w, tf, umax8((uint8_t)n, b->wn2[i]));
        v = v2 > v ? v2 : v;
    }
    return v;
}

static double bm_bound(const bm_sc *b, uint32_t mask, uint32_t n)
{
    double u = 0;
    for (uint32_t i = 0; i < b->n; i++)
        if (mask >> i & 1)
            u += bm_word_bound(b, i, n);
    return u;
}

static void bm_window(bm_sc *b, uint32_t d)
{
    b->wend = END;
    for (uint32_t i = 0; i < b->n; i++) {
        term_sc *t = b->t[i];
        uint32_t end = term_shallow(&t->sc, d);
        uint8_t n1, n2;
        if (t->nb <= 1) {
            b->wtf[i] = t->list_tf;
            b->wn2[i] = t->list_n2;
        } else if (t->sblk >= t->nb) {
            b->wtf[i] = 255; /* past its last block: no bound (the postings walk finds the truth) */
            b->wn2[i] = 0;
        } else {
            b->wtf[i] = qr_pc_block_max_tf(&t->c, t->sblk);
            if (!qr_pc_block_impacts(&t->c, t->sblk, &n1, &n2))
                n2 = qr_pc_block_min_norm(&t->c, t->sblk);
            b->wn2[i] = n2;
            if (b->wtf[i] == 0)
                b->wtf[i] = 255;
        }
        b->wend = end < b->wend ? end : b->wend;
    }
    for (uint32_t m = 0; m < (1u << b->n); m++)
        b->nstar[m] = 0xffff;
    b->wvalid = 1;
}

/* Smallest norm code from which rows matching exactly `mask` cannot beat
 * the threshold (256: every norm may compete). */
static uint16_t bm_nstar(bm_sc *b, uint32_t mask)
{
    if (b->nstar[mask] != 0xffff)
        return b->nstar[mask];
    uint32_t lo = 0, hi = 256; /* bound(n) <= min for n >= answer */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (bm_bound(b, mask, mid) <= b->min)
            hi = mid;
        else
            lo = mid + 1;
    }
    return b->nstar[mask] = (uint16_t)lo;
}

static uint32_t bm_next_bit(const bm_sc *b, uint32_t d)
{
    if (d >= b->rows)
        return QR_NO_DOC;
    size_t w = d >> 6;
    uint64_t x = b->cand[w] & (~0ull << (d & 63));
    size_t nw = ((size_t)b->rows + 63) / 64;
    while (!x) {
        if (++w >= nw)
            return QR_NO_DOC;
        x = b->cand[w];
    }
    uint32_t r = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x));
    return r < b->rows ? r : QR_NO_DOC;
}

static int bit_at(const unsigned char *bits, uint32_t d)
{
    return bits[d >> 3] >> (d & 7) & 1;
}

static uint32_t bm_advance(qr_sc *s, uint32_t target)
{
    bm_sc *b = (bm_sc *)s;
    for (uint32_t d = bm_next_bit(b, target); d != QR_NO_DOC; d = bm_next_bit(b, d + 1)) {
        uint32_t mask = 0;
        for (uint32_t i = 0; i < b->n; i++)
            mask |= (uint32_t)bit_at(b->t[i]->bits, d) << i;
        if (b->has_min) {
            if (!b->wvalid || d > b->wend)
                bm_window(b, d);
            if (b->norms[d] >= bm_nstar(b, mask))
                continue; /* cannot beat the threshold: no postings read */
        }
        double v = 0;
        for (uint32_t i = 0; i < b->n; i++) {
            if (!(mask >> i & 1))
                continue;
            term_sc *t = b->t[i];
            if (qr_sc_advance(&t->sc, d) != d) { /* bitmap and postings disagree */
                b->bad = 1;
                return QR_NO_DOC;
            }
            v += qr_sc_score(&t->sc);
        }
        if (b->has_min && v <= b->min)
            continue; /* scored, and it loses: not worth returning */
        b->cur = v;
        return d;
    }
    return QR_NO_DOC;
}

static double bm_score(qr_sc *s) { return ((bm_sc *)s)->cur; }
static uint32_t bm_shallow(qr_sc *s, uint32_t target)
{
    bm_sc *b = (bm_sc *)s;
    uint32_t end = END;
    for (uint32_t i = 0; i < b->n; i++) {
        uint32_t l = term_shallow(&b->t[i]->sc, target);
        end = l < end ? l : end;
    }
    return end;
}
static uint8_t bm_min_norm(qr_sc *s, uint32_t upto)
{
    bm_sc *b = (bm_sc *)s;
    uint8_t n = b->is_and ? 0 : 255;
    for (uint32_t i = 0; i < b->n; i++) {
        uint8_t k = term_min_norm(&b->t[i]->sc, upto);
        n = b->is_and ? umax8(n, k) : (k < n ? k : n);
    }
    return n;
}
static double bm_max(qr_sc *s, uint32_t upto, uint8_t nfloor)
{
    bm_sc *b = (bm_sc *)s;
    double m = 0;
    if (b->is_and) {
        uint8_t n = umax8(nfloor, bm_min_norm(s, upto));
        for (uint32_t i = 0; i < b->n; i++)
            m += term_max(&b->t[i]->sc, upto, n);
        return m;
    }
    uint8_t mn[BM_MAX_WORDS];
    for (uint32_t i = 0; i < b->n; i++)
        mn[i] = term_min_norm(&b->t[i]->sc, upto);
    for (uint32_t mask = 1; mask < (1u << b->n); mask++) {
        uint8_t n = nfloor;
        double sum = 0;
        for (uint32_t i = 0; i < b->n; i++)
            if (mask >> i & 1)
                n = umax8(n, mn[i]);
        for (uint32_t i = 0; i < b->n; i++)
            if (mask >> i & 1)
                sum += term_max(&b->t[i]->sc, upto, n);
        m = sum > m ? sum : m;
    }
    return m;
}
static void bm_set_min(qr_sc *s, double min)
{
    bm_sc *b = (bm_sc *)s;
    b->has_min = 1;
    b->min = min;
    b->wvalid = 0; /* thresholds per subset change */
}
static int bm_failed(qr_sc *s)
{
    bm_sc *b = (bm_sc *)s;
    int bad = b->bad;
    for (uint32_t i = 0; i < b->n; i++)
        bad |= b->t[i]->bad;
    return bad;
}
static void bm_stats(qr_sc *s, qr_sc_stats *st)
{
    bm_sc *b = (bm_sc *)s;
    for (uint32_t i = 0; i < b->n; i++)
        term_stats(&b->t[i]->sc, st);
}
static const qr_sc_vt bm_vt = {bm_advance, bm_score,  bm_shallow, bm_max,  bm_min_norm,
                               bm_set_min, bm_failed, bm_stats};

/* min..BM_MAX_WORDS words that all have row bitmaps? */
static int dense_words(qr_sc **kids, uint32_t n, uint32_t min)
{
    if (n < min || n > BM_MAX_WORDS)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (kids[i]->vt != &term_vt || !((term_sc *)kids[i])->bits)
            return 0;
    return 1;
}

/* The docs of a filter iterator as a bitmap (walks it). */
static const void *it_to_bitmap(qr_it *it, uint32_t rows, const char *path, qr_arena *a,
                                qr_err *e)
{
    size_t nw = ((size_t)rows + 63) / 64;
    uint64_t *bits = qr_arena_alloc(a, nw * 8 + 8);
    if (!bits)
        return nomem(e), NULL;
    memset(bits, 0, nw * 8 + 8);
    for (uint32_t d = qr_it_next(it); d != QR_NO_DOC; d = qr_it_next(it)) {
        if (d >= rows) {
            qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings: row %u of %u", path, d, rows);
            return NULL;
        }
        bits[d >> 6] |= 1ull << (d & 63);
    }
    if (qr_it_failed(it)) {
        qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search", path);
        return NULL;
    }
    return bits;
}

/* The bitmap scorer for words kids[0..n) (all dense) and, for AND, an
 * optional filter bitmap; NULL when it does not apply. */
static qr_sc *bm_new(int is_and, qr_sc **kids, uint32_t n, uint32_t k, const void *filter,
                     uint32_t rows, qr_arena *a, int *oom)
{
    *oom = 0;
    if (!dense_words(kids, n, filter ? 1 : 2))
        return NULL;
    bm_sc *b = alloc_sc(a, sizeof *b, &bm_vt, 0);
    size_t nw = ((size_t)rows + 63) / 64;
    uint64_t *cand = qr_arena_alloc(a, nw * 8 + 8);
    term_sc **t = qr_arena_alloc(a, sizeof *t * n);
    if (!b || !cand || !t) {
        *oom = 1;
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        t[i] = (term_sc *)kids[i];
    for (size_t w = 0; w < nw; w++) {
        uint64_t acc = is_and ? ~0ull : 0, plane[BM_MAX_WORDS + 1] = {0};
        for (uint32_t i = 0; i < n; i++) {
            uint64_t x;
            memcpy(&x, t[i]->bits + w * 8, 8);
            acc = is_and ? acc & x : acc | x;
            for (uint32_t j = k; j >= 2; j--) /* plane[j]: rows in >= j words so far */
                plane[j] |= plane[j - 1] & x;
            plane[1] |= x;
        }
        if (!is_and && k >= 2)
            acc = plane[k];
        if (filter) {
            uint64_t x;
            memcpy(&x, (const unsigned char *)filter + w * 8, 8);
            acc &= x;
        }
        cand[w] = acc;
        b->sc.cost += (uint64_t)__builtin_popcountll(acc);
    }
    b->is_and = is_and;
    b->n = n;
    b->rows = rows;
    b->t = t;
    b->cand = cand;
    b->norms = t[0]->norms;
    b->m = t[0]->m;
    return &b->sc;
}

/* ---- building ---- */
enum { K_FILTER, K_CONST, K_SCORED };

static int is_multi(const qr_query *q)
{
    return q->type == Q_PREFIX || q->type == Q_REGEXP || q->type == Q_LIKE || q->type == Q_FUZZY;
}

/* Does q contribute to the score, and how? NOT clauses never do. */
static int kind_of(const qr_query *q)
{
    if (qr_bm25_is_leaf(q))
        return K_SCORED;
    if (is_multi(q) && q->field == SEC_BODY)
        return K_CONST;
    if (q->type == Q_AND || q->type == Q_OR || q->type == Q_MINMATCH)
        for (uint32_t i = 0; i < q->n; i++)
            if (q->kids[i]->type != Q_NOT && kind_of(q->kids[i]) != K_FILTER)
                return K_SCORED;
    return K_FILTER;
}

static qr_sc *build(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, uint32_t *leaf,
                    qr_arena *a, qr_err *e);

static qr_sc *build_and(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw,
                        uint32_t *leaf, qr_arena *a, qr_err *e)
{
    qr_sc **kids = qr_arena_alloc(a, sizeof *kids * (q->n + 1));
    qr_query **flt = qr_arena_alloc(a, sizeof *flt * q->n);
    if (!kids || !flt)
        return nomem(e);
    uint32_t n = 0, nf = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        const qr_query *k = q->kids[i];
        if (k->type == Q_NOT || kind_of(k) == K_FILTER) {
            flt[nf++] = (qr_query *)k; /* filters and exclusions: one iterator */
            *leaf += qr_bm25_count_leaves(k);
        } else if (!(kids[n++] = build(ss, k, qw, leaf, a, e))) {
            return NULL;
        }
    }
    if (nf) {
        qr_query group = {.type = Q_AND, .n = nf, .kids = flt};
        if (!(kids[n++] = const_new(qr_segsearch_compile(ss, &group, a, e), 0, a, e)))
            return NULL;
    }
    if (n == 1)
        return kids[0];
    /* dense words (and the filters, as a bitmap): candidates from bitmaps */
    const void *fbits = NULL;
    uint32_t nw = nf ? n - 1 : n;
    if (nf && dense_words(kids, nw, 1)) { /* even one word: the filter narrows it */
        const_sc *fk = (const_sc *)kids[n - 1];
        fbits = qr_it_bitmap_bits(fk->it);
        /* a selective filter is cheap to turn into a bitmap; a broad one
         * (an exclusion alone walks every row) stays a leapfrog clause */
        if (!fbits && fk->it->cost <= ss->seg->rows / 8 &&
            !(fbits = it_to_bitmap(fk->it, (uint32_t)ss->seg->rows, ss->seg->path, a, e)))
            return NULL; /* out of memory, or corrupt filter postings */
    }
    if (nf && !fbits)
        nw = 0; /* the filter is not a bitmap: the general conjunction */
    if (dense_words(kids, nw, fbits ? 1 : 2)) {
        int oom;
        qr_sc *b = bm_new(1, kids, nw, nw, fbits, (uint32_t)ss->seg->rows, a, &oom);
        if (b || oom)
            return b ? b : nomem(e);
    }
    and_sc *x = alloc_sc(a, sizeof *x, &and_vt, 0);
    qr_sc **lead = qr_arena_alloc(a, sizeof *lead * n);
    if (!x || !lead)
        return nomem(e);
    memcpy(lead, kids, sizeof *lead * n);
    for (uint32_t i = 1; i < n; i++) /* cheapest leads */
        for (uint32_t j = i; j > 0 && lead[j - 1]->cost > lead[j]->cost; j--) {
            qr_sc *t = lead[j];
            lead[j] = lead[j - 1];
            lead[j - 1] = t;
        }
    x->kids = kids;
    x->lead = lead;
    x->n = n;
    x->sc.cost = lead[0]->cost;
    return &x->sc;
}

static qr_sc *build_or(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw,
                       uint32_t *leaf, qr_arena *a, qr_err *e)
{
    or_sc *o = alloc_sc(a, sizeof *o, &or_vt, 0);
    if (!o || !(o->kids = qr_arena_alloc(a, sizeof *o->kids * q->n)) ||
        !(o->wmax = qr_arena_alloc(a, sizeof *o->wmax * q->n)) ||
        !(o->pref = qr_arena_alloc(a, sizeof *o->pref * (q->n + 1))) ||
        !(o->order = qr_arena_alloc(a, sizeof *o->order * q->n)))
        return nomem(e);
    o->n = q->n;
    o->k = q->type == Q_MINMATCH ? q->k : 1;
    for (uint32_t i = 0; i < q->n; i++) {
        if (!(o->kids[i] = build(ss, q->kids[i], qw, leaf, a, e)))
            return NULL;
        o->sc.cost += o->kids[i]->cost;
    }
    if (o->k <= o->n) { /* dense words: candidates from bitmaps (at least k of them) */
        int oom;
        qr_sc *b = bm_new(0, o->kids, o->n, o->k, NULL, (uint32_t)ss->seg->rows, a, &oom);
        if (b || oom)
            return b ? b : nomem(e);
    }
    return &o->sc;
}

static qr_sc *build(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, uint32_t *leaf,
                    qr_arena *a, qr_err *e)
{
    switch (kind_of(q)) {
    case K_FILTER:
        *leaf += qr_bm25_count_leaves(q);
        return const_new(qr_segsearch_compile(ss, q, a, e), 0, a, e);
    case K_CONST:
        return const_new(qr_segsearch_compile(ss, q, a, e), 1, a, e);
    default:
        break;
    }
    if (qr_bm25_is_leaf(q)) {
        if (*leaf >= qw->n)
            return (void)qr_errf(e, QR_E_INTERNAL, "query statistics do not match the query"),
                   NULL;
        double w = qw->w[(*leaf)++];
        return q->type == Q_TERM ? term_new(ss, q, qw, w, a, e) : phrase_new(ss, q, qw, w, a, e);
    }
    return q->type == Q_AND ? build_and(ss, q, qw, leaf, a, e) : build_or(ss, q, qw, leaf, a, e);
}

qr_sc *qr_scorer_build(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, qr_arena *a,
                       qr_err *e)
{
    uint32_t leaf = 0;
    return build(ss, q, qw, &leaf, a, e);
}
