/* segment.h - immutable segment files: writing a batch as a segment, opening
 * one (validating its footer), and reading its columns row by row.
 *
 * A segment stores every column of its rows, sorted by the table's sort
 * column (NULLs first, ties in input order; insertion order without one),
 * so row id order is time order. It describes itself: the footer names
 * each column and its type, and each index section its column and kind. Layout in
 * segfmt.h and docs/FORMAT.md. An open qr_segment is read-only and may be
 * shared by threads; a qr_colreader is one thread's cursor over one column
 * (it caches the block it last decoded).
 */
#ifndef QR_SEGMENT_H
#define QR_SEGMENT_H

#include <pthread.h>
#include <stdint.h>

#include "format/batch.h"
#include "util/err.h"
#include "util/json.h"

#define QR_SEG_MAX_SECTIONS_PUBLIC 64 /* = QR_SEG_MAX_SECTIONS in segfmt.h */

typedef struct qr_seg_opts {
    int zstd_level;      /* level for every compressed block (default 3) */
    uint32_t page_bytes; /* target raw bytes of a string page (default 4 KiB) */
    uint32_t zdict_bytes; /* trained zstd dictionary size, 0 = none (64 KiB) */
    /* Section blocks longer than 2^chunk_shift bytes get one checksum per
     * chunk of that size (default QR_SEG_CHUNK_SHIFT, 4 KiB; 0 = never;
     * else QR_SEG_CHUNK_SHIFT_MIN..MAX). */
    uint8_t chunk_shift;
    /* 1: the file is not fsynced before its rename (a live segment, which
     * the write-ahead log covers until a commit rewrites it: sql/live.c) */
    uint8_t no_sync;
} qr_seg_opts;

void qr_seg_opts_default(qr_seg_opts *o);

typedef struct qr_seg_summary {
    uint64_t rows;
    int64_t min_ts, max_ts; /* over non-NULL timestamps; 0/0 if none */
    uint64_t file_bytes;
} qr_seg_summary;

/* A section: blocks a higher layer (the inverted index) stores in the
 * segment and reads back through qr_seg_section / qr_seg_sec_block. */
typedef struct qr_sec_block {
    uint8_t kind;     /* >= QR_BLK_SECTION_MIN */
    const void *p;
    size_t n;
    uint32_t count;   /* free for the owner (stored as the entry's row count) */
    int64_t min, max; /* free for the owner */
} qr_sec_block;

typedef struct qr_sec_in {
    uint16_t id;
    uint16_t col;  /* the indexed column (position in the batch's definition) */
    uint8_t kind;  /* index kind (qr_ixkind) */
    uint8_t flags; /* QR_SECF_* */
    uint32_t nblocks;
    const qr_sec_block *blocks;
} qr_sec_in;

/* The stored row order of batch b: perm[i] is the batch row stored as row
 * i (sort column ascending, NULLs first, ties in input order; the identity
 * without a sort column). malloc'ed; NULL when out of memory. */
uint32_t *qr_seg_time_order(const qr_batch *b);

/* Write batch b in the order perm (from qr_seg_time_order) with extra
 * sections, like qr_seg_write. */
int qr_seg_write_ex(const char *path, const qr_batch *b, const uint32_t *perm,
                    const qr_sec_in *secs, uint32_t nsecs, const qr_seg_opts *o,
                    qr_seg_summary *out, qr_err *e);

/* Encode batch b as a segment at `path`: writes path + ".tmp", fsyncs it
 * (unless o->no_sync) and renames it into place (the caller fsyncs the directory when it commits
 * the manifest). On failure nothing is left at either name. */
int qr_seg_write(const char *path, const qr_batch *b, const qr_seg_opts *o, qr_seg_summary *out,
                 qr_err *e);

/* ---- reading ---- */
typedef struct qr_blockref {
    uint64_t offset;
    uint32_t length, first_row, rows, checksum;
    uint8_t kind, flags;
    /* Verification units: chunk_shift 0 = the whole block is one (its
     * checksum), else chunks of 2^chunk_shift bytes (format 9). nchunks of
     * them (a chunked empty block has none), the first at chunk0 in the
     * segment's verified bits; a chunked block's checksums are from sum0 on in
     * the segment's checksum table. */
    uint8_t chunk_shift;
    uint32_t nchunks, chunk0, sum0;
    int64_t min, max;
} qr_blockref;

typedef struct qr_colmeta {
    const char *name;  /* in the segment's footer copy (qr_segment.names) */
    uint8_t type;      /* qr_type */
    uint8_t hex_bytes; /* ENC_HEXID: bytes of a canonical id */
    uint8_t encoding;
    uint64_t null_count, raw_bytes;
    uint32_t nblocks;
    qr_blockref *blocks;
    int32_t dict_blk, zdict_blk, keys_blk; /* index in blocks, or -1 */
    uint32_t first_data, ndata;            /* data blocks are contiguous */
    /* Format 10: a column of many blocks keeps their directory out of the
     * footer (a zstd frame at dir_off), read on first use: until `loaded`
     * (atomic) is set, blocks, the *_blk fields, first_data and ndata are
     * not valid -- reach them through qr_seg_colmeta (colreaders do). */
    int lazy, loaded;
    uint64_t dir_off;
    uint32_t dir_len, dir_raw, dir_sum;
    uint32_t chunk_base; /* the first of its blocks' verified bits (chunk_ok) */
    /* The ZSTD_DDict of zdict_blk, made by the first reader that needs it
     * and shared by every reader after (a DDict is read-only; building one
     * copies the dictionary and its tables, ~0.1 ms for Body's 640 KiB,
     * which every query reading a paged column used to pay per segment);
     * set once (atomic), freed by qr_seg_close. */
    void *ddict;
} qr_colmeta;

typedef struct qr_section {
    uint16_t id;
    uint16_t col; /* column position in the segment */
    uint8_t kind, flags;
    uint32_t nblocks;
    qr_blockref *blocks;
} qr_section;

typedef struct qr_segment {
    char *path;
    const unsigned char *map; /* whole file, mmap'ed read-only */
    size_t len;
    uint64_t rows;
    int64_t min_ts, max_ts; /* over the sort column's non-NULL values */
    int32_t sort_col;       /* column position, or -1 */
    uint64_t footer_bytes;  /* footer and trailer */
    uint64_t dir_bytes;     /* out-of-line column directories (format 10) */
    uint32_t ncols;
    qr_colmeta *cols;
    char *names;            /* column names, NUL-terminated, one buffer */
    uint32_t nsecs;
    qr_section *secs; /* nsecs of them */
    qr_blockref *all_blocks;
    size_t nall;
    uint32_t version;     /* format version (QR_SEG_VERSION_MIN..QR_SEG_VERSION) */
    /* The chunked blocks' chunk checksums, little-endian u32s, block b's
     * from index b->sum0 on: in the mapped file (format 12: the table
     * before the footer, verified at open) or, for older formats, copied
     * out of the footer into own_sums. nsums of them. */
    const unsigned char *chunk_sums;
    unsigned char *own_sums;
    size_t nsums, sums_used; /* sums_used: taken by the entries read so far */
    uint64_t *chunk_ok;   /* bit per chunk: verified in this open (atomic:
                           * threads sharing the segment set them) */
    size_t nchunks;
    uint64_t *codes_ok;   /* made on first use (qr_seg_codes_ok; NULL until then, atomic):
                           * bit per chunk too, at a block's chunk0: its dictionary codes were
                           * checked in range in this open (colreader.c; atomic) */
    uint64_t data_end;    /* where the blocks end: the checksum table (format 12) or footer */
    pthread_mutex_t dir_mu; /* taken to read an out-of-line column directory */
    int dir_mu_init;
    /* Rows deleted by DELETE (index/deletes.h attaches them when the table
     * opens the segment; owned, freed by qr_seg_close): bit r of the
     * ceil(rows/64) little-endian words is set when row r is gone. NULL:
     * none. Searches exclude these rows; the file itself keeps them. */
    uint64_t *deleted;
    uint64_t ndeleted;
} qr_segment;

static inline int qr_seg_is_deleted(const qr_segment *s, uint32_t row)
{
    return s->deleted && (s->deleted[row >> 6] >> (row & 63) & 1);
}

/* Open and validate a segment (trailer, version, footer checksum, directory
 * structure). Block checksums are verified when a block is first decoded;
 * chunked blocks chunk by chunk, when a reader asks for bytes of a chunk
 * (qr_seg_check). */
qr_segment *qr_seg_open(const char *path, qr_err *e);
void qr_seg_close(qr_segment *s);
/* Column col with its block directory, read now if it is out of line
 * (format 10; once per open, thread-safe): NULL with e set (QR_E_CORRUPT
 * naming the segment and column, QR_E_NOMEM). Name, type, encoding and
 * NULL count are valid in s->cols without it. */
const qr_colmeta *qr_seg_colmeta_slow(const qr_segment *s, int col, qr_err *e);
static inline const qr_colmeta *qr_seg_colmeta(const qr_segment *s, int col, qr_err *e)
{
    const qr_colmeta *cm = &s->cols[col];
    return __atomic_load_n(&cm->loaded, __ATOMIC_ACQUIRE) ? cm : qr_seg_colmeta_slow(s, col, e);
}
/* A definition of the segment's own columns (names, types, sort column; no
 * indexes): for reading a segment without its table. Free with
 * qr_tabdef_free; NULL with e set when out of memory. */
qr_tabdef *qr_seg_tabdef(const qr_segment *s, qr_err *e);
/* The column named `name` (case-insensitive), or -1. */
int qr_seg_col(const qr_segment *s, const char *name);
/* The bytes of block `bi` of column `col`, checksum verified. */
int qr_seg_block(const qr_segment *s, int col, uint32_t bi, const unsigned char **p,
                 size_t *len, qr_err *e);
/* The section with this id, or NULL. */
const qr_section *qr_seg_section(const qr_segment *s, uint16_t id);
/* The bytes of block `bi` of a section, checksum verified (every chunk;
 * once per open). */
int qr_seg_sec_block(const qr_segment *s, const qr_section *sec, uint32_t bi,
                     const unsigned char **p, size_t *len, qr_err *e);
/* The same bytes, not verified: for a block read in parts, whose reader
 * calls qr_seg_check on each range before decoding it. */
int qr_seg_sec_map(const qr_segment *s, const qr_section *sec, uint32_t bi, const unsigned char **p,
                   size_t *len, qr_err *e);

/* Verify bytes [off, off + n) of block b (of segment s) before decoding
 * them: the checksums of the chunks holding them (format 8 and unchunked
 * blocks: the whole block), each computed once per open; threads sharing
 * s may call it at once. `name` (static, may be NULL) names the block's
 * kind in messages (its owner knows it: "POSTINGS"). 0, or QR_E_CORRUPT
 * naming the segment, the block and the chunk, or the range when it does
 * not lie inside the block. The test of the verified bit is inline: calls
 * on verified bytes cost a few loads. */
int qr_seg_check_slow(const qr_segment *s, const qr_blockref *b, uint64_t off, uint64_t n,
                      const char *name, qr_err *e);

/* s->codes_ok, made (zeroed) by its first caller: most opens read no
 * dictionary-coded column, and the bits cost a page of zeroed memory a
 * segment. NULL when out of memory (the caller then checks the codes
 * without remembering). Thread-safe. */
uint64_t *qr_seg_codes_ok(const qr_segment *s);
static inline int qr_seg_chunk_ok(const qr_segment *s, uint32_t c)
{
    return (int)(__atomic_load_n(&s->chunk_ok[c >> 6], __ATOMIC_ACQUIRE) >> (c & 63) & 1);
}
static inline int qr_seg_check(const qr_segment *s, const qr_blockref *b, uint64_t off, uint64_t n,
                               const char *name, qr_err *e)
{
    if (n && off < b->length && n <= b->length - off) {
        uint32_t c0 = b->chunk0, c1 = b->chunk0;
        if (b->chunk_shift) {
            c0 += (uint32_t)(off >> b->chunk_shift);
            c1 += (uint32_t)((off + n - 1) >> b->chunk_shift);
        }
        /* chunks c0..c1 in one word of bits (a range of up to 64): one test */
        if (c0 >> 6 == c1 >> 6) {
            uint64_t need = (~0ull >> (63 - (c1 - c0))) << (c0 & 63);
            if ((__atomic_load_n(&s->chunk_ok[c0 >> 6], __ATOMIC_ACQUIRE) & need) == need)
                return 0;
        }
    }
    return qr_seg_check_slow(s, b, off, n, name, e);
}
/* 1 when bytes [off, off + n) of block b lie inside it and are verified
 * (no checksum is computed), else 0. */
int qr_seg_checked(const qr_segment *s, const qr_blockref *b, uint64_t off, uint64_t n);
/* Verify every block checksum and decode every block (quarry verify). */
int qr_seg_verify(qr_segment *s, qr_err *e);

typedef struct qr_colreader qr_colreader;

qr_colreader *qr_colr_open(qr_segment *s, int col, qr_err *e);
void qr_colr_close(qr_colreader *r);
/* Random-access mode (late materialisation of scattered rows): a row of an
 * integer or dictionary-coded column whose block is not decoded is read on
 * its own instead of decoding the block (a second read from the same block
 * decodes it whole). Sequential readers leave it off. */
void qr_colr_random(qr_colreader *r, int on);
/* Integer-stored columns (qr_type_is_int: values in the stored domain). */
int qr_colr_int(qr_colreader *r, uint32_t row, int64_t *v, int *isnull, qr_err *e);
/* A whole decoded integer block (data block `di` of the column): n values
 * and NULL flags from row *first_row; valid until the next call on r. */
int qr_colr_int_block(qr_colreader *r, uint32_t di, const int64_t **v, const uint8_t **isnull,
                      uint32_t *first_row, uint32_t *n, qr_err *e);
/* Block-at-a-time twins of qr_colr_bytes (colvec.h uses them): data block
 * `di` of a dictionary-coded column as n codes (0 = NULL, else value
 * code-1 of qr_colr_dict), or of a paged / hex-id column as n slices
 * (p == NULL = NULL). From row *first_row; valid until the next call on r.
 * QR_E_INTERNAL when the column has another encoding. */
int qr_colr_code_block(qr_colreader *r, uint32_t di, const uint64_t **codes, uint32_t *first_row,
                       uint32_t *n, qr_err *e);
int qr_colr_bytes_block(qr_colreader *r, uint32_t di, const qr_slice **vals, uint32_t *first_row,
                        uint32_t *n, qr_err *e);
/* The codes (as qr_colr_code_block's) of rows[0..m) (ascending, all in data
 * block di) into out, read from the packed block in place: a selection
 * that holds few of a block's rows does not unpack all of them. Each code
 * is checked in range (XX001). */
int qr_colr_codes_at(qr_colreader *r, uint32_t di, const uint32_t *rows, uint32_t m,
                     uint32_t *out, qr_err *e);
/* A dictionary-coded column's values, sorted bytewise (*n of them; code c
 * is value c-1), owned by the reader and valid until qr_colr_close; NULL
 * when the column is not dictionary-coded in this segment. */
const qr_slice *qr_colr_dict(const qr_colreader *r, uint32_t *n);
/* String, id and map columns: v->p == NULL means NULL. Map values come in
 * the keyed binary form (see qr_colr_map_json). The slice is valid until the
 * next call on this reader. */
int qr_colr_bytes(qr_colreader *r, uint32_t row, qr_slice *v, qr_err *e);
/* Check a map value (from qr_colr_bytes) as the readers below read it:
 * every pair names a key of the segment and the pairs fill the value
 * exactly. 0, or -1 with e set (XX001 naming the column). */
int qr_colr_map_check(const qr_colreader *r, qr_slice v, qr_err *e);
/* Append a map value (from qr_colr_bytes) as a canonical JSON object. */
int qr_colr_map_json(qr_colreader *r, qr_slice v, qr_buf *out, qr_err *e);
/* Append a map value (from qr_colr_bytes) in the batch's map text (keys
 * spelled out: batch.h), as the segment writer takes it. */
int qr_colr_map_text(qr_colreader *r, qr_slice v, qr_buf *out, qr_err *e);
/* A dictionary-coded column's code for a value (the block min/max of DATA
 * blocks are codes: a block whose range misses it cannot hold the value):
 * > 0 the code, 0 when no row has the value, -1 when the column is not
 * dictionary-coded in this segment. */
int64_t qr_colr_dict_code(const qr_colreader *r, const char *p, size_t n);
/* The segment column a reader reads. */
int qr_colr_col(const qr_colreader *r);
/* Its column's description (type, encoding, blocks with min/max). */
const qr_colmeta *qr_colr_meta(const qr_colreader *r);

/* Append an integer-stored value of type `type` as JSON (timestamps in the
 * format fmt; see qr_tsfmt). */
void qr_value_int_json(int type, int fmt, int64_t v, qr_buf *out);

/* Readers for the columns of table definition d in segment s: rd[i] reads
 * d->cols[i], or is NULL when the segment has no such column (it was added
 * later: NULL in every row). A column whose type differs is an error. */
int qr_row_readers_open(qr_segment *s, const qr_tabdef *d, qr_colreader **rd, qr_err *e);
void qr_row_readers_close(const qr_tabdef *d, qr_colreader **rd);
/* What qr_row_readers_open maps, for readers that come from elsewhere (a
 * segment cache's pool): the segment column of d->cols[i] (>= 0), -1 when
 * the segment has none (added after it was written), -2 with e set when
 * its type is not the table's. */
int qr_row_reader_col(const qr_segment *s, const qr_tabdef *d, uint32_t i, qr_err *e);
/* Append row `row` as one canonical NDJSON line (with '\n'): the columns
 * of d in order (NULL as null, or left out when d->omit_nulls), the members
 * of the catch-all column spread among them at its place. */
int qr_row_json(const qr_tabdef *d, qr_colreader *const *rd, uint32_t row, qr_buf *out,
                qr_err *e);

#endif
