/* initplan.h - subqueries that run once, before their statement is bound.
 *
 * A scalar subquery `(SELECT ...)` and `EXISTS (SELECT ...)` that do not
 * refer to the outer query are what PostgreSQL calls an InitPlan: their
 * value is the same for every row. qr_sql_initplans runs each one (through
 * a callback, so that binding-only checks can stand in) and puts its value
 * into the parse tree in its place as a literal: a number, a string, a
 * boolean, NULL or TIMESTAMP '...'. The binder then sees constants, so the
 * value can go into the index filter (`Status = (SELECT max(Status) ...)`)
 * like any literal.
 *
 * A subquery that names a column or table of the outer query cannot run on
 * its own: its error (42703 or 42P01) gets the note that correlated
 * subqueries are not supported. `x NOT IN (SELECT ...)` becomes
 * `NOT x IN (v1, ...)` over the subquery's distinct values (at most 1024),
 * which keeps SQL's three-valued logic (a NULL value makes it NULL; no rows
 * make it true). `x IN (SELECT ...)` is not touched here (it is a semi join:
 * bindjoin.c).
 */
#ifndef QR_SQL_INITPLAN_H
#define QR_SQL_INITPLAN_H
#include "exec/result.h"
#include "sql/parse.h"

/* Run subquery node sub (a SELECT) into out (initialised, empty): 0, or -1
 * with e set. */
typedef int (*qr_sql_subrun)(void *ctx, PgQuery__Node *sub, qr_result *out, qr_err *e);

/* Replace every scalar and EXISTS subquery of statement st (not those
 * nested inside them: running one does its own) by its value. Results are
 * charged to ctx. 0, or -1 with e set: 21000 for a scalar subquery of more
 * than one row, 42601 for one of more than one column. */
int qr_sql_initplans(qr_sqlparse *p, PgQuery__Node *st, qr_sql_subrun run, void *rctx,
                     qr_qctx *ctx, qr_err *e);
#endif
