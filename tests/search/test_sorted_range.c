/* test_sorted_range.c - a time window on the sort column (match/ranges.c,
 * mt_time_range): the bounds are found from the blocks' min/max and one
 * block read each, and must equal a brute-force scan of the column. One
 * segment of three Timestamp blocks (65536 rows each at most), rows
 * without a Timestamp (NULL, sorted first), runs of equal timestamps that
 * cross a block boundary or end at one, and windows whose bounds fall on, between,
 * before and after those values. */
#include <inttypes.h>

#include "testutil.h"
#include "match/segsearch.h"
#include "query/query.h"

#define NROWS  150000u
#define NNULLS 100u
#define DAY    ((int64_t)1758585600000000000) /* 2025-09-23T00:00:00Z */
#define BASE   (DAY + 10000000000)            /* the first row: 10 s later */

static char *dir;
static qr_segment *seg;
static int64_t *ts; /* the column read back, NULL as INT64_MIN */

/* Row k's timestamp (k counts the rows with one): groups of 7 equal
 * values; 300 equal values across the first block boundary; around the
 * second, 149 equal values, then its last row's own, then 150 more equal. */
static int64_t ts_of(uint32_t k)
{
    uint32_t r = k + NNULLS; /* its row once sorted */
    if (r >= 65536 - 150 && r < 65536 + 150)
        return BASE + 65536000;
    if (r >= 131072 - 150 && r < 131072 + 150) /* the second block's last row alone */
        return BASE + 131072000 + (r >= 131071) + (r >= 131072);
    return BASE + (int64_t)(r / 7) * 7000;
}

static void fmt_ns(int64_t ns, char *out, size_t cap)
{
    int64_t s = (ns - DAY) / 1000000000, f = (ns - DAY) % 1000000000;
    snprintf(out, cap, "2025-09-23T00:%02" PRId64 ":%02" PRId64 ".%09" PRId64 "Z", s / 60, s % 60,
             f);
}

static int setup(void **st)
{
    (void)st;
    dir = tu_tmpdir();
    qr_buf text;
    qr_buf_init(&text);
    char line[256];
    /* written newest first: the build sorts them */
    for (uint32_t i = 0; i < NROWS; i++) {
        int n;
        if (i < NNULLS)
            n = snprintf(line, sizeof line, "{\"Body\":\"no time %u\"}\n", i);
        else {
            char t[64];
            fmt_ns(ts_of(NROWS - 1 - i), t, sizeof t);
            n = snprintf(line, sizeof line, "{\"Timestamp\":\"%s\",\"Body\":\"row %u\"}\n", t, i);
        }
        qr_buf_put(&text, line, (size_t)n);
    }
    seg = tu_open_built(dir, "t.qseg", &text, NROWS);
    qr_err e;
    assert_int_equal(seg->rows, NROWS);
    int c = seg->sort_col;
    assert_true(c >= 0);
    const qr_colmeta *cm = qr_seg_colmeta(seg, c, &e);
    assert_non_null(cm);
    assert_int_equal(cm->ndata, 3); /* two block boundaries to cross */
    ts = malloc(sizeof *ts * NROWS);
    qr_colreader *r = qr_colr_open(seg, c, &e);
    assert_non_null(r);
    for (uint32_t i = 0; i < NROWS; i++) {
        int isnull;
        assert_int_equal(qr_colr_int(r, i, &ts[i], &isnull, &e), 0);
        if (isnull)
            ts[i] = INT64_MIN;
    }
    qr_colr_close(r);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    free(ts);
    qr_seg_close(seg);
    tu_rmdir(dir);
    return 0;
}

/* The window [lo, hi]: its count and its rows (one contiguous run) against
 * the column read back row by row. */
static void check_window(int64_t lo, int64_t hi)
{
    char a[64], b[64], q[160];
    fmt_ns(lo, a, sizeof a);
    fmt_ns(hi, b, sizeof b);
    snprintf(q, sizeof q, "time:[%s TO %s]", a, b);
    uint32_t want_first = UINT32_MAX, want_last = 0;
    uint64_t want = 0;
    for (uint32_t i = 0; i < NROWS; i++)
        if (ts[i] != INT64_MIN && ts[i] >= lo && ts[i] <= hi) {
            want++;
            want_first = want_first == UINT32_MAX ? i : want_first;
            want_last = i;
        }
    qr_arena ar;
    qr_arena_init(&ar, 1 << 16, 0);
    qr_err e;
    qr_query *tree = qr_query_parse(q, strlen(q), &ar, &e);
    if (!tree)
        fail_msg("%s: %s", q, e.msg);
    qr_segsearch ss;
    qr_segsearch_init(&ss, seg);
    uint64_t got;
    assert_int_equal(qr_segsearch_count(&ss, tree, &ar, &got, &e), 0);
    if (got != want)
        fail_msg("%s: count %" PRIu64 ", brute force %" PRIu64, q, got, want);
    qr_it *it = qr_segsearch_compile(&ss, tree, &ar, &e);
    assert_non_null(it);
    uint32_t d = qr_it_next(it), first = d, last = d, n = 0;
    for (; d != QR_NO_DOC; d = qr_it_next(it), n++) {
        if (d != first + n)
            fail_msg("%s: row %u after %u", q, d, last);
        last = d;
    }
    assert_int_equal(n, want);
    if (want && (first != want_first || last != want_last))
        fail_msg("%s: rows %u..%u, brute force %u..%u", q, first, last, want_first, want_last);
    assert_false(qr_it_failed(it));
    qr_segsearch_close(&ss);
    qr_query_release(tree);
    qr_arena_free(&ar);
}

static void test_windows_at_block_edges(void **st)
{
    (void)st;
    /* the values at and around each block boundary, and the ends */
    const uint32_t at[] = {NNULLS, NNULLS + 1,   1000,         65535,     65536,
                           65537,  65536 - 151,  65536 + 150,  131071,    131072,
                           131073, 131072 - 151, 131072 + 150, NROWS - 2, NROWS - 1};
    int64_t v[3 * (sizeof at / sizeof *at) + 4];
    uint32_t nv = 0;
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        v[nv++] = ts[at[i]];
        v[nv++] = ts[at[i]] - 1;
        v[nv++] = ts[at[i]] + 1;
    }
    v[nv++] = BASE - 5;                     /* before every row */
    v[nv++] = ts[NROWS - 1] + 1000;         /* after every row */
    v[nv++] = BASE + 65536000 + 500;        /* between two values */
    v[nv++] = BASE + (int64_t)20000 * 7000; /* a group's value */
    for (uint32_t i = 0; i < nv; i++)
        for (uint32_t j = 0; j < nv; j++)
            check_window(v[i], v[j]); /* lo > hi included: empty */
}

/* The NULL rows sort first and never match; a window over everything
 * matches every other row. */
static void test_nulls_sort_first(void **st)
{
    (void)st;
    for (uint32_t i = 0; i < NNULLS; i++)
        assert_true(ts[i] == INT64_MIN);
    assert_true(ts[NNULLS] != INT64_MIN);
    check_window(BASE - 1000, ts[NROWS - 1] + 1000);
    assert_int_equal(seg->cols[seg->sort_col].null_count, NNULLS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_at_block_edges),
        cmocka_unit_test(test_nulls_sort_first),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
