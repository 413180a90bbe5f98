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
 * Positions: per doc in order, tf varints: first position, then gaps. A
 * block's positions span from its skip entry's offset to the next one's (the
 * term's end for the last block): when that span equals the sum of the
 * block's tfs, every varint is one byte and a doc's positions are found by
 * a prefix sum of tfs instead of skipping varints (qr_pc_doc_positions).
 * Every length is checked: a malformed list makes the cursor report corrupt
 * instead of reading outside its block.
 */
#ifndef QR_POSTINGS_H
#define QR_POSTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "index/invfmt.h"
#include "util/buf.h"

#define QR_NO_DOC     UINT32_MAX
#define QR_TFW_ARRAYS 0xffu

typedef struct qr_terminfo {
    uint32_t df;
    uint8_t kind;
    uint32_t idocs[QR_INLINE_DF], itfs[QR_INLINE_DF];
    uint64_t post_off, post_len, pos_off, pos_len;
    int has_bitmap;
    uint64_t bm_word; /* word offset of the bitmap in BITMAPS */
    /* dense terms of fields with tfs (format 11 on): how many rows have the
     * term more than once, and the bytes of their list (row gaps as
     * varints), which follows the bitmap and the term's two 32-byte masks
     * of the norms its rows (its rows with tf >= 2) have in BITMAPS;
     * has_multi 0: none of them is there */
    int has_multi;
    uint32_t multi_n;
    uint64_t multi_len;
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
    int docs_only; /* blocks decode their docs and step over their tfs (qr_pc_set_bits) */
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
    uint32_t pblk; /* block whose positions pstart/pbytes describe (UINT32_MAX: none) */
    const unsigned char *pbytes; /* that block's positions when every varint of it
                                  * is one byte, else NULL */
    /* How the block's tfs are held: QR_TFW_ARRAYS in tfs[] (always, after
     * next / advance / seek); 0..2 after qr_pc_at_rank, when the block's
     * tf - 1 values are at most 2 bits wide and its positions one byte
     * each: then tfbits holds them packed (value i at bits [i*w, i*w+w)),
     * tfsum[k] their sum over the words before k, and pbytes is set. */
    uint8_t tfw;
    uint64_t tfhi; /* 0xAAAA... when tfw is 2, else 0 (sum of fields = popcounts) */
    uint64_t tfbits[4];
    uint32_t tfsum[4];
    uint32_t rk_lo, rk_n; /* after qr_pc_at_rank: the ranks of the block's docs */
    uint32_t docs[QR_POSTING_BLOCK], tfs[QR_POSTING_BLOCK];
    uint32_t pstart[QR_POSTING_BLOCK + 1]; /* with pbytes (tfs in arrays): doc i's
                                            * positions are pbytes[pstart[i] ..) */
} qr_pcursor;

/* Position the cursor before the first doc of a term. Returns 0 or -1
 * (corrupt term info location). */
int qr_pc_open(qr_pcursor *c, const unsigned char *post, size_t post_len,
               const unsigned char *pos, size_t pos_len, int has_freqs, int has_pos,
               const qr_terminfo *ti);
/* A cursor on ti that is corrupt and empty, reading nothing: for a term
 * whose bytes did not verify. */
void qr_pc_open_corrupt(qr_pcursor *c, const qr_terminfo *ti);
/* Next doc, or QR_NO_DOC. */
uint32_t qr_pc_next(qr_pcursor *c);
/* First doc >= target (target > current doc), or QR_NO_DOC. */
uint32_t qr_pc_advance(qr_pcursor *c, uint32_t target);
/* Set the bit of every doc left in the list in `bits` (ceil(rows/64)
 * words), a decoded block at a time: how a frequent word joins a bitmap
 * intersection. Returns the docs set, or -1 when the list is corrupt (a
 * doc >= rows included). The cursor ends exhausted. */
int64_t qr_pc_set_bits(qr_pcursor *c, uint64_t *bits, uint32_t rows);
/* Set the bit of every doc left in the list in `bits` as qr_pc_set_bits
 * does: 1 when some of them were set already (by other lists: a row holds
 * two of several words), 0 when none was, -1 when the list is corrupt. */
int64_t qr_pc_union_bits(qr_pcursor *c, uint64_t *bits, uint32_t rows);
/* How many of the docs left in the list have their bit set in `bits`
 * (ceil(rows/64) words, as bytes: any alignment), a decoded block at a
 * time, its tfs stepped over: a rare word probed against a bitmap of the
 * other clauses. -1 when the list is corrupt (a doc >= rows included). The
 * cursor ends exhausted. */
int64_t qr_pc_count_in(qr_pcursor *c, const unsigned char *bits, uint32_t rows);
/* First doc >= target; unlike qr_pc_advance, target may be <= the current
 * doc (the cursor then stays). Inline for the usual case of a target inside
 * the decoded block, which intersections (phrases) hit on almost every call. */
static inline uint32_t qr_pc_seek(qr_pcursor *c, uint32_t target)
{
    if (c->i != UINT32_MAX && c->doc >= target)
        return c->doc;
    if (c->i < c->n && c->docs[c->n - 1] >= target) {
        uint32_t i = c->i;
        while (c->docs[i] < target)
            i++;
        c->i = i;
        return c->doc = c->docs[i];
    }
    return qr_pc_advance(c, target);
}
/* Move to the list's doc number `rank` (0-based), which the caller knows
 * is `doc` (a dense term's row bitmap gives both: rank = set bits below
 * doc), decoding its block's tfs only, never its docs, and those only when
 * they do not fit in 2 bits: what phrases need of a dense word is its tf and
 * positions (qr_pc_doc_positions). Returns doc, or QR_NO_DOC (corrupt) when
 * rank is past the list. A cursor moved this way must not use next /
 * advance / seek / qr_pc_tf afterwards (its docs are not decoded). */
uint32_t qr_pc_at_rank_slow(qr_pcursor *c, uint32_t rank, uint32_t doc);
static inline uint32_t qr_pc_at_rank(qr_pcursor *c, uint32_t rank, uint32_t doc)
{
    uint32_t j = rank - c->rk_lo;
    if (j < c->rk_n) {
        c->i = j;
        return c->doc = doc;
    }
    return qr_pc_at_rank_slow(c, rank, doc);
}
/* Term frequency in the current doc (1 for docs-only fields); after next /
 * advance / seek (qr_pc_doc_positions also gives it after qr_pc_at_rank). */
static inline uint32_t qr_pc_tf(const qr_pcursor *c) { return c->tfs[c->i]; }
/* Positions of the current doc into out (up to max); returns how many the
 * doc has (may exceed max), or -1 when corrupt. */
int64_t qr_pc_positions(qr_pcursor *c, uint32_t *out, uint32_t max);
/* Index the decoded block's positions (prefix sums of its tfs) and find out
 * whether they are all one-byte varints. What qr_pc_doc_positions calls
 * once per block; 0, or -1 when the block's positions are out of range. */
int qr_pc_prep_positions(qr_pcursor *c);
/* The current doc's tf (*tf) and its positions as one byte each, the first
 * absolute and then the gaps, when its block's positions are all one-byte
 * varints (short rows: the usual case), else NULL (then use
 * qr_pc_positions). Random access: positions of docs passed over are never
 * read. The cursor must have positions and sit on a doc. Popcounts inline:
 * a caller compiled for the popcnt instruction gets it here. */
static inline const unsigned char *qr_pc_doc_positions(qr_pcursor *c, uint32_t *tf)
{
    uint32_t i = c->i;
    if (c->tfw != QR_TFW_ARRAYS) { /* bits: sum the tf - 1 fields below i */
        uint32_t bit = i * c->tfw, k = bit >> 6, sh = bit & 63;
        uint64_t x = c->tfbits[k], below = x & ((1ull << sh) - 1);
        *tf = 1 + (uint32_t)((x >> sh) & ((1u << c->tfw) - 1));
        return c->pbytes + i + c->tfsum[k] + (uint32_t)__builtin_popcountll(below) +
               (uint32_t)__builtin_popcountll(below & c->tfhi);
    }
    *tf = c->tfs[i];
    if (c->pblk != c->blk && qr_pc_prep_positions(c) != 0)
        return NULL;
    return c->pbytes ? c->pbytes + c->pstart[i] : NULL;
}

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
