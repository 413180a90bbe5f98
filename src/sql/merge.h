/* merge.h - background merges of a live table's segments: the policy that
 * picks what to merge, and one merge (internal to src/sql; sql/live.c's
 * merger thread runs them).
 *
 * Policy (tiered by size, respecting time): a segment's level is 0 below
 * QR_MERGE_BASE_ROWS rows and one more per factor QR_MERGE_FACTOR above;
 * a segment of QR_MERGE_FINAL_ROWS rows or more is final, never merged
 * again. For level l = 0, 1, ... the first run of at least QR_MERGE_FACTOR
 * *adjacent* non-final segments whose levels are all <= l is merged (at
 * most QR_MERGE_MAX_RUN of them). Only adjacent segments merge, so a
 * merged segment holds a contiguous stretch of the table's order (ingest
 * order, which for logs is time), and the manifest keeps that order. Under
 * steady ingest the flusher's small segments merge eight at a time into
 * ever larger ones, and the table holds at most about QR_MERGE_FACTOR - 1
 * segments per level besides its final ones. When no run qualifies, a
 * segment (final ones too) of which at least 1/QR_MERGE_EXPUNGE of the
 * rows are deleted is rewritten alone, without them (DELETE's space comes
 * back; stmt_delete.c).
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
#define QR_MERGE_MAX_RUN    16u
#define QR_MERGE_BASE_ROWS  16384u
#define QR_MERGE_FINAL_ROWS (1u << 20)
#define QR_MERGE_SEG_ROWS   (2u << 20)
#define QR_MERGE_LINE_BYTES ((size_t)512 << 20) /* row text held per merged segment */

/* The policy: 1 with segs[*first .. *first + *n) to merge, or 0. */
int qr_merge_pick(const qr_seg_entry *segs, uint32_t nsegs, uint32_t *first, uint32_t *n);
/* Merge what the policy picks in table name, if anything: 1 merged (*rows
 * in the run, *before / *after segments), 0 nothing to do or given up
 * (the run changed meanwhile, or *cancel was set), -1 with e set. */
int qr_merge_table(qr_sql_db *db, const char *name, const atomic_int *cancel, uint64_t *rows,
                   uint32_t *before, uint32_t *after, qr_err *e);
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
