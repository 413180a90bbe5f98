/* csv.h - records of COPY's CSV and text formats, parsed from chunks cut
 * anywhere (a server's CopyData messages, a file's reads).
 *
 *   csv   RFC 4180: fields separated by the delimiter (','), records by LF
 *         or CRLF; a field starting with '"' is quoted: it may hold the
 *         delimiter, line breaks and '""' (one quote). A quote inside an
 *         unquoted field, or text after a closing quote, is an error. An
 *         unquoted field equal to the NULL string ("" by default) is NULL,
 *         so an empty unquoted field is NULL and "" is an empty text.
 *   text  PostgreSQL's text format: fields separated by the delimiter
 *         (tab), records by LF (a CR before it is dropped); \N is NULL;
 *         backslash escapes \t \n \r \b \f \v \\ and \ooo (octal; any other
 *         escaped byte stands for itself).
 * In both, empty lines are skipped and a line "\." ends the data (what
 * psql sends last). Line numbers count physical lines from 1, so a record
 * whose quoted field holds line breaks is named by its first line.
 *
 * Memory: the current record only (its bytes and field bounds), at most
 * QR_REC_MAX bytes (54000 past it, checked after each chunk). */
#ifndef QR_SQL_CSV_H
#define QR_SQL_CSV_H
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

#define QR_REC_MAX (64u << 20) /* the longest record (its unescaped bytes) */

typedef struct qr_recparser {
    int csv; /* 1 CSV, 0 text format */
    char delim;
    const char *null_str; /* CSV: unquoted field text meaning NULL (not owned) */
    qr_buf rec;           /* the current record's field bytes, unescaped */
    uint32_t *end;        /* field i is rec[end[i-1] (or 0), end[i]) */
    uint8_t *flags;       /* per field: 1 quoted, 2 NULL (\N), 4 began with \. */
    uint32_t nfields, cap;
    int state;
    int oct, oct_digits; /* text: a \ooo escape being read */
    uint64_t line;       /* physical line being read (1-based) */
    uint64_t rec_line;   /* line the current record started on */
    int done;            /* "\." seen: the rest is ignored */
    int in_record;       /* bytes of a record seen */
} qr_recparser;

/* Called for each complete record; fields by qr_rec_field. 0, or -1 with
 * e set (stops the parse). */
typedef int (*qr_rec_fn)(void *arg, const qr_recparser *rp, qr_err *e);

void qr_rec_init(qr_recparser *rp, int csv, char delim, const char *null_str);
void qr_rec_free(qr_recparser *rp);
/* Parse n more bytes, calling fn for each record they complete. 0, or -1
 * with e set: a malformed record ("line L: ..." , 22P04) or fn's error. */
int qr_rec_feed(qr_recparser *rp, const char *p, size_t n, qr_rec_fn fn, void *arg, qr_err *e);
/* End of input: a last record without a line break counts; an open quote
 * is an error (22P04). */
int qr_rec_finish(qr_recparser *rp, qr_rec_fn fn, void *arg, qr_err *e);
/* Field i of the record passed to fn: its bytes (valid during fn) and 1
 * when it is NULL. */
int qr_rec_field(const qr_recparser *rp, uint32_t i, const char **p, size_t *n);
#endif
