/* runjoin.c - joins and count(DISTINCT) (run.h qr_sql_run_join): every
 * entry of FROM scanned with its own index filter, its matches read in the
 * columns the statement uses and filtered by its residual; the entries
 * hash-joined left-deep on their equal keys (exec/join.h); the joined rows
 * filtered, then aggregated (exec/hashagg.h) or projected, sorted, cut.
 *
 * Everything is materialised (each entry's matching rows, then the joined
 * rows) under the statement's memory limit: a join of two selective scans,
 * the trace-correlation shape, costs what its matches cost. */
#include <stdlib.h>
#include <string.h>

#include "exec/hashagg.h"
#include "exec/join.h"
#include "exec/project.h"
#include "search/topk.h"
#include "sql/run.h"
#include "sql/run_int.h"

#define BATCH 65536u

typedef struct hits {
    qr_qctx *ctx;
    qr_hit *h;
    uint64_t n, cap;
} hits;

static int collect(void *ctx, const qr_hit *h, uint32_t n, qr_err *e)
{
    hits *c = ctx;
    if (c->n + n > c->cap) {
        uint64_t cap = c->cap ? c->cap * 2 : 4096;
        while (cap < c->n + n)
            cap *= 2;
        qr_hit *p = qr_qrealloc(c->ctx, c->h, sizeof *p * cap);
        if (!p)
            return qr_qctx_nomem(c->ctx, e);
        c->h = p;
        c->cap = cap;
    }
    memcpy(c->h + c->n, h, sizeof *h * n);
    c->n += n;
    return 0;
}

/* Keep rows sel[0..n) of r (ascending), in place. */
static void keep_rows(qr_result *r, const uint32_t *sel, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (sel[i] != i)
            memcpy(qr_result_row(r, i), qr_result_row(r, sel[i]), sizeof *r->cells * r->ncols);
    r->nrows = n;
}

/* Entry r scanned into T (its needed columns; tmap: table column -> T's). */
static int scan_entry(const qr_tabdef *def, const qr_query *filter, const qr_expr *rest,
                      const uint8_t *need, qr_segref **refs, uint32_t nsegs, qr_pool *pool,
                      int threads, qr_result *T, int *tmap, qr_err *e)
{
    qr_qctx *ctx = T->ctx;
    int cols[QR_MAX_COLUMNS];
    uint32_t outc[QR_MAX_COLUMNS], nc = 0;
    uint8_t types[QR_MAX_COLUMNS];
    for (uint32_t c = 0; c < def->ncols; c++) {
        types[c] = def->cols[c].type;
        tmap[c] = need[c] ? (int)nc : -1;
        if (need[c]) {
            outc[nc] = nc;
            cols[nc++] = (int)c;
            if (qr_result_add_col(T, def->cols[c].name, qr_x_kind_of(def->cols[c].type),
                                  def->cols[c].type, def->cols[c].tsfmt, e) != 0)
                return -1;
        }
    }
    qr_par_search ps;
    if (qr_par_init_refs_tree(&ps, pool, def, refs, nsegs, filter, threads, e) != 0)
        return -1;
    hits h = {ctx, NULL, 0, 0};
    int rc = qr_par_set_ctx(&ps, ctx, e);
    if (rc == 0)
        rc = qr_par_first(&ps, UINT64_MAX, collect, &h, NULL, e);
    for (uint64_t i = 0; i < h.n && rc == 0; i++)
        if (!qr_result_add_row(T, e))
            rc = -1;
    for (uint64_t at = 0; at < h.n && rc == 0; at += BATCH) {
        uint32_t n = (uint32_t)(h.n - at < BATCH ? h.n - at : BATCH);
        rc = nc ? qr_x_project(&ps, h.h + at, n, cols, outc, nc, T, at, e) : 0;
    }
    qr_qfree(ctx, h.h);
    qr_par_set_ctx(&ps, NULL, NULL);
    qr_par_free(&ps);
    if (rc != 0 || !rest)
        return rc;
    qr_arena a;
    qr_arena_init(&a, 64 << 10, 0);
    qr_arena_set_ctx(&a, ctx);
    qr_xbatch b;
    uint32_t *sel = qr_qmalloc(ctx, sizeof *sel * (T->nrows ? T->nrows : 1)), ns = 0;
    rc = sel ? qr_run_result_batch(T, def->ncols, tmap, types, &b, &a, e) : qr_qctx_nomem(ctx, e);
    if (rc == 0)
        rc = qr_expr_filter(rest, &b, sel, &ns, &a, e);
    if (rc == 0)
        keep_rows(T, sel, ns);
    qr_qfree(ctx, sel);
    qr_arena_free(&a);
    return rc;
}

/* The joined relation: J's columns, and where each slot of the scope is. */
typedef struct rel {
    qr_result r;
    int map[QR_SQL_MAX_RANGES * QR_MAX_COLUMNS / 8];
    uint8_t types[QR_SQL_MAX_RANGES * QR_MAX_COLUMNS / 8];
} rel;

static int join_step(const qr_sqlsel *s, uint32_t k, rel *J, qr_result *T, const int *tmap,
                     qr_err *e)
{
    const qr_sqlscope *sc = &s->scope;
    qr_qctx *ctx = T->ctx;
    const qr_tabdef *def = sc->r[k].def;
    qr_arena a;
    qr_arena_init(&a, 64 << 10, 0);
    qr_arena_set_ctx(&a, ctx);
    qr_xbatch jb, tb;
    uint8_t ttypes[QR_MAX_COLUMNS];
    for (uint32_t c = 0; c < def->ncols; c++)
        ttypes[c] = def->cols[c].type;
    int rc = qr_run_result_batch(&J->r, sc->nslots, J->map, J->types, &jb, &a, e);
    if (rc == 0)
        rc = qr_run_result_batch(T, def->ncols, tmap, ttypes, &tb, &a, e);
    const qr_cell *lk[QR_JOIN_MAX_KEYS], *rk[QR_JOIN_MAX_KEYS];
    uint8_t kt[QR_JOIN_MAX_KEYS];
    for (uint32_t i = 0; i < s->rng[k].nkeys && rc == 0; i++) {
        kt[i] = s->rng[k].lkey[i]->type;
        if (!(lk[i] = qr_expr_eval(s->rng[k].lkey[i], &jb, &a, e)) ||
            !(rk[i] = qr_expr_eval(s->rng[k].rkey[i], &tb, &a, e)))
            rc = -1;
    }
    qr_result out;
    qr_result_init(&out, ctx);
    for (uint32_t c = 0; c < J->r.ncols && rc == 0; c++)
        rc = qr_result_add_col(&out, J->r.cols[c].name, J->r.cols[c].kind, J->r.cols[c].type,
                               J->r.cols[c].tsfmt, e);
    for (uint32_t c = 0; c < T->ncols && rc == 0; c++)
        rc = qr_result_add_col(&out, T->cols[c].name, T->cols[c].kind, T->cols[c].type,
                               T->cols[c].tsfmt, e);
    if (rc == 0)
        rc = qr_x_hash_join(&J->r, lk, T, rk, kt, s->rng[k].nkeys, s->rng[k].kind, &out, e);
    qr_arena_free(&a);
    if (rc != 0) {
        qr_result_free(&out);
        return -1;
    }
    uint32_t at = J->r.ncols;
    qr_result_free(&J->r);
    J->r = out;
    for (uint32_t c = 0; c < def->ncols; c++)
        J->map[sc->r[k].base + c] = tmap[c] < 0 ? -1 : (int)at + tmap[c];
    return 0;
}

/* Rows of J (passing s->rest) through the select list or the groups. */
static int finish(const qr_sqlsel *s, rel *J, uint32_t nslots, const qr_expr *rest,
                  qr_result *out, qr_err *e)
{
    qr_qctx *ctx = out->ctx;
    qr_arena a;
    qr_arena_init(&a, 64 << 10, 0);
    qr_arena_set_ctx(&a, ctx);
    int rc = 0;
    qr_hagg *h = NULL;
    qr_hagg_spec sp;
    qr_expr colx[QR_SQL_MAX_AGGS];
    qr_result R;
    qr_result_init(&R, ctx);
    if (s->grouped) {
        memset(&sp, 0, sizeof sp);
        sp.nkeys = s->ngroup;
        for (uint32_t k = 0; k < s->ngroup; k++)
            sp.keys[k] = s->gx[k];
        sp.naggs = s->naggs;
        for (uint32_t i = 0; i < s->naggs; i++) {
            const qr_sqlagg *ag = &s->aggs[i];
            sp.fn[i] = ag->fn;
            sp.distinct[i] = ag->distinct;
            sp.arg[i] = ag->arg;
            if (!ag->arg && ag->col >= 0) { /* a plain column of the one table */
                const qr_coldef *cd = &s->def->cols[ag->col];
                memset(&colx[i], 0, sizeof colx[i]);
                colx[i].kind = QR_EX_COL;
                colx[i].type = (uint8_t)qr_xtype_of_col(cd->type);
                colx[i].ctype = cd->type;
                colx[i].slot = (uint32_t)ag->col;
                sp.arg[i] = &colx[i];
            }
        }
        if (!(h = qr_hagg_new(&sp, ctx, e)))
            rc = -1;
    } else {
        rc = qr_run_hidden_columns(s, out, e);
    }
    for (uint64_t at = 0; at < J->r.nrows && rc == 0; at += BATCH) {
        /* one batch of J's rows at a time */
        qr_result view = J->r;
        view.cells = qr_result_row(&J->r, at);
        view.nrows = J->r.nrows - at < BATCH ? J->r.nrows - at : BATCH;
        qr_arena_reset(&a);
        qr_xbatch b;
        uint32_t *sel = qr_arena_alloc(&a, sizeof *sel * (uint32_t)view.nrows), ns = 0;
        rc = sel ? qr_run_result_batch(&view, nslots, J->map, J->types, &b, &a, e)
                 : qr_errf(e, QR_E_NOMEM, "out of memory");
        if (rc == 0 && rest)
            rc = qr_expr_filter(rest, &b, sel, &ns, &a, e);
        else if (rc == 0)
            for (ns = 0; ns < b.n; ns++)
                sel[ns] = ns;
        if (rc != 0)
            break;
        if (h) {
            rc = qr_hagg_add(h, &b, sel, ns, &a, e);
            continue;
        }
        const qr_cell *vals[QR_SQL_MAX_ITEMS + QR_SQL_MAX_ORDER];
        uint32_t nv = 0;
        for (uint32_t i = 0; i < s->nitems && rc == 0; i++) {
            const qr_sqlitem *it = &s->items[i];
            if (it->kind == QR_SI_COL)
                vals[nv++] = b.cols[it->col];
            else if (it->kind == QR_SI_EXPR && !(vals[nv++] = qr_expr_eval(it->x, &b, &a, e)))
                rc = -1;
            else if (it->kind == QR_SI_BM25)
                rc = qr_errf(e, QR_E_FEATURE, "bm25() is not available in a join");
        }
        for (uint32_t i = 0; i < s->norder && rc == 0; i++)
            if (s->order[i].kind == QR_SO_EXPR &&
                !(vals[nv++] = qr_expr_eval(s->order[i].x, &b, &a, e)))
                rc = -1;
        for (uint32_t q = 0; q < ns && rc == 0; q++) {
            qr_cell *row = qr_result_add_row(out, e);
            for (uint32_t v = 0; row && v < nv && rc == 0; v++)
                rc = qr_run_put_cell(out, row, v, &vals[v][sel[q]], e);
            rc = row ? rc : -1;
        }
        if (rc == 0 && !s->norder && s->limit != UINT64_MAX &&
            out->nrows >= s->limit + s->offset)
            break; /* no ORDER BY: the first rows are enough */
    }
    if (rc == 0 && h) {
        uint32_t nsl = s->ngroup + s->naggs;
        for (uint32_t i = 0; i < nsl && rc == 0; i++) {
            int kind, type, raw;
            qr_xtype_rcol(s->slot_type[i], &kind, &type);
            (void)raw;
            rc = qr_result_add_col(&R, "g", kind, type, 0, e);
        }
        if (rc == 0)
            rc = qr_hagg_finish(h, &R, e);
        /* natural values -> the slots' stored domains (what the bound
         * expressions read) */
        for (uint64_t r = 0; r < R.nrows && rc == 0; r++)
            for (uint32_t i = 0; i < nsl; i++) {
                qr_cell *c = &qr_result_row(&R, r)[i];
                if (c->null)
                    continue;
                if (s->slot_ctype[i] == QT_FLOAT64)
                    c->i = qr_num_from_f64(c->f);
                else if (s->slot_ctype[i] == QT_UINT64)
                    c->i = qr_num_from_u64((uint64_t)c->i);
            }
        if (rc == 0)
            rc = qr_run_post_groups(s, &R, out, e);
    } else if (rc == 0) {
        rc = qr_run_sort_slice(s, out, e);
    }
    qr_hagg_free(h);
    qr_result_free(&R);
    qr_arena_free(&a);
    return rc;
}

static int run_join(const qr_sqlsel *s, qr_segref ***refs, const uint32_t *nsegs, qr_pool *pool,
                    int threads, qr_result *out, qr_err *e);

int qr_sql_run_join(const qr_sqlsel *s, qr_segref ***refs, const uint32_t *nsegs, qr_pool *pool,
                    int threads, qr_result *out, qr_err *e)
{
    qr_expr *t[QR_RUN_MAX_TREES];
    uint32_t nt = qr_run_trees(s, t);
    int rc = qr_run_define_columns(s, out, e);
    for (uint32_t i = 0; i < nt && rc == 0; i++)
        rc = qr_expr_prepare(t[i], e);
    if (rc == 0)
        rc = run_join(s, refs, nsegs, pool, threads, out, e);
    for (uint32_t i = 0; i < nt; i++)
        qr_expr_free_tree(t[i]);
    return rc;
}

static int run_join(const qr_sqlsel *s, qr_segref ***refs, const uint32_t *nsegs, qr_pool *pool,
                    int threads, qr_result *out, qr_err *e)
{
    rel *J = qr_qmalloc(out->ctx, sizeof *J);
    if (!J)
        return qr_qctx_nomem(out->ctx, e);
    memset(J, 0, sizeof *J);
    qr_result_init(&J->r, out->ctx);
    int rc = 0;
    uint32_t n = s->scope.n ? s->scope.n : 1;
    uint32_t nslots = s->scope.n ? s->scope.nslots : s->def->ncols;
    if (nslots > sizeof J->map / sizeof *J->map)
        rc = qr_errf(e, QR_E_TOO_LONG, "a join reads at most %zu columns",
                     sizeof J->map / sizeof *J->map);
    for (uint32_t r = 0; r < n && rc == 0; r++) {
        const qr_tabdef *def = s->scope.n ? s->scope.r[r].def : s->def;
        uint32_t base = s->scope.n ? s->scope.r[r].base : 0;
        const qr_query *filter = s->scope.n ? s->rng[r].filter : s->filter;
        const qr_expr *rest = s->scope.n ? s->rng[r].rest : s->rest;
        int tmap[QR_MAX_COLUMNS];
        qr_result T;
        qr_result_init(&T, out->ctx);
        rc = scan_entry(def, filter, rest, s->need + base, refs[r], nsegs[r], pool, threads, &T,
                        tmap, e);
        for (uint32_t c = 0; c < def->ncols; c++)
            J->types[base + c] = def->cols[c].type;
        if (rc == 0 && r == 0) {
            J->r = T;
            for (uint32_t c = 0; c < def->ncols; c++)
                J->map[c] = tmap[c];
            continue;
        }
        if (rc == 0)
            rc = join_step(s, r, J, &T, tmap, e);
        qr_result_free(&T);
    }
    if (rc == 0)
        rc = finish(s, J, nslots, s->scope.n ? s->rest : NULL, out, e);
    qr_result_free(&J->r);
    qr_qfree(out->ctx, J);
    return rc;
}
