/* bm25.h - BM25 relevance as Lucene computes it (k1 = 1.2, b = 0.75,
 * idf = ln(1 + (N - df + 0.5) / (df + 0.5)), lengths through the one-byte
 * norms) and the index-wide statistics it needs: N, average length and
 * every scored word's df summed over all segments first, so a row's score
 * does not depend on how rows were split into segments. docs/SEARCH.md,
 * "Relevance and top-k", is the user-facing definition. */
#ifndef QR_BM25_H
#define QR_BM25_H

#include <stdint.h>

#include "match/segsearch.h"
#include "util/pool.h"

#define QR_BM25_K1 1.2
#define QR_BM25_B 0.75

typedef struct qr_bm25 {
    uint64_t docs, tokens; /* rows with a non-NULL Body, words in them */
    double avgdl;
    double K[256];         /* k1 * (1 - b + b * dl / avgdl) per norm code */
} qr_bm25;

void qr_bm25_init(qr_bm25 *m, uint64_t docs, uint64_t tokens);
double qr_bm25_idf(const qr_bm25 *m, uint64_t df);
/* The contribution of a word (or phrase) of weight w seen tf times in a row
 * whose norm code is `norm`. Increasing in tf and w, decreasing in norm:
 * block-max bounds evaluate this same expression on (max tf, min norm). */
static inline double qr_bm25_score(const qr_bm25 *m, double w, double tf, uint8_t norm)
{
    return w * tf / (tf + m->K[norm]);
}

/* A query's scoring statistics: the model and the weight (idf, or the sum
 * of its words' idf for a phrase) of each scored leaf, numbered in preorder
 * over the whole tree (see qr_bm25_is_leaf). */
#define QR_BM25_TAB_TF 4u /* tf 1..4: scores looked up, not divided */
#define QR_BM25_TAB    (QR_BM25_TAB_TF * 256u)

typedef struct qr_qweights {
    qr_bm25 m;
    double *w;
    uint32_t n;
    /* per leaf, the score of tf 1..QR_BM25_TAB_TF per norm code
     * (tab[leaf * QR_BM25_TAB + (tf - 1) * 256 + norm]): computed once per
     * query, not per segment, by the very expression qr_bm25_score */
    double *tab;
} qr_qweights;

/* Body terms and phrases are the scored leaves. */
int qr_bm25_is_leaf(const qr_query *q);
/* Scored leaves in the subtree q. */
uint32_t qr_bm25_count_leaves(const qr_query *q);
/* Gather the statistics of q over segments ss[0..nsegs) (opens their Body
 * indexes and looks the words up; ctx, which may be NULL, is checked
 * between segments) on `threads` workers of pool (NULL: the calling
 * thread), each taking segments in turn: the sums, and so the weights, do
 * not depend on how. Memory from `a`. 0, or -1 with e set. */
int qr_qweights_compute(qr_qweights *qw, qr_segsearch *ss, uint32_t nsegs, const qr_query *q,
                        qr_arena *a, qr_qctx *ctx, qr_pool *pool, int threads, qr_err *e);

#endif
