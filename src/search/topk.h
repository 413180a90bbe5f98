/* topk.h - the k best rows of a query over many segments: by BM25 score,
 * newest first by Timestamp, or simply the first k matches; and reading
 * only the winners' rows (late materialisation).
 *
 * Runs on the state of a qr_par_search (segments with their opened
 * indexes, one shared tree, one run state per worker). By score and row reads are one job
 * on the search's pool (parallel.h): by score, one task per segment,
 * handed out by an atomic counter, each worker keeping its own heap; heaps
 * merge at the end. Workers publish their heap threshold so the others
 * prune with it (a shared threshold is used strictly: a tie may still win
 * on order). By time and first-k run on the calling thread (worker 0).
 *
 * Orders and their tie rules (total orders, so a result is unique):
 *   QR_BY_SCORE  score descending; equal scores: segment index ascending,
 *                then row ascending (table order: earlier ingest first).
 *                Score: docs/SEARCH.md "Relevance" (BM25, k1 1.2, b 0.75,
 *                Lucene's idf and SmallFloat norms, index-wide statistics).
 *   QR_BY_TIME   Timestamp descending, NULL Timestamps last; equal
 *                timestamps: segment index descending, then row descending
 *                (the row ingested later first).
 *   QR_BY_NONE   the first k matches in table order (segment index, row).
 * `segment index` is the position of the segment in the array given to
 * qr_par_init (the table's manifest order).
 */
#ifndef QR_TOPK_H
#define QR_TOPK_H

#include <stdint.h>

#include "search/parallel.h"
#include "util/buf.h"

typedef enum { QR_BY_SCORE, QR_BY_TIME, QR_BY_NONE } qr_topk_by;

typedef struct qr_hit {
    double score;  /* QR_BY_SCORE: the BM25 score; otherwise 0 */
    int64_t ts;    /* QR_BY_TIME: the Timestamp (INT64_MIN for NULL); otherwise 0 */
    uint32_t seg;  /* segment index */
    uint32_t doc;  /* row within the segment */
} qr_hit;

typedef struct qr_topk_stats {
    uint64_t segments;       /* segments searched (not skipped as a whole) */
    uint64_t segments_skipped; /* by score: skipped whole, their best possible
                                * score unable to beat the threshold */
    uint64_t blocks_total;   /* postings blocks of the scored terms (and phrases' terms) */
    uint64_t blocks_decoded; /* of those, decoded (the rest were skipped by block-max) */
    uint64_t docs_collected; /* rows the scorers returned to the heaps (they drop
                              * what cannot beat the threshold themselves) */
} qr_topk_stats;

#define QR_TOPK_MAX 100000u /* largest k */

/* The best k hits (k <= QR_TOPK_MAX) in order into out[] (room for k);
 * *nout = how many (fewer when fewer rows match). exhaustive = 1 scores
 * every match without pruning (the reference the pruned run must equal;
 * for tests and benchmarks). stats may be NULL. 0, or -1 with e set. */
int qr_par_topk(qr_par_search *p, qr_topk_by by, uint32_t k, int exhaustive, qr_hit *out,
                uint32_t *nout, qr_topk_stats *stats, qr_err *e);

/* The first k matches in table order (k unbounded), handed to `emit` in
 * batches as they are found: for listing every match without holding them
 * all. emit returns 0, or -1 with e set to stop. stats may be NULL. */
typedef int (*qr_hits_fn)(void *ctx, const qr_hit *hits, uint32_t n, qr_err *e);
int qr_par_first(qr_par_search *p, uint64_t k, qr_hits_fn emit, void *ctx, qr_topk_stats *st,
                 qr_err *e);

/* Late materialisation: append the rows of hits[0..n) as NDJSON lines (in
 * the hits' order) to out, reading only the blocks those rows live in. */
int qr_par_rows(qr_par_search *p, const qr_hit *hits, uint32_t n, qr_buf *out, qr_err *e);

#endif
