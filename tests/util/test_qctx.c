/* test_qctx.c - a query context's budget (charges, the limit, counted
 * malloc/realloc/free, arenas drawing on it) and its stop conditions
 * (cancel flag, deadline, latching, the cheap tick). */
#include "testutil.h"

#include "util/arena.h"
#include "util/qctx.h"

static void test_charges_stop_at_the_limit_and_give_back_exactly(void **st)
{
    (void)st;
    qr_qctx c;
    qr_qctx_init(&c, 1000);
    assert_int_equal(qr_qctx_charge(&c, 600), 0);
    assert_int_equal(qr_qctx_charge(&c, 401), -1); /* nothing taken */
    assert_int_equal(atomic_load(&c.used), 600);
    assert_int_equal(qr_qctx_charge(&c, 400), 0);
    qr_qctx_release(&c, 1000);
    assert_int_equal(atomic_load(&c.used), 0);
    assert_int_equal(atomic_load(&c.peak), 1000);
    assert_int_equal(qr_qctx_charge(&c, SIZE_MAX), -1); /* no wrap-around */
    assert_int_equal(qr_qctx_charge(NULL, SIZE_MAX), 0); /* NULL: not counted */
    qr_err e;
    assert_int_equal(qr_qctx_nomem(&c, &e), -1);
    assert_string_equal(e.code, QR_E_NOMEM);
    assert_non_null(strstr(e.msg, "memory limit of 1000 bytes"));
}

static void test_counted_blocks_charge_their_size(void **st)
{
    (void)st;
    qr_qctx c;
    qr_qctx_init(&c, 4096);
    char *p = qr_qmalloc(&c, 100);
    assert_non_null(p);
    size_t one = atomic_load(&c.used);
    assert_true(one >= 100 && one <= 132);
    memset(p, 'x', 100);
    p = qr_qrealloc(&c, p, 3000);
    assert_non_null(p);
    assert_int_equal(p[99], 'x');
    assert_int_equal(atomic_load(&c.used), one + 2900);
    assert_null(qr_qrealloc(&c, p, 5000)); /* past the limit: p untouched */
    assert_int_equal(atomic_load(&c.used), one + 2900);
    p = qr_qrealloc(&c, p, 10); /* shrinking gives back */
    assert_int_equal(atomic_load(&c.used), one - 90);
    assert_null(qr_qmalloc(&c, 5000));
    qr_qfree(&c, p);
    qr_qfree(&c, NULL);
    assert_int_equal(atomic_load(&c.used), 0);
}

static void test_an_arena_draws_on_the_context(void **st)
{
    (void)st;
    qr_qctx c;
    qr_qctx_init(&c, 100000);
    qr_arena a;
    qr_arena_init(&a, 16384, 0);
    qr_arena_set_ctx(&a, &c);
    assert_non_null(qr_arena_alloc(&a, 100));
    assert_int_equal(atomic_load(&c.used), 16384);
    assert_non_null(qr_arena_alloc(&a, 50000)); /* a chunk of its own */
    assert_int_equal(atomic_load(&c.used), 16384 + 50000);
    assert_null(qr_arena_alloc(&a, 40000)); /* the context's limit binds */
    qr_arena_reset(&a); /* keeps one chunk */
    assert_int_equal(atomic_load(&c.used), 16384);
    qr_qctx d;
    qr_qctx_init(&d, 0);
    qr_arena_set_ctx(&a, &d); /* what it holds moves */
    assert_int_equal(atomic_load(&c.used), 0);
    assert_int_equal(atomic_load(&d.used), 16384);
    qr_arena_free(&a);
    assert_int_equal(atomic_load(&d.used), 0);
}

static void test_stops_are_latched_and_say_why(void **st)
{
    (void)st;
    qr_qctx c;
    qr_qctx_init(&c, 0);
    qr_err e;
    assert_int_equal(qr_qctx_check(&c, &e), 0);
    atomic_int flag = 0;
    qr_qctx_set_stop(&c, &flag, 0);
    uint32_t ticks = 0;
    for (int i = 0; i < 1000; i++)
        assert_int_equal(qr_qctx_tick(&c, &ticks, &e), 0);
    atomic_store(&flag, 1);
    int stopped_at = -1;
    for (int i = 0; i < 1000 && stopped_at < 0; i++)
        if (qr_qctx_tick(&c, &ticks, &e) != 0)
            stopped_at = i;
    assert_true(stopped_at >= 0 && stopped_at < (int)QR_QCTX_TICK);
    assert_string_equal(e.code, QR_E_CANCELED);
    assert_string_equal(e.msg, "canceling statement due to user request");
    atomic_store(&flag, 0); /* latched: still stopped */
    assert_int_equal(qr_qctx_check(&c, &e), -1);
    qr_qctx_set_stop(&c, NULL, qr_qctx_now_ns() - 1); /* a new statement, already late */
    assert_int_equal(qr_qctx_check(&c, &e), -1);
    assert_string_equal(e.msg, "canceling statement due to statement timeout");
    qr_qctx_set_stop(&c, NULL, qr_qctx_now_ns() + 60ll * 1000000000);
    assert_int_equal(qr_qctx_check(&c, &e), 0);
    assert_int_equal(qr_qctx_check(NULL, &e), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_charges_stop_at_the_limit_and_give_back_exactly),
        cmocka_unit_test(test_counted_blocks_charge_their_size),
        cmocka_unit_test(test_an_arena_draws_on_the_context),
        cmocka_unit_test(test_stops_are_latched_and_say_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
