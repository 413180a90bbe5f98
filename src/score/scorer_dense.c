/* scorer_dense.c - AND, OR and at-least-k of dense words (words with row
 * bitmaps) scored from their bitmaps, each candidate bounded by its own
 * length before any postings block is decoded; with a threshold known at
 * build time, the candidates that cannot beat it are dropped while the
 * bitmaps are combined, using each word's list of rows that hold it more
 * than once (format 11) to bound every other row exactly. */
#include "score/scorer_int.h"

#include <math.h>
#include <string.h>

#include "index/invindex.h"
#include "util/popcount.h"

#if defined(__x86_64__)
#include <emmintrin.h> /* SSE2: part of every x86-64 CPU */
#endif

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

/* The norm codes n for which rows matching one subset of the words may
 * still beat the threshold: n < a, or lo2 <= n < b. A row shorter than
 * every word's n2 (the smallest norm of its rows with tf >= 2) has tf 1 in
 * each, so its bound is exact there; from the smallest n2 on, the general
 * bound holds. Each piece falls as n grows, so each is a prefix. */
typedef struct {
    uint16_t a, lo2, b;
} nrange;

static inline int nr_has(nrange r, uint32_t n) { return n < r.a || (n >= r.lo2 && n < r.b); }
static inline int nr_empty(nrange r) { return r.a == 0 && r.lo2 >= r.b; }

typedef struct {
    qr_sc sc;
    int is_and;
    uint32_t n, k, rows; /* k: words a row needs (n for AND, 1 for OR) */
    term_sc **t;       /* the words, as written */
    const uint64_t *cand;
    const uint8_t *norms;
    const qr_bm25 *m;
    double min, cur;
    int has_min, bad, wvalid;
    uint32_t wend;     /* window: every word in one block up to wend */
    uint32_t wtf[BM_MAX_WORDS];
    uint8_t wn2[BM_MAX_WORDS];
    nrange nstar[1 << BM_MAX_WORDS]; /* per subset: the norms that may compete (a = 0xffff: unknown) */
    /* the same over the whole segment (its words' largest tf, smallest n2):
     * a looser bound, so a word of 64 rows can be passed over before any
     * candidate in it is looked at (sstar valid while svalid) */
    uint32_t stf[BM_MAX_WORDS];
    uint8_t sn2[BM_MAX_WORDS];
    uint8_t smin[BM_MAX_WORDS]; /* the smallest norm of the word's rows in the segment */
    uint64_t nmask[BM_MAX_WORDS][4]; /* the norms its rows have (format 11; else all) */
    uint64_t mmask[BM_MAX_WORDS][4]; /* the norms its rows with tf >= 2 have, likewise */
    nrange sstar[1 << BM_MAX_WORDS];
    uint32_t slive[1 << BM_MAX_WORDS], nslive; /* subsets that may still compete */
    uint32_t kmin; /* the fewest words of a subset that may */
    int svalid;
    /* the threshold `cand` was already narrowed by (live_in_word at build
     * time): words need it again only once the threshold rises past it */
    double cand_min;
    /* per word, which of its rows may hold it more than once (tf >= 2):
     * M_NONE none (its largest tf is 1, or its list is empty), M_LIST the
     * rows of its list (mbits, format 11), M_NORM unknown, so every row from
     * the smallest norm of such rows on */
    uint8_t mkind[BM_MAX_WORDS];
    const uint64_t *mbits[BM_MAX_WORDS];
    /* per subset and combination of its words held more than once: rows
     * matching exactly the subset, with tf >= 2 in exactly the words of
     * the combination, may beat the threshold below this norm (0xffff: not
     * computed yet; from the words' smallest norm of such rows on) */
    uint16_t clim[1 << BM_MAX_WORDS][1 << BM_MAX_WORDS];
    /* per subset: the combinations whose rows can compete at norms where
     * rows holding each word once cannot, [xlo, clim) (nxc 0xff: not known
     * yet) */
    uint8_t nxc[1 << BM_MAX_WORDS], xc[1 << BM_MAX_WORDS][1 << BM_MAX_WORDS];
    uint16_t xlo[1 << BM_MAX_WORDS][1 << BM_MAX_WORDS];
    /* per subset: no row of it at this norm or above can compete (0xffff:
     * not known yet) */
    uint16_t up[1 << BM_MAX_WORDS];
    /* pairs of listed words (bit i * BM_MAX_WORDS + j) no row repeats both
     * of: combinations holding such a pair have no rows */
    uint32_t apart;
} bm_sc;

enum { M_NONE, M_LIST, M_NORM };

/* Bound of word i in the window for a row of norm code n (falls as n grows):
 * a tf-1 row scores exactly s(1, n); a row with tf >= 2 has n >= n2 and tf
 * <= the block's max tf. */
static double word_bound(const bm_sc *b, uint32_t i, uint32_t n, uint32_t tf, uint8_t n2)
{
    const term_sc *t = b->t[i];
    double v = qr_bm25_score(b->m, t->w, 1, (uint8_t)n);
    if (tf >= 255)
        return t->w;
    if (tf >= 2 && n2 != 255) {
        double v2 = qr_bm25_score(b->m, t->w, tf, umax8((uint8_t)n, n2));
        v = v2 > v ? v2 : v;
    }
    return v;
}

/* Summed in the written order, as a row's score adds (exact: rounding is
 * monotonic). seg: with the segment-wide tf and n2, else the window's. */
static double bound_of(const bm_sc *b, uint32_t mask, uint32_t n, int seg)
{
    double u = 0;
    for (uint32_t i = 0; i < b->n; i++)
        if (mask >> i & 1)
            u += seg ? word_bound(b, i, n, b->stf[i], b->sn2[i])
                     : word_bound(b, i, n, b->wtf[i], b->wn2[i]);
    return u;
}

/* A row of norm n with tf 1 in every word of mask: its exact bound. */
static double tf1_bound(const bm_sc *b, uint32_t mask, uint32_t n)
{
    double u = 0;
    for (uint32_t i = 0; i < b->n; i++)
        if (mask >> i & 1)
            u += qr_bm25_score(b->m, b->t[i]->w, 1, (uint8_t)n);
    return u;
}

/* The first n in [lo, hi) with bound <= min (hi when none), the bound
 * falling in n over the range. */
static uint32_t first_losing(const bm_sc *b, uint32_t mask, int seg, int tf1, uint32_t lo,
                             uint32_t hi)
{
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        double u = tf1 ? tf1_bound(b, mask, mid) : bound_of(b, mask, mid, seg);
        if (u <= b->min)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The norms rows matching exactly `mask` may compete at, by the
 * segment-wide (seg) or the window's bounds. */
static nrange competing_norms(const bm_sc *b, uint32_t mask, int seg)
{
    uint32_t n2min = 256; /* below it no word of mask has a row with tf >= 2 */
    for (uint32_t i = 0; i < b->n; i++) {
        if (!(mask >> i & 1))
            continue;
        uint32_t tf = seg ? b->stf[i] : b->wtf[i];
        uint8_t n2 = seg ? b->sn2[i] : b->wn2[i];
        uint32_t lim = tf >= 255 ? 0 : tf >= 2 && n2 != 255 ? n2 : 256;
        n2min = lim < n2min ? lim : n2min;
    }
    nrange r;
    r.a = (uint16_t)first_losing(b, mask, seg, 1, 0, n2min);
    r.lo2 = (uint16_t)n2min;
    r.b = n2min < 256 ? (uint16_t)first_losing(b, mask, seg, 0, n2min, 256) : (uint16_t)n2min;
    return r;
}

static uint32_t subset_upper(bm_sc *b, uint32_t mask);

/* The shortest length a row holding every word of mask can have: the
 * first norm all of them have rows at, and at least each one's smallest
 * (256: none). */
static uint32_t first_common_norm(const bm_sc *b, uint32_t mask)
{
    uint32_t shortest = 0;
    uint64_t both[4] = {~0ull, ~0ull, ~0ull, ~0ull};
    for (uint32_t i = 0; i < b->n; i++) {
        if (!(mask >> i & 1))
            continue;
        shortest = b->smin[i] > shortest ? b->smin[i] : shortest;
        for (int q = 0; q < 4; q++)
            both[q] &= b->nmask[i][q];
    }
    for (uint32_t q = shortest / 64; q < 4; q++) {
        uint64_t x = both[q] & (q == shortest / 64 ? ~0ull << (shortest % 64) : ~0ull);
        if (x)
            return q * 64 + (uint32_t)__builtin_ctzll(x);
    }
    return 256;
}

/* The subsets that can still compete anywhere in the segment (a subset's
 * rows are at least as long as its words' smallest norms), and from which
 * norm they cannot. */
static void seg_thresholds(bm_sc *b)
{
    memset(b->clim, 0xff, sizeof b->clim);
    memset(b->nxc, 0xff, sizeof b->nxc);
    memset(b->up, 0xff, sizeof b->up);
    b->nslive = 0;
    for (uint32_t m = 1; m < (1u << b->n); m++) {
        uint32_t k = (uint32_t)__builtin_popcount(m);
        if ((b->is_and && m != (1u << b->n) - 1) || k < b->k)
            continue; /* such rows are not candidates */
        b->sstar[m] = competing_norms(b, m, 1);
        if (nr_empty(b->sstar[m]))
            continue;
        if (first_common_norm(b, m) < subset_upper(b, m))
            b->slive[b->nslive++] = m;
    }
    b->kmin = b->n;
    for (uint32_t s = 0; s < b->nslive; s++)
        if ((uint32_t)__builtin_popcount(b->slive[s]) < b->kmin)
            b->kmin = (uint32_t)__builtin_popcount(b->slive[s]);
    b->svalid = 1;
}

/* Bits j of the result: p[j] < n, for j < cnt <= 64 (n in 0..256). */
uint64_t sc_norms_below_scalar(const uint8_t *p, uint32_t cnt, uint32_t n)
{
    if (n == 0)
        return 0;
    uint64_t m = 0;
    for (uint32_t j = 0; j < cnt; j++)
        m |= (uint64_t)(p[j] < n) << j;
    return m;
}

static inline uint64_t norms_below64(const uint8_t *p, uint32_t n)
{
    if (n == 0)
        return 0;
    if (n >= 256)
        return ~0ull;
#if defined(__x86_64__)
    /* x < n  <=>  max(x, n - 1) == n - 1 (unsigned bytes) */
    __m128i lim = _mm_set1_epi8((char)(n - 1));
    uint64_t m = 0;
    for (int q = 0; q < 4; q++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * q));
        __m128i le = _mm_cmpeq_epi8(_mm_max_epu8(x, lim), lim);
        m |= (uint64_t)(uint16_t)_mm_movemask_epi8(le) << (16 * q);
    }
    return m;
#else
    return sc_norms_below_scalar(p, 64, n);
#endif
}

static inline uint64_t nbelow(const uint8_t *p, uint32_t cnt, uint32_t n)
{
    return cnt == 64 ? norms_below64(p, n) : sc_norms_below_scalar(p, cnt, n);
}

uint64_t sc_norms_below(const uint8_t *p, uint32_t cnt, uint32_t n) { return nbelow(p, cnt, n); }

/* The bound of a row of norm n matching exactly `mask`, with tf >= 2 in
 * the words of c (at most the segment's largest tf, from its smallest
 * norm of such rows on) and tf 1 in the others (exact), summed in the
 * written order. */
static double combo_bound(const bm_sc *b, uint32_t mask, uint32_t c, uint32_t n)
{
    double u = 0;
    for (uint32_t i = 0; i < b->n; i++)
        if (mask >> i & 1)
            u += c >> i & 1 ? word_bound(b, i, n, b->stf[i], b->sn2[i])
                            : qr_bm25_score(b->m, b->t[i]->w, 1, (uint8_t)n);
    return u;
}

/* Below which norm such rows may still beat the threshold (the bound
 * falls as n grows: a prefix), computed once per threshold. */
static uint32_t combo_limit(bm_sc *b, uint32_t mask, uint32_t c)
{
    if (b->clim[mask][c] != 0xffff)
        return b->clim[mask][c];
    uint32_t lo = 0, hi = 256;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (combo_bound(b, mask, c, mid) <= b->min)
            hi = mid;
        else
            lo = mid + 1;
    }
    return b->clim[mask][c] = (uint16_t)lo;
}

/* Of the rows `bits` of word i in bitmap word w (norms nm, cnt rows), those
 * that may hold it more than once. */
static uint64_t word_multi(const bm_sc *b, uint32_t i, size_t w, uint64_t bits,
                           const uint8_t *nm, uint32_t cnt)
{
    switch (b->mkind[i]) {
    case M_LIST:
        return b->mbits[i][w] & bits;
    case M_NORM:
        return bits & ~nbelow(nm, cnt, b->sn2[i]);
    default:
        return 0;
    }
}

/* The words of mask that may hold a row more than once. */
static uint32_t multi_words(const bm_sc *b, uint32_t mask)
{
    uint32_t mm = 0;
    for (uint32_t i = 0; i < b->n; i++)
        if ((mask >> i & 1) && b->mkind[i] != M_NONE)
            mm |= 1u << i;
    return mm;
}

/* The smallest norm a row with tf >= 2 in every word of c can have. */
static uint32_t combo_floor(const bm_sc *b, uint32_t c)
{
    uint32_t f = 0;
    for (uint32_t i = 0; i < b->n; i++)
        if ((c >> i & 1) && b->sn2[i] > f)
            f = b->sn2[i];
    return f;
}

/* The combinations of words held more than once whose rows of subset
 * mask can compete at norms where rows holding each word once cannot
 * (from their tf-1 limit on): how many, listed in b->xc[mask]. */
static uint32_t multi_extra(bm_sc *b, uint32_t mask)
{
    if (b->nxc[mask] != 0xff)
        return b->nxc[mask];
    uint32_t mm = multi_words(b, mask), l0 = combo_limit(b, mask, 0), nx = 0;
    for (uint32_t c = mm; c; c = (c - 1) & mm) {
        int none = 0;
        for (uint32_t i = 0; i < b->n; i++)
            for (uint32_t j = i + 1; j < b->n; j++)
                none |= (c >> i & 1) && (c >> j & 1) && (b->apart >> (i * BM_MAX_WORDS + j) & 1);
        if (none)
            continue;
        uint32_t lo = combo_floor(b, c);
        lo = lo > l0 ? lo : l0;
        /* such a row's norm is one every word of mask has rows at, and
         * every word of c repeated rows at */
        uint64_t at[4] = {~0ull, ~0ull, ~0ull, ~0ull};
        for (uint32_t i = 0; i < b->n; i++)
            for (int q = 0; q < 4; q++) {
                if (mask >> i & 1)
                    at[q] &= b->nmask[i][q];
                if (c >> i & 1)
                    at[q] &= b->mmask[i][q];
            }
        uint32_t hi = combo_limit(b, mask, c), n = lo;
        while (n < hi && !(at[n / 64] >> (n % 64) & 1))
            n++;
        if (n < hi) {
            b->xc[mask][nx] = (uint8_t)c;
            b->xlo[mask][nx++] = (uint16_t)lo;
        }
    }
    return b->nxc[mask] = (uint8_t)nx;
}

/* The norm from which no row of subset mask can compete. */
static uint32_t subset_upper(bm_sc *b, uint32_t mask)
{
    if (b->up[mask] != 0xffff)
        return b->up[mask];
    uint32_t u = combo_limit(b, mask, 0), nx = multi_extra(b, mask);
    for (uint32_t j = 0; j < nx; j++) {
        uint32_t l = combo_limit(b, mask, b->xc[mask][j]);
        u = l > u ? l : u;
    }
    return b->up[mask] = (uint16_t)u;
}

/* Rows [d, *end] (end: where the first of the words' postings blocks at d
 * ends): can none of them compete? A row of a subset has one length, at
 * least every one of its words' smallest norm in its block (255: the word
 * has no rows left), so a subset whose rows are all too long there is out.
 * Moves the words' shallow cursors (the caller restores them). */
static int window_dead(bm_sc *b, uint32_t d, uint32_t *end)
{
    uint8_t mn[BM_MAX_WORDS];
    uint32_t e = END;
    for (uint32_t i = 0; i < b->n; i++) {
        term_sc *t = b->t[i];
        uint32_t l = term_shallow(&t->sc, d);
        mn[i] = t->nb <= 1 ? t->list_min_norm
                : t->sblk < t->nb ? qr_pc_block_min_norm(&t->c, t->sblk) : 255;
        e = l < e ? l : e;
    }
    *end = e;
    for (uint32_t s = 0; s < b->nslive; s++) {
        uint32_t m = b->slive[s], n = 0;
        for (uint32_t i = 0; i < b->n; i++)
            if ((m >> i & 1) && mn[i] > n)
                n = mn[i];
        if (n < subset_upper(b, m))
            return 0;
    }
    return 1;
}

/* Of the candidates x in word w, those the segment-wide bounds let
 * compete. Per live subset of the words: its rows below the norm where
 * a row holding each word once stops competing (that bound is exact);
 * and, when rows holding a word more than once can compete further, those
 * rows split by which words they hold so, each below its own limit. */
static uint64_t live_in_word(bm_sc *b, size_t w, uint64_t x)
{
    uint64_t bits[BM_MAX_WORDS], live = 0;
    uint32_t first = (uint32_t)(w * 64), cnt = b->rows - first < 64 ? b->rows - first : 64;
    const uint8_t *nm = b->norms + first;
    for (uint32_t i = 0; i < b->n; i++)
        memcpy(&bits[i], b->t[i]->bits + w * 8, 8);
    if (b->kmin >= 2) { /* only rows with kmin words or more: bit-sliced counts */
        uint64_t plane[BM_MAX_WORDS + 1] = {~0ull};
        for (uint32_t i = 0; i < b->n; i++)
            for (uint32_t j = b->kmin; j >= 1; j--)
                plane[j] |= plane[j - 1] & bits[i];
        if (!(x &= plane[b->kmin]))
            return 0;
    }
    for (uint32_t s = 0; s < b->nslive; s++) {
        uint32_t m = b->slive[s];
        uint64_t r = x;
        for (uint32_t i = 0; i < b->n; i++)
            r &= (m >> i & 1) ? bits[i] : ~bits[i];
        if (!r)
            continue;
        live |= r & nbelow(nm, cnt, combo_limit(b, m, 0)); /* and rows holding a word twice */
        uint32_t nx = multi_extra(b, m);
        if (!nx)
            continue;
        uint32_t mm = multi_words(b, m);
        uint64_t multi[BM_MAX_WORDS] = {0};
        for (uint32_t i = 0; i < b->n; i++)
            if (mm >> i & 1)
                multi[i] = word_multi(b, i, w, bits[i] & r, nm, cnt);
        for (uint32_t j = 0; j < nx; j++) {
            uint32_t c = b->xc[m][j];
            uint64_t rc = r;
            for (uint32_t i = 0; i < b->n && rc; i++)
                if (mm >> i & 1)
                    rc &= (c >> i & 1) ? multi[i] : ~multi[i];
            if (rc) /* rows with tf >= 2 in word i have norm >= its n2 */
                live |= rc & nbelow(nm, cnt, combo_limit(b, m, c)) &
                        ~nbelow(nm, cnt, b->xlo[m][j]);
        }
    }
    return live;
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
        b->nstar[m].a = 0xffff;
    b->wvalid = 1;
}

/* Smallest norm code from which rows matching exactly `mask` cannot beat
 * the threshold (256: every norm may compete). */
static nrange bm_nstar(bm_sc *b, uint32_t mask)
{
    if (b->nstar[mask].a == 0xffff)
        b->nstar[mask] = competing_norms(b, mask, 0);
    return b->nstar[mask];
}

/* The next candidate from d; with a threshold, words of 64 rows none of
 * whose candidates the segment-wide bounds let compete are passed over. */
static uint32_t bm_next_bit(bm_sc *b, uint32_t d)
{
    if (d >= b->rows)
        return QR_NO_DOC;
    if (b->has_min && !b->svalid)
        seg_thresholds(b);
    size_t w = d >> 6;
    int narrow = b->has_min && b->min > b->cand_min;
    uint64_t x = b->cand[w] & (~0ull << (d & 63));
    if (x && narrow)
        x = live_in_word(b, w, x);
    size_t nw = ((size_t)b->rows + 63) / 64;
    while (!x) {
        if (++w >= nw)
            return QR_NO_DOC;
        x = b->cand[w];
        if (x && narrow)
            x = live_in_word(b, w, x);
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
            if (!nr_has(bm_nstar(b, mask), b->norms[d]))
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
    b->svalid = 0;
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

int sc_dense_materialize(qr_sc **kids, uint32_t n, uint32_t rows, qr_arena *a, qr_err *e)
{
    if (n < 2 || n > BM_MAX_WORDS)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        const term_sc *t = (const term_sc *)kids[i];
        if (kids[i]->vt != &sc_term_vt || t->bad || !t->field)
            return 0;
        if (!t->bits && kids[i]->cost * 128 < rows)
            return 0; /* rare: cheaper walked term at a time */
    }
    size_t nw = ((size_t)rows + 63) / 64;
    for (uint32_t i = 0; i < n; i++) {
        term_sc *t = (term_sc *)kids[i];
        if (t->bits)
            continue;
        uint64_t *bits = qr_arena_alloc(a, nw * 8 + 8);
        qr_pcursor *c = qr_arena_alloc(a, sizeof *c);
        if (!bits || !c)
            return sc_nomem(e), -1;
        memset(bits, 0, nw * 8 + 8);
        /* a cursor of its own: the word's stays where scoring needs it */
        if (qr_invfield_cursor(t->field, &t->c.ti, c, e) != 0)
            return -1;
        if (qr_pc_set_bits(c, bits, rows) < 0)
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                           t->field->seg->path);
        t->bits = (const unsigned char *)bits;
    }
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
    int64_t set = qr_it_postings_bits(it, bits, rows); /* one word's list: a block at a time */
    if (set == -1) {
        qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search", path);
        return NULL;
    }
    if (set >= 0)
        return bits;
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

/* The segment-wide impacts of word i: its largest tf, the smallest norm
 * of its rows with tf >= 2. */
static void seg_impacts(bm_sc *b, uint32_t i)
{
    const term_sc *w = b->t[i];
    if (w->nb <= 1) {
        b->stf[i] = w->list_tf ? w->list_tf : 255;
        b->sn2[i] = w->list_n2;
        b->smin[i] = w->list_min_norm;
        return;
    }
    uint32_t tf = 0;
    uint8_t n2 = 255, mn = 255;
    for (uint32_t blk = 0; blk < w->nb; blk++) {
        uint32_t bt = qr_pc_block_max_tf(&w->c, blk);
        uint8_t n1, bn2, bmn = qr_pc_block_min_norm(&w->c, blk);
        if (!qr_pc_block_impacts(&w->c, blk, &n1, &bn2))
            bn2 = bmn;
        bt = bt ? bt : 255; /* 0: no bound stored */
        tf = bt > tf ? bt : tf;
        n2 = bn2 < n2 ? bn2 : n2;
        mn = bmn < mn ? bmn : mn;
    }
    b->stf[i] = tf;
    b->sn2[i] = n2;
    b->smin[i] = mn;
}


/* The bitmap scorer for words kids[0..n) (all dense) and, for AND, an
 * optional filter bitmap; NULL when it does not apply. With a threshold
 * already known (min > -INFINITY), the candidates are narrowed to the rows
 * whose own length lets them beat it in the same pass that combines the
 * bitmaps: in templated logs, once the best rows of the first segments
 * fill the heap, that usually leaves none, and the segment is passed over
 * at the cost of one walk of its bitmaps (its cost is then 0). */
qr_sc *sc_dense_new(int is_and, qr_sc **kids, uint32_t n, uint32_t k, const void *filter,
                    uint32_t rows, double min, qr_arena *a, int *failed, qr_err *e)
{
    *failed = 0;
    if (!sc_dense_words(kids, n, filter ? 1 : 2))
        return NULL;
    bm_sc *b = sc_alloc(a, sizeof *b, &bm_vt, 0);
    size_t nw = ((size_t)rows + 63) / 64;
    uint64_t *cand = qr_arena_alloc(a, nw * 8 + 8);
    term_sc **t = qr_arena_alloc(a, sizeof *t * n);
    if (!b || !cand || !t) {
        *failed = 1;
        return sc_nomem(e);
    }
    for (uint32_t i = 0; i < n; i++)
        t[i] = (term_sc *)kids[i];
    b->is_and = is_and;
    b->n = n;
    b->k = is_and ? n : k;
    b->rows = rows;
    b->t = t;
    b->cand = cand;
    b->norms = t[0]->norms;
    b->m = t[0]->m;
    b->cand_min = -INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        seg_impacts(b, i);
        b->mkind[i] = b->stf[i] < 2 || b->sn2[i] == 255 ? M_NONE : M_NORM;
        if (t[i]->c.ti.has_multi && t[i]->c.ti.multi_n == 0)
            b->mkind[i] = M_NONE;
        memset(b->nmask[i], 0xff, sizeof b->nmask[i]);
        memset(b->mmask[i], 0xff, sizeof b->mmask[i]);
        if (min > -INFINITY && t[i]->c.ti.has_multi && t[i]->field) {
            const unsigned char *nm = qr_invfield_norm_mask(t[i]->field, &t[i]->c.ti, e);
            if (!nm) {
                *failed = 1;
                return NULL;
            }
            for (int q = 0; q < 4; q++) { /* bit n: byte n/8, bit n%8 */
                b->nmask[i][q] = qr_load_u64(nm + 8 * q);
                b->mmask[i][q] = qr_load_u64(nm + 32 + 8 * q);
            }
        }
    }
    if (min > -INFINITY) {
        b->has_min = 1;
        b->min = b->cand_min = min;
        seg_thresholds(b);
        if (b->nslive == 0) {
            /* no row of the segment can beat it: nothing to walk */
            memset(cand, 0, nw * 8);
            return &b->sc; /* cost 0 */
        }
        /* the rows holding a word more than once, where listed, when such
         * rows can compete where rows holding each word once cannot */
        uint32_t need = 0;
        for (uint32_t s = 0; s < b->nslive; s++)
            if (multi_extra(b, b->slive[s]))
                need |= multi_words(b, b->slive[s]);
        for (uint32_t i = 0; i < n; i++) {
            const qr_terminfo *ti = &t[i]->c.ti;
            if (!(need >> i & 1) || b->mkind[i] != M_NORM || !ti->has_multi || !t[i]->field)
                continue;
            uint64_t *mb = qr_arena_alloc(a, nw * 8);
            if (!mb) {
                *failed = 1;
                return sc_nomem(e);
            }
            memset(mb, 0, nw * 8);
            if (qr_invfield_multi_bits(t[i]->field, ti, mb, e) != 0) {
                *failed = 1;
                return NULL;
            }
            b->mkind[i] = M_LIST;
            b->mbits[i] = mb;
        }
        /* templated logs repeat each word in its own templates: a pair of
         * listed words no row repeats both of rules out every combination
         * with both, which would otherwise keep rows up to a far longer
         * norm in play (and no window of rows could be passed over) */
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = i + 1; j < n && b->mkind[i] == M_LIST; j++) {
                if (b->mkind[j] != M_LIST)
                    continue;
                uint64_t both = 0;
                for (size_t w = 0; w < nw && !both; w++)
                    both = b->mbits[i][w] & b->mbits[j][w];
                if (!both)
                    b->apart |= 1u << (i * BM_MAX_WORDS + j);
            }
        if (b->apart) { /* the combinations are fewer: computed again */
            seg_thresholds(b);
            if (b->nslive == 0) {
                memset(cand, 0, nw * 8);
                return &b->sc; /* cost 0 */
            }
        }
    }
    /* with a threshold, windows of rows (the words' postings blocks) whose
     * rows are all too long are passed over without reading a norm */
    uint32_t sblk[BM_MAX_WORDS], wend = 0;
    int dead = 0, have_window = 0;
    for (uint32_t i = 0; i < n; i++)
        sblk[i] = t[i]->sblk;
    for (size_t w = 0; w < nw; w++) {
        if (b->has_min) {
            uint32_t r0 = (uint32_t)(w * 64), r1 = r0 + 63;
            if (!have_window || r0 > wend) {
                dead = window_dead(b, r0, &wend);
                have_window = 1;
            }
            if (dead && r1 <= wend) {
                cand[w] = 0;
                continue;
            }
        }
        uint64_t acc = is_and ? ~0ull : 0, plane[BM_MAX_WORDS + 1] = {0};
        for (uint32_t i = 0; i < n; i++) {
            uint64_t x;
            memcpy(&x, t[i]->bits + w * 8, 8);
            acc = is_and ? acc & x : acc | x;
            for (uint32_t j = b->k; j >= 2 && !is_and; j--) /* plane[j]: rows in >= j words so far */
                plane[j] |= plane[j - 1] & x;
            plane[1] |= x;
        }
        if (!is_and && b->k >= 2)
            acc = plane[b->k];
        if (filter) {
            uint64_t x;
            memcpy(&x, (const unsigned char *)filter + w * 8, 8);
            acc &= x;
        }
        if (acc && b->has_min)
            acc = live_in_word(b, w, acc);
        cand[w] = acc;
    }
    for (uint32_t i = 0; i < n; i++)
        t[i]->sblk = sblk[i];
    b->sc.cost = qr_popcount_words(cand, nw);
    return &b->sc;
}
