/* test_norms_below.c - the 64-row norm filter of the dense-word scorer
 * (score/scorer_int.h sc_norms_below): its SSE2 form agrees with the
 * scalar twin and with a plain compare for every threshold 0..256, on
 * random and edge norm bytes, whole words and partial ones. */
#include "testutil.h"

#include "score/scorer_int.h"

static void test_simd_and_scalar_agree_for_every_threshold(void **st)
{
    (void)st;
    uint8_t p[64 * 40];
    uint64_t x = 0xC0FFEE;
    for (size_t i = 0; i < sizeof p; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        p[i] = i < 64 ? (uint8_t)(i * 4) : i < 128 ? (i & 1 ? 0 : 255) : (uint8_t)x;
    }
    static const uint32_t cnts[] = {64, 63, 33, 17, 16, 1};
    for (size_t w = 0; w < sizeof p / 64; w++)
        for (uint32_t n = 0; n <= 256; n++)
            for (size_t c = 0; c < sizeof cnts / sizeof *cnts; c++) {
                uint32_t cnt = cnts[c];
                uint64_t want = 0;
                for (uint32_t j = 0; j < cnt; j++)
                    want |= (uint64_t)(p[w * 64 + j] < n) << j;
                assert_int_equal(sc_norms_below(p + w * 64, cnt, n), want);
                assert_int_equal(sc_norms_below_scalar(p + w * 64, cnt, n), want);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simd_and_scalar_agree_for_every_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
