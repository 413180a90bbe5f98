/* types.h - result columns as PostgreSQL types: the type OID of each
 * qr_rcol, and each cell in the text or the binary format.
 *
 *   bool -> bool (16)        int8, uint8, int16 -> int2 (21)
 *   uint16, int32 -> int4 (23)                uint32, int64 -> int8 (20)
 *   uint64 -> numeric (1700)  float64, avg, bm25 -> float8 (701)
 *   timestamp -> timestamptz (1184)  text -> text (25)  json, map -> json (114)
 *
 * Timestamps: Quarry keeps nanoseconds, PostgreSQL microseconds. Both the
 * text form ("2025-09-23 00:00:00.123456+00", trailing zeros of the
 * fraction dropped, as PostgreSQL prints) and the binary one (int64 us since
 * 2000-01-01) are truncated toward minus infinity to the microsecond; JSON
 * cells keep Quarry's RFC 3339 text with nanoseconds. */
#ifndef QR_SERVER_TYPES_H
#define QR_SERVER_TYPES_H
#include <stdint.h>

#include "exec/result.h"
#include "util/buf.h"

enum {
    PGW_OID_BOOL = 16,
    PGW_OID_BYTEA = 17,
    PGW_OID_INT8 = 20,
    PGW_OID_INT2 = 21,
    PGW_OID_INT4 = 23,
    PGW_OID_TEXT = 25,
    PGW_OID_JSON = 114,
    PGW_OID_FLOAT4 = 700,
    PGW_OID_FLOAT8 = 701,
    PGW_OID_UNKNOWN = 705,
    PGW_OID_VARCHAR = 1043,
    PGW_OID_TIMESTAMP = 1114,
    PGW_OID_TIMESTAMPTZ = 1184,
    PGW_OID_NUMERIC = 1700,
};

/* The type OID of a result column, and its typlen for RowDescription. */
uint32_t pgw_col_oid(const qr_rcol *c);
int16_t pgw_oid_len(uint32_t oid);
/* Append cell c of column col in the text (binary = 0) or binary format,
 * without the length word; NULL cells are the caller's (length -1). */
void pgw_cell_encode(const qr_result *r, uint32_t col, const qr_cell *c, int binary, qr_buf *out);
/* A timestamp in ns as PostgreSQL's timestamptz text (UTC, microseconds). */
void pgw_timestamptz_text(int64_t ns, qr_buf *out);
/* The binary numeric of an unsigned integer. */
void pgw_numeric_u64(uint64_t u, qr_buf *out);
#endif
