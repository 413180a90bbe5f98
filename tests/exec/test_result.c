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
    /* the first k of them too: the heap's last sort (k >= 4096) stops */
    r.nrows = 60000;
    assert_int_equal(qr_result_sort_top(&r, &key, &desc, 1, 5000, &e), -1);
    assert_string_equal(e.code, QR_E_CANCELED);
    assert_int_equal(r.nrows, 60000);
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

/* ORDER BY ... LIMIT k by a bounded heap gives the first k rows of the
 * stable full sort, ties in their order, for k small and large (the full
 * sort then), ascending and descending, with NULLs. */
static void test_sort_top_equals_full_sort(void **st)
{
    (void)st;
    qr_err e;
    uint64_t x = 7;
    for (int round = 0; round < 24; round++) {
        uint64_t k = (uint64_t[]){1, 3, 10, 100, 700, 5000}[round % 6];
        uint8_t desc = (uint8_t)(round / 6 % 2 ? QR_SORT_DESC : 0) |
                       (uint8_t)(round / 12 ? QR_SORT_NULLS_FLIP : 0);
        qr_result r[2];
        qr_qctx ctx[2];
        for (int v = 0; v < 2; v++) {
            qr_qctx_init(&ctx[v], 64 << 20);
            qr_result_init(&r[v], &ctx[v]);
            assert_int_equal(qr_result_add_col(&r[v], "k", QR_RK_INT, QT_INT64, 0, &e), 0);
            assert_int_equal(qr_result_add_col(&r[v], "id", QR_RK_INT, QT_INT64, 0, &e), 0);
        }
        uint64_t y = x;
        for (int v = 0; v < 2; v++) {
            x = y;
            for (int i = 0; i < 20000; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                qr_cell *c = qr_result_add_row(&r[v], &e);
                c[0] = x % 50 == 0 ? (qr_cell){.null = 1} : (qr_cell){.i = (int64_t)(x % 300)};
                c[1] = (qr_cell){.i = i}; /* the position: ties must keep it */
            }
        }
        uint32_t key = 0;
        assert_int_equal(qr_result_sort(&r[0], &key, &desc, 1, &e), 0);
        assert_int_equal(qr_result_sort_top(&r[1], &key, &desc, 1, k, &e), 0);
        assert_true(r[1].nrows >= k);
        for (uint64_t i = 0; i < k; i++)
            for (int c = 0; c < 2; c++) {
                const qr_cell *a = &qr_result_row(&r[0], i)[c], *b = &qr_result_row(&r[1], i)[c];
                assert_int_equal(a->null, b->null);
                if (!a->null)
                    assert_int_equal(a->i, b->i);
            }
        for (int v = 0; v < 2; v++) {
            qr_result_free(&r[v]);
            assert_int_equal(ctx[v].used, 0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_nulls_and_stability),
        cmocka_unit_test(test_result_memory_limit),
        cmocka_unit_test(test_sort_stops_when_canceled),
        cmocka_unit_test(test_sort_top_equals_full_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
