/* test_par_limits.c - a search over a tree the caller built
 * (qr_par_init_tree), and the stop conditions every search obeys: a cancel
 * flag (also set from another thread mid-search) and a deadline (SQLSTATE
 * 57014, saying which), and the query context's memory limit (53200) for
 * counts, top-k by score and by time, and first-k with rows read; after a
 * stop the next search works and nothing leaks (the context's count, ASan). */
#include "search/oracle.h"
#include "search/topk.h"

#include <pthread.h>
#include <time.h>

#include "automaton/automaton.h"

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

/* One mode of search; its answer (count, hits, rows) into *r. */
enum { M_COUNT, M_SCORE, M_TIME, M_ROWS, NMODES };
typedef struct answer {
    uint64_t count;
    qr_hit hits[20];
    uint32_t n;
    qr_buf rows;
} answer;

static int run_mode(qr_par_search *ps, int mode, answer *r, qr_err *e)
{
    memset(r, 0, sizeof *r);
    qr_buf_init(&r->rows);
    switch (mode) {
    case M_COUNT:
        return qr_par_count(ps, &r->count, e);
    case M_SCORE:
        return qr_par_topk(ps, QR_BY_SCORE, 20, 0, r->hits, &r->n, NULL, e);
    case M_TIME:
        return qr_par_topk(ps, QR_BY_TIME, 20, 0, r->hits, &r->n, NULL, e);
    default:
        if (qr_par_topk(ps, QR_BY_NONE, 20, 0, r->hits, &r->n, NULL, e) != 0)
            return -1;
        return qr_par_rows(ps, r->hits, r->n, &r->rows, e);
    }
}

/* A sweep of memory limits over every mode and query kind that allocates
 * (automata, term sets, bitmaps, heaps, rows): each run either gives the
 * exact answer or fails with 53200, and after it the context holds only
 * what the search keeps between runs (nothing leaks; ASan checks the
 * rest); the next run with room works. */
static void test_memory_limits_fail_cleanly_and_the_next_search_works(void **st)
{
    (void)st;
    const char *qs[] = {"error OR failed OR cache OR cahce~2", "/c.che/ AND NOT failed",
                        "\"failed to place order\"", "sevnum:>=13 AND ord*"};
    static const size_t limits[] = {4096, 1 << 16, 1 << 20, 3 << 20, 5 << 20, 9 << 20,
                                    17 << 20, 40 << 20};
    int failed = 0, passed = 0;
    for (size_t qi = 0; qi < sizeof qs / sizeof *qs; qi++)
        for (int mode = 0; mode < NMODES; mode++) {
            qr_par_search ps;
            qr_err e;
            answer want, got;
            assert_int_equal(qr_par_init(&ps, tu_otel(), od.segs, NSEG, qs[qi], strlen(qs[qi]),
                                         2, &e), 0);
            assert_int_equal(run_mode(&ps, mode, &want, &e), 0);
            qr_par_free(&ps);
            for (size_t li = 0; li < sizeof limits / sizeof *limits; li++) {
                assert_int_equal(qr_par_init(&ps, tu_otel(), od.segs, NSEG, qs[qi],
                                             strlen(qs[qi]), 2, &e), 0);
                qr_par_set_memory_limit(&ps, limits[li]);
                int rc = run_mode(&ps, mode, &got, &e);
                if (rc != 0) {
                    assert_string_equal(e.code, QR_E_NOMEM);
                    assert_non_null(strstr(e.msg, "memory limit"));
                    failed++;
                } else {
                    assert_int_equal(got.count, want.count);
                    assert_int_equal(got.n, want.n);
                    assert_memory_equal(got.hits, want.hits, sizeof *got.hits * got.n);
                    assert_int_equal(got.rows.len, want.rows.len);
                    if (got.rows.len)
                        assert_memory_equal(got.rows.p, want.rows.p, got.rows.len);
                    passed++;
                }
                qr_buf_free(&got.rows);
                /* at rest the context holds only the arenas' kept chunks
                 * and the automata compiled so far */
                size_t kept = 0;
                for (int t = 0; t < ps.threads; t++)
                    kept += ps.run[t].reserved;
                size_t used = atomic_load(&ps.ctx->used);
                assert_true(used >= kept);
                assert_true(used - kept <= (size_t)ps.threads * QR_AUT_CACHE_BYTES);
                /* room again: the next search works */
                qr_par_set_memory_limit(&ps, QR_QCTX_DEFAULT_LIMIT);
                assert_int_equal(run_mode(&ps, mode, &got, &e), 0);
                assert_int_equal(got.count, want.count);
                assert_int_equal(got.n, want.n);
                qr_buf_free(&got.rows);
                qr_par_free(&ps);
            }
            qr_buf_free(&want.rows);
        }
    assert_true(failed > 0);
    assert_true(passed > 0);
}

/* A caller's context shared by two searches: both charge it, and its limit
 * binds them together. */
static void test_a_shared_context_bounds_every_search_on_it(void **st)
{
    (void)st;
    const char *q = "cahce~2 OR /c.che/";
    qr_qctx ctx;
    qr_qctx_init(&ctx, 0);
    qr_par_search a, b;
    qr_err e;
    assert_int_equal(qr_par_init(&a, tu_otel(), od.segs, NSEG, q, strlen(q), 2, &e), 0);
    assert_int_equal(qr_par_init(&b, tu_otel(), od.segs, NSEG, q, strlen(q), 2, &e), 0);
    assert_int_equal(qr_par_set_ctx(&a, &ctx, &e), 0);
    assert_int_equal(qr_par_set_ctx(&b, &ctx, &e), 0);
    uint64_t ca, cb;
    assert_int_equal(qr_par_count(&a, &ca, &e), 0);
    size_t after_a = atomic_load(&ctx.used);
    assert_true(after_a > 0);
    assert_int_equal(qr_par_count(&b, &cb, &e), 0);
    assert_int_equal(ca, cb);
    assert_true(atomic_load(&ctx.used) > after_a);
    /* a limit below what both hold: the next search that needs more fails */
    ctx.limit = atomic_load(&ctx.used) + 1;
    qr_hit h[10];
    uint32_t n;
    assert_int_equal(qr_par_topk(&a, QR_BY_SCORE, 10, 0, h, &n, NULL, &e), -1);
    assert_string_equal(e.code, QR_E_NOMEM);
    qr_par_free(&a);
    qr_par_free(&b);
    assert_int_equal(atomic_load(&ctx.used), 0); /* all given back */
}

/* Cancel from another thread while a long search runs: it stops with
 * 57014, long before it would finish (the bound here is generous: it
 * checks that the search stops, not how fast; bench/cancel.sh measures). */
typedef struct canceller {
    atomic_int *flag;
    int delay_ms;
} canceller;
static void *cancel_later(void *arg)
{
    canceller *c = arg;
    struct timespec ts = {0, c->delay_ms * 1000000L};
    nanosleep(&ts, NULL);
    atomic_store(c->flag, 1);
    return NULL;
}

static void test_a_cancel_from_another_thread_stops_a_running_search(void **st)
{
    (void)st;
    /* an unindexed text scan and fuzzy expansion over every segment, many
     * times: seconds of work unless stopped */
    const char *q = "cahce~2 OR chache~2 OR paymnet~2 OR /.*e.*r.*/";
    qr_par_search ps;
    qr_err e;
    assert_int_equal(qr_par_init(&ps, tu_otel(), od.segs, NSEG, q, strlen(q), 2, &e), 0);
    atomic_int flag = 0;
    qr_par_set_limits(&ps, &flag, 0);
    canceller c = {&flag, 20};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
    int rc = 0;
    int64_t t0 = qr_par_now_ns();
    for (int i = 0; i < 100000 && rc == 0; i++) {
        uint64_t n;
        rc = qr_par_count(&ps, &n, &e);
        qr_par_free(&ps); /* fresh automata every time: the expansion is the work */
        assert_int_equal(qr_par_init(&ps, tu_otel(), od.segs, NSEG, q, strlen(q), 2, &e), 0);
        qr_par_set_limits(&ps, &flag, 0);
        if (qr_par_now_ns() - t0 > 30ll * 1000000000)
            break;
    }
    pthread_join(th, NULL);
    assert_int_equal(rc, -1);
    assert_string_equal(e.code, QR_E_CANCELED);
    assert_string_equal(e.msg, "canceling statement due to user request");
    qr_par_free(&ps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_built_tree_is_searched_like_its_text),
        cmocka_unit_test(test_cancel_and_deadline_stop_every_kind_of_search),
        cmocka_unit_test(test_memory_limits_fail_cleanly_and_the_next_search_works),
        cmocka_unit_test(test_a_shared_context_bounds_every_search_on_it),
        cmocka_unit_test(test_a_cancel_from_another_thread_stops_a_running_search),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
