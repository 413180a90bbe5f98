/* bind.c - SELECT statements bound against the catalog (bind.h): the
 * table, the select list, GROUP BY, ORDER BY, LIMIT/OFFSET; WHERE goes to
 * where.c. Every name is resolved here, with PostgreSQL's rules for
 * quoted and unquoted identifiers. */
#include "sql/bind.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "exec/aggregate.h"

typedef PgQuery__Node Node;

int qr_bind_fail(qr_binder *b, int32_t loc, const char *code, const char *fmt, ...)
{
    if (!b->e)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->e->msg, sizeof b->e->msg, fmt, ap);
    va_end(ap);
    snprintf(b->e->code, sizeof b->e->code, "%s", code);
    return qr_sqlp_at(b->p, loc, b->e);
}

int32_t qr_node_loc(const Node *n)
{
    if (!n)
        return -1;
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_COLUMN_REF:
        return n->column_ref->location;
    case PG_QUERY__NODE__NODE_A_CONST:
        return n->a_const->location;
    case PG_QUERY__NODE__NODE_A_EXPR:
        return n->a_expr->location;
    case PG_QUERY__NODE__NODE_FUNC_CALL:
        return n->func_call->location;
    case PG_QUERY__NODE__NODE_BOOL_EXPR:
        return n->bool_expr->location;
    case PG_QUERY__NODE__NODE_TYPE_CAST:
        return n->type_cast->location >= 0 ? n->type_cast->location
                                           : qr_node_loc(n->type_cast->arg);
    case PG_QUERY__NODE__NODE_A_ARRAY_EXPR:
        return n->a_array_expr->location;
    case PG_QUERY__NODE__NODE_NULL_TEST:
        return n->null_test->location;
    case PG_QUERY__NODE__NODE_SUB_LINK:
        return n->sub_link->location;
    case PG_QUERY__NODE__NODE_RES_TARGET:
        return n->res_target->location;
    case PG_QUERY__NODE__NODE_SORT_BY:
        return n->sort_by->location;
    case PG_QUERY__NODE__NODE_RANGE_VAR:
        return n->range_var->location;
    case PG_QUERY__NODE__NODE_CASE_EXPR:
        return n->case_expr->location;
    default:
        return -1;
    }
}

const char *qr_node_what(const Node *n)
{
    if (!n)
        return "nothing";
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_COLUMN_REF:
        return "a column";
    case PG_QUERY__NODE__NODE_A_CONST:
        return "a literal";
    case PG_QUERY__NODE__NODE_A_EXPR:
        return "an operator expression";
    case PG_QUERY__NODE__NODE_FUNC_CALL:
        return "a function call";
    case PG_QUERY__NODE__NODE_BOOL_EXPR:
        return "a boolean expression";
    case PG_QUERY__NODE__NODE_TYPE_CAST:
        return "a cast";
    case PG_QUERY__NODE__NODE_A_ARRAY_EXPR:
        return "a list";
    case PG_QUERY__NODE__NODE_NULL_TEST:
        return "IS NULL";
    case PG_QUERY__NODE__NODE_SUB_LINK:
        return "a subquery";
    case PG_QUERY__NODE__NODE_CASE_EXPR:
        return "CASE";
    case PG_QUERY__NODE__NODE_JOIN_EXPR:
        return "JOIN";
    case PG_QUERY__NODE__NODE_RANGE_SUBSELECT:
        return "a subquery in FROM";
    case PG_QUERY__NODE__NODE_RANGE_FUNCTION:
        return "a function in FROM";
    default:
        return "this expression";
    }
}

/* An identifier written at byte `off` of the original text: its end, and
 * whether it was quoted. */
static size_t ident_end(const qr_sqlparse *p, size_t off, int *quoted)
{
    const char *s = p->orig;
    size_t n = p->orig_len;
    *quoted = off < n && s[off] == '"';
    if (*quoted) {
        for (size_t i = off + 1; i < n; i++)
            if (s[i] == '"') {
                if (i + 1 < n && s[i + 1] == '"')
                    i++;
                else
                    return i + 1;
            }
        return n;
    }
    size_t i = off;
    while (i < n && (s[i] == '_' || s[i] == '$' || (unsigned char)s[i] >= 0x80 ||
                     (s[i] >= '0' && s[i] <= '9') || ((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z')))
        i++;
    return i;
}

/* For each of the n dotted parts of a name written at loc: quoted or not. */
void qr_bind_quoted_parts(const qr_sqlparse *p, int32_t loc, int *q, size_t n)
{
    int64_t off = qr_sqlp_origoff(p, loc);
    for (size_t i = 0; i < n; i++) {
        q[i] = 0;
        if (off < 0 || (size_t)off >= p->orig_len)
            continue;
        size_t end = ident_end(p, (size_t)off, &q[i]);
        while (end < p->orig_len &&
               (p->orig[end] == ' ' || p->orig[end] == '\t' || p->orig[end] == '\n'))
            end++;
        off = end < p->orig_len && p->orig[end] == '.' ? (int64_t)end + 1 : -1;
        while (off >= 0 && (size_t)off < p->orig_len && p->orig[off] == ' ')
            off++;
    }
}

static int find_col(const qr_tabdef *d, const char *name, int quoted)
{
    if (!quoted)
        return qr_tabdef_col(d, name, strlen(name));
    for (uint32_t i = 0; i < d->ncols; i++)
        if (!strcmp(d->cols[i].name, name))
            return (int)i;
    return -1;
}

static int same_name(const char *a, const char *b, int quoted)
{
    return quoted ? !strcmp(a, b) : !strcasecmp(a, b);
}

/* Check a qualifier (t in t.col) against the table and its alias. */
static int check_qualifier(qr_binder *b, const char *q, int quoted, int32_t loc)
{
    if (b->alias ? same_name(b->alias, q, quoted) : same_name(b->relname, q, quoted))
        return 0;
    return qr_bind_fail(b, loc, QR_E_UNDEFINED_TABLE, "missing FROM-clause entry for table \"%s\"",
                        q);
}

const qr_coldef *qr_bind_coldef(const qr_binder *b, int c)
{
    if (!b->scope)
        return &b->def->cols[c];
    for (uint32_t r = b->scope->n; r-- > 0;)
        if ((uint32_t)c >= b->scope->r[r].base)
            return &b->scope->r[r].def->cols[(uint32_t)c - b->scope->r[r].base];
    return NULL;
}

/* A column through the scope of a join: by qualifier, or the one entry
 * that has a column of that name (42702 when several do). */
static int scope_column(qr_binder *b, const PgQuery__ColumnRef *cr, const int *q, size_t nf)
{
    const qr_sqlscope *sc = b->scope;
    const char *name = cr->fields[nf - 1]->string->sval;
    int found = -1;
    for (uint32_t r = 0; r < sc->n; r++) {
        if (nf == 2) {
            const char *qn = cr->fields[0]->string->sval;
            if (!(sc->r[r].alias ? same_name(sc->r[r].alias, qn, q[0])
                                 : same_name(sc->r[r].relname, qn, q[0])))
                continue;
        }
        int c = find_col(sc->r[r].def, name, q[nf - 1]);
        if (c < 0)
            continue;
        if (found >= 0)
            return qr_bind_fail(b, cr->location, "42702", "column reference \"%s\" is ambiguous",
                                name);
        found = (int)(sc->r[r].base + (uint32_t)c);
        b->last_range = r;
    }
    if (found < 0 && nf == 2) {
        int any = 0;
        for (uint32_t r = 0; r < sc->n; r++)
            any |= sc->r[r].alias ? same_name(sc->r[r].alias, cr->fields[0]->string->sval, q[0])
                                  : same_name(sc->r[r].relname, cr->fields[0]->string->sval, q[0]);
        if (!any)
            return qr_bind_fail(b, cr->location, QR_E_UNDEFINED_TABLE,
                                "missing FROM-clause entry for table \"%s\"",
                                cr->fields[0]->string->sval);
    }
    if (found < 0)
        return qr_bind_fail(b, cr->location, QR_E_UNDEFINED_COLUMN, "column \"%s\" does not exist",
                            name);
    return found;
}

int qr_bind_column(qr_binder *b, const PgQuery__ColumnRef *cr)
{
    int q[4];
    size_t nf = cr->n_fields;
    if (nf < 1 || nf > 2)
        return qr_bind_fail(b, cr->location, QR_E_FEATURE,
                            "names with more than two parts are not supported");
    qr_bind_quoted_parts(b->p, cr->location, q, nf);
    for (size_t i = 0; i < nf; i++)
        if (cr->fields[i]->node_case != PG_QUERY__NODE__NODE_STRING)
            return qr_bind_fail(b, cr->location, QR_E_FEATURE, "* is not allowed here");
    if (b->scope)
        return scope_column(b, cr, q, nf);
    if (nf == 2 && check_qualifier(b, cr->fields[0]->string->sval, q[0], cr->location) != 0)
        return -1;
    const char *name = cr->fields[nf - 1]->string->sval;
    int c = find_col(b->def, name, q[nf - 1]);
    if (c < 0)
        return qr_bind_fail(b, cr->location, QR_E_UNDEFINED_COLUMN, "column \"%s\" does not exist",
                            name);
    return c;
}

/* ---- the select list ---- */
static const char *fname(const PgQuery__FuncCall *f)
{
    const Node *n = f->n_funcname ? f->funcname[f->n_funcname - 1] : NULL;
    return n && n->node_case == PG_QUERY__NODE__NODE_STRING ? n->string->sval : "?";
}

/* bm25() or BM25(t.tableoid): 1 yes, 0 not bm25, -1 error. */
static int is_bm25(qr_binder *b, const PgQuery__FuncCall *f)
{
    if (strcmp(fname(f), "bm25"))
        return 0;
    if (f->n_args == 0)
        return 1;
    const Node *a = f->args[0];
    if (f->n_args == 1 && a->node_case == PG_QUERY__NODE__NODE_COLUMN_REF) {
        const PgQuery__ColumnRef *cr = a->column_ref;
        const Node *last = cr->n_fields ? cr->fields[cr->n_fields - 1] : NULL;
        if (last && last->node_case == PG_QUERY__NODE__NODE_STRING &&
            !strcmp(last->string->sval, "tableoid") && cr->n_fields <= 2) {
            int q[2];
            qr_bind_quoted_parts(b->p, cr->location, q, cr->n_fields);
            if (cr->n_fields == 2 &&
                check_qualifier(b, cr->fields[0]->string->sval, q[0], cr->location) != 0)
                return -1;
            return 1;
        }
    }
    return qr_bind_fail(b, f->location, QR_E_FEATURE,
                        "bm25 takes no argument or the table's tableoid (BM25(t.tableoid))");
}


static void expr_name(const Node *v, char *out, size_t n);

static int add_item(qr_binder *b, qr_sqlsel *s, const qr_sqlitem *it, int32_t loc)
{
    if (s->nitems == QR_SQL_MAX_ITEMS)
        return qr_bind_fail(b, loc, QR_E_TOO_LONG, "a select list has at most %d items",
                            QR_SQL_MAX_ITEMS);
    s->items[s->nitems++] = *it;
    return 0;
}

static int select_item(qr_binder *b, qr_sqlsel *s, const PgQuery__ResTarget *rt)
{
    const Node *v = rt->val;
    qr_sqlitem it;
    memset(&it, 0, sizeof it);
    if (v && v->node_case == PG_QUERY__NODE__NODE_COLUMN_REF) {
        const PgQuery__ColumnRef *cr = v->column_ref;
        const Node *last = cr->n_fields ? cr->fields[cr->n_fields - 1] : NULL;
        if (last && last->node_case == PG_QUERY__NODE__NODE_A_STAR) { /* * or t.* */
            if (cr->n_fields == 2 && !b->scope) {
                int q[2];
                qr_bind_quoted_parts(b->p, cr->location, q, 2);
                if (cr->fields[0]->node_case != PG_QUERY__NODE__NODE_STRING ||
                    check_qualifier(b, cr->fields[0]->string->sval, q[0], cr->location) != 0)
                    return -1;
            }
            uint32_t from = 0, to = b->def ? b->def->ncols : 0;
            if (b->scope) { /* *: every entry's columns; t.*: that entry's */
                to = b->scope->nslots;
                if (cr->n_fields == 2)
                    for (uint32_t r = 0; r < b->scope->n; r++) {
                        const char *qn = cr->fields[0]->string->sval;
                        if (b->scope->r[r].alias ? !strcmp(b->scope->r[r].alias, qn)
                                                 : !strcmp(b->scope->r[r].relname, qn)) {
                            from = b->scope->r[r].base;
                            to = from + b->scope->r[r].def->ncols;
                        }
                    }
            }
            for (uint32_t c = from; c < to; c++) {
                qr_sqlitem x = {.kind = QR_SI_COL, .col = (int)c};
                snprintf(x.name, sizeof x.name, "%s", qr_bind_coldef(b, (int)c)->name);
                if (s->need)
                    s->need[c] = 1;
                if (add_item(b, s, &x, cr->location) != 0)
                    return -1;
            }
            return 0;
        }
        it.kind = QR_SI_COL;
        if ((it.col = qr_bind_column(b, cr)) < 0)
            return -1;
        snprintf(it.name, sizeof it.name, "%s", qr_bind_coldef(b, it.col)->name);
        if (s->need)
            s->need[it.col] = 1;
    } else if (v && v->node_case == PG_QUERY__NODE__NODE_FUNC_CALL &&
               is_bm25(b, v->func_call) != 0) {
        if (is_bm25(b, v->func_call) < 0)
            return -1;
        it.kind = QR_SI_BM25;
        snprintf(it.name, sizeof it.name, "bm25");
    } else {
        qr_xbind x = qr_bind_row_scope(b, s, "in the select list without GROUP BY", 1);
        it.kind = QR_SI_EXPR;
        it.col = -1;
        if (!(it.x = qr_sql_expr(&x, v)))
            return -1;
        s->uses_score |= x.uses_score;
        expr_name(v, it.name, sizeof it.name);
    }
    if (rt->name && rt->name[0])
        snprintf(it.name, sizeof it.name, "%s", rt->name);
    return add_item(b, s, &it, rt->location);
}

/* ---- ORDER BY ---- */
/* NULLS FIRST on an ascending key or NULLS LAST on a descending one: the
 * other side than PostgreSQL's default (which is what an explicit NULLS LAST
 * ascending or NULLS FIRST descending asks for). */
uint8_t qr_sql_nulls_flip(const PgQuery__SortBy *sb)
{
    int desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
    return (uint8_t)((sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST && !desc) ||
                     (sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_LAST && desc));
}

static int order_item(qr_binder *b, qr_sqlsel *s, const PgQuery__SortBy *sb)
{
    qr_sqlorder o = {.desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC,
                     .nulls_flip = qr_sql_nulls_flip(sb),
                     .loc = sb->location};
    const Node *n = sb->node;
    if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
        return qr_bind_fail(b, sb->location, QR_E_FEATURE, "ORDER BY ... USING is not supported");
    int64_t pos;
    if (n && n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
        n->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) { /* ORDER BY 2 */
        pos = n->a_const->ival->ival;
        if (pos < 1 || (uint64_t)pos > s->nitems)
            return qr_bind_fail(b, qr_node_loc(n), QR_E_UNDEFINED_COLUMN,
                                "ORDER BY position %lld is not in select list", (long long)pos);
        o.kind = QR_SO_ITEM;
        o.item = (uint32_t)(pos - 1);
    } else if (n && n->node_case == PG_QUERY__NODE__NODE_FUNC_CALL) {
        int r = is_bm25(b, n->func_call);
        if (r < 0)
            return -1;
        if (r) {
            o.kind = QR_SO_BM25;
        } else {
            qr_xbind x = qr_bind_row_scope(b, s, "in ORDER BY without GROUP BY", 1);
            if (!(o.x = qr_sql_expr(&x, n)))
                return -1;
            s->uses_score |= x.uses_score;
            o.kind = QR_SO_EXPR;
        }
    } else if (n && n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF) {
        const PgQuery__ColumnRef *cr = n->column_ref;
        /* an output name (alias) first, as PostgreSQL does */
        if (cr->n_fields == 1 && cr->fields[0]->node_case == PG_QUERY__NODE__NODE_STRING) {
            const char *name = cr->fields[0]->string->sval;
            for (uint32_t i = 0; i < s->nitems; i++)
                if (s->items[i].kind != QR_SI_COL && !strcmp(s->items[i].name, name)) {
                    o.kind = s->items[i].kind == QR_SI_BM25 ? QR_SO_BM25 : QR_SO_ITEM;
                    o.item = i;
                    break;
                }
            if (!o.kind && !strcmp(name, "bm25"))
                o.kind = QR_SO_BM25;
        }
        if (!o.kind) {
            qr_err tmp;
            qr_binder tb = *b;
            tb.e = &tmp;
            int c = qr_bind_column(&tb, cr);
            if (c >= 0 && b->def && c == b->def->sort_col) {
                o.kind = QR_SO_COL; /* newest-first when DESC with LIMIT */
                o.col = c;
            } else {
                qr_xbind x = qr_bind_row_scope(b, s, "in ORDER BY without GROUP BY", 1);
                if (!(o.x = qr_sql_expr(&x, n)))
                    return -1;
                o.kind = QR_SO_EXPR;
            }
        }
    } else {
        qr_xbind x = qr_bind_row_scope(b, s, "in ORDER BY without GROUP BY", 1);
        if (!(o.x = qr_sql_expr(&x, n)))
            return -1;
        s->uses_score |= x.uses_score;
        o.kind = QR_SO_EXPR;
    }
    if (s->norder == QR_SQL_MAX_ORDER)
        return qr_bind_fail(b, sb->location, QR_E_TOO_LONG, "at most %d ORDER BY keys",
                            QR_SQL_MAX_ORDER);
    s->order[s->norder++] = o;
    return 0;
}

static int limit_value(qr_binder *b, const Node *n, const char *what, uint64_t *v)
{
    if (!n)
        return 0;
    if (n->node_case == PG_QUERY__NODE__NODE_A_CONST && n->a_const->isnull)
        return 0; /* LIMIT NULL / LIMIT ALL */
    if (n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
        n->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL && n->a_const->ival->ival >= 0) {
        *v = (uint64_t)n->a_const->ival->ival;
        return 0;
    }
    return qr_bind_fail(b, qr_node_loc(n),
                        n->node_case == PG_QUERY__NODE__NODE_A_CONST ? QR_E_ARGS : QR_E_FEATURE,
                        "%s must be a non-negative integer literal", what);
}

/* Constructs of a SelectStmt this slice does not take, named. */
static int unsupported(qr_binder *b, const PgQuery__SelectStmt *st, int32_t loc)
{
    const char *what = NULL;
    if (st->op != PG_QUERY__SET_OPERATION__SETOP_NONE)
        what = st->op == PG_QUERY__SET_OPERATION__SETOP_UNION       ? "UNION"
               : st->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT ? "INTERSECT"
                                                                    : "EXCEPT";
    else if (st->n_values_lists)
        what = "VALUES";
    else if (st->n_distinct_clause && st->distinct_clause[0] &&
             st->distinct_clause[0]->node_case != PG_QUERY__NODE__NODE_NULL_TEST &&
             st->distinct_clause[0]->node_case != 0)
        what = "SELECT DISTINCT ON";
    else if (st->n_window_clause)
        what = "WINDOW";
    else if (st->into_clause)
        what = "SELECT INTO";
    else if (st->n_locking_clause)
        what = "FOR UPDATE/SHARE";
    else if (st->limit_option == PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_WITH_TIES)
        what = "FETCH ... WITH TIES";
    if (what)
        return qr_bind_fail(b, st->having_clause ? qr_node_loc(st->having_clause) : loc,
                            QR_E_FEATURE, "%s is not supported yet", what);
    return 0;
}

/* ---- expressions: WHERE split, grouping ---- */
static const char *agg_names[] = {"count", "min", "max", "sum", "avg"};

static int is_agg_name(const char *n)
{
    for (size_t i = 0; i < sizeof agg_names / sizeof *agg_names; i++)
        if (!strcmp(n, agg_names[i]))
            return 1;
    return 0;
}

/* 1 when node n calls an aggregate anywhere. */
static int has_agg_call(const Node *n)
{
    if (!n)
        return 0;
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_FUNC_CALL: {
        if (is_agg_name(fname(n->func_call)))
            return 1;
        for (size_t i = 0; i < n->func_call->n_args; i++)
            if (has_agg_call(n->func_call->args[i]))
                return 1;
        return 0;
    }
    case PG_QUERY__NODE__NODE_A_EXPR:
        return has_agg_call(n->a_expr->lexpr) || has_agg_call(n->a_expr->rexpr);
    case PG_QUERY__NODE__NODE_TYPE_CAST:
        return has_agg_call(n->type_cast->arg);
    case PG_QUERY__NODE__NODE_BOOL_EXPR:
        for (size_t i = 0; i < n->bool_expr->n_args; i++)
            if (has_agg_call(n->bool_expr->args[i]))
                return 1;
        return 0;
    case PG_QUERY__NODE__NODE_CASE_EXPR: {
        const PgQuery__CaseExpr *c = n->case_expr;
        if (has_agg_call(c->arg) || has_agg_call(c->defresult))
            return 1;
        for (size_t i = 0; i < c->n_args; i++)
            if (has_agg_call(c->args[i]->case_when->expr) ||
                has_agg_call(c->args[i]->case_when->result))
                return 1;
        return 0;
    }
    case PG_QUERY__NODE__NODE_COALESCE_EXPR:
        for (size_t i = 0; i < n->coalesce_expr->n_args; i++)
            if (has_agg_call(n->coalesce_expr->args[i]))
                return 1;
        return 0;
    case PG_QUERY__NODE__NODE_NULL_TEST:
        return has_agg_call(n->null_test->arg);
    case PG_QUERY__NODE__NODE_LIST:
        for (size_t i = 0; i < n->list->n_items; i++)
            if (has_agg_call(n->list->items[i]))
                return 1;
        return 0;
    default:
        return 0;
    }
}

qr_xbind qr_bind_row_scope(qr_binder *b, qr_sqlsel *s, const char *where, int score)
{
    qr_xbind x;
    memset(&x, 0, sizeof x);
    x.b = b;
    x.need = s->need;
    x.where = where;
    x.allow_score = score;
    return x;
}

/* The group scope's aggregate registration: the slot of aggregate call f
 * (the same call twice shares one), -1 when f is no aggregate, -2 failed. */
static int register_agg(qr_xbind *x, const PgQuery__FuncCall *f)
{
    qr_sqlsel *s = x->cb_ctx;
    const char *name = fname(f);
    if (!is_agg_name(name))
        return -1;
    qr_sqlitem it;
    memset(&it, 0, sizeof it);
    qr_sqlagg ag = {0, -1, NULL, 0, f->location};
    if (f->agg_distinct && strcmp(name, "count"))
        return qr_bind_fail(x->b, f->location, QR_E_FEATURE,
                            "%s(DISTINCT ...) is not supported yet (count(DISTINCT ...) is)",
                            name) - 1;
    ag.distinct = f->agg_distinct != 0;
    if (f->over)
        return qr_bind_fail(x->b, f->location, QR_E_FEATURE,
                            "window functions are not supported") - 1;
    if (f->agg_filter || f->n_agg_order)
        return qr_bind_fail(x->b, f->location, QR_E_FEATURE,
                            "%s with FILTER or ORDER BY is not supported", name) - 1;
    int fn = !strcmp(name, "count") ? QR_AGG_COUNT
             : !strcmp(name, "min") ? QR_AGG_MIN
             : !strcmp(name, "max") ? QR_AGG_MAX
             : !strcmp(name, "sum") ? QR_AGG_SUM
                                    : QR_AGG_AVG;
    int xt = QR_XT_INT, ct = QT_INT64;
    if (fn == QR_AGG_COUNT && f->agg_star) {
        fn = QR_AGG_COUNT_STAR;
    } else {
        if (f->n_args != 1)
            return qr_bind_fail(x->b, f->location, "42883", "%s() takes one argument", name) - 1;
        qr_xbind rx = qr_bind_row_scope(x->b, s, "in aggregate arguments", 0);
        qr_expr *arg = qr_sql_expr(&rx, f->args[0]);
        if (!arg)
            return -2;
        if (arg->kind == QR_EX_COL && !x->b->scope && !ag.distinct) {
            ag.col = (int)arg->slot;
            int t = x->b->def->cols[ag.col].type;
            if (!qr_agg_accepts(fn, t))
                return qr_bind_fail(x->b, f->location, QR_E_DATATYPE,
                                    "function %s(%s) does not exist (column \"%s\")", name,
                                    qr_type_name(t), x->b->def->cols[ag.col].name) - 1;
            if (fn == QR_AGG_MIN || fn == QR_AGG_MAX)
                xt = qr_xtype_of_col(t), ct = t;
            arg = NULL; /* a plain column: the fast path reads it */
        } else {
            int at = arg->type;
            int ok = fn == QR_AGG_COUNT ||
                     ((fn == QR_AGG_MIN || fn == QR_AGG_MAX) &&
                      (at == QR_XT_INT || at == QR_XT_TS || at == QR_XT_BOOL || at == QR_XT_FLOAT)) ||
                     ((fn == QR_AGG_SUM || fn == QR_AGG_AVG) && at == QR_XT_INT);
            if (!ok)
                return qr_bind_fail(x->b, f->location, QR_E_DATATYPE,
                                    "function %s(%s) is not supported", name,
                                    qr_xtype_name(at)) - 1;
            if (fn == QR_AGG_MIN || fn == QR_AGG_MAX)
                xt = at, ct = at == QR_XT_FLOAT ? QT_FLOAT64 : at == QR_XT_TS ? QT_TIMESTAMP
                                                          : at == QR_XT_BOOL ? QT_BOOL
                                                                             : QT_INT64;
        }
        ag.arg = arg;
    }
    ag.fn = (uint8_t)fn;
    if (fn == QR_AGG_AVG)
        xt = QR_XT_FLOAT, ct = QT_INT64;
    for (uint32_t i = 0; i < s->naggs; i++)
        if (s->aggs[i].fn == ag.fn && s->aggs[i].col == ag.col &&
            s->aggs[i].distinct == ag.distinct &&
            (s->aggs[i].arg == NULL) == (ag.arg == NULL) &&
            (!ag.arg || qr_expr_same(s->aggs[i].arg, ag.arg)))
            return (int)(s->ngroup + i);
    if (s->naggs == QR_SQL_MAX_AGGS)
        return qr_bind_fail(x->b, f->location, QR_E_TOO_LONG, "at most %d aggregates",
                            QR_SQL_MAX_AGGS) - 1;
    uint32_t slot = s->ngroup + s->naggs;
    s->aggs[s->naggs++] = ag;
    s->slot_type[slot] = (uint8_t)xt;
    s->slot_ctype[slot] = (uint8_t)ct;
    return (int)slot;
}

static qr_xbind group_scope(qr_binder *b, qr_sqlsel *s)
{
    qr_xbind x;
    memset(&x, 0, sizeof x);
    x.b = b;
    x.agg_cb = register_agg;
    x.cb_ctx = s;
    x.nkeys = s->ngroup;
    x.keys = s->gx;
    x.slot_type = s->slot_type;
    x.slot_ctype = s->slot_ctype;
    return x;
}

static int add_conjuncts(const Node *n, const Node **out, uint32_t *k, uint32_t max)
{
    if (n->node_case == PG_QUERY__NODE__NODE_BOOL_EXPR &&
        n->bool_expr->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR) {
        for (size_t i = 0; i < n->bool_expr->n_args; i++)
            if (add_conjuncts(n->bool_expr->args[i], out, k, max) != 0)
                return -1;
        return 0;
    }
    if (*k == max)
        return -1;
    out[(*k)++] = n;
    return 0;
}

/* The column of a negated comparison (`col <> v`, `col NOT IN (...)`,
 * `col NOT BETWEEN ...`, `NOT col = v`, ...) of one column, or NULL. */
static const Node *negated_column(const Node *n)
{
    int neg = 0;
    while (n && n->node_case == PG_QUERY__NODE__NODE_BOOL_EXPR &&
           n->bool_expr->boolop == PG_QUERY__BOOL_EXPR_TYPE__NOT_EXPR && n->bool_expr->n_args == 1) {
        neg ^= 1;
        n = n->bool_expr->args[0];
    }
    if (!n || n->node_case != PG_QUERY__NODE__NODE_A_EXPR)
        return NULL;
    const PgQuery__AExpr *x = n->a_expr;
    const char *op = x->n_name && x->name[0]->node_case == PG_QUERY__NODE__NODE_STRING
                         ? x->name[x->n_name - 1]->string->sval
                         : "";
    int inner_neg = (x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP &&
                     (!strcmp(op, "<>") || !strcmp(op, "!="))) ||
                    (x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_IN && !strcmp(op, "<>")) ||
                    x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN;
    int plain = x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP && strcmp(op, "@@") &&
                strcmp(op, "##");
    plain |= x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_IN ||
             x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN ||
             x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN;
    if (!plain || !(neg ^ inner_neg))
        return NULL;
    const Node *l = x->lexpr;
    if (l && l->node_case == PG_QUERY__NODE__NODE_TYPE_CAST)
        l = l->type_cast->arg;
    return l && l->node_case == PG_QUERY__NODE__NODE_COLUMN_REF ? l : NULL;
}

int qr_bind_null_guard(qr_binder *b, qr_sqlsel *s, uint8_t *need, const Node *n,
                       qr_expr **guard)
{
    *guard = NULL;
    const Node *cn = negated_column(n);
    if (!cn)
        return 0;
    qr_xbind x = qr_bind_row_scope(b, s, "in WHERE", 0);
    x.need = need;
    qr_expr *col = qr_sql_expr(&x, cn);
    if (!col)
        return -1;
    if (col->kind != QR_EX_COL || !qr_bind_coldef(b, (int)col->slot)->nullable)
        return 0;
    qr_expr *nn = qr_arena_alloc(b->a, sizeof *nn);
    qr_expr **args = qr_arena_alloc(b->a, sizeof *args);
    if (!nn || !args)
        return qr_errf(b->e, QR_E_NOMEM, "out of memory");
    memset(nn, 0, sizeof *nn);
    nn->kind = QR_EX_ISNULL;
    nn->type = QR_XT_BOOL;
    nn->neg = 1;
    nn->nargs = 1;
    nn->args = args;
    args[0] = col;
    *guard = nn;
    return 0;
}

/* WHERE: each top-level conjunct goes to the index when it can answer it,
 * else to the residual filter on column values. */
static int bind_where(qr_binder *b, qr_sqlsel *s, const Node *w)
{
    enum { MAXC = 256 };
    const Node *cj[MAXC];
    uint32_t nc = 0;
    if (add_conjuncts(w, cj, &nc, MAXC) != 0)
        return qr_bind_fail(b, qr_node_loc(w), QR_E_TOO_LONG, "at most %d AND terms", MAXC);
    qr_query *ix[MAXC];
    qr_expr *rest[MAXC];
    uint32_t nix = 0, nrest = 0;
    for (uint32_t i = 0; i < nc; i++) {
        qr_err we;
        qr_err_clear(&we);
        qr_binder wb = *b;
        wb.e = &we;
        qr_query *q = qr_sql_where(&wb, cj[i]);
        if (q) {
            ix[nix++] = q;
            qr_expr *guard = NULL;
            if (qr_bind_null_guard(b, s, s->need, cj[i], &guard) != 0)
                return -1;
            if (guard)
                rest[nrest++] = guard;
            continue;
        }
        if (strcmp(we.code, QR_E_FEATURE)) { /* a real error: bad literal, unknown column */
            *b->e = we;
            return -1;
        }
        qr_err xe;
        qr_err_clear(&xe);
        qr_binder xb = *b;
        xb.e = &xe;
        qr_xbind x = qr_bind_row_scope(&xb, s, "in WHERE", 0);
        qr_expr *r = qr_sql_bool_expr(&x, cj[i], "WHERE");
        if (!r) {
            /* the index's "cannot answer" is no news when the column engine
             * cannot either: say why the latter failed */
            *b->e = !strcmp(xe.code, QR_E_FEATURE) && !strstr(we.msg, "not answered by the index")
                        ? we
                        : xe;
            return -1;
        }
        rest[nrest++] = r;
    }
    if (nix == 0)
        s->filter = qr_q_all(b->a, b->e);
    else if (nix == 1)
        s->filter = ix[0];
    else
        s->filter = qr_q_list(Q_AND, ix, nix, b->a, b->e);
    if (!s->filter)
        return b->e->msg[0] ? -1 : qr_errf(b->e, QR_E_NOMEM, "out of memory");
    s->has_where = nix > 0;
    if (nrest == 1) {
        s->rest = rest[0];
    } else if (nrest > 1) {
        qr_expr *a = qr_arena_alloc(b->a, sizeof *a);
        qr_expr **args = qr_arena_alloc(b->a, sizeof *args * nrest);
        if (!a || !args)
            return qr_errf(b->e, QR_E_NOMEM, "out of memory");
        memset(a, 0, sizeof *a);
        a->kind = QR_EX_AND;
        a->type = QR_XT_BOOL;
        a->nargs = nrest;
        a->args = args;
        memcpy(args, rest, sizeof *args * nrest);
        s->rest = a;
    }
    return 0;
}

/* The output name PostgreSQL gives an expression without AS. */
static void expr_name(const Node *v, char *out, size_t n)
{
    const char *nm = "?column?";
    if (v && v->node_case == PG_QUERY__NODE__NODE_FUNC_CALL)
        nm = fname(v->func_call);
    else if (v && v->node_case == PG_QUERY__NODE__NODE_TYPE_CAST && v->type_cast->arg &&
             v->type_cast->arg->node_case == PG_QUERY__NODE__NODE_COLUMN_REF) {
        const PgQuery__ColumnRef *cr = v->type_cast->arg->column_ref;
        const Node *l = cr->n_fields ? cr->fields[cr->n_fields - 1] : NULL;
        if (l && l->node_case == PG_QUERY__NODE__NODE_STRING)
            nm = l->string->sval;
    } else if (v && v->node_case == PG_QUERY__NODE__NODE_CASE_EXPR)
        nm = "case";
    else if (v && v->node_case == PG_QUERY__NODE__NODE_COALESCE_EXPR)
        nm = "coalesce";
    snprintf(out, n, "%s", nm);
}

/* A grouped statement: keys, then the select list, HAVING and ORDER BY in
 * the group scope (aggregates registered as they are met). */
static int bind_grouped(qr_binder *b, qr_sqlsel *s, const PgQuery__SelectStmt *st)
{
    s->grouped = 1;
    int distinct = st->n_distinct_clause > 0;
    if (distinct && (st->n_group_clause || st->having_clause))
        return qr_errf(b->e, QR_E_FEATURE, "SELECT DISTINCT with GROUP BY or HAVING is not "
                                           "supported yet");
    const Node *keys[QR_SQL_MAX_GROUP];
    uint32_t nk = 0;
    if (distinct) {
        for (size_t i = 0; i < st->n_target_list; i++) {
            const Node *v = st->target_list[i]->res_target->val;
            if (v && v->node_case == PG_QUERY__NODE__NODE_COLUMN_REF && v->column_ref->n_fields &&
                v->column_ref->fields[v->column_ref->n_fields - 1]->node_case ==
                    PG_QUERY__NODE__NODE_A_STAR)
                return qr_errf(b->e, QR_E_FEATURE, "SELECT DISTINCT * is not supported yet");
            if (has_agg_call(v))
                return qr_errf(b->e, QR_E_FEATURE,
                               "SELECT DISTINCT with aggregates is not supported yet");
            if (nk == QR_SQL_MAX_GROUP)
                return qr_errf(b->e, QR_E_FEATURE, "SELECT DISTINCT over more than %d items is "
                                                   "not supported yet", QR_SQL_MAX_GROUP);
            keys[nk++] = v;
        }
    }
    for (size_t i = 0; i < st->n_group_clause; i++) {
        const Node *g = st->group_clause[i];
        if (g->node_case == PG_QUERY__NODE__NODE_A_CONST &&
            g->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
            int64_t pos = g->a_const->ival->ival;
            if (pos < 1 || (uint64_t)pos > st->n_target_list)
                return qr_bind_fail(b, qr_node_loc(g), QR_E_UNDEFINED_COLUMN,
                                    "GROUP BY position %lld is not in select list",
                                    (long long)pos);
            g = st->target_list[pos - 1]->res_target->val;
            if (has_agg_call(g))
                return qr_bind_fail(b, qr_node_loc(g), "42803",
                                    "aggregate functions are not allowed in GROUP BY");
        } else if (g->node_case == PG_QUERY__NODE__NODE_COLUMN_REF && g->column_ref->n_fields == 1 &&
                   g->column_ref->fields[0]->node_case == PG_QUERY__NODE__NODE_STRING) {
            /* an output name, when no column has it (PostgreSQL's order) */
            const char *nm = g->column_ref->fields[0]->string->sval;
            qr_err tmp;
            qr_binder tb = *b;
            tb.e = &tmp;
            if (qr_bind_column(&tb, g->column_ref) < 0)
                for (size_t t = 0; t < st->n_target_list; t++) {
                    const PgQuery__ResTarget *rt = st->target_list[t]->res_target;
                    if (rt->name && !strcmp(rt->name, nm)) {
                        g = rt->val;
                        break;
                    }
                }
        }
        if (nk == QR_SQL_MAX_GROUP)
            return qr_bind_fail(b, qr_node_loc(g), QR_E_FEATURE,
                                "GROUP BY more than %d keys is not supported yet",
                                QR_SQL_MAX_GROUP);
        keys[nk++] = g;
    }
    for (uint32_t k = 0; k < nk; k++) {
        qr_xbind rx = qr_bind_row_scope(b, s, "in GROUP BY", 0);
        qr_expr *x = qr_sql_expr(&rx, keys[k]);
        if (!x)
            return -1;
        s->gx[k] = x;
        s->group[k] = x->kind == QR_EX_COL ? (int)x->slot : -1;
        s->slot_type[k] = x->type;
        s->slot_ctype[k] = (uint8_t)(x->kind == QR_EX_COL ? x->ctype : qr_xtype_ctype(x->type));
        if (x->kind == QR_EX_COL && x->type == QR_XT_FLOAT)
            s->slot_ctype[k] = QT_FLOAT64;
    }
    s->ngroup = nk;
    for (size_t i = 0; i < st->n_target_list; i++) {
        const PgQuery__ResTarget *rt = st->target_list[i]->res_target;
        const Node *v = rt->val;
        qr_sqlitem it;
        memset(&it, 0, sizeof it);
        it.kind = QR_SI_EXPR;
        qr_xbind gx = group_scope(b, s);
        if (!(it.x = qr_sql_expr(&gx, v)))
            return -1;
        if (v && v->node_case == PG_QUERY__NODE__NODE_COLUMN_REF) {
            int c = qr_bind_column(b, v->column_ref);
            if (c < 0)
                return -1;
            snprintf(it.name, sizeof it.name, "%s", qr_bind_coldef(b, c)->name);
            it.col = c;
        } else {
            it.col = -1;
            expr_name(v, it.name, sizeof it.name);
        }
        if (rt->name && rt->name[0])
            snprintf(it.name, sizeof it.name, "%s", rt->name);
        if (add_item(b, s, &it, rt->location) != 0)
            return -1;
    }
    if (st->having_clause) {
        qr_xbind gx = group_scope(b, s);
        if (!(s->having = qr_sql_bool_expr(&gx, st->having_clause, "HAVING")))
            return -1;
    }
    for (size_t i = 0; i < st->n_sort_clause; i++) {
        const PgQuery__SortBy *sb = st->sort_clause[i]->sort_by;
        qr_sqlorder o = {.desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC,
                         .nulls_flip = qr_sql_nulls_flip(sb),
                         .loc = sb->location};
        const Node *n = sb->node;
        if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
            return qr_bind_fail(b, sb->location, QR_E_FEATURE,
                                "ORDER BY ... USING is not supported");
        if (n && n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
            n->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
            int64_t pos = n->a_const->ival->ival;
            if (pos < 1 || (uint64_t)pos > s->nitems)
                return qr_bind_fail(b, qr_node_loc(n), QR_E_UNDEFINED_COLUMN,
                                    "ORDER BY position %lld is not in select list",
                                    (long long)pos);
            o.kind = QR_SO_ITEM;
            o.item = (uint32_t)(pos - 1);
        } else if (n && n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
                   n->column_ref->n_fields == 1 &&
                   n->column_ref->fields[0]->node_case == PG_QUERY__NODE__NODE_STRING) {
            const char *nm = n->column_ref->fields[0]->string->sval;
            for (uint32_t k = 0; k < s->nitems && !o.kind; k++)
                if (!strcmp(s->items[k].name, nm) && s->items[k].col < 0)
                    o.kind = QR_SO_ITEM, o.item = k;
        }
        if (!o.kind) {
            qr_xbind gx = group_scope(b, s);
            if (!(o.x = qr_sql_expr(&gx, n)))
                return -1;
            o.kind = QR_SO_EXPR;
        }
        if (s->norder == QR_SQL_MAX_ORDER)
            return qr_bind_fail(b, sb->location, QR_E_TOO_LONG, "at most %d ORDER BY keys",
                                QR_SQL_MAX_ORDER);
        s->order[s->norder++] = o;
    }
    return 0;
}

static int bind_tail(qr_binder *bp, qr_sqlsel *s, const PgQuery__SelectStmt *st);

int qr_sql_bind(const qr_sqlparse *p, const Node *stmt, const qr_catalog *c, qr_sqlsel *s,
                qr_arena *a, qr_err *e)
{
    memset(s, 0, sizeof *s);
    s->limit = UINT64_MAX;
    qr_binder b = {p, NULL, NULL, NULL, a, e, NULL, 0};
    if (stmt && stmt->node_case == PG_QUERY__NODE__NODE_EXPLAIN_STMT) {
        const PgQuery__ExplainStmt *x = stmt->explain_stmt;
        s->explain = 1;
        for (size_t i = 0; i < x->n_options; i++) {
            const Node *o = x->options[i];
            const char *on =
                o->node_case == PG_QUERY__NODE__NODE_DEF_ELEM ? o->def_elem->defname : "?";
            const Node *arg = o->node_case == PG_QUERY__NODE__NODE_DEF_ELEM ? o->def_elem->arg
                                                                            : NULL;
            int off = arg && ((arg->node_case == PG_QUERY__NODE__NODE_BOOLEAN &&
                               !arg->boolean->boolval) ||
                              (arg->node_case == PG_QUERY__NODE__NODE_STRING &&
                               (!strcasecmp(arg->string->sval, "off") ||
                                !strcasecmp(arg->string->sval, "false"))));
            if (!strcmp(on, "analyze")) {
                s->explain = off ? 1 : 2;
            } else if (strcmp(on, "verbose") && strcmp(on, "costs") && strcmp(on, "timing") &&
                       strcmp(on, "summary")) { /* accepted, nothing to change */
                return qr_bind_fail(
                    &b, o->node_case == PG_QUERY__NODE__NODE_DEF_ELEM ? o->def_elem->location : -1,
                    QR_E_FEATURE, "EXPLAIN %s is not supported (ANALYZE is)", on);
            }
        }
        stmt = x->query;
    }
    if (!stmt || stmt->node_case != PG_QUERY__NODE__NODE_SELECT_STMT) {
        const char *what = !stmt ? "an empty statement"
                           : stmt->node_case == PG_QUERY__NODE__NODE_INSERT_STMT ? "INSERT"
                           : stmt->node_case == PG_QUERY__NODE__NODE_UPDATE_STMT ? "UPDATE"
                           : stmt->node_case == PG_QUERY__NODE__NODE_DELETE_STMT ? "DELETE"
                           : stmt->node_case == PG_QUERY__NODE__NODE_CREATE_STMT ? "CREATE TABLE"
                           : stmt->node_case == PG_QUERY__NODE__NODE_INDEX_STMT  ? "CREATE INDEX"
                           : stmt->node_case == PG_QUERY__NODE__NODE_DROP_STMT   ? "DROP"
                           : stmt->node_case == PG_QUERY__NODE__NODE_COPY_STMT   ? "COPY"
                           : stmt->node_case == PG_QUERY__NODE__NODE_VARIABLE_SET_STMT ? "SET"
                           : stmt->node_case == PG_QUERY__NODE__NODE_VARIABLE_SHOW_STMT
                               ? "SHOW"
                               : "this statement";
        return qr_errf(e, QR_E_FEATURE, "%s is not supported yet (SELECT and EXPLAIN SELECT are)",
                       what);
    }
    const PgQuery__SelectStmt *st = stmt->select_stmt;
    if (unsupported(&b, st, -1) != 0)
        return -1;
    if (st->n_from_clause == 0) { /* SELECT 1, SELECT version() */
        if (st->with_clause)
            return qr_errf(e, QR_E_FEATURE, "WITH without FROM is not supported");
        if (st->where_clause || st->n_group_clause || st->having_clause || st->n_distinct_clause)
            return qr_errf(e, QR_E_FEATURE,
                           "SELECT without FROM takes a select list only (and ORDER BY, LIMIT)");
        if (!(s->filter = qr_q_all(a, e)))
            return -1;
        for (size_t i = 0; i < st->n_target_list; i++) {
            const PgQuery__ResTarget *rt = st->target_list[i]->res_target;
            qr_sqlitem it;
            memset(&it, 0, sizeof it);
            it.kind = QR_SI_EXPR;
            it.col = -1;
            qr_xbind x = qr_bind_row_scope(&b, s, "without FROM", 0);
            if (!(it.x = qr_sql_expr(&x, rt->val)))
                return -1;
            expr_name(rt->val, it.name, sizeof it.name);
            if (rt->name && rt->name[0])
                snprintf(it.name, sizeof it.name, "%s", rt->name);
            if (add_item(&b, s, &it, rt->location) != 0)
                return -1;
        }
        return limit_value(&b, st->limit_count, "LIMIT", &s->limit) != 0 ||
                       limit_value(&b, st->limit_offset, "OFFSET", &s->offset) != 0
                   ? -1
                   : 0;
    }
    const Node *from = st->from_clause[0];
    int in_sub = 0; /* x IN (SELECT ...) among the WHERE terms: a semi join */
    for (const Node *w = st->where_clause; w && !in_sub;) {
        if (w->node_case == PG_QUERY__NODE__NODE_SUB_LINK) {
            in_sub = 1;
        } else if (w->node_case == PG_QUERY__NODE__NODE_BOOL_EXPR &&
                   w->bool_expr->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR) {
            for (size_t i = 0; i < w->bool_expr->n_args; i++)
                in_sub |= w->bool_expr->args[i]->node_case == PG_QUERY__NODE__NODE_SUB_LINK;
            break;
        } else {
            break;
        }
    }
    if (st->n_from_clause > 1 || from->node_case == PG_QUERY__NODE__NODE_JOIN_EXPR ||
        from->node_case == PG_QUERY__NODE__NODE_RANGE_SUBSELECT || st->with_clause || in_sub) {
        if (qr_bind_from_join(&b, s, st, c) != 0)
            return -1;
        return bind_tail(&b, s, st);
    }
    if (from->node_case != PG_QUERY__NODE__NODE_RANGE_VAR)
        return qr_bind_fail(
            &b,
            from->node_case == PG_QUERY__NODE__NODE_JOIN_EXPR ? qr_node_loc(from->join_expr->larg)
                                                              : qr_node_loc(from),
            QR_E_FEATURE, "%s is not supported yet (FROM one table)", qr_node_what(from));
    const PgQuery__RangeVar *rv = from->range_var;
    if (rv->schemaname && rv->schemaname[0])
        return qr_bind_fail(&b, rv->location, QR_E_FEATURE,
                            "schema-qualified table names are "
                            "not supported");
    int q[1];
    qr_bind_quoted_parts(p, rv->location, q, 1);
    const qr_tabdef *def = qr_catalog_find(c, rv->relname);
    if (def && q[0] && strcmp(def->name, rv->relname))
        def = NULL;
    if (!def)
        return qr_bind_fail(&b, rv->location, QR_E_UNDEFINED_TABLE,
                            "relation \"%s\" does not exist", rv->relname);
    b.def = s->def = def;
    b.relname = rv->relname;
    b.alias =
        rv->alias && rv->alias->aliasname && rv->alias->aliasname[0] ? rv->alias->aliasname : NULL;
    if (!(s->need = qr_arena_alloc(a, def->ncols ? def->ncols : 1)))
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    memset(s->need, 0, def->ncols ? def->ncols : 1);
    if (st->where_clause) {
        if (bind_where(&b, s, st->where_clause) != 0)
            return -1;
    } else if (!(s->filter = qr_q_all(a, e))) {
        return -1;
    }
    return bind_tail(&b, s, st);
}

/* The select list, GROUP BY, HAVING, ORDER BY, LIMIT: after FROM and WHERE. */
static int bind_tail(qr_binder *bp, qr_sqlsel *s, const PgQuery__SelectStmt *st)
{
    qr_binder b = *bp;
    int grouped = st->n_group_clause || st->having_clause || st->n_distinct_clause;
    for (size_t i = 0; i < st->n_target_list && !grouped; i++)
        grouped = has_agg_call(st->target_list[i]->res_target->val);
    for (size_t i = 0; i < st->n_sort_clause && !grouped; i++)
        grouped = has_agg_call(st->sort_clause[i]->sort_by->node);
    if (grouped) {
        if (bind_grouped(&b, s, st) != 0)
            return -1;
        s->has_agg = s->naggs > 0;
    } else {
        for (size_t i = 0; i < st->n_target_list; i++)
            if (select_item(&b, s, st->target_list[i]->res_target) != 0)
                return -1;
        for (size_t i = 0; i < st->n_sort_clause; i++)
            if (order_item(&b, s, st->sort_clause[i]->sort_by) != 0)
                return -1;
    }
    if (limit_value(&b, st->limit_count, "LIMIT", &s->limit) != 0 ||
        limit_value(&b, st->limit_offset, "OFFSET", &s->offset) != 0)
        return -1;
    /* the sort column is a newest-first scan only alone and DESC; else
     * it is a key like any other */
    for (uint32_t i = 0; i < s->norder; i++) {
        qr_sqlorder *o = &s->order[i];
        if (o->kind != QR_SO_COL ||
            (s->norder == 1 && o->desc && !o->nulls_flip && s->limit != UINT64_MAX))
            continue;
        qr_expr *x = qr_arena_alloc(b.a, sizeof *x);
        if (!x)
            return qr_errf(b.e, QR_E_NOMEM, "out of memory");
        memset(x, 0, sizeof *x);
        const qr_coldef *cd = qr_bind_coldef(&b, o->col);
        x->kind = QR_EX_COL;
        x->type = (uint8_t)qr_xtype_of_col(cd->type);
        x->ctype = cd->type;
        x->slot = (uint32_t)o->col;
        x->loc = o->loc;
        s->need[o->col] = 1;
        o->x = x;
        o->kind = QR_SO_EXPR;
    }
    return 0;
}
