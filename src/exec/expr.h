/* expr.h - scalar expressions of SQL (the select list, residual WHERE
 * filters, GROUP BY keys, HAVING, ORDER BY), bound once and evaluated a
 * batch at a time: every node turns its arguments' value arrays into one
 * value array, so the interpretation cost is paid per batch, not per row.
 *
 * Values are result cells (exec/result.h) in their natural domain, typed by
 * the node (qr_xtype): BOOL and INT in i, FLOAT in f, TIMESTAMP (ns since
 * the epoch, UTC) in i, TEXT and JSON as bytes s/n. Input columns come as
 * cells in the stored domain of their table column type (what
 * qr_x_project and the aggregation give) and are converted when read.
 *
 * Semantics are PostgreSQL's where the two overlap: three-valued logic
 * (NULL AND false is false, NULL AND true is NULL), comparisons and
 * arithmetic with a NULL give NULL, integer arithmetic is exact (22003 on
 * overflow, 22012 on division by zero, integer division truncates), text
 * compares bytewise (the C collation), LIKE's % and _ match characters,
 * ILIKE folds case (Unicode simple case folding). See docs/SQL.md.
 *
 * Ownership: nodes and constants live in the arena they were built in
 * (the statement's); evaluation allocates its arrays and text bytes from
 * the arena passed to qr_expr_eval (reset per batch by the caller).
 * Compiled regular expressions are freed by qr_expr_free_tree. */
#ifndef QR_EXEC_EXPR_H
#define QR_EXEC_EXPR_H
#include <stdint.h>

#include "exec/result.h"
#include "util/arena.h"
#include "util/err.h"

typedef enum {
    QR_XT_NULL = 0, /* the type of a bare NULL literal */
    QR_XT_BOOL,
    QR_XT_INT,
    QR_XT_FLOAT,
    QR_XT_TEXT,
    QR_XT_TS,
    QR_XT_JSON,
} qr_xtype;

typedef enum {
    QR_EX_COL = 1, /* input column `slot` (stored domain of `ctype`) */
    QR_EX_CONST,   /* val */
    QR_EX_SCORE,   /* the row's BM25 score (FLOAT) */
    QR_EX_ARITH,   /* args[0] op args[1]: op '+', '-', '*', '/', '%' */
    QR_EX_NEG,     /* -args[0] */
    QR_EX_CMP,     /* args[0] op args[1]: op one of qr_xcmp */
    QR_EX_AND,     /* all args (n-ary) */
    QR_EX_OR,
    QR_EX_NOT,
    QR_EX_ISNULL, /* args[0] IS NULL (neg: IS NOT NULL) */
    QR_EX_IN,     /* args[0] IN (args[1..]) (neg: NOT IN) */
    QR_EX_LIKE,   /* args[0] LIKE args[1] (icase: ILIKE; neg: NOT) */
    QR_EX_CASE,   /* WHEN args[2i] THEN args[2i+1] ..., ELSE args[n-1] when odd */
    QR_EX_CAST,   /* args[0] as `type` */
    QR_EX_FUNC,   /* fn(args) */
} qr_exkind;

typedef enum { QR_CMP_EQ = 1, QR_CMP_NE, QR_CMP_LT, QR_CMP_LE, QR_CMP_GT, QR_CMP_GE } qr_xcmp;

typedef enum {
    QR_FN_DATE_TRUNC = 1, /* date_trunc(unit, ts): unit in `unit` */
    QR_FN_LOWER,
    QR_FN_UPPER,
    QR_FN_LENGTH,       /* characters */
    QR_FN_OCTET_LENGTH, /* bytes */
    QR_FN_ABS,
    QR_FN_COALESCE,
    QR_FN_NULLIF,
    QR_FN_SUBSTR, /* substr(text, from [, count]): characters, 1-based */
    QR_FN_CONCAT, /* concat(...): NULLs skipped */
    QR_FN_CONCAT_OP, /* a || b: NULL if either is */
    QR_FN_STARTS_WITH,
    QR_FN_REGEXP_MATCHES, /* regexp_matches(text, pattern): BOOL, POSIX ERE, a match anywhere */
    QR_FN_JSON_GET,       /* json -> key/index: JSON */
    QR_FN_JSON_GET_TEXT,  /* json ->> key/index: TEXT */
    QR_FN_GREATEST,
    QR_FN_LEAST,
    QR_FN_STRPOS, /* strpos(text, sub), position(sub IN text): characters, 1-based, 0 absent */
    QR_FN_EXTRACT, /* extract(field FROM ts) / date_part: FLOAT; field in `unit` (qr_xfield) */
    QR_FN_FLOOR,   /* floor(x), ceil(x): the argument's type */
    QR_FN_CEIL,
} qr_xfn;

/* extract's fields */
typedef enum {
    QR_XF_EPOCH = 1, /* seconds since 1970-01-01 UTC, with the fraction */
    QR_XF_YEAR,
    QR_XF_MONTH,
    QR_XF_DAY,
    QR_XF_HOUR,
    QR_XF_MINUTE,
    QR_XF_SECOND, /* with the fraction */
    QR_XF_DOW,    /* 0 = Sunday */
    QR_XF_DOY,
} qr_xfield;
/* The field of extract named s (case-insensitive), or 0. */
int qr_xfield_parse(const char *s);
/* extract(field FROM ts), ts in ns since the epoch. */
double qr_extract(int field, int64_t ts);

/* date_trunc units, in increasing size. */
typedef enum {
    QR_TU_MICROSECOND = 1,
    QR_TU_MILLISECOND,
    QR_TU_SECOND,
    QR_TU_MINUTE,
    QR_TU_HOUR,
    QR_TU_DAY,
    QR_TU_WEEK, /* weeks start on Monday (ISO 8601), as PostgreSQL's */
    QR_TU_MONTH,
    QR_TU_QUARTER,
    QR_TU_YEAR,
} qr_tunit;

typedef struct qr_expr {
    uint8_t kind;  /* qr_exkind */
    uint8_t type;  /* qr_xtype of the value */
    uint8_t op;    /* ARITH: the operator; CMP: qr_xcmp */
    uint8_t fn;    /* FUNC: qr_xfn */
    uint8_t neg;   /* ISNULL, IN, LIKE: negated */
    uint8_t icase; /* LIKE: ILIKE */
    uint8_t unit;  /* FUNC date_trunc: qr_tunit; extract: qr_xfield */
    uint8_t ctype; /* COL: the table column's qr_type */
    uint32_t slot; /* COL: the input column */
    int32_t loc;   /* where it was written (errors) */
    qr_cell val;   /* CONST */
    uint32_t nargs;
    struct qr_expr **args;
    void *re; /* FUNC regexp_matches with a constant pattern: regex_t */
} qr_expr;

/* A batch of input rows: ncols columns of n cells each (column-major,
 * stored domain of types[c]; cols[c] may be NULL for a column no node
 * reads), and the rows' BM25 scores (NULL when there are none). */
typedef struct qr_xbatch {
    uint32_t n;
    uint32_t ncols;
    const qr_cell *const *cols;
    const uint8_t *types;
    const double *score;
} qr_xbatch;

/* The n values of x over batch b, in an array from arena a (or b's own
 * column for a plain COL of a column stored as its natural value). NULL
 * with e set (22003, 22012, 22023, 2201B, 53200). */
const qr_cell *qr_expr_eval(const qr_expr *x, const qr_xbatch *b, qr_arena *a, qr_err *e);

/* Rows of b where predicate x is true (not false or NULL): their indexes
 * ascending into sel (room for b->n), their number into *n. */
int qr_expr_filter(const qr_expr *x, const qr_xbatch *b, uint32_t *sel, uint32_t *n, qr_arena *a,
                   qr_err *e);

/* A stored-domain cell of table column type t as a natural value of type
 * qr_xtype_of_col(t) (text and JSON bytes are shared, not copied). */
qr_cell qr_x_natural(int t, qr_cell c);
int qr_xtype_of_col(int t);
const char *qr_xtype_name(int t);
/* The stored type whose cells hold values of expression type xt as they
 * are (no conversion when read back by a COL node). */
int qr_xtype_ctype(int xt);
/* Result column (kind, qr_type) of an expression type. */
void qr_xtype_rcol(int xt, int *kind, int *type);

/* Compare two non-NULL values of type t (FLOAT: NaN largest; TEXT, JSON:
 * bytewise): <0, 0, >0. */
int qr_xval_cmp(int t, const qr_cell *a, const qr_cell *b);

/* ts truncated to unit (ts in ns since the epoch, UTC). */
int64_t qr_date_trunc(int unit, int64_t ts);
/* The unit named s ("minute", "minutes", ... case-insensitive); 0 if none. */
int qr_tunit_parse(const char *s);
/* SQL LIKE (escape '\'); icase folds case. 1 match, 0 not. */
int qr_like(const char *s, size_t n, const char *pat, size_t pn, int icase);

/* The one input column x reads (its slot), or -1 when it reads none, several,
 * or the score. */
int qr_expr_one_col(const qr_expr *x);

/* Prepare nodes for evaluation (compile constant regular expressions): 0,
 * or -1 with e set (2201B for a bad pattern). */
int qr_expr_prepare(qr_expr *x, qr_err *e);
/* Free what qr_expr_prepare made (the nodes themselves are the arena's). */
void qr_expr_free_tree(qr_expr *x);
#endif
