/* match_int.h - what the parts of one segment's tree compilation share
 * (segsearch.c: the tree, fields and terms; expand.c: multi-term
 * expansion; ranges.c: number, time and unindexed-column ranges): word-wise
 * bitmap algebra, term sets, and the node kinds each part compiles.
 * Include only from src/match/. */
#ifndef QR_MATCH_INT_H
#define QR_MATCH_INT_H

#include <stdint.h>
#include <string.h>

#include "match/segsearch.h"
#include "util/popcount.h"

/* The searching thread's run state (its automata, budget, stop flags). */
static inline qr_qrun *mt_run(qr_segsearch *ss) { return ss->run ? ss->run : &ss->own; }
/* 0, or -1 with e set when the query must stop (checked every few
 * thousand units of work: terms walked, blocks scanned). */
static inline int mt_tick(qr_segsearch *ss, qr_err *e)
{
    qr_qrun *r = mt_run(ss);
    return qr_qctx_tick(r->ctx, &r->ticks, e);
}

/* NULL after setting e to "out of (query) memory" (53200). */
qr_it *mt_nomem(qr_err *e);
/* An empty iterator (or NULL, e set, without memory). */
qr_it *mt_empty(qr_arena *a, qr_err *e);

/* ---- word-wise set operations on bitmaps (dense terms, expansions) ---- */
static inline size_t nwords(uint32_t rows) { return ((size_t)rows + 63) / 64; }

static inline uint64_t *bm_new(qr_arena *a, uint32_t rows)
{
    uint64_t *w = qr_arena_alloc(a, nwords(rows) * 8 + 8);
    if (w)
        memset(w, 0, nwords(rows) * 8 + 8);
    return w;
}

/* Set bits 0 .. rows-1 of a bitmap from bm_new: every row. */
static inline void bm_fill_all(uint64_t *w, uint32_t rows)
{
    memset(w, 0xff, (size_t)rows / 64 * 8);
    if (rows & 63)
        w[rows / 64] = (1ull << (rows & 63)) - 1;
}

/* Whether a union of `docs` postings in a segment of `rows` rows costs
 * less as one bitmap (~2 ns a doc for a word's list, a decoded block at a
 * time, plus a few passes over the bitmap's words, ~rows / 50 ns) than
 * merged in a heap (~13 ns a doc). Measured at 10M rows, one thread:
 * `connection OR request OR conversion OR post` (no dense member) counted
 * in 18.4 ms by a heap, 1.6 ms as a bitmap. */
static inline int bm_union_cheaper(uint64_t docs, uint32_t rows) { return 13 * docs > rows / 50; }

static inline uint64_t load_word(const void *p, size_t i)
{
    uint64_t v;
    memcpy(&v, (const unsigned char *)p + i * 8, 8);
    return v;
}

enum { BM_AND, BM_ANDNOT, BM_OR };
static inline void bm_apply(uint64_t *dst, const void *src, size_t words, int op)
{
    for (size_t i = 0; i < words; i++) {
        uint64_t v = load_word(src, i);
        dst[i] = op == BM_AND ? dst[i] & v : op == BM_ANDNOT ? dst[i] & ~v : dst[i] | v;
    }
}

static inline uint64_t bm_count_words(const uint64_t *w, size_t words)
{
    return qr_popcount_words(w, words);
}

/* Set the bits of every doc of `it` (walks it). */
static inline int bm_add_iter(uint64_t *dst, qr_it *it, uint32_t rows)
{
    int64_t set = qr_it_postings_bits(it, dst, rows); /* a word: a block at a time */
    if (set != -2)
        return set < 0 ? -1 : 0;
    for (uint32_t d = qr_it_next(it); d != QR_NO_DOC; d = qr_it_next(it)) {
        if (d >= rows)
            return -1;
        dst[d >> 6] |= 1ull << (d & 63);
    }
    return qr_it_failed(it) ? -1 : 0;
}

/* ---- term sets: a multi-term node's matched terms ---- */
/* While a count's walk expands a node: the shapes that hold a matched
 * word (mark[j] set), and whether a variable word matched (it may be in
 * any shape: the marks cannot say). */
typedef struct shape_marks {
    const qr_shape_words *sw;
    uint8_t *mark;        /* [k + 1] */
    const uint32_t *rows; /* [k + 1]: each shape's rows (SHAPEROWS) */
    uint64_t marked_rows; /* the rows of the shapes marked so far */
    int variable;
    struct termset *vars; /* the variable matches, or NULL */
} shape_marks;

typedef struct termset {
    qr_qctx *ctx; /* v is charged to it */
    qr_terminfo *v;
    uint32_t n, cap;
    uint64_t total_df;
    uint64_t blocks;    /* dictionary blocks the walk entered */
    shape_marks *marks; /* NULL: none kept */
} termset;
/* Append (0) or -1 out of memory; the caller frees v (qr_qfree with ctx). */
int mt_termset_add(termset *s, const qr_terminfo *ti);
/* The union of a term set's rows in f: an OR of a few lists, else one
 * bitmap. */
qr_it *mt_union_of(qr_segsearch *ss, qr_invfield *f, termset *ts, qr_arena *a, qr_err *e);

/* prefix, regexp, LIKE, fuzzy (expand.c) */
qr_it *mt_multi_term(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e);
/* The count of multi-term node q alone over a segment without deletions
 * whose field has row shapes: the rows of the shapes holding a matched
 * word, no list read, when no matched word is variable; else the union
 * counted. 1 counted (into *count; the plan recorded), 0 not applicable
 * (QUARRY_NO_SHAPES=1 too), -1 with e set. */
int mt_count_multi(qr_segsearch *ss, const qr_query *q, qr_arena *a, uint64_t *count, qr_err *e);
/* Record in the plan that node q was evaluated as `it` (how its kind of
 * iterator is named), or as `how` with est rows when no iterator stands
 * for it (segsearch.c). */
void mt_record(qr_segsearch *ss, const qr_query *q, const qr_it *it, const char *how, uint64_t est);
/* The matches of it (NULL: passed on) that a DELETE has not removed. */
qr_it *mt_live_only(qr_segsearch *ss, qr_it *it, qr_arena *a, qr_err *e);
/* Of the rows a DELETE removed from the segment, how many have a shape
 * marked in mark (the k + 1 shapes of field f's SHAPES block): what a
 * count by shapes takes off (qr_invfield_rows_in_shapes: each deleted
 * row's number read where it lies, its chunk verified). 0 with *n set, or
 * -1 with e set (XX001: a row naming a shape past k). */
int mt_deleted_marked(qr_segsearch *ss, qr_invfield *f, const uint8_t *mark, uint64_t *n,
                      qr_err *e);
/* ranges.c: a term on a column without an index (a scan), a time range, a
 * number range */
qr_it *mt_scan_text(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e);
qr_it *mt_time_range(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e);
qr_it *mt_int_range(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e);

#endif
