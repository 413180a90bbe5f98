/* pgcat_expr.c - expressions of the catalog answers (pgcat.h), one row at a
 * time over libpg_query's tree: values and their text forms, column
 * references through the scopes of nested queries, operators (comparison
 * with PostgreSQL's unknown-literal rule: a quoted literal takes the other
 * side's type, so '16385' = oid compares numbers), POSIX regular
 * expressions, casts (regclass, regtype, regproc, oid, text, arrays), CASE,
 * COALESCE, subqueries (scalar, EXISTS, IN, ARRAY), the functions clients
 * call (pgcat_fn below) and the static type of an expression (pc_typeof),
 * which the RowDescription needs before any row exists.
 *
 * Nothing is evaluated that a row does not reach: a function of an empty
 * relation's columns is never called (its name and arguments' count are
 * still checked by pc_typeof). */
#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/pgcat_eval.h"

typedef PgQuery__Node Node;

/* ---- values ---- */
pcv pc_null(void) { return (pcv){.k = PV_NULL, .t = PT_UNKNOWN}; }
pcv pc_int(int64_t i, uint32_t t) { return (pcv){.k = PV_INT, .t = t ? t : PT_INT4, .i = i}; }
pcv pc_bool(int b) { return (pcv){.k = PV_BOOL, .t = PT_BOOL, .i = b != 0}; }
pcv pc_cstr(const char *s, uint32_t t)
{
    return (pcv){
        .k = PV_STR, .t = t ? t : PT_TEXT, .s = s ? s : "", .n = s ? (uint32_t)strlen(s) : 0};
}
pcv pc_str(pcx *x, const char *s, size_t n, uint32_t t)
{
    char *c = qr_arena_strndup(x->a, s, n);
    if (!c) {
        pc_nomem(x);
        return pc_null();
    }
    return (pcv){.k = PV_STR, .t = t ? t : PT_TEXT, .s = c, .n = (uint32_t)n};
}

int pc_fail(pcx *x, int32_t loc, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[400];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    qr_errf(x->e, code, "%s", msg);
    return qr_sqlp_at(x->p, loc, x->e);
}

int pc_nomem(pcx *x)
{
    return x->ctx ? qr_qctx_nomem(x->ctx, x->e) : qr_errf(x->e, QR_E_NOMEM, "out of memory");
}

static void put_str(qr_buf *b, const char *s) { qr_buf_put(b, s, strlen(s)); }

/* array element text: quoted when it needs it (as array_out does) */
static void put_elem(pcx *x, const pcv *v, qr_buf *b)
{
    if (v->k == PV_NULL) {
        put_str(b, "NULL");
        return;
    }
    qr_buf t;
    qr_buf_init(&t);
    pc_text(x, v, &t);
    int q = t.len == 0 || (t.len == 4 && !strncasecmp((const char *)t.p, "null", 4));
    for (size_t i = 0; i < t.len && !q; i++)
        q = strchr("{},\"\\ ", t.p[i]) != NULL;
    if (q)
        qr_buf_put_u8(b, '"');
    for (size_t i = 0; i < t.len; i++) {
        if (q && (t.p[i] == '"' || t.p[i] == '\\'))
            qr_buf_put_u8(b, '\\');
        qr_buf_put_u8(b, t.p[i]);
    }
    if (q)
        qr_buf_put_u8(b, '"');
    qr_buf_free(&t);
}

void pc_text(pcx *x, const pcv *v, qr_buf *b)
{
    char num[64];
    switch (v->k) {
    case PV_BOOL:
        qr_buf_put_u8(b, v->i ? 't' : 'f');
        return;
    case PV_INT:
        if (v->t == PT_REGCLASS) {
            const char *nsp, *n = pc_relname_of(x, v->i, &nsp);
            if (n) {
                put_str(b, n);
                return;
            }
        } else if (v->t == PT_REGTYPE) {
            const pctype *ty = pc_type_by_oid((uint32_t)v->i);
            if (ty) {
                put_str(b, ty->fmt);
                return;
            }
        } else if (v->t == PT_REGNAMESPACE) {
            const char *n = v->i == 11      ? "pg_catalog"
                            : v->i == 2200  ? "public"
                            : v->i == 13000 ? "information_schema"
                                            : NULL;
            if (n) {
                put_str(b, n);
                return;
            }
        }
        snprintf(num, sizeof num, "%lld", (long long)v->i);
        put_str(b, num);
        return;
    case PV_FLOAT:
        if (v->t == PT_FLOAT4)
            snprintf(num, sizeof num, "%.7g", v->f);
        else
            snprintf(num, sizeof num, "%.17g", v->f);
        if (isinf(v->f))
            snprintf(num, sizeof num, "%s", v->f > 0 ? "Infinity" : "-Infinity");
        put_str(b, num);
        return;
    case PV_STR:
        qr_buf_put(b, v->s, v->n);
        return;
    case PV_ARR:
        if (v->t == PT_INT2VECTOR || v->t == PT_OIDVECTOR) { /* space separated */
            for (uint32_t i = 0; i < v->n; i++) {
                if (i)
                    qr_buf_put_u8(b, ' ');
                pc_text(x, &v->a[i], b);
            }
            return;
        }
        qr_buf_put_u8(b, '{');
        for (uint32_t i = 0; i < v->n; i++) {
            if (i)
                qr_buf_put_u8(b, ',');
            put_elem(x, &v->a[i], b);
        }
        qr_buf_put_u8(b, '}');
        return;
    default:
        return;
    }
}

static int to_text(pcx *x, const pcv *v, pcv *out, uint32_t t)
{
    qr_buf b;
    qr_buf_init(&b);
    pc_text(x, v, &b);
    int rc = b.oom ? pc_nomem(x) : 0;
    if (rc == 0)
        *out = pc_str(x, b.len ? (const char *)b.p : "", b.len, t);
    qr_buf_free(&b);
    return rc == 0 && out->k == PV_NULL ? -1 : rc;
}

/* text -> int64 (22P02 when it does not read) */
static int parse_int(pcx *x, const pcv *v, int64_t *out, const char *type)
{
    char buf[64];
    if (v->n == 0 || v->n >= sizeof buf)
        return pc_fail(x, -1, QR_E_INVALID_TEXT, "invalid input syntax for type %s: \"%.*s\"", type,
                       (int)(v->n > 64 ? 64 : v->n), v->s);
    memcpy(buf, v->s, v->n);
    buf[v->n] = 0;
    char *end;
    long long i = strtoll(buf, &end, 10);
    while (*end == ' ')
        end++;
    if (*end || end == buf)
        return pc_fail(x, -1, QR_E_INVALID_TEXT, "invalid input syntax for type %s: \"%s\"", type,
                       buf);
    *out = i;
    return 0;
}

/* Compare a and b for sorting: NULL after everything. Numbers numerically,
 * strings bytewise (C collation), arrays by elements. */
int pc_cmp(const pcv *a, const pcv *b)
{
    if (a->k == PV_NULL || b->k == PV_NULL)
        return (a->k == PV_NULL) - (b->k == PV_NULL);
    if (a->k == PV_ARR && b->k == PV_ARR) {
        for (uint32_t i = 0; i < a->n && i < b->n; i++) {
            int c = pc_cmp(&a->a[i], &b->a[i]);
            if (c)
                return c;
        }
        return (a->n > b->n) - (a->n < b->n);
    }
    if ((a->k == PV_INT || a->k == PV_BOOL) && (b->k == PV_INT || b->k == PV_BOOL))
        return (a->i > b->i) - (a->i < b->i);
    if ((a->k == PV_INT || a->k == PV_FLOAT) && (b->k == PV_INT || b->k == PV_FLOAT)) {
        double x = a->k == PV_INT ? (double)a->i : a->f, y = b->k == PV_INT ? (double)b->i : b->f;
        return (x > y) - (x < y);
    }
    if (a->k == PV_STR && b->k == PV_STR) {
        uint32_t n = a->n < b->n ? a->n : b->n;
        int c = memcmp(a->s, b->s, n);
        return c ? (c > 0) - (c < 0) : (a->n > b->n) - (a->n < b->n);
    }
    return (a->k > b->k) - (a->k < b->k);
}

/* Bring an unknown literal (or text) to the other side's kind before a
 * comparison: '16385' = oid, 't' = bool, 'logs'::regclass style names. */
static int unify(pcx *x, pcv *a, pcv *b)
{
    for (int side = 0; side < 2; side++) {
        pcv *s = side ? b : a, *o = side ? a : b;
        if (s->k != PV_STR || o->k == PV_STR || o->k == PV_NULL || o->k == PV_ARR)
            continue;
        if (o->k == PV_INT) {
            if (o->t == PT_REGCLASS) {
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)(s->n > 255 ? 255 : s->n), s->s);
                *s = pc_int(pc_reloid_of(x, name), PT_REGCLASS);
                continue;
            }
            int64_t i;
            if (parse_int(x, s, &i, o->t == PT_OID ? "oid" : "integer") != 0)
                return -1;
            *s = pc_int(i, o->t);
        } else if (o->k == PV_BOOL) {
            int t = s->n && (s->s[0] == 't' || s->s[0] == 'T' || s->s[0] == 'y' || s->s[0] == '1' ||
                             (s->n > 1 && !strncasecmp(s->s, "on", 2)));
            *s = pc_bool(t);
        } else if (o->k == PV_FLOAT) {
            char buf[64];
            snprintf(buf, sizeof buf, "%.*s", (int)(s->n > 63 ? 63 : s->n), s->s);
            *s = (pcv){.k = PV_FLOAT, .t = PT_FLOAT8, .f = strtod(buf, NULL)};
        }
    }
    return 0;
}

/* ---- scopes: column references ---- */
static const char *sval(const Node *n)
{
    return n && n->node_case == PG_QUERY__NODE__NODE_STRING ? n->string->sval : NULL;
}

static int col_of(const pcrel *r, const char *name)
{
    for (uint32_t c = 0; c < r->ncols; c++)
        if (!strcmp(r->cols[c].name, name))
            return (int)c;
    return -1;
}

static int is_using_col(const pcitem *it, const char *name)
{
    for (size_t i = 0; i < it->nusing; i++)
        if (sval(it->using_cols[i]) && !strcmp(sval(it->using_cols[i]), name))
            return 1;
    return 0;
}

int pc_resolve(pcx *x, const PgQuery__ColumnRef *cr, const pcscope *s, const pcscope **at,
               uint32_t *item, uint32_t *col)
{
    const char *f[3] = {0};
    size_t nf = cr->n_fields;
    if (nf == 0 || nf > 3)
        return pc_fail(x, cr->location, QR_E_FEATURE, "this column reference is not supported");
    for (size_t i = 0; i < nf; i++) {
        f[i] = sval(cr->fields[i]);
        if (!f[i])
            return pc_fail(x, cr->location, QR_E_FEATURE, "%s is not supported here",
                           cr->fields[i]->node_case == PG_QUERY__NODE__NODE_A_STAR
                               ? "* in an expression"
                               : "this column reference");
    }
    const char *name = f[nf - 1], *qual = nf >= 2 ? f[nf - 2] : NULL;
    for (const pcscope *sc = s; sc; sc = sc->up) {
        int found = -1, fc = -1;
        for (uint32_t k = 0; k < sc->n; k++) {
            const pcitem *it = &sc->it[k];
            if (qual && (!it->alias || strcmp(it->alias, qual) != 0))
                continue;
            int c = col_of(it->rel, name);
            if (c < 0)
                continue;
            if (found >= 0 && !qual) {
                if (is_using_col(it, name)) /* JOIN ... USING (name): the left one */
                    continue;
                return pc_fail(x, cr->location, "42702", "column reference \"%s\" is ambiguous",
                               name);
            }
            found = (int)k, fc = c;
        }
        if (found >= 0) {
            *at = sc, *item = (uint32_t)found, *col = (uint32_t)fc;
            return 0;
        }
    }
    if (qual) {
        for (const pcscope *sc = s; sc; sc = sc->up)
            for (uint32_t k = 0; k < sc->n; k++)
                if (sc->it[k].alias && !strcmp(sc->it[k].alias, qual))
                    return pc_fail(x, cr->location, QR_E_UNDEFINED_COLUMN,
                                   "column %s.%s does not exist", qual, name);
        return pc_fail(x, cr->location, QR_E_UNDEFINED_TABLE,
                       "missing FROM-clause entry for table \"%s\"", qual);
    }
    return pc_fail(x, cr->location, QR_E_UNDEFINED_COLUMN, "column \"%s\" does not exist", name);
}

/* ---- functions ---- */
enum {
    F_AGG = 1,
    F_WINDOW,
    F_TRUE,
    F_FALSE,
    F_NULL,
    F_USERBYID,
    F_FORMAT_TYPE,
    F_INDEXDEF,
    F_ENCODING,
    F_ARRAY_TO_STRING,
    F_ARRAY_UPPER,
    F_ARRAY_LOWER,
    F_ARRAY_LENGTH,
    F_CARDINALITY,
    F_STRING_TO_ARRAY,
    F_REL_SIZE,
    F_DB_SIZE,
    F_SIZE_PRETTY,
    F_QUOTE_IDENT,
    F_CURRENT_SCHEMA,
    F_CURRENT_SCHEMAS,
    F_CURRENT_DATABASE,
    F_VERSION,
    F_CURRENT_SETTING,
    F_TABLE_IS_VISIBLE,
    F_LOWER,
    F_UPPER,
    F_LENGTH,
    F_BTRIM,
    F_LTRIM,
    F_RTRIM,
    F_REPLACE,
    F_CONCAT,
    F_SUBSTR,
    F_PARSE_IDENT,
    F_TO_REGCLASS,
    F_TO_REGTYPE,
    F_SRF,
    F_DESCRIPTION,
    F_EXPANDARRAY,
    F_STRPOS,
    F_LEFT,
    F_RIGHT,
    F_CURRENT_USER,
    F_BACKEND_PID,
    F_FORMAT_TYPE_NULL,
};

typedef struct fndef {
    const char *name;
    int id, min, max;
    uint32_t ret; /* 0: the first argument's type */
} fndef;

static const fndef fns[] = {
    {"count", F_AGG, 0, 1, PT_INT8},
    {"sum", F_AGG, 1, 1, 0},
    {"min", F_AGG, 1, 1, 0},
    {"max", F_AGG, 1, 1, 0},
    {"avg", F_AGG, 1, 1, PT_FLOAT8},
    {"string_agg", F_AGG, 2, 2, PT_TEXT},
    {"array_agg", F_AGG, 1, 1, PT_TEXT_ARR},
    {"bool_and", F_AGG, 1, 1, PT_BOOL},
    {"bool_or", F_AGG, 1, 1, PT_BOOL},
    {"every", F_AGG, 1, 1, PT_BOOL},
    {"row_number", F_WINDOW, 0, 0, PT_INT8},
    {"pg_table_is_visible", F_TABLE_IS_VISIBLE, 1, 1, PT_BOOL},
    {"pg_type_is_visible", F_TRUE, 1, 1, PT_BOOL},
    {"pg_function_is_visible", F_TRUE, 1, 1, PT_BOOL},
    {"pg_collation_is_visible", F_TRUE, 1, 1, PT_BOOL},
    {"has_table_privilege", F_TRUE, 2, 3, PT_BOOL},
    {"has_schema_privilege", F_TRUE, 2, 3, PT_BOOL},
    {"has_database_privilege", F_TRUE, 2, 3, PT_BOOL},
    {"has_column_privilege", F_TRUE, 3, 4, PT_BOOL},
    {"has_any_column_privilege", F_TRUE, 2, 3, PT_BOOL},
    {"has_function_privilege", F_TRUE, 2, 3, PT_BOOL},
    {"has_sequence_privilege", F_TRUE, 2, 3, PT_BOOL},
    {"pg_has_role", F_TRUE, 2, 3, PT_BOOL},
    {"pg_relation_is_publishable", F_FALSE, 1, 1, PT_BOOL},
    {"pg_is_in_recovery", F_FALSE, 0, 0, PT_BOOL},
    {"pg_get_userbyid", F_USERBYID, 1, 1, PT_NAME},
    {"format_type", F_FORMAT_TYPE, 2, 2, PT_TEXT},
    {"pg_get_expr", F_NULL, 2, 3, PT_TEXT},
    {"pg_get_constraintdef", F_NULL, 1, 2, PT_TEXT},
    {"pg_get_triggerdef", F_NULL, 1, 2, PT_TEXT},
    {"pg_get_viewdef", F_NULL, 1, 2, PT_TEXT},
    {"pg_get_ruledef", F_NULL, 1, 2, PT_TEXT},
    {"pg_get_partkeydef", F_NULL, 1, 1, PT_TEXT},
    {"pg_get_statisticsobjdef_columns", F_NULL, 1, 1, PT_TEXT},
    {"pg_get_function_arguments", F_NULL, 1, 1, PT_TEXT},
    {"pg_get_function_result", F_NULL, 1, 1, PT_TEXT},
    {"pg_get_serial_sequence", F_NULL, 2, 2, PT_TEXT},
    {"pg_get_indexdef", F_INDEXDEF, 1, 3, PT_TEXT},
    {"obj_description", F_DESCRIPTION, 1, 2, PT_TEXT},
    {"col_description", F_DESCRIPTION, 2, 2, PT_TEXT},
    {"shobj_description", F_DESCRIPTION, 2, 2, PT_TEXT},
    {"pg_encoding_to_char", F_ENCODING, 1, 1, PT_NAME},
    {"array_to_string", F_ARRAY_TO_STRING, 2, 3, PT_TEXT},
    {"array_upper", F_ARRAY_UPPER, 2, 2, PT_INT4},
    {"array_lower", F_ARRAY_LOWER, 2, 2, PT_INT4},
    {"array_length", F_ARRAY_LENGTH, 2, 2, PT_INT4},
    {"cardinality", F_CARDINALITY, 1, 1, PT_INT4},
    {"string_to_array", F_STRING_TO_ARRAY, 2, 2, PT_TEXT_ARR},
    {"pg_relation_size", F_REL_SIZE, 1, 2, PT_INT8},
    {"pg_total_relation_size", F_REL_SIZE, 1, 1, PT_INT8},
    {"pg_table_size", F_REL_SIZE, 1, 1, PT_INT8},
    {"pg_indexes_size", F_REL_SIZE, 1, 1, PT_INT8},
    {"pg_database_size", F_DB_SIZE, 1, 1, PT_INT8},
    {"pg_size_pretty", F_SIZE_PRETTY, 1, 1, PT_TEXT},
    {"quote_ident", F_QUOTE_IDENT, 1, 1, PT_TEXT},
    {"current_schema", F_CURRENT_SCHEMA, 0, 0, PT_NAME},
    {"current_schemas", F_CURRENT_SCHEMAS, 1, 1, PT_NAME_ARR},
    {"current_database", F_CURRENT_DATABASE, 0, 0, PT_NAME},
    {"current_user", F_CURRENT_USER, 0, 0, PT_NAME},
    {"session_user", F_CURRENT_USER, 0, 0, PT_NAME},
    {"version", F_VERSION, 0, 0, PT_TEXT},
    {"current_setting", F_CURRENT_SETTING, 1, 2, PT_TEXT},
    {"lower", F_LOWER, 1, 1, PT_TEXT},
    {"upper", F_UPPER, 1, 1, PT_TEXT},
    {"length", F_LENGTH, 1, 1, PT_INT4},
    {"char_length", F_LENGTH, 1, 1, PT_INT4},
    {"btrim", F_BTRIM, 1, 2, PT_TEXT},
    {"ltrim", F_LTRIM, 1, 2, PT_TEXT},
    {"rtrim", F_RTRIM, 1, 2, PT_TEXT},
    {"replace", F_REPLACE, 3, 3, PT_TEXT},
    {"concat", F_CONCAT, 1, 32, PT_TEXT},
    {"substr", F_SUBSTR, 2, 3, PT_TEXT},
    {"substring", F_SUBSTR, 2, 3, PT_TEXT},
    {"strpos", F_STRPOS, 2, 2, PT_INT4},
    {"left", F_LEFT, 2, 2, PT_TEXT},
    {"right", F_RIGHT, 2, 2, PT_TEXT},
    {"parse_ident", F_PARSE_IDENT, 1, 2, PT_TEXT_ARR},
    {"to_regclass", F_TO_REGCLASS, 1, 1, PT_REGCLASS},
    {"to_regtype", F_TO_REGTYPE, 1, 1, PT_REGTYPE},
    {"pg_backend_pid", F_BACKEND_PID, 0, 0, PT_INT4},
    {"generate_series", F_SRF, 2, 3, PT_INT4},
    {"unnest", F_SRF, 1, 1, PT_TEXT},
    {"_pg_expandarray", F_EXPANDARRAY, 1, 1, PT_RECORD},
};

const char *pc_fname(const PgQuery__FuncCall *f, int *schema_ok)
{
    const char *schema = f->n_funcname == 2 ? sval(f->funcname[0]) : NULL;
    if (schema_ok)
        *schema_ok = f->n_funcname == 1 ||
                     (f->n_funcname == 2 && schema &&
                      (!strcmp(schema, "pg_catalog") || !strcmp(schema, "information_schema")));
    return f->n_funcname ? sval(f->funcname[f->n_funcname - 1]) : NULL;
}

static const fndef *fn_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof fns / sizeof *fns; i++)
        if (!strcmp(fns[i].name, name))
            return &fns[i];
    return NULL;
}

int pc_is_agg(const PgQuery__FuncCall *f)
{
    const fndef *d = fn_find(pc_fname(f, NULL));
    return d && d->id == F_AGG && !f->over;
}

int pc_is_engine_fn(const char *name)
{
    /* the vectorized engine's own (lower, length, ..., aggregates) stay
     * there, also when spelled pg_catalog.x (libpg_query writes
     * position(a IN b) so) */
    static const char *const engine[] = {
        "count",     "sum",    "min",       "max",    "avg",      "lower",
        "upper",     "length", "char_length", "concat", "substr", "substring",
        "strpos",    "position", "date_trunc", "extract", "date_part", "floor",
        "ceil",      "abs",    "coalesce",  "nullif", "greatest", "least"};
    for (size_t i = 0; i < sizeof engine / sizeof *engine; i++)
        if (!strcmp(engine[i], name))
            return 1;
    return 0;
}

int pc_is_catalog_fn(const char *name)
{
    return fn_find(name) && !pc_is_engine_fn(name);
}

/* ---- static types ---- */
static uint32_t array_of(uint32_t t)
{
    const pctype *ty = pc_type_by_oid(t);
    return ty && ty->array ? ty->array : PT_TEXT_ARR;
}

static uint32_t cast_type(pcx *x, const PgQuery__TypeName *tn, int *err)
{
    const char *name = tn->n_names ? sval(tn->names[tn->n_names - 1]) : NULL;
    const pctype *ty = name ? pc_type_by_name(name) : NULL;
    if (!ty) {
        *err = pc_fail(x, tn->location, QR_E_UNDEFINED_OBJECT, "type \"%s\" does not exist",
                       name ? name : "?");
        return 0;
    }
    return tn->n_array_bounds ? array_of(ty->oid) : ty->oid;
}

int pc_typeof(pcx *x, const Node *n, const pcscope *s, uint32_t *t)
{
    *t = PT_TEXT;
    if (!n)
        return 0;
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_A_CONST: {
        const PgQuery__AConst *c = n->a_const;
        *t = c->isnull                                        ? PT_TEXT
             : c->val_case == PG_QUERY__A__CONST__VAL_IVAL    ? PT_INT4
             : c->val_case == PG_QUERY__A__CONST__VAL_FVAL    ? PT_NUMERIC
             : c->val_case == PG_QUERY__A__CONST__VAL_BOOLVAL ? PT_BOOL
                                                              : PT_TEXT;
        return 0;
    }
    case PG_QUERY__NODE__NODE_COLUMN_REF: {
        const pcscope *at;
        uint32_t it, col;
        if (pc_resolve(x, n->column_ref, s, &at, &it, &col) != 0)
            return -1;
        *t = at->it[it].rel->cols[col].type;
        if (*t == PT_UNKNOWN)
            *t = PT_TEXT;
        return 0;
    }
    case PG_QUERY__NODE__NODE_TYPE_CAST: {
        uint32_t in;
        if (pc_typeof(x, n->type_cast->arg, s, &in) != 0)
            return -1;
        int err = 0;
        *t = cast_type(x, n->type_cast->type_name, &err);
        return err;
    }
    case PG_QUERY__NODE__NODE_COLLATE_CLAUSE:
        return pc_typeof(x, n->collate_clause->arg, s, t);
    case PG_QUERY__NODE__NODE_A_EXPR: {
        const PgQuery__AExpr *a = n->a_expr;
        const char *op = a->n_name ? sval(a->name[a->n_name - 1]) : NULL;
        uint32_t l = PT_TEXT, r = PT_TEXT;
        if (a->lexpr && a->lexpr->node_case != PG_QUERY__NODE__NODE_LIST &&
            pc_typeof(x, a->lexpr, s, &l) != 0)
            return -1;
        if (a->rexpr && a->rexpr->node_case != PG_QUERY__NODE__NODE_LIST &&
            pc_typeof(x, a->rexpr, s, &r) != 0)
            return -1;
        if (a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF) {
            *t = l;
        } else if (a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP && op &&
                   (!strcmp(op, "+") || !strcmp(op, "-") || !strcmp(op, "*") || !strcmp(op, "/") ||
                    !strcmp(op, "%") || !strcmp(op, "&") || !strcmp(op, "|"))) {
            *t = !a->lexpr                            ? r
                 : l == PT_FLOAT8 || r == PT_FLOAT8   ? PT_FLOAT8
                 : l == PT_NUMERIC || r == PT_NUMERIC ? PT_NUMERIC
                 : l == PT_INT8 || r == PT_INT8       ? PT_INT8
                 : l == PT_INT2 && r == PT_INT2       ? PT_INT2
                                                      : PT_INT4;
        } else if (a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP && op && !strcmp(op, "||")) {
            *t = pc_array_elem(l) ? l : pc_array_elem(r) ? r : PT_TEXT;
        } else {
            *t = PT_BOOL;
        }
        return 0;
    }
    case PG_QUERY__NODE__NODE_BOOL_EXPR:
    case PG_QUERY__NODE__NODE_NULL_TEST:
    case PG_QUERY__NODE__NODE_BOOLEAN_TEST:
        *t = PT_BOOL;
        return 0;
    case PG_QUERY__NODE__NODE_CASE_EXPR: {
        const PgQuery__CaseExpr *c = n->case_expr;
        for (size_t i = 0; i < c->n_args; i++) {
            const Node *r = c->args[i]->case_when->result;
            if (r->node_case == PG_QUERY__NODE__NODE_A_CONST && r->a_const->isnull)
                continue;
            return pc_typeof(x, r, s, t);
        }
        return c->defresult ? pc_typeof(x, c->defresult, s, t) : 0;
    }
    case PG_QUERY__NODE__NODE_COALESCE_EXPR:
        return n->coalesce_expr->n_args ? pc_typeof(x, n->coalesce_expr->args[0], s, t) : 0;
    case PG_QUERY__NODE__NODE_MIN_MAX_EXPR:
        return n->min_max_expr->n_args ? pc_typeof(x, n->min_max_expr->args[0], s, t) : 0;
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION:
        *t = PT_NAME;
        return 0;
    case PG_QUERY__NODE__NODE_A_ARRAY_EXPR: {
        uint32_t e = PT_TEXT;
        if (n->a_array_expr->n_elements && pc_typeof(x, n->a_array_expr->elements[0], s, &e) != 0)
            return -1;
        *t = array_of(e);
        return 0;
    }
    case PG_QUERY__NODE__NODE_A_INDIRECTION: {
        uint32_t a;
        if (pc_typeof(x, n->a_indirection->arg, s, &a) != 0)
            return -1;
        const Node *last = n->a_indirection->n_indirection
                               ? n->a_indirection->indirection[n->a_indirection->n_indirection - 1]
                               : NULL;
        if (last && last->node_case == PG_QUERY__NODE__NODE_STRING) { /* (record).field */
            const Node *arg = n->a_indirection->arg;
            uint32_t at = PT_INT2;
            if (!strcmp(last->string->sval, "n"))
                *t = PT_INT4;
            else if (arg->node_case == PG_QUERY__NODE__NODE_FUNC_CALL &&
                     arg->func_call->n_args == 1 &&
                     pc_typeof(x, arg->func_call->args[0], s, &at) == 0)
                *t = at == PT_INT2VECTOR  ? PT_INT2
                     : at == PT_OIDVECTOR ? PT_OID
                     : pc_array_elem(at)  ? pc_array_elem(at)
                                          : PT_INT2;
            else
                *t = PT_INT2;
            return 0;
        }
        *t = pc_array_elem(a)     ? pc_array_elem(a)
             : a == PT_INT2VECTOR ? PT_INT2
             : a == PT_OIDVECTOR  ? PT_OID
                                  : PT_INT4;
        return 0;
    }
    case PG_QUERY__NODE__NODE_SUB_LINK: {
        const PgQuery__SubLink *l = n->sub_link;
        if (!l->subselect || l->subselect->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
            return pc_fail(x, l->location, QR_E_FEATURE, "this subquery is not supported");
        if (l->sub_link_type == PG_QUERY__SUB_LINK_TYPE__EXPR_SUBLINK ||
            l->sub_link_type == PG_QUERY__SUB_LINK_TYPE__ARRAY_SUBLINK) {
            uint32_t st = PT_TEXT;
            if (pc_select_type(x, l->subselect->select_stmt, s, &st) != 0)
                return -1;
            *t = l->sub_link_type == PG_QUERY__SUB_LINK_TYPE__ARRAY_SUBLINK ? array_of(st) : st;
        } else {
            *t = PT_BOOL;
        }
        return 0;
    }
    case PG_QUERY__NODE__NODE_FUNC_CALL: {
        const PgQuery__FuncCall *f = n->func_call;
        int ok;
        const char *name = pc_fname(f, &ok);
        const fndef *d = ok ? fn_find(name) : NULL;
        if (!d)
            return pc_fail(x, f->location, "42883", "function %s() does not exist",
                           name ? name : "?");
        if ((int)f->n_args < d->min || (int)f->n_args > d->max)
            return pc_fail(x, f->location, "42883", "function %s() takes %d to %d arguments", name,
                           d->min, d->max);
        for (size_t i = 0; i < f->n_args && d->id != F_AGG; i++) {
            uint32_t at;
            if (pc_typeof(x, f->args[i], s, &at) != 0)
                return -1;
            if (i == 0 && !d->ret)
                *t = at;
        }
        if (d->ret)
            *t = d->ret;
        else if (d->id == F_AGG && f->n_args && pc_typeof(x, f->args[0], s, t) != 0)
            return -1;
        if (d->id == F_AGG && !strcmp(name, "array_agg") && f->n_args) {
            uint32_t et;
            if (pc_typeof(x, f->args[0], s, &et) != 0)
                return -1;
            *t = array_of(et);
        }
        if (d->id == F_AGG && !strcmp(name, "sum") && (*t == PT_INT2 || *t == PT_INT4))
            *t = PT_INT8;
        return 0;
    }
    case PG_QUERY__NODE__NODE_PARAM_REF:
        return pc_fail(x, n->param_ref->location, QR_E_FEATURE,
                       "parameters are not supported in catalog queries");
    default:
        return pc_fail(x, -1, QR_E_FEATURE,
                       "this expression (node %d) is not supported in catalog queries",
                       (int)n->node_case);
    }
}

/* ---- evaluation ---- */
static int eval_list(pcx *x, Node *const *args, size_t n, const pcscope *s, pcv *out)
{
    for (size_t i = 0; i < n; i++)
        if (pc_eval(x, args[i], s, &out[i]) != 0)
            return -1;
    return 0;
}

static int truth(const pcv *v) { return v->k == PV_BOOL ? (int)v->i : v->k == PV_NULL ? -1 : 1; }

static int regex_match(pcx *x, const pcv *s, const pcv *pat, int icase, int32_t loc, int *m)
{
    char *p = qr_arena_strndup(x->a, pat->s, pat->n);
    char *t = qr_arena_strndup(x->a, s->s, s->n);
    if (!p || !t)
        return pc_nomem(x);
    regex_t re;
    int rc = regcomp(&re, p, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
    if (rc != 0)
        return pc_fail(x, loc, "2201B", "invalid regular expression: %.64s", p);
    *m = regexec(&re, t, 0, NULL, 0) == 0;
    regfree(&re);
    return 0;
}

/* LIKE: % and _ with \ escaping, bytewise (or ASCII case-insensitively) */
static int like(const char *s, size_t n, const char *p, size_t m, int icase)
{
    size_t i = 0, j = 0, star = (size_t)-1, mark = 0;
    while (i < n) {
        if (j < m && p[j] == '\\' && j + 1 < m &&
            (icase ? tolower((unsigned char)p[j + 1]) == tolower((unsigned char)s[i])
                   : p[j + 1] == s[i])) {
            i++, j += 2;
        } else if (j < m && p[j] == '%') {
            star = j++, mark = i;
        } else if (j < m && p[j] != '\\' &&
                   (p[j] == '_' ||
                    (icase ? tolower((unsigned char)p[j]) == tolower((unsigned char)s[i])
                           : p[j] == s[i]))) {
            i++, j++;
        } else if (star != (size_t)-1) {
            j = star + 1, i = ++mark;
        } else {
            return 0;
        }
    }
    while (j < m && p[j] == '%')
        j++;
    return j == m;
}

static int arith(pcx *x, const char *op, const pcv *a, const pcv *b, uint32_t t, int32_t loc,
                 pcv *out)
{
    if (a->k == PV_NULL || b->k == PV_NULL) {
        *out = pc_null();
        return 0;
    }
    if (a->k == PV_INT && b->k == PV_INT) {
        int64_t l = a->i, r = b->i, v;
        switch (*op) {
        case '+':
            v = l + r;
            break;
        case '-':
            v = l - r;
            break;
        case '*':
            v = l * r;
            break;
        case '&':
            v = l & r;
            break;
        case '|':
            v = l | r;
            break;
        default:
            if (r == 0)
                return pc_fail(x, loc, "22012", "division by zero");
            v = *op == '/' ? l / r : l % r;
        }
        *out = pc_int(v, t == PT_OID || t == PT_REGCLASS ? PT_INT8 : t);
        return 0;
    }
    if ((a->k == PV_INT || a->k == PV_FLOAT) && (b->k == PV_INT || b->k == PV_FLOAT)) {
        double l = a->k == PV_INT ? (double)a->i : a->f, r = b->k == PV_INT ? (double)b->i : b->f;
        double v = *op == '+' ? l + r : *op == '-' ? l - r : *op == '*' ? l * r : 0;
        if (*op == '/' || *op == '%') {
            if (r == 0)
                return pc_fail(x, loc, "22012", "division by zero");
            v = *op == '/' ? l / r : fmod(l, r);
        }
        *out = (pcv){.k = PV_FLOAT, .t = PT_FLOAT8, .f = v};
        return 0;
    }
    return pc_fail(x, loc, "42883", "operator does not exist: %s on these types", op);
}

static int concat(pcx *x, const pcv *a, const pcv *b, pcv *out)
{
    if (a->k == PV_NULL || b->k == PV_NULL) {
        if (a->k == PV_ARR || b->k == PV_ARR) /* array || NULL: the array */
            *out = a->k == PV_ARR ? *a : *b;
        else
            *out = pc_null();
        return 0;
    }
    if (a->k == PV_ARR || b->k == PV_ARR) {
        uint32_t na = a->k == PV_ARR ? a->n : 1, nb = b->k == PV_ARR ? b->n : 1;
        pcv *items = qr_arena_alloc(x->a, sizeof *items * (na + nb + 1));
        if (!items)
            return pc_nomem(x);
        if (a->k == PV_ARR)
            memcpy(items, a->a, sizeof *items * na);
        else
            items[0] = *a;
        if (b->k == PV_ARR)
            memcpy(items + na, b->a, sizeof *items * nb);
        else
            items[na] = *b;
        *out = (pcv){.k = PV_ARR, .t = a->k == PV_ARR ? a->t : b->t, .n = na + nb, .a = items};
        return 0;
    }
    qr_buf buf;
    qr_buf_init(&buf);
    pc_text(x, a, &buf);
    pc_text(x, b, &buf);
    int rc = buf.oom ? pc_nomem(x) : 0;
    if (rc == 0)
        *out = pc_str(x, buf.len ? (const char *)buf.p : "", buf.len, PT_TEXT);
    qr_buf_free(&buf);
    return rc;
}

/* a op b for the comparison and matching operators; *out bool or NULL */
static int compare_op(pcx *x, const char *op, pcv a, pcv b, int32_t loc, pcv *out)
{
    if (a.k == PV_NULL || b.k == PV_NULL) {
        *out = pc_null();
        return 0;
    }
    int m = 0;
    if (!strcmp(op, "~") || !strcmp(op, "~*") || !strcmp(op, "!~") || !strcmp(op, "!~*")) {
        pcv ta, tb;
        if ((a.k != PV_STR && to_text(x, &a, &ta, PT_TEXT) != 0) ||
            (b.k != PV_STR && to_text(x, &b, &tb, PT_TEXT) != 0))
            return -1;
        if (a.k != PV_STR)
            a = ta;
        if (b.k != PV_STR)
            b = tb;
        if (regex_match(x, &a, &b, strchr(op, '*') != NULL, loc, &m) != 0)
            return -1;
        *out = pc_bool(op[0] == '!' ? !m : m);
        return 0;
    }
    if (!strcmp(op, "~~") || !strcmp(op, "!~~") || !strcmp(op, "~~*") || !strcmp(op, "!~~*")) {
        pcv ta = a, tb = b;
        if ((a.k != PV_STR && to_text(x, &a, &ta, PT_TEXT) != 0) ||
            (b.k != PV_STR && to_text(x, &b, &tb, PT_TEXT) != 0))
            return -1;
        m = like(ta.s, ta.n, tb.s, tb.n, strchr(op, '*') != NULL);
        *out = pc_bool(op[0] == '!' ? !m : m);
        return 0;
    }
    if (unify(x, &a, &b) != 0)
        return qr_sqlp_at(x->p, loc, x->e);
    int c = pc_cmp(&a, &b);
    if (!strcmp(op, "="))
        m = c == 0;
    else if (!strcmp(op, "<>") || !strcmp(op, "!="))
        m = c != 0;
    else if (!strcmp(op, "<"))
        m = c < 0;
    else if (!strcmp(op, "<="))
        m = c <= 0;
    else if (!strcmp(op, ">"))
        m = c > 0;
    else if (!strcmp(op, ">="))
        m = c >= 0;
    else
        return pc_fail(x, loc, "42883", "operator does not exist: %s", op);
    *out = pc_bool(m);
    return 0;
}

/* x op ANY (items) / ALL: three-valued */
static int any_op(pcx *x, const char *op, const pcv *v, const pcv *items, uint32_t n, int all,
                  int32_t loc, pcv *out)
{
    int sawnull = 0;
    for (uint32_t i = 0; i < n; i++) {
        pcv r;
        if (compare_op(x, op, *v, items[i], loc, &r) != 0)
            return -1;
        if (r.k == PV_NULL)
            sawnull = 1;
        else if (r.i != all) {
            *out = pc_bool(!all);
            return 0;
        }
    }
    *out = sawnull ? pc_null() : pc_bool(all);
    return 0;
}

static int eval_aexpr(pcx *x, const PgQuery__AExpr *a, const pcscope *s, pcv *out)
{
    const char *op = a->n_name ? sval(a->name[a->n_name - 1]) : "";
    if (!op)
        op = "";
    pcv l = pc_null(), r = pc_null();
    switch (a->kind) {
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP:
    case PG_QUERY__A__EXPR__KIND__AEXPR_LIKE:
    case PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE:
        if ((a->lexpr && pc_eval(x, a->lexpr, s, &l) != 0) || pc_eval(x, a->rexpr, s, &r) != 0)
            return -1;
        if (!a->lexpr) { /* prefix */
            if (!strcmp(op, "-")) {
                pcv zero = pc_int(0, r.t);
                return arith(x, "-", &zero, &r, r.t, a->location, out);
            }
            if (!strcmp(op, "+")) {
                *out = r;
                return 0;
            }
            return pc_fail(x, a->location, "42883", "prefix operator %s is not supported", op);
        }
        if (strchr("+-*/%&|", op[0]) && op[1] == 0) {
            uint32_t t;
            t = l.k == PV_INT && r.k == PV_INT ? (l.t == PT_INT8 || r.t == PT_INT8 ? PT_INT8 : l.t)
                                               : PT_FLOAT8;
            if (l.k == PV_STR || r.k == PV_STR) {
                if (unify(x, &l, &r) != 0)
                    return -1;
            }
            return arith(x, op, &l, &r, t, a->location, out);
        }
        if (!strcmp(op, "||"))
            return concat(x, &l, &r, out);
        return compare_op(x, op, l, r, a->location, out);
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP_ANY:
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP_ALL:
        if (pc_eval(x, a->lexpr, s, &l) != 0 || pc_eval(x, a->rexpr, s, &r) != 0)
            return -1;
        if (r.k == PV_NULL) {
            *out = pc_null();
            return 0;
        }
        if (r.k == PV_STR) { /* '{a,b}' literal */
            pcv arr;
            if (pc_cast(x, &r, PT_TEXT_ARR, a->location, &arr) != 0)
                return -1;
            r = arr;
        }
        if (r.k != PV_ARR)
            return pc_fail(x, a->location, "42809", "op ANY/ALL (array) requires an array");
        return any_op(x, op, &l, r.a, r.n, a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP_ALL,
                      a->location, out);
    case PG_QUERY__A__EXPR__KIND__AEXPR_IN: {
        const PgQuery__List *lst =
            a->rexpr->node_case == PG_QUERY__NODE__NODE_LIST ? a->rexpr->list : NULL;
        if (!lst)
            return pc_fail(x, a->location, QR_E_FEATURE, "IN takes a list here");
        if (pc_eval(x, a->lexpr, s, &l) != 0)
            return -1;
        pcv *items = qr_arena_alloc(x->a, sizeof *items * (lst->n_items + 1));
        if (!items)
            return pc_nomem(x);
        if (eval_list(x, lst->items, lst->n_items, s, items) != 0)
            return -1;
        int neg = !strcmp(op, "<>");
        if (any_op(x, neg ? "<>" : "=", &l, items, (uint32_t)lst->n_items, neg, a->location, out) !=
            0)
            return -1;
        return 0;
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN:
    case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN: {
        const PgQuery__List *lst = a->rexpr->list;
        pcv lo, hi, r1, r2;
        if (lst->n_items != 2 || pc_eval(x, a->lexpr, s, &l) != 0 ||
            pc_eval(x, lst->items[0], s, &lo) != 0 || pc_eval(x, lst->items[1], s, &hi) != 0 ||
            compare_op(x, ">=", l, lo, a->location, &r1) != 0 ||
            compare_op(x, "<=", l, hi, a->location, &r2) != 0)
            return -1;
        if (r1.k == PV_NULL || r2.k == PV_NULL)
            *out = (r1.k != PV_NULL && !r1.i) || (r2.k != PV_NULL && !r2.i)
                       ? pc_bool(a->kind != PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN)
                       : pc_null();
        else
            *out = pc_bool((r1.i && r2.i) == (a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN));
        return 0;
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_DISTINCT:
    case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_DISTINCT: {
        if (pc_eval(x, a->lexpr, s, &l) != 0 || pc_eval(x, a->rexpr, s, &r) != 0)
            return -1;
        int same;
        if (l.k == PV_NULL || r.k == PV_NULL) {
            same = l.k == r.k;
        } else {
            if (unify(x, &l, &r) != 0)
                return -1;
            same = pc_cmp(&l, &r) == 0;
        }
        *out = pc_bool(a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_DISTINCT ? !same : same);
        return 0;
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF: {
        pcv eq;
        if (pc_eval(x, a->lexpr, s, &l) != 0 || pc_eval(x, a->rexpr, s, &r) != 0 ||
            compare_op(x, "=", l, r, a->location, &eq) != 0)
            return -1;
        *out = eq.k == PV_BOOL && eq.i ? pc_null() : l;
        return 0;
    }
    default:
        return pc_fail(x, a->location, QR_E_FEATURE, "this operator is not supported in %s",
                       "catalog queries");
    }
}

/* ---- casts ---- */
static int parse_array(pcx *x, const pcv *v, uint32_t elem, int32_t loc, pcv *out)
{
    const char *p = v->s, *end = v->s + v->n;
    while (p < end && *p == ' ')
        p++;
    if (p >= end || *p != '{')
        return pc_fail(x, loc, QR_E_INVALID_TEXT, "malformed array literal: \"%.*s\"",
                       (int)(v->n > 64 ? 64 : v->n), v->s);
    p++;
    uint32_t cap = 8, n = 0;
    pcv *items = qr_arena_alloc(x->a, sizeof *items * cap);
    if (!items)
        return pc_nomem(x);
    qr_buf b;
    qr_buf_init(&b);
    while (p < end && *p != '}') {
        qr_buf_clear(&b);
        int quoted = 0;
        if (*p == '"') {
            quoted = 1;
            for (p++; p < end && *p != '"'; p++) {
                if (*p == '\\' && p + 1 < end)
                    p++;
                qr_buf_put_u8(&b, (uint8_t)*p);
            }
            p++;
        } else {
            for (; p < end && *p != ',' && *p != '}'; p++)
                qr_buf_put_u8(&b, (uint8_t)*p);
        }
        if (n == cap) {
            pcv *bigger = qr_arena_alloc(x->a, sizeof *items * cap * 2);
            if (!bigger) {
                qr_buf_free(&b);
                return pc_nomem(x);
            }
            memcpy(bigger, items, sizeof *items * cap);
            items = bigger, cap *= 2;
        }
        pcv item;
        if (!quoted && b.len == 4 && !strncasecmp((const char *)b.p, "null", 4)) {
            item = pc_null();
        } else {
            pcv txt = pc_str(x, b.len ? (const char *)b.p : "", b.len, PT_TEXT);
            if (pc_cast(x, &txt, elem, loc, &item) != 0) {
                qr_buf_free(&b);
                return -1;
            }
        }
        items[n++] = item;
        if (p < end && *p == ',')
            p++;
    }
    qr_buf_free(&b);
    *out = (pcv){.k = PV_ARR, .t = array_of(elem), .n = n, .a = items};
    return 0;
}

int pc_cast(pcx *x, const pcv *v, uint32_t t, int32_t loc, pcv *out)
{
    if (v->k == PV_NULL) {
        *out = pc_null();
        out->t = t;
        return 0;
    }
    uint32_t elem = pc_array_elem(t);
    if (elem) {
        if (v->k == PV_STR)
            return parse_array(x, v, elem, loc, out);
        if (v->k == PV_ARR) {
            pcv *items = qr_arena_alloc(x->a, sizeof *items * (v->n + 1));
            if (!items)
                return pc_nomem(x);
            for (uint32_t i = 0; i < v->n; i++)
                if (pc_cast(x, &v->a[i], elem, loc, &items[i]) != 0)
                    return -1;
            *out = (pcv){.k = PV_ARR, .t = t, .n = v->n, .a = items};
            return 0;
        }
        return pc_fail(x, loc, "42846", "cannot cast this value to an array");
    }
    switch (t) {
    case PT_TEXT:
    case PT_VARCHAR:
    case PT_NAME:
    case PT_BPCHAR:
    case PT_CHAR:
    case PT_UNKNOWN:
    case PT_JSON:
    case PT_TIMESTAMPTZ:
    case PT_TIMESTAMP:
    case PT_NODETREE:
        return to_text(x, v, out, t);
    case PT_REGPROC:
        if (v->k == PV_STR) {
            const char *s = v->s;
            uint32_t n = v->n;
            if (n > 11 && !strncmp(s, "pg_catalog.", 11))
                s += 11, n -= 11;
            *out = pc_str(x, s, n, PT_REGPROC);
            return 0;
        }
        return to_text(x, v, out, PT_REGPROC);
    case PT_BOOL:
        if (v->k == PV_STR) {
            pcv b = pc_bool(0), s = *v;
            if (unify(x, &s, &b) != 0)
                return -1;
            *out = s;
            return 0;
        }
        *out = pc_bool(v->k == PV_FLOAT ? v->f != 0 : v->i != 0);
        return 0;
    case PT_FLOAT4:
    case PT_FLOAT8:
    case PT_NUMERIC:
        if (v->k == PV_STR) {
            char buf[64];
            snprintf(buf, sizeof buf, "%.*s", (int)(v->n > 63 ? 63 : v->n), v->s);
            char *end;
            double d = strtod(buf, &end);
            if (end == buf || *end)
                return pc_fail(x, loc, QR_E_INVALID_TEXT,
                               "invalid input syntax for type numeric: \"%s\"", buf);
            *out = (pcv){.k = PV_FLOAT, .t = t, .f = d};
        } else {
            *out = (pcv){.k = PV_FLOAT, .t = t, .f = v->k == PV_FLOAT ? v->f : (double)v->i};
        }
        return 0;
    case PT_REGCLASS:
        if (v->k == PV_STR) {
            char name[256];
            size_t n = v->n > 255 ? 255 : v->n, o = 0;
            for (size_t i = 0; i < n; i++) /* "quoted" parts keep their case */
                if (v->s[i] != '"')
                    name[o++] = v->s[i];
            name[o] = 0;
            uint32_t oid = pc_reloid_of(x, name);
            if (!oid)
                return pc_fail(x, loc, QR_E_UNDEFINED_TABLE, "relation \"%s\" does not exist",
                               name);
            *out = pc_int(oid, PT_REGCLASS);
            return 0;
        }
        /* fall through */
    case PT_REGTYPE:
    case PT_REGNAMESPACE:
        if (v->k == PV_STR && t == PT_REGTYPE) {
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(v->n > 127 ? 127 : v->n), v->s);
            const char *nm = !strncmp(name, "pg_catalog.", 11) ? name + 11 : name;
            const pctype *ty = pc_type_by_name(nm);
            if (!ty)
                return pc_fail(x, loc, QR_E_UNDEFINED_OBJECT, "type \"%s\" does not exist", name);
            *out = pc_int(ty->oid, PT_REGTYPE);
            return 0;
        }
        if (v->k == PV_STR && t == PT_REGNAMESPACE) {
            int64_t oid = v->n == 10 && !memcmp(v->s, "pg_catalog", 10)           ? 11
                          : v->n == 6 && !memcmp(v->s, "public", 6)               ? 2200
                          : v->n == 18 && !memcmp(v->s, "information_schema", 18) ? 13000
                                                                                  : 0;
            if (!oid)
                return pc_fail(x, loc, "3F000", "schema \"%.*s\" does not exist", (int)v->n, v->s);
            *out = pc_int(oid, t);
            return 0;
        }
        /* fall through */
    case PT_INT2:
    case PT_INT4:
    case PT_INT8:
    case PT_OID: {
        int64_t i;
        if (v->k == PV_STR) {
            if (parse_int(x, v, &i, t == PT_OID ? "oid" : "integer") != 0)
                return qr_sqlp_at(x->p, loc, x->e);
        } else if (v->k == PV_FLOAT) {
            i = (int64_t)llround(v->f);
        } else if (v->k == PV_INT || v->k == PV_BOOL) {
            i = v->i;
        } else {
            return pc_fail(x, loc, "42846", "cannot cast an array to %s", pc_type_by_oid(t)->name);
        }
        *out = pc_int(i, t);
        return 0;
    }
    default:
        return to_text(x, v, out, t);
    }
}

/* ---- subqueries ---- */
static int eval_sublink(pcx *x, const PgQuery__SubLink *l, const pcscope *s, pcv *out)
{
    if (!l->subselect || l->subselect->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return pc_fail(x, l->location, QR_E_FEATURE, "this subquery is not supported");
    int limit1 = l->sub_link_type == PG_QUERY__SUB_LINK_TYPE__EXISTS_SUBLINK;
    pcrel *r;
    if (pc_select(x, l->subselect->select_stmt, s, limit1, &r) != 0)
        return -1;
    switch (l->sub_link_type) {
    case PG_QUERY__SUB_LINK_TYPE__EXISTS_SUBLINK:
        *out = pc_bool(r->nrows > 0);
        return 0;
    case PG_QUERY__SUB_LINK_TYPE__EXPR_SUBLINK:
        if (r->nrows > 1)
            return pc_fail(x, l->location, "21000",
                           "more than one row returned by a subquery used as an expression");
        *out = r->nrows ? r->rows[0] : pc_null();
        return 0;
    case PG_QUERY__SUB_LINK_TYPE__ARRAY_SUBLINK: {
        pcv *items = qr_arena_alloc(x->a, sizeof *items * (r->nrows + 1));
        if (!items)
            return pc_nomem(x);
        for (uint32_t i = 0; i < r->nrows; i++)
            items[i] = r->rows[(size_t)i * r->ncols];
        *out = (pcv){.k = PV_ARR,
                     .t = array_of(r->ncols ? r->cols[0].type : PT_TEXT),
                     .n = r->nrows,
                     .a = items};
        return 0;
    }
    case PG_QUERY__SUB_LINK_TYPE__ANY_SUBLINK:
    case PG_QUERY__SUB_LINK_TYPE__ALL_SUBLINK: {
        const char *op = l->n_oper_name ? sval(l->oper_name[l->n_oper_name - 1]) : "=";
        pcv v;
        if (pc_eval(x, l->testexpr, s, &v) != 0)
            return -1;
        pcv *items = qr_arena_alloc(x->a, sizeof *items * (r->nrows + 1));
        if (!items)
            return pc_nomem(x);
        for (uint32_t i = 0; i < r->nrows; i++)
            items[i] = r->rows[(size_t)i * r->ncols];
        return any_op(x, op ? op : "=", &v, items, r->nrows,
                      l->sub_link_type == PG_QUERY__SUB_LINK_TYPE__ALL_SUBLINK, l->location, out);
    }
    default:
        return pc_fail(x, l->location, QR_E_FEATURE, "this kind of subquery is not supported");
    }
}

/* ---- functions ---- */
static void size_pretty(int64_t size, char *buf, size_t n)
{
    const int64_t limit = 10 * 1024, limit2 = limit * 2 - 1;
    static const char *const units[] = {"kB", "MB", "GB", "TB", "PB"};
    if (llabs(size) < limit) {
        snprintf(buf, n, "%lld bytes", (long long)size);
        return;
    }
    size /= 1 << 9; /* one extra bit for rounding */
    for (int u = 0; u < 5; u++) {
        if (llabs(size) < limit2 || u == 4) {
            int64_t h = (size + (size < 0 ? -1 : 1)) / 2;
            snprintf(buf, n, "%lld %s", (long long)h, units[u]);
            return;
        }
        size /= 1 << 10;
    }
}

static int quote_ident(pcx *x, const pcv *v, pcv *out)
{
    static const char *const reserved[] = {
        "all",    "and",      "any",   "as",   "asc",  "case",   "check", "column", "default",
        "desc",   "distinct", "do",    "else", "end",  "for",    "from",  "grant",  "group",
        "having", "in",       "limit", "not",  "null", "offset", "on",    "or",     "order",
        "select", "table",    "then",  "to",   "user", "when",   "where", "with"};
    int plain = v->n > 0 && ((v->s[0] >= 'a' && v->s[0] <= 'z') || v->s[0] == '_');
    for (uint32_t i = 0; i < v->n && plain; i++)
        plain = (v->s[i] >= 'a' && v->s[i] <= 'z') || (v->s[i] >= '0' && v->s[i] <= '9') ||
                v->s[i] == '_';
    for (size_t i = 0; plain && i < sizeof reserved / sizeof *reserved; i++)
        if (strlen(reserved[i]) == v->n && !memcmp(reserved[i], v->s, v->n))
            plain = 0;
    if (plain) {
        *out = *v;
        out->t = PT_TEXT;
        return 0;
    }
    char *q = qr_arena_alloc(x->a, (size_t)v->n * 2 + 3);
    if (!q)
        return pc_nomem(x);
    size_t o = 0;
    q[o++] = '"';
    for (uint32_t i = 0; i < v->n; i++) {
        if (v->s[i] == '"')
            q[o++] = '"';
        q[o++] = v->s[i];
    }
    q[o++] = '"';
    *out = (pcv){.k = PV_STR, .t = PT_TEXT, .s = q, .n = (uint32_t)o};
    return 0;
}

static int str_array(pcx *x, const char *const *items, uint32_t n, uint32_t t, pcv *out)
{
    pcv *a = qr_arena_alloc(x->a, sizeof *a * (n + 1));
    if (!a)
        return pc_nomem(x);
    for (uint32_t i = 0; i < n; i++)
        a[i] = pc_cstr(items[i], pc_array_elem(t));
    *out = (pcv){.k = PV_ARR, .t = t, .n = n, .a = a};
    return 0;
}

/* split s by sep (string_to_array); parse_ident splits on dots outside
 * quotes and folds unquoted parts to lower case */
static int split(pcx *x, const pcv *s, const char *sep, size_t ns, int ident, pcv *out)
{
    uint32_t cap = 4, n = 0;
    pcv *a = qr_arena_alloc(x->a, sizeof *a * cap);
    if (!a)
        return pc_nomem(x);
    qr_buf b;
    qr_buf_init(&b);
    uint32_t i = 0;
    for (;;) {
        qr_buf_clear(&b);
        int inq = 0;
        while (i < s->n) {
            if (ident && s->s[i] == '"') {
                if (inq && i + 1 < s->n && s->s[i + 1] == '"') {
                    qr_buf_put_u8(&b, '"');
                    i += 2;
                    continue;
                }
                inq = !inq, i++;
                continue;
            }
            if (!inq && ns && i + ns <= s->n && !memcmp(s->s + i, sep, ns))
                break;
            char c = s->s[i++];
            qr_buf_put_u8(&b, (uint8_t)(ident && !inq ? tolower((unsigned char)c) : c));
        }
        if (n == cap) {
            pcv *bigger = qr_arena_alloc(x->a, sizeof *a * cap * 2);
            if (!bigger) {
                qr_buf_free(&b);
                return pc_nomem(x);
            }
            memcpy(bigger, a, sizeof *a * cap);
            a = bigger, cap *= 2;
        }
        a[n++] = pc_str(x, b.len ? (const char *)b.p : "", b.len, PT_TEXT);
        if (i >= s->n)
            break;
        i += (uint32_t)ns;
    }
    qr_buf_free(&b);
    *out = (pcv){.k = PV_ARR, .t = PT_TEXT_ARR, .n = n, .a = a};
    return 0;
}

static int trim(pcx *x, const pcv *s, const pcv *chars, int lead, int trail, pcv *out)
{
    const char *set = chars ? chars->s : " ";
    uint32_t nset = chars ? chars->n : 1, b = 0, e = s->n;
    while (lead && b < e && memchr(set, s->s[b], nset))
        b++;
    while (trail && e > b && memchr(set, s->s[e - 1], nset))
        e--;
    *out = pc_str(x, s->s + b, e - b, PT_TEXT);
    return 0;
}

static int aggregate(pcx *x, const PgQuery__FuncCall *f, const pcscope *s, pcv *out);

static int call(pcx *x, const PgQuery__FuncCall *f, const pcscope *s, pcv *out)
{
    int ok;
    const char *name = pc_fname(f, &ok);
    const fndef *d = ok ? fn_find(name) : NULL;
    if (!d)
        return pc_fail(x, f->location, "42883", "function %s() does not exist", name ? name : "?");
    if ((int)f->n_args < d->min || (int)f->n_args > d->max)
        return pc_fail(x, f->location, "42883", "function %s() takes %d to %d arguments", name,
                       d->min, d->max);
    if (d->id == F_AGG)
        return aggregate(x, f, s, out);
    if (d->id == F_WINDOW || d->id == F_SRF || d->id == F_EXPANDARRAY) {
        for (const pcscope *sc = s; sc; sc = sc->up)
            for (uint32_t i = 0; i < sc->nwin; i++)
                if (sc->win[i] == f) {
                    *out = sc->winv[i];
                    return 0;
                }
        if (d->id != F_WINDOW)
            return pc_fail(x, f->location, QR_E_FEATURE,
                           "set-returning function %s() is supported in FROM and at the top "
                           "of the select list only",
                           name);
        return pc_fail(x, f->location, QR_E_FEATURE, "%s() is supported with OVER in the %s", name,
                       "select list only");
    }
    if (f->over || f->agg_star || f->agg_distinct)
        return pc_fail(x, f->location, QR_E_FEATURE, "%s() with OVER, * or DISTINCT", name);
    pcv a[32];
    if (eval_list(x, f->args, f->n_args, s, a) != 0)
        return -1;
    /* strict functions: NULL in, NULL out */
    int strict = d->id != F_CONCAT && d->id != F_TRUE && d->id != F_FALSE && d->id != F_NULL &&
                 d->id != F_DESCRIPTION && d->id != F_CURRENT_SETTING;
    for (size_t i = 0; strict && i < f->n_args; i++)
        if (a[i].k == PV_NULL) {
            *out = pc_null();
            out->t = d->ret ? d->ret : PT_TEXT;
            return 0;
        }
    char buf[512];
    const qr_pgcat_env *env = x->env;
    for (size_t i = 0; i < f->n_args; i++) /* text arguments as strings */
        if (a[i].k != PV_STR && a[i].k != PV_NULL && a[i].k != PV_ARR &&
            (d->id == F_LOWER || d->id == F_UPPER || d->id == F_LENGTH || d->id == F_BTRIM ||
             d->id == F_LTRIM || d->id == F_RTRIM || d->id == F_REPLACE || d->id == F_QUOTE_IDENT ||
             d->id == F_PARSE_IDENT || d->id == F_CONCAT || d->id == F_STRPOS ||
             ((d->id == F_SUBSTR || d->id == F_LEFT || d->id == F_RIGHT) && i == 0) ||
             d->id == F_STRING_TO_ARRAY || (d->id == F_ARRAY_TO_STRING && i > 0) ||
             d->id == F_CURRENT_SETTING || d->id == F_TO_REGCLASS || d->id == F_TO_REGTYPE) &&
            to_text(x, &a[i], &a[i], PT_TEXT) != 0)
            return -1;
    for (size_t i = 0; i < f->n_args; i++) /* number arguments as numbers */
        if (a[i].k == PV_STR &&
            ((d->id == F_USERBYID || d->id == F_FORMAT_TYPE || d->id == F_INDEXDEF ||
              d->id == F_ENCODING || d->id == F_SIZE_PRETTY || d->id == F_TABLE_IS_VISIBLE) ||
             ((d->id == F_ARRAY_UPPER || d->id == F_ARRAY_LOWER || d->id == F_ARRAY_LENGTH) &&
              i == 1) ||
             ((d->id == F_SUBSTR || d->id == F_LEFT || d->id == F_RIGHT) && i > 0))) {
            if (d->id == F_TABLE_IS_VISIBLE || d->id == F_INDEXDEF) {
                if (pc_cast(x, &a[i], i == 0 ? PT_REGCLASS : PT_INT4, f->location, &a[i]) != 0)
                    return -1;
            } else if (pc_cast(x, &a[i], PT_INT8, f->location, &a[i]) != 0) {
                return -1;
            }
        }
    switch (d->id) {
    case F_TRUE:
        *out = pc_bool(1);
        return 0;
    case F_FALSE:
        *out = pc_bool(0);
        return 0;
    case F_NULL:
    case F_DESCRIPTION: /* pg_description is empty: Quarry keeps no comments */
        *out = pc_null();
        out->t = PT_TEXT;
        return 0;
    case F_TABLE_IS_VISIBLE: {
        const char *nsp;
        const char *rel = pc_relname_of(x, a[0].i, &nsp);
        *out = rel ? pc_bool(strcmp(nsp, "information_schema") != 0) : pc_null();
        return 0;
    }
    case F_USERBYID:
        if (a[0].i == 10)
            *out = pc_cstr(env->user, PT_NAME);
        else if (a[0].i == 6171)
            *out = pc_cstr("pg_database_owner", PT_NAME);
        else
            snprintf(buf, sizeof buf, "unknown (OID=%lld)", (long long)a[0].i),
                *out = pc_str(x, buf, strlen(buf), PT_NAME);
        return 0;
    case F_FORMAT_TYPE: {
        const pctype *ty = pc_type_by_oid((uint32_t)a[0].i);
        *out = pc_cstr(ty ? ty->fmt : "???", PT_TEXT);
        return 0;
    }
    case F_INDEXDEF: {
        const char *def = pc_indexdef(x, a[0].i, f->n_args > 1 ? (int)a[1].i : 0);
        *out = def ? pc_cstr(def, PT_TEXT) : pc_null();
        return 0;
    }
    case F_ENCODING:
        *out = pc_cstr(a[0].i == 6 ? "UTF8" : a[0].i == 0 ? "SQL_ASCII" : "", PT_NAME);
        return 0;
    case F_ARRAY_TO_STRING: {
        if (a[0].k != PV_ARR)
            return pc_fail(x, f->location, "42883", "array_to_string() takes an array");
        qr_buf b;
        qr_buf_init(&b);
        int first = 1;
        for (uint32_t i = 0; i < a[0].n; i++) {
            const pcv *it = &a[0].a[i];
            if (it->k == PV_NULL && (f->n_args < 3 || a[2].k == PV_NULL))
                continue;
            if (!first)
                qr_buf_put(&b, a[1].s, a[1].n);
            first = 0;
            pc_text(x, it->k == PV_NULL ? &a[2] : it, &b);
        }
        int rc = b.oom ? pc_nomem(x) : 0;
        if (rc == 0)
            *out = pc_str(x, b.len ? (const char *)b.p : "", b.len, PT_TEXT);
        qr_buf_free(&b);
        return rc;
    }
    case F_ARRAY_UPPER:
    case F_ARRAY_LOWER:
    case F_ARRAY_LENGTH:
    case F_CARDINALITY: {
        if (a[0].k == PV_STR && pc_cast(x, &a[0], PT_TEXT_ARR, f->location, &a[0]) != 0)
            return -1;
        if (a[0].k != PV_ARR)
            return pc_fail(x, f->location, "42883", "function %s() takes an array", name);
        if ((d->id != F_CARDINALITY && a[1].i != 1) || a[0].n == 0) {
            *out = d->id == F_CARDINALITY ? pc_int(0, PT_INT4) : pc_null();
            return 0;
        }
        *out = pc_int(d->id == F_ARRAY_LOWER ? 1 : a[0].n, PT_INT4);
        return 0;
    }
    case F_STRING_TO_ARRAY:
        return split(x, &a[0], a[1].s, a[1].n, 0, out);
    case F_PARSE_IDENT:
        return split(x, &a[0], ".", 1, 1, out);
    case F_REL_SIZE: {
        if (a[0].k == PV_STR && pc_cast(x, &a[0], PT_REGCLASS, f->location, &a[0]) != 0)
            return -1;
        const qr_tabdef *td = pc_table_of(x, a[0].i);
        int64_t bytes = td && env->table_bytes && strcmp(name, "pg_indexes_size") != 0
                            ? env->table_bytes(env->ctx, td->name)
                            : 0;
        *out = pc_int(bytes < 0 ? 0 : bytes, PT_INT8);
        return 0;
    }
    case F_DB_SIZE: {
        int64_t sum = 0;
        for (uint32_t t = 0; env->table_bytes && t < env->cat->ntables; t++) {
            int64_t b = env->table_bytes(env->ctx, env->cat->tables[t]->name);
            sum += b > 0 ? b : 0;
        }
        *out = pc_int(sum, PT_INT8);
        return 0;
    }
    case F_SIZE_PRETTY:
        size_pretty(a[0].k == PV_FLOAT ? (int64_t)a[0].f : a[0].i, buf, sizeof buf);
        *out = pc_str(x, buf, strlen(buf), PT_TEXT);
        return 0;
    case F_QUOTE_IDENT:
        return quote_ident(x, &a[0], out);
    case F_CURRENT_SCHEMA:
        *out = pc_cstr("public", PT_NAME);
        return 0;
    case F_CURRENT_SCHEMAS: {
        static const char *const both[] = {"pg_catalog", "public"};
        int all = a[0].k == PV_BOOL ? (int)a[0].i : a[0].k == PV_INT ? a[0].i != 0 : 1;
        return str_array(x, all ? both : both + 1, all ? 2 : 1, PT_NAME_ARR, out);
    }
    case F_CURRENT_DATABASE:
        *out = pc_cstr(env->database, PT_NAME);
        return 0;
    case F_CURRENT_USER:
        *out = pc_cstr(env->user, PT_NAME);
        return 0;
    case F_VERSION:
        *out = pc_cstr("PostgreSQL 15.0 (Quarry) on x86_64-pc-linux-gnu, 64-bit", PT_TEXT);
        return 0;
    case F_BACKEND_PID:
        *out = pc_int(env->pid, PT_INT4);
        return 0;
    case F_CURRENT_SETTING: {
        if (a[0].k == PV_NULL) {
            *out = pc_null();
            return 0;
        }
        char nm[128];
        snprintf(nm, sizeof nm, "%.*s", (int)(a[0].n > 127 ? 127 : a[0].n), a[0].s);
        qr_err e2;
        if (!env->setting || env->setting(env->ctx, nm, buf, sizeof buf, &e2) != 0) {
            if (f->n_args == 2 && truth(&a[1]) == 1) {
                *out = pc_null();
                return 0;
            }
            return pc_fail(x, f->location, QR_E_UNDEFINED_OBJECT,
                           "unrecognized configuration parameter \"%s\"", nm);
        }
        *out = pc_str(x, buf, strlen(buf), PT_TEXT);
        return 0;
    }
    case F_LOWER:
    case F_UPPER: {
        char *c = qr_arena_strndup(x->a, a[0].s, a[0].n);
        if (!c)
            return pc_nomem(x);
        for (uint32_t i = 0; i < a[0].n; i++)
            c[i] = (char)(d->id == F_LOWER ? tolower((unsigned char)c[i])
                                           : toupper((unsigned char)c[i]));
        *out = (pcv){.k = PV_STR, .t = PT_TEXT, .s = c, .n = a[0].n};
        return 0;
    }
    case F_LENGTH: {
        int64_t n = 0;
        for (uint32_t i = 0; i < a[0].n; i++)
            n += ((unsigned char)a[0].s[i] & 0xC0) != 0x80;
        *out = pc_int(n, PT_INT4);
        return 0;
    }
    case F_BTRIM:
    case F_LTRIM:
    case F_RTRIM: {
        int lead = d->id != F_RTRIM, trail = d->id != F_LTRIM;
        return trim(x, &a[0], f->n_args > 1 ? &a[1] : NULL, lead, trail, out);
    }
    case F_REPLACE: {
        qr_buf b;
        qr_buf_init(&b);
        for (uint32_t i = 0; i < a[0].n;) {
            if (a[1].n && i + a[1].n <= a[0].n && !memcmp(a[0].s + i, a[1].s, a[1].n)) {
                qr_buf_put(&b, a[2].s, a[2].n);
                i += a[1].n;
            } else {
                qr_buf_put_u8(&b, (uint8_t)a[0].s[i++]);
            }
        }
        int rc = b.oom ? pc_nomem(x) : 0;
        if (rc == 0)
            *out = pc_str(x, b.len ? (const char *)b.p : "", b.len, PT_TEXT);
        qr_buf_free(&b);
        return rc;
    }
    case F_CONCAT: {
        qr_buf b;
        qr_buf_init(&b);
        for (size_t i = 0; i < f->n_args; i++)
            if (a[i].k != PV_NULL)
                pc_text(x, &a[i], &b);
        int rc = b.oom ? pc_nomem(x) : 0;
        if (rc == 0)
            *out = pc_str(x, b.len ? (const char *)b.p : "", b.len, PT_TEXT);
        qr_buf_free(&b);
        return rc;
    }
    case F_SUBSTR:
    case F_LEFT:
    case F_RIGHT: { /* bytes: the catalog's names are ASCII */
        int64_t from = 1, cnt = a[0].n;
        if (d->id == F_SUBSTR) {
            from = a[1].i;
            if (f->n_args == 3)
                cnt = a[2].i;
        } else if (d->id == F_LEFT) {
            cnt = a[1].i < 0 ? a[0].n + a[1].i : a[1].i;
        } else {
            cnt = a[1].i < 0 ? a[0].n + a[1].i : a[1].i;
            from = a[0].n - cnt + 1;
        }
        int64_t b = from < 1 ? 1 : from, e = from + cnt;
        if (e > (int64_t)a[0].n + 1)
            e = a[0].n + 1;
        *out = pc_str(x, a[0].s + b - 1, e > b ? (size_t)(e - b) : 0, PT_TEXT);
        return 0;
    }
    case F_STRPOS: {
        int64_t at = 0;
        for (uint32_t i = 0; i + a[1].n <= a[0].n && !at; i++)
            if (!memcmp(a[0].s + i, a[1].s, a[1].n))
                at = i + 1;
        *out = pc_int(at, PT_INT4);
        return 0;
    }
    case F_TO_REGCLASS: {
        char nm[256];
        snprintf(nm, sizeof nm, "%.*s", (int)(a[0].n > 255 ? 255 : a[0].n), a[0].s);
        uint32_t oid = pc_reloid_of(x, nm);
        *out = oid ? pc_int(oid, PT_REGCLASS) : pc_null();
        return 0;
    }
    case F_TO_REGTYPE: {
        char nm[128];
        snprintf(nm, sizeof nm, "%.*s", (int)(a[0].n > 127 ? 127 : a[0].n), a[0].s);
        const pctype *ty = pc_type_by_name(!strncmp(nm, "pg_catalog.", 11) ? nm + 11 : nm);
        *out = ty ? pc_int(ty->oid, PT_REGTYPE) : pc_null();
        return 0;
    }
    default:
        return pc_fail(x, f->location, QR_E_FEATURE,
                       "%s() is not supported here (set-returning functions go in FROM)", name);
    }
}

/* an aggregate over the group of the scope that has one */
static int aggregate(pcx *x, const PgQuery__FuncCall *f, const pcscope *s, pcv *out)
{
    const char *name = pc_fname(f, NULL);
    const pcscope *g = s;
    while (g && !g->grouped)
        g = g->up;
    if (!g)
        return pc_fail(x, f->location, "42803", "aggregate functions are not allowed here");
    if (f->agg_distinct || f->n_agg_order || f->agg_filter)
        return pc_fail(x, f->location, QR_E_FEATURE,
                       "%s() with DISTINCT, ORDER BY or FILTER is not supported here", name);
    pcscope row = *g;
    row.grouped = 0;
    pcitem items[PC_MAX_ITEMS];
    memcpy(items, g->it, sizeof *items * g->n);
    row.it = items;
    int64_t cnt = 0;
    pcv acc = pc_null();
    qr_buf b;
    qr_buf_init(&b);
    uint32_t cap = 0, n = 0;
    pcv *arr = NULL;
    int rc = 0;
    for (uint64_t t = 0; t < g->ntup && rc == 0; t++) {
        for (uint32_t k = 0; k < g->n; k++)
            items[k].row = g->tup[t * g->n + k];
        pcv v = pc_bool(1), sep = pc_null();
        if (!f->agg_star && f->n_args && (rc = pc_eval(x, f->args[0], &row, &v)) != 0)
            break;
        if (!strcmp(name, "array_agg")) {
            if (n == cap) {
                pcv *bigger = qr_arena_alloc(x->a, sizeof *arr * (cap ? cap * 2 : 8));
                if (!bigger) {
                    rc = pc_nomem(x);
                    break;
                }
                if (n)
                    memcpy(bigger, arr, sizeof *arr * n);
                arr = bigger, cap = cap ? cap * 2 : 8;
            }
            arr[n++] = v;
            continue;
        }
        if (v.k == PV_NULL)
            continue;
        cnt++;
        if (!strcmp(name, "string_agg")) {
            if ((rc = pc_eval(x, f->args[1], &row, &sep)) != 0)
                break;
            if (cnt > 1 && sep.k == PV_STR)
                qr_buf_put(&b, sep.s, sep.n);
            pc_text(x, &v, &b);
        } else if (!strcmp(name, "min") || !strcmp(name, "max")) {
            int c = acc.k == PV_NULL ? 0 : pc_cmp(&v, &acc);
            if (acc.k == PV_NULL || (name[1] == 'i' ? c < 0 : c > 0))
                acc = v;
        } else if (!strcmp(name, "sum") || !strcmp(name, "avg")) {
            if (acc.k == PV_NULL)
                acc = v.k == PV_INT ? pc_int(v.i, PT_INT8) : v;
            else
                rc = arith(x, "+", &acc, &v, PT_INT8, f->location, &acc);
        } else if (!strcmp(name, "bool_and") || !strcmp(name, "every")) {
            acc = pc_bool((acc.k == PV_NULL || acc.i) && truth(&v) == 1);
        } else if (!strcmp(name, "bool_or")) {
            acc = pc_bool((acc.k != PV_NULL && acc.i) || truth(&v) == 1);
        }
    }
    if (rc == 0) {
        if (!strcmp(name, "count")) {
            *out = pc_int(cnt, PT_INT8);
        } else if (!strcmp(name, "string_agg")) {
            *out = cnt ? pc_str(x, b.len ? (const char *)b.p : "", b.len, PT_TEXT) : pc_null();
        } else if (!strcmp(name, "array_agg")) {
            *out = n ? (pcv){.k = PV_ARR, .t = array_of(arr[0].t), .n = n, .a = arr} : pc_null();
        } else if (!strcmp(name, "avg") && acc.k != PV_NULL) {
            double sum = acc.k == PV_INT ? (double)acc.i : acc.f;
            *out = (pcv){.k = PV_FLOAT, .t = PT_FLOAT8, .f = sum / (double)cnt};
        } else {
            *out = acc;
        }
    }
    qr_buf_free(&b);
    return rc;
}

int pc_eval(pcx *x, const Node *n, const pcscope *s, pcv *out)
{
    *out = pc_null();
    if (!n)
        return 0;
    if (x->ctx && qr_qctx_tick(x->ctx, &x->ticks, x->e) != 0)
        return -1;
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_A_CONST: {
        const PgQuery__AConst *c = n->a_const;
        if (c->isnull)
            return 0;
        switch (c->val_case) {
        case PG_QUERY__A__CONST__VAL_IVAL:
            *out = pc_int(c->ival->ival, PT_INT4);
            return 0;
        case PG_QUERY__A__CONST__VAL_FVAL:
            *out = (pcv){.k = PV_FLOAT, .t = PT_NUMERIC, .f = strtod(c->fval->fval, NULL)};
            if (strchr(c->fval->fval, '.') == NULL && strchr(c->fval->fval, 'e') == NULL &&
                strlen(c->fval->fval) < 19)
                *out = pc_int(strtoll(c->fval->fval, NULL, 10), PT_INT8);
            return 0;
        case PG_QUERY__A__CONST__VAL_BOOLVAL:
            *out = pc_bool(c->boolval->boolval);
            return 0;
        case PG_QUERY__A__CONST__VAL_SVAL:
            *out = pc_cstr(c->sval->sval, PT_UNKNOWN);
            return 0;
        default:
            return pc_fail(x, c->location, QR_E_FEATURE, "bit strings are not supported");
        }
    }
    case PG_QUERY__NODE__NODE_COLUMN_REF: {
        const pcscope *at;
        uint32_t it, col;
        if (pc_resolve(x, n->column_ref, s, &at, &it, &col) != 0)
            return -1;
        const pcv *row = at->it[it].row;
        if (row)
            *out = row[col];
        else
            out->t = at->it[it].rel->cols[col].type;
        return 0;
    }
    case PG_QUERY__NODE__NODE_TYPE_CAST: {
        pcv v;
        int err = 0;
        uint32_t t = cast_type(x, n->type_cast->type_name, &err);
        if (err || pc_eval(x, n->type_cast->arg, s, &v) != 0)
            return -1;
        return pc_cast(x, &v, t, n->type_cast->location, out);
    }
    case PG_QUERY__NODE__NODE_COLLATE_CLAUSE: /* C collation is the only one */
        return pc_eval(x, n->collate_clause->arg, s, out);
    case PG_QUERY__NODE__NODE_A_EXPR:
        return eval_aexpr(x, n->a_expr, s, out);
    case PG_QUERY__NODE__NODE_BOOL_EXPR: {
        const PgQuery__BoolExpr *b = n->bool_expr;
        if (b->boolop == PG_QUERY__BOOL_EXPR_TYPE__NOT_EXPR) {
            pcv v;
            if (b->n_args != 1 || pc_eval(x, b->args[0], s, &v) != 0)
                return -1;
            int t = truth(&v);
            *out = t < 0 ? pc_null() : pc_bool(!t);
            return 0;
        }
        int and = b->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR, sawnull = 0;
        for (size_t i = 0; i < b->n_args; i++) {
            pcv v;
            if (pc_eval(x, b->args[i], s, &v) != 0)
                return -1;
            int t = truth(&v);
            if (t < 0)
                sawnull = 1;
            else if (t != and) {
                *out = pc_bool(!and);
                return 0;
            }
        }
        *out = sawnull ? pc_null() : pc_bool(and);
        out->t = PT_BOOL;
        return 0;
    }
    case PG_QUERY__NODE__NODE_NULL_TEST: {
        pcv v;
        if (pc_eval(x, n->null_test->arg, s, &v) != 0)
            return -1;
        int isnull = v.k == PV_NULL;
        *out = pc_bool(n->null_test->nulltesttype == PG_QUERY__NULL_TEST_TYPE__IS_NULL ? isnull
                                                                                       : !isnull);
        return 0;
    }
    case PG_QUERY__NODE__NODE_BOOLEAN_TEST: {
        pcv v;
        if (pc_eval(x, n->boolean_test->arg, s, &v) != 0)
            return -1;
        int t = truth(&v), r;
        switch (n->boolean_test->booltesttype) {
        case PG_QUERY__BOOL_TEST_TYPE__IS_TRUE:
            r = t == 1;
            break;
        case PG_QUERY__BOOL_TEST_TYPE__IS_NOT_TRUE:
            r = t != 1;
            break;
        case PG_QUERY__BOOL_TEST_TYPE__IS_FALSE:
            r = t == 0;
            break;
        case PG_QUERY__BOOL_TEST_TYPE__IS_NOT_FALSE:
            r = t != 0;
            break;
        case PG_QUERY__BOOL_TEST_TYPE__IS_UNKNOWN:
            r = t < 0;
            break;
        default:
            r = t >= 0;
        }
        *out = pc_bool(r);
        return 0;
    }
    case PG_QUERY__NODE__NODE_CASE_EXPR: {
        const PgQuery__CaseExpr *c = n->case_expr;
        pcv arg;
        if (c->arg && pc_eval(x, c->arg, s, &arg) != 0)
            return -1;
        for (size_t i = 0; i < c->n_args; i++) {
            const PgQuery__CaseWhen *w = c->args[i]->case_when;
            pcv cond;
            if (pc_eval(x, w->expr, s, &cond) != 0)
                return -1;
            if (c->arg && compare_op(x, "=", arg, cond, w->location, &cond) != 0)
                return -1;
            if (truth(&cond) == 1)
                return pc_eval(x, w->result, s, out);
        }
        return pc_eval(x, c->defresult, s, out);
    }
    case PG_QUERY__NODE__NODE_COALESCE_EXPR:
        for (size_t i = 0; i < n->coalesce_expr->n_args; i++) {
            if (pc_eval(x, n->coalesce_expr->args[i], s, out) != 0)
                return -1;
            if (out->k != PV_NULL)
                return 0;
        }
        return 0;
    case PG_QUERY__NODE__NODE_MIN_MAX_EXPR: {
        const PgQuery__MinMaxExpr *m = n->min_max_expr;
        for (size_t i = 0; i < m->n_args; i++) {
            pcv v;
            if (pc_eval(x, m->args[i], s, &v) != 0)
                return -1;
            if (v.k == PV_NULL)
                continue;
            int c = out->k == PV_NULL ? 0 : pc_cmp(&v, out);
            if (out->k == PV_NULL || (m->op == PG_QUERY__MIN_MAX_OP__IS_GREATEST ? c > 0 : c < 0))
                *out = v;
        }
        return 0;
    }
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION:
        switch (n->sqlvalue_function->op) {
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_USER:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_ROLE:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_SESSION_USER:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_USER:
            *out = pc_cstr(x->env->user, PT_NAME);
            return 0;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_CATALOG:
            *out = pc_cstr(x->env->database, PT_NAME);
            return 0;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_SCHEMA:
            *out = pc_cstr("public", PT_NAME);
            return 0;
        default:
            return pc_fail(x, n->sqlvalue_function->location, QR_E_FEATURE,
                           "the current date and time are not supported in catalog queries");
        }
    case PG_QUERY__NODE__NODE_A_ARRAY_EXPR: {
        const PgQuery__AArrayExpr *ae = n->a_array_expr;
        pcv *items = qr_arena_alloc(x->a, sizeof *items * (ae->n_elements + 1));
        if (!items)
            return pc_nomem(x);
        if (eval_list(x, ae->elements, ae->n_elements, s, items) != 0)
            return -1;
        uint32_t et = ae->n_elements ? items[0].t : PT_TEXT;
        *out = (pcv){.k = PV_ARR,
                     .t = array_of(et == PT_UNKNOWN ? PT_TEXT : et),
                     .n = (uint32_t)ae->n_elements,
                     .a = items};
        return 0;
    }
    case PG_QUERY__NODE__NODE_A_INDIRECTION: {
        const PgQuery__AIndirection *ind = n->a_indirection;
        pcv v;
        if (pc_eval(x, ind->arg, s, &v) != 0)
            return -1;
        for (size_t i = 0; i < ind->n_indirection; i++) {
            const Node *k = ind->indirection[i];
            if (k->node_case == PG_QUERY__NODE__NODE_STRING && v.k == PV_ARR && v.fields) {
                int at = -1;
                for (uint32_t fi = 0; fi < v.n; fi++)
                    if (!strcmp(v.fields[fi], k->string->sval))
                        at = (int)fi;
                if (at < 0)
                    return pc_fail(x, -1, QR_E_UNDEFINED_COLUMN,
                                   "could not identify column \"%s\" in record data type",
                                   k->string->sval);
                v = v.a[at];
                continue;
            }
            if (k->node_case == PG_QUERY__NODE__NODE_STRING && v.k == PV_NULL)
                continue;
            if (k->node_case != PG_QUERY__NODE__NODE_A_INDICES || k->a_indices->is_slice)
                return pc_fail(x, -1, QR_E_FEATURE, "%s are not supported here",
                               "field selections and array slices");
            pcv idx;
            if (pc_eval(x, k->a_indices->uidx, s, &idx) != 0)
                return -1;
            if (idx.k == PV_STR && pc_cast(x, &idx, PT_INT4, -1, &idx) != 0)
                return -1;
            if (v.k == PV_STR && pc_cast(x, &v, PT_TEXT_ARR, -1, &v) != 0)
                return -1;
            if (v.k != PV_ARR || idx.k != PV_INT) {
                v = pc_null();
                continue;
            }
            /* int2vector and oidvector count from 0, arrays from 1 */
            int64_t at = idx.i - (v.t == PT_INT2VECTOR || v.t == PT_OIDVECTOR ? 0 : 1);
            v = at >= 0 && at < v.n ? v.a[at] : pc_null();
        }
        *out = v;
        return 0;
    }
    case PG_QUERY__NODE__NODE_SUB_LINK:
        return eval_sublink(x, n->sub_link, s, out);
    case PG_QUERY__NODE__NODE_FUNC_CALL:
        return call(x, n->func_call, s, out);
    case PG_QUERY__NODE__NODE_PARAM_REF:
        return pc_fail(x, n->param_ref->location, QR_E_FEATURE,
                       "parameters are not supported in catalog queries");
    case PG_QUERY__NODE__NODE_ROW_EXPR:
        return pc_fail(x, n->row_expr->location, QR_E_FEATURE,
                       "row constructors are not supported in catalog queries");
    default:
        return pc_fail(x, -1, QR_E_FEATURE,
                       "this expression (node %d) is not supported in catalog queries",
                       (int)n->node_case);
    }
}

int pc_truth(const pcv *v) { return truth(v); }

int pc_is_srf(const PgQuery__FuncCall *f)
{
    const fndef *d = fn_find(pc_fname(f, NULL));
    return d && (d->id == F_SRF || d->id == F_EXPANDARRAY);
}

int pc_srf_rows(pcx *x, const PgQuery__FuncCall *f, const pcscope *s, pcv **rows, uint32_t *n)
{
    static const char *const fields[] = {"x", "n"};
    const char *name = pc_fname(f, NULL);
    pcv a[3] = {pc_null(), pc_null(), pc_int(1, PT_INT4)};
    *n = 0;
    if (f->n_args < 1 || f->n_args > 3 || eval_list(x, f->args, f->n_args, s, a) != 0)
        return f->n_args < 1 || f->n_args > 3 ? pc_fail(x, f->location, "42883",
                                                        "function %s() takes another number of "
                                                        "arguments",
                                                        name)
                                              : -1;
    if (!strcmp(name, "generate_series")) {
        for (int i = 0; i < 3; i++)
            if (a[i].k != PV_NULL && a[i].k != PV_INT && pc_cast(x, &a[i], PT_INT8, -1, &a[i]))
                return -1;
        if (a[0].k != PV_INT || a[1].k != PV_INT || a[2].k != PV_INT)
            return 0;
        if (a[2].i == 0)
            return pc_fail(x, f->location, QR_E_ARGS, "step size cannot equal zero");
        int64_t cnt = a[2].i > 0 ? (a[1].i - a[0].i) / a[2].i + 1 : (a[0].i - a[1].i) / -a[2].i + 1;
        if (cnt <= 0)
            return 0;
        if (cnt > 1000000)
            return pc_fail(x, f->location, "54000", "generate_series: too many rows");
        pcv *r = qr_arena_alloc(x->a, sizeof *r * (size_t)cnt);
        if (!r)
            return pc_nomem(x);
        for (int64_t i = 0; i < cnt; i++)
            r[i] = pc_int(a[0].i + i * a[2].i, PT_INT4);
        *rows = r, *n = (uint32_t)cnt;
        return 0;
    }
    if (a[0].k == PV_STR && pc_cast(x, &a[0], PT_TEXT_ARR, f->location, &a[0]) != 0)
        return -1;
    if (a[0].k != PV_ARR)
        return 0;
    pcv *r = qr_arena_alloc(x->a, sizeof *r * (a[0].n ? a[0].n : 1));
    if (!r)
        return pc_nomem(x);
    for (uint32_t i = 0; i < a[0].n; i++) {
        if (!strcmp(name, "unnest")) {
            r[i] = a[0].a[i];
            continue;
        }
        pcv *rec = qr_arena_alloc(x->a, sizeof *rec * 2); /* (x, n) */
        if (!rec)
            return pc_nomem(x);
        rec[0] = a[0].a[i];
        rec[1] = pc_int(i + 1, PT_INT4);
        r[i] = (pcv){.k = PV_ARR, .t = PT_RECORD, .n = 2, .a = rec, .fields = fields};
    }
    *rows = r, *n = a[0].n;
    return 0;
}
