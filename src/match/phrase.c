/* phrase.c - the phrase and proximity iterator (qr_it_phrase, iter.h).
 *
 * Two phases: first a row that has every word (doc level), then the words'
 * positions on that row only.
 *  - Doc level: the dense words' row bitmaps are AND-ed into one filter
 *    when the iterator is made, with a rank directory per dense word (set
 *    bits before each 64-row word). The rarest word without a bitmap leads,
 *    the other words without one leapfrog with it (qr_pc_seek, inline inside
 *    a decoded block), and a row the filter lacks costs one bit test; when
 *    every word is dense, the filter itself leads.
 *  - Positions: a dense word's cursor goes to the row by its rank in the
 *    bitmap (qr_pc_at_rank: its docs are never decoded). Every cursor hands
 *    the row's positions out as bytes when all the positions of its block
 *    are one-byte varints (qr_pc_doc_positions: random access, nothing
 *    skipped or copied), else decodes them. When the word with the fewest
 *    positions occurs once, each other word is checked by a walk over its
 *    few bytes; otherwise that word proposes the start positions and every
 *    other word filters them in one merge.
 *  - Counting, with the field's row shapes (index/shapes.h) and no variable
 *    word: over a segment without deletions, the rows of the shapes whose
 *    text holds the phrase (qr_phrase_count_text, no row read); else the rows are
 *    walked and one row's positions checked per shape (count_fused: every
 *    word dense; count_lead: a lead without a bitmap; count_row), a byte
 *    memo answering the others.
 * Invariants: a confirmed row leaves every cursor on it (scorers read the
 * cursors' block-max data); the phrase frequency of that row is in `freq`;
 * each word's positions count up to PHRASE_MAX_POS in a row.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "match/iter.h"

#define PHRASE_MAX_POS QR_PHRASE_MAX_POS
/* What counting knows of a shape: not yet (and shape 0, rows without
 * tokens), no match, a match, or a number past the block's count. */
enum { MEMO_UNKNOWN, MEMO_NO, MEMO_YES, MEMO_BAD };
/* The per-row walk is compiled twice from one source (see choose_walk):
 * its helpers must be inlined into both copies. */
#define HOT static inline __attribute__((always_inline))

typedef struct pword {
    qr_pcursor *c;
    const unsigned char *bits; /* dense word: its row bitmap; else NULL */
    uint32_t *below;           /* dense word: set bits in the words before w */
} pword;

typedef struct {
    qr_it it;
    uint32_t n, within;
    const uint32_t *offs;
    qr_pcursor *cur;             /* n cursors, in phrase order */
    pword *w;                    /* n words, in phrase order */
    uint32_t *lead, nlead;       /* words without a bitmap, rarest first */
    uint32_t ndense;             /* words with one */
    const unsigned char *filter; /* AND of the dense words' bitmaps, or NULL */
    uint32_t rows;
    uint32_t doc; /* current row, once started */
    int started, bad;
    uint32_t *pos[2];                      /* scratch: start positions, a word's positions */
    double freq;                           /* phrase frequency of the current row */
    uint32_t (*from)(void *p, uint32_t d); /* the walk, for this CPU */
    uint64_t (*count)(void *p, uint32_t d); /* the counting walk, likewise */
    uint64_t (*fused)(void *p);             /* count_fused, likewise */
    uint64_t (*lead_count)(void *p);        /* count_lead, likewise */
    int popcnt;                            /* it has the popcnt instruction */
    uint64_t *acc; /* the filter's words, filled on first use (index_dense) */
    /* counting: the rows' shapes (NULL: none), and per number a width's
     * bits can hold a MEMO_ byte (index/shapes.h) */
    const qr_shapes *sh;
    uint8_t *memo;
    const qr_shape_stats *st; /* with sh: its statistics, and the words */
    const char *const *words;
    const size_t *lens;
    /* a scorer's floor (qr_it_phrase_floor): rows whose frequency is at
     * most fmin[norm] are passed over; NULL: none */
    const uint8_t *norms;
    const double *fmin;
} phrase_it;

HOT uint64_t word_at(const unsigned char *bits, uint64_t w)
{
    uint64_t v;
    memcpy(&v, bits + w * 8, 8); /* mmapped words need not be aligned */
    return v;
}

/* First row >= d whose filter bit is set, or QR_NO_DOC. */
HOT uint32_t filter_from(const phrase_it *p, uint64_t d)
{
    while (d < p->rows) {
        uint64_t v = word_at(p->filter, d >> 6) >> (d & 63);
        if (v)
            return d + (uint64_t)__builtin_ctzll(v) < p->rows
                       ? (uint32_t)(d + (uint64_t)__builtin_ctzll(v))
                       : QR_NO_DOC;
        d = (d | 63) + 1;
    }
    return QR_NO_DOC;
}

/* The lead's first row >= t: the rarest word without a bitmap, or the
 * filter when every word has one. */
HOT uint32_t lead_seek(phrase_it *p, uint32_t t)
{
    if (t >= p->rows)
        return QR_NO_DOC;
    return p->nlead ? qr_pc_seek(&p->cur[p->lead[0]], t) : filter_from(p, t);
}

/* From the lead's row d on, the first row that has every word (doc level:
 * the words without a bitmap are moved onto it, the dense ones are not). */
HOT uint32_t align(phrase_it *p, uint32_t d)
{
    for (;;) {
        if (d == QR_NO_DOC)
            return d;
        if (d >= p->rows) { /* a doc id past the segment: corrupt postings */
            p->bad = 1;
            return QR_NO_DOC;
        }
        if (p->nlead && p->filter && !((word_at(p->filter, d >> 6) >> (d & 63)) & 1)) {
            d = lead_seek(p, d + 1);
            continue;
        }
        uint32_t j = 1, kd = d;
        for (; j < p->nlead; j++)
            if ((kd = qr_pc_seek(&p->cur[p->lead[j]], d)) != d)
                break;
        if (j >= p->nlead) /* all agree (j starts past the lead, if any) */
            return d;
        d = lead_seek(p, kd);
    }
}

/* Word w's tf and positions (bytes, or NULL) on row d, which it has; a
 * dense word's cursor first moves there by the row's rank in its bitmap:
 * *rk when given, else from the rank directory. */
HOT const unsigned char *word_positions(const pword *w, uint32_t d, const uint32_t *rk,
                                           uint32_t *tf)
{
    if (w->bits) {
        uint32_t rank;
        if (rk) {
            rank = *rk;
        } else {
            uint64_t v = word_at(w->bits, d >> 6) & ((1ull << (d & 63)) - 1);
            rank = w->below[d >> 6] + (uint32_t)__builtin_popcountll(v);
        }
        if (qr_pc_at_rank(w->c, rank, d) != d) {
            *tf = 0;
            return NULL;
        }
    }
    return qr_pc_doc_positions(w->c, tf);
}

/* A row's positions of one word, read in order: from the block's bytes
 * (first absolute, then gaps) or from a decoded array. */
typedef struct {
    const unsigned char *b;
    const uint32_t *v;
    uint32_t k, m;
    uint64_t p; /* the last position read */
} preader;

static inline int pr_next(preader *r)
{
    if (r->k >= r->m)
        return 0;
    r->p = r->b ? r->p + r->b[r->k] : r->v[r->k];
    r->k++;
    return 1;
}

/* Open word i's positions on the current row, given its tf and bytes from
 * word_positions (NULL: decode them into buf). 0, or -1 when corrupt. */
static int pr_open(phrase_it *p, uint32_t i, const unsigned char *b, uint32_t tf, uint32_t *buf,
                   preader *r)
{
    memset(r, 0, sizeof *r);
    if ((r->b = b)) {
        r->m = tf < PHRASE_MAX_POS ? tf : PHRASE_MAX_POS;
        return 0;
    }
    int64_t m = qr_pc_positions(&p->cur[i], buf, PHRASE_MAX_POS);
    if (m < 0)
        return -1;
    r->v = buf;
    r->m = m > PHRASE_MAX_POS ? PHRASE_MAX_POS : (uint32_t)m;
    return 0;
}

/* Exact phrase (word i at start + offs[i]) on the current row, every word's
 * tf and bytes in tf[], b[], a the word with the fewest positions: its
 * positions propose the starts, each other word filters them in one merge.
 * Returns how many starts match, or -1 when corrupt. */
static int64_t confirm_exact(phrase_it *p, const unsigned char **b, const uint32_t *tf, uint32_t a)
{
    preader r;
    if (pr_open(p, a, b[a], tf[a], p->pos[1], &r) != 0)
        return -1;
    uint32_t *start = p->pos[0], ns = 0;
    while (pr_next(&r))
        if (r.p >= p->offs[a])
            start[ns++] = (uint32_t)(r.p - p->offs[a]);
    for (uint32_t i = 0; i < p->n && ns; i++) {
        if (i == a)
            continue;
        if (pr_open(p, i, b[i], tf[i], p->pos[1], &r) != 0)
            return -1;
        uint32_t keep = 0;
        int have = pr_next(&r);
        for (uint32_t s = 0; s < ns && have; s++) {
            uint64_t want = (uint64_t)start[s] + p->offs[i];
            while (have && r.p < want)
                have = pr_next(&r);
            if (have && r.p == want)
                start[keep++] = start[s];
        }
        ns = keep;
    }
    return ns;
}

/* Slop form (two words): for each occurrence of the first word, the nearest
 * second word 1..within+1 positions later weighs 1/distance. Returns how
 * many occurrences have one (the sum goes to freq), or -1 when corrupt;
 * without need_freq (counting), 1 at the first such occurrence. */
static int64_t confirm_near(phrase_it *p, const unsigned char **b, const uint32_t *tf,
                            int need_freq)
{
    preader ra, rb;
    if (pr_open(p, 0, b[0], tf[0], p->pos[0], &ra) != 0 ||
        pr_open(p, 1, b[1], tf[1], p->pos[1], &rb) != 0)
        return -1;
    uint32_t hits = 0;
    double sloppy = 0;
    int have = pr_next(&rb);
    while (have && pr_next(&ra)) {
        while (have && rb.p <= ra.p)
            have = pr_next(&rb);
        if (have && rb.p <= ra.p + p->within + 1) {
            if (!need_freq)
                return 1;
            sloppy += 1.0 / (double)(rb.p - ra.p);
            hits++;
        }
    }
    p->freq = sloppy;
    return hits;
}

/* The rows the general confirmations handle: 1 match, 0 not, -1 corrupt. */
static int confirm_slow(phrase_it *p, const unsigned char **b, const uint32_t *tf, uint32_t a,
                        int need_freq)
{
    for (uint32_t i = 0; i < p->n; i++)
        if (p->cur[i].corrupt)
            return -1;
    int64_t m = p->within ? confirm_near(p, b, tf, need_freq) : confirm_exact(p, b, tf, a);
    if (m < 0)
        return -1;
    if (!p->within)
        p->freq = (double)m;
    return m > 0;
}

/* The slop form of confirm_near over two words' bytes (the usual case),
 * inline: 1 match (freq set when need_freq), 0 not. Counting needs no
 * frequency: it stops at the first occurrence in reach, and the sum of
 * 1/distance (a division and an add in a dependency chain, ~15% of a
 * proximity count) is never made. */
HOT int near_bytes(phrase_it *p, const unsigned char **b, const uint32_t *tf, int need_freq)
{
    uint32_t ma = tf[0] < PHRASE_MAX_POS ? tf[0] : PHRASE_MAX_POS;
    uint32_t mb = tf[1] < PHRASE_MAX_POS ? tf[1] : PHRASE_MAX_POS;
    uint32_t ka = 0, kb = 1, pa = 0, pb = b[1][0], hits = 0;
    double sloppy = 0;
    while (ka < ma) {
        pa += b[0][ka++];
        while (pb <= pa && kb < mb)
            pb += b[1][kb++];
        if (pb <= pa)
            break; /* no second word after this one */
        if (pb <= pa + p->within + 1) {
            if (!need_freq)
                return 1;
            sloppy += 1.0 / (double)(pb - pa);
            hits++;
        }
    }
    p->freq = sloppy;
    return hits > 0;
}

/* 1 when row d (which has every word) has them at the required positions,
 * 0 when not, -1 when corrupt; the row's phrase frequency in freq when
 * need_freq (a constant: each caller's copy is specialised). The usual case,
 * an exact phrase whose rarest word occurs once in the row and every word's
 * positions are bytes, is one short walk per other word. */
HOT int confirm_at(phrase_it *p, uint32_t d, int need_freq, const uint32_t *rank)
{
    const unsigned char *b[QR_PHRASE_MAX_WORDS];
    uint32_t tf[QR_PHRASE_MAX_WORDS], a = 0, n = p->n;
    const pword *w = p->w;
    int bytes = 1;
    for (uint32_t i = 0; i < n; i++) {
        b[i] = word_positions(&w[i], d, rank ? &rank[i] : NULL, &tf[i]);
        bytes &= b[i] != NULL;
        a = tf[i] < tf[a] ? i : a;
    }
    if (bytes && p->within)
        return near_bytes(p, b, tf, need_freq);
    if (!bytes || p->within || tf[a] != 1)
        return confirm_slow(p, b, tf, a, need_freq);
    const uint32_t *offs = p->offs;
    if (b[a][0] < offs[a])
        return 0;
    uint32_t start = b[a][0] - offs[a];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t want = start + offs[i], pos = 0, k = 0, m = tf[i];
        const unsigned char *bi = b[i];
        m = m < PHRASE_MAX_POS ? m : PHRASE_MAX_POS;
        while (k < m && (pos += bi[k]) < want)
            k++;
        if (k == m || pos != want)
            return 0;
    }
    p->freq = 1;
    return 1;
}

HOT int confirm(phrase_it *p, uint32_t d, int need_freq) { return confirm_at(p, d, need_freq, NULL); }

/* Row d's shape number from the packed numbers ids (wd bits each, mask
 * their low bits; the block pads 3 bytes, so 4 can be loaded at any row):
 * qr_shape_of with the block's fields in the caller's locals, which the
 * memo's byte stores would otherwise make every row load again. */
HOT uint32_t shape_at(const unsigned char *ids, uint32_t wd, uint32_t mask, uint32_t d)
{
    size_t bit = (size_t)d * wd;
    uint32_t v;
    memcpy(&v, ids + (bit >> 3), 4);
    return (v >> (bit & 7)) & mask;
}

/* Row d of shape id (0: none) checked by its positions (rank: its dense
 * words' ranks, or NULL), the answer kept for the shape's other rows: 1,
 * 0, or -1 corrupt. */
HOT int check_shape(phrase_it *p, uint32_t d, uint32_t id, const uint32_t *rank)
{
    int r = confirm_at(p, d, 0, rank);
    if (r >= 0 && id)
        p->memo[id] = r ? MEMO_YES : MEMO_NO;
    return r;
}

/* Counting's check of row d (ranks: its dense words' ranks, or NULL): once
 * per shape, the rows of a shape already checked answering from the memo.
 * Only counting asks: a hit leaves the words' cursors where they were,
 * and nothing reads them after a count. 1, 0, -1 corrupt (a shape number
 * past the block's). */
HOT int count_row(phrase_it *p, uint32_t d, const uint32_t *rank)
{
    uint32_t id = 0;
    if (p->memo) {
        uint8_t m = p->memo[id = qr_shape_of(p->sh, d)];
        if (m == MEMO_YES || m == MEMO_NO)
            return m == MEMO_YES;
        if (m == MEMO_BAD)
            return -1;
    }
    return check_shape(p, d, id, rank);
}

/* From the lead's row d on, the first row where the phrase occurs. */
HOT uint32_t walk_body(phrase_it *p, uint32_t d)
{
    for (;;) {
        d = align(p, d);
        if (d == QR_NO_DOC)
            break;
        int r = confirm(p, d, 1);
        if (r > 0 && (!p->fmin || p->freq > p->fmin[p->norms[d]]))
            break;
        if (r < 0) {
            p->bad = 1;
            d = QR_NO_DOC;
            break;
        }
        d = lead_seek(p, d + 1);
    }
    p->started = 1;
    return p->doc = d;
}

/* Count every row when every word has a bitmap: the words' bitmaps ANDed
 * a 64-row word at a time, and each word's rank of a row from the word's
 * popcount so far, so neither the filter nor the rank directories are
 * built (a pass over every bitmap, and the directories read back per row),
 * and each row goes straight to its positions (the general loop spent a
 * third of a gap phrase's count finding the next row: bounds, the lead's
 * kind, the filter word loaded again per row). */
HOT uint64_t count_fused(phrase_it *p)
{
    uint64_t n = 0;
    uint32_t base[QR_PHRASE_MAX_WORDS] = {0}, nwd = p->n;
    size_t nw = ((size_t)p->rows + 63) / 64;
    uint64_t last = p->rows & 63 ? (1ull << (p->rows & 63)) - 1 : ~0ull;
    /* the shapes in locals: the memo's byte stores may alias anything, and
     * would make every row load them again */
    const unsigned char *ids = p->memo ? p->sh->ids : NULL;
    uint32_t wd = p->memo ? p->sh->width : 0, mask = (1u << wd) - 1;
    uint8_t *memo = p->memo;
    for (size_t w = 0; w < nw; w++) {
        uint64_t x[QR_PHRASE_MAX_WORDS], f = w + 1 == nw ? last : ~0ull;
        if (ids) /* the shape numbers a few words on: read at random enough
                  * (rows with every word) that the CPU does not stream them */
            __builtin_prefetch(ids + (w + 8) * 8 * wd);
        for (uint32_t i = 0; i < nwd; i++)
            f &= x[i] = word_at(p->w[i].bits, w);
        for (; f; f &= f - 1) {
            uint32_t d = (uint32_t)(w * 64) + (uint32_t)__builtin_ctzll(f), id = 0;
            if (ids) { /* a shape checked already: no rank needed */
                uint8_t m = memo[id = shape_at(ids, wd, mask, d)];
                n += m == MEMO_YES;
                if (m == MEMO_YES || m == MEMO_NO)
                    continue;
                if (m == MEMO_BAD) {
                    p->bad = 1;
                    return n;
                }
            }
            uint64_t below = (f & -f) - 1;
            uint32_t rank[QR_PHRASE_MAX_WORDS];
            for (uint32_t i = 0; i < nwd; i++)
                rank[i] = base[i] + (uint32_t)__builtin_popcountll(x[i] & below);
            int r = check_shape(p, d, id, rank);
            if (r < 0) {
                p->bad = 1;
                return n;
            }
            n += (uint64_t)r;
        }
        for (uint32_t i = 0; i < nwd; i++)
            base[i] += (uint32_t)__builtin_popcountll(x[i]);
    }
    return n;
}

/* Count the rows left: the walk's loop without returning to the caller
 * at every row. */
HOT uint64_t count_body(phrase_it *p, uint32_t d)
{
    uint64_t n = 0;
    const qr_pcursor *lc = p->memo && p->nlead ? &p->cur[p->lead[0]] : NULL;
    for (;;) {
        d = align(p, d);
        if (d == QR_NO_DOC)
            break;
        /* the lead's rows a few on: their shape numbers are far apart (a
         * cache miss each), the lead's decoded block says where */
        if (lc && lc->i + 8 < lc->n)
            __builtin_prefetch(p->sh->ids + (size_t)lc->docs[lc->i + 8] * p->sh->width / 8);
        int r = count_row(p, d, NULL);
        if (r < 0) {
            p->bad = 1;
            break;
        }
        n += (uint64_t)r;
        d = lead_seek(p, d + 1);
    }
    p->started = 1;
    p->doc = QR_NO_DOC;
    return n;
}

/* Counting from the first row, with shapes and a lead (a word without a
 * bitmap): at each of the lead's rows the dense words' bits are tested,
 * and their ranks are running popcounts moved on only at rows whose shape
 * is not known yet, so neither the filter nor the rank directories are
 * built (a pass over every dense bitmap: a sixth of such a count once
 * shapes answer most rows). */
HOT uint64_t count_lead(phrase_it *p)
{
    uint64_t n = 0;
    uint32_t nwd = p->n, rw[QR_PHRASE_MAX_WORDS] = {0}, rk[QR_PHRASE_MAX_WORDS] = {0};
    uint32_t rank[QR_PHRASE_MAX_WORDS];
    const qr_pcursor *lc = &p->cur[p->lead[0]];
    const unsigned char *ids = p->sh->ids;
    uint32_t wd = p->sh->width, mask = (1u << wd) - 1;
    uint8_t *memo = p->memo;
    for (uint32_t d = lead_seek(p, 0); d != QR_NO_DOC; d = lead_seek(p, d + 1)) {
        if (d >= p->rows) { /* a doc id past the segment: corrupt postings */
            p->bad = 1;
            return n;
        }
        /* the lead's rows a few on: their shape numbers are far apart (a
         * cache miss each), the lead's decoded block says where */
        if (lc->i + 16 < lc->n)
            __builtin_prefetch(ids + (size_t)lc->docs[lc->i + 16] * wd / 8);
        /* the shape first: its rows all hold the (not variable) words or
         * all lack one, so a known shape answers before any other word's
         * list or bitmap is looked at (each a cache miss at such a row) */
        uint32_t id = shape_at(ids, wd, mask, d);
        uint8_t m = memo[id];
        n += m == MEMO_YES;
        if (m == MEMO_YES || m == MEMO_NO)
            continue;
        if (m == MEMO_BAD) {
            p->bad = 1;
            return n;
        }
        uint32_t i = 1;
        while (i < p->nlead && qr_pc_seek(&p->cur[p->lead[i]], d) == d)
            i++;
        int has = i >= p->nlead;
        for (i = 0; has && i < nwd; i++)
            has = !p->w[i].bits || (word_at(p->w[i].bits, d >> 6) >> (d & 63) & 1);
        if (!has) { /* a word is not on the row, nor on its shape's */
            if (id)
                memo[id] = MEMO_NO;
            continue;
        }
        for (i = 0; i < nwd; i++) {
            const unsigned char *bits = p->w[i].bits;
            if (!bits)
                continue;
            for (; rw[i] < d >> 6; rw[i]++)
                rk[i] += (uint32_t)__builtin_popcountll(word_at(bits, rw[i]));
            rank[i] = rk[i] + (uint32_t)__builtin_popcountll(word_at(bits, d >> 6) &
                                                             ((1ull << (d & 63)) - 1));
        }
        int r = check_shape(p, d, id, rank);
        if (r < 0) {
            p->bad = 1;
            return n;
        }
        n += (uint64_t)r;
    }
    return n;
}

/* The filter and the dense words' rank directories, in one pass over their
 * bitmaps (acc: ceil(rows/64) words). */
HOT void index_body(phrase_it *p, uint64_t *acc)
{
    size_t words = ((size_t)p->rows + 63) / 64;
    uint32_t first = 1;
    for (uint32_t i = 0; i < p->n; i++) {
        const pword *w = &p->w[i];
        if (!w->bits)
            continue;
        uint32_t sum = 0;
        for (size_t k = 0; k < words; k++) {
            uint64_t v = word_at(w->bits, k);
            w->below[k] = sum;
            sum += (uint32_t)__builtin_popcountll(v);
            acc[k] = first ? v : acc[k] & v;
        }
        first = 0;
    }
}

/* Ranks, tf sums and the rank directories are popcounts: the walk and the
 * directories are compiled once for CPUs with the popcnt instruction and
 * once without (where the compiler calls a bit-twiddling routine), chosen
 * once per process; QUARRY_NO_SIMD=1 forces the plain ones, as for the bit
 * unpacker. */
static uint32_t walk_plain(void *p, uint32_t d) { return walk_body(p, d); }
static uint64_t count_plain(void *p, uint32_t d) { return count_body(p, d); }
static uint64_t fused_plain(void *p) { return count_fused(p); }
static uint64_t lead_plain(void *p) { return count_lead(p); }
static void index_plain(phrase_it *p, uint64_t *acc) { index_body(p, acc); }
#if defined(__x86_64__)
__attribute__((target("popcnt"))) static uint32_t walk_popcnt(void *p, uint32_t d)
{
    return walk_body(p, d);
}
__attribute__((target("popcnt"))) static uint64_t count_popcnt(void *p, uint32_t d)
{
    return count_body(p, d);
}
__attribute__((target("popcnt"))) static uint64_t fused_popcnt(void *p) { return count_fused(p); }
__attribute__((target("popcnt"))) static uint64_t lead_popcnt(void *p) { return count_lead(p); }
__attribute__((target("popcnt"))) static void index_popcnt(phrase_it *p, uint64_t *acc)
{
    index_body(p, acc);
}
#endif

static _Atomic(int) cpu_popcnt = -1; /* -1 not looked at yet */

static int use_popcnt(void)
{
    int k = atomic_load_explicit(&cpu_popcnt, memory_order_relaxed);
    if (k < 0) { /* racing threads all find the same */
        const char *no = getenv("QUARRY_NO_SIMD");
        k = 0;
#if defined(__x86_64__)
        __builtin_cpu_init();
        k = !(no && *no && strcmp(no, "0") != 0) && __builtin_cpu_supports("popcnt");
#else
        (void)no;
#endif
        atomic_store_explicit(&cpu_popcnt, k, memory_order_relaxed);
    }
    return k;
}

/* Fill the filter and the rank directories: on the first next / advance,
 * as a scorer may never walk a segment whose block maxima cannot compete. */
static void index_dense(phrase_it *p)
{
#if defined(__x86_64__)
    if (p->popcnt)
        index_popcnt(p, p->acc);
    else
#endif
        index_plain(p, p->acc);
    p->filter = (const unsigned char *)p->acc;
}

static uint32_t phrase_next(qr_it *it)
{
    phrase_it *p = (phrase_it *)it;
    if (p->acc && !p->filter)
        index_dense(p);
    if (p->started && p->doc == QR_NO_DOC)
        return QR_NO_DOC;
    return p->from(p, lead_seek(p, p->started ? p->doc + 1 : 0));
}
static uint32_t phrase_advance(qr_it *it, uint32_t t)
{
    phrase_it *p = (phrase_it *)it;
    if (p->acc && !p->filter)
        index_dense(p);
    if (p->started && p->doc == QR_NO_DOC)
        return QR_NO_DOC;
    return p->from(p, lead_seek(p, t));
}
/* Counting: the same walk, one call for all the rows. */
/* Shape j's text holds the phrase: 1, 0, or -1 when it cannot say (more
 * than PHRASE_MAX_POS tokens: the walk reads only so many positions of a
 * word). Word i at start + offs[i] for every i; with `within`, a second
 * word 1..within+1 tokens after an occurrence of the first, the nearest
 * one (as near_bytes reads positions). */
static int shape_holds(const qr_phrase_shapes *ps, const uint32_t *offs, uint32_t n,
                       uint32_t within, uint32_t j, const unsigned char **tok, uint32_t *len)
{
    /* the rarest-looking word must appear in the text at all: most shapes
     * are out at one memmem */
    const qr_shapes *sh = ps->sh;
    const unsigned char *text = sh->dict + ps->st->at[j];
    size_t tl = ps->st->at[j + 1] - ps->st->at[j];
    uint32_t lw = 0;
    for (uint32_t i = 1; i < n; i++)
        lw = ps->lens[i] > ps->lens[lw] ? i : lw;
    if (ps->lens[lw] && !memmem(text, tl, ps->words[lw], ps->lens[lw]))
        return 0;
    int64_t nt = qr_shape_tokens(sh, ps->st, j, tok, len, PHRASE_MAX_POS);
    if (nt < 0)
        return -1;
#define TOK_IS(t, i) (tok[t] && len[t] == ps->lens[i] && !memcmp(tok[t], ps->words[i], len[t]))
    for (uint32_t s = 0; s < (uint32_t)nt; s++) {
        if (!TOK_IS(s, 0))
            continue;
        if (within) { /* the nearest second word after s */
            for (uint32_t t = s + 1; t < (uint32_t)nt; t++)
                if (TOK_IS(t, 1)) {
                    if (t - s <= within + 1)
                        return 1;
                    break;
                }
            continue;
        }
        uint32_t i = 1;
        while (i < n && s + offs[i] < (uint32_t)nt && TOK_IS(s + offs[i], i))
            i++;
        if (i == n)
            return 1;
    }
#undef TOK_IS
    return 0;
}

int qr_phrase_shape_freq(const qr_phrase_shapes *ps, const uint32_t *offs, uint32_t n,
                         uint32_t within, uint32_t j, const unsigned char **tok, uint32_t *len,
                         double *freq)
{
    int64_t nt = qr_shape_tokens(ps->sh, ps->st, j, tok, len, PHRASE_MAX_POS);
    if (nt < 0)
        return -1;
#define TOK_IS(t, i) (tok[t] && len[t] == ps->lens[i] && !memcmp(tok[t], ps->words[i], ps->lens[i]))
    if (within) { /* as near_bytes and confirm_near sum, occurrence by occurrence */
        double sloppy = 0;
        for (uint32_t s = 0; s < (uint32_t)nt; s++) {
            if (!TOK_IS(s, 0))
                continue;
            uint32_t t = s + 1; /* the nearest second word after it */
            while (t < (uint32_t)nt && !TOK_IS(t, 1))
                t++;
            if (t == (uint32_t)nt)
                break;
            if (t - s <= within + 1)
                sloppy += 1.0 / (double)(t - s);
        }
        *freq = sloppy;
        return 0;
    }
    uint64_t f = 0;
    for (uint32_t s = 0; s < (uint32_t)nt; s++) {
        uint32_t i = 0;
        while (i < n && s + offs[i] < (uint32_t)nt && TOK_IS(s + offs[i], i))
            i++;
        f += i == n;
    }
#undef TOK_IS
    *freq = (double)f;
    return 0;
}

int64_t qr_phrase_count_text(const qr_phrase_shapes *ps, const uint32_t *offs, uint32_t n,
                             uint32_t within, const qr_shape_occ *cand, uint32_t ncand,
                             uint8_t *holds)
{
    const unsigned char *tok[PHRASE_MAX_POS];
    uint32_t len[PHRASE_MAX_POS];
    uint64_t c = 0;
    if (holds)
        memset(holds, 0, (size_t)ps->sh->k + 1);
    int all = ncand == UINT32_MAX;
    for (uint32_t i = 0, j; i < (all ? ps->sh->k : ncand); i++) {
        if ((j = all ? i + 1 : cand[i].shape) > ps->sh->k)
            return -1;
        if (!ps->st->rows[j])
            continue;
        int r = shape_holds(ps, offs, n, within, j, tok, len);
        if (r < 0)
            return -1;
        c += r ? ps->st->rows[j] : 0;
        if (holds)
            holds[j] = (uint8_t)r;
    }
    return (int64_t)c;
}

static uint64_t phrase_count(qr_it *it)
{
    phrase_it *p = (phrase_it *)it;
    if (p->started && p->doc == QR_NO_DOC)
        return 0;
    if (!p->started && p->st) { /* every row, from the shapes' text */
        qr_phrase_shapes ps = {p->sh, p->st, p->words, p->lens};
        int64_t n = qr_phrase_count_text(&ps, p->offs, p->n, p->within, NULL, UINT32_MAX, NULL);
        if (n >= 0) {
            p->started = 1;
            p->doc = QR_NO_DOC;
            return (uint64_t)n;
        }
    }
    if (!p->started && !p->nlead) { /* every word dense, from the first row */
        p->started = 1;
        p->doc = QR_NO_DOC;
        return p->fused(p);
    }
    if (!p->started && p->memo && !p->filter) { /* shapes and a lead, from the first row */
        p->started = 1;
        p->doc = QR_NO_DOC;
        return p->lead_count(p);
    }
    if (p->acc && !p->filter)
        index_dense(p);
    return p->count(p, lead_seek(p, p->started ? p->doc + 1 : 0));
}
static int phrase_failed(qr_it *it)
{
    phrase_it *p = (phrase_it *)it;
    for (uint32_t i = 0; i < p->n; i++)
        if (p->cur[i].corrupt)
            return 1;
    return p->bad;
}
static const qr_it_vt phrase_vt = {phrase_next, phrase_advance, phrase_count, phrase_failed,
                                   "positions"};

double qr_it_phrase_freq(const qr_it *it) { return ((const phrase_it *)it)->freq; }

void qr_it_phrase_floor(qr_it *it, const uint8_t *norms, const double *fmin)
{
    phrase_it *p = (phrase_it *)it;
    p->norms = norms;
    p->fmin = fmin;
}

const qr_pcursor *qr_it_phrase_cursor(const qr_it *it, uint32_t i)
{
    return &((const phrase_it *)it)->cur[i];
}

qr_it *qr_it_phrase(qr_arena *a, const qr_invfield *f, const qr_terminfo *tis, const uint32_t *offs,
                    uint32_t n, uint32_t within, const qr_phrase_shapes *shapes)
{
    const qr_shapes *sh = shapes ? shapes->sh : NULL;
    if (n == 0 || n > QR_PHRASE_MAX_WORDS) /* the parser never makes these */
        return NULL;
    phrase_it *p = qr_arena_alloc(a, sizeof *p);
    if (!p)
        return NULL;
    memset(p, 0, sizeof *p);
    p->it.vt = &phrase_vt;
    p->popcnt = use_popcnt();
    p->from = walk_plain;
    p->count = count_plain;
    p->fused = fused_plain;
    p->lead_count = lead_plain;
#if defined(__x86_64__)
    if (p->popcnt) {
        p->from = walk_popcnt;
        p->count = count_popcnt;
        p->fused = fused_popcnt;
        p->lead_count = lead_popcnt;
    }
#endif
    p->cur = qr_arena_alloc(a, sizeof *p->cur * n);
    p->w = qr_arena_alloc(a, sizeof *p->w * n);
    p->lead = qr_arena_alloc(a, sizeof *p->lead * n);
    p->pos[0] = qr_arena_alloc(a, sizeof(uint32_t) * PHRASE_MAX_POS);
    p->pos[1] = qr_arena_alloc(a, sizeof(uint32_t) * PHRASE_MAX_POS);
    if (!p->cur || !p->w || !p->lead || !p->pos[0] || !p->pos[1])
        return NULL;
    p->n = n;
    p->within = within;
    p->offs = offs;
    p->rows = f->rows;
    size_t words = ((size_t)p->rows + 63) / 64;
    uint64_t cost = UINT64_MAX;
    for (uint32_t i = 0; i < n; i++) {
        pword *w = &p->w[i];
        w->c = &p->cur[i];
        /* a bad location leaves the cursor corrupt and empty */
        qr_invfield_cursor(f, &tis[i], w->c, NULL);
        if ((w->bits = qr_invfield_bitmap_mapped(f, &tis[i]))) {
            p->ndense++;
            if (!(w->below = qr_arena_alloc(a, sizeof(uint32_t) * words)))
                return NULL;
        } else { /* insertion by df: the rarest leads */
            uint32_t k = p->nlead++;
            for (; k > 0 && tis[p->lead[k - 1]].df > tis[i].df; k--)
                p->lead[k] = p->lead[k - 1];
            p->lead[k] = i;
        }
        cost = tis[i].df < cost ? tis[i].df : cost;
    }
    p->it.cost = cost;
    if (sh && sh->k && sh->rows == p->rows && sh->width <= 16) {
        /* one byte per number the width holds: those past k mark the
         * block corrupt where a row names them, with no compare per row */
        size_t m = (size_t)1 << sh->width;
        if (!(p->memo = qr_arena_alloc(a, m)))
            return NULL;
        memset(p->memo, MEMO_UNKNOWN, (size_t)sh->k + 1);
        memset(p->memo + sh->k + 1, MEMO_BAD, m - sh->k - 1);
        p->sh = sh;
        p->st = shapes->st;
        p->words = shapes->words;
        p->lens = shapes->lens;
    }
    if (p->ndense && !(p->acc = qr_arena_alloc(a, words * 8)))
        return NULL;
    return &p->it;
}
