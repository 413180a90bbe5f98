/* scorer_int.h - what the scorer files share: helpers, the constant and
 * word scorers' layout, and the constructors the builder (scorer.c) calls.
 * Internal to src/score/scorer*.c; the contract is scorer.h. */
#ifndef QR_SCORER_INT_H
#define QR_SCORER_INT_H

#include "score/scorer.h"

#define END (QR_NO_DOC - 1) /* the last possible window end */
/* Relative slack where partial sums are compared in another order than
 * scores add (MaxScore), far above the rounding of a few dozen additions. */
#define SLACK (1.0 + 1e-12)

static inline uint8_t umax8(uint8_t a, uint8_t b) { return a > b ? a : b; }

/* How q counts towards a row's score: not at all (filters, and NOT
 * clauses wherever they are), a constant 1 (multi-term), or by BM25. */
enum { SC_FILTER, SC_CONST, SC_SCORED };
int sc_kind_of(const qr_query *q);

qr_sc *sc_nomem(qr_err *e);
void *sc_alloc(qr_arena *a, size_t size, const qr_sc_vt *vt, uint64_t cost);
uint32_t sc_shallow_end(qr_sc *s, uint32_t target);
void sc_no_stats(qr_sc *s, qr_sc_stats *st);
/* First doc >= target of a plain iterator (started or not). */
uint32_t sc_it_seek(qr_it *it, uint32_t target);
int sc_kids_failed(qr_sc **kids, uint32_t n);
void sc_kids_stats(qr_sc **kids, uint32_t n, qr_sc_stats *st);

/* A filter with a constant score c (0 for filters, 1 for multi-term). */
typedef struct {
    qr_sc sc;
    qr_it *it;
    double c;
    int done; /* set_min at or above c */
} const_sc;
qr_sc *sc_const_new(qr_it *it, double c, qr_arena *a, qr_err *e);

/* One word of a full-text field. */
typedef struct {
    qr_sc sc;
    const qr_bm25 *m;
    double w;
    const double *tab;       /* the query's scores of tf 1..QR_BM25_TAB_TF per norm (bm25.h) */
    const uint8_t *norms;
    uint32_t rows, nb, sblk; /* nb > 1: block-max data; sblk: shallow block */
    int blocks, bad, has_min, cstarted;
    const unsigned char *bits; /* dense words: the row bitmap, else NULL */
    qr_invfield *field;      /* where the word is (its list of rows with tf >= 2) */
    double min, exact_max;   /* exact_max: the best score of a list without block data */
    uint32_t list_tf;        /* lists without block data: their impacts */
    uint8_t list_n1, list_n2, list_min_norm;
    qr_pcursor c;            /* last: large, never copied */
} term_sc;
extern const qr_sc_vt sc_term_vt;
uint32_t term_shallow(qr_sc *s, uint32_t target);
/* Move the word's cursor to its first doc >= target, block bounds aside:
 * QR_NO_DOC at the end or when the list is bad (t->bad set). */
uint32_t term_seek(term_sc *t, uint32_t target);
double term_max(qr_sc *s, uint32_t upto, uint8_t nfloor);
uint8_t term_min_norm(qr_sc *s, uint32_t upto);
void term_stats(qr_sc *s, qr_sc_stats *st);
/* Bit j set where p[j] < n, for j < cnt <= 64 and n in 0..256: the rows
 * of a 64-row word short enough to compete (SSE2 for whole words, part of
 * every x86-64 CPU; the scalar twin the tests compare it with). */
uint64_t sc_norms_below(const uint8_t *p, uint32_t cnt, uint32_t n);
uint64_t sc_norms_below_scalar(const uint8_t *p, uint32_t cnt, uint32_t n);
qr_sc *sc_term_new(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double w,
                   const double *tab, qr_arena *a, qr_err *e);
qr_sc *sc_phrase_new(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double w,
                     qr_arena *a, qr_err *e);

/* Conjunction of kids[0..n) (n >= 2; scores add in this order). */
qr_sc *sc_and_new(qr_sc **kids, uint32_t n, qr_arena *a, qr_err *e);
/* At least k of kids[0..n) (k = 1: disjunction). */
qr_sc *sc_or_new(qr_sc **kids, uint32_t n, uint32_t k, qr_arena *a, qr_err *e);

/* Term at a time (scorer_taat.c): AND (k = n), OR (k = 1) or at-least-k of
 * 2..16 words kids[0..n) over windows of rows; NULL when some kid is not a
 * word or it would not pay (*oom on failure). */
qr_sc *sc_taat_new(int is_and, qr_sc **kids, uint32_t n, uint32_t k, uint32_t rows,
                   qr_arena *a, int *oom);

/* Dense words (scorer_dense.c): min..4 word scorers that all have row
 * bitmaps? */
int sc_dense_words(qr_sc **kids, uint32_t n, uint32_t min);
/* Words kids[0..n) (2..4 of them) that are dense, or frequent enough (in
 * 1/128 of the rows) that their postings become row bitmaps a block at a
 * time: with a threshold, the dense scorer then drops most rows by their
 * length before any score is computed (at 10M rows: `connection OR
 * request OR conversion OR post`, each word in ~2% of the rows, 3.1 ->
 * 2.7 ms against term at a time; `failed OR cache` 13.5 -> 3.2 ms). 1 when
 * every word now has a bitmap, 0 when it does not apply, -1 with e set
 * (out of memory, corrupt postings). */
int sc_dense_materialize(qr_sc **kids, uint32_t n, uint32_t rows, qr_arena *a, qr_err *e);
/* With the threshold min known, is it shown, before any bitmap is built,
 * that no row of the segment can beat it? For an OR of 2..4 words kids (k
 * 1; at most one of them dense, the others frequent enough for
 * sc_dense_materialize): when no subset of the words can, or when only
 * rows holding two words or more could and the lists, read once into one
 * bitmap, share no row. In templated logs the words of an OR usually come
 * from different templates, and the segments after the first ones are
 * passed over at the cost of decoding their lists once (at 100M rows,
 * `connection OR request OR conversion OR post` built four bitmaps and
 * walked them in each of 94 segments). 1 shown, 0 not, -1 with e set (out
 * of memory, corrupt postings). */
int sc_dense_apart(qr_sc **kids, uint32_t n, uint32_t k, uint32_t rows, double min, qr_arena *a,
                   qr_err *e);
/* The docs of a filter iterator as a bitmap (walks it). */
const void *sc_it_to_bitmap(qr_it *it, uint32_t rows, const char *path, qr_arena *a, qr_err *e);
/* A filter clause (scoring 0) over the rows of a bitmap sc_it_to_bitmap
 * made: what stands in for the filter whose iterator that walked. */
qr_sc *sc_filter_bits(const void *bits, uint32_t rows, qr_arena *a, qr_err *e);
/* AND (is_and), OR or at-least-k of dense words kids[0..n), AND with an
 * optional filter bitmap; NULL when it does not apply, or with *failed set
 * and e set (out of memory, a corrupt list). min: the threshold already
 * known (-INFINITY: none); its cost is then the number of rows that may
 * still beat it. */
qr_sc *sc_dense_new(int is_and, qr_sc **kids, uint32_t n, uint32_t k, const void *filter,
                    uint32_t rows, double min, qr_arena *a, int *failed, qr_err *e);

#endif
