/* test_qtree.c - filter trees built with the constructors (query.h,
 * "building trees") find the same rows as the same query parsed from text,
 * for every node kind, over the oracle's segments; and the constructors
 * refuse what a column cannot take, with the column's name. */
#include "search/oracle.h"
#include "util/timefmt.h"

ORACLE_FIXTURE

/* The rows of q, segment by segment, as one number per segment folded
 * into a checksum (and the total). */
static uint64_t rows_of(qr_query *q, uint64_t *total)
{
    uint64_t h = 1469598103934665603ull;
    *total = 0;
    for (int s = 0; s < NSEG; s++) {
        qr_arena a;
        qr_arena_init(&a, 1 << 16, 0);
        qr_segsearch ss;
        qr_segsearch_init(&ss, od.segs[s]);
        qr_err e;
        qr_it *it = qr_segsearch_compile(&ss, q, &a, &e);
        if (!it)
            fail_msg("compile: %s", e.msg);
        for (uint32_t d = qr_it_next(it); d != QR_NO_DOC; d = qr_it_next(it)) {
            h = (h ^ ((uint64_t)s << 32 | d)) * 1099511628211ull;
            (*total)++;
        }
        qr_segsearch_close(&ss);
        qr_arena_free(&a);
    }
    return h;
}

/* A built tree and the text must match the same rows, and some rows. */
static void same(qr_query *built, const char *text, qr_arena *a)
{
    qr_err e;
    assert_non_null(built);
    qr_query *parsed = qr_query_parse(text, strlen(text), a, &e);
    if (!parsed)
        fail_msg("%s: %s", text, e.msg);
    uint64_t n1, n2;
    uint64_t h1 = rows_of(built, &n1), h2 = rows_of(parsed, &n2);
    if (n1 != n2 || h1 != h2)
        fail_msg("%s: built tree has %llu rows, parsed %llu", text, (unsigned long long)n1,
                 (unsigned long long)n2);
    assert_true(n1 > 0);
    qr_query_release(built);
    qr_query_release(parsed);
}

static void test_every_node_kind(void **st)
{
    (void)st;
    const qr_tabdef *d = tu_otel();
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_err e;
    int body = qr_tabdef_index_by_name(d, "body", 4);
    int ts = qr_tabdef_col(d, "timestamp", 9); /* names ignore case */
    int svc = qr_tabdef_col(d, "ServiceName", 11), sev = qr_tabdef_col(d, "SeverityNumber", 14);
    int flags = qr_tabdef_col(d, "TraceFlags", 10), ver = qr_tabdef_col(d, "ScopeVersion", 12);
    assert_true(body >= 0 && ts >= 0 && svc >= 0 && sev >= 0 && flags >= 0 && ver >= 0);

    same(qr_q_text(d, body, "FAILED", 6, &a, &e), "failed", &a);
    same(qr_q_text(d, body, "failed to place order", 21, &a, &e), "\"failed to place order\"", &a);
    const char *w[] = {"failed", "order"};
    size_t l[] = {6, 5};
    uint32_t gap[] = {0, 3}, adj[] = {0, 1};
    same(qr_q_phrase(d, body, w, l, gap, 2, 0, &a, &e), "\"failed ? ? order\"", &a);
    same(qr_q_phrase(d, body, w, l, adj, 2, 3, &a, &e), "\"failed order\"~3", &a);
    same(qr_q_multi(d, body, Q_PREFIX, "ord", 3, 0, &a, &e), "ord*", &a);
    same(qr_q_multi(d, body, Q_REGEXP, "c.che", 5, 0, &a, &e), "/c.che/", &a);
    same(qr_q_multi(d, body, Q_LIKE, "%tion", 5, 0, &a, &e), "like:%tion", &a);
    same(qr_q_multi(d, body, Q_FUZZY, "cahce", 5, 1, &a, &e), "cahce~1", &a);
    same(qr_q_equals(d, svc, "cart", 4, &a, &e), "service:cart", &a);
    same(qr_q_range(d, sev, 13, INT64_MAX, &a, &e), "sevnum:>=13", &a);
    same(qr_q_range(d, flags, 1, 1, &a, &e), "TraceFlags:1", &a); /* a scan */
    int64_t t0, t1;
    const char *why;
    assert_int_equal(qr_time_parse("2025-09-23T00:00:00Z", 20, &t0, &why), 0);
    assert_int_equal(qr_time_parse("2025-09-23T00:00:00.02Z", 23, &t1, &why), 0);
    same(qr_q_range(d, ts, t0, t1, &a, &e),
         "time:[2025-09-23T00:00:00Z TO 2025-09-23T00:00:00.02Z]", &a);
    /* a text column without an index: a scan of its values */
    qr_slice v;
    qr_colreader *r = qr_colr_open(od.segs[0], ver, &e);
    assert_non_null(r);
    v.p = NULL;
    for (uint32_t row = 0; !v.p && row < od.segs[0]->rows; row++)
        assert_int_equal(qr_colr_bytes(r, row, &v, &e), 0);
    assert_non_null(v.p);
    char text[300];
    snprintf(text, sizeof text, "ScopeVersion:\"%.*s\"", (int)v.n, v.p);
    same(qr_q_equals(d, ver, v.p, v.n, &a, &e), text, &a);
    qr_colr_close(r);

    qr_query *k2[2] = {qr_q_text(d, body, "failed", 6, &a, &e),
                       qr_q_text(d, body, "order", 5, &a, &e)};
    same(qr_q_list(Q_AND, k2, 2, &a, &e), "failed AND order", &a);
    qr_query *o2[2] = {qr_q_text(d, body, "error", 5, &a, &e),
                       qr_q_text(d, body, "failed", 6, &a, &e)};
    same(qr_q_list(Q_OR, o2, 2, &a, &e), "error OR failed", &a);
    qr_query *n2[2] = {qr_q_text(d, body, "error", 5, &a, &e),
                       qr_q_not(qr_q_text(d, body, "cache", 5, &a, &e), &a, &e)};
    same(qr_q_list(Q_AND, n2, 2, &a, &e), "error -cache", &a);
    qr_query *m4[4] = {qr_q_text(d, body, "error", 5, &a, &e), qr_q_text(d, body, "failed", 6, &a, &e),
                       qr_q_text(d, body, "charge", 6, &a, &e), qr_q_text(d, body, "cache", 5, &a, &e)};
    same(qr_q_minmatch(2, m4, 4, &a, &e), "atleast(2, error, failed, charge, cache)", &a);
    qr_query *mix[2] = {qr_q_equals(d, svc, "payment", 7, &a, &e),
                        qr_q_text(d, body, "failed", 6, &a, &e)};
    same(qr_q_list(Q_AND, mix, 2, &a, &e), "service:payment AND failed", &a);
    same(qr_q_all(&a, &e), "NOT nosuchword", &a);
    qr_arena_free(&a);
}

/* Built trees carry the scoring flag the parser would give them. */
static void test_scored_leaves_as_parsed(void **st)
{
    (void)st;
    const qr_tabdef *d = tu_otel();
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_err e;
    qr_query *t = qr_q_text(d, 0, "failed", 6, &a, &e);
    qr_query *p = qr_query_parse("failed", 6, &a, &e);
    assert_int_equal(t->scored, 1);
    assert_int_equal(t->scored, p->scored);
    assert_int_equal(t->field, p->field);
    qr_query *k = qr_q_equals(d, COL_SERVICE_NAME, "cart", 4, &a, &e);
    qr_query *kp = qr_query_parse("service:cart", 12, &a, &e);
    assert_int_equal(k->scored, 0);
    assert_int_equal(k->field, kp->field);
    qr_arena_free(&a);
}

static void test_constructors_refuse_what_a_column_cannot_take(void **st)
{
    (void)st;
    const qr_tabdef *d = tu_otel();
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_err e;
    assert_null(qr_q_range(d, COL_BODY, 1, 2, &a, &e));
    assert_string_equal(e.code, QR_E_DATATYPE);
    assert_string_equal(e.msg, "query: column Body is not a number or timestamp column: no range on it");
    assert_null(qr_q_path(d, COL_BODY, "a", 1, "b", 1, &a, &e));
    assert_string_equal(e.msg, "query: column Body has no paths index");
    assert_null(qr_q_equals(d, COL_SEVERITY_NUMBER, "9", 1, &a, &e));
    assert_string_equal(e.msg, "query: column SeverityNumber is int32: equality of a value needs a text column");
    assert_null(qr_q_multi(d, 1, Q_PREFIX, "ca", 2, 0, &a, &e)); /* index 1: ServiceName keyword */
    assert_string_equal(e.msg, "query: index 1 is not a full-text index");
    assert_null(qr_q_multi(d, 0, Q_FUZZY, "ca", 2, 3, &a, &e));
    assert_null(qr_q_text(d, 0, "...", 3, &a, &e));
    assert_string_equal(e.msg, "query: '...' has no letters or digits to search for");
    const uint32_t bad_offs[] = {0, 0};
    const char *w[] = {"a", "b"};
    size_t l[] = {1, 1};
    assert_null(qr_q_phrase(d, 0, w, l, bad_offs, 2, 0, &a, &e));
    assert_null(qr_q_minmatch(0, NULL, 0, &a, &e));
    assert_null(qr_q_list(Q_AND, NULL, 0, &a, &e));
    assert_null(qr_q_not(NULL, &a, &e));
    assert_null(qr_q_range(d, 99, 1, 2, &a, &e));
    assert_string_equal(e.code, QR_E_UNDEFINED_COLUMN);
    qr_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_node_kind),
        cmocka_unit_test(test_scored_leaves_as_parsed),
        cmocka_unit_test(test_constructors_refuse_what_a_column_cannot_take),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
