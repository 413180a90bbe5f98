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

#include "exec/expr.h"
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
    QR_SI_EXPR,    /* an expression x (row scope, or group scope with aggregates) */
} qr_sqlitem_kind;

typedef struct qr_sqlitem {
    uint8_t kind;
    uint8_t fn;
    int col;
    qr_expr *x;    /* QR_SI_EXPR */
    char name[64]; /* output name */
} qr_sqlitem;

/* An aggregate of the statement (select list, HAVING, ORDER BY). */
typedef struct qr_sqlagg {
    uint8_t fn;    /* exec/aggregate.h qr_aggfn */
    int col;       /* a plain column argument; -1 for count(*) or an expression */
    qr_expr *arg;  /* the argument in row scope (NULL for count(*)) */
    uint8_t distinct; /* count(DISTINCT arg) */
    int32_t loc;
} qr_sqlagg;

typedef enum {
    QR_SO_BM25 = 1, /* ORDER BY bm25 */
    QR_SO_COL,      /* a table column */
    QR_SO_ITEM,     /* a select item (an aggregate, by position or alias) */
    QR_SO_EXPR,     /* an expression x (the scope of the select list) */
} qr_sqlorder_kind;

typedef struct qr_sqlorder {
    uint8_t kind;
    uint8_t desc;
    uint8_t nulls_flip; /* NULLS FIRST ascending / NULLS LAST descending */
    qr_expr *x; /* QR_SO_EXPR */
    int col;       /* QR_SO_COL */
    uint32_t item; /* QR_SO_ITEM */
    int32_t loc;   /* where it was written (for errors) */
} qr_sqlorder;

#define QR_SQL_MAX_AGGS 32

/* What EXPLAIN ANALYZE reports: filled by the executor when a statement's
 * stats pointer is set (times in ns, rows by stage). */
typedef struct qr_sqlstats {
    int64_t t_scan, t_agg, t_post, t_total;
    uint64_t matched; /* rows the index scan gave (after the residual filter: kept) */
    uint64_t kept;
    uint64_t groups;
    uint64_t out;
    uint32_t nent;
    uint64_t ent_rows[8], join_rows[8];
    int64_t t_ent[8], t_join[8];
    int termjoin; /* the join was counted from the keyword indexes (sql/termjoin.c) */
    uint64_t tj_terms, tj_settled, tj_summed, tj_shared, tj_keys;
    int tj_map_built; /* the segments' key map was built by this join */
    int tj_grouped;   /* GROUP BY a column of one side, rows weighed */
    int tj_distinct;  /* count(DISTINCT key) of one table, by ordinal */
    int64_t tj_map_ns;
    int have_matched, have_kept;
} qr_sqlstats;
#define QR_SQL_MAX_RANGES 8

/* The FROM entries of a join: a column is a slot of the joined row, the
 * entry's base + its position in the entry's table. */
typedef struct qr_sqlscope {
    uint32_t n;
    struct {
        const qr_tabdef *def;
        const char *relname, *alias; /* alias NULL when none */
        uint32_t base;
    } r[QR_SQL_MAX_RANGES];
    uint32_t nslots;
} qr_sqlscope;


typedef struct qr_sqlsel {
    const qr_tabdef *def; /* NULL: SELECT without FROM (one row, no column) */
    qr_query *filter; /* the WHERE conjuncts the index answers (qr_q_all without one) */
    int has_where;
    qr_expr *rest;   /* the WHERE conjuncts it cannot: evaluated on column values (NULL: none) */
    uint8_t *need;   /* [def->ncols]: 1 for each column a row-scope expression reads */
    int uses_score;  /* a row-scope expression reads bm25() */
    int grouped;     /* GROUP BY, aggregates, HAVING or DISTINCT: items are group-scope */
    qr_expr *gx[QR_SQL_MAX_GROUP]; /* the GROUP BY keys in row scope (group[k]: -1 unless a column) */
    uint32_t naggs;
    qr_sqlagg aggs[QR_SQL_MAX_AGGS];
    uint8_t slot_type[QR_SQL_MAX_GROUP + QR_SQL_MAX_AGGS];  /* group scope: qr_xtype per slot */
    uint8_t slot_ctype[QR_SQL_MAX_GROUP + QR_SQL_MAX_AGGS]; /* its stored qr_type */
    qr_expr *having; /* group scope; NULL: none */
    /* A join (def NULL, scope.n >= 2): entry r is scanned with its own index
     * filter and residual (slots of its table), then joined left-deep to
     * the entries before it on equal keys, the joined rows filtered by its
     * on_rest; `rest` then filters the joined rows, and everything after it
     * reads joined slots. */
    qr_sqlscope scope;
    struct {
        qr_query *filter;
        int has_where;
        qr_expr *rest;
        uint8_t kind;                  /* QR_JOIN_* (exec/join.h), entries r >= 1 */
        qr_expr *on_rest;              /* an inner join's other ON terms (joined slots) */
        struct qr_sqlsel *sub;         /* a subquery in FROM or a WITH query: its rows */
        int sub_kind;                  /* its plan */
        uint32_t nkeys;                /* equal keys with the entries before it */
        qr_expr *lkey[4], *rkey[4];    /* joined slots / the entry's own slots */
    } rng[QR_SQL_MAX_RANGES];
    int explain; /* 1 EXPLAIN, 2 EXPLAIN ANALYZE */
    int no_merge_join;  /* SET enable_mergejoin = off: joins by hash alone */
    qr_sqlstats *stats; /* EXPLAIN ANALYZE: where the executor reports (else NULL) */
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

/* ---- for the WHERE translation (where.c) and expressions (bindexpr.c) ---- */
typedef struct qr_binder {
    const qr_sqlparse *p;
    const qr_tabdef *def;
    const char *relname; /* the table's name as written (folded), NUL-terminated */
    const char *alias;   /* NULL when none */
    qr_arena *a;
    qr_err *e;
    const qr_sqlscope *scope; /* several FROM entries (def NULL then), or NULL */
    uint32_t last_range;      /* the entry of the last column bound through scope */
} qr_binder;

/* For each of the n dotted parts of a name written at loc: quoted or not. */
void qr_bind_quoted_parts(const qr_sqlparse *p, int32_t loc, int *q, size_t n);
/* An expression binder of the row scope (columns of def, or the scope's). */
struct qr_sqlsel;
/* The FROM clause of a join (several entries, or JOIN): the scope, each
 * entry's pushed-down filter and residual, the join keys, the filter on
 * joined rows (join.c). 0, or -1 with b->e set. */
int qr_bind_from_join(qr_binder *b, struct qr_sqlsel *s, const PgQuery__SelectStmt *st,
                      const qr_catalog *c);

/* The column definition of slot c (a column of def, or a slot of scope). */
const qr_coldef *qr_bind_coldef(const qr_binder *b, int c);
/* 1 when an ORDER BY key's NULLS FIRST|LAST is not its direction's default. */
uint8_t qr_sql_nulls_flip(const PgQuery__SortBy *sb);

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
/* A timestamp literal's text (TIMESTAMP 'YYYY-MM-DD[ HH:MM:SS[.f]]', RFC
 * 3339; no zone = UTC) as ns: 0, or -1. */
int qr_sql_parse_time(const char *s, int64_t *ns);

/* Binding an expression (bindexpr.c). Row scope: agg_cb NULL, columns are
 * the table's (slot = column position; need[col] set). Group scope:
 * agg_cb registers an aggregate call and returns its slot (>= 0; -1 not
 * an aggregate, -2 failed), keys[0..nkeys) are the GROUP BY keys in row
 * scope (an equal expression reads slot k), and a bare column is 42803. */
typedef struct qr_xbind {
    qr_binder *b;
    uint8_t *need;
    const char *where; /* "in WHERE", for "aggregate functions are not allowed ..." */
    int allow_score, uses_score;
    uint32_t refs; /* bit r: the expression reads a column of FROM entry r */
    int (*agg_cb)(struct qr_xbind *x, const PgQuery__FuncCall *f);
    void *cb_ctx;
    uint32_t nkeys;
    qr_expr *const *keys;
    const uint8_t *slot_type, *slot_ctype;
} qr_xbind;
qr_expr *qr_sql_expr(qr_xbind *x, const PgQuery__Node *n);
qr_xbind qr_bind_row_scope(qr_binder *b, struct qr_sqlsel *s, const char *where, int score);
/* The same, the value must be boolean (what: "WHERE", "HAVING"). */
qr_expr *qr_sql_bool_expr(qr_xbind *x, const PgQuery__Node *n, const char *what);
/* For an index predicate n that negates a comparison of a nullable column
 * (`col <> v`, NOT IN, NOT BETWEEN): *guard = `col IS NOT NULL` (the index's
 * NOT keeps NULL rows, SQL's does not), else NULL. need marks the column. */
int qr_bind_null_guard(qr_binder *b, struct qr_sqlsel *s, uint8_t *need, const PgQuery__Node *n,
                       qr_expr **guard);
/* 1 when a and b are the same expression. */
int qr_expr_same(const qr_expr *a, const qr_expr *b);
#endif
