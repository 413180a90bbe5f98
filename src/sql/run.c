/* run.c - executing a planned SELECT (run.h): the index's scan, then
 * expressions over the column values of what it found.
 *
 * Rows: the hits of a count-free scan (first-k, top-k, every match) are
 * materialised only in the columns the statement reads (late
 * materialisation, qr_x_project), as a temporary result T; T's columns are
 * turned into a batch (exec/expr.h), the residual filter keeps the rows it
 * holds for, and the select list (plus ORDER BY keys that are not in it,
 * as hidden columns) is evaluated over the batch into the output.
 * Groups: hash aggregation gives a result R of keys and aggregates; HAVING,
 * the select list and ORDER BY are expressions over R's columns. */
#include "sql/run.h"

#include <stdlib.h>
#include <string.h>

#include "exec/aggregate.h"
#include "exec/project.h"
#include "exec/partcount.h"
#include "search/topk.h"
#include "sql/plan.h"
#include "sql/run_int.h"

/* The result column of an expression: a slot read as it is stored keeps its
 * stored type (a plain column, a key, min/max); anything else its natural
 * type. raw: cells are copied, not converted. */
void qr_run_expr_rcol(const qr_expr *x, int *kind, int *type, int *raw)
{
    *raw = 0;
    if (x->kind == QR_EX_COL) {
        *raw = 1;
        if (x->type == QR_XT_FLOAT && x->ctype != QT_FLOAT64) {
            *kind = QR_RK_FLOAT; /* avg: a double in f */
            *type = 0;
        } else {
            *kind = qr_x_kind_of(x->ctype);
            *type = x->ctype;
        }
        return;
    }
    qr_xtype_rcol(x->type, kind, type);
}

/* The column of slot c: of the one table, or of a join's scope. */
static const qr_coldef *slot_def(const qr_sqlsel *s, int c)
{
    if (c < 0)
        return NULL;
    if (s->def)
        return &s->def->cols[c];
    for (uint32_t r = s->scope.n; r-- > 0;)
        if ((uint32_t)c >= s->scope.r[r].base)
            return &s->scope.r[r].def->cols[(uint32_t)c - s->scope.r[r].base];
    return NULL;
}

int qr_run_define_columns(const qr_sqlsel *s, qr_result *out, qr_err *e)
{
    for (uint32_t i = 0; i < s->nitems; i++) {
        const qr_sqlitem *it = &s->items[i];
        const qr_coldef *c = slot_def(s, it->col);
        int kind, type, raw, tsfmt = c ? c->tsfmt : 0;
        if (it->kind == QR_SI_BM25) {
            kind = QR_RK_FLOAT, type = 0;
        } else if (it->kind == QR_SI_EXPR) {
            qr_run_expr_rcol(it->x, &kind, &type, &raw);
        } else {
            kind = qr_x_kind_of(c->type), type = c->type;
        }
        if (qr_result_add_col(out, it->name, kind, type, tsfmt, e) != 0)
            return -1;
    }
    return 0;
}

/* Copy a cell into column col of output row `row` (text bytes into the
 * result's arena). */
int qr_run_put_cell(qr_result *out, qr_cell *row, uint32_t col, const qr_cell *v, qr_err *e)
{
    qr_cell *o = &row[col];
    if (v->null) {
        *o = (qr_cell){.null = 1};
        return 0;
    }
    int k = out->cols[col].kind;
    if (k == QR_RK_TEXT || k == QR_RK_JSON)
        return qr_result_set_text(out, o, v->s ? v->s : "", v->n, e);
    *o = *v;
    o->null = 0;
    return 0;
}

/* A result's rows as a batch: column c of the batch is column map[c] of r
 * (-1: none), typed types[c]. Arrays from a. */
int qr_run_result_batch(const qr_result *r, uint32_t ncols, const int *map, const uint8_t *types,
                        qr_xbatch *b, qr_arena *a, qr_err *e)
{
    qr_cell **cols = qr_arena_alloc(a, sizeof *cols * (ncols ? ncols : 1));
    if (!cols)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    for (uint32_t c = 0; c < ncols; c++) {
        cols[c] = NULL;
        if (map[c] < 0)
            continue;
        if (!(cols[c] = qr_arena_alloc(a, sizeof **cols * (r->nrows ? r->nrows : 1))))
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        for (uint64_t i = 0; i < r->nrows; i++)
            cols[c][i] = qr_result_row(r, i)[map[c]];
    }
    *b = (qr_xbatch){(uint32_t)r->nrows, ncols, (const qr_cell *const *)cols, types, NULL};
    return 0;
}

/* The table columns a row statement reads: the residual's, the
 * expressions', the plain items'. */
static uint32_t read_columns(const qr_sqlsel *s, int *cols, int *tmap)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < s->def->ncols; c++) {
        int need = s->need[c];
        for (uint32_t i = 0; i < s->nitems; i++)
            need |= s->items[i].kind == QR_SI_COL && s->items[i].col == (int)c;
        tmap[c] = need ? (int)n : -1;
        if (need)
            cols[n++] = (int)c;
    }
    return n;
}

typedef struct rowrun {
    const qr_sqlsel *s;
    qr_par_search *ps;
    qr_result *out;
    uint32_t nout;       /* output columns: items, then hidden ORDER BY keys */
    int cols[1024];      /* table columns read */
    int tmap[1024];      /* table column -> T column, -1 */
    uint8_t types[1024]; /* table column types */
    uint32_t ncols;
    uint64_t skip, want; /* FIRST: OFFSET rows still to skip, rows wanted */
    uint64_t topn;       /* SORT with a LIMIT: rows worth keeping (LIMIT + OFFSET), else 0 */
    int done;
    qr_run_rows_fn pass; /* qr_sql_run_matches: the rows that pass go here, not into out */
    void *pass_arg;
} rowrun;

/* Rows for hits[0..n) (scores: theirs, or NULL): filtered by the residual,
 * evaluated into out. *kept: how many passed. */
static int rows_for_hits(rowrun *rr, const qr_hit *hits, uint32_t n, const double *scores,
                         uint64_t *kept, qr_err *e)
{
    const qr_sqlsel *s = rr->s;
    qr_result T;
    qr_result_init(&T, rr->out->ctx);
    qr_arena a;
    qr_arena_init(&a, 64 << 10, 0);
    qr_arena_set_ctx(&a, rr->out->ctx);
    int rc = 0;
    for (uint32_t j = 0; j < rr->ncols && rc == 0; j++)
        rc = qr_result_add_col(&T, "c", qr_x_kind_of(rr->types[rr->cols[j]]),
                               rr->types[rr->cols[j]], 0, e);
    for (uint32_t i = 0; i < n && rc == 0; i++)
        if (!qr_result_add_row(&T, e))
            rc = -1;
    uint32_t outc[1024];
    for (uint32_t j = 0; j < rr->ncols; j++)
        outc[j] = j;
    if (rc == 0 && rr->ncols)
        rc = qr_x_project(rr->ps, hits, n, rr->cols, outc, rr->ncols, &T, 0, e);
    qr_xbatch b;
    if (rc == 0)
        rc = qr_run_result_batch(&T, s->def->ncols, rr->tmap, rr->types, &b, &a, e);
    b.score = scores;
    uint32_t *sel = rc == 0 ? qr_arena_alloc(&a, sizeof *sel * (n ? n : 1)) : NULL;
    uint32_t ns = n;
    if (rc == 0 && !sel)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    if (rc == 0 && s->rest)
        rc = qr_expr_filter(s->rest, &b, sel, &ns, &a, e);
    else if (rc == 0)
        for (uint32_t i = 0; i < n; i++)
            sel[i] = i;
    if (rr->pass) { /* the rows themselves, a run of one segment at a time */
        uint32_t *rows = rc == 0 ? qr_arena_alloc(&a, sizeof *rows * (ns ? ns : 1)) : NULL;
        if (rc == 0 && !rows)
            rc = qr_errf(e, QR_E_NOMEM, "out of memory");
        for (uint32_t i = 0; rc == 0 && i < ns;) {
            uint32_t seg = hits[sel[i]].seg, k = 0;
            for (; i < ns && hits[sel[i]].seg == seg; i++)
                rows[k++] = hits[sel[i]].doc;
            rc = rr->pass(rr->pass_arg, seg, rows, k, e);
        }
        qr_arena_free(&a);
        qr_result_free(&T);
        return rc;
    }
    /* FIRST: OFFSET and the LIMIT apply to the rows that passed */
    uint32_t from = 0;
    if (rr->skip) {
        from = rr->skip < ns ? (uint32_t)rr->skip : ns;
        rr->skip -= from;
    }
    uint32_t upto = ns;
    if (rr->want != UINT64_MAX && rr->out->nrows + (upto - from) >= rr->want) {
        upto = from + (uint32_t)(rr->want - rr->out->nrows);
        rr->done = 1;
    }
    const qr_cell *vals[QR_SQL_MAX_ITEMS + QR_SQL_MAX_ORDER];
    uint32_t nv = 0;
    for (uint32_t i = 0; i < s->nitems && rc == 0; i++) {
        const qr_sqlitem *it = &s->items[i];
        vals[nv] = NULL;
        if (it->kind == QR_SI_EXPR && !(vals[nv] = qr_expr_eval(it->x, &b, &a, e)))
            rc = -1;
        nv++;
    }
    for (uint32_t i = 0; i < s->norder && rc == 0; i++)
        if (s->order[i].kind == QR_SO_EXPR && !(vals[nv++] = qr_expr_eval(s->order[i].x, &b, &a, e)))
            rc = -1;
    for (uint32_t q = from; q < upto && rc == 0; q++) {
        uint32_t j = sel[q];
        qr_cell *row = qr_result_add_row(rr->out, e);
        if (!row) {
            rc = -1;
            break;
        }
        uint32_t v = 0;
        for (uint32_t i = 0; i < s->nitems && rc == 0; i++, v++) {
            const qr_sqlitem *it = &s->items[i];
            if (it->kind == QR_SI_BM25)
                row[i] = scores ? (qr_cell){.f = scores[j]} : (qr_cell){.null = 1};
            else if (it->kind == QR_SI_COL)
                rc = qr_run_put_cell(rr->out, row, i, &b.cols[it->col][j], e);
            else
                rc = qr_run_put_cell(rr->out, row, i, &vals[v][j], e);
        }
        for (uint32_t i = 0, h = s->nitems; i < s->norder && rc == 0; i++)
            if (s->order[i].kind == QR_SO_EXPR)
                rc = qr_run_put_cell(rr->out, row, h++, &vals[v++][j], e);
    }
    if (kept)
        *kept = ns;
    qr_arena_free(&a);
    qr_result_free(&T);
    return rc;
}

static int sort_by_order(const qr_sqlsel *s, qr_result *out, uint64_t top, qr_err *e);

static int first_batch(void *ctx, const qr_hit *hits, uint32_t n, qr_err *e)
{
    rowrun *rr = ctx;
    if (rows_for_hits(rr, hits, n, NULL, NULL, e) != 0)
        return -1;
    /* ORDER BY ... LIMIT k: keep the best k so far (a stable sort keeps
     * earlier rows first among equals, as one sort of all would) */
    uint64_t k = rr->topn;
    if (k && rr->out->nrows >= (4 * k > 65536 ? 4 * k : 65536)) {
        if (sort_by_order(rr->s, rr->out, k, e) != 0)
            return -1;
        qr_result_slice(rr->out, 0, k);
        /* the kept rows into a fresh result, so the dropped rows' text goes */
        qr_result fresh;
        qr_result_init(&fresh, rr->out->ctx);
        int rc = 0;
        for (uint32_t c = 0; c < rr->out->ncols && rc == 0; c++)
            rc = qr_result_add_col(&fresh, rr->out->cols[c].name, rr->out->cols[c].kind,
                                   rr->out->cols[c].type, rr->out->cols[c].tsfmt, e);
        for (uint64_t i = 0; i < rr->out->nrows && rc == 0; i++) {
            qr_cell *row = qr_result_add_row(&fresh, e);
            for (uint32_t c = 0; row && c < rr->out->ncols && rc == 0; c++)
                rc = qr_run_put_cell(&fresh, row, c, &qr_result_row(rr->out, i)[c], e);
            rc = row ? rc : -1;
        }
        if (rc != 0) {
            qr_result_free(&fresh);
            return -1;
        }
        qr_result_free(rr->out);
        *rr->out = fresh;
    }
    if (rr->done) { /* enough rows: stop the scan (not an error) */
        qr_err_clear(e);
        return -1;
    }
    return 0;
}

/* Hidden ORDER BY columns (expressions not in the select list), after the
 * items; their types from the expressions. */
int qr_run_hidden_columns(const qr_sqlsel *s, qr_result *out, qr_err *e)
{
    for (uint32_t i = 0; i < s->norder; i++)
        if (s->order[i].kind == QR_SO_EXPR) {
            int kind, type, raw;
            qr_run_expr_rcol(s->order[i].x, &kind, &type, &raw);
            if (qr_result_add_col(out, "order", kind, type, 0, e) != 0)
                return -1;
        }
    return 0;
}

/* The ORDER BY keys as columns of the result (hidden ones after the
 * select list) and their directions: their count, or -1 with e set. */
static int order_keys(const qr_sqlsel *s, uint32_t *keys, uint8_t *desc, qr_err *e)
{
    uint32_t nk = 0, h = s->nitems;
    for (uint32_t i = 0; i < s->norder; i++) {
        const qr_sqlorder *o = &s->order[i];
        int at = -1;
        if (o->kind == QR_SO_ITEM)
            at = (int)o->item;
        else if (o->kind == QR_SO_EXPR)
            at = (int)h++;
        else if (o->kind == QR_SO_COL)
            for (uint32_t k = 0; k < s->nitems && at < 0; k++)
                if (s->items[k].kind == QR_SI_COL && s->items[k].col == o->col)
                    at = (int)k;
        if (at < 0)
            return qr_errf(e, QR_E_INTERNAL, "ORDER BY key %u has no column", i);
        keys[nk] = (uint32_t)at;
        desc[nk++] = (uint8_t)((o->desc ? QR_SORT_DESC : 0) | (o->nulls_flip ? QR_SORT_NULLS_FLIP : 0));
    }
    return (int)nk;
}

/* Sort out by the ORDER BY keys (stable); with top, only its first `top`
 * rows are wanted (LIMIT + OFFSET). */
static int sort_by_order(const qr_sqlsel *s, qr_result *out, uint64_t top, qr_err *e)
{
    uint32_t keys[QR_SQL_MAX_ORDER];
    uint8_t desc[QR_SQL_MAX_ORDER];
    int nk = order_keys(s, keys, desc, e);
    if (nk <= 0)
        return nk;
    return top != UINT64_MAX ? qr_result_sort_top(out, keys, desc, (uint32_t)nk, top, e)
                             : qr_result_sort(out, keys, desc, (uint32_t)nk, e);
}

/* LIMIT + OFFSET, or UINT64_MAX without a LIMIT (or past 2^64). */
static uint64_t top_of(const qr_sqlsel *s)
{
    return s->limit != UINT64_MAX && s->limit + s->offset >= s->limit ? s->limit + s->offset
                                                                      : UINT64_MAX;
}

/* OFFSET and LIMIT of sorted rows, and the hidden ORDER BY columns dropped. */
static void slice_rows(const qr_sqlsel *s, qr_result *out)
{
    qr_result_slice(out, s->offset, s->limit);
    if (out->ncols > s->nitems) {
        for (uint64_t r = 0; r < out->nrows; r++)
            memmove(out->cells + r * s->nitems, qr_result_row(out, r),
                    sizeof *out->cells * s->nitems);
        out->ncols = s->nitems;
    }
}

int qr_run_sort_slice(const qr_sqlsel *s, qr_result *out, qr_err *e)
{
    if (sort_by_order(s, out, top_of(s), e) != 0)
        return -1;
    slice_rows(s, out);
    return 0;
}

static int all_plain(const qr_sqlsel *s)
{
    if (s->rest)
        return 0;
    for (uint32_t i = 0; i < s->nitems; i++)
        if (s->items[i].kind == QR_SI_EXPR)
            return 0;
    return 1;
}

static int run_rows(const qr_sqlsel *s, int kind, qr_par_search *ps, qr_result *out, qr_err *e)
{
    rowrun *rr = qr_qmalloc(out->ctx, sizeof *rr);
    if (!rr)
        return qr_qctx_nomem(out->ctx, e);
    memset(rr, 0, sizeof *rr);
    rr->s = s;
    rr->ps = ps;
    rr->out = out;
    rr->want = UINT64_MAX;
    for (uint32_t c = 0; c < s->def->ncols; c++)
        rr->types[c] = s->def->cols[c].type;
    rr->ncols = read_columns(s, rr->cols, rr->tmap);
    int rc = qr_run_hidden_columns(s, out, e);
    if (rc == 0 && (kind == QR_PLAN_FIRST || kind == QR_PLAN_SORT)) {
        if (kind == QR_PLAN_FIRST) {
            rr->skip = s->offset;
            rr->want = s->limit;
        } else if (s->limit != UINT64_MAX && s->limit + s->offset >= s->limit) {
            rr->topn = s->limit + s->offset;
        }
        int64_t t0 = qr_qctx_now_ns();
        if (rr->want != 0) {
            /* without a residual every match is a row: LIMIT + OFFSET of
             * them are all it needs (not a first batch of 4096, each read) */
            uint64_t k = kind == QR_PLAN_FIRST && !s->rest && s->limit != UINT64_MAX &&
                                 s->limit + s->offset >= s->limit
                             ? s->limit + s->offset
                             : UINT64_MAX;
            rc = qr_par_first(ps, k, first_batch, rr, NULL, e);
            if (rc != 0 && rr->done && !e->code[0])
                rc = 0;
        }
        int64_t t1 = qr_qctx_now_ns();
        if (s->stats) {
            s->stats->t_scan = t1 - t0;
            s->stats->kept = out->nrows;
            s->stats->have_kept = 1;
        }
        if (rc == 0 && kind == QR_PLAN_SORT)
            rc = qr_run_sort_slice(s, out, e);
        if (s->stats)
            s->stats->t_post = qr_qctx_now_ns() - t1;
        qr_qfree(out->ctx, rr);
        return rc;
    }
    /* top-k: the best k' hits, k' growing until k pass the residual filter */
    uint64_t k = s->limit + s->offset;
    uint32_t kk = (uint32_t)(s->rest ? (k * 4 < 1024 ? 1024 : k * 4) : k);
    if (kk > QR_TOPK_MAX)
        kk = QR_TOPK_MAX;
    while (rc == 0 && s->limit > 0) {
        uint32_t n = 0;
        qr_hit *hits = qr_qmalloc(out->ctx, sizeof *hits * kk);
        double *sc = qr_qmalloc(out->ctx, sizeof *sc * kk);
        if (!hits || !sc) {
            qr_qfree(out->ctx, hits);
            qr_qfree(out->ctx, sc);
            rc = qr_qctx_nomem(out->ctx, e);
            break;
        }
        int64_t t0 = qr_qctx_now_ns();
        rc = qr_par_topk(ps, kind == QR_PLAN_TOPK_SCORE ? QR_BY_SCORE : QR_BY_TIME, kk, 0, hits,
                         &n, NULL, e);
        if (s->stats) {
            s->stats->t_scan += qr_qctx_now_ns() - t0;
            s->stats->matched = n;
            s->stats->have_matched = 1;
        }
        for (uint32_t i = 0; i < n; i++)
            sc[i] = hits[i].score;
        uint64_t kept = 0;
        qr_result_clear_rows(out);
        if (rc == 0)
            rc = rows_for_hits(rr, hits, n, kind == QR_PLAN_TOPK_SCORE ? sc : NULL, &kept, e);
        if (s->stats) {
            s->stats->kept = kept;
            s->stats->have_kept = 1;
        }
        qr_qfree(out->ctx, hits);
        qr_qfree(out->ctx, sc);
        if (rc != 0 || kept >= k || n < kk)
            break;
        if (kk == QR_TOPK_MAX) {
            rc = qr_errf(e, QR_E_TOO_LONG,
                         "the filter the index cannot answer rejects too many of the best %u "
                         "matches to find %llu rows; narrow the index part of the WHERE clause",
                         QR_TOPK_MAX, (unsigned long long)k);
            break;
        }
        kk = kk * 4 > QR_TOPK_MAX ? QR_TOPK_MAX : kk * 4;
    }
    if (rc == 0) /* in the scan's order already; no hidden column (one key: bm25 or time) */
        qr_result_slice(out, s->offset, s->limit);
    qr_qfree(out->ctx, rr);
    return rc;
}

/* The legacy path: plain columns and bm25 of top-k / first-k winners. */
static int run_plain(const qr_sqlsel *s, int kind, qr_par_search *ps, qr_result *out, qr_err *e)
{
    int cols[QR_SQL_MAX_ITEMS];
    uint32_t outcol[QR_SQL_MAX_ITEMS], ncols = 0;
    for (uint32_t i = 0; i < s->nitems; i++)
        if (s->items[i].kind == QR_SI_COL) {
            cols[ncols] = s->items[i].col;
            outcol[ncols++] = i;
        }
    uint32_t k = (uint32_t)(s->limit + s->offset), n = 0;
    if (s->limit == 0)
        return 0;
    qr_hit *hits = qr_qmalloc(out->ctx, sizeof *hits * k);
    if (!hits)
        return qr_qctx_nomem(out->ctx, e);
    int64_t t0 = qr_qctx_now_ns();
    int rc = qr_par_topk(ps, kind == QR_PLAN_TOPK_SCORE ? QR_BY_SCORE : QR_BY_TIME, k, 0, hits,
                         &n, NULL, e);
    if (s->stats) {
        s->stats->t_scan = qr_qctx_now_ns() - t0;
        s->stats->matched = n;
        s->stats->have_matched = 1;
    }
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
        rc = qr_x_project(ps, hits + from, n - from, cols, outcol, ncols, out, 0, e);
    qr_qfree(out->ctx, hits);
    return rc;
}

/* GROUP BY one keyword-indexed column, count(*) only, every term in the
 * index: each group is a count the index answers (the filter's matches
 * AND col = v, over bitmaps and postings, no column read), for each value
 * v of the segments' dictionaries; the NULL group is what the filter
 * counts beyond them. Used when the values are few. */
#define FACET_MAX_VALUES 64

static int facet_eligible(const qr_sqlsel *s)
{
    if (s->ngroup != 1 || s->rest || !s->gx[0] || s->gx[0]->kind != QR_EX_COL || s->naggs == 0)
        return 0;
    for (uint32_t a = 0; a < s->naggs; a++)
        if (s->aggs[a].fn != QR_AGG_COUNT_STAR)
            return 0;
    int col = (int)s->gx[0]->slot;
    if (s->def->cols[col].type != QT_TEXT)
        return 0;
    return qr_tabdef_index_on(s->def, col, QR_IX_KEYWORD) >= 0;
}

/* The distinct values of column col over the search's segments (from their
 * dictionaries), into vals (arena a). 1 when they are at most max and every
 * segment has the column dictionary-coded, else 0; -1 on error. */
static int facet_values(const qr_par_search *ps, int col, qr_slice *vals, uint32_t *nv,
                        uint32_t max, qr_arena *a, qr_err *e)
{
    *nv = 0;
    for (uint32_t i = 0; i < ps->nsegs; i++) {
        qr_segment *seg = ps->ss[i].seg;
        int sc = qr_seg_col(seg, ps->def->cols[col].name);
        if (sc < 0)
            continue; /* all NULL here */
        qr_colreader *r = qr_colr_open(seg, sc, e);
        if (!r)
            return -1;
        uint32_t nd = 0;
        const qr_slice *d = qr_colr_dict(r, &nd);
        int ok = d != NULL;
        for (uint32_t k = 0; ok && k < nd; k++) {
            uint32_t j = 0;
            while (j < *nv && (vals[j].n != d[k].n || memcmp(vals[j].p, d[k].p, d[k].n)))
                j++;
            if (j < *nv)
                continue;
            if (*nv == max) {
                ok = 0;
                break;
            }
            char *p = qr_arena_memdup(a, d[k].n ? d[k].p : "", d[k].n ? d[k].n : 1);
            if (!p) {
                qr_colr_close(r);
                return qr_errf(e, QR_E_NOMEM, "out of memory");
            }
            vals[(*nv)++] = (qr_slice){p, d[k].n};
        }
        qr_colr_close(r);
        if (!ok)
            return 0;
    }
    return 1;
}

/* A group of R with key cell k (NULL cell for the NULL group) and every
 * count(*) of the select list n. */
static int count_row(const qr_sqlsel *s, qr_result *R, const qr_cell *k, uint64_t n, qr_err *e)
{
    qr_cell *row = qr_result_add_row(R, e);
    if (!row)
        return -1;
    if (k && !k->null && R->cols[0].kind == QR_RK_TEXT) {
        if (qr_result_set_text(R, &row[0], k->s, k->n, e) != 0)
            return -1;
    } else if (k) {
        row[0] = *k;
    }
    for (uint32_t g = 0; g < s->naggs; g++)
        row[1 + g] = (qr_cell){.i = (int64_t)n};
    return 0;
}

/* 1 done (R filled), 0 not answerable this way, -1 error. */
static int facet_counts(const qr_sqlsel *s, qr_par_search *ps, qr_segref **refs, qr_result *R,
                        qr_err *e)
{
    if (!facet_eligible(s) || !refs)
        return 0;
    int col = (int)s->gx[0]->slot;
    qr_arena a;
    qr_arena_init(&a, 16 << 10, 0);
    qr_arena_set_ctx(&a, R->ctx);
    qr_slice vals[FACET_MAX_VALUES];
    uint32_t nv = 0;
    int rc = facet_values(ps, col, vals, &nv, FACET_MAX_VALUES, &a, e);
    if (rc <= 0) {
        qr_arena_free(&a);
        return rc;
    }
    /* the filter's matches read once per segment, each value's postings
     * counted against them (exec/partcount.h) */
    const qr_query **eq = qr_arena_alloc(&a, sizeof *eq * (nv ? nv : 1));
    uint64_t cnt[FACET_MAX_VALUES], total = 0, sum = 0;
    rc = eq ? 1 : qr_errf(e, QR_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < nv && rc == 1; i++)
        if (!(eq[i] = qr_q_equals(s->def, col, vals[i].p, vals[i].n, &a, e)))
            rc = -1;
    if (rc == 1 && qr_x_value_counts(ps, eq, nv, !s->has_where, cnt, &total, e) != 0)
        rc = -1;
    for (uint32_t i = 0; i < nv && rc == 1; i++) {
        qr_cell key = {.s = vals[i].p, .n = (uint32_t)vals[i].n};
        if (cnt[i] && count_row(s, R, &key, cnt[i], e) != 0)
            rc = -1;
        sum += cnt[i];
    }
    qr_cell null = {.null = 1};
    if (rc == 1 && total > sum && count_row(s, R, &null, total - sum, e) != 0)
        rc = -1; /* the rows without a value: the NULL group */
    qr_arena_free(&a);
    return rc;
}

/* GROUP BY date_trunc(unit, <the sort column>), count(*) only: each bucket
 * is a time range of the sorted rows, so a row range of each segment
 * (exec/partcount.h: lower bounds, and the filter's matches read once
 * as a bitmap); the buckets come from the segments' time ranges. Up to
 * QR_TB_MAX_BUCKETS buckets are counted so; without WHERE, more (up to
 * 2^20) walk the sorted column once instead. */
#define TBUCKET_MAX (1u << 20)

static const int64_t bucket_span[] = {0, 1000, 1000000, 1000000000, 60000000000, 3600000000000,
                                      86400000000000, 7 * 86400000000000, 31 * 86400000000000,
                                      92 * 86400000000000, 366 * 86400000000000};

/* Without WHERE: the sort column of each segment read block by block (its
 * values ascend), each value counted into its bucket by a pointer that only
 * moves forward; NULL times make the NULL group. 1, or -1 with e set. */
static int walk_buckets(const qr_sqlsel *s, qr_par_search *ps, int unit, int64_t b0, uint32_t nb,
                        qr_result *R, qr_err *e)
{
    int64_t *start = qr_qmalloc(R->ctx, sizeof *start * (nb + 1));
    uint64_t *cnt = qr_qmalloc(R->ctx, sizeof *cnt * (nb + 1)); /* [nb]: NULL */
    if (!start || !cnt) {
        qr_qfree(R->ctx, start);
        qr_qfree(R->ctx, cnt);
        return qr_qctx_nomem(R->ctx, e);
    }
    int64_t b = b0;
    for (uint32_t i = 0; i < nb; i++, b = qr_date_trunc(unit, b + bucket_span[unit]))
        start[i] = b;
    start[nb] = b; /* the end of the last bucket */
    memset(cnt, 0, sizeof *cnt * (nb + 1));
    int rc = 1;
    for (uint32_t si = 0; si < ps->nsegs && rc == 1; si++) {
        qr_segment *seg = ps->ss[si].seg;
        int sc = qr_seg_col(seg, s->def->cols[s->def->sort_col].name);
        if (sc < 0) {
            cnt[nb] += seg->rows - seg->ndeleted;
            continue;
        }
        qr_colreader *rd = qr_colr_open(seg, sc, e);
        if (!rd) {
            rc = -1;
            break;
        }
        const qr_colmeta *cm = qr_colr_meta(rd);
        uint32_t at = 0;
        for (uint32_t di = 0; di < cm->ndata && rc == 1; di++) {
            const int64_t *v;
            const uint8_t *nul;
            uint32_t first, n;
            if (qr_colr_int_block(rd, di, &v, &nul, &first, &n, e) != 0 ||
                qr_par_check(ps, e) != 0) {
                rc = -1;
                break;
            }
            for (uint32_t j = 0; j < n; j++) {
                if (qr_seg_is_deleted(seg, first + j))
                    continue;
                if (nul[j]) {
                    cnt[nb]++;
                    continue;
                }
                if (v[j] < start[at] || v[j] >= start[at + 1]) { /* find its bucket */
                    uint32_t l = 0, h = nb;
                    while (h - l > 1) {
                        uint32_t m = l + (h - l) / 2;
                        if (start[m] <= v[j])
                            l = m;
                        else
                            h = m;
                    }
                    at = l;
                }
                cnt[at]++;
            }
        }
        qr_colr_close(rd);
    }
    for (uint32_t i = 0; i <= nb && rc == 1; i++) {
        if (!cnt[i])
            continue;
        qr_cell *row = qr_result_add_row(R, e);
        if (!row) {
            rc = -1;
            break;
        }
        row[0] = i < nb ? (qr_cell){.i = start[i]} : (qr_cell){.null = 1};
        for (uint32_t g = 0; g < s->naggs; g++)
            row[1 + g] = (qr_cell){.i = (int64_t)cnt[i]};
    }
    qr_qfree(R->ctx, start);
    qr_qfree(R->ctx, cnt);
    return rc;
}

static int time_buckets(const qr_sqlsel *s, qr_par_search *ps, qr_segref **refs, qr_result *R,
                        qr_err *e)
{
    const qr_expr *k = s->gx[0];
    if (s->ngroup != 1 || s->rest || !refs || s->naggs == 0 || k->kind != QR_EX_FUNC ||
        k->fn != QR_FN_DATE_TRUNC || k->args[1]->kind != QR_EX_COL || s->def->sort_col < 0 ||
        (int)k->args[1]->slot != s->def->sort_col)
        return 0;
    for (uint32_t a = 0; a < s->naggs; a++)
        if (s->aggs[a].fn != QR_AGG_COUNT_STAR)
            return 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t i = 0; i < ps->nsegs; i++) {
        const qr_segment *g = ps->ss[i].seg;
        if (!g->rows || (g->min_ts == 0 && g->max_ts == 0))
            continue;
        lo = g->min_ts < lo ? g->min_ts : lo;
        hi = g->max_ts > hi ? g->max_ts : hi;
    }
    const int64_t *span = bucket_span;
    uint32_t max = s->has_where ? QR_TB_MAX_BUCKETS : TBUCKET_MAX;
    uint32_t nb = 0;
    int64_t b0 = lo <= hi ? qr_date_trunc(k->unit, lo) : 0;
    for (int64_t b = b0; lo <= hi && b <= hi && nb <= max;
         b = qr_date_trunc(k->unit, b + span[k->unit]))
        nb++;
    if (nb > max)
        return 0;
    if (nb > QR_TB_MAX_BUCKETS) /* every row, many buckets: walk the sorted column once */
        return walk_buckets(s, ps, k->unit, b0, nb, R, e);
    /* each bucket a row range of every segment: its width, or a popcount of
     * the filter's matches over it (exec/partcount.h) */
    int64_t *start = qr_qmalloc(R->ctx, sizeof *start * (nb + 1));
    uint64_t *cnt = qr_qmalloc(R->ctx, sizeof *cnt * (nb + 1));
    int rc = start && cnt ? 1 : qr_qctx_nomem(R->ctx, e);
    int64_t b = b0;
    for (uint32_t i = 0; rc == 1 && i <= nb; i++, b = qr_date_trunc(k->unit, b + span[k->unit]))
        start[i] = b;
    if (rc == 1 && qr_x_time_buckets(ps, s->def->sort_col, start, nb, !s->has_where, cnt, e) != 0)
        rc = -1;
    for (uint32_t i = 0; rc == 1 && i <= nb; i++) {
        qr_cell key = i < nb ? (qr_cell){.i = start[i]} : (qr_cell){.null = 1};
        if (cnt[i] && count_row(s, R, &key, cnt[i], e) != 0)
            rc = -1;
    }
    qr_qfree(R->ctx, start);
    qr_qfree(R->ctx, cnt);
    return rc;
}

static int run_aggregate(const qr_sqlsel *s, qr_par_search *ps, qr_segref **refs,
                         qr_result *out, qr_err *e)
{
    qr_groupby g;
    memset(&g, 0, sizeof g);
    qr_result R;
    qr_result_init(&R, out->ctx);
    int rc = 0;
    g.nkeys = s->ngroup;
    for (uint32_t k = 0; k < s->ngroup && rc == 0; k++) {
        const qr_expr *x = s->gx[k];
        int kind, type, raw;
        if (x->kind == QR_EX_COL) {
            g.keys[k] = (int)x->slot;
            const qr_coldef *c = &s->def->cols[x->slot];
            rc = qr_result_add_col(&R, c->name, qr_x_kind_of(c->type), c->type, c->tsfmt, e);
        } else {
            g.keys[k] = -1;
            g.kx[k] = x;
            qr_run_expr_rcol(x, &kind, &type, &raw);
            rc = qr_result_add_col(&R, "key", kind, type, 0, e);
        }
        g.key_out[k] = k;
    }
    g.naggs = s->naggs;
    for (uint32_t a = 0; a < s->naggs && rc == 0; a++) {
        const qr_sqlagg *ag = &s->aggs[a];
        g.fn[a] = ag->fn;
        g.arg[a] = ag->col;
        g.ax[a] = ag->arg;
        g.agg_out[a] = s->ngroup + a;
        uint32_t slot = s->ngroup + a;
        int kind = ag->fn == QR_AGG_AVG ? QR_RK_FLOAT : QR_RK_INT;
        rc = qr_result_add_col(&R, "agg", kind, kind == QR_RK_INT ? s->slot_ctype[slot] : 0, 0, e);
    }
    g.where = s->rest;
    g.need = s->need;
    g.all_rows = !s->has_where && !s->rest;
    g.index_all = !s->has_where;
    int64_t t0 = qr_qctx_now_ns();
    int done = rc == 0 ? facet_counts(s, ps, refs, &R, e) : 0;
    if (done == 0 && rc == 0)
        done = time_buckets(s, ps, refs, &R, e);
    if (done < 0)
        rc = -1;
    if (rc == 0 && !done)
        rc = qr_x_groupby(ps, &g, &R, e);
    int64_t t1 = qr_qctx_now_ns();
    if (rc == 0)
        rc = qr_run_post_groups(s, &R, out, e);
    if (s->stats) {
        s->stats->t_agg = t1 - t0;
        s->stats->t_post = qr_qctx_now_ns() - t1;
        s->stats->groups = R.nrows;
    }
    qr_result_free(&R);
    return rc;
}

/* Output rows x and y of a GROUP BY by their groups' keys (rmap: output
 * row -> group row), as the groups' own sort orders them. */
typedef struct grouptie {
    const qr_result *R;
    const uint32_t *rmap;
    uint32_t ngroup;
} grouptie;

static int group_tie(void *arg, uint64_t x, uint64_t y)
{
    const grouptie *g = arg;
    const qr_cell *a = qr_result_row(g->R, g->rmap[x]), *b = qr_result_row(g->R, g->rmap[y]);
    for (uint32_t k = 0; k < g->ngroup; k++) {
        int d = qr_cell_cmp(g->R, k, &a[k], &b[k]);
        if (d)
            return d;
    }
    return 0;
}

int qr_run_post_groups(const qr_sqlsel *s, qr_result *Rp, qr_result *out, qr_err *e)
{
    qr_result R = *Rp; /* a view: rows sorted in place */
    int rc = 0;
    /* groups in key order first, so rows equal under ORDER BY keep it;
     * with ORDER BY ... LIMIT k of many groups, instead the k first by
     * (ORDER BY keys, group keys), the same rows, from a bounded heap: a
     * sort of a million groups' keys took seconds */
    uint64_t top = top_of(s);
    int fast = s->ngroup && s->norder && top != UINT64_MAX && top < R.nrows / 8 &&
               out->nrows == 0;
    uint32_t keys[QR_SQL_MAX_GROUP];
    uint8_t asc[QR_SQL_MAX_GROUP] = {0};
    for (uint32_t k = 0; k < s->ngroup; k++)
        keys[k] = k;
    if (rc == 0 && s->ngroup && !fast)
        rc = qr_result_sort(&R, keys, asc, s->ngroup, e);
    qr_arena a;
    qr_arena_init(&a, 64 << 10, 0);
    qr_arena_set_ctx(&a, out->ctx);
    uint32_t nslots = s->ngroup + s->naggs;
    int map[QR_SQL_MAX_GROUP + QR_SQL_MAX_AGGS];
    for (uint32_t i = 0; i < nslots; i++)
        map[i] = (int)i;
    qr_xbatch b;
    if (rc == 0)
        rc = qr_run_result_batch(&R, nslots, map, s->slot_ctype, &b, &a, e);
    uint32_t *sel = rc == 0 ? qr_arena_alloc(&a, sizeof *sel * (R.nrows ? R.nrows : 1)) : NULL;
    uint32_t ns = (uint32_t)R.nrows;
    if (rc == 0 && !sel)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    if (rc == 0 && s->having)
        rc = qr_expr_filter(s->having, &b, sel, &ns, &a, e);
    else if (rc == 0)
        for (uint32_t i = 0; i < ns; i++)
            sel[i] = i;
    if (rc == 0)
        rc = qr_run_hidden_columns(s, out, e);
    const qr_cell *vals[QR_SQL_MAX_ITEMS + QR_SQL_MAX_ORDER];
    uint32_t nv = 0;
    for (uint32_t i = 0; i < s->nitems && rc == 0; i++)
        if (!(vals[nv++] = qr_expr_eval(s->items[i].x, &b, &a, e)))
            rc = -1;
    for (uint32_t i = 0; i < s->norder && rc == 0; i++)
        if (s->order[i].kind == QR_SO_EXPR && !(vals[nv++] = qr_expr_eval(s->order[i].x, &b, &a, e)))
            rc = -1;
    for (uint32_t q = 0; q < ns && rc == 0; q++) {
        qr_cell *row = qr_result_add_row(out, e);
        if (!row) {
            rc = -1;
            break;
        }
        for (uint32_t v = 0; v < nv && rc == 0; v++)
            rc = qr_run_put_cell(out, row, v, &vals[v][sel[q]], e);
    }
    if (rc == 0 && fast) {
        uint32_t okeys[QR_SQL_MAX_ORDER];
        uint8_t odesc[QR_SQL_MAX_ORDER];
        int nk = order_keys(s, okeys, odesc, e);
        grouptie g = {&R, sel, s->ngroup};
        rc = nk < 0 ? -1
                    : qr_result_sort_top_tie(out, okeys, odesc, (uint32_t)nk, top, group_tie, &g,
                                             e);
        if (rc == 0)
            slice_rows(s, out);
    }
    qr_arena_free(&a);
    *Rp = R;
    if (rc == 0 && !fast)
        rc = qr_run_sort_slice(s, out, e);
    return rc;
}


/* SELECT without FROM: the select list over one row of no column. */
static int run_const(const qr_sqlsel *s, qr_result *out, qr_err *e)
{
    qr_arena a;
    qr_arena_init(&a, 4 << 10, 0);
    qr_arena_set_ctx(&a, out->ctx);
    qr_xbatch b = {1, 0, NULL, NULL, NULL};
    int rc = 0;
    qr_cell *row = s->offset == 0 && s->limit > 0 ? qr_result_add_row(out, e) : NULL;
    for (uint32_t i = 0; row && i < s->nitems && rc == 0; i++) {
        const qr_cell *v = qr_expr_eval(s->items[i].x, &b, &a, e);
        rc = v ? qr_run_put_cell(out, row, i, v, e) : -1;
    }
    if (!row && s->offset == 0 && s->limit > 0)
        rc = -1;
    qr_arena_free(&a);
    return rc;
}

uint32_t qr_run_trees(const qr_sqlsel *s, qr_expr **t)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < s->scope.n; r++) {
        if (s->rng[r].rest)
            t[n++] = s->rng[r].rest;
        if (s->rng[r].on_rest)
            t[n++] = s->rng[r].on_rest;
        for (uint32_t k = 0; k < s->rng[r].nkeys; k++) {
            t[n++] = s->rng[r].lkey[k];
            t[n++] = s->rng[r].rkey[k];
        }
    }
    for (uint32_t i = 0; i < s->nitems; i++)
        if (s->items[i].x)
            t[n++] = s->items[i].x;
    for (uint32_t i = 0; i < s->norder; i++)
        if (s->order[i].x)
            t[n++] = s->order[i].x;
    for (uint32_t k = 0; k < s->ngroup; k++)
        if (s->gx[k])
            t[n++] = s->gx[k];
    for (uint32_t a = 0; a < s->naggs; a++)
        if (s->aggs[a].arg)
            t[n++] = s->aggs[a].arg;
    if (s->rest)
        t[n++] = s->rest;
    if (s->having)
        t[n++] = s->having;
    return n;
}

static int run_planned(const qr_sqlsel *s, int kind, qr_segref **refs, uint32_t nsegs,
                       qr_pool *pool, int threads, qr_result *out, qr_err *e);

int qr_run_begin(const qr_sqlsel *s, qr_result *out, qr_expr **t, uint32_t *nt, qr_err *e)
{
    *nt = qr_run_trees(s, t);
    int rc = qr_run_define_columns(s, out, e);
    for (uint32_t i = 0; i < *nt && rc == 0; i++)
        rc = qr_expr_prepare(t[i], e);
    return rc;
}

void qr_run_end(qr_expr **t, uint32_t nt)
{
    for (uint32_t i = 0; i < nt; i++)
        qr_expr_free_tree(t[i]);
}

int qr_sql_run(const qr_sqlsel *s, int kind, qr_segref **refs, uint32_t nsegs, qr_pool *pool,
               int threads, qr_result *out, qr_err *e)
{
    qr_expr *t[QR_RUN_MAX_TREES];
    uint32_t nt;
    int rc = qr_run_begin(s, out, t, &nt, e);
    if (rc == 0)
        rc = run_planned(s, kind, refs, nsegs, pool, threads, out, e);
    qr_run_end(t, nt);
    return rc;
}

static int pass_batch(void *ctx, const qr_hit *hits, uint32_t n, qr_err *e)
{
    return rows_for_hits(ctx, hits, n, NULL, NULL, e);
}

int qr_sql_run_matches(const qr_sqlsel *s, qr_segref **refs, uint32_t nsegs, qr_pool *pool,
                       int threads, qr_qctx *ctx, qr_run_rows_fn fn, void *arg, qr_err *e)
{
    qr_result scratch; /* the select list's columns: never filled */
    qr_result_init(&scratch, ctx);
    qr_expr *t[QR_RUN_MAX_TREES];
    uint32_t nt;
    int rc = qr_run_begin(s, &scratch, t, &nt, e);
    qr_par_search ps;
    int inited = rc == 0 && qr_par_init_refs_tree(&ps, pool, s->def, refs, nsegs, s->filter,
                                                  threads, e) == 0;
    rowrun *rr = inited ? qr_qmalloc(ctx, sizeof *rr) : NULL;
    rc = !inited ? -1 : rr ? qr_par_set_ctx(&ps, ctx, e) : qr_qctx_nomem(ctx, e);
    if (rc == 0) {
        memset(rr, 0, sizeof *rr);
        rr->s = s;
        rr->ps = &ps;
        rr->out = &scratch;
        rr->want = UINT64_MAX;
        for (uint32_t c = 0; c < s->def->ncols; c++)
            rr->types[c] = s->def->cols[c].type;
        rr->ncols = read_columns(s, rr->cols, rr->tmap);
        rr->pass = fn;
        rr->pass_arg = arg;
        rc = qr_par_first(&ps, UINT64_MAX, pass_batch, rr, NULL, e);
    }
    if (inited) {
        qr_par_set_ctx(&ps, NULL, NULL);
        qr_par_free(&ps);
    }
    qr_qfree(ctx, rr);
    qr_run_end(t, nt);
    qr_result_free(&scratch);
    return rc;
}

static int run_planned(const qr_sqlsel *s, int kind, qr_segref **refs, uint32_t nsegs,
                       qr_pool *pool, int threads, qr_result *out, qr_err *e)
{
    if (kind == QR_PLAN_CONST)
        return run_const(s, out, e);
    qr_par_search ps;
    if (qr_par_init_refs_tree(&ps, pool, s->def, refs, nsegs, s->filter, threads, e) != 0)
        return -1;
    int rc = qr_par_set_ctx(&ps, out->ctx, e);
    int64_t t0 = qr_qctx_now_ns();
    if (rc == 0 && kind == QR_PLAN_COUNT) {
        uint64_t n = 0;
        rc = qr_par_count(&ps, &n, e);
        if (s->stats) {
            s->stats->matched = n;
            s->stats->have_matched = 1;
            s->stats->t_scan = qr_qctx_now_ns() - t0;
        }
        if (rc == 0 && s->offset == 0 && s->limit > 0) {
            qr_cell *row = qr_result_add_row(out, e);
            for (uint32_t i = 0; row && i < s->nitems; i++)
                row[i] = (qr_cell){.i = (int64_t)n};
            rc = row ? 0 : -1;
        }
    } else if (rc == 0 && kind == QR_PLAN_AGGREGATE) {
        rc = run_aggregate(s, &ps, refs, out, e);
    } else if (rc == 0 && (kind == QR_PLAN_TOPK_SCORE || kind == QR_PLAN_TOPK_TIME) &&
               all_plain(s)) {
        rc = run_plain(s, kind, &ps, out, e);
    } else if (rc == 0) {
        rc = run_rows(s, kind, &ps, out, e);
    }
    qr_par_set_ctx(&ps, NULL, NULL);
    qr_par_free(&ps);
    if (s->stats)
        s->stats->out = out->nrows;
    return rc;
}
