/* ndjson.h - one NDJSON line -> one row of a qr_batch, by the batch's table
 * definition.
 *
 * Each line is a JSON object whose keys are column names (matched
 * case-insensitively). A missing key or a JSON null gives NULL (a row with
 * NULL in a NOT NULL column is rejected). Accepted values per type:
 *   timestamp        RFC 3339 string (util/timefmt.h) or an integer in the
 *                    column's unit (ns, or the epoch_* format's unit)
 *   bool             true / false
 *   integer types    an integer in the type's range (uint64 up to 2^64-1)
 *   float64          any JSON number that is finite as a double
 *   text             a string
 *   json             any JSON value (stored as compact canonical JSON)
 *   map              an object; string values as strings, other values kept
 *                    as typed JSON
 * A key that is not a column goes into the table's catch-all json column
 * (when it has one: the key and value become a member of that object, and
 * a key repeated there is kept twice, as JSON allows and as it came), else
 * rejects the line. Anything else (duplicate key, wrong type, bad JSON,
 * trailing text) rejects the whole line with a reason naming the column and
 * byte.
 */
#ifndef QR_NDJSON_H
#define QR_NDJSON_H

#include <stddef.h>

#include "format/batch.h"
#include "util/err.h"
#include "util/strmap.h"

typedef struct qr_ndjson {
    const qr_tabdef *def; /* not owned */
    qr_buf scratch;       /* map texts under construction */
    qr_buf val;           /* json values under construction */
    qr_buf extra;         /* the catch-all object under construction */
    uint32_t *seen;       /* per column: the stamp of the last row that set it */
    uint32_t stamp;
    uint32_t *notnull;    /* columns that must not be NULL */
    uint32_t nnotnull;
    qr_strmap names;      /* lowercased column names -> column */
    char *lower;          /* their bytes */
} qr_ndjson;

/* Prepare a parser for rows of `def` (which must outlive it). */
int qr_ndjson_init(qr_ndjson *p, const qr_tabdef *def, qr_err *e);
void qr_ndjson_free(qr_ndjson *p);

/* Parse `line` (no '\n') and append a row to b (a batch of the same
 * definition). Returns 0 on success, 1 for a blank line (nothing appended),
 * -1 with e set ("byte N: column C: ...") when the line is rejected (nothing
 * appended). Errors that are not the input's fault (out of memory, a full
 * batch) carry their own codes (QR_E_NOMEM, QR_E_INTERNAL): the caller must
 * not count them as bad lines. */
int qr_ndjson_parse(qr_ndjson *p, qr_batch *b, const char *line, size_t n, qr_err *e);

#endif
