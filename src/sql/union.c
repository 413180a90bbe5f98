/* union.c - UNION, INTERSECT and EXCEPT, each with or without ALL
 * (union.h): the tree of set operations libpg_query gives (INTERSECT binds
 * tighter) is evaluated bottom-up; each arm is bound, planned and run as a
 * SELECT of its own into its own result. UNION ALL appends; UNION then keeps
 * one of each row; INTERSECT and EXCEPT sort both sides by every column and
 * walk them together, keeping of each distinct row min(l, r) copies
 * (INTERSECT ALL), one if both have it (INTERSECT), max(l - r, 0) (EXCEPT
 * ALL) or one if only the left has it (EXCEPT); NULLs equal NULLs, as in
 * SQL's set operations. A parenthesised operation's own ORDER BY and LIMIT
 * apply to its result, the statement's to the whole. */
#include "sql/union.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sql/plan.h"

typedef PgQuery__Node Node;

#define MAX_ARMS 64

static int same_kind(const qr_rcol *a, const qr_rcol *b)
{
    if (a->kind != b->kind)
        return 0;
    return a->kind != QR_RK_INT || a->type == b->type;
}

static int order_and_limit(const qr_sqlparse *p, const PgQuery__SelectStmt *st, qr_result *out,
                           qr_err *e)
{
    uint32_t keys[QR_SQL_MAX_ORDER];
    uint8_t desc[QR_SQL_MAX_ORDER];
    if (st->n_sort_clause > QR_SQL_MAX_ORDER)
        return qr_errf(e, QR_E_TOO_LONG, "at most %d ORDER BY keys", QR_SQL_MAX_ORDER);
    for (size_t i = 0; i < st->n_sort_clause; i++) {
        const PgQuery__SortBy *sb = st->sort_clause[i]->sort_by;
        const Node *n = sb->node;
        int at = -1;
        if (n && n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
            n->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
            int64_t pos = n->a_const->ival->ival;
            if (pos >= 1 && (uint64_t)pos <= out->ncols)
                at = (int)pos - 1;
        } else if (n && n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
                   n->column_ref->n_fields == 1 &&
                   n->column_ref->fields[0]->node_case == PG_QUERY__NODE__NODE_STRING) {
            const char *nm = n->column_ref->fields[0]->string->sval;
            for (uint32_t c = 0; c < out->ncols && at < 0; c++)
                if (!strcasecmp(out->cols[c].name, nm))
                    at = (int)c;
        }
        if (at < 0) {
            qr_errf(e, QR_E_FEATURE,
                    "ORDER BY of a UNION takes output column names or positions");
            return qr_sqlp_at(p, sb->location, e);
        }
        keys[i] = (uint32_t)at;
        desc[i] = (uint8_t)((sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC ? QR_SORT_DESC
                                                                                 : 0) |
                            (qr_sql_nulls_flip(sb) ? QR_SORT_NULLS_FLIP : 0));
    }
    if (st->n_sort_clause && qr_result_sort(out, keys, desc, (uint32_t)st->n_sort_clause, e) != 0)
        return -1;
    uint64_t lim = UINT64_MAX, off = 0;
    const Node *ln[2] = {st->limit_count, st->limit_offset};
    uint64_t *lv[2] = {&lim, &off};
    for (int k = 0; k < 2; k++) {
        const Node *n = ln[k];
        if (!n || (n->node_case == PG_QUERY__NODE__NODE_A_CONST && n->a_const->isnull))
            continue;
        if (n->node_case != PG_QUERY__NODE__NODE_A_CONST ||
            n->a_const->val_case != PG_QUERY__A__CONST__VAL_IVAL || n->a_const->ival->ival < 0)
            return qr_errf(e, QR_E_ARGS, "%s must be a non-negative integer literal",
                           k ? "OFFSET" : "LIMIT");
        *lv[k] = (uint64_t)n->a_const->ival->ival;
    }
    qr_result_slice(out, off, lim);
    return 0;
}

/* Rows of two results (same column kinds) compared on every column. */
static int row_cmp(const qr_result *a, uint64_t i, const qr_result *b, uint64_t j)
{
    const qr_cell *x = qr_result_row(a, i), *y = qr_result_row(b, j);
    for (uint32_t c = 0; c < a->ncols; c++) {
        int d = qr_cell_cmp(a, c, &x[c], &y[c]);
        if (d)
            return d;
    }
    return 0;
}

static int sort_all(qr_result *r, qr_err *e)
{
    uint32_t keys[QR_RESULT_MAX_COLS];
    uint8_t desc[QR_RESULT_MAX_COLS] = {0};
    for (uint32_t c = 0; c < r->ncols; c++)
        keys[c] = c;
    return qr_result_sort(r, keys, desc, r->ncols, e);
}

/* INTERSECT [ALL] / EXCEPT [ALL]: out keeps the rows of out the operation
 * keeps against r. */
static int intersect_except(qr_result *out, qr_result *r, int except, int all, qr_err *e)
{
    if (sort_all(out, e) != 0 || sort_all(r, e) != 0)
        return -1;
    uint64_t w = 0, j = 0;
    for (uint64_t i = 0; i < out->nrows;) {
        uint64_t cl = 1, cr = 0;
        while (i + cl < out->nrows && row_cmp(out, i, out, i + cl) == 0)
            cl++;
        while (j < r->nrows && row_cmp(out, i, r, j) > 0)
            j++;
        while (j + cr < r->nrows && row_cmp(out, i, r, j + cr) == 0)
            cr++;
        uint64_t keep = except ? (all ? (cl > cr ? cl - cr : 0) : (cr == 0))
                               : (all ? (cl < cr ? cl : cr) : (cr > 0));
        for (uint64_t k = 0; k < keep; k++, w++)
            if (w != i + k)
                memcpy(qr_result_row(out, w), qr_result_row(out, i + k),
                       sizeof *out->cells * out->ncols);
        i += cl;
        j += cr;
    }
    out->nrows = w;
    return 0;
}

static int append_rows(qr_result *out, const qr_result *r, qr_err *e)
{
    for (uint64_t row = 0; row < r->nrows; row++) {
        qr_cell *o = qr_result_add_row(out, e);
        if (!o)
            return -1;
        for (uint32_t k = 0; k < r->ncols; k++) {
            const qr_cell *v = &qr_result_row(r, row)[k];
            if (!v->null && (r->cols[k].kind == QR_RK_TEXT || r->cols[k].kind == QR_RK_JSON)) {
                if (qr_result_set_text(out, &o[k], v->s ? v->s : "", v->n, e) != 0)
                    return -1;
            } else {
                o[k] = *v;
            }
        }
    }
    return 0;
}

typedef struct setctx {
    const qr_sqlparse *p;
    const qr_catalog *c;
    qr_arena *a;
    qr_sql_run_fn run;
    void *ctx;
    uint32_t arms;
} setctx;

static const char *op_name(const PgQuery__SelectStmt *st)
{
    return st->op == PG_QUERY__SET_OPERATION__SETOP_UNION       ? "UNION"
           : st->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT ? "INTERSECT"
                                                                : "EXCEPT";
}

static int eval(setctx *x, const PgQuery__SelectStmt *st, qr_result *out, qr_err *e)
{
    if (st->op == PG_QUERY__SET_OPERATION__SETOP_NONE) {
        if (++x->arms > MAX_ARMS)
            return qr_errf(e, QR_E_TOO_LONG, "a set operation has at most %d arms", MAX_ARMS);
        PgQuery__Node node = PG_QUERY__NODE__INIT;
        node.node_case = PG_QUERY__NODE__NODE_SELECT_STMT;
        node.select_stmt = (PgQuery__SelectStmt *)st;
        qr_sqlsel *sel = qr_arena_alloc(x->a, sizeof *sel);
        if (!sel)
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        int kind = 0;
        if (qr_sql_bind(x->p, &node, x->c, sel, x->a, e) != 0 || qr_sql_plan(sel, &kind, e) != 0)
            return -1;
        return x->run(x->ctx, sel, kind, out, e);
    }
    if (!st->larg || !st->rarg)
        return qr_errf(e, QR_E_SYNTAX, "%s without two sides", op_name(st));
    if (eval(x, st->larg, out, e) != 0)
        return -1;
    qr_result r;
    qr_result_init(&r, out->ctx);
    int rc = eval(x, st->rarg, &r, e);
    if (rc == 0 && r.ncols != out->ncols)
        rc = qr_errf(e, QR_E_SYNTAX, "each %s query must have the same number of columns (%u and %u)",
                     op_name(st), out->ncols, r.ncols);
    for (uint32_t k = 0; rc == 0 && k < r.ncols; k++)
        if (!same_kind(&out->cols[k], &r.cols[k]))
            rc = qr_errf(e, QR_E_DATATYPE,
                         "%s column %u: the two sides' types cannot be matched (cast one)",
                         op_name(st), k + 1);
    if (rc == 0 && st->op == PG_QUERY__SET_OPERATION__SETOP_UNION) {
        rc = append_rows(out, &r, e);
        if (rc == 0 && !st->all)
            rc = qr_result_distinct(out, e);
    } else if (rc == 0) {
        rc = intersect_except(out, &r, st->op == PG_QUERY__SET_OPERATION__SETOP_EXCEPT, st->all,
                              e);
    }
    qr_result_free(&r);
    if (rc == 0)
        rc = order_and_limit(x->p, st, out, e);
    return rc;
}

int qr_sql_union(const qr_sqlparse *p, const PgQuery__SelectStmt *st, const qr_catalog *c,
                 qr_arena *a, qr_sql_run_fn run, void *ctx, qr_result *out, qr_err *e)
{
    setctx x = {p, c, a, run, ctx, 0};
    return eval(&x, st, out, e);
}
