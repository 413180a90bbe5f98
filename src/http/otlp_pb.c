/* otlp_pb.c - OTLP/HTTP logs in protobuf (application/x-protobuf):
 * ExportLogsServiceRequest unpacked by protobuf-c (the messages of
 * otlp_logs.proto, generated at build time) and each record handed to
 * otlp_map.c as a row. AnyValue's text is pdata's AsString: strings as
 * they are, integers in decimal, doubles shortest, true / false, bytes in
 * base64, arrays and maps as JSON (nested values typed: numbers, bools,
 * strings). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_int.h"
#include "http/otlp_logs.pb-c.h"
#include "util/json.h"
#include "util/scram.h"

#define MAX_DEPTH 32

static void put_b64(qr_buf *o, const uint8_t *p, size_t n, int quoted)
{
    char *t = malloc(4 * ((n + 2) / 3) + 1);
    if (!t) {
        o->oom = 1;
        return;
    }
    qr_b64_encode(p, n, t);
    if (quoted)
        qj_write_string(o, t, strlen(t));
    else
        qr_buf_put(o, t, strlen(t));
    free(t);
}

static void any_json(const Otlp__AnyValue *v, qr_buf *o, int depth);

static void kvlist_json(Otlp__KeyValue **kv, size_t n, qr_buf *o, int depth)
{
    qr_buf_put_u8(o, '{');
    for (size_t i = 0; i < n; i++) {
        if (i)
            qr_buf_put_u8(o, ',');
        const char *k = kv[i]->key ? kv[i]->key : "";
        qj_write_string(o, k, strlen(k));
        qr_buf_put_u8(o, ':');
        any_json(kv[i]->value, o, depth + 1);
    }
    qr_buf_put_u8(o, '}');
}

/* A value inside an array or map, as typed JSON. */
static void any_json(const Otlp__AnyValue *v, qr_buf *o, int depth)
{
    char num[40];
    if (!v || depth > MAX_DEPTH) {
        qr_buf_put(o, "null", 4);
        return;
    }
    switch (v->value_case) {
    case OTLP__ANY_VALUE__VALUE_STRING_VALUE:
        qj_write_string(o, v->string_value, strlen(v->string_value));
        break;
    case OTLP__ANY_VALUE__VALUE_BOOL_VALUE:
        qr_buf_put(o, v->bool_value ? "true" : "false", v->bool_value ? 4 : 5);
        break;
    case OTLP__ANY_VALUE__VALUE_INT_VALUE:
        snprintf(num, sizeof num, "%lld", (long long)v->int_value);
        qr_buf_put(o, num, strlen(num));
        break;
    case OTLP__ANY_VALUE__VALUE_DOUBLE_VALUE:
        qh_fmt_double(v->double_value, num, sizeof num);
        if (num[0] == 'N' || num[1] == 'I')
            qj_write_string(o, num, strlen(num)); /* JSON has no NaN / Inf */
        else
            qr_buf_put(o, num, strlen(num));
        break;
    case OTLP__ANY_VALUE__VALUE_BYTES_VALUE:
        put_b64(o, v->bytes_value.data, v->bytes_value.len, 1);
        break;
    case OTLP__ANY_VALUE__VALUE_ARRAY_VALUE:
        qr_buf_put_u8(o, '[');
        for (size_t i = 0; v->array_value && i < v->array_value->n_values; i++) {
            if (i)
                qr_buf_put_u8(o, ',');
            any_json(v->array_value->values[i], o, depth + 1);
        }
        qr_buf_put_u8(o, ']');
        break;
    case OTLP__ANY_VALUE__VALUE_KVLIST_VALUE:
        if (v->kvlist_value)
            kvlist_json(v->kvlist_value->values, v->kvlist_value->n_values, o, depth);
        else
            qr_buf_put(o, "{}", 2);
        break;
    default:
        qr_buf_put(o, "null", 4);
    }
}

/* AsString of a value into o (appended). */
static void any_text(const Otlp__AnyValue *v, qr_buf *o)
{
    char num[40];
    if (!v)
        return;
    switch (v->value_case) {
    case OTLP__ANY_VALUE__VALUE_STRING_VALUE:
        qr_buf_put(o, v->string_value, strlen(v->string_value));
        break;
    case OTLP__ANY_VALUE__VALUE_BOOL_VALUE:
        qr_buf_put(o, v->bool_value ? "true" : "false", v->bool_value ? 4 : 5);
        break;
    case OTLP__ANY_VALUE__VALUE_INT_VALUE:
        snprintf(num, sizeof num, "%lld", (long long)v->int_value);
        qr_buf_put(o, num, strlen(num));
        break;
    case OTLP__ANY_VALUE__VALUE_DOUBLE_VALUE:
        qh_fmt_double(v->double_value, num, sizeof num);
        qr_buf_put(o, num, strlen(num));
        break;
    case OTLP__ANY_VALUE__VALUE_BYTES_VALUE:
        put_b64(o, v->bytes_value.data, v->bytes_value.len, 0);
        break;
    case OTLP__ANY_VALUE__VALUE_ARRAY_VALUE:
    case OTLP__ANY_VALUE__VALUE_KVLIST_VALUE:
        any_json(v, o, 0);
        break;
    default:
        break;
    }
}

/* Attributes as a JSON object of AsString texts into o (cleared). */
static void attrs(Otlp__KeyValue **kv, size_t n, qr_buf *o, qr_buf *tmp)
{
    qr_buf_clear(o);
    qh_map_begin(o);
    for (size_t i = 0; i < n; i++) {
        qr_buf_clear(tmp);
        any_text(kv[i]->value, tmp);
        const char *k = kv[i]->key ? kv[i]->key : "";
        qh_map_put(o, k, strlen(k), (const char *)tmp->p, tmp->len);
    }
    qh_map_end(o);
}

static void set_str(qr_buf *b, const char *s)
{
    qr_buf_clear(b);
    if (s)
        qr_buf_put(b, s, strlen(s));
}

static void id_hex(const ProtobufCBinaryData *d, size_t want, char *out, int *bad)
{
    out[0] = 0;
    if (d->len == 0)
        return;
    if (d->len != want) {
        *bad = 1;
        return;
    }
    qh_hex_id(d->data, d->len, out);
}

int qh_otlp_pb_rows(const uint8_t *p, size_t n, qh_row_fn row, void *arg, uint64_t *records,
                    uint64_t *rejected, qr_err *e)
{
    *records = *rejected = 0;
    Otlp__ExportLogsServiceRequest *req = otlp__export_logs_service_request__unpack(NULL, n, p);
    if (!req)
        return qr_errf(e, QR_E_INVALID_TEXT,
                       "the body is not an ExportLogsServiceRequest in protobuf");
    qh_otlp_res res;
    qh_otlp_scope sc;
    qh_otlp_rec r;
    qr_buf line, tmp;
    qh_otlp_res_init(&res);
    qh_otlp_scope_init(&sc);
    qh_otlp_rec_init(&r);
    qr_buf_init(&line);
    qr_buf_init(&tmp);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < req->n_resource_logs; i++) {
        const Otlp__ResourceLogs *rl = req->resource_logs[i];
        const Otlp__Resource *rs = rl->resource;
        attrs(rs ? rs->attributes : NULL, rs ? rs->n_attributes : 0, &res.attrs, &tmp);
        qr_buf_clear(&res.service);
        for (size_t a = 0; rs && a < rs->n_attributes; a++)
            if (rs->attributes[a]->key && !strcmp(rs->attributes[a]->key, "service.name")) {
                qr_buf_clear(&res.service);
                any_text(rs->attributes[a]->value, &res.service);
            }
        set_str(&res.schema, rl->schema_url);
        for (size_t s = 0; rc == 0 && s < rl->n_scope_logs; s++) {
            const Otlp__ScopeLogs *sl = rl->scope_logs[s];
            const Otlp__InstrumentationScope *is = sl->scope;
            attrs(is ? is->attributes : NULL, is ? is->n_attributes : 0, &sc.attrs, &tmp);
            set_str(&sc.name, is ? is->name : NULL);
            set_str(&sc.version, is ? is->version : NULL);
            set_str(&sc.schema, sl->schema_url);
            for (size_t k = 0; rc == 0 && k < sl->n_log_records; k++) {
                const Otlp__LogRecord *lr = sl->log_records[k];
                qh_otlp_rec_reset(&r);
                r.time_ns = lr->time_unix_nano;
                r.observed_ns = lr->observed_time_unix_nano;
                id_hex(&lr->trace_id, 16, r.trace, &r.bad_id);
                id_hex(&lr->span_id, 8, r.span, &r.bad_id);
                r.flags = lr->flags;
                r.sev_num = lr->severity_number;
                set_str(&r.sev_text, lr->severity_text);
                any_text(lr->body, &r.body);
                attrs(lr->attributes, lr->n_attributes, &r.attrs, &tmp);
                (*records)++;
                if (r.bad_id) {
                    (*rejected)++;
                    continue;
                }
                qh_otlp_row(&res, &sc, &r, &line);
                if (line.oom || tmp.oom || r.body.oom || r.attrs.oom) {
                    rc = qr_errf(e, QR_E_NOMEM, "out of memory");
                    break;
                }
                int x = row(arg, (const char *)line.p, line.len, e);
                if (x < 0)
                    rc = -1;
                else if (x == 1)
                    (*rejected)++;
            }
        }
    }
    qr_buf_free(&line);
    qr_buf_free(&tmp);
    qh_otlp_rec_free(&r);
    qh_otlp_scope_free(&sc);
    qh_otlp_res_free(&res);
    otlp__export_logs_service_request__free_unpacked(req, NULL);
    return rc;
}
