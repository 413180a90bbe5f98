/* iter.h - doc-id iterators: the one small interface every filter of a
 * query is evaluated through (Lucene's DocIdSetIterator).
 *
 * An iterator starts before its first doc; next() and advance(target)
 * (target > current doc) return the new doc or QR_NO_DOC. cost is an upper
 * bound of the docs it can return (conjunctions lead with the cheapest).
 * Iterators that read postings record corruption in their `err`; a caller
 * checks qr_it_error() after a walk. All memory comes from the query arena.
 */
#ifndef QR_ITER_H
#define QR_ITER_H

#include <stdint.h>

#include "index/invindex.h"
#include "util/arena.h"

typedef struct qr_it qr_it;

typedef struct qr_it_vt {
    uint32_t (*next)(qr_it *);
    uint32_t (*advance)(qr_it *, uint32_t target);
    /* optional: number of remaining docs, when cheaper than walking */
    uint64_t (*count)(qr_it *);
    /* optional: 1 when the iterator or a child met corrupt data */
    int (*failed)(qr_it *);
    const char *name; /* how it finds its docs, for plans ("postings", "bitmap", ...) */
} qr_it_vt;

struct qr_it {
    const qr_it_vt *vt;
    uint32_t doc; /* current doc; 0 before the first next() (check started) */
    int started;
    uint64_t cost;
};

/* vt functions see `started` as it was before the call. */
static inline uint32_t qr_it_next(qr_it *it)
{
    uint32_t d = it->vt->next(it);
    it->started = 1;
    return it->doc = d;
}
static inline uint32_t qr_it_advance(qr_it *it, uint32_t target)
{
    uint32_t d = it->vt->advance(it, target);
    it->started = 1;
    return it->doc = d;
}

/* Count all remaining docs (uses vt->count when there is one). */
uint64_t qr_it_count(qr_it *it);
int qr_it_failed(qr_it *it);

/* Constructors. `a` is the query arena; they return NULL when it is full. */
qr_it *qr_it_empty(qr_arena *a);
qr_it *qr_it_range(qr_arena *a, uint32_t lo, uint32_t hi); /* docs [lo, hi) */
qr_it *qr_it_postings(qr_arena *a, const qr_invfield *f, const qr_terminfo *ti);
qr_it *qr_it_and(qr_arena *a, qr_it **kids, uint32_t n);
qr_it *qr_it_or(qr_arena *a, qr_it **kids, uint32_t n);
/* Docs matched by at least k of the n children (1 <= k <= n). */
qr_it *qr_it_minmatch(qr_arena *a, qr_it **kids, uint32_t n, uint32_t k);
/* Docs of `inc` that `exc` does not have. */
qr_it *qr_it_andnot(qr_arena *a, qr_it *inc, qr_it *exc);
/* A set as a bitmap of `rows` bits: ceil(rows/64) little-endian 64-bit
 * words at `bits` (any alignment; bits past `rows` must be 0). `count` is
 * the number of bits set, exactly: an untouched bitmap's count returns it. */
qr_it *qr_it_bitmap(qr_arena *a, const void *bits, uint32_t rows, uint64_t count);
/* 1 with its bounds for an untouched row-range iterator, else 0. */
int qr_it_range_bounds(const qr_it *it, uint32_t *lo, uint32_t *hi);
/* The words of an untouched bitmap iterator, or NULL for other iterators. */
const void *qr_it_bitmap_bits(const qr_it *it);
/* 1 for an untouched postings iterator (one word's list). */
int qr_it_is_postings(const qr_it *it);
/* The docs of an untouched postings iterator `post` (which it takes over)
 * whose bit is set in `bits` (as for qr_it_bitmap; kept by the caller):
 * a word's list walked with a bit test per doc, rather than leapfrogged
 * with the bitmap. NULL when post is not such an iterator, or out of
 * memory. */
qr_it *qr_it_postings_in(qr_arena *a, qr_it *post, const void *bits, uint32_t rows);
/* For an untouched postings iterator: set its docs' bits in `bits` (see
 * qr_pc_set_bits; -1 when corrupt) and leave it exhausted. -2 for other
 * iterators (nothing done). */
int64_t qr_it_postings_bits(qr_it *it, uint64_t *bits, uint32_t rows);
/* Phrase over full-text postings (phrase.c). Term i must sit at position
 * p0 + offs[i] (offs[0] = 0, increasing): exact phrase and "exactly N
 * words between". With within > 0 (two terms only): the second term
 * follows the first at a distance of 1..within+1 positions (slop form).
 * At most QR_PHRASE_MAX_WORDS terms (the parser's limit). Dense terms'
 * bitmaps are used when f has them mapped (qr_segsearch_phrase_words).
 * shapes: the field's row shapes when no word of the phrase is variable
 * (see qr_segsearch_phrase_words), else NULL: a count from the first row
 * then adds up the rows of the shapes whose text holds the phrase, and
 * otherwise checks the positions of one row per shape (index/shapes.h). */
#define QR_PHRASE_MAX_WORDS 64
/* The positions of a word a phrase walk reads in one row: a shape of more
 * tokens cannot answer for its rows (qr_phrase_count_text, ...freq). */
#define QR_PHRASE_MAX_POS 4096
/* What a phrase count may use of the field's row shapes (all NULL: none):
 * the shapes, their statistics and the phrase's words as indexed. */
typedef struct qr_phrase_shapes {
    const qr_shapes *sh;
    const qr_shape_stats *st;
    const char *const *words;
    const size_t *lens;
} qr_phrase_shapes;
qr_it *qr_it_phrase(qr_arena *a, const qr_invfield *f, const qr_terminfo *tis, const uint32_t *offs,
                    uint32_t n, uint32_t within, const qr_phrase_shapes *shapes);
/* The rows of a segment that hold the phrase (offs, n, within as for
 * qr_it_phrase), deleted ones included, from the shapes' text alone: the
 * sum of the rows of the shapes whose text holds it (ps: all set, no word
 * variable). No list, bitmap or row number is read. -1 when some shape
 * cannot say (more tokens than a walk reads positions of); then the rows
 * are walked. cand[0..ncand) (ncand UINT32_MAX: every shape): the only
 * shapes that can hold it (those holding every word, qr_shape_words_all),
 * each at most k.
 * holds (k + 1 bytes, or NULL): set to whether each shape holds it, for
 * taking deleted rows off by their shapes. */
int64_t qr_phrase_count_text(const qr_phrase_shapes *ps, const uint32_t *offs, uint32_t n,
                             uint32_t within, const qr_shape_occ *cand, uint32_t ncand,
                             uint8_t *holds);
/* The phrase frequency the iterator gives each row of shape j (1..k),
 * from the shape's text, into *freq: an exact phrase's start positions
 * where every word sits at its offset; the slop form's sum of 1/d over
 * the first word's occurrences, d the distance to the nearest second word
 * after it when within reach, added in the same order. ps as above (words
 * none of them variable), tok/len scratch of QR_PHRASE_MAX_POS. 0, or -1
 * when the shape has more tokens than that. */
int qr_phrase_shape_freq(const qr_phrase_shapes *ps, const uint32_t *offs, uint32_t n,
                         uint32_t within, uint32_t j, const unsigned char **tok, uint32_t *len,
                         double *freq);
/* On the current doc of a phrase iterator: the phrase frequency (exact
 * phrases: start positions that match; slop form: sum of 1/d over the first
 * word's occurrences, d the distance to the nearest second word in range),
 * and word i's postings cursor (phrase order; for block-max data). */
double qr_it_phrase_freq(const qr_it *it);
/* For a scorer: from now on the phrase iterator passes over the rows it
 * would return whose phrase frequency is <= fmin[norms[row]] (a table the
 * caller keeps and may change between calls; NULL norms/fmin: no floor).
 * A top-k scorer sets it to what a row needs to beat its threshold, so the
 * rows that lose never leave the walk. */
void qr_it_phrase_floor(qr_it *it, const uint8_t *norms, const double *fmin);
const qr_pcursor *qr_it_phrase_cursor(const qr_it *it, uint32_t i);

#endif
