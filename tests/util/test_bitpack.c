/* test_bitpack.c - tests for util/bitpack: pack then unpack round trips for
 * every width 0..64 and every length 1..128 (plus long runs), with the
 * scalar and the AVX2 kernels called directly and through the dispatched
 * qr_bitunpack, all compared with the input and with each other; random
 * access; and the QUARRY_NO_SIMD switch.
 *
 * Every packed input sits at the very end of a malloc'ed buffer of its exact
 * size, starting at every offset 0..7 from the allocation (unaligned), and
 * every output buffer holds exactly n values, so ASan catches any read past
 * the input or write past the output.
 */
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/bitpack.h"

static uint64_t rng_state;
static uint64_t rnd(void) { return tu_rand(&rng_state); }

static uint64_t width_mask(unsigned w) { return w == 64 ? ~0ULL : (1ULL << w) - 1; }

/* n values of width w: random, but also all-ones and zero runs (the
 * extremes of every bit position). */
static void fill(uint64_t *v, size_t n, unsigned w, int pattern)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        if (pattern == 1)
            r = ~0ULL;
        else if (pattern == 2)
            r = (i & 1) ? ~0ULL : 0;
        else if (pattern == 3 && w)
            r >>= rnd() % w; /* mixed magnitudes */
        v[i] = r & width_mask(w);
    }
}

/* Unpack `packed` (nb bytes) placed at offset `off` of an exact-size
 * allocation with kernel f (NULL = the dispatched qr_bitunpack) and check
 * the result against want. */
static void check_kernel(qr_bitunpack_fn f, const unsigned char *packed, size_t nb, size_t off,
                         const uint64_t *want, size_t n, unsigned w, const char *name)
{
    /* `in + nb` is exactly the end of the allocation (1 byte when empty) */
    unsigned char *exact = malloc((off + nb) ? off + nb : 1);
    assert_non_null(exact);
    unsigned char *in = exact + off;
    memcpy(in, packed, nb);
    uint64_t *out = malloc(n * sizeof *out);
    assert_non_null(out);
    memset(out, 0xa5, n * sizeof *out);
    if (f)
        f(in, n, w, out);
    else
        qr_bitunpack(in, n, w, out);
    for (size_t i = 0; i < n; i++)
        if (out[i] != want[i])
            fail_msg("%s: width %u n %zu offset %zu: value %zu is %llu, want %llu", name, w, n, off,
                     i, (unsigned long long)out[i], (unsigned long long)want[i]);
    free(out);
    free(exact);
}

/* Pack v and check every kernel at every start offset 0..7. */
static void check_all(const uint64_t *v, size_t n, unsigned w)
{
    size_t nb = qr_bitpack_bytes(n, w);
    unsigned char *packed = malloc(nb ? nb : 1);
    assert_non_null(packed);
    qr_bitpack(v, n, w, packed);
    qr_bitunpack_fn scalar = qr_bitunpack_kernel(QR_BITUNPACK_SCALAR);
    qr_bitunpack_fn avx2 = qr_bitunpack_kernel(QR_BITUNPACK_AVX2);
    for (size_t off = 0; off < 8; off++) {
        check_kernel(scalar, packed, nb, off, v, n, w, "scalar");
        if (avx2)
            check_kernel(avx2, packed, nb, off, v, n, w, "avx2");
        check_kernel(NULL, packed, nb, off, v, n, w, "qr_bitunpack");
    }
    free(packed);
}

static void test_scalar_kernel_always_exists(void **state)
{
    (void)state;
    assert_non_null(qr_bitunpack_kernel(QR_BITUNPACK_SCALAR));
#if !defined(__x86_64__)
    assert_null(qr_bitunpack_kernel(QR_BITUNPACK_AVX2));
#endif
    const char *a = qr_bitunpack_active();
    assert_true(strcmp(a, "scalar") == 0 || strcmp(a, "avx2") == 0);
    if (!qr_bitunpack_kernel(QR_BITUNPACK_AVX2))
        print_message("note: no AVX2 on this CPU or build; only the scalar kernel is tested\n");
}

/* The postings case: widths 0..32, every block length 1..128. */
static void test_every_width_0_to_32_and_length_1_to_128_round_trips(void **state)
{
    (void)state;
    rng_state = 0x9e3779b97f4a7c15ull;
    uint64_t v[128];
    for (unsigned w = 0; w <= 32; w++)
        for (size_t n = 1; n <= 128; n++) {
            fill(v, n, w, (int)(n % 4));
            check_all(v, n, w);
        }
}

/* Wider values (integer columns): the AVX2 kernel covers up to 56 bits and
 * hands 57..64 to the scalar code. */
static void test_widths_33_to_64_round_trip(void **state)
{
    (void)state;
    rng_state = 0x2545f4914f6cdd1dull;
    uint64_t v[128];
    for (unsigned w = 33; w <= 64; w++)
        for (size_t n = 1; n <= 128; n++) {
            fill(v, n, w, (int)(n % 4));
            check_all(v, n, w);
        }
}

/* Column blocks unpack up to 65,536 values in one call. */
static void test_long_runs_round_trip(void **state)
{
    (void)state;
    rng_state = 0xdeadbeefcafef00dull;
    static const size_t lens[] = {129, 255, 1000, 4093, 65536};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        size_t n = lens[li];
        uint64_t *v = malloc(n * sizeof *v);
        assert_non_null(v);
        for (unsigned w = 0; w <= 64; w += (n > 5000 ? 7 : 1)) {
            fill(v, n, w, (int)(w % 4));
            check_all(v, n, w);
        }
        free(v);
    }
}

/* Random access agrees with the bulk unpack. */
static void test_get_matches_unpack(void **state)
{
    (void)state;
    rng_state = 0x0123456789abcdefull;
    uint64_t v[128];
    unsigned char packed[128 * 8];
    for (unsigned w = 0; w <= 64; w++) {
        fill(v, 128, w, 0);
        qr_bitpack(v, 128, w, packed);
        for (size_t i = 0; i < 128; i++)
            assert_int_equal(qr_bitpack_get(packed, i, w), v[i]);
    }
}

/* Values wider than the width are cut to it on packing; unpacking never
 * leaks neighbouring bits. */
static void test_packing_masks_and_unpacking_isolates(void **state)
{
    (void)state;
    uint64_t v[128], want[128];
    for (unsigned w = 1; w <= 32; w++) {
        for (size_t i = 0; i < 128; i++) {
            v[i] = i % 3 == 0 ? ~0ULL : 0;
            want[i] = v[i] & width_mask(w);
        }
        size_t nb = qr_bitpack_bytes(128, w);
        unsigned char packed[512];
        qr_bitpack(v, 128, w, packed);
        uint64_t out[128];
        qr_bitunpack_fn kernels[] = {qr_bitunpack_kernel(QR_BITUNPACK_SCALAR),
                                     qr_bitunpack_kernel(QR_BITUNPACK_AVX2)};
        for (size_t k = 0; k < 2; k++) {
            if (!kernels[k])
                continue;
            kernels[k](packed, 128, w, out);
            assert_memory_equal(out, want, sizeof want);
        }
        assert_int_equal(nb, (128 * w + 7) / 8);
    }
}

/* Runs this binary again with QUARRY_NO_SIMD set as given (NULL = unset)
 * and returns the kernel name it reports. */
static void child_kernel(const char *env, char *name, size_t cap)
{
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(len > 0);
    self[len] = 0;
    char cmd[4300];
    if (env)
        snprintf(cmd, sizeof cmd, "QUARRY_NO_SIMD='%s' '%s' --print-kernel", env, self);
    else
        snprintf(cmd, sizeof cmd, "unset QUARRY_NO_SIMD; '%s' --print-kernel", self);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    name[0] = 0;
    assert_non_null(fgets(name, (int)cap, f));
    assert_int_equal(pclose(f), 0);
    name[strcspn(name, "\n")] = 0;
}

static void test_no_simd_env_forces_scalar(void **state)
{
    (void)state;
    const char *best = qr_bitunpack_kernel(QR_BITUNPACK_AVX2) ? "avx2" : "scalar";
    char name[64];
    child_kernel("1", name, sizeof name);
    assert_string_equal(name, "scalar");
    child_kernel("0", name, sizeof name);
    assert_string_equal(name, best);
    child_kernel("", name, sizeof name);
    assert_string_equal(name, best);
    child_kernel(NULL, name, sizeof name);
    assert_string_equal(name, best);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--print-kernel") == 0) {
        uint64_t v = 0;
        unsigned char b = 1;
        qr_bitunpack(&b, 1, 1, &v); /* the first call chooses */
        printf("%s\n", qr_bitunpack_active());
        return v == 1 ? 0 : 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_kernel_always_exists),
        cmocka_unit_test(test_every_width_0_to_32_and_length_1_to_128_round_trips),
        cmocka_unit_test(test_widths_33_to_64_round_trip),
        cmocka_unit_test(test_long_runs_round_trip),
        cmocka_unit_test(test_get_matches_unpack),
        cmocka_unit_test(test_packing_masks_and_unpacking_isolates),
        cmocka_unit_test(test_no_simd_env_forces_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
