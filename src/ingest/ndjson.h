/* ndjson.h - one NDJSON line -> one row of a qr_batch.
 *
 * Each line is a JSON object whose keys are column names (exact case). A
 * missing key or a JSON null gives NULL. Accepted value types:
 *   Timestamp       RFC 3339 string (see util/timefmt.h) or integer ns
 *   TraceFlags      integer 0..255       SeverityNumber  integer, int32
 *   maps            object of string -> string (key order kept)
 *   other columns   string
 * Anything else (unknown or duplicate key, wrong type, bad JSON, trailing
 * text) rejects the whole line with a reason naming the column and byte.
 */
#ifndef QR_NDJSON_H
#define QR_NDJSON_H

#include <stddef.h>

#include "format/batch.h"
#include "util/err.h"

typedef struct qr_ndjson {
    qr_buf scratch; /* map texts under construction */
} qr_ndjson;

void qr_ndjson_init(qr_ndjson *p);
void qr_ndjson_free(qr_ndjson *p);

/* Parse `line` (no '\n') and append a row to b. Returns 0 on success, 1 for
 * a blank line (nothing appended), -1 with e set ("column N: ...") when the
 * line is rejected (nothing appended). The caller guarantees b has room. */
int qr_ndjson_parse(qr_ndjson *p, qr_batch *b, const char *line, size_t n, qr_err *e);

#endif
