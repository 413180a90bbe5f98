/* test_http.c - the HTTP layer's parsers without a server: the _bulk body
 * (actions, sources, per-item refusals, malformed lines), the OTLP mapping
 * to the OpenTelemetry table's columns from protobuf (messages built with
 * protobuf-c here) and from JSON (every column checked), the answers'
 * encodings, the idempotency store across a reopen, and one request's rows
 * through the sink into a real table (idempotent create _ids). */
#include "testutil.h"

#include "http/http_int.h"
#include "http/otlp_logs.pb-c.h"
#include "sql/sql.h"

/* ---- _bulk ---- */
static void feed_lines(qh_bulk *b, const char *body, qh_bulk_item *items, int *nitems, int *rc)
{
    const char *p = body;
    *nitems = 0;
    *rc = 0;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        qr_err e;
        int r = qh_bulk_line(b, p, n, &items[*nitems], &e);
        if (r < 0) {
            *rc = -1;
            return;
        }
        if (r == 1)
            (*nitems)++;
        p += n + (nl ? 1 : 0);
    }
}

static void test_bulk_actions_and_sources(void **st)
{
    (void)st;
    qh_bulk b;
    qh_bulk_init(&b);
    qh_bulk_item it[8];
    int n, rc;
    feed_lines(&b,
               "{\"index\":{\"_index\":\"logs\",\"_id\":\"1\"}}\n"
               "{\"a\":1}\r\n"
               "\n"
               "{\"create\":{\"_id\":42,\"routing\":\"x\",\"pipeline\":{\"p\":[1]}}}\n"
               "{\"b\":\"two\"}\n"
               "{\"delete\":{\"_index\":\"logs\",\"_id\":\"9\"}}\n"
               "{\"update\":{\"_id\":\"3\"}}\n"
               "{\"doc\":{}}\n"
               "{\"create\":{}}\n"
               "{\"c\":3}\n",
               it, &n, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(n, 5);
    assert_int_equal(it[0].op, QH_BULK_INDEX);
    assert_string_equal(it[0].index, "logs");
    assert_string_equal(it[0].id, "1");
    assert_true(it[0].has_id);
    assert_int_equal(it[0].ndoc, 7); /* the \r is not part of the source */
    assert_memory_equal(it[0].doc, "{\"a\":1}", 7);
    assert_int_equal(it[0].line, 1);
    assert_string_equal(it[0].bad, "");
    assert_int_equal(it[1].op, QH_BULK_CREATE);
    assert_string_equal(it[1].index, "");
    assert_string_equal(it[1].id, "42");
    assert_int_equal(it[1].line, 4);
    assert_memory_equal(it[1].doc, "{\"b\":\"two\"}", it[1].ndoc);
    assert_int_equal(it[2].op, QH_BULK_DELETE);
    assert_null(it[2].doc);
    assert_string_equal(it[2].id, "9");
    assert_true(strstr(it[2].bad, "delete action is not supported") != NULL);
    assert_int_equal(it[3].op, QH_BULK_UPDATE);
    assert_true(strstr(it[3].bad, "update action is not supported") != NULL);
    assert_memory_equal(it[3].doc, "{\"doc\":{}}", it[3].ndoc);
    assert_int_equal(it[4].op, QH_BULK_CREATE);
    assert_false(it[4].has_id);
    assert_int_equal(it[4].line, 9);
    qr_err e;
    assert_int_equal(qh_bulk_finish(&b, &e), 0);
}

static void test_bulk_malformed_lines(void **st)
{
    (void)st;
    static const char *bad[] = {
        "{\"index\":{}\n",                /* truncated */
        "[1]\n",                          /* not an object */
        "{\"frobnicate\":{}}\n",          /* unknown action */
        "{}\n",                           /* no action */
        "{\"index\":{},\"create\":{}}\n", /* two actions */
        "{\"index\":7}\n",                /* metadata not an object */
        "{\"index\":{}} trailing\n",      /* trailing text */
    };
    for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++) {
        qh_bulk b;
        qh_bulk_init(&b);
        qh_bulk_item it;
        qr_err e;
        int r = qh_bulk_line(&b, bad[i], strlen(bad[i]) - 1, &it, &e);
        assert_int_equal(r, -1);
        assert_string_equal(e.code, QR_E_INVALID_TEXT);
        assert_true(strstr(e.msg, "line [1]") != NULL);
    }
    qh_bulk b;
    qh_bulk_init(&b);
    qh_bulk_item it;
    qr_err e;
    assert_int_equal(qh_bulk_line(&b, "{\"frob\":{}}", 11, &it, &e), -1);
    assert_true(strstr(e.msg, "expected one of [create, delete, index, update] but found [frob]"));
    /* an action whose source never comes */
    qh_bulk_init(&b);
    assert_int_equal(qh_bulk_line(&b, "{\"index\":{}}", 12, &it, &e), 0);
    assert_int_equal(qh_bulk_finish(&b, &e), -1);
    assert_true(strstr(e.msg, "line 1 has no source line") != NULL);
    /* an _id too long or empty is the item's error, not the request's */
    char line[700];
    memset(line, 0, sizeof line);
    strcpy(line, "{\"create\":{\"_id\":\"");
    memset(line + strlen(line), 'x', 600);
    strcat(line, "\"}}");
    qh_bulk_init(&b);
    assert_int_equal(qh_bulk_line(&b, line, strlen(line), &it, &e), 0);
    assert_int_equal(qh_bulk_line(&b, "{}", 2, &it, &e), 1);
    assert_true(strstr(it.bad, "no longer than 511 bytes") != NULL);
    qh_bulk_init(&b);
    assert_int_equal(qh_bulk_line(&b, "{\"create\":{\"_id\":\"\"}}", 21, &it, &e), 0);
    assert_int_equal(qh_bulk_line(&b, "{}", 2, &it, &e), 1);
    assert_true(strstr(it.bad, "must not be empty") != NULL);
}

/* ---- OTLP ---- */
typedef struct rows {
    char lines[8][2048];
    int n;
    int refuse; /* refuse row number refuse-1 */
} rows;

static int take_row(void *arg, const char *line, size_t n, qr_err *e)
{
    rows *r = arg;
    assert_true(n < sizeof r->lines[0]);
    assert_true(r->n < 8);
    if (r->refuse && r->n + 1 == r->refuse) {
        r->refuse = 0;
        qr_errf(e, QR_E_INVALID_TEXT, "refused");
        return 1;
    }
    memcpy(r->lines[r->n], line, n);
    r->lines[r->n][n] = 0;
    r->n++;
    return 0;
}

static const char *expect0 =
    "{\"Timestamp\":1758585600000000001,\"TraceId\":\"5b8efff798038103d269b633813fc60c\","
    "\"SpanId\":\"eee19b7ec3c1b174\",\"TraceFlags\":1,\"SeverityText\":\"ERROR\","
    "\"SeverityNumber\":17,\"ServiceName\":\"checkout\",\"Body\":\"failed to place order\","
    "\"ResourceSchemaUrl\":\"https://opentelemetry.io/schemas/1.26.0\","
    "\"ResourceAttributes\":{\"service.name\":\"checkout\",\"process.pid\":\"48\","
    "\"ok\":\"true\"},\"ScopeSchemaUrl\":\"https://s/1\",\"ScopeName\":\"io.shop\","
    "\"ScopeVersion\":\"2.1\",\"ScopeAttributes\":{\"lib\":\"x\"},"
    "\"LogAttributes\":{\"amount\":\"1023.83\",\"n\":\"-7\",\"raw\":\"AAH/\","
    "\"list\":\"[1,\\\"a\\\",true]\",\"obj\":\"{\\\"k\\\":2.5}\"}}";
/* the second record: no time (the observed one), no ids, a map body */
static const char *expect1 =
    "{\"Timestamp\":99,\"TraceId\":\"\",\"SpanId\":\"\",\"TraceFlags\":0,\"SeverityText\":\"\","
    "\"SeverityNumber\":0,\"ServiceName\":\"checkout\",\"Body\":\"{\\\"a\\\":[\\\"b\\\"]}\","
    "\"ResourceSchemaUrl\":\"https://opentelemetry.io/schemas/1.26.0\","
    "\"ResourceAttributes\":{\"service.name\":\"checkout\",\"process.pid\":\"48\","
    "\"ok\":\"true\"},\"ScopeSchemaUrl\":\"https://s/1\",\"ScopeName\":\"io.shop\","
    "\"ScopeVersion\":\"2.1\",\"ScopeAttributes\":{\"lib\":\"x\"},\"LogAttributes\":{}}";

static Otlp__KeyValue *kv_new(const char *k, Otlp__AnyValue *v)
{
    Otlp__KeyValue *kv = malloc(sizeof *kv);
    otlp__key_value__init(kv);
    kv->key = (char *)k;
    kv->value = v;
    return kv;
}
static Otlp__AnyValue *av_new(int kind)
{
    Otlp__AnyValue *v = calloc(1, sizeof *v);
    otlp__any_value__init(v);
    v->value_case = kind;
    return v;
}
static Otlp__AnyValue *av_str(const char *s)
{
    Otlp__AnyValue *v = av_new(OTLP__ANY_VALUE__VALUE_STRING_VALUE);
    v->string_value = (char *)s;
    return v;
}

/* Free what kv_new / av_new made (not the strings: literals). */
static void av_free(Otlp__AnyValue *v);
static void kv_free(Otlp__KeyValue *kv)
{
    av_free(kv->value);
    free(kv);
}
static void av_free(Otlp__AnyValue *v)
{
    if (!v)
        return;
    if (v->value_case == OTLP__ANY_VALUE__VALUE_ARRAY_VALUE) {
        for (size_t i = 0; i < v->array_value->n_values; i++)
            av_free(v->array_value->values[i]);
        free(v->array_value->values);
        free(v->array_value);
    }
    if (v->value_case == OTLP__ANY_VALUE__VALUE_KVLIST_VALUE) {
        for (size_t i = 0; i < v->kvlist_value->n_values; i++)
            kv_free(v->kvlist_value->values[i]);
        free(v->kvlist_value->values);
        free(v->kvlist_value);
    }
    free(v);
}

static uint8_t *build_request(size_t *len)
{
    static uint8_t trace[16] = {0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03,
                                0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c};
    static uint8_t span[8] = {0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x74};
    static uint8_t raw[3] = {0x00, 0x01, 0xff};
    Otlp__KeyValue *rattrs[3];
    rattrs[0] = kv_new("service.name", av_str("checkout"));
    Otlp__AnyValue *pid = av_new(OTLP__ANY_VALUE__VALUE_INT_VALUE);
    pid->int_value = 48;
    rattrs[1] = kv_new("process.pid", pid);
    Otlp__AnyValue *okv = av_new(OTLP__ANY_VALUE__VALUE_BOOL_VALUE);
    okv->bool_value = 1;
    rattrs[2] = kv_new("ok", okv);
    Otlp__Resource res = OTLP__RESOURCE__INIT;
    res.n_attributes = 3;
    res.attributes = rattrs;
    Otlp__KeyValue *sattrs[1] = {kv_new("lib", av_str("x"))};
    Otlp__InstrumentationScope scope = OTLP__INSTRUMENTATION_SCOPE__INIT;
    scope.name = "io.shop";
    scope.version = "2.1";
    scope.n_attributes = 1;
    scope.attributes = sattrs;

    Otlp__LogRecord r0 = OTLP__LOG_RECORD__INIT;
    r0.time_unix_nano = 1758585600000000001ull;
    r0.observed_time_unix_nano = 5;
    r0.severity_number = 17;
    r0.severity_text = "ERROR";
    r0.body = av_str("failed to place order");
    r0.flags = 0x101; /* only the low 8 bits are trace flags */
    r0.trace_id.data = trace;
    r0.trace_id.len = 16;
    r0.span_id.data = span;
    r0.span_id.len = 8;
    Otlp__KeyValue *la[5];
    Otlp__AnyValue *amt = av_new(OTLP__ANY_VALUE__VALUE_DOUBLE_VALUE);
    amt->double_value = 1023.83;
    la[0] = kv_new("amount", amt);
    Otlp__AnyValue *neg = av_new(OTLP__ANY_VALUE__VALUE_INT_VALUE);
    neg->int_value = -7;
    la[1] = kv_new("n", neg);
    Otlp__AnyValue *bytes = av_new(OTLP__ANY_VALUE__VALUE_BYTES_VALUE);
    bytes->bytes_value.data = raw;
    bytes->bytes_value.len = 3;
    la[2] = kv_new("raw", bytes);
    Otlp__AnyValue *list = av_new(OTLP__ANY_VALUE__VALUE_ARRAY_VALUE);
    list->array_value = malloc(sizeof *list->array_value);
    otlp__array_value__init(list->array_value);
    list->array_value->n_values = 3;
    list->array_value->values = malloc(3 * sizeof(Otlp__AnyValue *));
    list->array_value->values[0] = av_new(OTLP__ANY_VALUE__VALUE_INT_VALUE);
    list->array_value->values[0]->int_value = 1;
    list->array_value->values[1] = av_str("a");
    list->array_value->values[2] = av_new(OTLP__ANY_VALUE__VALUE_BOOL_VALUE);
    list->array_value->values[2]->bool_value = 1;
    la[3] = kv_new("list", list);
    Otlp__AnyValue *obj = av_new(OTLP__ANY_VALUE__VALUE_KVLIST_VALUE);
    obj->kvlist_value = malloc(sizeof *obj->kvlist_value);
    otlp__key_value_list__init(obj->kvlist_value);
    obj->kvlist_value->n_values = 1;
    obj->kvlist_value->values = malloc(sizeof(Otlp__KeyValue *));
    Otlp__AnyValue *d = av_new(OTLP__ANY_VALUE__VALUE_DOUBLE_VALUE);
    d->double_value = 2.5;
    obj->kvlist_value->values[0] = kv_new("k", d);
    la[4] = kv_new("obj", obj);
    r0.n_attributes = 5;
    r0.attributes = la;

    Otlp__LogRecord r1 = OTLP__LOG_RECORD__INIT;
    r1.observed_time_unix_nano = 99;
    Otlp__AnyValue *mb = av_new(OTLP__ANY_VALUE__VALUE_KVLIST_VALUE);
    mb->kvlist_value = malloc(sizeof *mb->kvlist_value);
    otlp__key_value_list__init(mb->kvlist_value);
    mb->kvlist_value->n_values = 1;
    mb->kvlist_value->values = malloc(sizeof(Otlp__KeyValue *));
    Otlp__AnyValue *arr = av_new(OTLP__ANY_VALUE__VALUE_ARRAY_VALUE);
    arr->array_value = malloc(sizeof *arr->array_value);
    otlp__array_value__init(arr->array_value);
    arr->array_value->n_values = 1;
    arr->array_value->values = malloc(sizeof(Otlp__AnyValue *));
    arr->array_value->values[0] = av_str("b");
    mb->kvlist_value->values[0] = kv_new("a", arr);
    r1.body = mb;

    /* a record with a trace id of the wrong length: rejected */
    Otlp__LogRecord r2 = OTLP__LOG_RECORD__INIT;
    r2.trace_id.data = trace;
    r2.trace_id.len = 5;

    Otlp__LogRecord *recs[3] = {&r0, &r1, &r2};
    Otlp__ScopeLogs sl = OTLP__SCOPE_LOGS__INIT;
    sl.scope = &scope;
    sl.n_log_records = 3;
    sl.log_records = recs;
    sl.schema_url = "https://s/1";
    Otlp__ScopeLogs *sls[1] = {&sl};
    Otlp__ResourceLogs rl = OTLP__RESOURCE_LOGS__INIT;
    rl.resource = &res;
    rl.n_scope_logs = 1;
    rl.scope_logs = sls;
    rl.schema_url = "https://opentelemetry.io/schemas/1.26.0";
    Otlp__ResourceLogs *rls[1] = {&rl};
    Otlp__ExportLogsServiceRequest req = OTLP__EXPORT_LOGS_SERVICE_REQUEST__INIT;
    req.n_resource_logs = 1;
    req.resource_logs = rls;
    *len = otlp__export_logs_service_request__get_packed_size(&req);
    uint8_t *buf = malloc(*len);
    otlp__export_logs_service_request__pack(&req, buf);
    for (int i = 0; i < 3; i++)
        kv_free(rattrs[i]);
    kv_free(sattrs[0]);
    for (int i = 0; i < 5; i++)
        kv_free(la[i]);
    av_free(r0.body);
    av_free(r1.body);
    return buf;
}

static void test_otlp_protobuf_maps_every_column(void **st)
{
    (void)st;
    size_t n;
    uint8_t *buf = build_request(&n);
    rows r = {0};
    uint64_t recs, rej;
    qr_err e;
    assert_int_equal(qh_otlp_pb_rows(buf, n, take_row, &r, &recs, &rej, &e), 0);
    assert_int_equal(recs, 3);
    assert_int_equal(rej, 1);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.lines[0], expect0);
    assert_string_equal(r.lines[1], expect1);
    /* a record refused by the table counts as rejected */
    rows r2 = {.refuse = 1};
    assert_int_equal(qh_otlp_pb_rows(buf, n, take_row, &r2, &recs, &rej, &e), 0);
    assert_int_equal(rej, 2);
    assert_int_equal(r2.n, 1);
    assert_string_equal(r2.lines[0], expect1);
    /* not a message */
    buf[0] = 0xff;
    assert_int_equal(qh_otlp_pb_rows(buf, 1, take_row, &r, &recs, &rej, &e), -1);
    assert_string_equal(e.code, QR_E_INVALID_TEXT);
    free(buf);
}

static const char *json_req =
    "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":["
    "{\"timeUnixNano\":\"1758585600000000001\",\"observedTimeUnixNano\":\"5\","
    "\"severityNumber\":\"SEVERITY_NUMBER_ERROR\",\"severityText\":\"ERROR\","
    "\"body\":{\"stringValue\":\"failed to place order\"},\"flags\":257,"
    "\"traceId\":\"5B8EFFF798038103D269B633813FC60C\",\"spanId\":\"eee19b7ec3c1b174\","
    "\"attributes\":[{\"key\":\"amount\",\"value\":{\"doubleValue\":1023.83}},"
    "{\"key\":\"n\",\"value\":{\"intValue\":-7}},{\"key\":\"raw\",\"value\":{\"bytesValue\":\"AAH/"
    "\"}},"
    "{\"key\":\"list\",\"value\":{\"arrayValue\":{\"values\":[{\"intValue\":\"1\"},{"
    "\"stringValue\":\"a\"},{\"boolValue\":true}]}}},"
    "{\"key\":\"obj\",\"value\":{\"kvlistValue\":{\"values\":[{\"key\":\"k\",\"value\":{"
    "\"doubleValue\":2.5}}]}}}],"
    "\"droppedAttributesCount\":0,\"eventName\":\"\"},"
    "{\"observed_time_unix_nano\":99,\"body\":{\"kvlistValue\":{\"values\":[{\"key\":\"a\","
    "\"value\":"
    "{\"arrayValue\":{\"values\":[{\"stringValue\":\"b\"}]}}}]}},\"traceId\":\"\",\"spanId\":\"\"},"
    "{\"traceId\":\"abc\"}"
    "],\"schemaUrl\":\"https://s/1\",\"scope\":{\"name\":\"io.shop\",\"version\":\"2.1\","
    "\"attributes\":[{\"key\":\"lib\",\"value\":{\"stringValue\":\"x\"}}]}}],"
    "\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":"
    "\"checkout\"}},"
    "{\"key\":\"process.pid\",\"value\":{\"intValue\":\"48\"}},{\"key\":\"ok\",\"value\":{"
    "\"boolValue\":true}}],"
    "\"droppedAttributesCount\":0},\"schemaUrl\":\"https://opentelemetry.io/schemas/1.26.0\"}]}";

static void test_otlp_json_maps_every_column(void **st)
{
    (void)st;
    rows r = {0};
    uint64_t recs, rej;
    qr_err e;
    /* resource and scope after their records: read first all the same */
    assert_int_equal(qh_otlp_json_rows(json_req, strlen(json_req), take_row, &r, &recs, &rej, &e),
                     0);
    assert_int_equal(recs, 3);
    assert_int_equal(rej, 1); /* traceId "abc" */
    assert_int_equal(r.n, 2);
    assert_string_equal(r.lines[0], expect0);
    assert_string_equal(r.lines[1], expect1);
    static const char *bad[] = {
        "[]",
        "{\"resourceLogs\":{}}",
        "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"x\"}]}]}]}",
        "{\"resourceLogs\":[",
        "{\"resourceLogs\":[]} x",
        "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"severityNumber\":\"LOUD\"}]}]}]}"};
    for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++) {
        rows r2 = {0};
        assert_int_equal(qh_otlp_json_rows(bad[i], strlen(bad[i]), take_row, &r2, &recs, &rej, &e),
                         -1);
        assert_string_equal(e.code, QR_E_INVALID_TEXT);
    }
    rows r3 = {0};
    assert_int_equal(qh_otlp_json_rows("{}", 2, take_row, &r3, &recs, &rej, &e), 0);
    assert_int_equal(recs, 0);
}

static void test_otlp_responses(void **st)
{
    (void)st;
    qr_buf b;
    qr_buf_init(&b);
    qh_otlp_response_pb(0, NULL, &b);
    assert_int_equal(b.len, 0); /* an empty ExportLogsServiceResponse */
    qh_otlp_response_pb(2, "bad", &b);
    Otlp__ExportLogsServiceResponse *r =
        otlp__export_logs_service_response__unpack(NULL, b.len, b.p);
    assert_non_null(r);
    assert_non_null(r->partial_success);
    assert_int_equal(r->partial_success->rejected_log_records, 2);
    assert_string_equal(r->partial_success->error_message, "bad");
    otlp__export_logs_service_response__free_unpacked(r, NULL);
    qr_buf_clear(&b);
    qh_otlp_response_json(3, "x \"y\"", &b);
    qr_buf_put_u8(&b, 0);
    assert_string_equal(
        (char *)b.p,
        "{\"partialSuccess\":{\"rejectedLogRecords\":\"3\",\"errorMessage\":\"x \\\"y\\\"\"}}");
    qr_buf_free(&b);
    char d[40];
    qh_fmt_double(0.1, d, sizeof d);
    assert_string_equal(d, "0.1");
    qh_fmt_double(1e300, d, sizeof d);
    assert_string_equal(d, "1e+300");
    qh_fmt_double(-0.0 / 0.0, d, sizeof d);
    assert_string_equal(d, "NaN");
}

/* ---- the idempotency store and the sink, over a real table ---- */
static void test_idem_survives_a_reopen_and_forgets_failed_batches(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_sql_session s;
    qr_err e;
    assert_int_equal(qr_sql_open(&s, dir, 1, &e), 0);
    qr_result res;
    qr_qctx ctx;
    qr_sql_ctx_init(&s, &ctx, NULL);
    qr_result_init(&res, &ctx);
    const char *ddl = "CREATE TABLE t (ts TIMESTAMP, msg TEXT)";
    assert_int_equal(qr_sql_exec(&s, ddl, strlen(ddl), &res, &e), 0);
    qr_result_free(&res);
    qh_idem *m = qh_idem_open(dir, &e);
    assert_non_null(m);
    /* one request: two create _ids (one twice: its second is a conflict) */
    qh_sink k;
    qh_sink_init(&k, s.db, m, 0);
    uint32_t tab;
    uint64_t a = qh_id_hash("a", 1), b = qh_id_hash("b", 1);
    const char *l1 = "{\"ts\":1,\"msg\":\"one\"}", *l2 = "{\"ts\":2,\"msg\":\"two\"}";
    assert_int_equal(qh_sink_add(&k, "T", l1, strlen(l1), a, 0, &tab, &e), 0);
    assert_int_equal(qh_sink_add(&k, "t", l2, strlen(l2), b, 1, &tab, &e), 0);
    assert_int_equal(qh_sink_add(&k, "t", l2, strlen(l2), b, 2, &tab, &e), 1);
    assert_string_equal(e.code, QH_E_CONFLICT);
    assert_int_equal(qh_sink_add(&k, "t", "{\"ts\":\"x\"}", 10, 0, 3, &tab, &e), 1);
    assert_string_equal(e.code, QR_E_INVALID_TEXT);
    assert_int_equal(qh_sink_add(&k, "nope", l1, strlen(l1), 0, 4, &tab, &e), 1);
    assert_string_equal(e.code, QR_E_UNDEFINED_TABLE);
    assert_int_equal(qh_sink_commit(&k, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(k.tabs[0].rows, 2);
    qh_sink_free(&k);
    /* a key's answer */
    qh_reply r = {201, "application/json", (unsigned char *)"{\"x\":1}", 7}, got;
    assert_int_equal(qh_idem_key_claim(m, "K1", &got), 0);
    assert_int_equal(qh_idem_key_claim(m, "K1", &got), 2); /* running */
    assert_int_equal(qh_idem_record(m, NULL, 0, NULL, 0, "K1", &r, &e), 0);
    /* a batch recorded whose commit then failed is forgotten */
    uint64_t c = qh_id_hash("c", 1);
    assert_int_equal(qh_idem_record(m, "t", 99, &c, 1, NULL, NULL, &e), 0);
    assert_true(qh_idem_has_id(m, "t", c));
    qh_idem_settle(m, "t", 99, &c, 1, NULL, 0);
    assert_false(qh_idem_has_id(m, "t", c));
    /* a batch recorded for a generation the table never reached (a crash
     * before its commit) does not count after a restart */
    uint64_t d = qh_id_hash("d", 1);
    assert_int_equal(qh_idem_record(m, "t", 50, &d, 1, NULL, NULL, &e), 0);
    qh_idem_close(m);
    m = qh_idem_open(dir, &e);
    assert_non_null(m);
    assert_true(qh_idem_has_id(m, "t", a));
    assert_true(qh_idem_has_id(m, "t", b));
    assert_false(qh_idem_has_id(m, "t", c));
    assert_false(qh_idem_has_id(m, "t", d));
    assert_int_equal(qh_idem_key_claim(m, "K1", &got), 1);
    assert_int_equal(got.status, 201);
    assert_int_equal(got.n, 7);
    assert_memory_equal(got.body, "{\"x\":1}", 7);
    free(got.body);
    /* the same _id in a later request: refused */
    qh_sink_init(&k, s.db, m, 0);
    assert_int_equal(qh_sink_add(&k, "t", l1, strlen(l1), a, 0, &tab, &e), 1);
    assert_string_equal(e.code, QH_E_CONFLICT);
    qh_sink_free(&k);
    /* a torn tail is cut */
    char path[4200];
    snprintf(path, sizeof path, "%s/HTTP_IDEMPOTENCY", dir);
    FILE *f = fopen(path, "ab");
    fwrite("\x40\0\0\0garbage", 1, 11, f);
    fclose(f);
    qh_idem_close(m);
    m = qh_idem_open(dir, &e);
    assert_non_null(m);
    assert_true(qh_idem_has_id(m, "t", a));
    qh_idem_close(m);
    qr_sql_close(&s);
    tu_rmdir(dir);
}

/* ---- a request over two tables: the second's rows wait their turn ---- */
typedef struct fails {
    uint64_t seq[8];
    int status[8];
    int n;
} fails;
static void on_fail(void *arg, uint64_t seq, int status, const qr_err *e)
{
    (void)e;
    fails *f = arg;
    f->seq[f->n] = seq;
    f->status[f->n++] = status;
}
static int one_reply(void *arg, qh_reply *r)
{
    (void)arg;
    r->status = 200;
    snprintf(r->ctype, sizeof r->ctype, "application/json");
    r->body = (unsigned char *)strdup("{}");
    r->n = 2;
    return 0;
}

static void test_sink_two_tables_one_writer_at_a_time(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_sql_session s;
    qr_err e;
    assert_int_equal(qr_sql_open(&s, dir, 1, &e), 0);
    qr_qctx ctx;
    qr_sql_ctx_init(&s, &ctx, NULL);
    const char *ddl[] = {"CREATE TABLE a (ts TIMESTAMP, v INT64)",
                         "CREATE TABLE b (ts TIMESTAMP, v INT64)"};
    for (int i = 0; i < 2; i++) {
        qr_result res;
        qr_result_init(&res, &ctx);
        assert_int_equal(qr_sql_exec(&s, ddl[i], strlen(ddl[i]), &res, &e), 0);
        qr_result_free(&res);
    }
    qh_idem *m = qh_idem_open(dir, &e);
    assert_non_null(m);
    qh_sink k;
    qh_sink_init(&k, s.db, m, 0);
    uint32_t tab;
    const char *r1 = "{\"ts\":1,\"v\":1}", *r2 = "{\"ts\":2,\"v\":2}",
               *bad = "{\"ts\":3,\"v\":\"x\"}";
    uint64_t x = qh_id_hash("x", 1);
    assert_int_equal(qh_sink_add(&k, "a", r1, strlen(r1), 0, 0, &tab, &e), 0);
    assert_int_equal(k.cur, 0);
    assert_int_equal(qh_sink_add(&k, "b", r1, strlen(r1), x, 1, &tab, &e), 0); /* waits */
    assert_int_equal(tab, 1);
    assert_int_equal(k.cur, 0);
    assert_int_equal(k.nwait, 1);
    assert_int_equal(qh_sink_add(&k, "a", r2, strlen(r2), 0, 2, &tab, &e), 0);
    assert_int_equal(qh_sink_add(&k, "b", r2, strlen(r2), x, 3, &tab, &e),
                     0); /* dup id: at its turn */
    assert_int_equal(qh_sink_add(&k, "b", bad, strlen(bad), 0, 4, &tab, &e),
                     0); /* bad: at its turn */
    fails f = {0};
    assert_int_equal(qh_sink_commit(&k, "key-2t", one_reply, on_fail, &f), 0);
    assert_int_equal(f.n, 2);
    assert_int_equal(f.seq[0], 3);
    assert_int_equal(f.status[0], 409);
    assert_int_equal(f.seq[1], 4);
    assert_int_equal(f.status[1], 400);
    assert_int_equal(k.tabs[0].rows, 2);
    assert_int_equal(k.tabs[1].rows, 1);
    assert_int_equal(k.tabs[0].status, 0);
    assert_int_equal(k.tabs[1].status, 0);
    qh_sink_free(&k);
    qh_reply got;
    assert_int_equal(qh_idem_key_claim(m, "key-2t", &got), 1); /* stored with b's commit */
    free(got.body);
    assert_true(qh_idem_has_id(m, "b", x));
    qr_result res;
    qr_result_init(&res, &ctx);
    const char *q = "SELECT (SELECT count(*) FROM a) * 10 + (SELECT count(*) FROM b)";
    assert_int_equal(qr_sql_exec(&s, q, strlen(q), &res, &e), 0);
    assert_int_equal(res.nrows, 1);
    assert_int_equal(res.cells[0].i, 21); /* a: 2 rows, b: 1 */
    qr_result_free(&res);
    qh_idem_close(m);
    qr_sql_close(&s);
    tu_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bulk_actions_and_sources),
        cmocka_unit_test(test_bulk_malformed_lines),
        cmocka_unit_test(test_otlp_protobuf_maps_every_column),
        cmocka_unit_test(test_otlp_json_maps_every_column),
        cmocka_unit_test(test_otlp_responses),
        cmocka_unit_test(test_idem_survives_a_reopen_and_forgets_failed_batches),
        cmocka_unit_test(test_sink_two_tables_one_writer_at_a_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
