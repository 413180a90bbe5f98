/* test_hash.c - util/hash: long inputs go to libxxhash's dispatched
 * kernel (AVX2 or AVX-512 where the CPU has them), short ones to the
 * inline header code; both must give XXH3 exactly, or every checksum on
 * disk would disagree with the one computed at read. Compared here with
 * the inline code (its twin) on every length around the boundary and the
 * vector loops' strides, at every alignment, for random and constant
 * bytes; the golden segments in tests/data (read by test_segment) check
 * the stored checksums themselves. */
#include "testutil.h"

#include "util/hash.h"

static void test_dispatched_equals_inline(void **st)
{
    (void)st;
    enum { MAXN = 9000 };
    static unsigned char buf[MAXN + 64];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int fill = 0; fill < 2; fill++) {
        for (size_t i = 0; i < sizeof buf; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[i] = fill ? 0xA5 : (unsigned char)x;
        }
        for (size_t n = 0; n <= MAXN; n += n < 1100 ? 1 : 61)
            for (size_t off = 0; off < 64; off += n < 1100 ? 13 : 1) {
                uint64_t want = XXH3_64bits(buf + off, n);
                if (qr_hash64(buf + off, n) != want)
                    fail_msg("length %zu at offset %zu: dispatched %016llx, inline %016llx", n, off,
                             (unsigned long long)qr_hash64(buf + off, n), (unsigned long long)want);
                assert_int_equal(qr_checksum32(buf + off, n), (uint32_t)want);
                if (n > QR_HASH_LONG)
                    assert_int_equal(qr_hash_long(buf + off, n), want);
            }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dispatched_equals_inline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
