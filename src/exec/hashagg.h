/* hashagg.h - hash aggregation over batches of cells (exec/expr.h): the
 * general form, for rows that do not come straight from one table's
 * segments (the rows of a join) or aggregates the per-segment path does not
 * compute (count(DISTINCT ...)). aggregate.h is the fast path for one
 * table.
 *
 * Keys and arguments are expressions over the batch; their values are
 * natural (expr.h). Aggregates: count(*), count(x) (non-NULL values),
 * count(DISTINCT x), sum and avg of integers (exact in 128 bits; a sum
 * outside bigint is 22003), min and max of integers, timestamps, booleans
 * and doubles. An aggregate over no value is NULL (count: 0); with no keys
 * there is exactly one group, also when no row was added.
 *
 * Output (qr_hagg_finish): one row per group in `out`, whose columns the
 * caller defined: key k in column k, aggregate a in column nkeys + a, all
 * natural values (doubles in f for FLOAT keys, avg and FLOAT min/max).
 * Memory: every table and copied byte is charged to the context given. */
#ifndef QR_EXEC_HASHAGG_H
#define QR_EXEC_HASHAGG_H
#include <stdint.h>

#include "exec/aggregate.h"
#include "exec/expr.h"
#include "exec/result.h"

typedef struct qr_hagg qr_hagg;

typedef struct qr_hagg_spec {
    uint32_t nkeys;
    const qr_expr *keys[QR_GB_MAX_KEYS];
    uint32_t naggs;
    uint8_t fn[QR_GB_MAX_AGGS];          /* qr_aggfn */
    uint8_t distinct[QR_GB_MAX_AGGS];    /* count(DISTINCT arg) */
    const qr_expr *arg[QR_GB_MAX_AGGS];  /* NULL for count(*) */
} qr_hagg_spec;

/* NULL with e set (53200). The spec must outlive the aggregation. */
qr_hagg *qr_hagg_new(const qr_hagg_spec *sp, qr_qctx *ctx, qr_err *e);
/* Add rows sel[0..n) of batch b (sel NULL: all b->n rows). */
int qr_hagg_add(qr_hagg *h, const qr_xbatch *b, const uint32_t *sel, uint32_t n, qr_arena *scratch,
                qr_err *e);
/* The groups as rows of out (in first-seen order). */
int qr_hagg_finish(qr_hagg *h, qr_result *out, qr_err *e);
void qr_hagg_free(qr_hagg *h);
#endif
