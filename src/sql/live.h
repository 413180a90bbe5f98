/* live.h - rows acknowledged before they are in table segments: per table
 * a write-ahead log (index/wal.h) and the live segments, one per statement,
 * which queries read from the moment the statement is acknowledged, until
 * a background thread commits them into a table segment.
 *
 * The path of a statement's rows (INSERT, COPY, an HTTP request) when the
 * database runs live (qr_live_start; `quarry serve`):
 *   1. sql/rows.c parses and checks them into a batch (errors go to the
 *      client);
 *   2. qr_live_append writes the batch as a live segment, a segment file
 *      in DATA/<table>/live/ like any other (sorted, every index built),
 *      but not fsynced, on the statement's own thread;
 *   3. it writes the rows as one log record (all or nothing) and lists the
 *      live segment under the record's number, under the table's mutex, so
 *      that the live segments are always exactly the records after the
 *      manifest's wal_seq;
 *   4. it waits for the record to be durable, one fsync shared by every
 *      concurrent statement (group commit); the live segments of durable
 *      records are visible to queries (qr_live_snapshot), and the
 *      statement is acknowledged;
 *   5. the flusher, once the oldest live segment is refresh_ms old, or
 *      they hold FLUSH_BYTES of records or are FLUSH_SEGS, makes them table
 *      segments (fsynced): one of COMMIT_LINK_ROWS rows or more linked as
 *      it is, runs of smaller ones merged into one; it commits the
 *      manifest with wal_seq = the last record among them, then deletes
 *      the log files the manifest now covers and the live files (each once
 *      no query is about to open it).
 * A statement whose rows fill a whole segment batch writes segments
 * directly instead (sql/rows.c), as without a log: its one manifest commit
 * is as durable and as atomic.
 *
 * Recovery (qr_live_recover, before a database serves): every table whose
 * directory holds log files has its records after the manifest's wal_seq
 * written as segments; a torn last record is cut. The live/ files of the
 * crashed run are removed unread.
 *
 * Back-pressure: when a table's uncommitted records pass max_pending bytes
 * (the flusher cannot keep up, or cannot write), or its segments the
 * merger has not finished with pass max_unmerged, a writer waits for the
 * flusher or the merger up to pending_wait_ms (QR_LIVE_WAIT_MS), then
 * fails with 53000 (retry later; HTTP 429). */
#ifndef QR_SQL_LIVE_H
#define QR_SQL_LIVE_H
#include <stddef.h>
#include <stdint.h>

#include "format/batch.h"
#include "index/table.h"
#include "sql/sql.h"

#define QR_LIVE_WAIT_MS    5000u
#define QR_LIVE_VISIBLE_MS 2000u

/* Table name's rows: rec, their log record (u32 length + line per row),
 * and b, the same rows parsed. Writes b as a live segment, then rec to the
 * table's log; returns once durable, the rows then visible. rec's memory
 * is taken over (rec is left empty), also on failure. 0, or -1 with e set
 * (53000 back-pressure, 53100 disk full, 58030, 42P01). */
int qr_live_append(qr_sql_db *db, const char *name, qr_buf *rec, const qr_batch *b, qr_err *e);
/* Commit table `name`'s live segments into a table segment now (before a
 * DDL takes the table's writer slot). 0, or -1 with e set. */
int qr_live_flush(qr_sql_db *db, const char *name, qr_err *e);

/* The live segments of table `name` that a query reads: those of durable
 * records, each pinned (its file stays) until qr_live_snapshot_done. A
 * query takes this *before* it reads the manifest, and then reads only
 * those with seq > the manifest's wal_seq: a live segment the flusher
 * committed meanwhile is in that manifest, and one it committed before is
 * not in this snapshot, so every row is read exactly once. */
typedef struct qr_live_snap {
    char dir[4096];     /* their directory: DATA/<table>/live */
    qr_seg_entry *ents; /* entries as a manifest's (ids name the files in dir) */
    uint64_t *seqs;     /* each one's log record */
    uint32_t n;
    void **segs; /* internal */
    void *tab;   /* internal */
} qr_live_snap;
/* 0 (out->n = 0 when the table has none, or the database is not live), or
 * -1 with e set (out of memory; nothing pinned). */
int qr_live_snapshot(qr_sql_db *db, const char *name, qr_live_snap *out, qr_err *e);
/* Unpin (after opening them: an open segment outlives its file). */
void qr_live_snapshot_done(qr_live_snap *s);
/* 1 when the database runs a merger (live, merges on), which it wakes to
 * build the indexes CREATE INDEX marked building (sql/merge.h); 0 when
 * the caller must build them itself. */
int qr_live_build_later(qr_sql_db *db);
/* Forget table `name`'s waiting rows and log (it was dropped). */
void qr_live_forget(qr_sql_db *db, const char *name);
/* 1 when every live segment of table `name` holds each index of d being
 * built (as d defines it), so that d's indexes may be marked built; then
 * a writer that checked its definition before this call checks it again
 * before listing its segment (refused with 40001 if it lacks them). 0 when one lacks
 * one (the flusher's commit soon rebuilds it with them). Called with the
 * table's writer slot and LOCK held (sql/merge.c). */
int qr_live_carries(qr_sql_db *db, const char *name, const qr_tabdef *d);
/* Remove the files a previous run's live segments left in table_dir/live/
 * (the caller owns the table's log: recovery, or a live database). */
void qr_live_clean(const char *table_dir);
/* Append one row (line[0..n)) to a payload. */
void qr_live_put_row(qr_buf *payload, const char *line, size_t n);
/* For each row of payload p[0..n): row(arg, line, len, e). -1 with e set
 * (XX001 when the payload does not parse, or the callback's error). */
int qr_live_each_row(const unsigned char *p, size_t n,
                     int (*row)(void *arg, const char *line, size_t n, qr_err *e), void *arg,
                     qr_err *e);
#endif
