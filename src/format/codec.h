/* codec.h - the block codecs of a segment column, independent of files.
 *
 * Each encoder appends one block payload to a qr_buf; each decoder checks
 * every length against the payload it is given and returns -1 with a static
 * reason in *why on malformed input (the caller adds file/column/block).
 * Layouts are in docs/FORMAT.md, "Column encodings".
 */
#ifndef QR_CODEC_H
#define QR_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/json.h"

/* ---- ENC_INT blocks ---- */
typedef struct qr_int_stats {
    int64_t min, max; /* over non-NULL rows */
    int all_null;
} qr_int_stats;

/* Encode n values (isnull[i] = 1 marks NULL; may be NULL = no NULLs). Delta
 * mode is used when the values are non-decreasing. */
void enc_int_block(qr_buf *out, const int64_t *v, const uint8_t *isnull, uint32_t n,
                   qr_int_stats *st);
/* Decode a block of n rows into v and isnull (both n long). */
int dec_int_block(const unsigned char *p, size_t len, uint32_t n, int64_t *v, uint8_t *isnull,
                  const char **why);
/* Decode only row i of such a block (random access: O(1) for frame of
 * reference, O(i) cheap additions for delta blocks). */
int dec_int_one(const unsigned char *p, size_t len, uint32_t n, uint32_t i, int64_t *v,
                uint8_t *isnull, const char **why);

/* ---- compression wrapper: [u8 comp][u32 raw_len][frame] or [0][raw] ---- */
/* Compress `raw` into out with zstd at `level`, using cdict if not NULL;
 * stores COMP_NONE when compression does not pay. cctx is reusable. */
int comp_put(qr_buf *out, const void *raw, size_t n, int level, void *cctx, const void *cdict);
/* Decompress a payload made by comp_put into dst (grown as needed). `ddict`
 * must be given for COMP_ZSTD_DICT payloads. max_raw bounds the raw size. */
int comp_get(const unsigned char *p, size_t len, qr_buf *dst, void *dctx, const void *ddict,
             size_t max_raw, const char **why);

/* ---- value lists: [varint n][u8 has_nulls][bitmap?][varint len]*[bytes] ---- */
/* Serialize n slices (p == NULL = NULL) as a value list. */
void vlist_put(qr_buf *out, const qr_slice *v, uint32_t n);
/* Parse a value list of exactly n values; slices point into p. */
int vlist_get(const unsigned char *p, size_t len, uint32_t n, qr_slice *v, const char **why);

/* ---- hex ids ---- */
/* Encode n id strings: canonical lowercase hex of `width` bytes become
 * bytes; anything else is kept as raw text. */
void enc_hexid_page(qr_buf *out, const qr_slice *v, uint32_t n, unsigned width);
/* Decode into text: slices point into `text`, which is grown as needed and
 * must stay unchanged while they are used. */
int dec_hexid_page(const unsigned char *p, size_t len, uint32_t n, unsigned width, qr_buf *text,
                   qr_slice *v, const char **why);
/* Check a whole page and note where each of its n rows starts (off[n]):
 * then dec_hexid_at reads any row in O(1). */
int hexid_page_index(const unsigned char *p, size_t len, uint32_t n, unsigned width,
                     uint32_t *off, const char **why);
int dec_hexid_at(const unsigned char *p, size_t len, unsigned width, uint32_t row,
                 const uint32_t *off, qr_buf *text, qr_slice *v);


#endif
