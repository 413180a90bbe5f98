/* subst.h - extended-protocol parameters as SQL literals. The SQL engine
 * binds no parameters, so each $n token of a statement (as libpg_query's
 * scanner finds them: a "$1" inside a string or a comment is no parameter)
 * is replaced by a literal of the bound value:
 *   NULL                          -> NULL
 *   int2/int4/int8/numeric/float  -> the number, validated (22P02 if not
 *                                    one), negative ones in parentheses
 *   bool                          -> TRUE / FALSE (PostgreSQL's spellings)
 *   anything else, or unknown (0) -> a quoted string, ' doubled
 * A binary-format value is first decoded by its declared type (int2/4/8,
 * float4/8, bool, text, varchar, timestamp(tz)); others are 0A000.
 * Positions in the rewritten text map back to the client's (pgw_subst_pos). */
#ifndef QR_SERVER_SUBST_H
#define QR_SERVER_SUBST_H
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

typedef struct pgw_param {
    const uint8_t *p;
    int32_t len;  /* -1: NULL */
    int16_t fmt;  /* 0 text, 1 binary */
    uint32_t oid; /* declared type, 0 = unspecified */
} pgw_param;

typedef struct pgw_repl {
    uint32_t old_off, old_len, new_off, new_len;
} pgw_repl;

/* The rewritten text (malloc'ed, NUL-terminated) and its replacements. */
typedef struct pgw_text {
    char *s;
    size_t n;
    pgw_repl *r;
    uint32_t nr;
} pgw_text;

/* The highest $n of sql (NUL-terminated, n bytes): *maxp. 0, or -1 with e
 * (a $0 or a number past 65535: 42P02). A text the scanner rejects counts
 * 0 (the parser reports it when it runs). */
int pgw_param_count(const char *sql, size_t n, uint32_t *maxp, qr_err *e);
/* Substitute np parameters into sql (NUL-terminated, n bytes): out is the
 * caller's to pgw_text_free. 0, or -1 with e set (08P01 for a $n past np,
 * 22P02 for a bad number or bool, 0A000 for an undecodable binary type). */
int pgw_subst(const char *sql, size_t n, const pgw_param *ps, uint32_t np, pgw_text *out,
              qr_err *e);
void pgw_text_free(pgw_text *t);
/* A 1-based position in out's text back to the client's; arg is the pgw_text. */
long pgw_subst_pos(void *arg, long pos);
#endif
