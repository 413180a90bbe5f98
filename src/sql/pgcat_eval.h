/* pgcat_eval.h - the evaluator's pieces shared by pgcat_eval.c (queries)
 * and pgcat_expr.c (expressions): range items, scopes, the entry points. */
#ifndef QR_SQL_PGCAT_EVAL_H
#define QR_SQL_PGCAT_EVAL_H
#include "sql/pgcat_int.h"

#define PC_MAX_ITEMS 16 /* FROM items of one query level */

/* One FROM item: its relation and, while rows are walked, its current row
 * (NULL: the NULL row of a LEFT JOIN that found no match). */
typedef struct pcitem {
    const char *alias; /* the alias, or the relation's name */
    const pcrel *rel;
    const pcv *row;
    PgQuery__Node *const *using_cols; /* JOIN ... USING (these) */
    size_t nusing;
} pcitem;

/* The names one query level sees; up: the enclosing query's (correlated
 * subqueries). A grouped scope also has its group's tuples (ntup x n row
 * pointers) for the aggregates; window values are keyed by their node. */
typedef struct pcscope {
    const struct pcscope *up;
    uint32_t n;
    pcitem *it;
    int grouped;
    uint64_t ntup;
    const pcv *const *tup;
    uint32_t nwin;
    const PgQuery__FuncCall *const *win;
    const pcv *winv;
} pcscope;

int pc_eval(pcx *x, const PgQuery__Node *n, const pcscope *s, pcv *out);
int pc_typeof(pcx *x, const PgQuery__Node *n, const pcscope *s, uint32_t *t);
int pc_cast(pcx *x, const pcv *v, uint32_t t, int32_t loc, pcv *out);
int pc_cmp(const pcv *a, const pcv *b);
int pc_truth(const pcv *v); /* 1 true, 0 false, -1 NULL */
int pc_resolve(pcx *x, const PgQuery__ColumnRef *cr, const pcscope *s, const pcscope **at,
               uint32_t *item, uint32_t *col);
const char *pc_fname(const PgQuery__FuncCall *f, int *schema_ok);
int pc_is_agg(const PgQuery__FuncCall *f);
/* Set-returning functions at the top of a select list (unnest,
 * generate_series, information_schema._pg_expandarray): 1 for one, and its
 * rows for the current row of s (*rows in the arena, *n of them). */
int pc_is_srf(const PgQuery__FuncCall *f);
int pc_srf_rows(pcx *x, const PgQuery__FuncCall *f, const pcscope *s, pcv **rows, uint32_t *n);
/* 1 for a function only the catalog answers know (qr_pgcat_wants) */
int pc_is_catalog_fn(const char *name);
/* 1 for a function the vectorized engine evaluates (it keeps those). */
int pc_is_engine_fn(const char *name);
/* Run a query (outer: the enclosing scope, or NULL) into *out (arena).
 * limit1: one row is enough (EXISTS). */
int pc_select(pcx *x, const PgQuery__SelectStmt *q, const pcscope *outer, int limit1, pcrel **out);
/* The select list of q over the gathered tuples (from: the query's FROM
 * state; ntup x its items' row pointers). */
int pc_project(pcx *x, const PgQuery__SelectStmt *q, void *from, const pcv **tup, uint64_t ntup,
               pcrel **out);
/* The type of a query's first output column. */
int pc_select_type(pcx *x, const PgQuery__SelectStmt *q, const pcscope *outer, uint32_t *t);
#endif
