/* test_tabdef_json.c - tests for the JSON form of a table definition
 * (format/tabdef_json.c): the exact text written for the OpenTelemetry
 * preset and for a definition using every type, format and option; both
 * round trips; a hand-written file (keys in any order, aliases, absent ids
 * placed after explicit ones); and every error with its exact code and
 * "SRC:LINE:COL" message.
 *
 * Inputs are copied into malloc'ed buffers of their exact size, so ASan
 * catches any read past the end. (Self-contained: testutil.h pulls in the
 * segment code, which is being rewritten.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/schema.h"

/* ---- helpers ---- */

static qr_tabdef *parse(const char *text, const char *src, qr_err *e)
{
    size_t n = strlen(text);
    char *buf = malloc(n ? n : 1);
    assert_non_null(buf);
    memcpy(buf, text, n);
    qr_err_clear(e);
    qr_tabdef *d = qr_tabdef_from_json(buf, n, src, e);
    free(buf);
    return d;
}

static qr_tabdef *parse_ok(const char *text)
{
    qr_err e;
    qr_tabdef *d = parse(text, "t.json", &e);
    if (!d)
        fail_msg("rejected: %s %s\n%s", e.code, e.msg, text);
    return d;
}

/* d as JSON, NUL-terminated; caller frees. */
static char *to_json(const qr_tabdef *d)
{
    qr_buf b;
    qr_buf_init(&b);
    qr_tabdef_to_json(d, &b);
    qr_buf_put_u8(&b, 0);
    assert_false(b.oom);
    return (char *)b.p;
}

typedef struct {
    const char *text, *code, *msg;
} err_case;

static void check_errors(const err_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        qr_err e;
        qr_tabdef *d = parse(cases[i].text, "t.json", &e);
        if (d) {
            qr_tabdef_free(d);
            fail_msg("accepted: %s", cases[i].text);
        }
        if (strcmp(e.code, cases[i].code) != 0 || strcmp(e.msg, cases[i].msg) != 0)
            fail_msg("case %zu: %s\nwant %s %s\ngot  %s %s", i, cases[i].text, cases[i].code,
                     cases[i].msg, e.code, e.msg);
    }
}

/* to_json(d) parses back to an equal definition that prints the same. */
static void check_round_trip(const qr_tabdef *d)
{
    char *j1 = to_json(d);
    qr_tabdef *d2 = parse_ok(j1);
    assert_true(qr_tabdef_equal(d, d2));
    if (d->name)
        assert_string_equal(d2->name, d->name);
    else
        assert_null(d2->name);
    char *j2 = to_json(d2);
    assert_string_equal(j2, j1);
    free(j1);
    free(j2);
    qr_tabdef_free(d2);
}

#define C0 ", \"columns\": [{\"name\": \"a\", \"type\": \"text\"}]"

/* ---- writing and round trips ---- */

static const char otel_json[] =
    "{\n"
    "  \"name\": \"otel_logs\",\n"
    "  \"columns\": [\n"
    "    {\"name\": \"Timestamp\", \"type\": \"timestamp\"},\n"
    "    {\"name\": \"TraceId\", \"type\": \"text\"},\n"
    "    {\"name\": \"SpanId\", \"type\": \"text\"},\n"
    "    {\"name\": \"TraceFlags\", \"type\": \"uint8\"},\n"
    "    {\"name\": \"SeverityText\", \"type\": \"text\"},\n"
    "    {\"name\": \"SeverityNumber\", \"type\": \"int32\"},\n"
    "    {\"name\": \"ServiceName\", \"type\": \"text\"},\n"
    "    {\"name\": \"Body\", \"type\": \"text\"},\n"
    "    {\"name\": \"ResourceSchemaUrl\", \"type\": \"text\"},\n"
    "    {\"name\": \"ResourceAttributes\", \"type\": \"map\"},\n"
    "    {\"name\": \"ScopeSchemaUrl\", \"type\": \"text\"},\n"
    "    {\"name\": \"ScopeName\", \"type\": \"text\"},\n"
    "    {\"name\": \"ScopeVersion\", \"type\": \"text\"},\n"
    "    {\"name\": \"ScopeAttributes\", \"type\": \"map\"},\n"
    "    {\"name\": \"LogAttributes\", \"type\": \"map\"}\n"
    "  ],\n"
    "  \"sort\": \"Timestamp\",\n"
    "  \"indexes\": [\n"
    "    {\"column\": \"Body\", \"kind\": \"fulltext\", \"name\": \"body\", \"id\": 1},\n"
    "    {\"column\": \"ServiceName\", \"kind\": \"keyword\", \"name\": \"service\", \"id\": 2},\n"
    "    {\"column\": \"SeverityText\", \"kind\": \"keyword\", \"name\": \"severity\", \"id\": "
    "3},\n"
    "    {\"column\": \"ScopeName\", \"kind\": \"keyword\", \"name\": \"scope\", \"id\": 4},\n"
    "    {\"column\": \"TraceId\", \"kind\": \"keyword\", \"name\": \"trace\", \"id\": 5},\n"
    "    {\"column\": \"SeverityNumber\", \"kind\": \"range\", \"name\": \"sevnum\", \"id\": 6}\n"
    "  ]\n"
    "}";

static void test_otel_preset_prints_exactly_and_round_trips(void **state)
{
    qr_tabdef *d = qr_tabdef_otel("otel_logs");
    assert_non_null(d);
    char *j = to_json(d);
    assert_string_equal(j, otel_json);
    free(j);
    check_round_trip(d);
    qr_tabdef_free(d);
}

static void test_to_json_appends_to_the_buffer(void **state)
{
    qr_tabdef *d = qr_tabdef_new(NULL);
    assert_int_equal(qr_tabdef_add_col(d, "x", 1, QT_INT64, 1, NULL), 0);
    qr_buf b;
    qr_buf_init(&b);
    qr_buf_put(&b, "> ", 2);
    qr_tabdef_to_json(d, &b);
    qr_buf_put_u8(&b, 0);
    /* no name: no "name" key; no trailing newline */
    assert_string_equal((char *)b.p, "> {\n"
                                     "  \"columns\": [\n"
                                     "    {\"name\": \"x\", \"type\": \"int64\"}\n"
                                     "  ]\n"
                                     "}");
    qr_buf_free(&b);
    qr_tabdef_free(d);
}

#define WEIRD      "we\"ird\\ \xc3\xa9/name"
#define WEIRD_JSON "we\\\"ird\\\\ \xc3\xa9/name"

static qr_tabdef *every_type(void)
{
    static const struct {
        const char *name;
        int type, nullable, fmt;
    } cols[] = {
        {"ts", QT_TIMESTAMP, 0, QR_TS_RFC3339},
        {"ts_s", QT_TIMESTAMP, 1, QR_TS_EPOCH_S},
        {"ts_ms", QT_TIMESTAMP, 0, QR_TS_EPOCH_MS},
        {"ts_us", QT_TIMESTAMP, 1, QR_TS_EPOCH_US},
        {"ts_ns", QT_TIMESTAMP, 1, QR_TS_EPOCH_NS},
        {"flag", QT_BOOL, 1, 0},
        {"i8", QT_INT8, 1, 0},
        {"i16", QT_INT16, 1, 0},
        {"i32", QT_INT32, 0, 0},
        {"i64", QT_INT64, 1, 0},
        {"u8", QT_UINT8, 1, 0},
        {"u16", QT_UINT16, 1, 0},
        {"u32", QT_UINT32, 1, 0},
        {"u64", QT_UINT64, 1, 0},
        {"f", QT_FLOAT64, 1, 0},
        {"msg", QT_TEXT, 1, 0},
        {"attrs", QT_MAP, 1, 0},
        {"doc", QT_JSON, 1, 0},
        {"_extra", QT_JSON, 1, 0},
        {WEIRD, QT_TEXT, 1, 0},
    };
    qr_err e;
    qr_tabdef *d = qr_tabdef_new("every_type");
    assert_non_null(d);
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) {
        int c = qr_tabdef_add_col(d, cols[i].name, strlen(cols[i].name), cols[i].type,
                                  cols[i].nullable, &e);
        assert_int_equal(c, (int)i);
        d->cols[c].tsfmt = (uint8_t)cols[i].fmt;
    }
    d->sort_col = 0;
    d->extra_col = 18;
    d->omit_nulls = 1;
    static const struct {
        int col, kind, id;
        const char *name;
        int lowercase, positions;
    } ixs[] = {
        {15, QR_IX_FULLTEXT, 9, "text", 0, 0}, {15, QR_IX_KEYWORD, 3, NULL, 1, 0},
        {16, QR_IX_PATHS, 4, "attr", 1, 0},    {17, QR_IX_FULLTEXT, 2, NULL, 1, 1},
        {13, QR_IX_RANGE, 65535, "big", 1, 0}, {14, QR_IX_RANGE, 7, NULL, 1, 0},
        {5, QR_IX_RANGE, 8, NULL, 1, 0},       {4, QR_IX_RANGE, 10, NULL, 1, 0},
        {16, QR_IX_FULLTEXT, 11, NULL, 0, 1},  {19, QR_IX_KEYWORD, 12, "w", 1, 0},
    };
    for (size_t i = 0; i < sizeof ixs / sizeof *ixs; i++) {
        int x =
            qr_tabdef_add_index(d, ixs[i].col, ixs[i].kind, (uint16_t)ixs[i].id, ixs[i].name, &e);
        if (x != (int)i)
            fail_msg("index %zu: %s", i, e.msg);
        d->ixs[x].lowercase = (uint8_t)ixs[i].lowercase;
        d->ixs[x].positions = (uint8_t)ixs[i].positions;
    }
    assert_int_equal(qr_tabdef_validate(d, "every_type", &e), 0);
    return d;
}

static const char every_type_json[] =
    "{\n"
    "  \"name\": \"every_type\",\n"
    "  \"columns\": [\n"
    "    {\"name\": \"ts\", \"type\": \"timestamp\", \"nullable\": false},\n"
    "    {\"name\": \"ts_s\", \"type\": \"timestamp\", \"format\": \"epoch_s\"},\n"
    "    {\"name\": \"ts_ms\", \"type\": \"timestamp\", \"nullable\": false, \"format\": "
    "\"epoch_ms\"},\n"
    "    {\"name\": \"ts_us\", \"type\": \"timestamp\", \"format\": \"epoch_us\"},\n"
    "    {\"name\": \"ts_ns\", \"type\": \"timestamp\", \"format\": \"epoch_ns\"},\n"
    "    {\"name\": \"flag\", \"type\": \"bool\"},\n"
    "    {\"name\": \"i8\", \"type\": \"int8\"},\n"
    "    {\"name\": \"i16\", \"type\": \"int16\"},\n"
    "    {\"name\": \"i32\", \"type\": \"int32\", \"nullable\": false},\n"
    "    {\"name\": \"i64\", \"type\": \"int64\"},\n"
    "    {\"name\": \"u8\", \"type\": \"uint8\"},\n"
    "    {\"name\": \"u16\", \"type\": \"uint16\"},\n"
    "    {\"name\": \"u32\", \"type\": \"uint32\"},\n"
    "    {\"name\": \"u64\", \"type\": \"uint64\"},\n"
    "    {\"name\": \"f\", \"type\": \"float64\"},\n"
    "    {\"name\": \"msg\", \"type\": \"text\"},\n"
    "    {\"name\": \"attrs\", \"type\": \"map\"},\n"
    "    {\"name\": \"doc\", \"type\": \"json\"},\n"
    "    {\"name\": \"_extra\", \"type\": \"json\"},\n"
    "    {\"name\": \"" WEIRD_JSON "\", \"type\": \"text\"}\n"
    "  ],\n"
    "  \"sort\": \"ts\",\n"
    "  \"catch_all\": \"_extra\",\n"
    "  \"omit_nulls\": true,\n"
    "  \"indexes\": [\n"
    "    {\"column\": \"msg\", \"kind\": \"fulltext\", \"name\": \"text\", \"id\": 9, "
    "\"lowercase\": false, \"positions\": false},\n"
    "    {\"column\": \"msg\", \"kind\": \"keyword\", \"id\": 3},\n"
    "    {\"column\": \"attrs\", \"kind\": \"paths\", \"name\": \"attr\", \"id\": 4},\n"
    "    {\"column\": \"doc\", \"kind\": \"fulltext\", \"id\": 2},\n"
    "    {\"column\": \"u64\", \"kind\": \"range\", \"name\": \"big\", \"id\": 65535},\n"
    "    {\"column\": \"f\", \"kind\": \"range\", \"id\": 7},\n"
    "    {\"column\": \"flag\", \"kind\": \"range\", \"id\": 8},\n"
    "    {\"column\": \"ts_ns\", \"kind\": \"range\", \"id\": 10},\n"
    "    {\"column\": \"attrs\", \"kind\": \"fulltext\", \"id\": 11, \"lowercase\": false},\n"
    "    {\"column\": \"" WEIRD_JSON "\", \"kind\": \"keyword\", \"name\": \"w\", \"id\": 12}\n"
    "  ]\n"
    "}";

static void test_every_type_format_and_option_prints_exactly_and_round_trips(void **state)
{
    qr_tabdef *d = every_type();
    char *j = to_json(d);
    assert_string_equal(j, every_type_json);
    free(j);
    check_round_trip(d);
    qr_tabdef_free(d);
}

static void test_definition_without_name_sort_or_indexes_round_trips(void **state)
{
    qr_tabdef *d = qr_tabdef_new(NULL);
    assert_int_equal(qr_tabdef_add_col(d, "ts", 2, QT_TIMESTAMP, 1, NULL), 0);
    assert_int_equal(qr_tabdef_add_col(d, "v", 1, QT_FLOAT64, 0, NULL), 1);
    check_round_trip(d);
    qr_tabdef_free(d);
}

/* ---- reading what people write ---- */

static const char user_file[] =
    "{\n"
    "  \"indexes\": [\n"
    "    {\"column\": \"A\", \"kind\": \"keyword\"},\n"
    "    {\"column\": \"b\", \"kind\": \"keyword\", \"id\": 5, \"name\": null},\n"
    "    {\"lowercase\": false, \"column\": \"c\", \"kind\": \"inverted\", \"name\": \"see\"},\n"
    "    {\"column\": \"d\", \"id\": 2, \"kind\": \"KEYWORD\"}\n"
    "  ],\n"
    "  \"catch_all\": \"X\",\n"
    "  \"col\\u0075mns\": [\n"
    "    {\"type\": \"string\", \"name\": \"a\"},\n"
    "    {\"name\": \"b\", \"type\": \"varchar\", \"nullable\": true},\n"
    "    {\"name\": \"c\", \"type\": \"TEXT\"},\n"
    "    {\"name\": \"d\", \"type\": \"text\", \"nullable\": false},\n"
    "    {\"name\": \"x\", \"type\": \"object\"},\n"
    "    {\"format\": \"epoch_ms\", \"name\": \"ts\", \"type\": \"timestamp_ns\"}\n"
    "  ],\n"
    "  \"sort\": \"TS\",\n"
    "  \"omit_nulls\": true\n"
    "}\n";

static void test_user_file_any_key_order_aliases_and_ids_after_explicit_ones(void **state)
{
    qr_tabdef *d = parse_ok(user_file);
    assert_null(d->name);
    assert_int_equal(d->ncols, 6);
    assert_string_equal(d->cols[0].name, "a");
    assert_int_equal(d->cols[0].type, QT_TEXT);
    assert_int_equal(d->cols[1].nullable, 1);
    assert_int_equal(d->cols[3].nullable, 0);
    assert_int_equal(d->cols[4].type, QT_JSON);
    assert_int_equal(d->cols[5].type, QT_TIMESTAMP);
    assert_int_equal(d->cols[5].tsfmt, QR_TS_EPOCH_MS);
    assert_int_equal(d->sort_col, 5);
    assert_int_equal(d->extra_col, 4);
    assert_int_equal(d->omit_nulls, 1);
    /* written order kept; explicit 5 and 2 placed first, then 6 and 7 */
    assert_int_equal(d->nixs, 4);
    static const struct {
        int col, kind, id, lowercase, positions;
        const char *name;
    } want[] = {{0, QR_IX_KEYWORD, 6, 1, 0, NULL},
                {1, QR_IX_KEYWORD, 5, 1, 0, NULL},
                {2, QR_IX_FULLTEXT, 7, 0, 1, "see"},
                {3, QR_IX_KEYWORD, 2, 1, 0, NULL}};
    for (int i = 0; i < 4; i++) {
        const qr_ixdef *x = &d->ixs[i];
        assert_int_equal(x->col, want[i].col);
        assert_int_equal(x->kind, want[i].kind);
        assert_int_equal(x->id, want[i].id);
        assert_int_equal(x->lowercase, want[i].lowercase);
        assert_int_equal(x->positions, want[i].positions);
        if (want[i].name)
            assert_string_equal(x->name, want[i].name);
        else
            assert_null(x->name);
    }
    /* to_json(from_json(x)) parses to an equal definition */
    check_round_trip(d);
    char *j = to_json(d);
    assert_non_null(strstr(j, "    {\"column\": \"c\", \"kind\": \"fulltext\", \"name\": \"see\", "
                              "\"id\": 7, \"lowercase\": false}"));
    free(j);
    qr_tabdef_free(d);
}

static void test_null_sort_and_catch_all_mean_none(void **state)
{
    qr_tabdef *d = parse_ok("{\"name\": \"t\", \"sort\": null, \"catch_all\": null, "
                            "\"omit_nulls\": false" C0 ", \"indexes\": []}");
    assert_string_equal(d->name, "t");
    assert_int_equal(d->sort_col, -1);
    assert_int_equal(d->extra_col, -1);
    assert_int_equal(d->omit_nulls, 0);
    assert_int_equal(d->nixs, 0);
    qr_tabdef_free(d);
}

static void test_parse_json_reads_one_definition_of_a_larger_document(void **state)
{
    static const char doc[] = "[\n"
                              "  {\"name\": \"one\"" C0 "},\n"
                              "  {\"name\": \"two\"" C0 ", \"sort\": \"a\"}\n"
                              "]";
    char *buf = malloc(sizeof doc - 1);
    memcpy(buf, doc, sizeof doc - 1);
    qr_json j;
    qj_init(&j, buf, sizeof doc - 1);
    qr_err e;
    assert_int_equal(qj_array_begin(&j), 0);
    assert_int_equal(qj_array_next(&j), 1);
    qr_tabdef *d = qr_tabdef_parse_json(&j, "cat", &e);
    assert_non_null(d);
    assert_string_equal(d->name, "one");
    qr_tabdef_free(d);
    assert_int_equal(qj_array_next(&j), 1);
    /* positions count from the start of the whole document */
    assert_null(qr_tabdef_parse_json(&j, "cat", &e));
    assert_string_equal(e.code, QR_E_DATATYPE);
    assert_string_equal(e.msg, "cat:3:71: sort column \"a\" is text, not timestamp");
    free(buf);
}

/* ---- errors ---- */

static void test_malformed_json_names_line_and_column(void **state)
{
    static const err_case cases[] = {
        {"{\"columns\": [{\"name\": \"a\" \"type\": \"text\"}]}", QR_E_INVALID_TEXT,
         "t.json:1:27: expected ',' or '}'"},
        {"{\n  \"columns\": [\n    {\"name\": \"a\", \"type\": \"text\"},\n  ]\n}",
         QR_E_INVALID_TEXT, "t.json:4:3: expected a value"},
        {"{\"columns\": [{\"name\": \"a\", \"type\": \"te", QR_E_INVALID_TEXT,
         "t.json:1:36: unterminated string"},
        {"{\"columns\": [", QR_E_INVALID_TEXT, "t.json:1:14: unexpected end of input"},
        {"{\"columns\": [{\"name\": \"a\", \"type\": \"text\"}]} x", QR_E_INVALID_TEXT,
         "t.json:1:46: trailing characters"},
        {"{\"columns\": [{\"name\": \"a\xff\", \"type\": \"text\"}]}", QR_E_INVALID_TEXT,
         "t.json:1:25: invalid UTF-8 in string: invalid byte"},
        {"\n\n   {\"omit_nulls\": tru}", QR_E_INVALID_TEXT, "t.json:3:19: invalid literal"},
        /* columns count characters: each é is one */
        {"{\"name\": \"\xc3\xa9\xc3\xa9\", \"columns\": [,]}", QR_E_INVALID_TEXT,
         "t.json:1:28: expected a value"},
        {"", QR_E_SYNTAX, "t.json:1:1: a table definition must be an object"},
        {"[1]", QR_E_SYNTAX, "t.json:1:1: a table definition must be an object"},
    };
    check_errors(cases, sizeof cases / sizeof *cases);
}

static void test_unknown_duplicate_and_mistyped_keys(void **state)
{
    static const err_case cases[] = {
        {"{\"columns\": [{\"name\": \"a\", \"type\": \"text\"}], \"sortt\": \"a\"}", QR_E_SYNTAX,
         "t.json:1:46: unknown key \"sortt\""},
        {"{\"columns\": [{\"name\": \"a\", \"typ\": \"text\"}]}", QR_E_SYNTAX,
         "t.json:1:28: unknown key \"typ\""},
        {"{\"columns\": [{\"name\": \"a\", \"name\": \"b\", \"type\": \"text\"}]}", QR_E_SYNTAX,
         "t.json:1:28: duplicate key \"name\""},
        {"{\"omit_nulls\": true, \"omit_nulls\": true" C0 "}", QR_E_SYNTAX,
         "t.json:1:22: duplicate key \"omit_nulls\""},
        {"{\"indexes\": [{\"column\": \"a\", \"kind\": \"keyword\", \"unique\": true}]" C0 "}",
         QR_E_SYNTAX, "t.json:1:49: unknown key \"unique\""},
        {"{\"columns\": [{\"name\": \"a\", \"type\": \"text\", \"nullable\": \"no\"}]}",
         QR_E_SYNTAX, "t.json:1:56: \"nullable\" must be true or false"},
        {"{\"columns\": {}}", QR_E_SYNTAX, "t.json:1:13: \"columns\" must be an array"},
        {"{\"columns\": [\"a\"]}", QR_E_SYNTAX, "t.json:1:14: a column must be an object"},
        {"{\"name\": 7" C0 "}", QR_E_SYNTAX, "t.json:1:10: \"name\" must be a string or null"},
        {"{\"columns\": [{\"name\": null, \"type\": \"text\"}]}", QR_E_SYNTAX,
         "t.json:1:23: \"name\" must be a string"},
        {"{\"columns\": [{\"name\": \"a\"}]}", QR_E_SYNTAX,
         "t.json:1:14: column \"a\" needs a \"type\""},
        {"{\"columns\": [{\"type\": \"text\"}]}", QR_E_SYNTAX,
         "t.json:1:14: a column needs a \"name\""},
        {"{\"indexes\": [{\"kind\": \"keyword\"}]" C0 "}", QR_E_SYNTAX,
         "t.json:1:14: an index needs a \"column\""},
        {"{\"indexes\": [{\"column\": \"a\"}]" C0 "}", QR_E_SYNTAX,
         "t.json:1:14: an index needs a \"kind\""},
        {"{\"indexes\": {}" C0 "}", QR_E_SYNTAX, "t.json:1:13: \"indexes\" must be an array"},
    };
    check_errors(cases, sizeof cases / sizeof *cases);
}

static void test_bad_columns_types_and_formats(void **state)
{
    static const err_case cases[] = {
        {"{\"columns\": [{\"name\": \"a\", \"type\": \"strng\"}]}", QR_E_ARGS,
         "t.json:1:36: unknown type \"strng\""},
        {"{\"columns\": [{\"name\": \"a\", \"type\": \"text\"}, {\"name\": \"A\", \"type\": "
         "\"int32\"}]}",
         QR_E_ARGS, "t.json:1:54: duplicate column \"A\" (names ignore case)"},
        {"{\"columns\": [{\"name\": \"\", \"type\": \"text\"}]}", QR_E_ARGS,
         "t.json:1:23: column name \"\" is not 1-255 bytes without control characters"},
        {"{\"columns\": [{\"name\": \"a\", \"type\": \"text\", \"format\": \"epoch_s\"}]}",
         QR_E_DATATYPE,
         "t.json:1:54: column \"a\": \"format\" is only for timestamp columns, not text"},
        {"{\"columns\": [{\"name\": \"t\", \"type\": \"timestamp\", \"format\": \"epoch_m\"}]}",
         QR_E_ARGS,
         "t.json:1:59: unknown time format \"epoch_m\" (rfc3339, epoch_s, epoch_ms, epoch_us, "
         "epoch_ns)"},
        /* columns count characters, not bytes */
        {"{\"columns\": [{\"name\": \"\xc3\xa9\", \"type\": \"text\"}, {\"name\": \"\xc3\xbc\", "
         "\"type\": \"strng\"}]}",
         QR_E_ARGS, "t.json:1:67: unknown type \"strng\""},
        {"{\"name\": \"t\", \"columns\": []}", QR_E_ARGS, "t.json:1:1: no columns"},
        {"  {\"name\": \"t\"}", QR_E_ARGS, "t.json:1:3: no columns"},
        {"{\"name\": \"\"" C0 "}", QR_E_ARGS,
         "t.json:1:10: table name \"\" is empty or holds a NUL"},
    };
    check_errors(cases, sizeof cases / sizeof *cases);
}

static void test_bad_sort_and_catch_all_columns(void **state)
{
    static const err_case cases[] = {
        {"{\n  \"columns\": [\n    {\"name\": \"a\", \"type\": \"text\"}\n  ],\n  \"sort\": "
         "\"a\"\n}",
         QR_E_DATATYPE, "t.json:5:11: sort column \"a\" is text, not timestamp"},
        {"{\n  \"columns\": [\n    {\"name\": \"a\", \"type\": \"text\"}\n  ],\n  \"sort\": "
         "\"b\"\n}",
         QR_E_ARGS, "t.json:5:11: sort column \"b\" is not a column"},
        {"{\"columns\": [{\"name\": \"m\", \"type\": \"map\"}], \"catch_all\": \"M\"}",
         QR_E_DATATYPE, "t.json:1:58: catch_all column \"m\" is map, not json"},
        {"{\"catch_all\": \"z\"" C0 "}", QR_E_ARGS,
         "t.json:1:15: catch_all column \"z\" is not a column"},
    };
    check_errors(cases, sizeof cases / sizeof *cases);
}

static void test_bad_indexes(void **state)
{
    static const err_case cases[] = {
        {"{\"columns\": [{\"name\": \"a\", \"type\": \"text\"}], \"indexes\": [{\"column\": \"b\", "
         "\"kind\": \"keyword\"}]}",
         QR_E_ARGS, "t.json:1:69: index on unknown column \"b\""},
        {"{\"columns\": [{\"name\": \"n\", \"type\": \"int32\"}], \"indexes\": [{\"column\": "
         "\"n\", "
         "\"kind\": \"fulltext\"}]}",
         QR_E_DATATYPE, "t.json:1:83: column \"n\" (int32) cannot have a fulltext index"},
        {"{\"columns\": [{\"name\": \"n\", \"type\": \"int32\"}], \"indexes\": [{\"column\": "
         "\"n\", "
         "\"kind\": \"fulltxt\"}]}",
         QR_E_ARGS,
         "t.json:1:83: unknown index kind \"fulltxt\" (fulltext, keyword, range, paths)"},
        {"{\n"
         "  \"columns\": [{\"name\": \"a\", \"type\": \"text\"}, {\"name\": \"b\", \"type\": "
         "\"text\"}],\n"
         "  \"indexes\": [\n"
         "    {\"column\": \"a\", \"kind\": \"keyword\", \"id\": 2},\n"
         "    {\"column\": \"b\", \"kind\": \"keyword\", \"id\": 2}\n"
         "  ]\n"
         "}",
         QR_E_ARGS, "t.json:5:46: duplicate index id 2"},
        {"{\"columns\": [{\"name\": \"a\", \"type\": \"text\"}], \"indexes\": [{\"column\": \"a\", "
         "\"kind\": \"keyword\", \"lowercase\": false}]}",
         QR_E_ARGS, "t.json:1:93: \"lowercase\" is only for fulltext indexes"},
        {"{\"columns\": [{\"name\": \"a\", \"type\": \"text\"}], \"indexes\": [{\"column\": \"a\", "
         "\"kind\": \"keyword\", \"positions\": true}]}",
         QR_E_ARGS, "t.json:1:93: \"positions\" is only for fulltext indexes"},
        {"{\"indexes\": [{\"column\": \"a\", \"kind\": \"keyword\", \"id\": 0}]" C0 "}", QR_E_ARGS,
         "t.json:1:55: \"id\" must be an integer from 1 to 65535"},
        {"{\"indexes\": [{\"column\": \"a\", \"kind\": \"keyword\", \"id\": 65536}]" C0 "}",
         QR_E_ARGS, "t.json:1:55: \"id\" must be an integer from 1 to 65535"},
        {"{\"indexes\": [{\"column\": \"a\", \"kind\": \"keyword\", \"id\": 1.5}]" C0 "}",
         QR_E_ARGS, "t.json:1:55: \"id\" must be an integer from 1 to 65535"},
        {"{\"indexes\": [{\"column\": \"a\", \"kind\": \"keyword\", \"id\": \"1\"}]" C0 "}",
         QR_E_ARGS, "t.json:1:55: \"id\" must be an integer from 1 to 65535"},
        {"{\"indexes\": [{\"column\": \"a\", \"kind\": \"keyword\", \"name\": \"k\"}, "
         "{\"column\": \"a\", \"kind\": \"fulltext\", \"name\": \"k\"}]" C0 "}",
         QR_E_ARGS, "t.json:1:107: duplicate index name \"k\""},
        {"{\"indexes\": [{\"column\": \"a\", \"kind\": \"keyword\"}, {\"column\": \"A\", "
         "\"kind\": \"keyword\"}]" C0 "}",
         QR_E_ARGS, "t.json:1:50: column \"a\" has two keyword indexes"},
        {"{\"indexes\": [{\"column\": \"a\", \"kind\": \"keyword\", \"name\": \"\"}]" C0 "}",
         QR_E_ARGS, "t.json:1:57: index name \"\" is not 1-255 bytes without control characters"},
    };
    check_errors(cases, sizeof cases / sizeof *cases);
}

static void test_truncated_definition_is_always_rejected(void **state)
{
    /* every proper prefix of a good definition fails cleanly (ASan checks
     * the reads); the whole text parses */
    size_t n = strlen(every_type_json);
    for (size_t len = 0; len < n; len++) {
        char *buf = malloc(len ? len : 1);
        memcpy(buf, every_type_json, len);
        qr_err e;
        qr_tabdef *d = qr_tabdef_from_json(buf, len, "t.json", &e);
        free(buf);
        if (d)
            fail_msg("prefix of %zu bytes accepted", len);
        assert_int_equal(strncmp(e.msg, "t.json:", 7), 0);
    }
    qr_tabdef_free(parse_ok(every_type_json));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_otel_preset_prints_exactly_and_round_trips),
        cmocka_unit_test(test_to_json_appends_to_the_buffer),
        cmocka_unit_test(test_every_type_format_and_option_prints_exactly_and_round_trips),
        cmocka_unit_test(test_definition_without_name_sort_or_indexes_round_trips),
        cmocka_unit_test(test_user_file_any_key_order_aliases_and_ids_after_explicit_ones),
        cmocka_unit_test(test_null_sort_and_catch_all_mean_none),
        cmocka_unit_test(test_parse_json_reads_one_definition_of_a_larger_document),
        cmocka_unit_test(test_malformed_json_names_line_and_column),
        cmocka_unit_test(test_unknown_duplicate_and_mistyped_keys),
        cmocka_unit_test(test_bad_columns_types_and_formats),
        cmocka_unit_test(test_bad_sort_and_catch_all_columns),
        cmocka_unit_test(test_bad_indexes),
        cmocka_unit_test(test_truncated_definition_is_always_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
