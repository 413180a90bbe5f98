/* result.c - the result set: columns, rows of cells, slicing, the stable
 * multi-key sort (merge sort over row indexes) and its first k rows
 * (ORDER BY ... LIMIT: a bounded heap, then the k sorted). */
#include "exec/result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/schema.h"

void qr_result_init(qr_result *r, qr_qctx *ctx)
{
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    qr_arena_init(&r->a, 64 << 10, 0);
    qr_arena_set_ctx(&r->a, ctx);
}

void qr_result_free(qr_result *r)
{
    qr_qfree(r->ctx, r->cells);
    qr_arena_free(&r->a);
    memset(r, 0, sizeof *r);
}

void qr_result_clear_rows(qr_result *r)
{
    r->nrows = 0;
    qr_arena_reset(&r->a);
}

int qr_result_add_col(qr_result *r, const char *name, int kind, int type, int tsfmt, qr_err *e)
{
    if (r->ncols == QR_RESULT_MAX_COLS)
        return qr_errf(e, QR_E_TOO_LONG, "a result has at most %d columns", QR_RESULT_MAX_COLS);
    qr_rcol *c = &r->cols[r->ncols++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->kind = (uint8_t)kind;
    c->type = (uint8_t)type;
    c->tsfmt = (uint8_t)tsfmt;
    c->pgoid = 0;
    return 0;
}

qr_cell *qr_result_add_row(qr_result *r, qr_err *e)
{
    if (r->nrows == r->cap) {
        uint64_t cap = r->cap ? r->cap * 2 : 64;
        qr_cell *c = qr_qrealloc(r->ctx, r->cells, sizeof *c * cap * (r->ncols ? r->ncols : 1));
        if (!c) {
            qr_qctx_nomem(r->ctx, e);
            return NULL;
        }
        r->cells = c;
        r->cap = cap;
    }
    qr_cell *row = qr_result_row(r, r->nrows++);
    for (uint32_t i = 0; i < r->ncols; i++)
        row[i] = (qr_cell){.null = 1};
    return row;
}

int qr_result_set_text(qr_result *r, qr_cell *c, const char *p, size_t n, qr_err *e)
{
    char *d = qr_arena_memdup(&r->a, n ? p : "", n ? n : 1);
    if (!d)
        return qr_qctx_nomem(r->ctx, e);
    c->null = 0;
    c->s = d;
    c->n = (uint32_t)n;
    return 0;
}

void qr_result_slice(qr_result *r, uint64_t off, uint64_t lim)
{
    if (off >= r->nrows) {
        r->nrows = 0;
        return;
    }
    uint64_t n = r->nrows - off;
    if (lim < n)
        n = lim;
    if (off)
        memmove(r->cells, qr_result_row(r, off), sizeof *r->cells * n * r->ncols);
    r->nrows = n;
}

int qr_cell_cmp(const qr_result *r, uint32_t col, const qr_cell *a, const qr_cell *b)
{
    if (a->null || b->null)
        return a->null - b->null;
    switch (r->cols[col].kind) {
    case QR_RK_INT:
        if (r->cols[col].type == QT_UINT64) {
            uint64_t x = qr_num_to_u64(a->i), y = qr_num_to_u64(b->i);
            return x < y ? -1 : x > y;
        }
        return a->i < b->i ? -1 : a->i > b->i;
    case QR_RK_FLOAT:
        return a->f < b->f ? -1 : a->f > b->f;
    default: {
        size_t n = a->n < b->n ? a->n : b->n;
        int c = memcmp(a->s, b->s, n);
        return c ? c : (a->n > b->n) - (a->n < b->n);
    }
    }
}

typedef struct sortctx {
    const qr_result *r;
    const uint32_t *keys;
    const uint8_t *desc;
    uint32_t nkeys;
    qr_err *e;
    int stopped; /* the query's cancel or deadline seen: unwind */
    int (*tie)(void *arg, uint64_t x, uint64_t y); /* rows equal on the keys; may be NULL */
    void *tie_arg;
} sortctx;

/* Merges of at least this many rows look at the query's stop conditions
 * (a sort of millions of groups runs long after the scan's last check). */
#define SORT_CHECK_AT 4096u

static int row_cmp(const sortctx *s, uint64_t x, uint64_t y)
{
    const qr_cell *a = qr_result_row(s->r, x), *b = qr_result_row(s->r, y);
    for (uint32_t k = 0; k < s->nkeys; k++) {
        uint32_t c = s->keys[k];
        int d = qr_cell_cmp(s->r, c, &a[c], &b[c]);
        if (d) {
            int neg = s->desc[k] & QR_SORT_DESC;
            if (a[c].null != b[c].null && (s->desc[k] & QR_SORT_NULLS_FLIP))
                neg = !neg;
            return neg ? -d : d;
        }
    }
    return s->tie ? s->tie(s->tie_arg, x, y) : 0;
}

static void merge_sort(sortctx *s, uint64_t *v, uint64_t *tmp, uint64_t n)
{
    if (n < 2 || s->stopped)
        return;
    uint64_t h = n / 2;
    merge_sort(s, v, tmp, h);
    merge_sort(s, v + h, tmp, n - h);
    if (n >= SORT_CHECK_AT && (s->stopped || qr_qctx_check(s->r->ctx, s->e) != 0)) {
        s->stopped = 1;
        return;
    }
    uint64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = row_cmp(s, v[j], v[i]) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, sizeof *v * n);
}

/* Sort row positions ix[0..n) stably (ix has room for 2n: the merge's
 * scratch), then make those rows, in that order, r's rows: copied into out
 * (room for cap rows), which r takes over. Frees ix, and out when a cancel
 * stops the sort (-1, e set). */
static int sort_rows(qr_result *r, sortctx *s, uint64_t *ix, uint64_t n, qr_cell *out,
                     uint64_t cap)
{
    merge_sort(s, ix, ix + n, n);
    if (s->stopped) {
        qr_qfree(r->ctx, ix);
        qr_qfree(r->ctx, out);
        return -1;
    }
    for (uint64_t i = 0; i < n; i++)
        memcpy(out + i * r->ncols, qr_result_row(r, ix[i]), sizeof *out * r->ncols);
    qr_qfree(r->ctx, r->cells);
    r->cells = out;
    r->cap = cap;
    r->nrows = n;
    qr_qfree(r->ctx, ix);
    return 0;
}

int qr_result_sort(qr_result *r, const uint32_t *keys, const uint8_t *desc, uint32_t nkeys,
                   qr_err *e)
{
    if (r->nrows < 2 || nkeys == 0)
        return 0;
    uint64_t n = r->nrows;
    uint64_t *ix = qr_qmalloc(r->ctx, sizeof *ix * n * 2);
    qr_cell *out = qr_qmalloc(r->ctx, sizeof *out * n * r->ncols);
    if (!ix || !out) {
        qr_qfree(r->ctx, ix);
        qr_qfree(r->ctx, out);
        return qr_qctx_nomem(r->ctx, e);
    }
    for (uint64_t i = 0; i < n; i++)
        ix[i] = i;
    sortctx s = {r, keys, desc, nkeys, e, 0, NULL, NULL};
    return sort_rows(r, &s, ix, n, out, n);
}

/* x before y in the stable order: by the keys, then by position. */
static int row_before(sortctx *s, uint64_t x, uint64_t y)
{
    int c = row_cmp(s, x, y);
    return c ? c < 0 : x < y;
}

/* Max-heap of row positions, the last in the order on top. */
static void top_sift(sortctx *s, uint64_t *h, uint64_t n, uint64_t i)
{
    for (;;) {
        uint64_t l = 2 * i + 1, m = i;
        if (l < n && row_before(s, h[m], h[l]))
            m = l;
        if (l + 1 < n && row_before(s, h[m], h[l + 1]))
            m = l + 1;
        if (m == i)
            return;
        uint64_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static int cmp_pos(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int qr_result_sort_top(qr_result *r, const uint32_t *keys, const uint8_t *desc, uint32_t nkeys,
                       uint64_t k, qr_err *e)
{
    if (nkeys == 0 || k >= r->nrows / 8 || r->nrows < 2)
        return qr_result_sort(r, keys, desc, nkeys, e);
    return qr_result_sort_top_tie(r, keys, desc, nkeys, k, NULL, NULL, e);
}

int qr_result_sort_top_tie(qr_result *r, const uint32_t *keys, const uint8_t *desc, uint32_t nkeys,
                           uint64_t k, int (*tie)(void *arg, uint64_t x, uint64_t y),
                           void *tie_arg, qr_err *e)
{
    uint64_t n = r->nrows;
    k = k < n ? k : n;
    sortctx s = {r, keys, desc, nkeys, e, 0, tie, tie_arg};
    uint64_t *h = qr_qmalloc(r->ctx, sizeof *h * (k ? 2 * k : 1));
    qr_cell *out = qr_qmalloc(r->ctx, sizeof *out * (k ? k : 1) * r->ncols);
    if (!h || !out) {
        qr_qfree(r->ctx, h);
        qr_qfree(r->ctx, out);
        return qr_qctx_nomem(r->ctx, e);
    }
    uint64_t hn = 0;
    for (uint64_t i = 0; i < n && k; i++) {
        if ((i & 0xffff) == 0xffff && qr_qctx_check(r->ctx, e) != 0) {
            qr_qfree(r->ctx, h);
            qr_qfree(r->ctx, out);
            return -1;
        }
        if (hn < k) { /* sift up */
            uint64_t j = hn++;
            h[j] = i;
            while (j && row_before(&s, h[(j - 1) / 2], h[j])) {
                uint64_t t = h[j];
                h[j] = h[(j - 1) / 2];
                h[(j - 1) / 2] = t;
                j = (j - 1) / 2;
            }
        } else if (row_before(&s, i, h[0])) {
            h[0] = i;
            top_sift(&s, h, hn, 0);
        }
    }
    /* the kept rows in position order, then stably by the keys */
    qsort(h, hn, sizeof *h, cmp_pos);
    return sort_rows(r, &s, h, hn, out, k ? k : 1);
}

int qr_result_distinct(qr_result *r, qr_err *e)
{
    uint32_t keys[QR_RESULT_MAX_COLS];
    uint8_t desc[QR_RESULT_MAX_COLS] = {0};
    for (uint32_t c = 0; c < r->ncols; c++)
        keys[c] = c;
    if (qr_result_sort(r, keys, desc, r->ncols, e) != 0)
        return -1;
    uint64_t w = 0;
    for (uint64_t i = 0; i < r->nrows; i++) {
        int dup = w > 0;
        for (uint32_t c = 0; dup && c < r->ncols; c++)
            dup = qr_cell_cmp(r, c, &qr_result_row(r, w - 1)[c], &qr_result_row(r, i)[c]) == 0;
        if (dup)
            continue;
        if (w != i)
            memcpy(qr_result_row(r, w), qr_result_row(r, i), sizeof *r->cells * r->ncols);
        w++;
    }
    r->nrows = w;
    return 0;
}
