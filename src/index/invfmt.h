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

/* Section ids = indexed fields. */
enum {
    SEC_BODY = 1,          /* full text: tf, positions, norms */
    SEC_KW_SERVICE = 2,    /* keyword (exact value) indexes: docs only */
    SEC_KW_SEVERITY = 3,
    SEC_KW_SCOPE = 4,
    SEC_KW_TRACE = 5,
    SEC_KW_SEVNUM = 6,     /* SeverityNumber: one term per value (qr_num_term) */
};
#define QR_NUM_FIELDS 6

/* A numeric keyword field's term: the 32-bit value with its sign bit
 * flipped, as 8 lowercase hex digits, so that the dictionary's order
 * (length, then bytes) is the numbers' order and a range is a run of
 * terms. */
#define QR_NUM_TERM_LEN 8
static inline void qr_num_term(int32_t v, char out[QR_NUM_TERM_LEN])
{
    uint32_t u = (uint32_t)v ^ 0x80000000u;
    for (int i = QR_NUM_TERM_LEN - 1; i >= 0; i--, u >>= 4)
        out[i] = "0123456789abcdef"[u & 15];
}

/* Block kinds inside an index section (>= QR_BLK_SECTION_MIN). */
enum {
    IBLK_TERMINDEX = 16,
    IBLK_TERMDICT = 17,
    IBLK_POSTINGS = 18,
    IBLK_POSITIONS = 19,
    IBLK_NORMS = 20,
    IBLK_FIELDSTATS = 21,
    IBLK_BITMAPS = 22, /* dense terms: one bit per row, 64-bit words */
};

#define QR_TERMS_PER_BLOCK 64u
#define QR_POSTING_BLOCK 128u
#define QR_MAX_TERM 255u      /* bytes; the tokenizer never makes longer terms */
#define QR_INLINE_DF 2u       /* terms in at most this many docs live in the dictionary */
#define QR_SKIP_ENTRY 16u     /* bytes per skip entry */

/* term info kinds; TI_HAS_BITMAP is or'ed into TI_BLOCKS for dense terms */
enum { TI_INLINE = 0, TI_BLOCKS = 1 };
#define TI_HAS_BITMAP 0x80u
/* A term in at least rows / QR_DENSE_DIV rows (and a segment of at least
 * QR_DENSE_MIN_ROWS rows) also gets a bitmap: AND/OR/NOT of dense terms
 * then run as word-wise bit operations. */
#define QR_DENSE_DIV 16u
#define QR_DENSE_MIN_ROWS 1024u

/* postings block encodings */
enum { PB_PACKED = 0, PB_BITMAP = 1 };

#endif
