/* scorer_bool.c - conjunctions (leapfrog, windows skipped by their summed
 * block maxima, norm-coupled) and disjunctions / at-least-k (block-max
 * MaxScore). Scores add in the order the clauses are written, so pruned and
 * exhaustive runs agree bit for bit; MaxScore's partial sums, taken in
 * another order, are compared with SLACK. */
#include "score/scorer_int.h"

#include <string.h>

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
int sc_kids_failed(qr_sc **kids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (kids[i]->vt->failed(kids[i]))
            return 1;
    return 0;
}
void sc_kids_stats(qr_sc **kids, uint32_t n, qr_sc_stats *st)
{
    for (uint32_t i = 0; i < n; i++)
        kids[i]->vt->stats(kids[i], st);
}
static int and_failed(qr_sc *s) { return sc_kids_failed(((and_sc *)s)->kids, ((and_sc *)s)->n); }
static void and_stats(qr_sc *s, qr_sc_stats *st)
{
    sc_kids_stats(((and_sc *)s)->kids, ((and_sc *)s)->n, st);
}
static const qr_sc_vt and_vt = {and_advance, and_score,  and_shallow, and_max, and_min_norm,
                                and_set_min, and_failed, and_stats};

qr_sc *sc_and_new(qr_sc **kids, uint32_t n, qr_arena *a, qr_err *e)
{
    and_sc *x = sc_alloc(a, sizeof *x, &and_vt, 0);
    qr_sc **lead = qr_arena_alloc(a, sizeof *lead * n);
    if (!x || !lead)
        return sc_nomem(e);
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
    /* the bounds summed in the written order, the order a row's score adds
     * them: rounding is monotonic, so no row of the window scores above
     * it, exactly (no slack: a window whose best only ties the threshold
     * is skipped, which matters when thousands of rows tie) */
    double tot = 0;
    for (uint32_t i = 0; i < o->n; i++)
        tot += o->wmax[i];
    if (o->k == 1) {
        o->ness = 0;
        while (o->ness < o->n && o->pref[o->ness + 1] * SLACK <= o->min)
            o->ness++;
        if (o->ness < o->n &&
            (tot <= o->min || (o->n <= OR_COUPLE_MAX && or_max(&o->sc, o->wend, 0) <= o->min)))
            o->ness = o->n; /* no subset of the clauses can compete here */
    } else {
        o->ness = o->pref[o->n] * SLACK <= o->min || tot <= o->min ? o->n : 0;
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
static int or_failed(qr_sc *s) { return sc_kids_failed(((or_sc *)s)->kids, ((or_sc *)s)->n); }
static void or_stats(qr_sc *s, qr_sc_stats *st) { sc_kids_stats(((or_sc *)s)->kids, ((or_sc *)s)->n, st); }
static const qr_sc_vt or_vt = {or_advance, or_score,  or_shallow, or_max, or_min_norm,
                               or_set_min, or_failed, or_stats};

qr_sc *sc_or_new(qr_sc **kids, uint32_t n, uint32_t k, qr_arena *a, qr_err *e)
{
    or_sc *o = sc_alloc(a, sizeof *o, &or_vt, 0);
    if (!o || !(o->wmax = qr_arena_alloc(a, sizeof *o->wmax * n)) ||
        !(o->pref = qr_arena_alloc(a, sizeof *o->pref * (n + 1))) ||
        !(o->order = qr_arena_alloc(a, sizeof *o->order * n)))
        return sc_nomem(e);
    o->kids = kids;
    o->n = n;
    o->k = k;
    for (uint32_t i = 0; i < n; i++)
        o->sc.cost += kids[i]->cost;
    return &o->sc;
}
