/* project.h - late materialisation of a select list: the chosen columns of
 * the winning rows only (hits of search/topk.h, from any search), read with
 * column vectors (format/colvec.h): per segment the hits are sorted by row
 * and each selected column is gathered once for them, decoding each block
 * it touches once. The (segment, column, piece of the rows) units run on
 * the search's pool, each with a reader from the segment cache's pool.
 *
 * Cells go to rows row0 .. row0 + n - 1 of `out` (hit i to row row0 + i,
 * so the hits' order is kept), column cols[j] of the table to output
 * column outcol[j]. A column a segment does not have (added later) is
 * NULL there. Text cells are copied into the result; map values rendered
 * as JSON text. */
#ifndef QR_EXEC_PROJECT_H
#define QR_EXEC_PROJECT_H
#include <stdint.h>

#include "exec/result.h"
#include "search/topk.h"

/* 0, or -1 with e set (53200, XX001). out must already hold the rows. */
int qr_x_project(const qr_par_search *ps, const qr_hit *hits, uint32_t n, const int *cols,
                 const uint32_t *outcol, uint32_t ncols, qr_result *out, uint64_t row0, qr_err *e);

/* The result column kind of a table column type (QR_RK_INT, _TEXT, _JSON). */
int qr_x_kind_of(int type);
#endif
