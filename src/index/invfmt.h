/* invfmt.h - the inverted index as stored in a segment's sections: section
 * ids, block kinds and limits shared by the index writer and reader.
 * docs/FORMAT.md ("Inverted index sections") is the prose version.
 *
 * One section per indexed field. Blocks of a section:
 *   TERMINDEX  first term, offset and terms length of every dictionary
 *              block (up to 64 terms of one length in characters)
 *   TERMDICT   per block: front-coded terms, then their term infos (df,
 *              where the lists are), in dictionary order (termdict.h)
 *   POSTINGS   per term: skip table + 128-doc blocks (doc deltas, tfs)
 *   POSITIONS  per term: position deltas of every doc (Body only)
 *   NORMS      one byte per row: quantised token count (Body only)
 *   FIELDSTATS rows with a value, total tokens, distinct terms
 *   BITMAPS    dense terms' row bitmaps
 */
#ifndef QR_INVFMT_H
#define QR_INVFMT_H

#include <stdint.h>

#include "format/schema.h"

/* Section ids are the table's index ids (schema.h qr_ixdef.id); the
 * OpenTelemetry table's are these (what its shortcuts name). */
enum {
    SEC_BODY = 1,          /* full text: tf, positions, norms */
    SEC_KW_SERVICE = 2,    /* keyword (exact value) indexes: docs only */
    SEC_KW_SEVERITY = 3,
    SEC_KW_SCOPE = 4,
    SEC_KW_TRACE = 5,
    SEC_KW_SEVNUM = 6,     /* SeverityNumber: one range term per value */
};

/* A range index's term: the stored value (schema.h: stored domain) as hex
 * digits that sort like the number, so that the dictionary's order
 * (length, then bytes) is the numbers' order and a range is a run of
 * terms. Types whose values fit 32 bits signed use 8 digits of the value
 * with its sign bit flipped; the others 16 digits of the 64-bit value with
 * its sign bit flipped. */
#define QR_NUM_TERM_LEN 8
#define QR_NUM_TERM64_LEN 16
static inline void qr_num_term(int32_t v, char out[QR_NUM_TERM_LEN])
{
    uint32_t u = (uint32_t)v ^ 0x80000000u;
    for (int i = QR_NUM_TERM_LEN - 1; i >= 0; i--, u >>= 4)
        out[i] = "0123456789abcdef"[u & 15];
}
static inline void qr_num_term64(int64_t v, char out[QR_NUM_TERM64_LEN])
{
    uint64_t u = (uint64_t)v ^ 0x8000000000000000ull;
    for (int i = QR_NUM_TERM64_LEN - 1; i >= 0; i--, u >>= 4)
        out[i] = "0123456789abcdef"[u & 15];
}
/* Term length of a range index on a column of this type (8 or 16). */
static inline unsigned qr_range_term_len(int type)
{
    return type == QT_BOOL || type == QT_INT8 || type == QT_INT16 || type == QT_INT32 ||
                   type == QT_UINT8 || type == QT_UINT16
               ? QR_NUM_TERM_LEN
               : QR_NUM_TERM64_LEN;
}
/* The term of stored value v for a column of `type`; returns its length. */
static inline unsigned qr_range_term(int type, int64_t v, char out[QR_NUM_TERM64_LEN])
{
    if (qr_range_term_len(type) == QR_NUM_TERM_LEN) {
        qr_num_term((int32_t)v, out);
        return QR_NUM_TERM_LEN;
    }
    qr_num_term64(v, out);
    return QR_NUM_TERM64_LEN;
}
/* Paths index: a leaf's term is its path, this byte, then its value. */
#define QR_PATH_SEP '\0'

/* Block kinds inside an index section (>= QR_BLK_SECTION_MIN). */
enum {
    IBLK_TERMINDEX = 16,
    IBLK_TERMDICT = 17,
    IBLK_POSTINGS = 18,
    IBLK_POSITIONS = 19,
    IBLK_NORMS = 20,
    IBLK_FIELDSTATS = 21,
    IBLK_BITMAPS = 22,    /* dense terms: one bit per row, 64-bit words */
    IBLK_SHAPES = 23,     /* positional full text: each row's shape (index/shapes.h) */
    IBLK_VALSHAPES = 24,  /* keyword: each value's row shapes (index/valshapes.h) */
    IBLK_SHAPEROWS = 25,  /* with SHAPES: how many rows each shape has (u32 each) */
    IBLK_SHAPEWORDS = 26, /* with SHAPES: which shapes hold each word (index/shapewords.h) */
};

#define QR_TERMS_PER_BLOCK 64u
#define QR_POSTING_BLOCK 128u
#define QR_MAX_TERM 255u      /* bytes; the tokenizer never makes longer terms */
#define QR_INLINE_DF 2u       /* terms in at most this many docs live in the dictionary */
#define QR_SKIP_ENTRY 16u     /* bytes per skip entry */

/* term info kinds; TI_HAS_BITMAP is or'ed into TI_BLOCKS for dense terms,
 * and with it, in fields with term frequencies (format 11 on),
 * TI_HAS_MULTI: the term's rows with tf >= 2 follow its bitmap */
enum { TI_INLINE = 0, TI_BLOCKS = 1 };
#define TI_HAS_BITMAP 0x80u
#define TI_HAS_MULTI  0x40u
/* A term in at least rows / QR_DENSE_DIV rows (and a segment of at least
 * QR_DENSE_MIN_ROWS rows) also gets a bitmap: AND/OR/NOT of dense terms
 * then run as word-wise bit operations. */
#define QR_DENSE_DIV 16u
#define QR_DENSE_MIN_ROWS 1024u

/* postings block encodings */
enum { PB_PACKED = 0, PB_BITMAP = 1 };

#endif
