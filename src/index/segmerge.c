/* segmerge.c - writing one segment from the rows of others (merges,
 * VACUUM, retention's trims) without going through text: the sources'
 * column blocks are decoded straight into a batch (no rendering as NDJSON
 * and parsing back), the batch is put in time order as any segment is, and
 * each index is merged from the sources' postings (invmerge.c) or, where a
 * source lacks it (an index created after that source was written and not
 * yet built for it), built from the batch's values. The result is the
 * segment a build from the same rows writes, byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "format/segfmt.h"
#include "index/invbuild_int.h"
#include "index/invindex.h"
#include "util/qctx.h"

/* Every source's row map: source row -> batch row (UINT32_MAX: dropped),
 * and later -> merged row. */
typedef struct rowmaps {
    uint32_t **map;
    uint8_t *dropped;
    uint32_t n;
} rowmaps;

static void rowmaps_free(rowmaps *m)
{
    for (uint32_t s = 0; m->map && s < m->n; s++)
        free(m->map[s]);
    free(m->map);
    free(m->dropped);
}

/* Which rows of each source stay: in its range, not deleted, and with a sort value of at
 * least min_sort (NULL stays) when min_sort is not INT64_MIN. */
static int keep_rows(const qr_tabdef *d, const qr_merge_src *src, uint32_t nsrc, int64_t min_sort,
                     rowmaps *m, uint32_t *total, qr_err *e)
{
    m->n = nsrc;
    m->map = calloc(nsrc ? nsrc : 1, sizeof *m->map);
    m->dropped = calloc(nsrc ? nsrc : 1, 1);
    if (!m->map || !m->dropped)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    uint64_t k = 0;
    for (uint32_t s = 0; s < nsrc; s++) {
        const qr_segment *sg = src[s].seg;
        uint32_t rows = (uint32_t)sg->rows;
        if (src[s].lo > src[s].hi || src[s].hi > rows)
            return qr_errf(e, QR_E_INTERNAL, "segment %s: merging rows %u..%u of %u", sg->path,
                           src[s].lo, src[s].hi, rows);
        if (!(m->map[s] = malloc(sizeof **m->map * (rows ? rows : 1))))
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        qr_colreader *ts = NULL;
        if (min_sort != INT64_MIN && d->sort_col >= 0) {
            int c = qr_row_reader_col(sg, d, (uint32_t)d->sort_col, e);
            if (c == -2 || (c >= 0 && !(ts = qr_colr_open((qr_segment *)sg, c, e))))
                return -1;
        }
        for (uint32_t r = 0; r < rows; r++) {
            int keep = r >= src[s].lo && r < src[s].hi && !qr_seg_is_deleted(sg, r);
            if (keep && ts) {
                int64_t v;
                int isnull;
                if (qr_colr_int(ts, r, &v, &isnull, e) != 0) {
                    qr_colr_close(ts);
                    return -1;
                }
                keep = isnull || v >= min_sort;
            }
            m->map[s][r] = keep ? (uint32_t)k++ : UINT32_MAX;
            m->dropped[s] |= !keep;
        }
        qr_colr_close(ts);
        if (k > UINT32_MAX - 1)
            return qr_errf(e, QR_E_TOO_LONG, "a merged segment of more than 2^32 - 2 rows");
    }
    *total = (uint32_t)k;
    return 0;
}

/* Column i of the table from reader r of a source whose rows go to batch
 * rows map[]: every data block decoded once. */
static int fill_column(qr_batch *b, uint32_t i, qr_colreader *r, const uint32_t *map, qr_buf *tmp,
                       qr_err *e)
{
    const qr_colmeta *cm = qr_colr_meta(r);
    qr_colvec *v = &b->cols[i];
    int is_map = b->def->cols[i].type == QT_MAP;
    const qr_slice *dict = NULL;
    qr_slice *dmap = NULL; /* a map column's dictionary as map texts */
    uint32_t ndict = 0;
    if (cm->encoding == ENC_DICT) {
        dict = qr_colr_dict(r, &ndict);
        if (is_map && ndict) {
            if (!(dmap = malloc(sizeof *dmap * ndict)))
                return qr_errf(e, QR_E_NOMEM, "out of memory");
            for (uint32_t k = 0; k < ndict; k++) {
                qr_buf_clear(tmp);
                if (qr_colr_map_text(r, dict[k], tmp, e) != 0) {
                    free(dmap);
                    return -1;
                }
                char *c = qr_arena_memdup(&b->arena, tmp->p, tmp->len ? tmp->len : 1);
                if (!c) {
                    free(dmap);
                    return qr_errf(e, QR_E_NOMEM, "out of memory");
                }
                dmap[k] = (qr_slice){c, tmp->len};
            }
            dict = dmap;
        }
    }
    int rc = 0;
    for (uint32_t di = 0; rc == 0 && di < cm->ndata; di++) {
        uint32_t first, n;
        if (cm->encoding == ENC_INT) {
            const int64_t *iv;
            const uint8_t *nul;
            if ((rc = qr_colr_int_block(r, di, &iv, &nul, &first, &n, e)) != 0)
                break;
            for (uint32_t j = 0; j < n; j++) {
                uint32_t br = map[first + j];
                if (br != UINT32_MAX) {
                    v->ints[br] = iv[j];
                    v->isnull[br] = nul[j];
                }
            }
        } else if (cm->encoding == ENC_DICT) {
            const uint64_t *codes;
            if ((rc = qr_colr_code_block(r, di, &codes, &first, &n, e)) != 0)
                break;
            for (uint32_t j = 0; j < n; j++) {
                uint32_t br = map[first + j];
                uint64_t code = codes[j];
                if (br == UINT32_MAX || code == 0)
                    continue;
                if (code > ndict) {
                    rc = qr_errf(e, QR_E_CORRUPT,
                                 "corrupt: column %s: code %llu past its dictionary", cm->name,
                                 (unsigned long long)code);
                    break;
                }
                v->strs[br] = dict[code - 1]; /* the reader's (or dmap's arena copy): kept
                                               * until the segment is written */
                b->payload_bytes += dict[code - 1].n;
            }
        } else {
            const qr_slice *vals;
            if ((rc = qr_colr_bytes_block(r, di, &vals, &first, &n, e)) != 0)
                break;
            for (uint32_t j = 0; j < n && rc == 0; j++) {
                uint32_t br = map[first + j];
                if (br == UINT32_MAX || !vals[j].p)
                    continue;
                const char *p = vals[j].p;
                size_t len = vals[j].n;
                if (is_map) {
                    qr_buf_clear(tmp);
                    if ((rc = qr_colr_map_text(r, vals[j], tmp, e)) != 0)
                        break;
                    p = (const char *)tmp->p;
                    len = tmp->len;
                }
                char *c = qr_arena_memdup(&b->arena, p, len ? len : 1);
                if (!c) {
                    rc = qr_errf(e, QR_E_NOMEM, "out of memory holding merged rows");
                    break;
                }
                v->strs[br] = (qr_slice){c, len};
                b->payload_bytes += len;
            }
        }
    }
    free(dmap);
    return rc;
}

int qr_segment_merge(const char *path, const qr_tabdef *d, const qr_merge_src *src, uint32_t nsrc,
                     int64_t min_sort, qr_qctx *ctx, const qr_seg_opts *o, qr_seg_summary *out,
                     qr_err *e)
{
    qr_segment **segs = calloc(nsrc ? nsrc : 1, sizeof *segs);
    for (uint32_t s = 0; segs && s < nsrc; s++)
        segs[s] = src[s].seg;
    memset(out, 0, sizeof *out);
    rowmaps m = {0};
    qr_batch b;
    memset(&b, 0, sizeof b);
    qr_colreader **rd = calloc((size_t)(nsrc ? nsrc : 1) * (d->ncols ? d->ncols : 1), sizeof *rd);
    uint32_t nix = d->nixs, total = 0, *perm = NULL, *inv = NULL;
    qr_field_out *fo = calloc(nix ? nix : 1, sizeof *fo);
    qr_sec_in *secs = calloc(nix ? nix : 1, sizeof *secs);
    qr_buf tmp;
    qr_buf_init(&tmp);
    int rc = segs && rd && fo && secs ? 0 : qr_errf(e, QR_E_NOMEM, "out of memory");
    if (rc == 0)
        rc = keep_rows(d, src, nsrc, min_sort, &m, &total, e);
    if (rc == 0 && total == 0) /* nothing left: no segment */
        goto out;
    if (rc == 0)
        rc = qr_batch_init(&b, d, total, e);
    if (rc == 0)
        qr_batch_add_null_rows(&b, total);
    /* columns: the readers stay open until the write (dictionary values
     * are used in place) */
    for (uint32_t s = 0; rc == 0 && s < nsrc; s++) {
        qr_colreader **sr = rd + (size_t)s * d->ncols;
        rc = qr_row_readers_open(segs[s], d, sr, e);
        for (uint32_t i = 0; rc == 0 && i < d->ncols; i++)
            if (sr[i]) /* else NULL in every row: the column is newer than the source */
                rc = fill_column(&b, i, sr[i], m.map[s], &tmp, e);
        if (rc != 0)
            qr_err_prefix(e, "merging segment %s: ", segs[s]->path);
        if (rc == 0 && ctx)
            rc = qr_qctx_check(ctx, e);
    }
    if (rc == 0 && (!(perm = qr_seg_time_order(&b)) || !(inv = malloc(sizeof *inv * total))))
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    if (rc == 0) {
        for (uint32_t i = 0; i < total; i++)
            inv[perm[i]] = i;
        for (uint32_t s = 0; s < nsrc; s++) /* source row -> merged row */
            for (uint32_t r = 0; r < (uint32_t)segs[s]->rows; r++)
                if (m.map[s][r] != UINT32_MAX)
                    m.map[s][r] = inv[m.map[s][r]];
    }
    /* the shaped index first, as a build does: keyword indexes record
     * its rows' shapes */
    int shaped = qr_field_shaped(d);
    qr_shapes sh;
    for (uint32_t k = 0; k < nix && rc == 0; k++) {
        uint32_t i = qr_field_nth(shaped, k);
        qr_field_def fd = qr_field_def_of(d, &d->ixs[i]);
        if (qr_field_mergeable(&fd, segs, nsrc))
            rc = qr_field_merge(&fd, segs, (const uint32_t *const *)m.map, m.dropped, nsrc, &b,
                                &fo[i], ctx, path, e);
        else
            rc = qr_field_build(&fd, &b, perm, &fo[i], path, e);
        qr_field_sec_in(&fd, &fo[i], &secs[i]);
        if (rc == 0 && (int)i == shaped)
            rc = qr_field_share_shapes(d, shaped, fo, total, &sh, path, e);
    }
    if (rc == 0 && ctx)
        rc = qr_qctx_check(ctx, e);
    if (rc == 0)
        rc = qr_seg_write_ex(path, &b, perm, secs, nix, o, out, e);
out:
    for (uint32_t s = 0; rd && s < nsrc; s++)
        qr_row_readers_close(d, rd + (size_t)s * d->ncols);
    for (uint32_t i = 0; fo && i < nix; i++)
        qr_field_out_free(&fo[i]);
    qr_buf_free(&tmp);
    qr_batch_free(&b);
    rowmaps_free(&m);
    free(segs);
    free(rd);
    free(fo);
    free(secs);
    free(perm);
    free(inv);
    return rc;
}
