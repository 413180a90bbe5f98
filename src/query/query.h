/* query.h - the filter tree of a search and its command-line syntax.
 *
 * Syntax (quarry search; docs/SEARCH.md has examples):
 *   word            term in the table's default full-text column (its first
 *                   full-text index; Body in the OpenTelemetry table),
 *                   analysed like it (several tokens = phrase)
 *   a AND b, a b    both            a OR b       either
 *   NOT a, -a       exclusion (inside a conjunction; alone = all docs but a)
 *   ( ... )         grouping
 *   "a b c"         phrase: consecutive positions
 *   "a ? ? b"       phrase with gaps: each ? is exactly one word of any kind
 *                   (SereneDB's ts_phrase('a') ## 2 ## 'b')
 *   "a b"~N         proximity: b within N words after a (slop form; 2 terms)
 *   atleast(K, q1, q2, ...)   minimum-should-match
 *   ord*            prefix          /c.che/      regexp (whole term)
 *   like:%p_t%      LIKE (whole term; % any run, _ one character)
 *   cahce~1, ~2     fuzzy, Damerau-Levenshtein distance 1 or 2 (~ = 2)
 *   service:cart severity:ERROR scope:NAME trace:HEX   exact keyword match
 *                   (quote values with spaces: service:"frontend proxy")
 *   sevnum:17  sevnum:>=13  sevnum:[9 TO 17]          SeverityNumber
 *   time:[2025-09-23T00:00:00Z TO 2025-09-23T00:00:01Z]  the sort column,
 *                   inclusive; also time:>=T, time:<T (RFC 3339, as in ingest)
 *   COLUMN:value    any column, by name (case-insensitive) or index alias:
 *                   a full-text column: word, "phrase" or prefix*; a keyword
 *                   column: the exact value; a number or timestamp column:
 *                   =N, >=N, >N, <=N, <N, [A TO B] (by its range index, or a
 *                   scan that skips blocks by their min/max); a json or map
 *                   column with a paths index: COLUMN.path.to.leaf:value
 * Keywords AND, OR, NOT are upper case; precedence NOT > AND > OR.
 */
#ifndef QR_QUERY_H
#define QR_QUERY_H

#include <stdint.h>

#include "util/arena.h"
#include "util/err.h"

typedef enum {
    Q_ALL,     /* every row */
    Q_TERM,    /* text (already analysed) in field */
    Q_PHRASE,  /* terms[] at offs[], or within */
    Q_AND,
    Q_OR,
    Q_NOT,     /* kids[0] = what to exclude (from its parent's docs) */
    Q_MINMATCH,
    Q_PREFIX,
    Q_REGEXP,
    Q_LIKE,
    Q_FUZZY,
    Q_INT_RANGE, /* a number column in [lo, hi] (stored domain, schema.h) */
    Q_TIME_RANGE /* a timestamp column in [lo, hi] (ns) */
} qr_qtype;

typedef struct qr_query qr_query;
struct qr_query {
    qr_qtype type;
    uint16_t field;     /* index (section) id; 0 for a range without an index */
    uint8_t scored;     /* a term/phrase/multi-term of the scored (default
                         * full-text) index: BM25 counts it */
    uint8_t coltype;    /* ranges: the column's type */
    const char *colname; /* ranges: the column (NUL-terminated, in the arena) */
    const char *text;   /* term / pattern (not NUL-terminated) */
    size_t len;
    uint32_t n;         /* kids, or phrase terms */
    qr_query **kids;
    const char **terms; /* phrase */
    size_t *term_lens;
    uint32_t *offs;     /* phrase: position offsets, offs[0] = 0 */
    uint32_t within;    /* proximity slop (0 = exact offsets) */
    uint32_t k;         /* min match; fuzzy edits */
    int64_t lo, hi;     /* ranges, inclusive */
};

struct qr_tabdef;

/* ---- building trees (tree.c): what a planner calls; the parser is one
 * client. Every node and string lives in the arena `a` (strings are
 * copied: a tree never points into its caller's memory). Each returns NULL
 * with e set (QR_E_NOMEM, or QR_E_ARGS / QR_E_DATATYPE for a column that
 * cannot take the node, naming it). `def` is only read. ---- */
/* Every row. */
qr_query *qr_q_all(qr_arena *a, qr_err *e);
/* Text searched on full-text index `ix` (a position in def->ixs) analysed
 * as that index analyses its column: one word gives a term, several a
 * phrase of consecutive words. Scored when ix is the table's first
 * full-text index (the default column). */
qr_query *qr_q_text(const struct qr_tabdef *def, int ix, const char *text, size_t n, qr_arena *a,
                    qr_err *e);
/* A phrase of already-analysed words: word i at position offs[i] (offs[0]
 * = 0, increasing: gaps allowed); within > 0 makes it "b within `within`
 * words after a" (two words). */
qr_query *qr_q_phrase(const struct qr_tabdef *def, int ix, const char *const *words,
                      const size_t *lens, const uint32_t *offs, uint32_t n, uint32_t within,
                      qr_arena *a, qr_err *e);
/* A multi-term node on full-text index ix: Q_PREFIX, Q_REGEXP, Q_LIKE (the
 * pattern as given: the caller lowercases what should match folded terms)
 * or Q_FUZZY (k = 1 or 2 edits). */
qr_query *qr_q_multi(const struct qr_tabdef *def, int ix, qr_qtype type, const char *pattern,
                     size_t n, uint32_t k, qr_arena *a, qr_err *e);
/* Column `col` (a position in def->cols) equals `value`: by its keyword
 * index, or a scan of the column when it has none (text columns). */
qr_query *qr_q_equals(const struct qr_tabdef *def, int col, const char *value, size_t n,
                      qr_arena *a, qr_err *e);
/* A json/map column's leaf at `path` ("a.b", keys joined by '.') equals
 * `value` (a string's bytes, or another leaf's JSON text), by its paths
 * index. */
qr_query *qr_q_path(const struct qr_tabdef *def, int col, const char *path, size_t pn,
                    const char *value, size_t vn, qr_arena *a, qr_err *e);
/* An integer-stored column (numbers, bool, timestamps) in [lo, hi]
 * (inclusive, stored domain: qr_num_*): by its range index, a binary search
 * on the sort column, or a scan that skips blocks by min/max. */
qr_query *qr_q_range(const struct qr_tabdef *def, int col, int64_t lo, int64_t hi, qr_arena *a,
                     qr_err *e);
/* AND / OR of n >= 1 children (one child is returned as it is). */
qr_query *qr_q_list(qr_qtype type, qr_query *const *kids, uint32_t n, qr_arena *a, qr_err *e);
/* At least k of n children. */
qr_query *qr_q_minmatch(uint32_t k, qr_query *const *kids, uint32_t n, qr_arena *a, qr_err *e);
/* Rows kid does not match. */
qr_query *qr_q_not(qr_query *kid, qr_arena *a, qr_err *e);

/* Parse `text` for table `def` into a tree allocated in `a`; the tree
 * keeps no pointer into `text` or `def`. Errors name the byte:
 * "query: expected ')' at byte 12". */
qr_query *qr_query_parse_for(const struct qr_tabdef *def, const char *text, size_t n,
                             qr_arena *a, qr_err *e);
/* The same for the OpenTelemetry table. */
qr_query *qr_query_parse(const char *text, size_t n, qr_arena *a, qr_err *e);
/* Nothing to free: evaluation never writes into a tree (what it compiles is
 * per run, match/segsearch.h qr_qrun) and the tree lives in its arena. Kept so callers
 * need not change when a tree gains state of its own. */
void qr_query_release(qr_query *q);
/* Render a tree back (normalised) for messages and tests; into buf. */
void qr_query_print(const qr_query *q, char *buf, size_t size);

#endif
