/* test_infer.c - table definitions inferred from NDJSON samples: every rule
 * of docs/INFERENCE.md with the exact definition expected. A definition is
 * compared as one line per column:
 *   "name type[/tsfmt][ sort][ extra][ kind#id[=alias]]..." joined by " | ". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/schema.h"
#include "ingest/infer.h"
#include "util/buf.h"

/* The definition as one line (static buffer). */
static const char *describe(const qr_tabdef *d)
{
    static char out[1 << 16];
    size_t o = 0;
    out[0] = 0;
    for (uint32_t i = 0; i < d->ncols && o < sizeof out - 512; i++) {
        const qr_coldef *c = &d->cols[i];
        o += (size_t)snprintf(out + o, sizeof out - o, "%s%s %s", i ? " | " : "", c->name,
                              qr_type_name(c->type));
        if (c->type == QT_TIMESTAMP)
            o += (size_t)snprintf(out + o, sizeof out - o, "/%s", qr_tsfmt_name(c->tsfmt));
        if ((int32_t)i == d->sort_col)
            o += (size_t)snprintf(out + o, sizeof out - o, " sort");
        if ((int32_t)i == d->extra_col)
            o += (size_t)snprintf(out + o, sizeof out - o, " extra");
        for (uint32_t k = 0; k < d->nixs; k++) {
            const qr_ixdef *x = &d->ixs[k];
            if (x->col != i)
                continue;
            o +=
                (size_t)snprintf(out + o, sizeof out - o, " %s#%u", qr_ixkind_name(x->kind), x->id);
            if (x->name)
                o += (size_t)snprintf(out + o, sizeof out - o, "=%s", x->name);
        }
    }
    return out;
}

/* Infer from `text`; checks what every inferred (non-OTel) table shares. */
static qr_tabdef *infer_text(const char *text, size_t n)
{
    qr_err e;
    qr_err_clear(&e);
    qr_tabdef *d = qr_infer_schema("t", text, n, "in.json", &e);
    if (!d) {
        fail_msg("inference failed: %s", e.msg);
        abort(); /* not reached: tells the analyzers */
    }
    assert_string_equal(d->name, "t");
    assert_int_equal(qr_tabdef_validate(d, "test", &e), 0);
    return d;
}

static void expect(const char *text, const char *want)
{
    qr_tabdef *d = infer_text(text, strlen(text));
    const char *got = describe(d);
    if (strcmp(got, want) != 0)
        fail_msg("\n  got  \"%s\"\n  want \"%s\"", got, want);
    assert_int_equal(d->omit_nulls, 1);
    assert_true(d->extra_col == (int32_t)d->ncols - 1);
    for (uint32_t i = 0; i < d->ncols; i++)
        assert_int_equal(d->cols[i].nullable, 1);
    for (uint32_t k = 0; k < d->nixs; k++) {
        assert_int_equal(d->ixs[k].lowercase, 1);
        assert_int_equal(d->ixs[k].positions, d->ixs[k].kind == QR_IX_FULLTEXT);
    }
    qr_tabdef_free(d);
}

static void expect_error(const char *text, size_t n, const char *msg)
{
    qr_err e;
    qr_err_clear(&e);
    qr_tabdef *d = qr_infer_schema("t", text, n, "in.json", &e);
    if (d)
        fail_msg("inferred \"%s\"", describe(d));
    assert_string_equal(e.code, QR_E_INVALID_TEXT);
    assert_string_equal(e.msg, msg);
}

static void test_http_logs(void **st)
{
    (void)st;
    expect("{\"@timestamp\":893964617,\"clientip\":\"40.135.0.0\",\"request\":\"GET "
           "/images/hm_bg.jpg HTTP/1.0\",\"status\":200,\"size\":24736}\n"
           "{\"@timestamp\":893964653,\"clientip\":\"232.0.0.0\",\"request\":\"GET "
           "/images/hm_bg.jpg HTTP/1.0\",\"status\":200,\"size\":24120}\n"
           "{\"@timestamp\":893964672,\"clientip\":\"26.1.0.0\",\"request\":\"GET "
           "/english/index.html HTTP/1.0\",\"status\":304,\"size\":0}\n"
           "{\"@timestamp\":893964679,\"clientip\":\"247.37.0.0\",\"request\":\"GET "
           "/english/nav_top_inet.gif HTTP/1.0\",\"status\":200,\"size\":2912}\n"
           "{\"@timestamp\":893964682,\"clientip\":\"247.37.0.0\",\"request\":\"GET "
           "/english/splash_inet.html HTTP/1.0\",\"status\":404}\n"
           "{\"@timestamp\":893964689,\"clientip\":\"252.0.0.0\",\"request\":\"GET "
           "/english/images/nav_news_off.gif HTTP/1.0\",\"status\":200,\"size\":1389}\n",
           "@timestamp timestamp/epoch_s sort | clientip text keyword#1=clientip | request text "
           "fulltext#2=request | status int64 range#3=status | size int64 | _extra json extra "
           "paths#4=_extra");
}

static void test_github_events(void **st)
{
    (void)st;
    expect(
        "{\"id\":\"2489651045\",\"type\":\"CreateEvent\",\"actor\":{\"id\":665991,\"login\":"
        "\"petroav\",\"gravatar_id\":\"\",\"url\":\"https://api.github.com/users/petroav\","
        "\"avatar_url\":\"https://avatars.githubusercontent.com/u/665991?\"},\"repo\":{\"id\":"
        "28688495,\"name\":\"petroav/6.828\",\"url\":\"https://api.github.com/repos/petroav/"
        "6.828\"},\"payload\":{\"ref\":\"master\",\"ref_type\":\"branch\",\"master_branch\":"
        "\"master\",\"description\":\"Solution to homework and assignments from MIT's 6.828 "
        "(Operating Systems Engineering). Done in my spare time.\",\"pusher_type\":\"user\"},"
        "\"public\":true,\"created_at\":\"2015-01-01T15:00:00Z\"}\n"
        "{\"id\":\"2489651051\",\"type\":\"PushEvent\",\"actor\":{\"id\":3854017,\"login\":"
        "\"rspt\",\"gravatar_id\":\"\",\"url\":\"https://api.github.com/users/rspt\","
        "\"avatar_url\":\"https://avatars.githubusercontent.com/u/3854017?\"},\"repo\":{\"id\":"
        "28671719,\"name\":\"rspt/rspt-theme\",\"url\":\"https://api.github.com/repos/rspt/"
        "rspt-theme\"},\"payload\":{\"push_id\":536863970,\"size\":1,\"ref\":\"refs/heads/"
        "master\",\"head\":\"6b089eb4a43f728f0a594388092f480f2ecacfcd\",\"commits\":[{\"sha\":"
        "\"6b089eb4a43f728f0a594388092f480f2ecacfcd\",\"author\":{\"email\":"
        "\"5c682c2d1ec4073e277f9ba9f4bdf07e5794dabe@rspt.ch\",\"name\":\"rspt\"},\"message\":"
        "\"Bump to 0.2.1, fix the nav bar on small screens\",\"distinct\":true,\"url\":\"https://"
        "api.github.com/repos/rspt/rspt-theme/commits/"
        "6b089eb4a43f728f0a594388092f480f2ecacfcd\"}]},\"public\":true,\"created_at\":"
        "\"2015-01-01T15:00:01Z\"}\n"
        "{\"id\":\"2489651053\",\"type\":\"PushEvent\",\"actor\":{\"id\":6339799,\"login\":"
        "\"izuzero\",\"gravatar_id\":\"\",\"url\":\"https://api.github.com/users/izuzero\","
        "\"avatar_url\":\"https://avatars.githubusercontent.com/u/6339799?\"},\"repo\":{\"id\":"
        "28270952,\"name\":\"izuzero/xe-module-ajaxboard\",\"url\":\"https://api.github.com/"
        "repos/izuzero/xe-module-ajaxboard\"},\"payload\":{\"push_id\":536863972,\"size\":1,"
        "\"commits\":[{\"message\":\"Merge branch 'develop' into feature/gh-pages and update "
        "the docs\"}]},\"public\":false,\"created_at\":\"2015-01-01T15:00:01Z\",\"org\":{\"id\":"
        "9285252,\"login\":\"visionmedia\",\"gravatar_id\":\"\",\"url\":\"https://"
        "api.github.com/orgs/visionmedia\",\"avatar_url\":\"https://"
        "avatars.githubusercontent.com/u/9285252?\"}}\n"
        "{\"id\":\"2489651057\",\"type\":\"WatchEvent\",\"actor\":{\"id\":1,\"login\":\"x\"},"
        "\"repo\":{\"id\":2,\"name\":\"x/y\"},\"payload\":{\"action\":\"started\"},\"public\":"
        "true,\"created_at\":\"2015-01-01T15:00:03Z\"}\n",
        "id text keyword#1=id | type text keyword#2=type | actor json paths#3=actor | repo json "
        "paths#4=repo | payload json paths#5=payload fulltext#6 | public bool range#7=public | "
        "created_at timestamp/rfc3339_short sort | org json paths#8=org | _extra json extra "
        "paths#9=_extra");
}

static const char otel_line[] =
    "{\"Timestamp\":\"2024-05-01T10:00:00Z\",\"TraceId\":\"\",\"SpanId\":\"\",\"TraceFlags\":0,"
    "\"SeverityText\":\"INFO\",\"SeverityNumber\":9,\"ServiceName\":\"api\",\"Body\":\"hello "
    "world\",\"ResourceSchemaUrl\":\"\",\"ResourceAttributes\":{},\"ScopeSchemaUrl\":\"\","
    "\"ScopeName\":\"\",\"ScopeVersion\":\"\",\"ScopeAttributes\":{},\"LogAttributes\":{}}\n";

static void test_otel_preset(void **st)
{
    (void)st;
    qr_tabdef *want = qr_tabdef_otel("t");
    qr_tabdef *d = infer_text(otel_line, strlen(otel_line));
    assert_true(qr_tabdef_equal(d, want));
    qr_tabdef_free(d);
    /* any order and case of the keys; later lines do not matter */
    const char *other = "{\"logattributes\":{},\"scopeattributes\":{},\"scopeversion\":\"\","
                        "\"scopename\":\"\",\"scopeschemaurl\":\"\",\"resourceattributes\":{},"
                        "\"resourceschemaurl\":\"\",\"body\":\"x\",\"servicename\":\"a\","
                        "\"severitynumber\":1,\"severitytext\":\"\",\"traceflags\":0,"
                        "\"spanid\":\"\",\"traceid\":\"\",\"timestamp\":1}\n{\"other\":1}\n";
    d = infer_text(other, strlen(other));
    assert_true(qr_tabdef_equal(d, want));
    qr_tabdef_free(d);
    qr_tabdef_free(want);
}

static void test_otel_needs_exact_keys_on_first_object(void **st)
{
    (void)st;
    /* a 16th key: not the preset */
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s,\"extra\":1}\n", (int)strlen(otel_line) - 2, otel_line);
    qr_tabdef *d = infer_text(buf, strlen(buf));
    assert_int_equal(d->ncols, 17);
    assert_string_equal(d->cols[15].name, "extra");
    qr_tabdef_free(d);
    /* the OTel object is not the first usable one */
    snprintf(buf, sizeof buf, "not json\n{\"a\":1}\n%s", otel_line);
    d = infer_text(buf, strlen(buf));
    assert_int_equal(d->ncols, 17);
    assert_string_equal(d->cols[0].name, "a");
    qr_tabdef_free(d);
    /* a bad line before it does not count */
    snprintf(buf, sizeof buf, "[1]\n\n%s", otel_line);
    qr_tabdef *want = qr_tabdef_otel("t");
    d = infer_text(buf, strlen(buf));
    assert_true(qr_tabdef_equal(d, want));
    qr_tabdef_free(d);
    qr_tabdef_free(want);
}

static void test_mixed_kinds_are_json(void **st)
{
    (void)st;
    expect("{\"v\":1,\"b\":true,\"o\":{\"k\":\"x\"},\"a\":[1,\"two\"],\"n\":null,\"s\":\"x\"}\n"
           "{\"v\":\"one\",\"b\":1,\"o\":[3],\"a\":null,\"n\":null,\"s\":{}}\n",
           "v json paths#1=v | b json paths#2=b | o json paths#3=o | a json paths#4=a | n text | s "
           "json paths#5=s | _extra json extra paths#6=_extra");
}

static void test_floats(void **st)
{
    (void)st;
    expect(
        "{\"f\":1,\"g\":1.5,\"h\":2e3,\"i\":7,\"neg\":-0.25}\n"
        "{\"f\":2.5,\"g\":3,\"h\":1,\"i\":-7,\"neg\":-1E-3}\n"
        "{\"f\":2.5,\"g\":3,\"h\":1,\"i\":0,\"neg\":-0.25}\n"
        "{\"f\":2.5,\"g\":3,\"h\":1,\"i\":5,\"neg\":-0.25}\n",
        "f float64 range#1=f | g float64 range#2=g | h float64 range#3=h | i int64 | neg float64 "
        "range#4=neg | _extra json extra paths#5=_extra");
}

static void test_big_integers(void **st)
{
    (void)st;
    expect("{\"u\":18446744073709551615,\"v\":9223372036854775808,\"h\":"
           "123456789012345678901234567890,\"m\":-9223372036854775808}\n"
           "{\"u\":1,\"v\":-1,\"h\":1,\"m\":9223372036854775807}\n",
           "u uint64 | v float64 | h float64 | m int64 | _extra json extra paths#1=_extra");
}

static void test_epoch_units(void **st)
{
    (void)st;
    expect("{\"start_time\":1700000000,\"ts\":1700000000123,\"event_time\":1700000000123456,"
           "\"created_at\":1700000000123456789,\"count\":1700000000,\"date\":20240101,"
           "\"time\":1700000000}\n"
           "{\"start_time\":631152000,\"ts\":4102444799999,\"event_time\":1700000000123999,"
           "\"created_at\":1700000000123456790,\"count\":1700000001,\"date\":20240102,"
           "\"time\":1700000000000}\n",
           "start_time timestamp/epoch_s | ts timestamp/epoch_ms sort | event_time "
           "timestamp/epoch_us | created_at timestamp/epoch_ns | count int64 | date int64 | time "
           "int64 | _extra json extra paths#1=_extra");
    /* just outside 1990..2099 in seconds */
    expect("{\"ts\":631151999}\n{\"ts\":1700000000}\n",
           "ts int64 | _extra json extra paths#1=_extra");
    expect("{\"ts\":4102444800}\n", "ts int64 | _extra json extra paths#1=_extra");
    /* a repeated non-sort timestamp gets a range index */
    expect(
        "{\"ts\":1700000000,\"Seen_At\":1700000000}\n{\"ts\":1700000001,\"Seen_At\":1700000000}\n",
        "ts timestamp/epoch_s sort | Seen_At timestamp/epoch_s range#1=seen_at | _extra json "
        "extra paths#2=_extra");
}

static void test_rfc3339_strings(void **st)
{
    (void)st;
    expect("{\"when\":\"2024-01-01T00:00:00Z\",\"d\":\"2024-01-01\",\"x\":\"2024-01-01T00:00:00Z\","
           "\"lower\":\"2024-01-01t00:00:00Z\"}\n"
           "{\"when\":\"2024-01-01 10:00:00.5+02:00\",\"d\":\"2024-01-02\",\"x\":\"soon\","
           "\"lower\":\"2024-01-01t00:00:00Z\"}\n",
           "when timestamp/rfc3339_short sort | d text keyword#1=d | x text keyword#2=x | lower text "
           "keyword#3=lower | _extra json extra paths#4=_extra");
}

static void test_sort_column_choice(void **st)
{
    (void)st;
    const char *t = "\"2024-01-01T00:00:00Z\"";
    char buf[1024];
    snprintf(buf, sizeof buf, "{\"updated_at\":%s,\"created_at\":%s,\"time\":%s,\"other\":%s}\n", t,
             t, t, t);
    expect(buf, "updated_at timestamp/rfc3339_short | created_at timestamp/rfc3339_short | time "
                "timestamp/rfc3339_short sort | other timestamp/rfc3339_short | _extra json extra "
                "paths#1=_extra");
    snprintf(buf, sizeof buf, "{\"ts\":%s,\"TIMESTAMP\":%s,\"@timestamp\":%s}\n{\"ts\":%s}\n", t, t,
             t, t);
    expect(buf, "ts timestamp/rfc3339_short range#1=ts | TIMESTAMP timestamp/rfc3339_short | @timestamp "
                "timestamp/rfc3339_short sort | _extra json extra paths#2=_extra");
    /* no time-like name: the first timestamp column */
    snprintf(buf, sizeof buf, "{\"a\":%s,\"b\":%s}\n{\"a\":\"2024-01-02T00:00:00Z\",\"b\":%s}\n", t,
             t, t);
    expect(buf, "a timestamp/rfc3339_short sort | b timestamp/rfc3339_short range#1=b | _extra json extra "
                "paths#2=_extra");
    /* no timestamp: insertion order */
    qr_tabdef *d = infer_text("{\"a\":1}\n", 8);
    assert_int_equal(d->sort_col, -1);
    qr_tabdef_free(d);
}

static void test_text_indexes(void **st)
{
    (void)st;
    /* uuid: a long token, keyword; prose: fulltext; a long token over 64
     * bytes: fulltext; short values with one long outlier: none; names */
    char lng[101], mid[71];
    memset(lng, 'a', 100), lng[100] = 0;
    memset(mid, 'b', 70), mid[70] = 0;
    char buf[4096];
    size_t o = 0;
    for (int i = 0; i < 10; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o,
                              "{\"uuid\":\"6f1c0c4e-2d0b-4a38-9b55-%012d\",\"text\":\"a b\","
                              "\"blob\":\"%s\",\"code\":\"%s\",\"msg\":\"ok\",\"log\":\"x\","
                              "\"user.name\":\"bob\",\"time\":\"x\",\"9lives\":\"y\","
                              "\"Status\":\"OK\"}\n",
                              i, lng, i ? "ab" : mid);
    expect(buf, "uuid text keyword#1=uuid | text text fulltext#2=text | blob text fulltext#3=blob "
                "| code text | msg text fulltext#4=msg | log text fulltext#5=log | user.name text "
                "keyword#6 | time text keyword#7 | 9lives text keyword#8 | Status text "
                "keyword#9=status | _extra json extra paths#10=_extra");
}

static void test_spaces_in_half_the_values(void **st)
{
    (void)st;
    expect("{\"a\":\"x y\",\"b\":\"x y\"}\n{\"a\":\"xy\",\"b\":\"xy\"}\n{\"b\":\"xy\"}\n",
           "a text fulltext#1=a | b text keyword#2=b | _extra json extra paths#3=_extra");
}

static void test_json_fulltext(void **st)
{
    (void)st;
    /* long prose leaves anywhere in the tree; short ones do not count */
    expect("{\"p\":{\"a\":[{\"m\":\"the quick brown fox jumps over the lazy dog\"}]},\"q\":{\"a\":"
           "\"x\"}}\n"
           "{\"p\":{\"b\":\"id\"},\"q\":[\"1\",2,null,true]}\n",
           "p json paths#1=p fulltext#2 | q json paths#3=q | _extra json extra paths#4=_extra");
}

static void test_only_nulls(void **st)
{
    (void)st;
    expect("{\"a\":null}\n{\"a\":null,\"b\":[]}\n",
           "a text | b json paths#1=b | _extra json extra paths#2=_extra");
}

static void test_bad_lines_skipped(void **st)
{
    (void)st;
    /* trailing comma, a repeated key (case-folded too), an array, trailing
     * text, a bad escape: none of their values count */
    expect("{\"status\":200,\"Key\":\"a\"}\n"
           "{\"status\":\"oops\",}\n"
           "{\"status\":\"oops\",\"status\":1}\n"
           "{\"status\":\"oops\",\"STATUS\":1}\n"
           "[{\"status\":\"oops\"}]\n"
           "{\"status\":\"oops\"} x\n"
           "{\"status\":\"\\q\"}\n"
           "\n   \r\n"
           "{\"key\":\"b\",\"status\":200}\r\n",
           "status int64 range#1=status | Key text keyword#2=key | _extra json extra "
           "paths#3=_extra");
}

static void test_first_spelling_and_order(void **st)
{
    (void)st;
    expect("{\"b\":1}\n{\"A\":\"x\",\"b\":2}\n{\"c\":true,\"a\":\"y\"}\n",
           "b int64 | A text keyword#1=a | c bool | _extra json extra paths#2=_extra");
}

static void test_no_usable_object(void **st)
{
    (void)st;
    const char *bad = "not json\n[1,2]\n\"str\"\n{\"a\":\n{\"a\":1,\"a\":2}\n";
    expect_error(bad, strlen(bad),
                 "in.json: no JSON object in the first 5 lines to infer a schema from; give "
                 "--schema");
    expect_error("", 0,
                 "in.json: empty input: no JSON object to infer a schema from; give --schema");
    expect_error("42", 2,
                 "in.json: no JSON object in the first line to infer a schema from; give --schema");
    expect_error("{\"a\":1}", 5, /* cut short */
                 "in.json: no JSON object in the first line to infer a schema from; give --schema");
}

static void test_last_line(void **st)
{
    (void)st;
    /* cut mid-line: ignored; whole without a newline: counts */
    expect("{\"a\":1}\n{\"b\":2,\"c\":\"x", "a int64 | _extra json extra paths#1=_extra");
    expect("{\"a\":1}\n{\"b\":2}", "a int64 | b int64 | _extra json extra paths#1=_extra");
    /* an empty object is usable: only the catch-all */
    expect("{}\n", "_extra json extra paths#1=_extra");
}

static void test_column_names(void **st)
{
    (void)st;
    /* a control byte or more than 255 bytes: not a column, goes to the
     * catch-all; the catch-all name steps past taken ones */
    char buf[1024];
    char lng[257];
    memset(lng, 'k', 256), lng[256] = 0;
    snprintf(buf, sizeof buf,
             "{\"bad\\u0001key\":1,\"%s\":2,\"_extra\":3,\"_Extra2\":4,\"ok\":5}\n", lng);
    expect(buf, "_extra int64 | _Extra2 int64 | ok int64 | _extra3 json extra paths#1=_extra3");
}

static void test_column_cap(void **st)
{
    (void)st;
    qr_buf b;
    qr_buf_init(&b);
    char tmp[64];
    for (int line = 0; line < 2; line++) {
        qr_buf_put(&b, "{", 1);
        for (int i = 0; i < 1100; i++) {
            int n = snprintf(tmp, sizeof tmp, "%s\"k%d\":%d", i ? "," : "", line ? 1099 - i : i, i);
            qr_buf_put(&b, tmp, (size_t)n);
        }
        qr_buf_put(&b, "}\n", 2);
    }
    qr_tabdef *d = infer_text((const char *)b.p, b.len);
    assert_int_equal(d->ncols, QR_MAX_COLUMNS);
    assert_string_equal(d->cols[0].name, "k0");
    assert_string_equal(d->cols[QR_MAX_COLUMNS - 2].name, "k1022");
    assert_string_equal(d->cols[QR_MAX_COLUMNS - 1].name, "_extra");
    assert_int_equal(d->extra_col, QR_MAX_COLUMNS - 1);
    assert_int_equal(d->nixs, 1);
    qr_tabdef_free(d);
    qr_buf_free(&b);
}

static void test_index_cap(void **st)
{
    (void)st;
    /* 40 prose and 40 keyword columns: all the fulltext indexes are kept,
     * then keywords up to QR_MAX_INDEXES, numbered in column order */
    qr_buf b;
    qr_buf_init(&b);
    char tmp[64];
    qr_buf_put(&b, "{", 1);
    for (int i = 0; i < 40; i++) {
        int n = snprintf(tmp, sizeof tmp, "%s\"t%d\":\"a b\",\"k%d\":\"x\"", i ? "," : "", i, i);
        qr_buf_put(&b, tmp, (size_t)n);
    }
    qr_buf_put(&b, "}\n", 2);
    qr_tabdef *d = infer_text((const char *)b.p, b.len);
    assert_int_equal(d->nixs, QR_MAX_INDEXES);
    assert_int_equal(qr_tabdef_index_on(d, qr_tabdef_col(d, "t39", 3), QR_IX_FULLTEXT), 63);
    assert_int_equal(qr_tabdef_index_on(d, qr_tabdef_col(d, "k23", 3), QR_IX_KEYWORD), 47);
    assert_int_equal(qr_tabdef_index_on(d, qr_tabdef_col(d, "k24", 3), QR_IX_KEYWORD), -1);
    assert_int_equal(qr_tabdef_index_on(d, d->extra_col, QR_IX_PATHS), -1);
    for (uint32_t k = 0; k < d->nixs; k++) {
        assert_int_equal(d->ixs[k].id, k + 1);
        if (k)
            assert_true(d->ixs[k].col > d->ixs[k - 1].col);
    }
    qr_tabdef_free(d);
    qr_buf_free(&b);
}

static void test_deep_nesting(void **st)
{
    (void)st;
    /* the object is depth 1: 63 arrays inside it are the most JSON allows */
    char ok[256], deep[256];
    snprintf(ok, sizeof ok, "{\"d\":%.*s\"deep\"%.*s}\n", 63,
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", 63,
             "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
    expect(ok, "d json paths#1=d | _extra json extra paths#2=_extra");
    snprintf(deep, sizeof deep, "{\"d\":%.*s%.*s}\n", 64,
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", 64,
             "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
    expect_error(deep, strlen(deep),
                 "in.json: no JSON object in the first line to infer a schema from; give --schema");
}

static void test_huge_lines(void **st)
{
    (void)st;
    /* a 2 MiB string, an object of 20000 members, a 1 MiB escaped key set */
    qr_buf b;
    qr_buf_init(&b);
    qr_buf_put(&b, "{\"note\":\"", 9);
    for (int i = 0; i < (2 << 20) / 8; i++)
        qr_buf_put(&b, "word \\t  ", 8);
    qr_buf_put(&b, "\",\"attrs\":{", 11);
    char tmp[64];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(tmp, sizeof tmp, "%s\"a%d\":\"v%d\"", i ? "," : "", i, i);
        qr_buf_put(&b, tmp, (size_t)n);
    }
    qr_buf_put(&b, "}}\n", 3);
    qr_buf_put(&b, "{\"note\":\"short\",\"attrs\":{}}\n", 28);
    qr_tabdef *d = infer_text((const char *)b.p, b.len);
    assert_string_equal(describe(d), "note text fulltext#1=note | attrs json paths#2=attrs | "
                                     "_extra json extra paths#3=_extra");
    qr_tabdef_free(d);
    qr_buf_free(&b);
}

static void test_many_distinct_values(void **st)
{
    (void)st;
    /* status repeats (range); n has more than 1000 distinct values (none)
     * although each repeats */
    qr_buf b;
    qr_buf_init(&b);
    char tmp[96];
    for (int i = 0; i < 6000; i++) {
        int n = snprintf(tmp, sizeof tmp, "{\"status\":%d,\"n\":%d,\"ip\":\"10.0.%d.%d\"}\n",
                         200 + i % 7, i % 3000, i / 256, i % 256);
        qr_buf_put(&b, tmp, (size_t)n);
    }
    qr_tabdef *d = infer_text((const char *)b.p, b.len);
    assert_string_equal(describe(d), "status int64 range#1=status | n int64 | ip text "
                                     "keyword#2=ip | _extra json extra paths#3=_extra");
    qr_tabdef_free(d);
    qr_buf_free(&b);
}

static void test_sample_line_limit(void **st)
{
    (void)st;
    /* keys after QR_INFER_SAMPLE_LINES lines are not seen */
    qr_buf b;
    qr_buf_init(&b);
    for (int i = 0; i < QR_INFER_SAMPLE_LINES; i++)
        qr_buf_put(&b, "{\"a\":1}\n", 8);
    qr_buf_put(&b, "{\"late\":1}\n", 11);
    qr_tabdef *d = infer_text((const char *)b.p, b.len);
    assert_string_equal(describe(d), "a int64 range#1=a | _extra json extra paths#2=_extra");
    qr_tabdef_free(d);
    qr_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_logs),
        cmocka_unit_test(test_github_events),
        cmocka_unit_test(test_otel_preset),
        cmocka_unit_test(test_otel_needs_exact_keys_on_first_object),
        cmocka_unit_test(test_mixed_kinds_are_json),
        cmocka_unit_test(test_floats),
        cmocka_unit_test(test_big_integers),
        cmocka_unit_test(test_epoch_units),
        cmocka_unit_test(test_rfc3339_strings),
        cmocka_unit_test(test_sort_column_choice),
        cmocka_unit_test(test_text_indexes),
        cmocka_unit_test(test_spaces_in_half_the_values),
        cmocka_unit_test(test_json_fulltext),
        cmocka_unit_test(test_only_nulls),
        cmocka_unit_test(test_bad_lines_skipped),
        cmocka_unit_test(test_first_spelling_and_order),
        cmocka_unit_test(test_no_usable_object),
        cmocka_unit_test(test_last_line),
        cmocka_unit_test(test_column_names),
        cmocka_unit_test(test_column_cap),
        cmocka_unit_test(test_index_cap),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_huge_lines),
        cmocka_unit_test(test_many_distinct_values),
        cmocka_unit_test(test_sample_line_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
