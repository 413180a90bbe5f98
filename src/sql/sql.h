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
 * Each statement runs under the query context of the result it fills: its
 * memory limit (53200 past it) and stop conditions (57014). */
#ifndef QR_SQL_H
#define QR_SQL_H
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "exec/result.h"
#include "index/catalog.h"
#include "index/table.h"
#include "util/pool.h"
#include "util/qctx.h"

/* A database: one data directory shared by every session of a process (a
 * server's connections, or the one session of `quarry sql`). It owns the
 * catalog as last read, the worker pool, the segment cache (segments mapped
 * and their index fields opened once for all sessions) and each table's
 * latest manifest. Thread-safe: any number of sessions may run statements
 * at once. A statement holds the catalog shared from bind to its last row;
 * a statement that changes the catalog (DDL) holds it exclusively. */
typedef struct qr_sql_db qr_sql_db;

/* Open the database in datadir (the catalog is read now). threads <= 0: one
 * per CPU (the pool and each statement's default). NULL with e set. */
qr_sql_db *qr_sql_db_open(const char *datadir, int threads, qr_err *e);
/* No session may be running a statement. NULL is a no-op. */
void qr_sql_db_close(qr_sql_db *db);
const char *qr_sql_db_dir(const qr_sql_db *db);
int qr_sql_db_threads(const qr_sql_db *db);

/* Settings of a session (SET / SHOW), applied to each statement it runs. */
typedef struct qr_sql_settings {
    int threads;                   /* workers per statement (1..the database's) */
    uint64_t memory_limit;         /* bytes per statement (QR_QCTX_DEFAULT_LIMIT) */
    uint64_t statement_timeout_ms; /* 0 = none */
} qr_sql_settings;

/* A session: one client's statements, run one at a time, with its settings.
 * Sessions are cheap (no thread, no file); each thread or connection has
 * its own. */
typedef struct qr_sql_session {
    qr_sql_db *db;
    int own_db; /* opened by qr_sql_open, closed by qr_sql_close */
    qr_sql_settings set;
} qr_sql_session;

/* A session on a shared database (the settings get their defaults). */
void qr_sql_session_init(qr_sql_session *s, qr_sql_db *db);
/* A session with a database of its own on datadir (`quarry sql`, tests).
 * 0, or -1 with e set; qr_sql_close also after a failure. */
int qr_sql_open(qr_sql_session *s, const char *datadir, int threads, qr_err *e);
/* End the session (and close its own database, if it has one). */
void qr_sql_close(qr_sql_session *s);

/* A statement's query context from the session's settings: its memory
 * limit and, with a statement timeout, its deadline from now; cancel (may
 * be NULL) is a flag another thread sets to cancel the statement. */
void qr_sql_ctx_init(const qr_sql_session *s, qr_qctx *ctx, const atomic_int *cancel);

/* Run one statement (n bytes of text) into out (initialised by the caller
 * with the statement's query context: qr_result_init). The result gets the
 * statement's columns and rows; EXPLAIN gives one column "QUERY PLAN".
 * 0, or -1 with e set (SQLSTATE code, message with " at character N" where
 * there is a position); the session stays usable after a failure. */
int qr_sql_exec(qr_sql_session *s, const char *sql, size_t n, qr_result *out, qr_err *e);

/* The statements of a text of several (separated by ';', as libpg_query's
 * scanner splits them: a ';' in a string or comment does not split):
 * *spans (malloc'ed, freed by the caller) gets one [off, off + len) per
 * statement, empty statements left out. 0, or -1 with e set (53200). */
typedef struct qr_sql_span {
    uint32_t off, len;
} qr_sql_span;
int qr_sql_split(const char *sql, size_t n, qr_sql_span **spans, uint32_t *nspans, qr_err *e);

/* Parse and bind only (no table is opened): for tests and the fuzzer.
 * 0, or -1 with e set. */
int qr_sql_check(const qr_catalog *c, const char *sql, size_t n, qr_err *e);
#endif
