/* test_expr.c - the expression evaluator against values worked out by hand
 * (and, for date_trunc, against a brute-force civil-calendar walk): LIKE
 * and ILIKE, date_trunc at every unit over 200 years, extract against
 * gmtime, floor and ceil, JSON access,
 * three-valued logic, exact integer arithmetic and its errors, casts. */
#include "testutil.h"

#include <math.h>
#include <time.h>

#include "exec/expr.h"
#include "format/schema.h"

static void test_like(void **st)
{
    (void)st;
    static const struct {
        const char *s, *p;
        int icase, want;
    } c[] = {
        {"abc", "abc", 0, 1},       {"abc", "a%", 0, 1},      {"abc", "%c", 0, 1},
        {"abc", "%b%", 0, 1},       {"abc", "a_c", 0, 1},     {"abc", "a_", 0, 0},
        {"abc", "%", 0, 1},         {"", "%", 0, 1},          {"", "_", 0, 0},
        {"a%c", "a\\%c", 0, 1},     {"abc", "a\\%c", 0, 0},   {"ABC", "abc", 0, 0},
        {"ABC", "abc", 1, 1},       {"Straße", "STRASSE", 1, 1}, {"éa", "_a", 0, 1},
        {"aaa", "%a%a%a%", 0, 1},   {"aa", "%a%a%a%", 0, 0},  {"x_y", "x\\_y", 0, 1},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        if (qr_like(c[i].s, strlen(c[i].s), c[i].p, strlen(c[i].p), c[i].icase) != c[i].want)
            fail_msg("'%s' %sLIKE '%s' should be %d", c[i].s, c[i].icase ? "I" : "", c[i].p,
                     c[i].want);
}

/* date_trunc against timegm over a civil walk: day, month, quarter, year,
 * week (Monday), and the sub-day units by division. */
static void test_date_trunc(void **st)
{
    (void)st;
    const int64_t S = 1000000000;
    uint64_t x = 12345;
    for (int i = 0; i < 20000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t ts = (int64_t)(x >> 2) % (int64_t)(9e18) - (int64_t)4.5e18; /* 1827..2112 */
        time_t secs = (time_t)(ts >= 0 ? ts / S : -((-ts + S - 1) / S));
        struct tm tm;
        gmtime_r(&secs, &tm);
        struct tm d = tm;
        d.tm_hour = d.tm_min = d.tm_sec = 0;
        int64_t day = (int64_t)timegm(&d) * S;
        assert_int_equal(qr_date_trunc(QR_TU_DAY, ts), day);
        struct tm mo = d;
        mo.tm_mday = 1;
        assert_int_equal(qr_date_trunc(QR_TU_MONTH, ts), (int64_t)timegm(&mo) * S);
        struct tm q = mo;
        q.tm_mon = q.tm_mon / 3 * 3;
        assert_int_equal(qr_date_trunc(QR_TU_QUARTER, ts), (int64_t)timegm(&q) * S);
        struct tm y = mo;
        y.tm_mon = 0;
        assert_int_equal(qr_date_trunc(QR_TU_YEAR, ts), (int64_t)timegm(&y) * S);
        int back = (tm.tm_wday + 6) % 7; /* days since Monday */
        assert_int_equal(qr_date_trunc(QR_TU_WEEK, ts), day - (int64_t)back * 86400 * S);
        struct tm h = tm;
        h.tm_min = h.tm_sec = 0;
        assert_int_equal(qr_date_trunc(QR_TU_HOUR, ts), (int64_t)timegm(&h) * S);
        struct tm m = tm;
        m.tm_sec = 0;
        assert_int_equal(qr_date_trunc(QR_TU_MINUTE, ts), (int64_t)timegm(&m) * S);
        assert_int_equal(qr_date_trunc(QR_TU_SECOND, ts), (int64_t)secs * S);
        int64_t ms = qr_date_trunc(QR_TU_MILLISECOND, ts);
        assert_true(ms <= ts && ts - ms < 1000000 && ms % 1000000 == 0);
    }
    assert_int_equal(qr_tunit_parse("Minute"), QR_TU_MINUTE);
    assert_int_equal(qr_tunit_parse("weeks"), QR_TU_WEEK);
    assert_int_equal(qr_tunit_parse("fortnight"), 0);
}

/* Build small trees by hand over a batch of two columns. */
static qr_expr *col(uint32_t slot, int t, int ct)
{
    static qr_expr pool[64];
    static int n;
    qr_expr *x = &pool[n++ % 64];
    memset(x, 0, sizeof *x);
    x->kind = QR_EX_COL;
    x->type = (uint8_t)t;
    x->ctype = (uint8_t)ct;
    x->slot = slot;
    return x;
}

static qr_expr *node2(int kind, int type, int op, qr_expr *a, qr_expr *b, qr_expr **args)
{
    qr_expr *x = col(0, 0, 0);
    x->kind = (uint8_t)kind;
    x->type = (uint8_t)type;
    x->op = (uint8_t)op;
    args[0] = a;
    args[1] = b;
    x->args = args;
    x->nargs = b ? 2 : 1;
    return x;
}

static void test_logic_arith_json(void **st)
{
    (void)st;
    /* column 0: ints with a NULL; column 1: bools with a NULL */
    qr_cell c0[4] = {{.i = 7}, {.i = INT64_MAX}, {.null = 1}, {.i = -3}};
    qr_cell c1[4] = {{.i = 1}, {.i = 0}, {.null = 1}, {.null = 1}};
    const qr_cell *cols[2] = {c0, c1};
    uint8_t types[2] = {QT_INT64, QT_BOOL};
    qr_xbatch b = {4, 2, cols, types, NULL};
    qr_arena a;
    qr_arena_init(&a, 4096, 0);
    qr_err e;
    qr_expr *args1[2], *args2[2], *args3[2];
    /* c1 AND (c0 > 0): true/false/NULL rules */
    qr_expr *gt = node2(QR_EX_CMP, QR_XT_BOOL, QR_CMP_GT, col(0, QR_XT_INT, QT_INT64), NULL, args1);
    qr_expr zero = {.kind = QR_EX_CONST, .type = QR_XT_INT, .val = {.i = 0}};
    args1[1] = &zero;
    gt->nargs = 2;
    qr_expr *and = node2(QR_EX_AND, QR_XT_BOOL, 0, col(1, QR_XT_BOOL, QT_BOOL), gt, args2);
    const qr_cell *v = qr_expr_eval(and, &b, &a, &e);
    assert_non_null(v);
    /* row0: true AND true; row1: false AND true = false; row2: NULL AND NULL;
     * row3: NULL AND false = false */
    assert_true(!v[0].null && v[0].i == 1);
    assert_true(!v[1].null && v[1].i == 0);
    assert_true(v[2].null);
    assert_true(!v[3].null && v[3].i == 0);
    /* c0 + 1 overflows on row 1: 22003, nothing half-done */
    qr_expr one = {.kind = QR_EX_CONST, .type = QR_XT_INT, .val = {.i = 1}};
    qr_expr *plus = node2(QR_EX_ARITH, QR_XT_INT, '+', col(0, QR_XT_INT, QT_INT64), &one, args3);
    assert_null(qr_expr_eval(plus, &b, &a, &e));
    assert_string_equal(e.code, QR_E_OUT_OF_RANGE);
    /* 7 / 0: 22012 */
    qr_cell d0[1] = {{.i = 7}};
    const qr_cell *dc[1] = {d0};
    qr_xbatch b1 = {1, 1, dc, types, NULL};
    qr_expr *args4[2];
    qr_expr *div = node2(QR_EX_ARITH, QR_XT_INT, '/', col(0, QR_XT_INT, QT_INT64), &zero, args4);
    assert_null(qr_expr_eval(div, &b1, &a, &e));
    assert_string_equal(e.code, "22012");
    /* JSON: ->> of a key, -> of an index, a missing key is NULL */
    const char *js = "{\"a\":{\"b\":\"x\\\"y\"},\"n\":[10,20],\"k\":null}";
    qr_cell j0[1] = {{.s = js, .n = (uint32_t)strlen(js)}};
    const qr_cell *jc[1] = {j0};
    uint8_t jt[1] = {QT_JSON};
    qr_xbatch bj = {1, 1, jc, jt, NULL};
    qr_expr ka = {.kind = QR_EX_CONST, .type = QR_XT_TEXT, .val = {.s = "a", .n = 1}};
    qr_expr kb = {.kind = QR_EX_CONST, .type = QR_XT_TEXT, .val = {.s = "b", .n = 1}};
    qr_expr kn = {.kind = QR_EX_CONST, .type = QR_XT_TEXT, .val = {.s = "n", .n = 1}};
    qr_expr kk = {.kind = QR_EX_CONST, .type = QR_XT_TEXT, .val = {.s = "k", .n = 1}};
    qr_expr i1 = {.kind = QR_EX_CONST, .type = QR_XT_INT, .val = {.i = 1}};
    qr_expr *g1a[2], *g2a[2], *g3a[2], *g4a[2], *g5a[2];
    qr_expr *g1 = node2(QR_EX_FUNC, QR_XT_JSON, 0, col(0, QR_XT_JSON, QT_JSON), &ka, g1a);
    g1->fn = QR_FN_JSON_GET;
    qr_expr *g2 = node2(QR_EX_FUNC, QR_XT_TEXT, 0, g1, &kb, g2a);
    g2->fn = QR_FN_JSON_GET_TEXT;
    v = qr_expr_eval(g2, &bj, &a, &e);
    assert_non_null(v);
    assert_int_equal(v[0].n, 3);
    assert_memory_equal(v[0].s, "x\"y", 3);
    qr_expr *g3 = node2(QR_EX_FUNC, QR_XT_JSON, 0, col(0, QR_XT_JSON, QT_JSON), &kn, g3a);
    g3->fn = QR_FN_JSON_GET;
    qr_expr *g4 = node2(QR_EX_FUNC, QR_XT_TEXT, 0, g3, &i1, g4a);
    g4->fn = QR_FN_JSON_GET_TEXT;
    v = qr_expr_eval(g4, &bj, &a, &e);
    assert_true(!v[0].null && v[0].n == 2 && !memcmp(v[0].s, "20", 2));
    qr_expr *g5 = node2(QR_EX_FUNC, QR_XT_TEXT, 0, col(0, QR_XT_JSON, QT_JSON), &kk, g5a);
    g5->fn = QR_FN_JSON_GET_TEXT;
    v = qr_expr_eval(g5, &bj, &a, &e);
    assert_true(v[0].null); /* ->> of a JSON null is SQL NULL */
    qr_arena_free(&a);
}

/* extract(field FROM ts) against gmtime over random instants (before and
 * after the epoch, with nanoseconds), and floor/ceil through the evaluator */
static void test_extract_and_floor(void **st)
{
    (void)st;
    uint64_t x = 777;
    for (int i = 0; i < 20000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t s = (int64_t)(x >> 33) % 8000000000LL - 2000000000LL, ns = (int64_t)(x % 1000000000);
        int64_t ts = s * 1000000000 + ns;
        time_t t = (time_t)s;
        struct tm tm;
        gmtime_r(&t, &tm);
        assert_true(qr_extract(QR_XF_EPOCH, ts) == (double)s + (double)ns / 1e9);
        assert_true(qr_extract(QR_XF_YEAR, ts) == tm.tm_year + 1900);
        assert_true(qr_extract(QR_XF_MONTH, ts) == tm.tm_mon + 1);
        assert_true(qr_extract(QR_XF_DAY, ts) == tm.tm_mday);
        assert_true(qr_extract(QR_XF_HOUR, ts) == tm.tm_hour);
        assert_true(qr_extract(QR_XF_MINUTE, ts) == tm.tm_min);
        assert_true(qr_extract(QR_XF_SECOND, ts) == tm.tm_sec + (double)ns / 1e9);
        assert_true(qr_extract(QR_XF_DOW, ts) == tm.tm_wday);
        assert_true(qr_extract(QR_XF_DOY, ts) == tm.tm_yday + 1);
    }
    assert_true(fabs(qr_extract(QR_XF_EPOCH, -1) + 1e-9) < 1e-15); /* just before 1970 */
    assert_true(qr_extract(QR_XF_SECOND, -1) > 59.99 && qr_extract(QR_XF_YEAR, -1) == 1969);
    assert_int_equal(qr_xfield_parse("EPOCH"), QR_XF_EPOCH);
    assert_int_equal(qr_xfield_parse("dow"), QR_XF_DOW);
    assert_int_equal(qr_xfield_parse("fortnight"), 0);

    qr_arena a;
    qr_arena_init(&a, 4096, 0);
    qr_err e;
    qr_cell fc[3] = {{.i = qr_num_from_f64(2.5)}, {.i = qr_num_from_f64(-2.5)}, {.null = 1}};
    const qr_cell *cols[] = {fc};
    uint8_t types[] = {QT_FLOAT64};
    qr_xbatch b = {3, 1, cols, types, NULL};
    qr_expr *args[2];
    for (int fn = QR_FN_FLOOR; fn <= QR_FN_CEIL; fn++) {
        qr_expr *f = node2(QR_EX_FUNC, QR_XT_FLOAT, 0, col(0, QR_XT_FLOAT, QT_FLOAT64), NULL, args);
        f->nargs = 1;
        f->fn = (uint8_t)fn;
        const qr_cell *v = qr_expr_eval(f, &b, &a, &e);
        assert_non_null(v);
        assert_true(v[0].f == (fn == QR_FN_FLOOR ? 2.0 : 3.0));
        assert_true(v[1].f == (fn == QR_FN_FLOOR ? -3.0 : -2.0));
        assert_true(v[2].null);
    }
    qr_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_like),
        cmocka_unit_test(test_extract_and_floor),
        cmocka_unit_test(test_date_trunc),
        cmocka_unit_test(test_logic_arith_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
