/* result.h - a statement's result: named, typed output columns and rows of
 * cells, built by the operators (project, aggregate) and rendered by
 * render.h.
 *
 * A cell is NULL, an int64 in the stored domain of an integer-stored column
 * type (schema.h: timestamps in ns, uint64 with the sign flipped, float64
 * as its ordered bits, bool 0/1), a double (avg, bm25) or bytes (text,
 * canonical JSON text of json and map values).
 *
 * Ownership: the result owns its column names and cells (counted against
 * the query context given at init: qr_qmalloc) and the bytes of text cells
 * (its arena, charged to the same context); qr_result_free frees it all. */
#ifndef QR_EXEC_RESULT_H
#define QR_EXEC_RESULT_H
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/err.h"
#include "util/qctx.h"

typedef enum {
    QR_RK_INT = 1,   /* i, rendered by `type` (a qr_type) */
    QR_RK_FLOAT = 2, /* f */
    QR_RK_TEXT = 3,  /* s, n: a string */
    QR_RK_JSON = 4,  /* s, n: JSON text (json and map columns) */
} qr_rkind;

typedef struct qr_rcol {
    char name[64]; /* output name (cut to 63 bytes) */
    uint8_t kind;  /* qr_rkind */
    uint8_t type;  /* QR_RK_INT: the qr_type */
    uint8_t tsfmt; /* QR_RK_INT timestamps: the column's qr_tsfmt */
    uint32_t pgoid; /* the PostgreSQL type the server describes it as (the
                     * catalog answers: oid, name, char, arrays ...), or 0:
                     * from kind and type */
} qr_rcol;

typedef struct qr_cell {
    uint8_t null;
    int64_t i;
    double f;
    const char *s;
    uint32_t n;
} qr_cell;

#define QR_RESULT_MAX_COLS 64

typedef struct qr_result {
    qr_qctx *ctx;
    qr_arena a; /* text cells' bytes */
    uint32_t ncols;
    qr_rcol cols[QR_RESULT_MAX_COLS];
    uint64_t nrows, cap;
    qr_cell *cells; /* nrows x ncols, row-major */
    char tag[64];   /* what a statement without rows reports ("EXPLAIN"), or "" */
} qr_result;

void qr_result_init(qr_result *r, qr_qctx *ctx);
void qr_result_free(qr_result *r);
/* Drop the rows, keep the columns. */
void qr_result_clear_rows(qr_result *r);
/* Add an output column; -1 with e set past QR_RESULT_MAX_COLS. */
int qr_result_add_col(qr_result *r, const char *name, int kind, int type, int tsfmt, qr_err *e);
/* Append one row of NULL cells; returns it, or NULL with e set (53200). */
qr_cell *qr_result_add_row(qr_result *r, qr_err *e);
static inline qr_cell *qr_result_row(const qr_result *r, uint64_t i)
{
    return r->cells + i * r->ncols;
}
/* Copy bytes into the result's arena for a text cell; -1 with e (53200). */
int qr_result_set_text(qr_result *r, qr_cell *c, const char *p, size_t n, qr_err *e);
/* Keep rows [off, off + lim) (lim UINT64_MAX = all after off). */
void qr_result_slice(qr_result *r, uint64_t off, uint64_t lim);

/* Sort rows by keys (output column positions; desc[i] & QR_SORT_DESC =
 * descending), NULLs after every value ascending and before them descending
 * (as PostgreSQL), or the other way with desc[i] & QR_SORT_NULLS_FLIP
 * (NULLS FIRST ascending, NULLS LAST descending); rows equal on every key
 * keep their order (stable).
 * -1 with e set when out of memory. */
#define QR_SORT_DESC       1
#define QR_SORT_NULLS_FLIP 2
int qr_result_sort(qr_result *r, const uint32_t *keys, const uint8_t *desc, uint32_t nkeys,
                   qr_err *e);
/* The first k rows of that same stable order, and no others (ORDER BY ...
 * LIMIT: a bounded heap over the rows, n log k, then the k sorted; the full
 * sort when k is not small against the rows). Also stops at the query's
 * cancel flag. -1 with e set (out of memory, 57014). */
int qr_result_sort_top(qr_result *r, const uint32_t *keys, const uint8_t *desc, uint32_t nkeys,
                       uint64_t k, qr_err *e);
/* The same with rows equal on the keys ordered by tie(arg, x, y) (<0, 0,
 * >0 for rows x and y), then by position; always by the heap. */
int qr_result_sort_top_tie(qr_result *r, const uint32_t *keys, const uint8_t *desc, uint32_t nkeys,
                           uint64_t k, int (*tie)(void *arg, uint64_t x, uint64_t y),
                           void *tie_arg, qr_err *e);
/* Keep one of each row (equal in every column, NULL equal to NULL); the
 * rows come out sorted by every column. -1 with e set when out of memory. */
int qr_result_distinct(qr_result *r, qr_err *e);
/* Compare two cells of column col (NULL largest): <0, 0, >0. */
int qr_cell_cmp(const qr_result *r, uint32_t col, const qr_cell *a, const qr_cell *b);
#endif
