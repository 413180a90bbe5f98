/* err.h - the one error-reporting path of Quarry.
 *
 * Every fallible function takes a `qr_err *` and returns a status (int, 0 = ok)
 * or a pointer (NULL = failed). The message names the input: the file, the
 * line, the byte offset, the block. Codes are SQLSTATE-style five-character
 * strings so the PostgreSQL wire protocol can later send them unchanged.
 */
#ifndef QR_ERR_H
#define QR_ERR_H

#include <stddef.h>

#define QR_ERR_MSG_MAX 512

typedef struct qr_err {
    char code[6];             /* SQLSTATE, e.g. "22P02"; "" when no error */
    char msg[QR_ERR_MSG_MAX]; /* human-readable, names input and position */
} qr_err;

/* SQLSTATE-style codes used across the project. */
#define QR_E_INVALID_TEXT     "22P02" /* malformed input text (JSON, timestamps) */
#define QR_E_DATATYPE         "42804" /* a value of the wrong type */
#define QR_E_OUT_OF_RANGE     "22003" /* numeric value out of range */
#define QR_E_LINE_TOO_LONG    "22001" /* an input line longer than --max-line */
#define QR_E_TOO_LONG         "54000" /* program limit exceeded (pattern, block size) */
#define QR_E_STACK_DEPTH      "54001" /* statement nested too deeply */
#define QR_E_IO               "58030" /* I/O error */
#define QR_E_CORRUPT          "XX001" /* data corrupted (checksum, structure) */
#define QR_E_VERSION          "XX002" /* unsupported on-disk format version */
#define QR_E_NOMEM            "53200" /* out of memory */
#define QR_E_DISK_FULL        "53100" /* no space left on the device */
#define QR_E_BUSY             "53000" /* insufficient resources: retry later (back-pressure) */
#define QR_E_INTERNAL         "XX000" /* invariant broken */
#define QR_E_UNDEFINED_COLUMN "42703" /* unknown column */
#define QR_E_UNDEFINED_TABLE  "42P01" /* unknown table */
#define QR_E_NOT_NULL         "23502" /* NULL in a NOT NULL column */
#define QR_E_UNDEFINED_OBJECT "42704" /* unknown index or other object */
#define QR_E_FEATURE          "0A000" /* feature not supported */
#define QR_E_DUPLICATE_TABLE  "42P07" /* table exists (with another definition) */
#define QR_E_SYNTAX           "42601" /* a definition's structure: unknown/duplicate key */
#define QR_E_ARGS             "22023" /* invalid parameter value */
#define QR_E_NOT_READY        "55000" /* object not in prerequisite state */
#define QR_E_LOCKED           "55P03" /* lock not available */
#define QR_E_CANCELED         "57014" /* query canceled (by request or statement timeout) */

/* Fill `e` with `code` and a printf-style message. Returns -1 so callers can
 * write `return qr_errf(e, ...)`. `e` may be NULL (the error is then dropped). */
int qr_errf(qr_err *e, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the existing message with more context ("file x: " + old message). */
int qr_err_prefix(qr_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 1 when the error is a fault of the input (SQLSTATE class 22, data
 * exception, or 42, syntax error or access rule violation: bad JSON, a wrong
 * type, a value out of range, a NULL in a NOT NULL column, an unknown
 * column, an oversize line, a bad
 * query or argument), 0 for a failure of the system or of Quarry itself (I/O,
 * out of memory, a limit, corruption, a lock, a broken invariant). Ingest
 * skips a line only for input faults; anything else stops it. */
int qr_err_is_input_fault(const qr_err *e);

static inline void qr_err_clear(qr_err *e)
{
    if (e) {
        e->code[0] = 0;
        e->msg[0] = 0;
    }
}

#endif
