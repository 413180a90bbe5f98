/* ranges.c - range nodes: number ranges by a range index (a run of its
 * terms) or a column scan skipping blocks by min/max, time ranges on the
 * sort column by binary search, and terms on unindexed text columns by a
 * scan. */
#include "match/match_int.h"

#include <stdlib.h>

#include "format/segfmt.h"

qr_it *mt_empty(qr_arena *a, qr_err *e)
{
    qr_it *it = qr_it_empty(a);
    return it ? it : mt_nomem(e);
}

/* Rows of column `c` (integer-stored) in [lo, hi], by reading it: blocks
 * whose min/max miss the range are skipped, blocks inside it taken whole
 * (but for NULLs). */
static qr_it *scan_range(qr_segsearch *ss, const qr_query *q, int c, int64_t lo, int64_t hi,
                         qr_arena *a, qr_err *e)
{
    qr_plan_node *pn = qr_plan_at(mt_run(ss)->plan, q);
    qr_plan_way(mt_run(ss)->plan, q, "column scan");
    qr_segment *s = ss->seg;
    const qr_colmeta *cm = qr_seg_colmeta(s, c, e);
    if (!cm)
        return NULL;
    uint32_t rows = (uint32_t)s->rows;
    uint64_t *bits = bm_new(a, rows);
    if (!bits)
        return mt_nomem(e);
    uint64_t count = 0;
    qr_colreader *r = NULL;
    for (uint32_t di = 0; di < cm->ndata; di++) {
        const qr_blockref *b = &cm->blocks[cm->first_data + di];
        if ((b->flags & QR_BLKF_ALL_NULL) || b->max < lo || b->min > hi) {
            if (pn)
                pn->blocks_skipped++;
            continue;
        }
        if (pn)
            pn->blocks_read++;
        if (mt_tick(ss, e) != 0) {
            qr_colr_close(r);
            return NULL;
        }
        if (!r && !(r = qr_colr_open(s, c, e)))
            return NULL;
        const int64_t *v;
        const uint8_t *nul;
        uint32_t first, n;
        if (qr_colr_int_block(r, di, &v, &nul, &first, &n, e) != 0) {
            qr_colr_close(r);
            return NULL;
        }
        for (uint32_t i = 0; i < n; i++)
            if (!nul[i] && v[i] >= lo && v[i] <= hi) {
                uint32_t row = first + i;
                bits[row >> 6] |= 1ull << (row & 63);
                count++;
            }
    }
    qr_colr_close(r);
    qr_it *it = qr_it_bitmap(a, bits, rows, count);
    return it ? it : mt_nomem(e);
}

/* Rows whose text column equals q->text, without an index: by reading the
 * column; a dictionary-coded one skips the blocks whose code range misses
 * the value's code (and the whole segment when no row has it). */
qr_it *mt_scan_text(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    qr_segment *s = ss->seg;
    int c = q->colname ? qr_seg_col(s, q->colname) : -1;
    if (c < 0)
        return mt_empty(a, e);
    if (s->cols[c].type != QT_TEXT)
        return (void)qr_errf(e, QR_E_DATATYPE, "segment %s: column %s is %s, not text", s->path,
                             q->colname, qr_type_name(s->cols[c].type)),
               NULL;
    const qr_colmeta *cm = qr_seg_colmeta(s, c, e);
    if (!cm)
        return NULL;
    uint32_t rows = (uint32_t)s->rows;
    uint64_t *bits = bm_new(a, rows);
    if (!bits)
        return mt_nomem(e);
    qr_colreader *r = qr_colr_open(s, c, e);
    if (!r)
        return NULL;
    int64_t code = qr_colr_dict_code(r, q->text, q->len);
    uint64_t count = 0;
    for (uint32_t di = 0; code != 0 && di < cm->ndata; di++) {
        const qr_blockref *b = &cm->blocks[cm->first_data + di];
        if (code > 0 && (b->max < code || b->min > code))
            continue;
        if (qr_qctx_check(mt_run(ss)->ctx, e) != 0) { /* a block of strings: check each */
            qr_colr_close(r);
            return NULL;
        }
        for (uint32_t row = b->first_row; row < b->first_row + b->rows; row++) {
            qr_slice v;
            if (qr_colr_bytes(r, row, &v, e) != 0) {
                qr_colr_close(r);
                return NULL;
            }
            if (v.p && v.n == q->len && (v.n == 0 || memcmp(v.p, q->text, v.n) == 0)) {
                bits[row >> 6] |= 1ull << (row & 63);
                count++;
            }
        }
    }
    qr_colr_close(r);
    qr_it *it = qr_it_bitmap(a, bits, rows, count);
    return it ? it : mt_nomem(e);
}

/* The segment column a range names; -1 (with no error) when the segment
 * has no such column (added later: NULL in every row, so nothing matches). */
static int range_col(qr_segsearch *ss, const qr_query *q, qr_err *e)
{
    qr_segment *s = ss->seg;
    int c = q->colname ? qr_seg_col(s, q->colname) : s->sort_col;
    if (c >= 0 && s->cols[c].type != q->coltype && q->colname)
        return qr_errf(e, QR_E_DATATYPE, "segment %s: column %s is %s, the query wants %s",
                       s->path, q->colname, qr_type_name(s->cols[c].type),
                       qr_type_name(q->coltype)), -2;
    return c;
}

/* The first row in [first, n) of sorted column c (its NULLs before
 * `first`) whose value is >= lo (above = 0) or > hi (above = 1), or n.
 * The blocks' min/max find the one block that holds it, and only that
 * block is read: a binary search over rows would decode a block at almost
 * every probe (delta-coded blocks decode whole), ~16 blocks a bound. */
static int sorted_bound(qr_colreader *r, const qr_colmeta *cm, uint32_t first, uint32_t n,
                        int above, int64_t lo, int64_t hi, uint32_t *out, qr_err *e)
{
#define PASSES(v) (above ? (v) > hi : (v) >= lo)
    uint32_t l = 0, h = cm->ndata; /* first data block whose max passes */
    while (l < h) {
        uint32_t mid = l + (h - l) / 2;
        const qr_blockref *b = &cm->blocks[cm->first_data + mid];
        if ((b->flags & QR_BLKF_ALL_NULL) || !PASSES(b->max))
            l = mid + 1;
        else
            h = mid;
    }
    if (l == cm->ndata) {
        *out = n;
        return 0;
    }
    const qr_blockref *b = &cm->blocks[cm->first_data + l];
    uint32_t lo_row = b->first_row > first ? b->first_row : first;
    uint32_t hi_row = b->first_row + b->rows < n ? b->first_row + b->rows : n;
    while (lo_row < hi_row) { /* inside the block: one decode */
        uint32_t mid = lo_row + (hi_row - lo_row) / 2;
        int64_t v;
        int isnull;
        if (qr_colr_int(r, mid, &v, &isnull, e) != 0)
            return -1;
        if (!isnull && PASSES(v))
            hi_row = mid;
        else
            lo_row = mid + 1;
    }
    *out = lo_row;
    return 0;
#undef PASSES
}

qr_it *mt_time_range(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    qr_segment *s = ss->seg;
    int64_t lo = q->lo, hi = q->hi;
    int c = range_col(ss, q, e);
    if (c == -2)
        return NULL;
    if (c < 0 || lo > hi)
        return mt_empty(a, e);
    if (c != s->sort_col)
        return scan_range(ss, q, c, lo, hi, a, e);
    qr_plan_way(mt_run(ss)->plan, q, "binary search of the sort column");
    uint32_t first = (uint32_t)s->cols[c].null_count; /* NULLs sort first */
    uint32_t n = (uint32_t)s->rows;
    if (first >= n || hi < s->min_ts || lo > s->max_ts)
        return mt_empty(a, e);
    /* a bound outside the segment's values needs no read */
    uint32_t bounds[2] = {first, n};
    if (lo > s->min_ts || hi < s->max_ts) {
        const qr_colmeta *cm = qr_seg_colmeta(s, c, e);
        qr_colreader *r = cm ? qr_colr_open(s, c, e) : NULL;
        if (!r)
            return NULL;
        if ((lo > s->min_ts && sorted_bound(r, cm, first, n, 0, lo, hi, &bounds[0], e) != 0) ||
            (hi < s->max_ts && sorted_bound(r, cm, first, n, 1, lo, hi, &bounds[1], e) != 0)) {
            qr_colr_close(r);
            return NULL;
        }
        qr_colr_close(r);
    }
    if (bounds[1] < bounds[0])
        bounds[1] = bounds[0];
    qr_it *it = qr_it_range(a, bounds[0], bounds[1]);
    return it ? it : mt_nomem(e);
}

/* A number column in [lo, hi]: by its range index, the run of terms from
 * lo's to hi's (qr_range_term sorts like the numbers), a few dense values'
 * bitmaps or lists, OR-ed; without one, a scan of the column. */
qr_it *mt_int_range(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    int64_t lo = q->lo, hi = q->hi, tlo, thi;
    qr_type_range(q->coltype, &tlo, &thi);
    lo = lo < tlo ? tlo : lo;
    hi = hi > thi ? thi : hi;
    if (lo > hi)
        return mt_empty(a, e);
    if (!q->field) {
        int c = range_col(ss, q, e);
        if (c == -2)
            return NULL;
        return c < 0 ? mt_empty(a, e) : scan_range(ss, q, c, lo, hi, a, e);
    }
    qr_invfield *f = qr_segsearch_field(ss, q->field, e);
    if (!f)
        return NULL;
    char from[QR_NUM_TERM64_LEN], to[QR_NUM_TERM64_LEN];
    unsigned tl = qr_range_term(f->def.coltype, lo, from);
    qr_range_term(f->def.coltype, hi, to);
    termset ts = {.ctx = mt_run(ss)->ctx};
    qr_titer it;
    int r = qr_tdict_seek_at(&f->dict, &it, tl, from, tl, e);
    for (; r == 1; r = qr_titer_next(&it, e)) {
        if (it.len != tl || memcmp(it.term, to, tl) > 0)
            break;
        qr_terminfo ti;
        if (qr_titer_info(&it, &ti, e) != 0) {
            r = -1;
            break;
        }
        if (mt_termset_add(&ts, &ti) != 0) {
            qr_qfree(ts.ctx, ts.v);
            return (void)qr_qctx_nomem(ts.ctx, e), NULL;
        }
    }
    qr_it *res = NULL;
    qr_plan_node *pn = qr_plan_at(mt_run(ss)->plan, q);
    if (pn)
        pn->terms += ts.n;
    qr_plan_way(mt_run(ss)->plan, q, "range index terms");
    if (r >= 0)
        res = mt_union_of(ss, f, &ts, a, e);
    else
        qr_err_prefix(e, "segment %s: %s index: ", ss->seg->path, f->def.name);
    qr_qfree(ts.ctx, ts.v);
    return res;
}
