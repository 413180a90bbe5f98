/* merge.h - background merges of a live table's segments: the policy that
 * picks what to merge, and one merge (internal to src/sql; sql/live.c's
 * merger thread runs them).
 *
 * Policy (by size, respecting time): a segment is *final*, never merged
 * again, from QR_MERGE_FINAL_ROWS rows or QR_MERGE_LINE_BYTES / 2 bytes of
 * row values on. Only *adjacent* non-final segments merge, so a merged
 * segment holds a contiguous stretch of the table's order (ingest order,
 * which for logs is time), and the manifest keeps that order. Two rules,
 * the first that finds a run wins:
 *  - small: the first run of at least QR_MERGE_FACTOR adjacent segments
 *    of fewer than QR_MERGE_BASE_ROWS rows each (the flusher's commits of
 *    a slow trickle) is merged, at most QR_MERGE_MAX_RUN of them;
 *  - to final: in a run of adjacent non-final segments, the shortest
 *    prefix that reaches QR_MERGE_FINAL_ROWS rows, or the longest whose
 *    values one merge holds (QR_MERGE_LINE_BYTES; the next segment's
 *    would pass it, so it holds over half), or one of QR_MERGE_MAX_RUN
 *    segments, is merged.
 *  - idle: once no rows have been committed to the table for
 *    QR_MERGE_IDLE_MS, the first run of at least QR_MERGE_FACTOR adjacent
 *    non-final segments is merged as the second rule would (cut the same
 *    way), short of a final size: after a load the table settles to its
 *    final segments and about one more, instead of keeping the
 *    segments of the rows that did not make a final one.
 * So under steady ingest a row is rewritten once from its commit's segment
 * into a final one (twice if it came in a small commit), not once per
 * size tier: the merges of a tiered policy by 8 cost as much CPU as the
 * ingest itself (a 3M-row COPY load: 16 of 32 core-seconds). The price is
 * up to QR_MERGE_MAX_RUN - 1 segments waiting (besides fewer than
 * QR_MERGE_FACTOR small ones), which a query pays a few microseconds each.
 * A prefix merged by the second rule stays within QR_MERGE_SEG_ROWS rows
 * (2 * QR_MERGE_FINAL_ROWS) and QR_MERGE_LINE_BYTES values, so it makes
 * one segment, final unless the run was cut by its count. (Rows of ~400
 * value bytes, the OpenTelemetry table's, make final segments of ~1.1M
 * rows; rows of 4 KB, ones of ~125k.) When no run
 * qualifies, a segment (final ones too) of which at least
 * 1/QR_MERGE_EXPUNGE of the rows are deleted is rewritten alone, without
 * them (DELETE's space comes back; stmt_delete.c).
 *
 * A merge reads the run's rows (table order) and writes them as new
 * segments of up to QR_MERGE_SEG_ROWS rows in DATA/<table>/merge/, holding
 * no lock; then, with the table's writer slot (taken with a timeout, so a
 * DROP can make it give up) and LOCK, it checks that the run is still in
 * the manifest with the deletions it read, moves the new files in and
 * commits the manifest with the run replaced (qr_table_replace), which
 * deletes the old files. Queries keep the segments of the snapshot they
 * started with. Index-wide statistics are sums over rows, so BM25 scores
 * do not change, except that deleted rows, which count in them until
 * their segment is rewritten, then leave them. */
#ifndef QR_SQL_MERGE_H
#define QR_SQL_MERGE_H
#include <stdatomic.h>
#include <stdint.h>

#include "index/table.h"
#include "sql/sql.h"

#define QR_MERGE_FACTOR     8u
#define QR_MERGE_EXPUNGE    4u
#define QR_MERGE_MAX_RUN    64u
#define QR_MERGE_BASE_ROWS  16384u
#define QR_MERGE_FINAL_ROWS (1u << 20)
#define QR_MERGE_SEG_ROWS   (2u << 20)
#define QR_MERGE_LINE_BYTES ((size_t)512 << 20) /* row text held per merged segment */
#define QR_MERGE_IDLE_MS    2000u

/* The policy: 1 with segs[*first .. *first + *n) to merge, or 0. raw[i]
 * is segs[i]'s bytes of row values (segment.h's raw_bytes summed), or
 * raw NULL when only rows count; idle: nothing committed for
 * QR_MERGE_IDLE_MS. */
int qr_merge_pick(const qr_seg_entry *segs, const uint64_t *raw, uint32_t nsegs, int idle,
                  uint32_t *first, uint32_t *n);
/* Merge what the policy picks in table name (idle as for qr_merge_pick),
 * if anything: 1 merged (*rows in the run, *before / *after segments), 0
 * nothing to do or given up (the run changed meanwhile, or *cancel was
 * set), -1 with e set. */
int qr_merge_table(qr_sql_db *db, const char *name, int idle, const atomic_int *cancel,
                   uint64_t *rows, uint32_t *before, uint32_t *after, qr_err *e);
/* Retention (a table's retention_s, by its sort column, against now_ns):
 * a segment whose newest row is past the limit is dropped; one that
 * straddles it is rewritten without its expired rows once at least half of
 * its time span is past the limit (so a segment is not rewritten every
 * second as time moves on; until then its expired rows stay visible). 1
 * done (*dropped_rows, *dropped_segs), 0 nothing to do or given up, -1
 * with e set. */
int qr_retain_table(qr_sql_db *db, const char *name, int64_t now_ns, const atomic_int *cancel,
                    uint64_t *dropped_rows, uint32_t *dropped_segs, qr_err *e);
/* Index builds (CREATE INDEX on a table that holds rows adds the index
 * marked building: writers build it from then on, queries do not use it
 * yet). The segments lacking an index being built are rewritten one at a
 * time as merges are (qr_segment_merge: columns decoded, the indexes they
 * have merged, the new one built from the values), each its own commit,
 * for up to budget_ms; *built gets how many, *left how many still lack
 * one. When none lacks one, the indexes are marked built in the catalog
 * with the table's writer slot and LOCK held (every segment checked again
 * under them), and queries use them from their next statement. A merge or
 * retention trim whose segments were written before an index was marked
 * built is not published (it would lack the index). 1 progress (segments
 * rewritten or the indexes marked built), 0 nothing to do or given up (the
 * table changed meanwhile, or *cancel), -1 with e set. */
int qr_build_indexes_table(qr_sql_db *db, const char *name, const atomic_int *cancel,
                           uint32_t budget_ms, uint32_t *built, uint32_t *left, qr_err *e);
/* Remove what an interrupted merge left in dir/merge/. */
void qr_merge_clean(const char *table_dir);
#endif
