/* bindjoin.c - the FROM clause of a join bound into scope, per-entry
 * pushdown and join keys (bind.h qr_bind_from_join).
 *
 * Entries come left-deep: `a JOIN b ON ... JOIN c ON ...`, or a comma list
 * `FROM a, b WHERE ...` (inner joins whose keys come from WHERE). Each
 * conjunct of WHERE (and of an inner join's ON) goes where it costs least:
 *   - it reads one entry, which is not the inner side of a LEFT JOIN: into
 *     that entry's scan, as an index predicate when the index answers it,
 *     else as the entry's residual filter;
 *   - it is `x = y` with y reading only entry k and x only entries before
 *     k: an equal key of entry k's join;
 *   - anything else: the filter on joined rows.
 * A LEFT JOIN's ON takes equal keys and conjuncts on its inner entry
 * (filtering that entry before the join is the same as filtering its
 * matches); anything else in it is 0A000. */
#include <stdio.h>
#include <string.h>

#include "sql/bind.h"

typedef PgQuery__Node Node;

enum { MAXC = 256 };

/* The entries of the FROM clause, left-deep; ons[r] / kinds[r] for r >= 1. */
static int collect(qr_binder *b, const Node *n, const PgQuery__RangeVar **rv, const Node **ons,
                   uint8_t *kinds, const PgQuery__JoinExpr **using, uint32_t *nr)
{
    if (n->node_case == PG_QUERY__NODE__NODE_RANGE_VAR) {
        if (*nr == QR_SQL_MAX_RANGES)
            return qr_bind_fail(b, n->range_var->location, QR_E_FEATURE,
                                "at most %d tables in one FROM", QR_SQL_MAX_RANGES);
        rv[*nr] = n->range_var;
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
    if (j->rarg->node_case != PG_QUERY__NODE__NODE_RANGE_VAR)
        return qr_bind_fail(b, qr_node_loc(j->rarg), QR_E_FEATURE,
                            "a join's right side must be a table (joins nest to the left)");
    if (j->jointype != PG_QUERY__JOIN_TYPE__JOIN_INNER &&
        j->jointype != PG_QUERY__JOIN_TYPE__JOIN_LEFT)
        return qr_bind_fail(b, qr_node_loc(j->rarg), QR_E_FEATURE,
                            "%s JOIN is not supported yet (JOIN, INNER JOIN, LEFT JOIN are)",
                            j->jointype == PG_QUERY__JOIN_TYPE__JOIN_FULL    ? "FULL"
                            : j->jointype == PG_QUERY__JOIN_TYPE__JOIN_RIGHT ? "RIGHT"
                                                                             : "this");
    if (j->is_natural)
        return qr_bind_fail(b, qr_node_loc(j->rarg), QR_E_FEATURE,
                            "NATURAL JOIN is not supported (use ON or USING)");
    if (collect(b, j->larg, rv, ons, kinds, using, nr) != 0 ||
        collect(b, j->rarg, rv, ons, kinds, using, nr) != 0)
        return -1;
    ons[*nr - 1] = j->quals;
    kinds[*nr - 1] = j->jointype == PG_QUERY__JOIN_TYPE__JOIN_LEFT;
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

/* Place conjunct n (from WHERE, or the ON of entry `on` >= 1; on_left: that
 * ON is a LEFT JOIN's). */
static int place(qr_binder *b, qr_sqlsel *s, const Node *n, uint32_t on, int on_left)
{
    qr_sqlscope *sc = &s->scope;
    /* which entries it reads (a full-text predicate is no expression: it
     * must be one entry's index predicate) */
    qr_err xe;
    qr_err_clear(&xe);
    qr_binder xb = *b;
    xb.e = &xe;
    qr_xbind x = qr_bind_row_scope(&xb, s, "in WHERE", 0);
    qr_expr *full = qr_sql_bool_expr(&x, n, on ? "ON" : "WHERE");
    b->last_range = xb.last_range;
    uint32_t cand = full ? (one_bit(x.refs) ? x.refs : 0) : ~0u;
    int hit = -1;
    qr_query *hq = NULL;
    qr_err we;
    for (uint32_t r = 0; r < sc->n && cand; r++) {
        if (!(cand & (1u << r)))
            continue;
        if (on_left ? on != r : s->rng[r].kind != 0) /* the inner side of a LEFT JOIN */
            continue;
        qr_err_clear(&we);
        qr_binder ob = one(b, sc, r, &we);
        qr_query *q = qr_sql_where(&ob, n);
        if (q && hit >= 0)
            return qr_bind_fail(b, qr_node_loc(n), "42702",
                                "this condition names a column of several tables: qualify it "
                                "(t.col)");
        if (q) {
            hit = (int)r;
            hq = q;
        }
    }
    if (hit >= 0)
        return add_filter(b, s, (uint32_t)hit, hq);
    if (!full) {
        *b->e = xe;
        return -1;
    }
    uint32_t refs = x.refs;
    if (one_bit(refs)) {
        uint32_t r = (uint32_t)top_bit(refs);
        int may_push = on_left ? on == r : !s->rng[r].kind;
        if (may_push) {
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
        for (int w = 0; w < 2; w++) {
            qr_xbind xl = qr_bind_row_scope(b, s, "in a join key", 0);
            qr_expr *l = qr_sql_expr(&xl, side[w]);
            qr_xbind xk = qr_bind_row_scope(b, s, "in a join key", 0);
            qr_expr *rk = l ? qr_sql_expr(&xk, side[1 - w]) : NULL;
            if (!rk)
                return -1;
            if (xk.refs != 1u << k || (xl.refs & ~((1u << k) - 1)) || !xl.refs)
                continue;
            if (on && on != k)
                break;
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
    if (on_left)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE,
                            "this LEFT JOIN condition is not supported yet (equal keys, and "
                            "conditions on the joined table are)");
    return add_and(b, &s->rest, full);
}

int qr_bind_from_join(qr_binder *b, qr_sqlsel *s, const PgQuery__SelectStmt *st,
                      const qr_catalog *c)
{
    const PgQuery__RangeVar *rv[QR_SQL_MAX_RANGES];
    const Node *ons[QR_SQL_MAX_RANGES];
    const PgQuery__JoinExpr *usings[QR_SQL_MAX_RANGES];
    uint8_t kinds[QR_SQL_MAX_RANGES];
    uint32_t nr = 0;
    for (size_t i = 0; i < st->n_from_clause; i++)
        if (collect(b, st->from_clause[i], rv, ons, kinds, usings, &nr) != 0)
            return -1;
    qr_sqlscope *sc = &s->scope;
    memset(sc, 0, sizeof *sc);
    for (uint32_t r = 0; r < nr; r++) {
        if (rv[r]->schemaname && rv[r]->schemaname[0])
            return qr_bind_fail(b, rv[r]->location, QR_E_FEATURE,
                                "schema-qualified table names are not supported");
        int q[1];
        qr_bind_quoted_parts(b->p, rv[r]->location, q, 1);
        const qr_tabdef *def = qr_catalog_find(c, rv[r]->relname);
        if (def && q[0] && strcmp(def->name, rv[r]->relname))
            def = NULL;
        if (!def)
            return qr_bind_fail(b, rv[r]->location, QR_E_UNDEFINED_TABLE,
                                "relation \"%s\" does not exist", rv[r]->relname);
        const char *alias = rv[r]->alias && rv[r]->alias->aliasname &&
                                    rv[r]->alias->aliasname[0]
                                ? rv[r]->alias->aliasname
                                : NULL;
        for (uint32_t k = 0; k < r; k++) {
            const char *n1 = sc->r[k].alias ? sc->r[k].alias : sc->r[k].relname;
            if (!strcmp(n1, alias ? alias : rv[r]->relname))
                return qr_bind_fail(b, rv[r]->location, "42712",
                                    "table name \"%s\" specified more than once (give each an "
                                    "alias)",
                                    n1);
        }
        sc->r[r].def = def;
        sc->r[r].relname = rv[r]->relname;
        sc->r[r].alias = alias;
        sc->r[r].base = sc->nslots;
        sc->nslots += def->ncols;
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
            if (place(b, s, cj[i], r, kinds[r]) != 0)
                return -1;
    }
    const Node *cj[MAXC];
    uint32_t nc = 0;
    conjuncts(st->where_clause, cj, &nc);
    if (nc == MAXC)
        return qr_bind_fail(b, qr_node_loc(st->where_clause), QR_E_TOO_LONG,
                            "at most %d AND terms", MAXC);
    for (uint32_t i = 0; i < nc; i++)
        if (place(b, s, cj[i], 0, 0) != 0)
            return -1;
    for (uint32_t r = 1; r < nr; r++)
        if (!s->rng[r].nkeys)
            return qr_bind_fail(b, rv[r]->location, QR_E_FEATURE,
                                "table \"%s\" is joined without an equal key (cross joins are not "
                                "supported)",
                                sc->r[r].alias ? sc->r[r].alias : sc->r[r].relname);
    for (uint32_t r = 0; r < nr; r++)
        if (!s->rng[r].filter && !(s->rng[r].filter = qr_q_all(b->a, b->e)))
            return -1;
    return 0;
}
