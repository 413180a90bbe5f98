/* test_join.c - the hash join's pairs against a nested-loop oracle: inner,
 * LEFT and semi, integer and text keys with NULLs and many duplicates, one
 * slot and probes split over a pool (the same pairs in the same order:
 * L's order, then R's). Also the memory limit and a cancel. */
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

static void oracle(int left, int key, uint64_t **li, uint64_t **ri, uint64_t *np)
{
    uint64_t cap = 1 << 20;
    *li = malloc(sizeof **li * cap);
    *ri = malloc(sizeof **ri * cap);
    *np = 0;
    /* matches per key value, in R's order */
    static uint32_t first[5000], nxt[NR];
    for (uint32_t v = 0; v < 5000; v++)
        first[v] = UINT32_MAX;
    for (uint32_t j = NR; j-- > 0;)
        if (!rcell[0][j].null) {
            nxt[j] = first[rcell[0][j].i];
            first[rcell[0][j].i] = j;
        }
    (void)key; /* the text key holds the same values */
    for (uint32_t i = 0; i < NL; i++) {
        int m = 0;
        for (uint32_t j = lcell[0][i].null ? UINT32_MAX : first[lcell[0][i].i]; j != UINT32_MAX;
             j = nxt[j]) {
            if (*np == cap) {
                cap *= 2;
                *li = realloc(*li, sizeof **li * cap);
                *ri = realloc(*ri, sizeof **ri * cap);
            }
            (*li)[*np] = i, (*ri)[(*np)++] = j;
            m = 1;
            if (left == 2)
                break;
        }
        if (!m && left == 1) {
            if (*np == cap) {
                cap *= 2;
                *li = realloc(*li, sizeof **li * cap);
                *ri = realloc(*ri, sizeof **ri * cap);
            }
            (*li)[*np] = i, (*ri)[(*np)++] = UINT64_MAX;
        }
    }
}

static void test_pairs_equal_nested_loop(void **st)
{
    (void)st;
    make(lcell[0], lcell[1], ltext, NL, 7);
    make(rcell[0], rcell[1], rtext, NR, 11);
    qr_err e;
    qr_pool *pool = qr_pool_new(2, &e);
    assert_non_null(pool);
    for (int left = 0; left <= 2; left++)
        for (int key = 0; key < 2; key++) {
            uint64_t *wl, *wr, wn;
            oracle(left, key, &wl, &wr, &wn);
            assert_true(wn > NL / 2);
            for (int threads = 1; threads <= 3; threads++) {
                qr_qctx ctx;
                qr_qctx_init(&ctx, 0);
                const qr_cell *lk[1] = {lcell[key]}, *rk[1] = {rcell[key]};
                uint8_t kt[1] = {key ? QR_XT_TEXT : QR_XT_INT};
                uint64_t *li, *ri, np;
                if (qr_x_hash_join_pairs(NL, lk, NR, rk, kt, 1, left, pool, threads, &ctx, &li,
                                         &ri, &np, &e) != 0)
                    fail_msg("join: %s", e.msg);
                if (np != wn)
                    fail_msg("left %d key %d threads %d: %llu pairs, want %llu", left, key,
                             threads, (unsigned long long)np, (unsigned long long)wn);
                for (uint64_t p = 0; p < np; p++)
                    if (li[p] != wl[p] || ri[p] != wr[p])
                        fail_msg("left %d key %d threads %d: pair %llu differs", left, key, threads,
                                 (unsigned long long)p);
                qr_qfree(&ctx, li);
                qr_qfree(&ctx, ri);
                assert_int_equal(ctx.used, 0);
            }
            free(wl);
            free(wr);
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
    for (int threads = 1; threads <= 2; threads++) {
        qr_qctx ctx;
        qr_qctx_init(&ctx, 1 << 20); /* the pairs need far more */
        assert_int_equal(qr_x_hash_join_pairs(NL, lk, NR, rk, kt, 1, 0, pool, threads, &ctx, &li,
                                              &ri, &np, &e),
                         -1);
        assert_string_equal(e.code, QR_E_NOMEM);
        assert_null(li);
        assert_int_equal(ctx.used, 0);
        atomic_int cancel = 1;
        qr_qctx_init(&ctx, 0);
        qr_qctx_set_stop(&ctx, &cancel, 0);
        assert_int_equal(qr_x_hash_join_pairs(NL, lk, NR, rk, kt, 1, 0, pool, threads, &ctx, &li,
                                              &ri, &np, &e),
                         -1);
        assert_string_equal(e.code, QR_E_CANCELED);
        assert_int_equal(ctx.used, 0);
    }
    qr_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pairs_equal_nested_loop),
        cmocka_unit_test(test_limit_and_cancel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
