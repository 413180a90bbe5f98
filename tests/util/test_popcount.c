/* test_popcount.c - util/popcount: the popcnt kernel and its scalar twin
 * agree with a bit-by-bit count on random and edge words, any length and
 * alignment; the dispatching entry point agrees too. */
#include "testutil.h"

#include "util/popcount.h"

static uint64_t slow(const unsigned char *p, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n * 8; i++)
        for (int b = 0; b < 8; b++)
            c += (p[i] >> b) & 1;
    return c;
}

static void test_kernels_agree_with_a_bit_by_bit_count(void **st)
{
    (void)st;
    enum { MAXW = 300 };
    static unsigned char buf[MAXW * 8 + 8];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    qr_popcount_fn sc = qr_popcount_kernel(QR_POPCOUNT_SCALAR);
    qr_popcount_fn hw = qr_popcount_kernel(QR_POPCOUNT_POPCNT);
    assert_non_null(sc);
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof buf; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* sparse, dense and random bytes */
            buf[i] = round % 3 == 0 ? (unsigned char)x : round % 3 == 1 ? 0xFF : (x & 7) ? 0 : 1;
        }
        size_t n = (size_t)(x % MAXW), off = (size_t)(x >> 32) % 8;
        uint64_t want = slow(buf + off, n);
        assert_int_equal(sc(buf + off, n), want);
        if (hw)
            assert_int_equal(hw(buf + off, n), want);
        assert_int_equal(qr_popcount_words(buf + off, n), want);
    }
    assert_int_equal(qr_popcount_words(buf, 0), 0);
    memset(buf, 0xFF, 16);
    assert_int_equal(sc(buf, 2), 128);
    if (hw)
        assert_int_equal(hw(buf, 1), 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_agree_with_a_bit_by_bit_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
