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
/* A join, or a statement with count(DISTINCT) (runjoin.c): entry r of the
 * scope (or the one table) over refs[r][0..nsegs[r]). */
int qr_sql_run_join(const qr_sqlsel *s, qr_segref ***refs, const uint32_t *nsegs, qr_pool *pool,
                    int threads, qr_result *out, qr_err *e);
#endif
