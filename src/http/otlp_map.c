/* otlp_map.c - one OTLP log record as a row of the OpenTelemetry table,
 * mapped as the OpenTelemetry Collector's ClickHouse exporter maps it
 * (http.h "OTLP logs to rows"); shared by the protobuf and JSON decoders,
 * which fill the resource, scope and record parts; and the
 * ExportLogsServiceResponse in both encodings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_int.h"
#include "http/otlp_logs.pb-c.h"
#include "util/json.h"

void qh_otlp_res_init(qh_otlp_res *r)
{
    qr_buf_init(&r->attrs);
    qr_buf_init(&r->service);
    qr_buf_init(&r->schema);
}
void qh_otlp_res_free(qh_otlp_res *r)
{
    qr_buf_free(&r->attrs);
    qr_buf_free(&r->service);
    qr_buf_free(&r->schema);
}
void qh_otlp_scope_init(qh_otlp_scope *s)
{
    qr_buf_init(&s->attrs);
    qr_buf_init(&s->name);
    qr_buf_init(&s->version);
    qr_buf_init(&s->schema);
}
void qh_otlp_scope_free(qh_otlp_scope *s)
{
    qr_buf_free(&s->attrs);
    qr_buf_free(&s->name);
    qr_buf_free(&s->version);
    qr_buf_free(&s->schema);
}
void qh_otlp_rec_init(qh_otlp_rec *r)
{
    memset(r, 0, sizeof *r);
    qr_buf_init(&r->sev_text);
    qr_buf_init(&r->body);
    qr_buf_init(&r->attrs);
}
void qh_otlp_rec_reset(qh_otlp_rec *r)
{
    r->time_ns = r->observed_ns = 0;
    r->trace[0] = r->span[0] = 0;
    r->bad_id = 0;
    r->flags = 0;
    r->sev_num = 0;
    qr_buf_clear(&r->sev_text);
    qr_buf_clear(&r->body);
    qr_buf_clear(&r->attrs);
}
void qh_otlp_rec_free(qh_otlp_rec *r)
{
    qr_buf_free(&r->sev_text);
    qr_buf_free(&r->body);
    qr_buf_free(&r->attrs);
}

void qh_hex_id(const uint8_t *p, size_t n, char *out)
{
    static const char hx[] = "0123456789abcdef";
    int zero = 1;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hx[p[i] >> 4];
        out[2 * i + 1] = hx[p[i] & 15];
        zero &= p[i] == 0;
    }
    out[zero ? 0 : 2 * n] = 0;
}

void qh_map_begin(qr_buf *b) { qr_buf_put_u8(b, '{'); }
void qh_map_put(qr_buf *b, const char *k, size_t kn, const char *v, size_t vn)
{
    if (b->len > 1)
        qr_buf_put_u8(b, ',');
    qj_write_string(b, k, kn);
    qr_buf_put_u8(b, ':');
    qj_write_string(b, v, vn);
}
void qh_map_end(qr_buf *b) { qr_buf_put_u8(b, '}'); }

void qh_fmt_double(double d, char *out, size_t cap)
{
    if (isnan(d)) {
        snprintf(out, cap, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(out, cap, d > 0 ? "+Inf" : "-Inf");
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(out, cap, "%.*g", p, d);
        if (strtod(out, NULL) == d)
            return;
    }
}

static void put_kv_str(qr_buf *o, const char *k, const qr_buf *v)
{
    qr_buf_put_u8(o, ',');
    qj_write_string(o, k, strlen(k));
    qr_buf_put_u8(o, ':');
    qj_write_string(o, v ? (const char *)v->p : "", v ? v->len : 0);
}

static void put_kv_raw(qr_buf *o, const char *k, const qr_buf *v)
{
    qr_buf_put_u8(o, ',');
    qj_write_string(o, k, strlen(k));
    qr_buf_put_u8(o, ':');
    if (v && v->len)
        qr_buf_put(o, v->p, v->len);
    else
        qr_buf_put(o, "{}", 2);
}

void qh_otlp_row(const qh_otlp_res *res, const qh_otlp_scope *sc, const qh_otlp_rec *r, qr_buf *o)
{
    char num[160];
    qr_buf_clear(o);
    uint64_t ts = r->time_ns ? r->time_ns : r->observed_ns;
    snprintf(num, sizeof num,
             "{\"Timestamp\":%llu,\"TraceId\":\"%s\",\"SpanId\":\"%s\",\"TraceFlags\":%u",
             (unsigned long long)ts, r->trace, r->span, r->flags & 0xffu);
    qr_buf_put(o, num, strlen(num));
    put_kv_str(o, "SeverityText", &r->sev_text);
    snprintf(num, sizeof num, ",\"SeverityNumber\":%d", (int)r->sev_num);
    qr_buf_put(o, num, strlen(num));
    put_kv_str(o, "ServiceName", &res->service);
    put_kv_str(o, "Body", &r->body);
    put_kv_str(o, "ResourceSchemaUrl", &res->schema);
    put_kv_raw(o, "ResourceAttributes", &res->attrs);
    put_kv_str(o, "ScopeSchemaUrl", &sc->schema);
    put_kv_str(o, "ScopeName", &sc->name);
    put_kv_str(o, "ScopeVersion", &sc->version);
    put_kv_raw(o, "ScopeAttributes", &sc->attrs);
    put_kv_raw(o, "LogAttributes", &r->attrs);
    qr_buf_put_u8(o, '}');
}

void qh_otlp_response_pb(uint64_t rejected, const char *msg, qr_buf *out)
{
    Otlp__ExportLogsServiceResponse resp = OTLP__EXPORT_LOGS_SERVICE_RESPONSE__INIT;
    Otlp__ExportLogsPartialSuccess ps = OTLP__EXPORT_LOGS_PARTIAL_SUCCESS__INIT;
    if (rejected) {
        ps.rejected_log_records = (int64_t)rejected;
        ps.error_message = (char *)(msg ? msg : "");
        resp.partial_success = &ps;
    }
    size_t n = otlp__export_logs_service_response__get_packed_size(&resp);
    unsigned char *p = qr_buf_reserve(out, n);
    if (p) {
        otlp__export_logs_service_response__pack(&resp, p);
        out->len += n;
    }
}

void qh_otlp_response_json(uint64_t rejected, const char *msg, qr_buf *out)
{
    if (!rejected) {
        qr_buf_put(out, "{}", 2);
        return;
    }
    char num[96];
    snprintf(num, sizeof num,
             "{\"partialSuccess\":{\"rejectedLogRecords\":\"%llu\",\"errorMessage\":",
             (unsigned long long)rejected);
    qr_buf_put(out, num, strlen(num));
    qj_write_string(out, msg ? msg : "", msg ? strlen(msg) : 0);
    qr_buf_put(out, "}}", 2);
}
