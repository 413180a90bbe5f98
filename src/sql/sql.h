/* sql.h - the SQL engine's contract: a session over a data directory runs
 * one statement at a time into a result set (exec/result.h).
 *
 *   text -> parse (parse.h: libpg_query) -> bind (bind.h: the catalog)
 *        -> plan (plan.h) -> run (run.c: the search core and exec/)
 *
 * Supported in this version: SELECT over one table with WHERE (the
 * full-text dialect and index predicates), GROUP BY columns, aggregates,
 * ORDER BY, LIMIT/OFFSET, and EXPLAIN SELECT; SET / SHOW / RESET and
 * BEGIN / COMMIT / ROLLBACK (stmt_set.c); CREATE TABLE, DROP TABLE,
 * CREATE INDEX, TRUNCATE, SHOW TABLES (stmt_ddl.c); INSERT ... VALUES and
 * INSERT ... SELECT (stmt_insert.c); COPY FROM / TO a file, COPY FROM
 * STDIN through qr_sql_copy_begin and COPY TO STDOUT through
 * qr_sql_copy_out_begin (stmt_copy.c); CREATE / ALTER / DROP USER
 * (stmt_user.c); SELECTs over pg_catalog and information_schema (pgcat.h:
 * the catalog answers). docs/SQL.md lists them.
 * Everything else fails with 0A000 naming what is not supported.
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
/* Write every table's logged rows that are not in segments yet (a server
 * stopped by a crash) as segments: sql/live.h. Call before serving, after
 * anything that judges commits by manifest generations (the HTTP
 * idempotency store) has read them. A table whose log another process
 * owns is left to it. 0, or -1 with e set (XX001 a log damaged before its
 * last record). */
int qr_sql_db_recover(qr_sql_db *db, qr_err *e);

/* Open every table's committed segments and their index fields into the
 * segment cache, each field's term index verified whole, so a server's
 * first queries find them open and mapped (opening the 525 segments of a
 * 100M-row table and their fields is most of a first query's time
 * otherwise). Tables are taken in catalog order while their
 * segments fit the cache's bound (a table that would not fit is passed
 * over: warming it would evict what is warm). Runs beside statements;
 * stops early when *stop is set. *segs and *fields: what was opened.
 * 0, or -1 with e set (a segment that does not open: its queries will say
 * so too). */
int qr_sql_db_warm(qr_sql_db *db, const atomic_int *stop, uint32_t *segs, uint64_t *fields,
                   qr_err *e);

/* Running live (sql/live.h): a statement's rows are acknowledged once in
 * the table's write-ahead log and become visible at the next flush. */
#define QR_LIVE_MAX_UNMERGED 128u
#define QR_SQL_LOCK_TIMEOUT_MS 10000u /* lock_timeout's default (PostgreSQL's is none) */
typedef struct qr_live_opts {
    uint32_t refresh_ms;      /* live segments older than this are committed (default 1000) */
    int wal_sync;             /* 1 (default): fsync the log before acknowledging */
    size_t max_pending;       /* bytes waiting per table before writers wait, then 53000 */
    uint32_t max_unmerged;    /* segments the merger is not done with, per table, before
                               * writers wait, then 53000 (QR_LIVE_MAX_UNMERGED) */
    uint32_t pending_wait_ms; /* how long a writer waits for room (default 5000) */
    int merge;                /* 1 (default): background merges (sql/merge.h) */
    int log_merges;           /* 1: a line on stderr per merge */
} qr_live_opts;
void qr_live_opts_default(qr_live_opts *o);
/* Start running live (the flusher thread); qr_sql_db_close flushes and
 * stops it. 0, or -1 with e set. */
int qr_sql_db_live(qr_sql_db *db, const qr_live_opts *o, qr_err *e);

/* A setting kept as text (SET name = value for every name that is not one
 * of the numeric settings below: application_name, DateStyle, ...). */
typedef struct qr_sql_guc {
    char *name;  /* lowercase; malloc'ed */
    char *value; /* malloc'ed */
} qr_sql_guc;

/* Settings of a session (SET / SHOW), applied to each statement it runs.
 * The numeric fields may be set directly (quarry sql's flags do); the text
 * ones only through qr_sql_set or SET. */
typedef struct qr_sql_settings {
    int threads;                   /* SET threads: workers per statement (1..the database's) */
    uint64_t memory_limit;         /* SET memory_limit: bytes per statement, 0 = none
                                    * (QR_QCTX_DEFAULT_LIMIT) */
    uint64_t statement_timeout_ms; /* SET statement_timeout: 0 = none */
    uint64_t lock_timeout_ms;      /* SET lock_timeout: a transaction block's wait for a
                                    * table's writer slot (sql/tx.h), then 55P03; 0 = none */
    uint32_t ngucs;
    qr_sql_guc *gucs; /* malloc'ed; freed by qr_sql_close */
} qr_sql_settings;

/* A session: one client's statements, run one at a time, with its settings.
 * Sessions are cheap (no thread, no file); each thread or connection has
 * its own. */
typedef struct qr_sql_session {
    qr_sql_db *db;
    int own_db; /* opened by qr_sql_open, closed by qr_sql_close */
    qr_sql_settings set;
    /* what RESET returns the numeric settings to (qr_sql_session_boot) */
    int boot_threads;
    uint64_t boot_memory_limit, boot_timeout_ms, boot_lock_ms;
    char user[64];  /* who runs the statements (a server sets it; "" in quarry sql):
                     * CURRENT_USER of ALTER / DROP USER, and who the catalog
                     * answers say is connected ("" = "quarry") */
    int restricted; /* not a superuser: CREATE / ALTER / DROP USER are 42501 (a
                     * server sets it; 0 by default: quarry sql owns its directory) */
    int in_tx;      /* between BEGIN and COMMIT / ROLLBACK */
    int tx_failed;  /* a statement of the block failed: COMMIT rolls back (tx.h) */
    struct qr_sql_tx *tx; /* the block's writes (tx.h), NULL before its first */
    int has_saved;  /* a SET LOCAL in this transaction: saved.gucs holds
                     * each name's value before it (NULL: not set), which
                     * COMMIT / ROLLBACK put back */
    qr_sql_settings saved;
    int32_t backend_pid; /* pg_backend_pid(): the server's key for the session */
} qr_sql_session;

/* A session on a shared database (the settings get their defaults). */
void qr_sql_session_init(qr_sql_session *s, qr_sql_db *db);
/* A session with a database of its own on datadir (`quarry sql`, tests).
 * 0, or -1 with e set; qr_sql_close also after a failure. */
int qr_sql_open(qr_sql_session *s, const char *datadir, int threads, qr_err *e);
/* End the session (and close its own database, if it has one): frees its
 * settings. */
void qr_sql_close(qr_sql_session *s);
/* ReadyForQuery's transaction status: 'I' idle, 'T' in a transaction
 * block, 'E' in a failed one (sql/tx.h). */
char qr_sql_tx_status(const qr_sql_session *s);
/* An error reached the client (one the server found itself too: a bad
 * Bind, say): a transaction block fails, as one whose statement failed. */
void qr_sql_tx_error(qr_sql_session *s);
/* The session's numeric settings as they are now become what RESET and
 * RESET ALL return to (call after applying a client's startup options or
 * command-line flags). */
void qr_sql_session_boot(qr_sql_session *s);

/* ---- settings (stmt_set.c; docs/SQL.md "Settings") ----
 * Names are case-insensitive. threads: 1..qr_sql_db_threads; memory_limit
 * (also quarry.memory_limit): bytes, with a unit kB, MB, GB, TB (1024-based,
 * as PostgreSQL) or B, 0 = no limit; statement_timeout: ms, or with a unit
 * us, ms, s, min, h, d, 0 = none. client_encoding accepts only UTF8 (and its
 * spellings), TimeZone only UTC (GMT, Etc/UTC, Z, +00:00): anything else is
 * 22023. Any other name is kept as text.
 * qr_sql_set is SET name = value (what a server applies for the options of
 * a startup packet): 0, or -1 with e set (22023, 22P02). */
int qr_sql_set(qr_sql_session *s, const char *name, const char *value, qr_err *e);
/* The value SHOW name prints, written into buf (NUL-terminated, cut to n):
 * 0, or -1 with e set (42704 for a name never set that has no default).
 * Defaults exist for the parameters PostgreSQL reports to clients
 * (server_version, server_encoding, client_encoding, DateStyle, TimeZone,
 * integer_datetimes, standard_conforming_strings, IntervalStyle, ...). */
int qr_sql_show(const qr_sql_session *s, const char *name, char *buf, size_t n, qr_err *e);

/* A statement's query context from the session's settings: its memory
 * limit and, with a statement timeout, its deadline from now; cancel (may
 * be NULL) is a flag another thread sets to cancel the statement. */
void qr_sql_ctx_init(const qr_sql_session *s, qr_qctx *ctx, const atomic_int *cancel);

/* Run one statement (n bytes of text) into out (initialised by the caller
 * with the statement's query context: qr_result_init). The result gets the
 * statement's columns and rows; EXPLAIN gives one column "QUERY PLAN".
 * Statements without rows leave no column and set out->tag to
 * PostgreSQL's command tag ("CREATE TABLE", "DROP TABLE", "CREATE INDEX",
 * "TRUNCATE TABLE", "INSERT 0 3", "COPY 10", "SET", "RESET", "BEGIN",
 * "COMMIT", "ROLLBACK"); SHOW and SHOW TABLES fill text columns and set
 * "SHOW"; SELECT leaves the tag empty (the server says "SELECT n").
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

/* ---- COPY ... FROM STDIN (stmt_copy.c) ----
 * The server's side of the COPY sub-protocol: qr_sql_copy_begin takes the
 * statement text (`COPY t [(cols)] FROM STDIN [WITH] (FORMAT
 * text|csv|json|ndjson [, HEADER true] [, DELIMITER ','] [, NULL '...'])`),
 * checks it, and takes the table's writer lock (index/table.h, and the
 * database's in-process one: another session's INSERT or COPY into the
 * same table waits) until end or abort. qr_sql_copy_feed takes the data in
 * chunks cut anywhere (in the middle of a line, a quoted field or a UTF-8
 * sequence); rows are written to segments as they come (one per 131072
 * rows), so memory stays bounded whatever the input size. qr_sql_copy_end
 * ends the input (a last line without a newline counts), writes the last
 * segment and publishes them all in one manifest commit: *rows gets the
 * count (the tag is "COPY n"). Any failure of feed or end (the first bad
 * row: "STDIN:LINE: column C: reason", 22P02 / 22P04 / 23502 / 42804 ...)
 * aborts the copy: nothing is committed, its segments are removed and ci
 * is freed (do not call abort after a failed feed or end). qr_sql_copy_abort
 * drops a copy the client abandoned (CopyFail). The session must not run
 * another statement until the copy ends. The copy runs without a statement
 * timeout; the server's reads bound it. */
typedef struct qr_sql_copy_in qr_sql_copy_in;
/* 1 when sql (n bytes) is one COPY ... FROM STDIN statement: the server
 * routes it to qr_sql_copy_begin, everything else to qr_sql_exec. */
int qr_sql_is_copy_from_stdin(const char *sql, size_t n);
/* NULL with e set: syntax, 42P01, 0A000 (not FROM STDIN: run it with
 * qr_sql_exec), 55P03 when another process writes the table. */
qr_sql_copy_in *qr_sql_copy_begin(qr_sql_session *s, const char *sql, size_t n, qr_err *e);
/* The number of columns the copy fills (for CopyInResponse). */
uint32_t qr_sql_copy_columns(const qr_sql_copy_in *ci);
int qr_sql_copy_feed(qr_sql_copy_in *ci, const void *p, size_t n, qr_err *e);
int qr_sql_copy_end(qr_sql_copy_in *ci, uint64_t *rows, qr_err *e);
void qr_sql_copy_abort(qr_sql_copy_in *ci);

/* ---- COPY ... TO STDOUT (stmt_copy.c) ----
 * COPY {t [(cols)] | (SELECT ...)} TO STDOUT [WITH] (FORMAT text|csv|json
 * [, HEADER] [, DELIMITER 'c']): qr_sql_copy_out_begin runs the query (its
 * rows held under ctx's memory limit, as a SELECT's result) and
 * qr_sql_copy_out_line renders it one line at a time, so a server sends
 * the data in batches and memory holds the rows once. Lines are as
 * PostgreSQL writes them: text format with \N for NULL and backslash
 * escapes (\\, the delimiter, \b \f \n \r \t \v), csv quoting a field
 * that holds the delimiter, a quote, CR or LF, an empty text ("") and a
 * lone \. (NULL is an unquoted empty field), an optional header line of
 * the column names; json one object per row. Values are Quarry's text of
 * each (timestamps RFC 3339 with nanoseconds, as COPY TO a file writes
 * them), so what COPY TO writes COPY FROM reads back to the same rows.
 * Through qr_sql_exec it is 0A000. */
enum { QR_SQL_COPY_TEXT = 0, QR_SQL_COPY_CSV = 1, QR_SQL_COPY_JSON = 2 };
typedef struct qr_sql_copy_out {
    qr_result r;     /* the rows */
    int fmt;         /* QR_SQL_COPY_* */
    char delim;      /* text and csv */
    int header_left; /* the header line is still to come */
    uint64_t next;   /* the next row to render */
    qr_buf t;        /* scratch: one value's text */
} qr_sql_copy_out;
/* 1 when sql (n bytes) is one COPY ... TO STDOUT statement. */
int qr_sql_is_copy_to_stdout(const char *sql, size_t n);
/* 0 and co filled (free it with qr_sql_copy_out_free), or -1 with e set
 * (syntax, 42P01, 42703, 0A000, 53200, the query's errors) and nothing to
 * free. */
int qr_sql_copy_out_begin(qr_sql_session *s, const char *sql, size_t n, qr_qctx *ctx,
                          qr_sql_copy_out *co, qr_err *e);
/* The number of columns of each line (for CopyOutResponse). */
uint32_t qr_sql_copy_out_columns(const qr_sql_copy_out *co);
/* Append the next line (with its '\n') to b: 1, or 0 when none is left
 * (b unchanged). Out of memory shows as b->oom. */
int qr_sql_copy_out_line(qr_sql_copy_out *co, qr_buf *b);
void qr_sql_copy_out_free(qr_sql_copy_out *co);

/* ---- users (stmt_user.c; docs/SERVER.md "Users") ----
 * CREATE USER / ROLE name [WITH] [PASSWORD 'pw' | PASSWORD NULL]
 * [SUPERUSER | NOSUPERUSER] [LOGIN | NOLOGIN], ALTER USER / ROLE name
 * [WITH] options, DROP USER / ROLE [IF EXISTS] name [, ...] (tags CREATE
 * ROLE, ALTER ROLE, DROP ROLE) keep users in the data directory's USERS
 * file (mode 0600, replaced atomically), each with PostgreSQL's
 * SCRAM-SHA-256 verifier of its password (hashed at once; a
 * 'SCRAM-SHA-256$...' string is taken as the verifier). CREATE USER
 * implies LOGIN, CREATE ROLE NOLOGIN. A restricted session may only
 * change its own password (ALTER USER CURRENT_USER PASSWORD '...').
 * Errors: 42501 (restricted), 42710 (exists), 42704 (no such role), 42602
 * (a name over 63 bytes or with a tab or line break), 0A000 (other
 * options). A server reads the users at each connection, so one created
 * is known to the next connection. */
typedef struct qr_sql_user {
    char name[64];
    int login, superuser;
    char verifier[256]; /* "" = no password */
} qr_sql_user;
/* User name of the data directory: 1 and *u, 0 when there is none, -1 with
 * e set (USERS unreadable or malformed, naming its line). */
int qr_sql_user_find(const qr_sql_db *db, const char *name, qr_sql_user *u, qr_err *e);
/* How many users the data directory has (0 without a USERS file), or -1
 * with e set. */
long qr_sql_user_count(const qr_sql_db *db, qr_err *e);

/* Parse and bind only (no table is opened): for tests and the fuzzer.
 * 0, or -1 with e set. */
int qr_sql_check(const qr_catalog *c, const char *sql, size_t n, qr_err *e);
#endif
