/* aggregate.c - GROUP BY: per-segment hash tables on codes / integers /
 * interned bytes, merged by value into per-worker tables, then into one.
 * See aggregate.h for the contract. */
#include "exec/aggregate.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "format/colvec.h"
#include "format/schema.h"
#include "match/select.h"
#include "util/buf.h"
#include "util/hash.h"

#define WINDOW 65536u

typedef struct aggst {
    int64_t cnt; /* non-NULL values seen */
    __int128 sum;
    int64_t min, max;
} aggst;

typedef struct kval {
    uint8_t null;
    int64_t i;     /* integer value, dictionary code or interned id */
    const char *s; /* bytes (global tables and interners) */
    uint32_t n;
} kval;

/* One hash table of groups. bytes[k]: key k compares as bytes (copied into
 * the table's arena), else as (null, i). */
typedef struct gtab {
    qr_qctx *ctx;
    uint32_t nkeys, naggs;
    uint8_t bytes[QR_GB_MAX_KEYS];
    uint64_t n, cap;
    uint64_t *hash;
    kval *keys;
    uint64_t *count;
    aggst *st;
    uint32_t *slots; /* entry + 1, 0 empty */
    uint64_t mask;
    qr_arena a;
} gtab;

static void gtab_init(gtab *t, qr_qctx *ctx, uint32_t nkeys, uint32_t naggs)
{
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    t->nkeys = nkeys;
    t->naggs = naggs;
    qr_arena_init(&t->a, 64 << 10, 0);
    qr_arena_set_ctx(&t->a, ctx);
}

static void gtab_free(gtab *t)
{
    qr_qfree(t->ctx, t->hash);
    qr_qfree(t->ctx, t->keys);
    qr_qfree(t->ctx, t->count);
    qr_qfree(t->ctx, t->st);
    qr_qfree(t->ctx, t->slots);
    qr_arena_free(&t->a);
    t->n = t->cap = 0;
    t->hash = NULL;
    t->keys = NULL;
    t->count = NULL;
    t->st = NULL;
    t->slots = NULL;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t key_hash(const gtab *t, const kval *k)
{
    uint64_t h = 0x12345;
    for (uint32_t i = 0; i < t->nkeys; i++) {
        if (k[i].null)
            h = mix(h, 0xdeadbeef);
        else if (t->bytes[i])
            h = mix(h, qr_hash64(k[i].s, k[i].n));
        else
            h = mix(h, (uint64_t)k[i].i);
    }
    return h;
}

static int key_eq(const gtab *t, const kval *a, const kval *b)
{
    for (uint32_t i = 0; i < t->nkeys; i++) {
        if (a[i].null != b[i].null)
            return 0;
        if (a[i].null)
            continue;
        if (t->bytes[i] ? a[i].n != b[i].n || memcmp(a[i].s, b[i].s, a[i].n) : a[i].i != b[i].i)
            return 0;
    }
    return 1;
}

static int gtab_grow(gtab *t)
{
    uint64_t cap = t->cap ? t->cap * 2 : 64;
    uint32_t nk = t->nkeys ? t->nkeys : 1, na = t->naggs ? t->naggs : 1;
    uint64_t *h = qr_qrealloc(t->ctx, t->hash, sizeof *h * cap);
    if (h)
        t->hash = h;
    kval *k = h ? qr_qrealloc(t->ctx, t->keys, sizeof *k * cap * nk) : NULL;
    if (k)
        t->keys = k;
    uint64_t *c = k ? qr_qrealloc(t->ctx, t->count, sizeof *c * cap) : NULL;
    if (c)
        t->count = c;
    aggst *s = c ? qr_qrealloc(t->ctx, t->st, sizeof *s * cap * na) : NULL;
    if (s)
        t->st = s;
    uint32_t *sl = s ? qr_qmalloc(t->ctx, sizeof *sl * cap * 2) : NULL;
    if (!sl)
        return -1;
    memset(sl, 0, sizeof *sl * cap * 2);
    t->mask = cap * 2 - 1;
    for (uint64_t i = 0; i < t->n; i++) {
        uint64_t j = t->hash[i] & t->mask;
        while (sl[j])
            j = (j + 1) & t->mask;
        sl[j] = (uint32_t)(i + 1);
    }
    qr_qfree(t->ctx, t->slots);
    t->slots = sl;
    t->cap = cap;
    return 0;
}

/* The entry of key k (inserted when new: bytes copied when copy_bytes).
 * -1 when out of memory. */
static int64_t gtab_find(gtab *t, const kval *k, int copy_bytes)
{
    uint64_t h = key_hash(t, k);
    if (t->cap) {
        for (uint64_t j = h & t->mask; t->slots[j]; j = (j + 1) & t->mask) {
            uint64_t i = t->slots[j] - 1;
            if (t->hash[i] == h && key_eq(t, t->keys + i * t->nkeys, k))
                return (int64_t)i;
        }
    }
    if (t->n == t->cap && gtab_grow(t) != 0)
        return -1;
    uint64_t i = t->n++;
    t->hash[i] = h;
    for (uint32_t x = 0; x < t->nkeys; x++) {
        kval v = k[x];
        if (copy_bytes && t->bytes[x] && !v.null) {
            char *d = qr_arena_memdup(&t->a, v.n ? v.s : "", v.n ? v.n : 1);
            if (!d)
                return -1;
            v.s = d;
        }
        t->keys[i * t->nkeys + x] = v;
    }
    t->count[i] = 0;
    for (uint32_t a = 0; a < t->naggs; a++)
        t->st[i * t->naggs + a] = (aggst){0, 0, INT64_MAX, INT64_MIN};
    uint64_t j = h & t->mask;
    while (t->slots[j])
        j = (j + 1) & t->mask;
    t->slots[j] = (uint32_t)(i + 1);
    return (int64_t)i;
}

static void st_merge(aggst *d, const aggst *s)
{
    d->cnt += s->cnt;
    d->sum += s->sum;
    if (s->min < d->min)
        d->min = s->min;
    if (s->max > d->max)
        d->max = s->max;
}

int qr_agg_accepts(int fn, int t)
{
    switch (fn) {
    case QR_AGG_COUNT_STAR:
    case QR_AGG_COUNT:
        return 1;
    case QR_AGG_MIN:
    case QR_AGG_MAX:
        return qr_type_is_int(t);
    default:
        return qr_type_is_int(t) && t != QT_TIMESTAMP && t != QT_BOOL && t != QT_FLOAT64;
    }
}

/* ---- one segment ---- */
typedef struct job {
    qr_par_search *ps;
    const qr_groupby *g;
    atomic_uint next;
    atomic_int failed;
    gtab *wt; /* per worker */
    qr_err err[QR_MAX_SEARCH_THREADS];
    int rc[QR_MAX_SEARCH_THREADS];
} job;

typedef struct segcols {
    int col[QR_GB_MAX_KEYS + QR_GB_MAX_AGGS]; /* segment column, -1 absent */
    qr_colreader *rd[QR_GB_MAX_KEYS + QR_GB_MAX_AGGS];
    qr_vec vec[QR_GB_MAX_KEYS + QR_GB_MAX_AGGS];
    uint32_t n; /* keys first, then one per aggregate */
} segcols;

static int vnull(const qr_vec *v, uint32_t j)
{
    switch (v->kind) {
    case QR_VEC_INT:
        return v->isnull[j];
    case QR_VEC_CODES:
        return v->codes[j] == 0;
    default:
        return v->vals[j].p == NULL;
    }
}

/* A key value of the segment: (null, part); bytes interned in `in`. */
static int seg_key(const qr_vec *v, uint32_t j, gtab *in, kval *out)
{
    out->s = NULL;
    out->n = 0;
    out->null = (uint8_t)(v ? vnull(v, j) : 1);
    out->i = 0;
    if (out->null)
        return 0;
    if (v->kind == QR_VEC_INT)
        out->i = v->ints[j];
    else if (v->kind == QR_VEC_CODES)
        out->i = v->codes[j];
    else {
        kval b = {0, 0, v->vals[j].p, (uint32_t)v->vals[j].n};
        int64_t id = gtab_find(in, &b, 1);
        if (id < 0)
            return -1;
        out->i = id;
    }
    return 0;
}

#define DIRECT_MAX 65536u /* code combinations kept as an array */
#define HIST4_MAX  4096u  /* fewer: four histograms, summed (run_segment) */

/* One window of the direct path: each row's group is the sum of its keys'
 * codes times their strides. */
static void direct_window(const qr_groupby *g, const segcols *sc, uint32_t n,
                          const uint64_t *stride, uint64_t *dcount, uint64_t *h4, uint64_t dslots,
                          aggst *dst)
{
    uint32_t act[QR_GB_MAX_AGGS], na = 0; /* the aggregates that read a column */
    for (uint32_t a = 0; a < g->naggs; a++)
        if (sc->rd[g->nkeys + a])
            act[na++] = a;
    if (na == 0 && g->nkeys <= 2) { /* the common shapes: one or two keys, counts */
        const uint32_t *c0 = sc->vec[0].codes;
        const uint32_t *c1 = g->nkeys == 2 ? sc->vec[1].codes : c0;
        uint64_t s1 = g->nkeys == 2 ? stride[1] : 0;
        uint32_t j = 0;
        if (h4) { /* four histograms: see run_segment */
            uint64_t *h1 = h4 + dslots, *h2 = h1 + dslots, *h3 = h2 + dslots;
            for (; j + 4 <= n; j += 4) {
                h4[c0[j] + c1[j] * s1]++;
                h1[c0[j + 1] + c1[j + 1] * s1]++;
                h2[c0[j + 2] + c1[j + 2] * s1]++;
                h3[c0[j + 3] + c1[j + 3] * s1]++;
            }
        }
        for (; j < n; j++)
            dcount[c0[j] + c1[j] * s1]++;
        return;
    }
    for (uint32_t j = 0; j < n; j++) {
        uint64_t idx = 0;
        for (uint32_t k = 0; k < g->nkeys; k++)
            idx += sc->vec[k].codes[j] * stride[k];
        dcount[idx]++;
        for (uint32_t q = 0; q < na; q++) {
            uint32_t a = act[q], c = g->nkeys + a;
            if (vnull(&sc->vec[c], j))
                continue;
            aggst *s = &dst[idx * g->naggs + a];
            s->cnt++;
            if (sc->vec[c].kind != QR_VEC_INT)
                continue;
            int64_t v = sc->vec[c].ints[j];
            if (v < s->min)
                s->min = v;
            if (v > s->max)
                s->max = v;
            s->sum += sc->vec[c].type == QT_UINT64 ? (__int128)qr_num_to_u64(v) : (__int128)v;
        }
    }
}

static int run_segment(job *jb, int t, uint32_t si, qr_err *e)
{
    qr_par_search *ps = jb->ps;
    const qr_groupby *g = jb->g;
    qr_segment *seg = ps->ss[si].seg;
    qr_arena *ia = &ps->run[t];
    qr_arena_reset(ia);
    ps->ss[si].run = &ps->qrun[t];
    qr_it *it = qr_segsearch_compile(&ps->ss[si], ps->q[t], ia, e);
    if (!it)
        return -1;
    segcols sc;
    memset(&sc, 0, sizeof sc);
    sc.n = g->nkeys + g->naggs;
    gtab local, intern[QR_GB_MAX_KEYS];
    gtab_init(&local, ps->ctx, g->nkeys, g->naggs);
    for (uint32_t k = 0; k < g->nkeys; k++) {
        gtab_init(&intern[k], ps->ctx, 1, 0);
        intern[k].bytes[0] = 1;
    }
    qr_arena va;
    qr_arena_init(&va, 1 << 20, 0);
    qr_arena_set_ctx(&va, ps->ctx);
    uint32_t *rows = qr_qmalloc(ps->ctx, sizeof *rows * WINDOW);
    qr_buf mb;
    qr_buf_init(&mb);
    int rc = rows ? 0 : qr_qctx_nomem(ps->ctx, e);
    for (uint32_t c = 0; c < sc.n && rc == 0; c++) {
        int tc = c < g->nkeys ? g->keys[c] : g->arg[c - g->nkeys];
        sc.col[c] = tc < 0 ? -1 : qr_seg_col(seg, ps->def->cols[tc].name);
        if (sc.col[c] >= 0 && !(sc.rd[c] = qr_colr_open(seg, sc.col[c], e)))
            rc = -1;
    }
    /* Every key dictionary-coded in this segment, and few code combinations:
     * groups are an array indexed by the codes (no hashing per row); they
     * go into `local` by code at the segment's end, as the hashed path's do. */
    uint64_t dslots = 1, stride[QR_GB_MAX_KEYS];
    int direct = g->nkeys > 0;
    for (uint32_t k = 0; k < g->nkeys && direct; k++) {
        uint32_t nd = 0;
        direct = sc.rd[k] && qr_colr_dict(sc.rd[k], &nd) != NULL;
        stride[k] = dslots;
        dslots *= (uint64_t)nd + 1;
        direct &= dslots <= DIRECT_MAX;
    }
    uint64_t *dcount = NULL;
    aggst *dst = NULL;
    if (rc == 0 && direct) {
        dcount = qr_qmalloc(ps->ctx, sizeof *dcount * dslots);
        dst = qr_qmalloc(ps->ctx, sizeof *dst * dslots * (g->naggs ? g->naggs : 1));
        if (!dcount || !dst)
            rc = qr_qctx_nomem(ps->ctx, e);
        for (uint64_t i = 0; rc == 0 && i < dslots; i++) {
            dcount[i] = 0;
            for (uint32_t a = 0; a < g->naggs; a++)
                dst[i * g->naggs + a] = (aggst){0, 0, INT64_MAX, INT64_MIN};
        }
    }
    /* every row, counts only, one or two keys whose code blocks cover the
     * same rows: the blocks counted whole, without selections or gathers */
    int blocks = direct && g->all_rows && g->nkeys <= 2 && !seg->deleted;
    for (uint32_t a = 0; blocks && a < g->naggs; a++)
        blocks = sc.rd[g->nkeys + a] == NULL;
    if (blocks && g->nkeys == 2) {
        const qr_colmeta *m0 = qr_colr_meta(sc.rd[0]), *m1 = qr_colr_meta(sc.rd[1]);
        blocks = m0->ndata == m1->ndata;
        for (uint32_t di = 0; blocks && di < m0->ndata; di++) {
            const qr_blockref *b0 = &m0->blocks[m0->first_data + di];
            const qr_blockref *b1 = &m1->blocks[m1->first_data + di];
            blocks = b0->first_row == b1->first_row && b0->rows == b1->rows;
        }
    }
    /* Few groups: consecutive rows mostly hit the same counter, and each
     * increment then waits for the last one's store; four histograms, one
     * per row of every four, keep four increments in flight (summed at the
     * segment's end). */
    uint64_t *h4 = NULL;
    if (rc == 0 && direct && dslots <= HIST4_MAX) {
        if (!(h4 = qr_qmalloc(ps->ctx, sizeof *h4 * 4 * dslots)))
            rc = qr_qctx_nomem(ps->ctx, e);
        else
            memset(h4, 0, sizeof *h4 * 4 * dslots);
    }
    if (rc == 0 && blocks) {
        for (uint32_t k = 0; k < g->nkeys; k++)
            sc.vec[k].kind = QR_VEC_CODES; /* what the merge by value below reads */
        const qr_colmeta *cm = qr_colr_meta(sc.rd[0]);
        uint64_t s1 = g->nkeys == 2 ? stride[1] : 0;
        for (uint32_t di = 0; di < cm->ndata && rc == 0; di++) {
            const uint64_t *c0, *c1;
            uint32_t first, cnt, f1, n1;
            if (qr_colr_code_block(sc.rd[0], di, &c0, &first, &cnt, e) != 0 ||
                (g->nkeys == 2 && qr_colr_code_block(sc.rd[1], di, &c1, &f1, &n1, e) != 0) ||
                qr_par_check(ps, e) != 0) {
                rc = -1;
                break;
            }
            if (g->nkeys == 1)
                c1 = c0; /* (times s1 = 0) */
            uint32_t j = 0;
            if (h4) {
                uint64_t *h1 = h4 + dslots, *h2 = h1 + dslots, *h3 = h2 + dslots;
                for (; j + 4 <= cnt; j += 4) {
                    h4[c0[j] + c1[j] * s1]++;
                    h1[c0[j + 1] + c1[j + 1] * s1]++;
                    h2[c0[j + 2] + c1[j + 2] * s1]++;
                    h3[c0[j + 3] + c1[j + 3] * s1]++;
                }
            }
            for (; j < cnt; j++)
                dcount[c0[j] + c1[j] * s1]++;
        }
    }
    qr_itsel sel;
    qr_itsel_init(&sel, it, (uint32_t)seg->rows);
    for (uint64_t lo = blocks ? seg->rows : 0; lo < seg->rows && rc == 0; lo += WINDOW) {
        uint32_t hi = (uint32_t)(lo + WINDOW < seg->rows ? lo + WINDOW : seg->rows);
        uint32_t n = 0;
        /* a window has at most WINDOW rows: one call returns all of it */
        if (qr_it_select(&sel, (uint32_t)lo, hi, rows, WINDOW, &n, e) < 0 ||
            qr_par_check(ps, e) != 0) {
            rc = -1;
            break;
        }
        if (n == 0)
            continue;
        qr_arena_reset(&va);
        for (uint32_t c = 0; c < sc.n && rc == 0; c++)
            if (sc.rd[c] && qr_colvec_gather(sc.rd[c], rows, n, &sc.vec[c], &va, e) != 0)
                rc = -1;
        if (rc == 0 && direct) {
            direct_window(g, &sc, n, stride, dcount, h4, dslots, dst);
            continue;
        }
        for (uint32_t j = 0; j < n && rc == 0; j++) {
            kval kv[QR_GB_MAX_KEYS];
            for (uint32_t k = 0; k < g->nkeys && rc == 0; k++)
                if (seg_key(sc.rd[k] ? &sc.vec[k] : NULL, j, &intern[k], &kv[k]) != 0)
                    rc = qr_qctx_nomem(ps->ctx, e);
            int64_t gi = rc == 0 ? gtab_find(&local, kv, 0) : -1;
            if (gi < 0) {
                rc = rc ? rc : qr_qctx_nomem(ps->ctx, e);
                break;
            }
            local.count[gi]++;
            for (uint32_t a = 0; a < g->naggs; a++) {
                uint32_t c = g->nkeys + a;
                if (!sc.rd[c] || vnull(&sc.vec[c], j))
                    continue;
                aggst *s = &local.st[(uint64_t)gi * g->naggs + a];
                s->cnt++;
                if (sc.vec[c].kind != QR_VEC_INT)
                    continue;
                int64_t v = sc.vec[c].ints[j];
                if (v < s->min)
                    s->min = v;
                if (v > s->max)
                    s->max = v;
                s->sum += sc.vec[c].type == QT_UINT64 ? (__int128)qr_num_to_u64(v) : (__int128)v;
            }
        }
    }
    if (rc == 0 && qr_it_failed(it))
        rc = qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                     seg->path);
    for (uint64_t i = 0; h4 && i < dslots; i++) /* the four histograms, summed */
        dcount[i] += h4[i] + h4[dslots + i] + h4[2 * dslots + i] + h4[3 * dslots + i];
    qr_qfree(ps->ctx, h4);
    for (uint64_t i = 0; direct && rc == 0 && i < dslots; i++) { /* the array into local */
        if (!dcount[i])
            continue;
        kval kv[QR_GB_MAX_KEYS];
        for (uint32_t k = 0; k < g->nkeys; k++) {
            uint64_t code = i / stride[k] % (k + 1 < g->nkeys ? stride[k + 1] / stride[k]
                                                               : dslots / stride[k]);
            kv[k] = (kval){code == 0, (int64_t)code, NULL, 0};
        }
        int64_t gi = gtab_find(&local, kv, 0);
        if (gi < 0) {
            rc = qr_qctx_nomem(ps->ctx, e);
            break;
        }
        local.count[gi] += dcount[i];
        for (uint32_t a = 0; a < g->naggs; a++)
            st_merge(&local.st[(uint64_t)gi * g->naggs + a], &dst[i * g->naggs + a]);
    }
    qr_qfree(ps->ctx, dcount);
    qr_qfree(ps->ctx, dst);
    /* merge the segment's groups by value into the worker's table */
    gtab *w = &jb->wt[t];
    for (uint64_t i = 0; i < local.n && rc == 0; i++) {
        kval kv[QR_GB_MAX_KEYS];
        for (uint32_t k = 0; k < g->nkeys && rc == 0; k++) {
            kv[k] = local.keys[i * g->nkeys + k];
            if (kv[k].null || !sc.rd[k])
                continue;
            const qr_vec *v = &sc.vec[k];
            qr_slice s = {NULL, 0};
            if (v->kind == QR_VEC_CODES) {
                uint32_t nd = 0;
                const qr_slice *dict = qr_colr_dict(sc.rd[k], &nd);
                s = dict[kv[k].i - 1];
            } else if (v->kind == QR_VEC_BYTES) {
                const kval *b = &intern[k].keys[kv[k].i];
                s = (qr_slice){b->s, b->n};
            } else {
                continue;
            }
            if (ps->def->cols[g->keys[k]].type == QT_MAP) {
                qr_buf_clear(&mb);
                if (qr_colr_map_json(sc.rd[k], s, &mb, e) != 0) {
                    rc = -1;
                    break;
                }
                s = (qr_slice){(const char *)mb.p, mb.len};
            }
            kv[k].s = s.p;
            kv[k].n = (uint32_t)s.n;
        }
        int64_t gi = rc == 0 ? gtab_find(w, kv, 1) : -1;
        if (gi < 0) {
            rc = rc ? rc : qr_qctx_nomem(ps->ctx, e);
            break;
        }
        w->count[gi] += local.count[i];
        for (uint32_t a = 0; a < g->naggs; a++)
            st_merge(&w->st[(uint64_t)gi * g->naggs + a], &local.st[i * g->naggs + a]);
    }
    qr_buf_free(&mb);
    for (uint32_t c = 0; c < sc.n; c++)
        if (sc.rd[c])
            qr_colr_close(sc.rd[c]);
    qr_qfree(ps->ctx, rows);
    qr_arena_free(&va);
    gtab_free(&local);
    for (uint32_t k = 0; k < g->nkeys; k++)
        gtab_free(&intern[k]);
    qr_arena_reset(ia);
    return rc;
}

/* ---- one segment, with expressions: every value through cells ---- */
static int expr_mode(const qr_groupby *g)
{
    int any = g->where != NULL;
    for (uint32_t k = 0; k < g->nkeys; k++)
        any |= g->kx[k] != NULL;
    for (uint32_t a = 0; a < g->naggs; a++)
        any |= g->ax[a] != NULL;
    return any;
}

/* Column vector v of reader r (column type t) as n stored-domain cells. */
static int vec_cells(qr_colreader *r, const qr_vec *v, int t, uint32_t n, qr_cell *out,
                     qr_arena *a, qr_buf *mb, qr_err *e)
{
    for (uint32_t j = 0; j < n; j++) {
        out[j] = (qr_cell){.null = 1};
        if (v->kind == QR_VEC_INT) {
            if (!v->isnull[j])
                out[j] = (qr_cell){.i = v->ints[j]};
            continue;
        }
        qr_slice sl = qr_vec_bytes(v, j);
        if (!sl.p)
            continue;
        if (t == QT_MAP) {
            qr_buf_clear(mb);
            if (qr_colr_map_json(r, sl, mb, e) != 0)
                return -1;
            char *p = qr_arena_memdup(a, mb->len ? (const char *)mb->p : "", mb->len ? mb->len : 1);
            if (!p)
                return qr_errf(e, QR_E_NOMEM, "out of memory reading map values");
            sl = (qr_slice){p, mb->len};
        }
        out[j] = (qr_cell){.s = sl.p, .n = (uint32_t)sl.n};
    }
    return 0;
}

/* A key cell (natural when from an expression of type xt, else stored) as
 * a kval; FLOAT values by their bits (0.0 and -0.0 one key). */
static kval cell_key(const qr_cell *c, int bytes, int xt)
{
    kval k = {c->null, 0, NULL, 0};
    if (c->null)
        return k;
    if (bytes) {
        k.s = c->s ? c->s : "";
        k.n = c->n;
    } else if (xt == QR_XT_FLOAT) {
        double d = c->f == 0 ? 0.0 : c->f;
        memcpy(&k.i, &d, sizeof d);
    } else {
        k.i = c->i;
    }
    return k;
}

static int key_xtype(const qr_par_search *ps, const qr_groupby *g, uint32_t k)
{
    return g->kx[k] ? g->kx[k]->type : qr_xtype_of_col(ps->def->cols[g->keys[k]].type);
}

/* 1 when x reads input column c. */
static int expr_reads(const qr_expr *x, uint32_t c)
{
    if (x->kind == QR_EX_COL && x->slot == c)
        return 1;
    for (uint32_t k = 0; k < x->nargs; k++)
        if (expr_reads(x->args[k], c))
            return 1;
    return 0;
}

/* An expression of one dictionary-coded column, evaluated once per
 * dictionary value of the segment (val[code], code 0 = NULL): per row it
 * costs a lookup by code, so a LIKE, lower() or CASE over ServiceName runs
 * per distinct value, not per row. */
typedef struct memo {
    const qr_expr *x; /* NULL: not memoised */
    int col;
    qr_cell *val;
} memo;

static int memo_build(memo *m, const qr_expr *x, qr_colreader *const *rd, const uint8_t *types,
                      uint32_t nc, qr_arena *a, qr_err *e)
{
    memset(m, 0, sizeof *m);
    int c = x ? qr_expr_one_col(x) : -1;
    uint32_t nd = 0;
    if (c < 0 || !rd[c] || types[c] == QT_MAP || !qr_colr_dict(rd[c], &nd) || nd > (1u << 20))
        return 0;
    const qr_slice *dict = qr_colr_dict(rd[c], &nd);
    qr_cell *in = qr_arena_alloc(a, sizeof *in * (nd + 1));
    const qr_cell **cols = qr_arena_alloc(a, sizeof *cols * (nc ? nc : 1));
    if (!in || !cols)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    in[0] = (qr_cell){.null = 1};
    for (uint32_t i = 0; i < nd; i++)
        in[i + 1] = (qr_cell){.s = dict[i].p ? dict[i].p : "", .n = (uint32_t)dict[i].n};
    for (uint32_t i = 0; i < nc; i++)
        cols[i] = (int)i == c ? in : NULL;
    qr_xbatch b = {nd + 1, nc, cols, types, NULL};
    const qr_cell *v = qr_expr_eval(x, &b, a, e);
    if (!v)
        return -1;
    m->x = x;
    m->col = c;
    m->val = (qr_cell *)v;
    return 0;
}

static const qr_cell *memo_cells(const memo *m, const uint32_t *codes, uint32_t n, qr_arena *a,
                                 qr_err *e)
{
    qr_cell *o = qr_arena_alloc(a, sizeof *o * (n ? n : 1));
    if (!o) {
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    for (uint32_t j = 0; j < n; j++)
        o[j] = m->val[codes[j]];
    return o;
}

static int run_segment_expr(job *jb, int t, uint32_t si, qr_err *e)
{
    qr_par_search *ps = jb->ps;
    const qr_groupby *g = jb->g;
    qr_segment *seg = ps->ss[si].seg;
    uint32_t nc = ps->def->ncols;
    qr_arena *ia = &ps->run[t];
    qr_arena_reset(ia);
    ps->ss[si].run = &ps->qrun[t];
    qr_it *it = qr_segsearch_compile(&ps->ss[si], ps->q[t], ia, e);
    if (!it)
        return -1;
    gtab local;
    gtab_init(&local, ps->ctx, g->nkeys, g->naggs);
    memcpy(local.bytes, jb->wt[t].bytes, sizeof local.bytes);
    qr_arena va;
    qr_arena_init(&va, 1 << 20, 0);
    qr_arena_set_ctx(&va, ps->ctx);
    uint32_t *rows = qr_qmalloc(ps->ctx, sizeof *rows * WINDOW);
    uint32_t *sel = qr_qmalloc(ps->ctx, sizeof *sel * WINDOW);
    qr_colreader **rd = qr_qmalloc(ps->ctx, sizeof *rd * (nc ? nc : 1));
    qr_cell **cols = qr_qmalloc(ps->ctx, sizeof *cols * (nc ? nc : 1));
    uint8_t *types = qr_qmalloc(ps->ctx, nc ? nc : 1);
    uint8_t *needc = qr_qmalloc(ps->ctx, nc ? nc : 1);
    qr_buf mb;
    qr_buf_init(&mb);
    int rc = rows && sel && rd && cols && types && needc ? 0 : qr_qctx_nomem(ps->ctx, e);
    for (uint32_t c = 0; c < nc && rc == 0; c++) {
        rd[c] = NULL;
        cols[c] = NULL;
        types[c] = ps->def->cols[c].type;
        int need = g->need && g->need[c];
        for (uint32_t k = 0; k < g->nkeys; k++)
            need |= !g->kx[k] && g->keys[k] == (int)c;
        for (uint32_t a = 0; a < g->naggs; a++)
            need |= !g->ax[a] && g->arg[a] == (int)c;
        int sc = need ? qr_seg_col(seg, ps->def->cols[c].name) : -1;
        if (need && sc < 0)
            types[c] = 0xff; /* the segment predates the column: all NULL */
        if (sc >= 0 && !(rd[c] = qr_colr_open(seg, sc, e)))
            rc = -1;
        needc[c] = (uint8_t)need;
    }
    /* memos: the filter, then each key, then each argument; a column read
     * only through memos is gathered as codes, not cells */
    qr_arena ma;
    qr_arena_init(&ma, 64 << 10, 0);
    qr_arena_set_ctx(&ma, ps->ctx);
    memo mw, mk[QR_GB_MAX_KEYS], mg[QR_GB_MAX_AGGS];
    uint8_t *cells_c = qr_qmalloc(ps->ctx, nc ? nc : 1);
    uint32_t **codes_c = qr_qmalloc(ps->ctx, sizeof *codes_c * (nc ? nc : 1));
    if (rc == 0 && (!cells_c || !codes_c))
        rc = qr_qctx_nomem(ps->ctx, e);
    if (rc == 0)
        rc = memo_build(&mw, g->where, rd, types, nc, &ma, e);
    for (uint32_t k = 0; k < g->nkeys && rc == 0; k++)
        rc = memo_build(&mk[k], g->kx[k], rd, types, nc, &ma, e);
    for (uint32_t a = 0; a < g->naggs && rc == 0; a++)
        rc = memo_build(&mg[a], g->ax[a], rd, types, nc, &ma, e);
    for (uint32_t c = 0; rc == 0 && c < nc; c++) { /* cells wanted unless only memos read c */
        int other = 0;
        for (uint32_t k = 0; k < g->nkeys; k++)
            other |= !g->kx[k] && g->keys[k] == (int)c;
        for (uint32_t a = 0; a < g->naggs; a++)
            other |= !g->ax[a] && g->arg[a] == (int)c;
        const qr_expr *xs[1 + QR_GB_MAX_KEYS + QR_GB_MAX_AGGS];
        const memo *ms[1 + QR_GB_MAX_KEYS + QR_GB_MAX_AGGS];
        uint32_t nx = 0;
        xs[nx] = g->where, ms[nx++] = &mw;
        for (uint32_t k = 0; k < g->nkeys; k++)
            xs[nx] = g->kx[k], ms[nx++] = &mk[k];
        for (uint32_t a = 0; a < g->naggs; a++)
            xs[nx] = g->ax[a], ms[nx++] = &mg[a];
        for (uint32_t i = 0; i < nx; i++)
            if (xs[i] && !ms[i]->x && expr_reads(xs[i], c))
                other = 1;
        cells_c[c] = (uint8_t)(needc[c] && other);
        codes_c[c] = NULL;
    }
    /* count(*) of every row that passes a residual on one dictionary-coded
     * column: that column's code blocks counted whole against the memo */
    int counts_only = g->nkeys == 0 && g->index_all && mw.x && !seg->deleted;
    for (uint32_t a = 0; counts_only && a < g->naggs; a++)
        counts_only = g->fn[a] == QR_AGG_COUNT_STAR;
    if (rc == 0 && counts_only) {
        const qr_colmeta *cm = qr_colr_meta(rd[mw.col]);
        uint64_t pass = 0;
        for (uint32_t di = 0; di < cm->ndata && rc == 0; di++) {
            const uint64_t *codes;
            uint32_t first, cnt;
            if (qr_colr_code_block(rd[mw.col], di, &codes, &first, &cnt, e) != 0 ||
                qr_par_check(ps, e) != 0) {
                rc = -1;
                break;
            }
            for (uint32_t j = 0; j < cnt; j++)
                pass += !mw.val[codes[j]].null && mw.val[codes[j]].i;
        }
        if (rc == 0 && pass) { /* one group (no keys) holding the count */
            int64_t gi = gtab_find(&local, NULL, 0);
            if (gi < 0)
                rc = qr_qctx_nomem(ps->ctx, e);
            else
                local.count[gi] += pass;
        }
    }
    qr_itsel is;
    qr_itsel_init(&is, it, (uint32_t)seg->rows);
    for (uint64_t lo = counts_only ? seg->rows : 0; lo < seg->rows && rc == 0; lo += WINDOW) {
        uint32_t hi = (uint32_t)(lo + WINDOW < seg->rows ? lo + WINDOW : seg->rows);
        uint32_t n = 0;
        if (qr_it_select(&is, (uint32_t)lo, hi, rows, WINDOW, &n, e) < 0 ||
            qr_par_check(ps, e) != 0) {
            rc = -1;
            break;
        }
        if (n == 0)
            continue;
        qr_arena_reset(&va);
        const qr_cell **bcols = (const qr_cell **)cols;
        for (uint32_t c = 0; c < nc && rc == 0; c++) {
            if (!needc[c])
                continue;
            qr_cell *cc = qr_arena_alloc(&va, sizeof *cc * n);
            if (!cc) {
                rc = qr_qctx_nomem(ps->ctx, e);
                break;
            }
            if (!rd[c]) {
                for (uint32_t j = 0; j < n; j++)
                    cc[j] = (qr_cell){.null = 1};
            } else {
                qr_vec v;
                if (qr_colvec_gather(rd[c], rows, n, &v, &va, e) != 0)
                    rc = -1;
                else if (v.kind == QR_VEC_CODES)
                    codes_c[c] = v.codes;
                if (rc == 0 && cells_c[c] &&
                    vec_cells(rd[c], &v, ps->def->cols[c].type, n, cc, &va, &mb, e) != 0)
                    rc = -1;
            }
            cols[c] = cc;
        }
        if (rc != 0)
            break;
        qr_xbatch b = {n, nc, bcols, types, NULL};
        uint32_t ns = n;
        if (mw.x) {
            const uint32_t *cd = codes_c[mw.col];
            ns = 0;
            for (uint32_t j = 0; j < n; j++)
                if (!mw.val[cd[j]].null && mw.val[cd[j]].i)
                    sel[ns++] = j;
        } else if (g->where) {
            if (qr_expr_filter(g->where, &b, sel, &ns, &va, e) != 0) {
                rc = -1;
                break;
            }
        } else {
            for (uint32_t j = 0; j < n; j++)
                sel[j] = j;
        }
        const qr_cell *kv[QR_GB_MAX_KEYS], *av[QR_GB_MAX_AGGS];
        for (uint32_t k = 0; k < g->nkeys && rc == 0; k++)
            if (!(kv[k] = mk[k].x   ? memo_cells(&mk[k], codes_c[mk[k].col], n, &va, e)
                          : g->kx[k] ? qr_expr_eval(g->kx[k], &b, &va, e)
                                     : bcols[g->keys[k]]))
                rc = -1;
        for (uint32_t a = 0; a < g->naggs && rc == 0; a++) {
            av[a] = NULL;
            if (mg[a].x && !(av[a] = memo_cells(&mg[a], codes_c[mg[a].col], n, &va, e)))
                rc = -1;
            else if (!mg[a].x && g->ax[a] && !(av[a] = qr_expr_eval(g->ax[a], &b, &va, e)))
                rc = -1;
            else if (!g->ax[a] && g->arg[a] >= 0)
                av[a] = bcols[g->arg[a]];
        }
        for (uint32_t q = 0; q < ns && rc == 0; q++) {
            uint32_t j = sel[q];
            kval kk[QR_GB_MAX_KEYS];
            for (uint32_t k = 0; k < g->nkeys; k++)
                kk[k] = cell_key(&kv[k][j], local.bytes[k], key_xtype(ps, g, k));
            int64_t gi = gtab_find(&local, kk, 1);
            if (gi < 0) {
                rc = qr_qctx_nomem(ps->ctx, e);
                break;
            }
            local.count[gi]++;
            for (uint32_t a = 0; a < g->naggs; a++) {
                if (!av[a] || av[a][j].null)
                    continue;
                aggst *st = &local.st[(uint64_t)gi * g->naggs + a];
                st->cnt++;
                int64_t v = av[a][j].i;
                int type = g->ax[a] ? -1 : ps->def->cols[g->arg[a]].type;
                if (g->ax[a] && g->ax[a]->type == QR_XT_FLOAT)
                    v = qr_num_from_f64(av[a][j].f); /* min/max in the ordered domain */
                else if (type >= 0 && !qr_type_is_int(type))
                    continue; /* count(text) */
                if (v < st->min)
                    st->min = v;
                if (v > st->max)
                    st->max = v;
                st->sum += type == QT_UINT64 ? (__int128)qr_num_to_u64(v) : (__int128)v;
            }
        }
    }
    if (rc == 0 && qr_it_failed(it))
        rc = qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                     seg->path);
    gtab *w = &jb->wt[t];
    for (uint64_t i = 0; i < local.n && rc == 0; i++) {
        int64_t gi = gtab_find(w, local.keys + i * g->nkeys, 1);
        if (gi < 0) {
            rc = qr_qctx_nomem(ps->ctx, e);
            break;
        }
        w->count[gi] += local.count[i];
        for (uint32_t a = 0; a < g->naggs; a++)
            st_merge(&w->st[(uint64_t)gi * g->naggs + a], &local.st[i * g->naggs + a]);
    }
    for (uint32_t c = 0; rd && c < nc; c++)
        if (rd[c])
            qr_colr_close(rd[c]);
    qr_buf_free(&mb);
    qr_qfree(ps->ctx, rows);
    qr_qfree(ps->ctx, sel);
    qr_qfree(ps->ctx, rd);
    qr_qfree(ps->ctx, cols);
    qr_qfree(ps->ctx, types);
    qr_qfree(ps->ctx, needc);
    qr_qfree(ps->ctx, cells_c);
    qr_qfree(ps->ctx, codes_c);
    qr_arena_free(&ma);
    qr_arena_free(&va);
    gtab_free(&local);
    qr_arena_reset(ia);
    return rc;
}

static void worker(void *ctx, int slot)
{
    job *jb = ctx;
    for (;;) {
        if (atomic_load(&jb->failed))
            return;
        uint32_t si = atomic_fetch_add(&jb->next, 1);
        if (si >= jb->ps->nsegs)
            return;
        if (qr_par_check(jb->ps, &jb->err[slot]) != 0 ||
            (expr_mode(jb->g) ? run_segment_expr(jb, slot, si, &jb->err[slot])
                              : run_segment(jb, slot, si, &jb->err[slot])) != 0) {
            jb->rc[slot] = -1;
            atomic_store(&jb->failed, 1);
            return;
        }
    }
}

/* The key columns' byte-compared flags: text, json and map keys. */
static void set_bytes(const qr_par_search *ps, const qr_groupby *g, gtab *t)
{
    for (uint32_t k = 0; k < g->nkeys; k++)
        t->bytes[k] = g->kx[k] ? g->kx[k]->type == QR_XT_TEXT || g->kx[k]->type == QR_XT_JSON ||
                                     g->kx[k]->type == QR_XT_NULL
                               : !qr_type_is_int(ps->def->cols[g->keys[k]].type);
}

static int emit(const qr_par_search *ps, const qr_groupby *g, const gtab *t, qr_result *out,
                qr_err *e)
{
    for (uint64_t i = 0; i < t->n; i++) {
        if ((i & 0xfff) == 0xfff && qr_qctx_check(ps->ctx, e) != 0)
            return -1;
        qr_cell *row = qr_result_add_row(out, e);
        if (!row)
            return -1;
        for (uint32_t k = 0; k < g->nkeys; k++) {
            const kval *v = &t->keys[i * g->nkeys + k];
            qr_cell *c = &row[g->key_out[k]];
            if (v->null)
                continue;
            if (t->bytes[k]) {
                if (qr_result_set_text(out, c, v->s, v->n, e) != 0)
                    return -1;
            } else if (g->kx[k] && g->kx[k]->type == QR_XT_FLOAT) {
                c->null = 0;
                memcpy(&c->f, &v->i, sizeof c->f);
            } else {
                c->null = 0;
                c->i = v->i;
            }
        }
        for (uint32_t a = 0; a < g->naggs; a++) {
            const aggst *s = &t->st[i * g->naggs + a];
            qr_cell *c = &row[g->agg_out[a]];
            switch (g->fn[a]) {
            case QR_AGG_COUNT_STAR:
                *c = (qr_cell){.i = (int64_t)t->count[i]};
                break;
            case QR_AGG_COUNT:
                *c = (qr_cell){.i = s->cnt};
                break;
            case QR_AGG_MIN:
            case QR_AGG_MAX:
                if (s->cnt)
                    *c = (qr_cell){.i = g->fn[a] == QR_AGG_MIN ? s->min : s->max};
                break;
            case QR_AGG_SUM:
                if (!s->cnt)
                    break;
                if (s->sum > INT64_MAX || s->sum < INT64_MIN)
                    return qr_errf(e, QR_E_OUT_OF_RANGE, "sum(%s) is out of range for bigint",
                                   g->ax[a] ? "an expression" : ps->def->cols[g->arg[a]].name);
                *c = (qr_cell){.i = (int64_t)s->sum};
                break;
            case QR_AGG_AVG:
                if (s->cnt)
                    *c = (qr_cell){.f = (double)s->sum / (double)s->cnt};
                break;
            }
        }
    }
    return 0;
}

int qr_x_groupby(qr_par_search *ps, const qr_groupby *g, qr_result *out, qr_err *e)
{
    int nt = ps->threads < 1 ? 1 : ps->threads;
    job jb;
    memset(&jb, 0, sizeof jb);
    jb.ps = ps;
    jb.g = g;
    jb.wt = qr_qmalloc(ps->ctx, sizeof *jb.wt * (size_t)nt);
    if (!jb.wt)
        return qr_qctx_nomem(ps->ctx, e);
    for (int t = 0; t < nt; t++) {
        gtab_init(&jb.wt[t], ps->ctx, g->nkeys, g->naggs);
        set_bytes(ps, g, &jb.wt[t]);
    }
    qr_pool_run(ps->pool, nt, worker, &jb);
    int rc = 0;
    for (int t = 0; t < nt && rc == 0; t++)
        if (jb.rc[t]) {
            *e = jb.err[t];
            rc = -1;
        }
    /* merge the workers' tables into the first */
    gtab *all = &jb.wt[0];
    for (int t = 1; t < nt && rc == 0; t++) {
        const gtab *w = &jb.wt[t];
        for (uint64_t i = 0; i < w->n && rc == 0; i++) {
            if ((i & 0xfff) == 0xfff && (rc = qr_qctx_check(ps->ctx, e)) != 0)
                break;
            int64_t gi = gtab_find(all, w->keys + i * g->nkeys, 1);
            if (gi < 0) {
                rc = qr_qctx_nomem(ps->ctx, e);
                break;
            }
            all->count[gi] += w->count[i];
            for (uint32_t a = 0; a < g->naggs; a++)
                st_merge(&all->st[(uint64_t)gi * g->naggs + a], &w->st[i * g->naggs + a]);
        }
    }
    if (rc == 0 && g->nkeys == 0 && all->n == 0 && gtab_find(all, NULL, 0) < 0)
        rc = qr_qctx_nomem(ps->ctx, e);
    if (rc == 0)
        rc = emit(ps, g, all, out, e);
    for (int t = 0; t < nt; t++)
        gtab_free(&jb.wt[t]);
    qr_qfree(ps->ctx, jb.wt);
    return rc;
}
