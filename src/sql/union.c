/* union.c - UNION ALL and UNION (union.h): each arm bound, planned and run
 * as a SELECT of its own into its own result, the rows appended in arm
 * order; UNION (without ALL) then keeps one of each row; ORDER BY (output
 * names or positions) and LIMIT / OFFSET apply to the whole. */
#include "sql/union.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sql/plan.h"

typedef PgQuery__Node Node;

#define MAX_ARMS 64

static int arms(const PgQuery__SelectStmt *st, const PgQuery__SelectStmt **out, uint32_t *n,
                int *all, qr_err *e)
{
    if (st->op == PG_QUERY__SET_OPERATION__SETOP_NONE) {
        if (*n == MAX_ARMS)
            return qr_errf(e, QR_E_TOO_LONG, "a UNION has at most %d arms", MAX_ARMS);
        out[(*n)++] = st;
        return 0;
    }
    if (st->op != PG_QUERY__SET_OPERATION__SETOP_UNION)
        return qr_errf(e, QR_E_FEATURE, "%s is not supported yet (UNION and UNION ALL are)",
                       st->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT ? "INTERSECT"
                                                                          : "EXCEPT");
    if (!st->all)
        *all = 0;
    return arms(st->larg, out, n, all, e) != 0 || arms(st->rarg, out, n, all, e) != 0 ? -1 : 0;
}

static int same_kind(const qr_rcol *a, const qr_rcol *b)
{
    if (a->kind != b->kind)
        return 0;
    return a->kind != QR_RK_INT || a->type == b->type;
}

/* UNION: rows equal in every column kept once (the first). */
static int distinct_rows(qr_result *r, qr_err *e)
{
    uint32_t keys[QR_RESULT_MAX_COLS];
    uint8_t desc[QR_RESULT_MAX_COLS] = {0};
    for (uint32_t c = 0; c < r->ncols; c++)
        keys[c] = c;
    if (qr_result_sort(r, keys, desc, r->ncols, e) != 0)
        return -1;
    uint64_t w = 0;
    for (uint64_t i = 0; i < r->nrows; i++) {
        int dup = w > 0;
        for (uint32_t c = 0; dup && c < r->ncols; c++) {
            const qr_cell *x = &qr_result_row(r, w - 1)[c], *y = &qr_result_row(r, i)[c];
            dup = x->null == y->null && (x->null || qr_cell_cmp(r, c, x, y) == 0);
        }
        if (dup)
            continue;
        if (w != i)
            memcpy(qr_result_row(r, w), qr_result_row(r, i), sizeof *r->cells * r->ncols);
        w++;
    }
    r->nrows = w;
    return 0;
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

int qr_sql_union(const qr_sqlparse *p, const PgQuery__SelectStmt *st, const qr_catalog *c,
                 qr_arena *a, qr_sql_run_fn run, void *ctx, qr_result *out, qr_err *e)
{
    const PgQuery__SelectStmt *arm[MAX_ARMS];
    uint32_t n = 0;
    int all = 1;
    if (arms(st, arm, &n, &all, e) != 0)
        return -1;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        PgQuery__Node node = PG_QUERY__NODE__INIT;
        node.node_case = PG_QUERY__NODE__NODE_SELECT_STMT;
        node.select_stmt = (PgQuery__SelectStmt *)arm[i];
        qr_sqlsel *sel = qr_arena_alloc(a, sizeof *sel);
        if (!sel)
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        int kind = 0;
        if (qr_sql_bind(p, &node, c, sel, a, e) != 0 || qr_sql_plan(sel, &kind, e) != 0)
            return -1;
        qr_result r;
        qr_result_init(&r, out->ctx);
        rc = run(ctx, sel, kind, i == 0 ? out : &r, e);
        if (rc == 0 && i > 0) {
            if (r.ncols != out->ncols) {
                rc = qr_errf(e, QR_E_SYNTAX, "each UNION arm must have the same number of "
                                             "columns (%u and %u)",
                             out->ncols, r.ncols);
            }
            for (uint32_t k = 0; rc == 0 && k < r.ncols; k++)
                if (!same_kind(&out->cols[k], &r.cols[k]))
                    rc = qr_errf(e, QR_E_DATATYPE,
                                 "UNION column %u: the arms' types cannot be matched (cast one)",
                                 k + 1);
            for (uint64_t row = 0; rc == 0 && row < r.nrows; row++) {
                qr_cell *o = qr_result_add_row(out, e);
                if (!o) {
                    rc = -1;
                    break;
                }
                for (uint32_t k = 0; rc == 0 && k < r.ncols; k++) {
                    const qr_cell *v = &qr_result_row(&r, row)[k];
                    if (!v->null && (r.cols[k].kind == QR_RK_TEXT || r.cols[k].kind == QR_RK_JSON))
                        rc = qr_result_set_text(out, &o[k], v->s ? v->s : "", v->n, e);
                    else
                        o[k] = *v;
                }
            }
        }
        qr_result_free(&r);
    }
    if (rc == 0 && !all)
        rc = distinct_rows(out, e);
    if (rc == 0)
        rc = order_and_limit(p, st, out, e);
    return rc;
}
