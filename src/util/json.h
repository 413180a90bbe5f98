/* json.h - zero-copy pull parser for one JSON text, and the canonical
 * JSON string writer.
 *
 * The parser walks a buffer in place: a string without escapes comes back as
 * a slice of the input; one with escapes is decoded into the caller's arena.
 * Strings are validated as UTF-8 (surrogate pairs combined; lone surrogates
 * rejected). Nesting is limited to QJ_MAX_DEPTH. On error every call returns
 * -1 (or QJ_ERROR) and j->err_off / j->err_why say where and why; the parser
 * never reads outside [s, s+n). The first error sticks: later calls return
 * -1 / QJ_ERROR without moving. err_off points at the offending byte (the
 * backslash of a bad escape, the lead byte of bad UTF-8, the first byte of a
 * number that is out of range or not an integer, the opening quote of an
 * unterminated string, the input length for "unexpected end of input").
 *
 * Canonical output (qj_write_string): '"' and '\\' escaped, control bytes
 * < 0x20 as \b \f \n \r \t or \u00xx (lowercase hex), everything else,
 * including '/', DEL and non-ASCII UTF-8, written raw.
 */
#ifndef QR_JSON_H
#define QR_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/buf.h"

#define QJ_MAX_DEPTH 64

typedef struct qr_slice {
    const char *p;
    size_t n;
} qr_slice;

typedef enum {
    QJ_NULL,
    QJ_FALSE,
    QJ_TRUE,
    QJ_NUMBER,
    QJ_STRING,
    QJ_OBJECT,
    QJ_ARRAY,
    QJ_END,  /* only whitespace left */
    QJ_ERROR /* next byte cannot start a value */
} qj_type;

typedef struct qr_json {
    const char *s, *p, *end;
    size_t err_off;      /* byte offset of the error in the input */
    const char *err_why; /* static reason string */
    int oom;             /* the error is that the arena could not grow */
    int depth;           /* internal: open objects/arrays */
    int first;           /* internal: next member/element is the first */
} qr_json;

void qj_init(qr_json *j, const char *s, size_t n);
/* Skip whitespace; report the type of the next value without consuming it
 * (from its first byte: the value itself is checked when consumed). QJ_END
 * only at depth 0; inside an open object/array the end of input is an error.
 * An empty document gives QJ_END: rejecting it is the caller's choice. */
qj_type qj_peek(qr_json *j);
/* Parse a string value. Zero-copy when it has no escapes (out->p points
 * into the input); else decoded into `a` ("out of memory" when `a` is NULL
 * or full). \u0000 decodes to a NUL byte: use out->n, not strlen. */
int qj_string(qr_json *j, qr_slice *out, qr_arena *a);
/* Parse a JSON number that is an integer in int64 range ("12", "-3").
 * Fractions and exponents are rejected ("expected an integer"). */
int qj_int64(qr_json *j, int64_t *v);
/* Consume the literal null. */
int qj_null(qr_json *j);
/* Consume true (*v = 1) or false (*v = 0). */
int qj_bool(qr_json *j, int *v);
/* Consume any number (full grammar: sign, fraction, exponent); *raw is its
 * text, a slice of the input. */
int qj_number(qr_json *j, qr_slice *raw);
/* Consume '{'. */
int qj_object_begin(qr_json *j);
/* Read the next member key and its ':'; returns 1 with *key set, 0 after
 * consuming the closing '}', -1 on error. Handles the ',' between members. */
int qj_object_next(qr_json *j, qr_slice *key, qr_arena *a);
/* Consume '['. */
int qj_array_begin(qr_json *j);
/* Step to the next element: returns 1 when one follows (read it next), 0
 * after consuming the closing ']', -1 on error. Handles the ','. */
int qj_array_next(qr_json *j);
/* Skip any one value (validating it; nesting counts from the current depth). */
int qj_skip(qr_json *j);
/* 0 when only whitespace remains, else -1 ("trailing characters"; or
 * "unexpected end of input" while an object/array is still open). */
int qj_finish(qr_json *j);

/* Consume any one value and append it to out as compact canonical JSON:
 * no whitespace, strings re-escaped canonically (qj_write_string), numbers
 * as written, key order and duplicates kept. Escaped strings are decoded
 * into `a`. -1 on error (j->err_* set; out may hold a partial value). */
int qj_copy(qr_json *j, qr_buf *out, qr_arena *a);
/* Append s as a canonical JSON string (with the quotes) to b. */
void qj_write_string(qr_buf *b, const char *s, size_t n);

/* The string-body kernel: length of the leading run of [p, p+n) that holds
 * no '"', '\\' or byte < 0x20 (n when there is none); sets *hi = 1 when a
 * byte of that run is >= 0x80 (never clears it). SSE2 when the build targets
 * it; the _scalar twin is the reference the tests compare it against. */
size_t qj_scan_string(const char *p, size_t n, int *hi);
size_t qj_scan_string_scalar(const char *p, size_t n, int *hi);

#endif
