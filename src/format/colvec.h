/* colvec.h - column vectors: one column of a segment gathered for a
 * selection of its rows, and the block min/max that let a filter on an
 * unindexed column skip blocks.
 *
 * A selection is n sorted, distinct row ids of one segment. Gathering walks
 * the column's data blocks in row order and decodes each block the
 * selection touches exactly once (ENC_INT blocks of 64K rows, dictionary
 * code blocks of 64K rows, string pages of ~4 KiB, hex-id pages of 512
 * rows), so a batch costs one decode per block, never one per row.
 *
 * What a vector holds, by the column's encoding in this segment:
 *   - integer-stored types (qr_type_is_int): int64 values in the stored
 *     domain (qr_num_*) and NULL flags (QR_VEC_INT);
 *   - dictionary-coded text, json and map columns: the codes (0 = NULL,
 *     else dict[code - 1]) and the reader's dictionary (QR_VEC_CODES): equal
 *     values have equal codes within one segment, so GROUP BY hashes codes;
 *     the dictionary is sorted bytewise, so codes order like their values;
 *   - other text, json and map columns: slices whose bytes are copied into
 *     the caller's arena (QR_VEC_BYTES), so they outlive the reader's block
 *     cache.
 * Map values (in either form) stay in their keyed binary form; render one
 * with qr_colr_map_json(reader, value, out) while the reader is open (the
 * key dictionary belongs to the reader). JSON values are canonical JSON
 * text, text values UTF-8.
 *
 * Ownership: every array of a qr_vec and every copied byte come from the
 * arena given to the gather (one owner: freed with the arena); the
 * dictionary of a QR_VEC_CODES vector belongs to the reader and lives until
 * qr_colr_close. Nothing is malloc'ed per row.
 */
#ifndef QR_COLVEC_H
#define QR_COLVEC_H

#include <stdint.h>

#include "format/segment.h"
#include "util/arena.h"

typedef enum {
    QR_VEC_INT = 1,   /* ints + isnull */
    QR_VEC_CODES = 2, /* codes + dict */
    QR_VEC_BYTES = 3, /* vals */
} qr_veckind;

typedef struct qr_vec {
    uint8_t kind;         /* qr_veckind */
    uint8_t type;         /* the column's qr_type */
    uint32_t n;           /* rows gathered (the selection's length) */
    int64_t *ints;        /* QR_VEC_INT: n values (0 where NULL) */
    uint8_t *isnull;      /* QR_VEC_INT: n flags, 1 = NULL */
    uint32_t *codes;      /* QR_VEC_CODES: n codes, 0 = NULL */
    const qr_slice *dict; /* QR_VEC_CODES: ndict values, sorted bytewise */
    uint32_t ndict;
    qr_slice *vals; /* QR_VEC_BYTES: n values, p == NULL = NULL */
} qr_vec;

/* Gather reader r's column for the selection rows[0..n) (sorted, distinct,
 * each < the segment's rows; n may be 0) into *out. Arrays and value bytes
 * are allocated from `a`. Returns 0, or -1 with e set: QR_E_ARGS for a
 * selection that is not sorted and distinct or has a row out of range,
 * QR_E_NOMEM when the arena is full, QR_E_CORRUPT for a bad block. Leaves
 * the reader's block cache on the last block it decoded. */
int qr_colvec_gather(qr_colreader *r, const uint32_t *rows, uint32_t n, qr_vec *out, qr_arena *a,
                     qr_err *e);

/* Value i of a QR_VEC_CODES or QR_VEC_BYTES vector as a slice (p == NULL
 * for NULL); {NULL, 0} for a QR_VEC_INT vector. */
static inline qr_slice qr_vec_bytes(const qr_vec *v, uint32_t i)
{
    qr_slice none = {NULL, 0};
    if (v->kind == QR_VEC_BYTES)
        return v->vals[i];
    if (v->kind == QR_VEC_CODES && v->codes[i])
        return v->dict[v->codes[i] - 1];
    return none;
}

/* Block pruning for a predicate lo <= value <= hi (stored domain) on column
 * `col` of segment s: writes to blocks[] the data block numbers (0 ..
 * cm->ndata-1; the block is s->cols[col].blocks[first_data + k], its rows
 * first_row .. first_row + rows - 1) that may hold a matching non-NULL row
 * and sets *nout to how many (blocks[] needs room for cm->ndata); 0, or -1
 * with e set when the column's directory cannot be read. ENC_INT blocks
 * are kept when their [min, max] meets [lo, hi] and they are not all NULL;
 * for a dictionary-coded column lo and hi are codes (qr_colr_dict_code; a
 * text range maps to a code range because the dictionary is sorted), and
 * the block min/max are its codes, NULL rows counting as code 0; other encodings keep no min/max
 * and every block is returned. lo > hi returns 0. */
int qr_colvec_prune(const qr_segment *s, int col, int64_t lo, int64_t hi, uint32_t *blocks,
                    uint32_t *nout, qr_err *e);

#endif
