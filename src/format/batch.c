/* batch.c - column vectors of a row batch (see batch.h). */
#include "format/batch.h"

#include <stdlib.h>
#include <string.h>

int qr_batch_init(qr_batch *b, const qr_tabdef *def, uint32_t cap, qr_err *e)
{
    memset(b, 0, sizeof *b);
    b->def = def;
    b->cap = cap;
    b->ncols = def->ncols;
    qr_arena_init(&b->arena, 1 << 20, 0);
    b->line_no = malloc(sizeof *b->line_no * (cap ? cap : 1));
    b->cols = calloc(def->ncols ? def->ncols : 1, sizeof *b->cols);
    if (!b->line_no || !b->cols)
        goto oom;
    for (uint32_t c = 0; c < b->ncols; c++) {
        qr_colvec *v = &b->cols[c];
        if (qr_type_is_int(def->cols[c].type)) {
            v->ints = malloc(sizeof *v->ints * (cap ? cap : 1));
            v->isnull = malloc(cap ? cap : 1);
            if (!v->ints || !v->isnull)
                goto oom;
        } else {
            v->strs = malloc(sizeof *v->strs * (cap ? cap : 1));
            if (!v->strs)
                goto oom;
        }
    }
    return 0;
oom:
    qr_batch_free(b);
    return qr_errf(e, QR_E_NOMEM, "out of memory allocating a batch of %u rows", cap);
}

void qr_batch_free(qr_batch *b)
{
    for (uint32_t c = 0; b->cols && c < b->ncols; c++) {
        free(b->cols[c].ints);
        free(b->cols[c].isnull);
        free(b->cols[c].strs);
    }
    free(b->cols);
    free(b->line_no);
    qr_arena_free(&b->arena);
    memset(b, 0, sizeof *b);
}

void qr_batch_clear(qr_batch *b)
{
    b->nrows = 0;
    b->payload_bytes = 0;
    qr_arena_reset(&b->arena);
}

uint32_t qr_batch_add_null_row(qr_batch *b)
{
    uint32_t r = b->nrows++;
    for (uint32_t c = 0; c < b->ncols; c++) {
        qr_colvec *v = &b->cols[c];
        if (v->ints) {
            v->ints[r] = 0;
            v->isnull[r] = 1;
        } else {
            v->strs[r].p = NULL;
            v->strs[r].n = 0;
        }
    }
    b->line_no[r] = 0;
    return r;
}

void qr_batch_add_null_rows(qr_batch *b, uint32_t n)
{
    uint32_t r = b->nrows;
    for (uint32_t c = 0; c < b->ncols; c++) {
        qr_colvec *v = &b->cols[c];
        if (v->ints) {
            memset(v->ints + r, 0, sizeof *v->ints * n);
            memset(v->isnull + r, 1, n);
        } else {
            memset(v->strs + r, 0, sizeof *v->strs * n);
        }
    }
    memset(b->line_no + r, 0, sizeof *b->line_no * n);
    b->nrows += n;
}

void qr_batch_drop_last(qr_batch *b)
{
    if (b->nrows)
        b->nrows--;
}
