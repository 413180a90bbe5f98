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
static void quoted_parts(const qr_sqlparse *p, int32_t loc, int *q, size_t n)
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

int qr_bind_column(qr_binder *b, const PgQuery__ColumnRef *cr)
{
    int q[4];
    size_t nf = cr->n_fields;
    if (nf < 1 || nf > 2)
        return qr_bind_fail(b, cr->location, QR_E_FEATURE,
                            "names with more than two parts are not supported");
    quoted_parts(b->p, cr->location, q, nf);
    for (size_t i = 0; i < nf; i++)
        if (cr->fields[i]->node_case != PG_QUERY__NODE__NODE_STRING)
            return qr_bind_fail(b, cr->location, QR_E_FEATURE, "* is not allowed here");
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
            quoted_parts(b->p, cr->location, q, cr->n_fields);
            if (cr->n_fields == 2 &&
                check_qualifier(b, cr->fields[0]->string->sval, q[0], cr->location) != 0)
                return -1;
            return 1;
        }
    }
    return qr_bind_fail(b, f->location, QR_E_FEATURE,
                        "bm25 takes no argument or the table's tableoid (BM25(t.tableoid))");
}

/* An aggregate call: its fn and column into *it. 1 yes, 0 not one, -1 error. */
static int aggregate(qr_binder *b, const PgQuery__FuncCall *f, qr_sqlitem *it)
{
    static const struct {
        const char *name;
        int fn;
    } fns[] = {{"count", QR_AGG_COUNT},
               {"min", QR_AGG_MIN},
               {"max", QR_AGG_MAX},
               {"sum", QR_AGG_SUM},
               {"avg", QR_AGG_AVG}};
    const char *name = fname(f);
    int fn = 0;
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
        if (!strcmp(name, fns[i].name))
            fn = fns[i].fn;
    if (!fn)
        return 0;
    if (f->agg_distinct)
        return qr_bind_fail(b, f->location, QR_E_FEATURE, "%s(DISTINCT ...) is not supported yet",
                            name);
    if (f->over)
        return qr_bind_fail(b, f->location, QR_E_FEATURE, "window functions are not supported");
    if (f->agg_filter || f->n_agg_order)
        return qr_bind_fail(b, f->location, QR_E_FEATURE,
                            "%s with FILTER or ORDER BY is not "
                            "supported",
                            name);
    it->kind = QR_SI_AGG;
    snprintf(it->name, sizeof it->name, "%s", name);
    if (fn == QR_AGG_COUNT && f->agg_star) {
        it->fn = QR_AGG_COUNT_STAR;
        it->col = -1;
        return 1;
    }
    if (f->n_args != 1 || f->args[0]->node_case != PG_QUERY__NODE__NODE_COLUMN_REF)
        return qr_bind_fail(b, f->location, QR_E_FEATURE, "%s() takes one column in this version",
                            name);
    it->fn = (uint8_t)fn;
    if ((it->col = qr_bind_column(b, f->args[0]->column_ref)) < 0)
        return -1;
    int t = b->def->cols[it->col].type;
    if (!qr_agg_accepts(fn, t))
        return qr_bind_fail(b, f->location, QR_E_DATATYPE,
                            "function %s(%s) does not exist "
                            "(column \"%s\")",
                            name, qr_type_name(t), b->def->cols[it->col].name);
    return 1;
}

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
            if (cr->n_fields == 2) {
                int q[2];
                quoted_parts(b->p, cr->location, q, 2);
                if (cr->fields[0]->node_case != PG_QUERY__NODE__NODE_STRING ||
                    check_qualifier(b, cr->fields[0]->string->sval, q[0], cr->location) != 0)
                    return -1;
            }
            for (uint32_t c = 0; c < b->def->ncols; c++) {
                qr_sqlitem x = {.kind = QR_SI_COL, .col = (int)c};
                snprintf(x.name, sizeof x.name, "%s", b->def->cols[c].name);
                if (add_item(b, s, &x, cr->location) != 0)
                    return -1;
            }
            return 0;
        }
        it.kind = QR_SI_COL;
        if ((it.col = qr_bind_column(b, cr)) < 0)
            return -1;
        snprintf(it.name, sizeof it.name, "%s", b->def->cols[it.col].name);
    } else if (v && v->node_case == PG_QUERY__NODE__NODE_FUNC_CALL) {
        int r = is_bm25(b, v->func_call);
        if (r < 0)
            return -1;
        if (r) {
            it.kind = QR_SI_BM25;
            snprintf(it.name, sizeof it.name, "bm25");
        } else if ((r = aggregate(b, v->func_call, &it)) <= 0) {
            return r < 0 ? -1
                         : qr_bind_fail(b, v->func_call->location, QR_E_FEATURE,
                                        "function %s() is not supported in the select list",
                                        fname(v->func_call));
        } else {
            s->has_agg = 1;
        }
    } else {
        return qr_bind_fail(b, qr_node_loc(v), QR_E_FEATURE,
                            "%s in the select list is not supported yet (columns, *, aggregates "
                            "and bm25() are)",
                            qr_node_what(v));
    }
    if (rt->name && rt->name[0])
        snprintf(it.name, sizeof it.name, "%s", rt->name);
    return add_item(b, s, &it, rt->location);
}

/* ---- ORDER BY ---- */
static int order_item(qr_binder *b, qr_sqlsel *s, const PgQuery__SortBy *sb)
{
    qr_sqlorder o = {.desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC,
                     .loc = sb->location};
    const Node *n = sb->node;
    if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
        return qr_bind_fail(b, sb->location, QR_E_FEATURE, "ORDER BY ... USING is not supported");
    if (sb->sortby_nulls != PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT &&
        sb->sortby_nulls != PG_QUERY__SORT_BY_NULLS__SORT_BY_NULLS_UNDEFINED)
        return qr_bind_fail(b, sb->location, QR_E_FEATURE, "NULLS FIRST/LAST is not supported yet");
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
            qr_sqlitem it;
            memset(&it, 0, sizeof it);
            if ((r = aggregate(b, n->func_call, &it)) <= 0)
                return r < 0 ? -1
                             : qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE,
                                            "ORDER BY %s() is not supported", fname(n->func_call));
            o.kind = 0;
            for (uint32_t i = 0; i < s->nitems; i++)
                if (s->items[i].kind == QR_SI_AGG && s->items[i].fn == it.fn &&
                    s->items[i].col == it.col) {
                    o.kind = QR_SO_ITEM;
                    o.item = i;
                    break;
                }
            if (!o.kind)
                return qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE,
                                    "ORDER BY an aggregate that is not in the select list is not "
                                    "supported yet");
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
            o.kind = QR_SO_COL;
            if ((o.col = qr_bind_column(b, cr)) < 0)
                return -1;
        }
    } else {
        return qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE,
                            "ORDER BY %s is not supported (a column, an aggregate, bm25() or a "
                            "position)",
                            qr_node_what(n));
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
    else if (st->with_clause)
        what = "WITH (common table expressions)";
    else if (st->n_values_lists)
        what = "VALUES";
    else if (st->n_distinct_clause)
        what = "SELECT DISTINCT";
    else if (st->having_clause)
        what = "HAVING";
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

int qr_sql_bind(const qr_sqlparse *p, const Node *stmt, const qr_catalog *c, qr_sqlsel *s,
                qr_arena *a, qr_err *e)
{
    memset(s, 0, sizeof *s);
    s->limit = UINT64_MAX;
    qr_binder b = {p, NULL, NULL, NULL, a, e};
    if (stmt && stmt->node_case == PG_QUERY__NODE__NODE_EXPLAIN_STMT) {
        const PgQuery__ExplainStmt *x = stmt->explain_stmt;
        for (size_t i = 0; i < x->n_options; i++) {
            const Node *o = x->options[i];
            const char *on =
                o->node_case == PG_QUERY__NODE__NODE_DEF_ELEM ? o->def_elem->defname : "?";
            return qr_bind_fail(
                &b, o->node_case == PG_QUERY__NODE__NODE_DEF_ELEM ? o->def_elem->location : -1,
                QR_E_FEATURE, "EXPLAIN %s is not supported yet", on);
        }
        s->explain = 1;
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
    if (st->n_from_clause != 1)
        return qr_errf(e, QR_E_FEATURE, "%s",
                       st->n_from_clause
                           ? "a FROM clause with several tables is not supported yet (one table)"
                           : "SELECT without FROM is not supported yet");
    const Node *from = st->from_clause[0];
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
    quoted_parts(p, rv->location, q, 1);
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
    for (size_t i = 0; i < st->n_target_list; i++)
        if (select_item(&b, s, st->target_list[i]->res_target) != 0)
            return -1;
    for (size_t i = 0; i < st->n_group_clause; i++) {
        const Node *g = st->group_clause[i];
        int col = -1;
        if (g->node_case == PG_QUERY__NODE__NODE_COLUMN_REF) {
            col = qr_bind_column(&b, g->column_ref);
        } else if (g->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                   g->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
            int64_t pos = g->a_const->ival->ival;
            if (pos < 1 || (uint64_t)pos > s->nitems || s->items[pos - 1].kind != QR_SI_COL)
                return qr_bind_fail(&b, qr_node_loc(g), QR_E_UNDEFINED_COLUMN,
                                    "GROUP BY position %lld is not a column of the select list",
                                    (long long)pos);
            col = s->items[pos - 1].col;
        } else {
            return qr_bind_fail(&b, qr_node_loc(g), QR_E_FEATURE,
                                "GROUP BY %s is not supported yet (columns)", qr_node_what(g));
        }
        if (col < 0)
            return -1;
        if (s->ngroup == QR_SQL_MAX_GROUP)
            return qr_bind_fail(&b, qr_node_loc(g), QR_E_FEATURE,
                                "GROUP BY more than %d columns is not supported yet",
                                QR_SQL_MAX_GROUP);
        s->group[s->ngroup++] = col;
    }
    if (st->where_clause) {
        s->has_where = 1;
        if (!(s->filter = qr_sql_where(&b, st->where_clause)))
            return -1;
    } else if (!(s->filter = qr_q_all(a, e))) {
        return -1;
    }
    if (s->has_agg || s->ngroup) { /* every plain column must be a group key */
        for (uint32_t i = 0; i < s->nitems; i++) {
            if (s->items[i].kind == QR_SI_BM25)
                return qr_errf(e, QR_E_FEATURE,
                               "bm25() with GROUP BY or aggregates is not "
                               "supported");
            if (s->items[i].kind != QR_SI_COL)
                continue;
            int ok = 0;
            for (uint32_t g = 0; g < s->ngroup; g++)
                ok |= s->group[g] == s->items[i].col;
            if (!ok) {
                int32_t loc = qr_node_loc(st->target_list[0]);
                for (size_t t = 0; t < st->n_target_list; t++) {
                    const Node *v = st->target_list[t]->res_target->val;
                    if (v && v->node_case == PG_QUERY__NODE__NODE_COLUMN_REF) {
                        qr_err tmp;
                        qr_binder bb = b;
                        bb.e = &tmp;
                        if (qr_bind_column(&bb, v->column_ref) == s->items[i].col) {
                            loc = v->column_ref->location;
                            break;
                        }
                    }
                }
                return qr_bind_fail(&b, loc, "42803",
                                    "column \"%s\" must appear in the GROUP BY "
                                    "clause or be used in an aggregate function",
                                    s->def->cols[s->items[i].col].name);
            }
        }
    }
    for (size_t i = 0; i < st->n_sort_clause; i++)
        if (order_item(&b, s, st->sort_clause[i]->sort_by) != 0)
            return -1;
    if (limit_value(&b, st->limit_count, "LIMIT", &s->limit) != 0 ||
        limit_value(&b, st->limit_offset, "OFFSET", &s->offset) != 0)
        return -1;
    return 0;
}
