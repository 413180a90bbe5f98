/* partcount.c - counts of a filter's matches per time bucket (row ranges
 * of the sorted segments) and per column value (partcount.h). */
#include "exec/partcount.h"

#include <stdatomic.h>
#include <string.h>

#include "match/select.h"
#include "util/popcount.h"

typedef struct tbjob tbjob;
struct tbjob {
    qr_par_search *ps;
    int all;
    /* what a segment's partitions are: its counts into cnt, matches in bits
     * (NULL: every row that is not deleted) */
    int (*part)(tbjob *j, int t, uint32_t si, const uint64_t *bits, uint64_t *cnt, qr_err *e);
    int sort_col; /* time buckets */
    const int64_t *start;
    const qr_query *const *eq; /* values */
    uint32_t nb;               /* partitions: buckets, or values */
    uint64_t *cnt;             /* threads x (nb + 1) */
    atomic_uint next;
    atomic_int failed;
    int rc[QR_MAX_SEARCH_THREADS];
    qr_err err[QR_MAX_SEARCH_THREADS];
};

/* Bits set in w over rows [lo, hi). */
static uint64_t bits_in(const uint64_t *w, uint32_t lo, uint32_t hi)
{
    if (lo >= hi)
        return 0;
    uint32_t a = lo >> 6, b = (hi - 1) >> 6;
    uint64_t mlo = ~0ull << (lo & 63), mhi = ~0ull >> (63 - ((hi - 1) & 63));
    if (a == b)
        return (uint64_t)__builtin_popcountll(w[a] & mlo & mhi);
    return (uint64_t)__builtin_popcountll(w[a] & mlo) + qr_popcount_words(w + a + 1, b - a - 1) +
           (uint64_t)__builtin_popcountll(w[b] & mhi);
}

/* Rows of [lo, hi) that count: matches (bits) or, without, the rows that
 * are not deleted. */
static uint64_t count_in(const qr_segment *seg, const uint64_t *bits, uint32_t lo, uint32_t hi)
{
    if (bits)
        return bits_in(bits, lo, hi);
    return (hi > lo ? hi - lo : 0) - (seg->deleted ? bits_in(seg->deleted, lo, hi) : 0);
}

/* The sort column of one segment, read for lower bounds: the data block
 * that holds a bound is found in the block directory (blocks ascend, and
 * each knows its min and max), then decoded (once, while bounds stay in
 * it) and searched; so bounds in one block cost one decode. */
typedef struct sortcol {
    qr_colreader *r;
    const qr_colmeta *cm;
    int64_t cur; /* the data block decoded now, -1 none */
    const int64_t *v;
    const uint8_t *nul;
    uint32_t first, n; /* its first row and rows */
} sortcol;

/* The first row at or past `from` (past the NULLs) whose time is >= t, or
 * rows. */
static int lower_bound(sortcol *c, uint32_t from, uint32_t rows, int64_t t, uint32_t *at,
                       qr_err *e)
{
    const qr_blockref *b = c->cm->blocks + c->cm->first_data;
    uint32_t l = 0, h = c->cm->ndata;
    while (l < h) { /* the first block past `from` whose max is >= t */
        uint32_t m = l + (h - l) / 2;
        if (b[m].first_row + b[m].rows <= from || (b[m].flags & QR_BLKF_ALL_NULL) ||
            b[m].max < t)
            l = m + 1;
        else
            h = m;
    }
    if (l == c->cm->ndata) {
        *at = rows;
        return 0;
    }
    if (c->cur != (int64_t)l) {
        if (qr_colr_int_block(c->r, l, &c->v, &c->nul, &c->first, &c->n, e) != 0)
            return -1;
        c->cur = l;
    }
    uint32_t lo = from > c->first ? from - c->first : 0, hi = c->n;
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        if (c->nul[m] || c->v[m] < t) /* (NULLs only lead a segment) */
            lo = m + 1;
        else
            hi = m;
    }
    *at = c->first + lo;
    return 0;
}

/* Buckets of one segment: cnt[i] for bucket i, cnt[nb] the NULL times. */
static int bucket_part(tbjob *j, int t, uint32_t si, const uint64_t *bits, uint64_t *cnt,
                       qr_err *e)
{
    (void)t;
    qr_segment *seg = j->ps->ss[si].seg;
    uint32_t rows = (uint32_t)seg->rows;
    int sc = qr_seg_col(seg, j->ps->def->cols[j->sort_col].name);
    if (sc < 0) { /* the segment predates the column: every time is NULL */
        cnt[j->nb] += count_in(seg, bits, 0, rows);
        return 0;
    }
    uint32_t first = (uint32_t)seg->cols[sc].null_count; /* NULLs sort first */
    if (first > rows)
        first = rows;
    cnt[j->nb] += count_in(seg, bits, 0, first);
    if (first == rows)
        return 0;
    sortcol c = {qr_colr_open(seg, sc, e), NULL, -1, NULL, NULL, 0, 0};
    if (!c.r)
        return -1;
    c.cm = qr_colr_meta(c.r);
    int rc = 0;
    uint32_t prev = first;
    for (uint32_t i = 0; i <= j->nb && rc == 0; i++) {
        uint32_t at;
        if (j->start[i] <= seg->min_ts)
            at = first;
        else if (j->start[i] > seg->max_ts)
            at = rows;
        else
            rc = lower_bound(&c, prev, rows, j->start[i], &at, e);
        if (rc == 0 && i > 0)
            cnt[i - 1] += count_in(seg, bits, prev, at);
        prev = at;
    }
    qr_colr_close(c.r);
    return rc;
}

/* Values of one segment: cnt[i] for eq[i], cnt[nb] the filter's matches. */
static int value_part(tbjob *j, int t, uint32_t si, const uint64_t *bits, uint64_t *cnt,
                      qr_err *e)
{
    qr_par_search *ps = j->ps;
    qr_segment *seg = ps->ss[si].seg;
    uint32_t rows = (uint32_t)seg->rows;
    size_t nw = ((size_t)rows + 63) / 64;
    cnt[j->nb] += count_in(seg, bits, 0, rows);
    for (uint32_t i = 0; i < j->nb; i++) {
        qr_it *it = qr_segsearch_compile(&ps->ss[si], j->eq[i], &ps->run[t], e);
        if (!it)
            return -1;
        const unsigned char *vb = qr_it_bitmap_bits(it); /* (any alignment) */
        uint64_t n = 0;
        if (!bits) { /* every row: the value's own count (deleted rows excluded) */
            n = qr_it_count(it);
        } else if (vb) {
            for (size_t w = 0; w < nw; w++) {
                uint64_t v;
                memcpy(&v, vb + 8 * w, 8);
                n += (uint64_t)__builtin_popcountll(v & bits[w]);
            }
        } else {
            for (uint32_t d = qr_it_next(it); d != QR_NO_DOC && d < rows; d = qr_it_next(it))
                n += bits[d >> 6] >> (d & 63) & 1;
        }
        if (qr_it_failed(it))
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                           seg->path);
        cnt[i] += n;
    }
    return 0;
}

static int one_segment(tbjob *j, int t, uint32_t si, qr_err *e)
{
    qr_par_search *ps = j->ps;
    qr_segment *seg = ps->ss[si].seg;
    uint32_t rows = (uint32_t)seg->rows;
    qr_arena *a = &ps->run[t];
    qr_arena_reset(a);
    ps->ss[si].run = &ps->qrun[t];
    uint64_t *bits = NULL;
    if (!j->all) { /* the filter's matches as a bitmap */
        qr_it *it = qr_segsearch_compile(&ps->ss[si], ps->q[t], a, e);
        bits = it ? qr_arena_alloc(a, 8 * (((size_t)rows + 63) / 64 + 1)) : NULL;
        if (!it)
            return -1;
        if (!bits)
            return qr_qctx_nomem(ps->ctx, e);
        qr_itsel sel;
        qr_itsel_init(&sel, it, rows);
        if (qr_it_select_bits(&sel, 0, rows, bits, e) < 0)
            return -1;
    }
    return j->part(j, t, si, bits, j->cnt + (size_t)t * (j->nb + 1), e);
}

static void worker(void *arg, int slot)
{
    tbjob *j = arg;
    for (;;) {
        if (atomic_load(&j->failed))
            return;
        uint32_t si = atomic_fetch_add(&j->next, 1);
        if (si >= j->ps->nsegs)
            return;
        if (qr_par_check(j->ps, &j->err[slot]) != 0 ||
            one_segment(j, slot, si, &j->err[slot]) != 0) {
            j->rc[slot] = -1;
            atomic_store(&j->failed, 1);
            return;
        }
    }
}

/* Run j over every segment; its counts summed into cnt[0..nb]. */
static int run_job(tbjob *j, uint64_t *cnt, qr_err *e)
{
    qr_par_search *ps = j->ps;
    int nt = ps->threads < 1 ? 1 : ps->threads;
    uint64_t *c = qr_qmalloc(ps->ctx, sizeof *c * (size_t)nt * (j->nb + 1));
    if (!c)
        return qr_qctx_nomem(ps->ctx, e);
    memset(c, 0, sizeof *c * (size_t)nt * (j->nb + 1));
    j->cnt = c;
    atomic_init(&j->next, 0);
    atomic_init(&j->failed, 0);
    qr_pool_run(ps->pool, nt, worker, j);
    int rc = 0;
    for (int t = 0; t < nt && rc == 0; t++)
        if (j->rc[t]) {
            *e = j->err[t];
            rc = -1;
        }
    for (uint32_t i = 0; rc == 0 && i <= j->nb; i++) {
        cnt[i] = 0;
        for (int t = 0; t < nt; t++)
            cnt[i] += c[(size_t)t * (j->nb + 1) + i];
    }
    qr_qfree(ps->ctx, c);
    return rc;
}

/* A job of kind part over nb partitions (NULL with e set). */
static tbjob *new_job(qr_par_search *ps, int all, uint32_t nb,
                      int (*part)(tbjob *, int, uint32_t, const uint64_t *, uint64_t *, qr_err *),
                      qr_err *e)
{
    tbjob *j = qr_qmalloc(ps->ctx, sizeof *j);
    if (!j) {
        qr_qctx_nomem(ps->ctx, e);
        return NULL;
    }
    memset(j, 0, sizeof *j);
    j->ps = ps;
    j->all = all;
    j->part = part;
    j->nb = nb;
    return j;
}

int qr_x_time_buckets(qr_par_search *ps, int sort_col, const int64_t *start, uint32_t nb, int all,
                      uint64_t *cnt, qr_err *e)
{
    tbjob *j = new_job(ps, all, nb, bucket_part, e);
    if (!j)
        return -1;
    j->sort_col = sort_col;
    j->start = start;
    int rc = run_job(j, cnt, e);
    qr_qfree(ps->ctx, j);
    return rc;
}

int qr_x_value_counts(qr_par_search *ps, const qr_query *const *eq, uint32_t nv, int all,
                      uint64_t *cnt, uint64_t *total, qr_err *e)
{
    uint64_t *c = qr_qmalloc(ps->ctx, sizeof *c * (nv + 1));
    tbjob *j = c ? new_job(ps, all, nv, value_part, e) : NULL;
    int rc = j ? 0 : c ? -1 : qr_qctx_nomem(ps->ctx, e);
    if (rc == 0) {
        j->eq = eq;
        rc = run_job(j, c, e);
    }
    for (uint32_t i = 0; rc == 0 && i < nv; i++)
        cnt[i] = c[i];
    if (rc == 0)
        *total = c[nv];
    qr_qfree(ps->ctx, c);
    qr_qfree(ps->ctx, j);
    return rc;
}
