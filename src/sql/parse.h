/* parse.h - the SQL front end's first step: text to libpg_query's parse
 * tree (protobuf, unpacked with protobuf-c), and positions back to the
 * user's text.
 *
 * The dialect's bare list literal ['a','b'] is not PostgreSQL: before
 * parsing, pg_query_scan's tokens find each '[' that follows '(', ',' or an
 * operator and "ARRAY" is inserted in front of it. Every location in the
 * tree is a byte offset in that rewritten text; qr_sqlp_charpos maps one to
 * the 1-based character position in the original text (what PostgreSQL
 * reports as "at character N").
 *
 * Ownership: a qr_sqlparse owns the unpacked tree, the rewritten text and
 * the insertion table (malloc'ed: libpg_query and protobuf-c allocate with
 * malloc); qr_sqlp_free frees them all, also after a failed parse.
 */
#ifndef QR_SQL_PARSE_H
#define QR_SQL_PARSE_H
#include <stddef.h>
#include <stdint.h>

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

#include "util/err.h"

typedef struct qr_sqlparse {
    const char *orig; /* the user's text (not owned; outlives the parse) */
    size_t orig_len;
    char *text; /* rewritten text, NUL-terminated (owned) */
    size_t len;
    uint32_t *ins; /* offsets in orig where "ARRAY" was inserted, ascending */
    uint32_t nins;
    PgQuery__ParseResult *tree; /* owned; NULL until parsed */
} qr_sqlparse;

/* Parse `sql` (n bytes, no NUL needed). 0, or -1 with e set: 42601 for a
 * syntax error ("syntax error at or near \"FORM\" at character 10"),
 * 53200 when out of memory, 54000 for text over 1 MiB. *p is always to be
 * freed with qr_sqlp_free. */
int qr_sqlp_parse(qr_sqlparse *p, const char *sql, size_t n, qr_err *e);
void qr_sqlp_free(qr_sqlparse *p);

/* Byte offset in the original text of rewritten offset `loc` (a location
 * of the tree; -1 stays -1). A location on an inserted "ARRAY" maps to its
 * '['. */
int64_t qr_sqlp_origoff(const qr_sqlparse *p, int32_t loc);
/* The 1-based character position (UTF-8 code points) of a tree location in
 * the original text; 0 for an unknown location (-1). */
int qr_sqlp_charpos(const qr_sqlparse *p, int32_t loc);

/* Append " at character N" for location loc (nothing for loc < 0) to e's
 * message; returns -1. */
int qr_sqlp_at(const qr_sqlparse *p, int32_t loc, qr_err *e);
#endif
