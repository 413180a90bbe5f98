/* plan.h - the physical plan of a bound SELECT: which scan of the index
 * answers it, and EXPLAIN's text of it.
 *
 *   COUNT     only count(*) items, no GROUP BY: the index counts
 *             (qr_par_count); no column is opened
 *   TOPK_SCORE  ORDER BY bm25() DESC LIMIT k: top-k by BM25 (block-max)
 *   TOPK_TIME   ORDER BY <the sort column> DESC LIMIT k: newest-first
 *   FIRST     no ORDER BY: the first matches in table order
 *   AGGREGATE GROUP BY / aggregates / DISTINCT: selections + column
 *             vectors + hash aggregation (keys and arguments may be
 *             expressions), HAVING, then sort and LIMIT on the groups
 *   SORT      ORDER BY any other keys: every match's columns read, sorted
 *   CONST     SELECT without FROM
 * A WHERE conjunct the index cannot answer is a residual filter on the
 * column values of the index's matches (for top-k: the best k' matches,
 * k' growing until k pass or the matches run out).
 * Then the select list is read for the winners only (late
 * materialisation). Anything else fails with 0A000 naming it. */
#ifndef QR_SQL_PLAN_H
#define QR_SQL_PLAN_H
#include "sql/bind.h"
#include "util/buf.h"

typedef enum {
    QR_PLAN_COUNT = 1,
    QR_PLAN_TOPK_SCORE,
    QR_PLAN_TOPK_TIME,
    QR_PLAN_FIRST,
    QR_PLAN_AGGREGATE,
    QR_PLAN_SORT,  /* ORDER BY other keys: every match read, sorted, LIMIT */
    QR_PLAN_CONST, /* no FROM: the select list evaluated once */
    QR_PLAN_JOIN,  /* a join, or count(DISTINCT): entries scanned, hash-joined, then
                    * hash aggregation or projection over the joined rows */
} qr_plankind;

/* The plan kind for s (0, or -1 with e set: 0A000, 54000). */
int qr_sql_plan(const qr_sqlsel *s, int *kind, qr_err *e);
/* EXPLAIN's lines for s planned as `kind`, appended to out. */
void qr_sql_explain(const qr_sqlsel *s, int kind, qr_buf *out);
#endif
