/* test_par_limits.c - a search over a tree the caller built
 * (qr_par_init_tree), and the stop conditions every search obeys: a cancel
 * flag and a deadline (SQLSTATE 57014, saying which) and the run arenas'
 * memory limit (53200) for counts, top-k by score and by time, and first-k;
 * after a stop the next search works and nothing leaks (ASan). */
#include "search/oracle.h"
#include "search/topk.h"

ORACLE_FIXTURE

static int noop_emit(void *ctx, const qr_hit *h, uint32_t n, qr_err *e)
{
    (void)h, (void)e;
    *(uint64_t *)ctx += n;
    return 0;
}

/* Every kind of run on ps: 0 when all worked, else -1 with the first error. */
static int run_all(qr_par_search *ps, uint64_t *count, qr_err *e)
{
    qr_hit hits[10];
    uint32_t n;
    uint64_t first = 0;
    if (qr_par_count(ps, count, e) != 0 || qr_par_topk(ps, QR_BY_SCORE, 10, 0, hits, &n, NULL, e) != 0 ||
        qr_par_topk(ps, QR_BY_TIME, 10, 0, hits, &n, NULL, e) != 0 ||
        qr_par_first(ps, 10, noop_emit, &first, NULL, e) != 0)
        return -1;
    return 0;
}

static void test_a_built_tree_is_searched_like_its_text(void **st)
{
    (void)st;
    const qr_tabdef *d = tu_otel();
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_err e;
    qr_query *kids[2] = {qr_q_multi(d, 0, Q_FUZZY, "cahce", 5, 1, &a, &e),
                         qr_q_equals(d, COL_SERVICE_NAME, "cart", 4, &a, &e)};
    qr_query *tree = qr_q_list(Q_AND, kids, 2, &a, &e);
    assert_non_null(tree);
    const char *text = "cahce~1 AND service:cart";
    for (int threads = 1; threads <= 3; threads++) {
        qr_par_search pt, px;
        assert_int_equal(qr_par_init_tree(&pt, NULL, d, od.segs, NSEG, tree, threads, &e), 0);
        assert_int_equal(qr_par_init(&px, d, od.segs, NSEG, text, strlen(text), threads, &e), 0);
        uint64_t ct, cx;
        qr_hit ht[50], hx[50];
        uint32_t nt, nx;
        assert_int_equal(qr_par_count(&pt, &ct, &e), 0);
        assert_int_equal(qr_par_count(&px, &cx, &e), 0);
        assert_int_equal(ct, cx);
        assert_true(ct > 0);
        assert_int_equal(qr_par_topk(&pt, QR_BY_TIME, 50, 0, ht, &nt, NULL, &e), 0);
        assert_int_equal(qr_par_topk(&px, QR_BY_TIME, 50, 0, hx, &nx, NULL, &e), 0);
        assert_int_equal(nt, nx);
        assert_memory_equal(ht, hx, sizeof *ht * nt);
        qr_par_free(&pt);
        qr_par_free(&px);
    }
    /* the tree was never written: searching it again gives the same */
    qr_par_search pt;
    uint64_t again;
    assert_int_equal(qr_par_init_tree(&pt, NULL, d, od.segs, NSEG, tree, 2, &e), 0);
    assert_int_equal(qr_par_count(&pt, &again, &e), 0);
    qr_par_free(&pt);
    assert_int_equal(qr_par_init_tree(&pt, NULL, d, od.segs, NSEG, NULL, 2, &e), -1);
    qr_arena_free(&a);
}

static void test_cancel_and_deadline_stop_every_kind_of_search(void **st)
{
    (void)st;
    const char *qs[] = {"failed", "cahce~2 OR /c.che/", "\"failed to place order\""};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        for (int threads = 1; threads <= 2; threads++) {
            qr_par_search ps;
            qr_err e;
            assert_int_equal(qr_par_init(&ps, tu_otel(), od.segs, NSEG, qs[i], strlen(qs[i]),
                                         threads, &e),
                             0);
            uint64_t want, got;
            assert_int_equal(run_all(&ps, &want, &e), 0);
            atomic_int cancel = 1;
            qr_par_set_limits(&ps, &cancel, 0);
            static const int kinds = 4;
            for (int k = 0; k < kinds; k++) {
                qr_hit hits[10];
                uint32_t n;
                uint64_t first = 0;
                qr_err_clear(&e);
                int rc = k == 0   ? qr_par_count(&ps, &got, &e)
                         : k == 1 ? qr_par_topk(&ps, QR_BY_SCORE, 10, 0, hits, &n, NULL, &e)
                         : k == 2 ? qr_par_topk(&ps, QR_BY_TIME, 10, 0, hits, &n, NULL, &e)
                                  : qr_par_first(&ps, 10, noop_emit, &first, NULL, &e);
                assert_int_equal(rc, -1);
                assert_string_equal(e.code, QR_E_CANCELED);
                assert_string_equal(e.msg, "canceling statement due to user request");
            }
            /* a deadline already past */
            qr_par_set_limits(&ps, NULL, qr_par_now_ns() - 1);
            assert_int_equal(qr_par_count(&ps, &got, &e), -1);
            assert_string_equal(e.msg, "canceling statement due to statement timeout");
            /* cleared: the same answers as before */
            qr_par_set_limits(&ps, NULL, qr_par_now_ns() + 60ll * 1000000000);
            assert_int_equal(run_all(&ps, &got, &e), 0);
            assert_int_equal(got, want);
            qr_par_free(&ps);
        }
}

static void test_memory_limit_fails_cleanly_and_the_next_search_works(void **st)
{
    (void)st;
    const char *q = "error OR failed OR cache OR cahce~2";
    qr_par_search ps;
    qr_err e;
    uint64_t want, got;
    assert_int_equal(qr_par_init(&ps, tu_otel(), od.segs, NSEG, q, strlen(q), 2, &e), 0);
    assert_int_equal(run_all(&ps, &want, &e), 0);
    qr_par_free(&ps);
    assert_int_equal(qr_par_init(&ps, tu_otel(), od.segs, NSEG, q, strlen(q), 2, &e), 0);
    for (int t = 0; t < ps.threads; t++)
        ps.run[t].limit = 4096; /* below one chunk: the first allocation fails */
    assert_int_equal(qr_par_count(&ps, &got, &e), -1);
    assert_string_equal(e.code, QR_E_NOMEM);
    qr_hit hits[10];
    uint32_t n;
    assert_int_equal(qr_par_topk(&ps, QR_BY_SCORE, 10, 0, hits, &n, NULL, &e), -1);
    assert_string_equal(e.code, QR_E_NOMEM);
    for (int t = 0; t < ps.threads; t++)
        ps.run[t].limit = 2ull << 30;
    assert_int_equal(run_all(&ps, &got, &e), 0);
    assert_int_equal(got, want);
    qr_par_free(&ps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_built_tree_is_searched_like_its_text),
        cmocka_unit_test(test_cancel_and_deadline_stop_every_kind_of_search),
        cmocka_unit_test(test_memory_limit_fails_cleanly_and_the_next_search_works),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
