/* test_types_roundtrip.c - every column type through NDJSON, a segment and
 * back: edge values (NULL, empty, min/max integers, -0 and tiny floats,
 * non-ASCII text, deep nesting, large arrays, typed map values, the
 * catch-all), the canonical forms they print as, a column added after a
 * segment was written (NULL there), and a type that differs (an error). */
#include "testutil.h"

static qr_tabdef *wide(void)
{
    static const struct {
        const char *name;
        int type;
    } cols[] = {{"t", QT_TIMESTAMP}, {"b", QT_BOOL},     {"i8", QT_INT8},    {"i16", QT_INT16},
                {"i32", QT_INT32},   {"i64", QT_INT64},  {"u8", QT_UINT8},   {"u16", QT_UINT16},
                {"u32", QT_UINT32},  {"u64", QT_UINT64}, {"f", QT_FLOAT64},  {"s", QT_TEXT},
                {"j", QT_JSON},      {"m", QT_MAP},      {"e", QT_TIMESTAMP}, {"ts", QT_TIMESTAMP},
                {"_extra", QT_JSON}};
    qr_tabdef *d = qr_tabdef_new("wide");
    assert_non_null(d);
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
        assert_int_equal(qr_tabdef_add_col(d, cols[i].name, strlen(cols[i].name), cols[i].type, 1,
                                           NULL),
                         (int)i);
    d->cols[14].tsfmt = QR_TS_EPOCH_MS;
    d->cols[15].tsfmt = QR_TS_RFC3339_SHORT;
    d->sort_col = 0;
    d->extra_col = 16;
    d->omit_nulls = 1;
    assert_true(qr_tabdef_add_index(d, 11, QR_IX_FULLTEXT, 0, "s", NULL) > -1);
    assert_true(qr_tabdef_add_index(d, 12, QR_IX_PATHS, 0, "j", NULL) > -1);
    assert_true(qr_tabdef_add_index(d, 13, QR_IX_PATHS, 0, "m", NULL) > -1);
    assert_true(qr_tabdef_add_index(d, 10, QR_IX_RANGE, 0, "f", NULL) > -1);
    assert_true(qr_tabdef_add_index(d, 9, QR_IX_RANGE, 0, "u64", NULL) > -1);
    assert_true(qr_tabdef_add_index(d, 5, QR_IX_RANGE, 0, "i64", NULL) > -1);
    assert_int_equal(qr_tabdef_validate(d, "wide", NULL), 0);
    return d;
}

/* Input lines and what `quarry cat` prints for each (NULL = the same). */
static const char *const cases[][2] = {
    /* every type at its minimum */
    {"{\"t\":\"1970-01-01T00:00:00Z\",\"b\":false,\"i8\":-128,\"i16\":-32768,\"i32\":-2147483648,"
     "\"i64\":-9223372036854775808,\"u8\":0,\"u16\":0,\"u32\":0,\"u64\":0,\"f\":-1.7976931348623157e+308,"
     "\"s\":\"\",\"j\":null,\"m\":{},\"e\":0,\"ts\":\"1678-01-01T00:00:00Z\"}",
     "{\"t\":\"1970-01-01T00:00:00.000000000Z\",\"b\":false,\"i8\":-128,\"i16\":-32768,"
     "\"i32\":-2147483648,\"i64\":-9223372036854775808,\"u8\":0,\"u16\":0,\"u32\":0,\"u64\":0,"
     "\"f\":-1.7976931348623157e+308,\"s\":\"\",\"m\":{},\"e\":0,\"ts\":\"1678-01-01T00:00:00Z\"}"},
    /* and at its maximum */
    {"{\"t\":\"2261-12-31T23:59:59.999999999Z\",\"b\":true,\"i8\":127,\"i16\":32767,\"i32\":2147483647,"
     "\"i64\":9223372036854775807,\"u8\":255,\"u16\":65535,\"u32\":4294967295,"
     "\"u64\":18446744073709551615,\"f\":1.7976931348623157e+308,\"s\":\"x\",\"j\":[],\"m\":{\"k\":\"\"},"
     "\"e\":9223372036854,\"ts\":\"2261-12-31T23:59:59.999999999Z\"}",
     NULL},
    /* floats: -0, the smallest subnormal, shortest forms */
    {"{\"t\":1,\"f\":-0.0}", "{\"t\":\"1970-01-01T00:00:00.000000001Z\",\"f\":-0}"},
    {"{\"t\":2,\"f\":5e-324}", "{\"t\":\"1970-01-01T00:00:00.000000002Z\",\"f\":5e-324}"},
    {"{\"t\":3,\"f\":1.50}", "{\"t\":\"1970-01-01T00:00:00.000000003Z\",\"f\":1.5}"},
    {"{\"t\":4,\"f\":1e3,\"u64\":9223372036854775808}",
     "{\"t\":\"1970-01-01T00:00:00.000000004Z\",\"u64\":9223372036854775808,\"f\":1000}"},
    {"{\"t\":5,\"f\":0.1}", "{\"t\":\"1970-01-01T00:00:00.000000005Z\",\"f\":0.1}"},
    /* text: non-ASCII, escapes, control bytes, a hex-looking value */
    {"{\"t\":6,\"s\":\"caf\\u00e9 \\u65e5\\u672c \\ud83d\\ude00 \\\"q\\\" \\\\ \\/ \\u0001\"}",
     "{\"t\":\"1970-01-01T00:00:00.000000006Z\",\"s\":\"café 日本 😀 \\\"q\\\" \\\\ / \\u0001\"}"},
    {"{\"t\":7,\"s\":\"0123456789abcdef0123456789abcdef\"}",
     "{\"t\":\"1970-01-01T00:00:00.000000007Z\",\"s\":\"0123456789abcdef0123456789abcdef\"}"},
    /* json: every kind, whitespace and escapes normalised, numbers as written */
    {"{\"t\":8,\"j\":{ \"a\" : [1, 2.50, -3e+7, true, false, null, \"\\u00e9\"], \"b\": {}, \"a\": {\"x\":[]} }}",
     "{\"t\":\"1970-01-01T00:00:00.000000008Z\",\"j\":{\"a\":[1,2.50,-3e+7,true,false,null,\"é\"],"
     "\"b\":{},\"a\":{\"x\":[]}}}"},
    {"{\"t\":9,\"j\":\"just text\"}", "{\"t\":\"1970-01-01T00:00:00.000000009Z\",\"j\":\"just text\"}"},
    {"{\"t\":10,\"j\":0}", "{\"t\":\"1970-01-01T00:00:00.000000010Z\",\"j\":0}"},
    /* maps: typed values kept, order and duplicates kept */
    {"{\"t\":11,\"m\":{\"n\":12,\"ok\":true,\"z\":null,\"o\":{\"p\":[1,{\"q\":\"r\"}]},\"n\":\"12\"}}",
     "{\"t\":\"1970-01-01T00:00:00.000000011Z\",\"m\":{\"n\":12,\"ok\":true,\"z\":null,"
     "\"o\":{\"p\":[1,{\"q\":\"r\"}]},\"n\":\"12\"}}"},
    /* epoch milliseconds and short RFC 3339 print as they came; a value that
     * is not whole milliseconds prints as RFC 3339 */
    {"{\"t\":12,\"e\":893964617123,\"ts\":\"2015-01-01T15:00:00.250Z\"}",
     "{\"t\":\"1970-01-01T00:00:00.000000012Z\",\"e\":893964617123,\"ts\":\"2015-01-01T15:00:00.250Z\"}"},
    {"{\"t\":13,\"e\":\"1998-04-30T19:30:17.000000001Z\",\"ts\":\"2015-01-01T15:00:00.000001+00:00\"}",
     "{\"t\":\"1970-01-01T00:00:00.000000013Z\",\"e\":\"1998-04-30T19:30:17.000000001Z\","
     "\"ts\":\"2015-01-01T15:00:00.000001Z\"}"},
    /* keys that are not columns go to the catch-all and print back in place;
     * key case follows the definition */
    {"{\"T\":14,\"zz\":{\"q\":[1,2]},\"_extra\":\"not the column\",\"S\":\"x\",\"yy\":null}",
     "{\"t\":\"1970-01-01T00:00:00.000000014Z\",\"s\":\"x\",\"zz\":{\"q\":[1,2]},"
     "\"_extra\":\"not the column\",\"yy\":null}"},
    /* every column NULL: only the sort column prints NULL-free */
    {"{}", "{}"},
};

static char *deep_and_large(int depth, int elems)
{
    qr_buf b;
    qr_buf_init(&b);
    const char head[] = "{\"t\":\"1970-01-01T00:00:00.000000015Z\",\"j\":";
    qr_buf_put(&b, head, sizeof head - 1);
    for (int i = 0; i < depth; i++)
        qr_buf_put(&b, "{\"a\":", 5);
    qr_buf_put_u8(&b, '[');
    for (int i = 0; i < elems; i++) {
        char n[16];
        int k = snprintf(n, sizeof n, "%s%d", i ? "," : "", i);
        qr_buf_put(&b, n, (size_t)k);
    }
    qr_buf_put_u8(&b, ']');
    for (int i = 0; i < depth; i++)
        qr_buf_put_u8(&b, '}');
    qr_buf_put(&b, "}", 2); /* with the NUL */
    return (char *)b.p;
}

static void read_all(const char *path, const qr_tabdef *d, qr_buf *out)
{
    qr_err e;
    qr_segment *s = qr_seg_open(path, &e);
    if (!s)
        fail_msg("%s", e.msg);
    qr_colreader **rd = calloc(d->ncols, sizeof *rd);
    assert_int_equal(qr_row_readers_open(s, d, rd, &e), 0);
    for (uint32_t r = 0; r < s->rows; r++)
        if (qr_row_json(d, rd, r, out, &e) != 0)
            fail_msg("%s", e.msg);
    assert_int_equal(qr_seg_verify(s, &e), 0);
    qr_row_readers_close(d, rd);
    free(rd);
    qr_seg_close(s);
}

static void test_every_type_round_trips_its_edge_values(void **st)
{
    (void)st;
    qr_tabdef *d = wide();
    char *dir = tu_tmpdir(), path[4200];
    qr_batch b;
    qr_err e;
    assert_int_equal(qr_batch_init(&b, d, 64, &e), 0);
    qr_buf text, want;
    qr_buf_init(&text);
    qr_buf_init(&want);
    size_t n = sizeof cases / sizeof *cases;
    for (size_t i = 0; i < n; i++) {
        qr_buf_put(&text, cases[i][0], strlen(cases[i][0]));
        qr_buf_put_u8(&text, '\n');
        const char *w = cases[i][1] ? cases[i][1] : cases[i][0];
        qr_buf_put(&want, w, strlen(w));
        qr_buf_put_u8(&want, '\n');
    }
    char *big = deep_and_large(60, 20000);
    qr_buf_put(&text, big, strlen(big));
    qr_buf_put_u8(&text, 0);
    tu_fill_batch(&b, (const char *)text.p);
    snprintf(path, sizeof path, "%s/w.qseg", dir);
    if (qr_segment_build(path, &b, NULL, NULL, &e) != 0)
        fail_msg("%s", e.msg);
    qr_batch_free(&b);
    qr_buf got;
    qr_buf_init(&got);
    read_all(path, d, &got);
    /* rows come back sorted by t: "{}" (NULL t) first, then t = 0, ... */
    const char *first_nl = memchr(want.p, '\n', want.len);
    (void)first_nl;
    /* the NULL t first, then t = 0 (case 0), 1..14 (cases 2..15), 15 (the
     * big one), and the largest (case 1) last */
    qr_buf sorted;
    qr_buf_init(&sorted);
    qr_buf_put(&sorted, "{}\n", 3);
    size_t order[sizeof cases / sizeof *cases + 1], no = 0;
    order[no++] = 0;
    for (size_t i = 2; i + 1 < n; i++)
        order[no++] = i;
    order[no++] = n; /* the big one */
    order[no++] = 1;
    for (size_t k = 0; k < no; k++) {
        const char *w = order[k] == n ? big : cases[order[k]][1] ? cases[order[k]][1] : cases[order[k]][0];
        qr_buf_put(&sorted, w, strlen(w));
        qr_buf_put_u8(&sorted, '\n');
    }
    if (got.len != sorted.len || memcmp(got.p, sorted.p, got.len) != 0) {
        /* the first line that differs */
        const char *a = (const char *)got.p, *c = (const char *)sorted.p;
        size_t k = 0;
        while (k < got.len && k < sorted.len && a[k] == c[k])
            k++;
        size_t ls = k;
        while (ls > 0 && c[ls - 1] != '\n')
            ls--;
        fail_msg("read back differs at byte %zu:\n got  %.300s\n want %.300s", k, a + ls, c + ls);
    }
    /* canonical output is a fixed point: ingesting it again prints the same */
    qr_buf_put_u8(&got, 0);
    assert_int_equal(qr_batch_init(&b, d, 64, &e), 0);
    tu_fill_batch(&b, (const char *)got.p);
    assert_int_equal(qr_segment_build(path, &b, NULL, NULL, &e), 0);
    qr_batch_free(&b);
    qr_buf again;
    qr_buf_init(&again);
    read_all(path, d, &again);
    assert_int_equal(again.len, got.len - 1);
    assert_memory_equal(again.p, got.p, again.len);
    free(big);
    qr_buf_free(&text);
    qr_buf_free(&want);
    qr_buf_free(&got);
    qr_buf_free(&sorted);
    qr_buf_free(&again);
    qr_tabdef_free(d);
    tu_rmdir(dir);
}

/* A column added after a segment was written reads as NULL there; a column
 * whose type changed is an error naming it. */
static void test_added_column_is_null_in_older_segments(void **st)
{
    (void)st;
    qr_tabdef *old = qr_tabdef_new("t");
    assert_int_equal(qr_tabdef_add_col(old, "a", 1, QT_INT64, 1, NULL), 0);
    assert_int_equal(qr_tabdef_add_col(old, "b", 1, QT_TEXT, 1, NULL), 1);
    char *dir = tu_tmpdir(), path[4200];
    qr_batch b;
    qr_err e;
    assert_int_equal(qr_batch_init(&b, old, 4, &e), 0);
    tu_fill_batch(&b, "{\"a\":1,\"b\":\"x\"}\n{\"a\":2}");
    snprintf(path, sizeof path, "%s/o.qseg", dir);
    assert_int_equal(qr_segment_build(path, &b, NULL, NULL, &e), 0);
    qr_batch_free(&b);
    qr_tabdef *now = qr_tabdef_clone(old);
    assert_int_equal(qr_tabdef_add_col(now, "C", 1, QT_JSON, 1, NULL), 2);
    qr_buf got;
    qr_buf_init(&got);
    read_all(path, now, &got);
    const char want[] = "{\"a\":1,\"b\":\"x\",\"C\":null}\n{\"a\":2,\"b\":null,\"C\":null}\n";
    assert_int_equal(got.len, sizeof want - 1);
    assert_memory_equal(got.p, want, got.len);
    /* the same name with another type */
    qr_tabdef *other = qr_tabdef_new("t");
    assert_int_equal(qr_tabdef_add_col(other, "A", 1, QT_TEXT, 1, NULL), 0);
    qr_segment *s = qr_seg_open(path, &e);
    assert_non_null(s);
    qr_colreader *rd[1];
    assert_int_equal(qr_row_readers_open(s, other, rd, &e), -1);
    assert_string_equal(e.code, QR_E_DATATYPE);
    assert_non_null(strstr(e.msg, "column A is int64, the table says text"));
    qr_seg_close(s);
    qr_buf_free(&got);
    qr_tabdef_free(old);
    qr_tabdef_free(now);
    qr_tabdef_free(other);
    tu_rmdir(dir);
}

/* NOT NULL columns and wrong values are bad lines with exact reasons. */
static void test_type_errors_name_column_and_byte(void **st)
{
    (void)st;
    qr_tabdef *d = wide();
    d->cols[11].nullable = 0;
    static const char *const bad[][2] = {
        {"{\"s\":\"x\",\"b\":1}", "byte 14: column b: expected true or false, got number"},
        {"{\"s\":\"x\",\"u64\":-1}", "byte 16: column u64: negative value for an unsigned column"},
        {"{\"s\":\"x\",\"u64\":18446744073709551616}",
         "byte 16: column u64: 18446744073709551616 out of range of uint64"},
        {"{\"s\":\"x\",\"i8\":128}", "byte 15: column i8: 128 out of range -128..127"},
        {"{\"s\":\"x\",\"f\":1e999}", "byte 14: column f: 1e999 out of range of float64"},
        {"{\"s\":\"x\",\"f\":\"1\"}", "byte 14: column f: expected a number, got string"},
        {"{\"s\":\"x\",\"e\":9223372036855}", "byte 14: column e: 9223372036855 epoch_ms is out of range"},
        {"{\"s\":\"x\",\"m\":[]}", "byte 14: column m: expected an object, got array"},
        {"{\"s\":\"x\",\"s\":\"y\"}", "byte 10: duplicate column s"},
        {"{\"b\":true}", "byte 1: column s: NULL (or missing) in a NOT NULL column"},
        {"{\"s\":null}", "byte 1: column s: NULL (or missing) in a NOT NULL column"},
    };
    qr_batch b;
    qr_err e;
    qr_ndjson nj;
    assert_int_equal(qr_batch_init(&b, d, 4, &e), 0);
    assert_int_equal(qr_ndjson_init(&nj, d, &e), 0);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        qr_err_clear(&e);
        if (qr_ndjson_parse(&nj, &b, bad[i][0], strlen(bad[i][0]), &e) != -1)
            fail_msg("accepted %s", bad[i][0]);
        if (strcmp(e.msg, bad[i][1]) != 0)
            fail_msg("%s:\n got  %s\n want %s", bad[i][0], e.msg, bad[i][1]);
        assert_true(qr_err_is_input_fault(&e));
        assert_int_equal(b.nrows, 0);
    }
    qr_ndjson_free(&nj);
    qr_batch_free(&b);
    qr_tabdef_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_round_trips_its_edge_values),
        cmocka_unit_test(test_added_column_is_null_in_older_segments),
        cmocka_unit_test(test_type_errors_name_column_and_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
