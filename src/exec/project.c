/* project.c - gathering the selected columns of the winning rows, one
 * column vector per segment and column (project.h). */
#include "exec/project.h"

#include <stdlib.h>
#include <string.h>

#include "format/colvec.h"
#include "util/buf.h"

int qr_x_kind_of(int type)
{
    if (qr_type_is_int(type))
        return QR_RK_INT;
    return type == QT_TEXT ? QR_RK_TEXT : QR_RK_JSON;
}

typedef struct pos {
    uint32_t seg, doc, i;
} pos;

static int cmp_pos(const void *a, const void *b)
{
    const pos *x = a, *y = b;
    if (x->seg != y->seg)
        return x->seg < y->seg ? -1 : 1;
    return x->doc < y->doc ? -1 : x->doc > y->doc;
}

static int fill(qr_colreader *r, const qr_vec *v, int type, const pos *ps, uint32_t n, uint32_t oc,
                qr_result *out, uint64_t row0, qr_buf *mb, qr_err *e)
{
    for (uint32_t j = 0; j < n; j++) {
        qr_cell *c = &qr_result_row(out, row0 + ps[j].i)[oc];
        if (v->kind == QR_VEC_INT) {
            if (!v->isnull[j])
                *c = (qr_cell){.i = v->ints[j]};
            continue;
        }
        qr_slice s = qr_vec_bytes(v, j);
        if (!s.p)
            continue;
        if (type == QT_MAP) {
            qr_buf_clear(mb);
            if (qr_colr_map_json(r, s, mb, e) != 0)
                return -1;
            s = (qr_slice){(const char *)mb->p, mb->len};
        }
        if (qr_result_set_text(out, c, s.p, s.n, e) != 0)
            return -1;
    }
    return 0;
}

int qr_x_project(const qr_par_search *ps, const qr_hit *hits, uint32_t n, const int *cols,
                 const uint32_t *outcol, uint32_t ncols, qr_result *out, uint64_t row0, qr_err *e)
{
    if (n == 0 || ncols == 0)
        return 0;
    pos *p = qr_qmalloc(ps->ctx, sizeof *p * n);
    uint32_t *rows = qr_qmalloc(ps->ctx, sizeof *rows * n);
    int rc = p && rows ? 0 : qr_qctx_nomem(ps->ctx, e);
    for (uint32_t i = 0; i < n && rc == 0; i++)
        p[i] = (pos){hits[i].seg, hits[i].doc, i};
    if (rc == 0)
        qsort(p, n, sizeof *p, cmp_pos);
    qr_arena va;
    qr_arena_init(&va, 64 << 10, 0);
    qr_arena_set_ctx(&va, ps->ctx);
    qr_buf mb;
    qr_buf_init(&mb);
    for (uint32_t s = 0; s < n && rc == 0;) {
        uint32_t t = s;
        while (t < n && p[t].seg == p[s].seg)
            t++;
        qr_segment *seg = ps->ss[p[s].seg].seg;
        for (uint32_t j = s; j < t; j++)
            rows[j - s] = p[j].doc;
        for (uint32_t c = 0; c < ncols && rc == 0; c++) {
            int sc = qr_seg_col(seg, ps->def->cols[cols[c]].name);
            if (sc < 0)
                continue; /* the segment predates the column: NULL */
            qr_colreader *r = qr_colr_open(seg, sc, e);
            if (!r) {
                rc = -1;
                break;
            }
            qr_vec v;
            qr_arena_reset(&va);
            rc = qr_colvec_gather(r, rows, t - s, &v, &va, e);
            if (rc == 0)
                rc = fill(r, &v, ps->def->cols[cols[c]].type, p + s, t - s, outcol[c], out, row0,
                          &mb, e);
            qr_colr_close(r);
        }
        s = t;
    }
    qr_buf_free(&mb);
    qr_arena_free(&va);
    qr_qfree(ps->ctx, p);
    qr_qfree(ps->ctx, rows);
    return rc;
}
