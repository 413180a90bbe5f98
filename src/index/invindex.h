/* invindex.h - the inverted indexes of a segment: which fields are indexed,
 * building their sections when a segment is written, and opening a field's
 * index for search.
 *
 * Fields: Body (full text: tokenizer terms with frequencies, positions and
 * norms), the keyword fields ServiceName, SeverityText, ScopeName and
 * TraceId (the exact value is the one term; docs only) and SeverityNumber
 * (its value as a term that sorts like the number, qr_num_term: a range is
 * a run of dictionary terms, a few bitmaps). Keyword values longer than
 * QR_MAX_TERM bytes are not indexed (they cannot be looked up).
 */
#ifndef QR_INVINDEX_H
#define QR_INVINDEX_H

#include <stdint.h>

#include "format/segment.h"
#include "index/postings.h"
#include "index/termdict.h"

typedef struct qr_field_def {
    uint16_t sec;     /* section id (invfmt.h) */
    int col;          /* source column */
    int fulltext;     /* 1: tokenized with tf/positions/norms */
    const char *name; /* as in queries: body, service, severity, scope, trace,
                       * sevnum (ranges only: `sevnum:>=13`) */
} qr_field_def;

extern const qr_field_def qr_fields[QR_NUM_FIELDS];
/* Field by section id or by query name; NULL if none. */
const qr_field_def *qr_field_by_sec(uint16_t sec);
const qr_field_def *qr_field_by_name(const char *name, size_t n);

/* Sort batch b by time, build every field's index and write the segment
 * (qr_seg_write_ex). What ingest calls. */
int qr_segment_build(const char *path, const qr_batch *b, const qr_seg_opts *o,
                     qr_seg_summary *out, qr_err *e);

/* One field's index in an open segment. Valid while the segment is open. */
typedef struct qr_invfield {
    const qr_segment *seg;
    const qr_field_def *def;
    qr_tdict dict;
    const unsigned char *post, *pos, *norms, *bitmaps; /* pos, bitmaps: NULL until needed */
    size_t post_len, pos_len, bitmaps_len;
    const qr_section *sec;
    int32_t pos_blk, bm_blk; /* their blocks in the section (-1: none) */
    uint64_t docs_with_field, total_tokens;
    uint32_t rows;
} qr_invfield;

/* Open field `sec` of segment s (checksums of its blocks verified once).
 * A segment without the section is an error (QR_E_CORRUPT). */
int qr_invfield_open(qr_invfield *f, const qr_segment *s, uint16_t sec, qr_err *e);
void qr_invfield_close(qr_invfield *f);
/* The bitmap of a dense term (ti->has_bitmap): ceil(rows/64) little-endian
 * 64-bit words, possibly unaligned (read with memcpy). NULL (e set) when the
 * offset is out of range. The BITMAPS block is verified on first use. */
const unsigned char *qr_invfield_bitmap(qr_invfield *f, const qr_terminfo *ti, qr_err *e);
/* The same once qr_invfield_bitmap has mapped the block: NULL when it has
 * not, or the term has no bitmap in range (no error: callers then go
 * without it). */
const unsigned char *qr_invfield_bitmap_mapped(const qr_invfield *f, const qr_terminfo *ti);
/* Verify and map the POSITIONS block (full-text fields; once). Cursors
 * opened before it carry no positions: call it before a phrase. */
int qr_invfield_load_positions(qr_invfield *f, qr_err *e);
/* A postings cursor for a term of this field. */
int qr_invfield_cursor(const qr_invfield *f, const qr_terminfo *ti, qr_pcursor *c, qr_err *e);

#endif
