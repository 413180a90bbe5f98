/* infer.h - a table definition inferred from a sample of NDJSON lines, the
 * way Elasticsearch's dynamic mapping, DuckDB's read_json_auto and
 * Quickwit's dynamic mode do it: column types from the JSON values, a sort
 * column from the timestamps, indexes from what the values look like, and
 * a catch-all column for the keys the sample did not show. The rules, with
 * examples, are docs/INFERENCE.md.
 */
#ifndef QR_INFER_H
#define QR_INFER_H

#include <stddef.h>

#include "format/schema.h"
#include "util/err.h"

/* How much of an input a caller should pass as the sample. Lines past
 * QR_INFER_SAMPLE_LINES are not read. */
#define QR_INFER_SAMPLE_BYTES (4u << 20)
#define QR_INFER_SAMPLE_LINES 10000

/* Infer a definition for table `name` (copied; may be NULL) from the NDJSON
 * lines in buf[0..len). An unterminated last line counts only when it is a
 * whole JSON object, so a sample cut in the middle of a line is harmless
 * and a file without a final newline still works. Lines that are not a
 * JSON object, or that repeat a top-level key (names ignore ASCII case),
 * are skipped: ingest reports them later. `src` names the input in
 * messages.
 *
 * Returns a validated definition that the caller frees with qr_tabdef_free:
 * the OpenTelemetry table when the first object's keys are exactly its 15
 * columns, else one nullable column per top-level key, a `_extra` catch-all
 * json column and omit_nulls set. NULL with e set when no line is a JSON
 * object ("SRC: no JSON object in the first N lines to infer a schema from;
 * give --schema", code QR_E_INVALID_TEXT) or when out of memory. */
qr_tabdef *qr_infer_schema(const char *name, const char *buf, size_t len, const char *src,
                           qr_err *e);

#endif
