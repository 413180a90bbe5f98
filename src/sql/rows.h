/* rows.h - rows into a table from SQL (INSERT, COPY FROM, HTTP): each row
 * an NDJSON object line, parsed by ingest/ndjson.h against the table's
 * definition into a batch (the same conversions and checks as `quarry
 * ingest`), each full batch written as one segment (index/invindex.h
 * qr_segment_build: sorted, every index built), and all the segments
 * published at the end by one atomic manifest commit.
 *
 * When the database runs live (sql/live.h) a writer starts *logged*: it
 * keeps its rows as a log record too, and a commit whose rows never filled
 * a batch goes to the table's write-ahead log (qr_live_append) instead of
 * becoming a segment of its own. The first full batch (or qr_rows_flush)
 * turns it *direct*: it then writes segments as above.
 *
 * Locks (db.h): a direct writer holds the table's in-process writer slot,
 * then its LOCK file (55P03 when another process writes it), to its commit
 * or abort; a logged one holds neither (the log has its own). Memory: one
 * batch of at most seg_rows rows and the lines its strings point into
 * (charged to ctx when given), and for a logged writer the record, whatever
 * the number of rows. */
#ifndef QR_SQL_ROWS_H
#define QR_SQL_ROWS_H
#include <stdint.h>

#include "format/batch.h"
#include "index/table.h"
#include "ingest/ndjson.h"
#include "sql/sql.h"

#define QR_ROWS_SEGMENT_ROWS 131072u /* rows per segment written by SQL */

typedef struct qr_rowwriter {
    qr_sql_db *db;
    qr_table *t; /* open for writing; t->def is the definition rows follow */
    qr_ndjson nj;
    qr_batch b;
    qr_arena lines;     /* the lines the batch's strings point into */
    qr_seg_entry *segs; /* written, not yet committed */
    uint32_t nsegs, capsegs;
    uint64_t rows;     /* rows added */
    int own;           /* the writer opened t: end closes it */
    qr_table *old_t;   /* logged, then direct: the table as first opened (its def parses) */
    int slot;          /* it holds t's writer slot: end gives it back */
    uint32_t wait_ms;  /* for the slot: 55P03 after this long (0: waits as long as it takes) */
    int direct;        /* rows go to segments (else to the log, at commit) */
    qr_buf rec;        /* logged: the rows as a log record (sql/live.h) */
    size_t line_bytes; /* a batch is written once its lines pass this */
    qr_seg_opts seg;   /* how its segments are written */
} qr_rowwriter;

/* Begin writing rows into table `name` (as the catalog spells it), with
 * batches of up to seg_rows rows (0: QR_ROWS_SEGMENT_ROWS). 0, or -1 with e
 * set (42P01, 55P03, 53200) and nothing to end. */
int qr_rows_begin(qr_rowwriter *w, qr_sql_db *db, const char *name, uint32_t seg_rows, qr_qctx *ctx,
                  qr_err *e);
/* The same for a transaction block's writer (sql/tx.h): batches of
 * QR_ROWS_SEGMENT_ROWS, charged to no statement, and the writer slot, when
 * it comes to need it, waited for up to wait_ms, then 55P03 (two blocks
 * writing two tables in opposite orders would otherwise wait for each
 * other forever). */
int qr_rows_begin_waiting(qr_rowwriter *w, qr_sql_db *db, const char *name, uint32_t wait_ms,
                          qr_err *e);
/* The same, always direct (segments, never the log): the flusher's and
 * recovery's own writer. */
int qr_rows_begin_direct(qr_rowwriter *w, qr_sql_db *db, const char *name, qr_err *e);
/* The same, the caller holding table name's writer slot already (taken
 * with qr_sqldb_writer_try): the writer gives it back when it ends (also
 * when this fails). w->seg (how its segments are written) may be changed
 * before the first row. */
int qr_rows_begin_held(qr_rowwriter *w, qr_sql_db *db, const char *name, qr_err *e);
/* Append one row: line[0..n) is one JSON object whose keys are column names
 * (copied). 0, or -1 with e set (the reason for the row, as ndjson.h says it
 * without its "byte N: " prefix; 53200, I/O when a segment write failed):
 * the writer stays usable only for qr_rows_abort. */
int qr_rows_add(qr_rowwriter *w, const char *line, size_t n, qr_err *e);
/* Write the last batch and publish every segment in one manifest commit;
 * *rows gets the rows added. Ends w (also on failure, which commits
 * nothing and removes the segments written). */
int qr_rows_commit(qr_rowwriter *w, uint64_t *rows, qr_err *e);
/* Commit (direct) recording that the log's records up to wal_seq are now
 * in segments (index/table.h qr_table_commit_wal). Ends w. */
int qr_rows_commit_wal(qr_rowwriter *w, uint64_t wal_seq, uint64_t *rows, qr_err *e);
/* Write the rows added so far as a segment now (rows of different
 * sources are then never sorted together). 0, or -1 with e set. */
int qr_rows_flush(qr_rowwriter *w, qr_err *e);
/* Drop everything: the segments written are removed. Ends w. */
void qr_rows_abort(qr_rowwriter *w);
/* The catalog's spelling of table `name` (matched case-insensitively;
 * the catalog is read again when the name is not in the one loaded, so a
 * table another process made is found) into canon (cap bytes): 1, or 0
 * when there is no such table. */
int qr_rows_table(qr_sql_db *db, const char *name, char *canon, size_t cap);
/* Create table def->name unless a table of that name exists, with any
 * definition (*created says which; canon gets the catalog's spelling).
 * 0, or -1 with e set (22023 a bad name, 58030). */
int qr_rows_create_table(qr_sql_db *db, const qr_tabdef *def, int *created, char *canon, size_t cap,
                         qr_err *e);
/* Text (a string constant of INSERT, a CSV or text-format field of COPY)
 * as the JSON value of a column of `type`, appended to out: NULL, or the
 * SQLSTATE (22P02, 22007, 22003) with *why saying what is wrong (static
 * text). Booleans take PostgreSQL's spellings (t, true, yes, on, 1, ...),
 * timestamps RFC 3339, 'YYYY-MM-DD[ HH:MM:SS[.f]]' (UTC) or an integer in
 * the column's unit (as NDJSON), json any one
 * JSON value, map a JSON object. (stmt_insert.c) */
const char *qr_sql_text_value(const char *s, size_t n, int type, qr_buf *out, const char **why);
#endif
