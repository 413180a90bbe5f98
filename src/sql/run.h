/* run.h - running a planned SELECT (plan.h) on a table's cached segments through
 * the search core (search/parallel.h, search/topk.h) and the operators of
 * exec/: count, top-k or first-k with the select list read for the winners
 * only, or hash aggregation then sort and LIMIT. Everything it takes is
 * charged to out->ctx and released before it returns. */
#ifndef QR_SQL_RUN_H
#define QR_SQL_RUN_H
#include "exec/result.h"
#include "index/segcache.h"
#include "sql/bind.h"
#include "util/pool.h"

/* refs: handles on the table's segments (index/segcache.h), held by the
 * caller until this returns. */
int qr_sql_run(const qr_sqlsel *s, int kind, qr_segref **refs, uint32_t nsegs, qr_pool *pool,
               int threads, qr_result *out, qr_err *e);
/* The rows of the table that s's WHERE clause selects (its index part and
 * its residual; the select list is not evaluated), in table order: fn(arg,
 * segment index into refs, rows, n) for runs of one segment (fn returns 0,
 * or -1 with e set to stop). What DELETE removes. Charged to ctx, which
 * also cancels it. 0, or -1 with e set. */
typedef int (*qr_run_rows_fn)(void *arg, uint32_t seg, const uint32_t *rows, uint32_t n,
                              qr_err *e);
int qr_sql_run_matches(const qr_sqlsel *s, qr_segref **refs, uint32_t nsegs, qr_pool *pool,
                       int threads, qr_qctx *ctx, qr_run_rows_fn fn, void *arg, qr_err *e);
/* A join, a subquery in FROM, or a statement with count(DISTINCT)
 * (runjoin.c): entry r of the scope (or the one table) over
 * refs[r][0..nsegs[r]), or the rows of its subquery in derived[r].
 * merge_join 0: by hash, even where the keyword indexes could count it
 * (SET enable_mergejoin = off; termjoin.c). */
int qr_sql_run_join(const qr_sqlsel *s, qr_segref ***refs, const uint32_t *nsegs,
                    qr_result *const *derived, qr_pool *pool, int threads, int merge_join,
                    qr_result *out, qr_err *e);
#endif
