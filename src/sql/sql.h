/* sql.h - the SQL engine's contract: a session over a data directory runs
 * one statement at a time into a result set (exec/result.h).
 *
 *   text -> parse (parse.h: libpg_query) -> bind (bind.h: the catalog)
 *        -> plan (plan.h) -> run (run.c: the search core and exec/)
 *
 * Supported in this version: SELECT over one table with WHERE (the
 * full-text dialect and index predicates), GROUP BY columns, aggregates,
 * ORDER BY, LIMIT/OFFSET, and EXPLAIN SELECT (docs/SQL.md). Everything else
 * fails with 0A000 naming what is not supported.
 *
 * A session keeps the catalog and every table it opened (segments mapped,
 * the worker pool started once), so later statements pay neither. Each
 * statement runs under the query context of the result it fills: its
 * memory limit (53200 past it) and stop conditions (57014). */
#ifndef QR_SQL_H
#define QR_SQL_H
#include <stddef.h>
#include <stdint.h>

#include "exec/result.h"
#include "index/catalog.h"
#include "index/table.h"
#include "util/pool.h"

#define QR_SQL_MAX_TABLES 16

typedef struct qr_sql_table {
    qr_table *t;
    qr_segment **segs;
    uint32_t nsegs;
} qr_sql_table;

typedef struct qr_sql_session {
    char *datadir;
    int threads;   /* workers per statement (default: one per CPU) */
    qr_pool *pool; /* threads - 1 threads, started at open */
    qr_catalog cat;
    uint32_t ntabs;
    qr_sql_table tabs[QR_SQL_MAX_TABLES];
} qr_sql_session;

/* Open a session on datadir (the catalog is read now). threads <= 0: one
 * per CPU. 0, or -1 with e set; qr_sql_close also after a failure. */
int qr_sql_open(qr_sql_session *s, const char *datadir, int threads, qr_err *e);
void qr_sql_close(qr_sql_session *s);

/* Run one statement (n bytes of text) into out (initialised by the caller
 * with the statement's query context: qr_result_init). The result gets the
 * statement's columns and rows; EXPLAIN gives one column "QUERY PLAN".
 * 0, or -1 with e set (SQLSTATE code, message with " at character N" where
 * there is a position); the session stays usable after a failure. */
int qr_sql_exec(qr_sql_session *s, const char *sql, size_t n, qr_result *out, qr_err *e);

/* Parse and bind only (no table is opened): for tests and the fuzzer.
 * 0, or -1 with e set. */
int qr_sql_check(const qr_catalog *c, const char *sql, size_t n, qr_err *e);
#endif
