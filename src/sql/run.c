/* run.c - executing a planned SELECT (run.h). */
#include "sql/run.h"

#include <stdlib.h>
#include <string.h>

#include "exec/aggregate.h"
#include "exec/project.h"
#include "search/topk.h"
#include "sql/plan.h"

/* Output columns of the select list (count and integer aggregates are
 * int64; min/max take their column's type; avg and bm25 are doubles). */
static int define_columns(const qr_sqlsel *s, qr_result *out, qr_err *e)
{
    for (uint32_t i = 0; i < s->nitems; i++) {
        const qr_sqlitem *it = &s->items[i];
        const qr_coldef *c = it->col >= 0 ? &s->def->cols[it->col] : NULL;
        int rc;
        if (it->kind == QR_SI_BM25 || (it->kind == QR_SI_AGG && it->fn == QR_AGG_AVG))
            rc = qr_result_add_col(out, it->name, QR_RK_FLOAT, 0, 0, e);
        else if (it->kind == QR_SI_AGG && (it->fn == QR_AGG_MIN || it->fn == QR_AGG_MAX))
            rc = qr_result_add_col(out, it->name, QR_RK_INT, c->type, c->tsfmt, e);
        else if (it->kind == QR_SI_AGG)
            rc = qr_result_add_col(out, it->name, QR_RK_INT, QT_INT64, 0, e);
        else
            rc = qr_result_add_col(out, it->name, qr_x_kind_of(c->type), c->type, c->tsfmt, e);
        if (rc != 0)
            return -1;
    }
    return 0;
}

typedef struct firstk {
    const qr_sqlsel *s;
    qr_par_search *ps;
    qr_result *out;
    int cols[QR_SQL_MAX_ITEMS];
    uint32_t outcol[QR_SQL_MAX_ITEMS], ncols;
    uint64_t skip; /* OFFSET rows still to pass over */
} firstk;

static int first_batch(void *ctx, const qr_hit *hits, uint32_t n, qr_err *e)
{
    firstk *f = ctx;
    if (f->skip >= n) {
        f->skip -= n;
        return 0;
    }
    hits += f->skip;
    n -= (uint32_t)f->skip;
    f->skip = 0;
    uint64_t row0 = f->out->nrows;
    for (uint32_t i = 0; i < n; i++)
        if (!qr_result_add_row(f->out, e))
            return -1;
    return qr_x_project(f->ps, hits, n, f->cols, f->outcol, f->ncols, f->out, row0, e);
}

static int run_rows(const qr_sqlsel *s, int kind, qr_par_search *ps, qr_result *out, qr_err *e)
{
    firstk f;
    memset(&f, 0, sizeof f);
    f.s = s;
    f.ps = ps;
    f.out = out;
    for (uint32_t i = 0; i < s->nitems; i++)
        if (s->items[i].kind == QR_SI_COL) {
            f.cols[f.ncols] = s->items[i].col;
            f.outcol[f.ncols++] = i;
        }
    if (kind == QR_PLAN_FIRST) {
        if (s->limit == 0)
            return 0;
        f.skip = s->offset;
        uint64_t k = s->limit == UINT64_MAX ? UINT64_MAX : s->limit + s->offset;
        return qr_par_first(ps, k < s->limit ? UINT64_MAX : k, first_batch, &f, NULL, e);
    }
    uint32_t k = (uint32_t)(s->limit + s->offset), n = 0;
    if (s->limit == 0)
        return 0;
    qr_hit *hits = qr_qmalloc(out->ctx, sizeof *hits * k);
    if (!hits)
        return qr_qctx_nomem(out->ctx, e);
    int rc = qr_par_topk(ps, kind == QR_PLAN_TOPK_SCORE ? QR_BY_SCORE : QR_BY_TIME, k, 0, hits, &n,
                         NULL, e);
    uint32_t from = rc == 0 && s->offset < n ? (uint32_t)s->offset : n;
    for (uint32_t i = from; i < n && rc == 0; i++) {
        qr_cell *row = qr_result_add_row(out, e);
        if (!row) {
            rc = -1;
            break;
        }
        for (uint32_t c = 0; c < s->nitems; c++)
            if (s->items[c].kind == QR_SI_BM25)
                row[c] = (qr_cell){.f = hits[i].score};
    }
    if (rc == 0)
        rc = qr_x_project(ps, hits + from, n - from, f.cols, f.outcol, f.ncols, out, 0, e);
    qr_qfree(out->ctx, hits);
    return rc;
}

static int run_aggregate(const qr_sqlsel *s, qr_par_search *ps, qr_result *out, qr_err *e)
{
    qr_groupby g;
    memset(&g, 0, sizeof g);
    /* keys: the GROUP BY columns; those in the select list land there, the
     * others in hidden columns past the select list (dropped at the end) */
    uint32_t hidden = s->nitems;
    for (uint32_t k = 0; k < s->ngroup; k++) {
        g.keys[g.nkeys] = s->group[k];
        int at = -1;
        for (uint32_t i = 0; i < s->nitems && at < 0; i++)
            if (s->items[i].kind == QR_SI_COL && s->items[i].col == s->group[k])
                at = (int)i;
        if (at < 0) {
            const qr_coldef *c = &s->def->cols[s->group[k]];
            if (qr_result_add_col(out, c->name, qr_x_kind_of(c->type), c->type, c->tsfmt, e) != 0)
                return -1;
            at = (int)hidden++;
        }
        g.key_out[g.nkeys++] = (uint32_t)at;
    }
    for (uint32_t i = 0; i < s->nitems; i++)
        if (s->items[i].kind == QR_SI_AGG) {
            if (g.naggs == QR_GB_MAX_AGGS)
                return qr_errf(e, QR_E_TOO_LONG, "at most %d aggregates", QR_GB_MAX_AGGS);
            g.fn[g.naggs] = s->items[i].fn;
            g.arg[g.naggs] = s->items[i].col;
            g.agg_out[g.naggs++] = i;
        }
    if (qr_x_groupby(ps, &g, out, e) != 0)
        return -1;
    /* ORDER BY, then the group keys (so equal rows come in a fixed order) */
    uint32_t keys[QR_SQL_MAX_ORDER + QR_GB_MAX_KEYS];
    uint8_t desc[QR_SQL_MAX_ORDER + QR_GB_MAX_KEYS];
    uint32_t nk = 0;
    for (uint32_t i = 0; i < s->norder; i++) {
        const qr_sqlorder *o = &s->order[i];
        int at = -1;
        if (o->kind == QR_SO_ITEM)
            at = (int)o->item;
        for (uint32_t k = 0; k < g.nkeys && o->kind == QR_SO_COL && at < 0; k++)
            if (g.keys[k] == o->col)
                at = (int)g.key_out[k];
        if (at < 0)
            return qr_errf(e, "42803",
                           "column \"%s\" must appear in the GROUP BY clause to be "
                           "used in ORDER BY",
                           o->col >= 0 ? s->def->cols[o->col].name : "?");
        keys[nk] = (uint32_t)at;
        desc[nk++] = o->desc;
    }
    for (uint32_t k = 0; k < g.nkeys; k++) {
        keys[nk] = g.key_out[k];
        desc[nk++] = 0;
    }
    if (qr_result_sort(out, keys, desc, nk, e) != 0)
        return -1;
    qr_result_slice(out, s->offset, s->limit);
    if (hidden > s->nitems) { /* drop the hidden key columns */
        uint32_t nc = out->ncols;
        for (uint64_t r = 0; r < out->nrows; r++)
            memmove(out->cells + r * s->nitems, qr_result_row(out, r),
                    sizeof *out->cells * s->nitems);
        out->ncols = s->nitems;
        (void)nc;
    }
    return 0;
}

int qr_sql_run(const qr_sqlsel *s, int kind, qr_segref **refs, uint32_t nsegs, qr_pool *pool,
               int threads, qr_result *out, qr_err *e)
{
    if (define_columns(s, out, e) != 0)
        return -1;
    qr_par_search ps;
    if (qr_par_init_refs_tree(&ps, pool, s->def, refs, nsegs, s->filter, threads, e) != 0)
        return -1;
    int rc = qr_par_set_ctx(&ps, out->ctx, e);
    if (rc == 0 && kind == QR_PLAN_COUNT) {
        uint64_t n = 0;
        rc = qr_par_count(&ps, &n, e);
        if (rc == 0 && s->offset == 0 && s->limit > 0) {
            qr_cell *row = qr_result_add_row(out, e);
            for (uint32_t i = 0; row && i < s->nitems; i++)
                row[i] = (qr_cell){.i = (int64_t)n};
            rc = row ? 0 : -1;
        }
    } else if (rc == 0 && kind == QR_PLAN_AGGREGATE) {
        rc = run_aggregate(s, &ps, out, e);
    } else if (rc == 0) {
        rc = run_rows(s, kind, &ps, out, e);
    }
    qr_par_set_ctx(&ps, NULL, NULL);
    qr_par_free(&ps);
    return rc;
}
