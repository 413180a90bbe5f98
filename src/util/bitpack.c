/* bitpack.c - bit packing (see bitpack.h). The layout is a plain LSB-first
 * bit stream so random access needs only the value index. Packing is scalar;
 * unpacking, on the hot path of every postings and column block, has an AVX2
 * kernel beside its scalar twin, chosen once through a function pointer
 * (qr_bitunpack); the tests compare the two on every width and length. */
#include "util/bitpack.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

void qr_bitpack(const uint64_t *in, size_t n, unsigned width, unsigned char *out)
{
    size_t nbytes = qr_bitpack_bytes(n, width);
    memset(out, 0, nbytes);
    if (!width)
        return;
    uint64_t mask = width == 64 ? ~0ULL : ((1ULL << width) - 1);
    size_t bit = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = in[i] & mask;
        size_t byte = bit >> 3;
        unsigned sh = bit & 7;
        /* write up to 72 bits across 9 bytes */
        unsigned done = 0;
        out[byte] |= (unsigned char)(v << sh);
        done = 8 - sh;
        byte++;
        while (done < width) {
            out[byte++] |= (unsigned char)(v >> done);
            done += 8;
        }
        bit += width;
    }
}

uint64_t qr_bitpack_get(const unsigned char *in, size_t i, unsigned width)
{
    if (!width)
        return 0;
    size_t bit = i * width;
    size_t byte = bit >> 3;
    unsigned sh = bit & 7;
    size_t need = (sh + width + 7) / 8; /* bytes spanned, <= 9 */
    uint64_t lo = 0;
    unsigned char tmp[16] = {0};
    memcpy(tmp, in + byte, need);
    memcpy(&lo, tmp, 8);
    uint64_t v = lo >> sh;
    if (sh + width > 64)
        v |= (uint64_t)tmp[8] << (64 - sh);
    return width == 64 ? v : v & ((1ULL << width) - 1);
}

/* The reference kernel. */
static void unpack_scalar(const unsigned char *in, size_t n, unsigned width, uint64_t *out)
{
    if (!width) {
        memset(out, 0, n * sizeof *out);
        return;
    }
    size_t full = qr_bitpack_bytes(n, width);
    uint64_t mask = width == 64 ? ~0ULL : ((1ULL << width) - 1);
    size_t bit = 0;
    for (size_t i = 0; i < n; i++, bit += width) {
        size_t byte = bit >> 3;
        unsigned sh = bit & 7;
        if (byte + 9 <= full) {
            uint64_t lo;
            memcpy(&lo, in + byte, 8);
            uint64_t v = lo >> sh;
            if (sh + width > 64)
                v |= (uint64_t)in[byte + 8] << (64 - sh);
            out[i] = v & mask;
        } else {
            out[i] = qr_bitpack_get(in, i, width);
        }
    }
}

#if defined(__x86_64__)
/* AVX2 kernel. Eight values of width w take exactly w bytes, so every group
 * of eight starts on a byte boundary and has the same shape: value j starts
 * at byte (j*w)/8, bit (j*w)%8 of the group. Each 128-bit half of a ymm
 * register holds two values as 64-bit lanes: a 16-byte load from the first
 * value's byte, a byte shuffle that moves each lane's 8 bytes into place
 * (the two values span at most 15 bytes while w <= 56), a per-lane shift and
 * a mask. The shuffles and shifts depend on w only and are built once per
 * call. Wide loads reach up to 16 bytes past a group's first value, so the
 * groups near the end of the input run on a zero-padded copy instead. */
#define AVX2_MAX_WIDTH 56

typedef struct unpack8 {
    __m256i shuf_lo, shuf_hi;   /* values 0-3, 4-7: byte shuffles */
    __m256i shift_lo, shift_hi; /* their bit offsets within the 8 bytes */
    __m256i mask;
    size_t off2, off4, off6; /* byte of values 2, 4, 6 in the group */
} unpack8;

__attribute__((target("avx2"))) static inline void unpack8_init(unpack8 *k, unsigned width)
{
    const __m256i w = _mm256_set1_epi64x(width);
    const __m256i bit_lo = _mm256_mul_epu32(_mm256_setr_epi64x(0, 1, 2, 3), w);
    const __m256i bit_hi = _mm256_mul_epu32(_mm256_setr_epi64x(4, 5, 6, 7), w);
    const __m256i seven = _mm256_set1_epi64x(7);
    /* byte 0 (8) of each half, spread over that lane's 8 bytes, plus 0..7 */
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8, 0, 0, 0,
                                            0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8);
    const __m256i step = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2,
                                          3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
    __m256i byte_lo = _mm256_srli_epi64(bit_lo, 3), byte_hi = _mm256_srli_epi64(bit_hi, 3);
    /* relative to the half's first value, where its 16-byte load starts */
    byte_lo = _mm256_sub_epi64(byte_lo, _mm256_shuffle_epi32(byte_lo, _MM_SHUFFLE(1, 0, 1, 0)));
    byte_hi = _mm256_sub_epi64(byte_hi, _mm256_shuffle_epi32(byte_hi, _MM_SHUFFLE(1, 0, 1, 0)));
    k->shuf_lo = _mm256_add_epi8(_mm256_shuffle_epi8(byte_lo, spread), step);
    k->shuf_hi = _mm256_add_epi8(_mm256_shuffle_epi8(byte_hi, spread), step);
    k->shift_lo = _mm256_and_si256(bit_lo, seven);
    k->shift_hi = _mm256_and_si256(bit_hi, seven);
    k->mask = _mm256_set1_epi64x((long long)((1ULL << width) - 1));
    k->off2 = 2 * width / 8;
    k->off4 = 4 * width / 8;
    k->off6 = 6 * width / 8;
}

/* Unpack the eight values whose packed bytes start at p; reads p[0, off6+16). */
__attribute__((target("avx2"), always_inline)) static inline void
unpack8_run(const unpack8 *k, const unsigned char *p, uint64_t *out)
{
    __m256i lo =
        _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p)),
                                _mm_loadu_si128((const __m128i *)(p + k->off2)), 1);
    __m256i hi = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p + k->off4))),
        _mm_loadu_si128((const __m128i *)(p + k->off6)), 1);
    lo = _mm256_and_si256(_mm256_srlv_epi64(_mm256_shuffle_epi8(lo, k->shuf_lo), k->shift_lo),
                          k->mask);
    hi = _mm256_and_si256(_mm256_srlv_epi64(_mm256_shuffle_epi8(hi, k->shuf_hi), k->shift_hi),
                          k->mask);
    _mm256_storeu_si256((__m256i *)out, lo);
    _mm256_storeu_si256((__m256i *)(out + 4), hi);
}

__attribute__((target("avx2"))) static void unpack_avx2(const unsigned char *in, size_t n,
                                                        unsigned width, uint64_t *out)
{
    if (width == 0 || width > AVX2_MAX_WIDTH) {
        unpack_scalar(in, n, width, out);
        return;
    }
    unpack8 k;
    unpack8_init(&k, width);
    size_t full = qr_bitpack_bytes(n, width);
    size_t reach = k.off6 + 16; /* bytes a group reads from its start, <= 58 */
    size_t groups = n / 8;
    /* groups g whose reads end inside the input: g*width + reach <= full */
    size_t direct = full < reach ? 0 : (full - reach) / width + 1;
    if (direct > groups)
        direct = groups;
    for (size_t g = 0; g < direct; g++)
        unpack8_run(&k, in + g * width, out + 8 * g);
    size_t done = 8 * direct;
    if (done == n)
        return;
    /* The rest starts on a byte boundary and is shorter than `reach` bytes
     * (or than one group); its last group starts inside it, so its reads end
     * before 2 * reach <= 116 bytes of zero-padded copy. */
    unsigned char pad[128];
    size_t from = direct * width, left = full - from;
    memcpy(pad, in + from, left);
    memset(pad + left, 0, sizeof pad - left);
    const unsigned char *p = pad;
    for (; n - done >= 8; done += 8, p += width)
        unpack8_run(&k, p, out + done);
    if (done < n) {
        uint64_t last[8];
        unpack8_run(&k, p, last);
        memcpy(out + done, last, (n - done) * sizeof *out);
    }
}

static int cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}
#endif

qr_bitunpack_fn qr_bitunpack_kernel(qr_bitunpack_kind kind)
{
    switch (kind) {
    case QR_BITUNPACK_SCALAR:
        return unpack_scalar;
    case QR_BITUNPACK_AVX2:
#if defined(__x86_64__)
        return cpu_has_avx2() ? unpack_avx2 : NULL;
#else
        return NULL;
#endif
    }
    return NULL;
}

static qr_bitunpack_fn choose_kernel(void)
{
    const char *no = getenv("QUARRY_NO_SIMD");
    if (no && *no && strcmp(no, "0") != 0)
        return unpack_scalar;
    qr_bitunpack_fn f = qr_bitunpack_kernel(QR_BITUNPACK_AVX2);
    return f ? f : unpack_scalar;
}

static void unpack_first(const unsigned char *in, size_t n, unsigned width, uint64_t *out);

/* The chosen kernel; starts as unpack_first, which chooses. Threads racing on
 * the first call all choose the same kernel, so a plain atomic store does. */
static _Atomic(qr_bitunpack_fn) unpack_fn = unpack_first;

static void unpack_first(const unsigned char *in, size_t n, unsigned width, uint64_t *out)
{
    qr_bitunpack_fn f = choose_kernel();
    atomic_store_explicit(&unpack_fn, f, memory_order_relaxed);
    f(in, n, width, out);
}

void qr_bitunpack(const unsigned char *in, size_t n, unsigned width, uint64_t *out)
{
    atomic_load_explicit(&unpack_fn, memory_order_relaxed)(in, n, width, out);
}

const char *qr_bitunpack_active(void)
{
    qr_bitunpack_fn f = atomic_load_explicit(&unpack_fn, memory_order_relaxed);
    if (f == unpack_first) {
        f = choose_kernel();
        atomic_store_explicit(&unpack_fn, f, memory_order_relaxed);
    }
    return f == unpack_scalar ? "scalar" : "avx2";
}
