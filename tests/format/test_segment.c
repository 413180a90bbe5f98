/* test_segment.c - segment files: exact round trip of every column (NULLs,
 * escapes, maps, ids, unsorted input), encoding choices, and corrupt,
 * truncated or wrong-version files giving errors that name the file. */
#include "testutil.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "format/segfmt.h"

static const char *rows_text =
    "{\"Timestamp\":\"2025-09-23T00:00:00.000000300Z\",\"TraceId\":\"0af7651916cd43dd8448eb211c80319c\",\"SpanId\":\"b7ad6b7169203331\",\"TraceFlags\":1,\"SeverityText\":\"INFO\",\"SeverityNumber\":9,\"ServiceName\":\"cart\",\"Body\":\"GetCartAsync called with userId=\\\"abc\\\"\\ttab\",\"ResourceSchemaUrl\":\"https://opentelemetry.io/schemas/1.24.0\",\"ResourceAttributes\":{\"service.name\":\"cart\",\"host.name\":\"h1\"},\"ScopeSchemaUrl\":\"\",\"ScopeName\":\"cart.cartstore\",\"ScopeVersion\":\"1.0\",\"ScopeAttributes\":{},\"LogAttributes\":{\"user.id\":\"u1\",\"user.id\":\"dup\"}}\n"
    "{\"Timestamp\":\"2025-09-23T00:00:00.000000100Z\",\"TraceId\":\"\",\"SpanId\":\"\",\"TraceFlags\":0,\"SeverityText\":\"ERROR\",\"SeverityNumber\":17,\"ServiceName\":\"payment\",\"Body\":\"caf\xc3\xa9 \xe6\x9d\xb1\xe4\xba\xac \\u0001 ctrl\",\"ResourceSchemaUrl\":null,\"ResourceAttributes\":null,\"ScopeSchemaUrl\":\"\",\"ScopeName\":\"payment\",\"ScopeVersion\":\"\",\"ScopeAttributes\":{\"k\":\"\"},\"LogAttributes\":{}}\n"
    "{\"Timestamp\":null,\"TraceId\":\"NOT-HEX\",\"SpanId\":\"B7AD6B7169203331\",\"TraceFlags\":null,\"SeverityText\":null,\"SeverityNumber\":-2147483648,\"ServiceName\":\"\",\"Body\":\"\",\"ResourceSchemaUrl\":\"\",\"ResourceAttributes\":{},\"ScopeSchemaUrl\":null,\"ScopeName\":null,\"ScopeVersion\":null,\"ScopeAttributes\":null,\"LogAttributes\":null}\n"
    "{\"Timestamp\":\"2025-09-23T00:00:00.000000200Z\",\"TraceId\":null,\"SpanId\":null,\"TraceFlags\":255,\"SeverityText\":\"WARN\",\"SeverityNumber\":2147483647,\"ServiceName\":null,\"Body\":null,\"ResourceSchemaUrl\":\"x\",\"ResourceAttributes\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"},\"ScopeSchemaUrl\":\"s\",\"ScopeName\":\"n\",\"ScopeVersion\":\"v\",\"ScopeAttributes\":{\"\\\"q\\\"\":\"\\\\\"},\"LogAttributes\":{\"x\":\"y\"}}\n";

/* The same rows in time order (NULL timestamp first, ties keep input order)
 * and canonical form: \u0001 escapes stay \u0001, the rest is unchanged. */
static const int expected_order[4] = {2, 1, 3, 0};

/* Line n (0-based) of text, '\n' included. memchr, not strchr: the
 * sanitizer's strict string checks make strchr scan to the NUL each call. */
static const char *nth_line(const char *text, size_t tlen, int n, size_t *len)
{
    const char *p = text, *end = text + tlen;
    for (int i = 0; i < n; i++)
        p = (const char *)memchr(p, '\n', (size_t)(end - p)) + 1;
    *len = (size_t)((const char *)memchr(p, '\n', (size_t)(end - p)) - p) + 1;
    return p;
}

static char *write_text_segment(const char *dir, const char *text, const char *name)
{
    qr_batch b;
    qr_err e;
    assert_int_equal(qr_batch_init(&b, tu_otel(), 200000, &e), 0);
    tu_fill_batch(&b, text);
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/%s", dir, name);
    qr_seg_summary s;
    if (qr_seg_write(path, &b, NULL, &s, &e) != 0)
        fail_msg("%s", e.msg);
    assert_int_equal(s.rows, b.nrows);
    qr_batch_free(&b);
    return path;
}

static void test_roundtrip_all_columns_sorted_by_time(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    char *path = write_text_segment(dir, rows_text, "a.qseg");
    qr_buf out, want;
    qr_buf_init(&out);
    qr_buf_init(&want);
    for (int i = 0; i < 4; i++) {
        size_t n;
        const char *l = nth_line(rows_text, strlen(rows_text), expected_order[i], &n);
        qr_buf_put(&want, l, n);
    }
    qr_err e;
    if (tu_seg_json(path, &out, &e) != 0)
        fail_msg("%s", e.msg);
    assert_int_equal(out.len, want.len);
    assert_memory_equal(out.p, want.p, want.len);
    /* segment meta: time range over non-NULL timestamps */
    qr_segment *s = qr_seg_open(path, &e);
    assert_non_null(s);
    assert_int_equal(s->rows, 4);
    assert_int_equal(s->min_ts, 1758585600000000100LL);
    assert_int_equal(s->max_ts, 1758585600000000300LL);
    assert_int_equal(s->cols[COL_TIMESTAMP].null_count, 1);
    assert_int_equal(s->cols[COL_BODY].null_count, 1);
    assert_int_equal(qr_seg_verify(s, &e), 0);
    qr_seg_close(s);
    qr_buf_free(&out);
    qr_buf_free(&want);
    free(path);
    tu_rmdir(dir);
}

static void test_empty_segment(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    char *path = write_text_segment(dir, "", "empty.qseg");
    qr_err e;
    qr_segment *s = qr_seg_open(path, &e);
    assert_non_null(s);
    assert_int_equal(s->rows, 0);
    assert_int_equal(qr_seg_verify(s, &e), 0);
    qr_seg_close(s);
    free(path);
    tu_rmdir(dir);
}

/* Many rows: low-cardinality columns become dictionaries, bodies pages with
 * a trained zstd dictionary, and everything still reads back exactly. */

/* Row r read back through rd equals line r of the NDJSON it was built from. */
static void check_row(qr_colreader **rd, uint32_t r, const qr_buf *text, qr_buf *row)
{
    qr_err e;
    qr_buf_clear(row);
    assert_int_equal(qr_row_json(tu_otel(), rd, r, row, &e), 0);
    size_t n;
    const char *want = nth_line((const char *)text->p, text->len, (int)r, &n);
    assert_int_equal(row->len, n);
    assert_memory_equal(row->p, want, n);
}
/* `rows` rows of varied ids, services and bodies (NDJSON, NUL-terminated,
 * in text): many string pages and id pages. */
static void big_text(qr_buf *text, int rows)
{
    qr_buf_init(text);
    static const char *svc[] = {"cart", "frontend", "payment", "email", "ad"};
    uint64_t x = 12345;
    for (int i = 0; i < rows; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        char line[1024];
        int n = snprintf(
            line, sizeof line,
            "{\"Timestamp\":\"2025-09-23T00:%02d:%02d.%09dZ\",\"TraceId\":\"%016llx%016llx\","
            "\"SpanId\":\"%016llx\",\"TraceFlags\":%d,\"SeverityText\":\"INFO\","
            "\"SeverityNumber\":9,\"ServiceName\":\"%s\",\"Body\":\"order %llu failed to charge "
            "card %llx: connection refused\",\"ResourceSchemaUrl\":\"\","
            "\"ResourceAttributes\":{\"service.name\":\"%s\"},\"ScopeSchemaUrl\":\"\","
            "\"ScopeName\":\"s\",\"ScopeVersion\":\"\",\"ScopeAttributes\":{},"
            "\"LogAttributes\":{\"order.id\":\"%llu\",\"amount\":\"%d.%02d\"}}\n",
            i / 60000, i / 1000 % 60, i % 1000 * 1000, (unsigned long long)(x >> 3),
            (unsigned long long)(x / 7), (unsigned long long)x, (int)(x >> 60) & 1,
            svc[x % 5], (unsigned long long)(x >> 20), (unsigned long long)(x >> 30),
            svc[x % 5], (unsigned long long)(x % 100000), (int)(x % 500), (int)(x % 100));
        qr_buf_put(text, line, (size_t)n);
    }
    qr_buf_put_u8(text, 0);
}

static void test_large_batch_encodings_and_random_access(void **st)
{
    (void)st;
    enum { N = 150000 };
    qr_buf text;
    big_text(&text, N);
    char *dir = tu_tmpdir();
    char *path = write_text_segment(dir, (const char *)text.p, "big.qseg");
    qr_err e;
    qr_segment *s = qr_seg_open(path, &e);
    if (!s)
        fail_msg("%s", e.msg);
    assert_non_null(s);
    /* Body has many pages: its block directory is out of line (format 10)
     * and read on first use */
    assert_true(s->cols[COL_BODY].lazy);
    assert_false(s->cols[COL_BODY].loaded);
    assert_non_null(qr_seg_colmeta(s, COL_BODY, &e));
    assert_true(s->cols[COL_BODY].loaded);
    assert_false(s->cols[COL_TIMESTAMP].lazy);
    assert_int_equal(s->cols[COL_SERVICE_NAME].encoding, ENC_DICT);
    assert_int_equal(s->cols[COL_RESOURCE_ATTRIBUTES].encoding, ENC_DICT);
    assert_int_equal(s->cols[COL_BODY].encoding, ENC_PAGED);
    assert_true(s->cols[COL_BODY].zdict_blk >= 0);
    assert_int_equal(s->cols[COL_TRACE_ID].encoding, ENC_HEXID);
    assert_int_equal(s->cols[COL_TIMESTAMP].ndata, 3); /* 64K-row blocks */
    /* random access to single rows gives the exact line */
    qr_colreader *rd[QR_OTEL_NCOLS];
    for (int c = 0; c < QR_OTEL_NCOLS; c++)
        assert_non_null(rd[c] = qr_colr_open(s, c, &e));
    qr_buf row;
    qr_buf_init(&row);
    for (int k = 0; k < 200; k++) {
        uint32_t r = (uint32_t)((k * 7919u) % N);
        check_row(rd, r, &text, &row);
    }
    /* the same through random-access readers (late materialisation):
     * point reads, pages and blocks re-read, in any order */
    for (int c = 0; c < QR_OTEL_NCOLS; c++) {
        qr_colr_close(rd[c]);
        assert_non_null(rd[c] = qr_colr_open(s, c, &e));
        qr_colr_random(rd[c], 1);
    }
    for (int k = 0; k < 600; k++) {
        uint32_t r = k < 200 ? (uint32_t)((k * 104729u) % N) : k < 400 ? (uint32_t)(N - k) : (uint32_t)(k * 3u);
        check_row(rd, r, &text, &row);
    }
    for (int c = 0; c < QR_OTEL_NCOLS; c++)
        qr_colr_close(rd[c]);
    /* sequential read of everything equals the input */
    qr_buf all;
    qr_buf_init(&all);
    assert_int_equal(tu_seg_json(path, &all, &e), 0);
    assert_int_equal(all.len, text.len - 1);
    assert_memory_equal(all.p, text.p, all.len);
    /* compact: well under the NDJSON size */
    assert_true(s->len * 5 < text.len);
    qr_seg_close(s);
    qr_buf_free(&all);
    qr_buf_free(&row);
    qr_buf_free(&text);
    free(path);
    tu_rmdir(dir);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static void spit(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

/* Open, verify and read all rows; returns 0 if everything worked. */
static int read_everything(const char *path, qr_err *e)
{
    qr_segment *s = qr_seg_open(path, e);
    if (!s)
        return -1;
    int rc = qr_seg_verify(s, e);
    qr_seg_close(s);
    if (rc)
        return rc;
    qr_buf out;
    qr_buf_init(&out);
    rc = tu_seg_json(path, &out, e);
    qr_buf_free(&out);
    return rc;
}

static void test_every_flipped_byte_is_detected(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    char *path = write_text_segment(dir, rows_text, "c.qseg");
    size_t n;
    unsigned char *orig = slurp(path, &n);
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/bad.qseg", dir);
    unsigned char *mut = malloc(n);
    for (size_t i = 0; i < n; i++) {
        memcpy(mut, orig, n);
        mut[i] ^= (unsigned char)(1u << (i % 8));
        spit(bad, mut, n);
        qr_err e;
        qr_err_clear(&e);
        if (read_everything(bad, &e) == 0)
            fail_msg("flipping byte %zu of %zu went unnoticed", i, n);
        assert_non_null(strstr(e.msg, "bad.qseg"));
        assert_true(!strcmp(e.code, QR_E_CORRUPT) || !strcmp(e.code, QR_E_VERSION));
    }
    free(mut);
    free(orig);
    free(path);
    tu_rmdir(dir);
}

/* An out-of-line column directory (format 10): every flipped byte of it
 * is found (its checksum), not at open but when its column is first read,
 * naming the segment and the column; the other columns still read. */
static void test_flipped_column_directory_is_detected(void **st)
{
    (void)st;
    qr_buf text;
    big_text(&text, 3000);
    char *dir = tu_tmpdir();
    char *path = write_text_segment(dir, (const char *)text.p, "d.qseg");
    qr_buf_free(&text);
    qr_err e;
    qr_segment *s = qr_seg_open(path, &e);
    assert_non_null(s);
    const qr_colmeta *body = &s->cols[COL_BODY];
    assert_true(body->lazy);
    assert_true(body->nblocks > QR_SEG_INLINE_BLOCKS);
    uint64_t off = body->dir_off;
    uint32_t len = body->dir_len;
    qr_seg_close(s);
    size_t n;
    unsigned char *orig = slurp(path, &n);
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/bad.qseg", dir);
    for (uint32_t i = 0; i < len; i++) {
        orig[off + i] ^= (unsigned char)(1u << (i % 8));
        spit(bad, orig, n);
        orig[off + i] ^= (unsigned char)(1u << (i % 8));
        s = qr_seg_open(bad, &e);
        if (!s)
            fail_msg("byte %u of the Body directory: the open failed: %s", i, e.msg);
        qr_colreader *ok = qr_colr_open(s, COL_SERVICE_NAME, &e);
        assert_non_null(ok);
        qr_colr_close(ok);
        qr_err_clear(&e);
        assert_null(qr_colr_open(s, COL_BODY, &e));
        assert_string_equal(e.code, QR_E_CORRUPT);
        if (!strstr(e.msg, "bad.qseg") || !strstr(e.msg, "column Body: block directory"))
            fail_msg("byte %u: %s", i, e.msg);
        assert_int_equal(qr_seg_verify(s, &e), -1); /* quarry verify finds it too */
        qr_seg_close(s);
    }
    free(orig);
    free(path);
    tu_rmdir(dir);
}

/* The check quarry verify makes of a map value without rendering it
 * (qr_colr_map_check) accepts exactly what the reader that renders it
 * accepts: for every map value of the rows, each byte flipped three ways,
 * each truncation and one byte more, both agree; a failure is XX001
 * naming the column. A pair naming a key past the segment's keys fails. */
static int map_verdict(qr_colreader *r, const unsigned char *p, size_t n, int json, qr_err *e)
{
    qr_slice v = {(const char *)p, n};
    if (!json)
        return qr_colr_map_check(r, v, e);
    qr_buf out;
    qr_buf_init(&out);
    int rc = qr_colr_map_json(r, v, &out, e);
    qr_buf_free(&out);
    return rc;
}

static void map_agree(qr_colreader *r, const unsigned char *p, size_t n, const char *col,
                      int *rejected)
{
    qr_err e1, e2;
    qr_err_clear(&e1);
    qr_err_clear(&e2);
    int c = map_verdict(r, p, n, 0, &e1), j = map_verdict(r, p, n, 1, &e2);
    if ((c == 0) != (j == 0))
        fail_msg("%s: %zu bytes: check %d, render %d", col, n, c, j);
    if (c != 0) {
        assert_string_equal(e1.code, QR_E_CORRUPT);
        if (!strstr(e1.msg, col) || !strstr(e1.msg, "malformed map value"))
            fail_msg("%s", e1.msg);
        (*rejected)++;
    }
}

static void test_map_check_agrees_with_reader(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    char *path = write_text_segment(dir, rows_text, "m.qseg");
    qr_err e;
    qr_segment *s = qr_seg_open(path, &e);
    assert_non_null(s);
    static const int cols[] = {COL_RESOURCE_ATTRIBUTES, COL_SCOPE_ATTRIBUTES, COL_LOG_ATTRIBUTES};
    int values = 0, rejected = 0;
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
        qr_colreader *r = qr_colr_open(s, cols[c], &e);
        assert_non_null(r);
        const char *col = s->cols[cols[c]].name;
        for (uint32_t row = 0; row < s->rows; row++) {
            qr_slice v;
            assert_int_equal(qr_colr_bytes(r, row, &v, &e), 0);
            if (!v.p)
                continue;
            values++;
            unsigned char buf[512];
            assert_true(v.n + 1 <= sizeof buf);
            memcpy(buf, v.p, v.n);
            assert_int_equal(qr_colr_map_check(r, v, &e), 0);
            static const unsigned char flips[] = {0x01, 0x80, 0xff};
            for (size_t i = 0; i < v.n; i++)
                for (size_t f = 0; f < sizeof flips; f++) {
                    buf[i] ^= flips[f];
                    map_agree(r, buf, v.n, col, &rejected);
                    buf[i] ^= flips[f];
                }
            for (size_t n = 0; n < v.n; n++)
                map_agree(r, buf, n, col, &rejected);
            buf[v.n] = 0;
            map_agree(r, buf, v.n + 1, col, &rejected);
            /* one pair naming key 2^20 (the segment has a handful) */
            const unsigned char bad[] = {1, 0x80, 0x80, 0x80, 0x01, 0};
            size_t bn = sizeof bad;
            assert_int_equal(map_verdict(r, bad, bn, 0, &e), -1);
            assert_int_equal(map_verdict(r, bad, bn, 1, &e), -1);
        }
        qr_colr_close(r);
    }
    assert_int_equal(values, 9);    /* the maps that are not NULL */
    assert_true(rejected > values); /* mutations the check turned down */
    assert_int_equal(qr_seg_verify(s, &e), 0);
    qr_seg_close(s);
    free(path);
    tu_rmdir(dir);
}

static void test_every_truncation_is_detected(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    char *path = write_text_segment(dir, rows_text, "t.qseg");
    size_t n;
    unsigned char *orig = slurp(path, &n);
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/cut.qseg", dir);
    for (size_t len = 0; len < n; len++) {
        spit(bad, orig, len);
        qr_err e;
        qr_err_clear(&e);
        assert_int_equal(read_everything(bad, &e), -1);
        assert_string_equal(e.code, QR_E_CORRUPT);
        assert_non_null(strstr(e.msg, "cut.qseg"));
    }
    free(orig);
    free(path);
    tu_rmdir(dir);
}

static void test_wrong_version_is_named(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    char *path = write_text_segment(dir, rows_text, "v.qseg");
    size_t n;
    unsigned char *b = slurp(path, &n);
    b[8] = QR_SEG_VERSION + 1; /* a header of the next version */
    spit(path, b, n);
    qr_err e;
    assert_null(qr_seg_open(path, &e));
    assert_string_equal(e.code, QR_E_VERSION);
    char want[100];
    snprintf(want, sizeof want, "format version %u", QR_SEG_VERSION + 1);
    assert_non_null(strstr(e.msg, want));
    b[8] = 11; /* a format 11 header on a file of this version: the trailer disagrees */
    spit(path, b, n);
    assert_null(qr_seg_open(path, &e));
    assert_string_equal(e.code, QR_E_VERSION);
    snprintf(want, sizeof want, "trailer format version %u, header version 11", QR_SEG_VERSION);
    assert_non_null(strstr(e.msg, want));
    free(b);
    free(path);
    tu_rmdir(dir);
}

static void test_missing_file_and_garbage(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    char p[4200];
    snprintf(p, sizeof p, "%s/none.qseg", dir);
    qr_err e;
    assert_null(qr_seg_open(p, &e));
    assert_string_equal(e.code, QR_E_IO);
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 131 + 7);
    spit(p, junk, sizeof junk);
    assert_null(qr_seg_open(p, &e));
    assert_string_equal(e.code, QR_E_CORRUPT);
    tu_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_all_columns_sorted_by_time),
        cmocka_unit_test(test_empty_segment),
        cmocka_unit_test(test_large_batch_encodings_and_random_access),
        cmocka_unit_test(test_every_flipped_byte_is_detected),
        cmocka_unit_test(test_every_truncation_is_detected),
        cmocka_unit_test(test_flipped_column_directory_is_detected),
        cmocka_unit_test(test_map_check_agrees_with_reader),
        cmocka_unit_test(test_wrong_version_is_named),
        cmocka_unit_test(test_missing_file_and_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
