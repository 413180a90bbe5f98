/* test_select.c - selections (match/select.h) against plain next()
 * iteration of the same compiled query on the oracle data (4 segments of
 * ~25k rows): dense bitmap terms, postings terms, AND/OR/NOT, phrases,
 * ranges; row vectors with small and large capacities resumed across calls;
 * bitmaps for aligned, unaligned, empty, gapped and past-the-end windows;
 * both kinds mixed on one cursor. */
#include "search/oracle.h"
#include "match/select.h"

ORACLE_FIXTURE

static const char *const queries[] = {
    "failed",
    "payment",
    "error OR failed",
    "failed AND order",
    "error -cache",
    "NOT failed",
    "(error OR failed) AND (order OR charge) AND NOT cache",
    "atleast(2, error, failed, charge, cache)",
    "\"failed to place order\"",
    "\"order failed\"~3",
    "ord*",
    "service:cart",
    "sevnum:[5 TO 9]",
    "sevnum:>=13 AND NOT service:cart",
    "time:[2025-09-23T00:00:00.01Z TO 2025-09-23T00:00:00.02Z]",
    "nosuchterm",
};
#define NQ (sizeof queries / sizeof *queries)

/* Windows: a list of [lo, hi) pairs, ascending, for a segment of `rows`. */
typedef struct win {
    uint32_t lo, hi;
} win;

static uint32_t make_windows(int scheme, uint32_t rows, uint64_t *rng, win *w, uint32_t max)
{
    uint32_t n = 0;
    switch (scheme) {
    case 0: /* aligned 4096-row windows */
        for (uint32_t lo = 0; lo < rows && n < max; lo += 4096)
            w[n++] = (win){lo, lo + 4096 < rows ? lo + 4096 : rows};
        break;
    case 1: /* one window over everything, past the end */
        w[n++] = (win){0, rows + 1000};
        break;
    case 2: /* unaligned, random lengths, empty windows and gaps */
        for (uint32_t lo = (uint32_t)(tu_rand(rng) % 97); lo < rows + 200 && n < max;) {
            uint32_t len = (uint32_t)(tu_rand(rng) % 5) == 0 ? 0 : (uint32_t)(tu_rand(rng) % 3000);
            w[n++] = (win){lo, lo + len};
            lo += len + ((tu_rand(rng) & 3) == 0 ? (uint32_t)(tu_rand(rng) % 2000) : 0);
        }
        break;
    case 3: /* many tiny windows straddling word boundaries */
        for (uint32_t lo = 60; lo + 9 < rows && n < max; lo += 64 * 37)
            w[n++] = (win){lo, lo + 9};
        break;
    default:
        break;
    }
    return n;
}

/* All matches of query q on segment s by next(). */
static uint32_t *reference(qr_segsearch *ss, const qr_query *q, qr_arena *a, uint32_t *n)
{
    qr_err e;
    qr_it *it = qr_segsearch_compile(ss, q, a, &e);
    if (!it)
        fail_msg("compile: %s", e.msg);
    uint32_t cap = 1024, k = 0;
    uint32_t *r = malloc(sizeof *r * cap);
    for (uint32_t d = qr_it_next(it); d != QR_NO_DOC; d = qr_it_next(it)) {
        if (k == cap)
            r = realloc(r, sizeof *r * (cap *= 2));
        r[k++] = d;
    }
    assert_false(qr_it_failed(it));
    *n = k;
    return r;
}

/* Index of the first reference match >= x. */
static uint32_t lower_bound(const uint32_t *r, uint32_t n, uint32_t x)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int bitmaps_seen;

/* mode 0: row vectors with capacity cap; 1: bitmaps; 2: alternate. */
static void check_windows(qr_segsearch *ss, const qr_query *q, qr_arena *a, uint32_t rows,
                          const uint32_t *ref, uint32_t nref, const win *w, uint32_t nw, int mode,
                          uint32_t cap, const char *what)
{
    qr_err e;
    qr_it *it = qr_segsearch_compile(ss, q, a, &e);
    assert_non_null(it);
    qr_itsel c;
    qr_itsel_init(&c, it, rows);
    bitmaps_seen += c.bits != NULL;
    uint32_t *buf = malloc(sizeof *buf * (cap ? cap : 1));
    uint64_t *words = malloc(sizeof *words * (rows / 64 + 64));
    for (uint32_t i = 0; i < nw; i++) {
        uint32_t lo = w[i].lo, hi = w[i].hi;
        uint32_t want = lower_bound(ref, nref, lo), wend = lower_bound(ref, nref, hi);
        if (mode == 1 || (mode == 2 && (i & 1))) {
            uint32_t nwd = hi > lo ? (hi - lo + 63) / 64 : 0;
            for (uint32_t k = 0; k < nwd; k++)
                words[k] = 0xdeadbeefdeadbeefull; /* all written */
            int64_t cnt = qr_it_select_bits(&c, lo, hi, words, &e);
            assert_int_equal(cnt, wend - want);
            for (uint32_t k = 0; k < nwd; k++) {
                uint64_t expect = 0;
                for (uint32_t j = lower_bound(ref, nref, lo + k * 64);
                     j < wend && ref[j] < lo + (uint64_t)k * 64 + 64; j++)
                    expect |= 1ull << (ref[j] - lo - k * 64);
                if (words[k] != expect)
                    fail_msg("%s: window [%u, %u) word %u: got %016llx want %016llx", what, lo, hi,
                             k, (unsigned long long)words[k], (unsigned long long)expect);
            }
            continue;
        }
        int rc;
        uint32_t n, calls = 0;
        do {
            rc = qr_it_select(&c, lo, hi, buf, cap, &n, &e);
            assert_true(rc == 0 || rc == 1);
            assert_true(n <= cap);
            if (rc == 0)
                assert_int_equal(n, cap);
            for (uint32_t k = 0; k < n; k++) {
                if (want >= wend || buf[k] != ref[want])
                    fail_msg("%s: window [%u, %u): got row %u, want %d", what, lo, hi, buf[k],
                             want < wend ? (int)ref[want] : -1);
                want++;
            }
            assert_true(++calls < 1000000);
        } while (rc == 0);
        if (want != wend)
            fail_msg("%s: window [%u, %u): %u matches missing", what, lo, hi, wend - want);
    }
    free(buf);
    free(words);
}

static void test_selections_match_next_iteration(void **st)
{
    (void)st;
    static const uint32_t caps[] = {1, 7, 1000, 1u << 20};
    win *w = malloc(sizeof *w * 4096);
    uint64_t rng = 9;
    for (size_t qi = 0; qi < NQ; qi++) {
        qr_arena a;
        qr_arena_init(&a, 1 << 16, 0);
        qr_query *q = oracle_parse(queries[qi], &a);
        for (int s = 0; s < NSEG; s++) {
            qr_segsearch ss;
            qr_segsearch_init(&ss, od.segs[s]);
            uint32_t rows = (uint32_t)od.segs[s]->rows, nref;
            uint32_t *ref = reference(&ss, q, &a, &nref);
            for (int scheme = 0; scheme < 4; scheme++) {
                uint32_t nw = make_windows(scheme, rows, &rng, w, 4096);
                char what[200];
                for (int mode = 0; mode < 3; mode++) {
                    for (size_t ci = 0; ci < (mode == 1 ? 1 : 4); ci++) {
                        snprintf(what, sizeof what, "%s seg %d scheme %d mode %d cap %u",
                                 queries[qi], s, scheme, mode, caps[ci]);
                        check_windows(&ss, q, &a, rows, ref, nref, w, nw, mode, caps[ci], what);
                    }
                }
            }
            free(ref);
            qr_segsearch_close(&ss);
        }
        qr_query_release(q);
        qr_arena_free(&a);
    }
    free(w);
    /* the bitmap fast path was exercised (dense terms, bitmap algebra) and so
     * was the walk (every other iterator) */
    assert_true(bitmaps_seen > 0);
    assert_true(bitmaps_seen < (int)(NQ * NSEG * 4 * 10));
}

/* A window reached after the cursor moved past part of it returns only the
 * rest; cap 0 hands out nothing and keeps the window open. */
static void test_resume_and_zero_capacity(void **st)
{
    (void)st;
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_err e;
    const char *qs[] = {"failed", "payment"};
    for (int qi = 0; qi < 2; qi++) {
        qr_query *q = oracle_parse(qs[qi], &a);
        qr_segsearch ss;
        qr_segsearch_init(&ss, od.segs[0]);
        uint32_t rows = (uint32_t)od.segs[0]->rows, nref;
        uint32_t *ref = reference(&ss, q, &a, &nref);
        assert_true(nref > 2);
        qr_itsel c;
        qr_itsel_init(&c, qr_segsearch_compile(&ss, q, &a, &e), rows);
        uint32_t buf[4], n;
        assert_int_equal(qr_it_select(&c, 0, rows, buf, 0, &n, &e), 0);
        assert_int_equal(n, 0);
        assert_int_equal(qr_it_select(&c, 0, rows, buf, 2, &n, &e), 0);
        assert_int_equal(n, 2);
        assert_int_equal(buf[0], ref[0]);
        assert_int_equal(buf[1], ref[1]);
        /* a window that starts below where the cursor stopped: the rest only */
        uint32_t hi = ref[2] + 1;
        assert_int_equal(qr_it_select(&c, 0, hi, buf, 4, &n, &e), 1);
        assert_int_equal(n, 1);
        assert_int_equal(buf[0], ref[2]);
        /* an empty window, then the same window again: nothing */
        assert_int_equal(qr_it_select(&c, hi, hi, buf, 4, &n, &e), 1);
        assert_int_equal(n, 0);
        assert_int_equal(qr_it_select(&c, 0, hi, buf, 4, &n, &e), 1);
        assert_int_equal(n, 0);
        uint64_t words[1];
        int64_t left =
            hi >= 64 ? 0 : (int64_t)lower_bound(ref, nref, 64) - lower_bound(ref, nref, hi);
        assert_int_equal(qr_it_select_bits(&c, 0, 64, words, &e), left);
        for (uint32_t k = 0; k < nref && ref[k] < 64; k++)
            assert_int_equal((words[0] >> ref[k]) & 1, ref[k] >= hi);
        free(ref);
        qr_segsearch_close(&ss);
        qr_query_release(q);
    }
    qr_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selections_match_next_iteration),
        cmocka_unit_test(test_resume_and_zero_capacity),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
