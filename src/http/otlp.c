/* otlp.c - POST /v1/logs: OTLP/HTTP logs, protobuf (otlp_pb.c) or JSON
 * (otlp_json.c) by the request's Content-Type, into the table named by the
 * X-Quarry-Table header or the `table` query parameter (default
 * otel_logs; made the OpenTelemetry table on first use, with its
 * full-text index on Body, as `quarry ingest` makes it). The body is held
 * whole (a protobuf message is decoded at once; the body limit bounds it).
 * Records that the table refuses are counted in the answer's
 * partial_success (rejected_log_records, with the first reason); the rest
 * are committed together. A body that cannot be decoded is a 400 with a
 * google.rpc.Status (in the request's encoding). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_int.h"
#include "util/json.h"

typedef struct otlp_ep {
    qh_sink sink;
    qr_err first; /* the first refused record's reason */
    uint64_t records, rejected;
} otlp_ep;

static int otlp_row(void *arg, const char *line, size_t n, qr_err *e)
{
    qh_req *q = arg;
    otlp_ep *o = q->ep;
    uint32_t tab;
    int rc = qh_sink_add(&o->sink, q->table, line, n, 0, o->records, &tab, e);
    if (rc == 1 && !o->first.code[0])
        o->first = *e;
    if (rc == 1 && !strcmp(e->code, QR_E_UNDEFINED_TABLE))
        return -1; /* the table could not be made: nothing can be taken */
    return rc;
}

static void encode(qh_req *q, uint64_t rejected, const char *msg, qr_buf *out)
{
    qr_buf_clear(out);
    if (q->json)
        qh_otlp_response_json(rejected, msg, out);
    else
        qh_otlp_response_pb(rejected, msg, out);
}

static int otlp_reply(void *arg, qh_reply *r)
{
    qh_req *q = arg;
    otlp_ep *o = q->ep;
    qr_buf b;
    qr_buf_init(&b);
    encode(q, o->rejected, o->first.msg, &b);
    if (b.oom) {
        qr_buf_free(&b);
        return -1;
    }
    r->status = 200;
    snprintf(r->ctype, sizeof r->ctype, "%s",
             q->json ? "application/json" : "application/x-protobuf");
    r->body = b.p ? b.p : malloc(1);
    r->n = b.len;
    return r->body ? 0 : -1;
}

/* A google.rpc.Status {code = 3 INVALID_ARGUMENT (or 13), message}. */
static void status_error(qh_req *q, int http, const char *msg)
{
    q->done = 1;
    q->status = http;
    qr_buf_clear(&q->resp);
    int code = http == 400 ? 3 : http == 503 ? 14 : 13;
    if (q->json) {
        char num[48];
        snprintf(num, sizeof num, "{\"code\":%d,\"message\":", code);
        qr_buf_put(&q->resp, num, strlen(num));
        qj_write_string(&q->resp, msg, strlen(msg));
        qr_buf_put_u8(&q->resp, '}');
        snprintf(q->ctype, sizeof q->ctype, "application/json");
    } else {
        size_t n = strlen(msg);
        qr_buf_put_u8(&q->resp, 0x08);
        qr_buf_put_u8(&q->resp, (uint8_t)code);
        qr_buf_put_u8(&q->resp, 0x12);
        qr_buf_put_varint(&q->resp, n);
        qr_buf_put(&q->resp, msg, n);
        snprintf(q->ctype, sizeof q->ctype, "application/x-protobuf");
    }
}

static void otlp_end(qh_req *q)
{
    otlp_ep *o = q->ep;
    qr_err e;
    qr_err_clear(&e);
    int rc = q->json ? qh_otlp_json_rows((const char *)q->body.p, q->body.len, otlp_row, q,
                                         &o->records, &o->rejected, &e)
                     : qh_otlp_pb_rows(q->body.p, q->body.len, otlp_row, q, &o->records,
                                       &o->rejected, &e);
    if (rc != 0) {
        qh_sink_abort(&o->sink);
        status_error(q, qh_status_of(e.code), e.msg);
        return;
    }
    if (o->rejected && !o->first.code[0]) /* only records the decoder refused */
        qr_errf(&o->first, QR_E_INVALID_TEXT,
                "a log record's traceId or spanId is not 16 or 8 bytes");
    if (qh_sink_commit(&o->sink, q->key[0] ? q->key : NULL, otlp_reply, NULL, q) != 0) {
        const qr_err *te = o->sink.ntabs ? &o->sink.tabs[0].err : &e;
        status_error(q, te->code[0] ? qh_status_of(te->code) : 500,
                     te->code[0] ? te->msg : "could not record the Idempotency-Key");
        return;
    }
    q->status = 200;
    snprintf(q->ctype, sizeof q->ctype, "%s",
             q->json ? "application/json" : "application/x-protobuf");
    encode(q, o->rejected, o->first.msg, &q->resp);
}

static void otlp_free(qh_req *q)
{
    otlp_ep *o = q->ep;
    if (!o)
        return;
    qh_sink_free(&o->sink);
    free(o);
    q->ep = NULL;
}

void qh_otlp_start(qh_req *q)
{
    otlp_ep *o = calloc(1, sizeof *o);
    if (!o) {
        qh_req_error(q, 503, QR_E_NOMEM, "out of memory", 0);
        return;
    }
    qh_sink_init(&o->sink, q->db, q->idem, 2);
    if (!q->table[0])
        snprintf(q->table, sizeof q->table, "otel_logs");
    q->ep = o;
    q->lines_mode = 0;
    q->on_end = otlp_end;
    q->on_free = otlp_free;
}
