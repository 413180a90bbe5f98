/* live.h - rows acknowledged before they are in segments: per table a
 * write-ahead log (index/wal.h) and the rows waiting in memory, written as
 * a segment by a background thread every refresh interval, which is when
 * queries see them (through the manifest, as every other commit).
 *
 * The path of a statement's rows (INSERT, COPY, an HTTP request) when the
 * database runs live (qr_live_start; `quarry serve`):
 *   1. sql/rows.c parses and checks them (errors go to the client);
 *   2. qr_live_append writes them as one log record (all or nothing) and
 *      adds them to the table's waiting rows, under the table's mutex, so
 *      that the waiting rows are always exactly the records after the
 *      manifest's wal_seq;
 *   3. it waits for the record to be durable, one fsync shared by every
 *      concurrent statement (group commit), and the statement is
 *      acknowledged;
 *   4. the flusher writes the waiting rows as a segment and commits the
 *      manifest with wal_seq = the last record in it, then deletes the log
 *      files the manifest now covers.
 * A statement whose rows fill a whole segment batch writes segments
 * directly instead (sql/rows.c), as without a log: its one manifest commit
 * is as durable and as atomic.
 *
 * Recovery (qr_live_recover, before a database serves): every table whose
 * directory holds log files has its records after the manifest's wal_seq
 * written as segments; a torn last record is cut.
 *
 * Back-pressure: when a table's waiting rows pass max_pending bytes (the
 * flusher cannot keep up, or cannot write), a writer waits for the flusher
 * up to pending_wait_ms (QR_LIVE_WAIT_MS), then fails with 53000 (retry
 * later; HTTP 429). */
#ifndef QR_SQL_LIVE_H
#define QR_SQL_LIVE_H
#include <stddef.h>
#include <stdint.h>

#include "sql/sql.h"

#define QR_LIVE_WAIT_MS    5000u
#define QR_LIVE_VISIBLE_MS 2000u

/* Write rows payload rec (u32 length + line, for each of `rows` rows) into
 * table `name`'s log and waiting rows; returns once durable. rec's memory
 * is taken over (rec is left empty), also on failure. 0, or -1 with e set
 * (53000 back-pressure, 53100 disk full, 58030, 42P01). */
int qr_live_append(qr_sql_db *db, const char *name, qr_buf *rec, uint64_t rows, qr_err *e);
/* Write table `name`'s waiting rows as segments now (before a DDL takes the
 * table's writer slot). 0, or -1 with e set. */
int qr_live_flush(qr_sql_db *db, const char *name, qr_err *e);
/* Before a statement reads (holding no lock): wait until every row
 * acknowledged so far, in any table, is in committed segments, so that a
 * query sees every row acknowledged before it began (the flusher writes
 * them at once; concurrent readers share its flush). Waits at most
 * QR_LIVE_VISIBLE_MS (a flush held up: the table's writer slot held by a
 * large COPY or a DDL); returns 1 when it gave up, 0 otherwise. */
int qr_live_visible(qr_sql_db *db);
/* 1 when the database runs a merger (live, merges on), which it wakes to
 * build the indexes CREATE INDEX marked building (sql/merge.h); 0 when
 * the caller must build them itself. */
int qr_live_build_later(qr_sql_db *db);
/* Forget table `name`'s waiting rows and log (it was dropped). */
void qr_live_forget(qr_sql_db *db, const char *name);
/* Append one row (line[0..n)) to a payload. */
void qr_live_put_row(qr_buf *payload, const char *line, size_t n);
/* For each row of payload p[0..n): row(arg, line, len, e). -1 with e set
 * (XX001 when the payload does not parse, or the callback's error). */
int qr_live_each_row(const unsigned char *p, size_t n,
                     int (*row)(void *arg, const char *line, size_t n, qr_err *e), void *arg,
                     qr_err *e);
#endif
