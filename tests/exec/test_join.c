/* test_join.c - the hash join's pairs against a nested-loop oracle: inner,
 * LEFT, semi, RIGHT and FULL, integer and text keys with NULLs and many
 * duplicates, one key and two, one slot and probes split over a pool (the
 * same pairs in the same order: L's order, then R's; for RIGHT and FULL
 * then R's unmatched rows in R's order). Also the memory limit (at every
 * size short of the join's peak) and a cancel. */
#include "testutil.h"

#include <stdatomic.h>

#include "exec/join.h"
#include "util/pool.h"

#define NL 120000u
#define NR 30000u

static qr_cell lcell[2][NL], rcell[2][NR];
static char ltext[NL][8], rtext[NR][8];

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* keys: column 0 an integer in [0, 5000) (NULL one in 50), column 1 the
 * same value as text */
static void make(qr_cell *c0, qr_cell *c1, char (*txt)[8], uint32_t n, uint64_t seed)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v = rnd(&seed) % 5000;
        int null = rnd(&seed) % 50 == 0;
        snprintf(txt[i], sizeof txt[i], "k%llu", (unsigned long long)v);
        c0[i] = null ? (qr_cell){.null = 1} : (qr_cell){.i = (int64_t)v};
        c1[i] = null ? (qr_cell){.null = 1} : (qr_cell){.s = txt[i], .n = (uint32_t)strlen(txt[i])};
    }
}

/* The oracle's pairs: malloc'ed arrays grown by push. */
typedef struct pairs {
    uint64_t *l, *r, n, cap;
} pairs;

static void push(pairs *p, uint64_t l, uint64_t r)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 1 << 20;
        p->l = realloc(p->l, sizeof *p->l * p->cap);
        p->r = realloc(p->r, sizeof *p->r * p->cap);
        assert_true(p->l && p->r);
    }
    p->l[p->n] = l;
    p->r[p->n++] = r;
}

/* RIGHT, FULL: R's rows that matched nothing, after the pairs. */
static void push_unmatched(pairs *p, const uint8_t *matched, uint64_t nr)
{
    for (uint64_t j = 0; j < nr; j++)
        if (!matched[j])
            push(p, UINT64_MAX, j);
}

static void oracle(int kind, pairs *p)
{
    memset(p, 0, sizeof *p);
    /* matches per key value, in R's order */
    static uint32_t first[5000], nxt[NR];
    static uint8_t matched[NR];
    memset(matched, 0, sizeof matched);
    for (uint32_t v = 0; v < 5000; v++)
        first[v] = UINT32_MAX;
    for (uint32_t j = NR; j-- > 0;)
        if (!rcell[0][j].null) {
            nxt[j] = first[rcell[0][j].i];
            first[rcell[0][j].i] = j;
        }
    /* (the text key holds the same values) */
    for (uint32_t i = 0; i < NL; i++) {
        int m = 0;
        for (uint32_t j = lcell[0][i].null ? UINT32_MAX : first[lcell[0][i].i]; j != UINT32_MAX;
             j = nxt[j]) {
            push(p, i, j);
            m = matched[j] = 1;
            if (kind == QR_JOIN_SEMI)
                break;
        }
        if (!m && (kind == QR_JOIN_LEFT || kind == QR_JOIN_FULL))
            push(p, i, UINT64_MAX);
    }
    if (kind == QR_JOIN_RIGHT || kind == QR_JOIN_FULL)
        push_unmatched(p, matched, NR);
}

/* The join's pairs must be the oracle's, in order; everything given back. */
static void check_join(uint64_t nl, const qr_cell *const *lk, uint64_t nr, const qr_cell *const *rk,
                       const uint8_t *kt, uint32_t nk, int kind, qr_pool *pool, int threads,
                       const pairs *want, const char *what)
{
    qr_qctx ctx;
    qr_qctx_init(&ctx, 0);
    qr_err e;
    uint64_t *li, *ri, np;
    if (qr_x_hash_join_pairs(nl, lk, nr, rk, kt, nk, kind, pool, threads, &ctx, &li, &ri, &np,
                             &e) != 0)
        fail_msg("%s kind %d threads %d: %s", what, kind, threads, e.msg);
    if (np != want->n)
        fail_msg("%s kind %d threads %d: %llu pairs, want %llu", what, kind, threads,
                 (unsigned long long)np, (unsigned long long)want->n);
    for (uint64_t p = 0; p < np; p++)
        if (li[p] != want->l[p] || ri[p] != want->r[p])
            fail_msg("%s kind %d threads %d: pair %llu is (%llu, %llu), want (%llu, %llu)", what,
                     kind, threads, (unsigned long long)p, (unsigned long long)li[p],
                     (unsigned long long)ri[p], (unsigned long long)want->l[p],
                     (unsigned long long)want->r[p]);
    qr_qfree(&ctx, li);
    qr_qfree(&ctx, ri);
    assert_int_equal(ctx.used, 0);
}

static void test_pairs_equal_nested_loop(void **st)
{
    (void)st;
    make(lcell[0], lcell[1], ltext, NL, 7);
    make(rcell[0], rcell[1], rtext, NR, 11);
    qr_err e;
    qr_pool *pool = qr_pool_new(2, &e);
    assert_non_null(pool);
    for (int kind = QR_JOIN_INNER; kind <= QR_JOIN_FULL; kind++) {
        pairs want;
        oracle(kind, &want);
        assert_true(want.n > NL / 2);
        uint64_t nullr = 0; /* R's rows that come unmatched (NULL keys among them) */
        for (uint64_t p = 0; p < want.n; p++)
            nullr += want.l[p] == UINT64_MAX;
        if (kind == QR_JOIN_RIGHT || kind == QR_JOIN_FULL)
            assert_true(nullr > NR / 50 / 2); /* at least most of the NULL-keyed ones */
        for (int key = 0; key < 2; key++)
            for (int threads = 1; threads <= 3; threads++) {
                const qr_cell *lk[1] = {lcell[key]}, *rk[1] = {rcell[key]};
                uint8_t kt[1] = {key ? QR_XT_TEXT : QR_XT_INT};
                check_join(NL, lk, NR, rk, kt, 1, kind, pool, threads, &want,
                           key ? "text key" : "int key");
            }
        free(want.l);
        free(want.r);
    }
    qr_pool_free(pool);
}

/* Two keys (an integer and a text, each NULL now and then; a quarter of
 * R's rows match nothing) against a true nested loop over every (L, R)
 * pair. */
#define NL2 40000u
#define NR2 1500u

static void test_two_keys_equal_nested_loop(void **st)
{
    (void)st;
    static qr_cell l2[2][NL2], r2[2][NR2];
    static const char *const words[] = {"ab", "cd", "ef", "gh"};
    uint64_t seed = 99;
    for (int side = 0; side < 2; side++) {
        uint32_t n = side ? NR2 : NL2;
        qr_cell(*k)[side ? NR2 : NL2] = side ? (void *)r2 : (void *)l2;
        for (uint32_t i = 0; i < n; i++) {
            /* R's values 30..39 match no L row */
            uint64_t v = rnd(&seed) % (side ? 40 : 30), w = rnd(&seed) % 4;
            k[0][i] = rnd(&seed) % 40 == 0 ? (qr_cell){.null = 1} : (qr_cell){.i = (int64_t)v};
            k[1][i] =
                rnd(&seed) % 40 == 0 ? (qr_cell){.null = 1} : (qr_cell){.s = words[w], .n = 2};
        }
    }
    qr_err e;
    qr_pool *pool = qr_pool_new(2, &e);
    assert_non_null(pool);
    static uint8_t matched[NR2];
    for (int kind = QR_JOIN_INNER; kind <= QR_JOIN_FULL; kind++) {
        pairs want;
        memset(&want, 0, sizeof want);
        memset(matched, 0, sizeof matched);
        for (uint32_t i = 0; i < NL2; i++) {
            int m = 0;
            for (uint32_t j = 0; j < NR2 && !(m && kind == QR_JOIN_SEMI); j++) {
                const qr_cell *a0 = &l2[0][i], *a1 = &l2[1][i], *b0 = &r2[0][j], *b1 = &r2[1][j];
                if (a0->null || b0->null || a1->null || b1->null || a0->i != b0->i ||
                    strcmp(a1->s, b1->s))
                    continue;
                push(&want, i, j);
                m = matched[j] = 1;
            }
            if (!m && (kind == QR_JOIN_LEFT || kind == QR_JOIN_FULL))
                push(&want, i, UINT64_MAX);
        }
        if (kind == QR_JOIN_RIGHT || kind == QR_JOIN_FULL)
            push_unmatched(&want, matched, NR2);
        assert_true(want.n > (kind == QR_JOIN_SEMI ? NL2 / 2 : NL2));
        const qr_cell *lk[2] = {l2[0], l2[1]}, *rk[2] = {r2[0], r2[1]};
        uint8_t kt[2] = {QR_XT_INT, QR_XT_TEXT};
        for (int threads = 1; threads <= 3; threads++)
            check_join(NL2, lk, NR2, rk, kt, 2, kind, pool, threads, &want, "two keys");
        free(want.l);
        free(want.r);
    }
    qr_pool_free(pool);
}

static void test_limit_and_cancel(void **st)
{
    (void)st;
    make(lcell[0], lcell[1], ltext, NL, 7);
    make(rcell[0], rcell[1], rtext, NR, 11);
    qr_err e;
    qr_pool *pool = qr_pool_new(2, &e);
    const qr_cell *lk[1] = {lcell[0]}, *rk[1] = {rcell[0]};
    uint8_t kt[1] = {QR_XT_INT};
    uint64_t *li, *ri, np;
    for (int kind = QR_JOIN_INNER; kind <= QR_JOIN_FULL; kind++)
        for (int threads = 1; threads <= 2; threads++) {
            qr_qctx ctx;
            qr_qctx_init(&ctx, 1 << 20); /* the pairs need far more */
            assert_int_equal(qr_x_hash_join_pairs(NL, lk, NR, rk, kt, 1, kind, pool, threads, &ctx,
                                                  &li, &ri, &np, &e),
                             -1);
            assert_string_equal(e.code, QR_E_NOMEM);
            assert_null(li);
            assert_int_equal(ctx.used, 0);
            atomic_int cancel = 1;
            qr_qctx_init(&ctx, 0);
            qr_qctx_set_stop(&ctx, &cancel, 0);
            assert_int_equal(qr_x_hash_join_pairs(NL, lk, NR, rk, kt, 1, kind, pool, threads, &ctx,
                                                  &li, &ri, &np, &e),
                             -1);
            assert_string_equal(e.code, QR_E_CANCELED);
            assert_int_equal(ctx.used, 0);
        }
    qr_pool_free(pool);
}

/* RIGHT and FULL under limits from the join's peak down (one slot, so the
 * peak is the same every run): at the peak it succeeds; below it, wherever
 * the allocation that crosses the limit is (the table, the marks, a pair
 * array, the unmatched rows appended last: with 100 L rows most of R comes
 * unmatched, and that append is the peak), it fails with 53200 and gives
 * everything back. */
static void test_outer_limits_below_the_peak(void **st)
{
    (void)st;
    make(lcell[0], lcell[1], ltext, NL, 7);
    make(rcell[0], rcell[1], rtext, NR, 11);
    const qr_cell *lk[1] = {lcell[1]}, *rk[1] = {rcell[1]};
    uint8_t kt[1] = {QR_XT_TEXT};
    qr_err e;
    uint64_t *li, *ri, np;
    static const uint64_t nls[] = {NL, 100};
    for (int kind = QR_JOIN_RIGHT; kind <= QR_JOIN_FULL; kind++)
        for (size_t x = 0; x < sizeof nls / sizeof *nls; x++) {
            uint64_t nl = nls[x];
            qr_qctx ctx;
            qr_qctx_init(&ctx, 0);
            assert_int_equal(
                qr_x_hash_join_pairs(nl, lk, NR, rk, kt, 1, kind, NULL, 1, &ctx, &li, &ri, &np, &e),
                0);
            size_t peak = ctx.peak;
            if (nl == 100)
                assert_true(np > NR * 9 / 10); /* mostly R's unmatched rows */
            qr_qfree(&ctx, li);
            qr_qfree(&ctx, ri);
            qr_qctx_init(&ctx, peak);
            assert_int_equal(
                qr_x_hash_join_pairs(nl, lk, NR, rk, kt, 1, kind, NULL, 1, &ctx, &li, &ri, &np, &e),
                0);
            qr_qfree(&ctx, li);
            qr_qfree(&ctx, ri);
            for (size_t lim = peak - 1; lim > 4096; lim = lim * 7 / 8) {
                qr_qctx_init(&ctx, lim);
                assert_int_equal(qr_x_hash_join_pairs(nl, lk, NR, rk, kt, 1, kind, NULL, 1, &ctx,
                                                      &li, &ri, &np, &e),
                                 -1);
                assert_string_equal(e.code, QR_E_NOMEM);
                assert_null(li);
                assert_null(ri);
                assert_int_equal(np, 0);
                assert_int_equal(ctx.used, 0);
            }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pairs_equal_nested_loop),
        cmocka_unit_test(test_two_keys_equal_nested_loop),
        cmocka_unit_test(test_limit_and_cancel),
        cmocka_unit_test(test_outer_limits_below_the_peak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
