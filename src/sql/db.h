/* db.h - what the statement modules (stmt_*.c, rows.c) need of the shared
 * database beyond sql.h; internal to src/sql (session.c implements it).
 *
 * Locks:
 *   - the catalog lock: shared by statements that read the catalog (SELECT,
 *     INSERT, COPY), exclusive to those that change it (CREATE, DROP,
 *     CREATE INDEX, TRUNCATE), which reload it before they release it;
 *   - a table's in-process writer slot (qr_sqldb_writer_begin): one writer
 *     per table per process, the others wait (two sessions' INSERTs
 *     serialise here rather than fail on the table's LOCK file, which flock
 *     gives to one open file at a time);
 *   - the table's LOCK file (qr_table_open with QR_TABLE_WRITE), against
 *     other processes (55P03 when one holds it).
 * Nobody waits for a writer slot while holding the catalog lock (a slot
 * may be held for long: a client's COPY FROM STDIN); DDL takes the slot and
 * LOCK first, then the catalog lock exclusively.
 * The writer slot is not a mutex: it may be released by another thread
 * than the one that took it (a server's COPY FROM STDIN). */
#ifndef QR_SQL_DB_H
#define QR_SQL_DB_H
#include "index/table.h"
#include "sql/parse.h"
#include "sql/run.h"
#include "sql/sql.h"
#include "util/pool.h"

/* The live state (sql/live.c) when the database runs live, else NULL. */
struct qr_live *qr_sqldb_live(qr_sql_db *db);
void qr_sqldb_set_live(qr_sql_db *db, struct qr_live *l);
/* Flush what waits and stop the flusher (qr_sql_db_close). */
void qr_live_stop(struct qr_live *l);

/* The database's thread pool (threads - 1 workers; NULL: none), for a
 * statement's own parallel work (VACUUM writes its segments on it). */
qr_pool *qr_sql_db_pool(qr_sql_db *db);
void qr_sqldb_lock(qr_sql_db *db, int exclusive);
void qr_sqldb_unlock(qr_sql_db *db);
/* The catalog as last read (the caller holds the catalog lock). */
const qr_catalog *qr_sqldb_catalog(const qr_sql_db *db);
/* Read DATA/CATALOG again now (the caller holds the lock exclusively).
 * 0, or -1 with e set (the old catalog is kept). */
int qr_sqldb_reload(qr_sql_db *db, qr_err *e);
/* Forget table `name`: its snapshot (definition and manifest) and its
 * entries in the segment cache, after a DROP, TRUNCATE or CREATE INDEX. */
void qr_sqldb_forget_table(qr_sql_db *db, const char *name);
/* Take table `name`'s in-process writer slot, waiting while another
 * session holds it; 0, or -1 with e set (out of memory). */
int qr_sqldb_writer_begin(qr_sql_db *db, const char *name, qr_err *e);
/* The same, waiting at most wait_ms: 0 taken, 1 not (another holds it),
 * -1 with e set. Background work (flushes, merges) takes the slot this way
 * so that it can give up when the table is dropped meanwhile (DROP holds
 * the slot while it waits for them). */
int qr_sqldb_writer_try(qr_sql_db *db, const char *name, uint32_t wait_ms, qr_err *e);
void qr_sqldb_writer_end(qr_sql_db *db, const char *name);
/* Bind, plan and run SELECT node st of parse p into out (the caller holds
 * the catalog lock, shared or exclusive). 0, or -1 with e set. */
int qr_sql_select_node(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__Node *st,
                       qr_result *out, qr_err *e);
/* DELETE's scan: bind SELECT node st of parse p (its scalar and IN
 * subqueries run first) against table t, which the caller holds for
 * writing, and hand fn the rows its WHERE clause selects in t's manifest
 * (segment i of fn is t->man.segs[i]). Takes the catalog lock shared.
 * Charged to ctx. 0, or -1 with e set. */
int qr_sql_table_matches(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__Node *st,
                         const qr_table *t, qr_qctx *ctx, qr_run_rows_fn fn, void *arg,
                         qr_err *e);
#endif
