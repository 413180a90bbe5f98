/* shapes.h - row shapes of a positional full-text field (the SHAPES block).
 *
 * Logs are written from templates: most rows of a segment repeat another
 * row's words, position for position, except for the values filled in
 * (numbers, ids). A row's shape is its token sequence with every variable
 * token (qr_shape_variable) masked. Two rows of one shape hold every other
 * word at the same positions, so a phrase, gap or proximity query whose
 * words are none of them variable occurs in all of a shape's rows or in
 * none, with the same frequency: a phrase walk checks positions once per
 * shape, not once per row (match/phrase.c).
 *
 * Shapes are numbered 1..K in the order of their first row (0: a row with
 * no tokens); a segment with more than 65535 shapes (text too free to be
 * templates) has no block, and phrases check every row's positions. The
 * numbering depends only on the rows, so a merge writes the block a build
 * of the same rows writes. The block:
 *   u8 W (the bits K takes: K < 2^W), 3 bytes 0, u32 K, u32 D,
 *   D bytes: the K shapes in number order, each `varint n` tokens, then
 *   per token `varint 0` (variable) or `varint len + 1` and its bytes,
 *   ceil(rows * W / 8) + 3 bytes: the rows' numbers packed W bits each,
 *   least significant bit first (row r at bit r * W), then zeros (a
 *   reader loads 4 bytes from any row's first byte).
 * The shapes' text exists so that a merge can number equal shapes of
 * different segments alike; a query reads only the numbers.
 */
#ifndef QR_SHAPES_H
#define QR_SHAPES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/json.h"

#define QR_SHAPES_MAX 65535u

/* Is token t (as indexed: folded) a value filled into a template rather
 * than a word of it: any ASCII digit, or only a-f over 4 bytes or 8 and
 * more (the parts of uuids and hex ids without a digit)? The index and the
 * query decide with this one test: a phrase with such a word ("dead
 * beef") checks every row's positions. */
int qr_shape_variable(const char *t, size_t n);

/* The SHAPES block of rows rows into out (nothing when there are more
 * than QR_SHAPES_MAX shapes): tids holds each row's term ids in position
 * order (doclen[d] of them for row d, rows without tokens 0), terms[id] the
 * term's bytes. tids is overwritten (variable tokens masked). 0, or -1
 * when out of memory. */
int qr_shapes_build(uint32_t *tids, const uint32_t *doclen, uint32_t rows, const qr_slice *terms,
                    uint32_t nterms, qr_buf *out);

/* A SHAPES block as read. */
typedef struct qr_shapes {
    const unsigned char *dict, *ids;
    size_t dict_len;
    uint32_t width, k, rows; /* width: bits a number takes */
} qr_shapes;

/* Parse a verified block of a segment of `rows` rows: the header, and
 * lengths that add up. Shape numbers are checked where they are read
 * (above k: corrupt). 0, or -1 (XX001, naming path) when malformed. */
int qr_shapes_parse(const unsigned char *p, size_t len, uint32_t rows, qr_shapes *s,
                    const char *path, qr_err *e);

/* Row r's shape number (r < s->rows): four bytes from where its bits
 * start (the block pads three), shifted and masked. */
static inline uint32_t qr_shape_of(const qr_shapes *s, uint32_t r)
{
    size_t bit = (size_t)r * s->width;
    uint32_t v;
    memcpy(&v, s->ids + (bit >> 3), 4);
    return (v >> (bit & 7)) & ((1u << s->width) - 1);
}

/* The SHAPEROWS block of a SHAPES block p[0..len) just built for rows
 * rows, into out: (k + 1) u32, the rows of each shape (0: without
 * tokens). Written with SHAPES by builds and merges alike, so a count
 * by text reads them instead of every row's number. 0, or -1 (out of
 * memory, a block that does not parse). */
int qr_shapes_row_counts(const unsigned char *p, size_t len, uint32_t rows, qr_buf *out);

/* Per shape of a block, found in one pass over it: how many rows have it
 * (rows[j], j in 1..k) and where its text lies in dict ([at[j], at[j+1])).
 * A count of a phrase over a segment without deletions is then the sum of
 * the rows of the shapes whose text holds it. */
typedef struct qr_shape_stats {
    uint32_t *rows, *at;
} qr_shape_stats;
/* Fill st (malloc'ed: qr_shape_stats_free), the rows from `counts` (a
 * verified SHAPEROWS block of counts_len bytes) when not NULL, else by
 * reading every row's number. 0, or -1 (e set: out of memory, a row
 * naming a shape past k, counts of another size or sum, text that does
 * not parse: XX001). */
int qr_shape_stats_make(const qr_shapes *s, const unsigned char *counts, size_t counts_len,
                        qr_shape_stats *st, const char *path, qr_err *e);
void qr_shape_stats_free(qr_shape_stats *st);
/* Shape j's tokens into tok/len (at most max; variable ones NULL, 0):
 * how many it has, or -1 when more than max. */
int64_t qr_shape_tokens(const qr_shapes *s, const qr_shape_stats *st, uint32_t j,
                        const unsigned char **tok, uint32_t *len, uint32_t max);

/* The SHAPES block of a merged segment of rows rows from sources src[0..n)
 * (docmap[s][r]: source row r's row, UINT32_MAX dropped), as a build of
 * those rows writes it (nothing past QR_SHAPES_MAX shapes): equal shapes
 * of different sources are one shape. 0, or -1 (e set: out of memory, a
 * source's block malformed). */
int qr_shapes_merge(const qr_shapes *src, uint32_t n, const uint32_t *const *docmap, uint32_t rows,
                    qr_buf *out, const char *path, qr_err *e);

#endif
