/* colvec.c - gathering a column for a selection of rows (colvec.h).
 *
 * The selection is walked once, in row order, one run of rows per data
 * block: the block holding the next row is found by binary search from the
 * current one (so a sparse selection skips untouched blocks without
 * decoding them), decoded through the reader's block-at-a-time calls, and
 * every selected row of it copied out. Invariant: each block is decoded at
 * most once per call, because rows are strictly increasing.
 */
#include <string.h>

#include "format/colvec.h"
#include "format/segfmt.h"

/* Data block number (0-based among the data blocks) holding `row`,
 * searching from data block `from` on (row lies at or after it). */
static uint32_t block_from(const qr_colmeta *cm, uint32_t from, uint32_t row)
{
    const qr_blockref *d = cm->blocks + cm->first_data;
    uint32_t lo = from, hi = cm->ndata;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (d[mid].first_row <= row)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static uint64_t column_rows(const qr_colmeta *cm)
{
    if (cm->ndata == 0)
        return 0;
    const qr_blockref *last = &cm->blocks[cm->first_data + cm->ndata - 1];
    return (uint64_t)last->first_row + last->rows;
}

static int check_selection(const qr_colmeta *cm, const uint32_t *rows, uint32_t n, qr_err *e)
{
    uint64_t nrows = column_rows(cm);
    for (uint32_t i = 0; i < n; i++) {
        if (rows[i] >= nrows)
            return qr_errf(e, QR_E_ARGS, "column %s: selected row %u out of range (%llu rows)",
                           cm->name, rows[i], (unsigned long long)nrows);
        if (i && rows[i] <= rows[i - 1])
            return qr_errf(e, QR_E_ARGS,
                           "column %s: selection not sorted and distinct at %u (%u after %u)",
                           cm->name, i, rows[i], rows[i - 1]);
    }
    return 0;
}

static void *alloc_array(qr_arena *a, size_t n, size_t size)
{
    return qr_arena_alloc(a, (n ? n : 1) * size);
}

static int nomem(const qr_colmeta *cm, qr_err *e)
{
    return qr_errf(e, QR_E_NOMEM, "column %s: out of memory gathering a column vector", cm->name);
}

/* The rows of the selection from *i on that lie in the block [first,
 * first + cnt): advances *i past them and returns how many. */
static uint32_t run_in_block(const uint32_t *rows, uint32_t n, uint32_t *i, uint32_t first,
                             uint32_t cnt)
{
    uint32_t start = *i;
    uint64_t end = (uint64_t)first + cnt;
    while (*i < n && rows[*i] < end)
        (*i)++;
    return *i - start;
}

static int gather_ints(qr_colreader *r, const qr_colmeta *cm, const uint32_t *rows, uint32_t n,
                       qr_vec *out, qr_err *e)
{
    uint32_t bi = 0;
    for (uint32_t i = 0; i < n;) {
        bi = block_from(cm, bi, rows[i]);
        const int64_t *v;
        const uint8_t *nul;
        uint32_t first, cnt;
        if (qr_colr_int_block(r, bi, &v, &nul, &first, &cnt, e) != 0)
            return -1;
        uint32_t k = i, m = run_in_block(rows, n, &i, first, cnt);
        for (uint32_t j = k; j < k + m; j++) {
            uint32_t o = rows[j] - first;
            out->isnull[j] = nul[o];
            out->ints[j] = nul[o] ? 0 : v[o];
        }
    }
    return 0;
}

/* A block whose selected rows are under 1/SPARSE_CODES of it has them read
 * from the packed codes one by one (about 10 ns each) rather than all of
 * its codes unpacked (about 0.6 ns each). */
#define SPARSE_CODES 16u

static int gather_codes(qr_colreader *r, const qr_colmeta *cm, const uint32_t *rows, uint32_t n,
                        qr_vec *out, qr_err *e)
{
    uint32_t bi = 0;
    for (uint32_t i = 0; i < n;) {
        bi = block_from(cm, bi, rows[i]);
        const qr_blockref *b = &cm->blocks[cm->first_data + bi];
        uint32_t k = i, m = run_in_block(rows, n, &i, b->first_row, b->rows);
        if ((uint64_t)m * SPARSE_CODES < b->rows) { /* few rows: read in place */
            if (qr_colr_codes_at(r, bi, rows + k, m, out->codes + k, e) != 0)
                return -1;
            continue;
        }
        const uint64_t *c;
        uint32_t first, cnt;
        if (qr_colr_code_block(r, bi, &c, &first, &cnt, e) != 0)
            return -1;
        for (uint32_t j = k; j < k + m; j++)
            out->codes[j] = (uint32_t)c[rows[j] - first]; /* <= ndict, checked by the reader */
    }
    return 0;
}

/* A hex-id page with few of its rows selected: those rows alone, each
 * from the page's row index (qr_colr_bytes in random mode), instead of
 * every row of the page turned to text. */
static int gather_hex_sparse(qr_colreader *r, const qr_colmeta *cm, const uint32_t *rows,
                             uint32_t k, uint32_t m, qr_vec *out, qr_arena *a, qr_err *e)
{
    qr_colr_random(r, 1);
    int rc = 0;
    for (uint32_t j = k; j < k + m && rc == 0; j++) {
        qr_slice s;
        if ((rc = qr_colr_bytes(r, rows[j], &s, e)) != 0)
            break;
        if (!s.p) {
            out->vals[j] = (qr_slice){NULL, 0};
            continue;
        }
        char *d = s.n ? qr_arena_alloc(a, s.n) : NULL;
        if (s.n && !d) {
            rc = nomem(cm, e);
            break;
        }
        if (s.n)
            memcpy(d, s.p, s.n);
        out->vals[j] = (qr_slice){s.n ? d : "", s.n};
    }
    qr_colr_random(r, 0);
    return rc;
}

static int gather_bytes(qr_colreader *r, const qr_colmeta *cm, const uint32_t *rows, uint32_t n,
                        qr_vec *out, qr_arena *a, qr_err *e)
{
    uint32_t bi = 0;
    for (uint32_t i = 0; i < n;) {
        bi = block_from(cm, bi, rows[i]);
        if (cm->encoding == ENC_HEXID) {
            const qr_blockref *b = &cm->blocks[cm->first_data + bi];
            uint32_t k = i, m = run_in_block(rows, n, &i, b->first_row, b->rows);
            if ((uint64_t)m * 4 < b->rows) {
                if (gather_hex_sparse(r, cm, rows, k, m, out, a, e) != 0)
                    return -1;
                continue;
            }
            i = k; /* dense: decode the page whole, below */
        }
        const qr_slice *v;
        uint32_t first, cnt;
        if (qr_colr_bytes_block(r, bi, &v, &first, &cnt, e) != 0)
            return -1;
        uint32_t k = i, m = run_in_block(rows, n, &i, first, cnt);
        /* one arena allocation for the run's bytes */
        size_t bytes = 0;
        for (uint32_t j = k; j < k + m; j++)
            bytes += v[rows[j] - first].n;
        char *dst = bytes ? qr_arena_alloc(a, bytes) : NULL;
        if (bytes && !dst)
            return nomem(cm, e);
        for (uint32_t j = k; j < k + m; j++) {
            const qr_slice *s = &v[rows[j] - first];
            if (!s->p) {
                out->vals[j].p = NULL;
                out->vals[j].n = 0;
                continue;
            }
            if (s->n)
                memcpy(dst, s->p, s->n);
            /* an empty value keeps a non-NULL pointer: it is not NULL */
            out->vals[j].p = s->n ? dst : "";
            out->vals[j].n = s->n;
            dst += s->n;
        }
    }
    return 0;
}

int qr_colvec_gather(qr_colreader *r, const uint32_t *rows, uint32_t n, qr_vec *out, qr_arena *a,
                     qr_err *e)
{
    const qr_colmeta *cm = qr_colr_meta(r);
    memset(out, 0, sizeof *out);
    out->type = cm->type;
    out->n = n;
    if (check_selection(cm, rows, n, e) != 0)
        return -1;
    switch (cm->encoding) {
    case ENC_INT:
        out->kind = QR_VEC_INT;
        out->ints = alloc_array(a, n, sizeof *out->ints);
        out->isnull = alloc_array(a, n, 1);
        if (!out->ints || !out->isnull)
            return nomem(cm, e);
        return gather_ints(r, cm, rows, n, out, e);
    case ENC_DICT:
        out->kind = QR_VEC_CODES;
        out->dict = qr_colr_dict(r, &out->ndict);
        out->codes = alloc_array(a, n, sizeof *out->codes);
        if (!out->codes)
            return nomem(cm, e);
        return gather_codes(r, cm, rows, n, out, e);
    case ENC_PAGED:
    case ENC_HEXID:
        out->kind = QR_VEC_BYTES;
        out->vals = alloc_array(a, n, sizeof *out->vals);
        if (!out->vals)
            return nomem(cm, e);
        return gather_bytes(r, cm, rows, n, out, a, e);
    default:
        return qr_errf(e, QR_E_INTERNAL, "column %s: unknown encoding %u", cm->name, cm->encoding);
    }
}

int qr_colvec_prune(const qr_segment *s, int col, int64_t lo, int64_t hi, uint32_t *blocks,
                    uint32_t *nout, qr_err *e)
{
    const qr_colmeta *cm = qr_seg_colmeta(s, col, e);
    uint32_t k = 0;
    *nout = 0;
    if (!cm)
        return -1;
    if (lo > hi)
        return 0;
    int ranged = cm->encoding == ENC_INT || cm->encoding == ENC_DICT;
    for (uint32_t i = 0; i < cm->ndata; i++) {
        const qr_blockref *b = &cm->blocks[cm->first_data + i];
        if (ranged && ((b->flags & QR_BLKF_ALL_NULL) || b->max < lo || b->min > hi))
            continue;
        blocks[k++] = i;
    }
    *nout = k;
    return 0;
}
