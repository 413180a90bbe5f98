/* initplan.c - scalar and EXISTS subqueries run once and put into the parse
 * tree as literals (initplan.h).
 *
 * The tree is protobuf-c's unpacked message, allocated with malloc and
 * freed by qr_sqlp_free with protobuf_c_message_free_unpacked; a replaced
 * SubLink is freed here and its literal is built from malloc'ed messages,
 * so the tree keeps one owner. The walk is generic (the messages'
 * descriptors), so a subquery is found wherever the grammar allows one. */
#include "sql/initplan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/schema.h"
#include "util/timefmt.h"

#define MAX_DEPTH  2000  /* parse trees are far shallower: libpg_query limits nesting */
#define MAX_NOT_IN 1024  /* values of a NOT IN (SELECT ...): an IN list's limit (where.c) */

typedef struct walk {
    qr_sqlparse *p;
    qr_sql_subrun run;
    void *rctx;
    qr_qctx *ctx;
    qr_err *e;
} walk;

static int nomem(qr_err *e) { return qr_errf(e, QR_E_NOMEM, "out of memory placing a subquery's value"); }

static PgQuery__String *new_string(const char *s, size_t n)
{
    PgQuery__String *v = malloc(sizeof *v);
    char *c = malloc(n + 1);
    if (!v || !c) {
        free(v);
        free(c);
        return NULL;
    }
    pg_query__string__init(v);
    memcpy(c, s, n);
    c[n] = 0;
    v->sval = c;
    return v;
}

/* A_Const of a number written as text (PostgreSQL's Float node: a numeric
 * literal of any size). */
static int number_const(PgQuery__AConst *c, const char *digits)
{
    PgQuery__Float *f = malloc(sizeof *f);
    char *s = strdup(digits);
    if (!f || !s) {
        free(f);
        free(s);
        return -1;
    }
    pg_query__float__init(f);
    f->fval = s;
    c->val_case = PG_QUERY__A__CONST__VAL_FVAL;
    c->fval = f;
    return 0;
}

/* n becomes `TIMESTAMP 'text'`: a TypeCast of the string const c. */
static int timestamp_cast(PgQuery__Node *n, PgQuery__AConst *c, int32_t loc)
{
    PgQuery__TypeCast *tc = malloc(sizeof *tc);
    PgQuery__TypeName *tn = malloc(sizeof *tn);
    PgQuery__Node *arg = malloc(sizeof *arg), **names = malloc(sizeof *names);
    PgQuery__Node *nm = malloc(sizeof *nm);
    PgQuery__String *s = new_string("timestamp", 9);
    if (!tc || !tn || !arg || !names || !nm || !s) {
        free(tc), free(tn), free(arg), free(names), free(nm);
        if (s)
            free(s->sval), free(s);
        return -1;
    }
    pg_query__type_cast__init(tc);
    pg_query__type_name__init(tn);
    pg_query__node__init(arg);
    pg_query__node__init(nm);
    nm->node_case = PG_QUERY__NODE__NODE_STRING;
    nm->string = s;
    names[0] = nm;
    tn->n_names = 1;
    tn->names = names;
    tn->typemod = -1;
    tn->location = loc;
    arg->node_case = PG_QUERY__NODE__NODE_A_CONST;
    arg->a_const = c;
    tc->arg = arg;
    tc->type_name = tn;
    tc->location = loc;
    n->node_case = PG_QUERY__NODE__NODE_TYPE_CAST;
    n->type_cast = tc;
    return 0;
}

/* Make node n (empty: its message already freed by the caller) the literal
 * of column 0 of row `row` of r (NULL when r has no such row), or with
 * `exists` the boolean "r has rows". */
static int place(PgQuery__Node *n, const qr_result *r, uint64_t row, int exists, int32_t loc,
                 qr_err *e)
{
    PgQuery__AConst *c = malloc(sizeof *c);
    if (!c)
        return nomem(e);
    pg_query__a__const__init(c);
    c->location = loc;
    const qr_cell *v = row < r->nrows ? qr_result_row(r, row) : NULL;
    const qr_rcol *col = &r->cols[0];
    char buf[64];
    int rc = 0, ts = 0;
    if (exists) {
        PgQuery__Boolean *b = malloc(sizeof *b);
        if (!b) {
            rc = -1;
        } else {
            pg_query__boolean__init(b);
            b->boolval = r->nrows > 0;
            c->val_case = PG_QUERY__A__CONST__VAL_BOOLVAL;
            c->boolval = b;
        }
    } else if (!v || v->null) {
        c->isnull = 1;
    } else if (col->kind == QR_RK_FLOAT) {
        snprintf(buf, sizeof buf, "%.17g", v->f);
        rc = number_const(c, buf);
    } else if (col->kind == QR_RK_INT && col->type == QT_BOOL) {
        PgQuery__Boolean *b = malloc(sizeof *b);
        if (!b) {
            rc = -1;
        } else {
            pg_query__boolean__init(b);
            b->boolval = v->i != 0;
            c->val_case = PG_QUERY__A__CONST__VAL_BOOLVAL;
            c->boolval = b;
        }
    } else if (col->kind == QR_RK_INT && col->type == QT_TIMESTAMP) {
        qr_time_format(v->i, buf);
        PgQuery__String *s = new_string(buf, QR_TIME_TEXT_LEN);
        if (!s) {
            rc = -1;
        } else {
            c->val_case = PG_QUERY__A__CONST__VAL_SVAL;
            c->sval = s;
            ts = 1;
        }
    } else if (col->kind == QR_RK_INT) {
        if (col->type == QT_UINT64)
            snprintf(buf, sizeof buf, "%" PRIu64, qr_num_to_u64(v->i));
        else if (col->type == QT_FLOAT64)
            snprintf(buf, sizeof buf, "%.17g", qr_num_to_f64(v->i));
        else
            snprintf(buf, sizeof buf, "%" PRId64, v->i);
        rc = number_const(c, buf);
    } else { /* text, json */
        PgQuery__String *s = new_string(v->s ? v->s : "", v->n);
        if (!s) {
            rc = -1;
        } else {
            c->val_case = PG_QUERY__A__CONST__VAL_SVAL;
            c->sval = s;
        }
    }
    if (rc == 0 && ts) {
        rc = timestamp_cast(n, c, loc);
    } else if (rc == 0) {
        n->node_case = PG_QUERY__NODE__NODE_A_CONST;
        n->a_const = c;
        return 0;
    }
    if (rc != 0) {
        protobuf_c_message_free_unpacked(&c->base, NULL);
        n->node_case = PG_QUERY__NODE__NODE__NOT_SET;
        return nomem(e);
    }
    return 0;
}

/* Run subquery sl into r (initialised here; the caller frees it). An
 * unknown name in it is most likely the outer query's (a correlated
 * subquery): the error says so, calling the subquery `what`. */
static int run_sub(walk *w, const PgQuery__SubLink *sl, const char *what, qr_result *r)
{
    qr_result_init(r, w->ctx);
    int rc = w->run(w->rctx, sl->subselect, r, w->e);
    if (rc != 0 && (!strcmp(w->e->code, QR_E_UNDEFINED_COLUMN) ||
                    !strcmp(w->e->code, QR_E_UNDEFINED_TABLE))) {
        size_t l = strlen(w->e->msg);
        snprintf(w->e->msg + l, sizeof w->e->msg - l,
                 " (%s runs once, on its own: correlated subqueries are not supported)", what);
    }
    return rc;
}

static int sublink(walk *w, PgQuery__Node *n)
{
    PgQuery__SubLink *sl = n->sub_link;
    int exists = sl->sub_link_type == PG_QUERY__SUB_LINK_TYPE__EXISTS_SUBLINK;
    int32_t loc = sl->location;
    qr_result r;
    int rc = run_sub(w, sl, "a subquery in an expression", &r);
    if (rc == 0 && !exists && r.ncols != 1) {
        qr_errf(w->e, QR_E_SYNTAX, "subquery must return only one column");
        rc = qr_sqlp_at(w->p, loc, w->e);
    }
    if (rc == 0 && !exists && r.nrows > 1) {
        qr_errf(w->e, "21000", "more than one row returned by a subquery used as an expression");
        rc = qr_sqlp_at(w->p, loc, w->e);
    }
    if (rc == 0) {
        protobuf_c_message_free_unpacked(&sl->base, NULL);
        n->sub_link = NULL;
        rc = place(n, &r, 0, exists, loc, w->e);
    }
    qr_result_free(&r);
    return rc;
}

static const char *oper_of(const PgQuery__SubLink *sl)
{
    const PgQuery__Node *o = sl->n_oper_name ? sl->oper_name[sl->n_oper_name - 1] : NULL;
    return o && o->node_case == PG_QUERY__NODE__NODE_STRING ? o->string->sval : "=";
}

/* `x NOT IN (SELECT y ...)`: libpg_query's NOT over an ANY SubLink. The
 * subquery's rows become the list of `x IN (v1, v2, ...)` under the NOT
 * (its three-valued logic: a NULL among them, or x NULL, gives NULL; an
 * empty subquery makes `x IN` false and the NOT true). */
static int not_in(walk *w, PgQuery__Node *n)
{
    PgQuery__SubLink *sl = n->sub_link;
    int32_t loc = sl->location;
    qr_result r;
    int rc = run_sub(w, sl, "a NOT IN subquery", &r);
    if (rc == 0 && r.ncols != 1) {
        qr_errf(w->e, QR_E_SYNTAX, "subquery has too many columns");
        rc = qr_sqlp_at(w->p, loc, w->e);
    }
    if (rc == 0)
        rc = qr_result_distinct(&r, w->e);
    if (rc == 0 && r.nrows > MAX_NOT_IN) {
        qr_errf(w->e, QR_E_FEATURE,
                "NOT IN (SELECT ...) of more than %d distinct values is not supported yet (this "
                "one has %llu)",
                MAX_NOT_IN, (unsigned long long)r.nrows);
        rc = qr_sqlp_at(w->p, loc, w->e);
    }
    if (rc != 0) {
        qr_result_free(&r);
        return -1;
    }
    PgQuery__Node *test = sl->testexpr;
    sl->testexpr = NULL;
    protobuf_c_message_free_unpacked(&sl->base, NULL);
    n->sub_link = NULL;
    n->node_case = PG_QUERY__NODE__NODE__NOT_SET;
    if (r.nrows == 0) { /* x IN (nothing) */
        protobuf_c_message_free_unpacked(&test->base, NULL);
        qr_result fake;
        qr_result_init(&fake, NULL);
        rc = place(n, &fake, 0, 1, loc, w->e);
        qr_result_free(&fake);
        qr_result_free(&r);
        return rc;
    }
    PgQuery__AExpr *ax = malloc(sizeof *ax);
    PgQuery__List *list = malloc(sizeof *list);
    PgQuery__Node *ln = malloc(sizeof *ln), **opn = malloc(sizeof *opn), *op = malloc(sizeof *op);
    PgQuery__Node **items = calloc(r.nrows, sizeof *items);
    PgQuery__String *eq = new_string("=", 1);
    if (!ax || !list || !ln || !opn || !op || !items || !eq) {
        free(ax), free(list), free(ln), free(opn), free(op), free(items);
        if (eq)
            free(eq->sval), free(eq);
        protobuf_c_message_free_unpacked(&test->base, NULL);
        qr_result_free(&r);
        return nomem(w->e);
    }
    pg_query__a__expr__init(ax);
    pg_query__list__init(list);
    pg_query__node__init(ln);
    pg_query__node__init(op);
    op->node_case = PG_QUERY__NODE__NODE_STRING;
    op->string = eq;
    opn[0] = op;
    ax->kind = PG_QUERY__A__EXPR__KIND__AEXPR_IN;
    ax->n_name = 1;
    ax->name = opn;
    ax->lexpr = test;
    ax->location = loc;
    ln->node_case = PG_QUERY__NODE__NODE_LIST;
    ln->list = list;
    ax->rexpr = ln;
    list->items = items;
    n->node_case = PG_QUERY__NODE__NODE_A_EXPR;
    n->a_expr = ax; /* owned by the tree from here: a failure below leaves it whole */
    for (uint64_t k = 0; k < r.nrows && rc == 0; k++) {
        if (!(items[k] = malloc(sizeof *items[k]))) {
            rc = nomem(w->e);
            break;
        }
        pg_query__node__init(items[k]);
        list->n_items = k + 1;
        rc = place(items[k], &r, k, 0, loc, w->e);
    }
    qr_result_free(&r);
    return rc;
}

static int walk_msg(walk *w, ProtobufCMessage *m, int depth)
{
    if (depth > MAX_DEPTH)
        return qr_errf(w->e, QR_E_TOO_LONG, "statement nested too deeply");
    if (m->descriptor == &pg_query__node__descriptor) {
        PgQuery__Node *n = (PgQuery__Node *)m;
        if (n->node_case == PG_QUERY__NODE__NODE_SUB_LINK &&
            (n->sub_link->sub_link_type == PG_QUERY__SUB_LINK_TYPE__EXPR_SUBLINK ||
             n->sub_link->sub_link_type == PG_QUERY__SUB_LINK_TYPE__EXISTS_SUBLINK) &&
            n->sub_link->subselect)
            return sublink(w, n);
        PgQuery__Node *a0 = n->node_case == PG_QUERY__NODE__NODE_BOOL_EXPR &&
                                    n->bool_expr->boolop == PG_QUERY__BOOL_EXPR_TYPE__NOT_EXPR &&
                                    n->bool_expr->n_args == 1
                                ? n->bool_expr->args[0]
                                : NULL;
        if (a0 && a0->node_case == PG_QUERY__NODE__NODE_SUB_LINK &&
            a0->sub_link->sub_link_type == PG_QUERY__SUB_LINK_TYPE__ANY_SUBLINK &&
            a0->sub_link->subselect && a0->sub_link->testexpr &&
            !strcmp(oper_of(a0->sub_link), "=")) {
            /* its test expression may hold subqueries of its own */
            if (walk_msg(w, &a0->sub_link->testexpr->base, depth + 1) != 0)
                return -1;
            return not_in(w, a0);
        }
    }
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        char *at = (char *)m + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t cnt = *(size_t *)((char *)m + f->quantifier_offset);
            ProtobufCMessage **v = *(ProtobufCMessage ***)at;
            for (size_t k = 0; k < cnt; k++)
                if (v[k] && walk_msg(w, v[k], depth + 1) != 0)
                    return -1;
            continue;
        }
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(uint32_t *)((char *)m + f->quantifier_offset) != f->id)
            continue;
        ProtobufCMessage *c = *(ProtobufCMessage **)at;
        if (c && walk_msg(w, c, depth + 1) != 0)
            return -1;
    }
    return 0;
}

int qr_sql_initplans(qr_sqlparse *p, PgQuery__Node *st, qr_sql_subrun run, void *rctx,
                     qr_qctx *ctx, qr_err *e)
{
    walk w = {p, run, rctx, ctx, e};
    return walk_msg(&w, &st->base, 0);
}
