/* postings.h - postings lists: encoding one term's docs (with term
 * frequencies and positions for full-text fields) and cursors that walk
 * them with next / advance / tf / positions.
 *
 * Term info (stored in the term dictionary right after the term):
 *   varint postings length, varint positions length (full-text fields);
 *   offsets are implicit: a term's lists start where the previous term's
 *   end, from a base the dictionary keeps per 64-term block;
 *   varint df, u8 kind
 *   TI_INLINE (df <= 2): per doc varint doc gap (first absolute, then
 *     doc - prev - 1); if freqs: varint tf per doc
 *   TI_BLOCKS: kind has TI_HAS_BITMAP set for dense terms, then varint
 *     word offset of the term's bitmap in the BITMAPS block
 *     (ceil(rows/64) little-endian words)
 * Postings list (TI_BLOCKS), at its offset in the POSTINGS block:
 *   a list of one block (df <= 128) starts with varint last doc instead of
 *   a skip table; otherwise
 *   skip table: one 16-byte entry per 128-doc block: u32 last doc,
 *     u32 block data offset (from the end of the skip table), u32 positions
 *     offset of the block's first doc (from the term's positions start),
 *     u8 max tf in the block (clamped 255), u8 smallest norm code in the
 *     block, u8 smallest norm of the block's docs with tf 1, u8 smallest
 *     norm of its docs with tf >= 2 (255: no such doc; both 0 in lists
 *     written before these existed, and for docs-only fields) -- the
 *     block-max data that top-k pruning uses: every doc is dominated by
 *     one of the impacts (1, norm1), (max tf, norm2)
 *   blocks: u8 encoding; PB_PACKED: u8 width, packed gaps (first from the
 *     previous block's last doc + 1, then doc - prev - 1); PB_BITMAP: bitmap
 *     over [previous last doc + 1, last doc] (chosen when smaller, i.e. for
 *     dense runs); then if freqs: u8 width, packed tf - 1.
 * Positions: per doc in order, tf varints: first position, then gaps.
 * Every length is checked: a malformed list makes the cursor report corrupt
 * instead of reading outside its block.
 */
#ifndef QR_POSTINGS_H
#define QR_POSTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "index/invfmt.h"
#include "util/buf.h"

#define QR_NO_DOC UINT32_MAX

typedef struct qr_terminfo {
    uint32_t df;
    uint8_t kind;
    uint32_t idocs[QR_INLINE_DF], itfs[QR_INLINE_DF];
    uint64_t post_off, post_len, pos_off, pos_len;
    int has_bitmap;
    uint64_t bm_word; /* word offset of the bitmap in BITMAPS */
} qr_terminfo;

/* ---- writing ---- */
typedef struct qr_postw {
    int has_freqs, has_pos;
    qr_buf *post, *pos; /* the field's POSTINGS and POSITIONS streams */
    const uint8_t *norms; /* per doc (full-text fields), for block min norm */
    qr_buf *bitmaps;      /* the field's BITMAPS stream */
    uint32_t rows;        /* rows in the segment */
} qr_postw;

/* Encode one term: docs ascending (df of them), tfs[i] and, flattened, the
 * tfs[i] positions of each doc (ascending within a doc). Appends the term
 * info to ti. Returns 0, or -1 when out of memory. */
int qr_postw_term(qr_postw *w, const uint32_t *docs, const uint32_t *tfs,
                  const uint32_t *positions, uint32_t df, qr_buf *ti);

/* ---- reading ---- */
/* Decode a term info whose lists start at post_off / pos_off. */
int qr_terminfo_read(qr_rd *r, int has_freqs, int has_pos, uint64_t post_off, uint64_t pos_off,
                     qr_terminfo *ti);

typedef struct qr_pcursor {
    const unsigned char *post, *pos; /* the field's streams */
    size_t post_len, pos_len;
    int has_freqs, has_pos;
    qr_terminfo ti;
    const unsigned char *skip, *data, *tpos; /* this term's parts */
    size_t data_len, tpos_len;
    uint32_t nblocks, blk; /* blk = decoded block, nblocks = none yet */
    uint32_t n, i;         /* docs in the decoded block, index of current */
    uint32_t doc;          /* current doc, QR_NO_DOC at end */
    int corrupt;           /* sticky: the list is malformed */
    uint32_t decoded;      /* blocks decoded so far (statistics) */
    const unsigned char *pcur; /* positions of doc pcur_i of the block */
    uint32_t pcur_i;
    unsigned char single[QR_SKIP_ENTRY]; /* skip entry of a one-block list (so a
                                          * cursor must not be copied once open) */
    uint32_t docs[QR_POSTING_BLOCK], tfs[QR_POSTING_BLOCK];
} qr_pcursor;

/* Position the cursor before the first doc of a term. Returns 0 or -1
 * (corrupt term info location). */
int qr_pc_open(qr_pcursor *c, const unsigned char *post, size_t post_len,
               const unsigned char *pos, size_t pos_len, int has_freqs, int has_pos,
               const qr_terminfo *ti);
/* Next doc, or QR_NO_DOC. */
uint32_t qr_pc_next(qr_pcursor *c);
/* First doc >= target (target > current doc), or QR_NO_DOC. */
uint32_t qr_pc_advance(qr_pcursor *c, uint32_t target);
/* Term frequency in the current doc (1 for docs-only fields). */
static inline uint32_t qr_pc_tf(const qr_pcursor *c) { return c->tfs[c->i]; }
/* Positions of the current doc into out (up to max); returns how many the
 * doc has (may exceed max), or -1 when corrupt. */
int64_t qr_pc_positions(qr_pcursor *c, uint32_t *out, uint32_t max);

/* ---- block-max data (top-k pruning), read from the skip table without
 * decoding blocks. Only lists of more than one block have it
 * (qr_pc_skip_blocks() > 1); a caller bounds shorter lists by reading them. */
static inline uint32_t qr_pc_skip_blocks(const qr_pcursor *c)
{
    return c->ti.kind == TI_INLINE ? 1 : c->nblocks;
}
/* Block k < qr_pc_skip_blocks(c): its last doc, its largest term frequency
 * (255 means 255 or more) and its smallest norm code. */
static inline uint32_t qr_pc_block_last(const qr_pcursor *c, uint32_t k)
{
    return qr_load_u32(c->skip + (size_t)k * QR_SKIP_ENTRY);
}
static inline uint32_t qr_pc_block_max_tf(const qr_pcursor *c, uint32_t k)
{
    return c->skip[(size_t)k * QR_SKIP_ENTRY + 12];
}
static inline uint8_t qr_pc_block_min_norm(const qr_pcursor *c, uint32_t k)
{
    return c->skip[(size_t)k * QR_SKIP_ENTRY + 13];
}
/* The block's smallest norm among docs with tf 1 and among docs with
 * tf >= 2 (255 = none). Returns 0 when the block does not record them
 * (then only max tf / min norm bound it). */
static inline int qr_pc_block_impacts(const qr_pcursor *c, uint32_t k, uint8_t *norm1,
                                      uint8_t *norm2)
{
    const unsigned char *se = c->skip + (size_t)k * QR_SKIP_ENTRY;
    *norm1 = se[14];
    *norm2 = se[15];
    return se[14] || se[15];
}

#endif
