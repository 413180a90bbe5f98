/* tx.h - a transaction block's writes (internal to src/sql).
 *
 * Outside BEGIN ... COMMIT each INSERT and COPY commits its own rows. Inside
 * one, the rows of every INSERT and COPY go to one writer per table that the
 * session keeps (sql/rows.h: a log record growing with them, then, past a
 * batch, unpublished segments), and COMMIT publishes each table's rows at
 * once: one log record or one manifest commit, all or nothing. ROLLBACK, an
 * error in any statement of the block (the block then fails: every statement
 * but COMMIT / ROLLBACK gets 25P02, and COMMIT rolls back), and a session
 * that ends or a connection that drops before COMMIT drop them. So a client
 * that retries a transaction whose COMMIT it never got an answer to before
 * the connection failed stores its rows once, and rows of a COPY cut short
 * are never half there.
 *
 * A block's writers outlive its statements, so they are charged to no
 * statement's memory_limit; each holds at most one batch of rows in memory
 * (sql/rows.h), the rest go to unpublished segments.
 *
 * What a block does not do: its own SELECTs do not see its uncommitted rows;
 * a COMMIT over several tables publishes them one table after another (each
 * table's rows atomic, not all of them together); and statements other than
 * SELECT, SET, SHOW, INSERT and COPY are refused (25001) once it has written
 * rows. A table whose rows pass a batch holds its writer slot from then to
 * the COMMIT (sql/rows.h): its flushes, merges and DDL wait that long, and
 * another block that needs the slot gets 55P03 after its lock_timeout
 * (10 s by default; which fails it: two blocks writing two tables in
 * opposite orders do not wait for each other for ever). */
#ifndef QR_SQL_TX_H
#define QR_SQL_TX_H
#include <stdint.h>

#include "sql/rows.h"
#include "sql/sql.h"
#include "sql/parse.h"

#define QR_TX_TABLES 16u /* tables one block may write */

/* May statement st run in s's transaction state? 0, or -1 with e set
 * (25P02 the block failed, 25001 a statement that cannot follow its
 * writes). */
int qr_tx_admit(const qr_sql_session *s, const PgQuery__Node *st, qr_err *e);
/* A statement of s failed: inside a block, the block fails (its rows are
 * dropped). Nothing outside one. */
void qr_tx_fail(qr_sql_session *s);
/* End s's block: commit publishes every table's rows (on a failure the
 * rest are dropped, -1 with e set); otherwise, or when the block failed,
 * they are dropped. *rolled_back: the block ended without its rows. */
int qr_tx_end(qr_sql_session *s, int commit, int *rolled_back, qr_err *e);

/* A statement's writer for table `name`: outside a block *own, begun here
 * (qr_rows_begin with seg_rows and ctx); inside one the session's writer
 * for the table, begun at the block's first write to it. *w is the one to
 * add rows to. 0, or -1 with e set (nothing to end; inside a block, the
 * block failed). */
int qr_tx_writer(qr_sql_session *s, const char *name, uint32_t seg_rows, qr_qctx *ctx,
                 qr_rowwriter *own, qr_rowwriter **w, qr_err *e);
/* A statement's writing failed: own aborted, or the block fails. */
void qr_tx_stmt_abort(qr_sql_session *s, qr_rowwriter *own, qr_rowwriter *w);
/* End a statement's writing with w from qr_tx_writer: ok commits own
 * (*rows its rows) or, inside a block, leaves the rows to COMMIT (*rows
 * the statement's); !ok aborts own or fails the block. 0, or -1 with e
 * set (a commit that failed). */
int qr_tx_stmt_end(qr_sql_session *s, qr_rowwriter *own, qr_rowwriter *w, int ok, uint64_t *rows,
                   qr_err *e);
#endif
