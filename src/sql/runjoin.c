/* runjoin.c - joins and count(DISTINCT) (run.h qr_sql_run_join): every
 * entry of FROM scanned with its own index filter, its matches read in the
 * columns the statement uses and filtered by its residual; the entries
 * hash-joined left-deep on their equal keys (exec/join.h: inner, LEFT,
 * RIGHT, FULL, semi), each inner join's other ON terms filtering right after
 * it; the joined rows filtered, then aggregated (exec/hashagg.h) or
 * projected, sorted, cut.
 *
 * Everything is materialised (each entry's matching rows, then the joined
 * rows) under the statement's memory limit: a join of two selective scans,
 * the trace-correlation shape, costs what its matches cost. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "exec/hashagg.h"
#include "format/colvec.h"
#include "util/buf.h"
#include "util/pool.h"
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

/* A relation, column-major: for each slot of the scope, n cells (stored
 * domain) or NULL when no expression reads it. Text bytes live in `a`,
 * which lives as long as the relation's readers need. */
typedef struct rel {
    qr_qctx *ctx;
    uint64_t n;
    uint32_t nslots;
    qr_cell **col;
    uint8_t *types;
    qr_arena *a;
    qr_arena *slot_a; /* GATHER_SLOTS more, one per gathering slot (same life as a) */
} rel;

#define GATHER_SLOTS (QR_POOL_MAX_THREADS + 1)

static qr_cell *new_col(qr_qctx *ctx, uint64_t n, qr_err *e)
{
    qr_cell *c = qr_qmalloc(ctx, sizeof *c * (n ? n : 1));
    if (!c)
        qr_qctx_nomem(ctx, e);
    return c;
}

static void rel_free(rel *r)
{
    for (uint32_t i = 0; r->col && i < r->nslots; i++)
        qr_qfree(r->ctx, r->col[i]);
    qr_qfree(r->ctx, r->col);
    r->col = NULL;
}

/* A batch of rows [at, at + n) of r. */
static qr_xbatch rel_batch(const rel *r, uint64_t at, uint32_t n, const qr_cell **cols)
{
    for (uint32_t i = 0; i < r->nslots; i++)
        cols[i] = r->col[i] ? r->col[i] + at : NULL;
    return (qr_xbatch){n, r->nslots, cols, r->types, NULL};
}

/* Column vector v (of reader rd, column type t) as cells; dictionary values
 * copied once per segment (dcopy: ndict slots, lazily filled). */
static int vec_to_cells(qr_colreader *rd, const qr_vec *v, int t, uint32_t n, qr_cell *out,
                        qr_slice *dcopy, qr_arena *a, qr_buf *mb, qr_err *e)
{
    for (uint32_t j = 0; j < n; j++) {
        out[j] = (qr_cell){.null = 1};
        if (v->kind == QR_VEC_INT) {
            if (!v->isnull[j])
                out[j] = (qr_cell){.i = v->ints[j]};
            continue;
        }
        qr_slice sl;
        if (v->kind == QR_VEC_CODES) {
            if (!v->codes[j])
                continue;
            qr_slice *d = &dcopy[v->codes[j] - 1];
            if (!d->p) {
                qr_slice src = v->dict[v->codes[j] - 1];
                if (t == QT_MAP) {
                    qr_buf_clear(mb);
                    if (qr_colr_map_json(rd, src, mb, e) != 0)
                        return -1;
                    src = (qr_slice){(const char *)mb->p, mb->len};
                }
                char *p = qr_arena_memdup(a, src.n ? src.p : "", src.n ? src.n : 1);
                if (!p)
                    return qr_errf(e, QR_E_NOMEM, "out of memory reading a join's rows");
                *d = (qr_slice){p, src.n};
            }
            sl = *d;
        } else {
            sl = v->vals[j]; /* copied into a by the gather */
            if (!sl.p)
                continue;
            if (t == QT_MAP) {
                qr_buf_clear(mb);
                if (qr_colr_map_json(rd, sl, mb, e) != 0)
                    return -1;
                char *p = qr_arena_memdup(a, mb->len ? (const char *)mb->p : "",
                                          mb->len ? mb->len : 1);
                if (!p)
                    return qr_errf(e, QR_E_NOMEM, "out of memory reading a join's rows");
                sl = (qr_slice){p, mb->len};
            }
        }
        out[j] = (qr_cell){.s = sl.p, .n = (uint32_t)sl.n};
    }
    return 0;
}

/* One gather job: hits cut into chunks of one segment each (at most BATCH
 * hits), taken by the pool's slots in turn; each slot writes its chunks'
 * disjoint ranges of the relation's columns and keeps the bytes in its own
 * arena (r->slot_a[slot]), so no two slots share anything but the atomics. */
typedef struct gjob {
    const qr_par_search *ps;
    const qr_hit *h;
    const uint8_t *need;
    uint32_t base;
    rel *r;
    const uint64_t *cut; /* chunk k is hits [cut[k], cut[k + 1]) */
    uint32_t ncut;
    atomic_uint next;
    atomic_int failed;
    int rc[GATHER_SLOTS];
    qr_err err[GATHER_SLOTS];
} gjob;

static int gather_chunk(gjob *g, qr_arena *ta, uint64_t s0, uint64_t t, uint32_t *rows,
                        qr_arena *va, qr_buf *mb, qr_err *e)
{
    const qr_tabdef *def = g->ps->def;
    const qr_hit *h = g->h;
    rel *r = g->r;
    qr_segment *seg = g->ps->ss[h[s0].seg].seg;
    for (uint64_t j = s0; j < t; j++)
        rows[j - s0] = h[j].doc;
    int rc = 0;
    for (uint32_t c = 0; c < def->ncols && rc == 0; c++) {
        if (!g->need[c])
            continue;
        qr_cell *out = r->col[g->base + c] + s0;
        int sc = qr_seg_col(seg, def->cols[c].name);
        if (sc < 0) { /* the segment predates the column */
            for (uint64_t j = s0; j < t; j++)
                out[j - s0] = (qr_cell){.null = 1};
            continue;
        }
        qr_colreader *rd = qr_colr_open(seg, sc, e);
        if (!rd)
            return -1;
        uint32_t nd = 0;
        qr_colr_dict(rd, &nd);
        qr_arena_reset(va);
        qr_slice *dcopy = nd ? qr_arena_alloc(va, sizeof *dcopy * nd) : NULL;
        if (nd && !dcopy)
            rc = qr_errf(e, QR_E_NOMEM, "out of memory");
        if (dcopy)
            memset(dcopy, 0, sizeof *dcopy * nd);
        qr_vec v;
        /* value bytes go straight to the slot's arena */
        if (rc == 0)
            rc = qr_colvec_gather(rd, rows, (uint32_t)(t - s0), &v, ta, e);
        if (rc == 0)
            rc = vec_to_cells(rd, &v, def->cols[c].type, (uint32_t)(t - s0), out, dcopy, ta, mb,
                              e);
        qr_colr_close(rd);
    }
    return rc;
}

static void gather_slot(void *ctx, int slot)
{
    gjob *g = ctx;
    qr_err *e = &g->err[slot];
    uint32_t *rows = qr_qmalloc(g->r->ctx, sizeof *rows * BATCH);
    qr_arena va;
    qr_arena_init(&va, 1 << 20, 0);
    qr_arena_set_ctx(&va, g->r->ctx);
    qr_buf mb;
    qr_buf_init(&mb);
    int rc = rows ? 0 : qr_qctx_nomem(g->r->ctx, e);
    while (rc == 0 && !atomic_load(&g->failed)) {
        unsigned k = atomic_fetch_add(&g->next, 1);
        if (k >= g->ncut)
            break;
        rc = qr_qctx_check(g->r->ctx, e);
        if (rc == 0)
            rc = gather_chunk(g, &g->r->slot_a[slot], g->cut[k], g->cut[k + 1], rows, &va, &mb,
                              e);
    }
    if (rc != 0)
        atomic_store(&g->failed, 1);
    g->rc[slot] = rc;
    qr_buf_free(&mb);
    qr_arena_free(&va);
    qr_qfree(g->r->ctx, rows);
}

/* The needed columns of hits[0..n) (table order) into r's slots base..,
 * segments read in parallel on the pool. */
static int gather(const qr_par_search *ps, const qr_hit *h, uint64_t n, const uint8_t *need,
                  uint32_t base, qr_pool *pool, int threads, rel *r, qr_err *e)
{
    const qr_tabdef *def = ps->def;
    for (uint32_t c = 0; c < def->ncols; c++)
        if (need[c] && !(r->col[base + c] = new_col(r->ctx, n, e)))
            return -1;
    uint64_t ncut = 0;
    for (uint64_t s0 = 0; s0 < n; ncut++) {
        uint64_t t = s0;
        while (t < n && t - s0 < BATCH && h[t].seg == h[s0].seg)
            t++;
        s0 = t;
    }
    if (ncut == 0)
        return 0;
    if (ncut >= UINT32_MAX)
        return qr_errf(e, QR_E_TOO_LONG, "a join entry of %llu chunks", (unsigned long long)ncut);
    gjob *g = qr_qmalloc(r->ctx, sizeof *g);
    uint64_t *cut = qr_qmalloc(r->ctx, sizeof *cut * (ncut + 1));
    if (!g || !cut) {
        qr_qfree(r->ctx, g);
        qr_qfree(r->ctx, cut);
        return qr_qctx_nomem(r->ctx, e);
    }
    ncut = 0;
    for (uint64_t s0 = 0; s0 < n;) {
        uint64_t t = s0;
        while (t < n && t - s0 < BATCH && h[t].seg == h[s0].seg)
            t++;
        cut[ncut++] = s0;
        s0 = t;
    }
    cut[ncut] = n;
    memset(g, 0, sizeof *g);
    g->ps = ps;
    g->h = h;
    g->need = need;
    g->base = base;
    g->r = r;
    g->cut = cut;
    g->ncut = (uint32_t)ncut;
    atomic_init(&g->next, 0);
    atomic_init(&g->failed, 0);
    int k = threads < 1 ? 1 : threads;
    if (k > GATHER_SLOTS)
        k = GATHER_SLOTS;
    if ((uint64_t)k > ncut)
        k = (int)ncut;
    qr_pool_run(k > 1 ? pool : NULL, k, gather_slot, g);
    int rc = 0;
    for (int i = 0; i < k && rc == 0; i++)
        if (g->rc[i] != 0) {
            *e = g->err[i];
            rc = -1;
        }
    qr_qfree(r->ctx, cut);
    qr_qfree(r->ctx, g);
    return rc;
}

/* Keep rows sel[0..n) (ascending) of every column of r. */
static void rel_keep(rel *r, const uint32_t *sel, uint64_t base_row, uint32_t n, uint64_t *w)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t from = base_row + sel[i], to = *w + i;
        if (from != to)
            for (uint32_t c = 0; c < r->nslots; c++)
                if (r->col[c])
                    r->col[c][to] = r->col[c][from];
    }
    *w += n;
}

/* Filter rest over R's slots base..base + ncols (an entry's own, or all of
 * a joined relation's), R's rows kept in place. */
static int rel_filter(const qr_expr *rest, uint32_t base, uint32_t ncols, rel *R, qr_err *e)
{
    qr_arena a;
    qr_arena_init(&a, 64 << 10, 0);
    qr_arena_set_ctx(&a, R->ctx);
    uint32_t *sel = qr_qmalloc(R->ctx, sizeof *sel * BATCH);
    const qr_cell **cols = qr_qmalloc(R->ctx, sizeof *cols * (R->nslots ? R->nslots : 1));
    int rc = sel && cols ? 0 : qr_qctx_nomem(R->ctx, e);
    uint64_t w = 0;
    for (uint64_t at = 0; at < R->n && rc == 0; at += BATCH) {
        uint32_t n = (uint32_t)(R->n - at < BATCH ? R->n - at : BATCH), ns = 0;
        qr_arena_reset(&a);
        qr_xbatch b = rel_batch(R, at, n, cols);
        b.cols += base;
        b.types += base;
        b.ncols = ncols;
        rc = qr_expr_filter(rest, &b, sel, &ns, &a, e);
        if (rc == 0)
            rel_keep(R, sel, at, ns, &w);
    }
    R->n = w;
    qr_qfree(R->ctx, sel);
    qr_qfree(R->ctx, cols);
    qr_arena_free(&a);
    return rc;
}

static int import_entry(const qr_tabdef *def, const qr_result *sub, const qr_expr *rest,
                        const uint8_t *need, uint32_t base, rel *R, qr_err *e);

/* Entry r (table def, slots base..) scanned into R: its matches, its
 * needed columns, its residual applied. */
static int scan_entry(const qr_tabdef *def, const qr_query *filter, const qr_expr *rest,
                      const uint8_t *need, uint32_t base, qr_segref **refs, uint32_t nsegs,
                      qr_pool *pool, int threads, rel *R, qr_err *e)
{
    qr_par_search ps;
    if (qr_par_init_refs_tree(&ps, pool, def, refs, nsegs, filter, threads, e) != 0)
        return -1;
    hits h = {R->ctx, NULL, 0, 0};
    int rc = qr_par_set_ctx(&ps, R->ctx, e);
    if (rc == 0)
        rc = qr_par_first(&ps, UINT64_MAX, collect, &h, NULL, e);
    if (rc == 0)
        rc = gather(&ps, h.h, h.n, need, base, pool, threads, R, e);
    R->n = rc == 0 ? h.n : 0;
    qr_qfree(R->ctx, h.h);
    qr_par_set_ctx(&ps, NULL, NULL);
    qr_par_free(&ps);
    if (rc != 0 || !rest)
        return rc;
    return rel_filter(rest, base, def->ncols, R, e);
}

/* Entry r's rows from its subquery's result: the needed columns, cells in
 * the stored domain of def's column types (doubles of FLOAT columns to
 * their ordered form); the bytes copied into the relation's arena. */
static int import_entry(const qr_tabdef *def, const qr_result *sub, const qr_expr *rest,
                        const uint8_t *need, uint32_t base, rel *R, qr_err *e)
{
    for (uint32_t c = 0; c < def->ncols; c++) {
        if (!need[c])
            continue;
        qr_cell *o = new_col(R->ctx, sub->nrows, e);
        if (!o)
            return -1;
        R->col[base + c] = o;
        int k = sub->cols[c].kind;
        for (uint64_t i = 0; i < sub->nrows; i++) {
            qr_cell v = qr_result_row(sub, i)[c];
            if (!v.null && k == QR_RK_FLOAT)
                v.i = qr_num_from_f64(v.f);
            else if (!v.null && (k == QR_RK_TEXT || k == QR_RK_JSON)) {
                char *p = qr_arena_memdup(R->a, v.n ? v.s : "", v.n ? v.n : 1);
                if (!p)
                    return qr_errf(e, QR_E_NOMEM, "out of memory reading a subquery's rows");
                v.s = p;
            }
            o[i] = v;
        }
    }
    R->n = sub->nrows;
    return rest ? rel_filter(rest, base, def->ncols, R, e) : 0;
}

/* J := J joined with T (entry k) on entry k's keys. */
static int join_step(const qr_sqlsel *s, uint32_t k, rel *J, rel *T, qr_pool *pool, int threads,
                     qr_err *e)
{
    const qr_sqlscope *sc = &s->scope;
    qr_qctx *ctx = J->ctx;
    uint32_t base = sc->r[k].base, nc = sc->r[k].def->ncols;
    uint32_t nk = s->rng[k].nkeys;
    /* keys: evaluated over each side whole (arena a) */
    qr_arena a;
    qr_arena_init(&a, 1 << 20, 0);
    qr_arena_set_ctx(&a, ctx);
    const qr_cell **cols = qr_qmalloc(ctx, sizeof *cols * J->nslots);
    qr_cell *lk[QR_JOIN_MAX_KEYS] = {0}, *rk[QR_JOIN_MAX_KEYS] = {0};
    uint8_t kt[QR_JOIN_MAX_KEYS];
    int rc = cols ? 0 : qr_qctx_nomem(ctx, e);
    for (uint32_t i = 0; i < nk && rc == 0; i++) {
        kt[i] = s->rng[k].lkey[i]->type;
        if (!(lk[i] = new_col(ctx, J->n, e)) || !(rk[i] = new_col(ctx, T->n, e))) {
            rc = -1;
            break;
        }
        for (uint64_t at = 0; at < J->n && rc == 0; at += BATCH) {
            uint32_t n = (uint32_t)(J->n - at < BATCH ? J->n - at : BATCH);
            qr_xbatch b = rel_batch(J, at, n, cols);
            const qr_cell *v = qr_expr_eval(s->rng[k].lkey[i], &b, &a, e);
            if (!v)
                rc = -1;
            else
                memcpy(lk[i] + at, v, sizeof *v * n);
        }
        for (uint64_t at = 0; at < T->n && rc == 0; at += BATCH) {
            uint32_t n = (uint32_t)(T->n - at < BATCH ? T->n - at : BATCH);
            qr_xbatch b = rel_batch(T, at, n, cols);
            b.cols += base;
            b.types += base;
            b.ncols = nc;
            const qr_cell *v = qr_expr_eval(s->rng[k].rkey[i], &b, &a, e);
            if (!v)
                rc = -1;
            else
                memcpy(rk[i] + at, v, sizeof *v * n);
        }
    }
    uint64_t np = 0, *li = NULL, *ri = NULL;
    if (rc == 0)
        rc = qr_x_hash_join_pairs(J->n, (const qr_cell *const *)lk, T->n,
                                  (const qr_cell *const *)rk, kt, nk, s->rng[k].kind, pool,
                                  threads, ctx, &li, &ri, &np, e);
    /* the joined columns: J's slots by li, T's by ri (UINT64_MAX: NULL) */
    for (uint32_t c = 0; c < J->nslots && rc == 0; c++) {
        int from_t = c >= base && c < base + nc;
        const qr_cell *src = from_t ? T->col[c] : J->col[c];
        if (!src)
            continue;
        qr_cell *dst = new_col(ctx, np, e);
        if (!dst) {
            rc = -1;
            break;
        }
        const uint64_t *ix = from_t ? ri : li;
        for (uint64_t p = 0; p < np; p++)
            dst[p] = ix[p] == UINT64_MAX ? (qr_cell){.null = 1} : src[ix[p]];
        if (!from_t)
            qr_qfree(ctx, J->col[c]);
        J->col[c] = dst;
    }
    if (rc == 0)
        J->n = np;
    for (uint32_t i = 0; i < nk; i++) {
        qr_qfree(ctx, lk[i]);
        qr_qfree(ctx, rk[i]);
    }
    qr_qfree(ctx, li);
    qr_qfree(ctx, ri);
    qr_qfree(ctx, cols);
    qr_arena_free(&a);
    return rc;
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
    const qr_cell **cols = qr_qmalloc(ctx, sizeof *cols * (nslots ? nslots : 1));
    if (!cols)
        rc = qr_qctx_nomem(ctx, e);
    for (uint64_t at = 0; at < J->n && rc == 0; at += BATCH) {
        /* one batch of J's rows at a time */
        uint32_t n = (uint32_t)(J->n - at < BATCH ? J->n - at : BATCH);
        qr_arena_reset(&a);
        qr_xbatch b = rel_batch(J, at, n, cols);
        uint32_t *sel = qr_arena_alloc(&a, sizeof *sel * n), ns = 0;
        if (!sel)
            rc = qr_errf(e, QR_E_NOMEM, "out of memory");
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
    qr_qfree(ctx, cols);
    qr_arena_free(&a);
    return rc;
}

static int run_join(const qr_sqlsel *s, qr_segref ***refs, const uint32_t *nsegs,
                    qr_result *const *derived, qr_pool *pool, int threads, qr_result *out,
                    qr_err *e);

int qr_sql_run_join(const qr_sqlsel *s, qr_segref ***refs, const uint32_t *nsegs,
                    qr_result *const *derived, qr_pool *pool, int threads, int merge_join,
                    qr_result *out, qr_err *e)
{
    qr_expr *t[QR_RUN_MAX_TREES];
    uint32_t nt;
    qr_tjshape sh;
    int rc = qr_run_begin(s, out, t, &nt, e);
    if (rc == 0 && merge_join && qr_run_term_join_shape(s, &sh))
        rc = qr_run_term_join(s, &sh, refs, nsegs, pool, threads, out, e);
    else if (rc == 0 && merge_join && qr_run_term_distinct_shape(s, &sh))
        rc = qr_run_term_distinct(s, &sh, refs[0], nsegs[0], pool, threads, out, e);
    else if (rc == 0)
        rc = 1;
    if (rc == 1) /* not that shape, or a segment cannot answer: rows by hash */
        rc = run_join(s, refs, nsegs, derived, pool, threads, out, e);
    qr_run_end(t, nt);
    return rc;
}

static int run_join(const qr_sqlsel *s, qr_segref ***refs, const uint32_t *nsegs,
                    qr_result *const *derived, qr_pool *pool, int threads, qr_result *out,
                    qr_err *e)
{
    qr_qctx *ctx = out->ctx;
    uint32_t n = s->scope.n ? s->scope.n : 1;
    uint32_t nslots = s->scope.n ? s->scope.nslots : s->def->ncols;
    qr_arena text, slot_text[GATHER_SLOTS]; /* every relation's bytes, for the statement */
    qr_arena_init(&text, 1 << 20, 0);
    qr_arena_set_ctx(&text, ctx);
    for (int i = 0; i < GATHER_SLOTS; i++) {
        qr_arena_init(&slot_text[i], 1 << 20, 0);
        qr_arena_set_ctx(&slot_text[i], ctx);
    }
    rel J = {ctx, 0, nslots, NULL, NULL, &text, slot_text};
    J.col = qr_qmalloc(ctx, sizeof *J.col * nslots);
    J.types = qr_qmalloc(ctx, nslots);
    int rc = J.col && J.types ? 0 : qr_qctx_nomem(ctx, e);
    if (rc == 0)
        memset(J.col, 0, sizeof *J.col * nslots);
    for (uint32_t r = 0; r < n && rc == 0; r++) {
        const qr_tabdef *def = s->scope.n ? s->scope.r[r].def : s->def;
        uint32_t base = s->scope.n ? s->scope.r[r].base : 0;
        for (uint32_t c = 0; c < def->ncols; c++)
            J.types[base + c] = def->cols[c].type;
    }
    for (uint32_t r = 0; r < n && rc == 0; r++) {
        const qr_tabdef *def = s->scope.n ? s->scope.r[r].def : s->def;
        uint32_t base = s->scope.n ? s->scope.r[r].base : 0;
        const qr_query *filter = s->scope.n ? s->rng[r].filter : s->filter;
        const qr_expr *rest = s->scope.n ? s->rng[r].rest : s->rest;
        int64_t t0 = qr_qctx_now_ns();
        if (r == 0) {
            rc = derived && derived[r]
                     ? import_entry(def, derived[r], rest, s->need + base, base, &J, e)
                     : scan_entry(def, filter, rest, s->need + base, base, refs[r], nsegs[r], pool,
                                  threads, &J, e);
            if (s->stats && r < 8) {
                s->stats->ent_rows[r] = J.n;
                s->stats->t_ent[r] = qr_qctx_now_ns() - t0;
                s->stats->nent = n;
            }
            continue;
        }
        rel T = {ctx, 0, nslots, NULL, J.types, &text, slot_text};
        T.col = qr_qmalloc(ctx, sizeof *T.col * nslots);
        rc = T.col ? 0 : qr_qctx_nomem(ctx, e);
        if (rc == 0) {
            memset(T.col, 0, sizeof *T.col * nslots);
            rc = derived && derived[r]
                     ? import_entry(def, derived[r], rest, s->need + base, base, &T, e)
                     : scan_entry(def, filter, rest, s->need + base, base, refs[r], nsegs[r],
                                  pool, threads, &T, e);
        }
        int64_t t1 = qr_qctx_now_ns();
        if (rc == 0)
            rc = join_step(s, r, &J, &T, pool, threads, e);
        if (rc == 0 && s->rng[r].on_rest) /* an inner join's other ON terms */
            rc = rel_filter(s->rng[r].on_rest, 0, nslots, &J, e);
        if (s->stats && r < 8) {
            s->stats->ent_rows[r] = T.n;
            s->stats->t_ent[r] = t1 - t0;
            s->stats->join_rows[r] = J.n;
            s->stats->t_join[r] = qr_qctx_now_ns() - t1;
        }
        rel_free(&T);
    }
    int64_t tf = qr_qctx_now_ns();
    if (rc == 0)
        rc = finish(s, &J, nslots, s->scope.n ? s->rest : NULL, out, e);
    if (s->stats) {
        s->stats->t_post = qr_qctx_now_ns() - tf;
        s->stats->out = out->nrows;
    }
    rel_free(&J);
    qr_qfree(ctx, J.types);
    qr_arena_free(&text);
    for (int i = 0; i < GATHER_SLOTS; i++)
        qr_arena_free(&slot_text[i]);
    return rc;
}
