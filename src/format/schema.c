/* schema.c - table definitions (schema.h): types, building and checking a
 * definition, and the OpenTelemetry preset. The JSON form is tabdef_json.c. */
#include "format/schema.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const type_names[QT_LAST + 1] = {
    [QT_TIMESTAMP] = "timestamp", [QT_UINT8] = "uint8",   [QT_INT32] = "int32",
    [QT_TEXT] = "text",           [QT_MAP] = "map",       [QT_BOOL] = "bool",
    [QT_INT8] = "int8",           [QT_INT16] = "int16",   [QT_INT64] = "int64",
    [QT_UINT16] = "uint16",       [QT_UINT32] = "uint32", [QT_UINT64] = "uint64",
    [QT_FLOAT64] = "float64",     [QT_JSON] = "json",
};

int qr_type_valid(int t) { return t >= 0 && t <= QT_LAST && type_names[t] != NULL; }

int qr_type_is_int(int t)
{
    return qr_type_valid(t) && t != QT_TEXT && t != QT_MAP && t != QT_JSON;
}

const char *qr_type_name(int t) { return qr_type_valid(t) ? type_names[t] : "?"; }

static int name_eq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

int qr_type_by_name(const char *s, size_t n)
{
    for (int t = 0; t <= QT_LAST; t++)
        if (type_names[t] && name_eq(s, n, type_names[t]))
            return t;
    static const struct {
        const char *alias;
        int t;
    } aliases[] = {{"string", QT_TEXT},    {"varchar", QT_TEXT},
                   {"integer", QT_INT64},  {"bigint", QT_INT64},
                   {"int", QT_INT32},      {"smallint", QT_INT16},
                   {"double", QT_FLOAT64}, {"float", QT_FLOAT64},
                   {"boolean", QT_BOOL},   {"timestamp_ns", QT_TIMESTAMP},
                   {"object", QT_JSON}};
    for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
        if (name_eq(s, n, aliases[i].alias))
            return aliases[i].t;
    return -1;
}

void qr_type_range(int t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case QT_BOOL:
        *lo = 0, *hi = 1;
        break;
    case QT_INT8:
        *lo = INT8_MIN, *hi = INT8_MAX;
        break;
    case QT_INT16:
        *lo = INT16_MIN, *hi = INT16_MAX;
        break;
    case QT_INT32:
        *lo = INT32_MIN, *hi = INT32_MAX;
        break;
    case QT_UINT8:
        *lo = 0, *hi = UINT8_MAX;
        break;
    case QT_UINT16:
        *lo = 0, *hi = UINT16_MAX;
        break;
    case QT_UINT32:
        *lo = 0, *hi = UINT32_MAX;
        break;
    default: /* int64, timestamp, and the stored domains of uint64 / float64 */
        *lo = INT64_MIN, *hi = INT64_MAX;
    }
}

int64_t qr_num_from_f64(double d)
{
    int64_t s;
    memcpy(&s, &d, sizeof s);
    if (s < 0)
        s ^= INT64_MAX; /* negative doubles: larger magnitude sorts lower */
    return s;
}

double qr_num_to_f64(int64_t s)
{
    if (s < 0)
        s ^= INT64_MAX;
    double d;
    memcpy(&d, &s, sizeof d);
    return d;
}

static const char *const tsfmt_names[] = {"rfc3339",  "epoch_s",  "epoch_ms",
                                          "epoch_us", "epoch_ns", "rfc3339_short"};

const char *qr_tsfmt_name(int f) { return f >= 0 && f <= QR_TS_LAST ? tsfmt_names[f] : "?"; }

int qr_tsfmt_by_name(const char *s, size_t n)
{
    for (int f = 0; f <= QR_TS_LAST; f++)
        if (name_eq(s, n, tsfmt_names[f]))
            return f;
    return -1;
}

int64_t qr_tsfmt_unit_ns(int f)
{
    switch (f) {
    case QR_TS_EPOCH_S:
        return 1000000000;
    case QR_TS_EPOCH_MS:
        return 1000000;
    case QR_TS_EPOCH_US:
        return 1000;
    default:
        return 1;
    }
}

static const char *const ixkind_names[] = {NULL, "fulltext", "keyword", "range", "paths"};

const char *qr_ixkind_name(int k) { return k >= 1 && k <= QR_IX_PATHS ? ixkind_names[k] : "?"; }

int qr_ixkind_by_name(const char *s, size_t n)
{
    for (int k = 1; k <= QR_IX_PATHS; k++)
        if (name_eq(s, n, ixkind_names[k]))
            return k;
    if (name_eq(s, n, "inverted"))
        return QR_IX_FULLTEXT;
    return -1;
}

/* ---- definitions ---- */
static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

qr_tabdef *qr_tabdef_new(const char *name)
{
    qr_tabdef *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->sort_col = d->extra_col = -1;
    if (name && !(d->name = strdup(name))) {
        free(d);
        return NULL;
    }
    return d;
}

void qr_tabdef_free(qr_tabdef *d)
{
    if (!d)
        return;
    for (uint32_t i = 0; i < d->ncols; i++)
        free(d->cols[i].name);
    for (uint32_t i = 0; i < d->nixs; i++)
        free(d->ixs[i].name);
    free(d->cols);
    free(d->ixs);
    free(d->name);
    free(d);
}

qr_tabdef *qr_tabdef_clone(const qr_tabdef *s)
{
    qr_tabdef *d = qr_tabdef_new(s->name);
    if (!d)
        return NULL;
    d->sort_col = s->sort_col;
    d->extra_col = s->extra_col;
    d->omit_nulls = s->omit_nulls;
    d->retention_s = s->retention_s;
    d->cols = calloc(s->ncols ? s->ncols : 1, sizeof *d->cols);
    d->ixs = calloc(s->nixs ? s->nixs : 1, sizeof *d->ixs);
    if (!d->cols || !d->ixs)
        goto fail;
    for (uint32_t i = 0; i < s->ncols; i++, d->ncols++) {
        d->cols[i] = s->cols[i];
        if (!(d->cols[i].name = strdup(s->cols[i].name)))
            goto fail;
    }
    for (uint32_t i = 0; i < s->nixs; i++, d->nixs++) {
        d->ixs[i] = s->ixs[i];
        if (s->ixs[i].name && !(d->ixs[i].name = strdup(s->ixs[i].name)))
            goto fail;
    }
    return d;
fail:
    qr_tabdef_free(d);
    return NULL;
}

int qr_col_name_ok(const char *name, size_t n)
{
    if (n == 0 || n > QR_MAX_NAME)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            return 0;
    return 1;
}

int qr_tabdef_col(const qr_tabdef *d, const char *name, size_t n)
{
    for (uint32_t i = 0; i < d->ncols; i++)
        if (strlen(d->cols[i].name) == n && strncasecmp(d->cols[i].name, name, n) == 0)
            return (int)i;
    return -1;
}

int qr_tabdef_add_col(qr_tabdef *d, const char *name, size_t n, int type, int nullable, qr_err *e)
{
    if (!qr_col_name_ok(name, n))
        return qr_errf(e, QR_E_ARGS, "column name \"%.*s\" is not 1-%d printable bytes",
                       (int)(n > 64 ? 64 : n), name, QR_MAX_NAME);
    if (!qr_type_valid(type))
        return qr_errf(e, QR_E_ARGS, "column %.*s: unknown type %d", (int)n, name, type);
    if (qr_tabdef_col(d, name, n) >= 0)
        return qr_errf(e, QR_E_ARGS, "column \"%.*s\" defined twice (names ignore case)", (int)n,
                       name);
    if (d->ncols >= QR_MAX_COLUMNS)
        return qr_errf(e, QR_E_TOO_LONG, "more than %d columns", QR_MAX_COLUMNS);
    qr_coldef *nc = realloc(d->cols, sizeof *nc * (d->ncols + 1));
    if (!nc)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    d->cols = nc;
    qr_coldef *c = &d->cols[d->ncols];
    memset(c, 0, sizeof *c);
    if (!(c->name = dup_n(name, n)))
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    c->type = (uint8_t)type;
    c->nullable = nullable ? 1 : 0;
    c->tsfmt = QR_TS_RFC3339;
    return (int)d->ncols++;
}

int qr_tabdef_index_by_name(const qr_tabdef *d, const char *name, size_t n)
{
    for (uint32_t i = 0; i < d->nixs; i++)
        if (d->ixs[i].name && strlen(d->ixs[i].name) == n &&
            strncasecmp(d->ixs[i].name, name, n) == 0)
            return (int)i;
    return -1;
}

int qr_tabdef_index_any(const qr_tabdef *d, int col, int kind)
{
    for (uint32_t i = 0; i < d->nixs; i++)
        if (d->ixs[i].col == col && d->ixs[i].kind == kind)
            return (int)i;
    return -1;
}

int qr_tabdef_index_on(const qr_tabdef *d, int col, int kind)
{
    int i = qr_tabdef_index_any(d, col, kind);
    return i >= 0 && !d->ixs[i].building ? i : -1;
}

const qr_ixdef *qr_tabdef_index_by_id(const qr_tabdef *d, uint16_t id)
{
    for (uint32_t i = 0; i < d->nixs; i++)
        if (d->ixs[i].id == id)
            return &d->ixs[i];
    return NULL;
}

/* Which index kinds a column type takes. */
static int kind_fits(int kind, int type)
{
    switch (kind) {
    case QR_IX_FULLTEXT:
        return type == QT_TEXT || type == QT_JSON || type == QT_MAP;
    case QR_IX_KEYWORD:
        return type == QT_TEXT;
    case QR_IX_RANGE:
        return qr_type_is_int(type);
    case QR_IX_PATHS:
        return type == QT_JSON || type == QT_MAP;
    default:
        return 0;
    }
}

int qr_tabdef_add_index(qr_tabdef *d, int col, int kind, uint16_t id, const char *name, qr_err *e)
{
    if (col < 0 || (uint32_t)col >= d->ncols)
        return qr_errf(e, QR_E_ARGS, "index on column %d: no such column", col);
    const qr_coldef *c = &d->cols[col];
    if (!kind_fits(kind, c->type))
        return qr_errf(e, QR_E_DATATYPE, "column %s: a %s column cannot have a %s index", c->name,
                       qr_type_name(c->type), qr_ixkind_name(kind));
    if (qr_tabdef_index_any(d, col, kind) >= 0)
        return qr_errf(e, QR_E_ARGS, "column %s has two %s indexes", c->name, qr_ixkind_name(kind));
    if (d->nixs >= QR_MAX_INDEXES)
        return qr_errf(e, QR_E_TOO_LONG, "more than %d indexes", QR_MAX_INDEXES);
    if (id == 0) { /* one above the largest id in use */
        uint32_t next = 1;
        for (uint32_t i = 0; i < d->nixs; i++)
            if (d->ixs[i].id >= next)
                next = (uint32_t)d->ixs[i].id + 1;
        if (next > UINT16_MAX)
            return qr_errf(e, QR_E_TOO_LONG, "index ids exhausted");
        id = (uint16_t)next;
    } else if (qr_tabdef_index_by_id(d, id)) {
        return qr_errf(e, QR_E_ARGS, "index id %u used twice", id);
    }
    if (name && qr_tabdef_index_by_name(d, name, strlen(name)) >= 0)
        return qr_errf(e, QR_E_ARGS, "index name \"%s\" used twice", name);
    if (name) { /* a query's NAME: would find the index, not that column */
        int other = qr_tabdef_col(d, name, strlen(name));
        if (other >= 0 && other != col)
            return qr_errf(e, QR_E_ARGS, "index name \"%s\" is the name of another column", name);
    }
    if (name && !qr_col_name_ok(name, strlen(name)))
        return qr_errf(e, QR_E_ARGS, "index name \"%.64s\" is not 1-%d printable bytes", name,
                       QR_MAX_NAME);
    qr_ixdef *ni = realloc(d->ixs, sizeof *ni * (d->nixs + 1));
    if (!ni)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    d->ixs = ni;
    qr_ixdef *x = &d->ixs[d->nixs];
    memset(x, 0, sizeof *x);
    x->id = id;
    x->col = (uint16_t)col;
    x->kind = (uint8_t)kind;
    x->lowercase = 1;
    x->positions = kind == QR_IX_FULLTEXT;
    if (name && !(x->name = strdup(name)))
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    return (int)d->nixs++;
}

int qr_tabdef_validate(const qr_tabdef *d, const char *what, qr_err *e)
{
    if (d->ncols == 0)
        return qr_errf(e, QR_E_ARGS, "%s: no columns", what);
    for (uint32_t i = 0; i < d->ncols; i++) {
        const qr_coldef *c = &d->cols[i];
        if (!qr_col_name_ok(c->name, strlen(c->name)))
            return qr_errf(e, QR_E_ARGS, "%s: column %u has a bad name", what, i);
        if (!qr_type_valid(c->type))
            return qr_errf(e, QR_E_ARGS, "%s: column %s: unknown type %u", what, c->name, c->type);
        if (c->tsfmt > QR_TS_LAST || (c->type != QT_TIMESTAMP && c->tsfmt))
            return qr_errf(e, QR_E_ARGS, "%s: column %s: a time format on a %s column", what,
                           c->name, qr_type_name(c->type));
        for (uint32_t k = 0; k < i; k++)
            if (strcasecmp(d->cols[k].name, c->name) == 0)
                return qr_errf(e, QR_E_ARGS, "%s: column \"%s\" defined twice (names ignore case)",
                               what, c->name);
    }
    if (d->sort_col >= 0 &&
        ((uint32_t)d->sort_col >= d->ncols || d->cols[d->sort_col].type != QT_TIMESTAMP))
        return qr_errf(e, QR_E_DATATYPE, "%s: the sort column must be a timestamp column", what);
    if (d->sort_col < -1 || d->extra_col < -1)
        return qr_errf(e, QR_E_ARGS, "%s: bad sort or catch-all column", what);
    if (d->extra_col >= 0 &&
        ((uint32_t)d->extra_col >= d->ncols || d->cols[d->extra_col].type != QT_JSON))
        return qr_errf(e, QR_E_DATATYPE, "%s: the catch-all column must be a json column", what);
    if (d->nixs > QR_MAX_INDEXES)
        return qr_errf(e, QR_E_TOO_LONG, "%s: more than %d indexes", what, QR_MAX_INDEXES);
    for (uint32_t i = 0; i < d->nixs; i++) {
        const qr_ixdef *x = &d->ixs[i];
        if (x->col >= d->ncols)
            return qr_errf(e, QR_E_ARGS, "%s: index %u on a missing column", what, x->id);
        const qr_coldef *c = &d->cols[x->col];
        if (!kind_fits(x->kind, c->type))
            return qr_errf(e, QR_E_DATATYPE, "%s: column %s: a %s column cannot have a %s index",
                           what, c->name, qr_type_name(c->type), qr_ixkind_name(x->kind));
        if (x->id == 0)
            return qr_errf(e, QR_E_ARGS, "%s: index id 0 is reserved", what);
        if (x->name && !qr_col_name_ok(x->name, strlen(x->name)))
            return qr_errf(e, QR_E_ARGS, "%s: index name \"%.64s\" is not 1-%d printable bytes",
                           what, x->name, QR_MAX_NAME);
        if (x->name) {
            int other = qr_tabdef_col(d, x->name, strlen(x->name));
            if (other >= 0 && other != x->col)
                return qr_errf(e, QR_E_ARGS, "%s: index name \"%s\" is the name of another column",
                               what, x->name);
        }
        if (x->kind != QR_IX_FULLTEXT && (x->positions || !x->lowercase))
            return qr_errf(e, QR_E_ARGS, "%s: column %s: analyzer options on a %s index", what,
                           c->name, qr_ixkind_name(x->kind));
        for (uint32_t k = 0; k < i; k++) {
            const qr_ixdef *y = &d->ixs[k];
            if (y->id == x->id)
                return qr_errf(e, QR_E_ARGS, "%s: index id %u used twice", what, x->id);
            if (y->col == x->col && y->kind == x->kind)
                return qr_errf(e, QR_E_ARGS, "%s: column %s has two %s indexes", what, c->name,
                               qr_ixkind_name(x->kind));
            if (x->name && y->name && strcasecmp(x->name, y->name) == 0)
                return qr_errf(e, QR_E_ARGS, "%s: index name \"%s\" used twice", what, x->name);
        }
    }
    return 0;
}

static int str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int qr_tabdef_equal(const qr_tabdef *a, const qr_tabdef *b)
{
    if (a->ncols != b->ncols || a->nixs != b->nixs || a->sort_col != b->sort_col ||
        a->extra_col != b->extra_col || a->omit_nulls != b->omit_nulls)
        return 0;
    for (uint32_t i = 0; i < a->ncols; i++) {
        const qr_coldef *x = &a->cols[i], *y = &b->cols[i];
        if (strcmp(x->name, y->name) || x->type != y->type || x->nullable != y->nullable ||
            x->tsfmt != y->tsfmt)
            return 0;
    }
    for (uint32_t i = 0; i < a->nixs; i++) {
        const qr_ixdef *x = &a->ixs[i], *y = &b->ixs[i];
        if (x->id != y->id || x->col != y->col || x->kind != y->kind ||
            x->lowercase != y->lowercase || x->positions != y->positions ||
            !str_eq(x->name, y->name))
            return 0;
    }
    return 1;
}

/* ---- OpenTelemetry ---- */
static const struct {
    const char *name;
    uint8_t type;
} otel_cols[QR_OTEL_NCOLS] = {
    [COL_TIMESTAMP] = {"Timestamp", QT_TIMESTAMP},
    [COL_TRACE_ID] = {"TraceId", QT_TEXT},
    [COL_SPAN_ID] = {"SpanId", QT_TEXT},
    [COL_TRACE_FLAGS] = {"TraceFlags", QT_UINT8},
    [COL_SEVERITY_TEXT] = {"SeverityText", QT_TEXT},
    [COL_SEVERITY_NUMBER] = {"SeverityNumber", QT_INT32},
    [COL_SERVICE_NAME] = {"ServiceName", QT_TEXT},
    [COL_BODY] = {"Body", QT_TEXT},
    [COL_RESOURCE_SCHEMA_URL] = {"ResourceSchemaUrl", QT_TEXT},
    [COL_RESOURCE_ATTRIBUTES] = {"ResourceAttributes", QT_MAP},
    [COL_SCOPE_SCHEMA_URL] = {"ScopeSchemaUrl", QT_TEXT},
    [COL_SCOPE_NAME] = {"ScopeName", QT_TEXT},
    [COL_SCOPE_VERSION] = {"ScopeVersion", QT_TEXT},
    [COL_SCOPE_ATTRIBUTES] = {"ScopeAttributes", QT_MAP},
    [COL_LOG_ATTRIBUTES] = {"LogAttributes", QT_MAP},
};

qr_tabdef *qr_tabdef_otel(const char *name)
{
    qr_tabdef *d = qr_tabdef_new(name);
    if (!d)
        return NULL;
    for (int c = 0; c < QR_OTEL_NCOLS; c++)
        if (qr_tabdef_add_col(d, otel_cols[c].name, strlen(otel_cols[c].name), otel_cols[c].type, 1,
                              NULL) != c)
            goto fail;
    d->sort_col = COL_TIMESTAMP;
    static const struct {
        int col, kind;
        const char *alias;
    } ix[] = {{COL_BODY, QR_IX_FULLTEXT, "body"},
              {COL_SERVICE_NAME, QR_IX_KEYWORD, "service"},
              {COL_SEVERITY_TEXT, QR_IX_KEYWORD, "severity"},
              {COL_SCOPE_NAME, QR_IX_KEYWORD, "scope"},
              {COL_TRACE_ID, QR_IX_KEYWORD, "trace"},
              {COL_SEVERITY_NUMBER, QR_IX_RANGE, "sevnum"}};
    for (unsigned i = 0; i < sizeof ix / sizeof *ix; i++)
        if (qr_tabdef_add_index(d, ix[i].col, ix[i].kind, (uint16_t)(i + 1), ix[i].alias, NULL) < 0)
            goto fail;
    return d;
fail:
    qr_tabdef_free(d);
    return NULL;
}

int qr_keys_are_otel(const qr_slice *keys, size_t n)
{
    if (n != QR_OTEL_NCOLS)
        return 0;
    unsigned seen = 0;
    for (size_t i = 0; i < n; i++) {
        int hit = -1;
        for (int c = 0; c < QR_OTEL_NCOLS; c++)
            if (name_eq(keys[i].p, keys[i].n, otel_cols[c].name))
                hit = c;
        if (hit < 0 || (seen & (1u << hit)))
            return 0;
        seen |= 1u << hit;
    }
    return 1;
}
