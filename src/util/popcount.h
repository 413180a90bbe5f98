/* popcount.h - counting the bits set in a run of 64-bit words (bitmaps of
 * rows), with the CPU's popcnt instruction when it has one (chosen at run
 * time, once) and a portable twin otherwise; the tests compare both. The
 * compiler's __builtin_popcountll without -mpopcnt is a library call per
 * word, several times slower over whole-segment bitmaps. */
#ifndef QR_POPCOUNT_H
#define QR_POPCOUNT_H

#include <stddef.h>
#include <stdint.h>

/* Bits set in words[0..n) (little-endian words at any alignment). */
uint64_t qr_popcount_words(const void *words, size_t n);

typedef uint64_t (*qr_popcount_fn)(const void *words, size_t n);
typedef enum { QR_POPCOUNT_SCALAR, QR_POPCOUNT_POPCNT } qr_popcount_kind;
/* A kernel by kind (NULL when this CPU lacks it): for tests and benchmarks. */
qr_popcount_fn qr_popcount_kernel(qr_popcount_kind kind);

#endif
