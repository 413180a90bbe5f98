/* stmt.h - the statements that are not SELECT: their one entry point from
 * qr_sql_exec (stmt.c dispatches by node type) and the modules behind it.
 * Internal to src/sql; the public side is sql.h.
 *
 *   stmt_set.c     SET, SHOW, RESET, BEGIN / COMMIT / ROLLBACK, SHOW TABLES
 *   stmt_ddl.c     CREATE TABLE, DROP TABLE, CREATE INDEX, TRUNCATE
 *   stmt_insert.c  INSERT ... VALUES, INSERT ... SELECT
 *   stmt_copy.c    COPY FROM / TO a file, COPY FROM STDIN, TO STDOUT (qr_sql_copy_*)
 *   stmt_user.c    CREATE / ALTER / DROP USER (ROLE): the USERS file
 *   rows.c         rows into a table: NDJSON lines -> segments -> one commit
 *   csv.c          CSV (RFC 4180) and PostgreSQL text-format records
 *
 * Each statement takes the locks it needs (db.h), fills out's tag
 * ("INSERT 0 3", "CREATE TABLE", ...) and, for SHOW, one text column.
 * Errors carry the SQLSTATE and " at character N" where there is a
 * position (qr_sqlp_at). */
#ifndef QR_SQL_STMT_H
#define QR_SQL_STMT_H
#include "sql/parse.h"
#include "sql/sql.h"

/* Run statement st (anything but SelectStmt / ExplainStmt). */
int qr_sql_stmt(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__Node *st, qr_result *out,
                qr_err *e);

/* stmt_set.c */
int qr_sql_stmt_set(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__VariableSetStmt *v,
                    qr_result *out, qr_err *e);
int qr_sql_stmt_show(qr_sql_session *s, const PgQuery__VariableShowStmt *v, qr_result *out,
                     qr_err *e);
int qr_sql_stmt_transaction(qr_sql_session *s, const qr_sqlparse *p,
                            const PgQuery__TransactionStmt *t, qr_result *out, qr_err *e);
/* Free the text settings of s (and of its saved copy). */
void qr_sql_settings_free(qr_sql_session *s);

/* stmt_ddl.c */
int qr_sql_stmt_create(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__CreateStmt *c,
                       qr_result *out, qr_err *e);
int qr_sql_stmt_drop(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__DropStmt *d,
                     qr_result *out, qr_err *e);
int qr_sql_stmt_index(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__IndexStmt *x,
                      qr_result *out, qr_err *e);
int qr_sql_stmt_truncate(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__TruncateStmt *t,
                         qr_result *out, qr_err *e);
int qr_sql_show_tables(qr_sql_session *s, qr_result *out, qr_err *e);
/* Build table's indexes marked building (CREATE INDEX on a table that held
 * rows) for the segments that lack them: left to the database's merger
 * when it runs one (live), else done here, answering to ctx (cancel,
 * timeout). 0, or -1 with e set (the indexes stay marked building). */
int qr_sql_build_indexes(qr_sql_session *s, const char *table, qr_qctx *ctx, qr_err *e);
/* stmt_delete.c */
int qr_sql_stmt_delete(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__DeleteStmt *d,
                       qr_result *out, qr_err *e);
/* stmt_alter.c */
int qr_sql_stmt_alter(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__AlterTableStmt *a,
                      qr_result *out, qr_err *e);
/* Interval text ("7 days", "1 day 12 hours", "90 min", "3600") in seconds:
 * 0, or -1 when it does not read. */
int qr_sql_interval_s(const char *s, int64_t *out);
/* The value of a (retention = ...) option in seconds; -1 with e set (22023
 * with its position). */
int qr_sql_retention_option(const qr_sqlparse *p, const PgQuery__DefElem *de, int64_t *secs,
                            qr_err *e);

/* stmt_vacuum.c: VACUUM merges segments */
int qr_sql_stmt_vacuum(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__VacuumStmt *v,
                       qr_result *out, qr_err *e);

/* stmt_insert.c */
int qr_sql_stmt_insert(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__InsertStmt *x,
                       qr_result *out, qr_err *e);

/* stmt_copy.c */
int qr_sql_stmt_copy(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__CopyStmt *c,
                     qr_result *out, qr_err *e);

/* stmt_user.c: CreateRoleStmt, AlterRoleStmt, DropRoleStmt */
int qr_sql_stmt_role(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__Node *st,
                     qr_result *out, qr_err *e);

/* Helpers shared by the modules (stmt.c). */
/* A relation's name: 42P01-style checks are the caller's; 0A000 for a
 * schema other than public or a catalog name. */
int qr_sql_relname(const qr_sqlparse *p, const PgQuery__RangeVar *rv, qr_err *e);
/* The text of a String node, NULL for any other node. */
const char *qr_sql_strval(const PgQuery__Node *n);
#endif
