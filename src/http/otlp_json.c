/* otlp_json.c - OTLP/HTTP logs in JSON (application/json): the protobuf
 * JSON mapping of ExportLogsServiceRequest as OTLP specifies it
 * (lowerCamelCase names, snake_case accepted too; traceId and spanId in
 * hex, not base64; 64-bit integers as strings or numbers; enums as numbers
 * or names; unknown fields ignored), read with the zero-copy parser
 * (util/json.h) in place. Members may come in any order: the parts of a
 * ResourceLogs / ScopeLogs that name the records' context (resource,
 * scope, schemaUrl) are read before its records, by a second pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_int.h"
#include "util/json.h"

#define MAX_DEPTH 32

typedef struct jx {
    qr_json j;
    qr_arena a;
    qr_err *e;
    qr_buf tmp;
} jx;

static int key_is(qr_slice k, const char *camel, const char *snake)
{
    return (k.n == strlen(camel) && !memcmp(k.p, camel, k.n)) ||
           (snake && k.n == strlen(snake) && !memcmp(k.p, snake, k.n));
}

static int fail(jx *x, const char *what)
{
    return qr_errf(x->e, QR_E_INVALID_TEXT, "OTLP JSON: %s at byte %zu", what,
                   x->j.err_why ? x->j.err_off : (size_t)(x->j.p - x->j.s));
}

/* An integer given as a number or a decimal string (uint64 range). */
static int json_u64(jx *x, uint64_t *v, int *neg)
{
    qr_slice s;
    *neg = 0;
    qj_type t = qj_peek(&x->j);
    if (t == QJ_NUMBER) {
        if (qj_number(&x->j, &s) != 0)
            return -1;
    } else if (t == QJ_STRING) {
        if (qj_string(&x->j, &s, &x->a) != 0)
            return -1;
    } else if (t == QJ_NULL) {
        *v = 0;
        return qj_null(&x->j);
    } else {
        return -1;
    }
    size_t i = 0;
    if (i < s.n && s.p[i] == '-') {
        *neg = 1;
        i++;
    }
    if (i == s.n)
        return -1;
    uint64_t r = 0;
    for (; i < s.n; i++) {
        if (s.p[i] < '0' || s.p[i] > '9' || r > (UINT64_MAX - (uint64_t)(s.p[i] - '0')) / 10)
            return -1;
        r = r * 10 + (uint64_t)(s.p[i] - '0');
    }
    *v = r;
    return 0;
}

static int json_i64(jx *x, int64_t *v)
{
    uint64_t u;
    int neg;
    if (json_u64(x, &u, &neg) != 0 || u > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
        return -1;
    *v = neg ? (int64_t)(0 - u) : (int64_t)u;
    return 0;
}

static int json_str(jx *x, qr_buf *out)
{
    qr_slice s;
    qr_buf_clear(out);
    if (qj_peek(&x->j) == QJ_NULL)
        return qj_null(&x->j);
    if (qj_string(&x->j, &s, &x->a) != 0)
        return -1;
    qr_buf_put(out, s.p, s.n);
    return 0;
}

static int any_value(jx *x, qr_buf *o, int typed, int depth);

/* {"values":[{"key":..,"value":..}...]} (kvlist) or [..] of KeyValue, as
 * a JSON object of typed values. */
static int kv_array_json(jx *x, qr_buf *o, int depth)
{
    qr_buf_put_u8(o, '{');
    int r, first = 1;
    if (qj_array_begin(&x->j) != 0)
        return -1;
    while ((r = qj_array_next(&x->j)) == 1) {
        qr_slice k, key = {"", 0};
        qr_buf val;
        qr_buf_init(&val);
        int m, ok = qj_object_begin(&x->j) == 0;
        while (ok && (m = qj_object_next(&x->j, &k, &x->a)) == 1) {
            if (key_is(k, "key", NULL))
                ok = qj_string(&x->j, &key, &x->a) == 0;
            else if (key_is(k, "value", NULL)) {
                qr_buf_clear(&val);
                ok = any_value(x, &val, 1, depth + 1) == 0;
            } else
                ok = qj_skip(&x->j) == 0;
        }
        if (!ok || m != 0) {
            qr_buf_free(&val);
            return -1;
        }
        if (!first)
            qr_buf_put_u8(o, ',');
        first = 0;
        qj_write_string(o, key.p, key.n);
        qr_buf_put_u8(o, ':');
        if (val.len)
            qr_buf_put(o, val.p, val.len);
        else
            qr_buf_put(o, "null", 4);
        qr_buf_free(&val);
    }
    qr_buf_put_u8(o, '}');
    return r;
}

/* An AnyValue object into o: its AsString text (typed 0) or its typed
 * JSON (typed 1, inside arrays and maps). An empty AnyValue is "" / null. */
static int any_value(jx *x, qr_buf *o, int typed, int depth)
{
    if (depth > MAX_DEPTH)
        return -1;
    if (qj_peek(&x->j) == QJ_NULL)
        return qj_null(&x->j);
    if (qj_object_begin(&x->j) != 0)
        return -1;
    qr_slice k, s;
    int m, set = 0;
    char num[48];
    while ((m = qj_object_next(&x->j, &k, &x->a)) == 1) {
        set = 1;
        if (key_is(k, "stringValue", "string_value")) {
            if (qj_string(&x->j, &s, &x->a) != 0)
                return -1;
            if (typed)
                qj_write_string(o, s.p, s.n);
            else
                qr_buf_put(o, s.p, s.n);
        } else if (key_is(k, "boolValue", "bool_value")) {
            int b;
            if (qj_bool(&x->j, &b) != 0)
                return -1;
            qr_buf_put(o, b ? "true" : "false", b ? 4 : 5);
        } else if (key_is(k, "intValue", "int_value")) {
            int64_t v;
            if (json_i64(x, &v) != 0)
                return -1;
            snprintf(num, sizeof num, "%lld", (long long)v);
            qr_buf_put(o, num, strlen(num));
        } else if (key_is(k, "doubleValue", "double_value")) {
            double d;
            if (qj_peek(&x->j) == QJ_STRING) { /* "NaN", "Infinity", "-Infinity" */
                if (qj_string(&x->j, &s, &x->a) != 0)
                    return -1;
                d = s.n && s.p[0] == 'N'   ? 0.0 / 0.0
                    : s.n && s.p[0] == '-' ? -1.0 / 0.0
                                           : 1.0 / 0.0;
            } else {
                if (qj_number(&x->j, &s) != 0 || s.n >= sizeof num)
                    return -1;
                memcpy(num, s.p, s.n);
                num[s.n] = 0;
                d = strtod(num, NULL);
            }
            qh_fmt_double(d, num, sizeof num);
            if (typed && (num[0] == 'N' || num[1] == 'I'))
                qj_write_string(o, num, strlen(num));
            else
                qr_buf_put(o, num, strlen(num));
        } else if (key_is(k, "bytesValue", "bytes_value")) {
            if (qj_string(&x->j, &s, &x->a) != 0)
                return -1;
            if (typed)
                qj_write_string(o, s.p, s.n);
            else
                qr_buf_put(o, s.p, s.n);
        } else if (key_is(k, "arrayValue", "array_value") ||
                   key_is(k, "kvlistValue", "kvlist_value")) {
            int is_kv = k.p[0] == 'k';
            if (qj_object_begin(&x->j) != 0)
                return -1;
            int any = 0, mm;
            while ((mm = qj_object_next(&x->j, &k, &x->a)) == 1) {
                if (!key_is(k, "values", NULL)) {
                    if (qj_skip(&x->j) != 0)
                        return -1;
                    continue;
                }
                any = 1;
                if (is_kv) {
                    if (kv_array_json(x, o, depth) != 0)
                        return -1;
                    continue;
                }
                qr_buf_put_u8(o, '[');
                int r, first = 1;
                if (qj_array_begin(&x->j) != 0)
                    return -1;
                while ((r = qj_array_next(&x->j)) == 1) {
                    if (!first)
                        qr_buf_put_u8(o, ',');
                    first = 0;
                    size_t at = o->len;
                    if (any_value(x, o, 1, depth + 1) != 0)
                        return -1;
                    if (o->len == at)
                        qr_buf_put(o, "null", 4);
                }
                if (r != 0)
                    return -1;
                qr_buf_put_u8(o, ']');
            }
            if (mm != 0)
                return -1;
            if (!any)
                qr_buf_put(o, is_kv ? "{}" : "[]", 2);
        } else if (qj_skip(&x->j) != 0) {
            return -1;
        }
    }
    if (!set && typed)
        qr_buf_put(o, "null", 4);
    return m;
}

/* "attributes": [KeyValue...] as a JSON object of AsString texts. */
static int attrs(jx *x, qr_buf *o, qr_buf *service)
{
    qr_buf_clear(o);
    qh_map_begin(o);
    if (qj_peek(&x->j) == QJ_NULL) {
        qh_map_end(o);
        return qj_null(&x->j);
    }
    int r;
    if (qj_array_begin(&x->j) != 0)
        return -1;
    while ((r = qj_array_next(&x->j)) == 1) {
        qr_slice k, key = {"", 0};
        int m, ok = qj_object_begin(&x->j) == 0;
        qr_buf_clear(&x->tmp);
        while (ok && (m = qj_object_next(&x->j, &k, &x->a)) == 1) {
            if (key_is(k, "key", NULL))
                ok = qj_string(&x->j, &key, &x->a) == 0;
            else if (key_is(k, "value", NULL)) {
                qr_buf_clear(&x->tmp);
                ok = any_value(x, &x->tmp, 0, 1) == 0;
            } else
                ok = qj_skip(&x->j) == 0;
        }
        if (!ok || m != 0)
            return -1;
        qh_map_put(o, key.p, key.n, (const char *)x->tmp.p, x->tmp.len);
        if (service && key.n == 12 && !memcmp(key.p, "service.name", 12)) {
            qr_buf_clear(service);
            qr_buf_put(service, x->tmp.p, x->tmp.len);
        }
    }
    qh_map_end(o);
    return r;
}

/* A hex id of want bytes ("" empty); *bad when not hex of that length. */
static int hex_id(jx *x, size_t want, char *out, int *bad)
{
    qr_slice s;
    out[0] = 0;
    if (qj_peek(&x->j) == QJ_NULL)
        return qj_null(&x->j);
    if (qj_string(&x->j, &s, &x->a) != 0)
        return -1;
    if (s.n == 0)
        return 0;
    uint8_t raw[16];
    if (s.n != 2 * want) {
        *bad = 1;
        return 0;
    }
    for (size_t i = 0; i < s.n; i++) {
        char c = s.p[i];
        int v = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (v < 0) {
            *bad = 1;
            return 0;
        }
        if (i % 2 == 0)
            raw[i / 2] = (uint8_t)(v << 4);
        else
            raw[i / 2] |= (uint8_t)v;
    }
    qh_hex_id(raw, want, out);
    return 0;
}

static const char *sev_names[] = {
    "UNSPECIFIED", "TRACE",  "TRACE2", "TRACE3", "TRACE4", "DEBUG",  "DEBUG2", "DEBUG3", "DEBUG4",
    "INFO",        "INFO2",  "INFO3",  "INFO4",  "WARN",   "WARN2",  "WARN3",  "WARN4",  "ERROR",
    "ERROR2",      "ERROR3", "ERROR4", "FATAL",  "FATAL2", "FATAL3", "FATAL4"};

static int severity(jx *x, int32_t *v)
{
    if (qj_peek(&x->j) == QJ_STRING) {
        qr_slice s;
        if (qj_string(&x->j, &s, &x->a) != 0)
            return -1;
        if (s.n > 16 && !memcmp(s.p, "SEVERITY_NUMBER_", 16)) {
            s.p += 16;
            s.n -= 16;
        }
        for (int i = 0; i < 25; i++)
            if (s.n == strlen(sev_names[i]) && !memcmp(s.p, sev_names[i], s.n)) {
                *v = i;
                return 0;
            }
        return -1;
    }
    int64_t n;
    if (json_i64(x, &n) != 0 || n < INT32_MIN || n > INT32_MAX)
        return -1;
    *v = (int32_t)n;
    return 0;
}

typedef struct emit {
    qh_row_fn row;
    void *arg;
    uint64_t *records, *rejected;
    qr_buf line;
} emit;

static int log_record(jx *x, const qh_otlp_res *res, const qh_otlp_scope *sc, qh_otlp_rec *r,
                      emit *em)
{
    qh_otlp_rec_reset(r);
    qr_buf_put(&r->attrs, "{}", 2);
    if (qj_object_begin(&x->j) != 0)
        return fail(x, "a log record must be an object");
    qr_slice k;
    int m, neg;
    while ((m = qj_object_next(&x->j, &k, &x->a)) == 1) {
        int ok;
        if (key_is(k, "timeUnixNano", "time_unix_nano"))
            ok = json_u64(x, &r->time_ns, &neg) == 0 && !neg;
        else if (key_is(k, "observedTimeUnixNano", "observed_time_unix_nano"))
            ok = json_u64(x, &r->observed_ns, &neg) == 0 && !neg;
        else if (key_is(k, "severityNumber", "severity_number"))
            ok = severity(x, &r->sev_num) == 0;
        else if (key_is(k, "severityText", "severity_text"))
            ok = json_str(x, &r->sev_text) == 0;
        else if (key_is(k, "body", NULL))
            ok = any_value(x, &r->body, 0, 0) == 0;
        else if (key_is(k, "attributes", NULL))
            ok = attrs(x, &r->attrs, NULL) == 0;
        else if (key_is(k, "flags", NULL)) {
            uint64_t f;
            ok = json_u64(x, &f, &neg) == 0 && !neg && f <= UINT32_MAX;
            r->flags = (uint32_t)f;
        } else if (key_is(k, "traceId", "trace_id"))
            ok = hex_id(x, 16, r->trace, &r->bad_id) == 0;
        else if (key_is(k, "spanId", "span_id"))
            ok = hex_id(x, 8, r->span, &r->bad_id) == 0;
        else
            ok = qj_skip(&x->j) == 0;
        if (!ok) {
            char what[96];
            snprintf(what, sizeof what, "bad value of \"%.*s\" in a log record",
                     (int)(k.n > 40 ? 40 : k.n), k.p);
            return fail(x, what);
        }
    }
    if (m != 0)
        return fail(x, "malformed log record");
    (*em->records)++;
    if (r->bad_id) {
        (*em->rejected)++;
        return 0;
    }
    qh_otlp_row(res, sc, r, &em->line);
    if (em->line.oom || r->body.oom || r->attrs.oom)
        return qr_errf(x->e, QR_E_NOMEM, "out of memory");
    int rc = em->row(em->arg, (const char *)em->line.p, em->line.len, x->e);
    if (rc < 0)
        return -1;
    if (rc == 1)
        (*em->rejected)++;
    qr_arena_reset(&x->a);
    return 0;
}

/* One ScopeLogs: scope and schemaUrl first, then the records. */
static int scope_logs(jx *x, const qh_otlp_res *res, qh_otlp_scope *sc, qh_otlp_rec *r, emit *em)
{
    qr_slice k;
    int m;
    qr_json start = x->j;
    qr_buf_clear(&sc->attrs);
    qr_buf_put(&sc->attrs, "{}", 2);
    qr_buf_clear(&sc->name);
    qr_buf_clear(&sc->version);
    qr_buf_clear(&sc->schema);
    if (qj_object_begin(&x->j) != 0)
        return fail(x, "a scopeLogs entry must be an object");
    while ((m = qj_object_next(&x->j, &k, &x->a)) == 1) {
        int ok = 1;
        if (key_is(k, "schemaUrl", "schema_url"))
            ok = json_str(x, &sc->schema) == 0;
        else if (key_is(k, "scope", NULL)) {
            if (qj_peek(&x->j) == QJ_NULL) {
                ok = qj_null(&x->j) == 0;
                continue;
            }
            int mm;
            ok = qj_object_begin(&x->j) == 0;
            while (ok && (mm = qj_object_next(&x->j, &k, &x->a)) == 1) {
                if (key_is(k, "name", NULL))
                    ok = json_str(x, &sc->name) == 0;
                else if (key_is(k, "version", NULL))
                    ok = json_str(x, &sc->version) == 0;
                else if (key_is(k, "attributes", NULL))
                    ok = attrs(x, &sc->attrs, NULL) == 0;
                else
                    ok = qj_skip(&x->j) == 0;
            }
            ok = ok && mm == 0;
        } else
            ok = qj_skip(&x->j) == 0;
        if (!ok)
            return fail(x, "malformed scope");
    }
    if (m != 0)
        return fail(x, "malformed scopeLogs entry");
    qr_json end = x->j;
    x->j = start; /* second pass: the records */
    qj_object_begin(&x->j);
    while ((m = qj_object_next(&x->j, &k, &x->a)) == 1) {
        if (!key_is(k, "logRecords", "log_records")) {
            qj_skip(&x->j);
            continue;
        }
        if (qj_peek(&x->j) == QJ_NULL) {
            qj_null(&x->j);
            continue;
        }
        int r2;
        if (qj_array_begin(&x->j) != 0)
            return fail(x, "logRecords must be an array");
        while ((r2 = qj_array_next(&x->j)) == 1)
            if (log_record(x, res, sc, r, em) != 0)
                return -1;
        if (r2 != 0)
            return fail(x, "malformed logRecords");
    }
    x->j = end;
    return 0;
}

static int resource_logs(jx *x, qh_otlp_res *res, qh_otlp_scope *sc, qh_otlp_rec *r, emit *em)
{
    qr_slice k;
    int m;
    qr_json start = x->j;
    qr_buf_clear(&res->attrs);
    qr_buf_put(&res->attrs, "{}", 2);
    qr_buf_clear(&res->service);
    qr_buf_clear(&res->schema);
    if (qj_object_begin(&x->j) != 0)
        return fail(x, "a resourceLogs entry must be an object");
    while ((m = qj_object_next(&x->j, &k, &x->a)) == 1) {
        int ok = 1;
        if (key_is(k, "schemaUrl", "schema_url"))
            ok = json_str(x, &res->schema) == 0;
        else if (key_is(k, "resource", NULL)) {
            if (qj_peek(&x->j) == QJ_NULL) {
                ok = qj_null(&x->j) == 0;
                continue;
            }
            int mm;
            ok = qj_object_begin(&x->j) == 0;
            while (ok && (mm = qj_object_next(&x->j, &k, &x->a)) == 1) {
                if (key_is(k, "attributes", NULL))
                    ok = attrs(x, &res->attrs, &res->service) == 0;
                else
                    ok = qj_skip(&x->j) == 0;
            }
            ok = ok && mm == 0;
        } else
            ok = qj_skip(&x->j) == 0;
        if (!ok)
            return fail(x, "malformed resource");
    }
    if (m != 0)
        return fail(x, "malformed resourceLogs entry");
    qr_json end = x->j;
    x->j = start;
    qj_object_begin(&x->j);
    while ((m = qj_object_next(&x->j, &k, &x->a)) == 1) {
        if (!key_is(k, "scopeLogs", "scope_logs")) {
            qj_skip(&x->j);
            continue;
        }
        if (qj_peek(&x->j) == QJ_NULL) {
            qj_null(&x->j);
            continue;
        }
        int r2;
        if (qj_array_begin(&x->j) != 0)
            return fail(x, "scopeLogs must be an array");
        while ((r2 = qj_array_next(&x->j)) == 1)
            if (scope_logs(x, res, sc, r, em) != 0)
                return -1;
        if (r2 != 0)
            return fail(x, "malformed scopeLogs");
    }
    x->j = end;
    return 0;
}

int qh_otlp_json_rows(const char *p, size_t n, qh_row_fn row, void *arg, uint64_t *records,
                      uint64_t *rejected, qr_err *e)
{
    *records = *rejected = 0;
    jx x;
    qj_init(&x.j, p, n);
    qr_arena_init(&x.a, 64 << 10, 0);
    x.e = e;
    qr_buf_init(&x.tmp);
    qh_otlp_res res;
    qh_otlp_scope sc;
    qh_otlp_rec r;
    qh_otlp_res_init(&res);
    qh_otlp_scope_init(&sc);
    qh_otlp_rec_init(&r);
    emit em = {row, arg, records, rejected, {0}};
    qr_buf_init(&em.line);
    int rc = 0, m;
    qr_slice k;
    if (qj_peek(&x.j) != QJ_OBJECT || qj_object_begin(&x.j) != 0) {
        rc = fail(&x, "the body must be a JSON object (ExportLogsServiceRequest)");
        goto out;
    }
    while (rc == 0 && (m = qj_object_next(&x.j, &k, &x.a)) == 1) {
        if (!key_is(k, "resourceLogs", "resource_logs")) {
            if (qj_skip(&x.j) != 0)
                rc = fail(&x, "malformed JSON");
            continue;
        }
        if (qj_peek(&x.j) == QJ_NULL) {
            qj_null(&x.j);
            continue;
        }
        int r2;
        if (qj_array_begin(&x.j) != 0) {
            rc = fail(&x, "resourceLogs must be an array");
            break;
        }
        while (rc == 0 && (r2 = qj_array_next(&x.j)) == 1)
            rc = resource_logs(&x, &res, &sc, &r, &em);
        if (rc == 0 && r2 != 0)
            rc = fail(&x, "malformed resourceLogs");
    }
    if (rc == 0 && (m != 0 || qj_finish(&x.j) != 0))
        rc = fail(&x, "malformed JSON");
out:
    qr_buf_free(&em.line);
    qr_buf_free(&x.tmp);
    qr_arena_free(&x.a);
    qh_otlp_rec_free(&r);
    qh_otlp_scope_free(&sc);
    qh_otlp_res_free(&res);
    return rc;
}
