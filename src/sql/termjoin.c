/* termjoin.c - the join shape the keyword indexes answer alone (run_int.h
 * qr_run_term_join_shape, qr_run_term_join): two tables (or one, twice)
 * inner-joined on one equal key, each side's key a text column with a
 * keyword index, each side filtered by its index filter and at most a
 * residual on its key column (tested once per key), no other ON or WHERE
 * term, and nothing but count(*), count(key) and
 * count(DISTINCT key) asked of the joined rows (HAVING, ORDER BY, LIMIT on
 * that one row allowed), or count(*) and count(key) per value of one
 * keyword-indexed text column of either side (GROUP BY l.ServiceName).
 * Trace correlation is this shape:
 *
 *   SELECT count(*), count(DISTINCT a.TraceId) FROM logs a JOIN logs b
 *   ON a.TraceId = b.TraceId WHERE a.ServiceName = 'frontend' AND ...
 *
 * exec/termjoin.h counts it from the indexes' ordinals and key map; when a
 * segment cannot answer (an index newer than it, a value too long to
 * index), the hash join runs instead. */
#include <string.h>

#include "exec/aggregate.h"
#include "exec/join.h"
#include "exec/project.h"
#include "exec/termjoin.h"
#include "sql/run.h"
#include "sql/run_int.h"

/* The keyword index of column col of d, or 0. */
static uint16_t keyword_index(const qr_tabdef *d, uint32_t col)
{
    if (d->cols[col].type != QT_TEXT)
        return 0;
    for (uint32_t i = 0; i < d->nixs; i++)
        if (d->ixs[i].col == col && d->ixs[i].kind == QR_IX_KEYWORD && !d->ixs[i].building)
            return d->ixs[i].id;
    return 0;
}

/* 1 when x reads no column but `col` (and no score). */
static int reads_only(const qr_expr *x, uint32_t col)
{
    if (x->kind == QR_EX_SCORE || (x->kind == QR_EX_COL && x->slot != col))
        return 0;
    for (uint32_t i = 0; i < x->nargs; i++)
        if (!reads_only(x->args[i], col))
            return 0;
    return 1;
}

/* 1 when x holds for every non-NULL value of column col: `col IS NOT
 * NULL`, the guard a negated index term (`TraceId <> ''`) adds, or an AND
 * of such. An index holds no NULL key. */
static int true_for_keys(const qr_expr *x, uint32_t col)
{
    if (x->kind == QR_EX_ISNULL && x->neg && x->nargs == 1 && x->args[0]->kind == QR_EX_COL &&
        x->args[0]->slot == col)
        return 1;
    if (x->kind != QR_EX_AND)
        return 0;
    for (uint32_t i = 0; i < x->nargs; i++)
        if (!true_for_keys(x->args[i], col))
            return 0;
    return 1;
}

int qr_run_term_join_shape(const qr_sqlsel *s, qr_tjshape *sh)
{
    memset(sh, 0, sizeof *sh);
    if (s->no_merge_join || s->scope.n != 2 || !s->grouped || s->ngroup > 1 || s->rest ||
        s->uses_score || !s->naggs)
        return 0;
    for (uint32_t r = 0; r < 2; r++)
        if (s->rng[r].sub)
            return 0;
    if (s->rng[1].kind != QR_JOIN_INNER || s->rng[1].nkeys != 1 || s->rng[1].on_rest)
        return 0;
    const qr_expr *lk = s->rng[1].lkey[0], *rk = s->rng[1].rkey[0];
    uint32_t b0 = s->scope.r[0].base, b1 = s->scope.r[1].base;
    const qr_tabdef *d0 = s->scope.r[0].def, *d1 = s->scope.r[1].def;
    if (lk->kind != QR_EX_COL || rk->kind != QR_EX_COL || lk->slot < b0 ||
        lk->slot - b0 >= d0->ncols || rk->slot >= d1->ncols)
        return 0;
    sh->col[0] = lk->slot - b0;
    sh->col[1] = rk->slot;
    if (!(sh->sec[0] = keyword_index(d0, sh->col[0])) ||
        !(sh->sec[1] = keyword_index(d1, sh->col[1])))
        return 0;
    /* a residual is tested on each key: it may read the key alone */
    for (uint32_t r = 0; r < 2; r++) {
        const qr_expr *x = s->rng[r].rest;
        if (x && !reads_only(x, sh->col[r]))
            return 0;
        sh->rest[r] = x && !true_for_keys(x, sh->col[r]) ? x : NULL;
    }
    /* GROUP BY one keyword-indexed text column of either side */
    sh->gside = -1;
    if (s->ngroup) {
        const qr_expr *g = s->gx[0];
        if (g->kind != QR_EX_COL)
            return 0;
        for (int r = 0; r < 2 && sh->gside < 0; r++) {
            uint32_t base = s->scope.r[r].base;
            if (g->slot >= base && g->slot - base < s->scope.r[r].def->ncols) {
                sh->gside = r;
                sh->gcol = g->slot - base;
            }
        }
        if (sh->gside < 0 ||
            !(sh->gsec = keyword_index(s->scope.r[sh->gside].def, sh->gcol)))
            return 0;
    }
    for (uint32_t i = 0; i < s->naggs; i++) {
        const qr_sqlagg *ag = &s->aggs[i];
        if (s->ngroup && ag->distinct) /* distinct keys per group: not counted */
            return 0;
        if (ag->fn == QR_AGG_COUNT_STAR && !ag->distinct)
            continue;
        int64_t slot = !ag->arg                     ? (int64_t)ag->col
                       : ag->arg->kind == QR_EX_COL ? (int64_t)ag->arg->slot
                                                    : -1;
        if (ag->fn != QR_AGG_COUNT ||
            (slot != (int64_t)(b0 + sh->col[0]) && slot != (int64_t)(b1 + sh->col[1])))
            return 0;
    }
    return 1;
}

/* A side's filter without the `NOT key:v` terms of its top-level AND (or
 * itself one): each such term goes to x->excl (a count set to 0 per
 * segment, termjoin.h), the rest is *run, built in memory of ctx (*own
 * and x->excl to free). A filter left with nothing matches every row. */
static int take_excluded(const qr_query *f, uint16_t sec, qr_qctx *ctx, qr_tjside *x,
                         const qr_query **run, void **own, qr_err *e)
{
    static const qr_query every_row = {.type = Q_ALL};
    *run = f;
    *own = NULL;
    const qr_query *const *kid = f->type == Q_AND ? (const qr_query *const *)f->kids : &f;
    uint32_t n = f->type == Q_AND ? f->n : 1, nx = 0;
    for (uint32_t i = 0; i < n; i++)
        nx += kid[i]->type == Q_NOT && kid[i]->kids[0]->type == Q_TERM &&
              kid[i]->kids[0]->field == sec;
    if (!nx)
        return 0;
    const qr_query **excl = qr_qmalloc(ctx, sizeof *excl * nx);
    qr_query *and = qr_qmalloc(ctx, sizeof *and + sizeof *and->kids * n);
    if (!excl || !and) {
        qr_qfree(ctx, excl);
        qr_qfree(ctx, and);
        return qr_qctx_nomem(ctx, e);
    }
    *and = *f;
    and->kids = (qr_query **)(and + 1);
    and->n = 0;
    x->nexcl = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (kid[i]->type == Q_NOT && kid[i]->kids[0]->type == Q_TERM &&
            kid[i]->kids[0]->field == sec)
            excl[x->nexcl++] = kid[i]->kids[0];
        else
            and->kids[and->n++] = (qr_query *)kid[i];
    }
    x->excl = excl;
    *own = and;
    *run = and->n == 0 ? &every_row : and->n == 1 ? and->kids[0] : and;
    x->all = and->n == 0;
    return 0;
}

/* EXPLAIN ANALYZE's figures of a count by ordinal (t0..t1: the counting). */
static void report(const qr_sqlsel *s, const qr_tjcount *c, int64_t t0, int64_t t1,
                   const qr_result *out)
{
    qr_sqlstats *st = s->stats;
    st->termjoin = 1;
    st->ent_rows[0] = c->rows_a;
    st->tj_terms = c->terms;
    st->tj_settled = c->settled;
    st->tj_summed = c->summed;
    st->tj_shared = c->shared;
    st->tj_keys = c->keys;
    st->tj_map_built = c->map_built;
    st->tj_map_ns = c->map_ns;
    st->t_join[1] = t1 - t0;
    st->t_post = qr_qctx_now_ns() - t1;
    st->out = out->nrows;
}

int qr_run_term_join(const qr_sqlsel *s, const qr_tjshape *sh, qr_segref ***refs,
                     const uint32_t *nsegs, qr_pool *pool, int threads, qr_result *out, qr_err *e)
{
    qr_qctx *ctx = out->ctx;
    int64_t t0 = qr_qctx_now_ns();
    qr_par_search ps[2];
    int init[2] = {0, 0}, rc = 0;
    uint8_t types[2][QR_MAX_COLUMNS];
    qr_tjside side[2];
    void *own[2] = {NULL, NULL};
    for (int r = 0; r < 2; r++) {
        for (uint32_t k = 0; k < s->scope.r[r].def->ncols && k < QR_MAX_COLUMNS; k++)
            types[r][k] = s->scope.r[r].def->cols[k].type;
        side[r] = (qr_tjside){.ps = &ps[r],
                              .sec = sh->sec[r],
                              .all = !s->rng[r].has_where,
                              .rest = sh->rest[r],
                              .key_col = sh->col[r],
                              .ncols = s->scope.r[r].def->ncols,
                              .types = types[r]};
    }
    for (int r = 0; r < 2 && rc == 0; r++) {
        const qr_query *run = s->rng[r].filter;
        rc = take_excluded(s->rng[r].filter, sh->sec[r], ctx, &side[r], &run, &own[r], e);
        if (rc == 0)
            rc = qr_par_init_refs_tree(&ps[r], pool, s->scope.r[r].def, refs[r], nsegs[r], run,
                                       threads, e);
        init[r] = rc == 0;
        if (rc == 0)
            rc = qr_par_set_ctx(&ps[r], ctx, e);
    }
    qr_tjcount c;
    qr_tjgroups G;
    memset(&G, 0, sizeof G);
    if (rc == 0 && sh->gside < 0)
        rc = qr_x_term_join_count(&side[0], &side[1], &c, e);
    else if (rc == 0)
        rc = qr_x_term_join_groups(&side[0], &side[1], sh->gside, sh->gsec, &G, &c, e);
    int64_t t1 = qr_qctx_now_ns();
    qr_result R;
    qr_result_init(&R, ctx);
    uint32_t b0 = s->scope.r[0].base, b1 = s->scope.r[1].base;
    if (rc == 0 && sh->gside >= 0) { /* the group column, then the counts */
        const qr_coldef *gc = &s->scope.r[sh->gside].def->cols[sh->gcol];
        rc = qr_result_add_col(&R, gc->name, qr_x_kind_of(gc->type), gc->type, gc->tsfmt, e);
    }
    for (uint32_t i = 0; i < s->naggs && rc == 0; i++) {
        int kind, type;
        qr_xtype_rcol(s->slot_type[s->ngroup + i], &kind, &type);
        rc = qr_result_add_col(&R, "count", kind, type, 0, e);
    }
    /* the rows: one per group (NULL last), or the one group */
    uint32_t ng = sh->gside < 0 ? 1 : G.n + (G.null_count > 0);
    for (uint32_t k = 0; k < ng && rc == 0; k++) {
        qr_cell *row = qr_result_add_row(&R, e);
        if (!row) {
            rc = -1;
            break;
        }
        uint32_t at = 0;
        uint64_t n = c.pairs;
        if (sh->gside >= 0 && k < G.n) {
            rc = qr_result_set_text(&R, &row[0], G.g[k].s, G.g[k].n, e);
            n = G.g[k].count;
            at = 1;
        } else if (sh->gside >= 0) {
            row[0] = (qr_cell){.null = 1};
            n = G.null_count;
            at = 1;
        }
        for (uint32_t i = 0; i < s->naggs && rc == 0; i++) {
            const qr_sqlagg *ag = &s->aggs[i];
            int64_t slot = !ag->arg ? ag->col : (int64_t)ag->arg->slot;
            int distinct =
                ag->fn == QR_AGG_COUNT && ag->distinct &&
                (slot == (int64_t)(b0 + sh->col[0]) || slot == (int64_t)(b1 + sh->col[1]));
            row[at + i] = (qr_cell){.i = (int64_t)(distinct ? c.keys : n)};
        }
    }
    if (sh->gside >= 0)
        qr_tjgroups_free(&G);
    if (rc == 0)
        rc = qr_run_post_groups(s, &R, out, e);
    if (s->stats && rc == 0) {
        report(s, &c, t0, t1, out);
        s->stats->nent = 2;
        s->stats->ent_rows[1] = c.rows_b;
        s->stats->join_rows[1] = c.pairs;
        s->stats->tj_grouped = sh->gside >= 0;
    }
    qr_result_free(&R);
    for (int r = 0; r < 2; r++) {
        if (init[r]) {
            qr_par_set_ctx(&ps[r], NULL, NULL);
            qr_par_free(&ps[r]);
        }
        qr_qfree(ctx, own[r]);
        qr_qfree(ctx, (void *)side[r].excl);
    }
    return rc;
}

/* ---- count(DISTINCT key) of one table ---- */

int qr_run_term_distinct_shape(const qr_sqlsel *s, qr_tjshape *sh)
{
    memset(sh, 0, sizeof *sh);
    sh->gside = -1;
    if (s->no_merge_join || s->scope.n || !s->def || !s->grouped || s->ngroup ||
        s->uses_score || !s->naggs)
        return 0;
    int64_t key = -1, distinct = 0;
    for (uint32_t i = 0; i < s->naggs; i++) {
        const qr_sqlagg *ag = &s->aggs[i];
        int64_t slot = !ag->arg                     ? (int64_t)ag->col
                       : ag->arg->kind == QR_EX_COL ? (int64_t)ag->arg->slot
                                                    : -1;
        if (ag->fn != QR_AGG_COUNT || slot < 0 || (key >= 0 && slot != key))
            return 0; /* count(key) and count(DISTINCT key) of one column only */
        key = slot;
        distinct |= ag->distinct;
    }
    if (!distinct || (uint64_t)key >= s->def->ncols)
        return 0;
    sh->col[0] = (uint32_t)key;
    if (!(sh->sec[0] = keyword_index(s->def, sh->col[0])))
        return 0;
    if (s->rest && !reads_only(s->rest, sh->col[0]))
        return 0;
    sh->rest[0] = s->rest && !true_for_keys(s->rest, sh->col[0]) ? s->rest : NULL;
    return 1;
}

int qr_run_term_distinct(const qr_sqlsel *s, const qr_tjshape *sh, qr_segref **refs,
                         uint32_t nsegs, qr_pool *pool, int threads, qr_result *out, qr_err *e)
{
    qr_qctx *ctx = out->ctx;
    int64_t t0 = qr_qctx_now_ns();
    qr_par_search ps;
    int init = 0;
    uint8_t types[QR_MAX_COLUMNS];
    for (uint32_t k = 0; k < s->def->ncols && k < QR_MAX_COLUMNS; k++)
        types[k] = s->def->cols[k].type;
    qr_tjside side = {.ps = &ps,
                      .sec = sh->sec[0],
                      .all = !s->has_where,
                      .rest = sh->rest[0],
                      .key_col = sh->col[0],
                      .ncols = s->def->ncols,
                      .types = types};
    void *own = NULL;
    const qr_query *run = s->filter;
    int rc = take_excluded(s->filter, sh->sec[0], ctx, &side, &run, &own, e);
    if (rc == 0)
        rc = qr_par_init_refs_tree(&ps, pool, s->def, refs, nsegs, run, threads, e);
    init = rc == 0;
    if (rc == 0)
        rc = qr_par_set_ctx(&ps, ctx, e);
    qr_tjcount c;
    if (rc == 0)
        rc = qr_x_term_distinct(&side, &c, e);
    int64_t t1 = qr_qctx_now_ns();
    qr_result R;
    qr_result_init(&R, ctx);
    for (uint32_t i = 0; i < s->naggs && rc == 0; i++) {
        int kind, type;
        qr_xtype_rcol(s->slot_type[i], &kind, &type);
        rc = qr_result_add_col(&R, "count", kind, type, 0, e);
    }
    qr_cell *row = rc == 0 ? qr_result_add_row(&R, e) : NULL;
    rc = rc == 0 && !row ? -1 : rc;
    for (uint32_t i = 0; i < s->naggs && rc == 0; i++)
        row[i] = (qr_cell){.i = (int64_t)(s->aggs[i].distinct ? c.keys : c.rows_a)};
    if (rc == 0)
        rc = qr_run_post_groups(s, &R, out, e);
    if (s->stats && rc == 0) {
        report(s, &c, t0, t1, out);
        s->stats->nent = 1;
        s->stats->tj_distinct = 1;
    }
    qr_result_free(&R);
    if (init) {
        qr_par_set_ctx(&ps, NULL, NULL);
        qr_par_free(&ps);
    }
    qr_qfree(ctx, own);
    qr_qfree(ctx, (void *)side.excl);
    return rc;
}
