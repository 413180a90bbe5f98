/* shapewords.h - which row shapes hold each word (the SHAPEWORDS block of
 * a positional full-text index).
 *
 * A row's words other than the variable ones, and its length, are its
 * shape's (shapes.h), so a query of such words scores every row of a
 * shape alike, and the best score over the shapes is the best any row can
 * have (score/shapebound.c); a count of a prefix or pattern alone is the
 * rows of the shapes holding a matched word (match/expand.c). Both look
 * words up here. The index is made from the shapes' text alone, so it is
 * written beside SHAPES by builds and merges alike (the same bytes), and
 * a query maps it: opening a table and answering its first query builds
 * nothing per segment. A segment written before the block has its index
 * made from the text once per open, in this same layout.
 *
 * The block (every number little-endian; it starts on an 8-byte boundary
 * in a segment, so the arrays are read in place):
 *   u32 W (distinct non-variable words), u32 O (occurrences), u32 K (the
 *   SHAPES block's shapes), u32 0;
 *   (W + 1) u32 first: word i's occurrences are occ[first[i], first[i+1])
 *     (first[0] = 0, first[W] = O, each word at least one);
 *   (W + 1) u32 ends: word i's bytes are bytes[ends[i], ends[i+1])
 *     (ends[0] = 0, increasing);
 *   O (u32 shape, u32 tf): per word, its shapes in increasing number
 *     (1..K), each with how often the word is in that shape's text (>= 1);
 *   K + 1 norm codes: shape j's (qr_norm_encode of its token count; 0:
 *     rows without tokens); then 0 to 3 zero bytes to a 4-byte boundary;
 *   the words' bytes, in byte order (memcmp, then the shorter first),
 *     each word once.
 */
#ifndef QR_SHAPEWORDS_H
#define QR_SHAPEWORDS_H

#include <stddef.h>
#include <stdint.h>

#include "index/shapes.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct qr_shape_occ {
    uint32_t shape, tf;
} qr_shape_occ;

/* A SHAPEWORDS block as read (in place, or a copy of it: own). */
typedef struct qr_shape_words {
    uint32_t nw, k;
    const uint32_t *first, *ends; /* [nw + 1] each */
    const qr_shape_occ *occ;
    const uint8_t *norm; /* [k + 1]: each shape's norm code */
    const unsigned char *bytes;
    void *own; /* malloc'ed bytes the fields point into, or NULL */
} qr_shape_words;

/* The SHAPEWORDS block of a parsed SHAPES block s into out (appended).
 * 0, or -1 (e set: out of memory, text that does not parse: XX001, naming
 * path). */
int qr_shape_words_build(const qr_shapes *s, qr_buf *out, const char *path, qr_err *e);

/* Parse block p[0..len) (verified) of a field whose SHAPES block has k
 * shapes: every offset, order and shape number is checked, so lookups
 * trust it. Points into p when it is 4-byte aligned, else into a copy.
 * 0, or -1 (XX001 naming path: malformed; 53200: out of memory). */
int qr_shape_words_parse(const unsigned char *p, size_t len, uint32_t k, qr_shape_words *w,
                         const char *path, qr_err *e);

/* Made from the text of s (a segment without the block): build + parse
 * into memory w owns. 0, or -1 (e set). */
int qr_shape_words_make(const qr_shapes *s, qr_shape_words *w, const char *path, qr_err *e);
void qr_shape_words_free(qr_shape_words *w);

/* The shapes holding word t (as indexed), in number order: *cnt of them
 * (none: NULL, 0). A binary search over the words. */
const qr_shape_occ *qr_shape_words_find(const qr_shape_words *w, const char *t, size_t n,
                                        uint32_t *cnt);

/* The shapes holding every word t[0..n) (a phrase's: n at most
 * QR_SHAPE_WORDS_ALL_MAX), in number order, their lists merged: *out
 * from `a`, *cnt of them, each with the least tf of the words in it (of
 * word 0 alone when first_tf). 0, or -1 out of memory. */
#define QR_SHAPE_WORDS_ALL_MAX 64u
int qr_shape_words_all(const qr_shape_words *w, const char *const *t, const size_t *len, uint32_t n,
                       int first_tf, qr_arena *a, qr_shape_occ **out, uint32_t *cnt);

#endif
