/* select.h - selections from an iterator: the matches of a row range as a
 * row-id vector or a bitmap, thousands of rows per call, for a vectorized
 * executor (format/colvec.h gathers columns for such a vector).
 *
 * A qr_itsel is one thread's cursor over one compiled iterator of one
 * segment (qr_segsearch_compile: the bitmap algebra and leapfrogging are
 * chosen there). Windows [lo, hi) are asked for in ascending order; a call
 * may stop when the caller's vector is full and the next call with the same
 * window resumes where it stopped. An iterator that is an untouched bitmap
 * (a dense term, or what the bitmap algebra produced) is read as words
 * directly (word copies and shifts; the iterator itself is never moved);
 * any other is walked with next/advance, leaving it on the first match at
 * or past the last window's end. The cursor owns nothing; the iterator and
 * its arena must outlive it.
 */
#ifndef QR_SELECT_H
#define QR_SELECT_H

#include <stdint.h>

#include "match/iter.h"
#include "util/err.h"

typedef struct qr_itsel {
    qr_it *it;
    const unsigned char *bits; /* the bitmap's words when it is one, else NULL */
    uint32_t rows;             /* the segment's rows */
    uint32_t pos;              /* every match below pos has been returned */
} qr_itsel;

/* A cursor over `it`, which must be unstarted (fresh from compile) and
 * match rows of a segment of `rows` rows (the span of its bitmaps). */
void qr_itsel_init(qr_itsel *c, qr_it *it, uint32_t rows);

/* The matches in [max(lo, where the cursor stopped), hi), ascending, into
 * rows[0..*n), at most cap of them. Returns 1 when the window is done (every
 * match of it returned), 0 when rows[] filled up first (call again with the
 * same window for the rest), -1 with e set (QR_E_CORRUPT) when the iterator
 * met corrupt data. Rows below a previous window's end are never returned
 * again: windows must ascend (lo >= the previous window's hi, or the same
 * window resumed). lo >= hi is an empty window (returns 1, *n = 0). */
int qr_it_select(qr_itsel *c, uint32_t lo, uint32_t hi, uint32_t *rows, uint32_t cap, uint32_t *n,
                 qr_err *e);

/* The matches of [lo, hi) as a bitmap: bit (r - lo) of words[] (little-endian
 * uint64, ceil((hi - lo) / 64) of them, all written; bits past hi - lo are
 * 0) is set for each match r at or past where the cursor stopped. Same
 * ordering rule as qr_it_select; the cursor ends at hi. Returns the number
 * of matches set, or -1 with e set (QR_E_CORRUPT). */
int64_t qr_it_select_bits(qr_itsel *c, uint32_t lo, uint32_t hi, uint64_t *words, qr_err *e);

#endif
