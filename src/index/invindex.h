/* invindex.h - the inverted indexes of a segment: building the sections
 * of a table's indexes when a segment is written, and opening one for
 * search.
 *
 * Kinds (schema.h qr_ixkind): full text (tokenizer terms with frequencies,
 * positions and norms; on json/map columns the string leaves), keyword
 * (the exact value is the one term; docs only), range (a number as a term
 * that sorts like the number, qr_range_term: a range is a run of terms),
 * paths (json/map: every leaf as "path\0value"). Keyword and path terms
 * longer than QR_MAX_TERM bytes are not indexed (they cannot be looked
 * up).
 */
#ifndef QR_INVINDEX_H
#define QR_INVINDEX_H

#include <stdatomic.h>
#include <stdint.h>

#include "format/segment.h"
#include "index/postings.h"
#include "index/shapes.h"
#include "index/shapewords.h"
#include "index/valshapes.h"
#include "index/termdict.h"
#include "util/qctx.h"

/* What a section says about its index. */
typedef struct qr_field_def {
    uint16_t sec;     /* section id = the table's index id */
    int col;          /* indexed column in the segment */
    uint8_t kind;     /* qr_ixkind */
    uint8_t coltype;  /* the column's qr_type */
    int fulltext;     /* 1: tokenized with tf/norms */
    int positions;    /* full text with positions */
    int lowercase;    /* full text, case folded */
    const char *name; /* the column's name, for messages */
} qr_field_def;

/* Sort batch b by its sort column, build every index of its definition and
 * write the segment (qr_seg_write_ex). What ingest calls. */
int qr_segment_build(const char *path, const qr_batch *b, const qr_seg_opts *o,
                     qr_seg_summary *out, qr_err *e);

/* Rows [lo, hi) of an open segment, as a merge's source. */
typedef struct qr_merge_src {
    qr_segment *seg;
    uint32_t lo, hi;
} qr_merge_src;

/* Write one segment at path from the rows of src[0..nsrc) (in table order)
 * that are in their range, not deleted and, unless min_sort is INT64_MIN,
 * whose sort value is NULL or >= min_sort: their column values decoded
 * into a batch (no text in between), in time order, every index of d
 * merged from the sources' postings where each source has it as d says
 * (else built from the values). The bytes are those qr_segment_build
 * writes for the same rows. No rows left: no file, out->rows = 0. Stops
 * with 57014 when ctx says (qr_qctx_check; ctx may be NULL). */
int qr_segment_merge(const char *path, const qr_tabdef *d, const qr_merge_src *src, uint32_t nsrc,
                     int64_t min_sort, qr_qctx *ctx, const qr_seg_opts *o,
                     qr_seg_summary *out, qr_err *e);

/* 1 when segment s holds index x of d as d defines it (its section id,
 * kind, column and analyzer options), else 0: an index created after the
 * segment was written and not yet built for it (sql/merge.h). */
int qr_seg_has_index(const qr_segment *s, const qr_tabdef *d, const qr_ixdef *x);

/* Terms of a json text's leaves for a paths index: calls fn for each
 * "path\0value" (value: a string's bytes, else its JSON text); `buf` is
 * scratch. Returns -1 on malformed JSON or when fn fails. */
int qr_json_path_terms(const char *json, size_t n, qr_buf *buf,
                       int (*fn)(void *ctx, const char *t, size_t n), void *ctx);

/* One field's index in an open segment. Valid while the segment is open.
 * post, pos_map, norms_map and bitmaps are mapped, not verified: their
 * readers verify each range before decoding it (qr_invfield_cursor,
 * qr_invfield_bitmap); pos and norms are set once verified (phrases,
 * scorers: qr_invfield_load_positions, qr_invfield_load_norms).
 * An open field may be shared by threads (index/segcache.h opens each one
 * once for every query): everything but `pos` and `norms` is written only
 * by qr_invfield_open, and those two are published with a release store of
 * the pointer mapped at open; read them through qr_invfield_positions and
 * qr_invfield_norms (acquire loads: plain loads on x86). */
typedef struct qr_invfield {
    const qr_segment *seg;
    qr_field_def def;
    qr_tdict dict;
    const unsigned char *post, *pos, *bitmaps; /* pos: NULL until a phrase needs it */
    const uint8_t *norms;                      /* NULL until a scorer needs them */
    const unsigned char *pos_map, *norms_map;  /* the POSITIONS and NORMS blocks (or NULL) */
    size_t post_len, pos_len, bitmaps_len;
    const qr_section *sec;
    const qr_blockref *post_ref, *pos_ref, *bm_ref, *norms_ref; /* their blocks (NULL: none) */
    uint64_t docs_with_field, total_tokens;
    uint32_t rows;
    /* positional full text: the SHAPES block (NULL: none), its header
     * parsed on first use into shapes_hdr (owned; published with a
     * compare-and-swap; a marker when it did not parse: not at open, where
     * touching the block's first page cost a page fault per segment for
     * the many queries that use no shapes); `shapes` is set once verified
     * (qr_invfield_load_shapes) */
    const unsigned char *shapes_map;
    size_t shapes_len;
    const qr_blockref *shapes_ref;
    qr_shapes *shapes_hdr;
    const qr_shapes *shapes;
    /* set once the header and text are verified (or the whole block):
     * what reads no row's number needs (qr_invfield_load_shape_text) */
    const qr_shapes *shape_text;
    /* the SHAPEROWS block (NULL: none, a segment written before it) */
    const unsigned char *shaperows_map;
    size_t shaperows_len;
    const qr_blockref *shaperows_ref;
    /* the SHAPEWORDS block (NULL: none, a segment written before it) */
    const unsigned char *shapewords_map;
    size_t shapewords_len;
    const qr_blockref *shapewords_ref;
    /* keyword: the VALSHAPES block (NULL: none), parsed on first use into
     * valshapes_hdr as SHAPES is; `valshapes` is set once verified
     * (qr_invfield_valshapes) */
    const unsigned char *valshapes_map;
    size_t valshapes_len;
    const qr_blockref *valshapes_ref;
    qr_valshapes *valshapes_hdr;
    const qr_valshapes *valshapes;
    /* the shapes' row counts and text offsets, built on first use and
     * published with a release store; NULL until then */
    qr_shape_stats *shape_stats;
    /* which shapes hold each word (for score bounds), parsed from
     * SHAPEWORDS or made from the text on first use, likewise */
    qr_shape_words *shape_words;
    /* the rows of each shape (k + 1): SHAPEROWS in place once verified,
     * else the statistics' (qr_invfield_load_shape_rows) */
    const uint32_t *shape_rows;
    /* keyword fields: each row's term ordinal (kwords.c), built on first
     * use and published with a release store; NULL until then */
    uint32_t *ords;
    /* each term's 64-bit hash (qr_hash64 of its bytes) by ordinal: built on
     * first use (index/keymap.c), published likewise; NULL until then */
    uint64_t *hashes;
    /* Which open of which field this is: unique in the process (an open
     * after a close gets a new one), so a structure built from the field's
     * terms (index/keymap.h) can tell the field it was built from. */
    uint64_t serial;
} qr_invfield;

/* Open field `sec` of segment s: FIELDSTATS and TERMINDEX verified (once
 * per open of s), the rest verified as it is read. A segment without
 * the section is an error (QR_E_UNDEFINED_OBJECT: the index was created
 * after the segment was written). */
int qr_invfield_open(qr_invfield *f, const qr_segment *s, uint16_t sec, qr_err *e);
void qr_invfield_close(qr_invfield *f);
/* The bitmap of a dense term (ti->has_bitmap): ceil(rows/64) little-endian
 * 64-bit words, possibly unaligned (read with memcpy), verified. NULL (e
 * set) when the offset is out of range or the words do not verify. */
const unsigned char *qr_invfield_bitmap(qr_invfield *f, const qr_terminfo *ti, qr_err *e);
/* The same once qr_invfield_bitmap has verified this term's words: NULL
 * when it has not, or the term has no bitmap in range (no error: callers
 * then go without it). */
const unsigned char *qr_invfield_bitmap_mapped(const qr_invfield *f, const qr_terminfo *ti);
/* The norms a dense term of a field with tfs has rows at (ti->has_multi:
 * format 11 on): 64 bytes, bit n of the first 32 (byte n/8, bit n%8) set
 * when some row of the term has norm code n, of the last 32 when some row
 * holding it more than once does; verified. NULL with e set (XX001) when
 * out of range or they do not verify. */
const unsigned char *qr_invfield_norm_mask(qr_invfield *f, const qr_terminfo *ti, qr_err *e);
/* The rows where a dense term of a field with tfs occurs more than once
 * (ti->has_multi: format 11 on), set as bits in `bits` (ceil(rows/64)
 * words, zeroed by the caller), verified. -1 with e set (XX001) when the
 * list is out of range, does not verify or does not decode to rows in
 * ascending order inside the segment. */
int qr_invfield_multi_bits(qr_invfield *f, const qr_terminfo *ti, uint64_t *bits, qr_err *e);
/* A keyword field's terms by row: ords[r] is the ordinal (position in
 * dictionary order, 0 ..) of row r's value, QR_NO_ORD for a row without one
 * (NULL, or longer than a term may be). Built on first use by one walk of
 * every term's postings (kwords.c), then kept with the open field (4 bytes
 * a row, freed by qr_invfield_close; not charged to a query: it belongs to
 * the segment, as its mapped blocks do) and shared by every query; threads
 * racing to build it publish one copy and free the others. Every ordinal
 * is below f->dict.nterms (callers index per-key arrays by it). ctx (may be
 * NULL) can stop the build (57014; nothing kept). NULL with e set: not a
 * keyword field (XX000), out of memory, corrupt postings (XX001: a doc out
 * of range or in two terms) or dictionary (XX001: more terms than it says). */
#define QR_NO_ORD UINT32_MAX
const uint32_t *qr_invfield_ordinals(qr_invfield *f, qr_qctx *ctx, qr_err *e);
/* Each term's qr_hash64 by ordinal (f->dict.nterms of them): built on
 * first use by one walk of the dictionary, then kept with the open field
 * as the ordinals are (8 bytes a term, uncharged). NULL with e set: out of
 * memory, canceled (57014, nothing kept), a dictionary whose term count is
 * not the one it says (XX001). */
const uint64_t *qr_invfield_term_hashes(qr_invfield *f, qr_qctx *ctx, qr_err *e);
/* fn(arg, row) for each row holding term ti of field f, ascending (c: a
 * cursor for block postings). fn returns 0 to go on, -2 for corrupt
 * postings (a row out of range is that too: XX001 with e set, -1
 * returned), or anything else to stop with that value. */
typedef int (*qr_row_fn)(void *arg, uint32_t row);
int qr_invfield_term_rows(qr_invfield *f, const qr_terminfo *ti, qr_pcursor *c, qr_row_fn fn,
                          void *arg, qr_err *e);
/* The ordinal of term t (n bytes, as the index holds it) once the field's
 * ordinals are built: 1 with *o set, 0 when no row holds it, -1 with e set
 * (corrupt postings, ordinals not built: XX000). */
int qr_invfield_ordinal_of(qr_invfield *f, const char *t, size_t n, uint32_t *o, qr_err *e);
/* Give cursors positions from now on (full-text fields; once). Cursors
 * opened before it carry none: call it before a phrase. */
int qr_invfield_load_positions(qr_invfield *f, qr_err *e);
/* Verify the NORMS block (once) and set f->norms (full-text fields; others
 * have none and stay NULL): what a scorer calls before reading norms. */
int qr_invfield_load_norms(qr_invfield *f, qr_err *e);
/* Verify the SHAPES block (once) and set f->shapes: what a phrase whose
 * words are not variable calls to check positions once per shape. A field
 * without the block (written before it existed, or no positions) keeps
 * NULL; 0, or -1 (XX001) when the block does not verify or parse. */
int qr_invfield_load_shapes(qr_invfield *f, qr_err *e);
static inline const qr_shapes *qr_invfield_shapes(const qr_invfield *f)
{
    return __atomic_load_n(&f->shapes, __ATOMIC_ACQUIRE);
}
/* The same for what reads only the shapes' text (score bounds, counts
 * by text, which take the rows per shape from SHAPEROWS): the header and
 * the text verified, not the rows' numbers. */
int qr_invfield_load_shape_text(qr_invfield *f, qr_err *e);
static inline const qr_shapes *qr_invfield_shape_text(const qr_invfield *f)
{
    return __atomic_load_n(&f->shape_text, __ATOMIC_ACQUIRE);
}
/* The shapes' statistics (index/shapes.h), built once per open of the
 * segment (one pass over the rows' numbers) once the shapes are loaded;
 * NULL with e set on failure (out of memory, corrupt: XX001). */
const qr_shape_stats *qr_invfield_shape_stats(qr_invfield *f, qr_err *e);
/* A keyword field's VALSHAPES block (index/valshapes.h), verified and
 * parsed on first use: NULL when it has none, or with *bad and e set
 * (XX001) when it does not verify or parse (or out of memory). Thread-safe. */
const qr_valshapes *qr_invfield_valshapes(qr_invfield *f, int *bad, qr_err *e);
/* Everything the open field f holds, read as queries read it and
 * checked beyond its checksums (quarry verify): every term in strictly
 * increasing order with an info that decodes and lists that verify, as
 * many terms as the index says; the norms and positions; SHAPES whole,
 * each row's shape number at most K and the rows per shape equal to
 * SHAPEROWS; SHAPEWORDS equal to what the shapes' text makes; VALSHAPES
 * parsed. 0, or -1 with e set (XX001 naming the segment and block). */
int qr_invfield_verify(qr_invfield *f, qr_err *e);
/* Which of the shapes hold each word (index/shapewords.h), loaded once
 * per open: the SHAPEWORDS block verified and parsed, or for a segment
 * written before it, made from the shapes' text (verified). Nothing else
 * of the shapes is read, so a top-k's bounds and a multi-term count by
 * shapes need not verify the text. 0 (the accessor NULL when the field
 * has no shapes), or -1 (XX001: a block that does not verify or parse;
 * out of memory). Thread-safe. */
int qr_invfield_load_shape_words(qr_invfield *f, qr_err *e);
static inline const qr_shape_words *qr_invfield_shape_words(const qr_invfield *f)
{
    return __atomic_load_n(&f->shape_words, __ATOMIC_ACQUIRE);
}
/* The SHAPES header for reading rows' numbers (qr_invfield_row_shape)
 * into *sh: its bytes verified, not the text's (a few rows' numbers need
 * neither the text nor the chunks of the other rows). *sh NULL when the
 * field has no shapes; 0, or -1 with e set (XX001). Thread-safe. */
int qr_invfield_shape_numbers(qr_invfield *f, const qr_shapes **sh, qr_err *e);
/* Row r's shape number into *j, read where it lies in the SHAPES header
 * sh (qr_invfield_shape_numbers): the chunk of SHAPES holding it
 * verified, not the block. 0, or -1 with e set (XX001: a row past the
 * segment, a shape past k, a chunk that does not verify). */
int qr_invfield_row_shape(qr_invfield *f, const qr_shapes *sh, uint32_t r, uint32_t *j, qr_err *e);
/* Of the rows set in bits (a segment's deleted rows), how many have a
 * shape marked in mark[0..k]: each row's shape number read where it lies,
 * the chunk of SHAPES holding it verified (not the block), the header
 * verified (qr_invfield_shape_numbers). 1 with *n, 0 when the field
 * has no shapes, -1 with e set (XX001: a row naming a shape past k). */
int qr_invfield_rows_in_shapes(qr_invfield *f, const uint64_t *bits, const uint8_t *mark,
                               uint64_t *n, qr_err *e);
/* The rows of each shape (k + 1 counts, 0 first: rows without tokens),
 * loaded once per open: SHAPEROWS verified whole, its size and sum
 * checked, read in place; a segment without it counts them from the
 * statistics (qr_invfield_shape_stats). 0 (the accessor NULL when the
 * field has no shapes), or -1 with e set (XX001). Thread-safe. */
int qr_invfield_load_shape_rows(qr_invfield *f, qr_err *e);
static inline const uint32_t *qr_invfield_shape_rows(const qr_invfield *f)
{
    return __atomic_load_n(&f->shape_rows, __ATOMIC_ACQUIRE);
}
/* The positions / norms once loaded (above), else NULL; thread-safe. */
static inline const unsigned char *qr_invfield_positions(const qr_invfield *f)
{
    return __atomic_load_n(&f->pos, __ATOMIC_ACQUIRE);
}
static inline const uint8_t *qr_invfield_norms(const qr_invfield *f)
{
    return __atomic_load_n(&f->norms, __ATOMIC_ACQUIRE);
}
/* Verify what a cursor on term ti reads: its postings and, once positions
 * are loaded, its positions (the chunks holding them, once per open of the
 * segment). qr_invfield_cursor does it as well; a caller that opens cursors
 * without an error to fill (qr_it_postings, phrases) calls this first so
 * that a mismatch is reported: QR_E_CORRUPT naming segment, block, chunk. */
int qr_invfield_check_term(const qr_invfield *f, const qr_terminfo *ti, qr_err *e);
/* A postings cursor for a term of this field, its bytes verified first (a
 * cursor that fails is corrupt and empty). */
int qr_invfield_cursor(const qr_invfield *f, const qr_terminfo *ti, qr_pcursor *c, qr_err *e);

#endif
