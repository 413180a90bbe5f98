/* scorer_taat.c - AND, OR and at-least-k of words scored term at a time
 * over windows of rows: each word's postings in the window are walked
 * straight through its decoded blocks, adding its score into an array of
 * accumulators and a match count per row; the rows with enough matches
 * whose sum beats the threshold are then returned in row order.
 *
 * Why: when a query's words are all frequent and their block bounds cannot
 * drop to the threshold (in templated logs the best rows tie at the same
 * score, and every block of a frequent word holds some short row with the
 * word twice), block-max MaxScore must still score nearly every candidate
 * one at a time, and the per-candidate cost (advance calls, bound checks)
 * is most of the time. Walking the same postings a block at a time costs a
 * few nanoseconds each. Windows whose summed block bounds lose are still
 * skipped without decoding. An AND keeps per-word slots instead: its
 * candidates start as the AND of its dense words' row bitmaps, and each
 * word is then probed at the candidates left or walked, rarest first.
 * (Walking only the words whose bounds can win and probing the others at
 * the rows they find, MaxScore's way, was measured slower here: in these
 * queries too many rows survive for the probes to pay.)
 *
 * Scores are added word by word in the order the query writes them,
 * starting from zero, exactly as the one-row-at-a-time scorers add them,
 * so both give bitwise-equal scores (pruned equals exhaustive). */
#include "score/scorer_int.h"
#include "util/popcount.h"

#include <string.h>

#include "index/invfmt.h"

#define TW             4096u /* rows per window */
#define TW_WORDS       (TW / 64)
#define TAAT_MAX_WORDS 16
#define TAB_TF         QR_BM25_TAB_TF /* scores of tf 1..TAB_TF are looked up (bm25.h) */

/* two doubles: SSE2, which every x86-64 has (other targets: the compiler
 * splits it), so no run-time dispatch is needed */
typedef double v2d __attribute__((vector_size(16)));
typedef long long v2l __attribute__((vector_size(16)));

typedef struct {
    qr_sc sc;
    uint32_t n, k, rows; /* k: words a row must match (n for AND) */
    int is_and;
    term_sc **t;       /* the words, as written */
    uint32_t *by_cost; /* AND: the words, rarest first */
    const uint8_t *norms;
    const double **tab; /* per word, the score of tf 1..TAB_TF per norm code (the query's) */
    double *acc;       /* TW accumulators */
    uint8_t *cnt;      /* TW match counts */
    uint64_t *hit;     /* TW bits: rows some word matched */
    double *val;       /* per word, TW contributions (valid where vbits) */
    uint64_t *vbits;   /* per word, TW bits */
    uint32_t *cdoc;    /* the window's winning rows, in order */
    double *cscore;
    uint32_t nc, ci, wend; /* candidates, next one, last row of the window */
    int have_window, has_min, bad;
    double min, cur;
} taat_sc;

/* Move word t's cursor to its first doc >= target (QR_NO_DOC at the end). */
static uint32_t word_seek(taat_sc *s, term_sc *t, uint32_t target)
{
    uint32_t d = term_seek(t, target);
    s->bad |= t->bad;
    return d;
}

static inline double word_score(const taat_sc *s, uint32_t i, uint32_t tf, uint8_t norm)
{
    const term_sc *t = s->t[i];
    return tf <= TAB_TF ? s->tab[i][(tf - 1) * 256 + norm]
                        : qr_bm25_score(t->m, t->w, tf, norm);
}

/* How word_add records a posting: into the shared sums (OR, at least k),
 * setting the row's bit in `hit` (ADD_SUM), or not (ADD_SCAN: the window
 * is scanned whole after), or into the word's own slots for rows still
 * candidates (AND). With `counted`, sums count matches too. */
enum { ADD_SUM, ADD_SCAN, ADD_AND };

/* Walk word i's postings in rows [lo, hi] through its decoded blocks (a
 * block at a time) and record them as `how` says. For ADD_AND, `keep`
 * collects the candidate rows of `cand` it matches. The cursor is left on
 * its first doc > hi. */
static inline __attribute__((always_inline)) void word_add(taat_sc *s, uint32_t i, uint32_t lo,
                                                           uint32_t hi, int how, int counted,
                                                           const uint64_t *cand, uint64_t *keep)
{
    term_sc *t = s->t[i];
    qr_pcursor *c = &t->c;
    const double *tab = s->tab[i];
    const qr_bm25 *m = t->m;
    double w = t->w;
    /* locals: stores into the arrays must not make the compiler reload the
     * struct's fields on every posting */
    double *restrict acc = s->acc;
    uint8_t *restrict cnt = s->cnt;
    uint64_t *restrict hit = s->hit;
    double *restrict val = s->val + (size_t)i * TW;
    const uint8_t *restrict norms = s->norms;
    uint32_t d = word_seek(s, t, lo);
    while (d != QR_NO_DOC && d <= hi) {
        uint32_t j = c->i, n = c->n;
        if (c->ti.kind == TI_INLINE || c->blk >= c->nblocks || j >= n || c->docs[j] != d)
            n = j + 1; /* not a plain decoded block: this doc alone */
        const uint32_t *docs = c->docs, *tfs = c->tfs;
        for (; j < n; j++) {
            uint32_t x = docs[j];
            if (x > hi)
                break;
            /* x < rows: hi < rows (a doc past the rows stays the cursor's,
             * and the next seek reports it) */
            uint32_t tf = tfs[j];
            uint8_t nc = norms[x];
            double v = tf <= TAB_TF ? tab[(tf - 1) * 256 + nc] : qr_bm25_score(m, w, tf, nc);
            x -= lo;
            uint64_t bit = 1ull << (x & 63);
            if (how == ADD_AND) {
                if (cand[x >> 6] & bit) {
                    val[x] = v;
                    keep[x >> 6] |= bit;
                }
                continue;
            }
            acc[x] += v;
            if (counted)
                cnt[x]++;
            if (how == ADD_SUM)
                hit[x >> 6] |= bit;
        }
        if (j < n) { /* the block goes on past the window */
            c->i = j;
            c->doc = d = c->docs[j];
            break;
        }
        c->i = n - 1; /* the block (or the doc) is done: step past it */
        c->doc = c->docs[n - 1];
        d = qr_pc_next(c);
        if (d == QR_NO_DOC) {
            s->bad |= c->corrupt;
        } else if (d >= s->rows) {
            s->bad = 1;
            return;
        }
    }
}

static void add_cand(taat_sc *s, uint32_t doc, double v)
{
    if (s->has_min && v <= s->min)
        return;
    s->cdoc[s->nc] = doc;
    s->cscore[s->nc++] = v;
}

/* Rows of the window set in cand. */
static uint64_t count_bits(const uint64_t *cand, uint32_t nw)
{
    return qr_popcount_words(cand, nw);
}

/* Record word i at the candidate rows `cand` of the window into its own
 * slots (val, vbits): by probing each candidate when they are few beside
 * its postings there, else by walking its postings. */
static void word_at(taat_sc *s, uint32_t i, uint32_t lo, uint32_t span, const uint64_t *cand,
                    uint64_t left)
{
    uint32_t nw = (span + 63) / 64;
    double *val = s->val + (size_t)i * TW;
    uint64_t *vb = s->vbits + (size_t)i * TW_WORDS;
    memset(vb, 0, 8 * (size_t)nw);
    uint64_t in_window = s->t[i]->sc.cost * span / s->rows + 1;
    if (left * 8 >= in_window) {
        word_add(s, i, lo, lo + span - 1, ADD_AND, 0, cand, vb);
        return;
    }
    for (uint32_t wi = 0; wi < nw; wi++)
        for (uint64_t b = cand[wi]; b; b &= b - 1) {
            uint32_t x = wi * 64 + (uint32_t)__builtin_ctzll(b);
            if (word_seek(s, s->t[i], lo + x) == lo + x) {
                val[x] = word_score(s, i, qr_pc_tf(&s->t[i]->c), s->norms[lo + x]);
                vb[wi] |= 1ull << (x & 63);
            }
        }
}

/* AND: the candidates left have every word in its slots; their scores,
 * summed in the written order. */
static void sum_slots(taat_sc *s, uint32_t lo, uint32_t span, const uint64_t *cand)
{
    for (uint32_t wi = 0; wi < (span + 63) / 64 && !s->bad; wi++)
        for (uint64_t b = cand[wi]; b; b &= b - 1) {
            uint32_t x = wi * 64 + (uint32_t)__builtin_ctzll(b);
            double v = 0;
            for (uint32_t i = 0; i < s->n; i++)
                v += s->val[(size_t)i * TW + x];
            add_cand(s, lo + x, v);
        }
}

/* AND: the candidates start as the rows every dense word has (their row
 * bitmaps), or all rows; each word, rarest first, is then probed at the
 * candidates left or walked, keeping the rows it has; the survivors'
 * scores are summed in the written order. */
static void fill_and(taat_sc *s, uint32_t lo, uint32_t span)
{
    uint32_t nw = (span + 63) / 64;
    uint64_t *cand = s->hit;
    memset(cand, 0xff, 8 * (size_t)nw);
    if (span % 64)
        cand[nw - 1] = (1ull << (span % 64)) - 1;
    /* words with row bitmaps narrow the candidates before any postings are
     * read (lo is a multiple of 64: whole bitmap words) */
    int narrowed = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        const unsigned char *bits = s->t[i]->bits;
        if (!bits)
            continue;
        for (uint32_t wi = 0; wi < nw; wi++)
            cand[wi] &= qr_load_u64(bits + ((size_t)lo / 64 + wi) * 8);
        narrowed = 1;
    }
    /* else the rarest word is walked and keeps all it has */
    uint64_t left = narrowed ? count_bits(cand, nw) : UINT64_MAX / 16;
    for (uint32_t r = 0; r < s->n && left && !s->bad; r++) {
        uint32_t i = s->by_cost[r];
        word_at(s, i, lo, span, cand, left);
        memcpy(cand, s->vbits + (size_t)i * TW_WORDS, 8 * (size_t)nw);
        left = count_bits(cand, nw);
    }
    if (left)
        sum_slots(s, lo, span, cand);
}

/* Score the window starting at the first row >= target some word (every
 * word, for AND) can be at. 1: a window was scored (maybe without winners),
 * 0: no rows left. */
static int fill(taat_sc *s, uint32_t target)
{
    uint32_t lo = s->is_and ? target : QR_NO_DOC;
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t d = word_seek(s, s->t[i], target);
        if (s->is_and) {
            if (d == QR_NO_DOC)
                return 0;
            lo = d > lo ? d : lo;
        } else if (d < lo) {
            lo = d;
        }
    }
    if (lo == QR_NO_DOC || s->bad)
        return 0;
    if (s->is_and)
        lo &= ~63u; /* whole words of the row bitmaps (rows before target are
                       behind every cursor: they cannot match again) */
    uint32_t hi = s->rows - 1 - lo < TW - 1 ? s->rows - 1 : lo + TW - 1, span = hi - lo + 1;
    s->nc = s->ci = 0;
    s->wend = hi;
    s->have_window = 1;
    if (s->has_min) {
        double u = 0;
        for (uint32_t i = 0; i < s->n; i++) {
            term_shallow(&s->t[i]->sc, lo);
            u += term_max(&s->t[i]->sc, hi, 0);
        }
        /* u sums the words' bounds in the order a row's score adds their
         * contributions, each bound >= its contribution: rounding is
         * monotonic, so no row here scores above u, exactly */
        if (u <= s->min)
            return 1; /* nothing here can compete: not decoded */
    }
    if (s->is_and) {
        fill_and(s, lo, span);
        return 1;
    }
    /* acc and cnt are zero outside the rows being scored: each scan below
     * clears what it used */
    double min = s->has_min ? s->min : -1; /* scores are >= 0 */
    uint32_t need = s->k > 1 ? s->k : 0;   /* one word is enough (OR): no counts */
    int linear = s->has_min && need && (span & 7) == 0;
    if (!linear) /* the rows touched are found by their bits */
        memset(s->hit, 0, 8 * ((span + 63) / 64));
    for (uint32_t i = 0; i < s->n && !s->bad; i++) {
        if (linear)
            word_add(s, i, lo, hi, ADD_SCAN, 1, NULL, NULL);
        else if (need)
            word_add(s, i, lo, hi, ADD_SUM, 1, NULL, NULL);
        else
            word_add(s, i, lo, hi, ADD_SUM, 0, NULL, NULL);
    }
    double *restrict acc = s->acc;
    uint8_t *restrict cnt = s->cnt;
    uint32_t nc = s->nc;
    if (linear) {
        /* at least k: the rows touched are many and half fail the count (a
         * branch that mispredicts per hit); a row beats min only where some
         * sum does, so eight sums at a time (the compares vectorise, and
         * almost every group is passed over), then the window is cleared
         * whole. An OR's touched rows are fewer: walked by their bits. */
        v2d mv = {min, min};
        for (uint32_t x0 = 0; x0 < span; x0 += 8) {
            v2d a0, a1, a2, a3;
            memcpy(&a0, acc + x0, 16);
            memcpy(&a1, acc + x0 + 2, 16);
            memcpy(&a2, acc + x0 + 4, 16);
            memcpy(&a3, acc + x0 + 6, 16);
            v2l gt = (a0 > mv) | (a1 > mv) | (a2 > mv) | (a3 > mv);
            if (!(gt[0] | gt[1]))
                continue;
            for (uint32_t x = x0; x < x0 + 8; x++)
                if (acc[x] > min && cnt[x] >= need) {
                    s->cdoc[nc] = lo + x;
                    s->cscore[nc++] = acc[x];
                }
        }
        memset(acc, 0, sizeof *acc * span);
        memset(cnt, 0, span);
        s->nc = nc;
        return 1;
    }
    /* Most rows lose once the threshold is set: test the score first (a
     * branch that is nearly always taken the same way), then the count. */
    for (uint32_t wi = 0; wi < (span + 63) / 64; wi++) {
        for (uint64_t b = s->hit[wi]; b; b &= b - 1) {
            uint32_t x = wi * 64 + (uint32_t)__builtin_ctzll(b);
            double v = acc[x];
            uint32_t c = cnt[x];
            acc[x] = 0;
            cnt[x] = 0;
            if (v > min && c >= need) {
                s->cdoc[nc] = lo + x;
                s->cscore[nc++] = v;
            }
        }
    }
    s->nc = nc;
    return 1;
}

static uint32_t taat_advance(qr_sc *sc, uint32_t target)
{
    taat_sc *s = (taat_sc *)sc;
    for (;;) {
        while (s->ci < s->nc) {
            uint32_t i = s->ci++;
            if (s->cdoc[i] >= target && (!s->has_min || s->cscore[i] > s->min)) {
                s->cur = s->cscore[i];
                return s->cdoc[i];
            }
        }
        if (s->have_window && s->wend >= target) {
            if (s->wend >= s->rows - 1)
                return QR_NO_DOC;
            target = s->wend + 1;
        }
        if (s->bad || fill(s, target) == 0)
            return QR_NO_DOC;
    }
}

static double taat_score(qr_sc *sc) { return ((taat_sc *)sc)->cur; }
static uint32_t taat_shallow(qr_sc *sc, uint32_t target)
{
    taat_sc *s = (taat_sc *)sc;
    uint32_t end = END;
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t l = term_shallow(&s->t[i]->sc, target);
        end = l < end ? l : end;
    }
    return end;
}
static double taat_max(qr_sc *sc, uint32_t upto, uint8_t nfloor)
{
    taat_sc *s = (taat_sc *)sc;
    double m = 0;
    for (uint32_t i = 0; i < s->n; i++)
        m += term_max(&s->t[i]->sc, upto, nfloor);
    return m;
}
static uint8_t taat_min_norm(qr_sc *sc, uint32_t upto) { return 0; }
static void taat_set_min(qr_sc *sc, double min)
{
    taat_sc *s = (taat_sc *)sc;
    s->has_min = 1;
    s->min = min;
}
static int taat_failed(qr_sc *sc)
{
    taat_sc *s = (taat_sc *)sc;
    int bad = s->bad;
    for (uint32_t i = 0; i < s->n; i++)
        bad |= s->t[i]->bad | s->t[i]->c.corrupt;
    return bad;
}
static void taat_stats(qr_sc *sc, qr_sc_stats *st)
{
    taat_sc *s = (taat_sc *)sc;
    for (uint32_t i = 0; i < s->n; i++)
        term_stats(&s->t[i]->sc, st);
}
static const qr_sc_vt taat_vt = {taat_advance,  taat_score,   taat_shallow, taat_max,
                                 taat_min_norm, taat_set_min, taat_failed,  taat_stats};

/* Worth it? Term at a time walks every posting of the words it cannot
 * prune, where block-max MaxScore or a leapfrog probes a frequent word
 * only at the rows of the rarer ones. It wins when at least two words are
 * frequent (in a sixteenth of the rows or more): then those probes would
 * touch most of their blocks anyway, one row at a time. It also wins for a
 * disjunction of rare words that together are frequent (k = 1, no word
 * frequent, the sum of their postings a sixteenth of the rows or more): in
 * templated logs the best rows tie, every word's blocks hold a short row,
 * so MaxScore can set none of the words aside and pays its per-row cost
 * (advance, bound checks) on every posting of every word. Measured on the
 * 1M table, `connection OR request OR conversion OR post` (each word in
 * ~2% of the rows, 8% together): 28.4M instructions by MaxScore, 11.4M
 * term at a time (callgrind, top 100, one thread). One frequent word with
 * rare ones (`timeout OR failed`) keeps MaxScore, which walks the rare
 * words and probes the frequent one. */
static int taat_pays(qr_sc **kids, uint32_t n, uint32_t k, uint32_t rows)
{
    uint32_t frequent = 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        frequent += kids[i]->cost * 16 >= rows;
        total += kids[i]->cost;
    }
    return frequent >= 2 || (k == 1 && frequent == 0 && total * 16 >= rows);
}

qr_sc *sc_taat_new(int is_and, qr_sc **kids, uint32_t n, uint32_t k, uint32_t rows, qr_arena *a,
                   int *oom)
{
    *oom = 0;
    if (n < 2 || n > TAAT_MAX_WORDS || rows == 0)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        if (kids[i]->vt != &sc_term_vt)
            return NULL;
    if (!taat_pays(kids, n, is_and ? n : k, rows))
        return NULL;
    taat_sc *s = sc_alloc(a, sizeof *s, &taat_vt, 0);
    term_sc **t = qr_arena_alloc(a, sizeof *t * n);
    const double **tab = qr_arena_alloc(a, sizeof *tab * n);
    double *acc = qr_arena_alloc(a, sizeof *acc * TW);
    double *cscore = qr_arena_alloc(a, sizeof *cscore * TW);
    uint32_t *cdoc = qr_arena_alloc(a, sizeof *cdoc * TW);
    uint8_t *cnt = qr_arena_alloc(a, TW);
    uint64_t *hit = qr_arena_alloc(a, TW / 8);
    double *val = qr_arena_alloc(a, sizeof *val * TW * n);
    uint64_t *vbits = qr_arena_alloc(a, 8 * (size_t)TW_WORDS * n);
    uint32_t *by_cost = qr_arena_alloc(a, sizeof *by_cost * n);
    if (!s || !t || !tab || !acc || !cscore || !cdoc || !cnt || !hit || !val || !vbits ||
        !by_cost) {
        *oom = 1;
        return NULL;
    }
    memset(acc, 0, sizeof *acc * TW);
    memset(cnt, 0, TW);
    for (uint32_t i = 0; i < n; i++) {
        t[i] = (term_sc *)kids[i];
        s->sc.cost += kids[i]->cost;
        tab[i] = t[i]->tab; /* the very expression term_score uses, once per query */
    }
    s->n = n;
    s->k = is_and ? n : k;
    s->is_and = is_and;
    s->rows = rows;
    s->t = t;
    s->norms = t[0]->norms;
    s->tab = tab;
    s->acc = acc;
    s->cnt = cnt;
    s->hit = hit;
    s->cdoc = cdoc;
    s->cscore = cscore;
    s->val = val;
    s->vbits = vbits;
    s->by_cost = by_cost;
    for (uint32_t i = 0; i < n; i++) { /* rarest first (insertion sort: n <= 16) */
        uint32_t j = i;
        for (; j > 0 && kids[by_cost[j - 1]]->cost > kids[i]->cost; j--)
            by_cost[j] = by_cost[j - 1];
        by_cost[j] = i;
    }
    return &s->sc;
}
