/* scorer_dense.c - AND, OR and at-least-k of dense words (words with row
 * bitmaps) scored from their bitmaps, each candidate bounded by its own
 * length before any postings block is decoded. */
#include "score/scorer_int.h"

#include <string.h>

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
int sc_dense_words(qr_sc **kids, uint32_t n, uint32_t min)
{
    if (n < min || n > BM_MAX_WORDS)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (kids[i]->vt != &sc_term_vt || !((term_sc *)kids[i])->bits)
            return 0;
    return 1;
}

/* The docs of a filter iterator as a bitmap (walks it). */
const void *sc_it_to_bitmap(qr_it *it, uint32_t rows, const char *path, qr_arena *a,
                                qr_err *e)
{
    size_t nw = ((size_t)rows + 63) / 64;
    uint64_t *bits = qr_arena_alloc(a, nw * 8 + 8);
    if (!bits)
        return sc_nomem(e), NULL;
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
qr_sc *sc_dense_new(int is_and, qr_sc **kids, uint32_t n, uint32_t k, const void *filter,
                     uint32_t rows, qr_arena *a, int *oom)
{
    *oom = 0;
    if (!sc_dense_words(kids, n, filter ? 1 : 2))
        return NULL;
    bm_sc *b = sc_alloc(a, sizeof *b, &bm_vt, 0);
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
