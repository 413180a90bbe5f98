/* run_int.h - the pieces of run.c that the join executor (runjoin.c)
 * shares: result columns of expressions, batches over results, the group
 * post-processing (HAVING, select list, ORDER BY, LIMIT). Internal to sql/. */
#ifndef QR_SQL_RUN_INT_H
#define QR_SQL_RUN_INT_H
#include "exec/result.h"
#include "index/segcache.h"
#include "sql/bind.h"
#include "util/pool.h"

/* The result column of an expression (raw: a slot copied as stored). */
void qr_run_expr_rcol(const qr_expr *x, int *kind, int *type, int *raw);
/* The select list's output columns. */
int qr_run_define_columns(const qr_sqlsel *s, qr_result *out, qr_err *e);
/* Copy v into column col of row (text into out's arena). */
int qr_run_put_cell(qr_result *out, qr_cell *row, uint32_t col, const qr_cell *v, qr_err *e);
/* r's rows as a batch of ncols columns: batch column c is r's column map[c]
 * (-1: none), typed types[c]. Arrays from a. */
int qr_run_result_batch(const qr_result *r, uint32_t ncols, const int *map, const uint8_t *types,
                        qr_xbatch *b, qr_arena *a, qr_err *e);
/* Hidden output columns for ORDER BY expressions not in the select list. */
int qr_run_hidden_columns(const qr_sqlsel *s, qr_result *out, qr_err *e);
/* Sort out by the ORDER BY keys, LIMIT/OFFSET, drop the hidden columns. */
int qr_run_sort_slice(const qr_sqlsel *s, qr_result *out, qr_err *e);
/* R: the groups (keys, then aggregates, in the slots' stored domains):
 * HAVING, the select list and ORDER BY over them into out. */
int qr_run_post_groups(const qr_sqlsel *s, qr_result *R, qr_result *out, qr_err *e);
/* Every expression tree of s (for prepare / free): at most QR_RUN_MAX_TREES. */
#define QR_RUN_MAX_TREES                                                                           \
    (QR_SQL_MAX_ITEMS + QR_SQL_MAX_ORDER + QR_SQL_MAX_GROUP + QR_SQL_MAX_AGGS + 2 +                 \
     QR_SQL_MAX_RANGES * 10)
uint32_t qr_run_trees(const qr_sqlsel *s, qr_expr **t);
/* A statement's start (its output columns defined, its trees t[0..*nt)
 * prepared: room for QR_RUN_MAX_TREES) and end (what preparing made, freed,
 * also after a failed start). */
int qr_run_begin(const qr_sqlsel *s, qr_result *out, qr_expr **t, uint32_t *nt, qr_err *e);
void qr_run_end(qr_expr **t, uint32_t nt);
/* The join counts the keyword indexes answer (termjoin.c): entry 0's column
 * col[0] = entry 1's column col[1], their keyword indexes sec[0], sec[1]. */
typedef struct qr_tjshape {
    uint32_t col[2];
    uint16_t sec[2];
    const qr_expr *rest[2]; /* each side's residual on its key, or NULL (also
                             * when it is `key IS NOT NULL`: true of every key) */
    int gside;              /* GROUP BY a column of this side (-1: no GROUP BY) */
    uint32_t gcol;          /* that column, with keyword index gsec */
    uint16_t gsec;
} qr_tjshape;
/* 1 when s (a join) is that shape (*sh set), else 0. */
int qr_run_term_join_shape(const qr_sqlsel *s, qr_tjshape *sh);
/* Run it into out: 0, 1 when a segment cannot answer (nothing done: join
 * by hash), or -1 with e set. */
int qr_run_term_join(const qr_sqlsel *s, const qr_tjshape *sh, qr_segref ***refs,
                     const uint32_t *nsegs, qr_pool *pool, int threads, qr_result *out, qr_err *e);
/* count(DISTINCT key) (and count(key)) of one table whose key column has a
 * keyword index, WHERE what its index answers plus at most a residual on
 * the key: 1 when s is that (sh: col[0], sec[0], rest[0]), else 0. Run by
 * qr_run_term_distinct as the join's are (0, 1: by hash, -1). */
int qr_run_term_distinct_shape(const qr_sqlsel *s, qr_tjshape *sh);
int qr_run_term_distinct(const qr_sqlsel *s, const qr_tjshape *sh, qr_segref **refs,
                         uint32_t nsegs, qr_pool *pool, int threads, qr_result *out, qr_err *e);
#endif
