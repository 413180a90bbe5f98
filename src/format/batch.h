/* batch.h - a batch of rows in column vectors: what ingest fills and the
 * segment writer encodes, shaped by a table definition.
 *
 * Columns of integer-stored types (qr_type_is_int) have ints + isnull;
 * text, json and map columns have strs. Strings are slices. They may point
 * into the caller's input buffer (zero-copy) or into the batch arena;
 * either way they must stay valid until the batch is written. A NULL string
 * has p == NULL; an empty one has p != NULL and n == 0. A json value is its
 * compact canonical JSON text. Maps are stored as "map text": varint pair
 * count, then per pair varint key length, key bytes, varint (value length
 * << 1 | is_json), value bytes (a string's bytes, or for is_json = 1 the
 * canonical JSON text of a non-string value); the segment writer replaces
 * keys with ids of a per-segment key dictionary.
 */
#ifndef QR_BATCH_H
#define QR_BATCH_H

#include <stdint.h>

#include "format/schema.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct qr_colvec {
    int64_t *ints;   /* integer-stored columns (stored domain, see qr_num_*) */
    uint8_t *isnull; /* for ints: 1 = NULL */
    qr_slice *strs;  /* text, json, map columns; p == NULL = NULL */
} qr_colvec;

typedef struct qr_batch {
    const qr_tabdef *def; /* not owned: outlives the batch */
    uint32_t nrows, cap, ncols;
    qr_colvec *cols;        /* ncols, in the definition's order */
    uint64_t *line_no;      /* source line of each row, for error messages */
    uint64_t payload_bytes; /* sum of value bytes, an estimate of size */
    qr_arena arena;         /* decoded strings, json and map texts */
} qr_batch;

int qr_batch_init(qr_batch *b, const qr_tabdef *def, uint32_t cap, qr_err *e);
void qr_batch_free(qr_batch *b);
/* Forget all rows and arena memory; capacity is kept. */
void qr_batch_clear(qr_batch *b);
/* Append a row with every column NULL; returns its index (batch must not be
 * full: check nrows < cap). */
uint32_t qr_batch_add_null_row(qr_batch *b);
/* Append n such rows at once (nrows + n <= cap), a column at a time. */
void qr_batch_add_null_rows(qr_batch *b, uint32_t n);
/* Drop the last row (used when a line turns out to be bad half-way). */
void qr_batch_drop_last(qr_batch *b);

#endif
