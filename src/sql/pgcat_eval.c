/* pgcat_eval.c - queries of the catalog answers (pgcat.h): FROM items
 * (catalog relations, subqueries, generate_series / unnest / a function's
 * one value), inner and LEFT joins as nested loops over the tiny relations
 * with each WHERE and ON term tested at the first item that binds all its
 * columns, GROUP BY and aggregates, row_number() OVER, DISTINCT, ORDER BY
 * (ordinals, output names, expressions), LIMIT / OFFSET, UNION [ALL] /
 * INTERSECT / EXCEPT and VALUES; and the entry points qr_pgcat_wants and
 * qr_pgcat_exec, which turn the answer into a qr_result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/schema.h"
#include "sql/pgcat_eval.h"

typedef PgQuery__Node Node;

#define PC_MAX_DEPTH 32

int pc_rel_add(pcx *x, pcrel *r, const pcv *row)
{
    if (r->nrows == r->cap) {
        uint32_t cap = r->cap ? r->cap * 2 : 16;
        pcv *rows = qr_arena_alloc(x->a, sizeof *rows * (size_t)cap * (r->ncols ? r->ncols : 1));
        if (!rows)
            return pc_nomem(x);
        if (r->nrows)
            memcpy(rows, r->rows, sizeof *rows * (size_t)r->nrows * r->ncols);
        r->rows = rows, r->cap = cap;
    }
    memcpy(r->rows + (size_t)r->nrows * r->ncols, row, sizeof *row * r->ncols);
    r->nrows++;
    return 0;
}

static const char *sval(const Node *n)
{
    return n && n->node_case == PG_QUERY__NODE__NODE_STRING ? n->string->sval : NULL;
}

static pcrel *new_rel(pcx *x, const char *name, uint32_t ncols)
{
    pcrel *r = qr_arena_alloc(x->a, sizeof *r);
    pccol *cols = qr_arena_alloc(x->a, sizeof *cols * (ncols ? ncols : 1));
    if (!r || !cols) {
        pc_nomem(x);
        return NULL;
    }
    memset(cols, 0, sizeof *cols * (ncols ? ncols : 1));
    *r = (pcrel){.name = name, .ncols = ncols, .cols = cols};
    return r;
}

/* ---- FROM ---- */
typedef struct pcfrom {
    pcscope s;
    pcitem it[PC_MAX_ITEMS];
    uint8_t left[PC_MAX_ITEMS];   /* LEFT JOIN */
    const Node *on[PC_MAX_ITEMS]; /* a LEFT JOIN's ON */
} pcfrom;

static int add_item(pcx *x, pcfrom *f, const char *alias, const pcrel *rel, int32_t loc)
{
    if (f->s.n == PC_MAX_ITEMS)
        return pc_fail(x, loc, QR_E_FEATURE, "more than %d FROM items", PC_MAX_ITEMS);
    f->it[f->s.n] = (pcitem){.alias = alias, .rel = rel};
    f->s.n++;
    return 0;
}

/* a relation renamed by an alias's column list: t(a, b) */
static const pcrel *renamed(pcx *x, const pcrel *r, const PgQuery__Alias *al)
{
    if (!al || !al->n_colnames)
        return r;
    pcrel *c = new_rel(x, r->name, r->ncols);
    if (!c)
        return NULL;
    pccol *cols = (pccol *)c->cols;
    for (uint32_t i = 0; i < r->ncols; i++)
        cols[i] = (pccol){i < al->n_colnames && sval(al->colnames[i]) ? sval(al->colnames[i])
                                                                      : r->cols[i].name,
                          r->cols[i].type};
    c->rows = r->rows, c->nrows = r->nrows, c->cap = r->cap;
    return c;
}

/* generate_series(a, b [, step]), unnest(array), or any function's one
 * value, as a relation of one column named by the alias */
static int range_function(pcx *x, const PgQuery__RangeFunction *rf, const pcscope *outer,
                          const pcrel **out, const char **alias)
{
    if (rf->n_functions != 1 || rf->is_rowsfrom || rf->ordinality || rf->lateral)
        return pc_fail(x, -1, QR_E_FEATURE, "ROWS FROM, WITH ORDINALITY and LATERAL %s",
                       "are not supported in catalog queries");
    const Node *fl = rf->functions[0];
    const Node *fn =
        fl->node_case == PG_QUERY__NODE__NODE_LIST && fl->list->n_items ? fl->list->items[0] : fl;
    if (fn->node_case != PG_QUERY__NODE__NODE_FUNC_CALL)
        return pc_fail(x, -1, QR_E_FEATURE, "this FROM function is not supported");
    const PgQuery__FuncCall *f = fn->func_call;
    const char *name = pc_fname(f, NULL);
    *alias = rf->alias ? rf->alias->aliasname : name;
    const char *colname = rf->alias && rf->alias->n_colnames ? sval(rf->alias->colnames[0])
                          : rf->alias                        ? rf->alias->aliasname
                                                             : name;
    pcrel *r = new_rel(x, *alias, 1);
    if (!r)
        return -1;
    pccol *col = (pccol *)r->cols;
    col->name = colname;
    if (name && !strcmp(name, "generate_series")) {
        pcv a[3] = {pc_null(), pc_null(), pc_int(1, PT_INT4)};
        if (f->n_args < 2 || f->n_args > 3)
            return pc_fail(x, f->location, "42883", "generate_series() takes 2 or 3 arguments");
        for (size_t i = 0; i < f->n_args; i++)
            if (pc_eval(x, f->args[i], outer, &a[i]) != 0 ||
                (a[i].k != PV_NULL && pc_cast(x, &a[i], PT_INT8, f->location, &a[i]) != 0))
                return -1;
        col->type = PT_INT4;
        if (a[2].k == PV_INT && a[2].i == 0)
            return pc_fail(x, f->location, QR_E_ARGS, "step size cannot equal zero");
        if (a[0].k == PV_INT && a[1].k == PV_INT && a[2].k == PV_INT)
            for (int64_t v = a[0].i; a[2].i > 0 ? v <= a[1].i : v >= a[1].i; v += a[2].i) {
                if (r->nrows >= 1000000)
                    return pc_fail(x, f->location, "54000", "generate_series: too many rows");
                pcv iv = pc_int(v, PT_INT4);
                if (pc_rel_add(x, r, &iv) != 0)
                    return -1;
            }
    } else if (name && !strcmp(name, "unnest")) {
        pcv a;
        if (f->n_args != 1 || pc_eval(x, f->args[0], outer, &a) != 0)
            return f->n_args != 1 ? pc_fail(x, f->location, "42883", "unnest() takes one array")
                                  : -1;
        uint32_t at = PT_TEXT_ARR;
        if (pc_typeof(x, f->args[0], outer, &at) != 0)
            return -1;
        col->type = pc_array_elem(at) ? pc_array_elem(at) : PT_TEXT;
        if (a.k == PV_STR && pc_cast(x, &a, at, f->location, &a) != 0)
            return -1;
        for (uint32_t i = 0; a.k == PV_ARR && i < a.n; i++)
            if (pc_rel_add(x, r, &a.a[i]) != 0)
                return -1;
    } else {
        pcv v;
        if (pc_typeof(x, fn, outer, &col->type) != 0 || pc_eval(x, fn, outer, &v) != 0 ||
            pc_rel_add(x, r, &v) != 0)
            return -1;
    }
    *out = r;
    return 0;
}

static int from_item(pcx *x, pcfrom *f, const Node *n, const pcscope *outer);

static int from_join(pcx *x, pcfrom *f, const PgQuery__JoinExpr *j, const pcscope *outer)
{
    if (j->jointype != PG_QUERY__JOIN_TYPE__JOIN_INNER &&
        j->jointype != PG_QUERY__JOIN_TYPE__JOIN_LEFT)
        return pc_fail(x, -1, QR_E_FEATURE, "RIGHT and FULL joins are not supported in %s",
                       "catalog queries");
    if (j->is_natural)
        return pc_fail(x, -1, QR_E_FEATURE, "NATURAL joins are not supported in catalog queries");
    if (from_item(x, f, j->larg, outer) != 0)
        return -1;
    if (j->rarg->node_case == PG_QUERY__NODE__NODE_JOIN_EXPR)
        return pc_fail(x, -1, QR_E_FEATURE,
                       "a parenthesized join on the right of a join is not supported in %s",
                       "catalog queries");
    if (from_item(x, f, j->rarg, outer) != 0)
        return -1;
    uint32_t k = f->s.n - 1;
    f->it[k].using_cols = j->using_clause;
    f->it[k].nusing = j->n_using_clause;
    f->left[k] = j->jointype == PG_QUERY__JOIN_TYPE__JOIN_LEFT;
    f->on[k] = j->quals;
    return 0;
}

static int from_item(pcx *x, pcfrom *f, const Node *n, const pcscope *outer)
{
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_RANGE_VAR: {
        const PgQuery__RangeVar *rv = n->range_var;
        const char *schema = rv->schemaname && rv->schemaname[0] ? rv->schemaname : NULL;
        int d = -1;
        if (!schema || !strcmp(schema, "pg_catalog") || !strcmp(schema, "information_schema"))
            d = pc_rel_find(schema, rv->relname);
        if (d < 0) {
            if ((!schema || !strcmp(schema, "public")) && qr_catalog_find(x->env->cat, rv->relname))
                return pc_fail(x, rv->location, QR_E_FEATURE,
                               "a query over catalog relations cannot also read table \"%s\"",
                               rv->relname);
            return pc_fail(x, rv->location, QR_E_UNDEFINED_TABLE,
                           "relation \"%s%s%s\" does not exist", schema ? schema : "",
                           schema ? "." : "", rv->relname);
        }
        const pcrel *r = pc_rel_get(x, d);
        if (!r)
            return -1;
        r = renamed(x, r, rv->alias);
        return r ? add_item(x, f, rv->alias ? rv->alias->aliasname : rv->relname, r, rv->location)
                 : -1;
    }
    case PG_QUERY__NODE__NODE_RANGE_SUBSELECT: {
        const PgQuery__RangeSubselect *rs = n->range_subselect;
        if (rs->lateral)
            return pc_fail(x, -1, QR_E_FEATURE, "LATERAL is not supported in catalog queries");
        pcrel *r;
        if (pc_select(x, rs->subquery->select_stmt, outer, 0, &r) != 0)
            return -1;
        const pcrel *rr = renamed(x, r, rs->alias);
        return rr ? add_item(x, f, rs->alias ? rs->alias->aliasname : NULL, rr, -1) : -1;
    }
    case PG_QUERY__NODE__NODE_RANGE_FUNCTION: {
        const pcrel *r;
        const char *alias;
        if (range_function(x, n->range_function, outer, &r, &alias) != 0)
            return -1;
        return add_item(x, f, alias, r, -1);
    }
    case PG_QUERY__NODE__NODE_JOIN_EXPR:
        return from_join(x, f, n->join_expr, outer);
    default:
        return pc_fail(x, -1, QR_E_FEATURE, "this FROM item is not supported in catalog queries");
    }
}

/* ---- which items a term needs ---- */
/* The highest FROM item of scope s that expression n reads (-1: none);
 * anything this walk does not know (a subquery) counts as all of them. */
static int max_item(pcx *x, const Node *n, const pcscope *s, int *hi)
{
    if (!n)
        return 0;
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_COLUMN_REF: {
        const pcscope *at;
        uint32_t it, col;
        if (pc_resolve(x, n->column_ref, s, &at, &it, &col) != 0)
            return -1;
        if (at == s && (int)it > *hi)
            *hi = (int)it;
        return 0;
    }
    case PG_QUERY__NODE__NODE_A_CONST:
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION:
        return 0;
    case PG_QUERY__NODE__NODE_A_EXPR:
        return max_item(x, n->a_expr->lexpr, s, hi) || max_item(x, n->a_expr->rexpr, s, hi) ? -1
                                                                                            : 0;
    case PG_QUERY__NODE__NODE_LIST:
        for (size_t i = 0; i < n->list->n_items; i++)
            if (max_item(x, n->list->items[i], s, hi) != 0)
                return -1;
        return 0;
    case PG_QUERY__NODE__NODE_BOOL_EXPR:
        for (size_t i = 0; i < n->bool_expr->n_args; i++)
            if (max_item(x, n->bool_expr->args[i], s, hi) != 0)
                return -1;
        return 0;
    case PG_QUERY__NODE__NODE_FUNC_CALL:
        for (size_t i = 0; i < n->func_call->n_args; i++)
            if (max_item(x, n->func_call->args[i], s, hi) != 0)
                return -1;
        return 0;
    case PG_QUERY__NODE__NODE_TYPE_CAST:
        return max_item(x, n->type_cast->arg, s, hi);
    case PG_QUERY__NODE__NODE_COLLATE_CLAUSE:
        return max_item(x, n->collate_clause->arg, s, hi);
    case PG_QUERY__NODE__NODE_NULL_TEST:
        return max_item(x, n->null_test->arg, s, hi);
    default:
        *hi = (int)s->n - 1;
        return 0;
    }
}

static int split_and(pcx *x, const Node *n, const Node **terms, uint32_t *nt)
{
    if (!n)
        return 0;
    if (n->node_case == PG_QUERY__NODE__NODE_BOOL_EXPR &&
        n->bool_expr->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR) {
        for (size_t i = 0; i < n->bool_expr->n_args; i++)
            if (split_and(x, n->bool_expr->args[i], terms, nt) != 0)
                return -1;
        return 0;
    }
    if (*nt == 64)
        return pc_fail(x, -1, QR_E_FEATURE, "more than 64 AND terms in a catalog query");
    terms[(*nt)++] = n;
    return 0;
}

/* ---- the nested loop ---- */
typedef struct loop {
    pcx *x;
    pcfrom *f;
    const Node *terms[64];
    int8_t at[64]; /* the item after which each term is tested */
    uint32_t nterms;
    const pcv **tup; /* gathered tuples: ntup x n */
    uint64_t ntup, cap;
    int limit1;
} loop;

static int terms_pass(loop *l, uint32_t k, int *pass)
{
    *pass = 1;
    for (uint32_t t = 0; t < l->nterms && *pass; t++) {
        if (l->at[t] != (int)k)
            continue;
        pcv v;
        if (pc_eval(l->x, l->terms[t], &l->f->s, &v) != 0)
            return -1;
        *pass = pc_truth(&v) == 1;
    }
    return 0;
}

static int using_pass(loop *l, uint32_t k, int *pass)
{
    const pcitem *it = &l->f->it[k];
    *pass = 1;
    for (size_t u = 0; u < it->nusing && *pass; u++) {
        const char *name = sval(it->using_cols[u]);
        int rc = -1;
        for (uint32_t c = 0; c < it->rel->ncols; c++)
            if (name && !strcmp(it->rel->cols[c].name, name))
                rc = (int)c;
        int lc = -1;
        uint32_t li = 0;
        for (uint32_t j = 0; j < k && lc < 0; j++)
            for (uint32_t c = 0; c < l->f->it[j].rel->ncols; c++)
                if (!strcmp(l->f->it[j].rel->cols[c].name, name))
                    lc = (int)c, li = j;
        if (rc < 0 || lc < 0)
            return pc_fail(l->x, -1, QR_E_UNDEFINED_COLUMN,
                           "column \"%s\" specified in USING clause does not exist",
                           name ? name : "?");
        const pcv *a = l->f->it[li].row, *b = it->row;
        *pass = a && b && a[lc].k != PV_NULL && b[rc].k != PV_NULL && pc_cmp(&a[lc], &b[rc]) == 0;
    }
    return 0;
}

static int emit(loop *l)
{
    uint32_t n = l->f->s.n;
    if (l->ntup == l->cap) {
        uint64_t cap = l->cap ? l->cap * 2 : 64;
        const pcv **t = qr_arena_alloc(l->x->a, sizeof *t * cap * (n ? n : 1));
        if (!t)
            return pc_nomem(l->x);
        if (l->ntup)
            memcpy(t, l->tup, sizeof *t * l->ntup * n);
        l->tup = t, l->cap = cap;
    }
    for (uint32_t k = 0; k < n; k++)
        l->tup[l->ntup * n + k] = l->f->it[k].row;
    l->ntup++;
    return 0;
}

static int walk(loop *l, uint32_t k)
{
    pcfrom *f = l->f;
    if (l->limit1 && l->ntup)
        return 0;
    if (k == f->s.n)
        return emit(l);
    if (l->x->ctx && qr_qctx_tick(l->x->ctx, &l->x->ticks, l->x->e) != 0)
        return -1;
    pcitem *it = &f->it[k];
    int matched = 0;
    for (uint32_t r = 0; r < it->rel->nrows; r++) {
        it->row = it->rel->rows + (size_t)r * it->rel->ncols;
        int pass = 1;
        if (using_pass(l, k, &pass) != 0)
            return -1;
        if (pass && f->left[k] && f->on[k]) {
            pcv v;
            if (pc_eval(l->x, f->on[k], &f->s, &v) != 0)
                return -1;
            pass = pc_truth(&v) == 1;
        }
        if (!pass)
            continue;
        matched = 1;
        if (terms_pass(l, k, &pass) != 0)
            return -1;
        if (pass && walk(l, k + 1) != 0)
            return -1;
    }
    if (!matched && f->left[k]) {
        it->row = NULL;
        int pass;
        if (terms_pass(l, k, &pass) != 0)
            return -1;
        if (pass && walk(l, k + 1) != 0)
            return -1;
    }
    it->row = NULL;
    return 0;
}

/* ---- the select list ---- */
typedef struct target {
    const Node *expr;   /* NULL: a star column (item, col) */
    uint32_t item, col; /* a star's */
    const char *name;
    uint32_t type;
} target;

static const char *expr_name(const Node *n)
{
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_COLUMN_REF: {
        const PgQuery__ColumnRef *c = n->column_ref;
        const char *s = c->n_fields ? sval(c->fields[c->n_fields - 1]) : NULL;
        return s ? s : "?column?";
    }
    case PG_QUERY__NODE__NODE_FUNC_CALL: {
        const char *s = pc_fname(n->func_call, NULL);
        return s ? s : "?column?";
    }
    case PG_QUERY__NODE__NODE_TYPE_CAST: { /* the argument's name, unless it has none */
        const Node *arg = n->type_cast->arg;
        const char *inner = expr_name(arg);
        if (strcmp(inner, "?column?") && arg->node_case != PG_QUERY__NODE__NODE_TYPE_CAST)
            return inner;
        const PgQuery__TypeName *tn = n->type_cast->type_name;
        const char *s = tn->n_names ? sval(tn->names[tn->n_names - 1]) : NULL;
        return s ? s : "?column?";
    }
    case PG_QUERY__NODE__NODE_COLLATE_CLAUSE:
        return expr_name(n->collate_clause->arg);
    case PG_QUERY__NODE__NODE_CASE_EXPR:
        return "case";
    case PG_QUERY__NODE__NODE_COALESCE_EXPR:
        return "coalesce";
    case PG_QUERY__NODE__NODE_MIN_MAX_EXPR:
        return n->min_max_expr->op == PG_QUERY__MIN_MAX_OP__IS_GREATEST ? "greatest" : "least";
    case PG_QUERY__NODE__NODE_A_INDIRECTION:
        return expr_name(n->a_indirection->arg);
    case PG_QUERY__NODE__NODE_A_ARRAY_EXPR:
        return "array";
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION:
        switch (n->sqlvalue_function->op) {
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_USER:
            return "current_user";
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_SESSION_USER:
            return "session_user";
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_USER:
            return "user";
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_ROLE:
            return "current_role";
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_SCHEMA:
            return "current_schema";
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_CATALOG:
            return "current_catalog";
        default:
            return "?column?";
        }
    case PG_QUERY__NODE__NODE_SUB_LINK:
        switch (n->sub_link->sub_link_type) {
        case PG_QUERY__SUB_LINK_TYPE__EXISTS_SUBLINK:
            return "exists";
        case PG_QUERY__SUB_LINK_TYPE__ARRAY_SUBLINK:
            return "array";
        case PG_QUERY__SUB_LINK_TYPE__EXPR_SUBLINK: {
            const PgQuery__SelectStmt *q =
                n->sub_link->subselect &&
                        n->sub_link->subselect->node_case == PG_QUERY__NODE__NODE_SELECT_STMT
                    ? n->sub_link->subselect->select_stmt
                    : NULL;
            while (q && q->op != PG_QUERY__SET_OPERATION__SETOP_NONE)
                q = q->larg;
            if (q && q->n_target_list) {
                const PgQuery__ResTarget *rt = q->target_list[0]->res_target;
                return rt->name && rt->name[0] ? rt->name : expr_name(rt->val);
            }
            return "?column?";
        }
        default:
            return "?column?";
        }
    default:
        return "?column?";
    }
}

static int targets_of(pcx *x, const PgQuery__SelectStmt *q, const pcscope *s, target **out,
                      uint32_t *nout)
{
    uint32_t cap = 0;
    for (size_t i = 0; i < q->n_target_list; i++) {
        const PgQuery__ResTarget *rt = q->target_list[i]->res_target;
        const Node *v = rt->val;
        int star = v->node_case == PG_QUERY__NODE__NODE_COLUMN_REF && v->column_ref->n_fields &&
                   v->column_ref->fields[v->column_ref->n_fields - 1]->node_case ==
                       PG_QUERY__NODE__NODE_A_STAR;
        if (star)
            for (uint32_t k = 0; k < s->n; k++)
                cap += s->it[k].rel->ncols;
        else
            cap++;
    }
    target *t = qr_arena_alloc(x->a, sizeof *t * (cap ? cap : 1));
    if (!t)
        return pc_nomem(x);
    uint32_t n = 0;
    for (size_t i = 0; i < q->n_target_list; i++) {
        const PgQuery__ResTarget *rt = q->target_list[i]->res_target;
        const Node *v = rt->val;
        const PgQuery__ColumnRef *cr =
            v->node_case == PG_QUERY__NODE__NODE_COLUMN_REF ? v->column_ref : NULL;
        if (cr && cr->n_fields &&
            cr->fields[cr->n_fields - 1]->node_case == PG_QUERY__NODE__NODE_A_STAR) {
            const char *qual = cr->n_fields >= 2 ? sval(cr->fields[cr->n_fields - 2]) : NULL;
            int any = 0;
            for (uint32_t k = 0; k < s->n; k++) {
                if (qual && (!s->it[k].alias || strcmp(s->it[k].alias, qual)))
                    continue;
                any = 1;
                for (uint32_t c = 0; c < s->it[k].rel->ncols; c++)
                    t[n++] = (target){NULL, k, c, s->it[k].rel->cols[c].name,
                                      s->it[k].rel->cols[c].type};
            }
            if (!any)
                return pc_fail(x, cr->location, QR_E_UNDEFINED_TABLE,
                               qual ? "missing FROM-clause entry for table \"%s\""
                                    : "SELECT * with no tables%s",
                               qual ? qual : "");
            continue;
        }
        t[n] = (target){v, 0, 0, rt->name && rt->name[0] ? rt->name : expr_name(v), 0};
        if (pc_typeof(x, v, s, &t[n].type) != 0)
            return -1;
        if (t[n].type == PT_UNKNOWN)
            t[n].type = PT_TEXT;
        n++;
    }
    *out = t, *nout = n;
    return 0;
}

static int has_agg(const Node *n)
{
    if (!n)
        return 0;
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_FUNC_CALL:
        if (pc_is_agg(n->func_call))
            return 1;
        for (size_t i = 0; i < n->func_call->n_args; i++)
            if (has_agg(n->func_call->args[i]))
                return 1;
        return 0;
    case PG_QUERY__NODE__NODE_A_EXPR:
        return has_agg(n->a_expr->lexpr) || has_agg(n->a_expr->rexpr);
    case PG_QUERY__NODE__NODE_TYPE_CAST:
        return has_agg(n->type_cast->arg);
    case PG_QUERY__NODE__NODE_CASE_EXPR:
        for (size_t i = 0; i < n->case_expr->n_args; i++)
            if (has_agg(n->case_expr->args[i]->case_when->expr) ||
                has_agg(n->case_expr->args[i]->case_when->result))
                return 1;
        return has_agg(n->case_expr->defresult);
    case PG_QUERY__NODE__NODE_COALESCE_EXPR:
        for (size_t i = 0; i < n->coalesce_expr->n_args; i++)
            if (has_agg(n->coalesce_expr->args[i]))
                return 1;
        return 0;
    case PG_QUERY__NODE__NODE_BOOL_EXPR:
        for (size_t i = 0; i < n->bool_expr->n_args; i++)
            if (has_agg(n->bool_expr->args[i]))
                return 1;
        return 0;
    default:
        return 0;
    }
}

/* window functions of the select list (row_number() OVER ...) */
static void find_windows(const Node *n, const PgQuery__FuncCall **w, uint32_t *nw)
{
    if (!n)
        return;
    if (n->node_case == PG_QUERY__NODE__NODE_FUNC_CALL) {
        if (n->func_call->over && *nw < 8)
            w[(*nw)++] = n->func_call;
        return;
    }
    if (n->node_case == PG_QUERY__NODE__NODE_TYPE_CAST)
        find_windows(n->type_cast->arg, w, nw);
}

/* set-returning calls at the top of a select item (through casts and
 * field selections: (_pg_expandarray(k)).n) */
static void find_srfs(const Node *n, const PgQuery__FuncCall **w, uint32_t *nw)
{
    if (!n)
        return;
    if (n->node_case == PG_QUERY__NODE__NODE_FUNC_CALL) {
        if (pc_is_srf(n->func_call) && *nw < 8)
            w[(*nw)++] = n->func_call;
        return;
    }
    if (n->node_case == PG_QUERY__NODE__NODE_TYPE_CAST)
        find_srfs(n->type_cast->arg, w, nw);
    else if (n->node_case == PG_QUERY__NODE__NODE_A_INDIRECTION)
        find_srfs(n->a_indirection->arg, w, nw);
}

typedef struct sortctx {
    pcx *x;
    const pcv *keys; /* n x nk */
    uint32_t nk;
    const uint8_t *desc, *nfirst;
} sortctx;

static int key_cmp(const sortctx *c, uint64_t a, uint64_t b)
{
    for (uint32_t k = 0; k < c->nk; k++) {
        const pcv *va = &c->keys[a * c->nk + k], *vb = &c->keys[b * c->nk + k];
        int na = va->k == PV_NULL, nb = vb->k == PV_NULL;
        int r;
        if (na || nb)
            r = na == nb ? 0 : (na ? 1 : -1) * (c->nfirst[k] ? -1 : 1);
        else
            r = pc_cmp(va, vb) * (c->desc[k] ? -1 : 1);
        if (r)
            return r;
    }
    return (a > b) - (a < b); /* stable */
}

/* merge sort of an index (stable, no qsort_r) */
static void msort(const sortctx *c, uint64_t *ix, uint64_t *tmp, uint64_t n)
{
    if (n < 2)
        return;
    uint64_t h = n / 2;
    msort(c, ix, tmp, h);
    msort(c, ix + h, tmp, n - h);
    uint64_t i = 0, j = h, o = 0;
    while (i < h && j < n)
        tmp[o++] = key_cmp(c, ix[i], ix[j]) <= 0 ? ix[i++] : ix[j++];
    while (i < h)
        tmp[o++] = ix[i++];
    while (j < n)
        tmp[o++] = ix[j++];
    memcpy(ix, tmp, sizeof *ix * n);
}

static int sort_index(pcx *x, const pcv *keys, uint32_t nk, const uint8_t *desc,
                      const uint8_t *nfirst, uint64_t n, uint64_t **out)
{
    uint64_t *ix = qr_arena_alloc(x->a, sizeof *ix * (n ? n : 1));
    uint64_t *tmp = qr_arena_alloc(x->a, sizeof *ix * (n ? n : 1));
    if (!ix || !tmp)
        return pc_nomem(x);
    for (uint64_t i = 0; i < n; i++)
        ix[i] = i;
    sortctx c = {x, keys, nk, desc, nfirst};
    msort(&c, ix, tmp, n);
    *out = ix;
    return 0;
}

static int const_int(pcx *x, const Node *n, int64_t *v)
{
    pcv c;
    if (pc_eval(x, n, NULL, &c) != 0)
        return -1;
    if (c.k == PV_NULL) {
        *v = -1;
        return 0;
    }
    if (c.k == PV_STR && pc_cast(x, &c, PT_INT8, -1, &c) != 0)
        return -1;
    if (c.k != PV_INT)
        return pc_fail(x, -1, "22023", "LIMIT and OFFSET take integers");
    *v = c.i;
    return 0;
}

static int dedupe(pcx *x, pcrel *r, uint32_t nvis)
{
    if (r->nrows < 2)
        return 0;
    uint8_t desc[64] = {0}, nf[64] = {0};
    pcv *keys = qr_arena_alloc(x->a, sizeof *keys * r->nrows * (nvis ? nvis : 1));
    if (!keys)
        return pc_nomem(x);
    for (uint32_t i = 0; i < r->nrows; i++)
        for (uint32_t c = 0; c < nvis; c++)
            keys[(size_t)i * nvis + c] = r->rows[(size_t)i * r->ncols + c];
    uint64_t *ix;
    if (sort_index(x, keys, nvis > 64 ? 64 : nvis, desc, nf, r->nrows, &ix) != 0)
        return -1;
    uint8_t *drop = qr_arena_alloc(x->a, r->nrows);
    if (!drop)
        return pc_nomem(x);
    memset(drop, 0, r->nrows);
    for (uint32_t i = 1; i < r->nrows; i++) {
        int same = 1;
        for (uint32_t c = 0; c < nvis && same; c++)
            same = pc_cmp(&keys[ix[i] * nvis + c], &keys[ix[i - 1] * nvis + c]) == 0;
        if (same)
            drop[ix[i] > ix[i - 1] ? ix[i] : ix[i - 1]] = 1;
    }
    uint32_t o = 0;
    for (uint32_t i = 0; i < r->nrows; i++)
        if (!drop[i])
            memmove(r->rows + (size_t)o++ * r->ncols, r->rows + (size_t)i * r->ncols,
                    sizeof *r->rows * r->ncols);
    r->nrows = o;
    return 0;
}

/* ORDER BY over r: keys are output columns (ordinal, name) or the hidden
 * columns after nvis; then OFFSET / LIMIT; then the hidden columns go */
static int order_limit(pcx *x, const PgQuery__SelectStmt *q, pcrel *r, uint32_t nvis,
                       const uint32_t *keycol)
{
    uint32_t nk = (uint32_t)q->n_sort_clause;
    if (nk > 64)
        return pc_fail(x, -1, QR_E_FEATURE, "more than 64 ORDER BY keys");
    if (nk && r->nrows > 1) {
        uint8_t desc[64], nf[64];
        pcv *keys = qr_arena_alloc(x->a, sizeof *keys * r->nrows * nk);
        if (!keys)
            return pc_nomem(x);
        for (uint32_t k = 0; k < nk; k++) {
            const PgQuery__SortBy *sb = q->sort_clause[k]->sort_by;
            desc[k] = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
            nf[k] = sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ||
                    (desc[k] && sb->sortby_nulls != PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_LAST);
        }
        for (uint32_t i = 0; i < r->nrows; i++)
            for (uint32_t k = 0; k < nk; k++)
                keys[(size_t)i * nk + k] = r->rows[(size_t)i * r->ncols + keycol[k]];
        uint64_t *ix;
        if (sort_index(x, keys, nk, desc, nf, r->nrows, &ix) != 0)
            return -1;
        pcv *rows = qr_arena_alloc(x->a, sizeof *rows * r->nrows * r->ncols);
        if (!rows)
            return pc_nomem(x);
        for (uint32_t i = 0; i < r->nrows; i++)
            memcpy(rows + (size_t)i * r->ncols, r->rows + ix[i] * r->ncols,
                   sizeof *rows * r->ncols);
        r->rows = rows, r->cap = r->nrows;
    }
    int64_t off = 0, lim = -1;
    if ((q->limit_offset && const_int(x, q->limit_offset, &off) != 0) ||
        (q->limit_count && const_int(x, q->limit_count, &lim) != 0))
        return -1;
    if (off < 0)
        off = 0;
    if ((uint64_t)off >= r->nrows) {
        r->nrows = 0;
    } else if (off) {
        memmove(r->rows, r->rows + (size_t)off * r->ncols,
                sizeof *r->rows * (r->nrows - (size_t)off) * r->ncols);
        r->nrows -= (uint32_t)off;
    }
    if (lim >= 0 && (uint64_t)lim < r->nrows)
        r->nrows = (uint32_t)lim;
    if (nvis < r->ncols) { /* drop the hidden sort columns */
        for (uint32_t i = 0; i < r->nrows; i++)
            memmove(r->rows + (size_t)i * nvis, r->rows + (size_t)i * r->ncols,
                    sizeof *r->rows * nvis);
        r->ncols = nvis;
    }
    return 0;
}

/* the output column an ORDER BY key names (ordinal or output name), or -1 */
static int sort_output(pcx *x, const Node *n, const pcrel *r, uint32_t nvis, int *col)
{
    *col = -1;
    if (n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
        n->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
        int v = n->a_const->ival->ival;
        if (v < 1 || (uint32_t)v > nvis)
            return pc_fail(x, n->a_const->location, "42P10",
                           "ORDER BY position %d is not in select list", v);
        *col = v - 1;
        return 0;
    }
    if (n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF && n->column_ref->n_fields == 1) {
        const char *name = sval(n->column_ref->fields[0]);
        for (uint32_t c = 0; name && c < nvis; c++)
            if (!strcmp(r->cols[c].name, name)) {
                *col = (int)c;
                return 0;
            }
    }
    return 0;
}

static int set_op(pcx *x, const PgQuery__SelectStmt *q, const pcscope *outer, pcrel **out)
{
    pcrel *l, *r;
    if (pc_select(x, q->larg, outer, 0, &l) != 0 || pc_select(x, q->rarg, outer, 0, &r) != 0)
        return -1;
    if (l->ncols != r->ncols)
        return pc_fail(x, -1, QR_E_SYNTAX, "each UNION query must have the same number of columns");
    pcrel *o = new_rel(x, NULL, l->ncols);
    if (!o)
        return -1;
    memcpy((pccol *)o->cols, l->cols, sizeof *l->cols * l->ncols);
    for (uint32_t c = 0; c < l->ncols; c++) /* a NULL column of the left takes the right's type */
        if (l->cols[c].type == PT_TEXT && r->cols[c].type != PT_TEXT) {
            int allnull = 1;
            for (uint32_t i = 0; i < l->nrows && allnull; i++)
                allnull = l->rows[(size_t)i * l->ncols + c].k == PV_NULL;
            if (allnull)
                ((pccol *)o->cols)[c].type = r->cols[c].type;
        }
    int except = q->op == PG_QUERY__SET_OPERATION__SETOP_EXCEPT;
    int inter = q->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT;
    for (uint32_t i = 0; i < l->nrows; i++) {
        const pcv *row = l->rows + (size_t)i * l->ncols;
        if (except || inter) {
            int found = 0;
            for (uint32_t j = 0; j < r->nrows && !found; j++) {
                found = 1;
                for (uint32_t c = 0; c < l->ncols && found; c++)
                    found = pc_cmp(&row[c], &r->rows[(size_t)j * r->ncols + c]) == 0;
            }
            if (found == except)
                continue;
        }
        if (pc_rel_add(x, o, row) != 0)
            return -1;
    }
    for (uint32_t j = 0; !except && !inter && j < r->nrows; j++)
        if (pc_rel_add(x, o, r->rows + (size_t)j * r->ncols) != 0)
            return -1;
    if (!q->all && dedupe(x, o, o->ncols) != 0)
        return -1;
    uint32_t keycol[64];
    for (size_t k = 0; k < q->n_sort_clause && k < 64; k++) {
        int c;
        if (sort_output(x, q->sort_clause[k]->sort_by->node, o, o->ncols, &c) != 0)
            return -1;
        if (c < 0)
            return pc_fail(x, q->sort_clause[k]->sort_by->location, QR_E_FEATURE,
                           "ORDER BY of a UNION takes output column names or positions");
        keycol[k] = (uint32_t)c;
    }
    if (order_limit(x, q, o, o->ncols, keycol) != 0)
        return -1;
    *out = o;
    return 0;
}

static int values(pcx *x, const PgQuery__SelectStmt *q, const pcscope *outer, pcrel **out)
{
    const PgQuery__List *first = q->values_lists[0]->list;
    pcrel *r = new_rel(x, "*VALUES*", (uint32_t)first->n_items);
    if (!r)
        return -1;
    pcv row[64];
    if (first->n_items > 64)
        return pc_fail(x, -1, QR_E_FEATURE, "VALUES of more than 64 columns");
    for (size_t c = 0; c < first->n_items; c++) {
        char *nm = qr_arena_alloc(x->a, 32);
        if (!nm)
            return pc_nomem(x);
        snprintf(nm, 32, "column%zu", c + 1);
        ((pccol *)r->cols)[c] = (pccol){nm, PT_TEXT};
        if (pc_typeof(x, first->items[c], outer, &((pccol *)r->cols)[c].type) != 0)
            return -1;
    }
    for (size_t i = 0; i < q->n_values_lists; i++) {
        const PgQuery__List *l = q->values_lists[i]->list;
        if (l->n_items != first->n_items)
            return pc_fail(x, -1, QR_E_SYNTAX, "VALUES lists must all be the same length");
        for (size_t c = 0; c < l->n_items; c++)
            if (pc_eval(x, l->items[c], outer, &row[c]) != 0)
                return -1;
        if (pc_rel_add(x, r, row) != 0)
            return -1;
    }
    uint32_t keycol[64] = {0};
    for (size_t k = 0; k < q->n_sort_clause && k < 64; k++) {
        int c;
        if (sort_output(x, q->sort_clause[k]->sort_by->node, r, r->ncols, &c) != 0)
            return -1;
        keycol[k] = c < 0 ? 0 : (uint32_t)c;
    }
    if (order_limit(x, q, r, r->ncols, keycol) != 0)
        return -1;
    *out = r;
    return 0;
}

static int check_clauses(pcx *x, const PgQuery__SelectStmt *q)
{
    if (q->with_clause)
        return pc_fail(x, q->with_clause->location, QR_E_FEATURE,
                       "WITH is not supported in catalog queries");
    if (q->n_locking_clause)
        return pc_fail(x, -1, QR_E_FEATURE, "FOR UPDATE / SHARE is not supported");
    if (q->into_clause)
        return pc_fail(x, -1, QR_E_FEATURE, "SELECT INTO is not supported");
    if (q->n_window_clause)
        return pc_fail(x, -1, QR_E_FEATURE, "WINDOW clauses are not supported in catalog queries");
    return 0;
}

int pc_select_type(pcx *x, const PgQuery__SelectStmt *q, const pcscope *outer, uint32_t *t)
{
    pcrel *r;
    /* the column's type is what the query's own typing gives; running it
     * (the relations are tiny) also types subqueries of its FROM */
    while (q->op != PG_QUERY__SET_OPERATION__SETOP_NONE)
        q = q->larg;
    if (pc_select(x, q, outer, 1, &r) != 0)
        return -1;
    *t = r->ncols ? r->cols[0].type : PT_TEXT;
    return 0;
}

int pc_select(pcx *x, const PgQuery__SelectStmt *q, const pcscope *outer, int limit1, pcrel **out)
{
    if (++x->depth > PC_MAX_DEPTH) {
        x->depth--;
        return pc_fail(x, -1, "54001", "catalog query nested too deeply");
    }
    int rc = check_clauses(x, q);
    if (rc == 0 && q->op != PG_QUERY__SET_OPERATION__SETOP_NONE)
        rc = set_op(x, q, outer, out);
    else if (rc == 0 && q->n_values_lists)
        rc = values(x, q, outer, out);
    else if (rc == 0) {
        pcfrom *f = qr_arena_alloc(x->a, sizeof *f);
        loop *l = qr_arena_alloc(x->a, sizeof *l);
        if (!f || !l) {
            x->depth--;
            return pc_nomem(x);
        }
        memset(f, 0, sizeof *f);
        memset(l, 0, sizeof *l);
        f->s.up = outer;
        f->s.it = f->it;
        for (size_t i = 0; i < q->n_from_clause && rc == 0; i++)
            rc = from_item(x, f, q->from_clause[i], outer);
        /* WHERE terms and inner joins' ON terms, each at its last item */
        l->x = x, l->f = f;
        rc = rc ? rc : split_and(x, q->where_clause, l->terms, &l->nterms);
        for (uint32_t k = 0; rc == 0 && k < f->s.n; k++)
            if (!f->left[k] && f->on[k])
                rc = split_and(x, f->on[k], l->terms, &l->nterms);
        for (uint32_t t = 0; rc == 0 && t < l->nterms; t++) {
            int hi = -1;
            rc = max_item(x, l->terms[t], &f->s, &hi);
            l->at[t] = (int8_t)hi;
        }
        int pass = 1; /* terms that read no item of this level: tested once */
        for (uint32_t t = 0; rc == 0 && pass && t < l->nterms; t++)
            if (l->at[t] < 0) {
                pcv v;
                rc = pc_eval(x, l->terms[t], &f->s, &v);
                pass = pc_truth(&v) == 1;
                l->at[t] = -2;
            }
        if (rc == 0 && !pass)
            goto gathered;
        l->limit1 = limit1 && !q->n_group_clause && !q->having_clause;
        if (rc == 0) {
            int any_agg = q->n_group_clause > 0 || q->having_clause != NULL;
            for (size_t i = 0; i < q->n_target_list && !any_agg; i++)
                any_agg = has_agg(q->target_list[i]->res_target->val);
            if (any_agg)
                l->limit1 = 0;
            if (f->s.n == 0)
                rc = emit(l);
            else
                rc = walk(l, 0);
        }
    gathered:
        if (rc == 0)
            rc = pc_project(x, q, f, l->tup, l->ntup, out);
    }
    x->depth--;
    return rc;
}

/* The select list over the gathered tuples: grouping, windows, DISTINCT,
 * ORDER BY, LIMIT. */
int pc_project(pcx *x, const PgQuery__SelectStmt *q, void *fromv, const pcv **tup, uint64_t ntup,
               pcrel **out)
{
    pcfrom *f = fromv;
    pcscope *s = &f->s;
    uint32_t n = s->n;
    target *t = NULL;
    uint32_t nt = 0;
    if (targets_of(x, q, s, &t, &nt) != 0)
        return -1;
    /* hidden sort columns: ORDER BY expressions that are not outputs */
    uint32_t nk = (uint32_t)q->n_sort_clause, keycol[64];
    if (nk > 64)
        return pc_fail(x, -1, QR_E_FEATURE, "more than 64 ORDER BY keys");
    pcrel *r = new_rel(x, NULL, nt + nk);
    if (!r)
        return -1;
    pccol *cols = (pccol *)r->cols;
    for (uint32_t c = 0; c < nt; c++)
        cols[c] = (pccol){t[c].name, t[c].type};
    const Node *hidden[64];
    uint32_t nh = 0;
    for (uint32_t k = 0; k < nk; k++) {
        int c;
        const Node *kn = q->sort_clause[k]->sort_by->node;
        if (sort_output(x, kn, r, nt, &c) != 0)
            return -1;
        if (c >= 0) {
            keycol[k] = (uint32_t)c;
            continue;
        }
        uint32_t ty;
        if (pc_typeof(x, kn, s, &ty) != 0)
            return -1;
        cols[nt + nh] = (pccol){"?sort?", ty};
        keycol[k] = nt + nh;
        hidden[nh++] = kn;
    }
    r->ncols = nt + nh;
    int grouped = q->n_group_clause > 0 || q->having_clause != NULL;
    for (uint32_t c = 0; c < nt && !grouped; c++)
        grouped = t[c].expr && has_agg(t[c].expr);
    pcv *row = qr_arena_alloc(x->a, sizeof *row * (r->ncols ? r->ncols : 1));
    if (!row)
        return pc_nomem(x);
    if (!grouped) {
        const PgQuery__FuncCall *win[8];
        uint32_t nw = 0;
        for (uint32_t c = 0; c < nt; c++)
            find_windows(t[c].expr, win, &nw);
        pcv *winv = NULL; /* ntup x nw */
        if (nw) {
            winv = qr_arena_alloc(x->a, sizeof *winv * (ntup ? ntup : 1) * nw);
            if (!winv)
                return pc_nomem(x);
            for (uint32_t w = 0; w < nw; w++) {
                const PgQuery__WindowDef *wd = win[w]->over;
                const char *wn = pc_fname(win[w], NULL);
                if (strcmp(wn, "row_number"))
                    return pc_fail(x, win[w]->location, QR_E_FEATURE,
                                   "window function %s() is not supported (row_number() is)", wn);
                uint32_t np = (uint32_t)wd->n_partition_clause, no = (uint32_t)wd->n_order_clause;
                uint32_t nkk = np + no;
                if (nkk > 64)
                    return pc_fail(x, win[w]->location, QR_E_FEATURE, "too many window keys");
                pcv *keys =
                    qr_arena_alloc(x->a, sizeof *keys * (ntup ? ntup : 1) * (nkk ? nkk : 1));
                uint8_t desc[64] = {0}, nf[64] = {0};
                if (!keys)
                    return pc_nomem(x);
                for (uint64_t i = 0; i < ntup; i++) {
                    for (uint32_t k = 0; k < n; k++)
                        f->it[k].row = tup[i * n + k];
                    for (uint32_t k = 0; k < np; k++)
                        if (pc_eval(x, wd->partition_clause[k], s, &keys[i * nkk + k]) != 0)
                            return -1;
                    for (uint32_t k = 0; k < no; k++) {
                        const PgQuery__SortBy *sb = wd->order_clause[k]->sort_by;
                        desc[np + k] = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
                        if (pc_eval(x, sb->node, s, &keys[i * nkk + np + k]) != 0)
                            return -1;
                    }
                }
                uint64_t *ix;
                if (sort_index(x, keys, nkk, desc, nf, ntup, &ix) != 0)
                    return -1;
                int64_t num = 0;
                for (uint64_t i = 0; i < ntup; i++) {
                    int newpart = i == 0;
                    for (uint32_t k = 0; k < np && !newpart; k++)
                        newpart = pc_cmp(&keys[ix[i] * nkk + k], &keys[ix[i - 1] * nkk + k]) != 0;
                    num = newpart ? 1 : num + 1;
                    winv[ix[i] * nw + w] = pc_int(num, PT_INT8);
                }
            }
        }
        /* set-returning functions of the select list: each tuple gives as many
         * rows as the longest of their sets (PostgreSQL 10's rule) */
        const PgQuery__FuncCall *keyed[16];
        uint32_t nsrf = 0;
        memcpy(keyed, win, sizeof *win * nw);
        for (uint32_t c = 0; c < nt; c++)
            find_srfs(t[c].expr, keyed + nw, &nsrf);
        pcv cur[16];
        pcv *sets[8];
        uint32_t setn[8];
        s->nwin = nw + nsrf;
        s->win = keyed;
        s->winv = cur;
        for (uint64_t i = 0; i < ntup; i++) {
            for (uint32_t k = 0; k < n; k++)
                f->it[k].row = tup[i * n + k];
            for (uint32_t w = 0; w < nw; w++)
                cur[w] = winv[i * nw + w];
            uint32_t nout = nsrf ? 0 : 1;
            for (uint32_t k = 0; k < nsrf; k++) {
                s->nwin = nw; /* an SRF's arguments see no SRF values */
                if (pc_srf_rows(x, keyed[nw + k], s, &sets[k], &setn[k]) != 0)
                    return -1;
                s->nwin = nw + nsrf;
                nout = setn[k] > nout ? setn[k] : nout;
            }
            for (uint32_t o = 0; o < nout; o++) {
                for (uint32_t k = 0; k < nsrf; k++)
                    cur[nw + k] = o < setn[k] ? sets[k][o] : pc_null();
                for (uint32_t c = 0; c < nt; c++) {
                    if (!t[c].expr) {
                        const pcv *rr = f->it[t[c].item].row;
                        row[c] = rr ? rr[t[c].col] : pc_null();
                    } else if (pc_eval(x, t[c].expr, s, &row[c]) != 0) {
                        return -1;
                    }
                }
                for (uint32_t h = 0; h < nh; h++)
                    if (pc_eval(x, hidden[h], s, &row[nt + h]) != 0)
                        return -1;
                if (pc_rel_add(x, r, row) != 0)
                    return -1;
            }
        }
        s->nwin = 0;
    } else {
        /* groups: sort the tuples by the keys, then each run is a group */
        uint32_t ng = (uint32_t)q->n_group_clause;
        if (ng > 64)
            return pc_fail(x, -1, QR_E_FEATURE, "more than 64 GROUP BY keys");
        const Node *gk[64];
        for (uint32_t g = 0; g < ng; g++) {
            const Node *kn = q->group_clause[g];
            int c = -1;
            if (sort_output(x, kn, r, nt, &c) != 0)
                return -1;
            gk[g] = c >= 0 && t[c].expr ? t[c].expr : kn;
        }
        pcv *keys = qr_arena_alloc(x->a, sizeof *keys * (ntup ? ntup : 1) * (ng ? ng : 1));
        if (!keys)
            return pc_nomem(x);
        for (uint64_t i = 0; i < ntup; i++) {
            for (uint32_t k = 0; k < n; k++)
                f->it[k].row = tup[i * n + k];
            for (uint32_t g = 0; g < ng; g++)
                if (pc_eval(x, gk[g], s, &keys[i * ng + g]) != 0)
                    return -1;
        }
        uint8_t desc[64] = {0}, nf[64] = {0};
        uint64_t *ix;
        if (sort_index(x, keys, ng, desc, nf, ntup, &ix) != 0)
            return -1;
        const pcv **gt = qr_arena_alloc(x->a, sizeof *gt * (ntup ? ntup : 1) * (n ? n : 1));
        if (!gt)
            return pc_nomem(x);
        for (uint64_t i = 0; i < ntup; i++)
            memcpy(gt + i * n, tup + ix[i] * n, sizeof *gt * n);
        uint64_t from = 0;
        /* no GROUP BY: one group, even of no tuples */
        for (uint64_t i = 1; i <= ntup || (ng == 0 && from == 0 && ntup == 0); i++) {
            int end = i == ntup;
            for (uint32_t g = 0; g < ng && !end; g++)
                end = pc_cmp(&keys[ix[i] * ng + g], &keys[ix[i - 1] * ng + g]) != 0;
            if (ng == 0)
                end = i >= ntup;
            if (!end)
                continue;
            s->grouped = 1;
            s->tup = gt + from * n;
            s->ntup = ntup ? i - from : 0;
            for (uint32_t k = 0; k < n; k++)
                f->it[k].row = s->ntup ? s->tup[k] : NULL;
            int keep = 1;
            if (q->having_clause) {
                pcv hv;
                if (pc_eval(x, q->having_clause, s, &hv) != 0)
                    return -1;
                keep = pc_truth(&hv) == 1;
            }
            for (uint32_t c = 0; keep && c < nt; c++) {
                if (!t[c].expr) {
                    const pcv *rr = f->it[t[c].item].row;
                    row[c] = rr ? rr[t[c].col] : pc_null();
                } else if (pc_eval(x, t[c].expr, s, &row[c]) != 0) {
                    return -1;
                }
            }
            for (uint32_t h = 0; keep && h < nh; h++)
                if (pc_eval(x, hidden[h], s, &row[nt + h]) != 0)
                    return -1;
            if (keep && pc_rel_add(x, r, row) != 0)
                return -1;
            s->grouped = 0;
            from = i;
            if (ntup == 0)
                break;
        }
    }
    for (uint32_t c = 0; c < nt; c++) /* NULL-typed outputs: the type of their values */
        if (cols[c].type == PT_TEXT)
            for (uint32_t i = 0; i < r->nrows; i++) {
                const pcv *v = &r->rows[(size_t)i * r->ncols + c];
                if (v->k != PV_NULL) {
                    if (v->k == PV_STR && v->t != PT_UNKNOWN)
                        cols[c].type = v->t;
                    break;
                }
            }
    if (q->n_distinct_clause) {
        if (q->distinct_clause[0] &&
            q->distinct_clause[0]->node_case != PG_QUERY__NODE__NODE__NOT_SET)
            return pc_fail(x, -1, QR_E_FEATURE, "DISTINCT ON is not supported in catalog queries");
        if (dedupe(x, r, nt) != 0)
            return -1;
    }
    if (order_limit(x, q, r, nt, keycol) != 0)
        return -1;
    *out = r;
    return 0;
}

/* ---- which statements come here ---- */
typedef struct wants {
    const qr_catalog *cat;
    int catalog_rel, data_rel, catalog_fn, has_from;
} wants;

static void walk_wants(const Node *n, wants *w);

static void walk_select(const PgQuery__SelectStmt *q, wants *w)
{
    if (!q)
        return;
    walk_select(q->larg, w);
    walk_select(q->rarg, w);
    if (q->n_from_clause)
        w->has_from = 1;
    for (size_t i = 0; i < q->n_from_clause; i++)
        walk_wants(q->from_clause[i], w);
    for (size_t i = 0; i < q->n_target_list; i++)
        walk_wants(q->target_list[i], w);
    walk_wants(q->where_clause, w);
    walk_wants(q->having_clause, w);
    for (size_t i = 0; i < q->n_sort_clause; i++)
        walk_wants(q->sort_clause[i], w);
    for (size_t i = 0; i < q->n_group_clause; i++)
        walk_wants(q->group_clause[i], w);
    if (q->with_clause)
        for (size_t i = 0; i < q->with_clause->n_ctes; i++)
            if (q->with_clause->ctes[i]->node_case == PG_QUERY__NODE__NODE_COMMON_TABLE_EXPR)
                walk_wants(q->with_clause->ctes[i]->common_table_expr->ctequery, w);
}

static void walk_nodes(Node *const *n, size_t k, wants *w)
{
    for (size_t i = 0; i < k; i++)
        walk_wants(n[i], w);
}

static void walk_wants(const Node *n, wants *w)
{
    if (!n)
        return;
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_SELECT_STMT:
        walk_select(n->select_stmt, w);
        return;
    case PG_QUERY__NODE__NODE_RANGE_VAR: {
        const PgQuery__RangeVar *rv = n->range_var;
        const char *schema = rv->schemaname && rv->schemaname[0] ? rv->schemaname : NULL;
        if (schema && (!strcmp(schema, "pg_catalog") || !strcmp(schema, "information_schema")))
            w->catalog_rel = 1;
        else if (!schema && pc_rel_find(NULL, rv->relname) >= 0)
            w->catalog_rel = 1;
        else
            w->data_rel = 1;
        return;
    }
    case PG_QUERY__NODE__NODE_JOIN_EXPR:
        walk_wants(n->join_expr->larg, w);
        walk_wants(n->join_expr->rarg, w);
        walk_wants(n->join_expr->quals, w);
        return;
    case PG_QUERY__NODE__NODE_RANGE_SUBSELECT:
        walk_wants(n->range_subselect->subquery, w);
        return;
    case PG_QUERY__NODE__NODE_RANGE_FUNCTION:
        w->catalog_fn = 1; /* generate_series, unnest: the engine has none */
        walk_nodes(n->range_function->functions, n->range_function->n_functions, w);
        return;
    case PG_QUERY__NODE__NODE_LIST:
        walk_nodes(n->list->items, n->list->n_items, w);
        return;
    case PG_QUERY__NODE__NODE_RES_TARGET:
        walk_wants(n->res_target->val, w);
        return;
    case PG_QUERY__NODE__NODE_SORT_BY:
        walk_wants(n->sort_by->node, w);
        return;
    case PG_QUERY__NODE__NODE_SUB_LINK:
        walk_wants(n->sub_link->testexpr, w);
        walk_wants(n->sub_link->subselect, w);
        return;
    case PG_QUERY__NODE__NODE_FUNC_CALL: {
        int ok;
        const char *name = pc_fname(n->func_call, &ok);
        if (name && ok && pc_is_catalog_fn(name))
            w->catalog_fn = 1;
        if (n->func_call->n_funcname == 2 && ok && name && !pc_is_engine_fn(name))
            w->catalog_fn = 1; /* pg_catalog.anything the engine has not */
        walk_nodes(n->func_call->args, n->func_call->n_args, w);
        return;
    }
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION:
        w->catalog_fn = 1;
        return;
    case PG_QUERY__NODE__NODE_A_EXPR:
        walk_wants(n->a_expr->lexpr, w);
        walk_wants(n->a_expr->rexpr, w);
        return;
    case PG_QUERY__NODE__NODE_BOOL_EXPR:
        walk_nodes(n->bool_expr->args, n->bool_expr->n_args, w);
        return;
    case PG_QUERY__NODE__NODE_TYPE_CAST: {
        const PgQuery__TypeName *tn = n->type_cast->type_name;
        const char *ty = tn && tn->n_names ? sval(tn->names[tn->n_names - 1]) : NULL;
        if (ty && (!strncmp(ty, "reg", 3) || !strcmp(ty, "oid") || !strcmp(ty, "name")))
            w->catalog_fn = 1;
        walk_wants(n->type_cast->arg, w);
        return;
    }
    case PG_QUERY__NODE__NODE_CASE_EXPR:
        walk_wants(n->case_expr->arg, w);
        walk_nodes(n->case_expr->args, n->case_expr->n_args, w);
        walk_wants(n->case_expr->defresult, w);
        return;
    case PG_QUERY__NODE__NODE_CASE_WHEN:
        walk_wants(n->case_when->expr, w);
        walk_wants(n->case_when->result, w);
        return;
    case PG_QUERY__NODE__NODE_COALESCE_EXPR:
        walk_nodes(n->coalesce_expr->args, n->coalesce_expr->n_args, w);
        return;
    case PG_QUERY__NODE__NODE_NULL_TEST:
        walk_wants(n->null_test->arg, w);
        return;
    case PG_QUERY__NODE__NODE_COLLATE_CLAUSE:
        walk_wants(n->collate_clause->arg, w);
        return;
    case PG_QUERY__NODE__NODE_A_INDIRECTION:
        walk_wants(n->a_indirection->arg, w);
        return;
    default:
        return;
    }
}

int qr_pgcat_wants(const PgQuery__Node *st, const qr_catalog *cat)
{
    if (st->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return 0;
    wants w = {.cat = cat};
    walk_select(st->select_stmt, &w);
    if (w.catalog_rel)
        return 1;
    return !w.data_rel && w.catalog_fn; /* no FROM, or FROM generate_series(...) */
}

/* ---- into a qr_result ---- */
static int put_cell(pcx *x, qr_result *out, qr_cell *c, const qr_rcol *rc, const pcv *v)
{
    if (v->k == PV_NULL) {
        c->null = 1;
        return 0;
    }
    c->null = 0;
    if (rc->kind == QR_RK_INT) {
        pcv iv = *v;
        if (iv.k != PV_INT && iv.k != PV_BOOL) {
            if (pc_cast(x, v, PT_INT8, -1, &iv) != 0)
                return -1;
        }
        c->i = iv.i;
        return 0;
    }
    if (rc->kind == QR_RK_FLOAT) {
        c->f = v->k == PV_FLOAT ? v->f : (double)v->i;
        return 0;
    }
    qr_buf b;
    qr_buf_init(&b);
    pc_text(x, v, &b);
    int r = b.oom ? pc_nomem(x) : qr_result_set_text(out, c, (const char *)b.p, b.len, x->e);
    qr_buf_free(&b);
    return r;
}

int qr_pgcat_exec(const qr_pgcat_env *env, const qr_sqlparse *p, const PgQuery__Node *st,
                  qr_result *out, qr_err *e)
{
    if (st->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return qr_errf(e, QR_E_FEATURE, "only SELECT reads the catalog relations");
    qr_arena a;
    qr_arena_init(&a, 64 << 10, 0);
    qr_arena_set_ctx(&a, out->ctx);
    pcx x = {.env = env, .p = p, .a = &a, .ctx = out->ctx, .e = e};
    pcrel *r;
    int rc = pc_select(&x, st->select_stmt, NULL, 0, &r);
    for (uint32_t c = 0; rc == 0 && c < r->ncols; c++) {
        uint32_t t = r->cols[c].type;
        int kind = QR_RK_TEXT, type = 0;
        switch (t) {
        case PT_BOOL:
            kind = QR_RK_INT, type = QT_BOOL;
            break;
        case PT_INT2:
            kind = QR_RK_INT, type = QT_INT16;
            break;
        case PT_INT4:
            kind = QR_RK_INT, type = QT_INT32;
            break;
        case PT_INT8:
        case PT_OID:
            kind = QR_RK_INT, type = QT_INT64;
            break;
        case PT_FLOAT4:
        case PT_FLOAT8:
        case PT_NUMERIC:
            kind = QR_RK_FLOAT;
            break;
        default:
            break;
        }
        rc = qr_result_add_col(out, r->cols[c].name, kind, type, 0, e);
        if (rc == 0)
            out->cols[out->ncols - 1].pgoid = t == PT_UNKNOWN   ? PT_TEXT
                                              : t == PT_NUMERIC ? PT_FLOAT8
                                                                : t;
    }
    for (uint32_t i = 0; rc == 0 && i < r->nrows; i++) {
        qr_cell *row = qr_result_add_row(out, e);
        if (!row) {
            rc = -1;
            break;
        }
        for (uint32_t c = 0; rc == 0 && c < r->ncols; c++)
            rc = put_cell(&x, out, &row[c], &out->cols[c], &r->rows[(size_t)i * r->ncols + c]);
    }
    qr_arena_free(&a);
    return rc;
}
