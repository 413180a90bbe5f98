/* valshapes.h - which row shapes each value of a keyword field occurs
 * with (the VALSHAPES block of a keyword index).
 *
 * A top-k query such as `service:payment AND failed` is bounded per
 * segment by the best score of the Body shapes holding `failed`
 * (score/shapebound.c); rows of other services are often shorter and
 * score higher, so that bound rarely loses. Knowing which shapes the rows
 * with service=payment have narrows it to the shapes that can match, and
 * the segment is passed over exactly when none of them beats the
 * threshold.
 *
 * Written for a keyword index when the segment's first positional
 * full-text index has a SHAPES block and the block stays within a bit a
 * row (at least 1 KiB): low-cardinality fields (services, severities,
 * scopes) get it, ids do not. It depends only on the rows, so a merge
 * writes what a build of the same rows writes. The block:
 *   u16 section id of the shaped index, u16 0, u32 K (its shapes),
 *   u32 V (values), u32 W (64-bit words a set takes: K / 64 + 1),
 *   V u32 offsets (from the first entry; increasing),
 *   V entries in dictionary order: varint length, the value's bytes,
 *   then W u64 words: bit j set when a row with the value has shape j.
 */
#ifndef QR_VALSHAPES_H
#define QR_VALSHAPES_H

#include <stddef.h>
#include <stdint.h>

#include "index/shapes.h"
#include "util/buf.h"
#include "util/err.h"

/* Writing: the values' sets, one value at a time in dictionary order. */
typedef struct qr_valshapes_w {
    const qr_shapes *sh; /* the rows' shapes (NULL: no block) */
    uint16_t sec;
    uint32_t words, nvals;
    size_t budget;
    int over; /* past the budget: no block */
    qr_buf offs, ents;
} qr_valshapes_w;

/* Start a block for a segment of rows rows whose shaped index sec has the
 * shapes sh (NULL: none, and no block). */
void qr_valshapes_w_init(qr_valshapes_w *w, const qr_shapes *sh, uint16_t sec, uint32_t rows);
/* Value t's rows docs[0..n) (rows of the segment). 0, or -1 out of memory. */
int qr_valshapes_w_add(qr_valshapes_w *w, const char *t, size_t tl, const uint32_t *docs,
                       uint32_t n);
/* The block into out (nothing when there is none). 0, or -1 out of memory. */
int qr_valshapes_w_finish(qr_valshapes_w *w, qr_buf *out);
void qr_valshapes_w_free(qr_valshapes_w *w);

/* A block as read. */
typedef struct qr_valshapes {
    uint16_t sec;
    uint32_t k, nvals, words;
    const unsigned char *offs, *ents;
    size_t ents_len;
} qr_valshapes;

/* Parse a verified block: the header, offsets that increase within the
 * entries, and each entry's length. 0, or -1 (XX001, naming path). */
int qr_valshapes_parse(const unsigned char *p, size_t len, qr_valshapes *vs, const char *path,
                       qr_err *e);
/* The set of value t (vs->words u64 words, unaligned), or NULL when no
 * row of the segment holds it. */
const unsigned char *qr_valshapes_find(const qr_valshapes *vs, const char *t, size_t n);
/* Is bit j of set (j <= k)? */
static inline int qr_valshapes_has(const unsigned char *set, uint32_t j)
{
    return set[j >> 3] >> (j & 7) & 1;
}

#endif
