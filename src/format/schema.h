/* schema.h - table definitions: typed columns, the sort column, the
 * indexes, and the OpenTelemetry preset.
 *
 * A qr_tabdef is plain data that owns its strings (one malloc per string,
 * freed by qr_tabdef_free). The catalog stores one per table (as JSON, the
 * form `quarry describe` prints and `--schema FILE` reads: tabdef_json.c);
 * a segment stores its own columns (names and types) in its footer, so a
 * reader needs nothing compiled in and maps a table's columns to a
 * segment's by name (a column added later reads as NULL in older segments).
 *
 * Column names keep the case they were written in and are matched
 * case-insensitively (ASCII), like unquoted SQL identifiers.
 */
#ifndef QR_SCHEMA_H
#define QR_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/json.h"

/* Logical column types. The numbers are stored in segment footers. Every
 * type but TEXT, JSON and MAP is stored as an int64 (qr_type_is_int):
 * unsigned 64-bit values with the sign bit flipped and float64 as its
 * order-preserving bit pattern, so block min/max and range terms compare
 * as plain signed integers (qr_num_*). */
typedef enum {
    QT_TIMESTAMP = 0, /* int64 ns since the epoch, UTC */
    QT_UINT8 = 1,
    QT_INT32 = 2,
    QT_TEXT = 3, /* UTF-8 text; hex ids get a compact encoding on their own */
    QT_MAP = 5,  /* object of string keys; key order and duplicates kept;
                  * values strings or any JSON value */
    QT_BOOL = 6,
    QT_INT8 = 7,
    QT_INT16 = 8,
    QT_INT64 = 9,
    QT_UINT16 = 10,
    QT_UINT32 = 11,
    QT_UINT64 = 12,
    QT_FLOAT64 = 13,
    QT_JSON = 14, /* any JSON value, stored as compact canonical JSON text */
} qr_type;
#define QT_LAST 14

/* 1 for the types stored as int64 (ENC_INT). */
int qr_type_is_int(int t);
/* 1 for a known type number. */
int qr_type_valid(int t);
/* "timestamp", "int32", ... ; "?" for an unknown number. */
const char *qr_type_name(int t);
/* Type by name (case-insensitive; also "string" = text, "integer" = int64,
 * "double" = float64, "boolean" = bool); -1 when unknown. */
int qr_type_by_name(const char *s, size_t n);
/* The value range of an integer type, inclusive (in the stored domain for
 * uint64: see qr_num_*). */
void qr_type_range(int t, int64_t *lo, int64_t *hi);

/* Stored-domain conversions of the int64 representation. */
static inline int64_t qr_num_from_u64(uint64_t u) { return (int64_t)(u ^ 0x8000000000000000ull); }
static inline uint64_t qr_num_to_u64(int64_t s) { return (uint64_t)s ^ 0x8000000000000000ull; }
/* float64 bits -> int64 that orders like the doubles (-0 < +0; NaN last). */
int64_t qr_num_from_f64(double d);
double qr_num_to_f64(int64_t s);

/* How a timestamp column prints (and which integers it reads). RFC3339
 * prints "YYYY-MM-DDTHH:MM:SS.fffffffffZ", RFC3339_SHORT the same with
 * the fraction cut to what is not zero (":00Z", ":00.250Z"); the epoch forms print an integer
 * in their unit when the value is a whole number of units, else the RFC
 * 3339 text (so nothing is ever lost). Integers in input are read in the
 * column's unit (nanoseconds for RFC3339 columns). */
typedef enum {
    QR_TS_RFC3339 = 0,
    QR_TS_EPOCH_S = 1,
    QR_TS_EPOCH_MS = 2,
    QR_TS_EPOCH_US = 3,
    QR_TS_EPOCH_NS = 4,
    QR_TS_RFC3339_SHORT = 5, /* RFC 3339 with as few fraction digits as are
                              * exact: none, 3, 6 or 9 */
} qr_tsfmt;
#define QR_TS_LAST 5
const char *qr_tsfmt_name(int f);              /* "rfc3339", "epoch_s", ... */
int qr_tsfmt_by_name(const char *s, size_t n); /* -1 unknown */
int64_t qr_tsfmt_unit_ns(int f);               /* 1e9, 1e6, 1e3, 1 (and 1 for RFC3339) */

#define QR_MAX_COLUMNS 1024
#define QR_MAX_INDEXES 64  /* = QR_SEG_MAX_SECTIONS: one section per index */
#define QR_MAX_NAME    255 /* bytes of a column or index name */

typedef struct qr_coldef {
    char *name;       /* as written; owned */
    uint8_t type;     /* qr_type */
    uint8_t nullable; /* 0: a NULL (or missing key) makes the row bad */
    uint8_t tsfmt;    /* QT_TIMESTAMP: qr_tsfmt */
} qr_coldef;

typedef enum {
    QR_IX_FULLTEXT = 1, /* text (or json/map text leaves): tokenized, tf, norms,
                         * positions unless turned off */
    QR_IX_KEYWORD = 2,  /* text: the exact value is the one term */
    QR_IX_RANGE = 3,    /* integer/timestamp/float: the value as a term that sorts
                         * like the number (a range is a run of terms) */
    QR_IX_PATHS = 4,    /* json/map: every leaf as the term "path\0value" */
} qr_ixkind;
const char *qr_ixkind_name(int k); /* "fulltext", "keyword", "range", "paths" */
int qr_ixkind_by_name(const char *s, size_t n);

typedef struct qr_ixdef {
    uint16_t id;       /* section id in segments (1..65535), unique per table */
    uint16_t col;      /* index into qr_tabdef.cols */
    uint8_t kind;      /* qr_ixkind */
    uint8_t lowercase; /* FULLTEXT: fold case (default 1) */
    uint8_t positions; /* FULLTEXT: store positions, needed by phrases (default 1) */
    uint8_t building;  /* created on a table that held rows and not yet built for
                        * all its segments (sql/merge.h qr_build_indexes_table):
                        * writers build it, queries do not use it */
    char *name;        /* query alias ("body", "service"); owned; may be NULL */
} qr_ixdef;

typedef struct qr_tabdef {
    char *name; /* table name; owned; may be NULL in a definition file */
    uint32_t ncols;
    qr_coldef *cols;     /* owned */
    int32_t sort_col;    /* a QT_TIMESTAMP column the rows are sorted by, or -1
                          * (then rows keep insertion order) */
    int32_t extra_col;   /* a QT_JSON column that takes the keys which are not
                          * columns (an object), or -1: such keys make the row bad */
    uint8_t omit_nulls;  /* quarry cat leaves NULL columns out instead of printing null */
    int64_t retention_s; /* rows whose sort column is older than this many seconds
                          * are dropped by a running server (sql/merge.h); 0: kept */
    uint32_t nixs;
    qr_ixdef *ixs; /* owned */
} qr_tabdef;

/* An empty definition (no columns, sort_col = extra_col = -1). NULL when out
 * of memory. */
qr_tabdef *qr_tabdef_new(const char *name);
void qr_tabdef_free(qr_tabdef *d);
qr_tabdef *qr_tabdef_clone(const qr_tabdef *d);
/* Append a column (name copied); returns its index, or -1 with e set (bad
 * or duplicate name, too many columns, unknown type, out of memory). */
int qr_tabdef_add_col(qr_tabdef *d, const char *name, size_t n, int type, int nullable, qr_err *e);
/* Append an index on column `col` (name may be NULL); id 0 = the next free
 * id. Returns its position in ixs, or -1 with e set (kind not allowed for
 * the column's type, duplicate id or alias, too many). */
int qr_tabdef_add_index(qr_tabdef *d, int col, int kind, uint16_t id, const char *name, qr_err *e);
/* Column by name (case-insensitive), or -1. */
int qr_tabdef_col(const qr_tabdef *d, const char *name, size_t n);
/* Index by alias (case-insensitive, like column names), or -1. An alias
 * is never the name of another column (add_index and validate refuse it). */
int qr_tabdef_index_by_name(const qr_tabdef *d, const char *name, size_t n);
/* The index of `kind` on column `col` that queries may use (not one being
 * built), or -1. */
int qr_tabdef_index_on(const qr_tabdef *d, int col, int kind);
/* The same, an index being built too (what a new index must not repeat). */
int qr_tabdef_index_any(const qr_tabdef *d, int col, int kind);
/* The index with section id `id`, or NULL. */
const qr_ixdef *qr_tabdef_index_by_id(const qr_tabdef *d, uint16_t id);
/* Check the whole definition (names, types, sort and catch-all columns,
 * indexes); `what` names it in messages ("table logs", "schema FILE"). */
int qr_tabdef_validate(const qr_tabdef *d, const char *what, qr_err *e);
/* 1 when both define the same columns (names, types, nullability, formats),
 * sort and catch-all columns and indexes (whether an index is still being
 * built aside: rows parse and segments are written the same either way). */
int qr_tabdef_equal(const qr_tabdef *a, const qr_tabdef *b);

/* Column names: 1..QR_MAX_NAME bytes of valid UTF-8 without control bytes. */
int qr_col_name_ok(const char *name, size_t n);

/* ---- the OpenTelemetry log record ---- */
/* Column positions of the OpenTelemetry preset. */
enum {
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
    QR_OTEL_NCOLS
};
/* The OpenTelemetry table: 15 columns sorted by Timestamp, the full-text
 * index on Body (id 1, "body") and keyword indexes on ServiceName (2,
 * "service"), SeverityText (3, "severity"), ScopeName (4, "scope"),
 * TraceId (5, "trace") and a range index on SeverityNumber (6, "sevnum").
 * NULL when out of memory. */
qr_tabdef *qr_tabdef_otel(const char *name);
/* 1 when these keys (in any order and case) are exactly the 15 columns. */
int qr_keys_are_otel(const qr_slice *keys, size_t n);

/* ---- JSON form (tabdef_json.c; docs/FORMAT.md "Table definitions") ---- */
/* Append d as one JSON object (pretty: 2-space indents, one column or index
 * per line) to out. */
void qr_tabdef_to_json(const qr_tabdef *d, qr_buf *out);
/* Parse a table definition. `src` names the text in messages ("FILE"): an
 * error says "FILE:LINE:COL: reason". The result is validated. NULL with e
 * set on error. */
qr_tabdef *qr_tabdef_from_json(const char *text, size_t n, const char *src, qr_err *e);
/* The same for a definition inside a larger document being parsed by j
 * (the catalog): consumes one object value. */
qr_tabdef *qr_tabdef_parse_json(qr_json *j, const char *src, qr_err *e);

#endif
