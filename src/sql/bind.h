/* bind.h - the binder: a parsed SELECT (libpg_query's tree) bound against
 * the catalog into a qr_sqlsel, the logical form the planner reads.
 *
 * Names: an unquoted identifier matches a table or column case-
 * insensitively (Body, body and BODY all find Body); a quoted one exactly.
 * Errors carry a SQLSTATE and the 1-based character position in the
 * user's text: 42601 syntax, 42703 undefined column, 42P01 undefined table,
 * 42803 grouping, 42804 datatype mismatch, 0A000 a construct this slice
 * does not support, naming it ("JOIN is not supported yet at character 20").
 *
 * Ownership: the filter tree and every string live in the arena `a`
 * (query.h constructors); `def` points into the catalog, which must
 * outlive the qr_sqlsel. */
#ifndef QR_SQL_BIND_H
#define QR_SQL_BIND_H
#include <stdint.h>

#include "index/catalog.h"
#include "query/query.h"
#include "sql/parse.h"

#define QR_SQL_MAX_ITEMS 64
#define QR_SQL_MAX_GROUP 4
#define QR_SQL_MAX_ORDER 8

typedef enum {
    QR_SI_COL = 1, /* a table column */
    QR_SI_AGG,     /* an aggregate (fn: exec/aggregate.h qr_aggfn; col -1 for count(*)) */
    QR_SI_BM25,    /* the BM25 score */
} qr_sqlitem_kind;

typedef struct qr_sqlitem {
    uint8_t kind;
    uint8_t fn;
    int col;
    char name[64]; /* output name */
} qr_sqlitem;

typedef enum {
    QR_SO_BM25 = 1, /* ORDER BY bm25 */
    QR_SO_COL,      /* a table column */
    QR_SO_ITEM,     /* a select item (an aggregate, by position or alias) */
} qr_sqlorder_kind;

typedef struct qr_sqlorder {
    uint8_t kind;
    uint8_t desc;
    int col;       /* QR_SO_COL */
    uint32_t item; /* QR_SO_ITEM */
    int32_t loc;   /* where it was written (for errors) */
} qr_sqlorder;

typedef struct qr_sqlsel {
    const qr_tabdef *def;
    qr_query *filter; /* the WHERE clause as one index filter (qr_q_all without one) */
    int has_where;
    int explain; /* 1 EXPLAIN */
    uint32_t nitems;
    qr_sqlitem items[QR_SQL_MAX_ITEMS];
    int has_agg; /* an aggregate in the select list */
    uint32_t ngroup;
    int group[QR_SQL_MAX_GROUP];
    uint32_t norder;
    qr_sqlorder order[QR_SQL_MAX_ORDER];
    uint64_t limit; /* UINT64_MAX: none */
    uint64_t offset;
} qr_sqlsel;

/* Bind statement `stmt` of parse p (a SelectStmt, or an ExplainStmt of
 * one) against catalog c into *out. 0, or -1 with e set. */
int qr_sql_bind(const qr_sqlparse *p, const PgQuery__Node *stmt, const qr_catalog *c,
                qr_sqlsel *out, qr_arena *a, qr_err *e);

/* ---- for the WHERE translation (where.c) ---- */
typedef struct qr_binder {
    const qr_sqlparse *p;
    const qr_tabdef *def;
    const char *relname; /* the table's name as written (folded), NUL-terminated */
    const char *alias;   /* NULL when none */
    qr_arena *a;
    qr_err *e;
} qr_binder;

/* The table column a ColumnRef names (-1 with e set: 42703, 42P01). */
int qr_bind_column(qr_binder *b, const PgQuery__ColumnRef *cr);
/* Fail with `code` and a message at tree location loc; returns -1. */
int qr_bind_fail(qr_binder *b, int32_t loc, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The location of a node (-1 when it has none). */
int32_t qr_node_loc(const PgQuery__Node *n);
/* What a node is, for "X is not supported" messages. */
const char *qr_node_what(const PgQuery__Node *n);
/* The WHERE clause as one filter tree (NULL with b->e set). */
qr_query *qr_sql_where(qr_binder *b, const PgQuery__Node *n);
#endif
