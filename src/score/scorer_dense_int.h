/* scorer_dense_int.h - what the dense scorer's two files share: its state
 * (scorer_dense.c builds and walks it) and which of a segment's rows may
 * still beat the threshold (scorer_dense_live.c: bounds by length, norm
 * masks and repeated-word lists). Internal to src/score/scorer_dense*.c. */
#ifndef QR_SCORER_DENSE_INT_H
#define QR_SCORER_DENSE_INT_H

#include "score/scorer_int.h"

/* ---- dense words: candidates from row bitmaps ----
 * An AND, OR or at-least-k of words that all have row bitmaps (and, for
 * AND, filters that are or cheaply become bitmaps) finds its candidates
 * word by word in the combined bitmap (a bit-sliced counter for k).
 * Before any postings block is decoded, a candidate is bounded with its
 * own length (one byte in the norms) and, per word, the block's max tf and
 * impacts; only rows that could beat the threshold get their tfs read.
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
    term_sc **t;         /* the words, as written */
    const uint64_t *cand;
    const uint8_t *norms;
    const qr_bm25 *m;
    double min, cur;
    int has_min, bad, wvalid;
    uint32_t wend; /* window: every word in one block up to wend */
    uint32_t wtf[BM_MAX_WORDS];
    uint8_t wn2[BM_MAX_WORDS];
    /* per subset: the norms that may compete (a = 0xffff: unknown) */
    nrange nstar[1 << BM_MAX_WORDS];
    /* the same over the whole segment (its words' largest tf, smallest n2):
     * a looser bound, so a word of 64 rows can be passed over before any
     * candidate in it is looked at (sstar valid while svalid) */
    uint32_t stf[BM_MAX_WORDS];
    uint8_t sn2[BM_MAX_WORDS];
    uint8_t smin[BM_MAX_WORDS];      /* the smallest norm of the word's rows in the segment */
    uint64_t nmask[BM_MAX_WORDS][4]; /* the norms its rows have (format 11; else all) */
    uint64_t mmask[BM_MAX_WORDS][4]; /* the norms its rows with tf >= 2 have, likewise */
    nrange sstar[1 << BM_MAX_WORDS];
    uint32_t slive[1 << BM_MAX_WORDS], nslive; /* subsets that may still compete */
    uint32_t kmin;                             /* the fewest words of a subset that may */
    int svalid;
    /* the threshold `cand` was already narrowed by (dense_live_in_word at
     * build time): words need it again only once it rises past it */
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

/* The norms rows matching exactly `mask` may compete at, by the
 * segment-wide (seg) or the window's bounds. */
nrange dense_competing_norms(const bm_sc *b, uint32_t mask, int seg);
/* The subsets that can still compete anywhere in the segment (slive,
 * kmin) against b->min; the per-threshold caches emptied. */
void dense_seg_thresholds(bm_sc *b);
/* The words of mask that may hold a row more than once. */
uint32_t dense_multi_words(const bm_sc *b, uint32_t mask);
/* How many combinations of repeated words let rows of subset mask compete
 * past its tf-1 limit (listed in b->xc[mask]). */
uint32_t dense_multi_extra(bm_sc *b, uint32_t mask);
/* Can no row in [d, *end] (the words' postings blocks at d) compete? Moves
 * the words' shallow cursors. */
int dense_window_dead(bm_sc *b, uint32_t d, uint32_t *end);
/* Of the candidates x in bitmap word w, those that may compete. */
uint64_t dense_live_in_word(bm_sc *b, size_t w, uint64_t x);

#endif
