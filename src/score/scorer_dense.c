/* scorer_dense.c - AND, OR and at-least-k of dense words (words with row
 * bitmaps) scored from their bitmaps, each candidate bounded by its own
 * length before any postings block is decoded; with a threshold known at
 * build time, the candidates that cannot beat it (scorer_dense_live.c) are
 * dropped while the bitmaps are combined. Also: a frequent word's bitmap
 * made from its postings, and a filter iterator's. */
#include "score/scorer_dense_int.h"

#include <math.h>
#include <string.h>

#include "index/invindex.h"
#include "util/popcount.h"

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
        b->nstar[mask] = dense_competing_norms(b, mask, 0);
    return b->nstar[mask];
}

/* The next candidate from d; with a threshold, words of 64 rows none of
 * whose candidates the segment-wide bounds let compete are passed over. */
static uint32_t bm_next_bit(bm_sc *b, uint32_t d)
{
    if (d >= b->rows)
        return QR_NO_DOC;
    if (b->has_min && !b->svalid)
        dense_seg_thresholds(b);
    size_t w = d >> 6;
    int narrow = b->has_min && b->min > b->cand_min;
    uint64_t x = b->cand[w] & (~0ull << (d & 63));
    if (x && narrow)
        x = dense_live_in_word(b, w, x);
    size_t nw = ((size_t)b->rows + 63) / 64;
    while (!x) {
        if (++w >= nw)
            return QR_NO_DOC;
        x = b->cand[w];
        if (x && narrow)
            x = dense_live_in_word(b, w, x);
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

qr_sc *sc_filter_bits(const void *bits, uint32_t rows, qr_arena *a, qr_err *e)
{
    size_t nw = ((size_t)rows + 63) / 64;
    qr_it *it = qr_it_bitmap(a, bits, rows, qr_popcount_words(bits, nw));
    return it ? sc_const_new(it, 0, a, e) : sc_nomem(e);
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
/* Word i's two norm masks (its rows', its repeated rows'), where stored
 * and `load`; else every norm. 0, or -1 with e set. */
static int load_norm_masks(bm_sc *b, uint32_t i, int load, qr_err *e)
{
    const term_sc *t = b->t[i];
    memset(b->nmask[i], 0xff, sizeof b->nmask[i]);
    memset(b->mmask[i], 0xff, sizeof b->mmask[i]);
    if (!load || !t->c.ti.has_multi || !t->field)
        return 0;
    const unsigned char *nm = qr_invfield_norm_mask(t->field, &t->c.ti, e);
    if (!nm)
        return -1;
    for (int q = 0; q < 4; q++) { /* bit n: byte n/8, bit n%8 */
        b->nmask[i][q] = qr_load_u64(nm + 8 * q);
        b->mmask[i][q] = qr_load_u64(nm + 32 + 8 * q);
    }
    return 0;
}

/* The rows holding a word more than once, decoded from the words' lists
 * where rows of a live subset repeating words can compete where rows
 * holding each once cannot; then the pairs no row repeats both of. 0, or
 * -1 with e set. */
static int load_lists(bm_sc *b, size_t nw, qr_arena *a, qr_err *e)
{
    uint32_t need = 0;
    for (uint32_t s = 0; s < b->nslive; s++)
        if (dense_multi_extra(b, b->slive[s]))
            need |= dense_multi_words(b, b->slive[s]);
    for (uint32_t i = 0; i < b->n; i++) {
        const term_sc *t = b->t[i];
        if (!(need >> i & 1) || b->mkind[i] != M_NORM || !t->c.ti.has_multi || !t->field)
            continue;
        uint64_t *mb = qr_arena_alloc(a, nw * 8);
        if (!mb)
            return sc_nomem(e), -1;
        memset(mb, 0, nw * 8);
        if (qr_invfield_multi_bits(t->field, &t->c.ti, mb, e) != 0)
            return -1;
        b->mkind[i] = M_LIST;
        b->mbits[i] = mb;
    }
    /* templated logs repeat each word in its own templates: a pair of
     * listed words no row repeats both of rules out every combination
     * with both, which would otherwise keep rows up to a far longer norm
     * in play */
    for (uint32_t i = 0; i < b->n; i++)
        for (uint32_t j = i + 1; j < b->n && b->mkind[i] == M_LIST; j++) {
            if (b->mkind[j] != M_LIST)
                continue;
            uint64_t both = 0;
            for (size_t w = 0; w < nw && !both; w++)
                both = b->mbits[i][w] & b->mbits[j][w];
            if (!both)
                b->apart |= 1u << (i * BM_MAX_WORDS + j);
        }
    if (b->apart) /* the combinations are fewer: computed again */
        dense_seg_thresholds(b);
    return 0;
}

/* The candidates: per 64 rows the words' bitmaps combined (AND, OR or at
 * least k, with the filter), and with a threshold only the rows whose
 * length lets them compete; windows of rows (the words' postings blocks)
 * whose rows are all too long are passed over without reading a norm. */
#define PREFETCH_WORDS 8
static void fill_candidates(bm_sc *b, const void *filter, size_t nw)
{
    uint64_t *cand = (uint64_t *)b->cand;
    uint32_t sblk[BM_MAX_WORDS], wend = 0;
    int dead = 0, have_window = 0;
    for (uint32_t i = 0; i < b->n; i++)
        sblk[i] = b->t[i]->sblk;
    /* rows in fewer words than the smallest live subset cannot compete:
     * counted out with the bitmaps, before any norm is read */
    uint32_t kk = b->has_min && b->kmin > b->k ? b->kmin : b->k;
    for (size_t w = 0; w < nw; w++) {
        if (b->has_min) {
            uint32_t r0 = (uint32_t)(w * 64), r1 = r0 + 63;
            if (!have_window || r0 > wend) {
                dead = dense_window_dead(b, r0, &wend);
                have_window = 1;
            }
            if (dead && r1 <= wend) {
                cand[w] = 0;
                continue;
            }
        }
        uint64_t acc = b->is_and ? ~0ull : 0, plane[BM_MAX_WORDS + 1] = {0};
        for (uint32_t i = 0; i < b->n; i++) {
            uint64_t x;
            memcpy(&x, b->t[i]->bits + w * 8, 8);
            acc = b->is_and ? acc & x : acc | x;
            for (uint32_t j = kk; j >= 2 && !b->is_and; j--) /* plane[j]: in >= j words so far */
                plane[j] |= plane[j - 1] & x;
            plane[1] |= x;
        }
        if (!b->is_and && kk >= 2)
            acc = plane[kk];
        if (filter) {
            uint64_t x;
            memcpy(&x, (const unsigned char *)filter + w * 8, 8);
            acc &= x;
        }
        if (acc && b->has_min) {
            /* the norms a few words on: their lines are read at random
             * enough (only words with candidates) that the CPU does not
             * stream them ahead by itself */
            __builtin_prefetch(b->norms + (w + PREFETCH_WORDS) * 64);
            acc = dense_live_in_word(b, w, acc);
        }
        cand[w] = acc;
    }
    for (uint32_t i = 0; i < b->n; i++) /* the shallow cursors, as scoring expects them */
        b->t[i]->sblk = sblk[i];
}

/* The state every dense scorer starts from: the words' segment-wide
 * impacts and norm masks and, with a threshold (min > -INFINITY), the
 * subsets of words that may still compete (slive, kmin). The words' bitmaps
 * are not read. 0, or -1 with e set. */
static int dense_init(bm_sc *b, int is_and, term_sc **t, uint32_t n, uint32_t k, uint32_t rows,
                      double min, qr_err *e)
{
    b->is_and = is_and;
    b->n = n;
    b->k = is_and ? n : k;
    b->rows = rows;
    b->t = t;
    b->norms = t[0]->norms;
    b->m = t[0]->m;
    b->cand_min = -INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        seg_impacts(b, i);
        b->mkind[i] = b->stf[i] < 2 || b->sn2[i] == 255 ? M_NONE : M_NORM;
        if (t[i]->c.ti.has_multi && t[i]->c.ti.multi_n == 0)
            b->mkind[i] = M_NONE;
        if (load_norm_masks(b, i, min > -INFINITY, e) != 0)
            return -1;
    }
    if (min > -INFINITY) {
        b->has_min = 1;
        b->min = b->cand_min = min;
        dense_seg_thresholds(b);
    }
    return 0;
}

int sc_dense_apart(qr_sc **kids, uint32_t n, uint32_t k, uint32_t rows, double min, qr_arena *a,
                   qr_err *e)
{
    if (min == -INFINITY || n < 2 || n > BM_MAX_WORDS || k > 1)
        return 0;
    uint32_t dense = n; /* the one word with a bitmap of its own, if any */
    for (uint32_t i = 0; i < n; i++) {
        const term_sc *t = (const term_sc *)kids[i];
        if (kids[i]->vt != &sc_term_vt || t->bad || !t->field)
            return 0;
        if (t->bits) {
            if (dense < n)
                return 0; /* two bitmaps: only walking them shows what they share */
            dense = i;
        } else if (kids[i]->cost * 128 < rows) {
            return 0; /* rare: as sc_dense_materialize, left to term at a time */
        }
    }
    bm_sc *b = sc_alloc(a, sizeof *b, &bm_vt, 0);
    term_sc **t = qr_arena_alloc(a, sizeof *t * n);
    if (!b || !t)
        return sc_nomem(e), -1;
    for (uint32_t i = 0; i < n; i++)
        t[i] = (term_sc *)kids[i];
    if (dense_init(b, 0, t, n, 1, rows, min, e) != 0)
        return -1;
    if (b->nslive == 0)
        return 1; /* no subset of the words can beat min anywhere here */
    if (b->kmin < 2)
        return 0;
    /* every row that may beat min holds two words or more: read the lists
     * once into one bitmap, and see whether any row is set twice */
    size_t nw = ((size_t)rows + 63) / 64;
    uint64_t *seen = qr_arena_alloc(a, nw * 8 + 8);
    qr_pcursor *c = qr_arena_alloc(a, sizeof *c);
    if (!seen || !c)
        return sc_nomem(e), -1;
    if (dense < n)
        memcpy(seen, t[dense]->bits, nw * 8);
    else
        memset(seen, 0, nw * 8);
    for (uint32_t i = 0; i < n; i++) {
        if (i == dense)
            continue;
        /* a cursor of its own: the word's stays where scoring needs it */
        if (qr_invfield_cursor(t[i]->field, &t[i]->c.ti, c, e) != 0)
            return -1;
        int64_t again = qr_pc_union_bits(c, seen, rows);
        if (again < 0)
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                           t[i]->field->seg->path);
        if (again > 0)
            return 0;
    }
    return 1;
}

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
    b->cand = cand;
    if (dense_init(b, is_and, t, n, k, rows, min, e) != 0) {
        *failed = 1;
        return NULL;
    }
    if (b->has_min) {
        if (b->nslive && load_lists(b, nw, a, e) != 0) {
            *failed = 1;
            return NULL;
        }
        if (b->nslive == 0) { /* no row of the segment can beat it: nothing to walk */
            memset(cand, 0, nw * 8);
            return &b->sc; /* cost 0 */
        }
    }
    fill_candidates(b, filter, nw);
    b->sc.cost = qr_popcount_words(cand, nw);
    return &b->sc;
}
