/* timebucket.h - count(*) per time bucket of the table's sort column over
 * the rows a filter tree matches (GROUP BY date_trunc(unit, <sort column>)
 * with count(*) only; sql/run.c decides when).
 *
 * A segment's rows are sorted by the sort column, so a bucket is a row
 * range: per segment, one binary search per bucket boundary inside the
 * segment's time span, then either the range's width (a tree that matches
 * every row: no iterator at all) or a popcount of the filter's match bitmap
 * over the range (the tree compiled once per segment and its matches read
 * as a bitmap, match/select.h). Deleted rows are excluded either way. One
 * task per segment on the search's workers; per-worker counts summed. So a
 * by-second histogram costs a bitmap and a few dozen binary searches per
 * segment, not a count per bucket. */
#ifndef QR_EXEC_TIMEBUCKET_H
#define QR_EXEC_TIMEBUCKET_H
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
#endif
