/* bindjoin.c - the FROM clause of a join bound into scope, per-entry
 * pushdown and join keys (bind.h qr_bind_from_join).
 *
 * Entries come left-deep: `a JOIN b ON ... JOIN c ON ...`, or a comma list
 * `FROM a, b WHERE ...` (inner joins whose keys come from WHERE). An entry
 * is null-extended (its columns NULL in some joined rows) when it is the
 * inner side of a LEFT JOIN or the right side of a FULL JOIN, or when a
 * RIGHT or FULL JOIN comes after it (that join's left side is every entry
 * before it). Each conjunct of WHERE (and of an inner join's ON) goes where
 * it costs least:
 *   - it reads one entry that is not null-extended (for an ON: in the
 *     entries joined so far): into that entry's scan, as an index predicate
 *     when the index answers it, else as the entry's residual filter;
 *   - it is `x = y` with y reading only entry k and x only entries before
 *     k: an equal key of entry k's join (from WHERE only when that join is
 *     inner and no RIGHT or FULL JOIN comes after it);
 *   - anything else: from WHERE, the filter on the joined rows; from an
 *     inner join's ON, a filter on the joined rows right after that join.
 * An outer join's ON takes equal keys and conjuncts that may filter one
 * entry's scan first: a LEFT JOIN's on its inner entry, a RIGHT JOIN's on
 * one entry of its left side that is not null-extended there (filtering
 * the null-extended side before the join is the same as filtering its
 * matches), a FULL JOIN's none; anything else in it is 0A000. An ON may
 * name only the entries joined so far (42P01, as PostgreSQL). */
#include <stdio.h>
#include <string.h>

#include "exec/join.h"
#include "sql/bind.h"
#include "sql/plan.h"

typedef PgQuery__Node Node;

enum { MAXC = 256 };

/* The entries of the FROM clause, left-deep; ons[r] / kinds[r] for r >= 1. */
static int collect(qr_binder *b, const Node *n, const Node **rv, const Node **ons,
                   uint8_t *kinds, const PgQuery__JoinExpr **using, uint32_t *nr)
{
    if (n->node_case == PG_QUERY__NODE__NODE_RANGE_VAR ||
        n->node_case == PG_QUERY__NODE__NODE_RANGE_SUBSELECT) {
        if (*nr == QR_SQL_MAX_RANGES)
            return qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE,
                                "at most %d tables in one FROM", QR_SQL_MAX_RANGES);
        rv[*nr] = n;
        ons[*nr] = NULL;
        kinds[*nr] = 0;
        using[*nr] = NULL;
        (*nr)++;
        return 0;
    }
    if (n->node_case != PG_QUERY__NODE__NODE_JOIN_EXPR)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE, "%s in FROM is not supported yet",
                            qr_node_what(n));
    const PgQuery__JoinExpr *j = n->join_expr;
    if (j->rarg->node_case != PG_QUERY__NODE__NODE_RANGE_VAR &&
        j->rarg->node_case != PG_QUERY__NODE__NODE_RANGE_SUBSELECT)
        return qr_bind_fail(b, qr_node_loc(j->rarg), QR_E_FEATURE,
                            "a join's right side must be a table (joins nest to the left)");
    int kind = j->jointype == PG_QUERY__JOIN_TYPE__JOIN_INNER   ? QR_JOIN_INNER
               : j->jointype == PG_QUERY__JOIN_TYPE__JOIN_LEFT  ? QR_JOIN_LEFT
               : j->jointype == PG_QUERY__JOIN_TYPE__JOIN_RIGHT ? QR_JOIN_RIGHT
               : j->jointype == PG_QUERY__JOIN_TYPE__JOIN_FULL  ? QR_JOIN_FULL
                                                                : -1;
    if (kind < 0)
        return qr_bind_fail(b, qr_node_loc(j->rarg), QR_E_FEATURE,
                            "this JOIN is not supported yet (INNER, LEFT, RIGHT and FULL are)");
    if (j->is_natural)
        return qr_bind_fail(b, qr_node_loc(j->rarg), QR_E_FEATURE,
                            "NATURAL JOIN is not supported (use ON or USING)");
    if (collect(b, j->larg, rv, ons, kinds, using, nr) != 0 ||
        collect(b, j->rarg, rv, ons, kinds, using, nr) != 0)
        return -1;
    ons[*nr - 1] = j->quals;
    kinds[*nr - 1] = (uint8_t)kind;
    using[*nr - 1] = j->n_using_clause ? j : NULL;
    if (!j->quals && !j->n_using_clause)
        return qr_bind_fail(b, qr_node_loc(j->rarg), QR_E_FEATURE,
                            "a JOIN needs ON or USING (cross joins are not supported)");
    return 0;
}

static void conjuncts(const Node *n, const Node **out, uint32_t *k)
{
    if (!n)
        return;
    if (n->node_case == PG_QUERY__NODE__NODE_BOOL_EXPR &&
        n->bool_expr->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR) {
        for (size_t i = 0; i < n->bool_expr->n_args; i++)
            conjuncts(n->bool_expr->args[i], out, k);
        return;
    }
    if (*k < MAXC)
        out[(*k)++] = n;
}

/* A binder for entry r alone (slots = its table's columns). */
static qr_binder one(const qr_binder *b, const qr_sqlscope *sc, uint32_t r, qr_err *e)
{
    qr_binder o = *b;
    o.scope = NULL;
    o.def = sc->r[r].def;
    o.relname = sc->r[r].relname;
    o.alias = sc->r[r].alias;
    o.e = e;
    return o;
}

static int add_and(qr_binder *b, qr_expr **to, qr_expr *x)
{
    if (!*to) {
        *to = x;
        return 0;
    }
    qr_expr *a = qr_arena_alloc(b->a, sizeof *a);
    qr_expr **args = qr_arena_alloc(b->a, sizeof *args * 2);
    if (!a || !args)
        return qr_errf(b->e, QR_E_NOMEM, "out of memory");
    memset(a, 0, sizeof *a);
    a->kind = QR_EX_AND;
    a->type = QR_XT_BOOL;
    a->nargs = 2;
    a->args = args;
    args[0] = *to;
    args[1] = x;
    *to = a;
    return 0;
}

static int add_filter(qr_binder *b, qr_sqlsel *s, uint32_t r, qr_query *q)
{
    if (!s->rng[r].filter) {
        s->rng[r].filter = q;
    } else {
        qr_query *k[2] = {s->rng[r].filter, q};
        if (!(s->rng[r].filter = qr_q_list(Q_AND, k, 2, b->a, b->e)))
            return b->e->msg[0] ? -1 : qr_errf(b->e, QR_E_NOMEM, "out of memory");
    }
    s->rng[r].has_where = 1;
    return 0;
}

static int one_bit(uint32_t m)
{
    return m && !(m & (m - 1));
}

static int top_bit(uint32_t m)
{
    return 31 - __builtin_clz(m);
}

/* Entry r's columns are NULL in some rows of the join of entries
 * 0..upto-1: it is a LEFT JOIN's inner side or a FULL JOIN's right side,
 * or a RIGHT or FULL JOIN comes after it there. */
static int nullable(const qr_sqlsel *s, uint32_t r, uint32_t upto)
{
    if (r > 0 && r < upto && (s->rng[r].kind == QR_JOIN_LEFT || s->rng[r].kind == QR_JOIN_FULL))
        return 1;
    for (uint32_t j = r + 1; j < upto; j++)
        if (s->rng[j].kind == QR_JOIN_RIGHT || s->rng[j].kind == QR_JOIN_FULL)
            return 1;
    return 0;
}

/* May a conjunct of WHERE (on 0) or of entry on's ON that reads entry r
 * alone filter r's scan? Where filtering r's rows first gives the rows
 * that the conjunct keeps where it stands. */
static int may_push(const qr_sqlsel *s, uint32_t r, uint32_t on)
{
    if (!on)
        return !nullable(s, r, s->scope.n);
    switch (s->rng[on].kind) {
    case QR_JOIN_INNER:
        return r <= on && !nullable(s, r, on + 1);
    case QR_JOIN_LEFT: /* its inner side: filtered first = its matches filtered */
        return r == on;
    case QR_JOIN_RIGHT: /* one entry of the side it null-extends */
        return r < on && !nullable(s, r, on);
    default: /* FULL: both sides keep every row */
        return 0;
    }
}

/* The 0A000 of an outer join's ON conjunct that is none of what it takes. */
static int outer_on_unsupported(qr_binder *b, const Node *n, int kind)
{
    return qr_bind_fail(
        b, qr_node_loc(n), QR_E_FEATURE, "%s",
        kind == QR_JOIN_LEFT    ? "this LEFT JOIN condition is not supported yet (equal keys, and "
                                  "conditions on the joined table are)"
        : kind == QR_JOIN_RIGHT ? "this RIGHT JOIN condition is not supported yet (equal keys, and "
                                  "conditions on one table before it are)"
                                : "this FULL JOIN condition is not supported yet (equal keys are)");
}

/* Place conjunct n (from WHERE, on 0, or the ON of entry on >= 1). */
static int place(qr_binder *b, qr_sqlsel *s, const Node *n, uint32_t on)
{
    qr_sqlscope *sc = &s->scope;
    int kind = on ? s->rng[on].kind : QR_JOIN_INNER;
    /* which entries it reads (a full-text predicate is no expression: it
     * must be one entry's index predicate) */
    qr_err xe;
    qr_err_clear(&xe);
    qr_binder xb = *b;
    xb.e = &xe;
    qr_xbind x = qr_bind_row_scope(&xb, s, "in WHERE", 0);
    qr_expr *full = qr_sql_bool_expr(&x, n, on ? "ON" : "WHERE");
    b->last_range = xb.last_range;
    if (full && on && (x.refs >> on) > 1) {
        uint32_t r = on + 1;
        while (!(x.refs & (1u << r)))
            r++;
        return qr_bind_fail(b, qr_node_loc(n), QR_E_UNDEFINED_TABLE,
                            "invalid reference to FROM-clause entry for table \"%s\" (an ON "
                            "condition may name only the tables joined so far)",
                            sc->r[r].alias ? sc->r[r].alias : sc->r[r].relname);
    }
    uint32_t cand = full ? (one_bit(x.refs) ? x.refs : 0) : ~0u;
    int hit = -1, held = -1; /* held: an entry whose index answers it, not allowed to take it */
    qr_query *hq = NULL;
    qr_err we;
    for (uint32_t r = 0; r < sc->n && cand; r++) {
        if (!(cand & (1u << r)))
            continue;
        if (s->rng[r].sub) /* a subquery's rows have no index: a residual */
            continue;
        qr_err_clear(&we);
        qr_binder ob = one(b, sc, r, &we);
        qr_query *q = qr_sql_where(&ob, n);
        if (q && !may_push(s, r, on)) {
            held = (int)r;
            continue;
        }
        if (q && hit >= 0)
            return qr_bind_fail(b, qr_node_loc(n), "42702",
                                "this condition names a column of several tables: qualify it "
                                "(t.col)");
        if (q) {
            hit = (int)r;
            hq = q;
        }
    }
    if (hit >= 0) {
        qr_binder ob = one(b, sc, (uint32_t)hit, b->e);
        qr_expr *guard = NULL;
        if (add_filter(b, s, (uint32_t)hit, hq) != 0 ||
            qr_bind_null_guard(&ob, s, s->need + sc->r[hit].base, n, &guard) != 0)
            return -1;
        return guard ? add_and(b, &s->rng[hit].rest, guard) : 0;
    }
    if (!full && held >= 0) /* a full-text predicate is an index filter or nothing */
        return kind != QR_JOIN_INNER
                   ? outer_on_unsupported(b, n, kind)
                   : qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE,
                                  "a full-text condition on \"%s\" is not supported here: an "
                                  "outer join null-extends its rows",
                                  sc->r[held].alias ? sc->r[held].alias : sc->r[held].relname);
    if (!full) {
        *b->e = xe;
        return -1;
    }
    uint32_t refs = x.refs;
    if (one_bit(refs)) {
        uint32_t r = (uint32_t)top_bit(refs);
        if (may_push(s, r, on)) {
            qr_binder ob = one(b, sc, r, b->e);
            qr_xbind xr = qr_bind_row_scope(&ob, s, "in WHERE", 0);
            xr.need = s->need + sc->r[r].base;
            qr_expr *mine = qr_sql_bool_expr(&xr, n, "WHERE");
            return mine ? add_and(b, &s->rng[r].rest, mine) : -1;
        }
    }
    /* an equal key: x = y, y reading entry k alone, x entries before k */
    if (n->node_case == PG_QUERY__NODE__NODE_A_EXPR &&
        n->a_expr->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP && n->a_expr->n_name == 1 &&
        n->a_expr->name[0]->node_case == PG_QUERY__NODE__NODE_STRING &&
        !strcmp(n->a_expr->name[0]->string->sval, "=") && refs && !one_bit(refs)) {
        uint32_t k = (uint32_t)top_bit(refs);
        const Node *side[2] = {n->a_expr->lexpr, n->a_expr->rexpr};
        /* from WHERE, a key only of an inner join whose rows no later join
         * null-extends (else WHERE would drop rows the join keeps) */
        int keyable = on ? on == k : s->rng[k].kind == QR_JOIN_INNER && !nullable(s, k, sc->n);
        for (int w = 0; w < 2 && keyable; w++) {
            qr_xbind xl = qr_bind_row_scope(b, s, "in a join key", 0);
            qr_expr *l = qr_sql_expr(&xl, side[w]);
            qr_xbind xk = qr_bind_row_scope(b, s, "in a join key", 0);
            qr_expr *rk = l ? qr_sql_expr(&xk, side[1 - w]) : NULL;
            if (!rk)
                return -1;
            if (xk.refs != 1u << k || (xl.refs & ~((1u << k) - 1)) || !xl.refs)
                continue;
            if (s->rng[k].nkeys == 4)
                return qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE, "at most %d join keys", 4);
            int lt = l->type, rt = rk->type;
            int ok = lt == rt || ((lt == QR_XT_TEXT || lt == QR_XT_JSON) &&
                                  (rt == QR_XT_TEXT || rt == QR_XT_JSON));
            if (!ok)
                return qr_bind_fail(b, qr_node_loc(n), "42883",
                                    "a join key compares %s with %s: cast one side",
                                    qr_xtype_name(lt), qr_xtype_name(rt));
            /* the key of entry k in its own slots */
            qr_binder ob = one(b, sc, k, b->e);
            qr_xbind xo = qr_bind_row_scope(&ob, s, "in a join key", 0);
            xo.need = s->need + sc->r[k].base;
            qr_expr *own = qr_sql_expr(&xo, side[1 - w]);
            if (!own)
                return -1;
            s->rng[k].lkey[s->rng[k].nkeys] = l;
            s->rng[k].rkey[s->rng[k].nkeys++] = own;
            return 0;
        }
    }
    if (kind != QR_JOIN_INNER)
        return outer_on_unsupported(b, n, kind);
    /* an inner join's ON filters right after its join (a RIGHT or FULL
     * JOIN after it must not see the rows it drops) */
    return add_and(b, on ? &s->rng[on].on_rest : &s->rest, full);
}

/* The stored type of a subquery's output column i (what its result holds:
 * doubles become float64 columns). */
static int item_type(const qr_sqlsel *sub, uint32_t i)
{
    const qr_sqlitem *it = &sub->items[i];
    if (it->kind == QR_SI_BM25)
        return QT_FLOAT64;
    if (it->kind == QR_SI_COL) {
        qr_binder tb = {0};
        tb.def = sub->def;
        tb.scope = sub->def ? NULL : &sub->scope;
        return qr_bind_coldef(&tb, it->col)->type;
    }
    const qr_expr *x = it->x;
    if (x->kind == QR_EX_COL && !(x->type == QR_XT_FLOAT && x->ctype != QT_FLOAT64))
        return x->ctype;
    return x->type == QR_XT_FLOAT ? QT_FLOAT64 : qr_xtype_ctype(x->type);
}

/* Entry r is a subquery (in FROM, or a WITH query named in FROM): bound and
 * planned now, its output columns the entry's columns. */
static int bind_derived(qr_binder *b, qr_sqlsel *s, uint32_t r, const Node *query,
                        const char *name, const PgQuery__Alias *alias, const qr_catalog *c,
                        int32_t loc)
{
    if (!query || query->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return qr_bind_fail(b, loc, QR_E_FEATURE, "a subquery in FROM must be a SELECT");
    qr_sqlsel *sub = qr_arena_alloc(b->a, sizeof *sub);
    qr_tabdef *d = qr_arena_alloc(b->a, sizeof *d);
    if (!sub || !d)
        return qr_errf(b->e, QR_E_NOMEM, "out of memory");
    if (qr_sql_bind(b->p, query, c, sub, b->a, b->e) != 0 ||
        qr_sql_plan(sub, &s->rng[r].sub_kind, b->e) != 0)
        return -1;
    if (sub->explain)
        return qr_bind_fail(b, loc, QR_E_SYNTAX, "EXPLAIN cannot be a subquery");
    memset(d, 0, sizeof *d);
    d->name = (char *)name;
    d->sort_col = d->extra_col = -1;
    d->ncols = sub->nitems;
    d->cols = qr_arena_alloc(b->a, sizeof *d->cols * (sub->nitems ? sub->nitems : 1));
    if (!d->cols)
        return qr_errf(b->e, QR_E_NOMEM, "out of memory");
    if (alias && alias->n_colnames > sub->nitems)
        return qr_bind_fail(b, loc, QR_E_SYNTAX, "\"%s\" has %u columns available but more were "
                            "named", name, sub->nitems);
    for (uint32_t i = 0; i < sub->nitems; i++) {
        const char *cn = alias && i < alias->n_colnames &&
                                 alias->colnames[i]->node_case == PG_QUERY__NODE__NODE_STRING
                             ? alias->colnames[i]->string->sval
                             : sub->items[i].name;
        d->cols[i] = (qr_coldef){(char *)cn, (uint8_t)item_type(sub, i), 1, QR_TS_RFC3339};
    }
    s->rng[r].sub = sub;
    s->scope.r[r].def = d;
    s->scope.r[r].relname = name;
    s->scope.r[r].alias = NULL;
    return 0;
}

/* `x IN (SELECT y ...)`: a semi join with the subquery as one more entry
 * (each row of the others kept once when its x is among the y). 1 done, 0
 * not such a term, -1 error. */
static int semi_join(qr_binder *b, qr_sqlsel *s, const Node *n, const qr_catalog *c)
{
    if (!n || n->node_case != PG_QUERY__NODE__NODE_SUB_LINK)
        return 0;
    const PgQuery__SubLink *sl = n->sub_link;
    if (sl->sub_link_type != PG_QUERY__SUB_LINK_TYPE__ANY_SUBLINK || !sl->testexpr ||
        (sl->n_oper_name && (sl->oper_name[0]->node_case != PG_QUERY__NODE__NODE_STRING ||
                             strcmp(sl->oper_name[sl->n_oper_name - 1]->string->sval, "="))))
        return qr_bind_fail(b, sl->location, QR_E_FEATURE,
                            "this subquery is not supported yet (x IN (SELECT ...) is)");
    qr_sqlscope *sc = &s->scope;
    uint32_t r = sc->n;
    if (r == QR_SQL_MAX_RANGES)
        return qr_bind_fail(b, sl->location, QR_E_FEATURE, "at most %d tables and subqueries",
                            QR_SQL_MAX_RANGES);
    /* the tested value, over the entries before */
    qr_xbind xl = qr_bind_row_scope(b, s, "in IN (...)", 0);
    qr_expr *l = qr_sql_expr(&xl, sl->testexpr);
    if (!l)
        return -1;
    char *name = qr_arena_alloc(b->a, 32);
    if (!name)
        return qr_errf(b->e, QR_E_NOMEM, "out of memory");
    snprintf(name, 32, "in_subquery_%u", r);
    if (bind_derived(b, s, r, sl->subselect, name, NULL, c, sl->location) != 0)
        return -1;
    const qr_tabdef *d = sc->r[r].def;
    if (d->ncols != 1)
        return qr_bind_fail(b, sl->location, QR_E_SYNTAX,
                            "subquery has %s columns (IN takes one)", d->ncols ? "too many" : "no");
    qr_expr *k = qr_arena_alloc(b->a, sizeof *k);
    if (!k)
        return qr_errf(b->e, QR_E_NOMEM, "out of memory");
    memset(k, 0, sizeof *k);
    k->kind = QR_EX_COL;
    k->type = (uint8_t)qr_xtype_of_col(d->cols[0].type);
    k->ctype = d->cols[0].type;
    k->loc = sl->location;
    int lt = l->type, rt = k->type;
    if (!(lt == rt || ((lt == QR_XT_TEXT || lt == QR_XT_JSON) &&
                       (rt == QR_XT_TEXT || rt == QR_XT_JSON))))
        return qr_bind_fail(b, sl->location, "42883", "IN compares %s with the subquery's %s",
                            qr_xtype_name(lt), qr_xtype_name(rt));
    /* the new entry's slots: after every other (need grows with it) */
    uint32_t old = sc->nslots;
    uint8_t *need = qr_arena_alloc(b->a, old + 1);
    if (!need)
        return qr_errf(b->e, QR_E_NOMEM, "out of memory");
    memcpy(need, s->need, old);
    need[old] = 1;
    s->need = need;
    sc->r[r].base = old;
    sc->nslots = old + 1;
    sc->n = r + 1;
    s->rng[r].kind = QR_JOIN_SEMI;
    s->rng[r].lkey[0] = l;
    s->rng[r].rkey[0] = k;
    s->rng[r].nkeys = 1;
    if (!(s->rng[r].filter = qr_q_all(b->a, b->e)))
        return -1;
    return 1;
}

int qr_bind_from_join(qr_binder *b, qr_sqlsel *s, const PgQuery__SelectStmt *st,
                      const qr_catalog *c)
{
    const Node *rv[QR_SQL_MAX_RANGES];
    const Node *ons[QR_SQL_MAX_RANGES];
    const PgQuery__JoinExpr *usings[QR_SQL_MAX_RANGES];
    uint8_t kinds[QR_SQL_MAX_RANGES];
    uint32_t nr = 0;
    for (size_t i = 0; i < st->n_from_clause; i++)
        if (collect(b, st->from_clause[i], rv, ons, kinds, usings, &nr) != 0)
            return -1;
    qr_sqlscope *sc = &s->scope;
    memset(sc, 0, sizeof *sc);
    const PgQuery__WithClause *w = st->with_clause;
    if (w && w->recursive)
        return qr_bind_fail(b, w->location, QR_E_FEATURE, "WITH RECURSIVE is not supported");
    for (uint32_t r = 0; r < nr; r++) {
        int32_t loc = qr_node_loc(rv[r]);
        const char *alias = NULL;
        if (rv[r]->node_case == PG_QUERY__NODE__NODE_RANGE_SUBSELECT) {
            const PgQuery__RangeSubselect *rs = rv[r]->range_subselect;
            if (rs->lateral)
                return qr_bind_fail(b, loc, QR_E_FEATURE, "LATERAL is not supported");
            if (!rs->alias || !rs->alias->aliasname)
                return qr_bind_fail(b, loc, QR_E_SYNTAX, "a subquery in FROM must have an alias");
            if (bind_derived(b, s, r, rs->subquery, rs->alias->aliasname, rs->alias, c, loc) != 0)
                return -1;
            alias = rs->alias->aliasname;
        } else {
            const PgQuery__RangeVar *v = rv[r]->range_var;
            if (v->schemaname && v->schemaname[0])
                return qr_bind_fail(b, v->location, QR_E_FEATURE,
                                    "schema-qualified table names are not supported");
            const PgQuery__CommonTableExpr *cte = NULL;
            for (size_t k = 0; w && k < w->n_ctes && !cte; k++)
                if (w->ctes[k]->node_case == PG_QUERY__NODE__NODE_COMMON_TABLE_EXPR &&
                    !strcmp(w->ctes[k]->common_table_expr->ctename, v->relname))
                    cte = w->ctes[k]->common_table_expr;
            alias = v->alias && v->alias->aliasname && v->alias->aliasname[0] ? v->alias->aliasname
                                                                              : NULL;
            if (cte) {
                if (bind_derived(b, s, r, cte->ctequery, v->relname, NULL, c, v->location) != 0)
                    return -1;
                sc->r[r].alias = alias;
            } else {
                int q[1];
                qr_bind_quoted_parts(b->p, v->location, q, 1);
                const qr_tabdef *def = qr_catalog_find(c, v->relname);
                if (def && q[0] && strcmp(def->name, v->relname))
                    def = NULL;
                if (!def)
                    return qr_bind_fail(b, v->location, QR_E_UNDEFINED_TABLE,
                                        "relation \"%s\" does not exist", v->relname);
                sc->r[r].def = def;
                sc->r[r].relname = v->relname;
                sc->r[r].alias = alias;
            }
            alias = alias ? alias : v->relname;
        }
        for (uint32_t k = 0; k < r; k++) {
            const char *n1 = sc->r[k].alias ? sc->r[k].alias : sc->r[k].relname;
            if (!strcmp(n1, alias))
                return qr_bind_fail(b, loc, "42712",
                                    "table name \"%s\" specified more than once (give each an "
                                    "alias)",
                                    n1);
        }
        sc->r[r].base = sc->nslots;
        sc->nslots += sc->r[r].def->ncols;
        s->rng[r].kind = kinds[r];
    }
    sc->n = nr;
    s->def = NULL;
    b->def = NULL;
    b->scope = sc;
    if (!(s->need = qr_arena_alloc(b->a, sc->nslots ? sc->nslots : 1)))
        return qr_errf(b->e, QR_E_NOMEM, "out of memory");
    memset(s->need, 0, sc->nslots ? sc->nslots : 1);
    if (!(s->filter = qr_q_all(b->a, b->e)))
        return -1;
    for (uint32_t r = 1; r < nr; r++) {
        if (usings[r]) { /* USING (a, b): a.col = b.col for each */
            const PgQuery__JoinExpr *j = usings[r];
            for (size_t u = 0; u < j->n_using_clause; u++) {
                const char *col = j->using_clause[u]->string->sval;
                int found = -1;
                for (uint32_t k = 0; k < r && found < 0; k++)
                    if (qr_tabdef_col(sc->r[k].def, col, strlen(col)) >= 0)
                        found = (int)k;
                int rc = qr_tabdef_col(sc->r[r].def, col, strlen(col));
                if (found < 0 || rc < 0)
                    return qr_bind_fail(b, -1, QR_E_UNDEFINED_COLUMN,
                                        "column \"%s\" named in USING is not in both tables", col);
                qr_expr *l = qr_arena_alloc(b->a, sizeof *l), *o = qr_arena_alloc(b->a, sizeof *o);
                if (!l || !o || s->rng[r].nkeys == 4)
                    return qr_errf(b->e, QR_E_FEATURE, "at most 4 USING columns");
                const qr_coldef *lc =
                    &sc->r[found].def->cols[qr_tabdef_col(sc->r[found].def, col, strlen(col))];
                const qr_coldef *rcd = &sc->r[r].def->cols[rc];
                memset(l, 0, sizeof *l);
                memset(o, 0, sizeof *o);
                l->kind = o->kind = QR_EX_COL;
                l->type = (uint8_t)qr_xtype_of_col(lc->type);
                o->type = (uint8_t)qr_xtype_of_col(rcd->type);
                l->ctype = lc->type;
                o->ctype = rcd->type;
                l->slot = sc->r[found].base +
                          (uint32_t)qr_tabdef_col(sc->r[found].def, col, strlen(col));
                o->slot = (uint32_t)rc;
                l->loc = o->loc = -1;
                s->need[l->slot] = 1;
                s->need[sc->r[r].base + o->slot] = 1;
                s->rng[r].lkey[s->rng[r].nkeys] = l;
                s->rng[r].rkey[s->rng[r].nkeys++] = o;
            }
        }
        const Node *cj[MAXC];
        uint32_t nc = 0;
        conjuncts(ons[r], cj, &nc);
        for (uint32_t i = 0; i < nc; i++)
            if (place(b, s, cj[i], r) != 0)
                return -1;
    }
    const Node *cj[MAXC];
    uint32_t nc = 0;
    conjuncts(st->where_clause, cj, &nc);
    if (nc == MAXC)
        return qr_bind_fail(b, qr_node_loc(st->where_clause), QR_E_TOO_LONG,
                            "at most %d AND terms", MAXC);
    for (uint32_t i = 0; i < nc; i++) {
        int r = semi_join(b, s, cj[i], c);
        if (r < 0)
            return -1;
        if (r == 0 && place(b, s, cj[i], 0) != 0)
            return -1;
    }
    for (uint32_t r = 1; r < nr; r++)
        if (!s->rng[r].nkeys)
            return qr_bind_fail(b, qr_node_loc(rv[r]), QR_E_FEATURE,
                                "table \"%s\" is joined without an equal key (cross joins are not "
                                "supported)",
                                sc->r[r].alias ? sc->r[r].alias : sc->r[r].relname);
    for (uint32_t r = 0; r < nr; r++)
        if (!s->rng[r].filter && !(s->rng[r].filter = qr_q_all(b->a, b->e)))
            return -1;
    return 0;
}
