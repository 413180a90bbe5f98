/* render.h - a result as text: an aligned table (headers, a rule, one line
 * per row, "(N rows)"), CSV (RFC 4180: header line, fields quoted when they
 * hold a comma, quote or line break; NULL as an empty field) or NDJSON (one
 * object per row, keys = output names; numbers as JSON numbers, timestamps
 * as RFC 3339 strings with nanoseconds, NULL as null). */
#ifndef QR_EXEC_RENDER_H
#define QR_EXEC_RENDER_H
#include "exec/result.h"
#include "util/buf.h"

typedef enum { QR_FMT_TABLE = 0, QR_FMT_CSV = 1, QR_FMT_NDJSON = 2 } qr_outfmt;

/* Append the result rendered in `fmt` to out. */
void qr_result_render(const qr_result *r, int fmt, qr_buf *out);
/* One cell as plain text (no quotes; NULL as ""), appended to out. */
void qr_cell_text(const qr_result *r, uint32_t col, const qr_cell *c, qr_buf *out);
#endif
