/* batch.c - column vectors of a row batch (see batch.h). */
#include "format/batch.h"

#include <stdlib.h>
#include <string.h>

int qr_batch_init(qr_batch *b, uint32_t cap, qr_err *e)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
    qr_arena_init(&b->arena, 1 << 20, 0);
    b->line_no = malloc(sizeof *b->line_no * cap);
    if (!b->line_no)
        goto oom;
    for (int c = 0; c < COL_COUNT; c++) {
        qr_colvec *v = &b->cols[c];
        switch (qr_schema[c].type) {
        case TYPE_TIMESTAMP:
        case TYPE_UINT8:
        case TYPE_INT32:
            v->ints = malloc(sizeof *v->ints * cap);
            v->isnull = malloc(cap);
            if (!v->ints || !v->isnull)
                goto oom;
            break;
        default:
            v->strs = malloc(sizeof *v->strs * cap);
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
    for (int c = 0; c < COL_COUNT; c++) {
        free(b->cols[c].ints);
        free(b->cols[c].isnull);
        free(b->cols[c].strs);
    }
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
    for (int c = 0; c < COL_COUNT; c++) {
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

void qr_batch_drop_last(qr_batch *b)
{
    if (b->nrows)
        b->nrows--;
}
