/* test_json.c - tests for util/json: the pull parser's grammar, every error
 * kind with its offset, zero-copy and decoded strings, UTF-8 edges, int64
 * edges, nesting limit, truncated input, the canonical writer and its round
 * trip, and the SSE2 string scan against its scalar twin.
 *
 * Every input is copied into a malloc'ed buffer of its exact size, so ASan
 * catches any read past the end. `QJ_BENCH=1 test_json` prints the parse
 * throughput of a typical log line instead of running the tests.
 */
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "util/json.h"

#define DOC(s) s, sizeof(s) - 1

#define E_EOF "unexpected end of input"
#define E_UNTERM "unterminated string"
#define E_BAD_HEX "invalid \\u escape: expected 4 hex digits"
#define E_LONE_HIGH "lone surrogate \\ud800-\\udbff: no low surrogate follows"
#define E_LONE_LOW "lone surrogate \\udc00-\\udfff: no high surrogate before"
#define E_CONT "invalid UTF-8 in string: unexpected continuation byte"
#define E_OVERLONG "invalid UTF-8 in string: overlong encoding"
#define E_SURR "invalid UTF-8 in string: encoded surrogate"
#define E_BIG "invalid UTF-8 in string: above U+10FFFF"
#define E_TRUNC "invalid UTF-8 in string: truncated sequence"
#define E_BYTE "invalid UTF-8 in string: invalid byte"

static const char typical_line[] =
    "{\"ts\":\"2024-05-01T12:34:56.789Z\",\"level\":\"info\",\"service\":\"checkout-api\","
    "\"host\":\"ip-10-0-3-17.ec2.internal\",\"pid\":4711,"
    "\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"span_id\":\"00f067aa0ba902b7\","
    "\"msg\":\"request completed: POST /api/v2/orders/12345/items -> 200\","
    "\"http\":{\"method\":\"POST\",\"path\":\"/api/v2/orders/12345/items\",\"status\":\"200\","
    "\"user_agent\":\"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124.0\"},"
    "\"duration_ms\":187,\"bytes_out\":5123,"
    "\"user\":{\"id\":\"u_918273\",\"org\":\"acme-corp\",\"plan\":\"enterprise\"},"
    "\"k8s\":{\"namespace\":\"prod\",\"pod\":\"checkout-api-7d9f8b6c5-x2k4q\",\"container\":"
    "\"app\",\"node\":\"ip-10-0-3-17\"},"
    "\"region\":\"us-east-1\",\"version\":\"3.14.2\",\"retry\":0,\"cache_hit\":true,"
    "\"error\":null}";

/* ---- helpers ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return tu_rand(&rng_state); }

static char *dup_exact(const char *s, size_t n)
{
    char *p = malloc(n ? n : 1);
    assert_non_null(p);
    if (n)
        memcpy(p, s, n);
    return p;
}

static void assert_err(const qr_json *j, size_t off, const char *why)
{
    if (!j->err_why || strcmp(j->err_why, why) != 0 || j->err_off != off)
        fail_msg("want \"%s\" at %zu, got \"%s\" at %zu", why, off,
                 j->err_why ? j->err_why : "(no error)", j->err_off);
}

/* Walks any value through the pull API (numbers via qj_number). */
static int walk_value(qr_json *j, qr_arena *a)
{
    qr_slice s;
    int v, r;
    switch (qj_peek(j)) {
    case QJ_STRING: return qj_string(j, &s, a);
    case QJ_NUMBER: return qj_number(j, &s);
    case QJ_NULL: return qj_null(j);
    case QJ_TRUE:
    case QJ_FALSE: return qj_bool(j, &v);
    case QJ_OBJECT:
        if (qj_object_begin(j))
            return -1;
        while ((r = qj_object_next(j, &s, a)) == 1)
            if (walk_value(j, a))
                return -1;
        return r;
    case QJ_ARRAY:
        if (qj_array_begin(j))
            return -1;
        while ((r = qj_array_next(j)) == 1)
            if (walk_value(j, a))
                return -1;
        return r;
    default: return -1; /* QJ_END (empty document) or QJ_ERROR */
    }
}

typedef struct {
    int rc;
    size_t off;
    const char *why;
} result;

/* Parses doc[0, n) as one document twice, with the pull walker and with
 * qj_skip; both must agree. Returns the outcome. */
static result parse_doc(const char *doc, size_t n)
{
    char *buf = dup_exact(doc, n);
    qr_arena a;
    qr_arena_init(&a, 0, 0);
    qr_json w, k;
    qj_init(&w, buf, n);
    int rw = walk_value(&w, &a) || qj_finish(&w) ? -1 : 0;
    if (rw && !w.err_why) /* the walker found an empty document */
        w.err_why = "empty", w.err_off = n;
    qj_init(&k, buf, n);
    int rk = qj_skip(&k) || qj_finish(&k) ? -1 : 0;
    if (rw && rk && !strcmp(w.err_why, "empty")) { /* skip says where it ran out */
        assert_string_equal(k.err_why, E_EOF);
        w.err_why = k.err_why;
    }
    if (rw != rk || (rw && (strcmp(w.err_why, k.err_why) || w.err_off != k.err_off)))
        fail_msg("walker (%d \"%s\" @%zu) and qj_skip (%d \"%s\" @%zu) disagree on %.*s", rw,
                 w.err_why ? w.err_why : "", w.err_off, rk, k.err_why ? k.err_why : "",
                 k.err_off, (int)n, doc);
    qr_arena_free(&a);
    free(buf);
    return (result){rw, w.err_off, w.err_why};
}

static void check_ok(const char *doc, size_t n)
{
    result r = parse_doc(doc, n);
    if (r.rc)
        fail_msg("rejected %.*s: \"%s\" at %zu", (int)n, doc, r.why, r.off);
}

static void check_err(const char *doc, size_t n, size_t off, const char *why)
{
    result r = parse_doc(doc, n);
    if (!r.rc)
        fail_msg("accepted %.*s, want \"%s\" at %zu", (int)n, doc, why, off);
    if (strcmp(r.why, why) || r.off != off)
        fail_msg("on %.*s: want \"%s\" at %zu, got \"%s\" at %zu", (int)n, doc, why, off, r.why,
                 r.off);
}

/* Parses one string document; returns 0 and the decoded bytes (copied into
 * *dec, caller frees), or -1 with the error in *j. */
static int parse_one_string(const char *doc, size_t n, qr_json *j, char **dec, size_t *dn,
                            int *zero_copy)
{
    char *buf = dup_exact(doc, n);
    qr_arena a;
    qr_arena_init(&a, 0, 0);
    qr_slice s;
    qj_init(j, buf, n);
    int rc = qj_string(j, &s, &a);
    if (!rc)
        rc = qj_finish(j);
    if (!rc) {
        *dec = dup_exact(s.p, s.n);
        *dn = s.n;
        if (zero_copy)
            *zero_copy = s.p >= buf && s.p <= buf + n;
    }
    qr_arena_free(&a);
    free(buf);
    return rc;
}

/* '"' + pre 'x's + bytes + post 'y's + '"', in a buffer of exact size */
static char *string_doc(size_t pre, const char *b, size_t bn, size_t post, size_t *n)
{
    *n = pre + bn + post + 2;
    char *d = malloc(*n);
    assert_non_null(d);
    d[0] = '"';
    memset(d + 1, 'x', pre);
    memcpy(d + 1 + pre, b, bn);
    memset(d + 1 + pre + bn, 'y', post);
    d[*n - 1] = '"';
    return d;
}

static void check_string(const char *doc, size_t n, const char *want, size_t wn, int zero_copy)
{
    qr_json j;
    char *dec = NULL;
    size_t dn = 0;
    int zc = 0;
    if (parse_one_string(doc, n, &j, &dec, &dn, &zc))
        fail_msg("rejected %.*s: \"%s\" at %zu", (int)n, doc, j.err_why, j.err_off);
    assert_int_equal(dn, wn);
    assert_memory_equal(dec, want, wn);
    assert_int_equal(zc, zero_copy);
    free(dec);
}

static void check_string_err(const char *doc, size_t n, size_t off, const char *why)
{
    qr_json j;
    char *dec = NULL;
    size_t dn = 0;
    if (!parse_one_string(doc, n, &j, &dec, &dn, NULL)) {
        free(dec);
        fail_msg("accepted %.*s, want \"%s\" at %zu", (int)n, doc, why, off);
    }
    assert_err(&j, off, why);
    check_err(doc, n, off, why); /* qj_skip and the walker say the same */
}

/* ---- strings ---- */

static void test_plain_string_is_zero_copy(void **state)
{
    const char doc[] = "  \"hello, world\"  ";
    char *buf = dup_exact(doc, sizeof doc - 1);
    qr_json j;
    qr_slice s;
    qj_init(&j, buf, sizeof doc - 1);
    assert_int_equal(qj_peek(&j), QJ_STRING);
    assert_int_equal(qj_string(&j, &s, NULL), 0); /* no arena needed */
    assert_ptr_equal(s.p, buf + 3);
    assert_int_equal(s.n, 12);
    assert_int_equal(qj_finish(&j), 0);
    free(buf);

    /* keys too, and a long one that goes through the 16-byte loop */
    const char obj[] = "{\"a-rather-long-key-of-40-bytes-1234567890\":\"v\",\"k\":\"\"}";
    buf = dup_exact(obj, sizeof obj - 1);
    qj_init(&j, buf, sizeof obj - 1);
    assert_int_equal(qj_object_begin(&j), 0);
    assert_int_equal(qj_object_next(&j, &s, NULL), 1);
    assert_ptr_equal(s.p, buf + 2);
    assert_int_equal(s.n, 40);
    assert_int_equal(qj_string(&j, &s, NULL), 0);
    assert_ptr_equal(s.p, buf + 45);
    assert_int_equal(s.n, 1);
    assert_int_equal(qj_object_next(&j, &s, NULL), 1);
    assert_ptr_equal(s.p, buf + 49);
    assert_int_equal(s.n, 1);
    assert_int_equal(qj_string(&j, &s, NULL), 0);
    assert_ptr_equal(s.p, buf + 53);
    assert_int_equal(s.n, 0);
    assert_int_equal(qj_object_next(&j, &s, NULL), 0);
    assert_int_equal(qj_finish(&j), 0);
    free(buf);
}

static void test_simple_escapes_are_decoded(void **state)
{
    check_string(DOC("\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\""), DOC("a\"b\\c/d\be\ff\ng\rh\ti"),
                 0);
    check_string(DOC("\"\\n\""), DOC("\n"), 0);
    /* an escape after a long plain run, and a long run after it */
    check_string(DOC("\"0123456789abcdefghij\\tklmnopqrstuvwxyz0123456789\""),
                 DOC("0123456789abcdefghij\tklmnopqrstuvwxyz0123456789"), 0);
}

static void test_unicode_escapes_become_utf8(void **state)
{
    check_string(DOC("\"\\u0041\""), DOC("A"), 0);
    check_string(DOC("\"\\u007f\""), DOC("\x7f"), 0);
    check_string(DOC("\"\\u0080\""), DOC("\xc2\x80"), 0);
    check_string(DOC("\"\\u00e9\""), DOC("\xc3\xa9"), 0);
    check_string(DOC("\"\\u00E9\""), DOC("\xc3\xa9"), 0);
    check_string(DOC("\"\\u07ff\""), DOC("\xdf\xbf"), 0);
    check_string(DOC("\"\\u0800\""), DOC("\xe0\xa0\x80"), 0);
    check_string(DOC("\"\\u20AC\""), DOC("\xe2\x82\xac"), 0);
    check_string(DOC("\"\\ud7ff\""), DOC("\xed\x9f\xbf"), 0);
    check_string(DOC("\"\\ue000\""), DOC("\xee\x80\x80"), 0);
    check_string(DOC("\"\\uFFFF\""), DOC("\xef\xbf\xbf"), 0);
    /* surrogate pairs */
    check_string(DOC("\"\\ud800\\udc00\""), DOC("\xf0\x90\x80\x80"), 0);
    check_string(DOC("\"\\ud83d\\ude00\""), DOC("\xf0\x9f\x98\x80"), 0);
    check_string(DOC("\"\\uD83D\\uDE00!\""), DOC("\xf0\x9f\x98\x80!"), 0);
    check_string(DOC("\"\\udbff\\udfff\""), DOC("\xf4\x8f\xbf\xbf"), 0);
    /* \u0000 is a NUL byte inside a slice with a length */
    check_string(DOC("\"\\u0000\""), "\0", 1, 0);
    check_string(DOC("\"a\\u0000b\""), "a\0b", 3, 0);
}

static void test_lone_surrogates_are_rejected(void **state)
{
    check_string_err(DOC("\"\\ud800\""), 1, E_LONE_HIGH);
    check_string_err(DOC("\"\\udbff\""), 1, E_LONE_HIGH);
    check_string_err(DOC("\"\\ud800x\""), 1, E_LONE_HIGH);
    check_string_err(DOC("\"\\ud800\\n\""), 1, E_LONE_HIGH);
    check_string_err(DOC("\"\\ud800\\u0041\""), 1, E_LONE_HIGH);
    check_string_err(DOC("\"\\ud800\\ud800\""), 1, E_LONE_HIGH);
    check_string_err(DOC("\"\\ud800\\ue000\""), 1, E_LONE_HIGH);
    check_string_err(DOC("\"\\udc00\""), 1, E_LONE_LOW);
    check_string_err(DOC("\"ab\\udfff\""), 3, E_LONE_LOW);
    check_string_err(DOC("\"\\udc00\\ud800\""), 1, E_LONE_LOW);
    check_string_err(DOC("\"\\ud800\\uZZZZ\""), 7, E_BAD_HEX);
}

static void test_invalid_escapes_are_named(void **state)
{
    check_string_err(DOC("\"\\x41\""), 1, "invalid escape \\x");
    check_string_err(DOC("\"ab\\a\""), 3, "invalid escape \\a");
    check_string_err(DOC("\"\\'\""), 1, "invalid escape \\'");
    check_string_err(DOC("\"\\U0041\""), 1, "invalid escape \\U");
    check_string_err(DOC("\"\\0\""), 1, "invalid escape \\0");
    check_string_err(DOC("\"\\v\""), 1, "invalid escape \\v");
    check_string_err(DOC("\"\\~\""), 1, "invalid escape \\~");
    check_string_err(DOC("\"\\ \""), 1, "invalid escape");
    check_string_err(DOC("\"\\\x01\""), 1, "invalid escape");
    check_string_err(DOC("\"\\\xc3\xa9\""), 1, "invalid escape");
    check_string_err(DOC("\"\\u12g4\""), 1, E_BAD_HEX);
    check_string_err(DOC("\"\\u12\""), 1, E_BAD_HEX);
    check_string_err(DOC("\"x\\u-123\""), 2, E_BAD_HEX);
}

static void test_unterminated_strings(void **state)
{
    check_string_err(DOC("\""), 0, E_UNTERM);
    check_string_err(DOC("\"abc"), 0, E_UNTERM);
    check_string_err(DOC("\"abcdefghijklmnopqrstuvwxyz0123456789"), 0, E_UNTERM);
    check_string_err(DOC("\"abc\\"), 0, E_UNTERM);
    check_string_err(DOC("\"abc\\\""), 0, E_UNTERM);
    check_string_err(DOC("\"\\u12"), 0, E_UNTERM);
    check_string_err(DOC("\"\\ud800"), 0, E_UNTERM);
    check_string_err(DOC("\"\\ud800\\"), 0, E_UNTERM);
    check_string_err(DOC("\"\\ud800\\u"), 0, E_UNTERM);
    check_string_err(DOC("\"\\ud800\\udc0"), 0, E_UNTERM);
    check_string_err(DOC("\"\xc3"), 0, E_UNTERM);
    check_string_err(DOC("\"\xf0\x9f\x98"), 0, E_UNTERM);
    check_err(DOC("{\"a\":\"xyz"), 5, E_UNTERM);
    check_err(DOC("{\"ab"), 1, E_UNTERM);
}

static void test_control_characters_are_rejected(void **state)
{
    for (int c = 0; c < 0x20; c++) {
        for (size_t pre = 0; pre < 40; pre += 13) {
            char b[1] = {(char)c};
            size_t n;
            char *doc = string_doc(pre, b, 1, 20, &n);
            check_string_err(doc, n, 1 + pre, "control character in string");
            free(doc);
        }
    }
    /* DEL is not a control character for JSON */
    check_string(DOC("\"a\x7f" "b\""), DOC("a\x7f" "b"), 1);
}

typedef struct {
    const char *b;
    size_t n;
} bytes;
#define B(s) {s, sizeof(s) - 1}

static void test_valid_utf8_edges_pass_zero_copy(void **state)
{
    static const bytes ok[] = {
        B("\x7f"),                 /* last 1-byte */
        B("\xc2\x80"),             /* first 2-byte, U+0080 */
        B("\xdf\xbf"),             /* last 2-byte, U+07FF */
        B("\xe0\xa0\x80"),         /* first 3-byte, U+0800 */
        B("\xed\x9f\xbf"),         /* U+D7FF, just below the surrogates */
        B("\xee\x80\x80"),         /* U+E000, just above them */
        B("\xef\xbf\xbf"),         /* U+FFFF */
        B("\xf0\x90\x80\x80"),     /* first 4-byte, U+10000 */
        B("\xf4\x8f\xbf\xbf"),     /* U+10FFFF, the last code point */
        B("h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xf0\x9f\x98\x80"),
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        for (size_t pre = 0; pre < 40; pre += 7) {
            for (size_t post = 0; post < 20; post += 19) {
                size_t n;
                char *doc = string_doc(pre, ok[i].b, ok[i].n, post, &n);
                check_string(doc, n, doc + 1, n - 2, 1);
                check_ok(doc, n);
                free(doc);
            }
        }
    }
}

static void test_invalid_utf8_is_rejected_at_its_lead_byte(void **state)
{
    static const struct {
        bytes b;
        size_t off; /* of the bad sequence, from the first byte */
        const char *why;
    } bad[] = {
        {B("\x80"), 0, E_CONT},
        {B("\xbf"), 0, E_CONT},
        {B("a\x80"), 1, E_CONT},
        {B("\xc3\xa9\xa9"), 2, E_CONT},
        {B("\xc0\x80"), 0, E_OVERLONG},
        {B("\xc1\xbf"), 0, E_OVERLONG},
        {B("\xe0\x80\x80"), 0, E_OVERLONG},
        {B("\xe0\x9f\xbf"), 0, E_OVERLONG},
        {B("\xf0\x80\x80\x80"), 0, E_OVERLONG},
        {B("\xf0\x8f\xbf\xbf"), 0, E_OVERLONG},
        {B("\xed\xa0\x80"), 0, E_SURR},
        {B("\xed\xbf\xbf"), 0, E_SURR},
        {B("ok\xed\xb2\x80"), 2, E_SURR},
        {B("\xf4\x90\x80\x80"), 0, E_BIG},
        {B("\xf5\x80\x80\x80"), 0, E_BIG},
        {B("\xf7\xbf\xbf\xbf"), 0, E_BIG},
        {B("\xf8\x88\x80\x80\x80"), 0, E_BYTE},
        {B("\xfe"), 0, E_BYTE},
        {B("\xff"), 0, E_BYTE},
        {B("\xc3"), 0, E_TRUNC}, /* cut by the padding or the closing quote */
        {B("\xc3" "A"), 0, E_TRUNC},
        {B("\xe2\x82"), 0, E_TRUNC},
        {B("\xe2\x82" "A"), 0, E_TRUNC},
        {B("\xe2" "A" "\xac"), 0, E_TRUNC},
        {B("\xf0\x9f\x98"), 0, E_TRUNC},
        {B("\xf0\x9f\x98\x41"), 0, E_TRUNC},
        {B("\xc3\\n"), 0, E_TRUNC}, /* cut by an escape */
        {B("\\n\xc3\xa9\xe9"), 4, E_TRUNC},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (size_t pre = 0; pre < 40; pre += 7) {
            for (size_t post = 0; post < 20; post += 19) {
                size_t n;
                char *doc = string_doc(pre, bad[i].b.b, bad[i].b.n, post, &n);
                check_string_err(doc, n, 1 + pre + bad[i].off, bad[i].why);
                free(doc);
            }
        }
    }
}

static void test_out_of_memory_when_the_arena_is_full(void **state)
{
    const char doc[] = "[\"short\",\"needs \\\"decoding\\\" and is longer than 64 bytes "
                       "........................\"]";
    char *buf = dup_exact(doc, sizeof doc - 1);
    qr_arena a;
    qr_arena_init(&a, 64, 64);
    qr_json j;
    qr_slice s;
    qj_init(&j, buf, sizeof doc - 1);
    assert_int_equal(qj_array_begin(&j), 0);
    assert_int_equal(qj_array_next(&j), 1);
    assert_int_equal(qj_string(&j, &s, &a), 0);
    assert_int_equal(qj_array_next(&j), 1);
    assert_int_equal(qj_string(&j, &s, &a), -1);
    assert_err(&j, 9, "out of memory");
    qr_arena_free(&a);

    /* no arena at all: fine for plain strings, "out of memory" with escapes */
    qj_init(&j, DOC("\"\\t\""));
    assert_int_equal(qj_string(&j, &s, NULL), -1);
    assert_err(&j, 0, "out of memory");
    free(buf);
}

/* ---- numbers and literals ---- */

static void check_int(const char *doc, size_t n, int64_t want)
{
    char *buf = dup_exact(doc, n);
    qr_json j;
    int64_t v = 12345;
    qj_init(&j, buf, n);
    if (qj_int64(&j, &v) || qj_finish(&j))
        fail_msg("rejected %.*s: \"%s\" at %zu", (int)n, doc, j.err_why, j.err_off);
    assert_int_equal(v, want);
    free(buf);
}

static void check_int_err(const char *doc, size_t n, size_t off, const char *why)
{
    char *buf = dup_exact(doc, n);
    qr_json j;
    int64_t v = 12345;
    qj_init(&j, buf, n);
    assert_int_equal(qj_int64(&j, &v), -1);
    assert_err(&j, off, why);
    assert_int_equal(v, 12345);
    free(buf);
}

static void test_int64_edges(void **state)
{
    check_int(DOC("0"), 0);
    check_int(DOC("-0"), 0);
    check_int(DOC("7"), 7);
    check_int(DOC(" \t42\n"), 42);
    check_int(DOC("-1"), -1);
    check_int(DOC("1234567890123"), 1234567890123ll);
    check_int(DOC("9223372036854775807"), INT64_MAX);
    check_int(DOC("-9223372036854775807"), -INT64_MAX);
    check_int(DOC("-9223372036854775808"), INT64_MIN);
    check_int(DOC("9223372036854775806"), INT64_MAX - 1);
    check_int_err(DOC("9223372036854775808"), 0, "integer out of range");
    check_int_err(DOC("-9223372036854775809"), 0, "integer out of range");
    check_int_err(DOC("9223372036854775810"), 0, "integer out of range");
    check_int_err(DOC("10000000000000000000"), 0, "integer out of range");
    check_int_err(DOC("18446744073709551616"), 0, "integer out of range");
    check_int_err(DOC(" 99999999999999999999999"), 1, "integer out of range");
}

static void test_int64_rejects_non_integers(void **state)
{
    check_int_err(DOC("1.5"), 0, "expected an integer");
    check_int_err(DOC("1.0"), 0, "expected an integer");
    check_int_err(DOC("1e3"), 0, "expected an integer");
    check_int_err(DOC("99999999999999999999.5"), 0, "expected an integer"); /* not "range" */
    check_int_err(DOC("-99999999999999999999e1"), 0, "expected an integer");
    check_int_err(DOC("-2E1"), 0, "expected an integer");
    check_int_err(DOC("  0.5"), 2, "expected an integer");
    check_int_err(DOC("\"1\""), 0, "expected an integer");
    check_int_err(DOC("true"), 0, "expected an integer");
    check_int_err(DOC("+1"), 0, "expected an integer");
    check_int_err(DOC("01"), 0, "leading zero in number");
    check_int_err(DOC("-00"), 1, "leading zero in number");
    check_int_err(DOC("-"), 1, E_EOF);
    check_int_err(DOC("-a"), 1, "expected a digit after '-'");
    check_int_err(DOC(""), 0, E_EOF);
    check_int_err(DOC("   "), 3, E_EOF);
}

static void test_number_grammar(void **state)
{
    check_ok(DOC("0"));
    check_ok(DOC("-0"));
    check_ok(DOC("1.5"));
    check_ok(DOC("-0.0"));
    check_ok(DOC("-1.5e10"));
    check_ok(DOC("1E+2"));
    check_ok(DOC("1e-2"));
    check_ok(DOC("0e0"));
    check_ok(DOC("123456789012345678901234567890"));
    check_ok(DOC("[0,-0,1,2.25,3e3]"));
    check_err(DOC("1."), 2, E_EOF);
    check_err(DOC("1.x"), 2, "expected a digit after '.'");
    check_err(DOC("1.e5"), 2, "expected a digit after '.'");
    check_err(DOC("[1.]"), 3, "expected a digit after '.'");
    check_err(DOC(".5"), 0, "expected a value");
    check_err(DOC("1e"), 2, E_EOF);
    check_err(DOC("1e+"), 3, E_EOF);
    check_err(DOC("1ex"), 2, "expected a digit in exponent");
    check_err(DOC("1e+-1"), 3, "expected a digit in exponent");
    check_err(DOC("01"), 0, "leading zero in number");
    check_err(DOC("-01"), 1, "leading zero in number");
    check_err(DOC("[00]"), 1, "leading zero in number");
    check_err(DOC("-"), 1, E_EOF);
    check_err(DOC("-x"), 1, "expected a digit after '-'");
    check_err(DOC("--1"), 1, "expected a digit after '-'");
    check_err(DOC("+1"), 0, "expected a value");
    check_err(DOC("0x10"), 1, "trailing characters");
    check_err(DOC("1e5.5"), 3, "trailing characters");
    check_err(DOC("Infinity"), 0, "expected a value");
    check_err(DOC("NaN"), 0, "expected a value");
}

static void test_literals(void **state)
{
    check_ok(DOC("true"));
    check_ok(DOC("false"));
    check_ok(DOC("null"));
    check_ok(DOC("[true,false,null]"));
    check_err(DOC("tru"), 3, E_EOF);
    check_err(DOC("f"), 1, E_EOF);
    check_err(DOC("nul"), 3, E_EOF);
    check_err(DOC("trux"), 0, "invalid literal");
    check_err(DOC("nulL"), 0, "invalid literal");
    check_err(DOC("fals"), 4, E_EOF);
    check_err(DOC("[nil]"), 1, "invalid literal");
    check_err(DOC("True"), 0, "expected a value");
    check_err(DOC("nullx"), 4, "trailing characters");

    qr_json j;
    int v = -1;
    qj_init(&j, DOC(" true"));
    assert_int_equal(qj_bool(&j, &v), 0);
    assert_int_equal(v, 1);
    qj_init(&j, DOC("false"));
    assert_int_equal(qj_bool(&j, &v), 0);
    assert_int_equal(v, 0);
    qj_init(&j, DOC("null"));
    assert_int_equal(qj_bool(&j, &v), -1);
    assert_err(&j, 0, "expected true or false");
    qj_init(&j, DOC(" 0"));
    assert_int_equal(qj_null(&j), -1);
    assert_err(&j, 1, "expected null");
    qj_init(&j, DOC("null"));
    assert_int_equal(qj_null(&j), 0);
    assert_int_equal(qj_finish(&j), 0);
}

/* ---- structure ---- */

static void test_objects_and_arrays_grammar(void **state)
{
    check_ok(DOC("{}"));
    check_ok(DOC("[]"));
    check_ok(DOC("{\"a\":1,\"b\":[1,{\"c\":null}],\"d\":{}}"));
    check_ok(DOC("[[],[[]],{},\"\"]"));
    check_ok(DOC("{\"\":\"\"}"));
    check_ok(DOC("{\"a\":1,\"a\":2}")); /* duplicate keys are the caller's business */
    check_err(DOC("{\"a\" 1}"), 5, "expected ':'");
    check_err(DOC("{\"a\"}"), 4, "expected ':'");
    check_err(DOC("{\"a\":1 \"b\":2}"), 7, "expected ',' or '}'");
    check_err(DOC("{\"a\":1]"), 6, "expected ',' or '}'");
    check_err(DOC("{\"a\":1,}"), 7, "expected a string key");
    check_err(DOC("{\"a\":1,,}"), 7, "expected a string key");
    check_err(DOC("{1:2}"), 1, "expected a string key or '}'");
    check_err(DOC("{,}"), 1, "expected a string key or '}'");
    check_err(DOC("{'a':1}"), 1, "expected a string key or '}'");
    check_err(DOC("{\"a\":}"), 5, "expected a value");
    check_err(DOC("[1 2]"), 3, "expected ',' or ']'");
    check_err(DOC("[1}"), 2, "expected ',' or ']'");
    check_err(DOC("[1,]"), 3, "expected a value");
    check_err(DOC("[,1]"), 1, "expected a value");
    check_err(DOC("]"), 0, "expected a value");
    check_err(DOC("}"), 0, "expected a value");
    check_err(DOC("["), 1, E_EOF);
    check_err(DOC("[1,"), 3, E_EOF);
    check_err(DOC("{\"a\":"), 5, E_EOF);
    check_err(DOC("{\"a\""), 4, E_EOF);
    check_err(DOC("{"), 1, E_EOF);
    check_err(DOC("{\"a\":1,"), 7, E_EOF);
}

static void test_whitespace_is_the_four_rfc_bytes(void **state)
{
    check_ok(DOC(" \t\n\r{ \t\n\r\"a\" \t\n\r: \t\n\r[ \t\n\r1 \t\n\r, \t\n\r\"x\" ] \t\n\r, "
                 "\"b\" : { } } \t\n\r"));
    check_ok(DOC("[ ]"));
    check_ok(DOC("\n1\n"));
    check_err(DOC("\v1"), 0, "expected a value");
    check_err(DOC("{\f}"), 1, "expected a string key or '}'");
    check_err(DOC("1\v"), 1, "trailing characters");
    check_err(DOC("\xc2\xa0" "1"), 0, "expected a value"); /* NBSP */
    check_err(DOC("\xef\xbb\xbf{}"), 0, "expected a value"); /* BOM */
    check_err(DOC("[1\x00]"), 2, "expected ',' or ']'");
}

static void test_trailing_characters(void **state)
{
    check_err(DOC("{} x"), 3, "trailing characters");
    check_err(DOC("1 2"), 2, "trailing characters");
    check_err(DOC("{}}"), 2, "trailing characters");
    check_err(DOC("[]]"), 2, "trailing characters");
    check_err(DOC("\"a\"\"b\""), 3, "trailing characters");
    check_err(DOC("{},{}"), 2, "trailing characters");
    check_err(DOC("{}\x00"), 2, "trailing characters");
    check_ok(DOC("{}  \n"));
    /* qj_finish inside an open container */
    qr_json j;
    qj_init(&j, DOC("[1"));
    int64_t v;
    assert_int_equal(qj_array_begin(&j), 0);
    assert_int_equal(qj_array_next(&j), 1);
    assert_int_equal(qj_int64(&j, &v), 0);
    assert_int_equal(qj_finish(&j), -1);
    assert_err(&j, 2, E_EOF);
}

static char *nested(int depth, int objects, size_t *n)
{
    size_t cap = (size_t)depth * 6 + 2;
    char *d = malloc(cap), *p = d;
    assert_non_null(d);
    for (int i = 0; i < depth; i++)
        p += objects ? (memcpy(p, "{\"a\":", 5), 5) : (*p = '[', 1);
    *p++ = '1';
    for (int i = 0; i < depth; i++)
        *p++ = objects ? '}' : ']';
    *n = (size_t)(p - d);
    return d;
}

static void test_nesting_64_ok_65_rejected(void **state)
{
    for (int objects = 0; objects < 2; objects++) {
        size_t n;
        char *d = nested(64, objects, &n);
        check_ok(d, n);
        free(d);
        d = nested(65, objects, &n);
        check_err(d, n, objects ? 64 * 5 : 64, "nesting deeper than 64");
        free(d);
    }
    /* qj_skip counts from the depth the pull API has opened */
    for (int inner = 62; inner <= 64; inner++) {
        size_t n;
        char *arr = nested(inner, 0, &n);
        char *d = malloc(n + 2);
        d[0] = '[';
        memcpy(d + 1, arr, n);
        d[n + 1] = ']';
        qr_json j;
        qj_init(&j, d, n + 2);
        assert_int_equal(qj_array_begin(&j), 0);
        assert_int_equal(qj_array_next(&j), 1);
        if (inner < 64) {
            assert_int_equal(qj_skip(&j), 0);
            assert_int_equal(qj_array_next(&j), 0);
            assert_int_equal(qj_finish(&j), 0);
        } else {
            assert_int_equal(qj_skip(&j), -1);
            assert_err(&j, 64, "nesting deeper than 64");
        }
        free(arr);
        free(d);
    }
}

static void test_walk_typical_log_line(void **state)
{
    char *buf = dup_exact(typical_line, sizeof typical_line - 1);
    qr_arena a;
    qr_arena_init(&a, 0, 0);
    qr_json j;
    qr_slice k, v;
    int64_t x;
    int members = 0, nested_members = 0;
    qj_init(&j, buf, sizeof typical_line - 1);
    assert_int_equal(qj_object_begin(&j), 0);
    while (qj_object_next(&j, &k, &a) == 1) {
        members++;
        switch (qj_peek(&j)) {
        case QJ_STRING:
            assert_int_equal(qj_string(&j, &v, &a), 0);
            if (k.n == 5 && !memcmp(k.p, "level", 5))
                assert_memory_equal(v.p, "info", 4);
            break;
        case QJ_NUMBER:
            assert_int_equal(qj_int64(&j, &x), 0);
            if (k.n == 3 && !memcmp(k.p, "pid", 3))
                assert_int_equal(x, 4711);
            break;
        case QJ_OBJECT:
            assert_int_equal(qj_object_begin(&j), 0);
            while (qj_object_next(&j, &k, &a) == 1) {
                nested_members++;
                assert_int_equal(qj_string(&j, &v, &a), 0);
            }
            break;
        default: assert_int_equal(qj_skip(&j), 0); break;
        }
    }
    assert_null(j.err_why);
    assert_int_equal(qj_finish(&j), 0);
    assert_int_equal(members, 18);
    assert_int_equal(nested_members, 11);
    assert_int_equal(a.used, 0); /* nothing needed decoding */
    qr_arena_free(&a);
    free(buf);
}

static void test_peek_reports_types_and_errors_stick(void **state)
{
    static const struct {
        const char *doc;
        qj_type t;
    } cases[] = {
        {"null", QJ_NULL}, {"false", QJ_FALSE}, {"true", QJ_TRUE},  {"-1", QJ_NUMBER},
        {"0", QJ_NUMBER},  {"9", QJ_NUMBER},    {"\"\"", QJ_STRING}, {"{}", QJ_OBJECT},
        {"[]", QJ_ARRAY},  {"  ", QJ_END},      {"", QJ_END},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qr_json j;
        qj_init(&j, cases[i].doc, strlen(cases[i].doc));
        assert_int_equal(qj_peek(&j), cases[i].t);
        assert_null(j.err_why);
    }
    qr_json j;
    qr_slice s;
    int64_t v;
    qj_init(&j, DOC(" x 1"));
    assert_int_equal(qj_peek(&j), QJ_ERROR);
    assert_err(&j, 1, "expected a value");
    /* every later call fails without moving the error */
    assert_int_equal(qj_peek(&j), QJ_ERROR);
    assert_int_equal(qj_int64(&j, &v), -1);
    assert_int_equal(qj_string(&j, &s, NULL), -1);
    assert_int_equal(qj_skip(&j), -1);
    assert_int_equal(qj_object_begin(&j), -1);
    assert_int_equal(qj_object_next(&j, &s, NULL), -1);
    assert_int_equal(qj_array_next(&j), -1);
    assert_int_equal(qj_finish(&j), -1);
    assert_err(&j, 1, "expected a value");
    /* the end of input inside a container is an error, not QJ_END */
    qj_init(&j, DOC("[1, "));
    assert_int_equal(qj_array_begin(&j), 0);
    assert_int_equal(qj_array_next(&j), 1);
    assert_int_equal(qj_int64(&j, &v), 0);
    assert_int_equal(qj_array_next(&j), 1);
    assert_int_equal(qj_peek(&j), QJ_ERROR);
    assert_err(&j, 4, E_EOF);
    /* a NULL empty input is fine */
    qj_init(&j, NULL, 0);
    assert_int_equal(qj_peek(&j), QJ_END);
    assert_int_equal(qj_finish(&j), 0);
}

static void test_every_prefix_of_a_document_is_rejected(void **state)
{
    static const char doc[] =
        " {\"a\" : [1, -2.5e+3, 0, true, false, null, \"x\\u00e9\\ud83d\\ude00\\n\"],"
        "\"b\":{\"c\":\"plain text that is longer than sixteen bytes\",\"d\":{}},\"e\":[],"
        "\"f\":\"h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xf0\x9f\x98\x80\",\"g\":-0.0E-1,"
        "\"h\":[[[\"deep\"]]],\"i\\\"\":12345678901234567890} ";
    check_ok(DOC(doc));
    size_t n = sizeof doc - 1;
    for (size_t len = 0; len < n - 1; len++) { /* n - 1: the last byte is a space */
        result r = parse_doc(doc, len);
        if (!r.rc)
            fail_msg("accepted the %zu-byte prefix", len);
        assert_non_null(r.why);
        assert_true(r.off <= len);
    }
}

/* ---- writer ---- */

static void check_write(const char *s, size_t n, const char *want)
{
    qr_buf b;
    qr_buf_init(&b);
    qj_write_string(&b, s, n);
    if (b.len != strlen(want) || memcmp(b.p, want, b.len))
        fail_msg("wrote %.*s, want %s", (int)b.len, (const char *)b.p, want);
    qr_buf_free(&b);
}

static void test_write_string_canonical_form(void **state)
{
    static const char *const ctl[32] = {
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
        "\\b",     "\\t",     "\\n",     "\\u000b", "\\f",     "\\r",     "\\u000e", "\\u000f",
        "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017",
        "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
    };
    for (int c = 0; c < 32; c++) {
        char in[1] = {(char)c}, want[16];
        snprintf(want, sizeof want, "\"%s\"", ctl[c]);
        check_write(in, 1, want);
        /* and after a long plain run (the 16-byte loop) */
        char in2[21] = "abcdefghijklmnopqrs";
        in2[19] = (char)c;
        in2[20] = 'z';
        snprintf(want, sizeof want, "%s", ctl[c]);
        char want2[64];
        snprintf(want2, sizeof want2, "\"abcdefghijklmnopqrs%sz\"", want);
        check_write(in2, 21, want2);
    }
    check_write("", 0, "\"\"");
    check_write("\"", 1, "\"\\\"\"");
    check_write("\\", 1, "\"\\\\\"");
    check_write("/", 1, "\"/\"");
    check_write("\x7f", 1, "\"\x7f\"");
    check_write("a\"b\\c/d", 7, "\"a\\\"b\\\\c/d\"");
    check_write("h\xc3\xa9llo \xf0\x9f\x98\x80", 11, "\"h\xc3\xa9llo \xf0\x9f\x98\x80\"");
    check_write("0123456789abcdef0123456789abcdef\"", 33,
                "\"0123456789abcdef0123456789abcdef\\\"\"");
    /* appends to what the buffer holds */
    qr_buf b;
    qr_buf_init(&b);
    qr_buf_put(&b, "k=", 2);
    qj_write_string(&b, "v\n", 2);
    assert_int_equal(b.len, 7);
    assert_memory_equal(b.p, "k=\"v\\n\"", 7);
    qr_buf_free(&b);
}

/* Appends a random code point as UTF-8 (control bytes, quotes and
 * backslashes are frequent on purpose). */
static size_t random_utf8(char *o)
{
    unsigned u;
    switch (rnd() % 8) {
    case 0: u = (unsigned)(rnd() % 0x20); break;
    case 1: u = "\"\\/\x7f"[rnd() % 4]; break;
    case 2: case 3: u = 0x20 + (unsigned)(rnd() % 0x60); break;
    case 4: u = 0x80 + (unsigned)(rnd() % 0x780); break;
    case 5:
        do
            u = 0x800 + (unsigned)(rnd() % 0xf800);
        while (u >= 0xd800 && u <= 0xdfff);
        break;
    default: u = 0x10000 + (unsigned)(rnd() % 0x100000); break;
    }
    if (u < 0x80) {
        o[0] = (char)u;
        return 1;
    }
    if (u < 0x800) {
        o[0] = (char)(0xc0 | u >> 6);
        o[1] = (char)(0x80 | (u & 0x3f));
        return 2;
    }
    if (u < 0x10000) {
        o[0] = (char)(0xe0 | u >> 12);
        o[1] = (char)(0x80 | (u >> 6 & 0x3f));
        o[2] = (char)(0x80 | (u & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | u >> 18);
    o[1] = (char)(0x80 | (u >> 12 & 0x3f));
    o[2] = (char)(0x80 | (u >> 6 & 0x3f));
    o[3] = (char)(0x80 | (u & 0x3f));
    return 4;
}

static void test_write_then_parse_round_trips(void **state)
{
    qr_arena a;
    qr_arena_init(&a, 0, 0);
    char s[400];
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = 0, cps = rnd() % 80;
        int plain_ascii = iter % 3 == 0; /* some strings need no escapes */
        for (size_t i = 0; i < cps; i++) {
            if (plain_ascii)
                s[n++] = (char)('a' + rnd() % 26);
            else
                n += random_utf8(s + n);
        }
        qr_buf b;
        qr_buf_init(&b);
        qj_write_string(&b, s, n);
        for (size_t i = 0; i < b.len; i++)
            assert_true(b.p[i] >= 0x20); /* no raw control byte survives */
        char *buf = dup_exact((const char *)b.p, b.len);
        qr_json j;
        qr_slice out;
        qj_init(&j, buf, b.len);
        if (qj_string(&j, &out, &a) || qj_finish(&j))
            fail_msg("re-parse failed: \"%s\" at %zu", j.err_why, j.err_off);
        assert_int_equal(out.n, n);
        assert_memory_equal(out.p, s, n);
        /* writing the decoded bytes again gives the same text */
        qr_buf b2;
        qr_buf_init(&b2);
        qj_write_string(&b2, out.p, out.n);
        assert_int_equal(b2.len, b.len);
        assert_memory_equal(b2.p, b.p, b.len);
        qr_buf_free(&b2);
        free(buf);
        qr_buf_free(&b);
        qr_arena_reset(&a);
    }
    qr_arena_free(&a);
}

/* ---- the SIMD kernel against its scalar twin ---- */

static void test_sse2_scan_matches_scalar(void **state)
{
    static const char specials[] = {'"', '\\', 0x00, 0x1f, 0x0a, 0x20, 0x7f, (char)0x80,
                                    (char)0xc3, (char)0xff, '!', '#', '[', ']'};
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = rnd() % 100;
        char *b = malloc(n ? n : 1); /* exact size: ASan checks the 16-byte loads */
        unsigned density = 1 + (unsigned)(rnd() % 40);
        for (size_t i = 0; i < n; i++)
            b[i] = rnd() % density == 0 ? specials[rnd() % sizeof specials]
                                        : (char)(0x20 + rnd() % 0x5f);
        for (size_t off = 0; off <= n; off += 1 + rnd() % 5) {
            int h1 = 0, h2 = 0;
            size_t k1 = qj_scan_string(b + off, n - off, &h1);
            size_t k2 = qj_scan_string_scalar(b + off, n - off, &h2);
            if (k1 != k2 || h1 != h2)
                fail_msg("n %zu off %zu: simd %zu/%d scalar %zu/%d", n, off, k1, h1, k2, h2);
            int keep = 1; /* *hi is only ever set, never cleared */
            qj_scan_string(b + off, n - off, &keep);
            assert_int_equal(keep, 1);
        }
        free(b);
    }
    /* every position of a special byte in a 48-byte plain buffer */
    for (size_t sp = 0; sp < sizeof specials; sp++) {
        for (size_t pos = 0; pos < 48; pos++) {
            char b[48];
            memset(b, 'q', sizeof b);
            b[pos] = specials[sp];
            int h1 = 0, h2 = 0;
            size_t k1 = qj_scan_string(b, sizeof b, &h1);
            size_t k2 = qj_scan_string_scalar(b, sizeof b, &h2);
            assert_int_equal(k1, k2);
            assert_int_equal(h1, h2);
        }
    }
    int h = 0;
    assert_int_equal(qj_scan_string("", 0, &h), 0);
    assert_int_equal(h, 0);
}

/* ---- throughput (QJ_BENCH=1) ---- */

static long walk_members(qr_json *j, qr_arena *a)
{
    long sum = 0;
    qr_slice k, v;
    int64_t x;
    int r;
    if (qj_object_begin(j))
        return -1;
    while ((r = qj_object_next(j, &k, a)) == 1) {
        sum += (long)k.n;
        switch (qj_peek(j)) {
        case QJ_STRING:
            if (qj_string(j, &v, a))
                return -1;
            sum += (long)v.n;
            break;
        case QJ_NUMBER:
            if (qj_int64(j, &x))
                return -1;
            sum += (long)x;
            break;
        case QJ_OBJECT: {
            long t = walk_members(j, a);
            if (t < 0)
                return -1;
            sum += t;
            break;
        }
        default:
            if (qj_skip(j))
                return -1;
        }
    }
    return r < 0 ? -1 : sum;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int bench(void)
{
    size_t n = sizeof typical_line - 1;
    char *buf = dup_exact(typical_line, n);
    qr_arena a;
    qr_arena_init(&a, 0, 0);
    long iters = 0, sum = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < 10000; i++, iters++) {
            qr_json j;
            qj_init(&j, buf, n);
            long s = walk_members(&j, &a);
            if (s < 0 || qj_finish(&j)) {
                fprintf(stderr, "bench: %s at %zu\n", j.err_why, j.err_off);
                free(buf);
                return 1;
            }
            sum += s;
        }
    } while ((t = now() - t0) < 1.0);
    printf("json walk: %zu-byte line, %.0f MB/s, %.0f ns/line (checksum %ld)\n", n,
           (double)n * (double)iters / t / 1e6, t / (double)iters * 1e9, sum);
    iters = 0;
    t0 = now();
    do {
        for (int i = 0; i < 10000; i++, iters++) {
            qr_json j;
            qj_init(&j, buf, n);
            if (qj_skip(&j)) {
                free(buf);
                return 1;
            }
        }
    } while ((t = now() - t0) < 1.0);
    printf("json skip: %.0f MB/s\n", (double)n * (double)iters / t / 1e6);
    qr_arena_free(&a);
    free(buf);
    return 0;
}

int main(void)
{
    if (getenv("QJ_BENCH"))
        return bench();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_string_is_zero_copy),
        cmocka_unit_test(test_simple_escapes_are_decoded),
        cmocka_unit_test(test_unicode_escapes_become_utf8),
        cmocka_unit_test(test_lone_surrogates_are_rejected),
        cmocka_unit_test(test_invalid_escapes_are_named),
        cmocka_unit_test(test_unterminated_strings),
        cmocka_unit_test(test_control_characters_are_rejected),
        cmocka_unit_test(test_valid_utf8_edges_pass_zero_copy),
        cmocka_unit_test(test_invalid_utf8_is_rejected_at_its_lead_byte),
        cmocka_unit_test(test_out_of_memory_when_the_arena_is_full),
        cmocka_unit_test(test_int64_edges),
        cmocka_unit_test(test_int64_rejects_non_integers),
        cmocka_unit_test(test_number_grammar),
        cmocka_unit_test(test_literals),
        cmocka_unit_test(test_objects_and_arrays_grammar),
        cmocka_unit_test(test_whitespace_is_the_four_rfc_bytes),
        cmocka_unit_test(test_trailing_characters),
        cmocka_unit_test(test_nesting_64_ok_65_rejected),
        cmocka_unit_test(test_walk_typical_log_line),
        cmocka_unit_test(test_peek_reports_types_and_errors_stick),
        cmocka_unit_test(test_every_prefix_of_a_document_is_rejected),
        cmocka_unit_test(test_write_string_canonical_form),
        cmocka_unit_test(test_write_then_parse_round_trips),
        cmocka_unit_test(test_sse2_scan_matches_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
