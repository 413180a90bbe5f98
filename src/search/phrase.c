/* phrase.c - the phrase and proximity iterator (qr_it_phrase, iter.h).
 *
 * Two phases: first a row that has every word (doc level), then the words'
 * positions on that row only.
 *  - Doc level: the dense words' row bitmaps are AND-ed into one filter
 *    when the iterator is made. The rarest word without a bitmap leads, the
 *    other words without one leapfrog with it, a row the filter lacks costs
 *    one bit test, and the dense words' cursors move only to rows that pass
 *    all that (when every word is dense, the filter itself leads). Cursors
 *    are stepped with qr_pc_seek, inline inside a decoded block.
 *  - Positions: a cursor hands a row's positions out as bytes when all the
 *    positions of its block are one-byte varints (qr_pc_pos_bytes: random
 *    access, nothing skipped or copied), else decodes them. The word with
 *    the fewest positions in the row proposes the start positions and every
 *    other word filters them in one merge.
 * Invariants: a confirmed row leaves every cursor on it (scorers read the
 * cursors' block-max data); the phrase frequency of that row is in `freq`;
 * each word's positions count up to PHRASE_MAX_POS in a row.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "search/iter.h"

#define PHRASE_MAX_POS 4096
/* The per-row walk is compiled twice from one source (see phrase_from):
 * its helpers must be inlined into both copies. */
#define HOT static inline __attribute__((always_inline))

typedef struct {
    qr_it it;
    uint32_t n, within;
    const uint32_t *offs;
    qr_pcursor *cur;             /* n cursors, in phrase order */
    uint32_t *lead, nlead;       /* words without a bitmap, rarest first */
    uint32_t *dense, ndense;     /* words with one */
    const unsigned char **bits;  /* per dense word: its row bitmap */
    uint32_t **below;            /* per dense word: set bits in the words before w */
    const unsigned char *filter; /* AND of the dense words' bitmaps, or NULL */
    uint32_t rows;
    uint32_t doc; /* current row, once started */
    int started, bad;
    uint32_t *pos[2];                      /* scratch: start positions, a word's positions */
    double freq;                           /* phrase frequency of the current row */
    uint32_t (*from)(void *p, uint32_t d); /* phrase_from, for this CPU */
} phrase_it;

HOT uint64_t word_at(const unsigned char *bits, uint64_t w)
{
    uint64_t v;
    memcpy(&v, bits + w * 8, 8); /* mmapped words need not be aligned */
    return v;
}

/* First row >= d whose filter bit is set, or QR_NO_DOC. */
static uint32_t filter_from(const phrase_it *p, uint64_t d)
{
    while (d < p->rows) {
        uint64_t w = word_at(p->filter, d >> 6) >> (d & 63);
        if (w)
            return d + (uint64_t)__builtin_ctzll(w) < p->rows
                       ? (uint32_t)(d + (uint64_t)__builtin_ctzll(w))
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

/* From the lead's row d on, the first row that has every word, with every
 * cursor moved onto it (doc level only). */
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
        if (j < p->nlead) {
            d = lead_seek(p, kd);
            continue;
        }
        /* the bitmaps say these words are on row d, and which of their
         * postings it is: the set bits below it */
        for (j = 0; j < p->ndense; j++) {
            uint64_t w = word_at(p->bits[j], d >> 6) & ((1ull << (d & 63)) - 1);
            uint32_t rank = p->below[j][d >> 6] + (uint32_t)__builtin_popcountll(w);
            if (qr_pc_at_rank(&p->cur[p->dense[j]], rank, d) != d) {
                p->bad = 1;
                return QR_NO_DOC;
            }
        }
        return d;
    }
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
 * qr_pc_doc_positions (NULL: decode them into buf). 0, or -1 when corrupt. */
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
 * tf and bytes in tf[], b[]: the start positions proposed by the word with
 * the fewest positions, filtered by each other word in one merge. Returns
 * how many starts match, or -1 when corrupt. */
static int64_t confirm_exact(phrase_it *p, const unsigned char **b, const uint32_t *tf)
{
    uint32_t a = 0;
    for (uint32_t i = 1; i < p->n; i++)
        if (tf[i] < tf[a])
            a = i;
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
 * many occurrences have one (the sum goes to freq), or -1 when corrupt. */
static int64_t confirm_near(phrase_it *p, const unsigned char **b, const uint32_t *tf)
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
            sloppy += 1.0 / (double)(rb.p - ra.p);
            hits++;
        }
    }
    p->freq = sloppy;
    return hits;
}

/* 1 when the current row has the words at the required positions. The
 * common case, an exact phrase whose rarest word occurs once in the row and
 * every word's positions are bytes, is one walk per other word over a few
 * bytes. */
HOT int confirm(phrase_it *p)
{
    const unsigned char *b[QR_PHRASE_MAX_WORDS];
    uint32_t tf[QR_PHRASE_MAX_WORDS], a = 0;
    b[0] = qr_pc_doc_positions(&p->cur[0], &tf[0]); /* n >= 1 */
    int bytes = b[0] != NULL;
    for (uint32_t i = 1; i < p->n; i++) {
        b[i] = qr_pc_doc_positions(&p->cur[i], &tf[i]);
        bytes &= b[i] != NULL;
        a = tf[i] < tf[a] ? i : a;
    }
    if (bytes && !p->within && tf[a] == 1) {
        if (b[a][0] < p->offs[a])
            return 0;
        uint32_t start = b[a][0] - p->offs[a];
        for (uint32_t i = 0; i < p->n; i++) {
            uint32_t want = start + p->offs[i], pos = 0, k = 0, m = tf[i];
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
    for (uint32_t i = 0; i < p->n; i++)
        if (p->cur[i].corrupt)
            return p->bad = 1, 0;
    int64_t m = p->within ? confirm_near(p, b, tf) : confirm_exact(p, b, tf);
    if (m < 0) {
        p->bad = 1;
        return 0;
    }
    if (!p->within)
        p->freq = (double)m;
    return m > 0;
}

/* From the lead's row d on, the first row where the phrase occurs. */
HOT uint32_t phrase_from_body(phrase_it *p, uint32_t d)
{
    for (;;) {
        d = align(p, d);
        if (d == QR_NO_DOC || confirm(p))
            break;
        if (p->bad) {
            d = QR_NO_DOC;
            break;
        }
        d = lead_seek(p, d + 1);
    }
    p->started = 1;
    return p->doc = d;
}

/* Ranks, tf sums and the filter are popcounts: the walk is compiled once for
 * CPUs with the popcnt instruction and once without (where the compiler
 * calls a bit-twiddling routine), chosen once per process; QUARRY_NO_SIMD=1
 * forces the plain one, as for the bit unpacker. */
static uint32_t phrase_from_plain(void *p, uint32_t d) { return phrase_from_body(p, d); }
#if defined(__x86_64__)
__attribute__((target("popcnt"))) static uint32_t phrase_from_popcnt(void *p, uint32_t d)
{
    return phrase_from_body(p, d);
}
#endif

static _Atomic(int) walk_kind = -1; /* -1 not chosen yet, 0 plain, 1 popcnt */

static uint32_t (*choose_walk(void))(void *, uint32_t)
{
    int k = atomic_load_explicit(&walk_kind, memory_order_relaxed);
    if (k < 0) { /* racing threads all choose the same */
        const char *no = getenv("QUARRY_NO_SIMD");
        k = 0;
#if defined(__x86_64__)
        __builtin_cpu_init();
        k = !(no && *no && strcmp(no, "0") != 0) && __builtin_cpu_supports("popcnt");
#else
        (void)no;
#endif
        atomic_store_explicit(&walk_kind, k, memory_order_relaxed);
    }
#if defined(__x86_64__)
    if (k)
        return phrase_from_popcnt;
#endif
    return phrase_from_plain;
}

static uint32_t phrase_next(qr_it *it)
{
    phrase_it *p = (phrase_it *)it;
    if (p->started && p->doc == QR_NO_DOC)
        return QR_NO_DOC;
    return p->from(p, lead_seek(p, p->started ? p->doc + 1 : 0));
}
static uint32_t phrase_advance(qr_it *it, uint32_t t)
{
    phrase_it *p = (phrase_it *)it;
    if (p->started && p->doc == QR_NO_DOC)
        return QR_NO_DOC;
    return p->from(p, lead_seek(p, t));
}
/* Counting: the same walk without a call through the vtable per row. */
static uint64_t phrase_count(qr_it *it)
{
    uint64_t n = 0;
    while (phrase_next(it) != QR_NO_DOC)
        n++;
    return n;
}
static int phrase_failed(qr_it *it)
{
    phrase_it *p = (phrase_it *)it;
    for (uint32_t i = 0; i < p->n; i++)
        if (p->cur[i].corrupt)
            return 1;
    return p->bad;
}
static const qr_it_vt phrase_vt = {phrase_next, phrase_advance, phrase_count, phrase_failed};

double qr_it_phrase_freq(const qr_it *it) { return ((const phrase_it *)it)->freq; }

const qr_pcursor *qr_it_phrase_cursor(const qr_it *it, uint32_t i)
{
    return &((const phrase_it *)it)->cur[i];
}

qr_it *qr_it_phrase(qr_arena *a, const qr_invfield *f, const qr_terminfo *tis, const uint32_t *offs,
                    uint32_t n, uint32_t within)
{
    phrase_it *p = qr_arena_alloc(a, sizeof *p);
    if (!p)
        return NULL;
    memset(p, 0, sizeof *p);
    p->it.vt = &phrase_vt;
    p->from = choose_walk();
    if (n == 0 || n > QR_PHRASE_MAX_WORDS) /* the parser never makes these */
        return NULL;
    p->cur = qr_arena_alloc(a, sizeof *p->cur * n);
    p->lead = qr_arena_alloc(a, sizeof *p->lead * n);
    p->dense = qr_arena_alloc(a, sizeof *p->dense * n);
    p->pos[0] = qr_arena_alloc(a, sizeof(uint32_t) * PHRASE_MAX_POS);
    p->pos[1] = qr_arena_alloc(a, sizeof(uint32_t) * PHRASE_MAX_POS);
    const unsigned char **bits = qr_arena_alloc(a, sizeof *bits * n);
    p->bits = qr_arena_alloc(a, sizeof *p->bits * n);
    p->below = qr_arena_alloc(a, sizeof *p->below * n);
    if (!p->cur || !p->lead || !p->dense || !p->pos[0] || !p->pos[1] || !bits || !p->bits ||
        !p->below)
        return NULL;
    p->n = n;
    p->within = within;
    p->offs = offs;
    p->rows = f->rows;
    uint64_t cost = UINT64_MAX;
    for (uint32_t i = 0; i < n; i++) {
        /* a bad location leaves the cursor corrupt and empty */
        qr_invfield_cursor(f, &tis[i], &p->cur[i], NULL);
        bits[i] = qr_invfield_bitmap_mapped(f, &tis[i]);
        if (bits[i]) {
            p->dense[p->ndense++] = i;
        } else { /* insertion by df: the rarest leads */
            uint32_t k = p->nlead++;
            for (; k > 0 && tis[p->lead[k - 1]].df > tis[i].df; k--)
                p->lead[k] = p->lead[k - 1];
            p->lead[k] = i;
        }
        cost = tis[i].df < cost ? tis[i].df : cost;
    }
    p->it.cost = cost;
    /* the filter, and per dense word its rank directory (one pass) */
    size_t words = ((size_t)p->rows + 63) / 64;
    uint64_t *acc = p->ndense ? qr_arena_alloc(a, words * 8) : NULL;
    if (p->ndense && !acc)
        return NULL;
    for (uint32_t j = 0; j < p->ndense; j++) {
        p->bits[j] = bits[p->dense[j]];
        if (!(p->below[j] = qr_arena_alloc(a, sizeof(uint32_t) * words)))
            return NULL;
        uint32_t sum = 0;
        for (size_t w = 0; w < words; w++) {
            uint64_t v = word_at(p->bits[j], w);
            p->below[j][w] = sum;
            sum += (uint32_t)__builtin_popcountll(v);
            acc[w] = j ? acc[w] & v : v;
        }
    }
    p->filter = (const unsigned char *)acc;
    return &p->it;
}
