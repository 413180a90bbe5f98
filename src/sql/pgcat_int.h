/* pgcat_int.h - what the catalog answers' files share (pgcat.h is the
 * contract): values, relations, the statement's state, the type table.
 *
 * A value (pcv) is NULL, a bool, an integer (every integer and OID type,
 * regclass and regtype included), a float, a string (text, name, char,
 * regproc) or an array of values; `t` is its PostgreSQL type OID, which
 * says how it prints and compares. Every value and row of a statement lives
 * in its arena (pcx.a). */
#ifndef QR_SQL_PGCAT_INT_H
#define QR_SQL_PGCAT_INT_H
#include <stdint.h>

#include "sql/pgcat.h"
#include "util/arena.h"
#include "util/buf.h"

/* PostgreSQL type OIDs used here */
enum {
    PT_BOOL = 16,
    PT_BYTEA = 17,
    PT_CHAR = 18,
    PT_NAME = 19,
    PT_INT8 = 20,
    PT_INT2 = 21,
    PT_INT2VECTOR = 22,
    PT_INT4 = 23,
    PT_REGPROC = 24,
    PT_TEXT = 25,
    PT_OID = 26,
    PT_OIDVECTOR = 30,
    PT_JSON = 114,
    PT_NODETREE = 194,
    PT_FLOAT4 = 700,
    PT_FLOAT8 = 701,
    PT_UNKNOWN = 705,
    PT_ACLITEM = 1033,
    PT_BPCHAR = 1042,
    PT_VARCHAR = 1043,
    PT_TIMESTAMP = 1114,
    PT_TIMESTAMPTZ = 1184,
    PT_NUMERIC = 1700,
    PT_REGCLASS = 2205,
    PT_REGTYPE = 2206,
    PT_REGNAMESPACE = 4089,
    PT_RECORD = 2249,
    /* arrays */
    PT_BOOL_ARR = 1000,
    PT_CHAR_ARR = 1002,
    PT_NAME_ARR = 1003,
    PT_INT2_ARR = 1005,
    PT_INT4_ARR = 1007,
    PT_TEXT_ARR = 1009,
    PT_OID_ARR = 1028,
    PT_ACLITEM_ARR = 1034,
    PT_INT8_ARR = 1016,
};

enum { PV_NULL = 0, PV_BOOL, PV_INT, PV_FLOAT, PV_STR, PV_ARR };

typedef struct pcv {
    uint8_t k;                 /* PV_* */
    uint32_t t;                /* PostgreSQL type OID */
    int64_t i;                 /* BOOL, INT */
    double f;                  /* FLOAT */
    const char *s;             /* STR: bytes (not NUL-terminated in general) */
    uint32_t n;                /* STR: length; ARR: items */
    const struct pcv *a;       /* ARR: items */
    const char *const *fields; /* a record (t PT_RECORD): its items' names */
} pcv;

/* A relation: named, typed columns and rows (nrows x ncols values). */
typedef struct pccol {
    const char *name;
    uint32_t type;
} pccol;

typedef struct pcrel {
    const char *name;
    uint32_t oid; /* a catalog relation's own OID (pg_class row), or 0 */
    uint32_t ncols;
    const pccol *cols;
    uint32_t nrows, cap;
    pcv *rows;
} pcrel;

#define PC_MAX_RELS 64

/* A statement's state. */
typedef struct pcx {
    const qr_pgcat_env *env;
    const qr_sqlparse *p;
    qr_arena *a;
    qr_qctx *ctx;
    qr_err *e;
    pcrel *rels[PC_MAX_RELS]; /* catalog relations built so far (by def index) */
    int depth;                /* of nested queries (a bound against deep trees) */
    uint32_t ticks;           /* qr_qctx_tick's counter */
} pcx;

/* ---- types (pgcat_rel.c) ---- */
typedef struct pctype {
    uint32_t oid;
    const char *name;    /* typname */
    const char *fmt;     /* format_type's text */
    int16_t len;         /* typlen */
    char category;       /* typcategory */
    uint32_t array;      /* typarray (0: none) */
    uint32_t elem;       /* typelem (arrays) */
    char align, storage; /* typalign, typstorage */
    uint32_t collation;  /* typcollation */
} pctype;
const pctype *pc_type_by_oid(uint32_t oid);
const pctype *pc_type_by_name(const char *name);
/* The element type of array type t, or 0. */
uint32_t pc_array_elem(uint32_t t);
/* The PostgreSQL type of Quarry column type qt. */
uint32_t pc_type_of_qr(int qt);

/* ---- relations (pgcat_rel.c) ---- */
/* The definition index of relation `name` in `schema` (NULL: the search
 * path: pg_catalog, then information_schema is not searched), or -1. */
int pc_rel_find(const char *schema, const char *name);
/* The relation of definition index d, built on first use. NULL with e. */
const pcrel *pc_rel_get(pcx *x, int d);
/* OID -> relation name (user tables, their indexes, catalog relations),
 * for regclass; NULL when unknown. nsp gets the schema's name. */
const char *pc_relname_of(pcx *x, int64_t oid, const char **nsp);
/* relation name (optionally qualified) -> OID, 0 when unknown */
uint32_t pc_reloid_of(pcx *x, const char *name);
/* Index definitions of user table oid: its tabdef, or NULL */
const qr_tabdef *pc_table_of(pcx *x, int64_t oid);
/* The CREATE INDEX text of index oid (pg_get_indexdef), or col > 0: the
 * column's quoted name; NULL when oid is not an index. */
const char *pc_indexdef(pcx *x, int64_t oid, int col);

/* ---- values (pgcat_eval.c) ---- */
pcv pc_null(void);
pcv pc_int(int64_t i, uint32_t t);
pcv pc_bool(int b);
pcv pc_str(pcx *x, const char *s, size_t n, uint32_t t);
pcv pc_cstr(const char *s, uint32_t t); /* s stays valid for the statement */
/* Text form of v as PostgreSQL prints it (arrays {a,b}, bool t/f). */
void pc_text(pcx *x, const pcv *v, qr_buf *b);
/* Append a row to r (values copied); -1 with e set. */
int pc_rel_add(pcx *x, pcrel *r, const pcv *row);
int pc_fail(pcx *x, int32_t loc, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int pc_nomem(pcx *x);
#endif
