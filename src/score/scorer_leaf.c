/* scorer_leaf.c - the leaf scorers: a constant over a filter, one word
 * (block-max bounds from its skip entries' impacts), a phrase (bounded by
 * its words' block max tf); and the helpers every scorer file shares.
 *
 * Bounds are evaluated with the very expression that scores a row
 * (qr_bm25_score on the block's max tf and min norm), so "bound <=
 * threshold" proves the score is too (IEEE rounding is monotone). */
#include "score/scorer_int.h"

#include <math.h>
#include <string.h>

#include "index/invfmt.h"

qr_sc *sc_nomem(qr_err *e)
{
    qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    return NULL;
}

void *sc_alloc(qr_arena *a, size_t size, const qr_sc_vt *vt, uint64_t cost)
{
    qr_sc *s = qr_arena_alloc(a, size);
    if (s) {
        memset(s, 0, size);
        s->vt = vt;
        s->cost = cost;
    }
    return s;
}

uint32_t sc_shallow_end(qr_sc *s, uint32_t target) { return END; }
void sc_no_stats(qr_sc *s, qr_sc_stats *st) {}

/* First doc >= target of a plain iterator (started or not). */
uint32_t sc_it_seek(qr_it *it, uint32_t target)
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

static uint32_t const_advance(qr_sc *s, uint32_t target)
{
    const_sc *k = (const_sc *)s;
    return k->done ? QR_NO_DOC : sc_it_seek(k->it, target);
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
static const qr_sc_vt const_vt = {const_advance, const_score,   sc_shallow_end, const_max, no_norm,
                                  const_set_min, const_failed, sc_no_stats};

qr_sc *sc_const_new(qr_it *it, double c, qr_arena *a, qr_err *e)
{
    if (!it)
        return NULL;
    const_sc *k = sc_alloc(a, sizeof *k, &const_vt, it->cost);
    if (!k)
        return sc_nomem(e);
    k->it = it;
    k->c = c;
    return &k->sc;
}

/* ---- one word ---- */


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

uint32_t term_shallow(qr_sc *s, uint32_t target)
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

double term_max(qr_sc *s, uint32_t upto, uint8_t nfloor)
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

uint8_t term_min_norm(qr_sc *s, uint32_t upto)
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

uint32_t term_seek(term_sc *t, uint32_t target)
{
    uint32_t d = t->cstarted && t->c.doc >= target ? t->c.doc : qr_pc_advance(&t->c, target);
    t->cstarted = 1;
    if (d == QR_NO_DOC) {
        t->bad |= t->c.corrupt;
        return d;
    }
    if (d >= t->rows) {
        t->bad = 1;
        return QR_NO_DOC;
    }
    return d;
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
        uint32_t d = term_seek(t, target);
        if (d == QR_NO_DOC)
            return d;
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
void term_stats(qr_sc *s, qr_sc_stats *st)
{
    term_sc *t = (term_sc *)s;
    st->blocks_total += t->blocks;
    st->blocks_decoded += t->c.decoded;
}
const qr_sc_vt sc_term_vt = {term_advance, term_score,  term_shallow, term_max, term_min_norm,
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
        if (f->norms_map[d] < *min_norm) /* verified: the caller loaded them */
            *min_norm = f->norms_map[d];
    }
    if (c.corrupt)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s postings (index section %u)",
                       f->seg->path, f->def.name, f->def.sec);
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
        uint8_t nm = f->norms_map[d];
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
                       f->seg->path, f->def.name, f->def.sec);
    if (t->list_min_norm == 255)
        t->list_min_norm = 0;
    return 0;
}

qr_sc *sc_term_new(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double w,
                   const double *tab, qr_arena *a, qr_err *e)
{
    qr_invfield *f = qr_segsearch_field(ss, q->field, e);
    if (!f)
        return NULL;
    qr_terminfo ti;
    int r = q->len <= QR_MAX_TERM ? qr_tdict_lookup(&f->dict, q->text, q->len, &ti, e) : 0;
    if (r < 0)
        return (void)qr_err_prefix(e, "segment %s: %s index: ", ss->seg->path, f->def.name),
               NULL;
    if (r == 0)
        return sc_const_new(qr_it_empty(a), 0, a, e);
    term_sc *t = sc_alloc(a, sizeof *t, &sc_term_vt, ti.df);
    if (!t)
        return sc_nomem(e);
    t->m = &qw->m;
    t->w = w;
    t->tab = tab;
    if (qr_invfield_load_norms(f, e) != 0)
        return NULL;
    t->norms = qr_invfield_norms(f);
    t->rows = f->rows;
    t->field = f;
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
    int has_min, bad, done, wvalid;
    uint32_t wend; /* the window whose bound was last found to compete */
    uint64_t blocks;
    double fmin[256]; /* per norm, a frequency a row must pass to compete */
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
            /* a window's bound is checked once (again when the threshold
             * rises), not for every row returned from it */
            if (!p->wvalid || target > p->wend) {
                end = phrase_shallow(s, target);
                if (p->done)
                    return QR_NO_DOC;
                if (phrase_max(s, end, 0) <= p->min) {
                    if (end >= END)
                        return QR_NO_DOC;
                    target = end + 1;
                    continue;
                }
                p->wend = end;
                p->wvalid = 1;
            }
            end = p->wend;
        }
        uint32_t d = sc_it_seek(p->it, target);
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
        if (p->has_min &&
            qr_bm25_score(p->m, p->w, qr_it_phrase_freq(p->it), p->norms[d]) <= p->min) {
            target = d + 1; /* scored, and it loses: not worth returning */
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
    p->wvalid = 0;
    /* w f / (f + K) > min  <=>  f > min K / (w - min) (w > min, f > 0): the
     * walk passes over rows below that, less a margin far above rounding,
     * and the rows near it are still scored exactly here */
    for (int n = 0; n < 256; n++)
        p->fmin[n] = p->w > min ? min * p->m->K[n] / (p->w - min) * (1 - 1e-9) : INFINITY;
    if (min > 0)
        qr_it_phrase_floor(p->it, p->norms, p->fmin);
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

qr_sc *sc_phrase_new(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double w,
                         qr_arena *a, qr_err *e)
{
    qr_invfield *f;
    qr_terminfo *tis;
    qr_phrase_shapes sh;
    int r = qr_segsearch_phrase_words(ss, q, a, &f, &tis, &sh, e);
    if (r <= 0)
        return r < 0 ? NULL : sc_const_new(qr_it_empty(a), 0, a, e);
    phrase_sc *p = sc_alloc(a, sizeof *p, &phrase_vt, 0);
    if (!p || !(p->words = qr_arena_alloc(a, sizeof *p->words * q->n)))
        return sc_nomem(e);
    /* scoring walks rows, where the cursors must follow: no shapes */
    if (!(p->it = qr_it_phrase(a, f, tis, q->offs, q->n, q->within, NULL)))
        return sc_nomem(e);
    p->sc.cost = p->it->cost;
    p->m = &qw->m;
    p->w = w;
    if (qr_invfield_load_norms(f, e) != 0)
        return NULL;
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
