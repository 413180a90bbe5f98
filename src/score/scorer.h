/* scorer.h - scoring iterators: the filter tree of a query evaluated with a
 * BM25 score per matching row and block-max bounds for top-k pruning
 * (Lucene's Scorer with advanceShallow / getMaxScore /
 * setMinCompetitiveScore).
 *
 *   term        postings cursor; a block's bound from its skip entry
 *               (max tf, min norm) without decoding it
 *   phrase      the two-phase phrase iterator, scored by phrase frequency
 *   AND         leapfrog over the scoring clauses and one filter iterator
 *               (the non-scoring clauses, compiled as in counting), minus
 *               the NOT clauses; skips doc windows whose summed bounds lose
 *   OR/atleast  block-max MaxScore: per window, the clauses whose bounds
 *               together cannot beat the threshold only confirm candidates
 *   constant    any other filter (multi-term: 1, keyword/range/time: 0)
 *
 * Contract: advance(target) returns the first doc >= target that may beat
 * the minimum set by set_min (docs that cannot are skipped: a scorer may
 * skip any doc whose score is <= min); shallow(target) prepares block data
 * for docs >= target and returns the last doc of the window over which
 * max_score(upto, nfloor) is valid; both take non-decreasing targets.
 * Norm coupling: a row has one length, so a conjunction bounds its words
 * at the largest of their smallest norms, and a small disjunction bounds
 * each subset of its clauses that way (a row with both words cannot be the
 * shortest row of each). Scores add in
 * the order the query's clauses are written, so pruned and exhaustive runs
 * give bitwise-equal scores.
 */
#ifndef QR_SCORER_H
#define QR_SCORER_H

#include <stdint.h>

#include "score/bm25.h"
#include "match/segsearch.h"

typedef struct qr_sc qr_sc;

typedef struct qr_sc_stats {
    uint64_t blocks_total, blocks_decoded;
} qr_sc_stats;

typedef struct qr_sc_vt {
    uint32_t (*advance)(qr_sc *, uint32_t target);
    double (*score)(qr_sc *);
    uint32_t (*shallow)(qr_sc *, uint32_t target);
    /* bound over docs in [last shallow target, upto] whose Body norm code is
     * at least nfloor (0: any) -- rows matched by several words share one
     * length, which couples their bounds */
    double (*max_score)(qr_sc *, uint32_t upto, uint8_t nfloor);
    /* smallest norm code a doc in that range can have (0: unknown) */
    uint8_t (*min_norm)(qr_sc *, uint32_t upto);
    void (*set_min)(qr_sc *, double min);
    int (*failed)(qr_sc *);
    void (*stats)(qr_sc *, qr_sc_stats *);
} qr_sc_vt;

struct qr_sc {
    const qr_sc_vt *vt;
    uint32_t doc;  /* current doc (valid once started), QR_NO_DOC at the end */
    int started;
    uint64_t cost; /* upper bound of the docs it can return */
};

/* First doc >= target (the current one if it is already there). */
static inline uint32_t qr_sc_advance(qr_sc *s, uint32_t target)
{
    if (s->started && (s->doc == QR_NO_DOC || s->doc >= target))
        return s->doc;
    s->started = 1;
    return s->doc = s->vt->advance(s, target);
}
static inline uint32_t qr_sc_next(qr_sc *s)
{
    if (s->started && s->doc == QR_NO_DOC)
        return QR_NO_DOC;
    return qr_sc_advance(s, s->started ? s->doc + 1 : 0);
}
static inline double qr_sc_score(qr_sc *s) { return s->vt->score(s); }

/* max_score(s, QR_SC_END, 0): the best score of any row from here on. */
#define QR_SC_END (QR_NO_DOC - 1)

/* Build the scorer of q for one segment. qw holds the query's index-wide
 * statistics (qr_qweights_compute). min: the threshold already known (as
 * set_min would be given it next; -INFINITY: none), which may choose the
 * way rows are found -- a scorer whose cost is then 0 has no row that can
 * beat it. Memory from `a`. NULL with e set. */
qr_sc *qr_scorer_build(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double min,
                       qr_arena *a, qr_err *e);

/* Is it shown, from the segment's row shapes (index/shapes.h) and before
 * any posting is read, that no row of it scores above min (min
 * -INFINITY: that no row matches)? Applies when
 * every scored clause of q is a non-variable word, or a phrase of such
 * words, of one field with shapes (shapebound.c); not under
 * QUARRY_NO_SHAPES=1. A phrase's shapes and frequencies come from `a`
 * (the query's memory limit). 1 shown, 0 not, -1 with e set (out of
 * memory, corrupt shapes). */
int qr_scorer_shapes_lose(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double min,
                          qr_arena *a, qr_err *e);

/* The shapes of a segment whose rows score above min, best first. */
typedef struct qr_shape_rank {
    qr_invfield *f;        /* the shaped field the scored words are in */
    uint32_t n;            /* shapes (1..K) */
    const uint32_t *shape; /* by descending score, ties by shape number */
    const double *score;   /* the score of every row of shape[i], bit for bit */
    const uint32_t *count; /* the rows of each shape 0..K (SHAPEROWS) */
    uint64_t lists;        /* rows in the scored words' lists, summed */
} qr_shape_rank;

/* When whether a row matches q and what it scores depend on its shape
 * alone -- every clause of q a scored non-variable word, or a phrase of
 * such words, of one field with shapes, joined by AND, OR or at-least-k,
 * with no filter -- the shapes whose rows score above min and that score
 * (shapebound.c): a top-k then needs no list, only the rows' shape
 * numbers. Arrays from `a`. 1 ranked, 0 not applicable (as
 * qr_scorer_shapes_lose, or a filter), -1 with e set. */
int qr_scorer_shapes_rank(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double min,
                          qr_arena *a, qr_shape_rank *out, qr_err *e);

/* The rows of a segment matching q, from its shapes (where
 * qr_scorer_shapes_rank applies, NOTs of such clauses too, and no row
 * was deleted): the rows of the shapes where q holds, from SHAPEROWS; no
 * list or bitmap is read. With a plan (pl not NULL), each node is
 * recorded with the rows it holds in. 1 counted, 0 not applicable (also
 * when rows holding none of the words would match), -1 with e set. */
int qr_scorer_shapes_count(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_plan *pl,
                           uint64_t *count, qr_err *e);

#endif
