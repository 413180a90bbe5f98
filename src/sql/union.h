/* union.h - UNION, INTERSECT and EXCEPT [ALL] of SELECTs (union.c): each
 * arm a statement of its own, run through the session's executor (run),
 * the results combined. */
#ifndef QR_SQL_UNION_H
#define QR_SQL_UNION_H
#include "exec/result.h"
#include "sql/bind.h"

typedef int (*qr_sql_run_fn)(void *ctx, const qr_sqlsel *sel, int kind, qr_result *out,
                             qr_err *e);

/* st: a SelectStmt whose op is a set operation. 0, or -1 with e set
 * (42601 / 42804 for arms that do not match, 54000 past 64 arms). */
int qr_sql_union(const qr_sqlparse *p, const PgQuery__SelectStmt *st, const qr_catalog *c,
                 qr_arena *a, qr_sql_run_fn run, void *ctx, qr_result *out, qr_err *e);
#endif
