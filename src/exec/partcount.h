/* partcount.h - count(*) of the rows a filter tree matches per partition
 * of the rows, for GROUP BY shapes the index answers (sql/run.c decides
 * when): per time bucket of the sort column (GROUP BY date_trunc(unit,
 * <sort column>)), and per value of a keyword-indexed column (GROUP BY
 * ServiceName). Either way, per segment the filter is compiled once and its
 * matches read as a bitmap (none when it matches every row), then each
 * partition's rows are counted against it: deleted rows never count. One
 * task per segment on the search's workers; per-worker counts summed.
 *
 * Time buckets: a segment's rows are sorted by the sort column, so a bucket
 * is a row range, found by a lower bound per bucket boundary inside the
 * segment's time span (the block directory's min/max, then one decode per
 * block that holds boundaries); its count is the range's width, or a
 * popcount of the filter's bitmap over it. So a by-second histogram costs a
 * bitmap and a few dozen lower bounds per segment, not a count per bucket.
 *
 * Values: each value's `col = v` iterator (a bitmap or postings) ANDed
 * with the filter's bitmap by popcount or by a walk of its docs; so an
 * expensive filter (a phrase, an automaton) is evaluated once, not once
 * per value. */
#ifndef QR_EXEC_PARTCOUNT_H
#define QR_EXEC_PARTCOUNT_H
#include <stdint.h>

#include "search/parallel.h"

#define QR_TB_MAX_BUCKETS 4096u

/* Counts of ps's tree per bucket [start[i], start[i+1]) for i < nb
 * (start ascending, nb + 1 entries, nb <= QR_TB_MAX_BUCKETS) of table
 * column sort_col (the sort column) into cnt[0..nb), and of the rows whose
 * time is NULL into cnt[nb]; rows outside [start[0], start[nb]) are not
 * counted. all: the tree matches every row (no WHERE clause). Memory
 * charged to ps's query context. 0, or -1 with e set (53200, 57014,
 * XX001). */
int qr_x_time_buckets(qr_par_search *ps, int sort_col, const int64_t *start, uint32_t nb, int all,
                      uint64_t *cnt, qr_err *e);
/* Counts of ps's tree AND eq[i] (eq[0..nv): trees, each one value of a
 * column, e.g. qr_q_equals) into cnt[0..nv), and of the tree alone into
 * *total. all: the tree matches every row. 0, or -1 with e set. */
int qr_x_value_counts(qr_par_search *ps, const qr_query *const *eq, uint32_t nv, int all,
                      uint64_t *cnt, uint64_t *total, qr_err *e);
#endif
