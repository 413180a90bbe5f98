/* schema.h - the OpenTelemetry log record: the 15 columns Quarry stores,
 * their names (as in NDJSON and SQL), their logical types, and the in-memory
 * value of a row as the ingest path hands it to the segment writer.
 */
#ifndef QR_SCHEMA_H
#define QR_SCHEMA_H

#include <stdint.h>

#include "util/json.h"

typedef enum {
    COL_TIMESTAMP = 0,
    COL_TRACE_ID,
    COL_SPAN_ID,
    COL_TRACE_FLAGS,
    COL_SEVERITY_TEXT,
    COL_SEVERITY_NUMBER,
    COL_SERVICE_NAME,
    COL_BODY,
    COL_RESOURCE_SCHEMA_URL,
    COL_RESOURCE_ATTRIBUTES,
    COL_SCOPE_SCHEMA_URL,
    COL_SCOPE_NAME,
    COL_SCOPE_VERSION,
    COL_SCOPE_ATTRIBUTES,
    COL_LOG_ATTRIBUTES,
    COL_COUNT
} qr_col_id;

typedef enum {
    TYPE_TIMESTAMP, /* int64 ns since epoch, UTC */
    TYPE_UINT8,
    TYPE_INT32,
    TYPE_STRING,
    TYPE_HEXID, /* string, usually lowercase hex of a fixed width, or empty */
    TYPE_MAP    /* map string -> string, key order preserved */
} qr_type;

typedef struct qr_col_def {
    const char *name;
    qr_type type;
    unsigned hex_bytes; /* TYPE_HEXID: bytes of a canonical id (16 or 8) */
} qr_col_def;

extern const qr_col_def qr_schema[COL_COUNT];

/* Column id for a name (exact, case-sensitive), or -1. */
int qr_col_lookup(const char *name, size_t n);

#endif
