/* test_ndjson.c - one NDJSON line to one row: every accepted form and every
 * rejection, with the exact reason and byte position. */
#include "testutil.h"

static qr_batch B;
static qr_ndjson NJ;

static int setup(void **st)
{
    (void)st;
    qr_err e;
    qr_ndjson_init(&NJ, tu_otel(), NULL);
    return qr_batch_init(&B, tu_otel(), 16, &e);
}

static int teardown(void **st)
{
    (void)st;
    qr_batch_free(&B);
    qr_ndjson_free(&NJ);
    return 0;
}

static int parse(const char *line, qr_err *e)
{
    qr_batch_clear(&B);
    qr_err_clear(e);
    return qr_ndjson_parse(&NJ, &B, line, strlen(line), e);
}

static void expect_error(const char *line, const char *code, const char *msg)
{
    qr_err e;
    int rc = parse(line, &e);
    if (rc != -1)
        fail_msg("accepted: %s", line);
    assert_int_equal(B.nrows, 0); /* nothing appended */
    assert_string_equal(e.code, code);
    if (strcmp(e.msg, msg) != 0)
        fail_msg("for %s\n  got  \"%s\"\n  want \"%s\"", line, e.msg, msg);
}

static void test_missing_keys_are_null(void **st)
{
    (void)st;
    qr_err e;
    assert_int_equal(parse("{\"Body\":\"hello\"}", &e), 0);
    assert_int_equal(B.nrows, 1);
    assert_int_equal(B.cols[COL_BODY].strs[0].n, 5);
    assert_int_equal(B.cols[COL_TIMESTAMP].isnull[0], 1);
    assert_null(B.cols[COL_SERVICE_NAME].strs[0].p);
    assert_null(B.cols[COL_LOG_ATTRIBUTES].strs[0].p);
    assert_int_equal(parse("{}", &e), 0);
    assert_int_equal(B.nrows, 1);
}

static void test_blank_lines(void **st)
{
    (void)st;
    qr_err e;
    assert_int_equal(parse("", &e), 1);
    assert_int_equal(parse("  \t ", &e), 1);
    assert_int_equal(B.nrows, 0);
}

static void test_zero_copy_strings(void **st)
{
    (void)st;
    const char *line = "{\"Body\":\"plain text\",\"ServiceName\":\"a\\\"b\"}";
    qr_err e;
    qr_batch_clear(&B);
    assert_int_equal(qr_ndjson_parse(&NJ, &B, line, strlen(line), &e), 0);
    assert_ptr_equal(B.cols[COL_BODY].strs[0].p, line + 9); /* points into the line */
    assert_int_equal(B.cols[COL_SERVICE_NAME].strs[0].n, 3);
    assert_memory_equal(B.cols[COL_SERVICE_NAME].strs[0].p, "a\"b", 3);
}

static void test_timestamp_forms(void **st)
{
    (void)st;
    qr_err e;
    assert_int_equal(parse("{\"Timestamp\":\"2025-09-23T00:00:01.5Z\"}", &e), 0);
    assert_int_equal(B.cols[COL_TIMESTAMP].ints[0], 1758585601500000000LL);
    assert_int_equal(parse("{\"Timestamp\":\"2025-09-23 02:00:00+02:00\"}", &e), 0);
    assert_int_equal(B.cols[COL_TIMESTAMP].ints[0], 1758585600000000000LL);
    assert_int_equal(parse("{\"Timestamp\":1758585600000000001}", &e), 0);
    assert_int_equal(B.cols[COL_TIMESTAMP].ints[0], 1758585600000000001LL);
    expect_error("{\"Timestamp\":\"2025-13-01T00:00:00Z\"}", QR_E_INVALID_TEXT,
                 "byte 14: column Timestamp: timestamp field out of range");
    expect_error("{\"Timestamp\":\"yesterday\"}", QR_E_INVALID_TEXT,
                 "byte 14: column Timestamp: expected RFC 3339 timestamp "
                 "YYYY-MM-DDTHH:MM:SS[.fffffffff][Z|+HH:MM]");
    expect_error("{\"Timestamp\":true}", QR_E_DATATYPE,
                 "byte 14: column Timestamp: expected an RFC 3339 string or integer "
                 "nanoseconds, got boolean");
}

static void test_wrong_types_and_ranges(void **st)
{
    (void)st;
    expect_error("{\"TraceFlags\":256}", QR_E_OUT_OF_RANGE,
                 "byte 15: column TraceFlags: 256 out of range 0..255");
    expect_error("{\"TraceFlags\":-1}", QR_E_OUT_OF_RANGE,
                 "byte 15: column TraceFlags: -1 out of range 0..255");
    expect_error("{\"SeverityNumber\":2147483648}", QR_E_OUT_OF_RANGE,
                 "byte 19: column SeverityNumber: 2147483648 out of range of int32");
    expect_error("{\"SeverityNumber\":\"9\"}", QR_E_DATATYPE,
                 "byte 19: column SeverityNumber: expected an integer, got string");
    expect_error("{\"Body\":42}", QR_E_DATATYPE, "byte 9: column Body: expected a string, got number");
    expect_error("{\"Body\":[\"a\"]}", QR_E_DATATYPE,
                 "byte 9: column Body: expected a string, got array");
    expect_error("{\"LogAttributes\":\"x\"}", QR_E_DATATYPE,
                 "byte 18: column LogAttributes: expected an object, got string");
    expect_error("{\"LogAttributes\":{\"n\":1.5e}}", QR_E_INVALID_TEXT, "byte 27: expected a digit in exponent");
}

static void test_bad_keys(void **st)
{
    (void)st;
    qr_err e;
    expect_error("{\"Bodyy\":\"x\"}", QR_E_UNDEFINED_COLUMN, "byte 2: unknown column \"Bodyy\"");
    /* names match case-insensitively, as unquoted SQL identifiers */
    assert_int_equal(parse("{\"body\":\"x\",\"SERVICENAME\":\"cart\"}", &e), 0);
    assert_int_equal(B.cols[COL_BODY].strs[B.nrows - 1].n, 1);
    assert_int_equal(B.cols[COL_SERVICE_NAME].strs[B.nrows - 1].n, 4);
    expect_error("{\"body\":\"x\",\"Body\":\"y\"}", QR_E_INVALID_TEXT, "byte 13: duplicate column Body");
    expect_error("{\"Body\":\"x\",\"Body\":\"y\"}", QR_E_INVALID_TEXT,
                 "byte 13: duplicate column Body");
}

static void test_malformed_json(void **st)
{
    (void)st;
    qr_err e;
    const char *bad[] = {"{",
                         "{\"Body\":\"x\"",
                         "{\"Body\":\"x\"} trailing",
                         "{\"Body\" \"x\"}",
                         "{\"Body\":\"unterminated}",
                         "[1,2]",
                         "\"just a string\"",
                         "{\"Body\":\"bad \\q escape\"}",
                         "{\"Body\":\"\xff\xfe\"}",
                         "\x01\x02\x03\x04",
                         "{\"Body\":\"x\",}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (parse(bad[i], &e) != -1)
            fail_msg("accepted: %s", bad[i]);
        assert_int_equal(B.nrows, 0);
        assert_true(strncmp(e.msg, "byte ", 5) == 0);
    }
}

static void test_maps_keep_order_and_duplicates(void **st)
{
    (void)st;
    qr_err e;
    assert_int_equal(parse("{\"LogAttributes\":{\"b\":\"1\",\"a\":\"2\",\"b\":\"3\"}}", &e), 0);
    /* map text: count 3, then (len, key, len << 1 | is_json, value) in input order */
    const unsigned char want[] = {3, 1, 'b', 2, '1', 1, 'a', 2, '2', 1, 'b', 2, '3'};
    assert_int_equal(B.cols[COL_LOG_ATTRIBUTES].strs[0].n, sizeof want);
    assert_memory_equal(B.cols[COL_LOG_ATTRIBUTES].strs[0].p, want, sizeof want);
    /* values that are not strings stay typed JSON (tag bit 1) */
    assert_int_equal(parse("{\"LogAttributes\":{\"n\":12,\"t\":true,\"o\":{\"x\": [1, null]}}}", &e), 0);
    const unsigned char want2[] = {3, 1, 'n', 5, '1', '2', 1, 't', 9, 't', 'r', 'u', 'e',
                                   1, 'o', 29, '{', '"', 'x', '"', ':', '[', '1', ',', 'n', 'u', 'l', 'l', ']', '}'};
    assert_int_equal(B.cols[COL_LOG_ATTRIBUTES].strs[B.nrows - 1].n, sizeof want2);
    assert_memory_equal(B.cols[COL_LOG_ATTRIBUTES].strs[B.nrows - 1].p, want2, sizeof want2);
    assert_int_equal(parse("{\"LogAttributes\":{}}", &e), 0);
    assert_int_equal(B.cols[COL_LOG_ATTRIBUTES].strs[B.nrows - 1].n, 1);
}

static void test_batch_full_is_an_error(void **st)
{
    (void)st;
    qr_batch small;
    qr_err e;
    assert_int_equal(qr_batch_init(&small, tu_otel(), 1, &e), 0);
    assert_int_equal(qr_ndjson_parse(&NJ, &small, "{}", 2, &e), 0);
    assert_int_equal(qr_ndjson_parse(&NJ, &small, "{}", 2, &e), -1);
    assert_string_equal(e.code, QR_E_INTERNAL);
    qr_batch_free(&small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_keys_are_null),
        cmocka_unit_test(test_blank_lines),
        cmocka_unit_test(test_zero_copy_strings),
        cmocka_unit_test(test_timestamp_forms),
        cmocka_unit_test(test_wrong_types_and_ranges),
        cmocka_unit_test(test_bad_keys),
        cmocka_unit_test(test_malformed_json),
        cmocka_unit_test(test_maps_keep_order_and_duplicates),
        cmocka_unit_test(test_batch_full_is_an_error),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
