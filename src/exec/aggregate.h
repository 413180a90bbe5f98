/* aggregate.h - hash aggregation (GROUP BY) over the rows a filter tree
 * matches, on the segments of a search (search/parallel.h).
 *
 * Per segment (one task each, on the search's workers): selections of the
 * matching rows (match/select.h, windows of 64K rows), the key and argument
 * columns gathered for them (format/colvec.h), rows hashed into the
 * segment's groups by dictionary code, integer value or interned bytes;
 * at the segment's end its groups merge by value into the worker's table,
 * and the workers' tables merge at the end. So a dictionary-coded key
 * costs a code lookup per row, values are compared once per group and
 * segment.
 *
 * Aggregates: count(*), count(col) (non-NULL values), min/max of any
 * integer-stored column (numbers, bool, timestamps: compared in the stored
 * domain, which orders like the values), sum/avg of integer columns
 * (int8..int64, uint8..uint64; exact in 128 bits; a sum outside int64 is
 * 22003). NULLs are skipped; an aggregate over no value is NULL (count: 0).
 * With no keys there is exactly one group, also when no row matches.
 *
 * Output: one row per group appended to `out`, whose columns the caller
 * defined: keys[k] goes to column key_out[k], aggs[a] to column agg_out[a].
 * Rows come in no particular order (the caller sorts).
 * Memory: hash tables and group values are charged to the search's query
 * context (qr_par_set_ctx); past its limit, 53200. */
#ifndef QR_EXEC_AGGREGATE_H
#define QR_EXEC_AGGREGATE_H
#include <stdint.h>

#include "exec/expr.h"
#include "exec/result.h"
#include "search/parallel.h"

#define QR_GB_MAX_KEYS 4
#define QR_GB_MAX_AGGS 32

typedef enum {
    QR_AGG_COUNT_STAR = 1,
    QR_AGG_COUNT,
    QR_AGG_MIN,
    QR_AGG_MAX,
    QR_AGG_SUM,
    QR_AGG_AVG,
} qr_aggfn;

typedef struct qr_groupby {
    uint32_t nkeys;
    int keys[QR_GB_MAX_KEYS]; /* table columns */
    uint32_t key_out[QR_GB_MAX_KEYS];
    uint32_t naggs;
    uint8_t fn[QR_GB_MAX_AGGS]; /* qr_aggfn */
    int arg[QR_GB_MAX_AGGS];    /* table column (-1 for count(*)) */
    uint32_t agg_out[QR_GB_MAX_AGGS];
    /* Expressions (NULL for none): a residual filter on column values, keys
     * computed from columns (kx[k] replaces keys[k]; its values come out in
     * their natural domain), aggregate arguments (ax[a] replaces arg[a];
     * integer-valued for sum and avg). Their columns are need[c] != 0 (the
     * table's ncols entries); they are read as cells for each window of
     * matching rows, so a query with expressions pays a gather per column it
     * reads and an evaluation per batch. */
    const qr_expr *where;
    const qr_expr *kx[QR_GB_MAX_KEYS];
    const qr_expr *ax[QR_GB_MAX_AGGS];
    const uint8_t *need;
    int all_rows; /* the tree matches every row and there is no residual: a
                   * one-key count may read the key's code blocks whole */
    int index_all; /* the tree matches every row (a residual may still filter):
                    * count(*) under a residual of one dictionary-coded column
                    * reads that column's code blocks whole */
} qr_groupby;

/* 1 when aggregate fn can take a column of type t (count: any type; min,
 * max: integer-stored; sum, avg: integer numbers). */
int qr_agg_accepts(int fn, int t);

/* Run the aggregation of g over ps's tree and segments into out. 0, or -1
 * with e set (53200, 57014, 22003, XX001). */
int qr_x_groupby(qr_par_search *ps, const qr_groupby *g, qr_result *out, qr_err *e);
#endif
