/* test_result.c - the result set: the stable multi-key sort with
 * PostgreSQL's NULL placement, LIMIT/OFFSET slicing, and rendering as CSV
 * and NDJSON (NULL as an empty field / null, timestamps as RFC 3339,
 * quoting), with nothing left charged to the query context; a long sort
 * stops at the query's cancel flag. */
#include "testutil.h"

#include "exec/render.h"
#include "format/schema.h"

static void fill(qr_result *r, qr_qctx *ctx)
{
    qr_err e;
    qr_qctx_init(ctx, 1 << 20);
    qr_result_init(r, ctx);
    assert_int_equal(qr_result_add_col(r, "name", QR_RK_TEXT, 0, 0, &e), 0);
    assert_int_equal(qr_result_add_col(r, "n", QR_RK_INT, QT_INT64, 0, &e), 0);
    assert_int_equal(qr_result_add_col(r, "ts", QR_RK_INT, QT_TIMESTAMP, QR_TS_RFC3339, &e), 0);
    static const char *names[] = {"b", NULL, "a,\"q\"", "a", "c"};
    static const int64_t ns[] = {2, 2, 1, 2, 0};
    for (int i = 0; i < 5; i++) {
        qr_cell *c = qr_result_add_row(r, &e);
        assert_non_null(c);
        if (names[i])
            assert_int_equal(qr_result_set_text(r, &c[0], names[i], strlen(names[i]), &e), 0);
        if (i != 4)
            c[1] = (qr_cell){.i = ns[i]};
        c[2] = (qr_cell){.i = 1758585600000000000 + i};
    }
}

static void test_sort_nulls_and_stability(void **st)
{
    (void)st;
    qr_result r;
    qr_qctx ctx;
    qr_err e;
    fill(&r, &ctx);
    uint32_t keys[] = {1, 0};
    uint8_t desc[] = {1, 0};
    /* n DESC: NULL first (as PostgreSQL), then 2s by name ASC (NULL name last), then 1 */
    assert_int_equal(qr_result_sort(&r, keys, desc, 2, &e), 0);
    qr_buf b;
    qr_buf_init(&b);
    qr_result_render(&r, QR_FMT_CSV, &b);
    qr_buf_put_u8(&b, 0);
    assert_string_equal((const char *)b.p, "name,n,ts\n"
                                           "c,,2025-09-23T00:00:00.000000004Z\n"
                                           "a,2,2025-09-23T00:00:00.000000003Z\n"
                                           "b,2,2025-09-23T00:00:00.000000000Z\n"
                                           ",2,2025-09-23T00:00:00.000000001Z\n"
                                           "\"a,\"\"q\"\"\",1,2025-09-23T00:00:00.000000002Z\n");
    qr_result_slice(&r, 1, 2);
    qr_buf_clear(&b);
    qr_result_render(&r, QR_FMT_NDJSON, &b);
    qr_buf_put_u8(&b, 0);
    assert_string_equal((const char *)b.p,
                        "{\"name\":\"a\",\"n\":2,\"ts\":\"2025-09-23T00:00:00.000000003Z\"}\n"
                        "{\"name\":\"b\",\"n\":2,\"ts\":\"2025-09-23T00:00:00.000000000Z\"}\n");
    qr_buf_free(&b);
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0);
}

static void test_result_memory_limit(void **st)
{
    (void)st;
    qr_result r;
    qr_qctx ctx;
    qr_err e;
    qr_qctx_init(&ctx, 4096);
    qr_result_init(&r, &ctx);
    assert_int_equal(qr_result_add_col(&r, "n", QR_RK_INT, QT_INT64, 0, &e), 0);
    int failed = 0;
    for (int i = 0; i < 100000 && !failed; i++)
        failed = qr_result_add_row(&r, &e) == NULL;
    assert_true(failed);
    assert_string_equal(e.code, QR_E_NOMEM);
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0);
}

/* A sort of many rows stops at the query's cancel flag or deadline (it may
 * run long after the scan's last check); a small one never looks. The rows
 * are left as they were. */
static void test_sort_stops_when_canceled(void **st)
{
    (void)st;
    qr_result r;
    qr_qctx ctx;
    qr_err e;
    atomic_int cancel = 0;
    qr_qctx_init(&ctx, 64 << 20);
    qr_qctx_set_stop(&ctx, &cancel, 0);
    qr_result_init(&r, &ctx);
    assert_int_equal(qr_result_add_col(&r, "n", QR_RK_INT, QT_INT64, 0, &e), 0);
    for (int i = 0; i < 100000; i++)
        *qr_result_add_row(&r, &e) = (qr_cell){.i = (i * 7919) % 100000};
    uint32_t key = 0;
    uint8_t desc = 0;
    assert_int_equal(qr_result_sort(&r, &key, &desc, 1, &e), 0); /* not canceled: sorted */
    for (int i = 0; i < 100000; i++)
        assert_int_equal(qr_result_row(&r, (uint64_t)i)->i, i);
    desc = QR_SORT_DESC;
    atomic_store(&cancel, 1);
    assert_int_equal(qr_result_sort(&r, &key, &desc, 1, &e), -1);
    assert_string_equal(e.code, QR_E_CANCELED);
    assert_int_equal(qr_result_row(&r, 0)->i, 0);
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0);
    /* below the first check's size a sort completes whatever the flag says */
    qr_qctx_init(&ctx, 1 << 20);
    qr_qctx_set_stop(&ctx, &cancel, 0);
    qr_result_init(&r, &ctx);
    assert_int_equal(qr_result_add_col(&r, "n", QR_RK_INT, QT_INT64, 0, &e), 0);
    for (int i = 0; i < 100; i++)
        *qr_result_add_row(&r, &e) = (qr_cell){.i = i};
    assert_int_equal(qr_result_sort(&r, &key, &desc, 1, &e), 0);
    assert_int_equal(qr_result_row(&r, 0)->i, 99);
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_nulls_and_stability),
        cmocka_unit_test(test_result_memory_limit),
        cmocka_unit_test(test_sort_stops_when_canceled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
