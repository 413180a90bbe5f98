/* batch.h - a batch of rows in column vectors: what ingest fills and the
 * segment writer encodes.
 *
 * Strings are slices. They may point into the caller's input buffer
 * (zero-copy) or into the batch arena; either way they must stay valid until
 * the batch is written. A NULL string has p == NULL; an empty one has p != NULL
 * and n == 0. Maps are stored as "map text": varint pair count, then per pair
 * varint key length, key bytes, varint value length, value bytes (keys as
 * strings; the segment writer replaces them with ids of a per-segment key
 * dictionary).
 */
#ifndef QR_BATCH_H
#define QR_BATCH_H

#include <stdint.h>

#include "format/schema.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct qr_colvec {
    int64_t *ints;   /* TIMESTAMP, UINT8, INT32 columns */
    uint8_t *isnull; /* for ints: 1 = NULL */
    qr_slice *strs;  /* STRING, HEXID, MAP columns; p == NULL = NULL */
} qr_colvec;

typedef struct qr_batch {
    uint32_t nrows, cap;
    qr_colvec cols[COL_COUNT];
    uint64_t *line_no; /* source line of each row, for error messages */
    uint64_t payload_bytes; /* sum of value bytes, an estimate of size */
    qr_arena arena;         /* decoded strings and map texts */
} qr_batch;

int qr_batch_init(qr_batch *b, uint32_t cap, qr_err *e);
void qr_batch_free(qr_batch *b);
/* Forget all rows and arena memory; capacity is kept. */
void qr_batch_clear(qr_batch *b);
/* Append a row with every column NULL; returns its index (batch must not be
 * full: check nrows < cap). */
uint32_t qr_batch_add_null_row(qr_batch *b);
/* Drop the last row (used when a line turns out to be bad half-way). */
void qr_batch_drop_last(qr_batch *b);

#endif
