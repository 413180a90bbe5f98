/* ndjson.c - NDJSON line to batch row (see ndjson.h). Strings of text
 * columns stay zero-copy slices of the line unless they carry escapes;
 * json values, maps and the catch-all object are re-serialised into the
 * batch arena. */
#include "ingest/ndjson.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/timefmt.h"

int qr_ndjson_init(qr_ndjson *p, const qr_tabdef *def, qr_err *e)
{
    memset(p, 0, sizeof *p);
    p->def = def;
    qr_buf_init(&p->scratch);
    qr_buf_init(&p->val);
    qr_buf_init(&p->extra);
    qr_strmap_init(&p->names);
    size_t bytes = 0;
    for (uint32_t c = 0; c < def->ncols; c++)
        bytes += strlen(def->cols[c].name);
    p->seen = calloc(def->ncols ? def->ncols : 1, sizeof *p->seen);
    p->notnull = calloc(def->ncols ? def->ncols : 1, sizeof *p->notnull);
    p->lower = malloc(bytes ? bytes : 1);
    if (!p->seen || !p->notnull || !p->lower)
        goto oom;
    char *o = p->lower;
    for (uint32_t c = 0; c < def->ncols; c++) {
        size_t n = strlen(def->cols[c].name);
        for (size_t i = 0; i < n; i++)
            o[i] = (char)tolower((unsigned char)def->cols[c].name[i]);
        int added;
        if (qr_strmap_put(&p->names, o, n, &added) != (int64_t)c)
            goto oom; /* names are unique ignoring case (validated) */
        o += n;
        if (!def->cols[c].nullable)
            p->notnull[p->nnotnull++] = c;
    }
    return 0;
oom:
    qr_ndjson_free(p);
    return qr_errf(e, QR_E_NOMEM, "out of memory preparing the NDJSON parser");
}

void qr_ndjson_free(qr_ndjson *p)
{
    qr_buf_free(&p->scratch);
    qr_buf_free(&p->val);
    qr_buf_free(&p->extra);
    qr_strmap_free(&p->names);
    free(p->seen);
    free(p->notnull);
    free(p->lower);
    p->seen = p->notnull = NULL;
    p->lower = NULL;
}

static int json_fail(qr_json *j, qr_err *e)
{
    if (j->oom) /* not the line's fault: the ingest must stop, not skip it */
        return qr_errf(e, QR_E_NOMEM, "byte %zu: out of memory decoding a string", j->err_off + 1);
    return qr_errf(e, QR_E_INVALID_TEXT, "byte %zu: %s", j->err_off + 1,
                   j->err_why ? j->err_why : "invalid JSON");
}

/* A value the parser refused (a number that is not an integer, too large):
 * the message names the column as well as the byte. */
static int value_fail(qr_json *j, const qr_coldef *cd, qr_err *e)
{
    if (j->oom)
        return json_fail(j, e);
    return qr_errf(e, QR_E_INVALID_TEXT, "byte %zu: column %s: %s", j->err_off + 1, cd->name,
                   j->err_why ? j->err_why : "invalid JSON");
}

static const char *type_name(qj_type t)
{
    switch (t) {
    case QJ_NULL:
        return "null";
    case QJ_FALSE:
    case QJ_TRUE:
        return "boolean";
    case QJ_NUMBER:
        return "number";
    case QJ_STRING:
        return "string";
    case QJ_OBJECT:
        return "object";
    case QJ_ARRAY:
        return "array";
    default:
        return "nothing";
    }
}

static size_t at_of(const qr_json *j) { return (size_t)(j->p - j->s) + 1; }

static int wrong_type(qr_json *j, const char *col, qj_type got, const char *want, qr_err *e)
{
    return qr_errf(e, QR_E_DATATYPE, "byte %zu: column %s: expected %s, got %s", at_of(j), col,
                   want, type_name(got));
}

static int nomem(qr_err *e) { return qr_errf(e, QR_E_NOMEM, "out of memory parsing a row"); }

/* Copy a finished buffer into the batch arena as the column value. */
static int keep(qr_batch *b, const qr_buf *s, const char *prefix, size_t plen, qr_slice *out,
                qr_err *e)
{
    char *d = qr_arena_alloc(&b->arena, plen + s->len + 1);
    if (!d || s->oom)
        return nomem(e);
    if (plen)
        memcpy(d, prefix, plen);
    if (s->len)
        memcpy(d + plen, s->p, s->len);
    out->p = d;
    out->n = plen + s->len;
    return 0;
}

/* A map object into map text (batch.h). */
static int parse_map(qr_ndjson *p, qr_batch *b, qr_json *j, qr_slice *out, qr_err *e)
{
    qr_buf *s = &p->scratch;
    qr_buf_clear(s);
    if (qj_object_begin(j) != 0)
        return json_fail(j, e);
    uint64_t npairs = 0;
    for (;;) {
        qr_slice k, v;
        int r = qj_object_next(j, &k, &b->arena);
        if (r < 0)
            return json_fail(j, e);
        if (r == 0)
            break;
        qj_type t = qj_peek(j);
        if (t == QJ_ERROR || t == QJ_END)
            return json_fail(j, e);
        qr_buf_put_lenbytes(s, k.p, k.n);
        if (t == QJ_STRING) {
            if (qj_string(j, &v, &b->arena) != 0)
                return json_fail(j, e);
            qr_buf_put_varint(s, (uint64_t)v.n << 1);
            qr_buf_put(s, v.p, v.n);
        } else { /* a typed value: its canonical JSON text */
            qr_buf_clear(&p->val);
            if (qj_copy(j, &p->val, &b->arena) != 0)
                return json_fail(j, e);
            qr_buf_put_varint(s, (uint64_t)p->val.len << 1 | 1);
            qr_buf_put(s, p->val.p, p->val.len);
        }
        npairs++;
    }
    unsigned char hdr[10];
    qr_buf h = {hdr, 0, sizeof hdr, 0};
    qr_buf_put_varint(&h, npairs);
    return keep(b, s, (const char *)hdr, h.len, out, e);
}

/* An integer that may be as large as 2^64 - 1 (uint64 columns). */
static int parse_u64(qr_json *j, uint64_t *v, const char *col, qr_err *e)
{
    size_t at = at_of(j);
    qr_slice raw;
    if (qj_number(j, &raw) != 0)
        return json_fail(j, e);
    uint64_t x = 0;
    for (size_t i = 0; i < raw.n; i++) {
        unsigned d = (unsigned)(raw.p[i] - '0');
        if (d > 9)
            return qr_errf(e, raw.p[i] == '-' ? QR_E_OUT_OF_RANGE : QR_E_DATATYPE,
                           "byte %zu: column %s: %s", at, col,
                           raw.p[i] == '-' ? "negative value for an unsigned column"
                                           : "expected an integer");
        if (x > (UINT64_MAX - d) / 10)
            return qr_errf(e, QR_E_OUT_OF_RANGE, "byte %zu: column %s: %.*s out of range of uint64",
                           at, col, (int)(raw.n > 40 ? 40 : raw.n), raw.p);
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

static int parse_f64(qr_json *j, double *v, const char *col, qr_err *e)
{
    size_t at = at_of(j);
    qr_slice raw;
    if (qj_number(j, &raw) != 0)
        return json_fail(j, e);
    char tmp[512];
    if (raw.n >= sizeof tmp)
        return qr_errf(e, QR_E_OUT_OF_RANGE, "byte %zu: column %s: number of %zu digits", at, col,
                       raw.n);
    memcpy(tmp, raw.p, raw.n);
    tmp[raw.n] = 0;
    double d = strtod(tmp, NULL);
    if (!isfinite(d))
        return qr_errf(e, QR_E_OUT_OF_RANGE, "byte %zu: column %s: %s out of range of float64", at,
                       col, tmp);
    *v = d;
    return 0;
}

static const char *const ts_want[] = {
    "an RFC 3339 string or integer nanoseconds", "an RFC 3339 string or integer seconds",
    "an RFC 3339 string or integer milliseconds", "an RFC 3339 string or integer microseconds",
    "an RFC 3339 string or integer nanoseconds"};

/* One value of an integer-stored column into the stored domain. */
static int parse_int_value(qr_json *j, qr_batch *b, const qr_coldef *cd, qj_type t, int64_t *out,
                           qr_err *e)
{
    switch (cd->type) {
    case QT_TIMESTAMP: {
        if (t == QJ_STRING) {
            qr_slice s;
            size_t at = at_of(j);
            if (qj_string(j, &s, &b->arena) != 0)
                return json_fail(j, e);
            const char *why;
            if (qr_time_parse(s.p, s.n, out, &why) != 0)
                return qr_errf(e, QR_E_INVALID_TEXT, "byte %zu: column %s: %s", at, cd->name,
                               why);
            return 0;
        }
        if (t != QJ_NUMBER)
            return wrong_type(j, cd->name, t, ts_want[cd->tsfmt <= QR_TS_EPOCH_NS ? cd->tsfmt : 0],
                              e);
        size_t at = at_of(j);
        int64_t x;
        if (qj_int64(j, &x) != 0)
            return value_fail(j, cd, e);
        int64_t unit = qr_tsfmt_unit_ns(cd->tsfmt);
        if (x > INT64_MAX / unit || x < INT64_MIN / unit)
            return qr_errf(e, QR_E_OUT_OF_RANGE, "byte %zu: column %s: %lld %s is out of range",
                           at, cd->name, (long long)x, qr_tsfmt_name(cd->tsfmt));
        *out = x * unit;
        return 0;
    }
    case QT_BOOL: {
        if (t != QJ_TRUE && t != QJ_FALSE)
            return wrong_type(j, cd->name, t, "true or false", e);
        int v;
        if (qj_bool(j, &v) != 0)
            return json_fail(j, e);
        *out = v;
        return 0;
    }
    case QT_FLOAT64: {
        if (t != QJ_NUMBER)
            return wrong_type(j, cd->name, t, "a number", e);
        double d = 0;
        if (parse_f64(j, &d, cd->name, e) != 0)
            return -1;
        *out = qr_num_from_f64(d);
        return 0;
    }
    case QT_UINT64: {
        if (t != QJ_NUMBER)
            return wrong_type(j, cd->name, t, "an integer", e);
        uint64_t u = 0;
        if (parse_u64(j, &u, cd->name, e) != 0)
            return -1;
        *out = qr_num_from_u64(u);
        return 0;
    }
    default: {
        if (t != QJ_NUMBER)
            return wrong_type(j, cd->name, t, "an integer", e);
        size_t at = at_of(j);
        int64_t x, lo, hi;
        if (qj_int64(j, &x) != 0)
            return value_fail(j, cd, e);
        qr_type_range(cd->type, &lo, &hi);
        if (x < lo || x > hi) {
            if (cd->type == QT_INT32)
                return qr_errf(e, QR_E_OUT_OF_RANGE, "byte %zu: column %s: %lld out of range of int32",
                               at, cd->name, (long long)x);
            return qr_errf(e, QR_E_OUT_OF_RANGE, "byte %zu: column %s: %lld out of range %lld..%lld",
                           at, cd->name, (long long)x, (long long)lo, (long long)hi);
        }
        *out = x;
        return 0;
    }
    }
}

/* Column of a key: the one after the previous key's first (keys usually
 * come in column order), else by lowercased name. -1 = not a column. */
static int find_col(qr_ndjson *p, const qr_slice *key, int prev)
{
    const qr_tabdef *d = p->def;
    uint32_t guess = (uint32_t)(prev + 1);
    if (guess < d->ncols) {
        const char *nm = d->cols[guess].name;
        if (strlen(nm) == key->n && memcmp(nm, key->p, key->n) == 0)
            return (int)guess;
    }
    if (key->n > QR_MAX_NAME)
        return -1;
    char low[QR_MAX_NAME];
    for (size_t i = 0; i < key->n; i++)
        low[i] = (char)tolower((unsigned char)key->p[i]);
    int64_t c = qr_strmap_get(&p->names, low, key->n);
    return c < 0 ? -1 : (int)c;
}

int qr_ndjson_parse(qr_ndjson *p, qr_batch *b, const char *line, size_t n, qr_err *e)
{
    const qr_tabdef *def = p->def;
    qr_json j;
    qj_init(&j, line, n);
    qj_type t = qj_peek(&j);
    if (t == QJ_END)
        return 1;
    if (t != QJ_OBJECT) {
        if (t == QJ_ERROR)
            return json_fail(&j, e);
        return qr_errf(e, QR_E_DATATYPE, "byte %zu: expected a JSON object, got %s", at_of(&j),
                       type_name(t));
    }
    if (b->nrows >= b->cap)
        return qr_errf(e, QR_E_INTERNAL, "batch full (%u rows)", b->cap);
    uint32_t row = qr_batch_add_null_row(b);
    if (++p->stamp == 0) { /* wrapped: forget every column's stamp */
        memset(p->seen, 0, sizeof *p->seen * (def->ncols ? def->ncols : 1));
        p->stamp = 1;
    }
    uint64_t bytes = 0;
    int prev = -1, nextra = 0;
    qr_buf_clear(&p->extra);
    if (qj_object_begin(&j) != 0)
        goto json_bad;
    for (;;) {
        qr_slice key;
        const char *q = j.p; /* where the key starts, for messages */
        while (q < j.end && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n' || *q == ','))
            q++;
        size_t key_at = (size_t)(q - j.s) + 1;
        int r = qj_object_next(&j, &key, &b->arena);
        if (r < 0)
            goto json_bad;
        if (r == 0)
            break;
        int col = find_col(p, &key, prev);
        if (col == def->extra_col)
            col = -1; /* the catch-all is not a key of its own: see ndjson.h */
        if (col < 0) {
            if (def->extra_col < 0) {
                qr_errf(e, QR_E_UNDEFINED_COLUMN, "byte %zu: unknown column \"%.*s\"", key_at,
                        (int)(key.n > 64 ? 64 : key.n), key.p);
                goto bad;
            }
            qr_buf_put_u8(&p->extra, nextra++ ? ',' : '{');
            qj_write_string(&p->extra, key.p, key.n);
            qr_buf_put_u8(&p->extra, ':');
            if (qj_copy(&j, &p->extra, &b->arena) != 0)
                goto json_bad;
            continue;
        }
        prev = col;
        const qr_coldef *cd = &def->cols[col];
        if (p->seen[col] == p->stamp) {
            qr_errf(e, QR_E_INVALID_TEXT, "byte %zu: duplicate column %s", key_at, cd->name);
            goto bad;
        }
        p->seen[col] = p->stamp;
        qr_colvec *v = &b->cols[col];
        t = qj_peek(&j);
        if (t == QJ_ERROR || t == QJ_END)
            goto json_bad;
        if (t == QJ_NULL) {
            if (qj_null(&j) != 0)
                goto json_bad;
            continue;
        }
        if (v->ints) {
            if (parse_int_value(&j, b, cd, t, &v->ints[row], e) != 0)
                goto bad;
            v->isnull[row] = 0;
            continue;
        }
        switch (cd->type) {
        case QT_TEXT:
            if (t != QJ_STRING) {
                wrong_type(&j, cd->name, t, "a string", e);
                goto bad;
            }
            if (qj_string(&j, &v->strs[row], &b->arena) != 0)
                goto json_bad;
            break;
        case QT_MAP:
            if (t != QJ_OBJECT) {
                wrong_type(&j, cd->name, t, "an object", e);
                goto bad;
            }
            if (parse_map(p, b, &j, &v->strs[row], e) != 0)
                goto bad;
            break;
        default: /* QT_JSON */
            qr_buf_clear(&p->val);
            if (qj_copy(&j, &p->val, &b->arena) != 0)
                goto json_bad;
            if (keep(b, &p->val, NULL, 0, &v->strs[row], e) != 0)
                goto bad;
        }
        bytes += v->strs[row].n;
    }
    if (qj_finish(&j) != 0)
        goto json_bad;
    if (nextra) {
        qr_buf_put_u8(&p->extra, '}');
        if (keep(b, &p->extra, NULL, 0, &b->cols[def->extra_col].strs[row], e) != 0)
            goto bad;
        bytes += p->extra.len;
    }
    for (uint32_t i = 0; i < p->nnotnull; i++) {
        uint32_t c = p->notnull[i];
        const qr_colvec *v = &b->cols[c];
        if (v->ints ? v->isnull[row] : v->strs[row].p == NULL) {
            qr_errf(e, QR_E_NOT_NULL, "byte 1: column %s: NULL (or missing) in a NOT NULL column",
                    def->cols[c].name);
            goto bad;
        }
    }
    b->payload_bytes += bytes + 32;
    return 0;
json_bad:
    json_fail(&j, e);
bad:
    qr_batch_drop_last(b);
    return -1;
}
