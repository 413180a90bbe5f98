/* scorer_dense_live.c - which rows of a segment a dense scorer's words may
 * still put past the threshold, found without reading a posting: per
 * subset of the words (the rows holding exactly those), the norms below
 * which it competes (bounds summed in the order scores add, exact for rows
 * holding each word once), the norms its words' masks say such a row can
 * have, the combinations of repeated words its rows can have (lists), and
 * the 64-row words of candidates checked against all that with SSE2. */
#include "score/scorer_dense_int.h"

#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h> /* SSE2: part of every x86-64 CPU */
#endif

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
nrange dense_competing_norms(const bm_sc *b, uint32_t mask, int seg)
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
void dense_seg_thresholds(bm_sc *b)
{
    memset(b->clim, 0xff, sizeof b->clim);
    memset(b->nxc, 0xff, sizeof b->nxc);
    memset(b->up, 0xff, sizeof b->up);
    b->nslive = 0;
    for (uint32_t m = 1; m < (1u << b->n); m++) {
        uint32_t k = (uint32_t)__builtin_popcount(m);
        if ((b->is_and && m != (1u << b->n) - 1) || k < b->k)
            continue; /* such rows are not candidates */
        b->sstar[m] = dense_competing_norms(b, m, 1);
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
static uint64_t word_multi(const bm_sc *b, uint32_t i, size_t w, uint64_t bits, const uint8_t *nm,
                           uint32_t cnt)
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
uint32_t dense_multi_words(const bm_sc *b, uint32_t mask)
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
uint32_t dense_multi_extra(bm_sc *b, uint32_t mask)
{
    if (b->nxc[mask] != 0xff)
        return b->nxc[mask];
    uint32_t mm = dense_multi_words(b, mask), l0 = combo_limit(b, mask, 0), nx = 0;
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
    uint32_t u = combo_limit(b, mask, 0), nx = dense_multi_extra(b, mask);
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
int dense_window_dead(bm_sc *b, uint32_t d, uint32_t *end)
{
    uint8_t mn[BM_MAX_WORDS];
    uint32_t e = END;
    for (uint32_t i = 0; i < b->n; i++) {
        term_sc *t = b->t[i];
        uint32_t l = term_shallow(&t->sc, d);
        mn[i] = t->nb <= 1        ? t->list_min_norm
                : t->sblk < t->nb ? qr_pc_block_min_norm(&t->c, t->sblk)
                                  : 255;
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
uint64_t dense_live_in_word(bm_sc *b, size_t w, uint64_t x)
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
        uint32_t nx = dense_multi_extra(b, m);
        if (!nx)
            continue;
        uint32_t mm = dense_multi_words(b, m);
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
                live |= rc & nbelow(nm, cnt, combo_limit(b, m, c)) & ~nbelow(nm, cnt, b->xlo[m][j]);
        }
    }
    return live;
}
