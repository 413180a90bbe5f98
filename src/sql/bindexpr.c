/* bindexpr.c - SQL scalar expressions (libpg_query nodes) bound into
 * exec/expr.h trees, with types resolved and literals coerced the way
 * PostgreSQL resolves an unknown-typed literal: '13' compared with an
 * integer is the integer 13, '2025-09-23 00:00:00' compared with a
 * timestamp is that timestamp.
 *
 * Two scopes (bind.h qr_xbind): the row scope, where a column names the
 * table's column (slot = its position in the table, the column marked as
 * needed), and the group scope after aggregation, where an expression
 * equal to a GROUP BY key reads that key's slot, an aggregate call reads
 * its aggregate's slot (registered here), and any other column is an
 * error (42803). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "exec/aggregate.h"
#include "sql/bind.h"
#include "util/timefmt.h"

typedef PgQuery__Node Node;

static qr_expr *node(qr_xbind *x, int kind, int type, int32_t loc, uint32_t nargs)
{
    qr_expr *e = qr_arena_alloc(x->b->a, sizeof *e);
    qr_expr **args = nargs ? qr_arena_alloc(x->b->a, sizeof *args * nargs) : NULL;
    if (!e || (nargs && !args)) {
        qr_errf(x->b->e, QR_E_NOMEM, "out of memory binding an expression");
        return NULL;
    }
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)kind;
    e->type = (uint8_t)type;
    e->loc = loc;
    e->nargs = nargs;
    e->args = args;
    return e;
}

static qr_expr *fail(qr_xbind *x, int32_t loc, const char *code, const char *msg, const char *a1)
{
    qr_bind_fail(x->b, loc, code, msg, a1);
    return NULL;
}

static const char *str_of(const Node *n)
{
    return n && n->node_case == PG_QUERY__NODE__NODE_STRING ? n->string->sval : NULL;
}

static const char *fn_name(const PgQuery__FuncCall *f)
{
    return f->n_funcname ? str_of(f->funcname[f->n_funcname - 1]) : "?";
}

static int is_num(int t)
{
    return t == QR_XT_INT || t == QR_XT_FLOAT;
}

/* A text constant as a constant of type `to` (literal coercion); x->b->e
 * set on failure. */
static int coerce_const(qr_xbind *x, qr_expr *c, int to)
{
    if (c->kind != QR_EX_CONST || c->type != QR_XT_TEXT || to == QR_XT_TEXT || c->val.null)
        return 0;
    char buf[128];
    if (c->val.n >= sizeof buf)
        return qr_bind_fail(x->b, c->loc, QR_E_INVALID_TEXT, "invalid input syntax for type %s",
                            qr_xtype_name(to));
    memcpy(buf, c->val.s, c->val.n);
    buf[c->val.n] = 0;
    char *end;
    qr_cell v = {0};
    switch (to) {
    case QR_XT_INT:
        errno = 0;
        v.i = strtoll(buf, &end, 10);
        if (!buf[0] || *end || errno)
            return qr_bind_fail(x->b, c->loc, QR_E_INVALID_TEXT,
                                "invalid input syntax for type bigint: \"%s\"", buf);
        break;
    case QR_XT_FLOAT:
        v.f = strtod(buf, &end);
        if (!buf[0] || *end)
            return qr_bind_fail(x->b, c->loc, QR_E_INVALID_TEXT,
                                "invalid input syntax for type double precision: \"%s\"", buf);
        break;
    case QR_XT_BOOL:
        if (!strcasecmp(buf, "true") || !strcasecmp(buf, "t"))
            v.i = 1;
        else if (strcasecmp(buf, "false") && strcasecmp(buf, "f"))
            return qr_bind_fail(x->b, c->loc, QR_E_INVALID_TEXT,
                                "invalid input syntax for type boolean: \"%s\"", buf);
        break;
    case QR_XT_TS: {
        if (qr_sql_parse_time(buf, &v.i) != 0)
            return qr_bind_fail(x->b, c->loc, QR_E_INVALID_TEXT,
                                "invalid input syntax for type timestamp: \"%s\"", buf);
        break;
    }
    case QR_XT_JSON:
        c->type = QR_XT_JSON;
        return 0;
    default:
        return 0;
    }
    c->val = v;
    c->type = (uint8_t)to;
    return 0;
}

/* The common type of two operands for comparison / CASE / IN; -1 when they
 * cannot meet (e set). */
static int common_type(qr_xbind *x, qr_expr *l, qr_expr *r, int32_t loc)
{
    if (l->type == QR_XT_NULL)
        return r->type;
    if (r->type == QR_XT_NULL)
        return l->type;
    if (l->kind == QR_EX_CONST && l->type == QR_XT_TEXT && r->type != QR_XT_TEXT)
        return coerce_const(x, l, r->type) == 0 ? r->type : -1;
    if (r->kind == QR_EX_CONST && r->type == QR_XT_TEXT && l->type != QR_XT_TEXT)
        return coerce_const(x, r, l->type) == 0 ? l->type : -1;
    if (l->type == r->type)
        return l->type;
    if (is_num(l->type) && is_num(r->type))
        return QR_XT_FLOAT;
    if ((l->type == QR_XT_TEXT && r->type == QR_XT_JSON) ||
        (l->type == QR_XT_JSON && r->type == QR_XT_TEXT))
        return QR_XT_TEXT;
    qr_bind_fail(x->b, loc, "42883", "operator does not exist: %s vs %s", qr_xtype_name(l->type),
                 qr_xtype_name(r->type));
    return -1;
}

static qr_expr *text_const(qr_xbind *x, const char *s, int32_t loc)
{
    qr_expr *c = node(x, QR_EX_CONST, QR_XT_TEXT, loc, 0);
    if (!c)
        return NULL;
    size_t n = strlen(s);
    char *p = qr_arena_memdup(x->b->a, n ? s : "", n ? n : 1);
    if (!p) {
        qr_errf(x->b->e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    c->val = (qr_cell){.s = p, .n = (uint32_t)n};
    return c;
}

static qr_expr *a_const(qr_xbind *x, const PgQuery__AConst *c)
{
    int32_t loc = c->location;
    qr_expr *e;
    if (c->isnull) {
        if ((e = node(x, QR_EX_CONST, QR_XT_NULL, loc, 0)))
            e->val.null = 1;
        return e;
    }
    switch (c->val_case) {
    case PG_QUERY__A__CONST__VAL_IVAL:
        if ((e = node(x, QR_EX_CONST, QR_XT_INT, loc, 0)))
            e->val.i = c->ival->ival;
        return e;
    case PG_QUERY__A__CONST__VAL_FVAL: {
        const char *s = c->fval->fval;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (!*end && !errno) {
            if ((e = node(x, QR_EX_CONST, QR_XT_INT, loc, 0)))
                e->val.i = v;
            return e;
        }
        if ((e = node(x, QR_EX_CONST, QR_XT_FLOAT, loc, 0)))
            e->val.f = strtod(s, NULL);
        return e;
    }
    case PG_QUERY__A__CONST__VAL_BOOLVAL:
        if ((e = node(x, QR_EX_CONST, QR_XT_BOOL, loc, 0)))
            e->val.i = c->boolval->boolval;
        return e;
    case PG_QUERY__A__CONST__VAL_SVAL:
        return text_const(x, c->sval->sval, loc);
    default:
        return fail(x, loc, QR_E_FEATURE, "%s literals are not supported", "bit-string");
    }
}

/* The expression type a SQL type name casts to; 0 when unknown. */
static int cast_type(const PgQuery__TypeName *tn)
{
    const char *n = tn && tn->n_names ? str_of(tn->names[tn->n_names - 1]) : NULL;
    if (!n)
        return 0;
    static const struct {
        const char *name;
        int t;
    } m[] = {{"text", QR_XT_TEXT},         {"varchar", QR_XT_TEXT},   {"bpchar", QR_XT_TEXT},
             {"int8", QR_XT_INT},          {"int4", QR_XT_INT},       {"int2", QR_XT_INT},
             {"bigint", QR_XT_INT},        {"integer", QR_XT_INT},    {"float8", QR_XT_FLOAT},
             {"float4", QR_XT_FLOAT},      {"numeric", QR_XT_FLOAT},  {"bool", QR_XT_BOOL},
             {"timestamp", QR_XT_TS},      {"timestamptz", QR_XT_TS}, {"timestamp_ns", QR_XT_TS},
             {"json", QR_XT_JSON},         {"jsonb", QR_XT_JSON}};
    for (size_t i = 0; i < sizeof m / sizeof *m; i++)
        if (!strcasecmp(n, m[i].name))
            return m[i].t;
    return 0;
}

static qr_expr *bind(qr_xbind *x, const Node *n);

static int args_of(qr_xbind *x, qr_expr *e, Node *const *args, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(e->args[i] = bind(x, args[i])))
            return -1;
    return 0;
}

static qr_expr *cmp_node(qr_xbind *x, int op, qr_expr *l, qr_expr *r, int32_t loc)
{
    int t = common_type(x, l, r, loc);
    if (t < 0)
        return NULL;
    if (t == QR_XT_JSON)
        return fail(x, loc, "42883", "operator does not exist: %s comparison", "json");
    qr_expr *e = node(x, QR_EX_CMP, QR_XT_BOOL, loc, 2);
    if (!e)
        return NULL;
    e->op = (uint8_t)op;
    e->args[0] = l;
    e->args[1] = r;
    return e;
}

static qr_expr *bool_of(qr_xbind *x, qr_expr *e, const char *what)
{
    if (!e)
        return NULL;
    if (e->type == QR_XT_NULL || e->type == QR_XT_BOOL)
        return e;
    if (e->kind == QR_EX_CONST && e->type == QR_XT_TEXT)
        return coerce_const(x, e, QR_XT_BOOL) == 0 ? e : NULL;
    return fail(x, e->loc, QR_E_DATATYPE, "argument of %s must be type boolean", what);
}

static qr_expr *a_expr(qr_xbind *x, const PgQuery__AExpr *a)
{
    const char *op = a->n_name ? str_of(a->name[a->n_name - 1]) : NULL;
    int32_t loc = a->location;
    if (a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP && op && a->lexpr && a->rexpr) {
        static const struct {
            const char *s;
            int op;
        } cmps[] = {{"=", QR_CMP_EQ}, {"<>", QR_CMP_NE}, {"!=", QR_CMP_NE}, {"<", QR_CMP_LT},
                    {"<=", QR_CMP_LE}, {">", QR_CMP_GT}, {">=", QR_CMP_GE}};
        for (size_t i = 0; i < sizeof cmps / sizeof *cmps; i++)
            if (!strcmp(op, cmps[i].s)) {
                qr_expr *l = bind(x, a->lexpr), *r = l ? bind(x, a->rexpr) : NULL;
                return r ? cmp_node(x, cmps[i].op, l, r, loc) : NULL;
            }
        if (strlen(op) == 1 && strchr("+-*/%", op[0])) {
            qr_expr *l = bind(x, a->lexpr), *r = l ? bind(x, a->rexpr) : NULL;
            if (!r)
                return NULL;
            if (l->kind == QR_EX_CONST && l->type == QR_XT_TEXT && coerce_const(x, l, r->type))
                return NULL;
            if (r->kind == QR_EX_CONST && r->type == QR_XT_TEXT && coerce_const(x, r, l->type))
                return NULL;
            int lt = l->type == QR_XT_NULL ? QR_XT_INT : l->type;
            int rt = r->type == QR_XT_NULL ? QR_XT_INT : r->type;
            if (!is_num(lt) || !is_num(rt))
                return fail(x, loc, "42883", "operator does not exist: %s on these types", op);
            qr_expr *e = node(x, QR_EX_ARITH, lt == QR_XT_FLOAT || rt == QR_XT_FLOAT ? QR_XT_FLOAT
                                                                                    : QR_XT_INT,
                              loc, 2);
            if (!e)
                return NULL;
            e->op = (uint8_t)op[0];
            e->args[0] = l;
            e->args[1] = r;
            return e;
        }
        if (!strcmp(op, "||")) {
            qr_expr *e = node(x, QR_EX_FUNC, QR_XT_TEXT, loc, 2);
            if (!e || args_of(x, e, (Node *const[]){a->lexpr, a->rexpr}, 2) != 0)
                return NULL;
            e->fn = QR_FN_CONCAT_OP;
            return e;
        }
        if (!strcmp(op, "->") || !strcmp(op, "->>")) {
            qr_expr *e = node(x, QR_EX_FUNC, op[2] ? QR_XT_TEXT : QR_XT_JSON, loc, 2);
            if (!e || args_of(x, e, (Node *const[]){a->lexpr, a->rexpr}, 2) != 0)
                return NULL;
            if (e->args[0]->type != QR_XT_JSON && e->args[0]->type != QR_XT_TEXT)
                return fail(x, loc, "42883", "operator %s takes a json or map column", op);
            if (e->args[1]->type != QR_XT_TEXT && e->args[1]->type != QR_XT_INT)
                return fail(x, loc, "42883", "operator %s takes a text key or an integer index",
                            op);
            e->fn = op[2] ? QR_FN_JSON_GET_TEXT : QR_FN_JSON_GET;
            return e;
        }
        if (!strcmp(op, "@@") || !strcmp(op, "##"))
            return fail(x, loc, QR_E_FEATURE,
                        "%s outside the index filter (under OR with a predicate the index "
                        "cannot answer, or outside WHERE) is not supported",
                        op);
        return fail(x, loc, "42883", "operator does not exist: %s", op);
    }
    if (a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP && op && !strcmp(op, "-") && !a->lexpr) {
        qr_expr *v = bind(x, a->rexpr);
        if (!v)
            return NULL;
        if (v->kind == QR_EX_CONST && is_num(v->type)) { /* fold -5 */
            if (v->type == QR_XT_FLOAT)
                v->val.f = -v->val.f;
            else if (v->val.i == INT64_MIN)
                return fail(x, loc, QR_E_OUT_OF_RANGE, "%s out of range", "bigint");
            else
                v->val.i = -v->val.i;
            return v;
        }
        if (!is_num(v->type))
            return fail(x, loc, "42883", "operator does not exist: - %s", qr_xtype_name(v->type));
        qr_expr *e = node(x, QR_EX_NEG, v->type, loc, 1);
        if (e)
            e->args[0] = v;
        return e;
    }
    if (a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_IN) {
        if (!a->rexpr || a->rexpr->node_case != PG_QUERY__NODE__NODE_LIST)
            return fail(x, loc, QR_E_FEATURE, "%s is not supported yet", "IN (subquery)");
        const PgQuery__List *l = a->rexpr->list;
        qr_expr *e = node(x, QR_EX_IN, QR_XT_BOOL, loc, (uint32_t)l->n_items + 1);
        if (!e || !(e->args[0] = bind(x, a->lexpr)))
            return NULL;
        e->neg = op && !strcmp(op, "<>");
        for (size_t i = 0; i < l->n_items; i++) {
            if (!(e->args[i + 1] = bind(x, l->items[i])) ||
                common_type(x, e->args[0], e->args[i + 1], loc) < 0)
                return NULL;
        }
        return e;
    }
    if (a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_LIKE ||
        a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE) {
        qr_expr *e = node(x, QR_EX_LIKE, QR_XT_BOOL, loc, 2);
        if (!e || args_of(x, e, (Node *const[]){a->lexpr, a->rexpr}, 2) != 0)
            return NULL;
        e->icase = a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE;
        e->neg = op && op[0] == '!';
        for (int k = 0; k < 2; k++)
            if (e->args[k]->type != QR_XT_TEXT && e->args[k]->type != QR_XT_NULL &&
                e->args[k]->type != QR_XT_JSON)
                return fail(x, loc, "42883", "%s takes text operands",
                            e->icase ? "ILIKE" : "LIKE");
        return e;
    }
    if (a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN ||
        a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN) {
        const PgQuery__List *l =
            a->rexpr && a->rexpr->node_case == PG_QUERY__NODE__NODE_LIST ? a->rexpr->list : NULL;
        if (!l || l->n_items != 2)
            return fail(x, loc, QR_E_SYNTAX, "%s needs two bounds", "BETWEEN");
        qr_expr *v = bind(x, a->lexpr), *lo = v ? bind(x, l->items[0]) : NULL;
        qr_expr *v2 = lo ? bind(x, a->lexpr) : NULL, *hi = v2 ? bind(x, l->items[1]) : NULL;
        qr_expr *c1 = hi ? cmp_node(x, QR_CMP_GE, v, lo, loc) : NULL;
        qr_expr *c2 = c1 ? cmp_node(x, QR_CMP_LE, v2, hi, loc) : NULL;
        qr_expr *e = c2 ? node(x, QR_EX_AND, QR_XT_BOOL, loc, 2) : NULL;
        if (!e)
            return NULL;
        e->args[0] = c1;
        e->args[1] = c2;
        if (a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN)
            return e;
        qr_expr *nt = node(x, QR_EX_NOT, QR_XT_BOOL, loc, 1);
        if (nt)
            nt->args[0] = e;
        return nt;
    }
    if (a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF) {
        qr_expr *e = node(x, QR_EX_FUNC, 0, loc, 2);
        if (!e || args_of(x, e, (Node *const[]){a->lexpr, a->rexpr}, 2) != 0 ||
            common_type(x, e->args[0], e->args[1], loc) < 0)
            return NULL;
        e->fn = QR_FN_NULLIF;
        e->type = e->args[0]->type;
        return e;
    }
    return fail(x, loc, QR_E_FEATURE, "operator %s is not supported", op ? op : "?");
}

static int one_type(qr_xbind *x, qr_expr *e, uint32_t from, uint32_t step, int32_t loc)
{
    int t = QR_XT_NULL;
    for (uint32_t k = from; k < e->nargs; k += step) {
        qr_expr *a = e->args[k];
        if (a->type == QR_XT_NULL)
            continue;
        if (t == QR_XT_NULL || t == a->type) {
            t = a->type;
        } else if (is_num(t) && is_num(a->type)) {
            t = QR_XT_FLOAT;
        } else if (a->kind == QR_EX_CONST && a->type == QR_XT_TEXT) {
            if (coerce_const(x, a, t) != 0)
                return -1;
        } else {
            qr_bind_fail(x->b, loc, QR_E_DATATYPE, "types %s and %s cannot be matched",
                         qr_xtype_name(t), qr_xtype_name(a->type));
            return -1;
        }
    }
    for (uint32_t k = from; k < e->nargs; k += step) /* earlier text literals of a later type */
        if (e->args[k]->kind == QR_EX_CONST && e->args[k]->type == QR_XT_TEXT && t != QR_XT_TEXT &&
            coerce_const(x, e->args[k], t) != 0)
            return -1;
    return t;
}

static qr_expr *func_call(qr_xbind *x, const PgQuery__FuncCall *f)
{
    const char *name = fn_name(f);
    int32_t loc = f->location;
    if (x->agg_cb) { /* an aggregate (group scope registers it) */
        int slot = x->agg_cb(x, f);
        if (slot == -2)
            return NULL;
        if (slot >= 0) {
            qr_expr *e = node(x, QR_EX_COL, x->slot_type[slot], loc, 0);
            if (e) {
                e->slot = (uint32_t)slot;
                e->ctype = x->slot_ctype[slot];
            }
            return e;
        }
    } else if (!strcmp(name, "count") || !strcmp(name, "sum") || !strcmp(name, "avg") ||
               !strcmp(name, "min") || !strcmp(name, "max")) {
        return fail(x, loc, "42803", "aggregate functions are not allowed %s",
                    x->where ? x->where : "here");
    }
    if (!strcmp(name, "bm25")) {
        if (!x->allow_score)
            return fail(x, loc, QR_E_FEATURE, "bm25() is not available %s",
                        "here (it scores the rows of a full-text WHERE, without GROUP BY)");
        x->uses_score = 1;
        return node(x, QR_EX_SCORE, QR_XT_FLOAT, loc, 0);
    }
    if (f->agg_star || f->agg_distinct || f->over)
        return fail(x, loc, QR_E_FEATURE, "%s(*), DISTINCT or OVER is not supported here", name);
    static const struct {
        const char *name;
        int fn, min, max, type; /* type 0: from the arguments */
    } fns[] = {
        {"date_trunc", QR_FN_DATE_TRUNC, 2, 2, QR_XT_TS},
        {"extract", QR_FN_EXTRACT, 2, 2, QR_XT_FLOAT},
        {"date_part", QR_FN_EXTRACT, 2, 2, QR_XT_FLOAT},
        {"floor", QR_FN_FLOOR, 1, 1, 0},
        {"ceil", QR_FN_CEIL, 1, 1, 0},
        {"ceiling", QR_FN_CEIL, 1, 1, 0},
        {"lower", QR_FN_LOWER, 1, 1, QR_XT_TEXT},
        {"upper", QR_FN_UPPER, 1, 1, QR_XT_TEXT},
        {"length", QR_FN_LENGTH, 1, 1, QR_XT_INT},
        {"char_length", QR_FN_LENGTH, 1, 1, QR_XT_INT},
        {"character_length", QR_FN_LENGTH, 1, 1, QR_XT_INT},
        {"octet_length", QR_FN_OCTET_LENGTH, 1, 1, QR_XT_INT},
        {"abs", QR_FN_ABS, 1, 1, 0},
        {"coalesce", QR_FN_COALESCE, 1, 16, 0},
        {"greatest", QR_FN_GREATEST, 1, 16, 0},
        {"least", QR_FN_LEAST, 1, 16, 0},
        {"nullif", QR_FN_NULLIF, 2, 2, 0},
        {"substr", QR_FN_SUBSTR, 2, 3, QR_XT_TEXT},
        {"substring", QR_FN_SUBSTR, 2, 3, QR_XT_TEXT},
        {"concat", QR_FN_CONCAT, 1, 16, QR_XT_TEXT},
        {"starts_with", QR_FN_STARTS_WITH, 2, 2, QR_XT_BOOL},
        {"strpos", QR_FN_STRPOS, 2, 2, QR_XT_INT},
        {"position", QR_FN_STRPOS, 2, 2, QR_XT_INT}, /* position(sub IN text) */
        {"regexp_matches", QR_FN_REGEXP_MATCHES, 2, 2, QR_XT_BOOL},
    };
    int at = -1;
    for (size_t i = 0; i < sizeof fns / sizeof *fns && at < 0; i++)
        if (!strcmp(name, fns[i].name))
            at = (int)i;
    if (at < 0)
        return fail(x, loc, "42883", "function %s() does not exist (docs/SQL.md lists the functions)",
                    name);
    if ((int)f->n_args < fns[at].min || (int)f->n_args > fns[at].max)
        return fail(x, loc, "42883", "function %s() takes another number of arguments", name);
    qr_expr *e = node(x, QR_EX_FUNC, fns[at].type, loc, (uint32_t)f->n_args);
    if (!e || args_of(x, e, f->args, f->n_args) != 0)
        return NULL;
    e->fn = (uint8_t)fns[at].fn;
    qr_expr **a = e->args;
    switch (e->fn) {
    case QR_FN_DATE_TRUNC: {
        if (a[0]->kind != QR_EX_CONST || a[0]->type != QR_XT_TEXT)
            return fail(x, a[0]->loc, QR_E_FEATURE, "date_trunc's unit must be a %s",
                        "string literal");
        char u[32];
        snprintf(u, sizeof u, "%.*s", (int)a[0]->val.n, a[0]->val.s);
        if (!(e->unit = (uint8_t)qr_tunit_parse(u)))
            return fail(x, a[0]->loc, QR_E_ARGS, "date_trunc unit \"%s\" not recognized", u);
        if (coerce_const(x, a[1], QR_XT_TS) != 0)
            return NULL;
        if (a[1]->type != QR_XT_TS && a[1]->type != QR_XT_NULL)
            return fail(x, a[1]->loc, "42883", "date_trunc takes a %s", "timestamp");
        break;
    }
    case QR_FN_EXTRACT: {
        if (a[0]->kind != QR_EX_CONST || a[0]->type != QR_XT_TEXT)
            return fail(x, a[0]->loc, QR_E_FEATURE, "extract's field must be a %s",
                        "name or string literal");
        char u[32];
        snprintf(u, sizeof u, "%.*s", (int)a[0]->val.n, a[0]->val.s);
        if (!(e->unit = (uint8_t)qr_xfield_parse(u)))
            return fail(x, a[0]->loc, QR_E_FEATURE, "extract field \"%s\" is not supported", u);
        if (coerce_const(x, a[1], QR_XT_TS) != 0)
            return NULL;
        if (a[1]->type != QR_XT_TS && a[1]->type != QR_XT_NULL)
            return fail(x, a[1]->loc, "42883", "%s takes a timestamp", name);
        break;
    }
    case QR_FN_FLOOR:
    case QR_FN_CEIL:
    case QR_FN_ABS:
        if (!is_num(a[0]->type) && a[0]->type != QR_XT_NULL)
            return fail(x, loc, "42883", "function %s() takes a number", name);
        e->type = a[0]->type == QR_XT_NULL ? QR_XT_INT : a[0]->type;
        break;
    case QR_FN_COALESCE:
    case QR_FN_GREATEST:
    case QR_FN_LEAST: {
        int t = one_type(x, e, 0, 1, loc);
        if (t < 0)
            return NULL;
        e->type = (uint8_t)t;
        break;
    }
    case QR_FN_SUBSTR:
        for (uint32_t k = 1; k < e->nargs; k++)
            if (coerce_const(x, a[k], QR_XT_INT) != 0 ||
                (a[k]->type != QR_XT_INT && a[k]->type != QR_XT_NULL))
                return fail(x, a[k]->loc, "42883", "%s's positions are integers", name);
        /* fall through */
    case QR_FN_LOWER:
    case QR_FN_UPPER:
    case QR_FN_LENGTH:
    case QR_FN_OCTET_LENGTH:
    case QR_FN_STARTS_WITH:
    case QR_FN_STRPOS:
    case QR_FN_REGEXP_MATCHES:
        if (a[0]->type != QR_XT_TEXT && a[0]->type != QR_XT_JSON && a[0]->type != QR_XT_NULL)
            return fail(x, loc, "42883", "function %s() takes text", name);
        if ((e->fn == QR_FN_STARTS_WITH || e->fn == QR_FN_STRPOS ||
             e->fn == QR_FN_REGEXP_MATCHES) &&
            a[1]->type != QR_XT_TEXT && a[1]->type != QR_XT_NULL)
            return fail(x, loc, "42883", "function %s() takes text", name);
        break;
    default:
        break;
    }
    return e;
}

static qr_expr *case_expr(qr_xbind *x, const PgQuery__CaseExpr *c)
{
    uint32_t n = (uint32_t)c->n_args * 2 + (c->defresult ? 1 : 0);
    qr_expr *e = node(x, QR_EX_CASE, 0, c->location, n);
    if (!e)
        return NULL;
    for (size_t i = 0; i < c->n_args; i++) {
        const PgQuery__CaseWhen *w = c->args[i]->case_when;
        qr_expr *cond;
        if (c->arg) { /* CASE v WHEN a: v = a */
            qr_expr *v = bind(x, c->arg), *r = v ? bind(x, w->expr) : NULL;
            cond = r ? cmp_node(x, QR_CMP_EQ, v, r, w->location) : NULL;
        } else {
            cond = bool_of(x, bind(x, w->expr), "CASE/WHEN");
        }
        if (!cond || !(e->args[2 * i + 1] = bind(x, w->result)))
            return NULL;
        e->args[2 * i] = cond;
    }
    if (c->defresult && !(e->args[n - 1] = bind(x, c->defresult)))
        return NULL;
    /* the result type: THEN and ELSE values (positions 1, 3, ..., and the last) */
    int t = QR_XT_NULL;
    for (uint32_t k = 0; k < n; k++) {
        if (k % 2 == 0 && !(c->defresult && k == n - 1))
            continue;
        qr_expr *r = e->args[k];
        if (r->type == QR_XT_NULL || (r->kind == QR_EX_CONST && r->type == QR_XT_TEXT))
            continue;
        if (t == QR_XT_NULL || t == r->type)
            t = r->type;
        else if (is_num(t) && is_num(r->type))
            t = QR_XT_FLOAT;
        else
            return fail(x, r->loc, QR_E_DATATYPE, "CASE types %s cannot be matched",
                        qr_xtype_name(r->type));
    }
    if (t == QR_XT_NULL)
        t = QR_XT_TEXT;
    for (uint32_t k = 0; k < n; k++)
        if ((k % 2 == 1 || (c->defresult && k == n - 1)) && coerce_const(x, e->args[k], t) != 0)
            return NULL;
    e->type = (uint8_t)t;
    return e;
}

static qr_expr *column(qr_xbind *x, const PgQuery__ColumnRef *cr)
{
    if (x->agg_cb) {
        qr_err tmp;
        qr_binder tb = *x->b;
        tb.e = &tmp;
        int has_cols = x->b->def || x->b->scope;
        int c = has_cols ? qr_bind_column(&tb, cr) : -1;
        if (c < 0 && has_cols) {
            qr_bind_column(x->b, cr); /* 42703 with its position */
            return NULL;
        }
        return fail(x, cr->location, "42803",
                    "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate "
                    "function",
                    qr_bind_coldef(x->b, c)->name);
    }
    if (!x->b->def && !x->b->scope)
        return fail(x, cr->location, QR_E_UNDEFINED_COLUMN, "column \"%s\" does not exist",
                    cr->n_fields ? str_of(cr->fields[cr->n_fields - 1]) : "?");
    int c = qr_bind_column(x->b, cr);
    if (c < 0)
        return NULL;
    const qr_coldef *cd = qr_bind_coldef(x->b, c);
    x->refs |= x->b->scope ? 1u << x->b->last_range : 1u;
    qr_expr *e = node(x, QR_EX_COL, qr_xtype_of_col(cd->type), cr->location, 0);
    if (!e)
        return NULL;
    e->slot = (uint32_t)c;
    e->ctype = cd->type;
    if (x->need)
        x->need[c] = 1;
    return e;
}

/* col['key'] or col[1] on a json or map column: the same as ->. */
static qr_expr *indirection(qr_xbind *x, const PgQuery__AIndirection *ind)
{
    qr_expr *cur = bind(x, ind->arg);
    for (size_t i = 0; cur && i < ind->n_indirection; i++) {
        const Node *s = ind->indirection[i];
        if (s->node_case != PG_QUERY__NODE__NODE_A_INDICES || s->a_indices->is_slice ||
            !s->a_indices->uidx)
            return fail(x, cur->loc, QR_E_FEATURE, "%s is not supported", "this subscript");
        if (cur->type != QR_XT_JSON)
            return fail(x, cur->loc, "42804", "cannot subscript type %s", qr_xtype_name(cur->type));
        qr_expr *e = node(x, QR_EX_FUNC, QR_XT_JSON, cur->loc, 2);
        if (!e || !(e->args[1] = bind(x, s->a_indices->uidx)))
            return NULL;
        e->fn = QR_FN_JSON_GET;
        e->args[0] = cur;
        cur = e;
    }
    return cur;
}

static qr_expr *bind_node(qr_xbind *x, const Node *n)
{
    if (!n)
        return fail(x, -1, QR_E_INTERNAL, "%s", "empty expression");
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_COLUMN_REF:
        return column(x, n->column_ref);
    case PG_QUERY__NODE__NODE_A_CONST:
        return a_const(x, n->a_const);
    case PG_QUERY__NODE__NODE_A_EXPR:
        return a_expr(x, n->a_expr);
    case PG_QUERY__NODE__NODE_FUNC_CALL:
        return func_call(x, n->func_call);
    case PG_QUERY__NODE__NODE_CASE_EXPR:
        return case_expr(x, n->case_expr);
    case PG_QUERY__NODE__NODE_A_INDIRECTION:
        return indirection(x, n->a_indirection);
    case PG_QUERY__NODE__NODE_COALESCE_EXPR: {
        const PgQuery__CoalesceExpr *c = n->coalesce_expr;
        qr_expr *e = node(x, QR_EX_FUNC, 0, c->location, (uint32_t)c->n_args);
        if (!e || args_of(x, e, c->args, c->n_args) != 0)
            return NULL;
        e->fn = QR_FN_COALESCE;
        int t = one_type(x, e, 0, 1, c->location);
        if (t < 0)
            return NULL;
        e->type = (uint8_t)t;
        return e;
    }
    case PG_QUERY__NODE__NODE_MIN_MAX_EXPR: {
        const PgQuery__MinMaxExpr *m = n->min_max_expr;
        qr_expr *e = node(x, QR_EX_FUNC, 0, m->location, (uint32_t)m->n_args);
        if (!e || args_of(x, e, m->args, m->n_args) != 0)
            return NULL;
        e->fn = m->op == PG_QUERY__MIN_MAX_OP__IS_GREATEST ? QR_FN_GREATEST : QR_FN_LEAST;
        int t = one_type(x, e, 0, 1, m->location);
        if (t < 0)
            return NULL;
        e->type = (uint8_t)t;
        return e;
    }
    case PG_QUERY__NODE__NODE_TYPE_CAST: {
        const PgQuery__TypeCast *tc = n->type_cast;
        int to = cast_type(tc->type_name);
        int32_t loc = qr_node_loc(n);
        if (!to)
            return fail(x, loc, "42704", "type %s is not supported in casts",
                        tc->type_name && tc->type_name->n_names
                            ? str_of(tc->type_name->names[tc->type_name->n_names - 1])
                            : "?");
        qr_expr *v = bind(x, tc->arg);
        if (!v)
            return NULL;
        if (v->kind == QR_EX_CONST && v->type == QR_XT_TEXT) /* TIMESTAMP '...', '5'::int */
            return coerce_const(x, v, to) == 0 ? v : NULL;
        if (v->type == to)
            return v;
        qr_expr *e = node(x, QR_EX_CAST, to, loc, 1);
        if (e)
            e->args[0] = v;
        return e;
    }
    case PG_QUERY__NODE__NODE_BOOL_EXPR: {
        const PgQuery__BoolExpr *b = n->bool_expr;
        int kind = b->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR  ? QR_EX_AND
                   : b->boolop == PG_QUERY__BOOL_EXPR_TYPE__OR_EXPR ? QR_EX_OR
                                                                    : QR_EX_NOT;
        qr_expr *e = node(x, kind, QR_XT_BOOL, b->location, (uint32_t)b->n_args);
        if (!e)
            return NULL;
        for (size_t i = 0; i < b->n_args; i++)
            if (!(e->args[i] = bool_of(x, bind(x, b->args[i]),
                                       kind == QR_EX_AND  ? "AND"
                                       : kind == QR_EX_OR ? "OR"
                                                          : "NOT")))
                return NULL;
        return e;
    }
    case PG_QUERY__NODE__NODE_NULL_TEST: {
        const PgQuery__NullTest *t = n->null_test;
        qr_expr *e = node(x, QR_EX_ISNULL, QR_XT_BOOL, t->location, 1);
        if (!e || !(e->args[0] = bind(x, t->arg)))
            return NULL;
        e->neg = t->nulltesttype == PG_QUERY__NULL_TEST_TYPE__IS_NOT_NULL;
        return e;
    }
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION:
        return fail(x, n->sqlvalue_function->location, QR_E_FEATURE,
                    "%s is not supported (the data's time is fixed; write a TIMESTAMP literal)",
                    "CURRENT_TIMESTAMP / now()");
    default:
        return fail(x, qr_node_loc(n), QR_E_FEATURE, "%s is not supported in expressions",
                    qr_node_what(n));
    }
}

int qr_expr_same(const qr_expr *a, const qr_expr *b)
{
    if (a->kind != b->kind || a->type != b->type || a->op != b->op || a->fn != b->fn ||
        a->neg != b->neg || a->icase != b->icase || a->unit != b->unit || a->nargs != b->nargs)
        return 0;
    if (a->kind == QR_EX_COL && (a->slot != b->slot || a->ctype != b->ctype))
        return 0;
    if (a->kind == QR_EX_CONST) {
        if (a->val.null != b->val.null)
            return 0;
        if (!a->val.null && a->type != QR_XT_NULL && qr_xval_cmp(a->type, &a->val, &b->val) != 0)
            return 0;
    }
    for (uint32_t k = 0; k < a->nargs; k++)
        if (!qr_expr_same(a->args[k], b->args[k]))
            return 0;
    return 1;
}

/* In the group scope, a node equal to a GROUP BY key reads its slot. */
static qr_expr *bind(qr_xbind *x, const Node *n)
{
    if (x->agg_cb && x->nkeys && n && n->node_case != PG_QUERY__NODE__NODE_A_CONST) {
        qr_xbind row = *x;
        qr_err tmp;
        qr_binder rb = *x->b;
        rb.e = &tmp;
        row.b = &rb;
        row.agg_cb = NULL;
        row.need = NULL;
        row.where = "in a GROUP BY key";
        qr_expr *r = bind_node(&row, n);
        for (uint32_t k = 0; r && k < x->nkeys; k++)
            if (qr_expr_same(r, x->keys[k])) {
                qr_expr *e = node(x, QR_EX_COL, x->slot_type[k], r->loc, 0);
                if (e) {
                    e->slot = k;
                    e->ctype = x->slot_ctype[k];
                }
                return e;
            }
    }
    return bind_node(x, n);
}

qr_expr *qr_sql_expr(qr_xbind *x, const Node *n)
{
    return bind(x, n);
}

qr_expr *qr_sql_bool_expr(qr_xbind *x, const Node *n, const char *what)
{
    return bool_of(x, bind(x, n), what);
}
