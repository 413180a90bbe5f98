/* project.c - gathering the selected columns of the winning rows, one
 * column vector per segment and column (project.h). */
#include "exec/project.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "format/colvec.h"
#include "index/segcache.h"
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

/* One piece of the work: column cols[c] for the hits at p[from..to) (one
 * segment's, in row order), gathered with its own reader into its own
 * arena; the cells are filled from it afterwards, on the calling thread
 * (the result's arena is not shared). */
typedef struct unit {
    uint32_t from, to, c;
    int missing; /* the segment predates the column: NULL */
    qr_vec v;
    qr_slice *json; /* QT_MAP: each row's JSON text */
    qr_arena a;
    int rc;
    qr_err err;
} unit;

typedef struct pjob {
    const qr_par_search *ps;
    const pos *p;
    const int *cols;
    unit *u;
    uint32_t nu;
    atomic_uint next;
} pjob;

static int run_unit(const pjob *j, unit *u, qr_err *e)
{
    const qr_par_search *ps = j->ps;
    qr_segsearch *ss = &ps->ss[j->p[u->from].seg];
    const qr_coldef *cd = &ps->def->cols[j->cols[u->c]];
    int sc = qr_seg_col(ss->seg, cd->name);
    if (sc < 0) {
        u->missing = 1;
        return 0;
    }
    uint32_t n = u->to - u->from;
    uint32_t *rows = qr_arena_alloc(&u->a, sizeof *rows * n);
    if (!rows)
        return qr_qctx_nomem(ps->ctx, e);
    for (uint32_t k = 0; k < n; k++)
        rows[k] = j->p[u->from + k].doc;
    /* a reader from the segment cache's pool when there is one: no zstd
     * context or dictionary made per query */
    qr_colreader *r = ss->ref ? qr_segref_reader(ss->ref, sc, e) : qr_colr_open(ss->seg, sc, e);
    if (!r)
        return -1;
    int rc = qr_colvec_gather(r, rows, n, &u->v, &u->a, e);
    if (rc == 0 && cd->type == QT_MAP && u->v.kind != QR_VEC_INT) {
        qr_buf mb;
        qr_buf_init(&mb);
        if (!(u->json = qr_arena_alloc(&u->a, sizeof *u->json * n)))
            rc = qr_qctx_nomem(ps->ctx, e);
        for (uint32_t k = 0; k < n && rc == 0; k++) {
            qr_slice sv = qr_vec_bytes(&u->v, k);
            u->json[k] = (qr_slice){NULL, 0};
            if (!sv.p)
                continue;
            qr_buf_clear(&mb);
            if ((rc = qr_colr_map_json(r, sv, &mb, e)) != 0)
                break;
            char *d = qr_arena_memdup(&u->a, mb.len ? (const char *)mb.p : "", mb.len ? mb.len : 1);
            if (!d) {
                rc = qr_qctx_nomem(ps->ctx, e);
                break;
            }
            u->json[k] = (qr_slice){d, mb.len};
        }
        if (rc == 0 && mb.oom)
            rc = qr_qctx_nomem(ps->ctx, e);
        qr_buf_free(&mb);
    }
    if (ss->ref)
        qr_segref_reader_done(ss->ref, r);
    else
        qr_colr_close(r);
    return rc;
}

static void project_worker(void *arg, int w)
{
    (void)w;
    pjob *j = arg;
    for (;;) {
        uint32_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->nu)
            break;
        unit *u = &j->u[i];
        /* the statement's cancel and timeout, once per unit */
        u->rc = qr_qctx_check(j->ps->ctx, &u->err) != 0 ? -1 : run_unit(j, u, &u->err);
    }
}

/* The units' values into the result's cells. */
static int fill(const pjob *j, const unit *u, const uint32_t *outcol, qr_result *out,
                uint64_t row0, qr_err *e)
{
    if (u->missing)
        return 0;
    for (uint32_t k = 0; k < u->to - u->from; k++) {
        qr_cell *c = &qr_result_row(out, row0 + j->p[u->from + k].i)[outcol[u->c]];
        if (u->v.kind == QR_VEC_INT) {
            if (!u->v.isnull[k])
                *c = (qr_cell){.i = u->v.ints[k]};
            continue;
        }
        qr_slice s = u->json ? u->json[k] : qr_vec_bytes(&u->v, k);
        if (s.p && qr_result_set_text(out, c, s.p, s.n, e) != 0)
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
    int rc = p ? 0 : qr_qctx_nomem(ps->ctx, e);
    for (uint32_t i = 0; i < n && rc == 0; i++)
        p[i] = (pos){hits[i].seg, hits[i].doc, i};
    if (rc == 0)
        qsort(p, n, sizeof *p, cmp_pos);
    /* the units: per segment's run of hits, per column, and the run cut in
     * `parts` pieces of row order when it is long enough to be worth a
     * second thread (each piece decodes its own blocks and pages) */
    int threads = ps->pool && ps->threads > 1 ? ps->threads : 1;
    uint32_t nu = 0, cap = 0;
    for (uint32_t s = 0; s < n && rc == 0;) {
        uint32_t t = s;
        while (t < n && p[t].seg == p[s].seg)
            t++;
        cap += ncols * (t - s >= 32 ? (uint32_t)threads : 1);
        s = t;
    }
    unit *u = rc == 0 ? qr_qmalloc(ps->ctx, sizeof *u * cap) : NULL;
    if (rc == 0 && !u)
        rc = qr_qctx_nomem(ps->ctx, e);
    for (uint32_t s = 0; s < n && rc == 0;) {
        uint32_t t = s;
        while (t < n && p[t].seg == p[s].seg)
            t++;
        uint32_t parts = t - s >= 32 ? (uint32_t)threads : 1;
        for (uint32_t c = 0; c < ncols; c++)
            for (uint32_t k = 0; k < parts; k++) {
                unit *x = &u[nu++];
                memset(x, 0, sizeof *x);
                x->from = s + (uint32_t)((uint64_t)(t - s) * k / parts);
                x->to = s + (uint32_t)((uint64_t)(t - s) * (k + 1) / parts);
                x->c = c;
                qr_arena_init(&x->a, 16 << 10, 0);
                qr_arena_set_ctx(&x->a, ps->ctx);
            }
        s = t;
    }
    pjob j = {ps, p, cols, u, nu, 0};
    if (rc == 0) {
        int nt = threads < (int)nu ? threads : (int)nu;
        if (nt > 1)
            qr_pool_run(ps->pool, nt, project_worker, &j);
        else
            project_worker(&j, 0);
    }
    for (uint32_t i = 0; i < nu && rc == 0; i++)
        if (u[i].rc != 0) {
            *e = u[i].err;
            rc = -1;
        }
    for (uint32_t i = 0; i < nu && rc == 0; i++)
        rc = fill(&j, &u[i], outcol, out, row0, e);
    for (uint32_t i = 0; i < nu; i++)
        qr_arena_free(&u[i].a);
    qr_qfree(ps->ctx, u);
    qr_qfree(ps->ctx, p);
    return rc;
}
