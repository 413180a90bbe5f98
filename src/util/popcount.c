/* popcount.c - bit counts of word runs (see popcount.h). */
#include "util/popcount.h"

#include <stdatomic.h>
#include <string.h>

static inline uint64_t word_at(const unsigned char *p, size_t i)
{
    uint64_t v;
    memcpy(&v, p + i * 8, 8);
    return v;
}

/* SWAR: bit pairs, nibbles, bytes, then a multiply sums the bytes. */
static uint64_t count_scalar(const void *words, size_t n)
{
    const unsigned char *p = words;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = word_at(p, i);
        v = v - ((v >> 1) & 0x5555555555555555ull);
        v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
        v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0Full;
        total += (v * 0x0101010101010101ull) >> 56;
    }
    return total;
}

#if defined(__x86_64__)
__attribute__((target("popcnt"))) static uint64_t count_popcnt(const void *words, size_t n)
{
    const unsigned char *p = words;
    uint64_t a = 0, b = 0; /* two chains: popcnt has a latency of 3 */
    size_t i = 0;
    for (; i + 2 <= n; i += 2) {
        a += (uint64_t)__builtin_popcountll(word_at(p, i));
        b += (uint64_t)__builtin_popcountll(word_at(p, i + 1));
    }
    if (i < n)
        a += (uint64_t)__builtin_popcountll(word_at(p, i));
    return a + b;
}

static int cpu_has_popcnt(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt");
}
#endif

qr_popcount_fn qr_popcount_kernel(qr_popcount_kind kind)
{
    switch (kind) {
    case QR_POPCOUNT_SCALAR:
        return count_scalar;
    case QR_POPCOUNT_POPCNT:
#if defined(__x86_64__)
        return cpu_has_popcnt() ? count_popcnt : NULL;
#else
        return NULL;
#endif
    }
    return NULL;
}

static _Atomic(qr_popcount_fn) chosen; /* NULL until first use */

uint64_t qr_popcount_words(const void *words, size_t n)
{
    qr_popcount_fn f = atomic_load_explicit(&chosen, memory_order_relaxed);
    if (!f) {
        f = qr_popcount_kernel(QR_POPCOUNT_POPCNT);
        if (!f)
            f = count_scalar;
        atomic_store_explicit(&chosen, f, memory_order_relaxed);
    }
    return f(words, n);
}
