/* tabdef_json.c - the JSON form of a table definition (schema.h; the form
 * is documented in docs/FORMAT.md "Table definitions").
 *
 * Writing: 2-space indents, one column or index object per line, keys in a
 * fixed order, defaults left out (except index ids, which are always
 * written: they name the sections of existing segments).
 *
 * Reading: keys may come in any order, so references to columns ("sort",
 * "catch_all", an index's "column") are kept as text with their offsets and
 * resolved once the whole object is read. Explicit index ids are placed
 * before the absent ones get the next free id, so the two never collide; the
 * indexes then keep the order they were written in. Every error names
 * "SRC:LINE:COL" (1-based; columns count UTF-8 characters) of the offending
 * key or value. Strings with escapes are decoded into a parse-local arena;
 * everything kept is copied into the definition, which owns it.
 */
#include "format/schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"

/* ---- writing ---- */

/* A NUL-terminated copy of a slice (not strndup: the slice is not a C
 * string, and ASan's strict string checks would read past it). */
static char *dup_slice(qr_slice s)
{
    char *d = malloc(s.n + 1);
    if (d) {
        memcpy(d, s.p, s.n);
        d[s.n] = 0;
    }
    return d;
}

static void put_str(qr_buf *b, const char *s) { qr_buf_put(b, s, strlen(s)); }

static void put_key(qr_buf *b, const char *key)
{
    qj_write_string(b, key, strlen(key));
    put_str(b, ": ");
}

static void put_key_str(qr_buf *b, const char *key, const char *val)
{
    put_key(b, key);
    qj_write_string(b, val, strlen(val));
}

static const char *col_name(const qr_tabdef *d, long col)
{
    return col >= 0 && (uint32_t)col < d->ncols ? d->cols[col].name : "?";
}

void qr_tabdef_to_json(const qr_tabdef *d, qr_buf *out)
{
    put_str(out, "{\n");
    if (d->name) {
        put_str(out, "  ");
        put_key_str(out, "name", d->name);
        put_str(out, ",\n");
    }
    put_str(out, "  \"columns\": [");
    for (uint32_t i = 0; i < d->ncols; i++) {
        const qr_coldef *c = &d->cols[i];
        put_str(out, i ? ",\n    {" : "\n    {");
        put_key_str(out, "name", c->name);
        put_str(out, ", ");
        put_key_str(out, "type", qr_type_name(c->type));
        if (!c->nullable)
            put_str(out, ", \"nullable\": false");
        if (c->tsfmt != QR_TS_RFC3339) {
            put_str(out, ", ");
            put_key_str(out, "format", qr_tsfmt_name(c->tsfmt));
        }
        put_str(out, "}");
    }
    put_str(out, d->ncols ? "\n  ]" : "]");
    if (d->sort_col >= 0) {
        put_str(out, ",\n  ");
        put_key_str(out, "sort", col_name(d, d->sort_col));
    }
    if (d->extra_col >= 0) {
        put_str(out, ",\n  ");
        put_key_str(out, "catch_all", col_name(d, d->extra_col));
    }
    if (d->omit_nulls)
        put_str(out, ",\n  \"omit_nulls\": true");
    if (d->retention_s > 0) {
        char num[64];
        snprintf(num, sizeof num, ",\n  \"retention_seconds\": %lld", (long long)d->retention_s);
        put_str(out, num);
    }
    if (d->nixs) {
        put_str(out, ",\n  \"indexes\": [");
        for (uint32_t i = 0; i < d->nixs; i++) {
            const qr_ixdef *x = &d->ixs[i];
            put_str(out, i ? ",\n    {" : "\n    {");
            put_key_str(out, "column", col_name(d, x->col));
            put_str(out, ", ");
            put_key_str(out, "kind", qr_ixkind_name(x->kind));
            if (x->name) {
                put_str(out, ", ");
                put_key_str(out, "name", x->name);
            }
            char num[32];
            snprintf(num, sizeof num, ", \"id\": %u", (unsigned)x->id);
            put_str(out, num);
            if (!x->lowercase)
                put_str(out, ", \"lowercase\": false");
            if (x->positions != (x->kind == QR_IX_FULLTEXT))
                put_str(out, x->positions ? ", \"positions\": true" : ", \"positions\": false");
            if (x->building)
                put_str(out, ", \"building\": true");
            put_str(out, "}");
        }
        put_str(out, "\n  ]");
    }
    put_str(out, "\n}");
}

/* ---- reading: positions and errors ---- */

typedef struct pctx {
    qr_json *j;
    const char *src;
    qr_err *e;
    qr_arena a; /* decoded strings and C copies, freed when the parse ends */
} pctx;

/* 1-based line and column (in UTF-8 characters) of byte offset off. */
static void line_col(const char *s, size_t off, unsigned *line, unsigned *col)
{
    unsigned l = 1, c = 1;
    for (size_t i = 0; i < off; i++) {
        if (s[i] == '\n')
            l++, c = 1;
        else if (((unsigned char)s[i] & 0xc0) != 0x80)
            c++;
    }
    *line = l;
    *col = c;
}

/* "SRC:LINE:COL" of byte offset off, into buf. */
static void where(const pctx *c, size_t off, char *buf, size_t n)
{
    unsigned line, col;
    line_col(c->j->s, off, &line, &col);
    snprintf(buf, n, "%s:%u:%u", c->src, line, col);
}

static __attribute__((format(printf, 4, 5))) int perr(pctx *c, size_t off, const char *code,
                                                      const char *fmt, ...)
{
    char why[QR_ERR_MSG_MAX], at[QR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    where(c, off, at, sizeof at);
    return qr_errf(c->e, code, "%s: %s", at, why);
}

/* The JSON parser's own error (malformed JSON). */
static int jerr(pctx *c)
{
    return perr(c, c->j->err_off, QR_E_INVALID_TEXT, "%s",
                c->j->err_why ? c->j->err_why : "invalid JSON");
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* Offset of the next value (j is before it, maybe before whitespace). */
static size_t value_off(const qr_json *j) { return (size_t)(skip_ws(j->p, j->end) - j->s); }

/* Offset of the next member key (j is after '{' or after a member's value). */
static size_t key_off(const qr_json *j)
{
    const char *p = skip_ws(j->p, j->end);
    if (p < j->end && *p == ',')
        p = skip_ws(p + 1, j->end);
    return (size_t)(p - j->s);
}

/* ---- reading: values ---- */

/* The JSON type of the next value; QJ_ERROR (error set) on malformed JSON. */
static qj_type peek(pctx *c)
{
    qj_type t = qj_peek(c->j);
    if (t == QJ_ERROR)
        jerr(c);
    return t;
}

/* A string value; with nullable, null gives out->p = NULL. */
static int read_str(pctx *c, const char *key, int nullable, qr_slice *out, size_t *off)
{
    *off = value_off(c->j);
    qj_type t = peek(c);
    if (t == QJ_ERROR)
        return -1;
    if (nullable && t == QJ_NULL) {
        out->p = NULL;
        out->n = 0;
        return qj_null(c->j) ? jerr(c) : 0;
    }
    if (t != QJ_STRING)
        return perr(c, *off, QR_E_SYNTAX, "\"%s\" must be a string%s", key,
                    nullable ? " or null" : "");
    return qj_string(c->j, out, &c->a) ? jerr(c) : 0;
}

static int read_bool(pctx *c, const char *key, int *v, size_t *off)
{
    *off = value_off(c->j);
    qj_type t = peek(c);
    if (t == QJ_ERROR)
        return -1;
    if (t != QJ_TRUE && t != QJ_FALSE)
        return perr(c, *off, QR_E_SYNTAX, "\"%s\" must be true or false", key);
    return qj_bool(c->j, v) ? jerr(c) : 0;
}

/* A NUL-terminated copy of s in the parse arena (NULL when out of memory). */
static char *cstr(pctx *c, qr_slice s)
{
    char *p = qr_arena_alloc(&c->a, s.n + 1);
    if (p) {
        memcpy(p, s.p, s.n);
        p[s.n] = 0;
    }
    return p;
}

/* Position of key in keys[] (NULL-terminated), or -1 with the error set
 * (unknown key; duplicate key when its bit is already in *seen). */
static int match_key(pctx *c, const char *const *keys, qr_slice key, size_t off, unsigned *seen)
{
    for (int i = 0; keys[i]; i++) {
        if (strlen(keys[i]) != key.n || memcmp(keys[i], key.p, key.n) != 0)
            continue;
        if (*seen & (1u << i))
            return perr(c, off, QR_E_SYNTAX, "duplicate key \"%s\"", keys[i]);
        *seen |= 1u << i;
        return i;
    }
    return perr(c, off, QR_E_SYNTAX, "unknown key \"%.*s\"", (int)(key.n > 64 ? 64 : key.n), key.p);
}

/* Consume '{' of a value that must be an object ("what must be an object"). */
static int begin_object(pctx *c, const char *what, size_t *off)
{
    *off = value_off(c->j);
    qj_type t = peek(c);
    if (t == QJ_ERROR)
        return -1;
    if (t != QJ_OBJECT)
        return perr(c, *off, QR_E_SYNTAX, "%s must be an object", what);
    return qj_object_begin(c->j) ? jerr(c) : 0;
}

static int begin_array(pctx *c, const char *key)
{
    size_t off = value_off(c->j);
    qj_type t = peek(c);
    if (t == QJ_ERROR)
        return -1;
    if (t != QJ_ARRAY)
        return perr(c, off, QR_E_SYNTAX, "\"%s\" must be an array", key);
    return qj_array_begin(c->j) ? jerr(c) : 0;
}

/* The next member key: 1 with *key and *off set, 0 at '}', -1 on error. */
static int next_key(pctx *c, qr_slice *key, size_t *off)
{
    *off = key_off(c->j);
    int r = qj_object_next(c->j, key, &c->a);
    return r < 0 ? jerr(c) : r;
}

/* ---- reading: columns ---- */

static const char *const col_keys[] = {"name", "type", "nullable", "format", NULL};

static int parse_column(pctx *c, qr_tabdef *d)
{
    size_t obj, off, name_off = 0, type_off = 0, fmt_off = 0;
    qr_slice key, name = {0}, s = {0};
    int type = -1, nullable = 1, fmt = -1;
    unsigned seen = 0;
    if (begin_object(c, "a column", &obj))
        return -1;
    for (;;) {
        int r = next_key(c, &key, &off);
        if (r <= 0) {
            if (r < 0)
                return -1;
            break;
        }
        switch (match_key(c, col_keys, key, off, &seen)) {
        case 0:
            if (read_str(c, "name", 0, &name, &name_off))
                return -1;
            break;
        case 1:
            if (read_str(c, "type", 0, &s, &type_off))
                return -1;
            if ((type = qr_type_by_name(s.p, s.n)) < 0)
                return perr(c, type_off, QR_E_ARGS, "unknown type \"%.*s\"",
                            (int)(s.n > 64 ? 64 : s.n), s.p);
            break;
        case 2:
            if (read_bool(c, "nullable", &nullable, &off))
                return -1;
            break;
        case 3:
            if (read_str(c, "format", 0, &s, &fmt_off))
                return -1;
            if ((fmt = qr_tsfmt_by_name(s.p, s.n)) < 0)
                return perr(c, fmt_off, QR_E_ARGS,
                            "unknown time format \"%.*s\" (rfc3339, epoch_s, epoch_ms, epoch_us, "
                            "epoch_ns)",
                            (int)(s.n > 64 ? 64 : s.n), s.p);
            break;
        default:
            return -1;
        }
    }
    if (!name.p)
        return perr(c, obj, QR_E_SYNTAX, "a column needs a \"name\"");
    if (!qr_col_name_ok(name.p, name.n))
        return perr(c, name_off, QR_E_ARGS,
                    "column name \"%.*s\" is not 1-%d bytes without control characters",
                    (int)(name.n > 64 ? 64 : name.n), name.p, QR_MAX_NAME);
    if (qr_tabdef_col(d, name.p, name.n) >= 0)
        return perr(c, name_off, QR_E_ARGS, "duplicate column \"%.*s\" (names ignore case)",
                    (int)name.n, name.p);
    if (type < 0)
        return perr(c, obj, QR_E_SYNTAX, "column \"%.*s\" needs a \"type\"", (int)name.n, name.p);
    if (fmt >= 0 && type != QT_TIMESTAMP)
        return perr(c, fmt_off, QR_E_DATATYPE,
                    "column \"%.*s\": \"format\" is only for timestamp columns, not %s",
                    (int)name.n, name.p, qr_type_name(type));
    qr_err e2;
    int ci = qr_tabdef_add_col(d, name.p, name.n, type, nullable, &e2);
    if (ci < 0)
        return perr(c, obj, e2.code, "%s", e2.msg);
    d->cols[ci].tsfmt = (uint8_t)(fmt < 0 ? QR_TS_RFC3339 : fmt);
    return 0;
}

/* ---- reading: indexes (resolved after the whole definition is read) ---- */

typedef struct pend_ix {
    size_t off;   /* the index object */
    qr_slice col; /* "column" as written */
    size_t col_off;
    int kind; /* -1 when absent */
    size_t kind_off;
    char *name; /* NUL-terminated (arena), or NULL */
    size_t name_off;
    int64_t id; /* 0 when absent */
    size_t id_off;
    int lowercase, positions, building; /* -1 when absent */
    size_t lc_off, pos_off;
    int colno; /* resolved column */
    int slot;  /* position in d->ixs once added */
} pend_ix;

static const char *const ix_keys[] = {"column",    "kind",      "name",     "id",
                                      "lowercase", "positions", "building", NULL};

static int parse_index(pctx *c, pend_ix *x)
{
    size_t off;
    qr_slice key, s = {0};
    unsigned seen = 0;
    memset(x, 0, sizeof *x);
    x->kind = x->lowercase = x->positions = x->building = x->colno = x->slot = -1;
    if (begin_object(c, "an index", &x->off))
        return -1;
    for (;;) {
        int r = next_key(c, &key, &off);
        if (r <= 0) {
            if (r < 0)
                return -1;
            break;
        }
        switch (match_key(c, ix_keys, key, off, &seen)) {
        case 0:
            if (read_str(c, "column", 0, &x->col, &x->col_off))
                return -1;
            break;
        case 1:
            if (read_str(c, "kind", 0, &s, &x->kind_off))
                return -1;
            if ((x->kind = qr_ixkind_by_name(s.p, s.n)) < 0)
                return perr(c, x->kind_off, QR_E_ARGS,
                            "unknown index kind \"%.*s\" (fulltext, keyword, range, paths)",
                            (int)(s.n > 64 ? 64 : s.n), s.p);
            break;
        case 2:
            if (read_str(c, "name", 1, &s, &x->name_off))
                return -1;
            if (s.p && !qr_col_name_ok(s.p, s.n))
                return perr(c, x->name_off, QR_E_ARGS,
                            "index name \"%.*s\" is not 1-%d bytes without control characters",
                            (int)(s.n > 64 ? 64 : s.n), s.p, QR_MAX_NAME);
            if (s.p && !(x->name = cstr(c, s)))
                return perr(c, x->name_off, QR_E_NOMEM, "out of memory");
            break;
        case 3: {
            x->id_off = value_off(c->j);
            qj_type t = peek(c);
            if (t == QJ_ERROR)
                return -1;
            if (t != QJ_NUMBER || qj_int64(c->j, &x->id) || x->id < 1 || x->id > 65535)
                return perr(c, x->id_off, QR_E_ARGS, "\"id\" must be an integer from 1 to 65535");
            break;
        }
        case 4:
            x->lc_off = off;
            if (read_bool(c, "lowercase", &x->lowercase, &off))
                return -1;
            break;
        case 5:
            x->pos_off = off;
            if (read_bool(c, "positions", &x->positions, &off))
                return -1;
            break;
        case 6:
            if (read_bool(c, "building", &x->building, &off))
                return -1;
            break;
        default:
            return -1;
        }
    }
    if (!x->col.p)
        return perr(c, x->off, QR_E_SYNTAX, "an index needs a \"column\"");
    if (x->kind < 0)
        return perr(c, x->off, QR_E_SYNTAX, "an index needs a \"kind\"");
    return 0;
}

/* Add one pending index to d (its id 0 = the next free one). */
static int add_pending(pctx *c, qr_tabdef *d, pend_ix *x)
{
    qr_err e2;
    int slot = qr_tabdef_add_index(d, x->colno, x->kind, (uint16_t)x->id, x->name, &e2);
    if (slot < 0) {
        if (strcmp(e2.code, QR_E_DATATYPE) == 0)
            return perr(c, x->kind_off, QR_E_DATATYPE, "column \"%s\" (%s) cannot have a %s index",
                        d->cols[x->colno].name, qr_type_name(d->cols[x->colno].type),
                        qr_ixkind_name(x->kind));
        return perr(c, x->off, e2.code, "%s", e2.msg);
    }
    x->slot = slot;
    qr_ixdef *ix = &d->ixs[slot];
    if (x->lowercase >= 0)
        ix->lowercase = (uint8_t)x->lowercase;
    if (x->positions >= 0)
        ix->positions = (uint8_t)x->positions;
    ix->building = x->building == 1;
    return 0;
}

static int resolve_indexes(pctx *c, qr_tabdef *d, pend_ix *px, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) { /* every check that has a position, in file order */
        pend_ix *x = &px[i];
        if ((x->colno = qr_tabdef_col(d, x->col.p, x->col.n)) < 0)
            return perr(c, x->col_off, QR_E_ARGS, "index on unknown column \"%.*s\"",
                        (int)(x->col.n > 64 ? 64 : x->col.n), x->col.p);
        if (x->kind != QR_IX_FULLTEXT && x->lowercase >= 0)
            return perr(c, x->lc_off, QR_E_ARGS, "\"lowercase\" is only for fulltext indexes");
        if (x->kind != QR_IX_FULLTEXT && x->positions >= 0)
            return perr(c, x->pos_off, QR_E_ARGS, "\"positions\" is only for fulltext indexes");
        for (uint32_t k = 0; k < i; k++) {
            const pend_ix *y = &px[k];
            if (x->id && y->id == x->id)
                return perr(c, x->id_off, QR_E_ARGS, "duplicate index id %d", (int)x->id);
            if (x->name && y->name && strcmp(x->name, y->name) == 0)
                return perr(c, x->name_off, QR_E_ARGS, "duplicate index name \"%s\"", x->name);
            if (y->colno == x->colno && y->kind == x->kind)
                return perr(c, x->off, QR_E_ARGS, "column \"%s\" has two %s indexes",
                            d->cols[x->colno].name, qr_ixkind_name(x->kind));
        }
    }
    for (int pass = 0; pass < 2; pass++) /* explicit ids first, then the next free ones */
        for (uint32_t i = 0; i < n; i++)
            if ((px[i].id != 0) == (pass == 0) && add_pending(c, d, &px[i]))
                return -1;
    if (n) { /* back to the order they were written in */
        qr_ixdef *ord = malloc(sizeof *ord * n);
        if (!ord)
            return perr(c, px[0].off, QR_E_NOMEM, "out of memory");
        for (uint32_t i = 0; i < n; i++)
            ord[i] = d->ixs[px[i].slot];
        memcpy(d->ixs, ord, sizeof *ord * n);
        free(ord);
    }
    return 0;
}

/* ---- reading: the definition ---- */

static const char *const def_keys[] = {
    "name", "columns", "sort", "catch_all", "omit_nulls", "indexes", "retention_seconds", NULL};

/* A column reference ("sort", "catch_all") that must name a column of `type`. */
static int resolve_ref(pctx *c, const qr_tabdef *d, const char *key, qr_slice ref, size_t off,
                       int type, int32_t *out)
{
    if (!ref.p)
        return 0;
    int ci = qr_tabdef_col(d, ref.p, ref.n);
    if (ci < 0)
        return perr(c, off, QR_E_ARGS, "%s column \"%.*s\" is not a column", key,
                    (int)(ref.n > 64 ? 64 : ref.n), ref.p);
    if (d->cols[ci].type != type)
        return perr(c, off, QR_E_DATATYPE, "%s column \"%s\" is %s, not %s", key, d->cols[ci].name,
                    qr_type_name(d->cols[ci].type), qr_type_name(type));
    *out = ci;
    return 0;
}

static int parse_def(pctx *c, qr_tabdef *d, pend_ix **pxp, uint32_t *npx)
{
    size_t obj, off, sort_off = 0, extra_off = 0;
    qr_slice key, s = {0}, sort = {0}, extra = {0};
    unsigned seen = 0;
    if (begin_object(c, "a table definition", &obj))
        return -1;
    for (;;) {
        int r = next_key(c, &key, &off);
        if (r <= 0) {
            if (r < 0)
                return -1;
            break;
        }
        int v = 0;
        switch (match_key(c, def_keys, key, off, &seen)) {
        case 0:
            if (read_str(c, "name", 1, &s, &off))
                return -1;
            if (s.p && (s.n == 0 || memchr(s.p, 0, s.n)))
                return perr(c, off, QR_E_ARGS, "table name \"%.*s\" is empty or holds a NUL",
                            (int)s.n, s.p);
            if (s.p && !(d->name = dup_slice(s)))
                return perr(c, off, QR_E_NOMEM, "out of memory");
            break;
        case 1:
            if (begin_array(c, "columns"))
                return -1;
            while ((r = qj_array_next(c->j)) > 0)
                if (parse_column(c, d))
                    return -1;
            if (r < 0)
                return jerr(c);
            break;
        case 2:
            if (read_str(c, "sort", 1, &sort, &sort_off))
                return -1;
            break;
        case 3:
            if (read_str(c, "catch_all", 1, &extra, &extra_off))
                return -1;
            break;
        case 4:
            if (read_bool(c, "omit_nulls", &v, &off))
                return -1;
            d->omit_nulls = (uint8_t)v;
            break;
        case 6: {
            off = value_off(c->j);
            qj_type t = peek(c);
            if (t == QJ_ERROR)
                return -1;
            if (t != QJ_NUMBER || qj_int64(c->j, &d->retention_s) || d->retention_s < 0)
                return perr(c, off, QR_E_ARGS,
                            "\"retention_seconds\" must be a whole number of seconds >= 0");
            break;
        }
        case 5:
            if (begin_array(c, "indexes"))
                return -1;
            while ((r = qj_array_next(c->j)) > 0) {
                if (*npx >= QR_MAX_INDEXES)
                    return perr(c, value_off(c->j), QR_E_TOO_LONG, "more than %d indexes",
                                QR_MAX_INDEXES);
                if (parse_index(c, &(*pxp)[(*npx)++]))
                    return -1;
            }
            if (r < 0)
                return jerr(c);
            break;
        default:
            return -1;
        }
    }
    if (resolve_ref(c, d, "sort", sort, sort_off, QT_TIMESTAMP, &d->sort_col) ||
        resolve_ref(c, d, "catch_all", extra, extra_off, QT_JSON, &d->extra_col) ||
        resolve_indexes(c, d, *pxp, *npx))
        return -1;
    char what[QR_ERR_MSG_MAX];
    where(c, obj, what, sizeof what);
    return qr_tabdef_validate(d, what, c->e);
}

qr_tabdef *qr_tabdef_parse_json(qr_json *j, const char *src, qr_err *e)
{
    pctx c = {.j = j, .src = src ? src : "definition", .e = e};
    qr_arena_init(&c.a, 4096, 0);
    uint32_t npx = 0;
    pend_ix *px = malloc(sizeof *px * QR_MAX_INDEXES);
    qr_tabdef *d = qr_tabdef_new(NULL);
    int rc = -1;
    if (!px || !d)
        qr_errf(e, QR_E_NOMEM, "%s: out of memory", c.src);
    else
        rc = parse_def(&c, d, &px, &npx);
    free(px);
    qr_arena_free(&c.a);
    if (rc) {
        qr_tabdef_free(d);
        return NULL;
    }
    return d;
}

qr_tabdef *qr_tabdef_from_json(const char *text, size_t n, const char *src, qr_err *e)
{
    qr_json j;
    qj_init(&j, text, n);
    qr_tabdef *d = qr_tabdef_parse_json(&j, src, e);
    if (d && qj_finish(&j)) {
        pctx c = {.j = &j, .src = src ? src : "definition", .e = e};
        jerr(&c);
        qr_tabdef_free(d);
        return NULL;
    }
    return d;
}
