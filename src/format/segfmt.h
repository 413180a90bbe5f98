/* segfmt.h - the on-disk layout of a segment file: constants shared by the
 * writer and the reader. docs/FORMAT.md is the prose version; keep both in
 * step and bump QR_SEG_VERSION on any incompatible change.
 *
 *   [header 16 B][block]...[block][column dirs (zstd)]...[chunk checksums]
 *   [footer (zstd)][trailer 40 B]
 *
 * header : "QRYSEG\r\n" | u32 version | u32 flags(0)
 * block  : bytes located only through the footer's directory; each carries
 *          its checksum (low 32 bits of XXH3-64 of the block bytes) there,
 *          or (format 9, large section blocks) one checksum per chunk of
 *          2^shift bytes, so that a reader verifies only what it reads.
 * footer : zstd frame of: segment meta (rows, sort column and its range),
 *          then per column its name, type, encoding and a directory of its
 *          blocks (kind, offset, length, rows, checksum, min, max; format
 *          9: chunk shift and chunk checksums), then the
 *          sections (indexes) that higher layers store, each naming its
 *          column and index kind, with the same block directory. Format
 *          10: a column of many blocks has its directory out of line
 *          (QR_COLF_DIR_OUT below), read when the column is first read.
 *          Format 12: the chunk checksums leave the footer for a table of
 *          their own just before it (QR_SEG_SUMS_* below). Format 13: a
 *          full-text index with positions has its dictionary blocks'
 *          variable masks in TERMINDEX (index/termdict.h).
 * trailer: u64 footer_offset | u32 footer_len | u32 footer_raw_len |
 *          u32 footer_checksum | u32 version | u64 file_len | "QRYSEGFT"
 * All integers little-endian.
 */
#ifndef QR_SEGFMT_H
#define QR_SEGFMT_H

#include <stdint.h>

#define QR_SEG_MAGIC "QRYSEG\r\n"
#define QR_SEG_TRAILER_MAGIC "QRYSEGFT"
#define QR_SEG_VERSION       13u /* what this build writes (13: variable masks in TERMINDEX) */
#define QR_SEG_VERSION_MIN   8u /* the oldest it reads (8: no chunk checksums) */
#define QR_SEG_HEADER_LEN 16u
#define QR_SEG_TRAILER_LEN 40u
/* bytes of one block directory entry (without its chunk checksums) */
#define QR_SEG_DIRENT_LEN 44u
/* Chunk checksums (format 9): a block entry whose u16 at byte 2 is a shift
 * k (not 0) is followed by ceil(length / 2^k) u32 checksums, chunk i
 * covering bytes [i * 2^k, (i + 1) * 2^k) of the block, and stores 0 as its
 * block checksum. The writer chunks every section block longer than one
 * chunk, with 4 KiB chunks (a page: docs/FORMAT.md says why); readers take
 * any k in range. */
/* Format 12: the chunk checksums are not in the block entries but in one
 * table, uncompressed little-endian u32s, that ends where the footer
 * starts: every chunked block's checksums, in the order the footer lists
 * the blocks (columns, then sections). The footer says how many u32s it
 * holds and their checksum (two u32s after the column count). An open
 * verifies the table where it is mapped and readers use it there: the
 * checksums of ~3,400 chunks a segment were copied out of each footer
 * into fresh memory at every open, the largest part of opening a table
 * of many segments (page faults, and a decompression of incompressible
 * bytes). */
#define QR_SEG_VERSION_SUMS    12u
#define QR_SEG_CHUNK_SHIFT     12u
#define QR_SEG_CHUNK_SHIFT_MIN 10u
#define QR_SEG_CHUNK_SHIFT_MAX 30u
#define QR_SEG_MAX_FOOTER (256u << 20) /* sanity bound on the footer */

#define QR_SEG_NO_SORT 0xFFFFu /* footer sort column: rows in insertion order */
/* Out-of-line column directories (format 10): a column of more than
 * QR_SEG_INLINE_BLOCKS blocks (string pages, id pages) writes its block
 * entries as their own zstd frame in the data area, just before the
 * footer, and the footer keeps a reference (flag QR_COLF_DIR_OUT in the
 * column's flags byte, then after the block count: u64 offset, u32
 * length, u32 raw length = blocks x 44, u32 checksum of the frame). An
 * open then reads only the small columns' and the indexes' directories;
 * a paged column's is read when the column is first read. */
#define QR_SEG_INLINE_BLOCKS 16u
#define QR_COLF_DIR_OUT 0x01u
/* Section flags (footer byte after the index kind). */
#define QR_SECF_LOWERCASE 1u /* full text: terms case-folded */
#define QR_SECF_POSITIONS 2u /* full text: positions stored */

/* Rows per block of the fixed-width encodings (ints, dictionary codes). */
#define QR_BLOCK_ROWS 65536u
/* Rows per page of hex ids (the writer's choice; readers take any). Reading
 * one row decompresses and indexes its page: 512 rows rather than 4096 make
 * a top-100's id columns ~8x cheaper for 0.6 bytes/row. */
#define QR_HEXID_PAGE_ROWS 512u

/* Column encodings (footer field `encoding`). */
enum {
    ENC_INT = 1,   /* frame-of-reference or delta bit-packed int64 blocks */
    ENC_DICT = 2,  /* sorted value dictionary + bit-packed codes (0 = NULL) */
    ENC_PAGED = 3, /* small zstd pages of values, shared trained zstd dict */
    ENC_HEXID = 4, /* hex ids as bytes in zstd pages, raw text as fallback */
};

/* Block kinds (directory field `kind`). */
enum {
    BLK_DATA = 1,  /* rows [first_row, first_row+rows) of the column */
    BLK_DICT = 2,  /* ENC_DICT value dictionary */
    BLK_ZDICT = 3, /* ENC_PAGED zstd dictionary */
    BLK_KEYS = 4,  /* map columns: key dictionary */
};

/* Index (section) blocks start at file offsets that are multiples of this:
 * row bitmaps and postings are read as 64-bit words, and a bitmap that
 * started mid-line paid a split load every eighth word (measured: `error OR
 * failed` at 10M rows was 25% slower on one table than on another that
 * differed only in where its blocks fell). */
#define QR_SEC_ALIGN 64u

/* Section block kinds start here; their meaning belongs to the layer that
 * owns the section (src/index). */
#define QR_BLK_SECTION_MIN 16u
#define QR_SEG_MAX_SECTIONS 64u

/* Block payload compression (first byte of DICT, PAGED and HEXID blocks). */
enum {
    COMP_NONE = 0,
    COMP_ZSTD = 1,      /* u32 raw length, zstd frame */
    COMP_ZSTD_DICT = 2, /* u32 raw length, zstd frame using the column's zdict */
};

/* Integer block modes (first byte of an ENC_INT data block). */
enum {
    INT_FOR = 0,   /* values - base, bit-packed */
    INT_DELTA = 1, /* base = first value; n-1 deltas (>= 0) bit-packed */
};

/* Directory entry flags. */
#define QR_BLKF_ALL_NULL 1u /* min/max meaningless: every row NULL */

#endif
